// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Attaches floor.bpf.c's empty programs to whichever of the kmem
 * tracepoints this kernel has, says "Tracing" on stderr, and waits for
 * SIGINT or SIGTERM.  Usage: floor [--clock]; --clock: each program reads
 * the clock (bpf_ktime_get_ns()) and does nothing else.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "floor.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, args) : 0;
}

/* Only the programs whose names start with kind, and of those not the
 * ones on a tracepoint the kernel lacks (kmalloc_node after 6.1). */
static void skip_missing(struct floor_bpf *skel, const struct btf *vmlinux, const char *kind)
{
	struct bpf_program *prog;
	char name[128];

	bpf_object__for_each_program(prog, skel->obj) {
		const char *tp = strchr(bpf_program__section_name(prog), '/') + 1;

		snprintf(name, sizeof(name), "btf_trace_%s", tp);
		if (strncmp(bpf_program__name(prog), kind, strlen(kind)) ||
		    btf__find_by_name_kind(vmlinux, name, BTF_KIND_TYPEDEF) < 0)
			bpf_program__set_autoload(prog, false);
	}
}

int main(int argc, char **argv)
{
	bool read_clock = argc == 2 && !strcmp(argv[1], "--clock");
	struct btf *vmlinux = btf__load_vmlinux_btf();
	struct floor_bpf *skel;
	int err = 1;

	if (argc > 2 || (argc == 2 && !read_clock)) {
		fprintf(stderr, "usage: floor [--clock]\n");
		return 2;
	}
	libbpf_set_print(quiet);
	if (!vmlinux) {
		fprintf(stderr, "floor: no kernel BTF\n");
		return 1;
	}
	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: cannot open the BPF object\n");
		goto out;
	}
	skip_missing(skel, vmlinux, read_clock ? "clock_" : "empty_");
	if (floor_bpf__load(skel) || floor_bpf__attach(skel)) {
		fprintf(stderr, "floor: cannot load or attach the empty programs\n");
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	fprintf(stderr, "Tracing with %s\n",
		read_clock ? "programs that only read the clock" : "empty programs");
	while (!stop)
		pause();
	err = 0;
out:
	floor_bpf__destroy(skel);
	btf__free(vmlinux);
	return err;
}
