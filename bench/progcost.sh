#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The cost of each BPF program per event, from the kernel's own accounting
# (kernel.bpf_stats_enabled): kmemsnoop runs with the given arguments
# while bench/churn runs a workload, then every kmemsnoop program that ran
# prints its runs and nanoseconds per run.  Deterministic enough to compare
# two builds where throughput ratios are lost in the machine's noise.
#
#   bench/progcost.sh [KMEMSNOOP_ARGS...]     e.g. bench/progcost.sh --hist
# Environment: KS (default ./kmemsnoop), WORKLOAD (openclose or pages,
# default openclose), SECONDS_PER_RUN (3), ROUNDS (3: the median is shown).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
KS=${KS:-./kmemsnoop}
WORKLOAD=${WORKLOAD:-openclose}
SECONDS_PER_RUN=${SECONDS_PER_RUN:-3}
ROUNDS=${ROUNDS:-3}
BPFTOOL=$(command -v bpftool || echo /usr/sbin/bpftool)

die() { echo "progcost: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root"
[ -x bench/churn ] || die "bench/churn is missing: make bench/churn"
command -v jq >/dev/null || die "needs jq"
old=$(sysctl -n kernel.bpf_stats_enabled)
trap 'sysctl -qw kernel.bpf_stats_enabled="$old"' EXIT
sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"
tmp=$(mktemp -d) || die "no scratch directory"

# One round: "name runs ns" per program the kmemsnoop process holds (the
# ids in its /proc/PID/fdinfo: other tracers may be loaded meanwhile).
round() {
	local pid id
	"$KS" "$@" >/dev/null 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 100); do grep -q Tracing "$tmp/err" && break; sleep 0.1; done
	bench/churn "$WORKLOAD" "$SECONDS_PER_RUN" 1 >/dev/null
	for id in $(awk '$1 == "prog_id:" { print $2 }' /proc/"$pid"/fdinfo/* 2>/dev/null | sort -u); do
		"$BPFTOOL" prog show id "$id" -j |
			jq -r '"\(.name) \(.run_cnt // 0) \(.run_time_ns // 0)"'
	done
	kill -INT "$pid"
	wait "$pid"
}

for r in $(seq "$ROUNDS"); do round "$@" | sed "s/^/$r /"; done >"$tmp/all"
echo "progcost: $KS $*; $WORKLOAD, $ROUNDS rounds of ${SECONDS_PER_RUN}s (median ns/run)"
awk '$3 > 0 { print $2, $4 / $3, $3 }' "$tmp/all" | sort -k1,1 -k2,2n |
	awk '{ n[$1]++; v[$1, n[$1]] = $2; c[$1] += $3 }
	END { for (p in n) printf "%-28s %9.1f ns %12d runs\n", p, v[p, int((n[p] + 1) / 2)], c[p] / n[p] }' |
	sort
rm -rf "$tmp"
