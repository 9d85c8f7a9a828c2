// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A run against its memory cgroup's limit: see memfit.h. */
#include "memfit.h"

#include <limits.h>
#include <stdio.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memcg.h"

/*
 * Besides the maps: the verifier's working memory while it checks the
 * programs (its states, charged to the cgroup since 5.11), freed before
 * the modes make their rings, and after that the rings and what kmemsnoop
 * itself allocates once running (the readers' tables and buffers).  The
 * need is the maps and the larger of the two.  Measured on 6.18 x86-64
 * (cgroup v1) as the peak usage less the usage at the check: 17 MiB for
 * a run of 16 MiB of rings (-b 8M), 131 MiB with -b 64M, 16 MiB for
 * --hist, 87 MiB for --allocinfo (67 MiB of maps), 42 MiB for --stat.
 */
#define LOADING_BYTES (16ULL << 20)
#define RUNNING_BYTES (4ULL << 20)
/* Before 5.11 only kmemsnoop's own memory counts. */
#define PROCESS_BYTES (8ULL << 20)
/* What a limit must leave at the start: less than any run takes on the
 * kernels tested (the BTF and symbols read before loading alone take
 * 20 MiB on 6.18, 35 MiB on 7.2), so that no run that would fit is
 * refused; a limit between this and what the run takes before loading
 * still meets the OOM killer. */
#define START_BYTES (24ULL << 20)

/* A hash map's element: the kernel's htab_elem header (list node, hash,
 * padding) besides the key and value, each rounded up to 8 bytes. */
#define HASH_ELEM_OVERHEAD 48

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~7ULL;
}

static bool per_cpu_values(enum bpf_map_type type)
{
	return type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH;
}

static uint64_t map_bytes(const struct bpf_map *map, int ncpus)
{
	enum bpf_map_type type = bpf_map__type(map);
	uint64_t entries = bpf_map__max_entries(map);
	uint64_t key = round8(bpf_map__key_size(map));
	uint64_t value = round8(bpf_map__value_size(map));

	if (per_cpu_values(type))
		value *= (uint64_t)(ncpus > 0 ? ncpus : 1);
	switch (type) {
	case BPF_MAP_TYPE_RINGBUF:
		return entries;
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
		/* Allocated as used with BPF_F_NO_PREALLOC: count it full anyway. */
		return entries * (HASH_ELEM_OVERHEAD + key + (per_cpu_values(type) ? 8 : value)) +
		       (per_cpu_values(type) ? entries * value : 0);
	default:
		return entries * value;
	}
}

uint64_t memfit_maps_bytes(const struct bpf_object *obj, int ncpus)
{
	const struct bpf_map *map;
	uint64_t sum = 0;

	bpf_object__for_each_map(map, obj) {
		if (bpf_map__autocreate(map))
			sum += map_bytes(map, ncpus);
	}
	return sum;
}

/* The kernels that charge BPF memory to memory cgroups (5.11) are those
 * with bpf_ktime_get_coarse_ns (5.11 too): libbpf tells them apart so. */
static bool bpf_charged_to_memcg(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_SOCKET_FILTER, BPF_FUNC_ktime_get_coarse_ns,
				       NULL) > 0;
}

static unsigned long long mib(uint64_t bytes)
{
	return (bytes + (1ULL << 20) - 1) >> 20;
}

int memfit_check_start(char *err, size_t err_size)
{
	unsigned long long limit, used, room;
	char file[PATH_MAX + 32];

	if (memcg_limit(&limit, &used, file, sizeof(file)))
		return 0;
	room = used < limit ? limit - used : 0;
	if (room >= START_BYTES)
		return 0;
	snprintf(err, err_size, "the memory cgroup limit (%llu MiB, %s) leaves %llu MiB, and "
		 "kmemsnoop needs at least %llu MiB to start (the kernel's BTF and symbols, its "
		 "BPF programs): raise the limit", limit >> 20, file, room >> 20, mib(START_BYTES));
	return -1;
}

/* Besides the maps: the larger of loading and running (LOADING_BYTES). */
static uint64_t beyond_maps(bool charged, uint64_t other_bytes)
{
	if (!charged)
		return PROCESS_BYTES;
	return other_bytes + RUNNING_BYTES > LOADING_BYTES ? other_bytes + RUNNING_BYTES :
							     LOADING_BYTES;
}

int memfit_check(const struct bpf_object *obj, int ncpus, uint64_t other_bytes, bool verbose,
		 char *err, size_t err_size)
{
	unsigned long long limit, used;
	char file[PATH_MAX + 32];
	uint64_t maps = 0, beyond, room;
	bool charged;

	if (memcg_limit(&limit, &used, file, sizeof(file)))
		return 0;
	room = used < limit ? limit - used : 0;
	charged = bpf_charged_to_memcg();
	if (charged)
		maps = memfit_maps_bytes(obj, ncpus);
	beyond = beyond_maps(charged, other_bytes);
	if (verbose)
		fprintf(stderr, "kmemsnoop: memory cgroup limit %llu MiB (%s), %llu MiB left; this run "
				"needs about %llu MiB: BPF maps %llu MiB, then %llu MiB (loading the "
				"programs, or %llu MiB of rings and the readers)\n", limit >> 20, file,
			(unsigned long long)room >> 20, mib(maps + beyond), mib(maps), mib(beyond),
			mib(other_bytes));
	if (maps + beyond <= room)
		return 0;
	snprintf(err, err_size, "the memory cgroup limit (%llu MiB, %s) leaves %llu MiB, and this run "
		 "needs about %llu MiB (BPF maps %llu MiB, then %llu MiB to load the programs or for "
		 "the rings): raise the limit%s", limit >> 20, file, (unsigned long long)room >> 20,
		 mib(maps + beyond), mib(maps), mib(beyond),
		 other_bytes ? ", or give smaller rings (-b)" : "");
	return -1;
}
