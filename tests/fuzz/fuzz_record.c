// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the bytes of one cpuN file of a recording, decoded
 * record by record (kmt_decode) as kmemsnoop -i walks them, the task and
 * cache records learned and references resolved (tasktab, cachetab), and
 * each event formatted as a text line.
 */
#include <stddef.h>
#include <stdint.h>

#include "names/gfp.h"
#include "recording/cachetab.h"
#include "recording/record.h"
#include "recording/tasktab.h"
#include "stream/text.h"

static struct text_sink sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sink.gfp = gfp_names_new(NULL); /* the names of no kernel in particular */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cachetab *caches = cachetab_new();
	struct tasktab *tasks = tasktab_new();
	struct kmt_event ev;
	char line[1024];
	size_t off = 0;

	while (caches && tasks && off < size &&
	       kmt_decode(data + off, size - off, 0, &ev) == KMT_OK) {
		if (tasktab_apply(tasks, &ev) && cachetab_apply(caches, &ev))
			text_format_event(&sink, &ev, line, sizeof(line));
		off += ev.event_size;
	}
	cachetab_free(caches);
	tasktab_free(tasks);
	return 0;
}
