#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/fresh-machine.sh [REPO]: README.md's "Installing" on a machine that
# really is fresh.  Root, on the host; .ci/run runs it after make test.
#
# A Debian 12 (bookworm) root made with debootstrap --variant=minbase,
# entered with chroot, with the host's /proc, /sys, /sys/fs/bpf (bound
# when the host has one mounted, else a bpf file system of its own) and
# /dev bound in, so that BPF programs load into the host's kernel from
# inside it.  In it, what the README tells a user to do, as root (there is
# no sudo in it):
#   apt-get update; apt-get install make git
#                    "A fresh machine needs only make (and git to clone)"
#   git clone        of REPO (default: the checkout this script is in), by
#                    file:// URL, without --recursive, as a user would clone
#   make run ARGS="-d 3"
#                    which must install the build dependencies itself (make
#                    deps: tools/install-deps.sh build), build and trace,
#                    while a loop of `cat /etc/passwd` in the root allocates.
# git clone takes REPO's HEAD commit: uncommitted changes in REPO are not
# seen.  REPO must have a .git directory of its own (or be a bare
# repository); it is bound into the root read-only.
#
# Results:
#   fresh.root          the base root is ready (the cache, or debootstrap)
#                       and mounted
#   fresh.make_git      apt-get update and apt-get install -y make git
#   fresh.clone         git clone: the clone's HEAD is REPO's HEAD commit
#   fresh.run           make run ARGS="-d 3" exits 0
#   fresh.run.deps      make run installed the build dependencies itself
#                       ("install-deps: installing ...")
#   fresh.run.trace     kmemsnoop printed kmalloc: or kmem_cache_alloc: lines
#   fresh.run.workload  ... and lines of the loop's cat processes
#   fresh.run.summary   ... and its summary ("kmemsnoop: N events written,
#                       N lost ...") on stderr
#   fresh.cleanup       nothing left mounted or running in the root
# Each step prints how long it took; lines checked are printed.  Ends with
# "N passed, N failed, N skipped"; exit status 1 when anything failed.
# SKIPs when not root, or when debootstrap is needed (no cached root yet)
# but not installed (tools/install-deps.sh test installs it).
#
# The mirror is the machine's own: the first URIs: of
# /etc/apt/sources.list.d/debian.sources, else the first deb line of
# /etc/apt/sources.list.  A host of the same release lends the root its
# apt sources (security updates included); otherwise the root gets
# "deb MIRROR bookworm main".  The host's /etc/resolv.conf is copied in.
# apt-get runs only inside the root: the host's packages are not touched.
#
# The debootstrapped base is cached as a tar file (without apt sources) and
# unpacked afresh on every run: nothing of a run is left for the next.  The
# first run takes a few minutes more than the next ones.
#
# Environment:
#   FRESH_CACHE    where the base is kept (/var/cache/kmemsnoop)
#   FRESH_REFRESH  1: debootstrap again even when a base is cached
#   FRESH_WORKDIR  the parent of the run's work directory (/var/tmp): room
#                  for about 1.5 GB (the root, the build dependencies)
#   FRESH_TIMEOUT  seconds the whole may take (900); each step has a bound
#                  of its own within that
#   FRESH_KEEP     1: keep the work directory (unmounted) for a look
#   FRESH_APT      where the host's apt sources are read (/etc/apt)
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
# The base root, its cache, the mounts and the cleanup: tests/debroot.sh
# (tests/package.sh uses them too).
# shellcheck source=tests/debroot.sh
. "$TOP/tests/debroot.sh"
# shellcheck source=tests/results.sh
. "$TOP/tests/results.sh"
REPO=${1:-$TOP}
SUITE=bookworm
CACHE_DIR=${FRESH_CACHE:-/var/cache/kmemsnoop}
WORK_PARENT=${FRESH_WORKDIR:-/var/tmp}
APT_DIR=${FRESH_APT:-/etc/apt}
DEADLINE=$((SECONDS + ${FRESH_TIMEOUT:-900}))
TRACE_SECONDS=3
# A fresh root login's PATH, and nothing else of this environment.
ROOT_ENV=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

W= # the work directory
STEP_PID= # the timeout of the step under way
R= # the root in it

say() { echo "fresh-machine: $*"; }
finish() {
	cleanup
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	[ "$FAILED" -eq 0 ]
	exit $?
}

# step NAME CAP CMD...: debroot_timed_step (tests/debroot.sh), its
# deadline FRESH_TIMEOUT.
step() { DEBROOT_DEADLINE_NAME=FRESH_TIMEOUT debroot_timed_step "$@"; }

# "${INROOT[@]}" CMD...: CMD as root in the root, with a login's bare
# environment (an array, not a function: step runs it under timeout).
INROOT=()

# ---------------------------------------------------------------- cleanup

CLEANED=0
cleanup() {
	local left
	[ "$CLEANED" = 1 ] && return 0
	CLEANED=1
	[ -n "$W" ] || return 0
	# An interrupted step: timeout passes the signal on (and kills after
	# 10 s).
	if [ -n "$STEP_PID" ]; then
		kill -TERM "$STEP_PID" 2>/dev/null
		for _ in $(seq 15); do
			kill -0 "$STEP_PID" 2>/dev/null || break
			sleep 1
		done
	fi
	if ! left=$(debroot_cleanup "$W" "$R" "${FRESH_KEEP:-0}"); then
		[ "$REPORT_CLEANUP" = 1 ] && fail fresh.cleanup "left behind: $left"
		echo "fresh-machine: not removing $W (still in use)" >&2
		return 0
	fi
	[ "$REPORT_CLEANUP" = 1 ] && pass fresh.cleanup
	[ "${FRESH_KEEP:-0}" = 1 ] && say "kept $W"
	return 0
}
REPORT_CLEANUP=0
trap cleanup EXIT
trap 'say interrupted; exit 130' INT
trap 'say interrupted; exit 143' TERM

# ---------------------------------------------------------------- preconditions

if [ "$(id -u)" != 0 ]; then
	skip fresh-machine "needs root (debootstrap, chroot, mounts, BPF)"
	finish
fi
if [ -d "$REPO/.git" ]; then
	:
elif [ -f "$REPO/HEAD" ] && [ -d "$REPO/objects" ]; then
	:
else
	fail fresh.root "$REPO: not a checkout with a .git directory of its own, nor a bare repository"
	finish
fi
REPO=$(cd "$REPO" && pwd -P)

# The mirror, from the machine's own apt sources.
if ! debroot_mirror >/dev/null; then
	fail fresh.root "no Debian mirror in this machine's apt sources ($APT_DIR/sources.list.d/debian.sources, $APT_DIR/sources.list)"
	finish
fi
ARCH=$DEBROOT_ARCH
if debroot_need_debootstrap && ! command -v debootstrap >/dev/null; then
	skip fresh-machine "debootstrap is not installed (apt-get install debootstrap; tools/install-deps.sh test installs it)"
	finish
fi

mkdir -p "$WORK_PARENT" "$CACHE_DIR" || {
	fail fresh.root "cannot create $WORK_PARENT or $CACHE_DIR"
	finish
}
W=$(mktemp -d "$WORK_PARENT/kmemsnoop-fresh.XXXXXX") || {
	fail fresh.root "cannot create a work directory under $WORK_PARENT"
	finish
}
W=$(cd "$W" && pwd -P)
R=$W/root
mkdir "$R"
INROOT=(chroot "$R" /usr/bin/env -i "${ROOT_ENV[@]}")
REPORT_CLEANUP=1
say "repository $REPO (its HEAD commit: uncommitted changes are not seen), $SUITE/$ARCH root in $R"

# ---------------------------------------------------------------- the base root

DEBROOT_STEP=step
DEBROOT_LOCK_WAIT=$((DEADLINE - SECONDS))
debroot_base "$R" 2>"$W/base.err" ||
	fail_rest "$(cat "$W/base.err")" fresh.root "$W/debootstrap.log"
debroot_apt "$R" || fail_rest "cannot write the root's apt sources" fresh.root

# The mounts: BPF programs load into the host's kernel from the root.
# Each bind is made a slave, so that nothing mounted or unmounted under it
# reaches the host's own tree.
mount_root() {
	debroot_mount "$R" &&
		mkdir -p "$R/mnt/repo" &&
		mount --bind "$REPO" "$R/mnt/repo" && mount --make-rslave "$R/mnt/repo" &&
		mount -o remount,bind,ro "$R/mnt/repo"
}
if ! mount_root >"$W/mounts.log" 2>&1; then
	fail_rest "cannot mount /proc, /sys, /sys/fs/bpf, /dev or the repository in the root" \
		fresh.root "$W/mounts.log"
fi
if ! "${INROOT[@]}" /bin/true; then
	fail_rest "cannot chroot into $R" fresh.root
fi
pass fresh.root

# ---------------------------------------------------------------- what the README says

# "A fresh machine needs only make (and git to clone)": what a user types
# to get them (apt-get, answering yes; recommends as configured).
if ! step make_git 600 "${INROOT[@]}" /bin/sh -c \
	'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y make git'; then
	fail_rest "apt-get update; apt-get install make git failed" fresh.make_git "$W/make_git.log"
fi
pass fresh.make_git

# The clone, as a user's: no --recursive (the submodules stay empty, and
# the build takes the system's libbpf and bpftool).  A repository owned
# by someone else needs git's safe.directory (a clone by URL does not).
SAFE=()
[ "$(stat -c %u "$REPO")" = 0 ] || SAFE=(-c safe.directory='*')
REPO_HEAD=$(git -C "$REPO" rev-parse HEAD 2>/dev/null)
if ! step clone 300 "${INROOT[@]}" git "${SAFE[@]}" clone file:///mnt/repo /root/kmemsnoop; then
	fail_rest "git clone failed" fresh.clone "$W/clone.log"
fi
# Others may commit to REPO meanwhile: its HEAD before or after the clone.
REPO_HEAD_AFTER=$(git -C "$REPO" rev-parse HEAD 2>/dev/null)
CLONE_HEAD=$("${INROOT[@]}" git -C /root/kmemsnoop rev-parse HEAD 2>/dev/null)
say "cloned $CLONE_HEAD"
if [ -z "$CLONE_HEAD" ]; then
	fail_rest "the clone has no HEAD commit" fresh.clone
elif [ -n "$REPO_HEAD" ] && [ "$CLONE_HEAD" != "$REPO_HEAD" ] && [ "$CLONE_HEAD" != "$REPO_HEAD_AFTER" ]; then
	fail fresh.clone "the clone's HEAD is $CLONE_HEAD, the repository's ${REPO_HEAD_AFTER:-?}"
else
	pass fresh.clone
fi

# make run, as root, while a loop in the root allocates (stopped when make
# run ends).  Its stdout and stderr apart: the trace, then the summary.
RUN_OUT=$R/root/run.out
RUN_ERR=$R/root/run.err
# shellcheck disable=SC2016
step run 900 "${INROOT[@]}" /bin/bash -c '
	cd /root/kmemsnoop || exit 1
	( while [ ! -e /tmp/fresh-stop ]; do cat /etc/passwd >/dev/null; sleep 0.1; done ) &
	make run ARGS="-d '"$TRACE_SECONDS"'" >/root/run.out 2>/root/run.err
	rc=$?
	touch /tmp/fresh-stop
	wait
	exit $rc'
RC=$?
if [ "$RC" -eq 0 ]; then
	pass fresh.run
else
	fail fresh.run "make run ARGS=\"-d $TRACE_SECONDS\" exited $RC" "$RUN_ERR"
fi
if [ ! -f "$RUN_OUT" ]; then
	fail_rest "make run left no output" fresh.run.deps fresh.run.trace fresh.run.workload \
		fresh.run.summary
fi
# The logs once: after a failed make run, only with fresh.run.
LOG=$RUN_ERR
[ "$RC" -eq 0 ] || LOG=
say "make run wrote $(wc -l <"$RUN_OUT") lines ($(du -h "$RUN_OUT" | cut -f1)) on stdout, $(wc -l <"$RUN_ERR") on stderr"

line=$(grep -m1 '^install-deps: installing' "$RUN_OUT")
if [ -n "$line" ]; then
	say "checked: ${line:0:400}"
	pass fresh.run.deps
else
	fail fresh.run.deps "no \"install-deps: installing\" line: make run did not install the build dependencies"
fi
line=$(grep -m1 '^kmemsnoop: using' "$RUN_OUT") && say "checked: $line"

EV=' (kmalloc|kmem_cache_alloc): call_site='
n=$(grep -cE "$EV" "$RUN_OUT")
if [ "$n" -gt 0 ]; then
	say "checked: $n kmalloc:/kmem_cache_alloc: lines, the first: $(grep -m1 -E "$EV" "$RUN_OUT")"
	pass fresh.run.trace
else
	fail fresh.run.trace "no kmalloc: or kmem_cache_alloc: line on stdout" "$LOG"
fi
WL='^ *cat-[0-9]+ +\[[0-9]+\] +[0-9.]+: [a-z_]+: '
n=$(grep -cE "$WL" "$RUN_OUT")
if [ "$n" -gt 0 ]; then
	say "checked: $n lines of the loop's cat, the first: $(grep -m1 -E "$WL" "$RUN_OUT")"
	pass fresh.run.workload
else
	fail fresh.run.workload "no event line of the loop's cat processes"
fi
line=$(grep -m1 -E '^kmemsnoop: [0-9]+ events written, [0-9]+ lost' "$RUN_ERR")
if [ -n "$line" ]; then
	say "checked: $line"
	pass fresh.run.summary
else
	fail fresh.run.summary "no \"kmemsnoop: N events written, N lost\" summary on stderr" "$LOG"
fi

finish
