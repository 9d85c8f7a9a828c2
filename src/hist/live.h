/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --hist on a terminal: a full-screen ncurses view redrawn every
 * interval: totals per second, the current histogram, a heat map of the
 * last intervals and the busiest keys of two kinds.
 */
#ifndef KMEMSNOOP_LIVE_H
#define KMEMSNOOP_LIVE_H

#include <stdbool.h>
#include <stddef.h>

#include "histdata.h"

struct live_config {
	enum kmt_hist_by left, right; /* the two tables */
	int top;                      /* at most this many rows in each; 0: what fits */
	enum kmt_hist_value value;
	double interval;
};

struct live;

/* Takes over the terminal; NULL with a one-line reason in err. */
struct live *live_open(const struct live_config *cfg, char *err, size_t err_size);

/*
 * Waits up to ms milliseconds for a key; redraws after a resize.  True
 * when the user asked to quit (q).
 */
bool live_wait(struct live *lv, int ms);

/* Shows an interval; iv must stay valid until the next call (redraws). */
void live_show(struct live *lv, const struct hist_interval *iv);

/* Gives the terminal back as it was.  NULL is fine. */
void live_close(struct live *lv);

#endif /* KMEMSNOOP_LIVE_H */
