// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Which CPUs' losses the closing summary names (cpuloss.h): the worst
 * ones, since those say which CPUs need a larger -b or a quieter load,
 * and one line for the rest so that the lines still add up to the total.
 */
#include <stdlib.h>

#include "cpuloss.h"

static int by_loss(const void *a, const void *b)
{
	const struct cpu_loss *l = a, *r = b;

	if (l->events != r->events)
		return l->events > r->events ? -1 : 1;
	return (l->cpu > r->cpu) - (l->cpu < r->cpu);
}

size_t cpuloss_select(struct cpu_loss *l, size_t n, size_t max_lines,
		      struct cpu_loss_rest *rest)
{
	size_t lost = 0, shown;

	*rest = (struct cpu_loss_rest){ 0 };
	/* The CPUs that lost something first, in their order. */
	for (size_t i = 0; i < n; i++)
		if (l[i].events)
			l[lost++] = l[i];
	if (lost > 1)
		qsort(l, lost, sizeof(*l), by_loss);
	if (lost <= max_lines)
		return lost;
	shown = max_lines ? max_lines - 1 : 0;
	for (size_t i = shown; i < lost; i++) {
		rest->cpus++;
		rest->events += l[i].events;
		rest->bytes += l[i].bytes;
	}
	return shown;
}
