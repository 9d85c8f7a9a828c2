#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The BPF programs on crafted arguments (tests/bpf_progs.c): paths a
# workload cannot provoke on demand (a missed free, a full bucket, a page
# freed with another order, two parts of the object counting one event),
# on this kernel.  Its PASS/FAIL/SKIP lines are the results.
#
# vmtest: every VM: the BPF programs on crafted arguments, on this kernel.
. "$(dirname "$0")/../lib.sh"

require_root
if [ ! -x "$TOP/tests/bpf_progs" ]; then
	echo "FAIL: progs: no $TOP/tests/bpf_progs (make builds it)"
	exit 1
fi
exec "$TOP/tests/bpf_progs"
