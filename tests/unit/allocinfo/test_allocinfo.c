// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --allocinfo formatting: the /proc/allocinfo line and header as
 * lib/alloc_tag.c prints them, tags with and without DWARF and modules,
 * which frames count as the allocator's own, and build ids in ELF notes.
 */
#include "allocinfo/aitable.h"
#include "names/alloctag.h"
#include "names/vmcallers.h"
#include "unit.h"

#include <stdio.h>
#include <string.h>

void test_allocinfo(struct unit *u);

static void test_line(struct unit *u)
{
	struct unit_case c;
	char buf[256];
	size_t len;

	unit_begin(&c, u, "allocinfo.line");
	/* The kernel's "%12lli %8llu " + tag + " \n". */
	len = allocinfo_format_line(buf, sizeof(buf), 16384, 4, "ipc/msgutil.c:50 func:alloc_msg");
	CHECK_STR(&c, buf, "       16384        4 ipc/msgutil.c:50 func:alloc_msg \n");
	CHECK_U64(&c, len, strlen(buf));
	allocinfo_format_line(buf, sizeof(buf), 0, 0, "load_msg+0x5c func:load_msg");
	CHECK_STR(&c, buf, "           0        0 load_msg+0x5c func:load_msg \n");
	/* Wider numbers widen the columns, as printf does. */
	allocinfo_format_line(buf, sizeof(buf), 1234567890123LL, 123456789, "x func:x");
	CHECK_STR(&c, buf, "1234567890123 123456789 x func:x \n");
	/* Negative totals would be a bug: shown as such, not as 2^64 - n. */
	allocinfo_format_line(buf, sizeof(buf), -4096, -1, "x func:x");
	CHECK_STR(&c, buf, "       -4096       -1 x func:x \n");
	/* Truncation keeps a terminated string. */
	len = allocinfo_format_line(buf, 10, 1, 1, "x func:x");
	CHECK_U64(&c, len, 9);
	CHECK_STR(&c, buf, "         ");
	unit_end(&c);

	unit_begin(&c, u, "allocinfo.header");
	CHECK_STR(&c, allocinfo_header, "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n");
	unit_end(&c);
}

static void test_tags(struct unit *u)
{
	struct unit_case c;
	char buf[256];
	struct alloctag_src src;

	unit_begin(&c, u, "allocinfo.tag_dwarf");
	src = (struct alloctag_src){ .file = "mm/slub.c", .line = 2259, .func = "alloc_slab_page",
				     .sym = "allocate_slab", .off = 0x3c };
	alloctag_format(&src, buf, sizeof(buf));
	CHECK_STR(&c, buf, "mm/slub.c:2259 func:alloc_slab_page");
	src.module = "ctagmod";
	src.file = "drivers/staging/ctagmod/ctagmod.c";
	src.line = 20;
	src.func = "ctagmod_start";
	alloctag_format(&src, buf, sizeof(buf));
	CHECK_STR(&c, buf, "drivers/staging/ctagmod/ctagmod.c:20 [ctagmod] func:ctagmod_start");
	/* DWARF without a function name: the symbol's. */
	src = (struct alloctag_src){ .file = "a.c", .line = 1, .sym = "f", .off = 4 };
	alloctag_format(&src, buf, sizeof(buf));
	CHECK_STR(&c, buf, "a.c:1 func:f");
	unit_end(&c);

	unit_begin(&c, u, "allocinfo.tag_symbol");
	src = (struct alloctag_src){ .sym = "load_msg", .off = 0x5c };
	alloctag_format(&src, buf, sizeof(buf));
	CHECK_STR(&c, buf, "load_msg+0x5c func:load_msg");
	src.module = "xfs";
	src.sym = "xfs_buf_alloc";
	src.off = 0x1a0;
	alloctag_format(&src, buf, sizeof(buf));
	CHECK_STR(&c, buf, "xfs_buf_alloc+0x1a0 [xfs] func:xfs_buf_alloc");
	src = (struct alloctag_src){ .addr = 0xffffffffc0001234ULL };
	alloctag_format(&src, buf, sizeof(buf));
	CHECK_STR(&c, buf, "0xffffffffc0001234 func:unknown");
	unit_end(&c);
}

static void test_names(struct unit *u)
{
	static const char *const allocators[] = {
		"kmalloc", "__kmalloc_cache_noprof", "kmem_cache_alloc_noprof", "kzalloc_noprof",
		"__alloc_pages", "__alloc_frozen_pages_noprof", "alloc_pages_mpol",
		"vma_alloc_folio_noprof", "folio_alloc", "get_page_from_freelist",
		"__kmalloc_node_track_caller_noprof", "kvmalloc_node_noprof.constprop.0",
		"a_noprof_b_noprof", "kfree_noprof",
	};
	static const char *const callers[] = {
		"load_msg", "alloc_slab_page", "pipe_write", "anon_pipe_write", "do_anonymous_page",
		"pte_alloc_one", "alloc_empty_file", "noprofile", "getname_flags.part.0",
		"trace_array_create", "x_noprofile", "y_noprof_z",
	};
	static const char *const glue[] = {
		"bpf_prog_2902cabeaa91e9d5_tp_kmalloc", "bpf_trace_run4", "__bpf_trace_kmalloc",
		"__traceiter_kmalloc", "trace_kmalloc", "trace_kmem_cache_alloc", "trace_mm_page_alloc",
	};
	struct unit_case c;

	unit_begin(&c, u, "allocinfo.allocator_names");
	for (size_t i = 0; i < sizeof(allocators) / sizeof(*allocators); i++)
		if (!alloctag_is_allocator(allocators[i]))
			unit_fail(&c, __FILE__, __LINE__, "%s is an allocator", allocators[i]);
	for (size_t i = 0; i < sizeof(callers) / sizeof(*callers); i++)
		if (alloctag_is_allocator(callers[i]) || alloctag_is_glue(callers[i]))
			unit_fail(&c, __FILE__, __LINE__, "%s is a caller", callers[i]);
	for (size_t i = 0; i < sizeof(glue) / sizeof(*glue); i++)
		if (!alloctag_is_glue(glue[i]))
			unit_fail(&c, __FILE__, __LINE__, "%s is tracing machinery", glue[i]);
	CHECK(&c, !alloctag_is_allocator(NULL) && !alloctag_is_glue(NULL));
	unit_end(&c);

	unit_begin(&c, u, "allocinfo.vmalloc_api_names");
	CHECK(&c, vmcallers_is_api("vmalloc") && vmcallers_is_api("__vmalloc_node_range_noprof"));
	CHECK(&c, vmcallers_is_api("vfree.part.0") && vmcallers_is_api("kvmalloc_node_noprof.cold"));
	CHECK(&c, vmcallers_is_api("free_vmap_area_noflush") && vmcallers_is_api("vfree_atomic"));
	CHECK(&c, !vmcallers_is_api("vmalloc_to_page") && !vmcallers_is_api("vmallo"));
	CHECK(&c, !vmcallers_is_api("vmap") && !vmcallers_is_api("_noprof"));
	CHECK(&c, !vmcallers_is_api("vfree_noprofx") && !vmcallers_is_api(""));
	unit_end(&c);

	unit_begin(&c, u, "allocinfo.pick_inline");
	{
		/* kmalloc() inlined into kzalloc() inlined into alloc_msg(). */
		struct srcline_frame chain[] = {
			{ "include/linux/slab.h", 905, "kmalloc_noprof" },
			{ "include/linux/slab.h", 1039, "kzalloc_noprof" },
			{ "ipc/msgutil.c", 50, "alloc_msg" },
			{ "ipc/msgutil.c", 90, "load_msg" },
		};
		struct srcline_frame wrappers[] = {
			{ "include/linux/slab.h", 905, "kmalloc_noprof" },
			{ "mm/slub.c", 4000, "__kmalloc_cache_noprof" },
		};

		CHECK_U64(&c, alloctag_pick_inline(chain, 4), 2);
		CHECK_U64(&c, alloctag_pick_inline(chain + 2, 2), 0);
		CHECK_U64(&c, alloctag_pick_inline(wrappers, 2), 1);
	}
	unit_end(&c);
}

static void put32(unsigned char *p, unsigned int v)
{
	memcpy(p, &v, 4);
}

static void test_notes(struct unit *u)
{
	/* A Xen note, then the GNU build id, laid out as /sys/kernel/notes. */
	unsigned char notes[64] = {};
	const unsigned char *id = NULL;
	size_t len;
	struct unit_case c;

	put32(notes, 4);  /* namesz */
	put32(notes + 4, 4); /* descsz */
	put32(notes + 8, 6); /* type */
	memcpy(notes + 12, "Xen", 4);
	put32(notes + 16, 0xdeadbeef);
	put32(notes + 20, 4);
	put32(notes + 24, 20);
	put32(notes + 28, 3); /* NT_GNU_BUILD_ID */
	memcpy(notes + 32, "GNU", 4);
	for (int i = 0; i < 20; i++)
		notes[36 + i] = (unsigned char)(0xa0 + i);

	unit_begin(&c, u, "allocinfo.build_id_notes");
	len = alloctag_notes_build_id(notes, 56, &id);
	CHECK_U64(&c, len, 20);
	CHECK(&c, id == notes + 36);
	/* Cut short: no id rather than a read past the end. */
	CHECK_U64(&c, alloctag_notes_build_id(notes, 50, &id), 0);
	CHECK_U64(&c, alloctag_notes_build_id(notes, 24, &id), 0);
	unit_end(&c);
}

void test_allocinfo(struct unit *u)
{
	test_line(u);
	test_tags(u);
	test_names(u);
	test_notes(u);
}
