/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --allocinfo: outstanding kernel memory per call site (or per stack),
 * aggregated in maps; nothing goes to user space per event.
 *
 *   alloc: site key -> ai_sites (per-CPU bytes and calls += ...), and
 *          ai_ptrs[ptr] = { site, bytes } so that the free finds its site
 *   free:  ai_ptrs[ptr] -> site, bytes; delete; ai_sites[site] -= ...
 *
 * With BPF atomics (5.12+, the entry points whose atomic_fetch is true)
 * the pointers live in ai_table instead, and sites are numbered:
 *
 *   alloc: site -> index, guessed from ai_site_memo and checked in
 *          ai_site_keys, else from ai_site_ids; ai_counts[index] (per-CPU
 *          array) += ...; the pointer claims a free slot of its bucket
 *          in ai_table with a compare-and-swap, then writes {index, bytes}
 *   free:  the slot holding ptr in its bucket -> index, bytes; the slot
 *          is released with a compare-and-swap; ai_counts[index] -= ...
 *
 * No lock, no free list, no hash walk on a free; a bucket is a 128-byte
 * block, so an insert or a free touches one pair of cache lines.  A full
 * bucket is counted as a full table (ptrs_full), as the hash map's -E2BIG.
 *
 * Why the slot protocol is safe: the free tracepoints fire before the
 * memory goes back to the allocator and the alloc tracepoints after it
 * came out, so one pointer's free and its next allocation never overlap,
 * and nobody reads a slot's val but the free of its pointer.  Other CPUs
 * (and programs nested on this CPU: an interrupt's allocation inside a
 * traced one) work on other pointers of the same bucket: a slot is only
 * taken by the one compare-and-swap that finds it 0, and is given back
 * (by a compare-and-swap, ordered after its val is read) only by the
 * free of its pointer.
 *
 * Without atomics (5.10, 5.11):
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
 * Pages have no call site in mm_page_alloc: their site is the caller
 * found from learned stack frames (pagesite.bpf.h), or else a short stack
 * (ai_stack_map) in which user space finds the first frame outside the
 * allocator.  Percpu areas have none in percpu_alloc_percpu before 5.19:
 * theirs is such a stack too.  With --stacks every allocation is keyed by its stack.
 *
 * #included by kmemsnoop.bpf.c, whose handlers call allocinfo_alloc() and
 * allocinfo_free() when do_allocinfo is set, after their filters.
 */
#ifndef KMEMSNOOP_ALLOCINFO_BPF_H
#define KMEMSNOOP_ALLOCINFO_BPF_H

#define AI_EEXIST 17 /* errno EEXIST: BPF programs have no errno.h */

/* The BPF program and bpf_trace_run<N>: never the caller (more glue
 * frames, if a kernel has them, are skipped by name in user space).  A
 * classic tracepoint program's stack starts where perf took the
 * registers, in the function that has the tracepoint: nothing to skip. */
#define AI_STACK_SKIP (2 & BPF_F_SKIP_FIELD_MASK)

static __always_inline __u64 ai_stack_skip(enum prog_run run)
{
	return run == RUN_CLASSIC ? 0 : AI_STACK_SKIP;
}

const volatile bool ai_total = false;  /* --allocinfo=total */
const volatile bool ai_stacks = false; /* --stacks */
/* --pprof: also what was allocated, not only what is outstanding (two more
 * adds per allocation, paid only when asked for; with ai_total the two are
 * the same and user space reads bytes and calls). */
const volatile bool ai_alloc_totals = false;
/* ai_table: a bucket is the top bits of the pointer times an odd constant
 * (the best mixed bits of the product), ai_bucket_shift = 64 - their
 * number; ai_bucket_mask: the number of buckets - 1 (a power of two - 1).
 * ai_max_sites: ai_counts' and ai_site_ids' size. */
const volatile __u32 ai_bucket_shift = 63;
const volatile __u32 ai_bucket_mask = 0;
const volatile __u32 ai_max_sites = 1;

/*
 * The percpu allocator's exported wrappers (__alloc_percpu_gfp,
 * __alloc_percpu, __alloc_reserved_percpu) where they are functions of
 * their own, [start, end) from kallsyms: where the compiler did not make
 * their call of pcpu_alloc() a tail call (arm64's 6.1), the event's
 * call_site is in them, the same for every caller; the caller is then
 * found in a short stack.  0, 0: none.
 */
#define AI_PERCPU_WRAPPERS 3
const volatile __u64 ai_percpu_wrapper[AI_PERCPU_WRAPPERS][2] = {};

static __always_inline bool ai_percpu_wrapped(__u64 site)
{
	for (int i = 0; i < AI_PERCPU_WRAPPERS; i++)
		if (site >= ai_percpu_wrapper[i][0] && site < ai_percpu_wrapper[i][1])
			return true;
	return false;
}

/* Site indexes handed out (ai_site_ids): a global counter, but only a
 * site's first allocation adds to it. */
__u32 ai_sites_used = 0;

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
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* buckets, sized from --max-ptrs */
	/* Mmapable arrays start on a page: buckets then never straddle
	 * a 128-byte block. */
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct kmt_ai_bucket);
} ai_table SEC(".maps");

/* Preallocated, like ai_sites; read-mostly: a site is added once. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u32);
} ai_site_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kmt_ai_count);
} ai_counts SEC(".maps");

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

/* Counts an allocation in the ai_stats pair <what>, <what>_bytes. */
#define AI_COUNT_LOST(what, size)                                                \
	({                                                                       \
		struct kmt_ai_stats *__st = ai_stats_here();                     \
		if (__st) {                                                      \
			__sync_fetch_and_add(&__st->what, 1);                    \
			__sync_fetch_and_add(&__st->what##_bytes, (size));       \
		}                                                                \
	})

/* Atomic although per-CPU: a program interrupting this one on the same
 * CPU may update the same site. */
static __always_inline void ai_counts_add(struct kmt_ai_count *c, __s64 bytes, __s64 calls)
{
	__sync_fetch_and_add(&c->bytes, bytes);
	__sync_fetch_and_add(&c->calls, calls);
}

/* An allocation: outstanding and allocated both grow. */
static __always_inline void ai_counts_alloc(struct kmt_ai_count *c, __s64 bytes)
{
	ai_counts_add(c, bytes, 1);
	if (!ai_alloc_totals)
		return;
	__sync_fetch_and_add(&c->alloc_bytes, bytes);
	__sync_fetch_and_add(&c->alloc_calls, 1);
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
	ai_counts_add(c, -(__s64)bytes, -1);
}

/*
 * A pointer still in ai_ptrs is being allocated again: its free went
 * unseen (an event BPF skipped, see recursion_misses).  Retire the old
 * allocation, count it, and track the new one.
 */
static __always_inline int ai_replace(__u64 ptr, struct kmt_ai_ptr *val)
{
	struct kmt_ai_ptr *old = bpf_map_lookup_elem(&ai_ptrs, &ptr);

	if (old) {
		ai_site_sub(old->site, old->bytes);
		AI_COUNT_LOST(replaced, old->bytes);
	}
	return bpf_map_update_elem(&ai_ptrs, &ptr, val, BPF_ANY);
}

/* --- with atomics: ai_table, numbered sites --------------------------------- */

#define AI_READ(x) (*(volatile __u64 *)&(x))

/* The site's index in ai_counts, numbering it on its first allocation; -1
 * when the table of sites is full. */
static __always_inline long ai_site_number(__u64 site)
{
	__u32 *idx = bpf_map_lookup_elem(&ai_site_ids, &site), new;

	if (idx)
		return *idx;
	if (ai_sites_used >= ai_max_sites)
		return -1; /* full: keep the counter from ever wrapping */
	new = __sync_fetch_and_add(&ai_sites_used, 1);
	if (new >= ai_max_sites)
		return -1;
	/* Another CPU may number the same site at once: the first update
	 * wins and both use its index (the loser's stays unused). */
	bpf_map_update_elem(&ai_site_ids, &site, &new, BPF_NOEXIST);
	idx = bpf_map_lookup_elem(&ai_site_ids, &site);
	return idx ? *idx : -1;
}

/*
 * A guess of each site's index at a slot of its key's hash, checked
 * against ai_site_keys (every numbered site's key, at its index): a right
 * guess spares ai_site_ids' hash lookup, about 30 ns, a third of a slab
 * allocation's program.  An index belongs to one site for the whole
 * session, so the check is exact, and a guess that another CPU or a nested
 * program overwrote at the same moment (each is one 32-bit store) is only
 * a miss.  Shared by the CPUs: written only on a miss.
 */
#define AI_MEMO_SLOTS 1024
#define AI_MEMO_SHIFT 54 /* 64 - log2(AI_MEMO_SLOTS) */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, AI_MEMO_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} ai_site_memo SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* ai_counts' size */
	__type(key, __u32);
	__type(value, __u64);
} ai_site_keys SEC(".maps");

static __always_inline long ai_site_index(__u64 site)
{
	__u32 slot = (__u32)((site * KMT_HASH_MUL) >> AI_MEMO_SHIFT), i;
	__u32 *guess = bpf_map_lookup_elem(&ai_site_memo, &slot);
	__u64 *key;
	long idx;

	/* Site 0 (a stack's id) would match the key of a number not yet
	 * given, which reads 0. */
	if (guess && site) {
		i = *(volatile __u32 *)guess;
		key = bpf_map_lookup_elem(&ai_site_keys, &i);
		if (key && AI_READ(*key) == site)
			return i;
	}
	idx = ai_site_number(site);
	if (idx < 0)
		return idx;
	i = idx;
	/* A number's key only ever reads 0 or its site, so the order in
	 * which other CPUs see these two stores cannot make a wrong hit. */
	key = bpf_map_lookup_elem(&ai_site_keys, &i);
	if (key && AI_READ(*key) != site)
		AI_READ(*key) = site;
	if (guess)
		*(volatile __u32 *)guess = i;
	return idx;
}

static __always_inline void ai_count_sub(__u32 idx, __u64 bytes)
{
	struct kmt_ai_count *c = bpf_map_lookup_elem(&ai_counts, &idx);

	if (!c)
		return;
	ai_counts_add(c, -(__s64)bytes, -1);
}

static __always_inline struct kmt_ai_bucket *ai_bucket_of(__u64 ptr)
{
	__u32 b = (__u32)((ptr * KMT_HASH_MUL) >> (ai_bucket_shift & 63)) & ai_bucket_mask;

	return bpf_map_lookup_elem(&ai_table, &b);
}

/* 0, or -1 when the pointer's bucket is full. */
static __always_inline int ai_table_insert(__u64 ptr, __u64 val)
{
	struct kmt_ai_bucket *bk = ai_bucket_of(ptr);
	__u64 old;

	if (!bk)
		return -1;
	/* Still there: a missed free (see ai_replace).  The slot is this
	 * pointer's, nobody else touches it. */
	for (int i = 0; i < KMT_AI_BUCKET_SLOTS; i++) {
		if (AI_READ(bk->slot[i].ptr) != ptr)
			continue;
		old = AI_READ(bk->slot[i].val);
		bk->slot[i].val = val;
		ai_count_sub((__u32)old, old >> 32);
		AI_COUNT_LOST(replaced, old >> 32);
		return 0;
	}
	for (int i = 0; i < KMT_AI_BUCKET_SLOTS; i++) {
		if (AI_READ(bk->slot[i].ptr))
			continue;
		/* Lost to another CPU or a nested program: try the next. */
		if (__sync_val_compare_and_swap(&bk->slot[i].ptr, 0, ptr) != 0)
			continue;
		bk->slot[i].val = val;
		return 0;
	}
	return -1;
}

/* true when counted; *counted (if given): the site's index. */
static __always_inline bool ai_alloc_table(__u64 site, __u64 ptr, __u64 bytes, __u64 *counted)
{
	struct kmt_ai_count *c = NULL;
	long idx = ai_site_index(site);
	__u32 i = idx;

	if (idx >= 0)
		c = bpf_map_lookup_elem(&ai_counts, &i);
	if (!c) {
		AI_COUNT_LOST(sites_full, bytes);
		return false;
	}
	/* bytes >= 4G cannot be stored in a slot (no allocator gives that
	 * much at once): counted as not tracked rather than truncated. */
	if (!ai_total && (bytes >> 32 || ai_table_insert(ptr, i | bytes << 32))) {
		AI_COUNT_LOST(ptrs_full, bytes);
		return false;
	}
	ai_counts_alloc(c, bytes);
	if (counted)
		*counted = i;
	return true;
}

static __always_inline void ai_count_order(__u8 type, __u64 bytes, __u32 order)
{
	struct kmt_ai_stats *st;

	/* A split high-order page freed piece by piece: the allocation ends
	 * at the first free of its head page; say how often that happened. */
	if (type == KMT_TYPE_PAGES && bytes != ((__u64)page_size << (order & 31))) {
		st = ai_stats_here();
		if (st)
			__sync_fetch_and_add(&st->order_mismatch, 1);
	}
}

static __always_inline void ai_count_untracked(__u8 type)
{
	struct kmt_ai_stats *st = ai_stats_here();

	/* Allocated before the session, or by what the filters left out. */
	if (st && type < KMT_TYPE_COUNT)
		__sync_fetch_and_add(&st->untracked_frees[type], 1);
}

static __always_inline int ai_free_table(__u8 type, __u64 ptr, __u32 order)
{
	struct kmt_ai_bucket *bk = ai_bucket_of(ptr);
	__u64 val;

	if (!bk)
		return 0;
	for (int i = 0; i < KMT_AI_BUCKET_SLOTS; i++) {
		if (AI_READ(bk->slot[i].ptr) != ptr)
			continue;
		val = AI_READ(bk->slot[i].val);
		/* Read before the slot is given back; and a second free of
		 * the same pointer at once (a kernel bug) counts once. */
		if (__sync_val_compare_and_swap(&bk->slot[i].ptr, ptr, 0) != ptr)
			return 0;
		if (!(val >> 32))
			return 0; /* a large kmalloc's page: its kmalloc counts it */
		ai_count_order(type, val >> 32, order);
		ai_count_sub((__u32)val, val >> 32);
		return 0;
	}
	ai_count_untracked(type);
	return 0;
}

/* --- without atomics: ai_ptrs, ai_sites ----------------------------------------- */

/* true when counted; *counted (if given): the site's key. */
static __always_inline bool ai_alloc_hash(__u64 site, __u64 ptr, __u64 bytes, __u64 *counted)
{
	struct kmt_ai_ptr val;
	struct kmt_ai_count *c;
	long err;

	c = ai_site_counts(site);
	if (!c) {
		AI_COUNT_LOST(sites_full, bytes);
		return false;
	}
	if (!ai_total) {
		val.site = site;
		val.bytes = bytes;
		err = bpf_map_update_elem(&ai_ptrs, &ptr, &val, BPF_NOEXIST);
		/* As an int: before 6.4 the verifier calls the hash map's
		 * update directly, whose int result is not sign-extended
		 * (-EEXIST reads 0xffffffef). */
		if ((int)err == -AI_EEXIST)
			err = ai_replace(ptr, &val);
		if (err) { /* -E2BIG: full; -EBUSY: its bucket is locked on this CPU */
			AI_COUNT_LOST(ptrs_full, bytes);
			return false;
		}
	}
	ai_counts_alloc(c, bytes);
	if (counted)
		*counted = site;
	return true;
}

static __always_inline int ai_free_hash(__u8 type, __u64 ptr, __u32 order)
{
	struct kmt_ai_ptr *p, val;

	p = bpf_map_lookup_elem(&ai_ptrs, &ptr);
	if (!p) {
		ai_count_untracked(type);
		return 0;
	}
	val = *p;
	if (bpf_map_delete_elem(&ai_ptrs, &ptr))
		return 0; /* another CPU's free of the same pointer won */
	if (!val.bytes)
		return 0; /* a large kmalloc's page: its kmalloc counts it */
	ai_count_order(type, val.bytes, order);
	ai_site_sub(val.site, val.bytes);
	return 0;
}

/* --- the handlers' entry points ---------------------------------------------------- */

/*
 * An allocation that passed the filters.  atomic_fetch: a compile-time
 * constant of the entry point (5.12+ only); bytes: what it took.  true
 * when it was counted; then *counted (if given) is what it was counted
 * under, for ai_uncount().
 */
static __always_inline bool allocinfo_alloc_site(void *ctx, enum prog_run atomic_fetch, __u8 type,
						 __u64 site, __u64 ptr, __u64 bytes,
						 __u64 *counted)
{
	if (ptr <= KMT_ZERO_SIZE_PTR)
		return false; /* failed, or kmalloc(0): no memory to account */
	/* A page's caller from learned frames (pagesite.bpf.h), else its
	 * stack; so for a percpu allocation without a call site (the event
	 * has none before 5.19) or with one in a wrapper of the allocator. */
	if (type == KMT_TYPE_PAGES && !ai_stacks)
		site = pagesite_find(ctx);
	if (ai_stacks || (type == KMT_TYPE_PAGES && !site) ||
	    (type == KMT_TYPE_PERCPU && (!site || ai_percpu_wrapped(site)))) {
		long id = bpf_get_stackid(ctx, &ai_stack_map, ai_stack_skip(atomic_fetch));

		if (id < 0) { /* -EEXIST: its bucket holds another stack */
			AI_COUNT_LOST(stack_failed, bytes);
			return false;
		}
		site = id;
	}
	if (atomic_fetch)
		return ai_alloc_table(site, ptr, bytes, counted);
	return ai_alloc_hash(site, ptr, bytes, counted);
}

static __always_inline int allocinfo_alloc(void *ctx, enum prog_run atomic_fetch, __u8 type,
					   __u64 site,
					   __u64 ptr, __u64 bytes)
{
	allocinfo_alloc_site(ctx, atomic_fetch, type, site, ptr, bytes, NULL);
	return 0;
}

/* --- taking an allocation back (large.bpf.h) ------------------------------------- */

/* Undoes the counts of an allocation of bytes counted under site (what
 * allocinfo_alloc_site() said), allocated totals included: it was not an
 * allocation of its own. */
static __always_inline void ai_uncount(enum prog_run atomic_fetch, __u64 site, __u64 bytes)
{
	struct kmt_ai_count *c;
	__u32 idx = site;

	c = atomic_fetch ? bpf_map_lookup_elem(&ai_counts, &idx)
			 : bpf_map_lookup_elem(&ai_sites, &site);
	if (!c)
		return;
	ai_counts_add(c, -(__s64)bytes, -1);
	if (!ai_alloc_totals)
		return;
	__sync_fetch_and_add(&c->alloc_bytes, -(__s64)bytes);
	__sync_fetch_and_add(&c->alloc_calls, -1);
}

/*
 * ptr's entry in the pointer table, or NULL.  Only the allocation of ptr
 * (running now) and its free touch it, and the free cannot run before the
 * allocation has returned.
 */
static __always_inline __u64 *ai_table_val(__u64 ptr)
{
	struct kmt_ai_bucket *bk = ai_bucket_of(ptr);

	if (!bk)
		return NULL;
	for (int i = 0; i < KMT_AI_BUCKET_SLOTS; i++)
		if (AI_READ(bk->slot[i].ptr) == ptr)
			return &bk->slot[i].val;
	return NULL;
}

/* A large kmalloc's page, its counts taken back: its free, which follows
 * the kfree of its kmalloc, finds it with 0 bytes and counts nothing (and
 * no untracked free). */
static __always_inline void ai_disown(enum prog_run atomic_fetch, __u64 page)
{
	struct kmt_ai_ptr *p;
	__u64 *val;

	if (ai_total)
		return;
	if (atomic_fetch) {
		val = ai_table_val(page);
		if (val)
			*val = 0;
		return;
	}
	p = bpf_map_lookup_elem(&ai_ptrs, &page);
	if (p)
		p->bytes = 0;
}

/* Forgets ptr without counting anything: its counts were taken back. */
static __always_inline void ai_forget(enum prog_run atomic_fetch, __u64 ptr)
{
	struct kmt_ai_bucket *bk;

	if (ai_total)
		return;
	if (!atomic_fetch) {
		bpf_map_delete_elem(&ai_ptrs, &ptr);
		return;
	}
	bk = ai_bucket_of(ptr);
	if (!bk)
		return;
	for (int i = 0; i < KMT_AI_BUCKET_SLOTS; i++)
		if (AI_READ(bk->slot[i].ptr) == ptr) {
			__sync_val_compare_and_swap(&bk->slot[i].ptr, ptr, 0);
			return;
		}
}

/* order: the page order of a page free, 0 otherwise. */
static __always_inline int allocinfo_free(enum prog_run atomic_fetch, __u8 type, __u64 ptr,
					  __u32 order)
{
	if (ai_total)
		return 0; /* the frees are attached for another part, if at all */
	if (ptr <= KMT_ZERO_SIZE_PTR)
		return 0;
	if (atomic_fetch)
		return ai_free_table(type, ptr, order);
	return ai_free_hash(type, ptr, order);
}

#endif /* KMEMSNOOP_ALLOCINFO_BPF_H */
