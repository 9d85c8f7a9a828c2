# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/results.sh: the result lines of the scripts that run outside
# tests/lib.sh (tests/fresh-machine.sh, tests/package.sh): PASS:, FAIL:
# and SKIP: lines, counted for their closing "N passed, N failed, N
# skipped".  The sourcing script defines finish (its cleanup, the closing
# line, the exit), which fail_rest calls.

PASSED=0
FAILED=0
SKIPPED=0

pass() {
	PASSED=$((PASSED + 1))
	echo "PASS: $1"
}
# fail NAME WHY [LOG]: LOG's last lines are shown (CI keeps nothing else).
fail() {
	FAILED=$((FAILED + 1))
	echo "FAIL: $1: $2"
	if [ -n "${3:-}" ] && [ -s "$3" ]; then
		echo "---- ${3##*/} (last 20 lines)"
		tail -n 20 "$3"
		echo "----"
	fi
}
skip() {
	SKIPPED=$((SKIPPED + 1))
	echo "SKIP: $1: $2"
}
# fail_rest WHY NAME...: a step failed, the later ones cannot run.
fail_rest() {
	local why=$1 t
	shift
	for t in "$@"; do fail "$t" "$why"; done
	finish
}
# skip_rest WHY NAME...: the same, skipped.
skip_rest() {
	local why=$1 t
	shift
	for t in "$@"; do skip "$t" "$why"; done
	finish
}
