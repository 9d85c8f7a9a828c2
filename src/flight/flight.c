// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The flight recorder mode (--flight -o DIR): the stream's records kept in
 * a circular store in the kernel (bpf/flight.bpf.h) that nothing reads
 * until a trigger fires: the OOM killer choosing a victim, an allocation
 * that failed, or SIGUSR1.  A trigger copies out the blocks not dumped
 * yet, and the copy is written as a recording of its own (flightdump.c).
 *
 * The store is a BPF array, mapped only for a dump (mapped, its 16 MiB a
 * CPU would count in kmemsnoop's resident memory all along): reading it
 * costs no system call per block, and it is never stopped: the CPUs write on while it is copied,
 * oldest block first, away from where they write.  A block a CPU
 * overwrote while it was copied (it went round the whole store meanwhile)
 * is left out and counted.  Stopping the writers instead lost events: a
 * CPU's stages hold three blocks, which a fork and exec fill in a
 * millisecond.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "flightdump.h"
#include "threshold.h"
#include "bpf/kmemsnoop.h"
#include "kernel/budget.h"
#include "kernel/sources.h"
#include "names/gfp.h"
#include "names/ksyms.h"
#include "recording/recheader.h"
#include "util/clock.h"
#include "env.h"
#include "kmemsnoop.skel.h"
#include "mode.h"
#include "session.h"

/* Heartbeats: per CPU, about once a second, as the stream writes them. */
#define BEAT_EVERY_NS 1000000000ULL

/* The words of the dumps' directory names, by enum kmt_trigger. */
static const char *const trigger_words[KMT_TRIGGER_KINDS] = KMT_TRIGGER_NAMES;

/* Where --flight-when reads, and how often. */
#define MEMINFO "/proc/meminfo"
#define THRESHOLD_EVERY_NS 100000000ULL

/* SIGUSR1s not yet dumped for: a handler can only reach a global. */
static volatile sig_atomic_t signals_pending;

static void on_sigusr1(int sig)
{
	(void)sig;
	signals_pending++;
}

/* The memory a dump's copy goes into. */
struct copy_area {
	unsigned char *base;
	size_t len;
};

struct flight {
	struct mode mode;
	unsigned long long store_size; /* bytes per CPU: -b, or the rings' rule */
	__u32 blocks;                  /* per CPU */
	__u32 group;                   /* blocks of a group: flight_group_blocks */
	unsigned char *store;          /* the mmap'ed flight_store, during a dump */
	struct kmt_flight_slot *slots; /* and flight_slots */
	size_t store_len, slots_len;
	struct ring_buffer *triggers;
	struct bpf_link *oom_link;
	struct gfp_names *gfp;
	struct rec_header hdr;         /* collected at the start, copied into each dump */
	unsigned long long *next_seq;  /* per CPU: its first block not dumped yet */
	/* A trigger of each kind that fired and waits for its dump
	 * (--flight-after); later ones of its kind go into that dump. */
	struct kmt_flight_trigger held[KMT_TRIGGER_KINDS];
	bool is_held[KMT_TRIGGER_KINDS];
	bool no_beats;
	unsigned long long next_beat_ns;
	unsigned long long lost_dumped, lost_bytes_dumped; /* the losses the dumps told */
	unsigned long long dumps, dump_failures, signals;
	unsigned long long copy_ns_max, held_ns_last;
	unsigned long long overtaken; /* blocks a CPU overwrote while they were copied */
	bool has_threshold;           /* --flight-when */
	struct flight_threshold threshold;
	unsigned long long next_threshold_ns, threshold_fired;
};

/* Blocks a group of the store holds (flight.bpf.h): 16, or for a small
 * store the largest power of two at most an eighth of it. */
#define GROUP_BLOCKS_MAX 16

static __u32 group_blocks(__u32 blocks)
{
	__u32 group = GROUP_BLOCKS_MAX;

	while (group > 1 && group > blocks / 8)
		group /= 2;
	return group;
}

static struct flight *flight_of(struct mode *m)
{
	return (struct flight *)m;
}

static bool flight_selected(const struct env *env)
{
	return env->flight;
}

/* Whether oom:mark_victim passes its task (6.9+ and the stable kernels
 * 72ba14deb40a went back to) rather than the victim's pid: the second
 * parameter of its btf_trace_ prototype (the first is the probe's data). */
static bool oom_arg_is_task(const struct btf *btf)
{
	int id = btf ? btf__find_by_name_kind(btf, "btf_trace_mark_victim", BTF_KIND_TYPEDEF) : -1;
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;

	if (!t || !(t = btf__type_by_id(btf, t->type)) || !btf_is_ptr(t))
		return false;
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_func_proto(t) || btf_vlen(t) < 2)
		return false;
	t = btf__type_by_id(btf, btf_params(t)[1].type);
	return t && btf_is_ptr(t);
}

/* What flight_create() allocated, when it fails after. */
static struct mode *flight_create_failed(struct flight *f)
{
	if (f) {
		gfp_names_free(f->gfp);
		free(f->next_seq);
	}
	free(f);
	return NULL;
}

static struct mode *flight_create(struct session *s)
{
	struct flight *f = calloc(1, sizeof(*f));
	const struct env *env = s->env;
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	char err[256];

	if (!f || !(f->gfp = gfp_names_new(s->vmlinux)) ||
	    !(f->next_seq = calloc(s->ncpus, sizeof(*f->next_seq)))) {
		session_fail(s, "out of memory");
		return flight_create_failed(f);
	}
	f->store_size = env->ring_size ? env->ring_size : budget_ring_size(s->ncpus);
	f->blocks = f->store_size / sizeof(struct kmt_flight_block);
	if (f->blocks < 4)
		f->blocks = 4;
	f->group = group_blocks(f->blocks);
	/* Said now rather than at the first trigger. */
	if (mkdir(env->output_dir, 0700) && errno != EEXIST) {
		session_fail(s, "cannot create %s: %s", env->output_dir, strerror(errno));
		return flight_create_failed(f);
	}
	if (env->flight_when.field[0]) {
		if (threshold_init(&f->threshold, MEMINFO, env->flight_when.field,
				   env->flight_when.op, env->flight_when.bytes, err, sizeof(err))) {
			session_fail(s, "%s", err);
			return flight_create_failed(f);
		}
		f->has_threshold = true;
	}
	/* Before "Tracing" is said: a SIGUSR1 sent as soon as it is must
	 * not end kmemsnoop (the dump waits for the run loop). */
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGUSR1, &sa, NULL)) {
		session_fail(s, "cannot handle SIGUSR1: %s", strerror(errno));
		return flight_create_failed(f);
	}
	recheader_collect(&f->hdr, s->ncpus, f->store_size);
	return &f->mode;
}

static void flight_wants(const struct mode *m, struct bpf_wants *w)
{
	const struct flight *f = (const struct flight *)m;
	const struct env *env = m->session->env;

	w->alloc_classes |= env->events;
	w->free_classes |= env->events;
	w->sized_frees = true;
	w->task_records = true;
	w->heartbeats = true;
	w->oom_victims = true;
	/* --stacks without --allocinfo: a stack in each event's record. */
	w->kstack_depth = env_kstack_frames(env);
	w->kernel_bytes += (unsigned long long)f->blocks *
			   (sizeof(struct kmt_flight_block) + sizeof(struct kmt_flight_slot)) *
			   m->session->ncpus;
	w->pfns |= (env->events & EV_PAGE) != 0;
	w->linear_map = true;
}

static void flight_configure(struct mode *m, struct kmemsnoop_bpf *skel)
{
	struct flight *f = flight_of(m);
	const struct session *s = m->session;

	skel->rodata->do_stream = true;
	skel->rodata->stage_records = true;
	skel->rodata->flight = true;
	skel->rodata->filtered_free_classes = s->env->events;
	skel->rodata->flight_blocks_per_cpu = f->blocks;
	skel->rodata->flight_group_blocks = f->group;
	skel->rodata->flight_nowarn_gfp = gfp_names_mask(f->gfp, "__GFP_NOWARN");
	skel->rodata->oom_victim_is_task = oom_arg_is_task(s->vmlinux);
	bpf_map__set_max_entries(skel->maps.flight_store, f->blocks * s->ncpus);
	bpf_map__set_max_entries(skel->maps.flight_slots, f->blocks * s->ncpus);
	/* The rings stay empty: the blocks go into the store. */
	bpf_map__set_max_entries(skel->maps.rings, s->ncpus);
}

static void flight_release(struct flight *f)
{
	ring_buffer__free(f->triggers);
	f->triggers = NULL;
}

/* Holds t for its dump, unless one of its kind is held already. */
static void hold(struct flight *f, const struct kmt_flight_trigger *t)
{
	unsigned int kind = t->kind < KMT_TRIGGER_KINDS ? t->kind : KMT_TRIGGER_SIGNAL;

	if (f->is_held[kind])
		return;
	f->held[kind] = *t;
	f->held[kind].kind = kind;
	f->is_held[kind] = true;
}

static int on_trigger(void *ctx, void *data, size_t size)
{
	struct kmt_flight_trigger t;

	if (size < sizeof(t))
		return 0;
	memcpy(&t, data, sizeof(t));
	hold(ctx, &t);
	return 0;
}

static void unmap_store(struct flight *f)
{
	if (f->store)
		munmap(f->store, f->store_len);
	if (f->slots)
		munmap(f->slots, f->slots_len);
	f->store = NULL;
	f->slots = NULL;
}

/* The store and its slots mapped for a dump.  0, or -1 with the reason
 * said. */
static int map_store(struct flight *f)
{
	struct session *s = f->mode.session;
	size_t n = (size_t)f->blocks * s->ncpus;
	void *p;

	f->store_len = n * sizeof(struct kmt_flight_block);
	f->slots_len = n * sizeof(struct kmt_flight_slot);
	p = mmap(NULL, f->store_len, PROT_READ, MAP_SHARED,
		 bpf_map__fd(s->skel->maps.flight_store), 0);
	f->store = p == MAP_FAILED ? NULL : p;
	p = mmap(NULL, f->slots_len, PROT_READ, MAP_SHARED,
		 bpf_map__fd(s->skel->maps.flight_slots), 0);
	f->slots = p == MAP_FAILED ? NULL : p;
	if (f->store && f->slots)
		return 0;
	fprintf(stderr, "kmemsnoop: cannot map the flight recorder's store (%zu bytes): %s\n",
		f->store_len + f->slots_len, strerror(errno));
	unmap_store(f);
	return -1;
}

/* After load (again after a fallback): the triggers' ring. */
static int flight_loaded(struct mode *m)
{
	struct flight *f = flight_of(m);
	struct session *s = m->session;

	flight_release(f);
	f->triggers = ring_buffer__new(bpf_map__fd(s->skel->maps.flight_triggers), on_trigger, f,
				       NULL);
	if (!f->triggers)
		return session_fail(s, "reading the flight recorder's triggers: %s",
				    strerror(errno));
	return 0;
}

/* Every CPU's heartbeat, which copies what it staged into the store. */
static void beat(struct flight *f)
{
	struct session *s = f->mode.session;

	f->next_beat_ns = now_ns() + BEAT_EVERY_NS;
	for (int cpu = 0; cpu < s->ncpus && !f->no_beats; cpu++) {
		int err = session_beat_cpu(s, cpu);

		if (err && err != -ENXIO) {
			f->no_beats = true;
			fprintf(stderr, "kmemsnoop: no heartbeat records (running the heartbeat "
					"program on CPU %d: %s); a dump may miss what a CPU staged "
					"last\n", cpu, strerror(-err));
		}
	}
}

/* The recorder must outlive the OOM kill it records: the OOM killer's
 * last choice where it may be (CAP_SYS_RESOURCE), or where whoever started
 * it made it so (systemd's OOMScoreAdjust=).  Whether it is. */
static bool spare_from_oom_killer(void)
{
	FILE *f = fopen("/proc/self/oom_score_adj", "r+e");
	int adj = 0;
	bool ok;

	if (!f)
		return false;
	if (fscanf(f, "%d", &adj) == 1 && adj == -1000) {
		fclose(f);
		return true;
	}
	ok = !fseek(f, 0, SEEK_SET) && fputs("-1000", f) >= 0;
	return !fclose(f) && ok;
}

static int flight_start(struct mode *m)
{
	struct flight *f = flight_of(m);
	struct session *s = m->session;
	char when[96] = "";

	recheader_set_linear_map(&f->hdr, s->linear_map);
	recheader_set_stack_depth(&f->hdr, s->env->stack_depth);
	recheader_start(&f->hdr);
	f->oom_link = bpf_program__attach_raw_tracepoint(s->skel->progs.flight_oom_victim,
							 "mark_victim");
	if (!f->oom_link) {
		f->oom_link = NULL;
		fprintf(stderr, "kmemsnoop: OOM kills will not trigger dumps (attaching to "
				"oom:mark_victim: %s)\n", strerror(errno));
	}
	beat(f);
	if (!spare_from_oom_killer())
		fprintf(stderr, "kmemsnoop: the OOM killer may choose kmemsnoop itself "
				"(oom_score_adj -1000 needs CAP_SYS_RESOURCE: %s)\n", strerror(errno));
	if (f->has_threshold)
		snprintf(when, sizeof(when), ", %s%c%llu KiB in %s", f->threshold.field,
			 f->threshold.op, (unsigned long long)(f->threshold.bytes >> 10), MEMINFO);
	fprintf(stderr, "kmemsnoop: flight recorder armed: a store of %llu KiB on each of %d CPUs; "
			"an OOM kill, a failed allocation%s or SIGUSR1 (kill -USR1 %d) writes what "
			"it holds into %s\n", (unsigned long long)f->blocks * KMT_FLIGHT_DATA >> 10,
		s->ncpus, when, (int)getpid(), s->env->output_dir);
	return 0;
}

/* The index of block seq of cpu in the store and its slots. */
static size_t block_index(const struct flight *f, int cpu, unsigned long long seq)
{
	return (size_t)cpu * f->blocks + (size_t)(seq % f->blocks);
}

/* Blocks a CPU may add between the look that sizes the copy and the
 * copy: room for them too, and for a group's blocks before the first. */
#define SLACK_BLOCKS (8 + GROUP_BLOCKS_MAX)

/* The oldest block of cpu's not dumped yet that the store still holds. */
static unsigned long long first_to_copy(const struct flight *f, int cpu, unsigned long long head)
{
	unsigned long long seq = head > f->blocks ? head - f->blocks : 0;

	return seq < f->next_seq[cpu] ? f->next_seq[cpu] : seq;
}

static unsigned long long head_of(const struct flight *f, int cpu)
{
	return __atomic_load_n(&f->mode.session->skel->bss->cpu_counters[cpu].flight_head,
			       __ATOMIC_ACQUIRE);
}

/*
 * Memory for the copy, faulted in first: a fault per page in the middle
 * of the copy would slow it, and each is a page allocation the store
 * takes.  Each CPU gets room for what it holds now and SLACK_BLOCKS more.
 * 0, or -1 when out of memory.
 */
static int room_for_copy(const struct flight *f, struct flight_cpu_records *cpus,
			 struct copy_area *area)
{
	int ncpus = f->mode.session->ncpus;
	size_t off = 0;

	area->len = 0;
	for (int cpu = 0; cpu < ncpus; cpu++) {
		unsigned long long head = head_of(f, cpu);
		unsigned long long n = head - first_to_copy(f, cpu, head) + SLACK_BLOCKS;

		if (n > f->blocks)
			n = f->blocks;
		cpus[cpu].cap = n * KMT_FLIGHT_DATA;
		area->len += cpus[cpu].cap;
	}
	area->base = mmap(NULL, area->len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (area->base == MAP_FAILED) {
		area->base = NULL;
		return -1;
	}
	for (int cpu = 0; cpu < ncpus; cpu++) {
		cpus[cpu].data = area->base + off;
		cpus[cpu].len = 0;
		off += cpus[cpu].cap;
	}
	return 0;
}

/* Block seq of cpu appended to r, as a seqlock is read: its number
 * before and after the copy must both be seq.  False when a writer had it
 * or took it meanwhile (the copy is taken back). */
static bool copy_block(const struct flight *f, int cpu, unsigned long long seq,
		       struct flight_cpu_records *r)
{
	size_t i = block_index(f, cpu, seq);
	const struct kmt_flight_slot *slot = &f->slots[i];
	const unsigned char *data = f->store + i * sizeof(struct kmt_flight_block);
	__u32 len;

	if (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) != seq)
		return false;
	len = __atomic_load_n(&slot->len, __ATOMIC_RELAXED);
	if (len > KMT_FLIGHT_DATA || r->len + len > r->cap)
		return false;
	memcpy(r->data + r->len, data, len);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	if (__atomic_load_n(&slot->seq, __ATOMIC_RELAXED) != seq)
		return false;
	r->len += len;
	return true;
}

/*
 * Where cpu's copy starts, at a group's first block (the first to
 * describe what its events name): *seq, the first block not dumped yet,
 * when it starts a group; else its group's first block while the store
 * still holds it (the blocks from there to *seq only describe: an earlier
 * dump has their events); else (overwritten) the next group's, *seq moved
 * there.
 */
static unsigned long long copy_start(const struct flight *f, unsigned long long head,
				     unsigned long long *seq)
{
	unsigned long long oldest = head > f->blocks ? head - f->blocks : 0;
	unsigned long long start = *seq - *seq % f->group;

	if (start >= oldest)
		return start;
	start += f->group;
	*seq = start < head ? start : head;
	return *seq;
}

/*
 * Each CPU's blocks not dumped yet that the store still holds, oldest
 * first, copied into cpus (after the blocks of their group before them,
 * for what those describe: copy_start()); those a writer took are counted
 * in *lost, and *went_round set when some were overwritten before the
 * copy.  What does not fit the room made stays for the next dump.
 */
static void copy_out(struct flight *f, struct flight_cpu_records *cpus, unsigned long long *lost,
		     bool *went_round)
{
	for (int cpu = 0; cpu < f->mode.session->ncpus; cpu++) {
		unsigned long long head = head_of(f, cpu), seq, at;

		seq = first_to_copy(f, cpu, head);
		/* Blocks since the dump before were overwritten. */
		if (seq > f->next_seq[cpu])
			*went_round = true;
		at = copy_start(f, head, &seq);
		for (; at < seq; at++)
			if (!copy_block(f, cpu, at, &cpus[cpu]))
				break;
		cpus[cpu].describe_only = cpus[cpu].len;
		for (; seq < head; seq++) {
			if (cpus[cpu].len + KMT_FLIGHT_DATA > cpus[cpu].cap)
				break;
			if (!copy_block(f, cpu, seq, &cpus[cpu]))
				(*lost)++;
		}
		f->next_seq[cpu] = seq;
	}
}

/* The header's line for what fired the dump. */
static void describe(struct flight *f, const struct kmt_flight_trigger *t, char *buf, size_t size)
{
	struct ksyms *ks;
	char site[160] = "", gfp[160];

	switch (t->kind) {
	case KMT_TRIGGER_OOM:
		if (t->comm[0])
			snprintf(buf, size, "oom: victim pid %u (%.*s)", t->pid, KMT_COMM_LEN,
				 t->comm);
		else
			snprintf(buf, size, "oom: victim pid %u", t->pid);
		return;
	case KMT_TRIGGER_FAILED:
		ks = session_ksyms(f->mode.session);
		if (ks)
			ksyms_format(ks, t->call_site, site, sizeof(site));
		else
			snprintf(site, sizeof(site), "%#llx", (unsigned long long)t->call_site);
		gfp_format(f->gfp, t->gfp_flags, gfp, sizeof(gfp));
		snprintf(buf, size, "failed %s: %llu bytes, gfp_flags=%s, call_site=%s, pid %u (%.*s)",
			 t->type_id < event_class_count ? event_classes[t->type_id].alloc_event :
							  "allocation",
			 (unsigned long long)t->bytes, gfp, site[0] ? site : "?", t->pid,
			 KMT_COMM_LEN, t->comm);
		return;
	case KMT_TRIGGER_THRESHOLD:
		threshold_describe(&f->threshold, buf, size);
		return;
	default:
		snprintf(buf, size, "SIGUSR1");
	}
}


/* The dump's line on stderr. */
static void say_dump(const struct flight_dump *d, const struct flight_dump_result *r,
		     unsigned long long copy_ns, unsigned long long write_ns,
		     unsigned long long overtaken, bool went_round)
{
	double held = r->oldest_ns && r->oldest_ns < d->at_ns ?
			      (double)(d->at_ns - r->oldest_ns) / 1e9 : 0;

	fprintf(stderr, "kmemsnoop: flight recorder dump (%s): %llu events, %.3f s before the "
			"trigger, in %s (copied in %.2f ms, %.1f MiB written in %.0f ms",
		d->what, r->events, r->first_ns && r->first_ns < d->at_ns ?
					   (double)(d->at_ns - r->first_ns) / 1e9 : 0.0,
		r->dir, (double)copy_ns / 1e6, (double)r->bytes / (1 << 20),
		(double)write_ns / 1e6);
	if (d->lost)
		fprintf(stderr, "; %llu events lost since the dump before", d->lost);
	if (overtaken)
		fprintf(stderr, "; %llu blocks overwritten while copied", overtaken);
	fputs(")\n", stderr);
	/* Short of what was asked for, or of the time since the dump before. */
	if (went_round && (!d->window_ns || held * 1e9 < (double)d->window_ns))
		fprintf(stderr, "kmemsnoop: the store was full: this dump reaches %.3f s back; a "
				"larger store (-b) or filters keep more\n", held);
}

/* The BPF programs send one trigger at a time (an allocation failing
 * again and again must not flood the ring): once its dump is done, the
 * next may come. */
static void release_kernel_trigger(struct flight *f, const struct kmt_flight_trigger *t)
{
	if (t->kind == KMT_TRIGGER_OOM || t->kind == KMT_TRIGGER_FAILED)
		__atomic_store_n(&f->mode.session->skel->bss->flight_pending, 0,
				 __ATOMIC_SEQ_CST);
}

/* A trigger's dump: the CPUs' stages into the store, the copy, the
 * recording, the rotation. */
static int dump(struct flight *f, const struct kmt_flight_trigger *t)
{
	struct session *s = f->mode.session;
	const char *names[SRC_COUNT];
	struct flight_cpu_records *cpus = calloc(s->ncpus, sizeof(*cpus));
	struct flight_dump d = { .kind = trigger_words[t->kind < KMT_TRIGGER_KINDS ? t->kind : 0],
				 .at_ns = t->timestamp,
				 .window_ns = (unsigned long long)(s->env->flight_window * 1e9),
				 .ncpus = s->ncpus, .cpu = cpus };
	unsigned long long copy_ns, write_ns, overtaken = 0, lost, lost_bytes;
	struct flight_dump_result res;
	struct copy_area area;
	bool went_round = false;
	char err[512];
	int ret;

	if (!cpus)
		return session_fail(s, "out of memory");
	beat(f);
	if (room_for_copy(f, cpus, &area)) {
		free(cpus);
		return session_fail(s, "out of memory copying the flight recorder's store");
	}
	if (map_store(f)) {
		/* Said; the next trigger tries again. */
		f->dump_failures++;
		__atomic_add_fetch(&s->flight_counts.dump_failures, 1, __ATOMIC_RELAXED);
		munmap(area.base, area.len);
		free(cpus);
		release_kernel_trigger(f, t);
		return 0;
	}
	copy_ns = now_ns();
	copy_out(f, cpus, &overtaken, &went_round);
	copy_ns = now_ns() - copy_ns;
	unmap_store(f);
	if (copy_ns > f->copy_ns_max)
		f->copy_ns_max = copy_ns;
	f->overtaken += overtaken;
	session_staging_losses(s, &lost, &lost_bytes);
	d.lost = lost - f->lost_dumped;
	d.lost_bytes = lost_bytes - f->lost_bytes_dumped;
	f->lost_dumped = lost;
	f->lost_bytes_dumped = lost_bytes;
	describe(f, t, d.what, sizeof(d.what));
	write_ns = now_ns();
	ret = flightdump_write(s->env->output_dir, &d, &f->hdr, f->gfp, names,
			       session_traced_tracepoints(s, names), &res, err, sizeof(err));
	write_ns = now_ns() - write_ns;
	munmap(area.base, area.len);
	free(cpus);
	if (ret) {
		/* A full disk must not end the recorder: said, counted, and the
		 * next trigger tries again. */
		f->dump_failures++;
		__atomic_add_fetch(&s->flight_counts.dump_failures, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "kmemsnoop: flight recorder dump (%s) failed: %s\n", d.what, err);
	} else {
		say_dump(&d, &res, copy_ns, write_ns, overtaken, went_round);
		f->dumps++;
		__atomic_add_fetch(&s->flight_counts.dumps, 1, __ATOMIC_RELAXED);
		f->held_ns_last = res.oldest_ns && res.oldest_ns < d.at_ns ? d.at_ns - res.oldest_ns : 0;
		if (flightdump_rotate(s->env->output_dir, s->env->flight_keep,
				      s->env->flight_keep_bytes, err, sizeof(err)) < 0)
			fprintf(stderr, "kmemsnoop: %s\n", err);
	}
	release_kernel_trigger(f, t);
	return 0;
}

/* The dumps of the triggers held whose time has come (--flight-after after
 * the trigger; all of them at the end), SIGUSR1's first. */
static int dump_fired(struct flight *f, bool final)
{
	static const enum kmt_trigger order[] = { KMT_TRIGGER_SIGNAL, KMT_TRIGGER_OOM,
						  KMT_TRIGGER_FAILED, KMT_TRIGGER_THRESHOLD };
	unsigned long long after_ns = (unsigned long long)(f->mode.session->env->flight_after * 1e9);

	if (signals_pending) {
		struct kmt_flight_trigger t = { .timestamp = now_ns(), .kind = KMT_TRIGGER_SIGNAL };

		f->signals += signals_pending;
		__atomic_add_fetch(&f->mode.session->flight_counts.triggers[KMT_TRIGGER_SIGNAL],
				   signals_pending, __ATOMIC_RELAXED);
		signals_pending = 0;
		hold(f, &t);
	}
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct kmt_flight_trigger t = f->held[order[i]];

		if (!f->is_held[order[i]] || (!final && now_ns() < t.timestamp + after_ns))
			continue;
		f->is_held[order[i]] = false;
		if (dump(f, &t))
			return -1;
	}
	return MODE_OK;
}

/* --flight-when, ten times a second.  A field that cannot be read any more
 * is said once and looked at no more. */
static int check_threshold(struct flight *f)
{
	struct kmt_flight_trigger t = { .kind = KMT_TRIGGER_THRESHOLD };
	unsigned long long now = now_ns();
	int fired;

	if (!f->has_threshold || now < f->next_threshold_ns)
		return MODE_OK;
	f->next_threshold_ns = now + THRESHOLD_EVERY_NS;
	fired = threshold_check(&f->threshold);
	if (fired < 0) {
		fprintf(stderr, "kmemsnoop: --flight-when: %s cannot be read any more: that "
				"trigger is off\n", MEMINFO);
		f->has_threshold = false;
	}
	if (fired <= 0)
		return MODE_OK;
	f->threshold_fired++;
	__atomic_add_fetch(&f->mode.session->flight_counts.triggers[KMT_TRIGGER_THRESHOLD], 1,
			   __ATOMIC_RELAXED);
	t.timestamp = now;
	hold(f, &t);
	threshold_dumped(&f->threshold);
	return MODE_OK;
}

static int flight_wait(struct mode *m, int ms)
{
	struct flight *f = flight_of(m);
	int ret;

	if (now_ns() >= f->next_beat_ns)
		beat(f);
	ret = ring_buffer__poll(f->triggers, ms);
	if (ret < 0 && ret != -EINTR)
		return session_fail(m->session, "reading the flight recorder's triggers: %s",
				    strerror(-ret));
	if (check_threshold(f))
		return -1;
	return dump_fired(f, false);
}

static int flight_finish(struct mode *m, bool final)
{
	struct flight *f = flight_of(m);
	const __u64 *fired = m->session->skel->bss->flight_fired;
	unsigned long long lost, lost_bytes;

	(void)final;
	/* A trigger that fired before the end (the OOM victim of -p: its
	 * death ends the run) still has its dump. */
	ring_buffer__consume(f->triggers);
	if (dump_fired(f, true))
		return -1;
	session_staging_losses(m->session, &lost, &lost_bytes);
	fprintf(stderr, "kmemsnoop: flight recorder: %llu dumps written into %s (%llu failed); "
			"triggers: %llu OOM kills, %llu failed allocations, %llu signals, %llu "
			"thresholds\n",
		f->dumps, m->session->env->output_dir, f->dump_failures,
		(unsigned long long)fired[KMT_TRIGGER_OOM],
		(unsigned long long)fired[KMT_TRIGGER_FAILED], f->signals, f->threshold_fired);
	if (f->dumps)
		fprintf(stderr, "kmemsnoop: the store held %.1f s at the last dump; a copy took "
				"%.1f ms at most\n", (double)f->held_ns_last / 1e9,
			(double)f->copy_ns_max / 1e6);
	if (lost)
		fprintf(stderr, "kmemsnoop: %llu events lost (%llu bytes): a CPU's stages were "
				"full\n", lost, lost_bytes);
	if (f->overtaken)
		fprintf(stderr, "kmemsnoop: %llu blocks were overwritten while a dump copied them: a "
				"larger store (-b) keeps them\n", f->overtaken);
	return 0;
}

static void flight_destroy(struct mode *m)
{
	struct flight *f = flight_of(m);

	signal(SIGUSR1, SIG_DFL);
	bpf_link__destroy(f->oom_link);
	flight_release(f);
	gfp_names_free(f->gfp);
	free(f->next_seq);
	free(f);
}

const struct mode_ops flight_mode = {
	.name = "flight",
	.selected = flight_selected,
	.create = flight_create,
	.wants = flight_wants,
	.configure = flight_configure,
	.loaded = flight_loaded,
	.start = flight_start,
	.wait = flight_wait,
	.finish = flight_finish,
	.destroy = flight_destroy,
};
