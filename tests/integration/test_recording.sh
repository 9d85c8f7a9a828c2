#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A recording describes itself.  kmemsnoop -o writes a header file (its
# keys must be this machine's: kernel release, architecture, page size,
# possible CPUs, boot id, the clock, start < stop, the counts of the
# summary, the command line) and the kernel's GFP flag names (gfp), both
# 0600 with no temporary file left; kmemsnoop -i prints the header as "#"
# lines, then the lines a text instance printed live for the same events
# (as test_binary compares them), and names GFP flags with the recording's
# table (a table with a renamed flag shows the new name).  --json prints no
# header.  The committed ABI-3 recording of tests/fixtures (made before
# there were header and gfp files) reads to its committed text: exactly
# with its kernel's GFP table added as a gfp file, and, without it, with
# one note on stderr and the running kernel's names (exactly the expected
# text when this kernel names flags as that one did).  A truncated header
# or a corrupt gfp file is an error: exit 1, one line, nothing on stdout.
# The committed ABI-4 recording made in a 5.10 VM of tools/vmtest
# (tests/fixtures/README.md) reads, on any kernel, to the VM's kernel in
# its "#" lines and to exactly the lines the VM printed live for the same
# events (timestamps aside: each instance takes its own), with that
# kernel's GFP names and the comm of each moment (the workload renames
# itself half way).  The recording's tracepoints file holds tracefs's
# format of each tracepoint traced, byte for byte, and none of those not
# traced.
#
# vmtest: in arm64/newest: -o and -i are user space over records the other
# tests decode on every kernel: the host runs it on x86, this VM on arm64.
. "$(dirname "$0")/../lib.sh"

TESTS=(recording.fixture recording.fixture_note recording.fixture_gfp recording.record
	recording.header_keys recording.header_counts recording.files recording.same_events
	recording.header_lines recording.gfp_used recording.json recording.bad_header
	recording.bad_gfp recording.vm_fixture recording.vm_fixture_header
	recording.tracepoints)
COUNT=30
FIXTURE=$TOP/tests/fixtures/abi3

require_root
require_kmemsnoop
require_workload

# header_value DIR KEY: the value of KEY in DIR/header (empty when absent).
header_value() {
	sed -n "s/^$2=//p" "$1/header" 2>/dev/null | tail -n 1
}

# possible_cpus: how many CPUs /sys/devices/system/cpu/possible lists.
possible_cpus() {
	local r n=0
	for r in $(tr ',' ' ' </sys/devices/system/cpu/possible); do
		n=$((n + ${r#*-} - ${r%-*} + 1))
	done
	echo "$n"
}

# page_size: bytes per page (getconf, else the header's own, unchecked:
# the test VMs' busybox may have no getconf).
page_size() {
	getconf PAGESIZE 2>/dev/null || header_value "$DIR" page_size
}

# without_gfp FILE: the lines with their gfp_flags= field removed.
without_gfp() {
	sed -E 's/ gfp_flags=[^ ]*//' "$1"
}

# --- a new recording, and a text instance of the same events
DIR=$WORK/rec
T0=$(date +%s)
start_traced w kb -o "$DIR" -- msg 200 "$COUNT" + openclose 20
if ! ks_start kt -p "$PID"; then
	fail_rest "${TESTS[@]}" "kmemsnoop (text): $(ks_start_fail_why kt)"
	finish
fi
ks_watch_misses kb
ks_watch_misses kt
wl_run w || fail recording.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
ks_check_stop recording.record kb
ks_stop kt
T1=$(date +%s)
mb=$(ks_misses kb)
mt=$(ks_misses kt)

timeout -k 5 60 "$KMEMSNOOP" -i "$DIR" >"$WORK/decoded" 2>"$WORK/decoded.err"
rc=$?

# --- the header's keys
bad=
expect() { # KEY VALUE
	local v
	v=$(header_value "$DIR" "$1")
	[ "$v" = "$2" ] || bad="$bad $1='$v' (expected '$2')"
}
expect kmemtrace_abi 6
expect kernel_release "$(uname -r)"
expect arch "$(uname -m)"
expect page_size "$(page_size)"
expect possible_cpus "$(possible_cpus)"
expect boot_id "$(cat /proc/sys/kernel/random/boot_id)"
expect clock CLOCK_MONOTONIC
expect kmemsnoop_version "$("$KMEMSNOOP" --version | sed 's/^kmemsnoop //')"
[ "$(head -n 1 "$DIR/header" 2>/dev/null)" = "kmemsnoop-recording 1" ] || bad="$bad first line '$(head -n 1 "$DIR/header" 2>/dev/null)'"
header_value "$DIR" command | grep -qF -- "-p $PID -o $DIR" || bad="$bad command='$(header_value "$DIR" command)'"
start=$(header_value "$DIR" start_ns)
stop=$(header_value "$DIR" stop_ns)
offset=$(header_value "$DIR" clock_realtime_offset_ns)
if [ -z "$start" ] || [ -z "$stop" ] || [ -z "$offset" ] || [ "$start" -ge "$stop" ]; then
	bad="$bad start_ns='$start' stop_ns='$stop' clock_realtime_offset_ns='$offset'"
else
	# The start in wall-clock time: between the dates taken around the run.
	wall=$(((start + offset) / 1000000000))
	[ "$wall" -ge "$((T0 - 1))" ] && [ "$wall" -le "$((T1 + 1))" ] ||
		bad="$bad start in wall-clock seconds $wall, not within $T0..$T1"
fi
[ -z "$bad" ]
check $? recording.header_keys "header:$bad" "$DIR/header"

# --- its counts: the summary's, and what -i prints
sum=$(ks_summary kb)
set -- $sum
written=$(grep -cv '^#' "$WORK/decoded")
[ -n "$sum" ] && [ "$(header_value "$DIR" events_written)" = "$1" ] && [ "$1" = "$written" ] &&
	[ "$(header_value "$DIR" events_lost)" = "$2" ] &&
	[ "$(header_value "$DIR" bytes_lost)" = "$3" ] &&
	[ "$(header_value "$DIR" events_lost)" = "$(cat "$DIR/total_overrun_events")" ] &&
	[ -n "$(header_value "$DIR" events_missed)" ]
check $? recording.header_counts "header events_written=$(header_value "$DIR" events_written) events_lost=$(header_value "$DIR" events_lost) bytes_lost=$(header_value "$DIR" bytes_lost) events_missed=$(header_value "$DIR" events_missed); summary '$sum'; -i printed $written events"

# --- the files: 0600, a gfp table, no temporary file left
bad=
for f in header gfp; do
	m=$(stat -c %a "$DIR/$f" 2>/dev/null)
	[ "$m" = 600 ] || bad="$bad $f mode '$m'"
done
grep -qx '0x[0-9a-f]* GFP_KERNEL' "$DIR/gfp" 2>/dev/null || bad="$bad no GFP_KERNEL line in gfp"
ls -A "$DIR" | grep -q '\.tmp$' && bad="$bad left: $(ls -A "$DIR" | grep '\.tmp$' | tr '\n' ' ')"
[ -z "$bad" ]
check $? recording.files "$bad" "$DIR/gfp"

# --- the tracepoints' formats: each section as tracefs has it
bad=
TP=$DIR/tracepoints
[ "$(stat -c %a "$TP" 2>/dev/null)" = 600 ] || bad="$bad mode '$(stat -c %a "$TP" 2>/dev/null)'"
[ "$(head -n 1 "$TP" 2>/dev/null)" = "kmemsnoop-tracepoints 1" ] || bad="$bad first line '$(head -n 1 "$TP" 2>/dev/null)'"
if [ -d /sys/kernel/tracing/events/kmem ]; then
	sections=$(grep -c '^event: ' "$TP")
	for ev in $(sed -n 's/^event: //p' "$TP"); do
		awk -v want="event: $ev" '
			/^(event|missing): / { on = ($0 == want); next }
			on' "$TP" >"$WORK/section"
		# Through a pipe: tracefs files say they are empty, and cmp
		# takes two sizes that differ for two different files.
		cat "/sys/kernel/tracing/events/${ev%%:*}/${ev#*:}/format" | cmp -s "$WORK/section" - ||
			bad="$bad $ev differs from tracefs's"
	done
	for ev in kmem:kmalloc kmem:kfree kmem:kmem_cache_alloc; do
		grep -qx "event: $ev" "$TP" || bad="$bad no $ev"
	done
	[ "$sections" -ge 6 ] || bad="$bad only $sections sections"
else
	grep -qx 'tracefs: none (not mounted)' "$TP" || bad="$bad tracefs is not mounted, the file does not say so"
fi
# -e kmalloc traces no page event: its format is not there.
rm -rf "$WORK/rec-kmalloc"
timeout -k 5 30 "$KMEMSNOOP" -e kmalloc -o "$WORK/rec-kmalloc" -d 1 >/dev/null 2>&1
grep -q '^event: kmem:kmalloc$' "$WORK/rec-kmalloc/tracepoints" 2>/dev/null ||
	[ ! -d /sys/kernel/tracing/events/kmem ] || bad="$bad -e kmalloc: no kmem:kmalloc"
! grep -q '^event: kmem:mm_page_alloc$' "$WORK/rec-kmalloc/tracepoints" 2>/dev/null ||
	bad="$bad -e kmalloc: mm_page_alloc's format too"
[ -z "$bad" ]
check $? recording.tracepoints "tracepoints:$bad" "$TP"

# --- -i: the header's lines, then the live text's
strip_ts() {
	grep -v '^#' "$1" | grep -v '^[[:space:]]*$' |
		sed -E 's/^(.*\[[0-9]+\]) +[0-9]+\.[0-9]{6}: /\1 /' | LC_ALL=C sort
}
strip_ts "$WORK/decoded" >"$WORK/decoded.lines"
strip_ts "$(ks_out kt)" >"$WORK/text.lines"
nmsg=$(grep -c '\] kmalloc: call_site=load_msg+0x[0-9a-f]*/0x[0-9a-f]* .* bytes_req=248 ' "$WORK/text.lines")
if [ $rc -ne 0 ]; then
	fail recording.same_events "kmemsnoop -i exited with status $rc: $(head -c 200 "$WORK/decoded.err")"
elif [ "$nmsg" -ne "$COUNT" ]; then
	fail recording.same_events "the text instance shows $nmsg load_msg kmallocs of 248 bytes, not $COUNT: nothing to compare"
else
	only_t=$(ms_minus "$WORK/text.lines" "$WORK/decoded.lines" | wc -l)
	only_d=$(ms_minus "$WORK/decoded.lines" "$WORK/text.lines" | wc -l)
	[ "$only_t" -le "$mb" ] && [ "$only_d" -le "$mt" ]
	check $? recording.same_events "$only_t line(s) only in the live text (the -o instance missed $mb), $only_d only in -i's (the text instance missed $mt), e.g. $(multiset_diff "$WORK/text.lines" "$WORK/decoded.lines" | first_lines 2)"
fi

# The header lines come first, then the live text's own "#" lines.
awk '/^# tracer:/ { exit } { print }' "$WORK/decoded" >"$WORK/decoded.header"
sed -n '/^# tracer:/,$p' "$WORK/decoded" | grep '^#' >"$WORK/decoded.rest"
grep '^#' "$(ks_out kt)" >"$WORK/text.hash"
bad=
head -n 1 "$WORK/decoded.header" | grep -q '^# recording: header format 1, kmemtrace ABI 6' || bad="$bad first line"
grep -qxF "# kernel: $(uname -r) $(uname -v) $(uname -m)" "$WORK/decoded.header" || bad="$bad kernel line"
grep -q "^# command: .*-p $PID -o $DIR" "$WORK/decoded.header" || bad="$bad command line"
grep -q "^# $(possible_cpus) possible CPUs, page size $(page_size)" "$WORK/decoded.header" || bad="$bad CPUs line"
grep -q '^# started: ' "$WORK/decoded.header" && grep -q '^# stopped: ' "$WORK/decoded.header" || bad="$bad start/stop lines"
grep -q "^# events: $written written, 0 lost (0 bytes), [0-9]* missed$" "$WORK/decoded.header" || bad="$bad events line"
grep -v '^#' "$WORK/decoded.header" | grep -q . && bad="$bad a line not starting with #"
cmp -s "$WORK/decoded.rest" "$WORK/text.hash" || bad="$bad the text's own # lines differ"
grep -q 'no gfp file' "$WORK/decoded.err" && bad="$bad a note about a missing gfp file"
[ -z "$bad" ]
check $? recording.header_lines "-i's header:$bad: $(first_lines 12 <"$WORK/decoded.header")"

# --- the recording's GFP names are the ones used: rename one in a copy
cp -a "$DIR" "$WORK/renamed"
sed -i 's/ GFP_KERNEL$/ GFP_KERNEL_AS_RECORDED/' "$WORK/renamed/gfp"
"$KMEMSNOOP" -i "$WORK/renamed" >"$WORK/renamed.out" 2>"$WORK/renamed.err"
n_old=$(grep -c 'gfp_flags=GFP_KERNEL[ |]' "$WORK/decoded")
n_new=$(grep -c 'gfp_flags=GFP_KERNEL_AS_RECORDED[ |]' "$WORK/renamed.out")
[ "$n_old" -gt 0 ] && [ "$n_old" = "$n_new" ]
check $? recording.gfp_used "-i printed $n_old lines with gfp_flags=GFP_KERNEL, and $n_new with the recording's renamed GFP_KERNEL_AS_RECORDED" "$WORK/renamed.err"

# --- --json: objects only
"$KMEMSNOOP" -i "$DIR" --json >"$WORK/json.out" 2>"$WORK/json.err"
rc=$?
[ $rc -eq 0 ] && [ -s "$WORK/json.out" ] && ! grep -qv '^{' "$WORK/json.out"
check $? recording.json "-i --json: status $rc, lines not objects: $(grep -v '^{' "$WORK/json.out" | first_lines 2)"

# --- bad header and gfp files
# bad_input NAME FILE CONTENT WHAT: -i of a copy of the recording with
# FILE replaced must fail with one line naming FILE, and print nothing.
bad_input() {
	local name=$1 file=$2 content=$3 what=$4 copy=$WORK/$1 rc
	cp -a "$DIR" "$copy"
	printf '%s' "$content" >"$copy/$file"
	"$KMEMSNOOP" -i "$copy" >"$copy.out" 2>"$copy.err"
	rc=$?
	[ $rc -eq 1 ] && [ ! -s "$copy.out" ] && [ "$(wc -l <"$copy.err")" -eq 1 ] &&
		grep -q "^kmemsnoop: $copy/$file: " "$copy.err"
	check $? "$name" "$what: status $rc, stdout $(wc -l <"$copy.out") lines, stderr: $(first_lines 2 <"$copy.err")"
}
bad_input recording.bad_header header "$(head -c 40 "$DIR/header")" "a truncated header"
bad_input recording.bad_gfp gfp "$(printf '0xcc0 GFP_KERNEL\n0xzz1 nonsense\n')" "a gfp file with a bad mask"

# --- the committed ABI-3 recording, without header or gfp
cp -a "$FIXTURE" "$WORK/fixture"
"$KMEMSNOOP" -i "$WORK/fixture" >"$WORK/fixture.out" 2>"$WORK/fixture.err"
rc=$?
if [ $rc -ne 0 ]; then
	fail recording.fixture "kmemsnoop -i exited with status $rc: $(first_lines 2 <"$WORK/fixture.err")"
elif cmp -s "$DIR/gfp" "$FIXTURE.gfp"; then
	diff -q "$WORK/fixture.out" "$FIXTURE.expected" >/dev/null
	check $? recording.fixture "the output differs from tests/fixtures/abi3.expected: $(diff "$WORK/fixture.out" "$FIXTURE.expected" | first_lines 4)"
else
	# This kernel names some flags otherwise: all but gfp_flags= must match.
	without_gfp "$WORK/fixture.out" >"$WORK/fixture.nogfp"
	without_gfp "$FIXTURE.expected" >"$WORK/expected.nogfp"
	diff -q "$WORK/fixture.nogfp" "$WORK/expected.nogfp" >/dev/null
	check $? recording.fixture "the output (gfp_flags= aside: this kernel's GFP table is not the recording kernel's) differs from tests/fixtures/abi3.expected: $(diff "$WORK/fixture.nogfp" "$WORK/expected.nogfp" | first_lines 4)"
fi
[ "$(grep -c 'has no gfp file' "$WORK/fixture.err")" -eq 1 ] && [ "$(wc -l <"$WORK/fixture.err")" -eq 1 ]
check $? recording.fixture_note "stderr of -i of a recording without gfp: expected one note, got: $(first_lines 3 <"$WORK/fixture.err")"

# --- the committed ABI-4 recording of a 5.10 VM, with the text it printed live
VM_FIXTURE=$TOP/tests/fixtures/abi4-5.10
cp -a "$VM_FIXTURE" "$WORK/vmfixture"
chmod 700 "$WORK/vmfixture"
"$KMEMSNOOP" -i "$WORK/vmfixture" >"$WORK/vmfixture.out" 2>"$WORK/vmfixture.err"
rc=$?
if [ $rc -ne 0 ] || [ -s "$WORK/vmfixture.err" ]; then
	fail_rest recording.vm_fixture recording.vm_fixture_header "kmemsnoop -i of $VM_FIXTURE: status $rc, stderr: $(first_lines 2 <"$WORK/vmfixture.err")"
else
	strip_ts "$WORK/vmfixture.out" >"$WORK/vmfixture.lines"
	strip_ts "$VM_FIXTURE.live" >"$WORK/vmfixture.live"
	renamed=$(grep -c ' wl-renamed-' "$WORK/vmfixture.lines")
	[ -s "$WORK/vmfixture.lines" ] && [ "$renamed" -gt 0 ] && cmp -s "$WORK/vmfixture.lines" "$WORK/vmfixture.live"
	check $? recording.vm_fixture "the replay differs from the text the VM printed live ($renamed lines as wl-renamed): $(diff "$WORK/vmfixture.live" "$WORK/vmfixture.lines" | first_lines 4)"
	grep -qx '# kernel: 5.10.0-43-cloud-amd64 #1 SMP Debian 5.10.251-5 (2026-05-15) x86_64' "$WORK/vmfixture.out" &&
		grep -qx '# events: 142 written, 0 lost (0 bytes), 0 missed' "$WORK/vmfixture.out"
	check $? recording.vm_fixture_header "the # lines do not name the VM's kernel and counts: $(grep '^# [ek]' "$WORK/vmfixture.out" | first_lines 3)"
fi

cp "$FIXTURE.gfp" "$WORK/fixture/gfp"
"$KMEMSNOOP" -i "$WORK/fixture" >"$WORK/fixture_gfp.out" 2>"$WORK/fixture_gfp.err"
rc=$?
[ $rc -eq 0 ] && cmp -s "$WORK/fixture_gfp.out" "$FIXTURE.expected" && [ ! -s "$WORK/fixture_gfp.err" ]
check $? recording.fixture_gfp "with the recording kernel's gfp table: status $rc, $(diff "$WORK/fixture_gfp.out" "$FIXTURE.expected" | first_lines 4), stderr: $(first_lines 2 <"$WORK/fixture_gfp.err")"

finish
