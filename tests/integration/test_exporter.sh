#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --listen: the Prometheus endpoint, scraped directly (bash's /dev/tcp: no
# HTTP client needed) and by a real Prometheus server where there is one.
#   exporter.docs        docs/PROMETHEUS.md's alert rules pass promtool check
#                        rules, its scrape configuration promtool check config
#   exporter.errors      while one kmemsnoop serves a port, another one given
#                        it, and one given a bad address: one line, exit 1
#   exporter.http        / (200), another path (404), POST (405) and HEAD
#                        /metrics (its length, no body): status, Content-Type
#                        and body as they have always been
#   exporter.format      /metrics in the text format (0.0.4) and, when the
#                        Accept header asks for it, in OpenMetrics (which ends
#                        with "# EOF"): each with its Content-Type, every line
#                        a HELP, TYPE or sample of a declared family, samples
#                        grouped by family (an awk check of our own)
#   exporter.promtool    the text format passes promtool check metrics
#   exporter.up          Prometheus (127.0.0.1, scraping every second) sees
#                        the target up
#   exporter.callsite    a workload (under a name of its own, -c) sends
#                        COUNT SysV messages of SIZE bytes, twice: the
#                        load_msg series of /metrics reaches COUNT, then
#                        2 x COUNT
#   exporter.prometheus  Prometheus's load_msg series went the same way, and
#                        its rate was above 0
#   exporter.histogram   the kmalloc size histogram's bucket of the
#                        messages' size class holds their allocations,
#                        the bucket below it none of them
#   exporter.top         with --top 2, two call sites and "other": no more
#                        series
#   exporter.ipv6        that kmemsnoop serves on [::1] (where the loopback
#                        has it)
#   exporter.cgroup      with --top 3, after the machine's busiest cgroups
#                        took the series (a few scrapes), a workload moved
#                        into a fresh cgroup v2 directory sends CG_COUNT
#                        messages: it gets a series of its own,
#                        kmemsnoop_cgroup_allocations_total{cgroup="/DIR"},
#                        which counts (at least) them, and there are still
#                        at most 3 series and "other"
#
# The VMs have no prometheus, promtool or curl: exporter.docs, .promtool,
# .up and .prometheus SKIP there, saying so, and the rest read what the
# VM's kmemsnoop served; the text scrape goes to the host in VMTEST-METRICS
# lines, where tools/vmtest runs promtool check metrics on it (vm.promtool).
#
# vmtest: in x86/newest arm64/newest: the static binary of each architecture
# serves there as everywhere.
. "$(dirname "$0")/../lib.sh"

SIZE=200
COUNT=30
CG_COUNT=3000
TESTS=(exporter.docs exporter.errors exporter.http exporter.format exporter.promtool exporter.up
	exporter.callsite exporter.prometheus exporter.histogram exporter.top exporter.ipv6
	exporter.cgroup)

require_root
require_kmemsnoop
require_workload

# Prometheus's parts need prometheus, promtool, curl (its HTTP API) and
# python3 (reading the API's JSON); what is missing is said in their SKIP.
PROM_MISSING=
for tool in prometheus promtool curl python3; do
	command -v $tool >/dev/null || PROM_MISSING="$PROM_MISSING $tool"
done
PROM_WHY="not installed:$PROM_MISSING (apt-get install prometheus curl python3)"

loopback_up


# http_header OUT NAME: the value of the header NAME (any case) in OUT.head.
http_header() {
	awk -v n="$2" 'NR > 1 { i = index($0, ":") } NR > 1 && tolower(substr($0, 1, i - 1)) == tolower(n) {
		v = substr($0, i + 1); sub(/^[ \t]*/, "", v); print v; exit }' "$1.head"
}

# scrape OUT [HEADER...]: GET /metrics from kmemsnoop at $KHOST:$KPORT
# into OUT.body; status 1 unless it answered 200.
scrape() {
	local out=$1
	shift
	http "$out" GET "${KHOST:-127.0.0.1}" "$KPORT" /metrics "$@" && [ "$(http_status "$out")" = 200 ]
}

# sample FILE SERIES: the value of the sample SERIES (name{labels} as
# printed) in the exposition FILE ("" when it has none).  The value is the
# last field: label values may hold blanks.
sample() {
	awk -v s="$2" '{ v = $NF; k = substr($0, 1, length($0) - length(v) - 1) } k == s { print v; exit }' "$1"
}

# sample_sum FILE PREFIX: the sum of the samples whose line starts with
# PREFIX ("" when none).
sample_sum() {
	awk -v p="$2" 'index($0, p) == 1 { s += $NF; n++ } END { if (n) printf "%.0f\n", s }' "$1"
}

# wait_scraped PREFIX WANT SECONDS: scrapes (into $WORK/poll) until the
# samples starting with PREFIX add up to WANT; prints the last sum.
wait_scraped() {
	local end=$((SECONDS + $3)) v
	while :; do
		v=
		scrape "$WORK/poll" && v=$(sample_sum "$WORK/poll.body" "$1")
		[ "$v" = "$2" ] && break
		[ $SECONDS -ge $end ] && break
		nap 0.3
	done
	echo "$v"
	[ "$v" = "$2" ]
}

# query EXPR: Prometheus's value of the first sample of an instant query
# ("" if none).
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

# exposition_problems FILE text|openmetrics: the first problems of an
# exposition, one per line (none: it is well formed as far as this looks).
# Every line a "# HELP name ...", "# TYPE name type" or a sample
# name{label="value",...} VALUE whose name is a declared family's (or it
# with _total, _bucket, _sum, _count, _created or _info after it); a
# family's TYPE once, before its samples, and its samples together; no
# empty line; OpenMetrics: "# EOF" last, the text format: no "# EOF".
exposition_problems() {
	awk -v om="$([ "$2" = openmetrics ] && echo 1 || echo 0)" '
	function bad(why) { if (nbad++ < 5) print "line " NR ": " why ": " substr($0, 1, 120) }
	function family(name,   base, n, i, sfx) {
		if (name in type) return name
		n = split("_total _bucket _sum _count _created _info", sfx, " ")
		for (i = 1; i <= n; i++) {
			if (length(name) > length(sfx[i]) && substr(name, length(name) - length(sfx[i]) + 1) == sfx[i]) {
				base = substr(name, 1, length(name) - length(sfx[i]))
				if (base in type) return base
			}
		}
		return ""
	}
	# labels(s): s starts after "{"; what follows the "}" (or -1 when malformed).
	function labels(s,   c) {
		while (1) {
			if (substr(s, 1, 1) == "}") return substr(s, 2)
			if (!match(s, /^[a-zA-Z_][a-zA-Z0-9_]*="/)) return -1
			s = substr(s, RLENGTH + 1)
			while (1) {
				c = substr(s, 1, 1)
				if (c == "") return -1
				if (c == "\\") { s = substr(s, 3); continue }
				s = substr(s, 2)
				if (c == "\"") break
			}
			if (substr(s, 1, 1) == ",") s = substr(s, 2)
			else if (substr(s, 1, 1) != "}") return -1
		}
	}
	{ lines++ }
	eof { bad("a line after # EOF"); next }
	$0 == "# EOF" { if (!om) bad("# EOF in the text format"); eof = 1; next }
	$0 == "" { bad("an empty line"); next }
	/^# HELP / { next }
	/^# TYPE / {
		if (NF != 4 || $3 !~ /^[a-zA-Z_:][a-zA-Z0-9_:]*$/) { bad("a malformed TYPE"); next }
		if ($3 in type) bad("a second TYPE for " $3)
		if ($4 !~ /^(counter|gauge|histogram|summary|untyped|unknown|info|stateset|gaugehistogram)$/) bad("an unknown type")
		type[$3] = $4
		next
	}
	/^#/ { bad("a comment that is neither HELP nor TYPE"); next }
	{
		if (!match($0, /^[a-zA-Z_:][a-zA-Z0-9_:]*/)) { bad("no metric name"); next }
		name = substr($0, 1, RLENGTH)
		rest = substr($0, RLENGTH + 1)
		if (substr(rest, 1, 1) == "{") rest = labels(substr(rest, 2))
		if (rest == -1) { bad("malformed labels"); next }
		if (rest !~ /^ [-+]?([0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?|NaN|Inf)( -?[0-9]+(\.[0-9]+)?)?$/) { bad("a malformed value"); next }
		f = family(name)
		if (f == "") { bad("a sample of no declared family"); next }
		if (f != last && (f in done)) bad("samples of " f " apart")
		if (last != "" && last != f) done[last] = 1
		last = f
		samples++
	}
	END {
		if (om && !eof) bad("no # EOF at the end")
		if (!samples) print "no sample at all (" lines + 0 " lines)"
	}' "$1"
}

# --- docs/PROMETHEUS.md: its YAML blocks, the scrape configuration first ----
if ! command -v promtool >/dev/null; then
	skip exporter.docs "promtool is not installed (apt-get install prometheus)"
else
	awk '/^```yaml$/ { n++; in_yaml = 1; next } /^```$/ { in_yaml = 0 }
		in_yaml && n == 1 { print > c } in_yaml && n == 2 { print > r }' \
		c="$WORK/doc-scrape.yml" r="$WORK/doc-rules.yml" "$TOP/docs/PROMETHEUS.md"
	{ echo 'rule_files: [doc-rules.yml]'; cat "$WORK/doc-scrape.yml"; } >"$WORK/doc-config.yml"
	promtool check rules "$WORK/doc-rules.yml" >"$WORK/rules.out" 2>&1 &&
		promtool check config "$WORK/doc-config.yml" >>"$WORK/rules.out" 2>&1 &&
		grep -q 'SUCCESS: 2 rules found' "$WORK/rules.out"
	check $? exporter.docs "promtool on docs/PROMETHEUS.md: $(tr '\n' ' ' <"$WORK/rules.out" | head -c 300)"
fi

# --- the endpoint --------------------------------------------------------------
# The workload under a name of its own: -c sees it and nothing else.
KTESTS=(exporter.errors exporter.http exporter.format exporter.promtool exporter.up
	exporter.callsite exporter.prometheus exporter.histogram)
cp "$WORKLOAD" "$WORK/kmsx-wl" || skip_all "cannot copy the workload"
KPORT=$(free_port)
if ! ks_start k --listen "$KPORT" -c kmsx-wl -e kmalloc; then
	fail_rest "${KTESTS[@]}" "$(ks_start_fail_why k)"
elif ! wait_for "$(ks_err k)" 'serving metrics at' 10; then
	fail_rest "${KTESTS[@]}" "no 'serving metrics at' line: $(head -c 300 "$(ks_err k)" | tr '\n' ' ')"
	ks_stop k
else
	# A port in use (by k) and an address that does not resolve: each
	# ends the run before any BPF, in one line, with status 1.
	"$KMEMSNOOP" --listen "$KPORT" -d 1 >/dev/null 2>"$WORK/busy.err"
	rc1=$?
	"$KMEMSNOOP" --listen "no.such.host.invalid:$KPORT" -d 1 >/dev/null 2>"$WORK/bad.err"
	rc2=$?
	[ $rc1 = 1 ] && [ $rc2 = 1 ] && [ "$(wc -l <"$WORK/busy.err")" = 1 ] &&
		grep -q "^kmemsnoop: cannot listen on 127.0.0.1:$KPORT: Address already in use$" "$WORK/busy.err" &&
		[ "$(wc -l <"$WORK/bad.err")" = 1 ] && grep -q "^kmemsnoop: .*bad address" "$WORK/bad.err"
	check $? exporter.errors "port in use: status $rc1, '$(head -c 200 "$WORK/busy.err")'; bad address: status $rc2, '$(head -c 200 "$WORK/bad.err")'"

	# What is not a scrape, and HEAD.
	plain='text/plain; charset=utf-8'
	text_type='text/plain; version=0.0.4; charset=utf-8'
	om_type='application/openmetrics-text; version=1.0.0; charset=utf-8'
	why=
	http "$WORK/root" GET 127.0.0.1 "$KPORT" / &&
		[ "$(http_status "$WORK/root")" = 200 ] && [ "$(http_header "$WORK/root" content-type)" = "$plain" ] &&
		[ "$(cat "$WORK/root.body")" = "kmemsnoop: metrics at /metrics" ] || why="$why GET /: $(head -n 1 "$WORK/root.head"), '$(head -c 80 "$WORK/root.body")';"
	http "$WORK/none" GET 127.0.0.1 "$KPORT" /nothing &&
		[ "$(http_status "$WORK/none")" = 404 ] && [ "$(http_header "$WORK/none" content-type)" = "$plain" ] &&
		[ "$(cat "$WORK/none.body")" = "not found: metrics at /metrics" ] || why="$why GET /nothing: $(head -n 1 "$WORK/none.head"), '$(head -c 80 "$WORK/none.body")';"
	http "$WORK/post" POST 127.0.0.1 "$KPORT" /metrics 'Content-Length: 0' &&
		[ "$(http_status "$WORK/post")" = 405 ] && [ "$(http_header "$WORK/post" content-type)" = "$plain" ] &&
		[ "$(cat "$WORK/post.body")" = "only GET and HEAD" ] || why="$why POST: $(head -n 1 "$WORK/post.head"), '$(head -c 80 "$WORK/post.body")';"
	http "$WORK/head" HEAD 127.0.0.1 "$KPORT" /metrics &&
		[ "$(http_status "$WORK/head")" = 200 ] && [ "$(http_header "$WORK/head" content-type)" = "$text_type" ] &&
		[ "$(http_header "$WORK/head" content-length)" -gt 0 ] 2>/dev/null && [ ! -s "$WORK/head.body" ] ||
		why="$why HEAD /metrics: $(tr '\n' ' ' <"$WORK/head.head"), $(wc -c <"$WORK/head.body") bytes of body;"
	[ -z "$why" ]
	check $? exporter.http "${why% ;}"

	# /metrics in both formats.
	scrape "$WORK/text"
	st1=$?
	scrape "$WORK/om" 'Accept: application/openmetrics-text; version=1.0.0'
	st2=$?
	exposition_problems "$WORK/text.body" text >"$WORK/text.problems"
	exposition_problems "$WORK/om.body" openmetrics >"$WORK/om.problems"
	[ $st1 = 0 ] && [ $st2 = 0 ] && [ ! -s "$WORK/text.problems" ] && [ ! -s "$WORK/om.problems" ] &&
		[ "$(http_header "$WORK/text" content-type)" = "$text_type" ] &&
		[ "$(http_header "$WORK/om" content-type)" = "$om_type" ] &&
		[ "$(http_header "$WORK/text" content-length)" = "$(wc -c <"$WORK/text.body")" ] &&
		grep -q '^kmemsnoop_build_info{version="[^"]*"} 1$' "$WORK/text.body" &&
		[ "$(tail -n 1 "$WORK/om.body")" = "# EOF" ] &&
		grep -q '^# TYPE kmemsnoop_allocations counter$' "$WORK/om.body" &&
		grep -q '^# TYPE kmemsnoop_allocations_total counter$' "$WORK/text.body"
	check $? exporter.format "text: $(head -n 1 "$WORK/text.head"), $(http_header "$WORK/text" content-type), $(wc -c <"$WORK/text.body") bytes: $(first_lines 3 <"$WORK/text.problems"); OpenMetrics: $(head -n 1 "$WORK/om.head"), $(http_header "$WORK/om" content-type), ends with '$(tail -n 1 "$WORK/om.body")': $(first_lines 3 <"$WORK/om.problems")"

	if ! command -v promtool >/dev/null && grep -q 'vmtest\.tests=' /proc/cmdline 2>/dev/null; then
		# In a VM of tools/vmtest: what the VM served goes to the host,
		# whose promtool checks it (vm.promtool).
		sed 's/^/VMTEST-METRICS /' "$WORK/text.body"
		skip exporter.promtool "no promtool in the VM: tools/vmtest's vm.promtool checks this scrape on the host"
	elif ! command -v promtool >/dev/null; then
		skip exporter.promtool "promtool is not installed (apt-get install prometheus)"
	else
		promtool check metrics <"$WORK/text.body" >"$WORK/promtool.out" 2>&1
		rc=$?
		[ $rc = 0 ] && [ -s "$WORK/text.body" ]
		check $? exporter.promtool "promtool: status $rc: $(head -c 300 "$WORK/promtool.out" | tr '\n' ' ')"
	fi

	PROM=0
	if [ -n "$PROM_MISSING" ]; then
		skip exporter.up "$PROM_WHY"
	else
		PPORT=$(free_port)
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
		check $? exporter.up "up{job=\"kmemsnoop\"} is '$got' after 40 s (want 1): $(tail -n 3 "$WORK/prometheus.log" | tr '\n' ' ')" &&
			PROM=1
	fi

	# Two batches of COUNT messages: the series is born with the first,
	# grows with the second.
	prefix='kmemsnoop_callsite_allocations_total{callsite="load_msg'
	site='kmemsnoop_callsite_allocations_total{callsite=~"load_msg.*"}'
	"$WORK/kmsx-wl" msg "$SIZE" "$COUNT" >/dev/null 2>&1
	got1=$(wait_scraped "$prefix" "$COUNT" 20)
	st1=$?
	[ $PROM = 1 ] && { pgot1=$(wait_query "sum($site)" "$COUNT" 20); pst1=$?; }
	"$WORK/kmsx-wl" msg "$SIZE" "$COUNT" >/dev/null 2>&1
	got2=$(wait_scraped "$prefix" "$((2 * COUNT))" 20)
	st2=$?
	cp "$WORK/poll.body" "$WORK/after.txt"
	[ $st1 = 0 ] && [ $st2 = 0 ]
	check $? exporter.callsite "load_msg's series in /metrics: '$got1' then '$got2' (want $COUNT then $((2 * COUNT)))"

	if [ $PROM = 1 ]; then
		pgot2=$(wait_query "sum($site)" "$((2 * COUNT))" 20)
		pst2=$?
		end=$((SECONDS + 10))
		while :; do
			rate=$(query "sum(rate(${site}[10s]))")
			awk -v r="$rate" 'BEGIN { exit !(r + 0 > 0) }' || [ $SECONDS -ge $end ] || {
				sleep 0.5
				continue
			}
			break
		done
		[ $pst1 = 0 ] && [ $pst2 = 0 ] && awk -v r="$rate" 'BEGIN { exit !(r + 0 > 0) }'
		check $? exporter.prometheus "Prometheus's load_msg series: '$pgot1' then '$pgot2' (want $COUNT then $((2 * COUNT))); its rate over 10 s: '$rate' (want > 0)"
	elif [ -n "$PROM_MISSING" ]; then
		skip exporter.prometheus "$PROM_WHY"
	else
		skip exporter.prometheus "Prometheus did not see the target (exporter.up)"
	fi

	# The messages' bucket: bytes_alloc is the kmalloc class of 48 + SIZE.
	CLASS=$(kmalloc_class $((48 + SIZE)))
	lo=1
	while [ $((lo * 2)) -le "$CLASS" ]; do lo=$((lo * 2)); done
	bucket='kmemsnoop_allocation_size_bytes_bucket{class="kmalloc",le="%s"}'
	# shellcheck disable=SC2059
	upper=$(sample "$WORK/after.txt" "$(printf "$bucket" $((lo * 2 - 1)))")
	# shellcheck disable=SC2059
	below=$(sample "$WORK/after.txt" "$(printf "$bucket" $((lo - 1)))")
	in_bucket=$(awk -v u="$upper" -v b="$below" 'BEGIN { if (u != "" && b != "") print u - b }')
	# The workload's own few allocations besides the messages (its queue).
	awk -v n="$in_bucket" -v c="$((2 * COUNT))" -v b="$below" \
		'BEGIN { exit !(n != "" && n >= c && n < c + 10 && b < 10) }'
	check $? exporter.histogram "the kmalloc bucket $lo..$((lo * 2 - 1)): '$in_bucket' (want $((2 * COUNT)), give or take the workload's own few), below it: '$below'"
	ks_stop k
fi

# --top 2: two call sites and "other", whatever the machine does; served
# on [::1] where the loopback has it.
KPORT=$(free_port)
KHOST=127.0.0.1
if grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 2>/dev/null; then
	KHOST=::1
	where="[::1]:$KPORT"
else
	where=$KPORT
fi
if ks_start t --listen "$where" --top 2 -e kmalloc; then
	wait_for "$(ks_err t)" 'serving metrics at' 10
	"$WORKLOAD" msg "$SIZE" 10 >/dev/null 2>&1
	"$WORKLOAD" openclose 200 >/dev/null 2>&1
	scrape "$WORK/top"
	st=$?
	n=$(grep -c '^kmemsnoop_callsite_allocations_total{' "$WORK/top.body")
	o=$(grep -c '^kmemsnoop_callsite_allocations_total{callsite="other"}' "$WORK/top.body")
	g=$(grep -c '^kmemsnoop_outstanding_bytes{' "$WORK/top.body")
	ks_stop t
	rc=$?
	if [ "$KHOST" = ::1 ]; then
		[ $st = 0 ] && grep -q "^kmemsnoop: serving metrics at http://\[::1\]:$KPORT/metrics\$" "$(ks_err t)"
		check $? exporter.ipv6 "--listen [::1]:$KPORT: $(head -n 1 "$WORK/top.head"); $(grep 'serving\|listen' "$(ks_err t)" | first_lines 2)"
	else
		skip exporter.ipv6 "the loopback has no ::1 (/proc/net/if_inet6)"
	fi
	[ "$n" = 3 ] && [ "$o" = 1 ] && [ "$g" -le 3 ] && [ $rc = 0 ]
	check $? exporter.top "--top 2: $n call site series ($o other; want 3 and 1), $g outstanding series (want <= 3), status $rc"
else
	fail_rest exporter.ipv6 exporter.top "$(ks_start_fail_why t)"
fi
KHOST=127.0.0.1

# --- the cgroup label: a workload in a cgroup of its own ---------------------------
ROOT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
MOUNTED=
# None mounted (the test VMs' initramfs): a cgroup2 mount of our own.
if [ -z "$ROOT" ] && mkdir -p "$WORK/cgroup2" && mount -t cgroup2 none "$WORK/cgroup2" 2>/dev/null; then
	ROOT=$WORK/cgroup2
	MOUNTED=$ROOT
fi
CG="$ROOT/kmemsnoop-exporter.$$"
KPORT=$(free_port)
if [ -z "$ROOT" ]; then
	skip exporter.cgroup "no cgroup v2 hierarchy is mounted, and none could be"
elif ! mkdir "$CG" 2>/dev/null; then
	skip exporter.cgroup "cannot create a cgroup under $ROOT"
elif ! wl_start c msg "$SIZE" "$CG_COUNT" || ! echo "${WL_PID[c]}" >"$CG/cgroup.procs"; then
	wl_kill c
	skip exporter.cgroup "cannot start the workload in $CG"
elif ! ks_start g --listen "$KPORT" --top 3 -e kmalloc; then
	wl_kill c
	fail exporter.cgroup "$(ks_start_fail_why g)"
else
	wait_for "$(ks_err g)" 'serving metrics at' 10
	# Each scrape is a reading: the machine's own cgroups take the series.
	for _ in 1 2 3 4; do
		scrape "$WORK/cgwarm"
		sleep 0.3
	done
	wl_run c
	scrape "$WORK/cgroup"
	ks_stop g
	rc=$?
	series="kmemsnoop_cgroup_allocations_total{cgroup=\"${CG#"$ROOT"}\"}"
	got=$(sample "$WORK/cgroup.body" "$series")
	n=$(grep -c '^kmemsnoop_cgroup_allocations_total{' "$WORK/cgroup.body")
	[ $rc = 0 ] && [ -n "$got" ] && [ "$got" -ge "$CG_COUNT" ] && [ "$n" -le 4 ]
	check $? exporter.cgroup "$series: '$got' (want at least $CG_COUNT), status $rc; cgroup series: $n (want at most 4): $(grep '^kmemsnoop_cgroup_allocations_total{' "$WORK/cgroup.body" | tr '\n' ' ' | head -c 400)"
fi
rmdir "$CG" 2>/dev/null
[ -n "$MOUNTED" ] && umount "$MOUNTED" 2>/dev/null
finish
