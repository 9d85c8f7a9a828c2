#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# kmemsnoop under faults: killed, doubled, its output removed, its memory
# cut short.
#   faults.sigkill.MODE   SIGKILL while tracing in each mode (text, -o,
#                         --hist, --allocinfo, --stat, --listen, --flight
#                         armed) leaves none
#                         of the BPF programs, maps and links it held: their
#                         ids (read from its /proc/PID/fdinfo, not from a
#                         listing by name: other kmemsnoop instances may run
#                         on the machine) are gone once the kernel has
#                         released them, and no link holds its programs.
#   faults.two_instances  two instances with -p on one workload both see
#                         each of its COUNT load_msg kmallocs exactly once.
#   faults.outdir_removed.*  the -o directory removed during the trace:
#                         kmemsnoop stops by itself, exit 1, one line naming
#                         the directory as removed; no crash, no hang.
#   faults.memcg.refused  under a memory cgroup limit too small for its ring
#                         buffers the kernel refuses them: exit 1 (no signal
#                         death), one "kmemsnoop: " line naming the memory
#                         cgroup limit.
#   faults.memcg.refused_maps  the same for the maps of --allocinfo (a
#                         pointer table too large for the limit), refused
#                         when the BPF object loads.
#   faults.memcg.tight    under a limit too small for kmemsnoop to start
#                         (16 MiB, where the cgroup's OOM killer used to end
#                         it with SIGKILL), and one with room for what it
#                         takes before loading but not for loading (its -v
#                         figures in a generous cgroup: halfway between the
#                         most it took before its check, and what is charged
#                         by then plus what the load needs on top): exit 1,
#                         one "kmemsnoop: " line naming the limit, no signal
#                         death.
#   faults.memcg.generous a limit with room for the rings lets it run.
#
# vmtest: in x86/5.10 x86/newest: kills and memory limits, where the kernel
# charges BPF memory to memlock (5.10) or to the memory cgroup (7.x).
. "$(dirname "$0")/../lib.sh"

SIGKILL_MODES=(text output hist allocinfo stat listen flight)
for m in "${SIGKILL_MODES[@]}"; do TESTS+=("faults.sigkill.$m"); done
TESTS+=(faults.two_instances faults.outdir_removed.exit_status
	faults.outdir_removed.error_line faults.outdir_removed.no_crash
	faults.memcg.refused faults.memcg.refused_maps faults.memcg.tight faults.memcg.generous)

require_root
require_kmemsnoop
require_workload

# ---------------------------------------------------------------- SIGKILL

# sigkill_mode MODE ARGS...: start kmemsnoop ARGS, let it trace, SIGKILL it
# and check that everything it held is released.
sigkill_mode() {
	local mode=$1 name=faults.sigkill.$1 id=kill_$1 pid ids left n
	shift
	if ! KS_STDOUT=/dev/null ks_start "$id" "$@"; then
		fail "$name" "$(ks_start_fail_why "$id")"
		return
	fi
	pid=${KS_PID[$id]}
	ids=$WORK/$id.ids
	# Let it consume, aggregate and write for a moment before the kill.
	"$WORKLOAD" openclose 2000 >/dev/null 2>&1
	sleep 0.3
	bpf_ids "$pid" >"$ids"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	KS_PID[$id]=
	if ! grep -q '^prog ' "$ids" || ! grep -q '^map ' "$ids"; then
		fail "$name" "no BPF program or map among the fds of kmemsnoop $pid: $(first_lines 5 <"$ids")"
		return
	fi
	n=$(wc -l <"$ids")
	if left=$(bpf_still_there "$ids" 5); then
		fail "$name" "$(echo "$left" | wc -l) of its $n BPF objects remain 5 s after SIGKILL: $(echo "$left" | first_lines 6)"
	else
		pass "$name"
	fi
}

# listen_port: a port for --listen that nothing listens on now (the
# kernel's choice for a bound socket, where python3 is there).
listen_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + RANDOM % 20000))
}

if ! command -v bpftool >/dev/null 2>&1; then
	for m in "${SIGKILL_MODES[@]}"; do skip "faults.sigkill.$m" "no bpftool to look BPF ids up"; done
else
	sigkill_mode text
	sigkill_mode output -o "$WORK/killed.rec"
	sigkill_mode hist --hist 1
	sigkill_mode allocinfo --allocinfo
	sigkill_mode stat --stat
	sigkill_mode listen --listen "127.0.0.1:$(listen_port)"
	sigkill_mode flight --flight -o "$WORK/killed.flight"
fi

# ---------------------------------------------------------------- two instances

SIZE=200
COUNT=50
# load_msg_count ID PID: the load_msg kmallocs of SIZE-byte messages by PID
# in instance ID's text.
load_msg_count() {
	ev_table "$(ks_out "$1")" >"$WORK/$1.tab"
	ev_count "$WORK/$1.tab" '$5 == "kmalloc" && $6 ~ /^load_msg\+0x/ && $2 == '"$2"' && $8 == '"$((48 + SIZE))"
}

two_instances() {
	local pid na nb
	if ! wl_start two msg "$SIZE" "$COUNT"; then
		fail faults.two_instances "the workload did not start: $(head -c 200 "$WORK/two.werr")"
		return
	fi
	pid=${WL_PID[two]}
	if ! ks_start twoa -p "$pid" -e kmalloc || ! ks_start twob -p "$pid" -e kmalloc; then
		fail faults.two_instances "$(ks_start_fail_why twoa) / $(ks_start_fail_why twob)"
		wl_kill two
		return
	fi
	if ! wl_run two; then
		fail faults.two_instances "the workload failed (status ${WL_RC[two]}): $(head -c 200 "$WORK/two.werr")"
		ks_stop twoa
		ks_stop twob
		return
	fi
	# SIGINT: each drains its rings after detaching, so nothing is lost.
	ks_stop twoa
	ks_stop twob
	na=$(load_msg_count twoa "$pid")
	nb=$(load_msg_count twob "$pid")
	[ "$na" -eq "$COUNT" ] && [ "$nb" -eq "$COUNT" ]
	check $? faults.two_instances "load_msg kmallocs of $((48 + SIZE)) bytes seen by the first: $na, by the second: $nb (want $COUNT each; statuses ${KS_RC[twoa]}, ${KS_RC[twob]})"
}
two_instances

# ---------------------------------------------------------------- -o removed

outdir_removed() {
	local dir=$WORK/removed.rec rc err
	if ! ks_start rm -o "$dir"; then
		fail_rest faults.outdir_removed.exit_status faults.outdir_removed.error_line \
			faults.outdir_removed.no_crash "$(ks_start_fail_why rm)"
		return
	fi
	rm -rf "$dir"
	# Events to write, then at most 30 s for kmemsnoop to notice.
	"$WORKLOAD" openclose 2000 >/dev/null 2>&1
	ks_wait rm 30
	rc=$?
	err=$(ks_err rm)
	[ "$rc" -eq 1 ]
	check $? faults.outdir_removed.exit_status "expected exit 1, got $rc$([ $rc = 124 ] && echo ' (still running after 30 s: killed)'): $(first_lines 3 <"$err")"
	[ "$(grep -c "^kmemsnoop: .*$dir.* removed" "$err")" -eq 1 ]
	check $? faults.outdir_removed.error_line "expected one 'kmemsnoop: ... $dir ... removed' line, stderr: $(first_lines 4 <"$err")"
	[ "$rc" -lt 128 ] && ! grep -qv '^kmemsnoop: ' "$err"
	check $? faults.outdir_removed.no_crash "status $rc, lines not from kmemsnoop: $(grep -v '^kmemsnoop: ' "$err" | first_lines 3)"
}
outdir_removed

# ---------------------------------------------------------------- memory cgroup

# in_memcg NAME LIMIT ARGS...: kmemsnoop ARGS in the foreground, alone in
# the cgroup with LIMIT bytes; RC, $WORK/NAME.err.
in_memcg() {
	local name=$1
	memcg_limit "$2" || {
		RC=255
		echo "cannot limit $MEMCG to $2 bytes" >"$WORK/$name.err"
		return
	}
	shift 2
	timeout -k 5 60 bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$MEMCG" "$KMEMSNOOP" "$@" \
		>/dev/null 2>"$WORK/$name.err" </dev/null
	RC=$?
}

# memcg_refused_tests: the two limits too small for what is asked.
memcg_refused_tests() {
	local err
	# 64 MiB: room for kmemsnoop's own memory (20-40 MiB: BTF, symbols, the
	# fentry probes' BTF on 7.x), none for 256 MiB rings: the kernel refuses
	# them (ENOMEM), where a smaller limit would have the OOM killer end the
	# process instead (48 MiB did on 7.2 with --allocinfo).
	in_memcg refused $((64 << 20)) -b 256M -d 1
	err=$WORK/refused.err
	# One error line (notices of what this kernel cannot trace may come
	# before it), and nothing but kmemsnoop's lines.
	[ "$RC" -eq 1 ] && [ "$(grep -c 'memory cgroup' "$err")" -eq 1 ] &&
		grep -q '^kmemsnoop: .*memory cgroup' "$err" && ! grep -qv '^kmemsnoop: ' "$err"
	check $? faults.memcg.refused "expected exit 1 and one 'kmemsnoop: ... memory cgroup ...' line, got status $RC$([ "$RC" -gt 128 ] && echo " (signal $((RC - 128)))"): $(first_lines 3 <"$err")"

	# A pointer table of 256M entries: maps far larger than the limit
	# (stderr may also have --allocinfo's note on debug information).
	in_memcg refused_maps $((64 << 20)) --allocinfo --max-ptrs 256M -d 1
	err=$WORK/refused_maps.err
	[ "$RC" -eq 1 ] && [ "$(grep -c 'memory cgroup' "$err")" -eq 1 ] &&
		grep -q '^kmemsnoop: .*memory cgroup' "$err" && ! grep -qv '^kmemsnoop: ' "$err"
	check $? faults.memcg.refused_maps "expected exit 1 and one 'kmemsnoop: ... memory cgroup ...' line, got status $RC$([ "$RC" -gt 128 ] && echo " (signal $((RC - 128)))"): $(first_lines 3 <"$err")"

	# What the runs above took at their most before they were refused:
	# what kmemsnoop takes before its check, passing allocations
	# included, which "charged by then" below no longer counts (11 MiB
	# more on 7.2).
	local prepeak
	prepeak=$(memcg_peak)
	prepeak=$(( ${prepeak:-0} >> 20 ))

	# Limits the kernel would not refuse a call for: the OOM killer's.  The
	# smaller first: v1 cannot set a limit below what the cgroup holds.
	local tight bad=0 why="" used need floor
	tight_case() {
		in_memcg "tight$1" $(($1 << 20)) -d 1
		err=$WORK/tight$1.err
		[ "$RC" -eq 1 ] && [ "$(grep -c 'memory cgroup limit' "$err")" -eq 1 ] &&
			grep -q '^kmemsnoop: .*memory cgroup limit' "$err" && ! grep -qv '^kmemsnoop: ' "$err" &&
			return
		bad=1
		why+="$1 MiB: status $RC$([ "$RC" -gt 128 ] && echo " (signal $((RC - 128)))"): $(first_lines 3 <"$err"); "
	}
	tight_case 16
	in_memcg measure $((512 << 20)) -v -d 1
	read -r used need < <(awk '/memory cgroup limit 512 MiB .* MiB left; this run needs about/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "left;") left = $(i - 2)
			if ($i == "about") need = $(i + 1)
		}
		print 512 - left, need }' "$WORK/measure.err")
	if [ -n "$used" ] && [ -n "$need" ]; then
		# Between the most it takes before its check and what it needs
		# after: the one place where it must refuse.
		floor=$((prepeak > used ? prepeak : used))
		if [ $((used + need - floor)) -lt 4 ]; then
			skip faults.memcg.tight "no limit between what kmemsnoop takes before its check at most ($floor MiB) and what it needs after ($used + $need MiB)"
			return
		fi
		tight_case $(((floor + used + need) / 2))
	else
		bad=1
		why+="no figures from -v: $(first_lines 3 <"$WORK/measure.err")"
	fi
	check $bad faults.memcg.tight "expected exit 1 and one 'kmemsnoop: ... memory cgroup limit ...' line (${used:-?} MiB charged at its check, $prepeak MiB at most before it, ${need:-?} MiB needed after): $why"

	# Room for 1 MiB rings on every CPU and 128 MiB more.
}

memcg_tests() {
	local ncpus err
	# Before 5.11 BPF maps were charged to RLIMIT_MEMLOCK, not the cgroup.
	if ! kernel_at_least 5 11; then
		skip_rest faults.memcg.refused faults.memcg.refused_maps faults.memcg.tight faults.memcg.generous "BPF maps are charged to memory cgroups from 5.11 on"
		return
	fi
	if ! memcg_create faults; then
		skip_rest faults.memcg.refused faults.memcg.refused_maps faults.memcg.tight faults.memcg.generous "$MEMCG_WHY"
		return
	fi
	ncpus=$(online_cpus | wc -l)
	if [ -n "${ASAN_OPTIONS:-}" ]; then
		# make sanitize: AddressSanitizer's shadow memory and quarantine
		# take more than the 64 MiB below, so the OOM killer would end it.
		skip faults.memcg.refused "kmemsnoop runs under AddressSanitizer (make sanitize): its own memory exceeds the 64 MiB limit"
		skip faults.memcg.refused_maps "kmemsnoop runs under AddressSanitizer (make sanitize): its own memory exceeds the 64 MiB limit"
		skip faults.memcg.tight "kmemsnoop runs under AddressSanitizer (make sanitize): its shadow memory is charged before main()"
	else
		memcg_refused_tests
	fi
	in_memcg generous $(((128 + ncpus) << 20)) -b 1M -d 1
	err=$WORK/generous.err
	[ "$RC" -eq 0 ] && grep -q '^kmemsnoop: Tracing' "$err"
	check $? faults.memcg.generous "expected a trace of 1 s and exit 0, got status $RC: $(first_lines 3 <"$err")"
	memcg_remove
}
memcg_tests

finish
