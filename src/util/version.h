/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* kmemsnoop's version: -V, a recording's header, the metrics' build info. */
#ifndef KMEMSNOOP_VERSION_H
#define KMEMSNOOP_VERSION_H

const char *kmemsnoop_version(void);

#endif
