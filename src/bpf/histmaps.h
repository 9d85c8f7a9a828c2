/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --hist: what the BPF side counts and user space reads.  Included from
 * BPF (after vmlinux.h) and from user space (after <linux/types.h>).
 *
 * Every counter only grows: user space reads the maps each interval and
 * subtracts the previous reading, so nothing is reset under a running
 * program and no count falls between two readings.
 */
#ifndef KMEMSNOOP_HISTMAPS_H
#define KMEMSNOOP_HISTMAPS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "kmemsnoop.h"

/* log2 buckets of a size: bucket i holds [2^i, 2^(i+1)), bucket 0 also 0;
 * the last also holds everything larger (no allocation is 2 GiB). */
#define KMT_HIST_SLOTS 32
/* Allocation types: enum kmt_type_id (kmalloc, cache, pages). */
#define KMT_HIST_TYPES KMT_TYPE_COUNT
/*
 * A program interrupted between the load and the store of a per-CPU
 * increment would lose what a program in the interrupt added to the same
 * counter.  Each nesting depth on a CPU therefore has its own counters
 * (see hist.bpf.h); depths past the last share it.
 */
#define KMT_HIST_LEVELS 4

/* --hist=alloc / --hist=req: which size the buckets count. */
enum kmt_hist_value {
	KMT_HIST_ALLOC = 0, /* bytes allocated */
	KMT_HIST_REQ = 1,   /* bytes requested */
};

/*
 * --hist-by keys.  cache, callsite, comm and cgroup are counted per key
 * in the hist_keys map; event and order are read off the per-type buckets.
 */
enum kmt_hist_by {
	KMT_BY_NONE = 0,
	KMT_BY_CACHE = 1,
	KMT_BY_CALLSITE = 2,
	KMT_BY_COMM = 3,
	KMT_BY_CGROUP = 4,
	KMT_BY_EVENT = 5,
	KMT_BY_ORDER = 6,
	KMT_BY_COUNT,
};

/* The kinds counted per key in BPF: cache, callsite, comm, cgroup. */
#define KMT_HIST_KEYED_KINDS (KMT_BY_CGROUP + 1)

/* Counters of one nesting level on one CPU. */
struct kmt_hist_level {
	__u64 slots[KMT_HIST_TYPES][KMT_HIST_SLOTS]; /* successful allocations */
	__u64 bytes_alloc[KMT_HIST_TYPES];
	__u64 bytes_req[KMT_HIST_TYPES];
	__u64 failed[KMT_HIST_TYPES]; /* allocations that returned NULL */
	__u64 frees[KMT_HIST_TYPES];  /* frees of a non-NULL pointer */
	/* Allocations not counted under their key: hist_keys was full. */
	__u64 untracked[KMT_HIST_KEYED_KINDS];
};

/* The value of the one-entry per-CPU array hist_cpu. */
struct kmt_hist_cpu {
	__u64 depth; /* programs running on this CPU inside hist code */
	/* Per level, and for the runs that can be preempted: where a typed
	 * pointer becomes a number (hist.bpf.h). */
	__u64 scratch[KMT_HIST_LEVELS + 1];
	struct kmt_hist_level level[KMT_HIST_LEVELS];
};

/*
 * A key of hist_keys.  cache: the struct kmem_cache address where the
 * event has one, else KMT_HIST_PSEUDO(type, bytes allocated) (kmalloc
 * size classes, page orders, caches on kernels before 6.1); callsite: the
 * return address (0 for pages, whose event has none); comm: its 16 bytes;
 * cgroup: the current task's cgroup v2 id (its directory's inode number).
 */
struct kmt_hist_key {
	__u64 id;
	__u64 id2;   /* comm bytes 8-15, else 0 */
	__u8 kind;   /* enum kmt_hist_by: cache, callsite, comm or cgroup */
	__u8 level;  /* nesting level that counted it */
	__u8 pad[6];
};

/* Kernel addresses have their top bits set: these never collide with one. */
#define KMT_HIST_PSEUDO_BYTES_MAX 0xffffffffULL
#define KMT_HIST_PSEUDO(type, bytes)                                  \
	((1ULL << 40) | ((__u64)(type) << 32) |                       \
	 ((bytes) < KMT_HIST_PSEUDO_BYTES_MAX ? (bytes) : KMT_HIST_PSEUDO_BYTES_MAX))
#define KMT_HIST_PSEUDO_MAX ((1ULL << 41) - 1)

struct kmt_hist_keyed {
	__u64 bytes; /* sum of the sizes the buckets count (alloc or req) */
	__u64 slots[KMT_HIST_SLOTS];
};

/*
 * An entry of hist_front, a per-CPU array that keys hit first: the slot
 * is a multiplicative hash of the key, taken by the first key that lands
 * on it and never given up; other keys landing there (and every key
 * counted inside an interrupt, level > 0) go to hist_keys.  tag is the
 * key's id + 1, 0 while free.
 */
struct kmt_hist_front {
	__u64 tag;
	__u64 id2;
	__u64 kind;
	struct kmt_hist_keyed v;
};

/* The hist_front slot of a key, for a table of 1 << bits entries. */
static inline __u32 kmt_hist_front_slot(__u64 id, __u64 id2, __u8 kind, __u32 bits)
{
	__u64 h = (id ^ id2 * KMT_HASH_MUL2 ^ kind) * KMT_HASH_MUL;

	return bits ? (__u32)(h >> (64 - bits)) : 0;
}

#define KMT_HIST_NAME_LEN 40

/* hist_cache_names: struct kmem_cache address -> name, read on first sight. */
struct kmt_hist_cache_name {
	char name[KMT_HIST_NAME_LEN];
};

/* The bucket of a size; BPF and user space share it. */
static inline __u32 kmt_hist_slot(__u64 v)
{
	__u32 slot = 0;

	if (v >> 32)
		return KMT_HIST_SLOTS - 1;
	if (v >> 16) {
		v >>= 16;
		slot += 16;
	}
	if (v >> 8) {
		v >>= 8;
		slot += 8;
	}
	if (v >> 4) {
		v >>= 4;
		slot += 4;
	}
	if (v >> 2) {
		v >>= 2;
		slot += 2;
	}
	if (v >> 1)
		slot += 1;
	return slot;
}

#endif /* KMEMSNOOP_HISTMAPS_H */
