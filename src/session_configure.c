// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF object's read-only data, between open and load: the filters
 * every mode shares, the kernel's layouts (large kmallocs, page frames,
 * the text call sites step over, the bulk functions).  Each mode sets
 * its own part in its configure (mode.h); this is the session's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/kmemsnoop.h"
#include "kernel/pfn.h"
#include "names/alloctag.h"
#include "names/ksyms.h"
#include "names/textranges.h"
#include "names/vmcallers.h"
#include "env.h"
#include "kmemsnoop.skel.h"
#include "session.h"
#include "session_impl.h"

#define SIZE_FILTER_ENTRIES (256 * 1024)

/*
 * Page frame numbers need vmemmap's address, and the node of a slab
 * object the linear map's: measured once before load.
 */
void session_calibrate_pages(struct session *s)
{
	/* The classic programs' records have a pfn, not a struct page, and
	 * no cache: found from the object's address (kmemsnoop.bpf.c). */
	bool slabs = s->classic && session_class_traced(s, EV_CACHE);
	bool pages = s->classic && session_class_traced(s, EV_PAGE);
	bool linear = s->wants.linear_map || slabs;
	char why[256];
	struct pfn_calib *c;

	if (!s->wants.pfns && !linear && !pages)
		return;
	c = pfn_calib_open(s->vmlinux, why, sizeof(why));
	if (!c || pfn_calib_vmemmap(c, &s->vmemmap_base, why, sizeof(why))) {
		fprintf(stderr, "kmemsnoop: cannot compute page frame numbers (%s): %s%s\n", why,
			s->wants.pfns ? "pfn= shows 0xffffffffffffffff" :
			s->wants.linear_map ? "the nodes that served slab objects are not known" :
					      "pages are told apart by pfn",
			slabs ? "; slab objects' caches are not known" : "");
		pfn_calib_close(c);
		return;
	}
	if (s->env->verbose)
		fprintf(stderr, "kmemsnoop: struct page array at 0x%llx\n", s->vmemmap_base);
	if (linear && pfn_calib_linear(c, &s->linear_map, why, sizeof(why))) {
		fprintf(stderr, "kmemsnoop: cannot find the kernel's linear map (%s): %s\n", why,
			s->wants.linear_map ? "the nodes that served slab objects are not known" :
					      "slab objects' caches are not known");
		s->linear_map = 0;
	} else if (linear && s->env->verbose) {
		fprintf(stderr, "kmemsnoop: linear map at 0x%llx\n", s->linear_map);
	}
	pfn_calib_close(c);
}

/* Large kmallocs, whose page allocation is not counted again (large.bpf.h). */
static void configure_large(struct session *s)
{
	struct kmemsnoop_bpf__rodata *ro = s->skel->rodata;
	unsigned long long over = s->kf.kmalloc_large_over;
	__u32 order = 0;

	if (!over)
		return; /* the BPF side's defaults match nothing */
	while (((unsigned long long)ro->page_size << order) <= over)
		order++;
	ro->large_kmalloc_over = over;
	ro->large_min_order = order;
}

/* Fills table with the functions select() names, from text_ranges[first]
 * on; returns the next free range. */
static int text_table(struct session *s, enum kmt_text_table table, int first, int max,
		      bool (*select)(const char *name), const char *what)
{
	struct kmemsnoop_bpf__rodata *ro = s->skel->rodata;
	int functions, left_out, n;

	n = textranges_of(session_ksyms(s), select, (struct kmt_text_range *)ro->text_ranges + first,
			  max, &functions, &left_out);
	ro->text_first[table] = first;
	ro->text_end[table] = first + n;
	if (left_out)
		fprintf(stderr, "kmemsnoop: %d of the %d %s functions do not fit in %d ranges: call "
				"sites found in their stacks may name them\n",
			left_out, functions, what, max);
	if (s->env->verbose)
		fprintf(stderr, "kmemsnoop: %d %s functions (%d ranges) stepped over in call sites\n",
			functions, what, n);
	return first + n;
}

/*
 * The text a call site taken from a kernel stack steps over
 * (stacksite.bpf.h), only where such a stack is taken: the vmalloc API's
 * for vfree and the vmap_area tracepoints, the allocators' for the
 * stream's pages under --stat --page (its tables' call sites; the other
 * modes' streams keep the event's 0, as the kernel's trace has none).
 */
static void configure_text_ranges(struct session *s)
{
	struct kmemsnoop_bpf__rodata *ro = s->skel->rodata;
	int next = 0;

	if (session_source_wanted(s, SRC_VFREE) || session_source_wanted(s, SRC_VFREE_ATOMIC) ||
	    session_source_wanted(s, SRC_ALLOC_VMAP_AREA) ||
	    session_source_wanted(s, SRC_FREE_VMAP_AREA_NOFLUSH))
		next = text_table(s, KMT_TEXT_VMALLOC, next, KMT_VM_RANGES, vmcallers_is_api,
				  "vmalloc");
	if (s->env->stat && s->env->stat_opts.page && session_source_wanted(s, SRC_MM_PAGE_ALLOC)) {
		ro->stream_page_sites = true;
		text_table(s, KMT_TEXT_PAGE_ALLOC, next, KMT_PAGE_ALLOC_RANGES,
			   alloctag_is_allocator, "allocator");
	}
}

/* Whether func returns bool (kmem_cache_alloc_bulk since 7.x) rather than a count. */
static bool returns_bool(const struct btf *btf, const char *func)
{
	int id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);

	t = t ? btf__type_by_id(btf, t->type) : NULL; /* the prototype */
	t = t ? btf__type_by_id(btf, t->type) : NULL; /* its return type */
	while (t && btf_is_typedef(t))
		t = btf__type_by_id(btf, t->type);
	return t && btf_is_int(t) && (btf_int_encoding(t) & BTF_INT_BOOL);
}

/*
 * The text of the functions whose caller is the call site of the objects
 * of bulk_text's rows (bulk_call_site()): the bulk functions chosen, and
 * for a kfree_rcu() into a sheaf the function kfree_rcu() calls.  NULL:
 * the row's function.
 */
static const struct {
	enum kmt_source row;
	const char *caller_of;
} bulk_text_rows[] = {
	{ SRC_CACHE_ALLOC_BULK, NULL },
	{ SRC_CACHE_FREE_BULK, NULL },
	{ SRC_KFREE_RCU_SHEAF, "kvfree_call_rcu" },
};

static void configure_bulk(struct session *s)
{
	struct kmemsnoop_bpf__rodata *ro = s->skel->rodata;
	const int nrows = sizeof(bulk_text_rows) / sizeof(bulk_text_rows[0]);
	bool any = false;

	_Static_assert(sizeof(bulk_text_rows) / sizeof(bulk_text_rows[0]) ==
			       sizeof(ro->bulk_text) / sizeof(ro->bulk_text[0]),
		       "a bulk_text range per row");
	for (int i = 0; i < nrows; i++)
		any |= session_source_wanted(s, bulk_text_rows[i].row);
	if (!any)
		return;
	ro->kernel_text.start = ksyms_addr_of(session_ksyms(s), "_stext");
	ro->kernel_text.end = ksyms_addr_of(session_ksyms(s), "_etext");
	if (session_source_wanted(s, SRC_CACHE_ALLOC_BULK))
		ro->bulk_alloc_all_or_none = returns_bool(s->vmlinux, s->funcs[SRC_CACHE_ALLOC_BULK]);

	for (int i = 0; i < nrows; i++) {
		enum kmt_source row = bulk_text_rows[i].row;
		const char *func = bulk_text_rows[i].caller_of ? bulk_text_rows[i].caller_of :
								 s->funcs[row];
		const struct ksym *sym;
		unsigned long long addr;

		if (!session_source_wanted(s, row))
			continue;
		addr = ksyms_addr_of(session_ksyms(s), func);
		sym = addr ? ksyms_find(session_ksyms(s), addr) : NULL;
		if (!sym || !sym->size)
			continue; /* call sites stay 0 */
		ro->bulk_text[i].start = sym->addr;
		ro->bulk_text[i].end = sym->addr + sym->size;
		if (s->env->verbose)
			fprintf(stderr, "kmemsnoop: %s at 0x%llx, %llu bytes: its caller is the "
					"call site\n", func, sym->addr, sym->size);
	}
}

/* What every mode shares: the filters and the kernel's layouts. */
void session_configure(struct session *s)
{
	const struct env *env = s->env;
	struct kmemsnoop_bpf__rodata *ro = s->skel->rodata;

	ro->self_tgid = getpid();
	ro->filter_pid = env->pid != 0;
	ro->filter_tid = env->tid != 0;
	ro->target_tid = env->tid;
	ro->filter_cpu = env->cpu >= 0;
	ro->target_cpu = env->cpu;
	ro->filter_comm = env->comm[0] != 0;
	ro->filter_cgroup = s->cgroup_fd >= 0;
	memcpy((char *)ro->target_comm, env->comm, sizeof(env->comm));
	ro->filter_size = env->size_filter;
	ro->min_size = env->min_size;
	ro->max_size = env->max_size;
	ro->sized_frees = env->size_filter && s->wants.sized_frees;
	ro->page_size = sysconf(_SC_PAGESIZE);
	ro->kmalloc_args = s->kf.kmalloc_args;
	ro->cache_alloc_args = s->kf.cache_alloc_args;
	ro->cache_free_args = s->kf.cache_free_args;
	ro->percpu_args = s->kf.percpu_args;
	ro->possible_cpus = s->ncpus;
	ro->vmemmap_base = s->vmemmap_base;
	ro->slab_linear_map = s->classic ? s->linear_map : 0;
	ro->runs_preemptible = s->kf.tp_preemptible;
	ro->stream_kstack_depth = s->wants.kstack_depth;
	ro->stream_ustack_depth = s->wants.ustack_depth;
	configure_large(s);
	configure_text_ranges(s);
	configure_bulk(s);
	if (ro->sized_frees)
		bpf_map__set_max_entries(s->skel->maps.sized_ptrs, SIZE_FILTER_ENTRIES);
}
