// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A build without protobuf-c (a static build where it has no static
 * library): see pprof.h.  --pprof fails when the session starts. */
#include <stdio.h>

#include "pprof.h"

struct pprof *pprof_new(bool inuse, char *err, size_t err_size)
{
	(void)inuse;
	snprintf(err, err_size, "this kmemsnoop was built without protobuf-c (a static build "
				"with no static libprotobuf-c): --pprof needs the dynamically "
				"linked one");
	return NULL;
}

/* Never reached without a profile: */

void pprof_free(struct pprof *p)
{
	(void)p;
}

void pprof_begin(struct pprof *p)
{
	(void)p;
}

uint64_t pprof_location(const struct pprof *p, unsigned long long addr)
{
	(void)p;
	(void)addr;
	return 0;
}

uint64_t pprof_add_location(struct pprof *p, unsigned long long addr,
			    const struct pprof_line *lines, int nlines)
{
	(void)p;
	(void)addr;
	(void)lines;
	(void)nlines;
	return 0;
}

int pprof_add_sample(struct pprof *p, const uint64_t *locs, int nlocs,
		     const long long values[PPROF_VALUES])
{
	(void)p;
	(void)locs;
	(void)nlocs;
	(void)values;
	return -1;
}

int pprof_encode(const struct pprof *p, long long time_ns, unsigned char **buf, size_t *len)
{
	(void)p;
	(void)time_ns;
	*buf = NULL;
	*len = 0;
	return -1;
}

int pprof_write(const struct pprof *p, const char *path, long long time_ns, char *err,
		size_t err_size)
{
	(void)p;
	(void)path;
	(void)time_ns;
	snprintf(err, err_size, "no profile to write");
	return -1;
}
