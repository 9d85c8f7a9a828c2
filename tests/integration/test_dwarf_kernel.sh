#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# --allocinfo's file:line tags on a real kernel with its real DWARF: the
# kernel's debug vmlinux in KMEMSNOOP_VMLINUX, and in KMEMSNOOP_DWARF_EXPECT
# a file with the tags of the SysV message allocations that DWARF gives,
# computed without kmemsnoop (tools/dwarf-expect: objdump and LLVM's DWARF
# readers; kmemsnoop reads it with libdw), e.g.
#
#   ipc/msgutil.c:53 func:alloc_msg
#   ipc/msgutil.c:68 func:alloc_msg
#
# (the message, and the segment of one longer than a page less its header).
# The workload holds COUNT messages of SIZE bytes, more than a page: each is
# one allocation at each of those call sites.  "kmemsnoop --allocinfo
# --vmlinux KMEMSNOOP_VMLINUX -p PID" must tag them with exactly those
# lines, COUNT calls each.  make vmtest-dwarf (tools/vmtest with
# VMTEST_DWARF=1) sets both in its VM; elsewhere this SKIPs, unless given
# them by hand:
#
#   KMEMSNOOP_VMLINUX=/usr/lib/debug/boot/vmlinux-$(uname -r) \
#   KMEMSNOOP_DWARF_EXPECT=<(tools/dwarf-expect /usr/lib/debug/boot/vmlinux-$(uname -r)) \
#   tests/run.sh test_dwarf_kernel
#
# vmtest: every VM: the kernel's DWARF, where the VM has its debug vmlinux.
. "$(dirname "$0")/../lib.sh"

SIZE=5000
COUNT=3
TESTS=(dwarf_kernel.expected dwarf_kernel.msg_tags)

VMLINUX=${KMEMSNOOP_VMLINUX:-}
EXPECT=${KMEMSNOOP_DWARF_EXPECT:-}
[ -n "$VMLINUX" ] || skip_all "no debug vmlinux of this kernel given (KMEMSNOOP_VMLINUX, KMEMSNOOP_DWARF_EXPECT; make vmtest-dwarf gives them in a VM)"
require_root
require_kmemsnoop
require_workload

# --- what DWARF says, found on the host ------------------------------------
want=$(sort -u "$EXPECT" 2>/dev/null)
bad=$(echo "$want" | grep -Ev '^ipc/msgutil\.c:[0-9]+ func:(alloc_msg|load_msg)$')
if [ ! -r "$VMLINUX" ]; then
	fail_rest "${TESTS[@]}" "KMEMSNOOP_VMLINUX=$VMLINUX cannot be read (the VM's debug disk did not mount?)"
	finish
fi
[ -n "$want" ] && [ -z "$bad" ]
if ! check $? dwarf_kernel.expected "KMEMSNOOP_DWARF_EXPECT=$EXPECT should hold 'ipc/msgutil.c:LINE func:alloc_msg' lines, has '$(echo "$want" | first_lines 3)'"; then
	fail dwarf_kernel.msg_tags "no expected tags"
	finish
fi
echo "# expected (from the debug information): $(echo "$want" | first_lines 4)"

# --- what kmemsnoop says --------------------------------------------------
if ! wl_start w msg-hold "$SIZE" "$COUNT"; then
	fail dwarf_kernel.msg_tags "the workload did not start: $(head -c 200 "$WORK/w.werr")"
	finish
fi
if ! ks_start k --allocinfo --vmlinux "$VMLINUX" -p "${WL_PID[w]}"; then
	fail dwarf_kernel.msg_tags "kmemsnoop --allocinfo --vmlinux $VMLINUX: $(ks_start_fail_why k)"
	wl_kill w
	finish
fi
wl_go w
wait_for "$WORK/w.wout" '^held$' 20
ks_stop k
rc=$?
wl_kill w

# "TAG CALLS" of the table's alloc_msg/load_msg lines: the rows are
# "%12lli %8llu <file:line> func:<function> ".
out=$(ks_out k)
got=$(awk '$NF ~ /^func:(alloc_msg|load_msg)$/ && $1 ~ /^-?[0-9]+$/ { print $3, $4, $2 }' "$out" | sort -u)
echo "# kmemsnoop: $(echo "$got" | first_lines 4)"
want_rows=$(echo "$want" | awk -v n="$COUNT" '{ print $0, n }')
[ $rc -eq 0 ] && [ "$got" = "$want_rows" ]
check $? dwarf_kernel.msg_tags "$COUNT messages of $SIZE bytes held: want the lines '$(echo "$want_rows" | first_lines 4)' (tag, calls), kmemsnoop printed '$(echo "$got" | first_lines 4)' (status $rc; $(head -c 300 "$(ks_err k)" | tr '\n' ' '))" "$out" "$(ks_err k)"

finish
