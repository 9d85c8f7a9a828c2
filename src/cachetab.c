// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The caches a stream has described: see cachetab.h. */
#include <stdlib.h>
#include <string.h>

#include "cachetab.h"
#include "record.h"

struct cache_entry {
	__u64 addr; /* 0: free */
	__u8 flags;
	char name[KMT_CACHE_INFO_NAME_LEN + 1];
};

struct cachetab {
	struct cache_entry *slots;
	size_t mask; /* capacity - 1, a power of two */
	size_t used;
};

#define INITIAL_SLOTS 256

struct cachetab *cachetab_new(void)
{
	struct cachetab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->slots = calloc(INITIAL_SLOTS, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	t->mask = INITIAL_SLOTS - 1;
	return t;
}

void cachetab_free(struct cachetab *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static size_t hash(__u64 addr)
{
	return (size_t)((addr >> 6) * 0x9e3779b97f4a7c15ULL >> 20);
}

/* The slot of addr, or the free slot where it would go. */
static struct cache_entry *slot_of(const struct cachetab *t, __u64 addr)
{
	size_t i = hash(addr) & t->mask;

	while (t->slots[i].addr && t->slots[i].addr != addr)
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

static bool grow(struct cachetab *t)
{
	struct cachetab bigger = { .mask = t->mask * 2 + 1 };

	bigger.slots = calloc(bigger.mask + 1, sizeof(*bigger.slots));
	if (!bigger.slots)
		return false;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].addr)
			*slot_of(&bigger, t->slots[i].addr) = t->slots[i];
	free(t->slots);
	t->slots = bigger.slots;
	t->mask = bigger.mask;
	return true;
}

static void learn(struct cachetab *t, const struct kmt_event *ev)
{
	struct cache_entry *e;

	if (!ev->ptr)
		return;
	/* At most half full; out of memory, the name is just not learned. */
	if ((t->used + 1) * 2 > t->mask + 1 && !grow(t))
		return;
	e = slot_of(t, ev->ptr);
	if (!e->addr) {
		e->addr = ev->ptr;
		t->used++;
	}
	e->flags = ev->cache_flags;
	memcpy(e->name, ev->cache_name, sizeof(e->name));
}

bool cachetab_apply(struct cachetab *t, struct kmt_event *ev)
{
	const struct cache_entry *e;

	if (ev->event_id == KMT_EVENT_CACHE) {
		if (ev->has_cache_info)
			learn(t, ev);
		return false;
	}
	if (!kmt_is_memory_event(ev))
		return false;
	if (!ev->has_cache_ref || (ev->cache_flags & KMT_CACHE_NO_NAME)) {
		ev->has_cache = ev->has_cache || ev->has_cache_ref;
		return true;
	}
	e = slot_of(t, ev->cache_addr);
	if (!e->addr)
		return true; /* its record was lost: no name */
	ev->has_cache = true;
	ev->cache_flags = e->flags;
	memcpy(ev->cache_name, e->name, sizeof(ev->cache_name));
	return true;
}
