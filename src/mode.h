/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A mode is what kmemsnoop does with the events: stream them (stream.c),
 * count them in histograms (hist.c), add up outstanding memory per call
 * site (allocinfo.c).  Each mode owns its file and fills one struct
 * mode_ops; the session (session.c) runs the modes the command line
 * selects, several at once when asked, through these operations and
 * nothing else:
 *
 *   create     before any BPF: its own state, opened outputs (errors early)
 *   wants      what it needs from the BPF side (sources, switches)
 *   configure  after the BPF object is opened, before load: rodata, map
 *              sizes (again after a tp_btf -> raw_tp fallback)
 *   loaded     after load, before attach (e.g. the rings)
 *   start      after attach: notes about the kernel, headers, views
 *   wait       the run loop's wait, for a mode that has something to do
 *              while waiting (consume the rings, read keys); optional
 *   tick       every interval (modes with one); optional
 *   finish     after detach: the last output and the summary
 *   destroy
 *
 * Every operation that can fail returns -1 (or NULL) after
 * session_fail(), which keeps the one-line reason main() prints.
 */
#ifndef KMEMSNOOP_MODE_H
#define KMEMSNOOP_MODE_H

#include <stdbool.h>

struct env;
struct kmemsnoop_bpf;
struct session;

/* What a mode needs from the BPF side; the session takes the union. */
struct bpf_wants {
	unsigned int alloc_classes; /* EV_*: allocation sources to attach */
	unsigned int free_classes;  /* EV_*: free sources to attach */
	bool sized_frees;           /* frees filtered by size as their allocations */
	bool pfns;                  /* page frame numbers (vmemmap calibration) */
	bool linear_map;            /* where physical memory is mapped (slab objects' nodes) */
	bool task_records;          /* the stream's task records (sources.h TASK_FOR_RECORDS) */
	bool heartbeats;            /* the stream's heartbeat program, run on each CPU */
	bool oom_victims;           /* the program for oom:mark_victim (attached by the mode) */
	unsigned int kstack_depth;  /* frames of each streamed event's kernel stack; 0: none */
	unsigned int ustack_depth;  /* the same of its user stack (--user-stacks) */
	unsigned long long kernel_bytes; /* kernel memory the mode creates besides the BPF
					  * object's maps (the rings): summed */
};

/* What wait and tick report besides an error (-1). */
enum mode_status {
	MODE_OK = 0,
	MODE_QUIT = 1, /* the user asked to end: end with the final outputs */
	MODE_END = 2,  /* the mode's reader went away (EPIPE): end the run */
};

struct mode {
	const struct mode_ops *ops;
	struct session *session;
	double interval; /* seconds between ticks; 0: none */
	/* The run loop's bookkeeping. */
	double next;
	unsigned long ticks;
};

struct mode_ops {
	const char *name;
	bool (*selected)(const struct env *env);
	struct mode *(*create)(struct session *s);
	void (*wants)(const struct mode *m, struct bpf_wants *w);
	void (*configure)(struct mode *m, struct kmemsnoop_bpf *skel);
	int (*loaded)(struct mode *m);
	int (*start)(struct mode *m);
	int (*wait)(struct mode *m, int ms);
	int (*tick)(struct mode *m);
	/* final: false when the run ended after COUNT ticks (the last tick
	 * was the last output). */
	int (*finish)(struct mode *m, bool final);
	void (*destroy)(struct mode *m);
};

extern const struct mode_ops stream_mode;
extern const struct mode_ops statbpf_mode;
extern const struct mode_ops hist_mode;
extern const struct mode_ops allocinfo_mode;
extern const struct mode_ops exporter_mode;
extern const struct mode_ops flight_mode;

#endif /* KMEMSNOOP_MODE_H */
