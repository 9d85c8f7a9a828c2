#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The comm of each event is the task's name when it allocated, across a
# rename and across an exec.  The workload sends COUNT SysV messages of
# SIZE1 bytes as "workload", then changes its name and sends COUNT of
# SIZE2 bytes:
#   rename: "msg SIZE1 COUNT + rename wl-renamed + msg SIZE2 COUNT"
#           (prctl(PR_SET_NAME))
#   exec:   "msg SIZE1 COUNT + exec-as wl-execd + msg SIZE2 COUNT"
#           (execve of the workload through a symlink named wl-execd: same
#           pid, comm set by the kernel from the path's basename)
# The two sizes tell the phases apart independently of the comm: each
# msgsnd is one load_msg kmalloc with bytes_req = 48 + SIZE.  Traced by
# "kmemsnoop -p PID" (text, live) and at the same time "kmemsnoop -p PID
# -o DIR", read back with "kmemsnoop -i DIR".  In both outputs, for each
# variant:
#   .old    exactly COUNT load_msg kmallocs under comm "workload", exactly
#           COUNT of bytes_req 48 + SIZE1, and these are the same lines
#           (comm "workload", tid PID)
#   .new    the same for the new name and SIZE2 (tid still PID)
#   .order  every "workload" load_msg line is earlier (timestamp) than
#           every new-name one
# A count short by at most the events the kernel did not hand to
# kmemsnoop's programs (BPF recursion misses) is a SKIP, not a FAIL; a line
# under the wrong comm is always a FAIL.
#
# vmtest: in x86/5.10 x86/newest: task names come from the sched and
# task_rename programs, raw_tp on 5.10 and tp_btf beside the classic
# programs on 7.x; the host runs the tp_btf ones.
. "$(dirname "$0")/../lib.sh"

COUNT=100
SIZE1=64
SIZE2=100
VARIANTS=(rename exec)
declare -A STEP=([rename]=rename [exec]=exec-as)
declare -A NEWNAME=([rename]=wl-renamed [exec]=wl-execd)
for v in "${VARIANTS[@]}"; do
	TESTS+=("comm.$v.text_stop" "comm.$v.rec_stop")
	for m in text rec; do
		TESTS+=("comm.$v.$m.old" "comm.$v.$m.new" "comm.$v.$m.order")
	done
done

require_root
require_kmemsnoop
require_workload

REQ1=$(msg_pieces "$SIZE1" | cut -f1)
REQ2=$(msg_pieces "$SIZE2" | cut -f1)
LOAD_MSG='$5 == "kmalloc" && $6 ~ /^load_msg\+0x/'

# check_phase NAME TABLE COMM BYTES_REQ MISSES: COUNT load_msg kmallocs
# under COMM, COUNT of BYTES_REQ, all of them the same lines with tid PID.
check_phase() {
	local name=$1 tab=$2 comm=$3 req=$4 misses=$5 by_comm by_size both wrong short
	by_comm=$(ev_count "$tab" "$LOAD_MSG"' && $1 == "'"$comm"'"')
	by_size=$(ev_count "$tab" "$LOAD_MSG"' && $8 == '"$req")
	both=$(ev_count "$tab" "$LOAD_MSG"' && $8 == '"$req"' && $1 == "'"$comm"'" && $2 == '"$PID")
	# Lines of this phase under another task name or tid, and lines
	# under this name from the other phase.
	wrong=$(awk -F'\t' -v c="$comm" -v r="$req" -v p="$PID" "$LOAD_MSG"' &&
		(($8 == r) != ($1 == c) || ($8 == r && $2 != p)) { print $1 "-" $2 " bytes_req=" $8 }' "$tab" |
		sort | uniq -c | first_lines 3)
	if [ -n "$wrong" ]; then
		fail "$name" "load_msg kmallocs under the wrong comm (want bytes_req=$req as $comm-$PID, and only those): $wrong"
	elif [ "$by_comm" -eq "$COUNT" ] && [ "$by_size" -eq "$COUNT" ] && [ "$both" -eq "$COUNT" ]; then
		pass "$name"
	elif [ "$both" -lt "$COUNT" ] && [ "$by_comm" -eq "$both" ] && [ "$by_size" -eq "$both" ] &&
		short=$((COUNT - both)) && [ "$short" -le "$misses" ]; then
		skip "$name" "$both of $COUNT load_msg kmallocs as $comm: $short short, within the $misses events the kernel did not hand to kmemsnoop (BPF recursion misses)"
	else
		fail "$name" "expected $COUNT load_msg kmallocs of bytes_req=$req as $comm-$PID: $by_comm under that comm, $by_size of that size, $both both (recursion misses $misses)"
	fi
}

# check_order NAME TABLE NEW MISSES: every load_msg line of comm "workload"
# has an earlier timestamp than every one of comm NEW (and there are both,
# unless the kernel's recursion misses took all of a phase: SKIP then).
check_order() {
	local name=$1 tab=$2 new=$3 misses=$4 r
	r=$(awk -F'\t' -v n="$new" "$LOAD_MSG"' {
		if ($1 == "workload") { no++; if (no == 1 || $4 + 0 > omax) { omax = $4 + 0; ots = $4 } }
		else if ($1 == n) { nn++; if (nn == 1 || $4 + 0 < nmin) { nmin = $4 + 0; nts = $4 } }
	}
	END {
		if (!no || !nn) print "none: no load_msg lines as workload (" no + 0 ") or as " n " (" nn + 0 ")"
		else if (omax >= nmin) print "the last as workload is at " ots ", the first as " n " at " nts
	}' "$tab")
	if [ "${r%%:*}" = none ] && [ "$misses" -ge "$COUNT" ]; then
		skip "$name" "${r#none: }, within the $misses events the kernel did not hand to kmemsnoop (BPF recursion misses)"
		return
	fi
	[ -z "$r" ]
	check $? "$name" "${r#none: }"
}

# run_variant V: one workload, traced live (text) and into a recording.
run_variant() {
	local v=$1 new=${NEWNAME[$1]} t=comm.$1 names=() m mt mb dir=$WORK/rec.$1 rc
	names=("$t.text_stop" "$t.rec_stop")
	for m in text rec; do names+=("$t.$m.old" "$t.$m.new" "$t.$m.order"); done

	if ! wl_start "w$v" msg "$SIZE1" "$COUNT" + "${STEP[$v]}" "$new" + msg "$SIZE2" "$COUNT"; then
		fail_rest "${names[@]}" "the workload did not start: $(head -c 200 "$WORK/w$v.werr")"
		return
	fi
	PID=${WL_PID[w$v]}
	# The kmalloc class only: the fewer events, the fewer recursion misses.
	if ! ks_start "kb$v" -p "$PID" -e kmalloc -o "$dir"; then
		fail_rest "${names[@]}" "kmemsnoop -o: $(ks_start_fail_why "kb$v")"
		wl_kill "w$v"
		return
	fi
	if ! ks_start "kt$v" -p "$PID" -e kmalloc; then
		fail_rest "${names[@]}" "kmemsnoop (text): $(ks_start_fail_why "kt$v")"
		wl_kill "w$v"
		return
	fi
	ks_watch_misses "kb$v"
	ks_watch_misses "kt$v"
	wl_run "w$v" || fail "$t.workload" "the workload failed (status ${WL_RC[w$v]})" "$WORK/w$v.werr"
	ks_check_stop "$t.text_stop" "kt$v"
	ks_check_stop "$t.rec_stop" "kb$v"
	mt=$(ks_misses "kt$v")
	mb=$(ks_misses "kb$v")

	ev_table "$(ks_out "kt$v")" >"$WORK/kt$v.tab"
	check_phase "$t.text.old" "$WORK/kt$v.tab" workload "$REQ1" "$mt"
	check_phase "$t.text.new" "$WORK/kt$v.tab" "$new" "$REQ2" "$mt"
	check_order "$t.text.order" "$WORK/kt$v.tab" "$new" "$mt"

	timeout -k 5 60 "$KMEMSNOOP" -i "$dir" >"$WORK/decoded.$v" 2>"$WORK/decoded.$v.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail_rest "$t.rec.old" "$t.rec.new" "$t.rec.order" \
			"kmemsnoop -i exited with status $rc: $(head -c 200 "$WORK/decoded.$v.err" | tr '\n' ' ')"
		return
	fi
	ev_table "$WORK/decoded.$v" >"$WORK/kb$v.tab"
	check_phase "$t.rec.old" "$WORK/kb$v.tab" workload "$REQ1" "$mb"
	check_phase "$t.rec.new" "$WORK/kb$v.tab" "$new" "$REQ2" "$mb"
	check_order "$t.rec.order" "$WORK/kb$v.tab" "$new" "$mb"
}

for v in "${VARIANTS[@]}"; do
	run_variant "$v"
done

finish
