// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Record decoding: the kmemtrace layout byte by byte, features skipped by
 * size, corrupt and truncated records, sequence wraparound; percpu records
 * and their text as each kernel prints the event; and the pfn
 * calibration's choice of struct page base.
 */
#include <string.h>

#include "bpf/kmemsnoop.h"
#include "kernel/pfn.h"
#include "names/gfp.h"
#include "recording/cachetab.h"
#include "recording/record.h"
#include "recording/tasktab.h"
#include "stream/text.h"
#include "unit.h"

/* Builds a record by hand, at explicit offsets, as another writer would. */
struct builder {
	unsigned char buf[512];
	size_t len;
};

static void put(struct builder *b, const void *data, size_t n)
{
	memcpy(b->buf + b->len, data, n);
	b->len += n;
}

static void put_u8(struct builder *b, __u8 v) { put(b, &v, 1); }
static void put_u16(struct builder *b, __u16 v) { put(b, &v, 2); }
static void put_u32(struct builder *b, __u32 v) { put(b, &v, 4); }
static void put_u64(struct builder *b, __u64 v) { put(b, &v, 8); }

static void core(struct builder *b, __u8 event, __u8 type, __s32 seq, __u64 site, __u64 ptr)
{
	b->len = 0;
	put_u8(b, event);
	put_u8(b, type);
	put_u16(b, 0); /* size patched by finish() */
	put_u32(b, (__u32)seq);
	put_u64(b, site);
	put_u64(b, ptr);
}

static void alloc_stats(struct builder *b, __u64 req, __u64 alloc, __u32 gfp, __s32 node)
{
	put_u64(b, req);
	put_u64(b, alloc);
	put_u32(b, gfp);
	put_u32(b, (__u32)node);
}

static void feature(struct builder *b, __u8 id, const void *data, size_t n)
{
	put_u16(b, (__u16)(3 + n));
	put_u8(b, id);
	put(b, data, n);
}

static void finish(struct builder *b)
{
	__u16 size = (__u16)b->len;

	memcpy(b->buf + 2, &size, 2);
}

static void test_kmalloc_record(struct unit *u)
{
	struct unit_case c;
	struct builder b;
	struct kmt_event ev;
	unsigned char time[13] = { 0 }, task[25] = { 0 };
	__u32 cpu = 3, pid = 100, tid = 101;
	__u64 ts = 123456789012ULL;

	unit_begin(&c, u, "record_kmalloc_fields");
	core(&b, KMT_EVENT_ALLOC, KMT_TYPE_KMALLOC, 42, 0xffffffff81234567ULL, 0xffff888012345678ULL);
	alloc_stats(&b, 248, 256, 0xcc0, -1);
	memcpy(time + 1, &cpu, 4);
	memcpy(time + 5, &ts, 8);
	feature(&b, KMT_FEAT_TIME, time, sizeof(time));
	memcpy(task + 1, &pid, 4);
	memcpy(task + 5, &tid, 4);
	memcpy(task + 9, "workload", 8);
	feature(&b, KMT_FEAT_TASK, task, sizeof(task));
	finish(&b);
	CHECK_U64(&c, kmt_decode(b.buf, b.len, 0, &ev), KMT_OK);
	CHECK_U64(&c, ev.event_size, b.len);
	CHECK_U64(&c, ev.seq_num, 42);
	CHECK_U64(&c, ev.call_site, 0xffffffff81234567ULL);
	CHECK_U64(&c, ev.ptr, 0xffff888012345678ULL);
	CHECK(&c, ev.has_alloc);
	CHECK_U64(&c, ev.bytes_req, 248);
	CHECK_U64(&c, ev.bytes_alloc, 256);
	CHECK_U64(&c, ev.gfp_flags, 0xcc0);
	CHECK(&c, ev.numa_node == -1);
	CHECK(&c, ev.has_time && ev.cpu == 3 && ev.timestamp == ts);
	CHECK(&c, ev.has_task && ev.pid == 100 && ev.tid == 101);
	CHECK_STR(&c, ev.comm, "workload");
	CHECK(&c, !ev.has_cache && !ev.has_page);
	CHECK_STR(&c, kmt_event_name(&ev), "kmalloc");
	unit_end(&c);
}

/* The structs BPF writes decode to what was put in them. */
static void test_bpf_struct_layout(struct unit *u)
{
	struct unit_case c;
	struct kmt_rec_cache_free_named rec = {};
	struct kmt_event ev;

	unit_begin(&c, u, "record_cache_free_struct");
	rec.core = (struct kmt_core){ .event_id = KMT_EVENT_FREE, .type_id = KMT_TYPE_CACHE,
				      .event_size = sizeof(rec), .seq_num = -5, .ptr = 0x1000 };
	rec.when = (struct kmt_feat_time_tid){ .size = sizeof(rec.when), .id = KMT_FEAT_TIME_TID,
					       .tid = 8, .timestamp = 77 };
	rec.cache = (struct kmt_feat_cache){ .size = sizeof(rec.cache), .id = KMT_FEAT_CACHE,
					     .flags = KMT_CACHE_ACCOUNTED };
	strcpy(rec.cache.name, "names_cache");
	CHECK_U64(&c, kmt_decode(&rec, sizeof(rec), 0, &ev), KMT_OK);
	CHECK(&c, !ev.has_alloc);
	CHECK(&c, ev.has_tid && !ev.has_task); /* the comm is in a task record */
	CHECK(&c, ev.has_cache && ev.cache_flags == KMT_CACHE_ACCOUNTED);
	CHECK_STR(&c, ev.cache_name, "names_cache");
	CHECK(&c, ev.seq_num == -5 && ev.timestamp == 77 && ev.tid == 8);
	/* The CPU is the ring's (the cpu file's). */
	CHECK_U64(&c, kmt_decode(&rec, sizeof(rec), 3, &ev), KMT_OK);
	CHECK(&c, ev.has_time && ev.cpu == 3);
	CHECK_STR(&c, kmt_event_name(&ev), "kmem_cache_free");
	unit_end(&c);
}

static void percpu_context(struct kmt_feat_time_tid *when)
{
	*when = (struct kmt_feat_time_tid){ .size = sizeof(*when), .id = KMT_FEAT_TIME_TID,
					    .tid = 9, .timestamp = 12941154269000ULL };
}

/* A task record as BPF writes it. */
static struct kmt_rec_task task_record(__u8 why, __u32 pid, __u32 tid, const char *comm,
				       __u64 ts)
{
	struct kmt_rec_task rec = {};

	rec.core = (struct kmt_core){ .event_id = KMT_EVENT_TASK, .type_id = why,
				      .event_size = sizeof(rec) };
	rec.time = (struct kmt_feat_time){ .size = sizeof(rec.time), .id = KMT_FEAT_TIME,
					   .timestamp = ts };
	rec.task = (struct kmt_feat_task){ .size = sizeof(rec.task), .id = KMT_FEAT_TASK,
					   .pid = pid, .tid = tid };
	memcpy(rec.task.comm, comm, strnlen(comm, KMT_COMM_LEN));
	return rec;
}

/* Decodes rec into ev and names its task from t. */
static bool decode_named(struct tasktab *t, const void *rec, size_t size, struct kmt_event *ev)
{
	return kmt_decode(rec, size, 1, ev) == KMT_OK && tasktab_apply(t, ev);
}

/* The kernel's percpu events: with call site, bytes and gfp (5.19+), and
 * without (the record says KMT_PERCPU_COMPUTED); the free. */
static void test_percpu_records(struct unit *u)
{
	struct gfp_names *gfp = gfp_names_new(NULL);
	struct text_sink sink = { .gfp = gfp };
	struct kmt_rec_percpu_alloc a = {};
	struct kmt_rec_percpu_free f = {};
	struct kmt_rec_task task = task_record(KMT_TASK_SEEN, 9, 9, "workload", 0);
	struct tasktab *t = tasktab_new();
	struct unit_case c;
	struct kmt_event ev;
	char line[512];

	unit_begin(&c, u, "record_percpu");
	CHECK(&c, t && !decode_named(t, &task, sizeof(task), &ev));
	a.core = (struct kmt_core){ .event_id = KMT_EVENT_ALLOC, .type_id = KMT_TYPE_PERCPU,
				    .event_size = sizeof(a), .call_site = 0xffffffff81234567ULL,
				    .ptr = 0x60795bb07a40ULL };
	a.alloc = (struct kmt_alloc){ .bytes_req = 64, .bytes_alloc = 256, .gfp_flags = 0xcc0,
				      .numa_node = -1 };
	percpu_context(&a.when);
	a.percpu = (struct kmt_feat_percpu){ .size = sizeof(a.percpu), .id = KMT_FEAT_PERCPU,
					     .flags = KMT_PERCPU_ATOMIC, .off = 59968,
					     .base_addr = 0xffffe8ffffc00000ULL, .align = 8 };
	CHECK(&c, decode_named(t, &a, sizeof(a), &ev));
	CHECK(&c, ev.has_alloc && ev.has_percpu);
	CHECK(&c, ev.percpu_off == 59968 && ev.percpu_align == 8);
	CHECK_U64(&c, ev.percpu_base, 0xffffe8ffffc00000ULL);
	CHECK_STR(&c, kmt_event_name(&ev), "percpu_alloc_percpu");
	text_format_event(&sink, &ev, line, sizeof(line));
	CHECK_STR(&c, line, "        workload-9       [001] 12941.154269: percpu_alloc_percpu: "
			    "call_site=0xffffffff81234567 reserved=0 is_atomic=1 size=64 align=8 "
			    "base_addr=ffffe8ffffc00000 off=59968 ptr=000060795bb07a40 "
			    "bytes_alloc=256 gfp_flags=GFP_KERNEL\n");

	a.percpu.flags = KMT_PERCPU_RESERVED | KMT_PERCPU_COMPUTED;
	CHECK(&c, decode_named(t, &a, sizeof(a), &ev));
	text_format_event(&sink, &ev, line, sizeof(line));
	CHECK_STR(&c, line, "        workload-9       [001] 12941.154269: percpu_alloc_percpu: "
			    "reserved=1 is_atomic=0 size=64 align=8 base_addr=ffffe8ffffc00000 "
			    "off=59968 ptr=000060795bb07a40\n");

	f.core = (struct kmt_core){ .event_id = KMT_EVENT_FREE, .type_id = KMT_TYPE_PERCPU,
				    .event_size = sizeof(f), .ptr = 0x60795bb07a40ULL };
	percpu_context(&f.when);
	f.percpu = (struct kmt_feat_percpu){ .size = sizeof(f.percpu), .id = KMT_FEAT_PERCPU,
					     .off = -8, .base_addr = 0xffffe8ffffc00000ULL };
	CHECK(&c, decode_named(t, &f, sizeof(f), &ev));
	CHECK(&c, !ev.has_alloc && ev.has_percpu && ev.percpu_off == -8);
	CHECK_STR(&c, kmt_event_name(&ev), "percpu_free_percpu");
	text_format_event(&sink, &ev, line, sizeof(line));
	CHECK_STR(&c, line, "        workload-9       [001] 12941.154269: percpu_free_percpu: "
			    "base_addr=ffffe8ffffc00000 off=-8 ptr=000060795bb07a40\n");
	unit_end(&c);
	tasktab_free(t);
	gfp_names_free(gfp);
}

/* Numbers of every width, as the kernel's trace file prints them. */
static void test_text_numbers(struct unit *u)
{
	static const struct {
		unsigned long long ts, req, alloc;
		const char *line;
	} cases[] = {
		{ 5000001000ULL, 0, 7,
		  "           <...>-3       [000]     5.000001: kmalloc: call_site=0x10 "
		  "ptr=0000000000001000 bytes_req=0 bytes_alloc=7 gfp_flags=none node=-1 "
		  "accounted=false\n" },
		{ 123456789012345678ULL, 10, 99,
		  "           <...>-3       [000] 123456789.012345: kmalloc: call_site=0x10 "
		  "ptr=0000000000001000 bytes_req=10 bytes_alloc=99 gfp_flags=none node=-1 "
		  "accounted=false\n" },
		{ 99999999ULL, 100, 18446744073709551615ULL,
		  "           <...>-3       [000]     0.099999: kmalloc: call_site=0x10 "
		  "ptr=0000000000001000 bytes_req=100 bytes_alloc=18446744073709551615 "
		  "gfp_flags=none node=-1 accounted=false\n" },
	};
	struct gfp_names *gfp = gfp_names_new(NULL);
	struct text_sink sink = { .gfp = gfp };
	struct unit_case c;
	struct kmt_event ev;
	char line[512];

	unit_begin(&c, u, "text_numbers");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&ev, 0, sizeof(ev));
		ev.has_alloc = ev.has_time = ev.has_tid = true;
		ev.call_site = 0x10;
		ev.ptr = 0x1000;
		ev.tid = 3;
		ev.numa_node = -1;
		ev.timestamp = cases[i].ts;
		ev.bytes_req = cases[i].req;
		ev.bytes_alloc = cases[i].alloc;
		text_format_event(&sink, &ev, line, sizeof(line));
		CHECK_STR(&c, line, cases[i].line);
	}
	unit_end(&c);
	gfp_names_free(gfp);
}

/*
 * What a sink keeps from earlier lines (the task and CPU, the second, the
 * GFP text) never changes a line: each line of a mixed sequence equals the
 * one a new sink prints, a line cut short included.
 */
static void test_text_memo(struct unit *u)
{
	static const struct {
		unsigned int cpu, tid;
		const char *comm; /* NULL: no task */
		unsigned long long ts;
		unsigned int gfp;
		size_t size; /* of the line's buffer */
	} lines[] = {
		{ 0, 7, "churn", 5000001000ULL, 0xcc0, 512 },
		{ 1, 8, "churn", 5000002000ULL, 0xcc0, 512 },
		{ 0, 7, "churn", 5999999000ULL, 0x400cc0, 512 },
		{ 1, 8, "churn", 6000000000ULL, 0x400cc0, 512 },
		{ 0, 7, "renamed", 6000001000ULL, 0xcc0, 512 },   /* same tid, new comm */
		{ 0, 9, "renamed", 6000002000ULL, 0xcc0, 20 },    /* cut in the task */
		{ 0, 9, "renamed", 6000003000ULL, 0xcc0, 512 },
		{ 8, 7, "renamed", 6000004000ULL, 0xcc0, 512 },   /* CPU 8: CPU 0's memo */
		{ 0, 7, NULL, 6000005000ULL, 0xcc0, 512 },
		{ 0, 7, "renamed", 6000006000ULL, 0xffffffff, 512 }, /* too long to keep */
		{ 0, 7, "renamed", 6000007000ULL, 0xffffffff, 512 },
		{ 1, 8, "churn", 7000000000ULL, 0xcc0, 90 },        /* cut in the flags */
		{ 1, 8, "churn", 7000001000ULL, 0xcc0, 512 },
		{ 1, 1234567, "a-long-comm-nam", 17000001000ULL, 0, 512 },
	};
	struct gfp_names *gfp = gfp_names_new(NULL);
	struct text_sink sink = { .gfp = gfp };
	struct unit_case c;
	struct kmt_event ev;

	unit_begin(&c, u, "text_memo");
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		struct text_sink fresh = { .gfp = gfp };
		char line[512], want[512];
		size_t len, want_len;

		memset(&ev, 0, sizeof(ev));
		ev.has_alloc = ev.has_time = ev.has_tid = true;
		ev.has_task = lines[i].comm != NULL;
		if (ev.has_task)
			snprintf(ev.comm, sizeof(ev.comm), "%s", lines[i].comm);
		ev.cpu = lines[i].cpu;
		ev.tid = lines[i].tid;
		ev.timestamp = lines[i].ts;
		ev.gfp_flags = lines[i].gfp;
		ev.call_site = 0x10;
		ev.ptr = 0x1000;
		ev.numa_node = -1;
		len = text_format_event(&sink, &ev, line, lines[i].size);
		want_len = text_format_event(&fresh, &ev, want, lines[i].size);
		CHECK_STR(&c, line, want);
		CHECK_U64(&c, len, want_len);
		CHECK(&c, len < lines[i].size);
	}
	unit_end(&c);
	gfp_names_free(gfp);
}

static void test_unknown_feature_skipped(struct unit *u)
{
	struct unit_case c;
	struct builder b;
	struct kmt_event ev;
	unsigned char unknown[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	unsigned char page[13] = { 0 };
	__s32 mt = 1;
	__u64 pfn = 0x1234;

	unit_begin(&c, u, "record_unknown_feature_skipped");
	core(&b, KMT_EVENT_ALLOC, KMT_TYPE_PAGES, 7, 0, 0xffffea0000048d00ULL);
	alloc_stats(&b, 4096, 4096, 0x140cca, -1);
	feature(&b, 200, unknown, sizeof(unknown)); /* an id from a future ABI */
	page[0] = 2;                               /* order */
	memcpy(page + 1, &mt, 4);
	memcpy(page + 5, &pfn, 8);
	feature(&b, KMT_FEAT_PAGE, page, sizeof(page));
	put_u8(&b, 0); /* two trailing bytes: too short to be a feature */
	put_u8(&b, 0);
	finish(&b);
	CHECK_U64(&c, kmt_decode(b.buf, b.len, 0, &ev), KMT_OK);
	CHECK(&c, ev.has_page);
	CHECK_U64(&c, ev.order, 2);
	CHECK_U64(&c, ev.migratetype, 1);
	CHECK_U64(&c, ev.pfn, 0x1234);
	CHECK_U64(&c, ev.event_size, b.len);
	unit_end(&c);
}

/* kmemtrace ABI 1 records (no features at all) still decode. */
static void test_abi1_record(struct unit *u)
{
	struct unit_case c;
	struct builder b;
	struct kmt_event ev;

	unit_begin(&c, u, "record_abi1_without_features");
	core(&b, KMT_EVENT_FREE, KMT_TYPE_KMALLOC, 1, 0xffffffff81000000ULL, 0xffff888000001000ULL);
	finish(&b);
	CHECK_U64(&c, kmt_decode(b.buf, b.len, 0, &ev), KMT_OK);
	CHECK(&c, !ev.has_time && !ev.has_task && !ev.has_alloc);
	CHECK_STR(&c, kmt_event_name(&ev), "kfree");
	unit_end(&c);
}

static void test_corrupt_records(struct unit *u)
{
	struct unit_case c;
	struct builder b;
	struct kmt_event ev;
	unsigned char data[5] = { 0 };

	unit_begin(&c, u, "record_corrupt_and_truncated");
	core(&b, KMT_EVENT_ALLOC, KMT_TYPE_KMALLOC, 1, 0, 0);
	alloc_stats(&b, 8, 8, 0, -1);
	feature(&b, KMT_FEAT_TIME, data, sizeof(data));
	finish(&b);
	CHECK_U64(&c, kmt_decode(b.buf, b.len, 0, &ev), KMT_OK); /* a short known feature is ignored */
	CHECK(&c, !ev.has_time);
	CHECK_U64(&c, kmt_decode(b.buf, b.len - 1, 0, &ev), KMT_TRUNCATED);
	CHECK_U64(&c, kmt_decode(b.buf, 10, 0, &ev), KMT_TRUNCATED);
	/* a feature claiming more bytes than the record has */
	b.buf[48] = 200;
	CHECK_U64(&c, kmt_decode(b.buf, b.len, 0, &ev), KMT_BAD_FEATURE);
	b.buf[48] = 1; /* and one smaller than its own header */
	CHECK_U64(&c, kmt_decode(b.buf, b.len, 0, &ev), KMT_BAD_FEATURE);
	/* an alloc too short for its stats, a size below the core */
	core(&b, KMT_EVENT_ALLOC, KMT_TYPE_KMALLOC, 1, 0, 0);
	finish(&b);
	CHECK_U64(&c, kmt_decode(b.buf, b.len, 0, &ev), KMT_BAD_SIZE);
	b.buf[2] = 12;
	b.buf[3] = 0;
	CHECK_U64(&c, kmt_decode(b.buf, b.len, 0, &ev), KMT_BAD_SIZE);
	unit_end(&c);
}

/* kmt_glance() says what kmt_decode() says of the record, its size and
 * time. */
static void check_time_as_decoded(struct unit_case *c, const void *buf, size_t len)
{
	enum kmt_decode_status st;
	struct kmt_glance g = { 0, 0, false, 0 };
	struct kmt_event ev;

	st = kmt_glance(buf, len, &g);
	CHECK_U64(c, st, kmt_decode(buf, len, 0, &ev));
	if (st == KMT_OK) {
		CHECK(c, g.has_time == ev.has_time);
		CHECK_U64(c, g.has_time ? g.timestamp : 0, ev.has_time ? ev.timestamp : 0);
		CHECK_U64(c, g.event_size, ev.event_size);
		CHECK_U64(c, g.event_id, ev.event_id);
	}
}

/* What the live time order reads of a record before holding it. */
static void test_record_time(struct unit *u)
{
	struct kmt_rec_cache_free_named rec = {};
	unsigned char when[13] = { 0 };
	unsigned long long ts = 123456789;
	struct kmt_glance g;
	struct unit_case c;
	struct builder b;

	unit_begin(&c, u, "record_time_only");
	rec.core = (struct kmt_core){ .event_id = KMT_EVENT_FREE, .type_id = KMT_TYPE_CACHE,
				      .event_size = sizeof(rec), .ptr = 0x1000 };
	rec.when = (struct kmt_feat_time_tid){ .size = sizeof(rec.when), .id = KMT_FEAT_TIME_TID,
					       .tid = 8, .timestamp = 77 };
	rec.cache = (struct kmt_feat_cache){ .size = sizeof(rec.cache), .id = KMT_FEAT_CACHE };
	check_time_as_decoded(&c, &rec, sizeof(rec));
	CHECK(&c, kmt_glance(&rec, sizeof(rec), &g) == KMT_OK);
	CHECK(&c, g.has_time && g.timestamp == 77 && g.event_size == sizeof(rec));
	check_time_as_decoded(&c, &rec, sizeof(rec) - 1);
	rec.when.size = 200;
	check_time_as_decoded(&c, &rec, sizeof(rec));
	/* ABI 2-3: the time feature, after the alloc stats */
	core(&b, KMT_EVENT_ALLOC, KMT_TYPE_KMALLOC, 1, 0, 0);
	alloc_stats(&b, 8, 8, 0, -1);
	memcpy(when + 5, &ts, sizeof(ts));
	feature(&b, KMT_FEAT_TIME, when, sizeof(when));
	finish(&b);
	check_time_as_decoded(&c, b.buf, b.len);
	CHECK(&c, kmt_glance(b.buf, b.len, &g) == KMT_OK);
	CHECK(&c, g.has_time && g.timestamp == ts);
	b.buf[24] = 4; /* bytes requested of a record with no alloc stats room */
	b.buf[2] = 40;
	check_time_as_decoded(&c, b.buf, b.len);
	/* ABI 1: none */
	core(&b, KMT_EVENT_FREE, KMT_TYPE_KMALLOC, 1, 0, 0x1000);
	finish(&b);
	check_time_as_decoded(&c, b.buf, b.len);
	check_time_as_decoded(&c, b.buf, 5);
	unit_end(&c);
}

static void test_seq_wraparound(struct unit *u)
{
	struct unit_case c;

	unit_begin(&c, u, "record_sequence_wraparound");
	CHECK(&c, kmt_seq_cmp(1, 2) < 0);
	CHECK(&c, kmt_seq_cmp(2, 1) > 0);
	CHECK(&c, kmt_seq_cmp(5, 5) == 0);
	CHECK(&c, kmt_seq_cmp(-1, 0) < 0);
	/* INT32_MAX is followed by INT32_MIN when the counter wraps */
	CHECK(&c, kmt_seq_cmp(0x7fffffff, (__s32)0x80000000) < 0);
	CHECK(&c, kmt_seq_cmp((__s32)0x80000005, 0x7ffffff0) > 0);
	CHECK(&c, kmt_seq_cmp((__s32)0xfffffff0, 3) < 0);
	unit_end(&c);
}

static void test_pfn_pick_base(struct unit *u)
{
	struct unit_case c;
	const __u64 base = 0xffffea0000000000ULL, sz = 64;
	/* two page tables the fault also allocated, then the data pages */
	__u64 pages[] = { base + 0x999 * sz, base + 0x100 * sz, base + 0x2000 * sz,
			  base + 0x2001 * sz, base + 0x2005 * sz };
	__u64 pfns[] = { 0x2000, 0x2001, 0x2005 };
	__u64 got = 0;

	unit_begin(&c, u, "pfn_pick_base");
	CHECK(&c, pfn_pick_base(pages, 5, pfns, 3, sz, &got) == 0);
	CHECK_U64(&c, got, base);
	/* a single pair proves nothing */
	CHECK(&c, pfn_pick_base(pages + 2, 1, pfns, 1, sz, &got) != 0);
	/* no pair agrees with another */
	pages[2] = base + 0x3000 * sz;
	pages[3] = base + 0x5000 * sz + 4096;
	pages[4] = base + 1;
	CHECK(&c, pfn_pick_base(pages + 2, 3, pfns, 1, sz, &got) != 0);
	/*
	 * A page table allocated right above descending data pages: the base
	 * one page up pairs as many pages as the true one, so neither wins.
	 */
	__u64 run[9], runpfns[8];
	for (int i = 0; i < 9; i++)
		run[i] = base + (0x5008 - i) * sz;
	for (int i = 0; i < 8; i++)
		runpfns[i] = 0x5007 - i;
	CHECK(&c, pfn_pick_base(run, 9, runpfns, 8, sz, &got) != 0);
	/* without it the data pages decide */
	CHECK(&c, pfn_pick_base(run + 1, 8, runpfns, 8, sz, &got) == 0);
	CHECK_U64(&c, got, base);
	unit_end(&c);
}

/* Objects of bulk calls: the task feature's byte 3 names the function. */
static void test_bulk_names(struct unit *u)
{
	static const struct {
		__u8 event, type, flags;
		const char *name;
	} cases[] = {
		{ KMT_EVENT_ALLOC, KMT_TYPE_CACHE, KMT_EV_BULK, "kmem_cache_alloc_bulk" },
		{ KMT_EVENT_FREE, KMT_TYPE_CACHE, KMT_EV_BULK, "kmem_cache_free_bulk" },
		{ KMT_EVENT_FREE, KMT_TYPE_KMALLOC, KMT_EV_BULK, "kfree_bulk" },
		{ KMT_EVENT_FREE, KMT_TYPE_CACHE, 0, "kmem_cache_free" },
		{ KMT_EVENT_FREE, KMT_TYPE_PAGES, KMT_EV_BULK, "mm_page_free" },
		{ KMT_EVENT_FREE, KMT_TYPE_CACHE, KMT_EV_RCU, "kfree_rcu" },
		{ KMT_EVENT_FREE, KMT_TYPE_KMALLOC, KMT_EV_RCU, "kfree_rcu" },
		{ KMT_EVENT_ALLOC, KMT_TYPE_CACHE, KMT_EV_RCU, "kmem_cache_alloc" },
	};
	struct unit_case c;
	struct kmt_rec_cache_free_named rec = {};
	struct kmt_event ev;

	unit_begin(&c, u, "record_bulk_names");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rec.core = (struct kmt_core){ .event_id = cases[i].event, .type_id = cases[i].type,
					      .event_size = sizeof(rec) };
		rec.when = (struct kmt_feat_time_tid){ .size = sizeof(rec.when),
						       .id = KMT_FEAT_TIME_TID,
						 .ev_flags = cases[i].flags };
		rec.cache = (struct kmt_feat_cache){ .size = sizeof(rec.cache),
						     .id = KMT_FEAT_CACHE };
		if (cases[i].event == KMT_EVENT_ALLOC) {
			/* An allocation has its sizes after the core. */
			unsigned char buf[sizeof(rec) + sizeof(struct kmt_alloc)] = { 0 };
			size_t core_len = sizeof(rec.core);

			rec.core.event_size = sizeof(buf);
			memcpy(buf, &rec.core, core_len);
			memcpy(buf + core_len + sizeof(struct kmt_alloc), (char *)&rec + core_len,
			       sizeof(rec) - core_len);
			CHECK_U64(&c, kmt_decode(buf, sizeof(buf), 0, &ev), KMT_OK);
		} else {
			CHECK_U64(&c, kmt_decode(&rec, sizeof(rec), 0, &ev), KMT_OK);
		}
		CHECK_U64(&c, ev.ev_flags, cases[i].flags);
		CHECK_STR(&c, kmt_event_name(&ev), cases[i].name);
	}
	unit_end(&c);
}

/* A cache record names the cache its references point to (cachetab.h). */
static void test_cache_records(struct unit *u)
{
	struct unit_case c;
	struct cachetab *t = cachetab_new();
	struct kmt_rec_cache desc = {};
	struct kmt_rec_cache_free rec = {};
	struct kmt_event ev;

	unit_begin(&c, u, "record_cache_reference");
	desc.core = (struct kmt_core){ .event_id = KMT_EVENT_CACHE, .type_id = KMT_TYPE_CACHE,
				       .event_size = sizeof(desc), .ptr = 0xffff888100042000ULL };
	desc.time = (struct kmt_feat_time){ .size = sizeof(desc.time), .id = KMT_FEAT_TIME };
	desc.info = (struct kmt_feat_cache_info){ .size = sizeof(desc.info),
						  .id = KMT_FEAT_CACHE_INFO,
						  .flags = KMT_CACHE_ACCOUNTED, .object_size = 184,
						  .size_alloc = 192 };
	strcpy(desc.info.name, "a_cache_name_longer_than_thirty_six_bytes");
	rec.core = (struct kmt_core){ .event_id = KMT_EVENT_FREE, .type_id = KMT_TYPE_CACHE,
				      .event_size = sizeof(rec), .ptr = 0x1000 };
	rec.when = (struct kmt_feat_time_tid){ .size = sizeof(rec.when), .id = KMT_FEAT_TIME_TID };
	rec.cache = (struct kmt_feat_cache_ref){ .size = sizeof(rec.cache),
						 .id = KMT_FEAT_CACHE_REF,
						 .cache = 0xffff888100042000ULL };
	CHECK(&c, t != NULL);
	/* Referred to before it is described: no name, but still an event. */
	CHECK_U64(&c, kmt_decode(&rec, sizeof(rec), 0, &ev), KMT_OK);
	CHECK(&c, cachetab_apply(t, &ev) && !ev.has_cache);
	/* The description is learned, not an event. */
	CHECK_U64(&c, kmt_decode(&desc, sizeof(desc), 0, &ev), KMT_OK);
	CHECK(&c, ev.has_cache_info && ev.cache_object_size == 184 && ev.cache_size == 192);
	CHECK(&c, !cachetab_apply(t, &ev));
	CHECK_U64(&c, kmt_decode(&rec, sizeof(rec), 0, &ev), KMT_OK);
	CHECK(&c, ev.has_cache_ref && ev.cache_addr == 0xffff888100042000ULL);
	CHECK(&c, cachetab_apply(t, &ev) && ev.has_cache);
	CHECK_STR(&c, ev.cache_name, "a_cache_name_longer_than_thirty_six_bytes");
	CHECK_U64(&c, ev.cache_flags, KMT_CACHE_ACCOUNTED);
	/* An event that names no cache keeps the flag that says so. */
	rec.cache.flags = KMT_CACHE_NO_NAME;
	rec.cache.cache = 0;
	CHECK_U64(&c, kmt_decode(&rec, sizeof(rec), 0, &ev), KMT_OK);
	CHECK(&c, cachetab_apply(t, &ev) && ev.has_cache && (ev.cache_flags & KMT_CACHE_NO_NAME));
	/* Task records go on (to be applied after the merge); heartbeats stop here. */
	{
		struct kmt_rec_task task = task_record(KMT_TASK_SEEN, 1, 2, "x", 0);
		struct kmt_rec_heartbeat beat = {};

		beat.core = (struct kmt_core){ .event_id = KMT_EVENT_HEARTBEAT,
					       .event_size = sizeof(beat) };
		beat.time = (struct kmt_feat_time){ .size = sizeof(beat.time), .id = KMT_FEAT_TIME };
		beat.beat = (struct kmt_feat_heartbeat){ .size = sizeof(beat.beat),
							 .id = KMT_FEAT_HEARTBEAT };
		CHECK_U64(&c, kmt_decode(&task, sizeof(task), 0, &ev), KMT_OK);
		CHECK(&c, cachetab_apply(t, &ev));
		CHECK_U64(&c, kmt_decode(&beat, sizeof(beat), 0, &ev), KMT_OK);
		CHECK(&c, !cachetab_apply(t, &ev));
	}
	cachetab_free(t);
	unit_end(&c);
}

/*
 * Task records name the tids of the events after them, in the order they
 * come (tasktab.h): described, renamed, the tid taken by a fork; the idle
 * task is swapper/CPU; an event whose task was never described keeps its
 * tid and no name; a record of a kind this reader does not know is skipped
 * by its size.
 */
static void test_task_records(struct unit *u)
{
	struct tasktab *t = tasktab_new();
	struct kmt_rec_task seen = task_record(KMT_TASK_SEEN, 40, 41, "0123456789abcdef", 1);
	struct kmt_rec_task renamed = task_record(KMT_TASK_RENAME, 40, 41, "worker", 2);
	struct kmt_rec_task forked = task_record(KMT_TASK_FORK, 77, 41, "child", 3);
	struct kmt_rec_kfree rec = {};
	unsigned char later[40] = { 0 };
	struct unit_case c;
	struct kmt_event ev;

	unit_begin(&c, u, "record_task");
	forked.core.ptr = 76; /* the parent's tid */
	rec.core = (struct kmt_core){ .event_id = KMT_EVENT_FREE, .type_id = KMT_TYPE_KMALLOC,
				      .event_size = sizeof(rec), .ptr = 0x1000 };
	rec.when = (struct kmt_feat_time_tid){ .size = sizeof(rec.when), .id = KMT_FEAT_TIME_TID,
					       .tid = 41, .timestamp = 5 };
	CHECK(&c, t != NULL);
	/* Before its task is described: the tid, no name. */
	CHECK(&c, decode_named(t, &rec, sizeof(rec), &ev));
	CHECK(&c, ev.has_tid && ev.tid == 41 && !ev.has_task);
	/* The description: a full comm (no NUL), not an event. */
	CHECK_U64(&c, kmt_decode(&seen, sizeof(seen), 0, &ev), KMT_OK);
	CHECK(&c, kmt_is_task_record(&ev) && !kmt_is_memory_event(&ev));
	CHECK(&c, ev.has_task && ev.pid == 40 && ev.tid == 41);
	CHECK_STR(&c, ev.comm, "0123456789abcdef");
	CHECK(&c, !tasktab_apply(t, &ev));
	CHECK(&c, decode_named(t, &rec, sizeof(rec), &ev));
	CHECK(&c, ev.has_task && ev.pid == 40);
	CHECK_STR(&c, ev.comm, "0123456789abcdef");
	CHECK(&c, !decode_named(t, &renamed, sizeof(renamed), &ev));
	CHECK(&c, decode_named(t, &rec, sizeof(rec), &ev));
	CHECK_STR(&c, ev.comm, "worker");
	/* The tid taken by another process's task. */
	CHECK_U64(&c, kmt_decode(&forked, sizeof(forked), 0, &ev), KMT_OK);
	CHECK(&c, ev.type_id == KMT_TASK_FORK && ev.ptr == 76);
	CHECK(&c, !tasktab_apply(t, &ev));
	CHECK(&c, decode_named(t, &rec, sizeof(rec), &ev));
	CHECK(&c, ev.pid == 77);
	CHECK_STR(&c, ev.comm, "child");
	/* The idle task, on the event's CPU. */
	rec.when.tid = 0;
	CHECK(&c, decode_named(t, &rec, sizeof(rec), &ev));
	CHECK(&c, ev.has_task && ev.pid == 0 && ev.tid == 0);
	CHECK_STR(&c, ev.comm, "swapper/1"); /* decode_named: CPU 1's ring */
	/* A heartbeat: its counts, not an event. */
	{
		struct kmt_rec_heartbeat beat = {};

		beat.core = (struct kmt_core){ .event_id = KMT_EVENT_HEARTBEAT,
					       .event_size = sizeof(beat), .seq_num = 7 };
		beat.time = (struct kmt_feat_time){ .size = sizeof(beat.time),
						    .id = KMT_FEAT_TIME, .cpu = 3, .timestamp = 6 };
		beat.beat = (struct kmt_feat_heartbeat){ .size = sizeof(beat.beat),
							 .id = KMT_FEAT_HEARTBEAT,
							 .written = 1ULL << 33, .lost = 12 };
		CHECK_U64(&c, kmt_decode(&beat, sizeof(beat), 0, &ev), KMT_OK);
		CHECK(&c, ev.has_heartbeat && !kmt_is_memory_event(&ev));
		CHECK_U64(&c, ev.beat_written, 1ULL << 33);
		CHECK_U64(&c, ev.beat_lost, 12);
		CHECK(&c, ev.has_time && ev.cpu == 3);
		CHECK(&c, tasktab_apply(t, &ev) && !ev.has_task);
	}
	/* An event id from a later ABI: decoded to be skipped, by its size. */
	_Static_assert(sizeof(later) == sizeof(rec), "a record's bytes");
	memcpy(later, &rec, sizeof(rec));
	later[0] = 9;
	later[24] = 1; /* a body that is no feature: a feature of size 1 */
	later[25] = 0;
	CHECK_U64(&c, kmt_decode(later, sizeof(later), 0, &ev), KMT_OK);
	CHECK(&c, !kmt_is_memory_event(&ev) && !kmt_is_task_record(&ev));
	CHECK_U64(&c, ev.event_size, sizeof(later));
	CHECK(&c, tasktab_apply(t, &ev) && !kmt_record_is_event(later, sizeof(later)));
	tasktab_free(t);
	unit_end(&c);
}

/* A staged ring sample (-o): whole records one after another, each walked
 * by the size its core gives; a size that cannot be a record's, or a
 * record cut short, ends the walk. */
static void test_staged_block(struct unit *u)
{
	unsigned char block[1024];
	size_t sizes[3], len = 0, off = 0, n;
	unsigned char data[13] = { 0 };
	struct unit_case c;
	struct builder b;
	int walked = 0;

	unit_begin(&c, u, "record_staged_block");
	for (int i = 0; i < 3; i++) {
		core(&b, i == 1 ? KMT_EVENT_FREE : KMT_EVENT_ALLOC, KMT_TYPE_KMALLOC, i, 0, 0);
		if (i != 1)
			alloc_stats(&b, 8, 8, 0, -1);
		feature(&b, KMT_FEAT_TIME, data, sizeof(data) - (size_t)i * 4);
		finish(&b);
		memcpy(block + len, b.buf, b.len);
		sizes[i] = b.len;
		len += b.len;
	}
	while ((n = kmt_record_size(block + off, len - off)) != 0) {
		CHECK_U64(&c, n, walked < 3 ? sizes[walked] : 0);
		off += n;
		walked++;
	}
	CHECK_U64(&c, walked, 3);
	CHECK_U64(&c, off, len);
	/* the last record cut short */
	CHECK_U64(&c, kmt_record_size(block + sizes[0] + sizes[1], sizes[2] - 1), 0);
	/* shorter than a core, a size below the core's, a size of 0 */
	CHECK_U64(&c, kmt_record_size(block, sizeof(struct kmt_core) - 1), 0);
	block[2] = sizeof(struct kmt_core) - 1;
	block[3] = 0;
	CHECK_U64(&c, kmt_record_size(block, len), 0);
	block[2] = 0;
	CHECK_U64(&c, kmt_record_size(block, len), 0);
	unit_end(&c);
}

/* Events out of time order as a reader counts them: only allocations and
 * frees with a time; a record that describes or beats never counts, nor
 * moves the time an event is compared with. */
static void test_order_count(struct unit *u)
{
	static const struct {
		__u8 event_id;
		bool has_time;
		unsigned long long ts;
	} seen[] = {
		{ KMT_EVENT_ALLOC, true, 10 },   { KMT_EVENT_FREE, true, 30 },
		{ KMT_EVENT_TASK, true, 5 },     { KMT_EVENT_HEARTBEAT, true, 100 },
		{ KMT_EVENT_ALLOC, true, 20 },   /* late: after 30 */
		{ KMT_EVENT_FREE, false, 0 },    /* no time: not compared */
		{ KMT_EVENT_ALLOC, true, 30 },   /* equal: in order */
		{ KMT_EVENT_FREE, true, 25 },    /* late again */
		{ KMT_EVENT_CACHE, true, 1 },
	};
	struct kmt_order_count order = { 0 };
	struct unit_case c;

	unit_begin(&c, u, "record_order_count");
	for (size_t i = 0; i < sizeof(seen) / sizeof(seen[0]); i++) {
		struct kmt_event ev = { .event_id = seen[i].event_id,
					.has_time = seen[i].has_time,
					.timestamp = seen[i].ts };

		kmt_order_note(&order, &ev);
	}
	CHECK_U64(&c, order.late, 2);
	CHECK_U64(&c, order.last_ts, 30);
	unit_end(&c);
}

void test_record(struct unit *u)
{
	test_task_records(u);
	test_kmalloc_record(u);
	test_bpf_struct_layout(u);
	test_percpu_records(u);
	test_bulk_names(u);
	test_cache_records(u);
	test_text_numbers(u);
	test_text_memo(u);
	test_unknown_feature_skipped(u);
	test_abi1_record(u);
	test_corrupt_records(u);
	test_staged_block(u);
	test_record_time(u);
	test_seq_wraparound(u);
	test_pfn_pick_base(u);
	test_order_count(u);
}
