/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --stat: a sink (sink.h) that aggregates records into kstat.c's tables. */
#ifndef KMEMSNOOP_STATSINK_H
#define KMEMSNOOP_STATSINK_H

#include <stdbool.h>
#include <stdio.h>

struct addr_names;
struct gfp_names;
struct kstat;
struct env;
struct ksyms;
struct sink;

/*
 * Prints to out, at each report, what env asks for (--caller, --alloc,
 * --slab, --page, --stacks, -s, -l), addresses named as names says (its
 * tables borrowed) and GFP flags by gfp (the sink keeps a copy).  rings: the
 * records come from that many rings and are held until sync says that no
 * earlier record can still come (live); 0: they are taken in the order
 * given (a recording's replay, already merged by time, or the tables
 * filled by statbpf.c).  held_cap: records held at most (reorder.h; 0:
 * REORDER_CAP).  NULL with a reason in err.
 */
struct sink *stat_sink_new(FILE *out, const struct env *env, const struct addr_names *names,
			   const struct gfp_names *gfp, int rings, size_t held_cap, char *err,
			   size_t err_size);

/* The sink's tables, for a mode that fills them itself (--stat's BPF maps,
 * statbpf.c) and then asks the sink to report them. */
struct kstat *stat_sink_tables(struct sink *sk);

#endif
