/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --listen: what the Prometheus endpoint serves, without BPF or HTTP.
 * Readings of the --hist maps (intervals, histacc.h) add up into counters
 * that only grow; the --allocinfo table and the loss counters are set as
 * they are read; metrics_render() writes the Prometheus text exposition
 * format or OpenMetrics.  The tests feed it by hand.
 *
 * The per-key series (caches, call sites, comms, cgroups) are bounded:
 * the `top` busiest keys of late have a series each, the others are summed
 * under "other", and no counter ever goes down (topkeys.h).
 */
#ifndef KMEMSNOOP_METRICS_H
#define KMEMSNOOP_METRICS_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "bpf/kmemsnoop.h"
#include "hist/histdata.h"

struct metrics;

struct metrics_config {
	int top;               /* keys per table (and call sites of the outstanding table) */
	const char *version;   /* kmemsnoop_build_info's */
	enum kmt_hist_value value; /* what the size histograms count */
	/* The --hist and --allocinfo counts are read: false beside --flight,
	 * which serves its own counts and what was missed only. */
	bool counts;
};

struct metrics *metrics_new(const struct metrics_config *cfg);
void metrics_free(struct metrics *m);

/* One reading of the --hist maps; missed_total: the running count of
 * events the kernel skipped. 0, or -ENOMEM. */
int metrics_add_interval(struct metrics *m, const struct hist_interval *iv);
void metrics_set_missed(struct metrics *m, __u64 missed_total);

/* The outstanding table, read afresh: begin, rows most bytes first, end. */
void metrics_outstanding_begin(struct metrics *m);
int metrics_outstanding_row(struct metrics *m, const char *tag, long long bytes, long long calls);
void metrics_outstanding_end(struct metrics *m, const struct kmt_ai_stats *st);

/* --flight beside --listen: its triggers by kind (enum kmt_trigger) and
 * its dumps, set as they are read. */
struct metrics_flight {
	__u64 triggers[KMT_TRIGGER_KINDS];
	__u64 dumps, dump_failures;
};
void metrics_set_flight(struct metrics *m, const struct metrics_flight *f);

/* Everything, as Prometheus text (0.0.4) or OpenMetrics 1.0 (with
 * "# EOF"). 0, or a negative errno of the output. */
int metrics_render(const struct metrics *m, FILE *out, bool openmetrics);

/* in without kernel addresses (each a hexadecimal number of 12 digits or
 * more becomes "unknown"), into out (size bytes, NUL-terminated). */
void metrics_hide_addresses(const char *in, char *out, size_t size);

/* The content types of the two formats. */
extern const char metrics_text_type[];
extern const char metrics_openmetrics_type[];

#endif /* KMEMSNOOP_METRICS_H */
