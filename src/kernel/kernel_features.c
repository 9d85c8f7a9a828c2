// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Kernel differences, detected from BTF rather than version numbers: every
 * tracepoint has a typedef btf_trace_<name> whose function prototype lists
 * the tracepoint's arguments (after a leading void *).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "kernel_features.h"
#include "sources.h"
#include "bpf/kmemsnoop.h"

/*
 * The btf_trace_<name> typedef of every event source (-1: none), in one
 * pass over the kernel's types: some 150,000, and a lookup by name is a
 * pass of its own (two dozen of them were a tenth of a start's user time).
 */
static void find_tracepoints(const struct btf *btf, int ids[SRC_COUNT])
{
	static const char prefix[] = "btf_trace_";
	int n = (int)btf__type_cnt(btf);

	for (int src = 0; src < SRC_COUNT; src++)
		ids[src] = -1;
	for (int id = 1; id < n; id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name;

		if (!btf_is_typedef(t))
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		if (!name || strncmp(name, prefix, sizeof(prefix) - 1))
			continue;
		name += sizeof(prefix) - 1;
		for (int src = 0; src < SRC_COUNT; src++)
			if (ids[src] < 0 && !strcmp(name, event_sources[src].name))
				ids[src] = id;
	}
}

/* The prototype behind a btf_trace_<name> typedef, or NULL (id < 0: this
 * kernel has no such tracepoint). */
static const struct btf_type *tp_proto(const struct btf *btf, int id)
{
	const struct btf_type *t;

	if (id < 0)
		return NULL;
	t = btf__type_by_id(btf, id);
	t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_ptr(t))
		return NULL;
	t = btf__type_by_id(btf, t->type);
	return t && btf_is_func_proto(t) ? t : NULL;
}

/* Arguments of the tracepoint itself (the prototype's first is the ctx). */
static int tp_nargs(const struct btf_type *proto)
{
	return btf_vlen(proto) - 1;
}

static const struct btf_type *tp_arg_type(const struct btf *btf, const struct btf_type *proto,
					  int arg)
{
	const struct btf_param *params = btf_params(proto);

	return btf__type_by_id(btf, btf__resolve_type(btf, params[arg + 1].type));
}

/* Is argument arg a pointer to a struct (e.g. struct kmem_cache *)? */
static bool arg_is_struct_ptr(const struct btf *btf, const struct btf_type *proto, int arg)
{
	const struct btf_type *t = tp_arg_type(btf, proto, arg);
	int id;

	if (!t || !btf_is_ptr(t))
		return false;
	id = btf__resolve_type(btf, t->type);
	t = id < 0 ? NULL : btf__type_by_id(btf, id);
	return t && btf_is_struct(t);
}

static bool arg_is_ptr(const struct btf *btf, const struct btf_type *proto, int arg)
{
	const struct btf_type *t = tp_arg_type(btf, proto, arg);

	return t && btf_is_ptr(t);
}

static int detect_kmalloc(const struct btf *btf, const int *ids, struct kernel_features *kf,
			  char *err, size_t err_size)
{
	const struct btf_type *p = tp_proto(btf, ids[SRC_KMALLOC]);

	if (!p)
		return 0;
	switch (tp_nargs(p)) {
	case 5:
		kf->kmalloc_args = KMT_KMALLOC_NO_NODE;
		return 0;
	case 6:
		kf->kmalloc_args = KMT_KMALLOC_NODE;
		return 0;
	}
	snprintf(err, err_size, "unknown kmalloc tracepoint layout (%d arguments)", tp_nargs(p));
	return -1;
}

static int detect_cache_alloc(const struct btf *btf, const int *ids, struct kernel_features *kf,
			      char *err, size_t err_size)
{
	const struct btf_type *p = tp_proto(btf, ids[SRC_KMEM_CACHE_ALLOC]);

	if (!p)
		return 0;
	if (tp_nargs(p) == 5 && arg_is_struct_ptr(btf, p, 2)) {
		kf->cache_alloc_args = KMT_CACHE_ALLOC_CACHE;
		return 0;
	}
	if (tp_nargs(p) == 5 && !arg_is_ptr(btf, p, 2)) {
		kf->cache_alloc_args = KMT_CACHE_ALLOC_SIZES;
		return 0;
	}
	snprintf(err, err_size, "unknown kmem_cache_alloc tracepoint layout");
	return -1;
}

static int detect_cache_free(const struct btf *btf, const int *ids, struct kernel_features *kf,
			     char *err, size_t err_size)
{
	const struct btf_type *p = tp_proto(btf, ids[SRC_KMEM_CACHE_FREE]);

	if (!p)
		return 0;
	if (tp_nargs(p) == 2) {
		kf->cache_free_args = KMT_CACHE_FREE_PLAIN;
		return 0;
	}
	if (tp_nargs(p) == 3 && arg_is_struct_ptr(btf, p, 2)) {
		kf->cache_free_args = KMT_CACHE_FREE_CACHE;
		return 0;
	}
	if (tp_nargs(p) == 3 && arg_is_ptr(btf, p, 2)) {
		kf->cache_free_args = KMT_CACHE_FREE_NAME;
		return 0;
	}
	snprintf(err, err_size, "unknown kmem_cache_free tracepoint layout");
	return -1;
}

/*
 * percpu_alloc_percpu gained call_site first and bytes_alloc, gfp_flags
 * last (5.19): ten arguments then, seven before.
 */
static int detect_percpu(const struct btf *btf, const int *ids, struct kernel_features *kf,
			 char *err, size_t err_size)
{
	const struct btf_type *p = tp_proto(btf, ids[SRC_PERCPU_ALLOC_PERCPU]);

	if (!p)
		return 0;
	switch (tp_nargs(p)) {
	case 7:
		kf->percpu_args = KMT_PERCPU_SHORT;
		return 0;
	case 10:
		kf->percpu_args = KMT_PERCPU_FULL;
		return 0;
	}
	snprintf(err, err_size, "unknown percpu_alloc_percpu tracepoint layout (%d arguments)",
		 tp_nargs(p));
	return -1;
}

/*
 * BPF_ATOMIC with BPF_FETCH (5.12+): try loading
 *   *(u64 *)(r10 - 8) = 0; r1 = 1; r1 = atomic_fetch_add((u64 *)(r10 - 8), r1); r0 = 0
 */
static bool probe_atomic_fetch(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .off = -8, .imm = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1, .imm = 1 },
		{ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_1,
		  .off = -8, .imm = BPF_ADD | BPF_FETCH },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/*
 * Can a tp_btf program read a "const void *" argument?  Every kmem
 * tracepoint passes its pointer as one, and the verifier only allows the
 * read since 6.16 ("arg1 type UNKNOWN is not a struct" before).  Try
 *   r2 = *(u64 *)(r1 + 8); r0 = 0
 * on kfree (arg 1: const void *ptr, on every kernel).
 */
static bool probe_tp_btf_void_arg(int kfree_id)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1,
		  .off = 8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = BPF_TRACE_RAW_TP);
	int fd;

	if (kfree_id < 0)
		return false;
	opts.attach_btf_id = kfree_id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Whether the kernel's enum type has the value name: read from BTF, as a
 * probe load would cost start-up time (and a program load) for nothing. */
static bool enum_has(const struct btf *btf, const char *type, const char *name)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);
	const struct btf_enum *e;

	if (!t)
		return false;
	e = btf_enum(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name))
			return true;
	return false;
}

static bool struct_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(btf, id);
	const struct btf_member *m;

	if (!t)
		return false;
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return true;
	return false;
}

/*
 * KMALLOC_MAX_CACHE_SIZE, above which kmalloc takes pages from the page
 * allocator: two pages with SLUB (whose struct kmem_cache alone has
 * min_partial; the only slab allocator since 6.8).  0 with SLAB or SLOB,
 * whose limits differ: large kmallocs are then not told apart.
 */
static unsigned long long kmalloc_large_over(const struct btf *btf)
{
	if (!struct_member(btf, "kmem_cache", "min_partial"))
		return 0;
	return 2ULL * sysconf(_SC_PAGESIZE);
}

/*
 * Does the kernel run tp_btf and raw_tp programs (and fentry's) with
 * preemption on?  Since 7.0 tracepoint callbacks are guarded by SRCU-fast
 * (a46023d5616e) and BPF's only keeps them on their CPU (f7d327654b88)
 * where RCU is preemptible, as the full and lazy preemption models make
 * it; task_struct then has the RCU read-side nesting count.
 */
static bool tp_progs_preemptible(const struct btf *btf)
{
	struct utsname u;
	int major = 0;

	if (uname(&u) || sscanf(u.release, "%d", &major) != 1)
		return false;
	return major >= 7 && struct_member(btf, "task_struct", "rcu_read_lock_nesting");
}

int kernel_features_detect(const struct btf *vmlinux, struct kernel_features *kf, char *err,
			   size_t err_size)
{
	int ids[SRC_COUNT];

	memset(kf, 0, sizeof(*kf));
	find_tracepoints(vmlinux, ids);
	for (int src = 0; src < SRC_COUNT; src++)
		kf->has_source[src] = tp_proto(vmlinux, ids[src]) != NULL;
	if (detect_kmalloc(vmlinux, ids, kf, err, err_size) ||
	    detect_cache_alloc(vmlinux, ids, kf, err, err_size) ||
	    detect_cache_free(vmlinux, ids, kf, err, err_size) ||
	    detect_percpu(vmlinux, ids, kf, err, err_size))
		return -1;
	kf->atomic_fetch = probe_atomic_fetch();
	kf->tp_btf_void_arg = probe_tp_btf_void_arg(ids[SRC_KFREE]);
	kf->bpf_loop = enum_has(vmlinux, "bpf_func_id", "BPF_FUNC_loop");
	kf->tp_preemptible = tp_progs_preemptible(vmlinux);
	kf->kmalloc_large_over = kmalloc_large_over(vmlinux);
	return 0;
}
