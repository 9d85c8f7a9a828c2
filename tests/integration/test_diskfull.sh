#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# -o onto a filesystem that fills up during the trace: kmemsnoop must stop
# by itself with exit 1 and one clear error line naming the file and
# ENOSPC, not hang, crash or claim success.
. "$(dirname "$0")/../lib.sh"

TESTS=(diskfull.exit_status diskfull.error_line diskfull.no_success_claim)

require_root
require_kmemsnoop
require_workload

mnt=$WORK/small
mkdir -p "$mnt"
# Room for the kallsyms copy and ~1 MiB of records.
size_kb=$(( $(wc -c < /proc/kallsyms) / 1024 + 1024 ))
mount -t tmpfs -o size=${size_kb}k tmpfs "$mnt" || skip_all "cannot mount a tmpfs"
trap 'umount "$mnt" 2>/dev/null; cleanup' EXIT

err=$WORK/ks.err
timeout -k 5 60 "$KMEMSNOOP" -o "$mnt/trace" 2>"$err" </dev/null &
ks=$!
# Allocations until kmemsnoop gives up (each round is ~200k events).
for _ in $(seq 60); do
	kill -0 "$ks" 2>/dev/null || break
	"$WORKLOAD" openclose 50000 >/dev/null
done
wait "$ks"
rc=$?

[ "$rc" -eq 1 ]
check $? diskfull.exit_status "expected exit 1 when the disk fills, got $rc ($(tr '\n' '|' < "$err" | head -c 300))"

[ "$(grep -c '^kmemsnoop: writing .*/cpu[0-9]*: No space left on device$' "$err")" -eq 1 ]
check $? diskfull.error_line "expected one 'kmemsnoop: writing DIR/cpuN: No space left on device' line, stderr: $(tr '\n' '|' < "$err" | head -c 300)"

! grep -qv '^kmemsnoop: ' "$err"
check $? diskfull.no_success_claim "stderr has lines not from kmemsnoop: $(grep -v '^kmemsnoop: ' "$err" | head -n 3 | tr '\n' '|')"

finish
