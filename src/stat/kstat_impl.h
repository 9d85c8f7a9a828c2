/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the files of --stat's accounting share, and nothing outside
 * src/stat/kstat*.c includes (other modules see kstat.h): the hash table
 * (kstat_table.c), the entries of each table, struct kstat, and the
 * functions one of those files calls in another.
 */
#ifndef KMEMSNOOP_KSTAT_IMPL_H
#define KMEMSNOOP_KSTAT_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kstat.h"
#include "bpf/kmemtrace.h"

#define LIFE_BUCKETS 64
#define MAX_ORDER_ROWS 11 /* orders 0..10, as the page allocator has them */
#define MIGRATE_COLUMNS 5

/* --- one hash table kind for every table (kstat_table.c) -------------------- */

struct kkey {
	uint64_t a, b;
	uint32_t c, d;
};

struct table {
	char *items; /* n entries of size bytes, each starting with its struct kkey */
	size_t size, n, cap;
	uint32_t *slots; /* entry index + 1, 0: empty */
	size_t nslots;   /* a power of two, at least twice n */
};

/* Inline: the table's hash and the caches' names (kstat_slab.c) both mix. */
static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static inline void *item(const struct table *t, size_t i)
{
	return t->items + i * t->size;
}

/* The entry of key, or NULL; with create, a zeroed new one (NULL: out of memory). */
void *kstat_table_find(struct table *t, const struct kkey *key, bool create);
void kstat_table_free(struct table *t);
/* Back to no entries, the memory kept (kstat_clear). */
void kstat_table_clear(struct table *t);

/* --- the entries ----------------------------------------------------------- */

struct site { /* a slab call site */
	struct kkey key; /* a: call site */
	uint64_t bytes_req, bytes_alloc;
	uint32_t hit, pingpong;
	uint64_t freed, alive, alive_bytes;
	uint64_t life[LIFE_BUCKETS];
};

struct cache { /* a slab cache, for lifetimes */
	struct kkey key; /* a, b: two hashes of the name */
	char name[KMT_CACHE_NAME_LEN + 16];
	uint64_t allocs, freed, alive, alive_bytes;
	uint64_t life[LIFE_BUCKETS];
};

struct ptrstat { /* a slab pointer */
	struct kkey key; /* a: pointer */
	uint64_t call_site, bytes_req, bytes_alloc, last_alloc, alloc_ts;
	uint32_t hit, pingpong;
	int alloc_cpu; /* -1 once freed */
	bool live, timed;
	size_t site, cache; /* indexes of the live allocation's site and cache */
	size_t stack;       /* index + 1 of its stack's entry; 0: no stack */
};

struct stackstat { /* the slab allocations of one stack (--stacks) */
	struct kkey key; /* a, b: two hashes of the frames; c, d: kernel and user frames */
	uint64_t hit, bytes_alloc, alive, alive_bytes;
	int pid;         /* a process whose addresses the user frames are */
	uint64_t *ips;   /* key.c kernel then key.d user addresses, innermost first */
};

struct pagestat { /* a row of the page tables, or a live page */
	struct kkey key;
	uint64_t page, callsite;
	int order, migtype;
	unsigned int gfp;
	uint64_t alloc_bytes, free_bytes;
	int nr_alloc, nr_free;
	bool live;
};

struct proc {
	struct kkey key; /* a: pid */
	char comm[KMT_COMM_LEN + 1];
	uint64_t allocs, frees, bytes_req, bytes_alloc, page_allocs, page_bytes;
};

struct kstat {
	struct table sites, caches, ptrs, procs, stacks;
	struct table live_pages, page_allocs, page_callers;
	int *node_of_cpu;
	int ncpus;
	int *node_of_block;
	size_t nblocks;
	uint64_t pages_per_block;
	uint64_t lost;

	uint64_t requested, allocated, freed, nr_allocs, nr_cross_node;
	uint64_t page_alloc_bytes, page_free_bytes, page_nomatch_bytes, page_fail_bytes;
	uint64_t nr_page_allocs, nr_page_frees, nr_page_fails, nr_page_nomatch;
	uint64_t nr_page_located, nr_page_remote;
	uint64_t linear_map, linear_page; /* kstat_set_linear_map; 0: not known */
	uint64_t nr_slab_located, nr_slab_remote;
	uint64_t order_stats[MAX_ORDER_ROWS][MIGRATE_COLUMNS + 1];
	uint64_t alive, alive_bytes;
	uint64_t page_size; /* learnt from the page allocations: bytes >> order */
};

/* --- kstat.c: the NUMA layout --------------------------------------------- */

static inline int node_of(const struct kstat *ks, int cpu)
{
	return cpu >= 0 && cpu < ks->ncpus ? ks->node_of_cpu[cpu] : 0;
}

/* The node of a page frame, -1 when not known. */
int kstat_node_of_pfn(const struct kstat *ks, uint64_t pfn);

/* --- kstat_slab.c ---------------------------------------------------------- */

int kstat_add_slab_alloc(struct kstat *ks, const struct kmt_event *ev, int cpu);
void kstat_add_slab_free(struct kstat *ks, const struct kmt_event *ev, int cpu);
/* Percent of alloc that req leaves unused (the slab SUMMARY's and --json's). */
double kstat_fragmentation(uint64_t req, uint64_t alloc);
void kstat_print_slab_table(const struct kstat *ks, bool caller, int lines,
			    const struct kstat_sort *sort, const struct kstat_names *names,
			    FILE *out);
void kstat_print_slab_summary(const struct kstat *ks, FILE *out);
void kstat_json_slab_rows(const struct kstat *ks, bool caller, int lines,
			  const struct kstat_sort *sort, const struct kstat_names *names,
			  FILE *out);

/* --- kstat_page.c ---------------------------------------------------------- */

int kstat_add_page_alloc(struct kstat *ks, const struct kmt_event *ev, int cpu);
void kstat_add_page_free(struct kstat *ks, const struct kmt_event *ev);
/* The legend perf prints above the page tables; the width of the column. */
int kstat_print_gfp_legend(const struct kstat *ks, const struct kstat_names *names, FILE *out);
void kstat_print_page_table(const struct kstat *ks, bool caller, int lines,
			    const struct kstat_sort *sort, int gfp_width,
			    const struct kstat_names *names, FILE *out);
void kstat_print_page_summary(const struct kstat *ks, FILE *out);
void kstat_json_page_rows(const struct kstat *ks, bool caller, int lines,
			  const struct kstat_sort *sort, const struct kstat_names *names,
			  FILE *out);
/* The SUMMARY's order x migrate type table: its non-empty cells. */
void kstat_json_page_orders(const struct kstat *ks, FILE *out);

/* --- kstat_life.c ---------------------------------------------------------- */

/* The object at this pointer is no longer alive: freed, or (at a new
 * allocation of the pointer) freed without an event we saw. */
void kstat_forget_live(struct kstat *ks, struct ptrstat *p);
/* A free of a live object: no longer alive, and its lifetime when both
 * ends have a time. */
void kstat_add_lifetime(struct kstat *ks, struct ptrstat *p, const struct kmt_event *ev);
void kstat_print_lifetimes(const struct kstat *ks, const struct kstat_opts *o,
			   const struct kstat_names *names, FILE *out);
void kstat_json_life_rows(const struct kstat *ks, bool sites, int lines,
			  const struct kstat_names *names, FILE *out);

/* --- kstat_stack.c --------------------------------------------------------- */

/* The stack of a new live allocation at p, counted; 0 or -1 (out of memory). */
int kstat_add_stack(struct kstat *ks, const struct kmt_event *ev, struct ptrstat *p);
/* p's object is no longer alive. */
void kstat_forget_stack(struct kstat *ks, const struct ptrstat *p);
/* Each entry's frames freed, the table emptied. */
void kstat_free_stacks(struct table *t);
void kstat_print_stacks(const struct kstat *ks, const struct kstat_opts *o,
			const struct kstat_names *names, FILE *out);
void kstat_json_stacks(const struct kstat *ks, const struct kstat_opts *o,
		       const struct kstat_names *names, FILE *out);

/* --- kstat_proc.c ---------------------------------------------------------- */

int kstat_add_proc(struct kstat *ks, const struct kmt_event *ev);
void kstat_print_procs(const struct kstat *ks, const struct kstat_opts *o, FILE *out);
void kstat_json_procs(const struct kstat *ks, int lines, FILE *out);

/* --- kstat_print.c: what the text tables share ----------------------------- */

/* A rule across the tables. */
void kstat_dotted(FILE *out);
/* How many of n rows the tables beyond perf show: -l, else a default. */
size_t kstat_extra_shown(size_t n, int lines);

/* --- shared by the tables' sorts ------------------------------------------- */

static inline int cmp_u64(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

#endif
