/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The --hist part of the BPF object for other modes than --hist itself
 * (the exporter): its maps sized before load, and a reader that turns
 * them into intervals (histacc.h) whenever asked.
 */
#ifndef KMEMSNOOP_HIST_H
#define KMEMSNOOP_HIST_H

#include <stddef.h>

#include "histdata.h"

struct env;
struct hist;
struct kmemsnoop_bpf;
struct ksyms;

/* Before load: switches the part on, counting per key the kinds
 * (1 << enum kmt_hist_by) among cache, callsite and comm. */
void hist_setup_maps(struct kmemsnoop_bpf *skel, const struct env *env, int ncpus,
		     unsigned int kinds);

/* After load; NULL with a reason in err. */
struct hist *hist_reader_new(const struct env *env, struct kmemsnoop_bpf *skel, int ncpus,
			     struct ksyms *ksyms, unsigned int kinds, char *err, size_t err_size);
void hist_reader_free(struct hist *h);

/*
 * What was counted since the last reading (the first: since load); the
 * interval belongs to the reader until the next call.  missed: the
 * running count of events the kernel skipped.  NULL with a reason in err.
 */
const struct hist_interval *hist_read(struct hist *h, unsigned long long missed, char *err,
				      size_t err_size);

#endif /* KMEMSNOOP_HIST_H */
