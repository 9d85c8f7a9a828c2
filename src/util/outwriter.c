// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stdout through a writer thread (outwriter.h).  stdout becomes a stdio
 * stream (fopencookie) whose buffer, each time it fills or is flushed, is
 * copied into one of a few chunks that the thread writes in order.  The
 * copy costs a fraction of what the kernel takes for the same bytes, and
 * keeps stdio's line writing as it is for every sink.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "outwriter.h"

/* stdio's buffer and each chunk: large writes cost the kernel far less
 * per byte than 4 KiB ones (ext4: 1.2 GB in 1.3 s against 3.0 s). */
#define CHUNK_BYTES (1 << 20)
/* Chunks in flight: the formatting waits only when this many are.  Four
 * were too few for the live text into ext4 on a 2-CPU machine busy
 * allocating: the formatting waited about once in five chunks. */
#define CHUNKS 16

struct chunk {
	char *data;
	size_t len;
};

struct outwriter {
	FILE *stream; /* the cookie stream while it is stdout */
	FILE *saved;  /* stdout before */
	int fd;
	char *stdio_buffer;
	struct chunk chunks[CHUNKS];
	/* [tail, head): filled, not yet written, in order; chunk head %
	 * CHUNKS is the next to fill once head - tail < CHUNKS. */
	unsigned long head, tail;
	bool closing;
	int err; /* the first failed write's errno; set by the thread only */
	pthread_mutex_t lock;
	pthread_cond_t changed;
	pthread_t thread;
	bool thread_started;
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t done = write(fd, p, n);

		if (done < 0 && errno == EINTR)
			continue;
		if (done < 0)
			return errno;
		if (done == 0)
			return EIO;
		p += done;
		n -= done;
	}
	return 0;
}

static void *writer_thread(void *arg)
{
	struct outwriter *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct chunk *c;
		int err = 0;

		while (w->tail == w->head && !w->closing)
			pthread_cond_wait(&w->changed, &w->lock);
		if (w->tail == w->head)
			break;
		c = &w->chunks[w->tail % CHUNKS];
		pthread_mutex_unlock(&w->lock);
		/* After a failure the rest is dropped: the writer learns of
		 * it at its next write. */
		if (!w->err)
			err = write_all(w->fd, c->data, c->len);
		pthread_mutex_lock(&w->lock);
		if (err)
			w->err = err;
		w->tail++;
		pthread_cond_broadcast(&w->changed);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* The next chunk to fill, once one is free; NULL after a failed write. */
static struct chunk *free_chunk(struct outwriter *w)
{
	struct chunk *c = NULL;

	pthread_mutex_lock(&w->lock);
	while (w->head - w->tail == CHUNKS && !w->err)
		pthread_cond_wait(&w->changed, &w->lock);
	if (!w->err)
		c = &w->chunks[w->head % CHUNKS];
	else
		errno = w->err;
	pthread_mutex_unlock(&w->lock);
	return c;
}

static void queue_chunk(struct outwriter *w)
{
	pthread_mutex_lock(&w->lock);
	w->head++;
	pthread_cond_signal(&w->changed);
	pthread_mutex_unlock(&w->lock);
}

/* stdio's buffer, full or flushed: queued for the thread at once. */
static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
	struct outwriter *w = cookie;
	size_t left = size;

	while (left) {
		struct chunk *c = free_chunk(w);

		if (!c)
			return -1;
		c->len = left < CHUNK_BYTES ? left : CHUNK_BYTES;
		memcpy(c->data, buf, c->len);
		buf += c->len;
		left -= c->len;
		queue_chunk(w);
	}
	return size;
}

/* After stdio's last write: waits until the thread wrote everything. */
static int cookie_close(void *cookie)
{
	struct outwriter *w = cookie;

	pthread_mutex_lock(&w->lock);
	w->closing = true;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	w->thread_started = false;
	if (!w->err)
		return 0;
	errno = w->err;
	return -1;
}

static void outwriter_free(struct outwriter *w)
{
	for (int i = 0; i < CHUNKS; i++)
		free(w->chunks[i].data);
	free(w->stdio_buffer);
	pthread_cond_destroy(&w->changed);
	pthread_mutex_destroy(&w->lock);
	free(w);
}

/* The thread takes no signals: they go to the thread that waits on the
 * rings, whose wait they end. */
static int start_thread(struct outwriter *w)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&w->thread, NULL, writer_thread, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	w->thread_started = !err;
	return err;
}

static int alloc_buffers(struct outwriter *w)
{
	w->stdio_buffer = malloc(CHUNK_BYTES);
	if (!w->stdio_buffer)
		return ENOMEM;
	for (int i = 0; i < CHUNKS; i++) {
		w->chunks[i].data = malloc(CHUNK_BYTES);
		if (!w->chunks[i].data)
			return ENOMEM;
	}
	return 0;
}

struct outwriter *outwriter_start(void)
{
	cookie_io_functions_t io = { .write = cookie_write, .close = cookie_close };
	struct outwriter *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	w->fd = fileno(stdout);
	err = alloc_buffers(w);
	if (!err)
		err = start_thread(w);
	if (!err) {
		w->stream = fopencookie(w, "w", io);
		err = w->stream ? 0 : errno;
	}
	if (!err && setvbuf(w->stream, w->stdio_buffer, _IOFBF, CHUNK_BYTES))
		err = EINVAL;
	if (err) {
		if (w->stream)
			fclose(w->stream); /* ends the thread */
		else if (w->thread_started)
			cookie_close(w);
		outwriter_free(w);
		errno = err;
		return NULL;
	}
	w->saved = stdout;
	stdout = w->stream;
	return w;
}

int outwriter_finish(struct outwriter *w)
{
	int ret = 0;

	if (!w)
		return 0;
	stdout = w->saved;
	/* Flushes stdio's buffer into the last chunk, then cookie_close. */
	if (fclose(w->stream))
		ret = -(w->err ? w->err : errno ? errno : EIO);
	outwriter_free(w);
	return ret;
}
