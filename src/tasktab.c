// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The tasks a stream has described: see tasktab.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "tasktab.h"

struct task_entry {
	__u32 tid; /* 0: free */
	__u32 pid;
	char comm[KMT_COMM_LEN + 1];
};

/*
 * Open addressing, at most half full.  Entries stay after an exit (the
 * exiting task still frees after it), so the table holds every tid seen:
 * bounded by the tids the system hands out (pid_max).
 */
struct tasktab {
	struct task_entry *slots;
	size_t mask; /* capacity - 1, a power of two */
	size_t used;
};

#define INITIAL_SLOTS 1024

struct tasktab *tasktab_new(void)
{
	struct tasktab *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->slots = calloc(INITIAL_SLOTS, sizeof(*t->slots));
	if (!t->slots) {
		free(t);
		return NULL;
	}
	t->mask = INITIAL_SLOTS - 1;
	return t;
}

void tasktab_free(struct tasktab *t)
{
	if (!t)
		return;
	free(t->slots);
	free(t);
}

static size_t hash(__u32 tid)
{
	return (size_t)(tid * 0x9e3779b1U);
}

/* The slot of tid, or the free slot where it would go. */
static struct task_entry *slot_of(const struct tasktab *t, __u32 tid)
{
	size_t i = hash(tid) & t->mask;

	while (t->slots[i].tid && t->slots[i].tid != tid)
		i = (i + 1) & t->mask;
	return &t->slots[i];
}

static bool grow(struct tasktab *t)
{
	struct tasktab bigger = { .mask = t->mask * 2 + 1 };

	bigger.slots = calloc(bigger.mask + 1, sizeof(*bigger.slots));
	if (!bigger.slots)
		return false;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slots[i].tid)
			*slot_of(&bigger, t->slots[i].tid) = t->slots[i];
	free(t->slots);
	t->slots = bigger.slots;
	t->mask = bigger.mask;
	return true;
}

static void learn(struct tasktab *t, const struct kmt_event *ev)
{
	struct task_entry *e;

	if (!ev->tid)
		return;
	/* Out of memory, the name is just not learned. */
	if ((t->used + 1) * 2 > t->mask + 1 && !grow(t))
		return;
	e = slot_of(t, ev->tid);
	if (!e->tid) {
		e->tid = ev->tid;
		t->used++;
	}
	e->pid = ev->pid;
	memcpy(e->comm, ev->comm, sizeof(e->comm));
}

bool tasktab_apply(struct tasktab *t, struct kmt_event *ev)
{
	const struct task_entry *e;

	if (ev->event_id == KMT_EVENT_TASK) {
		if (ev->has_task)
			learn(t, ev);
		return false;
	}
	if (!kmt_is_memory_event(ev) || ev->has_task || !ev->has_tid)
		return true;
	if (!ev->tid) {
		ev->has_task = true;
		ev->pid = 0;
		if (ev->has_time)
			snprintf(ev->comm, sizeof(ev->comm), "swapper/%u", ev->cpu);
		else
			snprintf(ev->comm, sizeof(ev->comm), "swapper");
		return true;
	}
	e = slot_of(t, ev->tid);
	if (!e->tid)
		return true; /* its record was lost: no name */
	ev->has_task = true;
	ev->pid = e->pid;
	memcpy(ev->comm, e->comm, sizeof(ev->comm));
	return true;
}
