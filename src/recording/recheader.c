// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The header file of a recording.  Values are one line each: strings are
 * written with backslash escapes (\\, \n, \t, \xHH for other control
 * bytes), so that a command line or a kernel version string cannot break
 * a line, and read back through the same escapes; numbers are decimal.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bpf/kmemtrace.h"
#include "names/alloctag.h"
#include "util/version.h"
#include "recheader.h"

enum rh_type { RH_U64, RH_S64, RH_STR };

struct rh_field {
	const char *name;
	enum rh_type type;
	size_t offset;
	size_t size; /* strings: the buffer's */
};

#define NUM(f) offsetof(struct rec_header, f), 0
#define STR(f) offsetof(struct rec_header, f), sizeof(((struct rec_header *)0)->f)

static const struct rh_field fields[RH_NKEYS] = {
	[RH_ABI] = { "kmemtrace_abi", RH_U64, NUM(abi) },
	[RH_VERSION] = { "kmemsnoop_version", RH_STR, STR(version) },
	[RH_COMMAND] = { "command", RH_STR, STR(command) },
	[RH_ARCH] = { "arch", RH_STR, STR(arch) },
	[RH_PAGE_SIZE] = { "page_size", RH_U64, NUM(page_size) },
	[RH_POSSIBLE_CPUS] = { "possible_cpus", RH_U64, NUM(possible_cpus) },
	[RH_RELEASE] = { "kernel_release", RH_STR, STR(release) },
	[RH_KERNEL_VERSION] = { "kernel_version", RH_STR, STR(kernel_version) },
	[RH_BUILD_ID] = { "kernel_build_id", RH_STR, STR(build_id) },
	[RH_BOOT_ID] = { "boot_id", RH_STR, STR(boot_id) },
	[RH_CLOCK] = { "clock", RH_STR, STR(clock) },
	[RH_CLOCK_OFFSET] = { "clock_realtime_offset_ns", RH_S64, NUM(clock_offset_ns) },
	[RH_RING_SIZE] = { "ring_size", RH_U64, NUM(ring_size) },
	[RH_LINEAR_MAP] = { "linear_map", RH_U64, NUM(linear_map) },
	[RH_START] = { "start_ns", RH_U64, NUM(start_ns) },
	[RH_STOP] = { "stop_ns", RH_U64, NUM(stop_ns) },
	[RH_WRITTEN] = { "events_written", RH_U64, NUM(written) },
	[RH_LOST] = { "events_lost", RH_U64, NUM(lost) },
	[RH_LOST_BYTES] = { "bytes_lost", RH_U64, NUM(lost_bytes) },
	[RH_MISSED] = { "events_missed", RH_U64, NUM(missed) },
	[RH_TRIGGER] = { "flight_trigger", RH_STR, STR(trigger) },
	[RH_TRIGGER_NS] = { "flight_trigger_ns", RH_U64, NUM(trigger_ns) },
	[RH_WINDOW_NS] = { "flight_window_ns", RH_U64, NUM(window_ns) },
	[RH_STACK_DEPTH] = { "stack_depth", RH_U64, NUM(stack_depth) },
};

static void *field_of(struct rec_header *h, enum rh_key k)
{
	return (char *)h + fields[k].offset;
}

static const void *cfield_of(const struct rec_header *h, enum rh_key k)
{
	return (const char *)h + fields[k].offset;
}

static void mark(struct rec_header *h, enum rh_key k)
{
	h->present |= 1u << k;
}

static void set_u64(struct rec_header *h, enum rh_key k, unsigned long long v)
{
	*(unsigned long long *)field_of(h, k) = v;
	mark(h, k);
}

static void set_str(struct rec_header *h, enum rh_key k, const char *s)
{
	if (!s || !*s)
		return;
	snprintf(field_of(h, k), fields[k].size, "%s", s);
	mark(h, k);
}

/* --- collecting -------------------------------------------------------------------- */

static unsigned long long clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

/* The first line of a small file, without its newline ("" when unreadable). */
static void read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void collect_build_id(struct rec_header *h)
{
	unsigned char id[64];
	size_t len = alloctag_running_build_id(id, sizeof(id));
	char hex[sizeof(h->build_id)];

	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * len] = '\0';
	set_str(h, RH_BUILD_ID, hex);
}

/* CLOCK_REALTIME - CLOCK_MONOTONIC, the realtime read between two monotonic
 * reads (bpf_ktime_get_ns() is CLOCK_MONOTONIC). */
static void collect_clock(struct rec_header *h)
{
	unsigned long long m1 = clock_ns(CLOCK_MONOTONIC);
	unsigned long long r = clock_ns(CLOCK_REALTIME);
	unsigned long long m2 = clock_ns(CLOCK_MONOTONIC);

	set_str(h, RH_CLOCK, "CLOCK_MONOTONIC");
	h->clock_offset_ns = (long long)(r - (m1 + (m2 - m1) / 2));
	mark(h, RH_CLOCK_OFFSET);
}

/* Characters a shell takes literally outside quotes. */
static bool shell_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			    "_-+=./:,@%", *s))
			return false;
	return true;
}

/* A bounded writer: keeps what fits. */
struct buf {
	char *p;
	size_t size, len;
};

static void put(struct buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n && b->len + 1 < b->size; i++)
		b->p[b->len++] = s[i];
	b->p[b->len] = '\0';
}

static void put_arg(struct buf *b, const char *arg)
{
	if (b->len)
		put(b, " ", 1);
	if (shell_safe(arg)) {
		put(b, arg, strlen(arg));
		return;
	}
	put(b, "'", 1);
	for (; *arg; arg++) {
		if (*arg == '\'')
			put(b, "'\\''", 4);
		else
			put(b, arg, 1);
	}
	put(b, "'", 1);
}

/* /proc/self/cmdline: the arguments, NUL-terminated one after the other. */
static void collect_command(struct rec_header *h)
{
	char args[8192];
	struct buf b = { h->command, sizeof(h->command), 0 };
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, args, sizeof(args) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return;
	args[n] = '\0';
	h->command[0] = '\0';
	for (ssize_t off = 0; off < n; off += (ssize_t)strlen(args + off) + 1)
		put_arg(&b, args + off);
	mark(h, RH_COMMAND);
}

void recheader_set_stack_depth(struct rec_header *h, unsigned int depth)
{
	if (depth)
		set_u64(h, RH_STACK_DEPTH, depth);
}

void recheader_set_linear_map(struct rec_header *h, unsigned long long linear_map)
{
	if (linear_map)
		set_u64(h, RH_LINEAR_MAP, linear_map);
}

void recheader_collect(struct rec_header *h, int ncpus, unsigned long long ring_size)
{
	struct utsname u;
	char boot_id[64];
	long page = sysconf(_SC_PAGESIZE);

	memset(h, 0, sizeof(*h));
	set_u64(h, RH_ABI, KMT_ABI_VERSION);
	set_str(h, RH_VERSION, kmemsnoop_version());
	collect_command(h);
	if (!uname(&u)) {
		set_str(h, RH_ARCH, u.machine);
		set_str(h, RH_RELEASE, u.release);
		set_str(h, RH_KERNEL_VERSION, u.version);
	}
	if (page > 0)
		set_u64(h, RH_PAGE_SIZE, (unsigned long long)page);
	set_u64(h, RH_POSSIBLE_CPUS, (unsigned long long)ncpus);
	collect_build_id(h);
	read_line("/proc/sys/kernel/random/boot_id", boot_id, sizeof(boot_id));
	set_str(h, RH_BOOT_ID, boot_id);
	collect_clock(h);
	set_u64(h, RH_RING_SIZE, ring_size);
}

void recheader_start(struct rec_header *h)
{
	if (!recheader_has(h, RH_START))
		set_u64(h, RH_START, clock_ns(CLOCK_MONOTONIC));
}

void recheader_set_span(struct rec_header *h, unsigned long long start_ns,
			unsigned long long stop_ns)
{
	set_u64(h, RH_START, start_ns);
	set_u64(h, RH_STOP, stop_ns);
}

void recheader_set_trigger(struct rec_header *h, const char *what, unsigned long long at_ns,
			   unsigned long long window_ns)
{
	set_str(h, RH_TRIGGER, what);
	set_u64(h, RH_TRIGGER_NS, at_ns);
	if (window_ns)
		set_u64(h, RH_WINDOW_NS, window_ns);
}

void recheader_stop(struct rec_header *h, unsigned long long written, unsigned long long lost,
		    unsigned long long lost_bytes, unsigned long long missed)
{
	if (!recheader_has(h, RH_STOP))
		set_u64(h, RH_STOP, clock_ns(CLOCK_MONOTONIC));
	set_u64(h, RH_WRITTEN, written);
	set_u64(h, RH_LOST, lost);
	set_u64(h, RH_LOST_BYTES, lost_bytes);
	set_u64(h, RH_MISSED, missed);
}

/* --- writing ----------------------------------------------------------------------- */

static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\')
			fputs("\\\\", out);
		else if (c == '\n')
			fputs("\\n", out);
		else if (c == '\t')
			fputs("\\t", out);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\x%02x", c);
		else
			fputc(c, out);
	}
}

static void write_value(const struct rec_header *h, enum rh_key k, FILE *out)
{
	const void *v = cfield_of(h, k);

	if (fields[k].type == RH_U64)
		fprintf(out, "%llu", *(const unsigned long long *)v);
	else if (fields[k].type == RH_S64)
		fprintf(out, "%lld", *(const long long *)v);
	else
		put_escaped(out, v);
}

int recheader_write(const struct rec_header *h, FILE *out)
{
	fprintf(out, "%s %d\n", RECHEADER_MAGIC, RECHEADER_FORMAT);
	for (int k = 0; k < RH_NKEYS; k++) {
		if (!recheader_has(h, k))
			continue;
		fprintf(out, "%s=", fields[k].name);
		write_value(h, k, out);
		fputc('\n', out);
	}
	return ferror(out) ? -1 : 0;
}

/* --- reading ----------------------------------------------------------------------- */

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Undoes put_escaped() into dst (truncated to size); why not, or NULL. */
static const char *unescape(const char *s, size_t len, char *dst, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (c == '\\') {
			char e = ++i < len ? s[i] : '\0';

			if (e == '\\' || e == 'n' || e == 't') {
				c = e == 'n' ? '\n' : e == 't' ? '\t' : '\\';
			} else if (e == 'x' && i + 2 < len && hex_digit(s[i + 1]) >= 0 &&
				   hex_digit(s[i + 2]) >= 0) {
				c = (char)(hex_digit(s[i + 1]) << 4 | hex_digit(s[i + 2]));
				i += 2;
			} else {
				return "a bad backslash escape";
			}
		}
		if (c == '\0')
			return "a NUL byte";
		if (o + 1 < size)
			dst[o++] = c;
	}
	dst[o] = '\0';
	return NULL;
}

/* A decimal number of len bytes, with a '-' if negative is true. */
static const char *parse_number(const char *s, size_t len, bool negative_ok,
				unsigned long long *value)
{
	bool negative = len && s[0] == '-' && negative_ok;
	unsigned long long v = 0;
	size_t i = negative;

	if (i == len)
		return "not a number";
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return "not a number";
		if (v > (~0ULL - (unsigned long long)(s[i] - '0')) / 10)
			return "a number too large";
		v = v * 10 + (unsigned long long)(s[i] - '0');
	}
	/* Down to -(2^63 - 1) only: the offset's magnitude is printed (llabs). */
	if (negative_ok && v > (1ULL << 63) - 1)
		return "a number too large";
	*value = negative ? 0 - v : v;
	return NULL;
}

static int find_key(const char *name, size_t len)
{
	for (int k = 0; k < RH_NKEYS; k++)
		if (strlen(fields[k].name) == len && !memcmp(fields[k].name, name, len))
			return k;
	return -1;
}

/* One key=value line; why it is bad, or NULL (unknown keys included). */
static const char *parse_line(struct rec_header *h, const char *line, size_t len)
{
	const char *eq = memchr(line, '=', len), *val;
	unsigned long long n;
	const char *why;
	size_t vlen;
	int k;

	if (!eq || eq == line)
		return "expected key=value";
	k = find_key(line, (size_t)(eq - line));
	if (k < 0)
		return NULL; /* a newer kmemsnoop's: ignored */
	val = eq + 1;
	vlen = len - (size_t)(val - line);
	if (fields[k].type == RH_STR) {
		/* A repeated key's value replaces the earlier one, whole. */
		memset(field_of(h, k), 0, fields[k].size);
		why = unescape(val, vlen, field_of(h, k), fields[k].size);
	} else {
		why = parse_number(val, vlen, fields[k].type == RH_S64, &n);
		if (!why)
			*(unsigned long long *)field_of(h, k) = n;
	}
	if (!why)
		mark(h, k);
	return why;
}

/* "kmemsnoop-recording N" of len bytes: its format, or -1. */
static long parse_magic(const char *line, size_t len)
{
	size_t mlen = strlen(RECHEADER_MAGIC);
	unsigned long long format;

	if (len <= mlen + 1 || memcmp(line, RECHEADER_MAGIC, mlen) || line[mlen] != ' ' ||
	    parse_number(line + mlen + 1, len - mlen - 1, false, &format) || format > 1000000)
		return -1;
	return (long)format;
}

int recheader_parse(const char *text, size_t len, struct rec_header *h, char *err,
		    size_t err_size)
{
	size_t off = 0, lineno = 0;

	memset(h, 0, sizeof(*h));
	while (off < len) {
		const char *line = text + off, *nl = memchr(line, '\n', len - off);
		size_t llen = nl ? (size_t)(nl - line) : 0;
		const char *why = NULL;
		long format;

		lineno++;
		if (!nl) {
			snprintf(err, err_size, "line %zu: no newline at the end: truncated", lineno);
			return -1;
		}
		if (lineno > 1) {
			why = parse_line(h, line, llen);
		} else if ((format = parse_magic(line, llen)) < 0) {
			why = "not a kmemsnoop recording header (no \"" RECHEADER_MAGIC " N\" line)";
		} else if (format != RECHEADER_FORMAT) {
			snprintf(err, err_size, "header format %ld: this kmemsnoop reads format %d",
				 format, RECHEADER_FORMAT);
			return -1;
		}
		if (why) {
			snprintf(err, err_size, "line %zu: %s", lineno, why);
			return -1;
		}
		off = (size_t)(nl - text) + 1;
	}
	if (!lineno) {
		snprintf(err, err_size, "empty");
		return -1;
	}
	return 0;
}

/* --- printing ---------------------------------------------------------------------- */

/* A time in the records' clock as local wall-clock time. */
static void put_wall(const struct rec_header *h, unsigned long long ns, FILE *out)
{
	long long wall = 0;
	time_t sec;
	struct tm tm;
	char buf[64];
	/* Both come from a file: their sum must not overflow. */
	bool known = recheader_has(h, RH_CLOCK_OFFSET) && ns <= (unsigned long long)LLONG_MAX &&
		     !__builtin_add_overflow((long long)ns, h->clock_offset_ns, &wall);

	sec = (time_t)(wall / 1000000000LL);
	if (!known || wall < 0 || !localtime_r(&sec, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm)) {
		fprintf(out, "%llu.%06llu", ns / 1000000000ULL, ns % 1000000000ULL / 1000);
		return;
	}
	fprintf(out, "%s.%06lld", buf, wall % 1000000000LL / 1000);
	if (strftime(buf, sizeof(buf), " %z", &tm))
		fputs(buf, out);
	fprintf(out, " (clock %llu.%06llu)", ns / 1000000000ULL, ns % 1000000000ULL / 1000);
}

static void print_written_by(const struct rec_header *h, FILE *out)
{
	fprintf(out, "# recording: header format %d", RECHEADER_FORMAT);
	if (recheader_has(h, RH_ABI))
		fprintf(out, ", kmemtrace ABI %llu", h->abi);
	if (recheader_has(h, RH_VERSION)) {
		fputs(", written by kmemsnoop ", out);
		put_escaped(out, h->version);
	}
	fputc('\n', out);
	if (recheader_has(h, RH_COMMAND)) {
		fputs("# command: ", out);
		put_escaped(out, h->command);
		fputc('\n', out);
	}
}

/* "# label: " and the strings of keys that are there, space separated. */
static void print_strings(const struct rec_header *h, FILE *out, const char *label,
			  const enum rh_key *keys, size_t n)
{
	bool any = false;

	for (size_t i = 0; i < n; i++) {
		if (!recheader_has(h, keys[i]))
			continue;
		fputs(any ? " " : label, out);
		put_escaped(out, cfield_of(h, keys[i]));
		any = true;
	}
	if (any)
		fputc('\n', out);
}

static void print_kernel(const struct rec_header *h, FILE *out)
{
	static const enum rh_key kernel[] = { RH_RELEASE, RH_KERNEL_VERSION, RH_ARCH };
	static const enum rh_key build[] = { RH_BUILD_ID };
	static const enum rh_key boot[] = { RH_BOOT_ID };

	print_strings(h, out, "# kernel: ", kernel, 3);
	print_strings(h, out, "# kernel build id: ", build, 1);
	print_strings(h, out, "# boot id: ", boot, 1);
}

static void print_machine(const struct rec_header *h, FILE *out)
{
	const char *sep = "# ";

	if (recheader_has(h, RH_POSSIBLE_CPUS)) {
		fprintf(out, "%s%llu possible CPUs", sep, h->possible_cpus);
		sep = ", ";
	}
	if (recheader_has(h, RH_PAGE_SIZE)) {
		fprintf(out, "%spage size %llu", sep, h->page_size);
		sep = ", ";
	}
	if (recheader_has(h, RH_RING_SIZE)) {
		fprintf(out, "%sring buffers of %llu KiB per CPU", sep, h->ring_size >> 10);
		sep = ", ";
	}
	if (sep[0] == ',')
		fputc('\n', out);
}

static void print_times(const struct rec_header *h, FILE *out)
{
	if (recheader_has(h, RH_CLOCK)) {
		fputs("# clock: ", out);
		put_escaped(out, h->clock);
		if (recheader_has(h, RH_CLOCK_OFFSET))
			fprintf(out, " (wall clock = clock %c %lld.%09lld s)",
				h->clock_offset_ns < 0 ? '-' : '+',
				llabs(h->clock_offset_ns) / 1000000000LL,
				llabs(h->clock_offset_ns) % 1000000000LL);
		fputc('\n', out);
	}
	if (recheader_has(h, RH_START)) {
		fputs("# started: ", out);
		put_wall(h, h->start_ns, out);
		fputc('\n', out);
	}
	if (!recheader_has(h, RH_STOP)) {
		fputs("# stopped: not said (kmemsnoop did not end normally)\n", out);
		return;
	}
	fputs("# stopped: ", out);
	put_wall(h, h->stop_ns, out);
	if (recheader_has(h, RH_START) && h->stop_ns >= h->start_ns)
		fprintf(out, ", after %.3f s", (double)(h->stop_ns - h->start_ns) / 1e9);
	fputc('\n', out);
}

/* A flight recorder's dump: what fired it, when, and the past kept. */
static void print_trigger(const struct rec_header *h, FILE *out)
{
	if (!recheader_has(h, RH_TRIGGER))
		return;
	fputs("# flight recorder dump, trigger: ", out);
	put_escaped(out, h->trigger);
	if (recheader_has(h, RH_TRIGGER_NS)) {
		fputs(" at ", out);
		put_wall(h, h->trigger_ns, out);
	}
	if (recheader_has(h, RH_WINDOW_NS))
		fprintf(out, "; the last %.3f s asked for", (double)h->window_ns / 1e9);
	fputc('\n', out);
}

static void print_counts(const struct rec_header *h, FILE *out)
{
	if (recheader_has(h, RH_WRITTEN))
		fprintf(out, "# events: %llu written, %llu lost (%llu bytes), %llu missed\n",
			h->written, h->lost, h->lost_bytes, h->missed);
}

int recheader_print(const struct rec_header *h, FILE *out)
{
	print_written_by(h, out);
	print_kernel(h, out);
	print_machine(h, out);
	print_times(h, out);
	print_trigger(h, out);
	print_counts(h, out);
	if (recheader_has(h, RH_STACK_DEPTH))
		fprintf(out, "# stacks: %llu frames at most (--stack-depth)\n", h->stack_depth);
	fputs("#\n", out);
	return ferror(out) ? -1 : 0;
}
