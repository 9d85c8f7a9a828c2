// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Each ring is in time order already (nearly: an interrupt's record can be
 * reserved inside another's and take its time first), so records are kept
 * per ring in a queue sorted by insertion from its tail, which is almost
 * always a single comparison, and the queues are merged by their heads
 * through a small heap of the non-empty ones.  One global heap of all the
 * records did the same with log2(held) unpredictable comparisons per
 * record, three times the cost (docs/PERFORMANCE.md).
 *
 * A record is held where it already is when its owner lends it (the live
 * rings: reorder_hold()), and given back once emitted: a batch of a ring
 * held until the next ring has been read is tens of thousands of records,
 * far more than the CPU's caches hold, so the bytes moved per record decide
 * the cost, and a copy is written once and read back cold
 * (docs/PERFORMANCE.md).  A queue that holds more of its lender's bytes
 * than the lender allows copies its oldest out, so the ring can take new
 * records.  Other records are copied into a pool of cap slots that never
 * moves, allocated whole but given memory by the kernel on first touch;
 * free slots are reused last-freed first, so only as much of it as is held
 * at once is resident.  The queues hold keys (time, arrival, size and
 * where), so that merging compares without touching the records.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"

#define QUEUE_MIN 1024 /* keys a queue starts with */

/* Every record kmemsnoop writes fits a slot (docs/ABI.md); a larger one
 * is copied to the heap. */
#define SLOT_BYTES 128
#define RECORD_MAX ((1u << 24) - 1) /* a key's size */
#define PREFETCH_AHEAD 16
#define CACHE_LINE 64

/* Where a held record is: a key's where field. */
enum where {
	IN_SLOT,  /* copied into the pool */
	ON_HEAP,  /* copied to the heap */
	BORROWED, /* where its lender has it */
};

struct slot {
	unsigned char raw[SLOT_BYTES];
};

struct key {
	uint64_t ts;
	uint32_t arrival; /* wraps: held records are fewer than 2^31 apart */
	uint32_t size : 24;
	uint32_t where : 8;
	const unsigned char *data;
};

/* One ring's records, oldest first: a circular buffer of size keys.  It
 * keeps the size it grew to: 24 bytes per record at most held at once. */
struct queue {
	struct key *keys;
	size_t head, len, size; /* size: a power of two */
	size_t lent;            /* bytes of its lender's held */
	size_t settled;         /* keys at the head, none of them borrowed */
};

struct reorder {
	struct slot *slots;
	uint32_t *free; /* a stack of free slot indices */
	size_t cap, nfree, held;
	size_t fresh; /* slots from here on were never used: free, not listed */
	struct queue *queues;
	int nqueues;
	int *heap; /* the non-empty queues, the one with the oldest head first */
	int *pos;  /* each queue's index in heap, -1 when empty */
	int nheap;
	uint32_t arrivals;
	reorder_emit_fn emit;
	void *ctx;
	const struct reorder_lender *lender;
};

struct reorder *reorder_new(size_t cap, int nrings, reorder_emit_fn emit, void *ctx)
{
	struct reorder *r = calloc(1, sizeof(*r));

	if (!r || !cap || cap > REORDER_CAP_MAX || nrings < 1) {
		free(r);
		return NULL;
	}
	/* Aligned, a record of up to 64 bytes is one cache line. */
	r->slots = aligned_alloc(CACHE_LINE, cap * sizeof(*r->slots));
	r->free = malloc(cap * sizeof(*r->free));
	r->queues = calloc(nrings, sizeof(*r->queues));
	r->heap = malloc(nrings * sizeof(*r->heap));
	r->pos = malloc(nrings * sizeof(*r->pos));
	r->nqueues = nrings;
	if (!r->slots || !r->free || !r->queues || !r->heap || !r->pos) {
		reorder_free(r);
		return NULL;
	}
	/* The free list starts empty, the slots taken in order after it: a
	 * cap as large as the rings hold costs no memory until it is used. */
	for (int i = 0; i < nrings; i++)
		r->pos[i] = -1;
	r->cap = cap;
	r->emit = emit;
	r->ctx = ctx;
	return r;
}

static inline int before(const struct key *a, const struct key *b)
{
	if (a->ts != b->ts)
		return a->ts < b->ts;
	return (int32_t)(a->arrival - b->arrival) < 0;
}

static inline struct key *key_at(const struct queue *q, size_t i)
{
	return &q->keys[(q->head + i) & (q->size - 1)];
}

void reorder_free(struct reorder *r)
{
	if (!r)
		return;

	for (int i = 0; r->queues && i < r->nqueues; i++) {
		struct queue *q = &r->queues[i];

		/* Records still held on the heap; borrowed ones go with their
		 * lender. */
		for (size_t k = 0; k < q->len; k++)
			if (key_at(q, k)->where == ON_HEAP)
				free((void *)key_at(q, k)->data);
		free(q->keys);
	}
	free(r->queues);
	free(r->heap);
	free(r->pos);
	free(r->slots);
	free(r->free);
	free(r);
}

/* --- the heap of queues, by their heads ----------------------------------- */

static inline int head_before(const struct reorder *r, int a, int b)
{
	const struct queue *qa = &r->queues[a], *qb = &r->queues[b];

	return before(&qa->keys[qa->head], &qb->keys[qb->head]);
}

static void heap_place(struct reorder *r, int i, int q)
{
	r->heap[i] = q;
	r->pos[q] = i;
}

static void heap_up(struct reorder *r, int i)
{
	int q = r->heap[i];

	while (i) {
		int parent = (i - 1) / 2;

		if (!head_before(r, q, r->heap[parent]))
			break;
		heap_place(r, i, r->heap[parent]);
		i = parent;
	}
	heap_place(r, i, q);
}

static void heap_down(struct reorder *r, int i)
{
	int q = r->heap[i];

	for (;;) {
		int c = 2 * i + 1;

		if (c >= r->nheap)
			break;
		if (c + 1 < r->nheap && head_before(r, r->heap[c + 1], r->heap[c]))
			c++;
		if (!head_before(r, r->heap[c], q))
			break;
		heap_place(r, i, r->heap[c]);
		i = c;
	}
	heap_place(r, i, q);
}

/* --- the queues -------------------------------------------------------- */

/* Doubles q, the keys unwrapped to start at 0.  -1 when out of memory. */
static int grow(struct queue *q)
{
	size_t size = q->size ? q->size * 2 : QUEUE_MIN;
	struct key *keys = malloc(size * sizeof(*keys));

	if (!keys)
		return -1;
	for (size_t i = 0; i < q->len; i++)
		keys[i] = *key_at(q, i);
	free(q->keys);
	q->keys = keys;
	q->size = size;
	q->head = 0;
	return 0;
}

/* Puts k in its place in q, from the tail; where that is. */
static size_t insert(struct queue *q, const struct key *k)
{
	size_t i = q->len++;

	while (i && before(k, key_at(q, i - 1))) {
		*key_at(q, i) = *key_at(q, i - 1);
		i--;
	}
	*key_at(q, i) = *k;
	if (i <= q->settled)
		q->settled = k->where == BORROWED ? i : q->settled + 1;
	return i;
}

/* The bytes a lent record takes where its lender has it: a ring's 8-byte
 * header, and padding to 8 bytes. */
static inline size_t lent_bytes(size_t size)
{
	return (size + 8 + 7) & ~(size_t)7;
}

/* Takes the oldest record off its queue and gives it to emit (none:
 * dropped), then back to its lender or its memory. */
static int emit_oldest_to(struct reorder *r, reorder_emit_fn emit)
{
	int qi = r->heap[0];
	struct queue *q = &r->queues[qi];
	struct key k = q->keys[q->head];
	int ret = 0;

	/* Held records are read back long after they were written, from memory
	 * rather than cache: ask for one a few turns of this queue ahead. */
	if (q->len > PREFETCH_AHEAD) {
		const struct key *ahead = key_at(q, PREFETCH_AHEAD);

		__builtin_prefetch(ahead->data);
		if (ahead->size > CACHE_LINE)
			__builtin_prefetch(ahead->data + CACHE_LINE);
	}
	q->head = (q->head + 1) & (q->size - 1);
	if (q->settled)
		q->settled--;
	if (--q->len) {
		heap_down(r, 0);
	} else {
		r->pos[qi] = -1;
		if (--r->nheap) {
			heap_place(r, 0, r->heap[r->nheap]);
			heap_down(r, 0);
		}
	}
	r->held--;
	/* A slot is not overwritten before the next push. */
	if (k.where == IN_SLOT)
		r->free[r->nfree++] = (uint32_t)((const struct slot *)k.data - r->slots);
	if (emit)
		ret = emit(r->ctx, k.data, k.size, qi);
	if (k.where == ON_HEAP) {
		free((void *)k.data);
	} else if (k.where == BORROWED) {
		q->lent -= lent_bytes(k.size);
		r->lender->give_back(r->lender->owner, qi, k.data);
	}
	return ret;
}

static int emit_oldest(struct reorder *r)
{
	return emit_oldest_to(r, r->emit);
}

/* A copy of the size bytes at data into k; -1 when out of memory. */
static int copy_in(struct reorder *r, struct key *k, const void *data, size_t size)
{
	unsigned char *copy;

	if (size <= SLOT_BYTES) {
		copy = r->slots[r->nfree ? r->free[--r->nfree] : r->fresh++].raw;
		k->where = IN_SLOT;
	} else {
		copy = malloc(size);
		if (!copy)
			return -1;
		k->where = ON_HEAP;
	}
	memcpy(copy, data, size);
	k->data = copy;
	return 0;
}

/* Puts the key in queue qi; at cap records held, emits the oldest to keep
 * a slot free for the next record. */
static int add_key(struct reorder *r, int qi, const struct key *k)
{
	struct queue *q = &r->queues[qi];

	r->arrivals++;
	r->held++;
	if (insert(q, k) == 0) {
		if (r->pos[qi] < 0)
			heap_place(r, r->nheap++, qi);
		heap_up(r, r->pos[qi]);
	}
	return r->held == r->cap ? emit_oldest(r) : 0;
}

static inline int queue_of(const struct reorder *r, int ring)
{
	return ring >= 0 && ring < r->nqueues ? ring : 0;
}

int reorder_push(struct reorder *r, int ring, const void *data, size_t size,
		 unsigned long long ts)
{
	int qi = queue_of(r, ring);
	struct queue *q = &r->queues[qi];
	struct key k = { ts, r->arrivals, (uint32_t)size, IN_SLOT, NULL };

	if (size > RECORD_MAX || (q->len == q->size && grow(q)) || copy_in(r, &k, data, size))
		return REORDER_NOMEM;
	return add_key(r, qi, &k);
}

/* The queue's oldest borrowed records copied and given back, until it
 * holds no more of its lender's bytes than allowed. */
static int copy_out_of_lender(struct reorder *r, int qi)
{
	struct queue *q = &r->queues[qi];

	/* From where the queue has borrowed records. */
	for (; q->settled < q->len && q->lent > r->lender->max_bytes; q->settled++) {
		struct key *k = key_at(q, q->settled);
		const void *lent = k->data;

		if (k->where != BORROWED)
			continue;
		if (copy_in(r, k, lent, k->size))
			return REORDER_NOMEM;
		q->lent -= lent_bytes(k->size);
		r->lender->give_back(r->lender->owner, qi, lent);
	}
	return 0;
}

/* The record just held in queue qi copied, if it is still there and
 * borrowed: after an error the caller does not keep it where it is.  A
 * record too large for a slot that cannot be copied is held empty (it
 * decodes to nothing, counted where emitted). */
static void take_copy(struct reorder *r, int qi, const void *data)
{
	struct queue *q = &r->queues[qi];

	for (size_t i = q->len; i-- > 0;) {
		struct key *k = key_at(q, i);

		if (k->data != data || k->where != BORROWED)
			continue;
		q->lent -= lent_bytes(k->size);
		if (copy_in(r, k, data, k->size)) {
			k->data = NULL;
			k->size = 0;
			k->where = ON_HEAP;
		}
		return;
	}
}

int reorder_hold(struct reorder *r, int ring, const void *data, size_t size,
		 unsigned long long ts)
{
	struct key k = { ts, r->arrivals, (uint32_t)size, BORROWED, data };
	struct queue *q;
	int ret;

	/* Without a lender, or a queue of its own to give it back from: a
	 * copy. */
	if (!r->lender || !r->lender->give_back || ring < 0 || ring >= r->nqueues)
		return reorder_push(r, ring, data, size, ts);
	q = &r->queues[ring];
	if (size > RECORD_MAX || (q->len == q->size && grow(q)))
		return REORDER_NOMEM;
	q->lent += lent_bytes(size);
	ret = add_key(r, ring, &k);
	if (!ret && q->lent > r->lender->max_bytes)
		ret = copy_out_of_lender(r, ring);
	if (!ret)
		return REORDER_KEPT;
	take_copy(r, ring, data);
	return ret;
}

void reorder_set_lender(struct reorder *r, const struct reorder_lender *lender)
{
	r->lender = lender;
}

int reorder_release_until(struct reorder *r, unsigned long long until)
{
	while (r->nheap) {
		const struct queue *q = &r->queues[r->heap[0]];
		int ret;

		if (q->keys[q->head].ts >= until)
			break;
		ret = emit_oldest(r);
		if (ret)
			return ret;
	}
	return 0;
}

int reorder_sync(struct reorder *r, unsigned long long read_ns)
{
	if (read_ns <= REORDER_MARGIN_NS)
		return 0;
	return reorder_release_until(r, read_ns - REORDER_MARGIN_NS);
}

int reorder_flush(struct reorder *r)
{
	while (r->held) {
		int ret = emit_oldest(r);

		if (ret)
			return ret;
	}
	return 0;
}

size_t reorder_held(const struct reorder *r)
{
	return r->held;
}
