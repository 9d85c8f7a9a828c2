#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# What the running kernel lets kmemsnoop see, and that kmemsnoop says what
# it cannot.  Cache names: kmem_cache_alloc lines carry name= where the
# tracepoint passes the struct kmem_cache (6.1), kmem_cache_free lines
# where it passes the cache or its name (5.12); on older kernels the
# names are SKIPped here and kmemsnoop must print a note when it starts
# (and no name= at all).  Sequence numbers of -o: without BPF atomic
# fetch-add (before 5.12) kmemsnoop must say they may repeat.  What to
# expect comes from the kernel version (lib.sh kernel_at_least), an oracle
# independent of kmemsnoop's own detection from BTF.  And the program
# types: tp_btf where the kernel lets it read void * arguments, and
# --raw-tp (on 5.10 the no-atomic-fetch variants) printing what the
# default programs print.
. "$(dirname "$0")/../lib.sh"

TESTS=(kernel.clean_stop kernel.alloc_names kernel.free_names kernel.names_note kernel.seq_note
	kernel.hist_note kernel.tp_btf kernel.raw_tp_clean_stop kernel.tp_btf_clean_stop kernel.raw_tp_same)
N=20

require_root
require_kmemsnoop
require_workload

start_traced w k -e cache -- openclose "$N"
wl_run w || fail kernel.workload "the workload failed (status ${WL_RC[w]})" "$WORK/w.werr"
ks_check_stop kernel.clean_stop k
tab=$WORK/k.tab
ev_table "$(ks_out k)" >"$tab"
note=$(grep -c "^kmemsnoop: this kernel's .* events do not say which cache" "$(ks_err k)")

# names EVENT: "named unnamed names_cache" counts of EVENT lines.
names() {
	awk -F'\t' -v e="$1" '$5 == e { if ($11 == "-") u++; else n++; if ($11 == "names_cache") c++ }
		END { print n + 0, u + 0, c + 0 }' "$tab"
}
read -r an au ac < <(names kmem_cache_alloc)
read -r fn fu fc < <(names kmem_cache_free)

if [ "$CACHE_ALLOC_NAMES" = 1 ]; then
	[ "$au" -eq 0 ] && [ "$ac" -eq "$N" ]
	check $? kernel.alloc_names "kmem_cache_alloc lines: $an with name=, $au without; $ac names_cache (expected $N)"
else
	skip kernel.alloc_names "kernel $KERNEL_RELEASE is older than 6.1: its kmem_cache_alloc event does not say which cache"
fi
if [ "$CACHE_FREE_NAMES" = 1 ]; then
	[ "$fu" -eq 0 ] && [ "$fc" -eq "$N" ]
	check $? kernel.free_names "kmem_cache_free lines: $fn with name=, $fu without; $fc names_cache (expected $N)"
else
	skip kernel.free_names "kernel $KERNEL_RELEASE is older than 5.12: its kmem_cache_free event does not say which cache"
fi

# The note when names are missing, and no name= then (a wrong name would
# be worse than none); no note when they are all there.
if [ "$CACHE_ALLOC_NAMES" = 1 ] && [ "$CACHE_FREE_NAMES" = 1 ]; then
	[ "$note" -eq 0 ]
	check $? kernel.names_note "kmemsnoop says cache names are missing on $KERNEL_RELEASE, which has them"
else
	missing=$([ "$CACHE_ALLOC_NAMES" = 1 ] || echo "$an kmem_cache_alloc"; [ "$CACHE_FREE_NAMES" = 1 ] || echo "$fn kmem_cache_free")
	named=$(echo "$missing" | awk '{ n += $1 } END { print n + 0 }')
	[ "$note" -eq 1 ] && [ "$named" -eq 0 ]
	check $? kernel.names_note "on $KERNEL_RELEASE: $note note(s) about missing cache names on stderr (expected 1), lines with name= where the kernel gives none: $(echo "$missing" | tr '\n' ' ')(expected 0)"
fi

# -o: the note about sequence numbers exactly where there is no atomic
# fetch-add.
timeout -k 5 30 "$KMEMSNOOP" -o "$WORK/trace" -d 1 -e kmalloc >/dev/null 2>"$WORK/o.err" </dev/null
rc=$?
nseq=$(grep -c '^kmemsnoop: this kernel has no BPF atomic fetch-add' "$WORK/o.err")
if kernel_at_least 5 12; then want=0; else want=1; fi
[ $rc -eq 0 ] && [ "$nseq" -eq $want ]
check $? kernel.seq_note "kmemsnoop -o -d 1 on $KERNEL_RELEASE: status $rc, $nseq note(s) about repeating sequence numbers (expected $want)"

# --hist-by cache: the note where kmem_cache_alloc does not say which cache.
timeout -k 5 30 "$KMEMSNOOP" --hist-by cache -e cache -d 1 >"$WORK/h.out" 2>"$WORK/h.err" </dev/null
rc=$?
nh=$(grep -c "^kmemsnoop: this kernel's kmem_cache_alloc events do not say which cache: slab allocations are counted by object size" "$WORK/h.err")
want=$((1 - CACHE_ALLOC_NAMES))
[ $rc -eq 0 ] && [ "$nh" -eq "$want" ]
check $? kernel.hist_note "kmemsnoop --hist-by cache on $KERNEL_RELEASE: status $rc, $nh note(s) about counting slab allocations by size (expected $want)"

# tp_btf: kmemsnoop must know before loading whether this kernel's tp_btf
# programs can read the tracepoints' "const void *" arguments (6.16 allows
# it), and never fall back after a failed load; from 6.16 it uses tp_btf.
timeout -k 5 30 "$KMEMSNOOP" -v -d 1 -e kmalloc >/dev/null 2>"$WORK/v.err" </dev/null
rc=$?
tpbtf=$(sed -n 's/^kmemsnoop: .*; tp_btf \(yes\|no\).*/\1/p' "$WORK/v.err")
preemptible=$(sed -n 's/^kmemsnoop: .* runs preemptible \(yes\|no\)$/\1/p' "$WORK/v.err")
fallback=$(grep -c '^kmemsnoop: tp_btf unavailable' "$WORK/v.err")
[ $rc -eq 0 ] && [ -n "$tpbtf" ] && [ "$fallback" -eq 0 ] && { [ "$tpbtf" = yes ] || ! kernel_at_least 6 16; }
check $? kernel.tp_btf "kmemsnoop -v on $KERNEL_RELEASE: status $rc, tp_btf '${tpbtf:-not said}' (6.16 and later: yes), $fallback fallback line(s) after a failed tp_btf load (expected 0)"

# --raw-tp and the default programs side by side on one workload: the same
# lines but for the timestamps (each program reads the clock itself), less
# at most the events each one's kernel skipped (recursion misses: an
# interrupt's allocation while the same program ran, which the other
# instance's program may well see).  Where the kernel runs the programs
# preemptibly (7.0+), the task may move to another CPU between the two
# instances' programs on one tracepoint, so there the CPU column is left
# out of the comparison.
start_traced wr kraw --raw-tp -- msg 100 "$N" + openclose "$N" + pipe 4
if ! ks_start kbtf -p "$PID"; then
	fail_rest kernel.raw_tp_clean_stop kernel.tp_btf_clean_stop kernel.raw_tp_same "kmemsnoop (default programs): $(ks_start_fail_why kbtf)"
	finish
fi
ks_watch_misses kraw
ks_watch_misses kbtf
wl_run wr || fail kernel.workload "the workload failed (status ${WL_RC[wr]})" "$WORK/wr.werr"
ks_check_stop kernel.raw_tp_clean_stop kraw
ks_check_stop kernel.tp_btf_clean_stop kbtf
mraw=$(ks_misses kraw)
mbtf=$(ks_misses kbtf)
for id in kraw kbtf; do
	grep -v '^#' "$(ks_out "$id")" | sed -E 's/ +[0-9]+\.[0-9]{6}: / /' |
		if [ "$preemptible" = yes ]; then sed -E 's/ \[[0-9]{3,}\] / [cpu] /'; else cat; fi |
		LC_ALL=C sort >"$WORK/$id.lines"
done
nmsg=$(grep -c ' kmalloc: call_site=load_msg+.* bytes_req=148 ' "$WORK/kraw.lines")
only_raw=$(ms_minus "$WORK/kraw.lines" "$WORK/kbtf.lines" | wc -l)
only_btf=$(ms_minus "$WORK/kbtf.lines" "$WORK/kraw.lines" | wc -l)
if [ "$nmsg" -ne "$N" ]; then
	fail kernel.raw_tp_same "--raw-tp shows $nmsg load_msg kmallocs of 148 bytes, not $N"
elif [ "$only_raw" -le "$mbtf" ] && [ "$only_btf" -le "$mraw" ]; then
	[ $((only_raw + only_btf)) -gt 0 ] && echo "# kernel.raw_tp_same: $only_raw line(s) only with --raw-tp, $only_btf only without, within the recursion misses ($mbtf, $mraw)"
	pass kernel.raw_tp_same
else
	fail kernel.raw_tp_same "$only_raw line(s) only with --raw-tp (the other missed $mbtf), $only_btf only without (--raw-tp missed $mraw), e.g. $(multiset_diff "$WORK/kraw.lines" "$WORK/kbtf.lines" | first_lines 2)"
fi

finish
