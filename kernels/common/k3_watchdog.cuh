/* SPDX-License-Identifier: MIT */
/*
 * The kernels' wait watchdog (internal linkage): a wait on another CTA, kernel or copy that has
 * not ended within 10 s traps, so that the caller sees a launch error instead of a GPU that never
 * finishes (the KDA prefill's overlapped path once hung, 2026-12-01t; the wgmma GEMM's
 * pipeline waits). One clock read every (mask + 1) spins keeps it off the waits' fast path.
 */
#ifndef K3_KERNELS_COMMON_K3_WATCHDOG_CUH
#define K3_KERNELS_COMMON_K3_WATCHDOG_CUH

#include <stdint.h>

namespace {

constexpr uint64_t K3_WATCHDOG_NS = 10000000000ull;

/* Call at every spin of a wait (spins counting from 0, t0 the caller's): at spin 0 and every
 * (mask + 1)th after, %globaltimer against spin 0's; past K3_WATCHDOG_NS, trap. */
__device__ __forceinline__ void k3_trap_if_stuck(uint32_t spins, uint32_t mask, uint64_t &t0)
{
	if ((spins & mask) == 0) {
		uint64_t now;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
		if (spins == 0)
			t0 = now;
		else if (now - t0 > K3_WATCHDOG_NS)
			__trap();
	}
}

} // namespace

#endif
