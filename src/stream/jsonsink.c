// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --json: the stream's sink, one object per record (jsonsink.h). */
#include "jsonsink.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/kmemsnoop.h"
#include "names/gfp.h"
#include "names/ksyms.h"
#include "recording/cachetab.h"
#include "names/usyms.h"
#include "recording/record.h"
#include "recording/sink.h"
#include "recording/tasktab.h"
#include "util/json.h"
#include "text.h"

#define SYMBOL_MAX 256
#define GFP_MAX 512

struct json_out {
	struct sink sink;
	FILE *out;
	struct ksyms *ksyms;
	struct usyms *usyms;
	unsigned int stack_depth; /* addr_names' depth */
	struct gfp_names *gfp;
	/* For records not decoded before (and so not named). */
	struct cachetab *caches;
	struct tasktab *tasks;
};

static bool is_accounted(const struct kmt_event *ev)
{
	return (ev->gfp_flags & GFP_ACCOUNT) ||
	       (ev->has_cache && (ev->cache_flags & KMT_CACHE_ACCOUNTED));
}

/*
 * A line is built in a buffer and written with one call: fprintf's parsing
 * and a stdio call per field were most of a line's cost (-i --json: 1.6 us
 * a record, against 0.25 for the text).
 */
#define LINE_MAX_BYTES 8192

struct jline {
	FILE *out;
	char *p;
	char buf[LINE_MAX_BYTES];
};

/* Room for n more bytes (n <= LINE_MAX_BYTES): what is built so far goes
 * out first when there is not. */
static void spill(struct jline *l)
{
	fwrite_unlocked(l->buf, 1, l->p - l->buf, l->out);
	l->p = l->buf;
}

static inline __attribute__((always_inline)) void need(struct jline *l, size_t n)
{
	if (__builtin_expect((size_t)(l->buf + sizeof(l->buf) - l->p) < n, 0))
		spill(l);
}

static inline __attribute__((always_inline)) void put_mem(struct jline *l, const char *s,
							  size_t n)
{
	need(l, n);
	memcpy(l->p, s, n);
	l->p += n;
}

/* A string literal, its length known when compiled. */
#define put_lit(l, s) put_mem((l), "" s, sizeof(s) - 1)

static void put_char(struct jline *l, char c)
{
	need(l, 1);
	*l->p++ = c;
}

static void put_string(struct jline *l, const char *s)
{
	size_t len = strlen(s);

	if (JSON_ESCAPED_MAX(len) + 2 > LINE_MAX_BYTES) { /* none is, but a name could be */
		need(l, LINE_MAX_BYTES);
		json_put_string(l->out, s);
		return;
	}
	need(l, JSON_ESCAPED_MAX(len) + 2);
	*l->p++ = '"';
	l->p = json_escape(l->p, s, len);
	*l->p++ = '"';
}

static void put_udec(struct jline *l, unsigned long long v)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_mem(l, p, buf + sizeof(buf) - p);
}

static void put_sdec(struct jline *l, long long v)
{
	if (v < 0) {
		put_char(l, '-');
		put_udec(l, -(unsigned long long)v);
		return;
	}
	put_udec(l, (unsigned long long)v);
}

/* "0x..." quoted, as "0x%016llx" (width 16) or "0x%llx" (0) printed it. */
static void put_hex_string(struct jline *l, unsigned long long v, int width)
{
	char buf[20], *p = buf + sizeof(buf);

	*--p = '"';
	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (buf + sizeof(buf) - 1 - p < width)
		*--p = '0';
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	put_mem(l, p, buf + sizeof(buf) - p);
}

static void put_bool(struct jline *l, bool v)
{
	if (v)
		put_lit(l, "true");
	else
		put_lit(l, "false");
}

static void put_gfp(struct json_out *j, struct jline *l, __u32 flags)
{
	char buf[GFP_MAX];

	gfp_format(j->gfp, flags, buf, sizeof(buf));
	put_lit(l, ",\"gfp_flags\":");
	put_string(l, buf);
}

/* A kernel address as a string: its symbol, or the address without one. */
static void put_kernel_addr(struct json_out *j, struct jline *l, __u64 addr)
{
	char sym[SYMBOL_MAX];

	if (j->ksyms)
		ksyms_format(j->ksyms, addr, sym, sizeof(sym));
	else
		snprintf(sym, sizeof(sym), "0x%llx", (unsigned long long)addr);
	put_string(l, sym);
}

/* "call_site" (its symbol) and "call_site_addr". */
static void put_call_site(struct json_out *j, struct jline *l, __u64 call_site)
{
	put_lit(l, ",\"call_site\":");
	put_kernel_addr(j, l, call_site);
	put_lit(l, ",\"call_site_addr\":");
	put_hex_string(l, call_site, 0);
}

/* "stack": the kernel stack's frames (--stacks), innermost first, named as
 * call sites are. */
static void put_kstack(struct json_out *j, struct jline *l, const struct kmt_event *ev)
{
	put_lit(l, ",\"stack\":[");
	__u32 first = text_kstack_start(j->ksyms, ev);
	__u32 end = text_stack_end(first, ev->kstack_nr, j->stack_depth);

	for (__u32 i = first; i < end; i++) {
		if (i > first)
			put_char(l, ',');
		put_kernel_addr(j, l, kmt_kstack_ip(ev, i));
	}
	put_char(l, ']');
}

/* "user_stack": the user stack's frames (--user-stacks), innermost first:
 * each its address, and where they are known its object and offset in
 * it, function and offset in that, source file and line. */
static void put_ustack(struct json_out *j, struct jline *l, const struct kmt_event *ev)
{
	int pid = text_ustack_pid(ev);

	put_lit(l, ",\"user_stack\":[");
	for (__u32 i = 0; i < text_stack_end(0, ev->ustack_nr, j->stack_depth); i++) {
		__u64 addr = kmt_ustack_ip(ev, i);
		struct uframe f = { 0 };

		if (j->usyms)
			usyms_name(j->usyms, pid, addr, &f);
		if (i)
			put_char(l, ',');
		put_lit(l, "{\"addr\":");
		put_hex_string(l, addr, 0);
		if (f.object) {
			put_lit(l, ",\"object\":");
			put_string(l, f.object);
			put_lit(l, ",\"offset\":");
			put_hex_string(l, f.offset, 0);
		}
		if (f.func) {
			put_lit(l, ",\"function\":");
			put_string(l, f.func);
			put_lit(l, ",\"function_offset\":");
			put_hex_string(l, f.func_offset, 0);
		}
		if (f.file) {
			put_lit(l, ",\"file\":");
			put_string(l, f.file);
			put_lit(l, ",\"line\":");
			put_udec(l, f.line);
		}
		put_char(l, '}');
	}
	put_char(l, ']');
}

/* An allocation's sizes (the requested one under req_key), GFP flags and
 * node, as slab and vmalloc lines have them. */
static void put_sizes(struct json_out *j, struct jline *l, const struct kmt_event *ev,
		      const char *req_key)
{
	put_mem(l, req_key, strlen(req_key));
	put_udec(l, ev->bytes_req);
	put_lit(l, ",\"bytes_alloc\":");
	put_udec(l, ev->bytes_alloc);
	put_gfp(j, l, ev->gfp_flags);
	put_lit(l, ",\"node\":");
	put_sdec(l, ev->numa_node);
}

static void put_slab(struct json_out *j, struct jline *l, const struct kmt_event *ev)
{
	put_call_site(j, l, ev->call_site);
	put_lit(l, ",\"ptr\":");
	put_hex_string(l, ev->ptr, 16);
	if (ev->has_cache && !(ev->cache_flags & KMT_CACHE_NO_NAME)) {
		put_lit(l, ",\"name\":");
		put_string(l, ev->cache_name);
	}
	if (!ev->has_alloc)
		return;
	put_sizes(j, l, ev, ",\"bytes_req\":");
	put_lit(l, ",\"accounted\":");
	put_bool(l, is_accounted(ev));
}

static void put_page(struct json_out *j, struct jline *l, const struct kmt_event *ev)
{
	put_lit(l, ",\"page\":");
	put_hex_string(l, ev->ptr, 16);
	put_lit(l, ",\"pfn\":");
	put_hex_string(l, ev->has_page ? ev->pfn : KMT_PFN_NONE, 0);
	put_lit(l, ",\"order\":");
	put_udec(l, ev->has_page ? ev->order : 0);
	if (!ev->has_alloc)
		return;
	put_lit(l, ",\"migratetype\":");
	put_sdec(l, ev->has_page ? ev->migratetype : -1);
	put_gfp(j, l, ev->gfp_flags);
}

/* The kernel's fields (text.c), and bytes_alloc also where the kernel's
 * event has none: computed, as "bytes_alloc_computed" says. */
static void put_percpu(struct json_out *j, struct jline *l, const struct kmt_event *ev)
{
	__u8 flags = ev->has_percpu ? ev->percpu_flags : 0;
	bool full = !(flags & KMT_PERCPU_COMPUTED);

	if (ev->has_alloc && full)
		put_call_site(j, l, ev->call_site);
	if (ev->has_alloc) {
		put_lit(l, ",\"reserved\":");
		put_udec(l, !!(flags & KMT_PERCPU_RESERVED));
		put_lit(l, ",\"is_atomic\":");
		put_udec(l, !!(flags & KMT_PERCPU_ATOMIC));
		put_lit(l, ",\"size\":");
		put_udec(l, ev->bytes_req);
		put_lit(l, ",\"align\":");
		put_udec(l, ev->has_percpu ? ev->percpu_align : 0);
	}
	put_lit(l, ",\"base_addr\":");
	put_hex_string(l, ev->has_percpu ? ev->percpu_base : 0, 16);
	put_lit(l, ",\"off\":");
	put_sdec(l, ev->has_percpu ? ev->percpu_off : 0);
	put_lit(l, ",\"ptr\":");
	put_hex_string(l, ev->ptr, 16);
	if (!ev->has_alloc)
		return;
	put_lit(l, ",\"bytes_alloc\":");
	put_udec(l, ev->bytes_alloc);
	if (full)
		put_gfp(j, l, ev->gfp_flags);
	else
		put_lit(l, ",\"bytes_alloc_computed\":true");
}

/* vmalloc and vfree: the text line's fields; "area": seen through the
 * vmap_area tracepoints (size with the guard page). */
static void put_vmalloc(struct json_out *j, struct jline *l, const struct kmt_event *ev)
{
	put_call_site(j, l, ev->call_site);
	put_lit(l, ",\"ptr\":");
	put_hex_string(l, ev->ptr, 16);
	put_lit(l, ",\"area\":");
	put_bool(l, ev->vmalloc_flags & KMT_VMALLOC_AREA);
	if (!ev->has_alloc)
		return;
	put_sizes(j, l, ev, ",\"size\":");
}

/* "timestamp":SECONDS.MICROSECONDS, as the text line has it. */
static void put_timestamp(struct jline *l, unsigned long long ns)
{
	unsigned long long us = ns % 1000000000ULL / 1000;
	char frac[8];

	put_lit(l, ",\"timestamp\":");
	put_udec(l, ns / 1000000000ULL);
	frac[0] = '.';
	for (int i = 6; i >= 1; i--, us /= 10)
		frac[i] = (char)('0' + us % 10);
	frac[7] = ',';
	put_mem(l, frac, sizeof(frac));
}

/* The text line's fields in its order: task, tid, cpu, time, event, body. */
static void put_event(struct json_out *j, const struct kmt_event *ev)
{
	struct jline l;

	l.out = j->out;
	l.p = l.buf;
	put_lit(&l, "{\"comm\":");
	put_string(&l, ev->has_task ? ev->comm : "<...>");
	put_lit(&l, ",\"pid\":");
	put_sdec(&l, ev->has_task ? (long long)ev->pid : -1);
	put_lit(&l, ",\"tid\":");
	put_sdec(&l, ev->has_tid ? (long long)ev->tid : -1);
	put_lit(&l, ",\"cpu\":");
	put_udec(&l, ev->has_time ? ev->cpu : 0);
	put_timestamp(&l, ev->has_time ? ev->timestamp : 0);
	put_lit(&l, "\"event\":");
	put_string(&l, kmt_event_name(ev));
	put_lit(&l, ",\"seq\":");
	put_sdec(&l, ev->seq_num);
	if (ev->type_id == KMT_TYPE_PAGES)
		put_page(j, &l, ev);
	else if (ev->type_id == KMT_TYPE_PERCPU)
		put_percpu(j, &l, ev);
	else if (ev->type_id == KMT_TYPE_VMALLOC)
		put_vmalloc(j, &l, ev);
	else
		put_slab(j, &l, ev);
	if (ev->kstack_nr)
		put_kstack(j, &l, ev);
	if (ev->ustack_nr)
		put_ustack(j, &l, ev);
	put_lit(&l, "}\n");
	/* One thread writes the stream: stdio's lock per line is waste. */
	fwrite_unlocked(l.buf, 1, l.p - l.buf, l.out);
}

static int json_status(struct sink *sk, int err)
{
	if (err == -EPIPE)
		return SINK_GONE;
	snprintf(sk->err, sizeof(sk->err), "writing output: %s", strerror(-err));
	return -1;
}

static int json_begin(struct sink *sk)
{
	(void)sk;
	return 0; /* no header: every line is a whole object */
}

static int json_record(struct sink *sk, int cpu, const void *data, size_t size,
		       const struct kmt_event *ev)
{
	struct json_out *j = (struct json_out *)sk;
	struct kmt_event decoded;

	if (!ev) {
		if (kmt_decode(data, size, cpu, &decoded) != KMT_OK) {
			sk->undecodable++;
			return 0;
		}
		if (!tasktab_apply(j->tasks, &decoded) || !cachetab_apply(j->caches, &decoded))
			return 0; /* a record that describes: its names are taken */
		ev = &decoded;
	}
	put_event(j, ev);
	/* One thread writes the stream: no lock for the look either. */
	return ferror_unlocked(j->out) ? json_status(sk, errno ? -errno : -EIO) : 0;
}

static int json_end(struct sink *sk, const struct sink_losses *lost)
{
	struct json_out *j = (struct json_out *)sk;

	(void)lost; /* the summary on stderr says it */
	if (fflush(j->out) || ferror(j->out))
		return json_status(sk, errno ? -errno : -EIO);
	return 0;
}

static void json_destroy(struct sink *sk)
{
	struct json_out *j = (struct json_out *)sk;

	gfp_names_free(j->gfp);
	cachetab_free(j->caches);
	tasktab_free(j->tasks);
	free(j);
}

static const struct sink_ops json_ops = {
	.begin = json_begin,
	.record = json_record,
	.end = json_end,
	.destroy = json_destroy,
};

struct sink *json_sink_new(FILE *out, const struct addr_names *names,
			   const struct gfp_names *gfp)
{
	struct json_out *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->gfp = gfp_names_copy(gfp);
	j->caches = cachetab_new();
	j->tasks = tasktab_new();
	if (!j->gfp || !j->caches || !j->tasks) {
		gfp_names_free(j->gfp);
		cachetab_free(j->caches);
		tasktab_free(j->tasks);
		free(j);
		return NULL;
	}
	j->sink.ops = &json_ops;
	j->out = out;
	j->ksyms = names->ksyms;
	j->usyms = names->usyms;
	j->stack_depth = names->depth;
	return &j->sink;
}
