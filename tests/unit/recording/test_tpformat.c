// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording's tracepoints file (tpformat.c), from a made-up tracefs:
 * the first directory with an events directory is taken, each format is
 * copied whole after its "event: SYSTEM:NAME" line whichever system holds
 * it, an event no system has is named as missing, and without any tracefs
 * the file says so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recording/tpformat.h"
#include "unit.h"

void test_tpformat(struct unit *u);

static int put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* What tpformat_write() writes for names in tracefs dirs, in buf. */
static void write_list(const char *const *dirs, const char *const *names, int n, char *buf,
		       size_t size)
{
	struct tpformat_list list = { names, n, dirs };
	FILE *f = fmemopen(buf, size, "w");

	buf[0] = 0;
	if (!f)
		return;
	if (tpformat_write(f, &list))
		snprintf(buf, size, "(failed)");
	fclose(f);
}

void test_tpformat(struct unit *u)
{
	static const char *const names[] = { "kmalloc", "task_rename", "nosuch" };
	char root[] = "/tmp/kmemsnoop-tpformat.XXXXXX", path[1024], buf[4096];
	const char *dirs[3] = { path, NULL, NULL };
	char empty[300], fs[300];
	struct unit_case c;

	unit_begin(&c, u, "tpformat.file");
	CHECK(&c, mkdtemp(root) != NULL);
	snprintf(empty, sizeof(empty), "%s/empty", root);
	snprintf(fs, sizeof(fs), "%s/fs", root);
	mkdir(empty, 0700);
	snprintf(path, sizeof(path), "%s/events/kmem/kmalloc", fs);
	CHECK(&c, !mkdir(fs, 0700) && !mkdir(strcat(strcpy(buf, fs), "/events"), 0700));
	mkdir(strcat(strcpy(buf, fs), "/events/kmem"), 0700);
	mkdir(strcat(strcpy(buf, fs), "/events/task"), 0700);
	mkdir(strcat(strcpy(buf, fs), "/events/task/task_rename"), 0700);
	CHECK(&c, !mkdir(path, 0700));
	CHECK(&c, !put_file(strcat(path, "/format"), "name: kmalloc\nID: 1\nformat:\n\tfield:x\n"));
	CHECK(&c, !put_file(strcat(strcpy(buf, fs), "/events/task/task_rename/format"),
			    "name: task_rename\n"));

	/* The empty directory has no events: the next one is taken. */
	dirs[0] = empty;
	dirs[1] = fs;
	write_list(dirs, names, 3, buf, sizeof(buf));
	snprintf(path, sizeof(path),
		 "kmemsnoop-tracepoints 1\ntracefs: %s\nevent: kmem:kmalloc\nname: kmalloc\nID: 1\n"
		 "format:\n\tfield:x\nevent: task:task_rename\nname: task_rename\n"
		 "missing: nosuch\n", fs);
	CHECK_STR(&c, buf, path);

	dirs[1] = NULL;
	write_list(dirs, names, 3, buf, sizeof(buf));
	CHECK_STR(&c, buf, "kmemsnoop-tracepoints 1\ntracefs: none (not mounted)\n");
	unit_end(&c);

	snprintf(buf, sizeof(buf), "rm -rf '%s'", root);
	if (system(buf) != 0)
		fprintf(stderr, "tpformat: could not remove %s\n", root);
}
