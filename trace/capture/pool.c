#include "trace/capture/pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int capture_pool_init(struct capture_pool *p, size_t count, size_t bytes)
{
	if (count == 0 || bytes == 0 || count > (size_t)1 << 20 || bytes > SIZE_MAX / count)
		return -EINVAL;
	struct capture_pool tmp;
	memset(&tmp, 0, sizeof tmp);
	int rc = -ENOMEM;
	/* Anonymous pages: zero (CUPTI is told buffers come zeroed) and page-aligned (it wants
	 * 8 bytes), and only touched pages take memory. */
	void *a = mmap(NULL, count * bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (a == MAP_FAILED)
		goto out;
	tmp.arena = a;
	tmp.free_list = calloc(count, sizeof *tmp.free_list);
	tmp.ring = calloc(count, sizeof *tmp.ring);
	if (!tmp.free_list || !tmp.ring)
		goto out;
	for (size_t i = 0; i < count; i++)
		tmp.free_list[i] = tmp.arena + i * bytes;
	tmp.n_free = tmp.min_free = count;
	tmp.count = count;
	tmp.bytes = bytes;
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&tmp.lock, NULL);
	pthread_cond_init(&tmp.free_cv, &ca);
	pthread_cond_init(&tmp.work_cv, &ca);
	pthread_cond_init(&tmp.commit_cv, &ca);
	pthread_condattr_destroy(&ca);
	*p = tmp;
	return 0;
out:
	free(tmp.ring);
	free(tmp.free_list);
	if (tmp.arena)
		munmap(tmp.arena, count * bytes);
	return rc;
}

void capture_pool_release(struct capture_pool *p)
{
	if (!p || !p->arena)
		return;
	pthread_cond_destroy(&p->commit_cv);
	pthread_cond_destroy(&p->work_cv);
	pthread_cond_destroy(&p->free_cv);
	pthread_mutex_destroy(&p->lock);
	free(p->ring);
	free(p->free_list);
	/* A buffer still out (held by CUPTI, which may write it later) keeps the arena alive:
	 * leaked once rather than freed under someone's feet. */
	if (p->n_free + p->n_queued == p->count)
		munmap(p->arena, p->count * p->bytes);
	memset(p, 0, sizeof *p);
}

static struct timespec deadline_after(int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

uint8_t *capture_pool_get(struct capture_pool *p, int64_t timeout_ms)
{
	uint8_t *buf = NULL;
	pthread_mutex_lock(&p->lock);
	if (p->n_free == 0 && !p->closed && timeout_ms > 0) {
		struct timespec dl = deadline_after(timeout_ms);
		p->waits++;
		while (p->n_free == 0 && !p->closed)
			if (pthread_cond_timedwait(&p->free_cv, &p->lock, &dl) == ETIMEDOUT)
				break;
	}
	if (p->n_free > 0 && !p->closed) {
		buf = p->free_list[--p->n_free];
		if (p->n_free < p->min_free)
			p->min_free = p->n_free;
	} else {
		p->timeouts++;
	}
	pthread_mutex_unlock(&p->lock);
	return buf;
}

static void put_locked(struct capture_pool *p, uint8_t *buf)
{
	/* A buffer not from this pool is a programmer error; the slot count bounds the list. */
	if (buf < p->arena || buf >= p->arena + p->count * p->bytes || p->n_free >= p->count)
		return;
	p->free_list[p->n_free++] = buf;
	pthread_cond_signal(&p->free_cv);
}

void capture_pool_put(struct capture_pool *p, uint8_t *buf)
{
	pthread_mutex_lock(&p->lock);
	put_locked(p, buf);
	pthread_mutex_unlock(&p->lock);
}

void capture_pool_submit(struct capture_pool *p, const struct capture_item *item)
{
	pthread_mutex_lock(&p->lock);
	if (p->closed || p->n_queued >= p->count) {
		put_locked(p, item->buf);
	} else {
		p->ring[(p->head + p->n_queued) % p->count] = *item;
		p->n_queued++;
		p->submitted++;
		pthread_cond_signal(&p->work_cv);
	}
	pthread_mutex_unlock(&p->lock);
}

int capture_pool_next(struct capture_pool *p, struct capture_item *item, uint64_t *upto)
{
	int rc;
	pthread_mutex_lock(&p->lock);
	for (;;) {
		/* A commit is due once everything asked for is processed: before taking more. */
		if (p->flush_target > p->committed && p->processed >= p->flush_target) {
			*upto = p->processed;
			rc = 2;
			break;
		}
		if (p->n_queued > 0) {
			*item = p->ring[p->head];
			p->head = (p->head + 1) % p->count;
			p->n_queued--;
			rc = 1;
			break;
		}
		if (p->closed) {
			rc = 0;
			break;
		}
		pthread_cond_wait(&p->work_cv, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void capture_pool_done(struct capture_pool *p, uint8_t *buf)
{
	pthread_mutex_lock(&p->lock);
	p->processed++;
	put_locked(p, buf);
	pthread_mutex_unlock(&p->lock);
}

void capture_pool_committed(struct capture_pool *p, uint64_t upto)
{
	pthread_mutex_lock(&p->lock);
	if (upto > p->committed)
		p->committed = upto;
	pthread_cond_broadcast(&p->commit_cv);
	pthread_mutex_unlock(&p->lock);
}

int capture_pool_flush(struct capture_pool *p, int64_t timeout_ms)
{
	int rc = 0;
	pthread_mutex_lock(&p->lock);
	uint64_t target = p->submitted;
	if (target > p->flush_target)
		p->flush_target = target;
	pthread_cond_signal(&p->work_cv);
	struct timespec dl = deadline_after(timeout_ms);
	while (p->committed < target)
		if (pthread_cond_timedwait(&p->commit_cv, &p->lock, &dl) == ETIMEDOUT) {
			rc = -ETIMEDOUT;
			break;
		}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void capture_pool_close(struct capture_pool *p)
{
	pthread_mutex_lock(&p->lock);
	p->closed = true;
	pthread_cond_broadcast(&p->work_cv);
	pthread_cond_broadcast(&p->free_cv);
	pthread_cond_broadcast(&p->commit_cv);
	pthread_mutex_unlock(&p->lock);
}
