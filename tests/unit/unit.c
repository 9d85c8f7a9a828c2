// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "unit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void unit_begin(struct unit_case *c, struct unit *u, const char *name)
{
	c->u = u;
	c->name = name;
	c->failed = false;
	c->why[0] = '\0';
}

/* Flushed per line so that a crash later still leaves the lines before. */
void unit_end(struct unit_case *c)
{
	if (c->failed) {
		c->u->failed++;
		printf("FAIL: %s: %s\n", c->name, c->why);
	} else {
		c->u->passed++;
		printf("PASS: %s\n", c->name);
	}
	fflush(stdout);
}

void unit_skip(struct unit *u, const char *name, const char *reason)
{
	u->skipped++;
	printf("SKIP: %s: %s\n", name, reason);
	fflush(stdout);
}

void unit_fail(struct unit_case *c, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->failed)
		return;
	c->failed = true;
	n = snprintf(c->why, sizeof(c->why), "%s:%d: ", file, line);
	if (n < 0 || (size_t)n >= sizeof(c->why))
		return;
	va_start(ap, fmt);
	vsnprintf(c->why + n, sizeof(c->why) - (size_t)n, fmt, ap);
	va_end(ap);
}

void unit_check_str(struct unit_case *c, const char *file, int line,
		    const char *got, const char *want)
{
	if (got && want && strcmp(got, want) == 0)
		return;
	unit_fail(c, file, line, "got \"%s\", want \"%s\"", got ? got : "(null)",
		  want ? want : "(null)");
}

void unit_check_u64(struct unit_case *c, const char *file, int line,
		    const char *expr, unsigned long long got,
		    unsigned long long want)
{
	if (got == want)
		return;
	unit_fail(c, file, line, "%s is %llu (0x%llx), want %llu (0x%llx)", expr,
		  got, got, want, want);
}

bool unit_mkdtemp(char *dir, size_t size)
{
	const char *base = getenv("TMPDIR");
	int n;

	if (!base || !*base)
		base = "/tmp";
	n = snprintf(dir, size, "%s/kmemsnoop-unit-XXXXXX", base);
	if (n < 0 || (size_t)n >= size)
		return false;
	return mkdtemp(dir) != NULL;
}

bool unit_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	size_t len = strlen(text);
	bool ok;

	if (!f)
		return false;
	ok = fwrite(text, 1, len, f) == len;
	return fclose(f) == 0 && ok;
}

/* Removes the named files, then the directory. */
void unit_rmdir(const char *dir, const char *const *files, size_t nfiles)
{
	char path[4096];

	for (size_t i = 0; i < nfiles; i++) {
		int n = snprintf(path, sizeof(path), "%s/%s", dir, files[i]);

		if (n > 0 && (size_t)n < sizeof(path))
			unlink(path);
	}
	rmdir(dir);
}
