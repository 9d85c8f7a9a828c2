#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Lost events are counted.  kmemsnoop -p PID runs with the smallest ring
# (-b 64K) and its stdout goes into a pipe nobody reads until the workload
# is done, so the rings overflow.  The kernel's own trace (tracefs, same
# pid and window) counts every event: events written plus events lost must
# equal it, less at most the events the kernel never handed to kmemsnoop's
# programs (recursion_misses: an allocation in an interrupt while a program
# ran on that CPU); the text must hold the events written, and the per-CPU
# "cpu N lost N events (N bytes)" lines must add up to the total.
#
# vmtest: in x86/5.10: a full BPF ring counts its losses alike on every
# kernel; 5.10 has no atomic fetch-add, the host has.
. "$(dirname "$0")/../lib.sh"

TESTS=(lost.clean_stop lost.provoked lost.accounting lost.written_lines lost.cpu_lines)
N=20000

require_root
require_kmemsnoop
require_workload
require_tracefs

if ! wl_start w openclose "$N"; then
	fail_rest "${TESTS[@]}" "the workload did not start: $(head -c 200 "$WORK/w.werr")"
	finish
fi
PID=${WL_PID[w]}

mkfifo "$WORK/stall"
# The reader opens the FIFO at once (so kmemsnoop's open does not block)
# and reads only once $WORK/drain exists.
{
	while [ ! -e "$WORK/drain" ]; do nap 0.05; done
	cat
} <"$WORK/stall" >"$WORK/k.out" &
READER=$!
BG_PIDS+=("$READER")

# The kmem classes only: the oracle traces the kmem events.
if ! KS_STDOUT=$WORK/stall ks_start k -p "$PID" -b 65536 -e kmalloc,cache,page; then
	fail_rest "${TESTS[@]}" "$(ks_start_fail_why k)"
	touch "$WORK/drain"
	finish
fi
oracle_ok=1
oracle_start o "$PID" || oracle_ok=0
wl_run w || fail lost.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
[ $oracle_ok = 1 ] && { oracle_stop o || oracle_ok=0; }
# kmemsnoop is still running (blocked on its stdout): read how many events
# the kernel skipped because a program was already running on that CPU.
# Those never reach kmemsnoop, so it cannot count them as lost.
misses=$(ks_recursion_misses k)
touch "$WORK/drain"
# Let the reader drain everything before SIGINT (a signal that interrupts
# a blocked write is another matter), i.e. until kmemsnoop ends by itself
# (-p: its process is gone) or its output stops growing.
end=$((SECONDS + 20)) last=-1
while [ $SECONDS -lt $end ]; do
	st=$(proc_state "${KS_PID[k]}")
	[ -z "$st" ] || [ "$st" = Z ] && break
	size=$(stat -c %s "$WORK/k.out")
	[ "$size" = "$last" ] && break
	last=$size
	sleep 0.5
done
ks_stop k
rc=$?
wait_pid "$READER" 30

sum=$(ks_summary k)
if [ $rc -ne 0 ] || [ -z "$sum" ]; then
	fail lost.clean_stop "status $rc, stderr: '$(tail -n 3 "$(ks_err k)" | tr '\n' '|')'"
	fail_rest lost.provoked lost.accounting lost.written_lines lost.cpu_lines "no summary"
	finish
fi
pass lost.clean_stop
set -- $sum
written=$1 lost=$2 lostbytes=$3

if [ "$lost" -eq 0 ]; then
	skip_rest lost.provoked lost.accounting lost.cpu_lines "kmemsnoop lost nothing with a 64K ring and a stalled reader ($written events)"
else
	pass lost.provoked
fi

lines=$(ev_lines "$WORK/k.out")
[ "$lines" -eq "$written" ]
check $? lost.written_lines "the summary says $written events written, stdout holds $lines event lines"

[ "$lost" -eq 0 ] && finish

if [ $oracle_ok = 1 ]; then
	total=$(ev_lines "$(oracle_file o)")
	seen=$((written + lost))
	echo "# written $written, lost $lost, traced by the kernel $total, recursion misses ${misses:-?}"
	[ "$seen" -le "$total" ] && [ "$seen" -ge $((total - ${misses:-0})) ]
	check $? lost.accounting "written $written + lost $lost = $seen, the kernel traced $total events (and skipped ${misses:-an unknown number of} nested program runs, which may account for missing ones)"
else
	fail lost.accounting "tracefs oracle: $ORACLE_ERR"
fi

# kmemsnoop: cpu N lost N events (N bytes), the worst few, then (on many
# CPUs) kmemsnoop: N other CPUs lost N events (N bytes)
read -r cl ce cb < <(awk '/^kmemsnoop: cpu [0-9]+ lost [0-9]+ events \([0-9]+ bytes\)$/ {
	n++; e += $5; b = $7; gsub(/[()]/, "", b); bs += b
}
/^kmemsnoop: [0-9]+ other CPUs lost [0-9]+ events \([0-9]+ bytes\)$/ {
	n++; e += $6; b = $8; gsub(/[()]/, "", b); bs += b
} END { print n + 0, e + 0, bs + 0 }' "$(ks_err k)")
[ "$cl" -ge 1 ] && [ "$ce" -eq "$lost" ] && [ "$cb" -eq "$lostbytes" ]
check $? lost.cpu_lines "$cl per-CPU lines adding up to $ce events ($cb bytes); the total says $lost events ($lostbytes bytes)"

finish
