// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading a kmemtrace directory: each cpuN file is checked whole before
 * anything is printed (a corrupt file is an error, not half a trace), then
 * the files are merged by time, and by sequence number within a CPU.  Both
 * passes stream the files through bounded windows (recfile.h): a
 * recording larger than memory reads as well as a small one.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "binin.h"
#include "cachetab.h"
#include "recfile.h"
#include "recheader.h"
#include "record.h"
#include "sink.h"
#include "tasktab.h"
#include "bpf/kmemtrace.h"
#include "names/gfp.h"
#include "util/progress.h"

/* Larger than any header or gfp file kmemsnoop writes, by far. */
#define SMALL_FILE_MAX (1 << 20)

struct cpu_file {
	int cpu; /* from the file's name */
	char *path;
	bool open;
	struct recfile rf;
	/* The next record to merge: its decoding, and its bytes in rf's
	 * window (valid until the file is advanced again). */
	struct kmt_event head;
	const void *head_data;
};

struct trace_dir {
	struct cpu_file *files;
	int nfiles;
	unsigned long long total_bytes; /* of the cpu files, for the progress */
	struct progress progress;
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

static int cpu_index(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "cpu", 3) || !name[3])
		return -1;
	n = strtol(name + 3, &end, 10);
	return *end || n < 0 || n > 65535 ? -1 : (int)n;
}

static int add_file(struct trace_dir *td, const char *dir, const char *name, int cpu)
{
	struct cpu_file *grown = realloc(td->files, (td->nfiles + 1) * sizeof(*grown));
	struct cpu_file *cf;
	struct stat st;

	if (!grown)
		return fail(td, "%s: out of memory", dir);
	td->files = grown;
	cf = &td->files[td->nfiles];
	memset(cf, 0, sizeof(*cf));
	cf->cpu = cpu;
	if (asprintf(&cf->path, "%s/%s", dir, name) < 0)
		return fail(td, "%s: out of memory", dir);
	td->nfiles++;
	/* Only for the progress: what cannot be read says so when opened. */
	if (!stat(cf->path, &st) && S_ISREG(st.st_mode))
		td->total_bytes += st.st_size;
	return 0;
}

/* The cpu files of dir, in the directory's order (that of the checks, and
 * of records of equal times in the merge). */
static int list_dir(const char *dir, struct trace_dir *td)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return fail(td, "%s: %s", dir, strerror(errno));
	while (!ret && (de = readdir(d))) {
		int cpu = cpu_index(de->d_name);

		if (cpu >= 0)
			ret = add_file(td, dir, de->d_name, cpu);
	}
	closedir(d);
	return ret;
}

/* Every cpu file stays open for the merge: more than the usual soft limit
 * of 1024 descriptors for a recording of the largest machines.  Raised
 * within the hard limit, as tracing does; past it, opening says so. */
static void allow_open_files(int nfiles)
{
	rlim_t want = (rlim_t)nfiles + 64; /* and what else is open */
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &rl);
}

/* Every record of the file must decode; reports the first that does not,
 * before anything is printed.  A glance checks what decoding would. */
static int check_file(struct trace_dir *td, struct cpu_file *cf, size_t window)
{
	struct kmt_glance g;
	const void *data;
	size_t len;
	int got;

	if (recfile_open(&cf->rf, cf->path, window, td->err, td->err_size))
		return -1;
	while ((got = recfile_peek(&cf->rf, &data, &len, td->err, td->err_size)) > 0) {
		enum kmt_decode_status st = kmt_glance(data, len, &g);

		if (st != KMT_OK)
			return fail(td, "%s: %s at byte %llu", cf->path, kmt_decode_error(st),
				    recfile_offset(&cf->rf));
		recfile_skip(&cf->rf, g.event_size);
		progress_add(&td->progress, g.event_size);
	}
	return got;
}

static int check_files(const char *dir, struct trace_dir *td)
{
	size_t window = recfile_window(td->nfiles);
	int ret = 0;

	if (!td->nfiles)
		return fail(td, "%s: no cpu files: not a kmemtrace directory", dir);
	allow_open_files(td->nfiles);
	progress_init(&td->progress, td->total_bytes, progress_wanted(td->total_bytes));
	progress_pass(&td->progress, "kmemsnoop: checking");
	for (int i = 0; i < td->nfiles && !ret; i++) {
		td->files[i].open = true; /* closed even when it fails to open */
		ret = check_file(td, &td->files[i], window);
	}
	return ret;
}

static void free_dir(struct trace_dir *td)
{
	for (int i = 0; i < td->nfiles; i++) {
		if (td->files[i].open)
			recfile_close(&td->files[i].rf);
		free(td->files[i].path);
	}
	free(td->files);
}

/* The file's next allocation, free or task record: 1, 0 at its end, -1
 * when it no longer reads as it was checked.  The caches described on the
 * way are learned: they are per CPU.  Task records go through the merge:
 * they are in time order across CPUs. */
static int advance(struct trace_dir *td, struct cpu_file *cf, struct cachetab *caches)
{
	const void *data;
	size_t len;
	int got;

	while ((got = recfile_peek(&cf->rf, &data, &len, td->err, td->err_size)) > 0) {
		enum kmt_decode_status st = kmt_decode(data, len, cf->cpu, &cf->head);

		if (st != KMT_OK)
			return fail(td, "%s: %s at byte %llu, which decoded when checked: the file "
				    "changed while being read", cf->path, kmt_decode_error(st),
				    recfile_offset(&cf->rf));
		cf->head_data = data;
		recfile_skip(&cf->rf, cf->head.event_size);
		progress_add(&td->progress, cf->head.event_size);
		if (cachetab_apply(caches, &cf->head))
			return 1;
	}
	return got;
}

/* What the merge orders a file's head by, kept apart: comparing
 * reaches into no file's decoded record. */
struct merge_key {
	unsigned long long timestamp;
	__s32 seq_num;
	bool has_time;
	int file;
};

/*
 * The files' heads in a tournament: a leaf per file (-1 once it has no
 * record left), each node above the earlier of its two children, the root
 * (node 1) the file of the next record.  When that file's head changes,
 * only its own matches are played again: log2(files) comparisons a
 * record, where looking through every file took as many as files.
 */
struct tournament {
	int *node; /* 2 * leaves: node[leaves + i] is file i's leaf */
	int leaves; /* a power of two, at least nfiles */
	struct merge_key *keys; /* of each file's head */
};

static struct merge_key key_of(const struct trace_dir *td, int file)
{
	const struct kmt_event *head = &td->files[file].head;

	return (struct merge_key){ .timestamp = head->timestamp, .seq_num = head->seq_num,
				   .has_time = head->has_time, .file = file };
}

/*
 * Time order across CPUs; within a CPU (equal times) sequence order.  ABI 1
 * records have no time and a global sequence: sequence order alone.  Heads
 * that are neither before the other come in the order of the files' list,
 * as when the files were scanned one by one for the earliest.
 */
static inline bool earlier(const struct merge_key *a, const struct merge_key *b)
{
	int seq;

	if (a->has_time && b->has_time && a->timestamp != b->timestamp)
		return a->timestamp < b->timestamp;
	seq = kmt_seq_cmp(a->seq_num, b->seq_num);
	return seq ? seq < 0 : a->file < b->file;
}

static inline int winner(const struct tournament *t, int a, int b)
{
	if (a < 0 || b < 0)
		return a < 0 ? b : a;
	return earlier(&t->keys[a], &t->keys[b]) ? a : b;
}

/* After file's head changed, or it ran out. */
static void replay_matches(struct tournament *t, int file)
{
	for (int n = (t->leaves + file) / 2; n >= 1; n /= 2)
		t->node[n] = winner(t, t->node[2 * n], t->node[2 * n + 1]);
}

static int tournament_new(struct tournament *t, int nfiles)
{
	t->leaves = 1;
	while (t->leaves < nfiles)
		t->leaves *= 2;
	t->node = malloc(2 * t->leaves * sizeof(*t->node));
	t->keys = calloc(nfiles, sizeof(*t->keys));
	if (!t->node || !t->keys)
		return -1;
	for (int n = 0; n < 2 * t->leaves; n++)
		t->node[n] = -1;
	return 0;
}

static void tournament_free(struct tournament *t)
{
	free(t->node);
	free(t->keys);
}

/* Each file's first record, and the matches between them. */
static int first_round(struct trace_dir *td, struct tournament *t, struct cachetab *caches)
{
	for (int i = 0; i < td->nfiles; i++) {
		int got = recfile_rewind(&td->files[i].rf, td->err, td->err_size) ? -1 :
			  advance(td, &td->files[i], caches);

		if (got < 0)
			return -1;
		if (got) {
			t->keys[i] = key_of(td, i);
			t->node[t->leaves + i] = i;
		}
	}
	for (int n = t->leaves - 1; n >= 1; n--)
		t->node[n] = winner(t, t->node[2 * n], t->node[2 * n + 1]);
	return 0;
}

static int replay_record(struct trace_dir *td, struct sink *sink, const struct cpu_file *cf)
{
	int ret = sink->ops->record(sink, cf->cpu, cf->head_data, cf->head.event_size, &cf->head);

	if (ret < 0)
		return fail(td, "%s", sink->err);
	return ret; /* SINK_GONE: the reader went away, nothing more to do */
}

static int merge(struct trace_dir *td, struct sink *sink)
{
	struct tournament t = { 0 };
	struct cachetab *caches = cachetab_new();
	struct tasktab *tasks = tasktab_new();
	int ret = 0, file;

	progress_pass(&td->progress, "kmemsnoop: reading");
	if (tournament_new(&t, td->nfiles) || !caches || !tasks)
		ret = fail(td, "out of memory");
	else
		ret = first_round(td, &t, caches);
	while (!ret && (file = t.node[1]) >= 0) {
		struct cpu_file *cf = &td->files[file];
		int got;

		if (tasktab_apply(tasks, &cf->head))
			ret = replay_record(td, sink, cf);
		if (ret)
			break;
		got = advance(td, cf, caches);
		if (got < 0)
			ret = -1;
		else if (got)
			t.keys[file] = key_of(td, file);
		else
			t.node[t.leaves + file] = -1;
		replay_matches(&t, file);
	}
	tournament_free(&t);
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
	ret = list_dir(dir, &td);
	if (!ret)
		ret = check_files(dir, &td);
	if (!ret && sink->ops->begin(sink) < 0)
		ret = fail(&td, "%s", sink->err);
	if (!ret)
		ret = merge(&td, sink);
	/* Gone before the caller says why it failed, or prints a summary. */
	progress_end(&td.progress);
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
