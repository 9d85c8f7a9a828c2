#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# "kmemsnoop -p PID" shows the workload's events and nothing of the
# other processes allocating at the same time: two noise workloads send
# messages of another size (333 bytes: load_msg bytes_req=381) and open
# files all along.  A tracefs instance filtered on the noise pids proves
# that they did allocate during the window (otherwise the test would prove
# nothing).
#
# vmtest: in x86/5.10: the -p filter is the same BPF code in every program
# type: the raw_tp ones here, tp_btf on the host, classic in test_preempt.
. "$(dirname "$0")/../lib.sh"

TESTS=(pfilter.clean_stop pfilter.only_pid pfilter.no_noise pfilter.own_events pfilter.noise_active)
COUNT=200
NOISE_SIZE=333

require_root
require_kmemsnoop
require_workload
require_tracefs

# Ten minutes, killed at the end: they must outlast kmemsnoop's start,
# which takes half a minute in an emulated 5.10 VM.
for n in n1 n2; do
	if ! wl_start "$n" noise 600 "$NOISE_SIZE"; then
		fail_rest "${TESTS[@]}" "the noise workload did not start: $(head -c 200 "$WORK/$n.werr")"
		finish
	fi
	wl_go "$n"
done
NOISE_PIDS="${WL_PID[n1]} ${WL_PID[n2]}"

start_traced w k -- msg 100 "$COUNT" + openclose "$COUNT" + pipe 8
ks_watch_misses k
# shellcheck disable=SC2086
oracle_ok=1
oracle_start noise $NOISE_PIDS || oracle_ok=0

wl_run w || fail pfilter.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
sleep 0.2 # let the noise keep going while kmemsnoop still runs
# The noise is heavy: this instance may overrun; it only has to show that
# the noise allocated.
[ $oracle_ok = 1 ] && { ORACLE_ALLOW_LOSS=1 oracle_stop noise || oracle_ok=0; }
ks_check_stop pfilter.clean_stop k
wl_kill n1
wl_kill n2

tab=$WORK/k.tab
ev_table "$(ks_out k)" >"$tab"

# Every line is the workload's: single-threaded and it does not fork, so
# its only task id is its pid.
foreign=$(awk -F'\t' -v p="$PID" '$2 != p { print $1 "-" $2 }' "$tab" | sort | uniq -c | sort -rn | first_lines 5)
total=$(ev_count "$tab" 1)
if [ "$total" -eq 0 ]; then
	fail pfilter.only_pid "no event lines at all" "$(ks_err k)"
elif [ -n "$foreign" ]; then
	fail pfilter.only_pid "lines of other tasks than $PID (count TASK-PID): $foreign"
else
	pass pfilter.only_pid
fi

# Specifically nothing of the noise.
nn=$(awk -F'\t' -v np=" $NOISE_PIDS " 'index(np, " " $2 " ") || ($6 ~ /^load_msg\+/ && $8 == '"$((48 + NOISE_SIZE))"') { n++ } END { print n + 0 }' "$tab")
[ "$nn" -eq 0 ]
check $? pfilter.no_noise "$nn lines from the noise processes ($NOISE_PIDS) or with their message size"

# The filter did not drop the workload's own events.
nmsg=$(ev_count "$tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+/ && $8 == 148')
nfree=$(ev_count "$tab" '$5 == "kfree" && $6 ~ /^free_msg\+/')
nname=$(ev_count "$tab" "$NAMES_ALLOC")
npage=$(ev_count "$tab" '$5 == "mm_page_alloc"')
why="expected $COUNT load_msg kmallocs (got $nmsg), $COUNT free_msg kfrees (got $nfree), >= $COUNT names_cache allocations (got $nname), >= 8 mm_page_alloc (got $npage)"
ks_final_misses k
misses=$(ks_misses k)
short=$((COUNT - nmsg + COUNT - nfree))
[ "$nname" -lt "$COUNT" ] && short=$((short + COUNT - nname))
[ "$npage" -lt 8 ] && short=$((short + 8 - npage))
if [ "$nmsg" -eq "$COUNT" ] && [ "$nfree" -eq "$COUNT" ] && [ "$nname" -ge "$COUNT" ] && [ "$npage" -ge 8 ]; then
	pass pfilter.own_events
elif [ "$nmsg" -le "$COUNT" ] && [ "$nfree" -le "$COUNT" ] && [ "$misses" -ge "$short" ]; then
	skip pfilter.own_events "$why, and the programs missed $misses events (a program already running on that CPU)"
else
	fail pfilter.own_events "$why"
fi

# The noise really allocated while kmemsnoop was tracing.
if [ $oracle_ok = 1 ]; then
	# grep, not ev_table: the noise fills this trace with ~100k lines,
	# a minute of busybox awk in the test VMs.
	nno=$(grep -Ec ' kmalloc: call_site=load_msg\+0x[0-9a-f]+/0x[0-9a-f]+ ptr=[0-9a-fx]+ bytes_req='"$((48 + NOISE_SIZE))"' ' "$(oracle_file noise)")
	[ "$nno" -gt 0 ]
	check $? pfilter.noise_active "the noise processes made no load_msg allocation during the trace"
else
	fail pfilter.noise_active "tracefs oracle: $ORACLE_ERR"
fi

finish
