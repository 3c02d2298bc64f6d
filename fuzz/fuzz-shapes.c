/* Fuzz target for framework records (trace/analyze/shapes.h) and their derivation (calib/derive.h): the
 * input as a range text, parsed and, when it is a record, turned into an op by the default rules;
 * and the input as a derivation-rules file, applied to a fixed record. Any input must give 0 or
 * a clean error, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calib/derive.h"
#include "trace/analyze/shapes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct calib_derive def;
	static int loaded;
	struct err e = {0};
	if (!loaded) {
		if (calib_derive_load(&def, "default", &e) < 0)
			abort();
		loaded = 1;
	}
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct fw_call c;
	struct calib_derived r;
	int rc = fw_call_parse(text, &c, &e);
	if (rc < 0 && !e.msg[0])
		abort();
	if (rc == 1) {
		for (int i = 0; i < c.n_kept; i++)
			(void)fw_tensor_elements(&c.in[i]);
		struct calib_derive_opts o = {.dtype = DT_BF16, .ranks = (int64_t)(size % 9)};
		rc = calib_derive_op(&def, &c, &o, &r);
		if (rc < 0 && !r.why[0])
			abort();
	}
	struct calib_derive d;
	if (calib_derive_load_string(&d, "fuzz.yaml", text, size, &e) == 0) {
		static const char *const recs[] = {
		    "aten::mm, sizes = [[64, 128], [128, 32]]",
		    "aten::_grouped_mm, sizes = [[64, 128], [8, 128, 32], [8]], types = [c10::BFloat16, c10::BFloat16, int]",
		    "aten::scaled_dot_product_attention, sizes = [[1, 4, 8, 64], [1, 4, 8, 64], [1, 4, 8, 64]]",
		    "nccl:all_reduce, sizes = [[1024]]", "aten::cat, sizes = [[[1, 2], [3, 4]], []]"};
		for (size_t i = 0; i < sizeof recs / sizeof recs[0]; i++)
			if (fw_call_parse(recs[i], &c, &e) == 1)
				(void)calib_derive_op(&d, &c, NULL, &r);
		calib_derive_release(&d);
	}
	free(text);
	return 0;
}
