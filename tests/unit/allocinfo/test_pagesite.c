// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Learning a page allocation's frames from samples (pagesite.c), on made-up
 * stacks: return addresses named by a small table, placed in the stack copy
 * at the distances a kernel's frames would put them.
 */
#include <linux/types.h>
#include <string.h>

#include "allocinfo/pagesite.h"
#include "bpf/pagesite_defs.h"
#include "unit.h"

void test_pagesite(struct unit *u);

/* Return addresses, each inside a function of the name given. */
#define RET_GLUE 0xffffffff815c7ad1ULL   /* __traceiter_mm_page_alloc */
#define RET_ALLOC1 0xffffffff8162184bULL /* __alloc_frozen_pages_noprof */
#define RET_ALLOC2 0xffffffff8165add6ULL /* alloc_pages_mpol */
#define RET_SITE 0xffffffff815ebeb5ULL   /* do_anonymous_page */
#define RET_OUTER 0xffffffff815ee47eULL  /* __handle_mm_fault */

static const char *names(void *ctx, unsigned long long addr)
{
	(void)ctx;
	switch (addr) {
	case RET_GLUE: return "__traceiter_mm_page_alloc";
	case RET_ALLOC1: return "__alloc_frozen_pages_noprof";
	case RET_ALLOC2: return "alloc_pages_mpol";
	case RET_SITE: return "do_anonymous_page";
	case RET_OUTER: return "__handle_mm_fault";
	}
	return NULL;
}

static const unsigned long long chain[] = { RET_GLUE, RET_ALLOC1, RET_ALLOC2, RET_SITE, RET_OUTER };
static const int chain_pos[] = { 9, 15, 27, 35, 42 }; /* words above ctx */

/* A sample of chain, its return addresses at chain_pos (+ shift for
 * ALLOC1's successors), other words filled with unrelated values. */
static void make_sample(struct ps_sample *s, int shift)
{
	memset(s, 0, sizeof(*s));
	s->n = 5;
	s->raw_len = sizeof(s->raw);
	for (int j = 0; j < PS_RAW; j++)
		s->raw[j] = 0xffff888100000000ULL + j * 64;
	for (int i = 0; i < 5; i++) {
		s->ips[i] = chain[i];
		s->raw[chain_pos[i] + (i >= 2 ? shift : 0)] = chain[i];
	}
}

static void check_learned(struct unit_case *c, struct ps_learner *l, unsigned long long ret,
			  unsigned int want_delta, unsigned int want_kind)
{
	unsigned int delta = 0, kind = 0;

	CHECK(c, !ps_learned(l, ret, &delta, &kind));
	CHECK_U64(c, delta, want_delta);
	CHECK_U64(c, kind, want_kind);
}

static void test_learns(struct unit *u)
{
	struct unit_case c;
	struct ps_learner *l = ps_learner_new(names, NULL);
	struct ps_sample s;
	unsigned int d, k;

	unit_begin(&c, u, "pagesite.learns");
	CHECK(&c, l != NULL);
	if (l) {
		make_sample(&s, 0);
		CHECK_U64(&c, ps_learn_sample(l, &s), RET_SITE);
		/* One sample is not enough. */
		CHECK(&c, ps_learned(l, RET_ALLOC1, &d, &k) == -1);
		CHECK_U64(&c, ps_first_offset(l), 0);
		CHECK_U64(&c, ps_learn_sample(l, &s), RET_SITE);
		CHECK_U64(&c, ps_first_offset(l), 9);
		check_learned(&c, l, RET_GLUE, 6 * 8, PS_KIND_GLUE);
		check_learned(&c, l, RET_ALLOC1, 12 * 8, PS_KIND_ALLOC);
		check_learned(&c, l, RET_ALLOC2, 8 * 8, PS_KIND_ALLOC);
		check_learned(&c, l, RET_SITE, 0, PS_KIND_SITE);
		/* Beyond the caller: nothing. */
		CHECK(&c, ps_learned(l, RET_OUTER, &d, &k) == -1);
	}
	unit_end(&c);
	ps_learner_free(l);
}

/* The same chain where the allocator was called by vmalloc for an area's pages. */
static const char *vmalloc_names(void *ctx, unsigned long long addr)
{
	return addr == RET_ALLOC2 ? "__vmalloc_area_node" : names(ctx, addr);
}

static void test_vmalloc_not_learned(struct unit *u)
{
	struct unit_case c;
	struct ps_learner *l = ps_learner_new(vmalloc_names, NULL);
	struct ps_sample s;
	unsigned int d, k;

	unit_begin(&c, u, "pagesite.vmalloc_pages_not_learned");
	CHECK(&c, l != NULL);
	if (l) {
		make_sample(&s, 0);
		ps_learn_sample(l, &s);
		ps_learn_sample(l, &s);
		/* Learned up to the vmalloc API, not into it nor past it. */
		check_learned(&c, l, RET_ALLOC1, 12 * 8, PS_KIND_ALLOC);
		CHECK(&c, ps_learned(l, RET_ALLOC2, &d, &k) == -1);
		CHECK(&c, ps_learned(l, RET_SITE, &d, &k) == -1);
	}
	unit_end(&c);
	ps_learner_free(l);
}

/* n samples of chain, ALLOC1's frame larger by shift words. */
static void learn_n(struct ps_learner *l, int n, int shift)
{
	struct ps_sample s;

	make_sample(&s, shift);
	while (n-- > 0)
		ps_learn_sample(l, &s);
}

static void test_conflict(struct unit *u)
{
	struct unit_case c;
	struct ps_learner *l = ps_learner_new(names, NULL);
	unsigned int d, k;

	unit_begin(&c, u, "pagesite.conflict_retires");
	CHECK(&c, l != NULL);
	if (l) {
		learn_n(l, 2, 0);
		/* ALLOC1's frame one word larger: its distance is not fixed.
		 * Three samples could be outliers... */
		learn_n(l, 3, 1);
		check_learned(&c, l, RET_ALLOC1, 12 * 8, PS_KIND_ALLOC);
		/* ...the fourth is not. */
		learn_n(l, 1, 1);
		CHECK(&c, ps_learned(l, RET_ALLOC1, &d, &k) == -1);
		learn_n(l, 4, 0);
		CHECK(&c, ps_learned(l, RET_ALLOC1, &d, &k) == -1);
		check_learned(&c, l, RET_GLUE, 6 * 8, PS_KIND_GLUE);
		check_learned(&c, l, RET_ALLOC2, 8 * 8, PS_KIND_ALLOC);
	}
	unit_end(&c);
	ps_learner_free(l);
}

static void test_outliers(struct unit *u)
{
	struct unit_case c;
	struct ps_learner *l = ps_learner_new(names, NULL);

	unit_begin(&c, u, "pagesite.outliers_ignored");
	CHECK(&c, l != NULL);
	if (l) {
		/* The first sample an outlier: the next two still teach. */
		learn_n(l, 1, 1);
		learn_n(l, 2, 0);
		check_learned(&c, l, RET_ALLOC1, 12 * 8, PS_KIND_ALLOC);
		/* Four in a hundred disagree: a stale copy read, not a frame
		 * that varies. */
		learn_n(l, 46, 0);
		learn_n(l, 2, 1);
		learn_n(l, 50, 0);
		learn_n(l, 2, 1);
		check_learned(&c, l, RET_ALLOC1, 12 * 8, PS_KIND_ALLOC);
		check_learned(&c, l, RET_ALLOC2, 8 * 8, PS_KIND_ALLOC);
		CHECK_U64(&c, ps_first_offset(l), 9);
	}
	unit_end(&c);
	ps_learner_free(l);
}

/* Stale stack contents: return addresses written where no frame holds
 * them, which must teach nothing about the frames from there on. */
static const struct stale_case {
	const char *name;
	int words; /* of at[] and ret[] */
	int at[3];
	unsigned long long ret[3];
	bool glue_learned; /* the frame below the stale words */
} stale_cases[] = {
	/* A copy of ALLOC2's return address in ALLOC1's frame: where
	 * ALLOC2's is cannot be told. */
	{ "pagesite.ambiguous", 1, { 20 }, { RET_ALLOC2 }, true },
	/* A saved stack trace left below ALLOC1's frame: the same return
	 * addresses, one word apart, found first. */
	{ "pagesite.stale_trace", 3, { 11, 12, 13 }, { RET_ALLOC1, RET_ALLOC2, RET_SITE }, false },
};

static void test_stale(struct unit *u, const struct stale_case *t)
{
	struct unit_case c;
	struct ps_learner *l = ps_learner_new(names, NULL);
	struct ps_sample s;
	unsigned int d, k;

	unit_begin(&c, u, t->name);
	CHECK(&c, l != NULL);
	if (l) {
		make_sample(&s, 0);
		for (int i = 0; i < t->words; i++)
			s.raw[t->at[i]] = t->ret[i];
		ps_learn_sample(l, &s);
		CHECK_U64(&c, ps_learn_sample(l, &s), RET_SITE);
		if (t->glue_learned)
			check_learned(&c, l, RET_GLUE, 6 * 8, PS_KIND_GLUE);
		else
			CHECK(&c, ps_learned(l, RET_GLUE, &d, &k) == -1);
		CHECK(&c, ps_learned(l, RET_ALLOC1, &d, &k) == -1);
		CHECK(&c, ps_learned(l, RET_ALLOC2, &d, &k) == -1);
		CHECK(&c, ps_learned(l, RET_SITE, &d, &k) == -1);
		CHECK_U64(&c, ps_first_offset(l), 9);
	}
	unit_end(&c);
	ps_learner_free(l);
}

static void test_below_ctx(struct unit *u)
{
	struct unit_case c;
	struct ps_learner *l = ps_learner_new(names, NULL);
	struct ps_sample s;

	unit_begin(&c, u, "pagesite.first_below_ctx");
	CHECK(&c, l != NULL);
	if (l) {
		/* arm64: the machinery's frame record lies below ctx, so the
		 * first return address found is the allocator's; and it is
		 * signed (pointer authentication) where it is saved. */
		make_sample(&s, 0);
		s.raw[chain_pos[0]] = 0;
		s.raw[chain_pos[1]] = (RET_ALLOC1 & 0x0000ffffffffffffULL) | 0x5a80000000000000ULL;
		ps_learn_sample(l, &s);
		CHECK_U64(&c, ps_learn_sample(l, &s), RET_SITE);
		CHECK_U64(&c, ps_first_offset(l), 15);
		check_learned(&c, l, RET_ALLOC1, 12 * 8, PS_KIND_ALLOC);
		/* Another first offset: once an outlier... */
		make_sample(&s, 0);
		ps_learn_sample(l, &s);
		CHECK_U64(&c, ps_first_offset(l), 15);
		/* ...then as often as not: all off. */
		for (int i = 0; i < 3; i++)
			ps_learn_sample(l, &s);
		CHECK(&c, ps_first_offset(l) == -1);
	}
	unit_end(&c);
	ps_learner_free(l);
}

static void test_short_stack(struct unit *u)
{
	struct unit_case c;
	struct ps_learner *l = ps_learner_new(names, NULL);
	struct ps_sample s;
	unsigned int d, k;

	unit_begin(&c, u, "pagesite.stack_top");
	CHECK(&c, l != NULL);
	if (l) {
		/* The stack ends before the caller's return address. */
		make_sample(&s, 0);
		s.raw_len = 30 * 8;
		for (int j = 30; j < PS_RAW; j++)
			s.raw[j] = 0;
		ps_learn_sample(l, &s);
		CHECK_U64(&c, ps_learn_sample(l, &s), RET_SITE);
		check_learned(&c, l, RET_ALLOC1, 12 * 8, PS_KIND_ALLOC);
		CHECK(&c, ps_learned(l, RET_ALLOC2, &d, &k) == -1);
		CHECK(&c, ps_learned(l, RET_SITE, &d, &k) == -1);
	}
	unit_end(&c);
	ps_learner_free(l);
}

void test_pagesite(struct unit *u)
{
	test_learns(u);
	test_vmalloc_not_learned(u);
	test_conflict(u);
	test_outliers(u);
	for (size_t i = 0; i < sizeof(stale_cases) / sizeof(stale_cases[0]); i++)
		test_stale(u, &stale_cases[i]);
	test_below_ctx(u);
	test_short_stack(u);
}
