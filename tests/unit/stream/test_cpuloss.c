// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The per-CPU loss lines of the summary (cpuloss.h). */
#include "stream/cpuloss.h"
#include "unit.h"

#include <stdlib.h>

void test_cpuloss(struct unit *u);

/* Few CPUs lost: every one of them, most first, the lower CPU on ties. */
static void test_few(struct unit *u)
{
	struct unit_case c;
	struct cpu_loss l[] = {
		{ 0, 0, 0 }, { 1, 5, 500 }, { 2, 0, 0 }, { 3, 9, 900 }, { 4, 5, 400 },
	};
	struct cpu_loss_rest rest;
	size_t shown;

	unit_begin(&c, u, "cpuloss.few");
	shown = cpuloss_select(l, 5, CPULOSS_MAX_LINES, &rest);
	CHECK_U64(&c, shown, 3);
	CHECK(&c, l[0].cpu == 3 && l[1].cpu == 1 && l[2].cpu == 4);
	CHECK(&c, l[0].events == 9 && l[0].bytes == 900 && l[2].bytes == 400);
	CHECK_U64(&c, rest.cpus, 0);
	CHECK(&c, rest.events == 0 && rest.bytes == 0);
	unit_end(&c);
}

static void test_none(struct unit *u)
{
	struct unit_case c;
	struct cpu_loss l[4] = { { 0, 0, 0 }, { 1, 0, 0 }, { 2, 0, 0 }, { 3, 0, 0 } };
	struct cpu_loss_rest rest = { 7, 7, 7 };

	unit_begin(&c, u, "cpuloss.none");
	CHECK_U64(&c, cpuloss_select(l, 4, CPULOSS_MAX_LINES, &rest), 0);
	CHECK(&c, rest.cpus == 0 && rest.events == 0);
	CHECK_U64(&c, cpuloss_select(NULL, 0, CPULOSS_MAX_LINES, &rest), 0);
	unit_end(&c);
}

/* Exactly max_lines CPUs lost: all shown, no "other" line. */
static void test_exactly_max(struct unit *u)
{
	struct unit_case c;
	struct cpu_loss l[CPULOSS_MAX_LINES];
	struct cpu_loss_rest rest;

	for (int i = 0; i < CPULOSS_MAX_LINES; i++)
		l[i] = (struct cpu_loss){ i, 1, 8 };
	unit_begin(&c, u, "cpuloss.exactly_max");
	CHECK_U64(&c, cpuloss_select(l, CPULOSS_MAX_LINES, CPULOSS_MAX_LINES, &rest),
		  CPULOSS_MAX_LINES);
	CHECK_U64(&c, rest.cpus, 0);
	for (int i = 0; i < CPULOSS_MAX_LINES; i++)
		CHECK(&c, l[i].cpu == i);
	unit_end(&c);
}

/* 384 CPUs that all lost: the 7 worst, and one line adding up the 377
 * others; the lines add up to the total. */
static void test_many(struct unit *u)
{
	enum { N = 384 };
	struct unit_case c;
	struct cpu_loss *l = calloc(N, sizeof(*l));
	struct cpu_loss_rest rest;
	uint64_t events = 0, bytes = 0, shown_events = 0, shown_bytes = 0;
	size_t shown;

	unit_begin(&c, u, "cpuloss.many");
	if (!l) {
		unit_fail(&c, __FILE__, __LINE__, "out of memory");
		unit_end(&c);
		return;
	}
	for (int i = 0; i < N; i++) {
		/* CPU 100 + k lost most for k < 10; the others little. */
		uint64_t e = i >= 100 && i < 110 ? 1000 + (uint64_t)(i - 100) : 1 + (uint64_t)(i % 7);

		l[i] = (struct cpu_loss){ i, e, e * 64 };
		events += e;
		bytes += e * 64;
	}
	shown = cpuloss_select(l, N, CPULOSS_MAX_LINES, &rest);
	CHECK_U64(&c, shown, CPULOSS_MAX_LINES - 1);
	for (size_t i = 0; i < shown; i++) {
		CHECK(&c, l[i].cpu == 109 - (int)i);
		shown_events += l[i].events;
		shown_bytes += l[i].bytes;
	}
	CHECK_U64(&c, rest.cpus, N - shown);
	CHECK_U64(&c, shown_events + rest.events, events);
	CHECK_U64(&c, shown_bytes + rest.bytes, bytes);
	unit_end(&c);
	free(l);
}

void test_cpuloss(struct unit *u)
{
	test_few(u);
	test_none(u);
	test_exactly_max(u);
	test_many(u);
}
