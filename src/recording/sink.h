/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where stream records go: ftrace-style text (text.c) or JSON (json.c),
 * live behind the time order of ordersink.c, a kmemtrace directory
 * (binout.c), or the --stat tables (statsink.c).  The live stream
 * (stream.c) and the reader of recordings (binin.c, -i) feed the same
 * interface.
 */
#ifndef KMEMSNOOP_SINK_H
#define KMEMSNOOP_SINK_H

#include <stddef.h>
#include <stdint.h>

#include "reorder.h"

struct kmt_event;
struct sink;

/* Besides 0 and -1 (the reason in sink->err). */
#define SINK_GONE 1 /* the reader of the output went away (EPIPE) */
/* record() kept data where it is, to give it back through sink->lender. */
#define SINK_HELD 2

struct sink_losses {
	uint64_t events;
	uint64_t bytes;
	uint64_t missed; /* events the kernel skipped (recursion); live only */
};

struct sink_ops {
	/* Before the first record (a header). */
	int (*begin)(struct sink *sk);
	/* One record as written by BPF; ev is its decoding, or NULL when the
	 * caller has not decoded it.  With a lender, a sink that holds
	 * records may keep data (SINK_HELD) instead of copying it. */
	int (*record)(struct sink *sk, int cpu, const void *data, size_t size,
		      const struct kmt_event *ev);
	/* After the last: flush, and what was lost on the way. */
	int (*end)(struct sink *sk, const struct sink_losses *lost);
	/*
	 * Optional, for a sink that orders or aggregates.  sync: every ring
	 * has been read past before_ns (CLOCK_MONOTONIC): every record that
	 * happened before it has been given to record() (less reorder.h's
	 * margin for the clocks): the rings are read one after the other, so
	 * records arrive in time order only up to such a point.  report:
	 * print what has been aggregated so far, with what was lost so far.
	 */
	int (*sync)(struct sink *sk, unsigned long long before_ns);
	int (*report)(struct sink *sk, const struct sink_losses *lost);
	/*
	 * Optional: can the output still be written where it should go?
	 * Called about once a second while tracing (never per record); -1,
	 * the reason in err, ends the trace.
	 */
	int (*check)(struct sink *sk);
	void (*destroy)(struct sink *sk);
};

struct sink {
	const struct sink_ops *ops;
	char err[512];
	unsigned long long undecodable; /* records a text sink could not decode */
	unsigned long long out_of_order; /* events given on after a later one (kmt_order_note) */
	/* Set by the caller when it can lend records (give_back NULL: it
	 * cannot), before begin(). */
	struct reorder_lender lender;
};

#endif /* KMEMSNOOP_SINK_H */
