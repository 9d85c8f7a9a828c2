/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The events kmemsnoop can attach to, as one table: each row is a source
 * (a kernel tracepoint today; kernel functions through fentry later) with
 * the class of memory it reports, whether it allocates, frees or follows
 * tasks, and the allocation type of its records.  Rows are in attach
 * order: the task sources first, so that no fork slips between the memory
 * programs and the -p filter.  A new allocator is a new row here and an
 * entry point in the BPF object named after the row.
 */
#ifndef KMEMSNOOP_SOURCES_H
#define KMEMSNOOP_SOURCES_H

#include <stdbool.h>

enum kmt_source {
	SRC_SCHED_PROCESS_FORK,
	SRC_SCHED_PROCESS_FREE,
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
	SRC_COUNT,
};

enum source_kind {
	SOURCE_TRACEPOINT, /* tp_btf, else raw_tp */
};

enum source_role {
	ROLE_TASK,  /* follows processes for -p */
	ROLE_ALLOC,
	ROLE_FREE,
};

struct event_source {
	const char *name;      /* the tracepoint; the BPF entry points' suffix */
	enum source_kind kind;
	enum source_role role;
	unsigned int class;    /* EV_*; 0 for ROLE_TASK */
};

extern const struct event_source event_sources[SRC_COUNT];

/* An allocation class as -e and summaries name it. */
struct event_class {
	const char *name;      /* "kmalloc", "cache", "page", "vmalloc", "percpu" */
	unsigned int class;    /* EV_* */
};

/* One per allocation type (enum kmt_type_id), in its order. */
extern const struct event_class event_classes[];
extern const int event_class_count;

#endif /* KMEMSNOOP_SOURCES_H */
