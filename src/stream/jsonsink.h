/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --json: the stream's sink, one JSON object per record (docs/JSON.md):
 * the text sink's sibling, with the same fields, numbers as numbers and
 * pointers as hex strings.
 */
#ifndef KMEMSNOOP_JSONSINK_H
#define KMEMSNOOP_JSONSINK_H

#include <stdio.h>

struct gfp_names;
struct ksyms;
struct sink;
struct usyms;

/* The stream's sink: kernel addresses named by ksyms, user frames by
 * usyms (both borrowed; NULL: addresses), GFP flags by gfp (the sink
 * keeps a copy). */
struct sink *json_sink_new(FILE *out, struct ksyms *ksyms, struct usyms *usyms,
			   const struct gfp_names *gfp);

#endif
