/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --hist: turns readings of the BPF counters (which only grow) into
 * intervals.  A reading is hist_acc_begin(), every CPU's hist_cpu value
 * and every hist_keys entry added, then hist_acc_end(), which gives what
 * was counted since the previous reading.  Keys are merged across CPUs
 * and nesting levels.  No BPF here: the tests feed it by hand.
 */
#ifndef KMEMSNOOP_HISTACC_H
#define KMEMSNOOP_HISTACC_H

#include <stdbool.h>
#include <stddef.h>

#include "histdata.h"

/*
 * Writes a key's label (a cache name, a symbol); false when it cannot be
 * known yet, to be asked again at the next reading.
 */
typedef bool (*hist_label_fn)(void *ctx, const struct kmt_hist_key *key, char *buf, size_t size);

struct hist_acc_config {
	unsigned int kinds;        /* bit (1 << enum kmt_hist_by) per kind of rows to build */
	enum kmt_hist_value value; /* what the buckets count */
	unsigned int page_shift;   /* log2(PAGE_SIZE): page order from bucket */
	hist_label_fn label;
	void *label_ctx;
};

struct hist_acc;

struct hist_acc *hist_acc_new(const struct hist_acc_config *cfg);
void hist_acc_free(struct hist_acc *acc);

void hist_acc_begin(struct hist_acc *acc);
void hist_acc_add_cpu(struct hist_acc *acc, const struct kmt_hist_cpu *cpu);
/* 0, or -ENOMEM. */
int hist_acc_add_key(struct hist_acc *acc, const struct kmt_hist_key *key,
		     const struct kmt_hist_keyed *value);
/*
 * Fills out (all but end and seconds, which the caller knows) with the
 * difference to the previous reading; missed_total is the running count
 * of events the kernel skipped.  out's row arrays are reused: pass the
 * same interval every time, free it with hist_interval_free().  0 or
 * -ENOMEM.
 */
int hist_acc_end(struct hist_acc *acc, __u64 missed_total, struct hist_interval *out);

#endif /* KMEMSNOOP_HISTACC_H */
