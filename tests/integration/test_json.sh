#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --json: every line of every mode parses as one JSON object, and a
# workload's known allocations are there with their values.  The workload
# runs under a name of its own (-c sees it alone) and sends COUNT SysV
# messages of SIZE bytes: COUNT kmalloc(48 + SIZE) in load_msg, freed.
#   json.stream     every kmalloc line of load_msg: bytes_req 48 + SIZE,
#                   bytes_alloc its class, ptr a hex string freed by a kfree
#                   line; COUNT of them; numbers are numbers
#   json.hist       --hist-by callsite: load_msg's keys sum to COUNT, in
#                   the bucket of the class
#   json.allocinfo  --allocinfo=total: load_msg's row is COUNT x class bytes
#                   and COUNT calls
#   json.stat       --stat --caller (counted in BPF maps) and with
#                   --stat-stream: one object, load_msg's caller row has COUNT
#                   hits, COUNT x (48 + SIZE) bytes requested and COUNT x
#                   class allocated, the SUMMARY's freed bytes at least that;
#                   its lifetime rows count COUNT frees, as many in their
#                   buckets, and the process table has the workload's row
#                   with at least COUNT allocations
#   json.stat_page  --stat --page --caller (-e page) while the workload
#                   writes PAGES pages into a pipe: the page object's orders
#                   table has at least PAGES order-0 allocations, its cells
#                   add up to the page allocations counted, and its callers
#                   rows have PAGES hits under the pipe's write function
#
# vmtest: host only: JSON is the text modes' events printed otherwise.
. "$(dirname "$0")/../lib.sh"

SIZE=200
COUNT=25
PAGES=64
TESTS=(json.stream json.hist json.allocinfo json.stat json.stat_stream json.stat_page)

require_root
require_kmemsnoop
require_workload
command -v python3 >/dev/null || skip_all "python3 is not installed (it parses the JSON)"

CLASS=$(kmalloc_class $((48 + SIZE)))
cp "$WORKLOAD" "$WORK/kmsj-wl" || skip_all "cannot copy the workload"

# run ID ARGS...: kmemsnoop ARGS -c kmsj-wl while the workload runs.
run() {
	local id=$1
	shift
	ks_start "$id" "$@" -c kmsj-wl -e kmalloc || return 1
	"$WORK/kmsj-wl" msg "$SIZE" "$COUNT" >/dev/null 2>&1
	sleep 0.6
	ks_stop "$id"
}

if run s --json; then
	python3 - "$(ks_out s)" "$SIZE" "$CLASS" "$COUNT" >"$WORK/s.check" 2>&1 <<'PY'
import json, sys
path, size, cls, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
allocs, freed = {}, set()
for n, line in enumerate(open(path), 1):
    ev = json.loads(line)  # every line, or the test fails here
    assert isinstance(ev["pid"], int) and isinstance(ev["cpu"], int), n
    assert isinstance(ev["timestamp"], float), n
    assert ev["ptr"].startswith("0x"), n
    if ev["event"] == "kmalloc" and ev["call_site"].startswith("load_msg+"):
        assert ev["bytes_req"] == 48 + size and ev["bytes_alloc"] == cls, line
        assert isinstance(ev["accounted"], bool) and isinstance(ev["node"], int), line
        allocs[ev["ptr"]] = n
    elif ev["event"] == "kfree" and ev["ptr"] in allocs:
        freed.add(ev["ptr"])
print(len(allocs), len(freed))
PY
	got=$(tail -n 1 "$WORK/s.check")
	[ "$got" = "$COUNT $COUNT" ]
	check $? json.stream "load_msg allocations and their frees: '$got' (want '$COUNT $COUNT'): $(head -c 300 "$WORK/s.check" | tr '\n' ' ')"
else
	fail json.stream "$(ks_start_fail_why s)"
fi

if run h --hist-by callsite --json 0.3; then
	python3 - "$(ks_out h)" "$CLASS" >"$WORK/h.check" 2>&1 <<'PY'
import json, sys
path, cls = sys.argv[1], int(sys.argv[2])
n = 0
for line in open(path):
    iv = json.loads(line)
    assert iv["by"] == "callsite" and isinstance(iv["seconds"], float)
    for k in iv["keys"]:
        if k["key"].startswith("load_msg+"):
            n += sum(b["count"] for b in k["buckets"] if b["low"] <= cls <= b["high"])
print(n)
PY
	got=$(tail -n 1 "$WORK/h.check")
	[ "$got" = "$COUNT" ]
	check $? json.hist "load_msg's allocations in the bucket of $CLASS: '$got' (want $COUNT): $(head -c 300 "$WORK/h.check" | tr '\n' ' ')"
else
	fail json.hist "$(ks_start_fail_why h)"
fi

if run a --allocinfo=total --json; then
	python3 - "$(ks_out a)" >"$WORK/a.check" 2>&1 <<'PY'
import json, sys
tables = [json.loads(line) for line in open(sys.argv[1])]
rows = [r for r in tables[-1]["rows"] if r["tag"].endswith("func:load_msg") or r["tag"].endswith("func:alloc_msg")]
print(len(tables), sum(r["bytes"] for r in rows), sum(r["calls"] for r in rows))
PY
	got=$(tail -n 1 "$WORK/a.check")
	[ "$got" = "1 $((COUNT * CLASS)) $COUNT" ]
	check $? json.allocinfo "tables, load_msg's bytes and calls: '$got' (want '1 $((COUNT * CLASS)) $COUNT'): $(head -c 300 "$WORK/a.check" | tr '\n' ' ')"
else
	fail json.allocinfo "$(ks_start_fail_why a)"
fi

for way in stat stat_stream; do
	args=(--stat --caller --json)
	[ "$way" = stat_stream ] && args+=(--stat-stream)
	if run "$way" "${args[@]}"; then
		python3 - "$(ks_out "$way")" "$COUNT" >"$WORK/$way.check" 2>&1 <<'PY'
import json, sys
objs = [json.loads(line) for line in open(sys.argv[1])]
slab = objs[-1]["slab"]
rows = [r for r in slab["callers"] if r["callsite"].startswith(("load_msg+", "alloc_msg+"))]
life = [r for r in slab["lifetimes"]["callers"] if r["callsite"].startswith(("load_msg+", "alloc_msg+"))]
procs = [p for p in objs[-1]["processes"] if p["comm"] == "kmsj-wl"]
print(len(objs), objs[-1]["type"], sum(r["hit"] for r in rows), sum(r["bytes_req"] for r in rows),
      sum(r["bytes_alloc"] for r in rows), slab["freed"] >= sum(r["bytes_alloc"] for r in rows),
      sum(r["freed"] for r in life), sum(b["count"] for r in life for b in r["buckets"]),
      sum(p["allocs"] for p in procs) >= int(sys.argv[2]))
PY
		got=$(tail -n 1 "$WORK/$way.check")
		want="1 stat $COUNT $((COUNT * (48 + SIZE))) $((COUNT * CLASS)) True $COUNT $COUNT True"
		[ "$got" = "$want" ]
		check $? "json.$way" "objects, load_msg's hits, bytes requested and allocated, freed covers them, its lifetimes' frees and bucket counts, the workload's process row: '$got' (want '$want'): $(head -c 300 "$WORK/$way.check" | tr '\n' ' ')"
	else
		fail "json.$way" "$(ks_start_fail_why "$way")"
	fi
done

if ks_start p --stat --page --caller --json -c kmsj-wl -e page; then
	"$WORK/kmsj-wl" pipe "$PAGES" >/dev/null 2>&1
	sleep 0.6
	ks_stop p
	python3 - "$(ks_out p)" >"$WORK/p.check" 2>&1 <<'PY'
import json, sys
page = [json.loads(line) for line in open(sys.argv[1])][-1]["page"]
print(sum(c["allocs"] for c in page["orders"] if c["order"] == 0),
      sum(c["allocs"] for c in page["orders"]) == page["allocs"],
      sum(r["hit"] for r in page["callers"] if r["callsite"].endswith("pipe_write")))
PY
	read -r order0 adds_up pipe_hits < <(tail -n 1 "$WORK/p.check")
	# At least PAGES: less by no more than the events the kernel skipped.
	m=$(ks_misses p)
	[ "${order0:-0}" -ge $((PAGES - m)) ] 2>/dev/null && [ "$adds_up" = True ] &&
		within_misses json.stat_page "$pipe_hits" "$PAGES" "$m"
	check $? json.stat_page "order-0 allocations in the orders table: '$order0' (want at least $PAGES, less by no more than the $m events missed), the cells add up to page.allocs: '$adds_up', hits under *pipe_write: '$pipe_hits' (want $PAGES): $(head -c 300 "$WORK/p.check" | tr '\n' ' ')"
else
	fail json.stat_page "$(ks_start_fail_why p)"
fi
finish
