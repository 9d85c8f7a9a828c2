// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Decoding kmemtrace records: core, alloc stats, then features by size. */
#include <stddef.h>
#include <string.h>

#include "record.h"

#include "kernel/sources.h"

#define CORE_SIZE sizeof(struct kmt_core)
#define ALLOC_SIZE sizeof(struct kmt_alloc)
#define FEAT_HDR_SIZE 3

static void copy_str(char *dst, const char *src, size_t max)
{
	size_t n = strnlen(src, max);

	memcpy(dst, src, n);
	dst[n] = 0;
}

/* Features too short for what kmemsnoop reads from them are ignored. */
/* A stack feature (struct kmt_feat_kstack): its frames at *ip, as many as
 * the feature holds whatever its nr says. */
static __u32 read_stack(const unsigned char *f, __u16 size, const unsigned char **ip)
{
	struct kmt_feat_kstack k;
	__u32 room;

	if (size < sizeof(k))
		return 0;
	memcpy(&k, f, sizeof(k));
	room = (size - sizeof(k)) / sizeof(__u64);
	*ip = f + sizeof(k);
	return k.nr < room ? k.nr : room;
}

static void decode_feature(const unsigned char *f, __u16 size, struct kmt_event *ev)
{
	switch (f[2]) {
	case KMT_FEAT_TIME: {
		struct kmt_feat_time t;

		if (size < sizeof(t))
			return;
		memcpy(&t, f, sizeof(t));
		ev->has_time = true;
		ev->cpu = t.cpu;
		ev->timestamp = t.timestamp;
		return;
	}
	case KMT_FEAT_TASK: {
		struct kmt_feat_task t;

		if (size < offsetof(struct kmt_feat_task, reserved2))
			return;
		memcpy(&t, f, offsetof(struct kmt_feat_task, reserved2));
		ev->has_task = ev->has_tid = true;
		ev->ev_flags = t.ev_flags;
		ev->pid = t.pid;
		ev->tid = t.tid;
		copy_str(ev->comm, t.comm, KMT_COMM_LEN);
		return;
	}
	case KMT_FEAT_HEARTBEAT: {
		struct kmt_feat_heartbeat h;

		if (size < sizeof(h))
			return;
		memcpy(&h, f, sizeof(h));
		ev->has_heartbeat = true;
		ev->beat_written = h.written;
		ev->beat_lost = h.lost;
		return;
	}
	case KMT_FEAT_TIME_TID: {
		struct kmt_feat_time_tid w;

		if (size < sizeof(w))
			return;
		memcpy(&w, f, sizeof(w));
		ev->has_time = ev->has_tid = true;
		ev->ev_flags = w.ev_flags;
		ev->tid = w.tid;
		ev->timestamp = w.timestamp;
		return;
	}
	case KMT_FEAT_TID: {
		struct kmt_feat_tid t;

		if (size < sizeof(t))
			return;
		memcpy(&t, f, sizeof(t));
		ev->has_tid = true;
		ev->ev_flags = t.ev_flags;
		ev->tid = t.tid;
		return;
	}
	case KMT_FEAT_CACHE_REF: {
		struct kmt_feat_cache_ref r;

		if (size < sizeof(r))
			return;
		memcpy(&r, f, sizeof(r));
		ev->has_cache_ref = true;
		ev->cache_flags = r.flags;
		ev->cache_addr = r.cache;
		return;
	}
	case KMT_FEAT_CACHE_INFO: {
		struct kmt_feat_cache_info info = { 0 };
		size_t name_len = size - offsetof(struct kmt_feat_cache_info, name);

		if (size < offsetof(struct kmt_feat_cache_info, name))
			return;
		memcpy(&info, f, size < sizeof(info) ? size : sizeof(info));
		ev->has_cache = ev->has_cache_info = true;
		ev->cache_flags = info.flags;
		ev->cache_object_size = info.object_size;
		ev->cache_size = info.size_alloc;
		copy_str(ev->cache_name, info.name,
			 name_len < KMT_CACHE_INFO_NAME_LEN ? name_len : KMT_CACHE_INFO_NAME_LEN);
		return;
	}
	case KMT_FEAT_CACHE: {
		size_t name_len = size - offsetof(struct kmt_feat_cache, name);

		if (size < offsetof(struct kmt_feat_cache, name))
			return;
		ev->has_cache = true;
		ev->cache_flags = f[3];
		if (name_len > KMT_CACHE_NAME_LEN)
			name_len = KMT_CACHE_NAME_LEN;
		copy_str(ev->cache_name, (const char *)f + offsetof(struct kmt_feat_cache, name),
			 name_len);
		return;
	}
	case KMT_FEAT_VMALLOC:
		if (size < 4)
			return;
		ev->has_vmalloc = true;
		ev->vmalloc_flags = f[3];
		return;
	case KMT_FEAT_PAGE: {
		struct kmt_feat_page p;

		if (size < sizeof(p))
			return;
		memcpy(&p, f, sizeof(p));
		ev->has_page = true;
		ev->order = p.order;
		ev->migratetype = p.migratetype;
		ev->pfn = p.pfn;
		return;
	}
	case KMT_FEAT_KSTACK:
		ev->kstack_nr = read_stack(f, size, &ev->kstack);
		return;
	case KMT_FEAT_USTACK:
		ev->ustack_nr = read_stack(f, size, &ev->ustack);
		return;
	case KMT_FEAT_PERCPU: {
		struct kmt_feat_percpu p;

		if (size < sizeof(p))
			return;
		memcpy(&p, f, sizeof(p));
		ev->has_percpu = true;
		ev->percpu_flags = p.flags;
		ev->percpu_off = p.off;
		ev->percpu_base = p.base_addr;
		ev->percpu_align = p.align;
		return;
	}
	}
}

static enum kmt_decode_status decode_features(const unsigned char *p, size_t off, size_t end,
					      struct kmt_event *ev)
{
	/* Fewer than a header's bytes left over are padding, not a feature. */
	while (off + FEAT_HDR_SIZE <= end) {
		__u16 size;

		memcpy(&size, p + off, sizeof(size));
		if (size < FEAT_HDR_SIZE || size > end - off)
			return KMT_BAD_FEATURE;
		decode_feature(p + off, size, ev);
		off += size;
	}
	return KMT_OK;
}

/*
 * Checks the record's core (and alloc stats) and says where its features
 * start: *features is 0 for an event id of a later ABI, a record to skip
 * by its size whatever its body holds.
 */
static enum kmt_decode_status read_core(const unsigned char *p, size_t len,
					struct kmt_core *core, size_t *features)
{
	*features = 0;
	if (len < CORE_SIZE)
		return KMT_TRUNCATED;
	memcpy(core, p, CORE_SIZE);
	if (core->event_size < CORE_SIZE)
		return KMT_BAD_SIZE;
	if (core->event_size > len)
		return KMT_TRUNCATED;
	if (core->event_id > KMT_EVENT_HEARTBEAT)
		return KMT_OK;
	*features = CORE_SIZE;
	if (core->event_id == KMT_EVENT_ALLOC) {
		if (core->event_size < CORE_SIZE + ALLOC_SIZE)
			return KMT_BAD_SIZE;
		*features += ALLOC_SIZE;
	}
	return KMT_OK;
}

enum kmt_decode_status kmt_decode(const void *data, size_t len, int cpu, struct kmt_event *ev)
{
	const unsigned char *p = data;
	struct kmt_core core;
	enum kmt_decode_status st;
	size_t off;

	memset(ev, 0, offsetof(struct kmt_event, comm));
	ev->comm[0] = 0;
	ev->cache_name[0] = 0;
	ev->has_cache = ev->has_page = ev->has_percpu = ev->has_vmalloc = false;
	ev->has_cache_ref = ev->has_cache_info = false;
	ev->vmalloc_flags = 0;
	ev->has_heartbeat = false;
	ev->kstack_nr = ev->ustack_nr = 0;
	ev->kstack = ev->ustack = NULL;
	ev->cpu = cpu < 0 ? 0 : (__u32)cpu; /* a time feature says its own */
	st = read_core(p, len, &core, &off);
	if (st != KMT_OK)
		return st;
	ev->event_id = core.event_id;
	ev->type_id = core.type_id;
	ev->event_size = core.event_size;
	ev->seq_num = core.seq_num;
	if (!off)
		return KMT_OK;
	ev->call_site = core.call_site;
	ev->ptr = core.ptr;
	if (core.event_id == KMT_EVENT_ALLOC) {
		struct kmt_alloc a;

		memcpy(&a, p + CORE_SIZE, ALLOC_SIZE);
		ev->has_alloc = true;
		ev->bytes_req = a.bytes_req;
		ev->bytes_alloc = a.bytes_alloc;
		ev->gfp_flags = a.gfp_flags;
		ev->numa_node = a.numa_node;
	}
	return decode_features(p, off, core.event_size, ev);
}

enum kmt_decode_status kmt_glance(const void *data, size_t len, struct kmt_glance *g)
{
	const unsigned char *p = data;
	struct kmt_core core;
	enum kmt_decode_status st;
	size_t off;

	g->has_time = false;
	st = read_core(p, len, &core, &off);
	if (st != KMT_OK)
		return st;
	g->event_size = core.event_size;
	g->event_id = core.event_id;
	while (off && off + FEAT_HDR_SIZE <= core.event_size) {
		const unsigned char *f = p + off;
		__u16 size;

		memcpy(&size, f, sizeof(size));
		if (size < FEAT_HDR_SIZE || size > core.event_size - off)
			return KMT_BAD_FEATURE;
		_Static_assert(offsetof(struct kmt_feat_time, timestamp) ==
				       offsetof(struct kmt_feat_time_tid, timestamp),
			       "both features keep the time at one place");
		if ((f[2] == KMT_FEAT_TIME && size >= sizeof(struct kmt_feat_time)) ||
		    (f[2] == KMT_FEAT_TIME_TID && size >= sizeof(struct kmt_feat_time_tid))) {
			memcpy(&g->timestamp, f + offsetof(struct kmt_feat_time, timestamp),
			       sizeof(g->timestamp));
			g->has_time = true;
		}
		off += size;
	}
	return KMT_OK;
}

const char *kmt_decode_error(enum kmt_decode_status status)
{
	switch (status) {
	case KMT_OK:
		return "ok";
	case KMT_TRUNCATED:
		return "truncated record";
	case KMT_BAD_SIZE:
		return "record size too small";
	case KMT_BAD_FEATURE:
		return "feature size runs past the record";
	}
	return "corrupt record";
}

const char *kmt_type_event_name(unsigned int type_id, bool is_free)
{
	if (type_id >= KMT_TYPE_COUNT)
		return "unknown";
	return is_free ? event_classes[type_id].free_event : event_classes[type_id].alloc_event;
}

const char *kmt_event_name(const struct kmt_event *ev)
{
	static const char *const bulk_names[2][KMT_TYPE_CACHE + 1] = {
		{ "kmalloc", "kmem_cache_alloc_bulk" },
		{ "kfree_bulk", "kmem_cache_free_bulk" },
	};

	if (ev->event_id > KMT_EVENT_FREE || ev->type_id >= KMT_TYPE_COUNT)
		return "unknown";
	if ((ev->ev_flags & KMT_EV_BULK) && ev->type_id <= KMT_TYPE_CACHE)
		return bulk_names[ev->event_id][ev->type_id];
	if ((ev->ev_flags & KMT_EV_RCU) && ev->event_id == KMT_EVENT_FREE &&
	    ev->type_id <= KMT_TYPE_CACHE)
		return "kfree_rcu";
	/* Seen through the kernel's vmap_area tracepoints: their names. */
	if (ev->type_id == KMT_TYPE_VMALLOC && (ev->vmalloc_flags & KMT_VMALLOC_AREA))
		return ev->event_id == KMT_EVENT_ALLOC ? "alloc_vmap_area" : "free_vmap_area_noflush";
	return kmt_type_event_name(ev->type_id, ev->event_id == KMT_EVENT_FREE);
}
