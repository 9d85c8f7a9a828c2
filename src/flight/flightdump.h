/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A flight recorder's dump: the records copied out of the store, written
 * as an ordinary recording (recording/binout.h) in a directory of its own,
 * ROOT/YYYYmmdd-HHMMSS.mmm-TRIGGER; and the rotation that keeps the newest
 * dumps only.
 */
#ifndef KMEMSNOOP_FLIGHTDUMP_H
#define KMEMSNOOP_FLIGHTDUMP_H

#include <stddef.h>

struct gfp_names;
struct rec_header;

/* A CPU's records, whole and in order: its blocks one after the other. */
struct flight_cpu_records {
	unsigned char *data;
	size_t len, cap;
	/* The first bytes of data whose events are left out: blocks copied
	 * for what they describe only (an earlier dump has their events). */
	size_t describe_only;
};

struct flight_dump {
	/* What fired it: a word for the directory's name ("oom"), a line
	 * for the header, and when (the records' clock). */
	const char *kind;
	char what[256];
	unsigned long long at_ns;
	/* Events older than at_ns - window_ns are left out; 0: none is. */
	unsigned long long window_ns;
	/* Events lost since the dump before (while it was written). */
	unsigned long long lost, lost_bytes;
	int ncpus;
	const struct flight_cpu_records *cpu;
};

/* What a dump wrote. */
struct flight_dump_result {
	char dir[4096];
	unsigned long long events;          /* allocation and free records */
	unsigned long long first_ns, last_ns; /* of those events; 0: none */
	unsigned long long bytes;           /* of records, all CPUs */
	unsigned long long oldest_ns;       /* the oldest event copied, kept or not; 0: none */
};

/*
 * Writes d into a new directory under root.  base: the recording's header
 * as collected at the start (machine, kernel, command); the dump's span,
 * trigger and counts are added to a copy.  gfp names the GFP flags.
 * tracepoints: the traced tracepoints' names, n of them, for the
 * recording's tracepoints file.  0, or -1 with a one-line reason in err.
 */
int flightdump_write(const char *root, const struct flight_dump *d, const struct rec_header *base,
		     const struct gfp_names *gfp, const char **tracepoints, int n,
		     struct flight_dump_result *res, char *err, size_t err_size);

/*
 * Removes the oldest dumps under root (directories named as
 * flightdump_write() names them) until keep are left, and, when max_bytes
 * is not 0, until those left take max_bytes at most on disk (but the
 * newest, which is always kept).  How many were removed, or -1 with a
 * one-line reason in err.
 */
int flightdump_rotate(const char *root, unsigned int keep, unsigned long long max_bytes,
		      char *err, size_t err_size);

#endif /* KMEMSNOOP_FLIGHTDUMP_H */
