/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Putting the records of several rings back in time order: records are
 * held, where their lender has them or copied as the ring gave them, keyed
 * by (timestamp, arrival), until the reader says that no earlier one can
 * still come, then handed on in that order.  Memory is bounded: past cap
 * records held, the oldest goes out early.
 */
#ifndef KMEMSNOOP_REORDER_H
#define KMEMSNOOP_REORDER_H

#include <stddef.h>

struct reorder;

/*
 * What the clocks of the CPUs, and the BPF programs' against user space's,
 * may differ by: records that recent are held one more round.  A record
 * still being written when its ring was read holds its ring's time back
 * itself (ring_reader_read_until()).
 */
#define REORDER_MARGIN_NS 1000000ULL /* 1 ms */
/* Records held at most: 24 bytes each for their keys, and 128 for those
 * copied (resident: only as many as were held at once). */
#define REORDER_CAP 65536
#define REORDER_CAP_MAX (1u << 24)

/* Besides what emit returns (which is neither of these): memory for the
 * record's key ran out; reorder_hold() kept the record where its lender
 * has it. */
#define REORDER_NOMEM (-2)
#define REORDER_KEPT 3

/* Where a record goes on, its bytes valid until the callback returns: its
 * status is what release/push return when nonzero (and the rest is not
 * released then). */
typedef int (*reorder_emit_fn)(void *ctx, const void *data, size_t size, int cpu);

/* Where held records came from, when it lends them rather than let them
 * be copied: give_back is called once each is no longer needed (emitted,
 * or copied because the queue of its ring held more than max_bytes of
 * the lender's, each record counted with an 8-byte header and padding to
 * 8 bytes as in a BPF ring). */
struct reorder_lender {
	void (*give_back)(void *owner, int ring, const void *data);
	void *owner;
	size_t max_bytes;
};

/* For nrings rings (one queue each), 1 <= cap <= REORDER_CAP_MAX.  NULL
 * when out of memory. */
struct reorder *reorder_new(size_t cap, int nrings, reorder_emit_fn emit, void *ctx);
/* Drops what is still held. */
void reorder_free(struct reorder *r);

/* Holds a copy of the size bytes at data, of time ts, read from ring
 * (0..nrings-1; the emit callback gets it back as cpu).  At cap records
 * held, emits the oldest to make room. */
int reorder_push(struct reorder *r, int ring, const void *data, size_t size,
		 unsigned long long ts);

/*
 * As reorder_push, but the record stays where it is, given back through
 * the lender once no longer needed: emitted, or copied out (at once, when
 * it is emitted to make room).  REORDER_KEPT: held so.  Without a lender,
 * or for a ring without a queue, it is copied: reorder_push's status.  On
 * any other status it was not kept: REORDER_NOMEM, or an emit's status
 * with the record copied.
 */
int reorder_hold(struct reorder *r, int ring, const void *data, size_t size,
		 unsigned long long ts);
/* The lender of reorder_hold()'s records, read at each use: *lender must
 * live as long as r. */
void reorder_set_lender(struct reorder *r, const struct reorder_lender *lender);

/* Emits, in time order, the records older than until. */
int reorder_release_until(struct reorder *r, unsigned long long until);
/* Every ring has been read past read_ns: what is older than the margin. */
int reorder_sync(struct reorder *r, unsigned long long read_ns);
/* Emits all of them (at the end). */
int reorder_flush(struct reorder *r);

size_t reorder_held(const struct reorder *r);

#endif
