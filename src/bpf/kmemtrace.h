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

/* kmemtrace's 1; 2 the features below; 3 per-CPU sequence numbers; 4 the
 * vmalloc and percpu types, the task, cache and heartbeat records and the
 * features that refer to them (tid, cache reference); 5 the kernel stack
 * feature; 6 the user stack feature. */
#define KMT_ABI_VERSION 6

#define KMT_PACKED __attribute__((packed, aligned(8)))

/*
 * Event ids 0 and 1 are kmemtrace's; 2-4 (version 4) describe what the
 * allocation records refer to, so that those carry a tid and a cache
 * address instead of repeated strings.  Every record says its size at the
 * same offset: a reader skips event ids it does not know.
 */
enum kmt_event_id {
	KMT_EVENT_ALLOC = 0,
	KMT_EVENT_FREE = 1,
	KMT_EVENT_TASK = 2,      /* a task's identity; type id: enum kmt_task_why */
	KMT_EVENT_CACHE = 3,     /* a slab cache, the first time it is seen; ptr: its address */
	KMT_EVENT_HEARTBEAT = 4, /* per CPU, about once a second */
};

enum kmt_type_id {
	KMT_TYPE_KMALLOC = 0, /* kmalloc() / kfree() */
	KMT_TYPE_CACHE = 1,   /* kmem_cache_alloc() / kmem_cache_free() */
	KMT_TYPE_PAGES = 2,   /* page allocator */
	KMT_TYPE_VMALLOC = 3, /* vmalloc areas: __vmalloc_node_range() / vfree() */
	KMT_TYPE_PERCPU = 4,  /* the percpu allocator: alloc_percpu() / free_percpu() */
	KMT_TYPE_COUNT        /* not a type: how many there are */
};

/* The version 4 type ids by number, as the ABI fixed them. */
#define KMT_TYPE_VMALLOC_ID 3
#define KMT_TYPE_PERCPU_ID 4
_Static_assert(KMT_TYPE_VMALLOC == KMT_TYPE_VMALLOC_ID, "vmalloc type id");
_Static_assert(KMT_TYPE_PERCPU == KMT_TYPE_PERCPU_ID, "percpu type id");

/* Why a task record was written (its type id). */
enum kmt_task_why {
	KMT_TASK_SEEN = 0,     /* before its first event on this CPU (or its first since it
				* left the CPU's table of tasks described) */
	KMT_TASK_FORK = 1,     /* created; core ptr: the parent's tid */
	KMT_TASK_EXEC = 2,     /* exec'd: the new comm */
	KMT_TASK_RENAME = 3,   /* renamed (prctl PR_SET_NAME, /proc/PID/comm) */
	KMT_TASK_EXIT = 4,     /* exited */
};

enum kmt_feature_id {
	KMT_FEAT_TIME = 1,       /* origin cpu and timestamp */
	KMT_FEAT_TASK = 2,       /* pid, tid, comm */
	KMT_FEAT_CACHE = 3,      /* slab cache name and accounting */
	KMT_FEAT_PAGE = 4,       /* page order, migratetype, pfn */
	KMT_FEAT_TID = 5,        /* tid only: the comm is in its task record */
	KMT_FEAT_CACHE_REF = 6,  /* the cache's address: the name is in its cache record */
	KMT_FEAT_CACHE_INFO = 7, /* a cache record's description */
	KMT_FEAT_HEARTBEAT = 8,  /* records written and lost on this CPU so far */
	KMT_FEAT_PERCPU = 9,     /* percpu_alloc_percpu's own fields */
	KMT_FEAT_VMALLOC = 10,   /* how a vmalloc record was seen */
	KMT_FEAT_TIME_TID = 11,  /* an event's timestamp and tid; its CPU is its ring's (file's) */
	KMT_FEAT_KSTACK = 12,    /* the kernel call chain that reached the event (version 5) */
	KMT_FEAT_USTACK = 13,    /* the user-space call chain of the event's thread (version 6) */
};

/* Byte 3 of the task and tid features: how the event came about. */
#define KMT_EV_BULK 0x01 /* one object of kmem_cache_{alloc,free}_bulk or kfree_bulk */
#define KMT_EV_RCU 0x02  /* a free: kfree_rcu() put it in its cache's RCU sheaf */

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
	__u8 ev_flags; /* KMT_EV_*; 0 before version 4 */
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

struct kmt_feat_tid {
	__u16 size;
	__u8 id;
	__u8 ev_flags; /* KMT_EV_* */
	__u32 tid;
} KMT_PACKED;

/* The time and tid features in one, for the events: the CPU the event
 * happened on is that of the ring (the cpu file) it is in. */
struct kmt_feat_time_tid {
	__u16 size;
	__u8 id;
	__u8 ev_flags; /* KMT_EV_* */
	__u32 tid;
	__u64 timestamp; /* CLOCK_MONOTONIC nanoseconds */
} KMT_PACKED;

struct kmt_feat_cache_ref {
	__u16 size;
	__u8 id;
	__u8 flags; /* KMT_CACHE_NO_NAME: this kernel's event names no cache */
	__u32 reserved;
	__u64 cache; /* struct kmem_cache address, as in its cache record */
} KMT_PACKED;

#define KMT_CACHE_INFO_NAME_LEN 48

struct kmt_feat_cache_info {
	__u16 size;
	__u8 id;
	__u8 flags;          /* KMT_CACHE_ACCOUNTED */
	__u32 object_size;   /* what the cache's users asked for */
	__u32 size_alloc;    /* the object with its metadata (kmem_cache.size) */
	__u32 slab_flags;    /* kmem_cache.flags, the running kernel's bits */
	char name[KMT_CACHE_INFO_NAME_LEN]; /* NUL-terminated, may be truncated */
} KMT_PACKED;

struct kmt_feat_heartbeat {
	__u16 size;
	__u8 id;
	__u8 reserved;
	__u32 reserved2;
	__u64 written; /* records this CPU wrote so far, this one excluded */
	__u64 lost;    /* allocation and free records this CPU lost so far */
} KMT_PACKED;

#define KMT_PERCPU_RESERVED 0x01  /* from the reserved chunk */
#define KMT_PERCPU_ATOMIC 0x02    /* is_atomic */
#define KMT_PERCPU_COMPUTED 0x04  /* kernel before 5.19: bytes_alloc computed, no call site or gfp */

struct kmt_feat_percpu {
	__u16 size;
	__u8 id;
	__u8 flags;       /* KMT_PERCPU_* */
	__s32 off;        /* the offset in its chunk */
	__u64 base_addr;  /* the chunk's base address */
	__u64 align;
} KMT_PACKED;

/* The kernel stack of an event (--stacks): nr return addresses, the
 * innermost first, as bpf_get_stack() gives them; the feature's size is
 * 8 + 8 * nr. */
struct kmt_feat_kstack {
	__u16 size;
	__u8 id;
	__u8 reserved;
	__u32 nr;
	__u64 ip[];
} KMT_PACKED;

/* The user-space stack of an event's thread (--user-stacks), the same
 * layout with id KMT_FEAT_USTACK: the addresses are the process's (its
 * pid is the event's), the first where the thread entered the kernel, the
 * others return addresses found by following frame pointers. */

#define KMT_VMALLOC_AREA 0x01 /* from the vmap_area tracepoints: the area's size (guard
			       * page included), the call site from a kernel stack */

struct kmt_feat_vmalloc {
	__u16 size;
	__u8 id;
	__u8 flags; /* KMT_VMALLOC_* */
	__u32 reserved;
} KMT_PACKED;

/* What the BPF side writes, one layout per event kind. */
struct kmt_rec_kmalloc {
	struct kmt_core core;
	struct kmt_alloc alloc;
	struct kmt_feat_time_tid when;
} KMT_PACKED;

/* The cache by reference: its name is in its cache record. */
struct kmt_rec_cache_alloc {
	struct kmt_core core;
	struct kmt_alloc alloc;
	struct kmt_feat_time_tid when;
	struct kmt_feat_cache_ref cache;
} KMT_PACKED;

struct kmt_rec_page_alloc {
	struct kmt_core core;
	struct kmt_alloc alloc;
	struct kmt_feat_time_tid when;
	struct kmt_feat_page page;
} KMT_PACKED;

struct kmt_rec_kfree {
	struct kmt_core core;
	struct kmt_feat_time_tid when;
} KMT_PACKED;

struct kmt_rec_cache_free {
	struct kmt_core core;
	struct kmt_feat_time_tid when;
	struct kmt_feat_cache_ref cache;
} KMT_PACKED;

/* Where the kernel's kmem_cache_free names the cache by a string (5.12 -
 * 6.0): the name itself. */
struct kmt_rec_cache_free_named {
	struct kmt_core core;
	struct kmt_feat_time_tid when;
	struct kmt_feat_cache cache;
} KMT_PACKED;

/* A task's identity: before a CPU's first record of the task, and at its
 * fork, exec, rename and exit. */
struct kmt_rec_task {
	struct kmt_core core;
	struct kmt_feat_time time;
	struct kmt_feat_task task;
} KMT_PACKED;

/* Per CPU, about once a second: what the CPU wrote and lost so far. */
struct kmt_rec_heartbeat {
	struct kmt_core core;
	struct kmt_feat_time time;
	struct kmt_feat_heartbeat beat;
} KMT_PACKED;

/* A slab cache, written on a CPU before the first record there that refers to it. */
struct kmt_rec_cache {
	struct kmt_core core;
	struct kmt_feat_time time;
	struct kmt_feat_cache_info info;
} KMT_PACKED;

struct kmt_rec_page_free {
	struct kmt_core core;
	struct kmt_feat_time_tid when;
	struct kmt_feat_page page;
} KMT_PACKED;

/* percpu_alloc_percpu: core ptr is the __percpu pointer, bytes_req the size
 * asked for (per CPU), bytes_alloc what the kernel counts for all CPUs. */
struct kmt_rec_percpu_alloc {
	struct kmt_core core;
	struct kmt_alloc alloc;
	struct kmt_feat_time_tid when;
	struct kmt_feat_percpu percpu;
} KMT_PACKED;

/* percpu_free_percpu: no call site (the event has none), no size; the
 * percpu feature's align is 0 and its flags too. */
struct kmt_rec_percpu_free {
	struct kmt_core core;
	struct kmt_feat_time_tid when;
	struct kmt_feat_percpu percpu;
} KMT_PACKED;

struct kmt_rec_vmalloc {
	struct kmt_core core;
	struct kmt_alloc alloc;
	struct kmt_feat_time_tid when;
	struct kmt_feat_vmalloc vmalloc;
} KMT_PACKED;

struct kmt_rec_vfree {
	struct kmt_core core;
	struct kmt_feat_time_tid when;
	struct kmt_feat_vmalloc vmalloc;
} KMT_PACKED;

/* docs/ABI.md documents these sizes and offsets: keep them in step. */
_Static_assert(sizeof(struct kmt_core) == 24, "kmemtrace core is 24 bytes");
_Static_assert(sizeof(struct kmt_alloc) == 24, "kmemtrace alloc stats are 24 bytes");
_Static_assert(sizeof(struct kmt_feat_time) == 16, "time feature");
_Static_assert(sizeof(struct kmt_feat_task) == 32, "task feature");
_Static_assert(sizeof(struct kmt_feat_cache) == 40, "cache feature");
_Static_assert(sizeof(struct kmt_feat_page) == 16, "page feature");
_Static_assert(sizeof(struct kmt_feat_tid) == 8, "tid feature");
_Static_assert(sizeof(struct kmt_feat_cache_ref) == 16, "cache reference feature");
_Static_assert(sizeof(struct kmt_feat_cache_info) == 64, "cache info feature");
_Static_assert(sizeof(struct kmt_feat_heartbeat) == 24, "heartbeat feature");
_Static_assert(sizeof(struct kmt_feat_percpu) == 24, "percpu feature");
_Static_assert(sizeof(struct kmt_feat_vmalloc) == 8, "vmalloc feature");
_Static_assert(sizeof(struct kmt_feat_time_tid) == 16, "time and tid feature");
_Static_assert(sizeof(struct kmt_rec_kmalloc) == 64, "kmalloc record");
_Static_assert(sizeof(struct kmt_rec_cache_alloc) == 80, "kmem_cache_alloc record");
_Static_assert(sizeof(struct kmt_rec_page_alloc) == 80, "mm_page_alloc record");
_Static_assert(sizeof(struct kmt_rec_kfree) == 40, "kfree record");
_Static_assert(sizeof(struct kmt_rec_cache_free) == 56, "kmem_cache_free record");
_Static_assert(sizeof(struct kmt_rec_cache_free_named) == 80, "kmem_cache_free record, named");
_Static_assert(sizeof(struct kmt_rec_cache) == 104, "cache record");
_Static_assert(sizeof(struct kmt_rec_task) == 72, "task record");
_Static_assert(sizeof(struct kmt_rec_heartbeat) == 64, "heartbeat record");
_Static_assert(sizeof(struct kmt_rec_page_free) == 56, "mm_page_free record");
_Static_assert(sizeof(struct kmt_rec_percpu_alloc) == 88, "percpu_alloc_percpu record");
_Static_assert(sizeof(struct kmt_rec_percpu_free) == 64, "percpu_free_percpu record");
_Static_assert(sizeof(struct kmt_rec_vmalloc) == 72, "vmalloc record");
_Static_assert(sizeof(struct kmt_rec_vfree) == 48, "vfree record");

#endif /* KMEMSNOOP_KMEMTRACE_H */
