/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The --allocinfo table, without BPF: what was read from the maps goes in
 * as one (site key, bytes, calls) sum per key; each key is described once
 * (its tag; with --stacks its frames and folded text) by a callback and
 * kept for the next readings; rows whose text is the same are merged (two
 * call sites on one source line are one line, as in the kernel), sorted,
 * and printed as /proc/allocinfo or as folded stacks.
 *
 *   aitable_begin -> aitable_add per key -> aitable_print -> (next reading)
 *
 * Rows hold keys, not site pointers: the site cache may grow (and move)
 * while keys are added, so rows are joined to their sites only when
 * printing, after the last add.
 */
#ifndef KMEMSNOOP_AITABLE_H
#define KMEMSNOOP_AITABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "bpf/kmemsnoop.h"

/* What a site key stands for; malloc'd strings the table frees. */
struct ai_site_text {
	char *tag;
	char *frames; /* --stacks: one indented line per frame */
	char *folded; /* --stacks: "outer;...;inner" */
};

/* Fills text for key; 0, or a negative errno (nothing kept). */
typedef int (*ai_describe_fn)(void *ctx, __u64 key, struct ai_site_text *text);

struct aitable_config {
	bool stacks;  /* --stacks: rows are not merged by tag, and show frames */
	bool folded;  /* --folded: folded lines instead of the table */
	ai_describe_fn describe;
	void *ctx;
};

struct aitable;

struct aitable *aitable_new(const struct aitable_config *cfg);
void aitable_free(struct aitable *t);

/* A new reading: forget the rows of the last one (sites stay). */
void aitable_begin(struct aitable *t);
/* 0, or a negative errno (out of memory, or the describe callback's). */
int aitable_add(struct aitable *t, __u64 key, long long bytes, long long calls);

/*
 * Prints the reading.  st: what could not be counted (its lines go before
 * the table, or to notes with --folded: folded lines are for tools);
 * misses: events BPF skipped.  0, or a negative errno of the output.
 */
int aitable_print(struct aitable *t, const struct kmt_ai_stats *st, unsigned long long misses,
		  FILE *out, FILE *notes);

/* One merged row of a reading; 0 to go on, else the error to return. */
typedef int (*ai_row_fn)(void *ctx, const char *tag, long long bytes, long long calls);

/* The reading's rows, merged as printed, most bytes first, to fn; then
 * forgets them as aitable_print does.  0, or what fn returned. */
int aitable_visit(struct aitable *t, ai_row_fn fn, void *ctx);

/* Distinct site keys described so far. */
size_t aitable_sites(const struct aitable *t);

/* The two header lines of /proc/allocinfo. */
extern const char allocinfo_header[];

/* One line: "%12lli %8llu <tag> \n". */
size_t allocinfo_format_line(char *buf, size_t size, long long bytes, long long calls,
			     const char *tag);

#endif /* KMEMSNOOP_AITABLE_H */
