/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The record layout of kmemsnoop's stream and recordings: the kmemtrace
 * ABI (kernel 2.6.29's kmemtrace, Documentation/ABI/testing/debugfs-kmemtrace)
 * with kmemsnoop's feature extensions.  docs/ABI.md gives every byte offset.
 * Included from BPF (after vmlinux.h) and from user space (after
 * <linux/types.h>), so only the __u32-style types here.
 *
 * Every structure is packed, as the ABI says, and also 8-byte aligned so
 * that the compiler knows each field's natural alignment and emits plain
 * stores: records start 8-aligned in the ring and every feature size is a
 * multiple of 8.
 */
#ifndef KMEMSNOOP_KMEMTRACE_H
#define KMEMSNOOP_KMEMTRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define KMT_ABI_VERSION 3 /* kmemtrace's 1 plus the features below, per-CPU sequence numbers */

#define KMT_PACKED __attribute__((packed, aligned(8)))

enum kmt_event_id {
	KMT_EVENT_ALLOC = 0,
	KMT_EVENT_FREE = 1,
};

enum kmt_type_id {
	KMT_TYPE_KMALLOC = 0, /* kmalloc() / kfree() */
	KMT_TYPE_CACHE = 1,   /* kmem_cache_alloc() / kmem_cache_free() */
	KMT_TYPE_PAGES = 2,   /* page allocator */
	KMT_TYPE_COUNT        /* not a type: how many there are */
};

enum kmt_feature_id {
	KMT_FEAT_TIME = 1,  /* origin cpu and timestamp */
	KMT_FEAT_TASK = 2,  /* pid, tid, comm */
	KMT_FEAT_CACHE = 3, /* slab cache name and accounting */
	KMT_FEAT_PAGE = 4,  /* page order, migratetype, pfn */
};

struct kmt_core {
	__u8 event_id;
	__u8 type_id;
	__u16 event_size; /* whole record, features included */
	__s32 seq_num;    /* global order across CPUs, wraps */
	__u64 call_site;
	__u64 ptr;        /* pages: the struct page address */
} KMT_PACKED;

struct kmt_alloc {
	__u64 bytes_req;
	__u64 bytes_alloc;
	__u32 gfp_flags;
	__s32 numa_node; /* -1: no node requested */
} KMT_PACKED;

/* Feature header: size includes the header; data starts at byte 3. */
struct kmt_feat_hdr {
	__u16 size;
	__u8 id;
} __attribute__((packed));

struct kmt_feat_time {
	__u16 size;
	__u8 id;
	__u8 reserved;
	__u32 cpu;       /* CPU the event happened on */
	__u64 timestamp; /* CLOCK_MONOTONIC nanoseconds */
} KMT_PACKED;

#define KMT_COMM_LEN 16

struct kmt_feat_task {
	__u16 size;
	__u8 id;
	__u8 reserved;
	__u32 pid; /* thread group id */
	__u32 tid;
	char comm[KMT_COMM_LEN];
	__u32 reserved2;
} KMT_PACKED;

#define KMT_CACHE_NAME_LEN 36
#define KMT_CACHE_ACCOUNTED 0x01 /* flags: SLAB_ACCOUNT cache */
#define KMT_CACHE_NO_NAME 0x02   /* flags: this kernel's event has no cache */

struct kmt_feat_cache {
	__u16 size;
	__u8 id;
	__u8 flags;
	char name[KMT_CACHE_NAME_LEN]; /* NUL-terminated, may be truncated */
} KMT_PACKED;

#define KMT_PFN_NONE (~0ULL) /* failed page allocation */

struct kmt_feat_page {
	__u16 size;
	__u8 id;
	__u8 order;
	__s32 migratetype; /* -1 on frees: the event does not say */
	__u64 pfn;
} KMT_PACKED;

/* What the BPF side writes, one layout per event kind. */
struct kmt_rec_kmalloc {
	struct kmt_core core;
	struct kmt_alloc alloc;
	struct kmt_feat_time time;
	struct kmt_feat_task task;
} KMT_PACKED;

struct kmt_rec_cache_alloc {
	struct kmt_core core;
	struct kmt_alloc alloc;
	struct kmt_feat_time time;
	struct kmt_feat_task task;
	struct kmt_feat_cache cache;
} KMT_PACKED;

struct kmt_rec_page_alloc {
	struct kmt_core core;
	struct kmt_alloc alloc;
	struct kmt_feat_time time;
	struct kmt_feat_task task;
	struct kmt_feat_page page;
} KMT_PACKED;

struct kmt_rec_kfree {
	struct kmt_core core;
	struct kmt_feat_time time;
	struct kmt_feat_task task;
} KMT_PACKED;

struct kmt_rec_cache_free {
	struct kmt_core core;
	struct kmt_feat_time time;
	struct kmt_feat_task task;
	struct kmt_feat_cache cache;
} KMT_PACKED;

struct kmt_rec_page_free {
	struct kmt_core core;
	struct kmt_feat_time time;
	struct kmt_feat_task task;
	struct kmt_feat_page page;
} KMT_PACKED;

/* docs/ABI.md documents these sizes and offsets: keep them in step. */
_Static_assert(sizeof(struct kmt_core) == 24, "kmemtrace core is 24 bytes");
_Static_assert(sizeof(struct kmt_alloc) == 24, "kmemtrace alloc stats are 24 bytes");
_Static_assert(sizeof(struct kmt_feat_time) == 16, "time feature");
_Static_assert(sizeof(struct kmt_feat_task) == 32, "task feature");
_Static_assert(sizeof(struct kmt_feat_cache) == 40, "cache feature");
_Static_assert(sizeof(struct kmt_feat_page) == 16, "page feature");
_Static_assert(sizeof(struct kmt_rec_kmalloc) == 96, "kmalloc record");
_Static_assert(sizeof(struct kmt_rec_cache_alloc) == 136, "kmem_cache_alloc record");
_Static_assert(sizeof(struct kmt_rec_page_alloc) == 112, "mm_page_alloc record");
_Static_assert(sizeof(struct kmt_rec_kfree) == 72, "kfree record");
_Static_assert(sizeof(struct kmt_rec_cache_free) == 112, "kmem_cache_free record");
_Static_assert(sizeof(struct kmt_rec_page_free) == 88, "mm_page_free record");

#endif /* KMEMSNOOP_KMEMTRACE_H */
