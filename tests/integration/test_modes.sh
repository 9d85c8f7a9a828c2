#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Modes together.  "--hist --allocinfo" in one run prints both outputs,
# each exactly as that mode prints alone: three kmemsnoop instances watch
# one workload holding COUNT SysV messages of SIZE bytes (one load_msg
# kmalloc each), A with --hist-by callsite --allocinfo, B with --hist-by
# callsite alone, C with --allocinfo alone; all three are stopped with
# SIGINT while the messages are held.
#   both.hist       A's histogram rows, summed over its blocks, are B's,
#                   and load_msg's bucket holds COUNT allocations
#   both.allocinfo  A's table is C's, with load_msg at COUNT x class bytes
#   both.one_table  without INTERVAL, the table comes once, at the end
#   both.interval   with INTERVAL, a histogram block and a table each time
#
# vmtest: in x86/5.10: modes together are user space over programs the other
# tests load on every kernel.
. "$(dirname "$0")/../lib.sh"

SIZE=200
COUNT=20
TESTS=(both.hist both.allocinfo both.one_table both.interval)

require_root
require_kmemsnoop
require_workload

CLASS=$(kmalloc_class $((48 + SIZE)))
HEADER='allocinfo - version: 1.0'

# hist_rows FILE: "key<TAB>bucket<TAB>count" of every histogram row,
# summed over the blocks (the key: the "call site = ..." label above).
hist_rows() {
	awk '
	/^call site = .* \(allocs=[0-9]+ bytes=[0-9]+\)$/ {
		key = $0
		sub(/^call site = /, "", key)
		sub(/ \(allocs=[0-9]+ bytes=[0-9]+\)$/, "", key)
		next
	}
	/^ *[0-9]+ -> [0-9]+ *: [0-9]+ / { if ($5 > 0) n[key "\t" $1] += $5 }
	END { for (k in n) print k "\t" n[k] }' "$1" | LC_ALL=C sort
}

# last_table FILE: the rows of the last allocinfo table, sorted.
last_table() {
	awk -v h="$HEADER" '$0 == h { delete t; n = 0; next } /^ *-?[0-9]+ +-?[0-9]+ / { t[++n] = $0 }
		END { for (i = 1; i <= n; i++) print t[i] }' "$1" | LC_ALL=C sort
}

msg_line() {
	awk '$NF ~ /^func:(load_msg|alloc_msg)$/ { b += $1; c += $2; n++ }
	END { if (n) print b, c; else print "none" }'
}

wait_held() { wait_for "$WORK/$1.wout" '^held$' 20; }

# Events BPF skipped make two instances differ by what each missed.
misses_note() {
	local m=0 id
	for id in "$@"; do m=$((m + $(ks_misses "$id"))); done
	echo "$m"
}

if ! wl_start w msg-hold "$SIZE" "$COUNT"; then
	fail_rest "${TESTS[@]}" "the workload did not start: $(head -c 200 "$WORK/w.werr")"
	finish
fi
PID=${WL_PID[w]}
if ! ks_start a --hist-by callsite --allocinfo -e kmalloc -p "$PID" ||
	! ks_start b --hist-by callsite -e kmalloc -p "$PID" ||
	! ks_start c --allocinfo -e kmalloc -p "$PID"; then
	fail_rest "${TESTS[@]}" "kmemsnoop did not start: $(ks_start_fail_why a) $(ks_start_fail_why b) $(ks_start_fail_why c)"
	wl_kill w
	finish
fi
wl_go w
if ! wait_held w; then
	fail_rest "${TESTS[@]}" "the workload did not hold its messages: $(head -c 200 "$WORK/w.werr")"
	wl_kill w
	finish
fi
sleep 1.2 # at least one histogram block before the end
ks_stop a; rca=$?
ks_stop b; rcb=$?
ks_stop c; rcc=$?
wl_kill w
misses=$(misses_note a b c)

ha=$(hist_rows "$(ks_out a)")
hb=$(hist_rows "$(ks_out b)")
msg=$(echo "$ha" | awk -F'\t' -v b="$(awk -v v="$CLASS" 'BEGIN { b = 1; while (b * 2 <= v) b *= 2; print b }')" \
	'$1 ~ /^load_msg\+/ && $2 == b { n += $3 } END { print n + 0 }')
if [ $rca -ne 0 ] || [ $rcb -ne 0 ] || [ $rcc -ne 0 ]; then
	fail_rest "${TESTS[@]:0:3}" "exit status $rca/$rcb/$rcc after SIGINT: $(head -c 300 "$(ks_err a)" | tr '\n' ' ')"
else
	[ "$msg" = "$COUNT" ] && { [ "$ha" = "$hb" ] || [ "$misses" -gt 0 ]; }
	check $? both.hist "load_msg's bucket in A: $msg (want $COUNT); A's rows equal B's: $([ "$ha" = "$hb" ] && echo yes || echo "no: $(diff <(echo "$ha") <(echo "$hb") | head -n 4 | tr '\n' ' ')") ($misses events missed)"

	ta=$(last_table "$(ks_out a)")
	tc=$(last_table "$(ks_out c)")
	got=$(echo "$ta" | msg_line)
	[ "$got" = "$((COUNT * CLASS)) $COUNT" ] && { [ "$ta" = "$tc" ] || [ "$misses" -gt 0 ]; }
	check $? both.allocinfo "A's load_msg line: '$got' (want '$((COUNT * CLASS)) $COUNT'); A's table equals C's: $([ "$ta" = "$tc" ] && echo yes || echo "no: $(diff <(echo "$ta") <(echo "$tc") | head -n 4 | tr '\n' ' ')") ($misses events missed)"

	na=$(grep -cx "$HEADER" "$(ks_out a)")
	nc=$(grep -cx "$HEADER" "$(ks_out c)")
	[ "$na" = 1 ] && [ "$nc" = 1 ] && tail -n +1 "$(ks_out a)" | grep -q '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] interval='
	check $? both.one_table "tables at the end: A $na, C $nc (want 1 each), and A has histogram blocks"
fi

# With INTERVAL and COUNT: both every interval, COUNT times, then the end.
if ks_start d --hist --allocinfo -e kmalloc 0.3 3; then
	ks_wait d 20
	rc=$?
	blocks=$(grep -c '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] interval=' "$(ks_out d)")
	tables=$(grep -cx "$HEADER" "$(ks_out d)")
	[ $rc -eq 0 ] && [ "$blocks" = 3 ] && [ "$tables" = 3 ]
	check $? both.interval "--hist --allocinfo 0.3 3: status $rc, $blocks histogram blocks and $tables tables (want 3 and 3)"
else
	fail both.interval "$(ks_start_fail_why d)"
fi
finish
