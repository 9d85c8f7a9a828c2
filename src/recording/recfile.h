/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A recording's cpu file read through a window of bounded size, so that a
 * recording larger than memory can be read: the window is refilled when
 * the record at its read position is not all in it, and a record is
 * always shown whole, never split across a refill.  Only the bytes the
 * file had when opened are read, in as many passes as the reader wants.
 */
#ifndef KMEMSNOOP_RECFILE_H
#define KMEMSNOOP_RECFILE_H

#include <stddef.h>
#include <string.h>

#include "bpf/kmemtrace.h"

/* The largest record (its size is 16 bits) fits in any window. */
#define RECFILE_WINDOW_MIN (64u << 10)
#define RECFILE_WINDOW_MAX (1u << 20)
/* What the windows of all the files read at once take together, as long
 * as each can have RECFILE_WINDOW_MIN. */
#define RECFILE_WINDOWS_TOTAL (8u << 20)

struct recfile {
	int fd; /* -1: not open */
	char *path; /* for messages */
	unsigned long long size; /* what is read: the size when opened */
	unsigned long long base; /* the file offset of buf[0] */
	char *buf;
	size_t cap, pos, len; /* buf[pos, len): read, not yet skipped */
};

/* The window of each of nfiles files read at once. */
size_t recfile_window(int nfiles);

/* Opens path (a regular file) to read through a window of window bytes
 * (at least RECFILE_WINDOW_MIN).  0, or -1 with "path: why" in err; *rf
 * can be closed either way. */
int recfile_open(struct recfile *rf, const char *path, size_t window, char *err,
		 size_t err_size);
void recfile_close(struct recfile *rf);

/* Back to the first byte, for another pass.  -1 with a reason in err when
 * the file no longer has the size it had when opened. */
int recfile_rewind(struct recfile *rf, char *err, size_t err_size);

/* recfile_peek() when the window does not hold the whole next record. */
int recfile_peek_refill(struct recfile *rf, const void **data, size_t *len, char *err,
			size_t err_size);

/*
 * The bytes at the read position: at least the whole next record when the
 * file holds it (as its core says its size), else all that is left, for
 * the decoder to find truncated.  1 with *data and *len, valid until the
 * next call; 0 at the end; -1 with a reason in err (a read error, or the
 * file shrank).  Inline: it is asked once per record.
 */
static inline int recfile_peek(struct recfile *rf, const void **data, size_t *len, char *err,
			       size_t err_size)
{
	const char *at = rf->buf + rf->pos;
	size_t avail = rf->len - rf->pos;
	__u16 event_size;

	if (avail >= sizeof(struct kmt_core)) {
		/* Copied: records are not aligned in the window. */
		memcpy(&event_size, at + offsetof(struct kmt_core, event_size),
		       sizeof(event_size));
		if (event_size <= avail) {
			*data = at;
			*len = avail;
			return 1;
		}
	}
	return recfile_peek_refill(rf, data, len, err, err_size);
}

/* Past n bytes (at most *len) of what recfile_peek() showed. */
static inline void recfile_skip(struct recfile *rf, size_t n)
{
	rf->pos += n;
}

/* The file offset of the read position. */
static inline unsigned long long recfile_offset(const struct recfile *rf)
{
	return rf->base + rf->pos;
}

#endif /* KMEMSNOOP_RECFILE_H */
