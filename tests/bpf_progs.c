// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF programs' logic in isolation: kmemsnoop's own object, loaded
 * with chosen switches, its raw_tp entry points run on crafted tracepoint
 * arguments with BPF_PROG_TEST_RUN, and its maps read back.  This reaches
 * what a workload cannot provoke on demand: a free BPF never saw, a full
 * bucket, a page freed with another order, and the same event counted by
 * two parts of the object at once.
 *
 * Needs root.  Prints PASS:/FAIL:/SKIP: lines (tests/run.sh counts them);
 * exits 1 when something failed.  Both allocinfo paths run: with BPF
 * atomics (raw_*, the bucketed table) where the kernel has them, and
 * without (rawc_*, hash maps), which every kernel loads.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/histmaps.h"
#include "bpf/kmemsnoop.h"
#include "bpf/pagesite_defs.h"
#include "kernel/kernel_features.h"
#include "recording/record.h"
#include "recording/tasktab.h"
#include "stream/ringbuf.h"
#include "util/clock.h"
#include "kmemsnoop.skel.h"

#define CPU 0                       /* the tests run pinned here */
#define SITE1 0xffffffff81100000ULL /* call sites: any kernel-looking address */
#define SITE2 0xffffffff81200000ULL
#define PTR 0xffff888100001000ULL
#define GFP_KERNEL 0xcc0

static int failures;
static struct kernel_features kf;
static int ncpus;

/* "PASS: name", or "FAIL: name: what was seen": fmt starts with the name
 * and a colon. */
__attribute__((format(printf, 2, 3))) static void result(bool ok, const char *fmt, ...)
{
	char line[1024], *colon;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	colon = strchr(line, ':');
	if (ok && colon)
		*colon = '\0';
	printf("%s: %s\n", ok ? "PASS" : "FAIL", line);
	failures += !ok;
}

/* --- the object ----------------------------------------------------------------- */

struct setup {
	bool stream, hist, allocinfo, stat;
	bool atomics;           /* the raw_ entry points, else rawc_ */
	bool large;             /* kmallocs above 2 pages come from pages (SLUB) */
	bool pagesite;          /* pages' callers from learned frames */
	__u32 buckets;          /* allocinfo's table: a power of two */
	__u64 min_size, max_size; /* a size filter when max_size is set */
};

static struct bpf_program *entry(struct kmemsnoop_bpf *skel, bool atomics, const char *tp)
{
	char name[64];

	snprintf(name, sizeof(name), "%s%s", atomics ? "raw_" : "rawc_", tp);
	return bpf_object__find_program_by_name(skel->obj, name);
}

static const char *const used_tps[] = { "kmalloc", "kfree", "mm_page_alloc", "mm_page_free" };

/* Rodata and map sizes as the modes set them for these cases. */
static void configure(struct kmemsnoop_bpf *skel, const struct setup *s)
{
	struct kmemsnoop_bpf__rodata *ro = skel->rodata;
	struct bpf_program *prog;

	ro->do_stream = s->stream;
	ro->do_hist = s->hist;
	ro->do_allocinfo = s->allocinfo;
	ro->do_stat = s->stat;
	ro->filtered_free_classes = s->stream || s->hist || s->stat ? EV_ALL : 0;
	ro->page_size = 4096;
	ro->kmalloc_args = kf.kmalloc_args;
	ro->cache_alloc_args = kf.cache_alloc_args;
	ro->cache_free_args = kf.cache_free_args;
	if (s->max_size) {
		ro->filter_size = ro->sized_frees = true;
		ro->min_size = s->min_size;
		ro->max_size = s->max_size;
		bpf_map__set_max_entries(skel->maps.sized_ptrs, 64);
	}
	if (s->allocinfo) {
		ro->ai_max_sites = 16;
		ro->ai_bucket_mask = s->buckets - 1;
		ro->ai_bucket_shift = 64 - (s->buckets > 1 ? __builtin_ctz(s->buckets) : 1);
		bpf_map__set_max_entries(skel->maps.ai_table, s->buckets);
		bpf_map__set_max_entries(skel->maps.ai_site_ids, 16);
		bpf_map__set_max_entries(skel->maps.ai_counts, 16);
		bpf_map__set_max_entries(skel->maps.ai_ptrs, 64);
		bpf_map__set_max_entries(skel->maps.ai_sites, 16);
		bpf_map__set_max_entries(skel->maps.ai_stack_map, 64);
	}
	if (s->stat) {
		bpf_map__set_max_entries(skel->maps.stat_ptrs, 2);
		bpf_map__set_max_entries(skel->maps.stat_sites, 16);
		bpf_map__set_max_entries(skel->maps.stat_cache_names, 16);
		bpf_map__set_max_entries(skel->maps.stat_procs, 16);
	}
	if (s->large) {
		ro->large_kmalloc_over = 2 * 4096;
		ro->large_min_order = 2;
		bpf_map__set_max_entries(skel->maps.hist_large_pages, 16);
	}
	if (s->pagesite) {
		ro->ps_on = true;
		bpf_map__set_max_entries(skel->maps.ps_frames, PS_SLOTS);
		bpf_map__set_max_entries(skel->maps.ps_paths, PS_SLOTS);
	}
	if (s->stream)
		bpf_map__set_max_entries(skel->maps.rings, ncpus);
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, false);
	for (size_t i = 0; i < sizeof(used_tps) / sizeof(used_tps[0]); i++)
		bpf_program__set_autoload(entry(skel, s->atomics, used_tps[i]), true);
}

static struct kmemsnoop_bpf *load(const struct setup *s, const char *name)
{
	struct kmemsnoop_bpf *skel = kmemsnoop_bpf__open();

	if (!skel) {
		result(false, "%s: opening the BPF object: %s", name, strerror(errno));
		return NULL;
	}
	configure(skel, s);
	if (kmemsnoop_bpf__load(skel)) {
		result(false, "%s: loading: %s", name, strerror(errno));
		kmemsnoop_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

/* Runs the entry point of tp on args; false (and a FAIL) if the kernel
 * refused to run it. */
static bool run(struct kmemsnoop_bpf *skel, const struct setup *s, const char *tp,
		const __u64 *args, size_t nargs)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = nargs * sizeof(*args));
	int err = bpf_prog_test_run_opts(bpf_program__fd(entry(skel, s->atomics, tp)), &opts);

	if (err)
		result(false, "running %s with BPF_PROG_TEST_RUN: %s", tp, strerror(errno));
	return !err;
}

/* kmalloc(call_site, ptr, bytes_req, bytes_alloc, gfp[, node]). */
static bool kmalloc(struct kmemsnoop_bpf *skel, const struct setup *s, __u64 site, __u64 ptr,
		    __u64 req, __u64 alloc)
{
	__u64 args[6] = { site, ptr, req, alloc, GFP_KERNEL, (__u64)-1 };

	return run(skel, s, "kmalloc", args, kf.kmalloc_args == KMT_KMALLOC_NODE ? 6 : 5);
}

static bool kfree(struct kmemsnoop_bpf *skel, const struct setup *s, __u64 ptr)
{
	__u64 args[2] = { SITE1, ptr };

	return run(skel, s, "kfree", args, 2);
}

/* --- reading the maps ------------------------------------------------------------ */

/* A site's bytes and calls, summed over the CPUs (-1, -1 when absent). */
static void site_counts(struct kmemsnoop_bpf *skel, const struct setup *s, __u64 site,
			long long *bytes, long long *calls)
{
	struct kmt_ai_count per_cpu[ncpus];
	__u32 idx;
	int err;

	*bytes = *calls = -1;
	if (s->atomics) {
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.ai_site_ids), &site, &idx))
			return;
		err = bpf_map_lookup_elem(bpf_map__fd(skel->maps.ai_counts), &idx, per_cpu);
	} else {
		err = bpf_map_lookup_elem(bpf_map__fd(skel->maps.ai_sites), &site, per_cpu);
	}
	if (err)
		return;
	*bytes = *calls = 0;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		*bytes += per_cpu[cpu].bytes;
		*calls += per_cpu[cpu].calls;
	}
}

/* Bytes and calls over every site. */
static void all_counts(struct kmemsnoop_bpf *skel, const struct setup *s, long long *bytes,
		       long long *calls)
{
	int fd = bpf_map__fd(s->atomics ? skel->maps.ai_site_ids : skel->maps.ai_sites);
	__u64 key, *prev = NULL;
	long long b, c;

	*bytes = *calls = 0;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		site_counts(skel, s, key, &b, &c);
		if (b != -1) {
			*bytes += b;
			*calls += c;
		}
	}
}

static struct kmt_ai_stats ai_stats(struct kmemsnoop_bpf *skel)
{
	struct kmt_ai_stats per_cpu[ncpus], sum = { 0 };
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.ai_stats), &zero, per_cpu))
		return sum;
	for (int cpu = 0; cpu < ncpus; cpu++)
		for (size_t i = 0; i < sizeof(sum) / sizeof(__u64); i++)
			((__u64 *)&sum)[i] += ((__u64 *)&per_cpu[cpu])[i];
	return sum;
}

/* This CPU's level-0 histogram counters. */
static bool hist_level0(struct kmemsnoop_bpf *skel, struct kmt_hist_level *out)
{
	struct kmt_hist_cpu *per_cpu = calloc(ncpus, sizeof(*per_cpu));
	__u32 zero = 0;
	bool ok = per_cpu &&
		  !bpf_map_lookup_elem(bpf_map__fd(skel->maps.hist_cpu), &zero, per_cpu);

	if (ok)
		*out = per_cpu[CPU].level[0];
	free(per_cpu);
	return ok;
}

static unsigned long long sum_slots(const __u64 *slots)
{
	unsigned long long n = 0;

	for (int i = 0; i < KMT_HIST_SLOTS; i++)
		n += slots[i];
	return n;
}

/* --- allocinfo ------------------------------------------------------------------------ */

static const char *path_name(const struct setup *s)
{
	return s->atomics ? "table" : "hash";
}

/* Its free unseen, a pointer allocated again: the first allocation is
 * retired and counted as replaced; a second free is untracked. */
static void test_missed_free(const struct setup *base)
{
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	long long b1, c1, b2, c2;
	struct kmt_ai_stats st;

	s.allocinfo = true;
	s.buckets = 4;
	skel = load(&s, "allocinfo.missed_free");
	if (!skel)
		return;
	if (kmalloc(skel, &s, SITE1, PTR, 200, 256) && kmalloc(skel, &s, SITE2, PTR, 200, 256)) {
		site_counts(skel, &s, SITE1, &b1, &c1);
		site_counts(skel, &s, SITE2, &b2, &c2);
		st = ai_stats(skel);
		result(b1 == 0 && c1 == 0 && b2 == 256 && c2 == 1 && st.replaced == 1 &&
			       st.replaced_bytes == 256,
		       "allocinfo.%s.missed_free: after two allocations of one pointer: site 1 "
		       "%lld/%lld (want 0/0), site 2 %lld/%lld (want 256/1), replaced %llu/%llu "
		       "(want 1/256), not counted %llu (want 0)", path_name(&s), b1, c1, b2, c2,
		       (unsigned long long)st.replaced, (unsigned long long)st.replaced_bytes,
		       (unsigned long long)st.ptrs_full);
	}
	if (kfree(skel, &s, PTR)) {
		site_counts(skel, &s, SITE2, &b2, &c2);
		st = ai_stats(skel);
		result(b2 == 0 && c2 == 0 && st.untracked_frees[KMT_TYPE_KMALLOC] == 0,
		       "allocinfo.%s.free: site 2 %lld/%lld after the free (want 0/0), %llu "
		       "untracked (want 0)", path_name(&s), b2, c2,
		       (unsigned long long)st.untracked_frees[KMT_TYPE_KMALLOC]);
	}
	if (kfree(skel, &s, PTR)) {
		st = ai_stats(skel);
		result(st.untracked_frees[KMT_TYPE_KMALLOC] == 1,
		       "allocinfo.%s.double_free: a second free is untracked: %llu (want 1)",
		       path_name(&s), (unsigned long long)st.untracked_frees[KMT_TYPE_KMALLOC]);
	}
	kmemsnoop_bpf__destroy(skel);
}

/* NULL and ZERO_SIZE_PTR allocate nothing; kfree(NULL) frees nothing. */
static void test_zero(const struct setup *base)
{
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	long long b, c;
	struct kmt_ai_stats st;

	s.allocinfo = true;
	s.buckets = 4;
	skel = load(&s, "allocinfo.zero");
	if (!skel)
		return;
	if (kmalloc(skel, &s, SITE1, 0, 100, 128) &&
	    kmalloc(skel, &s, SITE1, KMT_ZERO_SIZE_PTR, 0, 0) && kfree(skel, &s, 0) &&
	    kfree(skel, &s, KMT_ZERO_SIZE_PTR)) {
		site_counts(skel, &s, SITE1, &b, &c);
		st = ai_stats(skel);
		result(b == -1 && st.untracked_frees[KMT_TYPE_KMALLOC] == 0,
		       "allocinfo.%s.zero: NULL and ZERO_SIZE_PTR: site %s, %llu untracked frees "
		       "(want no site, 0)", path_name(&s), b == -1 ? "absent" : "counted",
		       (unsigned long long)st.untracked_frees[KMT_TYPE_KMALLOC]);
	}
	kmemsnoop_bpf__destroy(skel);
}

/* One bucket of 8 slots: the ninth pointer is counted as not tracked. */
static void test_full_bucket(const struct setup *base)
{
	enum { SLOTS = KMT_AI_BUCKET_SLOTS };
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	struct kmt_ai_stats st;
	long long b, c;
	bool ran = true;

	if (!s.atomics)
		return; /* the hash map has no buckets of its own to fill */
	s.allocinfo = true;
	s.buckets = 1;
	skel = load(&s, "allocinfo.full_bucket");
	if (!skel)
		return;
	for (int i = 0; i <= SLOTS && ran; i++)
		ran = kmalloc(skel, &s, SITE1, PTR + i * 64, 64, 64);
	site_counts(skel, &s, SITE1, &b, &c);
	st = ai_stats(skel);
	result(ran && b == SLOTS * 64 && c == SLOTS && st.ptrs_full == 1 && st.ptrs_full_bytes == 64,
	       "allocinfo.table.full_bucket: %d allocations into one bucket of %d: site %lld/%lld "
	       "(want %d/%d), not counted %llu/%llu (want 1/64)", SLOTS + 1, SLOTS, b, c,
	       SLOTS * 64, SLOTS, (unsigned long long)st.ptrs_full,
	       (unsigned long long)st.ptrs_full_bytes);
	for (int i = 0; i < SLOTS && ran; i++)
		ran = kfree(skel, &s, PTR + i * 64);
	site_counts(skel, &s, SITE1, &b, &c);
	result(ran && b == 0 && c == 0, "allocinfo.table.full_bucket_release: after the frees "
	       "%lld/%lld (want 0/0)", b, c);
	kmemsnoop_bpf__destroy(skel);
}

/* A page freed with another order than allocated: the allocation ends,
 * and the mismatch is counted. */
static void test_page_order(const struct setup *base)
{
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	__u64 alloc[4] = { PTR, 2, GFP_KERNEL, 0 }, free_args[2] = { PTR, 0 };
	struct kmt_ai_stats st;

	s.allocinfo = true;
	s.buckets = 4;
	skel = load(&s, "allocinfo.page_order");
	if (!skel)
		return;
	if (run(skel, &s, "mm_page_alloc", alloc, 4) &&
	    run(skel, &s, "mm_page_free", free_args, 2)) {
		st = ai_stats(skel);
		result(st.order_mismatch == 1 && st.stack_failed == 0 &&
			       st.untracked_frees[KMT_TYPE_PAGES] == 0,
		       "allocinfo.%s.page_order: order 2 allocated, order 0 freed: mismatch %llu "
		       "(want 1), untracked %llu (want 0), no stack %llu (want 0)", path_name(&s),
		       (unsigned long long)st.order_mismatch,
		       (unsigned long long)st.untracked_frees[KMT_TYPE_PAGES],
		       (unsigned long long)st.stack_failed);
	}
	kmemsnoop_bpf__destroy(skel);
}

/* --- pages' callers from learned frames ------------------------------------------------ */

#define PS_GLUE 0xffffffff81300010ULL  /* return addresses of made-up frames */
#define PS_ALLOC 0xffffffff81300020ULL
#define PS_SITE 0xffffffff81300030ULL
#define PS_OTHER 0xffffffff81300040ULL

static void ps_put(int fd, __u32 i, const void *val)
{
	bpf_map_update_elem(fd, &i, val, BPF_ANY);
}

/* frames: GLUE -> ALLOC -> SITE, each the word above the one before. */
static void ps_learned(struct kmemsnoop_bpf *skel, bool path_known)
{
	struct ps_frame f[3] = {
		{ PS_GLUE, 8, PS_KIND_GLUE }, { PS_ALLOC, 8, PS_KIND_ALLOC }, { PS_SITE, 0, PS_KIND_SITE },
	};
	__u64 path = ps_path_add(ps_path_add(ps_path_add(0, PS_GLUE), PS_ALLOC), PS_SITE), none = 0;

	for (int i = 0; i < 3; i++)
		ps_put(bpf_map__fd(skel->maps.ps_frames), ps_slot(f[i].ret), &f[i]);
	ps_put(bpf_map__fd(skel->maps.ps_paths), ps_slot(path), path_known ? &path : &none);
	/* ctx's words 4 on: mm_page_alloc has four arguments. */
	skel->bss->ps_first = 4;
	skel->bss->ps_words = 8;
}

static struct ps_stats ps_stats(struct kmemsnoop_bpf *skel)
{
	struct ps_stats per_cpu[ncpus], sum = { 0 };
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.ps_stats), &zero, per_cpu))
		return sum;
	for (int cpu = 0; cpu < ncpus; cpu++)
		for (size_t i = 0; i < sizeof(sum) / sizeof(__u64); i++)
			((__u64 *)&sum)[i] += ((__u64 *)&per_cpu[cpu])[i];
	return sum;
}

/*
 * The walk over made-up stack words (the words after the arguments of
 * ctx): a learned, confirmed path gives its caller; a path not confirmed,
 * a frame not learned, machinery after the allocator, or the frames
 * switched off leave the page to its stack.
 */
static void test_pagesite(const struct setup *base)
{
	static const struct {
		const char *name;
		bool path_known, disabled;
		__u32 read; /* stack words read, if not 8 */
		__u64 words[3];
		bool fast; /* counted under PS_SITE */
	} cases[] = {
		{ "learned", true, false, 0, { PS_GLUE, PS_ALLOC, PS_SITE }, true },
		{ "unconfirmed_path", false, false, 0, { PS_GLUE, PS_ALLOC, PS_SITE }, false },
		{ "unknown_frame", true, false, 0, { PS_GLUE, PS_OTHER, PS_SITE }, false },
		{ "glue_after_allocator", true, false, 0, { PS_ALLOC, PS_GLUE, PS_SITE }, false },
		{ "switched_off", true, true, 0, { PS_GLUE, PS_ALLOC, PS_SITE }, false },
		/* The caller's word (6) not read this time: never an older read's. */
		{ "past_words_read", true, false, 6, { PS_GLUE, PS_ALLOC, PS_SITE }, false },
	};
	struct setup s = *base;

	s.allocinfo = true;
	s.pagesite = true;
	s.buckets = 4;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		__u64 args[8] = { PTR, 0, GFP_KERNEL, 0, cases[i].words[0], cases[i].words[1],
				  cases[i].words[2], 0 };
		struct kmemsnoop_bpf *skel = load(&s, "pagesite");
		long long b, c, all_b, all_c;
		struct ps_stats st;

		if (!skel)
			return;
		ps_learned(skel, cases[i].path_known);
		skel->bss->ps_disabled = cases[i].disabled;
		if (cases[i].read)
			skel->bss->ps_words = cases[i].read;
		/* Twice: a CPU's first caller from learned frames is audited. */
		if (run(skel, &s, "mm_page_alloc", args, 8) &&
		    (args[0] += 4096, run(skel, &s, "mm_page_alloc", args, 8))) {
			site_counts(skel, &s, PS_SITE, &b, &c);
			all_counts(skel, &s, &all_b, &all_c);
			st = ps_stats(skel);
			result(all_b == 8192 && all_c == 2 &&
				       (cases[i].fast ? b == 4096 && c == 1 && st.fast == 1 &&
							st.audits == 1
						      : b == -1 && st.fast == 0 && st.misses == 2),
			       "pagesite.%s.%s: two pages: under the learned caller %lld/%lld, in all "
			       "%lld/%lld; %llu from learned frames, %llu keyed by their stack, %llu "
			       "audits (want %s)", path_name(&s), cases[i].name, b, c, all_b, all_c,
			       (unsigned long long)st.fast, (unsigned long long)st.misses,
			       (unsigned long long)st.audits,
			       cases[i].fast ? "one under the caller, one audit" : "both by their stack");
		}
		kmemsnoop_bpf__destroy(skel);
	}
}

/*
 * A large kmalloc as 6.18 traces it: its page, a kmalloc
 * from the kernel's large-kmalloc helper, the same kmalloc from its
 * caller; then kfree and the page's free.  --allocinfo and --hist
 * together count one allocation, under the caller, and one free.
 */
static void test_large(const struct setup *base)
{
	enum { BYTES = 16384, SLOT_ORDER = 2 };
	const __u64 page = 0xffffea0000400000ULL, inner = SITE2;
	__u64 palloc[4] = { page, SLOT_ORDER, GFP_KERNEL, 0 }, pfree[2] = { page, SLOT_ORDER };
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	struct kmt_hist_level l;
	struct kmt_ai_stats st;
	long long b1, c1, b2, c2, ball, call;
	__u32 slot = kmt_hist_slot(BYTES);
	unsigned long long t0, gap_ns;

	s.allocinfo = s.hist = s.large = true;
	s.buckets = 4;
	skel = load(&s, "large.counts");
	if (!skel)
		return;
	if (run(skel, &s, "mm_page_alloc", palloc, 4) && (t0 = now_ns()) &&
	    kmalloc(skel, &s, inner, PTR, 10240, BYTES) && kmalloc(skel, &s, SITE1, PTR, 10240, BYTES) &&
	    (gap_ns = now_ns() - t0) && hist_level0(skel, &l)) {
		site_counts(skel, &s, SITE1, &b1, &c1);
		site_counts(skel, &s, inner, &b2, &c2);
		all_counts(skel, &s, &ball, &call);
		st = ai_stats(skel);
		/* The programs take a second kmalloc of the pointer as the same
		 * one within 1 ms only: a VM stalled between the two runs. */
		if (gap_ns >= 1000000 && (st.replaced || l.slots[KMT_TYPE_KMALLOC][slot] != 1)) {
			printf("SKIP: large.%s.counts: the two kmallocs ran %.1f ms apart (a stall of "
			       "the machine), more than the 1 ms within which the programs take the "
			       "second as the same allocation\n", path_name(&s), gap_ns / 1e6);
			kmemsnoop_bpf__destroy(skel);
			return;
		}
		result(b1 == BYTES && c1 == 1 && b2 == 0 && c2 == 0 && ball == BYTES && call == 1 &&
			       st.replaced == 0 && l.slots[KMT_TYPE_PAGES][slot] == 0 &&
			       l.slots[KMT_TYPE_KMALLOC][slot] == 1 &&
			       l.bytes_alloc[KMT_TYPE_KMALLOC] == BYTES &&
			       l.bytes_alloc[KMT_TYPE_PAGES] == 0,
		       "large.%s.counts: a page and two kmallocs of it: caller %lld/%lld (want "
		       "%d/1), helper %lld/%lld (want 0/0), all %lld/%lld (want %d/1), replaced %llu "
		       "(want 0); hist pages %llu, kmallocs %llu of %llu bytes (want 0, 1, %d)",
		       path_name(&s), b1, c1, BYTES, b2, c2, ball, call, BYTES,
		       (unsigned long long)st.replaced,
		       (unsigned long long)l.slots[KMT_TYPE_PAGES][slot],
		       (unsigned long long)l.slots[KMT_TYPE_KMALLOC][slot],
		       (unsigned long long)l.bytes_alloc[KMT_TYPE_KMALLOC], BYTES);
	}
	if (kfree(skel, &s, PTR) && run(skel, &s, "mm_page_free", pfree, 2) &&
	    hist_level0(skel, &l)) {
		all_counts(skel, &s, &ball, &call);
		st = ai_stats(skel);
		result(ball == 0 && call == 0 && st.untracked_frees[KMT_TYPE_PAGES] == 0 &&
			       st.untracked_frees[KMT_TYPE_KMALLOC] == 0 && st.order_mismatch == 0 &&
			       l.frees[KMT_TYPE_KMALLOC] == 1 && l.frees[KMT_TYPE_PAGES] == 0,
		       "large.%s.free: kfree and the page's free: all %lld/%lld (want 0/0), "
		       "untracked %llu/%llu (want 0/0), order mismatch %llu (want 0); hist frees "
		       "%llu kmalloc, %llu pages (want 1, 0)", path_name(&s), ball, call,
		       (unsigned long long)st.untracked_frees[KMT_TYPE_KMALLOC],
		       (unsigned long long)st.untracked_frees[KMT_TYPE_PAGES],
		       (unsigned long long)st.order_mismatch,
		       (unsigned long long)l.frees[KMT_TYPE_KMALLOC],
		       (unsigned long long)l.frees[KMT_TYPE_PAGES]);
	}
	kmemsnoop_bpf__destroy(skel);
}

/* --- hist, filters, both parts at once --------------------------------------------- */

static void test_hist(const struct setup *base)
{
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	struct kmt_hist_level l;
	__u32 slot = kmt_hist_slot(256);

	s.hist = true;
	skel = load(&s, "hist.counts");
	if (!skel)
		return;
	if (kmalloc(skel, &s, SITE1, PTR, 200, 256) && kmalloc(skel, &s, SITE1, 0, 300, 512) &&
	    kfree(skel, &s, PTR) && hist_level0(skel, &l))
		result(l.slots[KMT_TYPE_KMALLOC][slot] == 1 && l.bytes_alloc[KMT_TYPE_KMALLOC] == 256 &&
			       l.bytes_req[KMT_TYPE_KMALLOC] == 200 &&
			       l.failed[KMT_TYPE_KMALLOC] == 1 && l.frees[KMT_TYPE_KMALLOC] == 1,
		       "hist.%s.counts: bucket of 256 %llu (want 1), bytes %llu/%llu (want "
		       "256/200), failed %llu (want 1), frees %llu (want 1)", path_name(&s),
		       (unsigned long long)l.slots[KMT_TYPE_KMALLOC][slot],
		       (unsigned long long)l.bytes_alloc[KMT_TYPE_KMALLOC],
		       (unsigned long long)l.bytes_req[KMT_TYPE_KMALLOC],
		       (unsigned long long)l.failed[KMT_TYPE_KMALLOC],
		       (unsigned long long)l.frees[KMT_TYPE_KMALLOC]);
	kmemsnoop_bpf__destroy(skel);
}

/*
 * --hist and --allocinfo in one object with --min-size 100 --max-size 200:
 * an allocation of 50 bytes counts nowhere, nor does its free; one of 150
 * counts in both, and so does its free.
 */
static void test_filter_both(const struct setup *base)
{
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	struct kmt_hist_level l;
	long long b, c;

	s.hist = s.allocinfo = true;
	s.buckets = 4;
	s.min_size = 100;
	s.max_size = 200;
	skel = load(&s, "both.size_filter");
	if (!skel)
		return;
	if (!kmalloc(skel, &s, SITE1, PTR, 50, 64) || !kmalloc(skel, &s, SITE2, PTR + 64, 150, 192) ||
	    !hist_level0(skel, &l)) {
		kmemsnoop_bpf__destroy(skel);
		return;
	}
	site_counts(skel, &s, SITE1, &b, &c);
	result(b == -1 && sum_slots(l.slots[KMT_TYPE_KMALLOC]) == 1 &&
		       l.bytes_req[KMT_TYPE_KMALLOC] == 150,
	       "both.%s.size_filter: 50 bytes: site %s (want absent); hist %llu allocations of "
	       "%llu bytes requested (want 1 of 150)", path_name(&s), b == -1 ? "absent" : "counted",
	       (unsigned long long)sum_slots(l.slots[KMT_TYPE_KMALLOC]),
	       (unsigned long long)l.bytes_req[KMT_TYPE_KMALLOC]);
	site_counts(skel, &s, SITE2, &b, &c);
	result(b == 192 && c == 1, "both.%s.allocinfo: 150 bytes: site %lld/%lld (want 192/1)",
	       path_name(&s), b, c);
	if (kfree(skel, &s, PTR) && kfree(skel, &s, PTR + 64) && hist_level0(skel, &l)) {
		site_counts(skel, &s, SITE2, &b, &c);
		result(l.frees[KMT_TYPE_KMALLOC] == 1 && b == 0 && c == 0,
		       "both.%s.frees: hist frees %llu (want 1: the filtered one's free is "
		       "filtered too), site %lld/%lld (want 0/0)", path_name(&s),
		       (unsigned long long)l.frees[KMT_TYPE_KMALLOC], b, c);
	}
	kmemsnoop_bpf__destroy(skel);
}

/* --- the stream ----------------------------------------------------------------------- */

struct captured {
	int n, tasks;
	struct kmt_event ev;
	enum kmt_decode_status st;
	struct tasktab *names;
};

/* Task records are learned and counted; the last other record kept. */
static int on_record(void *ctx, void *data, size_t size)
{
	struct captured *cap = ctx;
	struct kmt_event ev;

	cap->st = kmt_decode(data, size, CPU, &ev);
	if (cap->st != KMT_OK)
		return 0;
	if (!tasktab_apply(cap->names, &ev)) {
		cap->tasks++;
		return 0;
	}
	cap->n++;
	cap->ev = ev;
	return 0;
}

/* One kmalloc: the task's record (the first of its tid on this CPU), then
 * the kmalloc's, decoding to the arguments and named by the task record. */
static void test_stream(const struct setup *base)
{
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	struct ring_buffer *rb = NULL;
	struct captured cap = { .names = tasktab_new() };
	__u32 cpu = CPU;
	int fd;

	s.stream = true;
	if (!cap.names)
		return;
	skel = load(&s, "stream.record");
	if (!skel)
		return;
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "test_ring", 0, 0, 1 << 16, NULL);
	if (fd < 0 || bpf_map_update_elem(bpf_map__fd(skel->maps.rings), &cpu, &fd, BPF_ANY) ||
	    !(rb = ring_buffer__new(fd, on_record, &cap, NULL))) {
		result(false, "stream.record: making the ring: %s", strerror(errno));
	} else if (kmalloc(skel, &s, SITE1, PTR, 200, 256)) {
		ring_buffer__consume(rb);
		result(cap.n == 1 && cap.tasks == 1 && cap.st == KMT_OK && cap.ev.event_size == 64 &&
			       cap.ev.call_site == SITE1 && cap.ev.ptr == PTR &&
			       cap.ev.bytes_req == 200 && cap.ev.bytes_alloc == 256 &&
			       cap.ev.gfp_flags == GFP_KERNEL && cap.ev.has_task &&
			       cap.ev.pid == (__u32)getpid() && cap.ev.tid == (__u32)gettid(),
		       "stream.%s.record: %d records and %d task records (want 1 and 1), decoded "
		       "%s, size %u (want 64), call site %llx, ptr %llx, %llu/%llu bytes (want "
		       "200/256), pid %u (want %d), tid %u (want %d)",
		       path_name(&s), cap.n, cap.tasks, kmt_decode_error(cap.st), cap.ev.event_size,
		       (unsigned long long)cap.ev.call_site, (unsigned long long)cap.ev.ptr,
		       (unsigned long long)cap.ev.bytes_req, (unsigned long long)cap.ev.bytes_alloc,
		       cap.ev.pid, getpid(), cap.ev.tid, gettid());
	}
	ring_buffer__free(rb);
	if (fd >= 0)
		close(fd);
	tasktab_free(cap.names);
	kmemsnoop_bpf__destroy(skel);
}

/* --- records kept in the ring ------------------------------------------------------- */

#define KEEP_RING (16 << 10) /* 227 kmalloc records of 72 bytes with their headers */
#define KEEP_ROUNDS 20
#define KEEP_PER_ROUND 100 /* 2,000 records in all: 9 times what the ring holds */
#define KEEP_MAX 512

struct kept {
	const void *data;
	__u64 ptr; /* what it said when it came; 0: a task record */
};

struct keeper {
	struct ring_reader *rr;
	struct kept kept[KEEP_MAX];
	int nkept;
	__u64 next_ptr;  /* the kmalloc expected next */
	int bad, events; /* kmallocs out of sequence or altered, and in sequence */
	bool at_once;    /* every seventh given back while in hand */
	bool gaps;       /* records lost: the sequence may skip */
};

/* The kmalloc's pointer (0 for another record, ~0 when undecodable). */
static __u64 kept_ptr(const void *data, size_t size)
{
	struct kmt_event ev;

	if (kmt_decode(data, size, CPU, &ev) != KMT_OK)
		return ~0ULL;
	return kmt_is_memory_event(&ev) ? ev.ptr : 0;
}

static int keep_record(void *ctx, int ring, const void *data, size_t size)
{
	struct keeper *k = ctx;
	__u64 ptr = kept_ptr(data, size);

	if (ptr) {
		if (ptr != k->next_ptr && !(k->gaps && ptr > k->next_ptr && ptr != ~0ULL))
			k->bad++;
		k->next_ptr = ptr + 64;
		k->events++;
	}
	if ((k->at_once && k->events % 7 == 0) || k->nkept == KEEP_MAX)
		ring_reader_give_back(k->rr, ring, data);
	else
		k->kept[k->nkept++] = (struct kept){ data, ptr };
	return RING_KEPT;
}

/* Kept records from..to-1 given back, each first checked: the producer has
 * not written over it. */
static void give_back_range(struct keeper *k, int from, int to)
{
	for (int i = from; i < to; i++) {
		k->bad += kept_ptr(k->kept[i].data, 64) != k->kept[i].ptr;
		ring_reader_give_back(k->rr, 0, k->kept[i].data);
	}
}

/* Newest first: the consumer position moves only at the last, the oldest. */
static void give_all_back(struct keeper *k)
{
	for (int i = k->nkept - 1; i >= 0; i--)
		give_back_range(k, i, i + 1);
	k->nkept = 0;
}

static unsigned long long ring_losses(struct kmemsnoop_bpf *skel)
{
	return skel->bss->losses[CPU].events;
}

/* count kmallocs of consecutive pointers from *ptr, then the ring read. */
static void write_and_read(struct kmemsnoop_bpf *skel, const struct setup *s, struct keeper *k,
			   __u64 *ptr, int count)
{
	for (int i = 0; i < count; i++, *ptr += 64)
		kmalloc(skel, s, SITE1, *ptr, 200, 256);
	ring_reader_consume(k->rr);
}

/*
 * The reader of the live rings (src/stream/ringbuf.c) keeps records where the
 * ring has them: 2,000 records through a ring that holds 227, each kept
 * until its round ends and given back newest first (every seventh at
 * once, while in hand), arrive whole and in sequence with none lost.
 * Kept records hold the ring's space: kept on, the ring fills and loses
 * records, and none of the kept is written over; given back, the ring takes
 * records again.  Given back oldest first, only those are released.
 */
static void test_kept(const struct setup *base)
{
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	struct keeper k = { .next_ptr = PTR, .at_once = true };
	unsigned long long lost;
	__u64 ptr = PTR;
	__u32 cpu = CPU;
	int fd, round, events;

	s.stream = true;
	skel = load(&s, "stream.kept");
	if (!skel)
		return;
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "test_ring", 0, 0, KEEP_RING, NULL);
	if (fd < 0 || bpf_map_update_elem(bpf_map__fd(skel->maps.rings), &cpu, &fd, BPF_ANY) ||
	    !(k.rr = ring_reader_new(&fd, 1, KEEP_RING, keep_record, NULL, &k))) {
		result(false, "stream.kept: making the ring: %s", strerror(errno));
		goto out;
	}
	for (round = 0; round < KEEP_ROUNDS; round++) {
		write_and_read(skel, &s, &k, &ptr, KEEP_PER_ROUND);
		give_all_back(&k);
	}
	result(!k.bad && k.events == KEEP_ROUNDS * KEEP_PER_ROUND && !ring_losses(skel),
	       "stream.%s.kept_given_back: %d records in sequence (want %d), %d out of "
	       "sequence or altered, %llu lost (want 0)", path_name(&s), k.events,
	       KEEP_ROUNDS * KEEP_PER_ROUND, k.bad, ring_losses(skel));

	k.at_once = false;
	k.gaps = true;
	for (round = 0; round < 4; round++)
		write_and_read(skel, &s, &k, &ptr, KEEP_PER_ROUND);
	lost = ring_losses(skel);
	give_all_back(&k);
	events = k.events;
	write_and_read(skel, &s, &k, &ptr, KEEP_PER_ROUND);
	give_all_back(&k);
	result(lost > 0 && ring_losses(skel) == lost && k.events - events == KEEP_PER_ROUND &&
		       !k.bad,
	       "stream.%s.kept_hold_space: %llu lost with 400 kept (want some), then %llu "
	       "more and %d read after giving them back (want 0 and %d), %d altered (want 0)",
	       path_name(&s), lost, ring_losses(skel) - lost, k.events - events,
	       KEEP_PER_ROUND, k.bad);

	/* 150 kept, the oldest 10 given back: 100 more overflow what that
	 * freed, and must not land on the 140 still kept. */
	write_and_read(skel, &s, &k, &ptr, 150);
	give_back_range(&k, 0, 10);
	memmove(k.kept, k.kept + 10, (k.nkept - 10) * sizeof(k.kept[0]));
	k.nkept -= 10;
	write_and_read(skel, &s, &k, &ptr, 100);
	give_all_back(&k);
	result(!k.bad && ring_losses(skel) > lost,
	       "stream.%s.kept_oldest_first: %d kept records altered (want 0), %llu lost "
	       "(want some: the ring was full)", path_name(&s), k.bad, ring_losses(skel) - lost);
out:
	ring_reader_free(k.rr);
	if (fd >= 0)
		close(fd);
	kmemsnoop_bpf__destroy(skel);
}

/* --- --stat in maps ------------------------------------------------------------------ */

/* The kmalloc key of site with 256-byte objects, summed over the CPUs. */
static struct kmt_stat_site stat_site(struct kmemsnoop_bpf *skel, __u64 site)
{
	struct kmt_stat_key key = { .call_site = site, .bytes_alloc = 256,
				    .type = KMT_TYPE_KMALLOC };
	struct kmt_stat_site *per_cpu = calloc(ncpus, sizeof(*per_cpu)), sum = { 0 };

	if (per_cpu && !bpf_map_lookup_elem(bpf_map__fd(skel->maps.stat_sites), &key, per_cpu))
		for (int cpu = 0; cpu < ncpus; cpu++)
			for (size_t i = 0; i < sizeof(sum) / sizeof(__u64); i++)
				((__u64 *)&sum)[i] += ((__u64 *)&per_cpu[cpu])[i];
	free(per_cpu);
	return sum;
}

static struct kmt_stat_misc stat_misc(struct kmemsnoop_bpf *skel)
{
	struct kmt_stat_misc *per_cpu = calloc(ncpus, sizeof(*per_cpu)), sum = { 0 };
	__u32 zero = 0;

	if (per_cpu && !bpf_map_lookup_elem(bpf_map__fd(skel->maps.stat_misc), &zero, per_cpu))
		for (int cpu = 0; cpu < ncpus; cpu++)
			for (size_t i = 0; i < sizeof(sum) / sizeof(__u64); i++)
				((__u64 *)&sum)[i] += ((__u64 *)&per_cpu[cpu])[i];
	free(per_cpu);
	return sum;
}

static unsigned long long life_total(const struct kmt_stat_site *v)
{
	unsigned long long n = 0;

	for (int i = 0; i < KMT_STAT_LIFE; i++)
		n += v->life[i];
	return n;
}

static bool on_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

/*
 * Two allocations of one pointer (the first one's free unseen: replaced),
 * its free (one lifetime, no ping-pong), a free never allocated
 * (untracked), a pointer map of 2 overflowing (counted, never alive), and
 * a free on another CPU than the allocation (ping-pong).
 */
static void test_stat(const struct setup *base)
{
	struct setup s = *base;
	struct kmemsnoop_bpf *skel;
	struct kmt_stat_site v;
	struct kmt_stat_misc m;

	s.stat = true;
	skel = load(&s, "stat.maps");
	if (!skel)
		return;
	if (kmalloc(skel, &s, SITE1, PTR, 200, 256) && kmalloc(skel, &s, SITE1, PTR, 200, 256) &&
	    kfree(skel, &s, PTR) && kfree(skel, &s, PTR + 0x100)) {
		v = stat_site(skel, SITE1);
		m = stat_misc(skel);
		result(v.hit == 2 && v.bytes_req == 400 && v.bytes_alloc == 512 && v.frees == 1 &&
			       v.freed_bytes == 256 && v.ended == 1 && v.ended_bytes == 256 &&
			       v.pingpong == 0 && life_total(&v) == 1 && m.replaced == 1 &&
			       m.untracked_frees == 1,
		       "stat.%s.replaced: hit %llu (want 2), req/alloc %llu/%llu (want 400/512), "
		       "frees %llu/%llu bytes (want 1/256), ended %llu/%llu (want 1/256), ping-pong "
		       "%llu (want 0), lifetimes %llu (want 1), replaced %llu (want 1), untracked "
		       "frees %llu (want 1)", path_name(&s), (unsigned long long)v.hit,
		       (unsigned long long)v.bytes_req, (unsigned long long)v.bytes_alloc,
		       (unsigned long long)v.frees, (unsigned long long)v.freed_bytes,
		       (unsigned long long)v.ended, (unsigned long long)v.ended_bytes,
		       (unsigned long long)v.pingpong, life_total(&v), (unsigned long long)m.replaced,
		       (unsigned long long)m.untracked_frees);
	}
	if (kmalloc(skel, &s, SITE2, PTR + 0x100, 100, 256) &&
	    kmalloc(skel, &s, SITE2, PTR + 0x200, 100, 256) &&
	    kmalloc(skel, &s, SITE2, PTR + 0x300, 100, 256)) {
		v = stat_site(skel, SITE2);
		m = stat_misc(skel);
		result(v.hit == 3 && v.ended == 1 && m.ptrs_full == 1,
		       "stat.%s.ptrs_full: 3 allocations, a pointer map of 2: hit %llu (want 3), "
		       "ended %llu (want 1), pointer map full %llu (want 1)", path_name(&s),
		       (unsigned long long)v.hit, (unsigned long long)v.ended,
		       (unsigned long long)m.ptrs_full);
	}
	if (ncpus < 2 || !on_cpu(1)) {
		printf("SKIP: stat.%s.pingpong: no CPU 1 to free on\n", path_name(&s));
	} else if (kfree(skel, &s, PTR + 0x100)) {
		v = stat_site(skel, SITE2);
		result(v.pingpong == 1 && v.frees == 1,
		       "stat.%s.pingpong: allocated on CPU %d, freed on CPU 1: ping-pong %llu "
		       "(want 1), frees %llu (want 1)", path_name(&s), CPU,
		       (unsigned long long)v.pingpong, (unsigned long long)v.frees);
	}
	on_cpu(CPU);
	kmemsnoop_bpf__destroy(skel);
}

/* --- main ------------------------------------------------------------------------------ */

static int silent(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	return getenv("VERBOSE") ? vfprintf(stderr, fmt, args) : 0;
}

static bool pin_to_cpu(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(CPU, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0;
}

/* Whether this kernel runs raw_tp programs on demand at all. */
static bool test_run_works(void)
{
	struct setup s = { .hist = true };
	struct kmemsnoop_bpf *skel = kmemsnoop_bpf__open();
	__u64 args[6] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof(args));
	bool ok;

	if (!skel)
		return false;
	configure(skel, &s);
	ok = !kmemsnoop_bpf__load(skel) &&
	     !bpf_prog_test_run_opts(bpf_program__fd(entry(skel, false, "kfree")), &opts);
	kmemsnoop_bpf__destroy(skel);
	return ok;
}

int main(void)
{
	struct btf *btf;
	char why[256];

	libbpf_set_print(silent);
	setvbuf(stdout, NULL, _IOLBF, 0);
	btf = btf__load_vmlinux_btf();
	ncpus = libbpf_num_possible_cpus();
	if (!btf || kernel_features_detect(btf, &kf, why, sizeof(why)) || ncpus <= 0 || !pin_to_cpu()) {
		printf("FAIL: progs.setup: no BTF, kernel features, CPU count or CPU %d\n", CPU);
		return 1;
	}
	btf__free(btf);
	if (!test_run_works()) {
		printf("SKIP: progs: this kernel will not run raw_tp programs with "
		       "BPF_PROG_TEST_RUN (%s)\n", strerror(errno));
		return 0;
	}
	for (int atomics = 0; atomics <= 1; atomics++) {
		struct setup base = { .atomics = atomics };

		if (atomics && !kf.atomic_fetch) {
			printf("SKIP: progs.table: no BPF atomics on this kernel (5.12+): the "
			       "bucketed table is not used here\n");
			continue;
		}
		test_missed_free(&base);
		test_zero(&base);
		test_full_bucket(&base);
		test_page_order(&base);
		test_pagesite(&base);
		test_large(&base);
		test_hist(&base);
		test_filter_both(&base);
		test_stream(&base);
		test_kept(&base);
		test_stat(&base);
	}
	return failures ? 1 : 0;
}
