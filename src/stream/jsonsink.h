/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --json: the stream's sink, one JSON object per record (docs/JSON.md):
 * the text sink's sibling, with the same fields, numbers as numbers and
 * pointers as hex strings.
 */
#ifndef KMEMSNOOP_JSONSINK_H
#define KMEMSNOOP_JSONSINK_H

#include <stdio.h>

struct addr_names;
struct gfp_names;
struct sink;

/* The stream's sink: addresses named as names says (text.h; its symbol
 * tables borrowed), GFP flags by gfp (the sink keeps a copy). */
struct sink *json_sink_new(FILE *out, const struct addr_names *names,
			   const struct gfp_names *gfp);

#endif
