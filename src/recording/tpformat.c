// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Copies tracefs's format files: see tpformat.h.  An event's system is not
 * in the source table (the kernel's names are unique across kmem, percpu,
 * vmalloc, sched and task), so each name is looked for in every system
 * directory.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "tpformat.h"

static const char *const default_tracefs[] = { "/sys/kernel/tracing",
					       "/sys/kernel/debug/tracing", NULL };

/* The first of dirs with an events directory, or NULL. */
static const char *find_tracefs(const char *const *dirs)
{
	char path[4096];
	struct stat st;

	for (; *dirs; dirs++) {
		snprintf(path, sizeof(path), "%s/events", *dirs);
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			return *dirs;
	}
	return NULL;
}

/* Copies the file at path to out after an "event: SYSTEM:NAME" line. */
static int copy_format(FILE *out, const char *path, const char *system, const char *name)
{
	FILE *in = fopen(path, "r");
	char buf[4096];
	size_t n;

	if (!in)
		return 1;
	fprintf(out, "event: %s:%s\n", system, name);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	fclose(in);
	return 0;
}

/* The format of event name, from whichever system has it. */
static void write_event(FILE *out, const char *tracefs, const char *name)
{
	char events[4096], path[8192];
	DIR *d;
	struct dirent *de;
	bool found = false;

	snprintf(events, sizeof(events), "%s/events", tracefs);
	d = opendir(events);
	while (d && !found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s/format", events, de->d_name, name);
		found = copy_format(out, path, de->d_name, name) == 0;
	}
	if (d)
		closedir(d);
	if (!found)
		fprintf(out, "missing: %s\n", name);
}

int tpformat_write(FILE *out, const void *ctx)
{
	const struct tpformat_list *list = ctx;
	const char *tracefs = find_tracefs(list->tracefs ? list->tracefs : default_tracefs);

	errno = 0;
	fprintf(out, "%s %d\n", TPFORMAT_MAGIC, TPFORMAT_VERSION);
	if (!tracefs) {
		fprintf(out, "tracefs: none (not mounted)\n");
		return ferror(out) ? -1 : 0;
	}
	fprintf(out, "tracefs: %s\n", tracefs);
	for (int i = 0; i < list->count; i++)
		write_event(out, tracefs, list->names[i]);
	return ferror(out) ? -1 : 0;
}
