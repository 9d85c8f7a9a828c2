// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kmemsnoop's BPF side: one program per kmem tracepoint writes a kmemtrace
 * record into the ring buffer of the CPU it runs on.
 *
 * Each tracepoint has four entry points built from one handler:
 *   tp_<tp>   tp_btf, sequence numbers from an atomic fetch-add (5.12+)
 *   tpc_<tp>  tp_btf, without atomic fetch (5.10, 5.11)
 *   raw_<tp>  raw_tp, atomic fetch-add
 *   rawc_<tp> raw_tp, without
 * User space loads exactly one of them per tracepoint (autoload), because a
 * kernel rejects an instruction it does not know even in dead code, and
 * raw_tp is only the fallback where tp_btf cannot attach.  Argument layouts
 * that differ between kernels are rodata constants the verifier prunes on.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "kmemsnoop.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Filters and layouts: set before load, constant to the verifier. */
const volatile bool filter_pid = false;
const volatile bool filter_tid = false;
const volatile bool filter_cpu = false;
const volatile bool filter_comm = false;
const volatile bool filter_size = false;
/* kmemsnoop itself: its own output would otherwise feed the trace. */
const volatile __u32 self_tgid = 0;
const volatile __u32 target_tid = 0;
const volatile __u32 target_cpu = 0;
const volatile char target_comm[KMT_COMM_LEN] = {};
const volatile __u64 min_size = 0;
const volatile __u64 max_size = ~0ULL;
const volatile __u32 page_size = 4096; /* the system's, set by user space */
const volatile __u8 kmalloc_args = KMT_KMALLOC_NODE;
const volatile __u8 cache_alloc_args = KMT_CACHE_ALLOC_CACHE;
const volatile __u8 cache_free_args = KMT_CACHE_FREE_CACHE;
/* Wake the consumer once per this many records on a CPU. */
const volatile __u64 wakeup_records = 4096;
/* enum kmt_mode: stream records, or aggregate (--hist, --allocinfo). */
const volatile __u8 mode = KMT_MODE_STREAM;

struct kmt_loss losses[KMT_MAX_CPUS] = {};
struct kmt_cpu_counters cpu_counters[KMT_MAX_CPUS] = {};
/* Where struct page 0 lives: found by user space (pfn calibration). */
__u64 vmemmap_base = 0;

/* Page calibration: the page allocations of one thread, see pfn.c. */
__u32 calib_tid = 0;
__u32 calib_count = 0;
__u64 calib_pages[KMT_CALIB_PAGES] = {};

struct ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16); /* a template: user space makes the real rings */
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1); /* one per possible CPU, set by user space */
	__type(key, __u32);
	__array(values, struct ring);
} rings SEC(".maps");

/* -p: the thread groups being traced (the target and its descendants). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps");

/* --min-size/--max-size: allocations that passed, so their frees pass too. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* sized by user space when a size filter is set */
	__type(key, __u64);
	__type(value, __u8);
} sized_ptrs SEC(".maps");

/*
 * Tracepoint argument i.  An opaque load: left to itself, clang merges loads
 * of different arguments in two branches into one load through a computed
 * ctx pointer, which the verifier rejects.
 */
#define ARG(ctx, i)                                                              \
	({                                                                       \
		__u64 __v;                                                       \
		asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(__v) : "r"(ctx), "i"((i) * 8)); \
		__v;                                                             \
	})

#include "allocinfo.bpf.h"

/* An event that has passed the task filters, on its way into a ring. */
struct event_ctx {
	__u64 pid_tgid;
	__u32 cpu;
	void *ring;
};

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < KMT_COMM_LEN; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			return true;
	}
	return true;
}

static __always_inline bool task_passes(struct event_ctx *ev)
{
	ev->pid_tgid = bpf_get_current_pid_tgid();
	ev->cpu = bpf_get_smp_processor_id();
	if ((__u32)(ev->pid_tgid >> 32) == self_tgid)
		return false;
	if (filter_tid && (__u32)ev->pid_tgid != target_tid)
		return false;
	if (filter_cpu && ev->cpu != target_cpu)
		return false;
	if (filter_pid) {
		__u32 tgid = ev->pid_tgid >> 32;

		if (!bpf_map_lookup_elem(&traced_tgids, &tgid))
			return false;
	}
	if (filter_comm) {
		char comm[KMT_COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		if (!comm_matches(comm))
			return false;
	}
	return true;
}

static __always_inline bool alloc_size_passes(__u64 ptr, __u64 bytes_req)
{
	__u8 one = 1;

	if (!filter_size)
		return true;
	if (bytes_req < min_size || bytes_req > max_size)
		return false;
	bpf_map_update_elem(&sized_ptrs, &ptr, &one, BPF_ANY);
	return true;
}

static __always_inline bool free_size_passes(__u64 ptr)
{
	if (!filter_size)
		return true;
	return bpf_map_delete_elem(&sized_ptrs, &ptr) == 0;
}

static __always_inline void count_loss(__u32 cpu, __u32 size)
{
	if (cpu >= KMT_MAX_CPUS)
		return;
	__sync_fetch_and_add(&losses[cpu].events, 1);
	__sync_fetch_and_add(&losses[cpu].bytes, size);
}

static __always_inline void *reserve(struct event_ctx *ev, __u32 size)
{
	void *rec;

	ev->ring = bpf_map_lookup_elem(&rings, &ev->cpu);
	if (!ev->ring) {
		count_loss(ev->cpu, size);
		return NULL;
	}
	rec = bpf_ringbuf_reserve(ev->ring, size, 0);
	if (!rec)
		count_loss(ev->cpu, size);
	return rec;
}

/*
 * Batch wakeups: a wakeup per record would cost more than the record.  A
 * per-CPU count rather than bpf_ringbuf_query(), which reads the consumer
 * position another CPU writes: a cache miss per event.
 */
static __always_inline void submit(struct event_ctx *ev, void *rec)
{
	__u64 flags = BPF_RB_NO_WAKEUP;
	struct kmt_cpu_counters *cc;

	if (ev->cpu < KMT_MAX_CPUS) {
		cc = &cpu_counters[ev->cpu];
		if (++cc->records >= wakeup_records) {
			cc->records = 0;
			flags = BPF_RB_FORCE_WAKEUP;
		}
	}
	bpf_ringbuf_submit(rec, flags);
}

/*
 * Sequence numbers count per CPU: one counter for all CPUs was a cache line
 * every allocating CPU wrote on every event.  Atomic even so, because a
 * program on another tracepoint can interrupt this one on the same CPU.
 */
static __always_inline __s32 next_seq(const struct event_ctx *ev, bool atomic_fetch)
{
	__u32 *counter, seq;

	if (ev->cpu >= KMT_MAX_CPUS)
		return 0;
	counter = &cpu_counters[ev->cpu].seq;
	if (atomic_fetch)
		return __sync_fetch_and_add(counter, 1);
	/* No fetch-add before 5.12: a nested program may repeat a number. */
	seq = *counter;
	__sync_fetch_and_add(counter, 1);
	return seq;
}

static __always_inline void fill_core(struct kmt_core *core, const struct event_ctx *ev, __u8 event,
				      __u8 type, __u16 size, bool atomic_fetch, __u64 call_site,
				      __u64 ptr)
{
	core->event_id = event;
	core->type_id = type;
	core->event_size = size;
	core->seq_num = next_seq(ev, atomic_fetch);
	core->call_site = call_site;
	core->ptr = ptr;
}

static __always_inline void fill_alloc(struct kmt_alloc *a, __u64 req, __u64 alloc, __u32 gfp,
				       __s32 node)
{
	a->bytes_req = req;
	a->bytes_alloc = alloc;
	a->gfp_flags = gfp;
	a->numa_node = node;
}

/* Two loads from the task where the kernel hands out typed task pointers
 * (5.11+); the bpf_get_current_comm() helper costs several times more. */
static __always_inline void read_comm(char *comm)
{
	struct task_struct *task;

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)) {
		bpf_get_current_comm(comm, KMT_COMM_LEN);
		return;
	}
	task = bpf_get_current_task_btf();
	((__u64 *)comm)[0] = *(__u64 *)&task->comm[0];
	((__u64 *)comm)[1] = *(__u64 *)&task->comm[8];
}

static __always_inline void fill_context(struct kmt_feat_time *time, struct kmt_feat_task *task,
					 struct event_ctx *ev)
{
	time->size = sizeof(*time);
	time->id = KMT_FEAT_TIME;
	time->reserved = 0;
	time->cpu = ev->cpu;
	time->timestamp = bpf_ktime_get_ns();
	task->size = sizeof(*task);
	task->id = KMT_FEAT_TASK;
	task->reserved = 0;
	task->pid = ev->pid_tgid >> 32;
	task->tid = (__u32)ev->pid_tgid;
	read_comm(task->comm);
	task->reserved2 = 0;
}

static __always_inline void fill_cache_hdr(struct kmt_feat_cache *cache, __u8 flags)
{
	cache->size = sizeof(*cache);
	cache->id = KMT_FEAT_CACHE;
	cache->flags = flags;
}

/* Read a field of a kernel struct: directly with typed (tp_btf) arguments,
 * through bpf_probe_read_kernel with raw ones.  'btf' is a compile-time
 * constant, so each entry point keeps only its own branch. */
#define KREAD(btf, ptr, field) ((btf) ? (ptr)->field : BPF_CORE_READ(ptr, field))

static __always_inline __u32 slab_account_mask(void)
{
	if (bpf_core_enum_value_exists(enum _slab_flag_bits, _SLAB_ACCOUNT))
		return 1U << bpf_core_enum_value(enum _slab_flag_bits, _SLAB_ACCOUNT);
	return 0x04000000U; /* SLAB_ACCOUNT before slab flags became an enum */
}

/*
 * Reading a cache's name is a string copy per event; a small per-CPU table
 * of the caches seen last turns it into a compare and a copy.
 */
#define NAME_SLOTS 64

struct name_slot {
	__u64 cache;
	__u32 flags;
	char name[KMT_CACHE_NAME_LEN];
};

struct name_table {
	struct name_slot slot[NAME_SLOTS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct name_table);
} cache_names SEC(".maps");

static __always_inline void fill_cache_from_struct(struct kmt_feat_cache *cache,
						   struct kmem_cache *s, bool btf)
{
	__u64 addr = (__u64)s;
	__u32 zero = 0, flags;
	struct name_table *table = bpf_map_lookup_elem(&cache_names, &zero);
	struct name_slot *slot;

	if (!table) {
		fill_cache_hdr(cache, KMT_CACHE_NO_NAME);
		cache->name[0] = 0;
		return;
	}
	slot = &table->slot[(addr >> 8 ^ addr >> 16) & (NAME_SLOTS - 1)];
	if (slot->cache != addr) {
		/* Invalidate first: a program preempted on this CPU in the
		 * middle of the refill must not see a half-written name. */
		slot->cache = 0;
		flags = KREAD(btf, s, flags);
		slot->flags = (flags & slab_account_mask()) ? KMT_CACHE_ACCOUNTED : 0;
		if (bpf_probe_read_kernel_str(slot->name, sizeof(slot->name), KREAD(btf, s, name)) < 0)
			slot->name[0] = 0;
		slot->cache = addr;
	}
	fill_cache_hdr(cache, slot->flags);
	__builtin_memcpy(cache->name, slot->name, sizeof(cache->name));
}

#include "hist.bpf.h"

/* --- kmalloc, kmalloc_node ------------------------------------------------ */

static __always_inline int on_kmalloc(__u64 *ctx, bool atomic_fetch, bool has_node)
{
	struct event_ctx ev;
	struct kmt_rec_kmalloc *rec;
	__u64 ptr = ARG(ctx, 1), req = ARG(ctx, 2);

	if (!task_passes(&ev) || !alloc_size_passes(ptr, req))
		return 0;
	if (mode == KMT_MODE_HIST)
		return hist_alloc(KMT_TYPE_KMALLOC, ARG(ctx, 0), ptr, req, ARG(ctx, 3), NULL, false);
	if (mode == KMT_MODE_ALLOCINFO)
		return allocinfo_alloc(ctx, atomic_fetch, KMT_TYPE_KMALLOC, ARG(ctx, 0), ptr, req, ARG(ctx, 3));
	rec = reserve(&ev, sizeof(*rec));
	if (!rec)
		return 0;
	fill_core(&rec->core, &ev, KMT_EVENT_ALLOC, KMT_TYPE_KMALLOC, sizeof(*rec), atomic_fetch,
		  ARG(ctx, 0), ptr);
	fill_alloc(&rec->alloc, req, ARG(ctx, 3), ARG(ctx, 4), has_node ? (__s32)ARG(ctx, 5) : -1);
	fill_context(&rec->time, &rec->task, &ev);
	submit(&ev, rec);
	return 0;
}

static __always_inline int on_kmalloc_tp(__u64 *ctx, bool atomic_fetch, bool btf)
{
	return on_kmalloc(ctx, atomic_fetch, kmalloc_args == KMT_KMALLOC_NODE);
}

static __always_inline int on_kmalloc_node(__u64 *ctx, bool atomic_fetch, bool btf)
{
	return on_kmalloc(ctx, atomic_fetch, true);
}

/* --- kmem_cache_alloc, kmem_cache_alloc_node ------------------------------ */

static __always_inline int on_cache_alloc(__u64 *ctx, bool atomic_fetch, bool btf, bool node_tp)
{
	struct event_ctx ev;
	struct kmt_rec_cache_alloc *rec;
	struct kmem_cache *s = (void *)ARG(ctx, 2);
	__u64 ptr = ARG(ctx, 1), req, alloc;
	__u32 gfp;
	__s32 node;

	if (!task_passes(&ev))
		return 0;
	if (!node_tp && cache_alloc_args == KMT_CACHE_ALLOC_CACHE) {
		req = KREAD(btf, s, object_size);
		alloc = KREAD(btf, s, size);
		gfp = ARG(ctx, 3);
		node = ARG(ctx, 4);
	} else {
		req = ARG(ctx, 2);
		alloc = ARG(ctx, 3);
		gfp = ARG(ctx, 4);
		node = node_tp ? (__s32)ARG(ctx, 5) : -1;
	}
	if (!alloc_size_passes(ptr, req))
		return 0;
	if (mode == KMT_MODE_HIST)
		return hist_alloc(KMT_TYPE_CACHE, ARG(ctx, 0), ptr, req, alloc,
				  !node_tp && cache_alloc_args == KMT_CACHE_ALLOC_CACHE ? s : NULL, btf);
	if (mode == KMT_MODE_ALLOCINFO)
		return allocinfo_alloc(ctx, atomic_fetch, KMT_TYPE_CACHE, ARG(ctx, 0), ptr, req, alloc);
	rec = reserve(&ev, sizeof(*rec));
	if (!rec)
		return 0;
	fill_core(&rec->core, &ev, KMT_EVENT_ALLOC, KMT_TYPE_CACHE, sizeof(*rec), atomic_fetch,
		  ARG(ctx, 0), ptr);
	fill_alloc(&rec->alloc, req, alloc, gfp, node);
	fill_context(&rec->time, &rec->task, &ev);
	if (!node_tp && cache_alloc_args == KMT_CACHE_ALLOC_CACHE) {
		fill_cache_from_struct(&rec->cache, s, btf);
	} else {
		fill_cache_hdr(&rec->cache, KMT_CACHE_NO_NAME);
		rec->cache.name[0] = 0;
	}
	submit(&ev, rec);
	return 0;
}

static __always_inline int on_cache_alloc_tp(__u64 *ctx, bool atomic_fetch, bool btf)
{
	return on_cache_alloc(ctx, atomic_fetch, btf, false);
}

static __always_inline int on_cache_alloc_node(__u64 *ctx, bool atomic_fetch, bool btf)
{
	return on_cache_alloc(ctx, atomic_fetch, btf, true);
}

/* --- kfree, kmem_cache_free ----------------------------------------------- */

static __always_inline int on_kfree(__u64 *ctx, bool atomic_fetch, bool btf)
{
	struct event_ctx ev;
	struct kmt_rec_kfree *rec;
	__u64 ptr = ARG(ctx, 1);

	/* Whoever frees it, a tracked allocation is freed: no task filter. */
	if (mode == KMT_MODE_ALLOCINFO)
		return allocinfo_free(atomic_fetch, KMT_TYPE_KMALLOC, ptr, 0);
	/* kfree(NULL) is an event too, as in the kernel's own trace. */
	if (!task_passes(&ev) || !free_size_passes(ptr))
		return 0;
	if (mode == KMT_MODE_HIST)
		return hist_free(KMT_TYPE_KMALLOC, ptr);
	rec = reserve(&ev, sizeof(*rec));
	if (!rec)
		return 0;
	fill_core(&rec->core, &ev, KMT_EVENT_FREE, KMT_TYPE_KMALLOC, sizeof(*rec), atomic_fetch,
		  ARG(ctx, 0), ptr);
	fill_context(&rec->time, &rec->task, &ev);
	submit(&ev, rec);
	return 0;
}

static __always_inline int on_cache_free(__u64 *ctx, bool atomic_fetch, bool btf)
{
	struct event_ctx ev;
	struct kmt_rec_cache_free *rec;
	__u64 ptr = ARG(ctx, 1);

	if (mode == KMT_MODE_ALLOCINFO)
		return allocinfo_free(atomic_fetch, KMT_TYPE_CACHE, ptr, 0);
	if (!task_passes(&ev) || !free_size_passes(ptr))
		return 0;
	if (mode == KMT_MODE_HIST)
		return hist_free(KMT_TYPE_CACHE, ptr);
	rec = reserve(&ev, sizeof(*rec));
	if (!rec)
		return 0;
	fill_core(&rec->core, &ev, KMT_EVENT_FREE, KMT_TYPE_CACHE, sizeof(*rec), atomic_fetch,
		  ARG(ctx, 0), ptr);
	fill_context(&rec->time, &rec->task, &ev);
	if (cache_free_args == KMT_CACHE_FREE_CACHE) {
		fill_cache_from_struct(&rec->cache, (struct kmem_cache *)ARG(ctx, 2), btf);
	} else if (cache_free_args == KMT_CACHE_FREE_NAME) {
		fill_cache_hdr(&rec->cache, 0);
		if (bpf_probe_read_kernel_str(rec->cache.name, sizeof(rec->cache.name),
					      (const void *)ARG(ctx, 2)) < 0)
			rec->cache.name[0] = 0;
	} else {
		fill_cache_hdr(&rec->cache, KMT_CACHE_NO_NAME);
		rec->cache.name[0] = 0;
	}
	submit(&ev, rec);
	return 0;
}

/* --- mm_page_alloc, mm_page_free ------------------------------------------ */

/*
 * The page pointer is stored, then read back from the ring: with tp_btf it
 * is a typed pointer the verifier will not do arithmetic on, but a value
 * loaded from ring memory is a plain number.
 */
static __always_inline __u64 page_to_pfn(volatile __u64 *stored_page)
{
	__u64 page = *stored_page;

	if (!page)
		return KMT_PFN_NONE;
	if (!vmemmap_base)
		return KMT_PFN_NONE;
	return (page - vmemmap_base) / bpf_core_type_size(struct page);
}

static __always_inline void fill_page(struct kmt_feat_page *fp, __u64 *stored_page, __u32 order,
				      __s32 migratetype)
{
	fp->size = sizeof(*fp);
	fp->id = KMT_FEAT_PAGE;
	fp->order = order;
	fp->migratetype = migratetype;
	fp->pfn = page_to_pfn(stored_page);
}

static __always_inline int on_page_alloc(__u64 *ctx, bool atomic_fetch, bool btf)
{
	struct event_ctx ev;
	struct kmt_rec_page_alloc *rec;
	__u32 order = ARG(ctx, 1);
	__u64 bytes = (__u64)page_size << (order & 31);

	if (!task_passes(&ev) || !alloc_size_passes(ARG(ctx, 0), bytes))
		return 0;
	if (mode == KMT_MODE_HIST)
		return hist_alloc(KMT_TYPE_PAGES, 0, ARG(ctx, 0), bytes, bytes, NULL, btf);
	if (mode == KMT_MODE_ALLOCINFO)
		return allocinfo_alloc(ctx, atomic_fetch, KMT_TYPE_PAGES, 0,
				       ai_arg_number(ctx, 0), bytes, bytes);
	rec = reserve(&ev, sizeof(*rec));
	if (!rec)
		return 0;
	/* Pages have no call site in this tracepoint: the ABI's 0. */
	fill_core(&rec->core, &ev, KMT_EVENT_ALLOC, KMT_TYPE_PAGES, sizeof(*rec), atomic_fetch, 0,
		  ARG(ctx, 0));
	fill_alloc(&rec->alloc, bytes, bytes, ARG(ctx, 2), -1);
	fill_context(&rec->time, &rec->task, &ev);
	fill_page(&rec->page, &rec->core.ptr, order, ARG(ctx, 3));
	submit(&ev, rec);
	return 0;
}

static __always_inline int on_page_free(__u64 *ctx, bool atomic_fetch, bool btf)
{
	struct event_ctx ev;
	struct kmt_rec_page_free *rec;
	__u32 order = ARG(ctx, 1);

	if (mode == KMT_MODE_ALLOCINFO)
		return allocinfo_free(atomic_fetch, KMT_TYPE_PAGES, ai_arg_number(ctx, 0), order);
	if (!task_passes(&ev) || !free_size_passes(ARG(ctx, 0)))
		return 0;
	if (mode == KMT_MODE_HIST)
		return hist_free(KMT_TYPE_PAGES, ARG(ctx, 0));
	rec = reserve(&ev, sizeof(*rec));
	if (!rec)
		return 0;
	fill_core(&rec->core, &ev, KMT_EVENT_FREE, KMT_TYPE_PAGES, sizeof(*rec), atomic_fetch, 0,
		  ARG(ctx, 0));
	fill_context(&rec->time, &rec->task, &ev);
	fill_page(&rec->page, &rec->core.ptr, order, -1);
	submit(&ev, rec);
	return 0;
}

/* --- sched: following -p across fork -------------------------------------- */

static __always_inline int on_fork(__u64 *ctx, bool atomic_fetch, bool btf)
{
	struct task_struct *parent = (void *)ARG(ctx, 0), *child = (void *)ARG(ctx, 1);
	__u32 parent_tgid = KREAD(btf, parent, tgid);
	__u32 child_tgid = KREAD(btf, child, tgid);
	__u8 one = 1;

	if (parent_tgid == child_tgid || !bpf_map_lookup_elem(&traced_tgids, &parent_tgid))
		return 0;
	bpf_map_update_elem(&traced_tgids, &child_tgid, &one, BPF_ANY);
	return 0;
}

/*
 * A thread group leaves the filter when its leader's task is freed, not at
 * sched_process_exit: the frees an exiting process does after that
 * tracepoint (its files, its mm) are still its own.
 */
static __always_inline int on_task_free(__u64 *ctx, bool atomic_fetch, bool btf)
{
	struct task_struct *task = (void *)ARG(ctx, 0);
	__u32 pid = KREAD(btf, task, pid);
	__u32 tgid = KREAD(btf, task, tgid);

	if (pid == tgid)
		bpf_map_delete_elem(&traced_tgids, &tgid);
	return 0;
}

/* --- entry points ---------------------------------------------------------- */

#define KMT_ENTRY_POINTS(tp, handler)                                                            \
	SEC("tp_btf/" #tp) int tp_##tp(__u64 *ctx) { return handler(ctx, true, true); }          \
	SEC("tp_btf/" #tp) int tpc_##tp(__u64 *ctx) { return handler(ctx, false, true); }        \
	SEC("raw_tp/" #tp) int raw_##tp(__u64 *ctx) { return handler(ctx, true, false); }        \
	SEC("raw_tp/" #tp) int rawc_##tp(__u64 *ctx) { return handler(ctx, false, false); }

KMT_ENTRY_POINTS(kmalloc, on_kmalloc_tp)
KMT_ENTRY_POINTS(kmalloc_node, on_kmalloc_node)
KMT_ENTRY_POINTS(kmem_cache_alloc, on_cache_alloc_tp)
KMT_ENTRY_POINTS(kmem_cache_alloc_node, on_cache_alloc_node)
KMT_ENTRY_POINTS(kfree, on_kfree)
KMT_ENTRY_POINTS(kmem_cache_free, on_cache_free)
KMT_ENTRY_POINTS(mm_page_alloc, on_page_alloc)
KMT_ENTRY_POINTS(mm_page_free, on_page_free)
KMT_ENTRY_POINTS(sched_process_fork, on_fork)
KMT_ENTRY_POINTS(sched_process_free, on_task_free)

/* Records the pages one thread allocates, so user space can find vmemmap. */
SEC("raw_tp/mm_page_alloc")
int calibrate_pfn(__u64 *ctx)
{
	__u32 i = calib_count;

	if ((__u32)bpf_get_current_pid_tgid() != calib_tid || ARG(ctx, 1) != 0)
		return 0;
	if (i >= KMT_CALIB_PAGES)
		return 0;
	calib_pages[i] = ARG(ctx, 0);
	calib_count = i + 1;
	return 0;
}
