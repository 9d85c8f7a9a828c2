// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's slab tables.  They count as perf kmem stat does, so that both
 * give the same rows for the same events: a pointer's entry is kept after
 * its free (--alloc lists every pointer ever allocated), a free counts as
 * ping-pong when its CPU is not the one of the last allocation of its
 * pointer, and the bytes it frees are those of that allocation.  Here too:
 * the caches' names (their lifetimes are kstat_life.c's), the node that
 * served each object, internal fragmentation, the --caller and --alloc
 * tables and the slab SUMMARY, as text and as JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "kstat_impl.h"
#include "bpf/kmemtrace.h"
#include "recording/record.h"
#include "util/json.h"

/* --- the caches ------------------------------------------------------------ */

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
	c = kstat_table_find(&ks->caches, &k, true);
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

/* --- adding events --------------------------------------------------------- */

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
	node = kstat_node_of_pfn(ks, (ev->ptr - ks->linear_map) / ks->linear_page);
	if (node < 0)
		return;
	wanted = ev->numa_node >= 0 ? ev->numa_node : node_of(ks, cpu);
	ks->nr_slab_located++;
	if (node != wanted)
		ks->nr_slab_remote++;
}

int kstat_add_slab_alloc(struct kstat *ks, const struct kmt_event *ev, int cpu)
{
	struct kkey pk = { .a = ev->ptr }, sk = { .a = ev->call_site };
	struct ptrstat *p = kstat_table_find(&ks->ptrs, &pk, true);
	struct site *s;
	struct cache *c;

	if (!p)
		return -1;
	s = kstat_table_find(&ks->sites, &sk, true);
	c = s ? find_cache(ks, ev) : NULL;
	if (!c)
		return -1;
	if (p->live)
		kstat_forget_live(ks, p);
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
	/* Last: counted without its stack when that finds no memory. */
	return kstat_add_stack(ks, ev, p);
}

void kstat_add_slab_free(struct kstat *ks, const struct kmt_event *ev, int cpu)
{
	struct kkey pk = { .a = ev->ptr };
	struct ptrstat *p = kstat_table_find(&ks->ptrs, &pk, false);

	if (!p)
		return; /* allocated before the trace, or by what it did not see */
	ks->freed += p->last_alloc;
	if (cpu != p->alloc_cpu) {
		struct kkey sk = { .a = p->call_site };
		struct site *s = kstat_table_find(&ks->sites, &sk, false);

		p->pingpong++;
		if (s)
			s->pingpong++;
	}
	p->alloc_cpu = -1;
	if (p->live)
		kstat_add_lifetime(ks, p, ev);
}

/* --- adding what was counted elsewhere (BPF maps) ---------------------------- */

int kstat_add_slab_agg(struct kstat *ks, const struct kstat_slab_agg *a)
{
	struct kkey sk = { .a = a->call_site };
	struct site *s = kstat_table_find(&ks->sites, &sk, true);
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

/* --- what tests and callers read ---------------------------------------------- */

bool kstat_site(const struct kstat *ks, uint64_t call_site, struct kstat_site *out)
{
	struct kkey k = { .a = call_site };
	const struct site *s = kstat_table_find((struct table *)&ks->sites, &k, false);

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

/* --- sorting and printing ---------------------------------------------------- */

double kstat_fragmentation(uint64_t req, uint64_t alloc)
{
	return alloc ? 100.0 - 100.0 * (double)req / (double)alloc : 0.0;
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
		double x = kstat_fragmentation(l->bytes_req, l->bytes_alloc);
		double y = kstat_fragmentation(r->bytes_req, r->bytes_alloc);

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

void kstat_print_slab_table(const struct kstat *ks, bool caller, int lines,
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
	kstat_dotted(out);
	fprintf(out, " %-34s |", caller ? "Callsite" : "Alloc Ptr");
	fprintf(out, " Total_alloc/Per | Total_req/Per   | Hit      | Ping-pong | Frag\n");
	kstat_dotted(out);
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
			r->hit, r->pingpong, kstat_fragmentation(r->bytes_req, r->bytes_alloc));
	}
	if (i < n)
		fprintf(out, " ...                                | ...             | ...            "
			     " | ...      | ...       | ...   \n");
	kstat_dotted(out);
	free(rows);
}

void kstat_print_slab_summary(const struct kstat *ks, FILE *out)
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
		kstat_fragmentation(ks->requested, ks->allocated));
	fprintf(out, "Cross CPU allocations: %llu/%llu\n", (unsigned long long)ks->nr_cross_node,
		(unsigned long long)ks->nr_allocs);
}

/* --- printing: JSON (--json) ------------------------------------------------------- */

void kstat_json_slab_rows(const struct kstat *ks, bool caller, int lines,
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
			kstat_fragmentation(r->bytes_req, r->bytes_alloc));
	}
	fprintf(out, "],\"%s_rows\":%zu", caller ? "callers" : "pointers", rows ? n : 0);
	free(rows);
}
