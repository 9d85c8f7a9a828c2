#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Percpu areas (-e percpu): the workload creates a BPF per-CPU array of
# ENTRIES values of SIZE bytes (one percpu area per value), holds it, then
# closes it (the map, and its areas, are freed by a kworker).  Checked
# against the kernel's own percpu_alloc_percpu events in a tracefs
# instance filtered on the workload: the same lines (pointers aside, which
# the kernel hashes), ENTRIES of them of size=SIZE align=8, from
# bpf_map_alloc_percpu where the event has a call site (5.19+); the
# ENTRIES frees of the same pointers after the close; -o then -i and
# --json give the same events; --hist counts them under event
# percpu_alloc_percpu; --allocinfo shows SIZE x possible CPUs x ENTRIES
# outstanding while held and none after; with -e kmalloc no percpu
# program is loaded.  Size filters: --min-size SIZE --max-size SIZE keeps
# the ENTRIES areas and their frees and no area of another size,
# --min-size SIZE+1 none of them.
#
# vmtest: in x86/5.10 x86/newest: the percpu events have two layouts, before
# 5.19 and after, and a classic program on 7.x.
. "$(dirname "$0")/../lib.sh"

TESTS=(percpu.oracle percpu.exact percpu.layout percpu.note percpu.frees percpu.recording percpu.json
	percpu.hist percpu.allocinfo_held percpu.allocinfo_released percpu.not_loaded
	percpu.size_filter)

ENTRIES=16
SIZE=64

require_root
require_kmemsnoop
require_workload
tracefs_setup || skip_all "tracefs is not available at $TRACEFS"
[ -d "$TRACEFS/events/percpu/percpu_alloc_percpu" ] ||
	skip_all "this kernel has no percpu tracepoints"

# The possible CPUs: a percpu area has a copy on each.
possible_cpus() {
	local r a b n=0
	for r in $(tr ',' ' ' </sys/devices/system/cpu/possible); do
		a=${r%-*}
		b=${r#*-}
		n=$((n + b - a + 1))
	done
	echo "$n"
}
NCPUS=$(possible_cpus)
# call_site=, bytes_alloc= and gfp_flags= are in the kernel's event since 5.19.
HAS_SITE=0
kernel_at_least 5 19 && HAS_SITE=1

# bodies FILE TID: "event: body" of the percpu allocations of TID, pointers
# masked (column 14 of ev_table), sorted.
bodies() {
	ev_table "$1" | awk -F'\t' -v t="$2" '$2 == t && $5 == "percpu_alloc_percpu" { print $5 ": " $14 }' |
		LC_ALL=C sort
}

# events FILE: "event: body" of every percpu line, as printed, sorted.
events() {
	sed -n 's/^.* [0-9]*\.[0-9]\{6\}: \(percpu_[a-z_]*: .*\)$/\1/p' "$1" | LC_ALL=C sort
}

# workload_events FILE TID: in time order, "event: body" of the percpu
# allocations of TID and of the first free of each of their pointers after
# it (a pointer may be allocated again by anyone once freed).
workload_events() {
	awk -v t="$2" "$EV_AWK"'
	/^#/ || !parse($0) { next }
	{ p = fld("ptr") }
	P_EVENT == "percpu_alloc_percpu" && P_TID == t { live[p] = 1; print P_EVENT ": " P_BODY; next }
	P_EVENT == "percpu_free_percpu" && (p in live) { delete live[p]; print P_EVENT ": " P_BODY }' "$1"
}

# field BODY KEY: the value of KEY= in a line.
field() {
	echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1
}

# --- the stream against the kernel's own events -----------------------------
ORACLE_EVENTS=
ORACLE_MORE="percpu/percpu_alloc_percpu percpu/percpu_free_percpu"
DIR=$WORK/rec
if ! wl_start w percpu-map-hold "$ENTRIES" "$SIZE"; then
	fail_rest "${TESTS[@]}" "the workload did not start: $(head -c 200 "$WORK/w.werr")"
	finish
fi
PID=${WL_PID[w]}
if ! oracle_start o "$PID"; then
	wl_kill w
	fail_rest "${TESTS[@]}" "$ORACLE_ERR"
	finish
fi
# Machine-wide: the frees come from a kworker.
if ! ks_start k -e percpu || ! ks_start r -e percpu -o "$DIR" ||
	! ks_start s -e percpu --min-size "$SIZE" --max-size "$SIZE" ||
	! ks_start n -e percpu --min-size $((SIZE + 1)); then
	wl_kill w
	fail_rest "${TESTS[@]}" "kmemsnoop -e percpu: $(ks_start_fail_why k) $(ks_start_fail_why r) $(ks_start_fail_why s) $(ks_start_fail_why n)"
	finish
fi
ks_watch_misses k
wl_go w
wait_for "$WORK/w.wout" '^held$' 20 || fail_rest percpu.oracle "the workload did not hold its map: $(head -c 200 "$WORK/w.werr")"
wl_go w
wait_for "$WORK/w.wout" '^closed$' 20
out=$(ks_out k)
# The frees come from the kworker's deferred work, some time after the close.
end=$((SECONDS + 20))
while [ $SECONDS -lt $end ]; do
	[ "$(workload_events "$out" "$PID" | grep -c '^percpu_free_percpu: ')" -ge "$ENTRIES" ] && break
	nap 0.1
done
oracle_stop o
ost=$?
wl_go w
wl_wait w
misses=$(ks_misses k)
ks_stop k
ks_stop r
ks_stop s
ks_stop n

if [ $ost -ne 0 ]; then
	fail percpu.oracle "$ORACLE_ERR"
else
	bodies "$(oracle_file o)" "$PID" >"$WORK/want.bodies"
	bodies "$out" "$PID" >"$WORK/got.bodies"
	if [ ! -s "$WORK/want.bodies" ]; then
		fail percpu.oracle "the kernel's trace has no percpu_alloc_percpu of the workload" "$(oracle_file o)"
	else
		compare_to_oracle percpu.oracle "$WORK/want.bodies" "$WORK/got.bodies" "$misses" "percpu_alloc_percpu lines"
	fi
fi

# Exactly ENTRIES areas of SIZE bytes, aligned to 8, from the map code.
rows=$(ev_table "$out" | awk -F'\t' -v t="$PID" '$2 == t && $5 == "percpu_alloc_percpu"')
n=$(echo "$rows" | grep -c .)
nsize=$(echo "$rows" | awk -F'\t' '{ print $14 }' | grep -c " size=$SIZE align=8 ")
first=$(echo "$rows" | head -n1 | cut -f14)
if [ $HAS_SITE = 1 ]; then
	# The map code, or the allocator's wrapper where the compiler did not
	# make its call a tail call (arm64's 6.1): the kernel's own call site
	# either way (percpu.oracle).
	nsite=$(echo "$rows" | awk -F'\t' '$6 ~ /^(bpf_map_alloc_percpu|__alloc_percpu_gfp)\+/' | grep -c .)
	oracle_ba=$(ev_table "$(oracle_file o)" | awk -F'\t' '$5 == "percpu_alloc_percpu" { print $9; exit }')
	ba=$(field "$first" bytes_alloc)
	[ "$n" = "$ENTRIES" ] && [ "$nsize" = "$ENTRIES" ] && [ "$nsite" = "$ENTRIES" ] &&
		[ -n "$ba" ] && [ "$ba" = "$oracle_ba" ]
	check $? percpu.exact "want $ENTRIES allocations of size=$SIZE align=8 from bpf_map_alloc_percpu (or __alloc_percpu_gfp) with the kernel's bytes_alloc ($oracle_ba): $n rows, $nsize of that size, $nsite from bpf_map_alloc_percpu, bytes_alloc=$ba"
else
	ncs=$(echo "$rows" | awk -F'\t' '$14 ~ /call_site=|bytes_alloc=|gfp_flags=/' | grep -c .)
	[ "$n" = "$ENTRIES" ] && [ "$nsize" = "$ENTRIES" ] && [ "$ncs" = 0 ]
	check $? percpu.exact "want $ENTRIES allocations of size=$SIZE align=8 printed as this kernel prints them (no call_site=, bytes_alloc=, gfp_flags=): $n rows, $nsize of that size, $ncs with the newer fields"
fi

hex='[0-9a-f]\{16\}'
if [ $HAS_SITE = 1 ]; then
	alloc_re="^percpu_alloc_percpu: call_site=[^ ]*+0x[0-9a-f]*/0x[0-9a-f]* reserved=[01] is_atomic=[01] size=[0-9]* align=[0-9]* base_addr=$hex off=-\{0,1\}[0-9]* ptr=$hex bytes_alloc=[0-9]* gfp_flags=[A-Z0-9_|x]*\$"
else
	alloc_re="^percpu_alloc_percpu: reserved=[01] is_atomic=[01] size=[0-9]* align=[0-9]* base_addr=$hex off=-\{0,1\}[0-9]* ptr=$hex\$"
fi
free_re="^percpu_free_percpu: base_addr=$hex off=-\{0,1\}[0-9]* ptr=$hex\$"
events "$out" >"$WORK/got.events"
bad=$(grep -v -e "$alloc_re" -e "$free_re" "$WORK/got.events" | head -n 2)
[ -s "$WORK/got.events" ] && [ -z "$bad" ]
check $? percpu.layout "lines not in the kernel's format: $(echo "$bad" | first_lines 2)"

# Said once at start where the kernel's event lacks the 5.19 fields.
note=$(grep -c "^kmemsnoop: this kernel's percpu_alloc_percpu events have no call site" "$(ks_err k)")
[ "$note" = $((1 - HAS_SITE)) ]
check $? percpu.note "want $((1 - HAS_SITE)) note about the missing percpu fields on $KERNEL_RELEASE, got $note"

# The frees: the same pointers, base addresses and offsets.
workload_events "$out" "$PID" >"$WORK/got.workload"
allocs_at=$(sed -n 's/^percpu_alloc_percpu: .*\(base_addr=[^ ]* off=[^ ]* ptr=[^ ]*\).*/\1/p' "$WORK/got.workload" | sort)
frees_at=$(sed -n 's/^percpu_free_percpu: //p' "$WORK/got.workload" | sort)
nfree=$(grep -c '^percpu_free_percpu: ' "$WORK/got.workload")
[ "$nfree" = "$ENTRIES" ] && [ "$allocs_at" = "$frees_at" ]
check $? percpu.frees "want $ENTRIES percpu_free_percpu of the allocated areas after the close, got $nfree: $(diff <(echo "$allocs_at") <(echo "$frees_at") | grep '^[<>]' | first_lines 2)"

# The size filters: the workload's areas and their frees, or none of them.
workload_events "$(ks_out s)" "$PID" >"$WORK/sized.workload"
sa=$(grep -c '^percpu_alloc_percpu: ' "$WORK/sized.workload")
sf=$(grep -c '^percpu_free_percpu: ' "$WORK/sized.workload")
other=$(events "$(ks_out s)" | grep '^percpu_alloc_percpu: ' | grep -vc " size=$SIZE ")
na=$(workload_events "$(ks_out n)" "$PID" | grep -c '^percpu_alloc_percpu: ')
sm=$(( $(ks_misses s) + $(ks_misses n) ))
[ "$sm" != 0 ] || { [ "$sa" = "$ENTRIES" ] && [ "$sf" = "$ENTRIES" ]; } &&
	[ "$other" = 0 ] && [ "$na" = 0 ]
check $? percpu.size_filter "--min-size $SIZE --max-size $SIZE: $sa areas of the workload and $sf frees ($ENTRIES each expected), $other areas of another size; --min-size $((SIZE + 1)): $na of the workload's areas (0 expected)" "$(ks_out s)"

# -o then -i: the same events as the text of the same time.
"$KMEMSNOOP" -i "$DIR" >"$WORK/rec.txt" 2>"$WORK/rec.err"
rc=$?
# Both ran machine-wide at once: compare the workload's areas.
workload_events "$WORK/rec.txt" "$PID" >"$WORK/rec.workload"
want=$(cat "$WORK/got.workload")
got=$(cat "$WORK/rec.workload")
[ $rc -eq 0 ] && [ -n "$want" ] && [ "$want" = "$got" ]
check $? percpu.recording "-i of the -o recording (status $rc) differs from the text for the workload's areas: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | first_lines 2) $(head -c 200 "$WORK/rec.err")"

"$KMEMSNOOP" -i "$DIR" --json >"$WORK/rec.json" 2>"$WORK/rec.jerr"
nj=$(grep -c "\"event\":\"percpu_alloc_percpu\".*\"size\":$SIZE,\"align\":8,\"base_addr\":\"0x$hex\",\"off\":-\{0,1\}[0-9]*,\"ptr\":\"0x$hex\",\"bytes_alloc\":[0-9]*" "$WORK/rec.json")
nf=$(grep -c '"event":"percpu_free_percpu".*"base_addr":"0x[0-9a-f]*","off":-\{0,1\}[0-9]*,"ptr":"0x[0-9a-f]*"}$' "$WORK/rec.json")
[ "$nj" -ge "$ENTRIES" ] && [ "$nf" -ge "$ENTRIES" ]
check $? percpu.json "--json of the recording: want at least $ENTRIES percpu_alloc_percpu objects with size $SIZE and $ENTRIES percpu_free_percpu, got $nj and $nf: $(grep -m1 percpu_alloc "$WORK/rec.json" | cut -c1-300)"

# --- --hist: counted under event percpu_alloc_percpu ------------------------
if wl_traced h "percpu-map-hold $ENTRIES $SIZE" --hist-by event -e percpu 0.2; then
	wl_go wh
	wait_for "$WORK/wh.wout" '^held$' 20
	wl_go wh
	wait_for "$WORK/wh.wout" '^closed$' 20
	wl_go wh
	wl_wait wh
	ks_wait kh 20
	got=$(sed -n 's/^event = percpu_alloc_percpu (allocs=\([0-9]*\) bytes=\([0-9]*\))$/\1 \2/p' "$(ks_out kh)" |
		awk '{ a += $1; b += $2 } END { print a + 0, b + 0 }')
	if [ $HAS_SITE = 1 ]; then
		wantb=$((ENTRIES * $(field "$first" bytes_alloc)))
	else
		wantb=$((ENTRIES * SIZE * NCPUS))
	fi
	[ "$got" = "$ENTRIES $wantb" ]
	check $? percpu.hist "--hist-by event: want 'allocs bytes' $ENTRIES $wantb for percpu_alloc_percpu, got '$got': $(grep -m2 '^event = ' "$(ks_out kh)" | first_lines 2)"
else
	fail percpu.hist "$WHY"
fi

# --- --allocinfo: outstanding while held, none after ------------------------
# map_line: "BYTES CALLS" of the map code's lines of a table on stdin.
map_line() { ai_func_sum 'bpf_map_alloc_percpu|bpf_array_alloc_percpu|array_map_alloc'; }
if wl_traced a "percpu-map-hold $ENTRIES $SIZE" --allocinfo 0.3 -e percpu; then
	wl_go wa
	wait_for "$WORK/wa.wout" '^held$' 20
	aout=$(ks_out ka)
	n=$(ai_ntables "$aout")
	want="$((ENTRIES * SIZE * NCPUS)) $ENTRIES"
	if ai_wait_tables "$aout" $((n + 2)) 20; then
		got=$(ai_table "$aout" $((n + 1)) | map_line)
		[ "$got" = "$want" ]
		check $? percpu.allocinfo_held "while the map is held: want '$want' (size x possible CPUs x entries) for the map code, got '$got': $(ai_table "$aout" $((n + 1)) | sort -g | tail -n 3 | first_lines 3)"
	else
		fail percpu.allocinfo_held "no table every 0.3 s" "$aout" "$(ks_err ka)"
	fi
	wl_go wa
	wait_for "$WORK/wa.wout" '^closed$' 20
	# The kworker frees the areas some time after the close.
	got=
	end=$((SECONDS + 20))
	while [ $SECONDS -lt $end ]; do
		got=$(ai_table "$aout" "$(ai_ntables "$aout")" | map_line)
		[ "$got" = "0 0" ] && break
		nap 0.1
	done
	wl_go wa
	wl_wait wa
	ks_wait ka 20
	rc=$?
	[ "$got" = "0 0" ] && [ $rc -eq 0 ]
	check $? percpu.allocinfo_released "after the close the map code's line should be '0 0', got '$got' (status $rc)"
else
	fail_rest percpu.allocinfo_held percpu.allocinfo_released "$WHY"
fi

# --- -e kmalloc: no percpu program is loaded -------------------------------
# nprogs ID ARGS...: how many BPF programs kmemsnoop ARGS holds once tracing.
nprogs() {
	local id=$1 n
	shift
	ks_start "$id" "$@" || return 1
	n=$(bpf_ids "${KS_PID[$id]}" | grep -c '^prog ')
	ks_stop "$id"
	echo "$n"
}
if n1=$(nprogs n1 -e kmalloc) && n2=$(nprogs n2 -e kmalloc,percpu -v); then
	# The two percpu tracepoints' programs, and nothing else; on 7.x
	# each classic one with its tp_btf neighbour (-v says).
	per=1
	grep -q 'tp_btf ones beside them' "$(ks_err n2)" && per=2
	[ "$n1" -gt 0 ] && [ "$n2" = $((n1 + 2 * per)) ]
	check $? percpu.not_loaded "-e kmalloc holds $n1 programs, -e kmalloc,percpu $n2: want $((2 * per)) more"
else
	fail percpu.not_loaded "$(ks_start_fail_why n1) $(ks_start_fail_why n2)"
fi

finish
