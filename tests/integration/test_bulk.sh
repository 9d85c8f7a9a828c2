#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Slab objects allocated and freed in bulk, which no kmem tracepoint sees.
# "workload uring-hold N" submits N io_uring no-ops in one call: io_uring
# takes its requests from the slab with kmem_cache_alloc_bulk (8 a call),
# holds them in the ring's cache until the ring is closed, then a kworker
# frees them (kmem_cache_free, or kmem_cache_free_bulk on 5.10).
# Where fentry attaches (the test VMs):
#   bulk.said       kmemsnoop -v names the functions it attached to
#   bulk.text       -p: N kmem_cache_alloc_bulk lines at least, all from one
#                   call site outside the slab, of one size, distinct
#                   pointers
#   bulk.recording  the same lines through -o DIR and -i DIR
#   bulk.allocinfo  --allocinfo: that call site's line while the ring is
#                   held, then 0 0 once the kernel has freed the requests
#   bulk.kfree_rcu  "workload semundo-rm UNDO": UNDO semaphore sets, an
#                   undo structure allocated in each; removing the sets
#                   hands the undos to kvfree_rcu(), whose batch a kworker
#                   frees with kfree_bulk() after a grace period, more than
#                   32 pointers a call.  --allocinfo -p: the undos' line
#                   holds UNDO allocations, then their call site holds
#                   UNDO fewer, and kmemsnoop does not say it missed
#                   objects of a bulk call; a system-wide stream shows more
#                   than 32 of them freed by kfree_bulk, or (7.x) some
#                   put into their cache's RCU sheaf by kfree_rcu(), a
#                   free with no event that fexit on __kfree_rcu_sheaf
#                   sees (else SKIP: the kernel made no call to test).  Needs
#                   bpf_loop() (5.17+; -v says), which reads a call's
#                   objects past the first 32: SKIP without it.
# Where it does not (this host's 6.18 refuses fentry): bulk.said checks
# that kmemsnoop says at start that bulk objects are not seen, and the
# others skip with that line.
#
# vmtest: every VM: bulk calls and kfree_rcu differ from kernel to kernel.
. "$(dirname "$0")/../lib.sh"

N=16
UNDO=200
TESTS=(bulk.said bulk.text bulk.recording bulk.allocinfo bulk.kfree_rcu)

require_root
require_kmemsnoop
require_workload

# hold ID KS_ARGS...: the workload traced with -p, holding (lib.sh wl_hold).
hold() {
	local id=$1
	shift
	wl_hold "$id" "uring-hold $N" "$@"
}

# bulk_lines FILE: the kmem_cache_alloc_bulk lines of io_uring's requests
# (the workload's mappings may take maple tree nodes in bulk too).
bulk_lines() {
	grep -E ': kmem_cache_alloc_bulk: call_site=(__)?io_[a-z_]+[+.]' "$1"
}

# field NAME: that field's values of the lines on stdin.
field() {
	sed -E "s/.* $1=([^ ]+).*/\\1/"
}

# bulk_ok LINES: at least N, one call site (function), one size, distinct
# pointers; the call site is not the slab's own.
bulk_ok() {
	local lines=$1 n sites sizes ptrs
	n=$(echo "$lines" | grep -c .)
	sites=$(echo "$lines" | field call_site | sed 's/+.*//' | sort -u)
	sizes=$(echo "$lines" | field bytes_alloc | sort -u | grep -c .)
	ptrs=$(echo "$lines" | field ptr | sort -u | grep -c .)
	[ "$n" -ge "$N" ] && [ "$(echo "$sites" | grep -c .)" = 1 ] && [ "$sizes" = 1 ] &&
		[ "$ptrs" = "$n" ] && ! echo "$sites" | grep -qE '^(kmem_cache_|__kmem_cache_|0x)'
}

if ! hold t -e cache; then
	fail_rest "${TESTS[@]}" "$WHY"
	finish
fi
wl_release t
err=$(ks_err kt)
verbose=$("$KMEMSNOOP" -v -e cache -d 0.1 2>&1 >/dev/null | grep -E '^kmemsnoop: .*bulk')
echo "$verbose" | sed 's/^/# -v: /'
unseen=$(grep -m1 'allocated or freed in bulk.* are not seen\|of kmem_cache_.*_bulk .*not seen' "$err")
if [ -n "$unseen" ]; then
	echo "$verbose" | grep -q 'not seen'
	check $? bulk.said "kmemsnoop said at start: '$unseen'; -v should say it too"
	skip_rest bulk.text bulk.recording bulk.allocinfo bulk.kfree_rcu "$unseen"
	finish
fi
echo "$verbose" | grep -q 'cache_alloc_bulk through kmem_cache_alloc_bulk' &&
	echo "$verbose" | grep -q 'cache_free_bulk through kmem_cache_free_bulk'
check $? bulk.said "-v should name the bulk functions attached to: got '$verbose'"

lines=$(bulk_lines "$(ks_out kt)")
echo "$lines" | head -n 2 | cut -c1-250 | sed 's/^/# line: /'
bulk_ok "$lines"
check $? bulk.text "want $N kmem_cache_alloc_bulk lines or more from io_uring, from one call site, of one size, distinct pointers; got $(echo "$lines" | grep -c .), call sites: $(grep -E ': kmem_cache_alloc_bulk: ' "$(ks_out kt)" | field call_site | sort | uniq -c | first_lines 4)"
SITE=$(echo "$lines" | field call_site | sed 's/+.*//' | sort -u | head -n1)

# --- -o / -i ------------------------------------------------------------------------
DIR=$WORK/rec
if hold o -e cache -o "$DIR"; then
	# -o copies the last records into the ring as it ends (after the
	# workload): a kmemsnoop killed before that leaves them out.
	wl_release o 60
	krc=${KS_RC[ko]}
	"$KMEMSNOOP" -i "$DIR" >"$WORK/i.out" 2>"$WORK/i.err"
	rc=$?
	got=$(bulk_lines "$WORK/i.out")
	[ "$krc" = 0 ] && [ $rc = 0 ] && bulk_ok "$got"
	check $? bulk.recording "kmemsnoop -o exit $krc, -i exit $rc; want $N kmem_cache_alloc_bulk lines or more as in text; got $(echo "$got" | grep -c .) of $(grep -c . "$WORK/i.out") lines" "$WORK/i.err" "$(ks_err ko)"
else
	fail bulk.recording "$WHY"
fi

# --- --allocinfo ----------------------------------------------------------------------
if [ -z "$SITE" ]; then
	fail bulk.allocinfo "no call site from the text run"
elif hold a -e cache --allocinfo 0.3; then
	out=$(ks_out ka)
	n=$(ai_ntables "$out")
	held=none
	if ai_wait_tables "$out" $((n + 2)) 20; then
		held=$(ai_table "$out" $((n + 1)) | ai_func_sum "$SITE")
	fi
	wl_go wa
	wait_for "$WORK/wa.wout" '^closed$' 20
	# The kernel frees the ring's requests from a workqueue after the close.
	end=$((SECONDS + 20))
	got=
	while [ $SECONDS -lt $end ]; do
		got=$(ai_table "$out" "$(ai_ntables "$out")" | ai_func_sum "$SITE")
		[ "$got" = "0 0" ] && break
		nap 0.3
	done
	[ "$held" != none ] && [ "$got" = "0 0" ]
	check $? bulk.allocinfo "$SITE's line: while held '$held' (want a line), after the close '$got' (want '0 0')" "$out"
	wl_go wa
	wl_wait wa
	ks_wait ka 20
else
	fail bulk.allocinfo "$WHY"
fi

# --- kvfree_rcu()'s batches: kfree_bulk() of more than 32 pointers ------------------
# undo_line FILE N: "BYTES TAG FUNC" of the line of table N with UNDO
# allocations of at most 512 bytes each (the undos; the sets themselves are
# larger).
undo_line() {
	ai_table "$1" "$2" | awk -v u="$UNDO" '$2 == u && $1 <= u * 512 && $NF ~ /^func:/ {
		sub(/^func:/, "", $NF); print $1, $3, $NF; exit }'
}

# tag_sum TAG: "BYTES CALLS" of the table's lines (stdin) of call site TAG,
# "0 0" when it has none left.
tag_sum() {
	awk -v t="$1" '$3 == t && $1 ~ /^-?[0-9]+$/ { b += $1; c += $2 } END { print b + 0, c + 0 }'
}

if ! echo "$verbose" | grep -q 'bpf_loop yes'; then
	skip bulk.kfree_rcu "this kernel has no bpf_loop() (5.17+): the objects of a bulk call past its first 32 are counted and said, not seen ($(echo "$verbose" | grep -o 'bpf_loop [^;]*' | head -n1))"
elif ! ks_start us -e kmalloc; then
	fail bulk.kfree_rcu "the stream: $(ks_start_fail_why us)"
elif wl_hold u "semundo-rm $UNDO" -e kmalloc --allocinfo 0.3; then
	out=$(ks_out ku)
	n=$(ai_ntables "$out")
	func= tag= want=
	if ai_wait_tables "$out" $((n + 2)) 20; then
		read -r bytes tag func <<<"$(undo_line "$out" $((n + 1)))"
		# The undos' own call site: the function's other lines can be
		# the sets, which the removal frees too (the arm64 kernels,
		# where both kvzalloc()s are tagged __kvmalloc_node).
		read -r fb fc <<<"$(ai_table "$out" $((n + 1)) | tag_sum "$tag")"
		[ -n "$tag" ] && want="$((fb - bytes)) $((fc - UNDO))"
	fi
	wl_go wu
	wait_for "$WORK/wu.wout" '^closed$' 20
	# A grace period, then the batch's kworker: seconds in the TCG VMs.
	end=$((SECONDS + 40))
	got=none
	while [ -n "$want" ] && [ $SECONDS -lt $end ]; do
		got=$(ai_table "$out" "$(ai_ntables "$out")" | tag_sum "$tag")
		[ "$got" = "$want" ] && break
		nap 0.3
	done
	ks_stop us
	wl_go wu
	wl_wait wu
	ks_wait ku 20
	said=$(grep -m1 'objects of bulk allocations and frees were not seen' "$(ks_err ku)")
	# The system-wide stream: how many of the undos (the workload's
	# kmallocs in that function, of at most 512 bytes) kfree_bulk freed,
	# and how many went into an RCU sheaf ("BULK SHEAF").
	read -r in_bulk in_sheaf <<<"$(awk -v tid="-${WL_PID[wu]}" -v fn="call_site=$func+" '
		$4 == "kmalloc:" && substr($1, length($1) - length(tid) + 1) == tid &&
		index($5, fn) == 1 {
			for (i = 6; i <= NF; i++) {
				if ($i ~ /^ptr=/) p = $i
				if ($i ~ /^bytes_alloc=/) { b = $i; sub(/.*=/, "", b) }
			}
			if (b + 0 <= 512) undo[p] = 1
		}
		$4 == "kfree_bulk:" || $4 == "kfree_rcu:" {
			for (i = 5; i <= NF; i++)
				if ($i in undo) { n[$4]++; delete undo[$i] }
		}
		END { print n["kfree_bulk:"] + 0, n["kfree_rcu:"] + 0 }' "$(ks_out us)")"
	if [ -n "$want" ] && [ "$got" = "$want" ] && [ -z "$said" ] && [ "$in_bulk" -le 32 ] &&
		[ "$in_sheaf" = 0 ]; then
		skip bulk.kfree_rcu "the undos were freed, but only $in_bulk of them by kfree_bulk() and none into an RCU sheaf: no call of more than 32 objects to read here"
	else
		[ -n "$want" ] && [ "$got" = "$want" ] && [ -z "$said" ]
		check $? bulk.kfree_rcu "${tag:-no line of $UNDO allocations of 512 bytes or less}: after the removal '$got' (want '$want': the $UNDO undos freed); ${said:-no bulk objects said missed}; $in_bulk freed by kfree_bulk, $in_sheaf by kfree_rcu into an RCU sheaf" "$out"
	fi
else
	fail bulk.kfree_rcu "$WHY"
	ks_stop us
fi

finish
