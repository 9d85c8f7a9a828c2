#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Many CPUs (16 or more possible; fewer: everything SKIPs, saying so; run it
# in a VM: VMTEST_SMP=64 VMTEST_TESTS=test_cpus tools/vmtest 6.12).  A
# workload sending COUNT SysV messages of SIZE bytes (one load_msg kmalloc
# each) is traced with -p in every mode:
#   cpus.start        kmemsnoop starts (the time it took is printed)
#   cpus.ring_memory  one ring map per possible CPU (/proc/PID/fdinfo), each
#                     of the budget's default size (16M while all fit in
#                     256M, else the largest power of two that does), all
#                     of them within 256M (the figures and kmemsnoop's RSS
#                     are printed)
#   cpus.map_memory   the kernel memory of every map (memlock in fdinfo)
#                     within the bounds docs/DEVELOPMENT.md gives: besides the rings, at most
#                     OTHER_MAPS_MAX while streaming; with --hist the key
#                     and front tables' 48M and HIST_SLACK; with --allocinfo
#                     the pointer table (64 bytes x 1M), 16 bytes per site
#                     (12K) and CPU, and AI_SLACK
#   cpus.stream       the text has the COUNT load_msg kmallocs, none lost,
#                     a clean stop
#   cpus.output       -o DIR has one cpu file per possible CPU, and -i DIR
#                     reads the COUNT load_msg kmallocs back
#   cpus.hist         --hist-by callsite counts COUNT load_msg allocations
#   cpus.allocinfo    --allocinfo, stopped while COUNT messages are held,
#                     has load_msg at COUNT calls of the size class
#   cpus.stat         --stat --caller's load_msg row has COUNT hits
# Then losses on many CPUs: kmemsnoop -b 64K is stopped (SIGSTOP) while
# open/close loops run pinned (taskset) to each of SPREAD CPUs in turn,
# filling their rings, then continued and stopped:
#   cpus.summary_lines  at most 8 per-CPU loss lines, the last one
#                     "N other CPUs lost ..." for the SPREAD - 7 or more
#                     others, all adding up to the total lost
#
# vmtest: every VM: the rings of each CPU (skips where the VM has fewer than
# 16).
. "$(dirname "$0")/../lib.sh"

TESTS=(cpus.start cpus.ring_memory cpus.map_memory cpus.stream cpus.output cpus.hist cpus.allocinfo cpus.stat
	cpus.summary_lines)
MIN_CPUS=${CPUS_TEST_MIN:-16} # lower only to try the script on a small machine
SIZE=200
COUNT=30
RING_PER_CPU=$((16 << 20))
RINGS_TOTAL=$((256 << 20))
RING_MIN=$((64 << 10))
MAX_LOSS_LINES=8
SPREAD_MAX=32 # CPUs made to lose records
# The maps besides the bounded tables (counters, filters, the per-CPU
# description caches): a few MiB whatever the CPUs.
OTHER_MAPS_MAX=$((16 << 20))
HIST_TABLES=$((48 << 20))
HIST_SLACK=$((16 << 20))
AI_SLACK=$((16 << 20))

require_root
require_kmemsnoop
require_workload

# possible_cpus: how many CPUs /sys/devices/system/cpu/possible lists
# ("0-63", "0-3,8-11").
possible_cpus() {
	tr ',' '\n' </sys/devices/system/cpu/possible |
		awk -F- '{ n += (NF == 2 ? $2 - $1 + 1 : 1) } END { print n + 0 }'
}

NCPUS=$(possible_cpus)
[ "$NCPUS" -ge "$MIN_CPUS" ] ||
	skip_all "$NCPUS possible CPUs, fewer than $MIN_CPUS: the rules for many CPUs do not bite (run it in a VM with VMTEST_SMP=64)"
command -v taskset >/dev/null || skip_all "no taskset to pin the loads to CPUs"

# The budget's rule (src/kernel/budget.c), computed here on its own.
RING=$RING_PER_CPU
while [ "$RING" -gt "$RING_MIN" ] && [ $((RING * NCPUS)) -gt "$RINGS_TOTAL" ]; do
	RING=$((RING / 2))
done
echo "# $NCPUS possible CPUs: expecting rings of $((RING >> 10)) KiB, $((RING * NCPUS >> 20)) MiB in all"

now() { echo "${EPOCHREALTIME/[.,]/}"; } # microseconds

# ring_maps PID: "COUNT MIN MAX SUM_ENTRIES SUM_MEMLOCK ALL_MAPS_MEMLOCK" of
# the ring buffer maps (type 27) PID holds, and the memlock of all its maps.
# The one ring that is not a CPU's, --allocinfo's page samples (64 KiB when
# unused), is left out of the rings where they are larger.
PS_RING_OFF=$((64 << 10))
ring_maps() {
	awk -v skip=$([ "$RING" != "$PS_RING_OFF" ] && echo "$PS_RING_OFF") '
	FNR == 1 { t = ""; ring = 0 } $1 == "map_type:" { t = $2 }
	$1 == "max_entries:" && t == 27 && $2 != skip { ring = 1; n++; s += $2; if (!min || $2 < min) min = $2; if ($2 > max) max = $2 }
	$1 == "memlock:" { all += $2; if (ring) ml += $2 }
	END { print n + 0, min + 0, max + 0, s + 0, ml + 0, all + 0 }' /proc/"$1"/fdinfo/* 2>/dev/null
}

msg_kmallocs() { grep -c ' kmalloc: call_site=load_msg+' "$1"; }

# MAP_MEMORY: what each mode's maps took ("mode MiB, ..."); MAP_OVER: the
# modes over their bound.
MAP_MEMORY=""
MAP_OVER=""
# map_memory MODE PID BOUND: the memlock of all of PID's maps, against BOUND.
map_memory() {
	local all
	all=$(ring_maps "$2" | awk '{ print $6 }')
	MAP_MEMORY+="$1 $((all >> 20)) MiB (bound $(($3 >> 20)) MiB), "
	[ "$all" -le "$3" ] || MAP_OVER+="$1 "
}

# --- text stream: start-up, ring memory -------------------------------------------
if ! wl_start w msg "$SIZE" "$COUNT"; then
	fail_rest "${TESTS[@]}" "the workload did not start: $(head -c 200 "$WORK/w.werr")"
	finish
fi
t0=$(now)
if ! ks_start s -e kmalloc -p "${WL_PID[w]}"; then
	fail_rest "${TESTS[@]}" "kmemsnoop did not start on $NCPUS CPUs: $(ks_start_fail_why s)"
	wl_kill w
	finish
fi
t1=$(now)
pass cpus.start
echo "# start-up on $NCPUS CPUs: $(((t1 - t0) / 1000)) ms to 'Tracing'"

read -r nrings rmin rmax rsum rmemlock allmemlock < <(ring_maps "${KS_PID[s]}")
# VmRSS counts each ring's pages twice (its data is mapped twice, so that
# records never wrap) although they are the kernel's: RssAnon is
# kmemsnoop's own memory.
read -r rss anon < <(awk '$1 == "VmRSS:" { r = $2 } $1 == "RssAnon:" { a = $2 } END { print r + 0, a + 0 }' /proc/"${KS_PID[s]}"/status)
echo "# $nrings ring maps of $((rmin >> 10))-$((rmax >> 10)) KiB, $((rsum >> 20)) MiB (memlock $((rmemlock >> 20)) MiB); all maps' memlock $((allmemlock >> 20)) MiB; kmemsnoop's RSS $((rss >> 10)) MiB (the rings mapped twice), $((anon >> 10)) MiB its own (RssAnon)"
[ "$nrings" -eq "$NCPUS" ] && [ "$rmin" -eq "$RING" ] && [ "$rmax" -eq "$RING" ] &&
	[ "$rsum" -le "$RINGS_TOTAL" ]
check $? cpus.ring_memory "$nrings ring maps (want $NCPUS) of $rmin-$rmax bytes (want $RING), $rsum bytes in all (budget $RINGS_TOTAL)"
map_memory stream "${KS_PID[s]}" $((rmemlock + OTHER_MAPS_MAX))

wl_go w
wl_wait w
ks_stop s
rc=$?
n=$(msg_kmallocs "$(ks_out s)")
lost=$(ks_summary s | awk '{ print $2 }')
other=$(grep -v '^kmemsnoop: ' "$(ks_err s)" | first_lines 2)
[ $rc -eq 0 ] && [ "$n" -eq "$COUNT" ] && [ "$lost" = 0 ] && [ -z "$other" ]
check $? cpus.stream "exit $rc, $n load_msg kmallocs (want $COUNT), ${lost:-no summary: ?} lost, other stderr lines: '$other'"

# --- -o DIR, read back with -i ---------------------------------------------------
if wl_start wo msg "$SIZE" "$COUNT" && ks_start o -o "$WORK/rec" -e kmalloc -p "${WL_PID[wo]}"; then
	wl_go wo
	wl_wait wo
	ks_stop o
	rc=$?
	files=$(ls "$WORK/rec" 2>/dev/null | grep -c '^cpu[0-9]*$')
	"$KMEMSNOOP" -i "$WORK/rec" >"$WORK/replay.out" 2>"$WORK/replay.err"
	rci=$?
	n=$(msg_kmallocs "$WORK/replay.out")
	[ $rc -eq 0 ] && [ $rci -eq 0 ] && [ "$files" -eq "$NCPUS" ] && [ "$n" -eq "$COUNT" ]
	check $? cpus.output "-o exit $rc, $files cpu files (want $NCPUS); -i exit $rci, $n load_msg kmallocs (want $COUNT): $(head -c 200 "$(ks_err o)" "$WORK/replay.err" | tr '\n' ' ')"
else
	fail cpus.output "did not start: $(ks_start_fail_why o) $(head -c 200 "$WORK/wo.werr")"
	wl_kill wo
fi

# --- --hist ----------------------------------------------------------------------
# The counts of the histogram rows under "call site = load_msg+...", over
# every block.
hist_msg() {
	awk '/^call site = / { k = ($4 ~ /^load_msg\+/); next }
	k && /^ *[0-9]+ -> [0-9]+ *: [0-9]+ / { n += $5 } END { print n + 0 }' "$1"
}
if wl_start wh msg "$SIZE" "$COUNT" && ks_start h --hist-by callsite -e kmalloc -p "${WL_PID[wh]}" 0.5; then
	map_memory hist "${KS_PID[h]}" $((HIST_TABLES + HIST_SLACK))
	wl_go wh
	wl_wait wh
	sleep 1 # a block after the workload
	ks_stop h
	rc=$?
	n=$(hist_msg "$(ks_out h)")
	[ $rc -eq 0 ] && [ "$n" -eq "$COUNT" ] && ! grep -v '^kmemsnoop: ' "$(ks_err h)" | grep -q .
	check $? cpus.hist "exit $rc, $n load_msg allocations counted (want $COUNT); stderr: $(head -c 200 "$(ks_err h)" | tr '\n' ' ')"
else
	fail cpus.hist "did not start: $(ks_start_fail_why h) $(head -c 200 "$WORK/wh.werr")"
	wl_kill wh
fi

# --- --allocinfo, while the messages are held ---------------------------------------
wait_held() { wait_for "$WORK/$1.wout" '^held$' 60; }
CLASS=$(kmalloc_class $((48 + SIZE)))
if wl_start wa msg-hold "$SIZE" "$COUNT" && ks_start a --allocinfo -e kmalloc -p "${WL_PID[wa]}"; then
	map_memory allocinfo "${KS_PID[a]}" $(((1 << 20) * 64 + 12288 * 16 * NCPUS + AI_SLACK))
	wl_go wa
	if wait_held wa; then
		ks_stop a
		rc=$?
		got=$(awk '$NF ~ /^func:(load_msg|alloc_msg)$/ { b += $1; c += $2; n++ }
			END { if (n) print b, c; else print "none" }' "$(ks_out a)")
		[ $rc -eq 0 ] && [ "$got" = "$((COUNT * CLASS)) $COUNT" ]
		check $? cpus.allocinfo "exit $rc, load_msg line '$got' (want '$((COUNT * CLASS)) $COUNT'); stderr: $(head -c 200 "$(ks_err a)" | tr '\n' ' ')"
	else
		fail cpus.allocinfo "the workload did not hold its messages: $(head -c 200 "$WORK/wa.werr")"
		ks_stop a
	fi
	wl_kill wa
else
	fail cpus.allocinfo "did not start: $(ks_start_fail_why a) $(head -c 200 "$WORK/wa.werr")"
	wl_kill wa
fi

# Each of the three modes measured, none over its bound.
echo "# maps' kernel memory on $NCPUS CPUs: ${MAP_MEMORY%, }"
[ -z "$MAP_OVER" ] && [ "$(echo "$MAP_MEMORY" | grep -o 'MiB (bound' | wc -l)" -eq 3 ]
check $? cpus.map_memory "maps' kernel memory: ${MAP_MEMORY%, }; over: ${MAP_OVER:-none}"

# --- --stat ----------------------------------------------------------------------
if wl_start wt msg "$SIZE" "$COUNT" && ks_start t --stat --caller -p "${WL_PID[wt]}"; then
	wl_go wt
	wl_wait wt
	ks_stop t
	rc=$?
	row=$(awk -F'|' '$1 ~ /^ load_msg\+/' "$(ks_out t)" | head -n1)
	hit=$(echo "$row" | awk -F'|' '{ gsub(/ /, "", $4); print $4 + 0 }')
	[ $rc -eq 0 ] && [ "$hit" -eq "$COUNT" ]
	check $? cpus.stat "exit $rc, load_msg row '$row': $hit hits (want $COUNT); stderr: $(head -c 200 "$(ks_err t)" | tr '\n' ' ')"
else
	fail cpus.stat "did not start: $(ks_start_fail_why t) $(head -c 200 "$WORK/wt.werr")"
	wl_kill wt
fi

# --- losses on many CPUs -----------------------------------------------------------
SPREAD=$((NCPUS < SPREAD_MAX ? NCPUS : SPREAD_MAX))
if ks_start l -b 64K -e kmalloc,cache; then
	kill -STOP "${KS_PID[l]}"
	cpu=0
	while [ $cpu -lt "$SPREAD" ]; do
		taskset -c "$cpu" "$WORKLOAD" openclose 2000 >/dev/null 2>&1
		cpu=$((cpu + 1))
	done
	kill -CONT "${KS_PID[l]}"
	ks_stop l
	rc=$?
	err=$(ks_err l)
	lost=$(ks_summary l | awk '{ print $2 }')
	read -r lines others sum < <(awk '
		/^kmemsnoop: cpu [0-9]+ lost [0-9]+ events \([0-9]+ bytes\)$/ { n++; s += $5 }
		/^kmemsnoop: [0-9]+ other CPUs lost [0-9]+ events \([0-9]+ bytes\)$/ { n++; s += $6; o = $2 }
		END { print n + 0, o + 0, s + 0 }' "$err")
	echo "# losses on $SPREAD CPUs: $lines per-CPU lines, $others other CPUs, $sum of ${lost:-?} lost events"
	[ $rc -eq 0 ] && [ "$lines" -le "$MAX_LOSS_LINES" ] && [ "$sum" = "$lost" ] &&
		[ "$others" -ge $((SPREAD - MAX_LOSS_LINES + 1)) ]
	check $? cpus.summary_lines "exit $rc; $lines per-CPU lines (at most $MAX_LOSS_LINES), the 'other CPUs' line counting $others (want >= $((SPREAD - MAX_LOSS_LINES + 1))), adding up to $sum of ${lost:-no summary} lost: $(grep lost "$err" | first_lines 10)"
else
	fail cpus.summary_lines "kmemsnoop -b 64K did not start: $(ks_start_fail_why l)"
fi

finish
