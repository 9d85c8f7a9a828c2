// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The --allocinfo table without BPF (aitable.c): merging, sorting, the
 * site cache across its growth, describing a key once, losses, errors.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocinfo/aitable.h"
#include "unit.h"

void test_aitable(struct unit *u);

/* Tags from a table of keys; any other key is "k<key> func:f<key>". */
struct describer {
	unsigned int calls;
	__u64 fail_key; /* describing it fails, unless 0 */
	const __u64 *keys;
	const char *const *tags;
	const char *const *folded;
	size_t n;
};

static int describe(void *ctx, __u64 key, struct ai_site_text *text)
{
	struct describer *d = ctx;
	char buf[64];

	d->calls++;
	if (d->fail_key && key == d->fail_key)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++) {
		if (d->keys[i] != key)
			continue;
		text->tag = strdup(d->tags[i]);
		if (d->folded) {
			snprintf(buf, sizeof(buf), "        frame%zu\n", i);
			text->frames = strdup(buf);
			text->folded = strdup(d->folded[i]);
		}
		return 0;
	}
	snprintf(buf, sizeof(buf), "k%llu func:f%llu", (unsigned long long)key,
		 (unsigned long long)key);
	text->tag = strdup(buf);
	return 0;
}

/* Prints t into a string (malloc'd); notes into another when wanted. */
static char *print_to_string(struct aitable *t, const struct kmt_ai_stats *st,
			     unsigned long long misses, char **notes_out)
{
	char *text = NULL, *notes = NULL;
	size_t len = 0, nlen = 0;
	FILE *out = open_memstream(&text, &len), *notes_f = open_memstream(&notes, &nlen);
	int err = aitable_print(t, st, misses, out, notes_f);

	fclose(out);
	fclose(notes_f);
	if (notes_out)
		*notes_out = notes;
	else
		free(notes);
	if (err) {
		free(text);
		return NULL;
	}
	return text;
}

static const struct kmt_ai_stats no_losses;

static void test_merge(struct unit *u)
{
	static const __u64 keys[] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL,
				      0xffffffff81000030ULL };
	static const char *const tags[] = { "ipc/msgutil.c:50 func:alloc_msg",
					    "ipc/msgutil.c:50 func:alloc_msg", "fs/file.c:1 func:a" };
	struct describer d = { .keys = keys, .tags = tags, .n = 3 };
	struct aitable_config cfg = { .describe = describe, .ctx = &d };
	struct aitable *t = aitable_new(&cfg);
	struct unit_case c;
	char *out;

	unit_begin(&c, u, "aitable.merge_same_tag");
	CHECK(&c, t != NULL);
	aitable_begin(t);
	CHECK(&c, aitable_add(t, keys[0], 512, 2) == 0);
	CHECK(&c, aitable_add(t, keys[1], 256, 1) == 0);
	CHECK(&c, aitable_add(t, keys[2], 64, 1) == 0);
	out = print_to_string(t, &no_losses, 0, NULL);
	CHECK_STR(&c, out, "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n"
			   "          64        1 fs/file.c:1 func:a \n"
			   "         768        3 ipc/msgutil.c:50 func:alloc_msg \n");
	free(out);
	/* A second reading describes nothing again. */
	aitable_begin(t);
	CHECK(&c, aitable_add(t, keys[2], 0, 0) == 0);
	CHECK(&c, aitable_add(t, keys[0], 128, 1) == 0);
	out = print_to_string(t, &no_losses, 0, NULL);
	CHECK_STR(&c, out, "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n"
			   "           0        0 fs/file.c:1 func:a \n"
			   "         128        1 ipc/msgutil.c:50 func:alloc_msg \n");
	CHECK_U64(&c, d.calls, 3);
	CHECK_U64(&c, aitable_sites(t), 3);
	free(out);
	aitable_free(t);
	unit_end(&c);
}

static void test_stacks(struct unit *u)
{
	static const __u64 keys[] = { 1, 2, 3 };
	static const char *const tags[] = { "b func:b", "a func:a", "b func:b" };
	static const char *const folded[] = { "x;b", "y;a", "x;b" };
	struct describer d = { .keys = keys, .tags = tags, .folded = folded, .n = 3 };
	struct aitable_config cfg = { .stacks = true, .describe = describe, .ctx = &d };
	struct aitable *t = aitable_new(&cfg);
	struct unit_case c;
	char *out, *notes;

	unit_begin(&c, u, "aitable.stacks_by_bytes");
	aitable_begin(t);
	aitable_add(t, 1, 100, 1);
	aitable_add(t, 2, 100, 1);
	aitable_add(t, 3, 300, 3);
	out = print_to_string(t, &no_losses, 0, NULL);
	/* Not merged; by bytes, ties by tag; each with its frames. */
	CHECK_STR(&c, out, "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n"
			   "         300        3 b func:b \n        frame2\n"
			   "         100        1 a func:a \n        frame1\n"
			   "         100        1 b func:b \n        frame0\n");
	free(out);
	aitable_free(t);
	unit_end(&c);

	unit_begin(&c, u, "aitable.folded");
	cfg.folded = true;
	t = aitable_new(&cfg);
	aitable_begin(t);
	aitable_add(t, 1, 100, 1);
	aitable_add(t, 2, -50, -1);
	aitable_add(t, 3, 300, 3);
	struct kmt_ai_stats st = { .ptrs_full = 2, .ptrs_full_bytes = 64 };
	out = print_to_string(t, &st, 0, &notes);
	/* Merged by folded text; nothing not positive; losses to notes. */
	CHECK_STR(&c, out, "x;b 400\n");
	CHECK_STR(&c, notes, "# kmemsnoop: not counted: 2 allocations (64 bytes): the pointer "
			     "table was full (--max-ptrs)\n");
	free(out);
	free(notes);
	aitable_free(t);
	unit_end(&c);
}

/* Many keys: the site cache grows several times while rows are added. */
static void test_growth(struct unit *u)
{
	enum { KEYS = 5000 };
	struct describer d = { 0 };
	struct aitable_config cfg = { .describe = describe, .ctx = &d };
	struct aitable *t = aitable_new(&cfg);
	struct unit_case c;
	unsigned long long sum = 0, n = 0, bytes, calls, key, bad = 0;
	char *out, *line, *save = NULL;

	unit_begin(&c, u, "aitable.growth");
	aitable_begin(t);
	for (__u64 k = 1; k <= KEYS; k++)
		CHECK(&c, aitable_add(t, 0xffffffff80000000ULL + k * 64, (long long)k, 1) == 0);
	out = print_to_string(t, &no_losses, 0, NULL);
	CHECK(&c, out != NULL);
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == 'a' || line[0] == '#')
			continue;
		if (sscanf(line, "%llu %llu k%llu", &bytes, &calls, &key) != 3 ||
		    key != 0xffffffff80000000ULL + bytes * 64 || calls != 1)
			bad++;
		sum += bytes;
		n++;
	}
	CHECK_U64(&c, n, KEYS);
	CHECK_U64(&c, bad, 0);
	CHECK_U64(&c, sum, (unsigned long long)KEYS * (KEYS + 1) / 2);
	CHECK_U64(&c, d.calls, KEYS);
	free(out);
	aitable_free(t);
	unit_end(&c);
}

static void test_errors(struct unit *u)
{
	struct describer d = { .fail_key = 7 };
	struct aitable_config cfg = { .describe = describe, .ctx = &d };
	struct aitable *t = aitable_new(&cfg);
	struct kmt_ai_stats st = { .sites_full = 1, .sites_full_bytes = 8, .stack_failed = 3,
				   .stack_failed_bytes = 24, .replaced = 4, .replaced_bytes = 32 };
	struct unit_case c;
	FILE *full;
	char *out;

	unit_begin(&c, u, "aitable.describe_fails");
	aitable_begin(t);
	CHECK(&c, aitable_add(t, 7, 1, 1) == -ENOMEM);
	CHECK(&c, aitable_add(t, 8, 1, 1) == 0);
	CHECK_U64(&c, aitable_sites(t), 1);
	unit_end(&c);

	unit_begin(&c, u, "aitable.loss_lines");
	out = print_to_string(t, &st, 5, NULL);
	CHECK_STR(&c, out, "allocinfo - version: 1.0\n#     <size>  <calls> <tag info>\n"
		  "# kmemsnoop: not counted: 1 allocations (8 bytes): the site table was full\n"
		  "# kmemsnoop: not counted: 3 allocations (24 bytes): their stack found no room "
		  "in the stack table (--max-stacks)\n"
		  "# kmemsnoop: 5 events of any process not seen: they happened while the same BPF "
		  "program ran on their CPU (an interrupt during a run, or another task while a run was preempted: 7.x kernels)\n"
		  "# kmemsnoop: 4 allocations (32 bytes) were counted as freed when their address "
		  "was allocated again: their free was not seen\n"
		  "           1        1 k8 func:f8 \n");
	free(out);
	unit_end(&c);

	unit_begin(&c, u, "aitable.output_error");
	full = fopen("/dev/full", "w");
	if (!full) {
		unit_fail(&c, __FILE__, __LINE__, "cannot open /dev/full");
	} else {
		aitable_begin(t);
		aitable_add(t, 8, 1, 1);
		CHECK(&c, aitable_print(t, &no_losses, 0, full, full) == -ENOSPC);
		fclose(full);
	}
	aitable_free(t);
	unit_end(&c);
}

void test_aitable(struct unit *u)
{
	test_merge(u);
	test_stacks(u);
	test_growth(u);
	test_errors(u);
}
