#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --allocinfo --pprof FILE, read back by a real reader: go tool pprof.  The
# workload holds COUNT SysV messages of SIZE bytes (one kmalloc each from
# load_msg, see test_allocinfo.sh): while they are held, the profile's
# load_msg must say COUNT objects and COUNT x class bytes in use and
# allocated, as the table printed; a workload that sends and receives 30
# messages leaves 30 allocated and none in use.  Also --stacks (load_msg
# among the frames), =total (alloc_* only), the file's mode (0600: kernel
# addresses), a file that cannot be written, and bad usage.
#
# In the VMs (no go there) only the checks that need no reader run: the
# static builds, arm64's too, write the profile as the dynamic one does.
#
# vmtest: host only: the profile format is user space over --allocinfo's
# tables.
. "$(dirname "$0")/../lib.sh"

SIZE=200
COUNT=20
TESTS=(pprof.mode pprof.inuse pprof.alloc_held pprof.alloc_freed pprof.total pprof.stacks
	pprof.unwritable pprof.usage)

require_root
require_kmemsnoop
require_workload

CLASS=$(kmalloc_class $((48 + SIZE)))
WANT_BYTES=$((COUNT * CLASS))
HEADER='allocinfo - version: 1.0'

# --- usage: needs --allocinfo (no BPF, any build) --------------------------
out=$("$KMEMSNOOP" --hist --pprof "$WORK/u.pb.gz" 1 1 2>&1 </dev/null)
rc=$?
[ $rc -eq 2 ] && [[ "$out" == *"--pprof needs --allocinfo"* ]] && [ ! -e "$WORK/u.pb.gz" ]
check $? pprof.usage "--hist --pprof: want status 2 and '--pprof needs --allocinfo', got $rc: $out"

# A static build without protobuf-c says so when the session starts.
out=$("$KMEMSNOOP" --allocinfo --pprof "$WORK/probe.pb.gz" -d 0.1 2>&1 >/dev/null </dev/null)
if [[ "$out" == *"built without protobuf-c"* ]]; then
	skip_all "$(echo "$out" | tail -n1 | sed "s/^kmemsnoop: //")"
fi

GO=$(command -v go)
GO_WHY="no go here (Debian: golang-go), the reader of the profiles"

# pprof_value FILE SAMPLE_INDEX FUNC: FUNC's cumulative value in the
# profile as go tool pprof -top shows it (bytes for *_space, counts for
# *_objects); "none" when FUNC is not in it.
pprof_value() {
	"$GO" tool pprof -top -unit=B -nodefraction=0 -nodecount=100000 -sample_index="$2" "$1" \
		2>>"$WORK/pprof.err" |
		awk -v f="$3" 'NR > 1 && $NF == f && !found { v = $4; sub(/B$/, "", v); print v; found = 1 }
			END { if (!found) print "none" }'
}

# load_msg's four values: "alloc_objects alloc_space inuse_objects inuse_space".
msg_values() {
	local i out=
	for i in alloc_objects alloc_space inuse_objects inuse_space; do
		out+="${out:+ }$(pprof_value "$1" $i load_msg)"
	done
	echo "$out"
}

# The last table of FILE: its lines after the header.
last_table() {
	awk -v h="$HEADER" '$0 == h { t = ""; next } { t = t $0 "\n" } END { printf "%s", t }' "$1"
}

# From a table: "BYTES CALLS" of the load_msg call site's lines.
msg_line() {
	awk '$NF ~ /^func:(load_msg|alloc_msg)$/ && $1 ~ /^-?[0-9]+$/ { b += $1; c += $2; n++ }
	END { if (n) print b, c; else print "none" }'
}

# From a --stacks table: "BYTES CALLS" of the entries with a load_msg frame.
msg_stacks() {
	awk '/^ *-?[0-9]+ +-?[0-9]+ / { b = $1; c = $2; counted = 0; next }
	/^        load_msg\+0x/ && !counted { tb += b; tc += c; n++; counted = 1 }
	END { if (n) print tb, tc; else print "none" }'
}

# hold ID KS_ARGS...: msg_hold (lib.sh) with this test's SIZE and COUNT.
hold() {
	local id=$1
	shift
	msg_hold "$id" "$SIZE" "$COUNT" "$@"
}

# release ID: the workload receives its messages and removes the queue.
release() {
	wl_go "w$1"
	wl_wait "w$1"
}

# --- held: in use and allocated equal the table ------------------------------
F=$WORK/held.pb.gz
if hold h --allocinfo --pprof "$F"; then
	ks_stop kh
	rc=$?
	release h
	table=$(last_table "$(ks_out kh)" | msg_line)
	mode=$(stat -c %a "$F" 2>&1)
	[ $rc -eq 0 ] && [ "$mode" = 600 ] && [ -z "$(ls "$WORK" | grep '^held\.pb\.gz\.')" ]
	check $? pprof.mode "the profile's mode should be 600 (and no temporary file left), got '$mode' (status $rc): $(head -c 300 "$(ks_err kh)" | tr '\n' ' ')"
	if [ -z "$GO" ]; then
		skip_rest pprof.inuse pprof.alloc_held "$GO_WHY"
	else
		got=$(msg_values "$F")
		[ "$table" = "$WANT_BYTES $COUNT" ] && [ "${got#* * }" = "$COUNT $WANT_BYTES" ]
		check $? pprof.inuse "load_msg's inuse_objects and inuse_space: want the table's '$table' ($WANT_BYTES bytes, $COUNT calls), go tool pprof says '${got#* * }' ($(tail -c 200 "$WORK/pprof.err" 2>/dev/null | tr '\n' ' '))"
		[ "${got% * *}" = "$COUNT $WANT_BYTES" ]
		check $? pprof.alloc_held "load_msg's alloc_objects and alloc_space while held: want '$COUNT $WANT_BYTES', got '${got% * *}'"
	fi
else
	fail_rest pprof.mode pprof.inuse pprof.alloc_held "$WHY"
fi

# --- sent and received: allocated, none in use --------------------------------
F=$WORK/freed.pb.gz
if [ -z "$GO" ]; then
	skip pprof.alloc_freed "$GO_WHY"
elif wl_start wf msg "$SIZE" 30 && ks_start kf --allocinfo --pprof "$F" -p "${WL_PID[wf]}"; then
	wl_run wf
	ks_wait kf 20
	rc=$?
	table=$(last_table "$(ks_out kf)" | msg_line)
	got=$(msg_values "$F")
	# -top leaves out a function of no value: in use, load_msg has none.
	[ $rc -eq 0 ] && [ "$table" = "0 0" ] && { [ "$got" = "30 $((30 * CLASS)) 0 0" ] ||
		[ "$got" = "30 $((30 * CLASS)) none none" ]; }
	check $? pprof.alloc_freed "30 messages sent and received: want the table's '0 0' in use and 30 allocated, '30 $((30 * CLASS)) 0 0' from go tool pprof; table '$table', profile '$got' (status $rc)"
else
	fail pprof.alloc_freed "start: $(ks_start_fail_why kf)"
fi

# --- =total: allocated only, as the table --------------------------------------
F=$WORK/total.pb.gz
if [ -z "$GO" ]; then
	skip pprof.total "$GO_WHY"
elif wl_start wt msg "$SIZE" 30 && ks_start kt --allocinfo=total --pprof "$F" -p "${WL_PID[wt]}"; then
	wl_run wt
	ks_wait kt 20
	rc=$?
	table=$(last_table "$(ks_out kt)" | msg_line)
	got="$(pprof_value "$F" alloc_objects load_msg) $(pprof_value "$F" alloc_space load_msg)"
	types=$("$GO" tool pprof -raw "$F" 2>&1 | grep -c '/count\|/bytes')
	inuse=$("$GO" tool pprof -raw "$F" 2>&1 | grep -c inuse)
	[ $rc -eq 0 ] && [ "$table" = "$((30 * CLASS)) 30" ] && [ "$got" = "30 $((30 * CLASS))" ] &&
		[ "$inuse" -eq 0 ]
	check $? pprof.total "=total: want load_msg's alloc_objects and alloc_space '30 $((30 * CLASS))' as the table's '$table', got '$got'; inuse types: $inuse (want none; $types type lines) (status $rc)"
else
	fail pprof.total "start: $(ks_start_fail_why kt)"
fi

# --- --stacks: the stacks through load_msg ------------------------------------------
F=$WORK/stacks.pb.gz
if [ -z "$GO" ]; then
	skip pprof.stacks "$GO_WHY"
elif hold s --allocinfo --stacks --pprof "$F"; then
	ks_stop ks
	rc=$?
	release s
	table=$(last_table "$(ks_out ks)" | msg_stacks)
	got=$(msg_values "$F")
	# Where the allocations came from: do_msgsnd calls load_msg.
	caller=$(pprof_value "$F" inuse_space do_msgsnd)
	[ $rc -eq 0 ] && [ "${got#* * }" = "${table#* } ${table% *}" ] &&
		[ "${table% *}" -ge "$WANT_BYTES" ] && [ "$caller" = "${table% *}" ]
	check $? pprof.stacks "--stacks: load_msg's inuse_objects and inuse_space should be the table's stacks through load_msg '$table' (at least $WANT_BYTES bytes), and do_msgsnd's inuse_space the same; got '${got#* * }' and '$caller' (status $rc)"
else
	fail pprof.stacks "$WHY"
fi

# --- a file that cannot be written: a runtime error, said --------------------------
out=$("$KMEMSNOOP" --allocinfo --pprof "$WORK/none/x.pb.gz" -d 0.2 2>&1 >/dev/null </dev/null)
rc=$?
[ $rc -eq 1 ] && echo "$out" | tail -n 3 | grep -q "^kmemsnoop: --pprof: cannot create $WORK/none/x.pb.gz"
check $? pprof.unwritable "--pprof into a missing directory: want status 1 and 'kmemsnoop: --pprof: cannot create ...', got $rc: $(echo "$out" | tail -n 2 | tr '\n' ' ')"

finish
