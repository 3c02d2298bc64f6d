/* SPDX-License-Identifier: MIT */
/*
 * Float64 reference of Block AttnRes fused with the pre-norm (see
 * attnres_common.h). Plain C; nothing is printed. Returns 0, -EINVAL or
 * -ENOMEM.
 */
#ifndef K3_KERNELS_ATTNRES_REF_H
#define K3_KERNELS_ATTNRES_REF_H

#include "attnres_common.h"

struct attnres_ref {
	int tokens, dim, n_sources;
	const double *src[ATTNRES_MAX_SOURCES]; /* [T][dim] each; the last one is the partial sum */
	const double *delta;                    /* [T][dim] or NULL */
	double *partial_out;                    /* [T][dim]: the updated partial (with delta), or NULL */
	const double *query;                    /* [dim] */
	const double *key_norm_w;               /* [dim] or NULL */
	const double *norm_w;                   /* [dim] */
	double eps;
	double *alpha;                          /* [T][n] softmax weights, or NULL */
	double *h;                              /* [T][dim] mixed input, or NULL */
	double *out;                            /* [T][dim] */
};

int attnres_ref(const struct attnres_ref *p);

#endif
