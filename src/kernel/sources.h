/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The events kmemsnoop can attach to, as one table: each row is a source
 * (a kernel tracepoint, or a kernel function through fentry/fexit) with
 * the class of memory it reports, whether it allocates, frees or follows
 * tasks, and the allocation type of its records.  Rows are in attach
 * order: the task sources first, so that no fork slips between the memory
 * programs and the -p filter.  A new allocator is a new row here and an
 * entry point in the BPF object named after the row.
 *
 * A function row names the kernel functions that can serve it, tried in
 * order: the first that this kernel's BTF has, with the arguments the
 * program reads, and that a BPF trampoline attaches to (fentry.c probes
 * it; before 6.6 an x86 trampoline takes six arguments, arm64's eight).
 * A row whose `unless` sources are in use is left out: the alternatives
 * of one another, and the tracepoints that stand in where fentry cannot.
 */
#ifndef KMEMSNOOP_SOURCES_H
#define KMEMSNOOP_SOURCES_H

#include <stdbool.h>

enum kmt_source {
	SRC_SCHED_PROCESS_FORK,
	SRC_SCHED_PROCESS_FREE,
	SRC_SCHED_PROCESS_EXEC,
	SRC_SCHED_PROCESS_EXIT,
	SRC_TASK_RENAME,
	SRC_KMALLOC,
	SRC_KMALLOC_NODE,
	SRC_KMEM_CACHE_ALLOC,
	SRC_KMEM_CACHE_ALLOC_NODE,
	SRC_KFREE,
	SRC_KMEM_CACHE_FREE,
	SRC_MM_PAGE_ALLOC,
	SRC_MM_PAGE_FREE,
	SRC_PERCPU_ALLOC_PERCPU,
	SRC_PERCPU_FREE_PERCPU,
	SRC_VMALLOC_NODE_RANGE,
	SRC_VMALLOC_NODE,
	SRC_VFREE,
	SRC_VFREE_ATOMIC,
	SRC_ALLOC_VMAP_AREA,
	SRC_FREE_VMAP_AREA_NOFLUSH,
	SRC_CACHE_ALLOC_BULK,
	SRC_CACHE_FREE_BULK,
	SRC_KFREE_RCU_SHEAF,
	SRC_COUNT,
};

enum source_kind {
	SOURCE_TRACEPOINT, /* tp_btf, else raw_tp */
	SOURCE_FENTRY,     /* a kernel function's entry, through a BPF trampoline */
	SOURCE_FEXIT,      /* its return: the arguments and the return value */
};

/* What a ROLE_TASK source serves. */
#define TASK_FOR_PID 0x1     /* -p: the thread groups traced */
#define TASK_FOR_RECORDS 0x2 /* the stream's task records (fork, exec, rename, exit) */

#define SOURCE_MAX_FUNCS 2
#define SOURCE_BIT(src) (1u << (src))

enum source_role {
	ROLE_TASK,  /* follows processes for -p, or names tasks in the stream */
	ROLE_ALLOC,
	ROLE_FREE,
};

struct event_source {
	const char *name;      /* the tracepoint; the BPF entry points' suffix */
	enum source_kind kind;
	enum source_role role;
	unsigned int class;    /* EV_*; for ROLE_TASK, TASK_FOR_* */
	/* fentry/fexit: the kernel functions to try, in order */
	const char *funcs[SOURCE_MAX_FUNCS];
	int args;              /* fentry/fexit: the arguments the program reads */
	unsigned int unless;   /* SOURCE_BIT()s: left out when one of these is used */
	/* fentry/fexit: a fel_<name> program reads the objects through
	 * bpf_loop(), used where the kernel has it */
	bool loops;
	/* fexit: the program reads the return value with bpf_get_func_ret()
	 * (5.17+), not after args arguments: the function may have more */
	bool ret_by_helper;
};

extern const struct event_source event_sources[SRC_COUNT];

/*
 * An allocation class, and every name it goes by: the one table that the
 * text, JSON, histograms and metrics print and label classes from.
 */
struct event_class {
	const char *name;        /* as -e and summaries name it: "kmalloc", "cache", ... */
	unsigned int class;      /* EV_* */
	const char *alloc_event; /* the kernel's events: "kmalloc", "mm_page_alloc", ... */
	const char *free_event;  /* "kfree", "mm_page_free", ... */
	const char *sizes;       /* --hist's key for sizes without a cache: "(kmalloc 512)" */
};

/* One per allocation type (enum kmt_type_id), in its order. */
extern const struct event_class event_classes[];
extern const int event_class_count;

#endif /* KMEMSNOOP_SOURCES_H */
