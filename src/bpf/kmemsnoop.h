/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Record types shared by the BPF programs and user space: the kmemtrace
 * ABI (shared/seeds/000) with kmemsnoop's feature extensions.  docs/ABI.md
 * gives every byte offset.  Included from BPF (after vmlinux.h) and from
 * user space (after <linux/types.h>), so only the __u32-style types here.
 *
 * Every structure is packed, as the ABI says, and also 8-byte aligned so
 * that the compiler knows each field's natural alignment and emits plain
 * stores: records start 8-aligned in the ring and every feature size is a
 * multiple of 8.
 */
#ifndef KMEMSNOOP_H
#define KMEMSNOOP_H

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

/*
 * What the BPF programs do with an event: stream it as a record (the
 * default), or aggregate it in maps.  A rodata constant, so the verifier
 * drops the code of the other modes.
 */
enum kmt_mode {
	KMT_MODE_STREAM = 0,
	KMT_MODE_HIST = 1,
	KMT_MODE_ALLOCINFO = 2,
};

/*
 * --allocinfo.  A site key is a call site address, or a stack id of
 * ai_stack_map: stack ids are below 2^32, kernel text addresses of 64-bit
 * kernels far above, so one 64-bit key holds either.
 */
#define KMT_AI_STACK_KEY_LIMIT (1ULL << 32)
#define KMT_AI_PAGE_FRAMES 8   /* stack depth kept to find a page's caller */
#define KMT_AI_MAX_FRAMES 64   /* --stacks: deeper stacks lose their outermost frames */

/* ai_ptrs value: where a tracked allocation was made, and its size. */
struct kmt_ai_ptr {
	__u64 site;
	__u64 bytes;
};

/*
 * ai_table (kernels with BPF atomics, 5.12+): the tracked pointers in
 * buckets of one 128-byte block each (two cache lines that the CPU fetches
 * as a pair), found by a multiplicative hash of the pointer.  A slot's ptr
 * is 0 when free; val is the allocation's site index (ai_site_ids) in the
 * low 32 bits and its size in bytes in the high 32.
 */
#define KMT_AI_BUCKET_SLOTS 8
#define KMT_AI_SLOTS_PER_PTR 4 /* table slots per --max-ptrs: keeps buckets from filling */
#define KMT_AI_HASH_MUL 0x9e3779b97f4a7c15ULL

struct kmt_ai_slot {
	__u64 ptr;
	__u64 val;
};

struct kmt_ai_bucket {
	struct kmt_ai_slot slot[KMT_AI_BUCKET_SLOTS];
};

/* ai_sites value, per CPU: frees may run on another CPU, so one CPU's
 * share can be negative; user space sums them. */
struct kmt_ai_count {
	__s64 bytes;
	__s64 calls;
};

/* What could not be tracked, per CPU (ai_stats). */
struct kmt_ai_stats {
	__u64 ptrs_full;          /* allocations not counted: pointer map full */
	__u64 ptrs_full_bytes;
	__u64 sites_full;         /* allocations not counted: site map full */
	__u64 sites_full_bytes;
	__u64 stack_failed;       /* allocations not counted: no stack id */
	__u64 stack_failed_bytes;
	__u64 untracked_frees[3]; /* frees of pointers not tracked, by kmt_type_id */
	__u64 replaced;           /* allocation at a pointer still tracked (a missed free) */
	__u64 replaced_bytes;
	__u64 order_mismatch;     /* page frees of another order than allocated */
};

/* Per-CPU loss counters, indexed by CPU (a BPF global array). */
struct kmt_loss {
	__u64 events;
	__u64 bytes;
};

/*
 * What a CPU's programs count for themselves, a cache line per CPU so that
 * CPUs never write to the same line: the records since the last consumer
 * wakeup, and the CPU's sequence numbers.
 */
struct kmt_cpu_counters {
	__u64 records;
	__u32 seq;
	__u32 pad32;
	__u64 pad[6];
} __attribute__((aligned(64)));

#define KMT_MAX_CPUS 1024
#define KMT_CALIB_PAGES 16

/*
 * How each kernel lays out the tracepoint arguments, decided in user space
 * from the btf_trace_<tp> prototypes and passed to BPF as rodata.
 */
enum kmt_kmalloc_args {
	KMT_KMALLOC_NO_NODE = 0, /* call_site, ptr, req, alloc, gfp (< 6.1) */
	KMT_KMALLOC_NODE = 1,    /* ... , node (6.1+) */
};

enum kmt_cache_alloc_args {
	KMT_CACHE_ALLOC_SIZES = 0, /* call_site, ptr, req, alloc, gfp (< 6.1) */
	KMT_CACHE_ALLOC_CACHE = 1, /* call_site, ptr, kmem_cache, gfp, node (6.1+) */
};

enum kmt_cache_free_args {
	KMT_CACHE_FREE_PLAIN = 0, /* call_site, ptr (< 5.12) */
	KMT_CACHE_FREE_NAME = 1,  /* call_site, ptr, name (5.12 - 6.0) */
	KMT_CACHE_FREE_CACHE = 2, /* call_site, ptr, kmem_cache (6.1+) */
};

#endif /* KMEMSNOOP_H */
