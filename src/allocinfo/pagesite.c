// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Page allocations' callers from learned stack frames: the learning (see
 * src/bpf/pagesite.bpf.h for the BPF side).
 *
 * A sample is a page allocation's return addresses (bpf_get_stack, the
 * program and bpf_trace_run<N> skipped) and the 1 KiB of stack above ctx.
 * Each return address is looked for in that copy, in order: where it
 * sits, and how far the next one sits above it.  The stack's frames are
 * named by the rule a page's stack gets (alloctag.c): the tracing
 * machinery first, then the allocator, then the caller.  So the sample
 * teaches
 *   - the word above ctx of the first return address found,
 *   - for each return address into machinery or allocator, its kind and
 *     the distance to the next one,
 *   - that the caller's return address is a caller.
 * An entry goes to the BPF side once PS_CONFIRM samples agree on it.  One
 * that enough later samples disagree on (a kind, a distance: see
 * disputed()) is taken back and never used again; a few that disagree
 * are outliers, ignored.  Samples that dispute the first offset the same
 * way, or an audit whose stack names another caller, switch the learned
 * frames off.
 *
 * A return address found twice above the one before it (stale stack
 * contents) teaches nothing from there on.
 */
#include "pagesite.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/kmemsnoop.h"
#include "bpf/pagesite_defs.h"
#include "names/alloctag.h"
#include "names/ksyms.h"
#include "names/vmcallers.h"
#include "kmemsnoop.skel.h"

#define PS_CONFIRM 2     /* samples that must agree before an entry is used */
/* A learned distance is dropped once PS_DISPUTE samples disagreed with it,
 * and more than one for every PS_DISPUTE_SHARE that agreed: a function
 * whose frame varies.
 * Fewer are outliers (stale stack contents that ps_learn_sample() did not
 * tell from a frame), which the audits of each path answer for: one such
 * sample used to switch a frame off for the whole session. */
#define PS_DISPUTE 4
#define PS_DISPUTE_SHARE 4
#define PS_TABLE 16384   /* entries learned, in user space (a power of two) */
#define PS_RING (256 * 1024)
#define PS_POLL_NS 10000000L /* 10 ms between readings of the ring */

struct ps_entry {
	unsigned long long ret; /* 0: a free slot */
	unsigned int delta, kind, seen, against;
	bool conflict;
};

struct ps_learner {
	ps_name_fn name_of;
	void *ctx;
	struct ps_entry *table;
	size_t entries;
	long first, first_seen, first_against; /* first -1: samples disagreed */
	/* Told of what changes (the BPF side's maps); may be NULL. */
	void (*confirmed)(void *hook, const struct ps_entry *e);
	void (*retired)(void *hook, const struct ps_entry *e);
	void *hook;
	unsigned long long conflicts, outliers, frames, sites, ambiguous;
	int deepest; /* the highest word a caller's return address was found at */
};

struct ps_learner *ps_learner_new(ps_name_fn name_of, void *ctx)
{
	struct ps_learner *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->table = calloc(PS_TABLE, sizeof(*l->table));
	if (!l->table) {
		free(l);
		return NULL;
	}
	l->name_of = name_of;
	l->ctx = ctx;
	return l;
}

void ps_learner_free(struct ps_learner *l)
{
	if (!l)
		return;
	free(l->table);
	free(l);
}

static struct ps_entry *slot_of(const struct ps_learner *l, unsigned long long ret)
{
	size_t i = (size_t)((ret * KMT_HASH_MUL) >> 32) & (PS_TABLE - 1);

	for (size_t n = 0; n < PS_TABLE; n++, i = (i + 1) & (PS_TABLE - 1))
		if (!l->table[i].ret || l->table[i].ret == ret)
			return &l->table[i];
	return NULL;
}

/* Whether the samples against a learned value are more than outliers. */
static bool disputed(unsigned long long against, unsigned long long seen)
{
	return against >= PS_DISPUTE && against * PS_DISPUTE_SHARE > seen;
}

static void learn(struct ps_learner *l, unsigned long long ret, unsigned int delta,
		  unsigned int kind)
{
	struct ps_entry *e = slot_of(l, ret);
	bool same;

	if (!e || (!e->ret && l->entries >= PS_TABLE / 2))
		return; /* full: what is learned still serves */
	if (!e->ret)
		l->entries++;
	same = e->ret && e->delta == delta && e->kind == kind;
	if (!same && e->seen < PS_CONFIRM) {
		/* New, or not confirmed yet: the newest sample is as good as
		 * the first. */
		*e = (struct ps_entry){ .ret = ret, .delta = delta, .kind = kind, .seen = 1 };
		return;
	}
	if (e->conflict)
		return;
	if (!same) {
		l->outliers++;
		if (!disputed(++e->against, e->seen))
			return;
		e->conflict = true;
		l->conflicts++;
		if (l->retired)
			l->retired(l->hook, e);
		return;
	}
	if (++e->seen != PS_CONFIRM)
		return;
	if (kind == PS_KIND_SITE)
		l->sites++;
	else
		l->frames++;
	if (l->confirmed)
		l->confirmed(l->hook, e);
}

static void learn_first(struct ps_learner *l, long off)
{
	if (l->first < 0)
		return;
	if (!l->first || (l->first != off && l->first_seen < PS_CONFIRM)) {
		l->first = off;
		l->first_seen = 1;
	} else if (l->first == off) {
		l->first_seen++;
	} else {
		l->outliers++;
		if (disputed(++l->first_against, l->first_seen)) {
			l->first = -1;
			l->conflicts++;
		}
	}
}

long ps_first_offset(const struct ps_learner *l)
{
	if (l->first < 0)
		return -1;
	return l->first_seen >= PS_CONFIRM ? l->first : 0;
}

int ps_learned(const struct ps_learner *l, unsigned long long ret, unsigned int *delta,
	       unsigned int *kind)
{
	const struct ps_entry *e = slot_of(l, ret);

	if (!e || e->ret != ret || e->conflict || e->seen < PS_CONFIRM)
		return -1;
	*delta = e->delta;
	*kind = e->kind;
	return 0;
}

/* arm64's pointer authentication code off a saved return address (the
 * BPF side's ps_strip()). */
static unsigned long long strip(unsigned long long ret)
{
	return ret >> 55 & 1 ? ret | 0xffff000000000000ULL : ret;
}

static int count_in(const struct ps_sample *s, unsigned long long ret, int lo, int hi)
{
	int n = 0;

	for (int j = lo; j < hi; j++)
		n += strip(s->raw[j]) == ret;
	return n;
}

unsigned long long ps_learn_sample(struct ps_learner *l, const struct ps_sample *s)
{
	int n = s->n < PS_STACK ? (int)s->n : PS_STACK, glue = 0, call, first = -1, last = -1;
	int pos[PS_STACK];

	/* The rule of alloctag_first_frame() and alloctag_call_frame(). */
	while (glue < n && alloctag_is_glue(l->name_of(l->ctx, s->ips[glue])))
		glue++;
	call = glue;
	while (call < n && alloctag_is_allocator(l->name_of(l->ctx, s->ips[call])))
		call++;
	if (!s->raw_len)
		return call < n ? s->ips[call] : 0;
	/* Where the return addresses sit: the first found (among those of
	 * machinery: arm64's frame records lie below their frames' locals)
	 * and from there on, each above the one before. */
	for (int j = 0; j < PS_RAW; j++) {
		unsigned long long v = strip(s->raw[j]);

		if (first < 0) {
			for (int c = 0; c <= glue && c < n; c++)
				if (v == s->ips[c]) {
					first = last = c;
					pos[c] = j;
					break;
				}
		} else if (last + 1 < n && v == s->ips[last + 1]) {
			pos[++last] = j;
		}
	}
	if (first < 0)
		return call < n ? s->ips[call] : 0;
	/* Each found once above the one before, or the rest is not trusted.
	 * Not only below the next one found: a stale array of return
	 * addresses (a saved stack trace) below the real frames reads as a
	 * chain of frames one word apart. */
	for (int k = first; k <= last && k <= call; k++) {
		int lo = k == first ? 0 : pos[k - 1] + 1;

		if (count_in(s, s->ips[k], lo, PS_RAW) != 1) {
			l->ambiguous++;
			last = k - 1;
			break;
		}
	}
	if (last < first || pos[first] == 0)
		return call < n ? s->ips[call] : 0;
	learn_first(l, pos[first]);
	for (int k = first; k <= last && k <= call && k < n; k++) {
		const char *name = l->name_of(l->ctx, s->ips[k]);

		/* The pages of a vmalloc area are told from others by their
		 * stacks (allocinfo.c): nothing is learned from the vmalloc
		 * API on, so that their walk ends there and takes the stack. */
		if (name && vmcallers_is_api(name))
			break;
		if (k == call) {
			learn(l, s->ips[k], 0, PS_KIND_SITE);
			if (pos[k] > l->deepest)
				l->deepest = pos[k];
			break;
		}
		if (k == last)
			break;
		learn(l, s->ips[k], (unsigned int)(pos[k + 1] - pos[k]) * 8,
		      k < glue ? PS_KIND_GLUE : PS_KIND_ALLOC);
	}
	return call < n ? s->ips[call] : 0;
}

/* --- with BPF -------------------------------------------------------------- */

void pagesite_configure(struct kmemsnoop_bpf *skel, bool on)
{
	skel->rodata->ps_on = on;
	if (!on)
		return;
	bpf_map__set_max_entries(skel->maps.ps_frames, PS_SLOTS);
	bpf_map__set_max_entries(skel->maps.ps_paths, PS_SLOTS);
	bpf_map__set_max_entries(skel->maps.ps_samples, PS_RING);
}

/* A path's audits that agreed (a table of PS_TABLE). */
struct ps_path {
	__u64 path; /* 0: a free entry */
	unsigned int agreed;
};

struct pagesite {
	struct kmemsnoop_bpf *skel;
	int ncpus;
	struct ksyms *ks;
	struct ps_learner *l;
	struct ring_buffer *rb;
	pthread_t thread;
	volatile bool stop;
	bool first_set;
	unsigned int words; /* ps_words */
	time_t symbols_read; /* when ks was last read (CLOCK_MONOTONIC s) */
	__u64 placed[PS_SLOTS]; /* what ps_frames holds */
	__u64 paths[PS_SLOTS];  /* what ps_paths holds */
	struct ps_path *agreed; /* audits that agreed, per path */
	unsigned long long audits, mismatches, unsure, unplaced, verified;
};

static const char *name_of(void *ctx, unsigned long long addr)
{
	const struct ksym *s = ksyms_find(((struct pagesite *)ctx)->ks, addr);

	return s ? s->name : NULL;
}

/* Into ps_frames at ps_slot(ret) or beside it; else it stays unknown
 * there (its allocations keyed by their stacks). */
static void confirmed(void *hook, const struct ps_entry *e)
{
	struct pagesite *ps = hook;
	struct ps_frame f = { .ret = e->ret, .delta = e->delta, .kind = e->kind };
	__u32 i = ps_slot(e->ret);

	if (ps->placed[i] && ps->placed[i ^ 1]) {
		ps->unplaced++;
		return;
	}
	i ^= ps->placed[i] ? 1 : 0;
	ps->placed[i] = e->ret;
	bpf_map_update_elem(bpf_map__fd(ps->skel->maps.ps_frames), &i, &f, BPF_ANY);
}

static void retired(void *hook, const struct ps_entry *e)
{
	struct pagesite *ps = hook;
	struct ps_frame none = { 0 };
	__u32 i = ps_slot(e->ret);

	if (ps->placed[i] != e->ret)
		i ^= 1;
	if (ps->placed[i] != e->ret)
		return;
	/* The slot stays taken: the entry is never placed again. */
	bpf_map_update_elem(bpf_map__fd(ps->skel->maps.ps_frames), &i, &none, BPF_ANY);
}

/* One more audit of path agreed: after PS_FIRST_AUDITS, into ps_paths. */
static void path_agreed(struct pagesite *ps, __u64 path)
{
	size_t i = (size_t)((path * KMT_HASH_MUL) >> 32) & (PS_TABLE - 1), n;
	__u32 slot;

	for (n = 0; n < PS_TABLE / 2; n++, i = (i + 1) & (PS_TABLE - 1))
		if (!ps->agreed[i].path || ps->agreed[i].path == path)
			break;
	if (n == PS_TABLE / 2 || !path)
		return; /* full: its pages keep being keyed by their stacks */
	ps->agreed[i].path = path;
	if (++ps->agreed[i].agreed != PS_FIRST_AUDITS)
		return;
	slot = ps_slot(path);
	if (ps->paths[slot] && ps->paths[slot ^ 1]) {
		ps->unplaced++;
		return;
	}
	slot ^= ps->paths[slot] ? 1 : 0;
	ps->paths[slot] = path;
	ps->verified++;
	bpf_map_update_elem(bpf_map__fd(ps->skel->maps.ps_paths), &slot, &path, BPF_ANY);
}

static void switch_off(struct pagesite *ps)
{
	__atomic_store_n(&ps->skel->bss->ps_disabled, 1, __ATOMIC_RELAXED);
}

/* A return address no symbol covers among those a walk reads: a module
 * loaded since, whose functions the table names from a newer kallsyms;
 * read it again (at most every 10 s: some addresses never have a name). */
static void refresh_symbols(struct pagesite *ps, const struct ps_sample *s)
{
	struct timespec now;
	struct ksyms *ks;
	bool unknown = false;

	for (unsigned int i = 0; i < s->n && i < PS_WALK + 1; i++)
		unknown |= !ksyms_find(ps->ks, s->ips[i]);
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!unknown || now.tv_sec < ps->symbols_read + 10)
		return;
	ps->symbols_read = now.tv_sec;
	ks = ksyms_load("/proc/kallsyms");
	if (!ks || !ksyms_count(ks)) {
		ksyms_free(ks);
		return;
	}
	ksyms_free(ps->ks);
	ps->ks = ks;
}

static int on_sample(void *ctx, void *data, size_t size)
{
	struct pagesite *ps = ctx;
	const struct ps_sample *s = data;
	unsigned long long caller;
	long first;

	if (size < sizeof(*s))
		return 0;
	refresh_symbols(ps, s);
	caller = ps_learn_sample(ps->l, s);
	if (s->claimed) {
		ps->audits++;
		if (!caller) {
			ps->unsure++; /* the caller lies beyond the frames taken */
		} else if (caller != s->claimed) {
			ps->mismatches++;
			switch_off(ps);
		} else {
			path_agreed(ps, s->path);
		}
	}
	/* Read as deep as the callers learned, and no deeper. */
	if (ps->l->deepest >= (int)ps->words && ps->words < PS_WINDOW) {
		ps->words = ps->l->deepest + 1 < PS_WINDOW ? ps->l->deepest + 1 : PS_WINDOW;
		__atomic_store_n(&ps->skel->bss->ps_words, ps->words, __ATOMIC_RELAXED);
	}
	first = ps_first_offset(ps->l);
	if (first < 0)
		switch_off(ps);
	else if (first && first < PS_WINDOW && !ps->first_set) {
		ps->first_set = true;
		__atomic_store_n(&ps->skel->bss->ps_first, (__u32)first, __ATOMIC_RELAXED);
	}
	return 0;
}

static void *learning(void *arg)
{
	struct pagesite *ps = arg;
	struct timespec pause = { .tv_nsec = PS_POLL_NS };

	while (!ps->stop) {
		ring_buffer__consume(ps->rb);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

struct pagesite *pagesite_start(struct kmemsnoop_bpf *skel, int ncpus, struct ksyms *ksyms)
{
	struct pagesite *ps;

	if (!skel->rodata->ps_on)
		return NULL;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	ps->skel = skel;
	ps->ncpus = ncpus;
	ps->words = 16; /* grows with the callers learned */
	skel->bss->ps_words = ps->words;
	/* Read after load: the BPF programs, which are machinery, are named. */
	ps->ks = ksyms_count(ksyms) ? ksyms_get(ksyms) : NULL;
	ps->l = ps_learner_new(name_of, ps);
	ps->agreed = calloc(PS_TABLE, sizeof(*ps->agreed));
	if (ps->l) {
		ps->l->confirmed = confirmed;
		ps->l->retired = retired;
		ps->l->hook = ps;
	}
	ps->rb = ring_buffer__new(bpf_map__fd(skel->maps.ps_samples), on_sample, ps, NULL);
	if (!ps->ks || !ps->l || !ps->agreed || !ps->rb ||
	    pthread_create(&ps->thread, NULL, learning, ps)) {
		ring_buffer__free(ps->rb);
		free(ps->agreed);
		ps_learner_free(ps->l);
		ksyms_free(ps->ks);
		free(ps);
		return NULL;
	}
	return ps;
}

static void print_summary(struct pagesite *ps)
{
	struct ps_stats *per_cpu = calloc(ps->ncpus, sizeof(*per_cpu)), sum = { 0 };
	__u32 zero = 0;

	if (!per_cpu || bpf_map_lookup_elem(bpf_map__fd(ps->skel->maps.ps_stats), &zero, per_cpu)) {
		free(per_cpu);
		return;
	}
	for (int cpu = 0; cpu < ps->ncpus; cpu++) {
		sum.fast += per_cpu[cpu].fast;
		sum.misses += per_cpu[cpu].misses;
		sum.samples += per_cpu[cpu].samples;
		sum.dropped += per_cpu[cpu].dropped;
		sum.deep += per_cpu[cpu].deep;
	}
	free(per_cpu);
	fprintf(stderr, "kmemsnoop: page callers: %llu from learned frames, %llu from their "
			"stacks; %llu samples (%llu dropped), %llu frames and %llu callers learned, "
			"%llu conflicts, %llu outliers, %llu ambiguous, %llu without room, first word "
			"%ld, %u words read, %llu too deep; %llu audits, %llu paths confirmed, %llu "
			"mismatches, %llu inconclusive%s\n",
		(unsigned long long)sum.fast, (unsigned long long)sum.misses,
		(unsigned long long)sum.samples, (unsigned long long)sum.dropped, ps->l->frames,
		ps->l->sites, ps->l->conflicts, ps->l->outliers, ps->l->ambiguous, ps->unplaced,
		ps_first_offset(ps->l), ps->words, (unsigned long long)sum.deep, ps->audits,
		ps->verified, ps->mismatches, ps->unsure, ps->skel->bss->ps_disabled ? " (learned frames switched off)" : "");
}

void pagesite_stop(struct pagesite *ps, bool verbose)
{
	if (!ps)
		return;
	ps->stop = true;
	pthread_join(ps->thread, NULL);
	ring_buffer__consume(ps->rb); /* the last audits */
	if (verbose)
		print_summary(ps);
	ring_buffer__free(ps->rb);
	free(ps->agreed);
	ps_learner_free(ps->l);
	ksyms_free(ps->ks);
	free(ps);
}
