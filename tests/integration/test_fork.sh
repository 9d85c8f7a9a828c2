#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# "kmemsnoop -p PID" follows children forked after it started.  The
# workload sends 10 messages of 200 bytes itself (load_msg bytes_req=248),
# then forks a child that sends 30 messages of 100 bytes (bytes_req=148)
# and exits.  The kernel's own view (a tracefs instance following the same
# pid and its forks with set_event_pid + event-fork) must agree on the
# number of events of each kind per task.
#
# vmtest: in x86/5.10 x86/newest: following children uses
# sched_process_fork, raw_tp on 5.10 and tp_btf on 7.x.
. "$(dirname "$0")/../lib.sh"

TESTS=(fork.clean_stop fork.child_msgs fork.child_frees fork.parent_msgs fork.tasks fork.oracle_counts)
NPARENT=10
NCHILD=30

require_root
require_kmemsnoop
require_workload
require_tracefs

# The kmem classes only: the oracle traces the kmem events.
start_traced w k -e kmalloc,cache,page -- msg 200 "$NPARENT" + fork-msg 100 "$NCHILD"
ks_watch_misses k
oracle_ok=1
oracle_start_follow o "$PID" || oracle_ok=0
wl_run w || fail fork.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
[ $oracle_ok = 1 ] && { oracle_stop o || oracle_ok=0; }
ks_check_stop fork.clean_stop k
misses=$(ks_misses k)

CHILD=$(wl_field w child)
if [ -z "$CHILD" ]; then
	fail_rest fork.child_msgs fork.child_frees fork.parent_msgs fork.tasks fork.oracle_counts \
		"the workload did not report its child's pid"
	finish
fi

tab=$WORK/k.tab
ev_table "$(ks_out k)" >"$tab"

n=$(ev_count "$tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+/ && $8 == 148 && $2 == '"$CHILD")
nall=$(ev_count "$tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+/ && $8 == 148')
[ "$n" -eq "$NCHILD" ] && [ "$nall" -eq "$NCHILD" ]
check $? fork.child_msgs "expected $NCHILD load_msg kmallocs of 148 bytes from child $CHILD, got $n ($nall from any task)"

n=$(ev_count "$tab" '$5 == "kfree" && $6 ~ /^free_msg\+/ && $2 == '"$CHILD")
[ "$n" -eq "$NCHILD" ]
check $? fork.child_frees "expected $NCHILD free_msg kfrees from child $CHILD, got $n"

n=$(ev_count "$tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+/ && $8 == 248 && $2 == '"$PID")
nall=$(ev_count "$tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+/ && $8 == 248')
[ "$n" -eq "$NPARENT" ] && [ "$nall" -eq "$NPARENT" ]
check $? fork.parent_msgs "expected $NPARENT load_msg kmallocs of 248 bytes from parent $PID, got $n ($nall from any task)"

tasks=$(cut -f2 "$tab" | sort -u | tr '\n' ' ')
[ "$tasks" = "$(printf '%s\n' "$PID" "$CHILD" | sort -u | tr '\n' ' ')" ]
check $? fork.tasks "expected lines of tasks $PID and $CHILD only, got: $tasks"

if [ $oracle_ok = 1 ]; then
	ev_table "$(oracle_file o)" >"$WORK/o.tab"
	cut -f2,5 "$tab" | LC_ALL=C sort >"$WORK/k.counts"
	cut -f2,5 "$WORK/o.tab" | LC_ALL=C sort >"$WORK/o.counts"
	if [ ! -s "$WORK/o.counts" ]; then
		fail fork.oracle_counts "the tracefs oracle recorded nothing"
	else
		compare_to_oracle fork.oracle_counts "$WORK/o.counts" "$WORK/k.counts" "$misses" "per task and event, counts"
	fi
else
	fail fork.oracle_counts "tracefs oracle: $ORACLE_ERR"
fi

finish
