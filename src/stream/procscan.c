// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --user-stacks: the processes of -c and --cgroup found in /proc. */
#include "procscan.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names/usyms.h"
#include "env.h"

static int pid_of(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);

	return *name && !*end && pid > 0 && pid <= 0x3fffffff ? (int)pid : 0;
}

/* Is process pid named comm (its /proc/PID/comm, as the kernel keeps it)? */
static int named(int pid, const char *comm)
{
	char path[64], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return !strcmp(buf, comm);
}

static void note_named(struct usyms *u, const char *comm)
{
	DIR *proc = opendir("/proc");
	struct dirent *e;

	while (proc && (e = readdir(proc))) {
		int pid = pid_of(e->d_name);

		if (pid && !usyms_knows(u, pid) && named(pid, comm))
			usyms_note_process(u, pid);
	}
	if (proc)
		closedir(proc);
}

/* The processes of the cgroup at dir (cgroup.procs) and of those below
 * it, depth levels down at most. */
static void note_cgroup(struct usyms *u, int dir, int depth)
{
	int fd = openat(dir, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	FILE *procs = fd >= 0 ? fdopen(fd, "re") : NULL;
	struct dirent *e;
	DIR *d;
	int pid;

	if (fd >= 0 && !procs)
		close(fd);
	while (procs && fscanf(procs, "%d", &pid) == 1)
		if (pid > 0 && !usyms_knows(u, pid))
			usyms_note_process(u, pid);
	if (procs)
		fclose(procs);
	fd = depth > 0 ? openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (fd >= 0 && !d)
		close(fd);
	while (d && (e = readdir(d))) {
		int sub;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sub >= 0) {
			note_cgroup(u, sub, depth - 1);
			close(sub);
		}
	}
	if (d)
		closedir(d);
}

/* Levels of cgroups below --cgroup's looked into: a container's tree. */
#define CGROUP_DEPTH 8

void procscan_note(struct usyms *u, const struct env *env)
{
	int dir;

	if (env->comm[0])
		note_named(u, env->comm);
	if (!env->cgroup)
		return;
	dir = open(env->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	note_cgroup(u, dir, CGROUP_DEPTH);
	close(dir);
}
