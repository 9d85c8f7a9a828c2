/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* -o DIR: a directory laid out like debugfs kmemtrace. */
#ifndef KMEMSNOOP_BINOUT_H
#define KMEMSNOOP_BINOUT_H

#include <stddef.h>
#include <stdint.h>

struct binout;

/* Creates DIR (if needed) with cpu0..cpu<ncpus-1> and abi_version.
 * NULL with a one-line reason in err on failure. */
struct binout *binout_open(const char *dir, int ncpus, char *err, size_t err_size);

/* Appends one record to cpu<cpu>.  0, or -errno (with the file in err). */
int binout_write(struct binout *bo, int cpu, const void *rec, size_t size, char *err,
		 size_t err_size);

/* Copies the file at src into the directory as name. */
int binout_copy_file(struct binout *bo, const char *src, const char *name, char *err,
		     size_t err_size);

/* Writes total_overruns (bytes) and total_overrun_events, flushes and
 * closes everything.  0, or -errno with a reason in err.  Frees bo. */
int binout_close(struct binout *bo, uint64_t lost_bytes, uint64_t lost_events, char *err,
		 size_t err_size);

struct sink;

/*
 * A sink (sink.h) writing such a directory, with a copy of this boot's
 * /proc/kallsyms.  NULL with a one-line reason in err.
 */
struct sink *binout_sink_new(const char *dir, int ncpus, char *err, size_t err_size);

#endif
