/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Decoding kmemtrace records (docs/ABI.md) into one flat event. */
#ifndef KMEMSNOOP_RECORD_H
#define KMEMSNOOP_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <linux/types.h>

#include "bpf/kmemsnoop.h"

struct kmt_event {
	__u8 event_id;
	__u8 type_id;
	__u16 event_size;
	__s32 seq_num;
	__u64 call_site;
	__u64 ptr;

	bool has_alloc;
	__u64 bytes_req;
	__u64 bytes_alloc;
	__u32 gfp_flags;
	__s32 numa_node;

	bool has_time;
	__u32 cpu;
	__u64 timestamp;

	bool has_tid;  /* the tid and ev_flags: a task or tid feature */
	bool has_task; /* the pid and comm: in the record, or resolved (tasktab.h) */
	__u8 ev_flags; /* KMT_EV_* */
	__u32 pid;
	__u32 tid;
	char comm[KMT_COMM_LEN + 1];

	bool has_cache;  /* the name and flags below: in the record or resolved */
	__u8 cache_flags;
	char cache_name[KMT_CACHE_INFO_NAME_LEN + 1];
	bool has_cache_ref; /* a cache reference: the cache's address */
	__u64 cache_addr;
	bool has_cache_info; /* a cache record's description */
	__u32 cache_object_size;
	__u32 cache_size;

	bool has_page;
	__u8 order;
	__s32 migratetype;
	__u64 pfn;

	bool has_percpu;
	__u8 percpu_flags; /* KMT_PERCPU_* */
	__s32 percpu_off;
	__u64 percpu_base;
	__u64 percpu_align;
	bool has_vmalloc;
	__u8 vmalloc_flags; /* KMT_VMALLOC_* */

	bool has_heartbeat; /* a heartbeat record's counts */
	__u64 beat_written;
	__u64 beat_lost;

	/* The kernel stack feature: kstack_nr return addresses at kstack,
	 * inside the decoded record (unaligned: kmt_kstack_ip() reads one). */
	__u32 kstack_nr;
	const unsigned char *kstack;
	/* The user stack feature, the same way (kmt_ustack_ip()). */
	__u32 ustack_nr;
	const unsigned char *ustack;
};

static inline __u64 kmt_stack_ip(const unsigned char *frames, __u32 i)
{
	__u64 ip;

	memcpy(&ip, frames + (size_t)i * sizeof(ip), sizeof(ip));
	return ip;
}

static inline __u64 kmt_kstack_ip(const struct kmt_event *ev, __u32 i)
{
	return kmt_stack_ip(ev->kstack, i);
}

static inline __u64 kmt_ustack_ip(const struct kmt_event *ev, __u32 i)
{
	return kmt_stack_ip(ev->ustack, i);
}

enum kmt_decode_status {
	KMT_OK = 0,
	KMT_TRUNCATED,   /* fewer bytes than the record says it has */
	KMT_BAD_SIZE,    /* event size smaller than the mandatory data */
	KMT_BAD_FEATURE, /* a feature whose size runs past the record */
};

/*
 * Decodes the record at data (len bytes available), read from the ring or
 * cpu file of CPU cpu: an event's time and tid feature leaves its CPU to
 * that.  Features and trailing bytes it does not know are skipped.  On
 * KMT_OK, ev->event_size says where the next record starts.
 */
enum kmt_decode_status kmt_decode(const void *data, size_t len, int cpu, struct kmt_event *ev);

/* What kmt_glance() reads of a record. */
struct kmt_glance {
	size_t event_size; /* where the next record starts */
	__u8 event_id;
	bool has_time;     /* false without one (ABI 1, an event id of a later ABI) */
	unsigned long long timestamp;
};

/* Checks the record at data as kmt_decode() does, reading only its size
 * and time. */
enum kmt_decode_status kmt_glance(const void *data, size_t len, struct kmt_glance *g);

const char *kmt_decode_error(enum kmt_decode_status status);

/* An allocation or a free, not a record that describes (task, cache, heartbeat). */
static inline bool kmt_is_memory_event(const struct kmt_event *ev)
{
	return ev->event_id <= KMT_EVENT_FREE;
}

/* Events passed on after a later one: what a reader sees out of time order.
 * Records that describe or beat are left out (a held task record may come
 * after an event it precedes in the ring, and no line shows it). */
struct kmt_order_count {
	unsigned long long last_ts;
	unsigned long long late;
};

static inline void kmt_order_note(struct kmt_order_count *o, const struct kmt_event *ev)
{
	if (!ev->has_time || !kmt_is_memory_event(ev))
		return;
	if (ev->timestamp < o->last_ts)
		o->late++;
	else
		o->last_ts = ev->timestamp;
}

static inline bool kmt_is_task_record(const struct kmt_event *ev)
{
	return ev->event_id == KMT_EVENT_TASK;
}

/* The same for a record not decoded: its first byte is the event id. */
static inline bool kmt_record_is_event(const void *data, size_t size)
{
	return size && *(const unsigned char *)data <= KMT_EVENT_FREE;
}

/* The size of the whole record at data, as its core says it; 0 when that
 * is not a record's size or size bytes do not hold it all.  A staged ring
 * sample (-o) holds whole records one after another. */
static inline size_t kmt_record_size(const void *data, size_t size)
{
	__u16 event_size;

	if (size < sizeof(struct kmt_core))
		return 0;
	/* Copied: a reader cannot count on a record's alignment. */
	memcpy(&event_size, (const char *)data + offsetof(struct kmt_core, event_size),
	       sizeof(event_size));
	if (event_size < sizeof(struct kmt_core) || event_size > size)
		return 0;
	return event_size;
}

/* Sequence order with wraparound: <0 if a comes before b. */
static inline int kmt_seq_cmp(__s32 a, __s32 b)
{
	__s32 d = (__s32)((__u32)a - (__u32)b);

	return d < 0 ? -1 : d > 0;
}

/* The kernel's name for the event: kmalloc, kfree, kmem_cache_alloc, ...,
 * percpu_alloc_percpu, percpu_free_percpu; for an object of a bulk call,
 * the function's: kmem_cache_alloc_bulk, kmem_cache_free_bulk, kfree_bulk. */
const char *kmt_event_name(const struct kmt_event *ev);
/* The kernel's allocation (or free) event of a type (KMT_TYPE_*), as the
 * text names it: kmalloc, kmem_cache_free, vmalloc, ... */
const char *kmt_type_event_name(unsigned int type_id, bool is_free);

#endif
