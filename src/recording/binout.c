// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Writing kmemtrace binary files: records go out as the rings hold them.
 *
 * A recording holds what the kernel hides from other users: the real
 * addresses of its symbols (the kallsyms copy) and of its heap (every
 * record's pointers).  So the directory is 0700 and its files 0600, set
 * with fchmod whatever the umask; an existing directory is used only when
 * it already belongs to kmemsnoop's user and no one else can enter it (it
 * is never loosened or tightened: -o /tmp must not change /tmp).  Files
 * are opened relative to the directory, never through a symbolic link.
 *
 * The cpu files are written a whole buffer at a time with O_DIRECT where
 * the file system takes it: a buffered write(2) copies every byte into the
 * page cache, and that copy was most of -o's CPU time (docs/PERFORMANCE.md).
 * The last, partial buffer is written without O_DIRECT.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binout.h"
#include "recheader.h"
#include "record.h"
#include "sink.h"
#include "bpf/kmemsnoop.h"
#include "kernel/budget.h"
#include "names/gfp.h"

#define DIR_MODE 0700
#define FILE_MODE 0600

/* O_DIRECT's alignment of memory, file offsets and sizes: a page, which
 * is a multiple of every block device's logical block size here. */
#define DIRECT_ALIGN 4096

struct cpu_out {
	int fd;
	bool direct; /* O_DIRECT is set */
	char *buf;   /* DIRECT_ALIGN-aligned, struct binout's buffer_size */
	size_t len;
	uint64_t written; /* bytes in the file */
	uint64_t whole;   /* of them, those of whole records */
	int error;        /* -errno of the write that failed: the file ends there */
};

struct binout {
	char *dir;
	int dirfd;
	int ncpus;
	size_t buffer_size; /* a multiple of DIRECT_ALIGN */
	struct cpu_out *cpu;
};

/* Opens (creating or truncating) name in the directory, mode FILE_MODE:
 * its descriptor, -1 with errno set. */
static int create_fd(const struct binout *bo, const char *name)
{
	int fd = openat(bo->dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			FILE_MODE);

	/* The umask may have taken bits away, an older file may have more. */
	if (fd >= 0 && fchmod(fd, FILE_MODE)) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

static FILE *create_file(const struct binout *bo, const char *name)
{
	int fd = create_fd(bo, name);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return f;
}

static int write_text_file(const struct binout *bo, const char *name, unsigned long long value,
			   char *err, size_t err_size)
{
	FILE *f = create_file(bo, name);
	int ret = 0;

	if (!f) {
		snprintf(err, err_size, "cannot write %s/%s: %s", bo->dir, name, strerror(errno));
		return -errno;
	}
	fprintf(f, "%llu\n", value);
	if (ferror(f) || fflush(f))
		ret = errno ? -errno : -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	if (ret)
		snprintf(err, err_size, "writing %s/%s: %s", bo->dir, name, strerror(-ret));
	return ret;
}

/* The directory, created DIR_MODE, or an existing one only its owner can enter. */
static int open_dir(const char *dir, char *err, size_t err_size)
{
	bool created = mkdir(dir, DIR_MODE) == 0;
	struct stat st;
	int fd;

	if (!created && errno != EEXIST) {
		snprintf(err, err_size, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			snprintf(err, err_size, "%s exists and is not a directory (a symbolic link "
				 "is not followed)", dir);
		else
			snprintf(err, err_size, "cannot open %s: %s", dir, strerror(errno));
		return -1;
	}
	if ((created && fchmod(fd, DIR_MODE)) || fstat(fd, &st)) {
		snprintf(err, err_size, "%s: %s", dir, strerror(errno));
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(err, err_size, "%s exists and %s (mode %04o): a recording holds kernel "
			 "addresses; give a new directory or chmod 700 it", dir,
			 st.st_uid != geteuid() ? "belongs to another user" :
						  "other users can open it",
			 (unsigned int)(st.st_mode & 07777));
		close(fd);
		return -1;
	}
	return fd;
}

static void close_all(struct binout *bo)
{
	for (int i = 0; bo->cpu && i < bo->ncpus; i++) {
		if (bo->cpu[i].fd >= 0)
			close(bo->cpu[i].fd);
		free(bo->cpu[i].buf);
	}
	if (bo->dirfd >= 0)
		close(bo->dirfd);
	free(bo->cpu);
	free(bo->dir);
	free(bo);
}

/* cpu file i, with O_DIRECT if its file system takes it. */
static int open_cpu_file(struct binout *bo, int i, char *err, size_t err_size)
{
	struct cpu_out *o = &bo->cpu[i];
	char name[32];
	int flags;

	snprintf(name, sizeof(name), "cpu%d", i);
	o->fd = create_fd(bo, name);
	if (o->fd < 0) {
		snprintf(err, err_size, "cannot write %s/%s: %s", bo->dir, name, strerror(errno));
		return -1;
	}
	o->buf = aligned_alloc(DIRECT_ALIGN, bo->buffer_size);
	if (!o->buf) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	flags = fcntl(o->fd, F_GETFL);
	o->direct = flags >= 0 && !fcntl(o->fd, F_SETFL, flags | O_DIRECT);
	return 0;
}

struct binout *binout_open(const char *dir, int ncpus, char *err, size_t err_size)
{
	struct binout *bo = calloc(1, sizeof(*bo));

	if (!bo || !(bo->cpu = calloc(ncpus, sizeof(*bo->cpu))) || !(bo->dir = strdup(dir))) {
		snprintf(err, err_size, "out of memory");
		if (bo)
			free(bo->cpu);
		free(bo);
		return NULL;
	}
	bo->ncpus = ncpus;
	bo->buffer_size = budget_file_buffer(ncpus) / DIRECT_ALIGN * DIRECT_ALIGN;
	if (bo->buffer_size < DIRECT_ALIGN)
		bo->buffer_size = DIRECT_ALIGN;
	for (int i = 0; i < ncpus; i++)
		bo->cpu[i].fd = -1;
	bo->dirfd = open_dir(dir, err, err_size);
	if (bo->dirfd < 0)
		goto fail;
	for (int i = 0; i < ncpus; i++)
		if (open_cpu_file(bo, i, err, err_size))
			goto fail;
	if (write_text_file(bo, "abi_version", KMT_ABI_VERSION, err, err_size))
		goto fail;
	return bo;
fail:
	close_all(bo);
	return NULL;
}

/* n bytes at p, whatever write(2) takes at a time: 0, or -errno; *done
 * says how many were written either way. */
static int write_all(int fd, const char *p, size_t n, size_t *done)
{
	*done = 0;
	while (*done < n) {
		ssize_t w = write(fd, p + *done, n - *done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		*done += w;
	}
	return 0;
}

/* Leaves O_DIRECT: for the last, partial buffer, or where it failed. */
static void stop_direct(struct cpu_out *o)
{
	int flags = fcntl(o->fd, F_GETFL);

	if (flags >= 0)
		fcntl(o->fd, F_SETFL, flags & ~O_DIRECT);
	o->direct = false;
}

/* Writes what the buffer holds, after which the file's whole records end
 * at whole_after: 0, or -errno. */
static int drain(struct cpu_out *o, uint64_t whole_after)
{
	size_t done, more;
	int ret;

	if (o->error)
		return o->error;
	if (o->direct && o->len % DIRECT_ALIGN)
		stop_direct(o);
	ret = write_all(o->fd, o->buf, o->len, &done);
	/* Refused (EINVAL) though it was taken at open: the file system
	 * wants another alignment, or a short write broke it. */
	if (ret == -EINVAL && o->direct) {
		stop_direct(o);
		ret = write_all(o->fd, o->buf + done, o->len - done, &more);
	}
	if (ret) {
		/* A full disk took part of it: cut the file back to its last
		 * whole record, so that what was recorded still reads, and
		 * write nothing more to it (the buffer's records are lost). */
		if (ftruncate(o->fd, (off_t)o->whole) == 0)
			o->written = o->whole;
		o->error = ret;
		o->len = 0;
		return ret;
	}
	o->written += o->len;
	o->whole = whole_after;
	o->len = 0;
	return 0;
}

int binout_write(struct binout *bo, int cpu, const void *rec, size_t size, char *err,
		 size_t err_size)
{
	const char *p = rec;
	struct cpu_out *o;
	uint64_t start;

	if (cpu < 0 || cpu >= bo->ncpus)
		return -EINVAL;
	o = &bo->cpu[cpu];
	start = o->written + o->len;
	while (size) {
		size_t n = bo->buffer_size - o->len;
		int ret;

		if (n > size)
			n = size;
		memcpy(o->buf + o->len, p, n);
		o->len += n;
		p += n;
		size -= n;
		if (o->len < bo->buffer_size)
			break;
		/* Whole records up to this one, or this one too. */
		ret = drain(o, size ? start : o->written + o->len);
		if (ret) {
			snprintf(err, err_size, "writing %s/cpu%d: %s", bo->dir, cpu,
				 strerror(-ret));
			return ret;
		}
	}
	return 0;
}

int binout_check(const struct binout *bo, char *err, size_t err_size)
{
	struct stat st;

	if (!fstat(bo->dirfd, &st) && st.st_nlink == 0) {
		snprintf(err, err_size, "%s was removed during the trace: the recording is lost",
			 bo->dir);
		return -ENOENT;
	}
	for (int i = 0; i < bo->ncpus; i++) {
		if (!fstat(bo->cpu[i].fd, &st) && st.st_nlink == 0) {
			snprintf(err, err_size, "%s/cpu%d was removed during the trace: the "
				 "recording is lost", bo->dir, i);
			return -ENOENT;
		}
	}
	return 0;
}

/* A file of the recording could not be written (ret: -errno): a directory
 * removed under kmemsnoop is said so, as binout_check() says it, whatever
 * file met it first; anything else names the file. */
static int file_failed(const struct binout *bo, const char *verb, const char *name, int ret,
		       char *err, size_t err_size)
{
	if (binout_check(bo, err, err_size))
		return -ENOENT;
	snprintf(err, err_size, "%s %s/%s: %s", verb, bo->dir, name, strerror(-ret));
	return ret;
}

int binout_copy_file(struct binout *bo, const char *src, const char *name, char *err,
		     size_t err_size)
{
	char buf[1 << 16];
	FILE *in = fopen(src, "r"), *out;
	size_t n;
	int ret = 0;

	if (!in) {
		snprintf(err, err_size, "%s: %s", src, strerror(errno));
		return -errno;
	}
	out = create_file(bo, name);
	if (!out) {
		ret = -errno;
		fclose(in);
		return file_failed(bo, "cannot write", name, ret, err, err_size);
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in) || ferror(out) || fflush(out))
		ret = errno ? -errno : -EIO;
	if (fclose(out) && !ret)
		ret = -errno;
	fclose(in);
	return ret ? file_failed(bo, "writing", name, ret, err, err_size) : 0;
}

/* fill's output, flushed to the disk before the rename makes it the file. */
static int fill_file(FILE *f, int (*fill)(FILE *out, const void *ctx), const void *ctx)
{
	int ret = 0;

	errno = 0;
	if (fill(f, ctx) || ferror(f) || fflush(f) || fsync(fileno(f)))
		ret = errno ? -errno : -EIO;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

int binout_replace_file(struct binout *bo, const char *name, int (*fill)(FILE *out, const void *ctx),
			const void *ctx, char *err, size_t err_size)
{
	char tmp[256];
	FILE *f;
	int ret;

	/* A dot name: no reader takes it for a cpu file or the real one. */
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	f = create_file(bo, tmp);
	if (!f)
		return file_failed(bo, "cannot write", tmp, -errno, err, err_size);
	ret = fill_file(f, fill, ctx);
	if (!ret && renameat(bo->dirfd, tmp, bo->dirfd, name))
		ret = -errno;
	if (ret) {
		unlinkat(bo->dirfd, tmp, 0);
		return file_failed(bo, "writing", name, ret, err, err_size);
	}
	return ret;
}

int binout_flush(struct binout *bo, char *err, size_t err_size)
{
	int ret = binout_check(bo, err, err_size);

	for (int i = 0; i < bo->ncpus; i++) {
		struct cpu_out *o = &bo->cpu[i];
		int failed = drain(o, o->written + o->len);

		if (failed && !ret) {
			ret = failed;
			snprintf(err, err_size, "writing %s/cpu%d: %s", bo->dir, i, strerror(-ret));
		}
	}
	return ret;
}

int binout_close(struct binout *bo, uint64_t lost_bytes, uint64_t lost_events, char *err,
		 size_t err_size)
{
	int ret = binout_flush(bo, err, err_size);

	if (!ret)
		ret = write_text_file(bo, "total_overruns", lost_bytes, err, err_size);
	if (!ret)
		ret = write_text_file(bo, "total_overrun_events", lost_events, err, err_size);
	close_all(bo);
	return ret;
}

/* --- the binary sink ----------------------------------------------------------- */

struct binout_sink {
	struct sink sink;
	struct binout *bo;
	struct rec_header hdr;
	unsigned long long written;
};

static int fill_header(FILE *out, const void *hdr)
{
	return recheader_write(hdr, out);
}

static int fill_gfp(FILE *out, const void *gfp)
{
	return gfp_names_dump(gfp, out);
}

/* The header as it is now: at the start, then with the end's counts. */
static int write_header(struct binout_sink *b)
{
	return binout_replace_file(b->bo, "header", fill_header, &b->hdr, b->sink.err,
				   sizeof(b->sink.err));
}

static int binout_sink_begin(struct sink *sk)
{
	struct binout_sink *b = (struct binout_sink *)sk;

	recheader_start(&b->hdr);
	return write_header(b) ? -1 : 0;
}

static int binout_sink_record(struct sink *sk, int cpu, const void *data, size_t size,
			      const struct kmt_event *ev)
{
	struct binout_sink *b = (struct binout_sink *)sk;

	(void)ev;
	if (binout_write(b->bo, cpu, data, size, sk->err, sizeof(sk->err)))
		return -1;
	if (kmt_record_is_event(data, size))
		b->written++; /* the header counts no cache record */
	return 0;
}

static int binout_sink_end(struct sink *sk, const struct sink_losses *lost)
{
	struct binout_sink *b = (struct binout_sink *)sk;
	int ret;

	/* The header's counts only once the records they count are written. */
	recheader_stop(&b->hdr, b->written, lost->events, lost->bytes, lost->missed);
	ret = binout_flush(b->bo, sk->err, sizeof(sk->err));
	if (!ret)
		ret = write_header(b);
	if (ret) {
		char ignored[8];

		/* The recording is broken already (the error says why); its loss
		 * files still say what was lost, not nothing. */
		binout_close(b->bo, lost->bytes, lost->events, ignored, sizeof(ignored));
	} else {
		ret = binout_close(b->bo, lost->bytes, lost->events, sk->err, sizeof(sk->err));
	}
	b->bo = NULL;
	return ret ? -1 : 0;
}

static int binout_sink_check(struct sink *sk)
{
	struct binout_sink *b = (struct binout_sink *)sk;

	return binout_check(b->bo, sk->err, sizeof(sk->err)) ? -1 : 0;
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
	.check = binout_sink_check,
	.destroy = binout_sink_destroy,
};

struct sink *binout_sink_new(const char *dir, int ncpus, const struct rec_header *hdr,
			     const struct gfp_names *gfp, char *err, size_t err_size)
{
	struct binout_sink *b = calloc(1, sizeof(*b));

	if (!b) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	b->sink.ops = &binout_sink_ops;
	b->hdr = *hdr;
	b->bo = binout_open(dir, ncpus, err, err_size);
	/* Call sites are only readable with this boot's symbols (KASLR), GFP
	 * flags only with this kernel's names. */
	if (!b->bo || binout_copy_file(b->bo, "/proc/kallsyms", "kallsyms", err, err_size) ||
	    binout_replace_file(b->bo, "gfp", fill_gfp, gfp, err, err_size)) {
		binout_sink_destroy(&b->sink);
		return NULL;
	}
	return &b->sink;
}

struct rec_header *binout_sink_header(struct sink *sk)
{
	return &((struct binout_sink *)sk)->hdr;
}

int binout_sink_describe(struct sink *sk, const char *name, int (*fill)(FILE *out, const void *ctx),
			 const void *ctx)
{
	struct binout_sink *b = (struct binout_sink *)sk;

	return binout_replace_file(b->bo, name, fill, ctx, sk->err, sizeof(sk->err)) ? -1 : 0;
}
