// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The one hash table kind behind every --stat table: an array of entries
 * found through one open-addressing hash of a 24-byte key (struct kkey,
 * kstat_impl.h).  Entries are never removed (a live flag says whether a
 * pointer or a page is allocated now), so that an entry's index stays
 * valid until table_clear.
 */
#include <stdlib.h>
#include <string.h>

#include "kstat_impl.h"

static uint64_t key_hash(const struct kkey *k)
{
	return mix(k->a ^ mix(k->b ^ mix(((uint64_t)k->c << 32) | k->d)));
}

static bool key_eq(const struct kkey *x, const struct kkey *y)
{
	return x->a == y->a && x->b == y->b && x->c == y->c && x->d == y->d;
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
void *kstat_table_find(struct table *t, const struct kkey *key, bool create)
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

void kstat_table_free(struct table *t)
{
	free(t->items);
	free(t->slots);
}

void kstat_table_clear(struct table *t)
{
	t->n = 0;
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof(*t->slots));
}
