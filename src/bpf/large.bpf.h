/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Large kmallocs, counted once by --allocinfo and --hist.
 *
 * A kmalloc above the largest kmalloc cache is served by the page
 * allocator, and the kernel traces it as two allocations, one after the
 * other in the same task on the same CPU:
 *
 *   mm_page_alloc  page P, order o     (___kmalloc_large_node, kmalloc_order)
 *   kmalloc        ptr X, bytes_alloc = PAGE_SIZE << o, the caller's site
 *
 * and, where __do_kmalloc_node() calls the traced __kmalloc_large_node_noprof()
 * (6.12, 6.18; not 6.1, whose helper is untraced), a second kmalloc of the same
 * X: first from the helper's call in __kmalloc_noprof and friends, then
 * from the real caller.  Its free is
 * kfree(X) followed by mm_page_free(P, o).
 *
 * The page allocation is counted when it happens: nothing tells yet that
 * a kmalloc follows.  Each task remembers its last allocation of a page
 * of a large kmalloc's size (large_recs, by task: it may move to another
 * CPU in between); a large kmalloc in the same task whose size is that
 * page's takes the page's counts back and is counted itself; a second
 * kmalloc of the same pointer from another site moves the first one's
 * counts to it.  So only large kmallocs and pages of their orders pay
 * anything.  Then:
 *
 *   --allocinfo  the page's entry stays in the pointer table with 0 bytes,
 *                so that its free counts nothing and is not an untracked
 *                free; kfree(X) subtracts the kmalloc.
 *   --hist       the page goes into hist_large_pages, whose mm_page_free
 *                is then not counted (the kfree is).
 *
 * The stream (text, -o, JSON) keeps every event, as the kernel's trace.
 *
 * An interrupt that allocates a page of the same order between the two
 * (it runs as the task it interrupted) would be taken for it: its counts
 * go to the kmalloc's site, the real page's stay (the totals stay right,
 * their attribution is off).
 *
 * #included by kmemsnoop.bpf.c after hist.bpf.h and allocinfo.bpf.h.
 */
#ifndef KMEMSNOOP_LARGE_BPF_H
#define KMEMSNOOP_LARGE_BPF_H

/* bytes_alloc of a kmalloc above this comes from the page allocator
 * (KMALLOC_MAX_CACHE_SIZE; ~0: unknown, large kmallocs are not matched);
 * large_min_order: the order of the smallest such page allocation. */
const volatile __u64 large_kmalloc_over = ~0ULL;
const volatile __u32 large_min_order = 64;

/* The kernel's second trace of a large kmalloc follows the first within
 * the same function, microseconds apart, unless the (virtual) CPU is
 * stalled in between: a guest's vCPU can be descheduled by its host for
 * milliseconds (a 1 ms bound missed one of 40 in a loaded VM).  One later
 * than this is another allocation that got the same pointer back, its page
 * allocated on another CPU (the record is otherwise consumed by the page
 * allocation that comes first), never taken back. */
#define LARGE_SECOND_WITHIN_NS 1000000000ULL

enum large_state {
	LARGE_NONE,
	LARGE_PAGE,    /* a page of a large order was counted */
	LARGE_KMALLOC, /* a large kmalloc was counted (its page's counts taken back) */
};

struct large_rec {
	__u64 pid_tgid;
	__u64 page;      /* LARGE_PAGE: the struct page address */
	__u64 ptr;       /* LARGE_KMALLOC: the pointer */
	__u64 call_site; /* LARGE_KMALLOC: its call site */
	__u64 ai_site;   /* what --allocinfo counted it under (ai_uncount) */
	__u64 ts;        /* LARGE_KMALLOC: when it was counted */
	__u32 order;     /* LARGE_PAGE */
	__u8 state;      /* enum large_state */
	__u8 matched;    /* the kmalloc being counted took its page's counts back */
	__u8 ai_counted;
	__u8 hist_counted;
	__u8 hist_level;
};

/* By task, not by CPU: the task can be moved to another CPU between the
 * page and its kmalloc, or between the kernel's two traces of it (both
 * seen in the 7.2 VM).  LRU: a task that ended leaves its record to be
 * pushed out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, struct large_rec);
} large_recs SEC(".maps");

/* --hist: the pages of large kmallocs whose allocation it took back, so
 * that their frees are not counted either.  Full: a page's allocation is
 * then left counted, and so is its free. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* sized by user space with --hist */
	__type(key, __u64);
	__type(value, __u8);
} hist_large_pages SEC(".maps");

/* The task's record, made empty when it has none.  Every CPU's idle task
 * is pid 0: its interrupts' records are the CPU's. */
static __always_inline struct large_rec *large_rec_of(__u64 pid_tgid)
{
	__u64 key = pid_tgid ? pid_tgid : ~0ULL - bpf_get_smp_processor_id();
	struct large_rec *r = bpf_map_lookup_elem(&large_recs, &key);
	struct large_rec empty = { .pid_tgid = pid_tgid };

	if (r)
		return r;
	bpf_map_update_elem(&large_recs, &key, &empty, BPF_NOEXIST);
	return bpf_map_lookup_elem(&large_recs, &key);
}

/* A page allocation that passed the filters and was counted (ai_counted
 * under ai_site; hist_level >= 0 when --hist counted it). */
static __always_inline void large_note_page(__u64 *ctx, __u64 pid_tgid, __u32 order,
					    bool ai_counted, __u64 ai_site, int hist_level)
{
	struct large_rec *r = large_rec_of(pid_tgid);

	if (!r)
		return;
	r->pid_tgid = pid_tgid;
	r->page = arg_number(ctx, 0);
	r->order = order;
	r->ai_counted = ai_counted;
	r->ai_site = ai_site;
	r->hist_counted = hist_level >= 0;
	r->hist_level = hist_level;
	r->state = r->page ? LARGE_PAGE : LARGE_NONE;
}

/* The page's counts, taken back: its kmalloc counts it. */
static __always_inline void large_uncount_page(struct large_rec *r, enum prog_run atomic_fetch,
					       __u64 bytes)
{
	__u8 one = 1;

	if (do_allocinfo && r->ai_counted) {
		ai_uncount(atomic_fetch, r->ai_site, bytes);
		ai_disown(atomic_fetch, r->page);
	}
	if (do_hist && r->hist_counted && hist_undo_possible(r->hist_level, atomic_fetch) &&
	    !bpf_map_update_elem(&hist_large_pages, &r->page, &one, BPF_ANY))
		hist_undo(KMT_TYPE_PAGES, 0, bytes, bytes, r->hist_level, atomic_fetch);
}

/* The kernel's first trace of this kmalloc, taken back: this one, from the
 * real caller, counts it. */
static __always_inline void large_uncount_first(struct large_rec *r, enum prog_run atomic_fetch,
						__u64 ptr, __u64 req, __u64 bytes)
{
	if (do_allocinfo && r->ai_counted) {
		ai_uncount(atomic_fetch, r->ai_site, bytes);
		ai_forget(atomic_fetch, ptr);
	}
	if (do_hist && r->hist_counted && hist_undo_possible(r->hist_level, atomic_fetch))
		hist_undo(KMT_TYPE_KMALLOC, r->call_site, req, bytes, r->hist_level,
			  atomic_fetch);
}

/*
 * Before a successful kmalloc of more than large_kmalloc_over bytes that
 * passed the filters is counted: takes back the page it was served from,
 * or the kernel's first trace of it.  Returns the task's record, for
 * large_kmalloc_after(); *second: this is the kernel's second trace.
 */
static __always_inline struct large_rec *large_kmalloc_before(__u64 *ctx,
							      enum prog_run atomic_fetch,
							       __u64 pid_tgid, __u64 ptr,
							       __u64 req, bool *second)
{
	__u64 bytes = ARG(ctx, 3);
	struct large_rec *r = large_rec_of(pid_tgid);

	*second = false;
	if (!r)
		return r;
	r->matched = false;
	if (r->pid_tgid != pid_tgid)
		return r;
	*second = r->state == LARGE_KMALLOC && r->ptr == ptr && r->call_site != ARG(ctx, 0) &&
		  bpf_ktime_get_ns() - r->ts < LARGE_SECOND_WITHIN_NS;
	if (*second) {
		large_uncount_first(r, atomic_fetch, ptr, req, bytes);
	} else if (r->state == LARGE_PAGE && bytes == (__u64)page_size << (r->order & 31)) {
		large_uncount_page(r, atomic_fetch, bytes);
		r->matched = true;
	}
	return r;
}

/* After it was counted (ai_counted under ai_site; hist_level >= 0 when
 * --hist counted it): what a second trace of it will take back. */
static __always_inline void large_kmalloc_after(__u64 *ctx, struct large_rec *r, bool second,
						__u64 pid_tgid, __u64 ptr, bool ai_counted,
						__u64 ai_site, int hist_level)
{
	if (!r)
		return;
	/* A second trace is expected only of a kmalloc whose page was taken
	 * back (the kernel traces both from inside the page path); after it,
	 * nothing more.  So a stale record never takes back an allocation
	 * that was freed since. */
	r->state = second || !r->matched ? LARGE_NONE : LARGE_KMALLOC;
	r->ts = bpf_ktime_get_ns();
	r->pid_tgid = pid_tgid;
	r->ptr = ptr;
	r->call_site = ARG(ctx, 0);
	r->ai_counted = ai_counted;
	r->ai_site = ai_site;
	r->hist_counted = hist_level >= 0;
	r->hist_level = hist_level;
}

/* A page free: whether it is the page of a large kmalloc whose allocation
 * --hist took back (and so is not counted either). */
static __always_inline bool large_page_free_skipped(__u64 *ctx, __u32 order)
{
	__u64 page;

	if (!do_hist || order < large_min_order)
		return false;
	page = arg_number(ctx, 0);
	return bpf_map_delete_elem(&hist_large_pages, &page) == 0;
}

#endif /* KMEMSNOOP_LARGE_BPF_H */
