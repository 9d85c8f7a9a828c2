#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# CPU hotplug during a trace.  Taking a CPU offline is not something to do
# to a shared machine: this runs only where KMEMSNOOP_HOTPLUG=1 says the
# machine is the tests' own (tools/vmtest's VMs set it), and SKIPs
# otherwise.  A workload pinned to CPU 0 (taskset) sends SysV messages in
# three rounds of COUNT, holding HOLD messages between them: while the
# first hold lasts CPU 1 goes offline, while the second it comes back, so
# that the second round runs with CPU 1 offline and the third after it
# returned.  Two kmemsnoop instances trace it with -p from start to end:
#   hotplug.stream  the text has all 3 x COUNT + 2 x HOLD load_msg
#                   kmallocs, on CPU 0; none lost; exit 0 after SIGINT;
#                   nothing on stderr but the start and summary lines
#   hotplug.hist    --hist-by callsite counts them all too; exit 0;
#                   nothing on stderr but its start and summary lines
#   hotplug.online  CPU 1 went offline and came back (the test's own
#                   precondition, checked so that a PASS above means it)
. "$(dirname "$0")/../lib.sh"

TESTS=(hotplug.online hotplug.stream hotplug.hist)
SIZE=200
COUNT=200
HOLD=20
CPU1=/sys/devices/system/cpu/cpu1/online
WANT=$((3 * COUNT + 2 * HOLD))

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

# The workload, pinned to CPU 0 from its first instruction.
PINNED=$WORK/pinned-workload
printf '#!/bin/sh\nexec taskset -c 0 "%s" "$@"\n' "$WORKLOAD" >"$PINNED"
chmod +x "$PINNED"

# wait_held ID N: until the workload has said "held" N times.
wait_held() {
	local end=$((SECONDS + 120))
	until [ "$(grep -cx held "$WORK/$1.wout" 2>/dev/null)" -ge "$2" ]; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
}

# stderr_other ID: stderr lines other than the start, what this kernel
# cannot show (bulk objects without fentry), the end of the -p process, the
# summaries (stream, hist) and the missed events: nothing else is expected,
# no error, no loss line.
stderr_other() {
	grep -Ev '^kmemsnoop: (Tracing kernel allocations|.* are not seen \(|process [0-9]+ and its children have exited$|[0-9]+ events written, 0 lost|[0-9]+ events missed: |[0-9]+ allocations \([0-9]+ failed\), [0-9]+ frees in )' \
		"$(ks_err "$1")" | first_lines 3
}

hist_msg() {
	awk '/^call site = / { k = ($4 ~ /^load_msg\+/); next }
	k && /^ *[0-9]+ -> [0-9]+ *: [0-9]+ / { n += $5 } END { print n + 0 }' "$1"
}

WORKLOAD=$PINNED wl_start w msg "$SIZE" "$COUNT" + msg-hold "$SIZE" "$HOLD" + \
	msg "$SIZE" "$COUNT" + msg-hold "$SIZE" "$HOLD" + msg "$SIZE" "$COUNT" || {
	fail_rest "${TESTS[@]}" "the workload did not start: $(head -c 200 "$WORK/w.werr")"
	finish
}
PID=${WL_PID[w]}
if ! ks_start s -e kmalloc -p "$PID" || ! ks_start h --hist-by callsite -e kmalloc -p "$PID" 0.5; then
	fail_rest "${TESTS[@]}" "kmemsnoop did not start: $(ks_start_fail_why s) $(ks_start_fail_why h)"
	wl_kill w
	finish
fi
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

[ "$went" = ok ] && [ "$wrc" = 0 ]
check $? hotplug.online "CPU 1 offline then online during the trace: $went; workload exit $wrc: $(head -c 200 "$WORK/w.werr")"

n=$(grep -c ' kmalloc: call_site=load_msg+' "$(ks_out s)")
off=$(grep ' kmalloc: call_site=load_msg+' "$(ks_out s)" | grep -vc ' \[000\] ')
lost=$(ks_summary s | awk '{ print $2 }')
other=$(stderr_other s)
[ $rcs -eq 0 ] && [ "$n" -eq "$WANT" ] && [ "$off" -eq 0 ] && [ "$lost" = 0 ] && [ -z "$other" ]
check $? hotplug.stream "exit $rcs; $n load_msg kmallocs (want $WANT), $off not on CPU 0; ${lost:-no summary: ?} lost; other stderr lines: '$other'" "$(ks_err s)"

n=$(hist_msg "$(ks_out h)")
other=$(stderr_other h)
[ $rch -eq 0 ] && [ "$n" -eq "$WANT" ] && [ -z "$other" ]
check $? hotplug.hist "exit $rch; $n load_msg allocations counted (want $WANT); other stderr lines: '$other'" "$(ks_err h)"

finish
