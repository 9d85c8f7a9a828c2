/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the running kernel offers, read from its BTF and by probing. */
#ifndef KMEMSNOOP_KERNEL_FEATURES_H
#define KMEMSNOOP_KERNEL_FEATURES_H

#include <stdbool.h>

struct btf;

/* The tracepoints kmemsnoop knows, in the BPF object's naming. */
enum kmt_tracepoint {
	TP_KMALLOC,
	TP_KMALLOC_NODE,
	TP_KMEM_CACHE_ALLOC,
	TP_KMEM_CACHE_ALLOC_NODE,
	TP_KFREE,
	TP_KMEM_CACHE_FREE,
	TP_MM_PAGE_ALLOC,
	TP_MM_PAGE_FREE,
	TP_SCHED_PROCESS_FORK,
	TP_SCHED_PROCESS_FREE,
	TP_COUNT,
};

struct kernel_features {
	bool has_tp[TP_COUNT];
	unsigned char kmalloc_args;     /* enum kmt_kmalloc_args */
	unsigned char cache_alloc_args; /* enum kmt_cache_alloc_args */
	unsigned char cache_free_args;  /* enum kmt_cache_free_args */
	bool atomic_fetch;              /* BPF atomic fetch-add (5.12+) */
	bool tp_btf_void_arg;           /* tp_btf may read void * arguments (6.16+) */
};

const char *tracepoint_name(enum kmt_tracepoint tp);
/* Event class (EV_*) a tracepoint belongs to, 0 for the sched ones. */
unsigned int tracepoint_class(enum kmt_tracepoint tp);
/* kfree, kmem_cache_free, mm_page_free. */
bool tracepoint_is_free(enum kmt_tracepoint tp);

/*
 * Fills kf from the kernel's BTF.  Returns 0, or -1 with a one-line reason
 * in err when a tracepoint kmemsnoop needs has a layout it does not know.
 */
int kernel_features_detect(const struct btf *vmlinux, struct kernel_features *kf, char *err,
			   size_t err_size);

#endif
