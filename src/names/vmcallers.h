/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The vmalloc API's functions (vmalloc, vzalloc, kvmalloc, vfree, kvfree,
 * their *_noprof and internal helpers) as text ranges: a call site taken
 * from a kernel stack is the first frame after them, as the caller that
 * __vmalloc_node_range() is handed.
 */
#ifndef KMEMSNOOP_VMCALLERS_H
#define KMEMSNOOP_VMCALLERS_H

#include <stdbool.h>

#include "bpf/kmemsnoop.h"

struct ksyms;

/* Is this function (a kallsyms name) part of the vmalloc API? */
bool vmcallers_is_api(const char *name);

#endif
