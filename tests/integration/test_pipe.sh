#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Piped into another program (sudo kmemsnoop | grep ...), the live lines
# reach it while kmemsnoop traces, not when a megabyte of them has filled
# stdout's buffer or the trace ends: a program that allocates a little now
# and then (a copy of true, run every 0.2 s, about 15 KB of lines a second)
# is traced with -c for DURATION seconds into grep -m1.  grep has its line
# and exits; kmemsnoop's next write finds the pipe closed and it ends.
#   pipe.text   the whole pipeline ended in under half of DURATION, and
#               kmemsnoop exited 0 (a reader gone is not an error)
#   pipe.json   the same with --json
#
# vmtest: host only: flushing stdout is user space, the same on every kernel.
. "$(dirname "$0")/../lib.sh"

DURATION=40
TESTS=(pipe.text pipe.json)

require_root
require_kmemsnoop
cp "$(type -P true)" "$WORK/kmspipe-tick" || skip_all "cannot copy true"

(while :; do "$WORK/kmspipe-tick"; sleep 0.2; done) &
ticker=$!
trap 'kill $ticker 2>/dev/null' EXIT

# piped NAME [OPTIONS...]: kmemsnoop into grep -m1 until the first line of
# the ticker; PASS when that took under half the trace's duration.
piped() {
	local name=$1 t0 took status
	shift
	t0=$EPOCHREALTIME
	timeout -k 5 $((DURATION + 30)) "$KMEMSNOOP" -c kmspipe-tick -d $DURATION "$@" \
		2>"$WORK/$name.err" | grep -m1 -q kmspipe-tick
	status=("${PIPESTATUS[@]}")
	took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", b - a }')
	[ "${status[1]}" = 0 ] && [ "${status[0]}" = 0 ] && [ "$took" -lt $((DURATION / 2)) ]
	check $? "pipe.$name" "kmemsnoop status ${status[0]}, grep ${status[1]} (1: no line), after ${took}s of a ${DURATION}s trace: $(grep -v '^libbpf' "$WORK/$name.err" | tail -n 1)"
}

piped text
piped json --json
finish
