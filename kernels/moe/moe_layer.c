/* SPDX-License-Identifier: MIT */
/* One LatentMoE layer from the kernel entry points: see moe_layer.h. */
#include "kernels/moe/moe_layer.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "kernels/moe/moe_combine.h"
#include "kernels/moe/moe_route.h"

struct moe_dims moe_dims_k3(void)
{
	struct moe_dims d = {
		.hidden = K3_HIDDEN, .latent = K3_LATENT, .experts = K3_EXPERTS, .topk = K3_TOPK,
		.inter = K3_EXPERT_INTER, .shared_inter = K3_SHARED_INTER, .scaling = 1.0f, .eps = 1e-6f,
		.beta_gate = (float)K3_SITU_BETA_GATE, .beta_up = (float)K3_SITU_BETA_UP, .expert_dtype = K3_W_MXFP4,
		.expert_act = K3_A_BF16,
	};
	return d;
}

/* Byte offsets of the intermediates inside the workspace. */
struct layout {
	size_t logits, latent, ids, tw, off, tile_off, touched, n_touched, row_token, row_weight, row_of;
	size_t route_ws, h, y, z, sh, so, gemm_ws, total;
	size_t latent_q, latent_scale, h_q, inv_m; /* K3_A_E4M3_ROW only (else 0 bytes) */
	size_t route_ws_bytes, gemm_ws_bytes;
};

static size_t up256(size_t x)
{
	return (x + 255) & ~(size_t)255;
}

static int dims_ok(const struct moe_dims *d, int tokens)
{
	return d && tokens >= 0 && d->hidden > 0 && d->hidden % 128 == 0 && d->latent > 0 && d->latent % 128 == 0 &&
	       d->experts > 0 && d->experts <= MOE_MAX_EXPERTS && d->experts % 128 == 0 && d->topk > 0 &&
	       d->topk <= d->experts && d->topk <= MOE_MAX_TOPK && d->inter > 0 && d->inter % 128 == 0 &&
	       d->shared_inter >= 0 && d->shared_inter % 128 == 0 && d->latent <= 8192 &&
	       (int64_t)tokens * d->topk < (1 << 30) &&
	       (d->expert_act == K3_A_BF16 || (d->expert_act == K3_A_E4M3_ROW && d->expert_dtype == K3_W_MXFP4));
}

static bool e4m3(const struct moe_dims *d)
{
	return d->expert_act == K3_A_E4M3_ROW;
}

/* The six GEMMs' shapes (pointers filled in by the caller). */
enum { G_RD, G_13, G_2, G_S13, G_S2, G_UP, N_GEMMS };
_Static_assert(N_GEMMS == MOE_LAYER_GEMMS, "moe_layer.h lists the GEMMs");

const char *const moe_layer_gemm_names[MOE_LAYER_GEMMS] = {
	"router_down", "experts_w13", "experts_w2", "shared_w13", "shared_w2", "up",
};

static void gemm_shapes(const struct moe_dims *d, int T, enum k3_gemm_path path, struct k3_gemm_args g[N_GEMMS])
{
	memset(g, 0, N_GEMMS * sizeof *g);
	const int64_t TK = (int64_t)T * d->topk;
	g[G_RD] = (struct k3_gemm_args){ .rows = T, .N = d->experts + d->latent, .K = d->hidden, .epi = K3_EPI_SPLIT,
					  .n_split = d->experts };
	g[G_13] = (struct k3_gemm_args){ .rows = TK, .N = 2 * d->inter, .K = d->latent, .n_groups = d->experts,
					  .w_dtype = d->expert_dtype, .epi = K3_EPI_GLU, .a_dtype = d->expert_act };
	g[G_2] = (struct k3_gemm_args){ .rows = TK, .N = d->latent, .K = d->inter, .n_groups = d->experts,
					 .w_dtype = d->expert_dtype, .epi = K3_EPI_SCALE, .a_dtype = d->expert_act };
	g[G_S13] = (struct k3_gemm_args){ .rows = T, .N = 2 * d->shared_inter, .K = d->hidden, .epi = K3_EPI_GLU };
	g[G_S2] = (struct k3_gemm_args){ .rows = T, .N = d->hidden, .K = d->shared_inter, .epi = K3_EPI_BF16 };
	g[G_UP] = (struct k3_gemm_args){ .rows = T, .N = d->hidden, .K = d->latent,
					  .epi = d->shared_inter ? K3_EPI_ADD : K3_EPI_BF16 };
	for (int i = 0; i < N_GEMMS; i++) {
		g[i].path = path;
		g[i].beta_gate = d->beta_gate;
		g[i].beta_up = d->beta_up;
	}
}

static int layout_of(const struct moe_dims *d, int T, enum k3_gemm_path path, struct layout *L)
{
	const size_t TK = (size_t)T * d->topk, E = (size_t)d->experts;
	struct k3_gemm_args g[N_GEMMS];
	gemm_shapes(d, T, path, g);
	size_t most = 0;
	for (int i = 0; i < N_GEMMS; i++) {
		if ((i == G_S13 || i == G_S2) && !d->shared_inter)
			continue;
		size_t b = 0;
		const int rc = k3_gemm_workspace_bytes(&g[i], &b);
		if (rc)
			return rc;
		most = b > most ? b : most;
	}
	memset(L, 0, sizeof *L);
	size_t at = 0;
#define PLACE(field, bytes) (L->field = at, at += up256(bytes))
	PLACE(logits, (size_t)T * E * 4);
	PLACE(latent, (size_t)T * d->latent * 2);
	PLACE(ids, TK * 4);
	PLACE(tw, TK * 4);
	PLACE(off, (E + 1) * 4);
	PLACE(tile_off, (E + 1) * 4);
	PLACE(touched, E * 4);
	PLACE(n_touched, 4);
	PLACE(row_token, TK * 4);
	PLACE(row_weight, TK * 4);
	PLACE(row_of, TK * 4);
	L->route_ws_bytes = moe_route_workspace_bytes(T, d->experts);
	PLACE(route_ws, L->route_ws_bytes);
	const bool f8 = e4m3(d);
	PLACE(h, f8 ? 0 : TK * d->inter * 2); /* E4M3: h_q instead */
	PLACE(y, TK * d->latent * 2);
	PLACE(z, (size_t)T * d->latent * 2);
	PLACE(sh, (size_t)T * d->shared_inter * 2);
	PLACE(so, (size_t)T * d->hidden * 2);
	PLACE(latent_q, f8 ? (size_t)T * d->latent : 0);
	PLACE(latent_scale, f8 ? (size_t)T * 4 : 0);
	PLACE(h_q, f8 ? TK * d->inter : 0);
	PLACE(inv_m, f8 ? TK * 4 : 0);
	L->gemm_ws_bytes = most;
	PLACE(gemm_ws, most);
#undef PLACE
	L->total = at;
	return 0;
}

int moe_layer_workspace_bytes(const struct moe_dims *d, int tokens, enum k3_gemm_path path, size_t *bytes)
{
	if (!dims_ok(d, tokens) || !bytes)
		return -EINVAL;
	struct layout L;
	const int rc = layout_of(d, tokens, path, &L);
	if (rc)
		return rc;
	*bytes = L.total;
	return 0;
}

int moe_layer_gemm_paths(const struct moe_dims *d, int tokens, enum k3_gemm_path path, int paths[MOE_LAYER_GEMMS])
{
	if (!dims_ok(d, tokens) || !paths)
		return -EINVAL;
	struct k3_gemm_args g[N_GEMMS];
	gemm_shapes(d, tokens, path, g);
	for (int i = 0; i < N_GEMMS; i++) {
		paths[i] = 0;
		if ((i == G_S13 || i == G_S2) && !d->shared_inter)
			continue;
		const int rc = k3_gemm_path_for(&g[i]);
		if (rc < 0)
			return rc;
		paths[i] = rc;
	}
	return 0;
}

void moe_layer_views(const struct moe_dims *d, int tokens, void *workspace, struct moe_layer_views *v)
{
	struct layout L;
	memset(v, 0, sizeof *v);
	if (!dims_ok(d, tokens) || layout_of(d, tokens, K3_GEMM_AUTO, &L))
		return;
	unsigned char *b = workspace;
	v->logits = (float *)(b + L.logits);
	v->latent = (uint16_t *)(b + L.latent);
	v->topk_ids = (int32_t *)(b + L.ids);
	v->topk_w = (float *)(b + L.tw);
	v->z = (uint16_t *)(b + L.z);
	v->n_touched = (int32_t *)(b + L.n_touched);
}

static void announce(const struct moe_hook *h, const char *spec)
{
	if (h && h->op)
		h->op(h->ctx, spec);
}

/* Experts expected to receive rows when T tokens pick K of E uniformly. */
static long expected_touched(const struct moe_dims *d, int T)
{
	const double miss = pow(1.0 - (double)d->topk / d->experts, (double)T);
	return lround((double)d->experts * (1.0 - miss));
}

int moe_layer_forward(const struct moe_dims *d, const struct moe_weights *w, int tokens, const uint16_t *x,
		      uint16_t *out, void *workspace, size_t workspace_bytes, enum k3_gemm_path path,
		      const struct moe_hook *hook, cudaStream_t stream)
{
	if (!dims_ok(d, tokens) || !w || !x || !out || !workspace)
		return -EINVAL;
	struct layout L;
	int rc = layout_of(d, tokens, path, &L);
	if (rc)
		return rc;
	if (workspace_bytes < L.total)
		return -EINVAL;
	const bool f8 = e4m3(d);
	const float glu_mul = f8 ? k3_gemm_glu_e4m3_mul(d->beta_gate, d->beta_up) : 0.0f;
	if (f8 && (!w->w13_wgf8 || !w->w13_floors || !w->w2_wgf8 || !w->w2_floors || !(glu_mul > 0.0f)))
		return -EINVAL;
	if (tokens == 0)
		return 0;
	const int T = tokens;
	unsigned char *b = workspace;
	const char *wd = d->expert_dtype == K3_W_MXFP4 ? "mxfp4" : "bf16";
	const char *ad = f8 ? "fp8" : "bf16"; /* the routed experts' activations */
	struct k3_gemm_args g[N_GEMMS];
	gemm_shapes(d, T, path, g);
	for (int i = 0; i < N_GEMMS; i++) {
		g[i].workspace = b + L.gemm_ws;
		g[i].workspace_bytes = L.gemm_ws_bytes;
	}
	int32_t *off = (int32_t *)(b + L.off), *tile_off = (int32_t *)(b + L.tile_off);
	int32_t *touched = (int32_t *)(b + L.touched), *n_touched = (int32_t *)(b + L.n_touched);
	int32_t *row_token = (int32_t *)(b + L.row_token);
	float *row_weight = (float *)(b + L.row_weight);
	uint16_t *latent = (uint16_t *)(b + L.latent), *h = (uint16_t *)(b + L.h), *y = (uint16_t *)(b + L.y);
	uint16_t *z = (uint16_t *)(b + L.z), *sh = (uint16_t *)(b + L.sh), *so = (uint16_t *)(b + L.so);
	uint8_t *latent_q = b + L.latent_q, *h_q = b + L.h_q;
	float *latent_scale = (float *)(b + L.latent_scale), *inv_m = (float *)(b + L.inv_m);
	char spec[192];
	const long TK = (long)T * d->topk, touched_guess = expected_touched(d, T);

	/* 1. router logits (FP32) beside the latent down projection (BF16). */
	g[G_RD].a = x, g[G_RD].w = w->w_router_down;
	g[G_RD].out_f32 = (float *)(b + L.logits), g[G_RD].out = latent;
	snprintf(spec, sizeof spec, "k3sim op=gemm m=%d n=%d k=%d dtype=bf16", T, d->experts + d->latent, d->hidden);
	announce(hook, spec);
	rc = k3_gemm(&g[G_RD], stream);
	announce(hook, NULL);
	if (rc)
		return rc;

	/* 1b. E4M3: the latent rows as E4M3 with one FP32 scale a row (w13's input): the quantizer op,
	 * group=0 (a scale a row). */
	if (f8) {
		snprintf(spec, sizeof spec, "k3sim op=quant tokens=%d width=%d dtype=fp8 group=0", T, d->latent);
		announce(hook, spec);
		rc = k3_gemm_quantize_e4m3_rows(latent, T, d->latent, latent_q, latent_scale, stream);
		announce(hook, NULL);
		if (rc)
			return rc;
	}

	/* 2. top-k and grouping. */
	struct moe_route_args r = {
		.tokens = T, .experts = d->experts, .topk = d->topk, .scaling = d->scaling,
		.logits = (const float *)(b + L.logits), .logits_stride = d->experts, .bias = w->bias,
		.topk_ids = (int32_t *)(b + L.ids), .topk_weights = (float *)(b + L.tw), .off = off,
		.tile_off = tile_off, .touched = touched, .n_touched = n_touched, .row_token = row_token,
		.row_weight = row_weight, .row_of = (int32_t *)(b + L.row_of), .workspace = b + L.route_ws,
		.workspace_bytes = L.route_ws_bytes,
	};
	snprintf(spec, sizeof spec, "k3sim op=route tokens=%d experts=%d top_k=%d dtype=fp32", T, d->experts,
		 d->topk);
	announce(hook, spec);
	rc = moe_route(&r, stream);
	announce(hook, NULL);
	if (rc)
		return rc;

	/* 3-4. routed experts, only the touched ones' weights read. */
	for (int i = G_13; i <= G_2; i++) {
		g[i].off = off, g[i].tile_off = tile_off, g[i].touched = touched, g[i].n_touched = n_touched;
	}
	g[G_13].a_index = row_token;
	g[G_13].w = w->w13, g[G_13].w_packed = w->w13_packed, g[G_13].w_scales = w->w13_scales;
	g[G_13].w_f16 = w->w13_f16, g[G_13].w_wg = w->w13_wg;
	if (f8) { /* h_q = E4M3 of glu_mul x h, no BF16 h */
		g[G_13].a_q = latent_q, g[G_13].a_row_scales = latent_scale, g[G_13].out_e4m3 = h_q;
		g[G_13].w_wgf8 = w->w13_wgf8, g[G_13].w_floors = w->w13_floors;
	} else {
		g[G_13].a = latent, g[G_13].out = h;
	}
	snprintf(spec, sizeof spec, "k3sim op=grouped_gemm m=%ld n=%d k=%d groups=%d touched=%ld dtype=%s w_dtype=%s",
		 TK, 2 * d->inter, d->latent, d->experts, touched_guess, ad, wd);
	announce(hook, spec);
	rc = k3_gemm(&g[G_13], stream);
	announce(hook, NULL);
	if (rc)
		return rc;
	if (f8) { /* 3b. w2's row scales: 1 / glu_mul each (h_q's factor), filled on the device */
		snprintf(spec, sizeof spec, "k3sim op=elementwise m=%ld n=1 in=0 out=1 dtype=fp32", TK);
		announce(hook, spec);
		rc = moe_fill_f32(inv_m, TK, 1.0f / glu_mul, stream);
		announce(hook, NULL);
		if (rc)
			return rc;
	}
	g[G_2].row_scale = row_weight, g[G_2].out = y;
	g[G_2].w = w->w2, g[G_2].w_packed = w->w2_packed, g[G_2].w_scales = w->w2_scales;
	g[G_2].w_f16 = w->w2_f16, g[G_2].w_wg = w->w2_wg;
	if (f8) {
		g[G_2].a_q = h_q, g[G_2].a_row_scales = inv_m;
		g[G_2].w_wgf8 = w->w2_wgf8, g[G_2].w_floors = w->w2_floors;
	} else {
		g[G_2].a = h;
	}
	snprintf(spec, sizeof spec, "k3sim op=grouped_gemm m=%ld n=%d k=%d groups=%d touched=%ld dtype=%s w_dtype=%s",
		 TK, d->latent, d->inter, d->experts, touched_guess, ad, wd);
	announce(hook, spec);
	rc = k3_gemm(&g[G_2], stream);
	announce(hook, NULL);
	if (rc)
		return rc;

	/* 5. weighted rows summed per token, latent RMSNorm. */
	struct moe_combine_args c = {
		.tokens = T, .topk = d->topk, .width = d->latent, .eps = d->eps, .y = y,
		.row_of = (const int32_t *)(b + L.row_of), .norm_w = w->norm_w, .out = z,
	};
	snprintf(spec, sizeof spec, "k3sim op=combine tokens=%d width=%d top_k=%d dtype=bf16", T, d->latent,
		 d->topk);
	announce(hook, spec);
	rc = moe_combine(&c, stream);
	announce(hook, NULL);
	if (rc)
		return rc;

	/* 6-7. shared MLP at full width. */
	if (d->shared_inter) {
		g[G_S13].a = x, g[G_S13].w = w->ws13, g[G_S13].out = sh;
		snprintf(spec, sizeof spec, "k3sim op=gemm m=%d n=%d k=%d dtype=bf16", T, 2 * d->shared_inter, d->hidden);
		announce(hook, spec);
		rc = k3_gemm(&g[G_S13], stream);
		announce(hook, NULL);
		if (rc)
			return rc;
		g[G_S2].a = sh, g[G_S2].w = w->ws2, g[G_S2].out = so;
		snprintf(spec, sizeof spec, "k3sim op=gemm m=%d n=%d k=%d dtype=bf16", T, d->hidden, d->shared_inter);
		announce(hook, spec);
		rc = k3_gemm(&g[G_S2], stream);
		announce(hook, NULL);
		if (rc)
			return rc;
		g[G_UP].addend = so;
	}

	/* 8. up projection, + shared output. */
	g[G_UP].a = z, g[G_UP].w = w->w_up, g[G_UP].out = out;
	snprintf(spec, sizeof spec, "k3sim op=gemm m=%d n=%d k=%d dtype=bf16", T, d->hidden, d->latent);
	announce(hook, spec);
	rc = k3_gemm(&g[G_UP], stream);
	announce(hook, NULL);
	return rc;
}
