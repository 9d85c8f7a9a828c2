// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --hist: bucket bounds, star bars, sizes, labels and shades. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "histfmt.h"
#include "bpf/kmemsnoop.h"
#include "kernel/sources.h"

__u64 hist_bucket_low(int slot)
{
	return slot == 0 ? 0 : 1ULL << slot;
}

/* The last bucket also holds everything larger (kmt_hist_slot). */
__u64 hist_bucket_high(int slot)
{
	return slot >= KMT_HIST_SLOTS - 1 ? ~0ULL : (2ULL << slot) - 1;
}

int hist_last_slot(const __u64 slots[KMT_HIST_SLOTS])
{
	for (int s = KMT_HIST_SLOTS - 1; s >= 0; s--)
		if (slots[s])
			return s;
	return -1;
}

__u64 hist_max(const __u64 *vals, int n)
{
	__u64 max = 0;

	for (int i = 0; i < n; i++)
		if (vals[i] > max)
			max = vals[i];
	return max;
}

void hist_bar(char *buf, int width, __u64 val, __u64 max)
{
	int stars = 0;

	if (width < 0)
		width = 0;
	if (max && val)
		stars = (int)((long double)val * width / max);
	if (stars > width)
		stars = width;
	memset(buf, '*', stars);
	memset(buf + stars, ' ', width - stars);
	buf[width] = '\0';
}

void hist_human(char *buf, size_t size, double v)
{
	static const char units[] = "KMGTPE";
	int u = -1;

	while (v >= 1024 && u < (int)sizeof(units) - 2) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%.0f", v);
	else if (v < 9.95)
		snprintf(buf, size, "%.1f%c", v, units[u]);
	else
		snprintf(buf, size, "%.0f%c", v, units[u]);
}

void hist_pow2(char *buf, size_t size, int exp)
{
	static const char units[] = " KMGTPE";

	if (exp < 0) {
		snprintf(buf, size, "0");
		return;
	}
	if (exp / 10 >= (int)sizeof(units) - 1) {
		snprintf(buf, size, "2^%d", exp);
		return;
	}
	snprintf(buf, size, "%llu%.*s", 1ULL << (exp % 10), exp >= 10, &units[exp / 10]);
}

void hist_pseudo_label(char *buf, size_t size, __u64 id, unsigned int page_shift)
{
	unsigned int type = (id >> 32) & 0xff;
	__u32 bytes = (__u32)id;
	unsigned int order = 0;

	if (type >= KMT_TYPE_COUNT)
		type = KMT_TYPE_CACHE;
	if (type == KMT_TYPE_PAGES) {
		while (order < 32 && ((__u64)1 << (page_shift + order)) < bytes)
			order++;
		snprintf(buf, size, "(pages order %u)", order);
	} else if (bytes == KMT_HIST_PSEUDO_BYTES_MAX) {
		snprintf(buf, size, "(%s 4G or more)", event_classes[type].sizes);
	} else {
		snprintf(buf, size, "(%s %u)", event_classes[type].sizes, bytes);
	}
}

void hist_comm_label(char *buf, size_t size, __u64 id, __u64 id2)
{
	char comm[17];
	size_t i;

	memcpy(comm, &id, 8);
	memcpy(comm + 8, &id2, 8);
	comm[16] = '\0';
	for (i = 0; comm[i]; i++)
		if (comm[i] < 0x20 || comm[i] > 0x7e)
			comm[i] = '?';
	snprintf(buf, size, "%s", i ? comm : "?");
}

const struct hist_key hist_keys[KMT_BY_COUNT] = {
	[KMT_BY_NONE] = { "none", "all", "all" },
	[KMT_BY_CACHE] = { "cache", "cache", "caches" },
	[KMT_BY_CALLSITE] = { "callsite", "call site", "call sites" },
	[KMT_BY_COMM] = { "comm", "comm", "comms" },
	[KMT_BY_CGROUP] = { "cgroup", "cgroup", "cgroups" },
	[KMT_BY_EVENT] = { "event", "event", "events" },
	[KMT_BY_ORDER] = { "order", "order", "orders" },
};

const char *hist_kind_name(enum kmt_hist_by kind, int plural)
{
	if (kind < 0 || kind >= KMT_BY_COUNT)
		return "?";
	return plural ? hist_keys[kind].titles : hist_keys[kind].title;
}

int hist_shade(__u64 count, __u64 max, int levels)
{
	double f;
	int level;

	if (!count || !max || levels < 1)
		return 0;
	if (count >= max || max == 1)
		return levels;
	/* log(1 + count) over log(1 + max): 1 of 1000 still shows as level 1. */
	f = log1p((double)count) / log1p((double)max);
	level = 1 + (int)(f * (levels - 1));
	return level > levels ? levels : level;
}
