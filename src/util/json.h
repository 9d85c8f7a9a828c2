/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The JSON string writer that every mode's --json output uses. */
#ifndef KMEMSNOOP_JSON_H
#define KMEMSNOOP_JSON_H

#include <stdio.h>

/* s as a JSON string, quotes included: control characters and bytes past
 * ASCII as \u00XX (comms and cache names are bytes, not UTF-8). */
void json_put_string(FILE *out, const char *s);

#endif
