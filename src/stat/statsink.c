// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The --stat sink: records are decoded and given to kstat.c in time order.
 * Live, each CPU's ring is in order but the rings are read one after the
 * other, so an allocation on one CPU can arrive after its free on another:
 * records wait (reorder.h) until the stream says that everything before
 * some time has been read (sync), and are then counted in time order.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kstat.h"
#include "bpf/kmemtrace.h"
#include "names/gfp.h"
#include "names/addrnames.h"
#include "names/alloctag.h"
#include "names/ksyms.h"
#include "names/usyms.h"
#include "recording/cachetab.h"
#include "recording/record.h"
#include "recording/reorder.h"
#include "recording/sink.h"
#include "env.h"
#include "statsink.h"
#include "recording/tasktab.h"

struct stat_sink {
	struct sink sink;
	FILE *out;
	struct kstat *ks;
	struct kstat_opts opts;
	struct ksyms *ksyms;
	struct usyms *usyms;
	unsigned int stack_depth; /* addr_names' depth */
	struct gfp_names *gfp;
	struct reorder *held; /* NULL: records are taken as they come */
	struct cachetab *caches;
	struct tasktab *tasks; /* both applied in time order */
	struct kmt_event decoded; /* the record being counted */
	struct kmt_order_count order;
	unsigned long long reports;
	bool json; /* --json: one object per report */
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

static int count(struct stat_sink *ss, const struct kmt_event *ev, int cpu)
{
	return kstat_add(ss->ks, ev, ev->has_time ? (int)ev->cpu : cpu) ?
		       fail(ss, "--stat: out of memory") : 0;
}

/* A record in the order it is counted in: the records that describe name
 * the caches and tids. */
static int add(struct stat_sink *ss, struct kmt_event *ev, int cpu)
{
	if (!cachetab_apply(ss->caches, ev) || !tasktab_apply(ss->tasks, ev))
		return 0;
	kmt_order_note(&ss->order, ev);
	return count(ss, ev, cpu);
}

static int decode_and_add(void *ctx, const void *data, size_t size, int cpu)
{
	struct stat_sink *ss = ctx;

	/* Checked when it came (when held), so this does not fail then. */
	if (kmt_decode(data, size, cpu, &ss->decoded) != KMT_OK) {
		ss->sink.undecodable++;
		return 0;
	}
	return add(ss, &ss->decoded, cpu);
}

/* What reorder.h returned: add()'s, or its own lack of memory. */
static int held_status(struct stat_sink *ss, int ret)
{
	return ret == REORDER_NOMEM ? fail(ss, "--stat: out of memory") : ret;
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
	struct kmt_glance g;
	int ret;

	if (ev)
		return count(ss, ev, cpu); /* a replay's: in order, names resolved */
	if (!ss->held)
		return decode_and_add(ss, data, size, cpu);
	if (kmt_glance(data, size, &g) != KMT_OK) {
		sk->undecodable++;
		return 0;
	}
	/* A cache record as it comes, as the text's time order takes it
	 * (ordersink.c). */
	if (!g.has_time || g.event_id == KMT_EVENT_CACHE)
		return decode_and_add(ss, data, size, cpu);
	ret = reorder_hold(ss->held, cpu, data, g.event_size, g.timestamp);
	return ret == REORDER_KEPT ? SINK_HELD : held_status(ss, ret);
}

static int stat_sync(struct sink *sk, unsigned long long before_ns)
{
	struct stat_sink *ss = stat_of(sk);

	return ss->held ? held_status(ss, reorder_sync(ss->held, before_ns)) : 0;
}

static int stat_end(struct sink *sk, const struct sink_losses *lost)
{
	struct stat_sink *ss = stat_of(sk);
	int ret;

	kstat_set_lost(ss->ks, lost->events);
	if (!ss->held)
		return 0;
	ret = held_status(ss, reorder_flush(ss->held));
	sk->out_of_order = ss->order.late;
	return ret;
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

static unsigned int kstack_start(void *ctx, const uint64_t *ips, unsigned int n)
{
	return alloctag_stack_start(((struct stat_sink *)ctx)->ksyms, ips, n);
}

/* As the text names a user frame, or with_object false the function (or
 * the object) alone: uframe_format()'s. */
static void name_uframe(void *ctx, int pid, uint64_t addr, bool with_object, char *buf,
			size_t size)
{
	struct stat_sink *ss = ctx;
	struct uframe f = { 0 };

	if (ss->usyms)
		usyms_name(ss->usyms, pid, addr, &f);
	uframe_format(&f, addr, !with_object, buf, size);
}

static void name_gfp(void *ctx, unsigned int flags, char *buf, size_t size)
{
	struct stat_sink *ss = ctx;

	gfp_format(ss->gfp, flags, buf, size);
}

static int stat_report(struct sink *sk, const struct sink_losses *lost)
{
	struct stat_sink *ss = stat_of(sk);
	struct kstat_names names = { name_callsite, name_gfp, ss, kstack_start, name_uframe,
				     ss->stack_depth };

	kstat_set_lost(ss->ks, lost->events);
	if (ss->json) {
		kstat_print_json(ss->ks, &ss->opts, &names, ss->out);
	} else {
		if (ss->reports++)
			fputc('\n', ss->out);
		kstat_print(ss->ks, &ss->opts, &names, ss->out);
	}
	fflush(ss->out);
	if (ferror(ss->out)) {
		if (errno == EPIPE)
			return SINK_GONE;
		return fail(ss, "--stat: writing the tables failed");
	}
	return 0;
}

struct kstat *stat_sink_tables(struct sink *sk)
{
	return stat_of(sk)->ks;
}

static void stat_destroy(struct sink *sk)
{
	struct stat_sink *ss = stat_of(sk);

	kstat_free(ss->ks);
	gfp_names_free(ss->gfp);
	reorder_free(ss->held);
	cachetab_free(ss->caches);
	tasktab_free(ss->tasks);
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

/* Grows *arr (of *cap ints, new entries -1) to hold index i. */
static int reserve_index(int **arr, size_t *cap, size_t i)
{
	size_t n = *cap ? *cap : 64;
	int *grown;

	if (i < *cap)
		return 0;
	while (n <= i)
		n *= 2;
	grown = realloc(*arr, n * sizeof(int));
	if (!grown)
		return -1;
	for (size_t k = *cap; k < n; k++)
		grown[k] = -1;
	*arr = grown;
	*cap = n;
	return 0;
}

/* Entries "<prefix>N" of dir, calling fn(ctx, N) for each. */
static void each_numbered(const char *dir, const char *prefix, void (*fn)(void *, long),
			  void *ctx)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t len = strlen(prefix);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long n;

		if (strncmp(de->d_name, prefix, len) || de->d_name[len] < '0' ||
		    de->d_name[len] > '9')
			continue;
		n = strtol(de->d_name + len, &end, 10);
		if (!*end && n >= 0)
			fn(ctx, n);
	}
	closedir(d);
}

struct topo_read {
	int *cpus, *blocks;
	size_t ncpus_cap, nblocks_cap, ncpus, nblocks;
	int node;
	bool failed;
};

static void note_cpu(void *ctx, long cpu)
{
	struct topo_read *t = ctx;

	if (cpu > 65535 || reserve_index(&t->cpus, &t->ncpus_cap, cpu)) {
		t->failed = true;
		return;
	}
	t->cpus[cpu] = t->node;
	if ((size_t)cpu + 1 > t->ncpus)
		t->ncpus = cpu + 1;
}

static void note_block(void *ctx, long block)
{
	struct topo_read *t = ctx;

	if (block > (1L << 24) || reserve_index(&t->blocks, &t->nblocks_cap, block)) {
		t->failed = true;
		return;
	}
	t->blocks[block] = t->node;
	if ((size_t)block + 1 > t->nblocks)
		t->nblocks = block + 1;
}

static void read_node(void *ctx, long node)
{
	struct topo_read *t = ctx;
	char dir[96];

	t->node = (int)node;
	snprintf(dir, sizeof(dir), "/sys/devices/system/node/node%ld", node);
	each_numbered(dir, "cpu", note_cpu, t);
	each_numbered(dir, "memory", note_block, t);
}

/*
 * This machine's NUMA layout from sysfs: /sys/devices/system/node/nodeN
 * holds cpuM and memoryM (memory blocks of block_size_bytes, in hex).
 * Without it (no CONFIG_NUMA): one node, the topology left empty.
 */
static void read_topology(struct topo_read *t, struct kstat_topology *topo)
{
	unsigned long long block_bytes = 0;
	FILE *f = fopen("/sys/devices/system/memory/block_size_bytes", "r");
	long page = sysconf(_SC_PAGESIZE);

	memset(t, 0, sizeof(*t));
	memset(topo, 0, sizeof(*topo));
	if (f) {
		if (fscanf(f, "%llx", &block_bytes) != 1)
			block_bytes = 0;
		fclose(f);
	}
	each_numbered("/sys/devices/system/node", "node", read_node, t);
	if (t->failed)
		return;
	for (size_t i = 0; i < t->ncpus; i++)
		if (t->cpus[i] < 0)
			t->cpus[i] = 0;
	topo->node_of_cpu = t->cpus;
	topo->ncpus = (int)t->ncpus;
	if (page > 0 && block_bytes >= (unsigned long long)page) {
		topo->node_of_block = t->blocks;
		topo->nblocks = t->nblocks;
		topo->pages_per_block = block_bytes / page;
	}
}

struct sink *stat_sink_new(FILE *out, const struct env *env, const struct addr_names *names,
			   const struct gfp_names *gfp, int rings, size_t held_cap, char *err,
			   size_t err_size)
{
	struct stat_sink *ss = calloc(1, sizeof(*ss));
	struct kstat_topology topo;
	struct topo_read t;

	read_topology(&t, &topo);
	if (ss) {
		ss->ks = kstat_new(&topo);
		ss->gfp = gfp_names_copy(gfp);
		ss->caches = cachetab_new();
		ss->tasks = tasktab_new();
		if (rings > 0)
			ss->held = reorder_new(held_cap ? held_cap : REORDER_CAP, rings,
					       decode_and_add, ss);
		if (ss->held)
			reorder_set_lender(ss->held, &ss->sink.lender);
	}
	free(t.cpus);
	free(t.blocks);
	if (!ss || !ss->ks || !ss->gfp || !ss->caches || !ss->tasks || (rings > 0 && !ss->held)) {
		if (ss)
			stat_destroy(&ss->sink);
		snprintf(err, err_size, "--stat: out of memory");
		return NULL;
	}
	ss->sink.ops = &stat_sink_ops;
	ss->out = out;
	ss->opts = env->stat_opts;
	ss->json = env->json;
	ss->ksyms = names->ksyms;
	ss->usyms = names->usyms;
	ss->stack_depth = names->depth;
	return &ss->sink;
}
