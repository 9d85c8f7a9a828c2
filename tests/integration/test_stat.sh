#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --stat.  One workload (two threads pinned to CPUs 0 and 1 passing SysV
# messages, then messages and open/close in the first thread, still on CPU
# 0) is traced at the same time by "kmemsnoop --stat --caller -p PID"
# (counting in BPF maps), by the same with --stat-stream (every event
# streamed to user space), by "kmemsnoop -o DIR -p PID" and, when perf is
# installed, by "perf kmem record -p PID".  It ends holding one message: every tracer stops there,
# before the workload exits, because perf stops seeing a task part of the
# way through its exit (perf_event_exit_task) and kmemsnoop does not.
#   stat.clean_stop the BPF-map instance ends cleanly, said it counts in
#                   maps, and counted every allocation
#   stat.stream_clean_stop  the --stat-stream instance ends cleanly, 0 lost
#   stat.stream_rows, stat.stream_summary  its rows and SUMMARY equal the
#                   BPF-map instance's, but for ping-pongs that are frees
#                   of a pointer already freed (perf's rule, as in the
#                   replay below), as many as the recording holds at most
#   stat.bpf_replay_rows  the BPF-map instance's rows equal those of
#                   -i DIR --stat --caller on the -o recording, but for
#                   the replay's ping-pongs of frees of a pointer already
#                   freed (perf's rule; the BPF maps do not count them)
#   stat.pingpong   the load_msg row counts PP_COUNT + MSG_COUNT + 1 hits
#                   and exactly PP_COUNT ping-pong frees
#   stat.perf_rows  every call site row equals perf kmem --caller stat's,
#                   in the same order
#   stat.perf_summary  and so does the SUMMARY block
#   stat.replay_rows, stat.replay_summary  the same from -i DIR --stat
#   stat.replay_alloc_rows  -i DIR --stat --alloc: every pointer's row
#                   equals perf kmem --alloc stat's
# A pipe's pages (pipe 16, then a held message) under "--stat --page" and
# "perf kmem --page record":
#   stat.perf_page_summary  the SUMMARY (page allocator) numbers are perf's
#                   (the migrate type header differs: kmemsnoop names the
#                   kernel's types in their order, perf labels index 1
#                   Reclaimable)
#   stat.replay_page_summary  and so are those of -i DIR --stat --page on a
#                   recording of the same events
# PIPE_PAGES one-page pipe writes, "--stat --page --caller -p PID":
#   stat.page_callers  the pipe's write function (anon_pipe_write, or
#                   pipe_write before 6.13) has PIPE_PAGES hits of order 0,
#                   and no row names an allocator (alloc_pages, folio_alloc,
#                   a *_noprof function): the call site is the frame after them
# Then messages held for HOLD seconds (msg-hold):
#   stat.alive      kmemsnoop stopped while they are held counts them alive
#   stat.lifetime   traced by comm, with QUICK_COUNT messages of a second
#                   workload sent and received at once while they are held:
#                   after their release, the load_msg row has HOLD_COUNT
#                   lifetimes in the bucket from 2^30 ns (they lived >= HOLD
#                   > 1.07 s) or the next one, which ends at 2^32 ns (4.3 s:
#                   HOLD and the test's own steps between their sends and
#                   receives), and QUICK_COUNT below 2^27 ns (134 ms); its
#                   p50 bound is below 134 ms and its p99 bound 2.1s or 4.3s
# BIG_COUNT messages of BIG_SIZE among PP_COUNT of PP_SIZE, under
# --min-size 1024, counted in BPF maps and streamed (--stat-stream):
#   stat.size_filter  both load_msg rows have BIG_COUNT hits of BIG_SIZE
#                   requested each (the small ones filtered out in BPF),
#                   and every row of the two instances is the same
# Two workloads at once: FA_COUNT messages of FA_SIZE from a copy of the
# workload named kmsfa-wl, pinned to CPU 1 (taskset) and in a cgroup of its
# own, and FB_COUNT of FB_SIZE from the workload itself, pinned to CPU 0,
# outside that cgroup.  --stat --caller counting in BPF maps under one
# filter each:
#   stat.filter_comm (-c kmsfa-wl), stat.filter_cpu (-C 1),
#   stat.filter_tid (-t its thread), stat.filter_cgroup (--cgroup)
#                   the load_msg row has FA_COUNT hits of 48 + FA_SIZE bytes
#                   requested each, so none of the other's
# And "--stat 0.2 3" prints the tables 3 times, then ends (stat.interval).
# perf is not installed by the test: without it the perf tests SKIP.
#
# vmtest: every VM: what the kernel calls where differs by kernel and
# architecture.
. "$(dirname "$0")/../lib.sh"

TESTS=(stat.clean_stop stat.stream_clean_stop stat.stream_rows stat.stream_summary
	stat.bpf_replay_rows stat.pingpong stat.perf_rows stat.perf_summary stat.replay_rows
	stat.replay_summary stat.replay_alloc_rows stat.perf_page_summary stat.page_callers stat.alive
	stat.lifetime stat.size_filter stat.replay_page_summary
	stat.filter_comm stat.filter_cpu stat.filter_tid stat.filter_cgroup
	stat.interval)
PP_SIZE=200
PP_COUNT=40
MSG_SIZE=300
MSG_COUNT=7
HOLD_SIZE=100
HOLD_COUNT=5
HOLD=1.2
QUICK_COUNT=7
PIPE_PAGES=32
BIG_SIZE=3000
BIG_COUNT=9
FA_SIZE=700
FA_COUNT=13
FB_SIZE=300
FB_COUNT=17

require_root
require_kmemsnoop
require_workload

# rows FILE: the caller (or pointer) table's rows, in their order (the
# sort keys decide it, and equal rows keep the order of call site or pointer).
rows() {
	awk '/^ (Callsite|Alloc Ptr) /{t = 1; next} t && /^-+$/ {n++; if (n == 2) exit; next}
	t && n == 1 && / \| / && !/^ \.\.\. / { print }' "$1"
}

# rows_diff A B: what differs between two row files, for a message.
rows_diff() {
	local d
	d=$(multiset_diff "$1" "$2" | first_lines 3)
	echo "${d:-the same rows in another order}"
}

# refrees DIR: the frees in recording DIR of a pointer whose last event
# was a free of it (its allocation in between not seen: another task's
# under -p).  perf's rule, which the replay keeps, counts such a free as a
# ping-pong; the BPF maps forgot the pointer at its first free and do not.
refrees() {
	"$KMEMSNOOP" -i "$1" 2>/dev/null | awk '
	{ ev = ""; for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_]+:$/ && $(i + 1) ~ /=/) { ev = $i; break } }
	ev == "" { next }
	{ ptr = ""; for (i = 1; i <= NF; i++) if ($i ~ /^ptr=/) ptr = $i }
	ptr == "" { next }
	ev ~ /free/ { if (last[ptr] == "f") n++; last[ptr] = "f"; next }
	ev ~ /alloc/ { last[ptr] = "a" }
	END { print n + 0 }'
}

# pingpong_off FILE: the rows of FILE without their Ping-pong column.
pingpong_off() {
	awk -F'|' -v OFS='|' '{ $5 = ""; print }' "$1"
}

# pingpong_extra A B: how many more ping-pongs the rows of B count than
# those of A, row by row in the same order; -1 when a row of B has fewer.
pingpong_extra() {
	paste -d'|' "$1" "$2" | awk -F'|' '{ d = $11 - $5; if (d < 0) { n = -1; exit } n += d } END { print n + 0 }'
}

# summary FILE: the SUMMARY (SLAB allocator) block's lines.
summary() {
	awk '/^SUMMARY \(SLAB allocator\)/{s = 1} s && /^$/ {exit} s' "$1"
}

# msg_row FILE: the row of the load_msg call site (messages up to 4048 bytes).
msg_row() {
	rows "$1" | awk -F'|' '$1 ~ /^ load_msg\+/'
}

# bpf_check_stop NAME ID: as ks_check_stop for a --stat counting in BPF
# maps, which streams nothing: exit status 0, its note that it counts in
# maps, every allocation counted, only kmemsnoop's lines on stderr.
bpf_check_stop() {
	local name=$1 id=$2 rc err
	ks_stop "$id"
	rc=$?
	err=$(ks_err "$id")
	if [ $rc -ne 0 ]; then
		fail "$name" "kmemsnoop exited with status $rc after SIGINT" "$err"
	elif ! grep -q '^kmemsnoop: --stat counts in BPF maps' "$err"; then
		fail "$name" "no note that --stat counts in BPF maps: the run streamed" "$err"
	elif ! grep -Eq '^kmemsnoop: [0-9]+ allocations counted in BPF maps, 0 not counted .*, 0 not followed' "$err"; then
		fail "$name" "allocations not counted: $(grep 'counted in BPF maps' "$err")" "$err"
	elif grep -v '^kmemsnoop: ' "$err" | grep -q .; then
		fail "$name" "stderr has lines not starting with 'kmemsnoop: ': '$(grep -v '^kmemsnoop: ' "$err" | first_lines 2)'"
	else
		pass "$name"
	fi
}

# wait_held ID: until the workload ID says "held" (status 1 after 10 s).
wait_held() {
	wait_for "$WORK/$1.wout" '^held$' 10
}

have_perf=0
why_no_perf=
if ! command -v perf >/dev/null 2>&1; then
	why_no_perf="perf is not installed here (tools/install-deps.sh installs linux-perf on a Debian host; the test VMs have none)"
elif ! perf kmem -h >/dev/null 2>&1 && ! perf help kmem >/dev/null 2>&1; then
	why_no_perf="this perf has no kmem command"
elif ! tracefs_setup; then
	why_no_perf="tracefs with kmem events is not available: perf kmem record needs it"
else
	have_perf=1
fi

ncpus=$(online_cpus | wc -l)
if [ "$ncpus" -lt 2 ] || ! online_cpus | grep -qx 1; then
	skip_rest stat.pingpong "needs CPUs 0 and 1 online"
	WORKLOAD_ARGS=(msg "$MSG_SIZE" "$MSG_COUNT" + openclose 10 + msg-hold "$MSG_SIZE" 1)
else
	WORKLOAD_ARGS=(pingpong "$PP_SIZE" "$PP_COUNT" + msg "$MSG_SIZE" "$MSG_COUNT" + openclose 10
		+ msg-hold "$MSG_SIZE" 1)
fi

DIR=$WORK/rec
start_traced w ks --stat --caller -- "${WORKLOAD_ARGS[@]}"
if ! ks_start ko -p "$PID" -o "$DIR"; then
	fail_rest stat.replay_rows stat.replay_summary stat.replay_alloc_rows stat.bpf_replay_rows "kmemsnoop -o: $(ks_start_fail_why ko)"
fi
if ! ks_start kss --stat --caller --stat-stream -p "$PID"; then
	fail_rest stat.stream_clean_stop stat.stream_rows stat.stream_summary "kmemsnoop --stat-stream: $(ks_start_fail_why kss)"
fi
# perf_start ID PID ARGS...: perf kmem ARGS record -p PID into $WORK/ID.data,
# its events disabled until "enable" on its control FIFO is acknowledged.
# Status 1 (and why_no_perf says why) when it does not start.
perf_start() {
	local id=$1 pid=$2 reply
	shift 2
	mkfifo "$WORK/$id.ctl" "$WORK/$id.ack"
	LC_ALL=C perf kmem "$@" record -o "$WORK/$id.data" -p "$pid" -D -1 \
		--control "fifo:$WORK/$id.ctl,$WORK/$id.ack" >"$WORK/$id.rec.out" 2>&1 &
	PERF_PID[$id]=$!
	exec {PERF_CTL}>"$WORK/$id.ctl" {PERF_ACK}<"$WORK/$id.ack"
	echo enable >&"$PERF_CTL"
	if read -r -t 30 reply <&"$PERF_ACK" && [ "$reply" = ack ]; then
		return 0
	fi
	why_no_perf="perf kmem record did not start: $(head -c 200 "$WORK/$id.rec.out" | tr '\n' ' ')"
	return 1
}

# perf_disable: events off (acknowledged) before the workload goes on.
perf_disable() {
	local reply
	echo disable >&"$PERF_CTL"
	read -r -t 30 reply <&"$PERF_ACK"
}

# perf_end ID: once the workload is gone, perf ends by itself.
perf_end() {
	exec {PERF_CTL}>&- {PERF_ACK}<&-
	wait_pid "${PERF_PID[$1]}" 30
}

declare -A PERF_PID
perf_started=0
if [ $have_perf = 1 ] && perf_start perf "$PID"; then
	perf_started=1
fi
ks_watch_misses ks
ks_watch_misses ko
ks_watch_misses kss
wl_go w
wait_held w || fail stat.workload "the workload never said 'held'" "$WORK/w.werr"
[ $perf_started = 1 ] && perf_disable
bpf_check_stop stat.clean_stop ks
[ -n "${KS_PID[ko]}" ] && ks_stop ko
[ -n "${KS_PID[kss]}" ] && ks_check_stop stat.stream_clean_stop kss
misses=$(ks_misses ks)
misses_o=$(ks_misses ko)
misses_s=$(ks_misses kss)
wl_go w
wl_wait w || fail stat.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
if [ $perf_started = 1 ]; then
	perf_end perf
	LC_ALL=C perf kmem -i "$WORK/perf.data" --caller stat >"$WORK/perf.stat" 2>"$WORK/perf.stat.err"
	LC_ALL=C perf kmem -i "$WORK/perf.data" --alloc stat >"$WORK/perf.alloc" 2>>"$WORK/perf.stat.err"
fi
OUT=$(ks_out ks)

if [ -n "${REPORTED[stat.pingpong]}" ]; then
	:
else
	row=$(msg_row "$OUT")
	pp=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $5); print $5}')
	hit=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $4); print $4}')
	why="the load_msg row has $hit hits and $pp ping-pong, expected $((PP_COUNT + MSG_COUNT + 1)) and $PP_COUNT: '$row'"
	if [ "$hit" = $((PP_COUNT + MSG_COUNT + 1)) ] && [ "$pp" = "$PP_COUNT" ]; then
		pass stat.pingpong
	elif [ "$misses" != 0 ]; then
		# A recursion miss may be one of the workload's own events.
		skip stat.pingpong "$why, and the programs missed $misses events (interrupts during a run, any process)"
	else
		fail stat.pingpong "$why" "$OUT"
	fi
fi

# compare_with_perf NAME_ROWS NAME_SUMMARY FILE WHAT MISSES: identical, or
# a SKIP when they differ and the kmemsnoop instance missed events (the
# kernel's recursion misses count every process's: the difference may or
# may not be one of them).
compare_with_perf() {
	local f=$3 m=$5
	if [ $perf_started = 0 ]; then
		skip "$1" "$why_no_perf"
		skip "$2" "$why_no_perf"
		return
	fi
	rows "$WORK/perf.stat" >"$WORK/perf.rows"
	rows "$f" >"$f.rows"
	summary "$WORK/perf.stat" >"$WORK/perf.summary"
	summary "$f" >"$f.summary"
	if [ -s "$WORK/perf.rows" ] && cmp -s "$WORK/perf.rows" "$f.rows"; then
		pass "$1"
	elif [ "$m" != 0 ]; then
		skip "$1" "$4's rows differ from perf kmem's, and its programs missed $m events (interrupts during a run, any process): $(rows_diff "$WORK/perf.rows" "$f.rows")"
	else
		fail "$1" "$4's rows differ from perf kmem's: $(rows_diff "$WORK/perf.rows" "$f.rows")" "$WORK/perf.rows" "$f.rows"
	fi
	if [ -s "$WORK/perf.summary" ] && cmp -s "$WORK/perf.summary" "$f.summary"; then
		pass "$2"
	elif [ "$m" != 0 ]; then
		skip "$2" "$4's SUMMARY differs from perf kmem's, and its programs missed $m events"
	else
		fail "$2" "$4's SUMMARY differs from perf kmem's: $(diff "$WORK/perf.summary" "$f.summary" | grep '^[<>]' | first_lines 4)" "$WORK/perf.summary" "$f.summary"
	fi
}

compare_with_perf stat.perf_rows stat.perf_summary "$OUT" "kmemsnoop --stat" "$misses"

# same_rows NAME FILE_A FILE_B WHAT MISSES: the tables' rows of two
# kmemsnoop outputs are the same (a SKIP when they differ and one of them
# missed events).
same_rows() {
	rows "$2" >"$2.rows"
	rows "$3" >"$3.rows"
	if [ -s "$2.rows" ] && cmp -s "$2.rows" "$3.rows"; then
		pass "$1"
	elif [ "$5" != 0 ]; then
		skip "$1" "$4: the rows differ, and the programs missed $5 events (interrupts during a run, any process)"
	else
		fail "$1" "$4: the rows differ: $(rows_diff "$2.rows" "$3.rows")" "$2.rows" "$3.rows"
	fi
}

# summary_diff A B: the lines of one SUMMARY file not in the other, for a
# message (busybox's diff, in the VMs, prints another format).
summary_diff() {
	{
		grep -vxF -f "$2" "$1" | sed 's/^/< /'
		grep -vxF -f "$1" "$2" | sed 's/^/> /'
	} | first_lines 6
}
# refree_lines_off FILE: a SUMMARY without the lines that frees counted
# again change (bytes freed, the net total); summary_bytes LABEL FILE: that
# line's number.  Its "Cross CPU allocations" line counts allocations on
# another node than the CPU's (perf's meaning), which no free changes.
refree_lines_off() {
	grep -Ev '^(Total bytes freed|Net total bytes allocated): ' "$1"
}
summary_bytes() { sed -n "s/^$1: *\(-\{0,1\}[0-9]*\).*/\1/p" "$2" | grep . || echo 0; }
# refree_bytes DIR: the bytes that perf's rule frees again in recording
# DIR: for each free of a pointer whose last event was a free of it, the
# bytes_alloc of its last allocation seen (none seen: perf ignores the free).
refree_bytes() {
	"$KMEMSNOOP" -i "$1" 2>/dev/null | awk '
	{ ev = ""; for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_]+:$/ && $(i + 1) ~ /=/) { ev = $i; break } }
	ev == "" { next }
	{ ptr = ""; b = ""; for (i = 1; i <= NF; i++) { if ($i ~ /^ptr=/) ptr = $i; if ($i ~ /^bytes_alloc=/) b = substr($i, 13) } }
	ptr == "" { next }
	ev ~ /free/ { if (last[ptr] == "f") n += bytes[ptr]; last[ptr] = "f"; next }
	ev ~ /alloc/ { last[ptr] = "a"; bytes[ptr] = b + 0 }
	END { print n + 0 }'
}
# refrees_rows A B AGAIN: how many more ping-pongs rows B count than rows
# A, when that is all that differs, and no more than AGAIN (the recording's
# frees of a pointer already freed: perf's rule counts them); status 1
# otherwise.
refrees_rows() {
	local extra
	[ -s "$1" ] && ! cmp -s "$1" "$2" && cmp -s <(pingpong_off "$1") <(pingpong_off "$2") ||
		return 1
	extra=$(pingpong_extra "$1" "$2")
	[ "$extra" -gt 0 ] && [ "$extra" -le "$3" ] && echo "$extra"
}
# refrees_only A B BOUND: SUMMARY B differs from A only by the frees
# perf's rule counts again: more bytes freed, no more than BOUND (what the
# recording's frees of a pointer already freed free, refree_bytes), and a
# net total smaller by as much.  The callers table shows the top rows
# only, so its ping-pongs need not show these frees.
refrees_only() {
	local df na nb
	cmp -s <(refree_lines_off "$1") <(refree_lines_off "$2") || return 1
	df=$(($(summary_bytes 'Total bytes freed' "$2") - $(summary_bytes 'Total bytes freed' "$1")))
	na=$(summary_bytes 'Net total bytes allocated' "$1")
	nb=$(summary_bytes 'Net total bytes allocated' "$2")
	[ "$df" -gt 0 ] && [ "$df" -le "$3" ] || return 1
	# The net line is printed only while allocated exceeds freed.
	[ "$nb" = $((na - df)) ] || { [ "$nb" = 0 ] && [ "$na" -le "$df" ]; }
}

if [ -z "${REPORTED[stat.stream_rows]}" ]; then
	SOUT=$(ks_out kss)
	rows "$OUT" >"$OUT.rows"
	rows "$SOUT" >"$SOUT.rows"
	summary "$OUT" >"$OUT.summary"
	summary "$SOUT" >"$SOUT.summary"
	# --stat-stream counts in user space by perf's rule, which makes a
	# free of a pointer already freed a ping-pong (its allocation unseen:
	# another CPU's bulk call past what was read, or before the start);
	# the BPF maps do not.  Bounded by such frees in the recording made
	# beside it.
	again=$(refrees "$DIR")
	if stream_refrees=$(refrees_rows "$OUT.rows" "$SOUT.rows" "$again"); then
		echo "# stat.stream_rows: --stat-stream counts $stream_refrees more ping-pongs, within the $again frees of a pointer already freed in the recording (perf's rule)"
		pass stat.stream_rows
	else
		same_rows stat.stream_rows "$OUT" "$SOUT" "BPF maps against --stat-stream" $((misses + misses_s))
	fi
	if [ -s "$OUT.summary" ] && cmp -s "$OUT.summary" "$SOUT.summary"; then
		pass stat.stream_summary
	elif refrees_only "$OUT.summary" "$SOUT.summary" "$(refree_bytes "$DIR")"; then
		pass stat.stream_summary
	elif [ $((misses + misses_s)) != 0 ]; then
		skip stat.stream_summary "the SUMMARY differs from --stat-stream's, and the programs missed $((misses + misses_s)) events"
	else
		fail stat.stream_summary "the SUMMARY differs from --stat-stream's: $(summary_diff "$OUT.summary" "$SOUT.summary")"
	fi
fi

if [ -z "${REPORTED[stat.replay_rows]}" ]; then
	timeout -k 5 60 "$KMEMSNOOP" -i "$DIR" --stat --caller >"$WORK/replay" 2>"$WORK/replay.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail_rest stat.replay_rows stat.replay_summary stat.replay_alloc_rows "kmemsnoop -i --stat exited with status $rc: $(head -c 200 "$WORK/replay.err")"
	fi
	if [ $rc -eq 0 ]; then
		rows "$OUT" >"$OUT.rows"
		rows "$WORK/replay" >"$WORK/replay.rows"
		again=$(refrees "$DIR")
		if replay_refrees=$(refrees_rows "$OUT.rows" "$WORK/replay.rows" "$again"); then
			echo "# stat.bpf_replay_rows: the replay counts $replay_refrees more ping-pongs, within the $again frees of a pointer already freed (perf's rule)"
			pass stat.bpf_replay_rows
		else
			replay_refrees=0
			same_rows stat.bpf_replay_rows "$OUT" "$WORK/replay" "BPF maps against -i DIR --stat" $((misses + misses_o))
		fi
	fi
	if [ $rc -ne 0 ]; then
		:
	elif [ $perf_started = 1 ]; then
		compare_with_perf stat.replay_rows stat.replay_summary "$WORK/replay" "kmemsnoop -i --stat" "$misses_o"
		"$KMEMSNOOP" -i "$DIR" --stat --alloc >"$WORK/replay.alloc" 2>>"$WORK/replay.err"
		rows "$WORK/perf.alloc" >"$WORK/perf.alloc.rows"
		rows "$WORK/replay.alloc" >"$WORK/replay.alloc.rows"
		if [ -s "$WORK/perf.alloc.rows" ] && cmp -s "$WORK/perf.alloc.rows" "$WORK/replay.alloc.rows"; then
			pass stat.replay_alloc_rows
		elif [ "$misses_o" != 0 ]; then
			skip stat.replay_alloc_rows "the pointer rows differ from perf's, and the -o instance's programs missed $misses_o events"
		else
			fail stat.replay_alloc_rows "the pointer rows differ from perf kmem --alloc stat's: $(rows_diff "$WORK/perf.alloc.rows" "$WORK/replay.alloc.rows")"
		fi
	else
		skip stat.replay_alloc_rows "$why_no_perf"
		# Without perf, the replay must say what the live analysis said,
		# unless either instance's programs missed events (an event the
		# kernel skipped in one instance is a row the other has).
		# The ping-pongs perf's rule adds (above) are the only difference
		# allowed, in the rows and in the SUMMARY's Cross CPU line.
		if [ "$replay_refrees" -gt 0 ]; then
			echo "# stat.replay_rows: the replay counts $replay_refrees more ping-pongs than the live --stat (perf's rule, as stat.bpf_replay_rows says)"
			pass stat.replay_rows
		else
			same_rows stat.replay_rows "$OUT" "$WORK/replay" "the replay against the live --stat" \
				$((misses + misses_o))
		fi
		summary "$OUT" >"$OUT.summary"
		summary "$WORK/replay" >"$WORK/replay.summary"
		if [ -s "$OUT.summary" ] && cmp -s "$OUT.summary" "$WORK/replay.summary"; then
			pass stat.replay_summary
		elif refrees_only "$OUT.summary" "$WORK/replay.summary" "$(refree_bytes "$DIR")"; then
			pass stat.replay_summary
		elif [ $((misses + misses_o)) != 0 ]; then
			skip stat.replay_summary "the replay's SUMMARY differs from the live one, and the programs missed $((misses + misses_o)) events"
		else
			fail stat.replay_summary "the replay's SUMMARY differs from the live one: $(summary_diff "$OUT.summary" "$WORK/replay.summary")"
		fi
	fi
fi

timeout -k 5 60 "$KMEMSNOOP" --stat 0.2 3 >"$WORK/interval" 2>"$WORK/interval.err"
rc=$?
n=$(grep -c '^SUMMARY (SLAB allocator)$' "$WORK/interval")
[ $rc -eq 0 ] && [ "$n" = 3 ]
check $? stat.interval "--stat 0.2 3 exited with status $rc after $n SUMMARY blocks (3 expected)" "$WORK/interval.err"

# The size filter, applied in BPF by both ways of counting.
if ! wl_start sf msg "$PP_SIZE" "$PP_COUNT" + msg "$BIG_SIZE" "$BIG_COUNT"; then
	fail stat.size_filter "the workload did not start: $(head -c 200 "$WORK/sf.werr")"
elif ! ks_start ksm --stat --caller --min-size 1024 -p "${WL_PID[sf]}" ||
	! ks_start ksf --stat --caller --stat-stream --min-size 1024 -p "${WL_PID[sf]}"; then
	fail stat.size_filter "kmemsnoop --stat --min-size: $(ks_start_fail_why ksm) $(ks_start_fail_why ksf)"
	wl_kill sf
else
	wl_run sf || fail stat.workload_size "the workload failed (status ${WL_RC[sf]})" "$WORK/sf.werr"
	ks_stop ksm
	ks_stop ksf
	rows "$(ks_out ksm)" >"$WORK/ksm.rows"
	rows "$(ks_out ksf)" >"$WORK/ksf.rows"
	# " load_msg+0x.. | alloc/per | req/per | hits | ...": hits, and the
	# bytes requested per hit.
	read -r hits per <<<"$(awk -F'|' '$1 ~ /^ load_msg\+/ { split($3, r, "/"); gsub(/ /, "", $4)
		print $4, r[2] + 0 }' "$WORK/ksm.rows" | head -n1)"
	missed=$(( $(ks_misses ksm) + $(ks_misses ksf) ))
	within_misses stat.size_filter "${hits:-x}" "$BIG_COUNT" "$missed" &&
		[ "$per" -ge "$BIG_SIZE" ] && [ "$per" -lt 4096 ] &&
		{ [ "$missed" != 0 ] || cmp -s "$WORK/ksm.rows" "$WORK/ksf.rows"; } &&
		! awk -F'|' '{ split($3, r, "/"); if (r[2] + 0 < 1024) bad = 1 } END { exit !bad }' "$WORK/ksm.rows"
	check $? stat.size_filter "load_msg: $hits hits of $per bytes requested ($BIG_COUNT of $BIG_SIZE + header expected, none of $PP_SIZE); the BPF-map and streamed rows: $(rows_diff "$WORK/ksm.rows" "$WORK/ksf.rows")" "$(ks_out ksm)" "$(ks_out ksf)"
fi

# --- one filter each, in BPF maps -------------------------------------------
# msg_hits_per FILE: "HITS PER" of the load_msg row, PER the bytes requested
# per hit.
msg_hits_per() {
	rows "$1" | awk -F'|' '$1 ~ /^ load_msg\+/ { split($3, r, "/"); gsub(/ /, "", $4)
		print $4, r[2] + 0; exit }'
}

# filtered_row NAME ID: PASS NAME when instance ID's load_msg row is the
# FA_COUNT messages of workload fa, short by no more than its misses.
filtered_row() {
	local name=$1 id=$2 rc hits per missed
	ks_stop "$id"
	rc=$?
	read -r hits per <<<"$(msg_hits_per "$(ks_out "$id")")"
	missed=$(ks_misses "$id")
	[ $rc -eq 0 ] && within_misses "$name" "${hits:-x}" "$FA_COUNT" "$missed" &&
		[ "$per" = $((48 + FA_SIZE)) ]
	check $? "$name" "exit $rc; load_msg: ${hits:-no} hits of ${per:-?} bytes requested (want $FA_COUNT of $((48 + FA_SIZE)): none of the $FB_COUNT of $((48 + FB_SIZE)) filtered out); $missed events missed" "$(ks_out "$id")"
}

FILTERS=(comm tid)
cp "$WORKLOAD" "$WORK/kmsfa-wl"
FA_RUN=$WORK/kmsfa-wl
FB_RUN=$WORKLOAD
if [ "$ncpus" -lt 2 ] || ! online_cpus | grep -qx 1; then
	skip stat.filter_cpu "needs CPUs 0 and 1 online"
elif ! command -v taskset >/dev/null; then
	skip stat.filter_cpu "no taskset to pin the workloads to CPUs 0 and 1"
else
	printf '#!/bin/sh\nexec taskset -c 1 "%s" "$@"\n' "$WORK/kmsfa-wl" >"$WORK/fa-pinned"
	printf '#!/bin/sh\nexec taskset -c 0 "%s" "$@"\n' "$WORKLOAD" >"$WORK/fb-pinned"
	chmod +x "$WORK/fa-pinned" "$WORK/fb-pinned"
	FA_RUN=$WORK/fa-pinned
	FB_RUN=$WORK/fb-pinned
	FILTERS+=(cpu)
fi
CG_ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=
if [ -z "$CG_ROOT" ]; then
	skip stat.filter_cgroup "no cgroup v2 hierarchy is mounted"
elif ! mkdir "$CG_ROOT/kmemsnoop-stat.$$" 2>/dev/null; then
	skip stat.filter_cgroup "cannot create a cgroup under $CG_ROOT"
else
	CG=$CG_ROOT/kmemsnoop-stat.$$
	trap 'cleanup; rmdir "$CG" 2>/dev/null' EXIT
fi
if ! WORKLOAD=$FA_RUN wl_start fa msg "$FA_SIZE" "$FA_COUNT" ||
	! WORKLOAD=$FB_RUN wl_start fb msg "$FB_SIZE" "$FB_COUNT"; then
	fail_rest "${FILTERS[@]/#/stat.filter_}" ${CG:+stat.filter_cgroup} "the workloads did not start: $(head -c 200 "$WORK/fa.werr" "$WORK/fb.werr")"
	wl_kill fa
else
	if [ -n "$CG" ]; then
		if echo "${WL_PID[fa]}" >"$CG/cgroup.procs"; then
			FILTERS+=(cgroup)
		else
			skip stat.filter_cgroup "cannot move a process into $CG"
		fi
	fi
	declare -A FILTER_ARGS=([comm]="-c kmsfa-wl" [cpu]="-C 1" [tid]="-t ${WL_PID[fa]}"
		[cgroup]="--cgroup $CG")
	started=()
	for f in "${FILTERS[@]}"; do
		# shellcheck disable=SC2086 # the filter's option and value
		if ks_start "kf$f" --stat --caller -e kmalloc ${FILTER_ARGS[$f]}; then
			started+=("$f")
		else
			fail "stat.filter_$f" "$(ks_start_fail_why "kf$f")"
		fi
	done
	wl_go fa
	wl_go fb
	wl_wait fa || fail stat.workload_filters "the workload failed (status ${WL_RC[fa]})" "$WORK/fa.werr"
	wl_wait fb || fail stat.workload_filters "the workload failed (status ${WL_RC[fb]})" "$WORK/fb.werr"
	for f in "${started[@]}"; do
		filtered_row "stat.filter_$f" "kf$f"
	done
fi

# page_summary FILE: the SUMMARY (page allocator) block, up to order 10, but
# its header row.
page_summary() {
	awk '/^SUMMARY \(page allocator\)/{s = 1} s && !/^Order / {print} s && /^ +10 / {exit}' "$1"
}

if [ $have_perf = 0 ]; then
	skip_rest stat.perf_page_summary stat.replay_page_summary "$why_no_perf"
elif ! wl_start pg pipe 16 + msg-hold 100 1; then
	fail_rest stat.perf_page_summary stat.replay_page_summary "the workload did not start: $(head -c 200 "$WORK/pg.werr")"
elif ! ks_start kp --stat --page -p "${WL_PID[pg]}" ||
	! ks_start kpo -o "$WORK/recpage" -p "${WL_PID[pg]}"; then
	fail_rest stat.perf_page_summary stat.replay_page_summary "kmemsnoop --stat --page, -o: $(ks_start_fail_why kp) $(ks_start_fail_why kpo)"
	wl_kill pg
elif ! perf_start perfpage "${WL_PID[pg]}" --page; then
	skip_rest stat.perf_page_summary stat.replay_page_summary "$why_no_perf"
	ks_stop kp
	ks_stop kpo
	wl_kill pg
else
	wl_go pg
	wait_held pg || fail stat.workload_pages "the workload never said 'held'" "$WORK/pg.werr"
	perf_disable
	ks_stop kp
	ks_stop kpo
	m=$(ks_misses kp)
	mo=$(ks_misses kpo)
	wl_go pg
	wl_wait pg || fail stat.workload_pages "the workload failed (status ${WL_RC[pg]})" "$WORK/pg.werr"
	perf_end perfpage
	LC_ALL=C perf kmem -i "$WORK/perfpage.data" --page stat >"$WORK/perfpage.stat" 2>"$WORK/perfpage.err"
	page_summary "$WORK/perfpage.stat" >"$WORK/perfpage.summary"
	page_summary "$(ks_out kp)" >"$WORK/kp.summary"
	if [ -s "$WORK/perfpage.summary" ] && cmp -s "$WORK/perfpage.summary" "$WORK/kp.summary"; then
		pass stat.perf_page_summary
	elif [ "$m" != 0 ]; then
		skip stat.perf_page_summary "the page SUMMARY differs from perf's, and kmemsnoop's programs missed $m events (any process)"
	else
		fail stat.perf_page_summary "the page SUMMARY differs from perf kmem --page stat's: $(diff "$WORK/perfpage.summary" "$WORK/kp.summary" | grep '^[<>]' | first_lines 4)" "$WORK/perfpage.summary" "$WORK/kp.summary"
	fi
	timeout -k 5 60 "$KMEMSNOOP" -i "$WORK/recpage" --stat --page >"$WORK/replaypage" 2>"$WORK/replaypage.err"
	rc=$?
	page_summary "$WORK/replaypage" >"$WORK/replaypage.summary"
	if [ $rc -eq 0 ] && [ -s "$WORK/perfpage.summary" ] &&
		cmp -s "$WORK/perfpage.summary" "$WORK/replaypage.summary"; then
		pass stat.replay_page_summary
	elif [ $rc -eq 0 ] && [ "$mo" != 0 ]; then
		skip stat.replay_page_summary "the replay's page SUMMARY differs from perf's, and kmemsnoop's programs missed $mo events (any process)"
	else
		fail stat.replay_page_summary "-i --stat --page (status $rc): the page SUMMARY differs from perf kmem --page stat's: $(diff "$WORK/perfpage.summary" "$WORK/replaypage.summary" | grep '^[<>]' | first_lines 4)" "$WORK/replaypage.err" "$WORK/replaypage.summary"
	fi
fi

# Page callers: the frame after the allocators' in a short stack.
if ! wl_start pc pipe "$PIPE_PAGES"; then
	fail stat.page_callers "the workload did not start: $(head -c 200 "$WORK/pc.werr")"
elif ! ks_start kc --stat --page --caller -p "${WL_PID[pc]}"; then
	fail stat.page_callers "kmemsnoop --stat --page --caller: $(ks_start_fail_why kc)"
	wl_kill pc
else
	wl_run pc || fail stat.workload_pipe "the workload failed (status ${WL_RC[pc]})" "$WORK/pc.werr"
	ks_stop kc
	# The caller table's rows: "KB | hits | order | migtype | gfp | callsite"
	# (perf's abbreviated GFP flags have "|" in them too: "HU|AC").
	awk -F'|' '/ Callsite$/ {t++; next} t == 1 && NF >= 6 {
		for (i = 1; i <= NF; i++) gsub(/^ +| +$/, "", $i); print $2, $3, $NF }' \
		"$(ks_out kc)" >"$WORK/pc.rows"
	hits=$(awk '$3 ~ /pipe_write$/ && $2 == 0 { h += $1 } END { print h + 0 }' "$WORK/pc.rows")
	allocators=$(awk '$3 ~ /^_*(alloc_pages|alloc_frozen_pages|folio_alloc|get_free_pages)|_noprof$/ { print $3 }' "$WORK/pc.rows" | sort -u | tr '\n' ' ')
	within_misses stat.page_callers "$hits" "$PIPE_PAGES" "$(ks_misses kc)" && [ -z "$allocators" ]
	check $? stat.page_callers "$hits order-0 pages under *pipe_write ($PIPE_PAGES one-page pipe writes); rows naming an allocator: '$allocators'; the rows: $(first_lines 6 <"$WORK/pc.rows")" "$(ks_out kc)"
fi

# Held messages: alive while held, then lifetimes of at least HOLD.
if ! wl_start h msg-hold "$HOLD_SIZE" "$HOLD_COUNT"; then
	fail_rest stat.alive stat.lifetime "the workload did not start: $(head -c 200 "$WORK/h.werr")"
	finish
fi
PID=${WL_PID[h]}
ks_start ka --stat --caller -l 1000 -p "$PID" || fail_rest stat.alive "kmemsnoop: $(ks_start_fail_why ka)"
ks_start kl --stat --caller -l 1000 -c "${WORKLOAD##*/}" ||
	fail_rest stat.lifetime "kmemsnoop: $(ks_start_fail_why kl)"
wl_go h
if ! wait_held h; then
	wl_kill h
	fail_rest stat.alive stat.lifetime "the workload never said 'held'"
	finish
fi
if [ -z "${REPORTED[stat.alive]}" ]; then
	ks_stop ka
	row=$(awk -v n=" load_msg+" '/^LIFETIMES per call site/{t = 1} t && index($0, n) == 1 && / \| /' "$(ks_out ka)" | head -n1)
	alive=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $3); print $3}')
	[ "$alive" = "$HOLD_COUNT" ]
	check $? stat.alive "the load_msg lifetime row says '$alive' alive while $HOLD_COUNT are held: '$row'" "$(ks_out ka)"
fi
"$WORKLOAD" msg "$HOLD_SIZE" "$QUICK_COUNT" >"$WORK/quick.out" 2>&1 ||
	fail_rest stat.lifetime "the quick messages failed: $(head -c 200 "$WORK/quick.out")"
sleep "$HOLD"
wl_go h
wl_wait h || fail stat.workload_hold "the workload failed (status ${WL_RC[h]})" "$WORK/h.werr"
if [ -z "${REPORTED[stat.lifetime]}" ]; then
	ks_stop kl
	# The histogram lines under " load_msg+...: N freed": "FROM -> TO : COUNT |...|",
	# as "FROM COUNT TO".
	awk '/^ load_msg\+[0-9a-f]+: [0-9]+ freed$/ {h = 1; next} h && /^$/ {h = 0}
	h && / -> / { print $1, $5, $3 }' "$(ks_out kl)" >"$WORK/life"
	total=$(awk '{t += $2} END {print t + 0}' "$WORK/life")
	# Bucket bounds print as "N.Nns", "us", "ms" or "s" (rounded: 5% slack): in
	# ns.  No "^": the VMs' busybox awk has no math library.
	to_ns='function ns(v) { if (v ~ /ns$/) return v + 0; if (v ~ /us$/) return v * 1e3
		if (v ~ /ms$/) return v * 1e6; return v * 1e9 }'
	quick=$(awk "$to_ns"' $2 > 0 && ns($3) <= 134217728 * 1.05 {t += $2} END {print t + 0}' "$WORK/life")
	held=$(awk "$to_ns"' $2 > 0 && ns($1) >= 1073741824 * 0.95 && ns($3) <= 4294967296 * 1.05 {t += $2}
		END {print t + 0}' "$WORK/life")
	# The row's p50 and p99 columns, "... | p50 < | p99 <".
	row=$(awk -v n=" load_msg+" '/^LIFETIMES per call site/{t = 1} t && index($0, n) == 1 && / \| /' "$(ks_out kl)" | head -n1)
	read -r p50 p99 <<<"$(echo "$row" | awk -F'|' '{gsub(/ /, "", $5); gsub(/ /, "", $6); print $5, $6}')"
	p50_ok=$(awk "$to_ns"' BEGIN { print (ns(ARGV[1]) <= 134217728 * 1.05) }' "$p50")
	[ "$total" = $((HOLD_COUNT + QUICK_COUNT)) ] && [ "$quick" = "$QUICK_COUNT" ] &&
		[ "$held" = "$HOLD_COUNT" ] && [ "$p50_ok" = 1 ] && { [ "$p99" = 2.1s ] || [ "$p99" = 4.3s ]; }
	check $? stat.lifetime "$total load_msg lifetimes ($((HOLD_COUNT + QUICK_COUNT)) expected), $quick below 2^27 ns ($QUICK_COUNT sent at once), $held from 2^30 to 2^32 ns ($HOLD_COUNT held $HOLD s); p50 < $p50, p99 < $p99: $(tr '\n' ';' <"$WORK/life")" "$(ks_out kl)"
fi
finish
