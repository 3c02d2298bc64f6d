/* Step-cost tables from the timeline (serve/costs.h). */
#include "serve/costs.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim.h"
#include "sim/step.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A grid from 0 (when with_zero) through `max`, denser where steps change fastest. */
static int grid(int64_t *out, int64_t max, const int64_t *base, int n_base, bool with_zero, int64_t step_beyond)
{
	int n = 0;
	if (with_zero)
		out[n++] = 0;
	for (int i = 0; i < n_base && n < SERVE_GRID_MAX - 1; i++) {
		if (base[i] >= max)
			break;
		out[n++] = base[i];
	}
	int64_t last = n ? out[n - 1] : 0;
	while (last < max && n < SERVE_GRID_MAX - 1) {
		int64_t next = last * step_beyond;
		if (next <= last)
			next = last + 1;
		if (next >= max)
			break;
		out[n++] = last = next;
	}
	if (n == 0 || out[n - 1] < max)
		out[n++] = max;
	return n;
}

struct job {
	const struct scenario *s;
	const struct model *m, *draft;
	const struct hw *hw;
	int64_t k;
	struct serve_costs *c;
	/* work items: (table, i, j) flattened */
	int64_t next, total;
	pthread_mutex_t lock;
	int rc;
	int64_t peak;
};

enum { T_M, T_D, T_F, T_DF0, T_DF };

/* One decode (or mixed) step: verify 1 + k tokens per request after k draft steps. 0 and the
 * time in *time_s, or a negative errno (as sim_step). */
static int decode_step(const struct job *j, int set, int64_t b, int64_t p, int64_t ctx, struct sim_phase *acc,
		       double *time_s)
{
	const int64_t groups = set ? 1 : j->s->dp;
	struct phase ph;
	sim_phase_init(j->s, PHASE_DECODE, b * groups, 1 + j->k, ctx, &ph);
	ph.mixed_tokens = p;
	ph.mixed_context = 0;
	ph.dp_groups = groups;
	if (acc)
		sim_phase_reset(acc);
	double t;
	int rc = sim_step(j->s, j->m, j->hw, &ph, acc, 1.0, &t);
	*time_s = t;
	if (rc < 0 || j->k == 0 || !j->draft)
		return rc;
	sim_phase_init(j->s, PHASE_DECODE, b * groups, 1, ctx, &ph);
	ph.dp_groups = groups;
	double d;
	rc = sim_step(j->s, j->draft, j->hw, &ph, NULL, 1.0, &d);
	if (rc < 0)
		return rc;
	*time_s = t + (double)j->k * d;
	return 0;
}

static int prefill_step(const struct job *j, int set, int64_t n, int64_t p, int64_t prefix, struct sim_phase *acc,
			double *time_s)
{
	*time_s = 0;
	if (p <= 0)
		return 0;
	if (n > p)
		n = p;
	const int64_t groups = set ? 1 : j->s->dp;
	struct phase ph;
	sim_phase_init(j->s, PHASE_PREFILL, n * groups, (p + n - 1) / n, prefix, &ph);
	ph.dp_groups = groups;
	if (acc)
		sim_phase_reset(acc);
	return sim_step(j->s, j->m, j->hw, &ph, acc, 1.0, time_s);
}

/* Item k of the flattened work list: which table and cell. 0 or a negative errno. */
static int eval(struct job *j, int64_t k, struct sim_phase *acc)
{
	struct serve_costs *c = j->c;
	int64_t nm = c->decode ? (int64_t)c->nb * c->np : 0, nd = c->decode ? (int64_t)c->nb * c->nc : 0;
	int64_t nf = c->prefill ? (int64_t)c->nn * c->np : 0, ndf = c->prefill ? (int64_t)c->np * c->nc : 0;
	const int64_t per_set = nm + nd + nf + ndf;
	const int set = k >= per_set;
	k -= set * per_set;
	if (k < nm) {
		int bi = (int)(k / c->np), pi = (int)(k % c->np);
		if (c->b[bi] == 0)
			return 0;
		double t;
		int rc = decode_step(j, set, c->b[bi], c->p[pi], 0, acc, &t);
		if (rc == 0)
			c->m[set][k] = t;
		return rc;
	}
	k -= nm;
	if (k < nd) {
		int bi = (int)(k / c->nc), ci = (int)(k % c->nc);
		if (c->b[bi] == 0)
			return 0;
		double t;
		int rc = decode_step(j, set, c->b[bi], 0, c->c[ci], NULL, &t);
		if (rc == 0)
			c->dd[set][k] = t; /* D(B, C) now; the increment later */
		return rc;
	}
	k -= nd;
	if (k < nf) {
		int ni = (int)(k / c->np), pi = (int)(k % c->np);
		double t;
		int rc = prefill_step(j, set, c->n[ni], c->p[pi], 0, acc, &t);
		if (rc == 0)
			c->f[set][k] = t;
		return rc;
	}
	k -= nf;
	if (k < ndf) {
		int pi = (int)(k / c->nc), ci = (int)(k % c->nc);
		double t;
		int rc = prefill_step(j, set, 1, c->p[pi], c->c[ci], NULL, &t);
		if (rc == 0)
			c->df[set][k] = t; /* F(1, P) at prefix X now; the increment later */
		return rc;
	}
	return 0;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct sim_phase *acc = calloc(1, sizeof *acc);
	for (;;) {
		pthread_mutex_lock(&j->lock);
		int64_t k = j->next++;
		bool stop = k >= j->total || j->rc < 0;
		pthread_mutex_unlock(&j->lock);
		if (stop)
			break;
		int rc = eval(j, k, acc);
		pthread_mutex_lock(&j->lock);
		if (rc < 0 && j->rc == 0)
			j->rc = rc == -ENOMEM ? -ENOMEM : -E2BIG;
		if (acc && acc->peak_act_bytes > j->peak)
			j->peak = acc->peak_act_bytes;
		if (acc)
			acc->peak_act_bytes = 0;
		pthread_mutex_unlock(&j->lock);
	}
	free(acc);
	return NULL;
}

/* Running maximum along both axes of a rows x cols table. */
static void monotone2(double *t, int rows, int cols, int first_row)
{
	for (int i = first_row; i < rows; i++)
		for (int k = 1; k < cols; k++)
			t[i * cols + k] = fmax(t[i * cols + k], t[i * cols + k - 1]);
	for (int i = first_row + 1; i < rows; i++)
		for (int k = 0; k < cols; k++)
			t[i * cols + k] = fmax(t[i * cols + k], t[(i - 1) * cols + k]);
}

void serve_costs_release(struct serve_costs *c)
{
	for (int k = 0; k < 2; k++) {
		free(c->m[k]);
		free(c->dd[k]);
		free(c->f[k]);
		free(c->df[k]);
	}
	memset(c, 0, sizeof *c);
}

bool serve_costs_match(const struct serve_costs *c, const struct serve_costs_opts *o)
{
	return c->m[0] && c->decode == o->decode && c->prefill == o->prefill && c->built_max_b == o->max_b &&
	       c->built_max_p == o->max_p && c->built_max_ctx == o->max_ctx &&
	       c->built_draft_tokens == (o->draft ? o->draft_tokens : 0);
}

int serve_costs_build(struct serve_costs *c, const struct scenario *s, const struct model *m, const struct hw *hw,
		      const struct serve_costs_opts *o, struct err *e)
{
	double t0 = now_s();
	memset(c, 0, sizeof *c);
	static const int64_t b_base[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160,
					 192, 256, 320, 384, 512, 640, 768, 1024};
	static const int64_t p_base[] = {16, 32, 64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
					 12288, 16384, 24576, 32768, 49152, 65536};
	static const int64_t n_base[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
	static const int64_t c_base[] = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144,
					 524288, 1048576};
	c->decode = o->decode;
	c->prefill = o->prefill;
	c->built_max_b = o->max_b;
	c->built_max_p = o->max_p;
	c->built_max_ctx = o->max_ctx;
	c->built_draft_tokens = o->draft ? o->draft_tokens : 0;
	c->nb = grid(c->b, o->max_b > 0 ? o->max_b : 1, b_base, sizeof b_base / sizeof b_base[0], true, 2);
	c->np = grid(c->p, o->max_p > 0 ? o->max_p : 1, p_base, sizeof p_base / sizeof p_base[0], true, 2);
	int64_t max_n = o->max_b > 0 ? o->max_b : 1;
	if (max_n > o->max_p)
		max_n = o->max_p > 0 ? o->max_p : 1;
	c->nn = grid(c->n, max_n, n_base, sizeof n_base / sizeof n_base[0], false, 2);
	c->nc = grid(c->c, o->max_ctx > 0 ? o->max_ctx : 1, c_base, sizeof c_base / sizeof c_base[0], true, 2);
	size_t nm = (size_t)c->nb * (size_t)c->np, nd = (size_t)c->nb * (size_t)c->nc;
	size_t nf = (size_t)c->nn * (size_t)c->np, ndf = (size_t)c->np * (size_t)c->nc;
	c->dp = s->dp > 1 ? s->dp : 1;
	const int sets = c->dp > 1 ? 2 : 1;
	for (int k = 0; k < sets; k++) {
		c->m[k] = calloc(nm, sizeof *c->m[k]);
		c->dd[k] = calloc(nd, sizeof *c->dd[k]);
		c->f[k] = calloc(nf, sizeof *c->f[k]);
		c->df[k] = calloc(ndf, sizeof *c->df[k]);
		if (!c->m[k] || !c->dd[k] || !c->f[k] || !c->df[k]) {
			serve_costs_release(c);
			err_set(e, s->file, 0, 0, "out of memory");
			return -ENOMEM;
		}
	}
	struct job j = {.s = s, .m = m, .draft = o->draft, .hw = hw, .k = o->draft ? o->draft_tokens : 0, .c = c};
	j.total = (int64_t)sets * (int64_t)((c->decode ? nm + nd : 0) + (c->prefill ? nf + ndf : 0));
	pthread_mutex_init(&j.lock, NULL);
	int threads = o->threads > 0 ? o->threads : 2;
	if (threads > 64)
		threads = 64;
	pthread_t th[64];
	int started = 0;
	for (int i = 1; i < threads; i++)
		if (pthread_create(&th[started], NULL, worker, &j) == 0)
			started++;
	worker(&j);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&j.lock);
	if (j.rc < 0) {
		serve_costs_release(c);
		err_set(e, s->file, 0, 0, j.rc == -ENOMEM ? "out of memory" : "a step's op list overflowed");
		return j.rc;
	}
	c->points = j.total;
	c->peak_act_bytes = j.peak;
	/* increments over context 0, then monotone; the busiest group alone never costs more than
	 * every group loaded, so the step never falls as the other groups fill */
	for (int k = sets - 1; k >= 0; k--) {
		double *mm = c->m[k], *dd = c->dd[k], *f = c->f[k], *df = c->df[k];
		if (c->decode) {
			for (int bi = 0; bi < c->nb; bi++) {
				double d0 = dd[bi * c->nc];
				for (int ci = c->nc - 1; ci >= 0; ci--)
					dd[bi * c->nc + ci] = fmax(0, dd[bi * c->nc + ci] - d0);
			}
			monotone2(mm, c->nb, c->np, 1);
			monotone2(dd, c->nb, c->nc, 0);
		}
		if (c->prefill) {
			for (int pi = 0; pi < c->np; pi++) {
				double f0 = df[pi * c->nc];
				for (int ci = c->nc - 1; ci >= 0; ci--)
					df[pi * c->nc + ci] = fmax(0, df[pi * c->nc + ci] - f0);
			}
			monotone2(df, c->np, c->nc, 0);
			/* along P only: n is not a size */
			for (int ni = 0; ni < c->nn; ni++)
				for (int pi = 1; pi < c->np; pi++)
					f[ni * c->np + pi] = fmax(f[ni * c->np + pi], f[ni * c->np + pi - 1]);
		}
		if (k == 0 && sets == 2) {
			for (size_t i = 0; c->decode && i < nm; i++)
				mm[i] = fmax(mm[i], c->m[1][i]);
			for (size_t i = 0; c->decode && i < nd; i++)
				dd[i] = fmax(dd[i], c->dd[1][i]);
			for (size_t i = 0; c->prefill && i < nf; i++)
				f[i] = fmax(f[i], c->f[1][i]);
			for (size_t i = 0; c->prefill && i < ndf; i++)
				df[i] = fmax(df[i], c->df[1][i]);
		}
	}
	c->build_s = now_s() - t0;
	return 0;
}

/* Position of x on grid g[0..n): index i and weight w between g[i] and g[i+1] (w may exceed 1
 * beyond the last point: linear extrapolation with the last slope). */
static void locate(const int64_t *g, int n, double x, int *i, double *w)
{
	if (n == 1 || x <= (double)g[0]) {
		*i = 0;
		*w = 0;
		return;
	}
	int lo = 0, hi = n - 1;
	if (x >= (double)g[n - 1]) {
		*i = n - 2;
		*w = (x - (double)g[n - 2]) / (double)(g[n - 1] - g[n - 2]);
		return;
	}
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;
		if ((double)g[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	*i = lo;
	*w = (x - (double)g[lo]) / (double)(g[lo + 1] - g[lo]);
}

static double bilinear(const double *t, int cols, const int64_t *gr, int nr, const int64_t *gc, int nc, double r,
		       double col)
{
	int i, k;
	double wi, wk;
	locate(gr, nr, r, &i, &wi);
	locate(gc, nc, col, &k, &wk);
	int i1 = nr > 1 ? i + 1 : i, k1 = nc > 1 ? k + 1 : k;
	double a = t[i * cols + k], b = t[i * cols + k1], cc = t[i1 * cols + k], d = t[i1 * cols + k1];
	double top = a + (b - a) * wk, bot = cc + (d - cc) * wk;
	return top + (bot - top) * wi;
}

/* The n axis interpolates in log2(n). */
static double prefill_part(const struct serve_costs *c, const double *f, int64_t p, int64_t n)
{
	if (n > p)
		n = p;
	if (n < 1)
		n = 1;
	double ln = log2((double)n);
	int i = 0;
	while (i + 1 < c->nn && c->n[i + 1] <= n)
		i++;
	double w = 0;
	if (i + 1 < c->nn && n > c->n[i])
		w = (ln - log2((double)c->n[i])) / (log2((double)c->n[i + 1]) - log2((double)c->n[i]));
	int pi;
	double pw;
	locate(c->p, c->np, (double)p, &pi, &pw);
	int pi1 = c->np > 1 ? pi + 1 : pi;
	const double *row = f + (size_t)i * (size_t)c->np;
	double a = row[pi] + (row[pi1] - row[pi]) * pw;
	if (w <= 0 || i + 1 >= c->nn)
		return a;
	row += c->np;
	double b = row[pi] + (row[pi1] - row[pi]) * pw;
	return a + (b - a) * w;
}

/* The step with table set k (serve/costs.h). */
static double step_of(const struct serve_costs *c, int k, int64_t b, int64_t p, int64_t n, double ctx, double prefix)
{
	double pre = 0, inc = 0;
	if (p > 0 && c->prefill) {
		int64_t nn = n < 1 ? 1 : n > p ? p : n;
		pre = prefill_part(c, c->f[k], p, nn);
		inc = (double)nn * bilinear(c->df[k], c->nc, c->p, c->np, c->c, c->nc, (double)p / (double)nn, prefix);
		if (b <= 0 || !c->decode)
			return pre + inc;
	}
	if (!c->decode)
		return 0;
	double t = bilinear(c->m[k], c->np, c->b, c->nb, c->p, c->np, (double)b, (double)(p > 0 ? p : 0)) +
		   bilinear(c->dd[k], c->nc, c->b, c->nb, c->c, c->nc, (double)b, ctx) + inc;
	return p > 0 && c->prefill ? fmax(t, pre + inc) : t;
}

double serve_costs_step(const struct serve_costs *c, int64_t b, int64_t p, int64_t n, double ctx, double prefix,
			double fill)
{
	if (b <= 0 && p <= 0)
		return 0;
	double all = step_of(c, 0, b, p, n, ctx, prefix);
	if (c->dp <= 1 || !c->m[1] || !(fill < (double)c->dp))
		return all;
	double one = step_of(c, 1, b, p, n, ctx, prefix);
	double w = fill <= 1 ? 0 : (fill - 1) / (double)(c->dp - 1);
	return one + (all - one) * w;
}
