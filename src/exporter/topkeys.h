/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The exporter's per-key series (caches, call sites, comms, cgroups)
 * under a fixed bound: at most `top` keys have a series of their own, the
 * others are summed under "other", and no counter ever goes down.
 *
 * Which keys: the busiest of late.  Each key's score is its allocations,
 * decaying by half every TOPKEYS_HALF_LIFE seconds; a key without a series
 * takes that of the weakest key with one when its score is more than twice
 * that key's (so that two keys of about the same rate do not take turns).
 * A key's series counts what it allocated while it had one; what it
 * allocated without one went to "other".  So a key that gets busy late (a
 * container started after kmemsnoop) gets a series within a reading or
 * two, a key that went quiet gives its series up and Prometheus sees it go
 * stale, and every series, "other" included, only grows.
 */
#ifndef KMEMSNOOP_TOPKEYS_H
#define KMEMSNOOP_TOPKEYS_H

#include <linux/types.h>


#define TOPKEYS_HALF_LIFE 60.0
#define TOPKEYS_OTHER "other"

struct topkeys;

struct topkeys *topkeys_new(int top);
void topkeys_free(struct topkeys *tk);

/* One reading, seconds long: begin, each key's count (a key labelled
 * "other" counts under "other"; a label given twice adds up), end.
 * 0, or -ENOMEM. */
void topkeys_begin(struct topkeys *tk, double seconds);
int topkeys_count(struct topkeys *tk, const char *label, __u64 count, __u64 bytes);
int topkeys_end(struct topkeys *tk);

/* The series now, busiest first, then "other" (always there). */
typedef void (*topkeys_fn)(void *ctx, const char *label, __u64 count, __u64 bytes);
void topkeys_each(const struct topkeys *tk, topkeys_fn fn, void *ctx);

#endif /* KMEMSNOOP_TOPKEYS_H */
