/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A sink (sink.h) in front of another that gives it the live stream's
 * records in time order: they are decoded and held (reorder.h) until the
 * stream's sync says every ring has been read past their time.
 */
#ifndef KMEMSNOOP_ORDERSINK_H
#define KMEMSNOOP_ORDERSINK_H

#include <stddef.h>

struct sink;

/* Takes inner (destroyed with it, also when this fails), for records of
 * nrings rings, holding at most cap of them (reorder.h; 0: REORDER_CAP).
 * NULL when out of memory. */
struct sink *order_sink_new(struct sink *inner, int nrings, size_t cap);

#endif
