# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Helpers for the integration tests (tests/integration/test_*.sh).  Sourced
# by bash scripts:
#
#   . "$(dirname "$0")/../lib.sh"
#   TESTS=(name1 name2)          # every result name this script can print
#   require_root; require_kmemsnoop; require_workload; require_tracefs
#
# Results are printed as exactly one line each:
#   PASS: <name>        FAIL: <name>: <why>        SKIP: <name>: <reason>
# and the script exits 1 when it printed a FAIL, 0 otherwise (finish).
#
# Environment: KMEMSNOOP (default <top>/kmemsnoop), WORKLOAD (default
# <top>/tests/workload), KEEP_TMP=1 keeps the scratch directory, VERBOSE=1
# shows the output files of failed checks.

LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$LIB_DIR/.." && pwd)
KMEMSNOOP=${KMEMSNOOP:-$TOP/kmemsnoop}
WORKLOAD=${WORKLOAD:-$TOP/tests/workload}
TRACEFS=${TRACEFS:-/sys/kernel/tracing}
SCRIPT_NAME=$(basename "$0" .sh)
KS_START_TIMEOUT=${KS_START_TIMEOUT:-30} # seconds to wait for "Tracing"
KS_STOP_TIMEOUT=${KS_STOP_TIMEOUT:-20}   # seconds to wait after SIGINT
WL_TIMEOUT=${WL_TIMEOUT:-60}             # seconds a workload may run

# The six kmem tracepoints kmemsnoop reports (the event names of its text).
KMEM_EVENTS="kmalloc kfree kmem_cache_alloc kmem_cache_free mm_page_alloc mm_page_free"
# Kernels before 6.1 also have these; kmemsnoop reports them as kmalloc and
# kmem_cache_alloc (with node=), so the oracle must trace them too.
KMEM_NODE_EVENTS="kmalloc_node kmem_cache_alloc_node"
ORACLE_EVENTS=$KMEM_EVENTS # plus the node events this kernel has (require_tracefs)
# Events of other groups the oracle traces too, as "group/event" words (a
# test sets it, e.g. ORACLE_MORE="percpu/percpu_alloc_percpu ...").
ORACLE_MORE=
# "event:key ..." for every key the kernel's own trace prints, per event
# (require_tracefs): older kernels print fewer than kmemsnoop does.
KERNEL_FIELDS=

FAILED=0
PASSED=0
TESTS=()
BG_PIDS=() # other background helpers of a test, killed at exit
declare -A KS_PID KS_RC WL_PID WL_BG WL_FD WL_RC ORACLE_DIR REPORTED
ORACLE_ERR=
TRACEFS_MOUNTED_BY_US=0

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kmemsnoop-$SCRIPT_NAME.XXXXXX") || {
	echo "FAIL: $SCRIPT_NAME: cannot create a scratch directory"
	exit 1
}
# nap's FIFO, open for reading and writing so that opening it does not block.
mkfifo "$WORK/nap" && exec {NAP_FD}<>"$WORK/nap" || {
	echo "FAIL: $SCRIPT_NAME: cannot open a FIFO in $WORK"
	exit 1
}

# ---------------------------------------------------------------- results

pass() {
	PASSED=$((PASSED + 1))
	REPORTED[$1]=1
	echo "PASS: $1"
}

# fail NAME WHY [FILE...]: the files are shown (tail) when VERBOSE=1.
fail() {
	local name=$1 why=$2 f
	shift 2
	FAILED=$((FAILED + 1))
	REPORTED[$name]=1
	echo "FAIL: $name: $why"
	if [ "${VERBOSE:-0}" = 1 ]; then
		for f in "$@"; do
			[ -f "$f" ] || continue
			echo "---- $f (last 20 lines)"
			tail -n 20 "$f"
		done
	fi
}

skip() {
	REPORTED[$1]=1
	echo "SKIP: $1: $2"
}

# check STATUS NAME WHY: PASS NAME when STATUS is 0, else FAIL NAME: WHY.
# Pass $? of the condition as the first word, so that it is taken before
# any command substitution in WHY runs:
#   [ "$n" -eq 5 ]
#   check $? foo.count "found $n, expected 5 ($(head -n1 "$f"))"
check() {
	local st=$1 name=$2
	shift 2
	if [ "$st" -eq 0 ]; then pass "$name"; else fail "$name" "$@"; fi
	return "$st"
}

# skip_all REASON: SKIP every name in TESTS not reported yet and end the
# script.
skip_all() {
	local t
	if [ ${#TESTS[@]} -eq 0 ]; then
		skip "$SCRIPT_NAME" "$1"
	else
		for t in "${TESTS[@]}"; do
			[ -n "${REPORTED[$t]}" ] || skip "$t" "$1"
		done
	fi
	finish
}

# fail_rest NAME... WHY: FAIL the named tests with one reason (a common
# precondition failed, e.g. kmemsnoop did not start).
fail_rest() {
	local why=${*: -1} t
	for t in "${@:1:$#-1}"; do fail "$t" "$why"; done
}

skip_rest() {
	local why=${*: -1} t
	for t in "${@:1:$#-1}"; do skip "$t" "$why"; done
}

# finish: end the script; a name of TESTS that was never reported is a
# failure of the script itself.
finish() {
	local t
	for t in "${TESTS[@]}"; do
		[ -n "${REPORTED[$t]}" ] || fail "$t" "not reported by $SCRIPT_NAME (a bug in the test)"
	done
	[ "$FAILED" -eq 0 ]
	exit $?
}

require_root() {
	[ "$(id -u)" = 0 ] || skip_all "needs root"
}

require_kmemsnoop() {
	[ -x "$KMEMSNOOP" ] || skip_all "kmemsnoop binary missing ($KMEMSNOOP; run make)"
}

require_workload() {
	[ -x "$WORKLOAD" ] || skip_all "workload binary missing ($WORKLOAD; run make)"
}

# Mount tracefs when needed (and unmount it at the end: kmemsnoop must not
# come to rely on it being mounted).
require_tracefs() {
	tracefs_setup || skip_all "tracefs with kmem events is not available at $TRACEFS"
}

# tracefs_setup: what require_tracefs does, for a script that has other
# tests to run without it: status 1 when there is no tracefs.
tracefs_setup() {
	local e
	if [ ! -d "$TRACEFS/events/kmem" ]; then
		mount -t tracefs nodev "$TRACEFS" 2>/dev/null && TRACEFS_MOUNTED_BY_US=1
	fi
	[ -d "$TRACEFS/events/kmem" ] && [ -d "$TRACEFS/instances" ] || return 1
	for e in $KMEM_NODE_EVENTS; do
		[ -d "$TRACEFS/events/kmem/$e" ] && ORACLE_EVENTS="$ORACLE_EVENTS $e"
	done
	KERNEL_FIELDS=$(kernel_fields)
}

# kernel_fields: the keys of each event's "print fmt" in tracefs, as
# "event:key" words, the node events counted as their base event.
kernel_fields() {
	local e f
	for e in $ORACLE_EVENTS; do
		f=$TRACEFS/events/kmem/$e/format
		sed -n 's/^print fmt: "\([^"]*\)".*/\1/p' "$f" | grep -o '[a-z_]*=' |
			sed "s/^/${e%_node}:/; s/=\$//"
	done | sort -u | tr '\n' ' '
}

# ---------------------------------------------------------------- kernel

# kernel_at_least MAJOR MINOR: the running kernel is MAJOR.MINOR or later.
# The tests use the version to know what the kernel's events carry, as an
# oracle independent of kmemsnoop (which reads the layouts from BTF).
kernel_at_least() {
	local v=${KERNEL_RELEASE%%-*} maj min
	maj=${v%%.*}
	min=${v#*.}
	min=${min%%[!0-9]*}
	[ "$maj" -gt "$1" ] || { [ "$maj" -eq "$1" ] && [ "$min" -ge "$2" ]; }
}
KERNEL_RELEASE=$(uname -r)
# The page size; busybox (the test VMs) has no getconf.
PAGE_SIZE=$(getconf PAGESIZE 2>/dev/null ||
	awk '/^KernelPageSize:/ { print $2 * 1024; exit }' /proc/self/smaps)
# kmemsnoop can name the cache of a kmem_cache_alloc where the tracepoint
# passes the struct kmem_cache (6.1), of a kmem_cache_free where it passes
# the cache (6.1) or its name (5.12).
CACHE_ALLOC_NAMES=0
CACHE_FREE_NAMES=0
kernel_at_least 6 1 && CACHE_ALLOC_NAMES=1
kernel_at_least 5 12 && CACHE_FREE_NAMES=1

# Awk conditions on ev_table rows for the objects every open() allocates:
# the path (names_cache) and the file (filp).  By the cache's
# name where the line has one, else (no name= on this kernel, in
# kmemsnoop's text or in the kernel's own trace) by call site and size.
NAMES_ALLOC='($5 == "kmem_cache_alloc" && ($11 == "names_cache" || ($11 == "-" && $6 ~ /^getname/ && $8 == 4096)))'
FILP_ALLOC='($5 == "kmem_cache_alloc" && ($11 == "filp" || ($11 == "-" && $6 ~ /^(__alloc_file|alloc_empty_file)\+/)))'

# names_frees TABLE: the kmem_cache_free rows of names_cache objects: by
# name, else (5.10: no name, and putname is inlined into its callers) the
# frees of a pointer a NAMES_ALLOC row handed out and nothing freed since.
# Rows in trace order, as the oracle's are.
names_frees() {
	awk -F'\t' "$NAMES_ALLOC"' { live[$7] = 1; next }
	$5 == "kmem_cache_free" && ($11 == "names_cache" || ($11 == "-" && ($7 in live))) { delete live[$7]; n++ }
	END { print n + 0 }' "$1"
}

# ---------------------------------------------------------------- memory cgroups

MEMCG=
MEMCG_V=
MEMCG_WHY=
MEMCG_ENABLED_ROOT=
MEMCG_MOUNTED=

# memcg_create NAME: a fresh memory cgroup in $MEMCG, MEMCG_V 2 or 1.  v2:
# under the root, with the memory controller enabled there (a cgroup2 mount of
# our own where none is mounted: the test VMs' initramfs); v1: under this
# shell's own memory cgroup (a container may allow no other place).
# Status 1, with a reason in MEMCG_WHY, when there is none to be had.
# cleanup removes it.
memcg_create() {
	local root v1 rel
	root=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/mounts)
	if [ -z "$root" ] && [ -z "$v1" ] && mkdir -p "$WORK/cgroup2" &&
		mount -t cgroup2 none "$WORK/cgroup2" 2>/dev/null; then
		root=$WORK/cgroup2
		MEMCG_MOUNTED=$root
	fi
	if [ -n "$root" ] && grep -qw memory "$root/cgroup.controllers" 2>/dev/null; then
		if ! grep -qw memory "$root/cgroup.subtree_control"; then
			echo +memory >"$root/cgroup.subtree_control" 2>/dev/null || {
				MEMCG_WHY="cannot enable the memory controller in $root"
				return 1
			}
			MEMCG_ENABLED_ROOT=$root
		fi
		MEMCG=$root/kmemsnoop-test-$1.$$
		MEMCG_V=2
	else
		rel=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
		if [ -z "$v1" ] || [ ! -d "$v1$rel" ]; then
			MEMCG_WHY="no memory cgroup controller (cgroup v2 or v1) is mounted"
			return 1
		fi
		MEMCG=$v1${rel%/}/kmemsnoop-test-$1.$$
		MEMCG_V=1
	fi
	mkdir "$MEMCG" 2>/dev/null || {
		MEMCG_WHY="cannot create $MEMCG"
		MEMCG=
		return 1
	}
}

# memcg_limit BYTES: the cgroup's limit, with no swap beyond it.
memcg_limit() {
	if [ "$MEMCG_V" = 2 ]; then
		echo "$1" >"$MEMCG/memory.max" &&
			{ [ ! -f "$MEMCG/memory.swap.max" ] || echo 0 >"$MEMCG/memory.swap.max"; }
	elif [ ! -f "$MEMCG/memory.memsw.limit_in_bytes" ]; then
		echo "$1" >"$MEMCG/memory.limit_in_bytes"
	else
		# memsw is never below the limit: raised first, lowered after.
		echo "$1" >"$MEMCG/memory.memsw.limit_in_bytes" 2>/dev/null
		echo "$1" >"$MEMCG/memory.limit_in_bytes" &&
			echo "$1" >"$MEMCG/memory.memsw.limit_in_bytes"
	fi
}

# memcg_oom_kills: the processes the cgroup's OOM killer killed.
memcg_oom_kills() {
	local f=$MEMCG/memory.events
	[ "$MEMCG_V" = 1 ] && f=$MEMCG/memory.oom_control
	awk '$1 == "oom_kill" { n = $2 } END { print n + 0 }' "$f" 2>/dev/null
}

# memcg_peak: the most the cgroup was charged (page cache included), ""
# when the kernel does not say.
memcg_peak() {
	local f=$MEMCG/memory.peak
	[ "$MEMCG_V" = 1 ] && f=$MEMCG/memory.max_usage_in_bytes
	[ -r "$f" ] && cat "$f"
}

# memcg_remove: the cgroup gone (its processes must be), and what was
# changed or mounted for it.
memcg_remove() {
	[ -n "$MEMCG" ] && [ -d "$MEMCG" ] && rmdir "$MEMCG" 2>/dev/null
	[ -n "$MEMCG_ENABLED_ROOT" ] && echo -memory >"$MEMCG_ENABLED_ROOT/cgroup.subtree_control" 2>/dev/null
	[ -n "$MEMCG_MOUNTED" ] && umount "$MEMCG_MOUNTED" 2>/dev/null
	MEMCG=
	MEMCG_ENABLED_ROOT=
	MEMCG_MOUNTED=
}

# ---------------------------------------------------------------- ports

# loopback_up: the loopback up (the test VMs' initramfs leaves it down: no
# 127.0.0.1), said when it was down.
loopback_up() {
	if [ -r /sys/class/net/lo/flags ] && [ $(($(cat /sys/class/net/lo/flags) & 1)) = 0 ]; then
		ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null
		echo "# $SCRIPT_NAME: the loopback was down: brought it up"
	fi
}

# port_listening PORT: a TCP socket listens on PORT (IPv4 or IPv6).
port_listening() {
	awk -v h="$(printf '%04X' "$1")" '$4 == "0A" { split($2, a, ":"); if (a[2] == h) f = 1 }
		END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# free_port: a port nothing listens on now.
free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 30000))
		port_listening "$p" || break
	done
	echo "$p"
}

# http OUT METHOD HOST PORT PATH [HEADER...]: one request (HTTP/1.1,
# Connection: close) through bash's /dev/tcp; the response's status line
# and headers (CRs taken off) in OUT.head, its body byte for byte in
# OUT.body.  Status 1 when no status line came back.
http() {
	local out=$1 method=$2 host=$3 port=$4 path=$5 h line n=0 LC_ALL=C
	shift 5
	: >"$out.head"
	: >"$out.body"
	# shellcheck disable=SC2094
	(
		{
			printf '%s %s HTTP/1.1\r\nHost: %s:%s\r\nConnection: close\r\n' \
				"$method" "$path" "$host" "$port"
			for h in "$@"; do printf '%s\r\n' "$h"; done
			printf '\r\n'
		} >&3
		timeout 10 cat <&3
	) 2>/dev/null 3<>"/dev/tcp/$host/$port" >"$out.raw"
	while IFS= read -r line; do
		n=$((n + ${#line} + 1))
		line=${line%$'\r'}
		[ -z "$line" ] && break
		echo "$line" >>"$out.head"
	done <"$out.raw"
	tail -c +$((n + 1)) "$out.raw" >"$out.body"
	grep -q '^HTTP/1\.[01] [0-9][0-9][0-9]' "$out.head"
}

# http_status OUT: the status code of the response in OUT.head.
http_status() {
	awk 'NR == 1 { print $2 }' "$1.head"
}

# ---------------------------------------------------------------- tmux
#
# A real terminal for the tests of what kmemsnoop shows on one: a tmux
# server of the test's own, one session.

TMUX_SOCK=kmemsnoop-test-$$
TMUX_SESSION=

tm() { tmux -L "$TMUX_SOCK" "$@"; }

# screen: the pane's text now.
screen() { tm capture-pane -p -t "$TMUX_SESSION" 2>/dev/null; }

# tmux_start SESSION COLS ROWS: an interactive bash (prompt "READY$ ") in a
# detached session; status 2 when tmux cannot start one, 1 when the shell
# did not show its prompt.
tmux_start() {
	local srv
	TMUX_SESSION=$1
	tm new-session -d -s "$1" -x "$2" -y "$3" "env -u TMUX PS1='READY\$ ' bash --norc --noprofile -i" ||
		return 2
	srv=$(tm display-message -p '#{pid}' 2>/dev/null)
	[ -n "$srv" ] && BG_PIDS+=("$srv")
	wait_screen 20 '/READY\$/ { ok = 1 } END { exit !ok }'
}

# wait_screen SECONDS AWK-CONDITION: polls the pane until the awk program's
# END block says yes (exit 0).  Status 1 on timeout; the last screen is in
# $WORK/screen.
wait_screen() {
	local end=$((SECONDS + $1))
	while :; do
		screen >"$WORK/screen"
		awk "$2" "$WORK/screen" && return 0
		[ $SECONDS -ge $end ] && return 1
		nap 0.1
	done
}

# describe_screen head|tail N: the first or last N lines of the last screen
# with text, on one line.
describe_screen() {
	sed -e 's/ *$//' "$WORK/screen" | grep . | "$1" -n "$2" | tr '\n' '|' | head -c 600
}

# ---------------------------------------------------------------- cleanup

cleanup() {
	local id pid
	for id in "${!KS_PID[@]}"; do
		pid=${KS_PID[$id]}
		[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	done
	for id in "${!WL_BG[@]}"; do
		pid=${WL_BG[$id]}
		[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	done
	for pid in "${BG_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null
	done
	for id in "${!ORACLE_DIR[@]}"; do
		oracle_remove "$id"
	done
	# Reap what was killed (each has been sent SIGKILL: no waiting long).
	for pid in "${KS_PID[@]}" "${WL_BG[@]}" "${BG_PIDS[@]}"; do
		[ -n "$pid" ] && wait "$pid" 2>/dev/null
	done
	# After its processes are reaped, before $WORK (a mount of ours) goes.
	memcg_remove
	if [ "$TRACEFS_MOUNTED_BY_US" = 1 ]; then
		umount "$TRACEFS" 2>/dev/null
	fi
	if [ "${KEEP_TMP:-0}" = 1 ]; then
		echo "# kept $WORK" >&2
	else
		rm -rf "$WORK"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- processes

# nap SECONDS: sleep without a process.  A test's polling runs while the
# traced workload does: each forked sleep or cat allocates pages, and on
# kernels that preempt a program run (7.x) another task's allocation on
# that CPU meanwhile is skipped; the fewer the better.  Reads a FIFO that
# nothing writes to, until the timeout.
nap() {
	read -r -t "$1" -u "$NAP_FD" _ 2>/dev/null
	return 0
}

# file_has FILE ERE: a line of FILE matches ERE.  file_says FILE TEXT:
# FILE contains TEXT.  Both without a process: the polling loops ask many
# times a second, and in the VMs (emulated) a forked grep costs some 15 ms
# of the guest's CPU, taken from the kmemsnoop or workload waited for.
# file_has reads line by line (for small files); file_says reads the file
# at once (kmemsnoop's stderr, long under -v).
file_has() {
	local line
	[ -r "$1" ] || return 1
	while IFS= read -r line || [ -n "$line" ]; do
		[[ $line =~ $2 ]] && return 0
	done <"$1"
	return 1
}

file_says() {
	local all=
	[ -r "$1" ] || return 1
	IFS= read -r -d '' all <"$1"
	[[ $all == *"$2"* ]]
}

# proc_state_into VAR PID: VAR = the state letter of PID ("" when gone),
# without a process.  proc_state PID: the same, printed.
proc_state_into() {
	local -n state=$1
	local s=
	read -r s 2>/dev/null <"/proc/$2/stat"
	s=${s##*) }
	state=${s%% *}
}

proc_state() {
	local st
	proc_state_into st "$1"
	echo "$st"
}

# wait_pid PID SECONDS: reap our child PID, waiting at most SECONDS.
# Status: the child's exit status, or 124 (and the child is killed) on
# timeout.
wait_pid() {
	local pid=$1 end=$((SECONDS + $2)) st
	while :; do
		proc_state_into st "$pid"
		[ -z "$st" ] || [ "$st" = Z ] || [ "$st" = X ] && break
		if [ $SECONDS -ge $end ]; then
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
		nap 0.05
	done
	wait "$pid" 2>/dev/null
}

# ---------------------------------------------------------------- --allocinfo tables

AI_HEADER='allocinfo - version: 1.0'

# ai_ntables FILE: how many tables (header lines) FILE has.
ai_ntables() { grep -c "^$AI_HEADER\$" "$1"; }

# ai_table FILE N: the lines of table N (1-based) after its header.
ai_table() {
	awk -v n="$2" -v h="$AI_HEADER" '$0 == h { t++; next } t == n' "$1"
}

# ai_wait_tables FILE N SECONDS: until FILE has at least N tables.
ai_wait_tables() {
	local end=$((SECONDS + $3))
	while [ "$(ai_ntables "$1")" -lt "$2" ]; do
		[ $SECONDS -ge $end ] && return 1
		nap 0.05
	done
}

# ai_func_sum REGEX: from a table on stdin, "BYTES CALLS" summed over the
# lines tagged func:NAME with NAME matching REGEX; "none" when there is none.
ai_func_sum() {
	awk -v re="^func:($1)\$" '$NF ~ re && $1 ~ /^-?[0-9]+$/ { b += $1; c += $2; n++ }
	END { if (n) print b, c; else print "none" }'
}

# ai_missed FILE [N]: the events the kernel skipped by table N of FILE
# (default: the last), from its "# kmemsnoop: M events of any process not
# seen" line; 0 when it has none.
ai_missed() {
	awk -v n="${2:-0}" -v h="$AI_HEADER" '$0 == h { t++; if (n == 0) m = 0; next }
		(n == 0 || t == n) && /^# kmemsnoop: [0-9]+ events of any process not seen/ { m = $3 }
		END { print m + 0 }' "$1"
}

# within_misses NAME GOT WANT MISSED: status 0 when the count GOT is WANT,
# or fewer by no more than MISSED, the events the kernel did not run
# kmemsnoop's programs for (one of them was already running on that CPU:
# an interrupt's allocation, or on 7.x kernels another task's, whose
# program run was preempted); then a "#" note says so.
within_misses() {
	local name=$1 got=$2 want=$3 missed=$4
	[[ "$got" =~ ^-?[0-9]+$ ]] || return 1
	[ "$got" -eq "$want" ] && return 0
	[ "$got" -lt "$want" ] && [ $((want - got)) -le "$missed" ] || return 1
	echo "# $name: $got of $want, short by no more than the $missed events the kernel skipped"
}

# counts_within_misses NAME GOT WANT_CALLS UNIT MISSED: within_misses for
# the calls of GOT ("BYTES CALLS"), each of UNIT bytes.
counts_within_misses() {
	local bytes calls
	read -r bytes calls <<<"$2"
	[[ "$bytes" =~ ^-?[0-9]+$ && "$calls" =~ ^-?[0-9]+$ ]] || return 1
	[ "$bytes" -eq $((calls * $4)) ] && within_misses "$1" "$calls" "$3" "$5"
}

# ---------------------------------------------------------------- kmemsnoop

# The event classes ks_start traces when ARGS name none: the kmem events',
# which the tests' oracle (the kernel's own kmem events) sees too.  The
# vmalloc and percpu classes have their own tests, which name them.
KS_EVENTS=kmalloc,cache,page

# ks_with_classes ARGS...: ARGS, one per line, with -e $KS_EVENTS before
# the first "--" (or at the end: KMEMSNOOP may be a wrapper such as
# setpriv) unless they name classes or ask for --stat (which counts the
# kmem classes only, and streams when given -e).
ks_with_classes() {
	local a out=() added=0
	for a in "$@"; do
		case $a in
		-e | -e?* | --events | --events=* | --stat | --stat=*) added=1 ;;
		esac
	done
	for a in "$@"; do
		if [ "$a" = -- ] && [ $added = 0 ]; then
			out+=(-e "$KS_EVENTS")
			added=1
		fi
		out+=("$a")
	done
	[ $added = 0 ] && out+=(-e "$KS_EVENTS")
	printf '%s\n' "${out[@]}"
}

# ks_start ID ARGS...: start kmemsnoop ARGS (with -e $KS_EVENTS unless
# they name classes) in the background, stdout in
# $WORK/ID.out (or $KS_STDOUT when set), stderr in $WORK/ID.err, and wait
# for its "Tracing" line.
# Status 0 when it is tracing; 1 when it exited first (KS_RC[ID] holds its
# status) or did not say "Tracing" within KS_START_TIMEOUT (it is killed).
ks_start() {
	local id=$1 end args
	shift
	mapfile -t args < <(ks_with_classes "$@")
	# Emptied here, not only by the child's redirection, which may come
	# after the first look for "Tracing": an ID used again must not be
	# found tracing by its previous run's line.
	: >"$WORK/$id.err"
	"$KMEMSNOOP" "${args[@]}" >"${KS_STDOUT:-$WORK/$id.out}" 2>"$WORK/$id.err" </dev/null &
	KS_PID[$id]=$!
	KS_RC[$id]=
	end=$((SECONDS + KS_START_TIMEOUT))
	while :; do
		file_says "$WORK/$id.err" Tracing && return 0
		local st
		proc_state_into st "${KS_PID[$id]}"
		if [ -z "$st" ] || [ "$st" = Z ]; then
			wait "${KS_PID[$id]}"
			KS_RC[$id]=$?
			KS_PID[$id]=
			return 1
		fi
		if [ $SECONDS -ge $end ]; then
			kill -KILL "${KS_PID[$id]}" 2>/dev/null
			wait "${KS_PID[$id]}" 2>/dev/null
			KS_RC[$id]=124
			KS_PID[$id]=
			return 1
		fi
		nap 0.05
	done
}

# ks_start_fail_why ID: a one-line reason for a failed ks_start.
ks_start_fail_why() {
	local id=$1
	if [ "${KS_RC[$id]}" = 124 ]; then
		echo "kmemsnoop did not print 'Tracing' within ${KS_START_TIMEOUT}s"
	else
		echo "kmemsnoop exited with status ${KS_RC[$id]} before tracing: $(head -c 300 "$WORK/$id.err" | tr '\n' ' ')"
	fi
}

# ks_stop ID: SIGINT, then wait (KS_STOP_TIMEOUT) for it to end.  Status
# (also in KS_RC[ID]): kmemsnoop's exit status, 124 when it had to be killed.
ks_stop() {
	local id=$1 rc
	if [ -z "${KS_PID[$id]}" ]; then
		return "${KS_RC[$id]:-1}"
	fi
	kill -INT "${KS_PID[$id]}" 2>/dev/null
	wait_pid "${KS_PID[$id]}" "$KS_STOP_TIMEOUT"
	rc=$?
	KS_RC[$id]=$rc
	KS_PID[$id]=
	ks_final_misses "$id"
	return $rc
}

# ks_wait ID SECONDS: wait for kmemsnoop to end by itself (-d).
ks_wait() {
	local id=$1 rc
	wait_pid "${KS_PID[$id]}" "$2"
	rc=$?
	KS_RC[$id]=$rc
	KS_PID[$id]=
	ks_final_misses "$id"
	return $rc
}

# start_traced WL_ID KS_ID [KMEMSNOOP_ARGS...] -- WORKLOAD_ARGS...: starts
# the workload held at its start, then kmemsnoop -p on it; sets PID.  If
# either does not start, every test of the script FAILs and it ends.
start_traced() {
	local wl=$1 ks=$2 ks_args=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		ks_args+=("$1")
		shift
	done
	shift
	if ! wl_start "$wl" "$@"; then
		fail_rest "${TESTS[@]}" "the workload did not start: $(head -c 200 "$WORK/$wl.werr")"
		finish
	fi
	PID=${WL_PID[$wl]}
	if ! ks_start "$ks" -p "$PID" "${ks_args[@]}"; then
		fail_rest "${TESTS[@]}" "kmemsnoop ${ks_args[*]}: $(ks_start_fail_why "$ks")"
		finish
	fi
}

# ks_recursion_misses ID: the events the kernel did not give kmemsnoop's
# running BPF programs because one of them was already running on that CPU
# (an allocation in an interrupt during a program run): the sum of
# recursion_misses over its program fds (/proc/PID/fdinfo).  Empty when
# unknown (not running, or a kernel before 5.12).
ks_recursion_misses() {
	pid_recursion_misses "${KS_PID[$1]}"
}

pid_recursion_misses() {
	local pid=$1
	[ -n "$pid" ] && [ -d "/proc/$pid/fdinfo" ] || return 0
	awk 'FNR == 1 { id = "" } $1 == "prog_id:" { id = $2 }
	$1 == "recursion_misses:" && id != "" { m[id] = $2; found = 1 }
	END { if (found) { for (i in m) t += m[i]; print t + 0 } }' /proc/"$pid"/fdinfo/* 2>/dev/null
}

# ks_watch_misses ID: sample ks_recursion_misses of instance ID every
# 20 ms into $WORK/ID.misses while it runs (its programs, and their
# counters, go away when it exits).  ks_misses ID: the last value (0 when
# never read).
ks_watch_misses() {
	local id=$1 pid=${KS_PID[$1]}
	[ -n "$pid" ] || return 0
	(
		while [ -d "/proc/$pid/fdinfo" ]; do
			m=$(pid_recursion_misses "$pid")
			[ -n "$m" ] && echo "$m" >"$WORK/$id.misses.tmp" &&
				mv -f "$WORK/$id.misses.tmp" "$WORK/$id.misses"
			nap 0.02
		done
	) >/dev/null 2>&1 &
	BG_PIDS+=($!)
}

ks_misses() {
	local m
	m=$(ks_recursion_misses "$1")
	if [ -n "$m" ]; then
		echo "$m" >"$WORK/$1.misses"
	fi
	cat "$WORK/$1.misses" 2>/dev/null || echo 0
}

# ks_final_misses ID: once kmemsnoop ID has ended, the misses of its
# summary line ("kmemsnoop: N events missed: ...") replace the sampled
# value: the sampler can be too slow (in the test VMs by far) to see the
# last ones, e.g. a batch of RCU frees as the traced process exits; and
# where classic tracepoint programs run (7.x), it sums what their tp_btf
# neighbours skipped too, events the classic programs took.
ks_final_misses() {
	local m
	m=$(sed -n 's/^kmemsnoop: \([0-9]*\) events missed: .*/\1/p' "$WORK/$1.err" 2>/dev/null | tail -n1)
	if [ -n "$m" ]; then
		echo "$m" >"$WORK/$1.misses"
	elif [ -f "$WORK/$1.misses" ] && grep -q '^kmemsnoop: [0-9]* events written' "$WORK/$1.err" 2>/dev/null; then
		echo 0 >"$WORK/$1.misses" # a summary without the line: none
	fi
	return 0
}

ks_out() { echo "$WORK/$1.out"; }
ks_err() { echo "$WORK/$1.err"; }

# ks_summary ID: "EVENTS LOST BYTES" from the summary line on stderr;
# status 1 when there is no summary line.
ks_summary() {
	awk '
	/^kmemsnoop: [0-9]+ events written, [0-9]+ lost \([0-9]+ bytes\)$/ {
		b = $7; gsub(/[()]/, "", b); print $2, $5, b; found = 1
	}
	END { exit !found }' "$WORK/$1.err"
}

# ks_check_stop NAME ID: stop kmemsnoop ID and PASS/FAIL NAME on a clean
# end: exit status 0, a summary line with 0 lost (any number with
# KS_LOSS_OK=1, said), no line on stderr other than kmemsnoop's own.
# Status 0 when clean.
ks_check_stop() {
	local name=$1 id=$2 rc sum
	ks_stop "$id"
	rc=$?
	if [ $rc -ne 0 ]; then
		fail "$name" "kmemsnoop exited with status $rc after SIGINT" "$(ks_err "$id")"
		return 1
	fi
	if ! sum=$(ks_summary "$id"); then
		fail "$name" "no 'kmemsnoop: N events written, N lost (N bytes)' line on stderr" "$(ks_err "$id")"
		return 1
	fi
	set -- $sum
	if [ "$2" != 0 ] && [ "${KS_LOSS_OK:-0}" = 1 ]; then
		echo "# $name: $2 events lost (allowed here)"
	elif [ "$2" != 0 ]; then
		fail "$name" "kmemsnoop lost $2 events ($3 bytes)" "$(ks_err "$id")"
		return 1
	fi
	if grep -v '^kmemsnoop: ' "$(ks_err "$id")" | grep -q .; then
		fail "$name" "stderr has lines not starting with 'kmemsnoop: ': '$(grep -v '^kmemsnoop: ' "$(ks_err "$id")" | first_lines 2)'"
		return 1
	fi
	pass "$name"
}

# ---------------------------------------------------------------- workload

# pinned_workload CPU: a script that runs the workload on CPU only, from
# its first instruction (taskset), as WORKLOAD=PATH for wl_start; its path.
pinned_workload() {
	local path=$WORK/pinned$1
	printf '#!/bin/sh\nexec taskset -c %s "%s" "$@"\n' "$1" "$WORKLOAD" >"$path" &&
		chmod +x "$path" && echo "$path"
}

# wl_start ID ARGS...: start "workload --wait ARGS" with stdin on a FIFO
# and wait until it prints its pid (WL_PID[ID]).  It then blocks until
# wl_go.  Status 1 when it did not get there within 10 seconds.
wl_start() {
	local id=$1 fifo="$WORK/$1.fifo" fd end
	shift
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	# Read-write open: never blocks, and the workload never sees EOF
	# before we write (we hold a writer).
	exec {fd}<>"$fifo"
	WL_FD[$id]=$fd
	: >"$WORK/$id.wout" # as in ks_start: not a previous run's "pid" line
	"$WORKLOAD" --wait "$@" <"$fifo" >"$WORK/$id.wout" 2>"$WORK/$id.werr" {fd}>&- &
	WL_BG[$id]=$!
	WL_PID[$id]=
	WL_RC[$id]=
	end=$((SECONDS + 10))
	while [ $SECONDS -lt $end ]; do
		if file_has "$WORK/$id.wout" '^pid '; then
			WL_PID[$id]=$(awk '$1 == "pid" { print $2; exit }' "$WORK/$id.wout")
			return 0
		fi
		local st
		proc_state_into st "${WL_BG[$id]}"
		[ -z "$st" ] || [ "$st" = Z ] && break
		nap 0.02
	done
	return 1
}

# wl_field ID KEY: the value of the workload's "KEY N" output line.
wl_field() {
	awk -v k="$2" '$1 == k { print $2; exit }' "$WORK/$1.wout"
}

# wl_go ID [BYTE]: let the workload run (or release a msg-hold).
wl_go() {
	printf '%s' "${2:-g}" >&"${WL_FD[$1]}"
}

# wl_wait ID: wait for the workload to finish (WL_TIMEOUT); status is its
# exit status (124 on timeout).
wl_wait() {
	local id=$1 rc fd=${WL_FD[$1]}
	wait_pid "${WL_BG[$id]}" "$WL_TIMEOUT"
	rc=$?
	WL_RC[$id]=$rc
	WL_BG[$id]=
	[ -n "$fd" ] && exec {fd}>&-
	WL_FD[$id]=
	return $rc
}

# wl_run ID: wl_go then wl_wait.
wl_run() {
	wl_go "$1" && wl_wait "$1"
}

# wl_kill ID: end a workload now (SIGKILL) and reap it.
wl_kill() {
	local id=$1 fd=${WL_FD[$1]}
	if [ -n "${WL_BG[$id]}" ]; then
		kill -KILL "${WL_BG[$id]}" 2>/dev/null
		wait "${WL_BG[$id]}" 2>/dev/null
	fi
	WL_BG[$id]=
	[ -n "$fd" ] && exec {fd}>&-
	WL_FD[$id]=
}

# ---------------------------------------------------------------- oracle
#
# The kernel's own view of the same events: the six kmem tracepoints in a
# private tracefs instance (nothing global is changed), filtered on the
# workload's pids, irq-info off so that lines have kmemsnoop's layout.

ORACLE_BUF_KB=${ORACLE_BUF_KB:-16384}

# oracle_start ID PID...: trace events whose common_pid (the thread id) is
# one of PID.
oracle_start() {
	local id=$1 inst e filter="" p
	shift
	for p in "$@"; do
		filter="${filter:+$filter || }common_pid == $p"
	done
	oracle_setup "$id" || return 1
	inst=${ORACLE_DIR[$id]}
	for e in $(oracle_event_paths); do
		echo "$filter" >"$inst/events/$e/filter" || {
			ORACLE_ERR="cannot set filter '$filter' on $e"
			return 1
		}
	done
	oracle_enable "$id"
}

# oracle_start_follow ID PID: trace PID and the tasks it forks after this
# point (set_event_pid with the event-fork option).
oracle_start_follow() {
	local id=$1 inst
	oracle_setup "$id" || return 1
	inst=${ORACLE_DIR[$id]}
	echo 1 >"$inst/options/event-fork" &&
		echo "$2" >"$inst/set_event_pid" || {
		ORACLE_ERR="cannot set set_event_pid/event-fork"
		return 1
	}
	oracle_enable "$id"
}

oracle_setup() {
	local id=$1 inst="$TRACEFS/instances/kmemsnoop-test-$1-$$"
	ORACLE_ERR=
	[ -d "$inst" ] && rmdir "$inst" 2>/dev/null
	mkdir "$inst" 2>/dev/null || {
		ORACLE_ERR="cannot create tracefs instance $inst"
		return 1
	}
	ORACLE_DIR[$id]=$inst
	echo 0 >"$inst/tracing_on"
	echo "$ORACLE_BUF_KB" >"$inst/buffer_size_kb" || {
		ORACLE_ERR="cannot size the tracefs buffer"
		return 1
	}
	echo 0 >"$inst/options/irq-info" 2>/dev/null
	echo >"$inst/trace"
}

# oracle_event_paths: "group/event" of every event the oracle traces.
oracle_event_paths() {
	local e
	for e in $ORACLE_EVENTS; do echo "kmem/$e"; done
	for e in $ORACLE_MORE; do echo "$e"; done
}

oracle_enable() {
	local inst=${ORACLE_DIR[$1]} e
	for e in $(oracle_event_paths); do
		echo 1 >"$inst/events/$e/enable" || {
			ORACLE_ERR="cannot enable $e"
			return 1
		}
	done
	echo 1 >"$inst/tracing_on"
}

# oracle_stop ID: stop, save the trace in $WORK/ID.oracle, remove the
# instance.  Status 1 (ORACLE_ERR says why) when the instance lost any
# event: then its counts cannot be compared.  ORACLE_ALLOW_LOSS=1: keep
# what it has (to show that something happened at all).
oracle_stop() {
	local id=$1 inst=${ORACLE_DIR[$1]} f lost=0 v
	[ -n "$inst" ] || {
		ORACLE_ERR="no oracle $id"
		return 1
	}
	echo 0 >"$inst/tracing_on"
	cat "$inst/trace" >"$WORK/$id.oracle"
	for f in "$inst"/per_cpu/cpu*/stats; do
		for v in $(awk -F': *' '$1 == "overrun" || $1 == "commit overrun" || $1 == "dropped events" { print $2 }' "$f"); do
			[ "$v" = 0 ] || lost=1
		done
	done
	oracle_remove "$id"
	if [ $lost = 1 ] && [ "${ORACLE_ALLOW_LOSS:-0}" != 1 ]; then
		ORACLE_ERR="the tracefs instance overran (raise ORACLE_BUF_KB)"
		return 1
	fi
	# "# entries-in-buffer/entries-written: 82/82   #P:2"
	[ "${ORACLE_ALLOW_LOSS:-0}" = 1 ] && return 0
	if ! awk '/^# entries-in-buffer\/entries-written:/ {
			split($3, n, "/"); found = 1; if (n[1] != n[2]) exit 1
		}
		END { exit !found }' "$WORK/$id.oracle"; then
		ORACLE_ERR="the tracefs instance did not keep every entry written"
		return 1
	fi
}

oracle_remove() {
	local inst=${ORACLE_DIR[$1]} e
	[ -n "$inst" ] && [ -d "$inst" ] || {
		unset "ORACLE_DIR[$1]"
		return 0
	}
	echo 0 >"$inst/tracing_on" 2>/dev/null
	for e in $(oracle_event_paths); do
		echo 0 >"$inst/events/$e/enable" 2>/dev/null
	done
	rmdir "$inst" 2>/dev/null
	unset "ORACLE_DIR[$1]"
}

oracle_file() { echo "$WORK/$1.oracle"; }

# ---------------------------------------------------------------- parsing
#
# ev_table FILE: one tab-separated row per event line of kmemsnoop's text
# (or of the oracle's trace, which has the same layout without irq-info):
#   1 comm  2 tid  3 cpu  4 timestamp  5 event  6 call_site  7 ptr
#   8 bytes_req  9 bytes_alloc  10 gfp_flags  11 name  12 pfn  13 order
#   14 the body without ptr=/page=/base_addr= values (which differ between kmemsnoop's
#      real pointers and the kernel's hashed ones)  15 page
# Missing fields are "-".  Lines starting with "#" and blank lines are
# skipped; other lines that do not parse are printed as "BAD<tab>line".
# So that kmemsnoop's lines and the kernel's compare on every kernel:
# kmalloc_node and kmem_cache_alloc_node (before 6.1) become kmalloc and
# kmem_cache_alloc, as in kmemsnoop's text; a decimal pfn (older kernels'
# format) becomes hex; and once require_tracefs has read the kernel's
# formats, column 14 keeps only the keys the kernel prints for that event
# (node=-1 added where a kernel's kmalloc without node has none).

EV_AWK='
function parse(line,    head, m, tp, i) {
	if (!match(line, / [0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]: [a-z_]+: /))
		return 0
	head = substr(line, 1, RSTART - 1)
	m = substr(line, RSTART + 1, RLENGTH - 1)
	P_BODY = substr(line, RSTART + RLENGTH)
	i = index(m, ": ")
	P_TS = substr(m, 1, i - 1)
	P_EVENT = substr(m, i + 2)
	sub(/: $/, "", P_EVENT)
	if (!match(head, /\[[0-9]+\] *$/))
		return 0
	P_CPU = substr(head, RSTART + 1)
	sub(/\].*/, "", P_CPU)
	tp = substr(head, 1, RSTART - 1)
	sub(/ +$/, "", tp)
	sub(/^ +/, "", tp)
	if (!match(tp, /-[0-9]+$/))
		return 0
	P_TID = substr(tp, RSTART + 1)
	P_COMM = substr(tp, 1, RSTART - 1)
	return 1
}
# index() rather than a regex made of key: busybox awk compiles such a
# regex anew on every call, which made ev_table 10 times slower.
function fld(key,    s, i) {
	i = index(" " P_BODY, " " key "=")
	if (!i)
		return "-"
	s = substr(P_BODY, i + length(key) + 1)
	i = index(s, " ")
	if (i)
		s = substr(s, 1, i - 1)
	return s == "" ? "-" : s
}
function norm(    b, v) {
	b = P_BODY
	gsub(/ptr=[0-9a-fx]+/, "ptr=*", b)
	gsub(/base_addr=[0-9a-fx]+/, "base_addr=*", b)
	gsub(/page=[0-9a-fx()a-z]+/, "page=*", b)
	if (match(b, /pfn=[0-9]+( |$)/)) {
		v = substr(b, RSTART + 4, RLENGTH - 4)
		sub(/ $/, "", v)
		b = substr(b, 1, RSTART + 3) hex_pfn(v) substr(b, RSTART + 4 + length(v))
	}
	return fit(P_EVENT, b)
}
# A decimal pfn in hex; awk printf %x is exact below 2^31 only, so larger
# ones stay as they are (and then differ visibly).
function hex_pfn(v) {
	return v ~ /^[0-9]+$/ && v + 0 < 2147483648 ? sprintf("0x%x", v) : v
}
# fit(EVENT, BODY): only the keys KF (from -v kf) says the kernel prints.
function fit(ev, b,    n, parts, i, k, out, keep, hasnode) {
	if (!(ev in HASKF))
		return b
	n = split(b, parts, " ")
	out = ""
	for (i = 1; i <= n; i++) {
		if (index(parts[i], "=")) {
			k = parts[i]
			sub(/=.*/, "", k)
			keep = (ev ":" k) in KF
			if (k == "node")
				hasnode = 1
		}
		# a word without "=" belongs to the key before it (" [module]")
		if (keep)
			out = out (out == "" ? "" : " ") parts[i]
	}
	if ((ev == "kmalloc" || ev == "kmem_cache_alloc") && ((ev ":node") in KF) && !hasnode)
		out = out " node=-1"
	return out
}
BEGIN {
	n = split(kf, w, " ")
	for (i = 1; i <= n; i++) {
		KF[w[i]] = 1
		e = w[i]
		sub(/:.*/, "", e)
		HASKF[e] = 1
	}
}
'

ev_table() {
	awk -v kf="$KERNEL_FIELDS" "$EV_AWK"'
	/^#/ || /^[ \t]*$/ { next }
	# Objects of bulk calls: no kernel event to compare with (test_bulk).
	/: (kmem_cache_alloc_bulk|kmem_cache_free_bulk|kfree_bulk): / { next }
	{
		if (!parse($0)) { print "BAD\t" $0; next }
		sub(/_node$/, "", P_EVENT)
		print P_COMM "\t" P_TID "\t" P_CPU "\t" P_TS "\t" P_EVENT "\t" \
			fld("call_site") "\t" fld("ptr") "\t" fld("bytes_req") "\t" \
			fld("bytes_alloc") "\t" fld("gfp_flags") "\t" fld("name") "\t" \
			hex_pfn(fld("pfn")) "\t" fld("order") "\t" norm() "\t" fld("page")
	}' "$1"
}

# ev_bad_layout FILE: print the event lines that do not follow
#   printf("%16s-%-7d [%03d] %5llu.%06llu: %s: %s\n", ...)
# with a known event name and its body fields in the kernel's order; name=
# where this kernel lets kmemsnoop know the cache, and only there.
ev_bad_layout() {
	awk -v an="$CACHE_ALLOC_NAMES" -v fn="$CACHE_FREE_NAMES" '
	/^#/ || /^$/ { next }
	/: (kmem_cache_alloc_bulk|kmem_cache_free_bulk|kfree_bulk): / { next }
	{
		ok = 1
		if (length($0) < 40) ok = 0
		# comm is right-aligned in 16 columns, then "-", then the tid
		# left-aligned in 7, then " [", three-digit cpu, "] ".
		if (substr($0, 17, 1) != "-") ok = 0
		if (substr($0, 18, 7) !~ /^[0-9]+ *$/) ok = 0
		if (substr($0, 25, 2) != " [") ok = 0
		if (substr($0, 27, 3) !~ /^[0-9][0-9][0-9]$/) ok = 0
		if (substr($0, 30, 2) != "] ") ok = 0
		rest = substr($0, 32)
		if (rest !~ /^ *[0-9]+\.[0-9][0-9][0-9][0-9][0-9][0-9]: /) ok = 0
		sub(/^ *[0-9]+\.[0-9]+: /, "", rest)
		hex = "[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]"
		ptr = hex hex
		cs = "call_site=([^ ]+\\+0x[0-9a-f]+\\/0x[0-9a-f]+( \\[[^ ]+\\])?|0x[0-9a-f]+)"
		gfp = "gfp_flags=[A-Z0-9_|]+|gfp_flags=none|gfp_flags=0x[0-9a-f]+"
		tail = " node=-?[0-9]+ accounted=(true|false)$"
		if (rest ~ /^kmalloc: /) {
			if (rest !~ "^kmalloc: " cs " ptr=" ptr " bytes_req=[0-9]+ bytes_alloc=[0-9]+ (" gfp ")" tail) ok = 0
		} else if (rest ~ /^kmem_cache_alloc: /) {
			if (rest !~ "^kmem_cache_alloc: " cs " ptr=" ptr (an ? " name=[^ ]*" : "") " bytes_req=[0-9]+ bytes_alloc=[0-9]+ (" gfp ")" tail) ok = 0
		} else if (rest ~ /^kfree: /) {
			if (rest !~ "^kfree: " cs " ptr=" ptr "$") ok = 0
		} else if (rest ~ /^kmem_cache_free: /) {
			if (rest !~ "^kmem_cache_free: " cs " ptr=" ptr (fn ? " name=[^ ]*" : "") "$") ok = 0
		} else if (rest ~ /^mm_page_alloc: /) {
			if (rest !~ "^mm_page_alloc: page=" ptr " pfn=0x[0-9a-f]+ order=[0-9]+ migratetype=-?[0-9]+ (" gfp ")$") ok = 0
		} else if (rest ~ /^mm_page_free: /) {
			if (rest !~ "^mm_page_free: page=" ptr " pfn=0x[0-9a-f]+ order=[0-9]+$") ok = 0
		} else ok = 0
		if (!ok) print
	}' "$1"
}

# ev_lines FILE: the number of event lines of a trace (what
# "ev_count <(ev_table FILE) 1" counts), by grep: parsing 100k lines with
# busybox awk under emulation takes a minute.
ev_lines() {
	grep -cv -e '^#' -e '^[[:space:]]*$' "$1"
}

# ev_count TABLE AWK-CONDITION: number of rows of an ev_table output
# matching the condition (on $1..$15, -F'\t'), e.g.
#   ev_count "$t" '$5 == "kmalloc" && $6 ~ /^load_msg\+/'
ev_count() {
	awk -F'\t' "$2 { n++ } END { print n + 0 }" "$1"
}

# ev_keys TABLE AWK-CONDITION EXPR: the sorted multiset of EXPR over the
# rows matching the condition, one per line.
ev_keys() {
	awk -F'\t' -v OFS='\t' "$2 { print $3 }" "$1" | LC_ALL=C sort
}

# KMALLOC_CLASSES: the kernel's kmalloc size classes, from its kmalloc-N
# (or -Nk) caches (/sys/kernel/slab with SLUB, else /proc/slabinfo): they differ
# between architectures (arm64 before 6.5 has none below 128 bytes, and no
# 96 or 192) and with the page size.  x86's with 4 KiB pages when neither
# can be read.
kmalloc_classes() {
	{
		ls /sys/kernel/slab 2>/dev/null
		awk '{ print $1 }' /proc/slabinfo 2>/dev/null
	} | awk '/^kmalloc-[0-9]+k?$/ { n = substr($0, 9); print (n ~ /k$/) ? n * 1024 : n }' |
		sort -nu | tr '\n' ' '
}
KMALLOC_CLASSES=$(kmalloc_classes)
[ -n "$KMALLOC_CLASSES" ] || KMALLOC_CLASSES="8 16 32 64 96 128 192 256 512 1024 2048 4096 8192"

# kmalloc_class BYTES: the kmalloc size class serving a request of BYTES
# (0 past the largest: such requests go to the page allocator).
kmalloc_class() {
	local c
	for c in $KMALLOC_CLASSES; do
		if [ "$1" -le "$c" ]; then
			echo "$c"
			return
		fi
	done
	echo 0
}

# msg_pieces SIZE: "bytes_req<TAB>bytes_alloc" of each kmalloc of one
# message of SIZE bytes (msg_msg header 48 bytes, a page less the header
# of text in the first piece, then msg_msgseg pieces of 8 + up to a page
# less 8 bytes).
msg_pieces() {
	local size=$1 first rest seg
	first=$size
	[ "$first" -gt $((PAGE_SIZE - 48)) ] && first=$((PAGE_SIZE - 48))
	echo "$((48 + first))	$(kmalloc_class $((48 + first)))"
	rest=$((size - first))
	while [ "$rest" -gt 0 ]; do
		seg=$rest
		[ "$seg" -gt $((PAGE_SIZE - 8)) ] && seg=$((PAGE_SIZE - 8))
		echo "$((8 + seg))	$(kmalloc_class $((8 + seg)))"
		rest=$((rest - seg))
	done
}

# online_cpus: the online CPU numbers, one per line.
online_cpus() {
	local r a b
	for r in $(tr ',' ' ' </sys/devices/system/cpu/online); do
		a=${r%-*}
		b=${r#*-}
		seq "$a" "$b"
	done
}

# ms_minus A B: the lines of A that B does not have, repeats counted (what
# "comm -23 A B" prints for sorted files).  awk rather than comm: the test
# VMs' busybox has no comm, and a missing tool must not read as "equal".
# Status 2 when either file cannot be read.
ms_minus() {
	[ -r "$1" ] && [ -r "$2" ] || return 2
	awk -v b="$2" 'FILENAME == b { n[$0]++; next } n[$0] > 0 { n[$0]--; next } { print }' "$2" "$1"
}

# multiset_diff A B: the lines of A missing from B and of B missing from A,
# prefixed with "<" and ">"; status 0 when equal, 1 when not, 2 when a
# file cannot be read.
multiset_diff() {
	local out
	[ -r "$1" ] && [ -r "$2" ] || {
		echo "cannot read $1 or $2"
		return 2
	}
	out=$(ms_minus "$1" "$2" | sed 's/^/< /'; ms_minus "$2" "$1" | sed 's/^/> /')
	if [ -n "$out" ]; then
		echo "$out"
		return 1
	fi
}

# compare_to_oracle NAME ORACLE_KEYS KS_KEYS MISSES WHAT: PASS NAME when
# the two sorted multisets are equal, or when kmemsnoop's is the oracle's
# less at most MISSES lines (events the kernel never handed to kmemsnoop's
# programs: see ks_recursion_misses; a "# " note says so).  Else FAIL NAME
# with the differences.
compare_to_oracle() {
	local name=$1 o=$2 k=$3 misses=${4:-0} what=$5 extra missing
	if [ ! -r "$o" ] || [ ! -r "$k" ]; then
		fail "$name" "cannot read $o or $k"
		return
	fi
	extra=$(ms_minus "$k" "$o" | wc -l)
	missing=$(ms_minus "$o" "$k" | wc -l)
	if [ "$extra" -eq 0 ] && [ "$missing" -eq 0 ]; then
		pass "$name"
	elif [ "$extra" -eq 0 ] && [ "$missing" -le "$misses" ]; then
		echo "# $name: $missing event(s) missing from kmemsnoop, within the $misses the kernel skipped (BPF recursion_misses): $(ms_minus "$o" "$k" | first_lines 3)"
		pass "$name"
	else
		fail "$name" "$what differ ($missing only in the kernel's trace, $extra only in kmemsnoop's; recursion misses $misses): $( (ms_minus "$o" "$k" | sed 's/^/< /'; ms_minus "$k" "$o" | sed 's/^/> /') | uniq -c | first_lines 4)"
	fi
}

# first_lines N: at most N lines of stdin joined with " | " (for reasons).
first_lines() {
	head -n "$1" | tr '\n\t' '| ' | sed 's/|$//'
}

# wait_for FILE ERE SECONDS: until a line of FILE (a small one: file_has)
# matches ERE (status 1 when SECONDS pass first).
wait_for() {
	local end=$((SECONDS + $3))
	while ! file_has "$1" "$2"; do
		[ $SECONDS -ge $end ] && return 1
		nap 0.05
	done
}

# wl_traced ID WL_ARGS KS_ARGS...: workload wID started with WL_ARGS (one
# string, split on blanks) and waiting, traced by kmemsnoop kID with -p and
# KS_ARGS.  Status 1 with $WHY set (the workload killed).
wl_traced() {
	local id=$1 args=$2
	shift 2
	WHY=
	# shellcheck disable=SC2086
	if ! wl_start "w$id" $args; then
		WHY="the workload did not start: $(head -c 200 "$WORK/w$id.werr")"
		return 1
	fi
	if ! ks_start "k$id" -p "${WL_PID[w$id]}" "$@"; then
		WHY="kmemsnoop $*: $(ks_start_fail_why "k$id")"
		wl_kill "w$id"
		return 1
	fi
}

# msg_hold ID SIZE COUNT KS_ARGS...: a msg-hold workload wID (COUNT SysV
# messages of SIZE bytes) traced by kmemsnoop kID with -p and KS_ARGS;
# returns when the messages are held.  Status 1 with $WHY set.  wl_go wID
# then lets it receive them and remove the queue.
msg_hold() {
	local id=$1 size=$2 count=$3
	shift 3
	wl_hold "$id" "msg-hold $size $count" "$@"
}

# wl_hold ID "COMMAND ARGS" [KS_ARGS...]: workload wID running one of the
# *-hold commands, traced by kmemsnoop kID with -p and KS_ARGS; returns once
# it says "held".  Status 1 with $WHY set.
wl_hold() {
	local id=$1 cmd=$2
	shift 2
	wl_traced "$id" "$cmd" "$@" || return 1
	wl_go "w$id"
	if ! wait_for "$WORK/w$id.wout" '^held$' 20; then
		WHY="the workload ($cmd) did not get to hold: $(head -c 200 "$WORK/w$id.werr")"
		return 1
	fi
}

# wl_release ID [SECONDS]: lets a held workload close what it holds
# ("closed") and end, then waits for kmemsnoop kID (-p) to end with it (20 s
# unless SECONDS).  Status: kmemsnoop's.
wl_release() {
	wl_go "w$1"
	wait_for "$WORK/w$1.wout" '^closed$' 20
	wl_go "w$1"
	wl_wait "w$1"
	ks_wait "k$1" "${2:-20}"
}

# --------------------------------------------------------------- BPF objects

BPFTOOL=${BPFTOOL:-$(command -v bpftool || echo /usr/sbin/bpftool)}

# bpf_ids PID: "prog N", "map N" and "link N" lines for the BPF objects
# PID holds open (fdinfo of its fds), sorted and unique: its own only,
# whatever other BPF users run at the same time.
bpf_ids() {
	awk '$1 == "prog_id:" { print "prog", $2 } $1 == "map_id:" { print "map", $2 }
	$1 == "link_id:" { print "link", $2 }' /proc/"$1"/fdinfo/* 2>/dev/null | sort -u
}

# bpf_id_exists KIND ID: status 0 while the kernel still has the object.
bpf_id_exists() {
	"$BPFTOOL" "$1" show id "$2" >/dev/null 2>&1
}

# links_of_progs IDS_FILE: the "link N" of every link on the system that
# holds one of the programs listed ("prog N" lines) in IDS_FILE.
links_of_progs() {
	"$BPFTOOL" -j link list 2>/dev/null | grep -o '"id":[0-9]*,[^}]*"prog_id":[0-9]*' |
		sed 's/^"id":\([0-9]*\),.*"prog_id":\([0-9]*\)$/\1 \2/' |
		awk -v f="$1" 'BEGIN { while ((getline l < f) > 0) { split(l, w, " "); if (w[1] == "prog") p[w[2]] = 1 } }
		($2 in p) { print "link", $1 }'
}

# bpf_still_there IDS_FILE SECONDS: the ids of IDS_FILE the kernel still
# has, and the links still holding its programs, waiting up to SECONDS for
# the kernel's deferred release (RCU, work queues) of what a process held;
# status 1 when none is left.
bpf_still_there() {
	local ids=$1 left end=$((SECONDS + $2)) kind id
	while :; do
		left=$(while read -r kind id; do
			bpf_id_exists "$kind" "$id" && echo "$kind $id"
		done <"$ids"; links_of_progs "$ids")
		[ -z "$left" ] || [ $SECONDS -ge $end ] && break
		nap 0.1
	done
	echo "$left" | sort -u | grep .
}
