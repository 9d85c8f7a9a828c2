/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What pfn.bpf.c and pfn.c share. */
#ifndef KMEMSNOOP_PFN_CALIB_H
#define KMEMSNOOP_PFN_CALIB_H

#define KMT_CALIB_PAGES 16 /* pages recorded at most */
#define KMT_CALIB_PAIRS 8  /* large kmallocs recorded at most */

#endif
