/* SPDX-License-Identifier: MIT */
/* Float64 references of the LatentMoE pieces: see moe_ref.h. */
#include "kernels/moe/moe_ref.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/k3_quant.h"

double moe_ref_situ_glu(double g, double u, double beta_gate, double beta_up)
{
	const double gate = beta_gate * tanh(g / beta_gate) / (1.0 + exp(-g));
	return gate * beta_up * tanh(u / beta_up);
}

int64_t moe_glu_column(int64_t j, int is_up)
{
	return (j / MOE_GLU_BLOCK) * 2 * MOE_GLU_BLOCK + (is_up ? MOE_GLU_BLOCK : 0) + j % MOE_GLU_BLOCK;
}

int moe_ref_route(int tokens, int experts, int topk, const double *logits, const double *bias, double scaling,
		  int32_t *ids, double *weights)
{
	if (tokens < 0 || experts < 1 || experts > MOE_MAX_EXPERTS || topk < 1 || topk > experts ||
	    topk > MOE_MAX_TOPK)
		return -EINVAL;
	for (int t = 0; t < tokens; t++) {
		const double *l = logits + (size_t)t * experts;
		bool taken[MOE_MAX_EXPERTS] = { false };
		double score[MOE_MAX_TOPK], sum = 0.0;
		for (int k = 0; k < topk; k++) {
			int best = -1;
			double bv = 0.0;
			for (int e = 0; e < experts; e++) {
				if (taken[e])
					continue;
				const double v = 1.0 / (1.0 + exp(-l[e])) + (bias ? bias[e] : 0.0);
				if (best < 0 || v > bv)
					best = e, bv = v;
			}
			taken[best] = true;
			ids[(size_t)t * topk + k] = best;
			score[k] = 1.0 / (1.0 + exp(-l[best]));
			sum += score[k];
		}
		for (int k = 0; k < topk; k++)
			weights[(size_t)t * topk + k] = score[k] / sum * scaling;
	}
	return 0;
}

int moe_ref_route_weights(int tokens, int experts, int topk, const double *logits, const int32_t *ids,
			  double scaling, double *weights)
{
	if (tokens < 0 || experts < 1 || topk < 1 || topk > experts)
		return -EINVAL;
	for (int t = 0; t < tokens; t++) {
		double sum = 0.0;
		for (int k = 0; k < topk; k++) {
			const int32_t e = ids[(size_t)t * topk + k];
			if (e < 0 || e >= experts)
				return -EINVAL;
			sum += 1.0 / (1.0 + exp(-logits[(size_t)t * experts + e]));
		}
		for (int k = 0; k < topk; k++) {
			const int32_t e = ids[(size_t)t * topk + k];
			weights[(size_t)t * topk + k] = 1.0 / (1.0 + exp(-logits[(size_t)t * experts + e])) / sum * scaling;
		}
	}
	return 0;
}

int moe_ref_group(int tokens, int experts, int topk, const int32_t *ids, int tile_rows, struct moe_ref_groups *g)
{
	if (tokens < 0 || experts < 1 || topk < 1 || tile_rows < 1)
		return -EINVAL;
	const size_t n = (size_t)tokens * topk;
	for (size_t i = 0; i < n; i++)
		if (ids[i] < 0 || ids[i] >= experts)
			return -EINVAL;
	memset(g->off, 0, (size_t)(experts + 1) * sizeof(int32_t));
	for (size_t i = 0; i < n; i++)
		g->off[ids[i] + 1]++;
	g->tile_off[0] = 0;
	g->n_touched = 0;
	for (int e = 0; e < experts; e++) {
		const int32_t c = g->off[e + 1];
		g->tile_off[e + 1] = g->tile_off[e] + (c + tile_rows - 1) / tile_rows;
		if (c > 0)
			g->touched[g->n_touched++] = e;
		g->off[e + 1] += g->off[e];
	}
	int32_t *fill = calloc((size_t)experts, sizeof *fill);
	if (!fill)
		return -ENOMEM;
	/* Stable: pairs in (token, slot) order. */
	for (size_t i = 0; i < n; i++) {
		const int e = ids[i];
		const int32_t r = g->off[e] + fill[e]++;
		g->row_token[r] = (int32_t)(i / (size_t)topk);
		g->row_of[i] = r;
	}
	free(fill);
	return 0;
}

void moe_ref_linear(int64_t M, int64_t N, int64_t K, const double *x, const double *w, double *y)
{
	for (int64_t m = 0; m < M; m++)
		for (int64_t n = 0; n < N; n++) {
			const double *a = x + m * K, *b = w + n * K;
			double s = 0.0;
			for (int64_t k = 0; k < K; k++)
				s += a[k] * b[k];
			y[m * N + n] = s;
		}
}

void moe_ref_rmsnorm(int64_t M, int64_t N, const double *x, const double *w, double eps, double *y)
{
	for (int64_t m = 0; m < M; m++) {
		double ss = 0.0;
		for (int64_t n = 0; n < N; n++)
			ss += x[m * N + n] * x[m * N + n];
		const double r = 1.0 / sqrt(ss / (double)N + eps);
		for (int64_t n = 0; n < N; n++)
			y[m * N + n] = x[m * N + n] * r * (w ? w[n] : 1.0);
	}
}

void moe_ref_interleave_w13(int64_t F, int64_t K, const double *w1, const double *w3, double *w13)
{
	for (int64_t j = 0; j < F; j++) {
		memcpy(w13 + moe_glu_column(j, 0) * K, w1 + j * K, (size_t)K * sizeof(double));
		memcpy(w13 + moe_glu_column(j, 1) * K, w3 + j * K, (size_t)K * sizeof(double));
	}
}

int moe_ref_gemm(const struct moe_ref_gemm *p)
{
	if (!p || p->rows < 0 || p->N < 1 || p->K < 1 || p->n_groups < 0 || (p->n_groups > 0 && !p->off) ||
	    (p->epi == K3_EPI_GLU && p->N % (2 * MOE_GLU_BLOCK)) ||
	    (p->epi == K3_EPI_SPLIT && (p->n_split < 0 || p->n_split > p->N || !p->out_f32)) ||
	    (p->epi == K3_EPI_SCALE && !p->row_scale) || ((p->epi == K3_EPI_ADD || p->epi == K3_EPI_GATE) && !p->addend))
		return -EINVAL;
	if (p->a_mxfp8 && p->K % K3_MX_GROUP)
		return -EINVAL;
	double *acc = malloc((size_t)p->N * sizeof *acc);
	double *aq = p->a_mxfp8 ? malloc((size_t)p->K * sizeof *aq) : NULL;
	uint8_t *q = p->a_mxfp8 ? malloc((size_t)p->K) : NULL, *qs = p->a_mxfp8 ? malloc((size_t)p->K / K3_MX_GROUP) : NULL;
	if (!acc || (p->a_mxfp8 && (!aq || !q || !qs))) {
		free(acc), free(aq), free(q), free(qs);
		return -ENOMEM;
	}
	for (int64_t r = 0; r < p->rows; r++) {
		int g = 0;
		if (p->n_groups > 0) {
			while (g < p->n_groups && r >= p->off[g + 1])
				g++;
			if (g == p->n_groups || r < p->off[0])
				continue; /* outside every group */
		}
		const int64_t ar = p->a_index ? p->a_index[r] : r;
		const int64_t ro = p->out_index ? p->out_index[r] : r;
		const double *arow = p->a + ar * p->K;
		if (p->a_mxfp8) {
			k3_mxfp8_quantize(arow, (size_t)p->K, q, qs);
			for (int64_t k = 0; k < p->K; k++)
				aq[k] = k3_mxfp8_element(q, qs, (size_t)k);
			arow = aq;
		}
		moe_ref_linear(1, p->N, p->K, arow, p->w + (int64_t)g * p->N * p->K, acc);
		switch (p->epi) {
		case K3_EPI_BF16:
			memcpy(p->out + ro * p->N, acc, (size_t)p->N * sizeof *acc);
			break;
		case K3_EPI_SPLIT:
			for (int64_t n = 0; n < p->N; n++) {
				if (n < p->n_split)
					p->out_f32[ro * p->n_split + n] = acc[n];
				else
					p->out[ro * (p->N - p->n_split) + n - p->n_split] = acc[n];
			}
			break;
		case K3_EPI_GLU:
			for (int64_t j = 0; j < p->N / 2; j++)
				p->out[ro * (p->N / 2) + j] = moe_ref_situ_glu(acc[moe_glu_column(j, 0)],
									       acc[moe_glu_column(j, 1)], p->beta_gate,
									       p->beta_up);
			break;
		case K3_EPI_SCALE:
			for (int64_t n = 0; n < p->N; n++)
				p->out[ro * p->N + n] = acc[n] * p->row_scale[r];
			break;
		case K3_EPI_ADD:
			for (int64_t n = 0; n < p->N; n++)
				p->out[ro * p->N + n] = acc[n] + p->addend[ro * p->N + n];
			break;
		case K3_EPI_GATE:
			for (int64_t n = 0; n < p->N; n++)
				p->out[ro * p->N + n] = acc[n] / (1.0 + exp(-p->addend[ro * p->N + n]));
			break;
		}
	}
	free(acc), free(aq), free(q), free(qs);
	return 0;
}

static void round_all(bool on, double *x, size_t n)
{
	if (on)
		for (size_t i = 0; i < n; i++)
			x[i] = k3_round_bf16(x[i]);
}

/* Rows [rows][n] as the GPU's E4M3 rows take them: E4M3 values times the row's FP32 scale
 * (k3_e4m3_row_quantize()); q is scratch of n bytes. */
static void e4m3_rows(double *x, int64_t rows, int64_t n, uint8_t *q)
{
	for (int64_t r = 0; r < rows; r++) {
		double *row = x + r * n;
		float scale = 1.0f;
		k3_e4m3_row_quantize(row, (size_t)n, q, &scale);
		for (int64_t i = 0; i < n; i++)
			row[i] = k3_double_from_e4m3(q[i]) * (double)scale;
	}
}

/* h as the GPU's out_e4m3 holds it: E4M3 of m h, read back / m. */
static void e4m3_scaled(double *h, int64_t n, double m)
{
	for (int64_t i = 0; i < n; i++)
		h[i] = k3_double_from_e4m3(k3_e4m3_from_double(m * h[i])) / m;
}

int moe_ref_layer(const struct moe_ref_layer *p)
{
	if (!p || p->tokens < 1 || p->hidden < 1 || p->latent < 1 || p->experts < 1 || p->topk < 1 ||
	    p->topk > p->experts || p->topk > MOE_MAX_TOPK || p->experts > MOE_MAX_EXPERTS || p->inter < 1 ||
	    p->inter % MOE_GLU_BLOCK || (p->ws13 && (p->shared_inter < 1 || p->shared_inter % MOE_GLU_BLOCK)) ||
	    (p->e4m3_act && !(p->e4m3_glu_mul > 0.0 && isfinite(p->e4m3_glu_mul))))
		return -EINVAL;
	const int T = p->tokens, E = p->experts, K = p->topk, DL = p->latent, D = p->hidden, F = p->inter;
	const size_t TK = (size_t)T * K;
	double *rd = malloc((size_t)T * (E + DL) * sizeof(double));
	double *logits = malloc((size_t)T * E * sizeof(double));
	double *latent = malloc((size_t)T * DL * sizeof(double));
	double *w = malloc(TK * sizeof(double));
	int32_t *ids = malloc(TK * sizeof(int32_t));
	double *pre = malloc((size_t)2 * F * sizeof(double));
	double *h = malloc((size_t)F * sizeof(double));
	double *y2 = malloc((size_t)DL * sizeof(double));
	double *ysum = calloc((size_t)T * DL, sizeof(double));
	double *z = malloc((size_t)T * DL * sizeof(double));
	const int FS = p->ws13 ? p->shared_inter : 1;
	double *spre = malloc((size_t)T * 2 * FS * sizeof(double));
	double *sh = malloc((size_t)T * FS * sizeof(double));
	double *sout = calloc((size_t)T * D, sizeof(double));
	uint8_t *q = p->e4m3_act ? malloc((size_t)DL) : NULL;
	int rc = -ENOMEM;
	if (!rd || !logits || !latent || !w || !ids || !pre || !h || !y2 || !ysum || !z || !spre || !sh || !sout ||
	    (p->e4m3_act && !q))
		goto out;

	moe_ref_linear(T, E + DL, D, p->x, p->w_router_down, rd);
	for (int t = 0; t < T; t++) {
		for (int e = 0; e < E; e++) {
			double l = rd[(size_t)t * (E + DL) + e];
			if (p->round_bf16)
				l = (float)l;
			logits[(size_t)t * E + e] = l;
		}
		memcpy(latent + (size_t)t * DL, rd + (size_t)t * (E + DL) + E, (size_t)DL * sizeof(double));
	}
	round_all(p->round_bf16, latent, (size_t)T * DL);
	if (p->e4m3_act) /* only w13 reads the latent here */
		e4m3_rows(latent, T, DL, q);
	if (p->logits)
		memcpy(p->logits, logits, (size_t)T * E * sizeof(double));
	const double *route_logits = p->logits_in ? p->logits_in : logits;
	if (p->ids_in) {
		memcpy(ids, p->ids_in, TK * sizeof(int32_t));
		rc = moe_ref_route_weights(T, E, K, route_logits, ids, p->scaling, w);
	} else {
		rc = moe_ref_route(T, E, K, route_logits, p->bias, p->scaling, ids, w);
	}
	if (rc)
		goto out;
	if (p->ids)
		memcpy(p->ids, ids, TK * sizeof(int32_t));
	for (int t = 0; t < T; t++)
		for (int k = 0; k < K; k++) {
			const int e = ids[(size_t)t * K + k];
			moe_ref_linear(1, 2 * F, DL, latent + (size_t)t * DL, p->w13 + (size_t)e * 2 * F * DL, pre);
			for (int j = 0; j < F; j++)
				h[j] = moe_ref_situ_glu(pre[moe_glu_column(j, 0)], pre[moe_glu_column(j, 1)], p->beta_gate,
							p->beta_up);
			if (p->e4m3_act)
				e4m3_scaled(h, F, p->e4m3_glu_mul);
			else
				round_all(p->round_bf16, h, (size_t)F);
			moe_ref_linear(1, DL, F, h, p->w2 + (size_t)e * DL * F, y2);
			for (int i = 0; i < DL; i++) {
				double v = y2[i] * w[(size_t)t * K + k];
				if (p->round_bf16)
					v = k3_round_bf16(v);
				ysum[(size_t)t * DL + i] += v;
			}
		}
	moe_ref_rmsnorm(T, DL, ysum, p->norm_w, p->eps, z);
	round_all(p->round_bf16, z, (size_t)T * DL);
	if (p->ws13) {
		moe_ref_linear(T, 2 * FS, D, p->x, p->ws13, spre);
		for (int t = 0; t < T; t++)
			for (int j = 0; j < FS; j++)
				sh[(size_t)t * FS + j] =
					moe_ref_situ_glu(spre[(size_t)t * 2 * FS + moe_glu_column(j, 0)],
							 spre[(size_t)t * 2 * FS + moe_glu_column(j, 1)], p->beta_gate,
							 p->beta_up);
		round_all(p->round_bf16, sh, (size_t)T * FS);
		moe_ref_linear(T, D, FS, sh, p->ws2, sout);
		round_all(p->round_bf16, sout, (size_t)T * D);
	}
	moe_ref_linear(T, D, DL, z, p->w_up, p->out);
	for (size_t i = 0; i < (size_t)T * D; i++)
		p->out[i] += sout[i];
	rc = 0;
out:
	free(rd), free(logits), free(latent), free(w), free(ids), free(pre), free(h), free(y2);
	free(ysum), free(z), free(spre), free(sh), free(sout), free(q);
	return rc;
}
