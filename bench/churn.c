// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The benchmark workloads: a loop of system calls that makes the kernel
 * allocate and free, run for a given time by THREADS threads at once;
 * prints the operations per second of all threads together.
 *
 *   churn openclose SECONDS [THREADS]  open + close /dev/null: slab churn
 *                                       (names_cache, filp, lsm_file_cache)
 *   churn pages SECONDS [THREADS]      mmap 16 anonymous pages, touch each,
 *                                       munmap: page allocations and frees
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define BATCH 256
#define PAGES_PER_OP 16

struct job {
	int (*op)(long page_size);
	double end;
	long page_size;
	unsigned long ops;
	int err;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int open_close(long page_size)
{
	int fd = open("/dev/null", O_RDONLY);

	(void)page_size;
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int map_touch_unmap(long page_size)
{
	size_t len = PAGES_PER_OP * page_size;
	volatile char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return errno;
	for (size_t off = 0; off < len; off += page_size)
		p[off] = 1;
	munmap((void *)p, len);
	return 0;
}

static void *run_job(void *arg)
{
	struct job *job = arg;

	do {
		for (int i = 0; i < BATCH; i++) {
			job->err = job->op(job->page_size);
			if (job->err)
				return NULL;
		}
		job->ops += BATCH;
	} while (now() < job->end);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: churn openclose|pages SECONDS [THREADS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	int (*op)(long) = NULL;
	double seconds, start;
	unsigned long total = 0;
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	struct job *jobs;
	pthread_t *tids;

	if (argc < 3 || argc > 4)
		return usage();
	if (!strcmp(argv[1], "openclose"))
		op = open_close;
	else if (!strcmp(argv[1], "pages"))
		op = map_touch_unmap;
	seconds = atof(argv[2]);
	if (!op || seconds <= 0 || threads < 1 || threads > 256)
		return usage();
	jobs = calloc(threads, sizeof(*jobs));
	tids = calloc(threads, sizeof(*tids));
	if (!jobs || !tids) {
		fprintf(stderr, "churn: out of memory\n");
		return 1;
	}
	start = now();
	for (int i = 0; i < threads; i++) {
		jobs[i] = (struct job){ .op = op, .end = start + seconds,
					.page_size = sysconf(_SC_PAGESIZE) };
		if (pthread_create(&tids[i], NULL, run_job, &jobs[i])) {
			fprintf(stderr, "churn: cannot start thread %d\n", i);
			return 1;
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_join(tids[i], NULL);
		if (jobs[i].err) {
			fprintf(stderr, "churn: %s: %s\n", argv[1], strerror(jobs[i].err));
			return 1;
		}
		total += jobs[i].ops;
	}
	printf("%.0f\n", total / (now() - start));
	free(jobs);
	free(tids);
	return 0;
}
