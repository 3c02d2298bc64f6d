/* Model ops from framework records (calib/derive.h). */
#include "calib/derive.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/opspec.h"
#include "trace/analyze/kclass.h"
#include "util/doc.h"
#include "util/embed.h"

extern const struct embedded_file calib_derive_files[];

enum { DERIVE_ARENA_BYTES = 256 * 1024 };

static const char *const form_names[] = {"gemm",   "linear", "grouped_gemm", "attention",
                                         "collective", "gather", "memory", "skip", NULL};

static int pos_of(const struct doc *d, const struct doc_node *v, const char *key, int *out, struct err *e)
{
	int64_t x;
	int rc = doc_i64(d, v, key, &x, e);
	if (rc < 0)
		return rc;
	if (x < 0 || x >= FW_INPUTS_MAX)
		return doc_error(d, v, e, "%s: an argument position 0..%d, not %lld", key, FW_INPUTS_MAX - 1,
		                 (long long)x);
	*out = (int)x;
	return 0;
}

static int pos_list(const struct doc *d, const struct doc_node *v, const char *key, int *n, int *pos,
                    struct err *e)
{
	int rc = doc_expect(d, v, DOC_SEQ, key, e);
	if (rc < 0)
		return rc;
	if (v->n > CALIB_DERIVE_POS_MAX)
		return doc_error(d, v, e, "%s: at most %d positions", key, CALIB_DERIVE_POS_MAX);
	for (size_t i = 0; i < v->n; i++)
		if ((rc = pos_of(d, v->items[i], key, &pos[i], e)) < 0)
			return rc;
	*n = (int)v->n;
	return 0;
}

static int parse_rule(const struct doc *d, const struct doc_node *n, struct calib_derive *r, struct err *e)
{
	static const char *const keys[] = {"name", "call", "form", "a", "b", "layout", "collective",
	                                   "ranks", "read", "write", NULL};
	struct calib_derive_rule *x = &r->rule[r->n];
	memset(x, 0, sizeof *x);
	x->line = n->line;
	x->a = 0;
	x->b = 1;
	int rc = doc_expect(d, n, DOC_MAP, "rule", e);
	if (rc < 0 || (rc = doc_check_keys(d, n, keys, e)) < 0)
		return rc;
	const struct doc_node *v = doc_get(n, "call");
	const char *s;
	if (!v)
		return doc_error(d, n, e, "rule: missing key 'call' (a glob over operator names, or a list)");
	if (v->kind == DOC_SEQ) {
		if (v->n == 0 || v->n > CALIB_DERIVE_CALLS_MAX)
			return doc_error(d, v, e, "call: 1 to %d patterns", CALIB_DERIVE_CALLS_MAX);
		for (size_t i = 0; i < v->n; i++) {
			if ((rc = doc_str(d, v->items[i], "call", &s, e)) < 0)
				return rc;
			if (!*s)
				return doc_error(d, v->items[i], e, "call: empty pattern");
			if (!(x->call[x->n_call++] = arena_strndup(&r->arena, s, strlen(s))))
				return -ENOMEM;
		}
	} else {
		if ((rc = doc_str(d, v, "call", &s, e)) < 0)
			return rc;
		if (!*s)
			return doc_error(d, v, e, "call: empty pattern");
		if (!(x->call[x->n_call++] = arena_strndup(&r->arena, s, strlen(s))))
			return -ENOMEM;
	}
	x->name = x->call[0];
	if ((v = doc_get(n, "name"))) {
		if ((rc = doc_str(d, v, "name", &s, e)) < 0)
			return rc;
		if (!(x->name = arena_strndup(&r->arena, s, strlen(s))))
			return -ENOMEM;
	}
	if (!(v = doc_get(n, "form")))
		return doc_error(d, n, e, "rule '%s': missing key 'form' (gemm, linear, grouped_gemm, "
		                 "attention, collective, gather, memory, skip)", x->name);
	if ((rc = doc_str(d, v, "form", &s, e)) < 0)
		return rc;
	int f = -1;
	for (int i = 0; form_names[i]; i++)
		if (strcmp(s, form_names[i]) == 0)
			f = i;
	if (f < 0) {
		const char *hint = err_suggest(s, form_names);
		return doc_error(d, v, e, "form: unknown '%s'%s%s%s", s, hint ? " (did you mean '" : "",
		                 hint ? hint : "", hint ? "'?)" : "");
	}
	x->form = (enum calib_derive_form)f;
	if ((v = doc_get(n, "a")) && (rc = pos_of(d, v, "a", &x->a, e)) < 0)
		return rc;
	if ((v = doc_get(n, "b")) && (rc = pos_of(d, v, "b", &x->b, e)) < 0)
		return rc;
	if ((v = doc_get(n, "layout"))) {
		if ((rc = doc_str(d, v, "layout", &s, e)) < 0)
			return rc;
		if (strcmp(s, "bhsd") != 0 && strcmp(s, "bshd") != 0)
			return doc_error(d, v, e, "layout: bhsd or bshd, not '%s'", s);
		x->bshd = strcmp(s, "bshd") == 0;
	}
	if ((v = doc_get(n, "collective"))) {
		static const char *const coll[] = {"allreduce", "allgather", "reducescatter", "alltoall", NULL};
		if ((rc = doc_str(d, v, "collective", &s, e)) < 0)
			return rc;
		int c = -1;
		for (int i = 0; coll[i]; i++)
			if (strcmp(s, coll[i]) == 0)
				c = i;
		if (c < 0)
			return doc_error(d, v, e, "collective: allreduce, allgather, reducescatter or alltoall, "
			                 "not '%s'", s);
		x->collective = coll[c];
	}
	if (x->form == CALIB_FORM_COLLECTIVE && !x->collective)
		return doc_error(d, n, e, "rule '%s': form collective needs key 'collective'", x->name);
	if ((v = doc_get(n, "ranks"))) {
		if ((rc = doc_i64(d, v, "ranks", &x->ranks, e)) < 0)
			return rc;
		if (x->ranks < 1)
			return doc_error(d, v, e, "ranks: a positive count");
	}
	x->read_all = true;
	if ((v = doc_get(n, "read"))) {
		if (v->kind == DOC_SCALAR) {
			if (strcmp(v->str, "all") != 0)
				return doc_error(d, v, e, "read: 'all' or a list of positions, not '%s'", v->str);
		} else {
			x->read_all = false;
			if ((rc = pos_list(d, v, "read", &x->n_read, x->read, e)) < 0)
				return rc;
		}
	}
	x->write = CALIB_WRITE_LARGEST;
	if ((v = doc_get(n, "write"))) {
		if (v->kind == DOC_SCALAR) {
			static const char *const w[] = {"largest", "first", "none", "sum", NULL};
			int k = -1;
			for (int i = 0; w[i]; i++)
				if (strcmp(v->str, w[i]) == 0)
					k = i;
			if (k < 0)
				return doc_error(d, v, e, "write: largest, first, none, sum or a list of "
				                 "positions, not '%s'", v->str);
			x->write = (enum calib_derive_write)k;
		} else {
			x->write = CALIB_WRITE_LIST;
			if ((rc = pos_list(d, v, "write", &x->n_write, x->writes, e)) < 0)
				return rc;
		}
	}
	if ((doc_get(n, "read") || doc_get(n, "write")) && x->form != CALIB_FORM_MEMORY)
		return doc_error(d, n, e, "rule '%s': read/write belong to form memory", x->name);
	r->n++;
	return 0;
}

/* One rule of the file: the array of all of them allocated at the first. */
static int load_rule(const struct doc *d, const struct doc_node *n, size_t i, size_t count, void *obj,
		     struct err *e)
{
	struct calib_derive *r = obj;
	if (i == 0 && !(r->rule = arena_alloc(&r->arena, count * sizeof *r->rule)))
		return -ENOMEM;
	return parse_rule(d, n, r, e);
}

int calib_derive_load_string(struct calib_derive *r, const char *file, const char *text, size_t len_bytes,
                             struct err *e)
{
	struct calib_derive tmp;
	memset(&tmp, 0, sizeof tmp);
	arena_init(&tmp.arena, DERIVE_ARENA_BYTES);
	snprintf(tmp.file, sizeof tmp.file, "%s", file);
	int rc = doc_rules_each(file, text, len_bytes, CALIB_DERIVE_RULES_MAX, "rules", load_rule, &tmp, e);
	if (rc < 0) {
		arena_release(&tmp.arena);
		return rc;
	}
	*r = tmp;
	return 0;
}

static int parse_derive(void *obj, const char *label, const char *text, size_t len_bytes, struct err *e)
{
	return calib_derive_load_string(obj, label, text, len_bytes, e);
}

int calib_derive_load(struct calib_derive *r, const char *name_or_path, struct err *e)
{
	/* the embedded file is trace/rules/aten.yaml: "default" and "aten" name it */
	const char *nm = strcmp(name_or_path, "default") == 0 ? "aten" : name_or_path;
	return embedded_load(calib_derive_files, "derivation rules", "derivation rules", nm, parse_derive, r, e);
}

void calib_derive_release(struct calib_derive *r)
{
	arena_release(&r->arena);
	memset(r, 0, sizeof *r);
}

int calib_derive_find(const struct calib_derive *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		for (int j = 0; j < r->rule[i].n_call; j++)
			if (trace_glob(r->rule[i].call[j], name, false))
				return i;
	return -1;
}

/* ---- derivation ---- */

static int why(struct calib_derived *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int why(struct calib_derived *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof r->why, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static const struct fw_tensor *arg(const struct fw_call *c, int pos)
{
	for (int i = 0; i < c->n_kept; i++)
		if (c->in[i].arg == pos)
			return &c->in[i];
	return NULL;
}

/* The tensor at argument position pos, or a reason. */
static int tensor(const struct fw_call *c, int pos, int min_rank, const struct fw_tensor **out,
                  struct calib_derived *r)
{
	const struct fw_tensor *t = arg(c, pos);
	if (!t)
		return why(r, "%s: argument %d was not recorded (%d inputs)", c->name, pos, c->n_in);
	if (t->rank < 0)
		return why(r, "%s: argument %d has no recorded sizes (not a tensor, or a list the profiler does not record)", c->name, pos);
	if (t->rank < min_rank)
		return why(r, "%s: argument %d has %d dims, the rule needs %d", c->name, pos, t->rank, min_rank);
	for (int i = 0; i < t->rank; i++)
		if (t->dim[i] <= 0)
			return why(r, "%s: argument %d has an empty dim", c->name, pos);
	*out = t;
	return 0;
}

static enum dtype dtype_of(const struct fw_tensor *t, const struct calib_derive_opts *o, struct calib_derived *r)
{
	enum dtype d;
	if (t->type[0] && fw_type_dtype(t->type, &d) == 0)
		return d;
	if (!t->type[0])
		r->dtype_assumed = true;
	return o->dtype;
}

/* Bytes of one input: its elements times the recorded type's size (or the default dtype's). */
static int64_t bytes_of(const struct fw_tensor *t, const struct calib_derive_opts *o, struct calib_derived *r)
{
	int64_t n = fw_tensor_elements(t);
	if (n <= 0)
		return n < 0 && n != -1 ? -1 : 0;
	int b = t->type[0] ? fw_type_bytes(t->type) : 0;
	if (!b) {
		if (!t->type[0])
			r->dtype_assumed = true;
		b = (int)dtype_bytes_per_element(o->dtype);
		if (b < 1)
			b = 1;
	}
	if (n > INT64_MAX / 8)
		return -1;
	return n * b;
}

static int64_t prod(const struct fw_tensor *t, int from, int to)
{
	int64_t p = 1;
	for (int i = from; i < to; i++) {
		if (p > (INT64_C(1) << 56) / t->dim[i])
			return -1;
		p *= t->dim[i];
	}
	return p;
}

static int derive_gemm(const struct calib_derive_rule *x, const struct fw_call *c,
                       const struct calib_derive_opts *o, struct calib_derived *r)
{
	const struct fw_tensor *a, *b;
	int rc;
	if ((rc = tensor(c, x->a, 1, &a, r)) || (rc = tensor(c, x->b, 1, &b, r)))
		return rc;
	enum dtype dt = dtype_of(a, o, r);
	if (x->form == CALIB_FORM_LINEAR) {
		/* x [..., K] W [N, K] */
		int64_t k = a->dim[a->rank - 1], m = prod(a, 0, a->rank - 1);
		if (b->rank != 2)
			return why(r, "%s: weight has %d dims, not 2", c->name, b->rank);
		if (b->dim[1] != k)
			return why(r, "%s: input width %lld differs from the weight's %lld", c->name, (long long)k,
			           (long long)b->dim[1]);
		if (m < 0)
			return why(r, "%s: sizes too large", c->name);
		snprintf(r->spec, sizeof r->spec, "gemm m=%lld n=%lld k=%lld dtype=%s", (long long)m,
		         (long long)b->dim[0], (long long)k, dtype_name(dt));
		return 0;
	}
	if (a->rank < 2 || b->rank < 2)
		return why(r, "%s: vector products (%d-d x %d-d) are not GEMMs", c->name, a->rank, b->rank);
	int64_t k = a->dim[a->rank - 1];
	if (b->dim[b->rank - 2] != k)
		return why(r, "%s: inner dims differ (%lld vs %lld)", c->name, (long long)k,
		           (long long)b->dim[b->rank - 2]);
	int64_t n = b->dim[b->rank - 1];
	if (b->rank == 2) {
		int64_t m = prod(a, 0, a->rank - 1);
		if (m < 0)
			return why(r, "%s: sizes too large", c->name);
		snprintf(r->spec, sizeof r->spec, "gemm m=%lld n=%lld k=%lld dtype=%s", (long long)m, (long long)n,
		         (long long)k, dtype_name(dt));
		return 0;
	}
	/* batched: the batch dims (broadcast) are the groups, each a [M, K] x [K, N] product */
	int64_t ga = prod(a, 0, a->rank - 2), gb = prod(b, 0, b->rank - 2);
	int64_t g = ga > gb ? ga : gb, mm = a->dim[a->rank - 2];
	if (ga < 0 || gb < 0 || g > (INT64_C(1) << 40) || mm > (INT64_C(1) << 56) / g)
		return why(r, "%s: sizes too large", c->name);
	if (g == 1)
		snprintf(r->spec, sizeof r->spec, "gemm m=%lld n=%lld k=%lld dtype=%s", (long long)mm,
		         (long long)n, (long long)k, dtype_name(dt));
	else
		snprintf(r->spec, sizeof r->spec, "grouped_gemm m=%lld n=%lld k=%lld groups=%lld dtype=%s",
		         (long long)(g * mm), (long long)n, (long long)k, (long long)g, dtype_name(dt));
	return 0;
}

static int derive_grouped(const struct calib_derive_rule *x, const struct fw_call *c,
                          const struct calib_derive_opts *o, struct calib_derived *r)
{
	const struct fw_tensor *a, *b;
	int rc;
	if ((rc = tensor(c, x->a, 2, &a, r)) || (rc = tensor(c, x->b, 2, &b, r)))
		return rc;
	enum dtype dt = dtype_of(a, o, r);
	int64_t k = a->dim[a->rank - 1], m = prod(a, 0, a->rank - 1), g, n;
	if (m < 0)
		return why(r, "%s: sizes too large", c->name);
	if (b->rank == 3) {
		g = b->dim[0];
		if (b->dim[1] == k)
			n = b->dim[2];
		else if (b->dim[2] == k)
			n = b->dim[1];
		else
			return why(r, "%s: no dim of the weights [%lld, %lld, %lld] matches K = %lld", c->name,
			           (long long)b->dim[0], (long long)b->dim[1], (long long)b->dim[2], (long long)k);
	} else if (b->rank == 2 && a->rank == 3) {
		/* a [G, M, K] x b [K, N] is not grouped; 2-d x 3-d (the offsets form) is */
		return why(r, "%s: weights [%lld, %lld] are not per group", c->name, (long long)b->dim[0],
		           (long long)b->dim[1]);
	} else {
		return why(r, "%s: weights of %d dims (expected [G, K, N])", c->name, b->rank);
	}
	snprintf(r->spec, sizeof r->spec, "grouped_gemm m=%lld n=%lld k=%lld groups=%lld dtype=%s", (long long)m,
	         (long long)n, (long long)k, (long long)g, dtype_name(dt));
	return 0;
}

static int derive_attention(const struct calib_derive_rule *x, const struct fw_call *c,
                            const struct calib_derive_opts *o, struct calib_derived *r)
{
	const struct fw_tensor *q, *k, *v;
	int rc;
	if ((rc = tensor(c, 0, 4, &q, r)) || (rc = tensor(c, 1, 4, &k, r)) || (rc = tensor(c, 2, 4, &v, r)))
		return rc;
	if (q->rank != 4 || k->rank != 4 || v->rank != 4)
		return why(r, "%s: q, k, v of %d, %d, %d dims (expected 4)", c->name, q->rank, k->rank, v->rank);
	int S = x->bshd ? 1 : 2, H = x->bshd ? 2 : 1;
	int64_t b = q->dim[0], h = q->dim[H], sq = q->dim[S], skv = k->dim[S], d = q->dim[3], dv = v->dim[3];
	if (k->dim[3] != d)
		return why(r, "%s: q and k head dims differ (%lld vs %lld)", c->name, (long long)d,
		           (long long)k->dim[3]);
	if (k->dim[0] != b || v->dim[S] != skv)
		return why(r, "%s: q, k, v batch or length disagree", c->name);
	if (skv < sq)
		return why(r, "%s: %lld queries over %lld keys (cross attention is not a model op)", c->name,
		           (long long)sq, (long long)skv);
	enum dtype dt = dtype_of(q, o, r);
	if (dt != DT_BF16 && dt != DT_FP8)
		dt = DT_BF16;
	if (k->dim[H] == 1 && h > 1 && d > dv) {
		/* one shared K/V head, keys wider than values: absorbed MLA over the latent cache
		 * (FlashMLA: latent = dv, rope = the rest) */
		snprintf(r->spec, sizeof r->spec, "mla_decode b=%lld heads=%lld ctx=%lld t=%lld latent=%lld rope=%lld kv=%s",
		         (long long)b, (long long)h, (long long)(skv - sq), (long long)sq, (long long)dv,
		         (long long)(d - dv), dtype_name(dt));
		return 0;
	}
	snprintf(r->spec, sizeof r->spec, "mla_prefill b=%lld t=%lld ctx=%lld heads=%lld dqk=%lld dv=%lld kv=%s",
	         (long long)b, (long long)sq, (long long)(skv - sq), (long long)h, (long long)d, (long long)dv,
	         dtype_name(dt));
	return 0;
}

static int derive_collective(const struct calib_derive_rule *x, const struct fw_call *c,
                             const struct calib_derive_opts *o, struct calib_derived *r)
{
	const struct fw_tensor *t;
	int rc;
	if ((rc = tensor(c, x->a, 0, &t, r)))
		return rc;
	int64_t bytes = bytes_of(t, o, r), ranks = x->ranks ? x->ranks : o->ranks;
	if (bytes <= 0)
		return why(r, "%s: buffer of %lld bytes", c->name, (long long)bytes);
	if (ranks < 2)
		return why(r, "%s: the number of ranks is not recorded (give --ranks N)", c->name);
	snprintf(r->spec, sizeof r->spec, "%s bytes=%lld ranks=%lld", x->collective, (long long)bytes,
	         (long long)ranks);
	return 0;
}

static int memory_spec(const struct fw_call *c, int64_t rd, int64_t wr, struct calib_derived *r)
{
	if (rd < 0 || wr < 0)
		return why(r, "%s: sizes too large", c->name);
	if (rd == 0 && wr == 0)
		return why(r, "%s: no tensor sizes recorded (nothing to price)", c->name);
	snprintf(r->spec, sizeof r->spec, "memory read=%lld write=%lld", (long long)rd, (long long)wr);
	return 0;
}

static int derive_gather(const struct calib_derive_rule *x, const struct fw_call *c,
                         const struct calib_derive_opts *o, struct calib_derived *r)
{
	const struct fw_tensor *src, *idx;
	int rc;
	if ((rc = tensor(c, x->a, 1, &src, r)) || (rc = tensor(c, x->b, 0, &idx, r)))
		return rc;
	int64_t rows = fw_tensor_elements(idx), src_elems = fw_tensor_elements(src);
	int64_t row = prod(src, 1, src->rank), src_bytes = bytes_of(src, o, r);
	if (rows < 0 || row < 0 || src_elems <= 0 || src_bytes < 0 || (row && rows > (INT64_C(1) << 56) / row))
		return why(r, "%s: sizes too large", c->name);
	int64_t elem = src_bytes / src_elems, out = rows * row * elem;
	int64_t rd = out + bytes_of(idx, o, r); /* the rows picked, and the index */
	return memory_spec(c, rd, out, r);
}

static int derive_memory(const struct calib_derive_rule *x, const struct fw_call *c,
                         const struct calib_derive_opts *o, struct calib_derived *r)
{
	int64_t rd = 0, wr = 0, largest = 0, sum = 0;
	for (int i = 0; i < c->n_kept; i++) {
		const struct fw_tensor *t = &c->in[i];
		if (t->rank < 0)
			continue;
		int64_t b = bytes_of(t, o, r);
		if (b < 0)
			return why(r, "%s: sizes too large", c->name);
		bool reads = x->read_all;
		for (int j = 0; j < x->n_read; j++)
			reads |= x->read[j] == t->arg;
		if (reads)
			rd += b;
		if (b > largest)
			largest = b;
		sum += b;
		if ((x->write == CALIB_WRITE_FIRST && t->arg == 0))
			wr += b;
		for (int j = 0; x->write == CALIB_WRITE_LIST && j < x->n_write; j++)
			if (x->writes[j] == t->arg)
				wr += b;
	}
	if (x->write == CALIB_WRITE_LARGEST)
		wr = largest;
	else if (x->write == CALIB_WRITE_SUM)
		wr = sum;
	if (x->write == CALIB_WRITE_FIRST && rd == 0 && wr == 0)
		return why(r, "%s: its output (argument 0) has no recorded size", c->name);
	return memory_spec(c, rd, wr, r);
}

int calib_derive_op(const struct calib_derive *d, const struct fw_call *c, const struct calib_derive_opts *o,
                    struct calib_derived *r)
{
	struct calib_derive_opts def = {.dtype = DT_BF16};
	if (!o)
		o = &def;
	memset(r, 0, sizeof *r);
	r->rule = calib_derive_find(d, c->name);
	if (r->rule < 0) {
		snprintf(r->why, sizeof r->why, "%s: no derivation rule matches the operator", c->name);
		return -ENOENT;
	}
	const struct calib_derive_rule *x = &d->rule[r->rule];
	if (x->form == CALIB_FORM_SKIP) {
		r->skipped = true;
		snprintf(r->why, sizeof r->why, "skipped by derivation rule '%s'", x->name);
		return -ENOENT;
	}
	if (c->truncated && x->form != CALIB_FORM_MEMORY)
		return why(r, "%s: more inputs or dims than k3sim keeps", c->name);
	int rc;
	switch (x->form) {
	case CALIB_FORM_GEMM:
	case CALIB_FORM_LINEAR: rc = derive_gemm(x, c, o, r); break;
	case CALIB_FORM_GROUPED_GEMM: rc = derive_grouped(x, c, o, r); break;
	case CALIB_FORM_ATTENTION: rc = derive_attention(x, c, o, r); break;
	case CALIB_FORM_COLLECTIVE: rc = derive_collective(x, c, o, r); break;
	case CALIB_FORM_GATHER: rc = derive_gather(x, c, o, r); break;
	default: rc = derive_memory(x, c, o, r); break;
	}
	if (rc)
		return rc;
	struct err pe = {0};
	if (opspec_parse_line(r->spec, &r->op, &pe) < 0)
		return why(r, "%s: '%s' is not a valid op: %s", c->name, r->spec, pe.msg);
	return 0;
}
