// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The default ring size: 16 MiB per CPU is what a small machine whose
 * CPUs all allocate needs, but 6 GiB of locked kernel memory on a 384-CPU
 * server, where each CPU sees a small share of the load anyway.  So the
 * rings together stay within a budget, halving each CPU's until they fit.
 */
#include "budget.h"

/* Programs, maps, links, the output and the odd file read at start. */
#define FILES_BESIDES_CPUS 256

/* per_cpu, halved while ncpus of it exceed total, but not below min. */
static uint64_t share(int ncpus, uint64_t per_cpu, uint64_t total, uint64_t min)
{
	uint64_t size = per_cpu;

	if (ncpus < 1)
		ncpus = 1;
	while (size > min && size * (uint64_t)ncpus > total)
		size /= 2;
	return size;
}

uint64_t budget_ring_size(int ncpus)
{
	return share(ncpus, BUDGET_RING_PER_CPU, BUDGET_RINGS_TOTAL, BUDGET_RING_MIN);
}

uint64_t budget_file_buffer(int ncpus)
{
	return share(ncpus, BUDGET_FILE_BUFFER, BUDGET_FILE_BUFFERS_TOTAL, BUDGET_FILE_BUFFER_MIN);
}

uint64_t budget_open_files(int ncpus)
{
	return 2 * (uint64_t)(ncpus > 0 ? ncpus : 1) + FILES_BESIDES_CPUS;
}
