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
 * The records themselves live in a pool of cap slots that never moves;
 * the queues hold 16-byte keys (time, arrival, slot and size), so that
 * merging compares without touching the records.  A slot holds the record
 * as the ring gave it, not its decoding: a batch of a ring held until the
 * next ring has been read is tens of thousands of records, far more than
 * the CPU's caches hold, so the bytes moved per record decide the cost.  A
 * decoded event (struct kmt_event) is four cache lines written at push and
 * read back cold at emit; a record is 40-104 bytes (docs/PERFORMANCE.md).
 * The pool is allocated whole but given memory by the kernel on first
 * touch, and free slots are reused last-freed first, so only as much of it
 * as is held at once is resident.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "reorder.h"

#define QUEUE_MIN 1024 /* keys a queue starts with */

/* Every record kmemsnoop writes fits a slot (docs/ABI.md); a larger one
 * is copied to the heap, the slot holding where. */
#define SLOT_BYTES 128
#define SLOT_INDEX_BITS 24 /* a key's slot: index, then the record's size */
#define SLOT_INDEX_MASK ((1u << SLOT_INDEX_BITS) - 1)
#define SIZE_ON_HEAP 0 /* the size in a key of a record on the heap */
#define PREFETCH_AHEAD 16
#define CACHE_LINE 64

struct slot {
	unsigned char raw[SLOT_BYTES];
};

struct on_heap {
	void *data;
	size_t size;
};

struct key {
	uint64_t ts;
	uint32_t arrival; /* wraps: held records are fewer than 2^31 apart */
	uint32_t slot;    /* index | size << SLOT_INDEX_BITS */
};

/* One ring's records, oldest first: a circular buffer of size keys.  It
 * keeps the size it grew to: 16 bytes per record at most held at once. */
struct queue {
	struct key *keys;
	size_t head, len, size; /* size: a power of two */
};

struct reorder {
	struct slot *slots;
	uint32_t *free; /* a stack of free slot indices */
	size_t cap, nfree, held;
	struct queue *queues;
	int nqueues;
	int *heap; /* the non-empty queues, the one with the oldest head first */
	int *pos;  /* each queue's index in heap, -1 when empty */
	int nheap;
	uint32_t arrivals;
	uint64_t last_ts; /* of the last record emitted */
	unsigned long long out_of_order;
	reorder_emit_fn emit;
	void *ctx;
};

struct reorder *reorder_new(size_t cap, int nrings, reorder_emit_fn emit, void *ctx)
{
	struct reorder *r = calloc(1, sizeof(*r));

	if (!r || !cap || cap > SLOT_INDEX_MASK || nrings < 1) {
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
	/* Slot 0 on top: the low slots are the ones used over and over. */
	for (size_t i = 0; i < cap; i++)
		r->free[i] = (uint32_t)(cap - 1 - i);
	for (int i = 0; i < nrings; i++)
		r->pos[i] = -1;
	r->nfree = cap;
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

		/* Records still held on the heap. */
		for (size_t k = 0; k < q->len; k++) {
			uint32_t slot = key_at(q, k)->slot;
			struct on_heap big;

			if (slot >> SLOT_INDEX_BITS != SIZE_ON_HEAP)
				continue;
			memcpy(&big, r->slots[slot & SLOT_INDEX_MASK].raw, sizeof(big));
			free(big.data);
		}
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

/* Puts k in its place in q, from the tail; 1 when that is the head. */
static int insert(struct queue *q, const struct key *k)
{
	size_t i = q->len++;

	while (i && before(k, key_at(q, i - 1))) {
		*key_at(q, i) = *key_at(q, i - 1);
		i--;
	}
	*key_at(q, i) = *k;
	return i == 0;
}

/* Takes the oldest record off its queue and gives it to emit (none:
 * dropped), the slot freed first: it is not overwritten before the next
 * push. */
static int emit_oldest_to(struct reorder *r, reorder_emit_fn emit)
{
	int qi = r->heap[0];
	struct queue *q = &r->queues[qi];
	uint64_t ts = q->keys[q->head].ts;
	uint32_t slot = q->keys[q->head].slot & SLOT_INDEX_MASK;
	size_t size = q->keys[q->head].slot >> SLOT_INDEX_BITS;
	const void *data = r->slots[slot].raw;
	struct on_heap big = { NULL, 0 };
	int ret = 0;

	/* Held records are read back long after they were written, from memory
	 * rather than cache: ask for one a few turns of this queue ahead. */
	if (q->len > PREFETCH_AHEAD) {
		uint32_t ahead = key_at(q, PREFETCH_AHEAD)->slot;
		const unsigned char *raw = r->slots[ahead & SLOT_INDEX_MASK].raw;

		__builtin_prefetch(raw);
		if ((ahead >> SLOT_INDEX_BITS) > CACHE_LINE)
			__builtin_prefetch(raw + CACHE_LINE);
	}
	q->head = (q->head + 1) & (q->size - 1);
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
	r->free[r->nfree++] = slot;
	if (ts < r->last_ts)
		r->out_of_order++;
	else
		r->last_ts = ts;
	if (size == SIZE_ON_HEAP) {
		memcpy(&big, data, sizeof(big));
		data = big.data;
		size = big.size;
	}
	if (emit)
		ret = emit(r->ctx, data, size, qi);
	free(big.data);
	return ret;
}

static int emit_oldest(struct reorder *r)
{
	return emit_oldest_to(r, r->emit);
}

int reorder_push(struct reorder *r, int ring, const void *data, size_t size,
		 unsigned long long ts)
{
	int qi = ring >= 0 && ring < r->nqueues ? ring : 0;
	struct queue *q = &r->queues[qi];
	uint32_t slot = r->free[r->nfree - 1];
	struct key k = { ts, r->arrivals, slot | (uint32_t)size << SLOT_INDEX_BITS };

	if (q->len == q->size && grow(q))
		return REORDER_NOMEM;
	if (size <= SLOT_BYTES && size != SIZE_ON_HEAP) {
		memcpy(r->slots[slot].raw, data, size);
	} else {
		struct on_heap big = { malloc(size ? size : 1), size };

		if (!big.data)
			return REORDER_NOMEM;
		memcpy(big.data, data, size);
		memcpy(r->slots[slot].raw, &big, sizeof(big));
		k.slot = slot | (uint32_t)SIZE_ON_HEAP << SLOT_INDEX_BITS;
	}
	r->nfree--;
	r->arrivals++;
	r->held++;
	if (insert(q, &k)) {
		if (r->pos[qi] < 0)
			heap_place(r, r->nheap++, qi);
		heap_up(r, r->pos[qi]);
	}
	/* Keep a slot free for the next record. */
	return r->held == r->cap ? emit_oldest(r) : 0;
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

unsigned long long reorder_out_of_order(const struct reorder *r)
{
	return r->out_of_order;
}
