// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * GFP flag decoding, the way the kernel's __print_flags() walks
 * __def_gfpflag_names: for each entry in order, if all its bits are still
 * set, print its name and clear them; stop when nothing is left.
 *
 * What differs between kernels, as found in the kernels' own tables (the
 * print fmt of kmem:kmalloc in Debian's 5.10, 6.1 and 6.12 images, and
 * tracefs on 6.18):
 *  - bit positions: #defines up to 6.9 (the same values since 4.x, plus
 *    __GFP_ZEROTAGS at 0x800000 from 5.14); from 6.10 an anonymous enum of
 *    ___GFP_*_BIT that BTF carries, whose layout depends on the config;
 *  - __GFP_ATOMIC (0x200) exists up to 6.2, and GFP_ATOMIC includes it;
 *  - GFP_NOWAIT gained __GFP_NOWARN in 6.8;
 *  - up to 6.14 the single bits follow a hand-written order; from 6.15
 *    (commit "tracing: gfp: Remove duplication of recording GFP flags") they
 *    follow the enum, after GFP_DMA, GFP_DMA32 and __GFP_RECLAIM, and
 *    __GFP_NO_OBJ_EXT gets a name.
 * Kernels without the enum say nothing about their version, so BTF types
 * that arrived in the same release stand in for it (see scan_btf()).
 */
#include "gfp.h"

#include <bpf/btf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The flags the tables below know by name. */
enum gfp_bit {
	GB_DMA,
	GB_HIGHMEM,
	GB_DMA32,
	GB_MOVABLE,
	GB_RECLAIMABLE,
	GB_HIGH,
	GB_IO,
	GB_FS,
	GB_ZERO,
	GB_ATOMIC,
	GB_DIRECT_RECLAIM,
	GB_KSWAPD_RECLAIM,
	GB_WRITE,
	GB_NOWARN,
	GB_RETRY_MAYFAIL,
	GB_NOFAIL,
	GB_NORETRY,
	GB_MEMALLOC,
	GB_COMP,
	GB_NOMEMALLOC,
	GB_HARDWALL,
	GB_THISNODE,
	GB_ACCOUNT,
	GB_ZEROTAGS,
	GB_SKIP_ZERO,
	GB_SKIP_KASAN,
	GB_SKIP_KASAN_POISON,
	GB_SKIP_KASAN_UNPOISON,
	GB_NOLOCKDEP,
	GB_NO_OBJ_EXT,
	GB_NR,
	GB_RECLAIM = GB_NR, /* pseudo bit: __GFP_RECLAIM in the old list */
};

/* The X of ___GFP_X_BIT and __GFP_X. */
static const char *const gfp_bit_name[GB_NR] = {
	[GB_DMA] = "DMA",
	[GB_HIGHMEM] = "HIGHMEM",
	[GB_DMA32] = "DMA32",
	[GB_MOVABLE] = "MOVABLE",
	[GB_RECLAIMABLE] = "RECLAIMABLE",
	[GB_HIGH] = "HIGH",
	[GB_IO] = "IO",
	[GB_FS] = "FS",
	[GB_ZERO] = "ZERO",
	[GB_ATOMIC] = "ATOMIC",
	[GB_DIRECT_RECLAIM] = "DIRECT_RECLAIM",
	[GB_KSWAPD_RECLAIM] = "KSWAPD_RECLAIM",
	[GB_WRITE] = "WRITE",
	[GB_NOWARN] = "NOWARN",
	[GB_RETRY_MAYFAIL] = "RETRY_MAYFAIL",
	[GB_NOFAIL] = "NOFAIL",
	[GB_NORETRY] = "NORETRY",
	[GB_MEMALLOC] = "MEMALLOC",
	[GB_COMP] = "COMP",
	[GB_NOMEMALLOC] = "NOMEMALLOC",
	[GB_HARDWALL] = "HARDWALL",
	[GB_THISNODE] = "THISNODE",
	[GB_ACCOUNT] = "ACCOUNT",
	[GB_ZEROTAGS] = "ZEROTAGS",
	[GB_SKIP_ZERO] = "SKIP_ZERO",
	[GB_SKIP_KASAN] = "SKIP_KASAN",
	[GB_SKIP_KASAN_POISON] = "SKIP_KASAN_POISON",
	[GB_SKIP_KASAN_UNPOISON] = "SKIP_KASAN_UNPOISON",
	[GB_NOLOCKDEP] = "NOLOCKDEP",
	[GB_NO_OBJ_EXT] = "NO_OBJ_EXT",
};

/*
 * The #define values of 5.10 .. 6.9.  The KASAN_HW_TAGS bits (arm64 only)
 * and __GFP_NOLOCKDEP are left out: they are 0 on the kernels this table
 * is for, which is also why the kernel lists no names for them.
 */
static const unsigned int legacy_bits[GB_NR] = {
	[GB_DMA] = 0x1,
	[GB_HIGHMEM] = 0x2,
	[GB_DMA32] = 0x4,
	[GB_MOVABLE] = 0x8,
	[GB_RECLAIMABLE] = 0x10,
	[GB_HIGH] = 0x20,
	[GB_IO] = 0x40,
	[GB_FS] = 0x80,
	[GB_ZERO] = 0x100,
	[GB_ATOMIC] = 0x200,
	[GB_DIRECT_RECLAIM] = 0x400,
	[GB_KSWAPD_RECLAIM] = 0x800,
	[GB_WRITE] = 0x1000,
	[GB_NOWARN] = 0x2000,
	[GB_RETRY_MAYFAIL] = 0x4000,
	[GB_NOFAIL] = 0x8000,
	[GB_NORETRY] = 0x10000,
	[GB_MEMALLOC] = 0x20000,
	[GB_COMP] = 0x40000,
	[GB_NOMEMALLOC] = 0x80000,
	[GB_HARDWALL] = 0x100000,
	[GB_THISNODE] = 0x200000,
	[GB_ACCOUNT] = 0x400000,
	[GB_ZEROTAGS] = 0x800000,
};

/* The single-bit part of __def_gfpflag_names up to 6.14, in its order. */
static const struct {
	unsigned char bit;
	const char *name;
} old_order[] = {
	{ GB_DMA, "GFP_DMA" },
	{ GB_HIGHMEM, "__GFP_HIGHMEM" },
	{ GB_DMA32, "GFP_DMA32" },
	{ GB_HIGH, "__GFP_HIGH" },
	{ GB_ATOMIC, "__GFP_ATOMIC" },
	{ GB_IO, "__GFP_IO" },
	{ GB_FS, "__GFP_FS" },
	{ GB_NOWARN, "__GFP_NOWARN" },
	{ GB_RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL" },
	{ GB_NOFAIL, "__GFP_NOFAIL" },
	{ GB_NORETRY, "__GFP_NORETRY" },
	{ GB_COMP, "__GFP_COMP" },
	{ GB_ZERO, "__GFP_ZERO" },
	{ GB_NOMEMALLOC, "__GFP_NOMEMALLOC" },
	{ GB_MEMALLOC, "__GFP_MEMALLOC" },
	{ GB_HARDWALL, "__GFP_HARDWALL" },
	{ GB_THISNODE, "__GFP_THISNODE" },
	{ GB_RECLAIMABLE, "__GFP_RECLAIMABLE" },
	{ GB_MOVABLE, "__GFP_MOVABLE" },
	{ GB_ACCOUNT, "__GFP_ACCOUNT" },
	{ GB_WRITE, "__GFP_WRITE" },
	{ GB_RECLAIM, "__GFP_RECLAIM" },
	{ GB_DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM" },
	{ GB_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM" },
	{ GB_ZEROTAGS, "__GFP_ZEROTAGS" },
	/* __def_gfpflag_names_kasan: 6.0 .. 6.3, then 6.4 .. 6.14 */
	{ GB_SKIP_ZERO, "__GFP_SKIP_ZERO" },
	{ GB_SKIP_KASAN_POISON, "__GFP_SKIP_KASAN_POISON" },
	{ GB_SKIP_KASAN_UNPOISON, "__GFP_SKIP_KASAN_UNPOISON" },
	{ GB_SKIP_KASAN, "__GFP_SKIP_KASAN" },
};

#define GFP_NBITS 32 /* gfp_t is an unsigned int */
#define GFP_MAX_ENTRIES 96
#define GFP_NAME_MAX 48
#define GFP_ARENA_SIZE (GFP_MAX_ENTRIES * 32)

/* What one kernel's table is made from. */
struct gfp_layout {
	unsigned int bit[GB_NR]; /* this kernel's mask per flag, 0 if absent */
	/* enum kernels: the X of each ___GFP_X_BIT by position, for new_order */
	const char *pos_name[GFP_NBITS];
	size_t pos_len[GFP_NBITS];
	bool new_order;     /* 6.15+: single bits in enum order */
	bool nowait_nowarn; /* 6.8+: GFP_NOWAIT includes __GFP_NOWARN */
};

/* What the BTF tells about the kernel, gathered in one pass. */
struct btf_facts {
	const struct btf_type *gfp_enum;
	bool has_res_spin_lock; /* kfunc new in 6.15 */
	bool has_statmount;     /* statmount(2), new in 6.8 */
	bool has_vm_flags_priv; /* vm_area_struct.__vm_flags, new in 6.3 */
};

struct gfp_entry {
	unsigned int mask;
	unsigned int len;
	const char *name; /* in arena */
};

struct gfp_names {
	size_t count;
	struct gfp_entry entry[GFP_MAX_ENTRIES];
	size_t arena_used;
	char arena[GFP_ARENA_SIZE];
};

/*
 * Appends an entry.  Zero masks are dropped: the kernel only lists names
 * whose macros are non-zero on it, and a zero mask would always "match".
 */
static void add_entry(struct gfp_names *n, unsigned int mask, const char *prefix,
		      const char *name, size_t name_len)
{
	size_t plen = strlen(prefix);
	size_t len = plen + name_len;
	char *dst;

	if (!mask || n->count >= GFP_MAX_ENTRIES || len >= GFP_NAME_MAX)
		return;
	if (n->arena_used + len + 1 > sizeof(n->arena))
		return;
	dst = n->arena + n->arena_used;
	memcpy(dst, prefix, plen);
	memcpy(dst + plen, name, name_len);
	dst[len] = '\0';
	n->arena_used += len + 1;
	n->entry[n->count++] = (struct gfp_entry){ mask, (unsigned int)len, dst };
}

static void add_name(struct gfp_names *n, unsigned int mask, const char *name)
{
	add_entry(n, mask, "", name, strlen(name));
}

static unsigned int reclaim_mask(const struct gfp_layout *l)
{
	return l->bit[GB_DIRECT_RECLAIM] | l->bit[GB_KSWAPD_RECLAIM];
}

/* GFP_TRANSHUGE .. GFP_NOWAIT, as include/linux/gfp_types.h builds them. */
static void add_composites(struct gfp_names *n, const struct gfp_layout *l)
{
	const unsigned int *b = l->bit;
	unsigned int reclaim = reclaim_mask(l);
	unsigned int kernel = reclaim | b[GB_IO] | b[GB_FS];
	unsigned int user = kernel | b[GB_HARDWALL];
	unsigned int highuser = user | b[GB_HIGHMEM];
	unsigned int movable = highuser | b[GB_MOVABLE] | b[GB_SKIP_KASAN] |
			       b[GB_SKIP_KASAN_POISON] | b[GB_SKIP_KASAN_UNPOISON];
	unsigned int light =
		(movable | b[GB_COMP] | b[GB_NOMEMALLOC] | b[GB_NOWARN]) & ~reclaim;
	unsigned int nowait = b[GB_KSWAPD_RECLAIM];

	if (l->nowait_nowarn)
		nowait |= b[GB_NOWARN];
	add_name(n, light | b[GB_DIRECT_RECLAIM], "GFP_TRANSHUGE");
	add_name(n, light, "GFP_TRANSHUGE_LIGHT");
	add_name(n, movable, "GFP_HIGHUSER_MOVABLE");
	add_name(n, highuser, "GFP_HIGHUSER");
	add_name(n, user, "GFP_USER");
	add_name(n, kernel | b[GB_ACCOUNT], "GFP_KERNEL_ACCOUNT");
	add_name(n, kernel, "GFP_KERNEL");
	add_name(n, reclaim | b[GB_IO], "GFP_NOFS");
	add_name(n, b[GB_HIGH] | b[GB_ATOMIC] | b[GB_KSWAPD_RECLAIM], "GFP_ATOMIC");
	add_name(n, reclaim, "GFP_NOIO");
	add_name(n, nowait, "GFP_NOWAIT");
}

static void add_old_order(struct gfp_names *n, const struct gfp_layout *l)
{
	for (size_t i = 0; i < sizeof(old_order) / sizeof(old_order[0]); i++) {
		unsigned int bit = old_order[i].bit;
		unsigned int mask = bit == GB_RECLAIM ? reclaim_mask(l) : l->bit[bit];

		add_name(n, mask, old_order[i].name);
	}
}

/* 6.15+: every flag of the enum, in bit order, after three composites. */
static void add_new_order(struct gfp_names *n, const struct gfp_layout *l)
{
	add_name(n, l->bit[GB_DMA], "GFP_DMA");
	add_name(n, l->bit[GB_DMA32], "GFP_DMA32");
	add_name(n, reclaim_mask(l), "__GFP_RECLAIM");
	for (unsigned int pos = 0; pos < GFP_NBITS; pos++) {
		if (l->pos_name[pos])
			add_entry(n, 1u << pos, "__GFP_", l->pos_name[pos],
				  l->pos_len[pos]);
	}
}

static bool btf_name_is(const struct btf *btf, __u32 name_off, const char *want)
{
	const char *name = btf__name_by_offset(btf, name_off);

	return name && strcmp(name, want) == 0;
}

static bool enum_is_gfp(const struct btf *btf, const struct btf_type *t)
{
	const struct btf_enum *e = btf_enum(t);

	for (__u16 i = 0; i < btf_vlen(t); i++) {
		if (btf_name_is(btf, e[i].name_off, "___GFP_DMA_BIT"))
			return true;
	}
	return false;
}

static bool struct_has_member(const struct btf *btf, const struct btf_type *t,
			      const char *member)
{
	const struct btf_member *m = btf_members(t);

	for (__u16 i = 0; i < btf_vlen(t); i++) {
		if (btf_name_is(btf, m[i].name_off, member))
			return true;
	}
	return false;
}

static void note_type(const struct btf *btf, const struct btf_type *t,
		      struct btf_facts *f)
{
	if (btf_is_enum(t)) {
		if (!f->gfp_enum && enum_is_gfp(btf, t))
			f->gfp_enum = t;
		return;
	}
	if (btf_is_func(t)) {
		if (btf_name_is(btf, t->name_off, "bpf_res_spin_lock"))
			f->has_res_spin_lock = true;
		return;
	}
	if (!btf_is_struct(t))
		return;
	if (btf_name_is(btf, t->name_off, "statmount") ||
	    btf_name_is(btf, t->name_off, "kstatmount"))
		f->has_statmount = true;
	else if (btf_name_is(btf, t->name_off, "vm_area_struct") &&
		 struct_has_member(btf, t, "__vm_flags"))
		f->has_vm_flags_priv = true;
}

/*
 * Version markers, each config-independent and new in the release whose
 * GFP change it stands for: the kfunc bpf_res_spin_lock (6.15), struct
 * statmount (6.8) and vm_area_struct.__vm_flags (6.3).
 */
static void scan_btf(const struct btf *btf, struct btf_facts *f)
{
	__u32 cnt = btf__type_cnt(btf);

	for (__u32 id = 1; id < cnt; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);

		if (t)
			note_type(btf, t, f);
	}
}

static int bit_by_name(const char *name, size_t len)
{
	for (int i = 0; i < GB_NR; i++) {
		if (strlen(gfp_bit_name[i]) == len &&
		    memcmp(gfp_bit_name[i], name, len) == 0)
			return i;
	}
	return -1;
}

/* Takes one ___GFP_X_BIT enumerator into the layout. */
static void layout_enum_value(struct gfp_layout *l, const char *name, __s32 val)
{
	size_t len = name ? strlen(name) : 0;
	const char *x;
	size_t xlen;
	int bit;

	if (len <= 10 || strncmp(name, "___GFP_", 7) != 0 ||
	    strcmp(name + len - 4, "_BIT") != 0)
		return;
	x = name + 7;
	xlen = len - 11;
	/* Placeholders, not flags: the hole left by __GFP_ATOMIC, the count. */
	if ((xlen == 6 && memcmp(x, "UNUSED", 6) == 0) ||
	    (xlen == 4 && memcmp(x, "LAST", 4) == 0))
		return;
	if (val < 0 || val >= GFP_NBITS)
		return;
	l->pos_name[val] = x;
	l->pos_len[val] = xlen;
	bit = bit_by_name(x, xlen);
	if (bit >= 0)
		l->bit[bit] = 1u << val;
}

static void layout_from_enum(struct gfp_layout *l, const struct btf *btf,
			     const struct btf_type *t)
{
	const struct btf_enum *e = btf_enum(t);

	for (__u16 i = 0; i < btf_vlen(t); i++)
		layout_enum_value(l, btf__name_by_offset(btf, e[i].name_off), e[i].val);
}

static void layout_legacy(struct gfp_layout *l, bool atomic, bool nowait_nowarn)
{
	memcpy(l->bit, legacy_bits, sizeof(l->bit));
	if (!atomic)
		l->bit[GB_ATOMIC] = 0;
	l->nowait_nowarn = nowait_nowarn;
}

static void choose_layout(struct gfp_layout *l, const struct btf *btf)
{
	struct btf_facts f = { 0 };

	if (!btf) {
		layout_legacy(l, true, false);
		return;
	}
	scan_btf(btf, &f);
	if (!f.gfp_enum) {
		layout_legacy(l, !f.has_vm_flags_priv, f.has_statmount);
		return;
	}
	/* The enum arrived in 6.10, after both legacy changes. */
	layout_from_enum(l, btf, f.gfp_enum);
	l->nowait_nowarn = true;
	l->new_order = f.has_res_spin_lock;
}

struct gfp_names *gfp_names_new(const struct btf *vmlinux_btf)
{
	struct gfp_layout layout = { 0 };
	struct gfp_names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	/* Enum names point into the btf, which add_entry() copies from. */
	choose_layout(&layout, vmlinux_btf);
	add_composites(n, &layout);
	if (layout.new_order)
		add_new_order(n, &layout);
	else
		add_old_order(n, &layout);
	return n;
}

void gfp_names_free(struct gfp_names *names)
{
	free(names);
}

/* A bounded writer: keeps the first size-1 bytes, counts nothing beyond. */
struct out {
	char *buf;
	size_t cap; /* bytes available for text, the NUL excluded */
	size_t len;
};

static void out_put(struct out *o, const char *s, size_t n)
{
	size_t room = o->cap - o->len;

	if (n > room)
		n = room;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static size_t out_finish(struct out *o)
{
	o->buf[o->len] = '\0';
	return o->len;
}

static void out_hex(struct out *o, unsigned int v)
{
	char tmp[16];
	int n = snprintf(tmp, sizeof(tmp), "0x%x", v);

	out_put(o, tmp, (size_t)n);
}

size_t gfp_format(const struct gfp_names *names, unsigned int flags, char *buf,
		  size_t size)
{
	struct out o = { buf, size ? size - 1 : 0, 0 };
	bool first = true;

	if (!size)
		return 0;
	if (!flags) {
		out_put(&o, "none", 4);
		return out_finish(&o);
	}
	/* The table is short and the walk stops once every bit is named:
	 * GFP_KERNEL costs seven compares, so no cache is needed. */
	for (size_t i = 0; names && i < names->count && flags; i++) {
		const struct gfp_entry *e = &names->entry[i];

		if ((flags & e->mask) != e->mask)
			continue;
		flags &= ~e->mask;
		if (!first)
			out_put(&o, "|", 1);
		first = false;
		out_put(&o, e->name, e->len);
	}
	if (flags) {
		if (!first)
			out_put(&o, "|", 1);
		out_hex(&o, flags);
	}
	return out_finish(&o);
}

/* --- a recording's copy of the table ------------------------------------------- */

unsigned int gfp_names_mask(const struct gfp_names *names, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; i < names->count; i++)
		if (names->entry[i].len == len && !memcmp(names->entry[i].name, name, len))
			return names->entry[i].mask;
	return 0;
}

struct gfp_names *gfp_names_copy(const struct gfp_names *names)
{
	struct gfp_names *n = malloc(sizeof(*n));

	if (!n)
		return NULL;
	memcpy(n, names, sizeof(*n));
	/* The names point into the arena, which moved with the copy. */
	for (size_t i = 0; i < n->count; i++)
		n->entry[i].name = n->arena + (names->entry[i].name - names->arena);
	return n;
}

int gfp_names_dump(const struct gfp_names *names, FILE *out)
{
	for (size_t i = 0; i < names->count; i++)
		if (fprintf(out, "0x%x %s\n", names->entry[i].mask, names->entry[i].name) < 0)
			return -1;
	return 0;
}

static bool is_name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* One "0x<mask> <name>" line of len bytes (no newline); why it is not, or NULL. */
static const char *parse_line(struct gfp_names *n, const char *line, size_t len)
{
	unsigned long long mask = 0;
	size_t i = 2, digits = 0, count;

	if (len < 2 || line[0] != '0' || line[1] != 'x')
		return "expected 0x<mask> <name>";
	for (; i < len && line[i] != ' '; i++, digits++) {
		char c = line[i];
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

		if (v < 0 || digits >= 8)
			return "the mask is not a 32-bit hex number";
		mask = mask << 4 | (unsigned int)v;
	}
	if (!digits || !mask)
		return "the mask is empty or zero";
	if (i == len || ++i == len)
		return "no name after the mask";
	if (len - i >= GFP_NAME_MAX)
		return "the name is too long";
	for (size_t j = i; j < len; j++)
		if (!is_name_char(line[j]))
			return "the name has characters other than letters, digits and '_'";
	if (n->count >= GFP_MAX_ENTRIES)
		return "more entries than a table holds";
	count = n->count;
	add_entry(n, (unsigned int)mask, "", line + i, len - i);
	return n->count > count ? NULL : "the names do not fit in a table";
}

struct gfp_names *gfp_names_parse(const char *text, size_t len, char *err, size_t err_size)
{
	struct gfp_names *n = calloc(1, sizeof(*n));
	size_t off = 0, lineno = 0;

	if (!n) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	while (off < len) {
		const char *line = text + off, *nl = memchr(line, '\n', len - off);
		const char *why;

		lineno++;
		if (!nl) {
			snprintf(err, err_size, "line %zu: no newline at the end: truncated", lineno);
			goto fail;
		}
		why = parse_line(n, line, (size_t)(nl - line));
		if (why) {
			snprintf(err, err_size, "line %zu: %s", lineno, why);
			goto fail;
		}
		off = (size_t)(nl - text) + 1;
	}
	if (n->count)
		return n;
	snprintf(err, err_size, "no flags");
fail:
	free(n);
	return NULL;
}
