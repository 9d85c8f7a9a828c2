// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A build without libmicrohttpd: see httpd.h. */
#include <stdio.h>
#include <unistd.h>

#include "httpd.h"

struct httpd *httpd_start(int fd, httpd_serve_fn serve, void *ctx, char *err, size_t err_size)
{
	(void)serve;
	(void)ctx;
	close(fd);
	snprintf(err, err_size, "this kmemsnoop was built without libmicrohttpd (a static build): "
				"--listen needs the dynamically linked one");
	return NULL;
}

void httpd_stop(struct httpd *h)
{
	(void)h;
}
