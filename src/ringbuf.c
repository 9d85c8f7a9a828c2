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

/* Publish the consumer position at least this often within a batch. */
#define PUBLISH_BYTES (256 * 1024)

struct ring {
	unsigned long *consumer_pos;
	const unsigned long *producer_pos;
	const char *data;
	size_t mask;
	unsigned long long read_until; /* ns: see ring_reader_read_until() */
};

struct ring_reader {
	struct ring *rings;
	int nrings;
	size_t ring_size;
	size_t page_size;
	int epoll_fd;
	struct epoll_event *events;
	ring_record_fn fn;
	void *ctx;
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
	return 0;
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
	}
	if (rr->epoll_fd >= 0)
		close(rr->epoll_fd);
	free(rr->rings);
	free(rr->events);
	free(rr);
}

struct ring_reader *ring_reader_new(const int *fds, int nrings, size_t ring_size,
				    ring_record_fn fn, void *ctx)
{
	struct ring_reader *rr = calloc(1, sizeof(*rr));
	int err = 0;

	if (!rr)
		return NULL;
	rr->epoll_fd = -1;
	rr->page_size = sysconf(_SC_PAGESIZE);
	rr->ring_size = ring_size;
	rr->fn = fn;
	rr->ctx = ctx;
	rr->rings = calloc(nrings, sizeof(*rr->rings));
	rr->events = calloc(nrings, sizeof(*rr->events));
	rr->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (!rr->rings || !rr->events || rr->epoll_fd < 0) {
		err = errno ? -errno : -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < nrings; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		err = map_ring(&rr->rings[i], fds[i], ring_size, rr->page_size);
		if (err)
			goto fail;
		rr->nrings = i + 1;
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

/* Consumes what ring idx holds; sets *drained unless it stopped at its
 * per-call limit with records left. */
static int consume_ring(struct ring_reader *rr, int idx, long *count, bool *drained)
{
	struct ring *r = &rr->rings[idx];
	unsigned long cons = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
	unsigned long prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
	unsigned long published = cons, start = cons;
	int ret = 0;

	/* At most a ring's worth per call, so a busy ring cannot starve others. */
	while (cons < prod && cons - start < rr->ring_size) {
		const char *rec = r->data + (cons & r->mask);
		uint32_t len = __atomic_load_n((const uint32_t *)rec, __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* reserved, not yet submitted: the rest waits */
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			ret = rr->fn(rr->ctx, idx, rec + BPF_RINGBUF_HDR_SZ, len);
			(*count)++;
		}
		cons += ((len & ~BPF_RINGBUF_DISCARD_BIT) + BPF_RINGBUF_HDR_SZ + 7) & ~7UL;
		if (ret < 0)
			break;
		if (cons - published >= PUBLISH_BYTES) {
			__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
			published = cons;
		}
		if (cons >= prod)
			prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
	}
	__atomic_store_n(r->consumer_pos, cons, __ATOMIC_RELEASE);
	*drained = cons >= prod || cons - start < rr->ring_size;
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

	for (int i = 0; i < rr->nrings; i++) {
		bool drained = false;
		int ret = consume_ring(rr, i, &count, &drained);

		if (ret < 0)
			return ret;
		if (drained)
			rr->rings[i].read_until = now;
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

int ring_reader_poll(struct ring_reader *rr, int timeout_ms)
{
	int n = epoll_wait(rr->epoll_fd, rr->events, rr->nrings, timeout_ms);

	if (n < 0 && errno != EINTR)
		return -errno;
	return ring_reader_consume(rr);
}
