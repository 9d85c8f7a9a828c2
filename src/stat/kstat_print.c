// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's report: which sections kstat_print and kstat_print_json give,
 * in which order (perf's layout first, then what perf does not have), the
 * SUMMARY beyond perf kmem, and the rules and row counts the text tables
 * share.  Each table prints itself, beside the data it prints.
 */
#include <string.h>

#include "kstat_impl.h"

#define DOTTED_WIDTH 105
#define DEFAULT_EXTRA_LINES 10 /* rows of the tables perf does not have, without -l */

void kstat_dotted(FILE *out)
{
	for (int i = 0; i < DOTTED_WIDTH; i++)
		fputc('-', out);
	fputc('\n', out);
}

/* How many of n rows the tables beyond perf show: -l, else a default. */
size_t kstat_extra_shown(size_t n, int lines)
{
	return lines < 0 ? (n < DEFAULT_EXTRA_LINES ? n : DEFAULT_EXTRA_LINES) :
		(n < (size_t)lines ? n : (size_t)lines);
}

/* --- printing: beyond perf ----------------------------------------------------------- */

static void print_extra_summary(const struct kstat *ks, FILE *out)
{
	struct kstat_totals t;

	kstat_totals(ks, &t);
	fprintf(out, "\nSUMMARY (beyond perf kmem)\n==========================\n");
	fprintf(out, "Frees on another CPU than their allocation (ping-pong): %llu\n",
		(unsigned long long)t.pingpong);
	fprintf(out, "Allocations requesting another NUMA node than their CPU's: %llu/%llu\n",
		(unsigned long long)t.nr_cross_node, (unsigned long long)t.nr_allocs);
	if (ks->linear_page)
		fprintf(out, "Slab allocations served from another NUMA node than requested "
			     "(or than their CPU's): %llu/%llu\n",
			(unsigned long long)t.slab_remote, (unsigned long long)t.slab_located);
	else
		fprintf(out, "Slab allocations served from another NUMA node than requested: "
			     "not known\n");
	if (t.page_allocs)
		fprintf(out, "Page allocations served from another NUMA node than their CPU's: "
			     "%llu/%llu\n", (unsigned long long)t.page_remote,
			(unsigned long long)t.page_located);
	fprintf(out, "Slab objects alive at the end: %llu (%llu bytes)\n",
		(unsigned long long)t.alive, (unsigned long long)t.alive_bytes);
	fprintf(out, "Events lost: %llu\n", (unsigned long long)ks->lost);
}

/* --- the report ---------------------------------------------------------------- */

void kstat_print(struct kstat *ks, const struct kstat_opts *o, const struct kstat_names *names,
		 FILE *out)
{
	if (o->folded) {
		kstat_print_stacks(ks, o, names, out);
		return;
	}
	if (o->slab) {
		if (o->caller)
			kstat_print_slab_table(ks, true, o->caller_lines, &o->caller_sort, names, out);
		if (o->alloc)
			kstat_print_slab_table(ks, false, o->alloc_lines, &o->alloc_sort, names, out);
		kstat_print_slab_summary(ks, out);
	}
	if (o->page) {
		int width = (int)strlen("GFP flags");

		if (o->caller || o->alloc)
			width = kstat_print_gfp_legend(ks, names, out);
		if (o->caller)
			kstat_print_page_table(ks, true, o->caller_lines, &o->page_caller_sort, width, names,
					       out);
		if (o->alloc)
			kstat_print_page_table(ks, false, o->alloc_lines, &o->page_alloc_sort, width, names,
					       out);
		kstat_print_page_summary(ks, out);
	}
	if (o->slab)
		kstat_print_lifetimes(ks, o, names, out);
	kstat_print_stacks(ks, o, names, out);
	kstat_print_procs(ks, o, out);
	print_extra_summary(ks, out);
}

void kstat_print_json(struct kstat *ks, const struct kstat_opts *o,
		      const struct kstat_names *names, FILE *out)
{
	struct kstat_totals t;

	kstat_totals(ks, &t);
	fputs("{\"type\":\"stat\"", out);
	if (o->slab) {
		fprintf(out, ",\"slab\":{\"requested\":%llu,\"allocated\":%llu,\"freed\":%llu,"
			     "\"wasted\":%llu,\"frag_pct\":%.6f,\"allocs\":%llu,"
			     "\"cross_node\":%llu,\"pingpong\":%llu,\"alive\":%llu,"
			     "\"alive_bytes\":%llu",
			(unsigned long long)ks->requested, (unsigned long long)ks->allocated,
			(unsigned long long)ks->freed,
			(unsigned long long)(ks->allocated - ks->requested),
			kstat_fragmentation(ks->requested, ks->allocated), (unsigned long long)t.nr_allocs,
			(unsigned long long)t.nr_cross_node, (unsigned long long)t.pingpong,
			(unsigned long long)t.alive, (unsigned long long)t.alive_bytes);
		if (ks->linear_page)
			fprintf(out, ",\"served_located\":%llu,\"served_remote\":%llu",
				(unsigned long long)t.slab_located,
				(unsigned long long)t.slab_remote);
		if (o->caller)
			kstat_json_slab_rows(ks, true, o->caller_lines, &o->caller_sort, names, out);
		if (o->alloc)
			kstat_json_slab_rows(ks, false, o->alloc_lines, &o->alloc_sort, names, out);
		fputs(",\"lifetimes\":{", out);
		kstat_json_life_rows(ks, true, o->caller_lines, names, out);
		fputc(',', out);
		kstat_json_life_rows(ks, false, o->caller_lines, names, out);
		fputc('}', out);
		kstat_json_stacks(ks, o, names, out);
		fputc('}', out);
	}
	if (o->page) {
		fprintf(out, ",\"page\":{\"allocs\":%llu,\"frees\":%llu,\"fails\":%llu,"
			     "\"nomatch\":%llu,\"alloc_bytes\":%llu,\"free_bytes\":%llu",
			(unsigned long long)t.page_allocs, (unsigned long long)t.page_frees,
			(unsigned long long)t.page_fails, (unsigned long long)t.page_nomatch,
			(unsigned long long)ks->page_alloc_bytes,
			(unsigned long long)ks->page_free_bytes);
		kstat_json_page_orders(ks, out);
		if (o->caller)
			kstat_json_page_rows(ks, true, o->caller_lines, &o->page_caller_sort, names, out);
		if (o->alloc)
			kstat_json_page_rows(ks, false, o->alloc_lines, &o->page_alloc_sort, names, out);
		fputc('}', out);
	}
	kstat_json_procs(ks, o->caller_lines, out);
	fprintf(out, ",\"lost\":%llu}\n", (unsigned long long)ks->lost);
}
