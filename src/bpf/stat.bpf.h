/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stat's slab tables aggregated in maps: nothing goes to user space per
 * event, which reads the maps at each INTERVAL and at the end
 * (src/stat/statbpf.c) and hands their rows to the same accounting and printing
 * as the stream (src/stat/kstat.c).
 *
 *   alloc: stat_sites[call site, cache, size] (per CPU) hit, bytes += ...;
 *          stat_ptrs[ptr] = { that key, CPU, time }
 *   free:  stat_ptrs[ptr] -> key, CPU, time; delete; stat_sites[key]:
 *          frees, freed bytes, ping-pong when this CPU is not the
 *          allocation's, lifetime bucket log2(now - time)
 *
 * Counted as perf kmem stat counts (kstat.c): a free counts ping-pong when
 * its CPU is not the one of the last allocation at its pointer, and frees
 * the bytes of that allocation; an allocation at a pointer still tracked
 * (its free was not seen) ends the old one without a free.  Unlike the
 * stream, a second free of a pointer already freed (a kernel bug) finds
 * nothing and counts nothing.
 *
 * The frees pass the same task filters as the stream's (perf kmem record
 * -p sees the traced process's frees only): the handlers call stat_free()
 * after them.  The pointer map is one global preallocated hash (a free
 * often runs on another CPU); the counters are per CPU and added with
 * atomic adds, without fetch (5.10 has them): a program interrupting this
 * one on the same CPU may count into the same key.
 *
 * #included by kmemsnoop.bpf.c, whose handlers call stat_alloc() and
 * stat_free() when do_stat is set, after their filters.
 */
#ifndef KMEMSNOOP_STAT_BPF_H
#define KMEMSNOOP_STAT_BPF_H

#define STAT_EEXIST 17 /* errno EEXIST: BPF programs have no errno.h */

/* Every map keeps one entry except in --stat's BPF mode (user space sizes them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* --max-ptrs */
	__type(key, __u64);
	__type(value, struct kmt_stat_ptr);
} stat_ptrs SEC(".maps");

/* Preallocated (see ai_sites): a burst of new keys at the start of a
 * session would empty the per-CPU cache of entries allocated on use. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1);
	__type(key, struct kmt_stat_key);
	__type(value, struct kmt_stat_site);
} stat_sites SEC(".maps");

/* A cache's name, read once, when its first key is added. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, struct kmt_stat_name);
} stat_cache_names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kmt_stat_proc);
} stat_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kmt_stat_misc);
} stat_misc SEC(".maps");

/*
 * The node of each memory block plus one (0: none; user space writes
 * only the blocks that exist), and where the kernel maps physical memory:
 * a slab object's address says which node served it.  stat_linear_map 0:
 * not known, nothing looked up.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __s32);
} stat_block_node SEC(".maps");

const volatile __u64 stat_linear_map = 0;
const volatile __u32 stat_block_shift = 0; /* log2 of a memory block's bytes */
const volatile __u32 stat_blocks = 0;

/* What a new key starts from (a map value can be the source of an update). */
static const struct kmt_stat_site stat_zero_site;

#define STAT_ADD(field, v) __sync_fetch_and_add(&(field), (v))

static __always_inline struct kmt_stat_misc *stat_misc_here(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&stat_misc, &zero);
}

/* floor(log2(v)), 0 for 0: the lifetime bucket, without a loop. */
static __always_inline __u32 stat_log2(__u64 v)
{
	__u32 r = 0, s;

	s = (v > 0xffffffffULL) << 5;
	v >>= s;
	r |= s;
	s = (v > 0xffff) << 4;
	v >>= s;
	r |= s;
	s = (v > 0xff) << 3;
	v >>= s;
	r |= s;
	s = (v > 0xf) << 2;
	v >>= s;
	r |= s;
	s = (v > 0x3) << 1;
	v >>= s;
	r |= s;
	return r | (__u32)(v >> 1);
}

static __always_inline void stat_note_name(__u64 cache, struct kmem_cache *s, bool btf)
{
	struct kmt_stat_name name = {};

	if (bpf_probe_read_kernel_str(name.name, sizeof(name.name), KREAD(btf, s, name)) < 0)
		return;
	bpf_map_update_elem(&stat_cache_names, &cache, &name, BPF_NOEXIST);
}

static __always_inline struct kmt_stat_site *stat_site(struct kmt_stat_key *key,
						       struct kmem_cache *s, bool btf)
{
	struct kmt_stat_site *v = bpf_map_lookup_elem(&stat_sites, key);

	if (v)
		return v;
	if (!bpf_map_update_elem(&stat_sites, key, &stat_zero_site, BPF_NOEXIST) && s)
		stat_note_name(key->cache, s, btf);
	return bpf_map_lookup_elem(&stat_sites, key);
}

/* The process's counters, added on its first event (NULL: the map is full). */
static __always_inline struct kmt_stat_proc *stat_proc(__u32 pid)
{
	struct kmt_stat_proc *p = bpf_map_lookup_elem(&stat_procs, &pid), zero = {};

	if (p)
		return p;
	read_comm(zero.comm);
	bpf_map_update_elem(&stat_procs, &pid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&stat_procs, &pid);
}

/* The allocation at a pointer still tracked ends unseen; the new one replaces it. */
static __always_inline long stat_replace(__u64 ptr, struct kmt_stat_ptr *val,
					 struct kmt_stat_misc *m)
{
	struct kmt_stat_ptr *old = bpf_map_lookup_elem(&stat_ptrs, &ptr);
	struct kmt_stat_site *site;

	if (old) {
		site = bpf_map_lookup_elem(&stat_sites, &old->key);
		if (site) {
			STAT_ADD(site->ended, 1);
			STAT_ADD(site->ended_bytes, old->key.bytes_alloc);
		}
		STAT_ADD(m->replaced, 1);
	}
	return bpf_map_update_elem(&stat_ptrs, &ptr, val, BPF_ANY);
}

static __always_inline void stat_track(__u64 ptr, struct kmt_stat_key *key,
				       struct kmt_stat_site *site, struct kmt_stat_misc *m,
				       __u32 cpu)
{
	struct kmt_stat_ptr val = { .key = *key, .cpu = cpu };
	long err;

	val.ts = bpf_ktime_get_ns();
	err = bpf_map_update_elem(&stat_ptrs, &ptr, &val, BPF_NOEXIST);
	/* As an int: before 6.4 the hash map's update result is not
	 * sign-extended (see ai_alloc_hash). */
	if ((int)err == -STAT_EEXIST)
		err = stat_replace(ptr, &val, m);
	if (!err)
		return;
	/* -E2BIG: full; -EBUSY: its bucket is locked on this CPU.  Counted,
	 * but never alive: its free cannot be found. */
	STAT_ADD(m->ptrs_full, 1);
	STAT_ADD(site->ended, 1);
	STAT_ADD(site->ended_bytes, key->bytes_alloc);
}

/* The node that served the object at ptr, against the one asked for
 * (node, or this CPU's when -1). */
static __always_inline void stat_locate(__u64 ptr, __s32 node, struct kmt_stat_misc *m)
{
	__u64 block;
	__u32 key;
	__s32 *served;

	if (!stat_linear_map || ptr < stat_linear_map)
		return;
	block = (ptr - stat_linear_map) >> stat_block_shift;
	if (block >= stat_blocks)
		return;
	key = block;
	served = bpf_map_lookup_elem(&stat_block_node, &key);
	if (!served || *served <= 0)
		return;
	STAT_ADD(m->slab_located, 1);
	if (*served - 1 != (node >= 0 ? node : (__s32)bpf_get_numa_node_id()))
		STAT_ADD(m->slab_remote, 1);
}

/*
 * An allocation that passed the filters.  s: the event's cache where it
 * names one, else NULL; slot: the entry point's own scratch word (the
 * same program never runs twice at once on a CPU; a classic program's
 * tp_btf neighbour may run inside it); node: the NUMA node
 * asked for, -1 for any.
 */
static __always_inline void stat_alloc(__u8 type, __u64 call_site, __u64 ptr, __u64 req,
				       __u64 alloc, struct kmem_cache *s, bool btf, int slot,
				       __s32 node, const struct event_ctx *ev)
{
	struct kmt_stat_misc *m = stat_misc_here();
	struct kmt_stat_key key = { .call_site = call_site, .bytes_alloc = alloc, .type = type };
	struct kmt_stat_site *site;
	struct kmt_stat_proc *p;

	if (!m)
		return;
	if (s && !btf) {
		key.cache = (__u64)s;
	} else if (s) {
		/* With tp_btf, s is a typed pointer the verifier allows no
		 * arithmetic on; loaded back from map memory it is a number. */
		volatile __u64 *scratch = &m->scratch[slot & 3];

		*scratch = (__u64)s;
		key.cache = *scratch;
	}
	site = stat_site(&key, s, btf);
	if (!site) {
		STAT_ADD(m->sites_full, 1);
		STAT_ADD(m->sites_full_bytes, alloc);
		return;
	}
	STAT_ADD(site->hit, 1);
	STAT_ADD(site->bytes_req, req);
	STAT_ADD(site->bytes_alloc, alloc);
	if (node >= 0 && node < KMT_STAT_NODES)
		STAT_ADD(m->node_allocs[node & (KMT_STAT_NODES - 1)], 1);
	else if (node >= KMT_STAT_NODES)
		STAT_ADD(m->far_node_allocs, 1);
	stat_locate(ptr, node, m);
	stat_track(ptr, &key, site, m, ev->cpu);
	p = stat_proc(ev->pid_tgid >> 32);
	if (!p) {
		STAT_ADD(m->procs_full, 1);
		return;
	}
	STAT_ADD(p->allocs, 1);
	STAT_ADD(p->bytes_req, req);
	STAT_ADD(p->bytes_alloc, alloc);
}

static __always_inline void stat_count_free(__u32 pid, struct kmt_stat_misc *m)
{
	struct kmt_stat_proc *p = stat_proc(pid);

	if (p)
		STAT_ADD(p->frees, 1);
	else
		STAT_ADD(m->procs_full, 1);
}

/* A free that passed the task filters. */
static __always_inline void stat_free(__u64 ptr, const struct event_ctx *ev)
{
	struct kmt_stat_misc *m = stat_misc_here();
	struct kmt_stat_ptr *p, old;
	struct kmt_stat_site *site;
	__u64 now, bucket;

	if (!m)
		return;
	p = bpf_map_lookup_elem(&stat_ptrs, &ptr);
	if (!p) {
		STAT_ADD(m->untracked_frees, 1);
		/* The stream's size filter lets only the frees of the
		 * allocations it passed through, which are all tracked. */
		if (!filter_size)
			stat_count_free(ev->pid_tgid >> 32, m);
		return;
	}
	old = *p;
	if (bpf_map_delete_elem(&stat_ptrs, &ptr))
		return; /* another CPU's free of the same pointer won */
	stat_count_free(ev->pid_tgid >> 32, m);
	site = bpf_map_lookup_elem(&stat_sites, &old.key);
	if (!site)
		return;
	now = bpf_ktime_get_ns();
	bucket = stat_log2(now > old.ts ? now - old.ts : 0);
	/* clang knows the bucket is below 64 and would drop a plain mask;
	 * the verifier (5.10's at least) does not know it. */
	asm volatile("" : "+r"(bucket));
	STAT_ADD(site->frees, 1);
	STAT_ADD(site->freed_bytes, old.key.bytes_alloc);
	if (ev->cpu != old.cpu)
		STAT_ADD(site->pingpong, 1);
	STAT_ADD(site->life[bucket & (KMT_STAT_LIFE - 1)], 1);
}

#endif /* KMEMSNOOP_STAT_BPF_H */
