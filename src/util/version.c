// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* See version.h. */
#include "version.h"

/* Written by make from tools/version. */
#include "kmemsnoop_version.h"

const char *kmemsnoop_version(void)
{
	return KMEMSNOOP_VERSION;
}
