/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Live tracing: load, attach, stream records to a sink, summarize. */
#ifndef KMEMSNOOP_TRACER_H
#define KMEMSNOOP_TRACER_H

struct env;

/* Runs a whole trace as env asks; returns the process exit code. */
int tracer_run(const struct env *env);

#endif
