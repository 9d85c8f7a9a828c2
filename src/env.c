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

#define KMEMSNOOP_VERSION "0.1"
#define DEFAULT_RING_SIZE (8ULL << 20)
#define DEFAULT_NICE -10

static const char usage_text[] =
"Usage: kmemsnoop [OPTION...]\n"
"Trace the kernel's memory allocations and frees (kmalloc, slab caches, pages)\n"
"with BPF, printed as ftrace-style text or written as kmemtrace binary files.\n"
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
"  -i, --input=DIR        read such a directory and print it as text, in sequence order\n"
"\n"
"Control:\n"
"  -d, --duration=SECONDS stop after SECONDS (default: until Ctrl-C or SIGTERM)\n"
"  -b, --buffer-size=SIZE ring buffer per CPU, a power of two >= 64K, K/M/G suffixes\n"
"                         allowed (default 8M); records that find it full are lost\n"
"                         and counted\n"
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
"Exit status: 0 success, 1 runtime error, 2 bad usage.\n"
"\n"
"Examples:\n"
"  kmemsnoop                     # every allocation on the machine\n"
"  kmemsnoop -p 1234 -e kmalloc  # kmalloc/kfree made by process 1234\n"
"  kmemsnoop -o /tmp/trace -d 10 # ten seconds of binary trace\n"
"  kmemsnoop -i /tmp/trace       # print it\n";

enum {
	OPT_MIN_SIZE = 0x100,
	OPT_MAX_SIZE,
	OPT_RAW_TP,
	OPT_NICE,
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
		break;
	case OPT_RAW_TP:
		env->force_raw_tp = true;
		break;
	case OPT_NICE:
		if (!parse_nice(arg, &env->nice))
			return usage_error("invalid --nice '%s': -20 to 19", arg);
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

static int check_combination(const struct env *env)
{
	if (env->min_size > env->max_size)
		return usage_error("%s", "--min-size is larger than --max-size");
	if (env->input_dir && env->output_dir)
		return usage_error("%s", "-i and -o cannot be used together");
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
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return check_combination(env);
}
