#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make soak: kmemsnoop under a long mixed allocation load (docs/SOAK.md).
#
# For SOAK_SECONDS (default 600) stress-ng's vm and malloc stressors run
# without a break and its fork stressor in rounds, all in a cgroup of
# their own, together with "workload msg-rounds", which makes a known
# number of SysV message allocations.  Meanwhile three kmemsnoop
# instances run from before the load starts to after it ends:
#   stream     -o DIR (default ring size), the load's cgroup only
#   hist       --hist 5, the whole machine
#   allocinfo  --allocinfo 5, the whole machine
# and a tracefs instance records the workload's own events as the kernel
# sees them (the oracle).  Results:
#   soak.load              the load ran: stress-ng and the workload ended well
#   soak.rss.ID            the instance's resident memory levelled off
#   soak.lost              no record lost, or the losses are the same in the
#                          summary, its per-CPU lines and the recording
#   soak.recording         kmemsnoop -i DIR reads the recording completely:
#                          every line parses, as many as the summary wrote
#   soak.workload.known    the recording holds the workload's messages:
#                          rounds x COUNT load_msg kmallocs and free_msg kfrees
#   soak.workload.oracle   the recording's events of the workload, per event,
#                          are the tracefs instance's
#   soak.bpf_gone.ID       no BPF program, map or link the instance held
#                          remains after it has exited
#   soak.exit.ID           SIGINT ends the instance with status 0 and its
#                          summary
# Ends with "N passed, N failed, N skipped"; exit status 1 on a failure.
#
# Environment: SOAK_SECONDS, SOAK_SAMPLE (seconds between RSS samples,
# default 3), SOAK_RSS_MARGIN_KB and SOAK_RSS_MARGIN_PCT (soak.rss), and
# those of tests/lib.sh (KEEP_TMP=1, VERBOSE=1, TMPDIR: the recording is
# written there, about 3 MB per second of soak).
# Stopping drains the rings and writes the last tables: give it time on a
# busy machine.  The oracle's buffer is drained as it fills (trace_pipe).
KS_STOP_TIMEOUT=${KS_STOP_TIMEOUT:-120}
ORACLE_BUF_KB=${ORACLE_BUF_KB:-8192}
. "$(dirname "$0")/lib.sh"

SOAK_SECONDS=${SOAK_SECONDS:-600}
SOAK_SAMPLE=${SOAK_SAMPLE:-3}
# soak.rss: the largest sample of the second half of the run may exceed
# the largest of the first half by this much, and no more: the greater of
# SOAK_RSS_MARGIN_KB and SOAK_RSS_MARGIN_PCT percent of the first half's.
# What each instance holds is bounded once it has seen the load for a
# while (docs/SOAK.md): the rings' pages of -o are all resident once every
# ring has wrapped, the --hist and --allocinfo tables are sized by their
# BPF maps' capacity (--hist-keys; 8192 call sites plus --max-stacks page
# stacks) and the site cache of --allocinfo describes each key once.  What
# may still come late is small: a call site first seen in the second half,
# allocator slack.  A leak per event or per interval outgrows any margin.
SOAK_RSS_MARGIN_KB=${SOAK_RSS_MARGIN_KB:-2048}
SOAK_RSS_MARGIN_PCT=${SOAK_RSS_MARGIN_PCT:-10}
# The load.  Continuous: a 32 MiB vm stressor pausing a second between
# its passes (page allocations and frees in bursts) and a malloc stressor
# of up to 32 blocks of up to 16 KiB (brk/mmap, page faults); in rounds: a
# fork stressor of 50 forks then a pause of FORK_PAUSE seconds (a new
# stress-ng each round: exec, exit, every task structure).  Together about
# 30-60k events a second, which keeps the recording to a few MB a second.
STRESS_ARGS=(--vm 1 --vm-bytes 32M --vm-hang 1 --malloc 1 --malloc-bytes 16K --malloc-max 32)
FORK_ARGS=(--fork 1 --fork-ops 50)
FORK_PAUSE=2
# The workload: rounds of MSG_COUNT messages of MSG_SIZE bytes, each one
# load_msg kmalloc of 48 + MSG_SIZE bytes freed by free_msg (tests/workload.c).
MSG_SIZE=200
MSG_COUNT=20
IDS=(stream hist allocinfo)

TESTS=(soak.load)
for id in "${IDS[@]}"; do TESTS+=("soak.rss.$id"); done
TESTS+=(soak.lost soak.recording soak.workload.known soak.workload.oracle)
for id in "${IDS[@]}"; do TESTS+=("soak.bpf_gone.$id" "soak.exit.$id"); done

SKIPPED=0
skip() {
	SKIPPED=$((SKIPPED + 1))
	REPORTED[$1]=1
	echo "SKIP: $1: $2"
}

# The closing line, then lib.sh's finish (exit 1 on a failure).
soak_finish() {
	local t
	for t in "${TESTS[@]}"; do
		[ -n "${REPORTED[$t]}" ] || fail "$t" "not reported by soak.sh (a bug in the test)"
	done
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	finish
}

note() { echo "# $*"; }

# ---------------------------------------------------------------- the cgroup

CG=
# cg_setup: a fresh cgroup v2 directory for the load (CG), so that the
# recording holds the soak's own allocations and not the machine's (other
# users' tests, on a shared machine).  None: the recording is machine-wide.
cg_setup() {
	local root
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$root" ] || return 1
	mkdir "$root/kmemsnoop-soak.$$" 2>/dev/null || return 1
	CG="$root/kmemsnoop-soak.$$"
}

# cg_kill: end whatever is still in our cgroup (only the soak's own
# processes are there) and remove it.
cg_kill() {
	local pid procs tries=0
	[ -n "$CG" ] && [ -d "$CG" ] || return 0
	# cgroup.procs says size 0 whatever it holds: read it.
	while procs=$(cat "$CG/cgroup.procs" 2>/dev/null) && [ -n "$procs" ] && [ $tries -lt 50 ]; do
		for pid in $procs; do
			kill -KILL "$pid" 2>/dev/null
		done
		sleep 0.1
		tries=$((tries + 1))
	done
	rmdir "$CG" 2>/dev/null
}

soak_cleanup() {
	touch "$WORK/rss.stop" 2>/dev/null
	cg_kill
	cleanup
}
trap soak_cleanup EXIT

# cg_join: move this (sub)shell into the cgroup, if there is one.
cg_join() {
	[ -z "$CG" ] || echo "$BASHPID" >"$CG/cgroup.procs"
}

# ---------------------------------------------------------------- the load

# run_load: the stress-ng load for SOAK_SECONDS, in the cgroup; status 0
# when every stress-ng ended with status 0.  $WORK/load.rounds: the number
# of fork rounds.
run_load() {
	local end=$((SECONDS + SOAK_SECONDS)) main rc=0 rounds=0
	cg_join || return 1
	stress-ng "${STRESS_ARGS[@]}" --timeout "${SOAK_SECONDS}s" --metrics-brief \
		>"$WORK/stress.log" 2>&1 &
	main=$!
	while [ $SECONDS -lt $end ]; do
		stress-ng "${FORK_ARGS[@]}" --timeout 60s >>"$WORK/fork.log" 2>&1 || rc=1
		rounds=$((rounds + 1))
		sleep "$FORK_PAUSE"
	done
	wait "$main" || rc=1
	echo "$rounds" >"$WORK/load.rounds"
	return $rc
}

# ---------------------------------------------------------------- the oracle

PIPE_PID=
# oracle_follow PID: a tracefs instance on the six kmem events of PID,
# read through trace_pipe into $WORK/o.trace as it fills (a run of any
# length fits).  Status 1 (ORACLE_ERR) when it cannot be set up.
oracle_follow() {
	oracle_start o "$1" || return 1
	cat "${ORACLE_DIR[o]}/trace_pipe" >"$WORK/o.trace" 2>/dev/null &
	PIPE_PID=$!
	BG_PIDS+=("$PIPE_PID")
}

# oracle_drain: stop tracing, let the reader empty the buffer, stop it and
# check that the instance lost nothing.  Status 1 (ORACLE_ERR) otherwise.
oracle_drain() {
	local inst=${ORACLE_DIR[o]} end=$((SECONDS + 30)) left f v lost=0
	echo 0 >"$inst/tracing_on"
	while :; do
		left=$(awk '$1 == "entries:" { n += $2 } END { print n + 0 }' "$inst"/per_cpu/cpu*/stats)
		[ "$left" = 0 ] && break
		[ $SECONDS -ge $end ] && break
		sleep 0.2
	done
	kill "$PIPE_PID" 2>/dev/null
	wait "$PIPE_PID" 2>/dev/null
	# Whatever the reader had not taken yet (nothing, normally).
	grep -v '^#' "$inst/trace" >>"$WORK/o.trace"
	for f in "$inst"/per_cpu/cpu*/stats; do
		for v in $(awk -F': *' '$1 == "overrun" || $1 == "commit overrun" || $1 == "dropped events" { print $2 }' "$f"); do
			[ "$v" = 0 ] || lost=1
		done
	done
	oracle_remove o
	if [ $lost = 1 ]; then
		ORACLE_ERR="the tracefs instance overran (raise ORACLE_BUF_KB)"
		return 1
	fi
}

# ---------------------------------------------------------------- samples

# rss_sampler: every SOAK_SAMPLE seconds, "SECONDS ID KB" lines in
# $WORK/rss (VmRSS of each instance) until $WORK/rss.stop exists.
rss_sampler() {
	local t0=$SECONDS id kb
	while [ ! -e "$WORK/rss.stop" ]; do
		for id in "${IDS[@]}"; do
			kb=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/${KS_PID[$id]}/status" 2>/dev/null)
			[ -n "$kb" ] && echo "$((SECONDS - t0)) $id $kb" >>"$WORK/rss"
		done
		sleep "$SOAK_SAMPLE"
	done
}

# rss_figures ID: "N FIRST FIRST_MAX LAST_MAX LAST" over its samples: the
# first half of the run is the samples before half the last sample's time.
rss_figures() {
	awk -v id="$1" 'BEGIN { n = 0 } $2 == id { t[n] = $1; kb[n] = $3; n++ }
	END {
		if (n < 4) { print n + 0; exit }
		half = t[n - 1] / 2
		for (i = 0; i < n; i++) {
			if (t[i] < half) { if (kb[i] > a) a = kb[i] }
			else if (kb[i] > b) b = kb[i]
		}
		print n, kb[0], a, b, kb[n - 1]
	}' "$WORK/rss"
}

check_rss() {
	local id=$1 n first a b last margin
	read -r n first a b last <<<"$(rss_figures "$id")"
	if [ "$n" -lt 4 ]; then
		fail "soak.rss.$id" "only $n VmRSS samples (the instance ended early?)"
		return
	fi
	margin=$((a * SOAK_RSS_MARGIN_PCT / 100))
	[ "$margin" -lt "$SOAK_RSS_MARGIN_KB" ] && margin=$SOAK_RSS_MARGIN_KB
	note "rss $id: $n samples, first $first kB, max first half $a kB, max second half $b kB, last $last kB (margin $margin kB)"
	[ "$b" -le $((a + margin)) ]
	check $? "soak.rss.$id" "VmRSS still grows: max $b kB in the second half, $a kB in the first (margin $margin kB)"
}

# ---------------------------------------------------------------- BPF objects

# bpf_ids ID: the BPF objects the running instance holds (lib.sh's
# bpf_ids) in $WORK/ID.ids.
soak_bpf_ids() {
	bpf_ids "${KS_PID[$1]}" >"$WORK/$1.ids"
}

check_gone() {
	local id=$1 left
	if [ ! -x "$BPFTOOL" ]; then
		skip "soak.bpf_gone.$id" "no bpftool to look objects up by id"
		return
	fi
	if [ ! -s "$WORK/$id.ids" ]; then
		fail "soak.bpf_gone.$id" "no prog_id/map_id found in the instance's fdinfo while it ran"
		return
	fi
	left=$(bpf_still_there "$WORK/$id.ids" 10 | tr '\n' ' ')
	[ -z "$left" ]
	check $? "soak.bpf_gone.$id" "still there after exit: $left(of $(wc -l <"$WORK/$id.ids") objects)"
}

# ---------------------------------------------------------------- exits

# The summary line each mode prints on stderr when it ends.
declare -A SUMMARY=(
	[stream]='^kmemsnoop: [0-9]+ events written, [0-9]+ lost \([0-9]+ bytes\)$'
	[hist]='^kmemsnoop: [0-9]+ allocations \([0-9]+ failed\), [0-9]+ frees in '
	[allocinfo]='^kmemsnoop: [0-9]+ call sites or stacks$'
)

check_exit() {
	local id=$1 rc=$2 err
	err=$(ks_err "$id")
	if [ "$rc" -ne 0 ]; then
		fail "soak.exit.$id" "status $rc after SIGINT" "$err"
	elif ! grep -Eq "${SUMMARY[$id]}" "$err"; then
		fail "soak.exit.$id" "no summary line on stderr: '$(tail -n 2 "$err" | first_lines 2)'" "$err"
	elif grep -v '^kmemsnoop: ' "$err" | grep -q .; then
		fail "soak.exit.$id" "stderr has lines not starting with 'kmemsnoop: ': '$(grep -v '^kmemsnoop: ' "$err" | first_lines 2)'"
	else
		pass "soak.exit.$id"
	fi
}

# ---------------------------------------------------------------- recording

# read_back: kmemsnoop -i on the recording, counted as it streams (the
# text would be several times the recording): into $WORK/rec.counts
#   events N / bad N / load_msg N / free_msg N / ev.EVENT N
# (the last three for the workload's task only); the first lines that do
# not parse in $WORK/rec.bad.  Status: kmemsnoop's.
read_back() {
	local rc
	"$KMEMSNOOP" -i "$WORK/rec" 2>"$WORK/readback.err" |
		awk -v w="$WPID" -v req=$((48 + MSG_SIZE)) -v badf="$WORK/rec.bad" '
		/^#/ || /^[ \t]*$/ { next }
		{
			n++
			rest = substr($0, 32)
			split(rest, f, " ")
			# "%16s-%-7d [%03d] %5llu.%06llu: %s: %s"
			if (substr($0, 17, 1) != "-" || substr($0, 25, 2) != " [" ||
			    f[1] !~ /^[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]:$/ || f[2] !~ /^[a-z_]+:$/) {
				if (bad++ < 3) print > badf
				next
			}
			if (substr($0, 18, 7) + 0 != w) next
			comm = substr($0, 1, 16)
			sub(/^ +/, "", comm)
			if (comm != "workload") next
			ev = substr(f[2], 1, length(f[2]) - 1)
			sub(/_node$/, "", ev)
			cnt[ev]++
			if (ev == "kmalloc" && f[3] ~ /^call_site=load_msg\+/ && index(rest, " bytes_req=" req " "))
				lm++
			if (ev == "kfree" && f[3] ~ /^call_site=free_msg\+/)
				fm++
		}
		END {
			print "events", n + 0
			print "bad", bad + 0
			print "load_msg", lm + 0
			print "free_msg", fm + 0
			for (e in cnt) print "ev." e, cnt[e]
		}' >"$WORK/rec.counts"
	rc=${PIPESTATUS[0]}
	return "$rc"
}

counted() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$WORK/rec.counts"; }

# oracle_counts: "EVENT N" per event of the tracefs instance's trace.
oracle_counts() {
	awk 'match($0, / [0-9]+\.[0-9]+: [a-z_]+: /) {
		e = substr($0, RSTART, RLENGTH)
		sub(/^ [0-9.]+: /, "", e)
		sub(/: $/, "", e)
		sub(/_node$/, "", e)
		n[e]++
	}
	END { for (e in n) print e, n[e] }' "$WORK/o.trace"
}

# ================================================================= the run

require_root
require_kmemsnoop
require_workload
command -v stress-ng >/dev/null || skip_all "stress-ng is not installed (tools/install-deps.sh)"
HAVE_TRACEFS=1
tracefs_setup || HAVE_TRACEFS=0

if cg_setup; then
	SCOPE=(--cgroup "$CG")
else
	SCOPE=()
	note "no cgroup v2 directory could be made: the -o recording is machine-wide"
fi
note "soak of ${SOAK_SECONDS}s, RSS sampled every ${SOAK_SAMPLE}s; scratch $WORK"

declare -A ARGS=(
	[stream]="-o $WORK/rec"
	[hist]="--hist 5"
	[allocinfo]="--allocinfo 5"
)
for id in "${IDS[@]}"; do
	extra=()
	[ "$id" = stream ] && extra=("${SCOPE[@]}")
	# shellcheck disable=SC2086
	if ! ks_start "$id" ${ARGS[$id]} "${extra[@]}"; then
		fail_rest "${TESTS[@]}" "kmemsnoop ${ARGS[$id]}: $(ks_start_fail_why "$id")"
		soak_finish
	fi
done
rss_sampler &
SAMPLER=$!
BG_PIDS+=("$SAMPLER")

# The workload, held at its start, moved into the cgroup, followed by the
# oracle, then let go with the load.
if ! wl_start w msg-rounds "$SOAK_SECONDS" "$MSG_SIZE" "$MSG_COUNT"; then
	fail_rest "${TESTS[@]}" "the workload did not start: $(head -c 200 "$WORK/w.werr")"
	soak_finish
fi
WPID=${WL_PID[w]}
[ -z "$CG" ] || echo "$WPID" >"$CG/cgroup.procs"
ORACLE_OK=0
if [ $HAVE_TRACEFS = 1 ]; then
	if oracle_follow "$WPID"; then ORACLE_OK=1; else ORACLE_WHY=$ORACLE_ERR; fi
else
	ORACLE_WHY="no tracefs with kmem events at $TRACEFS"
fi

T0=$SECONDS
run_load &
LOAD=$!
BG_PIDS+=("$LOAD")
wl_go w
wait "$LOAD"
LOAD_RC=$?
WL_TIMEOUT=$((SOAK_SECONDS + 120))
wl_wait w
WL_STATUS=$?
ROUNDS=$(wl_field w rounds)
note "load ran $((SECONDS - T0))s: $(cat "$WORK/load.rounds" 2>/dev/null || echo 0) fork rounds, $ROUNDS workload rounds"
if [ "$LOAD_RC" -ne 0 ]; then
	fail soak.load "stress-ng failed: $(grep -h -m2 -E 'error|fail' "$WORK/stress.log" "$WORK/fork.log" | first_lines 2)" \
		"$WORK/stress.log" "$WORK/fork.log"
elif [ "$WL_STATUS" -ne 0 ] || [ -z "$ROUNDS" ] || [ "$ROUNDS" -eq 0 ]; then
	fail soak.load "the workload failed (status $WL_STATUS, rounds '${ROUNDS}'): $(head -c 200 "$WORK/w.werr")"
else
	pass soak.load
fi
ROUNDS=${ROUNDS:-0}
if [ $ORACLE_OK = 1 ] && ! oracle_drain; then
	ORACLE_OK=0
	ORACLE_WHY=$ORACLE_ERR
fi

# A last sample after the load, then stop.
sleep "$SOAK_SAMPLE"
touch "$WORK/rss.stop"
wait "$SAMPLER"

for id in "${IDS[@]}"; do
	soak_bpf_ids "$id"
done
for id in "${IDS[@]}"; do
	ks_stop "$id"
	check_exit "$id" "${KS_RC[$id]}"
done
for id in "${IDS[@]}"; do
	check_rss "$id"
done
for id in "${IDS[@]}"; do
	check_gone "$id"
done

# ---- (b) losses: the summary, its per-CPU lines, the recording's files
# and what -i says must tell one story.
read -r WRITTEN LOST LOST_BYTES <<<"$(ks_summary stream || echo "- - -")"
MISSES=$(cat "$WORK/stream.misses" 2>/dev/null || echo 0)
note "stream: $WRITTEN events written, $LOST lost ($LOST_BYTES bytes), $MISSES missed (BPF recursion); recording $(du -sh "$WORK/rec" 2>/dev/null | cut -f1)"
read_back
READ_RC=$?
if [ "$WRITTEN" = - ]; then
	fail soak.lost "no summary line from the -o instance" "$(ks_err stream)"
else
	cpu_lost=$(sed -n 's/^kmemsnoop: cpu [0-9]* lost \([0-9]*\) events.*/\1/p' "$(ks_err stream)" |
		awk '{ n += $1 } END { print n + 0 }')
	file_lost=$(cat "$WORK/rec/total_overrun_events" 2>/dev/null || echo missing)
	file_bytes=$(cat "$WORK/rec/total_overruns" 2>/dev/null || echo missing)
	said=$(sed -n 's/^kmemsnoop: this trace lost \([0-9]*\) events (\([0-9]*\) bytes) when recorded$/\1 \2/p' "$WORK/readback.err")
	want_said=
	[ "$LOST" = 0 ] || want_said="$LOST $LOST_BYTES"
	if [ "$cpu_lost" != "$LOST" ] || [ "$file_lost" != "$LOST" ] ||
		[ "$file_bytes" != "$LOST_BYTES" ] || [ "$said" != "$want_said" ]; then
		fail soak.lost "losses disagree: summary $LOST ($LOST_BYTES bytes), per-CPU lines $cpu_lost, total_overrun_events $file_lost, total_overruns $file_bytes, -i says '${said}'"
	else
		[ "$LOST" = 0 ] || note "soak.lost: $LOST events lost at the default ring size, counted alike everywhere"
		pass soak.lost
	fi
fi

# ---- (c) the recording read back, and the workload's events in it.
events=$(counted events)
bad=$(counted bad)
extra_err=$(grep -v '^kmemsnoop: this trace lost ' "$WORK/readback.err" | first_lines 2)
if [ "$READ_RC" -ne 0 ]; then
	fail soak.recording "kmemsnoop -i exited with status $READ_RC: $extra_err"
elif [ -n "$extra_err" ]; then
	fail soak.recording "kmemsnoop -i said: $extra_err"
elif [ "$bad" -ne 0 ]; then
	fail soak.recording "$bad lines do not parse, e.g. '$(head -n1 "$WORK/rec.bad")'"
elif [ "$events" != "$WRITTEN" ]; then
	fail soak.recording "read back $events events, the summary says $WRITTEN written"
else
	pass soak.recording
fi

want=$((ROUNDS * MSG_COUNT))
lm=$(counted load_msg)
fm=$(counted free_msg)
note "workload $WPID: $ROUNDS rounds x $MSG_COUNT messages: load_msg kmallocs $lm, free_msg kfrees $fm (want $want)"
if [ "$want" -eq 0 ]; then
	fail soak.workload.known "the workload made no round"
elif [ "$lm" -eq "$want" ] && [ "$fm" -eq "$want" ]; then
	pass soak.workload.known
elif [ "$LOST" != 0 ] && [ "$lm" -le "$want" ] && [ "$fm" -le "$want" ] &&
	[ $((2 * want - lm - fm)) -le "$LOST" ]; then
	note "soak.workload.known: $((2 * want - lm - fm)) short, within the $LOST lost"
	pass soak.workload.known
else
	fail soak.workload.known "load_msg kmallocs of $((48 + MSG_SIZE)) bytes $lm, free_msg kfrees $fm: want $want each (lost $LOST)"
fi

if [ $ORACLE_OK = 0 ]; then
	if [ $HAVE_TRACEFS = 0 ]; then
		skip soak.workload.oracle "$ORACLE_WHY"
	else
		fail soak.workload.oracle "tracefs oracle: $ORACLE_WHY"
	fi
else
	oracle_counts >"$WORK/o.counts"
	allowed=$((MISSES + ${LOST/-/0}))
	diffs=
	short=0
	for e in $KMEM_EVENTS; do
		o=$(awk -v e="$e" '$1 == e { print $2 }' "$WORK/o.counts")
		k=$(counted "ev.$e")
		o=${o:-0}
		note "workload $e: kernel $o, recording $k"
		if [ "$k" -gt "$o" ]; then
			diffs="$diffs $e: $k > $o;"
		elif [ "$k" -lt "$o" ]; then
			short=$((short + o - k))
			diffs="$diffs $e: $k < $o;"
		fi
	done
	total=$(awk '{ n += $2 } END { print n + 0 }' "$WORK/o.counts")
	if [ "$total" -lt "$want" ]; then
		fail soak.workload.oracle "the tracefs instance saw only $total events of the workload"
	elif [ -z "$diffs" ]; then
		pass soak.workload.oracle
	elif ! grep -q '>' <<<"$diffs" && [ "$short" -le "$allowed" ]; then
		note "soak.workload.oracle: $short events short ($diffs), within the $allowed missed or lost"
		pass soak.workload.oracle
	else
		fail soak.workload.oracle "recording vs kernel per event:$diffs (missed $MISSES, lost $LOST)"
	fi
fi

soak_finish
