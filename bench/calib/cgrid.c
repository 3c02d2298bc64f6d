#include "bench/calib/cgrid.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/hw.h"
#include "model/model.h"
#include "model/ops.h"
#include "sim/scenario.h"
#include "sim/sim.h"

/* The degrees measured: TP 1..16 (K3's 96 KDA heads: 96, 48, 24, 12, 6 per GPU) and EP 8..64. */
static const int64_t TP_DEGREES[] = {1, 2, 4, 8, 16};
static const int64_t EP_DEGREES[] = {8, 16, 32, 64};
enum { N_TP = sizeof TP_DEGREES / sizeof TP_DEGREES[0], N_EP = sizeof EP_DEGREES / sizeof EP_DEGREES[0] };

/* Steps the shapes are read from: a decode step and a prefill chunk (mla.kv_b and the absorbed
 * projections exist in only one of them). Their sizes do not change n or k. */
enum { DECODE_CONTEXT = 1024, PREFILL_TOKENS = 1024 };

/* Grouped GEMMs, balanced routing: rows per expert (every expert held by the rank gets the
 * same rows; global tokens = rows x experts / top_k), and below one row per expert the decode
 * batches whose rows land on distinct experts (touched < groups). */
static const int64_t ROWS_PER_EXPERT[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128,
					  192, 256, 384, 512, 768, 1024, 1536, 2048};
static const int64_t DECODE_TOKENS[] = {8, 32};
enum { N_RPE = sizeof ROWS_PER_EXPERT / sizeof ROWS_PER_EXPERT[0],
       N_DEC = sizeof DECODE_TOKENS / sizeof DECODE_TOKENS[0] };

static const int64_t COPY_MIN_BYTES = 4096, COPY_MAX_BYTES = (int64_t)4 << 30;
static const double DEFAULT_MAX_FLOPS = 6e12, DEFAULT_MIN_COMPUTE_S = 20e-6;

const char *cgrid_kind_name(enum cgrid_kind k)
{
	return k == CGRID_GEMM ? "gemm" : k == CGRID_GROUPED ? "grouped_gemm" : "copy";
}

const char *cgrid_dtype_name(enum cgrid_dtype d)
{
	return d == CGRID_FP8 ? "fp8" : "bf16";
}

int cgrid_m_values(bool quick, int64_t *out, int max)
{
	int n = 0, i = 0;
	/* ascending: 1, 2, 3, 4, 6, 8, 12, ..., 12288, 16384 */
	for (int64_t p = 1; p <= 16384; p *= 2) {
		int64_t vals[2] = {p, p >= 2 && p * 3 / 2 <= 12288 ? p * 3 / 2 : 0};
		for (int j = 0; j < 2; j++) {
			if (!vals[j])
				continue;
			if (!quick || i % 3 == 0 || vals[j] == 16384) {
				if (n < max)
					out[n] = vals[j];
				n++;
			}
			i++;
		}
	}
	return n < max ? n : max;
}

/* ---- shapes from the model ---- */

struct origin_entry {
	const char *name;      /* static op name from model/ops.c */
	unsigned degrees;      /* bit i: the i-th degree of the list */
};

struct shape_acc {
	int64_t n, k;
	struct origin_entry who[24];
	int n_who;
};

static int add_shape(struct shape_acc *acc, int *n_acc, int64_t n, int64_t k, const char *name, int degree_index,
		     struct err *e)
{
	int i = 0;
	while (i < *n_acc && !(acc[i].n == n && acc[i].k == k))
		i++;
	if (i == *n_acc) {
		if (*n_acc == CGRID_MAX_SHAPES) {
			err_set(e, NULL, 0, 0, "more than %d GEMM shapes", CGRID_MAX_SHAPES);
			return -E2BIG;
		}
		memset(&acc[i], 0, sizeof acc[i]);
		acc[i].n = n;
		acc[i].k = k;
		(*n_acc)++;
	}
	struct shape_acc *a = &acc[i];
	for (int j = 0; j < a->n_who; j++)
		if (strcmp(a->who[j].name, name) == 0) {
			a->who[j].degrees |= 1u << degree_index;
			return 0;
		}
	if (a->n_who < (int)(sizeof a->who / sizeof a->who[0])) {
		a->who[a->n_who].name = name;
		a->who[a->n_who].degrees = 1u << degree_index;
		a->n_who++;
	}
	return 0;
}

static void format_origin(const struct shape_acc *a, const int64_t *degrees, int n_degrees,
			  const char *prefix, char *out, size_t size)
{
	size_t used = 0;
	out[0] = '\0';
	for (int j = 0; j < a->n_who && used < size; j++) {
		int w = snprintf(out + used, size - used, "%s%s", j ? "; " : "", a->who[j].name);
		if (w < 0)
			return;
		used += (size_t)w;
		for (int d = 0; d < n_degrees && used < size; d++)
			if (a->who[j].degrees & (1u << d)) {
				w = snprintf(out + used, size - used, " %s%lld", prefix, (long long)degrees[d]);
				if (w < 0)
					return;
				used += (size_t)w;
			}
	}
}

struct sim_inputs {
	struct scenario s;
	struct model m;
	struct hw hw;
	struct sim_phase ph;
};

static int load_inputs(struct sim_inputs *in, const struct cgrid_opts *o, struct err *e)
{
	int rc = scenario_load(&in->s, o->scenario ? o->scenario : "default", e);
	if (rc < 0)
		return rc;
	if ((rc = model_load(&in->m, o->model ? o->model : "kimi-k3", e)) < 0)
		return rc;
	/* only the mapped dimensions are used, not the costs: any preset does */
	return hw_load(&in->hw, in->s.hw, e);
}

/* The mapped ops of a decode step and a prefill chunk on one GPU of `s`, into visit(). */
static int each_mapped_op(struct sim_inputs *in, int (*visit)(void *ctx, const struct op *op), void *ctx)
{
	for (int ph = 0; ph < 2; ph++) {
		struct phase p;
		if (ph == 0)
			sim_phase_init(&in->s, PHASE_DECODE, 1, 1, DECODE_CONTEXT, &p);
		else
			sim_phase_init(&in->s, PHASE_PREFILL, 1, PREFILL_TOKENS, 0, &p);
		sim_phase_reset(&in->ph);
		double step_s;
		int rc = sim_step(&in->s, &in->m, &in->hw, &p, &in->ph, 1.0, &step_s);
		if (rc < 0)
			return rc;
		for (int i = 0; i < in->ph.n_rows; i++) {
			rc = visit(ctx, &in->ph.rows[i].op);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

struct dense_visit {
	struct shape_acc *acc;
	int *n_acc;
	int degree_index;
	struct err *e;
};

static int visit_dense(void *ctx, const struct op *op)
{
	struct dense_visit *v = ctx;
	if (op->kind != OP_GEMM || op->n <= 0 || op->k <= 0)
		return 0;
	return add_shape(v->acc, v->n_acc, op->n, op->k, op->name, v->degree_index, v->e);
}

struct grouped_visit {
	struct cgrid *g;
	int64_t ep;
	struct err *e;
};

static int visit_grouped(void *ctx, const struct op *op)
{
	struct grouped_visit *v = ctx;
	struct cgrid *g = v->g;
	if (op->kind != OP_GROUPED_GEMM)
		return 0;
	for (int i = 0; i < g->n_gshapes; i++)
		if (g->gshapes[i].n == op->n && g->gshapes[i].k == op->k && g->gshapes[i].ep == v->ep)
			return 0;
	if (g->n_gshapes == CGRID_MAX_SHAPES) {
		err_set(v->e, NULL, 0, 0, "more than %d grouped GEMM shapes", CGRID_MAX_SHAPES);
		return -E2BIG;
	}
	struct cgrid_gshape *s = &g->gshapes[g->n_gshapes++];
	s->n = op->n;
	s->k = op->k;
	s->ep = v->ep;
	s->groups = op->groups;
	snprintf(s->origin, sizeof s->origin, "%s ep%lld", op->name, (long long)v->ep);
	return 0;
}

static int collect_shapes(struct cgrid *g, const struct cgrid_opts *o, struct err *e)
{
	struct sim_inputs *in = calloc(1, sizeof *in);
	struct shape_acc *acc = calloc(CGRID_MAX_SHAPES, sizeof *acc);
	int n_acc = 0, rc = 0;
	if (!in || !acc) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	if ((rc = load_inputs(in, o, e)) < 0)
		goto out;
	g->experts = in->m.moe.experts;
	g->top_k = in->m.moe.top_k;
	const struct scenario base = in->s;
	for (int t = 0; t < N_TP; t++) {
		in->s = base;
		in->s.tp = TP_DEGREES[t];
		in->s.dp = 1;
		in->s.cp = 1;
		in->s.ep = TP_DEGREES[t];
		in->s.gpus = 1; /* one GPU's ops; no NVLink-domain check (TP16 spans two HGX nodes) */
		struct err ce = {0};
		if (sim_check(&in->s, &in->m, &in->hw, &ce) < 0)
			continue; /* a degree the model's heads do not divide */
		g->tp[g->n_tp] = TP_DEGREES[t];
		struct dense_visit v = {acc, &n_acc, g->n_tp, e};
		g->n_tp++;
		if ((rc = each_mapped_op(in, visit_dense, &v)) < 0) {
			if (rc == -E2BIG && !e->msg[0])
				err_set(e, NULL, 0, 0, "the op list of %s overflowed", in->m.name);
			goto out;
		}
	}
	if (g->experts > 0)
		for (int t = 0; t < N_EP; t++) {
			if (EP_DEGREES[t] > g->experts)
				continue;
			in->s = base;
			in->s.tp = 1;
			in->s.dp = 1;
			in->s.cp = 1;
			in->s.ep = EP_DEGREES[t];
			in->s.moe_imbalance = 1;
			g->ep[g->n_ep++] = EP_DEGREES[t];
			struct grouped_visit v = {g, EP_DEGREES[t], e};
			if ((rc = each_mapped_op(in, visit_grouped, &v)) < 0)
				goto out;
		}
	for (int i = 0; i < n_acc; i++) {
		g->shapes[i].n = acc[i].n;
		g->shapes[i].k = acc[i].k;
		format_origin(&acc[i], g->tp, g->n_tp, "tp", g->shapes[i].origin, sizeof g->shapes[i].origin);
	}
	g->n_shapes = n_acc;
out:
	free(acc);
	free(in);
	return rc;
}

/* ---- points ---- */

static int push_point(struct cgrid *g, const struct cgrid_point *p, struct err *e)
{
	if (g->n_points == CGRID_MAX_POINTS) {
		err_set(e, NULL, 0, 0, "more than %d grid points", CGRID_MAX_POINTS);
		return -E2BIG;
	}
	g->points[g->n_points++] = *p;
	return 0;
}

static bool keep(const struct cgrid_opts *o, struct cgrid_point *p, double max_flops)
{
	p->est_op_s = cgrid_op_estimate_s(p, &p->compute_bound);
	if (p->flops > max_flops)
		return false;
	double min_s = o->min_compute_s > 0 ? o->min_compute_s : DEFAULT_MIN_COMPUTE_S;
	return !o->compute_only || (p->compute_bound && p->est_op_s >= min_s);
}

static int add_gemms(struct cgrid *g, const struct cgrid_opts *o, double max_flops, struct err *e)
{
	int64_t ms[64];
	int n_m = cgrid_m_values(o->quick, ms, 64);
	for (int s = 0; s < g->n_shapes; s++)
		for (int i = 0; i < n_m; i++)
			for (int d = 0; d < 2; d++) {
				struct cgrid_point p = {.kind = CGRID_GEMM, .dtype = (enum cgrid_dtype)d,
							.m = ms[i], .n = g->shapes[s].n, .k = g->shapes[s].k,
							.shape = s};
				p.flops = 2.0 * (double)p.m * (double)p.n * (double)p.k;
				if (!keep(o, &p, max_flops))
					continue;
				snprintf(p.spec, sizeof p.spec, "k3sim op=gemm m=%lld n=%lld k=%lld dtype=%s",
					 (long long)p.m, (long long)p.n, (long long)p.k, cgrid_dtype_name(p.dtype));
				int rc = push_point(g, &p, e);
				if (rc < 0)
					return rc;
			}
	return 0;
}

static int add_grouped(struct cgrid *g, const struct cgrid_opts *o, double max_flops, struct err *e)
{
	for (int s = 0; s < g->n_gshapes; s++) {
		const struct cgrid_gshape *gs = &g->gshapes[s];
		/* below one row per expert: decode batches of `tokens` over all ranks */
		for (int i = 0; i < N_DEC + N_RPE; i++) {
			int64_t rows, touched, rpe;
			if (i < N_DEC) {
				rows = DECODE_TOKENS[i] * g->top_k / gs->ep;
				if (rows < 1 || rows >= gs->groups)
					continue;
				touched = rows;
				rpe = 1;
			} else {
				rpe = ROWS_PER_EXPERT[i - N_DEC];
				if (o->quick && (i - N_DEC) % 3 != 0)
					continue;
				touched = gs->groups;
				rows = rpe * gs->groups;
			}
			for (int d = 0; d < 2; d++) {
				struct cgrid_point p = {.kind = CGRID_GROUPED, .dtype = (enum cgrid_dtype)d,
							.m = rows, .n = gs->n, .k = gs->k, .groups = gs->groups,
							.touched = touched, .rows_per_group = rpe, .shape = s};
				p.flops = 2.0 * (double)p.m * (double)p.n * (double)p.k;
				if (!keep(o, &p, max_flops))
					continue;
				int w = snprintf(p.spec, sizeof p.spec,
						 "k3sim op=grouped_gemm m=%lld n=%lld k=%lld groups=%lld",
						 (long long)p.m, (long long)p.n, (long long)p.k,
						 (long long)p.groups);
				if (touched < gs->groups)
					snprintf(p.spec + w, sizeof p.spec - (size_t)w, " touched=%lld",
						 (long long)touched);
				size_t len = strlen(p.spec);
				snprintf(p.spec + len, sizeof p.spec - len, " dtype=%s", cgrid_dtype_name(p.dtype));
				int rc = push_point(g, &p, e);
				if (rc < 0)
					return rc;
			}
		}
	}
	return 0;
}

static int add_copies(struct cgrid *g, const struct cgrid_opts *o, struct err *e)
{
	for (int64_t b = COPY_MIN_BYTES; b <= COPY_MAX_BYTES; b *= 2)
		for (int h = 0; h < 2; h++) {
			/* held out: 0.75 x the power of two */
			int64_t bytes = h ? b / 4 * 3 : b;
			if (h && (o->quick || b < 16384))
				continue;
			struct cgrid_point p = {.kind = CGRID_COPY, .bytes = bytes, .n = bytes, .shape = -1};
			p.est_op_s = cgrid_op_estimate_s(&p, NULL);
			if (o->compute_only)
				continue;
			snprintf(p.spec, sizeof p.spec, "k3sim op=copy bytes=%lld", (long long)bytes);
			int rc = push_point(g, &p, e);
			if (rc < 0)
				return rc;
		}
	return 0;
}

int cgrid_build(struct cgrid *g, const struct cgrid_opts *o, struct err *e)
{
	memset(g, 0, sizeof *g);
	if (!o->gemm && !o->grouped && !o->copy) {
		err_set(e, NULL, 0, 0, "no class of points chosen (gemm, grouped, copy)");
		return -EINVAL;
	}
	int rc = collect_shapes(g, o, e);
	if (rc < 0)
		return rc;
	g->points = calloc(CGRID_MAX_POINTS, sizeof *g->points);
	if (!g->points) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	double max_flops = o->max_flops > 0 ? o->max_flops : DEFAULT_MAX_FLOPS;
	/* Cheap classes first: a run cut short by its time budget loses the tail of the GEMMs. */
	if (o->copy)
		rc = add_copies(g, o, e);
	if (!rc && o->grouped)
		rc = add_grouped(g, o, max_flops, e);
	if (!rc && o->gemm)
		rc = add_gemms(g, o, max_flops, e);
	if (rc < 0)
		cgrid_release(g);
	return rc;
}

int cgrid_new(struct cgrid **out, const struct cgrid_opts *o, struct err *e)
{
	struct cgrid *g = malloc(sizeof *g);
	if (!g) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	int rc = cgrid_build(g, o, e);
	if (rc < 0) {
		free(g);
		return rc;
	}
	*out = g;
	return 0;
}

void cgrid_release(struct cgrid *g)
{
	free(g->points);
	g->points = NULL;
	g->n_points = 0;
}

void cgrid_free(struct cgrid *g)
{
	if (!g)
		return;
	cgrid_release(g);
	free(g);
}

/* ---- estimates ---- */

/* Measured on the H200 (issue 11, docs/perf/calibration-h200-2026-11-29.md): cuBLASLt BF16 at
 * the power limit ~660 TFLOP/s, FP8 about twice; a rotated copy ~3.3 TB/s of read + write. */
static const double EST_BF16_FLOPS = 660e12, EST_FP8_FLOPS = 1200e12, EST_HBM_BYTES_PER_S = 3.3e12,
		    EST_FLOOR_S = 4e-6;

double cgrid_op_estimate_s(const struct cgrid_point *p, bool *compute_bound)
{
	if (compute_bound)
		*compute_bound = false;
	if (p->kind == CGRID_COPY)
		return EST_FLOOR_S + 2.0 * (double)p->bytes / EST_HBM_BYTES_PER_S;
	double eb = p->dtype == CGRID_FP8 ? 1 : 2;
	double groups = p->kind == CGRID_GROUPED ? (double)p->touched : 1;
	double bytes = groups * (double)p->n * (double)p->k * eb + (double)p->m * (double)p->k * eb +
		       (double)p->m * (double)p->n * 2;
	double flops = 2.0 * (double)p->m * (double)p->n * (double)p->k;
	double t_flops = flops / (p->dtype == CGRID_FP8 ? EST_FP8_FLOPS : EST_BF16_FLOPS);
	double t_bytes = bytes / EST_HBM_BYTES_PER_S;
	if (compute_bound)
		*compute_bound = t_flops > t_bytes;
	return EST_FLOOR_S + (t_flops > t_bytes ? t_flops : t_bytes);
}

void cgrid_timing_default(struct cgrid_timing *t, bool sustained)
{
	memset(t, 0, sizeof *t);
	/* 10 instances at most: the median of 10 is steady to a few % on a quiet GPU, and a capture
	 * of the full grid (~320 B per instance) stays near the 16 MiB a device call returns */
	t->warmup = 2;
	t->min_reps = 5;
	t->max_reps = 10;
	t->budget_s = 0.03;
	/* an event synchronization round trip per instance, more under capture (the 2026-11-29
	 * grid: 9.2 s measured, 8.9 s by this estimate) */
	t->rep_overhead_s = 30e-6;
	t->point_overhead_s = 500e-6;
	t->sustained = sustained;
	if (sustained) {
		/* a heater GEMM of ~1 ms before every instance keeps the power at its limit */
		t->min_reps = 8;
		t->max_reps = 8;
		t->rep_overhead_s = 5e-6;
		t->heat_per_rep_s = 1.0e-3;
		t->preheat_s = 10;
	}
}

int cgrid_point_reps(const struct cgrid_point *p, const struct cgrid_timing *t)
{
	double op = p->est_op_s > 0 ? p->est_op_s : cgrid_op_estimate_s(p, NULL);
	double want = t->budget_s / (op + t->rep_overhead_s);
	int reps = want > t->max_reps ? t->max_reps : (int)want;
	return reps < t->min_reps ? t->min_reps : reps;
}

double cgrid_point_estimate_s(const struct cgrid_point *p, const struct cgrid_timing *t)
{
	double op = p->est_op_s > 0 ? p->est_op_s : cgrid_op_estimate_s(p, NULL);
	int n = t->warmup + cgrid_point_reps(p, t);
	return t->point_overhead_s + n * (op + t->rep_overhead_s + t->heat_per_rep_s);
}

double cgrid_estimate_s(const struct cgrid *g, const struct cgrid_timing *t)
{
	double s = t->sustained ? t->preheat_s : 0;
	for (int i = 0; i < g->n_points; i++)
		s += cgrid_point_estimate_s(&g->points[i], t);
	return s;
}
