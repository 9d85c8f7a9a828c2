#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Exact kmalloc/kfree events of SysV messages under "kmemsnoop -p PID".
# For each SIZE the workload sends and receives COUNT messages; every
# msgsnd is one kmalloc from load_msg+ with bytes_req = 48 + SIZE (split in
# pieces above 4048 bytes: see tests/workload.c) and every msgrcv frees
# the same pointers from free_msg+.
#
# vmtest: every VM: the kmalloc events of each kernel's SysV messages,
# against its own trace.
. "$(dirname "$0")/../lib.sh"

SIZES=(100 1000 5000)
COUNT=40
for s in "${SIZES[@]}"; do
	TESTS+=("msg.$s.clean_stop" "msg.$s.layout" "msg.$s.kmalloc" "msg.$s.kfree" "msg.$s.task")
done
TESTS+=(msg.real_pointers)

require_root
require_kmemsnoop
require_workload

all_ptrs=$WORK/all_ptrs
: >"$all_ptrs"

for SIZE in "${SIZES[@]}"; do
	t=msg.$SIZE
	if ! wl_start "w$SIZE" msg "$SIZE" "$COUNT"; then
		fail_rest "$t.clean_stop" "$t.layout" "$t.kmalloc" "$t.kfree" "$t.task" \
			"the workload did not start: $(head -c 200 "$WORK/w$SIZE.werr")"
		continue
	fi
	PID=${WL_PID[w$SIZE]}
	if ! ks_start "k$SIZE" -p "$PID"; then
		fail_rest "$t.clean_stop" "$t.layout" "$t.kmalloc" "$t.kfree" "$t.task" \
			"$(ks_start_fail_why "k$SIZE")"
		wl_kill "w$SIZE"
		continue
	fi
	wl_run "w$SIZE" || fail "$t.workload" "the workload failed (status ${WL_RC[w$SIZE]})" "$WORK/w$SIZE.werr"
	ks_check_stop "$t.clean_stop" "k$SIZE"

	out=$(ks_out "k$SIZE")
	tab=$WORK/k$SIZE.tab
	ev_table "$out" >"$tab"

	# Every event line has the ftrace layout and a known event.
	bad=$( (grep '^BAD' "$tab" | cut -f2-; ev_bad_layout "$out") | sort -u)
	nev=$(ev_count "$tab" '$1 != "BAD"')
	if [ -n "$bad" ]; then
		fail "$t.layout" "$(echo "$bad" | wc -l) malformed line(s), e.g. '$(echo "$bad" | head -n1)'"
	elif [ "$nev" -eq 0 ]; then
		fail "$t.layout" "no event lines at all" "$out"
	else
		pass "$t.layout"
	fi

	# The load_msg kmallocs of the workload: exactly COUNT x pieces with
	# the right sizes.
	for ((i = 0; i < COUNT; i++)); do msg_pieces "$SIZE"; done | LC_ALL=C sort >"$WORK/want$SIZE"
	ev_keys "$tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+0x/ && $2 == '"$PID" '$8, $9' >"$WORK/got$SIZE"
	if diff=$(multiset_diff "$WORK/want$SIZE" "$WORK/got$SIZE"); then
		pass "$t.kmalloc"
	else
		want_n=$(wc -l <"$WORK/want$SIZE")
		got_n=$(wc -l <"$WORK/got$SIZE")
		other=$(ev_keys "$tab" '$5 == "kmalloc" && $8 == '"$((48 + (SIZE > 4048 ? 4048 : SIZE)))" '$6' | uniq -c | first_lines 3)
		fail "$t.kmalloc" "expected $want_n load_msg kmallocs (bytes_req/bytes_alloc $(msg_pieces "$SIZE" | tr '\t\n' '/ ')), got $got_n; differences: $(echo "$diff" | uniq -c | first_lines 4); kmallocs of that size by call site: ${other:-none}"
	fi

	# Each of those pointers is freed once by free_msg, by the same task.
	ev_keys "$tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+0x/ && $2 == '"$PID" '$7' >"$WORK/aptr$SIZE"
	ev_keys "$tab" '$5 == "kfree" && $6 ~ /^free_msg\+0x/ && $2 == '"$PID" '$7' >"$WORK/fptr$SIZE"
	cat "$WORK/aptr$SIZE" >>"$all_ptrs"
	nf=$(wc -l <"$WORK/fptr$SIZE")
	if [ "$nf" -ne "$(wc -l <"$WORK/want$SIZE")" ]; then
		fail "$t.kfree" "expected $(wc -l <"$WORK/want$SIZE") kfree lines from free_msg+, got $nf"
	elif ! diff=$(multiset_diff "$WORK/aptr$SIZE" "$WORK/fptr$SIZE"); then
		fail "$t.kfree" "free_msg freed other pointers than load_msg allocated: $(echo "$diff" | first_lines 4)"
	elif grep -qx '0\+' "$WORK/fptr$SIZE"; then
		fail "$t.kfree" "NULL pointers in free_msg kfrees"
	else
		pass "$t.kfree"
	fi

	# The task columns: all load_msg/free_msg lines are the workload's
	# (comm "workload", tid = its pid: it has one thread).
	wrong=$(awk -F'\t' -v p="$PID" '($6 ~ /^(load_msg|free_msg)\+/) && ($2 != p || $1 != "workload") { print $1 "-" $2 }' "$tab" | sort | uniq -c | first_lines 3)
	nmine=$(ev_count "$tab" '$6 ~ /^(load_msg|free_msg)\+/')
	if [ -n "$wrong" ]; then
		fail "$t.task" "load_msg/free_msg lines with another TASK-PID than workload-$PID: $wrong"
	elif [ "$nmine" -eq 0 ]; then
		fail "$t.task" "no load_msg/free_msg line at all"
	else
		pass "$t.task"
	fi
done

# kmemsnoop prints real pointers, not the kernel's hashed %p (which shows
# 00000000xxxxxxxx): slab objects live in the kernel's linear (direct) map,
# x86_64: from ffff888000000000 with 4-level paging and from
# ff11000000000000 with 5-level paging (LA57: QEMU's -cpu max has it);
# arm64 (since 5.4): the lower half of the kernel's addresses, from
# -(1 << VA_BITS) (48 or 52 bits) up to ffff800000000000.
case $(uname -m) in
x86_64) DIRECT_MAP='^(ffff[89a-f]|ff[1-8][0-9a-f])' MAP_TEXT='ffff8... or ff11...' ;;
aarch64) DIRECT_MAP='^(fff[0-9a-e]|ffff[0-7])' MAP_TEXT='fff0... to ffff7...' ;;
*) DIRECT_MAP= ;;
esac
if [ -n "$DIRECT_MAP" ]; then
	n=$(wc -l <"$all_ptrs")
	nk=$(grep -Ec "$DIRECT_MAP" "$all_ptrs")
	[ "$n" -gt 0 ] && [ "$n" -eq "$nk" ]
	check $? msg.real_pointers "$nk of $n load_msg pointers look like kernel direct-map addresses ($MAP_TEXT): e.g. $(grep -Ev "$DIRECT_MAP" "$all_ptrs" | head -n1)"
else
	skip msg.real_pointers "kernel address layout not known for $(uname -m)"
fi

finish
