// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --listen: counters from readings, rendered for Prometheus (metrics.h). */
#include "metrics.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "topkeys.h"
#include "hist/histfmt.h"
#include "kernel/sources.h"
#include "recording/record.h"

const char metrics_text_type[] = "text/plain; version=0.0.4; charset=utf-8";
const char metrics_openmetrics_type[] = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#define OTHER_LABEL TOPKEYS_OTHER

struct outstanding_row {
	char *tag;
	long long bytes, calls;
};

/* Whole-run sums of the readings, per allocation type. */
struct totals {
	__u64 allocs[KMT_HIST_TYPES];
	__u64 frees[KMT_HIST_TYPES];
	__u64 failed[KMT_HIST_TYPES];
	__u64 bytes_alloc[KMT_HIST_TYPES];
	__u64 bytes_req[KMT_HIST_TYPES];
	__u64 slots[KMT_HIST_TYPES][KMT_HIST_SLOTS];
	__u64 untracked[KMT_BY_COUNT];
};

struct metrics {
	struct metrics_config cfg;
	struct totals t;
	__u64 missed;
	struct topkeys *by[KMT_BY_COUNT]; /* the kinds with a key_label */
	struct outstanding_row *rows; /* top of them, then "other" */
	int nrows;
	bool other_row;
	struct kmt_ai_stats ai;
	bool has_flight;
	struct metrics_flight flight;
};

/* The kinds with per-key series: one per event or page order would repeat
 * the class counters. */
#define SERIES_KINDS (1U << KMT_BY_CACHE | 1U << KMT_BY_CALLSITE | 1U << KMT_BY_COMM | \
		      1U << KMT_BY_CGROUP)

/* A kind's label name, or NULL for a kind without series. */
static const char *key_label(int kind)
{
	return (SERIES_KINDS & (1U << kind)) ? hist_keys[kind].name : NULL;
}

struct metrics *metrics_new(const struct metrics_config *cfg)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->cfg = *cfg;
	for (int k = 0; k < KMT_BY_COUNT; k++) {
		if (!key_label(k))
			continue;
		m->by[k] = topkeys_new(cfg->top);
		if (!m->by[k]) {
			metrics_free(m);
			return NULL;
		}
	}
	m->rows = calloc(cfg->top + 1, sizeof(*m->rows));
	if (!m->rows) {
		metrics_free(m);
		return NULL;
	}
	return m;
}

static void clear_rows(struct metrics *m)
{
	for (int i = 0; i < m->nrows; i++)
		free(m->rows[i].tag);
	m->nrows = 0;
	m->other_row = false;
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	for (int k = 0; k < KMT_BY_COUNT; k++)
		topkeys_free(m->by[k]);
	if (m->rows)
		clear_rows(m);
	free(m->rows);
	free(m);
}

/* --- readings ----------------------------------------------------------------- */

static void add_types(__u64 *dst, const __u64 *src)
{
	for (int t = 0; t < KMT_HIST_TYPES; t++)
		dst[t] += src[t];
}

/*
 * A label value without kernel addresses: /metrics is open to every local
 * user, to whom the kernel hides its addresses (kptr_restrict), and a call
 * site without a symbol is labelled by its address.  A hexadecimal number
 * of 12 digits or more (a kernel address; offsets within a function are
 * short) becomes "unknown", so all such sites share one series.
 */
#define ADDRESS_MIN_DIGITS 12

void metrics_hide_addresses(const char *in, char *out, size_t size)
{
	size_t o = 0;

	if (!size)
		return;
	while (*in && o + 1 < size) {
		size_t digits = 0;

		if (in[0] == '0' && in[1] == 'x')
			while (isxdigit((unsigned char)in[2 + digits]))
				digits++;
		if (digits < ADDRESS_MIN_DIGITS) {
			out[o++] = *in++;
			continue;
		}
		o += snprintf(out + o, size - o, "unknown");
		if (o >= size)
			o = size - 1;
		in += 2 + digits;
	}
	out[o] = '\0';
}

static int add_keys(struct topkeys *tk, const struct hist_rows *rows, double seconds)
{
	char label[HIST_LABEL_LEN];

	topkeys_begin(tk, seconds);
	for (size_t i = 0; i < rows->n; i++) {
		metrics_hide_addresses(rows->row[i].label, label, sizeof(label));
		if (topkeys_count(tk, label, rows->row[i].count, rows->row[i].bytes))
			return -ENOMEM;
	}
	return topkeys_end(tk);
}

int metrics_add_interval(struct metrics *m, const struct hist_interval *iv)
{
	struct totals *t = &m->t;

	add_types(t->allocs, iv->allocs);
	add_types(t->frees, iv->frees);
	add_types(t->failed, iv->failed);
	add_types(t->bytes_alloc, iv->bytes_alloc);
	add_types(t->bytes_req, iv->bytes_req);
	for (int ty = 0; ty < KMT_HIST_TYPES; ty++)
		for (int s = 0; s < KMT_HIST_SLOTS; s++)
			t->slots[ty][s] += iv->type_slots[ty][s];
	for (int k = 0; k < KMT_BY_COUNT; k++) {
		t->untracked[k] += iv->untracked[k];
		if (key_label(k) && add_keys(m->by[k], &iv->by[k], iv->seconds))
			return -ENOMEM;
	}
	return 0;
}

void metrics_set_flight(struct metrics *m, const struct metrics_flight *f)
{
	m->has_flight = true;
	m->flight = *f;
}

void metrics_set_missed(struct metrics *m, __u64 missed_total)
{
	m->missed = missed_total;
}

void metrics_outstanding_begin(struct metrics *m)
{
	clear_rows(m);
}

int metrics_outstanding_row(struct metrics *m, const char *raw_tag, long long bytes,
			    long long calls)
{
	struct outstanding_row *r;
	char tag[512];

	metrics_hide_addresses(raw_tag, tag, sizeof(tag));
	/* Sites without a symbol share one tag: one row. */
	for (int i = 0; i < m->nrows; i++) {
		if (!strcmp(m->rows[i].tag, tag)) {
			m->rows[i].bytes += bytes;
			m->rows[i].calls += calls;
			return 0;
		}
	}
	if (m->nrows == m->cfg.top || m->other_row) {
		if (!m->other_row) {
			r = &m->rows[m->nrows++];
			r->tag = strdup(OTHER_LABEL);
			if (!r->tag)
				return -ENOMEM;
			r->bytes = r->calls = 0;
			m->other_row = true;
		}
		r = &m->rows[m->nrows - 1];
		r->bytes += bytes;
		r->calls += calls;
		return 0;
	}
	r = &m->rows[m->nrows];
	r->tag = strdup(tag);
	if (!r->tag)
		return -ENOMEM;
	r->bytes = bytes;
	r->calls = calls;
	m->nrows++;
	return 0;
}

void metrics_outstanding_end(struct metrics *m, const struct kmt_ai_stats *st)
{
	m->ai = *st;
}

/* --- rendering ---------------------------------------------------------------- */

/* A label value: backslash, double quote and newline escaped. */
static void put_label(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', out);
		if (*s == '\n') {
			fputs("\\n", out);
			continue;
		}
		fputc(*s, out);
	}
}

/*
 * HELP and TYPE of a family.  OpenMetrics names a counter's family
 * without its _total, which only its samples carry.
 */
static void family(FILE *out, bool om, const char *name, const char *type, const char *help)
{
	size_t len = strlen(name);

	if (om && !strcmp(type, "counter") && len > 6 && !strcmp(name + len - 6, "_total"))
		len -= 6;
	fprintf(out, "# HELP %.*s %s\n# TYPE %.*s %s\n", (int)len, name, help, (int)len, name,
		type);
}

/* Counters per allocation type, labelled with its class and event. */
struct type_family {
	const char *name;
	const char *help;
	size_t offset; /* in struct totals */
	bool frees;    /* labelled with the free event, not the allocation's */
};

static const struct type_family type_families[] = {
	{ "kmemsnoop_allocations_total", "Successful allocations.",
	  offsetof(struct totals, allocs), false },
	{ "kmemsnoop_failed_allocations_total", "Allocations that returned NULL.",
	  offsetof(struct totals, failed), false },
	{ "kmemsnoop_frees_total", "Frees of a non-NULL pointer.",
	  offsetof(struct totals, frees), true },
	{ "kmemsnoop_allocated_bytes_total", "Bytes allocated (the allocator's size classes).",
	  offsetof(struct totals, bytes_alloc), false },
	{ "kmemsnoop_requested_bytes_total", "Bytes requested by the callers.",
	  offsetof(struct totals, bytes_req), false },
};

static void render_types(const struct metrics *m, FILE *out, bool om)
{
	for (size_t i = 0; i < sizeof(type_families) / sizeof(type_families[0]); i++) {
		const struct type_family *f = &type_families[i];
		const __u64 *v = (const __u64 *)((const char *)&m->t + f->offset);

		family(out, om, f->name, "counter", f->help);
		for (int t = 0; t < KMT_HIST_TYPES; t++)
			fprintf(out, "%s{class=\"%s\",event=\"%s\"} %llu\n", f->name,
				event_classes[t].name, kmt_type_event_name(t, f->frees),
				(unsigned long long)v[t]);
	}
}

/*
 * Bucket s counts the sizes from 2^s to 2^(s+1) - 1, the last one also
 * everything larger: its upper bound is +Inf.
 */
static void render_sizes(const struct metrics *m, FILE *out, bool om)
{
	const char *name = "kmemsnoop_allocation_size_bytes";

	family(out, om, name, "histogram",
	       m->cfg.value == KMT_HIST_REQ ? "Sizes of successful allocations, bytes requested." :
					      "Sizes of successful allocations, bytes allocated.");
	for (int t = 0; t < KMT_HIST_TYPES; t++) {
		const char *class = event_classes[t].name;
		__u64 cum = 0;

		for (int s = 0; s < KMT_HIST_SLOTS - 1; s++) {
			cum += m->t.slots[t][s];
			fprintf(out, "%s_bucket{class=\"%s\",le=\"%llu\"} %llu\n", name, class,
				(1ULL << (s + 1)) - 1, (unsigned long long)cum);
		}
		cum += m->t.slots[t][KMT_HIST_SLOTS - 1];
		fprintf(out, "%s_bucket{class=\"%s\",le=\"+Inf\"} %llu\n", name, class,
			(unsigned long long)cum);
		fprintf(out, "%s_sum{class=\"%s\"} %llu\n", name, class,
			(unsigned long long)(m->cfg.value == KMT_HIST_REQ ? m->t.bytes_req[t] :
									   m->t.bytes_alloc[t]));
		fprintf(out, "%s_count{class=\"%s\"} %llu\n", name, class, (unsigned long long)cum);
	}
}

static void key_sample(FILE *out, const char *name, const char *label, const char *value,
		       unsigned long long v)
{
	fprintf(out, "%s{%s=\"", name, label);
	put_label(out, value);
	fprintf(out, "\"} %llu\n", v);
}

struct key_render {
	FILE *out;
	const char *name, *label;
	bool bytes;
};

static void render_key(void *ctx, const char *value, __u64 count, __u64 bytes)
{
	const struct key_render *r = ctx;

	key_sample(r->out, r->name, r->label, value, r->bytes ? bytes : count);
}

static void render_keys(const struct metrics *m, FILE *out, bool om)
{
	char name[96], help[224];

	for (int k = 0; k < KMT_BY_COUNT; k++) {
		struct key_render r = { .out = out, .name = name, .label = key_label(k) };

		if (!r.label)
			continue;
		for (int bytes = 0; bytes < 2; bytes++) {
			snprintf(name, sizeof(name), "kmemsnoop_%s_%s_total", r.label,
				 bytes ? "allocated_bytes" : "allocations");
			snprintf(help, sizeof(help), "Successful allocations%s by %s: the %d busiest "
				 "of late have a series, counting while they have it; the others "
				 "count under %s.", bytes ? " (bytes)" : "", r.label, m->cfg.top,
				 OTHER_LABEL);
			family(out, om, name, "counter", help);
			r.bytes = bytes;
			topkeys_each(m->by[k], render_key, &r);
		}
	}
}

static void render_outstanding(const struct metrics *m, FILE *out, bool om)
{
	static const char *const names[2] = { "kmemsnoop_outstanding_allocations",
					      "kmemsnoop_outstanding_bytes" };
	char help[160];

	for (int bytes = 0; bytes < 2; bytes++) {
		snprintf(help, sizeof(help), "Memory allocated since the start and not freed%s, by "
			 "call site (--allocinfo's tag): the %d largest, the others under %s.",
			 bytes ? " (bytes)" : "", m->cfg.top, OTHER_LABEL);
		family(out, om, names[bytes], "gauge", help);
		for (int i = 0; i < m->nrows; i++)
			key_sample(out, names[bytes], "callsite", m->rows[i].tag,
				   (unsigned long long)(bytes ? m->rows[i].bytes : m->rows[i].calls));
	}
}

/* What the numbers above do not count. */
static void render_losses(const struct metrics *m, FILE *out, bool om)
{
	static const char *const reasons[] = { "pointer_table_full", "site_table_full",
					       "stack_table_full" };
	const __u64 lost[] = { m->ai.ptrs_full, m->ai.sites_full, m->ai.stack_failed };
	const char *name;

	name = "kmemsnoop_missed_events_total";
	family(out, om, name, "counter", "Events the kernel did not run kmemsnoop's programs for "
	       "(the same program was running on their CPU).");
	fprintf(out, "%s %llu\n", name, (unsigned long long)m->missed);
	if (!m->cfg.counts)
		return;

	name = "kmemsnoop_untracked_allocations_total";
	family(out, om, name, "counter", "Allocations counted in the totals but not under their "
	       "key: the key table was full.");
	for (int k = 0; k < KMT_BY_COUNT; k++)
		if (key_label(k))
			fprintf(out, "%s{table=\"%s\"} %llu\n", name, key_label(k),
				(unsigned long long)m->t.untracked[k]);

	name = "kmemsnoop_lost_allocations_total";
	family(out, om, name, "counter", "Allocations the outstanding table could not count.");
	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
		fprintf(out, "%s{reason=\"%s\"} %llu\n", name, reasons[i],
			(unsigned long long)lost[i]);

	name = "kmemsnoop_untracked_frees_total";
	family(out, om, name, "counter", "Frees of memory not allocated during the run, or not "
	       "selected by the filters (ignored by the outstanding table).");
	for (int t = 0; t < KMT_HIST_TYPES; t++)
		fprintf(out, "%s{class=\"%s\"} %llu\n", name, event_classes[t].name,
			(unsigned long long)m->ai.untracked_frees[t]);
}

/* --flight's triggers and dumps, when it runs beside. */
static void render_flight(const struct metrics *m, FILE *out, bool om)
{
	static const char *const kinds[KMT_TRIGGER_KINDS] = KMT_TRIGGER_NAMES;
	const char *name = "kmemsnoop_flight_triggers_total";

	if (!m->has_flight)
		return;
	family(out, om, name, "counter", "Flight recorder triggers (a trigger while a dump is "
	       "pending goes into that dump).");
	for (int k = 0; k < KMT_TRIGGER_KINDS; k++)
		fprintf(out, "%s{trigger=\"%s\"} %llu\n", name, kinds[k],
			(unsigned long long)m->flight.triggers[k]);
	name = "kmemsnoop_flight_dumps_total";
	family(out, om, name, "counter", "Flight recorder dumps written.");
	fprintf(out, "%s %llu\n", name, (unsigned long long)m->flight.dumps);
	name = "kmemsnoop_flight_dump_failures_total";
	family(out, om, name, "counter", "Flight recorder dumps that could not be written.");
	fprintf(out, "%s %llu\n", name, (unsigned long long)m->flight.dump_failures);
}

int metrics_render(const struct metrics *m, FILE *out, bool openmetrics)
{
	family(out, openmetrics, "kmemsnoop_build_info", "gauge",
	       "kmemsnoop's version, as a label; always 1.");
	fprintf(out, "kmemsnoop_build_info{version=\"%s\"} 1\n", m->cfg.version);
	if (m->cfg.counts) {
		render_types(m, out, openmetrics);
		render_sizes(m, out, openmetrics);
		render_keys(m, out, openmetrics);
		render_outstanding(m, out, openmetrics);
	}
	render_losses(m, out, openmetrics);
	render_flight(m, out, openmetrics);
	if (openmetrics)
		fputs("# EOF\n", out);
	if (fflush(out) || ferror(out))
		return -(errno ? errno : EIO);
	return 0;
}
