/* SPDX-License-Identifier: MIT */
/* The host-run kernel checks' failure count and EXPECT(cond, printf-args): counts a failed
 * condition, prints the first 10 (test-k3-formats, test-kda-layout, test-kda-step). */
#ifndef K3_TESTS_KERNELS_HOST_EXPECT_H
#define K3_TESTS_KERNELS_HOST_EXPECT_H

#include <stdio.h>

static int failures = 0;

#define EXPECT(cond, ...)                                    \
	do {                                                 \
		if (!(cond)) {                               \
			if (failures++ < 10)                 \
				fprintf(stderr, __VA_ARGS__); \
		}                                            \
	} while (0)

#endif
