# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/debroot.sh: a fresh Debian root to chroot into, with the host's
# kernel interfaces bound in, for the tests that need a machine with
# nothing installed (tests/fresh-machine.sh, tests/package.sh): they share
# one cached debootstrap, its lock, the mounts and the cleanup.  Sourced by
# bash scripts run as root:
#
#   . "$(dirname "$0")/debroot.sh"
#   debroot_mirror              the machine's Debian mirror, on stdout
#   debroot_base ROOT           ROOT (an empty folder) gets the base root:
#                               the cached tar unpacked, or debootstrap
#                               --variant=minbase, then cached
#   debroot_apt ROOT            the machine's apt sources and resolver in ROOT
#   debroot_mount ROOT          /proc, /sys, /sys/fs/bpf and /dev (with
#                               /dev/pts) bound in: BPF programs load into
#                               the host's kernel from the root
#   debroot_cleanup WORK ROOT [KEEP]
#                               kills the processes whose root is ROOT,
#                               unmounts everything under WORK and removes
#                               WORK (not when KEEP is 1); status 1, and
#                               what is left on stdout, when something
#                               could not be (WORK is then not removed)
#
# debroot_base runs its commands (tar, debootstrap) through the function
# named by DEBROOT_STEP, called as "$DEBROOT_STEP NAME SECONDS CMD...":
# the caller's, with its own logging and deadline, or debroot_step below
# (timeout, output in $DEBROOT_LOGDIR/NAME.log).  It says what it does on
# stdout.  Status 1 with a message on stderr when it fails.
#
# The mirror is the machine's own: the first URIs: of
# $FRESH_APT/sources.list.d/debian.sources, else the first deb line of
# $FRESH_APT/sources.list.  A host of the same release lends the root its
# apt sources (security updates included); otherwise the root gets
# "deb MIRROR bookworm main".
#
# Environment (tests/fresh-machine.sh's names):
#   FRESH_CACHE    where the base is kept (/var/cache/kmemsnoop): a tar of
#                  the debootstrapped root, less the downloaded packages,
#                  the package lists, debootstrap's log and the apt sources
#   FRESH_REFRESH  1: debootstrap again even when a base is cached
#   FRESH_APT      where the host's apt sources are read (/etc/apt)

DEBROOT_SUITE=bookworm
DEBROOT_CACHE_DIR=${FRESH_CACHE:-/var/cache/kmemsnoop}
DEBROOT_APT_DIR=${FRESH_APT:-/etc/apt}
DEBROOT_ARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
DEBROOT_CACHE=$DEBROOT_CACHE_DIR/fresh-root-$DEBROOT_SUITE-$DEBROOT_ARCH.tar
DEBROOT_STEP=${DEBROOT_STEP:-debroot_step}
DEBROOT_LOGDIR=${DEBROOT_LOGDIR:-/tmp}
# How long one waits for another run that is making the cache.
DEBROOT_LOCK_WAIT=${DEBROOT_LOCK_WAIT:-900}

# debroot_step NAME SECONDS CMD...: CMD under timeout, its output in
# $DEBROOT_LOGDIR/NAME.log; status CMD's, 124 on timeout.
debroot_step() {
	local name=$1 cap=$2
	shift 2
	timeout -k 10 "$cap" "$@" >"$DEBROOT_LOGDIR/$name.log" 2>&1 </dev/null
}

# debroot_timed_step NAME CAP CMD...: CMD under timeout (CAP seconds,
# less if the caller's DEADLINE, in $SECONDS, is nearer), its output in
# $W/NAME.log; says (the caller's say) the time taken.  STEP_PID holds
# the timeout's pid meanwhile, for the caller's cleanup.  Status: CMD's,
# 124 on timeout.  DEBROOT_DEADLINE_NAME names the deadline's setting.
debroot_timed_step() {
	local name=$1 cap=$2 left t0 rc
	shift 2
	left=$((DEADLINE - SECONDS))
	[ "$left" -lt "$cap" ] && cap=$left
	if [ "$cap" -le 0 ]; then
		say "$name: no time left (${DEBROOT_DEADLINE_NAME:-the deadline})"
		return 124
	fi
	t0=$SECONDS
	# In the background, so that a signal to this script ends the wait
	# (and cleanup the step) at once.
	timeout -k 10 "$cap" "$@" >"$W/$name.log" 2>&1 </dev/null &
	STEP_PID=$!
	wait "$STEP_PID"
	rc=$?
	STEP_PID=
	case $rc in
	0) say "$name took $((SECONDS - t0))s" ;;
	124) say "$name took $((SECONDS - t0))s (timed out after ${cap}s)" ;;
	*) say "$name took $((SECONDS - t0))s (exit $rc)" ;;
	esac
	return "$rc"
}

debroot_mirror() {
	local m=
	[ -r "$DEBROOT_APT_DIR/sources.list.d/debian.sources" ] &&
		m=$(awk '/^URIs:/ { print $2; exit }' "$DEBROOT_APT_DIR/sources.list.d/debian.sources")
	[ -z "$m" ] && [ -r "$DEBROOT_APT_DIR/sources.list" ] &&
		m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z+]+:\/\//) { print $i; exit } }' \
			"$DEBROOT_APT_DIR/sources.list")
	[ -n "$m" ] || return 1
	echo "$m"
}

# debroot_need_debootstrap: status 0 when debroot_base would debootstrap.
debroot_need_debootstrap() {
	[ ! -s "$DEBROOT_CACHE" ] || [ "${FRESH_REFRESH:-0}" = 1 ]
}

debroot_base() {
	local root=$1 lock_fd mirror rc=0
	local keyring=()
	mkdir -p "$DEBROOT_CACHE_DIR" || return 1
	# One run at a time makes the cache; the others wait for it.
	exec {lock_fd}>"$DEBROOT_CACHE_DIR/fresh-root.lock"
	if ! flock -w "$DEBROOT_LOCK_WAIT" "$lock_fd"; then
		echo "debroot: another run held $DEBROOT_CACHE_DIR/fresh-root.lock too long" >&2
		exec {lock_fd}>&-
		return 1
	fi
	if ! debroot_need_debootstrap; then
		echo "debroot: base root cached: $DEBROOT_CACHE ($(du -h "$DEBROOT_CACHE" | cut -f1))"
		if ! "$DEBROOT_STEP" unpack 300 tar -C "$root" --numeric-owner --xattrs --xattrs-include='*' \
			-xpf "$DEBROOT_CACHE"; then
			rm -f "$DEBROOT_CACHE"
			echo "debroot: cannot unpack $DEBROOT_CACHE (removed: the next run debootstraps afresh)" >&2
			rc=1
		fi
	elif ! mirror=$(debroot_mirror); then
		echo "debroot: no Debian mirror in this machine's apt sources ($DEBROOT_APT_DIR)" >&2
		rc=1
	else
		echo "debroot: debootstrap --variant=minbase $DEBROOT_SUITE from the machine's mirror"
		[ -r /usr/share/keyrings/debian-archive-keyring.gpg ] &&
			keyring=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
		if ! "$DEBROOT_STEP" debootstrap 600 debootstrap --variant=minbase --arch="$DEBROOT_ARCH" \
			"${keyring[@]}" "$DEBROOT_SUITE" "$root" "$mirror"; then
			echo "debroot: debootstrap failed" >&2
			rc=1
		else
			# Cached as debootstrap left it, less the downloaded packages,
			# the package lists, its log and the apt sources (each run gets
			# the machine's own, debroot_apt): like a container or cloud
			# image, apt-get update comes first.
			rm -f "$root"/var/cache/apt/archives/*.deb "$root/etc/apt/sources.list" \
				"$root/var/log/bootstrap.log"
			find "$root/var/lib/apt/lists" -maxdepth 1 -type f -delete
			if "$DEBROOT_STEP" cache 300 tar -C "$root" --numeric-owner --xattrs \
				--xattrs-include='*' -cf "$DEBROOT_CACHE.tmp.$$" . &&
				mv "$DEBROOT_CACHE.tmp.$$" "$DEBROOT_CACHE"; then
				echo "debroot: cached the base root: $DEBROOT_CACHE ($(du -h "$DEBROOT_CACHE" | cut -f1))"
			else
				rm -f "$DEBROOT_CACHE.tmp.$$"
				echo "debroot: could not cache the base root (the next run debootstraps again)"
			fi
		fi
	fi
	flock -u "$lock_fd"
	exec {lock_fd}>&-
	return $rc
}

debroot_apt() {
	local root=$1 f codename mirror
	rm -f "$root/etc/apt/sources.list" "$root"/etc/apt/sources.list.d/*
	# shellcheck disable=SC1091
	codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
	if [ "$codename" = "$DEBROOT_SUITE" ] &&
		{ [ -f "$DEBROOT_APT_DIR/sources.list.d/debian.sources" ] ||
			[ -f "$DEBROOT_APT_DIR/sources.list" ]; }; then
		for f in sources.list.d/debian.sources sources.list; do
			[ ! -f "$DEBROOT_APT_DIR/$f" ] || cp "$DEBROOT_APT_DIR/$f" "$root/etc/apt/$f" || return 1
		done
		echo "debroot: apt sources: the host's ($codename)"
	else
		mirror=$(debroot_mirror) || return 1
		echo "deb $mirror $DEBROOT_SUITE main" >"$root/etc/apt/sources.list"
		echo "debroot: apt sources: $DEBROOT_SUITE main from the host's mirror"
	fi
	cp -L /etc/resolv.conf "$root/etc/resolv.conf"
}

# Each bind is made a slave, so that nothing mounted or unmounted under it
# reaches the host's own tree.
debroot_mount() {
	local root=$1
	mount -t proc proc "$root/proc" &&
		mount --bind /sys "$root/sys" && mount --make-rslave "$root/sys" &&
		if mountpoint -q /sys/fs/bpf; then
			mount --bind /sys/fs/bpf "$root/sys/fs/bpf" && mount --make-rslave "$root/sys/fs/bpf"
		else
			mount -t bpf bpf "$root/sys/fs/bpf"
		fi &&
		mount --bind /dev "$root/dev" && mount --make-rslave "$root/dev" &&
		mount --bind /dev/pts "$root/dev/pts" && mount --make-rslave "$root/dev/pts"
}

# The mount points under WORK, deepest first.
debroot_mounts_under() {
	[ -n "$1" ] || return 0
	awk -v w="$1/" 'index($5, w) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# The processes whose root is ROOT: all started in it by the caller.
debroot_pids() {
	local p
	[ -n "$1" ] || return 0
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
	done
}

debroot_cleanup() {
	local work=$1 root=$2 keep=${3:-0} pids left m
	[ -n "$work" ] && [ -d "$work" ] || return 0
	for _ in 1 2 3 4 5; do
		pids=$(debroot_pids "$root")
		[ -z "$pids" ] && break
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null
		sleep 1
	done
	for m in $(debroot_mounts_under "$work"); do
		umount -l "$m" 2>/dev/null || umount -l "$m"
	done
	left=$(debroot_mounts_under "$work")
	pids=$(debroot_pids "$root")
	if [ -n "$left" ] || [ -n "$pids" ]; then
		echo "mounts [${left//$'\n'/ }] processes [${pids//$'\n'/ }]"
		return 1
	fi
	[ "$keep" = 1 ] && return 0
	# Nothing is mounted under it any more (checked above); and never
	# cross into another file system all the same.
	rm -rf --one-file-system "$work"
}
