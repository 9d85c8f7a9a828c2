/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A table of fixed-size entries found by a nonzero 64-bit key kept in
 * their first 8 bytes (open addressing, at most half full, grown by
 * doubling): what the readers' tables of things described once (caches,
 * tasks) are built on.
 */
#ifndef KMEMSNOOP_IDTAB_H
#define KMEMSNOOP_IDTAB_H

#include <stddef.h>
#include <stdint.h>

struct idtab;

/* entry_size: at least 8, the key first. */
struct idtab *idtab_new(size_t entry_size);
void idtab_free(struct idtab *t);

/* The entry of key, or NULL. */
void *idtab_find(const struct idtab *t, uint64_t key);

/* The entry of key, a new one (zeroed, key set) if it had none; NULL when
 * out of memory. */
void *idtab_insert(struct idtab *t, uint64_t key);

#endif /* KMEMSNOOP_IDTAB_H */
