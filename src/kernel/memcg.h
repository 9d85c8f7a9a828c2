/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The memory cgroup limit kmemsnoop runs under.  Since 5.11 the kernel
 * charges BPF maps (the ring buffers, the tables) to the memory cgroup of
 * the process that creates them, so under a tight limit it refuses them
 * with ENOMEM: an error that reads like a full machine unless the limit is
 * named.
 */
#ifndef KMEMSNOOP_MEMCG_H
#define KMEMSNOOP_MEMCG_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The memory limit on this process's memory cgroup and its ancestors
 * (cgroup v2 memory.max, v1 memory.limit_in_bytes) with the least room
 * left: 0 with its bytes, what is charged under it now (memory.current,
 * memory.usage_in_bytes; 0 when unreadable) and the file that sets it, -1
 * when there is none (no limit, no memory controller mounted, nothing
 * readable).
 */
int memcg_limit(unsigned long long *bytes, unsigned long long *used, char *file,
		size_t file_size);

/*
 * For an allocation the kernel refused with errnum: when it is ENOMEM or
 * EPERM and a memory cgroup limit applies, appends to msg (a string of
 * size bytes) "; the memory cgroup limit (N MiB, FILE) is ..." .
 */
void memcg_explain(int errnum, char *msg, size_t size);

/* Parsing, for the unit tests. */

/* A limit file's text: 0 and the bytes, -1 for no limit ("max", or v1's
 * page-rounded LONG_MAX) or text that is not a number. */
int memcg_parse_limit(const char *text, unsigned long long *bytes);

/* The memory cgroup's path in /proc/self/cgroup's text: the v1 line whose
 * controllers include memory (v1), or the v2 line "0::PATH".  0, or -1
 * when there is no such line. */
int memcg_cgroup_path(const char *proc_cgroup, bool v1, char *path, size_t size);

#endif /* KMEMSNOOP_MEMCG_H */
