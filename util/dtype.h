#ifndef K3_UTIL_DTYPE_H
#define K3_UTIL_DTYPE_H

#include <stdint.h>

/* Number formats. Block-scaled formats (MX) carry one E8M0 scale byte per 32 elements, so their
 * storage is 0.5 + 1/32 bytes (MXFP4) or 1 + 1/32 bytes (MXFP8) per element. */
enum dtype {
	DT_BF16,
	DT_FP16,
	DT_FP32,
	DT_FP8,   /* E4M3 */
	DT_MXFP8, /* E4M3 elements, group 32, E8M0 scale */
	DT_MXFP4, /* E2M1 elements, group 32, E8M0 scale */
	DT_COUNT
};

enum { DTYPE_MX_GROUP = 32 };

const char *dtype_name(enum dtype t);
/* 0, or -EINVAL for an unknown spelling. Spellings: bf16 fp16 fp32 fp8 mxfp8 mxfp4. */
int dtype_parse(const char *s, enum dtype *out);
/* A comma-separated list of the spellings, for messages. */
const char *dtype_spellings(void);
/* Storage of n elements in bytes, scales included (rounded up to whole groups). */
int64_t dtype_bytes(enum dtype t, int64_t n_elements);
/* Average storage per element in bytes (scales included), for rates. */
double dtype_bytes_per_element(enum dtype t);

#endif
