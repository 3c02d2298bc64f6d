/* Kineto / Chrome trace-event JSON -> trace database.
 *
 * The input is read as a token stream (trace/import/json.h) from a file, a pipe or memory, gzip'd or not
 * (trace/import/input.h): one event object at a time, whatever the size. Values the importer does not
 * keep (call stacks, input shapes, any argument it does not know) are scanned, never buffered.
 * Times are microseconds with fractions ("ts": 123.456); they are converted to integer
 * nanoseconds exactly from the decimal text, never through a double, and Kineto's
 * baseTimeNanoseconds (the origin its "ts" are relative to) is added, so every time is
 * nanoseconds since the Unix epoch when the trace says where its origin is.
 *
 * A Kineto file is one process. GPU-side events carry the device as "pid" and the stream as
 * "tid", so their rows take the process id of the CPU-side events (the first cuda_runtime,
 * cuda_driver, user_annotation or cpu_op event). GPU rows that come before any such event are
 * written at once under a placeholder process and rewritten when the process is known
 * (trace_db_rewrite_pid): no queue, no cap, however the events are ordered.
 *
 * Devices: a TARGET_INFO_GPU row for each device that has activity (with deviceProperties where
 * the trace lists them), so a merge of ranks sees which GPUs each rank used. The capture's rank
 * (distributedInfo) and process go to K3SIM_CAPTURE, where merge reads a device's identity. */
#include "trace/import/import.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "trace/import/json.h"

enum {
	SMALL_TEXT = 64,
	MAX_DEVICES = 1024,            /* devices tracked (rows beyond still import) */
	MAX_PROCESSES = 65536,         /* PROCESSES rows (one per pid) */
	PID_PLACEHOLDER = 0xffffff,    /* no Linux pid (pid_max <= 2^22) */
};

enum ev_kind {
	EV_OTHER,           /* a category k3sim does not know */
	EV_SKIP,            /* known, not kept (flows, spans, instant events, ...) */
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
	bool has_cat, has_ts, has_dur, has_pid, has_tid, has_name, has_arg_name;
	int64_t ts_ns, dur_ns, pid, tid;
	/* args */
	bool has_device, has_stream, has_process;
	bool has_dims, has_types; /* "Input Dims" / "Input type" kept (opts.cpu_ops) */
	int64_t device, stream, correlation, context, registers, shared_bytes, bytes;
	int64_t process;    /* k3sim's export: the process of a GPU row */
	int64_t grid[3], block[3];
};

struct kdev {
	int32_t id;
	bool used;          /* has activity rows */
	bool listed;        /* deviceProperties gave its row */
	struct trace_gpu g;
	char name[128];
};

struct kctx {
	struct trace_db *db;
	struct json_reader *r;
	struct trace_import_stats *st;
	int64_t pid;             /* process of GPU rows, once known */
	bool pid_known;
	int64_t placeholder_rows; /* rows written under PID_PLACEHOLDER */
	char *name;              /* the event's "name" */
	size_t name_cap;
	char *arg_name;          /* args.name: a metadata event's name, a kernel's demangled name */
	size_t arg_name_cap;
	int64_t base_ns;         /* baseTimeNanoseconds */
	bool have_base;
	bool base_pending;       /* events were read before the base: shift them at the end */
	bool events_seen;
	struct kdev *dev;
	size_t n_dev;
	size_t last_dev;
	int64_t *procs;          /* pids with a PROCESSES row */
	size_t n_procs, cap_procs;
	int line, col;           /* where the current event starts */
	bool cpu_ops;            /* keep cpu_op shape records as ranges (trace/analyze/shapes.h) */
	struct sbuf {
		char *p;
		size_t len, cap;
		bool over;       /* past FW_RECORD_MAX: the record is not kept */
	} dims, types, rec;
};

/* A framework record's text is kept up to this many bytes; longer ones are counted. */
enum { FW_RECORD_MAX = 16 * 1024 };

static int oom(struct kctx *c, struct err *e)
{
	err_set(e, c->r->file, c->r->tok_line, c->r->tok_col, "out of memory");
	return -ENOMEM;
}

static void note_cut(struct kctx *c)
{
	if (c->r->str_cut)
		c->st->strings_cut++;
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
	note_cut(c);
	return 0;
}

/* The next value as a scalar token; containers are skipped and reported as JSON_NULL. */
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

static int sb_add(struct kctx *c, struct sbuf *b, const char *s, size_t n, struct err *e)
{
	if (b->over)
		return 0;
	if (b->len + n + 1 > FW_RECORD_MAX) {
		b->over = true;
		return 0;
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q)
			return oom(c, e);
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

/* "Input Dims" ([[4, 16], [16, 32], []], lists of lists for tensor lists) or "Input type"
 * (["c10::BFloat16", "Scalar"]) as the text trace/analyze/shapes.h reads: the array written back with
 * ", " between items; strings bare, with ',' '[' ']' replaced by ';' '(' ')'. */
static int read_shape_list(struct kctx *c, struct sbuf *b, struct err *e)
{
	b->len = 0;
	b->over = false;
	enum json_tok t;
	int rc = json_next(c->r, &t, e);
	if (rc)
		return rc;
	if (t != JSON_ARR_BEGIN) {
		b->over = true; /* not a list: not kept */
		return json_skip(c->r, t, e);
	}
	int depth = 1;
	bool first = true;
	if ((rc = sb_add(c, b, "[", 1, e)) != 0)
		return rc;
	while (depth > 0) {
		if ((rc = json_next(c->r, &t, e)) != 0)
			return rc;
		if (t == JSON_ARR_END) {
			depth--;
			first = false;
			rc = sb_add(c, b, "]", 1, e);
			continue;
		}
		if (!first && (rc = sb_add(c, b, ", ", 2, e)) != 0)
			return rc;
		first = false;
		if (t == JSON_ARR_BEGIN) {
			depth++;
			first = true;
			rc = sb_add(c, b, "[", 1, e);
		} else if (t == JSON_NUMBER || t == JSON_STRING) {
			for (size_t i = 0; i < c->r->str_len; i++) {
				char ch = c->r->str[i];
				ch = ch == ',' ? ';' : ch == '[' ? '(' : ch == ']' ? ')' : ch;
				if ((rc = sb_add(c, b, &ch, 1, e)) != 0)
					return rc;
			}
		} else if (t == JSON_OBJ_BEGIN) {
			b->over = true;
			rc = json_skip(c->r, t, e);
		} else {
			rc = sb_add(c, b, "null", 4, e);
		}
		if (rc)
			return rc;
	}
	return 0;
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

/* Keys are told apart by length, then bytes: a hash table would cost more than it saves. */
#define KEY_IS(k, len, lit) ((len) == sizeof(lit) - 1 && memcmp((k), (lit), sizeof(lit) - 1) == 0)

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
		size_t len = c->r->str_len;
		int64_t *dst = NULL;
		bool *flag = NULL;
		if (KEY_IS(k, len, "grid")) {
			rc = read_dim3(c, ev->grid, e);
		} else if (KEY_IS(k, len, "block")) {
			rc = read_dim3(c, ev->block, e);
		} else if (c->cpu_ops && KEY_IS(k, len, "Input Dims")) {
			rc = read_shape_list(c, &c->dims, e);
			ev->has_dims = !rc && !c->dims.over;
		} else if (c->cpu_ops && KEY_IS(k, len, "Input type")) {
			rc = read_shape_list(c, &c->types, e);
			ev->has_types = !rc && !c->types.over;
		} else if (KEY_IS(k, len, "name")) {
			rc = scalar(c, &t, e);
			if (!rc && t == JSON_STRING) {
				rc = copy_str(c, &c->arg_name, &c->arg_name_cap, e);
				ev->has_arg_name = !rc;
			}
		} else {
			if (KEY_IS(k, len, "device")) {
				dst = &ev->device;
				flag = &ev->has_device;
			} else if (KEY_IS(k, len, "stream")) {
				dst = &ev->stream;
				flag = &ev->has_stream;
			} else if (KEY_IS(k, len, "correlation")) {
				dst = &ev->correlation;
			} else if (KEY_IS(k, len, "context")) {
				dst = &ev->context;
			} else if (KEY_IS(k, len, "registers per thread")) {
				dst = &ev->registers;
			} else if (KEY_IS(k, len, "shared memory")) {
				dst = &ev->shared_bytes;
			} else if (KEY_IS(k, len, "bytes")) {
				dst = &ev->bytes;
			} else if (KEY_IS(k, len, "process")) {
				dst = &ev->process;
				flag = &ev->has_process;
			}
			if (!dst) {
				rc = json_skip_value(c->r, NULL, e);
			} else {
				rc = scalar(c, &t, e);
				int64_t v;
				if (!rc && token_i64(c->r, t, &v)) {
					*dst = v;
					if (flag)
						*flag = true;
				}
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
	for (;;) {
		enum json_tok t;
		int rc = json_next(c->r, &t, e);
		if (rc)
			return rc;
		if (t == JSON_OBJ_END)
			return 0;
		const char *k = c->r->str;
		size_t len = c->r->str_len;
		enum { K_PH, K_CAT, K_NAME, K_TS, K_DUR, K_PID, K_TID, K_OTHER } which = K_OTHER;
		switch (len) {
		case 2:
			which = KEY_IS(k, len, "ph") ? K_PH : KEY_IS(k, len, "ts") ? K_TS : K_OTHER;
			break;
		case 3:
			which = KEY_IS(k, len, "cat")   ? K_CAT
				: KEY_IS(k, len, "dur") ? K_DUR
				: KEY_IS(k, len, "pid") ? K_PID
				: KEY_IS(k, len, "tid") ? K_TID
							: K_OTHER;
			break;
		case 4:
			if (KEY_IS(k, len, "name")) {
				which = K_NAME;
			} else if (KEY_IS(k, len, "args")) {
				rc = read_args(c, ev, e);
				if (rc)
					return rc;
				continue;
			}
			break;
		default:
			break;
		}
		if (which == K_OTHER) {
			rc = json_skip_value(c->r, NULL, e);
			if (rc)
				return rc;
			continue;
		}
		rc = scalar(c, &t, e);
		if (rc)
			return rc;
		switch (which) {
		case K_PH:
			if (t == JSON_STRING)
				small_copy(ev->ph, sizeof ev->ph, c->r->str);
			break;
		case K_CAT:
			if (t == JSON_STRING) {
				small_copy(ev->cat, sizeof ev->cat, c->r->str);
				ev->has_cat = true;
			}
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

/* Categories: what Kineto (PyTorch's profiler) and k3sim's own export write. Accelerators that
 * reuse CUDA's names (ROCm) import alike; runtimes of other accelerators are API calls. */
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
		{"xpu_runtime", EV_RUNTIME},
		{"mtia_runtime", EV_RUNTIME},
		{"privateuse1_runtime", EV_RUNTIME},
		{"cuda_driver", EV_DRIVER},
		{"driver", EV_DRIVER},
		{"xpu_driver", EV_DRIVER},
		{"privateuse1_driver", EV_DRIVER},
		{"user_annotation", EV_ANNOTATION},
		{"nvtx", EV_ANNOTATION},
		{"gpu_user_annotation", EV_GPU_ANNOTATION},
		{"cpu_op", EV_CPU},
		{"operator", EV_CPU},
		{"python_function", EV_CPU},
		/* known, not kept: flows, spans, instant events, overhead, syncs, counters */
		{"ac2g", EV_SKIP},
		{"fwdbwd", EV_SKIP},
		{"async_cpu_to_gpu", EV_SKIP},
		{"Trace", EV_SKIP},
		{"cpu_instant_event", EV_SKIP},
		{"overhead", EV_SKIP},
		{"cuda_sync", EV_SKIP},
		{"cuda_profiler_range", EV_SKIP},
		{"external_correlation", EV_SKIP},
		{"gpu_pm_counter", EV_SKIP},
		{"collective_comm", EV_SKIP},
	};
	/* exact spelling first (every event asks), then any case ("Kernel" in older Kineto) */
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (cat[0] == map[i].cat[0] && strcmp(cat, map[i].cat) == 0)
			return map[i].kind;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strcasecmp(cat, map[i].cat) == 0)
			return map[i].kind;
	return EV_OTHER;
}

static void count_unknown(struct kctx *c, const struct kev *ev)
{
	struct trace_import_stats *st = c->st;
	const char *cat = ev->has_cat ? ev->cat : "(no category)";
	st->unknown_events++;
	for (int i = 0; i < st->n_unknown_cats; i++)
		if (strcmp(st->unknown_cat[i], cat) == 0) {
			st->unknown_cat_events[i]++;
			return;
		}
	if (st->n_unknown_cats < TRACE_IMPORT_UNKNOWN_CATS) {
		small_copy(st->unknown_cat[st->n_unknown_cats], TRACE_IMPORT_CAT_BYTES, cat);
		st->unknown_cat_events[st->n_unknown_cats++] = 1;
	}
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

/* The device entry of id (added unlisted); NULL past MAX_DEVICES. */
static struct kdev *device(struct kctx *c, int64_t id)
{
	if (c->last_dev < c->n_dev && c->dev[c->last_dev].id == id)
		return &c->dev[c->last_dev];
	for (size_t i = 0; i < c->n_dev; i++)
		if (c->dev[i].id == id) {
			c->last_dev = i;
			return &c->dev[i];
		}
	if (id < 0 || id > INT32_MAX || c->n_dev >= MAX_DEVICES)
		return NULL;
	if (!c->dev) {
		c->dev = calloc(MAX_DEVICES, sizeof *c->dev);
		if (!c->dev)
			return NULL;
	}
	struct kdev *d = &c->dev[c->n_dev];
	memset(d, 0, sizeof *d);
	d->id = (int32_t)id;
	d->g.id = d->g.cu_device = (int32_t)id;
	c->last_dev = c->n_dev++;
	return d;
}

static void use_device(struct kctx *c, int64_t id)
{
	struct kdev *d = device(c, id);
	if (d)
		d->used = true;
}

/* The process of a GPU row: named by the event (k3sim's export of a merged trace), known, or the
 * placeholder rewritten once it is. */
static int64_t gpu_pid(struct kctx *c, const struct kev *ev)
{
	if (ev && ev->has_process && ev->process >= 0 && ev->process < PID_PLACEHOLDER)
		return ev->process;
	if (c->pid_known)
		return c->pid;
	c->placeholder_rows++;
	return PID_PLACEHOLDER;
}

static int learn_pid(struct kctx *c, int64_t pid, struct err *e)
{
	if (c->pid_known || pid < 0 || pid >= PID_PLACEHOLDER)
		return 0;
	c->pid = pid;
	c->pid_known = true;
	if (!c->placeholder_rows)
		return 0;
	c->placeholder_rows = 0;
	return trace_db_rewrite_pid(c->db, PID_PLACEHOLDER, pid, NULL, e);
}

/* One PROCESSES row per pid: Kineto repeats process_name metadata (once per profiling step, per
 * thread...). */
static int add_process(struct kctx *c, int64_t pid, const char *name, struct err *e)
{
	for (size_t i = 0; i < c->n_procs; i++)
		if (c->procs[i] == pid) {
			c->st->skipped++;
			return 0;
		}
	if (c->n_procs >= MAX_PROCESSES) {
		c->st->skipped++;
		return 0;
	}
	if (c->n_procs == c->cap_procs) {
		size_t cap = c->cap_procs ? c->cap_procs * 2 : 16;
		int64_t *p = realloc(c->procs, cap * sizeof *p);
		if (!p)
			return oom(c, e);
		c->procs = p;
		c->cap_procs = cap;
	}
	c->procs[c->n_procs++] = pid;
	int rc = trace_db_add_process(c->db, trace_global_pid(pid), pid, name, e);
	c->st->processes += !rc;
	return rc;
}

static void span(struct kctx *c, int64_t start, int64_t end)
{
	if (start < c->st->first_ns)
		c->st->first_ns = start;
	if (end > c->st->last_ns)
		c->st->last_ns = end;
}

static int time_error(struct kctx *c, struct err *e, const char *what)
{
	err_set(e, c->r->file, c->line, c->col, "%s leaves the int64 nanosecond range", what);
	return -ERANGE;
}

static int emit(struct kctx *c, const struct kev *ev, struct err *e)
{
	enum ev_kind kind = ev->has_cat ? classify(ev->cat) : EV_OTHER;
	c->st->events++;
	if (ev->ph[0] == 'M' && !ev->ph[1]) {
		if (ev->has_name && strcmp(c->name, "process_name") == 0 && ev->has_pid &&
		    ev->has_arg_name && strncmp(c->arg_name, "GPU", 3) != 0 &&
		    strncmp(c->arg_name, "Spans", 5) != 0 && strncmp(c->arg_name, "Traces", 6) != 0)
			return add_process(c, ev->pid, c->arg_name, e);
		c->st->skipped++;
		return 0;
	}
	if (kind == EV_OTHER) {
		/* Kineto's own uncategorized markers ("Iteration Start", "Record Window End": instant
		 * events without a category) are known; timed events of unknown categories are not */
		bool marker = !ev->has_cat && !(ev->ph[0] == 'X' || ev->ph[0] == 'B' || ev->ph[0] == 'E');
		if (!marker)
			count_unknown(c, ev);
		c->st->skipped++;
		return 0;
	}
	bool complete = ev->ph[0] == 'X' && !ev->ph[1];
	bool instant = (ev->ph[0] == 'i' || ev->ph[0] == 'I') && !ev->ph[1];
	bool fw_record = kind == EV_CPU && c->cpu_ops && ev->has_dims && complete;
	if ((kind == EV_CPU && !fw_record) || (kind != EV_SKIP && instant && kind != EV_ANNOTATION)) {
		c->st->skipped++;
		return ev->has_pid ? learn_pid(c, ev->pid, e) : 0;
	}
	if (kind == EV_SKIP || !(complete || instant) || !ev->has_ts || !ev->has_name ||
	    (complete && (!ev->has_dur || ev->dur_ns < 0))) {
		c->st->skipped++;
		return 0;
	}
	int64_t start_ns = ev->ts_ns, end_ns;
	if (c->have_base && !c->base_pending &&
	    __builtin_add_overflow(start_ns, c->base_ns, &start_ns))
		return time_error(c, e, "ts + baseTimeNanoseconds");
	if (__builtin_add_overflow(start_ns, complete ? ev->dur_ns : 0, &end_ns))
		return time_error(c, e, "ts + dur");
	span(c, start_ns, end_ns);
	int rc = 0;
	switch (kind) {
	case EV_KERNEL: {
		struct trace_kernel k = {0};
		k.start_ns = start_ns;
		k.end_ns = end_ns;
		int64_t dev = ev->has_device ? ev->device : ev->pid;
		k.device_id = (uint32_t)dev;
		k.stream_id = (uint32_t)(ev->has_stream ? ev->stream : ev->tid);
		k.context_id = (uint32_t)ev->context;
		k.correlation_id = (uint32_t)ev->correlation;
		/* k3sim's export keeps the demangled name in args.name and the short one as name */
		k.name = ev->has_arg_name ? c->arg_name : c->name;
		k.short_name = ev->has_arg_name ? c->name : NULL;
		k.grid_x = (int32_t)ev->grid[0];
		k.grid_y = (int32_t)ev->grid[1];
		k.grid_z = (int32_t)ev->grid[2];
		k.block_x = (int32_t)ev->block[0];
		k.block_y = (int32_t)ev->block[1];
		k.block_z = (int32_t)ev->block[2];
		k.registers_per_thread = (int32_t)ev->registers;
		/* Kineto reports static + dynamic shared memory as one number */
		k.dynamic_shared_bytes = (int32_t)ev->shared_bytes;
		k.global_pid = trace_global_pid(gpu_pid(c, ev));
		use_device(c, dev);
		rc = trace_db_add_kernel(c->db, &k, e);
		c->st->kernels += !rc;
		return rc;
	}
	case EV_MEMCPY: {
		struct trace_memcpy m = {0};
		m.start_ns = start_ns;
		m.end_ns = end_ns;
		int64_t dev = ev->has_device ? ev->device : ev->pid;
		m.device_id = (uint32_t)dev;
		m.stream_id = (uint32_t)(ev->has_stream ? ev->stream : ev->tid);
		m.context_id = (uint32_t)ev->context;
		m.correlation_id = (uint32_t)ev->correlation;
		m.bytes = ev->bytes;
		m.copy_kind = copy_kind_of(c->name);
		m.src_device_id = m.dst_device_id = -1;
		m.global_pid = trace_global_pid(gpu_pid(c, ev));
		use_device(c, dev);
		rc = trace_db_add_memcpy(c->db, &m, e);
		c->st->memcpys += !rc;
		return rc;
	}
	case EV_MEMSET: {
		struct trace_memset m = {0};
		m.start_ns = start_ns;
		m.end_ns = end_ns;
		int64_t dev = ev->has_device ? ev->device : ev->pid;
		m.device_id = (uint32_t)dev;
		m.stream_id = (uint32_t)(ev->has_stream ? ev->stream : ev->tid);
		m.context_id = (uint32_t)ev->context;
		m.correlation_id = (uint32_t)ev->correlation;
		m.bytes = ev->bytes;
		m.global_pid = trace_global_pid(gpu_pid(c, ev));
		use_device(c, dev);
		rc = trace_db_add_memset(c->db, &m, e);
		c->st->memsets += !rc;
		return rc;
	}
	case EV_RUNTIME:
	case EV_DRIVER: {
		if (ev->has_pid) {
			rc = learn_pid(c, ev->pid, e);
			if (rc)
				return rc;
		}
		struct trace_api a = {
			.start_ns = start_ns,
			.end_ns = end_ns,
			.global_tid = trace_global_tid(ev->has_pid ? ev->pid : gpu_pid(c, NULL), ev->tid),
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
			.start_ns = start_ns,
			.end_ns = end_ns,
			.type = instant ? TRACE_NVTX_MARK : TRACE_NVTX_PUSH_POP,
			.global_tid = trace_global_tid(ev->has_pid ? ev->pid : gpu_pid(c, NULL), ev->tid),
			.text = c->name,
		};
		rc = trace_db_add_nvtx(c->db, &n, e);
		c->st->nvtx += !rc;
		return rc;
	}
	case EV_CPU: {
		/* a framework record (cpu_op with "Input Dims"): a range trace/analyze/shapes.h reads */
		if (ev->has_pid && (rc = learn_pid(c, ev->pid, e)) != 0)
			return rc;
		c->rec.len = 0;
		c->rec.over = false;
		if ((rc = sb_add(c, &c->rec, c->name, strlen(c->name), e)) != 0 ||
		    (rc = sb_add(c, &c->rec, ", sizes = ", 10, e)) != 0 ||
		    (rc = sb_add(c, &c->rec, c->dims.p, c->dims.len, e)) != 0)
			return rc;
		if (ev->has_types && ((rc = sb_add(c, &c->rec, ", types = ", 10, e)) != 0 ||
		                      (rc = sb_add(c, &c->rec, c->types.p, c->types.len, e)) != 0))
			return rc;
		if (c->rec.over) {
			c->st->skipped++;
			return 0;
		}
		struct trace_nvtx n = {
			.start_ns = start_ns,
			.end_ns = end_ns,
			.type = TRACE_NVTX_PUSH_POP,
			.global_tid = trace_global_tid(ev->has_pid ? ev->pid : gpu_pid(c, NULL), ev->tid),
			.text = c->rec.p,
		};
		rc = trace_db_add_nvtx(c->db, &n, e);
		c->st->nvtx += !rc;
		c->st->cpu_ops += !rc;
		return rc;
	}
	case EV_GPU_ANNOTATION: {
		int64_t dev = ev->has_device ? ev->device : ev->pid;
		struct trace_nvtx n = {
			.start_ns = start_ns,
			.end_ns = end_ns,
			.type = TRACE_NVTX_START_END,
			.global_tid = trace_global_tid(gpu_pid(c, ev), ev->has_stream ? ev->stream : ev->tid),
			.category = (int32_t)dev,
			.domain_id = TRACE_NVTX_DOMAIN_GPU,
			.text = c->name,
		};
		use_device(c, dev);
		rc = trace_db_add_nvtx(c->db, &n, e);
		c->st->nvtx += !rc;
		return rc;
	}
	default:
		break;
	}
	return 0;
}

/* An event, or a database error placed at the event that caused it. */
static int one_event(struct kctx *c, struct kev *ev, struct err *e)
{
	c->line = c->r->tok_line;
	c->col = c->r->tok_col;
	int rc = read_event(c, ev, e);
	if (!rc)
		rc = emit(c, ev, e);
	if (rc && e && e->line == 0) {
		char msg[sizeof e->msg];
		memcpy(msg, e->msg, sizeof msg);
		err_set(e, c->r->file, c->line, c->col, "%s", msg);
	}
	return rc;
}

/* The items of the traceEvents array (its '[' already read). */
static int read_event_items(struct kctx *c, struct err *e)
{
	struct kev ev;
	c->events_seen = true;
	if (c->have_base)
		c->base_pending = false;
	for (;;) {
		enum json_tok t;
		int rc = json_next(c->r, &t, e);
		if (rc)
			return rc;
		if (t == JSON_ARR_END)
			return 0;
		if (t != JSON_OBJ_BEGIN) {
			c->st->skipped++;
			rc = json_skip(c->r, t, e);
		} else {
			rc = one_event(c, &ev, e);
		}
		if (rc)
			return rc;
	}
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
	return read_event_items(c, e);
}

static int read_device(struct kctx *c, struct err *e)
{
	struct kdev tmp;
	memset(&tmp, 0, sizeof tmp);
	struct trace_gpu *g = &tmp.g;
	bool has_id = false;
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
			small_copy(tmp.name, sizeof tmp.name, c->r->str);
			continue;
		}
		int64_t v;
		if (!token_i64(c->r, t, &v))
			continue;
		if (strcmp(key, "id") == 0) {
			if (v < 0 || v > INT32_MAX)
				continue;
			g->id = g->cu_device = (int32_t)v;
			has_id = true;
		} else if (strcmp(key, "totalGlobalMem") == 0) {
			g->total_memory_bytes = v;
		} else if (strcmp(key, "computeMajor") == 0) {
			g->compute_major = (int32_t)v;
		} else if (strcmp(key, "computeMinor") == 0) {
			g->compute_minor = (int32_t)v;
		} else if (strcmp(key, "maxThreadsPerBlock") == 0) {
			g->max_threads_per_block = (int32_t)v;
		} else if (strcmp(key, "regsPerBlock") == 0) {
			g->max_registers_per_block = (int32_t)v;
		} else if (strcmp(key, "regsPerMultiprocessor") == 0) {
			g->max_registers_per_sm = (int32_t)v;
		} else if (strcmp(key, "warpSize") == 0) {
			g->threads_per_warp = (int32_t)v;
		} else if (strcmp(key, "sharedMemPerBlock") == 0) {
			g->max_shmem_per_block_bytes = (int32_t)v;
		} else if (strcmp(key, "sharedMemPerMultiprocessor") == 0) {
			g->max_shmem_per_sm_bytes = (int32_t)v;
		} else if (strcmp(key, "numSms") == 0) {
			g->sm_count = (int32_t)v;
		} else if (strcmp(key, "maxThreadsPerMultiprocessor") == 0 && v > 0) {
			g->max_warps_per_sm = (int32_t)(v / 32);
		}
	}
	if (rc || !has_id)
		return rc;
	struct kdev *d = device(c, g->id);
	if (!d)
		return 0; /* beyond MAX_DEVICES: the row is left out, the activity is not */
	bool used = d->used;
	*d = tmp;
	d->id = g->id;
	d->used = used;
	d->listed = true;
	return 0;
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
		int64_t v;
		if ((rank || world) && t == JSON_NUMBER && json_parse_i64(c->r->str, &v) == 0 &&
		    v >= 0) {
			char num[32];
			snprintf(num, sizeof num, "%" PRId64, v);
			rc = trace_db_set_capture(c->db, rank ? TRACE_CAPTURE_RANK : TRACE_CAPTURE_WORLD_SIZE, num,
						  e);
			if (rc)
				return rc;
		}
	}
}

static int read_base_time(struct kctx *c, struct err *e)
{
	enum json_tok t;
	int rc = scalar(c, &t, e);
	if (rc || t != JSON_NUMBER)
		return rc;
	int64_t v;
	if (json_parse_i64(c->r->str, &v) != 0 || v < 0) {
		err_set(e, c->r->file, c->r->tok_line, c->r->tok_col,
			"baseTimeNanoseconds is not a nanosecond count: %s", c->r->str);
		return -EINVAL;
	}
	c->base_ns = v;
	c->have_base = true;
	c->base_pending = c->events_seen; /* the events already read get it at the end */
	return trace_db_set_capture(c->db, "kineto_base_time_ns", c->r->str, e);
}

/* The end of a successful read: what had to wait for the whole file. */
static int finish(struct kctx *c, struct err *e)
{
	struct trace_import_stats *st = c->st;
	int rc = 0;
	if (c->have_base && c->base_pending && c->base_ns) {
		rc = trace_db_shift_time(c->db, c->base_ns, e);
		if (rc)
			return rc;
		if (st->first_ns <= st->last_ns) {
			st->first_ns += c->base_ns; /* checked by the shift */
			st->last_ns += c->base_ns;
		}
	}
	st->base_time_ns = c->have_base ? c->base_ns : 0;
	st->clock = c->have_base ? TRACE_CLOCK_EPOCH : TRACE_CLOCK_RELATIVE;
	if (!c->pid_known && c->placeholder_rows) {
		rc = trace_db_rewrite_pid(c->db, PID_PLACEHOLDER, 0, &st->gpu_rows_no_process, e);
		if (rc)
			return rc;
		c->pid_known = true;
		c->pid = 0;
	}
	for (size_t i = 0; i < c->n_dev && !rc; i++) {
		struct kdev *d = &c->dev[i];
		if (!d->used)
			continue;
		d->g.name = d->name[0] ? d->name : NULL;
		rc = trace_db_add_gpu(c->db, &d->g, e);
		st->gpus += !rc;
	}
	char num[32];
	if (!rc && c->pid_known) {
		snprintf(num, sizeof num, "%" PRId64, c->pid);
		rc = trace_db_set_capture(c->db, TRACE_CAPTURE_PID, num, e);
	}
	if (!rc)
		rc = trace_db_set_capture(c->db, TRACE_CAPTURE_CLOCK,
					  c->have_base ? TRACE_CLOCK_UNIX_EPOCH : TRACE_CLOCK_UNKNOWN, e);
	if (!rc)
		rc = trace_db_set_capture(c->db, TRACE_CAPTURE_SOURCE, "kineto-import", e);
	return rc;
}

static int import_reader(struct trace_db *db, struct json_reader *r,
			 const struct trace_kineto_opts *o, struct trace_import_stats *st,
			 struct err *e)
{
	struct trace_import_stats local;
	memset(&local, 0, sizeof local);
	local.first_ns = INT64_MAX;
	local.last_ns = INT64_MIN;
	struct kctx c = {.db = db, .r = r, .st = &local};
	if (o) {
		json_reader_limits(r, o->max_string_bytes, o->max_depth ? o->max_depth : JSON_MAX_DEPTH);
		c.cpu_ops = o->cpu_ops;
		if (o->pid > 0 && o->pid < PID_PLACEHOLDER) {
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
		seen_events = true;
		rc = read_event_items(&c, e);
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
				rc = read_base_time(&c, e);
			} else {
				rc = json_skip_value(r, NULL, e);
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
	rc = finish(&c, e);
out:
	free(c.dev);
	free(c.procs);
	free(c.name);
	free(c.arg_name);
	free(c.dims.p);
	free(c.types.p);
	free(c.rec.p);
	if (st)
		*st = local;
	return rc;
}

int trace_import_kineto_input(struct trace_db *db, struct trace_input *in,
			      const struct trace_kineto_opts *o, struct trace_import_stats *st,
			      struct err *e)
{
	struct json_reader *r = malloc(sizeof *r);
	if (!r) {
		err_set(e, in->name, 0, 0, "out of memory");
		return -ENOMEM;
	}
	json_reader_open_input(r, in);
	int rc = import_reader(db, r, o, st, e);
	json_reader_close(r);
	free(r);
	return rc;
}

int trace_import_kineto(struct trace_db *db, const char *path, const struct trace_kineto_opts *o,
			struct trace_import_stats *st, struct err *e)
{
	struct trace_input in;
	int rc = trace_input_open(&in, path, e);
	if (rc)
		return rc;
	rc = trace_import_kineto_input(db, &in, o, st, e);
	trace_input_close(&in);
	return rc;
}

int trace_import_kineto_mem(struct trace_db *db, const char *name, const void *data, size_t len,
			    const struct trace_kineto_opts *o, struct trace_import_stats *st,
			    struct err *e)
{
	struct trace_input in;
	trace_input_open_mem(&in, name, data, len);
	int rc = trace_import_kineto_input(db, &in, o, st, e);
	trace_input_close(&in);
	return rc;
}
