// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The session: see session.h.  Everything here is the same for every
 * mode; what differs between modes is behind struct mode_ops.  This file
 * finds the kernel, creates the modes, chooses, loads and attaches the
 * programs; the read-only data set between open and load is in
 * session_configure.c, the run loop and the finish in session_run.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "kernel/tracefs.h"
#include "names/ksyms.h"
#include "env.h"
#include "kmemsnoop.skel.h"
#include "session.h"
#include "session_impl.h"

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
			"bpf_loop %s (bulk calls: up to %d objects); tp_btf and raw_tp runs "
			"preemptible %s\n",
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
		kf->bpf_loop ? "yes" : "no", bulk_max(kf), kf->tp_preemptible ? "yes" : "no");
}

/* Whether the kernel's kmem tracepoints have the layouts the classic
 * programs read (6.1+), and the atomics they use. */
static bool classic_layouts(const struct kernel_features *kf)
{
	return kf->atomic_fetch && kf->kmalloc_args == KMT_KMALLOC_NODE &&
	       kf->cache_alloc_args == KMT_CACHE_ALLOC_CACHE &&
	       kf->cache_free_args == KMT_CACHE_FREE_CACHE &&
	       (!kf->has_source[SRC_PERCPU_ALLOC_PERCPU] || kf->percpu_args == KMT_PERCPU_FULL);
}

/*
 * Classic tracepoint programs for the kmem events where the kernel runs
 * the others preemptibly (bpf/kmemsnoop.bpf.c), or where asked.  They
 * attach through tracefs, mounted here if it is not.
 */
static int choose_classic(struct session *s)
{
	enum prog_type t = s->env->prog_type;
	struct ksyms *ks;
	bool mounted;
	char why[256];

	if (t != PROG_TRACEPOINT && !(t == PROG_AUTO && s->kf.tp_preemptible))
		return 0;
	if (!classic_layouts(&s->kf)) {
		if (t == PROG_TRACEPOINT)
			return session_fail(s, "--prog-type=tracepoint needs the kmem tracepoints of "
					       "6.1+ kernels and BPF atomic fetch-add (5.12+)");
		return 0;
	}
	if (tracefs_ensure(&mounted, why, sizeof(why))) {
		if (t == PROG_TRACEPOINT)
			return session_fail(s, "--prog-type=tracepoint: %s", why);
		fprintf(stderr, "kmemsnoop: %s: tp_btf programs, which this kernel runs "
				"preemptibly: it skips events while a run is preempted\n", why);
		return 0;
	}
	s->classic = true;
	/* The neighbours read bpf_prog_active, which the kernel finds by name
	 * only with CONFIG_KALLSYMS_ALL. */
	ks = s->kf.tp_btf_void_arg ? session_ksyms(s) : NULL;
	s->classic_nested = ks && ksyms_addr_of(ks, "bpf_prog_active");
	if (s->env->verbose)
		fprintf(stderr, "kmemsnoop: classic tracepoint programs for the kmem events (%s)%s; "
				"%s\n",
			t == PROG_TRACEPOINT ? "--prog-type=tracepoint" :
			"this kernel runs tp_btf and raw_tp programs preemptibly",
			mounted ? "; tracefs mounted on /sys/kernel/tracing" : "",
			s->classic_nested ? "tp_btf ones beside them for the events in interrupts "
					    "during a run" :
			"the events in interrupts during a run are skipped (no tp_btf, or no "
			"bpf_prog_active in /proc/kallsyms: CONFIG_KALLSYMS_ALL)");
	return 0;
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
	struct sigaction sa = { .sa_handler = session_on_signal, .sa_flags = SA_RESTART };
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
	return choose_classic(s);
}

/* --- session_setup: modes, the BPF object, attach ---------------------------- */

static int create_modes(struct session *s)
{
	static const struct mode_ops *const all[] = { &stream_mode, &statbpf_mode, &hist_mode,
						       &allocinfo_mode, &exporter_mode,
						       &flight_mode };

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

/* A kmem tracepoint's classic program (tpe_<tp>), where one is chosen and
 * the object has one: the sched tracepoints keep tp_btf, for the task
 * pointers their records lack. */
static struct bpf_program *classic_prog(const struct session *s, enum kmt_source src)
{
	char name[64];

	if (!s->classic || is_function(src))
		return NULL;
	snprintf(name, sizeof(name), "tpe_%s", event_sources[src].name);
	return bpf_object__find_program_by_name(s->skel->obj, name);
}

/* The tp_btf program beside src's classic one (tpn_<tp>), or NULL: none
 * where tp_btf cannot read the arguments. */
static struct bpf_program *nested_prog(const struct session *s, enum kmt_source src)
{
	char name[64];

	if (!s->classic_nested || !classic_prog(s, src))
		return NULL;
	snprintf(name, sizeof(name), "tpn_%s", event_sources[src].name);
	return bpf_object__find_program_by_name(s->skel->obj, name);
}

static struct bpf_program *source_prog(const struct session *s, enum kmt_source src)
{
	struct bpf_program *classic = classic_prog(s, src);
	char name[64];

	if (classic)
		return classic;
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

int session_traced_tracepoints(const struct session *s, const char **names)
{
	int n = 0;

	for (int src = 0; src < SRC_COUNT; src++)
		if (event_sources[src].kind == SOURCE_TRACEPOINT && session_source_wanted(s, src))
			names[n++] = event_sources[src].name;
	return n;
}

void session_staging_losses(const struct session *s, unsigned long long *events,
			    unsigned long long *bytes)
{
	*events = *bytes = 0;
	for (int cpu = 0; cpu < s->ncpus && cpu < KMT_MAX_CPUS; cpu++) {
		*events += s->skel->bss->losses[cpu].events;
		*bytes += s->skel->bss->losses[cpu].bytes;
	}
}

int session_beat_cpu(const struct session *s, int cpu)
{
	int fd = bpf_program__fd(session_heartbeat_prog(s));
	LIBBPF_OPTS(bpf_test_run_opts, opts, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);

	if (fd < 0)
		return -EBADF;
	return bpf_prog_test_run_opts(fd, &opts);
}

static int choose_programs(struct session *s)
{
	struct bpf_program *prog, *nested;

	bpf_object__for_each_program(prog, s->skel->obj)
		bpf_program__set_autoload(prog, false);
	if (s->wants.heartbeats) {
		bpf_program__set_autoload(session_heartbeat_prog(s), true);
		bpf_program__set_autoload(s->skel->progs.cpu_going_down, true);
	}
	if (s->wants.oom_victims)
		bpf_program__set_autoload(s->skel->progs.flight_oom_victim, true);
	for (int src = 0; src < SRC_COUNT; src++) {
		if (!session_source_wanted(s, src))
			continue;
		prog = source_prog(s, src);
		bpf_program__set_autoload(prog, true);
		nested = nested_prog(s, src);
		if (nested)
			bpf_program__set_autoload(nested, true);
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

/* What runs src's program, for messages. */
static const char *prog_kind(const struct session *s, enum kmt_source src)
{
	if (is_function(src))
		return event_sources[src].kind == SOURCE_FEXIT ? "fexit" : "fentry";
	if (classic_prog(s, src))
		return "tracepoint";
	return s->raw_tp ? "raw_tp" : "tp_btf";
}

/*
 * The hotplug states a CPU going offline runs itself: it copies what it
 * staged into its ring there, since nothing can run the heartbeat on it
 * until it is back, and the reader does not wait for an offline CPU.
 * Without them (no CONFIG_HOTPLUG_CPU) no CPU goes offline: said with -v.
 */
static void attach_hotplug(struct session *s)
{
	static const char *const tracepoints[SESSION_HOTPLUG_LINKS] = { "cpuhp_enter",
									"cpuhp_exit" };

	if (!s->wants.heartbeats)
		return;
	for (int i = 0; i < SESSION_HOTPLUG_LINKS; i++) {
		s->hotplug_links[i] = bpf_program__attach_raw_tracepoint(s->skel->progs.cpu_going_down,
									 tracepoints[i]);
		if (!s->hotplug_links[i] && s->env->verbose)
			fprintf(stderr, "kmemsnoop: no %s tracepoint (%s): what a CPU going offline "
					"staged is printed once it is back\n",
				tracepoints[i], strerror(errno));
	}
}

/* In table order: the task sources first. */
static int attach_all(struct session *s)
{
	attach_hotplug(s);
	for (int src = 0; src < SRC_COUNT; src++) {
		struct bpf_program *nested;

		if (!session_source_wanted(s, src))
			continue;
		s->links[src] = bpf_program__attach(source_prog(s, src));
		if (!s->links[src])
			return session_fail(s, "attaching to %s (%s): %s",
					    s->funcs[src] ? s->funcs[src] : event_sources[src].name,
					    prog_kind(s, src), strerror(errno));
		nested = nested_prog(s, src);
		if (!nested)
			continue;
		s->nested_links[src] = bpf_program__attach(nested);
		if (!s->nested_links[src])
			return session_fail(s, "attaching to %s (tp_btf, beside tracepoint): %s",
					    event_sources[src].name, strerror(errno));
	}
	return 0;
}

void session_detach_all(struct session *s)
{
	for (int i = 0; i < SESSION_HOTPLUG_LINKS; i++) {
		bpf_link__destroy(s->hotplug_links[i]);
		s->hotplug_links[i] = NULL;
	}
	for (int src = 0; src < SRC_COUNT; src++) {
		bpf_link__destroy(s->links[src]);
		s->links[src] = NULL;
		bpf_link__destroy(s->nested_links[src]);
		s->nested_links[src] = NULL;
	}
}

static void unload(struct session *s)
{
	session_detach_all(s);
	kmemsnoop_bpf__destroy(s->skel);
	s->skel = NULL;
}

static int load_and_attach(struct session *s)
{
	int err;

	s->skel = kmemsnoop_bpf__open();
	if (!s->skel)
		return session_fail(s, "opening the BPF object: %s", strerror(errno));
	session_configure(s);
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
		session_fail(s, "loading the BPF programs (%s%s): %s%s",
			     s->classic ? "tracepoint, " : "", s->raw_tp ? "raw_tp" : "tp_btf",
			     strerror(-err),
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
	s->raw_tp = s->env->prog_type == PROG_RAW_TP || !s->kf.tp_btf_void_arg;
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
	session_calibrate_pages(s);
	if (load_with_fallback(s))
		return -1;
	announce_tracing(s);
	for (int i = 0; i < s->nmodes; i++)
		if (s->modes[i]->ops->start && s->modes[i]->ops->start(s->modes[i]))
			return -1;
	return 0;
}

/* --- the programs' counters, read when the run ends (session_run.c) --------- */

static unsigned long long prog_misses(const struct bpf_program *prog)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (!prog || bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		return 0;
	return info.recursion_misses;
}

/*
 * The kernel's count of events it did not run a program for, less those a
 * classic program skipped that its tp_btf neighbour took.  The neighbour's
 * own misses are not events lost: it skips while a preempted run holds it,
 * and what it skipped the classic program took but for those counted.
 */
unsigned long long session_missed(const struct session *s)
{
	unsigned long long misses = 0;

	for (int src = 0; src < SRC_COUNT; src++)
		if (session_source_wanted(s, src))
			misses += prog_misses(source_prog(s, src));
	return misses > s->skel->bss->nested_taken ? misses - s->skel->bss->nested_taken : 0;
}

void session_free(struct session *s)
{
	session_detach_all(s);
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
