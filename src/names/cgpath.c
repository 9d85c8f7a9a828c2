// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cgroup ids to paths: see cgpath.h. */
#include "cgpath.h"

#include <dirent.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_ROOT "/sys/fs/cgroup"
#define MAX_DEPTH 64            /* deeper directories are not walked */
#define RESCAN_NS 1000000000LL /* at most one walk a second for unknown ids */

struct cgentry {
	uint64_t id;
	char *path; /* from the root, "/" for it */
};

struct cgpath {
	char *root;
	struct cgentry *ents; /* sorted by id after a walk */
	size_t n, cap;
	long long walked_ns;  /* when the last walk was, 0: never */
};

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Where cgroup2 is mounted; malloc'd. */
static char *find_root(void)
{
	FILE *f = setmntent("/proc/self/mounts", "r");
	struct mntent *m;
	char *root = NULL;

	while (f && !root && (m = getmntent(f)))
		if (!strcmp(m->mnt_type, "cgroup2"))
			root = strdup(m->mnt_dir);
	if (f)
		endmntent(f);
	return root ? root : strdup(DEFAULT_ROOT);
}

struct cgpath *cgpath_new(const char *root)
{
	struct cgpath *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->root = root ? strdup(root) : find_root();
	if (!c->root) {
		free(c);
		return NULL;
	}
	return c;
}

static void clear(struct cgpath *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->ents[i].path);
	c->n = 0;
}

void cgpath_free(struct cgpath *c)
{
	if (!c)
		return;
	clear(c);
	free(c->ents);
	free(c->root);
	free(c);
}

/* --- the walk -------------------------------------------------------------------------- */

static int add(struct cgpath *c, uint64_t id, const char *path)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct cgentry *e = realloc(c->ents, cap * sizeof(*e));

		if (!e)
			return -1;
		c->ents = e;
		c->cap = cap;
	}
	c->ents[c->n].path = strdup(path);
	if (!c->ents[c->n].path)
		return -1;
	c->ents[c->n++].id = id;
	return 0;
}

/* The directory dirfd (closed here) at path, and every one below it;
 * what cannot be read (a cgroup removed meanwhile) is left out. */
static void walk(struct cgpath *c, int fd_in, const char *path, int depth)
{
	DIR *d = fdopendir(fd_in);
	struct dirent *de;
	char sub[4096];

	if (!d) {
		close(fd_in);
		return;
	}
	while (depth < MAX_DEPTH && (de = readdir(d))) {
		struct stat st;
		int fd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", strcmp(path, "/") ? path : "",
			     de->d_name) >= (int)sizeof(sub))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) || add(c, st.st_ino, sub)) {
			close(fd);
			continue;
		}
		walk(c, fd, sub, depth + 1);
	}
	closedir(d);
}

static int by_id(const void *a, const void *b)
{
	const struct cgentry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static void rescan(struct cgpath *c)
{
	int fd = open(c->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	clear(c);
	c->walked_ns = now_ns();
	if (fd < 0)
		return;
	if (fstat(fd, &st) || add(c, st.st_ino, "/")) {
		close(fd);
		return;
	}
	walk(c, fd, "/", 0);
	if (c->n > 1)
		qsort(c->ents, c->n, sizeof(*c->ents), by_id);
}

/* --- lookups ---------------------------------------------------------------------------- */

static const struct cgentry *find(const struct cgpath *c, uint64_t id)
{
	struct cgentry key = { .id = id };

	return c->n ? bsearch(&key, c->ents, c->n, sizeof(*c->ents), by_id) : NULL;
}

static void put_path(const char *path, char *buf, size_t size)
{
	size_t len = strlen(path);

	if (!size)
		return;
	if (len < size || size < 8) {
		snprintf(buf, size, "%s", path);
		return;
	}
	/* The end tells containers apart: "/.../docker-<id>.scope". */
	snprintf(buf, size, "...%s", path + len - (size - 4));
}

bool cgpath_lookup(struct cgpath *c, uint64_t id, char *buf, size_t size, bool *again)
{
	const struct cgentry *e = find(c, id);

	*again = false;
	if (!e) {
		if (c->walked_ns && now_ns() - c->walked_ns < RESCAN_NS) {
			*again = true;
			return false;
		}
		rescan(c);
		e = find(c, id);
	}
	if (!e)
		return false;
	put_path(e->path, buf, size);
	return true;
}
