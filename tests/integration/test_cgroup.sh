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
#   cgroup.hist_by   system-wide --hist-by cgroup: the cgroup's path is a
#                    key, whose bucket of the messages' size class holds
#                    (at least) a second run's COUNT messages
#
# vmtest: every VM: cgroup ids and the cgroup filter, on each kernel.
. "$(dirname "$0")/../lib.sh"

SIZE=200
COUNT=20
OTHER_SIZE=300
OTHER=15
TESTS=(cgroup.complete cgroup.alone cgroup.errors cgroup.hist_by)

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
	fail_rest cgroup.complete cgroup.alone cgroup.hist_by "the workload did not start"
	finish
fi
PID=${WL_PID[w]}
if ! echo "$PID" >"$CG/cgroup.procs"; then
	wl_kill w
	skip_rest cgroup.complete cgroup.alone cgroup.hist_by "cannot move a process into $CG"
	finish
fi
if ! ks_start k --cgroup "$CG" -e kmalloc; then
	fail_rest cgroup.complete cgroup.alone cgroup.hist_by "$(ks_start_fail_why k)"
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

# --- --hist-by cgroup: keyed by the cgroup's path in the hierarchy --------------
# hist_bucket FILE KEY LO: the count of bucket "LO -> ..." summed over the
# blocks of key "cgroup = KEY"; "none" when there is no such block.
hist_bucket() {
	awk -v k="cgroup = $2 " -v lo="$3" '
		/^cgroup = / { mine = index($0, k) == 1; if (mine) n++; next }
		mine && $1 == lo && $2 == "->" { c += $5 }
		END { if (n) print c + 0; else print "none" }' "$1"
}
CLASS=$(kmalloc_class $((48 + SIZE)))
lo=1
while [ $((lo * 2)) -le "$CLASS" ]; do lo=$((lo * 2)); done
REL=${CG#"$ROOT"}
if wl_start h msg "$SIZE" "$COUNT" && echo "${WL_PID[h]}" >"$CG/cgroup.procs" &&
	ks_start hb --hist-by cgroup --top 10000 -e kmalloc 0.3; then
	wl_run h
	# Two more intervals: the last allocations are in a printed block.
	sleep 1
	ks_stop hb
	rc=$?
	got=$(hist_bucket "$(ks_out hb)" "$REL" "$lo")
	[ $rc = 0 ] && [ "$got" != none ] && [ "$got" -ge "$COUNT" ]
	check $? cgroup.hist_by "key 'cgroup = $REL', bucket $lo: '$got' allocations (want at least $COUNT), status $rc; keys seen: $(grep '^cgroup = ' "$(ks_out hb)" | cut -d' ' -f3 | sort -u | head -n 5 | tr '\n' ' ')"
else
	fail cgroup.hist_by "start: workload or $(ks_start_fail_why hb)"
	wl_kill h
fi
finish
