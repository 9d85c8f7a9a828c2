// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The options taken together, once each is valid alone (its handler,
 * env.c): those that go only with a mode, those that exclude each other.
 * env_parse() ends with env_check_combination(), after the defaults that
 * depend on what was given.
 */
#include <stdbool.h>
#include <stddef.h>

#include "bpf/kmemsnoop.h"
#include "env.h"
#include "env_impl.h"

/* Options that only mean something with --allocinfo. */
static bool check_allocinfo_options(struct parse *p)
{
	const struct env *env = p->env;
	const char *opt = env->ai_folded && !env->stat ? "--folded" :
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

/* --stacks without --allocinfo: a stack in every event's record, which
 * only the stream and the flight recorder write. */
static bool check_stream_stacks(struct parse *p)
{
	const struct env *env = p->env;

	if (env->allocinfo || !env->ai_stacks)
		return true;
	if (env->input_dir && !env->stat)
		return bad(p, "--stacks with -i is for --stat's table per stack: -i prints the "
			      "stacks a recording holds");
	if (env->hist || (env->listen && !env->flight))
		return bad(p, "--stacks goes with the stream (text, --json, -o, --stat), --flight or "
			      "--allocinfo");
	return true;
}

/* --stat --stacks --folded: the table per stack as flame graph lines. */
static bool check_stat_folded(struct parse *p)
{
	const struct env *env = p->env;

	if (!env->stat || !env->ai_folded)
		return true;
	if (!env->ai_stacks && !env->user_stacks)
		return bad(p, "--folded needs --stacks");
	if (env->json)
		return bad(p, "--folded prints lines for flame graph tools, not --json");
	return true;
}

/* --stack-depth cuts the stream's stacks, or a recording's. */
static bool check_stack_depth(struct parse *p)
{
	const struct env *env = p->env;

	if (!env->stack_depth || env->input_dir || (env->ai_stacks && !env->allocinfo) ||
	    env->user_stacks)
		return true;
	return bad(p, "--stack-depth needs --stacks (without --allocinfo) or --user-stacks");
}

/* --user-stacks: a user stack in every event's record of the traced
 * processes, whose maps user space reads while they live. */
static bool check_user_stacks(struct parse *p)
{
	const struct env *env = p->env;

	if (!env->user_stacks)
		return true;
	if (env->input_dir)
		return bad(p, "--user-stacks is for tracing: -i prints the stacks a recording holds "
			      "(and -i --stat --stacks tabulates them)");
	if (env->allocinfo || env->hist || env->listen || env->flight)
		return bad(p, "--user-stacks goes with the stream (text, --json, -o, --stat)");
	if (!env->pid && !env->tid && !env->comm[0] && !env->cgroup)
		return bad(p, "--user-stacks needs -p, -t, -c or --cgroup: the processes whose "
			      "stacks to read");
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
	if ((env->output_dir && !env->flight) || env->input_dir)
		return bad(p, "--listen cannot be used with -o (but with --flight -o) or -i");
	if (env->ring_size_set && !env->flight)
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

/* --flight writes dumps of the stream's records: a recording's options. */
static bool check_flight_options(struct parse *p)
{
	const struct env *env = p->env;

	if (!env->flight)
		return !p->flight_option ||
		       bad(p, "--flight-after, --flight-keep and --flight-when go with --flight");
	if (!env->output_dir)
		return bad(p, "--flight writes its dumps into a directory: give -o DIR");
	if (env->hist || env->allocinfo || env->stat)
		return bad(p, "--flight keeps every event: not with --hist, --allocinfo or --stat "
			      "(--listen serves their counts beside it)");
	return true;
}

/* The tracing machinery's frames a kernel stack starts with: one on x86
 * (bpf_trace_run2), more on arm64 (the program's, __traceiter_*). */
#define KSTACK_MACHINERY_FRAMES 6

unsigned int env_kstack_frames(const struct env *env)
{
	unsigned int n = KMT_KSTACK_MAX_DEPTH;

	if (!env->ai_stacks || env->allocinfo)
		return 0;
	if (env->stack_depth && env->stack_depth + KSTACK_MACHINERY_FRAMES < KMT_KSTACK_MAX_DEPTH)
		n = env->stack_depth + KSTACK_MACHINERY_FRAMES;
	return n;
}

unsigned int env_ustack_frames(const struct env *env)
{
	if (!env->user_stacks)
		return 0;
	return env->stack_depth && env->stack_depth < KMT_USTACK_MAX_DEPTH ? env->stack_depth :
									      KMT_USTACK_MAX_DEPTH;
}

bool env_stat_in_bpf(const struct env *env)
{
	return env->stat && !env->input_dir && !env->stat_stream && !env->stat_opts.alloc &&
	       !env->stat_opts.page && !(env->events & EV_PAGE) && !env->ai_stacks &&
	       !env->user_stacks;
}

bool env_check_combination(struct parse *p)
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
	return check_flight_options(p) && check_listen_options(p) && check_stream_stacks(p) &&
	       check_user_stacks(p) && check_stack_depth(p) && check_stat_folded(p) &&
	       check_allocinfo_options(p) &&
	       check_hist_options(p) && check_stat_options(p);
}
