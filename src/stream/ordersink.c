// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The live stream's time order for the text and JSON sinks: each CPU's
 * ring is in order, but the rings are read one after the other, so a batch
 * of CPU 1's records would otherwise follow a batch of CPU 0's that
 * happened after them.  Records are held where the ring has them (or
 * copied, when the caller cannot lend them) and decoded when their turn
 * comes, the inner sink given the decoding.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recording/cachetab.h"
#include "ordersink.h"
#include "recording/record.h"
#include "recording/reorder.h"
#include "recording/sink.h"
#include "recording/tasktab.h"

struct order_sink {
	struct sink sink;
	struct sink *inner;
	struct reorder *held;
	struct cachetab *caches;
	struct tasktab *tasks; /* applied in time order across CPUs */
	struct kmt_event decoded; /* the record being passed on */
	struct kmt_order_count order;
};

static struct order_sink *order_of(struct sink *sk)
{
	return (struct order_sink *)sk;
}

/* The inner sink's status; its reason, when it failed, becomes ours. */
static int inner_status(struct order_sink *os, int ret)
{
	if (ret == REORDER_NOMEM) {
		snprintf(os->sink.err, sizeof(os->sink.err),
			 "out of memory holding records in time order");
		return -1;
	}
	if (ret < 0)
		snprintf(os->sink.err, sizeof(os->sink.err), "%s", os->inner->err);
	return ret;
}

/* A record's names from the records that describe, taken in time order. */
static int pass_on(struct order_sink *os, struct kmt_event *ev, int cpu)
{
	if (!cachetab_apply(os->caches, ev) || !tasktab_apply(os->tasks, ev))
		return 0; /* a record that describes: its names are taken */
	kmt_order_note(&os->order, ev);
	return os->inner->ops->record(os->inner, cpu, NULL, 0, ev);
}

static int decode_and_pass_on(void *ctx, const void *data, size_t size, int cpu)
{
	struct order_sink *os = ctx;

	/* It was checked when it came, so this does not fail. */
	if (kmt_decode(data, size, cpu, &os->decoded) != KMT_OK) {
		os->sink.undecodable++;
		return 0;
	}
	return pass_on(os, &os->decoded, cpu);
}

static int order_begin(struct sink *sk)
{
	struct order_sink *os = order_of(sk);

	return inner_status(os, os->inner->ops->begin(os->inner));
}

static int order_record(struct sink *sk, int cpu, const void *data, size_t size,
			const struct kmt_event *ev)
{
	struct order_sink *os = order_of(sk);
	struct kmt_glance g;
	int ret;

	if (ev) { /* decoded by a reader that put them in order */
		os->decoded = *ev;
		return inner_status(os, pass_on(os, &os->decoded, cpu));
	}
	if (kmt_glance(data, size, &g) != KMT_OK) {
		sk->undecodable++;
		return 0;
	}
	/* No time (a recording's ABI 1): nothing to order it by.  A cache
	 * record is learned as it comes, before the events of its CPU that
	 * refer to it: an event whose time was taken before an interrupt's
	 * event described the cache has an earlier time than the description. */
	if (!g.has_time || g.event_id == KMT_EVENT_CACHE)
		return inner_status(os, decode_and_pass_on(os, data, size, cpu));
	ret = reorder_hold(os->held, cpu, data, g.event_size, g.timestamp);
	return ret == REORDER_KEPT ? SINK_HELD : inner_status(os, ret);
}

static int order_sync(struct sink *sk, unsigned long long before_ns)
{
	struct order_sink *os = order_of(sk);

	return inner_status(os, reorder_sync(os->held, before_ns));
}

static int order_end(struct sink *sk, const struct sink_losses *lost)
{
	struct order_sink *os = order_of(sk);
	int ret = inner_status(os, reorder_flush(os->held));

	sk->out_of_order = os->order.late;
	sk->undecodable += os->inner->undecodable;
	os->inner->undecodable = 0;
	if (ret)
		return ret;
	return inner_status(os, os->inner->ops->end(os->inner, lost));
}

static int order_check(struct sink *sk)
{
	struct order_sink *os = order_of(sk);

	if (!os->inner->ops->check)
		return 0;
	return inner_status(os, os->inner->ops->check(os->inner));
}

static void order_destroy(struct sink *sk)
{
	struct order_sink *os = order_of(sk);

	if (os->inner)
		os->inner->ops->destroy(os->inner);
	reorder_free(os->held);
	cachetab_free(os->caches);
	tasktab_free(os->tasks);
	free(os);
}

static const struct sink_ops order_ops = {
	.begin = order_begin,
	.record = order_record,
	.end = order_end,
	.sync = order_sync,
	.check = order_check,
	.destroy = order_destroy,
};

struct sink *order_sink_new(struct sink *inner, int nrings, size_t cap)
{
	struct order_sink *os;

	if (!inner)
		return NULL;
	os = calloc(1, sizeof(*os));
	if (!os) {
		inner->ops->destroy(inner);
		return NULL;
	}
	os->sink.ops = &order_ops;
	os->inner = inner;
	os->held = reorder_new(cap ? cap : REORDER_CAP, nrings, decode_and_pass_on, os);
	if (os->held)
		reorder_set_lender(os->held, &os->sink.lender);
	os->caches = cachetab_new();
	os->tasks = tasktab_new();
	if (!os->held || !os->caches || !os->tasks) {
		order_destroy(&os->sink);
		return NULL;
	}
	return &os->sink;
}
