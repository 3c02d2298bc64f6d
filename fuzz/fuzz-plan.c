/* Fuzz target for plan/'s parsers of flag values (--gpus ranges and lists, integer lists,
 * durations) and the Pareto front on the numbers they give. Any input must give 0 or a clean
 * error, never a crash or undefined behaviour; a parsed list is ascending and distinct, a duration
 * positive and finite, a front non-dominated and ascending in x. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	struct err e;
	int64_t v[PLAN_MAX_VALUES];
	int n = 0;
	double s;
	struct plan_point pts[PLAN_MAX_VALUES];
	int64_t idx[PLAN_MAX_VALUES];
	int np = 0;
	if (plan_parse_gpus(text, v, &n, &e) == 0) {
		for (int i = 1; i < n; i++)
			if (v[i] <= v[i - 1])
				abort();
		for (int i = 0; i < n; i++)
			pts[np++] = (struct plan_point){.ref = i, .x_s = (double)v[i], .y = (double)(v[i] % 7)};
	}
	if (plan_parse_ints("--fuzz", text, v, &n, &e) == 0)
		for (int i = 0; i < n; i++)
			if (v[i] < 1 || (i && v[i] <= v[i - 1]))
				abort();
	if (plan_parse_seconds("--fuzz", text, &s, &e) == 0 && !(s > 0 && isfinite(s)))
		abort();
	int64_t k = plan_pareto(pts, np, idx);
	for (int64_t i = 0; i < k; i++) {
		if (i && !(pts[idx[i]].x_s > pts[idx[i - 1]].x_s && pts[idx[i]].y > pts[idx[i - 1]].y))
			abort();
		for (int j = 0; j < np; j++)
			if (pts[j].x_s <= pts[idx[i]].x_s && pts[j].y >= pts[idx[i]].y &&
			    (pts[j].x_s < pts[idx[i]].x_s || pts[j].y > pts[idx[i]].y))
				abort();
	}
	free(text);
	return 0;
}
