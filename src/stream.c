// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The stream mode: one record per event, from one ring buffer per CPU
 * (consumed from one epoll loop while the session waits) to a sink:
 * ftrace-style text on stdout, a kmemtrace directory with -o, or the
 * --stat tables (every INTERVAL, or at the end).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "binout.h"
#include "env.h"
#include "kmemsnoop.h"
#include "kmemsnoop.skel.h"
#include "mode.h"
#include "ringbuf.h"
#include "session.h"
#include "json.h"
#include "sink.h"
#include "statsink.h"
#include "text.h"

struct stream {
	struct mode mode;
	struct sink *sink;
	int *ring_fds;
	struct ring_reader *rings;
	unsigned long long records;
	bool output_gone; /* stdout's reader went away (EPIPE) */
};

static struct stream *stream_of(struct mode *m)
{
	return (struct stream *)m;
}

static bool stream_selected(const struct env *env)
{
	return !env->hist && !env->allocinfo && !env->listen;
}

/* The hot path: every record of every ring. */
static int on_record(void *ctx, int cpu, const void *data, size_t size)
{
	struct stream *st = ctx;
	int ret;

	st->records++;
	ret = st->sink->ops->record(st->sink, cpu, data, size, NULL);
	if (ret == SINK_GONE) {
		st->output_gone = true;
		return -EPIPE;
	}
	if (ret) {
		session_fail(st->mode.session, "%s", st->sink->err);
		return -EIO;
	}
	return 0;
}

static struct mode *stream_create(struct session *s)
{
	struct stream *st = calloc(1, sizeof(*st));
	char err[sizeof(s->err)];

	if (!st) {
		session_fail(s, "out of memory");
		return NULL;
	}
	if (s->env->output_dir) {
		st->sink = binout_sink_new(s->env->output_dir, s->ncpus, err, sizeof(err));
		if (!st->sink)
			session_fail(s, "%s", err);
	} else if (s->env->stat) {
		st->sink = stat_sink_new(stdout, s->env, session_ksyms(s), s->vmlinux, true, err,
					 sizeof(err));
		if (!st->sink)
			session_fail(s, "%s", err);
		st->mode.interval = s->env->interval;
	} else {
		st->sink = (s->env->json ? json_sink_new : text_sink_new)(stdout, session_ksyms(s),
									   s->vmlinux);
		if (!st->sink)
			session_fail(s, "out of memory");
		else
			setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	}
	if (!st->sink) {
		free(st);
		return NULL;
	}
	return &st->mode;
}

static void stream_wants(const struct mode *m, struct bpf_wants *w)
{
	const struct env *env = m->session->env;

	w->alloc_classes |= env->events;
	w->free_classes |= env->events;
	w->sized_frees = true;
	/* Page frame numbers are in the records only. */
	w->pfns |= (env->events & EV_PAGE) != 0;
}

static void stream_configure(struct mode *m, struct kmemsnoop_bpf *skel)
{
	const struct session *s = m->session;

	skel->rodata->do_stream = true;
	skel->rodata->filtered_free_classes = s->env->events;
	/* A wakeup when about a quarter of the ring has filled. */
	skel->rodata->wakeup_records = s->env->ring_size / 4 / sizeof(struct kmt_rec_kmalloc);
	/* The inner template's size does not matter: the kernel does not
	 * compare ring sizes of map-in-map values, so the rings made in
	 * create_rings() can have any. */
	bpf_map__set_max_entries(skel->maps.rings, s->ncpus);
}

static void free_rings(struct stream *st, int ncpus)
{
	ring_reader_free(st->rings);
	st->rings = NULL;
	for (int cpu = 0; st->ring_fds && cpu < ncpus; cpu++)
		if (st->ring_fds[cpu] > 0)
			close(st->ring_fds[cpu]);
	free(st->ring_fds);
	st->ring_fds = NULL;
}

/* One ring per CPU, each in the outer map at its CPU's index. */
static int create_rings(struct mode *m)
{
	struct stream *st = stream_of(m);
	struct session *s = m->session;
	int outer = bpf_map__fd(s->skel->maps.rings);
	unsigned long long size = s->env->ring_size;

	free_rings(st, s->ncpus); /* those of a load that fell back */
	st->ring_fds = calloc(s->ncpus, sizeof(int));
	if (!st->ring_fds)
		return session_fail(s, "out of memory");
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "kmt_ring", 0, 0, size, NULL);

		st->ring_fds[cpu] = fd;
		if (fd < 0)
			return session_fail(s, "creating the ring buffer of CPU %d (%llu bytes): %s",
					    cpu, size, strerror(errno));
		if (bpf_map_update_elem(outer, &cpu, &fd, BPF_ANY))
			return session_fail(s, "installing the ring buffer of CPU %d: %s", cpu,
					    strerror(errno));
	}
	st->rings = ring_reader_new(st->ring_fds, s->ncpus, size, on_record, st);
	if (!st->rings)
		return session_fail(s, "mapping the ring buffers: %s", strerror(errno));
	return 0;
}

/*
 * What this kernel cannot give, said once before tracing starts: its
 * events carry no cache to name (kmem_cache_alloc before 6.1,
 * kmem_cache_free before 5.12), or BPF has no atomic fetch-add for the
 * per-CPU sequence numbers of -o (before 5.12).
 */
static void note_kernel_limits(const struct session *s)
{
	bool alloc = s->kf.cache_alloc_args != KMT_CACHE_ALLOC_CACHE;
	bool free = s->kf.cache_free_args == KMT_CACHE_FREE_PLAIN;

	if ((s->env->events & EV_CACHE) && (alloc || free))
		fprintf(stderr, "kmemsnoop: this kernel's %s events do not say which cache: "
				"their lines have no name=\n",
			alloc && free ? "kmem_cache_alloc and kmem_cache_free" :
			alloc ? "kmem_cache_alloc" : "kmem_cache_free");
	if (s->env->output_dir && !s->kf.atomic_fetch)
		fprintf(stderr, "kmemsnoop: this kernel has no BPF atomic fetch-add: a record "
				"traced in an interrupt during another may repeat its sequence number\n");
}

static int stream_start(struct mode *m)
{
	struct stream *st = stream_of(m);
	int ret;

	note_kernel_limits(m->session);
	ret = st->sink->ops->begin(st->sink);
	if (ret == SINK_GONE)
		st->output_gone = true;
	else if (ret)
		return session_fail(m->session, "%s", st->sink->err);
	return 0;
}

static unsigned long long monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* A sink that aggregates learns how far the rings have been read. */
static int sync_sink(struct stream *st, unsigned long long before_ns)
{
	int ret;

	if (!st->sink->ops->sync)
		return 0;
	ret = st->sink->ops->sync(st->sink, before_ns);
	if (ret < 0)
		return session_fail(st->mode.session, "%s", st->sink->err);
	return 0;
}

static int stream_wait(struct mode *m, int ms)
{
	struct stream *st = stream_of(m);
	unsigned long long before = monotonic_ns();
	int ret;

	if (st->output_gone)
		return MODE_END;
	ret = ring_reader_poll(st->rings, ms);
	if (st->output_gone)
		return MODE_END;
	if (ret < 0 && !m->session->err[0])
		session_fail(m->session, "reading the ring buffers: %s", strerror(-ret));
	if (ret >= 0 && sync_sink(st, before))
		return -1;
	return ret < 0 ? -1 : MODE_OK;
}

static void sum_losses(const struct session *s, struct sink_losses *lost)
{
	lost->events = lost->bytes = 0;
	for (int cpu = 0; cpu < s->ncpus && cpu < KMT_MAX_CPUS; cpu++) {
		lost->events += s->skel->bss->losses[cpu].events;
		lost->bytes += s->skel->bss->losses[cpu].bytes;
	}
}

static int report(struct stream *st)
{
	struct sink_losses lost;
	int ret;

	sum_losses(st->mode.session, &lost);
	ret = st->sink->ops->report(st->sink, &lost);
	if (ret == SINK_GONE) {
		st->output_gone = true;
		return MODE_END;
	}
	return ret ? session_fail(st->mode.session, "%s", st->sink->err) : MODE_OK;
}

/* --stat INTERVAL: the tables of everything read so far. */
static int stream_tick(struct mode *m)
{
	struct stream *st = stream_of(m);
	unsigned long long before = monotonic_ns();

	if (st->output_gone)
		return MODE_END;
	if (ring_reader_consume(st->rings) < 0 && !st->output_gone)
		return session_fail(m->session, "reading the ring buffers");
	if (sync_sink(st, before))
		return -1;
	return report(st);
}

static void print_summary(const struct stream *st, const struct sink_losses *lost)
{
	const struct session *s = st->mode.session;
	unsigned long long misses = session_missed(s);

	fprintf(stderr, "kmemsnoop: %llu events written, %llu lost (%llu bytes)\n", st->records,
		(unsigned long long)lost->events, (unsigned long long)lost->bytes);
	for (int cpu = 0; cpu < s->ncpus && cpu < KMT_MAX_CPUS; cpu++) {
		const struct kmt_loss *l = &s->skel->bss->losses[cpu];

		if (l->events)
			fprintf(stderr, "kmemsnoop: cpu %d lost %llu events (%llu bytes)\n", cpu,
				(unsigned long long)l->events, (unsigned long long)l->bytes);
	}
	if (misses)
		fprintf(stderr, "kmemsnoop: %llu events missed: they happened while the same "
				"program was running on their CPU (interrupts), so BPF skipped them\n",
			misses);
	if (st->sink->undecodable)
		fprintf(stderr, "kmemsnoop: %llu records could not be decoded\n",
			st->sink->undecodable);
}

/* After detach, what is in the rings is all there will be: drain them. */
static int stream_finish(struct mode *m, bool final)
{
	struct stream *st = stream_of(m);
	struct sink_losses lost;
	int ret = 0;

	while (!st->output_gone && (ret = ring_reader_consume(st->rings)) > 0)
		;
	if (ret < 0 && !st->output_gone && !m->session->err[0])
		session_fail(m->session, "reading the ring buffers: %s", strerror(-ret));
	sum_losses(m->session, &lost);
	print_summary(st, &lost);
	ret = ret < 0 && !st->output_gone ? -1 : 0;
	if (st->sink->ops->end(st->sink, &lost) < 0 && !st->output_gone && !ret)
		ret = session_fail(m->session, "%s", st->sink->err);
	/* After COUNT intervals the last tick was the last output. */
	if (!ret && final && !st->output_gone && st->sink->ops->report && report(st) < 0)
		ret = -1;
	return ret;
}

static void stream_destroy(struct mode *m)
{
	struct stream *st = stream_of(m);

	free_rings(st, m->session->ncpus);
	if (st->sink)
		st->sink->ops->destroy(st->sink);
	free(st);
}

const struct mode_ops stream_mode = {
	.name = "stream",
	.selected = stream_selected,
	.create = stream_create,
	.wants = stream_wants,
	.configure = stream_configure,
	.loaded = create_rings,
	.start = stream_start,
	.wait = stream_wait,
	.tick = stream_tick,
	.finish = stream_finish,
	.destroy = stream_destroy,
};
