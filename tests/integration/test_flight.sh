#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --flight -o DIR: the flight recorder, each trigger for real.
#   flight.usage    --flight without -o, --flight-keep without --flight, a
#                   bad SECONDS, --flight-keep's size 0, --flight-after
#                   over 60: exit 2 and one line that says why
#   flight.signal   "-c workload": a workload sends MSG_A messages of SIZE_A,
#                   SIGUSR1; another sends MSG_B of SIZE_B, SIGUSR1: two
#                   dumps, the first with exactly the first's MSG_A load_msg
#                   kmallocs, the second with exactly the second's MSG_B and
#                   none of the first's (a dump holds what came after the one
#                   before)
#   flight.header   the dumps' header files name the trigger (SIGUSR1), and
#                   -i prints it
#   flight.read     -i DUMP --stat --caller reads a dump: its load_msg row
#                   has the MSG_A hits
#   flight.window   --flight=1: MSG_A messages, a pause of 2.5 s, MSG_B,
#                   SIGUSR1: the dump holds the MSG_B and none of the MSG_A,
#                   and its header says the second asked for
#   flight.rotation --flight-keep=2: three SIGUSR1, two dumps left, the
#                   two newest
#   flight.rotation_size  --flight-keep=10,1K (a size no dump fits in): three
#                   SIGUSR1, the newest dump alone left
#   flight.after    --flight-after=1.5: SIGUSR1, then a workload's MSG_B
#                   messages: the dump, said 1.5 s after the signal at the
#                   soonest, holds all of them
#   flight.filters  --flight -e kmalloc --min-size 200 -c workload: of two
#                   workloads' messages (148 and 348 bytes), the dump holds
#                   exactly the larger's MSG_B load_msg kmallocs and none of
#                   the smaller's, and no event but kmalloc and kfree
#   flight.cgroup   --flight --cgroup CG (a cgroup v2 directory): a workload
#                   in CG and one outside send messages: the dump holds
#                   exactly the first's MSG_A and no line of another task
#   flight.threshold  --flight-when=Slab+THRESH_MIB"M": a workload makes pipes
#                   (2.5 KiB of slab each) and holds them: a "threshold"
#                   dump, its trigger naming Slab, with some of the
#                   workload's pipe allocations (alloc_pipe_info's two
#                   kmallocs, the pipe_inode_info and its ring) and no more
#                   than two per pipe it made
#   flight.listen   --flight -o DIR --listen PORT: SIGUSR1 twice, then
#                   /metrics says 2 signal triggers and 2 dumps, and what
#                   was missed, but not --listen's own counts, which are
#                   not taken beside the recorder (promtool checks the page
#                   where it is installed)
#   flight.failed   a workload in a memory cgroup at its limit (its OOM
#                   killer off, cgroup v1, or the workload out of its
#                   reach, oom_score_adj -1000) opens files until an open
#                   fails: the dump is a "failed" one naming the workload,
#                   and holds exactly its file allocations (alloc_empty_file,
#                   __alloc_file before 6.4:
#                   its K opens of /dev/null and the one of oom_score_adj)
#                   and the failed one (ptr 0)
#   flight.oom      -p PID: a workload touches anonymous memory in a memory
#                   cgroup of OOM_MIB MiB until the OOM killer kills it: the
#                   dump is an "oom" one naming the workload's pid, and
#                   holds at least as many of its order-0 page allocations
#                   as pages it said it touched
#
# The OOM killer (and a memory cgroup's, finding no victim) writes a call
# trace to the kernel log: while it is provoked, the console shows errors
# only (vm.kernel_log takes a call trace on the console for a complaint).
#
# vmtest: in x86/5.10 x86/6.1 x86/newest arm64/newest: oom:mark_victim passes
# the victim's pid before 6.9 (and its backports), its task after; the
# failed allocation's event and the memory cgroups differ by kernel.
. "$(dirname "$0")/../lib.sh"

TESTS=(flight.usage flight.signal flight.header flight.read flight.window flight.rotation
	flight.rotation_size flight.after flight.filters flight.cgroup flight.threshold flight.listen flight.failed flight.oom)

require_root
require_kmemsnoop
require_workload

SIZE_A=100
MSG_A=40
SIZE_B=300
MSG_B=60
OOM_MIB=48
THRESH_MIB=2

# dumps_said ID: the dumps instance ID has said it wrote, one directory a line.
dumps_said() {
	sed -n 's/^kmemsnoop: flight recorder dump (.*, in \(.*\) (copied in .*/\1/p' "$(ks_err "$1")"
}

# wait_dumps ID N: until instance ID has said N dumps (20 s at most).
wait_dumps() {
	local end=$((SECONDS + 20))
	while [ "$(dumps_said "$1" | wc -l)" -lt "$2" ]; do
		[ $SECONDS -ge $end ] && return 1
		nap 0.1
	done
}

# dump_on_signal ID: SIGUSR1 to instance ID, its first dump waited for,
# the instance stopped; DUMP: that dump's directory ("" when there is none).
dump_on_signal() {
	kill -USR1 "${KS_PID[$1]}"
	wait_dumps "$1" 1
	ks_stop "$1"
	DUMP=$(dumps_said "$1" | sed -n 1p)
}

# load_msgs DUMP PID SIZE: the load_msg kmallocs of SIZE-byte messages by
# PID in the dump.
load_msgs() {
	"$KMEMSNOOP" -i "$1" 2>/dev/null |
		grep -E -- "-$2 +\[[0-9]+\] +[0-9.]+: kmalloc: call_site=load_msg\+[^ ]* ptr=[^ ]* bytes_req=$((48 + $3)) " |
		wc -l
}

# run_msgs ID SIZE COUNT: a workload that sends and receives COUNT
# messages; its pid.
run_msgs() {
	wl_start "$1" msg "$2" "$3" && wl_run "$1" && echo "${WL_PID[$1]}"
}

usage() {
	local bad= out
	for args in "--flight" "--flight-keep=2 -o $WORK/u" "--flight=abc -o $WORK/u" "--flight -o $WORK/u --hist" \
		"--flight --flight-keep=2,0 -o $WORK/u" "--flight --flight-after=61 -o $WORK/u"; do
		# shellcheck disable=SC2086
		out=$("$KMEMSNOOP" $args 2>&1 >/dev/null)
		rc=$?
		if [ $rc -ne 2 ] || [ "$(echo "$out" | wc -l)" -ne 1 ] || ! echo "$out" | grep -q '^kmemsnoop: '; then
			bad+="'$args': status $rc, '$(echo "$out" | first_lines 2)'; "
		fi
	done
	[ -z "$bad" ]
	check $? flight.usage "$bad"
}
usage

# ---------------------------------------------------------------- SIGUSR1

signal_tests() {
	local dir=$WORK/sig pa pb d1 d2 a1 b1 a2 b2
	if ! ks_start sig --flight -o "$dir" -c workload; then
		fail_rest flight.signal flight.header flight.read "$(ks_start_fail_why sig)"
		return
	fi
	pa=$(run_msgs wla "$SIZE_A" "$MSG_A")
	kill -USR1 "${KS_PID[sig]}"
	wait_dumps sig 1
	pb=$(run_msgs wlb "$SIZE_B" "$MSG_B")
	kill -USR1 "${KS_PID[sig]}"
	wait_dumps sig 2
	ks_stop sig
	d1=$(dumps_said sig | sed -n 1p)
	d2=$(dumps_said sig | sed -n 2p)
	if [ -z "$pa" ] || [ -z "$pb" ] || [ -z "$d2" ]; then
		fail_rest flight.signal flight.header flight.read "workloads ${pa:-failed} and ${pb:-failed}, dumps said: '$(dumps_said sig | tr '\n' ' ')' ($(first_lines 3 <"$(ks_err sig)"))"
		return
	fi
	a1=$(load_msgs "$d1" "$pa" "$SIZE_A")
	b1=$(load_msgs "$d1" "$pb" "$SIZE_B")
	a2=$(load_msgs "$d2" "$pa" "$SIZE_A")
	b2=$(load_msgs "$d2" "$pb" "$SIZE_B")
	[ "$a1" = "$MSG_A" ] && [ "$b1" = 0 ] && [ "$a2" = 0 ] && [ "$b2" = "$MSG_B" ]
	check $? flight.signal "load_msg kmallocs: first dump $a1 of the first workload and $b1 of the second, second dump $a2 and $b2 (want $MSG_A, 0, 0, $MSG_B)"

	grep -qx 'flight_trigger=SIGUSR1' "$d1/header" && grep -qx 'flight_trigger=SIGUSR1' "$d2/header" &&
		"$KMEMSNOOP" -i "$d1" 2>/dev/null | grep -q '^# flight recorder dump, trigger: SIGUSR1 at '
	check $? flight.header "the headers: '$(grep flight_ "$d1/header" | tr '\n' ' ')', -i: '$("$KMEMSNOOP" -i "$d1" 2>&1 | grep -m1 flight)'"

	"$KMEMSNOOP" -i "$d1" --stat --caller >"$WORK/sig.stat" 2>"$WORK/sig.stat.err"
	rc=$?
	row=$(grep -m1 ' load_msg+' "$WORK/sig.stat")
	hits=$(echo "$row" | awk -F'|' '{gsub(/ /, "", $4); print $4}')
	[ $rc -eq 0 ] && [ "$hits" = "$MSG_A" ]
	check $? flight.read "-i DUMP --stat --caller: status $rc, load_msg row '$row' (want $MSG_A hits): $(first_lines 2 <"$WORK/sig.stat.err")"
}
signal_tests

# A process alive across two dumps: its frees, in the second, are named
# (comm-pid), though the record that describes it was written before the
# first dump: a dump starts at the first block of a group (the blocks of
# a group after the first describe nothing the group described already),
# and the blocks of that group an earlier dump had are in it again for
# what they describe, not for their events.  Pinned to one CPU (where
# taskset is): each CPU describes a task on its own, and frees on another
# CPU would describe it there afresh.
across_test() {
	local dir=$WORK/acr pid d2 frees named earlier wl=$WORKLOAD
	command -v taskset >/dev/null && wl=$(pinned_workload 0)
	if ! ks_start acr --flight -o "$dir" -c workload; then
		fail flight.named_across "$(ks_start_fail_why acr)"
		return
	fi
	if ! WORKLOAD=$wl wl_start wacr msg-hold "$SIZE_A" "$MSG_A"; then
		fail flight.named_across "the workload did not start: $(head -c 200 "$WORK/wacr.werr")"
		ks_stop acr
		return
	fi
	pid=${WL_PID[wacr]}
	wl_go wacr
	wait_for "$WORK/wacr.wout" '^held$' 20
	kill -USR1 "${KS_PID[acr]}"
	wait_dumps acr 1
	wl_go wacr # receives (frees) and removes its messages
	wl_wait wacr
	kill -USR1 "${KS_PID[acr]}"
	wait_dumps acr 2
	ks_stop acr
	d2=$(dumps_said acr | sed -n 2p)
	if [ -z "$d2" ]; then
		fail flight.named_across "no second dump: $(first_lines 3 <"$(ks_err acr)")"
		return
	fi
	"$KMEMSNOOP" -i "$d2" >"$WORK/acr.txt" 2>/dev/null
	frees=$(grep -c ' kfree: call_site=free_msg' "$WORK/acr.txt")
	named=$(grep -cE -- " workload-$pid +\[[0-9]+\] +[0-9.]+: kfree: call_site=free_msg" "$WORK/acr.txt")
	earlier=$(grep -c ' kmalloc: call_site=load_msg' "$WORK/acr.txt")
	[ "$frees" = "$MSG_A" ] && [ "$named" = "$MSG_A" ] && [ "$earlier" = 0 ]
	check $? flight.named_across "second dump: $frees free_msg kfrees, $named of them named workload-$pid (want $MSG_A, $MSG_A), $earlier load_msg kmallocs of the first dump (want 0): $(grep -m1 'call_site=free_msg' "$WORK/acr.txt")"
}
across_test

window_test() {
	local dir=$WORK/win pa pb d a b
	if ! ks_start win --flight=1 -o "$dir" -c workload; then
		fail flight.window "$(ks_start_fail_why win)"
		return
	fi
	pa=$(run_msgs wwa "$SIZE_A" "$MSG_A")
	sleep 2.5
	pb=$(run_msgs wwb "$SIZE_B" "$MSG_B")
	dump_on_signal win
	d=$DUMP
	if [ -z "$d" ] || [ -z "$pa" ] || [ -z "$pb" ]; then
		fail flight.window "no dump, or a workload failed: $(first_lines 3 <"$(ks_err win)")"
		return
	fi
	a=$(load_msgs "$d" "$pa" "$SIZE_A")
	b=$(load_msgs "$d" "$pb" "$SIZE_B")
	[ "$a" = 0 ] && [ "$b" = "$MSG_B" ] && grep -qx 'flight_window_ns=1000000000' "$d/header"
	check $? flight.window "the dump of the last second holds $a of the first workload's messages (2.5 s before, want 0) and $b of the second's (want $MSG_B); header: '$(grep flight_window "$d/header")'"
}
window_test

rotation_test() {
	local dir=$WORK/rot left want
	if ! ks_start rot --flight --flight-keep=2 -o "$dir" -c workload; then
		fail flight.rotation "$(ks_start_fail_why rot)"
		return
	fi
	for n in 1 2 3; do
		kill -USR1 "${KS_PID[rot]}"
		wait_dumps rot "$n"
		sleep 0.01 # the names have milliseconds: distinct ones
	done
	ks_stop rot
	left=$(cd "$dir" && ls -d ./*/ 2>/dev/null | sed 's#^\./##; s#/$##' | sort | tr '\n' ' ')
	want=$(dumps_said rot | sed -n '2,3p' | xargs -n1 basename 2>/dev/null | sort | tr '\n' ' ')
	[ "$(dumps_said rot | wc -l)" = 3 ] && [ -n "$want" ] && [ "$left" = "$want" ]
	check $? flight.rotation "after 3 dumps ($(dumps_said rot | wc -l) said) with --flight-keep=2, left: '$left', want the newest two: '$want'"
}
rotation_test

rotation_size_test() {
	local dir=$WORK/rotsize left want
	if ! ks_start rotsize --flight --flight-keep=10,1K -o "$dir" -c workload; then
		fail flight.rotation_size "$(ks_start_fail_why rotsize)"
		return
	fi
	for n in 1 2 3; do
		kill -USR1 "${KS_PID[rotsize]}"
		wait_dumps rotsize "$n"
		sleep 0.01
	done
	ks_stop rotsize
	left=$(cd "$dir" && ls -d ./*/ 2>/dev/null | sed 's#^\./##; s#/$##' | tr '\n' ' ')
	want=$(dumps_said rotsize | sed -n '3p' | xargs -n1 basename 2>/dev/null | tr '\n' ' ')
	[ "$(dumps_said rotsize | wc -l)" = 3 ] && [ -n "$want" ] && [ "$left" = "$want" ]
	check $? flight.rotation_size "after 3 dumps ($(dumps_said rotsize | wc -l) said) with --flight-keep=10,1K, left: '$left', want the newest alone: '$want'"
}
rotation_size_test

after_test() {
	local dir=$WORK/after pb d b t0 took
	if ! ks_start after --flight --flight-after=1.5 -o "$dir" -c workload; then
		fail flight.after "$(ks_start_fail_why after)"
		return
	fi
	# Microseconds (the VMs' date has no %N).
	t0=${EPOCHREALTIME/./}
	kill -USR1 "${KS_PID[after]}"
	pb=$(run_msgs wab "$SIZE_B" "$MSG_B")
	wait_dumps after 1
	took=$(((${EPOCHREALTIME/./} - t0) / 1000))
	ks_stop after
	d=$(dumps_said after | sed -n 1p)
	if [ -z "$d" ] || [ -z "$pb" ]; then
		fail flight.after "no dump, or the workload failed: $(first_lines 3 <"$(ks_err after)")"
		return
	fi
	b=$(load_msgs "$d" "$pb" "$SIZE_B")
	[ "$b" = "$MSG_B" ] && [ "$took" -ge 1500 ]
	check $? flight.after "the dump, said $took ms after SIGUSR1 (want 1500 at least), holds $b of the messages sent after the signal (want $MSG_B)"
}
after_test

filters_test() {
	local dir=$WORK/filt pa pb d a b others
	if ! ks_start filt --flight -o "$dir" -e kmalloc --min-size 200 -c workload; then
		fail flight.filters "$(ks_start_fail_why filt)"
		return
	fi
	pa=$(run_msgs wfa "$SIZE_A" "$MSG_A")
	pb=$(run_msgs wfb "$SIZE_B" "$MSG_B")
	dump_on_signal filt
	d=$DUMP
	if [ -z "$d" ] || [ -z "$pa" ] || [ -z "$pb" ]; then
		fail flight.filters "no dump, or a workload failed: $(first_lines 3 <"$(ks_err filt)")"
		return
	fi
	a=$(load_msgs "$d" "$pa" "$SIZE_A")
	b=$(load_msgs "$d" "$pb" "$SIZE_B")
	others=$("$KMEMSNOOP" -i "$d" 2>/dev/null | grep -v '^#' | grep -vE ' (kmalloc|kfree): ' | wc -l)
	[ "$a" = 0 ] && [ "$b" = "$MSG_B" ] && [ "$others" = 0 ]
	check $? flight.filters "the dump holds $a of the $((48 + SIZE_A))-byte messages' kmallocs (want 0), $b of the $((48 + SIZE_B))-byte ones' (want $MSG_B), and $others lines of other events (want 0)"
}
filters_test

# cgroup_done CG: CG removed, and the cgroup2 mount made for it.
cgroup_done() {
	rmdir "$1"
	if [ -n "$MEMCG_MOUNTED" ]; then
		umount "$MEMCG_MOUNTED" 2>/dev/null
		MEMCG_MOUNTED=
	fi
}

cgroup_test() {
	local root cg dir=$WORK/cg pa pb d a strangers
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	# The VMs' initramfs mounts none: a mount of our own (cleanup's).
	if [ -z "$root" ] && mkdir -p "$WORK/cgroup2" &&
		mount -t cgroup2 none "$WORK/cgroup2" 2>/dev/null; then
		root=$WORK/cgroup2
		MEMCG_MOUNTED=$root
	fi
	cg=$root/kmemsnoop-test-flight.$$
	if [ -z "$root" ] || ! mkdir "$cg" 2>/dev/null; then
		skip flight.cgroup "no cgroup v2 hierarchy to make a cgroup in"
		return
	fi
	if ! wl_start wca msg "$SIZE_A" "$MSG_A" || ! echo "${WL_PID[wca]}" >"$cg/cgroup.procs"; then
		wl_kill wca
		cgroup_done "$cg"
		skip flight.cgroup "cannot move a process into $cg"
		return
	fi
	if ! ks_start cgr --flight -o "$dir" --cgroup "$cg"; then
		wl_kill wca
		cgroup_done "$cg"
		fail flight.cgroup "$(ks_start_fail_why cgr)"
		return
	fi
	wl_run wca && pa=${WL_PID[wca]}
	pb=$(run_msgs wcb "$SIZE_A" "$MSG_A")
	dump_on_signal cgr
	d=$DUMP
	cgroup_done "$cg"
	if [ -z "$d" ] || [ -z "$pa" ] || [ -z "$pb" ]; then
		fail flight.cgroup "no dump, or a workload failed: $(first_lines 3 <"$(ks_err cgr)")"
		return
	fi
	a=$(load_msgs "$d" "$pa" "$SIZE_A")
	strangers=$("$KMEMSNOOP" -i "$d" 2>/dev/null | grep -v '^#' | grep -vcE -- "-$pa +\[")
	[ "$a" = "$MSG_A" ] && [ "$strangers" = 0 ]
	check $? flight.cgroup "the dump holds $a of the workload's load_msg kmallocs in $cg (want $MSG_A) and $strangers lines of other tasks (want 0)"
}
cgroup_test

threshold_test() {
	local dir=$WORK/thr pid held d pipes
	if ! ks_start thr --flight --flight-when=Slab+${THRESH_MIB}M -o "$dir" -c workload; then
		fail flight.threshold "$(ks_start_fail_why thr)"
		return
	fi
	if ! wl_start wthr pipe-hold 100000; then
		fail flight.threshold "the workload did not start: $(head -c 200 "$WORK/wthr.werr")"
		ks_stop thr
		return
	fi
	pid=${WL_PID[wthr]}
	wl_go wthr
	wait_dumps thr 1
	wl_go wthr
	wl_wait wthr
	ks_stop thr
	held=$(wl_field wthr held)
	d=$(dumps_said thr | sed -n 1p)
	if [ -z "$d" ] || [ -z "$held" ]; then
		fail flight.threshold "no dump (the workload held ${held:-no} pipes): $(first_lines 3 <"$(ks_err thr)")"
		return
	fi
	pipes=$("$KMEMSNOOP" -i "$d" 2>/dev/null |
		grep -Ec -- "-$pid +\[[0-9]+\] +[0-9.]+: kmalloc: call_site=alloc_pipe_info\+")
	[[ $d == *-threshold ]] && grep -q '^flight_trigger=threshold: Slab ' "$d/header" &&
		[ "$pipes" -gt 0 ] && [ "$pipes" -le $((2 * held)) ]
	check $? flight.threshold "dump $(basename "$d"), trigger '$(sed -n 's/^flight_trigger=//p' "$d/header")': $pipes alloc_pipe_info kmallocs, two for each of the $held pipes the workload made at most"
}
threshold_test

listen_test() {
	local dir=$WORK/lis port page=$WORK/lis.metrics.body sig dumps allocs missed
	loopback_up
	port=$(free_port)
	if ! ks_start lis --flight -o "$dir" --listen "127.0.0.1:$port"; then
		fail flight.listen "$(ks_start_fail_why lis)"
		return
	fi
	kill -USR1 "${KS_PID[lis]}"
	wait_dumps lis 1
	kill -USR1 "${KS_PID[lis]}"
	wait_dumps lis 2
	http "$WORK/lis.metrics" GET 127.0.0.1 "$port" /metrics
	ks_stop lis
	sig=$(awk '$1 == "kmemsnoop_flight_triggers_total{trigger=\"signal\"}" { print $2 }' "$page")
	dumps=$(awk '$1 == "kmemsnoop_flight_dumps_total" { print $2 }' "$page")
	allocs=$(grep -c '^kmemsnoop_allocations_total{' "$page")
	missed=$(awk '$1 == "kmemsnoop_missed_events_total" { print $2 }' "$page")
	why="signal triggers '$sig', dumps '$dumps' (want 2 and 2), missed events '$missed' (want a number), allocation series: $allocs (want none)"
	if command -v promtool >/dev/null && ! promtool check metrics <"$page" >"$WORK/lis.promtool" 2>&1; then
		why="promtool: $(first_lines 2 <"$WORK/lis.promtool"); $why"
		sig=
	fi
	[ "$sig" = 2 ] && [ "$dumps" = 2 ] && [ -n "$missed" ] && [ "$allocs" = 0 ]
	check $? flight.listen "$why"
}
listen_test

# ---------------------------------------------------------------- memory cgroups

PRINTK=
# console_quiet / console_restore: around a call trace the test provokes.
console_quiet() {
	local cur def min boot
	read -r cur def min boot 2>/dev/null </proc/sys/kernel/printk || return 0
	PRINTK="$cur $def $min $boot"
	echo "4 $def $min $boot" >/proc/sys/kernel/printk 2>/dev/null
}

console_restore() {
	[ -n "$PRINTK" ] && echo "$PRINTK" >/proc/sys/kernel/printk 2>/dev/null
	PRINTK=
}

# in_memcg ID KIB_ABOVE ARGS...: workload ARGS started held, moved into the
# cgroup, the limit set KIB_ABOVE KiB above what the cgroup holds then.
in_memcg() {
	local id=$1 above=$2 used
	shift 2
	wl_start "$id" "$@" || return 1
	echo "${WL_PID[$id]}" >"$MEMCG/cgroup.procs" || return 1
	if [ "$MEMCG_V" = 2 ]; then
		used=$(cat "$MEMCG/memory.current")
	else
		used=$(cat "$MEMCG/memory.usage_in_bytes")
	fi
	memcg_limit $((used + (above << 10)))
}

failed_test() {
	local dir=$WORK/fail pid d opened files nulls why
	if ! memcg_create flightfail; then
		skip flight.failed "$MEMCG_WHY"
		return
	fi
	# cgroup v1: its OOM killer off, the charge fails at once; v2 has no
	# such switch: the workload makes itself unkillable, if it may.
	[ "$MEMCG_V" = 1 ] && echo 1 >"$MEMCG/memory.oom_control" 2>/dev/null
	if ! ks_start fail --flight -o "$dir" -c workload; then
		fail flight.failed "$(ks_start_fail_why fail)"
		memcg_remove
		return
	fi
	# Room for a few hundred files: fewer than the descriptors a process
	# may have (4096 in the VMs).
	if ! in_memcg wfail 256 openfail 1000000; then
		fail flight.failed "the workload did not start in $MEMCG: $(head -c 200 "$WORK/wfail.werr")"
		wl_kill wfail
		ks_stop fail
		memcg_remove
		return
	fi
	pid=${WL_PID[wfail]}
	console_quiet
	wl_run wfail
	wait_dumps fail 1
	console_restore
	ks_stop fail
	memcg_remove
	opened=$(wl_field wfail opened)
	if [ "$MEMCG_V" = 2 ] && [ "$(wl_field wfail unkillable)" != 1 ]; then
		skip flight.failed "cgroup v2 has no switch for its OOM killer, and the workload cannot make itself unkillable (oom_score_adj needs CAP_SYS_RESOURCE)"
		return
	fi
	d=$(dumps_said fail | sed -n 1p)
	if [ -z "$d" ] || [ -z "$opened" ]; then
		fail flight.failed "no dump (workload: status ${WL_RC[wfail]}, '$(tr '\n' ' ' <"$WORK/wfail.wout")'): $(first_lines 3 <"$(ks_err fail)")"
		return
	fi
	"$KMEMSNOOP" -i "$d" 2>/dev/null | grep -E -- "-$pid +\[" >"$WORK/fail.lines"
	# alloc_empty_file, __alloc_file before 6.4.
	files=$(grep -Ec ': kmem_cache_alloc: call_site=(alloc_empty_file|__alloc_file)\+[^ ]* ptr=[0-9a-f]*[1-9a-f][0-9a-f]* ' "$WORK/fail.lines")
	nulls=$(grep -Ec ': kmem_cache_alloc: call_site=[^ ]* ptr=0+ ' "$WORK/fail.lines")
	why="dump $(basename "$d"), trigger '$(sed -n 's/^flight_trigger=//p' "$d/header")': $files file allocations of pid $pid (it opened $opened files and oom_score_adj), $nulls failed ones"
	case $(basename "$d") in *-failed) ;; *) why="not a failed allocation's dump: $why" ;; esac
	[[ $d == *-failed ]] && grep -q "^flight_trigger=failed kmem_cache_alloc: .*pid $pid (workload)\$" "$d/header" &&
		[ "$files" = $((opened + 1)) ] && [ "$nulls" -ge 1 ]
	check $? flight.failed "$why"
}
failed_test

oom_test() {
	local dir=$WORK/oom pid d touched pages why
	if ! memcg_create flightoom; then
		skip flight.oom "$MEMCG_WHY"
		return
	fi
	if ! wl_start woom hog $((OOM_MIB * 4)); then
		fail flight.oom "the workload did not start: $(head -c 200 "$WORK/woom.werr")"
		memcg_remove
		return
	fi
	pid=${WL_PID[woom]}
	echo "$pid" >"$MEMCG/cgroup.procs"
	memcg_limit $((OOM_MIB << 20))
	if ! ks_start oom --flight -o "$dir" -p "$pid"; then
		fail flight.oom "$(ks_start_fail_why oom)"
		wl_kill woom
		memcg_remove
		return
	fi
	console_quiet
	wl_run woom
	wait_dumps oom 1
	console_restore
	ks_stop oom
	memcg_remove
	touched=$(awk '$1 == "touched" { n = $2 } END { print n + 0 }' "$WORK/woom.wout")
	d=$(dumps_said oom | sed -n 1p)
	if [ "${WL_RC[woom]}" != 137 ] || [ -z "$d" ]; then
		fail flight.oom "the workload ended with status ${WL_RC[woom]} (want 137, SIGKILL) after touching $touched pages; dumps: '$(dumps_said oom)': $(first_lines 3 <"$(ks_err oom)")"
		return
	fi
	pages=$("$KMEMSNOOP" -i "$d" 2>/dev/null | grep -Ec -- "-$pid +\[[0-9]+\] +[0-9.]+: mm_page_alloc: .* order=0 ")
	why="dump $(basename "$d"), trigger '$(sed -n 's/^flight_trigger=//p' "$d/header")': $pages order-0 page allocations of pid $pid, which touched $touched pages"
	[[ $d == *-oom ]] && grep -q "^flight_trigger=oom: victim pid $pid" "$d/header" &&
		[ "$touched" -gt 0 ] && [ "$pages" -ge "$touched" ]
	check $? flight.oom "$why"
}
oom_test

finish
