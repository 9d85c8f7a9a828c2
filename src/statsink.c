// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The --stat sink: records are decoded and given to kstat.c in time order.
 * Live, each CPU's ring is in order but the rings are read one after the
 * other, so an allocation on one CPU can arrive after its free on another:
 * records wait here, sorted by time, until the stream says that everything
 * before some time has been read (sync).  A margin covers records
 * reserved before that time but not yet submitted when their ring was read.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "gfp.h"
#include "kmemtrace.h"
#include "ksyms.h"
#include "kstat.h"
#include "record.h"
#include "sink.h"
#include "statsink.h"

#define SYNC_MARGIN_NS 10000000ULL /* 10 ms */

struct pending {
	struct kmt_event ev;
	int cpu;
	unsigned long long arrival; /* ring order within a CPU at equal times */
};

struct stat_sink {
	struct sink sink;
	FILE *out;
	struct kstat *ks;
	struct kstat_opts opts;
	struct ksyms *ksyms;
	struct gfp_names *gfp;
	bool reorder;
	struct pending *pending;
	size_t npending, cap;
	unsigned long long arrivals;
	unsigned long long reports;
};

static struct stat_sink *stat_of(struct sink *sk)
{
	return (struct stat_sink *)sk;
}

static int fail(struct stat_sink *ss, const char *what)
{
	snprintf(ss->sink.err, sizeof(ss->sink.err), "%s", what);
	return -1;
}

static int add(struct stat_sink *ss, const struct kmt_event *ev, int cpu)
{
	return kstat_add(ss->ks, ev, ev->has_time ? (int)ev->cpu : cpu) ?
		       fail(ss, "--stat: out of memory") : 0;
}

static int stat_begin(struct sink *sk)
{
	(void)sk;
	return 0;
}

static int stat_record(struct sink *sk, int cpu, const void *data, size_t size,
		       const struct kmt_event *ev)
{
	struct stat_sink *ss = stat_of(sk);
	struct kmt_event decoded;
	struct pending *p;

	if (!ev) {
		if (kmt_decode(data, size, &decoded) != KMT_OK) {
			sk->undecodable++;
			return 0;
		}
		ev = &decoded;
	}
	if (!ss->reorder || !ev->has_time)
		return add(ss, ev, cpu);
	if (ss->npending == ss->cap) {
		size_t cap = ss->cap ? ss->cap * 2 : 4096;
		struct pending *grown = realloc(ss->pending, cap * sizeof(*grown));

		if (!grown)
			return fail(ss, "--stat: out of memory");
		ss->pending = grown;
		ss->cap = cap;
	}
	p = &ss->pending[ss->npending++];
	p->ev = *ev;
	p->cpu = cpu;
	p->arrival = ss->arrivals++;
	return 0;
}

static int pending_cmp(const void *a, const void *b)
{
	const struct pending *l = a, *r = b;

	if (l->ev.timestamp != r->ev.timestamp)
		return l->ev.timestamp < r->ev.timestamp ? -1 : 1;
	return l->arrival < r->arrival ? -1 : l->arrival > r->arrival;
}

/* Gives kstat the records before until (all of them: ~0ULL), in time order. */
static int release(struct stat_sink *ss, unsigned long long until)
{
	size_t n = 0;

	qsort(ss->pending, ss->npending, sizeof(*ss->pending), pending_cmp);
	while (n < ss->npending && ss->pending[n].ev.timestamp < until) {
		if (add(ss, &ss->pending[n].ev, ss->pending[n].cpu))
			return -1;
		n++;
	}
	memmove(ss->pending, ss->pending + n, (ss->npending - n) * sizeof(*ss->pending));
	ss->npending -= n;
	return 0;
}

static int stat_sync(struct sink *sk, unsigned long long before_ns)
{
	struct stat_sink *ss = stat_of(sk);

	if (!ss->npending || before_ns < SYNC_MARGIN_NS)
		return 0;
	return release(ss, before_ns - SYNC_MARGIN_NS);
}

static int stat_end(struct sink *sk, const struct sink_losses *lost)
{
	struct stat_sink *ss = stat_of(sk);

	kstat_set_lost(ss->ks, lost->events);
	return release(ss, ~0ULL);
}

static void name_callsite(void *ctx, uint64_t addr, bool with_offset, char *buf, size_t size)
{
	struct stat_sink *ss = ctx;
	const struct ksym *sym = ss->ksyms ? ksyms_find(ss->ksyms, addr) : NULL;

	if (!sym)
		snprintf(buf, size, "%#llx", (unsigned long long)addr);
	else if (with_offset)
		snprintf(buf, size, "%s+%llx", sym->name, (unsigned long long)(addr - sym->addr));
	else
		snprintf(buf, size, "%s", sym->name);
}

static void name_gfp(void *ctx, unsigned int flags, char *buf, size_t size)
{
	struct stat_sink *ss = ctx;

	gfp_format(ss->gfp, flags, buf, size);
}

static int stat_report(struct sink *sk, const struct sink_losses *lost)
{
	struct stat_sink *ss = stat_of(sk);
	struct kstat_names names = { name_callsite, name_gfp, ss };

	kstat_set_lost(ss->ks, lost->events);
	if (ss->reports++)
		fputc('\n', ss->out);
	kstat_print(ss->ks, &ss->opts, &names, ss->out);
	fflush(ss->out);
	if (ferror(ss->out)) {
		if (errno == EPIPE)
			return SINK_GONE;
		return fail(ss, "--stat: writing the tables failed");
	}
	return 0;
}

static void stat_destroy(struct sink *sk)
{
	struct stat_sink *ss = stat_of(sk);

	kstat_free(ss->ks);
	gfp_names_free(ss->gfp);
	free(ss->pending);
	free(ss);
}

static const struct sink_ops stat_sink_ops = {
	.begin = stat_begin,
	.record = stat_record,
	.end = stat_end,
	.sync = stat_sync,
	.report = stat_report,
	.destroy = stat_destroy,
};

/* /sys/devices/system/cpu/cpuN/nodeM: the node of each CPU (0 when not said). */
static int *read_cpu_nodes(int *ncpus)
{
	int n = 0, cap = 64, *nodes = calloc(cap, sizeof(int));
	char path[128];

	if (!nodes)
		return NULL;
	for (;; n++) {
		DIR *d;
		struct dirent *de;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", n);
		d = opendir(path);
		if (!d)
			break;
		if (n == cap) {
			int *grown = realloc(nodes, 2 * cap * sizeof(int));

			if (!grown) {
				closedir(d);
				break;
			}
			nodes = grown;
			cap *= 2;
		}
		nodes[n] = 0;
		while ((de = readdir(d)))
			if (!strncmp(de->d_name, "node", 4) && de->d_name[4] >= '0' &&
			    de->d_name[4] <= '9')
				nodes[n] = atoi(de->d_name + 4);
		closedir(d);
	}
	*ncpus = n;
	return nodes;
}

struct sink *stat_sink_new(FILE *out, const struct env *env, struct ksyms *ksyms,
			   const struct btf *vmlinux, bool reorder, char *err, size_t err_size)
{
	struct stat_sink *ss = calloc(1, sizeof(*ss));
	int ncpus = 0, *nodes = read_cpu_nodes(&ncpus);

	if (ss) {
		ss->ks = kstat_new(nodes, ncpus);
		ss->gfp = gfp_names_new(vmlinux);
	}
	free(nodes);
	if (!ss || !ss->ks || !ss->gfp) {
		if (ss)
			stat_destroy(&ss->sink);
		snprintf(err, err_size, "--stat: out of memory");
		return NULL;
	}
	ss->sink.ops = &stat_sink_ops;
	ss->out = out;
	ss->opts = env->stat_opts;
	ss->ksyms = ksyms;
	ss->reorder = reorder;
	return &ss->sink;
}
