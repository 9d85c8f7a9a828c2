// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor of any BPF tracer: programs that do nothing, on the tracepoints
 * kmemsnoop uses.  What the workload loses with these attached is the cost
 * of the kernel calling into BPF at all.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define EMPTY(tp) SEC("tp_btf/" #tp) int empty_##tp(void *ctx) { return 0; }

EMPTY(kmalloc)
EMPTY(kmalloc_node)
EMPTY(kmem_cache_alloc)
EMPTY(kmem_cache_alloc_node)
EMPTY(kfree)
EMPTY(kmem_cache_free)
EMPTY(mm_page_alloc)
EMPTY(mm_page_free)
