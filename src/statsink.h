/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --stat: a sink (sink.h) that aggregates records into kstat.c's tables. */
#ifndef KMEMSNOOP_STATSINK_H
#define KMEMSNOOP_STATSINK_H

#include <stdbool.h>
#include <stdio.h>

struct btf;
struct env;
struct ksyms;
struct sink;

/*
 * Prints to out, at each report, what env asks for (--caller, --alloc,
 * --slab, --page, -s, -l), call sites named by ksyms (borrowed; NULL:
 * addresses) and GFP flags by the kernel vmlinux describes.  reorder: the
 * records come from several rings and are held until sync says that no
 * earlier record can still come (live); without it they are taken in the
 * order given (a recording's replay, already merged by time).  NULL with
 * a reason in err.
 */
struct sink *stat_sink_new(FILE *out, const struct env *env, struct ksyms *ksyms,
			   const struct btf *vmlinux, bool reorder, char *err, size_t err_size);

#endif
