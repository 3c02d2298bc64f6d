/* SPDX-License-Identifier: MIT */
#include "kda_ref.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static double sigmoid(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

static double silu(double x)
{
	return x * sigmoid(x);
}

/* Reciprocal L2 norm of x[0..n). */
static double inv_l2(const double *x, int n)
{
	double ss = 0.0;
	for (int i = 0; i < n; i++)
		ss += x[i] * x[i];
	return 1.0 / sqrt(ss + KDA_L2_EPS);
}

/* Prepared per-head inputs of one token: normalized q (times scale) and k,
 * per-channel decay alpha, beta. */
struct head_in {
	double *qh, *kh, *alpha; /* [K] each */
	double beta;
};

static void prepare_head(struct head_in *in, int dk, double scale, const double *q,
			 const double *k, const double *g_raw, double beta_raw)
{
	double rq = inv_l2(q, dk) * scale, rk = inv_l2(k, dk);
	for (int i = 0; i < dk; i++) {
		in->qh[i] = q[i] * rq;
		in->kh[i] = k[i] * rk;
		in->alpha[i] = exp(KDA_GATE_LOWER_BOUND * sigmoid(g_raw[i]));
	}
	in->beta = sigmoid(beta_raw);
}

/* One recurrence step on M = S^T ([V][K]), rows independent:
 * m <- alpha * m;  m <- m + beta (v - m.k) k;  o = m.q. */
static void head_step(double *m, const struct head_in *in, const double *v, double *o, int dk,
		      int dv)
{
	for (int r = 0; r < dv; r++) {
		double *row = m + (size_t)r * dk;
		double a = 0.0;
		for (int i = 0; i < dk; i++) {
			row[i] *= in->alpha[i];
			a += row[i] * in->kh[i];
		}
		double coef = in->beta * (v[r] - a);
		double acc = 0.0;
		for (int i = 0; i < dk; i++) {
			row[i] += coef * in->kh[i];
			acc += row[i] * in->qh[i];
		}
		if (o)
			o[r] = acc;
	}
}

static int check_prefill(const struct kda_ref_prefill *p)
{
	if (!p || p->n_seqs < 1 || !p->cu_seqlens || p->heads < 1 || p->dk < 1 || p->dv < 1)
		return -EINVAL;
	if (!p->q || !p->k || !p->v || !p->g_raw || !p->beta_raw || !p->out)
		return -EINVAL;
	if (p->cu_seqlens[0] != 0)
		return -EINVAL;
	for (int i = 0; i < p->n_seqs; i++)
		if (p->cu_seqlens[i + 1] < p->cu_seqlens[i])
			return -EINVAL;
	return 0;
}

/* Copies a sequence's initial state (or zeros) into m: [H][V][K]. */
static void load_state(const struct kda_ref_prefill *p, int seq, double *m)
{
	size_t n = (size_t)p->heads * p->dv * p->dk;
	if (p->initial_state)
		memcpy(m, p->initial_state + (size_t)seq * n, n * sizeof(*m));
	else
		memset(m, 0, n * sizeof(*m));
}

static void store_state(const struct kda_ref_prefill *p, int seq, const double *m)
{
	size_t n = (size_t)p->heads * p->dv * p->dk;
	if (p->final_state)
		memcpy(p->final_state + (size_t)seq * n, m, n * sizeof(*m));
}

int kda_ref_prefill_sequential(const struct kda_ref_prefill *p)
{
	int rc = check_prefill(p);
	if (rc)
		return rc;
	const int H = p->heads, K = p->dk, V = p->dv;
	size_t state_n = (size_t)H * V * K;
	double *m = malloc(state_n * sizeof(*m));
	double *buf = malloc((size_t)3 * K * sizeof(*buf));
	if (!m || !buf) {
		rc = -ENOMEM;
		goto out;
	}
	struct head_in in = { .qh = buf, .kh = buf + K, .alpha = buf + 2 * K };
	for (int s = 0; s < p->n_seqs; s++) {
		load_state(p, s, m);
		for (int64_t t = p->cu_seqlens[s]; t < p->cu_seqlens[s + 1]; t++) {
			for (int h = 0; h < H; h++) {
				size_t qk = ((size_t)t * H + h) * K, vo = ((size_t)t * H + h) * V;
				prepare_head(&in, K, p->scale, p->q + qk, p->k + qk, p->g_raw + qk,
					     p->beta_raw[(size_t)t * H + h]);
				head_step(m + (size_t)h * V * K, &in, p->v + vo, p->out + vo, K, V);
			}
		}
		store_state(p, s, m);
	}
out:
	free(buf);
	free(m);
	return rc;
}

/* Scratch of the chunked form, for chunks of up to C tokens. */
struct chunk_scratch {
	double *qt;   /* [C][K] Gamma_t * q_t             (q tilde) */
	double *kt;   /* [C][K] Gamma_t * k_t             (k tilde) */
	double *kb;   /* [C][K] k_t / Gamma_t             (k bar) */
	double *kh;   /* [C][K] Gamma_last / Gamma_t * k_t (k hat) */
	double *vb;   /* [C][V] beta_t v_t */
	double *a;    /* [C][C] strictly lower: beta_t kt_t . kb_s */
	double *tinv; /* [C][C] (I + A)^-1 */
	double *pm;   /* [C][C] lower incl. diagonal: qt_t . kb_s */
	double *u;    /* [C][V] T beta V */
	double *wk;   /* [C][K] T beta Kt */
	double *w;    /* [C][V] U - Wk S0 */
	double *gt;   /* [C][K] cumulative log decay G_t */
	double *kn;   /* [C][K] normalized k_t */
	double *beta; /* [C] */
	double *in;   /* 3K: prepare_head output */
};

/* Head h's record of the chunk of `len` tokens at t0 (what the GPU's intra kernel writes):
 * Qt, Kh, P, U, Wk and the cumulative log decays in cs. */
static void chunk_record(const struct kda_ref_prefill *p, struct chunk_scratch *cs, int h, int64_t t0, int len)
{
	const int H = p->heads, K = p->dk, V = p->dv;
	struct head_in in = { .qh = cs->in, .kh = cs->in + K, .alpha = cs->in + 2 * K };
	double *beta = cs->beta;
	for (int t = 0; t < len; t++) {
		size_t qk = ((size_t)(t0 + t) * H + h) * K, vo = ((size_t)(t0 + t) * H + h) * V;
		prepare_head(&in, K, p->scale, p->q + qk, p->k + qk, p->g_raw + qk,
			     p->beta_raw[(size_t)(t0 + t) * H + h]);
		beta[t] = in.beta;
		for (int i = 0; i < K; i++) {
			double g = (t ? cs->gt[(t - 1) * K + i] : 0.0) + log(in.alpha[i]);
			double gam = exp(g);
			cs->gt[t * K + i] = g;
			cs->kn[t * K + i] = in.kh[i];
			cs->qt[t * K + i] = in.qh[i] * gam;
			cs->kt[t * K + i] = in.kh[i] * gam;
			cs->kb[t * K + i] = in.kh[i] / gam;
		}
		for (int j = 0; j < V; j++)
			cs->vb[t * V + j] = in.beta * p->v[vo + j];
	}
	const double *glast = cs->gt + (size_t)(len - 1) * K;
	for (int t = 0; t < len; t++)
		for (int i = 0; i < K; i++)
			cs->kh[t * K + i] = exp(glast[i] - cs->gt[t * K + i]) * cs->kn[t * K + i];
	/* A and P. */
	for (int t = 0; t < len; t++) {
		for (int s = 0; s < len; s++) {
			double da = 0.0, dp = 0.0;
			for (int i = 0; i < K; i++) {
				da += cs->kt[t * K + i] * cs->kb[s * K + i];
				dp += cs->qt[t * K + i] * cs->kb[s * K + i];
			}
			cs->a[t * len + s] = s < t ? beta[t] * da : 0.0;
			cs->pm[t * len + s] = s <= t ? dp : 0.0;
		}
	}
	/* T = (I + A)^-1 by forward substitution. */
	for (int t = 0; t < len; t++) {
		for (int j = 0; j < len; j++) {
			double x = t == j ? 1.0 : 0.0;
			for (int s = j; s < t; s++)
				x -= cs->a[t * len + s] * cs->tinv[s * len + j];
			cs->tinv[t * len + j] = x;
		}
	}
	/* U = T (beta V), Wk = T (beta Kt). */
	for (int t = 0; t < len; t++) {
		for (int j = 0; j < V; j++) {
			double x = 0.0;
			for (int s = 0; s <= t; s++)
				x += cs->tinv[t * len + s] * cs->vb[s * V + j];
			cs->u[t * V + j] = x;
		}
		for (int i = 0; i < K; i++) {
			double x = 0.0;
			for (int s = 0; s <= t; s++)
				x += cs->tinv[t * len + s] * beta[s] * cs->kt[s * K + i];
			cs->wk[t * K + i] = x;
		}
	}
}

/* Head h's state m over the chunk recorded in cs: outputs and the state after it. */
static void chunk_apply(const struct kda_ref_prefill *p, struct chunk_scratch *cs, double *m, int h, int64_t t0,
			int len)
{
	const int H = p->heads, K = p->dk, V = p->dv;
	const double *glast = cs->gt + (size_t)(len - 1) * K;
	/* W = U - Wk S0;  O = Qt S0 + P W;  S = Diag(Gamma_last) S0 + Kh^T W. */
	for (int t = 0; t < len; t++)
		for (int r = 0; r < V; r++) {
			double x = 0.0;
			for (int i = 0; i < K; i++)
				x += cs->wk[t * K + i] * m[(size_t)r * K + i];
			cs->w[t * V + r] = cs->u[t * V + r] - x;
		}
	for (int t = 0; t < len; t++) {
		double *o = p->out + ((size_t)(t0 + t) * H + h) * V;
		for (int r = 0; r < V; r++) {
			double x = 0.0;
			for (int i = 0; i < K; i++)
				x += cs->qt[t * K + i] * m[(size_t)r * K + i];
			for (int s = 0; s <= t; s++)
				x += cs->pm[t * len + s] * cs->w[s * V + r];
			o[r] = x;
		}
	}
	for (int r = 0; r < V; r++)
		for (int i = 0; i < K; i++) {
			double x = exp(glast[i]) * m[(size_t)r * K + i];
			for (int s = 0; s < len; s++)
				x += cs->kh[s * K + i] * cs->w[s * V + r];
			m[(size_t)r * K + i] = x;
		}
}

static void chunk_step(const struct kda_ref_prefill *p, struct chunk_scratch *cs, double *m_all, int64_t t0, int len)
{
	for (int h = 0; h < p->heads; h++) {
		chunk_record(p, cs, h, t0, len);
		chunk_apply(p, cs, m_all + (size_t)h * p->dv * p->dk, h, t0, len);
	}
}

/* Head h's state m over two chunks at once from their records a (la = C tokens, at t0) and b (lb
 * tokens after it), with the cross terms the GPU's pair kernel makes (kda_prefill.cu,
 * kda_chunk_recurrent_pair_kernel), x and y [C][C] scratch:
 *   X = Wk_b Kh_a^T, Y = Qt_b Kh_a^T, W_a = U_a - Wk_a S, W_b = U_b - (Wk_b D_a) S - X W_a,
 *   O_a = Qt_a S + P_a W_a, O_b = (Qt_b D_a) S + Y W_a + P_b W_b,
 *   S <- D_a D_b S + (Kh_a D_b)^T W_a + Kh_b^T W_b   (S = M^T [K][V] here as m[r][i] = S[i][r]). */
static void pair_apply(const struct kda_ref_prefill *p, struct chunk_scratch *a, struct chunk_scratch *b, double *x,
		       double *y, double *m, int h, int64_t t0, int la, int lb)
{
	const int H = p->heads, K = p->dk, V = p->dv;
	const double *ga = a->gt + (size_t)(la - 1) * K, *gb = b->gt + (size_t)(lb - 1) * K;
	/* Gamma_last of a and b once a channel, in the records' prepare_head() scratch (free here). */
	double *da = a->in, *db = b->in;
	for (int i = 0; i < K; i++)
		da[i] = exp(ga[i]), db[i] = exp(gb[i]);
	for (int t = 0; t < lb; t++)
		for (int s = 0; s < la; s++) {
			double dx = 0.0, dy = 0.0;
			for (int i = 0; i < K; i++) {
				dx += b->wk[t * K + i] * a->kh[s * K + i];
				dy += b->qt[t * K + i] * a->kh[s * K + i];
			}
			x[t * la + s] = dx, y[t * la + s] = dy;
		}
	for (int t = 0; t < la; t++)
		for (int r = 0; r < V; r++) {
			double z = 0.0;
			for (int i = 0; i < K; i++)
				z += a->wk[t * K + i] * m[(size_t)r * K + i];
			a->w[t * V + r] = a->u[t * V + r] - z;
		}
	for (int t = 0; t < lb; t++)
		for (int r = 0; r < V; r++) {
			double z = 0.0;
			for (int i = 0; i < K; i++)
				z += b->wk[t * K + i] * da[i] * m[(size_t)r * K + i];
			for (int s = 0; s < la; s++)
				z += x[t * la + s] * a->w[s * V + r];
			b->w[t * V + r] = b->u[t * V + r] - z;
		}
	for (int t = 0; t < la + lb; t++) {
		const bool in_b = t >= la;
		const int tt = in_b ? t - la : t;
		const struct chunk_scratch *c = in_b ? b : a;
		double *o = p->out + ((size_t)(t0 + t) * H + h) * V;
		for (int r = 0; r < V; r++) {
			double z = 0.0;
			for (int i = 0; i < K; i++)
				z += c->qt[tt * K + i] * (in_b ? da[i] : 1.0) * m[(size_t)r * K + i];
			for (int s = 0; s <= tt; s++)
				z += c->pm[tt * (in_b ? lb : la) + s] * c->w[s * V + r];
			if (in_b)
				for (int s = 0; s < la; s++)
					z += y[tt * la + s] * a->w[s * V + r];
			o[r] = z;
		}
	}
	for (int r = 0; r < V; r++)
		for (int i = 0; i < K; i++) {
			double z = da[i] * db[i] * m[(size_t)r * K + i];
			for (int s = 0; s < la; s++)
				z += a->kh[s * K + i] * db[i] * a->w[s * V + r];
			for (int s = 0; s < lb; s++)
				z += b->kh[s * K + i] * b->w[s * V + r];
			m[(size_t)r * K + i] = z;
		}
}

/* The doubles chunk_scratch_at() carves for chunks of C tokens. */
static size_t chunk_scratch_n(int C, int K, int V)
{
	return (size_t)C * (7 * K + 3 * V + 1) + (size_t)3 * C * C + 3 * (size_t)K;
}

/* cs's arrays from x (chunk_scratch_n() doubles). */
static void chunk_scratch_at(struct chunk_scratch *c, double *x, int C, int K, int V)
{
	struct chunk_scratch cs;
	cs.qt = x, x += (size_t)C * K;
	cs.kt = x, x += (size_t)C * K;
	cs.kb = x, x += (size_t)C * K;
	cs.kh = x, x += (size_t)C * K;
	cs.wk = x, x += (size_t)C * K;
	cs.vb = x, x += (size_t)C * V;
	cs.u = x, x += (size_t)C * V;
	cs.w = x, x += (size_t)C * V;
	cs.a = x, x += (size_t)C * C;
	cs.tinv = x, x += (size_t)C * C;
	cs.pm = x, x += (size_t)C * C;
	cs.gt = x, x += (size_t)C * K;
	cs.kn = x, x += (size_t)C * K;
	cs.beta = x, x += C;
	cs.in = x;
	*c = cs;
}

/* check_prefill() and the chunk length's range. */
static int check_chunked(const struct kda_ref_prefill *p, int chunk)
{
	int rc = check_prefill(p);
	if (rc)
		return rc;
	return chunk < 1 || chunk > KDA_CHUNK * 64 ? -EINVAL : 0;
}

int kda_ref_prefill_chunked(const struct kda_ref_prefill *p, int chunk)
{
	int rc = check_chunked(p, chunk);
	if (rc)
		return rc;
	const int H = p->heads, K = p->dk, V = p->dv, C = chunk;
	size_t state_n = (size_t)H * V * K;
	double *mem = malloc((state_n + chunk_scratch_n(C, K, V)) * sizeof(*mem));
	if (!mem)
		return -ENOMEM;
	double *m = mem;
	struct chunk_scratch cs;
	chunk_scratch_at(&cs, mem + state_n, C, K, V);
	for (int s = 0; s < p->n_seqs; s++) {
		load_state(p, s, m);
		for (int64_t t0 = p->cu_seqlens[s]; t0 < p->cu_seqlens[s + 1]; t0 += C) {
			int64_t left = p->cu_seqlens[s + 1] - t0;
			chunk_step(p, &cs, m, t0, left < C ? (int)left : C);
		}
		store_state(p, s, m);
	}
	free(mem);
	return 0;
}

int kda_ref_prefill_paired(const struct kda_ref_prefill *p, int chunk)
{
	int rc = check_chunked(p, chunk);
	if (rc)
		return rc;
	const int H = p->heads, K = p->dk, V = p->dv, C = chunk;
	const size_t state_n = (size_t)H * V * K, sn = chunk_scratch_n(C, K, V);
	double *mem = malloc((state_n + 2 * sn + 2 * (size_t)C * C) * sizeof(*mem));
	if (!mem)
		return -ENOMEM;
	double *m = mem, *x = mem + state_n + 2 * sn, *y = x + (size_t)C * C;
	struct chunk_scratch ca, cb;
	chunk_scratch_at(&ca, mem + state_n, C, K, V);
	chunk_scratch_at(&cb, mem + state_n + sn, C, K, V);
	for (int s = 0; s < p->n_seqs; s++) {
		load_state(p, s, m);
		const int64_t end = p->cu_seqlens[s + 1];
		for (int64_t t0 = p->cu_seqlens[s]; t0 < end; t0 += 2 * C) {
			const int la = end - t0 < C ? (int)(end - t0) : C;
			const int64_t left_b = end - t0 - la;
			const int lb = left_b < C ? (int)left_b : C;
			for (int h = 0; h < H; h++) {
				double *mh = m + (size_t)h * V * K;
				chunk_record(p, &ca, h, t0, la);
				if (lb == 0) {
					chunk_apply(p, &ca, mh, h, t0, la);
					continue;
				}
				chunk_record(p, &cb, h, t0 + la, lb);
				pair_apply(p, &ca, &cb, x, y, mh, h, t0, la, lb);
			}
		}
		store_state(p, s, m);
	}
	free(mem);
	return 0;
}

int kda_ref_short_conv(int tokens, int channels, const double *x, const double *w,
		       double *conv_state, double *y)
{
	if (tokens < 0 || channels < 1 || !x || !w || !y)
		return -EINVAL;
	for (int c = 0; c < channels; c++) {
		double hist[KDA_CONV_STATE_TAPS];
		for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
			hist[i] = conv_state ? conv_state[(size_t)i * channels + c] : 0.0;
		const double *wc = w + (size_t)c * KDA_CONV_TAPS;
		for (int t = 0; t < tokens; t++) {
			double xc = x[(size_t)t * channels + c];
			double acc = wc[KDA_CONV_TAPS - 1] * xc;
			for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
				acc += wc[i] * hist[i];
			for (int i = 0; i + 1 < KDA_CONV_STATE_TAPS; i++)
				hist[i] = hist[i + 1];
			hist[KDA_CONV_STATE_TAPS - 1] = xc;
			y[(size_t)t * channels + c] = silu(acc);
		}
		if (conv_state)
			for (int i = 0; i < KDA_CONV_STATE_TAPS; i++)
				conv_state[(size_t)i * channels + c] = hist[i];
	}
	return 0;
}

int kda_ref_gated_rmsnorm(int tokens, int heads, int dv, const double *o,
			  const double *gate_raw, const double *norm_w, double eps, double *y)
{
	if (tokens < 0 || heads < 1 || dv < 1 || !o || !gate_raw || !norm_w || !y)
		return -EINVAL;
	for (size_t th = 0; th < (size_t)tokens * heads; th++) {
		const double *oi = o + th * dv;
		double ss = 0.0;
		for (int j = 0; j < dv; j++)
			ss += oi[j] * oi[j];
		double r = 1.0 / sqrt(ss / dv + eps);
		for (int j = 0; j < dv; j++)
			y[th * dv + j] = oi[j] * r * norm_w[j] * sigmoid(gate_raw[th * dv + j]);
	}
	return 0;
}

static int check_step(const struct kda_ref_step *p)
{
	if (!p || p->batch < 1 || p->heads < 1 || p->dk < 1 || p->dv < 1 || p->window < 1)
		return -EINVAL;
	if (!p->x || !p->g_raw || !p->beta_raw || !p->gate_raw || !p->conv_w || !p->norm_w ||
	    !p->slot || !p->state || !p->conv_state)
		return -EINVAL;
	for (int b = 0; b < p->batch; b++)
		if (p->slot[b] < 0)
			return -EINVAL;
	return 0;
}

/*
 * Runs tokens [0, n) of request b's window on the given state ([H][V][K])
 * and conv state ([3][C]), both updated in place; writes outputs when out
 * is non-NULL.
 */
static int step_request(const struct kda_ref_step *p, int b, int n, double *state, double *conv,
			double *out)
{
	const int H = p->heads, K = p->dk, V = p->dv, W = p->window;
	const size_t C = (size_t)H * (2 * K + V);
	double *y = malloc((C + 3 * (size_t)K + 2 * (size_t)V) * sizeof(*y));
	if (!y)
		return -ENOMEM;
	double *inb = y + C, *o = inb + 3 * K, *yo = o + V;
	struct head_in in = { .qh = inb, .kh = inb + K, .alpha = inb + 2 * K };
	for (int t = 0; t < n; t++) {
		size_t bt = (size_t)b * W + t;
		int rc = kda_ref_short_conv(1, (int)C, p->x + bt * C, p->conv_w, conv, y);
		if (rc) {
			free(y);
			return rc;
		}
		for (int h = 0; h < H; h++) {
			const double *q = y + (size_t)h * K, *k = y + (size_t)H * K + (size_t)h * K;
			const double *v = y + (size_t)2 * H * K + (size_t)h * V;
			size_t gk = (bt * H + h) * K, gv = (bt * H + h) * V;
			prepare_head(&in, K, p->scale, q, k, p->g_raw + gk, p->beta_raw[bt * H + h]);
			head_step(state + (size_t)h * V * K, &in, v, o, K, V);
			if (out) {
				kda_ref_gated_rmsnorm(1, 1, V, o, p->gate_raw + gv, p->norm_w,
						      p->norm_eps, yo);
				memcpy(out + gv, yo, (size_t)V * sizeof(*yo));
			}
		}
	}
	free(y);
	return 0;
}

static double *slot_state(const struct kda_ref_step *p, int b)
{
	return p->state + (size_t)p->slot[b] * p->heads * p->dv * p->dk;
}

static double *slot_conv(const struct kda_ref_step *p, int b)
{
	return p->conv_state + (size_t)p->slot[b] * KDA_CONV_STATE_TAPS * p->heads *
				       (2 * p->dk + p->dv);
}

int kda_ref_decode(const struct kda_ref_step *p)
{
	int rc = check_step(p);
	if (rc)
		return rc;
	if (p->window != 1 || !p->out)
		return -EINVAL;
	for (int b = 0; b < p->batch && !rc; b++)
		rc = step_request(p, b, 1, slot_state(p, b), slot_conv(p, b), p->out);
	return rc;
}

int kda_ref_verify(const struct kda_ref_step *p, const int32_t *n_draft)
{
	int rc = check_step(p);
	if (rc)
		return rc;
	if (!n_draft || !p->out)
		return -EINVAL;
	size_t sn = (size_t)p->heads * p->dv * p->dk;
	size_t cn = (size_t)KDA_CONV_STATE_TAPS * p->heads * (2 * p->dk + p->dv);
	double *copy = malloc((sn + cn) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	for (int b = 0; b < p->batch && !rc; b++) {
		if (n_draft[b] < 0 || n_draft[b] > p->window) {
			rc = -EINVAL;
			break;
		}
		memcpy(copy, slot_state(p, b), sn * sizeof(*copy));
		memcpy(copy + sn, slot_conv(p, b), cn * sizeof(*copy));
		rc = step_request(p, b, n_draft[b], copy, copy + sn, p->out);
	}
	free(copy);
	return rc;
}

int kda_ref_replay(const struct kda_ref_step *p, const int32_t *n_accept)
{
	int rc = check_step(p);
	if (rc)
		return rc;
	if (!n_accept)
		return -EINVAL;
	for (int b = 0; b < p->batch && !rc; b++) {
		if (n_accept[b] < 0 || n_accept[b] > p->window)
			return -EINVAL;
		rc = step_request(p, b, n_accept[b], slot_state(p, b), slot_conv(p, b), NULL);
	}
	return rc;
}
