// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A live trace: detect the kernel, open the skeleton and configure it,
 * load, give every CPU its ring, attach, then consume all rings from one
 * epoll loop until the duration, a signal or the traced processes end.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "allocinfo.h"
#include "binout.h"
#include "clock.h"
#include "env.h"
#include "gfp.h"
#include "hist.h"
#include "kernel_features.h"
#include "kmemsnoop.h"
#include "kmemsnoop.skel.h"
#include "ksyms.h"
#include "pfn.h"
#include "record.h"
#include "ringbuf.h"
#include "text.h"
#include "tracer.h"

#define POLL_MS 100
#define SIZE_FILTER_ENTRIES (256 * 1024)

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

struct tracer;

struct tracer {
	const struct env *env;
	struct btf *vmlinux;
	struct kernel_features kf;
	bool raw_tp;
	int ncpus;

	struct kmemsnoop_bpf *skel;
	int *ring_fds;
	struct ring_reader *rings;
	struct bpf_link *links[TP_COUNT];

	struct text_sink text;
	struct binout *binout;
	struct allocinfo *allocinfo; /* --allocinfo */

	unsigned long long records;
	unsigned long long undecodable;
	bool output_closed; /* stdout reader went away (EPIPE) */
	char err[512];
};

__attribute__((format(printf, 2, 3))) static int set_error(struct tracer *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
	return -1;
}

static bool verbose_libbpf;

/* libbpf talks only under -v: without it, kmemsnoop's own one-line errors. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	return verbose_libbpf ? vfprintf(stderr, fmt, args) : 0;
}

/* --- the record callback (hot path) --------------------------------------- */

static int on_record(void *ctx, int cpu, const void *data, size_t size)
{
	struct tracer *t = ctx;
	struct kmt_event ev;
	int ret;

	t->records++;
	if (t->binout)
		return binout_write(t->binout, cpu, data, size, t->err, sizeof(t->err));
	if (kmt_decode(data, size, &ev) != KMT_OK) {
		t->undecodable++;
		return 0;
	}
	ret = text_print_event(&t->text, &ev);
	if (ret == -EPIPE) {
		t->output_closed = true;
		return ret;
	}
	if (ret)
		set_error(t, "writing output: %s", strerror(-ret));
	return ret;
}

/* --- setup ---------------------------------------------------------------- */

static const char *const prog_prefix[2][2] = {
	/* [raw_tp][no atomic fetch] */
	{ "tp_", "tpc_" },
	{ "raw_", "rawc_" },
};

static bool tracepoint_wanted(const struct tracer *t, enum kmt_tracepoint tp)
{
	unsigned int class = tracepoint_class(tp);

	if (!t->kf.has_tp[tp])
		return false;
	if (!class)
		return t->env->pid != 0; /* fork/free follow -p */
	if (t->env->mode == KMT_MODE_ALLOCINFO)
		return allocinfo_tracepoint_wanted(t->env, class, tracepoint_is_free(tp));
	return (t->env->events & class) != 0;
}

static struct bpf_program *tracepoint_prog(const struct tracer *t, enum kmt_tracepoint tp)
{
	char name[64];

	snprintf(name, sizeof(name), "%s%s", prog_prefix[t->raw_tp][!t->kf.atomic_fetch],
		 tracepoint_name(tp));
	return bpf_object__find_program_by_name(t->skel->obj, name);
}

/* Page frame numbers are in the records only. */
static bool pfns_wanted(const struct tracer *t)
{
	return t->env->mode == KMT_MODE_STREAM && (t->env->events & EV_PAGE);
}

static void choose_programs(struct tracer *t)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, t->skel->obj)
		bpf_program__set_autoload(prog, false);
	for (int tp = 0; tp < TP_COUNT; tp++)
		if (tracepoint_wanted(t, tp))
			bpf_program__set_autoload(tracepoint_prog(t, tp), true);
	if (pfns_wanted(t))
		bpf_program__set_autoload(t->skel->progs.calibrate_pfn, true);
}

static void configure(struct tracer *t)
{
	const struct env *env = t->env;
	struct kmemsnoop_bpf__rodata *ro = t->skel->rodata;

	ro->self_tgid = getpid();
	ro->filter_pid = env->pid != 0;
	ro->filter_tid = env->tid != 0;
	ro->target_tid = env->tid;
	ro->filter_cpu = env->cpu >= 0;
	ro->target_cpu = env->cpu;
	ro->filter_comm = env->comm[0] != 0;
	memcpy((char *)ro->target_comm, env->comm, sizeof(env->comm));
	ro->filter_size = env->size_filter;
	ro->min_size = env->min_size;
	ro->max_size = env->max_size;
	ro->page_size = sysconf(_SC_PAGESIZE);
	ro->kmalloc_args = t->kf.kmalloc_args;
	ro->cache_alloc_args = t->kf.cache_alloc_args;
	ro->cache_free_args = t->kf.cache_free_args;
	/* A wakeup when about a quarter of the ring has filled. */
	ro->wakeup_records = env->ring_size / 4 / sizeof(struct kmt_rec_kmalloc);

	ro->mode = env->mode;
	/* The inner template's size does not matter: the kernel does not
	 * compare ring sizes of map-in-map values, so the rings made in
	 * create_rings() can have any. */
	if (env->mode == KMT_MODE_STREAM)
		bpf_map__set_max_entries(t->skel->maps.rings, t->ncpus);
	if (env->mode == KMT_MODE_HIST)
		hist_configure(t->skel, env, t->ncpus);
	if (env->size_filter)
		bpf_map__set_max_entries(t->skel->maps.sized_ptrs, SIZE_FILTER_ENTRIES);
	if (env->mode == KMT_MODE_ALLOCINFO)
		allocinfo_configure(env, t->skel, t->kf.atomic_fetch);
}

static int create_rings(struct tracer *t)
{
	int outer = bpf_map__fd(t->skel->maps.rings);

	t->ring_fds = calloc(t->ncpus, sizeof(int));
	if (!t->ring_fds)
		return set_error(t, "out of memory");
	for (int cpu = 0; cpu < t->ncpus; cpu++) {
		int fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "kmt_ring", 0, 0, t->env->ring_size,
					NULL);

		t->ring_fds[cpu] = fd;
		if (fd < 0)
			return set_error(t, "creating the ring buffer of CPU %d (%llu bytes): %s", cpu,
					 (unsigned long long)t->env->ring_size, strerror(errno));
		if (bpf_map_update_elem(outer, &cpu, &fd, BPF_ANY))
			return set_error(t, "installing the ring buffer of CPU %d: %s", cpu,
					 strerror(errno));
	}
	t->rings = ring_reader_new(t->ring_fds, t->ncpus, t->env->ring_size, on_record, t);
	if (!t->rings)
		return set_error(t, "mapping the ring buffers: %s", strerror(errno));
	return 0;
}

static int add_target(struct tracer *t)
{
	__u32 tgid = t->env->pid;
	__u8 one = 1;

	if (!tgid)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(t->skel->maps.traced_tgids), &tgid, &one, BPF_ANY))
		return set_error(t, "adding PID %u to the filter: %s", tgid, strerror(errno));
	return 0;
}

static void calibrate_pages(struct tracer *t)
{
	char why[256];
	__u64 base;

	if (!pfns_wanted(t))
		return;
	if (pfn_calibrate(t->skel, t->vmlinux, &base, why, sizeof(why))) {
		fprintf(stderr, "kmemsnoop: cannot compute page frame numbers (%s): pfn= shows "
				"0xffffffffffffffff\n", why);
		return;
	}
	t->skel->bss->vmemmap_base = base;
	if (t->env->verbose)
		fprintf(stderr, "kmemsnoop: struct page array at 0x%llx\n",
			(unsigned long long)base);
}

/* sched first, so no fork slips between the kmem programs and the filter. */
static int attach_all(struct tracer *t)
{
	static const enum kmt_tracepoint order[TP_COUNT] = {
		TP_SCHED_PROCESS_FORK, TP_SCHED_PROCESS_FREE, TP_KMALLOC, TP_KMALLOC_NODE,
		TP_KMEM_CACHE_ALLOC, TP_KMEM_CACHE_ALLOC_NODE, TP_KFREE, TP_KMEM_CACHE_FREE,
		TP_MM_PAGE_ALLOC, TP_MM_PAGE_FREE,
	};

	for (int i = 0; i < TP_COUNT; i++) {
		enum kmt_tracepoint tp = order[i];

		if (!tracepoint_wanted(t, tp))
			continue;
		t->links[tp] = bpf_program__attach(tracepoint_prog(t, tp));
		if (!t->links[tp])
			return set_error(t, "attaching to %s (%s): %s", tracepoint_name(tp),
					 t->raw_tp ? "raw_tp" : "tp_btf", strerror(errno));
	}
	return 0;
}

static void detach_all(struct tracer *t)
{
	for (int tp = 0; tp < TP_COUNT; tp++) {
		bpf_link__destroy(t->links[tp]);
		t->links[tp] = NULL;
	}
}

static void teardown(struct tracer *t)
{
	detach_all(t);
	ring_reader_free(t->rings);
	t->rings = NULL;
	for (int cpu = 0; t->ring_fds && cpu < t->ncpus; cpu++)
		if (t->ring_fds[cpu] > 0)
			close(t->ring_fds[cpu]);
	free(t->ring_fds);
	t->ring_fds = NULL;
	kmemsnoop_bpf__destroy(t->skel);
	t->skel = NULL;
}

static int setup(struct tracer *t)
{
	int err;

	t->skel = kmemsnoop_bpf__open();
	if (!t->skel)
		return set_error(t, "opening the BPF object: %s", strerror(errno));
	configure(t);
	choose_programs(t);
	err = kmemsnoop_bpf__load(t->skel);
	if (err)
		return set_error(t, "loading the BPF programs (%s): %s%s",
				 t->raw_tp ? "raw_tp" : "tp_btf", strerror(-err),
				 t->env->verbose ? "" : " (-v shows why)");
	if ((t->env->mode == KMT_MODE_STREAM && create_rings(t)) || add_target(t))
		return -1;
	calibrate_pages(t);
	return attach_all(t);
}

/* tp_btf first; raw_tp if this kernel will not load or attach it. */
static int setup_with_fallback(struct tracer *t)
{
	char first_err[sizeof(t->err)], second_err[sizeof(t->err)];

	/* No tp_btf program of ours loads where it cannot read void *. */
	t->raw_tp = t->env->force_raw_tp || !t->kf.tp_btf_void_arg;
	if (!setup(t))
		return 0;
	if (t->raw_tp)
		return -1;
	memcpy(first_err, t->err, sizeof(first_err));
	teardown(t);
	t->raw_tp = true;
	if (setup(t)) {
		memcpy(second_err, t->err, sizeof(second_err));
		return set_error(t, "%s; with raw_tp: %s", first_err, second_err);
	}
	fprintf(stderr, "kmemsnoop: tp_btf unavailable (%s); using raw_tp\n", first_err);
	return 0;
}

/* --- the run -------------------------------------------------------------- */

static void announce_tracing(const struct tracer *t)
{
	fprintf(stderr, "kmemsnoop: Tracing kernel allocations%s... Hit Ctrl-C to end.\n",
		t->env->pid ? " of the process and its children" : "");
}

static void say_target_gone(const struct tracer *t)
{
	fprintf(stderr, "kmemsnoop: process %d and its children have exited\n", t->env->pid);
}

static bool traced_processes_gone(const struct tracer *t)
{
	__u32 key;

	if (!t->env->pid)
		return false;
	return bpf_map_get_next_key(bpf_map__fd(t->skel->maps.traced_tgids), NULL, &key) &&
	       errno == ENOENT;
}

static int consume_loop(struct tracer *t)
{
	double deadline = t->env->duration ? now_seconds() + t->env->duration : 0;

	while (!stop_requested) {
		int ret = ring_reader_poll(t->rings, POLL_MS);

		if (ret < 0)
			return ret;
		if (deadline && now_seconds() >= deadline)
			break;
		if (traced_processes_gone(t)) {
			say_target_gone(t);
			break;
		}
	}
	return 0;
}

static void sum_losses(const struct tracer *t, unsigned long long *events,
		       unsigned long long *bytes)
{
	*events = *bytes = 0;
	for (int cpu = 0; cpu < t->ncpus && cpu < KMT_MAX_CPUS; cpu++) {
		*events += t->skel->bss->losses[cpu].events;
		*bytes += t->skel->bss->losses[cpu].bytes;
	}
}

/*
 * Events the kernel never gave the programs: a tracepoint hit while the
 * same program is already running on that CPU (an allocation in an
 * interrupt that arrived during one) is skipped and only counted here.
 */
static unsigned long long recursion_misses(const struct tracer *t)
{
	unsigned long long misses = 0;

	for (int tp = 0; tp < TP_COUNT; tp++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!tracepoint_wanted(t, tp))
			continue;
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(tracepoint_prog(t, tp)), &info, &len))
			misses += info.recursion_misses;
	}
	return misses;
}

static void print_summary(const struct tracer *t)
{
	unsigned long long lost_events, lost_bytes, misses = recursion_misses(t);

	sum_losses(t, &lost_events, &lost_bytes);
	fprintf(stderr, "kmemsnoop: %llu events written, %llu lost (%llu bytes)\n", t->records,
		lost_events, lost_bytes);
	for (int cpu = 0; cpu < t->ncpus && cpu < KMT_MAX_CPUS; cpu++) {
		const struct kmt_loss *l = &t->skel->bss->losses[cpu];

		if (l->events)
			fprintf(stderr, "kmemsnoop: cpu %d lost %llu events (%llu bytes)\n", cpu,
				(unsigned long long)l->events, (unsigned long long)l->bytes);
	}
	if (misses)
		fprintf(stderr, "kmemsnoop: %llu events missed: they happened while the same "
				"program was running on their CPU (interrupts), so BPF skipped them\n",
			misses);
	if (t->undecodable)
		fprintf(stderr, "kmemsnoop: %llu records could not be decoded\n", t->undecodable);
}

static int finish_output(struct tracer *t)
{
	unsigned long long lost_events, lost_bytes;

	if (!t->binout) {
		if (fflush(t->text.out) && errno != EPIPE)
			return set_error(t, "writing output: %s", strerror(errno));
		return 0;
	}
	sum_losses(t, &lost_events, &lost_bytes);
	if (binout_close(t->binout, lost_bytes, lost_events, t->err, sizeof(t->err))) {
		t->binout = NULL;
		return -1;
	}
	t->binout = NULL;
	return 0;
}

/* After detaching: consume until the rings are empty. */
static int drain(struct tracer *t)
{
	int ret;

	while ((ret = ring_reader_consume(t->rings)) > 0)
		;
	return ret;
}

/*
 * What this kernel cannot give, said once before tracing starts: its
 * events carry no cache to name (kmem_cache_alloc before 6.1,
 * kmem_cache_free before 5.12; for --hist-by cache, the allocations), or
 * BPF has no atomic fetch-add for the per-CPU sequence numbers of -o
 * (before 5.12).
 */
static void note_kernel_limits(const struct tracer *t)
{
	bool alloc = t->kf.cache_alloc_args != KMT_CACHE_ALLOC_CACHE;
	bool free = t->kf.cache_free_args == KMT_CACHE_FREE_PLAIN;

	if (t->env->mode == KMT_MODE_HIST) {
		if ((t->env->events & EV_CACHE) && alloc && t->env->hist_by == KMT_BY_CACHE)
			fprintf(stderr, "kmemsnoop: this kernel's kmem_cache_alloc events do not say "
					"which cache: slab allocations are counted by object size, "
					"(cache size N)\n");
		return;
	}
	if ((t->env->events & EV_CACHE) && (alloc || free))
		fprintf(stderr, "kmemsnoop: this kernel's %s events do not say which cache: "
				"their lines have no name=\n",
			alloc && free ? "kmem_cache_alloc and kmem_cache_free" :
			alloc ? "kmem_cache_alloc" : "kmem_cache_free");
	if (t->binout && !t->kf.atomic_fetch)
		fprintf(stderr, "kmemsnoop: this kernel has no BPF atomic fetch-add: a record "
				"traced in an interrupt during another may repeat its sequence number\n");
}

/* --- aggregation: --hist ------------------------------------------------- */

enum { LOOP_ERROR = -1, LOOP_DONE = 0, LOOP_FINAL = 1 };

/*
 * hist_tick() every interval until COUNT intervals, -d, a signal, q, or
 * the -p processes gone.  LOOP_FINAL: the time since the last tick is
 * still to be shown.
 */
static int hist_loop(struct tracer *t, struct hist *h, bool *target_gone)
{
	const struct env *env = t->env;
	double start = now_seconds(), next = start + env->interval;
	double deadline = env->duration ? start + env->duration : 0;
	unsigned long ticks = 0;

	while (!stop_requested) {
		double now = now_seconds(), until = deadline && deadline < next ? deadline : next;
		/* Clamped as a double: INTERVAL may be far beyond INT_MAX ms. */
		double left_ms = (until - now) * 1000;
		int ms = left_ms <= 0 ? 0 : left_ms >= POLL_MS ? POLL_MS : (int)left_ms + 1, ret;

		if (hist_wait(h, ms) == HIST_QUIT)
			return LOOP_FINAL;
		now = now_seconds();
		if (stop_requested || (deadline && now >= deadline))
			break;
		if (traced_processes_gone(t)) {
			*target_gone = true;
			break;
		}
		if (now < next)
			continue;
		ret = hist_tick(h, recursion_misses(t), t->err, sizeof(t->err));
		if (ret)
			return ret < 0 ? LOOP_ERROR : LOOP_DONE;
		if (env->count && ++ticks >= env->count)
			return LOOP_DONE;
		/* After a stall (suspend, SIGSTOP), no burst of catch-up ticks. */
		next = next + env->interval > now ? next + env->interval : now + env->interval;
	}
	return LOOP_FINAL;
}

static int run_hist(struct tracer *t)
{
	struct hist *h;
	bool target_gone = false;
	int ret;

	if (setup_with_fallback(t))
		return -1;
	note_kernel_limits(t);
	announce_tracing(t);
	h = hist_open(t->env, t->skel, t->ncpus, t->err, sizeof(t->err));
	if (!h)
		return -1;
	ret = hist_loop(t, h, &target_gone);
	/* Detach first: the last reading then has everything. */
	detach_all(t);
	if (ret == LOOP_FINAL)
		ret = hist_tick(h, recursion_misses(t), t->err, sizeof(t->err)) < 0 ? LOOP_ERROR : 0;
	hist_close(h);
	if (target_gone)
		say_target_gone(t);
	return ret == LOOP_ERROR ? -1 : 0;
}

static void sleep_until(double when)
{
	double left = when - now_seconds();
	struct timespec ts;

	if (left <= 0)
		return;
	if (left > POLL_MS / 1000.0)
		left = POLL_MS / 1000.0;
	ts.tv_sec = (time_t)left;
	ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL); /* a signal ends it early: the caller looks */
}

static int print_allocinfo(struct tracer *t)
{
	int ret = allocinfo_print(t->allocinfo, t->skel, recursion_misses(t), stdout);

	if (ret == -EPIPE) {
		t->output_closed = true;
		return 0;
	}
	if (ret)
		return set_error(t, "writing output: %s", strerror(-ret));
	return 0;
}

/*
 * --allocinfo: the maps fill themselves; print them every interval, and at
 * the end (unless the last interval's output was just that).
 */
static int run_allocinfo(struct tracer *t)
{
	const struct env *env = t->env;
	double start = now_seconds();
	double deadline = env->duration ? start + env->duration : 0;
	double next = env->interval ? start + env->interval : 0;
	unsigned long printed = 0;
	int ret = 0;

	while (!stop_requested && !t->output_closed) {
		double now = now_seconds();

		if (deadline && now >= deadline)
			break;
		if (traced_processes_gone(t)) {
			say_target_gone(t);
			break;
		}
		if (next && now >= next) {
			if (print_allocinfo(t))
				return -1;
			/* After a stall (suspend, SIGSTOP), no burst of catch-up prints. */
			next = next + env->interval > now ? next + env->interval : now + env->interval;
			if (env->count && ++printed >= env->count)
				break;
			continue;
		}
		sleep_until(next && (!deadline || next < deadline) ? next : deadline ? deadline :
			    now + 1);
	}
	detach_all(t);
	if (!t->output_closed && !(env->count && printed >= env->count))
		ret = print_allocinfo(t);
	allocinfo_summary(t->allocinfo, t->skel);
	return ret;
}

static int trace(struct tracer *t)
{
	int ret;

	if (t->env->mode == KMT_MODE_HIST)
		return run_hist(t);
	if (setup_with_fallback(t))
		return -1;
	if (t->env->mode == KMT_MODE_ALLOCINFO) {
		announce_tracing(t);
		return run_allocinfo(t);
	}
	note_kernel_limits(t);
	if (t->binout == NULL && text_print_header(&t->text))
		return set_error(t, "writing output: %s", strerror(errno));
	announce_tracing(t);
	ret = consume_loop(t);
	/* Detach first: what is in the rings then is all there will be. */
	detach_all(t);
	if (!ret)
		ret = drain(t);
	if (t->output_closed)
		ret = 0;
	print_summary(t);
	if (ret < 0) {
		char first[sizeof(t->err)];

		if (!t->err[0])
			set_error(t, "reading the ring buffers: %s", strerror(-ret));
		/* Close what was written, but report the first failure. */
		memcpy(first, t->err, sizeof(first));
		finish_output(t);
		memcpy(t->err, first, sizeof(first));
		return -1;
	}
	return finish_output(t);
}

static int open_output(struct tracer *t)
{
	const struct env *env = t->env;

	if (env->mode == KMT_MODE_ALLOCINFO) {
		t->allocinfo = allocinfo_new(env, t->ncpus, t->kf.atomic_fetch, t->err, sizeof(t->err));
		return t->allocinfo ? 0 : -1;
	}
	if (env->mode != KMT_MODE_STREAM)
		return 0; /* the mode prints its own */
	if (env->output_dir) {
		t->binout = binout_open(env->output_dir, t->ncpus, t->err, sizeof(t->err));
		if (!t->binout)
			return -1;
		/* Call sites are only readable with this boot's symbols (KASLR). */
		return binout_copy_file(t->binout, "/proc/kallsyms", "kallsyms", t->err,
					sizeof(t->err));
	}
	t->text.out = stdout;
	t->text.gfp = gfp_names_new(t->vmlinux);
	t->text.ksyms = ksyms_load("/proc/kallsyms");
	if (!t->text.ksyms)
		fprintf(stderr, "kmemsnoop: cannot read /proc/kallsyms (%s): call sites print as "
				"addresses\n", strerror(errno));
	if (!t->text.gfp)
		return set_error(t, "out of memory");
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	return 0;
}

static void close_output(struct tracer *t)
{
	if (t->binout) {
		char ignored[8];

		binout_close(t->binout, 0, 0, ignored, sizeof(ignored));
	}
	ksyms_free(t->text.ksyms);
	gfp_names_free((struct gfp_names *)t->text.gfp);
	allocinfo_free(t->allocinfo);
}

static int detect(struct tracer *t)
{
	char why[256];

	t->vmlinux = btf__load_vmlinux_btf();
	if (!t->vmlinux)
		return set_error(t, "cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): %s; "
				 "kmemsnoop needs CONFIG_DEBUG_INFO_BTF=y", strerror(errno));
	if (kernel_features_detect(t->vmlinux, &t->kf, why, sizeof(why)))
		return set_error(t, "%s", why);
	t->ncpus = libbpf_num_possible_cpus();
	if (t->ncpus <= 0)
		return set_error(t, "cannot count the CPUs: %s", strerror(-t->ncpus));
	if (t->ncpus > KMT_MAX_CPUS)
		return set_error(t, "%d CPUs: kmemsnoop handles at most %d", t->ncpus,
				 KMT_MAX_CPUS);
	if (t->env->verbose)
		fprintf(stderr, "kmemsnoop: %d CPUs; kmalloc args %s, kmem_cache_alloc args %s, "
				"kmem_cache_free args %s; atomic fetch %s; tp_btf %s\n", t->ncpus,
			t->kf.kmalloc_args == KMT_KMALLOC_NODE ? "with node" : "without node",
			t->kf.cache_alloc_args == KMT_CACHE_ALLOC_CACHE ? "with cache" : "with sizes",
			t->kf.cache_free_args == KMT_CACHE_FREE_CACHE ? "with cache" :
			t->kf.cache_free_args == KMT_CACHE_FREE_NAME ? "with name" : "plain",
			t->kf.atomic_fetch ? "yes" : "no (sequence numbers may repeat)",
			t->kf.tp_btf_void_arg ? "yes" : "no (it cannot read void * arguments: raw_tp)");
	return 0;
}

int tracer_run(const struct env *env)
{
	struct tracer t = { .env = env };
	/* SA_RESTART: a signal must not cut a write to the output short;
	 * epoll_wait still returns early, so the loop sees the stop. */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	int ret = EXIT_OK;

	verbose_libbpf = env->verbose;
	libbpf_set_print(libbpf_print);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (detect(&t) || open_output(&t) || trace(&t)) {
		fprintf(stderr, "kmemsnoop: %s\n", t.err);
		ret = EXIT_RUNTIME;
	}
	close_output(&t);
	teardown(&t);
	btf__free(t.vmlinux);
	return ret;
}
