/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The JSON string writer that every mode's --json output uses. */
#ifndef KMEMSNOOP_JSON_H
#define KMEMSNOOP_JSON_H

#include <stddef.h>
#include <stdio.h>

/* The most n bytes take escaped: a control character is six. */
#define JSON_ESCAPED_MAX(n) (6 * (n))

/* The n bytes at s escaped for a JSON string (no quotes) at dst, which
 * has JSON_ESCAPED_MAX(n) bytes: the end of what was written. */
char *json_escape(char *dst, const char *s, size_t n);

/* s as a JSON string, quotes included: control characters and bytes past
 * ASCII as \u00XX (comms and cache names are bytes, not UTF-8). */
void json_put_string(FILE *out, const char *s);

#endif
