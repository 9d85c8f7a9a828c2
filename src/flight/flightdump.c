// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Writing a flight recorder's dump, and rotating the dumps: see
 * flightdump.h.  The records go through the -o sink (binout), so a dump is
 * laid out, and read by -i, exactly as a recording made with -o.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "flightdump.h"
#include "recording/binout.h"
#include "recording/recheader.h"
#include "recording/record.h"
#include "recording/sink.h"
#include "recording/tpformat.h"

/* "YYYYmmdd-HHMMSS.mmm": the wall clock at the trigger, as the names of
 * the dumps sort.  Local time, as date(1) and the -i header print it. */
static void wall_name(unsigned long long at_ns, long long offset_ns, char *buf, size_t size)
{
	long long wall = (long long)at_ns + offset_ns;
	time_t sec = (time_t)(wall / 1000000000LL);
	struct tm tm;

	if (wall < 0 || !localtime_r(&sec, &tm) ||
	    !strftime(buf, size, "%Y%m%d-%H%M%S", &tm)) {
		snprintf(buf, size, "%llu", at_ns);
		return;
	}
	snprintf(buf + strlen(buf), size - strlen(buf), ".%03lld",
		 (wall % 1000000000LL) / 1000000LL);
}

/* A new directory root/NAME-kind (NAME-kind-2, ... if taken): its path in
 * res->dir.  0, or -1 with the reason in err. */
static int make_dump_dir(const char *root, const struct flight_dump *d, long long offset_ns,
			 struct flight_dump_result *res, char *err, size_t err_size)
{
	char when[64];

	if (mkdir(root, 0700) && errno != EEXIST) {
		snprintf(err, err_size, "cannot create %s: %s", root, strerror(errno));
		return -1;
	}
	wall_name(d->at_ns, offset_ns, when, sizeof(when));
	for (int n = 1; n < 100; n++) {
		if (n == 1)
			snprintf(res->dir, sizeof(res->dir), "%s/%s-%s", root, when, d->kind);
		else
			snprintf(res->dir, sizeof(res->dir), "%s/%s-%s-%d", root, when, d->kind, n);
		if (!mkdir(res->dir, 0700))
			return 0;
		if (errno != EEXIST)
			break;
	}
	snprintf(err, err_size, "cannot create %s: %s", res->dir, strerror(errno));
	return -1;
}

/* An allocation or free older than the window: left out.  What describes
 * (tasks, caches) and the heartbeats stay: the events kept may need them. */
static bool before_window(const struct flight_dump *d, const struct kmt_glance *g)
{
	return d->window_ns && g->event_id <= KMT_EVENT_FREE && g->has_time &&
	       g->timestamp + d->window_ns < d->at_ns;
}

/* An event of the blocks copied for what they describe (left bytes of
 * the CPU's records to go): left out. */
static bool describe_only(const struct flight_dump *d, int cpu, size_t left,
			  const struct kmt_glance *g)
{
	return g->event_id <= KMT_EVENT_FREE &&
	       d->cpu[cpu].len - left < d->cpu[cpu].describe_only;
}

/* One CPU's records into the sink.  0, or -1 with the reason in err. */
static int write_cpu(struct sink *sk, const struct flight_dump *d, int cpu,
		     struct flight_dump_result *res, char *err, size_t err_size)
{
	const unsigned char *p = d->cpu[cpu].data;
	size_t left = d->cpu[cpu].len;

	while (left) {
		struct kmt_glance g;

		/* Blocks are whole records as BPF wrote them: a bad one ends
		 * the CPU's records, said rather than guessed past. */
		if (kmt_glance(p, left, &g) != KMT_OK || !g.event_size || g.event_size > left) {
			snprintf(err, err_size, "CPU %d's records in the store are damaged "
						"after %zu bytes", cpu, d->cpu[cpu].len - left);
			return -1;
		}
		if (describe_only(d, cpu, left, &g)) {
			p += g.event_size;
			left -= g.event_size;
			continue;
		}
		if (g.event_id <= KMT_EVENT_FREE && g.has_time &&
		    (!res->oldest_ns || g.timestamp < res->oldest_ns))
			res->oldest_ns = g.timestamp;
		if (!before_window(d, &g)) {
			if (sk->ops->record(sk, cpu, p, g.event_size, NULL)) {
				snprintf(err, err_size, "%s", sk->err);
				return -1;
			}
			res->bytes += g.event_size;
			if (g.event_id <= KMT_EVENT_FREE) {
				res->events++;
				if (g.has_time && (!res->first_ns || g.timestamp < res->first_ns))
					res->first_ns = g.timestamp;
				if (g.has_time && g.timestamp > res->last_ns)
					res->last_ns = g.timestamp;
			}
		}
		p += g.event_size;
		left -= g.event_size;
	}
	return 0;
}

int flightdump_write(const char *root, const struct flight_dump *d, const struct rec_header *base,
		     const struct gfp_names *gfp, const char **tracepoints, int n,
		     struct flight_dump_result *res, char *err, size_t err_size)
{
	struct tpformat_list list = { tracepoints, n, NULL };
	struct sink_losses lost = { d->lost, d->lost_bytes, 0 };
	struct rec_header *hdr;
	struct sink *sk;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	if (make_dump_dir(root, d, base->clock_offset_ns, res, err, err_size))
		return -1;
	sk = binout_sink_new(res->dir, d->ncpus, base, gfp, err, err_size);
	if (!sk)
		return -1;
	hdr = binout_sink_header(sk);
	recheader_set_trigger(hdr, d->what, d->at_ns, d->window_ns);
	if (binout_sink_describe(sk, "tracepoints", tpformat_write, &list) ||
	    sk->ops->begin(sk)) {
		snprintf(err, err_size, "%s", sk->err);
		sk->ops->destroy(sk);
		return -1;
	}
	for (int cpu = 0; cpu < d->ncpus && !ret; cpu++)
		ret = write_cpu(sk, d, cpu, res, err, err_size);
	/* The span is that of the events kept; without any, the trigger's. */
	recheader_set_span(hdr, res->first_ns ? res->first_ns : d->at_ns,
			   res->last_ns ? res->last_ns : d->at_ns);
	if (sk->ops->end(sk, &lost) && !ret) {
		snprintf(err, err_size, "%s", sk->err);
		ret = -1;
	}
	sk->ops->destroy(sk);
	return ret;
}

/* --- rotation --------------------------------------------------------------------- */

/* A name flightdump_write() gives: 8 digits, '-', 6 digits, '.', 3
 * digits, '-', then a trigger's word (and maybe "-N"). */
static bool is_dump_name(const char *name)
{
	static const char shape[] = "dddddddd-dddddd.ddd-";

	for (size_t i = 0; i < sizeof(shape) - 1; i++) {
		if (shape[i] == 'd' ? (name[i] < '0' || name[i] > '9') : name[i] != shape[i])
			return false;
	}
	return name[sizeof(shape) - 1] >= 'a' && name[sizeof(shape) - 1] <= 'z';
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Removes a dump: its files (a dump has no subdirectory), then itself. */
static int remove_dump(int rootfd, const char *name)
{
	int fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(fd, e->d_name, 0);
	closedir(dir);
	return unlinkat(rootfd, name, AT_REMOVEDIR);
}

/* The space a dump's files take on disk (what a size limit is about);
 * 0 when it cannot be read. */
static unsigned long long dump_size(int rootfd, const char *name)
{
	int fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	unsigned long long bytes = 0;
	struct dirent *e;
	struct stat st;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(dir)))
		if (!fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode))
			bytes += (unsigned long long)st.st_blocks * 512;
	closedir(dir);
	return bytes;
}

/* The dumps' names under the open directory, sorted oldest first; NULL
 * (with *n 0) when out of memory. */
static char **dump_names(DIR *dir, size_t *n)
{
	char **names = NULL;
	size_t cap = 0;
	struct dirent *e;

	*n = 0;
	while ((e = readdir(dir))) {
		if (!is_dump_name(e->d_name))
			continue;
		if (*n == cap) {
			char **p = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));

			if (!p)
				goto fail;
			names = p;
		}
		if (!(names[*n] = strdup(e->d_name)))
			goto fail;
		(*n)++;
	}
	if (*n)
		qsort(names, *n, sizeof(*names), cmp_names);
	return names;
fail:
	while (*n)
		free(names[--*n]);
	free(names);
	return NULL;
}

int flightdump_rotate(const char *root, unsigned int keep, unsigned long long max_bytes,
		      char *err, size_t err_size)
{
	DIR *dir = opendir(root);
	unsigned long long total = 0;
	size_t n, i;
	char **names;
	int removed = 0;

	if (!dir) {
		snprintf(err, err_size, "cannot read %s: %s", root, strerror(errno));
		return -1;
	}
	names = dump_names(dir, &n);
	/* Newest first: the newest is always kept, whatever it weighs. */
	for (i = n; i-- > 0;) {
		bool kept = n - i <= keep;

		if (kept && max_bytes) {
			total += dump_size(dirfd(dir), names[i]);
			kept = n - i == 1 || total <= max_bytes;
		}
		if (!kept) {
			if (remove_dump(dirfd(dir), names[i]))
				snprintf(err, err_size, "cannot remove %s/%s: %s", root, names[i],
					 strerror(errno));
			else
				removed++;
			/* Whatever is older goes too: the dumps kept are the newest. */
			keep = (unsigned int)(n - i - 1);
		}
		free(names[i]);
	}
	free(names);
	closedir(dir);
	return removed;
}
