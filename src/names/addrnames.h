/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What names the addresses an output prints (the text, --json, --stat). */
#ifndef KMEMSNOOP_ADDRNAMES_H
#define KMEMSNOOP_ADDRNAMES_H

struct ksyms;
struct usyms;

struct addr_names {
	struct ksyms *ksyms;  /* kernel addresses; NULL: printed as such */
	struct usyms *usyms;  /* user frames (--user-stacks); NULL: printed as addresses */
	unsigned int depth;   /* frames shown of each stack, the machinery's left out; 0: all */
};

#endif
