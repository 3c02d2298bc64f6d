#ifndef K3_TRACE_CAPTURE_POOL_H
#define K3_TRACE_CAPTURE_POOL_H

/* The hand-off between CUPTI's callbacks (producers, any thread) and the capture writer thread
 * (the one consumer): a preallocated pool of equal buffers and a bounded FIFO of filled ones.
 * Memory is fixed at init: `count` buffers of `bytes` each, nothing grows afterwards. Buffers
 * start zeroed; whoever consumes one zeroes what was written before giving it back, so that
 * CUPTI need not zero them on the application's threads. Producers
 * only take a lock and copy a few words; all decoding and SQLite work happens in the consumer.
 *
 * Flush protocol: capture_pool_flush() asks the consumer to make everything submitted so far
 * durable and waits until it says so (capture_pool_committed()). */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum capture_item_kind {
	CAPTURE_ITEM_ACTIVITY = 1,     /* a CUPTI activity buffer */
	CAPTURE_ITEM_MARKS,            /* struct capture_mark records (trace_capture_mark) */
	CAPTURE_ITEM_METRICS,          /* struct capture_metric records (range profiler) */
	CAPTURE_ITEM_GPU_SAMPLES,      /* struct gpumon_sample records (NVML sampler) */
};

struct capture_item {
	enum capture_item_kind kind;
	uint8_t *buf;                  /* one of the pool's buffers */
	size_t valid_bytes;            /* bytes of buf that hold records */
	uint32_t context_id, stream_id;
	int64_t dropped_records;       /* CUPTI's count for that context and stream, or 0 */
};

struct capture_pool {
	pthread_mutex_t lock;
	pthread_cond_t free_cv;        /* a buffer came back */
	pthread_cond_t work_cv;        /* an item, a flush request or close */
	pthread_cond_t commit_cv;      /* the consumer committed */
	uint8_t *arena;                /* count * bytes, one allocation */
	size_t bytes;                  /* of each buffer */
	size_t count;
	uint8_t **free_list;           /* count slots */
	size_t n_free;
	struct capture_item *ring;     /* count slots: a buffer is queued at most once */
	size_t head, n_queued;
	uint64_t submitted;            /* items ever queued */
	uint64_t processed;            /* items the consumer finished */
	uint64_t flush_target;         /* commit once processed reaches this */
	uint64_t committed;            /* items known durable */
	bool closed;
	/* statistics */
	uint64_t waits;                /* capture_pool_get calls that had to wait */
	uint64_t timeouts;             /* ... and got nothing */
	size_t min_free;               /* low-water mark of n_free */
};

/* Allocate count buffers of `bytes` each. -EINVAL for zero sizes, -ENOMEM. */
int capture_pool_init(struct capture_pool *p, size_t count, size_t bytes);
/* Free everything. The consumer must have stopped. If buffers are still out (CUPTI may write
 * into them later), the buffer memory is left allocated on purpose. */
void capture_pool_release(struct capture_pool *p);

/* A free buffer (pool->bytes long), waiting up to timeout_ms for one (0: don't wait). NULL when
 * none came or the pool is closed. */
uint8_t *capture_pool_get(struct capture_pool *p, int64_t timeout_ms);
/* Queue a filled buffer for the consumer. Never blocks: there is always a slot. After close the
 * buffer just goes back to the free list (nothing is queued). */
void capture_pool_submit(struct capture_pool *p, const struct capture_item *item);
/* Give a buffer back without queuing it (e.g. an empty CUPTI buffer). */
void capture_pool_put(struct capture_pool *p, uint8_t *buf);

/* Consumer side. Waits for work and returns:
 *   1  an item in *item: process it, then capture_pool_done(p, item->buf);
 *   2  a commit is wanted (everything up to *upto is processed): commit, then
 *      capture_pool_committed(p, upto);
 *   0  closed and drained: stop. */
int capture_pool_next(struct capture_pool *p, struct capture_item *item, uint64_t *upto);
/* The consumer is finished with buf (and has zeroed what it held). */
void capture_pool_done(struct capture_pool *p, uint8_t *buf);
/* upto: items now durable; UINT64_MAX after the final commit (wakes every waiter). */
void capture_pool_committed(struct capture_pool *p, uint64_t upto);

/* Ask for everything submitted so far to be committed and wait up to timeout_ms. 0 when it was,
 * -ETIMEDOUT otherwise. Safe from any thread but the consumer's. */
int capture_pool_flush(struct capture_pool *p, int64_t timeout_ms);
/* No more items will be submitted; the consumer drains what is queued and gets 0. */
void capture_pool_close(struct capture_pool *p);

#endif
