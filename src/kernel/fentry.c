// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Choosing the kernel functions of fentry/fexit sources: see fentry.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "fentry.h"

/* The kernel's ENOTSUPP, which user space has no name for: what the
 * trampoline says of a prototype it cannot take. */
#define ENOTSUPP_KERNEL 524

/* The function's prototype from BTF, or NULL; *id: the function's. */
static const struct btf_type *func_proto(const struct btf *btf, const char *func, int *id)
{
	const struct btf_type *t;

	*id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	if (*id < 0)
		return NULL;
	t = btf__type_by_id(btf, *id);
	t = t ? btf__type_by_id(btf, t->type) : NULL;
	return t && btf_is_func_proto(t) ? t : NULL;
}

/*
 * Loads and attaches  r0 = 0  on function func_id: the load checks the
 * prototype (too many arguments before 5.x's limit was raised), the attach
 * builds the trampoline (where the argument count is refused).  The arguments are
 * not read: a void * one is refused to a direct read before 6.16, and the
 * programs read those through a helper.  0 or -errno.
 */
static int probe(int func_id, enum bpf_attach_type type)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type);
	int fd, link, err = 0;

	opts.attach_btf_id = func_id;
	fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, NULL, "GPL", insns,
			   sizeof(insns) / sizeof(insns[0]), &opts);
	if (fd < 0)
		return -errno;
	link = bpf_raw_tracepoint_open(NULL, fd);
	if (link < 0)
		err = -errno;
	else
		close(link);
	close(fd);
	return err;
}

const char *fentry_choose(const struct btf *vmlinux, const struct event_source *es, char *why,
			  size_t why_size)
{
	bool exit = es->kind == SOURCE_FEXIT;

	snprintf(why, why_size, "this kernel has no %s", es->funcs[0]);
	for (int i = 0; i < SOURCE_MAX_FUNCS && es->funcs[i]; i++) {
		const char *func = es->funcs[i];
		int id, nargs, err;
		const struct btf_type *p = func_proto(vmlinux, func, &id);

		if (!p)
			continue;
		nargs = btf_vlen(p);
		/* fexit reads the return value after the arguments: the
		 * prototype must be exactly the one the program knows,
		 * unless a helper reads it. */
		if (exit && !es->ret_by_helper ? nargs != es->args : nargs < es->args) {
			snprintf(why, why_size, "%s has %d arguments, not %d", func, nargs, es->args);
			continue;
		}
		err = probe(id, exit ? BPF_TRACE_FEXIT : BPF_TRACE_FENTRY);
		if (!err)
			return func;
		if (err == -EPERM)
			snprintf(why, why_size, "this kernel refuses fentry/fexit: %s", strerror(-err));
		else if (err == -ENOTSUPP_KERNEL)
			snprintf(why, why_size, "%s: a trampoline here does not take its %d arguments",
				 func, nargs);
		else
			snprintf(why, why_size, "%s: %s", func, strerror(-err));
		if (err == -EPERM)
			return NULL; /* the same for every function */
	}
	return NULL;
}
