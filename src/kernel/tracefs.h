/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tracefs, where libbpf looks up a classic tracepoint's id to attach to it. */
#ifndef KMEMSNOOP_TRACEFS_H
#define KMEMSNOOP_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Makes tracefs's events reachable where libbpf looks for them: already
 * there (/sys/kernel/tracing, or debugfs's tracing, which the kernel
 * mounts on first use), or tracefs mounted on /sys/kernel/tracing.
 * Returns 0 (*mounted: kmemsnoop mounted it), or -1 with a one-line
 * reason in err.
 */
int tracefs_ensure(bool *mounted, char *err, size_t err_size);

#endif
