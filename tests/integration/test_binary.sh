#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Binary output.  Two kmemsnoop instances trace the same workload at the
# same time: one writes kmemtrace files with -o DIR, the other prints text.
# "kmemsnoop -i DIR" must print the same events as the text instance
# (compared as sorted multisets of lines with the CPU and timestamp removed:
# each instance takes its own timestamps, and the two instances' programs
# run one after the other, between which a 7.x kernel was seen moving the
# task to another CPU), but for what either one's programs
# missed (recursion misses, counted by the kernel).  The directory must hold
# abi_version (6), total_overruns (0) and a cpuN file for each online CPU,
# and the cpuN files, walked independently here with the layout of
# src/bpf/kmemsnoop.h (24-byte core, 24-byte alloc part, then features
# of {u16 size, u8 id, ...}), must consist of whole well-formed records
# whose numbers per event kind match what "kmemsnoop -i DIR" prints.
#
# vmtest: host only: the kmemtrace file format is user space (test_recording
# reads recordings in an arm64 VM).
. "$(dirname "$0")/../lib.sh"

TESTS=(binary.clean_stop_o binary.clean_stop_text binary.decode binary.same_events
	binary.abi_version binary.total_overruns binary.cpu_files binary.records
	binary.heartbeats binary.heartbeats_idle)
COUNT=50

require_root
require_kmemsnoop
require_workload

DIR=$WORK/kmt
start_traced w kb -o "$DIR" -- msg 200 "$COUNT" + openclose 20 + pipe 4
if ! ks_start kt -p "$PID"; then
	fail_rest "${TESTS[@]}" "kmemsnoop (text): $(ks_start_fail_why kt)"
	finish
fi
ks_watch_misses kb
ks_watch_misses kt
wl_run w || fail binary.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
ks_check_stop binary.clean_stop_o kb
ks_check_stop binary.clean_stop_text kt
mb=$(ks_misses kb)
mt=$(ks_misses kt)

# Decode.
timeout -k 5 60 "$KMEMSNOOP" -i "$DIR" >"$WORK/decoded" 2>"$WORK/decoded.err"
rc=$?
[ $rc -eq 0 ] && [ -s "$WORK/decoded" ]
check $? binary.decode "kmemsnoop -i exited with status $rc ($(head -c 200 "$WORK/decoded.err" | tr '\n' ' '))" "$WORK/decoded.err"

# Same events as the live text, CPUs and timestamps removed.
strip_ts() {
	grep -v '^#' "$1" | grep -v '^[[:space:]]*$' |
		sed -E 's/^(.*) +\[[0-9]+\] +[0-9]+\.[0-9]{6}: /\1 /' | LC_ALL=C sort
}
strip_ts "$WORK/decoded" >"$WORK/decoded.lines"
strip_ts "$(ks_out kt)" >"$WORK/text.lines"
nmsg=$(grep -c ' kmalloc: call_site=load_msg+0x[0-9a-f]*/0x[0-9a-f]* .* bytes_req=248 ' "$WORK/text.lines")
if [ "$nmsg" -ne "$COUNT" ]; then
	fail binary.same_events "the text instance shows $nmsg load_msg kmallocs of 248 bytes, not $COUNT: nothing to compare"
else
	# Each instance may lack what its own programs missed (recursion
	# misses: an interrupt's allocation while the same program ran),
	# which the other's programs may have seen.
	only_t=$(ms_minus "$WORK/text.lines" "$WORK/decoded.lines" | wc -l)
	only_d=$(ms_minus "$WORK/decoded.lines" "$WORK/text.lines" | wc -l)
	[ "$only_t" -le "$mb" ] && [ "$only_d" -le "$mt" ]
	check $? binary.same_events "$only_t line(s) only in the live text (the -o instance missed $mb), $only_d only in the decoded file (the text instance missed $mt), e.g. $(multiset_diff "$WORK/text.lines" "$WORK/decoded.lines" | first_lines 2)"
fi

v=$(tr -d ' \n' <"$DIR/abi_version" 2>/dev/null)
[ "$v" = 6 ]
check $? binary.abi_version "abi_version holds '$v', expected 6"

v=$(tr -d ' \n' <"$DIR/total_overruns" 2>/dev/null)
[ "$v" = 0 ]
check $? binary.total_overruns "total_overruns holds '$v', expected 0"

missing=
for c in $(online_cpus); do
	[ -f "$DIR/cpu$c" ] || missing="$missing cpu$c"
done
[ -z "$missing" ]
check $? binary.cpu_files "missing per-CPU files:$missing (have: $(ls "$DIR" 2>/dev/null | tr '\n' ' '))"

# walk FILE [PID]: the records of a cpuN file.  Prints "ERR <why>" lines or, per
# record, "<event_id> <type_id> <seq>".  An event carries a time and tid
# feature (id 11): the tid of a task record (event 2, task feature id 2) earlier in
# the same file, whose pid must be the workload's.  A cache record (event
# 3, type 1) carries a cache info feature (id 7).  All number among the
# CPU's records.  A heartbeat (event 4, feature id 8) prints
# "HB <file> <records before it> <written> <lost>".
walk() {
	od -An -v -tu1 "$1" | awk -v pid="$2" -v file="$(basename "$1")" '
	{ for (i = 1; i <= NF; i++) b[n++] = $i }
	function u16(o) { return b[o] + 256 * b[o + 1] }
	function u32(o) { return b[o] + 256 * (b[o + 1] + 256 * (b[o + 2] + 256 * b[o + 3])) }
	END {
		off = 0
		while (off < n) {
			if (n - off < 24) { print "ERR " file ": " n - off " stray bytes at offset " off; exit }
			ev = b[off]; ty = b[off + 1]; sz = u16(off + 2)
			if ((ev > 1 || ty > 2) && !(ev == 3 && ty == 1) && !(ev == 2 && ty <= 4) && !(ev == 4 && ty == 0)) { print "ERR " file ": event " ev " type " ty " at offset " off; exit }
			min = ev == 0 ? 48 : 24
			if (sz < min || off + sz > n) { print "ERR " file ": record size " sz " at offset " off " (file " n " bytes)"; exit }
			f = off + min; tpid = -1; ttid = -1; tid = -1; info = 0; beat = 0
			while (f + 3 <= off + sz) {
				fs = u16(f); fid = b[f + 2]
				if (fs < 3 || f + fs > off + sz) { print "ERR " file ": feature size " fs " at offset " f; exit }
				if (fid == 2 && fs >= 12) { tpid = u32(f + 4); ttid = u32(f + 8) }
				if ((fid == 5 && fs >= 8) || (fid == 11 && fs >= 16)) tid = u32(f + 4)
				if (fid == 7 && fs >= 17 && b[f + 16]) info = 1
				if (fid == 8 && fs >= 24) { beat = 1; written = u32(f + 8) + 4294967296 * u32(f + 12); lost = u32(f + 16) + 4294967296 * u32(f + 20) }
				f += fs
			}
			if (ev == 3 && !info) { print "ERR " file ": cache record at offset " off " without a named cache info feature"; exit }
			if (ev == 2) {
				if (pid != "" && tpid != pid) { print "ERR " file ": task record at offset " off " has pid " tpid ", not " pid; exit }
				described[ttid] = 1
			}
			if (ev == 4 && !beat) { print "ERR " file ": heartbeat at offset " off " without a heartbeat feature"; exit }
			if (ev == 4) print "HB", file, nrec + 0, written, lost
			nrec++
			if (ev <= 1 && tid < 0) { print "ERR " file ": record at offset " off " has no tid feature"; exit }
			if (ev <= 1 && tid != 0 && !(tid in described)) { print "ERR " file ": record at offset " off " has tid " tid ", not described before in this file"; exit }
			print ev, ty, u32(off + 4), file
			off += sz
		}
	}'
}
: >"$WORK/records"
errs=
for f in "$DIR"/cpu[0-9]*; do
	[ -f "$f" ] || continue
	walk "$f" "$PID" >>"$WORK/records"
done
grep '^HB' "$WORK/records" >"$WORK/beats"
sed -i '/^HB/d' "$WORK/records"
errs=$(grep '^ERR' "$WORK/records" | head -n 3 | tr '\n' ' ')
# Record kinds per event name of the text instance.
kinds() {
	awk '$1 != "ERR" && $1 <= 1 {
		k = $1 " " $2
		name = k == "0 0" ? "kmalloc" : k == "1 0" ? "kfree" : k == "0 1" ? "kmem_cache_alloc" : \
		       k == "1 1" ? "kmem_cache_free" : k == "0 2" ? "mm_page_alloc" : "mm_page_free"
		print name
	}' "$WORK/records" | sort | uniq -c
}
kinds >"$WORK/bin.kinds"
# Against kmemsnoop -i of the same files (the text instance may differ by
# its recursion misses: binary.same_events).
ev_table "$WORK/decoded" | cut -f5 | sort | uniq -c >"$WORK/text.kinds"
# Each CPU numbers its records 0, 1, 2 ...: in each file, nothing repeated
# and nothing missing (this trace lost nothing), in whatever order.
badseq=$(awk '$1 != "ERR" { n[$4]++; if ($3 > max[$4]) max[$4] = $3; if (seen[$4 " " $3]++) dup[$4] = $3 }
	END { for (f in n) if (f in dup) print f ": " dup[f] " twice"
	                   else if (max[f] != n[f] - 1) print f ": " n[f] " records numbered up to " max[f] }' \
	"$WORK/records" | head -n 3 | tr '\n' ' ')
nrec=$(grep -vc '^ERR' "$WORK/records")
if [ -n "$errs" ]; then
	fail binary.records "malformed records: $errs"
elif [ "$nrec" -eq 0 ]; then
	fail binary.records "no record in $DIR/cpu*"
elif ! cmp -s "$WORK/bin.kinds" "$WORK/text.kinds"; then
	fail binary.records "record kinds differ from the text instance: files: $(tr -s ' \n' ' ' <"$WORK/bin.kinds"); text: $(tr -s ' \n' ' ' <"$WORK/text.kinds")"
elif [ -n "$badseq" ]; then
	fail binary.records "per-CPU sequence numbers are not 0..n-1: $badseq"
else
	pass binary.records
fi

# Heartbeats: on every online CPU, at the start and at the end at least;
# each counts the records its CPU wrote before it, and lost none (the
# trace lost nothing: binary.total_overruns).
# beats_short FILE MIN: the online CPUs with fewer than MIN heartbeats.
beats_short() {
	local c short=
	for c in $(online_cpus); do
		n=$(awk -v f="cpu$c" '$2 == f' "$1" | wc -l)
		[ "$n" -ge "$2" ] || short="$short cpu$c:$n"
	done
	echo "$short"
}
short=$(beats_short "$WORK/beats" 2)
wrong=$(awk '$3 != $4 || $5 != 0 { print $2 ": " $3 " records before a heartbeat that says " $4 " written, " $5 " lost" }' \
	"$WORK/beats" | head -n 3 | tr '\n' ' ')
if [ -n "$short" ]; then
	fail binary.heartbeats "online CPUs with fewer than 2 heartbeats:$short" "$WORK/beats"
elif [ -n "$wrong" ]; then
	fail binary.heartbeats "heartbeats count wrong: $wrong" "$WORK/beats"
else
	pass binary.heartbeats
fi

# A 3-second recording of a system left alone: idle CPUs have their
# heartbeats too, one at the start and about one a second.
IDLE=$WORK/idle
if ! timeout -k 5 60 "$KMEMSNOOP" -e page -o "$IDLE" -d 3 >"$WORK/idle.out" 2>"$WORK/idle.err"; then
	fail binary.heartbeats_idle "kmemsnoop -o -d 3 failed: $(head -c 200 "$WORK/idle.err" | tr '\n' ' ')"
else
	: >"$WORK/idle.beats"
	for f in "$IDLE"/cpu[0-9]*; do
		walk "$f" | grep '^HB' >>"$WORK/idle.beats"
	done
	short=$(beats_short "$WORK/idle.beats" 3)
	[ -z "$short" ]
	check $? binary.heartbeats_idle "online CPUs with fewer than 3 heartbeats in 3 seconds:$short" "$WORK/idle.beats"
fi

finish
