/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --hist-by cgroup: a cgroup v2 id (what bpf_get_current_cgroup_id()
 * returns: the inode number of the cgroup's directory) to its path in
 * the hierarchy, "/" for the root, "/system.slice/NAME.scope" ...  The
 * hierarchy is walked once and cached; an id not in the cache makes it
 * walk again (a cgroup created since), at most once a second.
 */
#ifndef KMEMSNOOP_CGPATH_H
#define KMEMSNOOP_CGPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cgpath;

/* root: the hierarchy's mount point; NULL: the first cgroup2 mount in
 * /proc/self/mounts, else /sys/fs/cgroup.  NULL when out of memory. */
struct cgpath *cgpath_new(const char *root);
void cgpath_free(struct cgpath *c);

/*
 * The path of cgroup id in buf; one too long for size keeps its end, after
 * "...", the part that tells containers apart.  false when no directory
 * has that id: after a fresh walk (a cgroup removed since), or when the
 * last walk was too recent to walk again (*again is then true: ask later).
 */
bool cgpath_lookup(struct cgpath *c, uint64_t id, char *buf, size_t size, bool *again);

#endif
