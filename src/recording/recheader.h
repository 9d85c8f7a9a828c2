/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A recording's header file (docs/ABI.md): what machine, kernel and
 * command wrote the recording, when, with what clock, and what it lost.
 * Text: a first line "kmemsnoop-recording 1", then key=value lines.  A
 * reader ignores keys it does not know and does without missing ones.
 */
#ifndef KMEMSNOOP_RECHEADER_H
#define KMEMSNOOP_RECHEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define RECHEADER_MAGIC "kmemsnoop-recording"
#define RECHEADER_FORMAT 1

/* The keys, in the order they are written (the table in recheader.c). */
enum rh_key {
	RH_ABI,
	RH_VERSION,
	RH_COMMAND,
	RH_ARCH,
	RH_PAGE_SIZE,
	RH_POSSIBLE_CPUS,
	RH_RELEASE,
	RH_KERNEL_VERSION,
	RH_BUILD_ID,
	RH_BOOT_ID,
	RH_CLOCK,
	RH_CLOCK_OFFSET,
	RH_RING_SIZE,
	RH_LINEAR_MAP,
	RH_START,
	RH_STOP,
	RH_WRITTEN,
	RH_LOST,
	RH_LOST_BYTES,
	RH_MISSED,
	RH_TRIGGER,       /* a flight recorder's dump: what fired it */
	RH_TRIGGER_NS,    /* and when, in the records' clock */
	RH_WINDOW_NS,     /* the past it was asked to keep (--flight=SECONDS) */
	RH_STACK_DEPTH,   /* --stack-depth: the frames of each stack to show */
	RH_NKEYS,
};

struct rec_header {
	unsigned int present; /* bit (1 << enum rh_key) per key that has a value */
	unsigned long long abi, page_size, possible_cpus, ring_size;
	unsigned long long linear_map; /* the kernel's linear map: virtual address of physical 0 */
	long long clock_offset_ns; /* wall clock (CLOCK_REALTIME) = clock + this */
	unsigned long long start_ns, stop_ns; /* in the records' clock */
	unsigned long long written, lost, lost_bytes, missed;
	unsigned long long trigger_ns, window_ns;
	unsigned long long stack_depth;
	char trigger[256]; /* "oom: victim pid 123 (memhog)" */
	char version[32];
	char command[4096]; /* the arguments, quoted as a shell would need */
	char arch[65];
	char release[65];
	char kernel_version[257];
	char build_id[129]; /* hex */
	char boot_id[64];
	char clock[32];
};

static inline bool recheader_has(const struct rec_header *h, enum rh_key k)
{
	return h->present & (1u << k);
}

/*
 * What is known when a recording starts: this machine, kernel and
 * process (its command line from /proc/self/cmdline), ncpus possible
 * CPUs with rings of ring_size bytes.  What cannot be read is left out.
 */
void recheader_collect(struct rec_header *h, int ncpus, unsigned long long ring_size);

/* --stack-depth (0: none, left out): readers show as many frames. */
void recheader_set_stack_depth(struct rec_header *h, unsigned int depth);

/* Where the kernel maps physical memory (0: not known, left out). */
void recheader_set_linear_map(struct rec_header *h, unsigned long long linear_map);

/* The start, now, in the records' clock (unless recheader_set_span()
 * said it). */
void recheader_start(struct rec_header *h);

/* A recording of a span that is not the time it was written in (a flight
 * recorder's dump): its first and last records' times. */
void recheader_set_span(struct rec_header *h, unsigned long long start_ns,
			unsigned long long stop_ns);

/* A flight recorder's dump: what fired it (one line), when, and the past
 * it was asked to keep (0: all the store held). */
void recheader_set_trigger(struct rec_header *h, const char *what, unsigned long long at_ns,
			   unsigned long long window_ns);

/* The stop, now (unless recheader_set_span() said it), and the counts of
 * the summary. */
void recheader_stop(struct rec_header *h, unsigned long long written, unsigned long long lost,
		    unsigned long long lost_bytes, unsigned long long missed);

/* The file's text.  0, or -1 when writing to out failed. */
int recheader_write(const struct rec_header *h, FILE *out);

/*
 * Reads len bytes of such text (not NUL-terminated) into h.  0, or -1
 * with a one-line reason in err: no magic line, a newer format, a line
 * without '=', a bad escape, a known number key whose value is not one,
 * or no newline at the end (a truncated file).
 */
int recheader_parse(const char *text, size_t len, struct rec_header *h, char *err,
		    size_t err_size);

/* "# " lines for the top of -i's text output: what h has. */
int recheader_print(const struct rec_header *h, FILE *out);

#endif /* KMEMSNOOP_RECHEADER_H */
