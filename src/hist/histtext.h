/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --hist as plain text, one block per interval: a line of totals, then
 * log2 histograms in the libbpf-tools style.
 */
#ifndef KMEMSNOOP_HISTTEXT_H
#define KMEMSNOOP_HISTTEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "histdata.h"

struct hist_text_opts {
	enum kmt_hist_by by; /* KMT_BY_NONE: one histogram of everything */
	int top;             /* keys shown with by */
	bool keyed;          /* untracked= is meaningful (keys counted in BPF) */
};

/*
 *      bytes               : count    distribution
 *         0 -> 1          : 0        |                                        |
 * from bucket 0 to the last nonzero one; nothing when all are zero.
 */
void hist_print_log2(FILE *out, const __u64 slots[KMT_HIST_SLOTS], const char *unit);

/* One interval; 0, or -errno when writing failed. */
int hist_text_print(FILE *out, const struct hist_interval *iv, const struct hist_text_opts *opts);

#endif /* KMEMSNOOP_HISTTEXT_H */
