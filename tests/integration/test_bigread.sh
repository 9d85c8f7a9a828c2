#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# -i reads a recording of any size in bounded memory, and shows its
# progress on a terminal.  A recording several times larger than a memory
# cgroup's limit is made under load, then read in full inside the cgroup:
#   bigread.record           the recording is BIGREAD_MIB (200) MiB or more,
#                            at least 4 times the limit (48 MiB)
#   bigread.complete         kmemsnoop -i in the cgroup exits 0 and prints a
#                            line for every allocation and free record of
#                            the cpu files (counted by tests/recwalk)
#   bigread.memory           it was not OOM-killed (the cgroup's oom_kill
#                            count is 0); what the cgroup peaked at is shown
#   bigread.progress         in a terminal (tmux), with stdout elsewhere, a
#                            "kmemsnoop: checking|reading N of M MiB (P%),
#                            R records/s" line is on screen while it reads
#   bigread.progress_cleared when it is done, no progress line is left
#   bigread.no_progress      with stderr in a file, the file has no
#                            progress (no "MiB", no carriage return)
#   bigread.no_progress_same_tty  with stdout on the terminal too (--stat),
#                            no progress line ever reaches it
# The cgroup is v2 where it has the memory controller, else v1's memory
# cgroup; without either the memory tests SKIP, saying why.
#
# vmtest: host only: -i's reader is user space, the same on every kernel; the
#   recording it needs is larger than the VMs' memory.
. "$(dirname "$0")/../lib.sh"

TESTS=(bigread.record bigread.complete bigread.memory bigread.progress
	bigread.progress_cleared bigread.no_progress bigread.no_progress_same_tty)

require_root
require_kmemsnoop
require_workload

# The limit leaves room for what -i needs whatever the recording's size:
# about 12 MiB of its own, and the output writer's buffers when stdout is
# a pipe (outwriter.h; 30 MiB resident in all, seen on x86 6.18).
LIMIT_MIB=${BIGREAD_LIMIT_MIB:-48}
BIGREAD_MIB=${BIGREAD_MIB:-$((4 * LIMIT_MIB + 8))}
RECWALK=${RECWALK:-$TOP/tests/recwalk}
DIR=$WORK/big

# ---------------------------------------------------------------- the recording

# cpu_bytes: what the recording's cpu files hold together.
cpu_bytes() {
	local f total=0 size
	for f in "$DIR"/cpu*; do
		[ -f "$f" ] || continue
		size=$(stat -c %s "$f" 2>/dev/null) || continue
		total=$((total + size))
	done
	echo "$total"
}

# make_recording: kmemsnoop -o while two workloads open and close files
# (on 2 CPUs about 100 MiB a second), until the files hold BIGREAD_MIB.
make_recording() {
	local want=$((BIGREAD_MIB << 20)) end=$((SECONDS + 60)) load=() pid
	ks_start rec -o "$DIR" || return 1
	for _ in 1 2; do
		"$WORKLOAD" openclose 100000000 >/dev/null 2>&1 &
		load+=($!)
		BG_PIDS+=($!)
	done
	while [ "$(cpu_bytes)" -lt "$want" ] && [ $SECONDS -lt $end ]; do
		nap 0.2
	done
	for pid in "${load[@]}"; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	ks_stop rec
}

if ! make_recording; then
	fail_rest "${TESTS[@]}" "kmemsnoop -o did not record: status ${KS_RC[rec]}: $(head -c 300 "$(ks_err rec)" | tr '\n' ' ')"
	finish
fi
BYTES=$(cpu_bytes)
[ "$BYTES" -ge $((BIGREAD_MIB << 20)) ] && [ "$BYTES" -ge $((4 * LIMIT_MIB << 20)) ]
if ! check $? bigread.record "the cpu files hold $((BYTES >> 20)) MiB, want $BIGREAD_MIB MiB and 4 times the limit of $LIMIT_MIB MiB"; then
	fail_rest "${TESTS[@]:1}" "no recording large enough to read"
	finish
fi
CPU_FILES=("$DIR"/cpu*)
echo "# recording: $((BYTES >> 20)) MiB in ${#CPU_FILES[@]} cpu files"

# The records -i must print: allocations and frees (recwalk's EVENTS column),
# else what an unrestricted run prints.
if [ -x "$RECWALK" ]; then
	WANT=$("$RECWALK" "${CPU_FILES[@]}" | awk '$2 != "bad" { n += $3 } END { print n + 0 }')
else
	WANT=$("$KMEMSNOOP" -i "$DIR" 2>/dev/null | grep -vc '^#')
fi

# ---------------------------------------------------------------- the memory cgroup

if ! memcg_create bigread; then
	skip_rest bigread.complete bigread.memory "$MEMCG_WHY"
elif ! memcg_limit $((LIMIT_MIB << 20)); then
	skip_rest bigread.complete bigread.memory "cannot limit $MEMCG to $LIMIT_MIB MiB"
else
	# Only kmemsnoop in the cgroup; the counting grep outside.
	timeout -k 5 120 sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" -i "$3"' sh \
		"$MEMCG" "$KMEMSNOOP" "$DIR" 2>"$WORK/limited.err" </dev/null |
		grep -vc '^#' >"$WORK/limited.count"
	rc=${PIPESTATUS[0]}
	got=$(cat "$WORK/limited.count")
	[ "$rc" -eq 0 ] && [ "$got" -eq "$WANT" ]
	check $? bigread.complete "status $rc, $got lines for $WANT records ($(head -c 200 "$WORK/limited.err" | tr '\n' ' '))" "$WORK/limited.err"
	kills=$(memcg_oom_kills)
	peak=$(memcg_peak)
	[ -n "$peak" ] && echo "# cgroup v$MEMCG_V peak: $((peak >> 20)) MiB of the $LIMIT_MIB MiB limit (page cache included)"
	[ "$kills" -eq 0 ] && [ "$rc" -ne 137 ] && { [ -z "$peak" ] || [ "$peak" -le $((LIMIT_MIB << 20)) ]; }
	check $? bigread.memory "oom_kill $kills, status $rc, peak ${peak:-unknown} bytes against a limit of $LIMIT_MIB MiB"
fi

# ---------------------------------------------------------------- progress

"$KMEMSNOOP" -i "$DIR" >/dev/null 2>"$WORK/quiet.err"
rc=$?
[ $rc -eq 0 ] && ! grep -q 'MiB' "$WORK/quiet.err" && ! grep -q $'\r' "$WORK/quiet.err"
check $? bigread.no_progress "status $rc, stderr in a file: '$(head -c 200 "$WORK/quiet.err" | tr '\r\n' '||')'"

if ! command -v tmux >/dev/null; then
	skip_rest bigread.progress bigread.progress_cleared bigread.no_progress_same_tty \
		"tmux is not installed (tools/install-deps.sh installs it)"
	finish
fi

PROGRESS_LINE='/kmemsnoop: (checking|reading) [0-9]+\.[0-9] of [0-9]+\.[0-9] MiB \([0-9]+%\), [0-9.]+[kM]? records\/s/'

tmux_start big 120 12
case $? in
2) skip_all "tmux cannot start a session" ;;
1)
	fail_rest bigread.progress bigread.progress_cleared bigread.no_progress_same_tty \
		"the shell in tmux did not start: $(describe_screen tail 6)"
	finish
	;;
esac

# stdout into a FIFO that is drained only once the progress line is on
# screen: kmemsnoop waits on its output meanwhile, its line on the screen.
# Both ends of go.fifo held here: saying go never waits for the reader.
mkfifo "$WORK/out.fifo" "$WORK/go.fifo"
exec {GO_FD}<>"$WORK/go.fifo"
{ read -r _ <"$WORK/go.fifo"; cat >/dev/null; } <"$WORK/out.fifo" &
BG_PIDS+=($!)
tm send-keys -t big "clear; '$KMEMSNOOP' -i '$DIR' >'$WORK/out.fifo'; echo EXIT=\$?" Enter
wait_screen 30 "$PROGRESS_LINE"' { ok = 1 } END { exit !ok }'
check $? bigread.progress "no progress line on screen: $(describe_screen tail 6)"
echo go >&"$GO_FD"
wait_screen 60 '/^EXIT=/ { rc = $0 } '"$PROGRESS_LINE"' { left = 1 } END { exit !(rc == "EXIT=0" && !left) }'
check $? bigread.progress_cleared "at the end: $(describe_screen tail 6)"

# stdout on the terminal too: what reaches the terminal, all of it.
tm pipe-pane -t big -o "cat >>'$WORK/pane.raw'"
tm send-keys -t big "clear; '$KMEMSNOOP' -i '$DIR' --stat; echo EXIT=\$?" Enter
wait_screen 60 '/^EXIT=/ { rc = $0 } END { exit !(rc == "EXIT=0") }'
rc=$?
tm pipe-pane -t big
[ $rc -eq 0 ] && ! grep -q 'records/s' "$WORK/pane.raw"
check $? bigread.no_progress_same_tty "$(grep -c 'records/s' "$WORK/pane.raw") progress line(s) among the table's: $(describe_screen tail 6)"

finish
