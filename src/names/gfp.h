/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * GFP flag names as the kernel's ftrace output prints them
 * (show_gfp_flags() in include/trace/events/mmflags.h): composite masks
 * first, then single bits, greedily, joined with '|'; "none" for 0 and
 * leftover unknown bits as hex.
 *
 * The bit positions, the list order and some composite definitions differ
 * between kernels, so the table is built once per kernel from its BTF.
 */
#ifndef KMEMSNOOP_GFP_H
#define KMEMSNOOP_GFP_H

#include <stddef.h>
#include <stdio.h>

struct btf;
struct gfp_names;

/*
 * Builds the name table for the kernel described by vmlinux_btf.  NULL btf,
 * or a btf without the ___GFP_*_BIT enum, selects a built-in table of the
 * older kernels (5.10 .. 6.9).  The btf is only read during the call.
 * Returns NULL with errno set when out of memory.
 */
struct gfp_names *gfp_names_new(const struct btf *vmlinux_btf);
void gfp_names_free(struct gfp_names *names);

/* The mask of the entry named name ("__GFP_NOWARN"), 0 when the table
 * has none. */
unsigned int gfp_names_mask(const struct gfp_names *names, const char *name);

/* A copy of names (NULL with errno set when out of memory). */
struct gfp_names *gfp_names_copy(const struct gfp_names *names);

/*
 * The table as a recording's gfp file keeps it: one "0x<mask> <name>" line
 * per entry, in the order gfp_format() tries them.  0, or -1 when writing
 * to out failed.
 */
int gfp_names_dump(const struct gfp_names *names, FILE *out);

/*
 * The table such a file holds (len bytes of text, not NUL-terminated).
 * NULL with a one-line reason in err: a line that is not a non-zero
 * 32-bit hex mask, one space and a name of letters, digits and '_', more
 * entries than a table holds, no entry, or no newline at the end (a
 * truncated file).
 */
struct gfp_names *gfp_names_parse(const char *text, size_t len, char *err, size_t err_size);

/*
 * Writes the kernel-style name list for flags into buf, NUL-terminated and
 * truncated to fit size; returns the strlen of what was written.  Safe to
 * call from several threads on the same names.
 */
size_t gfp_format(const struct gfp_names *names, unsigned int flags, char *buf,
		  size_t size);

/* __GFP_ACCOUNT: the same bit on every kernel since 4.x. */
#define GFP_ACCOUNT 0x400000u

#endif /* KMEMSNOOP_GFP_H */
