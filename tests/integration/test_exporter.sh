#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --listen: the Prometheus endpoint, scraped by a real Prometheus server.
#   exporter.errors      a port in use and a bad address: one line, exit 1
#   exporter.promtool    /metrics passes promtool check metrics; OpenMetrics
#                        (asked for by Accept) ends with "# EOF"
#   exporter.up          Prometheus (127.0.0.1, scraping every second) sees
#                        the target up
#   exporter.callsite    a workload (under a name of its own, -c) sends
#                        COUNT SysV messages of SIZE bytes, twice:
#                        Prometheus's load_msg series reaches COUNT, then
#                        2 x COUNT, and its rate was above 0
#   exporter.histogram   the kmalloc size histogram's bucket of the
#                        messages' size class holds their allocations,
#                        the bucket below it none of them
#   exporter.docs        docs/PROMETHEUS.md's alert rules pass promtool check
#                        rules, its scrape configuration promtool check config
#   exporter.top         with --top 2, two call sites and "other": no more
#                        series
#   exporter.cgroup      with --top 3, after the machine's busiest cgroups
#                        took the series (a few scrapes), a workload moved
#                        into a fresh cgroup v2 directory sends CG_COUNT
#                        messages: it gets a series of its own,
#                        kmemsnoop_cgroup_allocations_total{cgroup="/DIR"},
#                        which counts (at least) them, and there are still
#                        at most 3 series and "other"
#
# vmtest: host only: HTTP and Prometheus are user space, and not in the VMs.
. "$(dirname "$0")/../lib.sh"

SIZE=200
COUNT=30
CG_COUNT=3000
TESTS=(exporter.errors exporter.promtool exporter.up exporter.callsite exporter.histogram
	exporter.top exporter.docs exporter.cgroup)

require_root
require_kmemsnoop
require_workload

for tool in curl prometheus promtool python3; do
	command -v $tool >/dev/null || skip_all "$tool is not installed (apt-get install prometheus curl)"
done

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# serving ID: wait for kmemsnoop's "serving metrics" line (after "Tracing").
serving() {
	local end=$((SECONDS + 10))
	until grep -q 'serving metrics at' "$(ks_err "$1")" || [ $SECONDS -ge $end ]; do
		sleep 0.05
	done
}

# query EXPR: the value of the first sample of an instant query ("" if none).
query() {
	curl -s --max-time 5 --get --data-urlencode "query=$1" \
		"http://127.0.0.1:$PPORT/api/v1/query" |
		python3 -c 'import json, sys
r = json.load(sys.stdin)["data"]["result"]
print(r[0]["value"][1] if r else "")' 2>/dev/null
}

# wait_query EXPR WANT SECONDS: until EXPR's value is WANT.
wait_query() {
	local end=$((SECONDS + $3)) v
	while :; do
		v=$(query "$1")
		[ "$v" = "$2" ] && break
		[ $SECONDS -ge $end ] && break
		sleep 0.5
	done
	echo "$v"
	[ "$v" = "$2" ]
}

# --- docs/PROMETHEUS.md: its YAML blocks, the scrape configuration first ----
awk '/^```yaml$/ { n++; in_yaml = 1; next } /^```$/ { in_yaml = 0 }
	in_yaml && n == 1 { print > c } in_yaml && n == 2 { print > r }' \
	c="$WORK/doc-scrape.yml" r="$WORK/doc-rules.yml" "$TOP/docs/PROMETHEUS.md"
{ echo 'rule_files: [doc-rules.yml]'; cat "$WORK/doc-scrape.yml"; } >"$WORK/doc-config.yml"
promtool check rules "$WORK/doc-rules.yml" >"$WORK/rules.out" 2>&1 &&
	promtool check config "$WORK/doc-config.yml" >>"$WORK/rules.out" 2>&1 &&
	grep -q 'SUCCESS: 2 rules found' "$WORK/rules.out"
check $? exporter.docs "promtool on docs/PROMETHEUS.md: $(tr '\n' ' ' <"$WORK/rules.out" | head -c 300)"

# --- errors ------------------------------------------------------------------
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(30)' >"$WORK/busy.port" &
BG_PIDS+=($!)
end=$((SECONDS + 10))
until [ -s "$WORK/busy.port" ] || [ $SECONDS -ge $end ]; do sleep 0.05; done
busy=$(cat "$WORK/busy.port")
"$KMEMSNOOP" --listen "$busy" -d 1 >/dev/null 2>"$WORK/busy.err"
rc1=$?
"$KMEMSNOOP" --listen "no.such.host.invalid:$busy" -d 1 >/dev/null 2>"$WORK/bad.err"
rc2=$?
[ $rc1 = 1 ] && [ $rc2 = 1 ] && [ "$(wc -l <"$WORK/busy.err")" = 1 ] &&
	grep -q "^kmemsnoop: cannot listen on 127.0.0.1:$busy: Address already in use$" "$WORK/busy.err" &&
	[ "$(wc -l <"$WORK/bad.err")" = 1 ] && grep -q "^kmemsnoop: .*bad address" "$WORK/bad.err"
check $? exporter.errors "port in use: status $rc1, '$(head -c 200 "$WORK/busy.err")'; bad address: status $rc2, '$(head -c 200 "$WORK/bad.err")'"

# --- the endpoint, scraped by Prometheus -------------------------------------
# The workload under a name of its own: -c sees it and nothing else.
cp "$WORKLOAD" "$WORK/kmsx-wl" || skip_all "cannot copy the workload"
KPORT=$(free_port)
PPORT=$(free_port)
if ! ks_start k --listen "$KPORT" -c kmsx-wl -e kmalloc; then
	fail_rest "${TESTS[@]:1:4}" "$(ks_start_fail_why k)"
else
	serving k
	url="http://127.0.0.1:$KPORT/metrics"
	curl -s --max-time 10 "$url" >"$WORK/metrics.txt"
	curl -s --max-time 10 -D "$WORK/om.head" \
		-H 'Accept: application/openmetrics-text; version=1.0.0' "$url" >"$WORK/metrics.om"
	promtool check metrics <"$WORK/metrics.txt" >"$WORK/promtool.out" 2>&1
	rc=$?
	[ $rc = 0 ] && grep -q '^kmemsnoop_build_info{version="[^"]*"} 1$' "$WORK/metrics.txt" &&
		[ "$(tail -n 1 "$WORK/metrics.om")" = "# EOF" ] &&
		grep -qi '^content-type: application/openmetrics-text' "$WORK/om.head" &&
		grep -q '^# TYPE kmemsnoop_allocations counter$' "$WORK/metrics.om"
	check $? exporter.promtool "promtool: status $rc: $(head -c 300 "$WORK/promtool.out" | tr '\n' ' '); OpenMetrics ends with '$(tail -n 1 "$WORK/metrics.om")'"

	mkdir -p "$WORK/tsdb"
	cat >"$WORK/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: kmemsnoop
    static_configs:
      - targets: ['127.0.0.1:$KPORT']
CONF
	prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
		--web.listen-address="127.0.0.1:$PPORT" >"$WORK/prometheus.log" 2>&1 &
	BG_PIDS+=($!)
	got=$(wait_query 'up{job="kmemsnoop"}' 1 40)
	check $? exporter.up "up{job=\"kmemsnoop\"} is '$got' after 40 s (want 1): $(tail -n 3 "$WORK/prometheus.log" | tr '\n' ' ')"

	# Two batches of COUNT messages: the series is born with the first,
	# Prometheus sees it grow with the second.
	site='kmemsnoop_callsite_allocations_total{callsite=~"load_msg.*"}'
	"$WORK/kmsx-wl" msg "$SIZE" "$COUNT" >/dev/null 2>&1
	got1=$(wait_query "sum($site)" "$COUNT" 20)
	st1=$?
	"$WORK/kmsx-wl" msg "$SIZE" "$COUNT" >/dev/null 2>&1
	got2=$(wait_query "sum($site)" "$((2 * COUNT))" 20)
	st2=$?
	end=$((SECONDS + 10))
	while :; do
		rate=$(query "sum(rate(${site}[10s]))")
		awk -v r="$rate" 'BEGIN { exit !(r + 0 > 0) }' || [ $SECONDS -ge $end ] || {
			sleep 0.5
			continue
		}
		break
	done
	[ $st1 = 0 ] && [ $st2 = 0 ] && awk -v r="$rate" 'BEGIN { exit !(r + 0 > 0) }'
	check $? exporter.callsite "load_msg's series: '$got1' then '$got2' (want $COUNT then $((2 * COUNT))); its rate over 10 s: '$rate' (want > 0)"

	# The messages' bucket: bytes_alloc is the kmalloc class of 48 + SIZE.
	CLASS=$(kmalloc_class $((48 + SIZE)))
	lo=1
	while [ $((lo * 2)) -le "$CLASS" ]; do lo=$((lo * 2)); done
	bucket='kmemsnoop_allocation_size_bytes_bucket{class="kmalloc",le="%s"}'
	# shellcheck disable=SC2059
	upper=$(printf "$bucket" $((lo * 2 - 1)))
	# shellcheck disable=SC2059
	lower=$(printf "$bucket" $((lo - 1)))
	in_bucket=$(query "$upper - ignoring(le) $lower")
	below=$(query "$lower")
	# The workload's own few allocations besides the messages (its queue).
	awk -v n="$in_bucket" -v c="$((2 * COUNT))" -v b="$below" \
		'BEGIN { exit !(n >= c && n < c + 10 && b < 10) }'
	check $? exporter.histogram "the kmalloc bucket $lo..$((lo * 2 - 1)): '$in_bucket' (want $((2 * COUNT)), give or take the workload's own few), below it: '$below'"
	ks_stop k
fi

# --top 2: two call sites and "other", whatever the machine does.
KPORT=$(free_port)
if ks_start t --listen "$KPORT" --top 2 -e kmalloc; then
	serving t
	"$WORKLOAD" msg "$SIZE" 10 >/dev/null 2>&1
	"$WORKLOAD" openclose 200 >/dev/null 2>&1
	curl -s --max-time 10 "http://127.0.0.1:$KPORT/metrics" >"$WORK/top.txt"
	n=$(grep -c '^kmemsnoop_callsite_allocations_total{' "$WORK/top.txt")
	o=$(grep -c '^kmemsnoop_callsite_allocations_total{callsite="other"}' "$WORK/top.txt")
	g=$(grep -c '^kmemsnoop_outstanding_bytes{' "$WORK/top.txt")
	ks_stop t
	rc=$?
	[ "$n" = 3 ] && [ "$o" = 1 ] && [ "$g" -le 3 ] && [ $rc = 0 ]
	check $? exporter.top "--top 2: $n call site series ($o other; want 3 and 1), $g outstanding series (want <= 3), status $rc"
else
	fail exporter.top "$(ks_start_fail_why t)"
fi

# --- the cgroup label: a workload in a cgroup of its own ---------------------------
ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG="$ROOT/kmemsnoop-exporter.$$"
KPORT=$(free_port)
if [ -z "$ROOT" ]; then
	skip exporter.cgroup "no cgroup v2 hierarchy is mounted"
elif ! mkdir "$CG" 2>/dev/null; then
	skip exporter.cgroup "cannot create a cgroup under $ROOT"
elif ! wl_start c msg "$SIZE" "$CG_COUNT" || ! echo "${WL_PID[c]}" >"$CG/cgroup.procs"; then
	wl_kill c
	skip exporter.cgroup "cannot start the workload in $CG"
elif ! ks_start g --listen "$KPORT" --top 3 -e kmalloc; then
	wl_kill c
	fail exporter.cgroup "$(ks_start_fail_why g)"
else
	serving g
	# Each scrape is a reading: the machine's own cgroups take the series.
	for _ in 1 2 3 4; do
		curl -s --max-time 10 "http://127.0.0.1:$KPORT/metrics" >/dev/null
		sleep 0.3
	done
	wl_run c
	curl -s --max-time 10 "http://127.0.0.1:$KPORT/metrics" >"$WORK/cgroup.txt"
	ks_stop g
	rc=$?
	series="kmemsnoop_cgroup_allocations_total{cgroup=\"${CG#"$ROOT"}\"}"
	got=$(awk -v s="$series" '$1 == s { print $2 }' "$WORK/cgroup.txt")
	n=$(grep -c '^kmemsnoop_cgroup_allocations_total{' "$WORK/cgroup.txt")
	[ $rc = 0 ] && [ -n "$got" ] && [ "$got" -ge "$CG_COUNT" ] && [ "$n" -le 4 ]
	check $? exporter.cgroup "$series: '$got' (want at least $CG_COUNT), status $rc; cgroup series: $n (want at most 4): $(grep '^kmemsnoop_cgroup_allocations_total{' "$WORK/cgroup.txt" | tr '\n' ' ' | head -c 400)"
fi
rmdir "$CG" 2>/dev/null
finish
