/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel symbols from /proc/kallsyms, and call sites printed the way the
 * kernel's %pS prints them: "func+0x28/0x48", "func+0x28/0x48 [module]",
 * or "0x..." for an address no symbol covers.
 */
#ifndef KMEMSNOOP_KSYMS_H
#define KMEMSNOOP_KSYMS_H

#include <stddef.h>

struct ksyms;

struct ksym {
	unsigned long long addr;
	unsigned long long size; /* up to the next symbol, as the kernel counts */
	const char *name;
	const char *module; /* NULL for vmlinux; "bpf" for BPF programs */
};

/*
 * Loads a kallsyms-format file ("/proc/kallsyms" or a test file).  Lines
 * with address 0 (what unprivileged readers see) are skipped, so the table
 * may be empty: check ksyms_count().  NULL with errno set on failure.
 */
struct ksyms *ksyms_load(const char *path);
/* Symbols shared by their readers (reading /proc/kallsyms is most of a
 * start): ksyms_get() takes a reference, ksyms_free() drops one. */
struct ksyms *ksyms_get(struct ksyms *ks);
void ksyms_free(struct ksyms *ks);
size_t ksyms_count(const struct ksyms *ks);

/* Symbol i in address order (i < ksyms_count), or NULL. */
const struct ksym *ksyms_at(const struct ksyms *ks, size_t i);

/* The symbol covering addr, or NULL if none. */
const struct ksym *ksyms_find(const struct ksyms *ks, unsigned long long addr);

/* The address of a symbol named name, or 0 when there is none (a scan). */
unsigned long long ksyms_addr_of(const struct ksyms *ks, const char *name);

/*
 * %pS-style text for addr, NUL-terminated and truncated to fit size;
 * returns the strlen of what was written.  Not thread-safe: it fills a
 * cache inside ks.
 */
size_t ksyms_format(struct ksyms *ks, unsigned long long addr, char *buf,
		    size_t size);

#endif /* KMEMSNOOP_KSYMS_H */
