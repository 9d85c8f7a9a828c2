/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A minimal unit test harness.  Output protocol, one line per test case:
 *   PASS: <name>
 *   FAIL: <name>: <why>
 *   SKIP: <name>: <reason>
 * and no totals line (tests/run.sh counts the lines).
 *
 * A test file exports void test_<suite>(struct unit *u) and is listed once
 * in UNIT_SUITES in test_main.c.  Within a suite, each case is
 *   struct unit_case c;
 *   unit_begin(&c, u, "name");
 *   CHECK(&c, ...); CHECK_STR(&c, got, want); ...
 *   unit_end(&c);
 * Only the first failed check of a case is reported.
 */
#ifndef KMEMSNOOP_UNIT_H
#define KMEMSNOOP_UNIT_H

#include <stdbool.h>
#include <stddef.h>

struct unit {
	unsigned int passed;
	unsigned int failed;
	unsigned int skipped;
};

struct unit_case {
	struct unit *u;
	const char *name;
	bool failed;
	char why[512];
};

void unit_begin(struct unit_case *c, struct unit *u, const char *name);
void unit_end(struct unit_case *c);
void unit_skip(struct unit *u, const char *name, const char *reason);

void unit_fail(struct unit_case *c, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void unit_check_str(struct unit_case *c, const char *file, int line,
		    const char *got, const char *want);
void unit_check_u64(struct unit_case *c, const char *file, int line,
		    const char *expr, unsigned long long got,
		    unsigned long long want);

#define CHECK(c, cond)                                                      \
	do {                                                                \
		if (!(cond))                                                \
			unit_fail((c), __FILE__, __LINE__, "%s", #cond);    \
	} while (0)
#define CHECK_STR(c, got, want) unit_check_str((c), __FILE__, __LINE__, (got), (want))
#define CHECK_U64(c, got, want) \
	unit_check_u64((c), __FILE__, __LINE__, #got, (got), (want))

/* Temporary files for tests: a fresh directory, files written whole. */
bool unit_mkdtemp(char *dir, size_t size);
bool unit_write_file(const char *path, const char *text);
void unit_rmdir(const char *dir, const char *const *files, size_t nfiles);

#endif /* KMEMSNOOP_UNIT_H */
