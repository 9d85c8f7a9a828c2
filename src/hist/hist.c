// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The --hist mode: sizes the maps, reads them every interval into a
 * hist_acc, and hands each interval to the text printer or the live view.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "util/clock.h"
#include "env.h"
#include "hist.h"
#include "histacc.h"
#include "histfmt.h"
#include "histjson.h"
#include "histtext.h"
#include "live.h"
#include "bpf/kmemsnoop.h"
#include "names/cgpath.h"
#include "names/ksyms.h"
#include "kmemsnoop.skel.h"
#include "mode.h"
#include "session.h"

/* hist_large_pages: large kmallocs outstanding at once whose pages are
 * not counted (more are counted as a page and a kmalloc each). */
#define LARGE_PAGES 16384

/* hist_keys: at most this much memory over all CPUs, within these bounds. */
#define KEYS_MEMORY (32ULL << 20)
#define KEYS_MIN 256
#define KEYS_MAX 16384
#define CACHE_NAMES 4096
#define BATCH 256
/* The first batch's values (per key, one per CPU) within this much memory:
 * on 1024 CPUs 256 keys would take 69 MB.  A bucket with more keys than
 * the batch grows it (grow_batch). */
#define BATCH_MEMORY (4ULL << 20)
#define BATCH_MIN 16
/* hist_front: 1 << bits entries, at most this much memory over all CPUs. */
#define FRONT_MEMORY (16ULL << 20)
#define FRONT_BITS_MIN 6
#define FRONT_BITS_MAX 10

struct hist {
	const struct env *env;
	int ncpus;
	unsigned int kinds;
	struct hist_acc *acc;
	struct hist_interval iv;
	struct ksyms *ksyms; /* the session's */
	struct cgpath *cgroups; /* cgroup ids to paths, on first need */
	struct live *live;
	struct hist_text_opts text;
	unsigned int page_shift;

	int cpu_fd, keys_fd, names_fd, front_fd;
	__u32 front_entries;
	struct kmt_hist_cpu *cpu_buf; /* one per CPU */
	struct kmt_hist_front *front_buf; /* front_entries x ncpus */
	__u32 *front_idx;
	struct kmt_hist_key *key_buf;
	struct kmt_hist_keyed *val_buf; /* BATCH x ncpus */
	__u32 batch;

	double start, last;
	/* Whole-run totals for the closing line. */
	__u64 allocs, frees, failed, missed, untracked;
};

static bool use_live(const struct env *env)
{
	return !env->json && (env->live || isatty(STDOUT_FILENO));
}

/*
 * The kinds of rows to build.  The live view always has two tables: the
 * --hist-by kind (default cache) and call sites (or caches, when the
 * first is call sites).
 */
static unsigned int wanted_kinds(const struct env *env, enum kmt_hist_by *left,
				 enum kmt_hist_by *right)
{
	unsigned int kinds = env->hist_by ? 1U << env->hist_by : 0;

	*left = env->hist_by ? env->hist_by : KMT_BY_CACHE;
	*right = *left == KMT_BY_CALLSITE ? KMT_BY_CACHE : KMT_BY_CALLSITE;
	if (use_live(env))
		kinds |= 1U << *left | 1U << *right;
	return kinds;
}

/* The kinds counted per key in BPF (event and order come from the totals). */
static unsigned int bpf_kinds(unsigned int kinds)
{
	return kinds & (1U << KMT_BY_CACHE | 1U << KMT_BY_CALLSITE | 1U << KMT_BY_COMM |
			1U << KMT_BY_CGROUP);
}

/* The front table: a power of two, at most as many entries as keys. */
static unsigned int front_bits(int ncpus, unsigned long long keys)
{
	unsigned int bits = FRONT_BITS_MAX;

	while (bits > FRONT_BITS_MIN &&
	       (1ULL << bits) * ncpus * sizeof(struct kmt_hist_front) > FRONT_MEMORY)
		bits--;
	while (bits > 0 && (1ULL << bits) > keys)
		bits--;
	return bits;
}

/* hist_keys: --hist-keys, or what fits in KEYS_MEMORY within the bounds. */
static unsigned long long key_entries(const struct env *env, int ncpus)
{
	unsigned long long per_key = (unsigned long long)ncpus * (sizeof(struct kmt_hist_keyed) + 64);
	unsigned long long keys = KEYS_MEMORY / per_key;

	if (env->hist_keys)
		return env->hist_keys;
	return keys < KEYS_MIN ? KEYS_MIN : keys > KEYS_MAX ? KEYS_MAX : keys;
}

void hist_setup_maps(struct kmemsnoop_bpf *skel, const struct env *env, int ncpus,
		     unsigned int kinds)
{
	unsigned long long keys = key_entries(env, ncpus);
	unsigned int bits = front_bits(ncpus, keys);

	skel->rodata->do_hist = true;
	skel->rodata->filtered_free_classes = env->events;
	skel->rodata->hist_value = env->hist_value;
	kinds = bpf_kinds(kinds);
	skel->rodata->hist_key_mask = kinds;
	/* Large kmallocs counted once: their pages, until freed. */
	if ((env->events & EV_KMALLOC) && (env->events & EV_PAGE))
		bpf_map__set_max_entries(skel->maps.hist_large_pages, LARGE_PAGES);
	if (!kinds)
		return;
	bpf_map__set_max_entries(skel->maps.hist_keys, keys);
	skel->rodata->hist_front_bits = bits;
	bpf_map__set_max_entries(skel->maps.hist_front, 1U << bits);
	if (kinds & (1U << KMT_BY_CACHE))
		bpf_map__set_max_entries(skel->maps.hist_cache_names, CACHE_NAMES);
}

static void hist_configure(struct kmemsnoop_bpf *skel, const struct env *env, int ncpus)
{
	enum kmt_hist_by left, right;

	hist_setup_maps(skel, env, ncpus, wanted_kinds(env, &left, &right));
}

/* A cgroup's path; one gone before it was seen, by its id. */
static bool label_cgroup(struct hist *h, __u64 id, char *buf, size_t size)
{
	bool again;

	if (!h->cgroups && !(h->cgroups = cgpath_new(NULL)))
		return false;
	if (cgpath_lookup(h->cgroups, id, buf, size, &again))
		return true;
	if (again)
		return false; /* a cgroup too new for the last walk: next reading */
	snprintf(buf, size, "(cgroup %llu)", (unsigned long long)id);
	return true;
}

static bool label_key(void *ctx, const struct kmt_hist_key *key, char *buf, size_t size)
{
	struct hist *h = ctx;
	struct kmt_hist_cache_name name;

	switch (key->kind) {
	case KMT_BY_CACHE:
		if (key->id <= KMT_HIST_PSEUDO_MAX) {
			hist_pseudo_label(buf, size, key->id, h->page_shift);
			return true;
		}
		/* Written just after the key: may not be there yet. */
		if (bpf_map_lookup_elem(h->names_fd, &key->id, &name))
			return false;
		name.name[sizeof(name.name) - 1] = '\0';
		snprintf(buf, size, "%s", name.name);
		return true;
	case KMT_BY_CALLSITE:
		if (!key->id)
			snprintf(buf, size, "(no call site)");
		else if (h->ksyms)
			ksyms_format(h->ksyms, key->id, buf, size);
		else
			snprintf(buf, size, "0x%llx", (unsigned long long)key->id);
		return true;
	case KMT_BY_COMM:
		hist_comm_label(buf, size, key->id, key->id2);
		return true;
	case KMT_BY_CGROUP:
		return label_cgroup(h, key->id, buf, size);
	default:
		return false;
	}
}

static unsigned int page_shift(void)
{
	long size = sysconf(_SC_PAGESIZE);
	unsigned int shift = 0;

	while (size > 1) {
		size >>= 1;
		shift++;
	}
	return shift;
}

static int alloc_buffers(struct hist *h)
{
	h->cpu_buf = calloc(h->ncpus, sizeof(*h->cpu_buf));
	h->batch = BATCH;
	while (h->batch > BATCH_MIN &&
	       (unsigned long long)h->batch * h->ncpus * sizeof(*h->val_buf) > BATCH_MEMORY)
		h->batch /= 2;
	if (bpf_kinds(h->kinds)) {
		h->key_buf = calloc(h->batch, sizeof(*h->key_buf));
		h->val_buf = calloc((size_t)h->batch * h->ncpus, sizeof(*h->val_buf));
		h->front_buf = calloc((size_t)h->front_entries * h->ncpus, sizeof(*h->front_buf));
		h->front_idx = calloc(h->front_entries, sizeof(*h->front_idx));
		if (!h->key_buf || !h->val_buf || !h->front_buf || !h->front_idx)
			return -1;
	}
	return h->cpu_buf ? 0 : -1;
}

void hist_reader_free(struct hist *h)
{
	if (!h)
		return;
	hist_acc_free(h->acc);
	hist_interval_free(&h->iv);
	free(h->cpu_buf);
	free(h->key_buf);
	free(h->val_buf);
	free(h->front_buf);
	free(h->front_idx);
	cgpath_free(h->cgroups);
	free(h);
}

static int open_view(struct hist *h, enum kmt_hist_by left, enum kmt_hist_by right, char *err,
		     size_t err_size)
{
	struct live_config cfg = {
		.left = left, .right = right, .top = h->env->top_set ? h->env->top : 0,
		.value = h->env->hist_value,
		.interval = h->env->interval,
	};

	h->text.by = h->env->hist_by;
	h->text.top = h->env->top;
	h->text.keyed = bpf_kinds(h->kinds) != 0;
	if (!use_live(h->env))
		return 0;
	h->live = live_open(&cfg, err, err_size);
	if (h->live || h->env->live)
		return h->live ? 0 : -1;
	/* Not asked for by name: a terminal curses cannot drive gets text. */
	fprintf(stderr, "kmemsnoop: %s; printing text instead\n", err);
	err[0] = '\0';
	return 0;
}

struct hist *hist_reader_new(const struct env *env, struct kmemsnoop_bpf *skel, int ncpus,
			     struct ksyms *ksyms, unsigned int kinds, char *err, size_t err_size)
{
	struct hist *h = calloc(1, sizeof(*h));
	struct hist_acc_config cfg;

	if (!h) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	h->env = env;
	h->ncpus = ncpus;
	h->kinds = kinds;
	h->page_shift = page_shift();
	h->cpu_fd = bpf_map__fd(skel->maps.hist_cpu);
	h->keys_fd = bpf_map__fd(skel->maps.hist_keys);
	h->names_fd = bpf_map__fd(skel->maps.hist_cache_names);
	h->front_fd = bpf_map__fd(skel->maps.hist_front);
	h->front_entries = bpf_map__max_entries(skel->maps.hist_front);
	if (h->kinds & (1U << KMT_BY_CALLSITE))
		h->ksyms = ksyms;
	cfg = (struct hist_acc_config){
		.kinds = h->kinds, .value = env->hist_value, .page_shift = h->page_shift,
		.label = label_key, .label_ctx = h,
	};
	h->acc = hist_acc_new(&cfg);
	if (!h->acc || alloc_buffers(h)) {
		snprintf(err, err_size, "out of memory");
		hist_reader_free(h);
		return NULL;
	}
	h->start = h->last = now_seconds();
	return h;
}

static struct hist *hist_open(const struct env *env, struct kmemsnoop_bpf *skel, int ncpus,
			      struct ksyms *ksyms, char *err, size_t err_size)
{
	enum kmt_hist_by left, right;
	unsigned int kinds = wanted_kinds(env, &left, &right);
	struct hist *h = hist_reader_new(env, skel, ncpus, ksyms, kinds, err, err_size);

	if (h && open_view(h, left, right, err, err_size)) {
		hist_reader_free(h);
		return NULL;
	}
	return h;
}

static int hist_wait(struct hist *h, int ms)
{
	if (h->live)
		return live_wait(h->live, ms) ? MODE_QUIT : MODE_OK;
	/* A signal cuts it short: the caller looks at its flags. */
	poll(NULL, 0, ms);
	return MODE_OK;
}

static int read_cpus(struct hist *h, char *err, size_t err_size)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(h->cpu_fd, &zero, h->cpu_buf)) {
		snprintf(err, err_size, "reading the histogram counters: %s", strerror(errno));
		return -1;
	}
	for (int cpu = 0; cpu < h->ncpus; cpu++)
		hist_acc_add_cpu(h->acc, &h->cpu_buf[cpu]);
	return 0;
}

/* Each key's per-CPU values summed, then merged into the reading. */
static int add_batch(struct hist *h, __u32 n)
{
	for (__u32 i = 0; i < n; i++) {
		const struct kmt_hist_keyed *v = &h->val_buf[(size_t)i * h->ncpus];
		struct kmt_hist_keyed sum = v[0];

		for (int cpu = 1; cpu < h->ncpus; cpu++) {
			sum.bytes += v[cpu].bytes;
			for (int s = 0; s < KMT_HIST_SLOTS; s++)
				sum.slots[s] += v[cpu].slots[s];
		}
		if (hist_acc_add_key(h->acc, &h->key_buf[i], &sum))
			return -1;
	}
	return 0;
}

/* A bucket holding more keys than fit in one batch: a bigger batch. */
static int grow_batch(struct hist *h)
{
	__u32 batch = h->batch * 2;
	void *keys = realloc(h->key_buf, batch * sizeof(*h->key_buf));
	void *vals;

	if (!keys)
		return -1;
	h->key_buf = keys;
	vals = realloc(h->val_buf, (size_t)batch * h->ncpus * sizeof(*h->val_buf));
	if (!vals)
		return -1;
	h->val_buf = vals;
	h->batch = batch;
	return 0;
}

static int read_keys(struct hist *h, char *err, size_t err_size)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 token = 0, n;
	bool first = true;

	if (!bpf_kinds(h->kinds))
		return 0;
	for (;;) {
		int ret;

		n = h->batch;
		ret = bpf_map_lookup_batch(h->keys_fd, first ? NULL : &token, &token, h->key_buf,
					   h->val_buf, &n, &opts);
		if (ret && errno == ENOSPC && !grow_batch(h))
			continue;
		if (ret && errno != ENOENT) {
			snprintf(err, err_size, "reading the per-key counters: %s", strerror(errno));
			return -1;
		}
		if (add_batch(h, n)) {
			snprintf(err, err_size, "out of memory");
			return -1;
		}
		if (ret)
			return 0; /* ENOENT: that was the last batch */
		first = false;
	}
}

/* The kernel's ENOTSUPP, which libc does not name. */
#define KERNEL_ENOTSUPP 524

/*
 * Per-CPU arrays have no batch lookup on some kernels (5.10; 6.1 has it):
 * one lookup per entry there, into the same layout.
 */
static int lookup_front_each(struct hist *h, __u32 *n)
{
	for (__u32 i = 0; i < h->front_entries; i++)
		if (bpf_map_lookup_elem(h->front_fd, &i, &h->front_buf[(size_t)i * h->ncpus]))
			return -1;
	*n = h->front_entries;
	return 0;
}

/* The front table: every CPU's claimed entries, as level-0 keys. */
static int read_front(struct hist *h, char *err, size_t err_size)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 n = h->front_entries, token;
	int ret;

	if (!bpf_kinds(h->kinds))
		return 0;
	/* An array fits in one batch: 0 or ENOENT both mean all of it. */
	ret = bpf_map_lookup_batch(h->front_fd, NULL, &token, h->front_idx, h->front_buf, &n, &opts);
	if (ret && errno == KERNEL_ENOTSUPP)
		ret = lookup_front_each(h, &n);
	if (ret && errno != ENOENT) {
		snprintf(err, err_size, "reading the per-key counters: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < (size_t)n * h->ncpus; i++) {
		const struct kmt_hist_front *e = &h->front_buf[i];
		struct kmt_hist_key key = { .id = e->tag - 1, .id2 = e->id2, .kind = e->kind };

		if (e->tag && hist_acc_add_key(h->acc, &key, &e->v)) {
			snprintf(err, err_size, "out of memory");
			return -1;
		}
	}
	return 0;
}

static void add_to_run_totals(struct hist *h)
{
	const struct hist_interval *iv = &h->iv;

	h->allocs += hist_total(iv->allocs);
	h->frees += hist_total(iv->frees);
	h->failed += hist_total(iv->failed);
	h->missed += iv->missed;
	for (int k = 0; k < KMT_BY_COUNT; k++)
		h->untracked += iv->untracked[k];
}

const struct hist_interval *hist_read(struct hist *h, unsigned long long missed, char *err,
				     size_t err_size)
{
	double now = now_seconds();

	hist_acc_begin(h->acc);
	if (read_cpus(h, err, err_size) || read_front(h, err, err_size) ||
	    read_keys(h, err, err_size))
		return NULL;
	if (hist_acc_end(h->acc, missed, &h->iv)) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	clock_gettime(CLOCK_REALTIME, &h->iv.end);
	h->iv.seconds = now - h->last;
	h->last = now;
	add_to_run_totals(h);
	return &h->iv;
}

static int hist_tick(struct hist *h, unsigned long long missed, char *err, size_t err_size)
{
	int ret;

	if (!hist_read(h, missed, err, err_size))
		return -1;
	if (h->live) {
		live_show(h->live, &h->iv);
		return 0;
	}
	ret = h->env->json ? hist_json_print(stdout, &h->iv, h->env->hist_by, h->env->top) :
			     hist_text_print(stdout, &h->iv, &h->text);
	if (ret == -EPIPE)
		return MODE_END;
	if (ret) {
		snprintf(err, err_size, "writing output: %s", strerror(-ret));
		return -1;
	}
	return 0;
}

static void hist_close(struct hist *h)
{
	if (!h)
		return;
	live_close(h->live);
	fprintf(stderr, "kmemsnoop: %llu allocations (%llu failed), %llu frees in %.1f s; %llu events "
			"missed", (unsigned long long)h->allocs, (unsigned long long)h->failed,
		(unsigned long long)h->frees, h->last - h->start, (unsigned long long)h->missed);
	if (bpf_kinds(h->kinds))
		fprintf(stderr, ", %llu allocations not counted by key (key table full)",
			(unsigned long long)h->untracked);
	fputc('\n', stderr);
	hist_reader_free(h);
}

/* --- the mode ---------------------------------------------------------------- */

struct hist_mode {
	struct mode mode;
	struct hist *h;
	bool output_gone;
};

static struct hist_mode *hist_mode_of(struct mode *m)
{
	return (struct hist_mode *)m;
}

static bool hist_selected(const struct env *env)
{
	return env->hist;
}

static struct mode *hist_create(struct session *s)
{
	struct hist_mode *hm = calloc(1, sizeof(*hm));

	if (!hm) {
		session_fail(s, "out of memory");
		return NULL;
	}
	hm->mode.interval = s->env->interval;
	return &hm->mode;
}

static void hist_wants(const struct mode *m, struct bpf_wants *w)
{
	const struct env *env = m->session->env;

	w->alloc_classes |= env->events;
	w->free_classes |= env->events;
	w->sized_frees = true;
}

static void hist_mode_configure(struct mode *m, struct kmemsnoop_bpf *skel)
{
	hist_configure(skel, m->session->env, m->session->ncpus);
}

/* Before 6.1 kmem_cache_alloc does not say which cache it allocates from. */
static void note_kernel_limits(const struct session *s)
{
	if ((s->env->events & EV_CACHE) && s->env->hist_by == KMT_BY_CACHE &&
	    s->kf.cache_alloc_args != KMT_CACHE_ALLOC_CACHE)
		fprintf(stderr, "kmemsnoop: this kernel's kmem_cache_alloc events do not say "
				"which cache: slab allocations are counted by object size, "
				"(cache size N)\n");
}

static int hist_start(struct mode *m)
{
	struct hist_mode *hm = hist_mode_of(m);
	struct session *s = m->session;

	note_kernel_limits(s);
	hm->h = hist_open(s->env, s->skel, s->ncpus, session_ksyms(s), s->err, sizeof(s->err));
	if (!hm->h)
		return -1;
	/* Other modes' text would land on the live view's screen. */
	s->terminal_taken = hm->h->live != NULL;
	return 0;
}

static int hist_mode_wait(struct mode *m, int ms)
{
	return hist_wait(hist_mode_of(m)->h, ms);
}

static int hist_mode_tick(struct mode *m)
{
	struct hist_mode *hm = hist_mode_of(m);
	struct session *s = m->session;
	int ret = hist_tick(hm->h, session_missed(s), s->err, sizeof(s->err));

	if (ret == MODE_END)
		hm->output_gone = true;
	return ret;
}

/* The time since the last tick is shown too, unless COUNT ended the run. */
static int hist_finish(struct mode *m, bool final)
{
	struct hist_mode *hm = hist_mode_of(m);
	struct session *s = m->session;
	int ret = 0;

	if (!hm->h)
		return 0;
	if (final && !hm->output_gone)
		ret = hist_tick(hm->h, session_missed(s), s->err, sizeof(s->err)) < 0 ? -1 : 0;
	hist_close(hm->h);
	hm->h = NULL;
	return ret;
}

/* A run that never finished (an error): no summary. */
static void hist_destroy(struct mode *m)
{
	struct hist_mode *hm = hist_mode_of(m);

	if (hm->h) {
		live_close(hm->h->live);
		hist_reader_free(hm->h);
	}
	free(hm);
}

const struct mode_ops hist_mode = {
	.name = "hist",
	.selected = hist_selected,
	.create = hist_create,
	.wants = hist_wants,
	.configure = hist_mode_configure,
	.start = hist_start,
	.wait = hist_mode_wait,
	.tick = hist_mode_tick,
	.finish = hist_finish,
	.destroy = hist_destroy,
};
