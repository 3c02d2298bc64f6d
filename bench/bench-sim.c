/* bench-sim: in-process cost of evaluating scenarios.
 * usage: bench-sim [SCENARIO] [ITERATIONS]
 * Prints the median time of one sim_run() over ITERATIONS runs (after warm-up), and the rate of a
 * 10^5-point grid of decode steps (batch x context x TP) evaluated the way a sweep does. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim.h"
#include "sim/step.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "default";
	int iters = argc > 2 ? atoi(argv[2]) : 2000;
	if (iters < 1)
		iters = 1;
	struct err e;
	struct scenario s;
	struct model m;
	struct hw hw;
	if (scenario_load(&s, name, &e) < 0 || model_load(&m, s.model, &e) < 0 || hw_load(&hw, s.hw, &e) < 0) {
		fprintf(stderr, "bench-sim: %s\n", e.msg);
		return 1;
	}
	struct sim_result *r = malloc(sizeof *r);
	double *t = malloc((size_t)iters * sizeof *t);
	if (!r || !t)
		return 1;
	for (int i = 0; i < 20; i++)
		sim_run(&s, &m, &hw, r, &e);
	for (int i = 0; i < iters; i++) {
		double t0 = now_s();
		if (sim_run(&s, &m, &hw, r, &e) < 0) {
			fprintf(stderr, "bench-sim: %s\n", e.msg);
			return 1;
		}
		t[i] = now_s() - t0;
	}
	qsort(t, (size_t)iters, sizeof *t, cmp_double);
	printf("scenario %s: sim_run median %.1f us, p90 %.1f us over %d runs (%lld prefill chunks)\n", name,
	       t[iters / 2] * 1e6, t[iters * 9 / 10] * 1e6, iters, (long long)r->prefill_chunks);

	/* A 10^5-point grid of decode steps: 50 batches x 500 contexts x 4 TP sizes. */
	static const int64_t tps[] = {1, 2, 4, 8};
	double t0 = now_s(), sink = 0;
	long points = 0;
	for (int ti = 0; ti < 4; ti++) {
		struct scenario g = s;
		g.tp = tps[ti];
		g.dp = g.gpus / g.tp;
		g.cp = 1;
		for (int64_t b = 1; b <= 50; b++)
			for (int64_t c = 0; c < 500; c++) {
				struct phase p;
				sim_phase_init(&g, PHASE_DECODE, b * 8, 1, 4096 + c * 2048, &p);
				double step_s;
				if (sim_step(&g, &m, &hw, &p, NULL, 1, &step_s) < 0) {
					fprintf(stderr, "bench-sim: sim_step failed\n");
					return 1;
				}
				sink += step_s;
				points++;
			}
	}
	double dt = now_s() - t0;
	printf("grid: %ld decode-step points in %.3f s (%.0f points/s, one core) [checksum %.6g]\n", points, dt,
	       (double)points / dt, sink);

	/* One decode step's timeline, two-batch overlap at 256 requests: every layer of both EP ranks
	 * (what --timeline writes), and the extrapolated one sim_step lays out. */
	int64_t bytes = tl_storage_bytes(SIM_TL_EVENTS, SIM_TL_DEPS);
	void *mem = malloc((size_t)bytes);
	if (!mem)
		return 1;
	struct timeline tl;
	tl_init(&tl, mem, SIM_TL_EVENTS, SIM_TL_DEPS);
	struct scenario g = s;
	g.overlap = OVERLAP_TBO;
	g.moe_imbalance = g.moe_imbalance > 1 ? g.moe_imbalance : 1.1;
	struct phase p;
	sim_phase_init(&g, PHASE_DECODE, 256, 1, g.prompt_tokens, &p);
	static const char *const what[2] = {"every layer, both EP ranks", "extrapolated, busiest rank"};
	for (int k = 0; k < 2; k++) {
		struct sim_step_opts o = {.every_layer = k == 0, .mean_rank = k == 0};
		struct sim_step_timing tm;
		int n = k == 0 ? 200 : 2000;
		double *ts = malloc((size_t)n * sizeof *ts);
		if (!ts)
			return 1;
		for (int i = 0; i < n; i++) {
			double a = now_s();
			if (sim_step_timeline(&g, &m, &hw, &p, &o, &tl, NULL, 1, &tm) < 0) {
				fprintf(stderr, "bench-sim: timeline failed\n");
				return 1;
			}
			ts[i] = now_s() - a;
		}
		qsort(ts, (size_t)n, sizeof *ts, cmp_double);
		printf("timeline: %s decode step (%d GPUs, batch 256, tbo): median %.1f us, p90 %.1f us, %d events, "
		       "%d streams [step %.3f ms]\n",
		       name, (int)g.gpus, ts[n / 2] * 1e6, ts[n * 9 / 10] * 1e6, tl.n_events, tl.n_streams, tm.time_s * 1e3);
		printf("  (%s)\n", what[k]);
		free(ts);
	}
	free(mem);
	free(t);
	free(r);
	return 0;
}
