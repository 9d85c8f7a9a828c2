/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The HTTP server of --listen: libevent's evhttp serving GET and HEAD from
 * a thread of its own (httpd.c), in every build, the static ones included
 * (libevent_core.a and libevent_extra.a need no TLS).
 */
#ifndef KMEMSNOOP_HTTPD_H
#define KMEMSNOOP_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

/* A page: malloc'd body the server frees, its content type, its status. */
struct httpd_page {
	char *body;
	size_t len;
	const char *type;
	unsigned int status;
};

/* Called from the server's thread for each GET or HEAD: fills page (body
 * NULL: the connection is dropped). */
typedef void (*httpd_serve_fn)(void *ctx, const char *path, bool openmetrics,
			       struct httpd_page *page);

struct httpd;

/* Serves on the listening socket fd (taken over, closed at the end);
 * NULL with a reason in err. */
struct httpd *httpd_start(int fd, httpd_serve_fn serve, void *ctx, char *err, size_t err_size);
/* Waits for requests under way; NULL is allowed. */
void httpd_stop(struct httpd *h);

#endif /* KMEMSNOOP_HTTPD_H */
