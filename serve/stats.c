/* Percentiles: exact over requests, by histogram over inter-token gaps (serve/serve.h). */
#include "serve/serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1 us to ~3e3 s at 0.5 % resolution: 1e-6 x 1.005^4095 = 7.5e2... enough: gaps above the last
 * bucket land in it (and in max). */
#define HIST_LO 1e-6
#define HIST_RATIO 1.005

void serve_hist_init(struct serve_hist *h)
{
	memset(h, 0, sizeof *h);
	h->lo = HIST_LO;
	h->ratio = HIST_RATIO;
}

void serve_hist_add(struct serve_hist *h, double x, int64_t times)
{
	if (times <= 0 || !(x >= 0))
		return;
	h->n += times;
	h->sum += x * (double)times;
	if (x > h->max)
		h->max = x;
	if (x < h->lo) {
		h->zero += times;
		return;
	}
	int64_t i = (int64_t)floor(log(x / h->lo) / log(h->ratio));
	if (i >= SERVE_HIST_BUCKETS)
		i = SERVE_HIST_BUCKETS - 1;
	if (i < 0)
		i = 0;
	h->count[i] += times;
}

double serve_hist_quantile(const struct serve_hist *h, double q)
{
	if (h->n == 0)
		return 0;
	int64_t rank = (int64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	int64_t seen = h->zero;
	if (seen >= rank)
		return 0;
	for (int64_t i = 0; i < SERVE_HIST_BUCKETS; i++) {
		seen += h->count[i];
		if (seen >= rank)
			return fmin(h->max, h->lo * pow(h->ratio, (double)(i + 1)));
	}
	return h->max;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The nearest-rank percentile, as numpy's 'linear' interpolates between ranks. */
static double pct(const double *x, int64_t n, double q)
{
	double pos = q * (double)(n - 1);
	int64_t i = (int64_t)floor(pos);
	if (i >= n - 1)
		return x[n - 1];
	return x[i] + (x[i + 1] - x[i]) * (pos - (double)i);
}

void serve_pct_of(double *x, int64_t n, struct serve_pct *out)
{
	memset(out, 0, sizeof *out);
	out->n = n;
	if (n <= 0)
		return;
	qsort(x, (size_t)n, sizeof *x, cmp_double);
	double s = 0;
	for (int64_t i = 0; i < n; i++)
		s += x[i];
	out->mean = s / (double)n;
	out->p50 = pct(x, n, 0.50);
	out->p90 = pct(x, n, 0.90);
	out->p95 = pct(x, n, 0.95);
	out->p99 = pct(x, n, 0.99);
	out->max = x[n - 1];
}
