/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* --hist --json: one JSON object per interval (docs/JSON.md). */
#ifndef KMEMSNOOP_HISTJSON_H
#define KMEMSNOOP_HISTJSON_H

#include <stdio.h>

#include "histdata.h"

/* by: the --hist-by kind (KMT_BY_NONE: none); top: its rows shown.
 * 0, or a negative errno of the output. */
int hist_json_print(FILE *out, const struct hist_interval *iv, enum kmt_hist_by by, int top);

#endif
