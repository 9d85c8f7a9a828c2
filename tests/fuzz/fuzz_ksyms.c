// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: a kallsyms file (a recording's copy, read by
 * kmemsnoop -i), loaded by ksyms_load and looked up at, around and between
 * the addresses it names, as call sites are.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "names/ksyms.h"

static void look_up(struct ksyms *ks, unsigned long long addr)
{
	static const long long around[] = { 0, -1, 1, 0x1000, -0x1000 };
	char text[256];

	for (size_t i = 0; i < sizeof(around) / sizeof(around[0]); i++) {
		ksyms_find(ks, addr + around[i]);
		ksyms_format(ks, addr + around[i], text, sizeof(text));
	}
	ksyms_format(ks, addr, text, 8); /* cut short */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("kallsyms", MFD_CLOEXEC);
	char path[64], *copy, *line, *save;
	struct ksyms *ks;

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ks = ksyms_load(path);
	close(fd);
	if (!ks)
		return 0;
	/* Every address and name the input starts a line with. */
	copy = strndup((const char *)data, size);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *name = strrchr(line, ' ');

		look_up(ks, strtoull(line, NULL, 16));
		if (name)
			ksyms_addr_of(ks, name + 1);
	}
	free(copy);
	ksyms_count(ks);
	ksyms_free(ks);
	return 0;
}
