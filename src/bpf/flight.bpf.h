/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --flight: the stream's records kept in the kernel, the recent past only.
 * The records are staged per CPU as for -o (stream.bpf.h); a full block
 * is copied into this CPU's part of flight_store, a circular array of
 * blocks, instead of its ring.  User space reads nothing per event: when
 * a trigger fires it copies the blocks out, oldest first, while the CPUs
 * go on writing, and writes them as an ordinary recording (src/flight/).
 * A block carries its number, set to none while it is written: a copy
 * that a writer overtook (the block's number changed under it) is
 * dropped, like a seqlock's read.
 *
 * Every group of flight_group_blocks blocks starts the CPU's descriptions
 * afresh (forget_described()): the oldest blocks of a dump lost what came
 * before them, so a dump starts at a group's first block, which describes
 * the tasks and caches its group's events name (but for a record that
 * straddles the block before).  Repeated in every block, the descriptions
 * cost 13-14 ns per event on open/close (bpf_stats); once per group of 16
 * blocks (fewer in a small store: a group is an eighth of it at most),
 * about a sixteenth of that.  A dump that must start at a group leaves out
 * fewer than a group of its oldest blocks.
 *
 * Triggers seen here (an OOM kill, a failed allocation) go to user space
 * through flight_triggers, one at a time: a trigger while one is pending
 * is counted (flight_fired) and folded into the pending one's dump.
 * #included by stream.bpf.h, before stage_flush().
 */
#ifndef KMEMSNOOP_FLIGHT_BPF_H
#define KMEMSNOOP_FLIGHT_BPF_H

const volatile bool flight = false;
/* Blocks of each CPU in flight_store (set with its size by user space). */
const volatile __u32 flight_blocks_per_cpu = 0;
/* The store's blocks come in groups of this many (a power of two, set by
 * user space): the first block of each starts the CPU's descriptions
 * afresh, and a dump starts at one. */
const volatile __u32 flight_group_blocks = 1;
/* The kernel's __GFP_NOWARN: failures that ask for no warning (a first
 * try, a fallback follows) fire nothing.  0: every failure fires. */
const volatile __u32 flight_nowarn_gfp = 0;
/* oom:mark_victim's argument: its task (6.9+, 72ba14deb40a, and the
 * stable kernels it went back to), or before only the victim's pid. */
const volatile bool oom_victim_is_task = false;

/* A trigger was sent and user space has not dumped for it yet. */
__u32 flight_pending = 0;
/* Triggers seen, by kind, sent or folded into a pending one. */
__u64 flight_fired[KMT_TRIGGER_KINDS] = {};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* CPUs x flight_blocks_per_cpu, set by user space */
	__type(key, __u32);
	__type(value, struct kmt_flight_block);
} flight_store SEC(".maps");

/* Each block's number and length, at its index in flight_store. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1); /* as flight_store's */
	__type(key, __u32);
	__type(value, struct kmt_flight_slot);
} flight_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096 * 4);
} flight_triggers SEC(".maps");

/*
 * Copies n bytes of staged records at data into the next block of this
 * CPU's part of the store (cc its counters), over the oldest.  0, or
 * nonzero when it could not (the caller counts the records lost).  Only
 * stage_flush() calls it, on its CPU, holding the flush: one writer per
 * CPU; after a group's last block it starts the CPU's descriptions
 * afresh.  Inlined, with as little kept across its helper calls as can
 * be, and the copy a helper's (bpf_map_update_elem() copies a whole block
 * from data, which the stage level's room after it allows): a call to a
 * function of ours under stage_flush(), or a larger stage_flush(), would
 * pass the 512 bytes of stack that the bulk programs' chain of calls may
 * take on 6.1.
 */
static __always_inline long flight_store_block(struct kmt_cpu_counters *cc, void *data, __u32 n)
{
	__u32 key = bpf_get_smp_processor_id() * flight_blocks_per_cpu +
		    (__u32)(cc->flight_head % flight_blocks_per_cpu);
	struct kmt_flight_slot *slot = bpf_map_lookup_elem(&flight_slots, &key);

	if (!slot)
		return 1;
	/* Not a number any block is given while it is written. */
	slot->seq = ~0ULL;
	barrier();
	if (bpf_map_update_elem(&flight_store, &key, data, BPF_ANY))
		return 1;
	slot->len = n;
	barrier();
	slot->seq = cc->flight_head++;
	return 0;
}

/* A trigger to user space, unless one is pending; counted either way.
 * The caller fills what else it knows. */
static __always_inline struct kmt_flight_trigger *flight_fire(__u32 kind)
{
	struct kmt_flight_trigger *t;

	if (kind >= KMT_TRIGGER_KINDS)
		return NULL;
	__sync_fetch_and_add(&flight_fired[kind], 1);
	if (*(volatile __u32 *)&flight_pending)
		return NULL;
	t = bpf_ringbuf_reserve(&flight_triggers, sizeof(*t), 0);
	if (!t)
		return NULL;
	flight_pending = 1;
	t->timestamp = bpf_ktime_get_ns();
	t->kind = kind;
	t->cpu = bpf_get_smp_processor_id();
	t->pid = 0;
	t->tid = 0;
	t->call_site = 0;
	t->bytes = 0;
	t->gfp_flags = 0;
	t->type_id = 0;
	t->reserved[0] = t->reserved[1] = t->reserved[2] = 0;
	t->comm[0] = 0;
	return t;
}

/* An allocation record with no pointer: the allocation failed.  A static
 * function: the record's fields are read where the verifier knows them. */
static __noinline void flight_failed(const struct kmt_core *rec)
{
	const struct kmt_alloc *a = (const void *)(rec + 1);
	struct kmt_flight_trigger *t;
	__u64 id;

	if (a->gfp_flags & flight_nowarn_gfp)
		return;
	t = flight_fire(KMT_TRIGGER_FAILED);
	if (!t)
		return;
	id = bpf_get_current_pid_tgid();
	t->pid = id >> 32;
	t->tid = (__u32)id;
	t->call_site = rec->call_site;
	t->bytes = a->bytes_req;
	t->gfp_flags = a->gfp_flags;
	t->type_id = rec->type_id;
	bpf_get_current_comm(t->comm, sizeof(t->comm));
	bpf_ringbuf_submit(t, BPF_RB_FORCE_WAKEUP);
}

/* oom:mark_victim: the OOM killer chose its victim (SIGKILL is queued). */
static __always_inline int flight_oom(__u64 *ctx)
{
	struct kmt_flight_trigger *t;
	struct task_struct *task;

	if (!flight)
		return 0;
	t = flight_fire(KMT_TRIGGER_OOM);
	if (!t)
		return 0;
	if (oom_victim_is_task) {
		task = (struct task_struct *)ctx[0];
		t->pid = BPF_CORE_READ(task, tgid);
		t->tid = BPF_CORE_READ(task, pid);
		bpf_probe_read_kernel_str(t->comm, sizeof(t->comm), &task->comm);
	} else {
		t->pid = (__u32)ctx[0];
	}
	bpf_ringbuf_submit(t, BPF_RB_FORCE_WAKEUP);
	return 0;
}

#endif /* KMEMSNOOP_FLIGHT_BPF_H */
