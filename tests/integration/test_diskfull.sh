#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# -o onto a filesystem that fills up during the trace: kmemsnoop must stop
# by itself with exit 1 and one clear error line naming the file and
# ENOSPC, not hang, crash or claim success.  Twice: on a tmpfs, and on an
# ext4 image on a loop device, where the cpu files are written with
# O_DIRECT (binout.c).  What was written before the disk filled must still
# read back: the cpu files end with a whole record.
#
# vmtest: host only: writing -o files is user space.
. "$(dirname "$0")/../lib.sh"

FS_KINDS=(tmpfs ext4)
TESTS=()
for fs in "${FS_KINDS[@]}"; do
	TESTS+=("diskfull.$fs.exit_status" "diskfull.$fs.error_line"
		"diskfull.$fs.no_success_claim" "diskfull.$fs.readable")
done
TESTS+=(diskfull.ext4.direct)

require_root
require_kmemsnoop
require_workload

# Room for the kallsyms copy and ~3 MiB of records: more than one 1 MiB
# buffer of a cpu file, less than all.
size_kb=$(( $(wc -c < /proc/kallsyms) / 1024 + 3072 ))
mounted=()
trap 'for m in "${mounted[@]}"; do umount "$m" 2>/dev/null; done; cleanup' EXIT

# mount_small KIND DIR: a filesystem of size_kb at DIR, or a reason on stdout.
mount_small() {
	case $1 in
	tmpfs)
		mount -t tmpfs -o size=${size_kb}k tmpfs "$2" 2>&1 || return 1
		;;
	ext4)
		command -v mkfs.ext4 >/dev/null || { echo "no mkfs.ext4"; return 1; }
		# ext4 keeps some of it for itself: a little more.
		truncate -s $((size_kb + 4096))k "$WORK/ext4.img" &&
			mkfs.ext4 -q -F -m 0 "$WORK/ext4.img" >/dev/null 2>&1 ||
			{ echo "mkfs.ext4 failed"; return 1; }
		mount -o loop "$WORK/ext4.img" "$2" 2>&1 || return 1
		;;
	esac
}

# fill_up KIND: traces onto a small KIND until it is full.
fill_up() {
	local fs=$1 mnt=$WORK/small-$1 err=$WORK/ks-$1.err why ks rc
	mkdir -p "$mnt"
	if ! why=$(mount_small "$fs" "$mnt"); then
		skip_rest "diskfull.$fs.exit_status" "diskfull.$fs.error_line" \
			"diskfull.$fs.no_success_claim" "diskfull.$fs.readable" \
			"cannot mount a small $fs: $why"
		[ "$fs" = ext4 ] && skip diskfull.ext4.direct "cannot mount a small ext4: $why"
		return
	fi
	mounted+=("$mnt")
	strace_out=
	if [ "$fs" = ext4 ] && command -v strace >/dev/null; then
		strace_out=$WORK/strace-$fs
		# Under make sanitize, LeakSanitizer cannot run under ptrace: this
		# one run goes without it (the tmpfs run above checks for leaks).
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:detect_leaks=0} \
			timeout -k 5 60 strace -f -o "$strace_out" -e trace=fcntl \
			"$KMEMSNOOP" -o "$mnt/trace" 2>"$err" </dev/null &
	else
		timeout -k 5 60 "$KMEMSNOOP" -o "$mnt/trace" 2>"$err" </dev/null &
	fi
	ks=$!
	# Allocations until kmemsnoop gives up (each round is ~200k events).
	for _ in $(seq 60); do
		kill -0 "$ks" 2>/dev/null || break
		"$WORKLOAD" openclose 50000 >/dev/null
	done
	wait "$ks"
	rc=$?
	# strace's own lines: leave them out.
	sed -i '/^strace: /d' "$err"

	[ "$rc" -eq 1 ]
	check $? "diskfull.$fs.exit_status" "expected exit 1 when the disk fills, got $rc ($(tr '\n' '|' < "$err" | head -c 300))"

	[ "$(grep -c '^kmemsnoop: writing .*/cpu[0-9]*: No space left on device$' "$err")" -eq 1 ]
	check $? "diskfull.$fs.error_line" "expected one 'kmemsnoop: writing DIR/cpuN: No space left on device' line, stderr: $(tr '\n' '|' < "$err" | head -c 300)"

	! grep -qv '^kmemsnoop: ' "$err"
	check $? "diskfull.$fs.no_success_claim" "stderr has lines not from kmemsnoop: $(grep -v '^kmemsnoop: ' "$err" | head -n 3 | tr '\n' '|')"

	# What reached the disk reads back: whole records, no error.
	local out=$WORK/readback-$fs lines
	"$KMEMSNOOP" -i "$mnt/trace" >"$out" 2>"$out.err"
	rc=$?
	lines=$(grep -vc '^#' "$out")
	[ "$rc" -eq 0 ] && [ "$lines" -gt 1000 ]
	check $? "diskfull.$fs.readable" "-i on the full disk's recording: status $rc, $lines lines ($(head -c 300 "$out.err" | tr '\n' '|'))"

	[ "$fs" = ext4 ] || return
	if [ -z "$strace_out" ]; then
		skip diskfull.ext4.direct "no strace to see the cpu files' open flags"
		return
	fi
	grep -q 'F_SETFL, .*O_DIRECT.*) = 0' "$strace_out"
	check $? diskfull.ext4.direct "the cpu files were not opened O_DIRECT on ext4: $(grep F_SETFL "$strace_out" | head -n 2 | tr '\n' '|')"
}

for fs in "${FS_KINDS[@]}"; do
	fill_up "$fs"
done

finish
