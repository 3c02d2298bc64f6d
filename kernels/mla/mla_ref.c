/* SPDX-License-Identifier: MIT */
/* Float64 reference of absorbed MLA decode: see mla_ref.h. */
#include "kernels/mla/mla_ref.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/common/k3_quant.h"

double mla_ref_cache_element(enum mla_kv kv, const void *page, int row, int e)
{
	if (kv == MLA_KV_BF16) {
		const uint16_t *p = (const uint16_t *)page + (size_t)row * MLA_DIM;
		return k3_double_from_bf16(p[e]);
	}
	const uint8_t *t = (const uint8_t *)page + (size_t)row * MLA_FP8_TOKEN_BYTES;
	if (e >= MLA_LATENT) {
		uint16_t b;
		memcpy(&b, t + MLA_FP8_ROPE_OFFSET + 2 * (e - MLA_LATENT), sizeof b);
		return k3_double_from_bf16(b);
	}
	float s;
	memcpy(&s, t + MLA_FP8_SCALE_OFFSET + 4 * (e / MLA_FP8_TILE), sizeof s);
	return k3_double_from_e4m3(t[e]) * (double)s;
}

void mla_fp8_encode_token(const double *x, uint8_t *dst)
{
	for (int tile = 0; tile < MLA_FP8_SCALES; tile++) {
		double amax = 0.0;
		for (int i = 0; i < MLA_FP8_TILE; i++)
			amax = fmax(amax, fabs(x[tile * MLA_FP8_TILE + i]));
		float s = amax > 0.0 ? (float)(amax / K3_E4M3_MAX) : 1.0f;
		memcpy(dst + MLA_FP8_SCALE_OFFSET + 4 * tile, &s, sizeof s);
		for (int i = 0; i < MLA_FP8_TILE; i++)
			dst[tile * MLA_FP8_TILE + i] = k3_e4m3_from_double(x[tile * MLA_FP8_TILE + i] / (double)s);
	}
	for (int i = 0; i < MLA_ROPE; i++) {
		uint16_t b = k3_bf16_from_double(x[MLA_LATENT + i]);
		memcpy(dst + MLA_FP8_ROPE_OFFSET + 2 * i, &b, sizeof b);
	}
}

void mla_bf16_encode_token(const double *x, uint16_t *dst)
{
	for (int i = 0; i < MLA_DIM; i++)
		dst[i] = k3_bf16_from_double(x[i]);
}

/* One query row over the visible positions of its request, whose L tokens
 * are dequantized in kv[L][576]: writes out[512] and *lse. */
static void ref_row(const struct mla_ref_decode *p, int b, int i, const double *kv, const double *q,
		    double *out, double *lse, double *score_abs, int32_t *n_visible, double *score, int32_t *pos)
{
	const int64_t end = (int64_t)p->seqlens[b] - p->qtokens + i + 1; /* visible: 0 .. end - 1 */
	int n = 0;
	if (p->indices) {
		const int32_t *ix = p->indices + ((size_t)b * p->qtokens + i) * p->topk;
		for (int j = 0; j < p->topk; j++)
			if (ix[j] >= 0 && ix[j] < end)
				pos[n++] = ix[j];
	} else {
		for (int64_t j = 0; j < end; j++)
			pos[n++] = (int32_t)j;
	}
	for (int e = 0; e < MLA_LATENT; e++)
		out[e] = 0.0;
	*n_visible = n;
	*score_abs = 0.0;
	if (n == 0) {
		*lse = -INFINITY;
		return;
	}
	double m = -INFINITY;
	for (int j = 0; j < n; j++) {
		const double *k = kv + (size_t)pos[j] * MLA_DIM;
		double s = 0.0, sa = 0.0;
		for (int e = 0; e < MLA_DIM; e++) {
			s += q[e] * k[e];
			sa += fabs(q[e] * k[e]);
		}
		score[j] = s * p->scale;
		m = fmax(m, score[j]);
		*score_abs = fmax(*score_abs, sa * p->scale);
	}
	double sum = 0.0;
	for (int j = 0; j < n; j++) {
		score[j] = exp(score[j] - m);
		sum += score[j];
	}
	for (int j = 0; j < n; j++) {
		const double *k = kv + (size_t)pos[j] * MLA_DIM;
		const double w = score[j] / sum;
		for (int e = 0; e < MLA_LATENT; e++)
			out[e] += w * k[e];
	}
	*lse = m + log(sum);
}

/* Dequantizes the L tokens of request b into kv[L][576]. */
static int ref_gather(const struct mla_ref_decode *p, int b, double *kv)
{
	const size_t tok_bytes = p->kv == MLA_KV_BF16 ? MLA_BF16_TOKEN_BYTES : MLA_FP8_TOKEN_BYTES;
	for (int64_t j = 0; j < p->seqlens[b]; j++) {
		const int32_t page = p->block_table[(size_t)b * p->max_pages + j / MLA_PAGE_TOKENS];
		if (page < 0 || page >= p->n_pages)
			return -EINVAL;
		const unsigned char *pg = (const unsigned char *)p->cache + (size_t)page * MLA_PAGE_TOKENS * tok_bytes;
		for (int e = 0; e < MLA_DIM; e++)
			kv[j * MLA_DIM + e] = mla_ref_cache_element(p->kv, pg, (int)(j % MLA_PAGE_TOKENS), e);
	}
	return 0;
}

int mla_ref_decode(const struct mla_ref_decode *p)
{
	if (!p || p->batch < 1 || p->heads < 1 || p->qtokens < 1 || p->qtokens > MLA_MAX_QTOKENS ||
	    (p->kv != MLA_KV_BF16 && p->kv != MLA_KV_FP8) || !p->q || !p->cache || !p->block_table ||
	    !p->seqlens || !p->out || !p->lse || p->max_pages < 1 || p->n_pages < 1 ||
	    (p->indices && p->topk < 1))
		return -EINVAL;
	int64_t most = 0;
	for (int b = 0; b < p->batch; b++) {
		if (p->seqlens[b] < p->qtokens || p->seqlens[b] > (int64_t)p->max_pages * MLA_PAGE_TOKENS)
			return -EINVAL;
		most = p->seqlens[b] > most ? p->seqlens[b] : most;
	}
	if (p->indices && p->topk > most)
		most = p->topk;
	double *score = malloc((size_t)most * sizeof *score);
	int32_t *pos = malloc((size_t)most * sizeof *pos);
	double *kv = malloc((size_t)most * MLA_DIM * sizeof *kv);
	int rc = 0;
	if (!score || !pos || !kv) {
		rc = -ENOMEM;
		goto out;
	}
	for (int b = 0; b < p->batch && !rc; b++) {
		rc = ref_gather(p, b, kv);
		for (int i = 0; i < p->qtokens && !rc; i++)
			for (int h = 0; h < p->heads; h++) {
				const size_t r = ((size_t)b * p->qtokens + i) * p->heads + h;
				double sa;
				int32_t nv;
				ref_row(p, b, i, kv, p->q + r * MLA_DIM, p->out + r * MLA_LATENT, p->lse + r, &sa, &nv,
					score, pos);
				if (p->score_abs)
					p->score_abs[r] = sa;
				if (p->n_visible)
					p->n_visible[r] = nv;
			}
	}
out:
	free(kv);
	free(score);
	free(pos);
	return rc;
}

int mla_ref_prefill(const struct mla_ref_prefill *p)
{
	if (!p || p->batch < 1 || p->heads < 1 || p->tokens < 1 || p->prefix < 0 ||
	    (int64_t)p->tokens + p->prefix > MLA_PREFILL_MAX_TOKENS || !p->q || !p->k_nope || !p->k_rope || !p->v ||
	    !p->out || !p->lse)
		return -EINVAL;
	const int64_t B = p->batch, H = p->heads, T = p->tokens, P = p->prefix, N = P + T;
	double *score = malloc((size_t)N * sizeof *score);
	if (!score)
		return -ENOMEM;
	for (int64_t b = 0; b < B; b++)
		for (int64_t i = 0; i < T; i++)
			for (int64_t h = 0; h < H; h++) {
				const size_t r = (size_t)((b * T + i) * H + h);
				const double *q = p->q + r * MLA_QK_HEAD;
				double m = -INFINITY, sa_max = 0.0;
				for (int64_t j = 0; j <= P + i; j++) {
					const double *kn = p->k_nope + (size_t)((b * N + j) * H + h) * MLA_QK_NOPE;
					const double *kr = p->k_rope + (size_t)(b * N + j) * MLA_ROPE;
					double s = 0.0, sa = 0.0;
					for (int e = 0; e < MLA_QK_NOPE; e++)
						s += q[e] * kn[e], sa += fabs(q[e] * kn[e]);
					for (int e = 0; e < MLA_ROPE; e++)
						s += q[MLA_QK_NOPE + e] * kr[e], sa += fabs(q[MLA_QK_NOPE + e] * kr[e]);
					score[j] = s * p->scale;
					m = fmax(m, score[j]);
					sa_max = fmax(sa_max, sa * p->scale);
				}
				double sum = 0.0;
				for (int64_t j = 0; j <= P + i; j++)
					sum += (score[j] = exp(score[j] - m));
				double *out = p->out + r * MLA_V_HEAD;
				for (int e = 0; e < MLA_V_HEAD; e++)
					out[e] = 0.0;
				for (int64_t j = 0; j <= P + i; j++) {
					const double *v = p->v + (size_t)((b * N + j) * H + h) * MLA_V_HEAD;
					const double w = score[j] / sum;
					for (int e = 0; e < MLA_V_HEAD; e++)
						out[e] += w * v[e];
				}
				if (p->gate)
					for (int e = 0; e < MLA_V_HEAD; e++)
						out[e] /= 1.0 + exp(-p->gate[r * MLA_V_HEAD + e]);
				p->lse[r] = m + log(sum);
				if (p->score_abs)
					p->score_abs[r] = sa_max;
			}
	free(score);
	return 0;
}
