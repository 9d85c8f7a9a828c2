// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gfp_format() against what kernels print.  Where the expected strings
 * come from:
 *  - pairs_618: tracefs on kernel 6.18.44 (this project's CI machine),
 *    kmem:kmalloc, kmem_cache_alloc and mm_page_alloc; each gfp_flags=
 *    string paired with the raw value the same trace shows with
 *    options/fields set;
 *  - pairs_612 and pairs_61: the kernel's own __print_flags table, taken
 *    from the kmem:kmalloc print fmt inside Debian's 6.12.107 and 6.1.176
 *    cloud images and walked the way the kernel walks it.  (5.10.223 gives
 *    the same except 0x800000, which has no name there; that bit is only
 *    ever set on 5.10 kernels built with lockdep.)
 */
#include "names/gfp.h"
#include "unit.h"

#include <bpf/btf.h>
#include <linux/btf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void test_gfp(struct unit *u);

struct gfp_pair {
	unsigned int flags;
	const char *text;
};

static const struct gfp_pair pairs_618[] = {
	{ 0x820, "GFP_ATOMIC" },
	{ 0xc40, "GFP_NOFS" },
	{ 0xcc0, "GFP_KERNEL" },
	{ 0xd40, "GFP_NOFS|__GFP_ZERO" },
	{ 0xdc0, "GFP_KERNEL|__GFP_ZERO" },
	{ 0x2800, "GFP_NOWAIT" },
	{ 0x2820, "GFP_ATOMIC|__GFP_NOWARN" },
	{ 0x28c0, "GFP_NOWAIT|__GFP_IO|__GFP_FS" },
	{ 0x2900, "GFP_NOWAIT|__GFP_ZERO" },
	{ 0x29c0, "GFP_NOWAIT|__GFP_IO|__GFP_FS|__GFP_ZERO" },
	{ 0x2cc0, "GFP_KERNEL|__GFP_NOWARN" },
	{ 0x2cc2, "GFP_KERNEL|__GFP_HIGHMEM|__GFP_NOWARN" },
	{ 0x2dc0, "GFP_KERNEL|__GFP_ZERO|__GFP_NOWARN" },
	{ 0x2dc2, "GFP_KERNEL|__GFP_HIGHMEM|__GFP_ZERO|__GFP_NOWARN" },
	{ 0x4dc0, "GFP_KERNEL|__GFP_ZERO|__GFP_RETRY_MAYFAIL" },
	{ 0x6dc0, "GFP_KERNEL|__GFP_ZERO|__GFP_NOWARN|__GFP_RETRY_MAYFAIL" },
	{ 0x8d40, "GFP_NOFS|__GFP_ZERO|__GFP_NOFAIL" },
	{ 0x40c40, "GFP_NOFS|__GFP_COMP" },
	{ 0x40dc0, "GFP_KERNEL|__GFP_ZERO|__GFP_COMP" },
	{ 0x428c0, "GFP_NOWAIT|__GFP_IO|__GFP_FS|__GFP_COMP" },
	{ 0x42900, "GFP_NOWAIT|__GFP_ZERO|__GFP_COMP" },
	{ 0x44dc0, "GFP_KERNEL|__GFP_ZERO|__GFP_RETRY_MAYFAIL|__GFP_COMP" },
	{ 0x52800, "GFP_NOWAIT|__GFP_NORETRY|__GFP_COMP" },
	{ 0x52c40, "GFP_NOFS|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP" },
	{ 0x52cc0, "GFP_KERNEL|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP" },
	{ 0x52cd0, "GFP_KERNEL|__GFP_RECLAIMABLE|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP" },
	{ 0x82cc0, "GFP_KERNEL|__GFP_NOWARN|__GFP_NOMEMALLOC" },
	{ 0x92800, "GFP_NOWAIT|__GFP_NORETRY|__GFP_NOMEMALLOC" },
	{ 0x92820, "GFP_ATOMIC|__GFP_NOWARN|__GFP_NORETRY|__GFP_NOMEMALLOC" },
	{ 0x92880, "GFP_NOWAIT|__GFP_FS|__GFP_NORETRY|__GFP_NOMEMALLOC" },
	{ 0xd20c0,
	  "__GFP_IO|__GFP_FS|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_NOMEMALLOC" },
	{ 0xd20d0,
	  "__GFP_RECLAIMABLE|__GFP_IO|__GFP_FS|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_NOMEMALLOC" },
	{ 0xd2800, "GFP_NOWAIT|__GFP_NORETRY|__GFP_COMP|__GFP_NOMEMALLOC" },
	{ 0x100cc0, "GFP_USER" },
	{ 0x100dc0, "GFP_USER|__GFP_ZERO" },
	{ 0x1028c0, "GFP_NOWAIT|__GFP_IO|__GFP_FS|__GFP_HARDWALL" },
	{ 0x102cc0, "GFP_USER|__GFP_NOWARN" },
	{ 0x140cca, "GFP_HIGHUSER_MOVABLE|__GFP_COMP" },
	{ 0x140dca, "GFP_HIGHUSER_MOVABLE|__GFP_ZERO|__GFP_COMP" },
	{ 0x141cca, "GFP_HIGHUSER_MOVABLE|__GFP_WRITE|__GFP_COMP" },
	{ 0x1428c0, "GFP_NOWAIT|__GFP_IO|__GFP_FS|__GFP_COMP|__GFP_HARDWALL" },
	{ 0x148c40, "GFP_NOFS|__GFP_NOFAIL|__GFP_COMP|__GFP_HARDWALL" },
	{ 0x152c4a,
	  "GFP_NOFS|__GFP_HIGHMEM|__GFP_MOVABLE|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_HARDWALL" },
	{ 0x153cca,
	  "GFP_HIGHUSER_MOVABLE|__GFP_WRITE|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP" },
	{ 0x252800, "GFP_NOWAIT|__GFP_NORETRY|__GFP_COMP|__GFP_THISNODE" },
	{ 0x400cc0, "GFP_KERNEL_ACCOUNT" },
	{ 0x400dc0, "GFP_KERNEL_ACCOUNT|__GFP_ZERO" },
	{ 0x402800, "GFP_NOWAIT|__GFP_ACCOUNT" },
	{ 0x4029c0, "GFP_NOWAIT|__GFP_IO|__GFP_FS|__GFP_ZERO|__GFP_ACCOUNT" },
	{ 0x402dc0, "GFP_KERNEL_ACCOUNT|__GFP_ZERO|__GFP_NOWARN" },
	{ 0x406dc0, "GFP_KERNEL_ACCOUNT|__GFP_ZERO|__GFP_NOWARN|__GFP_RETRY_MAYFAIL" },
	{ 0x406dc2,
	  "GFP_KERNEL_ACCOUNT|__GFP_HIGHMEM|__GFP_ZERO|__GFP_NOWARN|__GFP_RETRY_MAYFAIL" },
	{ 0x408d40, "GFP_NOFS|__GFP_ZERO|__GFP_NOFAIL|__GFP_ACCOUNT" },
	{ 0x440dc0, "GFP_KERNEL_ACCOUNT|__GFP_ZERO|__GFP_COMP" },
	{ 0x4429c0, "GFP_NOWAIT|__GFP_IO|__GFP_FS|__GFP_ZERO|__GFP_COMP|__GFP_ACCOUNT" },
	{ 0x500cc2, "GFP_HIGHUSER|__GFP_ACCOUNT" },
	{ 0x500dc0, "GFP_USER|__GFP_ZERO|__GFP_ACCOUNT" },
	{ 0x502dc2, "GFP_HIGHUSER|__GFP_ZERO|__GFP_NOWARN|__GFP_ACCOUNT" },
	{ 0x508d40, "GFP_NOFS|__GFP_ZERO|__GFP_NOFAIL|__GFP_HARDWALL|__GFP_ACCOUNT" },
	{ 0x512dc0, "GFP_USER|__GFP_ZERO|__GFP_NOWARN|__GFP_NORETRY|__GFP_ACCOUNT" },
};

static const struct gfp_pair pairs_612[] = {
	{ 0x820, "GFP_ATOMIC" },
	{ 0x800, "__GFP_KSWAPD_RECLAIM" },
	{ 0x2800, "GFP_NOWAIT" },
	{ 0x2820, "GFP_ATOMIC|__GFP_NOWARN" },
	{ 0x40dc0, "GFP_KERNEL|__GFP_COMP|__GFP_ZERO" },
	{ 0x52cd0, "GFP_KERNEL|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_RECLAIMABLE" },
	{ 0x3000, "__GFP_NOWARN|__GFP_WRITE" },
	{ 0x40800, "__GFP_COMP|__GFP_KSWAPD_RECLAIM" },
	{ 0x1000cc0, "GFP_KERNEL|0x1000000" },
	{ 0x2a20, "GFP_ATOMIC|__GFP_NOWARN|0x200" },
	{ 0xcc1, "GFP_KERNEL|GFP_DMA" },
	{ 0x1c24ca, "GFP_TRANSHUGE" },
	{ 0x1c20ca, "GFP_TRANSHUGE_LIGHT" },
	{ 0x100dca, "GFP_HIGHUSER_MOVABLE|__GFP_ZERO" },
	{ 0x153cca,
	  "GFP_HIGHUSER_MOVABLE|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_WRITE" },
	{ 0xffffffff,
	  "GFP_TRANSHUGE|GFP_ATOMIC|GFP_DMA|GFP_DMA32|__GFP_RETRY_MAYFAIL|__GFP_NOFAIL|__GFP_NORETRY|__GFP_ZERO|__GFP_MEMALLOC|__GFP_THISNODE|__GFP_RECLAIMABLE|__GFP_ACCOUNT|__GFP_WRITE|__GFP_ZEROTAGS|0xff000200" },
};

static const struct gfp_pair pairs_61[] = {
	{ 0x820, "GFP_NOWAIT|__GFP_HIGH" },
	{ 0xa20, "GFP_ATOMIC" },
	{ 0x800, "GFP_NOWAIT" },
	{ 0x2800, "GFP_NOWAIT|__GFP_NOWARN" },
	{ 0x2820, "GFP_NOWAIT|__GFP_HIGH|__GFP_NOWARN" },
	{ 0x40dc0, "GFP_KERNEL|__GFP_COMP|__GFP_ZERO" },
	{ 0x52cd0, "GFP_KERNEL|__GFP_NOWARN|__GFP_NORETRY|__GFP_COMP|__GFP_RECLAIMABLE" },
	{ 0x2a20, "GFP_ATOMIC|__GFP_NOWARN" },
	{ 0x200, "__GFP_ATOMIC" },
	{ 0x1c20ca, "GFP_TRANSHUGE_LIGHT" },
	{ 0x1c24ca, "GFP_TRANSHUGE" },
	{ 0x100cca, "GFP_HIGHUSER_MOVABLE" },
	{ 0x3000, "__GFP_NOWARN|__GFP_WRITE" },
	{ 0x800cc0, "GFP_KERNEL|__GFP_ZEROTAGS" },
	{ 0xffffffff,
	  "GFP_TRANSHUGE|GFP_ATOMIC|GFP_DMA|GFP_DMA32|__GFP_RETRY_MAYFAIL|__GFP_NOFAIL|__GFP_NORETRY|__GFP_ZERO|__GFP_MEMALLOC|__GFP_THISNODE|__GFP_RECLAIMABLE|__GFP_ACCOUNT|__GFP_WRITE|__GFP_ZEROTAGS|0xff000000" },
};

#define NPAIRS(a) (sizeof(a) / sizeof((a)[0]))

/* The ___GFP_*_BIT enum of 6.10+ kernels without KASAN_HW_TAGS or lockdep. */
static const char *const enum_plain[] = {
	"DMA", "HIGHMEM", "DMA32", "MOVABLE", "RECLAIMABLE", "HIGH", "IO",
	"FS", "ZERO", "UNUSED", "DIRECT_RECLAIM", "KSWAPD_RECLAIM", "WRITE",
	"NOWARN", "RETRY_MAYFAIL", "NOFAIL", "NORETRY", "MEMALLOC", "COMP",
	"NOMEMALLOC", "HARDWALL", "THISNODE", "ACCOUNT", "ZEROTAGS",
	"NO_OBJ_EXT", "LAST",
};

/* The same with CONFIG_KASAN_HW_TAGS and CONFIG_LOCKDEP (arm64 debug). */
static const char *const enum_kasan[] = {
	"DMA", "HIGHMEM", "DMA32", "MOVABLE", "RECLAIMABLE", "HIGH", "IO",
	"FS", "ZERO", "UNUSED", "DIRECT_RECLAIM", "KSWAPD_RECLAIM", "WRITE",
	"NOWARN", "RETRY_MAYFAIL", "NOFAIL", "NORETRY", "MEMALLOC", "COMP",
	"NOMEMALLOC", "HARDWALL", "THISNODE", "ACCOUNT", "ZEROTAGS",
	"SKIP_ZERO", "SKIP_KASAN", "NOLOCKDEP", "NO_OBJ_EXT", "LAST",
};

/* Decoys a real vmlinux has: other enums, and types before the one we want. */
static bool add_decoys(struct btf *btf)
{
	int id = btf__add_enum(btf, "zone_type", 4);

	return id > 0 && btf__add_enum_value(btf, "ZONE_DMA", 0) == 0 &&
	       btf__add_enum_value(btf, "ZONE_NORMAL", 1) == 0 &&
	       btf__add_int(btf, "int", 4, BTF_INT_SIGNED) > 0;
}

static bool add_gfp_enum(struct btf *btf, const char *const *names, size_t n)
{
	char name[64];

	if (btf__add_enum(btf, NULL, 4) <= 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "___GFP_%s_BIT", names[i]);
		if (btf__add_enum_value(btf, name, (__s64)i))
			return false;
	}
	return true;
}

/* What 6.15+ has and older kernels do not: the kfunc bpf_res_spin_lock. */
static bool add_func(struct btf *btf, const char *name)
{
	int proto = btf__add_func_proto(btf, 0);

	return proto > 0 && btf__add_func(btf, name, BTF_FUNC_GLOBAL, proto) > 0;
}

static bool add_struct(struct btf *btf, const char *name, const char *member)
{
	int int_id = btf__find_by_name_kind(btf, "int", BTF_KIND_INT);

	if (int_id <= 0 || btf__add_struct(btf, name, 4) <= 0)
		return false;
	return btf__add_field(btf, member, int_id, 0, 0) == 0;
}

enum fake_kernel {
	FAKE_NONE,  /* no markers at all: 6.2 and older */
	FAKE_6_3,   /* vm_area_struct.__vm_flags */
	FAKE_6_8,   /* ... and struct statmount */
	FAKE_6_12,  /* ... and the gfp enum */
	FAKE_6_18,  /* ... and bpf_res_spin_lock */
	FAKE_KASAN, /* 6.18 with KASAN_HW_TAGS and lockdep bits */
	FAKE_KASAN_OLD, /* the same, before 6.15 */
};

static struct btf *fake_btf(enum fake_kernel k)
{
	struct btf *btf = btf__new_empty();
	bool ok = btf && add_decoys(btf);

	if (ok && k != FAKE_NONE)
		ok = add_struct(btf, "vm_area_struct", "__vm_flags");
	if (ok && k != FAKE_NONE && k != FAKE_6_3)
		ok = add_struct(btf, "statmount", "size");
	if (ok && (k == FAKE_6_12 || k == FAKE_6_18))
		ok = add_gfp_enum(btf, enum_plain, NPAIRS(enum_plain));
	if (ok && (k == FAKE_KASAN || k == FAKE_KASAN_OLD))
		ok = add_gfp_enum(btf, enum_kasan, NPAIRS(enum_kasan));
	if (ok && (k == FAKE_6_18 || k == FAKE_KASAN))
		ok = add_func(btf, "bpf_res_spin_lock");
	if (!ok) {
		btf__free(btf);
		return NULL;
	}
	return btf;
}

static void check_pairs(struct unit_case *c, const struct gfp_names *names,
			const struct gfp_pair *pairs, size_t n)
{
	char buf[512];

	for (size_t i = 0; i < n && !c->failed; i++) {
		size_t len = gfp_format(names, pairs[i].flags, buf, sizeof(buf));

		if (strcmp(buf, pairs[i].text) != 0)
			unit_fail(c, __FILE__, __LINE__, "%#x: got \"%s\", want \"%s\"",
				  pairs[i].flags, buf, pairs[i].text);
		CHECK_U64(c, len, strlen(pairs[i].text));
	}
}

/* One case: names for a fake kernel checked against a pair table. */
static void run_pairs(struct unit *u, const char *name, enum fake_kernel k,
		      bool use_btf, const struct gfp_pair *pairs, size_t n)
{
	struct btf *btf = use_btf ? fake_btf(k) : NULL;
	struct gfp_names *names;
	struct unit_case c;

	unit_begin(&c, u, name);
	names = (!use_btf || btf) ? gfp_names_new(btf) : NULL;
	CHECK(&c, !use_btf || btf);
	CHECK(&c, names != NULL);
	if (names)
		check_pairs(&c, names, pairs, n);
	gfp_names_free(names);
	btf__free(btf);
	unit_end(&c);
}

/* Not verified on a running kernel: derived from the 6.3 and 6.8 sources. */
static const struct gfp_pair pairs_63[] = {
	{ 0x820, "GFP_ATOMIC" },
	{ 0x800, "GFP_NOWAIT" },
	{ 0x2800, "GFP_NOWAIT|__GFP_NOWARN" },
	{ 0x200, "0x200" },
	{ 0x40dc0, "GFP_KERNEL|__GFP_COMP|__GFP_ZERO" },
};

static const struct gfp_pair pairs_68[] = {
	{ 0x820, "GFP_ATOMIC" },
	{ 0x800, "__GFP_KSWAPD_RECLAIM" },
	{ 0x2800, "GFP_NOWAIT" },
	{ 0x2a20, "GFP_ATOMIC|__GFP_NOWARN|0x200" },
};

/* Bits 24.. are SKIP_ZERO, SKIP_KASAN, NOLOCKDEP, NO_OBJ_EXT here. */
static const struct gfp_pair pairs_kasan[] = {
	{ 0x2100cca, "GFP_HIGHUSER_MOVABLE" },
	{ 0x100cca, "GFP_HIGHUSER|__GFP_MOVABLE" },
	{ 0x1000cc0, "GFP_KERNEL|__GFP_SKIP_ZERO" },
	{ 0x4000cc0, "GFP_KERNEL|__GFP_NOLOCKDEP" },
	{ 0x8000dc0, "GFP_KERNEL|__GFP_ZERO|__GFP_NO_OBJ_EXT" },
	{ 0x10000000, "0x10000000" },
};

/* Before 6.15 the KASAN bits had names, lockdep and obj_ext ones not. */
static const struct gfp_pair pairs_kasan_old[] = {
	{ 0x2100cca, "GFP_HIGHUSER_MOVABLE" },
	{ 0x1000cc0, "GFP_KERNEL|__GFP_SKIP_ZERO" },
	{ 0x4000cc0, "GFP_KERNEL|0x4000000" },
	{ 0x8000dc0, "GFP_KERNEL|__GFP_ZERO|0x8000000" },
};

static void test_none(struct unit *u)
{
	struct gfp_names *names = gfp_names_new(NULL);
	struct unit_case c;
	char buf[64];

	unit_begin(&c, u, "gfp_zero_is_none");
	CHECK(&c, names != NULL);
	CHECK_U64(&c, gfp_format(names, 0, buf, sizeof(buf)), 4);
	CHECK_STR(&c, buf, "none");
	gfp_names_free(names);
	unit_end(&c);
}

static void test_unknown_bits(struct unit *u)
{
	struct btf *btf = fake_btf(FAKE_6_18);
	struct gfp_names *names = btf ? gfp_names_new(btf) : NULL;
	struct unit_case c;
	char buf[128];

	unit_begin(&c, u, "gfp_unknown_bits_as_hex");
	CHECK(&c, names != NULL);
	if (names) {
		gfp_format(names, 0x80000000u, buf, sizeof(buf));
		CHECK_STR(&c, buf, "0x80000000");
		gfp_format(names, 0x200, buf, sizeof(buf)); /* ___GFP_UNUSED_BIT */
		CHECK_STR(&c, buf, "0x200");
		gfp_format(names, 0xcc0 | 0x6000000u, buf, sizeof(buf));
		CHECK_STR(&c, buf, "GFP_KERNEL|0x6000000");
	}
	gfp_names_free(names);
	btf__free(btf);
	unit_end(&c);
}

static void test_truncation(struct unit *u)
{
	struct gfp_names *names = gfp_names_new(NULL);
	const char *full = "GFP_KERNEL|__GFP_ZERO";
	struct unit_case c;
	char buf[64];

	unit_begin(&c, u, "gfp_truncation");
	CHECK(&c, names != NULL);
	memset(buf, 'x', sizeof(buf));
	CHECK_U64(&c, gfp_format(names, 0xdc0, buf, 0), 0);
	CHECK(&c, buf[0] == 'x');
	CHECK_U64(&c, gfp_format(names, 0xdc0, buf, 1), 0);
	CHECK_STR(&c, buf, "");
	CHECK_U64(&c, gfp_format(names, 0xdc0, buf, 5), 4);
	CHECK_STR(&c, buf, "GFP_");
	CHECK_U64(&c, gfp_format(names, 0xdc0, buf, strlen(full)), strlen(full) - 1);
	CHECK_STR(&c, buf, "GFP_KERNEL|__GFP_ZER");
	CHECK_U64(&c, gfp_format(names, 0xdc0, buf, strlen(full) + 1), strlen(full));
	CHECK_STR(&c, buf, full);
	CHECK_U64(&c, gfp_format(names, 0xcc0 | 0x80000000u, buf, 14), 13);
	CHECK_STR(&c, buf, "GFP_KERNEL|0x");
	CHECK_U64(&c, gfp_format(names, 0, buf, 3), 2);
	CHECK_STR(&c, buf, "no");
	gfp_names_free(names);
	unit_end(&c);
}

/* Whatever kernel runs the tests: values every kernel prints alike. */
static void test_live_btf(struct unit *u)
{
	static const struct gfp_pair stable[] = {
		{ 0xcc0, "GFP_KERNEL" },
		{ 0xdc0, "GFP_KERNEL|__GFP_ZERO" },
		{ 0x400cc0, "GFP_KERNEL_ACCOUNT" },
		{ 0x140cca, "GFP_HIGHUSER_MOVABLE|__GFP_COMP" },
	};
	struct btf *btf = btf__load_vmlinux_btf();
	struct gfp_names *names;
	struct unit_case c;

	if (!btf) {
		unit_skip(u, "gfp_live_vmlinux_btf", "no readable vmlinux BTF");
		return;
	}
	unit_begin(&c, u, "gfp_live_vmlinux_btf");
	names = gfp_names_new(btf);
	CHECK(&c, names != NULL);
	if (names)
		check_pairs(&c, names, stable, NPAIRS(stable));
	gfp_names_free(names);
	btf__free(btf);
	unit_end(&c);
}

/* A 6.18 table written as a recording's gfp file and read back names
 * every flag as the original does. */
static void test_dump_parse(struct unit *u)
{
	struct btf *btf = fake_btf(FAKE_6_18);
	struct gfp_names *names = btf ? gfp_names_new(btf) : NULL, *again = NULL;
	char *text = NULL, err[128], a[256], b[256];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct unit_case c;

	unit_begin(&c, u, "gfp_dump_parse_round_trip");
	CHECK(&c, names && f && !gfp_names_dump(names, f));
	if (f)
		fclose(f);
	if (names && text)
		again = gfp_names_parse(text, len, err, sizeof(err));
	CHECK(&c, again != NULL);
	for (size_t i = 0; again && i < NPAIRS(pairs_618); i++) {
		gfp_format(names, pairs_618[i].flags, a, sizeof(a));
		gfp_format(again, pairs_618[i].flags, b, sizeof(b));
		CHECK_STR(&c, b, a);
	}
	gfp_names_free(again);
	gfp_names_free(names);
	free(text);
	btf__free(btf);
	unit_end(&c);
}

/* Damaged files: one reason each, no table. */
static void test_parse_errors(struct unit *u)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "", "no flags" },
		{ "0xcc0 GFP_KERNEL", "line 1: no newline at the end: truncated" },
		{ "0xcc0 GFP_KERNEL\nGFP_NOIO\n", "line 2: expected 0x<mask> <name>" },
		{ "0x0 NOTHING\n", "line 1: the mask is empty or zero" },
		{ "0x123456789 BIG\n", "line 1: the mask is not a 32-bit hex number" },
		{ "0x400\n", "line 1: no name after the mask" },
		{ "0x400 a-b\n", "line 1: the name has characters other than letters, digits and '_'" },
	};
	struct unit_case c;
	char err[128];

	unit_begin(&c, u, "gfp_parse_errors");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gfp_names *n = gfp_names_parse(bad[i].text, strlen(bad[i].text), err,
						      sizeof(err));

		CHECK(&c, n == NULL);
		gfp_names_free(n);
		if (!n)
			CHECK_STR(&c, err, bad[i].why);
	}
	unit_end(&c);
}

void test_gfp(struct unit *u)
{
	test_none(u);
	run_pairs(u, "gfp_builtin_matches_6_1", FAKE_NONE, false, pairs_61,
		  NPAIRS(pairs_61));
	run_pairs(u, "gfp_btf_without_markers_is_builtin", FAKE_NONE, true,
		  pairs_61, NPAIRS(pairs_61));
	run_pairs(u, "gfp_btf_marker_6_3", FAKE_6_3, true, pairs_63,
		  NPAIRS(pairs_63));
	run_pairs(u, "gfp_btf_marker_6_8", FAKE_6_8, true, pairs_68,
		  NPAIRS(pairs_68));
	run_pairs(u, "gfp_btf_enum_matches_6_12", FAKE_6_12, true, pairs_612,
		  NPAIRS(pairs_612));
	run_pairs(u, "gfp_btf_enum_matches_6_18_tracefs", FAKE_6_18, true,
		  pairs_618, NPAIRS(pairs_618));
	run_pairs(u, "gfp_btf_enum_kasan_lockdep", FAKE_KASAN, true, pairs_kasan,
		  NPAIRS(pairs_kasan));
	run_pairs(u, "gfp_btf_enum_kasan_lockdep_before_6_15", FAKE_KASAN_OLD,
		  true, pairs_kasan_old, NPAIRS(pairs_kasan_old));
	test_unknown_bits(u);
	test_truncation(u);
	test_live_btf(u);
	test_dump_parse(u);
	test_parse_errors(u);
}
