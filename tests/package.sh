#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tests/package.sh [DEB]: the Debian package of make deb, installed on a
# machine that really is fresh.  Root, on the host.  Builds nothing: DEB
# defaults to the newest kmemsnoop_*_<this machine's architecture>.deb in
# the top folder (make deb's DEBDIR default).
#
# A Debian 12 (bookworm) root made with debootstrap --variant=minbase,
# cached under /var/cache/kmemsnoop with tests/fresh-machine.sh's
# (tests/debroot.sh), unpacked afresh each run and entered with chroot,
# with the host's /proc, /sys, /sys/fs/bpf and /dev bound in so that BPF
# programs load into the host's kernel from inside it.  In it, man-db (for
# man -w, and for systemd-analyze's check of Documentation=) and systemd
# (systemd-analyze, systemctl) are installed first, from the machine's own
# mirror, then the package is installed and removed as a user would.
#
# Results:
#   package.deb          DEB is kmemsnoop, depends on nothing (no Depends,
#                        Pre-Depends, Recommends) and holds the binary, the
#                        manual page, the completion, the units, the
#                        copyright and changelog.Debian.gz
#   package.lintian      lintian DEB reports no error (E:); its other lines
#                        are printed (SKIP without lintian on the host)
#   package.root         the base root is ready and mounted, man-db and
#                        systemd installed in it
#   package.install      apt-get install -y ./DEB installs kmemsnoop and no
#                        other package
#   package.version      kmemsnoop -V prints the package's version, less its
#                        Debian revision
#   package.man          man -w kmemsnoop finds
#                        /usr/share/man/man8/kmemsnoop.8.gz; its .TH names
#                        that version
#   package.completion   the bash completion completes "kmemsnoop --hist-b"
#                        to --hist-by
#   package.unit_verify  systemd-analyze verify accepts the units
#                        (kmemsnoop-exporter, kmemsnoop-flight), silently
#   package.unit_disabled  they are installed disabled: systemctl is-enabled
#                        says "disabled", no link to them under /etc/systemd
#   package.trace        kmemsnoop -d 2, while a loop of cat allocates,
#                        prints kmalloc:/kmem_cache_alloc: lines, lines of
#                        cat, and its summary on stderr
#   package.enable       systemctl enable of both units, as an
#                        administrator would, links each (purge must undo it)
#   package.purge        apt-get purge -y kmemsnoop: dpkg no longer knows it
#   package.leftovers    every file of the root, with its type, mode, owner
#                        and content, is after the purge what it was before
#                        the install, but for what apt, dpkg and man-db keep
#                        for themselves (IGNORE below says what, and why)
#   package.cleanup      nothing left mounted or running in the root
# A DEB of another architecture than the machine's (make deb ARCH=arm64)
# gets package.deb and package.lintian; the rest is skipped: installing it
# needs a root of its architecture.
# Each step prints how long it took and runs under timeout.  Ends with
# "N passed, N failed, N skipped"; exit status 1 when anything failed.
#
# Environment:
#   FRESH_CACHE, FRESH_REFRESH, FRESH_APT   the base root (tests/debroot.sh)
#   PACKAGE_WORKDIR  the parent of the run's work directory (/var/tmp):
#                    room for about 600 MB
#   PACKAGE_TIMEOUT  seconds the whole may take (900); each step has a
#                    bound of its own within that
#   PACKAGE_KEEP     1: keep the work directory (unmounted) for a look
set -u

TOP=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tests/debroot.sh
. "$TOP/tests/debroot.sh"
# shellcheck source=tests/results.sh
. "$TOP/tests/results.sh"
WORK_PARENT=${PACKAGE_WORKDIR:-/var/tmp}
DEADLINE=$((SECONDS + ${PACKAGE_TIMEOUT:-900}))
T0=$SECONDS
TRACE_SECONDS=2
UNITS=(kmemsnoop-exporter.service kmemsnoop-flight.service)
# The test's own files in the root (the copy of DEB, the trace's output):
# left out of the comparison of the root's files.
INNER=/tmp/kmemsnoop-package
# A fresh root login's PATH, and nothing else of this environment.
ROOT_ENV=(HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive)

# What the purge may leave changed, as extended regular expressions on
# the paths of the file list ("./var/..."), each what apt, dpkg, man-db or
# systemd's tools keep for themselves, whatever the package:
#   dpkg's backup of its database (status-old: the status before the
#     purge's last write, kmemsnoop's entry in it; the next dpkg run
#     replaces it); the database itself, status, must be as it was;
#   apt's binary caches of the package lists, which a local .deb joins;
#   the logs of apt and dpkg;
#   man-db's caches (/var/cache/man): the index, which its trigger updates
#     when a manual page comes or goes, and the pages it formats when one
#     is read (systemd-analyze verify reads kmemsnoop(8), the unit's
#     Documentation=), which man-db's daily job expires; package.purge
#     checks that man -w no longer finds kmemsnoop;
#   /run: a running machine's state, on a tmpfs emptied at boot (in the
#     root, systemctl and systemd-analyze note there that they loaded
#     units).
IGNORE='^\./var/lib/dpkg/status-old$'
IGNORE+='|^\./var/cache/apt/(pkgcache|srcpkgcache)\.bin$'
IGNORE+='|^\./var/log/(apt/(history\.log|term\.log|eipp\.log\.xz)|dpkg\.log)$'
IGNORE+='|^\./var/cache/man(/.*)?$'
IGNORE+='|^\./run/.*$'

W= # the work directory
R= # the root in it

say() { echo "package: $*"; }
# check STATUS NAME WHY [LOG]
check() {
	if [ "$1" = 0 ]; then pass "$2"; else fail "$2" "$3" "${4:-}"; fi
}
finish() {
	cleanup
	totals
	[ "$FAILED" -eq 0 ]
	exit $?
}
TOTALS=0
totals() {
	[ "$TOTALS" = 1 ] && return 0
	TOTALS=1
	say "took $((SECONDS - T0))s"
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
}
AFTER_ROOT=(package.install package.version package.man package.completion package.unit_verify
	package.unit_disabled package.trace package.enable package.purge package.leftovers)

# step NAME CAP CMD...: debroot_timed_step (tests/debroot.sh), its
# deadline PACKAGE_TIMEOUT.
step() { DEBROOT_DEADLINE_NAME=PACKAGE_TIMEOUT debroot_timed_step "$@"; }
DEBROOT_STEP=step

# "${INROOT[@]}" CMD...: CMD as root in the root, with a login's bare
# environment (an array, not a function: step runs it under timeout).
INROOT=()
# inroot CMD...: the same, for short commands, under a timeout of 60s.
inroot() { timeout -k 5 60 "${INROOT[@]}" "$@"; }

CLEANED=0
REPORT_CLEANUP=0
STEP_PID=
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
	if left=$(debroot_cleanup "$W" "$R" "${PACKAGE_KEEP:-0}"); then
		left=
		[ "${PACKAGE_KEEP:-0}" = 1 ] && say "kept $W"
	else
		echo "package: not removing $W (still in use)" >&2
	fi
	if [ "$REPORT_CLEANUP" = 1 ]; then
		[ -z "$left" ]
		check $? package.cleanup "left behind: $left"
	fi
}
# Interrupted: the cleanup, then the totals so far.
trap 'cleanup; totals' EXIT
trap 'say interrupted; exit 130' INT
trap 'say interrupted; exit 143' TERM

# ---------------------------------------------------------------- the package

if [ $# -gt 1 ]; then
	echo "usage: $0 [DEB]" >&2
	exit 2
fi
MACHINE_ARCH=$(dpkg --print-architecture 2>/dev/null || echo amd64)
# shellcheck disable=SC2012 # make deb's names: no blank, no newline
DEB=${1:-$(ls -t "$TOP"/kmemsnoop_*_"$MACHINE_ARCH".deb 2>/dev/null | head -n1)}
if [ -z "$DEB" ] || [ ! -f "$DEB" ]; then
	fail package.deb "no package: ${DEB:-no $TOP/kmemsnoop_*_$MACHINE_ARCH.deb} (make deb builds it)"
	skip_rest "no package" package.lintian package.root "${AFTER_ROOT[@]}"
fi
DEB=$(cd "$(dirname "$DEB")" && pwd)/$(basename "$DEB")
say "$DEB"

field() { dpkg-deb -f "$DEB" "$1" 2>/dev/null; }
PKG_NAME=$(field Package)
PKG_VERSION=$(field Version)
PKG_ARCH=$(field Architecture)
PKG_UPSTREAM=${PKG_VERSION%-*}
say "package $PKG_NAME $PKG_VERSION $PKG_ARCH"
contents=$(dpkg-deb -c "$DEB" 2>/dev/null | awk '{ print $6 }')
why=
[ "$PKG_NAME" = kmemsnoop ] || why="$why Package: '$PKG_NAME';"
for f in Depends Pre-Depends Recommends; do
	[ -z "$(field "$f")" ] || why="$why $f: $(field "$f");"
done
for f in ./usr/sbin/kmemsnoop ./usr/share/man/man8/kmemsnoop.8.gz \
	./usr/share/bash-completion/completions/kmemsnoop "${UNITS[@]/#/./usr/lib/systemd/system/}" \
	./usr/share/doc/kmemsnoop/copyright ./usr/share/doc/kmemsnoop/changelog.Debian.gz; do
	grep -qxF "$f" <<<"$contents" || why="$why no $f;"
done
why=${why# }
[ -z "$why" ]
check $? package.deb "${why%;}"

if ! command -v lintian >/dev/null; then
	skip package.lintian "lintian is not installed (tools/install-deps.sh test installs it)"
else
	W=$(mktemp -d) # for step's log, until the work directory exists
	step lintian 300 lintian "$DEB"
	rc=$?
	sed -e 's/running with root privileges is not recommended!$//' -e '/^$/d' \
		-e 's/^/package: lintian: /' "$W/lintian.log"
	[ $rc = 0 ] && ! grep -q '^E:' "$W/lintian.log"
	check $? package.lintian "lintian: status $rc, $(grep -c '^E:' "$W/lintian.log") errors" "$W/lintian.log"
	rm -rf "$W"
	W=
fi

if [ "$PKG_ARCH" != "$MACHINE_ARCH" ] && [ "$PKG_ARCH" != all ]; then
	skip_rest "an $PKG_ARCH package: installing it needs an $PKG_ARCH root (this machine is $MACHINE_ARCH)" \
		package.root "${AFTER_ROOT[@]}"
fi

# ---------------------------------------------------------------- the root

if [ "$(id -u)" != 0 ]; then
	skip_rest "needs root (debootstrap, chroot, mounts, BPF)" package.root "${AFTER_ROOT[@]}"
fi
if debroot_need_debootstrap && ! command -v debootstrap >/dev/null; then
	skip_rest "debootstrap is not installed (tools/install-deps.sh test installs it)" \
		package.root "${AFTER_ROOT[@]}"
fi
mkdir -p "$WORK_PARENT" || fail_rest "cannot create $WORK_PARENT" package.root "${AFTER_ROOT[@]}"
W=$(mktemp -d "$WORK_PARENT/kmemsnoop-package.XXXXXX") ||
	fail_rest "cannot create a work directory under $WORK_PARENT" package.root "${AFTER_ROOT[@]}"
W=$(cd "$W" && pwd -P)
R=$W/root
mkdir "$R"
INROOT=(chroot "$R" /usr/bin/env -i "${ROOT_ENV[@]}")
DEBROOT_LOGDIR=$W
REPORT_CLEANUP=1
say "$DEBROOT_SUITE/$DEBROOT_ARCH root in $R"

debroot_base "$R" 2>"$W/base.err" || fail_rest "$(cat "$W/base.err")" package.root "${AFTER_ROOT[@]}"
debroot_apt "$R" || fail_rest "cannot write the root's apt sources" package.root "${AFTER_ROOT[@]}"
if ! debroot_mount "$R" >"$W/mounts.log" 2>&1; then
	fail_rest "cannot mount /proc, /sys, /sys/fs/bpf or /dev in the root ($(tr '\n' ' ' <"$W/mounts.log"))" \
		package.root "${AFTER_ROOT[@]}"
fi
inroot /bin/true || fail_rest "cannot chroot into $R" package.root "${AFTER_ROOT[@]}"
if ! step tools 600 "${INROOT[@]}" /bin/sh -c \
	'apt-get update && apt-get install -y --no-install-recommends man-db systemd'; then
	fail_rest "apt-get install man-db systemd failed" package.root "$W/tools.log"
fi
pass package.root

# ---------------------------------------------------------------- install

mkdir -p "$R$INNER"
cp "$DEB" "$R$INNER/"
chmod 755 "$R$INNER"
chmod 644 "$R$INNER/${DEB##*/}"

# shellcheck disable=SC2317 # run by step, in a shell of its own
# snapshot FILE: every file of the root, but the mounts and the test's
# own: path, type, mode, owner, link target, and an MD5 of a regular
# file's content; sorted.
snapshot() {
	(
		cd "$R" || exit 1
		find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ".$INNER" \) -prune -o \
			-type f -printf '%p\0' | xargs -0 -r md5sum |
			awk '{ sum[substr($0, 35)] = $1 } END { for (p in sum) print p "\t" sum[p] }' >"$1.md5"
		find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ".$INNER" \) -prune -o \
			-printf '%p\t%y %m %U:%G %l\n' | awk -F'\t' -v md5="$1.md5" '
				BEGIN { while ((getline l < md5) > 0) { split(l, a, "\t"); sum[a[1]] = a[2] } }
				{ print $1 "\t" $2 ($1 in sum ? " " sum[$1] : "") }' | LC_ALL=C sort >"$1"
	)
}
# For step, which runs it under timeout in a shell of its own.
export -f snapshot
export R INNER
# shellcheck disable=SC2016 # dpkg-query's format
packages() { inroot dpkg-query -W -f='${Package}\n' | LC_ALL=C sort; }

packages >"$W/packages.before"
# shellcheck disable=SC2016 # $1 of the inner shell
step snapshot.before 300 bash -c 'snapshot "$1"' snapshot "$W/files.before" ||
	fail_rest "cannot list the root's files" "${AFTER_ROOT[@]}"
say "the root: $(wc -l <"$W/files.before") files, $(wc -l <"$W/packages.before") packages"

if ! step install 300 "${INROOT[@]}" /bin/sh -c "cd $INNER && apt-get install -y ./kmemsnoop_*.deb"; then
	fail_rest "apt-get install -y ./${DEB##*/} failed" "${AFTER_ROOT[@]}" "$W/install.log"
fi
packages >"$W/packages.after"
new=$(comm -13 "$W/packages.before" "$W/packages.after" | tr '\n' ' ')
gone=$(comm -23 "$W/packages.before" "$W/packages.after" | tr '\n' ' ')
line=$(grep -m1 -E '^[0-9]+ upgraded, [0-9]+ newly installed' "$W/install.log")
say "checked: $line"
[ "$new" = "kmemsnoop " ] && [ -z "$gone" ] && [[ $line == "0 upgraded, 1 newly installed, 0 to remove"* ]]
check $? package.install "new packages: [$new], removed: [$gone], apt-get: $line" "$W/install.log"

# ---------------------------------------------------------------- what it installed

got=$(inroot kmemsnoop -V 2>&1)
say "checked: kmemsnoop -V: $got"
[ "$got" = "kmemsnoop $PKG_UPSTREAM" ]
check $? package.version "kmemsnoop -V printed '$got', the package is $PKG_VERSION"

page=$(inroot man -w kmemsnoop 2>&1)
th=$(inroot /bin/sh -c 'zcat /usr/share/man/man8/kmemsnoop.8.gz | grep -m1 "^\.TH "' 2>&1)
say "checked: man -w kmemsnoop: $page; $th"
[ "$page" = /usr/share/man/man8/kmemsnoop.8.gz ] && [[ $th == *"\"kmemsnoop $PKG_UPSTREAM\""* ]]
check $? package.man "man -w kmemsnoop: '$page'; .TH: '$th' (want \"kmemsnoop $PKG_UPSTREAM\")"

# shellcheck disable=SC2016
got=$(inroot /bin/bash -c '. /usr/share/bash-completion/completions/kmemsnoop
	COMP_WORDS=(kmemsnoop --hist-b); COMP_CWORD=1; _kmemsnoop; printf "%s\n" "${COMPREPLY[@]}"' 2>&1)
say "checked: kmemsnoop --hist-b<TAB>: $got"
[ "$got" = --hist-by ]
check $? package.completion "\"kmemsnoop --hist-b\" completed to '$got'"

step unit_verify 120 "${INROOT[@]}" systemd-analyze verify "${UNITS[@]/#//usr/lib/systemd/system/}"
rc=$?
[ $rc = 0 ] && [ ! -s "$W/unit_verify.log" ]
check $? package.unit_verify "systemd-analyze verify: status $rc" "$W/unit_verify.log"

state=$(inroot systemctl is-enabled "${UNITS[@]}" 2>&1 | sort -u | paste -sd' ')
links=$(find "$R/etc/systemd" -lname "*kmemsnoop-*.service" 2>/dev/null | sed "s|^$R||")
say "checked: systemctl is-enabled: $state; links: ${links:-none}"
[ "$state" = disabled ] && [ -z "$links" ]
check $? package.unit_disabled "systemctl is-enabled says '$state'; links: ${links//$'\n'/ }"

# The trace, while a loop in the root allocates (stopped when kmemsnoop
# ends).  Its stdout and stderr apart: the events, then the summary.
# shellcheck disable=SC2016
step trace 60 "${INROOT[@]}" /bin/bash -c '
	cd '"$INNER"' || exit 1
	( while [ ! -e stop ]; do cat /etc/passwd >/dev/null; sleep 0.1; done ) &
	kmemsnoop -d '"$TRACE_SECONDS"' >trace.out 2>trace.err
	rc=$?
	touch stop
	wait
	exit $rc'
rc=$?
OUT=$R$INNER/trace.out
ERR=$R$INNER/trace.err
EV=' (kmalloc|kmem_cache_alloc): call_site='
WL='^ *cat-[0-9]+ +\[[0-9]+\] +[0-9.]+: [a-z_]+: '
n_ev=$(grep -cE "$EV" "$OUT" 2>/dev/null)
n_wl=$(grep -cE "$WL" "$OUT" 2>/dev/null)
summary=$(grep -m1 -E '^kmemsnoop: [0-9]+ events written, [0-9]+ lost' "$ERR" 2>/dev/null)
say "checked: kmemsnoop -d $TRACE_SECONDS: exit $rc, $(wc -l <"$OUT" 2>/dev/null) lines, ${n_ev:-0} kmalloc:/kmem_cache_alloc:, ${n_wl:-0} of cat; $summary"
[ -n "$n_ev" ] && say "checked: $(grep -m1 -E "$WL" "$OUT")"
[ "$rc" = 0 ] && [ "${n_ev:-0}" -gt 0 ] && [ "${n_wl:-0}" -gt 0 ] && [ -n "$summary" ]
check $? package.trace "exit $rc, ${n_ev:-0} kmalloc:/kmem_cache_alloc: lines, ${n_wl:-0} of cat, summary '$summary'" "$ERR"

# ---------------------------------------------------------------- purge

inroot systemctl enable "${UNITS[@]}" >"$W/enable.log" 2>&1
rc=$?
links=$(find "$R/etc/systemd" -lname "*kmemsnoop-*.service" 2>/dev/null | sed "s|^$R||")
say "checked: systemctl enable: status $rc; links: ${links//$'\n'/ }"
[ $rc = 0 ] && grep -q 'kmemsnoop-exporter\.service$' <<<"$links" &&
	grep -q 'kmemsnoop-flight\.service$' <<<"$links"
check $? package.enable "systemctl enable: status $rc, links: ${links:-none}" "$W/enable.log"

step purge 300 "${INROOT[@]}" apt-get purge -y kmemsnoop
rc=$?
# shellcheck disable=SC2016 # dpkg-query's format
status=$(inroot dpkg-query -W -f='${db:Status-Abbrev}' kmemsnoop 2>&1)
page=$(inroot man -w kmemsnoop 2>&1)
say "checked: dpkg-query -W kmemsnoop: $status; man -w kmemsnoop: $page"
[ $rc = 0 ] && [[ $status == *"no packages found"* ]] && ! inroot man -w kmemsnoop >/dev/null 2>&1
check $? package.purge "apt-get purge: status $rc; dpkg-query: '$status'; man -w: '$page'" "$W/purge.log"

# shellcheck disable=SC2016 # $1 of the inner shell
step snapshot.after 300 bash -c 'snapshot "$1"' snapshot "$W/files.after"
diff "$W/files.before" "$W/files.after" | grep '^[<>]' >"$W/files.diff"
ignored=$(cut -f1 "$W/files.diff" | cut -c3- | LC_ALL=C sort -u | grep -E "$IGNORE" |
	sed -E 's|^(\./var/cache/man/).*|\1...|' | uniq -c | awk '{ print $2 ($1 > 1 ? " (" $1 ")" : "") }' |
	paste -sd' ')
left=$(cut -f1 "$W/files.diff" | cut -c3- | LC_ALL=C sort -u | grep -vE "$IGNORE")
say "ignored changes: ${ignored:-none}"
[ -z "$left" ]
check $? package.leftovers "changed by install and purge: $(head -n 20 <<<"$left" | paste -sd' ')"
[ -n "$left" ] && grep -F -f <(sed 's/^/ /; s/$/\t/' <<<"$left") "$W/files.diff" | head -n 20

finish
