/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The per-CPU loss lines of the closing summary: on a machine of hundreds
 * of CPUs that all lost records, one line each would bury the summary.
 */
#ifndef KMEMSNOOP_CPULOSS_H
#define KMEMSNOOP_CPULOSS_H

#include <stddef.h>
#include <stdint.h>

/* At most this many lines, the "other CPUs" line included. */
#define CPULOSS_MAX_LINES 8

struct cpu_loss {
	int cpu;
	uint64_t events;
	uint64_t bytes;
};

/* What the lines leave out: how many CPUs, and what they lost together. */
struct cpu_loss_rest {
	size_t cpus;
	uint64_t events;
	uint64_t bytes;
};

/*
 * Rewrites l (n CPUs, a scratch copy) so that its first entries are the
 * lines to print:
 * the CPUs that lost events, most first (the lower CPU first on a tie),
 * all of them when they fit in max_lines, else max_lines - 1 of them and
 * the others added up in *rest.  Returns how many CPU lines to print.
 */
size_t cpuloss_select(struct cpu_loss *l, size_t n, size_t max_lines,
		      struct cpu_loss_rest *rest);

#endif
