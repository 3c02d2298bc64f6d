/* Fuzz target for sweep specs (the `sweep:` key of a scenario, reports/sweep_spec.c) and, for
 * inputs that load, the points they imply. Any input must give 0 or a clean error, never a crash. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sweep/sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct sweep_spec *sp = malloc(sizeof *sp);
	if (!text || !sp)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	struct err e;
	if (sweep_spec_load_yaml(sp, "fuzz.yaml", text, size, &e) == 0) {
		/* Build a few points (first, last, and one in between): layouts may be invalid, never UB. */
		struct sweep_point pt;
		int64_t idx[3] = {0, sp->points - 1, sp->points / 2};
		for (int i = 0; i < 3; i++)
			(void)sweep_spec_point(sp, idx[i], &pt, &e);
		sweep_spec_release(sp);
	}
out:
	free(sp);
	free(text);
	return 0;
}
