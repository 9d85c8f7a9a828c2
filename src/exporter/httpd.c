// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The HTTP server of --listen, with libmicrohttpd: see httpd.h. */
#include "httpd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <microhttpd.h>

#define CONNECTION_TIMEOUT_S 10

struct httpd {
	struct MHD_Daemon *daemon;
	httpd_serve_fn serve;
	void *ctx;
};

static enum MHD_Result reply(struct MHD_Connection *conn, struct httpd_page *page)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(page->len, page->body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!resp) {
		free(page->body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, page->type);
	ret = MHD_queue_response(conn, page->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* OpenMetrics when the client lists it among what it accepts. */
static bool wants_openmetrics(struct MHD_Connection *conn)
{
	const char *accept =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);

	return accept && strstr(accept, "application/openmetrics-text");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **req)
{
	struct httpd *h = cls;
	struct httpd_page page = { 0 };

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)req;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		page.body = strdup("only GET and HEAD\n");
		page.len = page.body ? strlen(page.body) : 0;
		page.type = "text/plain; charset=utf-8";
		page.status = MHD_HTTP_METHOD_NOT_ALLOWED;
	} else {
		h->serve(h->ctx, url, wants_openmetrics(conn), &page);
	}
	return page.body ? reply(conn, &page) : MHD_NO;
}

struct httpd *httpd_start(int fd, httpd_serve_fn serve, void *ctx, char *err, size_t err_size)
{
	struct httpd *h = calloc(1, sizeof(*h));

	if (!h) {
		close(fd);
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	h->serve = serve;
	h->ctx = ctx;
	h->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, on_request, h,
				     MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_TIMEOUT,
				     (unsigned int)CONNECTION_TIMEOUT_S, MHD_OPTION_END);
	if (!h->daemon) {
		close(fd);
		free(h);
		snprintf(err, err_size, "libmicrohttpd could not start its server");
		return NULL;
	}
	return h;
}

void httpd_stop(struct httpd *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->daemon);
	free(h);
}
