/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A tracing session, the same for every mode, in named phases:
 *
 *   session_new      the kernel: BTF, its features, the CPUs
 *   session_setup    the modes' state; the BPF object opened, configured
 *                    (common filters, then each mode), loaded with tp_btf
 *                    or, where the kernel will not, raw_tp; -p's target
 *                    added; the sources every mode wants attached
 *   session_run      one loop for every mode: intervals, COUNT, -d, signals,
 *                    the -p processes gone, no burst of catch-up ticks;
 *                    then detach, and each mode's last output and summary
 *   session_free
 *
 * Modes see the session through the fields below and the functions of
 * this header; they never see each other.
 */
#ifndef KMEMSNOOP_SESSION_H
#define KMEMSNOOP_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "bpf/kmemsnoop.h"
#include "kernel/kernel_features.h"
#include "mode.h"

struct btf;
struct env;
struct ksyms;
struct kmemsnoop_bpf;
struct bpf_link;

#define SESSION_MAX_MODES 4
/* cpuhp_enter and cpuhp_exit */
#define SESSION_HOTPLUG_LINKS 2

struct session {
	/* What modes may read. */
	const struct env *env;
	struct btf *vmlinux;
	struct kernel_features kf;
	int ncpus;
	bool raw_tp;                 /* the programs loaded are raw_tp */
	bool classic;                /* the kmem tracepoints run classic tracepoint programs */
	bool classic_nested;         /* and tp_btf ones beside them (nested_prog) */
	struct kmemsnoop_bpf *skel;  /* after session_setup */
	struct bpf_wants wants;      /* the union of the modes' */
	bool terminal_taken;         /* a full-screen view owns stdout until finish */

	/* The session's own. */
	struct mode *modes[SESSION_MAX_MODES];
	int nmodes;
	struct bpf_link *links[SRC_COUNT];
	/* Beside a classic program, the tp_btf one that takes the events it
	 * skips while another runs on the CPU (kmemsnoop.bpf.c) */
	struct bpf_link *nested_links[SRC_COUNT];
	/* The staged stream: a CPU going offline copies its stage into its
	 * ring (cpuhp_enter, cpuhp_exit). */
	struct bpf_link *hotplug_links[SESSION_HOTPLUG_LINKS];
	const char *funcs[SRC_COUNT];  /* fentry/fexit sources: the function chosen */
	unsigned long long vmemmap_base;
	unsigned long long linear_map; /* virtual address of physical 0; 0: not known */
	struct ksyms *ksyms;
	bool ksyms_tried;
	bool target_gone;
	bool counted_out;            /* the run ended after COUNT ticks */
	int cgroup_fd;               /* --cgroup's directory, -1 without */
	bool out_of_memory;          /* the kernel refused memory (session_refused), or
				      * would have (memfit.h): no fallback */
	/* What --flight did that its BPF side does not count (the triggers
	 * user space sees, the dumps), for --listen beside it: written by the
	 * flight mode, read by the scrapes' thread, with atomics. */
	struct {
		unsigned long long triggers[KMT_TRIGGER_KINDS];
		unsigned long long dumps, dump_failures;
	} flight_counts;
	char err[512];
};

/* Each phase: 0, or -1 with the reason in s->err. */
int session_new(struct session *s, const struct env *env);
int session_setup(struct session *s);
int session_run(struct session *s);
/* After any phase, failed or not. */
void session_free(struct session *s);

/* Does a source of this class (EV_*) allocate in this session? */
bool session_class_traced(const struct session *s, unsigned int class);

/* Records a one-line reason; returns -1. */
__attribute__((format(printf, 2, 3))) int session_fail(struct session *s, const char *fmt, ...);

/* After session_fail for memory the kernel refused with errnum (a map, a
 * mapping): names the memory cgroup limit when one may be why (memcg.h),
 * and on ENOMEM spares the raw_tp retry that would fail the same way.
 * Returns -1. */
int session_refused(struct session *s, int errnum);

/* The kernel's symbols, loaded once (NULL when unreadable: said once). */
struct ksyms *session_ksyms(struct session *s);

/* Events the kernel skipped because the same program was running on their
 * CPU (an allocation in an interrupt during one; and where tracepoints run
 * preemptible, as on 7.x, one of another task while a run was preempted:
 * in a loaded VM, percents of the page allocations), over every program. */
unsigned long long session_missed(const struct session *s);

/* The stderr line that says how many events session_missed() counted. */
#define SESSION_MISSED_FMT                                                                 \
	"kmemsnoop: %llu events missed: they happened while the same program was running " \
	"on their CPU (an interrupt during a run, or another task while a run was "        \
	"preempted: 7.x kernels), so BPF skipped them\n"

/* The records the BPF side could not stage (a CPU's stages full), over
 * all CPUs so far: how many, and their bytes. */
void session_staging_losses(const struct session *s, unsigned long long *events,
			    unsigned long long *bytes);

/* Whether the source is attached in this session. */
bool session_source_wanted(const struct session *s, enum kmt_source src);

/* The tracepoints attached (fentry and fexit programs have no tracefs
 * format), for a recording's tracepoints file: names[SRC_COUNT]; how many. */
int session_traced_tracepoints(const struct session *s, const char **names);

/* The program that writes a heartbeat record on the CPU it runs on
 * (loaded when a mode wants heartbeats). */
struct bpf_program *session_heartbeat_prog(const struct session *s);

/* Runs it on cpu (BPF_PROG_TEST_RUN there: an interrupt on that CPU), which
 * also copies what the CPU staged.  0, -ENXIO when the CPU is offline, or
 * another -errno. */
int session_beat_cpu(const struct session *s, int cpu);

#endif /* KMEMSNOOP_SESSION_H */
