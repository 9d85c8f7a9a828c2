// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The --allocinfo table without BPF: see aitable.h. */
#include "aitable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TAG_MAX 1024
#define FIRST_SITES 1024 /* the site cache's first size; it doubles at half full */

const char allocinfo_header[] = "allocinfo - version: 1.0\n"
				"#     <size>  <calls> <tag info>\n";

struct site {
	__u64 key;
	struct ai_site_text text; /* text.tag NULL: a free slot */
};

struct row {
	__u64 key;
	const struct site *site; /* joined at print time */
	long long bytes;
	long long calls;
};

struct aitable {
	struct aitable_config cfg;
	/* Open addressing, keyed by site key. */
	struct site *sites;
	size_t nsites, cap;
	struct row *rows;
	size_t nrows, rows_cap;
};

size_t allocinfo_format_line(char *buf, size_t size, long long bytes, long long calls,
			     const char *tag)
{
	int n;

	/* lib/alloc_tag.c prints calls with %8llu; they are never negative
	 * in total, and if they were, a huge unsigned number would hide it. */
	if (calls >= 0)
		n = snprintf(buf, size, "%12lli %8llu %s \n", bytes, (unsigned long long)calls, tag);
	else
		n = snprintf(buf, size, "%12lli %8lli %s \n", bytes, calls, tag);
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

struct aitable *aitable_new(const struct aitable_config *cfg)
{
	struct aitable *t = calloc(1, sizeof(*t));

	if (t)
		t->cfg = *cfg;
	return t;
}

static void free_text(struct ai_site_text *text)
{
	free(text->tag);
	free(text->frames);
	free(text->folded);
	memset(text, 0, sizeof(*text));
}

void aitable_free(struct aitable *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->cap; i++)
		free_text(&t->sites[i].text);
	free(t->sites);
	free(t->rows);
	free(t);
}

size_t aitable_sites(const struct aitable *t)
{
	return t->nsites;
}

void aitable_begin(struct aitable *t)
{
	t->nrows = 0;
}

/* --- the site cache ------------------------------------------------------------ */

static size_t slot_of(const struct aitable *t, __u64 key)
{
	size_t i = (size_t)((key * KMT_HASH_MUL) >> 20) & (t->cap - 1);

	while (t->sites[i].text.tag && t->sites[i].key != key)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static int grow(struct aitable *t)
{
	struct site *old = t->sites;
	size_t old_cap = t->cap;

	t->cap = old_cap ? old_cap * 2 : FIRST_SITES;
	t->sites = calloc(t->cap, sizeof(*t->sites));
	if (!t->sites) {
		t->sites = old;
		t->cap = old_cap;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].text.tag)
			t->sites[slot_of(t, old[i].key)] = old[i];
	free(old);
	return 0;
}

/* The site of key, described on first sight. */
static int ensure_site(struct aitable *t, __u64 key)
{
	struct ai_site_text text = { 0 };
	struct site *s;
	int err;

	if ((t->nsites + 1) * 2 > t->cap && (err = grow(t)))
		return err;
	s = &t->sites[slot_of(t, key)];
	if (s->text.tag)
		return 0;
	err = t->cfg.describe(t->cfg.ctx, key, &text);
	if (!err && (!text.tag || (t->cfg.stacks && (!text.frames || !text.folded))))
		err = -ENOMEM;
	if (err) {
		free_text(&text);
		return err;
	}
	s->key = key;
	s->text = text;
	t->nsites++;
	return 0;
}

int aitable_add(struct aitable *t, __u64 key, long long bytes, long long calls)
{
	int err = ensure_site(t, key);

	if (err)
		return err;
	if (t->nrows == t->rows_cap) {
		size_t cap = t->rows_cap ? t->rows_cap * 2 : 1024;
		struct row *r = realloc(t->rows, cap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		t->rows = r;
		t->rows_cap = cap;
	}
	t->rows[t->nrows++] = (struct row){ .key = key, .bytes = bytes, .calls = calls };
	return 0;
}

/* --- sorting and merging ---------------------------------------------------------- */

static int by_tag(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return strcmp(x->site->text.tag, y->site->text.tag);
}

static int by_bytes(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return by_tag(a, b);
}

static int by_folded(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return strcmp(x->site->text.folded, y->site->text.folded);
}

/* Sorted rows whose text (tag or folded stack) is the same become one. */
static size_t merge_same(struct row *rows, size_t n, int (*same)(const void *, const void *))
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		if (out && !same(&rows[out - 1], &rows[i])) {
			rows[out - 1].bytes += rows[i].bytes;
			rows[out - 1].calls += rows[i].calls;
			continue;
		}
		rows[out++] = rows[i];
	}
	return out;
}

/* qsort with no rows: rows may then be NULL, which qsort must not get. */
static void sort_rows(struct row *rows, size_t n, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(rows, n, sizeof(*rows), cmp);
}

/* --- printing ------------------------------------------------------------------------ */

/* What makes the numbers below smaller than the truth, as "#" lines. */
static void print_losses(FILE *out, const struct kmt_ai_stats *st, unsigned long long misses)
{
	if (st->ptrs_full)
		fprintf(out, "# kmemsnoop: not counted: %llu allocations (%llu bytes): the pointer "
			     "table was full (--max-ptrs)\n",
			(unsigned long long)st->ptrs_full, (unsigned long long)st->ptrs_full_bytes);
	if (st->sites_full)
		fprintf(out, "# kmemsnoop: not counted: %llu allocations (%llu bytes): the site "
			     "table was full\n",
			(unsigned long long)st->sites_full, (unsigned long long)st->sites_full_bytes);
	if (st->stack_failed)
		fprintf(out, "# kmemsnoop: not counted: %llu allocations (%llu bytes): their stack "
			     "found no room in the stack table (--max-stacks)\n",
			(unsigned long long)st->stack_failed,
			(unsigned long long)st->stack_failed_bytes);
	if (misses)
		fprintf(out, "# kmemsnoop: %llu events of any process not seen: they happened while "
			     "the same BPF program ran on their CPU (an interrupt during a run, or "
			     "another task while a run was preempted: 7.x kernels)\n",
			misses);
	if (st->replaced)
		fprintf(out, "# kmemsnoop: %llu allocations (%llu bytes) were counted as freed when "
			     "their address was allocated again: their free was not seen\n",
			(unsigned long long)st->replaced, (unsigned long long)st->replaced_bytes);
}

static void print_folded(FILE *out, const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].bytes > 0 && rows[i].site->text.folded[0])
			fprintf(out, "%s %lld\n", rows[i].site->text.folded, rows[i].bytes);
}

static void print_rows(FILE *out, const struct row *rows, size_t n, bool stacks)
{
	char line[TAG_MAX + 64];

	for (size_t i = 0; i < n; i++) {
		allocinfo_format_line(line, sizeof(line), rows[i].bytes, rows[i].calls,
				      rows[i].site->text.tag);
		fputs(line, out);
		if (stacks)
			fputs(rows[i].site->text.frames, out);
	}
}

int aitable_visit(struct aitable *t, ai_row_fn fn, void *ctx)
{
	struct row *rows = t->rows;
	size_t n = t->nrows;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		rows[i].site = &t->sites[slot_of(t, rows[i].key)];
	sort_rows(rows, n, by_tag);
	if (!t->cfg.stacks)
		n = merge_same(rows, n, by_tag);
	sort_rows(rows, n, by_bytes);
	for (size_t i = 0; i < n && !err; i++)
		err = fn(ctx, rows[i].site->text.tag, rows[i].bytes, rows[i].calls);
	t->nrows = 0;
	return err;
}

int aitable_print(struct aitable *t, const struct kmt_ai_stats *st, unsigned long long misses,
		  FILE *out, FILE *notes)
{
	struct row *rows = t->rows;
	size_t n = t->nrows;

	/* Every add is done: the sites no longer move. */
	for (size_t i = 0; i < n; i++)
		rows[i].site = &t->sites[slot_of(t, rows[i].key)];
	if (t->cfg.folded) {
		sort_rows(rows, n, by_folded);
		n = merge_same(rows, n, by_folded);
		print_losses(notes, st, misses);
		print_folded(out, rows, n);
	} else {
		sort_rows(rows, n, by_tag);
		if (t->cfg.stacks)
			sort_rows(rows, n, by_bytes);
		else
			n = merge_same(rows, n, by_tag);
		fputs(allocinfo_header, out);
		print_losses(out, st, misses);
		print_rows(out, rows, n, t->cfg.stacks);
	}
	t->nrows = 0;
	if (fflush(out) || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}
