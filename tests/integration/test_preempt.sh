#!/bin/bash
# experiment (to be replaced): misses per mode under 8 tasks pinned to one CPU
# vmtest: host only
. "$(dirname "$0")/../lib.sh"
TESTS=(preempt.exp)
require_root
require_kmemsnoop
require_workload
SECS=${PREEMPT_SECS:-4}
run_mode() {
	local id=$1; shift
	local pids=() m
	ks_start "$id" -v -e kmalloc,cache,page "$@" || { echo "EXP $id start failed: $(ks_start_fail_why $id)"; return; }
	for i in 1 2 3 4; do
		taskset -c 1 "$WORKLOAD" noise $SECS 200 >/dev/null 2>&1 & pids+=($!)
		taskset -c 1 "$WORKLOAD" pages-rounds $SECS 16 >/dev/null 2>&1 & pids+=($!)
	done
	wait "${pids[@]}"
	m=$(ks_misses "$id")
	ks_stop "$id"
	grep "skipped by the kernel$\|taken by the" "$WORK/$id.err" | sed "s/^/EXP M $id /"
	echo "EXP $id args=[$*] misses=$m $(grep -E 'events|missed|lost' "$WORK/$id.err" | tr '\n' ' ' | head -c 400)"
}
true "$KMEMSNOOP" -v -d 1 -e kmalloc,cache,page >/dev/null 2>"$WORK/v.err"; grep -v "^libbpf: *$" "$WORK/v.err" | grep -B3 -A25 -i "error\|invalid\|failed\|unknown\|R[0-9]" | head -80 | sed "s/^/EXP V /"
echo "EXP kernel $(uname -r) $(cat /proc/cmdline | grep -o 'preempt=[a-z]*')"
run_mode text


run_mode rec -o "$WORK/rec"
run_mode ai --allocinfo=total
run_mode hist --hist
run_mode stat --stat
pass preempt.exp
finish
