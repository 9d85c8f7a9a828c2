/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What every part of the BPF object uses: reading tracepoint arguments,
 * the task and size filters (rodata constants set by user space before
 * load, so the verifier drops what is not selected), and the current
 * task's comm.  #included first by kmemsnoop.bpf.c.
 */
#ifndef KMEMSNOOP_COMMON_BPF_H
#define KMEMSNOOP_COMMON_BPF_H

/* Filters and layouts: set before load, constant to the verifier. */
const volatile bool filter_pid = false;
const volatile bool filter_tid = false;
const volatile bool filter_cpu = false;
const volatile bool filter_comm = false;
const volatile bool filter_cgroup = false;
const volatile bool filter_size = false;
/* Frees pass the size filter when their allocation did (sized_ptrs):
 * wanted by the modes that filter frees, not by --allocinfo, whose
 * pointer table already knows which frees to count. */
const volatile bool sized_frees = false;
/* kmemsnoop itself: its own output would otherwise feed the trace. */
const volatile __u32 self_tgid = 0;
const volatile __u32 target_tid = 0;
const volatile __u32 target_cpu = 0;
const volatile char target_comm[KMT_COMM_LEN] = {};
const volatile __u64 min_size = 0;
const volatile __u64 max_size = ~0ULL;
const volatile __u32 page_size = 4096; /* the system's, set by user space */
const volatile __u8 kmalloc_args = KMT_KMALLOC_NODE;
const volatile __u8 cache_alloc_args = KMT_CACHE_ALLOC_CACHE;
const volatile __u8 cache_free_args = KMT_CACHE_FREE_CACHE;
const volatile __u8 percpu_args = KMT_PERCPU_FULL;
/* The possible CPUs: a percpu area has a copy on each. */
const volatile __u32 possible_cpus = 1;

/*
 * How an entry point runs, a constant it passes down (as atomic_fetch):
 * with BPF's atomic fetch-add (5.12+) or without, and RUN_CLASSIC for the
 * classic tracepoint programs, which perf runs with preemption off on every
 * kernel (they have fetch-add: 7.x only).  Nonzero means fetch-add.
 */
enum prog_run { RUN_NO_FETCH = 0, RUN_FETCH = 1, RUN_CLASSIC = 2 };

/*
 * Whether tp_btf, raw_tp and fentry/fexit programs run with preemption on
 * (7.0+ with preemptible RCU: a46023d5616e, f7d327654b88): another task's
 * program can then run on this CPU between any two of a run's
 * instructions, not only an interrupt's, which ends before the run goes on.
 */
const volatile bool runs_preemptible = false;

/* The entry point's constant first: a classic program reads no rodata here
 * (a volatile load the compiler must keep). */
static __always_inline bool run_preemptible(enum prog_run run)
{
	return run != RUN_CLASSIC && runs_preemptible;
}

/* -p: the thread groups being traced (the target and its descendants). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} traced_tgids SEC(".maps");

/* --cgroup: the cgroup v2 directory whose tasks (and its descendants') pass. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps");

/* --min-size/--max-size: allocations that passed, so their frees pass too. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1); /* sized by user space when sized_frees is set */
	__type(key, __u64);
	__type(value, __u8);
} sized_ptrs SEC(".maps");

/*
 * Tracepoint argument i.  An opaque load: left to itself, clang merges loads
 * of different arguments in two branches into one load through a computed
 * ctx pointer, which the verifier rejects.
 */
#define ARG(ctx, i)                                                              \
	({                                                                       \
		__u64 __v;                                                       \
		asm volatile("%0 = *(u64 *)(%1 + %2)" : "=r"(__v) : "r"(ctx), "i"((i) * 8)); \
		__v;                                                             \
	})

/* Read a field of a kernel struct: directly with typed (tp_btf) arguments,
 * through bpf_probe_read_kernel with raw ones.  'btf' is a compile-time
 * constant, so each entry point keeps only its own branch. */
#define KREAD(btf, ptr, field) ((btf) ? (ptr)->field : BPF_CORE_READ(ptr, field))

/*
 * Tracepoint argument i as a plain number.  With tp_btf a struct page
 * pointer is typed, and the verifier allows no arithmetic on it (nor on
 * its halves spilled to the stack); a copy read by a helper is a number.
 * Only for pages: a page allocation costs microseconds anyway.
 */
static __always_inline __u64 arg_number(__u64 *ctx, int i)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), &ctx[i]);
	return v;
}

struct stages;

/* The task an event happened in, once it has passed the task filters. */
struct event_ctx {
	__u64 pid_tgid;
	__u32 cpu;
	/* The program's context, for the event's kernel stack (stream.bpf.h,
	 * --stacks): set only then. */
	void *regs;
	/* The staged record being written (stream.bpf.h): the CPU's levels,
	 * the one it is in, its size. */
	struct stages *stages;
	__u32 stage_level;
	__u32 stage_size;
};

static __always_inline bool comm_matches(const char *comm)
{
	for (int i = 0; i < KMT_COMM_LEN; i++) {
		if (comm[i] != target_comm[i])
			return false;
		if (!comm[i])
			return true;
	}
	return true;
}

static __always_inline bool task_passes(struct event_ctx *ev)
{
	ev->pid_tgid = bpf_get_current_pid_tgid();
	ev->cpu = bpf_get_smp_processor_id();
	if ((__u32)(ev->pid_tgid >> 32) == self_tgid)
		return false;
	if (filter_tid && (__u32)ev->pid_tgid != target_tid)
		return false;
	if (filter_cpu && ev->cpu != target_cpu)
		return false;
	if (filter_pid) {
		__u32 tgid = ev->pid_tgid >> 32;

		if (!bpf_map_lookup_elem(&traced_tgids, &tgid))
			return false;
	}
	if (filter_cgroup && bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return false;
	if (filter_comm) {
		char comm[KMT_COMM_LEN];

		bpf_get_current_comm(comm, sizeof(comm));
		if (!comm_matches(comm))
			return false;
	}
	return true;
}

/* An allocation of ptr that passes --min-size/--max-size: its free will
 * pass too, for the modes that filter frees. */
static __always_inline bool size_passes(__u64 ptr, __u64 bytes_req)
{
	__u8 one = 1;

	if (!filter_size)
		return true;
	if (bytes_req < min_size || bytes_req > max_size)
		return false;
	if (sized_frees)
		bpf_map_update_elem(&sized_ptrs, &ptr, &one, BPF_ANY);
	return true;
}

static __always_inline bool free_size_passes(__u64 ptr)
{
	if (!sized_frees)
		return true;
	return bpf_map_delete_elem(&sized_ptrs, &ptr) == 0;
}

/* Two loads from the task where the kernel hands out typed task pointers
 * (5.11+); the bpf_get_current_comm() helper costs several times more. */
static __always_inline void read_comm(char *comm)
{
	struct task_struct *task;

	if (!bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)) {
		bpf_get_current_comm(comm, KMT_COMM_LEN);
		return;
	}
	task = bpf_get_current_task_btf();
	((__u64 *)comm)[0] = *(__u64 *)&task->comm[0];
	((__u64 *)comm)[1] = *(__u64 *)&task->comm[8];
}

#endif /* KMEMSNOOP_COMMON_BPF_H */
