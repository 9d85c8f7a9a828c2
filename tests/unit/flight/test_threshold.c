// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --flight-when's condition (flight/threshold.h) on meminfo files written
 * here, value by value. */
#include "flight/threshold.h"
#include "unit.h"

#include <stdio.h>
#include <string.h>

void test_threshold(struct unit *u);

/* A meminfo file whose Slab is kib kB. */
static bool write_meminfo(const char *path, unsigned long long kib)
{
	char text[256];

	snprintf(text, sizeof(text),
		 "MemTotal:        8000000 kB\nSlab:            %llu kB\nHugePages_Total:       3\n",
		 kib);
	return unit_write_file(path, text);
}

/* The value sequence in kB, and whether each read fires. */
struct step {
	unsigned long long kib;
	int fires;
};

static void run(struct unit *u, const char *name, const char *dir, char op,
		unsigned long long bytes, unsigned long long start_kib, const struct step *steps,
		size_t n, bool dumped_after_fire)
{
	char path[512], err[256];
	struct flight_threshold t;
	struct unit_case c;

	unit_begin(&c, u, name);
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	CHECK(&c, write_meminfo(path, start_kib));
	CHECK(&c, threshold_init(&t, path, "Slab", op, bytes, err, sizeof(err)) == 0);
	for (size_t i = 0; i < n; i++) {
		int got;

		CHECK(&c, write_meminfo(path, steps[i].kib));
		got = threshold_check(&t);
		if (got != steps[i].fires)
			unit_fail(&c, __FILE__, __LINE__, "step %zu (%llu kB): %d, want %d", i,
				  steps[i].kib, got, steps[i].fires);
		if (got == 1 && dumped_after_fire)
			threshold_dumped(&t);
	}
	unit_end(&c);
}

void test_threshold(struct unit *u)
{
	char dir[256], path[512], err[256];
	static const char *const files[] = { "meminfo" };
	/* Below 1000 kB fires once, again only after coming back above. */
	static const struct step below[] = { { 1200, 0 }, { 999, 1 }, { 900, 0 },
					     { 1000, 0 }, { 998, 1 }, { 997, 0 } };
	/* Above 2000 kB. */
	static const struct step above[] = { { 1500, 0 }, { 2001, 1 }, { 3000, 0 },
					     { 2000, 0 }, { 2500, 1 } };
	/* Up by 1000 kB from the lowest since the start or the last dump. */
	static const struct step rise[] = { { 5500, 0 }, { 4000, 0 }, { 4999, 0 },
					    { 5000, 1 }, { 5999, 0 }, { 6000, 1 } };
	struct flight_threshold t;
	struct unit_case c;
	uint64_t v;

	if (!unit_mkdtemp(dir, sizeof(dir))) {
		unit_skip(u, "threshold", "no temporary directory");
		return;
	}
	run(u, "threshold.below", dir, '<', 1000ULL << 10, 1500, below,
	    sizeof(below) / sizeof(below[0]), false);
	run(u, "threshold.above", dir, '>', 2000ULL << 10, 1500, above,
	    sizeof(above) / sizeof(above[0]), false);
	run(u, "threshold.rise", dir, '+', 1000ULL << 10, 5000, rise,
	    sizeof(rise) / sizeof(rise[0]), true);

	unit_begin(&c, u, "threshold.fields");
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	CHECK(&c, write_meminfo(path, 42));
	CHECK(&c, meminfo_read(path, "Slab", &v) == 0);
	CHECK_U64(&c, v, 42ULL << 10);
	/* No unit: a count, taken as it is. */
	CHECK(&c, meminfo_read(path, "HugePages_Total", &v) == 0);
	CHECK_U64(&c, v, 3);
	/* A prefix of a field is not the field. */
	CHECK(&c, meminfo_read(path, "Sla", &v) == -1);
	CHECK(&c, threshold_init(&t, path, "Bogus", '<', 1, err, sizeof(err)) == -1);
	CHECK(&c, !strncmp(err, "--flight-when: no field Bogus in ", 33));
	unit_end(&c);
	unit_rmdir(dir, files, 1);
}
