/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --hist, the user-space side: configures the BPF object before load,
 * then reads its counters every interval and shows them, as text or in
 * the live terminal view.  tracer.c drives it: hist_configure() before
 * load, hist_open() after attach, then hist_wait()/hist_tick() until the
 * end, hist_close().
 */
#ifndef KMEMSNOOP_HIST_H
#define KMEMSNOOP_HIST_H

#include <stddef.h>

struct env;
struct kmemsnoop_bpf;
struct hist;

void hist_configure(struct kmemsnoop_bpf *skel, const struct env *env, int ncpus);

/* NULL with a one-line reason in err. */
struct hist *hist_open(const struct env *env, struct kmemsnoop_bpf *skel, int ncpus, char *err,
		       size_t err_size);

enum hist_event {
	HIST_TIMEOUT = 0,
	HIST_QUIT = 1,         /* q in the live view */
	HIST_OUTPUT_GONE = 2,  /* the reader of stdout went away */
};

/* Waits up to ms milliseconds (less when a signal or a key arrives). */
enum hist_event hist_wait(struct hist *h, int ms);

/*
 * Reads the counters and shows what was counted since the previous tick;
 * missed is the running count of events the kernel skipped.  0, a
 * hist_event to stop on, or -1 with err set.
 */
int hist_tick(struct hist *h, unsigned long long missed, char *err, size_t err_size);

/* Leaves the live view (the terminal as it was), prints totals on stderr. */
void hist_close(struct hist *h);

#endif /* KMEMSNOOP_HIST_H */
