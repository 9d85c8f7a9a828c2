// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reading a recording through bounded windows (binin.c, recfile.c): every
 * record reaches the sink whole and in order, records of every size up to
 * the largest cross the windows' refills; several files merge in order,
 * each running out at its own time; the window sizes stay within their
 * bounds; and a file that changes between the checks and the merge, grows,
 * shrinks, is overwritten or is not a file, is a one-line error.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/kmemtrace.h"
#include "recording/binin.h"
#include "recording/recfile.h"
#include "recording/record.h"
#include "recording/sink.h"
#include "unit.h"

void test_binin(struct unit *u);

/* An unknown feature id: decoders skip it, so it pads a record to any size. */
#define PAD_FEATURE 0xee

/* A free record of seq seq and size bytes (24..65535), its padding bytes
 * made from seq so that the sink can tell a record cut or mixed up. */
static size_t make_record(unsigned char *buf, int seq, size_t size)
{
	struct kmt_core core = { .event_id = KMT_EVENT_FREE, .type_id = KMT_TYPE_KMALLOC,
				 .event_size = (__u16)size, .seq_num = seq,
				 .call_site = 0xffffffff81000000ull + seq };
	size_t pad = size - sizeof(core);

	memcpy(buf, &core, sizeof(core));
	if (pad >= 3) {
		__u16 fsize = (__u16)pad;

		memcpy(buf + sizeof(core), &fsize, 2);
		buf[sizeof(core) + 2] = PAD_FEATURE;
		for (size_t i = 3; i < pad; i++)
			buf[sizeof(core) + i] = (unsigned char)(seq + i);
	} else {
		memset(buf + sizeof(core), 0, pad); /* fewer than a header: padding */
	}
	return size;
}

static bool record_intact(const unsigned char *data, size_t size, int seq)
{
	size_t pad = size - sizeof(struct kmt_core);

	for (size_t i = 3; pad >= 3 && i < pad; i++)
		if (data[sizeof(struct kmt_core) + i] != (unsigned char)(seq + i))
			return false;
	return true;
}

/* The sizes the records of a file take in turn: small ones, and now and
 * then one of the largest, so that refills meet records of every kind. */
static size_t size_of(int i)
{
	static const size_t sizes[] = { 24, 26, 27, 64, 100, 255, 1000, 4096, 65535, 40000 };

	return i % 97 == 96 ? 65535 : sizes[i % 7 == 6 ? 6 + (i / 7) % 4 : i % 6];
}

/* Writes dir/name with the records whose seq is first, first + step, ...
 * (count of them).  Its size, or 0 when it could not be written. */
static size_t write_cpu_file(const char *dir, const char *name, int first, int step, int count)
{
	static unsigned char buf[1 << 16];
	char path[512];
	size_t total = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return 0;
	for (int i = 0; i < count; i++) {
		int seq = first + i * step;
		size_t n = make_record(buf, seq, size_of(seq));

		if (fwrite(buf, 1, n, f) != n)
			break;
		total += n;
	}
	return fclose(f) ? 0 : total;
}

/* The sink: checks each record as it comes, keeps none; what it is told
 * to do to a file at a given moment (the tests of files that change). */
struct check_sink {
	struct sink sink;
	int records;
	int last_seq;
	bool out_of_order, cut, mixed_up;
	const char *change_path; /* the file to change ... */
	int change_at; /* ... at this record (-1: in begin()) */
	void (*change)(const char *path);
};

static int check_begin(struct sink *sk)
{
	struct check_sink *cs = (struct check_sink *)sk;

	if (cs->change && cs->change_at < 0)
		cs->change(cs->change_path);
	return 0;
}

static int check_record(struct sink *sk, int cpu, const void *data, size_t size,
			const struct kmt_event *ev)
{
	struct check_sink *cs = (struct check_sink *)sk;

	(void)cpu;
	if (!ev || ev->event_size != size || size != size_of(ev->seq_num))
		cs->cut = true;
	else if (!record_intact(data, size, ev->seq_num))
		cs->mixed_up = true;
	if (ev && cs->records && ev->seq_num <= cs->last_seq)
		cs->out_of_order = true;
	if (ev)
		cs->last_seq = ev->seq_num;
	if (cs->change && cs->change_at == cs->records)
		cs->change(cs->change_path);
	cs->records++;
	return 0;
}

static int check_end(struct sink *sk, const struct sink_losses *lost)
{
	(void)sk;
	(void)lost;
	return 0;
}

static const struct sink_ops check_ops = {
	.begin = check_begin, .record = check_record, .end = check_end,
};

static const char *const dir_files[] = { "abi_version", "cpu0", "cpu1", "cpu2", "cpu3",
					 "cpu4", "cpu5" };

static bool make_dir(char *dir, size_t size)
{
	char path[512];

	if (!unit_mkdtemp(dir, size))
		return false;
	snprintf(path, sizeof(path), "%s/abi_version", dir);
	return unit_write_file(path, "4\n");
}

static void remove_dir(const char *dir)
{
	unit_rmdir(dir, dir_files, sizeof(dir_files) / sizeof(dir_files[0]));
}

static int replay(const char *dir, struct check_sink *cs, char *err, size_t err_size)
{
	struct binin_losses lost;

	cs->sink.ops = &check_ops;
	return binin_replay(dir, &cs->sink, &lost, err, err_size);
}

/* Enough records for some 4 MiB: four refills of a 1 MiB window. */
#define BIG_COUNT 3000

static void one_file_whole(struct unit *u)
{
	struct unit_case c;
	struct check_sink cs = { 0 };
	char dir[256], err[512] = "";
	size_t size;

	unit_begin(&c, u, "binin.window_records_whole");
	CHECK(&c, make_dir(dir, sizeof(dir)));
	size = write_cpu_file(dir, "cpu0", 0, 1, BIG_COUNT);
	CHECK(&c, size > 3 * RECFILE_WINDOW_MAX);
	CHECK_U64(&c, replay(dir, &cs, err, sizeof(err)), 0);
	CHECK_STR(&c, err, "");
	CHECK_U64(&c, cs.records, BIG_COUNT);
	CHECK(&c, !cs.cut);
	CHECK(&c, !cs.mixed_up);
	CHECK(&c, !cs.out_of_order);
	remove_dir(dir);
	unit_end(&c);
}

/* Records without time (ABI 1's order: sequence numbers), dealt to six
 * files in turn, each file cut short at its own point: the merge gives
 * them back in sequence order while files run out one by one. */
static void six_files_merge(struct unit *u)
{
	struct unit_case c;
	struct check_sink cs = { 0 };
	char dir[256], err[512] = "";
	int want = 0;

	unit_begin(&c, u, "binin.merge_six_files");
	CHECK(&c, make_dir(dir, sizeof(dir)));
	for (int f = 0; f < 6; f++) {
		char name[8];
		int count = 400 - 60 * f; /* file 5 runs out first */

		snprintf(name, sizeof(name), "cpu%d", f);
		CHECK(&c, write_cpu_file(dir, name, f, 6, count) > 0);
		want += count;
	}
	CHECK_U64(&c, replay(dir, &cs, err, sizeof(err)), 0);
	CHECK_STR(&c, err, "");
	CHECK_U64(&c, cs.records, want);
	CHECK(&c, !cs.cut && !cs.mixed_up);
	CHECK(&c, !cs.out_of_order);
	remove_dir(dir);
	unit_end(&c);
}

static void window_bounds(struct unit *u)
{
	struct unit_case c;

	unit_begin(&c, u, "binin.window_bounds");
	CHECK_U64(&c, recfile_window(1), RECFILE_WINDOW_MAX);
	CHECK_U64(&c, recfile_window(8), RECFILE_WINDOW_MAX);
	CHECK_U64(&c, recfile_window(16), RECFILE_WINDOWS_TOTAL / 16);
	CHECK(&c, recfile_window(12) * 12 <= RECFILE_WINDOWS_TOTAL);
	CHECK_U64(&c, recfile_window(128), RECFILE_WINDOW_MIN);
	CHECK_U64(&c, recfile_window(1024), RECFILE_WINDOW_MIN);
	unit_end(&c);
}

static void append_record(const char *path)
{
	unsigned char buf[64];
	size_t n = make_record(buf, 1 << 20, 64);
	FILE *f = fopen(path, "a");

	if (f) {
		fwrite(buf, 1, n, f);
		fclose(f);
	}
}

static void truncate_to_nothing(const char *path)
{
	if (truncate(path, 0))
		perror(path);
}

/* Zeroes a record's size far past the first window: a file rewritten in
 * place after it was checked. */
static void zero_far_record(const char *path)
{
	size_t off = 0;
	int fd = open(path, O_WRONLY);
	__u16 zero = 0;

	for (int i = 0; off < 2 * RECFILE_WINDOW_MAX; i++)
		off += size_of(i);
	if (fd >= 0) {
		if (pwrite(fd, &zero, sizeof(zero), off + offsetof(struct kmt_core, event_size)) < 0)
			perror(path);
		close(fd);
	}
}

/* A recording of one big file, changed as named; the error must name the
 * file and say why, in one line. */
static void changed_file(struct unit *u, const char *name, int at, void (*change)(const char *),
			 const char *says)
{
	struct unit_case c;
	struct check_sink cs = { .change_at = at, .change = change };
	char dir[256], path[512], err[512] = "";

	unit_begin(&c, u, name);
	CHECK(&c, make_dir(dir, sizeof(dir)));
	CHECK(&c, write_cpu_file(dir, "cpu0", 0, 1, BIG_COUNT) > 0);
	snprintf(path, sizeof(path), "%s/cpu0", dir);
	cs.change_path = path;
	CHECK_U64(&c, replay(dir, &cs, err, sizeof(err)), (unsigned long long)-1);
	CHECK(&c, strncmp(err, path, strlen(path)) == 0);
	CHECK(&c, strstr(err, says) != NULL);
	CHECK(&c, strchr(err, '\n') == NULL);
	if (at < 0)
		CHECK_U64(&c, cs.records, 0); /* nothing printed: it failed first */
	remove_dir(dir);
	unit_end(&c);
}

static void not_a_file(struct unit *u)
{
	struct unit_case c;
	struct check_sink cs = { 0 };
	char dir[256], path[512], err[512] = "";

	unit_begin(&c, u, "binin.cpu_file_not_a_file");
	CHECK(&c, make_dir(dir, sizeof(dir)));
	snprintf(path, sizeof(path), "%s/cpu0", dir);
	CHECK(&c, mkdir(path, 0700) == 0);
	CHECK_U64(&c, replay(dir, &cs, err, sizeof(err)), (unsigned long long)-1);
	snprintf(path, sizeof(path), "%s/cpu0: not a regular file", dir);
	CHECK_STR(&c, err, path);
	snprintf(path, sizeof(path), "%s/cpu0", dir);
	rmdir(path);
	remove_dir(dir);
	unit_end(&c);
}

void test_binin(struct unit *u)
{
	one_file_whole(u);
	six_files_merge(u);
	window_bounds(u);
	changed_file(u, "binin.grew_between_passes", -1, append_record,
		     ": changed size while being read");
	changed_file(u, "binin.shrank_while_merged", 0, truncate_to_nothing,
		     ": changed size while being read");
	changed_file(u, "binin.rewritten_while_merged", 0, zero_far_record,
		     "which decoded when checked");
	not_a_file(u);
}
