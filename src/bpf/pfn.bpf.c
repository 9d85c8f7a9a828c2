// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Page frame calibration (pfn.c): records the struct page pointers of the
 * pages one thread allocates, so that user space can find where struct
 * page 0 lives; and the pages and addresses of its large kmallocs, so that
 * it can find where the kernel maps physical memory.  Its own small
 * object, loaded and gone before the main one loads, which then takes the
 * results as constants.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pfn_calib.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u32 calib_tid = 0;
__u32 calib_count = 0;
__u64 calib_pages[KMT_CALIB_PAGES] = {};

/* Large kmallocs: the compound page the allocator took, then its address. */
__u64 calib_page_size = 0;
__u64 calib_last_page = 0;
__u32 calib_last_order = 0;
__u32 calib_pairs = 0;
__u64 calib_pair_page[KMT_CALIB_PAIRS] = {};
__u64 calib_pair_addr[KMT_CALIB_PAIRS] = {};

SEC("raw_tp/mm_page_alloc")
int calibrate_pfn(__u64 *ctx)
{
	__u32 i = calib_count;

	if ((__u32)bpf_get_current_pid_tgid() != calib_tid)
		return 0;
	if (ctx[1] != 0) {
		calib_last_page = ctx[0];
		calib_last_order = ctx[1];
		return 0;
	}
	/*
	 * Order-0 movable pages only: the page tables and kernel objects
	 * the thread's faults allocate are unmovable, and one of them next
	 * to the data pages in memory would make a base off by one page
	 * agree as well as the true one.
	 */
	if (ctx[3] != MIGRATE_MOVABLE || i >= KMT_CALIB_PAGES)
		return 0;
	calib_pages[i] = ctx[0];
	calib_count = i + 1;
	return 0;
}

/* kmalloc(call_site, ptr, bytes_req, bytes_alloc, ...): a kmalloc above
 * the largest slab size is the compound page allocated just before it. */
SEC("raw_tp/kmalloc")
int calibrate_linear(__u64 *ctx)
{
	__u64 page = calib_last_page;
	__u32 i = calib_pairs;

	if ((__u32)bpf_get_current_pid_tgid() != calib_tid || !page)
		return 0;
	calib_last_page = 0;
	if (calib_last_order >= 32 || ctx[3] != calib_page_size << calib_last_order ||
	    i >= KMT_CALIB_PAIRS)
		return 0;
	calib_pair_page[i] = page;
	calib_pair_addr[i] = ctx[1];
	calib_pairs = i + 1;
	return 0;
}
