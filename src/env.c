// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Command-line options.  Every option is one row of the table below: its
 * names, its value, its help text and the function that stores it in
 * struct env.  getopt_long's option array, the short option string and
 * the options part of --help are all made from that table.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/budget.h"
#include "env.h"
#include "bpf/kmemsnoop.h"
#include "kernel/sources.h"

#define DEFAULT_NICE -10
#define DEFAULT_AI_MAX_PTRS (1ULL << 20)
#define DEFAULT_STAT_MAX_PTRS (1ULL << 18) /* 40-byte values in a hash: about 100 bytes each */
#define DEFAULT_AI_MAX_STACKS (16ULL << 10) /* --stacks */
#define DEFAULT_AI_PAGE_STACKS (4ULL << 10)  /* the stacks of page allocations */
#define AI_MAX_PTRS_LIMIT (1ULL << 28)
#define AI_MAX_STACKS_LIMIT (1ULL << 20)
#define DEFAULT_TOP 10
#define DEFAULT_HIST_INTERVAL 1.0
#define MIN_HIST_INTERVAL 0.1
#define MAX_TOP 10000
#define MAX_HIST_KEYS (1 << 20)

/* The help's layout: option names, then their text from this column. */
#define HELP_WIDTH 80
#define HELP_COLUMN 25

/* --- values --------------------------------------------------------------- */

struct parse {
	struct env *env;
	char *err;
	size_t err_size;
	bool max_ptrs_set;
	bool max_stacks_set;
	bool events_set;
	/* perf kmem's rule: -s and -l go to the table (--caller or --alloc)
	 * and the allocator (--slab or --page) named last before them. */
	int seq, caller_seq, alloc_seq, slab_seq, page_seq;
	bool stat_option; /* one of the options above */
};

__attribute__((format(printf, 2, 3))) static bool bad(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->err_size, fmt, ap);
	va_end(ap);
	return false;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static bool parse_int_range(const char *s, long min, long max, int *out)
{
	uint64_t v;

	if (!parse_u64(s, &v) || (long long)v < min || v > (uint64_t)max)
		return false;
	*out = (int)v;
	return true;
}

/* "8M", "65536", "1G": bytes, binary suffixes. */
static bool parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || v > (~0ULL >> shift))
		return false;
	*out = v << shift;
	return true;
}

static bool parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e9)
		return false;
	*out = v;
	return true;
}

/* A comma-separated list of event class names (sources.c), or "all". */
static bool parse_events(const char *list, unsigned int *mask)
{
	char buf[128], *save = NULL, *tok;

	if (strlen(list) >= sizeof(buf))
		return false;
	strcpy(buf, list);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned int m = !strcmp(tok, "all") ? EV_ALL : !strcmp(tok, "pages") ? EV_PAGE : 0;

		for (int i = 0; i < event_class_count && !m; i++)
			if (!strcmp(tok, event_classes[i].name))
				m = event_classes[i].class;
		if (!m)
			return false;
		*mask |= m;
	}
	return *mask != 0;
}

/* --- one handler per option ------------------------------------------------ */

static bool opt_pid(struct parse *p, const char *arg)
{
	return parse_int_range(arg, 1, INT_MAX, &p->env->pid) || bad(p, "invalid PID '%s'", arg);
}

static bool opt_tid(struct parse *p, const char *arg)
{
	return parse_int_range(arg, 1, INT_MAX, &p->env->tid) || bad(p, "invalid TID '%s'", arg);
}

static bool opt_comm(struct parse *p, const char *arg)
{
	if (!*arg || strlen(arg) >= sizeof(p->env->comm))
		return bad(p, "invalid COMM '%s': 1 to 15 characters", arg);
	strcpy(p->env->comm, arg);
	return true;
}

static bool opt_cgroup(struct parse *p, const char *arg)
{
	if (!*arg)
		return bad(p, "--cgroup needs a path");
	p->env->cgroup = arg;
	return true;
}

static bool opt_cpu(struct parse *p, const char *arg)
{
	return parse_int_range(arg, 0, KMT_MAX_CPUS - 1, &p->env->cpu) ||
	       bad(p, "invalid CPU '%s'", arg);
}

static bool opt_events(struct parse *p, const char *arg)
{
	p->events_set = true;
	return parse_events(arg, &p->env->events) ||
	       bad(p, "invalid event list '%s': use kmalloc, cache, page, vmalloc, percpu", arg);
}

static bool opt_min_size(struct parse *p, const char *arg)
{
	return parse_size(arg, &p->env->min_size) || bad(p, "invalid --min-size '%s'", arg);
}

static bool opt_max_size(struct parse *p, const char *arg)
{
	return parse_size(arg, &p->env->max_size) || bad(p, "invalid --max-size '%s'", arg);
}

static bool opt_output(struct parse *p, const char *arg)
{
	p->env->output_dir = arg;
	return true;
}

static bool opt_input(struct parse *p, const char *arg)
{
	p->env->input_dir = arg;
	return true;
}

static bool opt_duration(struct parse *p, const char *arg)
{
	return parse_seconds(arg, &p->env->duration) ||
	       bad(p, "invalid duration '%s': seconds, more than 0", arg);
}

static bool opt_buffer_size(struct parse *p, const char *arg)
{
	uint64_t *size = &p->env->ring_size;

	if (!parse_size(arg, size) || *size < BUDGET_RING_MIN || *size > (1ULL << 30) ||
	    (*size & (*size - 1)))
		return bad(p, "invalid buffer size '%s': a power of two from 64K to 1G", arg);
	return true;
}

static bool opt_nice(struct parse *p, const char *arg)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < -20 || v > 19)
		return bad(p, "invalid --nice '%s': -20 to 19", arg);
	p->env->nice = (int)v;
	return true;
}

static bool opt_allocinfo(struct parse *p, const char *arg)
{
	if (arg && strcmp(arg, "total") != 0)
		return bad(p, "invalid --allocinfo value '%s': only 'total'", arg);
	p->env->ai_total = arg != NULL;
	return true;
}

static bool opt_vmlinux(struct parse *p, const char *arg)
{
	if (!*arg)
		return bad(p, "--vmlinux needs a path");
	p->env->vmlinux = arg;
	return true;
}

static bool opt_pprof(struct parse *p, const char *arg)
{
	if (!*arg)
		return bad(p, "--pprof needs a file name");
	p->env->pprof = arg;
	return true;
}

static bool opt_max_ptrs(struct parse *p, const char *arg)
{
	uint64_t *n = &p->env->ai_max_ptrs;

	p->max_ptrs_set = true;
	return (parse_size(arg, n) && *n && *n <= AI_MAX_PTRS_LIMIT) ||
	       bad(p, "invalid --max-ptrs '%s': 1 to 256M", arg);
}

static bool opt_max_stacks(struct parse *p, const char *arg)
{
	uint64_t *n = &p->env->ai_max_stacks;

	p->max_stacks_set = true;
	return (parse_size(arg, n) && *n && *n <= AI_MAX_STACKS_LIMIT) ||
	       bad(p, "invalid --max-stacks '%s': 1 to 1M", arg);
}

static bool opt_hist(struct parse *p, const char *arg)
{
	if (!arg || !strcmp(arg, "alloc"))
		p->env->hist_value = KMT_HIST_ALLOC;
	else if (!strcmp(arg, "req"))
		p->env->hist_value = KMT_HIST_REQ;
	else
		return bad(p, "invalid --hist '%s': use --hist, --hist=alloc or --hist=req", arg);
	return true;
}

static bool opt_hist_by(struct parse *p, const char *arg)
{
	static const char *const names[KMT_BY_COUNT] = {
		[KMT_BY_CACHE] = "cache", [KMT_BY_CALLSITE] = "callsite", [KMT_BY_COMM] = "comm",
		[KMT_BY_CGROUP] = "cgroup", [KMT_BY_EVENT] = "event", [KMT_BY_ORDER] = "order",
	};

	for (int i = KMT_BY_NONE + 1; i < KMT_BY_COUNT; i++) {
		if (!strcmp(arg, names[i])) {
			p->env->hist_by = i;
			return true;
		}
	}
	return bad(p, "invalid --hist-by '%s': use cache, callsite, comm, cgroup, event or order",
		   arg);
}

static bool opt_top(struct parse *p, const char *arg)
{
	return parse_int_range(arg, 1, MAX_TOP, &p->env->top) ||
	       bad(p, "invalid --top '%s': a number from 1 to 10000", arg);
}

/* --live implies --hist. */
static bool opt_hist_on(struct parse *p, const char *arg)
{
	(void)arg;
	p->env->hist = true;
	return true;
}

static bool opt_hist_keys(struct parse *p, const char *arg)
{
	int n;

	if (!parse_int_range(arg, 1, MAX_HIST_KEYS, &n))
		return bad(p, "invalid --hist-keys '%s': a number from 1 to 1048576", arg);
	p->env->hist_keys = n;
	return true;
}

/* "[ADDR:]PORT": the port is checked here, the address when it is bound. */
static bool opt_listen(struct parse *p, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	int port;

	if (!parse_int_range(colon ? colon + 1 : arg, 1, 65535, &port))
		return bad(p, "invalid --listen '%s': [ADDR:]PORT, PORT from 1 to 65535", arg);
	p->env->listen = arg;
	return true;
}

static bool opt_stat(struct parse *p, const char *arg)
{
	(void)arg;
	p->env->stat = true;
	return true;
}

static bool stat_flag(struct parse *p, int *seq)
{
	*seq = ++p->seq;
	p->stat_option = true;
	return true;
}

static bool opt_caller(struct parse *p, const char *arg)
{
	(void)arg;
	p->env->stat_opts.caller = true;
	return stat_flag(p, &p->caller_seq);
}

static bool opt_alloc(struct parse *p, const char *arg)
{
	(void)arg;
	p->env->stat_opts.alloc = true;
	return stat_flag(p, &p->alloc_seq);
}

static bool opt_slab(struct parse *p, const char *arg)
{
	(void)arg;
	p->env->stat_opts.slab = true;
	return stat_flag(p, &p->slab_seq);
}

static bool opt_page(struct parse *p, const char *arg)
{
	(void)arg;
	p->env->stat_opts.page = true;
	return stat_flag(p, &p->page_seq);
}

static bool opt_sort(struct parse *p, const char *arg)
{
	struct kstat_opts *o = &p->env->stat_opts;
	bool page = p->page_seq > p->slab_seq, caller = p->caller_seq > p->alloc_seq;
	struct kstat_sort *sort = page ? (caller ? &o->page_caller_sort : &o->page_alloc_sort)
				       : (caller ? &o->caller_sort : &o->alloc_sort);

	p->stat_option = true;
	return !kstat_sort_parse(arg, page, sort, p->err, p->err_size);
}

static bool opt_line(struct parse *p, const char *arg)
{
	struct kstat_opts *o = &p->env->stat_opts;

	p->stat_option = true;
	return parse_int_range(arg, 0, INT_MAX, p->caller_seq > p->alloc_seq ? &o->caller_lines :
					       &o->alloc_lines) ||
	       bad(p, "invalid --line '%s': a number of rows", arg);
}

static bool opt_stat_stream(struct parse *p, const char *arg)
{
	(void)arg;
	p->env->stat_stream = true;
	p->stat_option = true;
	return true;
}

/* Options that only set their flag; --help and --version, which end
 * parsing. */
static bool opt_none(struct parse *p, const char *arg)
{
	(void)p;
	(void)arg;
	return true;
}

/* --- the table --------------------------------------------------------------- */

enum opt_group {
	GROUP_FILTER, GROUP_OUTPUT, GROUP_ALLOCINFO, GROUP_HIST, GROUP_STAT, GROUP_EXPORT,
	GROUP_CONTROL
};

static const char *const group_titles[] = {
	[GROUP_FILTER] = "Filters (applied in the kernel, before anything is recorded):",
	[GROUP_OUTPUT] = "Output:",
	[GROUP_ALLOCINFO] = "Allocation profile (/proc/allocinfo for any kernel):",
	[GROUP_HIST] = "Histograms (counted in the kernel, nothing sent per event):",
	[GROUP_STAT] = "Statistics (perf kmem stat's tables, and object lifetimes):",
	[GROUP_EXPORT] = "Metrics endpoint (Prometheus):",
	[GROUP_CONTROL] = "Control:",
};

/* Long-only options get a getopt value above every character. */
#define LONG_ONLY(n) (0x100 + (n))

/* A bool of struct env that an option sets to true; 0: none. */
#define FLAG(field) (offsetof(struct env, field) + 1)

struct opt_spec {
	const char *name;
	int key;            /* the short option's letter, or LONG_ONLY(n) */
	int has_arg;        /* getopt_long's no/required/optional_argument */
	const char *value;  /* what --help shows after the name: "=PID", "[=total]" */
	enum opt_group group;
	const char *help;
	bool (*parse)(struct parse *p, const char *arg); /* its value, if any */
	size_t flag;        /* FLAG(field): set when the option is given */
};

enum { KEY_HELP = 'h', KEY_VERSION = 'V' };

static const struct opt_spec options[] = {
	{ "pid", 'p', required_argument, "=PID", GROUP_FILTER,
	  "only process PID (all its threads), and the processes it forks after the trace "
	  "starts; ends when they are gone", opt_pid, 0 },
	{ "tid", 't', required_argument, "=TID", GROUP_FILTER, "only thread TID", opt_tid, 0 },
	{ "comm", 'c', required_argument, "=COMM", GROUP_FILTER,
	  "only tasks whose name (comm) is COMM", opt_comm, 0 },
	{ "cpu", 'C', required_argument, "=CPU", GROUP_FILTER, "only events on CPU", opt_cpu, 0 },
	{ "cgroup", LONG_ONLY(17), required_argument, "=PATH", GROUP_FILTER,
	  "only tasks in the cgroup v2 directory PATH or its descendants (a container: e.g. "
	  "/sys/fs/cgroup/system.slice/NAME.scope)", opt_cgroup, 0 },
	{ "events", 'e', required_argument, "=LIST", GROUP_FILTER,
	  "event classes, comma separated: kmalloc (kmalloc, kfree, kfree_bulk, kfree_rcu), cache "
	  "(kmem_cache_alloc, kmem_cache_free, and the objects of kmem_cache_alloc_bulk and "
	  "kmem_cache_free_bulk where fentry is allowed), page (mm_page_alloc, mm_page_free), vmalloc (vmalloc, vfree), "
	  "percpu (percpu_alloc_percpu, percpu_free_percpu); default: all", opt_events, 0 },
	{ "min-size", LONG_ONLY(0), required_argument, "=BYTES", GROUP_FILTER,
	  "only allocations of at least BYTES requested (pages: PAGE_SIZE << order), and the "
	  "frees of those", opt_min_size, FLAG(size_filter) },
	{ "max-size", LONG_ONLY(1), required_argument, "=BYTES", GROUP_FILTER,
	  "only allocations of at most BYTES requested, and their frees", opt_max_size,
	  FLAG(size_filter) },

	{ "output", 'o', required_argument, "=DIR", GROUP_OUTPUT,
	  "write kmemtrace binary files instead of text: DIR/cpuN (each CPU's records in "
	  "order), DIR/abi_version, DIR/total_overruns (bytes lost), DIR/total_overrun_events, "
	  "DIR/header (what recorded it, when), DIR/gfp (the kernel's GFP flag names)",
	  opt_output, 0 },
	{ "input", 'i', required_argument, "=DIR", GROUP_OUTPUT,
	  "read such a directory and print it as text, in time order, after # lines of its "
	  "header", opt_input, 0 },
	{ "json", LONG_ONLY(16), no_argument, "", GROUP_OUTPUT,
	  "JSON lines instead of text (docs/JSON.md): one object per event (streaming and "
	  "-i), per interval (--hist), per table (--allocinfo), per report (--stat)", opt_none,
	  FLAG(json) },

	{ "allocinfo", LONG_ONLY(2), optional_argument, "", GROUP_ALLOCINFO,
	  "count in BPF maps, per call site, the bytes and the number of the allocations made "
	  "during the session that are still outstanding (frees subtract; frees of memory "
	  "allocated before the session are ignored, and counted); printed at the end, or "
	  "every INTERVAL seconds (COUNT times), as /proc/allocinfo: \"%12lli %8llu <tag> \" "
	  "lines under its two header lines. The tag is \"file:line [module] func:function\" "
	  "with kernel debug information, else \"function+0xoff [module] func:function\". "
	  "Pages are tagged by the first caller outside the page allocator, found in their "
	  "kernel stack", opt_allocinfo, FLAG(allocinfo) },
	{ "allocinfo", 0, optional_argument, "=total", GROUP_ALLOCINFO,
	  "all the bytes and calls allocated during the session, freed or not (only "
	  "allocations are traced)", NULL, 0 },
	{ "stacks", LONG_ONLY(3), no_argument, "", GROUP_ALLOCINFO,
	  "key by kernel stack instead of call site; every entry is followed by its frames, "
	  "innermost first", opt_none, FLAG(ai_stacks) },
	{ "folded", LONG_ONLY(4), no_argument, "", GROUP_ALLOCINFO,
	  "with --stacks: print \"outer;...;inner bytes\" lines, as flame graph tools read "
	  "them, instead", opt_none, FLAG(ai_folded) },
	{ "vmlinux", LONG_ONLY(5), required_argument, "=PATH", GROUP_ALLOCINFO,
	  "the running kernel's vmlinux with DWARF, for file:line tags (default: searched in "
	  "/usr/lib/debug/boot, /usr/lib/debug/lib/modules/RELEASE, /boot, /lib/modules)",
	  opt_vmlinux, 0 },
	{ "pprof", LONG_ONLY(25), required_argument, "=FILE", GROUP_ALLOCINFO,
	  "also write each table to FILE (mode 0600: it holds kernel addresses) as a gzip'd "
	  "pprof heap profile: alloc_objects and alloc_space (allocated during the session), "
	  "inuse_objects and inuse_space (still outstanding; not with =total), one location "
	  "per call site or, with --stacks, per frame; for go tool pprof, Pyroscope, Parca",
	  opt_pprof, 0 },
	{ "max-ptrs", LONG_ONLY(6), required_argument, "=N", GROUP_ALLOCINFO,
	  "allocations tracked at once (default 1M; 64 bytes of kernel memory each, about 90 "
	  "before Linux 5.12); what does not fit is counted and reported, not tracked.  Also "
	  "--stat's pointer map when it counts in BPF maps (default 256K, about 100 bytes "
	  "each)",
	  opt_max_ptrs, 0 },
	{ "max-stacks", LONG_ONLY(7), required_argument, "=N", GROUP_ALLOCINFO,
	  "distinct kernel stacks (default 16K with --stacks, else 4K for the page "
	  "allocations); allocations whose stack finds no room are counted and reported",
	  opt_max_stacks, 0 },

	{ "hist", LONG_ONLY(8), optional_argument, "[=alloc|req]", GROUP_HIST,
	  "log2 histograms of allocation sizes, bytes allocated (default) or bytes requested, "
	  "every INTERVAL seconds (default 1, at least 0.1), COUNT times (default: until "
	  "Ctrl-C).  On a terminal: a live full-screen view (q or Ctrl-C quits); otherwise one "
	  "text block per interval.  With --allocinfo too, both are counted in one run and "
	  "each prints what it prints alone", opt_hist, FLAG(hist) },
	{ "hist-by", LONG_ONLY(9), required_argument, "=KEY", GROUP_HIST,
	  "one histogram per KEY: cache (the slab cache; kmalloc by size class, pages by "
	  "order), callsite (the allocating function), comm (task name), cgroup (the task's "
	  "cgroup v2 path, e.g. a container's), event (kmalloc, "
	  "kmem_cache_alloc, mm_page_alloc, vmalloc, percpu_alloc_percpu; bulk calls' objects "
	  "under the first two) or order (page order); implies --hist.  The live "
	  "view's two tables: KEY (default cache) and call sites (or caches)", opt_hist_by,
	  FLAG(hist) },
	{ "top", LONG_ONLY(10), required_argument, "=N", GROUP_HIST,
	  "show the N busiest keys (default 10; live view: as many as fit)", opt_top,
	  FLAG(top_set) },
	{ "live", LONG_ONLY(11), no_argument, "", GROUP_HIST,
	  "the live view even when stdout is not a terminal (implies --hist)", opt_hist_on,
	  FLAG(live) },
	{ "hist-keys", LONG_ONLY(12), required_argument, "=N", GROUP_HIST,
	  "room for N keys per table (default: up to 16384, less with many CPUs, about 32 MiB "
	  "in all); allocations whose key finds no room are counted as untracked",
	  opt_hist_keys, 0 },

	{ "listen", LONG_ONLY(15), required_argument, "=[ADDR:]PORT", GROUP_EXPORT,
	  "serve /metrics over HTTP on ADDR (default 127.0.0.1; an IPv6 ADDR in brackets) "
	  "until stopped: allocations, frees, failures and bytes by class as counters, size "
	  "histograms, the --top busiest caches, call sites, comms and cgroups of late (the "
	  "others summed under \"other\"), outstanding memory per call site as gauges, and what was "
	  "missed or not counted; read from BPF maps at each scrape, nothing sent per event. "
	  "Prometheus text format, or OpenMetrics when the scraper asks for it", opt_listen,
	  0 },

	{ "stat", LONG_ONLY(20), no_argument, "", GROUP_STAT,
	  "analyse the events instead of printing them, live (every INTERVAL seconds, COUNT "
	  "times, or at the end; what was seen since the start) or from a recording (-i DIR): "
	  "perf kmem stat's tables and SUMMARY (fragmentation, ping-pong: frees on another CPU "
	  "than the allocation), then object lifetimes per call site and per cache (log2 "
	  "histograms, p50, p99), the objects still alive, a table per process.  Traces the slab "
	  "events only unless --page or -e says otherwise.  Live, the slab tables are counted in "
	  "BPF maps (the default, --caller, --slab); --alloc, --page, -e page and --stat-stream "
	  "send every event to user space instead, as -i DIR reads every event", opt_stat, 0 },
	{ "caller", LONG_ONLY(21), no_argument, "", GROUP_STAT,
	  "with --stat: the table per call site", opt_caller, 0 },
	{ "alloc", LONG_ONLY(22), no_argument, "", GROUP_STAT,
	  "with --stat: the table per pointer (slab) or per page frame (page)", opt_alloc, 0 },
	{ "slab", LONG_ONLY(23), no_argument, "", GROUP_STAT,
	  "with --stat: the slab allocator (kmalloc, kmem_cache_alloc; the default)", opt_slab, 0 },
	{ "page", LONG_ONLY(24), no_argument, "", GROUP_STAT,
	  "with --stat: the page allocator (order x migrate type x GFP flags); with --slab too, "
	  "both", opt_page, 0 },
	{ "sort", 's', required_argument, "=KEYS", GROUP_STAT,
	  "with --stat: sort the table named last (--caller or --alloc; default --alloc) of the "
	  "allocator named last (--slab or --page; default --slab) by KEYS, comma separated, "
	  "largest first: ptr, callsite, bytes, hit, pingpong, frag (default frag,hit,bytes); "
	  "after --page: page, callsite, bytes, hit, order, migtype, gfp (default bytes,hit)",
	  opt_sort, 0 },
	{ "line", 'l', required_argument, "=N", GROUP_STAT,
	  "with --stat: print N rows of the table named last (default: all; the lifetime and "
	  "process tables follow the --caller table's N, default 10)", opt_line, 0 },
	{ "stat-stream", LONG_ONLY(26), no_argument, "", GROUP_STAT,
	  "with --stat, live: send every event to user space and count there, as --alloc, "
	  "--page and -e page do (and -i DIR reads), rather than count the slab tables in BPF "
	  "maps (the default otherwise: much cheaper, nothing lost to full ring buffers)",
	  opt_stat_stream, 0 },

	{ "duration", 'd', required_argument, "=SECONDS", GROUP_CONTROL,
	  "stop after SECONDS (default: until Ctrl-C or SIGTERM)", opt_duration, 0 },
	{ "buffer-size", 'b', required_argument, "=SIZE", GROUP_CONTROL,
	  "ring buffer per CPU, a power of two >= 64K, K/M/G suffixes allowed (default 8M, "
	  "less on machines of more than 32 CPUs: the largest power of two that keeps all the "
	  "rings within 256M, e.g. 512K each on 384 CPUs); "
	  "records that find it full are lost and counted (streaming only: --allocinfo and "
	  "--hist have no ring buffer)", opt_buffer_size, FLAG(ring_size_set) },
	{ "raw-tp", LONG_ONLY(13), no_argument, "", GROUP_CONTROL,
	  "use raw_tp programs even where tp_btf works", opt_none, FLAG(force_raw_tp) },
	{ "nice", LONG_ONLY(14), required_argument, "=N", GROUP_CONTROL,
	  "scheduling priority of kmemsnoop, -20 to 19 (default -10): above the programs it "
	  "traces, so that CPUs busy allocating do not starve it into losing records",
	  opt_nice, FLAG(nice_given) },
	{ "verbose", 'v', no_argument, "", GROUP_CONTROL,
	  "show libbpf's messages, what was detected, the instructions the verifier "
	  "walked per program and, at the end, with sysctl kernel.bpf_stats_enabled=1, each "
	  "program's runs and nanoseconds per run (with -o: the records staged by a program "
	  "that interrupted another on its CPU)", opt_none, FLAG(verbose) },
	{ "help", KEY_HELP, no_argument, "", GROUP_CONTROL, "this help", opt_none, 0 },
	{ "version", KEY_VERSION, no_argument, "", GROUP_CONTROL, "print the version", opt_none, 0 },
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))

static const char usage_head[] =
	"Usage: kmemsnoop [OPTION...]\n"
	"       kmemsnoop --allocinfo[=total] [OPTION...] [INTERVAL [COUNT]]\n"
	"       kmemsnoop --hist[=req] [OPTION...] [INTERVAL [COUNT]]\n"
	"       kmemsnoop --stat [--caller] [--alloc] [OPTION...] [INTERVAL [COUNT]]\n"
	"       kmemsnoop -i DIR --stat [--caller] [--alloc] [OPTION...]\n"
	"Trace the kernel's memory allocations and frees (kmalloc, slab caches, pages,\n"
	"vmalloc, percpu) with BPF, printed as ftrace-style text or written as kmemtrace\n"
	"binary files; or, with --allocinfo, add them up per call site in the kernel and\n"
	"print them in the format of the kernel's /proc/allocinfo; or, with --hist, count\n"
	"them by size in the kernel and show histograms every second, live on a terminal.\n";

static const char usage_tail[] =
	"Text output (stdout) is one line per event, like the kernel's kmem trace events,\n"
	"with real (unhashed) pointers. A summary of events written and lost goes to stderr.\n"
	"\n"
	"Needs root, or CAP_BPF and CAP_PERFMON (CAP_SYSLOG too where the kernel hides\n"
	"/proc/kallsyms' addresses; CAP_SYS_ADMIN for the page frames of the stream),\n"
	"and a kernel with BTF\n"
	"(/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF=y); kernels 5.10 and later.\n"
	"What older kernels lack (kmemsnoop says so when it starts): before 6.1,\n"
	"kmem_cache_alloc lines have no name= and --hist-by cache counts slab\n"
	"allocations by object size, \"(cache size N)\" (the event does not say which\n"
	"cache); before 5.12, kmem_cache_free lines have no name= either, and an -o\n"
	"record traced in an interrupt during another may repeat its sequence number\n"
	"(no BPF atomic fetch-add); before 5.19, percpu_alloc_percpu lines have no\n"
	"call_site=, bytes_alloc= or gfp_flags= (the event's fields then), and the bytes\n"
	"are counted as size x possible CPUs.\n"
	"vmalloc areas are traced through fentry/fexit: where the kernel refuses it,\n"
	"through its vmap_area tracepoints (6.2+: the area's size with its guard page,\n"
	"the call site from a kernel stack), and not at all before 6.2; where a\n"
	"trampoline takes fewer than nine arguments (x86-64 before 6.6, arm64 at eight),\n"
	"through __vmalloc_node only, which direct callers of the vmalloc core bypass,\n"
	"as do vmalloc() and vzalloc() where the compiler inlined it into them (Debian's\n"
	"5.10). Slab objects allocated or freed\n"
	"in bulk (kmem_cache_alloc_bulk, kmem_cache_free_bulk, kfree_bulk), and those\n"
	"kfree_rcu() puts in a cache's RCU sheaf (6.18+), are traced through\n"
	"fentry/fexit only: not seen where the kernel refuses it or, as arm64\n"
	"before 6.0, has no trampolines. kmemsnoop says so at start.\n"
	"--hist counts successful allocations by size; frees are counted but not sized\n"
	"(kfree does not say how much it frees; kfree(NULL) is not counted). Failed\n"
	"allocations, allocations whose key did not fit in the key table (untracked) and\n"
	"events the kernel skipped machine-wide (missed: an allocation in an interrupt\n"
	"while the same program ran) are counted and shown.\n"
	"\n"
	"Exit status: 0 success, 1 runtime error, 2 bad usage.\n"
	"\n"
	"Examples:\n"
	"  kmemsnoop                     # every allocation on the machine\n"
	"  kmemsnoop -p 1234 -e kmalloc  # kmalloc/kfree made by process 1234\n"
	"  kmemsnoop -o /tmp/trace -d 10 # ten seconds of binary trace\n"
	"  kmemsnoop -i /tmp/trace       # print it\n"
	"  kmemsnoop --allocinfo 5       # outstanding memory per call site, every 5 s\n"
	"  kmemsnoop --allocinfo -d 10 | sort -g | tail | numfmt --to=iec\n"
	"  kmemsnoop --allocinfo --stacks --folded -d 10 > out.folded\n"
	"  kmemsnoop --allocinfo --stacks --pprof heap.pb.gz -d 10  # go tool pprof heap.pb.gz\n"
	"  kmemsnoop --hist              # live histograms on a terminal\n"
	"  kmemsnoop --hist-by cache 5 3 # per-cache histograms, every 5 s, 3 times\n"
	"  kmemsnoop --hist --allocinfo -d 60 > out  # both, from one trace\n"
	"  kmemsnoop --listen 9100       # Prometheus endpoint at 127.0.0.1:9100/metrics\n"
	"  kmemsnoop --stat --caller -l 20 -p 1234   # perf kmem stat, live\n"
	"  kmemsnoop -i /tmp/trace --stat --alloc -s ptr\n";

/* --- --help ------------------------------------------------------------------- */

/* "  -p, --pid=PID" or "      --min-size=BYTES". */
static int format_names(const struct opt_spec *o, char *buf, size_t size)
{
	bool has_short = o->key > 0 && o->key < 0x100;

	return snprintf(buf, size, "  %c%c%c --%s%s", has_short ? '-' : ' ',
			has_short ? o->key : ' ', has_short ? ',' : ' ', o->name, o->value);
}

/* text, word-wrapped from HELP_COLUMN to HELP_WIDTH; the first line
 * continues what is already printed (col characters). */
static void print_wrapped(FILE *out, const char *text, int col)
{
	while (*text) {
		int room = HELP_WIDTH - HELP_COLUMN - 1, len = (int)strlen(text);

		if (col > HELP_COLUMN - 1) {
			fputc('\n', out);
			col = 0;
		}
		fprintf(out, "%*s", HELP_COLUMN - col, "");
		if (len > room) {
			len = room;
			while (len > 0 && text[len] != ' ')
				len--;
			if (!len)
				len = room;
		}
		while (len > 1 && text[len - 1] == ' ')
			len--;
		fprintf(out, "%.*s\n", len, text);
		text += len;
		while (*text == ' ')
			text++;
		col = 0;
	}
}

void env_print_help(FILE *out)
{
	char names[64];

	fputs(usage_head, out);
	for (int g = GROUP_FILTER; g <= GROUP_CONTROL; g++) {
		fprintf(out, "\n%s\n", group_titles[g]);
		for (size_t i = 0; i < NOPTIONS; i++) {
			int col;

			if (options[i].group != (enum opt_group)g)
				continue;
			col = format_names(&options[i], names, sizeof(names));

			fputs(names, out);
			print_wrapped(out, options[i].help, col);
		}
	}
	fputc('\n', out);
	fputs(usage_tail, out);
}

size_t env_option_names(const char **names, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < NOPTIONS; i++) {
		if (!options[i].parse)
			continue; /* a second help entry of the option before */
		if (n < max)
			names[n] = options[i].name;
		n++;
	}
	return n;
}

const char *env_duplicate_key(void)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		for (size_t j = i + 1; j < NOPTIONS; j++)
			if (options[i].parse && options[j].parse && options[i].key == options[j].key)
				return options[j].name;
	return NULL;
}

/* --- parsing ---------------------------------------------------------------- */

/* getopt_long's view of the table: its options and short option string. */
static void getopt_tables(struct option *longs, char *shorts)
{
	size_t n = 0;
	char *s = shorts;

	*s++ = ':'; /* a missing value returns ':' */
	for (size_t i = 0; i < NOPTIONS; i++) {
		const struct opt_spec *o = &options[i];

		if (!o->parse)
			continue;
		longs[n++] = (struct option){ o->name, o->has_arg, NULL, o->key };
		if (o->key < 0x100) {
			*s++ = (char)o->key;
			if (o->has_arg == required_argument)
				*s++ = ':';
		}
	}
	longs[n] = (struct option){ 0 };
	*s = '\0';
}

static const struct opt_spec *find_option(int key)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		if (options[i].parse && options[i].key == key)
			return &options[i];
	return NULL;
}

/*
 * getopt_long's '?' (unknown, or a value given to an option that takes
 * none) and ':' (a value missing).  optopt names the option when it knows
 * it; in a group of short options ("-vx") the word alone would not.
 */
static bool bad_option(struct parse *p, int key, const char *word)
{
	const struct opt_spec *o = optopt ? find_option(optopt) : NULL;
	char name[64];

	if (o && o->key < 0x100)
		snprintf(name, sizeof(name), "-%c", o->key);
	else if (o)
		snprintf(name, sizeof(name), "--%s", o->name);
	if (key == ':')
		return bad(p, "option '%s' needs a value", o ? name : word);
	if (o)
		return bad(p, "option '%s' takes no value", name);
	if (optopt > 0 && optopt < 0x100)
		return bad(p, "unknown option '-%c'", optopt);
	return bad(p, "unknown option '%s'", word);
}

/* Options that only mean something with --allocinfo. */
static bool check_allocinfo_options(struct parse *p)
{
	const struct env *env = p->env;
	const char *opt = env->ai_stacks ? "--stacks" : env->ai_folded ? "--folded" :
			  env->vmlinux ? "--vmlinux" : env->pprof ? "--pprof" :
			  p->max_ptrs_set && !env_stat_in_bpf(env) ? "--max-ptrs" :
			  p->max_stacks_set ? "--max-stacks" : NULL;

	if (!env->allocinfo)
		return !opt || bad(p, "%s needs --allocinfo%s", opt,
				   p->max_ptrs_set ? " (or --stat counting in BPF maps)" : "");
	if (env->output_dir || env->input_dir)
		return bad(p, "--allocinfo cannot be used with -o or -i");
	if (env->ring_size_set)
		return bad(p, "-b sizes the stream's ring buffers: --allocinfo has none");
	if (env->ai_folded && !env->ai_stacks)
		return bad(p, "--folded needs --stacks");
	if (env->ai_total && p->max_ptrs_set)
		return bad(p, "--max-ptrs: --allocinfo=total tracks no pointers");
	return true;
}

/* --listen is a mode of its own: it counts what --hist and --allocinfo do. */
static bool check_listen_options(struct parse *p)
{
	const struct env *env = p->env;

	if (!env->listen)
		return true;
	if (env->hist || env->allocinfo)
		return bad(p, "--listen counts what --hist and --allocinfo do: use it alone");
	if (env->output_dir || env->input_dir)
		return bad(p, "--listen cannot be used with -o or -i");
	if (env->ring_size_set)
		return bad(p, "--listen has no ring buffer: -b does not apply");
	return true;
}

/* Options that only mean something with --hist. */
static bool check_hist_options(struct parse *p)
{
	const struct env *env = p->env;

	if (!env->hist && env->listen)
		return true;
	if (!env->hist)
		return !(env->top_set || env->hist_keys) ||
		       bad(p, "--top and --hist-keys go with --hist, --hist-by or --listen");
	if (env->output_dir || env->input_dir)
		return bad(p, "--hist cannot be used with -o or -i");
	if (env->ring_size_set)
		return bad(p, "--hist has no ring buffer: -b does not apply");
	return true;
}

/* Options that only mean something with --stat. */
static bool check_stat_options(struct parse *p)
{
	const struct env *env = p->env;

	if (!env->stat)
		return !p->stat_option ||
		       bad(p, "--caller, --alloc, --slab, --page, -s and -l go with --stat");
	if (env->output_dir)
		return bad(p, "--stat cannot be used with -o: record with -o, then -i DIR --stat");
	if (env->hist || env->allocinfo)
		return bad(p, "--stat cannot be used with --hist or --allocinfo");
	if (env->input_dir && env->interval_given)
		return bad(p, "-i --stat reads a recording: no INTERVAL");
	if (env->input_dir && env->stat_stream)
		return bad(p, "--stat-stream is for tracing: -i reads every event anyway");
	if (env->ring_size_set && env_stat_in_bpf(env))
		return bad(p, "-b sizes the stream's ring buffers: this --stat counts in BPF maps "
			      "(--stat-stream streams)");
	return true;
}

bool env_stat_in_bpf(const struct env *env)
{
	return env->stat && !env->input_dir && !env->stat_stream && !env->stat_opts.alloc &&
	       !env->stat_opts.page && !(env->events & EV_PAGE);
}

static bool check_combination(struct parse *p)
{
	const struct env *env = p->env;

	if (env->min_size > env->max_size)
		return bad(p, "--min-size is larger than --max-size");
	if (env->input_dir && env->output_dir)
		return bad(p, "-i and -o cannot be used together");
	if (env->json && env->output_dir)
		return bad(p, "--json is text output: not with -o");
	if (env->json && (env->live || env->listen))
		return bad(p, "--json is for printed output: not with --live or --listen");
	if (env->input_dir && env->cgroup)
		return bad(p, "--cgroup filters tracing, not -i");
	if (env->input_dir && env->nice_given)
		return bad(p, "--nice is for tracing, not for -i");
	return check_listen_options(p) && check_allocinfo_options(p) && check_hist_options(p) &&
	       check_stat_options(p);
}

/* [INTERVAL [COUNT]] after the options of an aggregating mode. */
static bool parse_positionals(struct parse *p, int argc, char **argv)
{
	struct env *env = p->env;
	uint64_t count;

	if (argc == 0)
		return true;
	if (!env->hist && !env->allocinfo && !env->stat)
		return bad(p, "unexpected argument '%s'", argv[0]);
	if (!strcmp(argv[0], "total"))
		return bad(p, "unexpected argument 'total': write --allocinfo=total");
	if (!parse_seconds(argv[0], &env->interval))
		return bad(p, "invalid interval '%s': seconds, more than 0", argv[0]);
	env->interval_given = true;
	if (env->hist && env->interval < MIN_HIST_INTERVAL)
		return bad(p, "invalid interval '%s': seconds, at least 0.1 with --hist", argv[0]);
	if (argc == 1)
		return true;
	if (!parse_u64(argv[1], &count) || !count || count > (uint64_t)LONG_MAX)
		return bad(p, "invalid count '%s': a number of outputs, at least 1", argv[1]);
	env->count = count;
	return argc <= 2 || bad(p, "unexpected argument '%s'", argv[2]);
}

static void set_defaults(struct env *env)
{
	memset(env, 0, sizeof(*env));
	env->cpu = -1;
	env->events = EV_ALL;
	env->max_size = ~0ULL;
	env->nice = DEFAULT_NICE;
	env->top = DEFAULT_TOP;
	env->stat_opts.caller_lines = env->stat_opts.alloc_lines = -1;
}

/* Defaults that depend on what was given. */
static void complete(struct parse *p)
{
	struct env *env = p->env;

	if (env->hist && !env->interval)
		env->interval = DEFAULT_HIST_INTERVAL;
	if (!env->stat_opts.slab && !env->stat_opts.page)
		env->stat_opts.slab = true;
	/* What --stat does not print is not traced. */
	if (env->stat && !p->events_set)
		env->events = (env->stat_opts.slab ? EV_KMALLOC | EV_CACHE : 0) |
			      (env->stat_opts.page ? EV_PAGE : 0);
	if (!env->ai_max_ptrs)
		env->ai_max_ptrs = env->stat ? DEFAULT_STAT_MAX_PTRS : DEFAULT_AI_MAX_PTRS;
	if (!env->ai_max_stacks)
		env->ai_max_stacks = env->ai_stacks ? DEFAULT_AI_MAX_STACKS : DEFAULT_AI_PAGE_STACKS;
}

enum env_status env_parse(int argc, char **argv, struct env *env, char *err, size_t err_size)
{
	struct parse p = { .env = env, .err = err, .err_size = err_size };
	struct option longs[NOPTIONS + 1];
	char shorts[2 * NOPTIONS + 2];
	int key;

	set_defaults(env);
	err[0] = '\0';
	getopt_tables(longs, shorts);
	optind = 0; /* glibc: start afresh, whatever an earlier parse left */
	opterr = 0;
	while ((key = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		const struct opt_spec *o = find_option(key);

		if (key == '?' || key == ':')
			return bad_option(&p, key, argv[optind - 1]), ENV_USAGE;
		if (key == KEY_HELP)
			return ENV_HELP;
		if (key == KEY_VERSION)
			return ENV_VERSION;
		if (!o)
			return bad(&p, "option '%s' is not handled", argv[optind - 1]), ENV_USAGE;
		if (o->flag)
			*(bool *)((char *)env + o->flag - 1) = true;
		if (!o->parse(&p, optarg))
			return ENV_USAGE;
	}
	if (!parse_positionals(&p, argc - optind, argv + optind))
		return ENV_USAGE;
	complete(&p);
	return check_combination(&p) ? ENV_RUN : ENV_USAGE;
}
