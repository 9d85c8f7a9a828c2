// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The busiest keys of late, each with a series: see topkeys.h. */
#include "topkeys.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist/histdata.h"
#include "util/idtab.h"

/* A key without a series takes one from a key this many times less busy. */
#define TAKEOVER_FACTOR 2.0
/* A key without a series whose score fell below this (quiet for about ten
 * half-lives) is forgotten: keys come and go (comms, cgroups). */
#define FORGET_SCORE 0.01

struct key {
	char label[HIST_LABEL_LEN];
	double score;
	__u64 count, bytes;         /* allocated while it had a series */
	__u64 new_count, new_bytes; /* in this reading, not yet placed */
	bool series;
};

/* index: keys by the hash of their label (a hash taken by another label
 * goes on to the next value). */
struct slot {
	uint64_t hash;
	size_t at;
};

struct topkeys {
	int top;
	struct key *keys;
	size_t n, cap;
	struct idtab *index;
	struct key **sorted; /* scratch, cap of them */
	size_t *shown;       /* the keys with a series, busiest first */
	int nshown;
	__u64 other_count, other_bytes;
};

struct topkeys *topkeys_new(int top)
{
	struct topkeys *tk = calloc(1, sizeof(*tk));

	if (!tk)
		return NULL;
	tk->top = top;
	tk->index = idtab_new(sizeof(struct slot));
	tk->shown = calloc(top > 0 ? top : 1, sizeof(*tk->shown));
	if (!tk->index || !tk->shown) {
		topkeys_free(tk);
		return NULL;
	}
	return tk;
}

void topkeys_free(struct topkeys *tk)
{
	if (!tk)
		return;
	idtab_free(tk->index);
	free(tk->keys);
	free(tk->sorted);
	free(tk->shown);
	free(tk);
}

/* FNV-1a, never 0 (idtab's empty key). */
static uint64_t label_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h ? h : 1;
}

static uint64_t next_hash(uint64_t h)
{
	return h + 1 ? h + 1 : 1;
}

static struct key *find_key(const struct topkeys *tk, const char *label, uint64_t *hash)
{
	uint64_t h = label_hash(label);
	const struct slot *s;

	while ((s = idtab_find(tk->index, h))) {
		if (!strcmp(tk->keys[s->at].label, label))
			return &tk->keys[s->at];
		h = next_hash(h);
	}
	*hash = h;
	return NULL;
}

static int index_key(struct topkeys *tk, uint64_t hash, size_t at)
{
	struct slot *s = idtab_insert(tk->index, hash);

	if (!s)
		return -ENOMEM;
	s->at = at;
	return 0;
}

static struct key *key_of(struct topkeys *tk, const char *label)
{
	struct key *k;
	uint64_t hash;

	k = find_key(tk, label, &hash);
	if (k)
		return k;
	if (tk->n == tk->cap) {
		size_t cap = tk->cap ? tk->cap * 2 : 64;
		struct key *keys = realloc(tk->keys, cap * sizeof(*keys));
		struct key **sorted;

		if (!keys)
			return NULL;
		tk->keys = keys;
		sorted = realloc(tk->sorted, cap * sizeof(*sorted));
		if (!sorted)
			return NULL;
		tk->sorted = sorted;
		tk->cap = cap;
	}
	if (index_key(tk, hash, tk->n))
		return NULL;
	k = &tk->keys[tk->n++];
	memset(k, 0, sizeof(*k));
	snprintf(k->label, sizeof(k->label), "%s", label);
	return k;
}

/* Busiest first; ties by label, so that the order does not depend on
 * the order keys were first seen in. */
static int by_score(const void *a, const void *b)
{
	const struct key *x = *(struct key *const *)a, *y = *(struct key *const *)b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return strcmp(x->label, y->label);
}

/* Series to the busiest: free ones first, then from a much quieter key. */
static void choose(struct topkeys *tk)
{
	struct key **s = tk->sorted;
	size_t n = tk->n, busy, quiet;
	int used = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		s[i] = &tk->keys[i];
		used += s[i]->series;
	}
	qsort(s, n, sizeof(*s), by_score);
	for (size_t i = 0; i < n && used < tk->top; i++) {
		if (!s[i]->series && s[i]->score > 0) {
			s[i]->series = true;
			used++;
		}
	}
	/* The busiest keys without a series against the quietest with one. */
	busy = 0;
	quiet = n;
	for (;;) {
		while (busy < n && s[busy]->series)
			busy++;
		while (quiet > 0 && !s[quiet - 1]->series)
			quiet--;
		if (busy >= n || quiet == 0 || busy > quiet - 1 ||
		    !(s[busy]->score > TAKEOVER_FACTOR * s[quiet - 1]->score))
			break;
		s[busy]->series = true;
		s[quiet - 1]->series = false;
	}
}

/* Forgets the quiet keys without a series, and indexes the rest anew. */
static int forget_quiet(struct topkeys *tk)
{
	size_t kept = 0;

	for (size_t i = 0; i < tk->n; i++) {
		struct key *k = &tk->keys[i];

		if (!k->series && k->score < FORGET_SCORE)
			continue;
		if (kept != i)
			tk->keys[kept] = *k;
		kept++;
	}
	if (kept == tk->n)
		return 0;
	tk->n = kept;
	idtab_free(tk->index);
	tk->index = idtab_new(sizeof(struct slot));
	if (!tk->index)
		return -ENOMEM;
	for (size_t i = 0; i < tk->n; i++) {
		uint64_t hash;

		/* Labels are unique: find_key only finds the free hash. */
		find_key(tk, tk->keys[i].label, &hash);
		if (index_key(tk, hash, i))
			return -ENOMEM;
	}
	return 0;
}

static void list_shown(struct topkeys *tk)
{
	int n = 0;

	for (size_t i = 0; i < tk->n && n < tk->top; i++)
		if (tk->keys[i].series)
			tk->sorted[n++] = &tk->keys[i];
	if (n)
		qsort(tk->sorted, n, sizeof(*tk->sorted), by_score);
	for (int i = 0; i < n; i++)
		tk->shown[i] = (size_t)(tk->sorted[i] - tk->keys);
	tk->nshown = n;
}

void topkeys_begin(struct topkeys *tk, double seconds)
{
	double decay = exp2(-(seconds > 0 ? seconds : 0) / TOPKEYS_HALF_LIFE);

	for (size_t i = 0; i < tk->n; i++)
		tk->keys[i].score *= decay;
}

int topkeys_count(struct topkeys *tk, const char *label, __u64 count, __u64 bytes)
{
	struct key *k;

	if (!strcmp(label, TOPKEYS_OTHER) || tk->top <= 0) {
		tk->other_count += count;
		tk->other_bytes += bytes;
		return 0;
	}
	k = tk->index ? key_of(tk, label) : NULL;
	if (!k)
		return -ENOMEM;
	k->score += count;
	k->new_count += count;
	k->new_bytes += bytes;
	return 0;
}

int topkeys_end(struct topkeys *tk)
{
	int err;

	if (!tk->index)
		return -ENOMEM;
	choose(tk);
	for (size_t i = 0; i < tk->n; i++) {
		struct key *k = &tk->keys[i];

		if (k->series) {
			k->count += k->new_count;
			k->bytes += k->new_bytes;
		} else {
			tk->other_count += k->new_count;
			tk->other_bytes += k->new_bytes;
		}
		k->new_count = k->new_bytes = 0;
	}
	err = forget_quiet(tk);
	if (err)
		return err;
	list_shown(tk);
	return 0;
}

void topkeys_each(const struct topkeys *tk, topkeys_fn fn, void *ctx)
{
	for (int i = 0; i < tk->nshown; i++) {
		const struct key *k = &tk->keys[tk->shown[i]];

		fn(ctx, k->label, k->count, k->bytes);
	}
	fn(ctx, TOPKEYS_OTHER, tk->other_count, tk->other_bytes);
}
