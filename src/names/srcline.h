/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Source locations from DWARF (elfutils libdw/libdwfl): an address to the
 * chain of inlined functions it lies in, each with its file and line.
 */
#ifndef KMEMSNOOP_SRCLINE_H
#define KMEMSNOOP_SRCLINE_H

#include <stddef.h>

struct srcline;

/*
 * One level of the inline chain.  The strings belong to the struct srcline.
 * file is relative to the compilation directory when it lies under it (as
 * kernel sources print: "mm/slub.c").
 */
struct srcline_frame {
	const char *file;
	unsigned int line;
	const char *func; /* NULL when DWARF names no function here */
};

#define SRCLINE_MAX_INLINE 16

/*
 * Opens an ELF file for lookups at its link-time addresses.  NULL with a
 * one-line reason in err when it cannot be read, is no ELF file, or has no
 * DWARF debug information (also not in a separate debug file found by
 * build id or debuglink).
 */
struct srcline *srcline_open(const char *path, char *err, size_t err_size);

/*
 * The running kernel's loaded modules, at their load addresses (their
 * sections from /sys/module), with debug information found the usual way
 * (/lib/modules/RELEASE, /usr/lib/debug).  NULL when no module is loaded.
 */
struct srcline *srcline_open_kernel_modules(void);

void srcline_close(struct srcline *d);

/* The address of symbol name; 0, or -1 if there is none. */
int srcline_symbol(struct srcline *d, const char *name, unsigned long long *addr);

/* The GNU build id: its length and *bits, or 0 when there is none. */
int srcline_build_id(struct srcline *d, const unsigned char **bits);

/*
 * The inline chain at addr, innermost first: frames[0] is the line the
 * address belongs to, each next one the call site of the inlined function
 * before it, the last one the out-of-line function.  Returns the number of
 * frames written (at most max), 0 when no line information covers addr.
 */
int srcline_lookup(struct srcline *d, unsigned long long addr, struct srcline_frame *frames, int max);

/*
 * file without the compilation directory comp_dir (absolute or relative)
 * and leading "./": a path in the source tree.  "??" when file is NULL.
 */
const char *srcline_relative(const char *file, const char *comp_dir);

#endif
