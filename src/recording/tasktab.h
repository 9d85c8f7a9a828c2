/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tasks a stream has described (task records, docs/ABI.md), by tid:
 * what gives an event that carries a tid its task's pid and comm.  Unlike
 * caches, a task's name changes (exec, rename) and a tid passes to another
 * task (fork) on any CPU: the table must see the records of all CPUs in
 * time order, so it goes after the merge of the CPUs' records.  The idle
 * task (tid 0) is never described: it is swapper/CPU, as the kernel names
 * each CPU's.
 */
#ifndef KMEMSNOOP_TASKTAB_H
#define KMEMSNOOP_TASKTAB_H

#include <stdbool.h>

struct tasktab;
struct kmt_event;

struct tasktab *tasktab_new(void);
void tasktab_free(struct tasktab *t);

/*
 * Learns from a task record: false, not an event to print or count.  Gives
 * an event that carries a tid only its task's pid and comm (has_task);
 * one whose task record was lost keeps has_task false.  True for every
 * other record.
 */
bool tasktab_apply(struct tasktab *t, struct kmt_event *ev);

#endif /* KMEMSNOOP_TASKTAB_H */
