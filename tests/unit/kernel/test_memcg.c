// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memcg.c's parsing: limit files as cgroup v1 and v2 write them, and
 * /proc/self/cgroup as a hybrid (v1 memory controller) and a v2-only
 * system show it.
 */
#include "kernel/memcg.h"
#include "unit.h"

#include <string.h>

void test_memcg(struct unit *u);

static void limits(struct unit *u)
{
	struct unit_case c;
	unsigned long long v = 0;

	unit_begin(&c, u, "memcg.limit_bytes");
	CHECK(&c, memcg_parse_limit("16777216\n", &v) == 0);
	CHECK_U64(&c, v, 16777216);
	unit_end(&c);

	unit_begin(&c, u, "memcg.limit_none");
	CHECK(&c, memcg_parse_limit("max\n", &v) == -1);
	/* v1's "no limit": LONG_MAX rounded down to a 4 KiB page. */
	CHECK(&c, memcg_parse_limit("9223372036854771712\n", &v) == -1);
	CHECK(&c, memcg_parse_limit("", &v) == -1);
	CHECK(&c, memcg_parse_limit("12ab\n", &v) == -1);
	unit_end(&c);
}

static void paths(struct unit *u)
{
	static const char hybrid[] = "9:name=systemd:/\n"
				     "4:memory:/jobs/a1\n"
				     "2:cpu,cpuacct:/\n"
				     "0::/\n";
	static const char v2[] = "0::/user.slice/test.scope\n";
	static const char joined[] = "5:cpuset:/\n3:blkio,memory:/x\n";
	struct unit_case c;
	char path[64];

	unit_begin(&c, u, "memcg.path_v1");
	CHECK(&c, memcg_cgroup_path(hybrid, true, path, sizeof(path)) == 0);
	CHECK_STR(&c, path, "/jobs/a1");
	CHECK(&c, memcg_cgroup_path(joined, true, path, sizeof(path)) == 0);
	CHECK_STR(&c, path, "/x");
	CHECK(&c, memcg_cgroup_path(v2, true, path, sizeof(path)) == -1);
	unit_end(&c);

	unit_begin(&c, u, "memcg.path_v2");
	CHECK(&c, memcg_cgroup_path(v2, false, path, sizeof(path)) == 0);
	CHECK_STR(&c, path, "/user.slice/test.scope");
	CHECK(&c, memcg_cgroup_path(hybrid, false, path, sizeof(path)) == 0);
	CHECK_STR(&c, path, "/");
	CHECK(&c, memcg_cgroup_path(joined, false, path, sizeof(path)) == -1);
	/* Too long for the buffer: no truncated path. */
	CHECK(&c, memcg_cgroup_path(v2, false, path, 8) == -1);
	unit_end(&c);
}

void test_memcg(struct unit *u)
{
	limits(u);
	paths(u);
}
