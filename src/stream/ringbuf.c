// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A BPF ring buffer consumer.  libbpf's publishes the consumer position
 * after every record; each publish pulls that cache line away from the
 * producing CPU, whose next bpf_ringbuf_reserve() then misses on it.  Here
 * the position is published once per batch, which makes the producer's
 * per-event cost noticeably lower (docs/PERFORMANCE.md).
 *
 * Layout of a ring map's mmap (kernel/bpf/ringbuf.c): page 0 consumer
 * position (read-write), page 1 producer position, then the data area
 * mapped twice so records never wrap.  Each record has an 8-byte header
 * whose first word is the length with BUSY and DISCARD bits.
 *
 * A record the callback keeps stays in the ring: the consumer position
 * stops at the first one kept (a bit per 8-byte unit of the ring says
 * which), the reading goes on past it, and giving it back moves the
 * position over every record behind it that is not kept.  The time
 * order's merge reads held records where the producer wrote them instead
 * of copying each one out and reading the copy back (docs/PERFORMANCE.md).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>

#include "ringbuf.h"

/* Publish the consumer position at least this often (bytes moved over),
 * and at least every sixteenth of a ring. */
#define PUBLISH_BYTES (256 * 1024)

struct ring {
	unsigned long *consumer_pos;
	const unsigned long *producer_pos;
	const char *data;
	size_t mask;
	unsigned long long read_until; /* ns: see ring_reader_read_until() */
	unsigned long read;      /* the next record to give the callback */
	unsigned long cons;      /* the first record still kept (or read) */
	unsigned long published; /* cons as the kernel last saw it */
	uint64_t *kept;          /* a bit per 8 bytes: a record kept there */
	size_t nkept;
};

struct ring_reader {
	struct ring *rings;
	int nrings;
	size_t ring_size;
	size_t page_size;
	size_t publish_bytes;
	int epoll_fd;
	struct epoll_event *events;
	ring_record_fn fn;
	ring_pending_fn pending;
	void *ctx;
	bool undrained; /* the last consume left records in a ring */
};

static int map_ring(struct ring *r, int fd, size_t ring_size, size_t page_size)
{
	void *cons, *prod;

	cons = mmap(NULL, page_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, page_size + 2 * ring_size, PROT_READ, MAP_SHARED, fd, page_size);
	if (prod == MAP_FAILED) {
		int err = -errno;

		munmap(cons, page_size);
		return err;
	}
	r->consumer_pos = cons;
	r->producer_pos = prod;
	r->data = (const char *)prod + page_size;
	r->mask = ring_size - 1;
	r->cons = r->read = r->published = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
	r->kept = calloc(ring_size / 8 / 64 + 1, sizeof(*r->kept));
	return r->kept ? 0 : -ENOMEM;
}

void ring_reader_free(struct ring_reader *rr)
{
	if (!rr)
		return;
	for (int i = 0; i < rr->nrings; i++) {
		if (rr->rings[i].consumer_pos)
			munmap(rr->rings[i].consumer_pos, rr->page_size);
		if (rr->rings[i].producer_pos)
			munmap((void *)rr->rings[i].producer_pos, rr->page_size + 2 * rr->ring_size);
		free(rr->rings[i].kept);
	}
	if (rr->epoll_fd >= 0)
		close(rr->epoll_fd);
	free(rr->rings);
	free(rr->events);
	free(rr);
}

struct ring_reader *ring_reader_new(const int *fds, int nrings, size_t ring_size,
				    ring_record_fn fn, ring_pending_fn pending, void *ctx)
{
	struct ring_reader *rr = calloc(1, sizeof(*rr));
	int err = 0;

	if (!rr)
		return NULL;
	rr->epoll_fd = -1;
	rr->page_size = sysconf(_SC_PAGESIZE);
	rr->ring_size = ring_size;
	rr->publish_bytes = ring_size / 16 < PUBLISH_BYTES ? ring_size / 16 : PUBLISH_BYTES;
	rr->fn = fn;
	rr->pending = pending;
	rr->ctx = ctx;
	rr->rings = calloc(nrings, sizeof(*rr->rings));
	rr->events = calloc(nrings, sizeof(*rr->events));
	rr->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (!rr->rings || !rr->events || rr->epoll_fd < 0) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < nrings; i++) {
		/* Edge-triggered: the kernel calls a ring readable whenever the
		 * consumer position is behind the producer's, which it always
		 * is while records are kept; only the producers' wakeups count. */
		struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.u32 = i };

		err = map_ring(&rr->rings[i], fds[i], ring_size, rr->page_size);
		rr->nrings = i + 1;
		if (err)
			goto fail;
		if (epoll_ctl(rr->epoll_fd, EPOLL_CTL_ADD, fds[i], &ev)) {
			err = -errno;
			goto fail;
		}
	}
	return rr;
fail:
	ring_reader_free(rr);
	errno = -err;
	return NULL;
}

/* Bytes a record takes in the ring, header and padding included. */
static inline unsigned long record_span(uint32_t len)
{
	return ((len & ~BPF_RINGBUF_DISCARD_BIT) + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
}

static inline bool is_kept(const struct ring *r, size_t off)
{
	return r->kept[off / 8 / 64] & 1ULL << (off / 8 % 64);
}

static inline void keep(struct ring *r, size_t off)
{
	r->kept[off / 8 / 64] |= 1ULL << (off / 8 % 64);
	r->nkept++;
}

/* False when the record at off was not kept. */
static inline bool unkeep(struct ring *r, size_t off)
{
	if (!is_kept(r, off))
		return false;
	r->kept[off / 8 / 64] &= ~(1ULL << (off / 8 % 64));
	r->nkept--;
	return true;
}

static void publish(struct ring *r)
{
	if (r->cons == r->published)
		return;
	__atomic_store_n(r->consumer_pos, r->cons, __ATOMIC_RELEASE);
	r->published = r->cons;
}

/* The kernel sees the space given back now and then, not per record: each
 * store pulls the position's cache line away from the producing CPU. */
static inline void publish_now_and_then(struct ring *r, size_t every)
{
	if (r->cons - r->published >= every)
		publish(r);
}

/* The consumer position over every record behind it that is not kept. */
static void advance(struct ring *r)
{
	if (!r->nkept) {
		r->cons = r->read;
		return;
	}
	while (r->cons < r->read) {
		size_t off = r->cons & r->mask;

		if (is_kept(r, off))
			break;
		r->cons += record_span(*(const uint32_t *)(r->data + off));
	}
}

/* Gives the callback the record at off, kept from the start: the callback
 * may give it back before it returns (printed at once to make room). */
static int hand_over(struct ring_reader *rr, int idx, size_t off, uint32_t len)
{
	struct ring *r = &rr->rings[idx];
	int ret;

	keep(r, off);
	ret = rr->fn(rr->ctx, idx, r->data + off + BPF_RINGBUF_HDR_SZ, len);
	if (ret != RING_KEPT)
		unkeep(r, off);
	return ret < 0 ? ret : 0;
}

void ring_reader_give_back(struct ring_reader *rr, int ring, const void *data)
{
	struct ring *r;
	size_t off;

	if (ring < 0 || ring >= rr->nrings)
		return;
	r = &rr->rings[ring];
	off = (size_t)((const char *)data - BPF_RINGBUF_HDR_SZ - r->data);
	if (off >= rr->ring_size || off % 8 || !unkeep(r, off))
		return;
	if (!r->nkept || off == (r->cons & r->mask)) {
		advance(r);
		publish_now_and_then(r, rr->publish_bytes);
	}
}

/* How a consume of a ring ended. */
enum ring_end {
	RING_AT_PRODUCER, /* read up to the producer position */
	RING_AT_BUSY,     /* stopped at a record still being written */
	RING_AT_LIMIT,    /* stopped at the per-call limit, records left */
};

/* Consumes what ring idx holds, and says where it stopped. */
static int consume_ring(struct ring_reader *rr, int idx, long *count, enum ring_end *end)
{
	struct ring *r = &rr->rings[idx];
	unsigned long prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
	unsigned long start = r->read;
	int ret = 0;

	/* At most a ring's worth per call, so a busy ring cannot starve others. */
	*end = RING_AT_PRODUCER;
	while (r->read < prod && r->read - start < rr->ring_size) {
		size_t off = r->read & r->mask;
		uint32_t len = __atomic_load_n((const uint32_t *)(r->data + off), __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT) {
			*end = RING_AT_BUSY; /* reserved, not yet submitted: the rest waits */
			break;
		}
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			ret = hand_over(rr, idx, off, len);
			(*count)++;
		}
		r->read += record_span(len);
		if (ret < 0)
			break;
		if (!r->nkept) {
			r->cons = r->read;
			publish_now_and_then(r, rr->publish_bytes);
		}
		if (r->read >= prod)
			prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
	}
	advance(r);
	publish(r);
	if (r->read < prod && *end == RING_AT_PRODUCER && r->read - start >= rr->ring_size)
		*end = RING_AT_LIMIT;
	return ret;
}

/* The clock of the records' timestamps (bpf_ktime_get_ns). */
static unsigned long long monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int ring_reader_consume(struct ring_reader *rr)
{
	/* Every producer position is read after this: a ring read to its
	 * end (empty ones too) holds nothing reserved before it. */
	unsigned long long now = monotonic_ns();
	long count = 0;

	rr->undrained = false;
	for (int i = 0; i < rr->nrings; i++) {
		unsigned long long pending = rr->pending ? rr->pending(rr->ctx, i) : 0;
		enum ring_end end;
		int ret = consume_ring(rr, i, &count, &end);

		if (ret < 0)
			return ret;
		/* A record is timed after its reservation: one reserved after
		 * now has a later time, and every one reserved before it has
		 * been read, unless the read stopped at one still being
		 * written, whose time may be earlier than now, or one is
		 * still pending. */
		if (end == RING_AT_PRODUCER)
			rr->rings[i].read_until = pending && pending < now ? pending : now;
		else if (end == RING_AT_LIMIT)
			rr->undrained = true;
	}
	return count > INT32_MAX ? INT32_MAX : (int)count;
}

unsigned long long ring_reader_read_until(const struct ring_reader *rr)
{
	unsigned long long until = ~0ULL;

	for (int i = 0; i < rr->nrings; i++)
		if (rr->rings[i].read_until < until)
			until = rr->rings[i].read_until;
	return rr->nrings ? until : 0;
}

int ring_reader_wait(struct ring_reader *rr, int timeout_ms)
{
	int n;

	/* Before sleeping, the kernel sees all the space given back since
	 * the last consume.  A ring left with records does not wait for a
	 * wakeup: edge-triggered, none may come for them. */
	for (int i = 0; i < rr->nrings; i++)
		publish(&rr->rings[i]);
	n = epoll_wait(rr->epoll_fd, rr->events, rr->nrings, rr->undrained ? 0 : timeout_ms);
	return n < 0 && errno != EINTR ? -errno : 0;
}

int ring_reader_poll(struct ring_reader *rr, int timeout_ms)
{
	int ret = ring_reader_wait(rr, timeout_ms);

	return ret < 0 ? ret : ring_reader_consume(rr);
}
