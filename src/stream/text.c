// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Text output in the layout of the kernel's trace file with irq-info off:
 * "%16s-%-7d [%03d] %5lu.%06lu: event: fields", the fields as the kernel's
 * own kmem and percpu events print them (include/trace/events/kmem.h,
 * percpu.h), but with real
 * pointers where the kernel prints hashed ones.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names/gfp.h"
#include "names/alloctag.h"
#include "names/ksyms.h"
#include "names/usyms.h"
#include "recording/cachetab.h"
#include "recording/record.h"
#include "recording/sink.h"
#include "recording/tasktab.h"
#include "text.h"


int text_print_header(struct text_sink *sink)
{
	fputs("# tracer: kmemsnoop\n"
	      "#\n"
	      "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
	      "#              | |         |         |         |\n",
	      sink->out);
	return ferror(sink->out) ? -EIO : 0;
}

/*
 * A bounded line builder: snprintf was over half of the per-event cost of
 * text output, and the consumer must keep up with millions of events/s.
 * Numbers are written straight into the line when it has FIELD_ROOM bytes
 * left (always but at a line's truncated end), without a check per byte.
 */
struct line {
	char *p;
	char *end; /* one byte is kept for the NUL */
};

/* The widest number with its padding: 20 digits, widths below 8. */
#define FIELD_ROOM 32

static inline bool has_room(const struct line *l, size_t n)
{
	return (size_t)(l->end - l->p) >= n;
}

static inline void put_mem(struct line *l, const char *s, size_t n)
{
	size_t room = l->end - l->p;

	/* Apart: n a constant, the copy is a few moves rather than a loop. */
	if (__builtin_expect(n <= room, 1)) {
		memcpy(l->p, s, n);
		l->p += n;
		return;
	}
	memcpy(l->p, s, room);
	l->p += room;
}

/* The len bytes kept at s, of a buffer of cap bytes: the whole buffer is
 * copied when the line has room for it, a fixed size copied in a few
 * moves. */
static inline void put_kept(struct line *l, const char *s, size_t len, size_t cap)
{
	if (!has_room(l, cap)) {
		put_mem(l, s, len);
		return;
	}
	memcpy(l->p, s, cap);
	l->p += len;
}

/* A string literal, its length known when compiled. */
#define put_lit(l, s) put_mem((l), "" s, sizeof(s) - 1)

static void put_str(struct line *l, const char *s)
{
	put_mem(l, s, strlen(s));
}

static void put_pad(struct line *l, char c, int n)
{
	if (n <= 0)
		return;
	if ((size_t)n > (size_t)(l->end - l->p))
		n = (int)(l->end - l->p);
	memset(l->p, c, n);
	l->p += n;
}

static int udec_len(unsigned long long v)
{
	static const unsigned long long pow10[] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
		100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
		1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
		1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
		1000000000000000000ULL, 10000000000000000000ULL,
	};
	int n = 1;

	while (n < 20 && v >= pow10[n])
		n++;
	return n;
}

/* v's digits, the last one just before end; two per division, as the
 * times and sizes of every line make this hot. */
static void write_udec(char *end, unsigned long long v)
{
	static const char pairs[] = "00010203040506070809101112131415161718192021222324"
				    "25262728293031323334353637383940414243444546474849"
				    "50515253545556575859606162636465666768697071727374"
				    "75767778798081828384858687888990919293949596979899";

	while (v >= 100) {
		unsigned int two = (unsigned int)(v % 100) * 2;

		v /= 100;
		end -= 2;
		memcpy(end, pairs + two, 2);
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, pairs + v * 2, 2);
	} else {
		*--end = (char)('0' + v);
	}
}

/* v in decimal, right-aligned in width with pad (' ' or '0'). */
static void put_udec(struct line *l, unsigned long long v, int width, char pad)
{
	int n = udec_len(v);

	if (!has_room(l, FIELD_ROOM)) {
		char tmp[20];

		write_udec(tmp + n, v);
		put_pad(l, pad, width - n);
		put_mem(l, tmp, n);
		return;
	}
	if (width > n) {
		memset(l->p, pad, width - n);
		l->p += width - n;
	}
	l->p += n;
	write_udec(l->p, v);
}

static void put_sdec(struct line *l, long long v)
{
	if (v < 0) {
		put_lit(l, "-");
		put_udec(l, -(unsigned long long)v, 0, ' ');
		return;
	}
	put_udec(l, v, 0, ' ');
}

/* v's n hex digits, the last one just before end; a byte per step, as
 * every line has a pointer or two. */
static void write_hex(char *end, unsigned long long v, int n)
{
	static const char digits[] = "0123456789abcdef";

	for (; n >= 2; n -= 2, v >>= 8) {
		end -= 2;
		end[0] = digits[v >> 4 & 15];
		end[1] = digits[v & 15];
	}
	if (n)
		*--end = digits[v & 15];
}

/* v in lowercase hex, zero-padded to width. */
static void put_hex(struct line *l, unsigned long long v, int width)
{
	int n = v ? (67 - __builtin_clzll(v)) / 4 : 1;
	char tmp[16];

	if (!has_room(l, FIELD_ROOM)) {
		write_hex(tmp + n, v, n);
		put_pad(l, '0', width - n);
		put_mem(l, tmp, n);
		return;
	}
	if (width > n) {
		memset(l->p, '0', width - n);
		l->p += width - n;
	}
	l->p += n;
	write_hex(l->p, v, n);
}

static void put_call_site(struct text_sink *sink, struct line *l, __u64 addr)
{
	if (sink->ksyms) {
		l->p += ksyms_format(sink->ksyms, addr, l->p, l->end - l->p + 1);
		return;
	}
	put_mem(l, "0x", 2);
	put_hex(l, addr, 0);
}

static void put_gfp(struct text_sink *sink, struct line *l, __u32 flags)
{
	/* Fibonacci hashing: the usual flags differ in a bit or two (GFP_KERNEL,
	 * with __GFP_ZERO, _ACCOUNT), which a fold of the bits put in one slot,
	 * where they pushed one another out on every other line. */
	unsigned int slot = (flags * 2654435761u) >> (32 - __builtin_ctz(TEXT_GFP_SLOTS));
	struct text_gfp_memo *m = &sink->gfp_memo[slot];
	size_t len;

	if (m->len && m->flags == flags) {
		put_kept(l, m->text, m->len, sizeof(m->text));
		return;
	}
	len = gfp_format(sink->gfp, flags, m->text, sizeof(m->text));
	m->flags = flags;
	m->len = len < sizeof(m->text) - 1 ? (unsigned char)len : 0; /* else cut short */
	if (m->len) {
		put_kept(l, m->text, m->len, sizeof(m->text));
		return;
	}
	l->p += gfp_format(sink->gfp, flags, l->p, l->end - l->p + 1);
}

static const char *accounted(const struct kmt_event *ev)
{
	bool acct = (ev->gfp_flags & GFP_ACCOUNT) ||
		    (ev->has_cache && (ev->cache_flags & KMT_CACHE_ACCOUNTED));

	return acct ? "true" : "false";
}

static void put_slab_body(struct text_sink *sink, struct line *l, const struct kmt_event *ev)
{
	put_lit(l, "call_site=");
	put_call_site(sink, l, ev->call_site);
	put_lit(l, " ptr=");
	put_hex(l, ev->ptr, 16);
	if (ev->has_cache && !(ev->cache_flags & KMT_CACHE_NO_NAME)) {
		put_lit(l, " name=");
		put_str(l, ev->cache_name);
	}
	if (!ev->has_alloc)
		return;
	put_lit(l, " bytes_req=");
	put_udec(l, ev->bytes_req, 0, ' ');
	put_lit(l, " bytes_alloc=");
	put_udec(l, ev->bytes_alloc, 0, ' ');
	put_lit(l, " gfp_flags=");
	put_gfp(sink, l, ev->gfp_flags);
	put_lit(l, " node=");
	put_sdec(l, ev->numa_node);
	put_lit(l, " accounted=");
	put_str(l, accounted(ev));
}

static void put_page_body(struct text_sink *sink, struct line *l, const struct kmt_event *ev)
{
	put_lit(l, "page=");
	put_hex(l, ev->ptr, 16);
	put_lit(l, " pfn=0x");
	put_hex(l, ev->has_page ? ev->pfn : KMT_PFN_NONE, 0);
	put_lit(l, " order=");
	put_udec(l, ev->has_page ? ev->order : 0, 0, ' ');
	if (!ev->has_alloc)
		return;
	put_lit(l, " migratetype=");
	put_sdec(l, ev->has_page ? ev->migratetype : -1);
	put_lit(l, " gfp_flags=");
	put_gfp(sink, l, ev->gfp_flags);
}

/*
 * include/trace/events/percpu.h: since 5.19 the allocation starts with
 * call_site= and ends with bytes_alloc= gfp_flags=; the records of an
 * older kernel (KMT_PERCPU_COMPUTED) print as that kernel does.
 */
static void put_percpu_body(struct text_sink *sink, struct line *l, const struct kmt_event *ev)
{
	__u8 flags = ev->has_percpu ? ev->percpu_flags : 0;
	bool full = ev->has_alloc && !(flags & KMT_PERCPU_COMPUTED);

	if (ev->has_alloc) {
		if (full) {
			put_lit(l, "call_site=");
			put_call_site(sink, l, ev->call_site);
			put_lit(l, " ");
		}
		put_lit(l, "reserved=");
		put_udec(l, !!(flags & KMT_PERCPU_RESERVED), 0, ' ');
		put_lit(l, " is_atomic=");
		put_udec(l, !!(flags & KMT_PERCPU_ATOMIC), 0, ' ');
		put_lit(l, " size=");
		put_udec(l, ev->bytes_req, 0, ' ');
		put_lit(l, " align=");
		put_udec(l, ev->has_percpu ? ev->percpu_align : 0, 0, ' ');
		put_lit(l, " ");
	}
	put_lit(l, "base_addr=");
	put_hex(l, ev->has_percpu ? ev->percpu_base : 0, 16);
	put_lit(l, " off=");
	put_sdec(l, ev->has_percpu ? ev->percpu_off : 0);
	put_lit(l, " ptr=");
	put_hex(l, ev->ptr, 16);
	if (!full)
		return;
	put_lit(l, " bytes_alloc=");
	put_udec(l, ev->bytes_alloc, 0, ' ');
	put_lit(l, " gfp_flags=");
	put_gfp(sink, l, ev->gfp_flags);
}

/*
 * vmalloc: call_site=%pS ptr=%p size=%lu gfp_flags=%s node=%d, and
 * vfree: call_site=%pS ptr=%p, in the kmem events' style (size: what the
 * caller asked for).  Through the vmap_area tracepoints, the kernel's own
 * fields that the record keeps, and the call site kmemsnoop found.
 */
static void put_vmalloc_body(struct text_sink *sink, struct line *l, const struct kmt_event *ev)
{
	if (ev->vmalloc_flags & KMT_VMALLOC_AREA) {
		if (ev->has_alloc) {
			put_lit(l, "va_start: ");
			put_udec(l, ev->ptr, 0, ' ');
			put_lit(l, " size=");
			put_udec(l, ev->bytes_req, 0, ' ');
			put_lit(l, " failed=");
			put_str(l, ev->ptr ? "0" : "1");
		} else {
			put_lit(l, "va_start=0x");
			put_hex(l, ev->ptr, 0);
		}
		put_lit(l, " call_site=");
		put_call_site(sink, l, ev->call_site);
		return;
	}
	put_lit(l, "call_site=");
	put_call_site(sink, l, ev->call_site);
	put_lit(l, " ptr=");
	put_hex(l, ev->ptr, 16);
	if (!ev->has_alloc)
		return;
	put_lit(l, " size=");
	put_udec(l, ev->bytes_req, 0, ' ');
	put_lit(l, " gfp_flags=");
	put_gfp(sink, l, ev->gfp_flags);
	put_lit(l, " node=");
	put_sdec(l, ev->numa_node);
}

_Static_assert(TEXT_MEMO_COMM == sizeof(((struct kmt_event *)0)->comm), "a comm fits the memo");

/* "%16s-%-7d [%03u] " as the kernel's trace file, taken from the last line
 * when its task and CPU were the same. */
static void put_task_cpu(struct text_memo *m, struct line *l, const struct kmt_event *ev)
{
	const char *comm = ev->has_task ? ev->comm : "<...>";
	unsigned char flags = ev->has_task | ev->has_tid << 1 | ev->has_time << 2;
	unsigned int tid = ev->has_tid ? ev->tid : 0;
	unsigned int cpu = ev->has_time ? ev->cpu : 0;
	char *start = l->p, *tid_start;
	size_t len;

	if (m->len && m->flags == flags && m->tid == tid && m->cpu == cpu &&
	    !memcmp(m->comm, ev->comm, sizeof(m->comm))) {
		put_kept(l, m->text, m->len, sizeof(m->text));
		return;
	}
	put_pad(l, ' ', 16 - (int)strlen(comm));
	put_str(l, comm);
	put_lit(l, "-");
	tid_start = l->p;
	put_sdec(l, ev->has_tid ? (long long)ev->tid : -1);
	put_pad(l, ' ', 7 - (int)(l->p - tid_start));
	put_lit(l, " [");
	put_udec(l, cpu, 3, '0');
	put_lit(l, "] ");
	len = l->p - start;
	if (l->p == l->end || len > sizeof(m->text))
		return; /* truncated, or too long to keep */
	memcpy(m->text, start, len);
	memcpy(m->comm, ev->comm, sizeof(m->comm));
	m->len = (unsigned char)len;
	m->flags = flags;
	m->tid = tid;
	m->cpu = cpu;
}

/* "%5llu.%06llu", the seconds kept from the last line. */
static void put_time(struct text_memo *m, struct line *l, unsigned long long ts)
{
	unsigned long long second = ts / 1000000000ULL;

	if (!m->second_len || m->second != second) {
		struct line s = { m->second_text, m->second_text + sizeof(m->second_text) - 1 };

		put_udec(&s, second, 5, ' ');
		put_lit(&s, ".");
		m->second = second;
		m->second_len = (unsigned char)(s.p - m->second_text);
	}
	put_kept(l, m->second_text, m->second_len, sizeof(m->second_text));
	put_udec(l, ts % 1000000000ULL / 1000, 6, '0');
}

/* "%16s-%-7d [%03u] %5llu.%06llu: name: " as the kernel's trace file. */
static void put_context(struct text_memo *m, struct line *l, const struct kmt_event *ev)
{
	put_task_cpu(m, l, ev);
	put_time(m, l, ev->has_time ? ev->timestamp : 0);
	put_lit(l, ": ");
	put_str(l, kmt_event_name(ev));
	put_lit(l, ": ");
}

size_t text_format_event(struct text_sink *sink, const struct kmt_event *ev, char *buf,
			 size_t size)
{
	struct line l = { .p = buf, .end = buf + size - 2 }; /* room for '\n' and NUL */

	if (size < 2) {
		if (size)
			buf[0] = 0;
		return 0;
	}
	put_context(&sink->memo[(ev->has_time ? ev->cpu : 0) % TEXT_MEMO_CPUS], &l, ev);
	if (ev->type_id == KMT_TYPE_PAGES)
		put_page_body(sink, &l, ev);
	else if (ev->type_id == KMT_TYPE_PERCPU)
		put_percpu_body(sink, &l, ev);
	else if (ev->type_id == KMT_TYPE_VMALLOC)
		put_vmalloc_body(sink, &l, ev);
	else
		put_slab_body(sink, &l, ev);
	*l.p++ = '\n';
	*l.p = 0;
	return l.p - buf;
}

__u32 text_kstack_start(const struct ksyms *ks, const struct kmt_event *ev)
{
	return alloctag_stack_start(ks, ev->kstack, ev->kstack_nr);
}

/* The event's kernel stack (--stacks) as ftrace's stacktrace option
 * prints one: a line per frame, " => function+offset/size". */
static int print_kstack(struct text_sink *sink, const struct kmt_event *ev)
{
	char line[256];

	__u32 first = text_kstack_start(sink->ksyms, ev);
	__u32 end = text_stack_end(first, ev->kstack_nr, sink->stack_depth);

	for (__u32 i = first; i < end; i++) {
		struct line l = { line, line + sizeof(line) - 2 };

		put_mem(&l, " => ", 4);
		put_call_site(sink, &l, kmt_kstack_ip(ev, i));
		*l.p++ = '\n';
		if (fwrite_unlocked(line, 1, l.p - line, sink->out) != (size_t)(l.p - line))
			return errno ? -errno : -EIO;
	}
	return 0;
}

int text_ustack_pid(const struct kmt_event *ev)
{
	/* A thread's id names its process's maps in /proc as well. */
	return ev->has_task && ev->pid ? (int)ev->pid : (int)ev->tid;
}

/* The event's user stack (--user-stacks) as ftrace's userstacktrace
 * option prints one: a "<user stack trace>" line, then a line per frame. */
static int print_ustack(struct text_sink *sink, const struct kmt_event *ev)
{
	static const char title[] = " <user stack trace>\n";
	int pid = text_ustack_pid(ev);
	char line[PATH_MAX + 512];

	if (fwrite_unlocked(title, 1, sizeof(title) - 1, sink->out) != sizeof(title) - 1)
		return errno ? -errno : -EIO;
	for (__u32 i = 0; i < text_stack_end(0, ev->ustack_nr, sink->stack_depth); i++) {
		__u64 addr = kmt_ustack_ip(ev, i);
		struct uframe f = { 0 };
		int n;

		if (sink->usyms)
			usyms_name(sink->usyms, pid, addr, &f);
		n = uframe_format(&f, addr, false, line + 4, sizeof(line) - 5);
		n = n < 0 ? 4 : 4 + ((size_t)n < sizeof(line) - 5 ? n : (int)sizeof(line) - 6);
		memcpy(line, " => ", 4);
		line[n++] = '\n';
		if (fwrite_unlocked(line, 1, n, sink->out) != (size_t)n)
			return errno ? -errno : -EIO;
	}
	return 0;
}

int text_print_event(struct text_sink *sink, const struct kmt_event *ev)
{
	char line[1024];
	size_t len = text_format_event(sink, ev, line, sizeof(line));
	int ret = 0;

	/* One thread writes the stream: stdio's lock per line is waste. */
	if (fwrite_unlocked(line, 1, len, sink->out) != len)
		return errno ? -errno : -EIO;
	if (ev->kstack_nr)
		ret = print_kstack(sink, ev);
	if (!ret && ev->ustack_nr)
		ret = print_ustack(sink, ev);
	return ret;
}

/* --- the text sink ---------------------------------------------------------- */

struct text_out {
	struct sink sink;
	struct text_sink text;
	struct gfp_names *gfp;
	/* For records not decoded before (and so not named). */
	struct cachetab *caches;
	struct tasktab *tasks;
};

static int text_out_status(struct sink *sk, int err)
{
	if (err == -EPIPE)
		return SINK_GONE;
	snprintf(sk->err, sizeof(sk->err), "writing output: %s", strerror(-err));
	return -1;
}

static int text_out_begin(struct sink *sk)
{
	struct text_out *t = (struct text_out *)sk;
	int ret = text_print_header(&t->text);

	return ret ? text_out_status(sk, errno ? -errno : ret) : 0;
}

static int text_out_record(struct sink *sk, int cpu, const void *data, size_t size,
			   const struct kmt_event *ev)
{
	struct text_out *t = (struct text_out *)sk;
	struct kmt_event decoded;
	int ret;

	if (!ev) {
		if (kmt_decode(data, size, cpu, &decoded) != KMT_OK) {
			sk->undecodable++;
			return 0;
		}
		if (!tasktab_apply(t->tasks, &decoded) || !cachetab_apply(t->caches, &decoded))
			return 0; /* a record that describes: its names are taken */
		ev = &decoded;
	}
	ret = text_print_event(&t->text, ev);
	return ret ? text_out_status(sk, ret) : 0;
}

static int text_out_end(struct sink *sk, const struct sink_losses *lost)
{
	struct text_out *t = (struct text_out *)sk;

	(void)lost; /* the summary on stderr says it */
	if (fflush(t->text.out) || ferror(t->text.out))
		return text_out_status(sk, errno ? -errno : -EIO);
	return 0;
}

static void text_out_destroy(struct sink *sk)
{
	struct text_out *t = (struct text_out *)sk;

	gfp_names_free(t->gfp);
	cachetab_free(t->caches);
	tasktab_free(t->tasks);
	free(t);
}

static const struct sink_ops text_out_ops = {
	.begin = text_out_begin,
	.record = text_out_record,
	.end = text_out_end,
	.destroy = text_out_destroy,
};

struct sink *text_sink_new(FILE *out, const struct addr_names *names,
			   const struct gfp_names *gfp)
{
	struct text_out *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->gfp = gfp_names_copy(gfp);
	t->caches = cachetab_new();
	t->tasks = tasktab_new();
	if (!t->gfp || !t->caches || !t->tasks) {
		gfp_names_free(t->gfp);
		cachetab_free(t->caches);
		tasktab_free(t->tasks);
		free(t);
		return NULL;
	}
	t->sink.ops = &text_out_ops;
	t->text = (struct text_sink){ .out = out, .ksyms = names->ksyms, .usyms = names->usyms,
				      .stack_depth = names->depth, .gfp = t->gfp };
	return &t->sink;
}
