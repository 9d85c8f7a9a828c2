// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ksyms from synthetic kallsyms files.  The core-kernel lines are copied
 * from /proc/kallsyms of the 6.18 CI kernel, and the call sites checked
 * against them are what its ftrace printed (kmem events, call_site=%pS) for
 * the same addresses.  Module, BPF and trampoline lines are made up in the
 * format kallsyms prints them.
 */
#include "names/ksyms.h"
#include "unit.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void test_ksyms(struct unit *u);

/* Deliberately unsorted, with the aliases at _text in kallsyms order. */
static const char kallsyms_text[] =
	"ffffffff821d11c0 t mas_wr_bnode\n"
	"ffffffff821d27e0 t __pfx_mas_wr_spanning_store\n"
	"ffffffff81000000 T srso_alias_untrain_ret\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81353ac0 T free_task\n"
	"ffffffff81353b20 T __pfx___put_task_struct\n"
	"ffffffff816bbb50 T alloc_empty_file\n"
	"ffffffff816bbc60 T __pfx_alloc_file_pseudo\n"
	"ffffffff816ca420 t getname_flags.part.0\n"
	"ffffffff816ca610 t __pfx_lookup_dcache\n"
	"ffffffff81a88780 T security_file_alloc\n"
	"ffffffff81a88850 T __pfx_security_backing_file_free\n"
	"0000000000000000 T hidden_by_kptr_restrict\n"
	"0000000000001000 A cpu_debug_store\n"
	"ffffffffc0a01000 t mod_alpha\t[mymod]\n"
	"ffffffffc0a01080 T mod_beta\t[mymod]\n"
	"ffffffffc0a03000 d mod_data\t[mymod]\n"
	"ffffffffc0a00f00 t other_last\t[othermod]\n"
	"ffffffffc0b00000 t bpf_prog_0123456789abcdef_probe\t[bpf]\n"
	"ffffffffc0b00100 t bpf_prog_fedcba9876543210_other\t[bpf]\n"
	"ffffffffc0c00000 t ftrace_trampoline\t[__builtin__ftrace]\n"
	"this line is not a symbol\n"
	"ffffffffc0d00000 t no_newline_at_end\t[lastmod]";

static const size_t kallsyms_count = 20;

struct addr_text {
	unsigned long long addr;
	const char *text;
};

static const struct addr_text expected[] = {
	/* verified: ftrace on 6.18 printed these for these addresses */
	{ 0xffffffff81353adbULL, "free_task+0x1b/0x60" },
	{ 0xffffffff816ca444ULL, "getname_flags.part.0+0x24/0x1f0" },
	{ 0xffffffff816bbb8cULL, "alloc_empty_file+0x3c/0x110" },
	{ 0xffffffff821d1b09ULL, "mas_wr_bnode+0x949/0x1620" },
	{ 0xffffffff821d1ae7ULL, "mas_wr_bnode+0x927/0x1620" },
	{ 0xffffffff81a887a7ULL, "security_file_alloc+0x27/0xd0" },
	/* exact start: the kernel's %#lx prints 0 as 0x0 */
	{ 0xffffffff81353ac0ULL, "free_task+0x0/0x60" },
	/* the first alias listed wins */
	{ 0xffffffff81000010ULL, "srso_alias_untrain_ret+0x10/0x353ac0" },
	/* below every symbol (absolute ones do not count), between core and
	 * modules */
	{ 0x1000ULL, "0x1000" },
	{ 0x7fff0000ULL, "0x7fff0000" },
	{ 0xffffffff81000000ULL - 1, "0xffffffff80ffffff" },
	/* the last core symbol stops at the page end, not at the modules */
	{ 0xffffffff821d27f0ULL, "__pfx_mas_wr_spanning_store+0x10/0x820" },
	{ 0xffffffff821d3000ULL, "0xffffffff821d3000" },
	/* modules */
	{ 0xffffffffc0a01010ULL, "mod_alpha+0x10/0x80 [mymod]" },
	{ 0xffffffffc0a01180ULL, "mod_beta+0x100/0xf80 [mymod]" },
	{ 0xffffffffc0a02000ULL, "0xffffffffc0a02000" }, /* text ends, data later */
	{ 0xffffffffc0a03008ULL, "mod_data+0x8/0x1000 [mymod]" },
	{ 0xffffffffc0a00f20ULL, "other_last+0x20/0x100 [othermod]" },
	{ 0xffffffffc0d00004ULL, "no_newline_at_end+0x4/0x1000 [lastmod]" },
	/* BPF programs print without a module; trampolines do not resolve */
	{ 0xffffffffc0b00008ULL, "bpf_prog_0123456789abcdef_probe+0x8/0x100" },
	{ 0xffffffffc0b00100ULL, "bpf_prog_fedcba9876543210_other+0x0/0xf00" },
	{ 0xffffffffc0c00000ULL, "0xffffffffc0c00000" },
	{ 0xffffffffffffffffULL, "0xffffffffffffffff" },
};

#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

struct fixture {
	char dir[256];
	char path[512];
	struct ksyms *ks;
};

static const char *const fixture_files[] = { "kallsyms", "zeros" };

static bool fixture_file(struct fixture *f, const char *name, const char *text)
{
	int n = snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);

	return n > 0 && (size_t)n < sizeof(f->path) && unit_write_file(f->path, text);
}

static bool fixture_open(struct fixture *f)
{
	f->ks = NULL;
	if (!unit_mkdtemp(f->dir, sizeof(f->dir)))
		return false;
	if (!fixture_file(f, "kallsyms", kallsyms_text))
		return false;
	f->ks = ksyms_load(f->path);
	return f->ks != NULL;
}

static void fixture_close(struct fixture *f)
{
	ksyms_free(f->ks);
	unit_rmdir(f->dir, fixture_files, NELEMS(fixture_files));
}

static void check_expected(struct unit_case *c, struct ksyms *ks)
{
	char buf[256];

	for (size_t i = 0; i < NELEMS(expected) && !c->failed; i++) {
		size_t len = ksyms_format(ks, expected[i].addr, buf, sizeof(buf));

		if (strcmp(buf, expected[i].text) != 0)
			unit_fail(c, __FILE__, __LINE__, "%#llx: got \"%s\", want \"%s\"",
				  expected[i].addr, buf, expected[i].text);
		CHECK_U64(c, len, strlen(expected[i].text));
	}
}

static void test_format(struct unit *u)
{
	struct fixture f;
	struct unit_case c;

	unit_begin(&c, u, "ksyms_format_like_kernel");
	CHECK(&c, fixture_open(&f));
	if (f.ks) {
		CHECK_U64(&c, ksyms_count(f.ks), kallsyms_count);
		check_expected(&c, f.ks);
		check_expected(&c, f.ks); /* now from the cache */
	}
	fixture_close(&f);
	unit_end(&c);
}

static void test_find(struct unit *u)
{
	const struct ksym *s;
	struct fixture f;
	struct unit_case c;

	unit_begin(&c, u, "ksyms_find");
	CHECK(&c, fixture_open(&f));
	if (f.ks) {
		s = ksyms_find(f.ks, 0xffffffff81353ac0ULL);
		CHECK(&c, s && strcmp(s->name, "free_task") == 0 && !s->module);
		CHECK(&c, s && s->addr == 0xffffffff81353ac0ULL && s->size == 0x60);
		s = ksyms_find(f.ks, 0xffffffff81353b1fULL);
		CHECK(&c, s && strcmp(s->name, "free_task") == 0);
		s = ksyms_find(f.ks, 0xffffffffc0a0107fULL);
		CHECK(&c, s && strcmp(s->name, "mod_alpha") == 0);
		CHECK(&c, s && s->module && strcmp(s->module, "mymod") == 0);
		s = ksyms_find(f.ks, 0xffffffffc0b00000ULL);
		CHECK(&c, s && s->module && strcmp(s->module, "bpf") == 0);
		CHECK(&c, ksyms_find(f.ks, 0xffffffffc0c00000ULL) == NULL);
		CHECK(&c, ksyms_find(f.ks, 0) == NULL);
		CHECK(&c, ksyms_find(f.ks, 0xfffULL) == NULL);
	}
	fixture_close(&f);
	unit_end(&c);
}

/* The expected text, built from ksyms_find() without the cache. */
static void reference_text(const struct ksyms *ks, unsigned long long addr,
			   char *buf, size_t size)
{
	const struct ksym *s = ksyms_find(ks, addr);

	if (!s)
		snprintf(buf, size, "0x%llx", addr);
	else if (s->module && strcmp(s->module, "bpf") != 0)
		snprintf(buf, size, "%s+0x%llx/0x%llx [%s]", s->name, addr - s->addr,
			 s->size, s->module);
	else
		snprintf(buf, size, "%s+0x%llx/0x%llx", s->name, addr - s->addr,
			 s->size);
}

/* xorshift64: a fixed, repeatable address stream. */
static unsigned long long next_rand(unsigned long long *state)
{
	unsigned long long x = *state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

static unsigned long long pick_addr(unsigned long long r)
{
	/* Mostly core text, some module space, a few repeats of hot sites. */
	switch (r & 3) {
	case 0:
		return expected[(r >> 8) % NELEMS(expected)].addr;
	case 1:
		return 0xffffffffc0a00000ULL + ((r >> 8) & 0x3fffff);
	default:
		return 0xffffffff81000000ULL + ((r >> 8) & 0x1ffffff);
	}
}

static void test_cache(struct unit *u)
{
	unsigned long long state = 0x9e3779b97f4a7c15ULL;
	char got[256], want[256];
	struct fixture f;
	struct unit_case c;

	unit_begin(&c, u, "ksyms_cache_consistent");
	CHECK(&c, fixture_open(&f));
	for (int i = 0; f.ks && i < 200000 && !c.failed; i++) {
		unsigned long long addr = pick_addr(next_rand(&state));

		ksyms_format(f.ks, addr, got, sizeof(got));
		reference_text(f.ks, addr, want, sizeof(want));
		if (strcmp(got, want) != 0)
			unit_fail(&c, __FILE__, __LINE__, "%#llx: got \"%s\", want \"%s\"",
				  addr, got, want);
	}
	fixture_close(&f);
	unit_end(&c);
}

static void test_truncation(struct unit *u)
{
	struct fixture f;
	struct unit_case c;
	char buf[64];

	unit_begin(&c, u, "ksyms_truncation");
	CHECK(&c, fixture_open(&f));
	if (f.ks) {
		memset(buf, 'x', sizeof(buf));
		CHECK_U64(&c, ksyms_format(f.ks, 0xffffffff81353adbULL, buf, 0), 0);
		CHECK(&c, buf[0] == 'x');
		CHECK_U64(&c, ksyms_format(f.ks, 0xffffffff81353adbULL, buf, 10), 9);
		CHECK_STR(&c, buf, "free_task");
		/* the same again, now a cache hit */
		CHECK_U64(&c, ksyms_format(f.ks, 0xffffffff81353adbULL, buf, 10), 9);
		CHECK_STR(&c, buf, "free_task");
		CHECK_U64(&c, ksyms_format(f.ks, 0xffffffffc0a01010ULL, buf, 1), 0);
		CHECK_STR(&c, buf, "");
		CHECK_U64(&c, ksyms_format(f.ks, 0x1000, buf, 4), 3);
		CHECK_STR(&c, buf, "0x1");
	}
	fixture_close(&f);
	unit_end(&c);
}

/* What an unprivileged reader of /proc/kallsyms gets. */
static void test_all_zero(struct unit *u)
{
	struct ksyms *ks = NULL;
	struct fixture f;
	struct unit_case c;
	char buf[64];

	unit_begin(&c, u, "ksyms_unprivileged_file_is_empty");
	CHECK(&c, unit_mkdtemp(f.dir, sizeof(f.dir)));
	CHECK(&c, fixture_file(&f, "zeros",
			       "0000000000000000 T _text\n"
			       "0000000000000000 t mod_alpha\t[mymod]\n"));
	if (!c.failed)
		ks = ksyms_load(f.path);
	CHECK(&c, ks != NULL);
	if (ks) {
		CHECK_U64(&c, ksyms_count(ks), 0);
		CHECK(&c, ksyms_find(ks, 0) == NULL);
		ksyms_format(ks, 0xffffffff81000000ULL, buf, sizeof(buf));
		CHECK_STR(&c, buf, "0xffffffff81000000");
	}
	ksyms_free(ks);
	f.ks = NULL;
	fixture_close(&f);
	unit_end(&c);
}

static void test_missing_file(struct unit *u)
{
	struct unit_case c;
	struct ksyms *ks;

	unit_begin(&c, u, "ksyms_missing_file");
	errno = 0;
	ks = ksyms_load("/nonexistent/kmemsnoop/kallsyms");
	CHECK(&c, ks == NULL);
	CHECK_U64(&c, (unsigned long long)errno, ENOENT);
	ksyms_free(ks);
	unit_end(&c);
}

/* The real file, if this user may see addresses (its speed is make
 * bench's business, not a test's). */
static void test_live(struct unit *u)
{
	struct ksyms *ks = ksyms_load("/proc/kallsyms");
	struct unit_case c;

	if (!ks || ksyms_count(ks) == 0) {
		unit_skip(u, "ksyms_live_proc_kallsyms",
			  ks ? "addresses hidden (not root)" : "no /proc/kallsyms");
		ksyms_free(ks);
		return;
	}
	unit_begin(&c, u, "ksyms_live_proc_kallsyms");
	CHECK(&c, ksyms_count(ks) > 1000);
	CHECK(&c, ksyms_find(ks, ksyms_addr_of(ks, "kfree")) != NULL);
	ksyms_free(ks);
	unit_end(&c);
}

void test_ksyms(struct unit *u)
{
	test_format(u);
	test_find(u);
	test_cache(u);
	test_truncation(u);
	test_all_zero(u);
	test_missing_file(u);
	test_live(u);
}
