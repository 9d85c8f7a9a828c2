#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --cgroup: a workload moved into a fresh cgroup v2 directory is seen
# completely and alone.  It sends COUNT SysV messages of SIZE bytes while
# another, outside, sends OTHER of OTHER_SIZE.
#   cgroup.complete  COUNT load_msg kmallocs of 48 + SIZE bytes, each freed
#   cgroup.alone     every line is the workload's; none of the other's
#                    messages
#   cgroup.errors    a directory that is not a cgroup v2 one: one line, exit 1
. "$(dirname "$0")/../lib.sh"

SIZE=200
COUNT=20
OTHER_SIZE=300
OTHER=15
TESTS=(cgroup.complete cgroup.alone cgroup.errors)

require_root
require_kmemsnoop
require_workload

"$KMEMSNOOP" --cgroup "$WORK" -d 1 >/dev/null 2>"$WORK/err.err"
rc=$?
[ $rc = 1 ] && [ "$(wc -l <"$WORK/err.err")" = 1 ] &&
	grep -q "^kmemsnoop: --cgroup $WORK: not a cgroup v2 directory" "$WORK/err.err"
check $? cgroup.errors "status $rc: '$(head -c 200 "$WORK/err.err")'"

ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$ROOT" ] || skip_all "no cgroup v2 hierarchy is mounted"
CG="$ROOT/kmemsnoop-test.$$"
mkdir "$CG" 2>/dev/null || skip_all "cannot create a cgroup under $ROOT"
trap 'cleanup; rmdir "$CG" 2>/dev/null' EXIT

if ! wl_start w msg "$SIZE" "$COUNT"; then
	fail_rest cgroup.complete cgroup.alone "the workload did not start"
	finish
fi
PID=${WL_PID[w]}
if ! echo "$PID" >"$CG/cgroup.procs"; then
	wl_kill w
	skip_rest cgroup.complete cgroup.alone "cannot move a process into $CG"
	finish
fi
if ! ks_start k --cgroup "$CG" -e kmalloc; then
	fail_rest cgroup.complete cgroup.alone "$(ks_start_fail_why k)"
	wl_kill w
	finish
fi
"$WORKLOAD" msg "$OTHER_SIZE" "$OTHER" >/dev/null 2>&1 &
other=$!
wl_run w
wait "$other"
sleep 0.5
ks_stop k
out=$(ks_out k)

want_req=$((48 + SIZE))
allocs=$(awk -v r="$want_req" '$4 == "kmalloc:" && $5 ~ /^call_site=load_msg\+/ && $0 ~ " bytes_req=" r " " { n++ } END { print n + 0 }' "$out")
freed=$(awk '$4 == "kmalloc:" && $5 ~ /^call_site=load_msg\+/ { sub(/^ptr=/, "", $6); a[$6] = 1 }
	$4 == "kfree:" { sub(/^ptr=/, "", $6); if ($6 in a) { f++; delete a[$6] } } END { print f + 0 }' "$out")
[ "$allocs" = "$COUNT" ] && [ "$freed" = "$COUNT" ]
check $? cgroup.complete "load_msg kmallocs of $want_req bytes: $allocs, freed: $freed (want $COUNT and $COUNT)"

strangers=$(awk '!/^#/ { t = $1; sub(/.*-/, "", t); if (t != pid) n++ } END { print n + 0 }' pid="$PID" "$out")
others=$(grep -c " bytes_req=$((48 + OTHER_SIZE)) " "$out")
[ "$strangers" = 0 ] && [ "$others" = 0 ]
check $? cgroup.alone "lines of other tasks: $strangers, of the other workload's messages: $others (want 0 and 0)"
finish
