// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --flight-when's condition on /proc/meminfo: see threshold.h. */
#include <stdio.h>
#include <string.h>

#include "threshold.h"

int meminfo_read(const char *path, const char *field, uint64_t *bytes)
{
	FILE *f = fopen(path, "re");
	size_t len = strlen(field);
	char line[256];
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kib;

		if (strncmp(line, field, len) || line[len] != ':')
			continue;
		if (sscanf(line + len + 1, "%llu", &kib) == 1) {
			/* A field without a unit is a count, not kB: taken as it is. */
			*bytes = strstr(line, " kB") ? kib << 10 : kib;
			ret = 0;
		}
		break;
	}
	fclose(f);
	return ret;
}

int threshold_init(struct flight_threshold *t, const char *path, const char *field, char op,
		   uint64_t bytes, char *err, size_t err_size)
{
	memset(t, 0, sizeof(*t));
	t->path = path;
	snprintf(t->field, sizeof(t->field), "%s", field);
	t->op = op;
	t->bytes = bytes;
	if (meminfo_read(path, field, &t->value)) {
		snprintf(err, err_size, "--flight-when: no field %s in %s", field, path);
		return -1;
	}
	t->low = t->value;
	t->armed = true;
	return 0;
}

/* Whether the value is on the firing side of the line now. */
static bool beyond(const struct flight_threshold *t)
{
	switch (t->op) {
	case '<':
		return t->value < t->bytes;
	case '>':
		return t->value > t->bytes;
	default:
		return t->value - t->low >= t->bytes;
	}
}

int threshold_check(struct flight_threshold *t)
{
	if (meminfo_read(t->path, t->field, &t->value))
		return -1;
	if (t->op == '+' && t->value < t->low)
		t->low = t->value;
	if (!beyond(t)) {
		t->armed = true;
		return 0;
	}
	if (!t->armed)
		return 0;
	t->armed = false;
	return 1;
}

void threshold_dumped(struct flight_threshold *t)
{
	if (t->op != '+')
		return;
	t->low = t->value;
	t->armed = true;
}

void threshold_describe(const struct flight_threshold *t, char *buf, size_t size)
{
	if (t->op == '+')
		snprintf(buf, size, "threshold: %s %llu KiB, up %llu KiB (+%llu KiB asked for)",
			 t->field, (unsigned long long)(t->value >> 10),
			 (unsigned long long)((t->value - t->low) >> 10),
			 (unsigned long long)(t->bytes >> 10));
	else
		snprintf(buf, size, "threshold: %s %llu KiB %c %llu KiB", t->field,
			 (unsigned long long)(t->value >> 10), t->op,
			 (unsigned long long)(t->bytes >> 10));
}
