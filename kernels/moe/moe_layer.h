/* SPDX-License-Identifier: MIT */
/*
 * One LatentMoE layer on the GPU, composed from the kernel entry points
 * (host code; moe_ref_layer() is the float64 counterpart):
 *
 *   1. k3_gemm SPLIT   [logits | latent] = x [W_r; W_down]^T     (router beside the down projection)
 *   2. moe_route       top-k, weights, grouping
 *   3. k3_gemm GLU     h = situ_glu(latent[row_token] W_13^T)     grouped, gathered rows
 *   4. k3_gemm SCALE   y = row_weight * (h W_2^T)                 grouped
 *   5. moe_combine     z = rmsnorm(sum_k y) * norm_w
 *   6. k3_gemm GLU     hs = situ_glu(x W_s13^T)                   shared MLP (if present)
 *   7. k3_gemm BF16    s = hs W_s2^T
 *   8. k3_gemm ADD     out = z W_up^T + s                          (BF16 when no shared MLP)
 *
 * With expert_act K3_A_E4M3_ROW (opt-in; MXFP4 experts) the routed experts
 * run the FP8 wgmma kernel (k3_gemm.h) on E4M3 activations instead of BF16:
 *
 *   1b. k3_gemm_quantize_e4m3_rows   latent_q, latent_scale = E4M3 rows of latent (one FP32 scale a row)
 *   3.  k3_gemm GLU, E4M3_ROW        h_q = E4M3 of m x situ_glu(latent_q[row_token] W_13^T)
 *                                    (out_e4m3, m = k3_gemm_glu_e4m3_mul(beta_gate, beta_up); no BF16 h)
 *   3b. moe_fill_f32                 inv_m[TK] = 1 / m (device-side, so a CUDA graph captures it)
 *   4.  k3_gemm SCALE, E4M3_ROW      y = row_weight * ((1 / m) h_q W_2^T)
 *
 * the rest as above; 1b is announced as `k3sim op=quant ... dtype=fp8 group=0`, 3b as a
 * `k3sim op=elementwise` op, 3 and 4 with dtype=fp8. The E4M3 MMAs accumulate in Hopper's FP8 accumulator (not FP32-exact);
 * moe_ref_layer()'s e4m3_act option quantizes as this path does.
 *
 * Every enqueued op can be announced to a hook (e.g. an NVTX range named in
 * `k3sim op` syntax). Library code: nothing is printed.
 */
#ifndef K3_KERNELS_MOE_LAYER_H
#define K3_KERNELS_MOE_LAYER_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "k3_gemm.h"
#include "moe_common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct moe_dims {
	int hidden, latent, experts, topk, inter, shared_inter; /* multiples of 128; shared_inter 0: none */
	float scaling, eps, beta_gate, beta_up;
	enum k3_wdtype expert_dtype;                            /* routed experts only; the rest BF16 */
	enum k3_adtype expert_act; /* the routed experts' activations: K3_A_BF16 (0, the default) or
				      K3_A_E4M3_ROW (MXFP4 experts only; the FP8 wgmma kernel, which
				      needs an sm_90a build at compute capability 9.0 and path AUTO,
				      TILED or TILED_WGMMA: elsewhere -EINVAL); any other value -EINVAL */
};

/* K3's LatentMoE (moe_common.h), MXFP4 experts. */
struct moe_dims moe_dims_k3(void);

/* Device pointers (layouts in moe_common.h). */
struct moe_weights {
	const uint16_t *w_router_down; /* [E + latent][hidden] */
	const float *bias;             /* [E] or NULL */
	const uint16_t *w13, *w2;      /* BF16 experts: [E][2 inter][latent], [E][latent][inter] */
	const uint8_t *w13_packed, *w13_scales, *w2_packed, *w2_scales; /* MXFP4 experts */
	const uint8_t *w13_f16, *w2_f16; /* MXFP4, optional: the packed nibbles in the FP16-pair layout
					    (k3_gemm_repack_f16enc()) for the decode gemv (k3_gemm_args.w_f16) */
	const uint8_t *w13_wg, *w2_wg; /* MXFP4, optional: the packed nibbles in the wgmma tile layout
					  (k3_gemm_repack_wg()) for the prefill's grouped GEMMs
					  (k3_gemm_args.w_wg: the default wgmma kernel "wide2rqp" reads it;
					  without it the wgmma path runs "wide2rl" on the standard nibbles) */
	const uint8_t *w13_wgf8, *w13_floors, *w2_wgf8, *w2_floors; /* MXFP4, expert_act K3_A_E4M3_ROW
					  (required there, ignored otherwise): the packed nibbles in the
					  FP8-word tile layout and its floor bytes (k3_gemm_repack_wgf8(), made
					  once; not to be used where it returned -ERANGE) */
	const uint16_t *norm_w;        /* [latent] */
	const uint16_t *w_up;          /* [hidden][latent] */
	const uint16_t *ws13, *ws2;    /* [2 shared][hidden], [hidden][shared] */
};

/* Called before each op with its `k3sim op` text, and after it with NULL. */
struct moe_hook {
	void (*op)(void *ctx, const char *spec);
	void *ctx;
};

/* Workspace of a forward pass of `tokens` tokens (path as k3_gemm's; K3_A_E4M3_ROW: the E4M3
 * latent, its row scales, h_q and the 1 / m row scales in place of the BF16 h; the BF16 path's
 * size does not depend on them). 0 and *bytes, or -EINVAL / -EIO. */
int moe_layer_workspace_bytes(const struct moe_dims *d, int tokens, enum k3_gemm_path path, size_t *bytes);

/* out[T][hidden] = LatentMoE(x[T][hidden]). Returns 0, -EINVAL or -EIO (a
 * launch failed; the CUDA error stays readable). */
int moe_layer_forward(const struct moe_dims *d, const struct moe_weights *w, int tokens, const uint16_t *x,
		      uint16_t *out, void *workspace, size_t workspace_bytes, enum k3_gemm_path path,
		      const struct moe_hook *hook, cudaStream_t stream);

/* The layer's GEMMs in launch order, and the kernel each one launches for a pass of `tokens`
 * tokens under `path` on the current device (k3_gemm_path_for(): K3_GEMM_GEMV,
 * K3_GEMM_TILED_MMA or K3_GEMM_TILED_WGMMA; 0 for the shared MLP's two where the layer has
 * none), so that a bench names the kernels it timed. 0, or -EINVAL / -EIO. */
#define MOE_LAYER_GEMMS 6
extern const char *const moe_layer_gemm_names[MOE_LAYER_GEMMS];
int moe_layer_gemm_paths(const struct moe_dims *d, int tokens, enum k3_gemm_path path, int paths[MOE_LAYER_GEMMS]);

/* Device views of the intermediates inside a workspace (for tests). */
struct moe_layer_views {
	float *logits;      /* [T][E] */
	uint16_t *latent;   /* [T][latent] */
	int32_t *topk_ids;  /* [T][K] */
	float *topk_w;      /* [T][K] */
	uint16_t *z;        /* [T][latent] after combine + norm */
	int32_t *n_touched; /* [1] experts that received rows in the last forward */
};
void moe_layer_views(const struct moe_dims *d, int tokens, void *workspace, struct moe_layer_views *v);

#ifdef __cplusplus
}
#endif

#endif
