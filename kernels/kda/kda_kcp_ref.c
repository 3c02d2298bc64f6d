/* SPDX-License-Identifier: MIT */
/* KDA context parallelism in float64: see kda_kcp_ref.h. */
#include "kda_kcp_ref.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int kda_kcp_ref_scan_step(int heads, int dk, int dv, const double *s_in, const double *m,
			  const double *z, double *s_out)
{
	if (heads < 1 || dk < 1 || dv < 1 || !m || !z || !s_out || (s_in && s_in == s_out))
		return -EINVAL;
	const size_t K = (size_t)dk, V = (size_t)dv;
	for (size_t h = 0; h < (size_t)heads; h++) {
		const double *mh = m + h * K * K;
		for (size_t v = 0; v < V; v++) {
			const double *row = s_in ? s_in + (h * V + v) * K : NULL;
			double *o = s_out + (h * V + v) * K;
			const double *zr = z + (h * V + v) * K;
			for (size_t k = 0; k < K; k++) {
				double acc = zr[k];
				if (row)
					for (size_t j = 0; j < K; j++)
						acc += row[j] * mh[j * K + k];
				o[k] = acc;
			}
		}
	}
	return 0;
}

int kda_kcp_ref_fixup(int64_t tokens, int heads, int dk, int dv, const double *s_in,
		      const double *qeff, double *out)
{
	if (tokens < 0 || heads < 1 || dk < 1 || dv < 1 || !s_in || !qeff || !out)
		return -EINVAL;
	const size_t K = (size_t)dk, V = (size_t)dv, H = (size_t)heads;
	for (size_t t = 0; t < (size_t)tokens; t++)
		for (size_t h = 0; h < H; h++) {
			const double *q = qeff + (t * H + h) * K;
			double *o = out + (t * H + h) * V;
			for (size_t v = 0; v < V; v++) {
				const double *s = s_in + (h * V + v) * K;
				double acc = 0;
				for (size_t k = 0; k < K; k++)
					acc += s[k] * q[k];
				o[v] += acc;
			}
		}
	return 0;
}

static int run_prefill(const struct kda_ref_prefill *p, int chunk)
{
	return chunk > 0 ? kda_ref_prefill_chunked(p, chunk) : kda_ref_prefill_sequential(p);
}

int kda_kcp_ref_prefill(const struct kda_ref_prefill *p, int n_seg, const int64_t *seg_start, int chunk)
{
	if (!p || p->n_seqs != 1 || !p->cu_seqlens || p->dk != p->dv || p->heads < 1 || p->dk < 1 ||
	    p->initial_state || !p->out || n_seg < 1 || !seg_start)
		return -EINVAL;
	const int64_t T = p->cu_seqlens[1];
	if (seg_start[0] != 0 || seg_start[n_seg] != T)
		return -EINVAL;
	for (int r = 0; r < n_seg; r++)
		if (seg_start[r + 1] <= seg_start[r])
			return -EINVAL;
	const size_t H = (size_t)p->heads, K = (size_t)p->dk, SN = H * K * K;
	int64_t longest = 0;
	for (int r = 0; r < n_seg; r++)
		if (seg_start[r + 1] - seg_start[r] > longest)
			longest = seg_start[r + 1] - seg_start[r];
	const size_t tok = (size_t)longest * H * K;
	int rc = 0;
	double *eye = calloc(SN, sizeof(double)), *m = malloc(SN * sizeof(double));
	double *z = malloc(SN * sizeof(double)), *s_in = calloc(SN, sizeof(double));
	double *s_next = malloc(SN * sizeof(double));
	double *zeros = calloc(tok, sizeof(double)), *qeff = malloc(tok * sizeof(double));
	if (!eye || !m || !z || !s_in || !s_next || !zeros || !qeff) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t h = 0; h < H; h++)
		for (size_t i = 0; i < K; i++)
			eye[(h * K + i) * K + i] = 1.0;
	for (int r = 0; r < n_seg; r++) {
		const int64_t t0 = seg_start[r], n = seg_start[r + 1] - t0;
		const size_t at = (size_t)t0 * H * K, at_b = (size_t)t0 * H;
		int64_t cu[2] = {0, n};
		struct kda_ref_prefill seg = *p;
		seg.cu_seqlens = cu;
		seg.q = p->q + at, seg.k = p->k + at, seg.v = p->v + at;
		seg.g_raw = p->g_raw + at, seg.beta_raw = p->beta_raw + at_b;
		seg.initial_state = NULL, seg.final_state = z, seg.out = p->out + at;
		rc = run_prefill(&seg, chunk); /* zero start: outputs and Z */
		if (rc)
			goto out;
		if (r > 0) {
			/* identity start, v = 0: P^T and the effective queries */
			seg.v = zeros, seg.initial_state = eye, seg.final_state = m, seg.out = qeff;
			rc = run_prefill(&seg, chunk);
			if (rc)
				goto out;
			rc = kda_kcp_ref_fixup(n, p->heads, p->dk, p->dv, s_in, qeff, p->out + at);
			if (rc)
				goto out;
		}
		/* the state after this segment: S_in M + Z (segment 0: Z) */
		rc = kda_kcp_ref_scan_step(p->heads, p->dk, p->dv, r > 0 ? s_in : NULL, m, z, s_next);
		if (rc)
			goto out;
		memcpy(s_in, s_next, SN * sizeof(double));
	}
	if (p->final_state)
		memcpy(p->final_state, s_in, SN * sizeof(double));
out:
	free(eye), free(m), free(z), free(s_in), free(s_next), free(zeros), free(qeff);
	return rc;
}
