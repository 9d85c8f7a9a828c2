// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* See version.h. */
#include "version.h"

#define KMEMSNOOP_VERSION "0.2"

const char *kmemsnoop_version(void)
{
	return KMEMSNOOP_VERSION;
}
