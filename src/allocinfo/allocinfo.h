/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --allocinfo: sizes the BPF maps before load, reads them, and prints
 * them in the kernel's /proc/allocinfo format (or as folded stacks).
 */
#ifndef KMEMSNOOP_ALLOCINFO_H
#define KMEMSNOOP_ALLOCINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "aitable.h"

struct env;
struct kmemsnoop_bpf;
struct ksyms;
struct allocinfo;

/*
 * Tags from ksyms (kallsyms read before load; a reference is taken) and
 * debug information; NULL with a one-line reason in err.
 * atomics: the kernel has BPF atomics (the programs loaded keep the
 * pointers in ai_table, else in the ai_ptrs hash).
 */
struct allocinfo *allocinfo_new(const struct env *env, int ncpus, bool atomics,
				struct ksyms *ksyms, char *err, size_t err_size);
/* Symbols read after the programs loaded (they name them in stacks);
 * without this call the first table reads /proc/kallsyms again. */
void allocinfo_use_symbols(struct allocinfo *ai, struct ksyms *ksyms);
void allocinfo_free(struct allocinfo *ai);

/* Rodata and map sizes, after the common configuration, before load. */
void allocinfo_configure(const struct env *env, struct kmemsnoop_bpf *skel, bool atomics);
/* Where the percpu allocator's wrappers are (kallsyms; NULL: unknown). */
void allocinfo_configure_percpu(struct kmemsnoop_bpf *skel, struct ksyms *ks);

/* vmalloc areas are counted (their own records): the page allocations
 * vmalloc makes for them are then left out of the table. */
void allocinfo_count_areas(struct allocinfo *ai, bool areas);

/*
 * Reads the maps and prints the table to out.  misses: events BPF
 * skipped (recursion_misses), shown because they make the totals inexact.
 * 0, or a negative errno of the output.
 */
int allocinfo_print(struct allocinfo *ai, struct kmemsnoop_bpf *skel, unsigned long long misses,
		    FILE *out);

/*
 * Reads the maps and hands each row of the table (as printed, most bytes
 * first) to fn; st: what could not be counted.  0, a negative errno, or
 * what fn returned.
 */
int allocinfo_read(struct allocinfo *ai, struct kmemsnoop_bpf *skel, ai_row_fn fn, void *ctx,
		   struct kmt_ai_stats *st);

/* --pprof: the last reading, as a pprof heap profile, to its file.  0, or
 * -1 with a one-line reason in err (also 0 without --pprof). */
int allocinfo_write_pprof(struct allocinfo *ai, char *err, size_t err_size);

/* What could not be tracked, on stderr. */
void allocinfo_summary(struct allocinfo *ai, struct kmemsnoop_bpf *skel);

#endif
