/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --user-stacks with -c or --cgroup: the processes the filter follows,
 * looked for in /proc while they live.  Their own records reach user space
 * a second after they were written at most (a heartbeat), when a
 * short-lived process is gone and its maps with it.
 */
#ifndef KMEMSNOOP_PROCSCAN_H
#define KMEMSNOOP_PROCSCAN_H

struct env;
struct usyms;

/* Has u read the maps of every process env's -c (its name) or --cgroup
 * (the cgroup and those below it) follows now. */
void procscan_note(struct usyms *u, const struct env *env);

#endif
