/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What the running kernel offers, read from its BTF and by probing. */
#ifndef KMEMSNOOP_KERNEL_FEATURES_H
#define KMEMSNOOP_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

#include "sources.h"

struct btf;

struct kernel_features {
	bool has_source[SRC_COUNT]; /* the kernel has this event */
	unsigned char kmalloc_args;     /* enum kmt_kmalloc_args */
	unsigned char cache_alloc_args; /* enum kmt_cache_alloc_args */
	unsigned char cache_free_args;  /* enum kmt_cache_free_args */
	unsigned char percpu_args;      /* enum kmt_percpu_args */
	bool atomic_fetch;              /* BPF atomic fetch-add (5.12+) */
	bool tp_btf_void_arg;           /* tp_btf may read void * arguments (6.16+) */
	bool bpf_loop;                  /* the bpf_loop() helper (5.17+) */
	bool tp_preemptible;            /* tp_btf, raw_tp, fentry run preemptibly (7.0+) */
	/* bytes_alloc of a kmalloc served by the page allocator is above
	 * this (KMALLOC_MAX_CACHE_SIZE); 0 when not known */
	unsigned long long kmalloc_large_over;
};

/*
 * Fills kf from the kernel's BTF.  Returns 0, or -1 with a one-line reason
 * in err when a tracepoint kmemsnoop needs has a layout it does not know.
 */
int kernel_features_detect(const struct btf *vmlinux, struct kernel_features *kf, char *err,
			   size_t err_size);

#endif
