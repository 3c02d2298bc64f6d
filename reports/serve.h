#ifndef K3_REPORTS_SERVE_H
#define K3_REPORTS_SERVE_H

/* Renders a serving simulation (serve/serve.h): the summary as JSON (`k3sim serve --json` and
 * results.json), one row per request as CSV or SQLite, the requests and steps as a Perfetto
 * timeline, and a report directory in the style of `k3sim compare` (report.md, results.json,
 * requests.csv, charts/ by gnuplot). The request columns are one table (serve_columns) shared by
 * the CSV and the SQLite writers.
 *
 * Files are written atomically through util/outfile.h by the callers of the FILE * writers and by
 * report_serve_write (a directory k3sim made is refreshed; elsewhere existing files take force).
 * Nothing here prints to the terminal. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "reports/chart.h"
#include "serve/serve.h"

struct serve_report_in {
	const struct scenario *s;
	const struct model *m;
	const struct hw *hw;
	const struct serve_config *c;
	const struct serve_workload *w;
	const struct serve_result *r;
};

/* The summary as one JSON object (keys: requests, ttft_s {mean, p50, p90, p95, p99, max}, tpot_s,
 * itl_s, e2e_s, queue_s, throughput_*, goodput_requests_per_s, prefix_hit_rate, hbm, cache, ...;
 * docs/SERVING.md lists them). Returns 0 or -EIO. */
int report_serve_json(FILE *f, const struct serve_report_in *in);

/* One row per request with a header (serve_columns). */
int report_serve_csv(FILE *f, const struct serve_report_in *in);

/* An SQLite database at `path` (a new, empty file: an outfile's temporary): tables requests
 * (serve_columns), samples (queue lengths over time) and summary (key, value). */
int report_serve_sqlite(const char *path, const struct serve_report_in *in, struct err *e);

/* Chrome/Perfetto trace JSON: a track per replica with its steps (decode requests and prefill
 * tokens of the busiest DP group), an async slice per request for each phase (queued, prefill,
 * decode; the first max_requests requests), and counters of queue lengths and HBM in use. */
int report_serve_perfetto(FILE *f, const struct serve_report_in *in, int64_t max_requests);

struct serve_report_opts {
	const char *dir;           /* created when missing */
	bool force;
	const char *const *inputs; /* never overwritten */
	size_t n_inputs;
	const char *gnuplot;       /* NULL or "": no charts */
	const char *version, *command;
};

struct serve_report_files {
	char md[600], json[600], csv[600], charts_dir[600];
	int n_charts;
	struct chart_outcome charts;
};

/* DIR/report.md, DIR/results.json, DIR/requests.csv, DIR/charts/ (queues, throughput and HBM over
 * time, latency distributions). */
int report_serve_write(const struct serve_report_in *in, const struct serve_report_opts *o,
		       struct serve_report_files *out, struct err *e);

#endif
