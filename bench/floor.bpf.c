// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor of any BPF tracer: programs that do nothing, on the tracepoints
 * kmemsnoop uses.  What the workload loses with these attached is the cost
 * of the kernel calling into BPF at all.  The clock_ programs (floor
 * --clock) each read the clock every record's time comes from and do
 * nothing else: what any tracer that times each event pays at least.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EMPTY(tp) SEC("tp_btf/" #tp) int empty_##tp(void *ctx) { return 0; }

/* floor --clock loads these instead. */
#define CLOCK(tp)                                    \
	SEC("tp_btf/" #tp) int clock_##tp(void *ctx) \
	{                                            \
		bpf_ktime_get_ns();                  \
		return 0;                            \
	}

#define BOTH(tp) EMPTY(tp) CLOCK(tp)

BOTH(kmalloc)
BOTH(kmalloc_node)
BOTH(kmem_cache_alloc)
BOTH(kmem_cache_alloc_node)
BOTH(kfree)
BOTH(kmem_cache_free)
BOTH(mm_page_alloc)
BOTH(mm_page_free)
