/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --pprof: the --allocinfo table as a pprof heap profile (src/allocinfo/pprof.proto),
 * gzip'd, as go tool pprof, Pyroscope and Parca read it.  Without BPF or
 * symbols: the caller hands in locations (an address and its lines,
 * already symbolized) and samples (their locations and four values).
 *
 *   pprof_new -> (pprof_begin -> pprof_location/pprof_add_location per
 *   frame -> pprof_add_sample per row -> pprof_write) per reading
 *
 * Locations and functions are kept from one reading to the next (their
 * symbols do not change), samples are not.
 */
#ifndef KMEMSNOOP_PPROF_H
#define KMEMSNOOP_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A sample's values, in this order (the profile's sample types). */
enum pprof_value {
	PPROF_ALLOC_OBJECTS, /* allocations made during the session */
	PPROF_ALLOC_SPACE,   /* their bytes */
	PPROF_INUSE_OBJECTS, /* of those, not freed yet */
	PPROF_INUSE_SPACE,
	PPROF_VALUES,
};

/* One source line of a location: file NULL and line 0 when unknown. */
struct pprof_line {
	const char *func;
	const char *file;
	unsigned int line;
};

struct pprof;

/*
 * inuse: the profile has the inuse_* types (false with --allocinfo=total,
 * which tracks no frees: only alloc_*).  NULL with a one-line reason in
 * err (out of memory, or a build without protobuf-c).
 */
struct pprof *pprof_new(bool inuse, char *err, size_t err_size);
void pprof_free(struct pprof *p);

/* A new reading: forget the samples (locations stay). */
void pprof_begin(struct pprof *p);

/* The location id of addr, 0 while it has none. */
uint64_t pprof_location(const struct pprof *p, unsigned long long addr);

/* A location for addr with its lines, inlined callees first and the
 * function that holds addr last; its id, or 0 when out of memory. */
uint64_t pprof_add_location(struct pprof *p, unsigned long long addr,
			    const struct pprof_line *lines, int nlines);

/* A sample: its locations innermost first, values by enum pprof_value
 * (the inuse ones ignored without inuse).  0 or -ENOMEM. */
int pprof_add_sample(struct pprof *p, const uint64_t *locs, int nlocs,
		     const long long values[PPROF_VALUES]);

/* The reading as a serialized Profile (not compressed), malloc'd in *buf.
 * time_ns: when it was taken (Unix time).  0 or -ENOMEM. */
int pprof_encode(const struct pprof *p, long long time_ns, unsigned char **buf, size_t *len);

/*
 * The reading, gzip'd, to path: written beside it with mode 0600 (kernel
 * addresses are for root's eyes), then renamed over it, so that a reader
 * never sees half a profile.  0, or -1 with a one-line reason in err.
 */
int pprof_write(const struct pprof *p, const char *path, long long time_ns, char *err,
		size_t err_size);

#endif
