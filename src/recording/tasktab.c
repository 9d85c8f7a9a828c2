// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The tasks a stream has described: see tasktab.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record.h"
#include "util/idtab.h"
#include "tasktab.h"

/*
 * struct tasktab is an idtab (idtab.h) of these, by tid.  Entries stay
 * after an exit (the exiting task still frees after it), so the table holds
 * every tid seen: bounded by the tids the system hands out (pid_max).
 */
struct task_entry {
	uint64_t tid; /* the key */
	__u32 pid;
	char comm[KMT_COMM_LEN + 1];
};

struct tasktab *tasktab_new(void)
{
	return (struct tasktab *)idtab_new(sizeof(struct task_entry));
}

void tasktab_free(struct tasktab *t)
{
	idtab_free((struct idtab *)t);
}

/* Out of memory, the name is just not learned. */
static void learn(struct tasktab *t, const struct kmt_event *ev)
{
	struct task_entry *e = idtab_insert((struct idtab *)t, ev->tid);

	if (!e)
		return;
	e->pid = ev->pid;
	memcpy(e->comm, ev->comm, sizeof(e->comm));
}

/* The idle task: one per CPU, named by the kernel for its CPU. */
static void name_idle(struct kmt_event *ev)
{
	ev->has_task = true;
	ev->pid = 0;
	if (ev->has_time)
		snprintf(ev->comm, sizeof(ev->comm), "swapper/%u", ev->cpu % 100000000);
	else
		snprintf(ev->comm, sizeof(ev->comm), "swapper");
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
		name_idle(ev);
		return true;
	}
	e = idtab_find((struct idtab *)t, ev->tid);
	if (!e)
		return true; /* its record was lost: no name */
	ev->has_task = true;
	ev->pid = e->pid;
	memcpy(ev->comm, e->comm, sizeof(ev->comm));
	return true;
}
