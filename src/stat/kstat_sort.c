// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's -s: the sort keys by perf kmem's names, each valid for the
 * slab tables, the page tables or both.  The tables sort themselves
 * (kstat_slab.c, kstat_page.c).
 */
#include <string.h>

#include "kstat.h"

static const struct {
	const char *name;
	enum kstat_key key;
	bool slab, page;
} sort_keys[] = {
	{ "ptr", KSTAT_KEY_PTR, true, false },
	{ "callsite", KSTAT_KEY_CALLSITE, true, true },
	{ "hit", KSTAT_KEY_HIT, true, true },
	{ "bytes", KSTAT_KEY_BYTES, true, true },
	{ "frag", KSTAT_KEY_FRAG, true, false },
	{ "pingpong", KSTAT_KEY_PINGPONG, true, false },
	{ "page", KSTAT_KEY_PAGE, false, true },
	{ "order", KSTAT_KEY_ORDER, false, true },
	{ "migtype", KSTAT_KEY_MIGTYPE, false, true },
	{ "gfp", KSTAT_KEY_GFP, false, true },
};

#define NSORT_KEYS (sizeof(sort_keys) / sizeof(sort_keys[0]))

int kstat_sort_parse(const char *list, bool page, struct kstat_sort *out, char *err,
		     size_t err_size)
{
	const char *p = list;

	out->nkeys = 0;
	while (1) {
		size_t len = strcspn(p, ",");
		size_t i;

		for (i = 0; i < NSORT_KEYS; i++)
			if (strlen(sort_keys[i].name) == len && !strncmp(p, sort_keys[i].name, len) &&
			    (page ? sort_keys[i].page : sort_keys[i].slab))
				break;
		if (i == NSORT_KEYS) {
			snprintf(err, err_size, "unknown %s sort key '%.*s': use %s", page ? "page" : "slab",
				 (int)len, p, page ? "page, callsite, hit, bytes, order, migtype, gfp" :
				 "ptr, callsite, hit, bytes, frag, pingpong");
			return -1;
		}
		if (out->nkeys == KSTAT_MAX_KEYS) {
			snprintf(err, err_size, "too many sort keys in '%s'", list);
			return -1;
		}
		out->keys[out->nkeys++] = sort_keys[i].key;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}
