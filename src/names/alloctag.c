// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tags for allocation sites.  With the kernel's DWARF, a call site becomes
 * the file and line of the call, seen through inlining the way the
 * kernel's own alloc_hooks() macro sees it: kmalloc() is an inline
 * wrapper, so the line table at the return address says include/linux/
 * slab.h; the tag is the line that called the wrapper.  Without DWARF the
 * symbol and offset stand in for file and line.
 *
 * Runtime addresses are turned into vmlinux's link-time ones with the
 * KASLR offset: the runtime _text (kallsyms) minus vmlinux's _text.
 */
#include "alloctag.h"
#include "vmcallers.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ksyms.h"
#include "names.h"

struct alloctag {
	struct ksyms *ksyms;
	struct srcline *vmlinux;      /* NULL without kernel debug information */
	struct srcline *modules;      /* loaded modules, NULL when none */
	unsigned long long kaslr;   /* runtime minus link-time address */
};

/* --- names ------------------------------------------------------------------ */

/*
 * Functions that allocate on behalf of their caller.  Since 6.10 the
 * kernel names them *_noprof (the ones alloc_hooks() wraps); the prefixes
 * cover older kernels and the allocator's internals.
 */
static const struct name allocator_prefixes[] = {
	NAME("kmalloc"), NAME("__kmalloc"), NAME("kzalloc"), NAME("kcalloc"), NAME("kvmalloc"),
	NAME("__kvmalloc"), NAME("kvzalloc"), NAME("kvcalloc"), NAME("krealloc"),
	NAME("__do_krealloc"), NAME("kmem_cache_alloc"), NAME("kmem_cache_zalloc"),
	NAME("slab_alloc"), NAME("__slab_alloc"), NAME("___slab_alloc"), NAME("alloc_pages"),
	NAME("__alloc_pages"), NAME("alloc_frozen_pages"), NAME("__alloc_frozen_pages"),
	NAME("alloc_page_interleave"), NAME("alloc_page_vma"), NAME("folio_alloc"),
	NAME("__folio_alloc"), NAME("vma_alloc_folio"), NAME("get_page_from_freelist"),
	NAME("__get_free_pages"), NAME("get_zeroed_page"), NAME("rmqueue"), NAME("__rmqueue"),
	NAME("pcpu_alloc"), NAME("__alloc_percpu"), NAME("__alloc_reserved_percpu"),
	NAME("alloc_percpu"),
};

/*
 * The tracing machinery between a tracepoint's caller and the BPF program,
 * and the tracepoints' trace_<event>() where the compiler did not inline
 * them (7.2's trace_kmalloc on arm64).
 */
static const struct name glue_prefixes[] = {
	NAME("bpf_"), NAME("__bpf_"), NAME("___bpf_"), NAME("__traceiter_"),
	NAME("trace_event_raw_event_"), NAME("perf_trace_"), NAME("trace_call_bpf"),
	NAME("trace_kmalloc"), NAME("trace_kmem_cache_alloc"), NAME("trace_mm_page_alloc"),
	NAME("trace_percpu_alloc_percpu"),
};

/* A *_noprof function, or a compiler clone of one ("_noprof.isra.0"). */
static bool is_noprof(const char *func)
{
	static const char noprof[] = "_noprof";

	for (const char *p = strstr(func, noprof); p; p = strstr(p + 1, noprof))
		if (p[sizeof(noprof) - 1] == '\0' || p[sizeof(noprof) - 1] == '.')
			return true;
	return false;
}

bool alloctag_is_allocator(const char *func)
{
	if (!func)
		return false;
	/* Compiler clones (".isra.0", ".constprop.0") keep their origin's name. */
	return names_prefix_of(func, allocator_prefixes, NAMES_COUNT(allocator_prefixes)) ||
	       is_noprof(func);
}

bool alloctag_is_glue(const char *func)
{
	return func && names_prefix_of(func, glue_prefixes, NAMES_COUNT(glue_prefixes));
}

int alloctag_pick_inline(const struct srcline_frame *frames, int n)
{
	for (int i = 0; i < n; i++)
		if (!alloctag_is_allocator(frames[i].func))
			return i;
	return n - 1;
}

/* --- formatting ------------------------------------------------------------- */

static size_t clamp(int n, size_t size)
{
	if (n < 0)
		return 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

/* lib/alloc_tag.c's codetag_to_text(), with symbol+offset for file:line. */
size_t alloctag_format(const struct alloctag_src *src, char *buf, size_t size)
{
	char where[512];
	const char *func = src->func ? src->func : src->sym;

	if (!size)
		return 0;
	if (src->file)
		snprintf(where, sizeof(where), "%s:%u", src->file, src->line);
	else if (src->sym)
		snprintf(where, sizeof(where), "%s+0x%llx", src->sym, src->off);
	else
		snprintf(where, sizeof(where), "0x%llx", src->addr);
	if (!func)
		func = "unknown";
	if (src->module)
		return clamp(snprintf(buf, size, "%s [%s] func:%s", where, src->module, func), size);
	return clamp(snprintf(buf, size, "%s func:%s", where, func), size);
}

/* --- finding the kernel's debug information ---------------------------------- */

size_t alloctag_notes_build_id(const unsigned char *notes, size_t len, const unsigned char **id)
{
	size_t off = 0;

	while (off + 12 <= len) {
		unsigned int namesz, descsz, type;
		size_t name_off = off + 12, desc_off;

		memcpy(&namesz, notes + off, 4);
		memcpy(&descsz, notes + off + 4, 4);
		memcpy(&type, notes + off + 8, 4);
		desc_off = name_off + ((namesz + 3) & ~3U);
		if (desc_off + descsz > len || desc_off < name_off)
			return 0;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
		    !memcmp(notes + name_off, "GNU", 4)) {
			*id = notes + desc_off;
			return descsz;
		}
		off = desc_off + ((descsz + 3) & ~3U);
	}
	return 0;
}

/* The running kernel's build id, into id; 0 when it cannot be read. */
size_t alloctag_running_build_id(unsigned char *id, size_t size)
{
	unsigned char notes[4096];
	const unsigned char *p;
	ssize_t n;
	size_t len;
	int fd = open("/sys/kernel/notes", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, notes, sizeof(notes));
	close(fd);
	if (n <= 0)
		return 0;
	len = alloctag_notes_build_id(notes, (size_t)n, &p);
	if (!len || len > size)
		return 0;
	memcpy(id, p, len);
	return len;
}

/* 0 when d is the running kernel's image (or the kernel has no build id). */
static int check_build_id(struct srcline *d, const char *path, char *err, size_t err_size)
{
	unsigned char running[64];
	const unsigned char *bits;
	size_t rlen = alloctag_running_build_id(running, sizeof(running));
	int len = srcline_build_id(d, &bits);

	if (!rlen)
		return 0;
	if (len == (int)rlen && !memcmp(bits, running, rlen))
		return 0;
	snprintf(err, err_size, "%s is not the running kernel's vmlinux (%s)", path,
		 len ? "its build id differs from /sys/kernel/notes" : "it has no build id");
	return -1;
}

static int compute_kaslr(struct alloctag *t, const char *path, char *err, size_t err_size)
{
	unsigned long long runtime = ksyms_addr_of(t->ksyms, "_text"), linked;

	if (srcline_symbol(t->vmlinux, "_text", &linked)) {
		snprintf(err, err_size, "%s has no _text symbol: it is not a vmlinux", path);
		return -1;
	}
	if (!runtime) {
		snprintf(err, err_size, "no _text in /proc/kallsyms: cannot place %s", path);
		return -1;
	}
	t->kaslr = runtime - linked;
	return 0;
}

/* Opens path as the running kernel's vmlinux; -1 with a reason in err. */
static int use_vmlinux(struct alloctag *t, const char *path, char *err, size_t err_size)
{
	t->vmlinux = srcline_open(path, err, err_size);
	if (!t->vmlinux)
		return -1;
	if (!check_build_id(t->vmlinux, path, err, err_size) &&
	    !compute_kaslr(t, path, err, err_size))
		return 0;
	srcline_close(t->vmlinux);
	t->vmlinux = NULL;
	return -1;
}

static const char *const vmlinux_places[] = {
	"/usr/lib/debug/boot/vmlinux-%s",        /* Debian, Ubuntu: linux-image-*-dbg */
	"/usr/lib/debug/lib/modules/%s/vmlinux", /* Fedora, RHEL: kernel-debuginfo */
	"/boot/vmlinux-%s",
	"/lib/modules/%s/build/vmlinux",         /* a kernel built here */
	"/lib/modules/%s/vmlinux",
	"/usr/lib/debug/vmlinux-%s",
};

static void search_vmlinux(struct alloctag *t, bool verbose)
{
	struct utsname u;
	char path[512], why[512] = "";

	if (uname(&u))
		return;
	for (size_t i = 0; i < sizeof(vmlinux_places) / sizeof(vmlinux_places[0]); i++) {
		snprintf(path, sizeof(path), vmlinux_places[i], u.release);
		if (access(path, R_OK))
			continue;
		if (!use_vmlinux(t, path, why, sizeof(why))) {
			if (verbose)
				fprintf(stderr, "kmemsnoop: kernel debug information from %s\n", path);
			return;
		}
		fprintf(stderr, "kmemsnoop: not using %s: %s\n", path, why);
	}
	fprintf(stderr, "kmemsnoop: no debug information for kernel %s (install it as "
			"/usr/lib/debug/boot/vmlinux-%s, or give --vmlinux PATH): tags are "
			"function+offset\n", u.release, u.release);
}

struct alloctag *alloctag_new(const char *vmlinux_path, struct ksyms *ksyms, bool verbose,
			      char *err, size_t err_size)
{
	struct alloctag *t;

	if (!ksyms_count(ksyms)) {
		snprintf(err, err_size, "cannot read the kernel's symbols from /proc/kallsyms");
		return NULL;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	t->ksyms = ksyms_get(ksyms);
	if (vmlinux_path) {
		if (use_vmlinux(t, vmlinux_path, err, err_size)) {
			alloctag_free(t);
			return NULL;
		}
	} else {
		search_vmlinux(t, verbose);
	}
	/* Module lookups only help when their debug files are installed. */
	if (t->vmlinux)
		t->modules = srcline_open_kernel_modules();
	return t;
}

void alloctag_free(struct alloctag *t)
{
	if (!t)
		return;
	srcline_close(t->vmlinux);
	srcline_close(t->modules);
	ksyms_free(t->ksyms);
	free(t);
}

void alloctag_use_symbols(struct alloctag *t, struct ksyms *ksyms)
{
	if (!ksyms_count(ksyms))
		return;
	ksyms_get(ksyms);
	ksyms_free(t->ksyms);
	t->ksyms = ksyms;
}

void alloctag_refresh(struct alloctag *t)
{
	struct ksyms *ks = ksyms_load("/proc/kallsyms");

	alloctag_use_symbols(t, ks);
	ksyms_free(ks);
}

/* --- lookups ---------------------------------------------------------------- */

static const char *module_of(const struct ksym *s)
{
	/* BPF programs print as the kernel prints them: no module. */
	if (!s || !s->module || !strcmp(s->module, "bpf"))
		return NULL;
	return s->module;
}

/* The inline chain of the instruction before return address addr. */
static int lookup_call(struct alloctag *t, const struct ksym *s, unsigned long long addr,
		       struct srcline_frame *frames)
{
	if (!s || !addr)
		return 0;
	if (!s->module)
		return srcline_lookup(t->vmlinux, addr - 1 - t->kaslr, frames, SRCLINE_MAX_INLINE);
	if (module_of(s))
		return srcline_lookup(t->modules, addr - 1, frames, SRCLINE_MAX_INLINE);
	return 0;
}

size_t alloctag_site(struct alloctag *t, unsigned long long addr, char *buf, size_t size)
{
	struct srcline_frame frames[SRCLINE_MAX_INLINE];
	const struct ksym *s = ksyms_find(t->ksyms, addr);
	struct alloctag_src src = { .addr = addr, .module = module_of(s) };
	int n = lookup_call(t, s, addr, frames);

	if (s) {
		src.sym = s->name;
		src.off = addr - s->addr;
	}
	if (n > 0) {
		int i = alloctag_pick_inline(frames, n);

		src.file = frames[i].file;
		src.line = frames[i].line;
		src.func = frames[i].func;
	}
	return alloctag_format(&src, buf, size);
}

static const char *name_at(struct alloctag *t, unsigned long long addr)
{
	const struct ksym *s = ksyms_find(t->ksyms, addr);

	return s ? s->name : NULL;
}

int alloctag_first_frame(struct alloctag *t, const unsigned long long *ips, int n)
{
	int i = 0;

	while (i < n && alloctag_is_glue(name_at(t, ips[i])))
		i++;
	return i;
}

int alloctag_call_frame(struct alloctag *t, const unsigned long long *ips, int n)
{
	int i = alloctag_first_frame(t, ips, n);

	while (i < n && alloctag_is_allocator(name_at(t, ips[i])))
		i++;
	return i;
}

bool alloctag_vmalloc_page(struct alloctag *t, const unsigned long long *ips, int n)
{
	int i = alloctag_first_frame(t, ips, n), first = i;
	const char *name;

	while (i < n && (name = name_at(t, ips[i])) && alloctag_is_allocator(name) &&
	       !vmcallers_is_api(name))
		i++;
	return i > first && i < n && (name = name_at(t, ips[i])) && vmcallers_is_api(name);
}

size_t alloctag_frame(struct alloctag *t, unsigned long long addr, char *buf, size_t size)
{
	struct srcline_frame frames[SRCLINE_MAX_INLINE];
	const struct ksym *s = ksyms_find(t->ksyms, addr);
	size_t len = ksyms_format(t->ksyms, addr, buf, size);
	int n = lookup_call(t, s, addr, frames);

	if (n > 0 && len + 1 < size)
		len += clamp(snprintf(buf + len, size - len, " (%s:%u)", frames[0].file,
				      frames[0].line), size - len);
	return len;
}

size_t alloctag_func(struct alloctag *t, unsigned long long addr, char *buf, size_t size)
{
	const struct ksym *s = ksyms_find(t->ksyms, addr);

	if (!s)
		return clamp(snprintf(buf, size, "0x%llx", addr), size);
	if (module_of(s))
		return clamp(snprintf(buf, size, "%s [%s]", s->name, s->module), size);
	return clamp(snprintf(buf, size, "%s", s->name), size);
}

int alloctag_chain(struct alloctag *t, unsigned long long addr, bool site,
		   struct srcline_frame *frames, const char **sym, const char **module)
{
	const struct ksym *s = ksyms_find(t->ksyms, addr);
	int n = lookup_call(t, s, addr, frames), first;

	*sym = s ? s->name : NULL;
	*module = module_of(s);
	if (!site || n <= 0)
		return n > 0 ? n : 0;
	first = alloctag_pick_inline(frames, n);
	memmove(frames, frames + first, (size_t)(n - first) * sizeof(*frames));
	return n - first;
}

unsigned int alloctag_stack_start(const struct ksyms *ks, const void *ips, unsigned int nr)
{
	unsigned int i = 0;

	if (!ks)
		return 0;
	/* bpf_jit_kallsyms off (arm64's default) lists no BPF program. */
	for (; i < nr; i++) {
		unsigned long long ip;
		const struct ksym *sym;

		memcpy(&ip, (const char *)ips + (size_t)i * sizeof(ip), sizeof(ip));
		sym = ksyms_find(ks, ip);
		if (sym && !alloctag_is_glue(sym->name) && !(sym->module && !strcmp(sym->module, "bpf")))
			break;
	}
	return i;
}
