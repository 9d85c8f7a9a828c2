/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Call sites from a short kernel stack, where no argument gives one: the
 * first frame after a set of functions' text, which user space found in
 * kallsyms (textranges.c), sorted by address.
 *
 *   KMT_TEXT_VMALLOC      the vmalloc API: vfree() and vfree_atomic()
 *                         (fentry), and the vmap_area tracepoints that
 *                         stand in for the fexit of __vmalloc_node_range()
 *                         where fentry cannot attach.  The frame after it
 *                         is the return address into the function that
 *                         called vmalloc, vzalloc, kvmalloc, vfree,
 *                         kvfree ..., as __vmalloc_node_range()'s caller
 *                         argument is.  From fentry the traced function
 *                         shows as the trampoline's return address into it.
 *   KMT_TEXT_PAGE_ALLOC   the allocators (alloc_pages, folio_alloc, kmalloc
 *                         ...: alloctag.c's rule): the caller of a page
 *                         allocation in the stream of --stat --page, which
 *                         mm_page_alloc does not give.
 *
 * #included by kmemsnoop.bpf.c.
 */
#ifndef KMEMSNOOP_STACKSITE_BPF_H
#define KMEMSNOOP_STACKSITE_BPF_H

/* Each table's ranges are text_ranges[text_first[t] .. text_end[t]). */
const volatile struct kmt_text_range text_ranges[KMT_TEXT_RANGES] = {};
const volatile __u32 text_first[KMT_TEXT_TABLES] = {};
const volatile __u32 text_end[KMT_TEXT_TABLES] = {};
/* The stream's page allocations carry their caller (--stat --page). */
const volatile bool stream_page_sites = false;

/*
 * Whether ip lies in one of table's ranges, by bisection.  A global
 * function: the verifier checks it once, on its own, where an inlined copy
 * was checked again for every frame of the walk below and every way
 * through it (a vfree program went past 460,000 instructions).
 */
__noinline int text_holds(__u32 table, __u64 ip)
{
	__u32 lo, hi;

	if (table >= KMT_TEXT_TABLES)
		return 0;
	lo = text_first[table];
	hi = text_end[table];
	for (int step = 0; step < KMT_TEXT_BISECT_STEPS && lo < hi; step++) {
		__u32 mid = lo + (hi - lo) / 2;

		if (mid >= KMT_TEXT_RANGES)
			return 0;
		if (ip < text_ranges[mid].start)
			hi = mid;
		else if (ip >= text_ranges[mid].end)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/* The first frame after table's functions, or 0 if the stack has none. */
static __always_inline __u64 stack_site(void *ctx, __u32 table)
{
	__u64 ips[KMT_STACK_SITE_FRAMES];
	bool inside = false;
	long n = bpf_get_stack(ctx, ips, sizeof(ips), 0);

	if (n <= 0)
		return 0;
	for (int i = 0; i < KMT_STACK_SITE_FRAMES; i++) {
		if (i >= n / 8)
			break;
		if (text_holds(table, ips[i]))
			inside = true;
		else if (inside)
			return ips[i];
	}
	return 0;
}

#endif /* KMEMSNOOP_STACKSITE_BPF_H */
