/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The caller of a page allocation for --allocinfo, without a stack walk
 * per page.  mm_page_alloc has no call site; the kernel's unwinder finds
 * it at ~110 ns per frame, through some 8 frames of tracing machinery and
 * page allocator.
 *
 * Those frames are always the same few functions, and a return address
 * lies at a fixed distance below the next one: the frame of the function
 * it returns into, at that call (ORC's stack offset on x86, the frame
 * records' layout on arm64).  ctx is the argument array in
 * bpf_trace_run<N>'s frame, a kernel stack address, so the first return
 * address above it is at a fixed offset too.  So:
 *
 *   per allocation: copy the stack words above ctx (one read); take the
 *     return address at word ps_first; while ps_frames knows it as
 *     machinery or allocator, step by its distance to the next; the first
 *     one it knows as a caller is the site, keyed by its address like a
 *     kmalloc's call site.
 *   anything else (an unknown return address, a read that faults, too
 *     deep): the page is keyed by its stack as before, and one such miss
 *     in PS_SAMPLE_EVERY sends user space a sample (its return addresses
 *     and the stack above ctx), from which it learns (pagesite.c).
 *
 * What a frame is (machinery, allocator, caller) is decided in user space
 * by the rule it applies to a page's stack.  Every caller found from a
 * path (the return addresses read) that audits have not yet agreed on
 * PS_FIRST_AUDITS times, and then one in PS_AUDIT, is an audit: the page
 * is keyed by its stack and the sample sent with the learned answer,
 * which user space checks against the stack; the path goes into ps_paths
 * once enough audits agreed, and a different answer switches the learned
 * frames off.  So a path is used only after stack walks confirmed it.
 *
 * An allocation in an interrupt runs on the interrupt stack: the frames
 * between it and its caller are the same functions at the same distances.
 *
 * #included by kmemsnoop.bpf.c before allocinfo.bpf.h.
 */
#ifndef KMEMSNOOP_PAGESITE_BPF_H
#define KMEMSNOOP_PAGESITE_BPF_H

#include "pagesite_defs.h"

/* The program and bpf_trace_run<N>, as the stack map's walk skips them. */
#define PS_SKIP (2 & BPF_F_SKIP_FIELD_MASK)

const volatile bool ps_on = false;
/* Written by user space: the first return address's word above ctx
 * (0: not learned yet), and a failed audit. */
__u32 ps_first = 0;
__u32 ps_disabled = 0;
/* Written by user space: the stack words to read, 1 to PS_WINDOW (0: none yet). */
__u32 ps_words = 0;

/* An array, which the verifier inlines the lookups of. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* PS_SLOTS when on */
	__type(key, __u32);
	__type(value, struct ps_frame);
} ps_frames SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* PS_SLOTS when on */
	__type(key, __u32);
	__type(value, __u64);
} ps_paths SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024); /* a valid size for any page size; more when on */
} ps_samples SEC(".maps");

/* Per CPU: the stack above ctx, countdowns to the next audit and the next
 * sample, and whether the window is in use (a program nested in this one
 * on the same CPU: an interrupt's allocation, before kernels checked
 * recursion, then keys its page by its stack). */
struct ps_cpu {
	__u64 win[PS_WINDOW];
	__u64 ctx_addr; /* ctx as a number */
	__u32 until_audit;
	__u32 until_sample;
	__u32 busy;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ps_cpu);
} ps_cpu SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ps_stats);
} ps_stats SEC(".maps");

/* Per-CPU diagnostics: plain adds (a nested program may lose one). */
#define PS_COUNT(st, what)                                                               \
	({                                                                               \
		if (st)                                                                  \
			(st)->what++;                                                    \
	})

#define PS_READ(x) (*(volatile typeof(x) *)&(x))

/* A return address as saved on the stack, without arm64's pointer
 * authentication code: kernel text lies where bits 48-63 are all ones
 * (x86-64's too), and bit 55 tells kernel from user addresses. */
static __always_inline __u64 ps_strip(__u64 ret)
{
	return ret >> 55 & 1 ? ret | 0xffff000000000000ULL : ret;
}

/*
 * x, known to be below limit (a power of two), masked so that the verifier
 * knows it too: 5.10's and 6.1's lose the bound of a comparison on a copy
 * (a spilled one, a 32-bit one), and the compiler drops a mask it can
 * prove useless unless it forgets what it knew.
 */
static __always_inline __u64 ps_bounded(__u64 x, __u64 limit)
{
	asm volatile("" : "+r"(x));
	return x & (limit - 1);
}

/*
 * Copies the size bytes above ctx (at addr) to dst; what lies past the top
 * of the stack reads as zeros.  A stack's top is page-aligned: a read that
 * fails is tried again up to the end of addr's 4 KiB page.  The bytes
 * read, or 0.
 */
static __always_inline __u32 ps_read_above(void *dst, __u32 size, void *ctx, __u64 addr)
{
	__u64 head = 4096 - (addr & 4095);

	if (!bpf_probe_read_kernel(dst, size, ctx))
		return size;
	if (head >= size ||
	    bpf_probe_read_kernel(dst, ps_bounded(head, PS_WINDOW * 8), (void *)addr))
		return 0;
	return head;
}

static __always_inline struct ps_frame *ps_frame_of(__u64 ret)
{
	__u32 i = ps_slot(ret);
	struct ps_frame *f = bpf_map_lookup_elem(&ps_frames, &i);

	if (f && f->ret == ret)
		return f;
	i ^= 1;
	f = bpf_map_lookup_elem(&ps_frames, &i);
	return f && f->ret == ret ? f : NULL;
}

/* Whether audits agreed on this path. */
static __always_inline bool ps_path_known(__u64 path)
{
	__u32 i = ps_slot(path);
	__u64 *p = bpf_map_lookup_elem(&ps_paths, &i);

	if (p && *p == path)
		return true;
	i ^= 1;
	p = bpf_map_lookup_elem(&ps_paths, &i);
	return p && *p == path;
}

/* The caller from learned frames, or 0; *path: the return addresses read. */
static __always_inline __u64 ps_learned_site(void *ctx, struct ps_cpu *c, struct ps_stats *st,
					     __u64 *path)
{
	__u64 w = PS_READ(ps_first), words = PS_READ(ps_words);
	bool in_allocator = false;
	struct ps_frame *f;
	__u64 ret;

	if (!w || PS_READ(ps_disabled) || !words)
		return 0;
	/* ctx is a kernel stack address: the words above it, at once;
	 * only those read this time are looked at (the rest are an earlier
	 * allocation's). */
	words = ps_read_above(c->win, (ps_bounded(words - 1, PS_WINDOW) + 1) * 8, ctx,
			      PS_READ(c->ctx_addr)) / 8;
	for (int i = 0; i < PS_WALK; i++) {
		if (w >= words) {
			PS_COUNT(st, deep);
			return 0;
		}
		ret = ps_strip(c->win[ps_bounded(w, PS_WINDOW)]);
		f = ret ? ps_frame_of(ret) : NULL; /* 0: past the stack's top */
		if (!f)
			return 0;
		*path = ps_path_add(*path, ret);
		if (f->kind == PS_KIND_SITE)
			return ret;
		/* Machinery after the allocator: not a path user space saw. */
		if (f->kind == PS_KIND_GLUE && in_allocator)
			return 0;
		in_allocator |= f->kind == PS_KIND_ALLOC;
		w += f->delta / 8;
	}
	return 0;
}

/* Sends user space this allocation's return addresses and the stack
 * above ctx; claimed: the caller the learned frames gave (an audit). */
static __always_inline void ps_sample(void *ctx, __u64 ctx_addr, struct ps_stats *st,
				      __u64 claimed, __u64 path)
{
	struct ps_sample *r = bpf_ringbuf_reserve(&ps_samples, sizeof(*r), 0);
	long n;

	if (!r) {
		PS_COUNT(st, dropped);
		return;
	}
	r->claimed = claimed;
	r->path = path;
	n = bpf_get_stack(ctx, r->ips, sizeof(r->ips), PS_SKIP);
	r->n = n > 0 ? n / sizeof(__u64) : 0;
	r->raw_len = ps_read_above(r->raw, sizeof(r->raw), ctx, ctx_addr);
	/* User space reads the ring on its own schedule: no wakeups. */
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
	PS_COUNT(st, samples);
}

/* The caller of the page allocation being traced, or 0: key it by its stack. */
static __always_inline __u64 pagesite_find(void *ctx)
{
	__u32 zero = 0;
	struct ps_stats *st;
	struct ps_cpu *c;
	__u64 site, path = 0, ctx_addr;

	if (!ps_on)
		return 0;
	st = bpf_map_lookup_elem(&ps_stats, &zero);
	c = bpf_map_lookup_elem(&ps_cpu, &zero);
	if (!c || PS_READ(c->busy))
		return 0;
	PS_READ(c->busy) = 1;
	/* Through memory: ctx as a number (a privileged program's right). */
	PS_READ(c->ctx_addr) = (__u64)ctx;
	site = ps_learned_site(ctx, c, st, &path);
	/* Kept while busy: once it is not, another task's program (7.x: a
	 * preempted run) may write its own ctx there. */
	ctx_addr = PS_READ(c->ctx_addr);
	PS_READ(c->busy) = 0;
	if (site) {
		bool known = ps_path_known(path);

		if (known && c->until_audit--) {
			PS_COUNT(st, fast);
			return site;
		}
		if (known)
			c->until_audit = PS_AUDIT - 1;
		PS_COUNT(st, audits);
		PS_COUNT(st, misses);
		ps_sample(ctx, ctx_addr, st, site, path);
		return 0;
	}
	PS_COUNT(st, misses);
	if (c->until_sample--)
		return 0;
	c->until_sample = PS_SAMPLE_EVERY - 1;
	ps_sample(ctx, ctx_addr, st, 0, 0);
	return 0;
}

#endif /* KMEMSNOOP_PAGESITE_BPF_H */
