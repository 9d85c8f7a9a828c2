// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the command line, the input cut at NUL bytes into
 * arguments after "kmemsnoop", parsed by env_parse.
 */
#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

#define MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *args = malloc(size + 1), *argv[MAX_ARGS + 2], *p;
	struct env env;
	char err[512];
	int argc = 0;

	if (!args)
		return 0;
	memcpy(args, data, size);
	args[size] = 0;
	argv[argc++] = "kmemsnoop";
	for (p = args; p < args + size && argc <= MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	optind = 0; /* getopt starts afresh */
	env_parse(argc, argv, &env, err, sizeof(err));
	free(args);
	return 0;
}
