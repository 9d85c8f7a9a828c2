// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cgroup ids to paths (cgpath.c) on a directory tree made here: a
 * directory's id is its inode number, as in cgroupfs; the root is "/", a
 * path too long keeps its end, a directory made after the first walk is
 * found by the next (not before a second has passed), an unknown id is not.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "names/cgpath.h"
#include "unit.h"

void test_cgpath(struct unit *u);

static unsigned long long ino(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (unsigned long long)st.st_ino;
}

void test_cgpath(struct unit *u)
{
	struct unit_case c;
	char dir[256], a[300], b[400], late[300], buf[64], tiny[16];
	struct cgpath *cg;
	bool again = true;

	unit_begin(&c, u, "cgpath.lookup");
	if (!unit_mkdtemp(dir, sizeof(dir))) {
		CHECK(&c, !"a temporary directory");
		unit_end(&c);
		return;
	}
	snprintf(a, sizeof(a), "%s/system.slice", dir);
	snprintf(b, sizeof(b), "%s/docker-0123456789abcdef0123456789abcdef.scope", a);
	snprintf(late, sizeof(late), "%s/late", dir);
	CHECK(&c, mkdir(a, 0755) == 0 && mkdir(b, 0755) == 0);
	cg = cgpath_new(dir);
	CHECK(&c, cg != NULL);
	if (cg) {
		CHECK(&c, cgpath_lookup(cg, ino(dir), buf, sizeof(buf), &again) && !again);
		CHECK_STR(&c, buf, "/");
		CHECK(&c, cgpath_lookup(cg, ino(b), buf, sizeof(buf), &again));
		CHECK_STR(&c, buf, "/system.slice/docker-0123456789abcdef0123456789abcdef.scope");
		CHECK(&c, cgpath_lookup(cg, ino(b), tiny, sizeof(tiny), &again));
		CHECK_STR(&c, tiny, "...abcdef.scope");
		/* Made after the walk: not walked again within the second. */
		CHECK(&c, mkdir(late, 0755) == 0);
		CHECK(&c, !cgpath_lookup(cg, ino(late), buf, sizeof(buf), &again) && again);
		sleep(1);
		CHECK(&c, cgpath_lookup(cg, ino(late), buf, sizeof(buf), &again));
		CHECK_STR(&c, buf, "/late");
		/* An id no directory has, after a walk: false, not to be asked again. */
		sleep(1);
		CHECK(&c, !cgpath_lookup(cg, 1ULL << 60, buf, sizeof(buf), &again) && !again);
		cgpath_free(cg);
	}
	rmdir(late);
	rmdir(b);
	rmdir(a);
	rmdir(dir);
	unit_end(&c);
}
