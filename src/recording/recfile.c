// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A cpu file through a bounded window (recfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recfile.h"
#include "bpf/kmemtrace.h"

_Static_assert(RECFILE_WINDOW_MIN > UINT16_MAX, "the largest record fits in any window");

__attribute__((format(printf, 3, 4))) static int say(char *err, size_t err_size,
						     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
	return -1;
}

size_t recfile_window(int nfiles)
{
	size_t each = RECFILE_WINDOWS_TOTAL / (nfiles > 0 ? (size_t)nfiles : 1);

	if (each > RECFILE_WINDOW_MAX)
		return RECFILE_WINDOW_MAX;
	/* Whole pages: the kernel copies them out of its cache faster. */
	each &= ~(size_t)4095;
	return each < RECFILE_WINDOW_MIN ? RECFILE_WINDOW_MIN : each;
}

int recfile_open(struct recfile *rf, const char *path, size_t window, char *err,
		 size_t err_size)
{
	struct stat st;

	memset(rf, 0, sizeof(*rf));
	rf->fd = -1;
	rf->path = strdup(path);
	if (!rf->path)
		return say(err, err_size, "%s: out of memory", path);
	/* Not to wait on a FIFO someone named cpu0. */
	rf->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (rf->fd < 0)
		return say(err, err_size, "%s: %s", path, strerror(errno));
	if (fstat(rf->fd, &st))
		return say(err, err_size, "%s: %s", path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return say(err, err_size, "%s: not a regular file", path);
	rf->size = st.st_size;
	/* A small file takes no more than it needs. */
	if (window > rf->size)
		window = rf->size;
	rf->cap = window < RECFILE_WINDOW_MIN ? RECFILE_WINDOW_MIN : window;
	rf->buf = malloc(rf->cap);
	if (!rf->buf)
		return say(err, err_size, "%s: out of memory", path);
	/* Read once from start to end (twice: checked, then merged). */
	posix_fadvise(rf->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

void recfile_close(struct recfile *rf)
{
	if (rf->fd >= 0)
		close(rf->fd);
	free(rf->path);
	free(rf->buf);
	memset(rf, 0, sizeof(*rf));
	rf->fd = -1;
}

/* What was read was checked: a file that is not what it was (still being
 * recorded, or replaced) cannot be read as checked. */
static int changed_size(const struct recfile *rf, char *err, size_t err_size)
{
	struct stat st;

	if (fstat(rf->fd, &st))
		return say(err, err_size, "%s: %s", rf->path, strerror(errno));
	return say(err, err_size, "%s: changed size while being read (%llu bytes, then %llu): "
		   "is it still being written?", rf->path, rf->size,
		   (unsigned long long)st.st_size);
}

int recfile_rewind(struct recfile *rf, char *err, size_t err_size)
{
	struct stat st;

	if (fstat(rf->fd, &st))
		return say(err, err_size, "%s: %s", rf->path, strerror(errno));
	if ((unsigned long long)st.st_size != rf->size)
		return changed_size(rf, err, err_size);
	rf->base = 0;
	rf->pos = rf->len = 0;
	return 0;
}

/* What is left unread moves to the window's start, and as much of the
 * file as fits follows it. */
static int refill(struct recfile *rf, char *err, size_t err_size)
{
	size_t keep = rf->len - rf->pos;
	unsigned long long left;
	size_t want;

	memmove(rf->buf, rf->buf + rf->pos, keep);
	rf->base += rf->pos;
	rf->pos = 0;
	rf->len = keep;
	left = rf->size - (rf->base + rf->len);
	want = rf->cap - rf->len < left ? rf->cap - rf->len : (size_t)left;
	while (want) {
		unsigned long long at = rf->base + rf->len;
		ssize_t n = pread(rf->fd, rf->buf + rf->len, want, (off_t)at);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return say(err, err_size, "%s: %s at byte %llu", rf->path, strerror(errno), at);
		if (!n)
			return changed_size(rf, err, err_size);
		rf->len += n;
		want -= n;
	}
	return 0;
}

int recfile_peek_refill(struct recfile *rf, const void **data, size_t *len, char *err,
			size_t err_size)
{
	size_t avail;

	/* One refill does: the window holds the largest record. */
	if (rf->base + rf->len < rf->size && refill(rf, err, err_size))
		return -1;
	avail = rf->len - rf->pos;
	if (!avail)
		return 0;
	*data = rf->buf + rf->pos;
	*len = avail;
	return 1;
}
