// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The HTTP server of --listen, with libevent's evhttp: see httpd.h.
 *
 * One event base, used by one thread at a time: httpd_start sets it up,
 * then only the server's thread runs it, until httpd_stop writes to a
 * pipe whose event ends the loop and joins the thread before freeing
 * anything.  So libevent needs no locks (no evthread).
 */
#include "httpd.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/util.h>

/* An idle or stalled connection is closed after this long. */
#define CONNECTION_TIMEOUT_S 10
/* A scrape is a GET of a few hundred bytes: what a request may bring is
 * bounded (evhttp's own answer beyond this). */
#define MAX_HEADERS_SIZE (32 * 1024)
#define MAX_BODY_SIZE (32 * 1024)

enum { HTTP_METHOD_NOT_ALLOWED = 405 };

/* Every method evhttp knows reaches on_request, which answers all but
 * GET and HEAD with 405. */
#define ALL_METHODS (EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | \
		     EVHTTP_REQ_DELETE | EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | \
		     EVHTTP_REQ_CONNECT | EVHTTP_REQ_PATCH)

struct httpd {
	struct event_base *base;
	struct evhttp *http;
	struct event *wake; /* on stop_pipe[0]: ends the loop */
	int stop_pipe[2];
	pthread_t thread;
	bool running;
	httpd_serve_fn serve;
	void *ctx;
};

/* libevent's warnings (a failed accept, a peer gone) would go to stderr,
 * where kmemsnoop's own lines are: the server stays quiet, as it always did. */
static void quiet_log(int severity, const char *msg)
{
	(void)severity;
	(void)msg;
}

static void free_body(const void *data, size_t len, void *arg)
{
	(void)len;
	(void)arg;
	free((void *)data);
}

/* Sends page (its body handed to the output buffer, or freed); -1 when it
 * cannot: the caller drops the connection. */
static int reply(struct evhttp_request *req, bool head, struct httpd_page *page)
{
	struct evkeyvalq *headers = evhttp_request_get_output_headers(req);
	struct evbuffer *out = evhttp_request_get_output_buffer(req);
	char length[32];

	/* HEAD: the length of the body a GET gets, and no body (evhttp
	 * 2.1 would send one if given one). */
	snprintf(length, sizeof(length), "%zu", page->len);
	if (evhttp_add_header(headers, "Content-Type", page->type) ||
	    evhttp_add_header(headers, "Content-Length", length)) {
		free(page->body);
		return -1;
	}
	if (head || !page->len) {
		free(page->body);
	} else if (evbuffer_add_reference(out, page->body, page->len, free_body, NULL)) {
		free(page->body);
		return -1;
	}
	page->body = NULL;
	evhttp_send_reply(req, (int)page->status, NULL, NULL);
	return 0;
}

/* OpenMetrics when the client lists it among what it accepts. */
static bool wants_openmetrics(struct evhttp_request *req)
{
	const char *accept = evhttp_find_header(evhttp_request_get_input_headers(req), "Accept");

	return accept && strstr(accept, "application/openmetrics-text");
}

/* The request's path, without the query, %-decoded (malloc'd; NULL when
 * out of memory). */
static char *request_path(struct evhttp_request *req)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = uri ? evhttp_uri_get_path(uri) : NULL;

	return evhttp_uridecode(path ? path : "", 0, NULL);
}

static void on_request(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	struct httpd_page page = { 0 };
	enum evhttp_cmd_type method = evhttp_request_get_command(req);
	char *path;

	if (method != EVHTTP_REQ_GET && method != EVHTTP_REQ_HEAD) {
		page.body = strdup("only GET and HEAD\n");
		page.len = page.body ? strlen(page.body) : 0;
		page.type = "text/plain; charset=utf-8";
		page.status = HTTP_METHOD_NOT_ALLOWED;
	} else if ((path = request_path(req))) {
		h->serve(h->ctx, path, wants_openmetrics(req), &page);
		free(path);
	}
	/* No page: the connection is dropped (evhttp allows it here). */
	if (!page.body || reply(req, method == EVHTTP_REQ_HEAD, &page))
		evhttp_connection_free(evhttp_request_get_connection(req));
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;

	(void)fd;
	(void)what;
	event_base_loopbreak(h->base);
}

static void *serve_loop(void *arg)
{
	struct httpd *h = arg;

	/* Its allocations show under this comm (15 characters at most). */
	pthread_setname_np(pthread_self(), "kmemsnoop-httpd");
	event_base_dispatch(h->base);
	return NULL;
}

/* What httpd_start made; the listening socket goes with h->http. */
static void httpd_free(struct httpd *h)
{
	if (h->http)
		evhttp_free(h->http);
	if (h->wake)
		event_free(h->wake);
	if (h->base)
		event_base_free(h->base);
	for (int i = 0; i < 2; i++)
		if (h->stop_pipe[i] >= 0)
			close(h->stop_pipe[i]);
	free(h);
}

/* Everything but the thread; -1 with a reason in err (fd closed). */
static int httpd_setup(struct httpd *h, int fd, char *err, size_t err_size)
{
	if (pipe2(h->stop_pipe, O_CLOEXEC | O_NONBLOCK)) {
		snprintf(err, err_size, "the HTTP server: pipe: %s", strerror(errno));
		close(fd);
		return -1;
	}
	h->base = event_base_new();
	h->http = h->base ? evhttp_new(h->base) : NULL;
	h->wake = h->base ? event_new(h->base, h->stop_pipe[0], EV_READ, on_wake, h) : NULL;
	if (!h->http || !h->wake || event_add(h->wake, NULL)) {
		snprintf(err, err_size, "libevent could not set up the HTTP server");
		close(fd);
		return -1;
	}
	evhttp_set_timeout(h->http, CONNECTION_TIMEOUT_S);
	evhttp_set_max_headers_size(h->http, MAX_HEADERS_SIZE);
	evhttp_set_max_body_size(h->http, MAX_BODY_SIZE);
	evhttp_set_allowed_methods(h->http, ALL_METHODS);
	evhttp_set_gencb(h->http, on_request, h);
	if (evutil_make_socket_nonblocking(fd) || !evhttp_accept_socket_with_handle(h->http, fd)) {
		snprintf(err, err_size, "libevent could not serve on the listening socket");
		close(fd);
		return -1;
	}
	return 0;
}

struct httpd *httpd_start(int fd, httpd_serve_fn serve, void *ctx, char *err, size_t err_size)
{
	struct httpd *h = calloc(1, sizeof(*h));
	sigset_t all, old;
	int ret;

	if (!h) {
		close(fd);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	h->serve = serve;
	h->ctx = ctx;
	h->stop_pipe[0] = h->stop_pipe[1] = -1;
	event_set_log_callback(quiet_log);
	if (httpd_setup(h, fd, err, err_size)) {
		httpd_free(h);
		return NULL;
	}
	/* Signals are the main thread's (its loop looks for SIGINT and
	 * SIGTERM): the server's thread blocks them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&h->thread, NULL, serve_loop, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		snprintf(err, err_size, "cannot start the HTTP server's thread: %s", strerror(ret));
		httpd_free(h);
		return NULL;
	}
	h->running = true;
	return h;
}

void httpd_stop(struct httpd *h)
{
	char c = 0;

	if (!h)
		return;
	if (h->running) {
		/* A request being served is answered first: the loop sees the
		 * pipe between callbacks. */
		while (write(h->stop_pipe[1], &c, 1) < 0 && errno == EINTR)
			;
		pthread_join(h->thread, NULL);
	}
	httpd_free(h);
}
