// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading a kmemtrace directory: each cpuN file is validated whole before
 * anything is printed (a corrupt file is an error, not half a trace), then
 * the files are merged by time, and by sequence number within a CPU.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binin.h"
#include "env.h"
#include "record.h"
#include "text.h"

struct cpu_file {
	char *data;
	size_t size;
	size_t off; /* next record to merge */
	struct kmt_event head;
};

struct trace_dir {
	struct cpu_file *files;
	int nfiles;
};

__attribute__((format(printf, 1, 2))) static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kmemsnoop: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_RUNTIME;
}

static int read_whole(const char *path, char **data, size_t *size)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 16, len = 0, n;
	char *buf = malloc(cap);

	if (!f || !buf) {
		if (f)
			fclose(f);
		free(buf);
		return -1;
	}
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger)
				break;
			buf = bigger;
			cap *= 2;
		}
	}
	if (ferror(f) || len == cap) {
		fclose(f);
		free(buf);
		errno = errno ? errno : ENOMEM;
		return -1;
	}
	fclose(f);
	*data = buf;
	*size = len;
	return 0;
}

static int read_number(const char *dir, const char *name, unsigned long long *value)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%llu", value) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

/* Every record of the file must decode; reports the first that does not. */
static int validate(const char *path, const struct cpu_file *cf)
{
	struct kmt_event ev;
	size_t off = 0;

	while (off < cf->size) {
		enum kmt_decode_status st = kmt_decode(cf->data + off, cf->size - off, &ev);

		if (st != KMT_OK) {
			return fail("%s: %s at byte %zu", path, kmt_decode_error(st), off);
		}
		off += ev.event_size;
	}
	return 0;
}

static int cpu_index(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "cpu", 3) || !name[3])
		return -1;
	n = strtol(name + 3, &end, 10);
	return *end || n < 0 || n > 65535 ? -1 : (int)n;
}

static int load_dir(const char *dir, struct trace_dir *td)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[4096];
	int ret = 0;

	if (!d)
		return fail("%s: %s", dir, strerror(errno));
	while (!ret && (de = readdir(d))) {
		struct cpu_file *cf, *grown;

		if (cpu_index(de->d_name) < 0)
			continue;
		grown = realloc(td->files, (td->nfiles + 1) * sizeof(*cf));
		if (!grown) {
			ret = fail("%s: out of memory", dir);
			break;
		}
		td->files = grown;
		cf = &td->files[td->nfiles];
		memset(cf, 0, sizeof(*cf));
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (read_whole(path, &cf->data, &cf->size)) {
			ret = fail("%s: %s", path, strerror(errno));
			break;
		}
		td->nfiles++;
		ret = validate(path, cf);
	}
	closedir(d);
	if (!ret && !td->nfiles)
		ret = fail("%s: no cpu files: not a kmemtrace directory", dir);
	return ret;
}

static void free_dir(struct trace_dir *td)
{
	for (int i = 0; i < td->nfiles; i++)
		free(td->files[i].data);
	free(td->files);
}

static bool advance(struct cpu_file *cf)
{
	if (cf->off >= cf->size)
		return false;
	kmt_decode(cf->data + cf->off, cf->size - cf->off, &cf->head);
	cf->off += cf->head.event_size;
	return true;
}

/*
 * Time order across CPUs; within a CPU (equal times) sequence order.  ABI 1
 * records have no time and a global sequence: sequence order alone.
 */
static bool before(const struct kmt_event *a, const struct kmt_event *b)
{
	if (a->has_time && b->has_time && a->timestamp != b->timestamp)
		return a->timestamp < b->timestamp;
	return kmt_seq_cmp(a->seq_num, b->seq_num) < 0;
}

static int merge_print(struct trace_dir *td, struct text_sink *sink)
{
	bool *live = calloc(td->nfiles, sizeof(bool));

	if (!live)
		return fail("out of memory");
	for (int i = 0; i < td->nfiles; i++)
		live[i] = advance(&td->files[i]);
	for (;;) {
		int best = -1;

		for (int i = 0; i < td->nfiles; i++)
			if (live[i] && (best < 0 || before(&td->files[i].head, &td->files[best].head)))
				best = i;
		if (best < 0)
			break;
		if (text_print_event(sink, &td->files[best].head)) {
			free(live);
			return fail("writing output: %s", strerror(errno));
		}
		live[best] = advance(&td->files[best]);
	}
	free(live);
	return EXIT_OK;
}

int binin_print(const char *dir, struct text_sink *sink)
{
	struct trace_dir td = {};
	unsigned long long version, lost_bytes = 0, lost_events = 0;
	int ret;

	if (read_number(dir, "abi_version", &version))
		return fail("%s: no readable abi_version: not a kmemtrace directory", dir);
	if (version < 1 || version > KMT_ABI_VERSION)
		return fail("%s: unsupported kmemtrace ABI version %llu", dir, version);
	ret = load_dir(dir, &td);
	if (!ret && !(ret = text_print_header(sink) ? EXIT_RUNTIME : 0))
		ret = merge_print(&td, sink);
	free_dir(&td);
	if (fflush(sink->out) && !ret)
		ret = fail("writing output: %s", strerror(errno));
	read_number(dir, "total_overruns", &lost_bytes);
	read_number(dir, "total_overrun_events", &lost_events);
	if (!ret && (lost_bytes || lost_events))
		fprintf(stderr, "kmemsnoop: this trace lost %llu events (%llu bytes) when recorded\n",
			lost_events, lost_bytes);
	return ret;
}
