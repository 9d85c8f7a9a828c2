#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --user-stacks: each event's user-space call chain, in the stream, the
# recording, -i and --json.  The workload's ustack-open opens /dev/null N
# times from ustack_inner(), which ustack_outer() calls, which main calls
# (the workload is built with frame pointers); each open allocates a
# struct file (alloc_empty_file, __alloc_file before 5.13).
#   ustacks.json       --json: the N struct file allocations carry a "user_stack"
#                      whose first functions are ustack_inner, ustack_outer
#                      and main, in that order
#   ustacks.ftrace     the kernel's own trace of the same events with its
#                      userstacktrace option (a private tracefs instance):
#                      the kmem_cache_alloc events' first three user frames
#                      are the same multiset of addresses (but for those of
#                      the exiting task, which has no user stack for BPF,
#                      and ftrace's one frame)
#   ustacks.text       the text: a "<user stack trace>" after each struct
#                      file allocation, whose first frames name those functions,
#                      with the workload's file and a source line
#   ustacks.recording  -o: abi_version 6, DIR/maps holds the workload's
#                      mapping with a build id, and -i names the frames as
#                      the text does
#   ustacks.other_build  -i once the traced binary is replaced by another
#                      one (another build id): no frame is named from it,
#                      each prints as the object and its offset, which is
#                      the offset --json gave live
#   ustacks.depth      -o with --stacks --user-stacks --stack-depth 2: the
#                      header says 2, and -i shows each struct file
#                      allocation with two kernel frames, alloc_empty_file
#                      (__alloc_file) the second (the tracing machinery's
#                      are left out before the cut), and the user frames
#                      ustack_inner;ustack_outer
#   ustacks.comm       -c NAME -o of a workload exec'd as NAME that opens N
#                      files and lives a second: -i names its frames, its
#                      maps read while it lived (by the search of /proc, or
#                      at its records if they came first: the unit test
#                      procscan.comm checks the search itself)
#   ustacks.vm_recording  the committed recording made in a 5.10 VM of
#                      tools/vmtest (tests/fixtures/README.md), read here:
#                      its event lines and kernel frames are those printed
#                      live in the VM (timestamps aside), and its --json is
#                      the VM's -i --json but for the names of user frames
#                      (which need the VM's binary): each frame keeps its
#                      object and offset, and any frame named is named as
#                      in the VM
#   ustacks.usage      --user-stacks without a process to follow, or with
#                      a mode that is not the stream: exit status 2 and why
#
# vmtest: every VM: how each kernel reads user stacks from each program type.
. "$(dirname "$0")/../lib.sh"

TESTS=(ustacks.json ustacks.ftrace ustacks.text ustacks.recording ustacks.other_build
	ustacks.depth ustacks.comm ustacks.vm_recording ustacks.usage)
N=20
# A struct file's allocation: alloc_empty_file's (__alloc_file's before
# 5.13), the filp cache's (which kernels before 6.1 do not name).
FILP_JSON='"event":"kmem_cache_alloc".*"call_site":"[a-z_]*alloc_(empty_)?file\+'

require_root
require_kmemsnoop
require_workload

# ufuncs FILE: per filp allocation of kmemsnoop's text, its user frames'
# functions (offsets left out), innermost first, ";"-separated; "-" for a
# frame that names none.
ufuncs() {
	awk '
	function flush() { if (filp) print fr; filp = 0 }
	/^#/ { next }
	/^ <user stack trace>/ { user = 1; fr = ""; next }
	/^ => / { if (user) { f = $2; sub(/\+0x.*/, "", f); if (f ~ /[[\/<]/) f = "-"; fr = fr (fr == "" ? "" : ";") f }; next }
	{ flush(); user = 0; filp = / kmem_cache_alloc: / && / call_site=[a-z_]*alloc_(empty_)?file\+/ }
	END { flush() }' "$1"
}

# ufirst FILE: per struct file allocation of kmemsnoop's text, its first
# user frame as printed (after " => ").
ufirst() {
	awk '
	/^ <user stack trace>/ { if (filp) want = 1; next }
	/^ => / { if (want) { print substr($0, 5); want = 0 }; next }
	{ want = 0; filp = / kmem_cache_alloc: / && / call_site=[a-z_]*alloc_(empty_)?file\+/ }' "$1"
}

# chain_check FILE: "" when ufuncs FILE has N chains, each starting
# ustack_inner;ustack_outer;main; else why.
chain_check() {
	ufuncs "$1" | awk -v want="$N" '
	{ got++; if ($0 !~ /^ustack_inner;ustack_outer;main(;|$)/) { bad++; if (!eg) eg = $0 } }
	END {
		if (got != want || bad)
			printf "%d filp allocations with a user stack (want %d), %d not starting ustack_inner;ustack_outer;main (e.g. %s)", got, want, bad, eg
	}'
}

# json_chains FILE: per kmem_cache_alloc event of kmemsnoop's --json, its
# first three user frames' addresses (hex, no leading zeros), sorted.
json_chains() {
	grep '"event":"kmem_cache_alloc"' "$1" | sed 's/.*"user_stack":\[//' | awk '
	{
		s = ""; n = 0; line = $0
		while (n < 3 && match(line, /"addr":"0x[0-9a-f]+"/)) {
			a = substr(line, RSTART + 10, RLENGTH - 11)
			s = s (n ? ";" : "") a; n++
			line = substr(line, RSTART + RLENGTH)
		}
		print s
	}' | LC_ALL=C sort
}

# ftrace_chains FILE: the same of ftrace's trace, whose "<user stack
# trace>" entry follows its event.
ftrace_chains() {
	awk '
	function flush() { if (ev) print s; ev = 0 }
	/^#/ { next }
	/<user stack trace>/ { user = 1; s = ""; n = 0; next }
	/^ => / {
		if (user && n < 3) { a = $2; gsub(/[<>]/, "", a); sub(/^0+/, "", a); s = s (n ? ";" : "") a; n++ }
		next
	}
	{ flush(); user = 0; ev = / kmem_cache_alloc: / }
	END { flush() }' "$1" | LC_ALL=C sort
}

# --- --json, against the kernel's own trace ----------------------------------------
start_traced wj kj --user-stacks --json -e cache -- ustack-open "$N"
# oracle: 1 the kernel's trace runs, 0 it does not (no_oracle says why),
# 2 it failed (reported).
oracle=0
no_oracle=
if tracefs_setup && oracle_start orc "$PID"; then
	if echo 1 >"${ORACLE_DIR[orc]}/options/userstacktrace" 2>/dev/null; then
		oracle=1
	else
		no_oracle="tracefs has no userstacktrace option: this kernel has no ftrace user stacks (CONFIG_USER_STACKTRACE_SUPPORT)"
		oracle_remove orc
	fi
else
	no_oracle="no tracefs instance: ${ORACLE_ERR:-tracefs is not available}"
fi
wl_run wj || fail ustacks.workload "the workload failed (status ${WL_RC[wj]})" "$WORK/wj.werr"
ks_stop kj
rc=$?
grep '"event":"kmem_cache_alloc"' "$(ks_out kj)" | grep -E "$FILP_JSON" |
	sed 's/.*"user_stack":\[//' | awk '{
		s = ""; line = $0
		while (match(line, /"function":"[^"]*"/)) {
			s = s (s == "" ? "" : ";") substr(line, RSTART + 12, RLENGTH - 13)
			line = substr(line, RSTART + RLENGTH)
		}
		print s
	}' >"$WORK/j.funcs"
good=$(grep -c '^ustack_inner;ustack_outer;main' "$WORK/j.funcs")
[ $rc = 0 ] && [ "$good" = "$N" ] && [ "$(wc -l <"$WORK/j.funcs")" = "$N" ]
check $? ustacks.json "status $rc; $(wc -l <"$WORK/j.funcs") filp allocations, $good of them with user frames ustack_inner;ustack_outer;main first (want $N); e.g. $(head -n 1 "$WORK/j.funcs"), $(grep -m1 '"user_stack"' "$(ks_out kj)" | sed 's/.*"user_stack"/"user_stack"/' | head -c 300)"

# The kernel's trace, when there is one: its kmem_cache_alloc events' chains.
if [ $oracle = 1 ] && ! oracle_stop orc; then
	oracle=2
	fail ustacks.ftrace "the kernel's trace: $ORACLE_ERR"
elif [ $oracle = 1 ]; then
	# ftrace may record an event without its user stack (one that came
	# while it read another's): left out, and as many of kmemsnoop's may
	# then be missing from ftrace's, no more.
	ftrace_chains "$(oracle_file orc)" >"$WORK/orc.all"
	grep . "$WORK/orc.all" >"$WORK/orc.chains"
	nostack=$(grep -c '^$' "$WORK/orc.all")
fi
if [ $oracle = 0 ]; then
	skip ustacks.ftrace "$no_oracle"
elif [ $oracle = 2 ]; then
	: # reported above
elif ! grep -q . "$WORK/orc.chains"; then
	skip ustacks.ftrace "this kernel's ftrace recorded no user frame: it has no user stack walk for ftrace (as arm64's 5.10 and 6.1)"
else
	# An exiting task's last events (its parent's SIGCHLD) come after it
	# let its memory go: BPF gets no user stack then, ftrace the address
	# it entered the kernel at (one frame), or none either when it
	# recorded that event without its stack.  Each of kmemsnoop's events
	# without one is matched by one of those; each of kmemsnoop's chains
	# that ftrace lacks, by an event ftrace recorded without its stack.
	json_chains "$(ks_out kj)" >"$WORK/k.all"
	grep . "$WORK/k.all" >"$WORK/k.chains"
	gone=$(grep -c '^$' "$WORK/k.all")
	ms_minus "$WORK/orc.chains" "$WORK/k.chains" >"$WORK/orc.only"
	oonly=$(grep -c . "$WORK/orc.only")
	konly=$(ms_minus "$WORK/k.chains" "$WORK/orc.chains" | wc -l)
	[ "$nostack" -gt 0 ] && echo "# ustacks.ftrace: ftrace recorded $nostack event(s) without a user stack"
	[ "$(grep -c . "$WORK/orc.chains")" -ge "$N" ] && [ "$oonly" -le "$gone" ] &&
		[ $((konly + gone - oonly)) -le "$nostack" ] && ! grep -q ';' "$WORK/orc.only"
	check $? ustacks.ftrace "kmem_cache_alloc user stacks (first three frames): kmemsnoop $(wc -l <"$WORK/k.chains") and $gone without one, ftrace $(wc -l <"$WORK/orc.chains") and $nostack without one (want the same, $N at least; kmemsnoop's without one matched by ftrace's one-frame chains ($oonly) or its events without a stack; kmemsnoop's chains ftrace lacks ($konly) by the rest of those); only kmemsnoop's: '$(ms_minus "$WORK/k.chains" "$WORK/orc.chains" | head -n 2 | tr '\n' '|')', only ftrace's: '$(head -n 2 "$WORK/orc.only" | tr '\n' '|')'"
fi

# --- text ------------------------------------------------------------------------
start_traced wt kt --user-stacks -e cache -- ustack-open "$N"
wl_run wt
ks_stop kt
rc=$?
why=$(chain_check "$(ks_out kt)")
named=$(grep -A1 '^ <user stack trace>' "$(ks_out kt)" | grep -c "^ => ustack_inner+0x[0-9a-f]* \[.*workload[^]]*\] (workload\.c:[0-9]*)$")
[ $rc = 0 ] && [ -z "$why" ] && [ "$named" -ge "$N" ]
check $? ustacks.text "status $rc; $why; $named first frames as 'ustack_inner+0x.. [..workload] (workload.c:N)' (want $N at least); e.g. $(grep -m1 -A4 '^ <user stack trace>' "$(ks_out kt)" | tr '\n' '|')"

# --- the recording, then another binary in the traced one's place ----------------
# A copy of the workload, which the second check replaces.
cp "$WORKLOAD" "$WORK/wlcopy" && chmod +x "$WORK/wlcopy"
saved=$WORKLOAD
WORKLOAD=$WORK/wlcopy
start_traced wo ko --user-stacks -e cache -o "$WORK/rec" -- ustack-open "$N"
wl_run wo
ks_stop ko
rc=$?
WORKLOAD=$saved
"$KMEMSNOOP" -i "$WORK/rec" >"$WORK/rec.txt" 2>"$WORK/rec.err"
irc=$?
why=$(chain_check "$WORK/rec.txt")
abi=$(cat "$WORK/rec/abi_version" 2>/dev/null)
mapline=$(grep -E "^$PID [0-9a-f]+-[0-9a-f]+ [0-9a-f]+ [0-9a-f]{16,} $WORK/wlcopy\$" "$WORK/rec/maps" 2>/dev/null | head -n 1)
[ $rc = 0 ] && [ $irc = 0 ] && [ "$abi" = 6 ] && [ -n "$mapline" ] && [ -z "$why" ]
check $? ustacks.recording "-o: status $rc, abi_version '$abi' (want 6), maps line of the workload: '$mapline' ($(head -n 3 "$WORK/rec/maps" 2>/dev/null | tr '\n' '|'); kmemsnoop said: $(head -c 400 "$(ks_err ko)" | tr '\n' '|')); -i: status $irc, $why $(head -c 200 "$WORK/rec.err")"

# Live, the same events' first frame: its file offset, for the check below.
"$KMEMSNOOP" -i "$WORK/rec" --json 2>/dev/null | grep -E "$FILP_JSON" |
	sed -n 's/.*"user_stack":\[{"addr":"0x[0-9a-f]*","object":"[^"]*","offset":"\(0x[0-9a-f]*\)".*/\1/p' |
	sort -u >"$WORK/offsets"
cp "${RECWALK:-$TOP/tests/recwalk}" "$WORK/wlcopy" 2>/dev/null || cp "$KMEMSNOOP" "$WORK/wlcopy"
"$KMEMSNOOP" -i "$WORK/rec" >"$WORK/other.txt" 2>"$WORK/other.err"
irc=$?
ufirst "$WORK/other.txt" | sed -n "s|^$WORK/wlcopy\[+\(0x[0-9a-f]*\)\]\$|\1|p" | sort -u >"$WORK/other.offsets"
misnamed=$(grep -c '^ => [a-z_]*+0x[0-9a-f]* \[.*wlcopy\]' "$WORK/other.txt")
[ $irc = 0 ] && [ "$misnamed" = 0 ] && [ -s "$WORK/offsets" ] && cmp -s "$WORK/offsets" "$WORK/other.offsets"
check $? ustacks.other_build "-i status $irc; $misnamed frames named from the other binary (want 0); first frames' offsets $(tr '\n' ' ' <"$WORK/other.offsets") (want those named before: $(tr '\n' ' ' <"$WORK/offsets")); e.g. $(grep -m1 -A2 '^ <user stack trace>' "$WORK/other.txt" | tr '\n' '|')"

# --- --stack-depth ---------------------------------------------------------------
start_traced wd kd --stacks --user-stacks --stack-depth 2 -e cache -o "$WORK/rec2" -- ustack-open "$N"
wl_run wd
ks_stop kd
rc=$?
"$KMEMSNOOP" -i "$WORK/rec2" >"$WORK/rec2.txt" 2>"$WORK/rec2.err"
irc=$?
# Per struct file allocation: "KERNEL_FRAMES;...|USER_FRAMES;...", functions only.
awk '
function flush() { if (filp) print k "|" u; filp = 0 }
/^#/ { next }
/^ <user stack trace>/ { user = 1; next }
/^ => / { f = $2; sub(/\+0x.*/, "", f); if (user) u = u (u == "" ? "" : ";") f; else k = k (k == "" ? "" : ";") f; next }
{ flush(); user = 0; k = ""; u = ""; filp = / kmem_cache_alloc: / && / call_site=[a-z_]*alloc_(empty_)?file\+/ }
END { flush() }' "$WORK/rec2.txt" >"$WORK/rec2.chains"
good=$(grep -cE '^[a-z_0-9.]+;[a-z_]*alloc_(empty_)?file\|ustack_inner;ustack_outer$' "$WORK/rec2.chains")
[ $rc = 0 ] && [ $irc = 0 ] && grep -q '^stack_depth=2$' "$WORK/rec2/header" &&
	grep -q '^# stacks: 2 frames at most' "$WORK/rec2.txt" && [ "$good" = "$N" ] &&
	[ "$(wc -l <"$WORK/rec2.chains")" = "$N" ]
check $? ustacks.depth "-o: status $rc, header stack_depth '$(sed -n 's/^stack_depth=//p' "$WORK/rec2/header")' (want 2); -i: status $irc, $(wc -l <"$WORK/rec2.chains") struct file allocations, $good of them 'X;alloc_empty_file|ustack_inner;ustack_outer' (want $N); e.g. $(head -n 2 "$WORK/rec2.chains" | tr '\n' ' ')"

# --- -c: a process found by its name ---------------------------------------------
if ! ks_start kc -c kmsustk --user-stacks -e cache -o "$WORK/crec"; then
	fail ustacks.comm "kmemsnoop -c: $(ks_start_fail_why kc)"
else
	"$WORKLOAD" exec-as kmsustk + ustack-open "$N" + msg-rounds 1 8 1 >"$WORK/wc.out" 2>&1
	wrc=$?
	ks_stop kc
	rc=$?
	"$KMEMSNOOP" -i "$WORK/crec" >"$WORK/crec.txt" 2>"$WORK/crec.err"
	irc=$?
	why=$(chain_check "$WORK/crec.txt")
	[ $wrc = 0 ] && [ $rc = 0 ] && [ $irc = 0 ] && [ -z "$why" ]
	check $? ustacks.comm "workload status $wrc, -o $rc, -i $irc; $why; maps: $(grep -v '^#' "$WORK/crec/maps" 2>/dev/null | head -n 2 | tr '\n' '|')"
fi

# --- a recording made in a VM ------------------------------------------------------
FIX=$TOP/tests/fixtures/abi6-5.10
"$KMEMSNOOP" -i "$FIX" >"$WORK/fix.txt" 2>"$WORK/fix.err"
trc=$?
"$KMEMSNOOP" -i "$FIX" --json >"$WORK/fix.json" 2>>"$WORK/fix.err"
jrc=$?
# kernel_view FILE: the event lines (timestamps out) and kernel frames.
kernel_view() {
	awk '/^#/ { next } /^ <user stack trace>/ { user = 1; next }
	/^ => / { if (!user) print; next }
	{ user = 0; sub(/ +[0-9]+\.[0-9]+: /, " TS: "); print }' "$1"
}
# unnamed FILE: --json lines without the names of user frames.
unnamed() {
	sed -E 's/,"function":"[^"]*","function_offset":"[^"]*"(,"file":"[^"]*","line":[0-9]+)?//g' "$1"
}
# named FILE: "offset function" of each named user frame, sorted unique.
named() {
	grep -oE '"offset":"0x[0-9a-f]+","function":"[^"]*"' "$1" | sort -u
}
kernel_view "$WORK/fix.txt" >"$WORK/fix.kernel"
kernel_view "$FIX.live" >"$WORK/live.kernel"
unnamed "$WORK/fix.json" >"$WORK/fix.unnamed"
unnamed "$FIX.json" >"$WORK/vm.unnamed"
named "$FIX.json" >"$WORK/vm.named"
misnamed=$(named "$WORK/fix.json" | grep -vxF -f "$WORK/vm.named" | head -n 3 | tr '\n' ' ')
ufr=$(grep -c '^ => /kmemsnoop/tests/workload\[+0x[0-9a-f]*\]$\|^ => ustack_' "$WORK/fix.txt")
[ $trc = 0 ] && [ $jrc = 0 ] && [ -s "$WORK/fix.kernel" ] && cmp -s "$WORK/fix.kernel" "$WORK/live.kernel" &&
	[ -s "$WORK/fix.unnamed" ] && cmp -s "$WORK/fix.unnamed" "$WORK/vm.unnamed" && [ -z "$misnamed" ] &&
	[ "$ufr" -gt 0 ]
check $? ustacks.vm_recording "-i status $trc, --json $jrc; event lines and kernel frames $(cmp -s "$WORK/fix.kernel" "$WORK/live.kernel" && echo "as printed live" || echo "differ from the live text: $(diff "$WORK/live.kernel" "$WORK/fix.kernel" | head -n 4 | tr '\n' '|')"); --json $(cmp -s "$WORK/fix.unnamed" "$WORK/vm.unnamed" && echo "the VM's" || echo "differs from the VM's: $(diff "$WORK/vm.unnamed" "$WORK/fix.unnamed" | head -n 2 | cut -c1-300 | tr '\n' '|')"); named otherwise: '$misnamed'; $ufr workload frames in the text; $(head -c 200 "$WORK/fix.err")"

# --- bad usage ---------------------------------------------------------------------
"$KMEMSNOOP" --user-stacks -d 1 >/dev/null 2>"$WORK/u1.err"
rc1=$?
"$KMEMSNOOP" --user-stacks --hist -p 1 -d 1 >/dev/null 2>"$WORK/u2.err"
rc2=$?
[ $rc1 = 2 ] && grep -q 'needs -p, -t, -c or --cgroup' "$WORK/u1.err" &&
	[ $rc2 = 2 ] && grep -q 'goes with the stream' "$WORK/u2.err"
check $? ustacks.usage "without -p: status $rc1 ($(head -c 150 "$WORK/u1.err")); with --hist: status $rc2 ($(head -c 150 "$WORK/u2.err"))"

finish
