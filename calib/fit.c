#include "calib/fit.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cost.h"
#include "sim/power.h"

double calib_predict_s(const struct hw *hw, const struct calib_point *p)
{
	struct op_cost c;
	struct cost_opts o = {.clock = {.regime = p->clock}};
	sim_op_cost(hw, &p->op, &o, &c);
	return c.time_s;
}

void calib_device_hw(struct hw *dev, const struct hw *hw)
{
	*dev = *hw;
	dev->launch_latency_s = dev->graph_launch_latency_s = 0;
}

double calib_nelder_mead(double (*f)(const double *x, void *ctx), void *ctx, double *x, const double *step,
                         int n, int max_iters)
{
	enum { N = 8 };
	double p[N + 1][N], v[N + 1], c[N], xr[N], xe[N], xc[N];
	if (n < 1 || n > N)
		return NAN;
	for (int i = 0; i <= n; i++) {
		memcpy(p[i], x, (size_t)n * sizeof *x);
		if (i > 0)
			p[i][i - 1] += step[i - 1];
		v[i] = f(p[i], ctx);
	}
	for (int it = 0; it < max_iters; it++) {
		/* order: best first */
		for (int i = 1; i <= n; i++)
			for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
				double t = v[j];
				v[j] = v[j - 1];
				v[j - 1] = t;
				for (int k = 0; k < n; k++) {
					t = p[j][k];
					p[j][k] = p[j - 1][k];
					p[j - 1][k] = t;
				}
			}
		if (fabs(v[n] - v[0]) <= 1e-10 * (fabs(v[0]) + 1e-12))
			break;
		for (int k = 0; k < n; k++) {
			c[k] = 0;
			for (int i = 0; i < n; i++)
				c[k] += p[i][k] / n;
		}
		for (int k = 0; k < n; k++)
			xr[k] = c[k] + (c[k] - p[n][k]);
		double fr = f(xr, ctx);
		if (fr < v[0]) {
			for (int k = 0; k < n; k++)
				xe[k] = c[k] + 2 * (c[k] - p[n][k]);
			double fe = f(xe, ctx);
			memcpy(p[n], fe < fr ? xe : xr, (size_t)n * sizeof *x);
			v[n] = fe < fr ? fe : fr;
		} else if (fr < v[n - 1]) {
			memcpy(p[n], xr, (size_t)n * sizeof *x);
			v[n] = fr;
		} else {
			for (int k = 0; k < n; k++)
				xc[k] = c[k] + 0.5 * (p[n][k] - c[k]);
			double fc = f(xc, ctx);
			if (fc < v[n]) {
				memcpy(p[n], xc, (size_t)n * sizeof *x);
				v[n] = fc;
			} else {
				for (int i = 1; i <= n; i++) {
					for (int k = 0; k < n; k++)
						p[i][k] = p[0][k] + 0.5 * (p[i][k] - p[0][k]);
					v[i] = f(p[i], ctx);
				}
			}
		}
	}
	int best = 0;
	for (int i = 1; i <= n; i++)
		if (v[i] < v[best])
			best = i;
	memcpy(x, p[best], (size_t)n * sizeof *x);
	return v[best];
}

/* ---- stages ---- */

struct stage {
	struct hw *hw;                 /* the trial preset, edited in place */
	const struct calib_point **pt; /* the stage's training points */
	int n;
	void (*apply)(struct hw *hw, const double *x);
};

static double mean_abs_log(const struct hw *hw, const struct calib_point *const *pt, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++) {
		double pred = calib_predict_s(hw, pt[i]);
		s += pred > 0 ? fabs(log(pred / pt[i]->measured_s)) : 50;
	}
	return n ? s / n : 0;
}

static double stage_obj(const double *x, void *ctx)
{
	struct stage *s = ctx;
	s->apply(s->hw, x);
	return mean_abs_log(s->hw, s->pt, s->n);
}

static double squash(double x) /* (0, 1] */
{
	return 1.0 / (1.0 + exp(-x));
}

static double unsquash(double y)
{
	if (y >= 0.999)
		y = 0.999;
	if (y <= 0.001)
		y = 0.001;
	return log(y / (1 - y));
}

static void apply_memory(struct hw *hw, const double *x)
{
	hw->eff_memory.max = squash(x[0]);
	hw->eff_memory.half = exp(x[1]);
}

static void apply_gemm(struct hw *hw, const double *x)
{
	hw->eff_gemm.max = squash(x[0]);
	hw->eff_gemm.half = exp(x[1]);
}

/* x: log cycles of the fixed cost, the wave, the k step; logits of the FLOP efficiency of BF16
 * and FP8 math (the one of BF16 is also eff_gemm.max); log bytes the epilogue stores per SM cycle */
static void apply_gemm_kernel(struct hw *hw, const double *x)
{
	hw->gemm_fixed_cycles = exp(x[0]);
	hw->gemm_wave_cycles = exp(x[1]);
	hw->gemm_kstep_cycles = exp(x[2]);
	hw->eff_gemm.max = hw->gemm_eff[DT_BF16] = hw->gemm_eff[DT_FP16] = squash(x[3]);
	hw->gemm_eff[DT_FP8] = squash(x[4]);
	hw->gemm_store_bytes_per_sm_cycle = exp(x[5]);
}

/* x: log cycles of the chunk step, the step's row, the intra kernel's (token, head) */
static void apply_kda(struct hw *hw, const double *x)
{
	hw->kda_chunk_step_cycles = exp(x[0]);
	hw->kda_step_row_cycles = exp(x[1]);
	hw->kda_intra_cycles_per_token_head = exp(x[2]);
}

/* Where the KDA stage's optional parameters sit in x (-1: not fitted), after the three above:
 * the logit of the share of an SM's intra-chunk throughput a resident recurrent CTA takes in the
 * overlapped pair (hw.h: kda_overlap_rec_share), the logit of the pair kernel's chain ratio
 * (kda_pair_chain_ratio, below 1), the log of the pair's fixed cycles (kda_fixed_cycles). Set
 * by fit_kda_chunk() before its stage runs (qsort-style: apply has no context). */
static _Thread_local struct {
	int share, pair, fixed;
} kda_x;

static void apply_kda_any(struct hw *hw, const double *x)
{
	apply_kda(hw, x);
	if (kda_x.share >= 0)
		hw->kda_overlap_rec_share = squash(x[kda_x.share]);
	if (kda_x.pair >= 0)
		hw->kda_pair_chain_ratio = squash(x[kda_x.pair]);
	if (kda_x.fixed >= 0)
		hw->kda_fixed_cycles = exp(x[kda_x.fixed]);
}

static void apply_verify(struct hw *hw, const double *x)
{
	hw->kda_verify_lin_cycles = exp(x[0]);
	hw->kda_verify_quad_cycles = exp(x[1]);
}

static void apply_comm(struct hw *hw, const double *x)
{
	hw->eff_comm.max = squash(x[0]);
	hw->eff_comm.half = exp(x[1]);
	hw->nvlink_latency_s = exp(x[2]);
}

/* x: log step latency (s), logit of the efficiency max; the trial preset's last model */
static void apply_coll(struct hw *hw, const double *x)
{
	struct hw_coll_model *m = &hw->coll[hw->n_coll - 1];
	m->step_latency_s = exp(x[0]);
	m->eff.max = squash(x[1]);
}

static int select_points(const struct calib_points *pts, bool (*want)(const struct calib_point *),
                         const struct calib_point **out)
{
	int n = 0;
	for (size_t i = 0; i < pts->n; i++)
		if (!pts->p[i].held_out && pts->p[i].clock == HW_CLOCK_BOOST && want(&pts->p[i]))
			out[n++] = &pts->p[i];
	return n;
}

static bool is_memory(const struct calib_point *p)
{
	return p->cls == HW_CLASS_MEMORY;
}

static bool is_gemm(const struct calib_point *p)
{
	return p->cls == HW_CLASS_GEMM;
}

static bool is_kda_chunk(const struct calib_point *p)
{
	return p->cls == HW_CLASS_KDA_CHUNK;
}

static bool is_kda_verify(const struct calib_point *p)
{
	return p->cls == HW_CLASS_KDA_VERIFY;
}

static bool is_comm(const struct calib_point *p)
{
	return p->cls == HW_CLASS_COMM && p->op.ranks > 1;
}

static void run_stage(struct stage *s, struct calib_fit_stage *r, double *x, const double *step, int n)
{
	r->points = s->n;
	r->before = mean_abs_log(s->hw, s->pt, s->n);
	if (s->n < CALIB_FIT_MIN_POINTS)
		return;
	double best[8];
	memcpy(best, x, (size_t)n * sizeof *x);
	double f = calib_nelder_mead(stage_obj, s, best, step, n, 400 * n);
	/* restart once from the optimum: Nelder-Mead stalls on flat valleys */
	f = calib_nelder_mead(stage_obj, s, best, step, n, 400 * n);
	if (f <= r->before) {
		memcpy(x, best, (size_t)n * sizeof *x);
		r->fitted = true;
	}
	s->apply(s->hw, x);
	r->after = mean_abs_log(s->hw, s->pt, s->n);
}

/* Stage 3: a model per collective kind and rank count with enough training points of its own,
 * started from the interconnect's values and from the data. */
static void fit_colls(const struct calib_points *pts, struct hw *hw, struct calib_fit_report *rep,
                      const struct calib_point **sel)
{
	hw->n_coll = 0;
	for (size_t i = 0; i < pts->n; i++) {
		const struct calib_point *p = &pts->p[i];
		if (p->held_out || p->clock != HW_CLOCK_BOOST || !is_comm(p))
			continue;
		enum hw_coll c = sim_op_coll(p->op.kind);
		bool done = false;
		for (int j = 0; j < rep->n_coll && !done; j++)
			done = rep->coll[j].coll == c && rep->coll[j].ranks == p->op.ranks;
		if (done || rep->n_coll == HW_COLL_MODELS_MAX)
			continue;
		struct calib_fit_coll *r = &rep->coll[rep->n_coll++];
		memset(r, 0, sizeof *r);
		r->coll = c;
		r->ranks = p->op.ranks;
		int n = 0;
		for (size_t j = i; j < pts->n; j++) {
			const struct calib_point *q = &pts->p[j];
			if (!q->held_out && q->clock == HW_CLOCK_BOOST && is_comm(q) && sim_op_coll(q->op.kind) == c &&
			    q->op.ranks == r->ranks)
				sel[n++] = q;
		}
		/* From the interconnect's values, as plain alpha-beta (half 0: the constant half adds
		 * is the latency's); kept only if it fits better than they do. */
		struct hw_coll_model *m = &hw->coll[hw->n_coll++];
		m->coll = c;
		m->ranks = r->ranks;
		m->step_latency_s = hw->nvlink_latency_s > 0 ? hw->nvlink_latency_s : 3e-6;
		m->eff.max = hw->eff_comm.max;
		m->eff.half = 0;
		struct stage st = {.hw = hw, .pt = sel, .n = n, .apply = apply_coll};
		double x[2] = {log(m->step_latency_s), unsquash(m->eff.max)};
		const double step[2] = {0.5, 0.5};
		run_stage(&st, &r->stage, x, step, 2);
		/* a second start from the data (half the smallest size's time as the latency), in case
		 * the interconnect's latency collapsed into its curve's half and leaves nothing to
		 * descend on; the better one is kept */
		const struct calib_point *small = sel[0];
		for (int j = 1; j < n; j++)
			if (sel[j]->op.comm_bytes < small->op.comm_bytes)
				small = sel[j];
		struct calib_fit_stage r2 = {0};
		double x2[2] = {log(0.5 * small->measured_s), unsquash(hw->eff_comm.max)};
		run_stage(&st, &r2, x2, step, 2);
		if (r2.after < r->stage.after) {
			r2.before = r->stage.before;
			r->stage = r2;
		} else {
			apply_coll(hw, x);
		}
		if (!r->stage.fitted)
			hw->n_coll--;
	}
}

/* ---- tables ---- */

/* The dtype a class table is keyed by, as sim/cost.c looks it up; any = true for classes without. */
static enum dtype table_dtype(const struct hw *hw, const struct op *op, bool *any)
{
	*any = false;
	switch (op->kind) {
	case OP_GEMM:
	case OP_GROUPED_GEMM:
		return sim_gemm_table_dtype(hw, op);
	case OP_KDA_CHUNK:
	case OP_KDA_DECODE:
		return op->s_dtype;
	case OP_MLA_PREFILL:
	case OP_MLA_DECODE:
	case OP_DSA_PREFILL:
	case OP_DSA_DECODE:
		return op->a_dtype;
	case OP_QUANT: /* what it writes: fp8, mxfp8 */
		return op->o_dtype;
	default:
		*any = true;
		return DT_BF16;
	}
}

/* Class tables are keyed by the op's modeled device time: the model never falls as a size grows
 * (sim/cost.h), and a table over it whose measured times never fall either (isotonic) keeps it
 * so. */
static enum hw_table_key key_of(enum hw_class c)
{
	(void)c;
	return HW_KEY_MODEL_S;
}

static double table_key(const struct calib_point *p, double model_s)
{
	switch (key_of(p->cls)) {
	case HW_KEY_BYTES:
		return p->cls == HW_CLASS_COMM ? (double)p->op.comm_bytes : (double)op_bytes(&p->op);
	case HW_KEY_FLOPS:
		return p->op.flops;
	default:
		return model_s;
	}
}

struct resid {
	double x; /* log of the table's key (or log m) */
	double y; /* log efficiency: log(predicted / measured) */
	int64_t n, k;
	enum dtype dt;
	int cls;
	bool any;
	int coll;            /* collectives: the kind; else -1 */
	int64_t ranks;       /* collectives: the rank count */
	const struct op *op; /* the point's op */
};

static int cmp_resid(const void *a, const void *b)
{
	const struct resid *x = a, *y = b;
	if (x->cls != y->cls)
		return x->cls - y->cls;
	if (x->any != y->any)
		return x->any - y->any;
	if (x->dt != y->dt)
		return (int)x->dt - (int)y->dt;
	if (x->coll != y->coll)
		return x->coll - y->coll;
	if (x->ranks != y->ranks)
		return (x->ranks > y->ranks) - (x->ranks < y->ranks);
	if (x->n != y->n)
		return (x->n > y->n) - (x->n < y->n);
	if (x->k != y->k)
		return (x->k > y->k) - (x->k < y->k);
	return (x->x > y->x) - (x->x < y->x);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Knots of one run r[0..n) sorted by x: bins of a quarter decade (a 16th for KDA verify, whose
 * keys at one batch differ by the token count alone, 9 to 16; wider when the span needs more
 * than HW_TABLE_POINTS_MAX), each the median x and median y of its points. */
static int knots(const struct resid *r, int n, double *kx, double *ky, double *tmp_x, double *tmp_y)
{
	double span = r[n - 1].x - r[0].x;
	double w = log(10.0) / 16;
	if (span / w > HW_TABLE_POINTS_MAX - 1)
		w = span / (HW_TABLE_POINTS_MAX - 1) * 1.0001;
	int out = 0;
	for (int i = 0; i < n && out < HW_TABLE_POINTS_MAX;) {
		int j = i, m = 0;
		while (j < n && r[j].x - r[i].x < w) {
			tmp_x[m] = r[j].x;
			tmp_y[m] = r[j].y;
			m++, j++;
		}
		kx[out] = median(tmp_x, m);
		ky[out] = median(tmp_y, m);
		if (out == 0 || kx[out] > kx[out - 1])
			out++;
		i = j;
	}
	return out;
}

/* Pool-adjacent-violators: the non-decreasing sequence closest to y[0..n) in weighted least
 * squares (weights w; NULL: equal), in place. */
static void isotonic(double *y, const double *w, int n)
{
	double val[64], wt[64];
	int len[64], nb = 0;
	if (n > 64)
		n = 64;
	for (int i = 0; i < n; i++) {
		val[nb] = y[i];
		wt[nb] = w ? w[i] : 1;
		len[nb] = 1;
		nb++;
		while (nb > 1 && val[nb - 2] > val[nb - 1]) {
			double ws = wt[nb - 2] + wt[nb - 1];
			val[nb - 2] = (val[nb - 2] * wt[nb - 2] + val[nb - 1] * wt[nb - 1]) / ws;
			wt[nb - 2] = ws;
			len[nb - 2] += len[nb - 1];
			nb--;
		}
	}
	for (int b = 0, i = 0; b < nb; b++)
		for (int j = 0; j < len[b]; j++)
			y[i++] = val[b];
}

/* Knots (log model time kx, log efficiency ky) whose measured times (kx - ky, in logs) never
 * fall as the modeled time grows: isotonic regression of the log measured times. */
static void monotone_knots(const double *kx, double *ky, int nk)
{
	double y[HW_TABLE_POINTS_MAX];
	for (int k = 0; k < nk; k++)
		y[k] = kx[k] - ky[k];
	isotonic(y, NULL, nk);
	for (int k = 0; k < nk; k++)
		ky[k] = kx[k] - y[k];
}

static int build_tables(const struct calib_points *pts, struct hw *hw, const struct calib_fit_opts *o,
                        struct calib_fit_report *rep)
{
	size_t n = 0;
	struct resid *r = malloc((pts->n ? pts->n : 1) * sizeof *r);
	double *tx = malloc((pts->n ? pts->n : 1) * sizeof *tx),
	       *ty = malloc((pts->n ? pts->n : 1) * sizeof *ty);
	int rc = 0;
	if (!r || !tx || !ty) {
		rc = -ENOMEM;
		goto out;
	}
	hw->n_tables = 0;
	hw->n_gemm_points = 0;
	/* class tables */
	for (size_t i = 0; i < pts->n; i++) {
		const struct calib_point *p = &pts->p[i];
		if (p->held_out || p->clock != HW_CLOCK_BOOST)
			continue; /* tables correct the boost clock's device time (sim/cost.h) */
		double pred = calib_predict_s(hw, p);
		if (!(pred > 0) || !(table_key(p, pred) > 0))
			continue;
		struct resid *x = &r[n++];
		memset(x, 0, sizeof *x);
		x->cls = p->cls;
		x->dt = table_dtype(hw, &p->op, &x->any);
		x->coll = p->cls == HW_CLASS_COMM ? (int)sim_op_coll(p->op.kind) : -1;
		x->ranks = p->cls == HW_CLASS_COMM ? p->op.ranks : 0;
		x->op = &p->op;
		x->x = log(table_key(p, pred));
		x->y = log(pred / p->measured_s);
	}
	qsort(r, n, sizeof *r, cmp_resid);
	for (size_t i = 0; i < n && hw->n_tables < HW_TABLES_MAX;) {
		size_t j = i;
		while (j < n && r[j].cls == r[i].cls && r[j].any == r[i].any && r[j].dt == r[i].dt &&
		       r[j].coll == r[i].coll && r[j].ranks == r[i].ranks)
			j++;
		struct hw_table *t = &hw->tables[hw->n_tables];
		double kx[HW_TABLE_POINTS_MAX], ky[HW_TABLE_POINTS_MAX];
		int nk = knots(r + i, (int)(j - i), kx, ky, tx, ty);
		if (key_of((enum hw_class)r[i].cls) == HW_KEY_MODEL_S)
			monotone_knots(kx, ky, nk);
		memset(t, 0, sizeof *t);
		t->cls = (enum hw_class)r[i].cls;
		t->key = key_of(t->cls);
		t->any_dtype = r[i].any;
		t->dtype = r[i].dt;
		t->any_coll = r[i].coll < 0;
		t->coll = r[i].coll < 0 ? HW_COLL_ALLREDUCE : (enum hw_coll)r[i].coll;
		t->ranks = r[i].ranks;
		t->n = nk;
		for (int k = 0; k < nk; k++) {
			t->x[k] = exp(kx[k]);
			t->eff[k] = exp(ky[k]);
		}
		hw->n_tables++;
		i = j;
	}
	/* measured GEMM shapes: time over m per (math dtype, n, k), non-decreasing in m */
	if (!o || !o->no_shape_tables) {
		n = 0;
		for (size_t i = 0; i < pts->n; i++) {
			const struct calib_point *p = &pts->p[i];
			if (p->held_out || p->clock != HW_CLOCK_BOOST || p->op.kind != OP_GEMM || !(p->measured_s > 0))
				continue;
			struct resid *x = &r[n++];
			memset(x, 0, sizeof *x);
			x->dt = table_dtype(hw, &p->op, &x->any);
			x->coll = -1;
			x->n = p->op.n;
			x->k = p->op.k;
			x->x = log((double)(p->op.m > 0 ? p->op.m : 1));
			x->y = log(p->measured_s);
		}
		qsort(r, n, sizeof *r, cmp_resid);
		for (size_t i = 0; i < n && hw->n_gemm_points < HW_GEMM_SHAPES_MAX;) {
			size_t j = i;
			while (j < n && r[j].dt == r[i].dt && r[j].n == r[i].n && r[j].k == r[i].k)
				j++;
			struct hw_gemm_points *g = &hw->gemm_points[hw->n_gemm_points];
			double w[HW_TABLE_POINTS_MAX];
			memset(g, 0, sizeof *g);
			g->n = r[i].n;
			g->k = r[i].k;
			g->dtype = r[i].dt;
			/* one knot per distinct m (geometric mean of repeats), then isotonic in m */
			for (size_t a = i; a < j && g->points < HW_TABLE_POINTS_MAX;) {
				size_t b = a;
				double sum = 0;
				while (b < j && r[b].x == r[a].x)
					sum += r[b++].y;
				g->m[g->points] = round(exp(r[a].x)); /* token counts: exact */
				g->time_s[g->points] = sum / (double)(b - a);
				w[g->points] = (double)(b - a);
				g->points++;
				a = b;
			}
			isotonic(g->time_s, w, g->points);
			for (int q = 0; q < g->points; q++)
				g->time_s[q] = exp(g->time_s[q]);
			hw->n_gemm_points++;
			i = j;
		}
	}
	rep->tables = hw->n_tables;
	rep->gemm_shapes = hw->n_gemm_points;
out:
	free(r);
	free(tx);
	free(ty);
	return rc;
}

/* The sustained SM clock in [0.4, 1] x boost minimizing the mean |log error| of the points
 * (golden-section: one parameter, unimodal in practice); returns that error, hw holds it. */
/* The spread of log(predicted / measured) around its mean over the points: what a class table
 * cannot take out (it takes their common factor). */
static double log_spread(const struct hw *hw, const struct calib_point *const *pt, int n)
{
	double mean = 0, s = 0;
	for (int i = 0; i < n; i++)
		mean += log(fmax(calib_predict_s(hw, pt[i]), 1e-30) / pt[i]->measured_s);
	mean /= n;
	for (int i = 0; i < n; i++)
		s += fabs(log(fmax(calib_predict_s(hw, pt[i]), 1e-30) / pt[i]->measured_s) - mean);
	return s / n;
}

/* 2b. The MXFP4 grouped kernel's expansion rate (hw.h grouped_fp4_*; the base preset's chunk rule):
 * the rate under which the physical model's times of the measured tiled MXFP4 grouped GEMMs
 * follow the measured ones up to one common factor (the class table takes that factor). Their
 * rows per chunk differ with the tokens (one chunk an expert at T = 4K, two at 16K for K3), which
 * is what separates a chunk's cost from a row's. A search over the log of the rate, 0.25-4096
 * elements an SM cycle; not fitted with fewer than 3 points or one ratio of rows to chunks. */
static void fit_fp4_chunks(const struct calib_points *pts, struct hw *hw, struct calib_fit_stage *r,
			   const struct calib_point **sel)
{
	int n = 0;
	double lo_ratio = INFINITY, hi_ratio = 0;
	for (size_t i = 0; i < pts->n; i++) {
		const struct calib_point *p = &pts->p[i];
		double chunks = sim_fp4_chunks(hw, &p->op);
		if (p->held_out || p->clock != HW_CLOCK_BOOST || !(chunks > 0))
			continue;
		sel[n++] = p;
		lo_ratio = fmin(lo_ratio, (double)p->op.m / chunks);
		hi_ratio = fmax(hi_ratio, (double)p->op.m / chunks);
	}
	r->points = n;
	if (n < CALIB_FIT_MIN_POINTS || hi_ratio < 1.05 * lo_ratio)
		return;
	hw->grouped_fp4_welems_per_sm_cycle = 0;
	r->before = log_spread(hw, sel, n);
	double best = INFINITY, best_x = 0;
	for (double x = log(0.25); x <= log(4096.0) + 1e-9; x += 0.02) {
		hw->grouped_fp4_welems_per_sm_cycle = exp(x);
		double f = log_spread(hw, sel, n);
		if (f < best) {
			best = f;
			best_x = x;
		}
	}
	hw->grouped_fp4_welems_per_sm_cycle = exp(best_x);
	r->after = best;
	r->fitted = true;
}

static double fit_sustained_clock(struct hw *hw, const struct calib_point *const *pt, int n)
{
	const double g = (sqrt(5.0) - 1) / 2, boost = hw->sm_clock_hz;
	double a = 0.4 * boost, b = boost;
	double x1 = b - g * (b - a), x2 = a + g * (b - a);
	hw->sustained_sm_clock_hz = x1;
	double f1 = mean_abs_log(hw, pt, n);
	hw->sustained_sm_clock_hz = x2;
	double f2 = mean_abs_log(hw, pt, n);
	for (int it = 0; it < 60 && b - a > 1e-4 * boost; it++) {
		if (f1 < f2) {
			b = x2;
			x2 = x1;
			f2 = f1;
			x1 = b - g * (b - a);
			hw->sustained_sm_clock_hz = x1;
			f1 = mean_abs_log(hw, pt, n);
		} else {
			a = x1;
			x1 = x2;
			f1 = f2;
			x2 = a + g * (b - a);
			hw->sustained_sm_clock_hz = x2;
			f2 = mean_abs_log(hw, pt, n);
		}
	}
	hw->sustained_sm_clock_hz = f1 < f2 ? x1 : x2;
	return mean_abs_log(hw, pt, n);
}

struct power_fit {
	struct hw *hw;
	const struct calib_instance *inst;
	const struct sim_power_op *ops;
	size_t n;
	double weight_s; /* the instances' spans, summed */
	double *gap_s, *hz; /* the window limiter's: room for n each (NULL without a window) */
	bool hold_byte;     /* the byte energy held at hw's (measured: hw power_byte_held) */
	int rc;             /* the window limiter's failure (-ENOMEM), else 0 */
};

static double clampd(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* power_obj under the window limiter (sim_power_window_clocks): each source's instances in time
 * order one sequence after an idle GPU, the gaps between them idle. */
static double window_obj(struct power_fit *f)
{
	double s = 0;
	for (size_t i0 = 0, i1; i0 < f->n; i0 = i1) {
		int64_t busy_to = f->inst[i0].start_ns;
		for (i1 = i0; i1 < f->n && f->inst[i1].source == f->inst[i0].source; i1++) {
			const struct calib_instance *in = &f->inst[i1];
			f->gap_s[i1] = in->start_ns > busy_to ? (double)(in->start_ns - busy_to) * 1e-9 : 0;
			if (in->end_ns > busy_to)
				busy_to = in->end_ns;
		}
		int rc = sim_power_window_clocks(f->hw, f->ops + i0, NULL, f->gap_s + i0, i1 - i0, false, f->hz + i0);
		if (rc < 0) {
			f->rc = rc;
			return 0;
		}
		for (size_t i = i0; i < i1; i++) {
			const struct calib_instance *in = &f->inst[i];
			s += (double)(in->end_ns - in->start_ns) * 1e-9 * fabs(log(f->hz[i] / in->sm_clock_hz));
		}
	}
	return f->weight_s > 0 ? s / f->weight_s : 0;
}

/* The controller over each source's instances in time order, from idle, resting between them:
 * the mean |log(its clock / the recorded clock)|, weighted by span. x: log power_flop_j, log
 * power_byte_j. */
static double power_obj(const double *x, void *ctx)
{
	struct power_fit *f = ctx;
	struct hw *hw = f->hw;
	hw->power_flop_j = exp(clampd(x[0], log(1e-16), log(1e-10)));
	if (!f->hold_byte)
		hw->power_byte_j = exp(clampd(x[1], log(1e-15), log(1e-9)));
	if (f->hz)
		return window_obj(f);
	struct sim_power_state st;
	double s = 0;
	int64_t busy_to = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct calib_instance *in = &f->inst[i];
		if (i == 0 || in->source != f->inst[i - 1].source) {
			sim_power_idle(hw, &st);
			busy_to = in->start_ns;
		}
		if (in->start_ns > busy_to)
			sim_power_rest(hw, &st, (double)(in->start_ns - busy_to) * 1e-9);
		if (in->end_ns > busy_to)
			busy_to = in->end_ns;
		double hz;
		sim_power_run(hw, &st, &f->ops[i], &hz);
		s += (double)(in->end_ns - in->start_ns) * 1e-9 * fabs(log(hz / in->sm_clock_hz));
	}
	return f->weight_s > 0 ? s / f->weight_s : 0;
}

/* An op's instances in one capture (a bench's repetitions) as the draw fit sees them: the model's draw
 * at its recorded clock is P_idle + a_w + e * x_w + e_byte * b_w (a_w its class's active draw at
 * that clock, e its class's FLOP energy, e_byte the HBM byte's, J), against the mean of the power
 * readings inside it; weight_s its span. */
struct draw_group {
	enum hw_power_class klass;
	double a_w, x_w, b_w, power_w, weight_s;
};

/* The readings an op's instances need inside them to show its own draw (one reading may be mostly
 * the op before: NVML's readings lag), and the groups a class needs for its one parameter (never
 * more parameters than half the points). */
enum { POWER_GROUP_MIN_READINGS = 2, POWER_CLASS_MIN_GROUPS = 2 };

static _Thread_local const struct calib_instance *sort_inst; /* cmp_inst_op's array (qsort has no context) */

/* By source, then op (bytes: an op's instances are copies of one spec's op), then start. */
static int cmp_inst_op(const void *a, const void *b)
{
	const struct calib_instance *x = &sort_inst[*(const size_t *)a], *y = &sort_inst[*(const size_t *)b];
	if (x->source != y->source)
		return (x->source > y->source) - (x->source < y->source);
	int c = memcmp(&x->op, &y->op, sizeof x->op);
	if (c)
		return c;
	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* The draw groups of the instances: the instances of one op in one source (a bench's repetitions)
 * with at least POWER_GROUP_MIN_READINGS power readings inside them all and FLOPs; its power the
 * readings' mean (each instance's median, weighted by its readings), its clock likewise (clamped
 * to [floor, boost]), its weight the instances' time. Into g (room for n_inst); their count, or
 * -ENOMEM. */
static ptrdiff_t draw_groups(const struct hw *hw, const struct calib_points *pts, const struct sim_power_op *ops,
			     struct draw_group *g)
{
	size_t *idx = malloc((pts->n_inst ? pts->n_inst : 1) * sizeof *idx);
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < pts->n_inst; i++)
		idx[i] = i;
	sort_inst = pts->inst;
	qsort(idx, pts->n_inst, sizeof *idx, cmp_inst_op);
	size_t n = 0;
	const double fb = hw->sm_clock_hz, ff = fmin(hw->power_min_sm_clock_hz, fb);
	for (size_t i = 0, j; i < pts->n_inst; i = j) {
		const struct calib_instance *first = &pts->inst[idx[i]];
		double rw = 0, pw = 0, hz = 0, span_s = 0;
		for (j = i; j < pts->n_inst && pts->inst[idx[j]].source == first->source &&
			    memcmp(&pts->inst[idx[j]].op, &first->op, sizeof first->op) == 0;
		     j++) {
			const struct calib_instance *in = &pts->inst[idx[j]];
			span_s += (double)(in->end_ns - in->start_ns) * 1e-9;
			if (in->power_readings > 0 && in->power_w > 0) {
				rw += in->power_readings;
				pw += in->power_readings * in->power_w;
				hz += in->power_readings * in->sm_clock_hz;
			}
		}
		const struct sim_power_op *op = &ops[idx[i]];
		if (rw < POWER_GROUP_MIN_READINGS || !(op->flops > 0) || !(span_s > 0))
			continue;
		double f = fmax(fmin(hz / rw, fb), ff), t = sim_power_time_s(hw, op, f), v = f / fb;
		if (!(t > 0))
			continue;
		g[n++] = (struct draw_group){.klass = op->klass, .a_w = sim_power_active_w(hw, op->klass, v),
					     .x_w = op->flops * sim_power_flop_scale(hw, v) / t,
					     .b_w = op->hbm_bytes / t, .power_w = pw / rw,
					     .weight_s = span_s};
	}
	free(idx);
	return (ptrdiff_t)n;
}

/* The group's draw with FLOP energy e_j and byte energy byte_j, W. */
static double group_draw(const struct hw *hw, const struct draw_group *g, double e_j, double byte_j)
{
	return hw->power_idle_w + g->a_w + e_j * g->x_w + byte_j * g->b_w;
}

/* The span-weighted mean |log(predicted / recorded draw)| of class c's groups (c < 0: every
 * group, each with its class's energy in e_j[]) with FLOP energy e_j (c >= 0: e_j[0]) and byte
 * energy byte_j. */
static double draw_error(const struct hw *hw, const struct draw_group *g, size_t n, int c, const double *e_j,
			 double byte_j)
{
	double s = 0, w = 0;
	for (size_t i = 0; i < n; i++) {
		if (c >= 0 && (int)g[i].klass != c)
			continue;
		double e = c >= 0 ? e_j[0] : e_j[g[i].klass];
		s += g[i].weight_s * fabs(log(group_draw(hw, &g[i], e, byte_j) / g[i].power_w));
		w += g[i].weight_s;
	}
	return w > 0 ? s / w : 0;
}

struct weighted {
	double x, w;
};

static int cmp_weighted(const void *a, const void *b)
{
	double x = ((const struct weighted *)a)->x, y = ((const struct weighted *)b)->x;
	return (x > y) - (x < y);
}

/* The weighted median of v[0, n) (sorted in place); n > 0. */
static double weighted_median(struct weighted *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_weighted);
	double total = 0, acc = 0;
	for (size_t i = 0; i < n; i++)
		total += v[i].w;
	for (size_t i = 0; i < n; i++) {
		acc += v[i].w;
		if (acc >= 0.5 * total)
			return v[i].x;
	}
	return v[n - 1].x;
}

/* Each class's FLOP energy at byte energy byte_j (a class measured whole, sim_power_class_held:
 * the base's, not fitted): its groups' energies, the one that makes the
 * model's draw at the recorded clock the recorded one, (P - P_idle - byte_j b) / x, their median
 * weighted by span (robust to shapes whose FLOPs the model counts apart from the kernel's: a
 * least-squares fit in W was set by such outliers, e.g. a causal MLA over 4K tokens drawing half
 * what its counted FLOPs say), where it has at least POWER_CLASS_MIN_GROUPS groups and the median
 * is positive; e_j[c] the global energy elsewhere (fitted[c] false). v: room for n. */
static void class_energies(const struct hw *hw, const struct draw_group *g, size_t n, double byte_j,
			   struct weighted *v, double *e_j, bool *fitted, int *points)
{
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if ((int)g[i].klass == c)
				v[k++] = (struct weighted){
					(g[i].power_w - hw->power_idle_w - g[i].a_w - byte_j * g[i].b_w) / g[i].x_w,
					g[i].weight_s};
		points[c] = (int)k;
		if (sim_power_class_held(hw, (enum hw_power_class)c)) { /* measured whole: the base's */
			fitted[c] = false;
			e_j[c] = sim_power_flop_j(hw, (enum hw_power_class)c);
			continue;
		}
		double e = k >= POWER_CLASS_MIN_GROUPS ? weighted_median(v, k) : 0;
		fitted[c] = e > 0 && isfinite(e);
		e_j[c] = fitted[c] ? e : hw->power_flop_j;
	}
}

/* The byte energies the draw fit tries, J: a log grid, then a golden-section refinement. */
#define POWER_BYTE_GRID_LO 5e-12
#define POWER_BYTE_GRID_HI 500e-12
enum { POWER_BYTE_GRID = 48, POWER_BYTE_REFINE = 40 };

/* The draw fit's error at byte energy byte_j (each class's energy fitted at it). */
static double byte_error(const struct hw *hw, const struct draw_group *g, size_t n, double byte_j, struct weighted *v)
{
	double e[HW_POWER_CLASS_COUNT];
	bool fitted[HW_POWER_CLASS_COUNT];
	int points[HW_POWER_CLASS_COUNT];
	class_energies(hw, g, n, byte_j, v, e, fitted, points);
	return draw_error(hw, g, n, -1, e, byte_j);
}

/* The power classes' FLOP energies and the HBM byte's from the board power recorded around the
 * captures' runs of one op (draw_groups; calib_fit stage 6): for a byte energy, each class's
 * energy the span-weighted median of its groups' (class_energies); the byte energy the one whose
 * class energies make the span-weighted mean |log(predicted / recorded draw)| over every group
 * least (a log grid, then golden section), where the groups number at least twice the parameters
 * (the fitted classes and the byte: never more parameters than half the points); else the byte
 * energy of the clock fit, held. The classes without enough groups, or whose fit is not positive,
 * keep the global energy (0). rep[c]: each class's groups and its error with the global energy
 * and with its own; byte_rep: every group, the error at the clock fit's byte energy and the
 * draw fit's. 0, or -ENOMEM. */
static int fit_power_classes(struct hw *hw, const struct calib_points *pts, const struct sim_power_op *ops,
			     bool hold_byte, struct calib_fit_stage *rep, struct calib_fit_stage *byte_rep)
{
	size_t cap = pts->n_inst ? pts->n_inst : 1;
	struct draw_group *g = malloc(cap * sizeof *g);
	struct weighted *v = malloc(cap * sizeof *v);
	if (!g || !v) {
		free(g);
		free(v);
		return -ENOMEM;
	}
	ptrdiff_t got = draw_groups(hw, pts, ops, g);
	if (got < 0) {
		free(g);
		free(v);
		return (int)got;
	}
	/* a class measured whole (sim_power_class_held) is not fitted, nor evidence for the byte */
	size_t ng = 0;
	for (size_t i = 0; i < (size_t)got; i++)
		if (!sim_power_class_held(hw, g[i].klass))
			g[ng++] = g[i];
	double e[HW_POWER_CLASS_COUNT];
	bool fitted[HW_POWER_CLASS_COUNT];
	int points[HW_POWER_CLASS_COUNT];
	*byte_rep = (struct calib_fit_stage){.points = (int)ng};
	class_energies(hw, g, ng, hw->power_byte_j, v, e, fitted, points);
	int params = 1;
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		params += fitted[c];
	if (!hold_byte && ng >= 2 * (size_t)params && params > 1) {
		/* the byte energy: the best of a log grid, then golden section around it */
		double lg_lo = log(POWER_BYTE_GRID_LO), lg_hi = log(POWER_BYTE_GRID_HI);
		double step = (lg_hi - lg_lo) / (POWER_BYTE_GRID - 1), best = hw->power_byte_j;
		double fbest = byte_error(hw, g, ng, best, v);
		byte_rep->before = fbest;
		for (int i = 0; i < POWER_BYTE_GRID; i++) {
			double x = exp(lg_lo + step * i), fx = byte_error(hw, g, ng, x, v);
			if (fx < fbest) {
				fbest = fx;
				best = x;
			}
		}
		double a = fmax(lg_lo, log(best) - step), b = fmin(lg_hi, log(best) + step);
		const double r = 0.5 * (sqrt(5.0) - 1);
		for (int i = 0; i < POWER_BYTE_REFINE; i++) {
			double x1 = b - r * (b - a), x2 = a + r * (b - a);
			if (byte_error(hw, g, ng, exp(x1), v) < byte_error(hw, g, ng, exp(x2), v))
				b = x2;
			else
				a = x1;
		}
		double x = exp(0.5 * (a + b)), fx = byte_error(hw, g, ng, x, v);
		if (fx < fbest) {
			fbest = fx;
			best = x;
		}
		byte_rep->after = fbest;
		byte_rep->fitted = true;
		hw->power_byte_j = best;
		class_energies(hw, g, ng, best, v, e, fitted, points);
	}
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++) {
		rep[c] = (struct calib_fit_stage){.points = points[c], .fitted = fitted[c]};
		if (!fitted[c])
			continue;
		double global = hw->power_flop_j;
		rep[c].before = draw_error(hw, g, ng, c, &global, hw->power_byte_j);
		rep[c].after = draw_error(hw, g, ng, c, &e[c], hw->power_byte_j);
		hw->power_flop_j_class[c] = e[c];
	}
	free(g);
	free(v);
	return 0;
}

/* The power model's energies (power_flop_pj, power_byte_pj) from the clocks the captures
 * recorded around their instances (calib_points.inst: the controller run over each capture's
 * instances as they ran, idle between them, against the recorded clock); the limit, idle draw,
 * time constant and floor are the base's (the byte energy too where the base measured it:
 * power_byte_held). The time constant is not fitted: readings held 100 ms (power follows the load
 * over ~1 s: bench/results/power-stream-h200-2026-12-03/README.md) do not pin it (fitted with the energies on six k3-bench captures of 2026-12-02 it came out
 * anywhere from 0.5 to 26 ms). 0, or -ENOMEM. */
static int fit_power(struct hw *hw, const struct calib_points *pts, struct calib_fit_stage *rep,
		     struct calib_fit_stage *class_rep, struct calib_fit_stage *byte_rep)
{
	for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
		if (!sim_power_class_held(hw, (enum hw_power_class)c))
			hw->power_flop_j_class[c] = 0;
	rep->points = (int)pts->n_inst;
	if (pts->n_inst < CALIB_FIT_MIN_POINTS)
		return 0;
	struct sim_power_op *ops = malloc(pts->n_inst * sizeof *ops);
	if (!ops)
		return -ENOMEM;
	struct power_fit f = {.hw = hw, .inst = pts->inst, .ops = ops, .n = pts->n_inst,
			      .hold_byte = hw->power_byte_held && hw->power_byte_j > 0};
	if (sim_power_windowed(hw)) {
		f.gap_s = malloc(pts->n_inst * sizeof *f.gap_s);
		f.hz = malloc(pts->n_inst * sizeof *f.hz);
		if (!f.gap_s || !f.hz) {
			free(f.gap_s);
			free(f.hz);
			free(ops);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < pts->n_inst; i++) {
		sim_power_op_cost(hw, &pts->inst[i].op, &ops[i]);
		f.weight_s += (double)(pts->inst[i].end_ns - pts->inst[i].start_ns) * 1e-9;
	}
	double best[2] = {log(hw->power_flop_j > 0 ? hw->power_flop_j : 1e-16),
			  log(hw->power_byte_j > 0 ? hw->power_byte_j : 1e-15)};
	rep->before = power_obj(best, &f);
	/* the objective is flat wherever nothing reaches the limit: start from the best of a grid */
	double fbest = rep->before;
	for (int a = 0; a < 8; a++)
		for (int b = 0; b < (f.hold_byte ? 1 : 8); b++) {
			double y[2] = {log(0.05e-12 * pow(2, a)), log(2e-12 * pow(2, b))};
			double fy = power_obj(y, &f);
			if (fy < fbest) {
				fbest = fy;
				memcpy(best, y, sizeof best);
			}
		}
	static const double step[2] = {0.5, 0.5};
	rep->after = calib_nelder_mead(power_obj, &f, best, step, f.hold_byte ? 1 : 2, 400);
	power_obj(best, &f);
	free(f.gap_s);
	free(f.hz);
	if (f.rc < 0) {
		free(ops);
		return f.rc;
	}
	rep->fitted = true;
	int rc = fit_power_classes(hw, pts, ops, f.hold_byte, class_rep, byte_rep);
	free(ops);
	return rc;
}

static enum dtype table_dtype_of(const struct hw *hw, const struct op *op)
{
	bool any;
	return table_dtype(hw, op, &any);
}

int calib_fit(const struct calib_points *pts, const struct hw *base, const struct calib_fit_opts *o,
              struct hw *out, struct calib_fit_report *rep, struct err *e)
{
	struct hw *hw = malloc(sizeof *hw);
	const struct calib_point **sel = malloc((pts->n ? pts->n : 1) * sizeof *sel);
	int rc = 0;
	if (!hw || !sel) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	memset(rep, 0, sizeof *rep);
	*hw = *base;
	/* kernel durations are device time: fit without launch gaps, restore them at the end */
	hw->launch_latency_s = hw->graph_launch_latency_s = 0;
	hw->n_tables = 0;
	hw->n_gemm_points = 0;
	hw->n_coll = 0;
	for (size_t i = 0; i < pts->n; i++) {
		if (pts->p[i].held_out)
			rep->held_out_points++;
		else
			rep->train_points++;
	}
	if (rep->train_points == 0) {
		err_set(e, NULL, 0, 0,
		        "no training points: every measured point is held out by the protocol");
		rc = -EINVAL;
		goto out;
	}

	struct stage st = {.hw = hw, .pt = sel};
	/* 1. memory */
	double xm[2] = {unsquash(hw->eff_memory.max),
	                log(hw->eff_memory.half > 0 ? hw->eff_memory.half : 1 << 20)};
	const double sm[2] = {0.5, 1.0};
	st.n = select_points(pts, is_memory, sel);
	st.apply = apply_memory;
	run_stage(&st, &rep->memory, xm, sm, 2);

	/* 2. GEMMs. With points enough: the kernel costs (a fixed cost, a cost per wave of tiles, the
	 * k loop's step latency) and the FLOP efficiency, for wave smoothings 0, 1/2 and 1, the best
	 * kept; with few, the efficiency curve (max, half) for smoothings 0, 1/4, ..., 1. */
	st.n = select_points(pts, is_gemm, sel);
	bool kernel = st.n >= CALIB_FIT_GEMM_KERNEL_POINTS;
	st.apply = kernel ? apply_gemm_kernel : apply_gemm;
	int nx = kernel ? 6 : 2;
	double best_f = INFINITY, best_x[6] = {0, 0, 0, 0, 0, 0}, best_s = base->gemm_wave_smoothing;
	struct calib_fit_stage best_r = {0};
	for (int k = 0; k <= 4 && st.n >= CALIB_FIT_MIN_POINTS; k += kernel ? 2 : 1) {
		hw->gemm_wave_smoothing = k / 4.0;
		double xg[6] = {unsquash(base->eff_gemm.max), log(base->eff_gemm.half > 0 ? base->eff_gemm.half : 1e7),
		                0, 0, 0, 0};
		if (kernel) {
			xg[0] = log(4000.0); /* ~2 us at 2 GHz */
			xg[1] = log(1500.0);
			xg[2] = log(50.0);
			xg[3] = xg[4] = unsquash(base->eff_gemm.max);
			/* from half the copies' rate (at the copies' rate HBM caps it: flat) */
			xg[5] = log(0.5 * hw->hbm_bw_bytes_per_s * hw->eff_memory.max / ((double)hw->sms * hw->sm_clock_hz));
		}
		const double sg[6] = {kernel ? 1.0 : 0.5, 1.0, 1.0, 0.5, 0.5, 0.5};
		struct calib_fit_stage r = {0};
		run_stage(&st, &r, xg, sg, nx);
		if (r.after < best_f) {
			best_f = r.after;
			memcpy(best_x, xg, sizeof best_x);
			best_s = hw->gemm_wave_smoothing;
			best_r = r;
		}
	}
	hw->gemm_wave_smoothing = best_s;
	if (st.n >= CALIB_FIT_MIN_POINTS) {
		st.apply(hw, best_x);
		hw->gemm_wave_smoothing = best_s;
		/* "before" is the base preset's error, at its own smoothing */
		struct hw *b = malloc(sizeof *b);
		if (b) {
			*b = *hw; /* launch gaps already zero */
			b->eff_gemm = base->eff_gemm;
			b->gemm_wave_smoothing = base->gemm_wave_smoothing;
			b->gemm_fixed_cycles = base->gemm_fixed_cycles;
			b->gemm_wave_cycles = base->gemm_wave_cycles;
			b->gemm_kstep_cycles = base->gemm_kstep_cycles;
			b->gemm_store_bytes_per_sm_cycle = base->gemm_store_bytes_per_sm_cycle;
			memcpy(b->gemm_eff, base->gemm_eff, sizeof b->gemm_eff);
			best_r.before = mean_abs_log(b, sel, st.n);
			free(b);
		}
		if (kernel) {
			/* an efficiency only for the math dtypes measured */
			bool fp8 = false;
			for (int i = 0; i < st.n; i++)
				fp8 |= table_dtype_of(hw, &sel[i]->op) == DT_FP8;
			if (!fp8)
				hw->gemm_eff[DT_FP8] = base->gemm_eff[DT_FP8];
		}
		rep->gemm = best_r;
	} else {
		rep->gemm.points = st.n;
	}

	if (hw->grouped_fp4_chunk_rows > 0)
		fit_fp4_chunks(pts, hw, &rep->grouped_fp4, sel);

	/* 3. KDA prefill chain, collectives */
	/* step floor, per-row step cost, intra-chunk cost per (token, head) per SM */
	/* (and where the base preset says its kernels overlap KDA prefill and training points of
	 * the overlapped shapes exist, whose times are the pair's wall time: the share of an SM a
	 * recurrent CTA takes from the intra kernel, with the rest; the rule itself is the base's) */
	/* (and, with points enough, twice the parameters: the pair's fixed cycles, last) */
	/* (and where the base preset has the pair kernel's rule and training points inside it: the
	 * ratio of its chain to the chunk kernel's) */
	double xk[6] = {log(hw->kda_chunk_step_cycles > 0 ? hw->kda_chunk_step_cycles : 3000),
	                log(hw->kda_step_row_cycles > 0 ? hw->kda_step_row_cycles : 10),
	                log(hw->kda_intra_cycles_per_token_head > 0 ? hw->kda_intra_cycles_per_token_head : 200)};
	double sk[6] = {0.3, 0.5, 0.5};
	st.n = select_points(pts, is_kda_chunk, sel);
	bool overlap = false, pairk = false;
	for (int i = 0; i < st.n; i++) {
		overlap = overlap || hw_kda_overlaps(hw, sel[i]->op.b, sel[i]->op.h, sel[i]->op.t);
		pairk = pairk || hw_kda_pair(hw, sel[i]->op.b, sel[i]->op.h, sel[i]->op.t);
	}
	int kda_params = 3;
	kda_x.share = kda_x.pair = kda_x.fixed = -1;
	if (overlap) {
		kda_x.share = kda_params;
		xk[kda_params] = unsquash(hw->kda_overlap_rec_share > 0 ? hw->kda_overlap_rec_share : 0.5);
		sk[kda_params++] = 0.5;
	}
	if (pairk) {
		kda_x.pair = kda_params;
		xk[kda_params] = unsquash(hw->kda_pair_chain_ratio > 0 ? fmin(hw->kda_pair_chain_ratio, 0.9) : 0.9);
		sk[kda_params++] = 0.5;
	}
	if (st.n >= 2 * (kda_params + 1)) {
		kda_x.fixed = kda_params;
		xk[kda_params] = log(hw->kda_fixed_cycles > 0 ? hw->kda_fixed_cycles : 5000);
		sk[kda_params++] = 1.0;
	}
	st.apply = apply_kda_any;
	if (st.n >= 1 && st.n < CALIB_FIT_MIN_POINTS)
		rep->kda_chunk.points = st.n;
	else
		run_stage(&st, &rep->kda_chunk, xk, sk, kda_params);
	/* KDA verify: its per-token cycles, linear and quadratic in the tokens */
	double xv[2] = {log(hw->kda_verify_lin_cycles > 0 ? hw->kda_verify_lin_cycles : 500),
	                log(hw->kda_verify_quad_cycles > 0 ? hw->kda_verify_quad_cycles : 50)};
	const double sv[2] = {0.5, 0.5};
	st.n = select_points(pts, is_kda_verify, sel);
	st.apply = apply_verify;
	if (st.n >= CALIB_FIT_MIN_POINTS)
		run_stage(&st, &rep->kda_verify, xv, sv, 2);
	else
		rep->kda_verify.points = st.n;
	/* a model per collective kind and rank count with points enough; the interconnect's curve
	 * and latency (what the others get) from the points of the rest only */
	fit_colls(pts, hw, rep, sel);
	double xc[3] = {unsquash(hw->eff_comm.max), log(hw->eff_comm.half > 0 ? hw->eff_comm.half : 1 << 20),
	                log(hw->nvlink_latency_s > 0 ? hw->nvlink_latency_s : 3e-6)};
	const double sc[3] = {0.5, 1.0, 0.5};
	st.n = 0;
	for (size_t i = 0; i < pts->n; i++) {
		const struct calib_point *p = &pts->p[i];
		if (!p->held_out && p->clock == HW_CLOCK_BOOST && is_comm(p) &&
		    !hw_coll_model(hw, sim_op_coll(p->op.kind), p->op.ranks))
			sel[st.n++] = p;
	}
	st.apply = apply_comm;
	run_stage(&st, &rep->comm, xc, sc, 3);

	/* 4. what remains, as tables */
	if (!o || !o->no_tables) {
		if ((rc = build_tables(pts, hw, o, rep)) < 0) {
			err_set(e, NULL, 0, 0, "out of memory");
			goto out;
		}
	}
	/* 5. the sustained clock, from the points measured under continuous load, with everything
	 * above held (the tables correct the boost clock's device time; another clock scales it) */
	st.n = 0;
	for (size_t i = 0; i < pts->n; i++)
		if (!pts->p[i].held_out && pts->p[i].clock == HW_CLOCK_SUSTAINED)
			sel[st.n++] = &pts->p[i];
	rep->sustained.points = st.n;
	if (st.n >= CALIB_FIT_MIN_POINTS) {
		rep->sustained.before = mean_abs_log(hw, sel, st.n);
		rep->sustained.after = fit_sustained_clock(hw, sel, st.n);
		rep->sustained.fitted = true;
	}
	/* 6. the power model's draws, from the clocks recorded around the points (everything else
	 * held), where the base has the model */
	if (sim_power_known(hw) && (rc = fit_power(hw, pts, &rep->power, rep->power_class, &rep->power_byte)) < 0) {
		err_set(e, NULL, 0, 0, "out of memory");
		goto out;
	}
	hw->launch_latency_s = base->launch_latency_s;
	hw->graph_launch_latency_s = base->graph_launch_latency_s;
	hw->calibrated = true;
	*out = *hw;
out:
	free(hw);
	free(sel);
	return rc;
}
