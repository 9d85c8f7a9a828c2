// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The --allocinfo mode.  The BPF side (src/bpf/allocinfo.bpf.h) keeps
 * per-CPU bytes and calls per site key; here the maps are sized before
 * load and read at each tick, the CPUs' shares summed, and each key handed
 * to the table (aitable.c), which asks for its tag (alloctag.c: call
 * sites, or the caller found in a stack) once and prints.
 */
#include "allocinfo.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "aitable.h"
#include "pagesite.h"
#include "pprof.h"
#include "bpf/kmemsnoop.h"
#include "kernel/sources.h"
#include "names/alloctag.h"
#include "names/ksyms.h"
#include "util/json.h"
#include "env.h"
#include "kmemsnoop.skel.h"
#include "mode.h"
#include "session.h"

/* Call sites, plus the stacks (pages', or all with --stacks) on top. */
#define AI_CALL_SITES 8192
#define TAG_MAX 1024
#define FRAME_MAX 512

struct allocinfo {
	const struct env *env;
	int ncpus;
	bool atomics; /* ai_site_ids and ai_counts, else ai_sites */
	struct alloctag *tags;
	struct aitable *table;
	struct kmemsnoop_bpf *skel; /* of the reading in progress */
	bool symbols_fresh; /* kallsyms read again since the programs loaded */
	struct pprof *pprof; /* --pprof, else NULL */
	bool areas; /* vmalloc areas counted: their pages are not (allocinfo_count_areas) */
};

/* --- set-up --------------------------------------------------------------------- */

static int describe(void *ctx, __u64 key, struct ai_site_text *text);

struct allocinfo *allocinfo_new(const struct env *env, int ncpus, bool atomics,
				struct ksyms *ksyms, char *err, size_t err_size)
{
	struct allocinfo *ai = calloc(1, sizeof(*ai));
	struct aitable_config cfg = {
		.stacks = env->ai_stacks, .folded = env->ai_folded, .describe = describe, .ctx = ai,
	};

	if (!ai || !(ai->table = aitable_new(&cfg))) {
		snprintf(err, err_size, "out of memory");
		free(ai);
		return NULL;
	}
	ai->env = env;
	ai->ncpus = ncpus;
	ai->atomics = atomics;
	ai->tags = alloctag_new(env->vmlinux, ksyms, env->verbose, err, err_size);
	/* =total traces no frees: nothing is known to be in use. */
	if (!ai->tags || (env->pprof && !(ai->pprof = pprof_new(!env->ai_total, err, err_size)))) {
		allocinfo_free(ai);
		return NULL;
	}
	return ai;
}

void allocinfo_use_symbols(struct allocinfo *ai, struct ksyms *ksyms)
{
	if (!ksyms_count(ksyms))
		return;
	alloctag_use_symbols(ai->tags, ksyms);
	ai->symbols_fresh = true;
}

void allocinfo_free(struct allocinfo *ai)
{
	if (!ai)
		return;
	aitable_free(ai->table);
	alloctag_free(ai->tags);
	pprof_free(ai->pprof);
	free(ai);
}

static bool uses_stacks(const struct env *env)
{
	/* percpu: its event has no call site before 5.19. */
	return env->ai_stacks || (env->events & (EV_PAGE | EV_PERCPU));
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

/*
 * The percpu allocator's wrappers that may appear as the event's call site
 * (allocinfo.bpf.h): their extent from kallsyms.
 */
void allocinfo_configure_percpu(struct kmemsnoop_bpf *skel, struct ksyms *ks)
{
	static const char *const names[] = { "__alloc_percpu_gfp", "__alloc_percpu",
					      "__alloc_reserved_percpu" };
	struct kmemsnoop_bpf__rodata *ro = skel->rodata;
	_Static_assert(sizeof(names) / sizeof(names[0]) == sizeof(ro->ai_percpu_wrapper) /
							       sizeof(ro->ai_percpu_wrapper[0]),
		       "one range per wrapper");

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct ksym *sym = ksyms_find(ks, ksyms_addr_of(ks, names[i]));

		if (!sym || strcmp(sym->name, names[i]))
			continue;
		ro->ai_percpu_wrapper[i][0] = sym->addr;
		ro->ai_percpu_wrapper[i][1] = sym->addr + sym->size;
	}
}

void allocinfo_configure(const struct env *env, struct kmemsnoop_bpf *skel, bool atomics)
{
	struct kmemsnoop_bpf__rodata *ro = skel->rodata;
	__u32 sites = (env->ai_stacks ? 0 : AI_CALL_SITES) +
		      (uses_stacks(env) ? env->ai_max_stacks : 0);

	ro->do_allocinfo = true;
	ro->ai_total = env->ai_total;
	ro->ai_stacks = env->ai_stacks;
	ro->ai_alloc_totals = env->pprof && !env->ai_total;
	if (atomics) {
		__u32 buckets = env->ai_total ? 1 : table_buckets(env->ai_max_ptrs);

		bpf_map__set_max_entries(skel->maps.ai_table, buckets);
		ro->ai_bucket_mask = buckets - 1;
		ro->ai_bucket_shift = 64 - (buckets > 1 ? __builtin_ctz(buckets) : 1);
		bpf_map__set_max_entries(skel->maps.ai_site_ids, sites);
		bpf_map__set_max_entries(skel->maps.ai_counts, sites);
		bpf_map__set_max_entries(skel->maps.ai_site_keys, sites);
		ro->ai_max_sites = sites;
	} else {
		if (!env->ai_total)
			bpf_map__set_max_entries(skel->maps.ai_ptrs, env->ai_max_ptrs);
		bpf_map__set_max_entries(skel->maps.ai_sites, sites);
	}
	/* Pages' callers from learned frames; their stacks stay the fallback. */
	pagesite_configure(skel, (env->events & EV_PAGE) && !env->ai_stacks);
	if (uses_stacks(env)) {
		bpf_map__set_max_entries(skel->maps.ai_stack_map, env->ai_max_stacks);
		bpf_map__set_value_size(skel->maps.ai_stack_map,
					(env->ai_stacks ? KMT_AI_MAX_FRAMES : KMT_AI_PAGE_FRAMES) *
						sizeof(__u64));
	}
}

void allocinfo_count_areas(struct allocinfo *ai, bool areas)
{
	ai->areas = areas;
}

/* --- site keys to text ---------------------------------------------------------- */

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

static int describe_stack(struct allocinfo *ai, __u32 id, struct ai_site_text *text)
{
	unsigned long long ips[KMT_AI_MAX_FRAMES];
	int max = ai->env->ai_stacks ? KMT_AI_MAX_FRAMES : KMT_AI_PAGE_FRAMES;
	int n = read_stack(ai->skel, id, ips, max);
	int first = alloctag_first_frame(ai->tags, ips, n);
	int call = alloctag_call_frame(ai->tags, ips, n);
	char tag[TAG_MAX];

	/* A stack of allocator frames only (cut short): its outermost. */
	if (call == n)
		call = n - 1;
	if (call < 0)
		snprintf(tag, sizeof(tag), "stack:%u func:unknown", id);
	else
		alloctag_site(ai->tags, ips[call], tag, sizeof(tag));
	text->tag = strdup(tag);
	if (ai->env->ai_stacks) {
		text->frames = frames_text(ai, ips, first, n);
		text->folded = folded_text(ai, ips, first, n);
	}
	return 0; /* what could not be allocated is NULL: the table says so */
}

/* A site key is a stack id (below 2^32) or a call site address. */
static int describe(void *ctx, __u64 key, struct ai_site_text *text)
{
	struct allocinfo *ai = ctx;
	char tag[TAG_MAX];

	if (key < KMT_AI_STACK_KEY_LIMIT)
		return describe_stack(ai, (__u32)key, text);
	alloctag_site(ai->tags, key, tag, sizeof(tag));
	text->tag = strdup(tag);
	return 0;
}

/* --- --pprof: site keys to locations ------------------------------------------------- */

#define NAME_MAX_LEN 512

/* The profile's location of addr (a call site, or a frame of a stack),
 * symbolized on first sight; 0 when out of memory. */
static uint64_t pprof_loc(struct allocinfo *ai, unsigned long long addr, bool site)
{
	struct srcline_frame frames[SRCLINE_MAX_INLINE];
	struct pprof_line lines[SRCLINE_MAX_INLINE] = { { 0 } };
	const char *sym, *module;
	char outer[NAME_MAX_LEN];
	uint64_t id = pprof_location(ai->pprof, addr);
	int n;

	if (id)
		return id;
	n = alloctag_chain(ai->tags, addr, site, frames, &sym, &module);
	for (int i = 0; i < n; i++)
		lines[i] = (struct pprof_line){
			.func = frames[i].func ? frames[i].func : sym,
			.file = frames[i].file,
			.line = frames[i].line,
		};
	n = n ? n : 1;
	/* The function holding addr goes by its symbol, as in --folded
	 * ("func [module]"): DWARF names a clone (.isra.0) by its origin. */
	alloctag_func(ai->tags, addr, outer, sizeof(outer));
	lines[n - 1].func = outer;
	return pprof_add_location(ai->pprof, addr, lines, n);
}

/* A key's sample: the call site, the caller found in a page's stack, or
 * with --stacks every frame after the tracing machinery (innermost first,
 * the table's frames).  0, or -ENOMEM. */
static int pprof_row(struct allocinfo *ai, __u64 key, const long long values[PPROF_VALUES])
{
	unsigned long long ips[KMT_AI_MAX_FRAMES];
	uint64_t locs[KMT_AI_MAX_FRAMES];
	int n = 0, depth, call;

	if (key >= KMT_AI_STACK_KEY_LIMIT) {
		locs[n++] = pprof_loc(ai, key, true);
	} else {
		depth = read_stack(ai->skel, (__u32)key, ips,
				   ai->env->ai_stacks ? KMT_AI_MAX_FRAMES : KMT_AI_PAGE_FRAMES);
		call = alloctag_call_frame(ai->tags, ips, depth);
		if (ai->env->ai_stacks)
			for (int i = alloctag_first_frame(ai->tags, ips, depth); i < depth; i++)
				locs[n++] = pprof_loc(ai, ips[i], false);
		else if (depth) /* a stack of allocator frames only: its outermost */
			locs[n++] = pprof_loc(ai, ips[call < depth ? call : depth - 1], true);
	}
	for (int i = 0; i < n; i++)
		if (!locs[i])
			return -ENOMEM;
	return pprof_add_sample(ai->pprof, locs, n, values);
}

int allocinfo_write_pprof(struct allocinfo *ai, char *err, size_t err_size)
{
	struct timespec now;

	if (!ai->pprof)
		return 0;
	clock_gettime(CLOCK_REALTIME, &now);
	return pprof_write(ai->pprof, ai->env->pprof, now.tv_sec * 1000000000LL + now.tv_nsec,
			   err, err_size);
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

/*
 * A page that vmalloc allocated for an area: the area is counted under
 * its caller, with the size of its pages, as /proc/allocinfo charges the
 * pages to the caller's tag.
 */
static bool vmalloc_page(struct allocinfo *ai, __u32 id)
{
	unsigned long long ips[KMT_AI_MAX_FRAMES];
	int depth = read_stack(ai->skel, id, ips,
			       ai->env->ai_stacks ? KMT_AI_MAX_FRAMES : KMT_AI_PAGE_FRAMES);

	return alloctag_vmalloc_page(ai->tags, ips, depth);
}

/* Every site key and its counts, summed over the CPUs, into the table. */
static int read_rows(struct allocinfo *ai, struct kmemsnoop_bpf *skel)
{
	int fd = bpf_map__fd(ai->atomics ? skel->maps.ai_site_ids : skel->maps.ai_sites);
	struct kmt_ai_count *per_cpu = calloc(ai->ncpus, sizeof(*per_cpu));
	__u64 key, *prev = NULL;
	int err = 0;

	if (!per_cpu)
		return -ENOMEM;
	ai->skel = skel;
	aitable_begin(ai->table);
	if (ai->pprof)
		pprof_begin(ai->pprof);
	while (!err && !bpf_map_get_next_key(fd, prev, &key)) {
		long long v[PPROF_VALUES] = { 0 };

		prev = &key;
		if (read_counts(ai, skel, key, per_cpu))
			continue;
		if (ai->areas && key < KMT_AI_STACK_KEY_LIMIT && vmalloc_page(ai, (__u32)key))
			continue; /* in its vmalloc area's count */
		for (int cpu = 0; cpu < ai->ncpus; cpu++) {
			v[PPROF_INUSE_SPACE] += per_cpu[cpu].bytes;
			v[PPROF_INUSE_OBJECTS] += per_cpu[cpu].calls;
			v[PPROF_ALLOC_SPACE] += per_cpu[cpu].alloc_bytes;
			v[PPROF_ALLOC_OBJECTS] += per_cpu[cpu].alloc_calls;
		}
		if (ai->env->ai_total) { /* nothing subtracts: all of it was allocated */
			v[PPROF_ALLOC_SPACE] = v[PPROF_INUSE_SPACE];
			v[PPROF_ALLOC_OBJECTS] = v[PPROF_INUSE_OBJECTS];
		}
		/* The table's bytes and calls: outstanding (with =total,
		 * allocated: no free subtracts). */
		err = aitable_add(ai->table, key, v[PPROF_INUSE_SPACE], v[PPROF_INUSE_OBJECTS]);
		if (!err && ai->pprof)
			err = pprof_row(ai, key, v);
	}
	free(per_cpu);
	return err;
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

/* The maps into the table, with symbols that name kmemsnoop's own BPF
 * programs, where every stack starts (read once after load). */
static int read_table(struct allocinfo *ai, struct kmemsnoop_bpf *skel, struct kmt_ai_stats *st)
{
	int err;

	if (!ai->symbols_fresh) {
		alloctag_refresh(ai->tags);
		ai->symbols_fresh = true;
	}
	err = read_rows(ai, skel);
	if (err)
		return err;
	read_stats(ai, skel, st);
	return 0;
}

int allocinfo_print(struct allocinfo *ai, struct kmemsnoop_bpf *skel, unsigned long long misses,
		    FILE *out)
{
	struct kmt_ai_stats st;
	int err = read_table(ai, skel, &st);

	return err ? err : aitable_print(ai->table, &st, misses, out, stderr);
}

int allocinfo_read(struct allocinfo *ai, struct kmemsnoop_bpf *skel, ai_row_fn fn, void *ctx,
		   struct kmt_ai_stats *st)
{
	int err = read_table(ai, skel, st);

	return err ? err : aitable_visit(ai->table, fn, ctx);
}

void allocinfo_summary(struct allocinfo *ai, struct kmemsnoop_bpf *skel)
{
	struct kmt_ai_stats st;
	char frees[256] = "";
	size_t len = 0;

	read_stats(ai, skel, &st);
	fprintf(stderr, "kmemsnoop: %zu call sites or stacks\n", aitable_sites(ai->table));
	for (int i = 0; i < event_class_count && !ai->env->ai_total; i++)
		if (ai->env->events & event_classes[i].class)
			len += (size_t)snprintf(frees + len, sizeof(frees) - len, "%s%s %llu",
						len ? ", " : "", event_classes[i].name,
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
	struct pagesite *ps; /* learning pages' callers, or NULL */
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
	am->ai = allocinfo_new(s->env, s->ncpus, s->kf.atomic_fetch, session_ksyms(s), s->err,
			       sizeof(s->err));
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
	w->free_classes |= env->events & (EV_PAGE | EV_PERCPU | EV_VMALLOC);
}

static void allocinfo_mode_configure(struct mode *m, struct kmemsnoop_bpf *skel)
{
	struct allocinfo_mode *am = (struct allocinfo_mode *)m;

	allocinfo_configure(m->session->env, skel, m->session->kf.atomic_fetch);
	if (m->session->env->events & EV_PERCPU)
		allocinfo_configure_percpu(skel, session_ksyms(m->session));
	allocinfo_count_areas(am->ai, session_class_traced(m->session, EV_VMALLOC));
}

/* --json: each row of the table, as an element of "rows". */
struct json_rows {
	FILE *out;
	bool first;
};

static int json_row(void *ctx, const char *tag, long long bytes, long long calls)
{
	struct json_rows *jr = ctx;

	fprintf(jr->out, "%s{\"bytes\":%lld,\"calls\":%lld,\"tag\":", jr->first ? "" : ",",
		bytes, calls);
	json_put_string(jr->out, tag);
	fputc('}', jr->out);
	jr->first = false;
	return 0;
}

/* The table as one JSON object (docs/JSON.md). */
static int print_json(struct allocinfo *ai, struct kmemsnoop_bpf *skel, unsigned long long misses,
		      FILE *out)
{
	struct json_rows jr = { .out = out, .first = true };
	struct kmt_ai_stats st;
	struct timespec now;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	fprintf(out, "{\"time\":%lld.%06ld,\"rows\":[", (long long)now.tv_sec,
		now.tv_nsec / 1000);
	err = allocinfo_read(ai, skel, json_row, &jr, &st);
	if (err)
		return err;
	fprintf(out, "],\"missed\":%llu,\"not_counted\":{\"pointer_table_full\":%llu,"
		     "\"site_table_full\":%llu,\"stack_table_full\":%llu},\"replaced\":%llu}\n",
		misses, (unsigned long long)st.ptrs_full, (unsigned long long)st.sites_full,
		(unsigned long long)st.stack_failed, (unsigned long long)st.replaced);
	if (fflush(out) || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}

static int print_now(struct allocinfo_mode *am)
{
	struct session *s = am->mode.session;
	int ret = (s->env->json ? print_json : allocinfo_print)(am->ai, s->skel, session_missed(s),
								stdout);
	char why[512];

	if (ret == -EPIPE) {
		am->output_gone = true;
		return MODE_END;
	}
	if (ret)
		return session_fail(s, "writing output: %s", strerror(-ret));
	if (allocinfo_write_pprof(am->ai, why, sizeof(why)))
		return session_fail(s, "--pprof: %s", why);
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
	pagesite_stop(am->ps, m->session->env->verbose);
	am->ps = NULL;
	allocinfo_summary(am->ai, m->session->skel);
	return ret;
}

static void allocinfo_destroy(struct mode *m)
{
	struct allocinfo_mode *am = allocinfo_mode_of(m);

	pagesite_stop(am->ps, false);
	allocinfo_free(am->ai);
	free(am);
}

/* Attached: pages' callers can be learned from their samples.  One read
 * of kallsyms, now that kmemsnoop's own programs (the first frames of
 * every stack) have symbols, serves the tags and the learning. */
static int allocinfo_start(struct mode *m)
{
	struct allocinfo_mode *am = allocinfo_mode_of(m);
	struct ksyms *ks = ksyms_load("/proc/kallsyms");

	allocinfo_use_symbols(am->ai, ks);
	am->ps = pagesite_start(m->session->skel, m->session->ncpus,
				ksyms_count(ks) ? ks : session_ksyms(m->session));
	ksyms_free(ks);
	return 0;
}

const struct mode_ops allocinfo_mode = {
	.name = "allocinfo",
	.selected = allocinfo_selected,
	.create = allocinfo_create,
	.wants = allocinfo_wants,
	.configure = allocinfo_mode_configure,
	.start = allocinfo_start,
	.tick = allocinfo_tick,
	.finish = allocinfo_finish,
	.destroy = allocinfo_destroy,
};
