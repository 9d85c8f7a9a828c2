/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A progress line on stderr for a long read, as perf report shows one:
 * "WHAT N of M MiB (P%), R records/s", rewritten in place with '\r' a
 * few times a second, and erased at the end.  Only for a person watching:
 * never when stderr is not a terminal.
 */
#ifndef KMEMSNOOP_PROGRESS_H
#define KMEMSNOOP_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>

/* Inputs smaller than this read quickly enough to need no progress. */
#define PROGRESS_MIN_BYTES (64ULL << 20)

struct progress {
	bool on;
	bool shown; /* the line is on the terminal: end() erases it */
	const char *what;
	unsigned long long total, done, records;
	double started, last_shown; /* last_shown 0: not yet in this pass */
};

/* Is a progress line for total bytes wanted: stderr is a terminal, the
 * input is large, and stdout does not write to that same terminal (its
 * lines would run into the progress line). */
bool progress_wanted(unsigned long long total);

/* For passes over total bytes; on: shown at all.  Before the first pass. */
void progress_init(struct progress *p, unsigned long long total, bool on);
/* A pass over the total, named by what ("prog: checking"): shown from its
 * first records on (a person sees at once that it started), over the line
 * of the pass before, if any. */
void progress_pass(struct progress *p, const char *what);
/* Rewrites the line when it is due (not per call: reads the clock). */
void progress_show(struct progress *p);
/* Erases the line, if shown: before anything else is printed on stderr. */
void progress_end(struct progress *p);

/* One record of bytes bytes done.  The clock is looked at once every
 * 4096 records: a record costs an addition. */
static inline void progress_add(struct progress *p, size_t bytes)
{
	p->done += bytes;
	if (!(++p->records & 4095) && p->on)
		progress_show(p);
}

#endif /* KMEMSNOOP_PROGRESS_H */
