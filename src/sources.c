// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The table of event sources: see sources.h. */
#include "kmemsnoop.h"
#include "sources.h"

const struct event_source event_sources[SRC_COUNT] = {
	[SRC_SCHED_PROCESS_FORK] = { "sched_process_fork", SOURCE_TRACEPOINT, ROLE_TASK, 0 },
	[SRC_SCHED_PROCESS_FREE] = { "sched_process_free", SOURCE_TRACEPOINT, ROLE_TASK, 0 },
	[SRC_KMALLOC] = { "kmalloc", SOURCE_TRACEPOINT, ROLE_ALLOC, EV_KMALLOC },
	[SRC_KMALLOC_NODE] = { "kmalloc_node", SOURCE_TRACEPOINT, ROLE_ALLOC, EV_KMALLOC },
	[SRC_KMEM_CACHE_ALLOC] = { "kmem_cache_alloc", SOURCE_TRACEPOINT, ROLE_ALLOC, EV_CACHE },
	[SRC_KMEM_CACHE_ALLOC_NODE] = { "kmem_cache_alloc_node", SOURCE_TRACEPOINT, ROLE_ALLOC,
					EV_CACHE },
	[SRC_KFREE] = { "kfree", SOURCE_TRACEPOINT, ROLE_FREE, EV_KMALLOC },
	[SRC_KMEM_CACHE_FREE] = { "kmem_cache_free", SOURCE_TRACEPOINT, ROLE_FREE, EV_CACHE },
	[SRC_MM_PAGE_ALLOC] = { "mm_page_alloc", SOURCE_TRACEPOINT, ROLE_ALLOC, EV_PAGE },
	[SRC_MM_PAGE_FREE] = { "mm_page_free", SOURCE_TRACEPOINT, ROLE_FREE, EV_PAGE },
	[SRC_PERCPU_ALLOC_PERCPU] = { "percpu_alloc_percpu", SOURCE_TRACEPOINT, ROLE_ALLOC,
				      EV_PERCPU },
	[SRC_PERCPU_FREE_PERCPU] = { "percpu_free_percpu", SOURCE_TRACEPOINT, ROLE_FREE,
				     EV_PERCPU },
};

const struct event_class event_classes[] = {
	[KMT_TYPE_KMALLOC] = { "kmalloc", EV_KMALLOC },
	[KMT_TYPE_CACHE] = { "cache", EV_CACHE },
	[KMT_TYPE_PAGES] = { "page", EV_PAGE },
	/* Its type id is in the ABI; its sources are not in this table yet. */
	[KMT_TYPE_VMALLOC] = { "vmalloc", EV_VMALLOC },
	[KMT_TYPE_PERCPU] = { "percpu", EV_PERCPU },
};

const int event_class_count = sizeof(event_classes) / sizeof(event_classes[0]);

_Static_assert(sizeof(event_classes) / sizeof(event_classes[0]) == KMT_TYPE_COUNT,
	       "one event class per allocation type");
