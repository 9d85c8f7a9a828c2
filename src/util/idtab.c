// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Entries by a 64-bit key: see idtab.h. */
#include <stdlib.h>
#include <string.h>

#include "idtab.h"

struct idtab {
	unsigned char *slots;
	size_t entry_size;
	size_t mask; /* capacity - 1, a power of two */
	size_t used;
};

#define INITIAL_SLOTS 256

static uint64_t key_at(const struct idtab *t, size_t i)
{
	uint64_t key;

	memcpy(&key, t->slots + i * t->entry_size, sizeof(key));
	return key;
}

struct idtab *idtab_new(size_t entry_size)
{
	struct idtab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->entry_size = entry_size;
	t->mask = INITIAL_SLOTS - 1;
	t->slots = calloc(INITIAL_SLOTS, entry_size);
	if (!t->slots) {
		free(t);
		return NULL;
	}
	return t;
}

void idtab_free(struct idtab *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

/* Fibonacci hashing: the high bits of the product mix every bit of the
 * key (cache addresses share their low bits, tids their high ones). */
static size_t home(const struct idtab *t, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & t->mask;
}

/* The slot of key, or the free slot where it would go. */
static size_t slot_of(const struct idtab *t, uint64_t key)
{
	size_t i = home(t, key);
	uint64_t k;

	while ((k = key_at(t, i)) && k != key)
		i = (i + 1) & t->mask;
	return i;
}

void *idtab_find(const struct idtab *t, uint64_t key)
{
	size_t i;

	if (!key)
		return NULL;
	i = slot_of(t, key);
	return key_at(t, i) ? t->slots + i * t->entry_size : NULL;
}

static int grow(struct idtab *t)
{
	struct idtab bigger = { .entry_size = t->entry_size, .mask = t->mask * 2 + 1 };

	bigger.slots = calloc(bigger.mask + 1, t->entry_size);
	if (!bigger.slots)
		return -1;
	for (size_t i = 0; i <= t->mask; i++) {
		uint64_t key = key_at(t, i);

		if (key)
			memcpy(bigger.slots + slot_of(&bigger, key) * t->entry_size,
			       t->slots + i * t->entry_size, t->entry_size);
	}
	free(t->slots);
	t->slots = bigger.slots;
	t->mask = bigger.mask;
	return 0;
}

void *idtab_insert(struct idtab *t, uint64_t key)
{
	unsigned char *e;
	size_t i;

	if (!key)
		return NULL;
	i = slot_of(t, key);
	if (key_at(t, i))
		return t->slots + i * t->entry_size;
	if ((t->used + 1) * 2 > t->mask + 1) {
		if (grow(t))
			return NULL;
		i = slot_of(t, key);
	}
	e = t->slots + i * t->entry_size;
	memcpy(e, &key, sizeof(key));
	t->used++;
	return e;
}
