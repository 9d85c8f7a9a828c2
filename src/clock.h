/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The monotonic clock in seconds, for intervals and deadlines. */
#ifndef KMEMSNOOP_CLOCK_H
#define KMEMSNOOP_CLOCK_H

#include <time.h>

static inline double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
