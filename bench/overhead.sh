#!/bin/bash
# Overhead of kmemsnoop on the open/close slab-churn loop (bench/openclose.c):
# untraced, binary streaming (-o to tmpfs) and text to /dev/null, interleaved
# over ROUNDS rounds of SECONDS each; prints medians, ratios to untraced and
# the events written and lost.  Run as root: sudo make bench
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
KS=./kmemsnoop
WL=bench/openclose
tmp=$(mktemp -d /dev/shm/kmemsnoop-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

[ "$(id -u)" = 0 ] || { echo "bench: run as root" >&2; exit 1; }
[ -x "$KS" ] && [ -x "$WL" ] || { echo "bench: build first (make)" >&2; exit 1; }

# traced MODE: starts kmemsnoop, waits for it to attach, runs the workload.
traced() {
	local mode=$1 err=$tmp/$1.err pid ops
	rm -rf "$tmp/trace"
	if [ "$mode" = binary ]; then
		"$KS" -o "$tmp/trace" 2>"$err" & pid=$!
	else
		"$KS" >/dev/null 2>"$err" & pid=$!
	fi
	for _ in $(seq 100); do grep -q Tracing "$err" && break; sleep 0.1; done
	ops=$("$WL" "$SECONDS_PER_RUN")
	kill -INT "$pid"; wait "$pid"
	echo "$mode $ops $(sed -n 's/^kmemsnoop: \([0-9]*\) events written, \([0-9]*\) lost.*/\1 \2/p' "$err")"
}

for r in $(seq "$ROUNDS"); do
	echo "untraced $("$WL" "$SECONDS_PER_RUN") 0 0"
	traced binary
	traced text
done > "$tmp/results"

median() { awk -v m="$1" '$1 == m { print $2 }' "$tmp/results" | sort -n |
	awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
base=$(median untraced)
echo "open/close of /dev/null, $(nproc) CPUs, $(uname -r), $ROUNDS rounds of ${SECONDS_PER_RUN}s, medians"
printf "%-28s %12s %9s %14s %10s\n" mode ops/s ratio events lost
for m in untraced binary text; do
	awk -v m="$m" '$1 == m { e += $3; l += $4 } END { printf "%s %d %d\n", m, e, l }' \
		"$tmp/results" | {
		read -r _ events lost
		ops=$(median "$m")
		label=$m
		[ "$m" = binary ] && label="kmemsnoop -o (tmpfs)"
		[ "$m" = text ] && label="kmemsnoop > /dev/null"
		awk -v l="$label" -v o="$ops" -v b="$base" -v e="$events" -v x="$lost" -v m="$m" \
			'BEGIN { if (m == "untraced") { e = "-"; x = "-" }
			         printf "%-28s %12d %8.1f%% %14s %10s\n", l, o, 100 * o / b, e, x }'
	}
done
