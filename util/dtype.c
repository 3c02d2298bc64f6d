#include "util/dtype.h"

#include <errno.h>
#include <string.h>

static const char *const names[DT_COUNT] = {"bf16", "fp16", "fp32", "fp8", "mxfp8", "mxfp4"};

const char *dtype_name(enum dtype t)
{
	return (unsigned)t < DT_COUNT ? names[t] : "?";
}

int dtype_parse(const char *s, enum dtype *out)
{
	for (int i = 0; i < DT_COUNT; i++)
		if (strcmp(s, names[i]) == 0) {
			*out = (enum dtype)i;
			return 0;
		}
	if (strcmp(s, "e4m3") == 0 || strcmp(s, "fp8_e4m3") == 0) {
		*out = DT_FP8;
		return 0;
	}
	return -EINVAL;
}

const char *dtype_spellings(void)
{
	return "bf16, fp16, fp32, fp8, mxfp8, mxfp4";
}

int64_t dtype_bytes(enum dtype t, int64_t n)
{
	int64_t groups = (n + DTYPE_MX_GROUP - 1) / DTYPE_MX_GROUP;
	switch (t) {
	case DT_BF16:
	case DT_FP16:
		return 2 * n;
	case DT_FP32:
		return 4 * n;
	case DT_FP8:
		return n;
	case DT_MXFP8:
		return n + groups;
	case DT_MXFP4:
		return groups * (DTYPE_MX_GROUP / 2 + 1);
	default:
		return 0;
	}
}

double dtype_bytes_per_element(enum dtype t)
{
	switch (t) {
	case DT_BF16:
	case DT_FP16:
		return 2.0;
	case DT_FP32:
		return 4.0;
	case DT_FP8:
		return 1.0;
	case DT_MXFP8:
		return 1.0 + 1.0 / DTYPE_MX_GROUP;
	case DT_MXFP4:
		return 0.5 + 1.0 / DTYPE_MX_GROUP;
	default:
		return 0.0;
	}
}
