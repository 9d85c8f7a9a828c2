// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading a kmemtrace directory: each cpuN file is validated whole before
 * anything is printed (a corrupt file is an error, not half a trace), then
 * the files are merged by time, and by sequence number within a CPU.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "binin.h"
#include "cachetab.h"
#include "recheader.h"
#include "record.h"
#include "sink.h"
#include "tasktab.h"
#include "bpf/kmemtrace.h"
#include "names/gfp.h"

/* Larger than any header or gfp file kmemsnoop writes, by far. */
#define SMALL_FILE_MAX (1 << 20)

struct cpu_file {
	int cpu; /* from the file's name */
	char *data;
	size_t size;
	size_t off; /* next record to merge */
	struct kmt_event head;
};

struct trace_dir {
	struct cpu_file *files;
	int nfiles;
	char *err;
	size_t err_size;
};

__attribute__((format(printf, 2, 3))) static int fail(struct trace_dir *td, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(td->err, td->err_size, fmt, ap);
	va_end(ap);
	return -1;
}

/* path whole, at most max bytes (more: -1, EFBIG); -1 with errno set. */
static int read_whole(const char *path, size_t max, char **data, size_t *size)
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
		if (len > max) {
			fclose(f);
			free(buf);
			errno = EFBIG;
			return -1;
		}
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

/* Every record of the file must decode; reports the first that does not,
 * before anything is printed.  A glance checks what decoding would. */
static int validate(struct trace_dir *td, const char *path, const struct cpu_file *cf)
{
	struct kmt_glance g;
	size_t off = 0;

	while (off < cf->size) {
		enum kmt_decode_status st = kmt_glance(cf->data + off, cf->size - off, &g);

		if (st != KMT_OK)
			return fail(td, "%s: %s at byte %zu", path, kmt_decode_error(st), off);
		off += g.event_size;
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
		return fail(td, "%s: %s", dir, strerror(errno));
	while (!ret && (de = readdir(d))) {
		struct cpu_file *cf, *grown;

		int cpu = cpu_index(de->d_name);

		if (cpu < 0)
			continue;
		grown = realloc(td->files, (td->nfiles + 1) * sizeof(*cf));
		if (!grown) {
			ret = fail(td, "%s: out of memory", dir);
			break;
		}
		td->files = grown;
		cf = &td->files[td->nfiles];
		memset(cf, 0, sizeof(*cf));
		cf->cpu = cpu;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (read_whole(path, SIZE_MAX, &cf->data, &cf->size)) {
			ret = fail(td, "%s: %s", path, strerror(errno));
			break;
		}
		td->nfiles++;
		ret = validate(td, path, cf);
	}
	closedir(d);
	if (!ret && !td->nfiles)
		ret = fail(td, "%s: no cpu files: not a kmemtrace directory", dir);
	return ret;
}

static void free_dir(struct trace_dir *td)
{
	for (int i = 0; i < td->nfiles; i++)
		free(td->files[i].data);
	free(td->files);
}

/* The file's next allocation, free or task record (validate() checked
 * that it decodes); the caches described on the way are learned: they are
 * per CPU.  Task records go through the merge: they are in time order
 * across CPUs. */
static bool advance(struct cpu_file *cf, struct cachetab *caches)
{
	while (cf->off < cf->size) {
		kmt_decode(cf->data + cf->off, cf->size - cf->off, cf->cpu, &cf->head);
		cf->off += cf->head.event_size;
		if (cachetab_apply(caches, &cf->head))
			return true;
	}
	return false;
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

static int replay_record(struct trace_dir *td, struct sink *sink, const struct cpu_file *cf,
			 int cpu)
{
	const struct kmt_event *ev = &cf->head;
	int ret = sink->ops->record(sink, cpu, cf->data + cf->off - ev->event_size,
				    ev->event_size, ev);

	if (ret < 0)
		return fail(td, "%s", sink->err);
	return ret; /* SINK_GONE: the reader went away, nothing more to do */
}

static int merge(struct trace_dir *td, struct sink *sink)
{
	bool *live = calloc(td->nfiles, sizeof(bool));
	struct cachetab *caches = cachetab_new();
	struct tasktab *tasks = tasktab_new();
	int ret = 0;

	if (!live || !caches || !tasks) {
		free(live);
		cachetab_free(caches);
		tasktab_free(tasks);
		return fail(td, "out of memory");
	}
	for (int i = 0; i < td->nfiles; i++)
		live[i] = advance(&td->files[i], caches);
	while (!ret) {
		int best = -1;

		for (int i = 0; i < td->nfiles; i++)
			if (live[i] && (best < 0 || before(&td->files[i].head, &td->files[best].head)))
				best = i;
		if (best < 0)
			break;
		if (tasktab_apply(tasks, &td->files[best].head))
			ret = replay_record(td, sink, &td->files[best], td->files[best].cpu);
		live[best] = advance(&td->files[best], caches);
	}
	free(live);
	cachetab_free(caches);
	tasktab_free(tasks);
	return ret < 0 ? -1 : 0;
}

int binin_check(const char *dir, char *err, size_t err_size)
{
	struct trace_dir td = { .err = err, .err_size = err_size };
	unsigned long long version;

	if (read_number(dir, "abi_version", &version))
		return fail(&td, "%s: no readable abi_version: not a kmemtrace directory", dir);
	if (version < 1 || version > KMT_ABI_VERSION)
		return fail(&td, "%s: unsupported kmemtrace ABI version %llu", dir, version);
	return 0;
}

int binin_replay(const char *dir, struct sink *sink, struct binin_losses *lost, char *err,
		 size_t err_size)
{
	struct trace_dir td = { .err = err, .err_size = err_size };
	struct sink_losses none = { 0 };
	int ret;

	memset(lost, 0, sizeof(*lost));
	if (binin_check(dir, err, err_size))
		return -1;
	ret = load_dir(dir, &td);
	if (!ret && sink->ops->begin(sink) < 0)
		ret = fail(&td, "%s", sink->err);
	if (!ret)
		ret = merge(&td, sink);
	free_dir(&td);
	/* What was lost when it was recorded is the recording's own. */
	if (sink->ops->end(sink, &none) < 0 && !ret)
		ret = fail(&td, "%s", sink->err);
	read_number(dir, "total_overruns", &lost->bytes);
	read_number(dir, "total_overrun_events", &lost->events);
	return ret;
}

/* DIR/name whole: 1, 0 when there is no such file, -1 with a reason in err. */
static int read_small(const char *dir, const char *name, char **data, size_t *size, char *err,
		      size_t err_size)
{
	char path[4096];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (stat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -1;
	}
	/* Not a FIFO to wait on, nor a device or a huge file to read whole. */
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, err_size, "%s: not a regular file", path);
		return -1;
	}
	errno = 0;
	if (read_whole(path, SMALL_FILE_MAX, data, size)) {
		if (errno == EFBIG)
			snprintf(err, err_size, "%s: too large for a %s file (over %d bytes)", path,
				 name, SMALL_FILE_MAX);
		else
			snprintf(err, err_size, "%s: %s", path, strerror(errno ? errno : EIO));
		return -1;
	}
	return 1;
}

int binin_header(const char *dir, struct rec_header *h, char *err, size_t err_size)
{
	char why[256], *data;
	size_t size;
	int ret = read_small(dir, "header", &data, &size, err, err_size);

	if (ret <= 0)
		return ret;
	if (recheader_parse(data, size, h, why, sizeof(why))) {
		snprintf(err, err_size, "%s/header: %s", dir, why);
		ret = -1;
	}
	free(data);
	return ret;
}

int binin_gfp(const char *dir, struct gfp_names **names, char *err, size_t err_size)
{
	char why[256], *data;
	size_t size;
	int ret = read_small(dir, "gfp", &data, &size, err, err_size);

	*names = NULL;
	if (ret <= 0)
		return ret;
	*names = gfp_names_parse(data, size, why, sizeof(why));
	if (!*names) {
		snprintf(err, err_size, "%s/gfp: %s (without the file, the running kernel's "
			 "names are used)", dir, why);
		ret = -1;
	}
	free(data);
	return ret;
}
