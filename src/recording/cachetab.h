/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The slab caches a stream has described (cache records, docs/ABI.md), by
 * address: what turns a cache reference back into the cache's name.  A
 * CPU's cache record comes before that CPU's first record referring to the
 * cache, so a reader that applies the table to each CPU's records in their
 * order always knows the name.  A cache destroyed and another created at
 * its address (a module unloaded and loaded again) keeps the first one's
 * name on a CPU until it leaves that CPU's table of caches described.
 */
#ifndef KMEMSNOOP_CACHETAB_H
#define KMEMSNOOP_CACHETAB_H

#include <stdbool.h>

struct cachetab;
struct kmt_event;

struct cachetab *cachetab_new(void);
void cachetab_free(struct cachetab *t);

/*
 * Learns from a cache record; gives an event with a cache reference the
 * cache's name and flags (has_cache).  False for the records taken at this
 * per-CPU stage, not to print or count (cache and heartbeat records, and
 * event ids of a later ABI); true for the others: events, and task records,
 * which name tids only after the CPUs are merged (tasktab.h).  A reference
 * to a cache never described (its record lost) keeps has_cache false.
 */
bool cachetab_apply(struct cachetab *t, struct kmt_event *ev);

#endif /* KMEMSNOOP_CACHETAB_H */
