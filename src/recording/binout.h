/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* -o DIR: a directory laid out like debugfs kmemtrace. */
#ifndef KMEMSNOOP_BINOUT_H
#define KMEMSNOOP_BINOUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct binout;
struct gfp_names;
struct rec_header;

/* Creates DIR (if needed) with cpu0..cpu<ncpus-1> and abi_version.
 * NULL with a one-line reason in err on failure. */
struct binout *binout_open(const char *dir, int ncpus, char *err, size_t err_size);

/* Appends one record to cpu<cpu>.  0, or -errno (with the file in err). */
int binout_write(struct binout *bo, int cpu, const void *rec, size_t size, char *err,
		 size_t err_size);

/* 0 while the directory and its cpu files are still linked in the file
 * system; -ENOENT, with a reason in err, once any was removed (what is
 * written after that goes to files no one can open any more). */
int binout_check(const struct binout *bo, char *err, size_t err_size);

/* Checks (binout_check) and flushes the cpu files.  0, or -errno with a
 * reason in err. */
int binout_flush(struct binout *bo, char *err, size_t err_size);

/* Copies the file at src into the directory as name. */
int binout_copy_file(struct binout *bo, const char *src, const char *name, char *err,
		     size_t err_size);

/*
 * Writes the file name in the directory atomically: fill writes its
 * contents (0, or -1 on a failed write) to a temporary file, which then
 * replaces name.  0, or -errno with a reason in err.
 */
int binout_replace_file(struct binout *bo, const char *name, int (*fill)(FILE *out, const void *ctx),
			const void *ctx, char *err, size_t err_size);

/* Writes total_overruns (bytes) and total_overrun_events, flushes and
 * closes everything.  0, or -errno with a reason in err.  Frees bo. */
int binout_close(struct binout *bo, uint64_t lost_bytes, uint64_t lost_events, char *err,
		 size_t err_size);

struct sink;

/*
 * A sink (sink.h) writing such a directory, with a copy of this boot's
 * /proc/kallsyms, the kernel's GFP flag names (gfp) and a header: hdr as
 * collected (recheader.h), written when the trace begins and again, with
 * the stop and the counts, when it ends.  NULL with a one-line reason in
 * err.
 */
struct sink *binout_sink_new(const char *dir, int ncpus, const struct rec_header *hdr,
			     const struct gfp_names *gfp, char *err, size_t err_size);

/* The header sk (a binout sink) writes: what is learnt before the trace
 * begins goes in. */
struct rec_header *binout_sink_header(struct sink *sk);

/* Another file that describes the recording, written by fill into the
 * directory of sk (a binout sink) as binout_replace_file() does: 0, or -1
 * with the reason in sk->err. */
int binout_sink_describe(struct sink *sk, const char *name, int (*fill)(FILE *out, const void *ctx),
			 const void *ctx);

#endif
