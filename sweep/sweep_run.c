/* Running a sweep: the shard's points in blocks; in a block, points that share a prefill (they
 * differ only in batch and output length) form one work item, taken by threads from a counter. */
#include "sweep/sweep.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t sweep_shard_points(int64_t points, int64_t shard_index, int64_t shard_count)
{
	if (shard_count < 1 || shard_index < 0 || shard_index >= points)
		return 0;
	return (points - shard_index + shard_count - 1) / shard_count;
}

struct item {
	int64_t group; /* the point index with its batch and output digits zeroed */
	int64_t pos;   /* position in the block (row index) */
};

struct block {
	const struct sweep_spec *sp;
	int64_t first_j; /* the block's first point, counted within the shard */
	int64_t shard_index, shard_count;
	struct item *items; /* sorted by (group, pos) */
	int64_t *runs;      /* item offsets where a group starts; runs[n_runs] = n items */
	int64_t n_runs;
	struct sweep_row *rows; /* in point order */
	atomic_llong next_run;
	atomic_llong *done;
	atomic_llong *prefills;
};

struct worker {
	struct block *b;
	struct sweep_scratch *sc;
	const struct sweep_opts *o;
	int64_t total;
	double *last_progress_s; /* the calling thread only */
	bool reports;            /* the calling thread reports progress */
	pthread_t tid;
};

static int64_t point_of(const struct block *b, int64_t pos)
{
	return b->shard_index + (b->first_j + pos) * b->shard_count;
}

static int64_t group_of(const struct sweep_spec *sp, int64_t index)
{
	int64_t g = index;
	for (int i = 0; i < sp->n_axes; i++) {
		const struct sweep_axis *a = &sp->axes[i];
		if (a->kind == AXIS_BATCH || a->kind == AXIS_OUTPUT)
			g -= ((index / a->stride) % a->n) * a->stride;
	}
	return g;
}

static int item_cmp(const void *pa, const void *pb)
{
	const struct item *a = pa, *b = pb;
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static void maybe_progress(struct worker *w, bool force)
{
	if (!w->reports || !w->o->progress)
		return;
	double t = now_s();
	if (!force && t - *w->last_progress_s < 0.1)
		return;
	*w->last_progress_s = t;
	w->o->progress(w->o->progress_ctx, atomic_load(w->b->done), w->total);
}

static void fail_row(struct sweep_row *row, const char *msg)
{
	row->ok = 0;
	snprintf(row->error, sizeof row->error, "%.*s", (int)sizeof row->error - 1, msg);
}

static void run_group(struct worker *w, int64_t r)
{
	struct block *b = w->b;
	struct sweep_prefill pre;
	struct err e, pre_err;
	int pre_rc = 1; /* 1: not evaluated yet */
	for (int64_t k = b->runs[r]; k < b->runs[r + 1]; k++) {
		int64_t pos = b->items[k].pos;
		struct sweep_row *row = &b->rows[pos];
		struct sweep_point pt;
		int rc = sweep_spec_point(b->sp, point_of(b, pos), &pt, &e);
		sweep_row_inputs(&pt, row);
		if (rc < 0) {
			fail_row(row, e.msg);
		} else {
			if (pre_rc == 1) {
				pre_rc = sweep_eval_prefill(&pt, w->sc, &pre, &pre_err);
				atomic_fetch_add(b->prefills, 1);
			}
			if (pre_rc < 0)
				fail_row(row, pre_err.msg);
			else if (sweep_eval_decode(&pt, &pre, w->sc, row, &e) < 0)
				fail_row(row, e.msg);
		}
		atomic_fetch_add(b->done, 1);
		if ((k & 63) == 63)
			maybe_progress(w, false);
	}
}

/* Hands a finished block to the sink on its own thread, so writing overlaps the next block. */
struct writer {
	sweep_sink_fn sink;
	void *ctx;
	const struct sweep_row *rows;
	int64_t n;
	int rc;
	struct err e;
	pthread_t tid;
};

static void *write_block(void *arg)
{
	struct writer *w = arg;
	w->rc = w->sink(w->ctx, w->rows, w->n, &w->e);
	return NULL;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct block *b = w->b;
	for (;;) {
		int64_t r = atomic_fetch_add(&b->next_run, 1);
		if (r >= b->n_runs)
			break;
		run_group(w, r);
		maybe_progress(w, false);
	}
	return NULL;
}

int sweep_run(const struct sweep_spec *sp, const struct sweep_opts *o, sweep_sink_fn sink, void *sink_ctx,
              struct sweep_stats *st, struct err *e)
{
	int rc = 0;
	int threads = o->threads < 1 ? 1 : o->threads > 1024 ? 1024 : o->threads;
	int64_t total = sweep_shard_points(sp->points, o->shard_index, o->shard_count);
	int64_t cap = total < SWEEP_BLOCK_POINTS ? total : SWEEP_BLOCK_POINTS;
	double t0 = now_s(), last_progress = 0;
	atomic_llong done = 0, prefills = 0;
	struct item *items = NULL;
	int64_t *runs = NULL;
	struct sweep_row *bufs[2] = {NULL, NULL};
	struct writer wr = {.sink = sink, .ctx = sink_ctx};
	bool writing = false;
	struct sweep_scratch *scratch = NULL;
	struct worker *workers = NULL;

	memset(st, 0, sizeof *st);
	st->threads = threads;
	if (o->shard_count < 1 || o->shard_index < 0 || o->shard_index >= o->shard_count) {
		err_set(e, NULL, 0, 0, "shard %lld/%lld: the index must be below the count",
		        (long long)o->shard_index + 1, (long long)o->shard_count);
		return -EINVAL;
	}
	(void)sweep_columns(); /* built once, before any thread could */
	if (cap > 0) {
		items = malloc((size_t)cap * sizeof *items);
		runs = malloc(((size_t)cap + 1) * sizeof *runs);
		bufs[0] = malloc((size_t)cap * sizeof *bufs[0]);
		bufs[1] = malloc((size_t)cap * sizeof *bufs[1]);
		scratch = malloc((size_t)threads * sizeof *scratch);
		workers = calloc((size_t)threads, sizeof *workers);
		if (!items || !runs || !bufs[0] || !bufs[1] || !scratch || !workers) {
			err_set(e, NULL, 0, 0, "out of memory");
			rc = -ENOMEM;
			goto out;
		}
	}
	for (int64_t j0 = 0, blk = 0; j0 < total; j0 += cap, blk++) {
		int64_t n = total - j0 < cap ? total - j0 : cap;
		struct sweep_row *rows = bufs[blk & 1];
		struct block b = {.sp = sp,
		                  .first_j = j0,
		                  .shard_index = o->shard_index,
		                  .shard_count = o->shard_count,
		                  .items = items,
		                  .runs = runs,
		                  .rows = rows,
		                  .done = &done,
		                  .prefills = &prefills};
		atomic_init(&b.next_run, 0);
		for (int64_t k = 0; k < n; k++)
			items[k] = (struct item){.group = group_of(sp, point_of(&b, k)), .pos = k};
		qsort(items, (size_t)n, sizeof *items, item_cmp);
		b.n_runs = 0;
		for (int64_t k = 0; k < n; k++)
			if (k == 0 || items[k].group != items[k - 1].group)
				runs[b.n_runs++] = k;
		runs[b.n_runs] = n;

		int started = 1;
		for (int t = 0; t < threads; t++) {
			workers[t] = (struct worker){.b = &b,
			                             .sc = &scratch[t],
			                             .o = o,
			                             .total = total,
			                             .last_progress_s = &last_progress,
			                             .reports = t == 0};
			if (t > 0 && b.n_runs > t) {
				if (pthread_create(&workers[t].tid, NULL, work, &workers[t]) != 0)
					break; /* fewer threads: the others take the work */
				started++;
			}
		}
		work(&workers[0]);
		for (int t = 1; t < started; t++)
			pthread_join(workers[t].tid, NULL);

		for (int64_t k = 0; k < n; k++) {
			st->invalid += !rows[k].ok;
			st->fits += rows[k].ok && rows[k].fits;
		}
		/* The previous block is written while this one was evaluated; now this one. */
		if (writing) {
			pthread_join(wr.tid, NULL);
			writing = false;
			if ((rc = wr.rc) < 0) {
				*e = wr.e;
				goto out;
			}
		}
		wr.rows = rows;
		wr.n = n;
		if (sink && pthread_create(&wr.tid, NULL, write_block, &wr) == 0) {
			writing = true;
		} else if (sink && (rc = sink(sink_ctx, rows, n, e)) < 0) {
			goto out;
		}
	}
	if (writing) {
		pthread_join(wr.tid, NULL);
		writing = false;
		if ((rc = wr.rc) < 0) {
			*e = wr.e;
			goto out;
		}
	}
	st->points = total;
	st->prefills = atomic_load(&prefills);
	if (o->progress)
		o->progress(o->progress_ctx, total, total);
out:
	if (writing)
		pthread_join(wr.tid, NULL);
	st->wall_s = now_s() - t0;
	free(workers);
	free(scratch);
	free(bufs[0]);
	free(bufs[1]);
	free(runs);
	free(items);
	return rc;
}
