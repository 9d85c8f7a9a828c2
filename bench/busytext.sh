#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The live stream on a machine whose CPUs are all busy allocating, as a
# user meets it: `kmemsnoop -d SECONDS > FILE` while bench/churn runs an
# open/close loop on every CPU.  Each run's line says the events written,
# the events lost (kmemsnoop's summary) and the lines out of time order,
# counted from the output itself (a line whose timestamp is earlier than
# one printed before it), for the text and --json, into a file on disk and
# into /dev/null (there kmemsnoop's own count of lines out of order).
#
# Run as root after make bench/churn: sudo bench/busytext.sh.  Environment:
#   RUNS (10), SECONDS_PER_RUN (4), THREADS (the CPUs), FORMATS ("text
#   json"), TARGETS ("file null"), OUTPUT_PARENT (where the file goes:
#   /var/tmp, on disk), KS (./kmemsnoop).
# Exits 1 when a run lost events or printed lines out of order.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
RUNS=${RUNS:-10}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-4}
THREADS=${THREADS:-$(nproc)}
FORMATS=${FORMATS:-text json}
TARGETS=${TARGETS:-file null}
KS=${KS:-./kmemsnoop}
CHURN=bench/churn

die() { echo "busytext: $*" >&2; exit 2; }

[ "$(id -u)" = 0 ] || die "run as root"
for p in "$KS" "$CHURN"; do [ -x "$p" ] || die "$p is missing (make; make bench/churn)"; done
tmp=$(mktemp -d "${OUTPUT_PARENT:-/var/tmp}/kmemsnoop-busytext.XXXXXX") ||
	die "cannot make a scratch directory"
trap 'rm -rf "$tmp"' EXIT

# Lines whose time is earlier than an earlier line's: text has it as
# "] SECS.USECS:" after the CPU, JSON as "timestamp":SECS.USECS.
out_of_order() {
	local pattern='\] +[0-9]+\.[0-9]+:' skip=1
	[ "$1" = json ] && pattern='"timestamp":[0-9]+\.[0-9]+' skip=12
	awk -v pattern="$pattern" -v skip="$skip" '
		match($0, pattern) {
			s = substr($0, RSTART + skip, RLENGTH - skip)
			gsub(/[ :]/, "", s)
			split(s, p, ".")
			t = p[1] * 1000000 + p[2]
			if (t < last) bad++; else last = t
		}
		END { print bad + 0 }' "$2"
}

# One run: "written lost out-of-order".
one_run() {
	local format=$1 target=$2 out=/dev/null err=$tmp/err written lost order
	local opts=()

	[ "$format" = json ] && opts=(--json)
	[ "$target" = file ] && out=$tmp/out
	"$CHURN" openclose $((SECONDS_PER_RUN + 3)) "$THREADS" >/dev/null &
	local churn=$!
	sleep 0.5
	"$KS" -d "$SECONDS_PER_RUN" "${opts[@]}" >"$out" 2>"$err"
	kill "$churn" 2>/dev/null
	wait "$churn" 2>/dev/null
	written=$(sed -n 's/^kmemsnoop: \([0-9]*\) events written, \([0-9]*\) lost.*/\1/p' "$err")
	lost=$(sed -n 's/^kmemsnoop: \([0-9]*\) events written, \([0-9]*\) lost.*/\2/p' "$err")
	if [ "$target" = file ]; then
		order=$(out_of_order "$format" "$out")
	else
		order=$(sed -n 's/^kmemsnoop: \([0-9]*\) events out of time order.*/\1/p' "$err")
	fi
	echo "${written:-?} ${lost:-?} ${order:-0}"
	rm -f "$tmp/out"
}

echo "busytext: $(uname -r), $(nproc) CPUs, $THREADS open/close threads, $RUNS runs of" \
	"${SECONDS_PER_RUN} s; the file in $(stat -f -c %T "$tmp")" >&2
printf '%-6s %-5s %4s %12s %10s %10s\n' format to run written lost disorder
failed=0
for format in $FORMATS; do
	for target in $TARGETS; do
		for run in $(seq 1 "$RUNS"); do
			read -r written lost order < <(one_run "$format" "$target")
			printf '%-6s %-5s %4d %12s %10s %10s\n' "$format" "$target" "$run" \
				"$written" "$lost" "$order"
			[ "$lost" = 0 ] && [ "$order" = 0 ] || failed=1
		done
	done
done
exit "$failed"
