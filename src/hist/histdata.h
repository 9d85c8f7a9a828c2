/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --hist: what one interval counted, as the views (text, live) show it. */
#ifndef KMEMSNOOP_HISTDATA_H
#define KMEMSNOOP_HISTDATA_H

#include <stddef.h>
#include <time.h>
#include <linux/types.h>

#include "bpf/histmaps.h"

#define HIST_LABEL_LEN 64

/* One key's counts in the interval. */
struct hist_row {
	char label[HIST_LABEL_LEN];
	__u64 count;
	__u64 bytes; /* sum of the sizes counted (allocated, or requested with --hist=req) */
	__u64 slots[KMT_HIST_SLOTS];
};

/* The keys of one kind with a count in the interval, busiest first. */
struct hist_rows {
	struct hist_row *row;
	size_t n;
	size_t cap;
};

/* Everything counted in one interval, summed over CPUs. */
struct hist_interval {
	struct timespec end;  /* CLOCK_REALTIME when it was read */
	double seconds;       /* length */
	enum kmt_hist_value value;
	__u64 slots[KMT_HIST_SLOTS]; /* successful allocations, all types */
	__u64 type_slots[KMT_HIST_TYPES][KMT_HIST_SLOTS];
	__u64 allocs[KMT_HIST_TYPES];
	__u64 bytes_alloc[KMT_HIST_TYPES];
	__u64 bytes_req[KMT_HIST_TYPES];
	__u64 failed[KMT_HIST_TYPES];
	__u64 frees[KMT_HIST_TYPES];
	__u64 untracked[KMT_BY_COUNT]; /* allocations whose key found the table full */
	__u64 missed;                  /* events the kernel did not run the programs for */
	struct hist_rows by[KMT_BY_COUNT]; /* kinds asked for; the others empty */
};

/* Sums over the types. */
__u64 hist_total(const __u64 per_type[KMT_HIST_TYPES]);

void hist_interval_free(struct hist_interval *iv);

#endif /* KMEMSNOOP_HISTDATA_H */
