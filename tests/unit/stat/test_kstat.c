// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's accounting without BPF (kstat.c): perf kmem's arithmetic (hits,
 * totals, ping-pong, fragmentation, what a free of a pointer freed before
 * or never seen counts), its row layout, sort keys and -l, the page
 * allocator's matching, lifetimes, objects alive, cross-node allocations.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/kmemtrace.h"
#include "recording/record.h"
#include "stat/kstat.h"
#include "unit.h"

void test_kstat(struct unit *u);

#define SITE_A 0xffffffff81000041ULL /* "load_msg+41" */
#define SITE_B 0xffffffff81000a10ULL /* "other+10" */

static void name_site(void *ctx, uint64_t addr, bool with_offset, char *buf, size_t size)
{
	(void)ctx;
	if (addr == SITE_A)
		snprintf(buf, size, with_offset ? "load_msg+41" : "load_msg");
	else if (addr == SITE_B)
		snprintf(buf, size, with_offset ? "other+10" : "other");
	else
		snprintf(buf, size, "%#llx", (unsigned long long)addr);
}

static void name_gfp(void *ctx, unsigned int flags, char *buf, size_t size)
{
	(void)ctx;
	snprintf(buf, size, flags == 0xcc0 ? "GFP_KERNEL" : "GFP_KERNEL|__GFP_ZERO");
}

static const struct kstat_names names = { name_site, name_gfp, NULL, NULL, NULL, 0 };

static struct kmt_event slab_alloc(uint64_t site, uint64_t ptr, uint64_t req, uint64_t alloc,
				   uint64_t ts)
{
	struct kmt_event ev = { .event_id = KMT_EVENT_ALLOC, .type_id = KMT_TYPE_KMALLOC,
				.call_site = site, .ptr = ptr, .has_alloc = true,
				.bytes_req = req, .bytes_alloc = alloc, .numa_node = -1,
				.has_time = true, .timestamp = ts, .has_task = true, .pid = 42 };

	strcpy(ev.comm, "worker");
	return ev;
}

static struct kmt_event slab_free(uint64_t ptr, uint64_t ts)
{
	struct kmt_event ev = { .event_id = KMT_EVENT_FREE, .type_id = KMT_TYPE_KMALLOC,
				.call_site = SITE_B, .ptr = ptr, .has_time = true,
				.timestamp = ts, .has_task = true, .pid = 42 };

	return ev;
}

/* Everything kstat_print writes for opts, as one string (to free). */
static char *print(struct kstat *ks, const struct kstat_opts *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	kstat_print(ks, o, &names, f);
	fclose(f);
	return text;
}

static struct kstat_opts caller_opts(void)
{
	return (struct kstat_opts){ .slab = true, .caller = true, .caller_lines = -1,
				    .alloc_lines = -1 };
}

/* 7 messages of 248 bytes in 256, 3 of them freed on another CPU. */
static void test_perf_row(struct unit *u)
{
	struct unit_case c;
	struct kstat *ks = kstat_new(NULL);
	struct kstat_opts o = caller_opts();
	struct kstat_totals t;
	struct kstat_site s;
	char *text;

	unit_begin(&c, u, "kstat.perf_row");
	for (int i = 0; i < 7; i++) {
		struct kmt_event a = slab_alloc(SITE_A, 0x1000 + i * 0x100, 248, 256, 100 + i);

		CHECK(&c, kstat_add(ks, &a, 0) == 0);
	}
	for (int i = 0; i < 7; i++) {
		struct kmt_event f = slab_free(0x1000 + i * 0x100, 200 + i);

		CHECK(&c, kstat_add(ks, &f, i < 3 ? 1 : 0) == 0);
	}
	CHECK(&c, kstat_site(ks, SITE_A, &s));
	CHECK_U64(&c, s.hit, 7);
	CHECK_U64(&c, s.pingpong, 3);
	CHECK_U64(&c, s.bytes_alloc, 7 * 256);
	CHECK_U64(&c, s.bytes_req, 7 * 248);
	kstat_totals(ks, &t);
	CHECK_U64(&c, t.freed, 7 * 256);
	CHECK_U64(&c, t.alive, 0);
	text = print(ks, &o);
	CHECK(&c, text != NULL);
	if (text) {
		/* 1 - 1736/1792 = 3.125% */
		CHECK(&c, strstr(text, "\n load_msg+41                        |      1792/256   |"
				       "      1736/248   |        7 |         3 |  3.125%\n"));
		CHECK(&c, strstr(text, "\nTotal bytes freed:     1792\n"));
		CHECK(&c, !strstr(text, "Net total bytes allocated"));
		CHECK(&c, strstr(text, "\nTotal bytes wasted on internal fragmentation: 56\n"));
		CHECK(&c, strstr(text, "\nInternal fragmentation: 3.125000%\n"));
		CHECK(&c, strstr(text, "\nCross CPU allocations: 0/7\n"));
	}
	free(text);
	kstat_free(ks);
	unit_end(&c);
}

/* As perf: a pointer's entry outlives its free; a second free counts again. */
static void test_free_rules(struct unit *u)
{
	struct unit_case c;
	struct kstat *ks = kstat_new(NULL);
	struct kmt_event a = slab_alloc(SITE_A, 0x2000, 100, 128, 10);
	struct kmt_event f = slab_free(0x2000, 20);
	struct kmt_event stranger = slab_free(0x9000, 30);
	struct kstat_totals t;
	struct kstat_site s;

	unit_begin(&c, u, "kstat.free_rules");
	kstat_add(ks, &a, 0);
	kstat_add(ks, &f, 1);
	kstat_add(ks, &f, 1); /* freed again: alloc CPU is now -1 */
	kstat_add(ks, &stranger, 0);
	kstat_totals(ks, &t);
	CHECK_U64(&c, t.freed, 256);
	CHECK(&c, kstat_site(ks, SITE_A, &s));
	CHECK_U64(&c, s.pingpong, 2);
	CHECK_U64(&c, s.freed, 1); /* one lifetime only */
	CHECK_U64(&c, t.alive, 0);
	kstat_free(ks);
	unit_end(&c);
}

/* Default order frag,hit,bytes, largest first; -s hit; -l and its "..." row. */
static void test_sort(struct unit *u)
{
	struct unit_case c;
	struct kstat *ks = kstat_new(NULL);
	struct kstat_opts o = caller_opts();
	struct kmt_event a = slab_alloc(SITE_A, 0x1000, 100, 128, 1); /* 21.875% */
	char *text, err[128];
	const char *pa, *pb;

	unit_begin(&c, u, "kstat.sort");
	kstat_add(ks, &a, 0);
	for (int i = 0; i < 3; i++) {
		struct kmt_event b = slab_alloc(SITE_B, 0x5000 + i * 64, 64, 64, 2 + i); /* 0% */

		kstat_add(ks, &b, 0);
	}
	text = print(ks, &o);
	pa = text ? strstr(text, " load_msg+41 ") : NULL;
	pb = text ? strstr(text, " other+10 ") : NULL;
	CHECK(&c, pa && pb && pa < pb);
	free(text);

	CHECK(&c, kstat_sort_parse("hit", false, &o.caller_sort, err, sizeof(err)) == 0);
	text = print(ks, &o);
	pa = text ? strstr(text, " load_msg+41 ") : NULL;
	pb = text ? strstr(text, " other+10 ") : NULL;
	CHECK(&c, pa && pb && pb < pa);
	free(text);

	o.caller_lines = 1;
	text = print(ks, &o);
	CHECK(&c, text && strstr(text, "\n ...                                | ...  "));
	CHECK(&c, text && !strstr(text, " load_msg+41                        |"));
	free(text);

	CHECK(&c, kstat_sort_parse("hit,bogus", false, &o.caller_sort, err, sizeof(err)) == -1);
	CHECK(&c, strstr(err, "'bogus'") != NULL);
	CHECK(&c, kstat_sort_parse("order", false, &o.caller_sort, err, sizeof(err)) == -1);
	CHECK(&c, kstat_sort_parse("order,migtype,gfp", true, &o.caller_sort, err,
				   sizeof(err)) == 0);
	CHECK_U64(&c, o.caller_sort.nkeys, 3);
	CHECK(&c, kstat_sort_parse("frag", true, &o.caller_sort, err, sizeof(err)) == -1);
	kstat_free(ks);
	unit_end(&c);
}

/* Lifetimes in log2 ns buckets; a missed free is not a lifetime. */
static void test_lifetimes(struct unit *u)
{
	struct unit_case c;
	struct kstat *ks = kstat_new(NULL);
	struct kstat_site s;
	struct kstat_totals t;
	struct kmt_event ev;

	unit_begin(&c, u, "kstat.lifetimes");
	ev = slab_alloc(SITE_A, 0x100, 8, 8, 1000);
	kstat_add(ks, &ev, 0);
	ev = slab_free(0x100, 2000); /* 1000 ns: [512, 1024) */
	kstat_add(ks, &ev, 0);
	ev = slab_alloc(SITE_A, 0x200, 8, 8, 0);
	kstat_add(ks, &ev, 0);
	ev = slab_free(0x200, (1ULL << 30) + 5); /* [2^30, 2^31) */
	kstat_add(ks, &ev, 0);
	ev = slab_alloc(SITE_A, 0x300, 8, 8, 10);
	kstat_add(ks, &ev, 0);
	ev = slab_alloc(SITE_A, 0x300, 8, 16, 20); /* its free was not seen */
	kstat_add(ks, &ev, 0);
	CHECK(&c, kstat_site(ks, SITE_A, &s));
	CHECK_U64(&c, s.life[9], 1);
	CHECK_U64(&c, s.life[30], 1);
	CHECK_U64(&c, s.freed, 2);
	CHECK_U64(&c, s.alive, 1);
	CHECK_U64(&c, kstat_percentile(s.life, 50), 1024);
	CHECK_U64(&c, kstat_percentile(s.life, 99), 1ULL << 31);
	kstat_totals(ks, &t);
	CHECK_U64(&c, t.alive, 1);
	CHECK_U64(&c, t.alive_bytes, 16);
	kstat_free(ks);
	unit_end(&c);
}

static struct kmt_event page_event(int id, uint64_t pfn, int order, int migtype, unsigned int gfp)
{
	struct kmt_event ev = { .event_id = id, .type_id = KMT_TYPE_PAGES,
				.ptr = pfn == KMT_PFN_NONE ? 0 : 0xffffea0000000000ULL + pfn * 64,
				.has_alloc = id == KMT_EVENT_ALLOC,
				.bytes_req = 4096ULL << order, .bytes_alloc = 4096ULL << order,
				.gfp_flags = gfp, .numa_node = -1, .has_page = true,
				.order = order, .migratetype = migtype, .pfn = pfn };

	return ev;
}

static void test_cross_node(struct unit *u)
{
	struct unit_case c;
	const int nodes[2] = { 0, 1 }, blocks[3] = { 0, -1, 1 };
	struct kstat_topology topo = { nodes, 2, blocks, 3, 1000 };
	struct kstat *ks = kstat_new(&topo);
	struct kmt_event ev = slab_alloc(SITE_A, 0x100, 8, 8, 1);
	struct kstat_totals t;

	unit_begin(&c, u, "kstat.cross_node");
	ev.numa_node = 0;
	kstat_add(ks, &ev, 1); /* CPU 1 is on node 1 */
	ev.ptr = 0x200;
	kstat_add(ks, &ev, 0);
	ev.ptr = 0x300;
	ev.numa_node = -1;
	kstat_add(ks, &ev, 1);
	/* Pages: frame 10 is on node 0, 1500 on no known node, 2500 on node 1. */
	ev = page_event(KMT_EVENT_ALLOC, 10, 0, 0, 0xcc0);
	kstat_add(ks, &ev, 1);
	ev = page_event(KMT_EVENT_ALLOC, 1500, 0, 0, 0xcc0);
	kstat_add(ks, &ev, 1);
	ev = page_event(KMT_EVENT_ALLOC, 2500, 0, 0, 0xcc0);
	kstat_add(ks, &ev, 1);
	ev = page_event(KMT_EVENT_ALLOC, 2501, 0, 0, 0xcc0);
	kstat_add(ks, &ev, 0);
	kstat_totals(ks, &t);
	CHECK_U64(&c, t.nr_cross_node, 1);
	CHECK_U64(&c, t.nr_allocs, 3);
	CHECK_U64(&c, t.page_located, 3);
	CHECK_U64(&c, t.page_remote, 2);
	kstat_free(ks);
	unit_end(&c);
}

/*
 * Slab objects through a linear map at LINEAR: blocks of 1000 pages of
 * 4 KiB, pfn 10 on node 0, 1500 on none known, 2500 on node 1; the node
 * asked for, or the CPU's (CPU 1: node 1), against the one that served.
 */
static void test_served_node(struct unit *u)
{
	const uint64_t linear = 0xffff888000000000ULL, page = 4096;
	const int nodes[2] = { 0, 1 }, blocks[3] = { 0, -1, 1 };
	struct kstat_topology topo = { nodes, 2, blocks, 3, 1000 };
	struct kstat *ks = kstat_new(&topo);
	struct kmt_event ev = slab_alloc(SITE_A, linear + 10 * page + 64, 8, 8, 1);
	struct kstat_totals t;
	struct unit_case c;
	char *text;

	unit_begin(&c, u, "kstat.served_node");
	kstat_add(ks, &ev, 1); /* node 0 served CPU 1's request for any: remote */
	kstat_totals(ks, &t);
	CHECK_U64(&c, t.slab_located, 0); /* no linear map yet: not known */
	kstat_set_linear_map(ks, linear, page);
	kstat_add(ks, &ev, 1);
	ev.numa_node = 0;
	kstat_add(ks, &ev, 1); /* asked for node 0, got it: local */
	ev.ptr = linear + 2500 * page;
	kstat_add(ks, &ev, 0); /* asked for node 0, node 1 served */
	ev.numa_node = -1;
	kstat_add(ks, &ev, 1); /* CPU 1's node served */
	ev.ptr = linear + 1500 * page;
	kstat_add(ks, &ev, 1); /* no known node */
	ev.ptr = linear - page;
	kstat_add(ks, &ev, 1); /* below the map */
	kstat_totals(ks, &t);
	CHECK_U64(&c, t.slab_located, 4);
	CHECK_U64(&c, t.slab_remote, 2);
	kstat_clear(ks);
	kstat_add(ks, &ev, 1);
	ev.ptr = linear + 10 * page;
	kstat_add(ks, &ev, 1);
	kstat_totals(ks, &t);
	CHECK_U64(&c, t.slab_located, 1); /* the map kept by kstat_clear */
	CHECK_U64(&c, t.slab_remote, 1);
	struct kstat_opts o = { .slab = true, .caller_lines = -1, .alloc_lines = -1 };
	text = print(ks, &o);
	CHECK(&c, text && strstr(text, "Slab allocations served from another NUMA node than "
					"requested (or than their CPU's): 1/1\n"));
	free(text);
	kstat_set_linear_map(ks, 0, page);
	text = print(ks, &o);
	CHECK(&c, text && strstr(text, "than requested: not known"));
	free(text);
	kstat_free(ks);
	unit_end(&c);
}

static void test_pages(struct unit *u)
{
	struct unit_case c;
	struct kstat *ks = kstat_new(NULL);
	struct kstat_opts o = { .page = true, .alloc = true, .caller_lines = -1,
				.alloc_lines = -1 };
	struct kmt_event ev;
	struct kstat_totals t;
	char *text;

	unit_begin(&c, u, "kstat.pages");
	ev = page_event(KMT_EVENT_ALLOC, 100, 2, 0, 0xcc0);
	kstat_add(ks, &ev, 0);
	ev = page_event(KMT_EVENT_ALLOC, 200, 0, 1, 0xdc0);
	kstat_add(ks, &ev, 0);
	ev = page_event(KMT_EVENT_FREE, 100, 2, -1, 0);
	kstat_add(ks, &ev, 0);
	ev = page_event(KMT_EVENT_FREE, 300, 0, -1, 0); /* never seen allocated */
	kstat_add(ks, &ev, 0);
	ev = page_event(KMT_EVENT_ALLOC, KMT_PFN_NONE, 3, 0, 0xcc0); /* failed */
	kstat_add(ks, &ev, 0);
	kstat_totals(ks, &t);
	CHECK_U64(&c, t.page_allocs, 3);
	CHECK_U64(&c, t.page_frees, 2);
	CHECK_U64(&c, t.page_nomatch, 1);
	CHECK_U64(&c, t.page_fails, 1);
	text = print(ks, &o);
	CHECK(&c, text != NULL);
	if (text) {
		CHECK(&c, strstr(text, "# 00000cc0:   K: GFP_KERNEL\n"));
		CHECK(&c, strstr(text, "# 00000dc0: K|Z: GFP_KERNEL|__GFP_ZERO\n"));
		/* Largest first (bytes): the order-2 page before the order-0 one. */
		CHECK(&c, strstr(text, "\n              100 |               16 |         1 |     2 "
				       "| UNMOVABL | K         | (unknown)\n"));
		CHECK(&c, strstr(text, "\n              200 |                4 |         1 |     0 "
				       "|  MOVABLE | K|Z       | (unknown)\n"));
		/* "%-30s: %16llu   [ %16llu KB ]" */
		CHECK(&c, strstr(text, "\nTotal alloc+freed requests    :                1   "
				       "[               16 KB ]\n"));
		CHECK(&c, strstr(text, "\nTotal allocation failures     :                1   "
				       "[               32 KB ]\n"));
		CHECK(&c, strstr(text, "\n    2             1             .  "));
	}
	free(text);
	kstat_free(ks);
	unit_end(&c);
}

/* A free's bytes come from its order and the page size the allocations showed. */
static void test_page_size(struct unit *u)
{
	struct unit_case c;
	struct kstat *ks = kstat_new(NULL);
	struct kstat_opts o = { .page = true, .caller_lines = -1, .alloc_lines = -1 };
	struct kmt_event ev = page_event(KMT_EVENT_ALLOC, 7, 1, 0, 0xcc0);
	char *text;

	unit_begin(&c, u, "kstat.page_size");
	ev.bytes_req = ev.bytes_alloc = 65536 << 1; /* 64 KiB pages */
	kstat_add(ks, &ev, 0);
	ev = page_event(KMT_EVENT_FREE, 7, 1, -1, 0);
	kstat_add(ks, &ev, 0);
	text = print(ks, &o);
	CHECK(&c, text && strstr(text, "\nTotal free requests           :                1   "
					 "[              128 KB ]\n"));
	free(text);
	kstat_free(ks);
	unit_end(&c);
}

/* The rows --stat's BPF maps give (kstat_add_slab_agg and its kin) print
 * as the events they counted do; kstat_clear starts again. */
static void test_aggregated(struct unit *u)
{
	struct unit_case c;
	struct kstat *by_event = kstat_new(NULL), *by_row = kstat_new(NULL);
	struct kstat_opts o = caller_opts();
	uint64_t life[64] = { 0 };
	struct kstat_slab_agg a = { .call_site = SITE_A, .cache = "kmalloc-256", .hit = 7,
				    .bytes_req = 7 * 248, .bytes_alloc = 7 * 256, .pingpong = 3,
				    .frees = 6, .freed_bytes = 6 * 256, .alive = 1,
				    .alive_bytes = 256, .life = life };
	struct kstat_proc_agg p = { .pid = 42, .comm = "worker", .allocs = 7, .frees = 6,
				    .bytes_req = 7 * 248, .bytes_alloc = 7 * 256 };
	char *want, *got, *again;

	unit_begin(&c, u, "kstat.aggregated");
	for (int i = 0; i < 7; i++) {
		struct kmt_event ev = slab_alloc(SITE_A, 0x1000 + i * 0x100, 248, 256, 100 + i);

		CHECK(&c, kstat_add(by_event, &ev, 0) == 0);
	}
	for (int i = 0; i < 6; i++) { /* 100 ns each: bucket 6, [64, 128) */
		struct kmt_event ev = slab_free(0x1000 + i * 0x100, 200 + i);

		strcpy(ev.comm, "worker");
		CHECK(&c, kstat_add(by_event, &ev, i < 3 ? 1 : 0) == 0);
	}
	life[6] = 6;
	CHECK(&c, kstat_add_slab_agg(by_row, &a) == 0);
	CHECK(&c, kstat_add_proc_agg(by_row, &p) == 0);
	want = print(by_event, &o);
	got = print(by_row, &o);
	CHECK(&c, want && got);
	if (want && got)
		CHECK_STR(&c, got, want);
	kstat_clear(by_row);
	CHECK(&c, kstat_add_slab_agg(by_row, &a) == 0);
	CHECK(&c, kstat_add_proc_agg(by_row, &p) == 0);
	again = print(by_row, &o);
	CHECK(&c, again && want);
	if (again && want)
		CHECK_STR(&c, again, want);
	free(want);
	free(got);
	free(again);
	kstat_free(by_event);
	kstat_free(by_row);
	unit_end(&c);
}

void test_kstat(struct unit *u)
{
	test_perf_row(u);
	test_aggregated(u);
	test_free_rules(u);
	test_sort(u);
	test_lifetimes(u);
	test_cross_node(u);
	test_served_node(u);
	test_pages(u);
	test_page_size(u);
}
