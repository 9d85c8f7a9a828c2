// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stat's PROCESSES table, which perf kmem does not have: allocations,
 * frees and pages per pid (0: events without their task), from events or
 * from --stat's BPF maps, as text and as JSON.
 */
#include <stdlib.h>
#include <string.h>

#include "kstat_impl.h"
#include "bpf/kmemtrace.h"
#include "recording/record.h"
#include "util/json.h"

/* --- adding events --------------------------------------------------------- */

static struct proc *find_proc(struct kstat *ks, const struct kmt_event *ev)
{
	struct kkey k = { .a = ev->has_task ? ev->pid : 0 };
	struct proc *p = kstat_table_find(&ks->procs, &k, true);

	if (p && ev->has_task)
		snprintf(p->comm, sizeof(p->comm), "%s", ev->comm);
	return p;
}

int kstat_add_proc(struct kstat *ks, const struct kmt_event *ev)
{
	struct proc *p = find_proc(ks, ev);

	if (!p)
		return -1;
	if (ev->event_id == KMT_EVENT_FREE) {
		p->frees++;
	} else if (ev->type_id == KMT_TYPE_PAGES) {
		p->page_allocs++;
		p->page_bytes += ev->bytes_alloc;
	} else {
		p->allocs++;
		p->bytes_req += ev->bytes_req;
		p->bytes_alloc += ev->bytes_alloc;
	}
	return 0;
}

/* --- adding what was counted elsewhere (BPF maps) ---------------------------- */

int kstat_add_proc_agg(struct kstat *ks, const struct kstat_proc_agg *a)
{
	struct kkey k = { .a = a->pid };
	struct proc *p = kstat_table_find(&ks->procs, &k, true);

	if (!p)
		return -1;
	if (a->comm && a->comm[0])
		snprintf(p->comm, sizeof(p->comm), "%s", a->comm);
	p->allocs += a->allocs;
	p->frees += a->frees;
	p->bytes_req += a->bytes_req;
	p->bytes_alloc += a->bytes_alloc;
	return 0;
}

/* --- printing ----------------------------------------------------------------- */

static int proc_cmp(const void *a, const void *b)
{
	const struct proc *l = a, *r = b;
	uint64_t x = l->bytes_alloc + l->page_bytes, y = r->bytes_alloc + r->page_bytes;

	if (x != y)
		return x > y ? -1 : 1;
	return cmp_u64(l->key.a, r->key.a);
}

/* The processes, most bytes first; NULL when there is no memory. */
static struct proc *proc_rows(const struct kstat *ks)
{
	const struct table *t = &ks->procs;
	struct proc *rows = malloc((t->n ? t->n : 1) * sizeof(*rows));

	if (!rows)
		return NULL;
	if (t->n) /* an empty table's items may be NULL, which neither takes */
		memcpy(rows, t->items, t->n * sizeof(*rows));
	if (t->n > 1)
		qsort(rows, t->n, sizeof(*rows), proc_cmp);
	return rows;
}

void kstat_print_procs(const struct kstat *ks, const struct kstat_opts *o, FILE *out)
{
	const struct table *t = &ks->procs;
	struct proc *rows = proc_rows(ks);
	size_t i, shown = kstat_extra_shown(t->n, o->caller_lines);

	if (!rows)
		return;
	fprintf(out, "\nPROCESSES\n=========\n");
	kstat_dotted(out);
	fprintf(out, " %8s | %-16s | %9s | %15s | %15s | %9s | %9s | %12s\n", "Pid", "Comm",
		"Allocs", "Total_alloc", "Total_req", "Frees", "Pages", "Page KB");
	kstat_dotted(out);
	for (i = 0; i < shown; i++)
		fprintf(out, " %8llu | %-16s | %9llu | %15llu | %15llu | %9llu | %9llu | %12llu\n",
			(unsigned long long)rows[i].key.a, rows[i].comm,
			(unsigned long long)rows[i].allocs, (unsigned long long)rows[i].bytes_alloc,
			(unsigned long long)rows[i].bytes_req, (unsigned long long)rows[i].frees,
			(unsigned long long)rows[i].page_allocs,
			(unsigned long long)(rows[i].page_bytes / 1024));
	if (i < t->n)
		fprintf(out, " ...\n");
	kstat_dotted(out);
	free(rows);
}

/* --- printing: JSON (--json) ------------------------------------------------------- */

void kstat_json_procs(const struct kstat *ks, int lines, FILE *out)
{
	struct proc *rows = proc_rows(ks);
	size_t shown = rows ? kstat_extra_shown(ks->procs.n, lines) : 0;

	fputs(",\"processes\":[", out);
	for (size_t i = 0; i < shown; i++) {
		const struct proc *p = &rows[i];

		fprintf(out, "%s{\"pid\":%llu,\"comm\":", i ? "," : "", (unsigned long long)p->key.a);
		json_put_string(out, p->comm);
		fprintf(out, ",\"allocs\":%llu,\"bytes_alloc\":%llu,\"bytes_req\":%llu,"
			     "\"frees\":%llu,\"page_allocs\":%llu,\"page_bytes\":%llu}",
			(unsigned long long)p->allocs, (unsigned long long)p->bytes_alloc,
			(unsigned long long)p->bytes_req, (unsigned long long)p->frees,
			(unsigned long long)p->page_allocs, (unsigned long long)p->page_bytes);
	}
	fprintf(out, "],\"processes_rows\":%zu", rows ? ks->procs.n : 0);
	free(rows);
}
