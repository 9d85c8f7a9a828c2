// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's accounting.  The slab part counts as perf kmem stat does, so
 * that both give the same rows for the same events: a pointer's entry is
 * kept after its free (--alloc lists every pointer ever allocated), a
 * free counts as ping-pong when its CPU is not the one of the last
 * allocation of its pointer, and the bytes it frees are those of that
 * allocation.  Pages are matched by page frame number, and a free takes
 * its migrate type and GFP flags from its allocation.
 *
 * Every table is an array of entries found through one open-addressing
 * hash of a 24-byte key; entries are never removed (a live flag says
 * whether a pointer or a page is allocated now).
 */
#include <stdlib.h>
#include <string.h>

#include "bpf/kmemsnoop.h"
#include "bpf/kmemtrace.h"
#include "util/json.h"
#include "kstat.h"
#include "recording/record.h"

#define LIFE_BUCKETS 64
#define MAX_ORDER_ROWS 11 /* orders 0..10, as the page allocator has them */
#define MIGRATE_COLUMNS 5
#define MIGRATE_UNKNOWN MIGRATE_COLUMNS
#define DEFAULT_PAGE_SIZE 4096ULL /* until an allocation says otherwise */
#define DOTTED_WIDTH 105
#define DEFAULT_EXTRA_LINES 10 /* rows of the tables perf does not have, without -l */

/* --- one hash table kind for every table ------------------------------------ */

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

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t key_hash(const struct kkey *k)
{
	return mix(k->a ^ mix(k->b ^ mix(((uint64_t)k->c << 32) | k->d)));
}

static bool key_eq(const struct kkey *x, const struct kkey *y)
{
	return x->a == y->a && x->b == y->b && x->c == y->c && x->d == y->d;
}

static void *item(const struct table *t, size_t i)
{
	return t->items + i * t->size;
}

static int table_rehash(struct table *t, size_t nslots)
{
	uint32_t *slots = calloc(nslots, sizeof(*slots));

	if (!slots)
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		size_t s = key_hash(item(t, i)) & (nslots - 1);

		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = nslots;
	return 0;
}

/* The entry of key, or NULL; with create, a zeroed new one (NULL: out of memory). */
static void *table_find(struct table *t, const struct kkey *key, bool create)
{
	size_t s;
	void *e;

	if (t->nslots) {
		for (s = key_hash(key) & (t->nslots - 1); t->slots[s]; s = (s + 1) & (t->nslots - 1))
			if (key_eq(item(t, t->slots[s] - 1), key))
				return item(t, t->slots[s] - 1);
	}
	if (!create || t->n >= UINT32_MAX - 1)
		return NULL;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char *items = realloc(t->items, cap * t->size);

		if (!items)
			return NULL;
		t->items = items;
		t->cap = cap;
	}
	if ((t->n + 1) * 2 > t->nslots && table_rehash(t, t->nslots ? t->nslots * 2 : 128))
		return NULL;
	e = item(t, t->n);
	memset(e, 0, t->size);
	memcpy(e, key, sizeof(*key));
	for (s = key_hash(key) & (t->nslots - 1); t->slots[s]; s = (s + 1) & (t->nslots - 1))
		;
	t->slots[s] = (uint32_t)++t->n;
	return e;
}

static void table_free(struct table *t)
{
	free(t->items);
	free(t->slots);
}

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
	struct table sites, caches, ptrs, procs;
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
	table_free(&ks->sites);
	table_free(&ks->caches);
	table_free(&ks->ptrs);
	table_free(&ks->procs);
	table_free(&ks->live_pages);
	table_free(&ks->page_allocs);
	table_free(&ks->page_callers);
	free(ks->node_of_cpu);
	free(ks->node_of_block);
	free(ks);
}

void kstat_set_lost(struct kstat *ks, uint64_t events)
{
	ks->lost = events;
}

/* --- adding events --------------------------------------------------------- */

static unsigned int life_bucket(uint64_t ns)
{
	unsigned int b = 0;

	while (ns >>= 1)
		b++;
	return b < LIFE_BUCKETS ? b : LIFE_BUCKETS - 1;
}

static int node_of(const struct kstat *ks, int cpu)
{
	return cpu >= 0 && cpu < ks->ncpus ? ks->node_of_cpu[cpu] : 0;
}

/* kmalloc has no cache in its event: its size class stands for it. */
void kstat_cache_name(unsigned int type, const char *name, uint64_t bytes_alloc, char *buf,
		      size_t size)
{
	if (type == KMT_TYPE_KMALLOC)
		snprintf(buf, size, "kmalloc-%llu", (unsigned long long)bytes_alloc);
	else if (name && name[0])
		snprintf(buf, size, "%s", name);
	else
		snprintf(buf, size, "(cache size %llu)", (unsigned long long)bytes_alloc);
}

static void cache_name(const struct kmt_event *ev, char *buf, size_t size)
{
	kstat_cache_name(ev->type_id, ev->has_cache ? ev->cache_name : NULL, ev->bytes_alloc, buf,
			 size);
}

static uint64_t fnv(const char *s, uint64_t h)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static struct cache *find_cache_named(struct kstat *ks, const char *name)
{
	struct kkey k = { 0 };
	struct cache *c;

	k.a = fnv(name, 0xcbf29ce484222325ULL);
	k.b = mix(fnv(name, 0x84222325cbf29ce4ULL));
	c = table_find(&ks->caches, &k, true);
	if (c && !c->name[0])
		snprintf(c->name, sizeof(c->name), "%s", name);
	return c;
}

static struct cache *find_cache(struct kstat *ks, const struct kmt_event *ev)
{
	char name[sizeof(((struct cache *)0)->name)];

	cache_name(ev, name, sizeof(name));
	return find_cache_named(ks, name);
}

static struct proc *find_proc(struct kstat *ks, const struct kmt_event *ev)
{
	struct kkey k = { .a = ev->has_task ? ev->pid : 0 };
	struct proc *p = table_find(&ks->procs, &k, true);

	if (p && ev->has_task)
		snprintf(p->comm, sizeof(p->comm), "%s", ev->comm);
	return p;
}

/* The object at this pointer is no longer alive: freed, or (at a new
 * allocation of the pointer) freed without an event we saw. */
static void forget_live(struct kstat *ks, struct ptrstat *p)
{
	struct site *s = item(&ks->sites, p->site);
	struct cache *c = item(&ks->caches, p->cache);

	s->alive--;
	s->alive_bytes -= p->last_alloc;
	c->alive--;
	c->alive_bytes -= p->last_alloc;
	ks->alive--;
	ks->alive_bytes -= p->last_alloc;
	p->live = false;
}

/* The node of a page frame, -1 when not known. */
static int node_of_pfn(const struct kstat *ks, uint64_t pfn)
{
	uint64_t block;

	if (!ks->pages_per_block)
		return -1;
	block = pfn / ks->pages_per_block;
	return block < ks->nblocks ? ks->node_of_block[block] : -1;
}

/*
 * The node that served a slab object (or a large kmalloc's pages), from
 * its address in the linear map, against the node asked for: the event's,
 * or the CPU's when it asked for none.
 */
static void locate_object(struct kstat *ks, const struct kmt_event *ev, int cpu)
{
	int node, wanted;

	if (!ks->linear_page || ev->ptr < ks->linear_map)
		return;
	node = node_of_pfn(ks, (ev->ptr - ks->linear_map) / ks->linear_page);
	if (node < 0)
		return;
	wanted = ev->numa_node >= 0 ? ev->numa_node : node_of(ks, cpu);
	ks->nr_slab_located++;
	if (node != wanted)
		ks->nr_slab_remote++;
}

static int add_slab_alloc(struct kstat *ks, const struct kmt_event *ev, int cpu)
{
	struct kkey pk = { .a = ev->ptr }, sk = { .a = ev->call_site };
	struct ptrstat *p = table_find(&ks->ptrs, &pk, true);
	struct site *s;
	struct cache *c;

	if (!p)
		return -1;
	s = table_find(&ks->sites, &sk, true);
	c = s ? find_cache(ks, ev) : NULL;
	if (!c)
		return -1;
	if (p->live)
		forget_live(ks, p);
	p->hit++;
	p->bytes_req += ev->bytes_req;
	p->bytes_alloc += ev->bytes_alloc;
	p->call_site = ev->call_site;
	p->alloc_cpu = cpu;
	p->last_alloc = ev->bytes_alloc;
	p->live = true;
	p->timed = ev->has_time;
	p->alloc_ts = ev->timestamp;
	p->site = (size_t)((char *)s - ks->sites.items) / ks->sites.size;
	p->cache = (size_t)((char *)c - ks->caches.items) / ks->caches.size;

	s->hit++;
	s->bytes_req += ev->bytes_req;
	s->bytes_alloc += ev->bytes_alloc;
	s->alive++;
	s->alive_bytes += ev->bytes_alloc;
	c->allocs++;
	c->alive++;
	c->alive_bytes += ev->bytes_alloc;
	ks->alive++;
	ks->alive_bytes += ev->bytes_alloc;

	ks->requested += ev->bytes_req;
	ks->allocated += ev->bytes_alloc;
	ks->nr_allocs++;
	if (ev->numa_node >= 0 && ev->numa_node != node_of(ks, cpu))
		ks->nr_cross_node++;
	locate_object(ks, ev, cpu);
	return 0;
}

static void add_lifetime(struct kstat *ks, struct ptrstat *p, const struct kmt_event *ev)
{
	struct site *s = item(&ks->sites, p->site);
	struct cache *c = item(&ks->caches, p->cache);

	forget_live(ks, p);
	if (!p->timed || !ev->has_time)
		return;
	s->freed++;
	c->freed++;
	s->life[life_bucket(ev->timestamp > p->alloc_ts ? ev->timestamp - p->alloc_ts : 0)]++;
	c->life[life_bucket(ev->timestamp > p->alloc_ts ? ev->timestamp - p->alloc_ts : 0)]++;
}

static void add_slab_free(struct kstat *ks, const struct kmt_event *ev, int cpu)
{
	struct kkey pk = { .a = ev->ptr };
	struct ptrstat *p = table_find(&ks->ptrs, &pk, false);

	if (!p)
		return; /* allocated before the trace, or by what it did not see */
	ks->freed += p->last_alloc;
	if (cpu != p->alloc_cpu) {
		struct kkey sk = { .a = p->call_site };
		struct site *s = table_find(&ks->sites, &sk, false);

		p->pingpong++;
		if (s)
			s->pingpong++;
	}
	p->alloc_cpu = -1;
	if (p->live)
		add_lifetime(ks, p, ev);
}

static uint64_t page_of(const struct kmt_event *ev)
{
	return ev->has_page && ev->pfn != KMT_PFN_NONE ? ev->pfn : ev->ptr;
}

static bool page_failed(const struct kmt_event *ev)
{
	return !ev->ptr || (ev->has_page && ev->pfn == KMT_PFN_NONE);
}

static struct kkey page_row_key(uint64_t id, const struct pagestat *ps)
{
	return (struct kkey){ .a = id, .b = ((uint64_t)(uint32_t)ps->order << 32) |
					   (uint32_t)ps->migtype, .c = ps->gfp };
}

static int add_page_row(struct table *t, uint64_t id, const struct pagestat *this,
			uint64_t bytes)
{
	struct kkey k = page_row_key(id, this);
	struct pagestat *ps = table_find(t, &k, true);

	if (!ps)
		return -1;
	ps->page = this->page;
	ps->order = this->order;
	ps->migtype = this->migtype;
	ps->gfp = this->gfp;
	ps->callsite = this->callsite;
	ps->nr_alloc++;
	ps->alloc_bytes += bytes;
	return 0;
}

static void locate_page(struct kstat *ks, const struct kmt_event *ev, int cpu)
{
	int node;

	if (!ev->has_page || ev->pfn == KMT_PFN_NONE)
		return;
	node = node_of_pfn(ks, ev->pfn);
	if (node < 0)
		return;
	ks->nr_page_located++;
	if (node != node_of(ks, cpu))
		ks->nr_page_remote++;
}

/* A free says its order, not its bytes: the page size of the allocations. */
static uint64_t page_bytes(struct kstat *ks, const struct kmt_event *ev)
{
	if (ev->order >= 32)
		return 0;
	if (ev->event_id == KMT_EVENT_ALLOC && ev->bytes_alloc >> ev->order)
		ks->page_size = ev->bytes_alloc >> ev->order;
	return ks->page_size << ev->order;
}

static int add_page_alloc(struct kstat *ks, const struct kmt_event *ev, int cpu)
{
	uint64_t bytes = page_bytes(ks, ev);
	struct pagestat this = { .page = page_of(ev), .callsite = ev->call_site,
				 .order = ev->order, .gfp = ev->gfp_flags,
				 .migtype = ev->migratetype };
	struct kkey k = { .a = this.page };
	struct pagestat *live;

	ks->nr_page_allocs++;
	ks->page_alloc_bytes += bytes;
	if (page_failed(ev)) {
		ks->nr_page_fails++;
		ks->page_fail_bytes += bytes;
		return 0;
	}
	locate_page(ks, ev, cpu);
	live = table_find(&ks->live_pages, &k, true);
	if (!live)
		return -1;
	if (!live->live) {
		live->order = this.order;
		live->gfp = this.gfp;
		live->migtype = this.migtype;
		live->live = true;
	}
	live->callsite = this.callsite;
	if (add_page_row(&ks->page_allocs, this.page, &this, bytes) ||
	    add_page_row(&ks->page_callers, this.callsite, &this, bytes))
		return -1;
	if (this.order < MAX_ORDER_ROWS)
		ks->order_stats[this.order][this.migtype >= 0 && this.migtype < MIGRATE_COLUMNS ?
					    this.migtype : MIGRATE_UNKNOWN]++;
	return 0;
}

static void add_page_free(struct kstat *ks, const struct kmt_event *ev)
{
	uint64_t bytes = page_bytes(ks, ev);
	struct kkey k = { .a = page_of(ev) }, rk;
	struct pagestat *live = table_find(&ks->live_pages, &k, false), this, *row;

	ks->nr_page_frees++;
	ks->page_free_bytes += bytes;
	if (!live || !live->live) {
		ks->nr_page_nomatch++;
		ks->page_nomatch_bytes += bytes;
		return;
	}
	live->live = false;
	this = (struct pagestat){ .order = ev->order, .migtype = live->migtype,
				  .gfp = live->gfp, .callsite = live->callsite };
	rk = page_row_key(k.a, &this);
	row = table_find(&ks->page_allocs, &rk, false);
	if (row) {
		row->nr_free++;
		row->free_bytes += bytes;
	}
	rk = page_row_key(this.callsite, &this);
	row = table_find(&ks->page_callers, &rk, false);
	if (row) {
		row->nr_free++;
		row->free_bytes += bytes;
	}
}

static int add_proc(struct kstat *ks, const struct kmt_event *ev)
{
	struct proc *p = find_proc(ks, ev);

	if (!p)
		return -1;
	if (ev->event_id == KMT_EVENT_FREE) {
		p->frees++;
	} else if (ev->type_id == KMT_TYPE_PAGES) {
		p->page_allocs++;
		p->page_bytes += ev->bytes_alloc;
	} else {
		p->allocs++;
		p->bytes_req += ev->bytes_req;
		p->bytes_alloc += ev->bytes_alloc;
	}
	return 0;
}

int kstat_add(struct kstat *ks, const struct kmt_event *ev, int cpu)
{
	bool alloc = ev->event_id == KMT_EVENT_ALLOC;

	/* Only KSTAT_CLASSES: a recording's vmalloc and percpu areas (or a
	 * stream's, with other modes) are left out. */
	if (ev->type_id >= KMT_TYPE_COUNT || !((1u << ev->type_id) & KSTAT_CLASSES) ||
	    (alloc && !ev->has_alloc))
		return 0;
	if (add_proc(ks, ev))
		return -1;
	if (ev->type_id == KMT_TYPE_PAGES) {
		if (alloc)
			return add_page_alloc(ks, ev, cpu);
		add_page_free(ks, ev);
		return 0;
	}
	if (alloc)
		return add_slab_alloc(ks, ev, cpu);
	add_slab_free(ks, ev, cpu);
	return 0;
}

/* --- adding what was counted elsewhere (BPF maps) ---------------------------- */

int kstat_add_slab_agg(struct kstat *ks, const struct kstat_slab_agg *a)
{
	struct kkey sk = { .a = a->call_site };
	struct site *s = table_find(&ks->sites, &sk, true);
	struct cache *c = s ? find_cache_named(ks, a->cache) : NULL;

	if (!c)
		return -1;
	s->hit += (uint32_t)a->hit;
	s->bytes_req += a->bytes_req;
	s->bytes_alloc += a->bytes_alloc;
	s->pingpong += (uint32_t)a->pingpong;
	s->freed += a->frees;
	s->alive += a->alive;
	s->alive_bytes += a->alive_bytes;
	c->allocs += a->hit;
	c->freed += a->frees;
	c->alive += a->alive;
	c->alive_bytes += a->alive_bytes;
	for (int i = 0; a->life && i < LIFE_BUCKETS; i++) {
		s->life[i] += a->life[i];
		c->life[i] += a->life[i];
	}
	ks->requested += a->bytes_req;
	ks->allocated += a->bytes_alloc;
	ks->freed += a->freed_bytes;
	ks->nr_allocs += a->hit;
	ks->alive += a->alive;
	ks->alive_bytes += a->alive_bytes;
	return 0;
}

int kstat_add_proc_agg(struct kstat *ks, const struct kstat_proc_agg *a)
{
	struct kkey k = { .a = a->pid };
	struct proc *p = table_find(&ks->procs, &k, true);

	if (!p)
		return -1;
	if (a->comm && a->comm[0])
		snprintf(p->comm, sizeof(p->comm), "%s", a->comm);
	p->allocs += a->allocs;
	p->frees += a->frees;
	p->bytes_req += a->bytes_req;
	p->bytes_alloc += a->bytes_alloc;
	return 0;
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

static void table_clear(struct table *t)
{
	t->n = 0;
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
}

void kstat_clear(struct kstat *ks)
{
	struct kstat keep = *ks;

	table_clear(&keep.sites);
	table_clear(&keep.caches);
	table_clear(&keep.ptrs);
	table_clear(&keep.procs);
	table_clear(&keep.live_pages);
	table_clear(&keep.page_allocs);
	table_clear(&keep.page_callers);
	memset(ks, 0, sizeof(*ks));
	ks->sites = keep.sites;
	ks->caches = keep.caches;
	ks->ptrs = keep.ptrs;
	ks->procs = keep.procs;
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

bool kstat_site(const struct kstat *ks, uint64_t call_site, struct kstat_site *out)
{
	struct kkey k = { .a = call_site };
	const struct site *s = table_find((struct table *)&ks->sites, &k, false);

	if (!s)
		return false;
	out->bytes_alloc = s->bytes_alloc;
	out->bytes_req = s->bytes_req;
	out->hit = s->hit;
	out->pingpong = s->pingpong;
	out->freed = s->freed;
	out->alive = s->alive;
	memcpy(out->life, s->life, sizeof(out->life));
	return true;
}

uint64_t kstat_percentile(const uint64_t *buckets, double p)
{
	uint64_t total = 0, seen = 0;

	for (int i = 0; i < LIFE_BUCKETS; i++)
		total += buckets[i];
	if (!total)
		return 0;
	for (int i = 0; i < LIFE_BUCKETS; i++) {
		seen += buckets[i];
		if (seen * 100.0 >= p * total)
			return i >= 63 ? UINT64_MAX : 2ULL << i;
	}
	return UINT64_MAX;
}

/* --- sorting --------------------------------------------------------------------- */

static const struct {
	const char *name;
	enum kstat_key key;
	bool slab, page;
} sort_keys[] = {
	{ "ptr", KSTAT_KEY_PTR, true, false },
	{ "callsite", KSTAT_KEY_CALLSITE, true, true },
	{ "hit", KSTAT_KEY_HIT, true, true },
	{ "bytes", KSTAT_KEY_BYTES, true, true },
	{ "frag", KSTAT_KEY_FRAG, true, false },
	{ "pingpong", KSTAT_KEY_PINGPONG, true, false },
	{ "page", KSTAT_KEY_PAGE, false, true },
	{ "order", KSTAT_KEY_ORDER, false, true },
	{ "migtype", KSTAT_KEY_MIGTYPE, false, true },
	{ "gfp", KSTAT_KEY_GFP, false, true },
};

#define NSORT_KEYS (sizeof(sort_keys) / sizeof(sort_keys[0]))

int kstat_sort_parse(const char *list, bool page, struct kstat_sort *out, char *err,
		     size_t err_size)
{
	const char *p = list;

	out->nkeys = 0;
	while (1) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < NSORT_KEYS; i++)
			if (strlen(sort_keys[i].name) == len && !strncmp(p, sort_keys[i].name, len) &&
			    (page ? sort_keys[i].page : sort_keys[i].slab))
				break;
		if (i == NSORT_KEYS) {
			snprintf(err, err_size, "unknown %s sort key '%.*s': use %s", page ? "page" : "slab",
				 (int)len, p, page ? "page, callsite, hit, bytes, order, migtype, gfp" :
				 "ptr, callsite, hit, bytes, frag, pingpong");
			return -1;
		}
		if (out->nkeys == KSTAT_MAX_KEYS) {
			snprintf(err, err_size, "too many sort keys in '%s'", list);
			return -1;
		}
		out->keys[out->nkeys++] = sort_keys[i].key;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static double fragmentation(uint64_t req, uint64_t alloc)
{
	return alloc ? 100.0 - 100.0 * (double)req / (double)alloc : 0.0;
}

static int cmp_u64(uint64_t x, uint64_t y)
{
	return x < y ? -1 : x > y;
}

/* A row of a slab table, whichever table it comes from. */
struct slab_row {
	uint64_t id; /* call site or pointer: the table's own order */
	uint64_t call_site, ptr, bytes_req, bytes_alloc;
	uint32_t hit, pingpong;
};

static int slab_key_cmp(enum kstat_key key, const struct slab_row *l, const struct slab_row *r)
{
	switch (key) {
	case KSTAT_KEY_PTR:
		return cmp_u64(l->ptr, r->ptr);
	case KSTAT_KEY_CALLSITE:
		return cmp_u64(l->call_site, r->call_site);
	case KSTAT_KEY_HIT:
		return cmp_u64(l->hit, r->hit);
	case KSTAT_KEY_BYTES:
		return cmp_u64(l->bytes_alloc, r->bytes_alloc);
	case KSTAT_KEY_FRAG: {
		double x = fragmentation(l->bytes_req, l->bytes_alloc);
		double y = fragmentation(r->bytes_req, r->bytes_alloc);

		return x < y ? -1 : x > y;
	}
	case KSTAT_KEY_PINGPONG:
		return cmp_u64(l->pingpong, r->pingpong);
	default:
		return 0;
	}
}

static const struct kstat_sort default_slab_sort = {
	3, { KSTAT_KEY_FRAG, KSTAT_KEY_HIT, KSTAT_KEY_BYTES } };
static const struct kstat_sort default_page_sort = { 2, { KSTAT_KEY_BYTES, KSTAT_KEY_HIT } };

/* Largest first by each key in turn; equal rows in their table's order. */
static int slab_row_cmp(const void *a, const void *b, void *arg)
{
	const struct kstat_sort *sort = arg;
	const struct slab_row *l = a, *r = b;

	for (int i = 0; i < sort->nkeys; i++) {
		int c = slab_key_cmp(sort->keys[i], l, r);

		if (c)
			return -c;
	}
	return cmp_u64(l->id, r->id);
}

static int page_key_cmp(enum kstat_key key, const struct pagestat *l, const struct pagestat *r)
{
	switch (key) {
	case KSTAT_KEY_PAGE:
		return cmp_u64(l->page, r->page);
	case KSTAT_KEY_CALLSITE:
		return cmp_u64(l->callsite, r->callsite);
	case KSTAT_KEY_HIT:
		return l->nr_alloc < r->nr_alloc ? -1 : l->nr_alloc > r->nr_alloc;
	case KSTAT_KEY_BYTES:
		return cmp_u64(l->alloc_bytes, r->alloc_bytes);
	case KSTAT_KEY_ORDER:
		return l->order < r->order ? -1 : l->order > r->order;
	case KSTAT_KEY_MIGTYPE:
		return l->migtype < r->migtype ? -1 : l->migtype > r->migtype;
	case KSTAT_KEY_GFP:
		return l->gfp < r->gfp ? -1 : l->gfp > r->gfp;
	default:
		return 0;
	}
}

static int page_row_cmp(const void *a, const void *b, void *arg)
{
	const struct kstat_sort *sort = arg;
	const struct pagestat *l = a, *r = b;
	static const enum kstat_key input[] = { KSTAT_KEY_ORDER, KSTAT_KEY_MIGTYPE, KSTAT_KEY_GFP };
	int c;

	for (int i = 0; i < sort->nkeys; i++)
		if ((c = page_key_cmp(sort->keys[i], l, r)))
			return -c;
	/* The table's own order: page (or call site), order, migrate type, flags. */
	if ((c = cmp_u64(l->key.a, r->key.a)))
		return c;
	for (size_t i = 0; i < sizeof(input) / sizeof(input[0]); i++)
		if ((c = page_key_cmp(input[i], l, r)))
			return c;
	return 0;
}

/* --- printing: perf's layout ------------------------------------------------------- */

static void dotted(FILE *out)
{
	for (int i = 0; i < DOTTED_WIDTH; i++)
		fputc('-', out);
	fputc('\n', out);
}

static struct slab_row *slab_rows(const struct kstat *ks, bool caller, size_t *n)
{
	const struct table *t = caller ? &ks->sites : &ks->ptrs;
	struct slab_row *rows = calloc(t->n ? t->n : 1, sizeof(*rows));

	if (!rows)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		if (caller) {
			const struct site *s = item(t, i);

			rows[i] = (struct slab_row){ s->key.a, s->key.a, 0, s->bytes_req,
						     s->bytes_alloc, s->hit, s->pingpong };
		} else {
			const struct ptrstat *p = item(t, i);

			rows[i] = (struct slab_row){ p->key.a, p->call_site, p->key.a, p->bytes_req,
						     p->bytes_alloc, p->hit, p->pingpong };
		}
	}
	*n = t->n;
	return rows;
}

static void print_slab_table(const struct kstat *ks, bool caller, int lines,
			     const struct kstat_sort *sort, const struct kstat_names *names,
			     FILE *out)
{
	size_t n, i;
	struct slab_row *rows = slab_rows(ks, caller, &n);
	char name[256];

	if (!rows)
		return;
	if (n > 1)
		qsort_r(rows, n, sizeof(*rows), slab_row_cmp,
			(void *)(sort->nkeys ? sort : &default_slab_sort));
	dotted(out);
	fprintf(out, " %-34s |", caller ? "Callsite" : "Alloc Ptr");
	fprintf(out, " Total_alloc/Per | Total_req/Per   | Hit      | Ping-pong | Frag\n");
	dotted(out);
	for (i = 0; i < n && (lines < 0 || i < (size_t)lines); i++) {
		const struct slab_row *r = &rows[i];

		if (caller)
			names->callsite(names->ctx, r->call_site, true, name, sizeof(name));
		else
			snprintf(name, sizeof(name), "%#llx", (unsigned long long)r->ptr);
		fprintf(out, " %-34s |", name);
		fprintf(out, " %9llu/%-5llu | %9llu/%-5llu | %8u | %9u | %6.3f%%\n",
			(unsigned long long)r->bytes_alloc,
			(unsigned long long)(r->bytes_alloc / r->hit),
			(unsigned long long)r->bytes_req, (unsigned long long)(r->bytes_req / r->hit),
			r->hit, r->pingpong, fragmentation(r->bytes_req, r->bytes_alloc));
	}
	if (i < n)
		fprintf(out, " ...                                | ...             | ...            "
			     " | ...      | ...       | ...   \n");
	dotted(out);
	free(rows);
}

static void print_slab_summary(const struct kstat *ks, FILE *out)
{
	fprintf(out, "\nSUMMARY (SLAB allocator)\n========================\n");
	fprintf(out, "Total bytes requested: %llu\n", (unsigned long long)ks->requested);
	fprintf(out, "Total bytes allocated: %llu\n", (unsigned long long)ks->allocated);
	fprintf(out, "Total bytes freed:     %llu\n", (unsigned long long)ks->freed);
	if (ks->allocated > ks->freed)
		fprintf(out, "Net total bytes allocated: %llu\n",
			(unsigned long long)(ks->allocated - ks->freed));
	fprintf(out, "Total bytes wasted on internal fragmentation: %llu\n",
		(unsigned long long)(ks->allocated - ks->requested));
	fprintf(out, "Internal fragmentation: %f%%\n",
		fragmentation(ks->requested, ks->allocated));
	fprintf(out, "Cross CPU allocations: %llu/%llu\n", (unsigned long long)ks->nr_cross_node,
		(unsigned long long)ks->nr_allocs);
}

/* Migrate types in the kernel's order (enum migratetype). */
static const char *const migrate_names[MIGRATE_COLUMNS + 1] = {
	"UNMOVABL", "MOVABLE", "RECLAIM", "HIGHATOM", "CMA/ISLT", "UNKNOWN",
};

static const char *migrate_name(int mt)
{
	return migrate_names[mt >= 0 && mt < MIGRATE_COLUMNS ? mt : MIGRATE_UNKNOWN];
}

/* The short GFP names page tables print, as perf kmem abbreviates them. */
static const struct {
	const char *name, *abbrev;
} gfp_abbrevs[] = {
	{ "GFP_TRANSHUGE", "THP" },    { "GFP_TRANSHUGE_LIGHT", "THL" },
	{ "GFP_HIGHUSER_MOVABLE", "HUM" }, { "GFP_HIGHUSER", "HU" },
	{ "GFP_USER", "U" },            { "GFP_KERNEL_ACCOUNT", "KAC" },
	{ "GFP_KERNEL", "K" },          { "GFP_NOFS", "NF" },
	{ "GFP_ATOMIC", "A" },          { "GFP_NOIO", "NI" },
	{ "GFP_NOWAIT", "NW" },         { "GFP_DMA", "D" },
	{ "__GFP_HIGHMEM", "HM" },      { "GFP_DMA32", "D32" },
	{ "__GFP_HIGH", "H" },          { "__GFP_IO", "I" },
	{ "__GFP_FS", "F" },            { "__GFP_NOWARN", "NWR" },
	{ "__GFP_RETRY_MAYFAIL", "R" }, { "__GFP_NOFAIL", "NF" },
	{ "__GFP_NORETRY", "NR" },      { "__GFP_COMP", "C" },
	{ "__GFP_ZERO", "Z" },          { "__GFP_NOMEMALLOC", "NMA" },
	{ "__GFP_MEMALLOC", "MA" },     { "__GFP_HARDWALL", "HW" },
	{ "__GFP_THISNODE", "TN" },     { "__GFP_RECLAIMABLE", "RC" },
	{ "__GFP_MOVABLE", "M" },       { "__GFP_ACCOUNT", "AC" },
	{ "__GFP_WRITE", "WR" },        { "__GFP_RECLAIM", "R" },
	{ "__GFP_DIRECT_RECLAIM", "DR" }, { "__GFP_KSWAPD_RECLAIM", "KR" },
};

static void gfp_compact(const char *full, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	while (*full && len + 1 < size) {
		size_t n = strcspn(full, "|");
		const char *name = NULL;

		for (size_t i = 0; i < sizeof(gfp_abbrevs) / sizeof(gfp_abbrevs[0]); i++)
			if (strlen(gfp_abbrevs[i].name) == n && !strncmp(full, gfp_abbrevs[i].name, n))
				name = gfp_abbrevs[i].abbrev;
		len += snprintf(buf + len, size - len, "%s%.*s", len ? "|" : "",
				name ? (int)strlen(name) : (int)n, name ? name : full);
		if (len >= size)
			len = size - 1;
		full += n + (full[n] == '|');
	}
}

static void page_gfp(const struct kstat_names *names, unsigned int gfp, char *full,
		     size_t full_size, char *compact, size_t compact_size)
{
	names->gfp(names->ctx, gfp, full, full_size);
	gfp_compact(full, compact, compact_size);
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

/* The legend perf prints above the page tables; the width of the column. */
static int print_gfp_legend(const struct kstat *ks, const struct kstat_names *names, FILE *out)
{
	const struct table *t = &ks->page_callers;
	unsigned int *flags = calloc(t->n ? t->n : 1, sizeof(*flags));
	char full[512], compact[256];
	size_t n = 0;
	int width = 0, header = (int)strlen("GFP flags");

	if (!flags)
		return header;
	for (size_t i = 0; i < t->n; i++)
		flags[n++] = ((const struct pagestat *)item(t, i))->gfp;
	if (n > 1)
		qsort(flags, n, sizeof(*flags), cmp_uint);
	for (size_t i = 0; i < n; i++) {
		page_gfp(names, flags[i], full, sizeof(full), compact, sizeof(compact));
		if ((int)strlen(compact) > width)
			width = (int)strlen(compact);
	}
	fprintf(out, "#\n# GFP flags\n# ---------\n");
	for (size_t i = 0; i < n; i++) {
		if (i && flags[i] == flags[i - 1])
			continue;
		page_gfp(names, flags[i], full, sizeof(full), compact, sizeof(compact));
		fprintf(out, "# %08x: %*s: %s\n", flags[i], width, compact, full);
	}
	free(flags);
	return width > header ? width : header;
}

/* The rows of a page table (callers or pages) in sort's order; NULL when
 * out of memory.  The caller frees them. */
static struct pagestat *sorted_page_rows(const struct kstat *ks, bool caller,
					 const struct kstat_sort *sort, size_t *n)
{
	const struct table *t = caller ? &ks->page_callers : &ks->page_allocs;
	struct pagestat *rows = malloc((t->n ? t->n : 1) * sizeof(*rows));

	*n = rows ? t->n : 0;
	if (!rows)
		return NULL;
	if (t->n)
		memcpy(rows, t->items, t->n * sizeof(*rows));
	if (t->n > 1)
		qsort_r(rows, t->n, sizeof(*rows), page_row_cmp,
			(void *)(sort->nkeys ? sort : &default_page_sort));
	return rows;
}

/* A page row's call site as the tables print it. */
static void page_site(const struct kstat_names *names, const struct pagestat *r, char *buf,
		      size_t size)
{
	if (r->callsite)
		names->callsite(names->ctx, r->callsite, false, buf, size);
	else
		snprintf(buf, size, "(unknown)");
}

static void print_page_table(const struct kstat *ks, bool caller, int lines,
			     const struct kstat_sort *sort, int gfp_width,
			     const struct kstat_names *names, FILE *out)
{
	size_t n, i;
	struct pagestat *rows = sorted_page_rows(ks, caller, sort, &n);
	char full[512], compact[256], site[256];

	if (!rows)
		return;
	fputc('\n', out);
	dotted(out);
	if (!caller)
		fprintf(out, " %-16s |", "PFN");
	fprintf(out, " Total alloc (KB) | Hits      | Order | Mig.type | %-*s | Callsite\n",
		gfp_width, "GFP flags");
	dotted(out);
	for (i = 0; i < n && (lines < 0 || i < (size_t)lines); i++) {
		const struct pagestat *r = &rows[i];

		page_gfp(names, r->gfp, full, sizeof(full), compact, sizeof(compact));
		page_site(names, r, site, sizeof(site));
		if (!caller)
			fprintf(out, " %16llu |", (unsigned long long)r->page);
		fprintf(out, " %16llu | %9d | %5d | %8s | %-*s | %s\n",
			(unsigned long long)(r->alloc_bytes / 1024), r->nr_alloc, r->order,
			migrate_name(r->migtype), gfp_width, compact, site);
	}
	if (i < n)
		fprintf(out, "%s ...              | ...       | ...   | ...      | %-*s | ...\n",
			caller ? "" : " ...              |", gfp_width, "...");
	dotted(out);
	free(rows);
}

static void page_summary_line(FILE *out, const char *what, uint64_t n, uint64_t bytes)
{
	fprintf(out, "%-30s: %16llu   [ %16llu KB ]\n", what, (unsigned long long)n,
		(unsigned long long)(bytes / 1024));
}

/* The migrate type columns of the page SUMMARY, in the kernel's order. */
static const char *const migrate_columns[MIGRATE_COLUMNS] = {
	"Unmovable", "Movable", "Reclaimable", "HighAtomic", "CMA/Isolated",
};

static void print_page_summary(const struct kstat *ks, FILE *out)
{
	uint64_t freed = ks->nr_page_frees - ks->nr_page_nomatch;
	uint64_t freed_bytes = ks->page_free_bytes - ks->page_nomatch_bytes;

	fprintf(out, "\nSUMMARY (page allocator)\n========================\n");
	page_summary_line(out, "Total allocation requests", ks->nr_page_allocs,
			  ks->page_alloc_bytes);
	page_summary_line(out, "Total free requests", ks->nr_page_frees, ks->page_free_bytes);
	fputc('\n', out);
	page_summary_line(out, "Total alloc+freed requests", freed, freed_bytes);
	page_summary_line(out, "Total alloc-only requests", ks->nr_page_allocs - freed,
			  ks->page_alloc_bytes - freed_bytes);
	page_summary_line(out, "Total free-only requests", ks->nr_page_nomatch,
			  ks->page_nomatch_bytes);
	fputc('\n', out);
	page_summary_line(out, "Total allocation failures", ks->nr_page_fails,
			  ks->page_fail_bytes);
	fputc('\n', out);
	fprintf(out, "%5s", "Order");
	for (int m = 0; m < MIGRATE_COLUMNS; m++)
		fprintf(out, "  %12s", migrate_columns[m]);
	fprintf(out, "\n-----");
	for (int m = 0; m < MIGRATE_COLUMNS; m++)
		fprintf(out, "  ------------");
	fputc('\n', out);
	for (int o = 0; o < MAX_ORDER_ROWS; o++) {
		fprintf(out, "%5d", o);
		for (int m = 0; m < MIGRATE_COLUMNS; m++) {
			if (ks->order_stats[o][m])
				fprintf(out, "  %12llu", (unsigned long long)ks->order_stats[o][m]);
			else
				fprintf(out, "  %12c", '.');
		}
		fputc('\n', out);
	}
}

/* --- printing: beyond perf ----------------------------------------------------------- */

/* "512ns", "1.0us", "2.1ms", "3.4s" */
static void fmt_ns(uint64_t ns, char *buf, size_t size)
{
	if (ns == UINT64_MAX)
		snprintf(buf, size, "inf");
	else if (ns < 1000)
		snprintf(buf, size, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.1fus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.1fms", ns / 1e6);
	else
		snprintf(buf, size, "%.1fs", ns / 1e9);
}

static void print_histogram(const uint64_t *life, FILE *out)
{
	uint64_t max = 0;
	int lo = -1, hi = -1;
	char from[16], to[16];

	for (int i = 0; i < LIFE_BUCKETS; i++) {
		if (!life[i])
			continue;
		if (lo < 0)
			lo = i;
		hi = i;
		if (life[i] > max)
			max = life[i];
	}
	if (lo < 0)
		return;
	fprintf(out, "%27s : count    distribution\n", "lifetime");
	for (int i = lo; i <= hi; i++) {
		int stars = (int)(life[i] * 40 / max);

		fmt_ns(i ? 1ULL << i : 0, from, sizeof(from));
		fmt_ns(i >= 63 ? UINT64_MAX : 2ULL << i, to, sizeof(to));
		fprintf(out, "%12s -> %-10s : %-8llu |%-40.*s|\n", from, to,
			(unsigned long long)life[i], stars,
			"****************************************");
	}
}

struct life_row {
	char name[256];
	uint64_t freed, alive, alive_bytes, order;
	const uint64_t *life;
};

static int life_row_cmp(const void *a, const void *b)
{
	const struct life_row *l = a, *r = b;

	if (l->freed + l->alive != r->freed + r->alive)
		return l->freed + l->alive > r->freed + r->alive ? -1 : 1;
	return cmp_u64(l->order, r->order);
}

/* How many of n rows the tables beyond perf show: -l, else a default. */
static size_t extra_shown(size_t n, int lines)
{
	return lines < 0 ? (n < DEFAULT_EXTRA_LINES ? n : DEFAULT_EXTRA_LINES) :
		(n < (size_t)lines ? n : (size_t)lines);
}

/* The lifetime rows of the call sites (sites) or of the caches, busiest
 * first; *n of them, NULL when there is no memory. */
static struct life_row *life_rows(const struct kstat *ks, bool sites,
				  const struct kstat_names *names, size_t *n)
{
	const struct table *t = sites ? &ks->sites : &ks->caches;
	struct life_row *rows = calloc(t->n ? t->n : 1, sizeof(*rows));

	*n = 0;
	if (!rows)
		return NULL;
	for (size_t i = 0; i < t->n; i++) {
		struct life_row *r = &rows[i];

		if (sites) {
			const struct site *st = item(t, i);

			names->callsite(names->ctx, st->key.a, true, r->name, sizeof(r->name));
			r->freed = st->freed;
			r->alive = st->alive;
			r->alive_bytes = st->alive_bytes;
			r->order = st->key.a;
			r->life = st->life;
		} else {
			const struct cache *c = item(t, i);

			snprintf(r->name, sizeof(r->name), "%s", c->name);
			r->freed = c->freed;
			r->alive = c->alive;
			r->alive_bytes = c->alive_bytes;
			r->order = i;
			r->life = c->life;
		}
	}
	if (t->n > 1)
		qsort(rows, t->n, sizeof(*rows), life_row_cmp);
	*n = t->n;
	return rows;
}

static void print_life_rows(const struct life_row *rows, size_t n, const char *title,
			    const char *what, int lines, FILE *out)
{
	char p50[16], p99[16];
	size_t i, shown = extra_shown(n, lines);

	fprintf(out, "\n%s\n", title);
	for (i = 0; title[i]; i++)
		fputc('=', out);
	fputc('\n', out);
	dotted(out);
	fprintf(out, " %-34s | %9s | %9s | %12s | %9s | %9s\n", what, "Freed", "Alive",
		"Alive bytes", "p50 <", "p99 <");
	dotted(out);
	for (i = 0; i < shown; i++) {
		fmt_ns(kstat_percentile(rows[i].life, 50), p50, sizeof(p50));
		fmt_ns(kstat_percentile(rows[i].life, 99), p99, sizeof(p99));
		fprintf(out, " %-34s | %9llu | %9llu | %12llu | %9s | %9s\n", rows[i].name,
			(unsigned long long)rows[i].freed, (unsigned long long)rows[i].alive,
			(unsigned long long)rows[i].alive_bytes, rows[i].freed ? p50 : "-",
			rows[i].freed ? p99 : "-");
	}
	if (i < n)
		fprintf(out, " ...\n");
	dotted(out);
	for (i = 0; i < shown; i++) {
		if (!rows[i].freed)
			continue;
		fprintf(out, "\n %s: %llu freed\n", rows[i].name, (unsigned long long)rows[i].freed);
		print_histogram(rows[i].life, out);
	}
}

static void print_lifetimes(const struct kstat *ks, const struct kstat_opts *o,
			    const struct kstat_names *names, FILE *out)
{
	size_t n;
	struct life_row *rows = life_rows(ks, true, names, &n);

	if (rows)
		print_life_rows(rows, n, "LIFETIMES per call site (allocation to free)", "Callsite",
				o->caller_lines, out);
	free(rows);
	rows = life_rows(ks, false, names, &n);
	if (rows)
		print_life_rows(rows, n, "LIFETIMES per cache (kmalloc: per size class)", "Cache",
				o->caller_lines, out);
	free(rows);
}

static int proc_cmp(const void *a, const void *b)
{
	const struct proc *l = a, *r = b;
	uint64_t x = l->bytes_alloc + l->page_bytes, y = r->bytes_alloc + r->page_bytes;

	if (x != y)
		return x > y ? -1 : 1;
	return cmp_u64(l->key.a, r->key.a);
}

/* The processes, most bytes first; NULL when there is no memory. */
static struct proc *proc_rows(const struct kstat *ks)
{
	const struct table *t = &ks->procs;
	struct proc *rows = malloc((t->n ? t->n : 1) * sizeof(*rows));

	if (!rows)
		return NULL;
	if (t->n) /* an empty table's items may be NULL, which neither takes */
		memcpy(rows, t->items, t->n * sizeof(*rows));
	if (t->n > 1)
		qsort(rows, t->n, sizeof(*rows), proc_cmp);
	return rows;
}

static void print_procs(const struct kstat *ks, const struct kstat_opts *o, FILE *out)
{
	const struct table *t = &ks->procs;
	struct proc *rows = proc_rows(ks);
	size_t i, shown = extra_shown(t->n, o->caller_lines);

	if (!rows)
		return;
	fprintf(out, "\nPROCESSES\n=========\n");
	dotted(out);
	fprintf(out, " %8s | %-16s | %9s | %15s | %15s | %9s | %9s | %12s\n", "Pid", "Comm",
		"Allocs", "Total_alloc", "Total_req", "Frees", "Pages", "Page KB");
	dotted(out);
	for (i = 0; i < shown; i++)
		fprintf(out, " %8llu | %-16s | %9llu | %15llu | %15llu | %9llu | %9llu | %12llu\n",
			(unsigned long long)rows[i].key.a, rows[i].comm,
			(unsigned long long)rows[i].allocs, (unsigned long long)rows[i].bytes_alloc,
			(unsigned long long)rows[i].bytes_req, (unsigned long long)rows[i].frees,
			(unsigned long long)rows[i].page_allocs,
			(unsigned long long)(rows[i].page_bytes / 1024));
	if (i < t->n)
		fprintf(out, " ...\n");
	dotted(out);
	free(rows);
}

static void print_extra_summary(const struct kstat *ks, FILE *out)
{
	struct kstat_totals t;

	kstat_totals(ks, &t);
	fprintf(out, "\nSUMMARY (beyond perf kmem)\n==========================\n");
	fprintf(out, "Frees on another CPU than their allocation (ping-pong): %llu\n",
		(unsigned long long)t.pingpong);
	fprintf(out, "Allocations requesting another NUMA node than their CPU's: %llu/%llu\n",
		(unsigned long long)t.nr_cross_node, (unsigned long long)t.nr_allocs);
	if (ks->linear_page)
		fprintf(out, "Slab allocations served from another NUMA node than requested "
			     "(or than their CPU's): %llu/%llu\n",
			(unsigned long long)t.slab_remote, (unsigned long long)t.slab_located);
	else
		fprintf(out, "Slab allocations served from another NUMA node than requested: "
			     "not known\n");
	if (t.page_allocs)
		fprintf(out, "Page allocations served from another NUMA node than their CPU's: "
			     "%llu/%llu\n", (unsigned long long)t.page_remote,
			(unsigned long long)t.page_located);
	fprintf(out, "Slab objects alive at the end: %llu (%llu bytes)\n",
		(unsigned long long)t.alive, (unsigned long long)t.alive_bytes);
	fprintf(out, "Events lost: %llu\n", (unsigned long long)ks->lost);
}

void kstat_print(struct kstat *ks, const struct kstat_opts *o, const struct kstat_names *names,
		 FILE *out)
{
	if (o->slab) {
		if (o->caller)
			print_slab_table(ks, true, o->caller_lines, &o->caller_sort, names, out);
		if (o->alloc)
			print_slab_table(ks, false, o->alloc_lines, &o->alloc_sort, names, out);
		print_slab_summary(ks, out);
	}
	if (o->page) {
		int width = (int)strlen("GFP flags");

		if (o->caller || o->alloc)
			width = print_gfp_legend(ks, names, out);
		if (o->caller)
			print_page_table(ks, true, o->caller_lines, &o->page_caller_sort, width, names,
					 out);
		if (o->alloc)
			print_page_table(ks, false, o->alloc_lines, &o->page_alloc_sort, width, names,
					 out);
		print_page_summary(ks, out);
	}
	if (o->slab)
		print_lifetimes(ks, o, names, out);
	print_procs(ks, o, out);
	print_extra_summary(ks, out);
}

/* --- printing: JSON (--json) ------------------------------------------------------- */

static void json_slab_rows(const struct kstat *ks, bool caller, int lines,
			   const struct kstat_sort *sort, const struct kstat_names *names,
			   FILE *out)
{
	size_t n, i;
	struct slab_row *rows = slab_rows(ks, caller, &n);
	char name[256];

	fprintf(out, ",\"%s\":[", caller ? "callers" : "pointers");
	if (rows && n > 1)
		qsort_r(rows, n, sizeof(*rows), slab_row_cmp,
			(void *)(sort->nkeys ? sort : &default_slab_sort));
	for (i = 0; rows && i < n && (lines < 0 || i < (size_t)lines); i++) {
		const struct slab_row *r = &rows[i];

		names->callsite(names->ctx, r->call_site, true, name, sizeof(name));
		fprintf(out, "%s{", i ? "," : "");
		if (!caller)
			fprintf(out, "\"ptr\":\"%#llx\",", (unsigned long long)r->ptr);
		fputs("\"callsite\":", out);
		json_put_string(out, name);
		fprintf(out, ",\"call_site\":\"%#llx\",\"bytes_alloc\":%llu,\"bytes_req\":%llu,"
			     "\"hit\":%u,\"pingpong\":%u,\"frag_pct\":%.3f}",
			(unsigned long long)r->call_site, (unsigned long long)r->bytes_alloc,
			(unsigned long long)r->bytes_req, r->hit, r->pingpong,
			fragmentation(r->bytes_req, r->bytes_alloc));
	}
	fprintf(out, "],\"%s_rows\":%zu", caller ? "callers" : "pointers", rows ? n : 0);
	free(rows);
}

static void json_page_rows(const struct kstat *ks, bool caller, int lines,
			   const struct kstat_sort *sort, const struct kstat_names *names,
			   FILE *out)
{
	size_t n, i;
	struct pagestat *rows = sorted_page_rows(ks, caller, sort, &n);
	char gfp[512], site[256];

	fprintf(out, ",\"%s\":[", caller ? "callers" : "pages");
	for (i = 0; rows && i < n && (lines < 0 || i < (size_t)lines); i++) {
		const struct pagestat *r = &rows[i];

		names->gfp(names->ctx, r->gfp, gfp, sizeof(gfp));
		page_site(names, r, site, sizeof(site));
		fprintf(out, "%s{", i ? "," : "");
		if (!caller)
			fprintf(out, "\"pfn\":%llu,", (unsigned long long)r->page);
		fputs("\"callsite\":", out);
		json_put_string(out, site);
		fprintf(out, ",\"call_site\":\"%#llx\",\"bytes\":%llu,\"hit\":%d,\"order\":%d,"
			     "\"migtype\":\"%s\",\"gfp\":",
			(unsigned long long)r->callsite, (unsigned long long)r->alloc_bytes,
			r->nr_alloc, r->order,
			r->migtype >= 0 && r->migtype < MIGRATE_COLUMNS ? migrate_columns[r->migtype]
									: "Unknown");
		json_put_string(out, gfp);
		fputc('}', out);
	}
	fprintf(out, "],\"%s_rows\":%zu", caller ? "callers" : "pages", n);
	free(rows);
}

static void json_life_rows(const struct kstat *ks, bool sites, int lines,
			   const struct kstat_names *names, FILE *out)
{
	size_t n, shown;
	struct life_row *rows = life_rows(ks, sites, names, &n);

	fprintf(out, "\"%s\":[", sites ? "callers" : "caches");
	shown = rows ? extra_shown(n, lines) : 0;
	for (size_t i = 0; i < shown; i++) {
		const struct life_row *r = &rows[i];
		bool first = true;

		fprintf(out, "%s{\"%s\":", i ? "," : "", sites ? "callsite" : "cache");
		json_put_string(out, r->name);
		fprintf(out, ",\"freed\":%llu,\"alive\":%llu,\"alive_bytes\":%llu",
			(unsigned long long)r->freed, (unsigned long long)r->alive,
			(unsigned long long)r->alive_bytes);
		if (r->freed)
			fprintf(out, ",\"p50_ns\":%llu,\"p99_ns\":%llu",
				(unsigned long long)kstat_percentile(r->life, 50),
				(unsigned long long)kstat_percentile(r->life, 99));
		else
			fputs(",\"p50_ns\":null,\"p99_ns\":null", out);
		fputs(",\"buckets\":[", out);
		for (int b = 0; b < LIFE_BUCKETS; b++) {
			if (!r->life[b])
				continue;
			fprintf(out, "%s{\"low\":%llu,\"high\":%llu,\"count\":%llu}", first ? "" : ",",
				b ? 1ULL << b : 0ULL, b >= 63 ? UINT64_MAX : (2ULL << b) - 1,
				(unsigned long long)r->life[b]);
			first = false;
		}
		fputs("]}", out);
	}
	fprintf(out, "],\"%s_rows\":%zu", sites ? "callers" : "caches", rows ? n : 0);
	free(rows);
}

static void json_procs(const struct kstat *ks, int lines, FILE *out)
{
	struct proc *rows = proc_rows(ks);
	size_t shown = rows ? extra_shown(ks->procs.n, lines) : 0;

	fputs(",\"processes\":[", out);
	for (size_t i = 0; i < shown; i++) {
		const struct proc *p = &rows[i];

		fprintf(out, "%s{\"pid\":%llu,\"comm\":", i ? "," : "", (unsigned long long)p->key.a);
		json_put_string(out, p->comm);
		fprintf(out, ",\"allocs\":%llu,\"bytes_alloc\":%llu,\"bytes_req\":%llu,"
			     "\"frees\":%llu,\"page_allocs\":%llu,\"page_bytes\":%llu}",
			(unsigned long long)p->allocs, (unsigned long long)p->bytes_alloc,
			(unsigned long long)p->bytes_req, (unsigned long long)p->frees,
			(unsigned long long)p->page_allocs, (unsigned long long)p->page_bytes);
	}
	fprintf(out, "],\"processes_rows\":%zu", rows ? ks->procs.n : 0);
	free(rows);
}

/* The SUMMARY's order x migrate type table: its non-empty cells. */
static void json_page_orders(const struct kstat *ks, FILE *out)
{
	bool first = true;

	fputs(",\"orders\":[", out);
	for (int o = 0; o < MAX_ORDER_ROWS; o++) {
		for (int m = 0; m < MIGRATE_COLUMNS; m++) {
			if (!ks->order_stats[o][m])
				continue;
			fprintf(out, "%s{\"order\":%d,\"migrate_type\":\"%s\",\"allocs\":%llu}",
				first ? "" : ",", o, migrate_columns[m],
				(unsigned long long)ks->order_stats[o][m]);
			first = false;
		}
	}
	fputc(']', out);
}

void kstat_print_json(struct kstat *ks, const struct kstat_opts *o,
		      const struct kstat_names *names, FILE *out)
{
	struct kstat_totals t;

	kstat_totals(ks, &t);
	fputs("{\"type\":\"stat\"", out);
	if (o->slab) {
		fprintf(out, ",\"slab\":{\"requested\":%llu,\"allocated\":%llu,\"freed\":%llu,"
			     "\"wasted\":%llu,\"frag_pct\":%.6f,\"allocs\":%llu,"
			     "\"cross_node\":%llu,\"pingpong\":%llu,\"alive\":%llu,"
			     "\"alive_bytes\":%llu",
			(unsigned long long)ks->requested, (unsigned long long)ks->allocated,
			(unsigned long long)ks->freed,
			(unsigned long long)(ks->allocated - ks->requested),
			fragmentation(ks->requested, ks->allocated), (unsigned long long)t.nr_allocs,
			(unsigned long long)t.nr_cross_node, (unsigned long long)t.pingpong,
			(unsigned long long)t.alive, (unsigned long long)t.alive_bytes);
		if (ks->linear_page)
			fprintf(out, ",\"served_located\":%llu,\"served_remote\":%llu",
				(unsigned long long)t.slab_located,
				(unsigned long long)t.slab_remote);
		if (o->caller)
			json_slab_rows(ks, true, o->caller_lines, &o->caller_sort, names, out);
		if (o->alloc)
			json_slab_rows(ks, false, o->alloc_lines, &o->alloc_sort, names, out);
		fputs(",\"lifetimes\":{", out);
		json_life_rows(ks, true, o->caller_lines, names, out);
		fputc(',', out);
		json_life_rows(ks, false, o->caller_lines, names, out);
		fputs("}}", out);
	}
	if (o->page) {
		fprintf(out, ",\"page\":{\"allocs\":%llu,\"frees\":%llu,\"fails\":%llu,"
			     "\"nomatch\":%llu,\"alloc_bytes\":%llu,\"free_bytes\":%llu",
			(unsigned long long)t.page_allocs, (unsigned long long)t.page_frees,
			(unsigned long long)t.page_fails, (unsigned long long)t.page_nomatch,
			(unsigned long long)ks->page_alloc_bytes,
			(unsigned long long)ks->page_free_bytes);
		json_page_orders(ks, out);
		if (o->caller)
			json_page_rows(ks, true, o->caller_lines, &o->page_caller_sort, names, out);
		if (o->alloc)
			json_page_rows(ks, false, o->alloc_lines, &o->page_alloc_sort, names, out);
		fputc('}', out);
	}
	json_procs(ks, o->caller_lines, out);
	fprintf(out, ",\"lost\":%llu}\n", (unsigned long long)ks->lost);
}
