// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The reorder window (reorder.c): records pushed out of order come out in
 * time order, equal times in the order they came; release stops at its
 * time, sync keeps the margin; past the cap the oldest goes out early and
 * what then comes out before an earlier one is counted; an emit error
 * stops a release; records larger than a slot come back whole; records
 * held where their lender has them come out whole and go back to it once
 * each, after they were emitted or copied; and two "rings" read in turn,
 * synced as the stream syncs, give one ordered stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recording/reorder.h"
#include "unit.h"

void test_reorder(struct unit *u);

#define MAX_OUT 20000

/* What the emit callback saw. */
struct seen {
	unsigned long long ts[MAX_OUT];
	int id[MAX_OUT]; /* the record's seq_num */
	int cpu[MAX_OUT];
	size_t size[MAX_OUT];
	size_t n;
	size_t fail_at; /* emit returns -1 for record number fail_at (0: never) */
};

/* A test record: its time and id, then size - 12 bytes of its id's low
 * byte. */
struct rec {
	unsigned long long ts;
	int id;
	unsigned char fill[500];
};

static int collect(void *ctx, const void *data, size_t size, int cpu)
{
	struct seen *s = ctx;
	struct rec rec;

	if (s->fail_at && s->n + 1 == s->fail_at)
		return -1;
	memcpy(&rec, data, size < sizeof(rec) ? size : sizeof(rec));
	for (size_t i = 12; i < size; i++)
		if (rec.fill[i - 12] != (unsigned char)rec.id)
			rec.id = -1; /* came back altered */
	if (s->n < MAX_OUT) {
		s->ts[s->n] = rec.ts;
		s->id[s->n] = rec.id;
		s->cpu[s->n] = cpu;
		s->size[s->n] = size;
	}
	s->n++;
	return 0;
}

static int push_sized(struct reorder *r, unsigned long long ts, int id, int cpu, size_t size)
{
	struct rec rec = { ts, id, { 0 } };
	unsigned char bytes[sizeof(rec)];

	memset(rec.fill, (unsigned char)id, sizeof(rec.fill));
	memcpy(bytes, &rec, sizeof(bytes));
	return reorder_push(r, cpu, bytes, size, ts);
}

static int push(struct reorder *r, unsigned long long ts, int id, int cpu)
{
	return push_sized(r, ts, id, cpu, 40);
}

/* "1 3 5" of the ids seen (at most 15). */
static const char *ids(const struct seen *s, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < s->n && i < 15 && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%d", i ? " " : "", s->id[i]);
	return buf;
}

static void out_of_order_input(struct unit *u, struct seen *s)
{
	static const unsigned long long ts[] = { 50, 30, 90, 10, 70 };
	struct unit_case c;
	struct reorder *r;
	char buf[128];

	unit_begin(&c, u, "reorder.out_of_order_input");
	memset(s, 0, sizeof(*s));
	r = reorder_new(16, 2, collect, s);
	CHECK(&c, r != NULL);
	if (r) {
		for (int i = 0; i < 5; i++)
			CHECK(&c, push(r, ts[i], (int)ts[i], i % 2) == 0);
		CHECK_U64(&c, reorder_held(r), 5);
		CHECK(&c, reorder_release_until(r, 60) == 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "10 30 50");
		CHECK_U64(&c, s->cpu[0], 1); /* 10 was pushed fourth: cpu 1 */
		CHECK_U64(&c, reorder_held(r), 2);
		/* Until is exclusive. */
		CHECK(&c, reorder_release_until(r, 70) == 0);
		CHECK_U64(&c, s->n, 3);
		CHECK(&c, reorder_flush(r) == 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "10 30 50 70 90");
		CHECK_U64(&c, reorder_held(r), 0);
		reorder_free(r);
	}
	unit_end(&c);
}

static void equal_times(struct unit *u, struct seen *s)
{
	struct unit_case c;
	struct reorder *r;
	char buf[128];

	unit_begin(&c, u, "reorder.equal_times_keep_arrival");
	memset(s, 0, sizeof(*s));
	r = reorder_new(64, 2, collect, s);
	CHECK(&c, r != NULL);
	if (r) {
		/* Enough that the heap reorders them if arrival were not a key. */
		for (int i = 1; i <= 12; i++)
			push(r, i % 3 ? 100 : 50, i, 0);
		reorder_flush(r);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "3 6 9 12 1 2 4 5 7 8 10 11");
		reorder_free(r);
	}
	unit_end(&c);
}

static void sync_margin(struct unit *u, struct seen *s)
{
	const unsigned long long m = REORDER_MARGIN_NS;
	struct unit_case c;
	struct reorder *r;
	char buf[128];

	unit_begin(&c, u, "reorder.sync_margin");
	memset(s, 0, sizeof(*s));
	r = reorder_new(16, 2, collect, s);
	CHECK(&c, r != NULL);
	if (r) {
		push(r, 1000, 1, 0);
		push(r, m + 5000, 2, 1);
		CHECK(&c, reorder_sync(r, m) == 0); /* not yet a margin since boot */
		CHECK_U64(&c, s->n, 0);
		CHECK(&c, reorder_sync(r, m + 2000) == 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "1");
		CHECK(&c, reorder_sync(r, 2 * m + 5000) == 0);
		CHECK_U64(&c, s->n, 1); /* exactly the margin old: held */
		CHECK(&c, reorder_sync(r, 2 * m + 5001) == 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "1 2");
		reorder_free(r);
	}
	unit_end(&c);
}

static void cap(struct unit *u, struct seen *s)
{
	struct unit_case c;
	struct reorder *r;
	char buf[128];

	unit_begin(&c, u, "reorder.cap");
	memset(s, 0, sizeof(*s));
	r = reorder_new(4, 2, collect, s);
	CHECK(&c, r != NULL);
	if (r) {
		push(r, 20, 20, 0);
		push(r, 40, 40, 0);
		push(r, 10, 10, 1);
		CHECK_U64(&c, s->n, 0);
		/* The fourth fills it: the oldest goes, so one slot is free. */
		CHECK(&c, push(r, 30, 30, 1) == 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "10");
		CHECK_U64(&c, reorder_held(r), 3);
		/* Later than what went: it goes first, out of order. */
		push(r, 5, 5, 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "10 5");
		reorder_flush(r);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "10 5 20 30 40");
		reorder_free(r);
	}
	unit_end(&c);
}

/* Records up to a slot's 128 bytes are copied into it, larger ones to the
 * heap: every size comes back whole, in order; one left held is freed. */
static void sizes(struct unit *u, struct seen *s)
{
	static const size_t size[] = { 16, 127, 128, 129, 300, 512 };
	struct unit_case c;
	struct reorder *r;
	char buf[128];

	unit_begin(&c, u, "reorder.record_sizes");
	memset(s, 0, sizeof(*s));
	r = reorder_new(8, 2, collect, s);
	CHECK(&c, r != NULL);
	if (r) {
		for (int i = 5; i >= 0; i--)
			CHECK(&c, push_sized(r, 100 + i, 10 + i, i % 2, size[i]) == 0);
		CHECK(&c, reorder_release_until(r, 200) == 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "10 11 12 13 14 15");
		for (int i = 0; i < 6; i++)
			CHECK_U64(&c, s->size[i], size[i]);
		CHECK_U64(&c, s->cpu[3], 1);
		CHECK(&c, push_sized(r, 300, 20, 0, 400) == 0);
		CHECK_U64(&c, reorder_held(r), 1);
		reorder_free(r); /* the sanitizers' leak check sees it freed */
		CHECK_U64(&c, s->n, 6);
	}
	unit_end(&c);
}

static void emit_error(struct unit *u, struct seen *s)
{
	struct unit_case c;
	struct reorder *r;
	char buf[128];

	unit_begin(&c, u, "reorder.emit_error_stops");
	memset(s, 0, sizeof(*s));
	s->fail_at = 2;
	r = reorder_new(8, 2, collect, s);
	CHECK(&c, r != NULL);
	if (r) {
		for (int i = 1; i <= 4; i++)
			push(r, i, i, 0);
		CHECK(&c, reorder_flush(r) == -1);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "1");
		CHECK_U64(&c, reorder_held(r), 2); /* the failed one is gone */
		s->fail_at = 0;
		CHECK(&c, reorder_flush(r) == 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "1 3 4");
		reorder_free(r);
	}
	unit_end(&c);
}

/* A lender of records: a buffer of them, each given back once, and then
 * overwritten, as a ring's producer would. */
#define LENT_MAX 8
#define LENT_STRIDE 64

struct fake_lender {
	unsigned char buf[LENT_MAX][LENT_STRIDE];
	int given_back[LENT_MAX];
	int wrong; /* give_backs of something never lent */
};

static void fake_give_back(void *owner, int ring, const void *data)
{
	struct fake_lender *l = owner;
	size_t off = (size_t)((const unsigned char *)data - &l->buf[0][0]);

	(void)ring;
	if (off % LENT_STRIDE || off / LENT_STRIDE >= LENT_MAX) {
		l->wrong++;
		return;
	}
	l->given_back[off / LENT_STRIDE]++;
	memset(l->buf[off / LENT_STRIDE], 0xee, LENT_STRIDE);
}

static int lend(struct reorder *r, struct fake_lender *l, int i, unsigned long long ts, int cpu)
{
	struct rec rec = { ts, i, { 0 } };

	memset(rec.fill, (unsigned char)i, sizeof(rec.fill));
	memcpy(l->buf[i], &rec, 40);
	return reorder_hold(r, cpu, l->buf[i], 40, ts);
}

static void lent_records(struct unit *u, struct seen *s)
{
	struct fake_lender *l = calloc(1, sizeof(*l));
	struct reorder_lender lender = { fake_give_back, l, 1 << 20 };
	struct unit_case c;
	struct reorder *r;
	char buf[128];

	unit_begin(&c, u, "reorder.lent_records");
	memset(s, 0, sizeof(*s));
	r = reorder_new(16, 2, collect, s);
	CHECK(&c, r != NULL && l != NULL);
	if (r && l) {
		reorder_set_lender(r, &lender);
		for (int i = 0; i < 4; i++)
			CHECK(&c, lend(r, l, i, 100 - (unsigned long long)i * 10, i % 2) ==
				      REORDER_KEPT);
		CHECK(&c, reorder_release_until(r, 85) == 0);
		/* Emitted before they were given back, so whole. */
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "3 2");
		CHECK(&c, l->given_back[3] == 1 && l->given_back[2] == 1);
		CHECK(&c, l->given_back[0] == 0 && l->given_back[1] == 0);
		/* Room for two of them: the oldest others are copied and given
		 * back at once, and still come out whole. */
		lender.max_bytes = 2 * 48;
		for (int i = 4; i < 7; i++)
			CHECK(&c, lend(r, l, i, 200 + (unsigned long long)i, 0) == REORDER_KEPT);
		CHECK(&c, l->given_back[0] == 1 && l->given_back[4] == 1);
		CHECK(&c, l->given_back[5] == 0 && l->given_back[6] == 0);
		/* An older one lands before the copied 4: it is the oldest
		 * borrowed now, so the one copied. */
		CHECK(&c, lend(r, l, 7, 201, 0) == REORDER_KEPT);
		CHECK(&c, l->given_back[7] == 1 && l->given_back[5] == 0);
		CHECK(&c, reorder_flush(r) == 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "3 2 1 0 7 4 5 6");
		for (int i = 0; i < 8; i++)
			CHECK_U64(&c, l->given_back[i], 1);
		CHECK_U64(&c, l->wrong, 0);
	}
	reorder_free(r);
	free(l);
	unit_end(&c);
}

/* Lent records at the edges: one emitted to make room goes back before
 * reorder_hold() returns; one whose hold fails (the emit that made room
 * failed) is copied, not given back, and comes out whole after the lender
 * reused its space; one of a ring without a queue is copied, not kept,
 * and comes out whole after the lender reused its space. */
static void lent_edges(struct unit *u, struct seen *s)
{
	struct fake_lender *l = calloc(1, sizeof(*l));
	struct reorder_lender lender = { fake_give_back, l, 1 << 20 };
	struct unit_case c;
	struct reorder *r;
	char buf[128];

	unit_begin(&c, u, "reorder.lent_edges");
	memset(s, 0, sizeof(*s));
	r = reorder_new(2, 2, collect, s);
	CHECK(&c, r != NULL && l != NULL);
	if (r && l) {
		reorder_set_lender(r, &lender);
		CHECK(&c, lend(r, l, 0, 50, 0) == REORDER_KEPT);
		/* The second fills the cap: it is the oldest, so it goes. */
		CHECK(&c, lend(r, l, 1, 10, 1) == REORDER_KEPT);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "1");
		CHECK(&c, l->given_back[1] == 1 && l->given_back[0] == 0);
		/* The emit that makes room for the third fails. */
		s->fail_at = 2;
		CHECK(&c, lend(r, l, 2, 70, 1) == -1);
		CHECK(&c, l->given_back[2] == 0 && l->given_back[0] == 1);
		memset(l->buf[2], 0xee, LENT_STRIDE); /* its space reused */
		s->fail_at = 0;
		/* Ring 5 has no queue: copied, not kept. */
		CHECK(&c, lend(r, l, 3, 80, 5) == 0);
		CHECK_U64(&c, l->given_back[3], 0);
		memset(l->buf[3], 0xee, LENT_STRIDE);
		CHECK(&c, reorder_flush(r) == 0);
		CHECK_STR(&c, ids(s, buf, sizeof(buf)), "1 2 3");
		CHECK_U64(&c, l->wrong, 0);
	}
	reorder_free(r);
	free(l);
	unit_end(&c);
}

/*
 * Two CPUs' rings, each in time order, read one after the other in rounds
 * as the stream reads them: a round starts at "now", every ring is read to
 * it, then sync up to the oldest time each ring was read to
 * (ring_reader_read_until()).  Now and then the next record of CPU 1 is
 * still being written for several rounds (its writer was interrupted):
 * the reads stop there, it and those after it come once it is done, and
 * until then that ring counts as read only up to the last round that read
 * it to its end, several margins back.
 */
#define ROUND_NS (REORDER_MARGIN_NS / 2)

static void rings(struct unit *u, struct seen *s)
{
	unsigned long long next[2] = { 1000, 1500 }, read_until[2] = { 0, 0 };
	unsigned long long now = 0, prev = 0;
	struct unit_case c;
	struct reorder *r;
	size_t total = 0, backwards = 0, stalls = 0;
	int stalled_rounds = 0;

	unit_begin(&c, u, "reorder.rings_in_turn");
	memset(s, 0, sizeof(*s));
	r = reorder_new(REORDER_CAP, 2, collect, s);
	CHECK(&c, r != NULL);
	if (!r) {
		unit_end(&c);
		return;
	}
	srand(7);
	for (int round = 0; round < 60; round++) {
		now += ROUND_NS;
		if (!stalled_rounds && rand() % 6 == 0) {
			stalled_rounds = 1 + rand() % 10;
			stalls++;
		}
		for (int cpu = 0; cpu < 2; cpu++) {
			if (cpu == 1 && stalled_rounds) {
				stalled_rounds--;
				continue;
			}
			while (next[cpu] < now && total < MAX_OUT) {
				push(r, next[cpu], (int)total++, cpu);
				next[cpu] += 4000 + (unsigned long long)(rand() % 2000);
			}
			read_until[cpu] = now;
		}
		CHECK(&c, reorder_sync(r, read_until[0] < read_until[1] ? read_until[0] : read_until[1]) == 0);
	}
	reorder_flush(r);
	for (size_t i = 0; i < s->n && i < MAX_OUT; i++) {
		if (s->ts[i] < prev)
			backwards++;
		prev = s->ts[i];
	}
	CHECK(&c, total > 1000 && total < MAX_OUT && stalls > 1);
	CHECK_U64(&c, s->n, total);
	CHECK_U64(&c, backwards, 0);
	reorder_free(r);
	unit_end(&c);
}

void test_reorder(struct unit *u)
{
	struct seen *s = calloc(1, sizeof(*s));
	struct unit_case c;

	if (!s) {
		unit_begin(&c, u, "reorder.memory");
		CHECK(&c, !"out of memory");
		unit_end(&c);
		return;
	}
	out_of_order_input(u, s);
	equal_times(u, s);
	sync_margin(u, s);
	cap(u, s);
	sizes(u, s);
	emit_error(u, s);
	lent_records(u, s);
	lent_edges(u, s);
	rings(u, s);
	free(s);
}
