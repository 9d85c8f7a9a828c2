// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat --stacks, which perf kmem does not have: the slab allocations per
 * stack their events carried (--stacks, --user-stacks), each with its
 * bytes, hits and what of it is still alive at the end, as a table with
 * each row's frames, as JSON, or with --folded as the lines flame graph
 * tools read.  Rows are keyed by the frames themselves, the kernel's and
 * the user's together; the tracing machinery's that a kernel stack starts
 * with are the same for every event of a path, and are left out when
 * printed.
 */
#include <stdlib.h>
#include <string.h>

#include "kstat_impl.h"
#include "recording/record.h"
#include "util/json.h"

#define FRAME_TEXT 512

/* --- adding events --------------------------------------------------------- */

static void hash_frames(const unsigned char *ips, uint32_t n, struct kkey *k)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t ip = kmt_stack_ip(ips, i);

		k->a = mix(k->a ^ ip);
		k->b = mix(k->b + ip * 0x9e3779b97f4a7c15ULL);
	}
}

static int fill_frames(struct stackstat *s, const struct kmt_event *ev)
{
	uint32_t n = ev->kstack_nr + ev->ustack_nr;

	s->ips = malloc(n ? n * sizeof(*s->ips) : 1);
	if (!s->ips)
		return -1;
	for (uint32_t i = 0; i < ev->kstack_nr; i++)
		s->ips[i] = kmt_kstack_ip(ev, i);
	for (uint32_t i = 0; i < ev->ustack_nr; i++)
		s->ips[ev->kstack_nr + i] = kmt_ustack_ip(ev, i);
	s->pid = ev->has_task && ev->pid ? (int)ev->pid : (int)ev->tid;
	return 0;
}

int kstat_add_stack(struct kstat *ks, const struct kmt_event *ev, struct ptrstat *p)
{
	struct kkey k = { .a = 0x6a09e667f3bcc908ULL, .b = 0xbb67ae8584caa73bULL,
			  .c = ev->kstack_nr, .d = ev->ustack_nr };
	struct stackstat *s;

	p->stack = 0;
	if (!ev->kstack_nr && !ev->ustack_nr)
		return 0;
	hash_frames(ev->kstack, ev->kstack_nr, &k);
	hash_frames(ev->ustack, ev->ustack_nr, &k);
	s = kstat_table_find(&ks->stacks, &k, true);
	if (!s || (!s->ips && fill_frames(s, ev)))
		return -1;
	s->hit++;
	s->bytes_alloc += ev->bytes_alloc;
	s->alive++;
	s->alive_bytes += ev->bytes_alloc;
	p->stack = (size_t)((char *)s - ks->stacks.items) / ks->stacks.size + 1;
	return 0;
}

void kstat_forget_stack(struct kstat *ks, const struct ptrstat *p)
{
	struct stackstat *s;

	if (!p->stack)
		return;
	s = item(&ks->stacks, p->stack - 1);
	s->alive--;
	s->alive_bytes -= p->last_alloc;
}

void kstat_free_stacks(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(((struct stackstat *)item(t, i))->ips);
	kstat_table_clear(t);
}

/* --- the rows, largest first ------------------------------------------------ */

static int by_bytes(const void *x, const void *y)
{
	const struct stackstat *a = *(const struct stackstat *const *)x;
	const struct stackstat *b = *(const struct stackstat *const *)y;

	if (a->bytes_alloc != b->bytes_alloc)
		return a->bytes_alloc < b->bytes_alloc ? 1 : -1;
	return cmp_u64(b->hit, a->hit);
}

/* The entries sorted (free()), NULL when there is none or no memory. */
static const struct stackstat **sorted(const struct kstat *ks)
{
	const struct stackstat **rows;

	if (!ks->stacks.n)
		return NULL;
	rows = malloc(ks->stacks.n * sizeof(*rows));
	if (!rows)
		return NULL;
	for (size_t i = 0; i < ks->stacks.n; i++)
		rows[i] = item(&ks->stacks, i);
	qsort(rows, ks->stacks.n, sizeof(*rows), by_bytes);
	return rows;
}

static unsigned int kernel_start(const struct stackstat *s, const struct kstat_names *names)
{
	return names->kstack_start ? names->kstack_start(names->ctx, s->ips, s->key.c) : 0;
}

/* Where the frames shown from first of n end: --stack-depth's cut. */
static uint32_t frames_end(uint32_t first, uint32_t n, const struct kstat_names *names)
{
	return names->depth && n - first > names->depth ? first + names->depth : n;
}

static void kernel_frame(const struct stackstat *s, uint32_t i, bool with_offset,
			 const struct kstat_names *names, char *buf, size_t size)
{
	names->callsite(names->ctx, s->ips[i], with_offset, buf, size);
}

static void user_frame(const struct stackstat *s, uint32_t i, bool with_object,
		       const struct kstat_names *names, char *buf, size_t size)
{
	uint64_t ip = s->ips[s->key.c + i];

	if (names->uframe)
		names->uframe(names->ctx, s->pid, ip, with_object, buf, size);
	else
		snprintf(buf, size, "<%016llx>", (unsigned long long)ip);
}

/* --- text ------------------------------------------------------------------- */

static void print_frames(const struct stackstat *s, const struct kstat_names *names, FILE *out)
{
	uint32_t first = kernel_start(s, names);
	char buf[FRAME_TEXT];

	for (uint32_t i = first; i < frames_end(first, s->key.c, names); i++) {
		kernel_frame(s, i, true, names, buf, sizeof(buf));
		fprintf(out, "   => %s\n", buf);
	}
	if (s->key.d)
		fputs("   <user stack trace>\n", out);
	for (uint32_t i = 0; i < frames_end(0, s->key.d, names); i++) {
		user_frame(s, i, true, names, buf, sizeof(buf));
		fprintf(out, "   => %s\n", buf);
	}
}

/* "user_outer;...;user_inner;kernel_outer;...;kernel_inner BYTES": the
 * thread's path into the kernel, then the kernel's, as perf script's
 * stacks fold. */
static void print_folded(const struct stackstat *s, const struct kstat_names *names, FILE *out)
{
	unsigned int first = kernel_start(s, names);
	char buf[FRAME_TEXT];
	bool any = false;

	for (uint32_t i = frames_end(0, s->key.d, names); i-- > 0; any = true) {
		user_frame(s, i, false, names, buf, sizeof(buf));
		fprintf(out, "%s%s", any ? ";" : "", buf);
	}
	for (uint32_t i = frames_end(first, s->key.c, names); i-- > first; any = true) {
		kernel_frame(s, i, false, names, buf, sizeof(buf));
		fprintf(out, "%s%s", any ? ";" : "", buf);
	}
	fprintf(out, "%s %llu\n", any ? "" : "[no frames]", (unsigned long long)s->bytes_alloc);
}

void kstat_print_stacks(const struct kstat *ks, const struct kstat_opts *o,
			const struct kstat_names *names, FILE *out)
{
	const struct stackstat **rows;
	size_t shown;

	if (!o->stacks || !o->slab)
		return;
	rows = sorted(ks);
	if (o->folded) {
		for (size_t i = 0; rows && i < ks->stacks.n; i++)
			print_folded(rows[i], names, out);
		free(rows);
		return;
	}
	fprintf(out, "\nSLAB ALLOCATIONS PER STACK (beyond perf kmem)\n"
		     "=============================================\n");
	if (!ks->stacks.n) {
		fprintf(out, "No slab allocation carried a stack (trace or record with --stacks "
			     "or --user-stacks).\n");
		return;
	}
	kstat_dotted(out);
	fprintf(out, " %14s %10s %14s %10s\n", "Total_alloc", "Hit", "Alive_bytes", "Alive");
	kstat_dotted(out);
	shown = rows ? kstat_extra_shown(ks->stacks.n, o->caller_lines) : 0;
	for (size_t i = 0; i < shown; i++) {
		fprintf(out, " %14llu %10llu %14llu %10llu\n", (unsigned long long)rows[i]->bytes_alloc,
			(unsigned long long)rows[i]->hit, (unsigned long long)rows[i]->alive_bytes,
			(unsigned long long)rows[i]->alive);
		print_frames(rows[i], names, out);
	}
	if (shown < ks->stacks.n)
		fprintf(out, " ... %zu more stacks (-l)\n", ks->stacks.n - shown);
	free(rows);
}

/* --- JSON ------------------------------------------------------------------- */

static void json_frames(const struct stackstat *s, const struct kstat_names *names, FILE *out)
{
	char buf[FRAME_TEXT];

	uint32_t first = kernel_start(s, names);

	fputs(",\"stack\":[", out);
	for (uint32_t i = first; i < frames_end(first, s->key.c, names); i++) {
		kernel_frame(s, i, true, names, buf, sizeof(buf));
		if (i > first)
			fputc(',', out);
		json_put_string(out, buf);
	}
	fputs("],\"user_stack\":[", out);
	for (uint32_t i = 0; i < frames_end(0, s->key.d, names); i++) {
		user_frame(s, i, true, names, buf, sizeof(buf));
		if (i)
			fputc(',', out);
		json_put_string(out, buf);
	}
	fputc(']', out);
}

void kstat_json_stacks(const struct kstat *ks, const struct kstat_opts *o,
		       const struct kstat_names *names, FILE *out)
{
	const struct stackstat **rows;
	size_t shown;

	if (!o->stacks)
		return;
	rows = sorted(ks);
	shown = rows ? kstat_extra_shown(ks->stacks.n, o->caller_lines) : 0;
	fputs(",\"stacks\":[", out);
	for (size_t i = 0; i < shown; i++) {
		fprintf(out, "%s{\"bytes_alloc\":%llu,\"hit\":%llu,\"alive_bytes\":%llu,\"alive\":%llu",
			i ? "," : "", (unsigned long long)rows[i]->bytes_alloc,
			(unsigned long long)rows[i]->hit, (unsigned long long)rows[i]->alive_bytes,
			(unsigned long long)rows[i]->alive);
		json_frames(rows[i], names, out);
		fputc('}', out);
	}
	fprintf(out, "],\"stacks_rows\":%zu", ks->stacks.n);
	free(rows);
}
