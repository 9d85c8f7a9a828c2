// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DWARF lookups with libdwfl: it finds separate debug files (build id,
 * debuglink), relocates kernel modules, and gives the line table and the
 * scopes (inlined functions) at an address.
 */
#include "srcline.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where a compilation unit's code lies, for files without .debug_aranges. */
struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off die;
};

struct srcline {
	Dwfl *dwfl;
	Dwfl_Module *mod; /* srcline_open's file; NULL for the kernel's modules */
	/* clang emits no .debug_aranges, which libdw 0.188 needs to find
	 * the unit of an address: then an index of every unit's ranges. */
	struct cu_range *ranges;
	size_t nranges;
	bool indexed;
};

/* libdwfl's default search path (NULL): the usual debug directories. */
static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static const Dwfl_Callbacks kernel_callbacks = {
	.find_elf = dwfl_linux_kernel_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_linux_kernel_module_section_address,
	.debuginfo_path = &debuginfo_path,
};

static struct srcline *fail(struct srcline *d, char *err, size_t err_size, const char *fmt,
			  const char *path, const char *why)
{
	snprintf(err, err_size, fmt, path, why);
	srcline_close(d);
	return NULL;
}

struct srcline *srcline_open(const char *path, char *err, size_t err_size)
{
	struct srcline *d = calloc(1, sizeof(*d));
	Dwarf_Addr bias;
	int fd;

	if (!d)
		return fail(d, err, err_size, "%s: %s", path, strerror(ENOMEM));
	/* Our own open, for a plain errno message on a missing file. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(d, err, err_size, "%s: %s", path, strerror(errno));
	d->dwfl = dwfl_begin(&offline_callbacks);
	if (!d->dwfl) {
		close(fd);
		return fail(d, err, err_size, "%s: %s", path, dwfl_errmsg(-1));
	}
	dwfl_report_begin(d->dwfl);
	/* On success dwfl owns fd. */
	d->mod = dwfl_report_offline(d->dwfl, path, path, fd);
	dwfl_report_end(d->dwfl, NULL, NULL);
	if (!d->mod) {
		close(fd);
		return fail(d, err, err_size, "%s: not an ELF file (%s)", path, dwfl_errmsg(-1));
	}
	if (!dwfl_module_getdwarf(d->mod, &bias))
		return fail(d, err, err_size,
			    "%s has no DWARF debug information (%s): it needs a build with "
			    "-g (CONFIG_DEBUG_INFO), or its separate debug file",
			    path, dwfl_errmsg(-1));
	return d;
}

static int count_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			void *arg)
{
	(void)mod, (void)userdata, (void)name, (void)start;
	(*(int *)arg)++;
	return DWARF_CB_OK;
}

struct srcline *srcline_open_kernel_modules(void)
{
	struct srcline *d = calloc(1, sizeof(*d));
	int n = 0;

	if (!d)
		return NULL;
	d->dwfl = dwfl_begin(&kernel_callbacks);
	if (!d->dwfl)
		goto none;
	dwfl_report_begin(d->dwfl);
	if (dwfl_linux_kernel_report_modules(d->dwfl))
		goto none;
	dwfl_report_end(d->dwfl, NULL, NULL);
	dwfl_getmodules(d->dwfl, count_module, &n, 0);
	if (n > 0)
		return d;
none:
	srcline_close(d);
	return NULL;
}

void srcline_close(struct srcline *d)
{
	if (!d)
		return;
	if (d->dwfl)
		dwfl_end(d->dwfl);
	free(d->ranges);
	free(d);
}

int srcline_symbol(struct srcline *d, const char *name, unsigned long long *addr)
{
	int n = d->mod ? dwfl_module_getsymtab(d->mod) : -1;

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		const char *s = dwfl_module_getsym_info(d->mod, i, &sym, &value, NULL, NULL, NULL);

		if (s && !strcmp(s, name)) {
			*addr = sym.st_value;
			return 0;
		}
	}
	return -1;
}

int srcline_build_id(struct srcline *d, const unsigned char **bits)
{
	GElf_Addr vaddr;
	int len;

	if (!d->mod)
		return 0;
	len = dwfl_module_build_id(d->mod, bits, &vaddr);
	return len > 0 ? len : 0;
}

/*
 * "mm/slub.c" rather than "/build/linux/mm/slub.c", as the kernel prints.
 * The compilation directory need not be absolute: reproducible builds map
 * it to a relative one (Debian's kernels: "debian/build/build_amd64_none_
 * cloud-amd64"), which libdw prefixes to the unit's file names all the same.
 */
const char *srcline_relative(const char *file, const char *comp_dir)
{
	size_t n;

	if (!file)
		return "??";
	if (comp_dir) {
		n = strlen(comp_dir);
		while (n > 1 && comp_dir[n - 1] == '/')
			n--;
		if (n && !strncmp(file, comp_dir, n) && file[n] == '/')
			file += n + 1;
	}
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	return file;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));

	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	return name;
}

static const char *cu_comp_dir(Dwarf_Die *cu)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
}

/* Where the inlined function of scope was called from. */
static void call_site(Dwarf_Die *cu, Dwarf_Die *scope, struct srcline_frame *f)
{
	Dwarf_Attribute attr;
	Dwarf_Word file_idx = 0, line = 0;
	Dwarf_Files *files;
	size_t nfiles;
	const char *file = NULL;

	if (!dwarf_formudata(dwarf_attr(scope, DW_AT_call_file, &attr), &file_idx) &&
	    !dwarf_getsrcfiles(cu, &files, &nfiles) && file_idx < nfiles)
		file = dwarf_filesrc(files, file_idx, NULL, NULL);
	dwarf_formudata(dwarf_attr(scope, DW_AT_call_line, &attr), &line);
	f->file = srcline_relative(file, cu_comp_dir(cu));
	f->line = (unsigned int)line;
	f->func = NULL;
}

/*
 * Names frames[0..] from the scopes at addr (innermost first); returns n.
 * dwarf_getscopes() continues past an inlined subroutine with the scopes
 * of its abstract definition; the DIE nesting of the innermost scope
 * (dwarf_getscopes_die) has the concrete functions it was inlined into.
 */
static int inline_chain(Dwarf_Die *cu, Dwarf_Addr addr, struct srcline_frame *frames, int max)
{
	Dwarf_Die *scopes = NULL, inner;
	int nscopes = dwarf_getscopes(cu, addr, &scopes), n = 1;

	if (nscopes <= 0) {
		free(scopes);
		return 1;
	}
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	nscopes = dwarf_getscopes_die(&inner, &scopes);

	for (int i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		frames[n - 1].func = die_name(&scopes[i]);
		if (tag == DW_TAG_subprogram || n == max)
			break;
		call_site(cu, &scopes[i], &frames[n]);
		n++;
	}
	free(scopes);
	return n;
}

static int push_range(struct srcline *d, size_t *cap, Dwarf_Addr lo, Dwarf_Addr hi,
		      Dwarf_Off die)
{
	if (d->nranges == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4096;
		struct cu_range *r = realloc(d->ranges, ncap * sizeof(*r));

		if (!r)
			return -1;
		d->ranges = r;
		*cap = ncap;
	}
	d->ranges[d->nranges++] = (struct cu_range){ lo, hi, die };
	return 0;
}

static int by_lo(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void build_index(struct srcline *d, Dwarf *dw)
{
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;

	d->indexed = true;
	while (!dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Die cu;
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;

		if (dwarf_offdie(dw, off + hsize, &cu))
			while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0)
				if (lo < hi && push_range(d, &cap, lo, hi, off + hsize))
					return;
		off = next;
	}
	if (d->nranges > 1) /* ranges is NULL when there are none */
		qsort(d->ranges, d->nranges, sizeof(*d->ranges), by_lo);
}

/* The unit holding addr (a DWARF address): by aranges, else the index. */
static Dwarf_Die *find_cu(struct srcline *d, Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *mem,
			  Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
	Dwarf *dw;
	size_t lo = 0, hi;

	if (cu || mod != d->mod)
		return cu;
	dw = dwfl_module_getdwarf(mod, bias);
	if (!dw)
		return NULL;
	if (!d->indexed)
		build_index(d, dw);
	addr -= *bias;
	hi = d->nranges;
	while (lo < hi) { /* the last range starting at or below addr */
		size_t mid = lo + (hi - lo) / 2;

		if (d->ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges of different units do not overlap; look back a little in
	 * case an empty or nested one sorts in between. */
	for (size_t i = lo; i-- > 0 && lo - i <= 8;)
		if (addr >= d->ranges[i].lo && addr < d->ranges[i].hi)
			return dwarf_offdie(dw, d->ranges[i].die, mem);
	return NULL;
}

int srcline_lookup(struct srcline *d, unsigned long long addr, struct srcline_frame *frames, int max)
{
	Dwfl_Module *mod;
	Dwarf_Line *line;
	Dwarf_Die *cu, mem;
	Dwarf_Addr bias = 0;
	int lineno = 0;

	if (!d || max < 1)
		return 0;
	mod = dwfl_addrmodule(d->dwfl, addr);
	if (!mod)
		return 0;
	cu = find_cu(d, mod, addr, &mem, &bias);
	if (!cu)
		return 0;
	line = dwarf_getsrc_die(cu, addr - bias);
	if (!line || dwarf_lineno(line, &lineno))
		return 0;
	frames[0].file = srcline_relative(dwarf_linesrc(line, NULL, NULL), cu_comp_dir(cu));
	frames[0].line = (unsigned int)lineno;
	frames[0].func = NULL;
	return inline_chain(cu, addr - bias, frames, max);
}
