// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --listen: a Prometheus endpoint.  The BPF side counts as --hist (per
 * cache, call site, comm and cgroup) and --allocinfo (outstanding per call site)
 * do together; nothing is sent per event.  The HTTP server (httpd.h)
 * serves /metrics from its own thread: each scrape reads the maps under a
 * mutex and renders them (metrics.c), so the run loop only waits.
 *
 * The one mode built from two others: it configures and reads hist/'s
 * and allocinfo/'s maps through their headers (tools/check-layers allows
 * exactly that).
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "httpd.h"
#include "metrics.h"
#include "allocinfo/allocinfo.h"
#include "hist/hist.h"
#include "util/version.h"
#include "env.h"
#include "kmemsnoop.skel.h"
#include "mode.h"
#include "session.h"

#define DEFAULT_ADDRESS "127.0.0.1"
#define LISTEN_BACKLOG 16

enum { HTTP_OK = 200, HTTP_NOT_FOUND = 404, HTTP_ERROR = 500, HTTP_UNAVAILABLE = 503 };

/* The per-key tables the exporter has series for. */
#define EXPORTER_KINDS (1U << KMT_BY_CACHE | 1U << KMT_BY_CALLSITE | 1U << KMT_BY_COMM | \
			1U << KMT_BY_CGROUP)

struct exporter {
	struct mode mode;
	struct httpd *httpd;
	char where[128]; /* "ADDR:PORT" as the user can reach it */

	pthread_mutex_t lock; /* what scrapes read and write, from here on */
	bool ready;           /* the programs are attached */
	struct hist *hist;
	struct allocinfo *ai;
	struct metrics *metrics;
	unsigned long long scrapes;
	bool said_failure;
};

static struct exporter *exporter_of(struct mode *m)
{
	return (struct exporter *)m;
}

static bool exporter_selected(const struct env *env)
{
	return env->listen != NULL;
}

/* --- the listening socket --------------------------------------------------- */

/* "[ADDR:]PORT", ADDR an IPv6 address in brackets or anything else
 * without a colon; env.c has checked PORT. */
static int split_listen(const char *spec, char *host, size_t host_size, const char **port)
{
	const char *colon = strrchr(spec, ':');
	size_t len;

	if (!colon) {
		snprintf(host, host_size, "%s", DEFAULT_ADDRESS);
		*port = spec;
		return 0;
	}
	*port = colon + 1;
	len = (size_t)(colon - spec);
	if (spec[0] == '[' && len >= 2 && spec[len - 1] == ']') {
		spec++;
		len -= 2;
	} else if (memchr(spec, ':', len)) {
		return -1; /* an IPv6 address needs its brackets */
	}
	if (!len || len >= host_size)
		return -1;
	memcpy(host, spec, len);
	host[len] = '\0';
	return 0;
}

static int bind_listener(struct session *s, const char *spec, char *where, size_t where_size)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char host[256];
	const char *port;
	int fd, one = 1, ret;

	if (split_listen(spec, host, sizeof(host), &port))
		return session_fail(s, "--listen '%s': not [ADDR:]PORT (an IPv6 ADDR in brackets)",
				    spec);
	ret = getaddrinfo(host, port, &hints, &ai);
	if (ret)
		return session_fail(s, "--listen '%s': bad address '%s': %s", spec, host,
				    gai_strerror(ret));
	snprintf(where, where_size, ai->ai_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, LISTEN_BACKLOG)) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return session_fail(s, "cannot listen on %s: %s", where, strerror(err));
	}
	freeaddrinfo(ai);
	return fd;
}

/* --- scrapes ------------------------------------------------------------------ */

static int add_outstanding(void *ctx, const char *tag, long long bytes, long long calls)
{
	return metrics_outstanding_row(ctx, tag, bytes, calls);
}

/* --flight's counts: its BPF side's triggers and the session's. */
static void read_flight(const struct session *s, struct metrics *m)
{
	struct metrics_flight f = {
		.dumps = __atomic_load_n(&s->flight_counts.dumps, __ATOMIC_RELAXED),
		.dump_failures = __atomic_load_n(&s->flight_counts.dump_failures, __ATOMIC_RELAXED),
	};

	for (int k = 0; k < KMT_TRIGGER_KINDS; k++)
		f.triggers[k] = __atomic_load_n(&s->skel->bss->flight_fired[k], __ATOMIC_RELAXED) +
				__atomic_load_n(&s->flight_counts.triggers[k], __ATOMIC_RELAXED);
	metrics_set_flight(m, &f);
}

/* The maps read into the metrics; 0, or -1 with the reason in err. */
static int read_maps(struct exporter *ex, char *err, size_t err_size)
{
	struct session *s = ex->mode.session;
	unsigned long long missed = session_missed(s);
	const struct hist_interval *iv;
	struct kmt_ai_stats st;
	int ret;

	metrics_set_missed(ex->metrics, missed);
	if (s->env->flight) {
		read_flight(s, ex->metrics);
		return 0;
	}
	iv = hist_read(ex->hist, missed, err, err_size);
	if (!iv || metrics_add_interval(ex->metrics, iv))
		return -1;
	metrics_outstanding_begin(ex->metrics);
	ret = allocinfo_read(ex->ai, s->skel, add_outstanding, ex->metrics, &st);
	if (ret) {
		snprintf(err, err_size, "reading the outstanding table: %s", strerror(-ret));
		return -1;
	}
	metrics_outstanding_end(ex->metrics, &st);
	return 0;
}

static const char plain_type[] = "text/plain; charset=utf-8";

/* The metrics page, or why there is none. */
static void scrape(struct exporter *ex, bool openmetrics, struct httpd_page *page)
{
	char err[256] = "";
	FILE *out = open_memstream(&page->body, &page->len);

	page->type = plain_type;
	page->status = HTTP_OK;
	if (!out)
		return;
	pthread_mutex_lock(&ex->lock);
	if (!ex->ready) {
		fputs("kmemsnoop is starting\n", out);
		page->status = HTTP_UNAVAILABLE;
	} else if (read_maps(ex, err, sizeof(err))) {
		fprintf(out, "kmemsnoop: %s\n", err);
		if (!ex->said_failure)
			fprintf(stderr, "kmemsnoop: a scrape failed: %s\n", err);
		ex->said_failure = true;
		page->status = HTTP_ERROR;
	} else {
		metrics_render(ex->metrics, out, openmetrics);
		page->type = openmetrics ? metrics_openmetrics_type : metrics_text_type;
		ex->scrapes++;
	}
	pthread_mutex_unlock(&ex->lock);
	if (fclose(out)) {
		free(page->body);
		page->body = NULL;
	}
}

static void serve(void *ctx, const char *path, bool openmetrics, struct httpd_page *page)
{
	const char *msg = "not found: metrics at /metrics\n";

	if (!strcmp(path, "/metrics")) {
		scrape(ctx, openmetrics, page);
		return;
	}
	page->status = HTTP_NOT_FOUND;
	if (!strcmp(path, "/")) {
		msg = "kmemsnoop: metrics at /metrics\n";
		page->status = HTTP_OK;
	}
	page->body = strdup(msg);
	page->len = page->body ? strlen(page->body) : 0;
	page->type = plain_type;
}

/* --- the mode ------------------------------------------------------------------ */

static void stop_serving(struct exporter *ex)
{
	httpd_stop(ex->httpd);
	ex->httpd = NULL;
}

static void exporter_free(struct exporter *ex)
{
	stop_serving(ex);
	hist_reader_free(ex->hist);
	allocinfo_free(ex->ai);
	metrics_free(ex->metrics);
	pthread_mutex_destroy(&ex->lock);
	free(ex);
}

/* Listening before any BPF: a port in use ends the run at once. */
static struct mode *exporter_create(struct session *s)
{
	const struct env *env = s->env;
	struct metrics_config cfg = {
		.top = env->top, .version = kmemsnoop_version(), .value = env->hist_value,
		.counts = !env->flight,
	};
	struct exporter *ex = calloc(1, sizeof(*ex));
	int fd;

	if (!ex) {
		session_fail(s, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&ex->lock, NULL);
	ex->metrics = metrics_new(&cfg);
	if (!ex->metrics) {
		session_fail(s, "out of memory");
		exporter_free(ex);
		return NULL;
	}
	fd = bind_listener(s, env->listen, ex->where, sizeof(ex->where));
	if (fd < 0) {
		exporter_free(ex);
		return NULL;
	}
	/* Beside --flight, its counts only: the --hist and --allocinfo
	 * programs on top of the stream's took tp_kmalloc past the verifier
	 * budget (479,373 instructions on 6.18, test_verifier). */
	if (!env->flight)
		ex->ai = allocinfo_new(env, s->ncpus, s->kf.atomic_fetch, session_ksyms(s), s->err,
				       sizeof(s->err));
	if (!env->flight && !ex->ai) {
		close(fd);
		exporter_free(ex);
		return NULL;
	}
	ex->httpd = httpd_start(fd, serve, ex, s->err, sizeof(s->err));
	if (!ex->httpd) {
		exporter_free(ex);
		return NULL;
	}
	return &ex->mode;
}

/* What --hist and --allocinfo each want. */
static void exporter_wants(const struct mode *m, struct bpf_wants *w)
{
	const struct env *env = m->session->env;

	if (env->flight)
		return;
	w->alloc_classes |= env->events;
	w->free_classes |= env->events;
	if (env->events & (EV_KMALLOC | EV_CACHE))
		w->free_classes |= EV_KMALLOC | EV_CACHE;
	w->sized_frees = true;
}

static void exporter_configure(struct mode *m, struct kmemsnoop_bpf *skel)
{
	struct session *s = m->session;

	if (s->env->flight)
		return;
	hist_setup_maps(skel, s->env, s->ncpus, EXPORTER_KINDS);
	allocinfo_configure(s->env, skel, s->kf.atomic_fetch);
	if (s->env->events & EV_PERCPU)
		allocinfo_configure_percpu(skel, session_ksyms(s));
	allocinfo_count_areas(exporter_of(m)->ai, session_class_traced(s, EV_VMALLOC));
}

static int exporter_start(struct mode *m)
{
	struct exporter *ex = exporter_of(m);
	struct session *s = m->session;
	struct hist *h = s->env->flight ? NULL :
			 hist_reader_new(s->env, s->skel, s->ncpus, session_ksyms(s),
					 EXPORTER_KINDS, s->err, sizeof(s->err));

	if (!h && !s->env->flight)
		return -1;
	pthread_mutex_lock(&ex->lock);
	ex->hist = h;
	ex->ready = true;
	pthread_mutex_unlock(&ex->lock);
	fprintf(stderr, "kmemsnoop: serving metrics at http://%s/metrics\n", ex->where);
	return 0;
}

static int exporter_finish(struct mode *m, bool final)
{
	struct exporter *ex = exporter_of(m);

	(void)final;
	stop_serving(ex);
	fprintf(stderr, "kmemsnoop: %llu scrapes served\n", ex->scrapes);
	return 0;
}

static void exporter_destroy(struct mode *m)
{
	exporter_free(exporter_of(m));
}

const struct mode_ops exporter_mode = {
	.name = "exporter",
	.selected = exporter_selected,
	.create = exporter_create,
	.wants = exporter_wants,
	.configure = exporter_configure,
	.start = exporter_start,
	.finish = exporter_finish,
	.destroy = exporter_destroy,
};
