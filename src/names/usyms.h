/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * User-space frames named (--user-stacks): the executable mappings of a
 * process, read from /proc/PID/maps while it lives or from a recording's
 * maps file, and the ELF objects mapped, whose symbols and line tables
 * (elfutils libdwfl) name an address.
 */
#ifndef KMEMSNOOP_USYMS_H
#define KMEMSNOOP_USYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct usyms;

/*
 * live: a process's maps are read from /proc the first time one of its
 * frames is named, and again, once a second at most, for an address none
 * of them covers (a library loaded since).  Otherwise only usyms_read()'s.
 * NULL when out of memory.
 */
struct usyms *usyms_new(bool live);
void usyms_free(struct usyms *u);

/* Were the maps of process pid read (and had a mapping)? */
bool usyms_knows(const struct usyms *u, int pid);

/* Reads the maps of process pid now, unless they were (and had a
 * mapping): a process met while it lives, whose frames a recording will
 * need named. */
void usyms_note_process(struct usyms *u, int pid);

/* Reads them again, in place of those read before: the process exec'd. */
void usyms_note_exec(struct usyms *u, int pid);

/*
 * A recording's maps file: a line per executable mapping of a file,
 * "PID START-END OFFSET BUILD-ID PATH" (hexadecimal numbers; BUILD-ID "-"
 * where the object has none or could not be read), after "#" lines.
 * usyms_write() writes every mapping known (0, or -1 on a failed write);
 * usyms_read() adds those of in: 0, or -1 with the bad line in err.
 */
int usyms_write(const struct usyms *u, FILE *out);
int usyms_read(struct usyms *u, FILE *in, char *err, size_t err_size);

/* What usyms_name() finds of an address.  The strings belong to the
 * struct usyms, valid until it is freed. */
struct uframe {
	const char *object;         /* the file mapped there; NULL: no mapping covers it */
	unsigned long long offset;  /* the address's offset in that file */
	const char *func;           /* NULL: no symbol (or the object cannot be read) */
	unsigned long long func_offset;
	const char *file;           /* the source file's name; NULL: no line information */
	unsigned int line;
};

/*
 * Names address addr of a user stack of process pid.  Its function and
 * line are those of the instruction before addr: a return address follows
 * its call, and the first frame, where the thread entered the kernel, its
 * system call (a page fault's is the instruction itself, whose function
 * is the same but where it is the function's first).
 */
void usyms_name(struct usyms *u, int pid, unsigned long long addr, struct uframe *f);

/*
 * The frame at addr as text: "function+0xoff [object] (file:line)" where
 * it is named, "object[+0xoff]" (its offset in the file, as ftrace's
 * sym-userobj prints a frame) where only its mapping is known,
 * "<address>" where not even that.  brief: the function alone (a flame
 * graph's frame).  snprintf's result.
 */
int uframe_format(const struct uframe *f, unsigned long long addr, bool brief, char *buf,
		  size_t size);

#endif
