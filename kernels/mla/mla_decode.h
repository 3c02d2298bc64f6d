/* SPDX-License-Identifier: MIT */
/*
 * Absorbed MLA decode (CUDA) over a paged latent cache, BF16 or FP8
 * (FlashMLA's 656-byte layout), 1..128 heads, 1..8 query tokens per request
 * (causal among them), dense or sparse (DSA top-k indices): see mla_common.h
 * for the function and layouts, mla_ref_decode() for the same in float64.
 *
 * Flash-decoding: the context of each request is cut into splits, each
 * split's CTAs (one per block of 16 or 64 query rows, a row being a (query
 * token, head) pair) stream the split's tokens 32 at a time through shared
 * memory (bulk copies, one per token, so pages and sparse indices cost
 * nothing extra; the FP8 default copies a whole dense tile at once), run QK^T and PV on BF16 tensor cores (FP8 cache up to 32
 * rows: FP16, the E4M3 converted in registers) with an online softmax, and
 * write a partial output and log-sum-exp; a combine kernel merges the
 * splits. With one split the first kernel writes the output. The FP8
 * default up to 32 rows (mla_fp8s_kernel) runs 2..8 splits of a row block
 * as one thread-block cluster instead, merging them through distributed
 * shared memory: no workspace and no combine kernel (mla_decode_cluster());
 * where whole splits fill less than 80 % of one wave of CTAs it plans the
 * splits of two waves and the last split of a row block to finish merges
 * the partials (mla_decode_last(): a counter per row block in the workspace).
 * K3_MLA_FP8_KERNEL=stage|reg|pipe|split and K3_MLA_FP8_CVT=ic|ii|cc|ci pick
 * the FP8 kernel and its conversions, K3_MLA_FP8S_COMBINE=kernel the split
 * kernel's previous plan (partials and the combine kernel), =last the
 * last-split merge for every split count of 2..8, =onewave the plan without
 * two waves, K3_MLA_FP8S_WAVES=1..8 the waves, K3_MLA_FP8S_LAST_RESET=self
 * counters left zero by every launch instead of a memset before each (the
 * caller zeroes the workspace once and writes nothing into it). Where the
 * split kernel's partials go through the combine kernel, that kernel is a
 * programmatic dependent launch on the same stream (K3_MLA_FP8S_PDL=off: a
 * plain launch). K3_MLA_FP8S_FRAME=steady and K3_MLA_FP8S_SKEW=N are measured
 * forms that were no faster (not the default); K3_MLA_FP8S_DIAG=mem|compute
 * time the split kernel's copy pipeline or tile loop alone (measurement only:
 * the outputs are not the decode's); mla_decode.cu.
 * Read at every call (so that a bench can switch them between rows);
 * unset: split with cc up to 32 query rows, stage above.
 */
#ifndef K3_KERNELS_MLA_DECODE_H
#define K3_KERNELS_MLA_DECODE_H

#include <cuda_runtime_api.h>
#include <stddef.h>
#include <stdint.h>

#include "mla_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* All pointers are device memory, 16-byte aligned; BF16 as uint16_t bits. */
struct mla_decode_args {
	int batch;                  /* B >= 1 */
	int heads;                  /* H, 1..MLA_MAX_HEADS */
	int qtokens;                /* t, 1..MLA_MAX_QTOKENS, t H <= 2^23 (sparse mode: 1) */
	enum mla_kv kv;             /* MLA_KV_BF16 or MLA_KV_FP8 */
	float scale;                /* softmax scale (K3: 192^-1/2) */
	int max_seqlen;             /* >= every seqlens[b] (host-side bound; sizes the splits) */
	const uint16_t *q;          /* [B][t][H][576] */
	const void *cache;          /* pages [n][64][576] BF16, or [n][64][656] bytes */
	const int32_t *block_table; /* [B][max_pages], entries < pages in the pool */
	int max_pages;              /* row stride of block_table, >= ceil(max_seqlen / 64) */
	const int32_t *seqlens;     /* [B], t <= L_b <= max_seqlen */
	const int32_t *indices;     /* NULL, or sparse: [B][topk] positions, -1 = none */
	int topk;                   /* sparse: entries per request, >= 1 */
	uint16_t *out;              /* [B][t][H][512] */
	float *lse;                 /* [B][t][H] natural log (-inf: nothing visible), or NULL */
	void *workspace;            /* mla_decode_workspace_bytes(), or NULL when that is 0 */
	size_t workspace_bytes;     /* bytes at workspace */
	/* 1: the FP8 split kernel (up to 32 query rows) may start under the tail of the kernel
	 * before it on the stream (a programmatic dependent launch): its CTAs read seqlens, the
	 * block table and the cached prefix's rows (positions below L - t) and issue their first
	 * stage copies before that kernel is done, so the caller promises that it writes none of
	 * these (it may write q, the t new rows, indices, out, lse, the workspace); every other read
	 * and every write waits for it. 0: a plain launch. */
	int overlap_prev;
};

/* Workspace the call needs for these shapes on the current device (split
 * partials: 2052 bytes per row and split when there is more than one split
 * and no cluster merges them; the last-split merge: and 4 bytes per request
 * and block of 16 rows).
 * Returns 0 and sets *bytes, -EINVAL for bad shapes, -EIO when the device
 * cannot be queried. */
int mla_decode_workspace_bytes(const struct mla_decode_args *a, size_t *bytes);

/* Splits the call will use (>= 1), or a negative error as above. */
int mla_decode_splits(const struct mla_decode_args *a);

/* Cluster size (the splits) when the splits are merged inside one thread-block
 * cluster, 0 when not (one split, or partials and the combine kernel), or a
 * negative error as above. */
int mla_decode_cluster(const struct mla_decode_args *a);

/* Splits when each split writes its partials and the last split of a row block
 * to finish merges them (K3_MLA_FP8S_COMBINE=last: a counter per row block in
 * the workspace, no combine kernel, no cluster), 0 when not, or a negative
 * error as above. */
int mla_decode_last(const struct mla_decode_args *a);

/* Measurement hook: with `buf` (device memory, 8 words of 8 bytes for every
 * CTA of the FP8 split kernel's grid: row blocks x splits x batch) the FP8 split
 * kernel records %globaltimer at its entry (word 0), tile 0's arrival (1), the
 * tile loop's end (2), the epilogue (3), the merge's end (4), the producer's
 * first copies (5), and its SM (word 7, bit 16: merged as the last split);
 * NULL turns it off. Not for concurrent calls. */
void mla_decode_set_trace(void *buf);

/* Clusters of `size` (2..8) CTAs of the FP8 split kernel that fit the device at
 * once (cudaOccupancyMaxActiveClusters), 0 when none or `size` is out of range:
 * the plan merges splits in clusters only where every row block's cluster fits
 * (unless K3_MLA_FP8S_COMBINE=cluster). */
int mla_decode_max_clusters(int size);

/* Enqueues the decode on `stream` (capturable in a CUDA graph after one call
 * outside capture has configured the kernels). Returns 0, -EINVAL (nothing
 * launched: bad shapes, misaligned pointers, workspace too small), or -EIO
 * when a launch failed (the CUDA error stays readable). */
int mla_decode(const struct mla_decode_args *a, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
