#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The test suite: tests/unit/unit_tests (when built) and every
# tests/integration/test_*.sh, one after the other, their output streamed.
# Counts the "PASS: ", "FAIL: " and "SKIP: " lines; a program that exits
# nonzero without printing a FAIL line counts as one failure named after
# it.  Ends with one line "N passed, N failed, N skipped"; exit status 0
# only when nothing failed and something passed.
#
# Then tools/vmtest, the same integration tests on other kernels under
# QEMU, whose tagged result lines count here too (VMTEST=0 leaves it out),
# and, when the arm64 build is there (make test builds it), tools/vmtest
# --arch arm64 on every arm64 kernel and the newest one's preempt=full
# variant (VMTEST_ARM64: the series, default all of them; 0 none),
# started before the host's tests and run beside them, then beside the
# x86 matrix within the same VMs at a time (tools/vmtest's VMTEST_SLOTS),
# its results counted after the x86 ones.  Each VM runs the tests whose
# header says it runs there (tools/vmtest, runs_in).
#
# Run from anywhere (make test runs it from the top as root, after make).
# Arguments: optional test script names or paths to run instead of all,
# e.g.  tests/run.sh test_msg test_errors  ("vmtest" names tools/vmtest,
# "vmtest-arm64" tools/vmtest --arch arm64).
# Environment: TEST_TIMEOUT (seconds per program, default 300),
# VMTEST_SUITE_TIMEOUT (seconds for tools/vmtest, default 3600), what
# tests/lib.sh reads (KMEMSNOOP, WORKLOAD, VERBOSE, KEEP_TMP) and what
# tools/vmtest reads.

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
cd "$TOP" || exit 1
TEST_TIMEOUT=${TEST_TIMEOUT:-300}

passed=0
failed=0
skipped=0

# run NAME COMMAND...: run one program, stream and count its results.
# RUN_TIMEOUT, when set, replaces TEST_TIMEOUT for it.
run() {
	local name=$1 out rc line fails=0 limit=${RUN_TIMEOUT:-$TEST_TIMEOUT} t0=$SECONDS
	shift
	echo "# $name"
	out=$(mktemp "${TMPDIR:-/tmp}/kmemsnoop-run.XXXXXX") || exit 1
	# timeout: a hung test must not hang the suite; -k: and it must die.
	timeout -k 10 "$limit" "$@" 2>&1 </dev/null | tee "$out"
	rc=${PIPESTATUS[0]}
	while IFS= read -r line; do
		case $line in
		"PASS: "*) passed=$((passed + 1)) ;;
		"FAIL: "*) failed=$((failed + 1)) fails=$((fails + 1)) ;;
		"SKIP: "*) skipped=$((skipped + 1)) ;;
		esac
	done <"$out"
	rm -f "$out"
	echo "# $name: $((SECONDS - t0))s"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "FAIL: $name: timed out after ${limit}s"
		failed=$((failed + 1))
	elif [ "$rc" -ne 0 ] && [ "$fails" -eq 0 ]; then
		echo "FAIL: $name: exited with status $rc without reporting a failure"
		failed=$((failed + 1))
	fi
}

scripts=()
vmtest=0
if [ $# -gt 0 ]; then
	for a in "$@"; do
		case $a in
		vmtest) vmtest=1 ;;
		vmtest-arm64) vmtest=2 ;;
		*/*) scripts+=("$a") ;;
		*) scripts+=("tests/integration/${a%.sh}.sh") ;;
		esac
	done
else
	[ "${VMTEST:-1}" != 0 ] && [ -x tools/vmtest ] && vmtest=1
	if [ -x tests/unit/unit_tests ]; then
		run unit_tests tests/unit/unit_tests
	elif [ -e tests/unit/unit_tests ]; then
		echo "FAIL: unit_tests: tests/unit/unit_tests is not executable"
		failed=$((failed + 1))
	fi
	for s in tests/integration/test_*.sh; do
		[ -e "$s" ] && scripts+=("$s")
	done
fi

arm64_series=${VMTEST_ARM64:-all}
[ "$arm64_series" = all ] && arm64_series=""
arm64=0
if [ $vmtest = 2 ] || { [ $vmtest = 1 ] && [ "$arm64_series" != 0 ] &&
	[ -f .output/arm64/static/kmemsnoop ]; }; then
	arm64=1
fi
# The x86 binaries make test names must not reach the arm64 VMs:
# tools/vmtest --arch arm64 takes the arm64 build's by default.
# shellcheck disable=SC2206
arm64_cmd=(env -u KMEMSNOOP_STATIC -u WORKLOAD -u BPF_PROGS tools/vmtest --arch arm64 $arm64_series)
if [ $vmtest = 1 ] && [ $arm64 = 1 ]; then
	# The arm64 VMs boot now, one at a time beside the host's tests, which
	# leave a CPU mostly idle (they wait on workloads and timers) and hold
	# the other slot, then share the VMs at a time with the x86 matrix (each
	# VM takes one host CPU).  Their results are counted once they end,
	# after the x86 ones.
	slots=$(mktemp -d "${TMPDIR:-/tmp}/kmemsnoop-slots.XXXXXX") || exit 1
	arm64_log=$slots/arm64.log
	exec {host_slot}>>"$slots/slot.1"
	flock "$host_slot"
	(exec {host_slot}>&-
		VMTEST_SLOTS=$slots timeout -k 10 "${VMTEST_SUITE_TIMEOUT:-3600}" "${arm64_cmd[@]}" \
		>"$arm64_log" 2>&1; echo $? >"$slots/arm64.rc") &
fi

for s in "${scripts[@]}"; do
	if [ ! -f "$s" ]; then
		echo "FAIL: $(basename "$s" .sh): no such test script"
		failed=$((failed + 1))
		continue
	fi
	run "$(basename "$s" .sh)" bash "$s"
done

if [ $vmtest = 1 ] && [ $arm64 = 1 ]; then
	exec {host_slot}>&- # the host's tests are done: its slot is the VMs'
	VMTEST_SLOTS=$slots RUN_TIMEOUT=${VMTEST_SUITE_TIMEOUT:-3600} run vmtest tools/vmtest
	# shellcheck disable=SC2016
	RUN_TIMEOUT=$((${VMTEST_SUITE_TIMEOUT:-3600} + 60)) run vmtest-arm64 \
		bash -c 'while [ ! -s "$1/arm64.rc" ]; do sleep 1; done; cat "$1/arm64.log"; exit "$(cat "$1/arm64.rc")"' \
		_ "$slots"
	rm -rf "$slots"
elif [ $vmtest = 1 ]; then
	RUN_TIMEOUT=${VMTEST_SUITE_TIMEOUT:-3600} run vmtest tools/vmtest
elif [ $arm64 = 1 ]; then
	RUN_TIMEOUT=${VMTEST_SUITE_TIMEOUT:-3600} run vmtest-arm64 "${arm64_cmd[@]}"
fi

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
