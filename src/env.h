/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Command-line options: what the user asked for, validated. */
#ifndef KMEMSNOOP_ENV_H
#define KMEMSNOOP_ENV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf/histmaps.h"
#include "bpf/kmemsnoop.h"
#include "stat/kstat.h"

/* What runs kmemsnoop's programs on the tracepoints (--prog-type). */
enum prog_type {
	PROG_AUTO,       /* classic where the others run preemptibly, else tp_btf, else raw_tp */
	PROG_TRACEPOINT, /* classic tracepoint programs (perf's callbacks, preemption off) */
	PROG_TP_BTF,
	PROG_RAW_TP,
	PROG_TYPES
};

extern const char *const prog_type_names[PROG_TYPES];

struct env {
	int pid;      /* -p: thread group to follow, 0 = all */
	int tid;      /* -t: 0 = all */
	int cpu;      /* -C: -1 = all */
	char comm[16]; /* -c: empty = all */
	const char *cgroup; /* --cgroup: a cgroup v2 directory, NULL = all */
	unsigned int events; /* -e: EV_* mask */
	uint64_t min_size;
	uint64_t max_size;
	bool size_filter;
	const char *output_dir; /* -o */
	const char *input_dir;  /* -i */
	double duration;        /* -d seconds, 0 = until interrupted */
	uint64_t ring_size;     /* -b bytes per CPU; 0: the default (budget.h) */
	enum prog_type prog_type; /* --prog-type */
	int nice;               /* --nice */
	bool nice_given;        /* --nice on the command line, not the default */
	bool verbose;           /* -v */
	bool json;              /* --json: JSON lines instead of text */
	bool ring_size_set;     /* -b given */

	bool hist;              /* --hist, --hist-by, --live */
	bool allocinfo;         /* --allocinfo (with --hist or alone); neither: stream */
	double interval;        /* [interval]: seconds between outputs, 0 = at the end */
	bool interval_given;    /* INTERVAL on the command line (--hist has a default) */
	unsigned long count;    /* [count]: outputs, then end; 0 = no limit */

	/* --allocinfo */
	bool ai_total;          /* =total: allocated during the session, freed or not */
	bool ai_stacks;         /* --stacks: keyed by kernel stack; streaming, a stack per event */
	bool user_stacks;       /* --user-stacks: streaming, each event's user stack */
	int stack_depth;        /* --stack-depth: the frames shown of each stack; 0: all */
	bool ai_folded;         /* --folded: folded stack lines */
	const char *vmlinux;    /* --vmlinux: kernel image with DWARF */
	const char *pprof;      /* --pprof: the table as a pprof heap profile, NULL = none */
	uint64_t ai_max_ptrs;   /* --max-ptrs: allocations tracked at once */
	uint64_t ai_max_stacks; /* --max-stacks: distinct stacks */

	/* --hist */
	enum kmt_hist_value hist_value; /* --hist=alloc|req */
	enum kmt_hist_by hist_by;       /* --hist-by */
	int top;                        /* --top: keys shown */
	bool top_set;
	unsigned int hist_keys;         /* --hist-keys: key table entries, 0 = by memory */
	bool live;                      /* --live: the terminal view even when not a tty */

	/* --listen */
	const char *listen;             /* "[ADDR:]PORT" of the metrics endpoint */
	/* --stat: tables as perf kmem stat prints them (--caller, --alloc,
	 * --slab, --page, -s, -l) */
	bool stat;
	struct kstat_opts stat_opts;
	bool stat_stream;               /* --stat-stream: every event to user space */

	/* --flight: the recent past kept in the kernel, written to -o DIR
	 * when a trigger fires */
	bool flight;
	double flight_window;           /* =SECONDS: what a dump keeps at most; 0: the store */
	unsigned int flight_keep;       /* --flight-keep=N: dumps kept in DIR */
	uint64_t flight_keep_bytes;     /* --flight-keep=N,SIZE: their disk space; 0: any */
	double flight_after;            /* --flight-after: seconds from a trigger to its dump */
	/* --flight-when=FIELD<SIZE|FIELD>SIZE|FIELD+SIZE on /proc/meminfo;
	 * field empty: none */
	struct {
		char field[32];
		char op; /* '<', '>', or '+': risen by bytes since the start or its last dump */
		uint64_t bytes;
	} flight_when;
};

/* Exit codes. */
enum {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,
	EXIT_USAGE = 2,
};

enum env_status {
	ENV_RUN,     /* env holds what to do */
	ENV_HELP,    /* --help: print env_print_help() */
	ENV_VERSION, /* --version */
	ENV_USAGE,   /* bad usage: err holds a one-line reason */
};

/*
 * Parses argv into env (defaults first).  Prints nothing; can be called
 * again in the same process.
 */
enum env_status env_parse(int argc, char **argv, struct env *env, char *err, size_t err_size);

/* --help: usage, every option of the table by group, notes, examples. */
void env_print_help(FILE *out);

/* The long names of every option (at most max stored); how many there are. */
size_t env_option_names(const char **names, size_t max);

/* The long name of an option whose getopt key another option already
 * has (getopt_long would call the other's handler), or NULL. */
const char *env_duplicate_key(void);

/*
 * --stat's rule: live, the slab tables are counted in BPF maps, unless
 * what is asked for needs every event in user space: the per-pointer
 * table (--alloc), the page allocator (--page, -e page), or --stat-stream.
 * A recording (-i) is always read event by event.
 */
bool env_stat_in_bpf(const struct env *env);

/* The frames of each streamed event's kernel and user stacks the BPF side
 * keeps (0: none): --stack-depth's, and room for the tracing machinery's
 * frames a kernel stack starts with, which readers leave out. */
unsigned int env_kstack_frames(const struct env *env);
unsigned int env_ustack_frames(const struct env *env);

#endif
