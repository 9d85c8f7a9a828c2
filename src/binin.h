/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* -i DIR: reading a kmemtrace directory back as text. */
#ifndef KMEMSNOOP_BININ_H
#define KMEMSNOOP_BININ_H

#include <stddef.h>

struct sink;

/* What the recording says it lost when it was made. */
struct binin_losses {
	unsigned long long events;
	unsigned long long bytes;
};

/*
 * Feeds every record of DIR/cpu* to sink, merged across CPUs in time
 * order (sequence order within a CPU), after checking that every record of
 * every file decodes (a corrupt file is an error, not half a trace).
 * 0, or -1 with a one-line reason in err.
 */
int binin_replay(const char *dir, struct sink *sink, struct binin_losses *lost, char *err,
		 size_t err_size);

#endif
