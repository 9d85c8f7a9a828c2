#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The workload's claims (tests/workload.c) checked against the kernel's own
# trace, without kmemsnoop: when these fail on a kernel, the kmemsnoop
# tests that rely on them say nothing about kmemsnoop.  Also checks the
# --wait protocol the other tests rely on.
. "$(dirname "$0")/../lib.sh"

TESTS=(workload.usage workload.wait_blocks workload.sigusr1 workload.msg_sizes workload.msg_frees
	workload.openclose workload.pipe_pages workload.fork_child workload.thread)

require_root
require_workload

# Bad usage exits 2 (no tracing needed).
bad=
for args in "" "msg" "msg 1" "msg x 1" "msg 9000 1" "pipe 0" "nope 1" "msg 1 1 +" "thread-msg 1 1 + msg 1 1"; do
	# shellcheck disable=SC2086
	timeout 10 "$WORKLOAD" $args >/dev/null 2>&1 </dev/null
	rc=$?
	[ $rc -eq 2 ] || bad="$bad '$args' -> $rc;"
done
[ -z "$bad" ]
check $? workload.usage "expected exit 2 for bad arguments:$bad"

require_tracefs

# --wait: nothing happens in the workload before the byte arrives.
if wl_start w0 msg 100 5 && oracle_start o0 "${WL_PID[w0]}"; then
	sleep 0.3
	before=$(grep -vc '^#' "${ORACLE_DIR[o0]}/trace")
	wl_run w0
	rc=$?
	oracle_stop o0
	after=$(ev_count <(ev_table "$(oracle_file o0)") 1)
	[ "$before" -eq 0 ] && [ "$after" -gt 0 ] && [ $rc -eq 0 ]
	check $? workload.wait_blocks "events before the go byte: $before (expected 0), after: $after, status $rc"
else
	fail workload.wait_blocks "could not start the workload or the oracle: $ORACLE_ERR"
fi

# SIGUSR1 lets a waiting workload go as well.
if wl_start w1 openclose 1; then
	kill -USR1 "${WL_PID[w1]}"
	wl_wait w1
	rc=$?
	[ $rc -eq 0 ]
	check $? workload.sigusr1 "a waiting workload sent SIGUSR1 ended with status $rc"
else
	fail workload.sigusr1 "could not start the workload"
fi

# Message sizes: one kmalloc per message up to 4048 bytes, then pieces.
SIZES="0 16 100 1000 4000 4048 4049 5000 8192"
args=()
for s in $SIZES; do args+=(msg "$s" 3 +); done
unset 'args[-1]'
if wl_start wm "${args[@]}" && oracle_start om "${WL_PID[wm]}"; then
	wl_run wm
	if oracle_stop om; then
		ev_table "$(oracle_file om)" >"$WORK/om.tab"
		for s in $SIZES; do for i in 1 2 3; do msg_pieces "$s"; done; done | LC_ALL=C sort >"$WORK/want"
		ev_keys "$WORK/om.tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+0x/' '$8, $9' >"$WORK/got"
		diff=$(multiset_diff "$WORK/want" "$WORK/got")
		check $? workload.msg_sizes "load_msg kmallocs (bytes_req, bytes_alloc) differ from workload.c's rule (< expected, > traced): $(echo "$diff" | uniq -c | first_lines 5)"
		# free_msg frees the same (hashed, but consistently) pointers.
		ev_keys "$WORK/om.tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+0x/' '$7' >"$WORK/a"
		ev_keys "$WORK/om.tab" '$5 == "kfree" && $6 ~ /^free_msg\+0x/' '$7' >"$WORK/f"
		multiset_diff "$WORK/a" "$WORK/f" >/dev/null && [ -s "$WORK/a" ]
		check $? workload.msg_frees "free_msg kfrees ($(wc -l <"$WORK/f")) do not match the load_msg kmallocs ($(wc -l <"$WORK/a"))"
	else
		fail_rest workload.msg_sizes workload.msg_frees "tracefs oracle: $ORACLE_ERR"
	fi
else
	fail_rest workload.msg_sizes workload.msg_frees "could not start the workload or the oracle: $ORACLE_ERR"
fi

# openclose N: N names_cache, filp and lsm_file_cache allocations, no kmalloc
# from the open path.
N=50
if wl_start wo openclose $N && oracle_start oo "${WL_PID[wo]}"; then
	wl_run wo
	if oracle_stop oo; then
		ev_table "$(oracle_file oo)" >"$WORK/oo.tab"
		nn=$(ev_count "$WORK/oo.tab" "$NAMES_ALLOC")
		nf=$(ev_count "$WORK/oo.tab" "$FILP_ALLOC")
		nnf=$(names_frees "$WORK/oo.tab")
		[ "$nn" -eq $N ] && [ "$nf" -eq $N ] && [ "$nnf" -eq $N ]
		check $? workload.openclose "openclose $N: $nn names_cache allocations, $nnf names_cache frees, $nf filp allocations (expected $N each)"
	else
		fail workload.openclose "tracefs oracle: $ORACLE_ERR"
	fi
else
	fail workload.openclose "could not start the workload or the oracle: $ORACLE_ERR"
fi

# pipe PAGES: PAGES order-0 GFP_HIGHUSER|__GFP_ACCOUNT pages (with and
# without F_SETPIPE_SZ).
for P in 8 48; do
	if wl_start "wp$P" pipe $P && oracle_start "op$P" "${WL_PID[wp$P]}"; then
		wl_run "wp$P"
		if oracle_stop "op$P"; then
			n=$(ev_count <(ev_table "$(oracle_file "op$P")") '$5 == "mm_page_alloc" && $13 == 0 && $10 == "GFP_HIGHUSER|__GFP_ACCOUNT"')
			echo "$P $n"
		else
			echo "$P oracle:$ORACLE_ERR"
		fi
	else
		echo "$P start-failed"
	fi
done >"$WORK/pipe.res"
bad=$(awk '$1 != $2 { printf "pipe %s: %s; ", $1, $2 }' "$WORK/pipe.res")
[ -z "$bad" ]
check $? workload.pipe_pages "pipe page allocations differ from PAGES: $bad"

# fork-msg: the child's messages are the child's.
if wl_start wf fork-msg 100 7 && oracle_start_follow of "${WL_PID[wf]}"; then
	wl_run wf
	if oracle_stop of; then
		C=$(wl_field wf child)
		ev_table "$(oracle_file of)" >"$WORK/of.tab"
		nc=$(ev_count "$WORK/of.tab" '$6 ~ /^load_msg\+/ && $2 == '"${C:-0}")
		np=$(ev_count "$WORK/of.tab" '$6 ~ /^load_msg\+/ && $2 != '"${C:-0}")
		[ -n "$C" ] && [ "$nc" -eq 7 ] && [ "$np" -eq 0 ]
		check $? workload.fork_child "child '${C}': $nc load_msg kmallocs (expected 7), other tasks: $np (expected 0)"
	else
		fail workload.fork_child "tracefs oracle: $ORACLE_ERR"
	fi
else
	fail workload.fork_child "could not start the workload or the oracle: $ORACLE_ERR"
fi

# thread-msg: the messages are the second thread's, the opens the main one's.
if wl_start wt thread-msg 100 9; then
	P=${WL_PID[wt]}
	T=$(wl_field wt tid)
	if oracle_start ot "$P" "${T:-0}"; then
		wl_run wt
		if oracle_stop ot; then
			ev_table "$(oracle_file ot)" >"$WORK/ot.tab"
			nt=$(ev_count "$WORK/ot.tab" '$6 ~ /^load_msg\+/ && $2 == '"${T:-0}")
			nm=$(ev_count "$WORK/ot.tab" '$6 ~ /^load_msg\+/ && $2 != '"${T:-0}")
			nn=$(ev_count "$WORK/ot.tab" "$NAMES_ALLOC"' && $2 == '"$P")
			[ -n "$T" ] && [ "$T" != "$P" ] && [ "$nt" -eq 9 ] && [ "$nm" -eq 0 ] && [ "$nn" -eq 9 ]
			check $? workload.thread "thread '$T' of $P: $nt load_msg kmallocs (expected 9), $nm elsewhere (expected 0), $nn names_cache allocations in the main thread (expected 9)"
		else
			fail workload.thread "tracefs oracle: $ORACLE_ERR"
		fi
	else
		fail workload.thread "tracefs oracle: $ORACLE_ERR"
	fi
else
	fail workload.thread "could not start the workload"
fi

finish
