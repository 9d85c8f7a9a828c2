#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# kmemsnoop against the kernel's own trace.  A private tracefs instance
# records the six kmem tracepoints filtered on the workload's pid over the
# same window as "kmemsnoop -p PID" (both start before the workload is let
# go and stop after it has exited).  When kmemsnoop lost nothing, both
# must hold the same events:
#   counts  - the number of events of each type;
#   keys    - the multisets of (event, call_site, bytes_req, bytes_alloc,
#             gfp_flags);
#   lines   - the multisets of whole lines without timestamp, comm and the
#             ptr=/page= values (the kernel hashes %p; kmemsnoop prints
#             real pointers): tid, cpu, event and every other body field
#             (name, node, accounted, pfn, order, migratetype).
# for a message workload (kmalloc/kfree) and an open/close workload
# (kmem_cache_alloc/free).
#
# vmtest: every VM: the events against the kernel's own trace.
. "$(dirname "$0")/../lib.sh"

WORKLOADS=("msg:msg 100 100 + msg 5000 10" "openclose:openclose 100")
for w in "${WORKLOADS[@]}"; do
	n=${w%%:*}
	TESTS+=("oracle.$n.clean_stop" "oracle.$n.counts" "oracle.$n.keys" "oracle.$n.lines")
done

# cpu_moves ORACLE_LINES KS_LINES: how many lines of each differ only in
# their CPU (the second field): the lines the two do not share, paired
# once the CPU is left out.
cpu_moves() {
	local d
	d=$(mktemp -d "$WORK/moves.XXXXXX") || return 1
	ms_minus "$1" "$2" | cut -f1,3- >"$d/o"
	ms_minus "$2" "$1" | cut -f1,3- >"$d/k"
	echo $(($(wc -l <"$d/o") - $(ms_minus "$d/o" "$d/k" | wc -l)))
}

require_root
require_kmemsnoop
require_workload
require_tracefs

for w in "${WORKLOADS[@]}"; do
	n=${w%%:*}
	args=${w#*:}
	t=oracle.$n
	names=("$t.clean_stop" "$t.counts" "$t.keys" "$t.lines")
	# shellcheck disable=SC2086
	if ! wl_start "w$n" $args; then
		fail_rest "${names[@]}" "the workload did not start: $(head -c 200 "$WORK/w$n.werr")"
		continue
	fi
	PID=${WL_PID[w$n]}
	if ! ks_start "k$n" -p "$PID"; then
		fail_rest "${names[@]}" "$(ks_start_fail_why "k$n")"
		wl_kill "w$n"
		continue
	fi
	ks_watch_misses "k$n"
	if ! oracle_start "o$n" "$PID"; then
		fail_rest "${names[@]:1}" "tracefs oracle: $ORACLE_ERR"
		wl_run "w$n"
		ks_check_stop "$t.clean_stop" "k$n"
		continue
	fi
	wl_run "w$n" || fail "$t.workload" "the workload failed (status ${WL_RC[w$n]})" "$WORK/w$n.werr"
	oracle_ok=1
	oracle_stop "o$n" || oracle_ok=0
	if ! ks_check_stop "$t.clean_stop" "k$n"; then
		fail_rest "${names[@]:1}" "kmemsnoop did not end cleanly with 0 lost: not comparable"
		continue
	fi
	misses=$(ks_misses "k$n")
	if [ $oracle_ok = 0 ]; then
		fail_rest "${names[@]:1}" "tracefs oracle: $ORACLE_ERR"
		continue
	fi

	ev_table "$(ks_out "k$n")" >"$WORK/k$n.tab"
	ev_table "$(oracle_file "o$n")" >"$WORK/o$n.tab"
	if [ "$(ev_count "$WORK/o$n.tab" 1)" -lt 10 ]; then
		fail_rest "${names[@]:1}" "the tracefs oracle recorded almost nothing: $(ev_count "$WORK/o$n.tab" 1) events"
		continue
	fi

	cut -f5 "$WORK/o$n.tab" | LC_ALL=C sort >"$WORK/o$n.events"
	cut -f5 "$WORK/k$n.tab" | LC_ALL=C sort >"$WORK/k$n.events"
	compare_to_oracle "$t.counts" "$WORK/o$n.events" "$WORK/k$n.events" "$misses" "event counts"

	ev_keys "$WORK/o$n.tab" 1 '$5, $6, $8, $9, $10' >"$WORK/o$n.keys"
	ev_keys "$WORK/k$n.tab" 1 '$5, $6, $8, $9, $10' >"$WORK/k$n.keys"
	compare_to_oracle "$t.keys" "$WORK/o$n.keys" "$WORK/k$n.keys" "$misses" \
		"(event, call_site, bytes_req, bytes_alloc, gfp_flags)"

	ev_keys "$WORK/o$n.tab" 1 '$2, $3, $5, $14' >"$WORK/o$n.lines"
	ev_keys "$WORK/k$n.tab" 1 '$2, $3, $5, $14' >"$WORK/k$n.lines"
	moved=$(cpu_moves "$WORK/o$n.lines" "$WORK/k$n.lines")
	if [ "$moved" -gt 0 ] && [ "$moved" -le $(($(wc -l <"$WORK/o$n.lines") / 1000 + 2)) ]; then
		echo "# $t.lines: $moved event(s) on another CPU in kmemsnoop's trace than in the kernel's, the rest alike: the task moved between the two probes (tracepoint callbacks that run preemptible)"
		cut -f1,3- "$WORK/o$n.lines" >"$WORK/o$n.nocpu"
		cut -f1,3- "$WORK/k$n.lines" >"$WORK/k$n.nocpu"
		compare_to_oracle "$t.lines" "$WORK/o$n.nocpu" "$WORK/k$n.nocpu" "$misses" \
			"lines (tid, event, body)"
	else
		compare_to_oracle "$t.lines" "$WORK/o$n.lines" "$WORK/k$n.lines" "$misses" \
			"lines (tid, cpu, event, body)"
	fi
done

finish
