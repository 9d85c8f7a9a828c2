/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Page allocations' callers from learned stack frames (--allocinfo
 * without --stacks; src/bpf/pagesite.bpf.h): the learning from the BPF
 * side's samples, in a thread of its own while the session runs.
 */
#ifndef KMEMSNOOP_PAGESITE_USER_H
#define KMEMSNOOP_PAGESITE_USER_H

#include <stdbool.h>
#include <stddef.h>

struct kmemsnoop_bpf;
struct ksyms;

/* Before load: switches the learned frames on, or leaves them off (every
 * page is keyed by its stack). */
void pagesite_configure(struct kmemsnoop_bpf *skel, bool on);

struct pagesite;

/* After load: starts learning, naming frames from ksyms (read after load;
 * a reference is taken); NULL when off (or out of memory or without
 * symbols: the pages are then keyed by their stacks, as when off). */
struct pagesite *pagesite_start(struct kmemsnoop_bpf *skel, int ncpus, struct ksyms *ksyms);
/* Stops learning; with verbose, says on stderr what the frames did. */
void pagesite_stop(struct pagesite *ps, bool verbose);

/*
 * Learning from one sample (struct ps_sample), without BPF: exposed for
 * the unit tests.  name_of names a return address (NULL: unknown).
 */
struct ps_learner;
typedef const char *(*ps_name_fn)(void *ctx, unsigned long long addr);
struct ps_learner *ps_learner_new(ps_name_fn name_of, void *ctx);
void ps_learner_free(struct ps_learner *l);
struct ps_sample;
/* The caller the sample's stack gives (0: none within it); learns. */
unsigned long long ps_learn_sample(struct ps_learner *l, const struct ps_sample *s);
/* A learned entry: 0 and *delta, *kind when confirmed; -1 otherwise. */
int ps_learned(const struct ps_learner *l, unsigned long long ret, unsigned int *delta,
	       unsigned int *kind);
/* The confirmed first offset, 0 when none; -1 after a conflict. */
long ps_first_offset(const struct ps_learner *l);

#endif
