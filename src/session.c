// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The session: see session.h.  Everything here is the same for every
 * mode; what differs between modes is behind struct mode_ops.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpf/kmemsnoop.h"
#include "kernel/budget.h"
#include "kernel/fentry.h"
#include "kernel/memcg.h"
#include "kernel/memfit.h"
#include "kernel/pfn.h"
#include "names/alloctag.h"
#include "names/ksyms.h"
#include "util/clock.h"
#include "env.h"
#include "kmemsnoop.skel.h"
#include "session.h"
#include "names/textranges.h"
#include "names/vmcallers.h"

#define POLL_MS 100
#define SIZE_FILTER_ENTRIES (256 * 1024)

/* Set by SIGINT/SIGTERM: a signal handler can only reach a global. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static bool verbose_libbpf;

/* libbpf talks only under -v: without it, kmemsnoop's own one-line errors. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	return verbose_libbpf ? vfprintf(stderr, fmt, args) : 0;
}

int session_fail(struct session *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return -1;
}

int session_refused(struct session *s, int errnum)
{
	memcg_explain(errnum, s->err, sizeof(s->err));
	if (errnum == ENOMEM)
		s->out_of_memory = true;
	return -1;
}

struct ksyms *session_ksyms(struct session *s)
{
	if (s->ksyms_tried)
		return s->ksyms;
	s->ksyms_tried = true;
	s->ksyms = ksyms_load("/proc/kallsyms");
	if (!s->ksyms)
		fprintf(stderr, "kmemsnoop: cannot read /proc/kallsyms (%s): call sites show as "
				"addresses\n", strerror(errno));
	return s->ksyms;
}

/* --- session_new: the kernel ------------------------------------------------ */

/* Whether bulk objects are read through bpf_loop() (the fel_ programs,
 * built with atomic fetch-add, which every such kernel should have). */
static bool bulk_loops(const struct kernel_features *kf)
{
	return kf->bpf_loop && kf->atomic_fetch;
}

/* The objects a bulk call hands over at most. */
static int bulk_max(const struct kernel_features *kf)
{
	return bulk_loops(kf) ? KMT_BULK_LOOP_MAX : KMT_BULK_MAX;
}

/* Whether src's objects are read through bpf_loop() (its fel_ program). */
static bool source_loops(const struct session *s, enum kmt_source src)
{
	return event_sources[src].loops && bulk_loops(&s->kf);
}

static void say_detected(const struct session *s)
{
	const struct kernel_features *kf = &s->kf;

	fprintf(stderr, "kmemsnoop: %d CPUs; kmalloc args %s, kmem_cache_alloc args %s, "
			"kmem_cache_free args %s; percpu %s; atomic fetch %s; tp_btf %s; "
			"bpf_loop %s (bulk calls: up to %d objects)\n",
		s->ncpus,
		kf->kmalloc_args == KMT_KMALLOC_NODE ? "with node" : "without node",
		kf->cache_alloc_args == KMT_CACHE_ALLOC_CACHE ? "with cache" : "with sizes",
		kf->cache_free_args == KMT_CACHE_FREE_CACHE ? "with cache" :
		kf->cache_free_args == KMT_CACHE_FREE_NAME ? "with name" : "plain",
		!kf->has_source[SRC_PERCPU_ALLOC_PERCPU] ? "none" :
		kf->percpu_args == KMT_PERCPU_FULL ? "with call site" :
		"without call site (bytes computed)",
		kf->atomic_fetch ? "yes" : "no (sequence numbers may repeat)",
		kf->tp_btf_void_arg ? "yes" : "no (it cannot read void * arguments: raw_tp)",
		kf->bpf_loop ? "yes" : "no", bulk_max(kf));
}

/* A ring and an -o file per CPU: on the largest machines more descriptors
 * than the usual soft limit of 1024.  Raised within the hard limit; past
 * it, creating a ring or file fails and says so. */
static void raise_open_files(int ncpus)
{
	rlim_t want = budget_open_files(ncpus);
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want ? rl.rlim_max : want;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int session_new(struct session *s, const struct env *env)
{
	/* SA_RESTART: a signal must not cut a write to the output short;
	 * epoll_wait and sleeps still return early, so the loop sees it. */
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	char why[256];

	memset(s, 0, sizeof(*s));
	s->env = env;
	s->cgroup_fd = -1;
	verbose_libbpf = env->verbose;
	libbpf_set_print(libbpf_print);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (memfit_check_start(why, sizeof(why)))
		return session_fail(s, "%s", why);
	s->vmlinux = btf__load_vmlinux_btf();
	if (!s->vmlinux)
		return session_fail(s, "cannot read the kernel's BTF (/sys/kernel/btf/vmlinux): %s; "
				       "kmemsnoop needs CONFIG_DEBUG_INFO_BTF=y", strerror(errno));
	if (kernel_features_detect(s->vmlinux, &s->kf, why, sizeof(why)))
		return session_fail(s, "%s", why);
	s->ncpus = libbpf_num_possible_cpus();
	if (s->ncpus <= 0)
		return session_fail(s, "cannot count the CPUs: %s", strerror(-s->ncpus));
	if (s->ncpus > KMT_MAX_CPUS)
		return session_fail(s, "%d CPUs: kmemsnoop handles at most %d", s->ncpus,
				    KMT_MAX_CPUS);
	raise_open_files(s->ncpus);
	if (env->verbose)
		say_detected(s);
	return 0;
}

/* --- session_setup: modes, the BPF object, attach ---------------------------- */

static int create_modes(struct session *s)
{
	static const struct mode_ops *const all[] = { &stream_mode, &statbpf_mode, &hist_mode,
						       &allocinfo_mode, &exporter_mode };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		struct mode *m;

		if (!all[i]->selected(s->env))
			continue;
		m = all[i]->create(s);
		if (!m)
			return -1;
		m->ops = all[i];
		m->session = s;
		s->modes[s->nmodes++] = m;
		m->ops->wants(m, &s->wants);
	}
	return 0;
}

static bool class_wanted(const struct session *s, const struct event_source *es)
{
	return es->role == ROLE_ALLOC ? (s->wants.alloc_classes & es->class) != 0 :
					(s->wants.free_classes & es->class) != 0;
}

bool session_source_wanted(const struct session *s, enum kmt_source src)
{
	const struct event_source *es = &event_sources[src];

	if (!s->kf.has_source[src])
		return false;
	for (int alt = 0; alt < SRC_COUNT; alt++)
		if ((es->unless & SOURCE_BIT(alt)) && s->kf.has_source[alt] &&
		    class_wanted(s, &event_sources[alt]))
			return false;
	switch (es->role) {
	case ROLE_TASK:
		return ((es->class & TASK_FOR_PID) && s->env->pid != 0) ||
		       ((es->class & TASK_FOR_RECORDS) && s->wants.task_records);
	case ROLE_ALLOC:
		return (s->wants.alloc_classes & es->class) != 0;
	case ROLE_FREE:
		return (s->wants.free_classes & es->class) != 0;
	}
	return false;
}

bool session_class_traced(const struct session *s, unsigned int class)
{
	for (int src = 0; src < SRC_COUNT; src++)
		if (event_sources[src].role == ROLE_ALLOC && (event_sources[src].class & class) &&
		    session_source_wanted(s, src))
			return true;
	return false;
}

static const char *const prog_prefix[2][2] = {
	/* [raw_tp][no atomic fetch] */
	{ "tp_", "tpc_" },
	{ "raw_", "rawc_" },
};

static bool is_function(enum kmt_source src)
{
	return event_sources[src].kind != SOURCE_TRACEPOINT;
}


static const char *function_prog_prefix(const struct session *s, enum kmt_source src)
{
	if (source_loops(s, src))
		return "fel_";
	return s->kf.atomic_fetch ? "fe_" : "fec_";
}

static struct bpf_program *source_prog(const struct session *s, enum kmt_source src)
{
	char name[64];

	snprintf(name, sizeof(name), "%s%s",
		 is_function(src) ? function_prog_prefix(s, src) :
				    prog_prefix[s->raw_tp][!s->kf.atomic_fetch],
		 event_sources[src].name);
	return bpf_object__find_program_by_name(s->skel->obj, name);
}

struct bpf_program *session_heartbeat_prog(const struct session *s)
{
	return s->kf.atomic_fetch ? s->skel->progs.heartbeat : s->skel->progs.heartbeatc;
}

static int choose_programs(struct session *s)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, s->skel->obj)
		bpf_program__set_autoload(prog, false);
	if (s->wants.heartbeats)
		bpf_program__set_autoload(session_heartbeat_prog(s), true);
	for (int src = 0; src < SRC_COUNT; src++) {
		if (!session_source_wanted(s, src))
			continue;
		prog = source_prog(s, src);
		bpf_program__set_autoload(prog, true);
		if (is_function(src) && bpf_program__set_attach_target(prog, 0, s->funcs[src]))
			return session_fail(s, "attaching to %s: %s", s->funcs[src], strerror(errno));
	}
	return 0;
}

/* How vmalloc is traced where its fexit cannot be: said once. */
static void say_vmalloc_fallback(const struct session *s, const char *why)
{
	if (s->kf.has_source[SRC_VMALLOC_NODE])
		fprintf(stderr, "kmemsnoop: vmalloc through %s only (%s): areas allocated by "
				"direct callers of __vmalloc_node_range (BPF maps, modules) are not "
				"seen\n", s->funcs[SRC_VMALLOC_NODE], why);
	else if (s->kf.has_source[SRC_ALLOC_VMAP_AREA])
		fprintf(stderr, "kmemsnoop: vmalloc through the vmap_area tracepoints (%s): "
				"sizes include the guard page, call sites come from a kernel stack\n", why);
	else
		fprintf(stderr, "kmemsnoop: vmalloc is not traced (%s; no vmap_area "
				"tracepoints)\n", why);
}

/* Slab objects allocated or freed in bulk have no tracepoint: said once. */
static void say_bulk_unseen(const struct session *s, const char *alloc_why,
			    const char *free_why)
{
	bool alloc = class_wanted(s, &event_sources[SRC_CACHE_ALLOC_BULK]);
	bool free = class_wanted(s, &event_sources[SRC_CACHE_FREE_BULK]);

	alloc = alloc && !s->funcs[SRC_CACHE_ALLOC_BULK];
	free = free && !s->funcs[SRC_CACHE_FREE_BULK];
	if (alloc && free && !strcmp(alloc_why, free_why)) {
		fprintf(stderr, "kmemsnoop: slab objects allocated or freed in bulk "
				"(kmem_cache_alloc_bulk, kmem_cache_free_bulk, kfree_bulk) are not "
				"seen (%s): --allocinfo keeps freed ones outstanding until their "
				"address is reused\n", alloc_why);
		return;
	}
	if (alloc)
		fprintf(stderr, "kmemsnoop: objects of kmem_cache_alloc_bulk are not seen (%s)\n",
			alloc_why);
	if (free)
		fprintf(stderr, "kmemsnoop: objects of kmem_cache_free_bulk and kfree_bulk are not "
				"seen (%s): --allocinfo keeps them outstanding until their address is "
				"reused\n", free_why);
}

/* Where the kernel has RCU sheaves but kmemsnoop cannot watch them. */
static void say_rcu_sheaf_unseen(const struct session *s, const char *why)
{
	const char *func = event_sources[SRC_KFREE_RCU_SHEAF].funcs[0];

	if (s->funcs[SRC_KFREE_RCU_SHEAF] || btf__find_by_name_kind(s->vmlinux, func,
								    BTF_KIND_FUNC) < 0)
		return;
	fprintf(stderr, "kmemsnoop: objects kfree_rcu() hands to a cache's RCU sheaf (%s) are "
			"not seen (%s): --allocinfo keeps them outstanding until their address is "
			"reused\n", func, why);
}

/*
 * The kernel functions of the fentry/fexit sources the modes want
 * (fentry.c), and once, what cannot be seen for want of them.  Rows whose
 * class is not selected are not probed, and then not loaded.
 */
static void choose_functions(struct session *s)
{
	char why[256] = "", row_why[256], bulk_why[2][256] = { "", "" };
	bool wanted = false;

	for (int src = 0; src < SRC_COUNT; src++) {
		const struct event_source *es = &event_sources[src];

		bool covered = false;

		if (!is_function(src) || !class_wanted(s, es))
			continue;
		wanted |= (es->class & EV_VMALLOC) != 0;
		for (int alt = 0; alt < src; alt++)
			covered |= (es->unless & SOURCE_BIT(alt)) && s->kf.has_source[alt];
		if (covered)
			continue; /* an earlier row serves instead */
		s->funcs[src] = fentry_choose(s->vmlinux, es, row_why, sizeof(row_why));
		s->kf.has_source[src] = s->funcs[src] != NULL;
		if (src == SRC_CACHE_ALLOC_BULK || src == SRC_CACHE_FREE_BULK)
			memcpy(bulk_why[src == SRC_CACHE_FREE_BULK], row_why, sizeof(row_why));
		else if (src == SRC_KFREE_RCU_SHEAF)
			say_rcu_sheaf_unseen(s, row_why);
		else if (!s->funcs[src] && !why[0])
			memcpy(why, row_why, sizeof(why));
		/* The allocations traced without their frees: say it. */
		if (!s->funcs[src] && es->role == ROLE_FREE && (es->class & EV_VMALLOC) &&
		    (s->kf.has_source[SRC_VMALLOC_NODE_RANGE] || s->kf.has_source[SRC_VMALLOC_NODE]))
			fprintf(stderr, "kmemsnoop: %s is not traced (%s): the vmalloc areas it "
					"frees stay outstanding for --allocinfo\n", es->name, row_why);
		if (s->funcs[src] && s->env->verbose)
			fprintf(stderr, "kmemsnoop: %s through %s %s\n", es->name, s->funcs[src],
				es->kind == SOURCE_FEXIT ? "(fexit)" : "(fentry)");
	}
	say_bulk_unseen(s, bulk_why[0], bulk_why[1]);
	if (wanted && !s->kf.has_source[SRC_VMALLOC_NODE_RANGE])
		say_vmalloc_fallback(s, why);
}

/* Forgets the fentry/fexit sources: their programs would not load. */
static bool drop_functions(struct session *s)
{
	bool dropped = false;

	for (int src = 0; src < SRC_COUNT; src++) {
		if (!is_function(src) || !s->kf.has_source[src] || !session_source_wanted(s, src))
			continue;
		s->kf.has_source[src] = false;
		s->funcs[src] = NULL;
		dropped = true;
	}
	return dropped;
}

/*
 * Page frame numbers need vmemmap's address, and the node of a slab
 * object the linear map's: measured once before load.
 */
static void calibrate_pages(struct session *s)
{
	char why[256];
	struct pfn_calib *c;

	if (!s->wants.pfns && !s->wants.linear_map)
		return;
	c = pfn_calib_open(s->vmlinux, why, sizeof(why));
	if (!c || pfn_calib_vmemmap(c, &s->vmemmap_base, why, sizeof(why))) {
		fprintf(stderr, "kmemsnoop: cannot compute page frame numbers (%s): %s\n", why,
			s->wants.pfns ? "pfn= shows 0xffffffffffffffff" :
					"the nodes that served slab objects are not known");
		pfn_calib_close(c);
		return;
	}
	if (s->env->verbose)
		fprintf(stderr, "kmemsnoop: struct page array at 0x%llx\n", s->vmemmap_base);
	if (s->wants.linear_map && pfn_calib_linear(c, &s->linear_map, why, sizeof(why))) {
		fprintf(stderr, "kmemsnoop: cannot find the kernel's linear map (%s): the nodes "
				"that served slab objects are not known\n", why);
		s->linear_map = 0;
	} else if (s->wants.linear_map && s->env->verbose) {
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
static void configure_common(struct session *s)
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
	configure_large(s);
	configure_text_ranges(s);
	configure_bulk(s);
	if (ro->sized_frees)
		bpf_map__set_max_entries(s->skel->maps.sized_ptrs, SIZE_FILTER_ENTRIES);
}

static int add_target(struct session *s)
{
	__u32 tgid = s->env->pid;
	__u8 one = 1;

	if (s->cgroup_fd >= 0) {
		__u32 zero = 0, fd = s->cgroup_fd;

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.cgroup_filter), &zero, &fd, BPF_ANY))
			return session_fail(s, "adding cgroup %s to the filter: %s", s->env->cgroup,
					    strerror(errno));
	}
	if (!tgid)
		return 0;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.traced_tgids), &tgid, &one, BPF_ANY))
		return session_fail(s, "adding PID %u to the filter: %s", tgid, strerror(errno));
	return 0;
}

/* In table order: the task sources first. */
static int attach_all(struct session *s)
{
	for (int src = 0; src < SRC_COUNT; src++) {
		if (!session_source_wanted(s, src))
			continue;
		s->links[src] = bpf_program__attach(source_prog(s, src));
		if (!s->links[src])
			return session_fail(s, "attaching to %s (%s): %s",
					    s->funcs[src] ? s->funcs[src] : event_sources[src].name,
					    is_function(src) ? "fentry" : s->raw_tp ? "raw_tp" : "tp_btf",
					    strerror(errno));
	}
	return 0;
}

static void detach_all(struct session *s)
{
	for (int src = 0; src < SRC_COUNT; src++) {
		bpf_link__destroy(s->links[src]);
		s->links[src] = NULL;
	}
}

static void unload(struct session *s)
{
	detach_all(s);
	kmemsnoop_bpf__destroy(s->skel);
	s->skel = NULL;
}

static int load_and_attach(struct session *s)
{
	int err;

	s->skel = kmemsnoop_bpf__open();
	if (!s->skel)
		return session_fail(s, "opening the BPF object: %s", strerror(errno));
	configure_common(s);
	for (int i = 0; i < s->nmodes; i++)
		s->modes[i]->ops->configure(s->modes[i], s->skel);
	if (choose_programs(s))
		return -1;
	/* Too big for the memory cgroup: no fallback would be smaller. */
	if (memfit_check(s->skel->obj, s->ncpus, s->wants.kernel_bytes, s->env->verbose, s->err,
			 sizeof(s->err))) {
		s->out_of_memory = true;
		return -1;
	}
	err = kmemsnoop_bpf__load(s->skel);
	if (err) {
		session_fail(s, "loading the BPF programs (%s): %s%s",
			     s->raw_tp ? "raw_tp" : "tp_btf", strerror(-err),
			     s->env->verbose ? "" : " (-v shows why)");
		/* Not EPERM here: the verifier and lockdown say that too. */
		return -err == ENOMEM ? session_refused(s, ENOMEM) : -1;
	}
	for (int i = 0; i < s->nmodes; i++)
		if (s->modes[i]->ops->loaded && s->modes[i]->ops->loaded(s->modes[i]))
			return -1;
	if (add_target(s))
		return -1;
	return attach_all(s);
}

/* tp_btf first; raw_tp if this kernel will not load or attach it. */
static int load_tracepoints(struct session *s)
{
	char first_err[sizeof(s->err)], second_err[sizeof(s->err)];

	/* No tp_btf program of ours loads where it cannot read void *. */
	s->raw_tp = s->env->force_raw_tp || !s->kf.tp_btf_void_arg;
	if (!load_and_attach(s))
		return 0;
	if (s->raw_tp || s->out_of_memory)
		return -1;
	memcpy(first_err, s->err, sizeof(first_err));
	unload(s);
	s->raw_tp = true;
	if (load_and_attach(s)) {
		memcpy(second_err, s->err, sizeof(second_err));
		return session_fail(s, "%s; with raw_tp: %s", first_err, second_err);
	}
	fprintf(stderr, "kmemsnoop: tp_btf unavailable (%s); using raw_tp\n", first_err);
	return 0;
}

/* A function program that probed well but will not load or attach with
 * the others must not cost the tracepoints: everything again without. */
static int load_with_fallback(struct session *s)
{
	char first_err[sizeof(s->err)];

	if (!load_tracepoints(s))
		return 0;
	if (s->out_of_memory)
		return -1;
	memcpy(first_err, s->err, sizeof(first_err));
	unload(s);
	if (!drop_functions(s))
		return session_fail(s, "%s", first_err);
	if (load_tracepoints(s))
		return -1;
	fprintf(stderr, "kmemsnoop: without the fentry/fexit programs (%s): vmalloc %s\n",
		first_err, session_source_wanted(s, SRC_ALLOC_VMAP_AREA) ?
				   "through the vmap_area tracepoints" : "is not traced");
	return 0;
}

/* -v: what the verifier walked for each program, where the kernel says
 * (5.16+): the load time of a program grows with it. */
static void say_verified(const struct session *s)
{
	for (int src = 0; src < SRC_COUNT; src++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!session_source_wanted(s, src) ||
		    bpf_obj_get_info_by_fd(bpf_program__fd(source_prog(s, src)), &info, &len) ||
		    !info.verified_insns)
			continue;
		fprintf(stderr, "kmemsnoop: %s: %u instructions verified\n",
			bpf_program__name(source_prog(s, src)), info.verified_insns);
	}
}

static void announce_tracing(const struct session *s)
{
	if (s->env->verbose)
		say_verified(s);
	fprintf(stderr, "kmemsnoop: Tracing kernel allocations%s... Hit Ctrl-C to end.\n",
		s->env->pid ? " of the process and its children" : "");
}

/* --cgroup: a cgroup v2 directory, opened before anything is loaded. */
static int open_cgroup(struct session *s)
{
	struct statfs fs;

	if (!s->env->cgroup)
		return 0;
	s->cgroup_fd = open(s->env->cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->cgroup_fd < 0)
		return session_fail(s, "--cgroup %s: %s", s->env->cgroup, strerror(errno));
	if (fstatfs(s->cgroup_fd, &fs) || fs.f_type != CGROUP2_SUPER_MAGIC)
		return session_fail(s, "--cgroup %s: not a cgroup v2 directory (mounted with -t "
				       "cgroup2)", s->env->cgroup);
	return 0;
}

int session_setup(struct session *s)
{
	if (open_cgroup(s) || create_modes(s))
		return -1;
	choose_functions(s);
	calibrate_pages(s);
	if (load_with_fallback(s))
		return -1;
	announce_tracing(s);
	for (int i = 0; i < s->nmodes; i++)
		if (s->modes[i]->ops->start && s->modes[i]->ops->start(s->modes[i]))
			return -1;
	return 0;
}

/* --- session_run: one loop for every mode ------------------------------------ */

unsigned long long session_missed(const struct session *s)
{
	unsigned long long misses = 0;

	for (int src = 0; src < SRC_COUNT; src++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!session_source_wanted(s, src))
			continue;
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(source_prog(s, src)), &info, &len))
			misses += info.recursion_misses;
	}
	return misses;
}

/* The kernel releases a pid when its process is reaped, after the frees
 * of its exit; the BPF side forgets the process only when its task is
 * freed, which RCU can put off for many seconds. */
static bool process_reaped(__u32 tgid)
{
	return kill((pid_t)tgid, 0) && errno == ESRCH;
}

static bool traced_processes_gone(const struct session *s)
{
	int fd = bpf_map__fd(s->skel->maps.traced_tgids);
	__u32 key, next, left = bpf_map__max_entries(s->skel->maps.traced_tgids);
	const __u32 *prev = NULL;

	if (!s->env->pid)
		return false;
	/* A key deleted under the walk restarts it: bound the steps. */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		if (!left--)
			return false;
		if (!process_reaped(next))
			return false;
		key = next;
		prev = &key;
	}
	return errno == ENOENT;
}

/* The mode that waits for the loop (rings, keys), if any. */
static struct mode *waiting_mode(const struct session *s)
{
	for (int i = 0; i < s->nmodes; i++)
		if (s->modes[i]->ops->wait)
			return s->modes[i];
	return NULL;
}

static int sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL); /* a signal ends it early: the loop looks */
	return MODE_OK;
}

/* Milliseconds to wait: until the next tick or the deadline, at most POLL_MS. */
static int wait_ms(const struct session *s, double now, double deadline)
{
	double until = deadline, left_ms;

	for (int i = 0; i < s->nmodes; i++)
		if (s->modes[i]->interval && (!until || s->modes[i]->next < until))
			until = s->modes[i]->next;
	if (!until)
		return POLL_MS;
	/* Clamped as a double: INTERVAL may be far beyond INT_MAX ms. */
	left_ms = (until - now) * 1000;
	return left_ms <= 0 ? 0 : left_ms >= POLL_MS ? POLL_MS : (int)left_ms + 1;
}

/*
 * Ticks the modes whose interval has come.  MODE_OK, MODE_END (a reader
 * went away), 1 + MODE_END when every ticking mode has done COUNT ticks,
 * or -1.
 */
enum { TICKS_COUNTED = MODE_END + 1 };

static int tick_due(struct session *s, double now)
{
	unsigned long count = s->env->count;
	bool ticking = false, all_counted = true;

	for (int i = 0; i < s->nmodes; i++) {
		struct mode *m = s->modes[i];
		int ret;

		if (!m->interval)
			continue;
		ticking = true;
		if (now >= m->next) {
			ret = m->ops->tick(m);
			if (ret)
				return ret;
			m->ticks++;
			/* After a stall (suspend, SIGSTOP), no burst of catch-up ticks. */
			m->next = m->next + m->interval > now ? m->next + m->interval :
								now + m->interval;
		}
		if (!count || m->ticks < count)
			all_counted = false;
	}
	return ticking && all_counted ? TICKS_COUNTED : MODE_OK;
}

static int loop(struct session *s)
{
	struct mode *waiter = waiting_mode(s);
	double start = now_seconds();
	double deadline = s->env->duration ? start + s->env->duration : 0;
	int ret = MODE_OK;

	for (int i = 0; i < s->nmodes; i++)
		s->modes[i]->next = start + s->modes[i]->interval;
	while (!stop_requested) {
		double now = now_seconds();
		int ms = wait_ms(s, now, deadline);

		ret = waiter ? waiter->ops->wait(waiter, ms) : sleep_ms(ms);
		if (ret)
			break;
		now = now_seconds();
		if (stop_requested || (deadline && now >= deadline))
			break;
		if (traced_processes_gone(s)) {
			s->target_gone = true;
			break;
		}
		ret = tick_due(s, now);
		if (ret)
			break;
	}
	if (ret < 0)
		return -1;
	/* After COUNT ticks the last tick was the last output. */
	s->counted_out = ret == TICKS_COUNTED;
	return 0;
}

/* -v with kernel.bpf_stats_enabled=1: what each program cost per run
 * (the kernel counts runs and time only while that is on). */
static void print_program_costs(const struct session *s)
{
	struct bpf_program *prog;

	if (!s->env->verbose)
		return;
	bpf_object__for_each_program(prog, s->skel->obj) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) || !info.run_cnt)
			continue;
		fprintf(stderr, "kmemsnoop: %s: %llu runs, %.0f ns per run (bpf_stats)\n",
			bpf_program__name(prog), (unsigned long long)info.run_cnt,
			(double)info.run_time_ns / (double)info.run_cnt);
	}
}

/* Detach first: the modes' last reading then has everything.  Every mode
 * closes its output even after a failure; the first failure is kept. */
static int finish(struct session *s, int ret)
{
	char first[sizeof(s->err)];

	memcpy(first, s->err, sizeof(first));
	detach_all(s);
	print_program_costs(s);
	for (int i = 0; i < s->nmodes; i++) {
		if (!s->modes[i]->ops->finish(s->modes[i], !s->counted_out) || ret)
			continue;
		memcpy(first, s->err, sizeof(first));
		ret = -1;
	}
	if (s->skel->bss->bulk_unseen)
		fprintf(stderr, "kmemsnoop: %llu objects of bulk allocations and frees were not "
				"seen: past the first %d of their call\n",
			(unsigned long long)s->skel->bss->bulk_unseen,
			bulk_max(&s->kf));
	if (s->target_gone)
		fprintf(stderr, "kmemsnoop: process %d and its children have exited\n", s->env->pid);
	memcpy(s->err, first, sizeof(first));
	return ret;
}

int session_run(struct session *s)
{
	return finish(s, loop(s));
}

void session_free(struct session *s)
{
	detach_all(s);
	for (int i = 0; i < s->nmodes; i++)
		s->modes[i]->ops->destroy(s->modes[i]);
	s->nmodes = 0;
	kmemsnoop_bpf__destroy(s->skel);
	s->skel = NULL;
	ksyms_free(s->ksyms);
	s->ksyms = NULL;
	btf__free(s->vmlinux);
	s->vmlinux = NULL;
	if (s->cgroup_fd >= 0)
		close(s->cgroup_fd);
	s->cgroup_fd = -1;
}
