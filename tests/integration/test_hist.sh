#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --hist as plain text (stdout is a file here, so no live view):
#   msg.*      SysV messages of known sizes land in the buckets of their
#              bytes allocated (--hist) and bytes requested (--hist=req)
#              under the load_msg call site; --min-size keeps only the big
#              ones; kmemsnoop ends by itself when the -p process is gone.
#   oracle.*   one workload (messages, open/close, pipe pages) watched at
#              once by kmemsnoop --hist-by event, order, cache, callsite and
#              comm, and by the kernel's own trace (tracefs): every count
#              per (key, bucket) must be the kernel's.
#   keys.*     a key table with room for one key (--hist-keys 1) and a
#              workload with many call sites: allocations that find no
#              room are counted as untracked, and the keys' counts plus
#              untracked make up allocs.
#   filter.comm  system-wide --hist-by comm -c workload while a workload
#              runs: only that comm, with allocations.
#   format.*   system-wide "--hist 0.2 3": three blocks, each a totals line
#              and a histogram whose counts add up to its allocs=; the
#              programs loaded as tp_btf.
#   stop.*     SIGINT prints the partial interval and exits 0; -d ends it;
#              a closed pipe ends it quietly.
#   usage.*    bad --hist arguments: exit 2 and one line.
#
# vmtest: host only: --hist is user space over BPF maps, the same on every
# kernel; test_preempt runs --hist in the newest x86 and arm64 VMs.
. "$(dirname "$0")/../lib.sh"

USAGE_CASES=(
	"hist_bogus|--hist=bogus"
	"hist_by_bogus|--hist-by bogus"
	"interval_zero|--hist 0"
	"interval_small|--hist 0.01"
	"interval_text|--hist abc"
	"count_zero|--hist 1 0"
	"count_text|--hist 1 x"
	"extra_arg|--hist 1 2 3"
	"top_zero|--hist --top 0"
	"top_alone|--top 5"
	"positional_alone|5"
	"with_output|--hist -o /tmp/kmemsnoop-never"
	"with_buffer|--hist -b 1M"
	"keys_zero|--hist --hist-keys 0"
	"keys_alone|--hist-keys 10"
)
TESTS=(msg.clean_end msg.alloc msg.req msg.min_size
	oracle.event oracle.frees oracle.order oracle.cache oracle.cache_names oracle.callsite oracle.comm
	keys.untracked keys.sum filter.comm
	format.blocks format.sums format.tp_btf
	stop.sigint stop.duration stop.pipe)
for c in "${USAGE_CASES[@]}"; do TESTS+=("usage.${c%%|*}"); done

require_root
require_kmemsnoop
require_workload

# hist_table FILE: "key<TAB>bucket-low<TAB>count" for every histogram row
# of kmemsnoop's text, summed over blocks; the key is the label of the
# "<kind> = <label> (allocs=...)" line above, or "ALL".  Then one line
# "TOTAL<TAB>field<TAB>sum" per field of the totals lines.
hist_table() {
	awk '
	/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] interval=/ {
		key = "ALL"
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] != "interval") tot[kv[1]] += kv[2]
		}
		next
	}
	/^(cache|call site|comm|event|order) = .* \(allocs=[0-9]+ bytes=[0-9]+\)$/ {
		key = $0
		sub(/^[a-z ]+ = /, "", key)
		sub(/ \(allocs=[0-9]+ bytes=[0-9]+\)$/, "", key)
		next
	}
	/^ *[0-9]+ -> [0-9]+ *: [0-9]+ / {
		if ($5 > 0) n[key "\t" $1] += $5
	}
	END {
		for (k in n) print k "\t" n[k]
		for (f in tot) print "TOTAL\t" f "\t" tot[f]
	}' "$1" | LC_ALL=C sort
}

# total TABLE FIELD: a TOTAL line's value (0 when absent).
total() {
	awk -F'\t' -v f="$2" '$1 == "TOTAL" && $2 == f { v = $3 } END { print v + 0 }' "$1"
}

# bucket BYTES: the low end of the log2 bucket holding BYTES.
bucket() {
	awk -v v="$1" 'BEGIN { b = 1; if (v < 2) { print 0; exit } while (b * 2 <= v) b *= 2; print b }'
}

# ---------------------------------------------------------------- msg

# Message sizes and their load_msg kmalloc: 48 + SIZE bytes requested.
MSG_SIZES=(100 200 1000)
MSG_COUNT=20
msg_args=()
for s in "${MSG_SIZES[@]}"; do msg_args+=(msg "$s" "$MSG_COUNT" +); done
unset 'msg_args[${#msg_args[@]}-1]'

msg_names=(msg.clean_end msg.alloc msg.req msg.min_size)
if ! wl_start wmsg "${msg_args[@]}"; then
	fail_rest "${msg_names[@]}" "the workload did not start: $(head -c 200 "$WORK/wmsg.werr")"
else
	PID=${WL_PID[wmsg]}
	started=1
	for id in kalloc kreq kmin; do
		case $id in
		kalloc) args=(--hist-by callsite) ;;
		kreq) args=(--hist=req --hist-by callsite) ;;
		kmin) args=(--hist-by callsite --min-size 1000) ;;
		esac
		if ! ks_start "$id" "${args[@]}" -e kmalloc -p "$PID" 1000; then
			fail_rest "${msg_names[@]}" "kmemsnoop ${args[*]}: $(ks_start_fail_why "$id")"
			started=0
			break
		fi
	done
	if [ $started = 0 ]; then
		wl_kill wmsg
	else
		wl_run wmsg || fail msg.workload "the workload failed (status ${WL_RC[wmsg]})" "$WORK/wmsg.werr"
		# No signal: each must end by itself once the process is gone.
		bad=""
		for id in kalloc kreq kmin; do
			ks_wait "$id" 30
			rc=${KS_RC[$id]}
			if [ "$rc" != 0 ] || ! grep -q "process $PID and its children have exited" "$(ks_err "$id")"; then
				bad="$bad $id: status $rc, stderr '$(tr '\n' '|' <"$(ks_err "$id")" | head -c 300)'"
			fi
		done
		[ -z "$bad" ]
		check $? msg.clean_end "kmemsnoop -p did not end by itself, cleanly, when the process exited:$bad"

		# Expected: MSG_COUNT allocations per size, in the bucket of the
		# size class (alloc) or of 48 + SIZE (req).
		for s in "${MSG_SIZES[@]}"; do
			for ((i = 0; i < MSG_COUNT; i++)); do
				echo "$(bucket "$(kmalloc_class $((48 + s)))") $(bucket $((48 + s))) $((48 + s))"
			done
		done >"$WORK/msg.want"
		for id in kalloc kreq kmin; do
			hist_table "$(ks_out "$id")" |
				awk -F'\t' '$1 ~ /^load_msg\+0x/ { n[$2] += $3 } END { for (b in n) print b, n[b] }' |
				sort -n >"$WORK/$id.got"
		done
		awk '{ n[$1]++ } END { for (b in n) print b, n[b] }' "$WORK/msg.want" | sort -n >"$WORK/alloc.want"
		awk '{ n[$2]++ } END { for (b in n) print b, n[b] }' "$WORK/msg.want" | sort -n >"$WORK/req.want"
		awk '$3 >= 1000 { n[$1]++ } END { for (b in n) print b, n[b] }' "$WORK/msg.want" | sort -n >"$WORK/min.want"
		for t in "alloc kalloc alloc.want" "req kreq req.want" "min_size kmin min.want"; do
			set -- $t
			diff -q "$WORK/$3" "$WORK/$2.got" >/dev/null
			check $? "msg.$1" "load_msg buckets (low count): want '$(tr '\n' ',' <"$WORK/$3")', got '$(tr '\n' ',' <"$WORK/$2.got")'"
		done
	fi
fi

# ---------------------------------------------------------------- oracle

ORACLE_KINDS=(event order cache callsite comm)
oracle_names=(oracle.event oracle.frees oracle.order oracle.cache oracle.cache_names oracle.callsite oracle.comm)
oracle_run() {
	local k
	if ! wl_start wor msg 100 50 + msg 3000 10 + openclose 50 + pipe 8; then
		fail_rest "${oracle_names[@]}" "the workload did not start: $(head -c 200 "$WORK/wor.werr")"
		return
	fi
	PID=${WL_PID[wor]}
	for k in "${ORACLE_KINDS[@]}"; do
		if ! ks_start "o$k" --hist-by "$k" --top 10000 -p "$PID" 1000; then
			fail_rest "${oracle_names[@]}" "kmemsnoop --hist-by $k: $(ks_start_fail_why "o$k")"
			wl_kill wor
			return
		fi
	done
	if ! oracle_start oracle "$PID"; then
		fail_rest "${oracle_names[@]}" "tracefs oracle: $ORACLE_ERR"
		wl_kill wor
		return
	fi
	wl_run wor || fail oracle.workload "the workload failed (status ${WL_RC[wor]})" "$WORK/wor.werr"
	for k in "${ORACLE_KINDS[@]}"; do
		ks_wait "o$k" 30
		if [ "${KS_RC[o$k]}" != 0 ]; then
			fail_rest "${oracle_names[@]}" "kmemsnoop --hist-by $k ended with status ${KS_RC[o$k]}: $(head -c 300 "$(ks_err "o$k")")"
			oracle_remove oracle
			return
		fi
	done
	if ! oracle_stop oracle; then
		fail_rest "${oracle_names[@]}" "tracefs oracle: $ORACLE_ERR"
		return
	fi
	ev_table "$(oracle_file oracle)" >"$WORK/oracle.tab"
	if [ "$(ev_count "$WORK/oracle.tab" '$5 == "mm_page_alloc"')" -lt 8 ]; then
		fail_rest "${oracle_names[@]}" "the oracle saw fewer page allocations than the pipe writes"
		return
	fi

	# The kernel's view, keyed like each --hist-by: "key<TAB>bucket 1".
	# Successful allocations only (a failed one has ptr/page 0).
	ok='$5 ~ /^(kmalloc|kmem_cache_alloc|mm_page_alloc)$/ && $7 !~ /^0+$/ && $15 !~ /^0+$/'
	# Pages: the event has no size, PAGE_SIZE << order.
	oracle_keys() { # AWK-EXPR-FOR-THE-KEY
		# No ^ in the awk: busybox awk (the test VMs) has no math support.
		awk -F'\t' -v OFS='\t' -v page="$PAGE_SIZE" '
		function bucket(v,   b) { if (v < 2) return 0; b = 1; while (b * 2 <= v) b *= 2; return b }
		function pages(order,   b) { b = page; while (order-- > 0) b *= 2; return b }
		'"$ok"' {
			key = '"$1"'
			n[key "\t" bucket($5 == "mm_page_alloc" ? pages($13) : $9)]++
		}
		END { for (k in n) print k, n[k] }' "$WORK/oracle.tab" | LC_ALL=C sort
	}
	# kmemsnoop's: the same from its histograms, missed events summed.
	ks_keys() { # KIND
		hist_table "$(ks_out "o$1")" | awk -F'\t' '$1 != "TOTAL"' | LC_ALL=C sort
	}
	misses=0
	for k in "${ORACLE_KINDS[@]}"; do
		m=$(total <(hist_table "$(ks_out "o$k")") missed)
		[ "$m" -gt "$misses" ] && misses=$m
	done

	oracle_keys '$5' >"$WORK/want.event"
	ks_keys event >"$WORK/got.event"
	compare_counts oracle.event "$WORK/want.event" "$WORK/got.event" "$misses" "(event, bucket) counts"

	want=$(ev_count "$WORK/oracle.tab" '$5 ~ /^(kfree|kmem_cache_free|mm_page_free)$/ && $7 !~ /^0+$/')
	got=$(total <(hist_table "$(ks_out oevent)") frees)
	[ "$got" -le "$want" ] && [ "$((want - got))" -le "$misses" ]
	check $? oracle.frees "frees: the kernel traced $want frees of non-NULL pointers, kmemsnoop counted $got (missed $misses)"

	awk -F'\t' -v OFS='\t' "$ok"' && $5 == "mm_page_alloc" { n[$13]++ } END { for (o in n) print o, n[o] }' \
		"$WORK/oracle.tab" | LC_ALL=C sort >"$WORK/want.order"
	hist_table "$(ks_out oorder)" | awk -F'\t' -v OFS='\t' '$1 != "TOTAL" { n[$1] += $3 } END { for (o in n) print o, n[o] }' |
		LC_ALL=C sort >"$WORK/got.order"
	compare_counts oracle.order "$WORK/want.order" "$WORK/got.order" "$misses" "page allocations per order"

	# cache: kmem_cache_alloc by name; kmalloc by size class; pages by order.
	# The kernel's own kmem_cache_alloc event names the cache only on recent
	# kernels (not 5.10, 6.1, 6.12: name "-"); there kmemsnoop's slab keys
	# (names from 6.1, "(cache size N)" before) are compared as one, "(slab)",
	# and its names_cache count against the open()s' path allocations.
	oracle_keys '$5 == "kmalloc" ? "(kmalloc " $9 ")" : $5 == "mm_page_alloc" ? "(pages order " $13 ")" : $11 == "-" ? "(slab)" : $11' \
		>"$WORK/want.cache"
	ks_keys cache >"$WORK/got.cache"
	if grep -q '^(slab)	' "$WORK/want.cache"; then
		awk -F'\t' -v OFS='\t' '$1 !~ /^\((kmalloc|pages order) / { $1 = "(slab)" }
			{ k = $1 OFS $2; n[k] += $3 } END { for (k in n) print k, n[k] }' "$WORK/got.cache" |
			LC_ALL=C sort >"$WORK/got.cache.slab"
		mv "$WORK/got.cache.slab" "$WORK/got.cache"
	fi
	compare_counts oracle.cache "$WORK/want.cache" "$WORK/got.cache" "$misses" "(cache, bucket) counts"
	if [ "$CACHE_ALLOC_NAMES" = 1 ]; then
		want=$(ev_count "$WORK/oracle.tab" "$NAMES_ALLOC")
		got=$(ks_keys cache | awk -F'\t' '$1 == "names_cache" { n += $3 } END { print n + 0 }')
		[ "$want" -gt 0 ] && [ "$got" -le "$want" ] && [ "$((want - got))" -le "$misses" ]
		check $? oracle.cache_names "--hist-by cache: $got names_cache allocations, the kernel traced $want path allocations (missed $misses)"
	else
		skip oracle.cache_names "kernel $KERNEL_RELEASE is older than 6.1: its kmem_cache_alloc event does not say which cache"
	fi

	oracle_keys '$5 == "mm_page_alloc" ? "(no call site)" : $6' >"$WORK/want.callsite"
	ks_keys callsite >"$WORK/got.callsite"
	compare_counts oracle.callsite "$WORK/want.callsite" "$WORK/got.callsite" "$misses" "(call site, bucket) counts"

	oracle_keys '$1' >"$WORK/want.comm"
	ks_keys comm >"$WORK/got.comm"
	compare_counts oracle.comm "$WORK/want.comm" "$WORK/got.comm" "$misses" "(comm, bucket) counts"
}

# compare_counts NAME WANT GOT MISSES WHAT: files of "key...<TAB>count"
# lines; PASS when equal, or when GOT lacks at most MISSES of WANT's
# counts and has nothing WANT does not.
compare_counts() {
	local name=$1 want=$2 got=$3 misses=$4 what=$5 short extra
	read -r short extra < <(awk -F'\t' '
	{ k = $1; for (i = 2; i < NF; i++) k = k "\t" $i }
	FNR == NR { w[k] = $NF; next }
	{ g[k] = $NF }
	END {
		for (k in w) { d = w[k] - g[k]; if (d > 0) s += d; else x -= d }
		for (k in g) if (!(k in w)) x += g[k]
		print s + 0, x + 0
	}' "$want" "$got")
	if [ ! -s "$want" ]; then
		fail "$name" "the kernel's trace has no $what at all"
	elif [ "$short" -eq 0 ] && [ "$extra" -eq 0 ]; then
		pass "$name"
	elif [ "$extra" -eq 0 ] && [ "$short" -le "$misses" ]; then
		echo "# $name: $short fewer than the kernel's trace, within the $misses events the kernel skipped"
		pass "$name"
	else
		fail "$name" "$what differ from the kernel's trace ($short missing, $extra extra, $misses missed): $( (ms_minus "$want" "$got" | sed 's/^/< /'; ms_minus "$got" "$want" | sed 's/^/> /') | first_lines 6)"
	fi
}

# tracefs_setup also has the oracle trace kmalloc_node/kmem_cache_alloc_node
# where they exist (before 6.1): --hist counts them with the others.
if tracefs_setup; then
	oracle_run
else
	skip_rest "${oracle_names[@]}" "tracefs with kmem events is not available at $TRACEFS"
fi

# ---------------------------------------------------------------- keys

if wl_start wkeys msg 100 20 + openclose 20 + pipe 4 && PID=${WL_PID[wkeys]} &&
	ks_start kkeys --hist-by callsite --hist-keys 1 --top 10000 -p "$PID" 1000; then
	# One CPU: the tables are per CPU, so a task that moves would fill two.
	command -v taskset >/dev/null && taskset -pc 0 "$PID" >/dev/null 2>&1
	wl_run wkeys
	ks_wait kkeys 30
	hist_table "$(ks_out kkeys)" >"$WORK/kkeys.tab"
	allocs=$(total "$WORK/kkeys.tab" allocs)
	untracked=$(total "$WORK/kkeys.tab" untracked)
	keyed=$(awk -F'\t' '$1 != "TOTAL" { n += $3 } END { print n + 0 }' "$WORK/kkeys.tab")
	nkeys=$(awk -F'\t' '$1 != "TOTAL" { print $1 }' "$WORK/kkeys.tab" | sort -u | wc -l)
	[ "${KS_RC[kkeys]}" = 0 ] && [ "$untracked" -gt 0 ] && [ "$nkeys" -le 2 ]
	check $? keys.untracked "status ${KS_RC[kkeys]}, untracked=$untracked, $nkeys keys shown (want > 0 untracked, at most 2 keys: one in the front table, one in the hash)"
	[ "$allocs" -gt 0 ] && [ $((keyed + untracked)) -eq "$allocs" ]
	check $? keys.sum "keys $keyed + untracked $untracked != allocs $allocs"
else
	wl_kill wkeys
	fail_rest keys.untracked keys.sum "could not start: $(head -c 200 "$WORK/wkeys.werr") $(ks_start_fail_why kkeys)"
fi

# ---------------------------------------------------------------- format

LINE_RE='^[0-9]{2}:[0-9]{2}:[0-9]{2} interval=[0-9]+\.[0-9]{2}s allocs=[0-9]+ frees=[0-9]+ failed=[0-9]+ alloc_bytes=[0-9]+ req_bytes=[0-9]+ missed=[0-9]+$'
# Allocations to count, whatever else the machine does.
"$WORKLOAD" noise 120 200 >/dev/null 2>&1 &
noise=$!
BG_PIDS+=("$noise")
timeout -k 5 60 "$KMEMSNOOP" --hist 0.2 3 >"$WORK/fmt.out" 2>"$WORK/fmt.err" </dev/null
rc=$?
timeout -k 5 60 "$KMEMSNOOP" --hist-by comm --top 10000 -c workload 0.3 2 >"$WORK/comm.out" \
	2>"$WORK/comm.err" </dev/null
comm_rc=$?
kill "$noise" 2>/dev/null

comms=$(hist_table "$WORK/comm.out" | awk -F'\t' '$1 != "TOTAL" { print $1 }' | sort -u | tr '\n' ' ')
[ $comm_rc -eq 0 ] && [ "$comms" = "workload " ]
check $? filter.comm "-c workload: status $comm_rc, comms shown: '$comms'"
nblocks=$(grep -cE "$LINE_RE" "$WORK/fmt.out")
nlines=$(grep -cE '^[0-9]{2}:[0-9]{2}:[0-9]{2} ' "$WORK/fmt.out")
[ $rc -eq 0 ] && [ "$nblocks" -eq 3 ] && [ "$nlines" -eq 3 ]
check $? format.blocks "--hist 0.2 3: status $rc, $nblocks well-formed totals lines of $nlines (want 3 of 3): '$(head -n 1 "$WORK/fmt.out")'"

# Each block: allocs= equals the sum of its rows; rows are contiguous from
# bucket 0, in the libbpf-tools layout.
bad=$(awk '
function check_block() {
	if (inblock && sum != allocs) printf "block %d: rows add up to %d, allocs=%d\n", nb, sum, allocs
}
/^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] interval=/ {
	check_block(); nb++; inblock = 1; sum = 0; want = 0
	for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "allocs") allocs = kv[2] }
	next
}
/^     bytes               : count    distribution$/ { next }
/^ *[0-9]+ -> [0-9]+ *: [0-9]+ +\|[* ]+\|$/ && match($0, /\|[* ]+\|$/) && RLENGTH == 42 {
	low = want == 0 ? 0 : want
	if ($1 != low) printf "block %d: row starts at %s, want %s\n", nb, $1, low
	want = want == 0 ? 2 : want * 2
	sum += $5; next
}
/^$/ { next }
{ printf "block %d: unexpected line: %s\n", nb, $0 }
END { check_block() }' "$WORK/fmt.out" | head -n 3)
nrows=$(grep -cE '^ +[0-9]+ -> [0-9]+ +: [1-9]' "$WORK/fmt.out")
[ -z "$bad" ] && [ "$nblocks" -gt 0 ] && [ "$nrows" -gt 0 ]
check $? format.sums "${bad:-no histogram row with a count in $nblocks blocks}"

! grep -q "tp_btf unavailable" "$WORK/fmt.err" && grep -q '^kmemsnoop: [0-9]* allocations (' "$WORK/fmt.err"
check $? format.tp_btf "stderr: '$(tr '\n' '|' <"$WORK/fmt.err" | head -c 300)'"

# ---------------------------------------------------------------- stop

if ks_start sig --hist 1000; then
	ks_stop sig
	rc=$?
	n=$(grep -cE "$LINE_RE" "$(ks_out sig)")
	[ $rc -eq 0 ] && [ "$n" -eq 1 ]
	check $? stop.sigint "after SIGINT: status $rc and $n blocks (want 0 and the 1 partial interval)"
else
	fail stop.sigint "$(ks_start_fail_why sig)"
fi

if ks_start dur --hist 0.3 -d 1; then
	ks_wait dur 30
	rc=${KS_RC[dur]}
	n=$(grep -cE "$LINE_RE" "$(ks_out dur)")
	[ "$rc" -eq 0 ] && [ "$n" -ge 1 ]
	check $? stop.duration "--hist 0.3 -d 1: status $rc, $n blocks"
else
	fail stop.duration "$(ks_start_fail_why dur)"
fi

# The reader goes away after one line: kmemsnoop must notice and end, 0.
timeout -k 5 60 bash -c '"$1" --hist 0.2 2>"$2" | head -n 1 >/dev/null; exit "${PIPESTATUS[0]}"' _ "$KMEMSNOOP" "$WORK/pipe.err"
rc=$?
[ $rc -eq 0 ]
check $? stop.pipe "kmemsnoop --hist | head -n 1: status $rc (124: it did not end), stderr '$(tr '\n' '|' <"$WORK/pipe.err" | head -c 200)'"

# ---------------------------------------------------------------- usage

for c in "${USAGE_CASES[@]}"; do
	name=usage.${c%%|*}
	args=${c#*|}
	# shellcheck disable=SC2086
	timeout -k 5 20 "$KMEMSNOOP" $args >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null
	rc=$?
	[ $rc -eq 2 ] && [ "$(grep -c '' "$WORK/$name.err")" -eq 1 ] && grep -q '^kmemsnoop: ' "$WORK/$name.err" &&
		! grep -q Tracing "$WORK/$name.err"
	check $? "$name" "kmemsnoop $args: want status 2 and one line, got $rc: '$(tr '\n' '|' <"$WORK/$name.err" | head -c 200)'"
done

finish
