#include "trace/analyze/analyze.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/analyze/kclass.h"
#include "trace/db/sqlread.h"
#include "trace/db/tracedb.h"

#define DEFAULT_MAX_ROWS ((int64_t)64 * 1024 * 1024)
enum { DEFAULT_TOP_GAPS = 10, MAX_DEVICES = 4096 };

/* ---- saturating time arithmetic ----
 * Databases come from anywhere: a row may hold INT64_MIN..INT64_MAX. Differences and sums of
 * times saturate at the int64 range instead of overflowing. */

static inline int64_t sub_sat(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* A duration: end - start, 0 for a row that ends before it starts (rows from anywhere). */
static inline int64_t dur_sat(int64_t start, int64_t end)
{
	return end <= start ? 0 : sub_sat(end, start);
}

/* ---- small containers ---- */

/* Growable array with a hard row cap. */
struct vec {
	void *p;
	size_t n, cap, elem;
	int64_t max;
};

static void *vec_push(struct vec *v)
{
	if (v->n == v->cap) {
		if ((int64_t)v->n >= v->max)
			return NULL;
		size_t cap = v->cap ? v->cap * 2 : 1024;
		if ((int64_t)cap > v->max)
			cap = (size_t)v->max;
		void *q = realloc(v->p, cap * v->elem);
		if (!q)
			return NULL;
		v->p = q;
		v->cap = cap;
	}
	return (char *)v->p + v->n++ * v->elem;
}

/* Room for n more rows at once (a hint: never past the cap; failure is left to vec_push). */
static void vec_reserve(struct vec *v, int64_t n)
{
	if (n <= 0)
		return;
	if (n > v->max)
		n = v->max;
	size_t want = v->n + (size_t)n;
	if (want <= v->cap || (int64_t)want > v->max)
		return;
	void *q = realloc(v->p, want * v->elem);
	if (!q)
		return;
	v->p = q;
	v->cap = want;
}

/* Open-addressing map from a pair of 64-bit keys to a dense index; one slot is one cache line
 * fetch. */
struct map2_slot {
	uint64_t a, b;
	int32_t val;        /* -1: empty */
};

struct map2 {
	struct map2_slot *slot;
	size_t cap, n;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static int map2_init(struct map2 *m, size_t expect)
{
	size_t cap = 64;
	while (cap < expect * 2)
		cap *= 2;
	m->slot = malloc(cap * sizeof *m->slot);
	if (!m->slot)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		m->slot[i].val = -1;
	m->cap = cap;
	m->n = 0;
	return 0;
}

static void map2_release(struct map2 *m)
{
	free(m->slot);
	memset(m, 0, sizeof *m);
}

static size_t map2_home(const struct map2 *m, uint64_t a, uint64_t b)
{
	return mix64(a * 0x9e3779b97f4a7c15ull + b) & (m->cap - 1);
}

static int32_t map2_get(const struct map2 *m, uint64_t a, uint64_t b)
{
	if (!m->cap)
		return -1;
	size_t mask = m->cap - 1;
	for (size_t i = map2_home(m, a, b);; i = (i + 1) & mask) {
		const struct map2_slot *s = &m->slot[i];
		if (s->val < 0)
			return -1;
		if (s->a == a && s->b == b)
			return s->val;
	}
}

static int map2_grow(struct map2 *m)
{
	struct map2 n;
	if (map2_init(&n, m->cap))
		return -ENOMEM;
	size_t mask = n.cap - 1;
	for (size_t i = 0; i < m->cap; i++) {
		if (m->slot[i].val < 0)
			continue;
		size_t j = map2_home(&n, m->slot[i].a, m->slot[i].b);
		while (n.slot[j].val >= 0)
			j = (j + 1) & mask;
		n.slot[j] = m->slot[i];
	}
	n.n = m->n;
	map2_release(m);
	*m = n;
	return 0;
}

/* Set (a, b) -> v unless present; *out gets the stored value. */
static int map2_put(struct map2 *m, uint64_t a, uint64_t b, int32_t v, int32_t *out)
{
	if ((m->n + 1) * 2 > m->cap && map2_grow(m))
		return -ENOMEM;
	size_t mask = m->cap - 1;
	size_t i = map2_home(m, a, b);
	for (; m->slot[i].val >= 0; i = (i + 1) & mask) {
		if (m->slot[i].a == a && m->slot[i].b == b) {
			*out = m->slot[i].val;
			return 0;
		}
	}
	m->slot[i] = (struct map2_slot){a, b, v};
	m->n++;
	*out = v;
	return 0;
}

/* Set (a, b) -> v, replacing a present value. */
static int map2_set(struct map2 *m, uint64_t a, uint64_t b, int32_t v)
{
	int32_t got;
	if (map2_put(m, a, b, v, &got))
		return -ENOMEM;
	if (got == v)
		return 0;
	size_t mask = m->cap - 1;
	for (size_t i = map2_home(m, a, b);; i = (i + 1) & mask)
		if (m->slot[i].a == a && m->slot[i].b == b) {
			m->slot[i].val = v;
			return 0;
		}
}

enum { RADIX = 65536 };

/* Sort int64 values: insertion sort when short, else LSD radix sort on 16-bit digits (passes whose
 * digit is the same everywhere are skipped). tmp holds n values, count RADIX (may be NULL when
 * n < 64). */
static void sort_i64(int64_t *v, size_t n, int64_t *tmp, size_t *count)
{
	if (n < 64) {
		for (size_t i = 1; i < n; i++) {
			int64_t x = v[i];
			size_t j = i;
			for (; j > 0 && v[j - 1] > x; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	int64_t *src = v, *dst = tmp;
	for (int pass = 0; pass < 4; pass++) {
		int shift = pass * 16;
		memset(count, 0, RADIX * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[((uint64_t)src[i] ^ 0x8000000000000000ull) >> shift & 0xffff]++;
		size_t first = ((uint64_t)src[0] ^ 0x8000000000000000ull) >> shift & 0xffff;
		if (count[first] == n)
			continue;
		size_t sum = 0;
		for (size_t d = 0; d < RADIX; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[((uint64_t)src[i] ^ 0x8000000000000000ull) >> shift & 0xffff]++] = src[i];
		int64_t *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof *v);
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	return mix64(h);
}

/* ---- loaded rows ---- */

struct krow {
	int64_t start, end, gpid;
	uint32_t dev, stream, corr;
	int32_t name;       /* dense name index */
};

struct xrow {           /* memcpy / memset */
	int64_t start, end, gpid, bytes;
	uint32_t dev, stream;
};

struct arow {           /* API call with a correlation id */
	int64_t start, end, gtid;
	uint32_t corr;
	uint8_t driver;     /* eventClass 1 */
};

/* API calls of one process by correlation id: CUPTI numbers them densely per process, so a
 * plain array indexed by (id - lo) usually works; sparse processes use the hash map. */
struct api_pid {
	int64_t pid;
	uint32_t lo, hi;
	int64_t n;
	int32_t *dense;     /* [id - lo] -> arow index, -1 none; NULL: in ctx.api */
};

struct nrow {           /* NVTX range */
	int64_t start, end, gtid;
	int32_t name;
};

struct iv {             /* an interval on a device, for the sweeps */
	int64_t s, e;
	int32_t stream;     /* dense stream index */
	uint8_t comm;       /* 0 compute kernel, 1 NCCL kernel, 2 copy/set */
};

struct ctx {
	sqlite3 *sql;
	const struct trace_kclass_rules *classes; /* which kernels are communication */
	const char *path;
	const struct trace_summary_opts *o;
	int64_t max_rows;
	struct trace_summary *s;
	struct vec k, x, a, n;   /* krow, xrow (memcpy then memset), arow, nrow */
	size_t n_memcpy;
	struct map2 name_ids;    /* StringIds id -> dense name index */
	int64_t *name_src;       /* dense index -> StringIds id */
	int64_t *name_full;      /* dense index -> a demangled name's id (classes need the full name
				  * when kernels are grouped by short name); -1 unknown */
	size_t n_names, cap_names;
	struct map2 api;         /* (pid, correlationId) -> arow index, sparse processes */
	struct api_pid *apids;
	size_t n_apids, cap_apids, last_apid;
	struct map2 streams;     /* (gpid, dev << 32 | stream) -> stream index */
	struct vec stream_keys;  /* struct trace_stream_sum */
	uint32_t devs[MAX_DEVICES];
	size_t n_devs;
};

/* Rows a table probably has: max(rowid) is a b-tree descent, not a scan (0 if unknown). */
static int64_t row_hint(struct ctx *c, const char *table)
{
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT max(rowid) FROM \"%s\"", table);
	sqlite3_stmt *st;
	int64_t n = 0;
	if (sqlite3_prepare_v2(c->sql, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static int64_t col0(sqlite3_stmt *st, int idx)
{
	return idx >= 0 ? sqlite3_column_int64(st, idx) : 0;
}

static int too_many(struct ctx *c, const char *table, struct err *e)
{
	err_set(e, c->path, 0, 0, "%s: more than %lld rows (limit)", table, (long long)c->max_rows);
	return -E2BIG;
}

static int oom(struct ctx *c, struct err *e)
{
	err_set(e, c->path, 0, 0, "out of memory");
	return -ENOMEM;
}

static int name_index(struct ctx *c, int64_t id, int64_t full_id, int32_t *out, struct err *e)
{
	int32_t idx;
	if (map2_put(&c->name_ids, (uint64_t)id, 0, (int32_t)c->n_names, &idx))
		return oom(c, e);
	if (idx == (int32_t)c->n_names) {
		if (c->n_names == c->cap_names) {
			size_t cap = c->cap_names ? c->cap_names * 2 : 256;
			int64_t *p = realloc(c->name_src, cap * sizeof *p);
			if (!p)
				return oom(c, e);
			c->name_src = p;
			p = realloc(c->name_full, cap * sizeof *p);
			if (!p)
				return oom(c, e);
			c->name_full = p;
			c->cap_names = cap;
		}
		c->name_full[c->n_names] = full_id;
		c->name_src[c->n_names++] = id;
	}
	*out = idx;
	return 0;
}

static int load_kernels(struct ctx *c, struct err *e)
{
	const char *names[] = {"start", "end", "deviceId", "streamId", "globalPid", "correlationId",
			       c->o->short_names ? "shortName" : "demangledName",
			       c->o->short_names ? "demangledName" : "shortName", "name"};
	int idx[9];
	sqlite3_stmt *st;
	const char *table = "CUPTI_ACTIVITY_KIND_KERNEL";
	int rc = trace_sql_select(c->sql, c->path, table, names, 9, idx, NULL, &st, e);
	if (rc || !st)
		return rc;
	if (idx[0] < 0 || idx[1] < 0) {
		sqlite3_finalize(st);
		err_set(e, c->path, 0, 0, "%s has no start/end columns", table);
		return -EINVAL;
	}
	int name_col = idx[6] >= 0 ? idx[6] : idx[7] >= 0 ? idx[7] : idx[8];
	vec_reserve(&c->k, row_hint(c, table));
	int r;
	int64_t last_id = INT64_MIN;
	int32_t last_idx = -1;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct krow *k = vec_push(&c->k);
		if (!k) {
			rc = (int64_t)c->k.n >= c->max_rows ? too_many(c, table, e) : oom(c, e);
			break;
		}
		k->start = sqlite3_column_int64(st, idx[0]);
		k->end = sqlite3_column_int64(st, idx[1]);
		k->dev = (uint32_t)col0(st, idx[2]);
		k->stream = (uint32_t)col0(st, idx[3]);
		k->gpid = col0(st, idx[4]);
		k->corr = (uint32_t)col0(st, idx[5]);
		int64_t id = trace_sql_i64(st, name_col, -1);
		if (id != last_id) {
			int64_t full = c->o->short_names ? trace_sql_i64(st, idx[7], -1) : id;
			rc = name_index(c, id, full, &last_idx, e);
			if (rc)
				break;
			last_id = id;
		}
		k->name = last_idx;
	}
	if (!rc && r != SQLITE_DONE)
		rc = trace_sql_error(c->sql, c->path, table, e);
	sqlite3_finalize(st);
	return rc;
}

static int load_copies(struct ctx *c, const char *table, struct err *e)
{
	static const char *const names[] = {"start", "end", "deviceId", "streamId", "globalPid",
					    "bytes"};
	int idx[6];
	sqlite3_stmt *st;
	int rc = trace_sql_select(c->sql, c->path, table, names, 6, idx, NULL, &st, e);
	if (rc || !st)
		return rc;
	if (idx[0] < 0 || idx[1] < 0) {
		sqlite3_finalize(st);
		return 0;
	}
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct xrow *x = vec_push(&c->x);
		if (!x) {
			rc = (int64_t)c->x.n >= c->max_rows ? too_many(c, table, e) : oom(c, e);
			break;
		}
		x->start = sqlite3_column_int64(st, idx[0]);
		x->end = sqlite3_column_int64(st, idx[1]);
		x->dev = (uint32_t)col0(st, idx[2]);
		x->stream = (uint32_t)col0(st, idx[3]);
		x->gpid = col0(st, idx[4]);
		x->bytes = col0(st, idx[5]);
	}
	if (!rc && r != SQLITE_DONE)
		rc = trace_sql_error(c->sql, c->path, table, e);
	sqlite3_finalize(st);
	return rc;
}

static int load_api(struct ctx *c, const char *table, bool driver_table, struct err *e)
{
	static const char *const names[] = {"start", "end", "globalTid", "correlationId",
					    "eventClass"};
	int idx[5];
	sqlite3_stmt *st;
	int rc = trace_sql_select(c->sql, c->path, table, names, 5, idx, NULL, &st, e);
	if (rc || !st)
		return rc;
	if (idx[0] < 0 || idx[1] < 0 || idx[3] < 0) {
		sqlite3_finalize(st);
		return 0;
	}
	vec_reserve(&c->a, row_hint(c, table));
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t corr = sqlite3_column_int64(st, idx[3]);
		int64_t cls = idx[4] >= 0 ? sqlite3_column_int64(st, idx[4]) : 0;
		/* nsys keeps other rows in this table too (eventClass 67: a runtime call's backtrace
		 * entry, a duplicate of the call); the import keeps runtime and driver calls only, and
		 * so does the count, so a raw export and its import agree */
		if (driver_table)
			cls = TRACE_API_DRIVER;
		if (cls != TRACE_API_RUNTIME && cls != TRACE_API_DRIVER)
			continue;
		c->s->api_calls++;
		if (corr <= 0 || corr > UINT32_MAX)
			continue;
		struct arow *a = vec_push(&c->a);
		if (!a) {
			rc = (int64_t)c->a.n >= c->max_rows ? too_many(c, table, e) : oom(c, e);
			break;
		}
		a->start = sqlite3_column_int64(st, idx[0]);
		a->end = sqlite3_column_int64(st, idx[1]);
		a->gtid = idx[2] >= 0 ? sqlite3_column_int64(st, idx[2]) : 0;
		a->corr = (uint32_t)corr;
		a->driver = cls == TRACE_API_DRIVER;
	}
	if (!rc && r != SQLITE_DONE)
		rc = trace_sql_error(c->sql, c->path, table, e);
	sqlite3_finalize(st);
	return rc;
}

static struct api_pid *api_pid_of(struct ctx *c, int64_t pid, bool add)
{
	if (c->last_apid < c->n_apids && c->apids[c->last_apid].pid == pid)
		return &c->apids[c->last_apid];
	for (size_t i = 0; i < c->n_apids; i++)
		if (c->apids[i].pid == pid) {
			c->last_apid = i;
			return &c->apids[i];
		}
	if (!add)
		return NULL;
	if (c->n_apids == c->cap_apids) {
		size_t cap = c->cap_apids ? c->cap_apids * 2 : 16;
		struct api_pid *p = realloc(c->apids, cap * sizeof *p);
		if (!p)
			return NULL;
		c->apids = p;
		c->cap_apids = cap;
	}
	struct api_pid *ap = &c->apids[c->n_apids];
	*ap = (struct api_pid){.pid = pid, .lo = UINT32_MAX, .hi = 0};
	c->last_apid = c->n_apids++;
	return ap;
}

/* Whether call b should launch a kernel rather than call a of the same process and id: the
 * runtime call the program made over a driver call made under it, else the first loaded. */
static bool api_better(const struct arow *a, const struct arow *b)
{
	return trace_launch_call_better(a->driver ? TRACE_API_DRIVER : TRACE_API_RUNTIME,
					b->driver ? TRACE_API_DRIVER : TRACE_API_RUNTIME);
}

/* Index the loaded API calls by (process, correlation id), keeping per id the call api_better
 * picks. */
static int index_api(struct ctx *c, struct err *e)
{
	const struct arow *a = c->a.p;
	for (size_t i = 0; i < c->a.n; i++) {
		struct api_pid *ap = api_pid_of(c, trace_global_to_pid(a[i].gtid), true);
		if (!ap)
			return oom(c, e);
		if (a[i].corr < ap->lo)
			ap->lo = a[i].corr;
		if (a[i].corr > ap->hi)
			ap->hi = a[i].corr;
		ap->n++;
	}
	for (size_t i = 0; i < c->n_apids; i++) {
		struct api_pid *ap = &c->apids[i];
		uint64_t span = (uint64_t)ap->hi - ap->lo + 1;
		if (span > 4 * (uint64_t)ap->n + 4096)
			continue;
		ap->dense = malloc(span * sizeof *ap->dense);
		if (!ap->dense)
			return oom(c, e);
		memset(ap->dense, 0xff, span * sizeof *ap->dense);
	}
	for (size_t i = 0; i < c->a.n; i++) {
		struct api_pid *ap = api_pid_of(c, trace_global_to_pid(a[i].gtid), false);
		if (ap->dense) {
			int32_t *slot = &ap->dense[a[i].corr - ap->lo];
			if (*slot < 0 || api_better(&a[*slot], &a[i]))
				*slot = (int32_t)i;
		} else {
			int32_t got;
			if (map2_put(&c->api, (uint64_t)ap->pid, a[i].corr, (int32_t)i, &got))
				return oom(c, e);
			if (got != (int32_t)i && api_better(&a[got], &a[i]) &&
			    map2_set(&c->api, (uint64_t)ap->pid, a[i].corr, (int32_t)i))
				return oom(c, e);
		}
	}
	return 0;
}

static int32_t api_lookup(struct ctx *c, int64_t pid, uint32_t corr)
{
	struct api_pid *ap = api_pid_of(c, pid, false);
	if (!ap)
		return -1;
	if (ap->dense)
		return corr >= ap->lo && corr <= ap->hi ? ap->dense[corr - ap->lo] : -1;
	return map2_get(&c->api, (uint64_t)pid, corr);
}

/* NVTX names are interned in the summary's arena via a string map. */
struct strmap {
	struct map2 m;          /* (hash, 0) -> first index with that hash; chains via next[] */
	const char **names;
	int32_t *next;
	size_t n, cap;
};

static int strmap_get(struct strmap *sm, struct arena *a, const char *s, int32_t *out)
{
	uint64_t h = hash_str(s);
	int32_t head = map2_get(&sm->m, h, 0);
	for (int32_t i = head; i >= 0; i = sm->next[i])
		if (strcmp(sm->names[i], s) == 0) {
			*out = i;
			return 0;
		}
	if (sm->n == sm->cap) {
		size_t cap = sm->cap ? sm->cap * 2 : 64;
		const char **nn = realloc(sm->names, cap * sizeof *nn);
		if (!nn)
			return -ENOMEM;
		sm->names = nn;
		int32_t *nx = realloc(sm->next, cap * sizeof *nx);
		if (!nx)
			return -ENOMEM;
		sm->next = nx;
		sm->cap = cap;
	}
	char *copy = arena_strndup(a, s, strlen(s));
	if (!copy)
		return -ENOMEM;
	int32_t idx = (int32_t)sm->n++;
	sm->names[idx] = copy;
	sm->next[idx] = head;
	/* the new entry becomes the chain's head */
	if (head < 0) {
		int32_t got;
		if (map2_put(&sm->m, h, 0, idx, &got))
			return -ENOMEM;
	} else {
		size_t mask = sm->m.cap - 1;
		for (size_t i = map2_home(&sm->m, h, 0);; i = (i + 1) & mask)
			if (sm->m.slot[i].a == h && sm->m.slot[i].b == 0 && sm->m.slot[i].val >= 0) {
				sm->m.slot[i].val = idx;
				break;
			}
	}
	*out = idx;
	return 0;
}

static void strmap_release(struct strmap *sm)
{
	map2_release(&sm->m);
	free(sm->names);
	free(sm->next);
}

static int load_nvtx(struct ctx *c, struct strmap *sm, struct err *e)
{
	static const char *const names[] = {"start", "end", "eventType", "globalTid", "text",
					    "textId", "domainId"};
	int idx[7];
	sqlite3_stmt *st;
	const char *table = "NVTX_EVENTS";
	int rc = trace_sql_select(c->sql, c->path, table, names, 7, idx, NULL, &st, e);
	if (rc || !st)
		return rc;
	if (idx[0] < 0 || idx[1] < 0) {
		sqlite3_finalize(st);
		return 0;
	}
	sqlite3_stmt *str = NULL;
	if (idx[5] >= 0 && trace_sql_has_table(c->sql, "StringIds") &&
	    sqlite3_prepare_v2(c->sql, "SELECT value FROM StringIds WHERE id = ?1", -1, &str,
			       NULL) != SQLITE_OK) {
		rc = trace_sql_error(c->sql, c->path, "StringIds", e);
		sqlite3_finalize(st);
		return rc;
	}
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t type = trace_sql_i64(st, idx[2], TRACE_NVTX_PUSH_POP);
		if ((type != TRACE_NVTX_PUSH_POP && type != TRACE_NVTX_START_END) ||
		    trace_sql_i64(st, idx[6], 0) == TRACE_NVTX_DOMAIN_GPU ||
		    sqlite3_column_type(st, idx[1]) == SQLITE_NULL)
			continue;
		const char *text = trace_sql_text(st, idx[4]);
		if (!text && str) {
			sqlite3_bind_int64(str, 1, trace_sql_i64(st, idx[5], -1));
			if (sqlite3_step(str) == SQLITE_ROW)
				text = (const char *)sqlite3_column_text(str, 0);
		}
		int32_t name;
		rc = strmap_get(sm, &c->s->arena, text ? text : "(unnamed)", &name);
		if (str)
			sqlite3_reset(str);
		if (rc) {
			rc = oom(c, e);
			break;
		}
		struct nrow *n = vec_push(&c->n);
		if (!n) {
			rc = (int64_t)c->n.n >= c->max_rows ? too_many(c, table, e) : oom(c, e);
			break;
		}
		n->start = sqlite3_column_int64(st, idx[0]);
		n->end = sqlite3_column_int64(st, idx[1]);
		n->gtid = trace_sql_i64(st, idx[3], 0);
		n->name = name;
	}
	if (!rc && r != SQLITE_DONE)
		rc = trace_sql_error(c->sql, c->path, table, e);
	sqlite3_finalize(str);
	sqlite3_finalize(st);
	return rc;
}

/* ---- kernel table ---- */

static int cmp_kern(const void *a, const void *b)
{
	const struct trace_kernel_sum *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

static double median_sorted(const int64_t *v, size_t n)
{
	if (n == 0)
		return 0;
	if (n % 2)
		return (double)v[n / 2];
	return ((double)v[n / 2 - 1] + (double)v[n / 2]) / 2.0;
}

static int kernel_table(struct ctx *c, struct err *e)
{
	struct trace_summary *s = c->s;
	size_t nk = c->k.n, nn = c->n_names;
	const struct krow *k = c->k.p;
	int rc = 0;
	int64_t *dur = NULL, *tmp = NULL;
	size_t *off = NULL, *count = NULL;
	sqlite3_stmt *str = NULL;
	s->kern = arena_alloc(&s->arena, (nn ? nn : 1) * sizeof *s->kern);
	dur = malloc((nk ? nk : 1) * sizeof *dur);
	tmp = malloc((nk ? nk : 1) * sizeof *tmp);
	/* the radix sort's counters only when a sort is long enough to use them */
	count = nk >= 64 ? malloc(RADIX * sizeof *count) : NULL;
	off = calloc(nn + 1, sizeof *off);
	if (!s->kern || !dur || !tmp || (nk >= 64 && !count) || !off) {
		rc = oom(c, e);
		goto out;
	}
	/* counting sort of durations by name */
	for (size_t i = 0; i < nk; i++)
		off[k[i].name + 1]++;
	for (size_t i = 0; i < nn; i++)
		off[i + 1] += off[i];
	for (size_t i = 0; i < nk; i++)
		dur[off[k[i].name]++] = dur_sat(k[i].start, k[i].end);
	for (size_t i = nn; i > 0; i--)
		off[i] = off[i - 1];
	off[0] = 0;
	if (trace_sql_has_table(c->sql, "StringIds") &&
	    sqlite3_prepare_v2(c->sql, "SELECT value FROM StringIds WHERE id = ?1", -1, &str,
			       NULL) != SQLITE_OK) {
		rc = trace_sql_error(c->sql, c->path, "StringIds", e);
		goto out;
	}
	for (size_t g = 0; g < nn; g++) {
		int64_t *d = dur + off[g];
		size_t n = off[g + 1] - off[g];
		struct trace_kernel_sum *ks = &s->kern[g];
		sort_i64(d, n, tmp, count);
		int64_t total = 0;
		for (size_t i = 0; i < n; i++)
			total = add_sat(total, d[i]);
		double avg = n ? (double)total / (double)n : 0, ss = 0;
		for (size_t i = 0; i < n; i++)
			ss += ((double)d[i] - avg) * ((double)d[i] - avg);
		ks->instances = (int64_t)n;
		ks->total_ns = total;
		ks->min_ns = n ? d[0] : 0;
		ks->max_ns = n ? d[n - 1] : 0;
		ks->avg_ns = avg;
		ks->med_ns = median_sorted(d, n);
		ks->stddev_ns = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
		s->kernel_ns = add_sat(s->kernel_ns, total);
		const char *name = NULL;
		if (str) {
			sqlite3_bind_int64(str, 1, c->name_src[g]);
			if (sqlite3_step(str) == SQLITE_ROW)
				name = (const char *)sqlite3_column_text(str, 0);
		}
		char unknown[64];
		if (!name) {
			snprintf(unknown, sizeof unknown, "(unknown kernel %lld)",
				 (long long)c->name_src[g]);
			name = unknown;
		}
		ks->name = arena_strndup(&s->arena, name, strlen(name));
		if (str)
			sqlite3_reset(str);
		if (!ks->name) {
			rc = oom(c, e);
			goto out;
		}
		/* classes match the demangled name (a short name drops the namespaces) */
		const char *full = ks->name;
		if (str && c->name_full[g] >= 0 && c->name_full[g] != c->name_src[g]) {
			sqlite3_bind_int64(str, 1, c->name_full[g]);
			if (sqlite3_step(str) == SQLITE_ROW && sqlite3_column_text(str, 0))
				full = (const char *)sqlite3_column_text(str, 0);
		}
		int ci = trace_kclass_find(c->classes, full);
		if (str)
			sqlite3_reset(str);
		if (ci >= 0 && c->classes->rule[ci].cls == TRACE_KCLASS_COMM) {
			const struct trace_kclass_rule *rule = &c->classes->rule[ci];
			ks->comm = true;
			ks->collective = arena_strndup(&s->arena, rule->collective,
						       strlen(rule->collective));
			ks->library = arena_strndup(&s->arena, rule->library, strlen(rule->library));
			if (!ks->collective || !ks->library) {
				rc = oom(c, e);
				goto out;
			}
		}
	}
	for (size_t g = 0; g < nn; g++)
		s->kern[g].time_pct = s->kernel_ns ? 100.0 * (double)s->kern[g].total_ns /
							     (double)s->kernel_ns
						   : 0;
	s->n_kern = nn;
out:
	sqlite3_finalize(str);
	free(tmp);
	free(count);
	free(dur);
	free(off);
	return rc;
}

/* ---- devices, streams, gaps, overlap ---- */

static int dev_index(struct ctx *c, uint32_t dev, struct err *e)
{
	for (size_t i = 0; i < c->n_devs; i++)
		if (c->devs[i] == dev)
			return (int)i;
	if (c->n_devs == MAX_DEVICES) {
		err_set(e, c->path, 0, 0, "more than %d devices", MAX_DEVICES);
		return -E2BIG;
	}
	c->devs[c->n_devs] = dev;
	return (int)c->n_devs++;
}

static int stream_index(struct ctx *c, int64_t gpid, uint32_t dev, uint32_t stream, int32_t *out,
			struct err *e)
{
	uint64_t b = (uint64_t)dev << 32 | stream;
	int32_t idx;
	if (map2_put(&c->streams, (uint64_t)gpid, b, (int32_t)c->stream_keys.n, &idx))
		return oom(c, e);
	if (idx == (int32_t)c->stream_keys.n) {
		struct trace_stream_sum *ss = vec_push(&c->stream_keys);
		if (!ss)
			return oom(c, e);
		memset(ss, 0, sizeof *ss);
		ss->global_pid = gpid;
		ss->device_id = dev;
		ss->stream_id = stream;
		ss->first_ns = INT64_MAX;
		ss->last_ns = INT64_MIN;
	}
	*out = idx;
	return 0;
}

static int cmp_iv(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->e > y->e) - (x->e < y->e);
}

/* Union of intervals (sorted by start) whose comm flag matches `want` (-1: all) into out;
 * returns the count. */
static size_t merge_ivs(const struct iv *v, size_t n, int want, int64_t (*out)[2])
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (want >= 0 && v[i].comm != want)
			continue;
		if (m && v[i].s <= out[m - 1][1]) {
			if (v[i].e > out[m - 1][1])
				out[m - 1][1] = v[i].e;
		} else {
			out[m][0] = v[i].s;
			out[m][1] = v[i].e;
			m++;
		}
	}
	return m;
}

static int64_t union_len(int64_t (*u)[2], size_t n)
{
	int64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t = add_sat(t, sub_sat(u[i][1], u[i][0]));
	return t;
}

static int64_t intersect_len(int64_t (*a)[2], size_t na, int64_t (*b)[2], size_t nb)
{
	int64_t t = 0;
	size_t i = 0, j = 0;
	while (i < na && j < nb) {
		int64_t lo = a[i][0] > b[j][0] ? a[i][0] : b[j][0];
		int64_t hi = a[i][1] < b[j][1] ? a[i][1] : b[j][1];
		if (hi > lo)
			t = add_sat(t, sub_sat(hi, lo));
		if (a[i][1] < b[j][1])
			i++;
		else
			j++;
	}
	return t;
}

static void keep_gap(struct trace_summary *s, int top, uint32_t dev, int64_t start, int64_t dur)
{
	if ((int)s->n_gaps == top && (top == 0 || s->gaps[top - 1].dur_ns >= dur))
		return;
	size_t i = s->n_gaps < (size_t)top ? s->n_gaps++ : (size_t)top - 1;
	while (i > 0 && s->gaps[i - 1].dur_ns < dur) {
		s->gaps[i] = s->gaps[i - 1];
		i--;
	}
	s->gaps[i] = (struct trace_gap_sum){.device_id = dev, .start_ns = start, .dur_ns = dur};
}

static int device_sweep(struct ctx *c, struct err *e)
{
	struct trace_summary *s = c->s;
	const struct krow *k = c->k.p;
	const struct xrow *x = c->x.p;
	size_t nk = c->k.n, nx = c->x.n, total = nk + nx;
	int top = c->o->top_gaps > 0 ? c->o->top_gaps : DEFAULT_TOP_GAPS;
	int rc = 0;
	struct iv *iv = NULL;
	int *devof = NULL;
	size_t *off = NULL;
	int64_t(*u_all)[2] = NULL, (*u_comm)[2] = NULL, (*u_comp)[2] = NULL;
	int64_t *stream_end = NULL;

	s->gaps = arena_alloc(&s->arena, (size_t)top * sizeof *s->gaps);
	iv = malloc((total ? total : 1) * sizeof *iv);
	devof = malloc((total ? total : 1) * sizeof *devof);
	if (!s->gaps || !iv || !devof) {
		rc = oom(c, e);
		goto out;
	}
	s->first_ns = INT64_MAX;
	s->last_ns = INT64_MIN;
	/* device and stream of every interval */
	for (size_t i = 0; i < total; i++) {
		bool is_k = i < nk;
		uint32_t dev = is_k ? k[i].dev : x[i - nk].dev;
		int d = dev_index(c, dev, e);
		if (d < 0) {
			rc = d;
			goto out;
		}
		devof[i] = d;
	}
	off = calloc(c->n_devs + 1, sizeof *off);
	if (!off) {
		rc = oom(c, e);
		goto out;
	}
	for (size_t i = 0; i < total; i++)
		off[devof[i] + 1]++;
	for (size_t d = 0; d < c->n_devs; d++)
		off[d + 1] += off[d];
	for (size_t i = 0; i < total; i++) {
		bool is_k = i < nk;
		struct iv v;
		int32_t si;
		if (is_k) {
			v.s = k[i].start;
			v.e = k[i].end;
			v.comm = s->kern[k[i].name].comm ? 1 : 0;
			rc = stream_index(c, k[i].gpid, k[i].dev, k[i].stream, &si, e);
		} else {
			const struct xrow *xr = &x[i - nk];
			v.s = xr->start;
			v.e = xr->end;
			v.comm = 2;
			rc = stream_index(c, xr->gpid, xr->dev, xr->stream, &si, e);
		}
		if (rc)
			goto out;
		if (v.e < v.s)
			v.e = v.s;
		v.stream = si;
		struct trace_stream_sum *ss = (struct trace_stream_sum *)c->stream_keys.p + si;
		if (is_k)
			ss->kernels++;
		else if (i - nk < c->n_memcpy)
			ss->memcpys++;
		else
			ss->memsets++;
		if (v.s < ss->first_ns)
			ss->first_ns = v.s;
		if (v.e > ss->last_ns)
			ss->last_ns = v.e;
		if (v.s < s->first_ns)
			s->first_ns = v.s;
		if (v.e > s->last_ns)
			s->last_ns = v.e;
		iv[off[devof[i]]++] = v;
	}
	for (size_t d = c->n_devs; d > 0; d--)
		off[d] = off[d - 1];
	off[0] = 0;
	if (total == 0)
		s->first_ns = s->last_ns = 0;

	size_t n_streams = c->stream_keys.n;
	stream_end = malloc((n_streams ? n_streams : 1) * sizeof *stream_end);
	u_all = malloc((total ? total : 1) * sizeof *u_all);
	u_comm = malloc((total ? total : 1) * sizeof *u_comm);
	u_comp = malloc((total ? total : 1) * sizeof *u_comp);
	s->dev = arena_alloc(&s->arena, (c->n_devs ? c->n_devs : 1) * sizeof *s->dev);
	if (!stream_end || !u_all || !u_comm || !u_comp || !s->dev) {
		rc = oom(c, e);
		goto out;
	}
	for (size_t i = 0; i < n_streams; i++)
		stream_end[i] = INT64_MIN;
	struct trace_stream_sum *streams = c->stream_keys.p;
	for (size_t d = 0; d < c->n_devs; d++) {
		struct iv *v = iv + off[d];
		size_t n = off[d + 1] - off[d];
		bool sorted = true;
		for (size_t i = 1; i < n && sorted; i++)
			sorted = v[i - 1].s <= v[i].s;
		if (!sorted)
			qsort(v, n, sizeof *v, cmp_iv);
		struct trace_device_sum *ds = &s->dev[d];
		memset(ds, 0, sizeof *ds);
		ds->device_id = c->devs[d];
		ds->first_ns = n ? v[0].s : 0;
		for (size_t i = 0; i < n; i++) {
			if (v[i].e > ds->last_ns)
				ds->last_ns = v[i].e;
			/* per-stream union: intervals arrive in start order */
			struct trace_stream_sum *ss = &streams[v[i].stream];
			int64_t *end = &stream_end[v[i].stream];
			int64_t from = v[i].s > *end ? v[i].s : *end;
			if (v[i].e > from)
				ss->busy_ns = add_sat(ss->busy_ns, sub_sat(v[i].e, from));
			if (v[i].e > *end)
				*end = v[i].e;
			if (v[i].comm == 2)
				continue;
			ds->kernels++;
		}
		size_t na = merge_ivs(v, n, -1, u_all);
		size_t nc = merge_ivs(v, n, 1, u_comm);
		size_t np = merge_ivs(v, n, 0, u_comp);
		ds->busy_ns = union_len(u_all, na);
		ds->comm_ns = union_len(u_comm, nc);
		ds->compute_ns = union_len(u_comp, np);
		ds->overlap_ns = intersect_len(u_comm, nc, u_comp, np);
		ds->comm_hidden_pct = ds->comm_ns ? 100.0 * (double)ds->overlap_ns /
							    (double)ds->comm_ns
						  : 0;
		for (size_t i = 1; i < na; i++) {
			int64_t gap = sub_sat(u_all[i][0], u_all[i - 1][1]);
			ds->gaps++;
			ds->idle_ns = add_sat(ds->idle_ns, gap);
			if (gap > ds->max_gap_ns)
				ds->max_gap_ns = gap;
			keep_gap(s, top, ds->device_id, u_all[i - 1][1], gap);
		}
	}
	int64_t span = sub_sat(s->last_ns, s->first_ns);
	s->span_ns = span;
	for (size_t d = 0; d < c->n_devs; d++)
		s->dev[d].util_pct = span > 0 ? 100.0 * (double)s->dev[d].busy_ns / (double)span : 0;
	for (size_t i = 0; i < n_streams; i++) {
		streams[i].util_pct = span > 0 ? 100.0 * (double)streams[i].busy_ns / (double)span : 0;
		for (size_t d = 0; d < c->n_devs; d++)
			if (s->dev[d].device_id == streams[i].device_id) {
				s->dev[d].memcpys += streams[i].memcpys;
				s->dev[d].memsets += streams[i].memsets;
			}
	}
	s->n_dev = c->n_devs;
out:
	free(iv);
	free(devof);
	free(off);
	free(u_all);
	free(u_comm);
	free(u_comp);
	free(stream_end);
	return rc;
}

static int cmp_dev(const void *a, const void *b)
{
	const struct trace_device_sum *x = a, *y = b;
	return (x->device_id > y->device_id) - (x->device_id < y->device_id);
}

static int cmp_stream(const void *a, const void *b)
{
	const struct trace_stream_sum *x = a, *y = b;
	if (x->device_id != y->device_id)
		return x->device_id < y->device_id ? -1 : 1;
	if (x->global_pid != y->global_pid)
		return x->global_pid < y->global_pid ? -1 : 1;
	return (x->stream_id > y->stream_id) - (x->stream_id < y->stream_id);
}

/* ---- launch overhead and NVTX attribution ---- */

static int cmp_point(const void *a, const void *b)
{
	const struct trace_point *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->t > y->t) - (x->t < y->t);
}

static int cmp_span(const void *a, const void *b)
{
	const struct trace_span *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->s > y->s) - (x->s < y->s);
}

int trace_attribute(struct trace_point *p, size_t np, struct trace_span *r, size_t nr, trace_attribute_fn fn,
		    void *ctx)
{
	bool sorted = true;
	for (size_t i = 1; i < np && sorted; i++)
		sorted = cmp_point(&p[i - 1], &p[i]) <= 0;
	if (!sorted)
		qsort(p, np, sizeof *p, cmp_point);
	sorted = true;
	for (size_t i = 1; i < nr && sorted; i++)
		sorted = cmp_span(&r[i - 1], &r[i]) <= 0;
	if (!sorted)
		qsort(r, nr, sizeof *r, cmp_span);
	const struct trace_span *active[TRACE_OPEN_SPANS_MAX];
	size_t na = 0, ri = 0;
	int64_t key = INT64_MIN;
	for (size_t i = 0; i < np; i++) {
		if (i == 0 || p[i].key != key) {
			key = p[i].key;
			na = 0;
			while (ri < nr && r[ri].key < key)
				ri++;
		}
		while (ri < nr && r[ri].key == key && r[ri].s <= p[i].t) {
			if (r[ri].e >= p[i].t && na < TRACE_OPEN_SPANS_MAX)
				active[na++] = &r[ri];
			ri++;
		}
		size_t w = 0;
		for (size_t j = 0; j < na; j++)
			if (active[j]->e >= p[i].t)
				active[w++] = active[j];
		na = w;
		int rc = fn(ctx, &p[i], active, na);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* trace summary: each kernel's duration (the point's id) to every distinct range name (the span's
 * id) open where it was launched. */
static int credit_names(void *ctx, const struct trace_point *p, const struct trace_span *const *open, size_t n)
{
	struct trace_nvtx_sum *out = ctx;
	for (size_t j = 0; j < n; j++) {
		bool dup = false;
		for (size_t q = 0; q < j && !dup; q++)
			dup = open[q]->id == open[j]->id;
		if (dup)
			continue;
		out[open[j]->id].kernels++;
		out[open[j]->id].gpu_ns = add_sat(out[open[j]->id].gpu_ns, p->id);
	}
	return 0;
}

static int cmp_nvtx(const void *a, const void *b)
{
	const struct trace_nvtx_sum *x = a, *y = b;
	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int launch_and_nvtx(struct ctx *c, struct strmap *sm, struct err *e)
{
	struct trace_summary *s = c->s;
	const struct krow *k = c->k.p;
	const struct arow *a = c->a.p;
	const struct nrow *nr = c->n.p;
	size_t nk = c->k.n, nn = c->n.n;
	int rc = 0;
	int64_t *delay = malloc((nk ? nk : 1) * sizeof *delay);
	int64_t *tmp = malloc((nk ? nk : 1) * sizeof *tmp);
	size_t *count = nk >= 64 ? malloc(RADIX * sizeof *count) : NULL; /* long sorts only */
	struct trace_point *pt = malloc((nk ? nk : 1) * sizeof *pt);
	struct trace_point *pp = malloc((nk ? nk : 1) * sizeof *pp);
	struct trace_span *st = malloc((nn ? nn : 1) * sizeof *st);
	struct trace_span *sp = malloc((nn ? nn : 1) * sizeof *sp);
	if (!delay || !tmp || (nk >= 64 && !count) || !pt || !pp || !st || !sp) {
		rc = oom(c, e);
		goto out;
	}
	size_t nd = 0, npt = 0, npp = 0;
	double api_sum = 0;
	struct trace_launch_sum *l = &s->launch;
	l->min_from_call_start_ns = INT64_MAX;
	for (size_t i = 0; i < nk; i++) {
		int32_t ai = k[i].corr ? api_lookup(c, trace_global_to_pid(k[i].gpid), k[i].corr) : -1;
		int64_t dur = dur_sat(k[i].start, k[i].end);
		if (ai >= 0) {
			l->matched++;
			pt[npt++] = (struct trace_point){.key = a[ai].gtid, .t = a[ai].start, .id = dur};
			int64_t from_start = sub_sat(k[i].start, a[ai].start);
			if (from_start < 0) {
				l->inconsistent++;
				continue;
			}
			if (from_start < l->min_from_call_start_ns)
				l->min_from_call_start_ns = from_start;
			delay[nd] = sub_sat(k[i].start, a[ai].end);
			if (delay[nd] < 0)
				l->before_return++;
			nd++;
			api_sum += (double)dur_sat(a[ai].start, a[ai].end);
		} else {
			pp[npp++] = (struct trace_point){.key = trace_global_to_pid(k[i].gpid),
							 .t = k[i].start,
							 .id = dur};
		}
	}
	l->unmatched = (int64_t)nk - l->matched;
	if (!nd)
		l->min_from_call_start_ns = 0;
	if (nd) {
		sort_i64(delay, nd, tmp, count);
		double sum = 0;
		for (size_t i = 0; i < nd; i++)
			sum += (double)delay[i];
		l->avg_ns = sum / (double)nd;
		l->med_ns = median_sorted(delay, nd);
		l->min_ns = delay[0];
		l->max_ns = delay[nd - 1];
		l->p90_ns = delay[(size_t)((double)(nd - 1) * 0.90 + 0.5)];
		l->p99_ns = delay[(size_t)((double)(nd - 1) * 0.99 + 0.5)];
		l->api_avg_ns = api_sum / (double)nd;
	}
	/* NVTX */
	s->nvtx = arena_alloc(&s->arena, (sm->n ? sm->n : 1) * sizeof *s->nvtx);
	if (!s->nvtx) {
		rc = oom(c, e);
		goto out;
	}
	for (size_t i = 0; i < sm->n; i++) {
		s->nvtx[i] = (struct trace_nvtx_sum){.name = sm->names[i], .min_ns = INT64_MAX};
	}
	for (size_t i = 0; i < nn; i++) {
		struct trace_nvtx_sum *ns = &s->nvtx[nr[i].name];
		int64_t d = dur_sat(nr[i].start, nr[i].end);
		ns->instances++;
		ns->total_ns = add_sat(ns->total_ns, d);
		if (d < ns->min_ns)
			ns->min_ns = d;
		if (d > ns->max_ns)
			ns->max_ns = d;
		st[i] = (struct trace_span){.key = nr[i].gtid, .s = nr[i].start, .e = nr[i].end,
					    .id = nr[i].name};
		sp[i] = (struct trace_span){.key = trace_global_to_pid(nr[i].gtid), .s = nr[i].start,
					    .e = nr[i].end, .id = nr[i].name};
	}
	if (nn) {
		trace_attribute(pt, npt, st, nn, credit_names, s->nvtx);
		trace_attribute(pp, npp, sp, nn, credit_names, s->nvtx);
	}
	for (size_t i = 0; i < sm->n; i++) {
		struct trace_nvtx_sum *ns = &s->nvtx[i];
		ns->avg_ns = ns->instances ? (double)ns->total_ns / (double)ns->instances : 0;
		if (!ns->instances)
			ns->min_ns = 0;
	}
	s->n_nvtx = sm->n;
	s->nvtx_ranges = (int64_t)nn;
	qsort(s->nvtx, s->n_nvtx, sizeof *s->nvtx, cmp_nvtx);
out:
	free(delay);
	free(tmp);
	free(count);
	free(pt);
	free(pp);
	free(st);
	free(sp);
	return rc;
}

static int64_t scalar_i64(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = 0;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The median of column `col` over device `dev`'s non-NULL readings (n of them). */
static double median_reading(sqlite3 *db, int64_t dev, const char *col, int64_t n)
{
	if (n <= 0)
		return 0;
	char sql[256];
	snprintf(sql, sizeof sql,
		 "SELECT %s FROM K3SIM_GPU_METRICS WHERE deviceId = ?1 AND %s IS NOT NULL"
		 " ORDER BY %s LIMIT ?2 OFFSET ?3",
		 col, col, col);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, dev);
	sqlite3_bind_int64(st, 2, n % 2 ? 1 : 2);
	sqlite3_bind_int64(st, 3, (n - 1) / 2);
	double sum = 0;
	int got = 0;
	while (sqlite3_step(st) == SQLITE_ROW) {
		sum += sqlite3_column_double(st, 0);
		got++;
	}
	sqlite3_finalize(st);
	return got ? sum / got : 0;
}

enum { MAX_CLOCK_DEVICES = 256 };

/* Per device: min / median / max of the SM clock and power readings, the hottest reading and the
 * throttle reasons seen. Absent table: nothing. */
static int clock_summary(struct ctx *c, struct err *e)
{
	struct trace_summary *s = c->s;
	if (!trace_sql_has_table(c->sql, "K3SIM_GPU_METRICS"))
		return 0;
	static const char agg[] =
		"SELECT deviceId, count(*), min(timestamp), max(timestamp), count(smClockMHz),"
		" min(smClockMHz), max(smClockMHz), count(memClockMHz), count(powerW), min(powerW),"
		" max(powerW), max(temperatureC),"
		" sum(CASE WHEN throttleReasons & 4 THEN 1 ELSE 0 END)"
		" FROM K3SIM_GPU_METRICS GROUP BY deviceId ORDER BY deviceId";
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(c->sql, agg, -1, &st, NULL) != SQLITE_OK) {
		err_set(e, c->path, 0, 0, "K3SIM_GPU_METRICS: %s", sqlite3_errmsg(c->sql));
		return -EIO;
	}
	struct trace_clock_sum rows[MAX_CLOCK_DEVICES];
	int64_t n_sm[MAX_CLOCK_DEVICES], n_mem[MAX_CLOCK_DEVICES], n_pow[MAX_CLOCK_DEVICES];
	size_t n = 0;
	while (sqlite3_step(st) == SQLITE_ROW && n < MAX_CLOCK_DEVICES) {
		struct trace_clock_sum *r = &rows[n];
		memset(r, 0, sizeof *r);
		r->device_id = (uint32_t)sqlite3_column_int64(st, 0);
		r->samples = sqlite3_column_int64(st, 1);
		r->first_ns = sqlite3_column_int64(st, 2);
		r->last_ns = sqlite3_column_int64(st, 3);
		n_sm[n] = sqlite3_column_int64(st, 4);
		r->sm_mhz_min = sqlite3_column_double(st, 5);
		r->sm_mhz_max = sqlite3_column_double(st, 6);
		n_mem[n] = sqlite3_column_int64(st, 7);
		n_pow[n] = sqlite3_column_int64(st, 8);
		r->power_w_min = sqlite3_column_double(st, 9);
		r->power_w_max = sqlite3_column_double(st, 10);
		r->temp_c_max = sqlite3_column_double(st, 11);
		r->power_capped = sqlite3_column_int64(st, 12);
		n++;
	}
	sqlite3_finalize(st);
	/* the OR of the reason bits, which SQL has no aggregate for */
	if (sqlite3_prepare_v2(c->sql,
			       "SELECT DISTINCT deviceId, throttleReasons FROM K3SIM_GPU_METRICS"
			       " WHERE throttleReasons IS NOT NULL LIMIT 65536",
			       -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			uint32_t dev = (uint32_t)sqlite3_column_int64(st, 0);
			for (size_t i = 0; i < n; i++)
				if (rows[i].device_id == dev)
					rows[i].throttle_any |= (uint64_t)sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
	}
	for (size_t i = 0; i < n; i++) {
		rows[i].sm_mhz_med = median_reading(c->sql, rows[i].device_id, "smClockMHz", n_sm[i]);
		rows[i].mem_mhz_med = median_reading(c->sql, rows[i].device_id, "memClockMHz", n_mem[i]);
		rows[i].power_w_med = median_reading(c->sql, rows[i].device_id, "powerW", n_pow[i]);
	}
	s->clocks = arena_alloc(&s->arena, (n ? n : 1) * sizeof *s->clocks);
	if (!s->clocks)
		return oom(c, e);
	if (n)
		memcpy(s->clocks, rows, n * sizeof *rows);
	s->n_clocks = n;
	return 0;
}

int trace_summary_compute(struct trace_summary *s, const char *path,
			  const struct trace_summary_opts *o, struct err *e)
{
	struct trace_summary_opts dflt = {0};
	if (!o)
		o = &dflt;
	memset(s, 0, sizeof *s);
	arena_init(&s->arena, (size_t)1 << 34);
	struct ctx c = {.path = path, .o = o, .s = s};
	c.max_rows = o->max_rows > 0 ? o->max_rows : DEFAULT_MAX_ROWS;
	c.k.elem = sizeof(struct krow);
	c.x.elem = sizeof(struct xrow);
	c.a.elem = sizeof(struct arow);
	c.n.elem = sizeof(struct nrow);
	c.stream_keys.elem = sizeof(struct trace_stream_sum);
	c.k.max = c.x.max = c.a.max = c.n.max = c.max_rows;
	c.stream_keys.max = c.max_rows;
	struct strmap sm;
	memset(&sm, 0, sizeof sm);
	struct trace_kclass_rules own_classes;
	memset(&own_classes, 0, sizeof own_classes);
	int rc = 0;
	c.classes = o->classes;
	if (!c.classes) {
		rc = trace_kclass_load(&own_classes, "default", e);
		if (rc)
			goto out;
		c.classes = &own_classes;
	}
	rc = trace_sql_open(path, &c.sql, e);
	if (rc)
		goto out;
	static const char *const tables[] = {
		"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
		"CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS",
	};
	bool any = false;
	for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
		any = any || trace_sql_has_table(c.sql, tables[i]);
	if (!any) {
		err_set(e, path, 0, 0, "not a trace database: none of CUPTI_ACTIVITY_KIND_KERNEL,"
			" _MEMCPY, _MEMSET, _RUNTIME or NVTX_EVENTS is there");
		rc = -EINVAL;
		goto out;
	}
	if (map2_init(&c.name_ids, 1024) || map2_init(&c.api, 1024) ||
	    map2_init(&c.streams, 64) || map2_init(&sm.m, 64)) {
		rc = oom(&c, e);
		goto out;
	}
	rc = load_kernels(&c, e);
	if (!rc)
		rc = load_copies(&c, "CUPTI_ACTIVITY_KIND_MEMCPY", e);
	c.n_memcpy = c.x.n;
	if (!rc)
		rc = load_copies(&c, "CUPTI_ACTIVITY_KIND_MEMSET", e);
	if (!rc)
		rc = load_api(&c, "CUPTI_ACTIVITY_KIND_RUNTIME", false, e);
	if (!rc) {
		char type[16];
		rc = trace_sql_object_type(c.sql, path, "CUPTI_ACTIVITY_KIND_DRIVER", type,
					   sizeof type, e);
		if (!rc && strcmp(type, "table") == 0)
			rc = load_api(&c, "CUPTI_ACTIVITY_KIND_DRIVER", true, e);
	}
	if (!rc)
		rc = index_api(&c, e);
	if (!rc)
		rc = load_nvtx(&c, &sm, e);
	if (rc)
		goto out;
	s->kernels = (int64_t)c.k.n;
	s->memcpys = (int64_t)c.n_memcpy;
	s->memsets = (int64_t)(c.x.n - c.n_memcpy);
	const struct xrow *x = c.x.p;
	for (size_t i = 0; i < c.x.n; i++) {
		if (i < c.n_memcpy) {
			s->memcpy_bytes = add_sat(s->memcpy_bytes, x[i].bytes);
			s->memcpy_ns = add_sat(s->memcpy_ns, dur_sat(x[i].start, x[i].end));
		} else {
			s->memset_bytes = add_sat(s->memset_bytes, x[i].bytes);
			s->memset_ns = add_sat(s->memset_ns, dur_sat(x[i].start, x[i].end));
		}
	}
	if (trace_sql_has_table(c.sql, "K3SIM_DROPPED"))
		s->dropped_records = scalar_i64(c.sql, "SELECT total(count) FROM K3SIM_DROPPED");
	rc = kernel_table(&c, e);
	if (!rc)
		rc = device_sweep(&c, e);
	if (!rc)
		rc = launch_and_nvtx(&c, &sm, e);
	if (!rc)
		rc = clock_summary(&c, e);
	if (rc)
		goto out;
	/* order for reading: streams copied into the arena */
	s->n_stream = c.stream_keys.n;
	s->stream = arena_alloc(&s->arena, (s->n_stream ? s->n_stream : 1) * sizeof *s->stream);
	if (!s->stream) {
		rc = oom(&c, e);
		goto out;
	}
	if (s->n_stream)
		memcpy(s->stream, c.stream_keys.p, s->n_stream * sizeof *s->stream);
	qsort(s->stream, s->n_stream, sizeof *s->stream, cmp_stream);
	qsort(s->dev, s->n_dev, sizeof *s->dev, cmp_dev);
	qsort(s->kern, s->n_kern, sizeof *s->kern, cmp_kern);
out:
	sqlite3_close(c.sql);
	free(c.k.p);
	free(c.x.p);
	free(c.a.p);
	free(c.n.p);
	free(c.stream_keys.p);
	free(c.name_src);
	free(c.name_full);
	map2_release(&c.name_ids);
	map2_release(&c.api);
	for (size_t i = 0; i < c.n_apids; i++)
		free(c.apids[i].dense);
	free(c.apids);
	map2_release(&c.streams);
	strmap_release(&sm);
	trace_kclass_release(&own_classes);
	if (rc)
		trace_summary_release(s);
	return rc;
}

void trace_summary_release(struct trace_summary *s)
{
	arena_release(&s->arena);
	memset(s, 0, sizeof *s);
}
