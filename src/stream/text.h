/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ftrace-style text output of decoded events. */
#ifndef KMEMSNOOP_TEXT_H
#define KMEMSNOOP_TEXT_H

#include <stdio.h>
#include <linux/types.h>

#include "names/addrnames.h"

struct kmt_event;
struct ksyms;
struct usyms;
struct gfp_names;
struct sink;

/* What the last line of a CPU began with (text.c keeps it): most lines
 * follow one of the same task on the same CPU in the same second, though
 * lines in time order alternate between CPUs.  Zeroed: none. */
#define TEXT_MEMO_COMM 17 /* a comm and its NUL */
#define TEXT_MEMO_CPUS 8
struct text_memo {
	unsigned int tid, cpu;
	unsigned char flags, len; /* len 0: nothing kept */
	char comm[TEXT_MEMO_COMM];
	char text[40]; /* "%16s-%-7d [%03u] " */
	unsigned long long second;
	unsigned char second_len;
	char second_text[24]; /* "%5llu." */
};

/* The GFP flags of recent lines, as text (a few values make most lines). */
#define TEXT_GFP_SLOTS 16 /* a power of 2 */
struct text_gfp_memo {
	unsigned int flags;
	unsigned char len; /* 0: nothing kept */
	char text[63];
};

struct text_sink {
	FILE *out;
	struct ksyms *ksyms;          /* NULL: call sites print as addresses */
	struct usyms *usyms;          /* NULL: user frames print as addresses */
	unsigned int stack_depth;     /* addr_names' depth */
	const struct gfp_names *gfp;
	struct text_memo memo[TEXT_MEMO_CPUS]; /* by CPU number, modulo */
	struct text_gfp_memo gfp_memo[TEXT_GFP_SLOTS]; /* by flags, hashed */
};

/* The '# tracer' header.  Return 0 or -errno of the failed write. */
int text_print_header(struct text_sink *sink);
int text_print_event(struct text_sink *sink, const struct kmt_event *ev);

/* The first frame of ev's kernel stack to show: past those of the tracing
 * machinery (BPF programs, bpf_trace_run2 and such) that a stack taken in
 * a BPF program starts with, named by ks (NULL: none is left out). */
__u32 text_kstack_start(const struct ksyms *ks, const struct kmt_event *ev);

/* The process whose addresses ev's user stack holds. */
int text_ustack_pid(const struct kmt_event *ev);

/* Formats one event line (with its newline) into buf; returns its length. */
size_t text_format_event(struct text_sink *sink, const struct kmt_event *ev, char *buf,
			 size_t size);

/*
 * A sink (sink.h) that prints records as text to out, with addresses
 * named as names says (its symbol tables borrowed) and GFP flags by gfp
 * (the sink keeps a copy).  NULL when out of memory.
 */
struct sink *text_sink_new(FILE *out, const struct addr_names *names,
			   const struct gfp_names *gfp);

/* The frames of a stack to show from first, its first past the tracing
 * machinery's, of nr: depth of them at most. */
static inline __u32 text_stack_end(__u32 first, __u32 nr, unsigned int depth)
{
	return depth && nr - first > depth ? first + depth : nr;
}

#endif
