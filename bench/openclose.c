// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The slab-churn workload of the overhead table: open and close /dev/null
 * in a loop for a given time, then print operations per second.
 * Usage: openclose SECONDS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, start, end;
	unsigned long ops = 0;

	if (seconds <= 0) {
		fprintf(stderr, "usage: openclose SECONDS\n");
		return 2;
	}
	start = now();
	end = start + seconds;
	do {
		for (int i = 0; i < 1000; i++) {
			int fd = open("/dev/null", O_RDONLY);

			if (fd < 0) {
				perror("open /dev/null");
				return 1;
			}
			close(fd);
		}
		ops += 1000;
	} while (now() < end);
	printf("%.0f\n", ops / (now() - start));
	return 0;
}
