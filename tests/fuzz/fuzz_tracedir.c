// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: a whole recording directory read by kmemsnoop -i.  The
 * input holds its files one after the other, separated by SEPARATOR, in
 * the order of files[] (abi_version, the totals, kallsyms, cpu0..cpu3,
 * header, gfp, maps); a missing or empty part leaves that file out.  The
 * directory is read as kmemsnoop -i reads it, with its own kallsyms,
 * header, GFP flag names and user maps, by each of -i's readers in turn: the text,
 * --json and --stat (every table) into /dev/null; a header or gfp file that
 * reads must also read back the same after being written again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names/gfp.h"
#include "names/ksyms.h"
#include "names/usyms.h"
#include "recording/binin.h"
#include "recording/recheader.h"
#include "recording/sink.h"
#include "stat/statsink.h"
#include "stream/jsonsink.h"
#include "stream/text.h"
#include "env.h"

#define SEPARATOR "\n--kmt--\n"

static const char *const files[] = {
	"abi_version", "total_overruns", "total_overrun_events", "kallsyms",
	"cpu0", "cpu1", "cpu2", "cpu3", "header", "gfp", "maps",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char dir[256];
static FILE *devnull;
/* -i DIR --stat with every table. */
static struct env stat_env;

static void remove_dir(void)
{
	char path[512];

	for (size_t i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/kmemsnoop-fuzz.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	char *stat_argv[] = { "kmemsnoop", "-i", dir, "--stat", "--caller", "--alloc", "--slab",
			      "--page", NULL };
	char err[512];

	if (env_parse(8, stat_argv, &stat_env, err, sizeof(err)) != ENV_RUN) {
		fprintf(stderr, "fuzz_tracedir: %s\n", err);
		abort();
	}
	return 0;
}

/* The directory through one reader of -i (the sink takes what it reads). */
static void replay(struct sink *sink)
{
	struct binin_losses lost;
	char err[512];

	if (!sink)
		abort();
	binin_replay(dir, sink, &lost, err, sizeof(err));
	sink->ops->destroy(sink);
}

static void put_file(const char *name, const uint8_t *data, size_t size)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!size) {
		unlink(path);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		abort();
	close(fd);
}

/* What write() makes of a value, read back, is the value. */
static void check_header_round_trip(const struct rec_header *h)
{
	struct rec_header again;
	char *text = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f || recheader_write(h, f) || fclose(f) ||
	    recheader_parse(text, len, &again, err, sizeof(err)) || memcmp(h, &again, sizeof(again)))
		abort();
	free(text);
}

static void check_gfp_round_trip(const struct gfp_names *names)
{
	char *text = NULL, *text2 = NULL, err[256];
	size_t len = 0, len2 = 0;
	FILE *f = open_memstream(&text, &len), *f2;
	struct gfp_names *again;

	if (!f || gfp_names_dump(names, f) || fclose(f))
		abort();
	again = gfp_names_parse(text, len, err, sizeof(err));
	f2 = open_memstream(&text2, &len2);
	if (!again || !f2 || gfp_names_dump(again, f2) || fclose(f2) || len != len2 ||
	    memcmp(text, text2, len))
		abort();
	gfp_names_free(again);
	free(text);
	free(text2);
}

/* The recording's GFP flag names, or those of no kernel in particular. */
static struct gfp_names *recording_gfp(void)
{
	struct gfp_names *names;
	char err[512];

	if (binin_gfp(dir, &names, err, sizeof(err)) > 0) {
		check_gfp_round_trip(names);
		return names;
	}
	return gfp_names_new(NULL);
}

/* The recording's user maps, as many lines as read (none without the
 * file); those written again must read back the same. */
static struct usyms *recording_usyms(void)
{
	struct usyms *u = usyms_new(false), *again = usyms_new(false);
	char path[512], err[256], *text = NULL, *text2 = NULL;
	size_t len = 0, len2 = 0;
	FILE *f, *out, *in;

	snprintf(path, sizeof(path), "%s/maps", dir);
	f = fopen(path, "re");
	if (!u || !again)
		abort();
	if (!f) {
		usyms_free(again);
		return u;
	}
	if (usyms_read(u, f, err, sizeof(err))) {
		/* Unreadable, -i stops: nothing to name frames with. */
		usyms_free(u);
		u = usyms_new(false);
		fclose(f);
		usyms_free(again);
		return u;
	}
	fclose(f);
	out = open_memstream(&text, &len);
	if (!out || usyms_write(u, out) || fclose(out))
		abort();
	in = fmemopen(text, len, "r");
	out = open_memstream(&text2, &len2);
	if (!in || usyms_read(again, in, err, sizeof(err)) || !out || usyms_write(again, out) ||
	    fclose(out) || len != len2 || memcmp(text, text2, len))
		abort();
	fclose(in);
	usyms_free(again);
	free(text);
	free(text2);
	return u;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	char path[512];

	for (size_t i = 0; i < NFILES; i++) {
		const uint8_t *sep = p < end ? memmem(p, end - p, SEPARATOR, strlen(SEPARATOR)) : NULL;
		const uint8_t *stop = sep ? sep : end;

		put_file(files[i], p, p < end ? stop - p : 0);
		p = sep ? sep + strlen(SEPARATOR) : end;
	}
	struct rec_header hdr;
	struct gfp_names *gfp;
	struct usyms *usyms;
	struct ksyms *ksyms;
	struct addr_names names;
	unsigned int depth = 0;
	char err[512];

	if (binin_header(dir, &hdr, err, sizeof(err)) > 0) {
		check_header_round_trip(&hdr);
		recheader_print(&hdr, devnull);
		/* As -i cuts stacks: any depth, 0 (none) to past the deepest. */
		if (recheader_has(&hdr, RH_STACK_DEPTH))
			depth = hdr.stack_depth % 64;
	}
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	ksyms = ksyms_load(path);
	gfp = recording_gfp();
	usyms = recording_usyms();
	if (!gfp || !usyms)
		abort();
	names = (struct addr_names){ ksyms, usyms, depth };
	replay(text_sink_new(devnull, &names, gfp));
	replay(json_sink_new(devnull, &names, gfp));
	replay(stat_sink_new(devnull, &stat_env, &names, gfp, 0, 0, err, sizeof(err)));
	usyms_free(usyms);
	gfp_names_free(gfp);
	ksyms_free(ksyms);
	return 0;
}
