// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The stream mode: one record per event, from one ring buffer per CPU
 * (consumed from one epoll loop while the session waits) to a sink:
 * ftrace-style text on stdout, a kmemtrace directory with -o, or the
 * --stat tables (every INTERVAL, or at the end).
 *
 * --stat that needs every event is this mode feeding stat/'s sink: the
 * one other mode it includes (tools/check-layers allows exactly that).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cpuloss.h"
#include "jsonsink.h"
#include "ordersink.h"
#include "procscan.h"
#include "ringbuf.h"
#include "text.h"
#include "bpf/kmemsnoop.h"
#include "kernel/budget.h"
#include "names/addrnames.h"
#include "names/gfp.h"
#include "names/usyms.h"
#include "recording/binout.h"
#include "recording/recheader.h"
#include "recording/record.h"
#include "recording/reorder.h"
#include "recording/sink.h"
#include "recording/tpformat.h"
#include "stat/kstat.h"
#include "stat/statsink.h"
#include "util/clock.h"
#include "env.h"
#include "kmemsnoop.skel.h"
#include "mode.h"
#include "session.h"

/*
 * A ring sample (a block of staged records) some of whose records a sink
 * holds where they are: the ring keeps the sample until the last of them
 * is given back.
 */
struct lent_block {
	const unsigned char *start, *end;
	unsigned int holds; /* records of it held */
	bool open;          /* its records are still being handed over */
};

/* A ring's lent blocks, oldest first (a circular array). */
struct lent_blocks {
	struct lent_block *b;
	size_t head, len, cap;
};

struct stream {
	struct mode mode;
	struct sink *sink;
	int *ring_fds;
	struct ring_reader *rings;
	struct lent_blocks *lent; /* per ring */
	unsigned long long ring_size; /* bytes per CPU: -b, or the budget's rule */
	unsigned long long records;
	bool output_gone; /* stdout's reader went away (EPIPE) */
	unsigned long long next_check_ns; /* when to ask the sink if its output is there */
	unsigned long long next_beat_ns;  /* when to write the next heartbeats */
	bool no_beats;                    /* running the heartbeat program failed: said once */
	bool *offline;                    /* per CPU: its heartbeat found it offline */
	int failed;                       /* a record's failure, deferred by on_block() */
	/* The lines are printed in time order (not -o): a CPU whose oldest
	 * staged record waited longer than the time order does is made to
	 * copy it into its ring. */
	bool flush_stale;
	/* The lines go to a pipe or a terminal: each wait's are flushed, so
	 * that a reader (grep) sees them when they happen, not a megabyte
	 * later. */
	bool flush_each_wait;
	/* --user-stacks: the traced processes' maps, which name the frames of
	 * the text and --json, and which -o keeps in DIR/maps. */
	struct usyms *usyms;
	unsigned long long next_scan_ns; /* when to look for -c's and --cgroup's processes */
};

/* How often the sink is asked whether its output is still there (-o DIR
 * removed): a file system call, so not per record, but soon enough that a
 * recording does not go on for long into files no one can open. */
#define CHECK_EVERY_NS 1000000000ULL

/* --user-stacks with -c or --cgroup: how often /proc is searched for their
 * processes (a process that ends sooner may keep only addresses). */
#define SCAN_EVERY_NS 200000000ULL

/* Heartbeat records: per CPU, about once a second (docs/ABI.md). */
#define BEAT_EVERY_NS 1000000000ULL

static struct stream *stream_of(struct mode *m)
{
	return (struct stream *)m;
}

static bool stream_selected(const struct env *env)
{
	return !env->hist && !env->allocinfo && !env->listen && !env->flight &&
	       !env_stat_in_bpf(env);
}

/* --user-stacks: a task's first record, written while it lives, has its
 * process's maps read, before its lines are printed (time order holds
 * them back) or for -o's DIR/maps; its exec, read again. */
static void note_process(struct usyms *u, const void *data, size_t size)
{
	const struct kmt_rec_task *t = data;

	if (size < sizeof(*t) || t->core.event_id != KMT_EVENT_TASK || !t->task.pid)
		return;
	if (t->core.type_id == KMT_TASK_EXEC)
		usyms_note_exec(u, t->task.pid);
	else
		usyms_note_process(u, t->task.pid);
}

/* The hot path: every record of every ring.  SINK_HELD: a lent record
 * is held. */
static int one_record(struct stream *st, int cpu, const void *data, size_t size, bool lent)
{
	int ret;

	/* Events only: the records that describe them are not counted. */
	if (kmt_record_is_event(data, size))
		st->records++;
	else if (st->usyms)
		note_process(st->usyms, data, size);
	ret = st->sink->ops->record(st->sink, cpu, data, size, NULL);
	if (ret == SINK_HELD && lent)
		return SINK_HELD;
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

/* cap is a power of two: a mask, not a division, on every record. */
static struct lent_block *lent_at(struct lent_blocks *lb, size_t i)
{
	return &lb->b[(lb->head + i) & (lb->cap - 1)];
}

/* A new newest block of ring cpu, open; NULL when out of memory. */
static struct lent_block *lend_block(struct stream *st, int cpu, const void *data, size_t size)
{
	struct lent_blocks *lb = &st->lent[cpu];
	struct lent_block *blk;

	if (lb->len == lb->cap) {
		size_t cap = lb->cap ? lb->cap * 2 : 64;
		struct lent_block *b = malloc(cap * sizeof(*b));

		if (!b)
			return NULL;
		for (size_t i = 0; i < lb->len; i++)
			b[i] = *lent_at(lb, i);
		free(lb->b);
		*lb = (struct lent_blocks){ b, 0, lb->len, cap };
	}
	blk = lent_at(lb, lb->len++);
	*blk = (struct lent_block){ data, (const unsigned char *)data + size, 0, true };
	return blk;
}

/* The oldest blocks no record of which is held any more: given back to
 * the ring (the newest, still open, is the caller's). */
static void settle_blocks(struct stream *st, int cpu)
{
	struct lent_blocks *lb = &st->lent[cpu];

	while (lb->len && !lent_at(lb, 0)->holds && !lent_at(lb, 0)->open) {
		ring_reader_give_back(st->rings, cpu, lent_at(lb, 0)->start);
		lb->head = (lb->head + 1) & (lb->cap - 1);
		lb->len--;
	}
}

/* A record a sink held in time order is no longer needed: one hold less
 * on its block, given back with the blocks before it once none is held
 * (in ring order: the ring hands its space back in that order anyway). */
static void give_back(void *owner, int cpu, const void *data)
{
	struct stream *st = owner;
	struct lent_blocks *lb = &st->lent[cpu];
	const unsigned char *p = data;

	for (size_t i = 0; i < lb->len; i++) {
		struct lent_block *blk = lent_at(lb, i);

		if (p < blk->start || p >= blk->end)
			continue;
		if (blk->holds)
			blk->holds--;
		break;
	}
	settle_blocks(st, cpu);
}

/*
 * A staged sample: whole records one after another, lent to a sink that
 * holds them in time order (the order and --stat sinks) rather than
 * copied: copying each into the sink's pool was the consumer's largest
 * cost.  The sample stays in the ring while a record of it is held.
 */
static int on_block(struct stream *st, int cpu, const unsigned char *data, size_t size)
{
	struct lent_blocks *lb = st->lent ? &st->lent[cpu] : NULL;
	struct lent_block *blk = lb ? lend_block(st, cpu, data, size) : NULL;
	int ret = 0;

	if (lb && !blk)
		return -ENOMEM; /* the sink would hold records not lent */
	while (size) {
		size_t n = kmt_record_size(data, size);

		if (!n) {
			st->sink->undecodable++; /* the rest of the block cannot be read */
			break;
		}
		/* Counted before it is handed over: the sink may give it back
		 * before it returns (emitted at once to make room).  The
		 * newest block, wherever give_back() moved the oldest. */
		if (lb)
			lent_at(lb, lb->len - 1)->holds++;
		ret = one_record(st, cpu, data, n, blk != NULL);
		if (ret == SINK_HELD)
			ret = 0;
		else if (lb)
			lent_at(lb, lb->len - 1)->holds--;
		if (ret)
			break;
		data += n;
		size -= n;
	}
	if (!blk)
		return ret;
	blk = lent_at(lb, lb->len - 1);
	blk->open = false;
	if (!blk->holds) {
		lb->len--; /* the newest: not kept, the ring moves on */
		return ret;
	}
	/* Kept even after a failure: the sink still reads its records.  The
	 * failure ends the stream after this consume (st->failed). */
	if (ret < 0)
		st->failed = ret;
	return RING_KEPT;
}

static int on_record(void *ctx, int cpu, const void *data, size_t size)
{
	struct stream *st = ctx;

	if (st->failed)
		return 0; /* the stream ends: the rest is not read */
	return on_block(st, cpu, data, size);
}

/* A consume's status, with a failure on_block() deferred. */
static int consumed(struct stream *st, int ret)
{
	return ret >= 0 && st->failed ? st->failed : ret;
}

static const struct kmt_cpu_counters *cpu_counters(const struct stream *st, int cpu)
{
	return &st->mode.session->skel->bss->cpu_counters[cpu];
}

/* The CPU's oldest record staged, not yet in its ring (0: none).  None
 * when the heartbeat cannot run: nothing would copy an idle CPU's block,
 * and waiting for it would hold every line back. */
static unsigned long long staged_since(const struct stream *st, int cpu)
{
	if (cpu >= KMT_MAX_CPUS || st->no_beats || (st->offline && st->offline[cpu]))
		return 0;
	return __atomic_load_n(&cpu_counters(st, cpu)->staged_since, __ATOMIC_ACQUIRE);
}

/* What a CPU's records wait for, read before its ring: the oldest staged
 * record's time. */
static unsigned long long on_pending(void *ctx, int cpu)
{
	return staged_since(ctx, cpu);
}

/* stdout's buffer: glibc ignores setvbuf's size without one, and stdout is
 * flushed at exit, after every mode is gone. */
static char stdout_buffer[1 << 20];

static bool is_regular_file(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISREG(st.st_mode);
}

/*
 * Records held in time order at most: as many as the rings hold, so that
 * a consumer that fell behind by up to a ring, and reads it all before the
 * time order can move on, still puts them in order (65,536 did not, with
 * both CPUs of a 2-CPU machine allocating).  Past half a ring a held record
 * is copied out of it: this bounds kmemsnoop's memory by the rings' size,
 * and HELD_CAP_MAX by 128 MiB on a machine with many large rings.
 */
#define HELD_CAP_MAX (1u << 20)

static size_t held_cap(const struct stream *st, int ncpus)
{
	unsigned long long n = st->ring_size * ncpus / sizeof(struct kmt_rec_kfree);

	if (n < REORDER_CAP)
		return REORDER_CAP;
	return n > HELD_CAP_MAX ? HELD_CAP_MAX : n;
}

/* The sink env asks for, GFP flags named by gfp; NULL after session_fail(). */
static struct sink *make_sink(struct stream *st, struct session *s, const struct gfp_names *gfp)
{
	char err[sizeof(s->err)] = "out of memory";
	struct rec_header hdr;
	struct sink *sink;

	if (s->env->output_dir) {
		recheader_collect(&hdr, s->ncpus, st->ring_size);
		sink = binout_sink_new(s->env->output_dir, s->ncpus, &hdr, gfp, err, sizeof(err));
	} else if (s->env->stat) {
		sink = stat_sink_new(stdout, s->env,
				     &(struct addr_names){ session_ksyms(s), st->usyms, s->env->stack_depth },
				     gfp, s->ncpus,
				     held_cap(st, s->ncpus), err, sizeof(err));
		st->mode.interval = s->env->interval;
	} else {
		struct addr_names names = { session_ksyms(s), st->usyms, s->env->stack_depth };

		/* Live lines in time order, as the kernel's trace file has them. */
		sink = order_sink_new((s->env->json ? json_sink_new : text_sink_new)(
					      stdout, &names, gfp),
				      s->ncpus, held_cap(st, s->ncpus));
		if (sink)
			setvbuf(stdout, stdout_buffer, _IOFBF, sizeof(stdout_buffer));
		st->flush_each_wait = !is_regular_file(STDOUT_FILENO);
	}
	if (!sink)
		session_fail(s, "%s", err);
	return sink;
}

static struct mode *stream_create(struct session *s)
{
	struct stream *st = calloc(1, sizeof(*st));
	struct gfp_names *gfp = gfp_names_new(s->vmlinux);

	if (!st || !gfp) {
		session_fail(s, "out of memory");
		free(st);
		gfp_names_free(gfp);
		return NULL;
	}
	st->ring_size = s->env->ring_size ? s->env->ring_size : budget_ring_size(s->ncpus);
	st->flush_stale = s->env->output_dir == NULL;
	if (s->env->verbose)
		fprintf(stderr, "kmemsnoop: ring buffers of %llu KiB on each of %d CPUs, %llu MiB "
				"in all%s\n", st->ring_size >> 10, s->ncpus,
			st->ring_size * s->ncpus >> 20, s->env->ring_size ? " (-b)" : "");
	if (s->env->user_stacks && !(st->usyms = usyms_new(true)))
		session_fail(s, "out of memory");
	else
		st->sink = make_sink(st, s, gfp);
	/* -p and -t name a process that lives now, before "Tracing" lets a
	 * test's process go; -c's and --cgroup's are looked for from now on,
	 * and all are noted as their records come. */
	if (st->usyms && (s->env->pid || s->env->tid))
		usyms_note_process(st->usyms, s->env->pid ? s->env->pid : s->env->tid);
	if (st->usyms)
		procscan_note(st->usyms, s->env);
	gfp_names_free(gfp);
	if (!st->sink) {
		usyms_free(st->usyms);
		free(st);
		return NULL;
	}
	return &st->mode;
}

/* --stat's tables leave vmalloc and percpu areas out: their programs stay
 * unloaded. */
static unsigned int stream_classes(const struct env *env)
{
	return env->stat ? env->events & KSTAT_CLASSES : env->events;
}

static void stream_wants(const struct mode *m, struct bpf_wants *w)
{
	const struct env *env = m->session->env;

	w->alloc_classes |= stream_classes(env);
	w->free_classes |= stream_classes(env);
	w->sized_frees = true;
	w->task_records = true;
	w->heartbeats = true;
	w->kernel_bytes += ((const struct stream *)m)->ring_size * m->session->ncpus;
	/* --stacks without --allocinfo: a stack in each event's record. */
	w->kstack_depth = env_kstack_frames(env);
	w->ustack_depth = env_ustack_frames(env);
	/* Page frame numbers are in the records only. */
	w->pfns |= (env->events & EV_PAGE) != 0;
	/* --stat's nodes of slab objects, now or from the recording. */
	w->linear_map |= env->stat || env->output_dir;
}

static void stream_configure(struct mode *m, struct kmemsnoop_bpf *skel)
{
	const struct session *s = m->session;
	const struct stream *st = stream_of(m);

	skel->rodata->do_stream = true;
	skel->rodata->stage_records = true;
	skel->rodata->filtered_free_classes = stream_classes(s->env);
	/* A wakeup when about a quarter of the ring has filled. */
	skel->rodata->wakeup_records = st->ring_size / 4 / sizeof(struct kmt_rec_kmalloc);
	/* The inner template's size does not matter: the kernel does not
	 * compare ring sizes of map-in-map values, so the rings made in
	 * create_rings() can have any. */
	bpf_map__set_max_entries(skel->maps.rings, s->ncpus);
}

static void free_rings(struct stream *st, int ncpus)
{
	if (st->sink)
		st->sink->lender.give_back = NULL;
	for (int cpu = 0; st->lent && cpu < ncpus; cpu++)
		free(st->lent[cpu].b);
	free(st->lent);
	st->lent = NULL;
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
	unsigned long long size = st->ring_size;

	free_rings(st, s->ncpus); /* those of a load that fell back */
	st->ring_fds = calloc(s->ncpus, sizeof(int));
	if (!st->ring_fds)
		return session_fail(s, "out of memory");
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "kmt_ring", 0, 0, size, NULL);

		st->ring_fds[cpu] = fd;
		if (fd < 0) {
			int e = errno;

			session_fail(s, "creating the ring buffer of CPU %d (%llu bytes): %s", cpu,
				     size, strerror(e));
			return session_refused(s, e);
		}
		if (bpf_map_update_elem(outer, &cpu, &fd, BPF_ANY))
			return session_fail(s, "installing the ring buffer of CPU %d: %s", cpu,
					    strerror(errno));
	}
	st->rings = ring_reader_new(st->ring_fds, s->ncpus, size, on_record, on_pending, st);
	if (!st->rings) {
		int e = errno;

		session_fail(s, "mapping the ring buffers: %s", strerror(e));
		return session_refused(s, e);
	}
	/* -o's sink never holds a record. */
	if (s->env->output_dir)
		return 0;
	st->lent = calloc(s->ncpus, sizeof(*st->lent));
	free(st->offline);
	st->offline = calloc(s->ncpus, sizeof(*st->offline));
	if (!st->lent || !st->offline)
		return session_fail(s, "out of memory");
	/* Half of each ring for records held in time order, the rest for
	 * what comes meanwhile (a wakeup every quarter). */
	st->sink->lender = (struct reorder_lender){ give_back, st, size / 2 };
	return 0;
}

/*
 * What this kernel cannot give, said once before tracing starts: its
 * events carry no cache to name (kmem_cache_alloc before 6.1,
 * kmem_cache_free before 5.12), percpu_alloc_percpu has no call site,
 * size or gfp flags (before 5.19), or BPF has no atomic fetch-add for the
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
	if ((stream_classes(s->env) & EV_PERCPU) && s->kf.has_source[SRC_PERCPU_ALLOC_PERCPU] &&
	    s->kf.percpu_args == KMT_PERCPU_SHORT)
		fprintf(stderr, "kmemsnoop: this kernel's percpu_alloc_percpu events have no call "
				"site, bytes_alloc or gfp flags: their lines print as the kernel's, the "
				"bytes counted as size x possible CPUs\n");
	if (s->env->output_dir && !s->kf.atomic_fetch)
		fprintf(stderr, "kmemsnoop: this kernel has no BPF atomic fetch-add: a record "
				"traced in an interrupt during another may repeat its sequence number\n");
}

/*
 * A heartbeat record on the CPU, and what it staged copied into its ring:
 * the program run there through BPF_PROG_TEST_RUN (an interrupt on that
 * CPU), so an idle CPU has them too.  A CPU that is offline (ENXIO) has
 * none.  False once that failed (said once).
 */
static bool beat_cpu(struct stream *st, int cpu)
{
	int err;

	if (st->no_beats)
		return false;
	err = session_beat_cpu(st->mode.session, cpu);
	/* Offline, what it staged cannot be copied: not waited for. */
	if (st->offline)
		st->offline[cpu] = err == -ENXIO;
	if (!err || err == -ENXIO)
		return true;
	st->no_beats = true;
	fprintf(stderr, "kmemsnoop: no heartbeat records (running the heartbeat program on CPU "
			"%d: %s); the records each CPU staged last may be missing\n", cpu,
		strerror(-err));
	return false;
}

/* Every CPU's heartbeat. */
static void beat(struct stream *st, unsigned long long now)
{
	st->next_beat_ns = now + BEAT_EVERY_NS;
	for (int cpu = 0; cpu < st->mode.session->ncpus; cpu++)
		if (!beat_cpu(st, cpu))
			return;
}

/*
 * The CPUs whose oldest staged record has waited longer than STALE_NS: a
 * CPU that allocates now and then would otherwise hold every line of the
 * others back until its block fills.  A busy CPU fills blocks faster, and
 * an idle one has nothing staged: only the CPUs in between are run on, each
 * at most once per STALE_NS.  Each run is an IPI the caller waits for:
 * 50 ms bounds both what they cost and how late a quiet CPU's line is.
 */
#define STALE_NS 50000000ULL
static void flush_stale(struct stream *st)
{
	unsigned long long now = now_ns();

	for (int cpu = 0; cpu < st->mode.session->ncpus; cpu++) {
		unsigned long long since = staged_since(st, cpu);

		if (since && since + STALE_NS < now && !beat_cpu(st, cpu))
			return;
	}
}

static int stream_start(struct mode *m)
{
	struct stream *st = stream_of(m);
	int ret;

	note_kernel_limits(m->session);
	if (m->session->env->stat && !m->session->env->output_dir)
		kstat_set_linear_map(stat_sink_tables(st->sink), m->session->linear_map,
				     sysconf(_SC_PAGESIZE));
	if (m->session->env->output_dir) {
		const char *names[SRC_COUNT];
		struct tpformat_list tracepoints = { names,
						     session_traced_tracepoints(m->session, names),
						     NULL };

		recheader_set_linear_map(binout_sink_header(st->sink), m->session->linear_map);
		recheader_set_stack_depth(binout_sink_header(st->sink), m->session->env->stack_depth);

		/* What the kernel's events carried, now that they are known. */
		if (binout_sink_describe(st->sink, "tracepoints", tpformat_write, &tracepoints))
			return session_fail(m->session, "%s", st->sink->err);
	}
	beat(st, now_ns());
	ret = st->sink->ops->begin(st->sink);
	if (ret == SINK_GONE)
		st->output_gone = true;
	else if (ret)
		return session_fail(m->session, "%s", st->sink->err);
	return 0;
}

/* A sink that orders or aggregates learns how far the rings have been read. */
static int sync_sink(struct stream *st)
{
	int ret;

	if (!st->sink->ops->sync)
		return 0;
	ret = st->sink->ops->sync(st->sink, ring_reader_read_until(st->rings));
	if (ret == SINK_GONE)
		st->output_gone = true;
	else if (ret < 0)
		return session_fail(st->mode.session, "%s", st->sink->err);
	return 0;
}

/* Now and then: the sink's output can still be written. */
static int check_sink(struct stream *st, unsigned long long now)
{
	if (!st->sink->ops->check || now < st->next_check_ns)
		return 0;
	st->next_check_ns = now + CHECK_EVERY_NS;
	if (st->sink->ops->check(st->sink))
		return session_fail(st->mode.session, "%s", st->sink->err);
	return 0;
}

/* The lines of this wait, to the pipe or terminal.  A reader gone is
 * seen here, not when stdio's buffer fills: lines that come slowly take
 * long to fill a megabyte. */
static int flush_lines(struct stream *st)
{
	if (!fflush(stdout))
		return 0;
	if (errno == EPIPE) {
		st->output_gone = true;
		return -1;
	}
	return session_fail(st->mode.session, "writing output: %s", strerror(errno));
}

static int stream_wait(struct mode *m, int ms)
{
	struct stream *st = stream_of(m);
	unsigned long long now = now_ns();
	int ret;

	if (st->output_gone)
		return MODE_END;
	if (now >= st->next_beat_ns)
		beat(st, now);
	if (st->usyms && now >= st->next_scan_ns) {
		procscan_note(st->usyms, m->session->env);
		st->next_scan_ns = now + SCAN_EVERY_NS;
	}
	ret = ring_reader_wait(st->rings, ms);
	if (!ret && st->flush_stale)
		flush_stale(st);
	if (!ret)
		ret = consumed(st, ring_reader_consume(st->rings));
	if (st->output_gone)
		return MODE_END;
	if (ret < 0 && !m->session->err[0])
		session_fail(m->session, "reading the ring buffers: %s", strerror(-ret));
	if (ret >= 0 && (sync_sink(st) || check_sink(st, now_ns())))
		return -1;
	if (st->flush_each_wait && flush_lines(st))
		return st->output_gone ? MODE_END : -1;
	if (st->output_gone)
		return MODE_END;
	return ret < 0 ? -1 : MODE_OK;
}

static void sum_losses(const struct session *s, struct sink_losses *lost)
{
	unsigned long long events, bytes;

	session_staging_losses(s, &events, &bytes);
	lost->events = events;
	lost->bytes = bytes;
	lost->missed = session_missed(s);
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

	if (st->output_gone)
		return MODE_END;
	if (consumed(st, ring_reader_consume(st->rings)) < 0 && !st->output_gone)
		return session_fail(m->session, "reading the ring buffers");
	if (sync_sink(st))
		return -1;
	if (st->output_gone)
		return MODE_END;
	return report(st);
}

/* The CPUs that lost most, one line each, and the others in one line. */
static void print_cpu_losses(const struct session *s)
{
	int n = s->ncpus < KMT_MAX_CPUS ? s->ncpus : KMT_MAX_CPUS;
	struct cpu_loss *l = calloc(n, sizeof(*l));
	struct cpu_loss_rest rest;
	size_t shown;

	if (!l)
		return; /* the total line said it */
	for (int cpu = 0; cpu < n; cpu++)
		l[cpu] = (struct cpu_loss){ cpu, s->skel->bss->losses[cpu].events,
					    s->skel->bss->losses[cpu].bytes };
	shown = cpuloss_select(l, n, CPULOSS_MAX_LINES, &rest);
	for (size_t i = 0; i < shown; i++)
		fprintf(stderr, "kmemsnoop: cpu %d lost %llu events (%llu bytes)\n", l[i].cpu,
			(unsigned long long)l[i].events, (unsigned long long)l[i].bytes);
	if (rest.cpus)
		fprintf(stderr, "kmemsnoop: %zu other CPUs lost %llu events (%llu bytes)\n",
			rest.cpus, (unsigned long long)rest.events, (unsigned long long)rest.bytes);
	free(l);
}

/* Task records lost to full rings, all CPUs. */
static unsigned long long names_lost(const struct session *s)
{
	unsigned long long n = 0;

	for (int cpu = 0; cpu < s->ncpus && cpu < KMT_MAX_CPUS; cpu++)
		n += s->skel->bss->losses[cpu].names;
	return n;
}

/* Records staged in a level above the first, all CPUs. */
static unsigned long long nested_records(const struct session *s)
{
	unsigned long long n = 0;

	for (int cpu = 0; cpu < s->ncpus && cpu < KMT_MAX_CPUS; cpu++)
		n += s->skel->bss->cpu_counters[cpu].nested;
	return n;
}

/* What loses fewer, after a loss: the ring's size now, what else to try. */
static void print_loss_advice(const struct stream *st)
{
	const struct env *env = st->mode.session->env;

	fprintf(stderr, "kmemsnoop: the ring buffers (%llu KiB a CPU) filled faster than they "
			"were read: larger ones (-b), %sor filters (-p, -c, --cgroup, -e, "
			"--min-size) lose fewer\n", st->ring_size >> 10,
		env->output_dir ? "a faster disk for -o, " :
				  "a recording (-o DIR, printed later with -i), ");
}

static void print_summary(const struct stream *st, const struct sink_losses *lost)
{
	const struct session *s = st->mode.session;
	unsigned long long misses = session_missed(s), names = names_lost(s);

	fprintf(stderr, "kmemsnoop: %llu events written, %llu lost (%llu bytes)\n", st->records,
		(unsigned long long)lost->events, (unsigned long long)lost->bytes);
	if (lost->events) {
		print_cpu_losses(s);
		print_loss_advice(st);
	}
	if (names)
		fprintf(stderr, "kmemsnoop: %llu task records lost to full rings: events of those "
				"tasks show <...> (or, after a lost fork, the name the tid had before)\n",
			names);
	if (misses)
		fprintf(stderr, SESSION_MISSED_FMT, misses);
	if (st->sink->undecodable)
		fprintf(stderr, "kmemsnoop: %llu records could not be decoded\n",
			st->sink->undecodable);
	if (st->sink->out_of_order)
		fprintf(stderr, "kmemsnoop: %llu events out of time order: more than %zu "
				"waited for the other CPUs' rings, or a CPU's clock was %llu ms behind\n",
			st->sink->out_of_order, held_cap(st, s->ncpus),
			REORDER_MARGIN_NS / 1000000);
	if (s->env->verbose)
		fprintf(stderr, "kmemsnoop: %llu records staged by a program that interrupted "
				"another writing one on the same CPU\n", nested_records(s));
}

/* DIR/maps (binout_sink_describe()'s fill). */
static int write_maps(FILE *out, const void *usyms)
{
	return usyms_write(usyms, out);
}

/* After detach, what is in the rings is all there will be: drain them. */
static int stream_finish(struct mode *m, bool final)
{
	struct stream *st = stream_of(m);
	struct sink_losses lost;
	int ret = 0;

	/* The last, with the final counts: the programs are detached but
	 * still loaded. */
	beat(st, now_ns());
	while (!st->output_gone && (ret = consumed(st, ring_reader_consume(st->rings))) > 0)
		;
	if (ret < 0 && !st->output_gone && !m->session->err[0])
		session_fail(m->session, "reading the ring buffers: %s", strerror(-ret));
	sum_losses(m->session, &lost);
	ret = ret < 0 && !st->output_gone ? -1 : 0;
	if (!ret && st->usyms && m->session->env->output_dir &&
	    binout_sink_describe(st->sink, "maps", write_maps, st->usyms))
		ret = session_fail(m->session, "%s", st->sink->err);
	if (st->sink->ops->end(st->sink, &lost) < 0 && !st->output_gone && !ret)
		ret = session_fail(m->session, "%s", st->sink->err);
	/* After end: the records it let go count in the summary. */
	print_summary(st, &lost);
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
	usyms_free(st->usyms);
	free(st->offline);
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
