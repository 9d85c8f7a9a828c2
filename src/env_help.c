// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --help: the usage, every option of the table (env.c) by group with its
 * text word-wrapped, then the notes and the examples.  Apart from the
 * parsing: it reads the table and parses nothing.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "env.h"
#include "env_impl.h"

/* The help's layout: option names, then their text from this column. */
#define HELP_WIDTH 80
#define HELP_COLUMN 25

static const char *const group_titles[] = {
	[GROUP_FILTER] = "Filters (applied in the kernel, before anything is recorded):",
	[GROUP_OUTPUT] = "Output:",
	[GROUP_FLIGHT] = "Flight recorder (the recent past, written when something happens):",
	[GROUP_ALLOCINFO] = "Allocation profile (/proc/allocinfo for any kernel):",
	[GROUP_HIST] = "Histograms (counted in the kernel, nothing sent per event):",
	[GROUP_STAT] = "Statistics (perf kmem stat's tables, and object lifetimes):",
	[GROUP_EXPORT] = "Metrics endpoint (Prometheus):",
	[GROUP_CONTROL] = "Control:",
};

static const char usage_head[] =
	"Usage: kmemsnoop [OPTION...]\n"
	"       kmemsnoop --allocinfo[=total] [OPTION...] [INTERVAL [COUNT]]\n"
	"       kmemsnoop --hist[=req] [OPTION...] [INTERVAL [COUNT]]\n"
	"       kmemsnoop --stat [--caller] [--alloc] [OPTION...] [INTERVAL [COUNT]]\n"
	"       kmemsnoop -i DIR --stat [--caller] [--alloc] [OPTION...]\n"
	"       kmemsnoop --flight[=SECONDS] -o DIR [OPTION...]\n"
	"Trace the kernel's memory allocations and frees (kmalloc, slab caches, pages,\n"
	"vmalloc, percpu) with BPF, printed as ftrace-style text or written as kmemtrace\n"
	"binary files; or, with --allocinfo, add them up per call site in the kernel and\n"
	"print them in the format of the kernel's /proc/allocinfo; or, with --hist, count\n"
	"them by size in the kernel and show histograms every second, live on a terminal.\n";

static const char usage_tail[] =
	"Text output (stdout) is one line per event, like the kernel's kmem trace events,\n"
	"with real (unhashed) pointers. A summary of events written and lost goes to stderr.\n"
	"\n"
	"Needs root, or CAP_BPF and CAP_PERFMON (CAP_SYSLOG too where the kernel hides\n"
	"/proc/kallsyms' addresses; CAP_SYS_ADMIN for the page frames of the stream),\n"
	"and a kernel with BTF\n"
	"(/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF=y); kernels 5.10 and later.\n"
	"What older kernels lack (kmemsnoop says so when it starts): before 6.1,\n"
	"kmem_cache_alloc lines have no name= and --hist-by cache counts slab\n"
	"allocations by object size, \"(cache size N)\" (the event does not say which\n"
	"cache); before 5.12, kmem_cache_free lines have no name= either, and an -o\n"
	"record traced in an interrupt during another may repeat its sequence number\n"
	"(no BPF atomic fetch-add); before 5.19, percpu_alloc_percpu lines have no\n"
	"call_site=, bytes_alloc= or gfp_flags= (the event's fields then), and the bytes\n"
	"are counted as size x possible CPUs.\n"
	"vmalloc areas are traced through fentry/fexit: where the kernel refuses it,\n"
	"through its vmap_area tracepoints (6.2+: the area's size with its guard page,\n"
	"the call site from a kernel stack), and not at all before 6.2; where a\n"
	"trampoline takes fewer than nine arguments (x86-64 before 6.6, arm64 at eight),\n"
	"through __vmalloc_node only, which direct callers of the vmalloc core bypass,\n"
	"as do vmalloc() and vzalloc() where the compiler inlined it into them (Debian's\n"
	"5.10). Slab objects allocated or freed\n"
	"in bulk (kmem_cache_alloc_bulk, kmem_cache_free_bulk, kfree_bulk), and those\n"
	"kfree_rcu() puts in a cache's RCU sheaf (6.18+), are traced through\n"
	"fentry/fexit only: not seen where the kernel refuses it or, as arm64\n"
	"before 6.0, has no trampolines. kmemsnoop says so at start.\n"
	"--hist counts successful allocations by size; frees are counted but not sized\n"
	"(kfree does not say how much it frees; kfree(NULL) is not counted). Failed\n"
	"allocations, allocations whose key did not fit in the key table (untracked) and\n"
	"events the kernel skipped machine-wide (missed: an allocation in an interrupt\n"
	"while the same program ran) are counted and shown.\n"
	"\n"
	"Exit status: 0 success, 1 runtime error, 2 bad usage.\n"
	"\n"
	"Examples:\n"
	"  kmemsnoop                     # every allocation on the machine\n"
	"  kmemsnoop -p 1234 -e kmalloc  # kmalloc/kfree made by process 1234\n"
	"  kmemsnoop -o /tmp/trace -d 10 # ten seconds of binary trace\n"
	"  kmemsnoop -i /tmp/trace       # print it\n"
	"  kmemsnoop --flight=30 -o /var/lib/kmemsnoop  # on OOM: the last 30 s, as a recording\n"
	"  kmemsnoop --allocinfo 5       # outstanding memory per call site, every 5 s\n"
	"  kmemsnoop --allocinfo -d 10 | sort -g | tail | numfmt --to=iec\n"
	"  kmemsnoop --allocinfo --stacks --folded -d 10 > out.folded\n"
	"  kmemsnoop --allocinfo --stacks --pprof heap.pb.gz -d 10  # go tool pprof heap.pb.gz\n"
	"  kmemsnoop --hist              # live histograms on a terminal\n"
	"  kmemsnoop --hist-by cache 5 3 # per-cache histograms, every 5 s, 3 times\n"
	"  kmemsnoop --hist --allocinfo -d 60 > out  # both, from one trace\n"
	"  kmemsnoop --listen 9100       # Prometheus endpoint at 127.0.0.1:9100/metrics\n"
	"  kmemsnoop --stat --caller -l 20 -p 1234   # perf kmem stat, live\n"
	"  kmemsnoop -i /tmp/trace --stat --alloc -s ptr\n";
/* --- --help ------------------------------------------------------------------- */

/* "  -p, --pid=PID" or "      --min-size=BYTES". */
static int format_names(const struct opt_spec *o, char *buf, size_t size)
{
	bool has_short = o->key > 0 && o->key < 0x100;

	return snprintf(buf, size, "  %c%c%c --%s%s", has_short ? '-' : ' ',
			has_short ? o->key : ' ', has_short ? ',' : ' ', o->name, o->value);
}

/* text, word-wrapped from HELP_COLUMN to HELP_WIDTH; the first line
 * continues what is already printed (col characters). */
static void print_wrapped(FILE *out, const char *text, int col)
{
	while (*text) {
		int room = HELP_WIDTH - HELP_COLUMN - 1, len = (int)strlen(text);

		if (col > HELP_COLUMN - 1) {
			fputc('\n', out);
			col = 0;
		}
		fprintf(out, "%*s", HELP_COLUMN - col, "");
		if (len > room) {
			len = room;
			while (len > 0 && text[len] != ' ')
				len--;
			if (!len)
				len = room;
		}
		while (len > 1 && text[len - 1] == ' ')
			len--;
		fprintf(out, "%.*s\n", len, text);
		text += len;
		while (*text == ' ')
			text++;
		col = 0;
	}
}

void env_print_help(FILE *out)
{
	char names[64];

	fputs(usage_head, out);
	for (int g = GROUP_FILTER; g <= GROUP_CONTROL; g++) {
		fprintf(out, "\n%s\n", group_titles[g]);
		for (size_t i = 0; i < env_noptions; i++) {
			int col;

			if (env_options[i].group != (enum opt_group)g)
				continue;
			col = format_names(&env_options[i], names, sizeof(names));

			fputs(names, out);
			print_wrapped(out, env_options[i].help, col);
		}
	}
	fputc('\n', out);
	fputs(usage_tail, out);
}
