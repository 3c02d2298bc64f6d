/* k3sim sweep SCENARIO [-o OUT.db] [--csv OUT.csv] [-j N] [--shard K/N] [--quiet] [--json]:
 * the cartesian product of a scenario's `sweep:` axes, evaluated on all cores. Outputs are atomic
 * (util/outfile.h): a failed or interrupted sweep leaves the old files as they were. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "sweep/sweep.h"
#include "sweep/sweepdb.h"
#include "util/doc.h"
#include "util/outfile.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: k3sim sweep SCENARIO [-o OUT.db] [--csv OUT.csv] [-j N] [--shard K/N] [--force] "
	    "[--quiet] [--json]\n\n"
	    "Evaluates every point of the cartesian product of the axes under the scenario's `sweep:`\n"
	    "key, in parallel, and writes one row per point (every input and output a column) to SQLite\n"
	    "and/or CSV, in point order (the first declared axis the slowest).\n\n"
	    "  SCENARIO        a YAML file or an embedded scenario (schema: scenarios/README.md), e.g.\n"
	    "                    sweep:\n"
	    "                      context: [4096, 65536, 1048576]   # sets prompt_tokens; output stays\n"
	    "                      batch: {from: 1, to: 256, times: 2}\n"
	    "                      model: [kimi-k3, k3-full-mla]\n"
	    "                  axes: context batch prompt_tokens output_tokens prefill_chunk gpus tp dp\n"
	    "                  cp ep moe_imbalance tp_comm model hw kda_state mla_cache\n"
	    "                  expert_activations dispatch\n"
	    "  -o, --output F  SQLite database (default: sweep.db, or sweep-K-of-N.db with --shard;\n"
	    "                  none when only --csv is given)\n"
	    "  --csv F         also (or only) a CSV file with the same columns ('-' for stdout)\n"
	    "  -f, --force     replace existing output files (each is written beside its target and\n"
	    "                  renamed into place when the sweep succeeded)\n"
	    "  -j, --jobs N    evaluating threads (default: the online CPUs)\n"
	    "  --shard K/N     evaluate points K-1, K-1+N, K-1+2N, ... (K in 1..N; a Slurm array task\n"
	    "                  passes --shard $((SLURM_ARRAY_TASK_ID+1))/$SLURM_ARRAY_TASK_COUNT);\n"
	    "                  'k3sim merge' joins the shard databases\n"
	    "  --quiet         no progress bar and no table: errors only\n"
	    "  --json          a JSON summary on stdout instead of the table\n"
	    "A point whose layout does not work (e.g. tp does not divide the heads) is a row with ok = 0\n"
	    "and the reason in `error`; the sweep goes on.\n");
}

enum { HEAD_ROWS = 16 };

struct outputs {
	struct sweepdb *db;
	FILE *csv;
	struct outfile csv_out;
	struct sweep_row head[HEAD_ROWS];
	int64_t n_head;
};

static int sink(void *ctx, const struct sweep_row *rows, int64_t n, struct err *e)
{
	struct outputs *o = ctx;
	for (int64_t i = 0; i < n && o->n_head < HEAD_ROWS; i++)
		o->head[o->n_head++] = rows[i];
	if (o->db) {
		int rc = sweepdb_add(o->db, rows, n, e);
		if (rc < 0)
			return rc;
	}
	if (o->csv) {
		sweep_csv_rows(o->csv, rows, n);
		if (ferror(o->csv)) {
			err_set(e, NULL, 0, 0, "writing the CSV failed");
			return -EIO;
		}
	}
	return 0;
}

struct progress {
	double t0;
	bool shown;
};

static void progress(void *ctx, int64_t done, int64_t total)
{
	struct progress *p = ctx;
	enum { WIDTH = 32 };
	int fill = total > 0 ? (int)(WIDTH * done / total) : WIDTH;
	char bar[WIDTH + 1];
	for (int i = 0; i < WIDTH; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[WIDTH] = 0;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	double t = (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
	if (!p->shown)
		p->t0 = t;
	double elapsed = t - p->t0, eta = done > 0 ? elapsed * (double)(total - done) / (double)done : 0;
	fprintf(stderr, "\r[%s] %3d%%  %lld/%lld points  %.1f s, ETA %.1f s \033[K", bar,
	        total ? (int)(100 * done / total) : 100, (long long)done, (long long)total, elapsed, eta);
	p->shown = true;
}

static int parse_shard(const char *v, int64_t *k, int64_t *n)
{
	const char *slash = v ? strchr(v, '/') : NULL;
	if (!slash)
		return -EINVAL;
	char a[32];
	snprintf(a, sizeof a, "%.*s", (int)(slash - v), v);
	if (doc_parse_i64(a, k) < 0 || doc_parse_i64(slash + 1, n) < 0 || *n < 1 || *k < 1 || *k > *n)
		return -EINVAL;
	return 0;
}

/* The axes' values of a row, as text, for the table. */
static void axis_cell(const struct sweep_row *r, enum sweep_axis_kind k, char *buf, size_t cap)
{
	switch (k) {
	case AXIS_CONTEXT:
	case AXIS_PROMPT:
		snprintf(buf, cap, "%lld", (long long)r->prompt_tokens);
		break;
	case AXIS_BATCH:
		snprintf(buf, cap, "%lld", (long long)r->batch);
		break;
	case AXIS_OUTPUT:
		snprintf(buf, cap, "%lld", (long long)r->output_tokens);
		break;
	case AXIS_PREFILL_CHUNK:
		snprintf(buf, cap, "%lld", (long long)r->prefill_chunk);
		break;
	case AXIS_GPUS:
		snprintf(buf, cap, "%lld", (long long)r->gpus);
		break;
	case AXIS_TP:
		snprintf(buf, cap, "%lld", (long long)r->tp);
		break;
	case AXIS_DP:
		snprintf(buf, cap, "%lld", (long long)r->dp);
		break;
	case AXIS_CP:
		snprintf(buf, cap, "%lld", (long long)r->cp);
		break;
	case AXIS_EP:
		snprintf(buf, cap, "%lld", (long long)r->ep);
		break;
	case AXIS_MOE_IMBALANCE:
		snprintf(buf, cap, "%g", r->moe_imbalance);
		break;
	case AXIS_TP_COMM:
		snprintf(buf, cap, "%s", r->tp_comm);
		break;
	case AXIS_MODEL:
		snprintf(buf, cap, "%s", r->model);
		break;
	case AXIS_HW:
		snprintf(buf, cap, "%s", r->hw);
		break;
	case AXIS_KDA_STATE:
		snprintf(buf, cap, "%s", r->kda_state);
		break;
	case AXIS_MLA_CACHE:
		snprintf(buf, cap, "%s", r->mla_cache);
		break;
	case AXIS_EXPERT_ACT:
		snprintf(buf, cap, "%s", r->expert_activations);
		break;
	case AXIS_DISPATCH:
		snprintf(buf, cap, "%s", r->dispatch);
		break;
	case AXIS_KIND_COUNT:
		buf[0] = 0;
		break;
	}
}

static void print_table(const struct sweep_spec *sp, const struct outputs *o, int64_t total)
{
	char a[32], b[32], c[32];
	printf("\n");
	for (int i = 0; i < sp->n_axes; i++)
		printf("%-*s ", sp->axes[i].kind == AXIS_MODEL ? 20 : 12, sweep_axis_name(sp->axes[i].kind));
	printf("%12s %12s %14s %12s %5s %9s\n", "TTFT", "TPOT", "tok/s/GPU", "HBM/GPU", "fits", "max_batch");
	for (int64_t r = 0; r < o->n_head; r++) {
		const struct sweep_row *row = &o->head[r];
		for (int i = 0; i < sp->n_axes; i++) {
			char cell[64];
			axis_cell(row, sp->axes[i].kind, cell, sizeof cell);
			printf("%-*s ", sp->axes[i].kind == AXIS_MODEL ? 20 : 12, cell);
		}
		if (!row->ok) {
			printf("invalid: %s\n", row->error);
			continue;
		}
		printf("%12s %12s %14.1f %12s %5s %9lld\n", cli_time(row->ttft_s, a, sizeof a),
		       cli_time(row->tpot_s, b, sizeof b), row->tokens_per_s_per_gpu,
		       cli_bytes((double)row->hbm_total, c, sizeof c), row->fits ? "yes" : "NO",
		       (long long)row->max_batch);
	}
	if (total > o->n_head)
		printf("... %lld more rows\n", (long long)(total - o->n_head));
}

int cmd_sweep(int argc, char **argv)
{
	const char *path = NULL, *db_path = NULL, *csv_path = NULL;
	bool quiet = false, json = false, force = false;
	int64_t jobs = sysconf(_SC_NPROCESSORS_ONLN), shard_k = 1, shard_n = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(a)) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--csv") == 0) {
			if (!v) {
				fprintf(stderr, "k3sim sweep: %s needs a file name\n", a);
				return 2;
			}
			*(strcmp(a, "--csv") == 0 ? &csv_path : &db_path) = v;
			i++;
		} else if (strcmp(a, "-j") == 0 || strcmp(a, "--jobs") == 0) {
			if (!v || doc_parse_i64(v, &jobs) < 0 || jobs < 1 || jobs > 1024) {
				fprintf(stderr, "k3sim sweep: %s needs a thread count in 1..1024, got '%s'\n",
				        a, v ? v : "");
				return 2;
			}
			i++;
		} else if (strncmp(a, "-j", 2) == 0 && a[2]) {
			if (doc_parse_i64(a + 2, &jobs) < 0 || jobs < 1 || jobs > 1024) {
				fprintf(stderr, "k3sim sweep: -j needs a thread count in 1..1024, got '%s'\n",
				        a + 2);
				return 2;
			}
		} else if (strcmp(a, "--shard") == 0) {
			if (parse_shard(v, &shard_k, &shard_n) < 0) {
				fprintf(stderr, "k3sim sweep: --shard needs K/N with 1 <= K <= N, got '%s'\n",
				        v ? v : "");
				return 2;
			}
			i++;
		} else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
			quiet = true;
		} else if (strcmp(a, "--force") == 0 || strcmp(a, "-f") == 0) {
			force = true;
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "k3sim sweep: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		} else if (!path) {
			path = a;
		} else {
			fprintf(stderr, "k3sim sweep: one scenario at a time\n");
			return 2;
		}
	}
	if (!path) {
		fprintf(stderr, "k3sim sweep: which scenario? (see 'k3sim sweep --help')\n");
		return 2;
	}
	char default_db[64];
	if (!db_path && !csv_path) {
		if (shard_n > 1)
			snprintf(default_db, sizeof default_db, "sweep-%lld-of-%lld.db", (long long)shard_k,
			         (long long)shard_n);
		else
			snprintf(default_db, sizeof default_db, "sweep.db");
		db_path = default_db;
	}

	int status = 1;
	struct err e;
	struct sweep_spec *sp = malloc(sizeof *sp);
	struct outputs *o = calloc(1, sizeof *o);
	struct sweepdb db = {0};
	if (!sp || !o) {
		fprintf(stderr, "k3sim sweep: out of memory\n");
		goto out;
	}
	if (sweep_spec_load(sp, path, &e) < 0) {
		cli_error("sweep", &e);
		free(sp);
		sp = NULL;
		goto out;
	}
	const char *const inputs[] = {path};
	struct outfile_opts oo = {.force = force, .inputs = inputs, .n_inputs = 1};
	if (db_path) {
		struct sweepdb_meta meta;
		sweepdb_meta_init(&meta, sp, shard_k - 1, shard_n);
		if (sweepdb_create(&db, db_path, &meta, &oo, &e) < 0) {
			cli_error("sweep", &e);
			goto out;
		}
		o->db = &db;
	}
	if (csv_path && strcmp(csv_path, "-") == 0) {
		o->csv = stdout;
	} else if (csv_path) {
		if (outfile_open(&o->csv_out, csv_path, &oo, &e) < 0 ||
		    !(o->csv = outfile_stream(&o->csv_out, &e))) {
			cli_error("sweep", &e);
			goto out;
		}
	}
	if (o->csv)
		sweep_csv_header(o->csv);

	struct progress prog = {0};
	struct sweep_opts opts = {.threads = (int)jobs, .shard_index = shard_k - 1, .shard_count = shard_n};
	if (!quiet && isatty(STDERR_FILENO)) {
		opts.progress = progress;
		opts.progress_ctx = &prog;
	}
	struct sweep_stats st;
	int rc = sweep_run(sp, &opts, sink, o, &st, &e);
	if (prog.shown)
		fprintf(stderr, "\r\033[K");
	if (rc < 0) {
		cli_error("sweep", &e);
		goto out;
	}
	if (db_path && sweepdb_commit(&db, &e) < 0) {
		cli_error("sweep", &e);
		goto out;
	}
	if (o->csv && o->csv != stdout) {
		o->csv = NULL;
		if (outfile_commit(&o->csv_out, &e) < 0) {
			cli_error("sweep", &e);
			goto out;
		}
	}
	status = 0;
	if (quiet)
		goto out;
	FILE *info = o->csv == stdout ? stderr : stdout;
	if (json && o->csv != stdout) {
		struct jw w;
		jw_init(&w, stdout);
		jw_begin_object(&w, NULL);
		jw_str(&w, "scenario", sp->base.name);
		jw_i64(&w, "points_total", sp->points);
		jw_i64(&w, "shard", shard_k);
		jw_i64(&w, "shard_count", shard_n);
		jw_i64(&w, "points", st.points);
		jw_i64(&w, "invalid", st.invalid);
		jw_i64(&w, "fits", st.fits);
		jw_i64(&w, "prefills", st.prefills);
		jw_i64(&w, "threads", st.threads);
		jw_f64(&w, "wall_s", st.wall_s);
		if (db_path)
			jw_str(&w, "db", db_path);
		if (csv_path)
			jw_str(&w, "csv", csv_path);
		jw_end_object(&w);
		jw_finish(&w);
		goto out;
	}
	fprintf(info, "k3sim sweep: %s - %lld point%s", sp->base.name, (long long)st.points,
	        st.points == 1 ? "" : "s");
	if (shard_n > 1)
		fprintf(info, " (shard %lld/%lld of %lld)", (long long)shard_k, (long long)shard_n,
		        (long long)sp->points);
	fprintf(info, " in %.3f s on %d thread%s (%lld prefill%s); %lld fit, %lld invalid\n", st.wall_s,
	        st.threads, st.threads == 1 ? "" : "s", (long long)st.prefills, st.prefills == 1 ? "" : "s",
	        (long long)st.fits, (long long)st.invalid);
	if (db_path || (csv_path && o->csv != stdout))
		fprintf(info, "  wrote%s%s%s%s\n", db_path ? " " : "", db_path ? db_path : "",
		        csv_path && strcmp(csv_path, "-") ? " " : "",
		        csv_path && strcmp(csv_path, "-") ? csv_path : "");
	if (info == stdout)
		print_table(sp, o, st.points);
out:
	if (o)
		outfile_abort(&o->csv_out);
	sweepdb_abort(&db);
	if (sp)
		sweep_spec_release(sp);
	free(sp);
	free(o);
	return status;
}
