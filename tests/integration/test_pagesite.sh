#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --allocinfo's callers of page allocations from learned stack frames
# (src/bpf/pagesite.bpf.h) against a stack walk per page.  The workload
# repeats pipe writes and anonymous page faults (pages-rounds) for a few
# seconds; two kmemsnoop instances follow it at once: --allocinfo=total
# -e page (learned frames, with -v) and the same with --stacks, whose
# caller is the innermost frame outside the allocator of each page's full
# stack.  Every caller must have exactly as many pages in both: a page
# attributed to another caller by the learned frames would show as one
# caller's loss and another's gain.  Both stop while the workload, done,
# holds a message and waits (no page allocation): each instance ending with
# the process saw its own share of the exit's (tlb batch pages: one page
# apart in a loaded CI VM).  And the learned frames must have done
# the work (-v), with no audit against a page's stack failing, while
# --stacks walks every stack.
#
# vmtest: every VM: page callers come from stacks, laid out by each kernel
# and architecture.
. "$(dirname "$0")/../lib.sh"

TESTS=(pagesite.clean_stop pagesite.learned pagesite.no_mismatch pagesite.same_callers
	pagesite.same_total pagesite.stacks_walk)
SECONDS_RUN=3
PAGES=64
HEADER='allocinfo - version: 1.0'

require_root
require_kmemsnoop
require_workload

# callers FILE: "CALLS TAG" per caller of the first table, summed over its
# rows (with --stacks, one row per stack; the frames are indented lines).
callers() {
	awk -v h="$HEADER" '$0 == h { t++; next }
	t == 1 && $1 ~ /^-?[0-9]+$/ && $2 ~ /^-?[0-9]+$/ {
		tag = $0; sub(/^ *-?[0-9]+ +-?[0-9]+ /, "", tag); sub(/ +$/, "", tag); c[tag] += $2 }
	END { for (k in c) print c[k], k }' "$1" | sort -k2
}

wl_start w pages-rounds "$SECONDS_RUN" "$PAGES" + msg-hold 8 1 || {
	fail_rest "${TESTS[@]}" "the workload did not start: $(head -c 300 "$WORK/w.werr")"
	finish
}
if ! ks_start kl --allocinfo=total -e page -v -p "${WL_PID[w]}"; then
	fail_rest "${TESTS[@]}" "start: $(ks_start_fail_why kl)"
	wl_kill w
	finish
fi
ks_watch_misses kl
if ! ks_start ks --allocinfo=total --stacks -e page -v -p "${WL_PID[w]}"; then
	fail_rest "${TESTS[@]}" "start with --stacks: $(ks_start_fail_why ks)"
	wl_kill w
	finish
fi
ks_watch_misses ks
wl_go w
wait_for "$WORK/w.wout" '^held$' 60 ||
	fail pagesite.workload "the workload did not get to hold its message: $(head -c 200 "$WORK/w.werr")"
ks_stop kl
rc_l=$?
ks_stop ks
rc_s=$?
wl_kill w
[ $rc_l -eq 0 ] && [ $rc_s -eq 0 ]
check $? pagesite.clean_stop "exit status $rc_l (learned), $rc_s (--stacks): $(tail -n 2 "$WORK/kl.err" "$WORK/ks.err" | tr '\n' ' ')"

misses=$(($(ks_misses kl) + $(ks_misses ks)))
line=$(grep '^kmemsnoop: page callers: ' "$WORK/kl.err")
fast=$(echo "$line" | sed -n 's/^kmemsnoop: page callers: \([0-9]*\) from learned frames.*/\1/p')
mism=$(echo "$line" | sed -n 's/.* \([0-9]*\) mismatches.*/\1/p')
audits=$(echo "$line" | sed -n 's/.* \([0-9]*\) audits.*/\1/p')
if grep -q 'classic tracepoint programs' "$WORK/kl.err"; then
	# The learned frames are read above a tp_btf program's context, on
	# the stack; a classic program's is perf's buffer (7.x).
	skip_rest pagesite.learned pagesite.no_mismatch \
		"classic tracepoint programs run here (7.x): page callers come from their stacks, not learned frames ($line)"
else
	[ -n "$fast" ] && [ "$fast" -gt 0 ]
	check $? pagesite.learned "want callers found from learned frames (-v), got: '${line:-no page callers line}'"
	[ -n "$mism" ] && [ "$mism" -eq 0 ] && [ "${audits:-0}" -gt 0 ]
	check $? pagesite.no_mismatch "want audits and 0 mismatches, got: '${line:-no page callers line}'"
fi

callers "$(ks_out kl)" >"$WORK/learned.callers"
callers "$(ks_out ks)" >"$WORK/stacks.callers"
# Callers whose counts differ, and by how much in all (awk: the VMs'
# busybox has no join).
diff_calls=$(awk '
	{ c = $1; tag = $0; sub(/^[^ ]+ /, "", tag) }
	NR == FNR { l[tag] = c; next }
	{ s[tag] = c }
	END {
		for (k in l) if (!(k in s)) s[k] = 0
		for (k in s) if (!(k in l)) l[k] = 0
		for (k in l) if (l[k] != s[k]) {
			d = l[k] - s[k]; t += d < 0 ? -d : d; n++; w = w " [" k ": " l[k] " vs " s[k] "]"
		}
		print t + 0, n + 0, w
	}' "$WORK/learned.callers" "$WORK/stacks.callers")
set -- $diff_calls
off=$1
[ -s "$WORK/learned.callers" ] && [ "$off" -le "$misses" ]
check $? pagesite.same_callers "pages per caller, learned frames vs --stacks: $2 callers differ by $off pages in all ($misses events missed):${diff_calls#* * }"

tot_l=$(awk '{ s += $1 } END { print s + 0 }' "$WORK/learned.callers")
tot_s=$(awk '{ s += $1 } END { print s + 0 }' "$WORK/stacks.callers")
d=$((tot_l - tot_s))
[ "$tot_l" -gt 0 ] && [ "${d#-}" -le "$misses" ]
check $? pagesite.same_total "pages in all: $tot_l (learned frames), $tot_s (--stacks), $misses events missed"

! grep -q '^kmemsnoop: page callers: ' "$WORK/ks.err"
check $? pagesite.stacks_walk "--stacks must walk every stack, but its -v says: $(grep '^kmemsnoop: page callers: ' "$WORK/ks.err")"

finish
