#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# vmalloc areas.  "workload bpfarray-hold KIB" creates a BPF array map of
# KIB KiB of values (bpf syscall): bpf_map_area_alloc takes one vmalloc
# area of struct bpf_array + KIB KiB, held until the test says, then the
# map is closed and the kernel vfrees the area from a workqueue.
# Where fentry attaches (the test VMs), the fexit of __vmalloc_node_range
# gives size = what was asked (KIB KiB + the header: above KIB KiB, at
# most a page more) and the caller; where it does not (this host's 6.18
# refuses fentry), the alloc_vmap_area tracepoint gives the area: KIB KiB
# + a page, + the guard page, and the call site from a kernel stack.
#   vmalloc.text              -p: exactly one area of that size from the
#                             map code (__bpf_map_area_alloc,
#                             bpf_map_area_alloc or array_map_alloc)
#   vmalloc.recording         the same line through -o DIR and -i DIR
#   vmalloc.json              --json: the same allocation as one object
#   vmalloc.hist              --hist-by event: one vmalloc allocation in
#                             the [4 MiB, 8 MiB) slot
#   vmalloc.allocinfo.held    --allocinfo while held: the map code's line
#                             holds 1 call of the area's page-rounded size
#                             (or 2, with the area of the array of its
#                             page pointers, where that counts under the
#                             same caller)
#   vmalloc.allocinfo.pages_once  and the area's own pages (mm_page_alloc,
#                             -e vmalloc,page) are not counted again: no
#                             other line holds as much as half of it
#   vmalloc.allocinfo.freed   once the map is closed, the line goes to 0 0
#   vmalloc.oracle            machine-wide -e vmalloc beside the kernel's own
#                             vmalloc:alloc_vmap_area and free_vmap_area_noflush
#                             events (6.2+; SKIP before) in a tracefs instance:
#                             the workload's area is at an address the kernel
#                             gave it, of the event's size (through fexit: the
#                             size asked, rounded up to pages, plus the guard
#                             page), and kmemsnoop reports as many frees of
#                             that address as the kernel's events
#   vmalloc.size_filter       --min-size KIB KiB keeps the area's line,
#                             --max-size KIB KiB - 1 leaves it out
#
# vmtest: every VM: vmalloc's functions and tracepoints differ from kernel
# to kernel.
. "$(dirname "$0")/../lib.sh"

KIB=4096
K=$((KIB * 1024))
SITE='(__bpf_map_area_alloc|bpf_map_area_alloc|array_map_alloc)'
TESTS=(vmalloc.text vmalloc.recording vmalloc.json vmalloc.hist vmalloc.allocinfo.held
	vmalloc.allocinfo.pages_once vmalloc.allocinfo.freed vmalloc.oracle vmalloc.size_filter)
HEADER='allocinfo - version: 1.0'

require_root
require_kmemsnoop
require_workload

# hold ID KS_ARGS...: the workload traced with -p, holding (lib.sh wl_hold).
hold() {
	local id=$1
	shift
	wl_hold "$id" "bpfarray-hold $KIB" "$@"
}

# --- which path this kernel gives ---------------------------------------------
if ! hold t -e vmalloc; then
	fail_rest "${TESTS[@]}" "$WHY"
	finish
fi
wl_release t
err=$(ks_err kt)
# Which path, for the log: kmemsnoop's lines about vmalloc and fentry,
# and the functions it chose.
grep -E 'vmalloc|fentry|vfree' "$err" | sed 's/^/# /'
"$KMEMSNOOP" -v -e vmalloc -d 0.1 2>&1 >/dev/null | grep -E ' through | not traced' | sed 's/^/# -v: /'
if grep -q 'without the fentry/fexit programs' "$err"; then
	"$KMEMSNOOP" -v -e vmalloc -d 1 2>&1 >/dev/null | grep -vE '^libbpf: (map|prog|elf|sec|CO-RE)' |
		tail -40 | sed 's/^/# -v: /'
fi
if grep -q 'vmalloc is not traced' "$err"; then
	skip_all "$(grep -m1 'vmalloc is not traced' "$err")"
elif grep -q 'vmalloc through __vmalloc_node' "$err"; then
	skip_all "this kernel's trampoline cannot take __vmalloc_node_range's arguments and BPF map areas call it directly: $(grep -m1 'vmalloc through' "$err")"
fi
if grep -q 'vmap_area tracepoints' "$err"; then
	AREA=1
	SIZE=$((K + 2 * PAGE_SIZE))
	# alloc_vmap_area: va_start: N size=S failed=0 call_site=SYM+off/len
	PATTERN="alloc_vmap_area: va_start: [0-9]+ size=$SIZE failed=0 call_site=$SITE\\+"
	JSON_EVENT=alloc_vmap_area
else
	AREA=0
	PATTERN="vmalloc: call_site=$SITE\\+[^ ]* ptr=[0-9a-f]{16} size=[0-9]+ gfp_flags=[^ ]+ node=-?[0-9]+\$"
	JSON_EVENT=vmalloc
fi
ALLOC=$((AREA ? K + 2 * PAGE_SIZE : K + PAGE_SIZE))
# The array of the area's page pointers, when it takes a vmalloc area too.
PTRS=$(((K / PAGE_SIZE + 1) * 8))
NESTED=$(((PTRS + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE + AREA * PAGE_SIZE))

# big_lines FILE: the lines of areas of more than KIB KiB.
big_lines() {
	grep -E ': (vmalloc|alloc_vmap_area): ' "$1" | awk -v k="$K" '{
		for (i = 1; i <= NF; i++) if ($i ~ /^size=/) { v = $i; sub(/size=/, "", v); if (v + 0 > k) print; next } }'
}

# size_ok LINE: the size a fexit reports is above KIB KiB by less than a page.
size_ok() {
	local s
	s=$(echo "$1" | sed -E 's/.* size=([0-9]+).*/\1/')
	[ "$AREA" = 1 ] || { [ "$s" -gt "$K" ] && [ "$s" -le $((K + PAGE_SIZE)) ]; }
}

lines=$(big_lines "$(ks_out kt)")
echo "$lines" | sed 's/^/# line: /'
n=$(echo "$lines" | grep -cE "$PATTERN")
[ "$n" = 1 ] && [ "$(echo "$lines" | grep -c .)" = 1 ] && size_ok "$lines"
check $? vmalloc.text "want one line matching '$PATTERN' (size in ($K, $((K + PAGE_SIZE))] from fexit); got: ${lines:-none}" "$(ks_err kt)"

# --- -o / -i --------------------------------------------------------------------
DIR=$WORK/rec
if hold o -e vmalloc -o "$DIR"; then
	wl_release o
	"$KMEMSNOOP" -i "$DIR" >"$WORK/i.out" 2>"$WORK/i.err"
	rc=$?
	got=$(big_lines "$WORK/i.out")
	[ $rc = 0 ] && [ "$(echo "$got" | grep -cE "$PATTERN")" = 1 ] && [ "$(echo "$got" | grep -c .)" = 1 ] && size_ok "$got"
	check $? vmalloc.recording "-i exit $rc; want one line matching '$PATTERN'; got: ${got:-none}" "$WORK/i.err"
else
	fail vmalloc.recording "$WHY"
fi

# --- JSON -----------------------------------------------------------------------
if hold j -e vmalloc --json; then
	wl_release j
	got=$(grep "\"event\":\"$JSON_EVENT\"" "$(ks_out kj)" | grep -E "\"call_site\":\"$SITE\\+" |
		awk -v k="$K" '{ s = $0; sub(/.*"size":/, "", s); sub(/,.*/, "", s); if (s + 0 > k) print }')
	[ "$(echo "$got" | grep -c .)" = 1 ] && echo "$got" | grep -q "\"bytes_alloc\":$ALLOC,"
	check $? vmalloc.json "want one $JSON_EVENT object of more than $K bytes from the map code with bytes_alloc $ALLOC; got: ${got:-none}" "$(ks_out kj)"
else
	fail vmalloc.json "$WHY"
fi

# --- --hist -----------------------------------------------------------------------
if hold h -e vmalloc --hist-by event; then
	wl_release h
	got=$(awk '/^event = vmalloc / { on = 1; next } /^event = / { on = 0 }
		on && $1 == 4194304 && $2 == "->" { print $5 }' "$(ks_out kh)")
	[ "$got" = 1 ]
	check $? vmalloc.hist "want 1 in the vmalloc histogram's 4194304 -> 8388607 slot, got '${got:-no vmalloc histogram}'" "$(ks_out kh)"
else
	fail vmalloc.hist "$WHY"
fi

# --- --allocinfo ----------------------------------------------------------------------
site_line() { ai_func_sum "$SITE"; }

if hold a -e vmalloc,page --allocinfo 0.3; then
	out=$(ks_out ka)
	n=$(ai_ntables "$out")
	if ai_wait_tables "$out" $((n + 2)) 20; then
		t=$(ai_table "$out" $((n + 1)))
		got=$(echo "$t" | site_line)
		# vmalloc's own area for the array of the area's page pointers
		# (more than a page of them) may count under the same caller: the
		# kernel hands it the area's caller (7.x), and through the
		# tracepoints its first frame outside vmalloc is the same.
		[ "$got" = "$ALLOC 1" ] || [ "$got" = "$((ALLOC + NESTED)) 2" ]
		check $? vmalloc.allocinfo.held "map code's line while held: got '$got', want '$ALLOC 1' or '$((ALLOC + NESTED)) 2'" "$out"
		others=$(echo "$t" | awk -v site="$SITE" -v half=$((K / 2)) '$NF !~ "^func:" site "$" && $1 ~ /^-?[0-9]+$/ && $1 >= half' | first_lines 3)
		[ -z "$others" ]
		check $? vmalloc.allocinfo.pages_once "no other line should hold half the area ($((K / 2)) bytes) or more: ${others}"
	else
		fail vmalloc.allocinfo.held "no table after the map was created" "$out"
		fail vmalloc.allocinfo.pages_once "no table after the map was created"
	fi
	wl_go wa
	wait_for "$WORK/wa.wout" '^closed$' 20
	# The kernel frees the area from a workqueue after the close.
	end=$((SECONDS + 20))
	got=
	while [ $SECONDS -lt $end ]; do
		got=$(ai_table "$out" "$(ai_ntables "$out")" | site_line)
		[ "$got" = "0 0" ] && break
		nap 0.3
	done
	[ "$got" = "0 0" ]
	check $? vmalloc.allocinfo.freed "map code's line after the close: got '$got', want '0 0'" "$out"
	wl_go wa
	wl_wait wa
	ks_wait ka 20
else
	fail vmalloc.allocinfo.held "$WHY"
	fail vmalloc.allocinfo.pages_once "$WHY"
	fail vmalloc.allocinfo.freed "$WHY"
fi

# --- size filters ------------------------------------------------------------------
kept=x
dropped=x
if hold f -e vmalloc --min-size "$K"; then
	wl_release f
	kept=$(big_lines "$(ks_out kf)" | grep -cE "$PATTERN")
fi
if hold g -e vmalloc --max-size $((K - 1)); then
	wl_release g
	dropped=$(big_lines "$(ks_out kg)" | grep -c .)
fi
[ "$kept" = 1 ] && [ "$dropped" = 0 ]
check $? vmalloc.size_filter "--min-size $K: $kept lines of the area (1 expected); --max-size $((K - 1)): $dropped lines above $K bytes (0 expected) ${WHY:-}"

# --- the kernel's own events ------------------------------------------------------
# ptr_of LINE: the address of a vmalloc or alloc_vmap_area line, in decimal.
ptr_of() {
	local p
	p=$(echo "$1" | sed -nE 's/.* ptr=([0-9a-f]+) .*/\1/p')
	[ -n "$p" ] && { printf '%u\n' "0x$p"; return; } # unsigned: $((16#..)) is signed
	echo "$1" | sed -nE 's/.* va_start: ([0-9]+) .*/\1/p'
}

# frees_of FILE ADDR: the lines of FILE that free the area at ADDR (decimal):
# vfree's ptr=, free_vmap_area_noflush's va_start=0x (compared as hex
# strings: awk's numbers lose a kernel address's low bits).
frees_of() {
	awk -v a="$(printf %x "$2")" '/: (vfree|free_vmap_area_noflush): / {
		for (i = 1; i <= NF; i++) if ($i ~ /^(ptr|va_start)=/) {
			v = $i; sub(/^[a-z_]+=(0x)?0*/, "", v)
			if (v == a) print
		} }' "$1"
}

if ! tracefs_setup; then
	skip vmalloc.oracle "tracefs is not available at $TRACEFS"
elif [ ! -d "$TRACEFS/events/vmalloc/alloc_vmap_area" ]; then
	skip vmalloc.oracle "kernel $(uname -r) has no vmalloc:alloc_vmap_area event (6.2+)"
elif ! wl_start wo bpfarray-hold "$KIB"; then
	fail vmalloc.oracle "the workload did not start: $(head -c 200 "$WORK/wo.werr")"
elif ! ks_start ko -e vmalloc; then
	fail vmalloc.oracle "kmemsnoop -e vmalloc: $(ks_start_fail_why ko)"
	wl_kill wo
elif ! { oracle_setup o && ORACLE_EVENTS="" \
	ORACLE_MORE="vmalloc/alloc_vmap_area vmalloc/free_vmap_area_noflush" oracle_enable o; }; then
	skip vmalloc.oracle "no tracefs oracle: $ORACLE_ERR"
	ks_stop ko
	wl_kill wo
else
	PID=${WL_PID[wo]}
	trace=${ORACLE_DIR[o]}/trace
	wl_go wo
	wait_for "$WORK/wo.wout" '^held$' 20
	wl_go wo
	wait_for "$WORK/wo.wout" '^closed$' 20
	# The area the kernel gave the workload (its size with the guard page),
	# read live from the instance; kmemsnoop's text reaches its file later.
	addr=$(grep -E -- "-$PID +\[.* alloc_vmap_area: va_start: [0-9]+ size=$((K + 2 * PAGE_SIZE)) " \
		"$trace" | head -n 1 | sed -nE 's/.* va_start: ([0-9]+) .*/\1/p')
	# The kernel frees the area from a workqueue after the close.
	end=$((SECONDS + 20))
	while [ -n "$addr" ] && [ $SECONDS -lt $end ] &&
		! grep -q "free_vmap_area_noflush: va_start=0x$(printf %x "$addr") " "$trace"; do
		nap 0.3
	done
	nap 0.5
	oracle_stop o || ORACLE_ERR="the oracle lost events: $ORACLE_ERR"
	ks_stop ko
	wl_go wo
	wl_wait wo
	line=$(big_lines "$(ks_out ko)" | grep -E -- "-$PID +\[" | grep -E "$PATTERN" |
		while read -r l; do [ "$(ptr_of "$l")" = "$addr" ] && echo "$l"; done)
	size=$(echo "$line" | sed -nE 's/.* size=([0-9]+) .*/\1/p')
	want=$((AREA ? size : (size + PAGE_SIZE - 1) / PAGE_SIZE * PAGE_SIZE + PAGE_SIZE))
	kernel=$(grep -E "alloc_vmap_area: va_start: $addr size=" "$WORK/o.oracle" | head -n 1 |
		sed -nE 's/.* size=([0-9]+) .*/\1/p')
	ks_frees=$(frees_of "$(ks_out ko)" "$addr" | grep -c .)
	kernel_frees=$(frees_of "$WORK/o.oracle" "$addr" | grep -c .)
	echo "# oracle: kmemsnoop '$line'; the kernel's area at $addr: size=${kernel:-none}; frees: kmemsnoop $ks_frees, the kernel $kernel_frees"
	[ -z "$ORACLE_ERR" ] && [ -n "$addr" ] && [ "$(echo "$line" | grep -c .)" = 1 ] &&
		[ -n "$size" ] && [ "$kernel" = "$want" ] &&
		[ "$ks_frees" -ge 1 ] && [ "$ks_frees" = "$kernel_frees" ]
	check $? vmalloc.oracle "want the workload's area at an address the kernel's alloc_vmap_area gave, of size $want, and as many frees of it as the kernel's free_vmap_area_noflush events: area '${addr:-none}' (kmemsnoop size ${size:-none}, the kernel's ${kernel:-none}), frees $ks_frees and $kernel_frees${ORACLE_ERR:+; $ORACLE_ERR}" "$(ks_out ko)"
	oracle_remove o
fi

finish
