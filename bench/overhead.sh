#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# kmemsnoop's overhead side by side with the floor and the peer tools.
#
# For each workload of bench/churn (open/close slab churn, mmap page churn,
# and open/close on every CPU at once), runs every tracer variant in turn,
# round after round (so drifts of the machine hit all variants alike), and
# prints the median ops/s of each, its ratio to the untraced runs of the
# same rounds (of the medians, and the median of each round's ratio: this
# one cancels the machine's drift between rounds), and the events each
# streaming tool captured and lost; for -o, its bytes per event.  Then
# the user-space side: records/s that kmemsnoop -i decodes and formats to
# text, and kmemsnoop's peak resident memory.
#
# Run as root after make: sudo make bench.  Environment:
#   ROUNDS (5), SECONDS_PER_RUN (3), WORKLOADS ("openclose pages threads"),
#   VARIANTS (all available of: untraced floor floorclock text binary allocinfo hist
#   live both stat statstream flight stacks textstacks ftrace ftraceflight
#   ftracestacks perf perfflight perfstacks bpftrace; "both" is --hist
#   --allocinfo in one run, "floorclock" empty programs that each read the
#   clock (bpf_ktime_get_ns(), the least a tracer that times every event
#   pays), "stacks" -o --stacks and "textstacks" the text
#   with --stacks (a kernel stack per event), "ftracestacks" ftrace with its
#   stacktrace option and "perfstacks" perf record -g on the kmem events
#   (their kernel stacks; perf's user stacks too), "comm" -o of the
#   workload's events only (-c churn) and "ustacks" the same with
#   --user-stacks (churn is built with frame pointers), "stat" --stat
#   --caller (counted in BPF maps), "statstream" the same with --stat-stream
#   (every event streamed to user space), "flight" --flight -o armed (no
#   trigger), "ftraceflight" the kmem events in an ftrace ring in overwrite
#   mode with no reader, "perfflight" perf record --overwrite on them),
#   KEEP=1 keeps the scratch directory.
#   OUTPUT_PARENT: where -o's recordings go (default /dev/shm, a tmpfs: the
#   tracer's cost without a disk's; a directory on a disk measures what
#   users get, the cpu files then written with O_DIRECT).
#   BASELINE=PATH: another kmemsnoop binary (e.g. a build of the previous
#   commit); each kmemsnoop variant V then also runs with it as V@base, in
#   the same rounds, so that a change is measured against its parent on
#   the same machine at the same time.
# A peer tool that is not installed is left out with a note on stderr.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
WORKLOADS=${WORKLOADS:-openclose pages threads}
KS=./kmemsnoop
CHURN=bench/churn
FLOOR=bench/floor
TRACEFS=/sys/kernel/tracing
KMEM_EVENTS="kmalloc kmem_cache_alloc kfree kmem_cache_free mm_page_alloc mm_page_free"
NCPU=$(nproc)
# Unmounted at the end if the bench mounted it.
TRACEFS_WAS_MOUNTED=0
mountpoint -q "$TRACEFS" && TRACEFS_WAS_MOUNTED=1

die() { echo "bench: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (sudo make bench)"
for p in "$KS" "$CHURN" "$FLOOR"; do [ -x "$p" ] || die "$p is missing: make bench builds it"; done
tmp=$(mktemp -d /dev/shm/kmemsnoop-bench.XXXXXX) || die "cannot make a scratch directory"
outdir=$tmp
if [ -n "${OUTPUT_PARENT:-}" ]; then
	outdir=$(mktemp -d "$OUTPUT_PARENT/kmemsnoop-bench.XXXXXX") ||
		die "cannot make a directory in $OUTPUT_PARENT"
fi
OUTPUT_FS=$(stat -f -c %T "$outdir")
cleanup() {
	[ -d "$TRACEFS/instances/kmsbench" ] && rmdir "$TRACEFS/instances/kmsbench" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] && echo "bench: kept $tmp" >&2 || rm -rf "$tmp"
	[ "$outdir" = "$tmp" ] || rm -rf "$outdir"
	[ "$TRACEFS_WAS_MOUNTED" = 1 ] || ! mountpoint -q "$TRACEFS" || umount "$TRACEFS"
}
trap cleanup EXIT

# --------------------------------------------------------------- variants

has_mode() { "$KS" --help 2>/dev/null | grep -q -- "--$1"; }

# Variants run by kmemsnoop, whose @base twins run BASELINE.
is_kmemsnoop_variant() {
	case ${1%@base} in text | binary | allocinfo | hist | live | both | stat | statstream | flight | stacks | textstacks | comm | ustacks) return 0 ;; esac
	return 1
}

# tracefs mounted where ftrace's variant needs it (a machine without
# systemd has it nowhere).
tracefs_ready() {
	mountpoint -q "$TRACEFS" || mount -t tracefs nodev "$TRACEFS" 2>/dev/null
}

available_variants() {
	local v=("untraced" "floor" "floorclock" "text" "binary")
	has_mode allocinfo && v+=(allocinfo) || echo "bench: kmemsnoop has no --allocinfo yet" >&2
	has_mode hist && v+=(hist live) || echo "bench: kmemsnoop has no --hist yet" >&2
	"$KS" --hist --allocinfo -d 0.1 >/dev/null 2>&1 && v+=(both)
	has_mode stat && v+=(stat)
	has_mode stat-stream && v+=(statstream)
	has_mode flight && v+=(flight)
	"$KS" --stacks -d 0.1 >/dev/null 2>&1 && v+=(stacks textstacks)
	"$KS" --user-stacks -c churn -d 0.1 >/dev/null 2>&1 && v+=(comm ustacks)
	if tracefs_ready; then
		v+=(ftrace ftraceflight ftracestacks)
	else
		echo "bench: no tracefs: ftrace left out" >&2
	fi
	command -v perf >/dev/null && v+=(perf perfflight perfstacks) || echo "bench: no perf: left out" >&2
	command -v bpftrace >/dev/null && v+=(bpftrace) || echo "bench: no bpftrace: left out" >&2
	echo "${v[@]}"
}

# wait_for FILE PATTERN: until a tracer says it is ready (30 s at most).
wait_for() {
	for _ in $(seq 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench: no '$2' in $1:" >&2
	cat "$1" >&2
	return 1
}

# Each start_X starts a tracer in the background and sets PID; each stop_X
# stops it, waits for it, and sets COUNTS to "EVENTS LOST" ("-" for what a
# tool does not report).  Not in $(...): a subshell cannot wait for PID.

# start_kmemsnoop VARIANT [BINARY]
start_kmemsnoop() {
	local err=$tmp/ks.err ks=${2:-$KS}
	case $1 in
	text) "$ks" >/dev/null 2>"$err" & ;;
	binary) rm -rf "$outdir/trace"; "$ks" -o "$outdir/trace" 2>"$err" & ;;
	allocinfo) "$ks" --allocinfo >/dev/null 2>"$err" & ;;
	hist) "$ks" --hist >/dev/null 2>"$err" & ;;
	# The live view drawn into /dev/null: its two tables count by key.
	live) TERM=xterm "$ks" --hist --live >/dev/null 2>"$err" & ;;
	both) "$ks" --hist --allocinfo >/dev/null 2>"$err" & ;;
	# --stat: the slab tables counted in BPF maps.
	stat) "$ks" --stat --caller >/dev/null 2>"$err" & ;;
	# --stat-stream: every slab event through the stream into the tables.
	statstream) "$ks" --stat --caller --stat-stream >/dev/null 2>"$err" & ;;
	# The flight recorder armed: every event into its store, none read.
	flight) rm -rf "$outdir/flight"; "$ks" --flight -o "$outdir/flight" 2>"$err" & ;;
	# Every event with its kernel stack.
	stacks) rm -rf "$outdir/trace"; "$ks" --stacks -o "$outdir/trace" 2>"$err" & ;;
	textstacks) "$ks" --stacks >/dev/null 2>"$err" & ;;
	# The workload's events only (-c), then with their user stacks too.
	comm) rm -rf "$outdir/trace"; "$ks" -c churn -o "$outdir/trace" 2>"$err" & ;;
	ustacks) rm -rf "$outdir/trace"; "$ks" -c churn --user-stacks -o "$outdir/trace" 2>"$err" & ;;
	esac
	PID=$!
	wait_for "$err" Tracing
}

stop_kmemsnoop() {
	local err=$tmp/ks.err
	grep VmHWM "/proc/$PID/status" | awk '{ print $2 }' >>"$tmp/hwm.$1"
	kill -INT "$PID"
	wait "$PID"
	case ${1%@base} in
	text | binary | statstream | stacks | textstacks | comm | ustacks)
		COUNTS=$(sed -n 's/^kmemsnoop: \([0-9]*\) events written, \([0-9]*\) lost.*/\1 \2/p' "$err")
		[ -n "$COUNTS" ] || { echo "bench: no summary from kmemsnoop:" >&2; cat "$err" >&2; return 1; } ;;
	*) COUNTS="- -" ;;
	esac
}

# start_floor [--clock]
start_floor() {
	"$FLOOR" "$@" 2>"$tmp/floor.err" &
	PID=$!
	wait_for "$tmp/floor.err" Tracing
}

stop_floor() { kill -INT "$PID"; wait "$PID"; COUNTS="- -"; }

# The floor whose programs each read the clock: the least a tracer that
# times every event pays.
start_floorclock() { start_floor --clock; }

stop_floorclock() { stop_floor; }

ftrace_events() {
	local e
	for e in $KMEM_EVENTS; do echo "$1" >"$TRACEFS/instances/kmsbench/events/kmem/$e/enable"; done
}

# The kernel's own event stream, read as text through trace_pipe, with a
# per-CPU buffer as large as kmemsnoop's default ring (16 MiB).
start_ftrace() {
	local inst=$TRACEFS/instances/kmsbench
	mkdir -p "$inst" || return 1
	echo 16384 >"$inst/buffer_size_kb"
	ftrace_events 1
	cat "$inst/trace_pipe" >"$tmp/ftrace.out" &
	PID=$!
}

stop_ftrace() {
	local inst=$TRACEFS/instances/kmsbench lost
	ftrace_events 0
	sleep 0.5 # let the reader catch up with what was recorded
	kill "$PID"
	wait "$PID" 2>/dev/null
	lost=$(cat "$inst"/per_cpu/cpu*/stats | awk '/^overrun:/ { s += $2 } END { print s + 0 }')
	COUNTS="$(wc -l <"$tmp/ftrace.out") $lost"
	rm -f "$tmp/ftrace.out"
	rmdir "$inst"
}

# ftrace's stream with its stacktrace option: a kernel stack after each
# event, read through trace_pipe as the ftrace variant is.
start_ftracestacks() {
	local inst=$TRACEFS/instances/kmsbench
	mkdir -p "$inst" || return 1
	echo 1 >"$inst/options/stacktrace"
	start_ftrace
}

stop_ftracestacks() { stop_ftrace; }

# ftrace as a flight recorder: the ring in overwrite mode (the oldest
# events give way), as large as kmemsnoop's store, nobody reading it.
start_ftraceflight() {
	local inst=$TRACEFS/instances/kmsbench
	mkdir -p "$inst" || return 1
	echo 16384 >"$inst/buffer_size_kb"
	echo 1 >"$inst/options/overwrite"
	ftrace_events 1
	PID=
}

stop_ftraceflight() {
	ftrace_events 0
	rmdir "$TRACEFS/instances/kmsbench"
	COUNTS="- -"
}

start_perf() {
	perf kmem --slab --page record -o "$tmp/perf.data" >"$tmp/perf.err" 2>&1 &
	PID=$!
	sleep 1 # perf has no ready message before it records
}

stop_perf() {
	local stats events lost
	kill -INT "$PID"
	wait "$PID"
	stats=$(perf report -i "$tmp/perf.data" --stats 2>&1)
	events=$(awk '/^ *SAMPLE events:/ { print $3; exit }' <<<"$stats")
	lost=$(awk '/LOST_SAMPLES events:|^ *LOST events:/ { s += $3 } END { print s + 0 }' <<<"$stats")
	COUNTS="${events:-0} $lost"
	rm -f "$tmp/perf.data"
}

# perf record -g on the kmem events: each sample with its call chain.
start_perfstacks() {
	local args=() e
	for e in $KMEM_EVENTS; do args+=(-e "kmem:$e"); done
	perf record -g -a -m 4096 "${args[@]}" -o "$tmp/perf.data" >"$tmp/perf.err" 2>&1 &
	PID=$!
	sleep 1 # no ready message
}

stop_perfstacks() { stop_perf; }

# perf as a flight recorder: the kmem events into backward rings of 16 MiB
# a CPU that it writes out on SIGUSR2 only (none sent here).
start_perfflight() {
	local args=() e
	for e in $KMEM_EVENTS; do args+=(-e "kmem:$e"); done
	perf record --overwrite --switch-output=signal -m 4096 -a "${args[@]}" \
		-o "$tmp/perfflight.data" >"$tmp/perfflight.err" 2>&1 &
	PID=$!
	sleep 1 # no ready message
}

stop_perfflight() {
	kill -INT "$PID"
	wait "$PID"
	rm -f "$tmp"/perfflight.data*
	COUNTS="- -"
}

start_bpftrace() {
	local probes="" e
	for e in $KMEM_EVENTS; do probes+="${probes:+,}tracepoint:kmem:$e"; done
	bpftrace -e "$probes { @[probe] = count(); }" \
		>"$tmp/bpftrace.out" 2>&1 &
	PID=$!
	wait_for "$tmp/bpftrace.out" Attaching
	sleep 0.5
}

stop_bpftrace() {
	kill -INT "$PID"
	wait "$PID"
	# Counting in maps: no stream of events, nothing lost.
	COUNTS=$(awk '/^@\[/ { s += $2 } END { printf "%d -", s }' "$tmp/bpftrace.out")
}

# run_variant WORKLOAD VARIANT: one timed run; appends to results.
run_variant() {
	local wl=$1 v=$2 ops threads=1 kind=$1
	[ "$wl" = threads ] && threads=$NCPU kind=openclose
	COUNTS="- -"
	case $v in
	untraced) ops=$("$CHURN" "$kind" "$SECONDS_PER_RUN" "$threads") ;;
	*@base)
		start_kmemsnoop "${v%@base}" "$BASELINE" || return 1
		ops=$("$CHURN" "$kind" "$SECONDS_PER_RUN" "$threads")
		stop_kmemsnoop "$v" || return 1 ;;
	text | binary | allocinfo | hist | live | both | stat | statstream | flight | stacks | textstacks | comm | ustacks)
		start_kmemsnoop "$v" || return 1
		ops=$("$CHURN" "$kind" "$SECONDS_PER_RUN" "$threads")
		stop_kmemsnoop "$v" || return 1 ;;
	*)
		"start_$v" || return 1
		ops=$("$CHURN" "$kind" "$SECONDS_PER_RUN" "$threads")
		"stop_$v" || return 1 ;;
	esac
	echo "$wl $v $ops $COUNTS $ROUND" >>"$tmp/results"
	# -o: the bytes of its files (every record, those that describe too)
	# for the events it wrote.
	if [ -d "$outdir/trace" ] && [[ ${v%@base} =~ ^(binary|stacks|comm|ustacks)$ ]]; then
		echo "$wl $v $(cat "$outdir"/trace/cpu* | wc -c) ${COUNTS%% *}" >>"$tmp/bytes"
	fi
}

# --------------------------------------------------------------- report

median() {
	awk -v w="$1" -v v="$2" '$1 == w && $2 == v { print $3 }' "$tmp/results" | sort -n |
		awk '{ x[NR] = $1 } END { if (NR) print (NR % 2) ? x[(NR + 1) / 2] : int((x[NR / 2] + x[NR / 2 + 1]) / 2) }'
}

# The median over rounds of the variant's ops/s over the untraced run's
# of the same round: the machine's drift from round to round cancels out.
paired_ratio() {
	awk -v w="$1" -v v="$2" '$1 == w && $2 == "untraced" { u[$6] = $3 }
		$1 == w && $2 == v { o[$6] = $3 }
		END { for (r in o) if (u[r]) print o[r] / u[r] }' "$tmp/results" | sort -g |
		awk '{ x[NR] = $1 } END { if (!NR) print 0; else if (NR % 2) print x[(NR + 1) / 2]; else print (x[NR / 2] + x[NR / 2 + 1]) / 2 }'
}

label() {
	case $1 in
	*@base) echo "$(label "${1%@base}") (base)" ;;
	untraced) echo "untraced" ;;
	floor) echo "empty BPF programs (floor)" ;;
	floorclock) echo "empty programs reading the clock" ;;
	text) echo "kmemsnoop > /dev/null" ;;
	binary) echo "kmemsnoop -o ($OUTPUT_FS)" ;;
	allocinfo) echo "kmemsnoop --allocinfo" ;;
	hist) echo "kmemsnoop --hist" ;;
	live) echo "kmemsnoop --hist live view" ;;
	both) echo "kmemsnoop --hist --allocinfo" ;;
	stat) echo "kmemsnoop --stat --caller (BPF maps)" ;;
	statstream) echo "kmemsnoop --stat --caller --stat-stream" ;;
	flight) echo "kmemsnoop --flight -o, armed" ;;
	stacks) echo "kmemsnoop --stacks -o ($OUTPUT_FS)" ;;
	textstacks) echo "kmemsnoop --stacks > /dev/null" ;;
	comm) echo "kmemsnoop -c churn -o ($OUTPUT_FS)" ;;
	ustacks) echo "kmemsnoop -c churn --user-stacks -o" ;;
	ftrace) echo "ftrace, trace_pipe" ;;
	ftraceflight) echo "ftrace, overwrite, no reader" ;;
	ftracestacks) echo "ftrace stacktrace, trace_pipe" ;;
	perf) echo "perf kmem record" ;;
	perfflight) echo "perf record --overwrite" ;;
	perfstacks) echo "perf record -g" ;;
	bpftrace) echo "bpftrace, count()" ;;
	esac
}

describe() {
	case $1 in
	openclose) echo "open+close /dev/null, 1 thread" ;;
	pages) echo "mmap 16 pages, touch, munmap, 1 thread" ;;
	threads) echo "open+close /dev/null, $NCPU threads" ;;
	esac
}

report_workload() {
	local wl=$1 base v ops
	base=$(median "$wl" untraced)
	echo
	echo "$(describe "$wl"): ops/s, medians of $ROUNDS rounds of ${SECONDS_PER_RUN}s;"
	echo "ratio: of the medians to the untraced one's; paired: the median of each round's to that round's untraced run"
	printf "%-36s %12s %8s %8s %14s %12s\n" tracer ops/s ratio paired "events (sum)" "lost (sum)"
	for v in "${VARIANTS_RUN[@]}"; do
		ops=$(median "$wl" "$v")
		[ -n "$ops" ] || continue
		awk -v w="$wl" -v v="$v" -v l="$(label "$v")" -v o="$ops" -v b="$base" '
			$1 == w && $2 == v { if ($4 == "-") e = "-"; else e += $4
			                     if ($5 == "-") x = "-"; else x += $5 }
			END { printf "%-36s %12d %7.1f%% %7.1f%% %14s %12s\n", l, o, 100 * o / b,
			             100 * '"$(paired_ratio "$wl" "$v")"', e, x }' \
			"$tmp/results"
	done
	awk -v w="$wl" '$1 == w { b[$2] += $3; e[$2] += $4 }
		END { for (v in b) if (e[v]) printf "%s: %.1f bytes per event written by -o\n", v, b[v] / e[v] }' \
		"$tmp/bytes" 2>/dev/null | sort
}

# Records per second kmemsnoop -i turns into text, from the last -o trace.
report_user_space() {
	local n t0 t1
	echo
	if [ -d "$outdir/trace" ]; then
		t0=$(date +%s.%N)
		n=$("$KS" -i "$outdir/trace" | wc -l)
		t1=$(date +%s.%N)
		awk -v n="$n" -v a="$t0" -v b="$t1" \
			'BEGIN { printf "kmemsnoop -i: %d records decoded and formatted in %.2fs: %.0f records/s\n", n, b - a, n / (b - a) }'
	fi
	for f in "$tmp"/hwm.*; do
		[ -e "$f" ] || continue
		sort -n "$f" | tail -1 | awk -v m="${f##*.}" \
			'{ printf "kmemsnoop %s: peak resident memory %.1f MiB\n", m, $1 / 1024 }'
	done
}

read -r -a VARIANTS_RUN <<<"${VARIANTS:-$(available_variants)}"
for v in "${VARIANTS_RUN[@]}"; do
	case $v in ftrace | ftraceflight) tracefs_ready || die "no tracefs at $TRACEFS for the $v variant" ;; esac
done
if [ -n "${BASELINE:-}" ]; then
	[ -x "$BASELINE" ] || die "BASELINE=$BASELINE is not an executable"
	with_base=()
	for v in "${VARIANTS_RUN[@]}"; do
		with_base+=("$v")
		# A baseline without --hist --allocinfo together has no "both".
		if is_kmemsnoop_variant "$v" && [ "$v" != both ]; then with_base+=("$v@base"); fi
	done
	VARIANTS_RUN=("${with_base[@]}")
fi
echo "bench: $(uname -r), $NCPU CPUs; workloads: $WORKLOADS; variants: ${VARIANTS_RUN[*]}" >&2
: >"$tmp/results"
: >"$tmp/bytes"
for r in $(seq "$ROUNDS"); do
	ROUND=$r
	for wl in $WORKLOADS; do
		for v in "${VARIANTS_RUN[@]}"; do
			run_variant "$wl" "$v" || die "round $r, $wl, $v failed"
		done
	done
	echo "bench: round $r of $ROUNDS done" >&2
done
for wl in $WORKLOADS; do report_workload "$wl"; done
report_user_space
