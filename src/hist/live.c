// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The live view.  Every frame is drawn whole into curses' virtual screen
 * and refresh() sends only what changed, so nothing flickers; a resize
 * (KEY_RESIZE, from curses' own SIGWINCH handling) redraws at the new
 * size.  Layout, top to bottom:
 *
 *   title bar
 *   totals per second (two lines)
 *   histogram of the last interval | heat map of the last intervals
 *   the busiest keys of two kinds, side by side
 */
#include <curses.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "histfmt.h"
#include "live.h"
#include "kernel/sources.h"

#define HISTORY 512 /* intervals kept for the heat map */
#define MIN_COLS 60
#define MIN_LINES 12
#define SHADES " .:-=+*#%@"
#define SHADE_LEVELS ((int)sizeof(SHADES) - 2)
#define LABEL_W 9  /* "512M-1G" */
#define RATE_W 9

struct past {
	__u64 slots[KMT_HIST_SLOTS];
	double seconds;
};

struct live {
	struct live_config cfg;
	SCREEN *screen;
	bool keys; /* stdin is a terminal we can read keys from */
	const struct hist_interval *iv;
	struct past past[HISTORY]; /* a ring; the newest at head - 1 */
	int head, len;
};

/* Writes at (y, x), clipped to w columns and to the screen. */
__attribute__((format(printf, 4, 5))) static void put(int y, int x, int w, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (y < 0 || y >= LINES || x >= COLS || w <= 0)
		return;
	if (w > COLS - x)
		w = COLS - x;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mvaddnstr(y, x, buf, w);
}

static double per_second(__u64 count, double seconds)
{
	return seconds > 0 ? count / seconds : (double)count;
}

static const char *rate(char *buf, size_t size, __u64 count, double seconds)
{
	hist_human(buf, size, per_second(count, seconds));
	return buf;
}

/* "2K-4K": the bucket [2K, 4K). */
static void bucket_label(char *buf, size_t size, int slot)
{
	char lo[8], hi[8];

	hist_pow2(lo, sizeof(lo), slot == 0 ? -1 : slot);
	if (slot >= KMT_HIST_SLOTS - 1)
		snprintf(hi, sizeof(hi), "max");
	else
		hist_pow2(hi, sizeof(hi), slot + 1);
	snprintf(buf, size, "%s-%s", lo, hi);
}

static void draw_title(const struct live *lv)
{
	char when[16] = "--:--:--";
	struct tm tm;

	if (lv->iv && localtime_r(&lv->iv->end.tv_sec, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	attron(A_REVERSE);
	mvhline(0, 0, ' ', COLS);
	put(0, 0, COLS, " kmemsnoop --hist   sizes: bytes %s   interval %.1fs   %s",
	    lv->cfg.value == KMT_HIST_REQ ? "requested" : "allocated", lv->cfg.interval, when);
	put(0, COLS - 10, 10, " q: quit ");
	attroff(A_REVERSE);
}

/* Line 2: the allocations per second of each class, named as -e names
 * them, then what was not counted; within 100 columns. */
static void draw_class_rates(const struct hist_interval *iv)
{
	char line[256], r[16];
	__u64 untracked = 0;
	size_t n = 0;

	for (int t = 0; t < event_class_count && t < KMT_HIST_TYPES; t++) {
		rate(r, sizeof(r), iv->allocs[t], iv->seconds);
		n += snprintf(line + n, sizeof(line) - n, " %s/s %-5s", event_classes[t].name, r);
		if (n >= sizeof(line))
			return;
	}
	for (int i = 0; i < KMT_BY_COUNT; i++)
		untracked += iv->untracked[i];
	put(2, 0, COLS, "%s missed %llu untracked %llu", line,
	    (unsigned long long)iv->missed, (unsigned long long)untracked);
}

static void draw_totals(const struct hist_interval *iv)
{
	char a[16], f[16], ba[16], br[16], fl[16];
	double s = iv->seconds;

	put(1, 0, COLS, " allocs/s %-6s frees/s %-6s alloc bytes/s %-6s req bytes/s %-6s failed/s %s",
	    rate(a, sizeof(a), hist_total(iv->allocs), s),
	    rate(f, sizeof(f), hist_total(iv->frees), s),
	    rate(ba, sizeof(ba), hist_total(iv->bytes_alloc), s),
	    rate(br, sizeof(br), hist_total(iv->bytes_req), s),
	    rate(fl, sizeof(fl), hist_total(iv->failed), s));
	draw_class_rates(iv);
}

static const struct past *past_at(const struct live *lv, int age)
{
	return &lv->past[(lv->head - 1 - age + 2 * HISTORY) % HISTORY];
}

/* Buckets with a count in the newest 'cols' intervals: [*lo, *hi]. */
static bool bucket_range(const struct live *lv, int cols, int *lo, int *hi)
{
	*lo = KMT_HIST_SLOTS;
	*hi = -1;
	for (int age = 0; age < lv->len && age < cols; age++) {
		const struct past *p = past_at(lv, age);

		for (int s = 0; s < KMT_HIST_SLOTS; s++) {
			if (!p->slots[s])
				continue;
			*lo = s < *lo ? s : *lo;
			*hi = s > *hi ? s : *hi;
		}
	}
	return *hi >= 0;
}

/* Too many buckets for the screen: drop the quieter end until they fit. */
static void fit_range(const __u64 *slots, int rows, int *lo, int *hi)
{
	while (*hi - *lo + 1 > rows && rows > 0) {
		if (slots[*lo] <= slots[*hi])
			(*lo)++;
		else
			(*hi)--;
	}
}

static void draw_histogram(const struct live *lv, int y, int lo, int hi, int width)
{
	const struct hist_interval *iv = lv->iv;
	int bar_w = width - LABEL_W - RATE_W - 4;
	__u64 max = 0;
	char label[24], r[16], bar[128];

	if (bar_w > (int)sizeof(bar) - 1)
		bar_w = sizeof(bar) - 1;
	for (int s = lo; s <= hi; s++)
		max = iv->slots[s] > max ? iv->slots[s] : max;
	attron(A_BOLD);
	put(y, 0, width, "%*s %*s  %s", LABEL_W, "size", RATE_W, "allocs/s", "last interval");
	attroff(A_BOLD);
	for (int s = lo; s <= hi; s++) {
		bucket_label(label, sizeof(label), s);
		hist_bar(bar, bar_w, iv->slots[s], max);
		put(y + 1 + s - lo, 0, width, "%*s %*s |%s|", LABEL_W, label, RATE_W,
		    rate(r, sizeof(r), iv->slots[s], iv->seconds), bar);
	}
}

static void draw_heatmap(const struct live *lv, int y, int x, int lo, int hi, int width)
{
	int cols = lv->len < width ? lv->len : width;
	double max = 0;

	for (int age = 0; age < cols; age++) {
		const struct past *p = past_at(lv, age);

		for (int s = lo; s <= hi; s++) {
			double v = per_second(p->slots[s], p->seconds);

			max = v > max ? v : max;
		}
	}
	attron(A_BOLD);
	put(y, x, width, "last %d intervals, newest right (shades %s)", cols, &SHADES[1]);
	attroff(A_BOLD);
	for (int s = lo; s <= hi; s++) {
		for (int c = 0; c < cols; c++) {
			const struct past *p = past_at(lv, cols - 1 - c);
			/* Rates in 1/1000 units keep the log scale for rates below 1/s. */
			int shade = hist_shade((__u64)(per_second(p->slots[s], p->seconds) * 1000),
					       (__u64)(max * 1000), SHADE_LEVELS);

			mvaddch(y + 1 + s - lo, x + width - cols + c,
				(chtype)SHADES[shade] | (shade >= SHADE_LEVELS - 1 ? A_BOLD : 0));
		}
	}
}

static void draw_table(const struct live *lv, enum kmt_hist_by kind, int y, int x, int width,
		       int rows)
{
	const struct hist_rows *t = &lv->iv->by[kind];
	int name_w = width - 2 * RATE_W - 3;
	char head[32], a[16], b[16];

	snprintf(head, sizeof(head), "%s", hist_kind_name(kind, 0));
	for (char *p = head; *p; p++)
		*p = (*p >= 'a' && *p <= 'z') ? *p - 32 : *p;
	attron(A_BOLD);
	put(y, x, width, "%-*s %*s %*s", name_w, head, RATE_W, "ALLOCS/s", RATE_W, "BYTES/s");
	attroff(A_BOLD);
	if (!t->n)
		put(y + 1, x, width, "(none in this interval)");
	for (int i = 0; i < rows && (size_t)i < t->n; i++) {
		const struct hist_row *r = &t->row[i];

		put(y + 1 + i, x, width, "%-*.*s %*s %*s", name_w, name_w, r->label, RATE_W,
		    rate(a, sizeof(a), r->count, lv->iv->seconds), RATE_W,
		    rate(b, sizeof(b), r->bytes, lv->iv->seconds));
	}
	if (t->n > (size_t)rows && rows > 0)
		put(y + rows, x, width, "%-*s", width, "  ...");
}

/* Histogram and heat map side by side; returns the rows used. */
static int draw_sizes(const struct live *lv, int y, int max_rows)
{
	int hist_w = COLS * 45 / 100, heat_w, lo, hi;

	if (hist_w > 70)
		hist_w = 70;
	heat_w = COLS - hist_w - 3;
	if (!bucket_range(lv, heat_w, &lo, &hi)) {
		put(y, 0, COLS, " no allocations yet");
		return 1;
	}
	fit_range(lv->iv->slots, max_rows - 1, &lo, &hi);
	draw_histogram(lv, y, lo, hi, hist_w);
	draw_heatmap(lv, y, hist_w + 2, lo, hi, heat_w);
	return hi - lo + 2;
}

static void draw(const struct live *lv)
{
	int y, table_rows;

	erase();
	if (COLS < MIN_COLS || LINES < MIN_LINES) {
		put(0, 0, COLS, "kmemsnoop: the terminal is too small (%dx%d; %dx%d needed)", COLS,
		    LINES, MIN_COLS, MIN_LINES);
		refresh();
		return;
	}
	draw_title(lv);
	if (!lv->iv) {
		put(2, 0, COLS, " counting... the first interval shows in %.1f s", lv->cfg.interval);
		refresh();
		return;
	}
	draw_totals(lv->iv);
	/* Keep at least a header and three rows for the tables. */
	y = 4 + draw_sizes(lv, 4, LINES - 4 - 6) + 1;
	table_rows = LINES - y - 1;
	if (lv->cfg.top && table_rows > lv->cfg.top)
		table_rows = lv->cfg.top;
	draw_table(lv, lv->cfg.left, y, 0, COLS / 2 - 1, table_rows);
	draw_table(lv, lv->cfg.right, y, COLS / 2 + 1, COLS - COLS / 2 - 1, table_rows);
	refresh();
}

struct live *live_open(const struct live_config *cfg, char *err, size_t err_size)
{
	struct live *lv = calloc(1, sizeof(*lv));
	const char *term = getenv("TERM");

	if (!lv) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	lv->cfg = *cfg;
	/* newterm, not initscr: initscr exits the program when it fails. */
	lv->screen = newterm(NULL, stdout, stdin);
	if (!lv->screen) {
		snprintf(err, err_size, "cannot start the live view on terminal type '%s' (TERM)",
			 term ? term : "");
		free(lv);
		return NULL;
	}
	set_term(lv->screen);
	lv->keys = isatty(STDIN_FILENO);
	cbreak(); /* Ctrl-C stays a signal: the tracer's handler ends the run */
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	draw(lv);
	return lv;
}

bool live_wait(struct live *lv, int ms)
{
	int ch;

	if (!lv->keys) {
		poll(NULL, 0, ms);
		return false;
	}
	timeout(ms);
	ch = getch();
	if (ch == 'q' || ch == 'Q')
		return true;
	if (ch == KEY_RESIZE)
		draw(lv);
	return false;
}

void live_show(struct live *lv, const struct hist_interval *iv)
{
	struct past *p = &lv->past[lv->head];

	memcpy(p->slots, iv->slots, sizeof(p->slots));
	p->seconds = iv->seconds;
	lv->head = (lv->head + 1) % HISTORY;
	if (lv->len < HISTORY)
		lv->len++;
	lv->iv = iv;
	draw(lv);
}

void live_close(struct live *lv)
{
	if (!lv)
		return;
	endwin();
	delscreen(lv->screen);
	free(lv);
}
