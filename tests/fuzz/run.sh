#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make fuzz: for each target named (record tracedir ksyms options), first
# every input kept under tests/fuzz/regress/TARGET (inputs that once made
# it fail; fuzz.TARGET.regress), then FUZZ_SECONDS (default 60) of
# libFuzzer from the seeds in tests/fuzz/corpus/TARGET (fuzz.TARGET).  New
# inputs are kept in $FUZZ_OUT/corpus/TARGET for the next run; an input
# that fails is saved as $FUZZ_OUT/artifacts/TARGET-crash-* (copy it to
# tests/fuzz/regress/TARGET once fixed).  Prints PASS:/FAIL: lines and
# "# " lines with each run's executions per second.

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
cd "$TOP" || exit 1
FUZZ_OUT=${FUZZ_OUT:-$TOP/.output/fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
failed=0

# A leak or any sanitizer error is a failure; the program's own messages
# (stdout and stderr) are not shown: libFuzzer keeps its reports.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

result() {
	echo "$1: $2${3:+: $3}"
	[ "$1" = FAIL ] && failed=$((failed + 1))
}

# why LOG: the sanitizer's or libFuzzer's summary of a failure.
why() {
	grep -m1 -E '^SUMMARY|runtime error|ERROR: libFuzzer|==ERROR' "$1" | cut -c1-200
}

for t in "$@"; do
	bin=$FUZZ_OUT/fuzz_$t
	log=$FUZZ_OUT/$t.log
	if [ ! -x "$bin" ]; then
		result FAIL "fuzz.$t" "$bin missing (make fuzz builds it)"
		continue
	fi
	mkdir -p "$FUZZ_OUT/corpus/$t" "$FUZZ_OUT/artifacts"
	regress=$(find "$HERE/regress/$t" -type f 2>/dev/null | sort)
	if [ -n "$regress" ]; then
		# shellcheck disable=SC2086
		if "$bin" -close_fd_mask=3 $regress >"$log" 2>&1; then
			result PASS "fuzz.$t.regress"
		else
			result FAIL "fuzz.$t.regress" "$(why "$log") (log: $log)"
		fi
	fi
	t0=$SECONDS
	if "$bin" -max_total_time="$FUZZ_SECONDS" -timeout=10 -print_final_stats=1 \
		-close_fd_mask=3 -artifact_prefix="$FUZZ_OUT/artifacts/$t-" \
		"$FUZZ_OUT/corpus/$t" "$HERE/corpus/$t" >"$log" 2>&1; then
		result PASS "fuzz.$t"
	else
		result FAIL "fuzz.$t" "$(why "$log"); input: $(sed -n 's/.*Test unit written to //p' "$log" | head -n1) (log: $log)"
	fi
	awk -v t="$t" -v s=$((SECONDS - t0)) '
		/^stat::number_of_executed_units:/ { n = $2 }
		/^stat::average_exec_per_sec:/ { r = $2 }
		/^stat::peak_rss_mb:/ { m = $2 }
		END { printf "# fuzz.%s: %d executions in %ds, %d/s, peak RSS %d MB, corpus ", t, n, s, r, m }' "$log"
	find "$FUZZ_OUT/corpus/$t" -type f | wc -l
done
[ "$failed" -eq 0 ]
