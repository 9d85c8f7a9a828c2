/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The core kernel's functions that a rule selects, as address-sorted text
 * ranges: what the BPF side steps over to find a call site in a kernel
 * stack (stacksite.bpf.h).
 */
#ifndef KMEMSNOOP_TEXTRANGES_H
#define KMEMSNOOP_TEXTRANGES_H

#include <stdbool.h>

#include "bpf/kmemsnoop.h"

struct ksyms;

/*
 * Fills at most max ranges with the text of the functions select() names
 * (adjacent ones merged); returns how many.  *functions: how many functions
 * were selected, *left_out: how many of them did not fit.
 */
int textranges_of(const struct ksyms *ks, bool (*select)(const char *name),
		  struct kmt_text_range *ranges, int max, int *functions, int *left_out);

#endif
