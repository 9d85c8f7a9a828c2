/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --json: one JSON object per line (docs/JSON.md).  The stream's sink
 * (the text sink's sibling: the same fields, numbers as numbers, pointers
 * as hex strings) and the string writer the other modes' JSON uses.
 */
#ifndef KMEMSNOOP_JSON_H
#define KMEMSNOOP_JSON_H

#include <stdio.h>

struct gfp_names;
struct ksyms;
struct sink;

/* s as a JSON string, quotes included: control characters and bytes past
 * ASCII as \u00XX (comms and cache names are bytes, not UTF-8). */
void json_put_string(FILE *out, const char *s);

/* The stream's sink: GFP flags named by gfp (the sink keeps a copy). */
struct sink *json_sink_new(FILE *out, struct ksyms *ksyms, const struct gfp_names *gfp);

#endif
