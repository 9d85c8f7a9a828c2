/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* -i DIR: reading a kmemtrace directory back as text. */
#ifndef KMEMSNOOP_BININ_H
#define KMEMSNOOP_BININ_H

struct text_sink;

/*
 * Prints every record of DIR/cpu* through sink, merged across CPUs in
 * sequence order.  Returns an exit code; errors are one line on stderr.
 */
int binin_print(const char *dir, struct text_sink *sink);

#endif
