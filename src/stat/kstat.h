/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stat: what `perf kmem stat` reports, from decoded events (record.h)
 * given in time order: per call site and per pointer tables of the slab
 * allocations (hits, bytes, ping-pong, internal fragmentation), the page
 * allocator's tables by page and by order x migrate type x GFP flags, the
 * SUMMARY blocks; and what perf does not: object lifetimes (allocation to
 * free) as log2 histograms per call site and per cache, objects still
 * alive at the end, a per-process table, allocations served from another
 * NUMA node than the one of their CPU.
 *
 * Pure: no BPF, no clock; names come from a callback.  Unit-tested in
 * tests/unit/stat/test_kstat.c.  Split by table in src/stat/kstat*.c, which
 * share kstat_impl.h.
 */
#ifndef KMEMSNOOP_KSTAT_H
#define KMEMSNOOP_KSTAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct kmt_event;
struct kstat;

/* The event classes (EV_*) --stat counts: its tables are the slab's and the
 * page allocator's, as perf kmem's; vmalloc and percpu areas are left out. */
#define KSTAT_CLASSES (EV_KMALLOC | EV_CACHE | EV_PAGE)

/* Sort keys, as perf kmem's -s names them. */
enum kstat_key {
	KSTAT_KEY_PTR,      /* slab tables */
	KSTAT_KEY_CALLSITE, /* both */
	KSTAT_KEY_HIT,      /* both */
	KSTAT_KEY_BYTES,    /* both */
	KSTAT_KEY_FRAG,     /* slab */
	KSTAT_KEY_PINGPONG, /* slab */
	KSTAT_KEY_PAGE,     /* page tables */
	KSTAT_KEY_ORDER,    /* page */
	KSTAT_KEY_MIGTYPE,  /* page */
	KSTAT_KEY_GFP,      /* page */
};

#define KSTAT_MAX_KEYS 8

struct kstat_sort {
	int nkeys; /* 0: the default (slab frag,hit,bytes; page bytes,hit) */
	enum kstat_key keys[KSTAT_MAX_KEYS];
};

/*
 * Parses "key[,key...]" for the slab (page false) or the page tables.
 * 0, or -1 with a one-line reason in err.
 */
int kstat_sort_parse(const char *list, bool page, struct kstat_sort *out, char *err,
		     size_t err_size);

struct kstat_opts {
	bool slab, page;     /* the sections to print */
	bool caller, alloc;  /* --caller, --alloc: the tables to print */
	bool stacks;         /* --stacks: the table per stack */
	bool folded;         /* --folded: only that table, as flame graph tools read it */
	int caller_lines;    /* -l for the caller table, -1: all */
	int alloc_lines;
	/* Four lists, as perf keeps: -s sorts the slab or the page tables,
	 * whichever of --slab and --page was named last. */
	struct kstat_sort caller_sort, alloc_sort;
	struct kstat_sort page_caller_sort, page_alloc_sort;
};

/* Names a call site: "func+hex" as perf prints it, "0x..." when unknown
 * (with_offset false: "func", for the page tables). */
typedef void (*kstat_name_fn)(void *ctx, uint64_t addr, bool with_offset, char *buf,
			      size_t size);
/* Names GFP flags the kernel's way ("GFP_KERNEL|__GFP_ZERO"). */
typedef void (*kstat_gfp_fn)(void *ctx, unsigned int flags, char *buf, size_t size);
/* A kernel stack's first frame to show: past the tracing machinery's. */
typedef unsigned int (*kstat_kstack_start_fn)(void *ctx, const uint64_t *ips, unsigned int n);
/* A user frame of process pid: "function+0xoff [object]", "object[+0xoff]" ...;
 * with_object false: the function alone (a folded line's). */
typedef void (*kstat_uframe_fn)(void *ctx, int pid, uint64_t addr, bool with_object, char *buf,
				size_t size);

struct kstat_names {
	kstat_name_fn callsite;
	kstat_gfp_fn gfp;
	void *ctx;
	kstat_kstack_start_fn kstack_start; /* NULL: every frame shown */
	kstat_uframe_fn uframe;             /* NULL: user frames as addresses */
	unsigned int depth;                 /* frames of each stack shown (--stack-depth); 0: all */
};

/*
 * The machine's NUMA layout, copied by kstat_new: the node of each CPU
 * (slab allocations that ask for another node than their CPU's), and of
 * each memory block of pages_per_block page frames (page allocations
 * served from another node than their CPU's; -1: not known).  NULL or
 * empty arrays: one node.
 */
struct kstat_topology {
	const int *node_of_cpu;
	int ncpus;
	const int *node_of_block;
	size_t nblocks;
	uint64_t pages_per_block;
};

struct kstat *kstat_new(const struct kstat_topology *topo);
void kstat_free(struct kstat *ks);

/*
 * One event, in time order.  cpu is where it happened (the record's time
 * feature when it has one).  0, or -1 when out of memory.
 */
int kstat_add(struct kstat *ks, const struct kmt_event *ev, int cpu);

/*
 * What was counted elsewhere (--stat's BPF maps) rather than event by
 * event: a call site's allocations of one cache, added to the call site's
 * row, the cache's and the totals.
 */
struct kstat_slab_agg {
	uint64_t call_site;
	const char *cache; /* the cache's name, as kstat_cache_name() makes it */
	uint64_t hit, bytes_req, bytes_alloc;
	uint64_t pingpong;        /* frees on another CPU than their allocation */
	uint64_t frees, freed_bytes; /* frees of these allocations */
	uint64_t alive, alive_bytes; /* not freed (nor replaced unseen) */
	const uint64_t *life;     /* 64 buckets as kstat_site's, NULL: none */
};

int kstat_add_slab_agg(struct kstat *ks, const struct kstat_slab_agg *a);

struct kstat_proc_agg {
	uint64_t pid;
	const char *comm;
	uint64_t allocs, frees, bytes_req, bytes_alloc;
};

int kstat_add_proc_agg(struct kstat *ks, const struct kstat_proc_agg *a);

/* Slab allocations that asked for another NUMA node than their CPU's. */
void kstat_add_cross_node(struct kstat *ks, uint64_t allocs);

/* Slab allocations whose node was known (counted elsewhere), and of
 * those, served from another than requested (or their CPU's). */
void kstat_add_slab_nodes(struct kstat *ks, uint64_t located, uint64_t remote);

/*
 * The virtual address of physical address 0 in the kernel's linear map
 * (0: not known) and the page size, with which each slab allocation's
 * address says which node served it.  Kept by kstat_clear.
 */
void kstat_set_linear_map(struct kstat *ks, uint64_t linear_map, uint64_t page_size);

/* The topology kstat_new copied (pointers into ks). */
void kstat_topology(const struct kstat *ks, struct kstat_topology *topo);

/* The node of a CPU in the topology kstat_new was given (0: unknown). */
int kstat_node_of_cpu(const struct kstat *ks, int cpu);

/* The name a slab cache's row has: type (enum kmt_type_id) kmalloc is
 * named by its size class; name NULL or empty: by its size. */
void kstat_cache_name(unsigned int type, const char *name, uint64_t bytes_alloc, char *buf,
		      size_t size);

/* Back to no events, the topology kept. */
void kstat_clear(struct kstat *ks);

/* Events lost on the way, for the summary. */
void kstat_set_lost(struct kstat *ks, uint64_t events);

/* Everything opts asks for, perf's layout first, then lifetimes, the
 * processes and what is still alive. */
void kstat_print(struct kstat *ks, const struct kstat_opts *opts,
		 const struct kstat_names *names, FILE *out);

/* --json: one line, one object of the slab SUMMARY (and the --caller and
 * --alloc rows as the text would list them) and the page totals
 * (docs/JSON.md). */
void kstat_print_json(struct kstat *ks, const struct kstat_opts *opts,
		      const struct kstat_names *names, FILE *out);

/* What the tests and the summary read. */
struct kstat_totals {
	uint64_t requested, allocated, freed;
	uint64_t nr_allocs, nr_cross_node;
	uint64_t pingpong;
	uint64_t page_allocs, page_frees, page_fails, page_nomatch;
	uint64_t page_located, page_remote; /* pages of a known node; of another than the CPU's */
	uint64_t slab_located, slab_remote; /* slab objects of a known node; of another than asked */
	uint64_t alive, alive_bytes; /* slab objects allocated and not freed */
};

void kstat_totals(const struct kstat *ks, struct kstat_totals *t);

/* A call site's row (false when the site made no allocation). */
struct kstat_site {
	uint64_t bytes_alloc, bytes_req;
	uint32_t hit, pingpong;
	uint64_t freed, alive;
	uint64_t life[64]; /* lifetimes: [i] counts [2^i, 2^(i+1)) ns; [0] also 0 */
};

bool kstat_site(const struct kstat *ks, uint64_t call_site, struct kstat_site *out);

/* The smallest bucket bound below which p percent of the counts lie:
 * the upper end of the bucket holding the p-th percentile, in ns. */
uint64_t kstat_percentile(const uint64_t *buckets, double p);

#endif
