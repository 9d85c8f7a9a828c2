// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --hist as plain text (stdout is not a terminal, or a pipe). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "histfmt.h"
#include "histtext.h"

#define STARS 40

void hist_print_log2(FILE *out, const __u64 slots[KMT_HIST_SLOTS], const char *unit)
{
	int last = hist_last_slot(slots);
	__u64 max = hist_max(slots, KMT_HIST_SLOTS);
	char bar[STARS + 1];

	if (last < 0)
		return;
	fprintf(out, "%5s%-19s : count    distribution\n", "", unit);
	for (int s = 0; s <= last; s++) {
		hist_bar(bar, STARS, slots[s], max);
		fprintf(out, "%10llu -> %-10llu : %-8llu |%s|\n",
			(unsigned long long)hist_bucket_low(s), (unsigned long long)hist_bucket_high(s),
			(unsigned long long)slots[s], bar);
	}
}

static void print_totals(FILE *out, const struct hist_interval *iv, bool keyed)
{
	char when[16] = "";
	struct tm tm;
	__u64 untracked = 0;

	if (localtime_r(&iv->end.tv_sec, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	fprintf(out, "%s interval=%.2fs allocs=%llu frees=%llu failed=%llu alloc_bytes=%llu "
		     "req_bytes=%llu missed=%llu", when, iv->seconds,
		(unsigned long long)hist_total(iv->allocs), (unsigned long long)hist_total(iv->frees),
		(unsigned long long)hist_total(iv->failed),
		(unsigned long long)hist_total(iv->bytes_alloc),
		(unsigned long long)hist_total(iv->bytes_req), (unsigned long long)iv->missed);
	for (int k = 0; k < KMT_BY_COUNT; k++)
		untracked += iv->untracked[k];
	if (keyed)
		fprintf(out, " untracked=%llu", (unsigned long long)untracked);
	fputc('\n', out);
}

static void print_keys(FILE *out, const struct hist_interval *iv, const struct hist_text_opts *o,
		       const char *unit)
{
	const struct hist_rows *rows = &iv->by[o->by];
	size_t shown = rows->n < (size_t)o->top ? rows->n : (size_t)o->top;
	__u64 rest_count = 0;

	for (size_t i = 0; i < shown; i++) {
		const struct hist_row *r = &rows->row[i];

		fprintf(out, "\n%s = %s (allocs=%llu bytes=%llu)\n", hist_kind_name(o->by, 0),
			r->label, (unsigned long long)r->count, (unsigned long long)r->bytes);
		hist_print_log2(out, r->slots, unit);
	}
	for (size_t i = shown; i < rows->n; i++)
		rest_count += rows->row[i].count;
	if (rows->n > shown)
		fprintf(out, "\n(%zu more %s with %llu allocations not shown; --top raises the "
			     "limit)\n", rows->n - shown, hist_kind_name(o->by, 1),
			(unsigned long long)rest_count);
}

int hist_text_print(FILE *out, const struct hist_interval *iv, const struct hist_text_opts *opts)
{
	const char *unit = iv->value == KMT_HIST_REQ ? "req bytes" : "bytes";

	print_totals(out, iv, opts->keyed);
	if (opts->by == KMT_BY_NONE)
		hist_print_log2(out, iv->slots, unit);
	else
		print_keys(out, iv, opts, unit);
	fputc('\n', out);
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}
