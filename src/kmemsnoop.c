// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kmemsnoop: trace kernel memory allocations with BPF. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "names/gfp.h"
#include "names/ksyms.h"
#include "names/usyms.h"
#include "recording/binin.h"
#include "recording/recheader.h"
#include "recording/sink.h"
#include "stat/kstat.h"
#include "stat/statsink.h"
#include "stream/jsonsink.h"
#include "stream/text.h"
#include "util/outwriter.h"
#include "util/version.h"
#include "env.h"
#include "session.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1U << (cap % 32));
}

/* BPF tracing needs CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN on older kernels). */
static int check_privileges(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data)) {
		fprintf(stderr, "kmemsnoop: cannot read capabilities: %s\n", strerror(errno));
		return -1;
	}
	if (has_cap(data, CAP_SYS_ADMIN) || (has_cap(data, CAP_BPF) && has_cap(data, CAP_PERFMON)))
		return 0;
	fprintf(stderr, "kmemsnoop: needs root, or CAP_BPF and CAP_PERFMON (try sudo)\n");
	return -1;
}

/* -p PID: a thread id selects its whole thread group. */
static int resolve_pid(struct env *env)
{
	char path[64], line[256];
	FILE *f;
	int tgid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", env->pid);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "kmemsnoop: no process with PID %d\n", env->pid);
		return -1;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	if (tgid > 0)
		env->pid = tgid;
	return 0;
}

static int check_tid(const struct env *env)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", env->tid);
	if (access(path, F_OK) == 0)
		return 0;
	fprintf(stderr, "kmemsnoop: no thread with TID %d\n", env->tid);
	return -1;
}

/* -i: symbols from the recording's own kallsyms copy, else this boot's. */
static struct ksyms *recording_symbols(const char *dir)
{
	char path[4096];
	struct ksyms *ks;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	ks = ksyms_load(path);
	return ks ? ks : ksyms_load("/proc/kallsyms");
}

/* -i: GFP flag names from the recording's gfp file, else (said once) the
 * running kernel's.  NULL with a reason in err. */
static struct gfp_names *recording_gfp(const char *dir, char *err, size_t err_size)
{
	struct gfp_names *names;
	struct btf *btf;
	int ret = binin_gfp(dir, &names, err, err_size);

	if (ret)
		return ret > 0 ? names : NULL;
	fprintf(stderr, "kmemsnoop: %s has no gfp file (it was recorded before kmemsnoop kept "
			"one): GFP flags are named as the running kernel names them\n", dir);
	btf = btf__load_vmlinux_btf();
	names = gfp_names_new(btf);
	btf__free(btf);
	if (!names)
		snprintf(err, err_size, "out of memory");
	return names;
}

/* -i's text output starts with "#" lines of what the header says; --json
 * and --stat have their own formats, which have no place for them. */
static int print_header(const struct env *env, char *err, size_t err_size)
{
	struct rec_header h;
	int ret = binin_header(env->input_dir, &h, err, err_size);

	if (ret <= 0 || env->json || env->stat)
		return ret < 0 ? -1 : 0;
	recheader_print(&h, stdout);
	return 0;
}

/* --stat's slab objects on their nodes: the recording kernel's linear map,
 * with this machine's NUMA layout (a header without it: not known). */
static void recording_linear_map(const struct env *env, struct sink *sink)
{
	struct rec_header h;
	char ignored[8];

	if (binin_header(env->input_dir, &h, ignored, sizeof(ignored)) == 1 &&
	    recheader_has(&h, RH_LINEAR_MAP) && recheader_has(&h, RH_PAGE_SIZE))
		kstat_set_linear_map(stat_sink_tables(sink), h.linear_map, h.page_size);
}

/* -i: the maps of the traced processes a recording with user stacks keeps
 * (DIR/maps), which name their frames where the same objects are.  NULL
 * with a reason in err when the file is there but unreadable. */
static struct usyms *recording_usyms(const char *dir, char *err, size_t err_size)
{
	struct usyms *u = usyms_new(false);
	char path[4096], why[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/maps", dir);
	f = u ? fopen(path, "re") : NULL;
	if (!u || !f) {
		if (u && errno == ENOENT)
			return u;
		snprintf(err, err_size, u ? "%.200s/maps: %s" : "out of memory", dir, strerror(errno));
		usyms_free(u);
		return NULL;
	}
	if (usyms_read(u, f, why, sizeof(why))) {
		snprintf(err, err_size, "%.200s/maps: %.200s", dir, why);
		usyms_free(u);
		u = NULL;
	}
	fclose(f);
	return u;
}

/* -i: the frames of each stack to show, as --stack-depth recorded it. */
static unsigned int recording_stack_depth(const char *dir)
{
	struct rec_header h;
	char ignored[8];

	if (binin_header(dir, &h, ignored, sizeof(ignored)) != 1 ||
	    !recheader_has(&h, RH_STACK_DEPTH) || h.stack_depth > UINT_MAX)
		return 0;
	return h.stack_depth;
}

static struct sink *recording_sink(const struct env *env, struct ksyms *ksyms,
				   struct usyms *usyms, const struct gfp_names *gfp, char *err,
				   size_t err_size)
{
	struct addr_names names = { ksyms, usyms, env->stack_depth ? (unsigned int)env->stack_depth :
						  recording_stack_depth(env->input_dir) };

	if (env->stat) {
		struct sink *sink = stat_sink_new(stdout, env, &names, gfp, 0, 0, err, err_size);

		if (sink)
			recording_linear_map(env, sink);
		return sink;
	}
	snprintf(err, err_size, "out of memory");
	return (env->json ? json_sink_new : text_sink_new)(stdout, &names, gfp);
}

/* -i DIR: the recording as text, as it would have printed live (after the
 * header's "#" lines), or its --stat tables. */
static int print_recording(const struct env *env)
{
	const char *dir = env->input_dir;
	struct ksyms *ksyms = recording_symbols(dir);
	struct binin_losses lost;
	char err[512] = "out of memory";
	/* Not a recording: said before anything about its files. */
	struct gfp_names *gfp = binin_check(dir, err, sizeof(err)) ? NULL :
				recording_gfp(dir, err, sizeof(err));
	struct usyms *usyms = gfp ? recording_usyms(dir, err, sizeof(err)) : NULL;
	struct sink *sink = usyms ? recording_sink(env, ksyms, usyms, gfp, err, sizeof(err)) : NULL;
	int ret = EXIT_OK;

	if (!sink || print_header(env, err, sizeof(err))) {
		fprintf(stderr, "kmemsnoop: %s\n", err);
		ret = EXIT_RUNTIME;
	} else if (binin_replay(dir, sink, &lost, err, sizeof(err))) {
		fprintf(stderr, "kmemsnoop: %s\n", err);
		ret = EXIT_RUNTIME;
	} else {
		if (lost.bytes || lost.events)
			fprintf(stderr, "kmemsnoop: this trace lost %llu events (%llu bytes) when "
					"recorded\n", lost.events, lost.bytes);
		if (sink->ops->report && sink->ops->report(sink, &(struct sink_losses){
						 lost.events, lost.bytes, 0 }) < 0) {
			fprintf(stderr, "kmemsnoop: %s\n", sink->err);
			ret = EXIT_RUNTIME;
		}
	}
	if (sink)
		sink->ops->destroy(sink);
	usyms_free(usyms);
	gfp_names_free(gfp);
	ksyms_free(ksyms);
	return ret;
}

/* A live trace in the modes env selects. */
static int trace(const struct env *env)
{
	struct session s;
	int ret = EXIT_OK;

	if (session_new(&s, env) || session_setup(&s) || session_run(&s)) {
		fprintf(stderr, "kmemsnoop: %s\n", s.err);
		ret = EXIT_RUNTIME;
	}
	session_free(&s);
	return ret;
}

/* -C must name a CPU this machine can have, or the trace is silently empty. */
static int check_cpu(const struct env *env)
{
	int ncpus = libbpf_num_possible_cpus();

	if (env->cpu < 0 || ncpus <= 0 || env->cpu < ncpus)
		return 0;
	fprintf(stderr, "kmemsnoop: no CPU %d: this machine has CPUs 0-%d\n", env->cpu, ncpus - 1);
	return -1;
}

/*
 * Linux keeps a nice value per thread, and the thread that writes stdout
 * (outwriter.h) is started before: left at 0, it fell behind a busy
 * machine's allocating tasks and the rings filled.  Every thread of the
 * process gets it; 0 or the first error.
 */
static int set_threads_priority(int nice)
{
	DIR *tasks = opendir("/proc/self/task");
	struct dirent *d;
	int err = 0;

	if (!tasks)
		return setpriority(PRIO_PROCESS, 0, nice) ? errno : 0;
	while ((d = readdir(tasks))) {
		int tid = atoi(d->d_name);

		if (tid > 0 && setpriority(PRIO_PROCESS, tid, nice) && !err)
			err = errno;
	}
	closedir(tasks);
	return err;
}

/*
 * Not fatal: a tracer that keeps its priority still works.  Only an explicit
 * --nice is worth a warning; the default needs CAP_SYS_NICE, which a
 * CAP_BPF + CAP_PERFMON setup may not have.
 */
static void set_priority(const struct env *env)
{
	int err = set_threads_priority(env->nice);

	if (err && env->nice_given)
		fprintf(stderr, "kmemsnoop: warning: cannot set --nice %d: %s\n", env->nice,
			strerror(err));
}

/* Lines of text or JSON, -i's or the live stream's, into a file or a
 * pipe: written by a thread of their own (outwriter.h).  A terminal is
 * written as it was, and the other modes print little. */
static bool writes_lines(const struct env *env)
{
	bool live_lines = !env->hist && !env->allocinfo && !env->listen && !env->stat &&
			  !env->output_dir;

	return (env->input_dir || live_lines) && !isatty(STDOUT_FILENO);
}

/* The writer's last writes: a failure other than the reader gone (EPIPE,
 * which ends a stream quietly) fails the run, said once. */
static int finish_writer(struct outwriter *w, int ret)
{
	int err = outwriter_finish(w);

	if (!err || err == -EPIPE || ret != EXIT_OK)
		return ret;
	fprintf(stderr, "kmemsnoop: writing output: %s\n", strerror(-err));
	return EXIT_RUNTIME;
}

/* What env asks for: a recording read back, or a trace. */
static int run(struct env *env)
{
	if (env->input_dir)
		return print_recording(env);
	if (check_cpu(env))
		return EXIT_USAGE;
	if (check_privileges())
		return EXIT_RUNTIME;
	if (env->pid && resolve_pid(env))
		return EXIT_RUNTIME;
	if (env->tid && check_tid(env))
		return EXIT_RUNTIME;
	set_priority(env);
	return trace(env);
}

int main(int argc, char **argv)
{
	struct outwriter *writer = NULL;
	struct env env;
	char err[512];

	switch (env_parse(argc, argv, &env, err, sizeof(err))) {
	case ENV_RUN:
		break;
	case ENV_HELP:
		env_print_help(stdout);
		return EXIT_OK;
	case ENV_VERSION:
		printf("kmemsnoop %s\n", kmemsnoop_version());
		return EXIT_OK;
	case ENV_USAGE:
		fprintf(stderr, "kmemsnoop: %s (see kmemsnoop --help)\n", err);
		return EXIT_USAGE;
	}
	/* Without the thread, stdio writes as it always did. */
	if (writes_lines(&env))
		writer = outwriter_start();
	return finish_writer(writer, run(&env));
}
