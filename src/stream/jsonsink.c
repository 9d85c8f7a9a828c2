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
#include "recording/record.h"
#include "recording/sink.h"
#include "recording/tasktab.h"
#include "util/json.h"

#define SYMBOL_MAX 256
#define GFP_MAX 512

struct json_out {
	struct sink sink;
	FILE *out;
	struct ksyms *ksyms;
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

static void put_gfp(struct json_out *j, __u32 flags)
{
	char buf[GFP_MAX];

	gfp_format(j->gfp, flags, buf, sizeof(buf));
	fputs(",\"gfp_flags\":", j->out);
	json_put_string(j->out, buf);
}

/* "call_site" (its symbol) and "call_site_addr". */
static void put_call_site(struct json_out *j, __u64 call_site)
{
	char sym[SYMBOL_MAX];

	if (j->ksyms)
		ksyms_format(j->ksyms, call_site, sym, sizeof(sym));
	else
		snprintf(sym, sizeof(sym), "0x%llx", (unsigned long long)call_site);
	fputs(",\"call_site\":", j->out);
	json_put_string(j->out, sym);
	fprintf(j->out, ",\"call_site_addr\":\"0x%llx\"", (unsigned long long)call_site);
}

static void put_slab(struct json_out *j, const struct kmt_event *ev)
{
	put_call_site(j, ev->call_site);
	fprintf(j->out, ",\"ptr\":\"0x%016llx\"", (unsigned long long)ev->ptr);
	if (ev->has_cache && !(ev->cache_flags & KMT_CACHE_NO_NAME)) {
		fputs(",\"name\":", j->out);
		json_put_string(j->out, ev->cache_name);
	}
	if (!ev->has_alloc)
		return;
	fprintf(j->out, ",\"bytes_req\":%llu,\"bytes_alloc\":%llu", (unsigned long long)ev->bytes_req,
		(unsigned long long)ev->bytes_alloc);
	put_gfp(j, ev->gfp_flags);
	fprintf(j->out, ",\"node\":%d,\"accounted\":%s", ev->numa_node,
		is_accounted(ev) ? "true" : "false");
}

static void put_page(struct json_out *j, const struct kmt_event *ev)
{
	fprintf(j->out, ",\"page\":\"0x%016llx\",\"pfn\":\"0x%llx\",\"order\":%u",
		(unsigned long long)ev->ptr,
		(unsigned long long)(ev->has_page ? ev->pfn : KMT_PFN_NONE),
		ev->has_page ? ev->order : 0);
	if (!ev->has_alloc)
		return;
	fprintf(j->out, ",\"migratetype\":%d", ev->has_page ? ev->migratetype : -1);
	put_gfp(j, ev->gfp_flags);
}

/* The kernel's fields (text.c), and bytes_alloc also where the kernel's
 * event has none: computed, as "bytes_alloc_computed" says. */
static void put_percpu(struct json_out *j, const struct kmt_event *ev)
{
	__u8 flags = ev->has_percpu ? ev->percpu_flags : 0;
	bool full = !(flags & KMT_PERCPU_COMPUTED);

	if (ev->has_alloc && full)
		put_call_site(j, ev->call_site);
	if (ev->has_alloc)
		fprintf(j->out, ",\"reserved\":%d,\"is_atomic\":%d,\"size\":%llu,\"align\":%llu",
			!!(flags & KMT_PERCPU_RESERVED), !!(flags & KMT_PERCPU_ATOMIC),
			(unsigned long long)ev->bytes_req,
			(unsigned long long)(ev->has_percpu ? ev->percpu_align : 0));
	fprintf(j->out, ",\"base_addr\":\"0x%016llx\",\"off\":%d,\"ptr\":\"0x%016llx\"",
		(unsigned long long)(ev->has_percpu ? ev->percpu_base : 0),
		ev->has_percpu ? ev->percpu_off : 0, (unsigned long long)ev->ptr);
	if (!ev->has_alloc)
		return;
	fprintf(j->out, ",\"bytes_alloc\":%llu", (unsigned long long)ev->bytes_alloc);
	if (full)
		put_gfp(j, ev->gfp_flags);
	else
		fputs(",\"bytes_alloc_computed\":true", j->out);
}

/* vmalloc and vfree: the text line's fields; "area": seen through the
 * vmap_area tracepoints (size with the guard page). */
static void put_vmalloc(struct json_out *j, const struct kmt_event *ev)
{
	put_call_site(j, ev->call_site);
	fprintf(j->out, ",\"ptr\":\"0x%016llx\",\"area\":%s", (unsigned long long)ev->ptr,
		ev->vmalloc_flags & KMT_VMALLOC_AREA ? "true" : "false");
	if (!ev->has_alloc)
		return;
	fprintf(j->out, ",\"size\":%llu,\"bytes_alloc\":%llu", (unsigned long long)ev->bytes_req,
		(unsigned long long)ev->bytes_alloc);
	put_gfp(j, ev->gfp_flags);
	fprintf(j->out, ",\"node\":%d", ev->numa_node);
}

/* The text line's fields in its order: task, tid, cpu, time, event, body. */
static void put_event(struct json_out *j, const struct kmt_event *ev)
{
	unsigned long long ts = ev->has_time ? ev->timestamp : 0;

	fputs("{\"comm\":", j->out);
	json_put_string(j->out, ev->has_task ? ev->comm : "<...>");
	fprintf(j->out, ",\"pid\":%lld,\"tid\":%lld,\"cpu\":%u,\"timestamp\":%llu.%06llu,",
		ev->has_task ? (long long)ev->pid : -1, ev->has_tid ? (long long)ev->tid : -1,
		ev->has_time ? ev->cpu : 0, ts / 1000000000ULL, ts % 1000000000ULL / 1000);
	fputs("\"event\":", j->out);
	json_put_string(j->out, kmt_event_name(ev));
	fprintf(j->out, ",\"seq\":%d", ev->seq_num);
	if (ev->type_id == KMT_TYPE_PAGES)
		put_page(j, ev);
	else if (ev->type_id == KMT_TYPE_PERCPU)
		put_percpu(j, ev);
	else if (ev->type_id == KMT_TYPE_VMALLOC)
		put_vmalloc(j, ev);
	else
		put_slab(j, ev);
	fputs("}\n", j->out);
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
	return ferror(j->out) ? json_status(sk, errno ? -errno : -EIO) : 0;
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

struct sink *json_sink_new(FILE *out, struct ksyms *ksyms, const struct gfp_names *gfp)
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
	j->ksyms = ksyms;
	return &j->sink;
}
