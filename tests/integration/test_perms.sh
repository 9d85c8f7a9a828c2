#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# A recording (-o DIR) holds the kernel's real symbol and heap addresses,
# which the kernel hides from unprivileged users (/proc/kallsyms reads
# zeros for them).  Recorded under the loosest umask (000), the directory
# must be 0700 and every file in it 0600, and an unprivileged user (nobody)
# must be able neither to list it nor to read any file in it, nor to read
# it with kmemsnoop -i, even with every directory above it open.  An
# existing directory that others can enter, or that belongs to another
# user, or a symbolic link, is refused (exit 1, one line, nothing written
# into it); an existing private directory is used, and the files in it
# that were looser become 0600.
#
# vmtest: host only: the recording's file modes are user space.
. "$(dirname "$0")/../lib.sh"

TESTS=(perms.record perms.dir_mode perms.file_modes perms.unprivileged_list
	perms.unprivileged_read perms.unprivileged_decode perms.existing_open_dir
	perms.existing_other_owner perms.symlink perms.existing_private_dir)

require_root
require_kmemsnoop

# as_nobody CMD...: run CMD as uid/gid 65534 without supplementary groups.
# Status 127 with NOBODY_TOOL empty when there is no way to.
NOBODY_TOOL=
command -v setpriv >/dev/null && NOBODY_TOOL=setpriv
[ -z "$NOBODY_TOOL" ] && command -v su >/dev/null && id nobody >/dev/null 2>&1 && NOBODY_TOOL=su
as_nobody() {
	case $NOBODY_TOOL in
	setpriv) setpriv --reuid=65534 --regid=65534 --clear-groups "$@" ;;
	su) su nobody -s /bin/sh -c "$(printf '%q ' "$@")" ;;
	*) return 127 ;;
	esac
}

# one_line FILE: exactly one line, starting "kmemsnoop: ".
one_line() {
	[ "$(wc -l <"$1")" -eq 1 ] && grep -q '^kmemsnoop: ' "$1"
}

# record DIR: a one-second recording into DIR, umask 000; status of kmemsnoop.
record() {
	(umask 000 && timeout -k 5 60 "$KMEMSNOOP" -o "$1" -d 1 >/dev/null 2>"$WORK/rec.err" </dev/null)
}

# Everything above the recording is open to all, so that only the
# recording's own modes keep other users out.
chmod 755 "$WORK"
DIR=$WORK/trace
record "$DIR"
rc=$?
[ $rc -eq 0 ] && [ -s "$DIR/kallsyms" ] && [ -s "$DIR/abi_version" ]
check $? perms.record "kmemsnoop -o under umask 000: status $rc, files: $(ls "$DIR" 2>/dev/null | tr '\n' ' ') ($(head -c 200 "$WORK/rec.err" | tr '\n' ' '))"

m=$(stat -c %a "$DIR" 2>/dev/null)
[ "$m" = 700 ]
check $? perms.dir_mode "$DIR has mode '$m', expected 700"

bad=
nfiles=0
for f in "$DIR"/*; do
	[ -e "$f" ] || continue
	nfiles=$((nfiles + 1))
	m=$(stat -c %a "$f")
	[ "$m" = 600 ] || bad="$bad $(basename "$f"):$m"
done
[ -z "$bad" ] && [ "$nfiles" -ge 5 ]
check $? perms.file_modes "expected every file 600 (of $nfiles):$bad"

if [ -z "$NOBODY_TOOL" ]; then
	skip_rest perms.unprivileged_list perms.unprivileged_read perms.unprivileged_decode \
		"neither setpriv nor su is available to run as nobody"
else
	as_nobody ls "$DIR" >/dev/null 2>&1
	rc=$?
	[ $rc -ne 0 ] && [ $rc -ne 127 ]
	check $? perms.unprivileged_list "nobody could list $DIR (status $rc)"

	readable=
	for f in "$DIR"/* "$DIR"; do
		as_nobody cat "$f" >/dev/null 2>&1 && readable="$readable $(basename "$f")"
	done
	# Should the directory be opened up (chmod 711), the files alone must
	# keep nobody out too.
	dmode=$(stat -c %a "$DIR")
	chmod 711 "$DIR"
	for f in "$DIR"/*; do
		as_nobody cat "$f" >/dev/null 2>&1 && readable="$readable $(basename "$f")(dir 711)"
	done
	chmod "$dmode" "$DIR"
	[ -z "$readable" ]
	check $? perms.unprivileged_read "nobody could read:$readable"

	mkdir -p "$WORK/bin" && cp "$KMEMSNOOP" "$WORK/bin/kmemsnoop" && chmod 755 "$WORK/bin" "$WORK/bin/kmemsnoop"
	as_nobody "$WORK/bin/kmemsnoop" -i "$DIR" >"$WORK/nobody.out" 2>"$WORK/nobody.err" </dev/null
	rc=$?
	[ $rc -eq 1 ] && [ ! -s "$WORK/nobody.out" ] && one_line "$WORK/nobody.err"
	check $? perms.unprivileged_decode "kmemsnoop -i as nobody: status $rc, $(wc -l <"$WORK/nobody.out") lines out, stderr: $(head -c 200 "$WORK/nobody.err" | tr '\n' ' ')"
fi

# refused NAME DIR WHAT: kmemsnoop -o DIR must exit 1 with one line and
# write nothing into DIR.
refused() {
	local name=$1 dir=$2 what=$3 before after rc
	before=$(ls -la "$dir/" 2>/dev/null | md5sum)
	record "$dir"
	rc=$?
	after=$(ls -la "$dir/" 2>/dev/null | md5sum)
	[ $rc -eq 1 ] && one_line "$WORK/rec.err" && [ "$before" = "$after" ]
	check $? "$name" "kmemsnoop -o $what: expected exit 1, one line and nothing written; status $rc, $([ "$before" = "$after" ] || echo "the directory changed, ")stderr: $(head -c 200 "$WORK/rec.err" | tr '\n' ' ')"
}

mkdir -m 755 "$WORK/open"
refused perms.existing_open_dir "$WORK/open" "an existing directory of mode 755"

mkdir -m 700 "$WORK/theirs"
chown 65534 "$WORK/theirs"
refused perms.existing_other_owner "$WORK/theirs" "an existing directory of another user"

mkdir -m 700 "$WORK/target"
ln -s "$WORK/target" "$WORK/link"
refused perms.symlink "$WORK/link" "a symbolic link to a private directory"

# An existing private directory with a loose file from elsewhere.
mkdir -m 700 "$WORK/mine"
echo old >"$WORK/mine/cpu0"
chmod 644 "$WORK/mine/cpu0"
record "$WORK/mine"
rc=$?
m=$(stat -c %a "$WORK/mine/cpu0" 2>/dev/null)
d=$(stat -c %a "$WORK/mine" 2>/dev/null)
[ $rc -eq 0 ] && [ "$m" = 600 ] && [ "$d" = 700 ] && [ -s "$WORK/mine/kallsyms" ]
check $? perms.existing_private_dir "kmemsnoop -o <existing 700 directory>: status $rc, cpu0 mode $m, directory mode $d ($(head -c 200 "$WORK/rec.err" | tr '\n' ' '))"

finish
