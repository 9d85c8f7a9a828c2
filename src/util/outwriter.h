/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * stdout written by a thread of its own.  Writing text into a file costs
 * the kernel about as much as formatting it costs kmemsnoop (the page
 * cache's copy and allocation, 4 KiB at a time through stdio), and a pipe
 * whose reader is slow blocks the writer: either way the time came out of
 * the time the ring buffers are read in.  With the writer, the stream
 * hands over a megabyte at a time and goes on formatting while the
 * kernel takes the last one.
 */
#ifndef KMEMSNOOP_OUTWRITER_H
#define KMEMSNOOP_OUTWRITER_H

#include <stdio.h>

struct outwriter;

/*
 * Makes stdout a stream whose buffers a thread writes to the file
 * descriptor stdout had (fd 1), in order; NULL with errno set when it
 * cannot (stdout is left as it was).  Nothing must have been written to
 * stdout before.  A write that fails is the error of the next write to
 * stdout (EPIPE when the reader went away), and of outwriter_finish().
 */
struct outwriter *outwriter_start(void);

/* Writes what is left, ends the thread and gives stdout back: 0, or the
 * first write's error as a negative errno. */
int outwriter_finish(struct outwriter *w);

#endif /* KMEMSNOOP_OUTWRITER_H */
