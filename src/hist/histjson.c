// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --hist --json: an interval as one line of JSON (histjson.h). */
#include "histjson.h"

#include <errno.h>

#include "histfmt.h"
#include "kernel/sources.h"
#include "util/json.h"

/* Non-empty buckets: [{"low":L,"high":H,"count":N}...]. */
static void put_buckets(FILE *out, const __u64 *slots)
{
	bool first = true;

	fputc('[', out);
	for (int s = 0; s < KMT_HIST_SLOTS; s++) {
		if (!slots[s])
			continue;
		fprintf(out, "%s{\"low\":%llu,\"high\":%llu,\"count\":%llu}", first ? "" : ",",
			s ? 1ULL << s : 0, (2ULL << s) - 1, (unsigned long long)slots[s]);
		first = false;
	}
	fputc(']', out);
}

static void put_classes(FILE *out, const struct hist_interval *iv)
{
	fputs("\"classes\":{", out);
	for (int t = 0; t < KMT_HIST_TYPES; t++) {
		fprintf(out, "%s\"%s\":{\"allocs\":%llu,\"frees\":%llu,\"failed\":%llu,"
			     "\"bytes_alloc\":%llu,\"bytes_req\":%llu,\"buckets\":",
			t ? "," : "", event_classes[t].name, (unsigned long long)iv->allocs[t],
			(unsigned long long)iv->frees[t], (unsigned long long)iv->failed[t],
			(unsigned long long)iv->bytes_alloc[t], (unsigned long long)iv->bytes_req[t]);
		put_buckets(out, iv->type_slots[t]);
		fputc('}', out);
	}
	fputc('}', out);
}

static void put_keys(FILE *out, const struct hist_rows *rows, int top)
{
	fputs(",\"keys\":[", out);
	for (size_t i = 0; i < rows->n && (int)i < top; i++) {
		const struct hist_row *r = &rows->row[i];

		fputs(i ? ",{\"key\":" : "{\"key\":", out);
		json_put_string(out, r->label);
		fprintf(out, ",\"allocs\":%llu,\"bytes\":%llu,\"buckets\":",
			(unsigned long long)r->count, (unsigned long long)r->bytes);
		put_buckets(out, r->slots);
		fputc('}', out);
	}
	fprintf(out, "],\"keys_not_shown\":%zu", rows->n > (size_t)top ? rows->n - top : 0);
}

int hist_json_print(FILE *out, const struct hist_interval *iv, enum kmt_hist_by by, int top)
{
	__u64 untracked = 0;

	for (int k = 0; k < KMT_BY_COUNT; k++)
		untracked += iv->untracked[k];
	fprintf(out, "{\"time\":%lld.%06ld,\"seconds\":%.6f,\"value\":\"%s\",\"by\":\"%s\",",
		(long long)iv->end.tv_sec, iv->end.tv_nsec / 1000, iv->seconds,
		iv->value == KMT_HIST_REQ ? "bytes_req" : "bytes_alloc", hist_keys[by].name);
	fprintf(out, "\"missed\":%llu,\"untracked\":%llu,\"buckets\":", (unsigned long long)iv->missed,
		(unsigned long long)untracked);
	put_buckets(out, iv->slots);
	fputc(',', out);
	put_classes(out, iv);
	if (by != KMT_BY_NONE)
		put_keys(out, &iv->by[by], top);
	fputs("}\n", out);
	if (fflush(out) || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}
