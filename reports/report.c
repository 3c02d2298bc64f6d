/* The comparison report: tables and charts from a struct compare, written as Markdown, HTML,
 * JSON and SQLite. */
#include "reports/report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "reports/fmt.h"
#include "sweep/sweepdb.h"
#include "util/jsonw.h"

#define GIB 1073741824.0
#define MIB 1048576.0

/* ---- a table model rendered as Markdown and HTML ---- */

enum { RT_TEXT = 200 };

struct rcell {
	char text[RT_TEXT];
	bool has_value; /* a number, in the table's unit (the text without its '*') */
	double value;
	const char *src_table; /* "points" or "at_max_batch": value = column * scale of that point */
	int64_t src_point;
	const char *src_col;
	double scale;
	bool dash; /* a number that does not exist ('-'): aligned as numbers */
};

struct rtable {
	char id[32];
	char title[200];
	char note[400];
	int n_rows, n_cols; /* column 0 holds the row labels */
	char (*head)[96];
	struct rcell *cells;
};

static int rt_init(struct rtable *t, const char *id, int rows, int cols)
{
	memset(t, 0, sizeof *t);
	snprintf(t->id, sizeof t->id, "%s", id);
	t->n_rows = rows;
	t->n_cols = cols;
	t->head = calloc((size_t)cols, sizeof *t->head);
	t->cells = calloc((size_t)rows * (size_t)cols, sizeof *t->cells);
	return t->head && t->cells ? 0 : -ENOMEM;
}

static void rt_release(struct rtable *t)
{
	free(t->head);
	free(t->cells);
	memset(t, 0, sizeof *t);
}

static struct rcell *rt_cell(struct rtable *t, int i, int j)
{
	return &t->cells[(size_t)i * (size_t)t->n_cols + (size_t)j];
}

static void rt_title(struct rtable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rt_title(struct rtable *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->title, sizeof t->title, fmt, ap);
	va_end(ap);
}

static void rt_note(struct rtable *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rt_note(struct rtable *t, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->note, sizeof t->note, fmt, ap);
	va_end(ap);
}

static void rt_head(struct rtable *t, int j, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void rt_head(struct rtable *t, int j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->head[j], sizeof t->head[j], fmt, ap);
	va_end(ap);
}

static void rt_text(struct rtable *t, int i, int j, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void rt_text(struct rtable *t, int i, int j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rt_cell(t, i, j)->text, RT_TEXT, fmt, ap);
	va_end(ap);
}

/* A number; `flag` appends '*' (the point does not fit in HBM). */
static void rt_num(struct rtable *t, int i, int j, double v, bool flag)
{
	struct rcell *c = rt_cell(t, i, j);
	char buf[48];
	c->has_value = true;
	c->value = v;
	snprintf(c->text, sizeof c->text, "%s%s", fmt_sig4(v, buf, sizeof buf), flag ? "*" : "");
}

/* The value of a row's column (by name), as a double. */
static double row_value(const struct sweep_row *r, const char *col)
{
	const struct sweep_column *c = sweep_columns();
	for (int i = 0; i < sweep_n_columns(); i++) {
		if (strcmp(c[i].name, col) != 0)
			continue;
		const char *p = (const char *)r + c[i].offset;
		if (c[i].type == SWEEP_COL_INT) {
			int64_t v;
			memcpy(&v, p, sizeof v);
			return (double)v;
		}
		if (c[i].type == SWEEP_COL_REAL) {
			double v;
			memcpy(&v, p, sizeof v);
			return v;
		}
	}
	return NAN;
}

static bool col_is_int(const char *col)
{
	const struct sweep_column *c = sweep_columns();
	for (int i = 0; i < sweep_n_columns(); i++)
		if (strcmp(c[i].name, col) == 0)
			return c[i].type == SWEEP_COL_INT;
	return false;
}

/* A point's output: value = column * scale, with its source; '-' when the point failed. */
static void rt_point(struct rtable *t, int i, int j, const char *table, const struct sweep_row *r,
                     const char *col, double scale, bool flag)
{
	if (!r->ok) {
		rt_text(t, i, j, "-");
		rt_cell(t, i, j)->dash = true;
		return;
	}
	rt_num(t, i, j, row_value(r, col) * scale, flag);
	struct rcell *c = rt_cell(t, i, j);
	if (scale == 1 && col_is_int(col))
		snprintf(c->text, sizeof c->text, "%.0f%s", c->value, flag ? "*" : "");
	c->src_table = table;
	c->src_point = r->point;
	c->src_col = col;
	c->scale = scale;
}

/* ---- building the tables ---- */

enum {
	T_MODELS,
	T_MEMORY,
	T_HBM,
	T_MAX_BATCH,
	T_TTFT,
	T_TPOT,
	T_TPUT,
	T_TPUT_BEST,
	T_TPUT_BATCH,
	T_DECODE,
	T_PREFILL,
	T_CLAIMS,
	T_COUNT
};

struct tables {
	struct rtable t[T_COUNT];
	bool present[T_COUNT];
};

static const char *ctx_label(const struct compare *c, int x, char *buf, size_t cap)
{
	return fmt_tokens(compare_context(c, x), buf, cap);
}

/* Rows: contexts; columns: models. */
static int per_context(struct rtable *t, const struct compare *c, const char *id)
{
	int rc = rt_init(t, id, c->n_contexts, 1 + c->n_models);
	if (rc < 0)
		return rc;
	rt_head(t, 0, "context");
	for (int m = 0; m < c->n_models; m++)
		rt_head(t, 1 + m, "%s", compare_model(c, m)->name);
	for (int x = 0; x < c->n_contexts; x++) {
		char buf[32];
		rt_text(t, x, 0, "%s", ctx_label(c, x, buf, sizeof buf));
	}
	return 0;
}

static int build_models(struct rtable *t, const struct compare *c)
{
	enum { R_LAYERS, R_DSA, R_PARAMS, R_WEIGHTS, R_WEIGHTS_GPU, R_KV, R_STATE, R_DTYPES, R_SOURCE, R_N };
	int rc = rt_init(t, "models", R_N, 1 + c->n_models);
	if (rc < 0)
		return rc;
	rt_title(t, "What each design holds");
	rt_head(t, 0, "%s", "");
	static const char *const labels[R_N] = {
	    "layers: KDA + MLA",
	    "sparse attention (DSA indexer)",
	    "parameters: total / active per token",
	    "weights, whole model (GiB)",
	    "weights per GPU at this layout (GiB)",
	    "KV cache per token, all layers (KiB)",
	    "state per request: KDA + ShortConv (MiB)",
	    "weights / routed experts",
	    "dimensions from",
	};
	for (int r = 0; r < R_N; r++)
		rt_text(t, r, 0, "%s", labels[r]);
	for (int m = 0; m < c->n_models; m++) {
		const struct model *md = compare_model(c, m);
		const struct sweep_row *row = compare_row(c, m, 0, c->ref_batch);
		struct model_inventory inv;
		char a[32], b[32];
		model_inventory(md, &inv);
		rt_head(t, 1 + m, "%s", md->name);
		rt_text(t, R_LAYERS, 1 + m, "%d + %d", inv.kda_layers, inv.mla_layers);
		if (md->dsa.index_heads)
			rt_text(t, R_DSA, 1 + m, "%lld heads x %lld, top-%lld",
			        (long long)md->dsa.index_heads, (long long)md->dsa.index_head_dim,
			        (long long)md->dsa.top_k);
		else
			rt_text(t, R_DSA, 1 + m, "no");
		rt_text(t, R_PARAMS, 1 + m, "%s / %s", fmt_count((double)inv.params_total, a, sizeof a),
		        fmt_count((double)inv.params_active, b, sizeof b));
		rt_point(t, R_WEIGHTS, 1 + m, "points", row, "weights_bytes", 1 / GIB, false);
		rt_point(t, R_WEIGHTS_GPU, 1 + m, "points", row, "hbm_weights", 1 / GIB, false);
		/* Model-level figures stay meaningful when the layout fails. */
		struct sweep_row any = *row;
		any.ok = 1;
		rt_point(t, R_KV, 1 + m, "points", &any, "kv_bytes_per_token", 1 / 1024.0, false);
		rt_point(t, R_STATE, 1 + m, "points", &any, "state_bytes_per_request", 1 / MIB, false);
		if (!row->ok)
			rt_cell(t, R_KV, 1 + m)->src_table = rt_cell(t, R_STATE, 1 + m)->src_table = NULL;
		rt_text(t, R_DTYPES, 1 + m, "%s / %s", dtype_name(md->weight_dtype),
		        dtype_name(md->expert_dtype));
		rt_text(t, R_SOURCE, 1 + m, "%s", md->source);
	}
	return 0;
}

static int build_tables(struct tables *T, const struct compare *c)
{
	const struct scenario *s = &c->spec.base;
	const int ref = c->ref_batch;
	const long long B = (long long)s->batch;
	int rc;
	struct rtable *t;
	char a[32], b[32];

	if ((rc = build_models(&T->t[T_MODELS], c)) < 0)
		return rc;
	T->present[T_MODELS] = true;

	t = &T->t[T_MEMORY];
	if ((rc = per_context(t, c, "memory_per_request")) < 0)
		return rc;
	rt_title(t,
	         "Memory per request: state + KV cache of all layers at context + %lld output tokens (GiB)",
	         (long long)s->output_tokens);
	rt_note(t, "KDA state in %s, MLA cache in %s; the whole model's layers, before any parallel split.",
	        dtype_name(s->kda_state), dtype_name(s->mla_cache));
	for (int x = 0; x < c->n_contexts; x++)
		for (int m = 0; m < c->n_models; m++) {
			const struct sweep_row *r = compare_row(c, m, x, ref);
			rt_num(t, x, 1 + m,
			       (double)compare_request_bytes(r, r->prompt_tokens + r->output_tokens) / GIB,
			       false);
		}
	T->present[T_MEMORY] = true;

	t = &T->t[T_HBM];
	if ((rc = per_context(t, c, "hbm_per_gpu")) < 0)
		return rc;
	rt_title(t, "HBM per GPU at batch %lld (GiB)", B);
	rt_note(t,
	        "Weights + state + KV cache + activations + workspace at the final context, against %s of "
	        "capacity. * does not fit.",
	        fmt_bytes((double)compare_row(c, 0, 0, ref)->hbm_capacity, a, sizeof a));
	for (int x = 0; x < c->n_contexts; x++)
		for (int m = 0; m < c->n_models; m++) {
			const struct sweep_row *r = compare_row(c, m, x, ref);
			rt_point(t, x, 1 + m, "points", r, "hbm_total", 1 / GIB, !r->fits);
		}
	T->present[T_HBM] = true;

	t = &T->t[T_MAX_BATCH];
	if ((rc = per_context(t, c, "max_batch")) < 0)
		return rc;
	rt_title(t, "Largest batch that fits (requests over all %lld GPUs)", (long long)s->gpus);
	rt_note(t, "Concurrent requests at the final context, in steps of the attention DP degree (%lld).",
	        (long long)s->dp);
	for (int x = 0; x < c->n_contexts; x++)
		for (int m = 0; m < c->n_models; m++)
			rt_point(t, x, 1 + m, "points", compare_row(c, m, x, ref), "max_batch", 1, false);
	T->present[T_MAX_BATCH] = true;

	t = &T->t[T_TTFT];
	if ((rc = per_context(t, c, "ttft")) < 0)
		return rc;
	rt_title(t, "TTFT: prefill of one prompt of `context` tokens (s)");
	rt_note(t, "One request alone, in chunks of %lld tokens.", (long long)c->spec.prefill_chunk);
	for (int x = 0; x < c->n_contexts; x++)
		for (int m = 0; m < c->n_models; m++)
			rt_point(t, x, 1 + m, "points", compare_row(c, m, x, ref), "ttft_s", 1, false);
	T->present[T_TTFT] = true;

	t = &T->t[T_TPOT];
	if ((rc = per_context(t, c, "tpot")) < 0)
		return rc;
	rt_title(t, "TPOT at batch %lld (ms)", B);
	rt_note(t,
	        "One decode step of the whole batch at the mean context of the generation "
	        "(context + %lld). * does not fit in HBM: the time the step would take.",
	        (long long)(s->output_tokens - 1) / 2);
	for (int x = 0; x < c->n_contexts; x++)
		for (int m = 0; m < c->n_models; m++) {
			const struct sweep_row *r = compare_row(c, m, x, ref);
			rt_point(t, x, 1 + m, "points", r, "tpot_s", 1e3, !r->fits);
		}
	T->present[T_TPOT] = true;

	t = &T->t[T_TPUT];
	if ((rc = per_context(t, c, "throughput")) < 0)
		return rc;
	rt_title(t, "Decode tokens/s per GPU at batch %lld", B);
	rt_note(t, "Batch / TPOT / %lld GPUs. * does not fit in HBM.", (long long)s->gpus);
	for (int x = 0; x < c->n_contexts; x++)
		for (int m = 0; m < c->n_models; m++) {
			const struct sweep_row *r = compare_row(c, m, x, ref);
			rt_point(t, x, 1 + m, "points", r, "tokens_per_s_per_gpu", 1, !r->fits);
		}
	T->present[T_TPUT] = true;

	t = &T->t[T_TPUT_BEST];
	if ((rc = rt_init(t, "throughput_max_batch", c->n_contexts, 1 + 2 * c->n_models)) < 0)
		return rc;
	rt_title(t, "Decode tokens/s per GPU at the largest batch that fits");
	rt_note(t, "Each design at its own largest batch at that context; - when not one request fits.");
	rt_head(t, 0, "context");
	for (int m = 0; m < c->n_models; m++) {
		rt_head(t, 1 + 2 * m, "%s batch", compare_model(c, m)->name);
		rt_head(t, 2 + 2 * m, "%s tok/s/GPU", compare_model(c, m)->name);
	}
	for (int x = 0; x < c->n_contexts; x++) {
		rt_text(t, x, 0, "%s", ctx_label(c, x, a, sizeof a));
		for (int m = 0; m < c->n_models; m++) {
			const struct sweep_row *r = compare_best(c, m, x);
			rt_point(t, x, 1 + 2 * m, "at_max_batch", r, "batch", 1, false);
			rt_point(t, x, 2 + 2 * m, "at_max_batch", r, "tokens_per_s_per_gpu", 1, !r->fits);
		}
	}
	T->present[T_TPUT_BEST] = true;

	if (c->n_batches > 1) {
		t = &T->t[T_TPUT_BATCH];
		if ((rc = rt_init(t, "throughput_by_batch", c->n_contexts, 1 + c->n_models * c->n_batches)) <
		    0)
			return rc;
		rt_title(t, "Decode tokens/s per GPU by batch size");
		rt_note(t, "* does not fit in HBM.");
		rt_head(t, 0, "context");
		for (int m = 0; m < c->n_models; m++)
			for (int k = 0; k < c->n_batches; k++)
				rt_head(t, 1 + m * c->n_batches + k, "%s b=%lld", compare_model(c, m)->name,
				        (long long)compare_batch(c, k));
		for (int x = 0; x < c->n_contexts; x++) {
			rt_text(t, x, 0, "%s", ctx_label(c, x, a, sizeof a));
			for (int m = 0; m < c->n_models; m++)
				for (int k = 0; k < c->n_batches; k++) {
					const struct sweep_row *r = compare_row(c, m, x, k);
					rt_point(t, x, 1 + m * c->n_batches + k, "points", r,
					         "tokens_per_s_per_gpu", 1, !r->fits);
				}
		}
		T->present[T_TPUT_BATCH] = true;
	}

	/* Op-class breakdowns: the classes that take time anywhere. */
	for (int ph = 0; ph < 2; ph++) {
		bool used[OPC_COUNT] = {false};
		int n_used = 0;
		for (int m = 0; m < c->n_models; m++)
			for (int x = 0; x < c->n_contexts; x++) {
				const struct sweep_row *r = compare_row(c, m, x, ref);
				for (int k = 0; k < OPC_COUNT; k++)
					used[k] |= r->ok && (ph ? r->decode_s[k] : r->prefill_s[k]) > 0;
			}
		for (int k = 0; k < OPC_COUNT; k++)
			n_used += used[k];
		t = &T->t[ph ? T_DECODE : T_PREFILL];
		if ((rc = rt_init(t, ph ? "decode_breakdown" : "prefill_breakdown",
		                  c->n_models * c->n_contexts, 2 + n_used)) < 0)
			return rc;
		if (ph)
			rt_title(t, "Where a decode step goes, at batch %lld (ms per step, one GPU)", B);
		else
			rt_title(t, "Where the prefill goes (s for the whole prompt, one GPU)");
		rt_note(t, "Op classes as defined under Assumptions; the last column is the %s.",
		        ph ? "TPOT" : "TTFT");
		rt_head(t, 0, "design, context");
		int j = 1;
		for (int k = 0; k < OPC_COUNT; k++)
			if (used[k])
				rt_head(t, j++, "%s", opclass_label((enum opclass)k));
		rt_head(t, j, "%s", ph ? "TPOT" : "TTFT");
		for (int m = 0; m < c->n_models; m++)
			for (int x = 0; x < c->n_contexts; x++) {
				int i = m * c->n_contexts + x;
				const struct sweep_row *r = compare_row(c, m, x, ref);
				double scale = ph ? 1e3 : 1;
				rt_text(t, i, 0, "%s, %s", compare_model(c, m)->name,
				        ctx_label(c, x, a, sizeof a));
				j = 1;
				for (int k = 0; k < OPC_COUNT; k++) {
					if (!used[k])
						continue;
					char col[48];
					snprintf(col, sizeof col, "%s_%s_s", ph ? "decode" : "prefill",
					         opclass_key((enum opclass)k));
					/* The column name must outlive the table: use the column table's. */
					const char *name = NULL;
					for (int q = 0; q < sweep_n_columns(); q++)
						if (strcmp(sweep_columns()[q].name, col) == 0)
							name = sweep_columns()[q].name;
					rt_point(t, i, j++, "points", r, name, scale, false);
				}
				rt_point(t, i, j, "points", r, ph ? "tpot_s" : "ttft_s", scale, false);
			}
		T->present[ph ? T_DECODE : T_PREFILL] = true;
	}

	if (c->n_claims) {
		t = &T->t[T_CLAIMS];
		if ((rc = rt_init(t, "claims", c->n_claims, 4)) < 0)
			return rc;
		rt_title(t, "Published claims beside this tool's numbers");
		rt_note(t, "The tool's numbers are for this scenario's hardware, layout and batch, not the "
		           "setup of the publication.");
		rt_head(t, 0, "what");
		rt_head(t, 1, "published");
		rt_head(t, 2, "k3sim");
		rt_head(t, 3, "source");
		for (int i = 0; i < c->n_claims; i++) {
			rt_text(t, i, 0, "%s", c->claims[i].what);
			rt_text(t, i, 1, "%s", c->claims[i].published);
			rt_text(t, i, 2, "%s", c->claims[i].tool);
			rt_text(t, i, 3, "%s", c->claims[i].source);
		}
		T->present[T_CLAIMS] = true;
	}
	(void)b;
	return 0;
}

/* ---- charts ---- */

enum { CH_MEMORY, CH_HBM, CH_MAX_BATCH, CH_TTFT, CH_TPOT, CH_TPUT, CH_LINES };
enum { CB_DECODE, CB_PREFILL, CH_BARS };

struct charts {
	struct chart_line lines[CH_LINES];
	struct chart_bars bars[CH_BARS];
};

static void line_init(struct chart_line *l, const struct compare *c, const char *name, const char *ylabel,
                      bool logy)
{
	memset(l, 0, sizeof *l);
	snprintf(l->name, sizeof l->name, "%s", name);
	snprintf(l->xlabel, sizeof l->xlabel, "context (tokens, log scale)");
	snprintf(l->ylabel, sizeof l->ylabel, "%s", ylabel);
	l->logy = logy;
	l->n_x = c->n_contexts < CHART_MAX_X ? c->n_contexts : CHART_MAX_X;
	for (int x = 0; x < l->n_x; x++)
		l->x[x] = compare_context(c, x);
}

static struct chart_series *series(struct chart_line *l, const char *title, int color, bool dashed)
{
	struct chart_series *s = &l->series[l->n_series++];
	snprintf(s->title, sizeof s->title, "%.*s", (int)sizeof s->title - 1, title);
	s->color = color;
	s->dashed = dashed;
	for (int i = 0; i < CHART_MAX_X; i++)
		s->y[i] = NAN;
	return s;
}

/* A line per model from a table's cells (NAN where the cell has no value). */
static void lines_from_table(struct chart_line *l, const struct rtable *t, const struct compare *c)
{
	for (int m = 0; m < c->n_models && l->n_series < CHART_MAX_SERIES; m++) {
		struct chart_series *s = series(l, compare_model(c, m)->name, m, false);
		for (int x = 0; x < l->n_x; x++) {
			const struct rcell *cell = &t->cells[(size_t)x * (size_t)t->n_cols + 1 + (size_t)m];
			s->y[x] = cell->has_value ? cell->value : NAN;
		}
	}
}

/* The contexts shown in the breakdown bars: smallest, one in the middle (log scale), largest. */
static int bar_contexts(const struct compare *c, int out[3])
{
	if (c->n_contexts <= 3) {
		for (int i = 0; i < c->n_contexts; i++)
			out[i] = i;
		return c->n_contexts;
	}
	out[0] = 0;
	out[1] = c->n_contexts / 2;
	out[2] = c->n_contexts - 1;
	return 3;
}

static void bars_build(struct chart_bars *cb, const struct compare *c, bool decode)
{
	const struct scenario *s = &c->spec.base;
	memset(cb, 0, sizeof *cb);
	snprintf(cb->name, sizeof cb->name, "%s", decode ? "decode_breakdown" : "prefill_breakdown");
	if (decode)
		snprintf(cb->title, sizeof cb->title, "Where a decode step goes (batch %lld), by op class",
		         (long long)s->batch);
	else
		snprintf(cb->title, sizeof cb->title, "Where the prefill (TTFT) goes, by op class");
	snprintf(cb->ylabel, sizeof cb->ylabel, "share of the %s (%%)", decode ? "decode step" : "prefill");
	cb->ymax = 100;
	bool used[OPC_COUNT] = {false};
	int map[OPC_COUNT];
	for (int m = 0; m < c->n_models; m++)
		for (int x = 0; x < c->n_contexts; x++) {
			const struct sweep_row *r = compare_row(c, m, x, c->ref_batch);
			for (int k = 0; k < OPC_COUNT; k++)
				used[k] |= r->ok && (decode ? r->decode_s[k] : r->prefill_s[k]) > 0;
		}
	for (int k = 0; k < OPC_COUNT; k++) {
		map[k] = -1;
		if (used[k] && cb->n_stack < CHART_MAX_STACK) {
			map[k] = cb->n_stack;
			snprintf(cb->stack_titles[cb->n_stack++], sizeof cb->stack_titles[0], "%s",
			         opclass_label((enum opclass)k));
		}
	}
	int xs[3], nx = bar_contexts(c, xs);
	for (int g = 0; g < nx && g < CHART_MAX_GROUPS; g++) {
		char t[32];
		snprintf(cb->group_titles[cb->n_groups++], sizeof cb->group_titles[0], "context %s",
		         fmt_tokens(compare_context(c, xs[g]), t, sizeof t));
		for (int m = 0; m < c->n_models && cb->n_bars < CHART_MAX_BARS; m++) {
			const struct sweep_row *r = compare_row(c, m, xs[g], c->ref_batch);
			int b = cb->n_bars++;
			snprintf(cb->bar_labels[b], sizeof cb->bar_labels[0], "%.47s",
			         compare_model(c, m)->name);
			cb->group_of[b] = g;
			double total = r->ok ? (decode ? r->tpot_s : r->ttft_s) : 0;
			for (int k = 0; k < OPC_COUNT; k++)
				if (map[k] >= 0)
					cb->values[b][map[k]] =
					    total > 0
					        ? 100 * (decode ? r->decode_s[k] : r->prefill_s[k]) / total
					        : 0;
		}
	}
}

static void charts_build(struct charts *ch, const struct tables *T, const struct compare *c)
{
	const struct scenario *s = &c->spec.base;
	struct chart_line *l;
	char unit[64];

	l = &ch->lines[CH_MEMORY];
	line_init(l, c, "memory_per_request", "GiB per request (log scale)", true);
	snprintf(l->title, sizeof l->title, "Memory per request: state + KV cache, all layers");
	lines_from_table(l, &T->t[T_MEMORY], c);

	l = &ch->lines[CH_HBM];
	line_init(l, c, "hbm_per_gpu", "HBM per GPU (GiB, log scale)", true);
	snprintf(l->title, sizeof l->title, "HBM per GPU at batch %lld (above the gray line: does not fit)",
	         (long long)s->batch);
	lines_from_table(l, &T->t[T_HBM], c);
	struct chart_series *cap = series(l, "capacity", -1, true);
	for (int x = 0; x < l->n_x; x++)
		cap->y[x] = (double)compare_row(c, 0, 0, c->ref_batch)->hbm_capacity / GIB;

	l = &ch->lines[CH_MAX_BATCH];
	line_init(l, c, "max_batch", "requests (log scale)", true);
	snprintf(l->title, sizeof l->title, "Largest batch that fits on %lld GPUs", (long long)s->gpus);
	lines_from_table(l, &T->t[T_MAX_BATCH], c);

	l = &ch->lines[CH_TTFT];
	line_init(l, c, "ttft", "TTFT (s, log scale)", true);
	snprintf(l->title, sizeof l->title, "TTFT: prefill of one prompt");
	lines_from_table(l, &T->t[T_TTFT], c);

	l = &ch->lines[CH_TPOT];
	line_init(l, c, "tpot", "TPOT (ms, log scale)", true);
	snprintf(l->title, sizeof l->title, "TPOT at batch %lld", (long long)s->batch);
	lines_from_table(l, &T->t[T_TPOT], c);

	l = &ch->lines[CH_TPUT];
	snprintf(unit, sizeof unit, "tokens/s per GPU (log scale)");
	line_init(l, c, "throughput", unit, true);
	snprintf(l->title, sizeof l->title,
	         "Decode throughput: batch %lld (solid), largest batch that fits (dashed)",
	         (long long)s->batch);
	for (int m = 0; m < c->n_models && l->n_series + 1 < CHART_MAX_SERIES; m++) {
		char title[80];
		snprintf(title, sizeof title, "%s, batch %lld", compare_model(c, m)->name,
		         (long long)s->batch);
		struct chart_series *a = series(l, title, m, false);
		snprintf(title, sizeof title, "%s, largest batch", compare_model(c, m)->name);
		struct chart_series *b = series(l, title, m, true);
		for (int x = 0; x < l->n_x; x++) {
			const struct sweep_row *r = compare_row(c, m, x, c->ref_batch),
			                       *best = compare_best(c, m, x);
			a->y[x] = r->ok ? r->tokens_per_s_per_gpu : NAN;
			b->y[x] = best->ok ? best->tokens_per_s_per_gpu : NAN;
		}
	}
	/* Crossovers as marker lines on the charts of their metric. */
	for (int i = 0; i < c->n_cross; i++) {
		const struct compare_crossover *x = &c->cross[i];
		int k = x->metric == CMP_STATE_KV_PER_REQUEST ? CH_MEMORY
		        : x->metric == CMP_TTFT               ? CH_TTFT
		        : x->metric == CMP_TPOT               ? CH_TPOT
		                                              : -1;
		if (k < 0 || !x->context || ch->lines[k].n_marks == 4)
			continue;
		struct chart_line *cl = &ch->lines[k];
		const char *lo = compare_model(c, x->a_lower_above ? x->a : x->b)->name;
		const char *hi = compare_model(c, x->a_lower_above ? x->b : x->a)->name;
		char n[32];
		cl->mark_x[cl->n_marks] = x->context;
		snprintf(cl->mark_label[cl->n_marks++], sizeof cl->mark_label[0], "%.30s below %.30s from %s",
		         lo, hi, fmt_int(x->context, n, sizeof n));
	}
	bars_build(&ch->bars[CB_DECODE], c, true);
	bars_build(&ch->bars[CB_PREFILL], c, false);
}

/* ---- Markdown ---- */

static void md_table(FILE *f, const struct rtable *t)
{
	fprintf(f, "\n**%s**", t->title);
	if (t->note[0])
		fprintf(f, " %s", t->note);
	fprintf(f, "\n\n<!-- table: %s -->\n|", t->id);
	for (int j = 0; j < t->n_cols; j++) {
		fputc(' ', f);
		fmt_md_cell(f, t->head[j]);
		fprintf(f, " |");
	}
	fprintf(f, "\n|");
	for (int j = 0; j < t->n_cols; j++) {
		bool num = false;
		for (int i = 0; i < t->n_rows; i++)
			num |= t->cells[(size_t)i * (size_t)t->n_cols + (size_t)j].has_value;
		fprintf(f, "%s", j == 0 || !num ? " --- |" : " ---: |");
	}
	fputc('\n', f);
	for (int i = 0; i < t->n_rows; i++) {
		fputc('|', f);
		for (int j = 0; j < t->n_cols; j++) {
			fputc(' ', f);
			fmt_md_cell(f, t->cells[(size_t)i * (size_t)t->n_cols + (size_t)j].text);
			fprintf(f, " |");
		}
		fputc('\n', f);
	}
}

/* ---- the text shared by both formats ---- */

struct para {
	char text[1200];
};

enum { MAX_FINDINGS = 24, MAX_ASSUME = 16 };

struct prose {
	char title[256];
	char setup[1200];
	struct para findings[MAX_FINDINGS];
	int n_findings;
	struct para cross[COMPARE_MAX_CROSSOVERS];
	int n_cross;
	struct para no_cross[COMPARE_MAX_CROSSOVERS];
	int n_no_cross;
	struct para assume[MAX_ASSUME];
	int n_assume;
	char opclasses[1600];
};

static void add(struct para *list, int *n, int cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void add(struct para *list, int *n, int cap, const char *fmt, ...)
{
	if (*n >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(list[*n].text, sizeof list[*n].text, fmt, ap);
	va_end(ap);
	(*n)++;
}

static void prose_build(struct prose *p, const struct compare *c)
{
	const struct scenario *s = &c->spec.base;
	const struct hw *hw = c->spec.hws[0];
	const int last = c->n_contexts - 1, ref = c->ref_batch;
	char a[48], b[48], d[48], cm[32];
	memset(p, 0, sizeof *p);
	size_t len = 0;
	for (int m = 0; m < c->n_models; m++)
		len += (size_t)snprintf(p->title + len, sizeof p->title - len, "%s%s", m == 0 ? "" : " vs ",
		                        compare_model(c, m)->name);
	fmt_tokens(compare_context(c, last), cm, sizeof cm);
	snprintf(p->setup, sizeof p->setup,
	         "%lld x %s%s, attention TP%lld x DP%lld x CP%lld, MoE EP%lld; context %s to %s with %lld "
	         "output tokens; reference batch %lld. Scenario `%s`%s%s.",
	         (long long)s->gpus, hw->description[0] ? hw->description : hw->name,
	         hw->calibrated                         ? " (calibrated)"
	         : strstr(hw->description, "datasheet") ? ""
	                                                : " (datasheet)",
	         (long long)s->tp, (long long)s->dp, (long long)s->cp, (long long)s->ep,
	         ctx_label(c, 0, a, sizeof a), cm, (long long)s->output_tokens, (long long)s->batch, s->name,
	         s->description[0] ? ": " : "", s->description);

	/* Findings: each design at the largest context, then crossovers with a flip, then DSA. */
	for (int m = 0; m < c->n_models; m++) {
		const struct sweep_row *r = compare_row(c, m, last, ref), *best = compare_best(c, m, last);
		const char *name = compare_model(c, m)->name;
		if (!r->ok) {
			add(p->findings, &p->n_findings, MAX_FINDINGS, "**%s** cannot run this layout: %s.",
			    name, r->error);
			continue;
		}
		int64_t req = compare_request_bytes(r, r->prompt_tokens + r->output_tokens);
		if (best->ok)
			add(p->findings, &p->n_findings, MAX_FINDINGS,
			    "**%s** at %s: %s per request (state + KV); up to %lld requests fit; TTFT %s; "
			    "TPOT %s at batch %lld%s; %.1f tokens/s per GPU at its largest batch (%lld).",
			    name, cm, fmt_bytes((double)req, a, sizeof a), (long long)r->max_batch,
			    fmt_time(r->ttft_s, b, sizeof b), fmt_time(r->tpot_s, d, sizeof d),
			    (long long)r->batch, r->fits ? "" : " (which does not fit)",
			    best->tokens_per_s_per_gpu, (long long)best->batch);
		else
			add(p->findings, &p->n_findings, MAX_FINDINGS,
			    "**%s** at %s: %s per request (state + KV); not one request fits in HBM on this "
			    "layout "
			    "(TTFT %s, TPOT %s at batch %lld if it did).",
			    name, cm, fmt_bytes((double)req, a, sizeof a), fmt_time(r->ttft_s, b, sizeof b),
			    fmt_time(r->tpot_s, d, sizeof d), (long long)r->batch);
	}
	/* Which designs fit a request at the largest context; ratios between those that do. */
	char fit[256] = "", nofit[256] = "";
	int n_fit = 0, n_nofit = 0;
	for (int m = 0; m < c->n_models; m++) {
		bool ok = compare_best(c, m, last)->ok;
		char *list = ok ? fit : nofit;
		int *n = ok ? &n_fit : &n_nofit;
		snprintf(list + strlen(list), 256 - strlen(list), "%s%s", *n ? ", " : "",
		         compare_model(c, m)->name);
		(*n)++;
	}
	if (n_fit && n_nofit)
		add(p->findings, &p->n_findings, MAX_FINDINGS,
		    "At %s, %s %s a request in HBM on this layout; %s %s not.", cm, fit,
		    n_fit == 1 ? "fits" : "fit", nofit, n_nofit == 1 ? "does" : "do");
	else if (!n_fit)
		add(p->findings, &p->n_findings, MAX_FINDINGS,
		    "At %s, no design fits a request on this layout.", cm);
	for (int m = 1; m < c->n_models; m++) {
		const struct sweep_row *b0 = compare_best(c, 0, last), *bm = compare_best(c, m, last);
		if (b0->ok && bm->ok)
			add(p->findings, &p->n_findings, MAX_FINDINGS,
			    "At %s, %s decodes %.2fx the tokens/s per GPU of %s, each at its largest batch "
			    "(%lld vs %lld).",
			    cm, compare_model(c, 0)->name,
			    b0->tokens_per_s_per_gpu / bm->tokens_per_s_per_gpu, compare_model(c, m)->name,
			    (long long)b0->batch, (long long)bm->batch);
	}
	for (int i = 0; i < c->n_cross; i++) {
		const struct compare_crossover *x = &c->cross[i];
		if (x->context)
			add(p->cross, &p->n_cross, COMPARE_MAX_CROSSOVERS, "%s", x->text);
		else
			add(p->no_cross, &p->n_no_cross, COMPARE_MAX_CROSSOVERS, "%s", x->text);
	}
	for (int i = 0; i < c->n_cross; i++)
		if (c->cross[i].context &&
		    (c->cross[i].metric == CMP_STATE_KV_PER_REQUEST || c->cross[i].metric == CMP_TPOT))
			add(p->findings, &p->n_findings, MAX_FINDINGS, "%s", c->cross[i].text);
	for (int i = 0; i < c->n_dsa; i++)
		add(p->findings, &p->n_findings, MAX_FINDINGS, "%s", c->dsa[i].text);
	for (int i = 0; i < c->n_claims; i++)
		add(p->findings, &p->n_findings, MAX_FINDINGS, "Published: \"%s\" (%s). k3sim: %s.",
		    c->claims[i].published, c->claims[i].what, c->claims[i].tool);

	add(p->assume, &p->n_assume, MAX_ASSUME, "**Hardware**: %s, %s per GPU, %s. %s Source: %s",
	    hw->description[0] ? hw->description : hw->name, fmt_bytes((double)hw->hbm_bytes, a, sizeof a),
	    hw->calibrated ? "calibrated from measured kernels"
	                   : "datasheet values (not yet calibrated from traces)",
	    hw->calibrated ? ""
	                   : "Rates, bandwidths and latencies are leads; efficiency curves are defaults.",
	    hw->source);
	add(p->assume, &p->n_assume, MAX_ASSUME,
	    "**Layout**: %lld GPUs; attention TP%lld x DP%lld x CP%lld (TP sync by %s), MoE EP%lld with the "
	    "busiest rank at %.2fx the mean rows. The same layout for every design.",
	    (long long)s->gpus, (long long)s->tp, (long long)s->dp, (long long)s->cp,
	    s->tp_rs_ag ? "reduce-scatter + all-gather" : "all-reduce", (long long)s->ep, s->moe_imbalance);
	add(p->assume, &p->n_assume, MAX_ASSUME,
	    "**Workload**: context C is a prompt of C tokens followed by %lld generated tokens. TTFT is the "
	    "prefill of one prompt alone, in chunks of %lld tokens. TPOT is one decode step of the whole "
	    "batch "
	    "at the mean context C + %lld (a step's cost is affine in the context). HBM is per GPU at the "
	    "final "
	    "context C + %lld. The largest batch that fits counts requests at the final context in steps of "
	    "the "
	    "DP degree; throughput is batch / TPOT / GPUs.",
	    (long long)s->output_tokens, (long long)c->spec.prefill_chunk,
	    (long long)(s->output_tokens - 1) / 2, (long long)s->output_tokens);
	add(p->assume, &p->n_assume, MAX_ASSUME,
	    "**Dtypes**: KDA state %s, MLA cache %s%s, activations %s, routed-expert inputs %s, EP dispatch "
	    "%s; "
	    "weights as each model's table row says (BF16 or FP8 dense weights; MXFP4 routed experts are "
	    "read at "
	    "4.25 bits per weight). Decode steps %s CUDA graphs; %s of workspace per GPU.",
	    dtype_name(s->kda_state), dtype_name(s->mla_cache),
	    s->mla_cache == DT_FP8 ? " (FlashMLA layout, 656 B per token-layer)" : "", dtype_name(s->act),
	    dtype_name(s->expert_act), dtype_name(s->dispatch), s->cuda_graph ? "run as" : "without",
	    fmt_bytes((double)compare_row(c, 0, 0, ref)->hbm_workspace, b, sizeof b));
	add(p->assume, &p->n_assume, MAX_ASSUME,
	    "**Models**: dimensions from the published configs; `k3-full-mla`, `k3-dsa` and "
	    "`kimi-linear-full-mla` are counterfactuals (every layer MLA, with a DeepSeek-V3.2 indexer for "
	    "DSA; "
	    "everything else as the base model). Counting: input embedding excluded from active parameters, "
	    "LM head included.");
	add(p->assume, &p->n_assume, MAX_ASSUME,
	    "**Not modeled**: overlap of communication and compute (a step is the sum of its ops), serving "
	    "dynamics (arrivals, continuous batching, prefix reuse, speculative decoding), pipeline "
	    "parallelism, paging overhead of the KV and state pools. The MLA latent cache is held whole by "
	    "every TP rank of a group (it is shared by all heads); the KDA state is split over TP.");
	add(p->assume, &p->n_assume, MAX_ASSUME,
	    "**Crossovers** are found by bisection on the integer context between the swept points where the "
	    "order of two designs changes; a metric that changes order twice between two swept points would "
	    "be missed.");
	snprintf(
	    p->opclasses, sizeof p->opclasses,
	    "**Op classes**: attention (KDA) = kda.* projections, ShortConv, chunked recurrence or fused "
	    "decode, gate, output projection, and KCP context-parallel fixup/all-gather; attention (MLA) = "
	    "mla.* projections and attention over the latent cache, MLA context parallelism, and the "
	    "sparse-attention part of DSA; DSA indexer = index query/key projections and the indexer scan "
	    "(dsa.attn split by costing its two parts alone); MoE experts = router, top-k, routed and shared "
	    "experts, latent projections; MoE comm (EP) = dispatch and combine all-to-alls; TP comm = "
	    "all-reduce (or reduce-scatter + all-gather) after attention and FFN, embedding and logits; "
	    "dense GEMMs = dense FFN layers and the LM head; other = norms, Block AttnRes, residuals, "
	    "embedding lookup, sampling.");
}

/* ---- files ---- */

/* Every file of the report is written through util/outfile.h: beside its target, renamed into
 * place when complete. */
static int open_out(struct outfile *of, const char *path, const struct outfile_opts *oo, FILE **f,
                    struct err *e)
{
	int rc = outfile_open(of, path, oo, e);
	if (rc < 0)
		return rc;
	if (!(*f = outfile_stream(of, e))) {
		outfile_abort(of);
		return -ENOMEM;
	}
	return 0;
}

static const char *const chart_alt[CH_LINES + CH_BARS] = {
    "Memory per request vs context",
    "HBM per GPU vs context",
    "Largest batch that fits vs context",
    "TTFT vs context",
    "TPOT vs context",
    "Decode throughput vs context",
    "Decode step by op class",
    "Prefill by op class",
};

/* Which chart follows which table in the report. */
static int chart_after_table(int table)
{
	switch (table) {
	case T_MEMORY:
		return CH_MEMORY;
	case T_HBM:
		return CH_HBM;
	case T_MAX_BATCH:
		return CH_MAX_BATCH;
	case T_TTFT:
		return CH_TTFT;
	case T_TPOT:
		return CH_TPOT;
	case T_TPUT_BEST:
		return CH_TPUT;
	case T_DECODE:
		return CH_LINES + CB_DECODE;
	case T_PREFILL:
		return CH_LINES + CB_PREFILL;
	default:
		return -1;
	}
}

static const char *chart_name(const struct charts *ch, int k)
{
	return k < CH_LINES ? ch->lines[k].name : ch->bars[k - CH_LINES].name;
}

/* Sections: a heading, then tables in order. */
struct section {
	const char *heading;
	int tables[4];
	int n;
};

static const struct section sections[] = {
    {"Designs", {T_MODELS}, 1},
    {"Memory", {T_MEMORY, T_HBM, T_MAX_BATCH}, 3},
    {"Latency", {T_TTFT, T_TPOT}, 2},
    {"Throughput", {T_TPUT, T_TPUT_BEST, T_TPUT_BATCH}, 3},
    {"Where the time goes", {T_DECODE, T_PREFILL}, 2},
};

static int write_md(const char *path, const struct outfile_opts *oo, const struct compare *c,
                    const struct tables *T, const struct charts *ch, const struct prose *p,
                    const struct chart_outcome *co, const struct report_opts *o, struct err *e)
{
	struct outfile of;
	FILE *f;
	int orc = open_out(&of, path, oo, &f, e);
	if (orc < 0)
		return orc;
	fprintf(f, "# k3sim comparison: %s\n\n%s\n\n", p->title, p->setup);
	if (!co->rendered)
		fprintf(
		    f,
		    "*Charts were skipped: %s. Every number is in the tables below and in results.json.*\n\n",
		    co->reason);
	fprintf(f, "## Findings\n\n");
	for (int i = 0; i < p->n_findings; i++)
		fprintf(f, "- %s\n", p->findings[i].text);
	for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
		fprintf(f, "\n## %s\n", sections[s].heading);
		for (int k = 0; k < sections[s].n; k++) {
			int t = sections[s].tables[k];
			if (!T->present[t])
				continue;
			md_table(f, &T->t[t]);
			int chart = chart_after_table(t);
			if (chart >= 0 && co->rendered)
				fprintf(f, "\n![%s](charts/%s.png)\n", chart_alt[chart],
				        chart_name(ch, chart));
		}
	}
	fprintf(f, "\n## Crossovers\n\n");
	if (!p->n_cross)
		fprintf(f, "No two designs change order between %s and %s on the metrics compared.\n",
		        fmt_tokens(compare_context(c, 0), (char[32]){0}, 32),
		        fmt_tokens(compare_context(c, c->n_contexts - 1), (char[32]){0}, 32));
	for (int i = 0; i < p->n_cross; i++)
		fprintf(f, "- %s\n", p->cross[i].text);
	if (p->n_no_cross) {
		fprintf(f, "\nNo crossover in range:\n\n");
		for (int i = 0; i < p->n_no_cross; i++)
			fprintf(f, "- %s\n", p->no_cross[i].text);
	}
	for (int i = 0; i < c->n_dsa; i++)
		fprintf(f, "- DSA: %s\n", c->dsa[i].text);
	if (T->present[T_CLAIMS]) {
		fprintf(f, "\n## Published claims\n");
		md_table(f, &T->t[T_CLAIMS]);
	}
	fprintf(f, "\n## Assumptions\n\n");
	for (int i = 0; i < p->n_assume; i++)
		fprintf(f, "- %s\n", p->assume[i].text);
	fprintf(f, "- %s\n", p->opclasses);
	fprintf(
	    f,
	    "\n## Files\n\n`results.json` (every point, every table cell with its source), `results.db` "
	    "(SQLite: tables `points`, `at_max_batch`, `crossovers`), `charts/` (SVG and PNG of each chart, "
	    "with the data and the gnuplot script `charts.gp`).\n\n---\n*k3sim %s: `%s`*\n",
	    o->version ? o->version : "", o->command ? o->command : "k3sim compare");
	return outfile_commit(&of, e);
}

/* ---- HTML ---- */

static void html_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* Markdown-lite for the prose: **bold** and `code`. */
static void html_text(FILE *f, const char *s)
{
	bool bold = false, code = false;
	for (; *s; s++) {
		if (s[0] == '*' && s[1] == '*' && !code) {
			fputs(bold ? "</b>" : "<b>", f);
			bold = !bold;
			s++;
		} else if (*s == '`') {
			fputs(code ? "</code>" : "<code>", f);
			code = !code;
		} else {
			char one[2] = {*s, 0};
			html_escape(f, one);
		}
	}
	if (bold)
		fputs("</b>", f);
	if (code)
		fputs("</code>", f);
}

static void base64(FILE *f, const unsigned char *p, size_t n)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
		             (i + 2 < n ? p[i + 2] : 0);
		fputc(tab[v >> 18 & 63], f);
		fputc(tab[v >> 12 & 63], f);
		fputc(i + 1 < n ? tab[v >> 6 & 63] : '=', f);
		fputc(i + 2 < n ? tab[v & 63] : '=', f);
	}
}

/* Inlines a chart file as a data URI; false when it cannot be read. */
static bool html_image(FILE *f, const char *dir, const char *name, const char *alt)
{
	char path[700];
	const char *ext[2] = {"svg", "png"}, *mime[2] = {"image/svg+xml", "image/png"};
	for (int k = 0; k < 2; k++) {
		snprintf(path, sizeof path, "%s/%s.%s", dir, name, ext[k]);
		FILE *in = fopen(path, "rb");
		if (!in)
			continue;
		enum { CAP = 16 * 1024 * 1024 };
		unsigned char *buf = malloc(CAP);
		size_t n = buf ? fread(buf, 1, CAP, in) : 0;
		fclose(in);
		if (!buf || n == 0 || n == CAP) {
			free(buf);
			continue;
		}
		fprintf(f, "<figure><img alt=\"");
		html_escape(f, alt);
		fprintf(f, "\" src=\"data:%s;base64,", mime[k]);
		base64(f, buf, n);
		fprintf(f, "\"></figure>\n");
		free(buf);
		return true;
	}
	return false;
}

static void html_caption(FILE *f, const struct rtable *t)
{
	fprintf(f, "<p class=\"cap\"><b>");
	html_text(f, t->title);
	fprintf(f, "</b>");
	if (t->note[0]) {
		fprintf(f, " <span class=\"note\">");
		html_text(f, t->note);
		fprintf(f, "</span>");
	}
	fprintf(f, "</p>\n");
}

static void html_table(FILE *f, const struct rtable *t)
{
	fprintf(f, "<div class=\"tw\"><table id=\"%s\">\n<thead><tr>", t->id);
	for (int j = 0; j < t->n_cols; j++) {
		fprintf(f, "<th>");
		html_escape(f, t->head[j]);
		fprintf(f, "</th>");
	}
	fprintf(f, "</tr></thead>\n<tbody>\n");
	for (int i = 0; i < t->n_rows; i++) {
		fprintf(f, "<tr>");
		for (int j = 0; j < t->n_cols; j++) {
			const struct rcell *cell = &t->cells[(size_t)i * (size_t)t->n_cols + (size_t)j];
			bool flag = cell->has_value && strchr(cell->text, '*');
			fprintf(f, "<%s%s>", j == 0 ? "th" : "td",
			        cell->has_value || cell->dash ? (flag ? " class=\"n nf\"" : " class=\"n\"")
			        : j                           ? " class=\"t\""
			                                      : "");
			html_escape(f, cell->text);
			fprintf(f, "</%s>", j == 0 ? "th" : "td");
		}
		fprintf(f, "</tr>\n");
	}
	fprintf(f, "</tbody></table></div>\n");
}

static const char css[] =
    "body{font:15px/1.5 -apple-system,'Segoe UI','DejaVu Sans',Helvetica,Arial,sans-serif;color:#1b1f24;"
    "margin:0;background:#fff}main{max-width:1180px;margin:0 auto;padding:24px 32px 48px}"
    "h1{font-size:26px;margin:8px 0 4px}h2{font-size:20px;margin:36px 0 8px;padding-bottom:4px;"
    "border-bottom:1px solid #d8dee4}p.setup{color:#444;margin:4px 0 16px}"
    "ul{padding-left:22px}li{margin:4px 0}code{font:13px ui-monospace,Menlo,Consolas,monospace;"
    "background:#f3f4f6;padding:1px 4px;border-radius:3px}"
    ".tw{overflow-x:auto;margin:4px 0 8px}table{border-collapse:collapse;font-size:13.5px;"
    "font-variant-numeric:tabular-nums}p.cap{margin:26px 0 6px;font-size:14.5px}"
    ".pair{display:flex;gap:28px;align-items:flex-start}.pair .tw{flex:none;margin:0}"
    ".pair figure{flex:1;min-width:0;margin:0}td.t{white-space:normal;min-width:150px;max-width:340px}"
    ".note{color:#555;font-weight:normal}th,td{padding:4px 10px;border-bottom:1px solid #e6e8eb;"
    "white-space:nowrap}thead th{background:#f6f8fa;border-bottom:2px solid #d0d7de;text-align:right;"
    "white-space:normal;min-width:56px;vertical-align:bottom}"
    "thead th:first-child,tbody th{text-align:left}tbody th{font-weight:600;color:#333}"
    "tbody tr:nth-child(even){background:#fafbfc}td.n{text-align:right}td.nf{color:#a33}"
    "figure{margin:10px 0 20px}figure img{width:100%;max-width:960px;height:auto;border:1px solid #eee}"
    ".skip{background:#fff8e1;border:1px solid #f0d98c;padding:8px 12px;border-radius:4px}"
    "nav{font-size:14px;margin:6px 0 0}nav a{margin-right:14px;color:#0969da;text-decoration:none}"
    "footer{margin-top:40px;color:#666;font-size:13px}";

static int write_html(const char *path, const struct outfile_opts *oo, const char *charts_dir,
                      const struct compare *c, const struct tables *T, const struct charts *ch,
                      const struct prose *p, const struct chart_outcome *co,
                      const struct report_opts *o, struct err *e)
{
	struct outfile of;
	FILE *f;
	int orc = open_out(&of, path, oo, &f, e);
	if (orc < 0)
		return orc;
	fprintf(f,
	        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>k3sim: ");
	html_escape(f, p->title);
	fprintf(f, "</title>\n<style>%s</style></head>\n<body><main>\n<h1>k3sim comparison: ", css);
	html_escape(f, p->title);
	fprintf(f, "</h1>\n<p class=\"setup\">");
	html_text(f, p->setup);
	fprintf(f, "</p>\n<nav><a href=\"#findings\">Findings</a>");
	for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++)
		fprintf(f, "<a href=\"#s%zu\">%s</a>", s, sections[s].heading);
	fprintf(f, "<a href=\"#crossovers\">Crossovers</a>%s<a href=\"#assumptions\">Assumptions</a></nav>\n",
	        T->present[T_CLAIMS] ? "<a href=\"#claims\">Published claims</a>" : "");
	if (!co->rendered) {
		fprintf(f, "<p class=\"skip\">Charts were skipped: ");
		html_escape(f, co->reason);
		fprintf(f, ". Every number is in the tables and in results.json.</p>\n");
	}
	fprintf(f, "<h2 id=\"findings\">Findings</h2>\n<ul>\n");
	for (int i = 0; i < p->n_findings; i++) {
		fprintf(f, "<li>");
		html_text(f, p->findings[i].text);
		fprintf(f, "</li>\n");
	}
	fprintf(f, "</ul>\n");
	for (size_t s = 0; s < sizeof sections / sizeof sections[0]; s++) {
		fprintf(f, "<h2 id=\"s%zu\">%s</h2>\n", s, sections[s].heading);
		for (int k = 0; k < sections[s].n; k++) {
			int t = sections[s].tables[k];
			if (!T->present[t])
				continue;
			int chart = chart_after_table(t);
			bool with_chart = chart >= 0 && co->rendered;
			bool side = with_chart && T->t[t].n_cols <= 5; /* a narrow table beside its chart */
			html_caption(f, &T->t[t]);
			if (side)
				fprintf(f, "<div class=\"pair\">\n");
			html_table(f, &T->t[t]);
			if (with_chart)
				html_image(f, charts_dir, chart_name(ch, chart), chart_alt[chart]);
			if (side)
				fprintf(f, "</div>\n");
		}
	}
	fprintf(f, "<h2 id=\"crossovers\">Crossovers</h2>\n<ul>\n");
	for (int i = 0; i < p->n_cross; i++) {
		fprintf(f, "<li>");
		html_text(f, p->cross[i].text);
		fprintf(f, "</li>\n");
	}
	for (int i = 0; i < c->n_dsa; i++) {
		fprintf(f, "<li>DSA: ");
		html_text(f, c->dsa[i].text);
		fprintf(f, "</li>\n");
	}
	fprintf(f, "</ul>\n");
	if (p->n_no_cross) {
		fprintf(f, "<p>No crossover in range:</p>\n<ul>\n");
		for (int i = 0; i < p->n_no_cross; i++) {
			fprintf(f, "<li>");
			html_text(f, p->no_cross[i].text);
			fprintf(f, "</li>\n");
		}
		fprintf(f, "</ul>\n");
	}
	if (T->present[T_CLAIMS]) {
		fprintf(f, "<h2 id=\"claims\">Published claims</h2>\n");
		html_caption(f, &T->t[T_CLAIMS]);
		html_table(f, &T->t[T_CLAIMS]);
	}
	fprintf(f, "<h2 id=\"assumptions\">Assumptions</h2>\n<ul>\n");
	for (int i = 0; i < p->n_assume; i++) {
		fprintf(f, "<li>");
		html_text(f, p->assume[i].text);
		fprintf(f, "</li>\n");
	}
	fprintf(f, "<li>");
	html_text(f, p->opclasses);
	fprintf(f, "</li>\n</ul>\n<footer>Made by k3sim %s: <code>", o->version ? o->version : "");
	html_escape(f, o->command ? o->command : "k3sim compare");
	fprintf(
	    f,
	    "</code>. Data: results.json, results.db; charts: charts/ (SVG, PNG, gnuplot script).</footer>\n"
	    "</main></body></html>\n");
	return outfile_commit(&of, e);
}

/* ---- JSON ---- */

/* results.json: objects broken onto lines to the third level, rows on one line each, "key":value,
 * numbers as %.17g (exact; the format's readers have always been given it). */
static const struct jw_style results_style = {.wrap_depth = 2, .wrap_top = true, .colon = ":", .number_digits = 17};

static void jrow(struct jw *j, const struct sweep_row *r)
{
	const struct sweep_column *c = sweep_columns();
	jw_begin_object(j, NULL);
	for (int i = 0; i < sweep_n_columns(); i++) {
		const char *p = (const char *)r + c[i].offset;
		if (c[i].output && !r->ok) {
			jw_null(j, c[i].name);
			continue;
		}
		if (c[i].type == SWEEP_COL_INT) {
			int64_t v;
			memcpy(&v, p, sizeof v);
			jw_i64(j, c[i].name, v);
		} else if (c[i].type == SWEEP_COL_REAL) {
			double v;
			memcpy(&v, p, sizeof v);
			jw_f64(j, c[i].name, v);
		} else {
			jw_str(j, c[i].name, p);
		}
	}
	jw_end_object(j);
}

static void jtable(struct jw *j, const struct rtable *t)
{
	jw_begin_object(j, NULL);
	jw_str(j, "id", t->id);
	jw_str(j, "title", t->title);
	jw_str(j, "note", t->note);
	jw_begin_array(j, "columns");
	for (int c = 0; c < t->n_cols; c++)
		jw_str(j, NULL, t->head[c]);
	jw_end_array(j);
	jw_begin_array(j, "rows");
	for (int i = 0; i < t->n_rows; i++) {
		jw_begin_array(j, NULL);
		for (int c = 0; c < t->n_cols; c++) {
			const struct rcell *cell = &t->cells[(size_t)i * (size_t)t->n_cols + (size_t)c];
			jw_begin_object(j, NULL);
			jw_str(j, "text", cell->text);
			if (cell->has_value)
				jw_f64(j, "value", cell->value);
			if (cell->src_table) {
				jw_str(j, "table", cell->src_table);
				jw_i64(j, "point", cell->src_point);
				jw_str(j, "column", cell->src_col);
				jw_f64(j, "scale", cell->scale);
			}
			jw_end_object(j);
		}
		jw_end_array(j);
	}
	jw_end_array(j);
	jw_end_object(j);
}

static int write_json(const char *path, const struct outfile_opts *oo, const struct compare *c,
                      const struct tables *T, const struct charts *ch, const struct chart_outcome *co,
                      const struct report_opts *o, struct err *e)
{
	struct outfile of;
	FILE *f;
	int orc = open_out(&of, path, oo, &f, e);
	if (orc < 0)
		return orc;
	const struct scenario *s = &c->spec.base;
	const struct hw *hw = c->spec.hws[0];
	struct jw jo, *j = &jo;
	jw_init_style(j, f, &results_style);
	jw_begin_object(j, NULL);
	jw_str(j, "format", "k3sim-compare 1");
	jw_str(j, "k3sim_version", o->version ? o->version : "");
	jw_begin_object(j, "scenario");
	jw_str(j, "name", s->name);
	jw_str(j, "file", s->file);
	jw_str(j, "description", s->description);
	jw_str(j, "hw", hw->name);
	jw_bool(j, "hw_calibrated", hw->calibrated);
	jw_i64(j, "gpus", s->gpus);
	jw_i64(j, "tp", s->tp);
	jw_i64(j, "dp", s->dp);
	jw_i64(j, "cp", s->cp);
	jw_i64(j, "ep", s->ep);
	jw_str(j, "tp_comm", s->tp_rs_ag ? "rs_ag" : "allreduce");
	jw_f64(j, "moe_imbalance", s->moe_imbalance);
	jw_i64(j, "reference_batch", s->batch);
	jw_i64(j, "output_tokens", s->output_tokens);
	jw_i64(j, "prefill_chunk", c->spec.prefill_chunk);
	jw_str(j, "kda_state", dtype_name(s->kda_state));
	jw_str(j, "mla_cache", dtype_name(s->mla_cache));
	jw_str(j, "activations", dtype_name(s->act));
	jw_str(j, "expert_activations", dtype_name(s->expert_act));
	jw_str(j, "dispatch", dtype_name(s->dispatch));
	jw_bool(j, "cuda_graph", s->cuda_graph);
	jw_end_object(j);
	jw_begin_array(j, "models");
	for (int m = 0; m < c->n_models; m++) {
		const struct model *md = compare_model(c, m);
		struct model_inventory inv;
		model_inventory(md, &inv);
		jw_begin_object(j, NULL);
		jw_str(j, "name", md->name);
		jw_str(j, "source", md->source);
		jw_i64(j, "layers", md->n_layers);
		jw_i64(j, "kda_layers", inv.kda_layers);
		jw_i64(j, "mla_layers", inv.mla_layers);
		jw_bool(j, "dsa", md->dsa.index_heads > 0);
		jw_i64(j, "params_total", inv.params_total);
		jw_i64(j, "params_active", inv.params_active);
		jw_i64(j, "weights_bytes", inv.weights_bytes);
		jw_end_object(j);
	}
	jw_end_array(j);
	jw_begin_array(j, "contexts");
	for (int x = 0; x < c->n_contexts; x++)
		jw_i64(j, NULL, compare_context(c, x));
	jw_end_array(j);
	jw_begin_array(j, "batches");
	for (int b = 0; b < c->n_batches; b++)
		jw_i64(j, NULL, compare_batch(c, b));
	jw_end_array(j);
	jw_begin_array(j, "points");
	for (int64_t i = 0; i < c->spec.points; i++)
		jrow(j, &c->rows[i]);
	jw_end_array(j);
	jw_begin_array(j, "at_max_batch");
	for (int64_t i = 0; i < (int64_t)c->n_models * c->n_contexts; i++)
		jrow(j, &c->best[i]);
	jw_end_array(j);
	jw_begin_array(j, "crossovers");
	for (int i = 0; i < c->n_cross; i++) {
		const struct compare_crossover *x = &c->cross[i];
		jw_begin_object(j, NULL);
		jw_str(j, "metric", compare_metric_name(x->metric));
		jw_str(j, "model_a", compare_model(c, x->a)->name);
		jw_str(j, "model_b", compare_model(c, x->b)->name);
		jw_i64(j, "context_tokens", x->context);
		jw_bool(j, "a_lower_above", x->a_lower_above);
		jw_f64(j, "a_value", x->a_value);
		jw_f64(j, "b_value", x->b_value);
		jw_str(j, "text", x->text);
		jw_end_object(j);
	}
	jw_end_array(j);
	jw_begin_array(j, "dsa");
	for (int i = 0; i < c->n_dsa; i++) {
		const struct compare_dsa *d = &c->dsa[i];
		jw_begin_object(j, NULL);
		jw_str(j, "model", compare_model(c, d->model)->name);
		jw_i64(j, "indexer_over_sparse_from", d->over_sparse);
		jw_i64(j, "indexer_over_moe_from", d->over_moe);
		jw_i64(j, "indexer_over_half_from", d->over_half);
		jw_str(j, "text", d->text);
		jw_end_object(j);
	}
	jw_end_array(j);
	jw_begin_array(j, "claims");
	for (int i = 0; i < c->n_claims; i++) {
		jw_begin_object(j, NULL);
		jw_str(j, "what", c->claims[i].what);
		jw_str(j, "published", c->claims[i].published);
		jw_str(j, "k3sim", c->claims[i].tool);
		jw_f64(j, "k3sim_value", c->claims[i].tool_value);
		jw_str(j, "source", c->claims[i].source);
		jw_end_object(j);
	}
	jw_end_array(j);
	jw_begin_array(j, "tables");
	for (int t = 0; t < T_COUNT; t++)
		if (T->present[t])
			jtable(j, &T->t[t]);
	jw_end_array(j);
	jw_begin_object(j, "charts");
	jw_bool(j, "rendered", co->rendered);
	jw_str(j, "reason", co->reason);
	jw_begin_array(j, "files");
	for (int k = 0; k < CH_LINES + CH_BARS && co->rendered; k++)
		for (int x = 0; x < 2; x++) {
			char name[96];
			snprintf(name, sizeof name, "charts/%s.%s", chart_name(ch, k), x ? "png" : "svg");
			jw_str(j, NULL, name);
		}
	jw_end_array(j);
	jw_end_object(j);
	jw_end_object(j);
	fputc('\n', f);
	return outfile_commit(&of, e);
}

/* ---- SQLite ---- */

static int write_db(const char *path, const struct outfile_opts *oo, const struct compare *c,
                    struct err *e)
{
	struct sweepdb w;
	struct sweepdb_meta meta;
	sweepdb_meta_init(&meta, &c->spec, 0, 1);
	int rc = sweepdb_create(&w, path, &meta, oo, e);
	if (rc < 0)
		return rc;
	if ((rc = sweepdb_add(&w, c->rows, c->spec.points, e)) < 0 ||
	    (rc = sweepdb_use_table(&w, "at_max_batch", e)) < 0 ||
	    (rc = sweepdb_add(&w, c->best, (int64_t)c->n_models * c->n_contexts, e)) < 0 ||
	    (rc = sweepdb_exec(&w,
	                       "CREATE TABLE crossovers (metric TEXT, model_a TEXT, model_b TEXT, "
	                       "context_tokens INTEGER, a_lower_above INTEGER, a_value REAL, b_value REAL, "
	                       "text TEXT)",
	                       e)) < 0)
		goto fail;
	for (int i = 0; i < c->n_cross; i++) {
		const struct compare_crossover *x = &c->cross[i];
		char sql[1024];
		/* Names and numbers only: no quotes can occur but in the text, which is escaped. */
		char text[1100];
		size_t o = 0;
		for (const char *p = x->text; *p && o + 2 < sizeof text; p++) {
			if (*p == '\'')
				text[o++] = '\'';
			text[o++] = *p;
		}
		text[o] = 0;
		snprintf(sql, sizeof sql,
		         "INSERT INTO crossovers VALUES ('%s', '%.60s', '%.60s', %lld, %d, %.17g, %.17g, "
		         "'%.600s')",
		         compare_metric_name(x->metric), compare_model(c, x->a)->name,
		         compare_model(c, x->b)->name, (long long)x->context, x->a_lower_above,
		         isfinite(x->a_value) ? x->a_value : 0, isfinite(x->b_value) ? x->b_value : 0, text);
		if ((rc = sweepdb_exec(&w, sql, e)) < 0)
			goto fail;
	}
	return sweepdb_commit(&w, e);
fail:
	sweepdb_abort(&w);
	return rc;
}

int report_write(const struct compare *c, const struct report_opts *o, struct report_files *out,
                 struct err *e)
{
	struct tables *T = calloc(1, sizeof *T);
	struct charts *ch = calloc(1, sizeof *ch);
	struct prose *p = calloc(1, sizeof *p);
	int rc;
	memset(out, 0, sizeof *out);
	if (!T || !ch || !p) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	snprintf(out->md, sizeof out->md, "%s/report.md", o->dir);
	snprintf(out->html, sizeof out->html, "%s/report.html", o->dir);
	snprintf(out->json, sizeof out->json, "%s/results.json", o->dir);
	snprintf(out->db, sizeof out->db, "%s/results.db", o->dir);
	snprintf(out->charts_dir, sizeof out->charts_dir, "%s/charts", o->dir);
	/* The directory is ours (created now, empty, or marked by an earlier report): its report files
	 * are replaced; in any other directory an existing file takes --force. */
	bool ours = false;
	if ((rc = outfile_dir_open(o->dir, &ours, e)) < 0 ||
	    (rc = outfile_dir_open(out->charts_dir, NULL, e)) < 0)
		goto out;
	struct outfile_opts oo = {.force = o->force || ours, .inputs = o->inputs, .n_inputs = o->n_inputs};
	if ((rc = build_tables(T, c)) < 0) {
		err_set(e, NULL, 0, 0, "out of memory");
		goto out;
	}
	charts_build(ch, T, c);
	out->n_charts = CH_LINES + CH_BARS;
	if ((rc = chart_render(out->charts_dir, o->gnuplot, ch->lines, CH_LINES, ch->bars, CH_BARS,
	                       &oo, &out->charts, e)) < 0)
		goto out;
	prose_build(p, c);
	if ((rc = write_db(out->db, &oo, c, e)) < 0 ||
	    (rc = write_json(out->json, &oo, c, T, ch, &out->charts, o, e)) < 0 ||
	    (rc = write_md(out->md, &oo, c, T, ch, p, &out->charts, o, e)) < 0 ||
	    (rc = write_html(out->html, &oo, out->charts_dir, c, T, ch, p, &out->charts, o, e)) < 0 ||
	    (rc = outfile_dir_mark(o->dir, "k3sim compare", e)) < 0)
		goto out;
out:
	if (T)
		for (int t = 0; t < T_COUNT; t++)
			rt_release(&T->t[t]);
	free(T);
	free(ch);
	free(p);
	return rc;
}
