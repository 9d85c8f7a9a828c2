#!/bin/bash
# Overhead of kmemsnoop on the open/close slab-churn loop (bench/openclose.c):
# untraced, binary streaming (-o to tmpfs), text to /dev/null, --hist and the
# --hist live view (drawn into /dev/null), interleaved
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
	case $mode in
	binary) "$KS" -o "$tmp/trace" 2>"$err" & pid=$! ;;
	text) "$KS" >/dev/null 2>"$err" & pid=$! ;;
	hist) "$KS" --hist >/dev/null 2>"$err" & pid=$! ;;
	# The live view drawn into /dev/null: its tables cost two key lookups.
	live) TERM=xterm "$KS" --hist --live >/dev/null 2>"$err" & pid=$! ;;
	esac
	for _ in $(seq 100); do grep -q Tracing "$err" && break; sleep 0.1; done
	ops=$("$WL" "$SECONDS_PER_RUN")
	kill -INT "$pid"; wait "$pid"
	# "events lost": streaming's written and lost; --hist's allocations +
	# frees counted and events missed.
	echo "$mode $ops $(awk '
		/^kmemsnoop: [0-9]+ events written, [0-9]+ lost/ { print $2, $5 }
		/^kmemsnoop: [0-9]+ allocations \(/ {
			for (i = 3; i <= NF; i++) {
				if ($i ~ /^frees/) f = $(i - 1)
				if ($i == "events" && $(i + 1) ~ /^missed/) m = $(i - 1)
			}
			print $2 + f, m
		}' "$err")"
}

for r in $(seq "$ROUNDS"); do
	echo "untraced $("$WL" "$SECONDS_PER_RUN") 0 0"
	traced binary
	traced text
	traced hist
	traced live
done > "$tmp/results"

median() { awk -v m="$1" '$1 == m { print $2 }' "$tmp/results" | sort -n |
	awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
base=$(median untraced)
echo "open/close of /dev/null, $(nproc) CPUs, $(uname -r), $ROUNDS rounds of ${SECONDS_PER_RUN}s, medians"
printf "%-28s %12s %9s %14s %10s\n" mode ops/s ratio events lost
for m in untraced binary text hist live; do
	awk -v m="$m" '$1 == m { e += $3; l += $4 } END { printf "%s %d %d\n", m, e, l }' \
		"$tmp/results" | {
		read -r _ events lost
		ops=$(median "$m")
		label=$m
		[ "$m" = binary ] && label="kmemsnoop -o (tmpfs)"
		[ "$m" = text ] && label="kmemsnoop > /dev/null"
		[ "$m" = hist ] && label="kmemsnoop --hist (text)"
		[ "$m" = live ] && label="kmemsnoop --hist --live"
		awk -v l="$label" -v o="$ops" -v b="$base" -v e="$events" -v x="$lost" -v m="$m" \
			'BEGIN { if (m == "untraced") { e = "-"; x = "-" }
			         printf "%-28s %12d %8.1f%% %14s %10s\n", l, o, 100 * o / b, e, x }'
	}
done
