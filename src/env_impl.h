/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the files of the options share, and nothing outside src/env*.c
 * includes (other modules see env.h): the parse in progress, the table of
 * options (env.c), which --help (env_help.c) prints, and the check of the
 * options taken together (env_check.c), which ends env_parse().
 */
#ifndef KMEMSNOOP_ENV_IMPL_H
#define KMEMSNOOP_ENV_IMPL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "env.h"

struct parse {
	struct env *env;
	char *err;
	size_t err_size;
	bool max_ptrs_set;
	bool max_stacks_set;
	bool events_set;
	/* perf kmem's rule: -s and -l go to the table (--caller or --alloc)
	 * and the allocator (--slab or --page) named last before them. */
	int seq, caller_seq, alloc_seq, slab_seq, page_seq;
	bool stat_option; /* one of the options above */
	bool flight_option; /* an option that goes with --flight */
};

/* Inline: the handlers (env.c) and the checks (env_check.c) both report
 * through it. */
__attribute__((format(printf, 2, 3))) static inline bool bad(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->err_size, fmt, ap);
	va_end(ap);
	return false;
}

enum opt_group {
	GROUP_FILTER, GROUP_OUTPUT, GROUP_FLIGHT, GROUP_ALLOCINFO, GROUP_HIST, GROUP_STAT,
	GROUP_EXPORT, GROUP_CONTROL
};

struct opt_spec {
	const char *name;
	int key;            /* the short option's letter, or LONG_ONLY(n) */
	int has_arg;        /* getopt_long's no/required/optional_argument */
	const char *value;  /* what --help shows after the name: "=PID", "[=total]" */
	enum opt_group group;
	const char *help;
	bool (*parse)(struct parse *p, const char *arg); /* its value, if any */
	size_t flag;        /* FLAG(field): set when the option is given */
};

/* The table (env.c), in --help's order within each group.  A row without
 * a parse function is a second help entry of the option before it. */
extern const struct opt_spec env_options[];
extern const size_t env_noptions;

/* The options taken together, after each was valid alone (env_check.c). */
bool env_check_combination(struct parse *p);

#endif
