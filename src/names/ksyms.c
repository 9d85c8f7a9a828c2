// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * /proc/kallsyms, loaded in one read into one buffer that also holds every
 * name (lines are cut in place), sorted once, searched by bisection.
 *
 * Lookups follow the kernel's kallsyms_lookup() so that the text matches
 * what ftrace prints for %pS:
 *  - among symbols at the same address the first one listed wins (the
 *    kernel backs up to the first alias in its address-sorted table, which
 *    is the order /proc/kallsyms prints);
 *  - a symbol extends to the next higher address;
 *  - BPF programs ("[bpf]") print without a module suffix, and neither
 *    the "[__builtin__*]" pseudo-modules (ftrace and kprobe trampolines)
 *    nor absolute symbols are resolved, as %pS does not resolve them.
 * Where the kernel knows a bound that kallsyms does not show (the end of a
 * module's memory region), a symbol whose next neighbour belongs to another
 * owner, or for modules to another kind of section, is cut at the next page
 * boundary: module regions are page-granular, so that is where the region
 * most likely ends, and it keeps sizes from running across modules.  The
 * page is the kernel's (4, 16 or 64 KiB on arm64), which is this system's.
 */
#include "ksyms.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/types.h>

#include "bpf/kmemsnoop.h"

#define KSYMS_READ_CHUNK (1u << 20)
#define KSYMS_CACHE_BITS 11
#define KSYMS_CACHE_SLOTS (1u << KSYMS_CACHE_BITS)
#define KSYMS_CACHE_TEXT 116 /* longer texts are formatted every time */
#define KSYMS_TEXT_MAX 1024  /* KSYM_NAME_LEN 512 + module name + numbers */

struct ksym_ent {
	struct ksym sym;
	char type; /* the kallsyms type letter */
};

struct ksyms_slot {
	unsigned long long addr;
	unsigned int len; /* 0: empty */
	char text[KSYMS_CACHE_TEXT];
};

struct ksyms {
	int refs;
	char *text; /* the file, cut into names and module names */
	struct ksym_ent *ents;
	size_t count;
	struct ksyms_slot cache[KSYMS_CACHE_SLOTS];
};

/*
 * Reads the whole file: /proc files report size 0, so grow as we go; a
 * regular file (a recording's copy) gets its size and the NUL at once.
 */
static char *read_all(const char *path, size_t *len_out)
{
	size_t cap = 4 * KSYMS_READ_CHUNK, len = 0;
	char *buf = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (unsigned long long)st.st_size < SIZE_MAX / 4)
		cap = (size_t)st.st_size + 2; /* the NUL, and a byte to see the end */
	for (;;) {
		ssize_t n;

		if (!buf || cap - len < 2) {
			char *nb = realloc(buf, buf ? cap * 2 : cap);

			if (!nb)
				goto fail;
			cap = buf ? cap * 2 : cap;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*len_out = len;
	return buf;
fail:
	{
		int err = errno ? errno : ENOMEM;

		free(buf);
		close(fd);
		errno = err;
		return NULL;
	}
}

static size_t count_lines(const char *s, size_t len)
{
	size_t n = 1; /* a last line without '\n' */
	const char *end = s + len;

	while ((s = memchr(s, '\n', (size_t)(end - s)))) {
		n++;
		s++;
	}
	return n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses hex at *p up to a space; false if there is none. */
static bool parse_hex(char **p, unsigned long long *out)
{
	unsigned long long v = 0;
	char *s = *p;
	int d;

	while ((d = hexval(*s)) >= 0) {
		v = (v << 4) | (unsigned long long)d;
		s++;
	}
	if (s == *p || *s != ' ')
		return false;
	*out = v;
	*p = s;
	return true;
}

/*
 * Cuts one line "addr type name[\t[module]]" in place.  Returns the start
 * of the next line; e->sym.name is NULL when the line is to be skipped.
 */
static char *parse_line(char *line, struct ksym_ent *e)
{
	char *eol = strchr(line, '\n');
	char *next = eol ? eol + 1 : line + strlen(line);
	char *p = line, *tab, *mod = NULL;

	if (eol)
		*eol = '\0';
	e->sym.name = NULL;
	if (!parse_hex(&p, &e->sym.addr) || !p[1] || p[2] != ' ' || !p[3])
		return next;
	e->type = p[1];
	p += 3;
	tab = strchr(p, '\t');
	if (tab) {
		*tab = '\0';
		mod = tab + 1;
		if (*mod != '[' || mod[strlen(mod) - 1] != ']')
			return next;
		mod[strlen(mod) - 1] = '\0';
		mod++;
	}
	e->sym.name = p;
	e->sym.module = mod;
	return next;
}

static bool keep_symbol(const struct ksym_ent *e)
{
	if (!e->sym.name || !e->sym.addr)
		return false;
	/*
	 * Absolute symbols (x86 per-CPU offsets) are not addresses %pS
	 * resolves, and would otherwise cover everything below the kernel.
	 */
	if (e->type == 'A' || e->type == 'a')
		return false;
	/* %pS does not resolve trampolines, so neither do we. */
	return !e->sym.module || strncmp(e->sym.module, "__builtin__", 11) != 0;
}

/* Module names repeat on every line of a module: keep one copy in use. */
static const char *intern_module(const char *mod, const char **last)
{
	if (!mod)
		return NULL;
	if (*last && strcmp(*last, mod) == 0)
		return *last;
	*last = mod;
	return mod;
}

static size_t parse_all(char *text, struct ksym_ent *ents)
{
	const char *last_mod = NULL;
	size_t n = 0;
	char *p = text;

	while (*p) {
		struct ksym_ent *e = &ents[n];

		p = parse_line(p, e);
		if (!keep_symbol(e))
			continue;
		e->sym.module = intern_module(e->sym.module, &last_mod);
		n++;
	}
	return n;
}

static int cmp_ent(const void *a, const void *b)
{
	const struct ksym_ent *x = a, *y = b;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	/* Names lie in the file buffer in file order: keep aliases in it. */
	if (x->sym.name != y->sym.name)
		return (uintptr_t)x->sym.name < (uintptr_t)y->sym.name ? -1 : 1;
	return 0;
}

/* The core kernel's part of kallsyms comes sorted; modules' may not. */
static bool is_sorted(const struct ksym_ent *ents, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		if (cmp_ent(&ents[i - 1], &ents[i]) > 0)
			return false;
	}
	return true;
}

static bool same_owner(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool is_text(char type)
{
	return type == 't' || type == 'T';
}

static unsigned long long to_page_end(unsigned long long addr, unsigned long long page)
{
	return page - (addr & (page - 1));
}

static unsigned long long sym_size(const struct ksym_ent *e, const struct ksym_ent *next,
				   unsigned long long page)
{
	unsigned long long gap, cap = to_page_end(e->sym.addr, page);

	if (!next)
		return cap;
	gap = next->sym.addr - e->sym.addr;
	if (!same_owner(e->sym.module, next->sym.module))
		return gap < cap ? gap : cap;
	if (e->sym.module && is_text(e->type) != is_text(next->type))
		return gap < cap ? gap : cap;
	return gap;
}

/* Each symbol ends where the next higher address begins. */
static void compute_sizes(struct ksym_ent *ents, size_t n)
{
	long page = sysconf(_SC_PAGESIZE);
	const struct ksym_ent *next = NULL;

	if (page <= 0)
		page = 4096;

	for (size_t i = n; i-- > 0;) {
		if (i + 1 < n && ents[i + 1].sym.addr != ents[i].sym.addr)
			next = &ents[i + 1];
		ents[i].sym.size = sym_size(&ents[i], next, page);
	}
}

struct ksyms *ksyms_load(const char *path)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	size_t len;

	if (!ks)
		return NULL;
	ks->refs = 1;
	ks->text = read_all(path, &len);
	if (!ks->text)
		goto fail;
	ks->ents = malloc(count_lines(ks->text, len) * sizeof(*ks->ents));
	if (!ks->ents)
		goto fail;
	ks->count = parse_all(ks->text, ks->ents);
	if (!is_sorted(ks->ents, ks->count))
		qsort(ks->ents, ks->count, sizeof(*ks->ents), cmp_ent);
	compute_sizes(ks->ents, ks->count);
	return ks;
fail:
	{
		int err = errno ? errno : ENOMEM;

		ksyms_free(ks);
		errno = err;
		return NULL;
	}
}

struct ksyms *ksyms_get(struct ksyms *ks)
{
	/* Atomic: --allocinfo's learning thread drops its own. */
	if (ks)
		__atomic_add_fetch(&ks->refs, 1, __ATOMIC_RELAXED);
	return ks;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks || __atomic_sub_fetch(&ks->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	free(ks->ents);
	free(ks->text);
	free(ks);
}

size_t ksyms_count(const struct ksyms *ks)
{
	return ks ? ks->count : 0;
}

const struct ksym *ksyms_at(const struct ksyms *ks, size_t i)
{
	return ks && i < ks->count ? &ks->ents[i].sym : NULL;
}

/* Index of the last entry at or below addr, or count if there is none. */
static size_t floor_index(const struct ksyms *ks, unsigned long long addr)
{
	size_t lo = 0, hi = ks->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->ents[mid].sym.addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : ks->count;
}

const struct ksym *ksyms_find(const struct ksyms *ks, unsigned long long addr)
{
	size_t i;

	if (!ks || !ks->count)
		return NULL;
	i = floor_index(ks, addr);
	if (i == ks->count)
		return NULL;
	while (i > 0 && ks->ents[i - 1].sym.addr == ks->ents[i].sym.addr)
		i--;
	if (addr - ks->ents[i].sym.addr >= ks->ents[i].sym.size)
		return NULL;
	return &ks->ents[i].sym;
}

unsigned long long ksyms_addr_of(const struct ksyms *ks, const char *name)
{
	for (size_t i = 0; ks && i < ks->count; i++)
		if (!strcmp(ks->ents[i].sym.name, name))
			return ks->ents[i].sym.addr;
	return 0;
}

/* Like the kernel's sprintf, "%#lx" gives "0x0" for zero; so spell it out. */
static size_t format_uncached(const struct ksyms *ks, unsigned long long addr,
			      char *buf, size_t size)
{
	const struct ksym *s = ksyms_find(ks, addr);
	int n;

	if (!s)
		n = snprintf(buf, size, "0x%llx", addr);
	else if (s->module && strcmp(s->module, "bpf") != 0)
		n = snprintf(buf, size, "%s+0x%llx/0x%llx [%s]", s->name,
			     addr - s->addr, s->size, s->module);
	else
		n = snprintf(buf, size, "%s+0x%llx/0x%llx", s->name,
			     addr - s->addr, s->size);
	if (n < 0) {
		buf[0] = '\0';
		return 0;
	}
	return (size_t)n < size ? (size_t)n : size - 1;
}

static struct ksyms_slot *slot_for(struct ksyms *ks, unsigned long long addr)
{
	/* Fibonacci hashing: call sites differ in low and high bits alike. */
	unsigned long long h = addr * KMT_HASH_MUL;

	return &ks->cache[h >> (64 - KSYMS_CACHE_BITS)];
}

static size_t copy_out(const char *text, size_t len, char *buf, size_t size)
{
	if (len >= size)
		len = size - 1;
	memcpy(buf, text, len);
	buf[len] = '\0';
	return len;
}

size_t ksyms_format(struct ksyms *ks, unsigned long long addr, char *buf,
		    size_t size)
{
	char text[KSYMS_TEXT_MAX];
	struct ksyms_slot *slot;
	size_t len;

	if (!size)
		return 0;
	if (!ks)
		return format_uncached(ks, addr, buf, size);
	slot = slot_for(ks, addr);
	if (slot->len && slot->addr == addr)
		return copy_out(slot->text, slot->len, buf, size);
	len = format_uncached(ks, addr, text, sizeof(text));
	if (len < sizeof(slot->text)) {
		slot->addr = addr;
		slot->len = (unsigned int)len;
		memcpy(slot->text, text, len + 1);
	}
	return copy_out(text, len, buf, size);
}
