/* SPDX-License-Identifier: MIT */
/* Float64 Block AttnRes + pre-norm: see attnres_ref.h. */
#include "kernels/attnres/attnres_ref.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/common/k3_quant.h"

int attnres_ref(const struct attnres_ref *p)
{
	if (!p || p->tokens < 0 || p->dim < 1 || p->n_sources < 1 || p->n_sources > ATTNRES_MAX_SOURCES ||
	    !p->query || !p->norm_w || !p->out || (p->delta && !p->partial_out))
		return -EINVAL;
	for (int i = 0; i < p->n_sources; i++)
		if (!p->src[i])
			return -EINVAL;
	const int n = p->n_sources, D = p->dim;
	double *h = malloc((size_t)D * sizeof *h);
	if (!h)
		return -ENOMEM;
	for (int t = 0; t < p->tokens; t++) {
		double s[ATTNRES_MAX_SOURCES], m = -INFINITY;
		const double *row[ATTNRES_MAX_SOURCES];
		for (int i = 0; i < n; i++) {
			row[i] = p->src[i] + (size_t)t * D;
			if (i == n - 1 && p->delta) {
				double *pp = p->partial_out + (size_t)t * D;
				for (int k = 0; k < D; k++)
					pp[k] = k3_round_bf16(row[i][k] + p->delta[(size_t)t * D + k]);
				row[i] = pp;
			}
			double ss = 0.0, dq = 0.0;
			for (int k = 0; k < D; k++) {
				ss += row[i][k] * row[i][k];
				dq += row[i][k] * p->query[k] * (p->key_norm_w ? p->key_norm_w[k] : 1.0);
			}
			s[i] = dq / sqrt(ss / D + p->eps);
			m = fmax(m, s[i]);
		}
		double z = 0.0;
		for (int i = 0; i < n; i++)
			z += exp(s[i] - m);
		for (int k = 0; k < D; k++)
			h[k] = 0.0;
		for (int i = 0; i < n; i++) {
			const double a = exp(s[i] - m) / z;
			if (p->alpha)
				p->alpha[(size_t)t * n + i] = a;
			for (int k = 0; k < D; k++)
				h[k] += a * row[i][k];
		}
		double ss = 0.0;
		for (int k = 0; k < D; k++)
			ss += h[k] * h[k];
		const double r = 1.0 / sqrt(ss / D + p->eps);
		for (int k = 0; k < D; k++) {
			p->out[(size_t)t * D + k] = h[k] * r * p->norm_w[k];
			if (p->h)
				p->h[(size_t)t * D + k] = h[k];
		}
	}
	free(h);
	return 0;
}
