#include "trace/capture/writer.h"

#include <errno.h>
#include <string.h>

static int process_item(struct capture_writer *w, const struct capture_item *it)
{
	struct err e = {0};
	int rc = 0;
	switch (it->kind) {
	case CAPTURE_ITEM_ACTIVITY:
		rc = capture_decode_activity(&w->dec, w->db, it->buf, it->valid_bytes, &e);
		break;
	case CAPTURE_ITEM_MARKS:
		rc = capture_decode_marks(&w->dec, w->db, it->buf, it->valid_bytes, &e);
		break;
	case CAPTURE_ITEM_METRICS:
		rc = capture_decode_metrics(&w->dec, w->db, it->buf, it->valid_bytes, &e);
		break;
	case CAPTURE_ITEM_GPU_SAMPLES:
		rc = capture_decode_gpu_samples(&w->dec, w->db, it->buf, it->valid_bytes, &e);
		break;
	}
	if (rc == 0 && it->dropped_records > 0) {
		struct trace_dropped d = {
			.source = "cupti",
			.device_id = -1,
			.context_id = (int32_t)it->context_id,
			.stream_id = (int32_t)it->stream_id,
			.count = it->dropped_records,
		};
		w->dropped_records += it->dropped_records;
		rc = trace_db_add_dropped(w->db, &d, &e);
	}
	if (rc < 0 && w->status == 0) {
		w->status = rc;
		w->err = e;
	}
	return rc;
}

static void *writer_main(void *arg)
{
	struct capture_writer *w = arg;
	struct capture_item it;
	uint64_t upto = 0;
	int r;
	while ((r = capture_pool_next(&w->pool, &it, &upto)) != 0) {
		if (r == 1) {
			/* After a database error keep draining, so producers never stall. */
			if (w->status == 0 && process_item(w, &it) == 0 &&
			    it.kind == CAPTURE_ITEM_ACTIVITY) {
				/* One transaction per CUPTI buffer: a crash loses at most the
				 * buffers not yet handed over. */
				struct err e = {0};
				int rc = trace_db_flush(w->db, &e);
				if (rc < 0 && w->status == 0) {
					w->status = rc;
					w->err = e;
				}
			}
			w->items++;
			/* CUPTI gets the buffer back zeroed (ZEROED_OUT_ACTIVITY_BUFFER): this
			 * thread pays for it, not the application's. CUPTI may have written
			 * past the valid bytes; clear the whole buffer for its records. */
			memset(it.buf, 0,
			       it.kind == CAPTURE_ITEM_ACTIVITY ? w->pool.bytes : it.valid_bytes);
			capture_pool_done(&w->pool, it.buf);
			continue;
		}
		struct err e = {0};
		int rc = w->status == 0 ? trace_db_flush(w->db, &e) : 0;
		if (rc < 0 && w->status == 0) {
			w->status = rc;
			w->err = e;
		}
		capture_pool_committed(&w->pool, upto);
	}
	return NULL;
}

int capture_writer_start(struct capture_writer *w, struct trace_db *db, int64_t pid,
			 size_t buffers, size_t buffer_bytes, struct err *e)
{
	memset(w, 0, sizeof *w);
	int rc = capture_pool_init(&w->pool, buffers, buffer_bytes);
	if (rc < 0) {
		err_set(e, NULL, 0, 0, "cannot preallocate %zu capture buffers of %zu bytes",
			buffers, buffer_bytes);
		return rc;
	}
	rc = capture_decoder_init(&w->dec, pid, 65536);
	if (rc < 0) {
		err_set(e, NULL, 0, 0, "out of memory for the record decoder");
		goto out_pool;
	}
	w->db = db;
	if (pthread_create(&w->thread, NULL, writer_main, w) != 0) {
		rc = -EAGAIN;
		err_set(e, NULL, 0, 0, "cannot start the capture writer thread");
		goto out_dec;
	}
	w->running = true;
	return 0;
out_dec:
	capture_decoder_release(&w->dec);
out_pool:
	capture_pool_release(&w->pool);
	return rc;
}

int capture_writer_flush(struct capture_writer *w, int64_t timeout_ms)
{
	if (!w->running)
		return -ENOTCONN;
	return capture_pool_flush(&w->pool, timeout_ms);
}

int capture_writer_stop(struct capture_writer *w, struct err *e)
{
	if (!w->running)
		return -ENOTCONN;
	capture_pool_close(&w->pool);
	pthread_join(w->thread, NULL);
	w->running = false;
	int rc = w->status;
	if (rc == 0) {
		struct err fe = {0};
		rc = trace_db_flush(w->db, &fe);
		if (rc < 0) {
			w->status = rc;
			w->err = fe;
		}
	}
	capture_pool_committed(&w->pool, UINT64_MAX);
	if (rc < 0 && e)
		*e = w->err;
	w->nvtx_unmatched_ends = w->dec.unmatched_range_ends;
	w->nvtx_lost_ranges = w->dec.open_overflow + (int64_t)w->dec.open_n;
	w->unknown_records = w->dec.unknown_records;
	w->devices_seen = w->dec.devices_seen;
	w->pool_waits = w->pool.waits;
	capture_decoder_release(&w->dec);
	capture_pool_release(&w->pool);
	return rc;
}
