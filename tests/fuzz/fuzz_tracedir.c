// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: a whole recording directory read by kmemsnoop -i.  The
 * input holds its files one after the other, separated by SEPARATOR, in
 * the order of files[] (abi_version, the totals, kallsyms, cpu0..cpu3); a
 * missing or empty part leaves that file out.  The directory is printed as
 * kmemsnoop -i prints it, with its own kallsyms, to /dev/null.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binin.h"
#include "ksyms.h"
#include "sink.h"
#include "text.h"

#define SEPARATOR "\n--kmt--\n"

static const char *const files[] = {
	"abi_version", "total_overruns", "total_overrun_events", "kallsyms",
	"cpu0", "cpu1", "cpu2", "cpu3",
};
#define NFILES (sizeof(files) / sizeof(files[0]))

static char dir[256];
static FILE *devnull;

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
	return 0;
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
	struct binin_losses lost;
	struct ksyms *ksyms;
	struct sink *sink;
	char err[512];

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	ksyms = ksyms_load(path);
	sink = text_sink_new(devnull, ksyms, NULL);
	if (!sink)
		abort();
	binin_replay(dir, sink, &lost, err, sizeof(err));
	sink->ops->destroy(sink);
	ksyms_free(ksyms);
	return 0;
}
