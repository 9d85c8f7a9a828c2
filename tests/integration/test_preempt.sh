#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Several tasks pinned to one CPU allocate and free slab objects and pages
# (4 x "noise": SysV messages and open/close; 4 x "pages-rounds": pipes
# and faulted anonymous pages) while kmemsnoop traces each mode in turn.
# On 7.x kernels, whose tracepoints run tp_btf and raw_tp programs
# preemptibly, a run preempted on that CPU made the kernel skip every other
# task's event on it for that program (12 to 20% of the events under this
# load before kmemsnoop chose classic tracepoint programs there).
#   preempt.MODE.clean    kmemsnoop ran the load through and exited 0
#   preempt.MODE.missed   the events kmemsnoop says the kernel skipped are
#                         at most 1 in 200 of those it counted (--stat: its
#                         allocations, and as many frees; the figure
#                         is printed either way: what remains are events
#                         in interrupts during a run of the same program,
#                         on every kernel, and on 7.x the fexit programs
#                         and the sched tracepoints' tp_btf programs, which
#                         nothing runs with preemption off; 0.1 to 0.3%)
# for MODE text, record (-o), allocinfo (--allocinfo=total), hist, stat.
#   preempt.text.names    every kmem_cache_alloc line names its cache (the
#                         classic programs find it from the object's slab)
# The recording made under the load, read by tests/recwalk (written from
# docs/ABI.md, apart from kmemsnoop -i):
#   preempt.record.walk      every record decodes and leads to the next
#   preempt.record.sequence  each CPU file holds each of its sequence
#                            numbers once, from 0 to its last
#   preempt.record.events    its events add up to the summary's count
#
# vmtest: in x86/newest arm64/newest x86/newest+full arm64/newest+full: the
# kernels whose tracepoints run programs preemptibly.
. "$(dirname "$0")/../lib.sh"

MODES=(text record allocinfo hist stat)
TESTS=()
for m in "${MODES[@]}"; do TESTS+=(preempt.$m.clean preempt.$m.missed); done
TESTS+=(preempt.text.names)
TESTS+=(preempt.record.walk preempt.record.sequence preempt.record.events)
SECS=${PREEMPT_SECONDS:-3}
RECWALK=${RECWALK:-$TOP/tests/recwalk}

require_root
require_kmemsnoop
require_workload
command -v taskset >/dev/null || skip_all "taskset is not installed (it pins the tasks)"
CPU=$(online_cpus | tail -n1)

# mode_args MODE: kmemsnoop's arguments for MODE.
mode_args() {
	case $1 in
	text) echo "-e kmalloc,cache,page" ;;
	record) echo "-e kmalloc,cache,page -o $WORK/rec" ;;
	allocinfo) echo "--allocinfo=total" ;;
	hist) echo "--hist -e kmalloc,cache,page" ;;
	stat) echo "--stat" ;;
	esac
}

# counted MODE: "MISSED COUNTED" from kmemsnoop's own output: what it says
# the kernel skipped, and the events (allocations for allocinfo) it took.
counted() {
	local id=$1 err=$WORK/$1.err out=$WORK/$1.out
	case $1 in
	allocinfo)
		echo "$(ai_missed "$out")" \
			"$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ { n += $2 } END { print n + 0 }' "$out")"
		;;
	hist)
		sed -n 's/^kmemsnoop: \([0-9]*\) allocations ([0-9]* failed), \([0-9]*\) frees in .*; \([0-9]*\) events missed$/\3 \1 \2/p' "$err" |
			awk '{ print $1, $2 + $3 }'
		;;
	*)
		# --stat in BPF maps: its allocations, and as many frees, which
		# it does not count.
		local count='events written' times=1
		[ "$1" = stat ] && count='allocations counted in BPF maps' times=2
		awk -v c="^kmemsnoop: [0-9]+ $count" -v k="$times" '$0 ~ c { n = k * $2 }
		/^kmemsnoop: [0-9]+ events missed/ { m = $2 }
		END { if (n != "") print m + 0, n }' "$err"
		;;
	esac
}

for m in "${MODES[@]}"; do
	# shellcheck disable=SC2046 # the mode's arguments are words
	if ! ks_start "$m" $(mode_args "$m"); then
		fail "preempt.$m.clean" "$(ks_start_fail_why "$m")"
		fail "preempt.$m.missed" "kmemsnoop did not start"
		[ "$m" = text ] && fail preempt.text.names "kmemsnoop did not start"
		continue
	fi
	pids=()
	for _ in 1 2 3 4; do
		taskset -c "$CPU" "$WORKLOAD" noise "$SECS" 200 >/dev/null 2>&1 &
		pids+=($!)
		taskset -c "$CPU" "$WORKLOAD" pages-rounds "$SECS" 16 >/dev/null 2>&1 &
		pids+=($!)
	done
	wl_rc=0
	for p in "${pids[@]}"; do wait_pid "$p" $((SECS + WL_TIMEOUT)) || wl_rc=1; done
	ks_stop "$m"
	rc=$?
	[ $rc -eq 0 ] && [ $wl_rc -eq 0 ]
	check $? "preempt.$m.clean" "kmemsnoop exited $rc, the load $wl_rc" "$(ks_err "$m")"
	if [ "$m" = text ] && ! kernel_at_least 6 1; then
		skip preempt.text.names "before 6.1 the kernel's kmem_cache_alloc event does not say which cache"
	elif [ "$m" = text ]; then
		# Where classic programs run, the cache comes from the object's
		# slab (the record has none): every line must still name it.
		read -r caches named < <(awk '/ kmem_cache_alloc: / { n++; if (/ name=/) k++ }
			END { print n + 0, k + 0 }' "$(ks_out text)")
		[ "$caches" -gt 0 ] && [ "$named" -eq "$caches" ]
		check $? preempt.text.names "$named of $caches kmem_cache_alloc lines name their cache"
	fi
	read -r missed n < <(counted "$m")
	if [ -z "$n" ] || [ "$n" -eq 0 ]; then
		fail "preempt.$m.missed" "no count of events in kmemsnoop's output" "$(ks_err "$m")"
		continue
	fi
	echo "# preempt.$m: $missed of $n events skipped by the kernel, CPU $CPU, $(uname -r)"
	[ $((missed * 200)) -le "$n" ]
	check $? "preempt.$m.missed" "the kernel skipped $missed of $n events" "$(ks_err "$m")"
done

if [ ! -x "$RECWALK" ]; then
	skip_rest preempt.record.walk preempt.record.sequence preempt.record.events \
		"no $RECWALK (make builds it)"
	finish
fi
"$RECWALK" "$WORK"/rec/cpu* >"$WORK/walk" 2>"$WORK/walk.err"
[ $? -eq 0 ] && [ -s "$WORK/walk" ] && ! grep -q ' bad ' "$WORK/walk"
check $? preempt.record.walk "a record does not decode: $(grep ' bad ' "$WORK/walk" | first_lines 2)" "$WORK/walk.err"
# Fields: cpu records events missing twice first last.
bad=$(awk '$2 != "bad" && ($4 != 0 || $5 != 0 || $6 != 0 || $7 != $2 - 1)' "$WORK/walk")
read -r _ lost _ < <(ks_summary record)
if [ -n "$bad" ] && [ "${lost:-0}" != 0 ] && ! grep -q ' bad ' "$WORK/walk"; then
	# Records lost to full rings (a consumer slowed down, under
	# AddressSanitizer say) leave their numbers out: counted, not a fault.
	skip preempt.record.sequence "kmemsnoop lost $lost events to full rings, whose sequence numbers are missing: $(echo "$bad" | first_lines 2)"
else
	[ -z "$bad" ] && ! grep -q ' bad ' "$WORK/walk"
	check $? preempt.record.sequence "a CPU file's sequence numbers are not each of 0..last once (cpu records events missing twice first last): $(echo "$bad" | first_lines 2)"
fi
events=$(awk '$2 != "bad" { n += $3 } END { print n + 0 }' "$WORK/walk")
written=$(awk '/^kmemsnoop: [0-9]+ events written/ { print $2 }' "$(ks_err record)")
[ -n "$written" ] && [ "$events" -eq "$written" ]
check $? preempt.record.events "the CPU files hold $events events, the summary says ${written:-nothing} written"

finish
