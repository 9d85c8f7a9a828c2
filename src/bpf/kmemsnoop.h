/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the BPF programs and user space agree on besides the record layout
 * (kmemtrace.h): the counters and map values they share, the argument
 * layouts user space detects, and constants both sides compute with.
 * Included from BPF (after vmlinux.h) and from user space (after
 * <linux/types.h>), so only the __u32-style types here.
 */
#ifndef KMEMSNOOP_H
#define KMEMSNOOP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "kmemtrace.h"

/* Event classes, as -e names them: the allocation types (enum
 * kmt_type_id) as bits. */
enum kmt_event_class {
	EV_KMALLOC = 1 << KMT_TYPE_KMALLOC,
	EV_CACHE = 1 << KMT_TYPE_CACHE,
	EV_PAGE = 1 << KMT_TYPE_PAGES,
	EV_VMALLOC = 1 << KMT_TYPE_VMALLOC,
	EV_PERCPU = 1 << KMT_TYPE_PERCPU,
	EV_ALL = (1 << KMT_TYPE_COUNT) - 1,
};

/* The multiplier of every multiplicative hash (2^64 / the golden ratio),
 * and a second odd one that mixes in a second word. */
#define KMT_HASH_MUL 0x9e3779b97f4a7c15ULL
#define KMT_HASH_MUL2 0xc2b2ae3d27d4eb4fULL

/* kmalloc(0) returns ZERO_SIZE_PTR (16): no memory, shared by every caller;
 * kfree() of it, like kfree(NULL), frees nothing. */
#define KMT_ZERO_SIZE_PTR 16

/*
 * --allocinfo.  A site key is a call site address, or a stack id of
 * ai_stack_map: stack ids are below 2^32, kernel text addresses of 64-bit
 * kernels far above, so one 64-bit key holds either.
 */
#define KMT_AI_STACK_KEY_LIMIT (1ULL << 32)
/* Stack depth kept to find a page's caller: past the tracing machinery
 * and the page allocator's frames (seven of those on arm64 7.2 between the
 * tracepoint and tlb_next_batch: 8 named get_free_pages_noprof instead). */
#define KMT_AI_PAGE_FRAMES 16
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

struct kmt_ai_slot {
	__u64 ptr;
	__u64 val;
};

struct kmt_ai_bucket {
	struct kmt_ai_slot slot[KMT_AI_BUCKET_SLOTS];
};

/* ai_sites value, per CPU: frees may run on another CPU, so one CPU's
 * share can be negative; user space sums them.  bytes and calls are what
 * is outstanding (frees subtract), alloc_* what was allocated (--pprof's
 * alloc_space and alloc_objects). */
struct kmt_ai_count {
	__s64 bytes;
	__s64 calls;
	__s64 alloc_bytes;
	__s64 alloc_calls;
};

/* What could not be tracked, per CPU (ai_stats). */
struct kmt_ai_stats {
	__u64 ptrs_full;          /* allocations not counted: pointer map full */
	__u64 ptrs_full_bytes;
	__u64 sites_full;         /* allocations not counted: site map full */
	__u64 sites_full_bytes;
	__u64 stack_failed;       /* allocations not counted: no stack id */
	__u64 stack_failed_bytes;
	__u64 untracked_frees[KMT_TYPE_COUNT]; /* frees of pointers not tracked, by type */
	__u64 replaced;           /* allocation at a pointer still tracked (a missed free) */
	__u64 replaced_bytes;
	__u64 order_mismatch;     /* page frees of another order than allocated */
};

/*
 * --stat aggregated in BPF (stat.bpf.h).  A site key is what one row of
 * the call site table and one of the cache table have in common: the call
 * site, the cache (its struct kmem_cache's address, 0 for kmalloc or where
 * the event names none) and the allocated size (kmalloc's size class).
 */
#define KMT_STAT_LIFE 64  /* lifetime buckets: [i] counts [2^i, 2^(i+1)) ns, [0] also 0 */
#define KMT_STAT_NODES 64 /* NUMA nodes counted one by one; others together */

struct kmt_stat_key {
	__u64 call_site;
	__u64 cache;
	__u32 bytes_alloc;
	__u8 type; /* enum kmt_type_id */
	__u8 pad[3];
};

/* stat_ptrs value: a live allocation, until its free. */
struct kmt_stat_ptr {
	struct kmt_stat_key key;
	__u64 ts;  /* bpf_ktime_get_ns() at the allocation */
	__u32 cpu; /* where it was allocated: a free elsewhere is ping-pong */
	__u32 pad;
};

/* stat_sites value, per CPU (user space sums the CPUs). */
struct kmt_stat_site {
	__u64 hit, bytes_req, bytes_alloc;
	__u64 pingpong;           /* frees on another CPU than the allocation */
	__u64 frees, freed_bytes; /* frees matched to an allocation of this key */
	__u64 ended, ended_bytes; /* allocations gone unseen: replaced, or never tracked */
	__u64 life[KMT_STAT_LIFE];
};

struct kmt_stat_name {
	char name[KMT_CACHE_NAME_LEN];
};

/* stat_procs value, per CPU: the comm is in the copy of the CPU that
 * counted the process first. */
struct kmt_stat_proc {
	__u64 allocs, frees, bytes_req, bytes_alloc;
	char comm[KMT_COMM_LEN];
};

/* stat_misc, per CPU. */
struct kmt_stat_misc {
	__u64 node_allocs[KMT_STAT_NODES]; /* allocations asking for node i */
	__u64 far_node_allocs;             /* for a node >= KMT_STAT_NODES */
	__u64 slab_located;    /* allocations whose node is known (stat_block_node) */
	__u64 slab_remote;     /* of those, served by another node than asked for */
	__u64 sites_full, sites_full_bytes; /* allocations not counted: site map full */
	__u64 ptrs_full;       /* counted, but their free cannot be: pointer map full */
	__u64 procs_full;      /* events missing from the process table */
	__u64 untracked_frees; /* frees of what was allocated before, or not traced */
	__u64 replaced;        /* allocation at a pointer still tracked (a missed free) */
	__u64 scratch[4];      /* a cache's address as a number, one per program */
};

/*
 * Call sites taken from a kernel stack (stacksite.bpf.h): the first frame
 * after the text of a set of functions, which user space finds in
 * kallsyms: the vmalloc API's (up to KMT_VM_RANGES ranges), the
 * allocators' for pages (KMT_PAGE_ALLOC_RANGES), one array, each sorted.
 */
enum kmt_text_table {
	KMT_TEXT_VMALLOC,
	KMT_TEXT_PAGE_ALLOC,
	KMT_TEXT_TABLES,
};
#define KMT_VM_RANGES 64
#define KMT_PAGE_ALLOC_RANGES 256
#define KMT_TEXT_RANGES (KMT_VM_RANGES + KMT_PAGE_ALLOC_RANGES)
#define KMT_TEXT_BISECT_STEPS 9 /* 2^9 > KMT_TEXT_RANGES */
#define KMT_STACK_SITE_FRAMES 12
/* --stacks when streaming: the frames an event's record may carry (its
 * kernel stack feature within stream.bpf.h's largest staged record). */
#define KMT_KSTACK_MAX_DEPTH 40
/* --user-stacks: the frames of an event's user stack feature. */
#define KMT_USTACK_MAX_DEPTH 48
/* The objects of one kmem_cache_{alloc,free}_bulk call the BPF side reads:
 * in a bounded loop, or through bpf_loop() (5.17+), whose callback the
 * verifier walks once: enough for a batch of kfree_rcu()'s kfree_bulk(),
 * a page of pointers less a small header (KVFREE_BULK_MAX_ENTR: about 510
 * with 4 KiB pages, 8190 with 64 KiB). */
#define KMT_BULK_MAX 32
#define KMT_BULK_LOOP_MAX 8192
/* The frames a bulk program looks through for its function's, then the caller. */
#define KMT_BULK_FRAMES 6

struct kmt_text_range {
	__u64 start;
	__u64 end; /* exclusive */
};

/* Per-CPU loss counters, indexed by CPU (a BPF global array). */
struct kmt_loss {
	__u64 events;
	__u64 bytes;
	__u64 names; /* task records lost (not events: the events they name show no comm) */
};

/*
 * What a CPU's programs count for themselves, a cache line per CPU so that
 * CPUs never write to the same line: the records since the last consumer
 * wakeup, the CPU's sequence numbers, and the records written before its
 * last heartbeat (the sequence numbers wrap; heartbeats count on).
 */
struct kmt_cpu_counters {
	__u64 records;
	__u32 seq;
	__u32 beat_seq;     /* the last heartbeat's sequence number */
	__u64 beat_written; /* records written before it */
	/* -o: records staged by a program that interrupted another one
	 * writing a record on this CPU (stream.bpf.h's levels above 0). */
	__u64 nested;
	/* When the oldest record staged and not yet copied into the ring was
	 * written (bpf_ktime_get_ns; 0: none): the live stream waits for it
	 * before it prints what the other CPUs wrote later. */
	__u64 staged_since;
	/* --flight: the blocks this CPU copied into the store so far (the
	 * next one's number; flight.bpf.h). */
	__u64 flight_head;
	__u64 pad[2];
} __attribute__((aligned(64)));

#define KMT_MAX_CPUS 1024

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

/*
 * percpu_alloc_percpu's arguments.  Since 5.19 the event says who asked
 * (call_site), what the allocation costs over all CPUs (bytes_alloc) and
 * its gfp flags; before, only where the area is.
 */
enum kmt_percpu_args {
	KMT_PERCPU_SHORT = 0, /* reserved, is_atomic, size, align, base_addr, off, ptr (4.13+) */
	KMT_PERCPU_FULL = 1,  /* call_site, reserved, ..., ptr, bytes_alloc, gfp_flags (5.19+) */
};

/*
 * --flight (flight.bpf.h): each CPU's staged blocks are copied into a
 * circular store of blocks instead of its ring; user space reads the
 * store only when a trigger fires.  A block is whole records, like a ring
 * sample of -o, its first len bytes.  Each slot of the store has its
 * struct kmt_flight_slot in another array, at the same index: seq is the
 * block's number on its CPU (kmt_cpu_counters' flight_head when it was
 * written), set after the data: a slot whose seq is not the number the
 * slot should hold is being written or was overwritten.
 */
#define KMT_FLIGHT_DATA (4096 + 1024) /* stream.bpf.h's STAGE_END: a block at most */

struct kmt_flight_block {
	__u8 data[KMT_FLIGHT_DATA];
};

struct kmt_flight_slot {
	__u64 seq;
	__u32 len;
	__u32 reserved;
};

/* What fired a dump; the order of the names in flight.c's table. */
enum kmt_trigger {
	KMT_TRIGGER_SIGNAL,  /* SIGUSR1 */
	KMT_TRIGGER_OOM,     /* the OOM killer chose a victim (oom:mark_victim) */
	KMT_TRIGGER_FAILED,  /* an allocation returned nothing, without __GFP_NOWARN */
	KMT_TRIGGER_THRESHOLD, /* --flight-when, seen by user space */
	KMT_TRIGGER_KINDS,
};

/* Their names, in that order: the dumps' directories and the metrics'
 * labels (user space: static const char *const x[] = KMT_TRIGGER_NAMES). */
#define KMT_TRIGGER_NAMES { "signal", "oom", "failed", "threshold" }

/* A trigger the BPF side saw, sent to user space through flight_triggers. */
struct kmt_flight_trigger {
	__u64 timestamp; /* bpf_ktime_get_ns(): the records' clock */
	__u32 kind;      /* enum kmt_trigger */
	__u32 cpu;
	__u32 pid;       /* OOM: the victim; failed: the allocating task */
	__u32 tid;
	__u64 call_site; /* failed: the allocation's */
	__u64 bytes;     /* failed: bytes requested */
	__u32 gfp_flags; /* failed */
	__u8 type_id;    /* failed: enum kmt_type_id */
	__u8 reserved[3];
	char comm[KMT_COMM_LEN]; /* empty where the kernel does not say */
};

#endif /* KMEMSNOOP_H */
