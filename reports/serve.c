/* A serving simulation rendered: JSON, CSV, SQLite, Perfetto and a Markdown report with charts
 * (reports/serve.h). */
#include "reports/serve.h"

#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reports/fmt.h"
#include "util/outfile.h"
#include "util/tracejson.h"
#include "util/jsonw.h"

#define GIB 1073741824.0

/* ---- the request columns: one table for CSV and SQLite ---- */

enum col_type { C_INT, C_REAL, C_BOOL };

struct column {
	const char *name;
	enum col_type type;
	size_t off;
};

#define COL(n, t) {#n, t, offsetof(struct serve_record, n)}
static const struct column serve_columns[] = {
	COL(arrival_s, C_REAL),     COL(admit_s, C_REAL),        COL(first_token_s, C_REAL),
	COL(done_s, C_REAL),        COL(ttft_s, C_REAL),         COL(tpot_s, C_REAL),
	COL(e2e_s, C_REAL),         COL(queue_s, C_REAL),        COL(prompt_tokens, C_INT),
	COL(output_tokens, C_INT),  COL(cached_tokens, C_INT),   COL(prefill_tokens, C_INT),
	COL(steps, C_INT),          COL(preemptions, C_INT),     COL(replica, C_INT),
	COL(dp_group, C_INT),          COL(prefill_replica, C_INT), COL(conversation, C_INT),
	COL(turn, C_INT),           COL(cpu_hit, C_BOOL),        COL(slo_met, C_BOOL),
};
#undef COL
enum { N_COLUMNS = sizeof serve_columns / sizeof serve_columns[0] };

static int64_t col_int(const struct serve_record *r, const struct column *c)
{
	const char *p = (const char *)r + c->off;
	if (c->type == C_BOOL)
		return *(const bool *)(const void *)p;
	if (strcmp(c->name, "preemptions") == 0 || strcmp(c->name, "replica") == 0 || strcmp(c->name, "dp_group") == 0 ||
	    strcmp(c->name, "prefill_replica") == 0 || strcmp(c->name, "turn") == 0)
		return *(const int32_t *)(const void *)p;
	return *(const int64_t *)(const void *)p;
}

static double col_real(const struct serve_record *r, const struct column *c)
{
	return *(const double *)(const void *)((const char *)r + c->off);
}

int report_serve_csv(FILE *f, const struct serve_report_in *in)
{
	fprintf(f, "id");
	for (int k = 0; k < N_COLUMNS; k++)
		fprintf(f, ",%s", serve_columns[k].name);
	fputc('\n', f);
	for (int64_t i = 0; i < in->r->n_rec; i++) {
		const struct serve_record *r = &in->r->rec[i];
		fprintf(f, "%lld", (long long)i);
		for (int k = 0; k < N_COLUMNS; k++) {
			const struct column *c = &serve_columns[k];
			if (c->type == C_REAL)
				fprintf(f, ",%.9g", col_real(r, c));
			else
				fprintf(f, ",%lld", (long long)col_int(r, c));
		}
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ---- */

/* The summary on one line, "key":value, numbers exact (util_json_double). */
static const struct jw_style serve_style = {.wrap_depth = -1, .colon = ":"};

static void jpct(struct jw *j, const char *key, const struct serve_pct *p)
{
	jw_begin_object(j, key);
	jw_f64(j, "mean", p->mean);
	jw_f64(j, "p50", p->p50);
	jw_f64(j, "p90", p->p90);
	jw_f64(j, "p95", p->p95);
	jw_f64(j, "p99", p->p99);
	jw_f64(j, "max", p->max);
	jw_i64(j, "n", p->n);
	jw_end_object(j);
}

int report_serve_json(FILE *f, const struct serve_report_in *in)
{
	const struct serve_summary *S = &in->r->sum;
	const struct serve_config *c = in->c;
	const struct scenario *s = in->s;
	struct jw j;
	jw_init_style(&j, f, &serve_style);
	jw_begin_object(&j, NULL);
	jw_str(&j, "scenario", s->name);
	jw_str(&j, "model", in->m->name);
	jw_str(&j, "hw", in->hw->name);
	jw_i64(&j, "gpus", c->pd ? c->prefill.replicas * c->prefill.gpus + c->decode.replicas * c->decode.gpus
			       : c->replicas * s->gpus);
	jw_str(&j, "workload", in->w->source);
	jw_str(&j, "arrivals", serve_arrival_name(c->arrival));
	jw_i64(&j, "seed", (int64_t)c->seed);
	jw_i64(&j, "requests", S->requests);
	jw_i64(&j, "completed", S->completed);
	jw_i64(&j, "prompt_tokens", S->prompt_tokens);
	jw_i64(&j, "output_tokens", S->output_tokens);
	jw_i64(&j, "prefill_tokens", S->prefill_tokens);
	jw_i64(&j, "cached_tokens", S->cached_tokens);
	jw_i64(&j, "recomputed_tokens", S->recomputed_tokens);
	jw_i64(&j, "preemptions", S->preemptions);
	jw_i64(&j, "step_prefill_tokens", S->step_prefill_tokens);
	jw_i64(&j, "step_output_tokens", S->step_output_tokens);
	jw_f64(&j, "makespan_s", S->makespan_s);
	jpct(&j, "ttft_s", &S->ttft);
	jpct(&j, "tpot_s", &S->tpot);
	jpct(&j, "itl_s", &S->itl);
	jpct(&j, "e2e_s", &S->e2e);
	jpct(&j, "queue_s", &S->queue);
	jw_f64(&j, "throughput_tokens_per_s", S->throughput_tokens_per_s);
	jw_f64(&j, "throughput_requests_per_s", S->throughput_requests_per_s);
	jw_f64(&j, "goodput_requests_per_s", S->goodput_requests_per_s);
	jw_f64(&j, "slo_attainment", S->slo_attainment);
	jw_begin_object(&j, "slo");
	jw_f64(&j, "ttft_s", c->slo_ttft_s);
	jw_f64(&j, "tpot_s", c->slo_tpot_s);
	jw_end_object(&j);
	jw_f64(&j, "prefix_hit_rate", S->prefix_hit_rate);
	jw_f64(&j, "saved_prefill_s", S->saved_prefill_s);
	jw_f64(&j, "mean_accepted_tokens", S->mean_accepted);
	jw_begin_object(&j, "cache");
	jw_str(&j, "checkpoints", serve_ckpt_name(c->ckpt));
	jw_i64(&j, "hash_tokens", c->hash_tokens);
	jw_i64(&j, "page_tokens", S->page_tokens);
	jw_i64(&j, "page_bytes", S->page_bytes);
	jw_i64(&j, "kda_groups", S->kda_groups);
	jw_i64(&j, "kda_state_bytes_per_request", S->kda_state_bytes);
	jw_i64(&j, "ckpt_bytes_written", S->ckpt_bytes_written);
	jw_i64(&j, "ckpt_bytes_peak", S->ckpt_bytes_peak);
	jw_i64(&j, "ckpt_invalidated", S->ckpt_invalidated);
	jw_i64(&j, "cpu_hits", S->cpu_hits);
	jw_i64(&j, "offload_bytes", S->offload_bytes);
	jw_i64(&j, "prefetch_bytes", S->prefetch_bytes);
	jw_end_object(&j);
	jw_begin_object(&j, "hbm");
	jw_i64(&j, "fixed", S->hbm_fixed_bytes);
	jw_i64(&j, "pool", S->hbm_pool_bytes);
	jw_i64(&j, "peak", S->hbm_peak_bytes);
	jw_i64(&j, "capacity", in->hw->hbm_bytes);
	jw_i64(&j, "cpu_peak", S->cpu_peak_bytes);
	jw_end_object(&j);
	jw_i64(&j, "pd_transfer_bytes", S->pd_transfer_bytes);
	jw_begin_object(&j, "little");
	jw_f64(&j, "l", S->little_l);
	jw_f64(&j, "lambda_w", S->little_lambda_w);
	jw_end_object(&j);
	jw_i64(&j, "steps", S->steps);
	jw_f64(&j, "busy_s", S->busy_s);
	jw_f64(&j, "vision_s", S->vision_s);
	jw_i64(&j, "samples", in->r->n_samples);
	jw_begin_object(&j, "wall");
	jw_f64(&j, "cost_tables_s", S->cost_build_s);
	jw_i64(&j, "cost_points", S->cost_points);
	jw_f64(&j, "simulation_s", S->sim_s);
	jw_end_object(&j);
	jw_bool(&j, "pd", c->pd);
	jw_end_object(&j);
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

/* ---- SQLite ---- */

static int db_exec(sqlite3 *db, const char *sql, const char *path, struct err *e)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		err_set(e, path, 0, 0, "sqlite: %s", msg ? msg : "error");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

int report_serve_sqlite(const char *path, const struct serve_report_in *in, struct err *e)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = -EIO;
	if (sqlite3_open(path, &db) != SQLITE_OK) {
		err_set(e, path, 0, 0, "sqlite: cannot open");
		goto out;
	}
	char sql[4096];
	int n = snprintf(sql, sizeof sql, "CREATE TABLE requests (id INTEGER PRIMARY KEY");
	for (int k = 0; k < N_COLUMNS; k++)
		n += snprintf(sql + n, sizeof sql - (size_t)n, ", %s %s", serve_columns[k].name,
			      serve_columns[k].type == C_REAL ? "REAL" : "INTEGER");
	snprintf(sql + n, sizeof sql - (size_t)n, ")");
	if ((rc = db_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", path, e)) < 0 ||
	    (rc = db_exec(db, sql, path, e)) < 0)
		goto out;
	n = snprintf(sql, sizeof sql, "INSERT INTO requests VALUES (?");
	for (int k = 0; k < N_COLUMNS; k++)
		n += snprintf(sql + n, sizeof sql - (size_t)n, ", ?");
	snprintf(sql + n, sizeof sql - (size_t)n, ")");
	rc = -EIO;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		goto sqlerr;
	for (int64_t i = 0; i < in->r->n_rec; i++) {
		const struct serve_record *r = &in->r->rec[i];
		sqlite3_bind_int64(st, 1, i);
		for (int k = 0; k < N_COLUMNS; k++) {
			const struct column *c = &serve_columns[k];
			if (c->type == C_REAL)
				sqlite3_bind_double(st, k + 2, col_real(r, c));
			else
				sqlite3_bind_int64(st, k + 2, col_int(r, c));
		}
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlerr;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	st = NULL;
	if ((rc = db_exec(db,
			  "CREATE TABLE samples (t_s REAL, queued INTEGER, prefill INTEGER, decode INTEGER, "
			  "transfer INTEGER, in_system INTEGER, hbm_used_share REAL, cpu_bytes INTEGER, "
			  "tokens_per_s REAL)",
			  path, e)) < 0)
		goto out;
	rc = -EIO;
	if (sqlite3_prepare_v2(db, "INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
		goto sqlerr;
	for (int64_t i = 0; i < in->r->n_samples; i++) {
		const struct serve_sample *x = &in->r->samples[i];
		sqlite3_bind_double(st, 1, x->t_s);
		sqlite3_bind_int64(st, 2, x->queued);
		sqlite3_bind_int64(st, 3, x->prefill);
		sqlite3_bind_int64(st, 4, x->decode);
		sqlite3_bind_int64(st, 5, x->transfer);
		sqlite3_bind_int64(st, 6, x->in_system);
		sqlite3_bind_double(st, 7, x->hbm_used_share);
		sqlite3_bind_int64(st, 8, x->cpu_bytes);
		sqlite3_bind_double(st, 9, x->tokens_per_s);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlerr;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	st = NULL;
	if ((rc = db_exec(db, "CREATE TABLE summary (key TEXT PRIMARY KEY, value REAL)", path, e)) < 0)
		goto out;
	const struct serve_summary *S = &in->r->sum;
	const struct {
		const char *k;
		double v;
	} kv[] = {
		{"requests", (double)S->requests},
		{"completed", (double)S->completed},
		{"ttft_p50_s", S->ttft.p50},
		{"ttft_p90_s", S->ttft.p90},
		{"ttft_p99_s", S->ttft.p99},
		{"tpot_p50_s", S->tpot.p50},
		{"tpot_p90_s", S->tpot.p90},
		{"tpot_p99_s", S->tpot.p99},
		{"itl_p50_s", S->itl.p50},
		{"itl_p99_s", S->itl.p99},
		{"e2e_p50_s", S->e2e.p50},
		{"e2e_p99_s", S->e2e.p99},
		{"throughput_tokens_per_s", S->throughput_tokens_per_s},
		{"goodput_requests_per_s", S->goodput_requests_per_s},
		{"slo_attainment", S->slo_attainment},
		{"prefix_hit_rate", S->prefix_hit_rate},
		{"ckpt_bytes_written", (double)S->ckpt_bytes_written},
		{"hbm_peak_bytes", (double)S->hbm_peak_bytes},
		{"cpu_peak_bytes", (double)S->cpu_peak_bytes},
		{"makespan_s", S->makespan_s},
	};
	rc = -EIO;
	if (sqlite3_prepare_v2(db, "INSERT INTO summary VALUES (?, ?)", -1, &st, NULL) != SQLITE_OK)
		goto sqlerr;
	for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
		sqlite3_bind_text(st, 1, kv[i].k, -1, SQLITE_STATIC);
		sqlite3_bind_double(st, 2, isfinite(kv[i].v) ? kv[i].v : 0);
		if (sqlite3_step(st) != SQLITE_DONE)
			goto sqlerr;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	st = NULL;
	rc = db_exec(db, "COMMIT", path, e);
	goto out;
sqlerr:
	err_set(e, path, 0, 0, "sqlite: %s", sqlite3_errmsg(db));
	rc = -EIO;
out:
	if (st)
		sqlite3_finalize(st);
	if (db)
		sqlite3_close(db);
	return rc;
}

/* ---- Perfetto ---- */

#define PID_REQUESTS 1
#define PID_REPLICA 100

static int64_t ns(double s)
{
	return (int64_t)llround(s * 1e9);
}

static void slice(struct tj *w, const char *name, int64_t id, double t0, double t1, const struct serve_record *r,
		  int64_t idx)
{
	if (!(t1 > t0))
		return;
	tj_event(w);
	fprintf(w->out, "{\"ph\":\"b\",\"cat\":\"request\",\"name\":\"%s\",\"pid\":%d,\"tid\":0,\"id\":%lld,\"ts\":", name,
		PID_REQUESTS, (long long)id);
	tj_us(w->out, ns(t0));
	fprintf(w->out,
		",\"args\":{\"request\":%lld,\"prompt_tokens\":%lld,\"output_tokens\":%lld,\"cached_tokens\":%lld,"
		"\"replica\":%d,\"group\":%d}}",
		(long long)idx, (long long)r->prompt_tokens, (long long)r->output_tokens, (long long)r->cached_tokens,
		(int)r->replica, (int)r->dp_group);
	tj_event(w);
	fprintf(w->out, "{\"ph\":\"e\",\"cat\":\"request\",\"name\":\"%s\",\"pid\":%d,\"tid\":0,\"id\":%lld,\"ts\":", name,
		PID_REQUESTS, (long long)id);
	tj_us(w->out, ns(t1));
	fputc('}', w->out);
}

int report_serve_perfetto(FILE *f, const struct serve_report_in *in, int64_t max_requests)
{
	const struct serve_result *r = in->r;
	struct tj w;
	tj_begin(&w, f);
	tj_meta(&w, "process_name", PID_REQUESTS, 0, false, "requests (simulated)");
	tj_sort_index(&w, PID_REQUESTS, 0);
	int32_t replicas = 0;
	for (int64_t i = 0; i < r->n_steps; i++)
		if (r->steps[i].replica + 1 > replicas)
			replicas = r->steps[i].replica + 1;
	for (int32_t k = 0; k < replicas; k++) {
		char name[64];
		snprintf(name, sizeof name, "replica %d steps (simulated)", (int)k);
		tj_meta(&w, "process_name", PID_REPLICA + k, 0, false, name);
		tj_sort_index(&w, PID_REPLICA + k, k + 1);
		tj_meta(&w, "thread_name", PID_REPLICA + k, 0, true, "steps");
	}
	for (int64_t i = 0; i < r->n_steps; i++) {
		const struct serve_step_rec *x = &r->steps[i];
		tj_event(&w);
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"step\",\"name\":\"%s\",\"pid\":%d,\"tid\":0,\"ts\":",
			x->kind ? "prefill" : x->prefill_tokens ? "mixed" : "decode", PID_REPLICA + x->replica);
		tj_us(f, ns(x->start_s));
		fputs(",\"dur\":", f);
		tj_us(f, ns(x->start_s + x->time_s) - ns(x->start_s));
		fprintf(f, ",\"args\":{\"decode_requests\":%d,\"prefill_tokens\":%d}}", (int)x->decode,
			(int)x->prefill_tokens);
	}
	int64_t n = r->n_rec < max_requests ? r->n_rec : max_requests;
	for (int64_t i = 0; i < n; i++) {
		const struct serve_record *q = &r->rec[i];
		slice(&w, "queued", 3 * i, q->arrival_s, q->admit_s, q, i);
		slice(&w, "prefill", 3 * i + 1, q->admit_s, q->first_token_s, q, i);
		slice(&w, "decode", 3 * i + 2, q->first_token_s, q->done_s, q, i);
	}
	for (int64_t i = 0; i < r->n_samples; i++) {
		const struct serve_sample *x = &r->samples[i];
		tj_event(&w);
		fprintf(f, "{\"ph\":\"C\",\"name\":\"requests\",\"pid\":%d,\"ts\":", PID_REQUESTS);
		tj_us(f, ns(x->t_s));
		fprintf(f, ",\"args\":{\"queued\":%lld,\"prefill\":%lld,\"decode\":%lld,\"transfer\":%lld}}",
			(long long)x->queued, (long long)x->prefill, (long long)x->decode, (long long)x->transfer);
		tj_event(&w);
		fprintf(f, "{\"ph\":\"C\",\"name\":\"HBM pool held\",\"pid\":%d,\"ts\":", PID_REQUESTS);
		tj_us(f, ns(x->t_s));
		fprintf(f, ",\"args\":{\"share\":%.4f}}", x->hbm_used_share);
	}
	return tj_end(&w);
}

/* ---- the report directory ---- */

static int open_out(struct outfile *of, const char *path, const struct outfile_opts *oo, FILE **f, struct err *e)
{
	int rc = outfile_open(of, path, oo, e);
	if (rc < 0)
		return rc;
	if (!(*f = outfile_stream(of, e))) {
		outfile_abort(of);
		return -ENOMEM;
	}
	return 0;
}

typedef int (*writer_fn)(FILE *f, const struct serve_report_in *in);

static int write_file(const char *path, const struct outfile_opts *oo, writer_fn fn, const struct serve_report_in *in,
		      struct err *e)
{
	struct outfile of;
	FILE *f;
	int rc = open_out(&of, path, oo, &f, e);
	if (rc < 0)
		return rc;
	if ((rc = fn(f, in)) < 0) {
		outfile_abort(&of);
		err_set(e, path, 0, 0, "write failed");
		return rc;
	}
	return outfile_commit(&of, e);
}

enum { CH_QUEUES, CH_THROUGHPUT, CH_LATENCY, CH_COUNT };

struct series_data {
	double *t, *queued, *prefill, *decode, *in_system, *tput, *hbm;
	double *ttft, *tpot, *e2e, *frac_ttft, *frac_tpot, *frac_e2e;
	int64_t n_ttft, n_tpot, n_e2e;
};

static void series_free(struct series_data *d)
{
	free(d->t);
	free(d->queued);
	free(d->prefill);
	free(d->decode);
	free(d->in_system);
	free(d->tput);
	free(d->hbm);
	free(d->ttft);
	free(d->tpot);
	free(d->e2e);
	free(d->frac_ttft);
	free(d->frac_tpot);
	free(d->frac_e2e);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* At most 2000 points of a sorted distribution, as (value, fraction at or below). */
static int64_t cdf(double *x, int64_t n, double *frac)
{
	qsort(x, (size_t)n, sizeof *x, cmp_double);
	int64_t stride = n > 2000 ? (n + 1999) / 2000 : 1, k = 0;
	for (int64_t i = 0; i < n; i += stride) {
		int64_t j = i + stride - 1 < n ? i + stride - 1 : n - 1;
		x[k] = x[j];
		frac[k] = (double)(j + 1) / (double)n;
		k++;
	}
	return k;
}

static int charts_build(struct chart_xy *ch, struct series_data *d, const struct serve_report_in *in)
{
	const struct serve_result *r = in->r;
	int64_t ns_ = r->n_samples, nr = r->n_rec;
	size_t a = (size_t)(ns_ > 0 ? ns_ : 1), b = (size_t)(nr > 0 ? nr : 1);
	d->t = malloc(a * sizeof(double));
	d->queued = malloc(a * sizeof(double));
	d->prefill = malloc(a * sizeof(double));
	d->decode = malloc(a * sizeof(double));
	d->in_system = malloc(a * sizeof(double));
	d->tput = malloc(a * sizeof(double));
	d->hbm = malloc(a * sizeof(double));
	d->ttft = malloc(b * sizeof(double));
	d->tpot = malloc(b * sizeof(double));
	d->e2e = malloc(b * sizeof(double));
	d->frac_ttft = malloc(b * sizeof(double));
	d->frac_tpot = malloc(b * sizeof(double));
	d->frac_e2e = malloc(b * sizeof(double));
	if (!d->t || !d->queued || !d->prefill || !d->decode || !d->in_system || !d->tput || !d->hbm || !d->ttft ||
	    !d->tpot || !d->e2e || !d->frac_ttft || !d->frac_tpot || !d->frac_e2e)
		return -ENOMEM;
	for (int64_t i = 0; i < ns_; i++) {
		const struct serve_sample *x = &r->samples[i];
		d->t[i] = x->t_s;
		d->queued[i] = (double)x->queued;
		d->prefill[i] = (double)x->prefill;
		d->decode[i] = (double)x->decode;
		d->in_system[i] = (double)x->in_system;
		d->tput[i] = x->tokens_per_s;
		d->hbm[i] = 100 * x->hbm_used_share;
	}
	for (int64_t i = 0; i < nr; i++) {
		const struct serve_record *q = &r->rec[i];
		d->ttft[d->n_ttft++] = q->ttft_s;
		d->e2e[d->n_e2e++] = q->e2e_s;
		if (q->output_tokens > 1)
			d->tpot[d->n_tpot++] = q->tpot_s;
	}
	d->n_ttft = cdf(d->ttft, d->n_ttft, d->frac_ttft);
	d->n_tpot = cdf(d->tpot, d->n_tpot, d->frac_tpot);
	d->n_e2e = cdf(d->e2e, d->n_e2e, d->frac_e2e);

	memset(ch, 0, CH_COUNT * sizeof *ch);
	struct chart_xy *q = &ch[CH_QUEUES];
	snprintf(q->name, sizeof q->name, "queues");
	snprintf(q->title, sizeof q->title, "Requests by state over time");
	snprintf(q->xlabel, sizeof q->xlabel, "time (s)");
	snprintf(q->ylabel, sizeof q->ylabel, "requests");
	const struct {
		const char *title;
		const double *y;
	} qs[] = {{"in the system", d->in_system}, {"queued", d->queued}, {"prefill", d->prefill}, {"decode", d->decode}};
	for (int k = 0; k < 4; k++) {
		struct chart_xy_series *s = &q->series[q->n_series++];
		snprintf(s->title, sizeof s->title, "%s", qs[k].title);
		s->x = d->t;
		s->y = qs[k].y;
		s->n = ns_;
		s->color = k;
		s->steps = true;
	}
	struct chart_xy *t = &ch[CH_THROUGHPUT];
	snprintf(t->name, sizeof t->name, "throughput");
	snprintf(t->title, sizeof t->title, "Output tokens per second, and HBM held by requests");
	snprintf(t->xlabel, sizeof t->xlabel, "time (s)");
	snprintf(t->ylabel, sizeof t->ylabel, "tokens/s; HBM pool held (%%)");
	t->series[0] = (struct chart_xy_series){.x = d->t, .y = d->tput, .n = ns_, .color = 0, .steps = true};
	snprintf(t->series[0].title, sizeof t->series[0].title, "output tokens/s");
	t->series[1] = (struct chart_xy_series){.x = d->t, .y = d->hbm, .n = ns_, .color = 1, .dashed = true};
	snprintf(t->series[1].title, sizeof t->series[1].title, "HBM pool held (%%)");
	t->n_series = 2;
	t->logy = false;
	struct chart_xy *l = &ch[CH_LATENCY];
	snprintf(l->name, sizeof l->name, "latency_cdf");
	snprintf(l->title, sizeof l->title, "Latency distributions (share of requests at or below)");
	snprintf(l->xlabel, sizeof l->xlabel, "seconds");
	snprintf(l->ylabel, sizeof l->ylabel, "share of requests");
	l->logx = true;
	l->ymax = 1.0;
	l->series[0] = (struct chart_xy_series){.x = d->ttft, .y = d->frac_ttft, .n = d->n_ttft, .color = 0};
	snprintf(l->series[0].title, sizeof l->series[0].title, "TTFT");
	l->series[1] = (struct chart_xy_series){.x = d->tpot, .y = d->frac_tpot, .n = d->n_tpot, .color = 1};
	snprintf(l->series[1].title, sizeof l->series[1].title, "TPOT");
	l->series[2] = (struct chart_xy_series){.x = d->e2e, .y = d->frac_e2e, .n = d->n_e2e, .color = 2};
	snprintf(l->series[2].title, sizeof l->series[2].title, "E2E");
	l->n_series = 3;
	return 0;
}

static void md_pct_row(FILE *f, const char *name, const struct serve_pct *p)
{
	char a[32], b[32], c[32], d[32], e[32], g[32];
	fprintf(f, "| %s | %s | %s | %s | %s | %s | %s |\n", name, fmt_time(p->mean, a, 32), fmt_time(p->p50, b, 32),
		fmt_time(p->p90, c, 32), fmt_time(p->p95, d, 32), fmt_time(p->p99, e, 32), fmt_time(p->max, g, 32));
}

static int write_md(const char *path, const struct outfile_opts *oo, const struct serve_report_in *in,
		    const struct chart_outcome *co, const struct serve_report_opts *o, struct err *e)
{
	struct outfile of;
	FILE *f;
	int rc = open_out(&of, path, oo, &f, e);
	if (rc < 0)
		return rc;
	const struct serve_summary *S = &in->r->sum;
	const struct serve_config *c = in->c;
	const struct scenario *s = in->s;
	char a[64], b[64], x[64];
	fprintf(f, "# k3sim serving: %s\n\n", s->name);
	if (s->description[0])
		fprintf(f, "%s\n\n", s->description);
	if (c->pd)
		fprintf(f,
			"%s on %s, disaggregated: prefill %lld x %lld GPUs (TP%lld x DP%lld, EP%lld), decode %lld x %lld "
			"GPUs (TP%lld x DP%lld, EP%lld), state and KV over %s.\n\n",
			in->m->name, in->hw->name, (long long)c->prefill.replicas, (long long)c->prefill.gpus,
			(long long)c->prefill.tp, (long long)c->prefill.dp, (long long)c->prefill.ep,
			(long long)c->decode.replicas, (long long)c->decode.gpus, (long long)c->decode.tp,
			(long long)c->decode.dp, (long long)c->decode.ep, c->pd_link == SERVE_LINK_NIC ? "the NIC" : "NVLink");
	else
		fprintf(f, "%s on %lld x %lld %s (TP%lld x DP%lld attention, EP%lld), %s steps, token budget %lld per DP "
			   "group, at most %lld requests running per group.\n\n",
			in->m->name, (long long)c->replicas, (long long)s->gpus, in->hw->name, (long long)s->tp,
			(long long)s->dp, (long long)s->ep, c->mixed ? "mixed prefill + decode" : "prefill-first",
			(long long)c->token_budget, (long long)c->max_running);
	fprintf(f, "Workload: %s; seed %llu.\n\n", in->w->source, (unsigned long long)c->seed);
	if (!co->rendered)
		fprintf(f, "*Charts were skipped: %s. Every number is in the tables below and in results.json.*\n\n",
			co->reason);
	fprintf(f, "## Latency\n\n<!-- table: latency -->\n| metric | mean | p50 | p90 | p95 | p99 | max |\n"
		   "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	md_pct_row(f, "TTFT", &S->ttft);
	md_pct_row(f, "TPOT", &S->tpot);
	md_pct_row(f, "ITL", &S->itl);
	md_pct_row(f, "E2E", &S->e2e);
	md_pct_row(f, "queueing", &S->queue);
	if (co->rendered)
		fprintf(f, "\n![Latency distributions](charts/latency_cdf.png)\n");
	fprintf(f, "\n## Throughput\n\n<!-- table: throughput -->\n| metric | value |\n| --- | ---: |\n");
	fprintf(f, "| requests completed | %lld of %lld |\n", (long long)S->completed, (long long)S->requests);
	fprintf(f, "| makespan | %s |\n", fmt_time(S->makespan_s, a, sizeof a));
	fprintf(f, "| output tokens/s | %s |\n", fmt_sig4(S->throughput_tokens_per_s, a, sizeof a));
	fprintf(f, "| requests/s | %s |\n", fmt_sig4(S->throughput_requests_per_s, a, sizeof a));
	fprintf(f, "| goodput (TTFT <= %s and TPOT <= %s), requests/s | %s |\n", fmt_time(c->slo_ttft_s, a, sizeof a),
		fmt_time(c->slo_tpot_s, b, sizeof b), fmt_sig4(S->goodput_requests_per_s, x, sizeof x));
	fprintf(f, "| SLO attainment | %.1f %% |\n", 100 * S->slo_attainment);
	fprintf(f, "| tokens per request per decode step | %s |\n", fmt_sig4(S->mean_accepted, a, sizeof a));
	fprintf(f, "| preemptions | %lld (%lld tokens recomputed) |\n", (long long)S->preemptions,
		(long long)S->recomputed_tokens);
	fprintf(f, "| steps | %lld |\n", (long long)S->steps);
	if (co->rendered)
		fprintf(f, "\n![Requests by state over time](charts/queues.png)\n\n"
			   "![Output tokens per second and HBM held](charts/throughput.png)\n");
	fprintf(f, "\n## Prefix cache and KDA checkpoints\n\n<!-- table: cache -->\n| metric | value |\n| --- | ---: |\n");
	fprintf(f, "| checkpoints | %s |\n", serve_ckpt_name(c->ckpt));
	fprintf(f, "| prefix hit rate (cached / prompt tokens) | %.1f %% |\n", 100 * S->prefix_hit_rate);
	fprintf(f, "| cached tokens | %s |\n", fmt_int(S->cached_tokens, a, sizeof a));
	fprintf(f, "| prefill saved (estimated) | %s |\n", fmt_time(S->saved_prefill_s, a, sizeof a));
	fprintf(f, "| KDA checkpoints written (per GPU) | %s |\n", fmt_bytes((double)S->ckpt_bytes_written, a, sizeof a));
	fprintf(f, "| KDA checkpoints resident, peak (per GPU) | %s |\n", fmt_bytes((double)S->ckpt_bytes_peak, a, sizeof a));
	fprintf(f, "| sibling checkpoints invalidated | %lld |\n", (long long)S->ckpt_invalidated);
	fprintf(f, "| hits from CPU DRAM | %lld |\n", (long long)S->cpu_hits);
	fprintf(f, "| written back / prefetched over the host link (per GPU) | %s / %s |\n",
		fmt_bytes((double)S->offload_bytes, a, sizeof a), fmt_bytes((double)S->prefetch_bytes, b, sizeof b));
	if (c->pd)
		fprintf(f, "| P/D state + KV transferred | %s |\n", fmt_bytes((double)S->pd_transfer_bytes, a, sizeof a));
	fprintf(f, "\n## Memory (per GPU)\n\n<!-- table: memory -->\n| metric | value |\n| --- | ---: |\n");
	fprintf(f, "| weights, workspace, activations | %s |\n", fmt_bytes((double)S->hbm_fixed_bytes, a, sizeof a));
	fprintf(f, "| paged pool | %s |\n", fmt_bytes((double)S->hbm_pool_bytes, a, sizeof a));
	fprintf(f, "| peak HBM | %s of %s |\n", fmt_bytes((double)S->hbm_peak_bytes, a, sizeof a),
		fmt_bytes((double)in->hw->hbm_bytes, b, sizeof b));
	fprintf(f, "| peak CPU DRAM tier | %s |\n", fmt_bytes((double)S->cpu_peak_bytes, a, sizeof a));
	fprintf(f, "| KDA state + ShortConv per request | %s in %d groups |\n",
		fmt_bytes((double)S->kda_state_bytes, a, sizeof a), S->kda_groups);
	fprintf(f, "| physical page | %lld tokens (%s), hash endpoints every %lld |\n", (long long)S->page_tokens,
		fmt_bytes((double)S->page_bytes, a, sizeof a), (long long)c->hash_tokens);
	fprintf(f, "\n## Checks\n\n- Little's law: time-average requests in the system %.4f, arrival rate x mean E2E "
		   "%.4f.\n- Tokens: the steps prefilled %lld tokens and emitted %lld; the requests account for %lld "
		   "prefilled (%lld prompt - %lld cached + %lld recomputed) and %lld output.\n",
		S->little_l, S->little_lambda_w, (long long)S->step_prefill_tokens, (long long)S->step_output_tokens,
		(long long)S->prefill_tokens, (long long)S->prompt_tokens, (long long)S->cached_tokens,
		(long long)S->recomputed_tokens, (long long)S->output_tokens);
	fprintf(f, "\n## Files\n\n`results.json` (the summary), `requests.csv` (one row per request), `charts/` (SVG and "
		   "PNG, with the data and the gnuplot script `charts.gp`).\n\n---\n*k3sim %s: `%s`; step costs from %lld "
		   "timeline evaluations in %.2f s, the simulation %.2f s.*\n",
		o->version ? o->version : "", o->command ? o->command : "k3sim serve", (long long)S->cost_points,
		S->cost_build_s, S->sim_s);
	return outfile_commit(&of, e);
}

int report_serve_write(const struct serve_report_in *in, const struct serve_report_opts *o,
		       struct serve_report_files *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	snprintf(out->md, sizeof out->md, "%s/report.md", o->dir);
	snprintf(out->json, sizeof out->json, "%s/results.json", o->dir);
	snprintf(out->csv, sizeof out->csv, "%s/requests.csv", o->dir);
	snprintf(out->charts_dir, sizeof out->charts_dir, "%s/charts", o->dir);
	bool ours = false;
	int rc;
	if ((rc = outfile_dir_open(o->dir, &ours, e)) < 0 || (rc = outfile_dir_open(out->charts_dir, NULL, e)) < 0)
		return rc;
	struct outfile_opts oo = {.force = o->force || ours, .inputs = o->inputs, .n_inputs = o->n_inputs};
	struct chart_xy *ch = calloc(CH_COUNT, sizeof *ch);
	struct series_data d;
	memset(&d, 0, sizeof d);
	if (!ch || charts_build(ch, &d, in) < 0) {
		err_set(e, NULL, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	out->n_charts = CH_COUNT;
	if ((rc = chart_render_xy(out->charts_dir, o->gnuplot, NULL, 0, NULL, 0, ch, CH_COUNT, &oo, &out->charts, e)) <
		    0 ||
	    (rc = write_file(out->json, &oo, report_serve_json, in, e)) < 0 ||
	    (rc = write_file(out->csv, &oo, report_serve_csv, in, e)) < 0 ||
	    (rc = write_md(out->md, &oo, in, &out->charts, o, e)) < 0 || (rc = outfile_dir_mark(o->dir, "k3sim serve", e)) < 0)
		goto out;
out:
	series_free(&d);
	free(ch);
	return rc;
}
