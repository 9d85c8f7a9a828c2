// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's object lifetimes, which perf kmem does not have: allocation to
 * free as log2 histograms per call site and per cache, their p50 and p99,
 * and the slab objects still alive, as text and as JSON.  The slab tables
 * (kstat_slab.c) tell this file of each allocation replaced or freed.
 */
#include <stdlib.h>

#include "kstat_impl.h"
#include "recording/record.h"
#include "util/json.h"

/* --- adding events --------------------------------------------------------- */

static unsigned int life_bucket(uint64_t ns)
{
	unsigned int b = 0;

	while (ns >>= 1)
		b++;
	return b < LIFE_BUCKETS ? b : LIFE_BUCKETS - 1;
}

/* The object at this pointer is no longer alive: freed, or (at a new
 * allocation of the pointer) freed without an event we saw. */
void kstat_forget_live(struct kstat *ks, struct ptrstat *p)
{
	struct site *s = item(&ks->sites, p->site);
	struct cache *c = item(&ks->caches, p->cache);

	s->alive--;
	s->alive_bytes -= p->last_alloc;
	c->alive--;
	c->alive_bytes -= p->last_alloc;
	ks->alive--;
	ks->alive_bytes -= p->last_alloc;
	kstat_forget_stack(ks, p);
	p->live = false;
}

void kstat_add_lifetime(struct kstat *ks, struct ptrstat *p, const struct kmt_event *ev)
{
	struct site *s = item(&ks->sites, p->site);
	struct cache *c = item(&ks->caches, p->cache);

	kstat_forget_live(ks, p);
	if (!p->timed || !ev->has_time)
		return;
	s->freed++;
	c->freed++;
	s->life[life_bucket(ev->timestamp > p->alloc_ts ? ev->timestamp - p->alloc_ts : 0)]++;
	c->life[life_bucket(ev->timestamp > p->alloc_ts ? ev->timestamp - p->alloc_ts : 0)]++;
}

/* --- what tests and callers read ---------------------------------------------- */

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

/* --- printing ----------------------------------------------------------------- */

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
	size_t i, shown = kstat_extra_shown(n, lines);

	fprintf(out, "\n%s\n", title);
	for (i = 0; title[i]; i++)
		fputc('=', out);
	fputc('\n', out);
	kstat_dotted(out);
	fprintf(out, " %-34s | %9s | %9s | %12s | %9s | %9s\n", what, "Freed", "Alive",
		"Alive bytes", "p50 <", "p99 <");
	kstat_dotted(out);
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
	kstat_dotted(out);
	for (i = 0; i < shown; i++) {
		if (!rows[i].freed)
			continue;
		fprintf(out, "\n %s: %llu freed\n", rows[i].name, (unsigned long long)rows[i].freed);
		print_histogram(rows[i].life, out);
	}
}

void kstat_print_lifetimes(const struct kstat *ks, const struct kstat_opts *o,
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

/* --- printing: JSON (--json) ------------------------------------------------------- */

void kstat_json_life_rows(const struct kstat *ks, bool sites, int lines,
			   const struct kstat_names *names, FILE *out)
{
	size_t n, shown;
	struct life_row *rows = life_rows(ks, sites, names, &n);

	fprintf(out, "\"%s\":[", sites ? "callers" : "caches");
	shown = rows ? kstat_extra_shown(n, lines) : 0;
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
