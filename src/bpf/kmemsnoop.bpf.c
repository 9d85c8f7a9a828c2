// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * kmemsnoop's BPF side: one handler per event source (kmem and sched
 * tracepoints) reads the event's arguments once, applies the filters, and
 * hands the event to each part of the object that user space switched on:
 *
 *   do_allocinfo  outstanding memory per call site  (allocinfo.bpf.h)
 *   do_hist       log2 size histograms              (hist.bpf.h)
 *   do_stream     one kmemtrace record per event    (stream.bpf.h)
 *   do_stat       --stat's slab tables              (stat.bpf.h)
 *
 * The switches are independent rodata constants: the verifier drops the
 * code of the parts that are off, so a part costs nothing when it is not
 * selected, and several run together on the same events.
 *
 * Each source has four entry points built from one handler:
 *   tp_<tp>   tp_btf, BPF atomic fetch-add available (5.12+)
 *   tpc_<tp>  tp_btf, without atomic fetch (5.10, 5.11)
 *   raw_<tp>  raw_tp, atomic fetch-add
 *   rawc_<tp> raw_tp, without
 * User space loads exactly one of them per source (autoload), because a
 * kernel rejects an instruction it does not know even in dead code, and
 * raw_tp is only the fallback where tp_btf cannot attach.  Argument layouts
 * that differ between kernels are rodata constants the verifier prunes on.
 * Where the kernel runs those preemptibly (7.x), the kmem, percpu and
 * vmalloc tracepoints get a classic tracepoint program instead (tpe_<tp>)
 * and a tp_btf one beside it for the events it must skip (tpn_<tp>): see
 * "Classic tracepoint programs" below.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "kmemsnoop.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

const volatile bool do_stream = false;
const volatile bool do_hist = false;
const volatile bool do_allocinfo = false;
const volatile bool do_stat = false;
/* The classes (EV_*) whose frees the stream, --stat or the histograms look at:
 * those -e selected when either is on, else none.  --allocinfo attaches
 * the frees of classes it did not select (kfree frees slab objects too),
 * which the other parts must then leave alone.  One constant, so that a
 * free that only --allocinfo wants costs one test. */
const volatile __u32 filtered_free_classes = 0;

#include "common.bpf.h"
#include "stacksite.bpf.h"
#include "stream.bpf.h"
#include "hist.bpf.h"
#include "pagesite.bpf.h"
#include "allocinfo.bpf.h"
#include "stat.bpf.h"
#include "large.bpf.h"

/* Whether the stream, --stat or the histograms look at a free of this class. */
static __always_inline bool free_wanted_by_filtered(__u32 class)
{
	return filtered_free_classes & class;
}

/* --- kmalloc, kmalloc_node ------------------------------------------------ */

static __always_inline int on_kmalloc(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
				      bool has_node)
{
	struct event_ctx ev;
	__u64 ptr = ARG(ctx, 1), req = ARG(ctx, 2), ai_site = 0;
	struct large_rec *large = NULL;
	bool second = false, ai_counted = false;
	int hist_level = -1;

	/* Arguments are read where they are used: values kept across the
	 * parts' calls would be spilled to the stack. */
	if (!task_passes(&ev) || !size_passes(ptr, req))
		return 0;
	kstack_from(&ev, regs);
	/* Served by the page allocator, whose event came first: counted
	 * once (large.bpf.h).  One test for all other kmallocs. */
	if ((do_allocinfo || do_hist) && ARG(ctx, 3) > large_kmalloc_over && ptr)
		large = large_kmalloc_before(ctx, atomic_fetch, ev.pid_tgid, ptr, req, &second);
	if (do_allocinfo)
		ai_counted = allocinfo_alloc_site(regs, atomic_fetch, KMT_TYPE_KMALLOC, ARG(ctx, 0),
						  ptr, ARG(ctx, 3), &ai_site);
	if (do_hist)
		hist_level = hist_alloc(KMT_TYPE_KMALLOC, ARG(ctx, 0), ptr, req, ARG(ctx, 3), NULL,
					false, atomic_fetch);
	if (do_stat)
		stat_alloc(KMT_TYPE_KMALLOC, ARG(ctx, 0), ptr, req, ARG(ctx, 3), NULL, false, 0,
			   has_node ? (__s32)ARG(ctx, 5) : -1, &ev);
	if (large)
		large_kmalloc_after(ctx, large, second, ev.pid_tgid, ptr, ai_counted, ai_site,
				    hist_level);
	if (do_stream)
		stream_kmalloc(ctx, &ev, atomic_fetch, has_node, ptr, req);
	return 0;
}

static __always_inline int on_kmalloc_tp(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					 bool btf)
{
	return on_kmalloc(ctx, regs, atomic_fetch, kmalloc_args == KMT_KMALLOC_NODE);
}

static __always_inline int on_kmalloc_node(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					   bool btf)
{
	return on_kmalloc(ctx, regs, atomic_fetch, true);
}

/* --- kmem_cache_alloc, kmem_cache_alloc_node ------------------------------ */

/* An allocation from cache s (NULL where the event does not say which)
 * that passed the task filter: into each mode. */
static __always_inline int cache_alloc_passed(void *regs, struct event_ctx *ev,
					      enum prog_run atomic_fetch,
					      bool btf, struct kmem_cache *s, __u64 site, __u64 ptr,
					      __u64 req, __u64 alloc, __u32 gfp, bool has_node,
					      __s32 node)
{
	if (!size_passes(ptr, req))
		return 0;
	if (do_allocinfo)
		allocinfo_alloc(regs, atomic_fetch, KMT_TYPE_CACHE, site, ptr, alloc);
	if (do_hist)
		hist_alloc(KMT_TYPE_CACHE, site, ptr, req, alloc, s, btf, atomic_fetch);
	if (do_stat)
		stat_alloc(KMT_TYPE_CACHE, site, ptr, req, alloc, s, btf,
			   atomic_fetch == RUN_CLASSIC ? 2 : has_node, node, ev);
	if (do_stream)
		stream_cache_alloc(ev, atomic_fetch, btf, s, site, ptr, req, alloc, gfp, node, 0);
	return 0;
}

static __always_inline int on_cache_alloc(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					  bool btf,
					  bool node_tp)
{
	struct event_ctx ev;
	bool has_cache = !node_tp && cache_alloc_args == KMT_CACHE_ALLOC_CACHE;
	struct kmem_cache *s = (void *)ARG(ctx, 2);

	if (!task_passes(&ev))
		return 0;
	kstack_from(&ev, regs);
	if (has_cache)
		return cache_alloc_passed(regs, &ev, atomic_fetch, btf, s, ARG(ctx, 0), ARG(ctx, 1),
					  KREAD(btf, s, object_size), KREAD(btf, s, size),
					  ARG(ctx, 3), false, ARG(ctx, 4));
	return cache_alloc_passed(regs, &ev, atomic_fetch, btf, NULL, ARG(ctx, 0), ARG(ctx, 1),
				  ARG(ctx, 2), ARG(ctx, 3), ARG(ctx, 4), node_tp,
				  node_tp ? (__s32)ARG(ctx, 5) : -1);
}

static __always_inline int on_cache_alloc_tp(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					     bool btf)
{
	return on_cache_alloc(ctx, regs, atomic_fetch, btf, false);
}

static __always_inline int on_cache_alloc_node(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					       bool btf)
{
	return on_cache_alloc(ctx, regs, atomic_fetch, btf, true);
}

/* --- kfree, kmem_cache_free ----------------------------------------------- */

static __always_inline int on_kfree(__u64 *ctx, void *regs, enum prog_run atomic_fetch, bool btf)
{
	struct event_ctx ev;
	__u64 ptr = ARG(ctx, 1);

	/* Whoever frees it, a tracked allocation is freed: no task filter. */
	if (do_allocinfo)
		allocinfo_free(atomic_fetch, KMT_TYPE_KMALLOC, ptr, 0);
	if (!free_wanted_by_filtered(EV_KMALLOC))
		return 0;
	/* kfree(NULL) is an event too, as in the kernel's own trace. */
	if (!task_passes(&ev) || !free_size_passes(ptr))
		return 0;
	kstack_from(&ev, regs);
	if (do_hist)
		hist_free(KMT_TYPE_KMALLOC, ptr, atomic_fetch);
	if (do_stat)
		stat_free(ptr, &ev);
	if (do_stream)
		stream_kfree(&ev, atomic_fetch, ARG(ctx, 0), ptr, 0);
	return 0;
}

static __always_inline int on_cache_free(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					 bool btf)
{
	struct event_ctx ev;
	__u64 ptr = ARG(ctx, 1);

	if (do_allocinfo)
		allocinfo_free(atomic_fetch, KMT_TYPE_CACHE, ptr, 0);
	if (!free_wanted_by_filtered(EV_CACHE))
		return 0;
	if (!task_passes(&ev) || !free_size_passes(ptr))
		return 0;
	kstack_from(&ev, regs);
	if (do_hist)
		hist_free(KMT_TYPE_CACHE, ptr, atomic_fetch);
	if (do_stat)
		stat_free(ptr, &ev);
	if (do_stream)
		stream_cache_free(ctx, &ev, atomic_fetch, btf, ptr);
	return 0;
}

/* --- mm_page_alloc, mm_page_free ------------------------------------------ */

static __always_inline int on_page_alloc(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					 bool btf)
{
	struct event_ctx ev;
	__u32 order = ARG(ctx, 1);
	__u64 bytes = (__u64)page_size << (order & 31), ai_site = 0;
	bool ai_counted = false;
	int hist_level = -1;

	if (!task_passes(&ev) || !size_passes(ARG(ctx, 0), bytes))
		return 0;
	kstack_from(&ev, regs);
	if (do_allocinfo)
		ai_counted = allocinfo_alloc_site(regs, atomic_fetch, KMT_TYPE_PAGES, 0,
						  arg_number(ctx, 0), bytes, &ai_site);
	if (do_hist)
		hist_level = hist_alloc(KMT_TYPE_PAGES, 0, ARG(ctx, 0), bytes, bytes, NULL, btf,
					atomic_fetch);
	/* Perhaps the page of a large kmalloc, whose event follows. */
	if ((do_allocinfo || do_hist) && order >= large_min_order)
		large_note_page(ctx, ev.pid_tgid, order, ai_counted, ai_site, hist_level);
	if (do_stream)
		stream_page_alloc(ctx, regs, &ev, atomic_fetch, order, bytes);
	return 0;
}

static __always_inline int on_page_free(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					bool btf)
{
	struct event_ctx ev;
	__u32 order = ARG(ctx, 1);
	bool skip_hist;

	if (do_allocinfo)
		allocinfo_free(atomic_fetch, KMT_TYPE_PAGES, arg_number(ctx, 0), order);
	if (!free_wanted_by_filtered(EV_PAGE))
		return 0;
	/* Before the task filter: the entry goes whoever frees the page. */
	skip_hist = large_page_free_skipped(ctx, order);
	if (!task_passes(&ev) || !free_size_passes(ARG(ctx, 0)))
		return 0;
	kstack_from(&ev, regs);
	if (do_hist && !skip_hist)
		hist_free(KMT_TYPE_PAGES, ARG(ctx, 0), atomic_fetch);
	if (do_stream)
		stream_page_free(ctx, &ev, atomic_fetch, order);
	return 0;
}

/* --- percpu_alloc_percpu, percpu_free_percpu ------------------------------ */

/*
 * The percpu allocator hands out one area per CPU at the same offset of
 * each unit; ptr is the __percpu cookie that names them all (what
 * free_percpu() takes back), base_addr + off where the area sits in its
 * chunk.  Before 5.19 the event has neither a call site nor bytes_alloc
 * nor gfp flags: the bytes are then size x possible CPUs, which is what
 * the kernel's own bytes_alloc counts (pcpu_obj_full_size()) less the
 * memcg pointers it adds per 4 bytes when kmem accounting is on; the call
 * site stays 0 in the stream, and --allocinfo finds the caller in a short
 * kernel stack as for pages.  The pointers are read as numbers: with
 * tp_btf they are typed (void *, void __percpu *).
 */
static __always_inline int on_percpu_alloc(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					   bool btf)
{
	struct event_ctx ev;
	bool full = percpu_args == KMT_PERCPU_FULL;
	__u64 ptr = full ? arg_number(ctx, 7) : arg_number(ctx, 6);
	__u64 size = full ? ARG(ctx, 3) : ARG(ctx, 2);
	__u64 site = full ? ARG(ctx, 0) : 0;
	__u64 alloc = full ? ARG(ctx, 8) : size * possible_cpus;

	if (!task_passes(&ev) || !size_passes(ptr, size))
		return 0;
	kstack_from(&ev, regs);
	/* As /proc/allocinfo counts it: the data on every possible CPU. */
	if (do_allocinfo)
		allocinfo_alloc(regs, atomic_fetch, KMT_TYPE_PERCPU, site, ptr,
				size * possible_cpus);
	if (do_hist)
		hist_alloc(KMT_TYPE_PERCPU, site, ptr, size, alloc, NULL, btf, atomic_fetch);
	/* --stat's tables are the slab's and the page allocator's. */
	if (do_stream)
		stream_percpu_alloc(ctx, &ev, atomic_fetch, full, site, ptr, size, alloc);
	return 0;
}

static __always_inline int on_percpu_free(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					  bool btf)
{
	struct event_ctx ev;
	__u64 ptr = arg_number(ctx, 2);

	/* Whoever frees it (a BPF map's areas go in a kworker). */
	if (do_allocinfo)
		allocinfo_free(atomic_fetch, KMT_TYPE_PERCPU, ptr, 0);
	if (!free_wanted_by_filtered(EV_PERCPU))
		return 0;
	if (!task_passes(&ev) || !free_size_passes(ptr))
		return 0;
	kstack_from(&ev, regs);
	if (do_hist)
		hist_free(KMT_TYPE_PERCPU, ptr, atomic_fetch);
	if (do_stream)
		stream_percpu_free(ctx, &ev, atomic_fetch, ptr);
	return 0;
}

/* --- vmalloc areas ----------------------------------------------------------- */

/*
 * One allocation record per area, at the return of the vmalloc core (or
 * of the tracepoint that stands in for it): a failed one has ptr 0, as a
 * failed kmalloc.  bytes_alloc is the size rounded up to pages (the
 * fexit), or the area with its guard page (the tracepoint, flags
 * KMT_VMALLOC_AREA).
 */
static __always_inline int on_vmalloc(void *ctx, enum prog_run atomic_fetch, __u64 call_site,
				      __u64 ptr,
				      __u64 req, __u64 alloc, __u32 gfp, __s32 node, __u8 flags)
{
	struct event_ctx ev;

	if (!task_passes(&ev) || !size_passes(ptr, req))
		return 0;
	kstack_from(&ev, ctx);
	if (do_allocinfo)
		allocinfo_alloc(ctx, atomic_fetch, KMT_TYPE_VMALLOC, call_site, ptr, alloc);
	if (do_hist)
		hist_alloc(KMT_TYPE_VMALLOC, call_site, ptr, req, alloc, NULL, false, atomic_fetch);
	if (do_stream)
		stream_vmalloc(&ev, atomic_fetch, call_site, ptr, req, alloc, gfp, node, flags);
	return 0;
}

static __always_inline __u64 page_round(__u64 bytes)
{
	return (bytes + page_size - 1) & ~((__u64)page_size - 1);
}

/*
 * __vmalloc_node_range(size, align, start, end, gfp, prot, vm_flags, node, caller)
 * The caller, the returned area and vfree's address are void pointers,
 * which the verifier lets a tracing program read only since 6.16: read as
 * numbers through a helper (arg_number), as a page pointer is.
 */
static __always_inline int on_vmalloc_node_range(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
						 bool btf)
{
	return on_vmalloc(regs, atomic_fetch, arg_number(ctx, 8), arg_number(ctx, 9), ARG(ctx, 0),
			  page_round(ARG(ctx, 0)), ARG(ctx, 4), ARG(ctx, 7), 0);
}

/* __vmalloc_node(size, align, gfp, node, caller) */
static __always_inline int on_vmalloc_node(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					   bool btf)
{
	return on_vmalloc(regs, atomic_fetch, arg_number(ctx, 4), arg_number(ctx, 5), ARG(ctx, 0),
			  page_round(ARG(ctx, 0)), ARG(ctx, 2), ARG(ctx, 3), 0);
}

/* alloc_vmap_area(addr, size, align, vstart, vend, failed): every vmap area */
static __always_inline int on_alloc_vmap_area(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					      bool btf)
{
	__u64 ptr = (int)ARG(ctx, 5) ? 0 : ARG(ctx, 0);

	return on_vmalloc(regs, atomic_fetch, stack_site(regs, KMT_TEXT_VMALLOC), ptr, ARG(ctx, 1),
			  ARG(ctx, 1), 0, -1, KMT_VMALLOC_AREA);
}

static __always_inline int on_vfree_ptr(void *ctx, enum prog_run atomic_fetch, __u64 ptr,
					__u8 flags)
{
	struct event_ctx ev;

	if (!ptr)
		return 0; /* vfree(NULL): no area */
	if (do_allocinfo)
		allocinfo_free(atomic_fetch, KMT_TYPE_VMALLOC, ptr, 0);
	if (!free_wanted_by_filtered(EV_VMALLOC))
		return 0;
	if (!task_passes(&ev) || !free_size_passes(ptr))
		return 0;
	kstack_from(&ev, ctx);
	if (do_hist)
		hist_free(KMT_TYPE_VMALLOC, ptr, atomic_fetch);
	if (do_stream)
		stream_vfree(&ev, atomic_fetch, stack_site(ctx, KMT_TEXT_VMALLOC), ptr, flags);
	return 0;
}

/* vfree(addr), vfree_atomic(addr) */
static __always_inline int on_vfree(__u64 *ctx, void *regs, enum prog_run atomic_fetch, bool btf)
{
	return on_vfree_ptr(regs, atomic_fetch, arg_number(ctx, 0), 0);
}

/* free_vmap_area_noflush(va_start, nr_lazy, nr_lazy_max) */
static __always_inline int on_free_vmap_area(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					     bool btf)
{
	return on_vfree_ptr(regs, atomic_fetch, ARG(ctx, 0), KMT_VMALLOC_AREA);
}

/* --- bulk: kmem_cache_alloc_bulk, kmem_cache_free_bulk (kfree_bulk) -------- */

/*
 * The slab's bulk functions fire no event per object.  Their fexit/fentry
 * programs read the array of objects, at most KMT_BULK_MAX a call in a
 * bounded loop (the verifier walks each pass), or KMT_BULK_LOOP_MAX
 * through bpf_loop() where the kernel has it (the fel_ programs), and hand
 * each object to the parts as one allocation or free marked KMT_EV_BULK;
 * the objects past the bound are counted here and reported.  The call site
 * is the frame after the bulk function's in a short stack
 * (bulk_call_site()).  The cache is read as a number and its fields
 * through a helper (btf false): its address is hashed, which the verifier
 * forbids on a typed pointer.
 */
__u64 bulk_unseen = 0;

/* The text of kmem_cache_alloc_bulk, kmem_cache_free_bulk and
 * kvfree_call_rcu (whose caller called kfree_rcu()), and the kernel's own
 * text, set by user space. */
const volatile struct kmt_text_range bulk_text[3] = {};
const volatile struct kmt_text_range kernel_text = {};
/* kmem_cache_alloc_bulk returns true when it filled all of p (7.x), not a count. */
const volatile bool bulk_alloc_all_or_none = false;

static __always_inline bool in_range(__u64 ip, __u64 start, __u64 end)
{
	return ip >= start && ip < end;
}

/*
 * The traced function's caller calls it directly (kfree_bulk and the
 * _noprof wrappers are inline).  Where the stack shows the traced function
 * (the trampoline's return address into it: 5.10 to 6.12), the next frame
 * is the call site; where it does not (7.x), the first frame in the
 * kernel's text, past the BPF program and trampoline (a caller in a module
 * then gives 0).  A few frames and two ranges, not stack_site()'s walk:
 * the verifier walks the object loop after it once per state it leaves.
 */
static __always_inline __u64 bulk_call_site(void *ctx, int fn)
{
	__u64 ips[KMT_BULK_FRAMES] = {}, first = 0;
	long n = bpf_get_stack(ctx, ips, sizeof(ips), 0);

	if (n <= 0)
		return 0;
	for (int i = 0; i < KMT_BULK_FRAMES - 1; i++) {
		if (in_range(ips[i], bulk_text[fn].start, bulk_text[fn].end))
			return ips[i + 1];
		if (!first && in_range(ips[i], kernel_text.start, kernel_text.end))
			first = ips[i];
	}
	return first;
}

static __always_inline __u32 bulk_count(long n, __u32 max)
{
	if (n <= 0)
		return 0;
	if (n > max) {
		__sync_fetch_and_add(&bulk_unseen, n - max);
		return max;
	}
	return n;
}

static __always_inline __u64 bulk_object(__u64 array, __u32 i)
{
	__u64 obj = 0;

	bpf_probe_read_kernel(&obj, sizeof(obj), (const void *)(array + (__u64)i * sizeof(obj)));
	return obj;
}

/* One bulk call's objects, and what each of them is handed with. */
struct bulk_call {
	__u64 *ctx;
	struct event_ctx ev;
	struct kmem_cache *s;
	__u64 array, site, req, alloc;
	__u32 n, gfp;
	bool filtered; /* the frees: the task passes the filters */
};

static __always_inline void bulk_alloc_object(struct bulk_call *b, __u32 i,
					      enum prog_run atomic_fetch)
{
	__u64 ptr = bulk_object(b->array, i);

	size_passes(ptr, b->req); /* for the frees of ptr */
	if (do_allocinfo)
		allocinfo_alloc(b->ctx, atomic_fetch, KMT_TYPE_CACHE, b->site, ptr, b->alloc);
	if (do_stat)
		stat_alloc(KMT_TYPE_CACHE, b->site, ptr, b->req, b->alloc, b->s, false, false, -1,
			   &b->ev);
	if (do_stream)
		stream_cache_alloc(&b->ev, atomic_fetch, false, b->s, b->site, ptr, b->req,
				   b->alloc, b->gfp, -1, KMT_EV_BULK);
}

/* A free that passed the filters (a bulk call's object, an object into an
 * RCU sheaf): into each mode that is on.  type: KMT_TYPE_CACHE with s,
 * else a kfree. */
static __always_inline void free_passed(struct event_ctx *ev, enum prog_run atomic_fetch, __u8 type,
					struct kmem_cache *s, __u64 site, __u64 ptr, __u8 ev_flags)
{
	if (do_hist)
		hist_free(type, ptr, atomic_fetch);
	if (do_stat)
		stat_free(ptr, ev);
	if (do_stream && type == KMT_TYPE_CACHE)
		stream_cache_free_ref(ev, atomic_fetch, false, s, site, ptr, ev_flags);
	else if (do_stream)
		stream_kfree(ev, atomic_fetch, site, ptr, ev_flags);
}

static __always_inline void bulk_free_object(struct bulk_call *b, __u32 i,
					     enum prog_run atomic_fetch)
{
	__u64 ptr = bulk_object(b->array, i);
	/* From s, not a stored type: in a bpf_loop() callback the verifier
	 * knows nothing of a byte read back from the caller's stack, and the
	 * type indexes the histograms. */
	__u8 type = b->s ? KMT_TYPE_CACHE : KMT_TYPE_KMALLOC;

	if (do_allocinfo)
		allocinfo_free(atomic_fetch, type, ptr, 0);
	if (!b->filtered || !free_size_passes(ptr))
		return;
	/* Counted here: a count kept across passes would give the verifier a
	 * state per value. */
	free_passed(&b->ev, atomic_fetch, type, b->s, b->site, ptr, KMT_EV_BULK);
}

/* bpf_loop()'s callbacks: only the fel_ programs, which user space loads
 * where the kernel has bpf_loop() (5.17+) and atomic fetch-add. */
static long bulk_alloc_next(__u32 i, void *b)
{
	bulk_alloc_object(b, i, true);
	return 0;
}

static long bulk_free_next(__u32 i, void *b)
{
	bulk_free_object(b, i, true);
	return 0;
}

/* Every object of b, by bpf_loop() (by_loop) or a bounded loop. */
static __always_inline void bulk_each(struct bulk_call *b, bool alloc, enum prog_run atomic_fetch,
				      bool by_loop)
{
	if (by_loop) {
		bpf_loop(b->n, alloc ? bulk_alloc_next : bulk_free_next, b, 0);
		return;
	}
	for (__u32 i = 0; i < KMT_BULK_MAX; i++) {
		if (i >= b->n)
			break;
		if (alloc)
			bulk_alloc_object(b, i, atomic_fetch);
		else
			bulk_free_object(b, i, atomic_fetch);
	}
}

/* kmem_cache_alloc_bulk(s, flags, size, p) returned how many of p it filled
 * (before 7.x), or whether it filled them all. */
static __always_inline int cache_alloc_bulk(__u64 *ctx, enum prog_run atomic_fetch, bool by_loop)
{
	struct kmem_cache *s = (void *)arg_number(ctx, 0);
	struct bulk_call b = { .ctx = ctx, .s = s, .array = arg_number(ctx, 3),
			       .gfp = ARG(ctx, 1) };
	long ret = bulk_alloc_all_or_none ? ((__u8)ARG(ctx, 4) ? (long)ARG(ctx, 2) : 0)
					  : (int)ARG(ctx, 4);

	/* The filter first: objects past the bound are counted for the tasks traced. */
	if (ret <= 0 || !task_passes(&b.ev))
		return 0;
	kstack_from(&b.ev, ctx);
	b.n = bulk_count(ret, by_loop ? KMT_BULK_LOOP_MAX : KMT_BULK_MAX);
	/* Through s: a CO-RE read of b.s would relocate struct bulk_call too. */
	b.req = KREAD(false, s, object_size);
	b.alloc = KREAD(false, s, size);
	/* One size for all: all pass the size filter, or none. */
	if (filter_size && (b.req < min_size || b.req > max_size))
		return 0;
	b.site = bulk_call_site(ctx, 0);
	if (do_stream) {
		describe_task(&b.ev, atomic_fetch);
		describe_cache(&b.ev, atomic_fetch, s, false);
	}
	/* Counted at once, outside the loop the verifier walks pass by pass. */
	if (do_hist)
		hist_alloc_n(KMT_TYPE_CACHE, b.site, 1, b.req, b.alloc, b.s, false, b.n,
			     run_preemptible(atomic_fetch));
	bulk_each(&b, true, atomic_fetch, by_loop);
	return 0;
}

/* kmem_cache_free_bulk(s, size, p); kfree_bulk(size, p) passes s NULL: kfrees. */
static __always_inline int cache_free_bulk(__u64 *ctx, enum prog_run atomic_fetch, bool by_loop)
{
	struct bulk_call b = { .ctx = ctx, .s = (void *)arg_number(ctx, 0),
			       .array = arg_number(ctx, 2) };

	b.n = bulk_count(ARG(ctx, 1), by_loop ? KMT_BULK_LOOP_MAX : KMT_BULK_MAX);
	b.filtered = free_wanted_by_filtered(b.s ? EV_CACHE : EV_KMALLOC) && task_passes(&b.ev);
	kstack_from(&b.ev, ctx);
	/* Nothing to do per object: no reading thousands of them for nobody. */
	if (!b.filtered && !do_allocinfo)
		return 0;
	if (b.filtered && do_stream) {
		b.site = bulk_call_site(ctx, 1);
		describe_task(&b.ev, atomic_fetch);
		describe_cache(&b.ev, atomic_fetch, b.s, false);
	}
	bulk_each(&b, false, atomic_fetch, by_loop);
	return 0;
}

/* --- kfree_rcu() into a cache's RCU sheaf ------------------------------------ */

/*
 * __kfree_rcu_sheaf(s, obj) returned true: obj is in s's per-CPU RCU
 * sheaf, which goes back to the cache after a grace period with no event
 * for its objects.  Counted as freed here, at most a grace period early:
 * one free marked KMT_EV_RCU, a kfree where s is a kmalloc cache; its call
 * site is the caller of kvfree_call_rcu(), where kfree_rcu() was written.
 */
static __always_inline bool kmalloc_cache(struct kmem_cache *s)
{
	if (!bpf_core_enum_value_exists(enum _slab_flag_bits, _SLAB_KMALLOC))
		return false;
	return KREAD(false, s, flags) &
	       (1U << bpf_core_enum_value(enum _slab_flag_bits, _SLAB_KMALLOC));
}

static __always_inline int on_kfree_rcu_sheaf(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					      bool btf)
{
	struct kmem_cache *s = (void *)arg_number(ctx, 0);
	__u64 ptr = arg_number(ctx, 1), site, taken = 0;
	bool kmalloc;
	struct event_ctx ev;
	__u8 type;

	/* Two arguments (6.18) or three (7.x): the return value by helper. */
	if (bpf_get_func_ret(ctx, &taken) || !(__u8)taken)
		return 0; /* not taken: kfree_rcu() batches it, for kfree_bulk() */
	kmalloc = kmalloc_cache(s);
	type = kmalloc ? KMT_TYPE_KMALLOC : KMT_TYPE_CACHE;
	if (do_allocinfo)
		allocinfo_free(atomic_fetch, type, ptr, 0);
	if (!free_wanted_by_filtered(kmalloc ? EV_KMALLOC : EV_CACHE) || !task_passes(&ev) ||
	    !free_size_passes(ptr))
		return 0;
	kstack_from(&ev, regs);
	site = do_stream ? bulk_call_site(ctx, 2) : 0;
	free_passed(&ev, atomic_fetch, type, s, site, ptr, KMT_EV_RCU);
	return 0;
}

/* The fe_ and fec_ programs: the bounded loop. */
static __always_inline int on_cache_alloc_bulk(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					       bool btf)
{
	return cache_alloc_bulk(ctx, atomic_fetch, false);
}

static __always_inline int on_cache_free_bulk(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					      bool btf)
{
	return cache_free_bulk(ctx, atomic_fetch, false);
}

/* --- sched and task: following -p, task records --------------------------- */

/* The tasks whose records a reader of the stream can need: those the pid
 * and tid filters let through (not the comm filter: a rename can make a
 * task pass it). */
static __always_inline bool task_recorded(__u32 tgid, __u32 tid)
{
	if (tgid == self_tgid)
		return false;
	if (filter_tid && tid != target_tid)
		return false;
	return !filter_pid || bpf_map_lookup_elem(&traced_tgids, &tgid);
}

/*
 * A task record for task at a fork, exec, rename or exit; comm: its new
 * name (a rename is traced before the kernel copies it), else NULL.  Not
 * written again when lost: counted as lost.
 */
static __always_inline void write_task_record(enum prog_run atomic_fetch, bool btf,
					      struct task_struct *task, __u8 why, __u64 parent,
					      const char *comm)
{
	struct event_ctx ev = { .cpu = bpf_get_smp_processor_id() };
	__u32 tgid = KREAD(btf, task, tgid), tid = KREAD(btf, task, pid);
	struct kmt_rec_task *rec;

	if (!task_recorded(tgid, tid))
		return;
	rec = reserve_task_record(&ev, atomic_fetch, why, parent);
	if (!rec) {
		count_name_loss(ev.cpu);
		return;
	}
	rec->task.pid = tgid;
	rec->task.tid = tid;
	__builtin_memset(rec->task.comm, 0, sizeof(rec->task.comm));
	if (comm)
		bpf_probe_read_kernel_str(rec->task.comm, sizeof(rec->task.comm), comm);
	else
		bpf_core_read(rec->task.comm, sizeof(rec->task.comm), &task->comm);
	submit(&ev, rec);
}

/* A process forked by one -p traces is traced too; any new task (process
 * or thread) gets a task record: its tid may have been another's. */
static __always_inline int on_fork(__u64 *ctx, void *regs, enum prog_run atomic_fetch, bool btf)
{
	struct task_struct *parent = (void *)ARG(ctx, 0), *child = (void *)ARG(ctx, 1);
	__u32 parent_tgid = KREAD(btf, parent, tgid);
	__u32 child_tgid = KREAD(btf, child, tgid);
	__u8 one = 1;

	if (filter_pid && parent_tgid != child_tgid &&
	    bpf_map_lookup_elem(&traced_tgids, &parent_tgid))
		bpf_map_update_elem(&traced_tgids, &child_tgid, &one, BPF_ANY);
	if (do_stream)
		write_task_record(atomic_fetch, btf, child, KMT_TASK_FORK, KREAD(btf, parent, pid),
				  NULL);
	return 0;
}

/* sched_process_exec(p, old_pid, bprm): p has its new comm already. */
static __always_inline int on_exec(__u64 *ctx, void *regs, enum prog_run atomic_fetch, bool btf)
{
	if (do_stream)
		write_task_record(atomic_fetch, btf, (void *)ARG(ctx, 0), KMT_TASK_EXEC, 0, NULL);
	return 0;
}

/* task_rename(task, comm): prctl(PR_SET_NAME), /proc/PID/comm, exec. */
static __always_inline int on_rename(__u64 *ctx, void *regs, enum prog_run atomic_fetch, bool btf)
{
	if (do_stream)
		write_task_record(atomic_fetch, btf, (void *)ARG(ctx, 0), KMT_TASK_RENAME, 0,
				  (const char *)ARG(ctx, 1));
	return 0;
}

/* The exit of a thread: the frees it does after it are still its own, so
 * a reader keeps its name until another task takes the tid (a fork). */
static __always_inline int on_exit(__u64 *ctx, void *regs, enum prog_run atomic_fetch, bool btf)
{
	if (do_stream)
		write_task_record(atomic_fetch, btf, (void *)ARG(ctx, 0), KMT_TASK_EXIT, 0, NULL);
	return 0;
}

/*
 * A thread group leaves the filter when its leader's task is freed, not at
 * sched_process_exit: the frees an exiting process does after that
 * tracepoint (its files, its mm) are still its own.
 */
static __always_inline int on_task_free(__u64 *ctx, void *regs, enum prog_run atomic_fetch,
					bool btf)
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
	SEC("tp_btf/" #tp) int tp_##tp(__u64 *ctx) { return handler(ctx, ctx, true, true); }          \
	SEC("tp_btf/" #tp) int tpc_##tp(__u64 *ctx) { return handler(ctx, ctx, false, true); }        \
	SEC("raw_tp/" #tp) int raw_##tp(__u64 *ctx) { return handler(ctx, ctx, true, false); }        \
	SEC("raw_tp/" #tp) int rawc_##tp(__u64 *ctx) { return handler(ctx, ctx, false, false); }

KMT_ENTRY_POINTS(kmalloc, on_kmalloc_tp)
KMT_ENTRY_POINTS(kmalloc_node, on_kmalloc_node)
KMT_ENTRY_POINTS(kmem_cache_alloc, on_cache_alloc_tp)
KMT_ENTRY_POINTS(kmem_cache_alloc_node, on_cache_alloc_node)
KMT_ENTRY_POINTS(kfree, on_kfree)
KMT_ENTRY_POINTS(kmem_cache_free, on_cache_free)
KMT_ENTRY_POINTS(mm_page_alloc, on_page_alloc)
KMT_ENTRY_POINTS(mm_page_free, on_page_free)
KMT_ENTRY_POINTS(percpu_alloc_percpu, on_percpu_alloc)
KMT_ENTRY_POINTS(percpu_free_percpu, on_percpu_free)
KMT_ENTRY_POINTS(alloc_vmap_area, on_alloc_vmap_area)
KMT_ENTRY_POINTS(free_vmap_area_noflush, on_free_vmap_area)
KMT_ENTRY_POINTS(sched_process_fork, on_fork)
KMT_ENTRY_POINTS(sched_process_free, on_task_free)
KMT_ENTRY_POINTS(sched_process_exec, on_exec)
KMT_ENTRY_POINTS(sched_process_exit, on_exit)
KMT_ENTRY_POINTS(task_rename, on_rename)

/*
 * Classic tracepoint programs (BPF_PROG_TYPE_TRACEPOINT, tpe_<tp>), for
 * kernels whose tracepoints run tp_btf and raw_tp programs preemptibly
 * (7.0+ with preemptible RCU: a46023d5616e, f7d327654b88).  There a run
 * preempted on a CPU holds its program's recursion counter, and the
 * program skips every event other tasks raise on that CPU until the run
 * resumes; perf's tracepoint callbacks, which run these, keep preemption
 * off (16718274ee75).  Their context is the event's trace record, not its
 * arguments: each copies the fields into the tracepoint's argument order
 * and hands them to the same handler as the other entry points, with the
 * record as the context for the stack helpers.  The record has no struct
 * page (a pfn) and no struct kmem_cache: the page is computed from vmemmap,
 * the cache found from the object's slab.  7.x only: atomic fetch-add, and
 * the argument layouts of 6.1+ (user space checks).
 */
const volatile __u64 slab_linear_map = 0; /* virtual address of physical 0; 0: not known */

static __always_inline __u64 page_of_pfn(__u64 pfn)
{
	if (pfn == ~0ULL)
		return 0; /* the kernel's pfn for no page */
	return vmemmap_base + pfn * bpf_core_type_size(struct page);
}

/* 7.x renamed page->compound_head (fc3f334ce2b9). */
struct page___compound_info {
	unsigned long compound_info;
} __attribute__((preserve_access_index));

/* A kernel address as a typed pointer, read by plain loads that fault
 * safely: a helper call per field cost 15-20 ns more. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;
#define KERNEL_CAST(type, addr) ((type *)bpf_rdonly_cast((void *)(addr), bpf_core_type_id_kernel(type)))

/*
 * The head page of page.  A tail page's word has bit 0 set, and the rest
 * is the head's address, or where struct page is a power of two in size
 * with HugeTLB's vmemmap optimization (7.x, d6746190bbf3), a mask that
 * keeps the head's address of the tail's: all ones above its lowest set
 * bit, which no address in vmemmap is.
 */
static __always_inline __u64 head_page(__u64 page)
{
	__u64 info, rest;

	/* By a helper: the verifier types a load at this offset as the union's
	 * first member, a list pointer on which no bit can be tested. */
	if (bpf_core_field_exists(((struct page___compound_info *)0)->compound_info))
		info = BPF_CORE_READ((struct page___compound_info *)page, compound_info);
	else
		info = BPF_CORE_READ((struct page *)page, compound_head);
	if (!(info & 1))
		return page;
	rest = info - 1;
	if (rest + (rest & -rest) == 0)
		return page & info;
	return rest;
}

/* The cache of slab object ptr: the struct slab that overlays its head
 * page, a typed pointer.  NULL where not known. */
static __always_inline struct kmem_cache *slab_cache_of(__u64 ptr)
{
	__u64 head;

	if (!slab_linear_map || !vmemmap_base || ptr < slab_linear_map)
		return NULL;
	head = head_page(page_of_pfn((ptr - slab_linear_map) / page_size));
	return KERNEL_CAST(struct slab, head)->slab_cache;
}

SEC("tracepoint/kmem/kmalloc")
int tpe_kmalloc(struct trace_event_raw_kmalloc *r)
{
	__u64 args[6] = { r->call_site, (__u64)r->ptr, r->bytes_req, r->bytes_alloc, r->gfp_flags,
			  r->node };

	return on_kmalloc(args, r, RUN_CLASSIC, true);
}

SEC("tracepoint/kmem/kmem_cache_alloc")
int tpe_kmem_cache_alloc(struct trace_event_raw_kmem_cache_alloc *r)
{
	struct event_ctx ev;
	__u64 ptr = (__u64)r->ptr, req = r->bytes_req;
	struct kmem_cache *s;

	if (!task_passes(&ev))
		return 0;
	kstack_from(&ev, r);
	/* The slab walk only for the parts that name the cache. */
	s = (do_stream || do_stat || (do_hist && (hist_key_mask & (1 << KMT_BY_CACHE)))) &&
			    ptr > KMT_ZERO_SIZE_PTR ?
		    slab_cache_of(ptr) :
		    NULL;
	/* A cache that is not the object's says nothing true of it. */
	if (s && s->object_size != req)
		s = NULL;
	return cache_alloc_passed(r, &ev, RUN_CLASSIC, true, s, r->call_site, ptr, req,
				  r->bytes_alloc, r->gfp_flags, true, r->node);
}

SEC("tracepoint/kmem/kfree")
int tpe_kfree(struct trace_event_raw_kfree *r)
{
	__u64 args[2] = { r->call_site, (__u64)r->ptr };

	return on_kfree(args, r, RUN_CLASSIC, false);
}

SEC("tracepoint/kmem/kmem_cache_free")
int tpe_kmem_cache_free(struct trace_event_raw_kmem_cache_free *r)
{
	__u64 ptr = (__u64)r->ptr;
	__u64 args[3] = { r->call_site, ptr, 0 };

	/* Only the stream names the cache of a free: no slab walk for the others. */
	if (do_stream && free_wanted_by_filtered(EV_CACHE))
		args[2] = (__u64)slab_cache_of(ptr);
	return on_cache_free(args, r, RUN_CLASSIC, true);
}

SEC("tracepoint/kmem/mm_page_alloc")
int tpe_mm_page_alloc(struct trace_event_raw_mm_page_alloc *r)
{
	__u64 args[4] = { page_of_pfn(r->pfn), r->order, r->gfp_flags, r->migratetype };

	return on_page_alloc(args, r, RUN_CLASSIC, false);
}

SEC("tracepoint/kmem/mm_page_free")
int tpe_mm_page_free(struct trace_event_raw_mm_page_free *r)
{
	__u64 args[2] = { page_of_pfn(r->pfn), r->order };

	return on_page_free(args, r, RUN_CLASSIC, false);
}

SEC("tracepoint/percpu/percpu_alloc_percpu")
int tpe_percpu_alloc_percpu(struct trace_event_raw_percpu_alloc_percpu *r)
{
	__u64 args[10] = { r->call_site, r->reserved, r->is_atomic, r->size, r->align,
			   (__u64)r->base_addr, r->off, (__u64)r->ptr, r->bytes_alloc,
			   r->gfp_flags };

	return on_percpu_alloc(args, r, RUN_CLASSIC, false);
}

SEC("tracepoint/percpu/percpu_free_percpu")
int tpe_percpu_free_percpu(struct trace_event_raw_percpu_free_percpu *r)
{
	__u64 args[3] = { (__u64)r->base_addr, r->off, (__u64)r->ptr };

	return on_percpu_free(args, r, RUN_CLASSIC, false);
}

SEC("tracepoint/vmalloc/alloc_vmap_area")
int tpe_alloc_vmap_area(struct trace_event_raw_alloc_vmap_area *r)
{
	__u64 args[6] = { r->addr, r->size, r->align, r->vstart, r->vend, r->failed };

	return on_alloc_vmap_area(args, r, RUN_CLASSIC, false);
}

SEC("tracepoint/vmalloc/free_vmap_area_noflush")
int tpe_free_vmap_area_noflush(struct trace_event_raw_free_vmap_area_noflush *r)
{
	__u64 args[3] = { r->va_start, r->nr_lazy, r->nr_lazy_max };

	return on_free_vmap_area(args, r, RUN_CLASSIC, false);
}

/*
 * perf's callbacks run a classic program only while no other classic or
 * kprobe program runs on the CPU (the per-CPU bpf_prog_active): an
 * interrupt during a run, and the softirq work at its end (RCU callbacks
 * that free thousands of objects), would go unseen.  Beside each classic
 * program a tp_btf one (tpn_<tp>) takes exactly the events it skips: the
 * count is above 0 whether the classic program ran before on the same
 * event (and gave it back) or runs after.  Most of those events run in
 * interrupts; a bpf() map call raises the count too, with preemption on,
 * so these may be preempted like any tp_btf program (run_preemptible()).
 * user space subtracts what these took from the classic programs' misses.
 */
extern const int bpf_prog_active __ksym __weak;

__u64 nested_taken = 0;

static __always_inline bool classic_skips(void)
{
	if (!&bpf_prog_active) /* a weak symbol: NULL where the kernel has none */
		return false;
	return *(const int *)bpf_this_cpu_ptr(&bpf_prog_active) != 0;
}

#define KMT_NESTED_ENTRY_POINT(tp, handler)                                                      \
	SEC("tp_btf/" #tp) int tpn_##tp(__u64 *ctx)                                              \
	{                                                                                        \
		if (!classic_skips())                                                            \
			return 0;                                                                \
		__sync_fetch_and_add(&nested_taken, 1);                                          \
		return handler(ctx, ctx, true, true);                                            \
	}

KMT_NESTED_ENTRY_POINT(kmalloc, on_kmalloc_tp)
KMT_NESTED_ENTRY_POINT(kmem_cache_alloc, on_cache_alloc_tp)
KMT_NESTED_ENTRY_POINT(kfree, on_kfree)
KMT_NESTED_ENTRY_POINT(kmem_cache_free, on_cache_free)
KMT_NESTED_ENTRY_POINT(mm_page_alloc, on_page_alloc)
KMT_NESTED_ENTRY_POINT(mm_page_free, on_page_free)
KMT_NESTED_ENTRY_POINT(percpu_alloc_percpu, on_percpu_alloc)
KMT_NESTED_ENTRY_POINT(percpu_free_percpu, on_percpu_free)
KMT_NESTED_ENTRY_POINT(alloc_vmap_area, on_alloc_vmap_area)
KMT_NESTED_ENTRY_POINT(free_vmap_area_noflush, on_free_vmap_area)

/* Attached to cpuhp_enter and cpuhp_exit (session.c), whose first
 * argument is the CPU being brought up or down: on that CPU itself, in the
 * states it runs on its way down, what it staged goes into its ring. */
SEC("raw_tp") int cpu_going_down(__u64 *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if ((__u32)ctx[0] == cpu)
		stage_flush(cpu);
	return 0;
}

/* --flight: attached by src/flight/ to oom:mark_victim. */
SEC("raw_tp") int flight_oom_victim(__u64 *ctx) { return flight_oom(ctx); }

/* Not attached: run on each CPU by user space (stream.c). */
SEC("raw_tp") int heartbeat(void *ctx) { return stream_heartbeat(true); }
SEC("raw_tp") int heartbeatc(void *ctx) { return stream_heartbeat(false); }

/*
 * Kernel functions (sources.c's fentry/fexit rows): fe_<row> with atomic
 * fetch-add, fec_<row> without; the function is set before load
 * (bpf_program__set_attach_target), the one this kernel has.
 */
#define KMT_FUNC_ENTRY_POINTS(kind, row, handler)                                                \
	SEC(#kind) int fe_##row(__u64 *ctx) { return handler(ctx, ctx, true, true); }                \
	SEC(#kind) int fec_##row(__u64 *ctx) { return handler(ctx, ctx, false, true); }

KMT_FUNC_ENTRY_POINTS(fexit, vmalloc_node_range, on_vmalloc_node_range)
KMT_FUNC_ENTRY_POINTS(fexit, vmalloc_node, on_vmalloc_node)
KMT_FUNC_ENTRY_POINTS(fentry, vfree, on_vfree)
KMT_FUNC_ENTRY_POINTS(fentry, vfree_atomic, on_vfree)
KMT_FUNC_ENTRY_POINTS(fexit, cache_alloc_bulk, on_cache_alloc_bulk)
KMT_FUNC_ENTRY_POINTS(fentry, cache_free_bulk, on_cache_free_bulk)
KMT_FUNC_ENTRY_POINTS(fexit, kfree_rcu_sheaf, on_kfree_rcu_sheaf)

/* The rows with a bpf_loop() variant (sources.c's "loops"): fel_<row>, where
 * the kernel has the helper (5.17+, and so atomic fetch-add). */
SEC("fexit") int fel_cache_alloc_bulk(__u64 *ctx) { return cache_alloc_bulk(ctx, true, true); }
SEC("fentry") int fel_cache_free_bulk(__u64 *ctx) { return cache_free_bulk(ctx, true, true); }
