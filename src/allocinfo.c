// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --allocinfo in user space.  The BPF side (src/bpf/allocinfo.bpf.h) keeps
 * per-CPU bytes and calls per site key; here the CPUs' shares are summed,
 * each key is turned into its tag once (cached: call sites and stacks do
 * not change), rows with the same tag are merged (two call sites on one
 * source line are one line, as in the kernel), and the table is printed.
 */
#include "allocinfo.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloctag.h"
#include "env.h"
#include "kmemsnoop.h"
#include "kmemsnoop.skel.h"
#include "mode.h"
#include "session.h"

/* Call sites, plus the stacks (pages', or all with --stacks) on top. */
#define AI_CALL_SITES 8192
#define TAG_MAX 1024
#define FRAME_MAX 512

const char allocinfo_header[] = "allocinfo - version: 1.0\n"
				"#     <size>  <calls> <tag info>\n";

/* What a site key stands for, worked out once. */
struct site {
	__u64 key;
	char *tag;
	char *frames; /* --stacks: one indented line per frame */
	char *folded; /* --folded: "outer;...;inner" */
};

struct row {
	__u64 key;
	const struct site *site; /* set once every site exists: growing moves them */
	long long bytes;
	long long calls;
};

struct allocinfo {
	const struct env *env;
	int ncpus;
	bool atomics; /* ai_site_ids and ai_counts, else ai_sites */
	struct alloctag *tags;
	/* Open addressing, keyed by site key; grows at half full. */
	struct site *sites;
	size_t nsites, cap;
	bool symbols_fresh; /* kallsyms read again since the programs loaded */
};

/* --- formatting --------------------------------------------------------------- */

size_t allocinfo_format_line(char *buf, size_t size, long long bytes, long long calls,
			     const char *tag)
{
	int n;

	/* lib/alloc_tag.c prints calls with %8llu; they are never negative
	 * in total, and if they were, a huge unsigned number would hide it. */
	if (calls >= 0)
		n = snprintf(buf, size, "%12lli %8llu %s \n", bytes, (unsigned long long)calls, tag);
	else
		n = snprintf(buf, size, "%12lli %8lli %s \n", bytes, calls, tag);
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

/* --- set-up --------------------------------------------------------------------- */

struct allocinfo *allocinfo_new(const struct env *env, int ncpus, bool atomics, char *err,
				size_t err_size)
{
	struct allocinfo *ai = calloc(1, sizeof(*ai));

	if (!ai) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	ai->env = env;
	ai->ncpus = ncpus;
	ai->atomics = atomics;
	ai->tags = alloctag_new(env->vmlinux, env->verbose, err, err_size);
	if (!ai->tags) {
		free(ai);
		return NULL;
	}
	return ai;
}

void allocinfo_free(struct allocinfo *ai)
{
	if (!ai)
		return;
	for (size_t i = 0; i < ai->cap; i++) {
		free(ai->sites[i].tag);
		free(ai->sites[i].frames);
		free(ai->sites[i].folded);
	}
	free(ai->sites);
	alloctag_free(ai->tags);
	free(ai);
}

static bool uses_stacks(const struct env *env)
{
	return env->ai_stacks || (env->events & EV_PAGE);
}

/* Buckets of ai_table for max_ptrs pointers: KMT_AI_SLOTS_PER_PTR slots
 * each, at least, in a power of two of buckets. */
static __u32 table_buckets(unsigned long long max_ptrs)
{
	unsigned long long slots = max_ptrs * KMT_AI_SLOTS_PER_PTR;
	__u32 n = 1;

	while ((unsigned long long)n * KMT_AI_BUCKET_SLOTS < slots)
		n *= 2;
	return n;
}

void allocinfo_configure(const struct env *env, struct kmemsnoop_bpf *skel, bool atomics)
{
	struct kmemsnoop_bpf__rodata *ro = skel->rodata;
	__u32 sites = (env->ai_stacks ? 0 : AI_CALL_SITES) +
		      (uses_stacks(env) ? env->ai_max_stacks : 0);

	ro->do_allocinfo = true;
	ro->ai_total = env->ai_total;
	ro->ai_stacks = env->ai_stacks;
	if (atomics) {
		__u32 buckets = env->ai_total ? 1 : table_buckets(env->ai_max_ptrs);

		bpf_map__set_max_entries(skel->maps.ai_table, buckets);
		ro->ai_bucket_mask = buckets - 1;
		ro->ai_bucket_shift = 64 - (buckets > 1 ? __builtin_ctz(buckets) : 1);
		bpf_map__set_max_entries(skel->maps.ai_site_ids, sites);
		bpf_map__set_max_entries(skel->maps.ai_counts, sites);
		ro->ai_max_sites = sites;
	} else {
		if (!env->ai_total)
			bpf_map__set_max_entries(skel->maps.ai_ptrs, env->ai_max_ptrs);
		bpf_map__set_max_entries(skel->maps.ai_sites, sites);
	}
	if (uses_stacks(env)) {
		bpf_map__set_max_entries(skel->maps.ai_stack_map, env->ai_max_stacks);
		bpf_map__set_value_size(skel->maps.ai_stack_map,
					(env->ai_stacks ? KMT_AI_MAX_FRAMES : KMT_AI_PAGE_FRAMES) *
						sizeof(__u64));
	}
}

/* --- site keys to tags ---------------------------------------------------------- */

static size_t slot_of(const struct allocinfo *ai, __u64 key)
{
	size_t i = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 20) & (ai->cap - 1);

	while (ai->sites[i].tag && ai->sites[i].key != key)
		i = (i + 1) & (ai->cap - 1);
	return i;
}

static int grow(struct allocinfo *ai)
{
	struct site *old = ai->sites;
	size_t old_cap = ai->cap;

	ai->cap = old_cap ? old_cap * 2 : 1024;
	ai->sites = calloc(ai->cap, sizeof(*ai->sites));
	if (!ai->sites) {
		ai->sites = old;
		ai->cap = old_cap;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].tag)
			ai->sites[slot_of(ai, old[i].key)] = old[i];
	free(old);
	return 0;
}

/* The frames of stack id in ips; their number. */
static int read_stack(struct kmemsnoop_bpf *skel, __u32 id, unsigned long long *ips, int max)
{
	int n = 0;

	memset(ips, 0, max * sizeof(*ips));
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.ai_stack_map), &id, ips))
		return 0;
	while (n < max && ips[n])
		n++;
	return n;
}

static char *frames_text(struct allocinfo *ai, const unsigned long long *ips, int first, int n)
{
	size_t cap = (size_t)(n - first + 1) * FRAME_MAX, len = 0;
	char *text = malloc(cap);

	if (!text)
		return NULL;
	text[0] = '\0';
	for (int i = first; i < n; i++) {
		len += (size_t)snprintf(text + len, cap - len, "        ");
		len += alloctag_frame(ai->tags, ips[i], text + len, cap - len - 1);
		text[len++] = '\n';
		text[len] = '\0';
	}
	return text;
}

/* Outermost first, as flame graph tools want it. */
static char *folded_text(struct allocinfo *ai, const unsigned long long *ips, int first, int n)
{
	size_t cap = (size_t)(n - first + 1) * FRAME_MAX, len = 0;
	char *text = malloc(cap);

	if (!text)
		return NULL;
	text[0] = '\0';
	for (int i = n - 1; i >= first; i--) {
		if (i != n - 1)
			text[len++] = ';';
		len += alloctag_func(ai->tags, ips[i], text + len, cap - len - 1);
	}
	text[len] = '\0';
	return text;
}

static int describe_stack(struct allocinfo *ai, struct kmemsnoop_bpf *skel, struct site *s)
{
	unsigned long long ips[KMT_AI_MAX_FRAMES];
	int max = ai->env->ai_stacks ? KMT_AI_MAX_FRAMES : KMT_AI_PAGE_FRAMES;
	int n = read_stack(skel, (__u32)s->key, ips, max);
	int first = alloctag_first_frame(ai->tags, ips, n);
	int call = alloctag_call_frame(ai->tags, ips, n);
	char tag[TAG_MAX];

	/* A stack of allocator frames only (cut short): its outermost. */
	if (call == n)
		call = n - 1;
	if (call < 0)
		snprintf(tag, sizeof(tag), "stack:%llu func:unknown", (unsigned long long)s->key);
	else
		alloctag_site(ai->tags, ips[call], tag, sizeof(tag));
	s->tag = strdup(tag);
	if (ai->env->ai_stacks) {
		s->frames = frames_text(ai, ips, first, n);
		s->folded = folded_text(ai, ips, first, n);
		if (!s->frames || !s->folded)
			return -ENOMEM;
	}
	return s->tag ? 0 : -ENOMEM;
}

static const struct site *site_of(struct allocinfo *ai, struct kmemsnoop_bpf *skel, __u64 key)
{
	char tag[TAG_MAX];
	struct site *s;

	if ((ai->nsites + 1) * 2 > ai->cap && grow(ai))
		return NULL;
	s = &ai->sites[slot_of(ai, key)];
	if (s->tag)
		return s;
	s->key = key;
	if (key < KMT_AI_STACK_KEY_LIMIT) {
		if (describe_stack(ai, skel, s)) {
			free(s->tag);
			free(s->frames);
			free(s->folded);
			memset(s, 0, sizeof(*s));
			return NULL;
		}
	} else {
		alloctag_site(ai->tags, key, tag, sizeof(tag));
		s->tag = strdup(tag);
		if (!s->tag)
			return NULL;
	}
	ai->nsites++;
	return s;
}

/* --- reading the maps -------------------------------------------------------------- */

/* The counts of a site key, per CPU: from ai_counts at its index (with
 * atomics), or ai_sites. */
static int read_counts(const struct allocinfo *ai, struct kmemsnoop_bpf *skel, __u64 key,
		       struct kmt_ai_count *per_cpu)
{
	__u32 idx;

	if (!ai->atomics)
		return bpf_map_lookup_elem(bpf_map__fd(skel->maps.ai_sites), &key, per_cpu);
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.ai_site_ids), &key, &idx))
		return -1;
	return bpf_map_lookup_elem(bpf_map__fd(skel->maps.ai_counts), &idx, per_cpu);
}

/* Every site key and its counts, summed over the CPUs. */
static int read_rows(struct allocinfo *ai, struct kmemsnoop_bpf *skel, struct row **rows_out,
		     size_t *n_out)
{
	int fd = bpf_map__fd(ai->atomics ? skel->maps.ai_site_ids : skel->maps.ai_sites);
	struct kmt_ai_count *per_cpu = calloc(ai->ncpus, sizeof(*per_cpu));
	struct row *rows = NULL;
	size_t n = 0, cap = 0;
	__u64 key, *prev = NULL;
	int err = 0;

	if (!per_cpu)
		return -ENOMEM;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (read_counts(ai, skel, key, per_cpu))
			continue;
		if (n == cap) {
			struct row *r = realloc(rows, (cap = cap ? cap * 2 : 1024) * sizeof(*rows));

			if (!r) {
				err = -ENOMEM;
				break;
			}
			rows = r;
		}
		rows[n] = (struct row){ .key = key };
		if (!site_of(ai, skel, key)) {
			err = -ENOMEM;
			break;
		}
		for (int cpu = 0; cpu < ai->ncpus; cpu++) {
			rows[n].bytes += per_cpu[cpu].bytes;
			rows[n].calls += per_cpu[cpu].calls;
		}
		n++;
	}
	free(per_cpu);
	if (err) {
		free(rows);
		return err;
	}
	for (size_t i = 0; i < n; i++)
		rows[i].site = &ai->sites[slot_of(ai, rows[i].key)];
	*rows_out = rows;
	*n_out = n;
	return 0;
}

static int by_tag(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return strcmp(x->site->tag, y->site->tag);
}

static int by_bytes(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	return by_tag(a, b);
}

static int by_folded(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return strcmp(x->site->folded, y->site->folded);
}

/* Sorted rows whose text (tag or folded stack) is the same become one. */
static size_t merge_same(struct row *rows, size_t n, bool folded)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		if (out && !(folded ? by_folded : by_tag)(&rows[out - 1], &rows[i])) {
			rows[out - 1].bytes += rows[i].bytes;
			rows[out - 1].calls += rows[i].calls;
			continue;
		}
		rows[out++] = rows[i];
	}
	return out;
}

static void read_stats(struct allocinfo *ai, struct kmemsnoop_bpf *skel, struct kmt_ai_stats *sum)
{
	struct kmt_ai_stats *per_cpu = calloc(ai->ncpus, sizeof(*per_cpu));
	__u32 zero = 0;

	memset(sum, 0, sizeof(*sum));
	if (!per_cpu || bpf_map_lookup_elem(bpf_map__fd(skel->maps.ai_stats), &zero, per_cpu)) {
		free(per_cpu);
		return;
	}
	for (int cpu = 0; cpu < ai->ncpus; cpu++) {
		const __u64 *src = (const __u64 *)&per_cpu[cpu];
		__u64 *dst = (__u64 *)sum;

		for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
			dst[i] += src[i];
	}
	free(per_cpu);
}

/* --- printing -------------------------------------------------------------------- */

/* What makes the numbers below smaller than the truth, as "#" lines. */
static void print_losses(FILE *out, const struct kmt_ai_stats *st, unsigned long long misses)
{
	if (st->ptrs_full)
		fprintf(out, "# kmemsnoop: not counted: %llu allocations (%llu bytes): the pointer "
			     "table was full (--max-ptrs)\n",
			(unsigned long long)st->ptrs_full, (unsigned long long)st->ptrs_full_bytes);
	if (st->sites_full)
		fprintf(out, "# kmemsnoop: not counted: %llu allocations (%llu bytes): the site "
			     "table was full\n",
			(unsigned long long)st->sites_full, (unsigned long long)st->sites_full_bytes);
	if (st->stack_failed)
		fprintf(out, "# kmemsnoop: not counted: %llu allocations (%llu bytes): their stack "
			     "found no room in the stack table (--max-stacks)\n",
			(unsigned long long)st->stack_failed,
			(unsigned long long)st->stack_failed_bytes);
	if (misses)
		fprintf(out, "# kmemsnoop: %llu events of any process not seen: they happened while "
			     "the same BPF program ran on their CPU (interrupts)\n", misses);
	if (st->replaced)
		fprintf(out, "# kmemsnoop: %llu allocations (%llu bytes) were counted as freed when "
			     "their address was allocated again: their free was not seen\n",
			(unsigned long long)st->replaced, (unsigned long long)st->replaced_bytes);
}

static void print_folded(FILE *out, const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].bytes > 0 && rows[i].site->folded[0])
			fprintf(out, "%s %lld\n", rows[i].site->folded, rows[i].bytes);
}

static void print_table(FILE *out, const struct row *rows, size_t n, bool stacks)
{
	char line[TAG_MAX + 64];

	for (size_t i = 0; i < n; i++) {
		allocinfo_format_line(line, sizeof(line), rows[i].bytes, rows[i].calls,
				      rows[i].site->tag);
		fputs(line, out);
		if (stacks)
			fputs(rows[i].site->frames, out);
	}
}

int allocinfo_print(struct allocinfo *ai, struct kmemsnoop_bpf *skel, unsigned long long misses,
		    FILE *out)
{
	const struct env *env = ai->env;
	struct kmt_ai_stats st;
	struct row *rows = NULL;
	size_t n = 0;
	int err;

	/* Stacks start in kmemsnoop's own BPF programs: name them. */
	if (!ai->symbols_fresh) {
		alloctag_refresh(ai->tags);
		ai->symbols_fresh = true;
	}
	err = read_rows(ai, skel, &rows, &n);

	if (err)
		return err;
	read_stats(ai, skel, &st);
	if (env->ai_folded) {
		qsort(rows, n, sizeof(*rows), by_folded);
		n = merge_same(rows, n, true);
		/* Folded lines are for tools: what is missing goes to stderr. */
		print_losses(stderr, &st, misses);
		print_folded(out, rows, n);
	} else {
		qsort(rows, n, sizeof(*rows), by_tag);
		if (!env->ai_stacks)
			n = merge_same(rows, n, false);
		else
			qsort(rows, n, sizeof(*rows), by_bytes);
		fputs(allocinfo_header, out);
		print_losses(out, &st, misses);
		print_table(out, rows, n, env->ai_stacks);
	}
	free(rows);
	if (fflush(out) || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}

void allocinfo_summary(struct allocinfo *ai, struct kmemsnoop_bpf *skel)
{
	static const char *const type_names[3] = { "kmalloc", "cache", "page" };
	static const unsigned int type_class[3] = { EV_KMALLOC, EV_CACHE, EV_PAGE };
	struct kmt_ai_stats st;
	char frees[256] = "";
	size_t len = 0;

	read_stats(ai, skel, &st);
	fprintf(stderr, "kmemsnoop: %zu call sites or stacks\n", ai->nsites);
	for (int i = 0; i < 3; i++)
		if (ai->env->events & type_class[i] && !ai->env->ai_total)
			len += (size_t)snprintf(frees + len, sizeof(frees) - len, "%s%s %llu",
						len ? ", " : "", type_names[i],
						(unsigned long long)st.untracked_frees[i]);
	if (len)
		fprintf(stderr, "kmemsnoop: frees of memory not allocated in the session, or not "
				"by what the filters select (ignored): %s\n", frees);
	if (st.ptrs_full || st.sites_full || st.stack_failed)
		fprintf(stderr, "kmemsnoop: not counted: %llu allocations (pointer table full), "
				"%llu (site table full), %llu (no room for their stack)\n",
			(unsigned long long)st.ptrs_full, (unsigned long long)st.sites_full,
			(unsigned long long)st.stack_failed);
	if (st.order_mismatch)
		fprintf(stderr, "kmemsnoop: %llu page frees of another order than their "
				"allocation (split pages): counted as freeing the whole allocation\n",
			(unsigned long long)st.order_mismatch);
}

/* --- the mode ---------------------------------------------------------------- */

struct allocinfo_mode {
	struct mode mode;
	struct allocinfo *ai;
	bool output_gone; /* stdout's reader went away (EPIPE) */
	bool deferred;    /* a tick found the terminal taken: print at the end */
};

static struct allocinfo_mode *allocinfo_mode_of(struct mode *m)
{
	return (struct allocinfo_mode *)m;
}

static bool allocinfo_selected(const struct env *env)
{
	return env->allocinfo;
}

static struct mode *allocinfo_create(struct session *s)
{
	struct allocinfo_mode *am = calloc(1, sizeof(*am));

	if (!am) {
		session_fail(s, "out of memory");
		return NULL;
	}
	am->ai = allocinfo_new(s->env, s->ncpus, s->kf.atomic_fetch, s->err, sizeof(s->err));
	if (!am->ai) {
		free(am);
		return NULL;
	}
	/* Printed at the end unless an INTERVAL was given. */
	am->mode.interval = s->env->interval_given ? s->env->interval : 0;
	return &am->mode;
}

static void allocinfo_wants(const struct mode *m, struct bpf_wants *w)
{
	const struct env *env = m->session->env;

	w->alloc_classes |= env->events;
	if (env->ai_total)
		return; /* only allocations are counted */
	/* kfree() frees slab cache objects too: either free serves both. */
	if (env->events & (EV_KMALLOC | EV_CACHE))
		w->free_classes |= EV_KMALLOC | EV_CACHE;
	w->free_classes |= env->events & EV_PAGE;
}

static void allocinfo_mode_configure(struct mode *m, struct kmemsnoop_bpf *skel)
{
	allocinfo_configure(m->session->env, skel, m->session->kf.atomic_fetch);
}

static int print_now(struct allocinfo_mode *am)
{
	struct session *s = am->mode.session;
	int ret = allocinfo_print(am->ai, s->skel, session_missed(s), stdout);

	if (ret == -EPIPE) {
		am->output_gone = true;
		return MODE_END;
	}
	if (ret)
		return session_fail(s, "writing output: %s", strerror(-ret));
	return MODE_OK;
}

static int allocinfo_tick(struct mode *m)
{
	struct allocinfo_mode *am = allocinfo_mode_of(m);

	if (m->session->terminal_taken) {
		am->deferred = true;
		return MODE_OK;
	}
	return print_now(am);
}

/* The table at the end, unless COUNT ended the run with one. */
static int allocinfo_finish(struct mode *m, bool final)
{
	struct allocinfo_mode *am = allocinfo_mode_of(m);
	int ret = 0;

	if ((final || am->deferred) && !am->output_gone)
		ret = print_now(am) < 0 ? -1 : 0;
	allocinfo_summary(am->ai, m->session->skel);
	return ret;
}

static void allocinfo_destroy(struct mode *m)
{
	struct allocinfo_mode *am = allocinfo_mode_of(m);

	allocinfo_free(am->ai);
	free(am);
}

const struct mode_ops allocinfo_mode = {
	.name = "allocinfo",
	.selected = allocinfo_selected,
	.create = allocinfo_create,
	.wants = allocinfo_wants,
	.configure = allocinfo_mode_configure,
	.tick = allocinfo_tick,
	.finish = allocinfo_finish,
	.destroy = allocinfo_destroy,
};
