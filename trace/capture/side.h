#ifndef K3_TRACE_CAPTURE_SIDE_H
#define K3_TRACE_CAPTURE_SIDE_H

/* Records that do not come from CUPTI (the GPU sampler's readings) collected into pool buffers of
 * one item kind and queued for the writer thread when a buffer is full or on capture_side_submit
 * (at flush, at stop, and periodically by the producer). Memory is the pool's: when no buffer is
 * free within wait_ms the record is lost and counted. Thread-safe. */

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "trace/capture/pool.h"

struct capture_side {
	pthread_mutex_t lock;
	struct capture_pool *pool;     /* borrowed */
	enum capture_item_kind kind;
	int64_t wait_ms;
	uint8_t *buf;                  /* being filled, or NULL */
	size_t used;
	int64_t appended, lost;        /* records */
};

void capture_side_init(struct capture_side *s, struct capture_pool *pool,
		       enum capture_item_kind kind, int64_t wait_ms);
/* Copy `bytes` of rec into the current buffer (queuing a full one first). 0, -E2BIG (a record
 * larger than a buffer), -ENOBUFS (no free buffer: the record is lost and counted). */
int capture_side_append(struct capture_side *s, const void *rec, size_t bytes);
/* Queue the partly filled buffer, if any. */
void capture_side_submit(struct capture_side *s);
/* Give an unqueued buffer back to the pool and destroy the lock. */
void capture_side_release(struct capture_side *s);

#endif
