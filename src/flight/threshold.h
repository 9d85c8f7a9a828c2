/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --flight-when: a trigger on a /proc/meminfo field, looked at by user
 * space between waits.  It fires when the field crosses the line, and
 * again only once it has been back on the other side ('<', '>'), or once
 * it has risen by the size again from its lowest since the dump ('+').
 */
#ifndef KMEMSNOOP_THRESHOLD_H
#define KMEMSNOOP_THRESHOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct flight_threshold {
	const char *path;  /* /proc/meminfo, or a test's file */
	char field[32];
	char op;           /* '<', '>' or '+' */
	uint64_t bytes;
	uint64_t value;    /* the field when last read, in bytes */
	uint64_t low;      /* '+': its lowest since the start or the last dump */
	bool armed;
};

/* The field's value in bytes from a meminfo-style file ("Name:  N kB").
 * 0, or -1 when the file cannot be read or has no such field. */
int meminfo_read(const char *path, const char *field, uint64_t *bytes);

/* Reads the field once.  0, or -1 with a one-line reason in err. */
int threshold_init(struct flight_threshold *t, const char *path, const char *field, char op,
		   uint64_t bytes, char *err, size_t err_size);

/* Reads the field: 1 when the condition fires now, 0 when not, -1 when the
 * field could not be read. */
int threshold_check(struct flight_threshold *t);

/* After the dump it fired: '+' counts from here. */
void threshold_dumped(struct flight_threshold *t);

/* The header's line: "threshold: MemAvailable 498 MiB < 512 MiB". */
void threshold_describe(const struct flight_threshold *t, char *buf, size_t size);

#endif
