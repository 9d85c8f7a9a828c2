#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Page allocator events.  The workload writes PAGES pages into a pipe
# (one order-0 page each, GFP_HIGHUSER|__GFP_ACCOUNT, see workload.c),
# reads them back and closes it.  kmemsnoop -p PID and the kernel's own
# trace (tracefs, same pid, same window) must agree on the page events:
# their numbers and the (event, pfn, order, migratetype, gfp_flags)
# multisets, pfn being printed unhashed by both.  kmemsnoop's page= is the
# real struct page address: linear in the pfn.
#
# vmtest: every VM: the page events and page addresses of each kernel and
# architecture.
. "$(dirname "$0")/../lib.sh"

TESTS=(pages.clean_stop pages.workload_fact pages.pipe_pages pages.alloc_count pages.free_count
	pages.pfns pages.page_addresses)
PAGES=32
PIPE_GFP='GFP_HIGHUSER|__GFP_ACCOUNT'

require_root
require_kmemsnoop
require_workload
require_tracefs

start_traced w k -- pipe "$PAGES"
ks_watch_misses k
oracle_ok=1
oracle_start o "$PID" || oracle_ok=0
wl_run w || fail pages.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
[ $oracle_ok = 1 ] && { oracle_stop o || oracle_ok=0; }
ks_check_stop pages.clean_stop k
misses=$(ks_misses k)

tab=$WORK/k.tab
ev_table "$(ks_out k)" >"$tab"
pipe_cond='$5 == "mm_page_alloc" && $13 == 0 && $10 == "'"$PIPE_GFP"'"'

if [ $oracle_ok = 1 ]; then
	otab=$WORK/o.tab
	ev_table "$(oracle_file o)" >"$otab"
	# The workload does what workload.c says on this kernel (if not, the
	# other results are about the workload, not kmemsnoop).
	n=$(ev_count "$otab" "$pipe_cond")
	[ "$n" -eq "$PAGES" ]
	check $? pages.workload_fact "the kernel traced $n order-0 $PIPE_GFP page allocations, workload.c says $PAGES"
fi

n=$(ev_count "$tab" "$pipe_cond"' && $2 == '"$PID")
[ "$n" -eq "$PAGES" ]
check $? pages.pipe_pages "expected $PAGES order-0 mm_page_alloc with $PIPE_GFP in task $PID, got $n (all mm_page_alloc: $(ev_count "$tab" '$5 == "mm_page_alloc"'))"

if [ $oracle_ok = 1 ]; then
	for e in mm_page_alloc mm_page_free; do
		ev_keys "$otab" '$5 == "'$e'"' '$5' >"$WORK/o.$e"
		ev_keys "$tab" '$5 == "'$e'"' '$5' >"$WORK/k.$e"
		if [ ! -s "$WORK/o.$e" ]; then
			fail "pages.${e#mm_page_}_count" "the kernel traced no $e in the workload"
		else
			compare_to_oracle "pages.${e#mm_page_}_count" "$WORK/o.$e" "$WORK/k.$e" "$misses" "$e counts"
		fi
	done
	ev_keys "$otab" '$5 ~ /^mm_page_/' '$2, $5, $14' >"$WORK/o.pfns"
	ev_keys "$tab" '$5 ~ /^mm_page_/' '$2, $5, $14' >"$WORK/k.pfns"
	compare_to_oracle pages.pfns "$WORK/o.pfns" "$WORK/k.pfns" "$misses" "page events (tid, event, pfn, order, migratetype, gfp_flags)"
else
	fail_rest pages.workload_fact pages.alloc_count pages.free_count pages.pfns "tracefs oracle: $ORACLE_ERR"
fi

# page= against pfn: one struct page per pfn, equally spaced.
res=$(awk -F'\t' '$5 ~ /^mm_page_/ { print $15, $12 }' "$tab" |
	sed -n 's/^\([0-9a-f]\{16\}\) 0x\([0-9a-f]*\)$/\1 \2/p' | sort -u | {
	read -r p0 f0 || { echo "no page events"; exit; }
	stride="" n=0
	while read -r p f; do
		[ "$f" = "$f0" ] && { echo "pfn 0x$f0 has two page addresses"; exit; }
		d=$(((0x$p - 0x$p0) / (0x$f - 0x$f0)))
		r=$(((0x$p - 0x$p0) % (0x$f - 0x$f0)))
		if [ "$r" -ne 0 ] || { [ -n "$stride" ] && [ "$d" -ne "$stride" ]; }; then
			echo "page=$p pfn=0x$f is off the line of page=$p0 pfn=0x$f0 (stride ${stride:-?})"
			exit
		fi
		stride=$d n=$((n + 1))
	done
	if [ $n -eq 0 ]; then echo "only one distinct page"; elif [ "$stride" -lt 32 ] || [ "$stride" -gt 512 ]; then echo "stride $stride is no struct page size"; fi
})
[ -z "$res" ]
check $? pages.page_addresses "$res"

finish
