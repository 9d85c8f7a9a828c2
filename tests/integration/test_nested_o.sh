#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# With -o the programs stage records per CPU in levels: a program that
# interrupts another one writing a record on its CPU stages into the next
# level, and the levels are copied into the ring lowest first.  Block I/O
# completions allocate and free in interrupts, so a direct-I/O reader
# beside an open/close workload on each CPU makes programs interrupt one
# another.  kmemsnoop -v -o DIR, traced whole, says how many records were
# staged so (nested.happened; up to three runs, then the rest is skipped
# with the reason when none were).
# Then every CPU file must hold each sequence number of its CPU exactly
# once, from 0 to its last (nothing dropped or copied twice), and its
# events must add up to the summary's count: a reader of the records apart
# from kmemsnoop's, which walks them by their sizes (docs/ABI.md).
#
# vmtest: host only: the test VMs have no python3 to read the records with,
#   nor a disk for direct I/O.
. "$(dirname "$0")/../lib.sh"

TESTS=(nested.clean_stop nested.happened nested.walk nested.sequence nested.events)
N=300000

require_root
require_kmemsnoop
require_workload

command -v python3 >/dev/null || skip_all "python3 is not installed (it reads the records)"

# A file read with O_DIRECT on a disk, not in the page cache: tmpfs has no
# block I/O to complete.
direct_file() {
	local d f
	for d in /var/tmp "$TOP" /root; do
		[ -d "$d" ] && [ "$(stat -f -c %T "$d")" != tmpfs ] || continue
		f=$(mktemp "$d/kmemsnoop-nested.XXXXXX") || continue
		if dd if=/dev/zero of="$f" bs=1M count=32 oflag=direct status=none 2>/dev/null &&
			dd if="$f" of=/dev/null bs=4k count=1 iflag=direct status=none 2>/dev/null; then
			echo "$f"
			return 0
		fi
		rm -f "$f"
	done
	return 1
}

if ! FILE=$(direct_file); then
	skip_all "no directory here takes direct I/O (tried /var/tmp, $TOP and /root)"
fi
READER=
stop_reader() {
	[ -n "$READER" ] && kill "$READER" 2>/dev/null && wait "$READER" 2>/dev/null
	READER=
}
trap 'stop_reader; rm -f "$FILE"; cleanup' EXIT

# record DIR: one attempt, an open/close workload on each CPU beside the
# reader, traced whole into DIR.  Status 1 when a workload or kmemsnoop did
# not start (the reason in WHY); kmemsnoop's status then in rc.
record() {
	local dir=$1 cpu id ids=()
	rm -rf "$dir"
	for cpu in $(online_cpus); do
		ids+=("w$cpu")
		if ! wl_start "w$cpu" openclose "$N" || ! taskset -p -c "$cpu" "${WL_PID[w$cpu]}" >/dev/null; then
			WHY="the workload for CPU $cpu did not start: $(head -c 200 "$WORK/w$cpu.werr")"
			for id in "${ids[@]}"; do wl_kill "$id"; done
			return 1
		fi
	done
	if ! ks_start k -v -e kmalloc,cache -o "$dir"; then
		WHY=$(ks_start_fail_why k)
		for id in "${ids[@]}"; do wl_kill "$id"; done
		return 1
	fi
	(while :; do dd if="$FILE" of=/dev/null bs=4k iflag=direct status=none || exit; done) &
	READER=$!
	for id in "${ids[@]}"; do wl_go "$id"; done
	for id in "${ids[@]}"; do
		wl_wait "$id" || fail nested.workload "the workload failed (status ${WL_RC[$id]})" "$WORK/$id.werr"
	done
	stop_reader
	ks_stop k
	rc=$?
	return 0
}

# Interrupts land where they will: up to three attempts.
DIR=$WORK/kmt
for attempt in 1 2 3; do
	if ! record "$DIR"; then
		fail_rest "${TESTS[@]}" "$WHY"
		finish
	fi
	nested=$(sed -n 's/^kmemsnoop: \([0-9]*\) records staged by a program that interrupted .*/\1/p' "$(ks_err k)")
	[ "${nested:-0}" -gt 0 ] || [ $rc -ne 0 ] && break
done
sum=$(ks_summary k)
set -- $sum
written=$1
if [ $rc -ne 0 ] || [ -z "$sum" ] || [ "$2" != 0 ]; then
	fail nested.clean_stop "status $rc, summary '${sum:-none}' (events written, lost, bytes lost): the check needs a recording with nothing lost" "$(ks_err k)"
	fail_rest nested.happened nested.walk nested.sequence nested.events "no clean end"
	finish
fi
pass nested.clean_stop
if [ -z "$nested" ]; then
	fail nested.happened "-v printed no count of records staged by interrupting programs" "$(ks_err k)"
	fail_rest nested.walk nested.sequence nested.events "no count"
	finish
fi
echo "# $written events written, $nested records staged by interrupting programs"
if [ "$nested" -eq 0 ]; then
	skip_rest nested.happened nested.walk nested.sequence nested.events "no program interrupted another writing a record in 3 runs (the last: $written events, direct I/O on $(dirname "$FILE"))"
	finish
fi
pass nested.happened

# One line per CPU file: "cpuN RECORDS EVENTS MISSING TWICE FIRST LAST", or
# "cpuN bad OFFSET" where a record's size does not lead to the next one.
python3 - "$DIR"/cpu* >"$WORK/walk" 2>"$WORK/walk.err" <<'EOF'
import struct, sys
for path in sys.argv[1:]:
    data = open(path, 'rb').read()
    off, seqs, events = 0, [], 0
    while off < len(data):
        if off + 24 > len(data):
            break
        event_id, _, size, seq = struct.unpack_from('<BBHi', data, off)
        if size < 24 or off + size > len(data):
            break
        events += event_id <= 1
        seqs.append(seq)
        off += size
    name = path.rsplit('/', 1)[-1]
    if off != len(data):
        print(name, 'bad', off)
        continue
    seqs.sort()
    missing = sum(b - a - 1 for a, b in zip(seqs, seqs[1:]) if b > a + 1)
    twice = sum(1 for a, b in zip(seqs, seqs[1:]) if a == b)
    first, last = (seqs[0], seqs[-1]) if seqs else (0, -1)
    print(name, len(seqs), events, missing, twice, first, last)
EOF
[ $? -eq 0 ] && [ -s "$WORK/walk" ] && ! grep -q ' bad ' "$WORK/walk"
check $? nested.walk "the records do not follow one another by their sizes: $(grep ' bad ' "$WORK/walk" | first_lines 2)" "$WORK/walk.err"

# From 0: a CPU's counter starts with the programs; 5.10 and 5.11 have no
# atomic fetch-add and may number twice (docs/ABI.md).
twice_ok=0
kernel_at_least 5 12 || twice_ok=1
bad=$(awk -v t="$twice_ok" '$2 != "bad" && ($4 != 0 || (!t && $5 != 0) || $6 != 0 || $7 != $2 - 1 - $5)' "$WORK/walk")
[ -z "$bad" ] && ! grep -q ' bad ' "$WORK/walk"
check $? nested.sequence "a CPU file's sequence numbers are not each of 0..last once (cpu records events missing twice first last): $(echo "$bad" | first_lines 2)"

events=$(awk '$2 != "bad" { n += $3 } END { print n + 0 }' "$WORK/walk")
[ "$events" -eq "$written" ]
check $? nested.events "the CPU files hold $events events, the summary says $written written"

finish
