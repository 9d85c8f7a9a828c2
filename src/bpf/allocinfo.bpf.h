/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --allocinfo: outstanding kernel memory per call site (or per stack),
 * aggregated in maps; nothing goes to user space per event.
 *
 *   alloc: site key -> ai_sites (per-CPU bytes and calls += ...), and
 *          ai_ptrs[ptr] = { site, bytes } so that the free finds its site
 *   free:  ai_ptrs[ptr] -> site, bytes; delete; ai_sites[site] -= ...
 *
 * ai_ptrs is one global preallocated hash: a free often runs on another
 * CPU than its allocation.  ai_sites is per-CPU, so the counters it holds
 * are never shared between CPUs; a CPU's share goes negative when it frees
 * what another allocated.  Their adds are still atomic (an uncontended
 * locked add on a line this CPU owns): a program on this CPU interrupted
 * by another one on the same site would otherwise lose an update.
 *
 * With --allocinfo=total only the allocation side runs (the free programs
 * are not attached) and ai_ptrs keeps one entry.
 *
 * Pages have no call site in mm_page_alloc: their site is a short stack
 * (ai_stack_map) in which user space finds the first frame outside the
 * page allocator.  With --stacks every allocation is keyed by its stack.
 *
 * Included by kmemsnoop.bpf.c; uses its ARG(), min_size, max_size and
 * page_size.
 */
#ifndef KMEMSNOOP_ALLOCINFO_BPF_H
#define KMEMSNOOP_ALLOCINFO_BPF_H

#define AI_EEXIST 17 /* errno EEXIST: BPF programs have no errno.h */

/* kmalloc(0) returns ZERO_SIZE_PTR (16), shared by every caller. */
#define AI_ZERO_SIZE_PTR 16

const volatile bool ai_total = false;  /* --allocinfo=total */
const volatile bool ai_stacks = false; /* --stacks */

/* Every map keeps one entry except in allocinfo mode (user space sizes them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* --max-ptrs */
	__type(key, __u64);
	__type(value, struct kmt_ai_ptr);
} ai_ptrs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1);
	/* Preallocated: entries allocated on first use (bpf_mem_alloc) come
	 * from a small per-CPU cache refilled later, and fail when a burst
	 * of new sites (the start of a session) empties it. */
	__type(key, __u64);
	__type(value, struct kmt_ai_count);
} ai_sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 1); /* --max-stacks */
	__uint(key_size, sizeof(__u32));
	__uint(value_size, KMT_AI_PAGE_FRAMES * sizeof(__u64)); /* deeper with --stacks */
} ai_stack_map SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kmt_ai_stats);
} ai_stats SEC(".maps");

static __always_inline struct kmt_ai_stats *ai_stats_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&ai_stats, &zero);
}

static __always_inline void ai_count_lost(__u64 *calls, __u64 *bytes, __u64 size)
{
	__sync_fetch_and_add(calls, 1);
	__sync_fetch_and_add(bytes, size);
}

static __always_inline struct kmt_ai_count *ai_site_counts(__u64 site)
{
	struct kmt_ai_count zero = {}, *c = bpf_map_lookup_elem(&ai_sites, &site);

	if (c)
		return c;
	bpf_map_update_elem(&ai_sites, &site, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&ai_sites, &site);
}

static __always_inline void ai_site_sub(__u64 site, __u64 bytes)
{
	struct kmt_ai_count *c = bpf_map_lookup_elem(&ai_sites, &site);

	/* Sites are never deleted, so a tracked pointer's site is there. */
	if (!c)
		return;
	__sync_fetch_and_add(&c->bytes, -(__s64)bytes);
	__sync_fetch_and_add(&c->calls, -1);
}

/*
 * A pointer still in ai_ptrs is being allocated again: its free went
 * unseen (an event BPF skipped, see recursion_misses).  Retire the old
 * allocation, count it, and track the new one.
 */
static __always_inline int ai_replace(__u64 ptr, struct kmt_ai_ptr *val)
{
	struct kmt_ai_ptr *old = bpf_map_lookup_elem(&ai_ptrs, &ptr);
	struct kmt_ai_stats *st;

	if (old) {
		ai_site_sub(old->site, old->bytes);
		st = ai_stats_here();
		if (st)
			ai_count_lost(&st->replaced, &st->replaced_bytes, old->bytes);
	}
	return bpf_map_update_elem(&ai_ptrs, &ptr, val, BPF_ANY);
}

static __always_inline int allocinfo_alloc(void *ctx, __u8 type, __u64 site, __u64 ptr,
					   __u64 bytes_req, __u64 bytes)
{
	struct kmt_ai_ptr val;
	struct kmt_ai_count *c;
	struct kmt_ai_stats *st;
	long err;

	if (ptr <= AI_ZERO_SIZE_PTR)
		return 0; /* failed, or kmalloc(0): no memory to account */
	if (bytes_req < min_size || bytes_req > max_size)
		return 0;
	if (ai_stacks || type == KMT_TYPE_PAGES) {
		long id = bpf_get_stackid(ctx, &ai_stack_map, 0);

		if (id < 0) { /* -EEXIST: its bucket holds another stack */
			st = ai_stats_here();
			if (st)
				ai_count_lost(&st->stack_failed, &st->stack_failed_bytes, bytes);
			return 0;
		}
		site = id;
	}
	c = ai_site_counts(site);
	if (!c) {
		st = ai_stats_here();
		if (st)
			ai_count_lost(&st->sites_full, &st->sites_full_bytes, bytes);
		return 0;
	}
	if (!ai_total) {
		val.site = site;
		val.bytes = bytes;
		err = bpf_map_update_elem(&ai_ptrs, &ptr, &val, BPF_NOEXIST);
		if (err == -AI_EEXIST)
			err = ai_replace(ptr, &val);
		if (err) { /* -E2BIG: full; -EBUSY: its bucket is locked on this CPU */
			st = ai_stats_here();
			if (st)
				ai_count_lost(&st->ptrs_full, &st->ptrs_full_bytes, bytes);
			return 0;
		}
	}
	__sync_fetch_and_add(&c->bytes, bytes);
	__sync_fetch_and_add(&c->calls, 1);
	return 0;
}

/* order: the page order of a page free, 0 otherwise. */
static __always_inline int allocinfo_free(__u8 type, __u64 ptr, __u32 order)
{
	struct kmt_ai_ptr *p, val;
	struct kmt_ai_stats *st;

	if (ptr <= AI_ZERO_SIZE_PTR)
		return 0;
	p = bpf_map_lookup_elem(&ai_ptrs, &ptr);
	if (!p) {
		/* Allocated before the session, or by what the filters left out. */
		st = ai_stats_here();
		if (st && type < 3)
			__sync_fetch_and_add(&st->untracked_frees[type], 1);
		return 0;
	}
	val = *p;
	if (bpf_map_delete_elem(&ai_ptrs, &ptr))
		return 0; /* another CPU's free of the same pointer won */
	/* A split high-order page freed piece by piece: the allocation ends
	 * at the first free of its head page; say how often that happened. */
	if (type == KMT_TYPE_PAGES && val.bytes != ((__u64)page_size << (order & 31))) {
		st = ai_stats_here();
		if (st)
			__sync_fetch_and_add(&st->order_mismatch, 1);
	}
	ai_site_sub(val.site, val.bytes);
	return 0;
}

#endif /* KMEMSNOOP_ALLOCINFO_BPF_H */
