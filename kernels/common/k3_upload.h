/* SPDX-License-Identifier: MIT */
/*
 * Host-to-device copies that the kernels launched after them on a stream are sure to see.
 *
 * cudaMemcpy() from pageable host memory runs on the legacy default stream and may return before
 * its DMA has reached device memory ("the DMA to final destination may not have completed", CUDA
 * Runtime API, API synchronization behavior). A stream created with cudaStreamNonBlocking does not
 * wait for the legacy stream, so a kernel launched on it right after such a copy can read what the
 * memory held before: k3-bench's MLA value GEMM at m = 65536 read stale row indices (256 KB, the
 * last upload before its launch) and ended in an illegal address on the H100 after rows that
 * left random BF16 in that memory, memcheck-clean (the sanitizer's slow launches let the copy
 * land) and clean alone (the memory held earlier, smaller index arrays there; 2026-12-06, round
 * 06h). So the copy goes on the stream that will read it, and the host waits for it: the source
 * may be freed on return.
 */
#ifndef K3_KERNELS_COMMON_K3_UPLOAD_H
#define K3_KERNELS_COMMON_K3_UPLOAD_H

#include <stddef.h>

#include <cuda_runtime_api.h>

/* Copies `bytes` bytes from host `src` (pageable or pinned) to device `dst` on `stream`, then
 * waits for `stream` (everything enqueued on it before, too). Kernels enqueued on `stream`
 * afterwards, or on any stream after this returns, read the copied bytes. cudaSuccess or the
 * CUDA error of the copy or the wait. */
static inline cudaError_t k3_upload(void *dst, const void *src, size_t bytes, cudaStream_t stream)
{
	if (bytes == 0)
		return cudaSuccess;
	cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream);
	if (e != cudaSuccess)
		return e;
	return cudaStreamSynchronize(stream);
}

#endif
