// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * recwalk: reads the CPU files of a kmemsnoop -o recording apart from
 * kmemsnoop's own reader, from docs/ABI.md alone: each record starts with
 * its event id (u8), type id (u8), size (u16) and the CPU's sequence
 * number (s32), and the next record follows it.  For the tests that must
 * not trust kmemsnoop -i to check what kmemsnoop -o wrote.  Static, libc
 * only, like the workload: it runs in the test VMs.
 *
 *   recwalk FILE...
 *
 * One line per file:
 *   NAME RECORDS EVENTS MISSING TWICE FIRST LAST
 * (EVENTS: allocation and free records; MISSING: numbers absent between
 * FIRST and LAST; TWICE: numbers seen more than once), or
 *   NAME bad OFFSET WHY
 * where a record does not decode (a size that does not lead to the next
 * record, an event id the ABI does not define).  Exit 0, or 1 when a file
 * could not be read.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORE_SIZE 24      /* the smallest record: its core alone */
#define EVENT_ID_MAX 4    /* KMT_EVENT_HEARTBEAT */
#define EVENT_FREE 1      /* ids up to here are allocations and frees */

static int cmp_s32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

static unsigned char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0, got;

	if (!f)
		return NULL;
	do {
		if (n == cap) {
			unsigned char *grown = realloc(buf, cap = cap ? 2 * cap : 1 << 20);

			if (!grown) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = grown;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	*len = n;
	return buf ? buf : malloc(1);
}

static void walk(const char *name, const unsigned char *data, size_t len)
{
	size_t off = 0, records = 0, events = 0, missing = 0, twice = 0;
	int32_t *seqs = malloc((len / CORE_SIZE + 1) * sizeof(*seqs));

	if (!seqs) {
		printf("%s bad 0 out of memory\n", name);
		return;
	}
	while (off < len) {
		uint16_t size;
		int32_t seq;

		if (len - off < CORE_SIZE) {
			printf("%s bad %zu a record cut short\n", name, off);
			free(seqs);
			return;
		}
		memcpy(&size, data + off + 2, sizeof(size));
		memcpy(&seq, data + off + 4, sizeof(seq));
		if (data[off] > EVENT_ID_MAX || size < CORE_SIZE || size > len - off) {
			printf("%s bad %zu event %u size %u\n", name, off, data[off], size);
			free(seqs);
			return;
		}
		events += data[off] <= EVENT_FREE;
		seqs[records++] = seq;
		off += size;
	}
	qsort(seqs, records, sizeof(*seqs), cmp_s32);
	for (size_t i = 1; i < records; i++) {
		if (seqs[i] == seqs[i - 1])
			twice++;
		else
			missing += (size_t)((int64_t)seqs[i] - seqs[i - 1] - 1);
	}
	printf("%s %zu %zu %zu %zu %ld %ld\n", name, records, events, missing, twice,
	       records ? (long)seqs[0] : 0L, records ? (long)seqs[records - 1] : -1L);
	free(seqs);
}

int main(int argc, char **argv)
{
	int status = 0;

	for (int i = 1; i < argc; i++) {
		const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
		size_t len = 0;
		unsigned char *data = read_all(argv[i], &len);

		if (!data) {
			fprintf(stderr, "recwalk: cannot read %s\n", argv[i]);
			status = 1;
			continue;
		}
		walk(name, data, len);
		free(data);
	}
	return status;
}
