/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * allocinfo tags for kernel addresses, as lib/alloc_tag.c prints them:
 * "file:line [module] func:function" from the kernel's DWARF when it can be
 * found, else "function+0xoff [module] func:function" from /proc/kallsyms.
 * Also which frames of a kernel stack made an allocation.
 */
#ifndef KMEMSNOOP_ALLOCTAG_H
#define KMEMSNOOP_ALLOCTAG_H

#include <stdbool.h>
#include <stddef.h>

#include "srcline.h"

struct alloctag;
struct ksyms;

/*
 * Tags from ksyms (the kernel's symbols; a reference is taken) and the
 * kernel's debug information: vmlinux_path, or when NULL the first of the
 * usual places that holds a vmlinux with DWARF and the running kernel's
 * build id (saying on stderr when there is none).  NULL with a one-line
 * reason in err when vmlinux_path cannot be used or there are no symbols.
 */
struct alloctag *alloctag_new(const char *vmlinux_path, struct ksyms *ksyms, bool verbose,
			      char *err, size_t err_size);
void alloctag_free(struct alloctag *t);

/* Reads /proc/kallsyms again: BPF programs loaded since have symbols. */
void alloctag_refresh(struct alloctag *t);
/* The same with symbols read since (a reference is taken). */
void alloctag_use_symbols(struct alloctag *t, struct ksyms *ksyms);

/* The tag of the allocation call that returns to addr (a call site). */
size_t alloctag_site(struct alloctag *t, unsigned long long addr, char *buf, size_t size);

/*
 * In a kernel stack, innermost first: the index of the first frame after
 * the tracing machinery (BPF, tracepoint), and the index of the frame that
 * made the allocation (also past the allocator's own functions).  n when
 * every frame is skipped.
 */
int alloctag_first_frame(struct alloctag *t, const unsigned long long *ips, int n);
int alloctag_call_frame(struct alloctag *t, const unsigned long long *ips, int n);

/* Is this the stack of a page allocation that vmalloc makes for an area
 * (the page allocator's frames, then the vmalloc API's)? */
bool alloctag_vmalloc_page(struct alloctag *t, const unsigned long long *ips, int n);

/* A frame of --stacks: "func+0xoff/0xsize [module]", and " (file:line)" with DWARF. */
size_t alloctag_frame(struct alloctag *t, unsigned long long addr, char *buf, size_t size);
/* A frame of --folded: the function name ("func" or "func [module]"). */
size_t alloctag_func(struct alloctag *t, unsigned long long addr, char *buf, size_t size);

/*
 * --pprof: the inline chain of the call that returns to addr, innermost
 * first, in frames (SRCLINE_MAX_INLINE; from DWARF, 0 frames without),
 * and the symbol holding addr in *sym and its module in *module (NULL:
 * none, the kernel itself).  site: addr is an allocation's call site; the
 * chain then starts past the inlined allocator wrappers, as its tag does.
 */
int alloctag_chain(struct alloctag *t, unsigned long long addr, bool site,
		   struct srcline_frame *frames, const char **sym, const char **module);

/* --- the pure parts, for tests ------------------------------------------- */

/* What a tag is made of: file is NULL without DWARF, sym NULL when unknown. */
struct alloctag_src {
	const char *file;
	unsigned int line;
	const char *module; /* NULL for the kernel itself */
	const char *func;
	const char *sym;
	unsigned long long off;  /* from sym */
	unsigned long long addr; /* when there is no symbol */
};

size_t alloctag_format(const struct alloctag_src *src, char *buf, size_t size);

/* The allocator's own functions and wrappers (kmalloc*, *_noprof ...). */
bool alloctag_is_allocator(const char *func);
/* BPF and tracepoint machinery at the top of a stack taken in BPF. */
bool alloctag_is_glue(const char *func);

struct ksyms;

/*
 * The first of the nr return addresses at ips (u64 each, unaligned: as a
 * recording's stack feature holds them) to show: past the tracing
 * machinery's that a stack taken in a BPF program starts with, named by
 * ks (glue, BPF programs, and addresses no symbol covers: a BPF program's
 * where the kernel lists none).  0 without ks.
 */
unsigned int alloctag_stack_start(const struct ksyms *ks, const void *ips, unsigned int nr);

/*
 * Of an inline chain (innermost first), the frame where the allocation
 * was called: the first one outside an inlined allocator wrapper, as the
 * kernel's alloc_hooks() tags the line that called kmalloc(), not the line
 * in slab.h.  n - 1 when all of them are wrappers.
 */
int alloctag_pick_inline(const struct srcline_frame *frames, int n);

/* The GNU build id in a buffer of ELF notes (/sys/kernel/notes); 0 if none. */
size_t alloctag_notes_build_id(const unsigned char *notes, size_t len, const unsigned char **id);

/* The running kernel's build id (from /sys/kernel/notes) into id; its
 * length, 0 if none or longer than size. */
size_t alloctag_running_build_id(unsigned char *id, size_t size);

#endif
