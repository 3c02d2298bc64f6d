#include "trace/capture/side.h"

#include <errno.h>
#include <string.h>

void capture_side_init(struct capture_side *s, struct capture_pool *pool,
		       enum capture_item_kind kind, int64_t wait_ms)
{
	memset(s, 0, sizeof *s);
	pthread_mutex_init(&s->lock, NULL);
	s->pool = pool;
	s->kind = kind;
	s->wait_ms = wait_ms;
}

static void submit_locked(struct capture_side *s)
{
	if (!s->buf)
		return;
	if (s->used) {
		struct capture_item it = {.kind = s->kind, .buf = s->buf, .valid_bytes = s->used};
		capture_pool_submit(s->pool, &it);
	} else {
		capture_pool_put(s->pool, s->buf);
	}
	s->buf = NULL;
	s->used = 0;
}

int capture_side_append(struct capture_side *s, const void *rec, size_t bytes)
{
	if (bytes > s->pool->bytes)
		return -E2BIG;
	int rc = 0;
	pthread_mutex_lock(&s->lock);
	if (s->buf && s->used + bytes > s->pool->bytes)
		submit_locked(s);
	if (!s->buf)
		s->buf = capture_pool_get(s->pool, s->wait_ms);
	if (s->buf) {
		memcpy(s->buf + s->used, rec, bytes);
		s->used += bytes;
		s->appended++;
	} else {
		s->lost++;
		rc = -ENOBUFS;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void capture_side_submit(struct capture_side *s)
{
	pthread_mutex_lock(&s->lock);
	submit_locked(s);
	pthread_mutex_unlock(&s->lock);
}

void capture_side_release(struct capture_side *s)
{
	pthread_mutex_lock(&s->lock);
	if (s->buf) {
		/* handed back unqueued: the consumer zeroes queued buffers, so zero this one */
		memset(s->buf, 0, s->used);
		capture_pool_put(s->pool, s->buf);
		s->buf = NULL;
		s->used = 0;
	}
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_destroy(&s->lock);
}
