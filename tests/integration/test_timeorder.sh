#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Live text and --json lines come in time order although each CPU has its
# own ring, read one after the other.  The load keeps both CPUs allocating
# at once: a workload copy under a name of its own (-c sees it alone) does
# "pingpong SIZE COUNT" (each message allocated on CPU 0 and freed on
# CPU 1) while two more copies do "openclose N", pinned to CPU 0 and CPU 1
# when taskset is there.
#   timeorder.text_order   no line's timestamp is before the previous line's,
#                          and no free_msg kfree comes before the load_msg
#                          kmalloc of its pointer (made on the other CPU),
#                          but for as many kmallocs as are missing
#   timeorder.text_events  every event of the load is there: COUNT load_msg
#                          kmallocs and COUNT free_msg kfrees, 2N filp
#                          allocations (one per open)
#   timeorder.text_clean   exit 0, nothing lost, no line out of order said
#                          on stderr
#   timeorder.btf_*        the same with --prog-type=tp_btf, whose runs 7.x
#                          preempts (auto chooses classic programs there):
#                          nothing lost either, for a run holds preemption
#                          off while it holds a stage level (it once left
#                          the CPU's other runs only the levels above, and
#                          hundreds of events were lost a run); events the
#                          kernel skipped (a run of the same program was
#                          preempted on that CPU) are counted, not lost
#   timeorder.json_*       the same with --json
#
# vmtest: in x86/newest x86/newest+full: merging the CPUs' rings by time is
# user space; 7.x is where preempted programs once reordered them.
. "$(dirname "$0")/../lib.sh"

PP_SIZE=200
PP_COUNT=3000
OC=2000
TESTS=(timeorder.text_order timeorder.text_events timeorder.text_clean
	timeorder.btf_order timeorder.btf_events timeorder.btf_clean
	timeorder.json_order timeorder.json_events timeorder.json_clean)

require_root
require_kmemsnoop
require_workload
if [ "$(online_cpus | wc -l)" -lt 2 ] || ! online_cpus | grep -qx 1; then
	skip_all "needs CPUs 0 and 1 online (the rings of two CPUs)"
fi
cp "$WORKLOAD" "$WORK/kmsto-wl" || skip_all "cannot copy the workload"

# on_cpu CPU COMMAND...: COMMAND pinned to CPU where taskset exists.
on_cpu() {
	local cpu=$1
	shift
	if command -v taskset >/dev/null; then
		taskset -c "$cpu" "$@"
	else
		"$@"
	fi
}

# load ID: the three workload copies at once; status 1 when one failed.
load() {
	local id=$1 p0 p1 pp rc=0
	on_cpu 0 "$WORK/kmsto-wl" openclose $OC >/dev/null 2>"$WORK/$id.oc0.err" &
	p0=$!
	on_cpu 1 "$WORK/kmsto-wl" openclose $OC >/dev/null 2>"$WORK/$id.oc1.err" &
	p1=$!
	"$WORK/kmsto-wl" pingpong $PP_SIZE $PP_COUNT >/dev/null 2>"$WORK/$id.pp.err" &
	pp=$!
	for p in $p0 $p1 $pp; do
		wait_pid "$p" "$WL_TIMEOUT" || rc=1
	done
	return $rc
}

# run ID ARGS...: kmemsnoop ARGS -c kmsto-wl around the load; PASS/FAIL
# ID's clean test.  Status 1 when there is no trace to look at.
run() {
	local id=$1 name=timeorder.$1_clean
	shift
	if ! ks_start "$id" "$@" -c kmsto-wl; then
		fail_rest "timeorder.${id}_order" "timeorder.${id}_events" "$name" \
			"$(ks_start_fail_why "$id")"
		return 1
	fi
	if ! load "$id"; then
		ks_stop "$id"
		fail_rest "timeorder.${id}_order" "timeorder.${id}_events" "$name" \
			"a workload copy failed: $(cat "$WORK/$id".*.err | first_lines 2)"
		return 1
	fi
	ks_check_stop "$name" "$id" || return 0
	# The summary line for lines out of order must not be there.
	if grep -q 'out of time order' "$(ks_err "$id")"; then
		REPORTED[$name]=
		PASSED=$((PASSED - 1))
		fail "$name" "$(grep 'out of time order' "$(ks_err "$id")" | first_lines 1)"
	fi
	return 0
}

# check_lines ID: the order and the events of run ID's text lines (the
# rows of ev_table, in the order of the output).
check_lines() {
	local id=$1 bad n na nf nn why misses
	ev_table "$(ks_out "$id")" >"$WORK/$id.tab"
	# A kfree whose kmalloc the programs missed has no kmalloc before it:
	# only kfrees beyond the missing kmallocs are out of order.
	bad=$(awk -F'\t' -v want=$PP_COUNT '
	$1 == "BAD" { print "unparsable line " NR ": " $2; exit }
	{
		# As a decimal: busybox awk (the VMs) reads "000405" as octal.
		ts = $4 + 0
		if (NR > 1 && ts < prev) { back++; if (!ex) ex = "line " NR ": " $4 " after " prevs }
		prev = ts; prevs = $4
	}
	$5 == "kmalloc" && $6 ~ /^load_msg\+/ { live[$7] = 1; allocs++ }
	$5 == "kfree" && $6 ~ /^free_msg\+/ { if (!($7 in live)) early++; delete live[$7] }
	END {
		if (back) printf "%d timestamps go backwards (first %s); ", back, ex
		if (early > want - allocs)
			printf "%d free_msg kfrees before their load_msg kmalloc (%d kmallocs missing)", early, want - allocs
	}' "$WORK/$id.tab")
	n=$(wc -l <"$WORK/$id.tab")
	[ -z "$bad" ] && [ "$n" -gt 0 ]
	check $? timeorder.${id}_order "${bad:-no event lines}" "$(ks_out "$id")"
	na=$(ev_count "$WORK/$id.tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+/')
	nf=$(ev_count "$WORK/$id.tab" '$5 == "kfree" && $6 ~ /^free_msg\+/')
	nn=$(ev_count "$WORK/$id.tab" "$FILP_ALLOC")
	why="load_msg kmallocs $na, free_msg kfrees $nf (want $PP_COUNT each), filp allocations $nn (want $((2 * OC)))"
	ks_final_misses "$id"
	misses=$(cat "$WORK/$id.misses" 2>/dev/null || echo 0)
	if [ "$na" -eq $PP_COUNT ] && [ "$nf" -eq $PP_COUNT ] && [ "$nn" -eq $((2 * OC)) ]; then
		pass timeorder.${id}_events
	elif [ "$na" -le $PP_COUNT ] && [ "$nf" -le $PP_COUNT ] && [ "$nn" -le $((2 * OC)) ] &&
		[ "$misses" -ge $((2 * PP_COUNT + 2 * OC - na - nf - nn)) ]; then
		skip timeorder.${id}_events "$why, and the kernel skipped $misses events (a run of the same program already on that CPU)"
	else
		fail timeorder.${id}_events "$why"
	fi
}

if run text; then
	check_lines text
fi
# Where the tracepoints run programs preemptibly (7.x), auto chooses
# classic programs; tp_btf's runs can be preempted there, but not while
# they hold a stage level.
if run btf --prog-type=tp_btf; then
	check_lines btf
fi

if ! command -v python3 >/dev/null; then
	skip_rest timeorder.json_order timeorder.json_events timeorder.json_clean \
		"python3 is not installed (it parses the JSON)"
elif run json --json; then
	python3 - "$(ks_out json)" $PP_COUNT >"$WORK/json.check" 2>&1 <<'PY'
import json, sys
back, early, first = 0, 0, ""
prev = None
live = set()
na = nf = nn = 0
for n, line in enumerate(open(sys.argv[1]), 1):
    ev = json.loads(line)
    ts = round(ev["timestamp"] * 1000000)
    if prev is not None and ts < prev:
        back += 1
        first = first or "line %d: %.6f after %.6f" % (n, ts / 1e6, prev / 1e6)
    prev = ts
    site = ev.get("call_site", "")
    if ev["event"] == "kmalloc" and site.startswith("load_msg+"):
        live.add(ev["ptr"])
        na += 1
    elif ev["event"] == "kfree" and site.startswith("free_msg+"):
        nf += 1
        if ev["ptr"] not in live:
            early += 1
        live.discard(ev["ptr"])
    elif ev["event"] == "kmem_cache_alloc" and (ev.get("name") == "filp" or
            (not ev.get("name") and (site.startswith("__alloc_file+") or
                                     site.startswith("alloc_empty_file+")))):
        nn += 1
# A kfree whose kmalloc was missed has no kmalloc before it.
early = max(0, early - (int(sys.argv[2]) - na))
print(back, early, first.replace(" ", "_") or "-")
print(na, nf, nn)
PY
	order=$(tail -n 2 "$WORK/json.check" | head -n 1)
	read -r back early ex <<<"$order"
	[ "$back" = 0 ] && [ "$early" = 0 ]
	check $? timeorder.json_order "backward timestamps, kfrees before their kmalloc, first: '$order' (want '0 0 -'): $(head -c 300 "$WORK/json.check" | tr '\n' ' ')" "$(ks_out json)"
	got=$(tail -n 1 "$WORK/json.check")
	read -r na nf nn <<<"$got"
	ks_final_misses json
	misses=$(cat "$WORK/json.misses" 2>/dev/null || echo 0)
	why="load_msg kmallocs, free_msg kfrees, filp allocations: '$got' (want '$PP_COUNT $PP_COUNT $((2 * OC))')"
	if [ "$got" = "$PP_COUNT $PP_COUNT $((2 * OC))" ]; then
		pass timeorder.json_events
	elif [ "${na:-0}" -le $PP_COUNT ] && [ "${nf:-0}" -le $PP_COUNT ] && [ "${nn:-0}" -le $((2 * OC)) ] &&
		[ "$misses" -ge $((2 * PP_COUNT + 2 * OC - ${na:-0} - ${nf:-0} - ${nn:-0})) ]; then
		skip timeorder.json_events "$why, and the programs missed $misses events (a program already running on that CPU)"
	else
		fail timeorder.json_events "$why"
	fi
fi
finish
