/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the files of the session share, and nothing outside
 * src/session*.c includes (modes see session.h): session.c finds the
 * kernel, opens, loads and attaches; session_configure.c fills the BPF
 * object's read-only data between open and load; session_run.c runs the
 * loop and finishes.
 */
#ifndef KMEMSNOOP_SESSION_IMPL_H
#define KMEMSNOOP_SESSION_IMPL_H

#include <stdbool.h>

#include "bpf/kmemsnoop.h"
#include "kernel/kernel_features.h"
#include "session.h"

/* Whether bulk objects are read through bpf_loop() (the fel_ programs,
 * built with atomic fetch-add, which every such kernel should have).
 * Here because session_new's -v line (session.c) and finish's count of
 * the objects not seen (session_run.c) both name bulk_max(). */
static inline bool bulk_loops(const struct kernel_features *kf)
{
	return kf->bpf_loop && kf->atomic_fetch;
}

/* The objects a bulk call hands over at most. */
static inline int bulk_max(const struct kernel_features *kf)
{
	return bulk_loops(kf) ? KMT_BULK_LOOP_MAX : KMT_BULK_MAX;
}

/* SIGINT and SIGTERM, from session_new on: the loop (session_run.c) ends
 * at its next look. */
void session_on_signal(int sig);

/* Destroys every source's link: before a reload, at the end of the run,
 * and at session_free. */
void session_detach_all(struct session *s);

/* session_configure.c: before the first load, what the kernel's page
 * layout is (once: every load attempt reuses it). */
void session_calibrate_pages(struct session *s);
/* After open, before each load: the filters and layouts every mode
 * shares. */
void session_configure(struct session *s);

#endif
