// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's slab tables counted in BPF maps (src/bpf/stat.bpf.h) instead of
 * streamed: the maps are sized before load, and read at each INTERVAL and
 * at the end, the CPUs' shares summed, into the stat sink's tables
 * (kstat.c), which the sink prints as it prints the stream's.
 *
 * Which way a run goes is env_stat_in_bpf()'s rule: what needs every
 * event (the per-pointer table, the page tables, a recording) streams.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kstat.h"
#include "statsink.h"
#include "bpf/kmemsnoop.h"
#include "names/addrnames.h"
#include "names/gfp.h"
#include "recording/sink.h"
#include "env.h"
#include "kmemsnoop.skel.h"
#include "mode.h"
#include "session.h"

/* Call site x cache x size keys: a busy kernel has a few thousand. */
#define STAT_MAX_SITES 8192
#define STAT_MAX_PROCS 8192
/* stat_sites is per CPU and preallocated: at most this much for it. */
#define STAT_SITES_BUDGET (256ULL << 20)
#define STAT_MIN_SITES 512

struct statbpf {
	struct mode mode;
	struct sink *sink;
	bool output_gone; /* stdout's reader went away (EPIPE) */
};

static struct statbpf *statbpf_of(struct mode *m)
{
	return (struct statbpf *)m;
}

static bool statbpf_selected(const struct env *env)
{
	return env_stat_in_bpf(env) && !env->hist && !env->allocinfo && !env->listen;
}

static struct mode *statbpf_create(struct session *s)
{
	struct statbpf *sb = calloc(1, sizeof(*sb));
	struct gfp_names *gfp = gfp_names_new(s->vmlinux);
	char err[sizeof(s->err)] = "out of memory";

	if (!sb || !gfp) {
		session_fail(s, "out of memory");
		free(sb);
		gfp_names_free(gfp);
		return NULL;
	}
	sb->sink = stat_sink_new(stdout, s->env, &(struct addr_names){ session_ksyms(s), NULL, 0 },
				 gfp, 0, 0, err, sizeof(err));
	gfp_names_free(gfp); /* the sink keeps a copy */
	if (!sb->sink) {
		session_fail(s, "%s", err);
		free(sb);
		return NULL;
	}
	sb->mode.interval = s->env->interval;
	return &sb->mode;
}

static void statbpf_wants(const struct mode *m, struct bpf_wants *w)
{
	const struct env *env = m->session->env;

	/* The frees of the classes traced, filtered as the stream's: the
	 * pointer map says which allocations passed the size filter. */
	w->alloc_classes |= env->events & KSTAT_CLASSES;
	w->free_classes |= env->events & KSTAT_CLASSES;
	w->linear_map = true;
}

static __u32 site_entries(int ncpus)
{
	unsigned long long fit = STAT_SITES_BUDGET /
				 (sizeof(struct kmt_stat_site) * (unsigned long long)ncpus);

	return fit > STAT_MAX_SITES ? STAT_MAX_SITES : fit < STAT_MIN_SITES ? STAT_MIN_SITES : fit;
}

/*
 * With the linear map found and memory blocks of a power-of-two size
 * (always, in sysfs), the BPF side finds each object's node by its
 * block; else only the nodes asked for are counted.
 */
static void configure_nodes(struct statbpf *sb, struct kmemsnoop_bpf *skel)
{
	const struct session *s = sb->mode.session;
	struct kstat *ks = stat_sink_tables(sb->sink);
	unsigned long long block_bytes;
	struct kstat_topology topo;
	long page = sysconf(_SC_PAGESIZE);
	bool usable;

	kstat_topology(ks, &topo);
	block_bytes = topo.pages_per_block * page;
	usable = s->linear_map && topo.nblocks && topo.nblocks <= UINT32_MAX && page > 0 &&
		 !(block_bytes & (block_bytes - 1));
	kstat_set_linear_map(ks, usable ? s->linear_map : 0, page);
	if (!usable)
		return;
	skel->rodata->stat_linear_map = s->linear_map;
	skel->rodata->stat_block_shift = __builtin_ctzll(block_bytes);
	skel->rodata->stat_blocks = topo.nblocks;
	bpf_map__set_max_entries(skel->maps.stat_block_node, topo.nblocks);
}

static int fill_nodes(struct statbpf *sb)
{
	const struct session *s = sb->mode.session;
	struct kstat_topology topo;
	int fd = bpf_map__fd(s->skel->maps.stat_block_node);

	if (!s->skel->rodata->stat_linear_map)
		return 0;
	kstat_topology(stat_sink_tables(sb->sink), &topo);
	for (__u32 block = 0; block < topo.nblocks; block++) {
		__s32 node_plus_one = topo.node_of_block[block] + 1;

		if (node_plus_one <= 0)
			continue; /* no such block: 0 already */
		if (bpf_map_update_elem(fd, &block, &node_plus_one, BPF_ANY))
			return session_fail(sb->mode.session, "filling the map of memory "
							      "blocks' nodes: %s", strerror(errno));
	}
	return 0;
}

static int statbpf_loaded(struct mode *m)
{
	return fill_nodes(statbpf_of(m));
}

static void statbpf_configure(struct mode *m, struct kmemsnoop_bpf *skel)
{
	const struct session *s = m->session;

	skel->rodata->do_stat = true;
	skel->rodata->filtered_free_classes |= s->env->events & KSTAT_CLASSES;
	bpf_map__set_max_entries(skel->maps.stat_ptrs, s->env->ai_max_ptrs);
	bpf_map__set_max_entries(skel->maps.stat_sites, site_entries(s->ncpus));
	bpf_map__set_max_entries(skel->maps.stat_cache_names, STAT_MAX_SITES);
	bpf_map__set_max_entries(skel->maps.stat_procs, STAT_MAX_PROCS);
	configure_nodes(statbpf_of(m), skel);
}

/* --- reading the maps --------------------------------------------------------- */

static void sum_sites(const struct kmt_stat_site *per_cpu, int ncpus, struct kmt_stat_site *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (int cpu = 0; cpu < ncpus; cpu++) {
		const __u64 *src = (const __u64 *)&per_cpu[cpu];
		__u64 *dst = (__u64 *)sum;

		for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
			dst[i] += src[i];
	}
}

static void site_cache_name(const struct kmemsnoop_bpf *skel, const struct kmt_stat_key *key,
			    char *buf, size_t size)
{
	struct kmt_stat_name name = { { 0 } };

	if (key->cache)
		bpf_map_lookup_elem(bpf_map__fd(skel->maps.stat_cache_names), &key->cache, &name);
	name.name[sizeof(name.name) - 1] = 0;
	kstat_cache_name(key->type, name.name, key->bytes_alloc, buf, size);
}

static int add_site(struct kstat *ks, const struct kmemsnoop_bpf *skel,
		    const struct kmt_stat_key *key, const struct kmt_stat_site *v)
{
	char cache[KMT_CACHE_NAME_LEN + 16];
	uint64_t life[KMT_STAT_LIFE];
	uint64_t ended = v->frees + v->ended, ended_bytes = v->freed_bytes + v->ended_bytes;
	struct kstat_slab_agg a = {
		.call_site = key->call_site, .cache = cache, .hit = v->hit,
		.bytes_req = v->bytes_req, .bytes_alloc = v->bytes_alloc, .pingpong = v->pingpong,
		.frees = v->frees, .freed_bytes = v->freed_bytes, .life = life,
		/* Counters of other CPUs read a moment apart: never below 0. */
		.alive = v->hit > ended ? v->hit - ended : 0,
		.alive_bytes = v->bytes_alloc > ended_bytes ? v->bytes_alloc - ended_bytes : 0,
	};

	for (int i = 0; i < KMT_STAT_LIFE; i++)
		life[i] = v->life[i];
	site_cache_name(skel, key, cache, sizeof(cache));
	return kstat_add_slab_agg(ks, &a);
}

static int read_sites(struct statbpf *sb, struct kstat *ks)
{
	const struct session *s = sb->mode.session;
	int fd = bpf_map__fd(s->skel->maps.stat_sites);
	struct kmt_stat_site *per_cpu = calloc(s->ncpus, sizeof(*per_cpu)), sum;
	struct kmt_stat_key key, *prev = NULL;
	int err = 0;

	if (!per_cpu)
		return -1;
	while (!err && !bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, per_cpu))
			continue;
		sum_sites(per_cpu, s->ncpus, &sum);
		if (sum.hit)
			err = add_site(ks, s->skel, &key, &sum);
	}
	free(per_cpu);
	return err;
}

static int read_procs(struct statbpf *sb, struct kstat *ks)
{
	const struct session *s = sb->mode.session;
	int fd = bpf_map__fd(s->skel->maps.stat_procs);
	struct kmt_stat_proc *per_cpu = calloc(s->ncpus, sizeof(*per_cpu));
	__u32 pid, *prev = NULL;
	int err = 0;

	if (!per_cpu)
		return -1;
	while (!err && !bpf_map_get_next_key(fd, prev, &pid)) {
		struct kstat_proc_agg a = { .pid = pid };
		char comm[KMT_COMM_LEN + 1] = "";

		prev = &pid;
		if (bpf_map_lookup_elem(fd, &pid, per_cpu))
			continue;
		for (int cpu = 0; cpu < s->ncpus; cpu++) {
			a.allocs += per_cpu[cpu].allocs;
			a.frees += per_cpu[cpu].frees;
			a.bytes_req += per_cpu[cpu].bytes_req;
			a.bytes_alloc += per_cpu[cpu].bytes_alloc;
			if (!comm[0] && per_cpu[cpu].comm[0])
				memcpy(comm, per_cpu[cpu].comm, KMT_COMM_LEN);
		}
		a.comm = comm;
		err = kstat_add_proc_agg(ks, &a);
	}
	free(per_cpu);
	return err;
}

/* The per-CPU counters, summed; and the allocations that asked for
 * another node than their CPU's, from each CPU's requests by node. */
static int read_misc(struct statbpf *sb, struct kstat *ks, struct kmt_stat_misc *sum)
{
	const struct session *s = sb->mode.session;
	struct kmt_stat_misc *per_cpu = calloc(s->ncpus, sizeof(*per_cpu));
	uint64_t cross = 0;
	__u32 zero = 0;

	memset(sum, 0, sizeof(*sum));
	if (!per_cpu)
		return -1;
	if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.stat_misc), &zero, per_cpu)) {
		free(per_cpu);
		return 0;
	}
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		const __u64 *src = (const __u64 *)&per_cpu[cpu];
		__u64 *dst = (__u64 *)sum;
		int home = kstat_node_of_cpu(ks, cpu);

		for (size_t i = 0; i < sizeof(*sum) / sizeof(__u64); i++)
			dst[i] += src[i];
		for (int node = 0; node < KMT_STAT_NODES; node++)
			if (node != home)
				cross += per_cpu[cpu].node_allocs[node];
		cross += per_cpu[cpu].far_node_allocs;
	}
	kstat_add_cross_node(ks, cross);
	kstat_add_slab_nodes(ks, sum->slab_located, sum->slab_remote);
	free(per_cpu);
	return 0;
}

/* The tables as the maps hold them now, in the sink's kstat. */
static int read_all(struct statbpf *sb, struct kmt_stat_misc *misc)
{
	struct kstat *ks = stat_sink_tables(sb->sink);

	kstat_clear(ks);
	errno = 0;
	if (read_sites(sb, ks) || read_procs(sb, ks) || read_misc(sb, ks, misc))
		return session_fail(sb->mode.session, "--stat: reading the maps: %s",
				    errno ? strerror(errno) : "out of memory");
	return 0;
}

static int report(struct statbpf *sb)
{
	struct kmt_stat_misc misc;
	struct sink_losses lost = { .events = 0 };
	int ret;

	if (read_all(sb, &misc))
		return -1;
	lost.events = misc.sites_full;
	ret = sb->sink->ops->report(sb->sink, &lost);
	if (ret == SINK_GONE) {
		sb->output_gone = true;
		return MODE_END;
	}
	return ret ? session_fail(sb->mode.session, "%s", sb->sink->err) : MODE_OK;
}

static int statbpf_start(struct mode *m)
{
	(void)m;
	fprintf(stderr, "kmemsnoop: --stat counts in BPF maps (--alloc, --page or --stat-stream "
			"stream every event instead)\n");
	return 0;
}

static int statbpf_tick(struct mode *m)
{
	struct statbpf *sb = statbpf_of(m);

	if (sb->output_gone)
		return MODE_END;
	return report(sb);
}

/* What was counted and what could not be, on stderr. */
static int print_summary(struct statbpf *sb)
{
	unsigned long long misses = session_missed(sb->mode.session);
	struct kstat_totals t;
	struct kmt_stat_misc m;

	if (read_all(sb, &m))
		return -1;
	kstat_totals(stat_sink_tables(sb->sink), &t);
	fprintf(stderr, "kmemsnoop: %llu allocations counted in BPF maps, %llu not counted "
			"(call site map full), %llu not followed to their free (pointer map full: "
			"--max-ptrs)\n", (unsigned long long)t.nr_allocs,
		(unsigned long long)m.sites_full, (unsigned long long)m.ptrs_full);
	fprintf(stderr, "kmemsnoop: frees of memory not allocated in the session, or not by "
			"what the filters select (ignored): %llu\n",
		(unsigned long long)m.untracked_frees);
	if (m.replaced)
		fprintf(stderr, "kmemsnoop: %llu allocations at a pointer whose free was not seen\n",
			(unsigned long long)m.replaced);
	if (m.procs_full)
		fprintf(stderr, "kmemsnoop: %llu events missing from the process table (full)\n",
			(unsigned long long)m.procs_full);
	if (misses)
		fprintf(stderr, SESSION_MISSED_FMT, misses);
	return 0;
}

static int statbpf_finish(struct mode *m, bool final)
{
	struct statbpf *sb = statbpf_of(m);
	int ret = 0;

	/* After COUNT intervals the last tick was the last output. */
	if (final && !sb->output_gone)
		ret = report(sb) < 0 ? -1 : 0;
	if (print_summary(sb))
		ret = -1;
	return ret;
}

static void statbpf_destroy(struct mode *m)
{
	struct statbpf *sb = statbpf_of(m);

	if (sb->sink)
		sb->sink->ops->destroy(sb->sink);
	free(sb);
}

const struct mode_ops statbpf_mode = {
	.name = "stat",
	.selected = statbpf_selected,
	.create = statbpf_create,
	.wants = statbpf_wants,
	.configure = statbpf_configure,
	.loaded = statbpf_loaded,
	.start = statbpf_start,
	.tick = statbpf_tick,
	.finish = statbpf_finish,
	.destroy = statbpf_destroy,
};
