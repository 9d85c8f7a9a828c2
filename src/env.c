// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Command-line options.  Every option is one row of the table below: its
 * names, its value, its help text and the function that stores it in
 * struct env.  getopt_long's option array, the short option string and
 * the options part of --help are all made from that table.  --help's
 * printer and texts are in env_help.c; the rules between options, which
 * env_parse() applies last, in env_check.c.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "env_impl.h"
#include "bpf/kmemsnoop.h"
#include "hist/histfmt.h"
#include "kernel/budget.h"
#include "kernel/sources.h"

#define DEFAULT_NICE -10
#define DEFAULT_AI_MAX_PTRS (1ULL << 20)
#define DEFAULT_STAT_MAX_PTRS (1ULL << 18) /* 40-byte values in a hash: about 100 bytes each */
/* A number's macro as text, for --help's strings. */
#define NUMBER_TEXT_(n) #n
#define NUMBER_TEXT(n) NUMBER_TEXT_(n)

#define DEFAULT_AI_MAX_STACKS (16ULL << 10) /* --stacks */
#define DEFAULT_AI_PAGE_STACKS (4ULL << 10)  /* the stacks of page allocations */
#define AI_MAX_PTRS_LIMIT (1ULL << 28)
#define AI_MAX_STACKS_LIMIT (1ULL << 20)
#define DEFAULT_TOP 10
#define DEFAULT_HIST_INTERVAL 1.0
#define DEFAULT_FLIGHT_KEEP 8
#define MIN_HIST_INTERVAL 0.1
#define MAX_TOP 10000
#define MAX_HIST_KEYS (1 << 20)

/* --- values --------------------------------------------------------------- */

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

const char *const prog_type_names[PROG_TYPES] = {
	[PROG_AUTO] = "auto",
	[PROG_TRACEPOINT] = "tracepoint",
	[PROG_TP_BTF] = "tp_btf",
	[PROG_RAW_TP] = "raw_tp",
};

static bool opt_prog_type(struct parse *p, const char *arg)
{
	for (int t = 0; t < PROG_TYPES; t++) {
		if (!strcmp(arg, prog_type_names[t])) {
			p->env->prog_type = t;
			return true;
		}
	}
	return bad(p, "invalid --prog-type '%s': auto, tracepoint, tp_btf or raw_tp", arg);
}

static bool opt_raw_tp(struct parse *p, const char *arg)
{
	(void)arg;
	p->env->prog_type = PROG_RAW_TP;
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

static bool opt_stack_depth(struct parse *p, const char *arg)
{
	return parse_int_range(arg, 1, KMT_USTACK_MAX_DEPTH, &p->env->stack_depth) ||
	       bad(p, "invalid --stack-depth '%s': 1 to %d frames", arg, KMT_USTACK_MAX_DEPTH);
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
	for (int i = KMT_BY_NONE + 1; i < KMT_BY_COUNT; i++) {
		if (!strcmp(arg, hist_keys[i].name)) {
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

static bool opt_flight(struct parse *p, const char *arg)
{
	p->env->flight = true;
	return !arg || parse_seconds(arg, &p->env->flight_window) ||
	       bad(p, "invalid --flight '%s': seconds, more than 0", arg);
}

/* FIELD<SIZE, FIELD>SIZE or FIELD+SIZE: a /proc/meminfo field's name
 * (letters, digits, '_', '(' and ')': "Active(anon)"). */
static bool opt_flight_when(struct parse *p, const char *arg)
{
	size_t n = strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_()");

	p->flight_option = true;
	if (!n || n >= sizeof(p->env->flight_when.field) || !strchr("<>+", arg[n]) || !arg[n] ||
	    !parse_size(arg + n + 1, &p->env->flight_when.bytes))
		return bad(p, "invalid --flight-when '%s': a /proc/meminfo field, '<', '>' or '+', "
			      "and a size (MemAvailable<512M, Slab+1G)", arg);
	memcpy(p->env->flight_when.field, arg, n);
	p->env->flight_when.field[n] = '\0';
	p->env->flight_when.op = arg[n];
	return true;
}

/* N[,SIZE]: dumps kept, and optionally the disk space they may take. */
static bool opt_flight_keep(struct parse *p, const char *arg)
{
	char count[16];
	const char *comma = strchr(arg, ',');
	size_t len = comma ? (size_t)(comma - arg) : strlen(arg);
	int n;

	p->flight_option = true;
	p->env->flight_keep_bytes = 0;
	if (len >= sizeof(count))
		len = sizeof(count) - 1;
	memcpy(count, arg, len);
	count[len] = '\0';
	if (!parse_int_range(count, 1, 100000, &n) ||
	    (comma && (!parse_size(comma + 1, &p->env->flight_keep_bytes) ||
		       !p->env->flight_keep_bytes)))
		return bad(p, "invalid --flight-keep '%s': a number of dumps, 1 to 100000, and "
			      "optionally a size they may take (8,2G)", arg);
	p->env->flight_keep = (unsigned int)n;
	return true;
}

static bool opt_flight_after(struct parse *p, const char *arg)
{
	p->flight_option = true;
	p->env->flight_after = 0;
	return !strcmp(arg, "0") ||
	       (parse_seconds(arg, &p->env->flight_after) && p->env->flight_after <= 60) ||
	       bad(p, "invalid --flight-after '%s': seconds, 0 to 60", arg);
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
/* Long-only options get a getopt value above every character. */
#define LONG_ONLY(n) (0x100 + (n))

/* A bool of struct env that an option sets to true; 0: none. */
#define FLAG(field) (offsetof(struct env, field) + 1)

enum { KEY_HELP = 'h', KEY_VERSION = 'V' };

const struct opt_spec env_options[] = {
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

	{ "flight", LONG_ONLY(28), optional_argument, "[=SECONDS]", GROUP_FLIGHT,
	  "flight recorder, with -o DIR: every event is kept in a circular store in the kernel "
	  "(-b bytes per CPU) that nothing reads until a trigger fires: the OOM killer choosing "
	  "a victim, an allocation that returned nothing (but one asked for with __GFP_NOWARN), "
	  "or SIGUSR1.  Each trigger writes the store's events since the last dump, the last "
	  "SECONDS of them at most (default: all it holds), as a recording DIR/TIME-TRIGGER "
	  "that -i reads, its header naming the trigger; then recording goes on.  A trigger "
	  "while a dump is pending is counted and goes into that dump.  kmemsnoop makes itself "
	  "the OOM killer's last choice (oom_score_adj -1000).  With --listen, /metrics serves "
	  "the triggers and dumps (not --listen's allocation counts)", opt_flight, 0 },
	{ "flight-when", LONG_ONLY(30), required_argument, "=FIELD<SIZE|FIELD>SIZE|FIELD+SIZE",
	  GROUP_FLIGHT,
	  "with --flight: a trigger more, on a /proc/meminfo field (looked at ten times a second): "
	  "when it falls below SIZE (MemAvailable<512M), rises above it (SUnreclaim>2G), or "
	  "rises by SIZE since the start or its last dump (Slab+1G); fires again once the "
	  "field is back on the other side", opt_flight_when, 0 },
	{ "flight-after", LONG_ONLY(31), required_argument, "=SECONDS", GROUP_FLIGHT,
	  "with --flight: write a dump SECONDS after its trigger (0 to 60; default 0, at "
	  "once), so that it holds what followed too: an OOM victim's frees, say.  The store "
	  "must hold that much more", opt_flight_after, 0 },
	{ "flight-keep", LONG_ONLY(29), required_argument, "=N[,SIZE]", GROUP_FLIGHT,
	  "with --flight: keep the N newest dumps in DIR (default 8), and with SIZE (K/M/G "
	  "suffixes) only as many of those as take SIZE on disk at most, the newest always; "
	  "older ones are removed", opt_flight_keep, 0 },

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
	  "with --allocinfo: key by kernel stack instead of call site; every entry is followed "
	  "by its frames, innermost first.  Without --allocinfo (text, --json, -o, --flight): "
	  "every event carries its kernel stack, printed after its line as ftrace's stacktrace option "
	  "prints it (\" => function+offset/size\"; " NUMBER_TEXT(KMT_KSTACK_MAX_DEPTH) " frames "
	  "at most, the tracing machinery's among them, left out), in --json as \"stack\".  "
	  "With --stat (live, or -i of a recording made with --stacks): a table of the slab "
	  "allocations per stack (bytes, hits, still alive at the end), user frames too with "
	  "--user-stacks",
	  opt_none, FLAG(ai_stacks) },
	{ "user-stacks", LONG_ONLY(32), no_argument, "", GROUP_ALLOCINFO,
	  "with -p, -t, -c or --cgroup, streaming (text, --json, -o): every event also carries "
	  "its thread's user-space call chain (" NUMBER_TEXT(KMT_USTACK_MAX_DEPTH) " frames at "
	  "most, followed through frame pointers: code built without them loses frames), "
	  "printed under a \" <user stack trace>\" line as \" => function+offset [object]\" "
	  "(and \"(file:line)\" where the object has debug information), or as \" => "
	  "object[+offset]\" (the offset in the file) where its object cannot be read.  "
	  "-o keeps the traced processes' maps and build ids in DIR/maps, so that -i names "
	  "the frames wherever the same objects are.  In --json as \"user_stack\"",
	  opt_none, FLAG(user_stacks) },
	{ "stack-depth", LONG_ONLY(33), required_argument, "=N", GROUP_ALLOCINFO,
	  "with --stacks (streaming) or --user-stacks: show N frames of each stack at most (1 "
	  "to " NUMBER_TEXT(KMT_USTACK_MAX_DEPTH) ", a kernel stack " NUMBER_TEXT(
		  KMT_KSTACK_MAX_DEPTH) " at most; default: all), the tracing machinery's left out.  "
	  "-o keeps N in the header, which -i cuts to; with -i, N cuts a recording's stacks",
	  opt_stack_depth, 0 },
	{ "folded", LONG_ONLY(4), no_argument, "", GROUP_ALLOCINFO,
	  "with --stacks (--allocinfo, or --stat: bytes allocated, user frames outermost): "
	  "print \"outer;...;inner bytes\" lines, as flame graph tools read them, instead",
	  opt_none, FLAG(ai_folded) },
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
	  "ring buffer per CPU, a power of two >= 64K, K/M/G suffixes allowed (default 16M, "
	  "less on machines of more than 16 CPUs: the largest power of two that keeps all the "
	  "rings within 256M, e.g. 512K each on 384 CPUs); "
	  "records that find it full are lost and counted (streaming only: --allocinfo and "
	  "--hist have no ring buffer); with --flight, the size of each CPU's store instead",
	  opt_buffer_size, FLAG(ring_size_set) },
	{ "prog-type", LONG_ONLY(27), required_argument, "=TYPE", GROUP_CONTROL,
	  "what runs the programs on the tracepoints: auto (the default: classic tracepoint "
	  "programs where the kernel runs the others preemptibly, 7.0+ with preemptible RCU, "
	  "where a preempted run makes the kernel skip other tasks' events; else tp_btf where "
	  "it can read the arguments, else raw_tp), tracepoint, tp_btf or raw_tp",
	  opt_prog_type, 0 },
	{ "raw-tp", LONG_ONLY(13), no_argument, "", GROUP_CONTROL,
	  "the same as --prog-type=raw_tp", opt_raw_tp, 0 },
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

#define NOPTIONS (sizeof(env_options) / sizeof(env_options[0]))

const size_t env_noptions = NOPTIONS;

size_t env_option_names(const char **names, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < NOPTIONS; i++) {
		if (!env_options[i].parse)
			continue; /* a second help entry of the option before */
		if (n < max)
			names[n] = env_options[i].name;
		n++;
	}
	return n;
}

const char *env_duplicate_key(void)
{
	for (size_t i = 0; i < NOPTIONS; i++)
		for (size_t j = i + 1; j < NOPTIONS; j++)
			if (env_options[i].parse && env_options[j].parse &&
			    env_options[i].key == env_options[j].key)
				return env_options[j].name;
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
		const struct opt_spec *o = &env_options[i];

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
		if (env_options[i].parse && env_options[i].key == key)
			return &env_options[i];
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
	env->flight_keep = DEFAULT_FLIGHT_KEEP;
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
	/* --stat's table per stack: the stacks its events carry. */
	env->stat_opts.stacks = env->stat && (env->ai_stacks || env->user_stacks);
	env->stat_opts.folded = env->stat && env->ai_folded;
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
	return env_check_combination(&p) ? ENV_RUN : ENV_USAGE;
}
