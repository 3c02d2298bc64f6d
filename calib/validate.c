#include "calib/validate.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib/fit.h"
#include "calib/runs.h"
#include "sim/cost.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Linear interpolation between order statistics (numpy's default); v is sorted. */
static double percentile(const double *v, int n, double q)
{
	if (n <= 0)
		return NAN;
	double pos = q / 100.0 * (n - 1);
	int lo = (int)floor(pos);
	int hi = lo + 1 < n ? lo + 1 : n - 1;
	return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

static void errors_of(const double *err, const int *idx, int n, double *tmp, struct calib_errors *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (n == 0) {
		out->med_abs_pct = out->p90_abs_pct = out->max_abs_pct = out->med_signed_pct = NAN;
		return;
	}
	for (int i = 0; i < n; i++)
		tmp[i] = err[idx[i]];
	qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
	out->med_signed_pct = percentile(tmp, n, 50);
	for (int i = 0; i < n; i++)
		tmp[i] = fabs(err[idx[i]]);
	qsort(tmp, (size_t)n, sizeof *tmp, cmp_double);
	out->med_abs_pct = percentile(tmp, n, 50);
	out->p90_abs_pct = percentile(tmp, n, 90);
	out->max_abs_pct = tmp[n - 1];
}

static void noise_of(const struct calib_points *pts, const int *idx, int n, double *tmp, struct calib_noise *out)
{
	int m = 0;
	for (int i = 0; i < n; i++)
		if (pts->p[idx[i]].runs >= 2)
			tmp[m++] = pts->p[idx[i]].spread * 100.0;
	out->n = m;
	if (m == 0) {
		out->med_pct = out->p90_pct = out->max_pct = NAN;
		return;
	}
	qsort(tmp, (size_t)m, sizeof *tmp, cmp_double);
	out->med_pct = percentile(tmp, m, 50);
	out->p90_pct = percentile(tmp, m, 90);
	out->max_pct = tmp[m - 1];
}

int calib_validate(struct calib_validation *v, const struct calib_points *pts, const struct hw *hw,
                   struct err *e)
{
	return calib_validate_clock(v, pts, hw, CALIB_CLOCK_REGIME, e);
}

/* Time-weighted mean of the clocks of points idx[0..n). */
static double mean_clock(const struct calib_validation *v, const int *idx, int n)
{
	double w = 0, s = 0;
	for (int i = 0; i < n; i++) {
		const struct calib_point *p = &v->pts->p[idx[i]];
		double t = p->measured_s * (double)(p->samples > 0 ? p->samples : 1);
		w += t;
		s += t * v->clock_hz[idx[i]];
	}
	return w > 0 ? s / w : NAN;
}

int calib_validate_clock(struct calib_validation *v, const struct calib_points *pts, const struct hw *hw,
                         enum calib_clock_mode mode, struct err *e)
{
	memset(v, 0, sizeof *v);
	size_t n = pts->n ? pts->n : 1;
	int *idx = malloc(n * sizeof *idx), *held = malloc(n * sizeof *held),
	    *train = malloc(n * sizeof *train);
	double *tmp = malloc(n * sizeof *tmp);
	v->predicted_s = malloc(n * sizeof *v->predicted_s);
	v->err_pct = malloc(n * sizeof *v->err_pct);
	v->clock_hz = malloc(n * sizeof *v->clock_hz);
	v->clock_mode = mode;
	int rc = 0;
	if (!idx || !held || !train || !tmp || !v->predicted_s || !v->err_pct || !v->clock_hz) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	struct hw *dev = malloc(sizeof *dev);
	if (!dev) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	calib_device_hw(dev, hw);
	v->pts = pts;
	snprintf(v->hw_name, sizeof v->hw_name, "%s", hw->name);
	v->hw_calibrated = hw->calibrated;
	v->boost_hz = hw->sm_clock_hz;
	for (size_t i = 0; i < pts->n; i++) {
		const struct calib_point *p = &pts->p[i];
		struct cost_opts co = {.clock = {.regime = p->clock}};
		if (mode == CALIB_CLOCK_MEASURED) {
			if (!(p->sm_clock_hz > 0)) {
				v->without_clock++;
			} else if (p->sm_clock_hz > hw->sm_clock_hz) {
				v->above_boost++;
				co.clock = (struct hw_clock_sel){.regime = HW_CLOCK_BOOST};
			} else {
				co.clock = (struct hw_clock_sel){.given_hz = p->sm_clock_hz};
			}
		}
		struct op_cost c;
		sim_op_cost(dev, &p->op, &co, &c);
		v->clock_hz[i] = hw_clock_sel_hz(dev, &co.clock);
		v->predicted_s[i] = c.time_s;
		v->err_pct[i] = (v->predicted_s[i] - pts->p[i].measured_s) / pts->p[i].measured_s * 100.0;
	}
	free(dev);
	/* classes in order of first appearance */
	for (size_t i = 0; i < pts->n; i++) {
		int c = 0;
		while (c < v->n_cls && strcmp(v->cls[c].label, pts->p[i].label) != 0)
			c++;
		if (c == v->n_cls) {
			if (v->n_cls == CALIB_CLASSES_MAX)
				continue;
			snprintf(v->cls[c].label, sizeof v->cls[c].label, "%s", pts->p[i].label);
			v->n_cls++;
		}
	}
	int na = 0, nh = 0;
	for (int c = 0; c < v->n_cls; c++) {
		struct calib_class_stats *s = &v->cls[c];
		int ni = 0, nhc = 0, ntc = 0;
		for (size_t i = 0; i < pts->n; i++) {
			if (strcmp(pts->p[i].label, s->label) != 0)
				continue;
			idx[ni++] = (int)i;
			if (pts->p[i].held_out)
				held[nhc++] = (int)i;
			else
				train[ntc++] = (int)i;
		}
		s->clock_hz = mean_clock(v, idx, ni);
		errors_of(v->err_pct, idx, ni, tmp, &s->all);
		errors_of(v->err_pct, held, nhc, tmp, &s->held_out);
		errors_of(v->err_pct, train, ntc, tmp, &s->train);
		noise_of(pts, idx, ni, tmp, &s->noise);
		/* worst offenders: a partial selection by |error| */
		for (int w = 0; w < CALIB_WORST_MAX && w < ni; w++) {
			int best = w;
			for (int j = w + 1; j < ni; j++)
				if (fabs(v->err_pct[idx[j]]) > fabs(v->err_pct[idx[best]]))
					best = j;
			int t = idx[w];
			idx[w] = idx[best];
			idx[best] = t;
			s->worst[s->n_worst++] = idx[w];
		}
	}
	for (size_t i = 0; i < pts->n; i++) {
		idx[na++] = (int)i;
		if (pts->p[i].held_out)
			held[nh++] = (int)i;
	}
	v->clock_hz_all = mean_clock(v, idx, na);
	errors_of(v->err_pct, idx, na, tmp, &v->all);
	errors_of(v->err_pct, held, nh, tmp, &v->held_out);
	noise_of(pts, idx, na, tmp, &v->noise);
out:
	free(idx);
	free(held);
	free(train);
	free(tmp);
	if (rc < 0)
		calib_validation_release(v);
	return rc;
}

void calib_validation_release(struct calib_validation *v)
{
	free(v->predicted_s);
	free(v->err_pct);
	free(v->clock_hz);
	memset(v, 0, sizeof *v);
}

/* ---- cross-validation ---- */

static int xval_class(struct calib_xval *x, const char *label)
{
	for (int c = 0; c < x->n_cls; c++)
		if (strcmp(x->cls[c].label, label) == 0)
			return c;
	if (x->n_cls == CALIB_CLASSES_MAX)
		return -1;
	snprintf(x->cls[x->n_cls].label, sizeof x->cls[0].label, "%s", label);
	return x->n_cls++;
}

const struct calib_xval_class *calib_xval_class(const struct calib_xval *x, const char *label)
{
	for (int c = 0; x && c < x->n_cls; c++)
		if (strcmp(x->cls[c].label, label) == 0)
			return &x->cls[c];
	return NULL;
}

void calib_xval_release(struct calib_xval *x)
{
	free(x->shapes);
	memset(x, 0, sizeof *x);
}

static int cmp_point_op(const void *a, const void *b)
{
	const struct calib_point *x = *(const struct calib_point *const *)a,
	                         *y = *(const struct calib_point *const *)b;
	return calib_point_cmp(x, y);
}

/* The scored points of the rotations: class, error and (by run) the floor's error, in %. */
struct scores {
	int *cls;
	double *err, *floor;
	int n, cap;
};

static void score(struct scores *s, int cls, double err, double floor)
{
	if (s->n < s->cap) {
		s->cls[s->n] = cls;
		s->err[s->n] = err;
		s->floor[s->n] = floor;
		s->n++;
	}
}

/* Errors of scores [from, to) of class cls (< 0: every class) into *out (and the floor's). */
static void pooled(const struct scores *s, int from, int to, int cls, int *idx, double *tmp,
                   struct calib_errors *out, struct calib_errors *floor)
{
	int n = 0;
	for (int i = from; i < to; i++)
		if (cls < 0 || s->cls[i] == cls)
			idx[n++] = i;
	errors_of(s->err, idx, n, tmp, out);
	if (floor)
		errors_of(s->floor, idx, n, tmp, floor);
}

static bool same_shape(const struct calib_point *p, int64_t n, int64_t k)
{
	return p->op.kind == OP_GEMM && p->op.n == n && p->op.k == k;
}

/* Fit `train` from base; *fitted false with the reason in note when the fit has nothing to go
 * on. Only running out of memory is an error. */
static int fold_fit(const struct calib_points *train, const struct hw *base, const struct calib_fit_opts *o,
                    struct hw *dev, bool *fitted, char *note, size_t n, struct err *e)
{
	struct hw *fit = malloc(sizeof *fit);
	struct calib_fit_report rep;
	struct err fe = {0};
	*fitted = false;
	if (!fit) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	int rc = calib_fit(train, base, o, fit, &rep, &fe);
	if (rc == -ENOMEM) {
		*e = fe;
	} else if (rc < 0) {
		snprintf(note, n, "%.150s", fe.msg);
		rc = 0;
	} else {
		calib_device_hw(dev, fit);
		*fitted = true;
	}
	free(fit);
	return rc;
}

int calib_xval(struct calib_xval *x, const struct calib_points *pts, const struct hw *base,
               const struct calib_fit_opts *o, struct err *e)
{
	memset(x, 0, sizeof *x);
	const size_t cap = pts->n ? pts->n : 1;
	struct scores run = {0}, shape = {0};
	struct calib_points train, test, merged, *view = calloc(1, sizeof *view);
	bool have_train = false, have_test = false, have_merged = false;
	const struct calib_point **sorted = malloc(cap * sizeof *sorted);
	struct calib_point *rest = malloc(cap * sizeof *rest);
	int *idx = malloc(cap * sizeof *idx);
	double *tmp = malloc(cap * sizeof *tmp);
	struct hw *dev = malloc(sizeof *dev);
	bool use[CALIB_SOURCES_MAX];
	int rc = 0;
	run.cls = malloc(cap * sizeof *run.cls);
	run.err = malloc(cap * sizeof *run.err);
	run.floor = malloc(cap * sizeof *run.floor);
	shape.cls = malloc(cap * sizeof *shape.cls);
	shape.err = malloc(cap * sizeof *shape.err);
	shape.floor = malloc(cap * sizeof *shape.floor);
	run.cap = shape.cap = (int)(cap < INT32_MAX ? cap : INT32_MAX);
	if (!view || !sorted || !rest || !idx || !tmp || !dev || !run.cls || !run.err ||
	    !run.floor || !shape.cls || !shape.err || !shape.floor) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < pts->n; i++)
		(void)xval_class(x, pts->p[i].label);

	/* leave one run out */
	const int n_runs = pts->n_runs;
	for (int r = 0; n_runs >= 2 && r < n_runs; r++) {
		struct calib_xval_run *xr = &x->runs[x->n_runs++];
		xr->name = pts->runs[r].name;
		for (int k = 0; k < n_runs; k++)
			use[k] = k != r;
		rc = calib_points_by_op(&train, pts, use, e);
		have_train = true;
		if (rc < 0)
			goto out;
		for (int k = 0; k < n_runs; k++)
			use[k] = k == r;
		rc = calib_points_by_op(&test, pts, use, e);
		have_test = true;
		if (rc < 0)
			goto out;
		if ((rc = fold_fit(&train, base, o, dev, &xr->fitted, xr->note, sizeof xr->note, e)) < 0)
			goto out;
		x->fits++;
		int from = run.n;
		for (size_t i = 0; i < train.n; i++)
			sorted[i] = &train.p[i];
		qsort(sorted, train.n, sizeof *sorted, cmp_point_op);
		for (size_t i = 0; i < test.n; i++) {
			const struct calib_point *q = &test.p[i], *key = q;
			const struct calib_point **t = bsearch(&key, sorted, train.n, sizeof *sorted, cmp_point_op);
			if (!t) {
				xr->unpaired++;
				continue;
			}
			if (!xr->fitted)
				continue;
			double pred = calib_predict_s(dev, q);
			score(&run, xval_class(x, q->label), (pred - q->measured_s) / q->measured_s * 100.0,
			      ((*t)->measured_s - q->measured_s) / q->measured_s * 100.0);
		}
		pooled(&run, from, run.n, -1, idx, tmp, &xr->err, &xr->floor);
		calib_points_release(&train);
		calib_points_release(&test);
		have_train = have_test = false;
	}

	/* leave one GEMM shape (n, k) out, on the medians over all runs */
	rc = calib_points_by_op(&merged, pts, NULL, e);
	have_merged = true;
	if (rc < 0)
		goto out;
	int n_shapes = 0;
	for (size_t i = 0; i < merged.n; i++) {
		const struct calib_point *p = &merged.p[i];
		if (p->op.kind != OP_GEMM)
			continue;
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_shape(&merged.p[j], p->op.n, p->op.k);
		n_shapes += !seen;
	}
	if (n_shapes >= 2 && !(x->shapes = calloc((size_t)n_shapes, sizeof *x->shapes))) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; n_shapes >= 2 && i < merged.n; i++) {
		const struct calib_point *p = &merged.p[i];
		bool seen = p->op.kind != OP_GEMM;
		for (size_t j = 0; j < i && !seen; j++)
			seen = same_shape(&merged.p[j], p->op.n, p->op.k);
		if (seen)
			continue;
		struct calib_xval_shape *xs = &x->shapes[x->n_shapes++];
		xs->n = p->op.n;
		xs->k = p->op.k;
		size_t nr = 0;
		for (size_t j = 0; j < merged.n; j++)
			if (!same_shape(&merged.p[j], xs->n, xs->k))
				rest[nr++] = merged.p[j];
		view->p = rest;
		view->n = nr;
		char note[160];
		if ((rc = fold_fit(view, base, o, dev, &xs->fitted, note, sizeof note, e)) < 0)
			goto out;
		x->fits++;
		int from = shape.n;
		for (size_t j = 0; xs->fitted && j < merged.n; j++) {
			const struct calib_point *q = &merged.p[j];
			if (!same_shape(q, xs->n, xs->k))
				continue;
			double pred = calib_predict_s(dev, q);
			score(&shape, xval_class(x, q->label), (pred - q->measured_s) / q->measured_s * 100.0, NAN);
		}
		pooled(&shape, from, shape.n, -1, idx, tmp, &xs->err, NULL);
	}

	for (int c = 0; c < x->n_cls; c++) {
		struct calib_xval_class *xc = &x->cls[c];
		pooled(&run, 0, run.n, c, idx, tmp, &xc->by_run, &xc->run_floor);
		pooled(&shape, 0, shape.n, c, idx, tmp, &xc->by_gemm_shape, NULL);
	}
	snprintf(x->all.label, sizeof x->all.label, "all");
	pooled(&run, 0, run.n, -1, idx, tmp, &x->all.by_run, &x->all.run_floor);
	pooled(&shape, 0, shape.n, -1, idx, tmp, &x->all.by_gemm_shape, NULL);
out:
	if (have_train)
		calib_points_release(&train);
	if (have_test)
		calib_points_release(&test);
	if (have_merged)
		calib_points_release(&merged);
	free(view);
	free(sorted);
	free(rest);
	free(idx);
	free(tmp);
	free(dev);
	free(run.cls);
	free(run.err);
	free(run.floor);
	free(shape.cls);
	free(shape.err);
	free(shape.floor);
	if (rc < 0)
		calib_xval_release(x);
	return rc;
}
