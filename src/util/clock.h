/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The monotonic clock, for intervals and deadlines: in seconds, and in
 * nanoseconds (the clock of BPF's bpf_ktime_get_ns()). */
#ifndef KMEMSNOOP_CLOCK_H
#define KMEMSNOOP_CLOCK_H

#include <time.h>

static inline double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

#endif
