/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Finding the kernel's struct page array so BPF can turn pages into pfns. */
#ifndef KMEMSNOOP_PFN_H
#define KMEMSNOOP_PFN_H

#include <stddef.h>
#include <linux/types.h>

struct btf;

/*
 * The calibration: a small BPF object of its own (pfn.bpf.c), loaded once
 * for both measurements and gone before the main object loads.  NULL with
 * a reason in err.
 */
struct pfn_calib;
struct pfn_calib *pfn_calib_open(const struct btf *vmlinux, char *err, size_t err_size);
void pfn_calib_close(struct pfn_calib *c);

/*
 * Finds vmemmap (the address of pfn 0's struct page) by allocating a few
 * pages in this thread while the program watches, and matching the struct
 * page addresses it sees with the pfns /proc/self/pagemap gives.  Returns
 * 0 and sets *base, or -1 with a reason in err.
 */
int pfn_calib_vmemmap(struct pfn_calib *c, __u64 *base, char *err, size_t err_size);

/*
 * Then the kernel's linear map (the virtual address of physical address
 * 0, through which slab objects and large kmallocs are addressed):
 * resizes a few pipes so that each allocates its ring with a kmalloc too
 * large for a slab, and matches the address each returns with the pfn of
 * the pages the page allocator gave it.  Returns 0 and sets *offset, or
 * -1 with a reason in err.
 */
int pfn_calib_linear(struct pfn_calib *c, __u64 *offset, char *err, size_t err_size);

/* The vmemmap candidate on which most (page address, pfn) pairs agree. */
int pfn_pick_base(const __u64 *pages, int npages, const __u64 *pfns, int npfns,
		  __u64 page_struct_size, __u64 *base);

#endif
