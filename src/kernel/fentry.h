/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Choosing the kernel function behind an fentry/fexit source (sources.h):
 * from BTF, the function and its prototype; then whether a trampoline
 * attaches to it here, by loading and attaching a program that reads the
 * same arguments.  Kernels differ in all three: names (the *_noprof
 * functions of 6.10), argument counts a trampoline takes (six on x86
 * before 6.6, eight on arm64, which has fentry since 6.0), and whether
 * fentry is allowed at all (some kernels refuse it with EPERM).
 */
#ifndef KMEMSNOOP_FENTRY_H
#define KMEMSNOOP_FENTRY_H

#include <stddef.h>

#include "sources.h"

struct btf;

/*
 * The first of the row's functions a program can attach to, or NULL with
 * a one-line reason in why (that of the first function this kernel has).
 */
const char *fentry_choose(const struct btf *vmlinux, const struct event_source *es, char *why,
			  size_t why_size);

#endif
