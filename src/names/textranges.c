// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Selected functions' text as sorted ranges: see textranges.h. */
#include "ksyms.h"
#include "textranges.h"

int textranges_of(const struct ksyms *ks, bool (*select)(const char *name),
		  struct kmt_text_range *ranges, int max, int *functions, int *left_out)
{
	int n = 0;

	*functions = *left_out = 0;
	/* ksyms_at() walks in address order: the ranges come out sorted. */
	for (size_t i = 0; ks && i < ksyms_count(ks); i++) {
		const struct ksym *s = ksyms_at(ks, i);

		if (s->module || !s->size || !select(s->name))
			continue;
		++*functions;
		if (n && ranges[n - 1].end == s->addr) {
			ranges[n - 1].end = s->addr + s->size;
			continue;
		}
		if (n == max) {
			++*left_out;
			continue;
		}
		ranges[n].start = s->addr;
		ranges[n].end = s->addr + s->size;
		n++;
	}
	return n;
}
