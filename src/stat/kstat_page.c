// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's page tables, as perf kmem stat --page has them.  Pages are
 * matched by page frame number, and a free takes its migrate type and GFP
 * flags from its allocation.  Rows by page and by call site, each split
 * by order x migrate type x GFP flags, the GFP legend and the page
 * SUMMARY with its order x migrate type table, as text and as JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "kstat_impl.h"
#include "bpf/kmemtrace.h"
#include "recording/record.h"
#include "util/json.h"

#define MIGRATE_UNKNOWN MIGRATE_COLUMNS

/* --- adding events --------------------------------------------------------- */

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
	struct pagestat *ps = kstat_table_find(t, &k, true);

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
	node = kstat_node_of_pfn(ks, ev->pfn);
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

int kstat_add_page_alloc(struct kstat *ks, const struct kmt_event *ev, int cpu)
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
	live = kstat_table_find(&ks->live_pages, &k, true);
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

void kstat_add_page_free(struct kstat *ks, const struct kmt_event *ev)
{
	uint64_t bytes = page_bytes(ks, ev);
	struct kkey k = { .a = page_of(ev) }, rk;
	struct pagestat *live = kstat_table_find(&ks->live_pages, &k, false), this, *row;

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
	row = kstat_table_find(&ks->page_allocs, &rk, false);
	if (row) {
		row->nr_free++;
		row->free_bytes += bytes;
	}
	rk = page_row_key(this.callsite, &this);
	row = kstat_table_find(&ks->page_callers, &rk, false);
	if (row) {
		row->nr_free++;
		row->free_bytes += bytes;
	}
}

/* --- sorting --------------------------------------------------------------------- */

static const struct kstat_sort default_page_sort = { 2, { KSTAT_KEY_BYTES, KSTAT_KEY_HIT } };

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
int kstat_print_gfp_legend(const struct kstat *ks, const struct kstat_names *names, FILE *out)
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

void kstat_print_page_table(const struct kstat *ks, bool caller, int lines,
			     const struct kstat_sort *sort, int gfp_width,
			     const struct kstat_names *names, FILE *out)
{
	size_t n, i;
	struct pagestat *rows = sorted_page_rows(ks, caller, sort, &n);
	char full[512], compact[256], site[256];

	if (!rows)
		return;
	fputc('\n', out);
	kstat_dotted(out);
	if (!caller)
		fprintf(out, " %-16s |", "PFN");
	fprintf(out, " Total alloc (KB) | Hits      | Order | Mig.type | %-*s | Callsite\n",
		gfp_width, "GFP flags");
	kstat_dotted(out);
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
	kstat_dotted(out);
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

void kstat_print_page_summary(const struct kstat *ks, FILE *out)
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

/* --- printing: JSON (--json) ------------------------------------------------------- */

void kstat_json_page_rows(const struct kstat *ks, bool caller, int lines,
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

/* The SUMMARY's order x migrate type table: its non-empty cells. */
void kstat_json_page_orders(const struct kstat *ks, FILE *out)
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
