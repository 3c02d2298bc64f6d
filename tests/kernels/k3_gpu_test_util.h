/* SPDX-License-Identifier: MIT */
/*
 * Helpers of the issue-17 GPU tests (cmocka, suite 'gpu'): checked CUDA
 * calls, device buffers poisoned before each run, BF16 tensors whose host
 * copy holds exactly the values on the device, and the relative-error check.
 * Include after <cmocka.h>.
 */
#ifndef K3_TESTS_K3_GPU_TEST_UTIL_H
#define K3_TESTS_K3_GPU_TEST_UTIL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "kda_test_util.h"
#include "kernels/common/k3_quant.h"

#define CUDA_OK(call)                                                                       \
	do {                                                                                \
		cudaError_t e_ = (call);                                                    \
		if (e_ != cudaSuccess)                                                      \
			fail_msg("%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
	} while (0)

/* A kernel entry point returned rc: 0 or fail with the CUDA error behind it. */
#define KERNEL_OK(call)                                                                    \
	do {                                                                               \
		int r_ = (call);                                                           \
		if (r_ != 0)                                                               \
			fail_msg("%s:%d: %s returned %d (%s)", __FILE__, __LINE__, #call, r_,  \
				 cudaGetErrorString(cudaGetLastError()));                  \
		CUDA_OK(cudaDeviceSynchronize());                                          \
	} while (0)

static inline void *gt_xmalloc(size_t n)
{
	void *p = calloc(n ? n : 1, 1);
	assert_non_null(p);
	return p;
}

static inline double *gt_dnew(size_t n)
{
	return (double *)gt_xmalloc(n * sizeof(double));
}

/* Device buffer of `bytes`, filled with 0xff (NaN in BF16, FP32 and E4M3). */
static inline void *gt_dev_poisoned(size_t bytes)
{
	void *d = NULL;
	CUDA_OK(cudaMalloc(&d, bytes ? bytes : 16));
	CUDA_OK(cudaMemset(d, 0xff, bytes ? bytes : 16));
	return d;
}

static inline void *gt_dev_copy(const void *h, size_t bytes)
{
	void *d = NULL;
	CUDA_OK(cudaMalloc(&d, bytes ? bytes : 16));
	if (bytes)
		CUDA_OK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
	return d;
}

/* cudaFree of a pointer held as const (the args structs hold inputs as const). */
static inline void gt_free(const void *p)
{
	void *q;
	memcpy(&q, &p, sizeof q);
	cudaFree(q);
}

static inline void gt_poison(void *d, size_t bytes)
{
	CUDA_OK(cudaMemset(d, 0xff, bytes));
}

/* n random values in [lo, hi) rounded to BF16: host doubles (exact) and the device copy. */
struct gt_bf16 {
	size_t n;
	double *h;
	uint16_t *d;
};

static inline struct gt_bf16 gt_bf16_rand(struct test_rng *r, size_t n, double lo, double hi)
{
	struct gt_bf16 t = { .n = n, .h = gt_dnew(n) };
	uint16_t *tmp = (uint16_t *)gt_xmalloc(n * 2);
	for (size_t i = 0; i < n; i++) {
		tmp[i] = k3_bf16_from_double(test_rng_uniform(r, lo, hi));
		t.h[i] = k3_double_from_bf16(tmp[i]);
	}
	t.d = (uint16_t *)gt_dev_copy(tmp, n * 2);
	free(tmp);
	return t;
}

/* A poisoned device BF16 output of n elements (host side filled by gt_bf16_read). */
static inline struct gt_bf16 gt_bf16_out(size_t n)
{
	struct gt_bf16 t = { .n = n, .h = gt_dnew(n) };
	t.d = (uint16_t *)gt_dev_poisoned(n * 2);
	return t;
}

static inline void gt_bf16_read(struct gt_bf16 *t)
{
	uint16_t *tmp = (uint16_t *)gt_xmalloc(t->n * 2);
	CUDA_OK(cudaMemcpy(tmp, t->d, t->n * 2, cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < t->n; i++)
		t->h[i] = k3_double_from_bf16(tmp[i]);
	free(tmp);
}

static inline void gt_bf16_release(struct gt_bf16 *t)
{
	free(t->h);
	cudaFree(t->d);
	t->h = NULL, t->d = NULL;
}

/* FP32 device array read back as doubles. */
static inline void gt_f32_read(const float *d, double *h, size_t n)
{
	float *tmp = (float *)gt_xmalloc(n * sizeof(float));
	CUDA_OK(cudaMemcpy(tmp, d, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (size_t i = 0; i < n; i++)
		h[i] = tmp[i];
	free(tmp);
}

/* ||got - ref|| / ||ref|| below tol (NaN fails), printed either way. */
static inline double gt_check(const char *what, const double *got, const double *ref, size_t n, double tol)
{
	const double e = test_rel_err(got, ref, n);
	print_message("  %-52s rel err %.3e (tol %.1e)\n", what, e, tol);
	if (!(e < tol))
		fail_msg("%s: relative error %g over %g", what, e, tol);
	return e;
}

/* max |got - ref| below tol, where both are finite or both the same infinity. */
static inline void gt_check_abs(const char *what, const double *got, const double *ref, size_t n, double tol)
{
	double worst = 0.0;
	for (size_t i = 0; i < n; i++) {
		if (isinf(ref[i]) && got[i] == ref[i])
			continue;
		const double d = fabs(got[i] - ref[i]);
		if (!(d <= worst))
			worst = isnan(d) ? INFINITY : d;
	}
	print_message("  %-52s max abs err %.3e (tol %.1e)\n", what, worst, tol);
	if (!(worst < tol))
		fail_msg("%s: max abs error %g over %g", what, worst, tol);
}

/* 77 (skip) unless a CUDA device is present; sets the cmocka filter from `env`. */
static inline int gt_device_or_skip(const char *env)
{
	int n = 0;
	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 1) {
		fprintf(stderr, "no CUDA device: skipping\n");
		return 77;
	}
	const char *f = getenv(env);
	if (f)
		cmocka_set_test_filter(f);
	return 0;
}

#endif
