// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --hist without BPF: the bucket of a size (the function the BPF programs
 * run), bucket bounds and labels, the text histogram, the heat map shades,
 * and hist_acc turning readings of growing counters into intervals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/histmaps.h"
#include "bpf/kmemsnoop.h"
#include "hist/histacc.h"
#include "hist/histfmt.h"
#include "hist/histtext.h"
#include "unit.h"

void test_hist(struct unit *u);

static void test_slot_values(struct unit *u)
{
	static const struct {
		unsigned long long v;
		unsigned int slot;
	} cases[] = {
		{ 0, 0 }, { 1, 0 }, { 2, 1 }, { 3, 1 }, { 4, 2 }, { 7, 2 }, { 8, 3 },
		{ 96, 6 }, { 192, 7 }, { 248, 7 }, { 255, 7 }, { 256, 8 }, { 1048, 10 },
		{ 2048, 11 }, { 4095, 11 }, { 4096, 12 }, { 8192, 13 }, { 4194304, 22 },
		{ 0x7fffffffULL, 30 }, { 0x80000000ULL, 31 }, { 0xffffffffULL, 31 },
		{ 0x100000000ULL, 31 }, { ~0ULL, 31 },
	};
	struct unit_case c;

	unit_begin(&c, u, "hist.slot.values");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (kmt_hist_slot(cases[i].v) != cases[i].slot)
			unit_fail(&c, __FILE__, __LINE__, "slot(%llu) = %u, want %u", cases[i].v,
				  kmt_hist_slot(cases[i].v), cases[i].slot);
	}
	unit_end(&c);
}

/* Every power of two starts its bucket, and the bounds printed agree. */
static void test_slot_bounds(struct unit *u)
{
	struct unit_case c;

	unit_begin(&c, u, "hist.slot.bounds");
	for (int s = 0; s < KMT_HIST_SLOTS; s++) {
		unsigned long long lo = hist_bucket_low(s), hi = hist_bucket_high(s);

		if (kmt_hist_slot(lo) != (unsigned int)s || kmt_hist_slot(hi) != (unsigned int)s)
			unit_fail(&c, __FILE__, __LINE__, "bucket %d [%llu, %llu]: slots %u and %u", s,
				  lo, hi, kmt_hist_slot(lo), kmt_hist_slot(hi));
		if (s > 0 && lo != hist_bucket_high(s - 1) + 1)
			unit_fail(&c, __FILE__, __LINE__, "bucket %d starts at %llu, %d ends at %llu",
				  s, lo, s - 1, (unsigned long long)hist_bucket_high(s - 1));
		if (s > 0 && kmt_hist_slot(lo - 1) != (unsigned int)s - 1)
			unit_fail(&c, __FILE__, __LINE__, "slot(%llu) is not %d", lo - 1, s - 1);
	}
	CHECK_U64(&c, hist_bucket_high(KMT_HIST_SLOTS - 1), ~0ULL);
	unit_end(&c);
}

static void test_front_slot(struct unit *u)
{
	struct unit_case c;
	unsigned int hits[64] = { 0 };

	unit_begin(&c, u, "hist.front_slot");
	CHECK_U64(&c, kmt_hist_front_slot(0xffff888100001000ULL, 0, 1, 0), 0);
	/* In range, and kmem_cache addresses 256 bytes apart spread out. */
	for (unsigned long long i = 0; i < 64; i++) {
		unsigned int s = kmt_hist_front_slot(0xffff888100000000ULL + i * 256, 0, 1, 6);

		CHECK(&c, s < 64);
		if (s < 64)
			hits[s]++;
	}
	for (int s = 0, used = 0; s < 64; s++) {
		used += hits[s] != 0;
		if (s == 63)
			CHECK(&c, used >= 32);
	}
	CHECK(&c, kmt_hist_front_slot(42, 0, 1, 10) != kmt_hist_front_slot(42, 0, 2, 10) ||
		  kmt_hist_front_slot(43, 0, 1, 10) != kmt_hist_front_slot(43, 0, 2, 10));
	unit_end(&c);
}

static void test_labels(struct unit *u)
{
	struct unit_case c;
	char buf[64];
	__u64 w[2];

	unit_begin(&c, u, "hist.labels");
	hist_pow2(buf, sizeof(buf), -1);
	CHECK_STR(&c, buf, "0");
	hist_pow2(buf, sizeof(buf), 0);
	CHECK_STR(&c, buf, "1");
	hist_pow2(buf, sizeof(buf), 9);
	CHECK_STR(&c, buf, "512");
	hist_pow2(buf, sizeof(buf), 10);
	CHECK_STR(&c, buf, "1K");
	hist_pow2(buf, sizeof(buf), 22);
	CHECK_STR(&c, buf, "4M");
	hist_pow2(buf, sizeof(buf), 31);
	CHECK_STR(&c, buf, "2G");
	hist_human(buf, sizeof(buf), 0);
	CHECK_STR(&c, buf, "0");
	hist_human(buf, sizeof(buf), 1023);
	CHECK_STR(&c, buf, "1023");
	hist_human(buf, sizeof(buf), 1536);
	CHECK_STR(&c, buf, "1.5K");
	hist_human(buf, sizeof(buf), 10240);
	CHECK_STR(&c, buf, "10K");
	hist_human(buf, sizeof(buf), 3.5 * 1024 * 1024);
	CHECK_STR(&c, buf, "3.5M");
	hist_pseudo_label(buf, sizeof(buf), KMT_HIST_PSEUDO(KMT_TYPE_KMALLOC, 256), 12);
	CHECK_STR(&c, buf, "(kmalloc 256)");
	hist_pseudo_label(buf, sizeof(buf), KMT_HIST_PSEUDO(KMT_TYPE_PAGES, 4096), 12);
	CHECK_STR(&c, buf, "(pages order 0)");
	hist_pseudo_label(buf, sizeof(buf), KMT_HIST_PSEUDO(KMT_TYPE_PAGES, 4096 << 3), 12);
	CHECK_STR(&c, buf, "(pages order 3)");
	hist_pseudo_label(buf, sizeof(buf), KMT_HIST_PSEUDO(KMT_TYPE_CACHE, 192), 12);
	CHECK_STR(&c, buf, "(cache size 192)");
	hist_pseudo_label(buf, sizeof(buf), KMT_HIST_PSEUDO(KMT_TYPE_VMALLOC, 8192), 12);
	CHECK_STR(&c, buf, "(vmalloc 8192)");
	hist_pseudo_label(buf, sizeof(buf), KMT_HIST_PSEUDO(KMT_TYPE_PERCPU, 64), 12);
	CHECK_STR(&c, buf, "(percpu 64)");
	/* An area of 5 GiB does not pass for one of 1 GiB. */
	hist_pseudo_label(buf, sizeof(buf), KMT_HIST_PSEUDO(KMT_TYPE_VMALLOC, 5ULL << 30), 12);
	CHECK_STR(&c, buf, "(vmalloc 4G or more)");
	CHECK(&c, KMT_HIST_PSEUDO(KMT_TYPE_VMALLOC, 5ULL << 30) <= KMT_HIST_PSEUDO_MAX);
	CHECK(&c, KMT_HIST_PSEUDO(KMT_TYPE_PAGES, 4096 << 10) <= KMT_HIST_PSEUDO_MAX);
	memset(w, 0, sizeof(w));
	memcpy(w, "workload", 8);
	hist_comm_label(buf, sizeof(buf), w[0], w[1]);
	CHECK_STR(&c, buf, "workload");
	memcpy(w, "kworker/u4:1-ev\n", 16);
	hist_comm_label(buf, sizeof(buf), w[0], w[1]);
	CHECK_STR(&c, buf, "kworker/u4:1-ev?");
	memset(w, 0, sizeof(w));
	hist_comm_label(buf, sizeof(buf), w[0], w[1]);
	CHECK_STR(&c, buf, "?");
	CHECK_STR(&c, hist_kind_name(KMT_BY_CALLSITE, 1), "call sites");
	unit_end(&c);
}

static void test_bar_and_shade(struct unit *u)
{
	struct unit_case c;
	char bar[41];

	unit_begin(&c, u, "hist.bar_shade");
	hist_bar(bar, 40, 10, 10);
	CHECK_STR(&c, bar, "****************************************");
	hist_bar(bar, 8, 5, 10);
	CHECK_STR(&c, bar, "****    ");
	hist_bar(bar, 8, 0, 10);
	CHECK_STR(&c, bar, "        ");
	hist_bar(bar, 8, 0, 0);
	CHECK_STR(&c, bar, "        ");
	CHECK_U64(&c, hist_shade(0, 1000, 9), 0);
	CHECK_U64(&c, hist_shade(1, 1000, 9), 1);
	CHECK_U64(&c, hist_shade(1000, 1000, 9), 9);
	CHECK_U64(&c, hist_shade(1, 1, 9), 9);
	for (unsigned long long v = 1, last = 0; v <= 1000; v++) {
		int s = hist_shade(v, 1000, 9);

		if (s < (int)last || s < 1 || s > 9)
			unit_fail(&c, __FILE__, __LINE__, "shade(%llu) = %d after %llu", v, s, last);
		last = s;
	}
	unit_end(&c);
}

/* Text through a temporary file, NUL-terminated. */
static char *capture(void (*print)(FILE *, const void *), const void *arg)
{
	FILE *f = tmpfile();
	char *buf;
	long n;

	if (!f)
		return NULL;
	print(f, arg);
	fflush(f);
	n = ftell(f);
	buf = calloc(1, n + 1);
	rewind(f);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static void print_slots(FILE *f, const void *slots)
{
	hist_print_log2(f, slots, "bytes");
}

static void test_print_log2(struct unit *u)
{
	static const char want[] =
		"     bytes               : count    distribution\n"
		"         0 -> 1          : 0        |                                        |\n"
		"         2 -> 3          : 0        |                                        |\n"
		"         4 -> 7          : 0        |                                        |\n"
		"         8 -> 15         : 5        |********************                    |\n"
		"        16 -> 31         : 0        |                                        |\n"
		"        32 -> 63         : 10       |****************************************|\n";
	__u64 slots[KMT_HIST_SLOTS] = { 0 };
	struct unit_case c;
	char *got;

	unit_begin(&c, u, "hist.print_log2");
	slots[3] = 5;
	slots[5] = 10;
	got = capture(print_slots, slots);
	CHECK_STR(&c, got, want);
	free(got);
	memset(slots, 0, sizeof(slots));
	got = capture(print_slots, slots);
	CHECK_STR(&c, got, "");
	free(got);
	unit_end(&c);
}

/* --- hist_acc --------------------------------------------------------------- */

struct labeler {
	int calls;
	bool ready;
};

static bool test_label(void *ctx, const struct kmt_hist_key *key, char *buf, size_t size)
{
	struct labeler *l = ctx;

	l->calls++;
	if (!l->ready)
		return false;
	snprintf(buf, size, "key%llu", (unsigned long long)key->id);
	return true;
}

static void add_key(struct hist_acc *acc, __u64 id, __u8 level, int slot, __u64 count,
		    __u64 bytes)
{
	struct kmt_hist_key k = { .id = id, .kind = KMT_BY_CALLSITE, .level = level };
	struct kmt_hist_keyed v = { .bytes = bytes };

	v.slots[slot] = count;
	hist_acc_add_key(acc, &k, &v);
}

static const struct hist_row *find_row(const struct hist_rows *rows, const char *label)
{
	for (size_t i = 0; i < rows->n; i++)
		if (!strcmp(rows->row[i].label, label))
			return &rows->row[i];
	return NULL;
}

/* Two CPUs, counters on two levels: totals summed, then differences. */
static void test_acc_totals(struct unit *u)
{
	struct hist_acc_config cfg = {
		.kinds = 1U << KMT_BY_EVENT | 1U << KMT_BY_ORDER, .page_shift = 12,
	};
	struct hist_acc *acc = hist_acc_new(&cfg);
	struct kmt_hist_cpu *cpu = calloc(2, sizeof(*cpu));
	struct hist_interval iv = { 0 };
	struct unit_case c;

	unit_begin(&c, u, "hist.acc.totals");
	if (!acc || !cpu) {
		unit_fail(&c, __FILE__, __LINE__, "out of memory");
		goto out;
	}
	cpu[0].level[0].slots[KMT_TYPE_KMALLOC][8] = 3;
	cpu[0].level[1].slots[KMT_TYPE_KMALLOC][8] = 2;
	cpu[1].level[0].slots[KMT_TYPE_CACHE][7] = 4;
	cpu[1].level[0].slots[KMT_TYPE_PAGES][12] = 6;
	cpu[1].level[3].slots[KMT_TYPE_PAGES][14] = 1;
	cpu[0].level[0].bytes_alloc[KMT_TYPE_KMALLOC] = 1280;
	cpu[1].level[0].frees[KMT_TYPE_CACHE] = 9;
	cpu[1].level[2].failed[KMT_TYPE_PAGES] = 1;
	cpu[0].level[0].untracked[KMT_BY_CALLSITE] = 7;
	cpu[0].depth = 1; /* not a counter */
	hist_acc_begin(acc);
	hist_acc_add_cpu(acc, &cpu[0]);
	hist_acc_add_cpu(acc, &cpu[1]);
	CHECK(&c, hist_acc_end(acc, 5, &iv) == 0);
	CHECK_U64(&c, iv.slots[8], 5);
	CHECK_U64(&c, iv.slots[7], 4);
	CHECK_U64(&c, iv.slots[12], 6);
	CHECK_U64(&c, iv.allocs[KMT_TYPE_KMALLOC], 5);
	CHECK_U64(&c, iv.allocs[KMT_TYPE_PAGES], 7);
	CHECK_U64(&c, hist_total(iv.allocs), 16);
	CHECK_U64(&c, iv.bytes_alloc[KMT_TYPE_KMALLOC], 1280);
	CHECK_U64(&c, hist_total(iv.frees), 9);
	CHECK_U64(&c, hist_total(iv.failed), 1);
	CHECK_U64(&c, iv.untracked[KMT_BY_CALLSITE], 7);
	CHECK_U64(&c, iv.missed, 5);
	/* event rows, busiest first; order rows from the page buckets */
	CHECK_U64(&c, iv.by[KMT_BY_EVENT].n, 3);
	if (iv.by[KMT_BY_EVENT].n == 3) {
		CHECK_STR(&c, iv.by[KMT_BY_EVENT].row[0].label, "mm_page_alloc");
		CHECK_U64(&c, iv.by[KMT_BY_EVENT].row[0].count, 7);
		CHECK_STR(&c, iv.by[KMT_BY_EVENT].row[2].label, "kmem_cache_alloc");
	}
	CHECK_U64(&c, iv.by[KMT_BY_ORDER].n, 2);
	if (iv.by[KMT_BY_ORDER].n == 2) {
		CHECK_STR(&c, iv.by[KMT_BY_ORDER].row[0].label, "0");
		CHECK_U64(&c, iv.by[KMT_BY_ORDER].row[0].bytes, 6 * 4096);
		CHECK_STR(&c, iv.by[KMT_BY_ORDER].row[1].label, "2");
		CHECK_U64(&c, iv.by[KMT_BY_ORDER].row[1].slots[14], 1);
	}

	/* The next reading: only what grew. */
	cpu[0].level[0].slots[KMT_TYPE_KMALLOC][8] = 10;
	cpu[1].level[0].frees[KMT_TYPE_CACHE] = 10;
	hist_acc_begin(acc);
	hist_acc_add_cpu(acc, &cpu[0]);
	hist_acc_add_cpu(acc, &cpu[1]);
	CHECK(&c, hist_acc_end(acc, 5, &iv) == 0);
	CHECK_U64(&c, hist_total(iv.allocs), 7);
	CHECK_U64(&c, iv.slots[8], 7);
	CHECK_U64(&c, iv.slots[12], 0);
	CHECK_U64(&c, hist_total(iv.frees), 1);
	CHECK_U64(&c, hist_total(iv.failed), 0);
	CHECK_U64(&c, iv.untracked[KMT_BY_CALLSITE], 0);
	CHECK_U64(&c, iv.missed, 0);
	CHECK_U64(&c, iv.by[KMT_BY_EVENT].n, 1);
	CHECK_U64(&c, iv.by[KMT_BY_ORDER].n, 0);
out:
	hist_interval_free(&iv);
	hist_acc_free(acc);
	free(cpu);
	unit_end(&c);
}

/* Keys merged over CPUs and levels; deltas per key; labels asked once. */
static void test_acc_keys(struct unit *u)
{
	struct labeler lab = { 0 };
	struct hist_acc_config cfg = {
		.kinds = 1U << KMT_BY_CALLSITE, .label = test_label, .label_ctx = &lab,
	};
	struct hist_acc *acc = hist_acc_new(&cfg);
	struct hist_interval iv = { 0 };
	const struct hist_row *r;
	struct unit_case c;

	unit_begin(&c, u, "hist.acc.keys");
	if (!acc) {
		unit_fail(&c, __FILE__, __LINE__, "out of memory");
		unit_end(&c);
		return;
	}
	hist_acc_begin(acc);
	add_key(acc, 1, 0, 8, 3, 768);  /* cpu 0 */
	add_key(acc, 1, 0, 8, 2, 512);  /* cpu 1 */
	add_key(acc, 1, 1, 9, 1, 300);  /* in an interrupt */
	add_key(acc, 2, 0, 5, 10, 400);
	CHECK(&c, hist_acc_end(acc, 0, &iv) == 0);
	CHECK_U64(&c, iv.by[KMT_BY_CALLSITE].n, 2);
	/* the label was not ready: the address, and asked again next time */
	r = find_row(&iv.by[KMT_BY_CALLSITE], "0x1");
	CHECK(&c, r != NULL);
	if (r) {
		CHECK_U64(&c, r->count, 6);
		CHECK_U64(&c, r->bytes, 1580);
		CHECK_U64(&c, r->slots[8], 5);
		CHECK_U64(&c, r->slots[9], 1);
	}
	CHECK_STR(&c, iv.by[KMT_BY_CALLSITE].row[0].label, "0x2"); /* busiest first */
	CHECK_U64(&c, lab.calls, 2);

	lab.ready = true;
	hist_acc_begin(acc);
	add_key(acc, 1, 0, 8, 3, 768);
	add_key(acc, 1, 0, 8, 4, 1024); /* cpu 1 allocated 2 more */
	add_key(acc, 1, 1, 9, 1, 300);
	add_key(acc, 2, 0, 5, 10, 400); /* nothing new */
	CHECK(&c, hist_acc_end(acc, 0, &iv) == 0);
	CHECK_U64(&c, iv.by[KMT_BY_CALLSITE].n, 1);
	r = find_row(&iv.by[KMT_BY_CALLSITE], "key1");
	CHECK(&c, r != NULL);
	if (r) {
		CHECK_U64(&c, r->count, 2);
		CHECK_U64(&c, r->bytes, 512);
	}
	CHECK_U64(&c, lab.calls, 3);

	hist_acc_begin(acc);
	add_key(acc, 1, 0, 8, 3, 768);
	add_key(acc, 1, 0, 8, 5, 1280);
	add_key(acc, 1, 1, 9, 1, 300);
	add_key(acc, 2, 0, 5, 11, 440);
	CHECK(&c, hist_acc_end(acc, 0, &iv) == 0);
	CHECK(&c, find_row(&iv.by[KMT_BY_CALLSITE], "key2") != NULL);
	CHECK_U64(&c, lab.calls, 4); /* key1 kept its label */
	hist_interval_free(&iv);
	hist_acc_free(acc);
	unit_end(&c);
}

/* Many keys: the table grows and loses none. */
static void test_acc_many_keys(struct unit *u)
{
	struct hist_acc_config cfg = { .kinds = 1U << KMT_BY_CALLSITE };
	struct hist_acc *acc = hist_acc_new(&cfg);
	struct hist_interval iv = { 0 };
	struct unit_case c;
	__u64 sum = 0;

	unit_begin(&c, u, "hist.acc.many_keys");
	hist_acc_begin(acc);
	for (__u64 i = 1; i <= 5000; i++)
		add_key(acc, 0xffffffff81000000ULL + i * 16, 0, 4, i, i);
	CHECK(&c, hist_acc_end(acc, 0, &iv) == 0);
	CHECK_U64(&c, iv.by[KMT_BY_CALLSITE].n, 5000);
	for (size_t i = 0; i < iv.by[KMT_BY_CALLSITE].n; i++)
		sum += iv.by[KMT_BY_CALLSITE].row[i].count;
	CHECK_U64(&c, sum, 5000ULL * 5001 / 2);
	if (iv.by[KMT_BY_CALLSITE].n)
		CHECK_U64(&c, iv.by[KMT_BY_CALLSITE].row[0].count, 5000);
	hist_interval_free(&iv);
	hist_acc_free(acc);
	unit_end(&c);
}

static void print_interval(FILE *f, const void *iv)
{
	struct hist_text_opts o = { .by = KMT_BY_CALLSITE, .top = 1, .keyed = true };

	hist_text_print(f, iv, &o);
}

static void test_text_keys(struct unit *u)
{
	struct hist_acc_config cfg = { .kinds = 1U << KMT_BY_CALLSITE };
	struct hist_acc *acc = hist_acc_new(&cfg);
	struct hist_interval iv = { 0 };
	struct unit_case c;
	char *got;

	unit_begin(&c, u, "hist.text.keys");
	hist_acc_begin(acc);
	add_key(acc, 0x10, 0, 8, 3, 768);
	add_key(acc, 0x20, 0, 4, 2, 32);
	add_key(acc, 0x30, 0, 4, 1, 16);
	hist_acc_end(acc, 0, &iv);
	iv.seconds = 1;
	got = capture(print_interval, &iv);
	CHECK(&c, got != NULL);
	if (got) {
		CHECK(&c, strstr(got, " interval=1.00s ") != NULL);
		CHECK(&c, strstr(got, " untracked=0\n") != NULL);
		CHECK(&c, strstr(got, "\ncall site = 0x10 (allocs=3 bytes=768)\n") != NULL);
		CHECK(&c, strstr(got, "       256 -> 511        : 3        |****") != NULL);
		CHECK(&c, strstr(got, "0x20") == NULL);
		CHECK(&c, strstr(got, "(2 more call sites with 3 allocations not shown") != NULL);
	}
	free(got);
	hist_interval_free(&iv);
	hist_acc_free(acc);
	unit_end(&c);
}

void test_hist(struct unit *u)
{
	test_slot_values(u);
	test_slot_bounds(u);
	test_front_slot(u);
	test_labels(u);
	test_bar_and_shade(u);
	test_print_log2(u);
	test_acc_totals(u);
	test_acc_keys(u);
	test_acc_many_keys(u);
	test_text_keys(u);
}
