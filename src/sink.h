/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where stream records go: ftrace-style text (text.c), a kmemtrace
 * directory (binout.c), or the --stat tables (statsink.c).  The live
 * stream (stream.c) and the reader of recordings (binin.c, -i) feed the
 * same interface.
 */
#ifndef KMEMSNOOP_SINK_H
#define KMEMSNOOP_SINK_H

#include <stddef.h>
#include <stdint.h>

struct kmt_event;
struct sink;

/* Besides 0 and -1 (the reason in sink->err). */
#define SINK_GONE 1 /* the reader of the output went away (EPIPE) */

struct sink_losses {
	uint64_t events;
	uint64_t bytes;
};

struct sink_ops {
	/* Before the first record (a header). */
	int (*begin)(struct sink *sk);
	/* One record as written by BPF; ev is its decoding, or NULL when the
	 * caller has not decoded it. */
	int (*record)(struct sink *sk, int cpu, const void *data, size_t size,
		      const struct kmt_event *ev);
	/* After the last: flush, and what was lost on the way. */
	int (*end)(struct sink *sk, const struct sink_losses *lost);
	/*
	 * Optional, for a sink that aggregates.  sync: every record of every
	 * CPU that happened before before_ns (CLOCK_MONOTONIC) has been given
	 * to record(): the rings are read one after the other, so records
	 * arrive in time order only up to such a point.  report: print what
	 * has been aggregated so far, with what was lost so far.
	 */
	int (*sync)(struct sink *sk, unsigned long long before_ns);
	int (*report)(struct sink *sk, const struct sink_losses *lost);
	void (*destroy)(struct sink *sk);
};

struct sink {
	const struct sink_ops *ops;
	char err[512];
	unsigned long long undecodable; /* records a text sink could not decode */
};

#endif /* KMEMSNOOP_SINK_H */
