#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The filters other than -p: -e (event classes), --min-size/--max-size,
# -c COMM, -C CPU and -t TID.  Several kmemsnoop instances with different
# filters trace the same workload at the same time; each must show what
# its filter lets through (the workload's known allocations) and nothing
# else.
#
# vmtest: in x86/6.1: the filters are the same BPF code in every program
# type, tp_btf on the host; the 5.10 VM, whose verifier is the slowest,
# has no time left for its many starts.
. "$(dirname "$0")/../lib.sh"

TESTS=(filters.e_kmalloc filters.e_cache filters.e_page filters.e_kmalloc_page
	filters.min_size filters.max_size filters.exact_size
	filters.comm filters.cpu_pid filters.cpu_other filters.cpu_only
	filters.tid filters.tid_process)
PIPE_GFP='GFP_HIGHUSER|__GFP_ACCOUNT'

require_root
require_kmemsnoop
require_workload

# stop_and_table ID NAME: stop instance ID; on an unclean stop FAIL NAME and
# return 1; else write $WORK/ID.tab.
stop_and_table() {
	local id=$1 name=$2 rc sum
	ks_stop "$id"
	rc=$?
	sum=$(ks_summary "$id")
	if [ $rc -ne 0 ] || [ -z "$sum" ]; then
		fail "$name" "kmemsnoop ended with status $rc, stderr: '$(tail -n 3 "$(ks_err "$id")" | tr '\n' '|')'"
		return 1
	fi
	set -- $sum
	if [ "$2" != 0 ]; then
		fail "$name" "kmemsnoop lost $2 events"
		return 1
	fi
	ev_table "$(ks_out "$id")" >"$WORK/$id.tab"
}

# start_or_fail ID NAME ARGS...: ks_start ID ARGS, or FAIL NAME.
start_or_fail() {
	local id=$1 name=$2
	shift 2
	ks_start "$id" "$@" && return 0
	fail "$name" "kmemsnoop $*: $(ks_start_fail_why "$id")"
	return 1
}

# ---------------------------------------------------------------- -e
COUNT=20
if wl_start we msg 100 $COUNT + openclose $COUNT + pipe 4; then
	P=${WL_PID[we]}
	ok_k=0 ok_c=0 ok_p=0 ok_kp=0
	start_or_fail ek filters.e_kmalloc -p "$P" -e kmalloc && ok_k=1
	start_or_fail ec filters.e_cache -p "$P" -e cache && ok_c=1
	start_or_fail ep filters.e_page -p "$P" -e page && ok_p=1
	start_or_fail ekp filters.e_kmalloc_page -p "$P" -e kmalloc,page && ok_kp=1
	wl_run we

	if [ $ok_k = 1 ] && stop_and_table ek filters.e_kmalloc; then
		other=$(ev_count "$WORK/ek.tab" '$5 != "kmalloc" && $5 != "kfree"')
		n=$(ev_count "$WORK/ek.tab" '$6 ~ /^load_msg\+/ && $8 == 148')
		m=$(ks_misses ek)
		[ "$other" -eq 0 ] && within_misses filters.e_kmalloc "$n" "$COUNT" "$m"
		check $? filters.e_kmalloc "-e kmalloc: $other lines of other events ($(cut -f5 "$WORK/ek.tab" | sort | uniq -c | first_lines 6)), $n load_msg kmallocs (expected $COUNT; $m events missed)"
	fi
	if [ $ok_c = 1 ] && stop_and_table ec filters.e_cache; then
		other=$(ev_count "$WORK/ec.tab" '$5 != "kmem_cache_alloc" && $5 != "kmem_cache_free"')
		n=$(ev_count "$WORK/ec.tab" "$NAMES_ALLOC")
		[ "$other" -eq 0 ] && [ "$n" -ge $COUNT ]
		check $? filters.e_cache "-e cache: $other lines of other events, $n names_cache allocations (expected >= $COUNT)"
	fi
	if [ $ok_p = 1 ] && stop_and_table ep filters.e_page; then
		other=$(ev_count "$WORK/ep.tab" '$5 != "mm_page_alloc" && $5 != "mm_page_free"')
		n=$(ev_count "$WORK/ep.tab" '$5 == "mm_page_alloc" && $13 == 0 && $10 == "'"$PIPE_GFP"'"')
		m=$(ks_misses ep)
		[ "$other" -eq 0 ] && within_misses filters.e_page "$n" 4 "$m"
		check $? filters.e_page "-e page: $other lines of other events, $n pipe page allocations (expected 4; $m events missed)"
	fi
	if [ $ok_kp = 1 ] && stop_and_table ekp filters.e_kmalloc_page; then
		other=$(ev_count "$WORK/ekp.tab" '$5 ~ /^kmem_cache_/')
		n=$(ev_count "$WORK/ekp.tab" '$6 ~ /^load_msg\+/ && $8 == 148')
		np=$(ev_count "$WORK/ekp.tab" '$5 == "mm_page_alloc" && $13 == 0 && $10 == "'"$PIPE_GFP"'"')
		m=$(ks_misses ekp)
		[ "$other" -eq 0 ] && within_misses filters.e_kmalloc_page "$n" "$COUNT" "$m" &&
			within_misses filters.e_kmalloc_page "$np" 4 "$m"
		check $? filters.e_kmalloc_page "-e kmalloc,page: $other kmem_cache lines, $n load_msg kmallocs (expected $COUNT), $np pipe pages (expected 4; $m events missed)"
	fi
else
	fail_rest filters.e_kmalloc filters.e_cache filters.e_page filters.e_kmalloc_page "the workload did not start"
fi

# ---------------------------------------------------------------- sizes
# Messages of 100 and 1000 bytes: kmallocs of 148 and 1048 bytes.
if wl_start ws msg 100 $COUNT + msg 1000 $COUNT; then
	P=${WL_PID[ws]}
	ok_min=0 ok_max=0 ok_ex=0
	start_or_fail smin filters.min_size -p "$P" --min-size 1000 && ok_min=1
	start_or_fail smax filters.max_size -p "$P" --max-size 500 && ok_max=1
	start_or_fail sex filters.exact_size -p "$P" --min-size 148 --max-size 148 && ok_ex=1
	wl_run ws

	# size_check NAME ID LO HI WANT_REQ: every allocation line has LO <=
	# bytes_req <= HI; COUNT load_msg kmallocs of WANT_REQ; COUNT free_msg
	# kfrees of exactly those pointers.
	size_check() {
		local name=$1 id=$2 lo=$3 hi=$4 want=$5 out nmsg nfree
		out=$(ev_count "$WORK/$id.tab" '$5 ~ /alloc$/ && $8 != "-" && ($8 < '"$lo"' || $8 > '"$hi"')')
		nmsg=$(ev_count "$WORK/$id.tab" '$6 ~ /^load_msg\+/ && $8 == '"$want")
		nothermsg=$(ev_count "$WORK/$id.tab" '$6 ~ /^load_msg\+/ && $8 != '"$want")
		ev_keys "$WORK/$id.tab" '$6 ~ /^load_msg\+/' '$7' >"$WORK/$id.aptr"
		ev_keys "$WORK/$id.tab" '$6 ~ /^free_msg\+/' '$7' >"$WORK/$id.fptr"
		nfree=$(wc -l <"$WORK/$id.fptr")
		[ "$out" -eq 0 ] && [ "$nmsg" -eq $COUNT ] && [ "$nothermsg" -eq 0 ] &&
			[ "$nfree" -eq $COUNT ] && multiset_diff "$WORK/$id.aptr" "$WORK/$id.fptr" >/dev/null
		check $? "$name" "$out allocation lines outside [$lo, $hi], $nmsg load_msg kmallocs of $want (expected $COUNT), $nothermsg of other sizes (expected 0), $nfree free_msg kfrees (expected $COUNT, of the same pointers)"
	}
	if [ $ok_min = 1 ] && stop_and_table smin filters.min_size; then
		size_check filters.min_size smin 1000 999999999999 1048
	fi
	if [ $ok_max = 1 ] && stop_and_table smax filters.max_size; then
		np=$(ev_count "$WORK/smax.tab" '$5 == "mm_page_alloc"')
		if [ "$np" -ne 0 ]; then
			fail filters.max_size "--max-size 500 let $np mm_page_alloc through (a page is 4096 bytes)"
		else
			size_check filters.max_size smax 0 500 148
		fi
	fi
	if [ $ok_ex = 1 ] && stop_and_table sex filters.exact_size; then
		size_check filters.exact_size sex 148 148 148
	fi
else
	fail_rest filters.min_size filters.max_size filters.exact_size "the workload did not start"
fi

# ---------------------------------------------------------------- -c
# A copy of the workload under another name; a noise workload (comm
# "workload") runs at the same time, until killed: long enough for a slow
# VM's start of kmemsnoop.
COMM=kmsfilt
cp "$WORKLOAD" "$WORK/$COMM"
if wl_start noise noise 600 333; then
	wl_go noise
	if start_or_fail kc filters.comm -c "$COMM"; then
		saved=$WORKLOAD
		WORKLOAD=$WORK/$COMM
		if wl_start wc msg 100 $COUNT; then
			wl_run wc
			WORKLOAD=$saved
			if stop_and_table kc filters.comm; then
				wrong=$(awk -F'\t' -v c="$COMM" '$1 != c { print $1 }' "$WORK/kc.tab" | sort | uniq -c | first_lines 4)
				n=$(ev_count "$WORK/kc.tab" '$6 ~ /^load_msg\+/ && $8 == 148 && $2 == '"${WL_PID[wc]}")
				m=$(ks_misses kc)
				[ -z "$wrong" ] && within_misses filters.comm "$n" "$COUNT" "$m"
				check $? filters.comm "-c $COMM: lines of other comms: '${wrong:-none}'; $n load_msg kmallocs of the $COMM process (expected $COUNT; $m events missed)"
			fi
		else
			WORKLOAD=$saved
			fail filters.comm "the renamed workload did not start"
		fi
	fi
	wl_kill noise
else
	fail filters.comm "the noise workload did not start"
fi

# ---------------------------------------------------------------- -C
mapfile -t CPUS < <(online_cpus)
if [ ${#CPUS[@]} -lt 2 ]; then
	skip_rest filters.cpu_pid filters.cpu_other filters.cpu_only "needs two online CPUs"
elif ! command -v taskset >/dev/null; then
	skip_rest filters.cpu_pid filters.cpu_other filters.cpu_only "needs taskset"
elif wl_start wC msg 100 $COUNT; then
	P=${WL_PID[wC]}
	X=${CPUS[-1]}
	Y=${CPUS[0]}
	taskset -p -c "$X" "$P" >/dev/null
	ok_a=0 ok_b=0 ok_c=0
	start_or_fail cA filters.cpu_pid -p "$P" -C "$X" && ok_a=1
	start_or_fail cB filters.cpu_other -p "$P" -C "$Y" && ok_b=1
	start_or_fail cC filters.cpu_only -C "$X" && ok_c=1
	wl_run wC
	Xf=$(printf '%03d' "$X")
	Yf=$(printf '%03d' "$Y")
	if [ $ok_a = 1 ] && stop_and_table cA filters.cpu_pid; then
		off=$(ev_count "$WORK/cA.tab" '$3 != "'"$Xf"'"')
		n=$(ev_count "$WORK/cA.tab" '$6 ~ /^load_msg\+/ && $8 == 148')
		m=$(ks_misses cA)
		[ "$off" -eq 0 ] && within_misses filters.cpu_pid "$n" "$COUNT" "$m"
		check $? filters.cpu_pid "-p $P -C $X (workload bound to CPU $X): $off lines of other CPUs, $n load_msg kmallocs (expected $COUNT; $m events missed)"
	fi
	if [ $ok_b = 1 ] && stop_and_table cB filters.cpu_other; then
		off=$(ev_count "$WORK/cB.tab" '$3 != "'"$Yf"'"')
		n=$(ev_count "$WORK/cB.tab" '$6 ~ /^load_msg\+/')
		[ "$off" -eq 0 ] && [ "$n" -eq 0 ]
		check $? filters.cpu_other "-p $P -C $Y (workload bound to CPU $X): $off lines of other CPUs, $n load_msg kmallocs (expected 0)"
	fi
	if [ $ok_c = 1 ] && stop_and_table cC filters.cpu_only; then
		off=$(ev_count "$WORK/cC.tab" '$3 != "'"$Xf"'"')
		n=$(ev_count "$WORK/cC.tab" '$6 ~ /^load_msg\+/ && $8 == 148 && $2 == '"$P")
		m=$(ks_misses cC)
		[ "$off" -eq 0 ] && within_misses filters.cpu_only "$n" "$COUNT" "$m"
		check $? filters.cpu_only "-C $X: $off lines of other CPUs, $n load_msg kmallocs of the workload (expected $COUNT; $m events missed)"
	fi
else
	fail_rest filters.cpu_pid filters.cpu_other filters.cpu_only "the workload did not start"
fi

# ---------------------------------------------------------------- -t
# thread-msg: the second thread sends the messages, the main thread opens
# and closes /dev/null.
if wl_start wt thread-msg 100 $COUNT; then
	P=${WL_PID[wt]}
	T=$(wl_field wt tid)
	ok_t=0 ok_p=0
	start_or_fail tT filters.tid -t "$T" && ok_t=1
	start_or_fail tP filters.tid_process -p "$P" && ok_p=1
	wl_run wt
	if [ $ok_t = 1 ] && stop_and_table tT filters.tid; then
		off=$(ev_count "$WORK/tT.tab" '$2 != '"$T")
		n=$(ev_count "$WORK/tT.tab" '$6 ~ /^load_msg\+/ && $8 == 148')
		m=$(ks_misses tT)
		[ "$off" -eq 0 ] && within_misses filters.tid "$n" "$COUNT" "$m"
		check $? filters.tid "-t $T: $off lines of other tasks, $n load_msg kmallocs (expected $COUNT; $m events missed)"
	fi
	if [ $ok_p = 1 ] && stop_and_table tP filters.tid_process; then
		off=$(ev_count "$WORK/tP.tab" '$2 != '"$T"' && $2 != '"$P")
		n=$(ev_count "$WORK/tP.tab" '$6 ~ /^load_msg\+/ && $8 == 148 && $2 == '"$T")
		nn=$(ev_count "$WORK/tP.tab" "$NAMES_ALLOC"' && $2 == '"$P")
		# At least COUNT names_cache allocations: less by no more than the misses.
		m=$(ks_misses tP)
		[ "$off" -eq 0 ] && within_misses filters.tid_process "$n" "$COUNT" "$m" &&
			[ "$nn" -ge $((COUNT - m)) ]
		check $? filters.tid_process "-p $P with threads $P and $T: $off lines of other tasks, $n load_msg kmallocs of thread $T (expected $COUNT), $nn names_cache allocations of thread $P (expected >= $COUNT; $m events missed)"
	fi
else
	fail_rest filters.tid filters.tid_process "the workload did not start"
fi

finish
