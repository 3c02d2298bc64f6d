/* Fuzz target for calib/'s parsers: kernel-name rule files (and building ops from them), CSVs
 * of measurements (then merged over runs), and --run arguments. Any input must give 0 or a clean
 * error, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calib/points.h"
#include "calib/rules.h"
#include "calib/runs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct err e;
	struct calib_rules r;
	if (calib_rules_load_string(&r, "fuzz.yaml", text, size, &e) == 0) {
		const char *ranges[] = {
		    "k3sim op=gemm m=64 n=7168 k=7168 dtype=bf16 b=8 h=96 t=4096 bytes=65536",
		    "layer heads=128 ctx=8192 batch=4 ranks=8"};
		struct calib_rule_ctx c = {
		    .grid = {132, 8, 1}, .block = {128, 1, 1}, .bytes = 1 << 20, .nvtx = ranges, .n_nvtx = 2};
		static const char *const names[] = {"nvjet_sm90_tst_128x128", "chunk_kda_fwd_kernel",
		                                    "[CUDA memcpy Device-to-Device]",
		                                    "ncclDevKernel_AllReduce_Sum", ""};
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
			int idx = calib_rules_find(&r, names[i]);
			struct op op;
			char spec[256];
			if (idx >= 0)
				(void)calib_rule_build(&r, idx, &c, &op, spec, sizeof spec, &e);
		}
		for (int i = 0; i < r.n; i++)
			(void)calib_glob(r.rule[i].pattern, text);
		calib_rules_release(&r);
	}
	struct calib_points pts, merged;
	calib_points_init(&pts);
	if (calib_points_add_csv_string(&pts, "fuzz.csv", text, size, &e) == 0 &&
	    calib_points_add_csv_string(&pts, "fuzz2.csv", text, size, &e) == 0) {
		(void)calib_points_by_op(&merged, &pts, NULL, &e);
		calib_points_release(&merged);
	}
	calib_points_release(&pts);
	struct calib_inputs in;
	calib_inputs_init(&in);
	(void)calib_inputs_add_run(&in, text, &e);
	calib_inputs_release(&in);
	free(text);
	return 0;
}
