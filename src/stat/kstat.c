// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's accounting, the shared core: struct kstat (kstat_impl.h), its
 * creation with the machine's NUMA layout, the intake that gives each
 * event to the tables it counts in (kstat_slab.c, kstat_page.c,
 * kstat_proc.c; lifetimes in kstat_life.c), the NUMA counts, and the
 * totals.  The report is kstat_print.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "kstat_impl.h"
#include "bpf/kmemsnoop.h"
#include "bpf/kmemtrace.h"
#include "recording/record.h"

#define DEFAULT_PAGE_SIZE 4096ULL /* until an allocation says otherwise */

static int *copy_ints(const int *src, size_t n)
{
	int *dst = n ? malloc(n * sizeof(int)) : NULL;

	if (dst)
		memcpy(dst, src, n * sizeof(int));
	return dst;
}

struct kstat *kstat_new(const struct kstat_topology *topo)
{
	struct kstat *ks = calloc(1, sizeof(*ks));

	if (!ks)
		return NULL;
	ks->sites.size = sizeof(struct site);
	ks->caches.size = sizeof(struct cache);
	ks->ptrs.size = sizeof(struct ptrstat);
	ks->procs.size = sizeof(struct proc);
	ks->stacks.size = sizeof(struct stackstat);
	ks->live_pages.size = ks->page_allocs.size = ks->page_callers.size =
		sizeof(struct pagestat);
	ks->page_size = DEFAULT_PAGE_SIZE;
	if (!topo)
		return ks;
	if (topo->node_of_cpu && topo->ncpus > 0) {
		ks->node_of_cpu = copy_ints(topo->node_of_cpu, topo->ncpus);
		ks->ncpus = ks->node_of_cpu ? topo->ncpus : 0;
	}
	if (topo->node_of_block && topo->nblocks && topo->pages_per_block) {
		ks->node_of_block = copy_ints(topo->node_of_block, topo->nblocks);
		ks->nblocks = ks->node_of_block ? topo->nblocks : 0;
		ks->pages_per_block = topo->pages_per_block;
	}
	if ((topo->ncpus > 0 && topo->node_of_cpu && !ks->node_of_cpu) ||
	    (topo->nblocks && topo->node_of_block && topo->pages_per_block && !ks->node_of_block)) {
		kstat_free(ks);
		return NULL;
	}
	return ks;
}

void kstat_free(struct kstat *ks)
{
	if (!ks)
		return;
	kstat_table_free(&ks->sites);
	kstat_table_free(&ks->caches);
	kstat_table_free(&ks->ptrs);
	kstat_table_free(&ks->procs);
	kstat_free_stacks(&ks->stacks);
	kstat_table_free(&ks->stacks);
	kstat_table_free(&ks->live_pages);
	kstat_table_free(&ks->page_allocs);
	kstat_table_free(&ks->page_callers);
	free(ks->node_of_cpu);
	free(ks->node_of_block);
	free(ks);
}

void kstat_set_lost(struct kstat *ks, uint64_t events)
{
	ks->lost = events;
}

/* --- adding events --------------------------------------------------------- */

int kstat_add(struct kstat *ks, const struct kmt_event *ev, int cpu)
{
	bool alloc = ev->event_id == KMT_EVENT_ALLOC;

	/* Only KSTAT_CLASSES: a recording's vmalloc and percpu areas (or a
	 * stream's, with other modes) are left out. */
	if (ev->type_id >= KMT_TYPE_COUNT || !((1u << ev->type_id) & KSTAT_CLASSES) ||
	    (alloc && !ev->has_alloc))
		return 0;
	if (kstat_add_proc(ks, ev))
		return -1;
	if (ev->type_id == KMT_TYPE_PAGES) {
		if (alloc)
			return kstat_add_page_alloc(ks, ev, cpu);
		kstat_add_page_free(ks, ev);
		return 0;
	}
	if (alloc)
		return kstat_add_slab_alloc(ks, ev, cpu);
	kstat_add_slab_free(ks, ev, cpu);
	return 0;
}

/* --- the NUMA layout, and what was counted of it elsewhere (BPF maps) ------- */

/* The node of a page frame, -1 when not known. */
int kstat_node_of_pfn(const struct kstat *ks, uint64_t pfn)
{
	uint64_t block;

	if (!ks->pages_per_block)
		return -1;
	block = pfn / ks->pages_per_block;
	return block < ks->nblocks ? ks->node_of_block[block] : -1;
}

void kstat_add_cross_node(struct kstat *ks, uint64_t allocs)
{
	ks->nr_cross_node += allocs;
}

void kstat_add_slab_nodes(struct kstat *ks, uint64_t located, uint64_t remote)
{
	ks->nr_slab_located += located;
	ks->nr_slab_remote += remote;
}

void kstat_set_linear_map(struct kstat *ks, uint64_t linear_map, uint64_t page_size)
{
	ks->linear_map = linear_map;
	ks->linear_page = linear_map ? page_size : 0;
}

void kstat_topology(const struct kstat *ks, struct kstat_topology *topo)
{
	topo->node_of_cpu = ks->node_of_cpu;
	topo->ncpus = ks->ncpus;
	topo->node_of_block = ks->node_of_block;
	topo->nblocks = ks->nblocks;
	topo->pages_per_block = ks->pages_per_block;
}

int kstat_node_of_cpu(const struct kstat *ks, int cpu)
{
	return node_of(ks, cpu);
}

/* --- back to no events ------------------------------------------------------ */

void kstat_clear(struct kstat *ks)
{
	struct kstat keep = *ks;

	kstat_table_clear(&keep.sites);
	kstat_table_clear(&keep.caches);
	kstat_table_clear(&keep.ptrs);
	kstat_table_clear(&keep.procs);
	kstat_free_stacks(&keep.stacks);
	kstat_table_clear(&keep.live_pages);
	kstat_table_clear(&keep.page_allocs);
	kstat_table_clear(&keep.page_callers);
	memset(ks, 0, sizeof(*ks));
	ks->sites = keep.sites;
	ks->caches = keep.caches;
	ks->ptrs = keep.ptrs;
	ks->procs = keep.procs;
	ks->stacks = keep.stacks;
	ks->live_pages = keep.live_pages;
	ks->page_allocs = keep.page_allocs;
	ks->page_callers = keep.page_callers;
	ks->node_of_cpu = keep.node_of_cpu;
	ks->ncpus = keep.ncpus;
	ks->node_of_block = keep.node_of_block;
	ks->nblocks = keep.nblocks;
	ks->pages_per_block = keep.pages_per_block;
	ks->linear_map = keep.linear_map;
	ks->linear_page = keep.linear_page;
	ks->page_size = DEFAULT_PAGE_SIZE;
}

/* --- what tests and callers read ---------------------------------------------- */

void kstat_totals(const struct kstat *ks, struct kstat_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->requested = ks->requested;
	t->allocated = ks->allocated;
	t->freed = ks->freed;
	t->nr_allocs = ks->nr_allocs;
	t->nr_cross_node = ks->nr_cross_node;
	for (size_t i = 0; i < ks->sites.n; i++)
		t->pingpong += ((const struct site *)item(&ks->sites, i))->pingpong;
	t->page_allocs = ks->nr_page_allocs;
	t->page_frees = ks->nr_page_frees;
	t->page_fails = ks->nr_page_fails;
	t->page_nomatch = ks->nr_page_nomatch;
	t->page_located = ks->nr_page_located;
	t->page_remote = ks->nr_page_remote;
	t->slab_located = ks->nr_slab_located;
	t->slab_remote = ks->nr_slab_remote;
	t->alive = ks->alive;
	t->alive_bytes = ks->alive_bytes;
}
