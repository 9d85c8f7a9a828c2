// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Text output in the layout of the kernel's trace file with irq-info off:
 * "%16s-%-7d [%03d] %5lu.%06lu: event: fields", the fields as the kernel's
 * own kmem events print them (include/trace/events/kmem.h), but with real
 * pointers where the kernel prints hashed ones.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "gfp.h"
#include "ksyms.h"
#include "record.h"
#include "text.h"

#define GFP_ACCOUNT 0x400000u /* __GFP_ACCOUNT: the same bit on every kernel since 4.x */

int text_print_header(struct text_sink *sink)
{
	fputs("# tracer: kmemsnoop\n"
	      "#\n"
	      "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
	      "#              | |         |         |         |\n",
	      sink->out);
	return ferror(sink->out) ? -EIO : 0;
}

static size_t fmt_call_site(struct text_sink *sink, __u64 addr, char *buf, size_t size)
{
	if (sink->ksyms)
		return ksyms_format(sink->ksyms, addr, buf, size);
	return snprintf(buf, size, "0x%llx", (unsigned long long)addr);
}

static const char *accounted(const struct kmt_event *ev)
{
	bool acct = (ev->gfp_flags & GFP_ACCOUNT) ||
		    (ev->has_cache && (ev->cache_flags & KMT_CACHE_ACCOUNTED));

	return acct ? "true" : "false";
}

/* Appends with snprintf semantics, never running past size. */
#define APPEND(buf, size, len, ...)                                                     \
	do {                                                                            \
		if ((len) < (size))                                                     \
			(len) += snprintf((buf) + (len), (size) - (len), __VA_ARGS__);  \
	} while (0)

static size_t fmt_slab_body(struct text_sink *sink, const struct kmt_event *ev, char *buf,
			    size_t size)
{
	char site[160], gfp[256];
	size_t len = 0;
	bool named = ev->has_cache && !(ev->cache_flags & KMT_CACHE_NO_NAME);

	fmt_call_site(sink, ev->call_site, site, sizeof(site));
	APPEND(buf, size, len, "call_site=%s ptr=%016llx", site, (unsigned long long)ev->ptr);
	if (named)
		APPEND(buf, size, len, " name=%s", ev->cache_name);
	if (!ev->has_alloc)
		return len;
	gfp_format(sink->gfp, ev->gfp_flags, gfp, sizeof(gfp));
	APPEND(buf, size, len, " bytes_req=%llu bytes_alloc=%llu gfp_flags=%s node=%d accounted=%s",
	       (unsigned long long)ev->bytes_req, (unsigned long long)ev->bytes_alloc, gfp,
	       ev->numa_node, accounted(ev));
	return len;
}

static size_t fmt_page_body(struct text_sink *sink, const struct kmt_event *ev, char *buf,
			    size_t size)
{
	char gfp[256];
	size_t len = 0;
	unsigned long long pfn = ev->has_page ? ev->pfn : KMT_PFN_NONE;

	APPEND(buf, size, len, "page=%016llx pfn=0x%llx order=%u", (unsigned long long)ev->ptr,
	       pfn, ev->has_page ? ev->order : 0);
	if (!ev->has_alloc)
		return len;
	gfp_format(sink->gfp, ev->gfp_flags, gfp, sizeof(gfp));
	APPEND(buf, size, len, " migratetype=%d gfp_flags=%s", ev->has_page ? ev->migratetype : -1,
	       gfp);
	return len;
}

size_t text_format_event(struct text_sink *sink, const struct kmt_event *ev, char *buf,
			 size_t size)
{
	unsigned long long ts = ev->has_time ? ev->timestamp : 0;
	size_t len = 0;

	APPEND(buf, size, len, "%16s-%-7d [%03u] %5llu.%06llu: %s: ",
	       ev->has_task ? ev->comm : "<...>", ev->has_task ? (int)ev->tid : -1,
	       ev->has_time ? ev->cpu : 0, ts / 1000000000ULL, ts % 1000000000ULL / 1000,
	       kmt_event_name(ev));
	if (len >= size)
		return size - 1;
	if (ev->type_id == KMT_TYPE_PAGES)
		len += fmt_page_body(sink, ev, buf + len, size - len);
	else
		len += fmt_slab_body(sink, ev, buf + len, size - len);
	if (len >= size - 1)
		len = size - 2;
	buf[len++] = '\n';
	buf[len] = 0;
	return len;
}

int text_print_event(struct text_sink *sink, const struct kmt_event *ev)
{
	char line[1024];
	size_t len = text_format_event(sink, ev, line, sizeof(line));

	if (fwrite(line, 1, len, sink->out) != len)
		return errno ? -errno : -EIO;
	return 0;
}
