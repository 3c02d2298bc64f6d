/* SPDX-License-Identifier: MIT */
/*
 * The KDA chunked prefill's per (chunk, head) record (written by the intra kernel, read by the
 * recurrent kernels; kda_prefill.cu) and the shared-memory offsets the pair kernel's lanes use
 * (kda_chunk_recurrent_pair_kernel): host-callable, so that test-kda-layout checks on the host
 * that every operand fragment and store lands where the PTX ISA's ldmatrix / mma.m16n8k16 forms
 * put it. Included by one translation unit each (everything is in an anonymous namespace).
 */
#ifndef K3_KERNELS_KDA_RECORD_CUH
#define K3_KERNELS_KDA_RECORD_CUH

#include "kda_common.h"

namespace {

constexpr int D = KDA_HEAD_DIM; /* 128 */
constexpr int CH = KDA_CHUNK;   /* 16 */
static_assert(CH == 16 && D == 128, "the tiling below assumes 16-token chunks and 128-wide heads");

/* Per (chunk, head) record written by the intra kernel, read by the
 * recurrent one, laid out so that the recurrent kernel copies it into
 * shared memory as is (bulk copies) and its ldmatrix loads are free of bank
 * conflicts: 16-byte chunk c of row r is stored at chunk c ^ swz(r).
 * BF16 unless noted; offsets in bytes. */
constexpr int REC_WK = 0;                   /* Wk   [16 t][128 k], swz = t & 7 */
constexpr int REC_QT = REC_WK + CH * D * 2; /* Qt   [16 t][128 k], swz = t & 7 */
constexpr int REC_KH = REC_QT + CH * D * 2; /* Kh^T [128 k][16 t], swz = (k >> 2) & 1 */
constexpr int REC_P = REC_KH + CH * D * 2;  /* P    [16 t][16 s], zero above the diagonal, swz = (t >> 2) & 1 */
constexpr int REC_G = REC_P + CH * CH * 2;  /* Gamma_last, FP32, permuted [4 t4][16 nt][2] = G[8 nt + 2 t4 + e] */
constexpr int G_LD = 36;                    /* floats per t4 row: 144 bytes keep 4 rows in distinct banks */
constexpr int REC_U = REC_G + 4 * G_LD * 4; /* U^T  [128 v][16 t], swz = (v >> 2) & 1; last: sliced by rows */
constexpr int REC_BYTES = REC_U + CH * D * 2; /* 17472 */
static_assert(REC_BYTES % 16 == 0 && REC_U % 16 == 0, "bulk copies move 16-byte multiples");

__host__ __device__ constexpr int swz_wide(int row, int chunk) /* rows of 16 chunks */
{
	return chunk ^ (row & 7);
}

__host__ __device__ constexpr int swz_narrow(int row, int chunk) /* rows of 2 chunks */
{
	return chunk ^ ((row >> 2) & 1);
}

/* Shared-memory stage of the recurrent kernel: the record up to U, then the
 * CTA's slice of U^T rows; same layout (and swizzle) as in global memory. */
__host__ __device__ constexpr int stage_bytes(int warps)
{
	return REC_U + 16 * warps * CH * 2;
}

/* The split record (K3_KDA_RECUR=split; docs/KERNELS.md "KDA prefill, round 05w"): the intra
 * kernel reads no v and makes neither U nor Wk. It writes Kt = Gamma k (scaled, normalized) in
 * Wk's place and layout, Qt, Kh^T, P and Gamma_last as before, and in U's place TB = T diag(beta)
 * [16 t][16 s] as a hi and a lo BF16 matrix (hi = bf16(x), lo = bf16(x - hi)), each in P's
 * layout. The recurrent CTA stages the record, then its slice of v; it makes -Wk = -TB Kt in Kt's
 * place (split_make_wk()) and U^T = V^T TB^T at the start of each step (recur_chunk<true>()). */
constexpr int REC_TB = REC_U;                         /* TB hi, then TB lo at + TB_LO */
constexpr int TB_LO = CH * CH * 2;                    /* 512 */
constexpr int REC_SPLIT_BYTES = REC_TB + 2 * TB_LO;   /* 14400 */
static_assert(REC_SPLIT_BYTES % 16 == 0 && REC_SPLIT_BYTES <= REC_BYTES, "one bulk copy; the same record stride");

/* The split stage's v rows: token s's 16 x warps channels (32 x warps bytes) at REC_SPLIT_BYTES +
 * s x pitch; the 16 bytes of padding put the 8 rows of an ldmatrix in distinct bank groups. */
__host__ __device__ constexpr int split_v_pitch(int warps)
{
	return 32 * warps + 16;
}

__host__ __device__ constexpr int split_stage_bytes(int warps)
{
	return REC_SPLIT_BYTES + CH * split_v_pitch(warps);
}

/* Gamma_last of channel j in a record's permuted FP32 layout (REC_G; floats). */
__host__ __device__ constexpr int g_index(int j)
{
	return ((j >> 1) & 3) * G_LD + 2 * (j >> 3) + (j & 1);
}

/* The pair kernel's stage: chunk a's staged record (stage_bytes()), chunk b's, then X and Y, each
 * [16 t][16 s] BF16 in P's layout (swizzle (t >> 2) & 1), which the state warps read as they read
 * P (kda_p_off()). */
constexpr int CROSS_X = 0;
constexpr int CROSS_Y = CH * CH * 2;
constexpr int CROSS_BYTES = 2 * CH * CH * 2;
constexpr int PAIR_STAGES = 2; /* pairs in flight (4 chunk records) */

__host__ __device__ constexpr int pair_stage_bytes(int warps)
{
	return 2 * stage_bytes(warps) + CROSS_BYTES;
}

/* The ldmatrix row address (bytes from REC_P) of lane mi x 8 + mr for the B fragments B(k = s,
 * n = t) = P[t][s] of a [16 t][16 s] matrix in P's layout (P, X, Y): matrices (t 0-7, s 0-7),
 * (t 0-7, s 8-15), (t 8-15, s 0-7), (t 8-15, s 8-15). */
__host__ __device__ constexpr int kda_p_off(int mi, int mr)
{
	return (8 * (mi >> 1) + mr) * CH * 2 + swz_narrow(8 * (mi >> 1) + mr, mi & 1) * 16;
}

/* The cross warp's A fragment of rows t, columns [16 kk, 16 kk + 16) of a [16 t][128 j] matrix in
 * Wk's layout (bytes from REC_WK or REC_QT): matrices (t 0-7, j lo), (t 8-15, j lo), (t 0-7, j hi),
 * (t 8-15, j hi). */
__host__ __device__ constexpr int kda_cross_a_off(int lane, int kk)
{
	return (8 * ((lane >> 3) & 1) + (lane & 7)) * D * 2 +
	       swz_wide(8 * ((lane >> 3) & 1) + (lane & 7), 2 * kk + ((lane >> 3) >> 1)) * 16;
}

/* Its B fragments B(k = j, n = s) = Kh^T[j][s], rows j in [16 kk, 16 kk + 16), by the transposing
 * load (bytes from REC_KH): matrices (j lo, s 0-7), (j hi, s 0-7), (j lo, s 8-15), (j hi, s 8-15). */
__host__ __device__ constexpr int kda_cross_kh_off(int lane, int kk)
{
	return (16 * kk + 8 * ((lane >> 3) & 1) + (lane & 7)) * CH * 2 +
	       swz_narrow(16 * kk + 8 * ((lane >> 3) & 1) + (lane & 7), (lane >> 3) >> 1) * 16;
}

/* Where accumulator pair (c[2h], c[2h + 1]) of n-tile nn (row t = lane / 4 + 8 h, columns s =
 * 8 nn + 2 (lane % 4) + 0, 1) goes in P's layout (bytes from X or Y). */
__host__ __device__ constexpr int kda_cross_xy_off(int lane, int nn, int h)
{
	return ((lane >> 2) + 8 * h) * CH * 2 + swz_narrow((lane >> 2) + 8 * h, nn) * 16 + 4 * (lane & 3);
}

/* The cross warp's rescaling walks 16-byte words u = 0 .. 255 of a [16 t][128 j] matrix in Wk's
 * layout: word u's bytes from the matrix's start and the first of its 8 channels. */
__host__ __device__ constexpr int kda_wide_word_off(int u)
{
	return (u >> 4) * D * 2 + (u & 15) * 16;
}

__host__ __device__ constexpr int kda_wide_word_chan(int u)
{
	return 8 * ((u & 15) ^ ((u >> 4) & 7));
}

/* ... and words u = 0 .. 255 of Kh^T [128 j][16 s] (word u at 16 u bytes): its row j, whose one
 * channel all 8 values share. */
__host__ __device__ constexpr int kda_kh_word_chan(int u)
{
	return u >> 1;
}

} // namespace

#endif
