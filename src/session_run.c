// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * session_run: one loop for every mode (intervals, COUNT, -d, signals,
 * the -p processes gone, no burst of catch-up ticks), then the finish:
 * detach, each mode's last output, the summary lines.  Apart from the
 * setup (session.c): it starts once everything is attached.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "util/clock.h"
#include "env.h"
#include "kmemsnoop.skel.h"
#include "session.h"
#include "session_impl.h"

#define POLL_MS 100

/* Set by SIGINT/SIGTERM: a signal handler can only reach a global. */
static volatile sig_atomic_t stop_requested;

void session_on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
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

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		if (info.run_cnt)
			fprintf(stderr, "kmemsnoop: %s: %llu runs, %.0f ns per run (bpf_stats)\n",
				bpf_program__name(prog), (unsigned long long)info.run_cnt,
				(double)info.run_time_ns / (double)info.run_cnt);
		if (info.recursion_misses)
			fprintf(stderr, "kmemsnoop: %s: %llu events skipped by the kernel\n",
				bpf_program__name(prog), (unsigned long long)info.recursion_misses);
	}
	if (s->classic_nested)
		fprintf(stderr, "kmemsnoop: %llu events the classic programs skipped taken by the "
				"tp_btf ones\n", (unsigned long long)s->skel->bss->nested_taken);
}

/* Detach first: the modes' last reading then has everything.  Every mode
 * closes its output even after a failure; the first failure is kept. */
static int finish(struct session *s, int ret)
{
	char first[sizeof(s->err)];

	memcpy(first, s->err, sizeof(first));
	session_detach_all(s);
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
