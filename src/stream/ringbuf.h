/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Consuming many BPF ring buffers (one per CPU) from one epoll loop. */
#ifndef KMEMSNOOP_RINGBUF_H
#define KMEMSNOOP_RINGBUF_H

#include <stddef.h>

struct ring_reader;

/*
 * Called per record; a negative return stops consumption and is returned.
 * RING_KEPT keeps the record where it is, data valid, until
 * ring_reader_give_back(): the ring's space behind it is not handed back
 * to the kernel before then (a ring full of kept records loses events).
 */
typedef int (*ring_record_fn)(void *ctx, int ring, const void *data, size_t size);
#define RING_KEPT 1

/*
 * The time (CLOCK_MONOTONIC ns) of the oldest record the producers of ring
 * have written but not yet put into it, 0 when there is none: records
 * staged, to be copied into the ring a block at a time.  Read before the
 * ring is, so that a record copied after the read is either seen then or
 * later than the time this gives.
 */
typedef unsigned long long (*ring_pending_fn)(void *ctx, int ring);

/* Maps the rings (BPF_MAP_TYPE_RINGBUF fds, each ring_size bytes); pending
 * may be NULL (nothing is written anywhere else first).  NULL with errno
 * on failure. */
struct ring_reader *ring_reader_new(const int *fds, int nrings, size_t ring_size,
				    ring_record_fn fn, ring_pending_fn pending, void *ctx);
void ring_reader_free(struct ring_reader *rr);

/* A kept record (data as the callback had it) is no longer needed; one
 * not kept, or given back already, is ignored. */
void ring_reader_give_back(struct ring_reader *rr, int ring, const void *data);

/* Waits up to timeout_ms for a wakeup, then consumes every ring: producers
 * only wake the reader past a fill threshold.  Records consumed, or -errno. */
int ring_reader_poll(struct ring_reader *rr, int timeout_ms);
/* The wait alone: 0, or -errno. */
int ring_reader_wait(struct ring_reader *rr, int timeout_ms);
int ring_reader_consume(struct ring_reader *rr);

/*
 * CLOCK_MONOTONIC ns up to which every ring has been read: each ring's
 * last consume that reached its producer position (an empty ring's too,
 * so an idle CPU does not hold the others back) started after it.  A
 * consume that stopped at a record still being written (BUSY), however
 * long ago it was reserved, leaves its ring's time where it was: its
 * writer takes the time after the reservation, so the record may be older
 * than the consume.  Nor past the pending time of a ring (ring_pending_fn).
 * 0 until every ring has been read once.
 */
unsigned long long ring_reader_read_until(const struct ring_reader *rr);

#endif
