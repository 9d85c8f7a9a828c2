// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The memory cgroup limit: see memcg.h.  Read once before loading and
 * after something failed, so plain stdio, no caching.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memcg.h"

/* v1 says "no limit" with LONG_MAX rounded down to a page; v2 with "max". */
#define NO_LIMIT_FROM (1ULL << 62)

/* What differs between the two hierarchies. */
struct memcg_kind {
	bool v1;
	const char *fstype;     /* in /proc/self/mountinfo */
	const char *limit_file; /* in each cgroup directory */
	const char *usage_file; /* what is charged there now */
};

static const struct memcg_kind kinds[] = {
	{ .v1 = true, .fstype = "cgroup", .limit_file = "memory.limit_in_bytes",
	  .usage_file = "memory.usage_in_bytes" },
	{ .v1 = false, .fstype = "cgroup2", .limit_file = "memory.max",
	  .usage_file = "memory.current" },
};

int memcg_parse_limit(const char *text, unsigned long long *bytes)
{
	char *end;

	errno = 0;
	*bytes = strtoull(text, &end, 10);
	if (errno || end == text || (*end && *end != '\n') || *bytes >= NO_LIMIT_FROM)
		return -1;
	return 0;
}

/* The comma-separated list has the word. */
static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p; p = strchr(p, ',')) {
		if (*p == ',')
			p++;
		if (!strncmp(p, word, n) && (p[n] == ',' || p[n] == '\0'))
			return true;
	}
	return false;
}

int memcg_cgroup_path(const char *proc_cgroup, bool v1, char *path, size_t size)
{
	const char *line = proc_cgroup;

	/* "ID:CONTROLLERS:PATH" per line. */
	for (; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *c1 = strchr(line, ':'), *c2, *eol;
		char controllers[256];
		size_t n;

		if (!c1 || !(c2 = strchr(c1 + 1, ':')))
			continue;
		eol = strchrnul(c2 + 1, '\n');
		n = (size_t)(c2 - c1 - 1);
		if (n >= sizeof(controllers))
			continue;
		memcpy(controllers, c1 + 1, n);
		controllers[n] = '\0';
		if (v1 ? !has_word(controllers, "memory") :
			 (n != 0 || strncmp(line, "0:", 2)))
			continue;
		if ((size_t)(eol - c2 - 1) >= size)
			return -1;
		snprintf(path, size, "%.*s", (int)(eol - c2 - 1), c2 + 1);
		return 0;
	}
	return -1;
}

static int read_text(const char *file, char *buf, size_t size)
{
	FILE *f = fopen(file, "r");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

/*
 * Where the hierarchy's cgroup at path is: the mount of fstype (for v1 the
 * one with the memory controller) whose root contains it.  0 with the
 * directory in dir, else -1.
 */
static int cgroup_dir(const struct memcg_kind *k, const char *path, char *dir, size_t size,
		      size_t *mount_len)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096], root[PATH_MAX], mnt[PATH_MAX], fstype[64], opts[1024];
	int ret = -1;

	if (!f)
		return -1;
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE SUPEROPTS" */
	while (ret && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");
		size_t rlen;

		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, opts) != 2 ||
		    strcmp(fstype, k->fstype) || (k->v1 && !has_word(opts, "memory")))
			continue;
		/* In a cgroup namespace or a bind mount the mount shows a subtree. */
		rlen = strcmp(root, "/") ? strlen(root) : 0;
		if (strncmp(path, root, rlen) || (path[rlen] && path[rlen] != '/'))
			continue;
		if ((size_t)snprintf(dir, size, "%s%s", mnt, path + rlen) < size) {
			*mount_len = strlen(mnt);
			ret = 0;
		}
	}
	fclose(f);
	return ret;
}

/* What is charged to the cgroup at dir; 0 when unreadable. */
static unsigned long long usage(const struct memcg_kind *k, const char *dir)
{
	char path[PATH_MAX + 32], text[64];
	unsigned long long v;

	snprintf(path, sizeof(path), "%s/%s", dir, k->usage_file);
	return !read_text(path, text, sizeof(text)) && !memcg_parse_limit(text, &v) ? v : 0;
}

/* The limit with the least room left, from dir up to the mount point
 * (mount_len long). */
static int tightest(const struct memcg_kind *k, char *dir, size_t mount_len,
		    unsigned long long *bytes, unsigned long long *used, char *file,
		    size_t file_size)
{
	char limit_path[PATH_MAX + 32], text[64], *slash;
	unsigned long long v, u, room = 0;
	int ret = -1;

	for (;;) {
		snprintf(limit_path, sizeof(limit_path), "%s/%s", dir, k->limit_file);
		if (!read_text(limit_path, text, sizeof(text)) && !memcg_parse_limit(text, &v)) {
			u = usage(k, dir);
			if (ret || (u < v ? v - u : 0) < room) {
				*bytes = v;
				*used = u;
				room = u < v ? v - u : 0;
				snprintf(file, file_size, "%s", limit_path);
				ret = 0;
			}
		}
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < mount_len)
			return ret;
		*slash = '\0';
	}
}

int memcg_limit(unsigned long long *bytes, unsigned long long *used, char *file,
		size_t file_size)
{
	char cgroups[4096], path[PATH_MAX], dir[PATH_MAX];
	size_t mount_len;

	if (read_text("/proc/self/cgroup", cgroups, sizeof(cgroups)))
		return -1;
	/* v1's memory controller where it is mounted (then v2 has none). */
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (memcg_cgroup_path(cgroups, kinds[i].v1, path, sizeof(path)) ||
		    cgroup_dir(&kinds[i], path, dir, sizeof(dir), &mount_len))
			continue;
		return tightest(&kinds[i], dir, mount_len, bytes, used, file, file_size);
	}
	return -1;
}

void memcg_explain(int errnum, char *msg, size_t size)
{
	char file[PATH_MAX + 32];
	unsigned long long bytes, used;
	size_t len = strlen(msg);

	if ((errnum != ENOMEM && errnum != EPERM) || memcg_limit(&bytes, &used, file, sizeof(file)))
		return;
	snprintf(msg + len, size - len, "; the memory cgroup limit (%llu MiB, %s) is %s",
		 bytes >> 20, file, errnum == ENOMEM ? "the likely cause" : "a possible cause");
}
