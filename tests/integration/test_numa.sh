#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# NUMA: which node served an allocation, in --stat's SUMMARY.  The
# workload's piperesize makes large kmallocs (pipe_resize_ring's 10 KiB
# ring, above the largest slab size): each is an order-2 page from the
# page allocator, addressed through the kernel's linear map.  Told apart
# by their size, 10240 bytes in 16384, not their call site: the kernel
# gives __kmalloc where it traces them there (arm64's 5.10).
#   numa.linear_map  "kmemsnoop --stat -v -p PID" prints where it found the
#                   linear map; a second instance on the same workload
#                   streams its kmallocs and pages as text (pfns from its
#                   own struct page calibration): each of the RESIZES x 2
#                   large kmallocs is at that address plus the pfn of the
#                   order-2 page allocated just before it times the page
#                   size
#   numa.recorded   a third instance's recording (-o --min-size 10000: the
#                   rings only) holds the same linear map in its header,
#                   and "-i DIR --stat" places each of the text's 10240-byte
#                   kmallocs (not "not known")
# With two NUMA nodes or more (the x86 VMs have two; else SKIP, saying
# so), the workload pinned to a CPU of node 1 ("numa NODE CPU"), its
# memory bound to node 0, then to node 1, makes RESIZES x 2 large kmallocs
# and writes PIPE_PAGES pages to a pipe, traced by --stat (BPF maps) and
# --stat --page (slab allocations under --min-size 10000: the rings only;
# other slab objects come from whatever slab the CPU holds), recorded
# (-o --min-size 10000) and, as the reference, traced by text (-e
# kmalloc,page): the node of each page frame and of each ring's address
# (less the linear map) from /sys/devices/system/node.
#   numa.served_slab   the --stat instance and -i --stat of the recording
#                   (the streamed count, as --stat-stream makes it) print
#                   "R/L" for the slab allocations served from another
#                   node than their CPU's: L the rings of the text, R
#                   those on another node
#   numa.served_pages  --stat --page prints "R/L" for pages: L the text's
#                   page allocations, R those on another node than the
#                   CPU they were allocated on
#   numa.bound_remote  bound to node 0, the pipe's pages at least are
#                   served by node 0; bound to node 1, nothing is served
#                   elsewhere (on 6.1 large kmallocs ignore the memory
#                   policy: alloc_pages_node)
#
# vmtest: in x86/6.1 x86/6.12 x86/newest arm64/5.10 arm64/6.1 arm64/6.12 arm64/newest:
# where the kernel maps memory differs by architecture and kernel; x86 5.10
# maps it as 6.1 does, and its VM's time goes to the tests only it runs.
. "$(dirname "$0")/../lib.sh"

TESTS=(numa.linear_map numa.recorded numa.served_slab.remote numa.served_pages.remote numa.bound_remote
	numa.served_slab.local numa.served_pages.local numa.bound_local)
RESIZES=12
PIPE_PAGES=8

require_root
require_kmemsnoop
require_workload

SLAB_LINE='Slab allocations served from another NUMA node than requested'
PAGE_LINE="Page allocations served from another NUMA node than their CPU's"

# served FILE LINE: "REMOTE LOCATED" from a SUMMARY line "...: R/L".
served() {
	grep -F "$2" "$1" | tail -n1 | sed -n 's|.*: \([0-9]*\)/\([0-9]*\)$|\1 \2|p'
}

# --- the linear map, against another instance's pfns -------------------------
start_traced w ka --stat -v -- piperesize "$RESIZES"
if ! ks_start kt -e kmalloc,page -p "$PID" || ! ks_start ko -o "$WORK/rec" --min-size 10000 -p "$PID"; then
	fail_rest "${TESTS[@]}" "kmemsnoop (text, -o): $(ks_start_fail_why kt) $(ks_start_fail_why ko)"
	finish
fi
wl_run w || fail numa.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
ks_stop ka
ks_stop kt
ks_stop ko
linear=$(sed -n 's/^kmemsnoop: linear map at 0x\([0-9a-f]*\)$/\1/p' "$(ks_err ka)")
# Each order-2 page, then the kmalloc of 4 pages it became: "PTR PFN".
pairs=$(awk '
	/ mm_page_alloc: .* order=2 / { for (i = 1; i <= NF; i++) if ($i ~ /^pfn=/) pfn = substr($i, 5) }
	/ kmalloc: .* bytes_req=10240 / && pfn != "" {
		for (i = 1; i <= NF; i++) if ($i ~ /^ptr=/) ptr = substr($i, 5)
		print ptr, pfn; pfn = ""
	}' "$(ks_out kt)")
# ptr - pfn x page, in bash's 64-bit arithmetic; the page size from the
# order-2 pages' kmallocs (4 pages each).
page=$(sed -n 's/.* kmalloc: .* bytes_req=10240 bytes_alloc=\([0-9]*\) .*/\1/p' "$(ks_out kt)" | head -n1)
page=$((${page:-0} / 4))
bases=$(echo "$pairs" | while read -r ptr pfn; do
	[ -n "$ptr" ] && printf '%x\n' $((0x${ptr#0x} - 0x${pfn#0x} * page))
done | sort | uniq -c | sort -rn)
# pipe_resize_ring's own lines (6.12 and later trace each also from its
# helper, below); where there are none, the kernel traced them at
# __kmalloc only (arm64's 5.10): those of their size.
n_large=$(grep -c ' kmalloc: call_site=pipe_resize_ring.* bytes_alloc=16384' "$(ks_out kt)")
[ "$n_large" -eq 0 ] && n_large=$(grep -c ' kmalloc: .* bytes_req=10240 bytes_alloc=16384' "$(ks_out kt)")
if [ -z "$linear" ]; then
	fail numa.linear_map "the --stat instance printed no 'linear map at': $(grep -v '^libbpf' "$(ks_err ka)" | head -c 300 | tr '\n' ' ')"
elif [ "$n_large" -ne $((RESIZES * 2)) ]; then
	fail numa.linear_map "the text instance shows $n_large large pipe_resize_ring kmallocs (10240 bytes in 16384), not $((RESIZES * 2)); its kmallocs of 10 KiB: $(grep -m2 ' kmalloc: .* bytes_req=10240 ' "$(ks_out kt)" | first_lines 2)"
else
	agree=$(echo "$bases" | awk -v w="$linear" '$2 == w { n += $1 } END { print n + 0 }')
	[ "$agree" -eq "$n_large" ]
	check $? numa.linear_map "$agree of $n_large large kmallocs at linear map 0x$linear + pfn x $page; their bases: $(echo "$bases" | head -n 3 | tr -s ' \n' ' ')"
fi

# On 6.12 and later the kernel traces a large kmalloc twice, from its helper and
# from its caller (src/bpf/large.bpf.h): --stat counts both, as perf does.
n_big=$(grep -c ' kmalloc: .* bytes_req=10240 ' "$(ks_out kt)")
recorded=$(sed -n 's/^linear_map=//p' "$WORK/rec/header" 2>/dev/null)
"$KMEMSNOOP" -i "$WORK/rec" --stat >"$WORK/replay" 2>"$WORK/replay.err"
rc=$?
replayed=$(served "$WORK/replay" "$SLAB_LINE")
[ -n "$linear" ] && [ -n "$recorded" ] && [ "$(printf '%x' "$recorded")" = "$linear" ] &&
	[ $rc -eq 0 ] && [ "${replayed#* }" = "$n_big" ]
check $? numa.recorded "header linear_map='$recorded' (the --stat instance: 0x$linear); -i --stat (status $rc) placed '$replayed' (served elsewhere / located), want the text's $n_big kmallocs of 10240 bytes located: $(grep -F "$SLAB_LINE" "$WORK/replay" | head -n1)"

# --- nodes -----------------------------------------------------------------
node_of_cpu() {
	local d
	for d in /sys/devices/system/cpu/cpu"$1"/node*; do
		[ -e "$d" ] && { basename "$d" | sed 's/^node//'; return; }
	done
}
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
cpu1=
for c in $(online_cpus); do
	[ "$(node_of_cpu "$c")" = 1 ] && { cpu1=$c; break; }
done
if [ "$nodes" -lt 2 ] || [ -z "$cpu1" ]; then
	skip_rest "${TESTS[@]:2}" "this machine has $nodes NUMA node(s), none with an online CPU on node 1 (the x86 VMs of tools/vmtest have two)"
	finish
fi

# The node of each memory block: BLOCK_NODE[block]; BLOCK_BYTES.
declare -A BLOCK_NODE
BLOCK_BYTES=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
for d in /sys/devices/system/node/node[0-9]*; do
	n=${d##*node}
	for m in "$d"/memory[0-9]*; do
		[ -e "$m" ] && BLOCK_NODE[${m##*memory}]=$n
	done
done
# The node of each online CPU: CPU_NODE[cpu].  Looked up in arrays, not
# subshells: the text has a line per page, and a fork per line took tens of
# seconds in the emulated VMs.
declare -A CPU_NODE
for c in $(online_cpus); do
	CPU_NODE[$c]=$(node_of_cpu "$c")
done

# expected TEXT LINEAR: "SLAB_R SLAB_L PAGE_R PAGE_L" from the text
# instance's lines: rings (kmallocs of 10000 bytes or more) and page
# allocations, on another node than their CPU's.
expected() {
	local text=$1 linear=$2 sr=0 sl=0 pr=0 pl=0 kind cpu a n phys
	while read -r kind cpu a; do
		cpu=$((10#$cpu))
		if [ "$kind" = P ]; then
			phys=$((0x$a * page))
		else
			phys=$((0x$a - 0x$linear))
		fi
		n=${BLOCK_NODE[$((phys / BLOCK_BYTES))]:--1}
		[ "$n" -ge 0 ] || continue
		if [ "$kind" = P ]; then
			pl=$((pl + 1))
			[ "$n" = "${CPU_NODE[$cpu]}" ] || pr=$((pr + 1))
		else
			sl=$((sl + 1))
			[ "$n" = "${CPU_NODE[$cpu]}" ] || sr=$((sr + 1))
		fi
	done < <(awk '
		{ cpu = ""; for (i = 1; i <= NF; i++) if ($i ~ /^\[[0-9]+\]$/) { cpu = substr($i, 2, length($i) - 2); break } }
		cpu == "" { next }
		/ mm_page_alloc: / { for (i = 1; i <= NF; i++) if ($i ~ /^pfn=0x/) print "P", cpu, substr($i, 7) }
		/ kmalloc: / {
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^ptr=/) ptr = substr($i, 5)
				if ($i ~ /^bytes_req=/) req = substr($i, 11) + 0
			}
			if (req >= 10000) { sub(/^0x/, "", ptr); print "K", cpu, ptr }
		}' "$text")
	echo "$sr $sl $pr $pl"
}

# bound NAME NODE: the workload on cpu1 bound to NODE under the four
# instances; sets SLAB_BPF SLAB_REPLAY PAGES ("R L" each) and EXPECT.
bound() {
	local name=$1 node=$2 linear
	start_traced "w$name" "b$name" --stat -v --min-size 10000 -- numa "$node" "$cpu1" + \
		piperesize "$RESIZES" + pipe "$PIPE_PAGES"
	if ! ks_start "p$name" --stat --page -p "$PID" ||
		! ks_start "t$name" -e kmalloc,page -p "$PID" ||
		! ks_start "o$name" -o "$WORK/rec$name" --min-size 10000 -p "$PID"; then
		fail "numa.$name" "an instance did not start: $(ks_start_fail_why "p$name") $(ks_start_fail_why "t$name")"
		wl_kill "w$name"
		return 1
	fi
	wl_run "w$name" || fail "numa.$name.workload" "the workload failed (status ${WL_RC[w$name]})" "$WORK/w$name.werr"
	for i in b p t o; do
		ks_stop "$i$name"
	done
	SLAB_BPF=$(served "$(ks_out "b$name")" "$SLAB_LINE")
	PAGES=$(served "$(ks_out "p$name")" "$PAGE_LINE")
	"$KMEMSNOOP" -i "$WORK/rec$name" --stat >"$WORK/replay$name" 2>&1
	SLAB_REPLAY=$(served "$WORK/replay$name" "$SLAB_LINE")
	linear=$(sed -n 's/^kmemsnoop: linear map at 0x\([0-9a-f]*\)$/\1/p' "$(ks_err "b$name")")
	EXPECT=$(expected "$(ks_out "t$name")" "${linear:-0}")
	return 0
}

# check_run NAME: the instances' numbers against the text's.
check_run() {
	local name=$1
	set -- $EXPECT
	[ "$SLAB_BPF" = "$1 $2" ] && [ "$SLAB_REPLAY" = "$1 $2" ] &&
		[ "$2" -ge $((RESIZES * 2)) ]
	check $? "numa.served_slab.$name" "served elsewhere / located: BPF maps '$SLAB_BPF', streamed (-i --stat of -o) '$SLAB_REPLAY'; the text's rings: '$1 $2' (at least $((RESIZES * 2)) rings)"
	[ "$PAGES" = "$3 $4" ] && [ "$4" -ge $((RESIZES * 2 + PIPE_PAGES)) ]
	check $? "numa.served_pages.$name" "pages served elsewhere / located: '$PAGES'; the text's: '$3 $4' (at least $((RESIZES * 2 + PIPE_PAGES)) pages)"
}

if bound remote 0; then
	check_run remote
	set -- $EXPECT
	[ "$3" -ge "$PIPE_PAGES" ]
	check $? numa.bound_remote "bound to node 0 on CPU $cpu1 (node 1): only $3 of $4 pages from another node (the pipe alone writes $PIPE_PAGES)"
fi
if bound local 1; then
	check_run local
	set -- $EXPECT
	[ "$1" = 0 ] && [ "$3" = 0 ]
	check $? numa.bound_local "bound to node 1 on CPU $cpu1 (node 1): $1 rings and $3 pages from another node"
fi
finish
