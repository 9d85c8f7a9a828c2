#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# What the kernel's verifier walks to load each mode's programs (-v prints
# it per program where the kernel reports it, 5.16+).  A program's load
# time grows with it, and a kernel whose verifier prunes less than this one
# refuses a program past its limit of 1,000,000 instructions: each program
# must stay within a quarter of that (BUDGET).  An inlined loop inside a
# loop once took a vfree program past 460,000 (seconds of start-up under
# QEMU).  One result per mode, verifier.<mode>; the start-up time and the
# largest program are printed.  A mode whose fentry/fexit programs the
# verifier refuses (kmemsnoop then goes on without them) FAILs, on every
# kernel.
#
# vmtest: in x86/6.1 x86/newest arm64/newest: what the verifier walks,
# which kernels before 5.16 do not say (6.1 is the oldest here that does);
# every other test loads its modes' programs on every kernel.
. "$(dirname "$0")/../lib.sh"

BUDGET=250000
MODES=(
	"text|-d 0.01"
	"output|-o @DIR@ -d 0.01"
	"filtered|-p @PID@ -e kmalloc,cache --min-size=64 --max-size=4096 -d 0.01"
	"hist|--hist -d 0.01"
	"hist_by|--hist-by callsite -d 0.01"
	"hist_by_kmalloc|--hist-by callsite -e kmalloc -d 0.01"
	"allocinfo|--allocinfo -d 0.01"
	"allocinfo_total|--allocinfo=total -d 0.01"
	"stat|--stat -d 0.01"
	"stat_page|--stat --page -d 0.01"
	"flight|--flight -o @DIR@ -d 0.01"
	"flight_listen|--flight -o @DIR@ --listen 127.0.0.1:@PORT@ -d 0.01"
	"stacks|--stacks -o @DIR@ -d 0.01"
	"user_stacks|--stacks --user-stacks -p @PID@ -o @DIR@ -d 0.01"
)
TESTS=()
for m in "${MODES[@]}"; do TESTS+=("verifier.${m%%|*}"); done

require_root
require_kmemsnoop

# verified FILE: "COUNT PROGRAM" of the largest program in a -v log, or
# nothing when the kernel reported none.
verified() {
	awk '/: [0-9]+ instructions verified$/ {
		n = $(NF - 2); if (n + 0 > max + 0) { max = n; name = $2; sub(/:$/, "", name) }
	} END { if (name != "") print max, name }' "$1"
}

for m in "${MODES[@]}"; do
	name=${m%%|*} args=${m#*|}
	args=${args//@DIR@/$WORK/rec.$name}
	args=${args//@PID@/$$}
	args=${args//@PORT@/$(free_port)}
	t0=$EPOCHREALTIME
	# shellcheck disable=SC2086 # the mode's words
	timeout -k 5 120 "$KMEMSNOOP" -v $args >/dev/null 2>"$WORK/$name.err" </dev/null
	rc=$?
	took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
	if [ $rc != 0 ]; then
		check 1 "verifier.$name" "kmemsnoop -v $args: status $rc: $(grep -v '^libbpf' "$WORK/$name.err" | tail -n 1)"
		continue
	fi
	# The fentry/fexit programs refused by the verifier: kmemsnoop goes on
	# without them and says so, which must not pass for a clean load.
	refused=$(grep -m1 'without the fentry/fexit programs (loading the BPF programs' "$WORK/$name.err")
	if [ -n "$refused" ]; then
		fail "verifier.$name" "kmemsnoop -v $args: $refused"
		continue
	fi
	read -r most prog <<<"$(verified "$WORK/$name.err")"
	if [ -z "$most" ]; then
		skip "verifier.$name" "kernel $(uname -r) does not say what its verifier walked (5.16+)"
		continue
	fi
	echo "# $name: started and stopped in ${took}s, largest program $prog at $most instructions"
	[ "$most" -le $BUDGET ]
	check $? "verifier.$name" "$prog: $most instructions verified, over the budget of $BUDGET"
done
finish
