// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The progress line of a long read (progress.h). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "progress.h"

/* At most this often: the line is read by a person, and each rewrite is a
 * system call. */
#define PROGRESS_INTERVAL_S 0.25
/* '\r' then this: the rest of the previous line goes. */
#define ERASE_TO_EOL "\033[K"

static bool same_terminal(int a, int b)
{
	struct stat sa, sb;

	return !fstat(a, &sa) && !fstat(b, &sb) && S_ISCHR(sa.st_mode) && S_ISCHR(sb.st_mode) &&
	       sa.st_rdev == sb.st_rdev;
}

bool progress_wanted(unsigned long long total)
{
	return total > PROGRESS_MIN_BYTES && isatty(STDERR_FILENO) &&
	       !same_terminal(STDOUT_FILENO, STDERR_FILENO);
}

void progress_init(struct progress *p, unsigned long long total, bool on)
{
	memset(p, 0, sizeof(*p));
	p->on = on;
	p->total = total;
}

void progress_pass(struct progress *p, const char *what)
{
	p->what = what;
	p->done = p->records = 0;
	p->started = now_seconds();
	p->last_shown = 0;
}

/* "2.1M" records: the rate needs no more digits than a glance takes in. */
static void format_rate(double rate, char *buf, size_t size)
{
	if (rate >= 1e6)
		snprintf(buf, size, "%.1fM", rate / 1e6);
	else if (rate >= 1e3)
		snprintf(buf, size, "%.0fk", rate / 1e3);
	else
		snprintf(buf, size, "%.0f", rate);
}

void progress_show(struct progress *p)
{
	double now = now_seconds(), mib = 1024.0 * 1024.0;
	char line[160], rate[32];
	int len;

	if (p->last_shown && now - p->last_shown < PROGRESS_INTERVAL_S)
		return;
	p->last_shown = now;
	format_rate(now > p->started ? p->records / (now - p->started) : 0, rate, sizeof(rate));
	/* One write per line: stderr is unbuffered, and a line written in
	 * pieces could be seen half rewritten. */
	len = snprintf(line, sizeof(line), "\r%s %.1f of %.1f MiB (%llu%%), %s records/s"
			   ERASE_TO_EOL, p->what, p->done / mib, p->total / mib,
			   p->total ? p->done * 100 / p->total : 100, rate);
	if (len >= (int)sizeof(line))
		len = sizeof(line) - 1; /* cut short: what names is too long */
	if (len > 0 && write(STDERR_FILENO, line, (size_t)len) > 0)
		p->shown = true;
}

void progress_end(struct progress *p)
{
	static const char erase[] = "\r" ERASE_TO_EOL;

	if (p->shown && write(STDERR_FILENO, erase, sizeof(erase) - 1) < 0)
		return; /* nothing to tell, and nowhere to tell it */
	p->shown = false;
}
