#include "calib/match.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "sim/opspec.h"
#include "trace/analyze/shapes.h"
#include "trace/analyze/analyze.h"
#include "trace/db/sqlread.h"
#include "trace/db/tracedb.h"

enum {
	ARENA_BYTES = 1024 * 1024 * 1024, /* strings and result arrays; rows are bounded separately */
	SPEC_MAX_BYTES = 256,
};

/* ---- a string -> int map (open addressing; grows, capped by the row bound) ---- */

struct smap {
	const char **key;
	int32_t *val;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static int smap_grow(struct smap *m)
{
	size_t cap = m->cap ? 2 * m->cap : 256;
	const char **key = calloc(cap, sizeof *key);
	int32_t *val = calloc(cap, sizeof *val);
	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->key[i]) {
			size_t j = hash_str(m->key[i]) & (cap - 1);
			while (key[j])
				j = (j + 1) & (cap - 1);
			key[j] = m->key[i];
			val[j] = m->val[i];
		}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->cap = cap;
	return 0;
}

/* The slot of s: *found tells whether it holds s already. */
static int smap_slot(struct smap *m, const char *s, size_t *slot, bool *found)
{
	if (2 * (m->n + 1) > m->cap) {
		int rc = smap_grow(m);
		if (rc < 0)
			return rc;
	}
	size_t j = hash_str(s) & (m->cap - 1);
	while (m->key[j] && strcmp(m->key[j], s) != 0)
		j = (j + 1) & (m->cap - 1);
	*slot = j;
	*found = m->key[j] != NULL;
	return 0;
}

static void smap_free(struct smap *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof *m);
}

/* ---- an int64 -> int map for rule groups ---- */

struct imap {
	int64_t *key;
	int32_t *val;
	size_t cap, n;
};

static size_t ihash(int64_t k, size_t cap)
{
	return (size_t)(((uint64_t)k * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static int imap_get_or_add(struct imap *m, int64_t k, int32_t val_if_new, int32_t *out)
{
	if (2 * (m->n + 1) > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 256;
		int64_t *key = malloc(cap * sizeof *key);
		int32_t *val = malloc(cap * sizeof *val);
		if (!key || !val) {
			free(key);
			free(val);
			return -ENOMEM;
		}
		for (size_t i = 0; i < cap; i++)
			key[i] = INT64_MIN;
		for (size_t i = 0; i < m->cap; i++)
			if (m->key[i] != INT64_MIN) {
				size_t j = ihash(m->key[i], cap);
				while (key[j] != INT64_MIN)
					j = (j + 1) & (cap - 1);
				key[j] = m->key[i];
				val[j] = m->val[i];
			}
		free(m->key);
		free(m->val);
		m->key = key;
		m->val = val;
		m->cap = cap;
	}
	size_t j = ihash(k, m->cap);
	while (m->key[j] != INT64_MIN && m->key[j] != k)
		j = (j + 1) & (m->cap - 1);
	if (m->key[j] == INT64_MIN) {
		m->key[j] = k;
		m->val[j] = val_if_new;
		m->n++;
	}
	*out = m->val[j];
	return 0;
}

static void imap_free(struct imap *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof *m);
}

/* ---- growable arrays with a cap ---- */

static int grow(void **p, size_t *cap, size_t need, size_t elem, size_t max)
{
	if (need <= *cap)
		return 0;
	if (need > max)
		return -E2BIG;
	size_t c = *cap ? *cap : 1024;
	while (c < need)
		c *= 2;
	if (c > max)
		c = max;
	void *q = realloc(*p, c * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = c;
	return 0;
}

/* ---- what is read from the database ---- */

enum act_kind { ACT_KERNEL, ACT_MEMCPY, ACT_MEMSET };

struct act {
	int64_t start, end, pid;
	int64_t bytes;
	uint32_t corr, device;
	int32_t name; /* index in names */
	int32_t grid[3], block[3];
	uint8_t kind;
};

struct api {
	int64_t key; /* pid << 32 | correlationId */
	int64_t start, end, tid;
	int64_t seq;                /* load order */
	enum trace_api_kind kind;
};

struct range {
	int64_t start, end, tid;
	int32_t text; /* index in texts */
};

struct name {
	const char *s;
	int32_t rule; /* -2: not looked up yet */
};

struct text {
	const char *s;
	bool k3;      /* starts with "k3sim " (not "k3sim ref") */
	bool ref;     /* "k3sim ref ...", or k3-bench's "k3-bench ..." (its captures before 2026-12-01y):
	               * a reference measurement (cuBLASLt, a kernel variant) beside an op, not the op */
	int32_t spec; /* k3: index in specs, or -1 when invalid */
	int32_t bad;  /* k3 invalid: index in bad */
	/* a framework record (trace/analyze/shapes.h), with opts.derive */
	enum { FW_NONE, FW_OP, FW_FAILED, FW_SKIPPED } fw;
	bool fw_assumed;    /* FW_OP: element types assumed */
	int32_t fw_spec;    /* FW_OP: index in specs */
	const char *fw_why; /* FW_FAILED, FW_SKIPPED: the reason */
};

struct string_id {
	int64_t id;
	const char *s;
};

/* A matched activity's GPU interval, by sample (busy_time()). */
struct span_iv {
	int32_t sample;
	uint32_t device;
	int64_t start, end;
};

struct ctx {
	sqlite3 *db;
	const char *path;
	struct err *e;
	struct calib_match *m;
	const struct calib_rules *rules;
	const struct trace_kclass_rules *classes; /* the rules', or own_classes */
	struct trace_kclass_rules own_classes;
	size_t max_rows;

	struct string_id *ids;
	size_t n_ids, cap_ids;
	struct name *names;
	size_t n_names, cap_names;
	struct act *acts;
	size_t n_acts, cap_acts;
	struct api *apis;
	size_t n_apis, cap_apis;
	struct range *ranges;
	size_t n_ranges, cap_ranges;
	struct text *texts;
	size_t n_texts, cap_texts;
	struct smap text_map, spec_map, reason_map;
	struct imap groups;
	int32_t *range_sample;
	size_t cap_specs, cap_samples, cap_unmatched, cap_bad;
	int32_t memcpy_names[16], memset_name;
	const struct calib_match_opts *o;
	struct calib_activity *out_acts; /* o->keep_activities */
	size_t cap_marks;
	struct span_iv *ivs; /* every matched activity's interval, for busy_time() */
	size_t n_ivs, cap_ivs;
};

static int db_error(struct ctx *c, const char *table)
{
	err_set(c->e, c->path, 0, 0, "%s%s%s", table ? table : "", table ? ": " : "", sqlite3_errmsg(c->db));
	return -EIO;
}

/* Tables are read by column name through trace/db/sqlread.h, as every trace reader does. */
static int select_cols(struct ctx *c, const char *table, const char *const *want, int n, int *idx,
                       const char *where, sqlite3_stmt **out)
{
	int rc = trace_sql_select(c->db, c->path, table, want, n, idx, where, out, c->e);
	if (rc == 0 && !*out) {
		err_set(c->e, c->path, 0, 0, "%s: none of the columns k3sim reads", table);
		return -EINVAL;
	}
	return rc;
}

#define col_i64 trace_sql_i64

static bool is_table(sqlite3 *db, const char *name)
{
	char type[16];
	return trace_sql_object_type(db, "", name, type, sizeof type, NULL) == 0 && strcmp(type, "table") == 0;
}

static int too_many(struct ctx *c, const char *table)
{
	err_set(c->e, c->path, 0, 0, "%s: more than %zu rows (raise the row limit)", table, c->max_rows);
	return -E2BIG;
}

static int load_strings(struct ctx *c)
{
	if (!trace_sql_has_table(c->db, "StringIds"))
		return 0;
	enum { COL_id, COL_value, N_COLS };
	static const char *const cols[N_COLS] = {"id", "value"};
	int idx[N_COLS];
	sqlite3_stmt *st;
	int rc = select_cols(c, "StringIds", cols, N_COLS, idx, NULL, &st);
	if (rc < 0)
		return rc;
	int s;
	int64_t prev = INT64_MIN;
	bool sorted = true;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if ((rc = grow((void **)&c->ids, &c->cap_ids, c->n_ids + 1, sizeof *c->ids, c->max_rows)) < 0)
			break;
		const char *v = trace_sql_text(st, idx[COL_value]);
		int len = v ? sqlite3_column_bytes(st, idx[COL_value]) : 0;
		struct string_id *x = &c->ids[c->n_ids++];
		x->id = col_i64(st, idx[COL_id], 0);
		x->s = arena_strndup(&c->m->arena, v ? v : "", v ? (size_t)len : 0);
		if (!x->s) {
			rc = -ENOMEM;
			break;
		}
		sorted &= x->id > prev;
		prev = x->id;
	}
	if (rc == 0 && s != SQLITE_DONE)
		rc = db_error(c, "StringIds");
	sqlite3_finalize(st);
	if (rc == -E2BIG)
		return too_many(c, "StringIds");
	if (rc < 0)
		return rc;
	if (!sorted) {
		err_set(c->e, c->path, 0, 0, "StringIds: ids are not in increasing order");
		return -EINVAL;
	}
	return 0;
}

static const char *string_of(struct ctx *c, int64_t id, size_t *pos)
{
	size_t lo = 0, hi = c->n_ids;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->n_ids && c->ids[lo].id == id) {
		if (pos)
			*pos = lo;
		return c->ids[lo].s;
	}
	return NULL;
}

static int add_name(struct ctx *c, const char *s, int32_t *out)
{
	int rc = grow((void **)&c->names, &c->cap_names, c->n_names + 1, sizeof *c->names, c->max_rows + 64);
	if (rc < 0)
		return rc;
	c->names[c->n_names].s = s;
	c->names[c->n_names].rule = -2;
	*out = (int32_t)c->n_names++;
	return 0;
}

static int load_acts(struct ctx *c, enum act_kind kind)
{
	/* kernels, memcpys and memsets share the first columns; copyKind is the memcpys' */
	enum { COL_start, COL_end, COL_deviceId, COL_correlationId, COL_globalPid, COL_demangledName,
	       COL_shortName, COL_gridX, COL_gridY, COL_gridZ, COL_blockX, COL_blockY, COL_blockZ, N_K };
	enum { COL_bytes = COL_globalPid + 1, COL_copyKind, N_M };
	static const char *const kcols[N_K] = {
	    "start", "end",   "deviceId", "correlationId", "globalPid", "demangledName", "shortName",
	    "gridX", "gridY", "gridZ",    "blockX",        "blockY",    "blockZ"};
	static const char *const mcols[N_M] = {"start",     "end",   "deviceId", "correlationId",
	                                       "globalPid", "bytes", "copyKind"};
	int idx[N_K];
	const char *table = kind == ACT_KERNEL   ? "CUPTI_ACTIVITY_KIND_KERNEL"
	                    : kind == ACT_MEMCPY ? "CUPTI_ACTIVITY_KIND_MEMCPY"
	                                         : "CUPTI_ACTIVITY_KIND_MEMSET";
	if (!trace_sql_has_table(c->db, table))
		return 0;
	sqlite3_stmt *st;
	int rc = kind == ACT_KERNEL ? select_cols(c, table, kcols, N_K, idx, NULL, &st)
	                            : select_cols(c, table, mcols, kind == ACT_MEMCPY ? N_M : N_M - 1, idx, NULL,
	                                          &st);
	if (rc < 0)
		return rc;
	int s;
	int64_t rows = 0;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (++rows > (int64_t)c->max_rows) {
			rc = -E2BIG;
			break;
		}
		if ((rc = grow((void **)&c->acts, &c->cap_acts, c->n_acts + 1, sizeof *c->acts,
		               3 * c->max_rows)) < 0)
			break;
		struct act *a = &c->acts[c->n_acts];
		memset(a, 0, sizeof *a);
		a->kind = (uint8_t)kind;
		a->start = col_i64(st, idx[COL_start], 0);
		a->end = col_i64(st, idx[COL_end], a->start);
		if (a->end < a->start)
			a->end = a->start;
		a->device = (uint32_t)col_i64(st, idx[COL_deviceId], 0);
		a->corr = (uint32_t)col_i64(st, idx[COL_correlationId], 0);
		a->pid = trace_global_to_pid(col_i64(st, idx[COL_globalPid], 0));
		if (kind == ACT_KERNEL) {
			size_t pos = 0;
			int64_t id = col_i64(st, idx[COL_demangledName], INT64_MIN);
			if (id == INT64_MIN)
				id = col_i64(st, idx[COL_shortName], INT64_MIN);
			const char *nm = id != INT64_MIN ? string_of(c, id, &pos) : NULL;
			if (nm) {
				a->name = (int32_t)pos; /* names[0..n_ids) mirror StringIds */
			} else if ((rc = add_name(c, "(unnamed kernel)", &a->name)) < 0) {
				break;
			}
			for (int i = 0; i < 3; i++) {
				a->grid[i] = (int32_t)col_i64(st, idx[COL_gridX + i], 0);
				a->block[i] = (int32_t)col_i64(st, idx[COL_blockX + i], 0);
			}
			c->m->kernels++;
		} else {
			a->bytes = col_i64(st, idx[COL_bytes], 0);
			if (kind == ACT_MEMCPY) {
				int64_t ck = col_i64(st, idx[COL_copyKind], 0);
				a->name = c->memcpy_names[ck >= 0 && ck < 16 ? ck : 0];
				c->m->memcpys++;
			} else {
				a->name = c->memset_name;
				c->m->memsets++;
			}
		}
		c->n_acts++;
	}
	if (rc == 0 && s != SQLITE_DONE)
		rc = db_error(c, table);
	sqlite3_finalize(st);
	if (rc == -E2BIG)
		return too_many(c, table);
	return rc;
}

/* The runtime and driver calls (trace_launch_call_better says which launches a kernel). */
static int load_apis_from(struct ctx *c, const char *table, bool driver_table)
{
	enum { COL_correlationId, COL_globalTid, COL_start, COL_end, COL_eventClass, N_COLS };
	static const char *const cols[N_COLS] = {"correlationId", "globalTid", "start", "end", "eventClass"};
	int idx[N_COLS];
	sqlite3_stmt *st;
	int rc = select_cols(c, table, cols, N_COLS, idx, NULL, &st);
	if (rc < 0)
		return rc;
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t cls = driver_table ? TRACE_API_DRIVER : col_i64(st, idx[COL_eventClass], TRACE_API_RUNTIME);
		int64_t corr = col_i64(st, idx[COL_correlationId], 0);
		if ((cls != TRACE_API_RUNTIME && cls != TRACE_API_DRIVER) || corr <= 0 || corr > UINT32_MAX)
			continue;
		if ((rc = grow((void **)&c->apis, &c->cap_apis, c->n_apis + 1, sizeof *c->apis,
		               2 * c->max_rows)) < 0)
			break;
		struct api *a = &c->apis[c->n_apis];
		a->tid = col_i64(st, idx[COL_globalTid], 0);
		a->key = trace_global_to_pid(a->tid) << 32 | corr;
		a->start = col_i64(st, idx[COL_start], 0);
		a->end = col_i64(st, idx[COL_end], a->start);
		a->kind = (enum trace_api_kind)cls;
		a->seq = (int64_t)c->n_apis++;
	}
	if (rc == 0 && s != SQLITE_DONE)
		rc = db_error(c, table);
	sqlite3_finalize(st);
	if (rc == -E2BIG)
		return too_many(c, table);
	return rc;
}

static int cmp_api(const void *a, const void *b)
{
	const struct api *x = a, *y = b;
	if (x->key != y->key)
		return (x->key > y->key) - (x->key < y->key);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The launching call of a kernel of process pid with correlation id corr, by the one rule. */
static const struct api *find_api(const struct ctx *c, int64_t pid, uint32_t corr)
{
	int64_t key = pid << 32 | corr;
	size_t lo = 0, hi = c->n_apis;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->apis[mid].key < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct api *best = NULL;
	for (size_t i = lo; i < c->n_apis && c->apis[i].key == key; i++)
		if (!best || trace_launch_call_better(best->kind, c->apis[i].kind))
			best = &c->apis[i];
	return best;
}

/* Specs are keyed without the "k3sim op=" prefix, so a range and a rule naming the same op meet. */
static int add_spec(struct ctx *c, const char *text, const struct op *op, int32_t *out)
{
	while (*text == ' ')
		text++;
	if (strncmp(text, "k3sim op=", 9) == 0)
		text += 9;
	else if (strncmp(text, "k3sim ", 6) == 0)
		text += 6;
	size_t slot;
	bool found;
	int rc = smap_slot(&c->spec_map, text, &slot, &found);
	if (rc < 0)
		return rc;
	if (found) {
		*out = c->spec_map.val[slot];
		return 0;
	}
	struct calib_match *m = c->m;
	if ((rc = grow((void **)&m->specs, &c->cap_specs, m->n_specs + 1, sizeof *m->specs, c->max_rows)) < 0)
		return rc;
	struct calib_spec *sp = &m->specs[m->n_specs];
	sp->text = arena_strndup(&m->arena, text, strlen(text));
	if (!sp->text)
		return -ENOMEM;
	sp->op = *op;
	c->spec_map.key[slot] = sp->text;
	c->spec_map.val[slot] = (int32_t)m->n_specs;
	c->spec_map.n++;
	*out = (int32_t)m->n_specs++;
	return 0;
}

/* Each distinct text that is a framework record: its op by the derivation rules, or why not. */
static int derive_texts(struct ctx *c)
{
	if (!c->o || !c->o->derive)
		return 0;
	for (size_t i = 0; i < c->n_texts; i++) {
		struct text *x = &c->texts[i];
		if (x->k3)
			continue;
		struct fw_call call;
		struct err pe = {0};
		int rc = fw_call_parse(x->s, &call, &pe);
		if (rc == 0)
			continue;
		char why[640];
		if (rc < 0) {
			x->fw = FW_FAILED;
			snprintf(why, sizeof why, "framework record does not parse: %s", pe.msg);
		} else {
			struct calib_derived d;
			rc = calib_derive_op(c->o->derive, &call, &c->o->derive_opts, &d);
			if (rc == 0) {
				x->fw = FW_OP;
				x->fw_assumed = d.dtype_assumed;
				if ((rc = add_spec(c, d.spec, &d.op, &x->fw_spec)) < 0)
					return rc;
				continue;
			}
			x->fw = d.skipped ? FW_SKIPPED : FW_FAILED;
			snprintf(why, sizeof why, "%s", d.why);
		}
		if (!(x->fw_why = arena_strndup(&c->m->arena, why, strlen(why))))
			return -ENOMEM;
	}
	return 0;
}

/* Ranges whose name (the text before the first ',') matches one of o->marks. */
static int collect_marks(struct ctx *c)
{
	if (!c->o || c->o->n_marks <= 0)
		return 0;
	for (size_t i = 0; i < c->n_ranges; i++) {
		const struct range *r = &c->ranges[i];
		const char *t = c->texts[r->text].s;
		char name[160];
		size_t n = strcspn(t, ",");
		if (n >= sizeof name)
			continue;
		memcpy(name, t, n);
		name[n] = '\0';
		bool hit = false;
		for (int j = 0; j < c->o->n_marks && !hit; j++)
			hit = trace_glob(c->o->marks[j], name, false);
		if (!hit)
			continue;
		int rc = grow((void **)&c->m->marks, &c->cap_marks, c->m->n_marks + 1, sizeof *c->m->marks,
		              c->max_rows);
		if (rc < 0)
			return rc;
		struct calib_mark *k = &c->m->marks[c->m->n_marks++];
		k->text = t;
		k->start_ns = r->start;
		k->end_ns = r->end;
		k->tid = r->tid;
	}
	return 0;
}

static int load_ranges(struct ctx *c)
{
	if (!trace_sql_has_table(c->db, "NVTX_EVENTS"))
		return 0;
	enum { COL_start, COL_end, COL_text, COL_textId, COL_globalTid, COL_domainId, COL_eventType, N_COLS };
	static const char *const cols[N_COLS] = {"start",     "end",      "text",     "textId",
	                                         "globalTid", "domainId", "eventType"};
	int idx[N_COLS];
	sqlite3_stmt *st;
	int rc = select_cols(c, "NVTX_EVENTS", cols, N_COLS, idx, "\"end\" IS NOT NULL AND eventType IN (59, 60)",
	                     &st);
	if (rc < 0)
		return rc;
	int s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (col_i64(st, idx[COL_domainId], 0) == TRACE_NVTX_DOMAIN_GPU)
			continue;
		if ((rc = grow((void **)&c->ranges, &c->cap_ranges, c->n_ranges + 1, sizeof *c->ranges,
		               c->max_rows)) < 0)
			break;
		const char *t = trace_sql_text(st, idx[COL_text]);
		if (!t && col_i64(st, idx[COL_textId], INT64_MIN) != INT64_MIN)
			t = string_of(c, col_i64(st, idx[COL_textId], 0), NULL);
		if (!t)
			t = "";
		size_t slot;
		bool found;
		if ((rc = smap_slot(&c->text_map, t, &slot, &found)) < 0)
			break;
		if (!found) {
			if ((rc = grow((void **)&c->texts, &c->cap_texts, c->n_texts + 1, sizeof *c->texts,
			               c->max_rows)) < 0)
				break;
			struct text *x = &c->texts[c->n_texts];
			memset(x, 0, sizeof *x);
			x->s = arena_strndup(&c->m->arena, t, strlen(t));
			if (!x->s) {
				rc = -ENOMEM;
				break;
			}
			const char *p = x->s;
			while (*p == ' ')
				p++;
			x->ref = strncmp(p, "k3sim ref ", 10) == 0 || strcmp(p, "k3sim ref") == 0 ||
			         strncmp(p, "k3-bench ", 9) == 0;
			x->k3 = strncmp(p, "k3sim ", 6) == 0 && !x->ref;
			x->spec = -1;
			x->bad = -1;
			c->text_map.key[slot] = x->s;
			c->text_map.val[slot] = (int32_t)c->n_texts++;
			c->text_map.n++;
		}
		struct range *r = &c->ranges[c->n_ranges++];
		r->start = col_i64(st, idx[COL_start], 0);
		r->end = col_i64(st, idx[COL_end], r->start);
		r->tid = col_i64(st, idx[COL_globalTid], 0);
		r->text = c->text_map.val[slot];
		c->m->ranges++;
	}
	if (rc == 0 && s != SQLITE_DONE)
		rc = db_error(c, "NVTX_EVENTS");
	sqlite3_finalize(st);
	if (rc == -E2BIG)
		return too_many(c, "NVTX_EVENTS");
	if (rc < 0)
		return rc;
	/* parse each distinct k3sim text once */
	for (size_t i = 0; i < c->n_texts; i++) {
		struct text *x = &c->texts[i];
		if (!x->k3)
			continue;
		struct op op;
		struct err pe = {0};
		if (opspec_parse_line(x->s, &op, &pe) == 0) {
			if ((rc = add_spec(c, x->s, &op, &x->spec)) < 0)
				return rc;
		} else {
			if ((rc = grow((void **)&c->m->bad, &c->cap_bad, c->m->n_bad + 1, sizeof *c->m->bad,
			               c->max_rows)) < 0)
				return rc;
			struct calib_bad_range *b = &c->m->bad[c->m->n_bad];
			b->text = x->s;
			b->error = arena_strndup(&c->m->arena, pe.msg, strlen(pe.msg));
			b->instances = 0;
			if (!b->error)
				return -ENOMEM;
			x->bad = (int32_t)c->m->n_bad++;
		}
	}
	if ((rc = derive_texts(c)) < 0 || (rc = collect_marks(c)) < 0)
		return rc;
	for (size_t i = 0; i < c->n_ranges; i++) {
		const struct text *x = &c->texts[c->ranges[i].text];
		if (x->fw != FW_NONE)
			c->m->framework_ranges++;
		if (x->k3)
			c->m->k3sim_ranges++;
		if (x->bad >= 0)
			c->m->bad[x->bad].instances++;
	}
	return 0;
}

/* ---- results ---- */

static int unmatched(struct ctx *c, const struct act *a, const char *reason, bool skipped)
{
	char key[640];
	snprintf(key, sizeof key, "%d\x1f%s", a->name, reason);
	size_t slot;
	bool found;
	int rc = smap_slot(&c->reason_map, key, &slot, &found);
	if (rc < 0)
		return rc;
	struct calib_match *m = c->m;
	if (!found) {
		if ((rc = grow((void **)&m->unmatched, &c->cap_unmatched, m->n_unmatched + 1,
		               sizeof *m->unmatched, c->max_rows)) < 0)
			return rc;
		struct calib_unmatched *u = &m->unmatched[m->n_unmatched];
		memset(u, 0, sizeof *u);
		u->name = c->names[a->name].s;
		u->reason = arena_strndup(&m->arena, reason, strlen(reason));
		u->skipped = skipped;
		const char *k = arena_strndup(&m->arena, key, strlen(key));
		if (!u->reason || !k)
			return -ENOMEM;
		c->reason_map.key[slot] = k;
		c->reason_map.val[slot] = (int32_t)m->n_unmatched++;
		c->reason_map.n++;
	}
	struct calib_unmatched *u = &m->unmatched[c->reason_map.val[slot]];
	u->count++;
	u->gpu_ns += a->end - a->start;
	if (skipped)
		m->skipped++;
	else
		m->unmatched_total++;
	return 0;
}

/* FNV-1a: a sample's kernels_sig sums these over its activities (calib_sample). */
static uint64_t name_hash(const char *s)
{
	uint64_t h = UINT64_C(14695981039346656037);
	for (; s && *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(1099511628211);
	}
	return h;
}

static int new_sample(struct ctx *c, int32_t spec, int32_t rule, int32_t *out)
{
	struct calib_match *m = c->m;
	int rc = grow((void **)&m->samples, &c->cap_samples, m->n_samples + 1, sizeof *m->samples,
	              3 * c->max_rows);
	if (rc < 0)
		return rc;
	struct calib_sample *s = &m->samples[m->n_samples];
	memset(s, 0, sizeof *s);
	s->spec = spec;
	s->rule = rule;
	s->start_ns = INT64_MAX;
	*out = (int32_t)m->n_samples++;
	return 0;
}

static int add_to_sample(struct ctx *c, int32_t i, const struct act *a)
{
	struct calib_match *m = c->m;
	int rc = grow((void **)&c->ivs, &c->cap_ivs, c->n_ivs + 1, sizeof *c->ivs, 3 * c->max_rows);
	if (rc < 0)
		return rc;
	c->ivs[c->n_ivs++] = (struct span_iv){.sample = i, .device = a->device, .start = a->start, .end = a->end};
	struct calib_sample *s = &m->samples[i];
	if (c->out_acts) {
		struct calib_activity *o = &c->out_acts[a - c->acts];
		o->spec = s->spec;
		o->first = s->activities == 0;
	}
	if (s->activities == 0) {
		s->device_id = a->device;
		s->pid = a->pid;
	}
	s->activities++;
	s->sum_ns += a->end - a->start;
	const char *nm = c->names[a->name].s;
	s->kernels_sig += name_hash(nm);
	if (!s->kernel || a->end - a->start > s->kernel_ns) {
		s->kernel = nm;
		s->kernel_ns = a->end - a->start;
	}
	if (a->start < s->start_ns)
		s->start_ns = a->start;
	if (a->end > s->end_ns)
		s->end_ns = a->end;
	return 0;
}

static int cmp_iv(const void *x_, const void *y_)
{
	const struct span_iv *x = x_, *y = y_;
	if (x->sample != y->sample)
		return (x->sample > y->sample) - (x->sample < y->sample);
	if (x->device != y->device)
		return (x->device > y->device) - (x->device < y->device);
	return (x->start > y->start) - (x->start < y->start);
}

/* Each sample's gpu_ns: the union of its activities' intervals on each device, summed over the
 * devices, so that kernels running at once (two streams, or a kernel started early by
 * programmatic dependent launch) count once: a range's GPU time, not its kernels' summed time
 * (sum_ns). Before the samples are sorted (ivs hold their indices). */
static void busy_time(struct ctx *c)
{
	if (!c->n_ivs)
		return;
	qsort(c->ivs, c->n_ivs, sizeof *c->ivs, cmp_iv);
	for (size_t i = 0; i < c->n_ivs;) {
		const int32_t smp = c->ivs[i].sample;
		int64_t busy = 0;
		while (i < c->n_ivs && c->ivs[i].sample == smp) {
			const uint32_t dev = c->ivs[i].device;
			int64_t lo = c->ivs[i].start, hi = c->ivs[i].end;
			for (i++; i < c->n_ivs && c->ivs[i].sample == smp && c->ivs[i].device == dev; i++) {
				if (c->ivs[i].start > hi) {
					busy += hi - lo;
					lo = c->ivs[i].start;
				}
				if (c->ivs[i].end > hi)
					hi = c->ivs[i].end;
			}
			busy += hi - lo;
		}
		c->m->samples[smp].gpu_ns = busy;
	}
}

/* An activity outside k3sim ranges: the rules decide. open[0..n_open) are the ranges open where it
 * was launched, outermost first (trace_attribute; a span's id is its index in ranges). */
static int by_rule(struct ctx *c, const struct act *a, const struct trace_span *const *open, size_t n_open)
{
	struct name *nm = &c->names[a->name];
	if (nm->rule == -2)
		nm->rule = c->rules ? calib_rules_find(c->rules, nm->s) : -1;
	if (nm->rule < 0)
		return unmatched(c, a,
		                 c->rules ? "outside k3sim ranges, and no rule matches the name"
		                          : "outside k3sim ranges (no rules given)",
		                 false);
	const struct calib_rule *rule = &c->rules->rule[nm->rule];
	char reason[600];
	if (!rule->op) {
		snprintf(reason, sizeof reason, "skipped by rule '%s'", rule->name);
		return unmatched(c, a, reason, true);
	}
	const char *texts[CALIB_NVTX_DEPTH_MAX];
	int nt = 0, inner = -1;
	for (size_t i = n_open; i-- > 0 && nt < CALIB_NVTX_DEPTH_MAX;) {
		const struct range *r = &c->ranges[open[i]->id];
		if (inner < 0)
			inner = (int)open[i]->id;
		texts[nt++] = c->texts[r->text].s;
	}
	struct calib_rule_ctx rc_ = {.bytes = a->bytes, .nvtx = texts, .n_nvtx = nt};
	memcpy(rc_.grid, a->grid, sizeof rc_.grid);
	memcpy(rc_.block, a->block, sizeof rc_.block);
	struct op op;
	char spec[SPEC_MAX_BYTES];
	struct err be = {0};
	int rc = calib_rule_build(c->rules, nm->rule, &rc_, &op, spec, sizeof spec, &be);
	if (rc < 0) {
		snprintf(reason, sizeof reason, "%s", be.msg);
		return unmatched(c, a, reason, false);
	}
	int32_t spec_idx, sample;
	if ((rc = add_spec(c, spec, &op, &spec_idx)) < 0)
		return rc;
	if (rule->group && inner >= 0) {
		/* one sample per (group, innermost range instance, spec) */
		int64_t key = (int64_t)inner * 1048576 + (int64_t)(hash_str(rule->group) & 1023) * 1024 +
		              (spec_idx & 1023);
		int32_t got;
		if ((rc = imap_get_or_add(&c->groups, key, -1, &got)) < 0)
			return rc;
		if (got < 0 || c->m->samples[got].spec != spec_idx) {
			if ((rc = new_sample(c, spec_idx, nm->rule, &sample)) < 0)
				return rc;
			size_t j = ihash(key, c->groups.cap);
			while (c->groups.key[j] != key)
				j = (j + 1) & (c->groups.cap - 1);
			c->groups.val[j] = sample;
		} else {
			sample = got;
		}
	} else if ((rc = new_sample(c, spec_idx, nm->rule, &sample)) < 0) {
		return rc;
	}
	if ((rc = add_to_sample(c, sample, a)) < 0)
		return rc;
	c->m->matched_rules++;
	return 0;
}

/* An activity launched inside framework record `fr` (a range index): the record's op, one
 * sample per record instance. */
static int by_record(struct ctx *c, const struct act *a, int fr)
{
	const struct text *x = &c->texts[c->ranges[fr].text];
	if (x->fw != FW_OP)
		return unmatched(c, a, x->fw_why, x->fw == FW_SKIPPED);
	int rc;
	if (c->range_sample[fr] < 0 && (rc = new_sample(c, x->fw_spec, -1, &c->range_sample[fr])) < 0)
		return rc;
	if ((rc = add_to_sample(c, c->range_sample[fr], a)) < 0)
		return rc;
	if (c->out_acts)
		c->out_acts[a - c->acts].dtype_assumed = x->fw_assumed;
	c->m->matched_framework++;
	return 0;
}

/* Whether activity a is a communication kernel: the kernel classes decide (trace/analyze/kclass.h), as
 * they do for trace summary. */
static bool is_comm_act(struct ctx *c, const struct act *a)
{
	return trace_kclass_is_comm(c->classes, c->names[a->name].s);
}

struct in_range {
	int32_t act, range;
};

struct walk {
	struct ctx *c;
	struct in_range *pend;
	size_t n_pend;
	bool *has_comm;
};

/* One activity where it was launched (trace_attribute): the innermost open k3sim range holds it,
 * else the rules decide. */
static int place(void *ctx, const struct trace_point *p, const struct trace_span *const *open, size_t n_open)
{
	struct walk *w = ctx;
	struct ctx *c = w->c;
	const struct act *a = &c->acts[p->id];
	int k3 = -1;
	for (size_t j = n_open; j-- > 0 && k3 < 0;) {
		const struct text *t = &c->texts[c->ranges[open[j]->id].text];
		if (t->ref) /* a reference inside (or around) an op is still not the op */
			return unmatched(c, a, "in a reference range (k3sim ref): not a model op", true);
		if (t->k3)
			k3 = (int)open[j]->id;
	}
	if (k3 < 0) { /* the innermost framework record, else the rules */
		int fr = -1;
		for (size_t j = n_open; j-- > 0 && fr < 0;)
			if (c->texts[c->ranges[open[j]->id].text].fw != FW_NONE)
				fr = (int)open[j]->id;
		return fr >= 0 ? by_record(c, a, fr) : by_rule(c, a, open, n_open);
	}
	const struct text *x = &c->texts[c->ranges[k3].text];
	if (x->spec < 0)
		return unmatched(c, a, "in a k3sim range that is not a valid op (see bad ranges)", false);
	if (op_is_comm(c->m->specs[x->spec].op.kind) && is_comm_act(c, a))
		w->has_comm[k3] = true;
	w->pend[w->n_pend].act = (int32_t)p->id;
	w->pend[w->n_pend].range = (int32_t)k3;
	w->n_pend++;
	return 0;
}

static int sweep(struct ctx *c)
{
	struct calib_match *m = c->m;
	struct trace_point *pts = malloc((c->n_acts ? c->n_acts : 1) * sizeof *pts);
	struct trace_span *spans = malloc((c->n_ranges ? c->n_ranges : 1) * sizeof *spans);
	struct walk w = {.c = c};
	w.pend = malloc((c->n_acts ? c->n_acts : 1) * sizeof *w.pend);
	w.has_comm = calloc(c->n_ranges ? c->n_ranges : 1, sizeof *w.has_comm);
	c->range_sample = malloc((c->n_ranges ? c->n_ranges : 1) * sizeof *c->range_sample);
	int rc = 0;
	if (!pts || !spans || !w.pend || !w.has_comm || !c->range_sample) {
		rc = -ENOMEM;
		goto out;
	}
	if (c->o && c->o->keep_activities) {
		c->out_acts = calloc(c->n_acts ? c->n_acts : 1, sizeof *c->out_acts);
		if (!c->out_acts) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < c->n_acts; i++) {
			const struct act *a = &c->acts[i];
			struct calib_activity *o = &c->out_acts[i];
			const struct api *api = find_api(c, a->pid, a->corr);
			o->start_ns = a->start;
			o->end_ns = a->end;
			o->launched = api != NULL;
			o->launch_ns = api ? api->start : 0;
			o->launch_end_ns = api ? api->end : 0;
			o->tid = api ? api->tid : 0;
			o->spec = -1;
			o->kind = a->kind;
			o->device_id = a->device;
		}
		m->acts = c->out_acts;
		m->n_acts = c->n_acts;
	}
	for (size_t i = 0; i < c->n_ranges; i++) {
		c->range_sample[i] = -1;
		spans[i] = (struct trace_span){.key = c->ranges[i].tid, .s = c->ranges[i].start,
		                               .e = c->ranges[i].end, .id = (int64_t)i};
	}
	size_t n = 0;
	for (size_t i = 0; i < c->n_acts; i++) {
		const struct act *a = &c->acts[i];
		const struct api *api = find_api(c, a->pid, a->corr);
		if (!api) {
			if ((rc = unmatched(c, a, "no launching API call in the trace", false)) < 0)
				goto out;
			continue;
		}
		pts[n++] = (struct trace_point){.key = api->tid, .t = api->start, .id = (int64_t)i};
	}
	if ((rc = trace_attribute(pts, n, spans, c->n_ranges, place, &w)) < 0)
		goto out;
	for (size_t i = 0; i < w.n_pend; i++) {
		const struct act *a = &c->acts[w.pend[i].act];
		int32_t k3 = w.pend[i].range;
		if (w.has_comm[k3] && !is_comm_act(c, a)) {
			if ((rc = unmatched(c, a,
			                    "in a collective's k3sim range: not a collective kernel (the "
			                    "range's collective kernels time it)",
			                    true)) < 0)
				goto out;
			continue;
		}
		if (c->range_sample[k3] < 0 &&
		    (rc = new_sample(c, c->texts[c->ranges[k3].text].spec, -1, &c->range_sample[k3])) < 0)
			goto out;
		if ((rc = add_to_sample(c, c->range_sample[k3], a)) < 0)
			goto out;
		m->matched_nvtx++;
	}
	for (size_t i = 0; i < c->n_ranges; i++)
		if (c->texts[c->ranges[i].text].spec >= 0 && c->range_sample[i] < 0)
			m->empty_ranges++;
out:
	free(pts);
	free(spans);
	free(w.pend);
	free(w.has_comm);
	return rc;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct calib_sample *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int cmp_mark(const void *a, const void *b)
{
	const struct calib_mark *x = a, *y = b;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int cmp_unmatched(const void *a, const void *b)
{
	const struct calib_unmatched *x = a, *y = b;
	if (x->skipped != y->skipped)
		return x->skipped ? 1 : -1;
	if (x->gpu_ns != y->gpu_ns)
		return (x->gpu_ns < y->gpu_ns) - (x->gpu_ns > y->gpu_ns);
	return (x->count < y->count) - (x->count > y->count);
}

static void read_info(struct ctx *c)
{
	struct calib_trace_info *in = &c->m->info;
	sqlite3_stmt *st;
	if (trace_sql_has_table(c->db, "TARGET_INFO_GPU")) {
		enum { COL_name, COL_clockRate, COL_smCount, COL_totalMemory, COL_memoryBandwidth, COL_uuid, N_COLS };
		static const char *const cols[N_COLS] = {"name", "clockRate", "smCount", "totalMemory",
		                                         "memoryBandwidth", "uuid"};
		int idx[N_COLS];
		struct err ignored;
		if (trace_sql_select(c->db, c->path, "TARGET_INFO_GPU", cols, N_COLS, idx, NULL, &st, &ignored) == 0 &&
		    st) {
			if (sqlite3_step(st) == SQLITE_ROW) {
				const char *nm = trace_sql_text(st, idx[COL_name]);
				const char *uu = trace_sql_text(st, idx[COL_uuid]);
				snprintf(in->device, sizeof in->device, "%s", nm ? nm : "");
				snprintf(in->uuid, sizeof in->uuid, "%s", uu ? uu : "");
				in->sm_clock_hz = col_i64(st, idx[COL_clockRate], 0);
				in->sms = col_i64(st, idx[COL_smCount], 0);
				in->memory_bytes = col_i64(st, idx[COL_totalMemory], 0);
				in->memory_bw_bytes_per_s = col_i64(st, idx[COL_memoryBandwidth], 0);
			}
			sqlite3_finalize(st);
		}
	}
	if (is_table(c->db, "K3SIM_CAPTURE") &&
	    sqlite3_prepare_v2(c->db, "SELECT name, value FROM K3SIM_CAPTURE", -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			const char *k = (const char *)sqlite3_column_text(st, 0);
			const char *v = (const char *)sqlite3_column_text(st, 1);
			if (!k || !v)
				continue;
			if (strcmp(k, TRACE_CAPTURE_DRIVER_VERSION) == 0)
				snprintf(in->driver, sizeof in->driver, "%s", v);
			else if (strcmp(k, TRACE_CAPTURE_CUDA_DRIVER_VERSION) == 0)
				snprintf(in->cuda_driver, sizeof in->cuda_driver, "%s", v);
			else if (strcmp(k, TRACE_CAPTURE_CUDA_RUNTIME_VERSION) == 0)
				snprintf(in->cuda_runtime, sizeof in->cuda_runtime, "%s", v);
			else if (strcmp(k, TRACE_CAPTURE_HOST) == 0)
				snprintf(in->host, sizeof in->host, "%s", v);
			else if (strcmp(k, TRACE_CAPTURE_COMMAND_LINE) == 0)
				snprintf(in->command, sizeof in->command, "%s", v);
			else if (strcmp(k, TRACE_CAPTURE_SOURCE) == 0)
				snprintf(in->source, sizeof in->source, "%s", v);
			else if (strcmp(k, TRACE_CAPTURE_START_UTC_NS) == 0)
				in->start_utc_ns = strtoll(v, NULL, 10);
			else if (strcmp(k, "meta.regime") == 0)
				snprintf(in->regime, sizeof in->regime, "%s", v);
		}
		sqlite3_finalize(st);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* One SM clock reading of K3SIM_GPU_METRICS, with the board power read beside it (W; 0: none). */
struct clock_reading {
	int64_t device, t_ns;
	double hz, w;
};

/* The median of x[0, k) (sorted in place); 0 when k is 0. */
static double median_of(double *x, size_t k)
{
	if (!k)
		return 0;
	qsort(x, k, sizeof *x, cmp_double);
	return k % 2 ? x[k / 2] : 0.5 * (x[k / 2 - 1] + x[k / 2]);
}

/* The power of the reading nearest to the middle of [start_ns, end_ns] among r[lo, hi) with one
 * (a the first reading at or after start_ns); 0 when none has one. */
static double nearest_power(const struct clock_reading *r, size_t lo, size_t hi, size_t a, int64_t mid_ns)
{
	size_t before = a, after = a;
	while (before > lo && !(r[before - 1].w > 0))
		before--;
	while (after < hi && !(r[after].w > 0))
		after++;
	bool has_before = before > lo, has_after = after < hi;
	if (has_before && (!has_after || mid_ns - r[before - 1].t_ns <= r[after].t_ns - mid_ns))
		return r[before - 1].w;
	return has_after ? r[after].w : 0;
}

static int cmp_reading(const void *a, const void *b)
{
	const struct clock_reading *x = a, *y = b;
	if (x->device != y->device)
		return (x->device > y->device) - (x->device < y->device);
	return (x->t_ns > y->t_ns) - (x->t_ns < y->t_ns);
}

/* The SM clock around each sample (calib_sample.sm_clock_hz) from the capture's readings: those
 * of the sample's device (the only device with readings, where the sample's has none) inside its
 * span, their median; else the reading nearest to it. The board power (calib_sample.power_w)
 * likewise, from the readings with a power (captures before the powerW column: none). Bounded: the readings count against
 * max_rows. No table or no readings: nothing (clock_readings 0). */
static int sample_clocks(struct ctx *c)
{
	struct calib_match *m = c->m;
	if (!is_table(c->db, "K3SIM_GPU_METRICS"))
		return 0;
	sqlite3_stmt *st;
	const bool has_power = sqlite3_prepare_v2(c->db, "SELECT powerW FROM K3SIM_GPU_METRICS LIMIT 0", -1, &st,
						  NULL) == SQLITE_OK;
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(c->db,
	                       has_power ? "SELECT deviceId, timestamp, smClockMHz, powerW FROM K3SIM_GPU_METRICS"
	                                   " WHERE smClockMHz IS NOT NULL AND smClockMHz > 0 AND timestamp IS NOT NULL"
	                                 : "SELECT deviceId, timestamp, smClockMHz, 0 FROM K3SIM_GPU_METRICS"
	                                   " WHERE smClockMHz IS NOT NULL AND smClockMHz > 0 AND timestamp IS NOT NULL",
	                       -1, &st, NULL) != SQLITE_OK)
		return db_error(c, "K3SIM_GPU_METRICS");
	struct clock_reading *r = NULL;
	double *tmp = NULL, *tmp_w = NULL;
	size_t n = 0, cap = 0;
	int rc = 0, s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if ((rc = grow((void **)&r, &cap, n + 1, sizeof *r, c->max_rows)) < 0) {
			if (rc == -E2BIG)
				too_many(c, "K3SIM_GPU_METRICS");
			goto out;
		}
		r[n].device = sqlite3_column_type(st, 0) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 0);
		r[n].t_ns = sqlite3_column_int64(st, 1);
		r[n].hz = sqlite3_column_double(st, 2) * 1e6;
		r[n].w = sqlite3_column_type(st, 3) == SQLITE_NULL ? 0 : sqlite3_column_double(st, 3);
		if (!(r[n].w > 0) || !isfinite(r[n].w))
			r[n].w = 0;
		n++;
	}
	if (s != SQLITE_DONE) {
		rc = db_error(c, "K3SIM_GPU_METRICS");
		goto out;
	}
	m->clock_readings = (int64_t)n;
	if (n == 0)
		goto out;
	qsort(r, n, sizeof *r, cmp_reading);
	if (!(tmp = malloc(n * sizeof *tmp)) || !(tmp_w = malloc(n * sizeof *tmp_w))) {
		rc = -ENOMEM;
		goto out;
	}
	const bool one_device = r[0].device == r[n - 1].device;
	for (size_t i = 0; i < m->n_samples; i++) {
		struct calib_sample *x = &m->samples[i];
		if (x->activities == 0)
			continue;
		/* the device's readings r[lo, hi) */
		size_t lo = 0, hi = n;
		if (!one_device) {
			size_t a = 0, b = n;
			while (a < b) {
				size_t mid = a + (b - a) / 2;
				if (r[mid].device < (int64_t)x->device_id)
					a = mid + 1;
				else
					b = mid;
			}
			lo = a;
			for (b = n; a < b;) {
				size_t mid = a + (b - a) / 2;
				if (r[mid].device <= (int64_t)x->device_id)
					a = mid + 1;
				else
					b = mid;
			}
			hi = a;
			if (lo == hi)
				continue; /* readings of other devices only */
		}
		/* the first reading at or after the start */
		size_t a = lo, b = hi;
		while (a < b) {
			size_t mid = a + (b - a) / 2;
			if (r[mid].t_ns < x->start_ns)
				a = mid + 1;
			else
				b = mid;
		}
		size_t k = 0, kw = 0;
		for (size_t j = a; j < hi && r[j].t_ns <= x->end_ns; j++) {
			tmp[k++] = r[j].hz;
			if (r[j].w > 0)
				tmp_w[kw++] = r[j].w;
		}
		int64_t mid_ns = x->start_ns + (x->end_ns - x->start_ns) / 2;
		x->power_readings = (int32_t)kw;
		x->power_w = kw ? median_of(tmp_w, kw) : nearest_power(r, lo, hi, a, mid_ns);
		if (k) {
			x->sm_clock_hz = median_of(tmp, k);
		} else {
			/* none inside: the nearer of the readings either side */
			if (a == lo)
				x->sm_clock_hz = r[lo].hz;
			else if (a == hi)
				x->sm_clock_hz = r[hi - 1].hz;
			else
				x->sm_clock_hz =
				    mid_ns - r[a - 1].t_ns <= r[a].t_ns - mid_ns ? r[a - 1].hz : r[a].hz;
		}
	}
out:
	sqlite3_finalize(st);
	free(r);
	free(tmp);
	free(tmp_w);
	return rc;
}

static int open_db(struct ctx *c)
{
	int rc = trace_sql_open(c->path, &c->db, c->e);
	if (rc == -EINVAL) {
		char why[sizeof c->e->msg];
		snprintf(why, sizeof why, "%s", c->e->msg);
		err_set(c->e, c->path, 0, 0, "not a trace database (%s; import traces with 'k3sim trace import')",
		        why);
	}
	if (rc < 0)
		return rc;
	if (!trace_sql_has_table(c->db, "CUPTI_ACTIVITY_KIND_KERNEL") &&
	    !trace_sql_has_table(c->db, "CUPTI_ACTIVITY_KIND_MEMCPY")) {
		err_set(c->e, c->path, 0, 0,
		        "not a trace database: no CUPTI_ACTIVITY_KIND_KERNEL or _MEMCPY table "
		        "(expected a k3sim capture or import, or an nsys SQLite export)");
		return -EINVAL;
	}
	return 0;
}

int calib_match_db(struct calib_match *out, const char *path, const struct calib_match_opts *o, struct err *e)
{
	static const char *const copy_names[16] = {
	    "[CUDA memcpy]",
	    "[CUDA memcpy Host-to-Device]",
	    "[CUDA memcpy Device-to-Host]",
	    "[CUDA memcpy Host-to-Array]",
	    "[CUDA memcpy Array-to-Host]",
	    "[CUDA memcpy Array-to-Array]",
	    "[CUDA memcpy Array-to-Device]",
	    "[CUDA memcpy Device-to-Array]",
	    "[CUDA memcpy Device-to-Device]",
	    "[CUDA memcpy Host-to-Host]",
	    "[CUDA memcpy Peer-to-Peer]",
	    "[CUDA memcpy]",
	    "[CUDA memcpy]",
	    "[CUDA memcpy]",
	    "[CUDA memcpy]",
	    "[CUDA memcpy]",
	};
	struct calib_match *m = calloc(1, sizeof *m);
	struct ctx c = {.path = path, .e = e, .m = m, .rules = o ? o->rules : NULL, .o = o};
	int rc = 0;
	if (!m) {
		err_set(e, path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	arena_init(&m->arena, ARENA_BYTES);
	c.max_rows = (size_t)(o && o->max_rows > 0 ? o->max_rows : CALIB_MATCH_MAX_ROWS);
	if (c.rules) {
		c.classes = &c.rules->classes;
	} else {
		if ((rc = trace_kclass_load(&c.own_classes, "default", e)) < 0)
			goto out;
		c.classes = &c.own_classes;
	}
	if ((rc = open_db(&c)) < 0 || (rc = load_strings(&c)) < 0)
		goto out;
	/* names[0..n_ids) are the StringIds entries; memcpy and memset names follow */
	if ((rc = grow((void **)&c.names, &c.cap_names, c.n_ids + 17, sizeof *c.names, c.max_rows + 64)) < 0)
		goto out;
	for (size_t i = 0; i < c.n_ids; i++) {
		c.names[i].s = c.ids[i].s;
		c.names[i].rule = -2;
	}
	c.n_names = c.n_ids;
	for (int i = 0; i < 16; i++)
		if ((rc = add_name(&c, copy_names[i], &c.memcpy_names[i])) < 0)
			goto out;
	if ((rc = add_name(&c, "[CUDA memset]", &c.memset_name)) < 0 ||
	    (rc = load_acts(&c, ACT_KERNEL)) < 0 || (rc = load_acts(&c, ACT_MEMCPY)) < 0 ||
	    (rc = load_acts(&c, ACT_MEMSET)) < 0)
		goto out;
	if (trace_sql_has_table(c.db, "CUPTI_ACTIVITY_KIND_RUNTIME") &&
	    (rc = load_apis_from(&c, "CUPTI_ACTIVITY_KIND_RUNTIME", false)) < 0)
		goto out;
	if (is_table(c.db, "CUPTI_ACTIVITY_KIND_DRIVER") &&
	    (rc = load_apis_from(&c, "CUPTI_ACTIVITY_KIND_DRIVER", true)) < 0)
		goto out;
	if (c.n_apis)
		qsort(c.apis, c.n_apis, sizeof *c.apis, cmp_api);
	if ((rc = load_ranges(&c)) < 0 || (rc = sweep(&c)) < 0)
		goto out;
	busy_time(&c);
	if (m->n_samples) /* qsort takes no NULL array, even empty */
		qsort(m->samples, m->n_samples, sizeof *m->samples, cmp_sample);
	if (m->n_unmatched)
		qsort(m->unmatched, m->n_unmatched, sizeof *m->unmatched, cmp_unmatched);
	if (m->n_marks)
		qsort(m->marks, m->n_marks, sizeof *m->marks, cmp_mark);
	if ((rc = sample_clocks(&c)) < 0)
		goto out;
	read_info(&c);
out:
	if (rc == -ENOMEM)
		err_set(e, path, 0, 0, "out of memory");
	else if (rc == -E2BIG && e && !e->msg[0])
		err_set(e, path, 0, 0, "too many rows");
	if (c.db)
		sqlite3_close(c.db);
	free(c.ids);
	free(c.names);
	free(c.acts);
	free(c.apis);
	free(c.ivs);
	free(c.ranges);
	free(c.texts);
	free(c.range_sample);
	smap_free(&c.text_map);
	smap_free(&c.spec_map);
	smap_free(&c.reason_map);
	imap_free(&c.groups);
	trace_kclass_release(&c.own_classes);
	if (rc < 0) {
		calib_match_release(m);
		free(m);
		return rc;
	}
	*out = *m;
	free(m);
	return 0;
}

void calib_match_release(struct calib_match *m)
{
	free(m->specs);
	free(m->samples);
	free(m->unmatched);
	free(m->bad);
	free(m->acts);
	free(m->marks);
	arena_release(&m->arena);
	memset(m, 0, sizeof *m);
}
