/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where stream records go: ftrace-style text (text.c) or a kmemtrace
 * directory (binout.c).  The live stream (stream.c) and the reader of
 * recordings (binin.c, -i) feed the same interface.
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
	void (*destroy)(struct sink *sk);
};

struct sink {
	const struct sink_ops *ops;
	char err[512];
	unsigned long long undecodable; /* records a text sink could not decode */
};

#endif /* KMEMSNOOP_SINK_H */
