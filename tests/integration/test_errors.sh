#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Error handling: bad usage exits 2 with one "kmemsnoop: " line; an
# unwritable -o directory and an unprivileged user fail with one line;
# -i on damaged directories fails cleanly (no crash, no hang); -d ends the
# trace by itself with a summary; SIGTERM ends it cleanly.
#
# vmtest: host only: option parsing, -i on damaged files and signals are user
#   space.
. "$(dirname "$0")/../lib.sh"

USAGE_CASES=(
	"p_abc|2|-p abc -d 2"
	"p_nonexistent|12|-p 999999999 -d 2"
	"d_negative|2|-d -1"
	"e_bogus|2|-e bogus -d 2"
	"b_3|2|-b 3 -d 2"
	"C_no_such_cpu|2|-C 1000 -d 2"
	"unknown_option|2|--no-such-option -d 2"
	"nice_out_of_range|2|--nice=-21 -d 2"
	"nice_with_input|2|--nice 3 -i /nonexistent"
	"stat_with_output|2|--stat -o /nonexistent -d 2"
	"caller_without_stat|2|--caller -d 2"
	"stat_bad_sort|2|--stat -s bogus -d 2"
	"stat_maps_buffer|2|--stat -b 1M -d 2"
	"stat_stream_max_ptrs|2|--stat --stat-stream --max-ptrs 10 -d 2"
)
for c in "${USAGE_CASES[@]}"; do TESTS+=("errors.usage.${c%%|*}"); done
TESTS+=(errors.help errors.output_unwritable errors.unprivileged errors.input_valid
	errors.input_truncated errors.input_stat_truncated errors.input_zeros errors.input_garbage
	errors.input_abi	errors.input_missing errors.duration errors.sigterm errors.nice_default errors.nice_set)

require_root
require_kmemsnoop
require_workload

# one_line FILE: status 0 when FILE has exactly one line and it starts
# with "kmemsnoop: ".
one_line() {
	[ "$(grep -c '' "$1")" -eq 1 ] && grep -q '^kmemsnoop: ' "$1"
}

describe() { # STATUS ERRFILE
	echo "status $1, stderr: '$(head -n 3 "$2" | head -c 300 | tr '\n' '|')'"
}

# run_ks NAME TIMEOUT ARGS...: run kmemsnoop in the foreground; RC, $WORK/NAME.{out,err}.
run_ks() {
	local name=$1 t=$2
	shift 2
	timeout -k 5 "$t" "$KMEMSNOOP" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null
	RC=$?
}

for c in "${USAGE_CASES[@]}"; do
	name=errors.usage.${c%%|*}
	rest=${c#*|}
	codes=${rest%%|*}
	args=${rest#*|}
	# shellcheck disable=SC2086
	run_ks "$name" 20 $args
	case $codes in
	2) [ $RC -eq 2 ] ;;
	12) [ $RC -eq 1 ] || [ $RC -eq 2 ] ;;
	esac && one_line "$WORK/$name.err" && ! grep -q Tracing "$WORK/$name.err"
	check $? "$name" "kmemsnoop $args: expected exit $([ "$codes" = 12 ] && echo "1 or 2" || echo 2) and one 'kmemsnoop: ' line on stderr, got $(describe $RC "$WORK/$name.err")"
done

run_ks errors.help 20 -h
[ $RC -eq 0 ] && { [ -s "$WORK/errors.help.out" ] || [ -s "$WORK/errors.help.err" ]; }
check $? errors.help "kmemsnoop -h: expected status 0 and a help text, got status $RC"

# -o somewhere that cannot be created: below a regular file.
: >"$WORK/plainfile"
run_ks errors.output_unwritable 20 -o "$WORK/plainfile/sub" -d 2
[ $RC -eq 1 ] && one_line "$WORK/errors.output_unwritable.err"
check $? errors.output_unwritable "kmemsnoop -o <below a file>: expected exit 1 and one 'kmemsnoop: ' line, got $(describe $RC "$WORK/errors.output_unwritable.err")"

# An unprivileged user (nobody) gets a clear one-line error.
mkdir -p "$WORK/bin" && cp "$KMEMSNOOP" "$WORK/bin/kmemsnoop" &&
	chmod 755 "$WORK/bin" "$WORK/bin/kmemsnoop" && chmod 711 "$WORK"
if command -v setpriv >/dev/null; then
	timeout -k 5 20 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$WORK/bin/kmemsnoop" -d 1 >"$WORK/unpriv.out" 2>"$WORK/unpriv.err" </dev/null
	RC=$?
elif command -v su >/dev/null; then
	timeout -k 5 20 su nobody -s /bin/sh -c "'$WORK/bin/kmemsnoop' -d 1" >"$WORK/unpriv.out" 2>"$WORK/unpriv.err" </dev/null
	RC=$?
else
	RC=skip
fi
if [ "$RC" = skip ]; then
	skip errors.unprivileged "neither setpriv nor su is available"
else
	[ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && one_line "$WORK/unpriv.err" &&
		grep -Eqi 'root|privilege|permi|CAP_|capabilit|EPERM' "$WORK/unpriv.err"
	check $? errors.unprivileged "as uid 65534: expected a nonzero exit and one 'kmemsnoop: ' line about privileges, got $(describe "$RC" "$WORK/unpriv.err")"
fi

# A valid binary trace, then damaged copies of it.
DIR=$WORK/good
input_ok=0
if wl_start w msg 100 20 && ks_start kb -p "${WL_PID[w]}" -o "$DIR"; then
	wl_run w
	ks_stop kb
	run_ks errors.input_valid 30 -i "$DIR"
	n=$(grep -c 'load_msg+' "$WORK/errors.input_valid.out")
	[ $RC -eq 0 ] && [ "$n" -eq 20 ]
	check $? errors.input_valid "kmemsnoop -i on its own output: status $RC, $n load_msg lines (expected 20)" && input_ok=1
else
	fail errors.input_valid "could not make a trace directory: $(ks_start_fail_why kb)"
	wl_kill w
fi

# input_case NAME: run kmemsnoop -i $WORK/NAME, expect exit 1 and only
# "kmemsnoop: " lines on stderr (at least one).
input_case() {
	local name=$1 what=$2
	run_ks "$name" 30 -i "$WORK/$name"
	[ $RC -eq 1 ] && grep -q '^kmemsnoop: ' "$WORK/$name.err" && ! grep -vq '^kmemsnoop: ' "$WORK/$name.err"
	check $? "errors.$name" "kmemsnoop -i on $what: expected exit 1 and a 'kmemsnoop: ' error, got $(describe $RC "$WORK/$name.err")"
}

if [ $input_ok = 1 ]; then
	# The largest cpuN file holds the workload's records.
	big=$(cd "$DIR" && ls -S cpu[0-9]* | head -n1)
	size=$(stat -c %s "$DIR/$big")

	cp -r "$DIR" "$WORK/input_truncated"
	truncate -s $((size - 5)) "$WORK/input_truncated/$big"
	input_case input_truncated "a cpu file cut 5 bytes short (mid-record)"
	run_ks input_stat_truncated 30 -i "$WORK/input_truncated" --stat
	[ $RC -eq 1 ] && grep -q '^kmemsnoop: ' "$WORK/input_stat_truncated.err" &&
		! grep -vq '^kmemsnoop: ' "$WORK/input_stat_truncated.err"
	check $? errors.input_stat_truncated "kmemsnoop -i --stat on a truncated cpu file: expected exit 1 and a 'kmemsnoop: ' error, got $(describe $RC "$WORK/input_stat_truncated.err")"

	cp -r "$DIR" "$WORK/input_zeros"
	head -c 4096 /dev/zero >"$WORK/input_zeros/$big"
	input_case input_zeros "a cpu file of zero bytes (records of size 0)"

	cp -r "$DIR" "$WORK/input_garbage"
	head -c 4096 /dev/zero | tr '\0' '\377' >"$WORK/input_garbage/$big"
	input_case input_garbage "a cpu file of 0xff bytes"

	cp -r "$DIR" "$WORK/input_abi"
	echo 99 >"$WORK/input_abi/abi_version"
	input_case input_abi "abi_version 99"
else
	fail_rest errors.input_truncated errors.input_zeros errors.input_garbage errors.input_abi \
		errors.input_stat_truncated "no valid trace directory to damage"
fi

run_ks errors.input_missing 30 -i "$WORK/no-such-dir"
{ [ $RC -eq 1 ] || [ $RC -eq 2 ]; } && one_line "$WORK/errors.input_missing.err"
check $? errors.input_missing "kmemsnoop -i <missing dir>: expected exit 1 or 2 and one 'kmemsnoop: ' line, got $(describe $RC "$WORK/errors.input_missing.err")"

# -d 1 ends by itself, after about a second of tracing, with a summary.
t0=$(date +%s.%N)
run_ks errors.duration 30 -d 1 -e kmalloc
t1=$(date +%s.%N)
el=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
ok_time=$(awk -v e="$el" 'BEGIN { print (e >= 1.0 && e <= 8.0) }')
[ $RC -eq 0 ] && [ "$ok_time" = 1 ] && grep -q Tracing "$WORK/errors.duration.err" &&
	grep -Eq '^kmemsnoop: [0-9]+ events written, [0-9]+ lost \([0-9]+ bytes\)$' "$WORK/errors.duration.err"
check $? errors.duration "kmemsnoop -d 1: expected status 0 within 1-8 s with 'Tracing' and a summary line, got status $RC after ${el}s, stderr: '$(head -c 300 "$WORK/errors.duration.err" | tr '\n' '|')'"

# nices_of PID: each thread's nice value, field 19 of its stat (comm has no
# spaces), one line each.
nices_of() { cat "/proc/$1"/task/*/stat 2>/dev/null | awk '{ print $19 }'; }

# It runs above the tasks it traces (-10), or where --nice puts it: every
# thread, the one writing stdout (a file here) as well as the reader.
for c in "nice_default -10" "nice_set 3 --nice 3"; do
	read -r name want args <<<"$c"
	# shellcheck disable=SC2086
	if ks_start "$name" -p $$ $args; then
		got=$(nices_of "${KS_PID[$name]}" | tr '\n' ' ')
		ks_stop "$name"
		threads=$(wc -w <<<"$got")
		# shellcheck disable=SC2086
		others=$(printf '%s\n' $got | grep -vcx -- "$want")
		[ "$threads" -ge 2 ] && [ "$others" = 0 ]
		check $? "errors.$name" "kmemsnoop $args: threads' nice values '$got', expected $want in each of 2 or more (the reader and stdout's writer)"
	else
		fail "errors.$name" "$(ks_start_fail_why "$name")"
	fi
done

# SIGTERM ends the trace cleanly too.
if ks_start kterm -p $$; then
	sleep 0.2
	kill -TERM "${KS_PID[kterm]}" 2>/dev/null
	wait_pid "${KS_PID[kterm]}" "$KS_STOP_TIMEOUT"
	RC=$?
	KS_PID[kterm]=
	[ $RC -eq 0 ] && ks_summary kterm >/dev/null
	check $? errors.sigterm "after SIGTERM: status $RC, stderr: '$(tail -n 3 "$(ks_err kterm)" | tr '\n' '|')'"
else
	fail errors.sigterm "$(ks_start_fail_why kterm)"
fi

finish
