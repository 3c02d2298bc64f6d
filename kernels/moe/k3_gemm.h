/* SPDX-License-Identifier: MIT */
/*
 * The GEMM op of the K3 layers (CUDA): out = epilogue(A W^T), BF16
 * activations, BF16 or MXFP4 weights (dequantized in-kernel to BF16: Hopper
 * has no FP4 tensor path), FP32 accumulation, dense or grouped by expert
 * (the rows of group g use weights g), A rows read in place or gathered
 * through an index. The epilogues (moe_common.h) carry the rest of the
 * LatentMoE arithmetic: the FP32 router logits beside the BF16 latent
 * (SPLIT), SiTU-GLU (GLU), the router weight (SCALE), the shared MLP's sum
 * (ADD). moe_ref_gemm() is the same op in float64.
 *
 * Two paths, picked from the shapes (or forced through `path`):
 *  - tiled (prefill), in two kernels:
 *    wgmma (sm_90a builds on compute capability 9.0; the default there for
 *    grouped GEMMs and for dense ones with at least one tile per SM):
 *    persistent, warp-specialized (a cp.async producer warpgroup, two wgmma
 *    consumer warpgroups), tiles of 256 weight rows x up to 128 rows of A
 *    (the MMA's N follows a group's row count in steps of 16, so an expert
 *    with 73 tokens computes 80, not 128), MXFP4 weights expanded to BF16
 *    in registers as the MMA's A operand (k3_gemm_wg.cu); grouped with BF16
 *    weights and more than 128 rows per group on average: in clusters of
 *    ceil(rows per group / 128) CTAs (at most 4) that take one group's token
 *    chunks and share its weight tiles by TMA multicast (K3_GEMM_WG_CLUSTER in
 *    the environment: 1 without clusters, 2..4 forced);
 *    mma.sync (any GPU; K3_GEMM_TILED_MMA, or the environment variable
 *    K3_GEMM_TILED=mma for every tiled call of the process): 64- or
 *    128-row x 128-column tiles over 64-deep k blocks, a 4-stage cp.async
 *    pipeline, mma.sync m16n8k16; MXFP4 tiles are dequantized into shared
 *    memory before each k block. Grouped: one CTA per (tile of
 *    MOE_TILE_ROWS rows of one group, 128 columns), tiles listed by
 *    tile_off.
 *  - gemv: for a few rows per group (decode): the weights are the MMA's
 *    A operand, streamed once from HBM straight into registers (16-byte
 *    loads, MXFP4 nibbles expanded with byte permutes), the rows' 8 or 16
 *    tokens the B operand; grouped: only the touched groups' weights are
 *    read; dense: split over k (FP32 partials in the workspace, then a
 *    pass that sums them and applies the epilogue). MXFP4 with BF16
 *    activations runs gemv_lean_kernel (K3_GEMV_FP4=regs in the
 *    environment: the older gemv_kernel; E8M0 weight scale bytes 3..252
 *    exact there, 0 taken as 0, 255 as infinity, not NaN); the grouped grid has
 *    min(n_groups, rows) rows (so `touched` must list groups with rows
 *    only, as moe_route() writes it; K3_GEMV_GRID=full: n_groups rows).
 *    Grouped, with the weights also given in the FP16-pair layout (w_f16,
 *    K a multiple of 512 up to 8192): gemv_f16_kernel, the default there
 *    (a first pass writes the activations as FP16 times a power of two a
 *    row into the workspace; FP16 MMAs, one scale group each, FP32 sums
 *    times the E8M0 scale: weight scale bytes 1..254 exact, 0 taken as 0,
 *    255 as infinity; activation elements below 2^-28 of their row's
 *    largest magnitude lose bits, below 2^-39 become 0, see k3_gemm.cu).
 *    With MXFP8 activations (a_dtype K3_A_MXFP8: E4M3 elements, one E8M0
 *    scale per 32 along k, from k3_gemm_quantize_mxfp8()) and MXFP4 weights
 *    in the FP8 layout (k3_quant.h; k3_gemm_repack_fp8(), once), the gemv
 *    runs FP8 MMAs (m16n8k32 E4M3, sm_89+): one MMA's 32 k are one scale
 *    group of both operands, so each runs from a zero accumulator and its
 *    FP32 sums are added times 2^(ew + ea - 248) (the weights' E4M3 form
 *    is v 2^-6). Exact products, FP32 sums; weight scales 0..253 and
 *    activation scales 0..249 (every scale an MX quantizer of finite FP32 or
 *    BF16 values writes), a product of scales up to 2^127. Each lane streams
 *    its weight blocks through a private cp.async ring in shared memory
 *    (K3_GEMV8_PIPE=regs: two register sets, as the BF16-activation gemv).
 *    A selectable path: the BF16-activation gemv stays the default where
 *    a is BF16 (k3_gemm_path_for() says GEMV for both).
 */
#ifndef K3_KERNELS_MOE_K3_GEMM_H
#define K3_KERNELS_MOE_K3_GEMM_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "moe_common.h"

#ifdef __cplusplus
extern "C" {
#endif

enum k3_gemm_path {
	K3_GEMM_AUTO = 0,        /* gemv for dense rows <= 8 (<= 16 where N is narrow, k3_gemm.cu dense_gemv) or grouped rows <= 16 per group on average;
				    grouped MXFP4 with the tile layout (w_wg) where wgmma runs: the gemv only at <= a quarter of a row a group
				    (k3_gemm.cu grouped_gemv_mode(); K3_GEMM_GROUPED_GEMV=1 the rule before, =0 never the gemv) */
	K3_GEMM_TILED = 1,       /* wgmma where available, else mma.sync */
	K3_GEMM_GEMV = 2,
	K3_GEMM_TILED_MMA = 3,   /* the mma.sync tiled kernel */
	K3_GEMM_TILED_WGMMA = 4, /* the wgmma tiled kernel (-EINVAL where it is not available) */
};

/* Activation formats of the GEMM op. */
enum k3_adtype {
	K3_A_BF16 = 0,  /* a */
	K3_A_MXFP8 = 1, /* a_q, a_scales: gemv path only, MXFP4 weights in the FP8 layout; code for
			   sm_89+ (-EINVAL where the build's code for this device is older) */
	K3_A_E4M3_ROW = 2, /* a_q (E4M3) with a_row_scales (one FP32 scale a row of a_q;
			      k3_gemm_quantize_e4m3_rows()): grouped, MXFP4 weights also given as
			      w_wgf8 and w_floors (k3_gemm_repack_wgf8()), GLU or SCALE; else
			      -EINVAL. Output = epilogue(s_a x (E4M3 A) W^T). Two kernels:
			      - the FP8 wgmma kernel ("wide2f8", k3_gemm_wg.cu; K3_GEMM_TILED or
			        TILED_WGMMA, an sm_90a build at compute capability 9.0): E4M3 x E4M3
			        products on the tensor cores, summed there (Hopper's FP8
			        accumulation, not FP32-exact);
			      - the gemv (K3_GEMM_GEMV; K a multiple of 512 up to 8192, sm_89+,
			        w_f16 given): the E4M3 rows as FP16 (exact) into the workspace,
			        then gemv_f16_kernel on w_f16: exact products, FP32 sums, times s_a.
			      K3_GEMM_AUTO takes the wgmma kernel; with K3_GEMM_E4M3_GEMV=1 in the
			      environment the gemv at up to 1.5 rows a group on average where its
			      shapes allow and w_f16 is given (opt-in: slower inside a decode step,
			      k3_gemm.cu gemv_e4m3_on()) */
};

/* Pointers are device memory, 16-byte aligned; BF16 as uint16_t bits. */
struct k3_gemm_args {
	int64_t rows;             /* dense: M; grouped: rows of the grouped space (>= off[n_groups]) */
	int N;                    /* output columns of the product, a multiple of 16 (GLU: 16, SPLIT's FP32 part 128) */
	int K;                    /* reduction, a multiple of 128 */
	int n_groups;             /* 0: dense; else groups (experts), <= MOE_MAX_EXPERTS */
	const int32_t *off;       /* grouped: [n_groups + 1] row offsets (off[0] = 0) */
	const int32_t *tile_off;  /* grouped, mma.sync tiled path: [n_groups + 1] offsets in MOE_TILE_ROWS tiles */
	const int32_t *touched;   /* grouped, gemv path: [n_groups] groups with rows, first *n_touched */
	const int32_t *n_touched; /* grouped, gemv path: [1] */
	const int32_t *a_index;   /* [rows] A row of each row, or NULL: row r of A */
	const int32_t *out_index; /* [rows] output row of each row (out, out_f32, addend), or NULL: r */
	const uint16_t *a;        /* [*][K] */
	enum k3_wdtype w_dtype;
	const uint16_t *w;        /* BF16: [max(1, n_groups)][N][K] */
	const uint8_t *w_packed;  /* MXFP4: [max(1, n_groups)][N][K / 2], low nibble first */
	const uint8_t *w_scales;  /* MXFP4: [max(1, n_groups)][N][K / 32] E8M0 (wgmma path: 4-byte aligned) */
	enum k3_epilogue epi;
	int n_split;              /* SPLIT: FP32 columns, a multiple of 128 */
	float beta_gate, beta_up; /* GLU: SiTU caps (K3: 4, 25) */
	const float *row_scale;   /* SCALE: [rows] */
	const uint16_t *addend;   /* ADD, GATE: [output rows][N] */
	uint16_t *out;            /* [rows][N], GLU [rows][N / 2], SPLIT [rows][N - n_split] */
	float *out_f32;           /* SPLIT: [rows][n_split] */
	enum k3_gemm_path path;
	void *workspace;          /* k3_gemm_workspace_bytes(), or NULL when 0 */
	size_t workspace_bytes;
	enum k3_adtype a_dtype;   /* K3_A_MXFP8: a is not read; w_packed in the FP8 layout,
				     w_scales 4-byte aligned */
	const uint8_t *a_q;       /* MXFP8: [*][K] E4M3 (a_index applies as to a) */
	const uint8_t *a_scales;  /* MXFP8: [*][K / 32] E8M0, 4-byte aligned */
	const uint8_t *w_f16;     /* MXFP4, optional: w_packed's nibbles in the FP16-pair layout
				     (k3_quant.h; k3_gemm_repack_f16enc(), once), 16-byte aligned. Where
				     set, grouped gemv calls with BF16 activations, K a multiple of 512
				     up to 8192 and 16-byte aligned w_scales run gemv_f16_kernel on it
				     (needs the workspace; the tiled path keeps reading w_packed);
				     K3_GEMV_FP4=lean in the environment: gemv_lean_kernel on w_packed */
	const uint8_t *w_wg;      /* MXFP4, optional: w_packed in the wgmma tile layout (k3_gemm_repack_wg(),
				     once; every scale byte <= 128), 16-byte aligned. Where set, grouped
				     wgmma calls of the kernels "wide2rp", "wide2rq", "wide2rqt" (the default; K3_GEMM_WG_KERNEL; k3_gemm_wg.cu)
				     read it instead of w_packed; the other paths ignore it */
	const float *a_row_scales; /* K3_A_E4M3_ROW: [*] one FP32 scale a row of a_q (a_index applies) */
	const uint8_t *w_wgf8;    /* K3_A_E4M3_ROW: w_packed in the FP8-word tile layout
				     (k3_gemm_repack_wgf8()), 16-byte aligned */
	const uint8_t *w_floors;  /* K3_A_E4M3_ROW: [max(1, n_groups) x N] its floors */
	uint8_t *out_e4m3;        /* K3_A_E4M3_ROW, GLU, optional: the outputs as E4M3 of m x the value
				     ([rows][N / 2], through out_index as out; out not written),
				     m = k3_gemm_glu_e4m3_mul(beta_gate, beta_up): SiTU-GLU's
				     magnitude is below beta_gate x beta_up, so nothing saturates and
				     no amax pass is needed; the next GEMM (w2) takes them as
				     K3_A_E4M3_ROW with every a_row_scales 1 / m */
};

/* The factor of k3_gemm_args.out_e4m3: the largest power of 2 m with m x beta_gate x beta_up
 * <= 448 (E4M3's largest); K3's caps 4 and 25: 4. 0 for caps that are not positive and finite. */
float k3_gemm_glu_e4m3_mul(float beta_gate, float beta_up);

/* Device workspace for these shapes (the dense gemv split over k, and grouped MXFP4 gemv calls
 * with BF16 or E4M3-row activations and K a multiple of 512 up to 8192: the FP16 activations of
 * gemv_f16_kernel, rows x (2 K + 4) bytes, asked for whether w_f16 is set or not, unless
 * K3_GEMV_FP4 names another kernel for BF16); pointers are not looked at. 0 and *bytes set, or -EINVAL /
 * -EIO. */
int k3_gemm_workspace_bytes(const struct k3_gemm_args *a, size_t *bytes);

/* The path `path` resolves to for these args on the current device (K3_GEMM_GEMV,
 * K3_GEMM_TILED_MMA or K3_GEMM_TILED_WGMMA), or -EINVAL (bad shapes, or wgmma asked for
 * where it is not available). By shapes: a K3_GEMM_AUTO call with E4M3-row activations that
 * resolves to GEMV (K3_GEMM_E4M3_GEMV=1) but has no w_f16 runs the FP8 wgmma kernel. */
int k3_gemm_path_for(const struct k3_gemm_args *a);

/* Enqueues the GEMM on `stream` (capturable in a CUDA graph after one call
 * outside capture). Rows of a group past its end are not written. Returns 0,
 * -EINVAL (nothing launched), or -EIO when a launch failed (the CUDA error
 * stays readable). */
int k3_gemm(const struct k3_gemm_args *a, cudaStream_t stream);

/* MXFP8 of BF16 rows x [rows][K] (K a multiple of 32; k3_mxfp8_quantize() bit for bit):
 * q [rows][K] E4M3, scales [rows][K / 32] E8M0 (x, q 16-byte aligned, scales 4-byte). Finite
 * inputs; sm_89+ code (else -EINVAL). Enqueued on `stream`; 0, -EINVAL or -EIO. */
int k3_gemm_quantize_mxfp8(const uint16_t *x, int64_t rows, int K, uint8_t *q, uint8_t *scales,
			   cudaStream_t stream);

/* MXFP4 nibbles packed [rows][K / 2] (K a multiple of 128; rows: groups x N) into the FP8
 * layout `out` (k3_mxfp4_repack_fp8() bit for bit; not in place; 16-byte aligned): a one-time
 * step for the MXFP8-activation gemv. 0, -EINVAL or -EIO. */
int k3_gemm_repack_fp8(const uint8_t *packed, int64_t rows, int K, uint8_t *out, cudaStream_t stream);

/* MXFP4 nibbles packed [rows][K / 2] (K a multiple of 128) into the FP16-pair layout `out`
 * (k3_mxfp4_repack_f16enc() bit for bit; not in place; 16-byte aligned): a one-time step for the
 * grouped gemv's gemv_f16_kernel (k3_gemm_args.w_f16). 0, -EINVAL or -EIO. */
int k3_gemm_repack_f16enc(const uint8_t *packed, int64_t rows, int K, uint8_t *out, cudaStream_t stream);

/* MXFP4 nibbles packed [rows][K / 2] (rows a multiple of 16: groups x N; K a multiple of 128)
 * into the wgmma tile layout `out` (kernels/moe/k3_gemm_wg_rp.cuh; not in place; 16-byte
 * aligned): each 16-row x 64-k block's bytes reordered and re-encoded so that the wgmma kernel's
 * lanes load their A fragments in one 16-byte read each and expand one into BF16 with 8 integer
 * instructions, 4 bits a weight as before. The E8M0 scales stay as they are; the kernel is exact
 * for scale bytes 0 .. 128 (a weight magnitude up to 12): a one-time step that synchronizes
 * `stream` (it reads the largest scale byte back). 0; -ERANGE where a scale byte is above 128
 * (`out` written but not to be used); -EINVAL or -EIO. */
int k3_gemm_repack_wg(const uint8_t *packed, const uint8_t *scales, int64_t rows, int K, uint8_t *out,
		      cudaStream_t stream);

/* The operands of FP8 MMAs on MXFP4 weights (kernels/moe/k3_gemm_wgf8.cu; round 04p; the grouped
 * kernel that reads them: a_dtype K3_A_E4M3_ROW, round 04q).
 * k3_gemm_repack_wgf8: MXFP4 nibbles packed [rows][K / 2] (rows a multiple of 16, K of 128; both
 * 16-byte aligned) into the FP8-word tile layout `out` (not in place) and one floor byte a row
 * (`floors` [rows]): every scale group of a row with a nonzero code has 0 <= s - f <= 11. A
 * one-time step that synchronizes `stream`. 0; -ERANGE where a row's groups spread over more than
 * 11 binades, a scale byte is 255 or a floor is above 240 (`out` and `floors` written, not to be
 * used); -EINVAL or -EIO.
 * k3_wgf8_element: element (row, k) of that layout as a double (host; its decode is the kernel's):
 * k3_mxfp4_element() of the same row and k wherever the repack returned 0.
 * k3_gemm_quantize_e4m3_rows: BF16 rows x [rows][K] (K a multiple of 8; x 16-byte, q 8-byte
 * aligned) as E4M3 q [rows][K] with one FP32 scale a row (scale[r] = amax / 448 in FP32, 1 for a row
 * of zeros; q = E4M3 of x / scale, round to nearest even, saturating): k3_e4m3_row_quantize()
 * (k3_quant.h) bit for bit; sm_89+ (else -EINVAL). K3_QUANT_E4M3=reg | twopass | auto picks the
 * kernel (the one-pass kernel over registers, the default where a thread's pieces fit; the two-pass
 * one; unset or auto: the default); another value: -EINVAL. Enqueued on `stream`; 0, -EINVAL
 * or -EIO. */
int k3_gemm_repack_wgf8(const uint8_t *packed, const uint8_t *scales, int64_t rows, int K, uint8_t *out,
			uint8_t *floors, cudaStream_t stream);
double k3_wgf8_element(const uint8_t *wf8, const uint8_t *scales, const uint8_t *floors, int K, int64_t row, int k);
int k3_gemm_quantize_e4m3_rows(const uint16_t *x, int64_t rows, int K, uint8_t *q, float *scale, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
