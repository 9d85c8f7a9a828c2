// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Page frame calibration (pfn.c): records the struct page pointers of the
 * pages one thread allocates, so that user space can find where struct
 * page 0 lives.  Its own small object, loaded and gone before the main
 * one loads, which then takes the result as a constant.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "pfn_calib.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

__u32 calib_tid = 0;
__u32 calib_count = 0;
__u64 calib_pages[KMT_CALIB_PAGES] = {};

SEC("raw_tp/mm_page_alloc")
int calibrate_pfn(__u64 *ctx)
{
	__u32 i = calib_count;

	/*
	 * Order-0 movable pages of the calibrating thread only: the page
	 * tables and kernel objects its faults allocate are unmovable, and
	 * one of them next to the data pages in memory would make a base
	 * off by one page agree as well as the true one.
	 */
	if ((__u32)bpf_get_current_pid_tgid() != calib_tid || ctx[1] != 0 ||
	    ctx[3] != MIGRATE_MOVABLE)
		return 0;
	if (i >= KMT_CALIB_PAGES)
		return 0;
	calib_pages[i] = ctx[0];
	calib_count = i + 1;
	return 0;
}
