// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --listen's page: no kernel address reaches it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/metrics.h"
#include "unit.h"

static void hidden(struct unit_case *c, const char *in, const char *want)
{
	char out[128];

	metrics_hide_addresses(in, out, sizeof(out));
	CHECK_STR(c, out, want);
}

/* The page for one reading with call-site keys and outstanding rows. */
static char *page_of(const char *const *sites, int nsites)
{
	struct metrics_config cfg = { .top = 10, .version = "test", .counts = true };
	struct metrics *m = metrics_new(&cfg);
	struct hist_interval iv = { .seconds = 1 };
	struct hist_row rows[4] = { 0 };
	struct kmt_ai_stats st = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *out;

	if (!m)
		return NULL;
	for (int i = 0; i < nsites && i < 4; i++) {
		snprintf(rows[i].label, sizeof(rows[i].label), "%s", sites[i]);
		rows[i].count = 10 + i;
		rows[i].bytes = 100;
	}
	iv.by[KMT_BY_CALLSITE].row = rows;
	iv.by[KMT_BY_CALLSITE].n = nsites;
	metrics_add_interval(m, &iv);
	metrics_outstanding_begin(m);
	for (int i = 0; i < nsites; i++)
		metrics_outstanding_row(m, sites[i], 4096, 1);
	metrics_outstanding_end(m, &st);
	out = open_memstream(&text, &len);
	if (out) {
		metrics_render(m, out, false);
		fclose(out);
	}
	metrics_free(m);
	return text;
}

void test_metrics(struct unit *u)
{
	struct unit_case c;
	char *page;

	unit_begin(&c, u, "metrics.hide_addresses");
	hidden(&c, "load_msg+0x41/0x90", "load_msg+0x41/0x90");
	hidden(&c, "0xffffffffc0a01234", "unknown");
	hidden(&c, "0xffffffffc0a01234 func:unknown", "unknown func:unknown");
	hidden(&c, "ipc/msgutil.c:53 func:load_msg", "ipc/msgutil.c:53 func:load_msg");
	hidden(&c, "(cgroup 0x1234567)", "(cgroup 0x1234567)");
	hidden(&c, "a 0xffff800080001000 b 0xffff800080002000", "a unknown b unknown");
	unit_end(&c);

	/* Two sites without a symbol: one series and one row, summed, and
	 * neither address on the page. */
	unit_begin(&c, u, "metrics.no_address_on_page");
	page = page_of((const char *[]){ "0xffffffffc0a01234", "load_msg+0x41/0x90",
					 "0xffffffffc0b05678" }, 3);
	CHECK(&c, page != NULL);
	if (page) {
		CHECK(&c, !strstr(page, "ffffffffc0"));
		CHECK(&c, strstr(page, "kmemsnoop_callsite_allocations_total{callsite=\"unknown\"} 22\n") != NULL);
		CHECK(&c, strstr(page, "kmemsnoop_outstanding_bytes{callsite=\"unknown\"} 8192\n") != NULL);
		CHECK(&c, strstr(page, "kmemsnoop_callsite_allocations_total{callsite=\"load_msg+0x41/0x90\"} 11\n") != NULL);
	}
	free(page);
	unit_end(&c);
}
