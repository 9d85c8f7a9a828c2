// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Command-line parsing for kmemsnoop. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "kmemsnoop.h"

#define KMEMSNOOP_VERSION "0.1"
#define DEFAULT_RING_SIZE (8ULL << 20)
#define DEFAULT_NICE -10
#define DEFAULT_AI_MAX_PTRS (1ULL << 20)
#define DEFAULT_AI_MAX_STACKS (16ULL << 10) /* --stacks */
#define DEFAULT_AI_PAGE_STACKS (4ULL << 10)  /* the stacks of page allocations */
#define AI_MAX_PTRS_LIMIT (1ULL << 28)
#define AI_MAX_STACKS_LIMIT (1ULL << 20)
#define DEFAULT_TOP 10
#define DEFAULT_HIST_INTERVAL 1.0
#define MIN_HIST_INTERVAL 0.1
#define MAX_TOP 10000
#define MAX_HIST_KEYS (1 << 20)

static const char usage_text[] =
"Usage: kmemsnoop [OPTION...]\n"
"       kmemsnoop --allocinfo[=total] [OPTION...] [INTERVAL [COUNT]]\n"
"       kmemsnoop --hist[=req] [OPTION...] [INTERVAL [COUNT]]\n"
"Trace the kernel's memory allocations and frees (kmalloc, slab caches, pages)\n"
"with BPF, printed as ftrace-style text or written as kmemtrace binary files;\n"
"or, with --allocinfo, add them up per call site in the kernel and print them\n"
"in the format of the kernel's /proc/allocinfo; or, with --hist, count them by\n"
"size in the kernel and show histograms every second, live on a terminal.\n"
"\n"
"Filters (applied in the kernel, before anything is recorded):\n"
"  -p, --pid=PID          only process PID (all its threads), and the processes\n"
"                         it forks after the trace starts; ends when they are gone\n"
"  -t, --tid=TID          only thread TID\n"
"  -c, --comm=COMM        only tasks whose name (comm) is COMM\n"
"  -C, --cpu=CPU          only events on CPU\n"
"  -e, --events=LIST      event classes, comma separated: kmalloc (kmalloc, kfree),\n"
"                         cache (kmem_cache_alloc, kmem_cache_free),\n"
"                         page (mm_page_alloc, mm_page_free); default: all\n"
"      --min-size=BYTES   only allocations of at least BYTES requested (pages:\n"
"                         PAGE_SIZE << order), and the frees of those\n"
"      --max-size=BYTES   only allocations of at most BYTES requested, and their frees\n"
"\n"
"Output:\n"
"  -o, --output=DIR       write kmemtrace binary files instead of text: DIR/cpuN\n"
"                         (each CPU's records in order), DIR/abi_version,\n"
"                         DIR/total_overruns (bytes lost), DIR/total_overrun_events\n"
"  -i, --input=DIR        read such a directory and print it as text, in time order\n"
"\n"
"Allocation profile (/proc/allocinfo for any kernel):\n"
"      --allocinfo        count in BPF maps, per call site, the bytes and the\n"
"                         number of the allocations made during the session that\n"
"                         are still outstanding (frees subtract; frees of memory\n"
"                         allocated before the session are ignored, and counted);\n"
"                         printed at the end, or every INTERVAL seconds (COUNT\n"
"                         times), as /proc/allocinfo: \"%12lli %8llu <tag> \" lines\n"
"                         under its two header lines. The tag is\n"
"                         \"file:line [module] func:function\" with kernel debug\n"
"                         information, else \"function+0xoff [module] func:function\".\n"
"                         Pages are tagged by the first caller outside the page\n"
"                         allocator, found in their kernel stack\n"
"      --allocinfo=total  all the bytes and calls allocated during the session,\n"
"                         freed or not (only allocations are traced)\n"
"      --stacks           key by kernel stack instead of call site; every entry\n"
"                         is followed by its frames, innermost first\n"
"      --folded           with --stacks: print \"outer;...;inner bytes\" lines,\n"
"                         as flame graph tools read them, instead\n"
"      --vmlinux=PATH     the running kernel's vmlinux with DWARF, for file:line\n"
"                         tags (default: searched in /usr/lib/debug/boot,\n"
"                         /usr/lib/debug/lib/modules/RELEASE, /boot, /lib/modules)\n"
"      --max-ptrs=N       allocations tracked at once (default 1M; 64 bytes of\n"
"                         kernel memory each, about 90 before Linux 5.12); what\n"
"                         does not fit is counted and reported, not tracked\n"
"      --max-stacks=N     distinct kernel stacks (default 16K with --stacks, else\n"
"                         4K for the page allocations); allocations whose stack\n"
"                         finds no room are counted and reported\n"
"\n"
"Histograms (counted in the kernel, nothing sent per event):\n"
"      --hist[=alloc|req] log2 histograms of allocation sizes, bytes allocated\n"
"                         (default) or bytes requested, every INTERVAL seconds\n"
"                         (default 1, at least 0.1), COUNT times (default: until\n"
"                         Ctrl-C).  On a terminal: a live full-screen view (q or\n"
"                         Ctrl-C quits); otherwise one text block per interval\n"
"      --hist-by=KEY      one histogram per KEY: cache (the slab cache; kmalloc by\n"
"                         size class, pages by order), callsite (the allocating\n"
"                         function), comm (task name), event (kmalloc,\n"
"                         kmem_cache_alloc, mm_page_alloc) or order (page order);\n"
"                         implies --hist.  The live view's two tables: KEY\n"
"                         (default cache) and call sites (or caches)\n"
"      --top=N            show the N busiest keys (default 10; live view: as\n"
"                         many as fit)\n"
"      --live             the live view even when stdout is not a terminal\n"
"                         (implies --hist)\n"
"      --hist-keys=N      room for N keys per table (default: up to 16384, less\n"
"                         with many CPUs, about 32 MiB in all); allocations whose\n"
"                         key finds no room are counted as untracked\n"
"\n"
"Control:\n"
"  -d, --duration=SECONDS stop after SECONDS (default: until Ctrl-C or SIGTERM)\n"
"  -b, --buffer-size=SIZE ring buffer per CPU, a power of two >= 64K, K/M/G suffixes\n"
"                         allowed (default 8M); records that find it full are lost\n"
"                         and counted (streaming only: --allocinfo and --hist\n"
"                         have no ring buffer)\n"
"      --raw-tp           use raw_tp programs even where tp_btf works\n"
"      --nice=N           scheduling priority of kmemsnoop, -20 to 19 (default -10):\n"
"                         above the programs it traces, so that CPUs busy\n"
"                         allocating do not starve it into losing records\n"
"  -v, --verbose          show libbpf's messages and what was detected\n"
"  -h, --help             this help\n"
"  -V, --version          print the version\n"
"\n"
"Text output (stdout) is one line per event, like the kernel's kmem trace events,\n"
"with real (unhashed) pointers. A summary of events written and lost goes to stderr.\n"
"\n"
"Needs root, or CAP_BPF and CAP_PERFMON, and a kernel with BTF\n"
"(/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF=y); kernels 5.10 and later.\n"
"What older kernels lack (kmemsnoop says so when it starts): before 6.1,\n"
"kmem_cache_alloc lines have no name= and --hist-by cache counts slab\n"
"allocations by object size, \"(cache size N)\" (the event does not say which\n"
"cache); before 5.12, kmem_cache_free lines have no name= either, and an -o\n"
"record traced in an interrupt during another may repeat its sequence number\n"
"(no BPF atomic fetch-add).\n"
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
"  kmemsnoop --hist              # live histograms on a terminal\n"
"  kmemsnoop --hist-by cache 5 3 # per-cache histograms, every 5 s, 3 times\n";

enum {
	OPT_MIN_SIZE = 0x100,
	OPT_MAX_SIZE,
	OPT_RAW_TP,
	OPT_NICE,
	OPT_ALLOCINFO,
	OPT_STACKS,
	OPT_FOLDED,
	OPT_VMLINUX,
	OPT_MAX_PTRS,
	OPT_MAX_STACKS,
	OPT_HIST,
	OPT_HIST_BY,
	OPT_TOP,
	OPT_LIVE,
	OPT_HIST_KEYS,
};

static const struct option long_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 't' },
	{ "comm", required_argument, NULL, 'c' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "events", required_argument, NULL, 'e' },
	{ "min-size", required_argument, NULL, OPT_MIN_SIZE },
	{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
	{ "output", required_argument, NULL, 'o' },
	{ "input", required_argument, NULL, 'i' },
	{ "duration", required_argument, NULL, 'd' },
	{ "buffer-size", required_argument, NULL, 'b' },
	{ "raw-tp", no_argument, NULL, OPT_RAW_TP },
	{ "nice", required_argument, NULL, OPT_NICE },
	{ "allocinfo", optional_argument, NULL, OPT_ALLOCINFO },
	{ "stacks", no_argument, NULL, OPT_STACKS },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
	{ "max-ptrs", required_argument, NULL, OPT_MAX_PTRS },
	{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
	{ "hist", optional_argument, NULL, OPT_HIST },
	{ "hist-by", required_argument, NULL, OPT_HIST_BY },
	{ "top", required_argument, NULL, OPT_TOP },
	{ "live", no_argument, NULL, OPT_LIVE },
	{ "hist-keys", required_argument, NULL, OPT_HIST_KEYS },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{},
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "kmemsnoop: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see kmemsnoop --help)\n");
	return EXIT_USAGE;
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

static bool parse_events(const char *list, unsigned int *mask)
{
	char buf[128], *save = NULL, *tok;

	if (strlen(list) >= sizeof(buf))
		return false;
	strcpy(buf, list);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "kmalloc"))
			*mask |= EV_KMALLOC;
		else if (!strcmp(tok, "cache"))
			*mask |= EV_CACHE;
		else if (!strcmp(tok, "page") || !strcmp(tok, "pages"))
			*mask |= EV_PAGE;
		else if (!strcmp(tok, "all"))
			*mask |= EV_ALL;
		else
			return false;
	}
	return *mask != 0;
}

static bool parse_nice(const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < -20 || v > 19)
		return false;
	*out = (int)v;
	return true;
}

static bool parse_duration(const char *s, double *out)
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


static bool parse_hist_by(const char *s, enum kmt_hist_by *out)
{
	static const char *const names[KMT_BY_COUNT] = {
		[KMT_BY_CACHE] = "cache", [KMT_BY_CALLSITE] = "callsite", [KMT_BY_COMM] = "comm",
		[KMT_BY_EVENT] = "event", [KMT_BY_ORDER] = "order",
	};

	for (int i = KMT_BY_NONE + 1; i < KMT_BY_COUNT; i++) {
		if (!strcmp(s, names[i])) {
			*out = i;
			return true;
		}
	}
	return false;
}

static int parse_hist_option(int opt, const char *arg, struct env *env)
{
	int n;

	switch (opt) {
	case OPT_HIST:
		if (!arg || !strcmp(arg, "alloc"))
			env->hist_value = KMT_HIST_ALLOC;
		else if (!strcmp(arg, "req"))
			env->hist_value = KMT_HIST_REQ;
		else
			return usage_error("invalid --hist '%s': use --hist, --hist=alloc or --hist=req",
					   arg);
		env->hist = true;
		break;
	case OPT_HIST_BY:
		if (!parse_hist_by(arg, &env->hist_by))
			return usage_error("invalid --hist-by '%s': use cache, callsite, comm, event or "
					   "order", arg);
		env->hist = true;
		break;
	case OPT_TOP:
		if (!parse_int_range(arg, 1, MAX_TOP, &env->top))
			return usage_error("invalid --top '%s': a number from 1 to 10000", arg);
		env->top_set = true;
		break;
	case OPT_LIVE:
		env->live = true;
		env->hist = true;
		break;
	case OPT_HIST_KEYS:
		if (!parse_int_range(arg, 1, MAX_HIST_KEYS, &n))
			return usage_error("invalid --hist-keys '%s': a number from 1 to 1048576", arg);
		env->hist_keys = n;
		break;
	}
	return -1;
}

static int parse_one(int opt, const char *arg, struct env *env)
{
	switch (opt) {
	case 'p':
		if (!parse_int_range(arg, 1, INT_MAX, &env->pid))
			return usage_error("invalid PID '%s'", arg);
		break;
	case 't':
		if (!parse_int_range(arg, 1, INT_MAX, &env->tid))
			return usage_error("invalid TID '%s'", arg);
		break;
	case 'c':
		if (!*arg || strlen(arg) >= sizeof(env->comm))
			return usage_error("invalid COMM '%s': 1 to 15 characters", arg);
		strcpy(env->comm, arg);
		break;
	case 'C':
		if (!parse_int_range(arg, 0, 1023, &env->cpu))
			return usage_error("invalid CPU '%s'", arg);
		break;
	case 'e':
		if (!parse_events(arg, &env->events))
			return usage_error("invalid event list '%s': use kmalloc, cache, page", arg);
		break;
	case OPT_MIN_SIZE:
		if (!parse_size(arg, &env->min_size))
			return usage_error("invalid --min-size '%s'", arg);
		env->size_filter = true;
		break;
	case OPT_MAX_SIZE:
		if (!parse_size(arg, &env->max_size))
			return usage_error("invalid --max-size '%s'", arg);
		env->size_filter = true;
		break;
	case 'o':
		env->output_dir = arg;
		break;
	case 'i':
		env->input_dir = arg;
		break;
	case 'd':
		if (!parse_duration(arg, &env->duration))
			return usage_error("invalid duration '%s': seconds, more than 0", arg);
		break;
	case 'b':
		if (!parse_size(arg, &env->ring_size) || env->ring_size < 65536 ||
		    env->ring_size > (1ULL << 30) || (env->ring_size & (env->ring_size - 1)))
			return usage_error("invalid buffer size '%s': a power of two from 64K to 1G",
					   arg);
		env->ring_size_set = true;
		break;
	case OPT_ALLOCINFO:
		if (arg && strcmp(arg, "total") != 0)
			return usage_error("invalid --allocinfo value '%s': only 'total'", arg);
		env->ai_total = arg != NULL;
		env->allocinfo = true;
		break;
	case OPT_STACKS:
		env->ai_stacks = true;
		break;
	case OPT_FOLDED:
		env->ai_folded = true;
		break;
	case OPT_VMLINUX:
		if (!*arg)
			return usage_error("%s", "--vmlinux needs a path");
		env->vmlinux = arg;
		break;
	case OPT_MAX_PTRS:
		if (!parse_size(arg, &env->ai_max_ptrs) || !env->ai_max_ptrs ||
		    env->ai_max_ptrs > AI_MAX_PTRS_LIMIT)
			return usage_error("invalid --max-ptrs '%s': 1 to 256M", arg);
		break;
	case OPT_MAX_STACKS:
		if (!parse_size(arg, &env->ai_max_stacks) || !env->ai_max_stacks ||
		    env->ai_max_stacks > AI_MAX_STACKS_LIMIT)
			return usage_error("invalid --max-stacks '%s': 1 to 1M", arg);
		break;
	case OPT_RAW_TP:
		env->force_raw_tp = true;
		break;
	case OPT_HIST:
	case OPT_HIST_BY:
	case OPT_TOP:
	case OPT_LIVE:
	case OPT_HIST_KEYS:
		return parse_hist_option(opt, arg, env);
	case OPT_NICE:
		if (!parse_nice(arg, &env->nice))
			return usage_error("invalid --nice '%s': -20 to 19", arg);
		env->nice_given = true;
		break;
	case 'v':
		env->verbose = true;
		break;
	case 'h':
		fputs(usage_text, stdout);
		return EXIT_OK;
	case 'V':
		printf("kmemsnoop %s\n", KMEMSNOOP_VERSION);
		return EXIT_OK;
	default:
		fprintf(stderr, "kmemsnoop: see kmemsnoop --help\n");
		return EXIT_USAGE;
	}
	return -1;
}

/* Options that only mean something with --allocinfo. */
static int check_allocinfo_options(const struct env *env, bool max_ptrs_set, bool max_stacks_set)
{
	const char *opt = env->ai_stacks ? "--stacks" : env->ai_folded ? "--folded" :
			  env->vmlinux ? "--vmlinux" : max_ptrs_set ? "--max-ptrs" :
			  max_stacks_set ? "--max-stacks" : NULL;

	if (!env->allocinfo) {
		if (opt)
			return usage_error("%s needs --allocinfo", opt);
		return -1;
	}
	if (env->output_dir || env->input_dir)
		return usage_error("%s", "--allocinfo cannot be used with -o or -i");
	if (env->ring_size_set)
		return usage_error("%s", "-b sizes the stream's ring buffers: --allocinfo has none");
	if (env->ai_folded && !env->ai_stacks)
		return usage_error("%s", "--folded needs --stacks");
	if (env->ai_total && max_ptrs_set)
		return usage_error("%s", "--max-ptrs: --allocinfo=total tracks no pointers");
	return -1;
}

/* Options that only mean something with --hist. */
static int check_hist_options(const struct env *env)
{
	if (!env->hist) {
		if (env->top_set || env->hist_keys)
			return usage_error("%s", "--top and --hist-keys go with --hist or --hist-by");
		return -1;
	}
	if (env->output_dir || env->input_dir)
		return usage_error("%s", "--hist cannot be used with -o or -i");
	if (env->ring_size_set)
		return usage_error("%s", "--hist has no ring buffer: -b does not apply");
	return -1;
}

static int check_combination(const struct env *env)
{
	if (env->min_size > env->max_size)
		return usage_error("%s", "--min-size is larger than --max-size");
	if (env->input_dir && env->output_dir)
		return usage_error("%s", "-i and -o cannot be used together");
	if (env->input_dir && env->nice_given)
		return usage_error("%s", "--nice is for tracing, not for -i");
	return check_hist_options(env);
}

/* [INTERVAL [COUNT]] after the options of an aggregating mode. */
static int parse_positionals(int argc, char **argv, struct env *env)
{
	uint64_t count;

	if (argc == 0)
		return -1;
	if (!env->hist && !env->allocinfo)
		return usage_error("unexpected argument '%s'", argv[0]);
	if (!strcmp(argv[0], "total"))
		return usage_error("%s", "unexpected argument 'total': write --allocinfo=total");
	if (!parse_duration(argv[0], &env->interval))
		return usage_error("invalid interval '%s': seconds, more than 0", argv[0]);
	env->interval_given = true;
	if (env->hist && env->interval < MIN_HIST_INTERVAL)
		return usage_error("invalid interval '%s': seconds, at least 0.1 with --hist", argv[0]);
	if (argc == 1)
		return -1;
	if (!parse_u64(argv[1], &count) || !count || count > (uint64_t)LONG_MAX)
		return usage_error("invalid count '%s': a number of outputs, at least 1", argv[1]);
	env->count = count;
	if (argc > 2)
		return usage_error("unexpected argument '%s'", argv[2]);
	return -1;
}

int env_parse(int argc, char **argv, struct env *env)
{
	int opt, ret;

	memset(env, 0, sizeof(*env));
	env->cpu = -1;
	env->events = EV_ALL;
	env->max_size = ~0ULL;
	env->ring_size = DEFAULT_RING_SIZE;
	env->nice = DEFAULT_NICE;
	env->top = DEFAULT_TOP;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":p:t:c:C:e:o:i:d:b:vhV", long_options, NULL)) != -1) {
		if (opt == '?')
			return usage_error("unknown option '%s'", argv[optind - 1]);
		if (opt == ':')
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		ret = parse_one(opt, optarg, env);
		if (ret >= 0)
			return ret;
	}
	ret = parse_positionals(argc - optind, argv + optind, env);
	if (ret >= 0)
		return ret;
	if (env->hist && !env->interval)
		env->interval = DEFAULT_HIST_INTERVAL;
	ret = check_allocinfo_options(env, env->ai_max_ptrs != 0, env->ai_max_stacks != 0);
	if (ret >= 0)
		return ret;
	if (!env->ai_max_ptrs)
		env->ai_max_ptrs = DEFAULT_AI_MAX_PTRS;
	if (!env->ai_max_stacks)
		env->ai_max_stacks = env->ai_stacks ? DEFAULT_AI_MAX_STACKS : DEFAULT_AI_PAGE_STACKS;
	return check_combination(env);
}
