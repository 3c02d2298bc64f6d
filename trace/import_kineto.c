/* Kineto / Chrome trace-event JSON -> trace database.
 *
 * The file is read as a token stream (trace/json.h): one event object at a time, whatever the
 * file size. Times are microseconds with fractions ("ts": 1700000000123.456); they are converted
 * to integer nanoseconds exactly from the decimal text, never through a double, which would lose
 * nanoseconds at epoch-sized values.
 *
 * A Kineto file is one process. GPU-side events carry the device as "pid" and the stream as
 * "tid", so their rows take the process id of the CPU-side events (the first cuda_runtime,
 * cuda_driver, user_annotation or cpu_op event); GPU rows that come before any such event wait in
 * a bounded queue. */
#include "trace/import.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace/json.h"
#include "util/arena.h"

enum {
	PENDING_MAX_ROWS = 65536,
	PENDING_MAX_NAME_BYTES = 64 * 1024 * 1024,
	SMALL_TEXT = 64,
};

enum ev_kind {
	EV_OTHER,
	EV_KERNEL,
	EV_MEMCPY,
	EV_MEMSET,
	EV_RUNTIME,
	EV_DRIVER,
	EV_ANNOTATION,      /* user_annotation: CPU range */
	EV_GPU_ANNOTATION,  /* gpu_user_annotation: its projection on a stream */
	EV_CPU,             /* other CPU-side events (cpu_op, python_function): only their pid */
};

struct kev {
	char ph[8];
	char cat[SMALL_TEXT];
	bool has_ts, has_dur, has_pid, has_tid;
	int64_t ts_ns, dur_ns, pid, tid;
	/* args */
	bool has_device, has_stream;
	int64_t device, stream, correlation, context, registers, shared_bytes, bytes;
	int64_t grid[3], block[3];
	bool has_name;
	bool has_arg_name;
};

struct pending {
	enum ev_kind kind;
	union {
		struct trace_kernel k;
		struct trace_memcpy c;
		struct trace_memset s;
	} u;
};

struct kctx {
	struct trace_db *db;
	struct json_reader *r;
	struct trace_import_stats *st;
	int64_t pid;          /* process of GPU rows, once known */
	bool pid_known;
	struct pending *pend;
	size_t n_pend;
	struct arena pend_names;
	char *name;           /* the event's "name" */
	size_t name_cap;
	char *arg_name;       /* args.name of metadata events */
	size_t arg_name_cap;
};

static int oom(struct kctx *c, struct err *e)
{
	err_set(e, c->r->file, c->r->tok_line, c->r->tok_col, "out of memory");
	return -ENOMEM;
}

/* Copy the current string token into a growable buffer (bounded by the reader's string limit). */
static int copy_str(struct kctx *c, char **buf, size_t *cap, struct err *e)
{
	size_t need = c->r->str_len + 1;
	if (need > *cap) {
		size_t n = *cap ? *cap : 256;
		while (n < need)
			n *= 2;
		char *p = realloc(*buf, n);
		if (!p)
			return oom(c, e);
		*buf = p;
		*cap = n;
	}
	memcpy(*buf, c->r->str, need);
	return 0;
}

/* The next value; containers the caller does not want are skipped and reported as JSON_NULL. */
static int scalar(struct kctx *c, enum json_tok *t, struct err *e)
{
	int rc = json_next(c->r, t, e);
	if (rc)
		return rc;
	if (*t == JSON_OBJ_BEGIN || *t == JSON_ARR_BEGIN) {
		rc = json_skip(c->r, *t, e);
		*t = JSON_NULL;
	}
	return rc;
}

/* An integer from a number, or from the digits in a string ("stream 7" -> 7). */
static bool token_i64(const struct json_reader *r, enum json_tok t, int64_t *out)
{
	if (t == JSON_NUMBER)
		return json_parse_i64(r->str, out) == 0;
	if (t != JSON_STRING)
		return false;
	const char *p = r->str;
	while (*p && !isdigit((unsigned char)*p))
		p++;
	if (!*p)
		return false;
	int64_t v = 0;
	for (; isdigit((unsigned char)*p); p++) {
		if (v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return true;
}

/* µs (possibly fractional) -> ns, exactly. */
static bool token_us_to_ns(const struct json_reader *r, enum json_tok t, int64_t *out)
{
	if (t != JSON_NUMBER && t != JSON_STRING)
		return false;
	return json_parse_scaled(r->str, 3, out) == 0;
}

static int read_dim3(struct kctx *c, int64_t dim[3], struct err *e)
{
	enum json_tok t;
	int rc = json_next(c->r, &t, e);
	if (rc)
		return rc;
	if (t != JSON_ARR_BEGIN)
		return json_skip(c->r, t, e);
	for (int i = 0;; i++) {
		rc = scalar(c, &t, e);
		if (rc)
			return rc;
		if (t == JSON_ARR_END)
			return 0;
		int64_t v;
		if (i < 3 && token_i64(c->r, t, &v))
			dim[i] = v;
	}
}

static int read_args(struct kctx *c, struct kev *ev, struct err *e)
{
	enum json_tok t;
	int rc = json_next(c->r, &t, e);
	if (rc)
		return rc;
	if (t != JSON_OBJ_BEGIN)
		return json_skip(c->r, t, e);
	for (;;) {
		rc = json_next(c->r, &t, e);
		if (rc)
			return rc;
		if (t == JSON_OBJ_END)
			return 0;
		/* t == JSON_KEY */
		const char *k = c->r->str;
		int64_t *dst = NULL;
		bool *flag = NULL;
		if (strcmp(k, "grid") == 0) {
			rc = read_dim3(c, ev->grid, e);
		} else if (strcmp(k, "block") == 0) {
			rc = read_dim3(c, ev->block, e);
		} else if (strcmp(k, "name") == 0) {
			rc = scalar(c, &t, e);
			if (!rc && t == JSON_STRING) {
				rc = copy_str(c, &c->arg_name, &c->arg_name_cap, e);
				ev->has_arg_name = !rc;
			}
		} else {
			if (strcmp(k, "device") == 0) {
				dst = &ev->device;
				flag = &ev->has_device;
			} else if (strcmp(k, "stream") == 0) {
				dst = &ev->stream;
				flag = &ev->has_stream;
			} else if (strcmp(k, "correlation") == 0) {
				dst = &ev->correlation;
			} else if (strcmp(k, "context") == 0) {
				dst = &ev->context;
			} else if (strcmp(k, "registers per thread") == 0) {
				dst = &ev->registers;
			} else if (strcmp(k, "shared memory") == 0) {
				dst = &ev->shared_bytes;
			} else if (strcmp(k, "bytes") == 0) {
				dst = &ev->bytes;
			}
			rc = scalar(c, &t, e);
			int64_t v;
			if (!rc && dst && token_i64(c->r, t, &v)) {
				*dst = v;
				if (flag)
					*flag = true;
			}
		}
		if (rc)
			return rc;
	}
}

static void small_copy(char *dst, size_t n, const char *src)
{
	size_t len = strlen(src);
	if (len >= n)
		len = n - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* Read one event object (its '{' already read). */
static int read_event(struct kctx *c, struct kev *ev, struct err *e)
{
	memset(ev, 0, sizeof *ev);
	ev->grid[0] = ev->grid[1] = ev->grid[2] = 0;
	for (;;) {
		enum json_tok t;
		int rc = json_next(c->r, &t, e);
		if (rc)
			return rc;
		if (t == JSON_OBJ_END)
			return 0;
		const char *k = c->r->str;
		if (strcmp(k, "args") == 0) {
			rc = read_args(c, ev, e);
			if (rc)
				return rc;
			continue;
		}
		enum { K_PH, K_CAT, K_NAME, K_TS, K_DUR, K_PID, K_TID, K_OTHER } which = K_OTHER;
		if (strcmp(k, "ph") == 0)
			which = K_PH;
		else if (strcmp(k, "cat") == 0)
			which = K_CAT;
		else if (strcmp(k, "name") == 0)
			which = K_NAME;
		else if (strcmp(k, "ts") == 0)
			which = K_TS;
		else if (strcmp(k, "dur") == 0)
			which = K_DUR;
		else if (strcmp(k, "pid") == 0)
			which = K_PID;
		else if (strcmp(k, "tid") == 0)
			which = K_TID;
		rc = scalar(c, &t, e);
		if (rc)
			return rc;
		switch (which) {
		case K_PH:
			if (t == JSON_STRING)
				small_copy(ev->ph, sizeof ev->ph, c->r->str);
			break;
		case K_CAT:
			if (t == JSON_STRING)
				small_copy(ev->cat, sizeof ev->cat, c->r->str);
			break;
		case K_NAME:
			if (t == JSON_STRING) {
				rc = copy_str(c, &c->name, &c->name_cap, e);
				if (rc)
					return rc;
				ev->has_name = true;
			}
			break;
		case K_TS:
			ev->has_ts = token_us_to_ns(c->r, t, &ev->ts_ns);
			break;
		case K_DUR:
			ev->has_dur = token_us_to_ns(c->r, t, &ev->dur_ns);
			break;
		case K_PID:
			ev->has_pid = token_i64(c->r, t, &ev->pid);
			break;
		case K_TID:
			ev->has_tid = token_i64(c->r, t, &ev->tid);
			break;
		case K_OTHER:
			break;
		}
	}
}

static enum ev_kind classify(const char *cat)
{
	static const struct {
		const char *cat;
		enum ev_kind kind;
	} map[] = {
		{"kernel", EV_KERNEL},
		{"gpu_memcpy", EV_MEMCPY},
		{"memcpy", EV_MEMCPY},
		{"gpu_memset", EV_MEMSET},
		{"memset", EV_MEMSET},
		{"cuda_runtime", EV_RUNTIME},
		{"runtime", EV_RUNTIME},
		{"cuda_driver", EV_DRIVER},
		{"driver", EV_DRIVER},
		{"user_annotation", EV_ANNOTATION},
		{"gpu_user_annotation", EV_GPU_ANNOTATION},
		{"cpu_op", EV_CPU},
		{"operator", EV_CPU},
		{"python_function", EV_CPU},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcasecmp(cat, map[i].cat) == 0)
			return map[i].kind;
	return EV_OTHER;
}

static int32_t copy_kind_of(const char *name)
{
	static const struct {
		const char *tag;
		int32_t kind;
	} map[] = {
		{"HtoD", TRACE_COPY_HTOD}, {"DtoH", TRACE_COPY_DTOH}, {"DtoD", TRACE_COPY_DTOD},
		{"HtoH", TRACE_COPY_HTOH}, {"PtoP", TRACE_COPY_PTOP},
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strstr(name, map[i].tag))
			return map[i].kind;
	return TRACE_COPY_UNKNOWN;
}

static int write_gpu_row(struct kctx *c, struct pending *p, struct err *e)
{
	int rc = 0;
	switch (p->kind) {
	case EV_KERNEL:
		p->u.k.global_pid = trace_global_pid(c->pid);
		rc = trace_db_add_kernel(c->db, &p->u.k, e);
		c->st->kernels += !rc;
		break;
	case EV_MEMCPY:
		p->u.c.global_pid = trace_global_pid(c->pid);
		rc = trace_db_add_memcpy(c->db, &p->u.c, e);
		c->st->memcpys += !rc;
		break;
	case EV_MEMSET:
		p->u.s.global_pid = trace_global_pid(c->pid);
		rc = trace_db_add_memset(c->db, &p->u.s, e);
		c->st->memsets += !rc;
		break;
	default:
		break;
	}
	return rc;
}

static int flush_pending(struct kctx *c, struct err *e)
{
	int rc = 0;
	for (size_t i = 0; i < c->n_pend && !rc; i++)
		rc = write_gpu_row(c, &c->pend[i], e);
	c->n_pend = 0;
	arena_release(&c->pend_names);
	arena_init(&c->pend_names, PENDING_MAX_NAME_BYTES);
	return rc;
}

static int learn_pid(struct kctx *c, int64_t pid, struct err *e)
{
	if (c->pid_known)
		return 0;
	c->pid = pid;
	c->pid_known = true;
	return flush_pending(c, e);
}

/* Queue a GPU-side row until the process id is known, or write it now. */
static int gpu_row(struct kctx *c, struct pending *p, struct err *e)
{
	if (c->pid_known)
		return write_gpu_row(c, p, e);
	if (!c->pend) {
		c->pend = calloc(PENDING_MAX_ROWS, sizeof *c->pend);
		if (!c->pend)
			return oom(c, e);
	}
	if (p->kind == EV_KERNEL) {
		char *name = arena_strndup(&c->pend_names, p->u.k.name, strlen(p->u.k.name));
		if (!name) {
			int rc = learn_pid(c, 0, e); /* no CPU events to learn from: pid 0 */
			return rc ? rc : write_gpu_row(c, p, e);
		}
		p->u.k.name = name;
	}
	c->pend[c->n_pend++] = *p;
	if (c->n_pend == PENDING_MAX_ROWS)
		return learn_pid(c, 0, e);
	return 0;
}

static int emit(struct kctx *c, const struct kev *ev, struct err *e)
{
	enum ev_kind kind = classify(ev->cat);
	c->st->events++;
	if (strcmp(ev->ph, "M") == 0) {
		if (ev->has_name && strcmp(c->name, "process_name") == 0 && ev->has_pid &&
		    ev->has_arg_name && strncmp(c->arg_name, "GPU", 3) != 0 &&
		    strncmp(c->arg_name, "Spans", 5) != 0 && strncmp(c->arg_name, "Traces", 6) != 0) {
			int rc = trace_db_add_process(c->db, trace_global_pid(ev->pid), ev->pid,
						      c->arg_name, e);
			c->st->processes += !rc;
			return rc;
		}
		c->st->skipped++;
		return 0;
	}
	bool complete = strcmp(ev->ph, "X") == 0;
	if (kind == EV_OTHER || !complete || !ev->has_ts || !ev->has_dur || ev->dur_ns < 0 ||
	    !ev->has_name) {
		c->st->skipped++;
		return 0;
	}
	int64_t end_ns = ev->ts_ns + ev->dur_ns;
	int rc = 0;
	struct pending p;
	memset(&p, 0, sizeof p);
	p.kind = kind;
	switch (kind) {
	case EV_KERNEL: {
		struct trace_kernel *k = &p.u.k;
		k->start_ns = ev->ts_ns;
		k->end_ns = end_ns;
		k->device_id = (uint32_t)(ev->has_device ? ev->device : ev->pid);
		k->stream_id = (uint32_t)(ev->has_stream ? ev->stream : ev->tid);
		k->context_id = (uint32_t)ev->context;
		k->correlation_id = (uint32_t)ev->correlation;
		k->name = c->name;
		k->grid_x = (int32_t)ev->grid[0];
		k->grid_y = (int32_t)ev->grid[1];
		k->grid_z = (int32_t)ev->grid[2];
		k->block_x = (int32_t)ev->block[0];
		k->block_y = (int32_t)ev->block[1];
		k->block_z = (int32_t)ev->block[2];
		k->registers_per_thread = (int32_t)ev->registers;
		/* Kineto reports static + dynamic shared memory as one number */
		k->dynamic_shared_bytes = (int32_t)ev->shared_bytes;
		return gpu_row(c, &p, e);
	}
	case EV_MEMCPY: {
		struct trace_memcpy *m = &p.u.c;
		m->start_ns = ev->ts_ns;
		m->end_ns = end_ns;
		m->device_id = (uint32_t)(ev->has_device ? ev->device : ev->pid);
		m->stream_id = (uint32_t)(ev->has_stream ? ev->stream : ev->tid);
		m->context_id = (uint32_t)ev->context;
		m->correlation_id = (uint32_t)ev->correlation;
		m->bytes = ev->bytes;
		m->copy_kind = copy_kind_of(c->name);
		m->src_device_id = m->dst_device_id = -1;
		return gpu_row(c, &p, e);
	}
	case EV_MEMSET: {
		struct trace_memset *m = &p.u.s;
		m->start_ns = ev->ts_ns;
		m->end_ns = end_ns;
		m->device_id = (uint32_t)(ev->has_device ? ev->device : ev->pid);
		m->stream_id = (uint32_t)(ev->has_stream ? ev->stream : ev->tid);
		m->context_id = (uint32_t)ev->context;
		m->correlation_id = (uint32_t)ev->correlation;
		m->bytes = ev->bytes;
		return gpu_row(c, &p, e);
	}
	case EV_RUNTIME:
	case EV_DRIVER: {
		if (ev->has_pid) {
			rc = learn_pid(c, ev->pid, e);
			if (rc)
				return rc;
		}
		struct trace_api a = {
			.start_ns = ev->ts_ns,
			.end_ns = end_ns,
			.global_tid = trace_global_tid(ev->has_pid ? ev->pid : c->pid, ev->tid),
			.correlation_id = (uint32_t)ev->correlation,
			.kind = kind == EV_DRIVER ? TRACE_API_DRIVER : TRACE_API_RUNTIME,
			.name = c->name,
		};
		rc = trace_db_add_api(c->db, &a, e);
		c->st->api_calls += !rc;
		return rc;
	}
	case EV_ANNOTATION: {
		if (ev->has_pid) {
			rc = learn_pid(c, ev->pid, e);
			if (rc)
				return rc;
		}
		struct trace_nvtx n = {
			.start_ns = ev->ts_ns,
			.end_ns = end_ns,
			.type = TRACE_NVTX_PUSH_POP,
			.global_tid = trace_global_tid(ev->has_pid ? ev->pid : c->pid, ev->tid),
			.text = c->name,
		};
		rc = trace_db_add_nvtx(c->db, &n, e);
		c->st->nvtx += !rc;
		return rc;
	}
	case EV_GPU_ANNOTATION: {
		struct trace_nvtx n = {
			.start_ns = ev->ts_ns,
			.end_ns = end_ns,
			.type = TRACE_NVTX_START_END,
			.global_tid = trace_global_tid(c->pid, ev->has_stream ? ev->stream : ev->tid),
			.category = (int32_t)(ev->has_device ? ev->device : ev->pid),
			.domain_id = TRACE_NVTX_DOMAIN_GPU,
			.text = c->name,
		};
		rc = trace_db_add_nvtx(c->db, &n, e);
		c->st->nvtx += !rc;
		return rc;
	}
	case EV_CPU:
		if (ev->has_pid)
			rc = learn_pid(c, ev->pid, e);
		c->st->skipped++;
		return rc;
	case EV_OTHER:
		break;
	}
	return 0;
}

static int read_events(struct kctx *c, struct err *e)
{
	enum json_tok t;
	int rc = json_next(c->r, &t, e);
	if (rc)
		return rc;
	if (t != JSON_ARR_BEGIN) {
		err_set(e, c->r->file, c->r->tok_line, c->r->tok_col,
			"'traceEvents' is not an array");
		return -EINVAL;
	}
	struct kev ev;
	for (;;) {
		rc = json_next(c->r, &t, e);
		if (rc)
			return rc;
		if (t == JSON_ARR_END)
			return 0;
		if (t != JSON_OBJ_BEGIN) {
			c->st->skipped++;
			rc = json_skip(c->r, t, e);
			if (rc)
				return rc;
			continue;
		}
		int line = c->r->tok_line, col = c->r->tok_col;
		rc = read_event(c, &ev, e);
		if (!rc)
			rc = emit(c, &ev, e);
		if (rc) {
			if (e && e->line == 0) { /* a database error: say which event */
				char msg[sizeof e->msg];
				memcpy(msg, e->msg, sizeof msg);
				err_set(e, c->r->file, line, col, "%s", msg);
			}
			return rc;
		}
	}
}

static int read_device(struct kctx *c, struct err *e)
{
	struct trace_gpu g;
	memset(&g, 0, sizeof g);
	char *name = NULL;
	size_t name_cap = 0;
	int rc = 0;
	for (;;) {
		enum json_tok t;
		rc = json_next(c->r, &t, e);
		if (rc || t == JSON_OBJ_END)
			break;
		char key[SMALL_TEXT];
		small_copy(key, sizeof key, c->r->str);
		rc = scalar(c, &t, e);
		if (rc)
			break;
		if (strcmp(key, "name") == 0 && t == JSON_STRING) {
			rc = copy_str(c, &name, &name_cap, e);
			if (rc)
				break;
			continue;
		}
		int64_t v;
		if (!token_i64(c->r, t, &v))
			continue;
		if (strcmp(key, "id") == 0)
			g.id = g.cu_device = (int32_t)v;
		else if (strcmp(key, "totalGlobalMem") == 0)
			g.total_memory_bytes = v;
		else if (strcmp(key, "computeMajor") == 0)
			g.compute_major = (int32_t)v;
		else if (strcmp(key, "computeMinor") == 0)
			g.compute_minor = (int32_t)v;
		else if (strcmp(key, "maxThreadsPerBlock") == 0)
			g.max_threads_per_block = (int32_t)v;
		else if (strcmp(key, "regsPerBlock") == 0)
			g.max_registers_per_block = (int32_t)v;
		else if (strcmp(key, "regsPerMultiprocessor") == 0)
			g.max_registers_per_sm = (int32_t)v;
		else if (strcmp(key, "warpSize") == 0)
			g.threads_per_warp = (int32_t)v;
		else if (strcmp(key, "sharedMemPerBlock") == 0)
			g.max_shmem_per_block_bytes = (int32_t)v;
		else if (strcmp(key, "sharedMemPerMultiprocessor") == 0)
			g.max_shmem_per_sm_bytes = (int32_t)v;
		else if (strcmp(key, "numSms") == 0)
			g.sm_count = (int32_t)v;
		else if (strcmp(key, "maxThreadsPerMultiprocessor") == 0 && v > 0)
			g.max_warps_per_sm = (int32_t)(v / 32);
	}
	if (!rc) {
		g.name = name;
		rc = trace_db_add_gpu(c->db, &g, e);
		c->st->gpus += !rc;
	}
	free(name);
	return rc;
}

static int read_devices(struct kctx *c, struct err *e)
{
	enum json_tok t;
	int rc = json_next(c->r, &t, e);
	if (rc)
		return rc;
	if (t != JSON_ARR_BEGIN)
		return json_skip(c->r, t, e);
	for (;;) {
		rc = json_next(c->r, &t, e);
		if (rc)
			return rc;
		if (t == JSON_ARR_END)
			return 0;
		rc = t == JSON_OBJ_BEGIN ? read_device(c, e) : json_skip(c->r, t, e);
		if (rc)
			return rc;
	}
}

static int read_distributed(struct kctx *c, struct err *e)
{
	enum json_tok t;
	int rc = json_next(c->r, &t, e);
	if (rc)
		return rc;
	if (t != JSON_OBJ_BEGIN)
		return json_skip(c->r, t, e);
	for (;;) {
		rc = json_next(c->r, &t, e);
		if (rc)
			return rc;
		if (t == JSON_OBJ_END)
			return 0;
		bool rank = strcmp(c->r->str, "rank") == 0;
		bool world = strcmp(c->r->str, "world_size") == 0;
		rc = scalar(c, &t, e);
		if (rc)
			return rc;
		if ((rank || world) && t == JSON_NUMBER) {
			rc = trace_db_set_capture(c->db, rank ? TRACE_CAPTURE_RANK : "world_size",
						  c->r->str, e);
			if (rc)
				return rc;
		}
	}
}

static int import_reader(struct trace_db *db, struct json_reader *r,
			 const struct trace_kineto_opts *o, struct trace_import_stats *st,
			 struct err *e)
{
	struct trace_import_stats local;
	memset(&local, 0, sizeof local);
	struct kctx c = {.db = db, .r = r, .st = &local};
	arena_init(&c.pend_names, PENDING_MAX_NAME_BYTES);
	if (o) {
		json_reader_limits(r, o->max_string_bytes, o->max_depth ? o->max_depth : JSON_MAX_DEPTH);
		if (o->pid) {
			c.pid = o->pid;
			c.pid_known = true;
		}
	}
	int rc = 0;
	bool seen_events = false;
	enum json_tok t;
	rc = json_next(r, &t, e);
	if (rc)
		goto out;
	if (t == JSON_ARR_BEGIN) {
		/* the JSON Array Format: a bare list of events */
		struct kev ev;
		rc = 0;
		seen_events = true;
		for (;;) {
			rc = json_next(r, &t, e);
			if (rc || t == JSON_ARR_END)
				break;
			if (t != JSON_OBJ_BEGIN) {
				local.skipped++;
				rc = json_skip(r, t, e);
				if (rc)
					break;
				continue;
			}
			rc = read_event(&c, &ev, e);
			if (!rc)
				rc = emit(&c, &ev, e);
			if (rc)
				break;
		}
		if (rc)
			goto out;
	} else if (t == JSON_OBJ_BEGIN) {
		for (;;) {
			rc = json_next(r, &t, e);
			if (rc)
				goto out;
			if (t == JSON_OBJ_END)
				break;
			if (strcmp(r->str, "traceEvents") == 0) {
				seen_events = true;
				rc = read_events(&c, e);
			} else if (strcmp(r->str, "deviceProperties") == 0) {
				rc = read_devices(&c, e);
			} else if (strcmp(r->str, "distributedInfo") == 0) {
				rc = read_distributed(&c, e);
			} else if (strcmp(r->str, "baseTimeNanoseconds") == 0) {
				rc = scalar(&c, &t, e);
				if (!rc && t == JSON_NUMBER)
					rc = trace_db_set_capture(db, "kineto_base_time_ns", r->str, e);
			} else {
				rc = json_next(r, &t, e);
				if (!rc)
					rc = json_skip(r, t, e);
			}
			if (rc)
				goto out;
		}
	} else {
		err_set(e, r->file, r->tok_line, r->tok_col,
			"not a Chrome/Kineto trace: the document is not a JSON object");
		rc = -EINVAL;
		goto out;
	}
	rc = json_next(r, &t, e); /* trailing garbage is an error */
	if (rc)
		goto out;
	if (!seen_events) {
		err_set(e, r->file, 0, 0, "not a Chrome/Kineto trace: no 'traceEvents' array");
		rc = -EINVAL;
		goto out;
	}
	if (!c.pid_known)
		rc = learn_pid(&c, 0, e);
	if (!rc)
		rc = trace_db_set_capture(db, TRACE_CAPTURE_SOURCE, "kineto-import", e);
out:
	free(c.pend);
	arena_release(&c.pend_names);
	free(c.name);
	free(c.arg_name);
	if (st)
		*st = local;
	return rc;
}

int trace_import_kineto(struct trace_db *db, const char *path, const struct trace_kineto_opts *o,
			struct trace_import_stats *st, struct err *e)
{
	struct json_reader *r = malloc(sizeof *r);
	if (!r) {
		err_set(e, path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	int rc = json_reader_open_file(r, path, e);
	if (rc) {
		free(r);
		return rc;
	}
	rc = import_reader(db, r, o, st, e);
	json_reader_close(r);
	free(r);
	return rc;
}

int trace_import_kineto_mem(struct trace_db *db, const char *name, const void *data, size_t len,
			    const struct trace_kineto_opts *o, struct trace_import_stats *st,
			    struct err *e)
{
	struct json_reader *r = malloc(sizeof *r);
	if (!r) {
		err_set(e, name, 0, 0, "out of memory");
		return -ENOMEM;
	}
	json_reader_open_mem(r, name, data, len);
	int rc = import_reader(db, r, o, st, e);
	json_reader_close(r);
	free(r);
	return rc;
}
