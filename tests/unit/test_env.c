// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Option parsing (env.c), without root and without BPF. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/version.h"
#include "env.h"
#include "unit.h"

#define MAX_ARGS 32

/*
 * Parses "kmemsnoop" followed by the space-separated words of line.  env
 * points into the words, as into argv: they stay until the next call.
 */
static enum env_status parse_line(const char *line, struct env *env, char *err, size_t size)
{
	static char buf[512];
	char *argv[MAX_ARGS + 1], *save = NULL;
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "kmemsnoop";
	for (char *w = strtok_r(buf, " ", &save); w && argc < MAX_ARGS;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	return env_parse(argc, argv, env, err, size);
}

static void test_defaults(struct unit *u)
{
	struct unit_case c;
	struct env env;
	char err[256];

	unit_begin(&c, u, "env.defaults");
	CHECK(&c, parse_line("", &env, err, sizeof(err)) == ENV_RUN);
	CHECK(&c, !env.hist && !env.allocinfo && !env.output_dir && !env.input_dir);
	CHECK(&c, env.pid == 0 && env.tid == 0 && env.cpu == -1 && !env.comm[0]);
	CHECK_U64(&c, env.events, EV_ALL);
	CHECK_U64(&c, env.ring_size, 0); /* budget_ring_size() decides */
	CHECK_U64(&c, env.max_size, ~0ULL);
	CHECK(&c, env.nice == -10 && !env.nice_given && !env.size_filter);
	unit_end(&c);
}

/* Each valid option lands in its field. */
static void test_values(struct unit *u)
{
	struct unit_case c;
	struct env env;
	char err[256];

	unit_begin(&c, u, "env.values");
	CHECK(&c, parse_line("-p 12 -t 13 -c bash -C 1 -e kmalloc,page --min-size 1K "
			     "--max-size 2M -d 2.5 -b 64K --raw-tp --nice 5 -v", &env, err,
			     sizeof(err)) == ENV_RUN);
	CHECK(&c, env.pid == 12 && env.tid == 13 && env.cpu == 1);
	CHECK_STR(&c, env.comm, "bash");
	CHECK_U64(&c, env.events, EV_KMALLOC | EV_PAGE);
	CHECK_U64(&c, env.min_size, 1024);
	CHECK_U64(&c, env.max_size, 2ULL << 20);
	CHECK(&c, env.size_filter && env.duration == 2.5 && env.prog_type == PROG_RAW_TP && env.verbose);
	CHECK_U64(&c, env.ring_size, 65536);
	CHECK(&c, env.nice == 5 && env.nice_given);
	CHECK(&c, parse_line("-o /tmp/x", &env, err, sizeof(err)) == ENV_RUN);
	CHECK_STR(&c, env.output_dir, "/tmp/x");
	CHECK(&c, parse_line("--input=/tmp/y", &env, err, sizeof(err)) == ENV_RUN);
	CHECK_STR(&c, env.input_dir, "/tmp/y");
	unit_end(&c);

	unit_begin(&c, u, "env.allocinfo_values");
	CHECK(&c, parse_line("--allocinfo --stacks --folded --vmlinux /v --max-ptrs 4K "
			     "--max-stacks 100 --pprof /p 5 3", &env, err, sizeof(err)) == ENV_RUN);
	CHECK_STR(&c, env.pprof, "/p");
	CHECK(&c, env.allocinfo && !env.hist && env.ai_stacks && env.ai_folded && !env.ai_total);
	CHECK_STR(&c, env.vmlinux, "/v");
	CHECK_U64(&c, env.ai_max_ptrs, 4096);
	CHECK_U64(&c, env.ai_max_stacks, 100);
	CHECK(&c, env.interval == 5 && env.interval_given && env.count == 3);
	CHECK(&c, parse_line("--allocinfo=total", &env, err, sizeof(err)) == ENV_RUN);
	CHECK(&c, env.ai_total && !env.interval_given && env.interval == 0);
	CHECK_U64(&c, env.ai_max_ptrs, 1ULL << 20);
	CHECK_U64(&c, env.ai_max_stacks, 4096);
	unit_end(&c);

	unit_begin(&c, u, "env.hist_values");
	CHECK(&c, parse_line("--hist=req --hist-by comm --top 3 --live --hist-keys 50 0.5",
			     &env, err, sizeof(err)) == ENV_RUN);
	CHECK(&c, env.hist && env.hist_value == KMT_HIST_REQ && env.hist_by == KMT_BY_COMM);
	CHECK(&c, env.top == 3 && env.top_set && env.live && env.hist_keys == 50);
	CHECK(&c, env.interval == 0.5 && env.interval_given && env.count == 0);
	CHECK(&c, parse_line("--hist-by callsite", &env, err, sizeof(err)) == ENV_RUN);
	CHECK(&c, env.hist && env.hist_value == KMT_HIST_ALLOC && env.interval == 1.0);
	CHECK(&c, !env.interval_given);
	unit_end(&c);
}

static void test_together(struct unit *u)
{
	struct unit_case c;
	struct env env;
	char err[256];

	unit_begin(&c, u, "env.hist_and_allocinfo");
	CHECK(&c, parse_line("--hist --allocinfo", &env, err, sizeof(err)) == ENV_RUN);
	CHECK(&c, env.hist && env.allocinfo && env.interval == 1.0 && !env.interval_given);
	CHECK(&c, parse_line("--allocinfo --hist-by cache 2 4", &env, err, sizeof(err)) == ENV_RUN);
	CHECK(&c, env.hist && env.allocinfo && env.interval == 2 && env.count == 4);
	unit_end(&c);
}

/* perf kmem's rules: -s and -l go to the table named last; slab by default. */
static void test_stat(struct unit *u)
{
	struct unit_case c;
	struct env env;
	char err[256];

	unit_begin(&c, u, "env.stat_values");
	CHECK(&c, parse_line("--stat", &env, err, sizeof(err)) == ENV_RUN);
	CHECK(&c, env.stat && env.stat_opts.slab && !env.stat_opts.page);
	CHECK(&c, !env.stat_opts.caller && !env.stat_opts.alloc);
	CHECK(&c, env.events == (EV_KMALLOC | EV_CACHE));
	CHECK(&c, parse_line("--stat --caller -s hit,bytes -l 5 --alloc -s ptr 2 3", &env, err,
			     sizeof(err)) == ENV_RUN);
	CHECK(&c, env.stat_opts.caller && env.stat_opts.alloc);
	CHECK(&c, env.stat_opts.caller_sort.nkeys == 2 &&
		  env.stat_opts.caller_sort.keys[0] == KSTAT_KEY_HIT);
	CHECK(&c, env.stat_opts.alloc_sort.nkeys == 1 &&
		  env.stat_opts.alloc_sort.keys[0] == KSTAT_KEY_PTR);
	CHECK(&c, env.stat_opts.caller_lines == 5 && env.stat_opts.alloc_lines == -1);
	CHECK(&c, env.interval == 2 && env.count == 3);
	CHECK(&c, parse_line("--stat --page -s order", &env, err, sizeof(err)) == ENV_RUN);
	CHECK(&c, env.stat_opts.page && !env.stat_opts.slab && env.events == EV_PAGE);
	CHECK(&c, env.stat_opts.page_alloc_sort.nkeys == 1 &&
		  env.stat_opts.page_alloc_sort.keys[0] == KSTAT_KEY_ORDER);
	/* The page tables' keys leave the slab tables' defaults alone. */
	CHECK(&c, parse_line("--stat --slab --caller -s hit --page --caller -s order", &env, err,
			     sizeof(err)) == ENV_RUN);
	CHECK(&c, env.stat_opts.caller_sort.nkeys == 1 &&
		  env.stat_opts.caller_sort.keys[0] == KSTAT_KEY_HIT);
	CHECK(&c, env.stat_opts.page_caller_sort.nkeys == 1 &&
		  env.stat_opts.page_caller_sort.keys[0] == KSTAT_KEY_ORDER);
	CHECK(&c, env.stat_opts.alloc_sort.nkeys == 0 && env.stat_opts.page_alloc_sort.nkeys == 0);
	CHECK(&c, parse_line("--stat --slab --page -e kmalloc", &env, err, sizeof(err)) == ENV_RUN);
	CHECK(&c, env.stat_opts.page && env.stat_opts.slab && env.events == EV_KMALLOC);
	CHECK(&c, parse_line("-i /d --stat --caller", &env, err, sizeof(err)) == ENV_RUN);
	unit_end(&c);
}

static const struct {
	const char *args;
	const char *message;
} usage_cases[] = {
	{ "-p 0", "invalid PID '0'" },
	{ "--listen abc", "invalid --listen 'abc': [ADDR:]PORT, PORT from 1 to 65535" },
	{ "--listen 127.0.0.1:0", "invalid --listen '127.0.0.1:0': [ADDR:]PORT, PORT from 1 to 65535" },
	{ "--listen 9100 --hist", "--listen counts what --hist and --allocinfo do: use it alone" },
	{ "--listen 9100 --allocinfo", "--listen counts what --hist and --allocinfo do: use it alone" },
	{ "--listen 9100 -o /tmp/x",
	  "--listen cannot be used with -o (but with --flight -o) or -i" },
	{ "--flight -o /x --hist", "--flight keeps every event: not with --hist, --allocinfo or "
				   "--stat (--listen serves their counts beside it)" },
	{ "--flight", "--flight writes its dumps into a directory: give -o DIR" },
	{ "--flight-keep 3 -o /x", "--flight-after, --flight-keep and --flight-when go with --flight" },
	{ "--flight -o /x --flight-keep 3,0",
	  "invalid --flight-keep '3,0': a number of dumps, 1 to 100000, and optionally a size they "
	  "may take (8,2G)" },
	{ "--flight -o /x --flight-keep 3,", "invalid --flight-keep '3,': a number of dumps, 1 to "
					     "100000, and optionally a size they may take (8,2G)" },
	{ "--flight -o /x --flight-after 61", "invalid --flight-after '61': seconds, 0 to 60" },
	{ "--flight -o /x --flight-after -1", "invalid --flight-after '-1': seconds, 0 to 60" },
	{ "--listen 9100 -b 1M", "--listen has no ring buffer: -b does not apply" },
	{ "--listen 9100 5", "unexpected argument '5'" },
	{ "-p abc", "invalid PID 'abc'" },
	{ "-t -5", "invalid TID '-5'" },
	{ "-c 0123456789abcdef", "invalid COMM '0123456789abcdef': 1 to 15 characters" },
	{ "-C 1024", "invalid CPU '1024'" },
	{ "-e slab", "invalid event list 'slab': use kmalloc, cache, page, vmalloc, percpu" },
	{ "--min-size 1Q", "invalid --min-size '1Q'" },
	{ "--min-size 2K --max-size 1K", "--min-size is larger than --max-size" },
	{ "-b 1000", "invalid buffer size '1000': a power of two from 64K to 1G" },
	{ "-b 2G", "invalid buffer size '2G': a power of two from 64K to 1G" },
	{ "-d 0", "invalid duration '0': seconds, more than 0" },
	{ "--nice 20", "invalid --nice '20': -20 to 19" },
	{ "--bogus", "unknown option '--bogus'" },
	{ "-Z", "unknown option '-Z'" },
	{ "-p", "option '-p' needs a value" },
	{ "--pid", "option '-p' needs a value" },
	{ "-vx", "unknown option '-x'" },
	{ "-vp", "option '-p' needs a value" },
	{ "--stacks=3", "option '--stacks' takes no value" },
	{ "-i /a -o /b", "-i and -o cannot be used together" },
	{ "-i /a --nice 0", "--nice is for tracing, not for -i" },
	{ "5", "unexpected argument '5'" },
	{ "--allocinfo=bogus", "invalid --allocinfo value 'bogus': only 'total'" },
	{ "--allocinfo total", "unexpected argument 'total': write --allocinfo=total" },
	{ "--allocinfo -o /x", "--allocinfo cannot be used with -o or -i" },
	{ "--allocinfo -b 1M", "-b sizes the stream's ring buffers: --allocinfo has none" },
	{ "--allocinfo --folded", "--folded needs --stacks" },
	{ "--allocinfo=total --max-ptrs 10", "--max-ptrs: --allocinfo=total tracks no pointers" },
	{ "--stacks --hist", "--stacks goes with the stream (text, --json, -o, --stat), --flight or "
			     "--allocinfo" },
	{ "--stacks -i /d", "--stacks with -i is for --stat's table per stack: -i prints the "
			    "stacks a recording holds" },
	{ "--stat --folded", "--folded needs --stacks" },
	{ "--stat --stacks --folded --json", "--folded prints lines for flame graph tools, not "
					     "--json" },
	{ "--user-stacks -d 1", "--user-stacks needs -p, -t, -c or --cgroup: the processes whose "
				"stacks to read" },
	{ "--user-stacks -p 1 --hist", "--user-stacks goes with the stream (text, --json, -o, "
				       "--stat)" },
	{ "--user-stacks -i /d", "--user-stacks is for tracing: -i prints the stacks a recording "
				 "holds (and -i --stat --stacks tabulates them)" },
	{ "--stack-depth 4", "--stack-depth needs --stacks (without --allocinfo) or --user-stacks" },
	{ "--stacks --stack-depth 0", "invalid --stack-depth '0': 1 to 48 frames" },
	{ "--stacks --stack-depth 49", "invalid --stack-depth '49': 1 to 48 frames" },
	{ "--vmlinux /v", "--vmlinux needs --allocinfo" },
	{ "--pprof /p", "--pprof needs --allocinfo" },
	{ "--hist --pprof /p", "--pprof needs --allocinfo" },
	{ "--allocinfo --pprof=", "--pprof needs a file name" },
	{ "--allocinfo --max-ptrs 0", "invalid --max-ptrs '0': 1 to 256M" },
	{ "--allocinfo --max-stacks 2M", "invalid --max-stacks '2M': 1 to 1M" },
	{ "--hist=bogus", "invalid --hist 'bogus': use --hist, --hist=alloc or --hist=req" },
	{ "--hist-by x", "invalid --hist-by 'x': use cache, callsite, comm, cgroup, event or order" },
	{ "--hist 0.01", "invalid interval '0.01': seconds, at least 0.1 with --hist" },
	{ "--hist abc", "invalid interval 'abc': seconds, more than 0" },
	{ "--hist 1 0", "invalid count '0': a number of outputs, at least 1" },
	{ "--hist 1 2 3", "unexpected argument '3'" },
	{ "--top 5", "--top and --hist-keys go with --hist, --hist-by or --listen" },
	{ "--hist --top 0", "invalid --top '0': a number from 1 to 10000" },
	{ "--hist -o /x", "--hist cannot be used with -o or -i" },
	{ "--hist -b 1M", "--hist has no ring buffer: -b does not apply" },
	{ "--hist --hist-keys 0", "invalid --hist-keys '0': a number from 1 to 1048576" },
	{ "--caller", "--caller, --alloc, --slab, --page, -s and -l go with --stat" },
	{ "-s hit", "--caller, --alloc, --slab, --page, -s and -l go with --stat" },
	{ "--stat -o /x", "--stat cannot be used with -o: record with -o, then -i DIR --stat" },
	{ "--stat --hist", "--stat cannot be used with --hist or --allocinfo" },
	{ "-i /a --stat 5", "-i --stat reads a recording: no INTERVAL" },
	{ "--stat -s bogus", "unknown slab sort key 'bogus': use ptr, callsite, hit, bytes, frag, "
			     "pingpong" },
	{ "--stat --page -s frag", "unknown page sort key 'frag': use page, callsite, hit, "
				   "bytes, order, migtype, gfp" },
	{ "--stat -l x", "invalid --line 'x': a number of rows" },
};

static void test_usage_errors(struct unit *u)
{
	for (size_t i = 0; i < sizeof(usage_cases) / sizeof(usage_cases[0]); i++) {
		struct unit_case c;
		struct env env;
		char name[96], err[256];

		snprintf(name, sizeof(name), "env.usage[%s]", usage_cases[i].args);
		unit_begin(&c, u, name);
		CHECK(&c, parse_line(usage_cases[i].args, &env, err, sizeof(err)) == ENV_USAGE);
		CHECK_STR(&c, err, usage_cases[i].message);
		unit_end(&c);
	}
}

static void test_help_version(struct unit *u)
{
	struct unit_case c;
	struct env env;
	char err[256];

	unit_begin(&c, u, "env.help_version");
	CHECK(&c, parse_line("-h", &env, err, sizeof(err)) == ENV_HELP);
	CHECK(&c, parse_line("-p 1 --help", &env, err, sizeof(err)) == ENV_HELP);
	CHECK(&c, parse_line("-V", &env, err, sizeof(err)) == ENV_VERSION);
	CHECK(&c, kmemsnoop_version()[0] != '\0');
	unit_end(&c);
}

/* Reads a whole file (or the help text) into a malloc'd string. */
static char *slurp(FILE *f)
{
	size_t cap = 1 << 16, len = 0, n;
	char *buf = malloc(cap);

	while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *bigger = realloc(buf, cap *= 2);

			if (!bigger) {
				free(buf);
				return NULL;
			}
			buf = bigger;
		}
	}
	if (buf)
		buf[len] = '\0';
	return buf;
}

/* Every option of the table is in --help and in the README, as --NAME. */
static void check_names_in(struct unit_case *c, const char *text, const char *where)
{
	const char *names[128];
	size_t n = env_option_names(names, 128);
	char want[64];

	CHECK(c, n > 20 && n <= 128);
	for (size_t i = 0; i < n && i < 128; i++) {
		snprintf(want, sizeof(want), "--%s", names[i]);
		if (!strstr(text, want))
			unit_fail(c, __FILE__, __LINE__, "%s does not mention %s", where, want);
	}
}

/* Every option has a key of its own: two with the same LONG_ONLY(n) would
 * both run the first one's handler. */
static void test_distinct_keys(struct unit *u)
{
	struct unit_case c;
	const char *dup = env_duplicate_key();

	unit_begin(&c, u, "env.distinct_keys");
	if (dup)
		unit_fail(&c, __FILE__, __LINE__, "--%s has the key of another option", dup);
	unit_end(&c);
}

static void test_documented(struct unit *u)
{
	struct unit_case c;
	FILE *f;
	char *text;

	unit_begin(&c, u, "env.help_lists_every_option");
	f = tmpfile();
	CHECK(&c, f != NULL);
	if (f) {
		env_print_help(f);
		rewind(f);
		text = slurp(f);
		fclose(f);
		CHECK(&c, text != NULL);
		if (text)
			check_names_in(&c, text, "--help");
		free(text);
	}
	unit_end(&c);

	unit_begin(&c, u, "env.readme_lists_every_option");
	f = fopen("README.md", "r");
	if (!f) {
		unit_fail(&c, __FILE__, __LINE__, "cannot read README.md (run from the top)");
	} else {
		text = slurp(f);
		fclose(f);
		if (text)
			check_names_in(&c, text, "README.md");
		free(text);
	}
	unit_end(&c);
}

void test_env(struct unit *u)
{
	test_defaults(u);
	test_values(u);
	test_together(u);
	test_stat(u);
	test_usage_errors(u);
	test_help_version(u);
	test_documented(u);
	test_distinct_keys(u);
}
