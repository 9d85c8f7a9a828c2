/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* -i DIR: reading a kmemtrace directory back as text. */
#ifndef KMEMSNOOP_BININ_H
#define KMEMSNOOP_BININ_H

#include <stddef.h>

struct gfp_names;
struct rec_header;
struct sink;

/* What the recording says it lost when it was made. */
struct binin_losses {
	unsigned long long events;
	unsigned long long bytes;
};

/* DIR's abi_version names a version this kmemsnoop reads: 0, or -1 with a
 * one-line reason in err (not a recording, or a newer one). */
int binin_check(const char *dir, char *err, size_t err_size);

/*
 * Feeds every record of DIR/cpu* to sink, merged across CPUs in time
 * order (sequence order within a CPU), after checking that every record of
 * every file decodes (a corrupt file is an error, not half a trace).  The
 * files are read through windows of bounded size, whatever theirs; each
 * record given to the sink is valid only during its call.  A long read
 * shows its progress on stderr when that is a terminal (progress.h), and
 * erases it before returning.  0, or -1 with a one-line reason in err.
 */
int binin_replay(const char *dir, struct sink *sink, struct binin_losses *lost, char *err,
		 size_t err_size);

/*
 * DIR/header (recheader.h): 1 when read into h, 0 when the recording has
 * none (made before kmemsnoop wrote one), -1 with a one-line reason in err
 * when it cannot be read or is not a header.
 */
int binin_header(const char *dir, struct rec_header *h, char *err, size_t err_size);

/*
 * DIR/gfp, the recorded kernel's GFP flag names (gfp.h): 1 with the table
 * in *names (free with gfp_names_free), 0 when the recording has none, -1
 * with a one-line reason in err.
 */
int binin_gfp(const char *dir, struct gfp_names **names, char *err, size_t err_size);

#endif
