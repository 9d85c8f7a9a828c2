/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --hist: count allocations in per-CPU maps by log2 size, nothing sent to
 * user space per event.  #included by kmemsnoop.bpf.c; its handlers call
 * hist_alloc()/hist_free() when do_hist is set, after their filters.
 *
 * The plain --hist path is one per-CPU array lookup and three adds.  Keys
 * (--hist-by cache/callsite/comm/cgroup, and the live view's tables) add, per
 * kind, a lookup in hist_front, a per-CPU array indexed by a hash of the
 * key (no hashing of the kernel's hash map, no locks); only keys that find
 * their front slot taken go to the per-CPU hash hist_keys.  A key is
 * inserted once and never removed, so its counters only grow.  A cache's
 * name is read when its key is first inserted, never per event.
 */
#ifndef KMEMSNOOP_HIST_BPF_H
#define KMEMSNOOP_HIST_BPF_H

#include "histmaps.h"

const volatile __u8 hist_value = KMT_HIST_ALLOC;
/* Bit (1 << enum kmt_hist_by) for each key kind counted in hist_keys. */
const volatile __u8 hist_key_mask = 0;
/* hist_front has 1 << hist_front_bits entries (set with its size). */
const volatile __u32 hist_front_bits = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kmt_hist_cpu);
} hist_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1); /* sized by user space when keys are counted */
	__type(key, struct kmt_hist_key);
	__type(value, struct kmt_hist_keyed);
} hist_keys SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* sized by user space when keys are counted */
	__type(key, __u32);
	__type(value, struct kmt_hist_front);
} hist_front SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* sized by user space with --hist-by cache */
	__type(key, __u64);
	__type(value, struct kmt_hist_cache_name);
} hist_cache_names SEC(".maps");

/* What a new key starts from (a map value can be the source of an update). */
static const struct kmt_hist_keyed hist_zero;

static __always_inline bool hist_key_wanted(enum kmt_hist_by kind)
{
	return hist_key_mask & (1U << kind);
}

static __always_inline void hist_note_cache_name(__u64 cache, struct kmem_cache *s, bool btf)
{
	struct kmt_hist_cache_name name = {};

	if (bpf_probe_read_kernel_str(name.name, sizeof(name.name), KREAD(btf, s, name)) < 0)
		return;
	bpf_map_update_elem(&hist_cache_names, &cache, &name, BPF_NOEXIST);
}

/*
 * n added to a counter.  preempt: the run can be preempted (see
 * hist_level()), and another task's program may add to the same counter
 * between this one's load and store: a locked add, which no run can come
 * into the middle of.  Elsewhere a plain add.
 */
#define HIST_ADD(preempt, field, n)                                                              \
	do {                                                                                     \
		if (preempt)                                                                     \
			__sync_fetch_and_add(&(field), (n));                                     \
		else                                                                             \
			(field) += (n);                                                          \
	} while (0)

/*
 * The key's hist_front entry, claimed if free; NULL if another key holds
 * it.  Only level 0 comes here, and two level-0 programs that claim never
 * overlap on a CPU (see hist_level()): no atomics needed to claim.  A run
 * that can be preempted never claims (claim false): only adds to an entry
 * already claimed, which is never given up.
 */
static __always_inline struct kmt_hist_keyed *hist_front_entry(struct kmt_hist_key *key,
							      struct kmem_cache *s, bool btf,
							      bool claim)
{
	__u32 i = kmt_hist_front_slot(key->id, key->id2, key->kind, hist_front_bits);
	struct kmt_hist_front *e = bpf_map_lookup_elem(&hist_front, &i);

	if (!e)
		return NULL;
	if (e->tag == key->id + 1 && e->id2 == key->id2 && e->kind == key->kind)
		return &e->v;
	if (e->tag || !claim)
		return NULL;
	e->id2 = key->id2;
	e->kind = key->kind;
	/* The tag last: a reader that sees it sees the rest. */
	asm volatile("" ::: "memory");
	e->tag = key->id + 1;
	if (s)
		hist_note_cache_name(key->id, s, btf);
	return &e->v;
}

/* n: 1 counts an allocation under the key, -1 takes one back (large.bpf.h):
 * a key is never removed, so one not found then was counted as untracked. */
static __always_inline void hist_count_key(struct kmt_hist_level *l, struct kmt_hist_key *key,
					   __u32 slot, __u64 size, struct kmem_cache *s, bool btf,
					   __s64 n, bool preempt)
{
	struct kmt_hist_keyed *v =
		key->level ? NULL : hist_front_entry(key, s, btf, n > 0 && !preempt);

	if (!v)
		v = bpf_map_lookup_elem(&hist_keys, key);
	if (!v && n > 0) {
		if (!bpf_map_update_elem(&hist_keys, key, &hist_zero, BPF_NOEXIST) && s)
			hist_note_cache_name(key->id, s, btf);
		v = bpf_map_lookup_elem(&hist_keys, key);
	}
	if (!v) {
		if (key->kind < KMT_HIST_KEYED_KINDS)
			HIST_ADD(preempt, l->untracked[key->kind], n);
		return;
	}
	HIST_ADD(preempt, v->slots[slot], n);
	HIST_ADD(preempt, v->bytes, n * size);
}

/*
 * The address of the cache as a number.  With tp_btf, s is a typed
 * pointer the verifier allows no arithmetic on (the front slot hashes
 * it); the same value loaded back from map memory is a plain number.  A
 * word per level, and one for the runs that can be preempted: of those
 * only one program has a typed cache (tp_ or tpn_kmem_cache_alloc), and a
 * program never runs twice at once on a CPU.
 */
static __always_inline __u64 hist_cache_id(struct kmt_hist_cpu *h, __u32 level,
					   struct kmem_cache *s, bool btf, bool preempt)
{
	volatile __u64 *scratch = &h->scratch[preempt ? KMT_HIST_LEVELS : level];

	if (!btf)
		return (__u64)s;

	*scratch = (__u64)s;
	return *scratch;
}

static __always_inline void hist_count_keys(struct kmt_hist_cpu *h, __u32 level, __u8 type,
					    __u64 call_site, __u32 slot, __u64 size, __u64 alloc,
					    struct kmem_cache *s, bool btf, __s64 n, bool preempt)
{
	struct kmt_hist_level *l = &h->level[level];
	struct kmt_hist_key key = { .level = level };

	if (hist_key_wanted(KMT_BY_CACHE)) {
		key.kind = KMT_BY_CACHE;
		key.id = s ? hist_cache_id(h, level, s, btf, preempt) :
			     KMT_HIST_PSEUDO(type, alloc);
		hist_count_key(l, &key, slot, size, s, btf, n, preempt);
	}
	if (hist_key_wanted(KMT_BY_CALLSITE)) {
		key.kind = KMT_BY_CALLSITE;
		key.id = call_site;
		hist_count_key(l, &key, slot, size, NULL, btf, n, preempt);
	}
	/* The task's, also for an allocation in an interrupt (as comm). */
	if (hist_key_wanted(KMT_BY_CGROUP)) {
		key.kind = KMT_BY_CGROUP;
		key.id = bpf_get_current_cgroup_id();
		hist_count_key(l, &key, slot, size, NULL, btf, n, preempt);
	}
	/* Last: fills id2 too. */
	if (hist_key_wanted(KMT_BY_COMM)) {
		key.kind = KMT_BY_COMM;
		read_comm((char *)&key.id); /* fills id and id2 */
		hist_count_key(l, &key, slot, size, NULL, btf, n, preempt);
	}
}

/*
 * Each nesting level on a CPU counts into its own kmt_hist_level.  depth
 * is per CPU and only this CPU's programs touch it: one that interrupts
 * another between its load and store of depth finishes before the
 * interrupted one counts anything, and every later one sees the raised
 * depth.  So no two programs ever add to the same counter at once, and
 * plain adds (no locked instructions) are exact.  Only the compiler could
 * reorder (an interrupt sees its CPU's stores in program order): the
 * stores to depth are volatile and fenced.
 *
 * A run that can be preempted (run_preemptible(): tp_btf, raw_tp and
 * fentry programs on 7.x) breaks that: another task's run can come between
 * its load and store of depth, and the two end in any order.  Such a run
 * leaves depth alone and adds with locked instructions at the level it
 * finds: the programs that add plainly cannot be preempted, so none of
 * their loads and stores has a preempted run's add in between, and an
 * interrupt that nests in them still finds depth raised.
 */
static __always_inline __u32 hist_level(__u64 depth)
{
	return depth < KMT_HIST_LEVELS ? depth : KMT_HIST_LEVELS - 1;
}

static __always_inline void hist_set_depth(struct kmt_hist_cpu *h, __u64 depth)
{
	asm volatile("" ::: "memory");
	*(volatile __u64 *)&h->depth = depth;
	asm volatile("" ::: "memory");
}

/* n allocations of one size from one call site (a bulk call's objects:
 * one count, not one per object); ptr 0: failed.  The level they are
 * counted at, or -1 when they are not counted. */
static __always_inline int hist_alloc_n(__u8 type, __u64 call_site, __u64 ptr, __u64 req,
					__u64 alloc, struct kmem_cache *s, bool btf, __s64 n,
					bool preempt)
{
	__u32 zero = 0, level, slot;
	__u64 size = hist_value == KMT_HIST_REQ ? req : alloc, depth;
	struct kmt_hist_cpu *h = bpf_map_lookup_elem(&hist_cpu, &zero);
	struct kmt_hist_level *l;

	if (!h)
		return -1;
	depth = *(volatile __u64 *)&h->depth;
	if (!preempt)
		hist_set_depth(h, depth + 1);
	level = hist_level(depth);
	l = &h->level[level];
	if (!ptr) {
		HIST_ADD(preempt, l->failed[type], n);
	} else {
		slot = kmt_hist_slot(size) & (KMT_HIST_SLOTS - 1);
		HIST_ADD(preempt, l->slots[type][slot], n);
		HIST_ADD(preempt, l->bytes_alloc[type], alloc * n);
		HIST_ADD(preempt, l->bytes_req[type], req * n);
		if (hist_key_mask)
			hist_count_keys(h, level, type, call_site, slot, size, alloc, s, btf, n,
					preempt);
	}
	if (!preempt)
		hist_set_depth(h, depth);
	return level;
}

static __always_inline int hist_alloc(__u8 type, __u64 call_site, __u64 ptr, __u64 req,
				      __u64 alloc, struct kmem_cache *s, bool btf,
				      enum prog_run run)
{
	return hist_alloc_n(type, call_site, ptr, req, alloc, s, btf, 1, run_preemptible(run));
}

/* Whether a program at this point could take back what was counted at level
 * (hist_undo): only on the level it runs at, which no other program on this
 * CPU touches meanwhile; any level with locked adds. */
static __always_inline bool hist_undo_possible(__u32 level, enum prog_run run)
{
	__u32 zero = 0;
	struct kmt_hist_cpu *h = bpf_map_lookup_elem(&hist_cpu, &zero);

	if (run_preemptible(run))
		return h != NULL;
	return h && hist_level(*(volatile __u64 *)&h->depth) == level;
}

/*
 * Takes back a successful allocation hist_alloc() counted at level, in the
 * same task and context (large.bpf.h: the page allocation under a large
 * kmalloc, or the kernel's first trace of it), with what it was counted
 * with.  The caller checked hist_undo_possible(level).
 */
static __always_inline void hist_undo(__u8 type, __u64 call_site, __u64 req, __u64 alloc,
				      __u32 level, enum prog_run run)
{
	__u32 zero = 0, slot;
	__u64 size = hist_value == KMT_HIST_REQ ? req : alloc, depth;
	struct kmt_hist_cpu *h = bpf_map_lookup_elem(&hist_cpu, &zero);
	bool preempt = run_preemptible(run);
	struct kmt_hist_level *l;

	if (!h)
		return;
	depth = *(volatile __u64 *)&h->depth;
	if (!preempt && hist_level(depth) != level)
		return;
	if (!preempt)
		hist_set_depth(h, depth + 1);
	level = hist_level(level);
	l = &h->level[level];
	slot = kmt_hist_slot(size) & (KMT_HIST_SLOTS - 1);
	HIST_ADD(preempt, l->slots[type][slot], -1);
	HIST_ADD(preempt, l->bytes_alloc[type], -alloc);
	HIST_ADD(preempt, l->bytes_req[type], -req);
	if (hist_key_mask)
		hist_count_keys(h, level, type, call_site, slot, size, alloc, NULL, false, -1,
				preempt);
	if (!preempt)
		hist_set_depth(h, depth);
}

static __always_inline int hist_free(__u8 type, __u64 ptr, enum prog_run run)
{
	bool preempt = run_preemptible(run);
	__u32 zero = 0;
	struct kmt_hist_cpu *h;
	__u64 depth;

	if (type != KMT_TYPE_PAGES && ptr <= KMT_ZERO_SIZE_PTR /* frees nothing */)
		return 0;
	h = bpf_map_lookup_elem(&hist_cpu, &zero);
	if (!h)
		return 0;
	depth = *(volatile __u64 *)&h->depth;
	if (!preempt)
		hist_set_depth(h, depth + 1);
	HIST_ADD(preempt, h->level[hist_level(depth)].frees[type], 1);
	if (!preempt)
		hist_set_depth(h, depth);
	return 0;
}

#endif /* KMEMSNOOP_HIST_BPF_H */
