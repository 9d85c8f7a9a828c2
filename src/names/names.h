/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Tables of kernel function names matched against every kallsyms name
 * (textranges_of() asks each of some 100,000 symbols): the names' lengths
 * are known when compiled, so a match costs no strlen() per entry.
 */
#ifndef KMEMSNOOP_NAMES_H
#define KMEMSNOOP_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct name {
	const char *s;
	size_t len;
};

#define NAME(lit) { (lit), sizeof(lit) - 1 }
#define NAMES_COUNT(table) (sizeof(table) / sizeof((table)[0]))

/* Does s start with one of the n names? */
static inline bool names_prefix_of(const char *s, const struct name *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[0] == names[i].s[0] && !strncmp(s, names[i].s, names[i].len))
			return true;
	return false;
}

/* Is s's first len bytes one of the n names? */
static inline bool names_equal(const char *s, size_t len, const struct name *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (names[i].len == len && !memcmp(s, names[i].s, len))
			return true;
	return false;
}

#endif
