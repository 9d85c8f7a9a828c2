// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --hist: intervals from readings of counters that only grow. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "histacc.h"
#include "bpf/kmemsnoop.h"
#include "recording/record.h"

/* The counters are all __u64: a level is walked as an array of them. */
_Static_assert(sizeof(struct kmt_hist_level) % sizeof(__u64) == 0, "u64 counters only");
#define LEVEL_WORDS (sizeof(struct kmt_hist_level) / sizeof(__u64))

/* A key merged over CPUs and levels; cur is the reading in progress. */
struct keyent {
	struct kmt_hist_key key; /* level 0 */
	bool used;
	bool labeled;
	__u64 prev_bytes, cur_bytes;
	__u64 prev[KMT_HIST_SLOTS], cur[KMT_HIST_SLOTS];
	char label[HIST_LABEL_LEN];
};

struct hist_acc {
	struct hist_acc_config cfg;
	struct kmt_hist_level prev, cur;
	__u64 prev_missed;
	struct keyent *ents; /* open addressing, linear probing */
	size_t cap;          /* a power of two */
	size_t n;
};

__u64 hist_total(const __u64 per_type[KMT_HIST_TYPES])
{
	__u64 sum = 0;

	for (int t = 0; t < KMT_HIST_TYPES; t++)
		sum += per_type[t];
	return sum;
}

void hist_interval_free(struct hist_interval *iv)
{
	for (int k = 0; k < KMT_BY_COUNT; k++) {
		free(iv->by[k].row);
		iv->by[k].row = NULL;
		iv->by[k].n = iv->by[k].cap = 0;
	}
}

struct hist_acc *hist_acc_new(const struct hist_acc_config *cfg)
{
	struct hist_acc *acc = calloc(1, sizeof(*acc));

	if (!acc)
		return NULL;
	acc->cfg = *cfg;
	return acc;
}

void hist_acc_free(struct hist_acc *acc)
{
	if (!acc)
		return;
	free(acc->ents);
	free(acc);
}

void hist_acc_begin(struct hist_acc *acc)
{
	memset(&acc->cur, 0, sizeof(acc->cur));
	for (size_t i = 0; i < acc->cap; i++) {
		if (!acc->ents[i].used)
			continue;
		acc->ents[i].cur_bytes = 0;
		memset(acc->ents[i].cur, 0, sizeof(acc->ents[i].cur));
	}
}

static void add_level(struct kmt_hist_level *sum, const struct kmt_hist_level *l)
{
	__u64 *dst = (__u64 *)sum;
	const __u64 *src = (const __u64 *)l;

	for (size_t i = 0; i < LEVEL_WORDS; i++)
		dst[i] += src[i];
}

void hist_acc_add_cpu(struct hist_acc *acc, const struct kmt_hist_cpu *cpu)
{
	for (int l = 0; l < KMT_HIST_LEVELS; l++)
		add_level(&acc->cur, &cpu->level[l]);
}

static size_t key_hash(const struct kmt_hist_key *k)
{
	__u64 h = k->id * KMT_HASH_MUL ^ k->id2 * KMT_HASH_MUL2 ^ k->kind;

	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return (size_t)(h ^ h >> 32);
}

static bool key_equal(const struct kmt_hist_key *a, const struct kmt_hist_key *b)
{
	return a->id == b->id && a->id2 == b->id2 && a->kind == b->kind;
}

static struct keyent *find_slot(struct keyent *ents, size_t cap, const struct kmt_hist_key *k)
{
	size_t i = key_hash(k) & (cap - 1);

	while (ents[i].used && !key_equal(&ents[i].key, k))
		i = (i + 1) & (cap - 1);
	return &ents[i];
}

static int grow(struct hist_acc *acc)
{
	size_t cap = acc->cap ? acc->cap * 2 : 256;
	struct keyent *ents = calloc(cap, sizeof(*ents));

	if (!ents)
		return -ENOMEM;
	for (size_t i = 0; i < acc->cap; i++)
		if (acc->ents[i].used)
			*find_slot(ents, cap, &acc->ents[i].key) = acc->ents[i];
	free(acc->ents);
	acc->ents = ents;
	acc->cap = cap;
	return 0;
}

int hist_acc_add_key(struct hist_acc *acc, const struct kmt_hist_key *key,
		     const struct kmt_hist_keyed *value)
{
	struct kmt_hist_key k = { .id = key->id, .id2 = key->id2, .kind = key->kind };
	struct keyent *e;

	if (key->kind < KMT_BY_CACHE || key->kind >= KMT_HIST_KEYED_KINDS)
		return 0;
	if ((acc->n + 1) * 10 > acc->cap * 7 && grow(acc))
		return -ENOMEM;
	e = find_slot(acc->ents, acc->cap, &k);
	if (!e->used) {
		e->used = true;
		e->key = k;
		acc->n++;
	}
	e->cur_bytes += value->bytes;
	for (int s = 0; s < KMT_HIST_SLOTS; s++)
		e->cur[s] += value->slots[s];
	return 0;
}

static struct hist_row *new_row(struct hist_rows *rows)
{
	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? rows->cap * 2 : 64;
		struct hist_row *r = realloc(rows->row, cap * sizeof(*r));

		if (!r)
			return NULL;
		rows->row = r;
		rows->cap = cap;
	}
	memset(&rows->row[rows->n], 0, sizeof(rows->row[0]));
	return &rows->row[rows->n++];
}

/* A counter read lower than before would be a bug: never a huge number. */
static __u64 delta(__u64 cur, __u64 prev)
{
	return cur > prev ? cur - prev : 0;
}

static int key_rows(struct hist_acc *acc, struct hist_interval *out)
{
	for (size_t i = 0; i < acc->cap; i++) {
		struct keyent *e = &acc->ents[i];
		struct hist_row *row;
		__u64 count = 0;

		if (!e->used)
			continue;
		for (int s = 0; s < KMT_HIST_SLOTS; s++)
			count += delta(e->cur[s], e->prev[s]);
		if (count) {
			row = new_row(&out->by[e->key.kind]);
			if (!row)
				return -ENOMEM;
			if (!e->labeled && acc->cfg.label)
				e->labeled = acc->cfg.label(acc->cfg.label_ctx, &e->key, e->label,
							    sizeof(e->label));
			if (!e->labeled)
				snprintf(e->label, sizeof(e->label), "0x%llx",
					 (unsigned long long)e->key.id);
			memcpy(row->label, e->label, sizeof(row->label));
			row->count = count;
			row->bytes = delta(e->cur_bytes, e->prev_bytes);
			for (int s = 0; s < KMT_HIST_SLOTS; s++)
				row->slots[s] = delta(e->cur[s], e->prev[s]);
		}
		e->prev_bytes = e->cur_bytes;
		memcpy(e->prev, e->cur, sizeof(e->prev));
	}
	return 0;
}

static int event_rows(const struct hist_acc *acc, struct hist_interval *out)
{
	for (int t = 0; t < KMT_HIST_TYPES; t++) {
		struct hist_row *row;

		if (!out->allocs[t])
			continue;
		row = new_row(&out->by[KMT_BY_EVENT]);
		if (!row)
			return -ENOMEM;
		snprintf(row->label, sizeof(row->label), "%s", kmt_type_event_name(t, false));
		row->count = out->allocs[t];
		row->bytes = acc->cfg.value == KMT_HIST_REQ ? out->bytes_req[t] : out->bytes_alloc[t];
		memcpy(row->slots, out->type_slots[t], sizeof(row->slots));
	}
	return 0;
}

/* A page allocation of order o is PAGE_SIZE << o bytes: bucket page_shift + o. */
static int order_rows(const struct hist_acc *acc, struct hist_interval *out)
{
	const __u64 *slots = out->type_slots[KMT_TYPE_PAGES];

	for (unsigned int s = acc->cfg.page_shift; s < KMT_HIST_SLOTS; s++) {
		struct hist_row *row;

		if (!slots[s])
			continue;
		row = new_row(&out->by[KMT_BY_ORDER]);
		if (!row)
			return -ENOMEM;
		snprintf(row->label, sizeof(row->label), "%u", s - acc->cfg.page_shift);
		row->count = slots[s];
		row->bytes = slots[s] << s;
		row->slots[s] = slots[s];
	}
	return 0;
}

static int by_count(const void *a, const void *b)
{
	const struct hist_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return strcmp(x->label, y->label);
}

static void fill_totals(const struct kmt_hist_level *d, struct hist_interval *out)
{
	memset(out->slots, 0, sizeof(out->slots));
	for (int t = 0; t < KMT_HIST_TYPES; t++) {
		out->allocs[t] = 0;
		for (int s = 0; s < KMT_HIST_SLOTS; s++) {
			out->type_slots[t][s] = d->slots[t][s];
			out->slots[s] += d->slots[t][s];
			out->allocs[t] += d->slots[t][s];
		}
		out->bytes_alloc[t] = d->bytes_alloc[t];
		out->bytes_req[t] = d->bytes_req[t];
		out->failed[t] = d->failed[t];
		out->frees[t] = d->frees[t];
	}
	memset(out->untracked, 0, sizeof(out->untracked));
	for (int k = 0; k < KMT_HIST_KEYED_KINDS; k++)
		out->untracked[k] = d->untracked[k];
}

int hist_acc_end(struct hist_acc *acc, __u64 missed_total, struct hist_interval *out)
{
	struct kmt_hist_level d;
	__u64 *dw = (__u64 *)&d;
	const __u64 *cw = (const __u64 *)&acc->cur, *pw = (const __u64 *)&acc->prev;
	int err;

	for (size_t i = 0; i < LEVEL_WORDS; i++)
		dw[i] = delta(cw[i], pw[i]);
	acc->prev = acc->cur;
	out->value = acc->cfg.value;
	fill_totals(&d, out);
	out->missed = delta(missed_total, acc->prev_missed);
	acc->prev_missed = missed_total;
	for (int k = 0; k < KMT_BY_COUNT; k++)
		out->by[k].n = 0;
	err = key_rows(acc, out);
	if (!err && (acc->cfg.kinds & (1U << KMT_BY_EVENT)))
		err = event_rows(acc, out);
	if (!err && (acc->cfg.kinds & (1U << KMT_BY_ORDER)))
		err = order_rows(acc, out);
	for (int k = 0; k < KMT_BY_COUNT; k++)
		if (out->by[k].n)
			qsort(out->by[k].row, out->by[k].n, sizeof(out->by[k].row[0]), by_count);
	return err;
}
