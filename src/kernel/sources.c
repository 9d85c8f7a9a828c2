// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The table of event sources: see sources.h. */
#include <stddef.h>

#include "bpf/kmemsnoop.h"
#include "sources.h"

const struct event_source event_sources[SRC_COUNT] = {
	[SRC_SCHED_PROCESS_FORK] = { "sched_process_fork", SOURCE_TRACEPOINT, ROLE_TASK,
				     TASK_FOR_PID | TASK_FOR_RECORDS, { NULL }, 0, 0, false, false },
	[SRC_SCHED_PROCESS_FREE] = { "sched_process_free", SOURCE_TRACEPOINT, ROLE_TASK,
				     TASK_FOR_PID, { NULL }, 0, 0, false, false },
	[SRC_SCHED_PROCESS_EXEC] = { "sched_process_exec", SOURCE_TRACEPOINT, ROLE_TASK,
				     TASK_FOR_RECORDS, { NULL }, 0, 0, false, false },
	[SRC_SCHED_PROCESS_EXIT] = { "sched_process_exit", SOURCE_TRACEPOINT, ROLE_TASK,
				     TASK_FOR_RECORDS, { NULL }, 0, 0, false, false },
	/* prctl(PR_SET_NAME), a write to /proc/PID/comm, and exec. */
	[SRC_TASK_RENAME] = { "task_rename", SOURCE_TRACEPOINT, ROLE_TASK, TASK_FOR_RECORDS,
			      { NULL }, 0, 0, false, false },
	[SRC_KMALLOC] = { "kmalloc", SOURCE_TRACEPOINT, ROLE_ALLOC, EV_KMALLOC, { NULL }, 0, 0,
			  false, false },
	[SRC_KMALLOC_NODE] = { "kmalloc_node", SOURCE_TRACEPOINT, ROLE_ALLOC, EV_KMALLOC,
			       { NULL }, 0, 0, false, false },
	[SRC_KMEM_CACHE_ALLOC] = { "kmem_cache_alloc", SOURCE_TRACEPOINT, ROLE_ALLOC, EV_CACHE,
				   { NULL }, 0, 0, false, false },
	[SRC_KMEM_CACHE_ALLOC_NODE] = { "kmem_cache_alloc_node", SOURCE_TRACEPOINT, ROLE_ALLOC,
					EV_CACHE, { NULL }, 0, 0, false, false },
	[SRC_KFREE] = { "kfree", SOURCE_TRACEPOINT, ROLE_FREE, EV_KMALLOC, { NULL }, 0, 0, false,
			false },
	[SRC_KMEM_CACHE_FREE] = { "kmem_cache_free", SOURCE_TRACEPOINT, ROLE_FREE, EV_CACHE,
				  { NULL }, 0, 0, false, false },
	[SRC_MM_PAGE_ALLOC] = { "mm_page_alloc", SOURCE_TRACEPOINT, ROLE_ALLOC, EV_PAGE,
				{ NULL }, 0, 0, false, false },
	[SRC_MM_PAGE_FREE] = { "mm_page_free", SOURCE_TRACEPOINT, ROLE_FREE, EV_PAGE,
			       { NULL }, 0, 0, false, false },
	[SRC_PERCPU_ALLOC_PERCPU] = { "percpu_alloc_percpu", SOURCE_TRACEPOINT, ROLE_ALLOC,
				      EV_PERCPU, { NULL }, 0, 0, false, false },
	[SRC_PERCPU_FREE_PERCPU] = { "percpu_free_percpu", SOURCE_TRACEPOINT, ROLE_FREE,
				     EV_PERCPU, { NULL }, 0, 0, false, false },
	/* The vmalloc core, with its caller as the ninth argument. */
	[SRC_VMALLOC_NODE_RANGE] = { "vmalloc_node_range", SOURCE_FEXIT, ROLE_ALLOC, EV_VMALLOC,
				     { "__vmalloc_node_range_noprof", "__vmalloc_node_range" }, 9,
				     0, false, false },
	/* Where a trampoline cannot take nine: the wrapper most callers go
	 * through, with the caller fifth (what calls the core directly,
	 * module and BPF map areas among them, is missed). */
	[SRC_VMALLOC_NODE] = { "vmalloc_node", SOURCE_FEXIT, ROLE_ALLOC, EV_VMALLOC,
			       { "__vmalloc_node_noprof", "__vmalloc_node" }, 5,
			       SOURCE_BIT(SRC_VMALLOC_NODE_RANGE), false, false },
	/* remove_vm_area() where BTF lacks vfree (a compiler clone, vfree.part.0,
	 * can leave it out): vfree calls it, and so does vunmap, whose areas
	 * were never vmalloc's (frees of untracked memory, for --allocinfo). */
	[SRC_VFREE] = { "vfree", SOURCE_FENTRY, ROLE_FREE, EV_VMALLOC,
			{ "vfree", "remove_vm_area" }, 1, 0, false, false },
	[SRC_VFREE_ATOMIC] = { "vfree_atomic", SOURCE_FENTRY, ROLE_FREE, EV_VMALLOC,
			       { "vfree_atomic" }, 1, 0, false, false },
	/* Where fentry cannot attach (6.2+): every vmap area, vmalloc's and
	 * vmap()'s, with the call site from a kernel stack. */
	[SRC_ALLOC_VMAP_AREA] = { "alloc_vmap_area", SOURCE_TRACEPOINT, ROLE_ALLOC, EV_VMALLOC,
				  { NULL }, 0,
				  SOURCE_BIT(SRC_VMALLOC_NODE_RANGE) | SOURCE_BIT(SRC_VMALLOC_NODE),
				  false, false },
	[SRC_FREE_VMAP_AREA_NOFLUSH] = { "free_vmap_area_noflush", SOURCE_TRACEPOINT, ROLE_FREE,
					 EV_VMALLOC, { NULL }, 0,
					 SOURCE_BIT(SRC_VMALLOC_NODE_RANGE) |
						 SOURCE_BIT(SRC_VMALLOC_NODE), false, false },
	/* Objects allocated or freed in bulk: no tracepoint sees them. */
	[SRC_CACHE_ALLOC_BULK] = { "cache_alloc_bulk", SOURCE_FEXIT, ROLE_ALLOC, EV_CACHE,
				   { "kmem_cache_alloc_bulk_noprof", "kmem_cache_alloc_bulk" }, 4,
				   0, true, false },
	/* kfree_bulk() is kmem_cache_free_bulk(NULL, ...): kmalloc'd objects. */
	[SRC_CACHE_FREE_BULK] = { "cache_free_bulk", SOURCE_FENTRY, ROLE_FREE,
				  EV_CACHE | EV_KMALLOC, { "kmem_cache_free_bulk" }, 3, 0, true, false },
	/* kfree_rcu()'s objects that a cache's RCU sheaf takes (6.18 for caches
	 * with sheaves, 7.x for all): they go back to the cache after a grace
	 * period with no event.  A third argument since 7.x (free flags). */
	[SRC_KFREE_RCU_SHEAF] = { "kfree_rcu_sheaf", SOURCE_FEXIT, ROLE_FREE, EV_CACHE | EV_KMALLOC,
				  { "__kfree_rcu_sheaf" }, 2, 0, false, true },
};

const struct event_class event_classes[] = {
	[KMT_TYPE_KMALLOC] = { "kmalloc", EV_KMALLOC, "kmalloc", "kfree", "kmalloc" },
	[KMT_TYPE_CACHE] = { "cache", EV_CACHE, "kmem_cache_alloc", "kmem_cache_free",
			     "cache size" },
	[KMT_TYPE_PAGES] = { "page", EV_PAGE, "mm_page_alloc", "mm_page_free", "pages" },
	[KMT_TYPE_VMALLOC] = { "vmalloc", EV_VMALLOC, "vmalloc", "vfree", "vmalloc" },
	[KMT_TYPE_PERCPU] = { "percpu", EV_PERCPU, "percpu_alloc_percpu", "percpu_free_percpu",
			      "percpu" },
};

const int event_class_count = sizeof(event_classes) / sizeof(event_classes[0]);

_Static_assert(SRC_COUNT <= 32, "SOURCE_BIT() fits an unsigned int");
_Static_assert(sizeof(event_classes) / sizeof(event_classes[0]) == KMT_TYPE_COUNT,
	       "one event class per allocation type");
