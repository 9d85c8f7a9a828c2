/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The recorded kernel's tracepoint layouts: tracefs's format file of every
 * tracepoint a recording's programs were attached to, copied into the
 * recording's `tracepoints` file (docs/ABI.md), so that what the kernel's
 * events carried on that kernel travels with the records made from them.
 */
#ifndef KMEMSNOOP_TPFORMAT_H
#define KMEMSNOOP_TPFORMAT_H

#include <stdio.h>

#define TPFORMAT_MAGIC "kmemsnoop-tracepoints"
#define TPFORMAT_VERSION 1

/* What tpformat_write() is given: event names (kmalloc, sched_process_fork,
 * ...), and the tracefs directories to look in, the first that has an
 * events directory taken (NULL: the kernel's usual two). */
struct tpformat_list {
	const char *const *names;
	int count;
	const char *const *tracefs;
};

/* The file's contents (a binout_replace_file() fill): 0, or -1 with errno
 * set when writing failed.  A tracefs that is not mounted, or an event it
 * does not have, is said in the file, not an error. */
int tpformat_write(FILE *out, const void *list);

#endif
