// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The --pprof encoder (pprof.c): what it writes is read back with
 * protobuf-c's own decoder (the messages of src/allocinfo/pprof.proto) and checked
 * field by field; interning across readings; the gzip'd file and its mode.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "allocinfo/pprof.h"
#include "pprof.pb-c.h"
#include "unit.h"

void test_pprof(struct unit *u);

static const char *str(const Pprof__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "<bad index>";
}

static const Pprof__Location *location(const Pprof__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

static const Pprof__Function *function(const Pprof__Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

/* The name of line i of location id ("" when there is none). */
static const char *line_func(const Pprof__Profile *p, uint64_t id, size_t i)
{
	const Pprof__Location *l = location(p, id);
	const Pprof__Function *f = l && i < l->n_line ? function(p, l->line[i]->function_id) : NULL;

	return f ? str(p, f->name) : "";
}

static Pprof__Profile *decode(const struct pprof *pp)
{
	unsigned char *buf;
	size_t len;
	Pprof__Profile *p = NULL;

	if (!pprof_encode(pp, 1234567890LL, &buf, &len))
		p = pprof__profile__unpack(NULL, len, buf);
	free(buf);
	return p;
}

/* Two stacks sharing a frame: an allocator call site with an inlined
 * wrapper, in its caller. */
static struct pprof *two_samples(bool inuse, uint64_t *leaf, uint64_t *caller)
{
	char err[256];
	struct pprof *pp = pprof_new(inuse, err, sizeof(err));
	const struct pprof_line site[] = {
		{ .func = "alloc_msg", .file = "ipc/msgutil.c", .line = 53 },
		{ .func = "load_msg", .file = "ipc/msgutil.c", .line = 91 },
	};
	const struct pprof_line outer[] = { { .func = "do_msgsnd" } };
	const long long v1[PPROF_VALUES] = { 30, 7680, 20, 5120 };
	const long long v2[PPROF_VALUES] = { 1, 64, 0, 0 };
	uint64_t locs[2];

	if (!pp)
		return NULL;
	*leaf = pprof_add_location(pp, 0xffffffff81234567ULL, site, 2);
	*caller = pprof_add_location(pp, 0xffffffff81000010ULL, outer, 1);
	locs[0] = *leaf;
	locs[1] = *caller;
	if (!*leaf || !*caller || pprof_add_sample(pp, locs, 2, v1) ||
	    pprof_add_sample(pp, locs + 1, 1, v2)) {
		pprof_free(pp);
		return NULL;
	}
	return pp;
}

static void test_encode(struct unit *u)
{
	struct unit_case c;
	uint64_t leaf = 0, caller = 0;
	struct pprof *pp = two_samples(true, &leaf, &caller);
	Pprof__Profile *p = pp ? decode(pp) : NULL;
	static const char *const types[][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};

	unit_begin(&c, u, "pprof.encode_decode");
	CHECK(&c, pp && p);
	if (!p) {
		unit_end(&c);
		pprof_free(pp);
		return;
	}
	CHECK_STR(&c, str(p, 0), "");
	CHECK_U64(&c, p->n_sample_type, 4);
	for (size_t i = 0; i < p->n_sample_type && i < 4; i++) {
		CHECK_STR(&c, str(p, p->sample_type[i]->type), types[i][0]);
		CHECK_STR(&c, str(p, p->sample_type[i]->unit), types[i][1]);
	}
	CHECK_STR(&c, str(p, p->default_sample_type), "inuse_space");
	CHECK(&c, p->time_nanos == 1234567890LL);
	CHECK_U64(&c, p->n_sample, 2);
	CHECK_U64(&c, p->sample[0]->n_value, 4);
	CHECK(&c, p->sample[0]->value[0] == 30 && p->sample[0]->value[1] == 7680 &&
		  p->sample[0]->value[2] == 20 && p->sample[0]->value[3] == 5120);
	CHECK_U64(&c, p->sample[0]->n_location_id, 2);
	CHECK(&c, p->sample[0]->location_id[0] == leaf && p->sample[0]->location_id[1] == caller);
	CHECK(&c, p->sample[1]->n_location_id == 1 && p->sample[1]->location_id[0] == caller);
	CHECK(&c, p->sample[1]->value[1] == 64 && p->sample[1]->value[3] == 0);
	/* The mapping says the locations are symbolized. */
	CHECK(&c, p->n_mapping == 1 && p->mapping[0]->id == 1 && p->mapping[0]->has_functions &&
		  p->mapping[0]->memory_limit == UINT64_MAX);
	CHECK(&c, location(p, leaf) && location(p, leaf)->address == 0xffffffff81234567ULL &&
		  location(p, leaf)->mapping_id == 1 && location(p, leaf)->n_line == 2);
	CHECK_STR(&c, line_func(p, leaf, 0), "alloc_msg");
	CHECK_STR(&c, line_func(p, leaf, 1), "load_msg");
	CHECK_STR(&c, line_func(p, caller, 0), "do_msgsnd");
	if (location(p, leaf) && location(p, leaf)->n_line == 2) {
		const Pprof__Line *l = location(p, leaf)->line[1];

		CHECK(&c, l->line == 91);
		CHECK_STR(&c, function(p, l->function_id) ?
				      str(p, function(p, l->function_id)->filename) : "",
			  "ipc/msgutil.c");
	}
	/* alloc_msg and load_msg are one file, two functions; do_msgsnd none. */
	CHECK_U64(&c, p->n_function, 3);
	unit_end(&c);
	pprof__profile__free_unpacked(p, NULL);
	pprof_free(pp);
}

static void test_total(struct unit *u)
{
	struct unit_case c;
	uint64_t leaf, caller;
	struct pprof *pp = two_samples(false, &leaf, &caller);
	Pprof__Profile *p = pp ? decode(pp) : NULL;

	unit_begin(&c, u, "pprof.total_alloc_only");
	CHECK(&c, p != NULL);
	if (p) {
		CHECK_U64(&c, p->n_sample_type, 2);
		CHECK_STR(&c, str(p, p->sample_type[1]->type), "alloc_space");
		CHECK_STR(&c, str(p, p->default_sample_type), "alloc_space");
		CHECK(&c, p->sample[0]->n_value == 2 && p->sample[0]->value[0] == 30 &&
			  p->sample[0]->value[1] == 7680);
	}
	unit_end(&c);
	pprof__profile__free_unpacked(p, NULL);
	pprof_free(pp);
}

/* Locations and strings stay across readings, samples do not; enough of
 * them to grow every table. */
static void test_readings(struct unit *u)
{
	struct unit_case c;
	char err[256], name[32];
	struct pprof *pp = pprof_new(true, err, sizeof(err));
	const long long v[PPROF_VALUES] = { 1, 2, 3, 4 };
	Pprof__Profile *p = NULL;
	bool ok = pp != NULL;

	unit_begin(&c, u, "pprof.readings");
	for (unsigned int i = 0; ok && i < 3000; i++) {
		struct pprof_line l = { .func = name, .file = "f.c", .line = i };
		uint64_t id;

		snprintf(name, sizeof(name), "fn%u", i % 1000);
		id = pprof_add_location(pp, 0x1000 + i, &l, 1);
		ok = id == i + 1 && pprof_location(pp, 0x1000 + i) == id &&
		     !pprof_add_sample(pp, &id, 1, v);
	}
	CHECK(&c, ok);
	CHECK(&c, pp && pprof_location(pp, 0x1000) == 1 && pprof_location(pp, 0x999) == 0);
	if (pp) {
		uint64_t id = pprof_location(pp, 0x1000 + 2999);

		pprof_begin(pp);
		CHECK(&c, !pprof_add_sample(pp, &id, 1, v));
		p = decode(pp);
	}
	CHECK(&c, p && p->n_sample == 1 && p->n_location == 3000 && p->n_function == 1000);
	CHECK(&c, p && p->sample[0]->location_id[0] == 3000);
	unit_end(&c);
	pprof__profile__free_unpacked(p, NULL);
	pprof_free(pp);
}

/* The file gunzip'd and decoded; NULL when it cannot be. */
static Pprof__Profile *read_gz(const char *path)
{
	gzFile gz = gzopen(path, "rb");
	unsigned char buf[65536];
	int n;
	Pprof__Profile *p;

	if (!gz)
		return NULL;
	n = gzread(gz, buf, sizeof(buf));
	gzclose(gz);
	if (n <= 0 || n == (int)sizeof(buf))
		return NULL;
	p = pprof__profile__unpack(NULL, (size_t)n, buf);
	return p;
}

static void test_file(struct unit *u)
{
	struct unit_case c;
	char dir[256], path[300], bad[320], err[256] = "";
	uint64_t leaf, caller;
	struct pprof *pp = two_samples(true, &leaf, &caller);
	const char *const files[] = { "heap.pb.gz" };
	Pprof__Profile *p = NULL;
	struct stat st;
	mode_t old = umask(0);

	unit_begin(&c, u, "pprof.file");
	CHECK(&c, pp && unit_mkdtemp(dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%s/heap.pb.gz", dir);
	snprintf(bad, sizeof(bad), "%s/none/heap.pb.gz", dir);
	/* Written over an older file, with its mode whatever the umask. */
	CHECK(&c, unit_write_file(path, "old"));
	CHECK(&c, chmod(path, 0644) == 0);
	CHECK(&c, pp && pprof_write(pp, path, 1, err, sizeof(err)) == 0);
	CHECK_STR(&c, err, "");
	CHECK(&c, stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
	p = read_gz(path);
	CHECK(&c, p && p->n_sample == 2 && p->sample[0]->value[3] == 5120);
	CHECK(&c, pp && pprof_write(pp, bad, 1, err, sizeof(err)) == -1);
	CHECK(&c, strstr(err, "cannot create") && strstr(err, "/none/heap.pb.gz"));
	unit_end(&c);
	umask(old);
	pprof__profile__free_unpacked(p, NULL);
	pprof_free(pp);
	unit_rmdir(dir, files, 1);
}

void test_pprof(struct unit *u)
{
	test_encode(u);
	test_total(u);
	test_readings(u);
	test_file(u);
}
