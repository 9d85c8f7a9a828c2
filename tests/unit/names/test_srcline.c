// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Source lines from DWARF, on tests/dwarf_fixture (built -g by make):
 * it prints the return addresses of its calls and the lines they are on,
 * and srcline must find the same lines from the addresses alone, through
 * an inlined *_noprof wrapper too.
 */
#include "names/alloctag.h"
#include "names/srcline.h"
#include "unit.h"

#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void test_srcline(struct unit *u);

#define FIXTURE_SRC "tests/dwarf_fixture.c"

struct call {
	char name[32];
	unsigned long long ret;
	unsigned int line;
	unsigned long long func;
};

/* The fixtures in tests/, one up from this test binary. */
static void fixture_path(char *path, size_t size, const char *name)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		snprintf(path, size, "tests/%s", name);
		return;
	}
	self[n] = '\0';
	snprintf(path, size, "%s/../%s", dirname(self), name);
}

/* Runs the fixture; the number of calls it printed. */
static int run_fixture(const char *path, struct call *calls, int max)
{
	FILE *p = popen(path, "r");
	int n = 0;

	if (!p)
		return 0;
	while (n < max && fscanf(p, "%31s %llx %u %llx", calls[n].name, &calls[n].ret,
				 &calls[n].line, &calls[n].func) == 4)
		n++;
	pclose(p);
	return n;
}

static const struct call *find_call(const struct call *calls, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(calls[i].name, name))
			return &calls[i];
	return NULL;
}

static void test_lookups(struct unit *u, struct srcline *d, const struct call *calls, int n)
{
	const struct call *direct = find_call(calls, n, "direct");
	const struct call *wrapper = find_call(calls, n, "wrapper");
	const struct call *caller = find_call(calls, n, "caller");
	struct srcline_frame f[SRCLINE_MAX_INLINE];
	struct unit_case c;
	int got;

	unit_begin(&c, u, "srcline.direct_call");
	CHECK(&c, direct != NULL);
	if (direct) {
		/* The call instruction: one byte before its return address. */
		got = srcline_lookup(d, direct->ret - 1, f, SRCLINE_MAX_INLINE);
		CHECK_U64(&c, got, 1);
		if (got >= 1) {
			CHECK_STR(&c, f[0].file, FIXTURE_SRC);
			CHECK_U64(&c, f[0].line, direct->line);
			CHECK_STR(&c, f[0].func, "fixture_direct");
		}
	}
	unit_end(&c);

	unit_begin(&c, u, "srcline.inline_chain");
	CHECK(&c, wrapper && caller);
	if (wrapper && caller) {
		got = srcline_lookup(d, wrapper->ret - 1, f, SRCLINE_MAX_INLINE);
		CHECK_U64(&c, got, 2);
		if (got == 2) {
			CHECK_STR(&c, f[0].file, FIXTURE_SRC);
			CHECK_U64(&c, f[0].line, wrapper->line);
			CHECK_STR(&c, f[0].func, "fixture_wrap_noprof");
			CHECK_STR(&c, f[1].file, FIXTURE_SRC);
			CHECK_U64(&c, f[1].line, caller->line);
			CHECK_STR(&c, f[1].func, "fixture_inlined");
			/* The tag is the caller's line, as alloc_hooks() tags it. */
			CHECK_U64(&c, alloctag_pick_inline(f, got), 1);
		}
		/* A chain cut to one frame is the innermost one. */
		CHECK_U64(&c, srcline_lookup(d, wrapper->ret - 1, f, 1), 1);
		CHECK_U64(&c, f[0].line, wrapper->line);
	}
	unit_end(&c);

	unit_begin(&c, u, "srcline.symbols");
	{
		unsigned long long addr = 0;
		const unsigned char *bits;

		CHECK(&c, srcline_symbol(d, "fixture_direct", &addr) == 0);
		CHECK_U64(&c, addr, direct ? direct->func : 1);
		CHECK(&c, srcline_symbol(d, "no_such_symbol", &addr) == -1);
		CHECK(&c, srcline_build_id(d, &bits) >= 16);
		/* No line covers address 0. */
		CHECK_U64(&c, srcline_lookup(d, 0, f, SRCLINE_MAX_INLINE), 0);
	}
	unit_end(&c);
}

static void test_errors(struct unit *u, const char *nodwarf)
{
	char err[512], dir[256], path[512];
	struct unit_case c;
	struct srcline *d;
	static const char *const files[] = { "text" };

	unit_begin(&c, u, "srcline.errors");
	d = srcline_open("/nonexistent/vmlinux", err, sizeof(err));
	CHECK(&c, d == NULL);
	CHECK(&c, strstr(err, "/nonexistent/vmlinux: No such file or directory") != NULL);
	d = srcline_open(nodwarf, err, sizeof(err));
	CHECK(&c, d == NULL);
	if (!strstr(err, "has no DWARF debug information"))
		unit_fail(&c, __FILE__, __LINE__, "no-DWARF message: \"%s\"", err);
	if (unit_mkdtemp(dir, sizeof(dir))) {
		snprintf(path, sizeof(path), "%s/text", dir);
		unit_write_file(path, "not an ELF file\n");
		d = srcline_open(path, err, sizeof(err));
		CHECK(&c, d == NULL);
		if (!strstr(err, "not an ELF file"))
			unit_fail(&c, __FILE__, __LINE__, "non-ELF message: \"%s\"", err);
		unit_rmdir(dir, files, 1);
	}
	unit_end(&c);
}

static void test_relative(struct unit *u)
{
	struct unit_case c;

	unit_begin(&c, u, "srcline.relative");
	CHECK_STR(&c, srcline_relative("/build/linux/mm/slub.c", "/build/linux"), "mm/slub.c");
	CHECK_STR(&c, srcline_relative("/build/linux/mm/slub.c", "/build/linux/"), "mm/slub.c");
	/* Debian's kernels: a relative compilation directory. */
	CHECK_STR(&c, srcline_relative("debian/build/build_amd64_none_cloud-amd64/ipc/msgutil.c",
				       "debian/build/build_amd64_none_cloud-amd64"),
		  "ipc/msgutil.c");
	CHECK_STR(&c, srcline_relative("./ipc/msgutil.c", "/build/linux"), "ipc/msgutil.c");
	/* Only a whole directory name is taken off. */
	CHECK_STR(&c, srcline_relative("/build/linux-2/mm/slub.c", "/build/linux"),
		  "/build/linux-2/mm/slub.c");
	CHECK_STR(&c, srcline_relative("/usr/include/stdio.h", "/build/linux"),
		  "/usr/include/stdio.h");
	CHECK_STR(&c, srcline_relative("mm/slub.c", NULL), "mm/slub.c");
	CHECK_STR(&c, srcline_relative(NULL, "/build"), "??");
	unit_end(&c);
}

void test_srcline(struct unit *u)
{
	char path[4096], nodwarf[4096], err[512];
	struct call calls[8];
	struct srcline *d;
	int n;

	fixture_path(path, sizeof(path), "dwarf_fixture");
	fixture_path(nodwarf, sizeof(nodwarf), "nodwarf_fixture");
	test_relative(u);
	n = run_fixture(path, calls, 8);
	d = srcline_open(path, err, sizeof(err));
	if (!d || n != 3) {
		struct unit_case c;

		unit_begin(&c, u, "srcline.fixture");
		unit_fail(&c, __FILE__, __LINE__, "%s (make builds it): %s, %d calls printed", path,
			  d ? "opened" : err, n);
		unit_end(&c);
		srcline_close(d);
		return;
	}
	test_lookups(u, d, calls, n);
	srcline_close(d);
	test_errors(u, nodwarf);
}
