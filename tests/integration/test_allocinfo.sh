#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --allocinfo.  The workload holds COUNT SysV messages of SIZE bytes: each
# is one kmalloc from load_msg of the next size class of 48 + SIZE (see
# tests/workload.c), so while they are held the load_msg line of
# "kmemsnoop --allocinfo -p PID" must say exactly COUNT calls and COUNT x
# class bytes, and once they are received and the queue removed, 0 and 0.
# Also: --allocinfo=total, --stacks, --folded, pages (pipe writes, tagged
# by their caller found in the stack), -e and --min-size, a full pointer
# table reported in the output (and, once released, nothing it tracked
# left), --vmlinux errors and bad usage.
. "$(dirname "$0")/../lib.sh"

SIZE=200
COUNT=20
TESTS=(allocinfo.format allocinfo.held allocinfo.released allocinfo.fallback_tag
	allocinfo.sort_numfmt allocinfo.total allocinfo.stacks allocinfo.folded
	allocinfo.pages allocinfo.events_filter allocinfo.size_filter allocinfo.ptrs_full
	allocinfo.ptrs_full_release
	allocinfo.vmlinux_nodwarf allocinfo.vmlinux_other allocinfo.usage)

require_root
require_kmemsnoop
require_workload

CLASS=$(kmalloc_class $((48 + SIZE)))
WANT_BYTES=$((COUNT * CLASS))
HEADER=$AI_HEADER

# msg_line: from a table on stdin, "BYTES CALLS" of the load_msg call site
# (func:load_msg, or func:alloc_msg with DWARF: alloc_msg is inlined into
# load_msg); "none" when there is none.
msg_line() { ai_func_sum 'load_msg|alloc_msg'; }

# hold ID KS_ARGS...: msg_hold (lib.sh) with this test's SIZE and COUNT.
hold() {
	local id=$1
	shift
	msg_hold "$id" "$SIZE" "$COUNT" "$@"
}

# release ID: let the workload receive and remove, then wait for
# kmemsnoop to end with it (-p).  Status: kmemsnoop's.
release() {
	wl_go "w$1"
	wl_wait "w$1"
	ks_wait "k$1" 20
}

# --- held and released, in one session with an interval -----------------
if hold a --allocinfo 0.3; then
	out=$(ks_out ka)
	n=$(ai_ntables "$out")
	# A table that began after the messages were held, complete.
	if ai_wait_tables "$out" $((n + 2)) 20; then
		got=$(ai_table "$out" $((n + 1)) | msg_line)
		counts_within_misses allocinfo.held "$got" "$COUNT" "$CLASS" "$(ai_missed "$out" $((n + 1)))"
		check $? allocinfo.held "load_msg line while $COUNT messages of $SIZE bytes are held: got '$got', want '$WANT_BYTES $COUNT' (table: $(ai_table "$out" $((n + 1)) | grep -E 'func:(load|alloc)_msg' | first_lines 3))"
	else
		fail allocinfo.held "no table printed every 0.3 s after the messages were held" "$out" "$(ks_err ka)"
	fi
	release a
	rc=$?
	last=$(ai_ntables "$out")
	got=$(ai_table "$out" "$last" | msg_line)
	[ $rc -eq 0 ] && [ "$got" = "0 0" ]
	check $? allocinfo.released "after msgrcv and IPC_RMID the last table's load_msg line should be '0 0', got '$got' (kmemsnoop status $rc; $(head -c 300 "$(ks_err ka)" | tr '\n' ' '))"

	# Every table: the two header lines, then "%12lli %8llu <tag> " lines
	# (or "# kmemsnoop: " notes).
	bad=$(awk -v h="$HEADER" '
		$0 == h { expect = 1; next }
		expect == 1 { if ($0 != "#     <size>  <calls> <tag info>") print "header: " $0; expect = 0; next }
		/^# kmemsnoop: / { next }
		!/^ *-?[0-9]+ +-?[0-9]+ [^ ].* $/ { print }
		length($0) < 23 { print "short: " $0 }' "$out" | head -n 3)
	[ -n "$bad" ] && fail allocinfo.format "malformed lines: $bad" ||
		{ head -n1 "$out" | grep -qx "$HEADER"; check $? allocinfo.format "the output does not start with '$HEADER': $(head -n1 "$out")"; }

	# From any table: the first may have been printed before the messages
	# were sent (a busy machine).
	tag=$(grep -v '^#' "$out" | awk '$NF ~ /^func:(load_msg|alloc_msg)$/ { $1 = ""; $2 = ""; sub(/^ +/, ""); print; exit }')
	if grep -q 'no debug information' "$(ks_err ka)"; then
		[[ "$tag" =~ ^load_msg\+0x[0-9a-f]+\ func:load_msg\ ?$ ]]
		check $? allocinfo.fallback_tag "without kernel debug information the tag should be 'load_msg+0x... func:load_msg', got '$tag'"
	else
		skip allocinfo.fallback_tag "this machine has kernel debug information"
	fi

	if ! command -v numfmt >/dev/null; then
		skip allocinfo.sort_numfmt "no numfmt here (GNU coreutils; the test VMs' busybox has none)"
	else
		# The README's pipeline, over as many lines as the tables have rows
		# (a -p session's few sites): the header lines sort first.
		rows=$(grep -cE '^ *-?[0-9]+ +[0-9]+ ' "$out")
		k=$((rows < 5 ? rows : 5))
		sorted=$(sort -g "$out" | tail -n "$k" | numfmt --to=iec 2>&1)
		[ $? -eq 0 ] && [ "$k" -ge 2 ] && [ "$(echo "$sorted" | wc -l)" -eq "$k" ] && echo "$sorted" | tail -n1 | grep -Eq '^ *[0-9.]+[KMG]? +[0-9]+ '
		check $? allocinfo.sort_numfmt "sort -g | tail -n $k | numfmt --to=iec ($rows rows): $(echo "$sorted" | tail -n 2 | first_lines 2)"
	fi
else
	fail_rest allocinfo.held allocinfo.released allocinfo.format allocinfo.fallback_tag allocinfo.sort_numfmt "$WHY"
fi

# --- total: allocated during the session, freed or not -------------------
if wl_start wt msg "$SIZE" 30 && ks_start kt --allocinfo=total -p "${WL_PID[wt]}"; then
	wl_run wt
	ks_wait kt 20
	rc=$?
	got=$(ai_table "$(ks_out kt)" 1 | msg_line)
	[ $rc -eq 0 ] && counts_within_misses allocinfo.total "$got" 30 "$CLASS" "$(ai_missed "$(ks_out kt)")"
	check $? allocinfo.total "30 messages sent and received: want '$((30 * CLASS)) 30', got '$got' (status $rc)"
else
	fail allocinfo.total "start: $(ks_start_fail_why kt)"
fi

# --- --stacks: the entry whose frames hold load_msg ----------------------
if hold s --allocinfo --stacks; then
	ks_stop ks
	rc=$?
	# Entries tagged by load_msg's call, with load_msg among their frames.
	got=$(awk '/^ *-?[0-9]+ +-?[0-9]+ / { b = $1; c = $2; mine = $NF ~ /^func:(load|alloc)_msg$/; next }
		mine && /^        load_msg\+0x/ { tb += b; tc += c; n++ }
		END { if (n) print tb, tc; else print "none" }' "$(ks_out ks)")
	[ $rc -eq 0 ] && counts_within_misses allocinfo.stacks "$got" "$COUNT" "$CLASS" "$(ai_missed "$(ks_out ks)")"
	check $? allocinfo.stacks "stacks with a load_msg frame while held: want '$WANT_BYTES $COUNT', got '$got' (status $rc)"
	wl_kill ws
else
	fail allocinfo.stacks "$WHY"
fi

if hold f --allocinfo --stacks --folded; then
	ks_stop kf
	rc=$?
	# load_msg's own kmalloc: one (allocator) frame after load_msg, also
	# where classic tracepoint programs take the stack (7.x).
	got=$(awk '/;load_msg;[^;]+ -?[0-9]+$/ { n += $NF } END { print n + 0 }' "$(ks_out kf)")
	bad=$(grep -Evc '^[^ ;]+(;[^;]+)* -?[0-9]+$' "$(ks_out kf)")
	[ $rc -eq 0 ] && [ "$got" = "$WANT_BYTES" ] && [ "$bad" -eq 0 ]
	check $? allocinfo.folded "folded lines through load_msg: want $WANT_BYTES bytes, got $got; $bad lines not 'a;b;c N' (status $rc): $(head -n 2 "$(ks_out kf)" | cut -c1-200 | first_lines 2)"
	wl_kill wf
else
	fail allocinfo.folded "$WHY"
fi

# --- pages: pipe writes, tagged by the pipe's write function ---------------
PAGES=32
if wl_start wp pipe "$PAGES" && ks_start kp --allocinfo=total -e page -p "${WL_PID[wp]}"; then
	wl_run wp
	ks_wait kp 20
	got=$(ai_table "$(ks_out kp)" 1 | awk '$NF ~ /pipe_write$/ { b += $1; c += $2 } END { print b + 0, c + 0 }')
	counts_within_misses allocinfo.pages "$got" "$PAGES" 4096 "$(ai_missed "$(ks_out kp)")" || [ "$PAGE_SIZE" != 4096 ]
	check $? allocinfo.pages "$PAGES one-page pipe writes: want '$((PAGES * 4096)) $PAGES' on the *pipe_write line, got '$got': $( (ai_table "$(ks_out kp)" 1 | sort -g | tail -n 3; grep '^# kmemsnoop' "$(ks_out kp)") | first_lines 5)"
else
	fail allocinfo.pages "start: $(ks_start_fail_why kp)"
fi

# --- filters ------------------------------------------------------------------
if hold e --allocinfo -e cache; then
	ks_stop ke
	rc=$?
	got=$(ai_table "$(ks_out ke)" 1 | msg_line)
	ncache=$(ai_table "$(ks_out ke)" 1 | grep -c .)
	[ $rc -eq 0 ] && [ "$got" = none ]
	check $? allocinfo.events_filter "-e cache: no load_msg (kmalloc) line expected, got '$got' ($ncache lines, status $rc)"
	wl_kill we
else
	fail allocinfo.events_filter "$WHY"
fi

if hold z --allocinfo --min-size $((48 + SIZE + 1)); then
	ks_stop kz
	rc=$?
	got=$(ai_table "$(ks_out kz)" 1 | msg_line)
	[ $rc -eq 0 ] && [ "$got" = none ]
	check $? allocinfo.size_filter "--min-size $((48 + SIZE + 1)): no load_msg line expected for $((48 + SIZE))-byte requests, got '$got' (status $rc)"
	wl_kill wz
else
	fail allocinfo.size_filter "$WHY"
fi

# --- a pointer table too small: what is missing is said in the output ---------
if hold q --allocinfo --max-ptrs 4; then
	ks_stop kq
	rc=$?
	t=$(ai_table "$(ks_out kq)" 1)
	got=$(echo "$t" | msg_line)
	note=$(echo "$t" | grep -E '^# kmemsnoop: not counted: [0-9]+ allocations \([0-9]+ bytes\): the pointer table was full' | head -n1)
	calls=${got#* }
	[ $rc -eq 0 ] && [ -n "$note" ] && { [ "$got" = none ] || [ "$calls" -lt "$COUNT" ]; }
	check $? allocinfo.ptrs_full "--max-ptrs 4: expected a '# kmemsnoop: not counted: ...' line and fewer than $COUNT load_msg calls; note '$note', load_msg '$got' (status $rc)"
	wl_kill wq
else
	fail allocinfo.ptrs_full "$WHY"
fi

# --- a full table (or, with BPF atomics, a full bucket of it) loses no free:
# what was tracked is released exactly, what was not is said ---------------------
if hold r --allocinfo --max-ptrs 4 0.2; then
	release r
	rc=$?
	out=$(ks_out kr)
	got=$(ai_table "$out" "$(ai_ntables "$out")" | msg_line)
	notes=$(grep -c '^# kmemsnoop: not counted: [0-9]* allocations ([0-9]* bytes): the pointer table was full' "$out")
	[ $rc -eq 0 ] && { [ "$got" = "0 0" ] || [ "$got" = none ]; } && [ "$notes" -gt 0 ]
	check $? allocinfo.ptrs_full_release "--max-ptrs 4, messages held then released: want the last load_msg line '0 0' or none and 'not counted' notes, got '$got', $notes notes (status $rc)"
else
	fail allocinfo.ptrs_full_release "$WHY"
fi

# --- --vmlinux -------------------------------------------------------------------
NODWARF=$TOP/tests/nodwarf_fixture
OTHER=$TOP/tests/dwarf_fixture
run_ks() {
	local name=$1
	shift
	timeout -k 5 20 "$KMEMSNOOP" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null
	RC=$?
}
if [ -x "$NODWARF" ] && [ -x "$OTHER" ]; then
	run_ks nd --allocinfo --vmlinux "$NODWARF" -d 1
	[ $RC -eq 1 ] && [ "$(grep -c '' "$WORK/nd.err")" -eq 1 ] &&
		grep -q "^kmemsnoop: $NODWARF has no DWARF debug information" "$WORK/nd.err"
	check $? allocinfo.vmlinux_nodwarf "--vmlinux on a file without DWARF: want exit 1 and one line saying so, got $RC: $(head -c 300 "$WORK/nd.err")"
	run_ks ot --allocinfo --vmlinux "$OTHER" -d 1
	[ $RC -eq 1 ] && [ "$(grep -c '' "$WORK/ot.err")" -eq 1 ] &&
		grep -q "^kmemsnoop: $OTHER is not the running kernel's vmlinux" "$WORK/ot.err"
	check $? allocinfo.vmlinux_other "--vmlinux on another program's ELF: want exit 1 and one line saying so, got $RC: $(head -c 300 "$WORK/ot.err")"
else
	skip_rest allocinfo.vmlinux_nodwarf allocinfo.vmlinux_other "tests/dwarf_fixture or tests/nodwarf_fixture missing (run make)"
fi

# --- bad usage: exit 2, one line ---------------------------------------------------
bad=""
for args in "--allocinfo=bogus" "--stacks --hist" "--folded --allocinfo" "--allocinfo 0" \
	"--allocinfo 1 0" "--allocinfo 1 2 3" "--allocinfo total" "--allocinfo --max-ptrs 0" \
	"--allocinfo -o $WORK/x" "--allocinfo -b 1M" "--vmlinux /x" "5" \
	"--allocinfo=total --max-ptrs 1K" "--allocinfo --max-stacks abc"; do
	# shellcheck disable=SC2086
	run_ks usage $args
	if [ $RC -ne 2 ] || [ "$(grep -c '' "$WORK/usage.err")" -ne 1 ]; then
		bad="$bad [$args: exit $RC, $(head -c 120 "$WORK/usage.err" | tr '\n' ' ')]"
	fi
done
[ -z "$bad" ]
check $? allocinfo.usage "bad usage should exit 2 with one line:$bad"

finish
