// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Mounting tracefs where it is not: see tracefs.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>

#include "tracefs.h"

#define TRACEFS "/sys/kernel/tracing"
#define DEBUGFS_TRACING "/sys/kernel/debug/tracing"

int tracefs_ensure(bool *mounted, char *err, size_t err_size)
{
	*mounted = false;
	/* libbpf prefers debugfs's directory when it exists: an automount. */
	if (!access(DEBUGFS_TRACING "/events", F_OK) || !access(TRACEFS "/events", F_OK))
		return 0;
	if (mount("tracefs", TRACEFS, "tracefs", 0, NULL)) {
		snprintf(err, err_size, "cannot mount tracefs on " TRACEFS ": %s", strerror(errno));
		return -1;
	}
	*mounted = true;
	return 0;
}
