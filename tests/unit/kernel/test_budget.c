// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The default ring size's rule (budget.h), machine size by machine size. */
#include "kernel/budget.h"
#include "unit.h"

#include <stdio.h>

void test_budget(struct unit *u);

struct ring_case {
	int ncpus;
	uint64_t per_cpu;
};

/* 16M while 16M x CPUs fits in 256M, then halved until it fits. */
static const struct ring_case ring_cases[] = {
	{ 1, 16ULL << 20 },   { 2, 16ULL << 20 },   { 16, 16ULL << 20 },
	{ 17, 8ULL << 20 },   { 32, 8ULL << 20 },   { 33, 4ULL << 20 },
	{ 64, 4ULL << 20 },   { 65, 2ULL << 20 },   { 128, 2ULL << 20 },
	{ 384, 512ULL << 10 }, { 512, 512ULL << 10 },
	{ 1024, 256ULL << 10 }, { 4096, 64ULL << 10 }, { 100000, 64ULL << 10 },
	{ 0, 16ULL << 20 },   { -1, 16ULL << 20 },
};

static void test_ring_cases(struct unit *u)
{
	struct unit_case c;

	unit_begin(&c, u, "budget.ring_sizes");
	for (size_t i = 0; i < sizeof(ring_cases) / sizeof(ring_cases[0]); i++) {
		uint64_t got = budget_ring_size(ring_cases[i].ncpus);

		if (got != ring_cases[i].per_cpu)
			unit_fail(&c, __FILE__, __LINE__, "%d CPUs: %llu bytes per CPU, want %llu",
				  ring_cases[i].ncpus, (unsigned long long)got,
				  (unsigned long long)ring_cases[i].per_cpu);
	}
	unit_end(&c);
}

/* Whatever the machine: a power of two -b accepts, within the budget
 * unless the minimum alone exceeds it, and the largest that is. */
static void test_ring_rule(struct unit *u)
{
	struct unit_case c;

	unit_begin(&c, u, "budget.ring_rule");
	for (int n = 1; n <= 8192 && !c.failed; n++) {
		uint64_t size = budget_ring_size(n), total = size * (uint64_t)n;

		CHECK(&c, size >= BUDGET_RING_MIN && size <= BUDGET_RING_PER_CPU);
		CHECK(&c, (size & (size - 1)) == 0);
		CHECK(&c, total <= BUDGET_RINGS_TOTAL || size == BUDGET_RING_MIN);
		CHECK(&c, size == BUDGET_RING_PER_CPU || 2 * total > BUDGET_RINGS_TOTAL);
		if (c.failed)
			unit_fail(&c, __FILE__, __LINE__, "at %d CPUs: %llu", n,
				  (unsigned long long)size);
	}
	unit_end(&c);
}

/* 1M per -o file up to 64 CPUs, then halved; 64K at the least. */
static void test_file_buffers(struct unit *u)
{
	struct unit_case c;

	unit_begin(&c, u, "budget.file_buffers");
	CHECK(&c, budget_file_buffer(2) == 1ULL << 20);
	CHECK(&c, budget_file_buffer(64) == 1ULL << 20);
	CHECK(&c, budget_file_buffer(65) == 512ULL << 10);
	CHECK(&c, budget_file_buffer(1024) == 64ULL << 10);
	CHECK(&c, budget_file_buffer(100000) == 64ULL << 10);
	CHECK(&c, budget_file_buffer(0) == 1ULL << 20);
	unit_end(&c);
}

static void test_open_files(struct unit *u)
{
	struct unit_case c;

	unit_begin(&c, u, "budget.open_files");
	CHECK(&c, budget_open_files(1024) >= 2 * 1024 + 64);
	CHECK(&c, budget_open_files(2) < 1024); /* no change on small machines */
	CHECK(&c, budget_open_files(0) > 0);
	unit_end(&c);
}

void test_budget(struct unit *u)
{
	test_ring_cases(u);
	test_ring_rule(u);
	test_file_buffers(u);
	test_open_files(u);
}
