#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# CPU hotplug during a trace.  Taking a CPU offline is not something to do
# to a shared machine: this runs only where KMEMSNOOP_HOTPLUG=1 says the
# machine is the tests' own (tools/vmtest's VMs set it), and SKIPs
# otherwise.  First a workload pinned to CPU 1 sends COUNT SysV messages,
# so that CPU 1's ring holds records when it goes; then one pinned to CPU 0
# (taskset) sends three rounds of COUNT, holding HOLD messages between
# them: while the first hold lasts CPU 1 goes offline, while the second it
# comes back, so that the second round runs with CPU 1 offline and the
# third after it returned.  Four kmemsnoop instances trace both (-c
# workload) from start to end:
#   hotplug.stream  the text has all 4 x COUNT + 2 x HOLD load_msg
#                   kmallocs, COUNT of them on CPU 1 and the others on
#                   CPU 0; none lost; exit 0 after SIGINT; nothing on
#                   stderr but the start and summary lines
#   hotplug.hist    --hist-by callsite counts them all too; exit 0;
#                   nothing on stderr but its start and summary lines
#   hotplug.output  -o DIR (its heartbeats run on each online CPU): exit 0,
#                   nothing on stderr but its start and summary lines, and
#                   -i DIR reads them all back, COUNT on CPU 1
#   hotplug.allocinfo  --allocinfo=total counts them all under load_msg
#                   (alloc_msg where inlined); exit 0; nothing on stderr but
#                   its start line
#   hotplug.online  CPU 1 went offline and came back (the test's own
#                   precondition, checked so that a PASS above means it)
# A count may fall short by no more than the events that instance's
# programs missed (an allocation while the same program ran on that CPU:
# in the TCG VMs, with 7.x's preemptible tracepoints, tens of them).
#
# vmtest: in x86/newest: CPUs going offline are handled by user space, the
# same on every kernel; on 7.x perf events carry the classic programs.
. "$(dirname "$0")/../lib.sh"

TESTS=(hotplug.online hotplug.stream hotplug.hist hotplug.output hotplug.allocinfo)
SIZE=200
COUNT=200
HOLD=20
CPU1=/sys/devices/system/cpu/cpu1/online
WANT=$((4 * COUNT + 2 * HOLD))

require_root
require_kmemsnoop
require_workload
[ "${KMEMSNOOP_HOTPLUG:-0}" = 1 ] ||
	skip_all "takes CPU 1 offline: only on a machine of the tests' own (KMEMSNOOP_HOTPLUG=1; tools/vmtest's VMs set it)"
[ -w "$CPU1" ] || skip_all "CPU 1 cannot be taken offline here (no $CPU1)"
[ "$(cat "$CPU1")" = 1 ] || skip_all "CPU 1 is offline already"
command -v taskset >/dev/null || skip_all "no taskset to pin the workload to CPU 0"

# Whatever happens, CPU 1 ends online.
trap 'echo 1 >"$CPU1" 2>/dev/null; cleanup' EXIT

# The workloads, pinned to CPU 0 and CPU 1 from their first instruction.
pinned_workload 0 >/dev/null
pinned_workload 1 >/dev/null

# wait_held ID N: until the workload has said "held" N times.
wait_held() {
	local end=$((SECONDS + 120))
	until [ "$(grep -cx held "$WORK/$1.wout" 2>/dev/null)" -ge "$2" ]; do
		[ $SECONDS -ge $end ] && return 1
		nap 0.05
	done
}

# stderr_other ID: stderr lines other than the start, what this kernel
# cannot show (bulk objects without fentry, vmalloc without it, atomics,
# debug information), the summaries (stream, hist, allocinfo) and the
# missed events: nothing else is expected, no error, no loss line.
stderr_other() {
	grep -Ev '^kmemsnoop: (Tracing kernel allocations|.* are not seen \(|[0-9]+ events written, 0 lost|[0-9]+ events missed: |[0-9]+ allocations \([0-9]+ failed\), [0-9]+ frees in |vmalloc through the vmap_area|this kernel has no BPF atomic fetch-add|no debug information for kernel|[0-9]+ call sites or stacks)' \
		"$(ks_err "$1")" | first_lines 3
}

# counted NAME CLEAN GOT COMPLETE MISSED MESSAGE FILE: PASS NAME when the
# instance ended clean (CLEAN 0) with all WANT load_msg kmallocs (GOT, and
# COMPLETE 0 for the test's other counts), or short by no more than the
# MISSED events its programs did not run for (within_misses); FAIL
# otherwise.
counted() {
	local name=$1 clean=$2 got=$3 complete=$4 missed=${5:-0} msg=$6 file=$7
	if [ "$clean" -eq 0 ] && [ "$complete" -eq 0 ] &&
		within_misses "$name" "$got" "$WANT" "$missed"; then
		pass "$name"
	else
		fail "$name" "$msg; $missed events missed" "$file"
	fi
}

# on_cpu1_ok ONE GOT: status 0 when ONE of the GOT kmallocs were on CPU 1
# as they should: COUNT, or fewer by no more than GOT's own shortfall.
on_cpu1_ok() {
	[ "$1" -le "$COUNT" ] && [ $((COUNT - $1)) -le $((WANT - $2)) ]
}

hist_msg() {
	awk '/^call site = / { k = ($4 ~ /^load_msg\+/); next }
	k && /^ *[0-9]+ -> [0-9]+ *: [0-9]+ / { n += $5 } END { print n + 0 }' "$1"
}

WORKLOAD=$WORK/pinned1 wl_start v msg "$SIZE" "$COUNT" &&
	WORKLOAD=$WORK/pinned0 wl_start w msg "$SIZE" "$COUNT" + msg-hold "$SIZE" "$HOLD" + \
		msg "$SIZE" "$COUNT" + msg-hold "$SIZE" "$HOLD" + msg "$SIZE" "$COUNT" || {
	fail_rest "${TESTS[@]}" "the workloads did not start: $(head -c 200 "$WORK/v.werr" "$WORK/w.werr")"
	wl_kill v
	finish
}
# -c: both workloads, and nothing else in the VM is called so.
if ! ks_start s -e kmalloc -c workload || ! ks_start h --hist-by callsite -e kmalloc -c workload 0.5 ||
	! ks_start o -o "$WORK/rec" -e kmalloc -c workload ||
	! ks_start a --allocinfo=total -e kmalloc -c workload; then
	fail_rest "${TESTS[@]}" "kmemsnoop did not start: $(ks_start_fail_why s) $(ks_start_fail_why h) $(ks_start_fail_why o) $(ks_start_fail_why a)"
	wl_kill v
	wl_kill w
	finish
fi
wl_go v
wl_wait v
wl_go w
went=fail
if wait_held w 1 && echo 0 >"$CPU1" && [ "$(cat "$CPU1")" = 0 ]; then
	wl_go w
	if wait_held w 2 && echo 1 >"$CPU1" && [ "$(cat "$CPU1")" = 1 ]; then
		went=ok
		wl_go w
	fi
fi
wl_go w # whatever happened, let the workload end
wl_wait w
wrc=$?
sleep 1 # a histogram block after the workload
ks_stop s; rcs=$?
ks_stop h; rch=$?
ks_stop o; rco=$?
ks_stop a; rca=$?

[ "$went" = ok ] && [ "$wrc" = 0 ]
check $? hotplug.online "CPU 1 offline then online during the trace: $went; workload exit $wrc: $(head -c 200 "$WORK/w.werr")"

# msg_cpus FILE: "ALL ON_CPU1 ELSEWHERE" of the load_msg kmallocs in FILE
# (ELSEWHERE: neither CPU 0 nor 1).
msg_cpus() {
	grep ' kmalloc: call_site=load_msg+' "$1" |
		awk '{ n++ } / \[001\] / { one++ } !/ \[00[01]\] / { else_++ }
		END { print n + 0, one + 0, else_ + 0 }'
}

read -r n one elsewhere < <(msg_cpus "$(ks_out s)")
lost=$(ks_summary s | awk '{ print $2 }')
other=$(stderr_other s)
[ $rcs -eq 0 ] && [ "$elsewhere" -eq 0 ] && [ "$lost" = 0 ] && [ -z "$other" ]
clean=$?
on_cpu1_ok "$one" "$n"
counted hotplug.stream $clean "$n" $? "$(cat "$WORK/s.misses" 2>/dev/null || echo 0)" "exit $rcs; $n load_msg kmallocs (want $WANT), $one on CPU 1 (want $COUNT), $elsewhere on neither CPU; ${lost:-no summary: ?} lost; other stderr lines: '$other'" "$(ks_err s)"

n=$(hist_msg "$(ks_out h)")
other=$(stderr_other h)
[ $rch -eq 0 ] && [ -z "$other" ]
counted hotplug.hist $? "$n" 0 "$(sed -n 's/.* \([0-9]*\) events missed.*/\1/p' "$(ks_err h)" | tail -n 1)" "exit $rch; $n load_msg allocations counted (want $WANT); other stderr lines: '$other'" "$(ks_err h)"

"$KMEMSNOOP" -i "$WORK/rec" >"$WORK/replay.out" 2>"$WORK/replay.err"
rci=$?
read -r n one elsewhere < <(msg_cpus "$WORK/replay.out")
other=$(stderr_other o)
[ $rco -eq 0 ] && [ $rci -eq 0 ] && [ -z "$other" ]
clean=$?
on_cpu1_ok "$one" "$n"
counted hotplug.output $clean "$n" $? "$(cat "$WORK/o.misses" 2>/dev/null || echo 0)" "-o exit $rco, -i exit $rci; $n load_msg kmallocs read back (want $WANT), $one on CPU 1 (want $COUNT); other stderr lines: '$other'; -o: $(ks_summary o); -i: $(head -c 200 "$WORK/replay.err" | tr '\n' ' ')" "$(ks_err o)"

got=$(awk '$NF ~ /^func:(load_msg|alloc_msg)$/ { c += $2 } END { print c + 0 }' "$(ks_out a)")
other=$(stderr_other a)
[ $rca -eq 0 ] && [ -z "$other" ]
counted hotplug.allocinfo $? "$got" 0 "$(ai_missed "$(ks_out a)")" "exit $rca; $got load_msg allocations (want $WANT); other stderr lines: '$other'" "$(ks_err a)"

finish
