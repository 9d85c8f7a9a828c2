// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The exporter's per-key series: which keys have one, and what they count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter/topkeys.h"
#include "unit.h"

/* One reading of "label=count" pairs, seconds long; each allocation
 * counts 10 bytes.  0, or what topkeys said. */
static int add(struct topkeys *tk, const char *const *pairs, double seconds)
{
	int err = 0;

	topkeys_begin(tk, seconds);
	for (; *pairs && !err; pairs++) {
		const char *eq = strchr(*pairs, '=');
		unsigned long long n = strtoull(eq + 1, NULL, 10);
		char label[64];

		snprintf(label, sizeof(label), "%.*s", (int)(eq - *pairs), *pairs);
		err = topkeys_count(tk, label, n, 10 * n);
	}
	return err ? err : topkeys_end(tk);
}

/* The series as "label=count,label=count", checking bytes on the way. */
struct shown {
	char text[256];
	size_t len;
	bool bytes_ok;
};

static void show(void *ctx, const char *label, __u64 count, __u64 bytes)
{
	struct shown *s = ctx;

	s->len += snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s%s=%llu",
			   s->len ? "," : "", label, (unsigned long long)count);
	s->bytes_ok &= bytes == 10 * count;
}

static const char *series(const struct topkeys *tk, bool *bytes_ok)
{
	static struct shown s;

	memset(&s, 0, sizeof(s));
	s.bytes_ok = true;
	topkeys_each(tk, show, &s);
	*bytes_ok = s.bytes_ok;
	return s.text;
}

void test_topkeys(struct unit *u)
{
	struct unit_case c;
	struct topkeys *tk;
	bool ok;

	unit_begin(&c, u, "topkeys.first");
	tk = topkeys_new(2);
	CHECK(&c, tk != NULL);
	if (tk) {
		CHECK_STR(&c, series(tk, &ok), "other=0");
		CHECK(&c, !add(tk, (const char *[]){ "a=50", "b=30", "c=5", "other=2", NULL }, 1));
		/* The two busiest, the third and the "other" row summed. */
		CHECK_STR(&c, series(tk, &ok), "a=50,b=30,other=7");
		CHECK(&c, ok);
	}
	unit_end(&c);

	/* A key busy late takes the series of one gone quiet; what each
	 * counted before stays where it was counted. */
	unit_begin(&c, u, "topkeys.late");
	if (tk) {
		CHECK(&c, !add(tk, (const char *[]){ "a=40", "d=100", NULL }, 1));
		CHECK_STR(&c, series(tk, &ok), "d=100,a=90,other=7");
		CHECK(&c, ok);
	}
	unit_end(&c);

	/* Two keys of about the same rate do not take turns: c must be more
	 * than twice as busy as b of late to take its series. */
	unit_begin(&c, u, "topkeys.hysteresis");
	if (tk) {
		topkeys_free(tk);
		tk = topkeys_new(1);
		CHECK(&c, tk != NULL);
	}
	if (tk) {
		CHECK(&c, !add(tk, (const char *[]){ "b=10", NULL }, 1));
		CHECK(&c, !add(tk, (const char *[]){ "c=15", NULL }, 1));
		CHECK_STR(&c, series(tk, &ok), "b=10,other=15");
		CHECK(&c, !add(tk, (const char *[]){ "c=15", NULL }, 1));
		CHECK_STR(&c, series(tk, &ok), "c=15,other=15");
	}
	unit_end(&c);

	/* Scores decay by half every TOPKEYS_HALF_LIFE seconds: after two
	 * half-lives, 100 counts 25, less than half of 60. */
	unit_begin(&c, u, "topkeys.decay");
	if (tk) {
		topkeys_free(tk);
		tk = topkeys_new(1);
		CHECK(&c, tk != NULL);
	}
	if (tk) {
		CHECK(&c, !add(tk, (const char *[]){ "x=100", NULL }, 1));
		CHECK(&c, !add(tk, (const char *[]){ "y=60", NULL }, 2 * TOPKEYS_HALF_LIFE));
		CHECK_STR(&c, series(tk, &ok), "y=60,other=0");
	}
	unit_end(&c);

	/* Counters never go down, whoever has the series; many keys that
	 * come and go are forgotten once quiet. */
	unit_begin(&c, u, "topkeys.monotonic");
	if (tk) {
		char label[16];
		const char *pair[2] = { label, NULL };
		__u64 before = 0;

		for (int i = 0; i < 2000; i++) {
			snprintf(label, sizeof(label), "k%d=%d", i, 1 + i % 7);
			CHECK(&c, !add(tk, pair, 30));
			const char *s = series(tk, &ok);
			const char *o = strstr(s, "other=");
			__u64 other = o ? strtoull(o + 6, NULL, 10) : 0;

			CHECK(&c, other >= before);
			before = other;
		}
		CHECK(&c, ok);
	}
	topkeys_free(tk);
	unit_end(&c);
}
