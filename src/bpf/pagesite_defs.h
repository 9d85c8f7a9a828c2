/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The caller of a page allocation from learned stack frames: what the BPF
 * side (pagesite.bpf.h) and user space (pagesite.c) share.  Included from
 * BPF and from user space, so only __u32-style types.
 */
#ifndef KMEMSNOOP_PAGESITE_DEFS_H
#define KMEMSNOOP_PAGESITE_DEFS_H

/* What a learned return address is: where it returns into. */
#define PS_KIND_GLUE 1  /* the tracing machinery (alloctag_is_glue) */
#define PS_KIND_ALLOC 2 /* the allocator (alloctag_is_allocator) */
#define PS_KIND_SITE 3  /* the caller: the page's site */

/* Frames read per allocation at most: as deep as a page's stack key. */
#define PS_WALK 8
/* A sample: the return addresses bpf_get_stack gives, and the stack
 * words above ctx in which user space finds them. */
#define PS_STACK 16
#define PS_RAW 128
/* One miss in this many sends a sample.  A caller found by learned
 * frames is checked against its stack (an audit: the page is keyed by its
 * stack, the sample sent) every time until PS_FIRST_AUDITS audits of its
 * path (the return addresses read) agreed, and then one in PS_AUDIT. */
#define PS_SAMPLE_EVERY 8
#define PS_FIRST_AUDITS 4
#define PS_AUDIT 1024

/* The stack words above ctx read at once per allocation, at most: user
 * space sets how many (ps_words), as deep as the callers it learned. */
#define PS_WINDOW 128

/* ps_frames: learned return addresses, in a table of PS_SLOTS entries
 * where ret's place is ps_slot(ret) or the one beside it (^ 1). */
#define PS_SLOTS 2048
struct ps_frame {
	__u64 ret;   /* 0: a free entry */
	__u32 delta; /* bytes from its slot to the next return address's */
	__u32 kind;  /* PS_KIND_* */
};

/* ps_paths: the paths audits agreed on, a table as ps_frames: a path is
 * the hash of the return addresses read, caller included (ps_path_add). */
static inline __u64 ps_path_add(__u64 path, __u64 ret)
{
	return (path ^ ret) * 0xc2b2ae3d27d4eb4fULL + 1;
}

static inline __u32 ps_slot(__u64 ret)
{
	return (__u32)((ret * 0x9e3779b97f4a7c15ULL) >> 40) & (PS_SLOTS - 1);
}

/* A ps_samples record. */
struct ps_sample {
	__u64 claimed; /* an audit: the caller the learned frames gave; else 0 */
	__u64 path;    /* an audit: its path */
	__u32 n;       /* ips */
	__u32 raw_len; /* bytes of raw read (the stack may end before) */
	__u64 ips[PS_STACK];
	__u64 raw[PS_RAW]; /* the stack from ctx up */
};

/* Per CPU (ps_stats). */
struct ps_stats {
	__u64 fast;    /* callers found from learned frames */
	__u64 misses;  /* allocations keyed by their stack instead */
	__u64 audits;  /* of which audits */
	__u64 samples; /* samples sent */
	__u64 dropped; /* samples the ring had no room for */
	__u64 deep;    /* walks that left the stack words read */
};

#endif /* KMEMSNOOP_PAGESITE_DEFS_H */
