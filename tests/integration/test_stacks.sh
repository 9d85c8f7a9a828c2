#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --stacks without --allocinfo: each event's kernel stack, in the stream,
# the recording, -i, --json and the flight recorder.  The workload opens
# /dev/null N times: each open allocates the path's copy from names_cache
# in getname_flags() (do_getname() on 7.x), which the system call's path
# reached.
#   stacks.text       -p PID --stacks -e cache: every event line is followed
#                     by frames; exactly N kmem_cache_alloc events whose call
#                     site is a getname function, each with that function
#                     among its frames and an open system call's further out
#   stacks.ftrace     the kernel's own trace of the same events with its
#                     stacktrace option (a private tracefs instance, as
#                     test_oracle's): the kmem_cache_alloc events' stacks
#                     are the same multiset of function chains, once the
#                     tracing machinery's frames that begin ftrace's are
#                     left out, but for events ftrace recorded without a
#                     stack (as many of kmemsnoop's may be unmatched)
#   stacks.recording  -o with --stacks: abi_version 6, and -i prints the
#                     frames as the text does (the getname check above)
#   stacks.json       --json: the getname events carry a "stack" array that
#                     holds the call site's function
#   stacks.unknown_feature  the recording with its stack features' id
#                     changed to one no reader knows (the ABI: skipped):
#                     -i prints the same event lines, without frames
#   stacks.flight     --flight --stacks: a SIGUSR1 dump's getname events
#                     have their frames
#   stacks.stat       --stat --stacks -e kmalloc of a workload holding M
#                     SysV messages: the table per stack has a row whose
#                     frames hold load_msg, with M hits, all M still alive
#                     at the end
#   stacks.stat_recording  the same from a recording (-o --stacks, then -i
#                     --stat --stacks), and --folded's line of that stack
#                     ends in the allocator below load_msg and counts the
#                     row's bytes
#
# vmtest: every VM: how each kernel unwinds from each program type.
. "$(dirname "$0")/../lib.sh"

TESTS=(stacks.text stacks.ftrace stacks.recording stacks.json
	stacks.unknown_feature stacks.flight stacks.stat stacks.stat_recording)
N=20
M=12

require_root
require_kmemsnoop
require_workload

# kstacks FILE: per event line of kmemsnoop's (or ftrace's) text, a line
# "EVENT<TAB>CALL_SITE<TAB>FRAMES<TAB>F1;F2;...": the call site's function
# and the frames' (offsets left out), innermost first.  ftrace's
# "<stack trace>" entry belongs to the event before it.
kstacks() {
	awk '
	function flush() { if (have) print ev "\t" site "\t" n "\t" fr; have = 0 }
	/^#/ || /<stack trace>/ { next }
	/^ => / { f = $2; sub(/\+.*/, "", f); fr = fr (n ? ";" : "") f; n++; next }
	{
		flush(); have = 1; n = 0; fr = ""; ev = ""; site = "-"
		for (i = 1; i <= NF; i++) {
			if (ev == "" && $i ~ /^[a-z_]+:$/) ev = substr($i, 1, length($i) - 1)
			if ($i ~ /^call_site=/) { site = substr($i, 11); sub(/\+.*/, "", site) }
		}
	}
	END { flush() }' "$1"
}

# getname_check TABLE: "" when TABLE (kstacks') has exactly N getname
# allocations, each with its call site's function among its frames and an
# open system call's further out; else why.
getname_check() {
	awk -F'\t' -v want="$N" '
	$1 == "kmem_cache_alloc" && $2 ~ /getname/ {
		got++
		k = split($4, f, ";"); at = 0; open = 0
		for (i = 1; i <= k; i++) {
			if (!at && f[i] == $2) at = i
			if (at && i > at && f[i] ~ /sys_open/) open = i
		}
		if (!at) nosite++
		else if (!open) noopen++
	}
	END {
		if (got != want || nosite || noopen)
			printf "%d getname allocations (want %d), %d without their call site among the frames, %d without an open system call above it", got, want, nosite, noopen
	}' "$1"
}

# chains TABLE: the kmem_cache_alloc events' frames, the tracing
# machinery's that ftrace's stacks begin with left out (kmemsnoop leaves
# them out itself), sorted.
chains() {
	awk -F'\t' '$1 == "kmem_cache_alloc" {
		k = split($4, f, ";"); s = ""; on = 0
		for (i = 1; i <= k; i++) {
			if (!on && f[i] ~ /^(trace_|__traceiter_|perf_trace_|bpf_|__bpf_)/) continue
			on = 1; s = s (s == "" ? "" : ";") f[i]
		}
		print s
	}' "$1" | LC_ALL=C sort
}

# --- text, against the kernel's own trace ----------------------------------------
start_traced w k --stacks -e cache -- openclose "$N"
# The kernel's trace of the workload's pid, with a kernel stack per event,
# set up while the workload waits to be let go.
oracle=0
if tracefs_setup && oracle_start orc "$PID" &&
	echo 1 >"${ORACLE_DIR[orc]}/options/stacktrace"; then
	oracle=1
fi
wl_run w || fail stacks.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
ks_stop k
rc=$?
kstacks "$(ks_out k)" >"$WORK/k.tab"
bare=$(awk -F'\t' '$3 == 0' "$WORK/k.tab" | wc -l)
why=$(getname_check "$WORK/k.tab")
[ $rc = 0 ] && [ "$bare" = 0 ] && [ -z "$why" ] && [ -s "$WORK/k.tab" ]
check $? stacks.text "status $rc; $(wc -l <"$WORK/k.tab") events, $bare without frames; $why; e.g. $(grep -m1 -A3 'kmem_cache_alloc:' "$(ks_out k)" | tr '\n' '|')"

if [ $oracle = 0 ]; then
	skip stacks.ftrace "no tracefs instance with the stacktrace option: ${ORACLE_ERR:-tracefs is not available}"
elif ! oracle_stop orc; then
	fail stacks.ftrace "the kernel's trace: $ORACLE_ERR"
else
	kstacks "$(oracle_file orc)" >"$WORK/orc.tab"
	chains "$WORK/k.tab" >"$WORK/k.chains"
	# ftrace may record an event without its stack (7.x, where the task can
	# be preempted between the two): those are left out, and as many of
	# kmemsnoop's may be missing from ftrace's then, no more.
	chains "$WORK/orc.tab" | grep -v '^$' >"$WORK/orc.chains"
	nostack=$(chains "$WORK/orc.tab" | grep -c '^$')
	[ "$nostack" -gt 0 ] && echo "# stacks.ftrace: ftrace recorded $nostack event(s) without a stack"
	[ "$(wc -l <"$WORK/orc.chains")" -ge "$N" ] &&
		[ -z "$(ms_minus "$WORK/orc.chains" "$WORK/k.chains")" ] &&
		[ "$(ms_minus "$WORK/k.chains" "$WORK/orc.chains" | wc -l)" -le "$nostack" ] &&
		[ "$(wc -l <"$WORK/k.chains")" = $(($(wc -l <"$WORK/orc.chains") + nostack)) ]
	check $? stacks.ftrace "kmem_cache_alloc stacks: kmemsnoop $(wc -l <"$WORK/k.chains"), ftrace $(wc -l <"$WORK/orc.chains") and $nostack without a stack (want the same, $N at least); only kmemsnoop's: '$(ms_minus "$WORK/k.chains" "$WORK/orc.chains" | head -n 2 | tr '\n' '|')', only ftrace's: '$(ms_minus "$WORK/orc.chains" "$WORK/k.chains" | head -n 2 | tr '\n' '|')'"
fi

# --- the recording, and a reader that does not know the feature ------------------
start_traced wo ko --stacks -e cache -o "$WORK/rec" -- openclose "$N"
wl_run wo
ks_stop ko
rc=$?
"$KMEMSNOOP" -i "$WORK/rec" >"$WORK/rec.txt" 2>"$WORK/rec.err"
irc=$?
kstacks "$WORK/rec.txt" >"$WORK/rec.tab"
why=$(getname_check "$WORK/rec.tab")
abi=$(cat "$WORK/rec/abi_version" 2>/dev/null)
[ $rc = 0 ] && [ $irc = 0 ] && [ "$abi" = 6 ] && [ -z "$why" ]
check $? stacks.recording "-o: status $rc, abi_version '$abi' (want 6); -i: status $irc, $why $(head -c 200 "$WORK/rec.err")"

if ! command -v python3 >/dev/null; then
	skip stacks.unknown_feature "python3 (which rewrites the recording) is not installed"
else
	cp -r "$WORK/rec" "$WORK/rec99"
	# Each record: u8 event id, u8 type id, u16 size, ...; allocation and
	# free records' features after the core (24 bytes) and, for an
	# allocation, its sizes (24 more): u16 size, u8 id.  Id 12 becomes 99.
	renamed=$(python3 - "$WORK"/rec99/cpu* <<'EOF'
import struct, sys
n = 0
for path in sys.argv[1:]:
    data = bytearray(open(path, 'rb').read())
    off = 0
    while off + 24 <= len(data):
        ev, size = data[off], struct.unpack_from('<H', data, off + 2)[0]
        if size < 24 or off + size > len(data):
            break
        if ev <= 1:
            f = off + (48 if ev == 0 else 24)
            while f + 3 <= off + size:
                fsize = struct.unpack_from('<H', data, f)[0]
                if fsize < 3:
                    break
                if data[f + 2] == 12:
                    data[f + 2] = 99
                    n += 1
                f += fsize
        off += size
    open(path, 'wb').write(data)
print(n)
EOF
)
	"$KMEMSNOOP" -i "$WORK/rec99" >"$WORK/rec99.txt" 2>"$WORK/rec99.err"
	irc=$?
	frames=$(grep -c '^ => ' "$WORK/rec99.txt")
	grep -v '^ => ' "$WORK/rec.txt" >"$WORK/rec.lines"
	[ $irc = 0 ] && [ "${renamed:-0}" -gt 0 ] && [ "$frames" = 0 ] &&
		cmp -s "$WORK/rec.lines" "$WORK/rec99.txt"
	check $? stacks.unknown_feature "$renamed stack features renamed to id 99: -i status $irc, $frames frame lines (want 0), the event lines $(cmp -s "$WORK/rec.lines" "$WORK/rec99.txt" && echo the same || echo differ) ($(head -c 200 "$WORK/rec99.err"))"
fi

# --- --json ------------------------------------------------------------------------
start_traced wj kj --stacks --json -e cache -- openclose "$N"
wl_run wj
ks_stop kj
rc=$?
with=$(grep '"event":"kmem_cache_alloc"' "$(ks_out kj)" | grep '"call_site":"[a-z_]*getname' |
	grep -cE '"stack":\["[^]]*getname')
[ $rc = 0 ] && [ "$with" = "$N" ]
check $? stacks.json "status $rc; $with getname allocations with a stack that names the call site (want $N); e.g. $(grep -m1 '"stack"' "$(ks_out kj)" | head -c 300)"

# --- the flight recorder -----------------------------------------------------------
start_traced wf kf --stacks --flight -e cache -o "$WORK/fl" -- openclose "$N"
wl_run wf
kill -USR1 "${KS_PID[kf]}"
end=$((SECONDS + 20))
until grep -q 'flight recorder dump' "$(ks_err kf)" || [ $SECONDS -ge $end ]; do nap 0.1; done
ks_stop kf
rc=$?
dump=$(sed -n 's/^kmemsnoop: flight recorder dump (.*, in \(.*\) (copied in .*/\1/p' "$(ks_err kf)" | head -n 1)
if [ -z "$dump" ]; then
	fail stacks.flight "no dump: $(head -c 300 "$(ks_err kf)")"
else
	"$KMEMSNOOP" -i "$dump" >"$WORK/fl.txt" 2>/dev/null
	kstacks "$WORK/fl.txt" >"$WORK/fl.tab"
	why=$(getname_check "$WORK/fl.tab")
	[ $rc = 0 ] && [ -z "$why" ]
	check $? stacks.flight "status $rc; the dump: $why"
fi

# --- --stat's table per stack --------------------------------------------------------
# stack_row FILE FUNCTION: "BYTES HIT ALIVE_BYTES ALIVE" of the first row of
# --stat's table per stack whose frames name FUNCTION.
stack_row() {
	awk -v fn="$2" '
	/^SLAB ALLOCATIONS PER STACK/ { on = 1; next }
	!on { next }
	/^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$/ { row = $1 " " $2 " " $3 " " $4; next }
	/^ +=> / { f = $2; sub(/\+.*/, "", f); if (f == fn && row != "") { print row; exit } next }
	/^$/ { on = 0 }' "$1"
}

# row_check ROW: "" when ROW (stack_row's) has M hits, M alive; else why.
row_check() {
	set -- $1
	[ "$2" = "$M" ] && [ "$4" = "$M" ] && [ "$1" -gt 0 ] && [ "$3" = "$1" ] && return 0
	echo "the load_msg row: '$*' (want $M hits, $M alive, all its bytes)"
}

if ! msg_hold s 100 "$M" --stat --stacks -e kmalloc; then
	fail stacks.stat "$WHY"
else
	ks_stop ks
	rc=$?
	wl_kill ws
	row=$(stack_row "$(ks_out ks)" load_msg)
	why=$(row_check "$row")
	[ $rc = 0 ] && [ -z "$why" ]
	check $? stacks.stat "status $rc; $why; $(sed -n '/^SLAB ALLOCATIONS PER STACK/,/^$/p' "$(ks_out ks)" | head -n 12 | tr '\n' '|')"
fi

if ! msg_hold r 100 "$M" --stacks -e kmalloc -o "$WORK/mrec"; then
	fail stacks.stat_recording "$WHY"
else
	ks_stop kr
	rc=$?
	wl_kill wr
	"$KMEMSNOOP" -i "$WORK/mrec" --stat --stacks >"$WORK/mrec.stat" 2>"$WORK/mrec.err"
	irc=$?
	"$KMEMSNOOP" -i "$WORK/mrec" --stat --stacks --folded >"$WORK/mrec.folded" 2>>"$WORK/mrec.err"
	frc=$?
	row=$(stack_row "$WORK/mrec.stat" load_msg)
	why=$(row_check "$row")
	# "...;load_msg;__kmalloc...;... BYTES": the allocation's path ends
	# below load_msg, in the allocator.
	folded=$(grep -E ';load_msg;[^ ]*(kmalloc|alloc)[^ ;]* [0-9]+$' "$WORK/mrec.folded" | head -n 1)
	[ $rc = 0 ] && [ $irc = 0 ] && [ $frc = 0 ] && [ -z "$why" ] &&
		[ "${folded##* }" = "${row%% *}" ]
	check $? stacks.stat_recording "-o status $rc, -i --stat status $irc, --folded status $frc; $why; folded line '$folded' (want the row's $(echo "$row" | cut -d' ' -f1) bytes) $(head -c 200 "$WORK/mrec.err")"
fi

finish
