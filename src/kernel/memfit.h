/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Whether a run fits in the memory cgroup kmemsnoop runs in.  Since 5.11
 * the kernel charges BPF maps, and the verifier's working memory while it
 * checks the programs, to the loading process's memory cgroup, and past
 * the limit the cgroup's OOM killer ends kmemsnoop with SIGKILL instead of
 * failing a call.  So before loading, what the run will take is set
 * against the room the limit leaves, and a run that cannot fit ends with
 * one line that says so.
 */
#ifndef KMEMSNOOP_MEMFIT_H
#define KMEMSNOOP_MEMFIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;

/*
 * At the start, before the kernel's BTF and symbols are read (most of
 * kmemsnoop's own memory): 0 when the room the limit leaves is at least
 * what the smallest run takes, else -1 with a one-line reason in err.
 */
int memfit_check_start(char *err, size_t err_size);

/* What the kernel will allocate for obj's maps, as they are sized now
 * (before load), on ncpus possible CPUs: an estimate from their types and
 * sizes, never below what they take. */
uint64_t memfit_maps_bytes(const struct bpf_object *obj, int ncpus);

/*
 * Before loading obj: 0 when the run fits the tightest memory cgroup
 * limit over kmemsnoop (or there is none), else -1 with a one-line reason
 * in err.  other_bytes: kernel memory the modes add besides obj's maps
 * (the rings).  verbose: says the figures on stderr.
 */
int memfit_check(const struct bpf_object *obj, int ncpus, uint64_t other_bytes, bool verbose,
		 char *err, size_t err_size);

#endif
