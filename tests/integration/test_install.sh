#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# make install and make uninstall into a staging root (DESTDIR), and what
# they install: the binary, kmemsnoop(8), the bash completion and the
# systemd units, kmemsnoop-exporter and kmemsnoop-flight.  Needs the source tree and make (not in
# the test VMs); root only for install.unit_capabilities.
#
#   install.files           make install DESTDIR=D PREFIX=/usr puts exactly the
#                           five files in place, the binary 0755, the others 0644
#   install.prefix          the default PREFIX is /usr/local: the files go
#                           there, and the unit's ExecStart= and the
#                           completion's fallback name that binary
#   install.man_render      man -l renders the page without a warning
#   install.man_version     the installed page's .TH names kmemsnoop --version's
#                           version, and the source page's the release in VERSION
#   install.man_options     the OPTIONS entries of the page are exactly the
#                           options of kmemsnoop --help (short and long names)
#   install.completion_options  "--" completes to every long option of --help
#                           and "-" to every short one too
#   install.completion_values   the values completed for --hist-by, -e, -s
#                           (slab and --page), --hist= and --allocinfo= are all
#                           accepted, and include every value kmemsnoop's
#                           error message names
#   install.completion_dirs -o and --input= complete directories only
#   install.completion_pids -p completes process ids (this shell's among them)
#   install.unit_execstart  the exporter's unit runs the installed binary with
#                           --listen, the flight recorder's with --flight into
#                           its state directory, which it declares
#   install.unit_verify     systemd-analyze verify accepts each unit
#   install.unit_security   systemd-analyze security --offline rates each one's
#                           exposure at most UNIT_MAX_EXPOSURE (2.5)
#   install.unit_capabilities  the installed binary serves /metrics, call
#                           sites named, as an unprivileged user with only the
#                           exporter's capabilities (root)
#   install.flight_capabilities  as an unprivileged user with only the flight
#                           recorder's capabilities, the installed binary
#                           started as its unit starts it writes a dump on
#                           SIGUSR1 that kmemsnoop -i reads (root)
#   install.uninstall       make uninstall leaves no file behind
#   install.dist            make dist writes kmemsnoop-<tools/version>.tar.gz:
#                           HEAD without .git, its VERSION holding that version,
#                           which its own tools/version then prints (skipped with
#                           uncommitted changes: make dist refuses them)
#
# vmtest: host only: make install needs the source tree and make.
. "$(dirname "$0")/../lib.sh"

TESTS=(install.files install.prefix install.man_render install.man_version install.man_options
	install.completion_options install.completion_values install.completion_dirs
	install.completion_pids install.unit_execstart install.unit_verify install.unit_security
	install.unit_capabilities install.flight_capabilities install.uninstall install.dist)

UNIT_MAX_EXPOSURE=${UNIT_MAX_EXPOSURE:-2.5}
UNIT=kmemsnoop-exporter.service
FLIGHT_UNIT=kmemsnoop-flight.service
UNITS=("$UNIT" "$FLIGHT_UNIT")

if [ ! -f "$TOP/Makefile" ] || [ ! -f "$TOP/man/kmemsnoop.8" ]; then
	skip_all "no source tree at $TOP (make install runs from one)"
fi
command -v make >/dev/null || skip_all "make is not installed"
require_kmemsnoop

# mk TARGET ARGS...: make in the source tree; its output in $WORK/make.log.
mk() {
	make -C "$TOP" -s --no-print-directory "$@" >"$WORK/make.log" 2>&1
}

# Everything above the staging root open to all, for the run as nobody.
chmod 755 "$WORK"
D=$WORK/root
BIN=$D/usr/sbin/kmemsnoop
MAN=$D/usr/share/man/man8/kmemsnoop.8
COMP=$D/usr/share/bash-completion/completions/kmemsnoop
UNITF=$D/usr/lib/systemd/system/$UNIT
FLIGHT_UNITF=$D/usr/lib/systemd/system/$FLIGHT_UNIT

# --- the files -------------------------------------------------------------------
if ! mk install DESTDIR="$D" PREFIX=/usr; then
	fail_rest "${TESTS[@]}" "make install failed: $(tail -n 3 "$WORK/make.log" | tr '\n' ' ')"
	finish
fi
want="0755 $BIN
0644 $COMP
0644 $MAN
0644 $UNITF
0644 $FLIGHT_UNITF"
got=$(find "$D" ! -type d -printf '%#m %p\n' | sort -k2)
[ "$got" = "$(sort -k2 <<<"$want")" ]
check $? install.files "installed: $(tr '\n' ';' <<<"$got"), want: $(tr '\n' ';' <<<"$want")"

D2=$WORK/root-local
if mk install DESTDIR="$D2"; then
	execstart=$(sed -n 's/^ExecStart=\([^ ]*\).*/\1/p' "$D2/usr/local/lib/systemd/system/$UNIT" 2>/dev/null)
	envfile=$(sed -n 's/^EnvironmentFile=//p' "$D2/usr/local/lib/systemd/system/$UNIT" 2>/dev/null)
	[ -x "$D2/usr/local/sbin/kmemsnoop" ] && [ -f "$D2/usr/local/share/man/man8/kmemsnoop.8" ] &&
		[ "$execstart" = /usr/local/sbin/kmemsnoop ] &&
		[ "$envfile" = -/usr/local/etc/default/kmemsnoop-exporter ] &&
		grep -q 'prog=/usr/local/sbin/kmemsnoop$' "$D2/usr/local/share/bash-completion/completions/kmemsnoop"
	check $? install.prefix "files: $(cd "$D2" && find . ! -type d | tr '\n' ' '); ExecStart=$execstart; EnvironmentFile=$envfile; completion falls back on '$(sed -n 's/.*|| prog=//p' "$D2/usr/local/share/bash-completion/completions/kmemsnoop")'"
	mk uninstall DESTDIR="$D2"
else
	fail install.prefix "make install without PREFIX failed: $(tail -n 3 "$WORK/make.log" | tr '\n' ' ')"
fi

# --- the man page ----------------------------------------------------------------
if ! command -v man >/dev/null; then
	skip install.man_render "man is not installed (man-db)"
else
	MANWIDTH=80 man --warnings -l "$MAN" >"$WORK/man.txt" 2>"$WORK/man.err"
	rc=$?
	[ $rc = 0 ] && [ ! -s "$WORK/man.err" ] && grep -q '^EXIT STATUS' "$WORK/man.txt"
	check $? install.man_render "man -l: status $rc: $(head -n 3 "$WORK/man.err" | tr '\n' ' ')"
fi

# man_th PAGE: the version its .TH line names.
man_th() {
	sed -n 's/^\.TH KMEMSNOOP 8 [^ ]* "kmemsnoop \([^"]*\)".*/\1/p' "$1"
}
version=$("$BIN" --version | awk '{ print $2 }')
th=$(man_th "$MAN")
release=$(cat "$TOP/VERSION")
src_th=$(man_th "$TOP/man/kmemsnoop.8")
[ -n "$version" ] && [ "$th" = "$version" ] && [ "$src_th" = "$release" ] &&
	[ "${version%%+*}" = "$release" ]
check $? install.man_version "the installed page says version '$th', kmemsnoop --version '$version'; the source page '$src_th', VERSION '$release'"

# help_options BIN: "SHORT LONG" per option of --help (SHORT "-" when none).
help_options() {
	"$1" --help | awk 'match($0, /^  (-[A-Za-z], |    )--[a-z][a-z0-9-]*/) {
		print (substr($0, 3, 1) == "-" ? substr($0, 4, 1) : "-") " " substr($0, 9, RLENGTH - 8)
	}' | sort -u
}

# man_options PAGE: the same from the line after each .TP of OPTIONS, with
# the roff escapes taken out ("?" for an entry that names no long option).
man_options() {
	awk '/^\.SH / { in_opts = $2 == "OPTIONS"; next }
	in_opts && /^\.TP/ { getline; entry = $0
		gsub(/\\-/, "-", entry); gsub(/\\f[BIRP]/, "", entry); gsub(/"/, " ", entry)
		short = "-"; long = "?"
		if (match(entry, / -[A-Za-z]( |,|$)/)) short = substr(entry, RSTART + 2, 1)
		if (match(entry, /--[a-z][a-z0-9-]*/)) long = substr(entry, RSTART + 2, RLENGTH - 2)
		print short " " long }' "$1" | sort -u
}
help_options "$BIN" >"$WORK/help.opts"
man_options "$MAN" >"$WORK/man.opts"
d=$(diff "$WORK/help.opts" "$WORK/man.opts" | grep '^[<>]' | sed 's/^</only in --help:/; s/^>/only in the man page:/' | tr '\n' ';')
[ -s "$WORK/help.opts" ] && [ -z "$d" ]
check $? install.man_options "$(wc -l <"$WORK/help.opts") options in --help: $d"

# --- the bash completion ---------------------------------------------------------
# comp_words WORD...: what the installed completion offers for the last word
# (the first is the program), one per line, in a shell of its own.
comp_words() {
	bash --norc --noprofile -c '
		. "$1" || exit 1
		shift
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=()
		_kmemsnoop
		printf "%s\n" "${COMPREPLY[@]}"' comp_words "$COMP" "$@" 2>"$WORK/complete.err"
}

longs=$(awk '{ print "--" $2 }' "$WORK/help.opts" | sort -u)
shorts=$(awk '$1 != "-" { print "-" $1 }' "$WORK/help.opts" | sort -u)
got_long=$(comp_words "$BIN" -- | sort -u)
got_all=$(comp_words "$BIN" - | sort -u)
[ -n "$longs" ] && [ "$got_long" = "$longs" ] &&
	[ "$got_all" = "$(printf '%s\n%s\n' "$longs" "$shorts" | sort -u)" ]
check $? install.completion_options "'--' gave $(wc -w <<<"$got_long") words for $(wc -w <<<"$longs") long options ($(comm -3 <(echo "$got_long") <(echo "$longs") | tr -d '\t' | tr '\n' ' ')); '-' gave $(wc -w <<<"$got_all") $(head -c 200 "$WORK/complete.err")"

# named_values OPTION-ARGS...: the values kmemsnoop's error message for a
# bad value names ("...: use a, b, c or d").
named_values() {
	"$BIN" "$@" 2>&1 >/dev/null | sed -n 's/.*: use \(.*\) (see kmemsnoop --help)$/\1/p' |
		sed 's/, / /g; s/ or / /g'
}

# values_ok NAME OFFERED NAMED ARGS-BEFORE...: every word of OFFERED is
# accepted after ARGS-BEFORE (ARGS-BEFORE VALUE -h exits 0), every word of
# NAMED is offered; else a reason on stdout.
values_ok() {
	local name=$1 offered=$2 named=$3 v
	shift 3
	[ -n "$offered" ] || { echo "$name: nothing offered;"; return; }
	for v in $offered; do
		"$BIN" "$@" "$v" -h >/dev/null 2>&1 || echo "$name: '$v' offered, refused;"
	done
	for v in $named; do
		grep -qx -- "$v" <<<"$offered" || echo "$name: '$v' accepted, not offered;"
	done
}
bad=$(
	values_ok --hist-by "$(comp_words "$BIN" --hist-by '')" "$(named_values --hist-by x)" --hist-by
	values_ok -e "$(comp_words "$BIN" -e '')" "$(named_values -e x)" -e
	values_ok "-e list" "$(comp_words "$BIN" -e kmalloc,c)" "kmalloc,cache" -e
	values_ok -s "$(comp_words "$BIN" --stat -s '')" "$(named_values --stat -s x)" --stat -s
	values_ok "--page -s" "$(comp_words "$BIN" --stat --page -s '')" \
		"$(named_values --stat --page -s x)" --stat --page -s
	values_ok --hist= "$(comp_words "$BIN" --hist = '' | sed 's/^/--hist=/')" "--hist=alloc --hist=req"
	values_ok --allocinfo= "$(comp_words "$BIN" --allocinfo = '' | sed 's/^/--allocinfo=/')" \
		"--allocinfo=total"
)
[ -z "$bad" ]
check $? install.completion_values "$(tr "\n" " " <<<"$bad")"

mkdir -p "$WORK/cd/ab1" && : >"$WORK/cd/ab2"
got1=$(comp_words "$BIN" -o "$WORK/cd/ab")
got2=$(comp_words "$BIN" --input = "$WORK/cd/ab")
[ "$got1" = "$WORK/cd/ab1" ] && [ "$got2" = "$WORK/cd/ab1" ]
check $? install.completion_dirs "-o gave '$got1', --input= gave '$got2' (want only the directory $WORK/cd/ab1)"

got=$(comp_words "$BIN" -p "$$")
grep -qx "$$" <<<"$got" && ! grep -qv '^[0-9][0-9]*$' <<<"$got"
check $? install.completion_pids "-p $$ gave: $(head -n 5 <<<"$got" | tr '\n' ' ')"

# --- the systemd unit --------------------------------------------------------------
execstart=$(sed -n 's/^ExecStart=//p' "$UNITF")
fexecstart=$(sed -n 's/^ExecStart=//p' "$FLIGHT_UNITF")
fstate=$(sed -n 's/^StateDirectory=//p' "$FLIGHT_UNITF")
[[ $execstart == "/usr/sbin/kmemsnoop --listen "* ]] && [ -x "$D${execstart%% *}" ] &&
	[[ $fexecstart == "/usr/sbin/kmemsnoop \$KMEMSNOOP_FLIGHT "*" -o %S/$fstate "* ]] &&
	[ -n "$fstate" ] && grep -qx 'Environment=KMEMSNOOP_FLIGHT=--flight' "$FLIGHT_UNITF"
check $? install.unit_execstart "$UNIT: ExecStart=$execstart; $FLIGHT_UNIT: ExecStart=$fexecstart, StateDirectory=$fstate"

# The units name /usr/sbin/kmemsnoop, which is in D, not on this machine:
# systemd-analyze reads copies naming D's binary (and finds D's man page).
if ! command -v systemd-analyze >/dev/null; then
	skip_rest install.unit_verify install.unit_security "systemd-analyze is not installed (systemd)"
else
	mkdir -p "$WORK/unit"
	verify_bad= security_bad= scores=
	for u in "${UNITS[@]}"; do
		sed "s|^ExecStart=/usr/sbin/kmemsnoop|ExecStart=$BIN|" "$D/usr/lib/systemd/system/$u" \
			>"$WORK/unit/$u"
		MANPATH=$D/usr/share/man systemd-analyze verify "$WORK/unit/$u" >"$WORK/verify.$u" 2>&1
		rc=$?
		[ $rc = 0 ] && [ ! -s "$WORK/verify.$u" ] ||
			verify_bad="$verify_bad $u: status $rc: $(head -n 3 "$WORK/verify.$u" | tr '\n' ' ');"

		systemd-analyze security --offline=yes "$WORK/unit/$u" >"$WORK/security.$u" 2>&1
		score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$WORK/security.$u")
		if [ -z "$score" ]; then
			security_bad="$security_bad $u: no score: $(tail -n 1 "$WORK/security.$u");"
			continue
		fi
		echo "# $u: exposure $score"
		scores="$scores $u $score"
		awk -v s="$score" -v m="$UNIT_MAX_EXPOSURE" 'BEGIN { exit !(s <= m) }' ||
			security_bad="$security_bad $u: exposure $score, more than $UNIT_MAX_EXPOSURE: $(grep '✗' "$WORK/security.$u" | awk '{ print $2 }' | tr '\n' ' ');"
	done
	[ -z "$verify_bad" ]
	check $? install.unit_verify "systemd-analyze verify:$verify_bad"
	if [ -z "$scores" ]; then
		skip install.unit_security "systemd-analyze security --offline gave no score:$security_bad"
	else
		[ -z "$security_bad" ]
		check $? install.unit_security "$security_bad"
	fi
fi

# setpriv's capability list from the unit's CapabilityBoundingSet=.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNITF" | tr '[:upper:]' '[:lower:]' | sed 's/cap_/+/g; s/ /,/g')
ambient=$(sed -n 's/^AmbientCapabilities=//p' "$UNITF" | tr '[:upper:]' '[:lower:]' | sed 's/cap_/+/g; s/ /,/g')
if [ "$(id -u)" != 0 ]; then
	skip install.unit_capabilities "needs root"
elif ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null ||
	! command -v curl >/dev/null || ! command -v python3 >/dev/null; then
	skip install.unit_capabilities "needs setpriv, prlimit, curl and python3"
elif [ -z "$caps" ] || [ "$caps" != "$ambient" ]; then
	fail install.unit_capabilities "the unit's CapabilityBoundingSet ($caps) and AmbientCapabilities ($ambient) differ"
else
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# As the unit runs it: another user, these capabilities only, no new
	# privileges, RLIMIT_MEMLOCK unlimited where this machine lets it be
	# raised (only kernels before 5.11 charge BPF maps to it).
	memlock=(prlimit --memlock=unlimited)
	"${memlock[@]}" true 2>/dev/null || memlock=()
	if ! KMEMSNOOP=${memlock[0]:-setpriv} ks_start caps "${memlock[@]:1}" ${memlock:+setpriv} \
		--reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,"$caps" \
		--ambient-caps=-all,"$caps" --bounding-set=-all,"$caps" --no-new-privs \
		"$BIN" --listen "127.0.0.1:$port"; then
		fail install.unit_capabilities "with $caps only: $(ks_start_fail_why caps)"
	else
		end=$((SECONDS + 10))
		until grep -q 'serving metrics at' "$WORK/caps.err" || [ $SECONDS -ge $end ]; do sleep 0.1; done
		curl -s --max-time 10 "http://127.0.0.1:$port/metrics" >"$WORK/caps.metrics"
		ks_stop caps
		rc=$?
		# A call site named (a symbol, not a bare address): kallsyms read.
		[ $rc = 0 ] && grep -q '^kmemsnoop_outstanding_bytes{callsite="[A-Za-z_]' "$WORK/caps.metrics"
		check $? install.unit_capabilities "with $caps only: status $rc, $(grep -c . "$WORK/caps.metrics") metric lines, $(grep -m1 '^kmemsnoop_outstanding_bytes' "$WORK/caps.metrics"); $(head -c 300 "$WORK/caps.err" | tr '\n' ' ')"
	fi
fi

# unit_argv UNITFILE STATEROOT: its ExecStart= as systemd runs it, one word a
# line: the unit's own Environment= defaults in place of $NAME and ${NAME},
# %S (the state directories' root) STATEROOT, D's binary.
unit_argv() {
	local line name value cmd
	cmd=$(sed -n 's/^ExecStart=//p' "$1")
	while IFS= read -r line; do
		name=${line%%=*}
		value=${line#*=}
		cmd=${cmd//\$\{$name\}/$value}
		cmd=${cmd//\$$name/$value}
	done < <(sed -n 's/^Environment=//p' "$1")
	cmd=${cmd//%S/$2}
	# shellcheck disable=SC2086 # systemd splits $NAME into words too
	printf '%s\n' ${cmd/#\/usr\/sbin\/kmemsnoop/$BIN}
}

fcaps=$(sed -n 's/^CapabilityBoundingSet=//p' "$FLIGHT_UNITF" | tr '[:upper:]' '[:lower:]' | sed 's/cap_/+/g; s/ /,/g')
fstate=$(sed -n 's/^StateDirectory=//p' "$FLIGHT_UNITF")
if [ "$(id -u)" != 0 ]; then
	skip install.flight_capabilities "needs root"
elif ! command -v setpriv >/dev/null || ! command -v prlimit >/dev/null; then
	skip install.flight_capabilities "needs setpriv and prlimit"
elif [ -z "$fcaps" ] || [ -z "$fstate" ]; then
	fail install.flight_capabilities "$FLIGHT_UNIT: CapabilityBoundingSet '$fcaps', StateDirectory '$fstate'"
else
	# The state directory as systemd makes it: the service's own user's,
	# 0700 (StateDirectoryMode).
	mkdir -p "$WORK/state/$fstate" && chown 65534:65534 "$WORK/state/$fstate" &&
		chmod 700 "$WORK/state/$fstate"
	mapfile -t fargv < <(unit_argv "$FLIGHT_UNITF" "$WORK/state")
	echo "# $FLIGHT_UNIT runs: ${fargv[*]}"
	memlock=(prlimit --memlock=unlimited)
	"${memlock[@]}" true 2>/dev/null || memlock=()
	if ! KMEMSNOOP=${memlock[0]:-setpriv} ks_start fcaps "${memlock[@]:1}" ${memlock:+setpriv} \
		--reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,"$fcaps" \
		--ambient-caps=-all,"$fcaps" --bounding-set=-all,"$fcaps" --no-new-privs \
		"${fargv[@]}"; then
		fail install.flight_capabilities "with $fcaps only: $(ks_start_fail_why fcaps)"
	else
		end=$((SECONDS + 10))
		until grep -q 'flight recorder armed' "$WORK/fcaps.err" || [ $SECONDS -ge $end ]; do nap 0.1; done
		# Allocations for the store to hold, and a dump asked for.
		for _ in 1 2 3 4 5; do cat /etc/passwd >/dev/null; done
		kill -USR1 "${KS_PID[fcaps]}"
		end=$((SECONDS + 10))
		until grep -q 'flight recorder dump (SIGUSR1)' "$WORK/fcaps.err" || [ $SECONDS -ge $end ]; do nap 0.1; done
		ks_stop fcaps
		rc=$?
		dumps=("$WORK/state/$fstate"/*-signal)
		"$BIN" -i "${dumps[0]}" >"$WORK/fcaps.read" 2>"$WORK/fcaps.read.err"
		rrc=$?
		n=$(grep -cE ' (kmalloc|kmem_cache_alloc|kfree|kmem_cache_free): ' "$WORK/fcaps.read")
		[ $rc = 0 ] && [ ${#dumps[@]} = 1 ] && [ -d "${dumps[0]}" ] && [ $rrc = 0 ] &&
			grep -q '^# flight recorder dump, trigger: SIGUSR1' "$WORK/fcaps.read" && [ "$n" -gt 0 ]
		check $? install.flight_capabilities "with $fcaps only: status $rc; dumps: ${dumps[*]}; -i: status $rrc, $n events, $(head -c 200 "$WORK/fcaps.read.err" | tr '\n' ' '); $(grep -v '^kmemsnoop: objects\|^kmemsnoop: slab objects\|^kmemsnoop: vmalloc' "$WORK/fcaps.err" | head -c 400 | tr '\n' ' ')"
	fi
fi

# --- uninstall -----------------------------------------------------------------
mk uninstall DESTDIR="$D" PREFIX=/usr
rc=$?
left=$(find "$D" "$D2" ! -type d 2>/dev/null)
[ $rc = 0 ] && [ -z "$left" ]
check $? install.uninstall "make uninstall: status $rc; left: $(tr '\n' ' ' <<<"$left")"

# --- the release tarball ---------------------------------------------------------
version=$("$TOP/tools/version")
if [ ! -e "$TOP/.git" ]; then
	skip install.dist "not a git checkout"
elif [ "${version%dirty}" != "$version" ]; then
	skip install.dist "uncommitted changes ($version): make dist packs HEAD only"
elif ! mk dist DISTDIR="$WORK"; then
	fail install.dist "make dist failed: $(tail -n 3 "$WORK/make.log" | tr '\n' ' ')"
else
	tarball=$WORK/kmemsnoop-$version.tar.gz
	mkdir "$WORK/dist" && tar -xzf "$tarball" -C "$WORK/dist" 2>"$WORK/dist.err"
	top=$WORK/dist/kmemsnoop-$version
	[ -f "$top/Makefile" ] && [ ! -e "$top/.git" ] && [ "$(cat "$top/VERSION")" = "$version" ] &&
		[ "$("$top/tools/version")" = "$version" ]
	check $? install.dist "$tarball: $(ls "$WORK/dist" 2>&1 | tr '\n' ' '); VERSION '$(cat "$top/VERSION" 2>&1)', its tools/version '$("$top/tools/version" 2>&1)', want '$version'"
fi

finish
