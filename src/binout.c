// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Writing kmemtrace binary files: records go out as the rings hold them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "binout.h"
#include "kmemsnoop.h"
#include "sink.h"

#define FILE_BUFFER (1 << 20)

struct binout {
	char *dir;
	int ncpus;
	FILE **cpu;
};

static int write_text_file(const char *dir, const char *name, unsigned long long value,
			   char *err, size_t err_size)
{
	char path[4096];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		snprintf(err, err_size, "%s: %s", path, strerror(errno));
		return -errno;
	}
	fprintf(f, "%llu\n", value);
	if (ferror(f) || fflush(f))
		ret = -errno;
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret)
		snprintf(err, err_size, "%s: %s", path, strerror(-ret));
	return ret;
}

static void close_all(struct binout *bo)
{
	for (int i = 0; i < bo->ncpus; i++)
		if (bo->cpu[i])
			fclose(bo->cpu[i]);
	free(bo->cpu);
	free(bo->dir);
	free(bo);
}

struct binout *binout_open(const char *dir, int ncpus, char *err, size_t err_size)
{
	struct binout *bo = calloc(1, sizeof(*bo));
	char path[4096];

	if (!bo || !(bo->cpu = calloc(ncpus, sizeof(FILE *))) || !(bo->dir = strdup(dir))) {
		snprintf(err, err_size, "out of memory");
		if (bo)
			free(bo->cpu);
		free(bo);
		return NULL;
	}
	bo->ncpus = ncpus;
	if (mkdir(dir, 0755) && errno != EEXIST) {
		snprintf(err, err_size, "cannot create %s: %s", dir, strerror(errno));
		goto fail;
	}
	for (int i = 0; i < ncpus; i++) {
		snprintf(path, sizeof(path), "%s/cpu%d", dir, i);
		bo->cpu[i] = fopen(path, "w");
		if (!bo->cpu[i]) {
			snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
			goto fail;
		}
		setvbuf(bo->cpu[i], NULL, _IOFBF, FILE_BUFFER);
	}
	if (write_text_file(dir, "abi_version", KMT_ABI_VERSION, err, err_size))
		goto fail;
	return bo;
fail:
	close_all(bo);
	return NULL;
}

int binout_write(struct binout *bo, int cpu, const void *rec, size_t size, char *err,
		 size_t err_size)
{
	if (cpu < 0 || cpu >= bo->ncpus)
		return -EINVAL;
	if (fwrite(rec, 1, size, bo->cpu[cpu]) == size)
		return 0;
	snprintf(err, err_size, "writing %s/cpu%d: %s", bo->dir, cpu, strerror(errno));
	return errno ? -errno : -EIO;
}

int binout_copy_file(struct binout *bo, const char *src, const char *name, char *err,
		     size_t err_size)
{
	char path[4096], buf[1 << 16];
	FILE *in = fopen(src, "r"), *out;
	size_t n;
	int ret = 0;

	if (!in) {
		snprintf(err, err_size, "%s: %s", src, strerror(errno));
		return -errno;
	}
	snprintf(path, sizeof(path), "%s/%s", bo->dir, name);
	out = fopen(path, "w");
	if (!out) {
		snprintf(err, err_size, "cannot write %s: %s", path, strerror(errno));
		fclose(in);
		return -errno;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in) || ferror(out) || fflush(out))
		ret = errno ? -errno : -EIO;
	if (fclose(out) && !ret)
		ret = -errno;
	fclose(in);
	if (ret)
		snprintf(err, err_size, "writing %s: %s", path, strerror(-ret));
	return ret;
}

int binout_close(struct binout *bo, uint64_t lost_bytes, uint64_t lost_events, char *err,
		 size_t err_size)
{
	int ret = 0;

	for (int i = 0; i < bo->ncpus; i++) {
		if (fflush(bo->cpu[i]) && !ret) {
			ret = -errno;
			snprintf(err, err_size, "writing %s/cpu%d: %s", bo->dir, i, strerror(errno));
		}
	}
	if (!ret)
		ret = write_text_file(bo->dir, "total_overruns", lost_bytes, err, err_size);
	if (!ret)
		ret = write_text_file(bo->dir, "total_overrun_events", lost_events, err, err_size);
	close_all(bo);
	return ret;
}

/* --- the binary sink ----------------------------------------------------------- */

struct binout_sink {
	struct sink sink;
	struct binout *bo;
};

static int binout_sink_begin(struct sink *sk)
{
	(void)sk;
	return 0;
}

static int binout_sink_record(struct sink *sk, int cpu, const void *data, size_t size,
			      const struct kmt_event *ev)
{
	struct binout_sink *b = (struct binout_sink *)sk;

	(void)ev;
	return binout_write(b->bo, cpu, data, size, sk->err, sizeof(sk->err)) ? -1 : 0;
}

static int binout_sink_end(struct sink *sk, const struct sink_losses *lost)
{
	struct binout_sink *b = (struct binout_sink *)sk;
	int ret = binout_close(b->bo, lost->bytes, lost->events, sk->err, sizeof(sk->err));

	b->bo = NULL;
	return ret ? -1 : 0;
}

static void binout_sink_destroy(struct sink *sk)
{
	struct binout_sink *b = (struct binout_sink *)sk;
	char ignored[8];

	if (b->bo)
		binout_close(b->bo, 0, 0, ignored, sizeof(ignored));
	free(b);
}

static const struct sink_ops binout_sink_ops = {
	.begin = binout_sink_begin,
	.record = binout_sink_record,
	.end = binout_sink_end,
	.destroy = binout_sink_destroy,
};

struct sink *binout_sink_new(const char *dir, int ncpus, char *err, size_t err_size)
{
	struct binout_sink *b = calloc(1, sizeof(*b));

	if (!b) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	b->sink.ops = &binout_sink_ops;
	b->bo = binout_open(dir, ncpus, err, err_size);
	/* Call sites are only readable with this boot's symbols (KASLR). */
	if (!b->bo || binout_copy_file(b->bo, "/proc/kallsyms", "kallsyms", err, err_size)) {
		binout_sink_destroy(&b->sink);
		return NULL;
	}
	return &b->sink;
}
