/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --hist: numbers and labels as both views (text and live) print them. */
#ifndef KMEMSNOOP_HISTFMT_H
#define KMEMSNOOP_HISTFMT_H

#include <stddef.h>
#include <linux/types.h>

#include "bpf/histmaps.h"

/* Smallest and largest size bucket slot holds (slot 0: 0 and 1). */
__u64 hist_bucket_low(int slot);
__u64 hist_bucket_high(int slot);

/* Last slot with a nonzero count, -1 when all are zero. */
int hist_last_slot(const __u64 slots[KMT_HIST_SLOTS]);
__u64 hist_max(const __u64 *vals, int n);

/*
 * width characters: '*' for val's share of max, spaces after, and a
 * NUL; buf holds width + 1.
 */
void hist_bar(char *buf, int width, __u64 val, __u64 max);

/* 1536 -> "1.5K", 3 -> "3", binary units; buf of 8 is enough. */
void hist_human(char *buf, size_t size, double v);

/* 2^exp as "512", "1K", "64M"; exp -1 gives "0". */
void hist_pow2(char *buf, size_t size, int exp);

/*
 * The label of a hist_keys id with no kernel object behind it
 * (KMT_HIST_PSEUDO): "(kmalloc 256)", "(pages order 2)", "(cache size 192)".
 */
void hist_pseudo_label(char *buf, size_t size, __u64 id, unsigned int page_shift);

/* A comm from its two key words, non-printing characters as '?'. */
void hist_comm_label(char *buf, size_t size, __u64 id, __u64 id2);

/*
 * A histogram key (--hist-by), and every name it goes by: the one table
 * that the option, the text, the live view, JSON and the metrics' labels
 * name keys from.
 */
struct hist_key {
	const char *name;   /* --hist-by's value, JSON's "by", the metrics' label */
	const char *title;  /* what a row is called in text: "call site" */
	const char *titles; /* and many of them: "call sites" */
};

extern const struct hist_key hist_keys[KMT_BY_COUNT];

/* What a kind's rows are called: "cache", "caches"; "call site", ... */
const char *hist_kind_name(enum kmt_hist_by kind, int plural);

/*
 * Heat map shading: 0 for no count, else 1..levels on a log scale up to
 * max (so that a bucket with a few allocations still shows).
 */
int hist_shade(__u64 count, __u64 max, int levels);

#endif /* KMEMSNOOP_HISTFMT_H */
