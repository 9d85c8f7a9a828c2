#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make sanitize: the unit tests and the host integration tests with
# kmemsnoop and the unit tests built with AddressSanitizer (leaks
# included) and UndefinedBehaviorSanitizer ($SAN_KMEMSNOOP and
# $SAN_UNIT, which make sanitize builds).  Sanitizer reports go
# to files, not to stderr, so that the tests' checks of kmemsnoop's stderr
# are unchanged; any report is a FAIL (sanitize.reports) with its summary.
# Every sanitizer error stops the program (-fno-sanitize-recover), so a
# report also shows as the failure of the test that ran it.
#
# Arguments: test script names to run instead of all (as tests/run.sh).
# Ends with "N passed, N failed, N skipped" over everything it ran.

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/.." && pwd)
cd "$TOP" || exit 1
SAN_KMEMSNOOP=${SAN_KMEMSNOOP:-$TOP/.output/sanitize/kmemsnoop}
SAN_UNIT=${SAN_UNIT:-$TOP/tests/unit/unit_tests-sanitize}
for f in "$SAN_KMEMSNOOP" "$SAN_UNIT"; do
	[ -x "$f" ] || {
		echo "FAIL: sanitize: $f missing (make sanitize builds it)"
		exit 1
	}
done

logs=$(mktemp -d "${TMPDIR:-/tmp}/kmemsnoop-sanitize.XXXXXX") || exit 1
out=$(mktemp "${TMPDIR:-/tmp}/kmemsnoop-sanitize-out.XXXXXX") || exit 1
trap 'rm -rf "$logs" "$out"' EXIT
# Tests run kmemsnoop as nobody too: its reports must land here as well.
chmod 1777 "$logs"

# Reports to files named after the pid; the sanitizers' usual exit status
# (1) would read as kmemsnoop's own runtime error, so it is 99.
export ASAN_OPTIONS="log_path=$logs/asan:exitcode=99:detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="log_path=$logs/ubsan:print_stacktrace=1:halt_on_error=1:exitcode=99"
if [ -s "$HERE/lsan.supp" ]; then
	export LSAN_OPTIONS="suppressions=$HERE/lsan.supp:print_suppressions=0"
fi

scripts=()
if [ $# -gt 0 ]; then
	scripts=("$@")
else
	for s in tests/integration/test_*.sh; do
		scripts+=("$s")
	done
fi

t0=$SECONDS
{
	echo "# unit_tests (sanitized)"
	"$SAN_UNIT" 2>&1
	rc=$?
	[ $rc -ne 0 ] && echo "FAIL: unit_tests: exited with status $rc"
	KMEMSNOOP=$SAN_KMEMSNOOP VMTEST=0 tests/run.sh "${scripts[@]}"
	reports=$(find "$logs" -type f | sort)
	if [ -z "$reports" ]; then
		echo "PASS: sanitize.reports"
	else
		for r in $reports; do
			echo "FAIL: sanitize.reports: $(basename "$r"): $(grep -m1 -E '^SUMMARY|runtime error|ERROR:' "$r")"
			sed 's/^/#   /' "$r" | head -n 40
		done
	fi
} 2>&1 | tee "$out"

passed=$(grep -c '^PASS: ' "$out")
failed=$(grep -c '^FAIL: ' "$out")
skipped=$(grep -c '^SKIP: ' "$out")
echo "# sanitize: $((SECONDS - t0))s"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
