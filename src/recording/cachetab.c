// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The caches a stream has described: see cachetab.h. */
#include <stdlib.h>
#include <string.h>

#include "cachetab.h"
#include "record.h"
#include "util/idtab.h"

/* struct cachetab is an idtab (idtab.h) of these, by address. */
struct cache_entry {
	uint64_t addr; /* the key */
	__u8 flags;
	char name[KMT_CACHE_INFO_NAME_LEN + 1];
};

struct cachetab *cachetab_new(void)
{
	return (struct cachetab *)idtab_new(sizeof(struct cache_entry));
}

void cachetab_free(struct cachetab *t)
{
	idtab_free((struct idtab *)t);
}

/* Out of memory, the name is just not learned. */
static void learn(struct cachetab *t, const struct kmt_event *ev)
{
	struct cache_entry *e = idtab_insert((struct idtab *)t, ev->ptr);

	if (!e)
		return;
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
		return kmt_is_task_record(ev);
	if (!ev->has_cache_ref || (ev->cache_flags & KMT_CACHE_NO_NAME)) {
		ev->has_cache = ev->has_cache || ev->has_cache_ref;
		return true;
	}
	e = idtab_find((struct idtab *)t, ev->cache_addr);
	if (!e)
		return true; /* its record was lost: no name */
	ev->has_cache = true;
	ev->cache_flags = e->flags;
	memcpy(ev->cache_name, e->name, sizeof(ev->cache_name));
	return true;
}
