/* k3sim plan in SQLite (plan/plandb.h). */
#include "plan/plandb.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#define FORMAT "k3sim-plan 1"

enum col_type { COL_INT, COL_REAL, COL_TEXT, COL_BOOL };
struct col {
	const char *name;
	enum col_type type;
	size_t off, cap;
};

/* One fact, one place: each table's columns are these lists. */
#define CAND_COLS(I, R, T)                                                                              \
	I(id) I(unit) T(kind) T(hw) I(gpus) I(tp) I(dp) I(cp) I(ep) I(budget) I(batch) T(kda_state)         \
	T(mla_cache) T(status) T(reason) R(ttft_s) I(prompts_per_step) R(prefill_tokens_per_s_per_gpu)     \
	R(tpot_s) R(decode_step_s) R(decode_tokens_per_s_per_gpu) R(decode_compute_s) R(decode_memory_s)   \
	R(decode_latency_s) R(decode_comm_s) R(decode_exposed_comm_s) R(prefill_critical_comm_s)          \
	I(hbm_weights) I(hbm_total) I(hbm_capacity) R(rate_per_s) R(est_ttft_s) R(est_tpot_s)            \
	R(tokens_per_s_per_gpu) R(goodput_tokens_per_s_per_gpu)
#define PD_COLS(I, R, B)                                                                                \
	I(id) I(budget_gpus) I(prefill) I(decode) I(a) I(b) I(gpus) R(rate_per_s) R(transfer_s)            \
	R(est_ttft_s) R(est_tpot_s) R(tokens_per_s_per_gpu) R(goodput_tokens_per_s_per_gpu) B(meets)
#define SERVED_COLS(I, R, B, T)                                                                         \
	B(pd) I(cand) I(replicas) I(gpus) R(est_rate_per_s) R(rate_per_s) R(goodput_tokens_per_s_per_gpu)  \
	I(probes) I(requests) R(attainment) R(ttft_p90_s) R(tpot_p90_s) R(ttft_p50_s) R(tpot_p50_s)       \
	R(throughput_tokens_per_s) B(capped) T(reason)

#define C_I(S, f) {#f, COL_INT, offsetof(struct S, f), 0},
#define C_R(S, f) {#f, COL_REAL, offsetof(struct S, f), 0},
#define C_T(S, f) {#f, COL_TEXT, offsetof(struct S, f), sizeof(((struct S *)0)->f)},
#define C_B(S, f) {#f, COL_BOOL, offsetof(struct S, f), 0},
#define CI(f) C_I(plan_cand, f)
#define CR(f) C_R(plan_cand, f)
#define CT(f) C_T(plan_cand, f)
static const struct col cand_cols[] = {CAND_COLS(CI, CR, CT)};
#define PI(f) C_I(plan_pd, f)
#define PR(f) C_R(plan_pd, f)
#define PB(f) C_B(plan_pd, f)
static const struct col pd_cols[] = {PD_COLS(PI, PR, PB)};
#define SI(f) C_I(plan_served, f)
#define SR(f) C_R(plan_served, f)
#define SB(f) C_B(plan_served, f)
#define ST(f) C_T(plan_served, f)
static const struct col served_cols[] = {SERVED_COLS(SI, SR, SB, ST)};
#define NCOLS(a) ((int)(sizeof a / sizeof a[0]))

static int db_err(sqlite3 *db, const char *path, struct err *e, const char *what)
{
	err_set(e, path, 0, 0, "%s: %s", what, db ? sqlite3_errmsg(db) : "cannot open");
	return -EIO;
}

static int exec(sqlite3 *db, const char *path, const char *sql, struct err *e)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		err_set(e, path, 0, 0, "%s", msg ? msg : "sqlite error");
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

static int create_table(sqlite3 *db, const char *path, const char *table, const struct col *c, int n,
			const char *key, struct err *e)
{
	char sql[4096];
	int len = snprintf(sql, sizeof sql, "CREATE TABLE %s (", table);
	for (int i = 0; i < n; i++)
		len += snprintf(sql + len, sizeof sql - (size_t)len, "%s%s %s%s", i ? ", " : "", c[i].name,
				c[i].type == COL_REAL ? "REAL" : c[i].type == COL_TEXT ? "TEXT" : "INTEGER",
				key && strcmp(key, c[i].name) == 0 ? " PRIMARY KEY" : "");
	snprintf(sql + len, sizeof sql - (size_t)len, ")");
	return exec(db, path, sql, e);
}

static int insert_rows(sqlite3 *db, const char *path, const char *table, const struct col *c, int n,
		       const void *rows, size_t stride, int64_t n_rows, struct err *e)
{
	char sql[4096];
	int len = snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (", table);
	for (int i = 0; i < n; i++)
		len += snprintf(sql + len, sizeof sql - (size_t)len, "%s?", i ? ", " : "");
	snprintf(sql + len, sizeof sql - (size_t)len, ")");
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return db_err(db, path, e, table);
	int rc = 0;
	for (int64_t r = 0; r < n_rows && rc == 0; r++) {
		const char *row = (const char *)rows + (size_t)r * stride;
		for (int i = 0; i < n; i++) {
			const void *p = row + c[i].off;
			switch (c[i].type) {
			case COL_INT:
				sqlite3_bind_int64(st, i + 1, *(const int64_t *)p);
				break;
			case COL_REAL:
				sqlite3_bind_double(st, i + 1, *(const double *)p);
				break;
			case COL_BOOL:
				sqlite3_bind_int64(st, i + 1, *(const bool *)p);
				break;
			case COL_TEXT:
				sqlite3_bind_text(st, i + 1, p, -1, SQLITE_STATIC);
				break;
			}
		}
		if (sqlite3_step(st) != SQLITE_DONE)
			rc = db_err(db, path, e, table);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc;
}

static int set_meta(sqlite3 *db, const char *path, const char *key, const char *value, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", -1, &st, NULL) != SQLITE_OK)
		return db_err(db, path, e, "meta");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	int rc = sqlite3_step(st) == SQLITE_DONE ? 0 : db_err(db, path, e, "meta");
	sqlite3_finalize(st);
	return rc;
}

static int write_all(sqlite3 *db, const char *path, const struct plan_spec *sp, const struct plandb_meta *m,
		     const struct plan_result *r, const char *shards, bool whole, struct err *e)
{
	int rc;
	char buf[64];
	if ((rc = exec(db, path, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN", e)) < 0 ||
	    (rc = exec(db, path, "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)", e)) < 0 ||
	    (rc = set_meta(db, path, "format", FORMAT, e)) < 0 || (rc = set_meta(db, path, "spec", m->spec, e)) < 0)
		return rc;
	snprintf(buf, sizeof buf, "%016" PRIx64, m->hash);
	if ((rc = set_meta(db, path, "spec_hash", buf, e)) < 0)
		return rc;
	snprintf(buf, sizeof buf, "%lld", (long long)m->units_total);
	if ((rc = set_meta(db, path, "units_total", buf, e)) < 0)
		return rc;
	snprintf(buf, sizeof buf, "%lld", (long long)m->shard_count);
	if ((rc = set_meta(db, path, "shard_count", buf, e)) < 0 || (rc = set_meta(db, path, "shards", shards, e)) < 0)
		return rc;
	if ((rc = create_table(db, path, "candidates", cand_cols, NCOLS(cand_cols), "id", e)) < 0 ||
	    (rc = insert_rows(db, path, "candidates", cand_cols, NCOLS(cand_cols), r->cands, sizeof *r->cands,
			      r->n_cands, e)) < 0)
		return rc;
	if (whole) {
		if ((rc = create_table(db, path, "pd", pd_cols, NCOLS(pd_cols), "id", e)) < 0 ||
		    (rc = insert_rows(db, path, "pd", pd_cols, NCOLS(pd_cols), r->pd, sizeof *r->pd, r->n_pd, e)) < 0 ||
		    (rc = create_table(db, path, "served", served_cols, NCOLS(served_cols), NULL, e)) < 0 ||
		    (rc = insert_rows(db, path, "served", served_cols, NCOLS(served_cols), r->served, sizeof *r->served,
				      r->n_served, e)) < 0)
			return rc;
		if ((rc = exec(db, path,
			       "CREATE TABLE front (front TEXT, pd INTEGER, ref INTEGER, x_s REAL, "
			       "tokens_per_s_per_gpu REAL); "
			       "CREATE TABLE recommendations (budget_gpus INTEGER PRIMARY KEY, found INTEGER, pd INTEGER, "
			       "ref INTEGER, layout TEXT, replicas INTEGER, gpus_used INTEGER, "
			       "goodput_tokens_per_s_per_gpu REAL, goodput_tokens_per_s REAL, served INTEGER, why TEXT); "
			       "CREATE TABLE losers (budget_gpus INTEGER, rank INTEGER, pd INTEGER, ref INTEGER, layout TEXT, "
			       "goodput_tokens_per_s_per_gpu REAL, why TEXT)",
			       e)) < 0)
			return rc;
		sqlite3_stmt *st = NULL;
		if (sqlite3_prepare_v2(db, "INSERT INTO front VALUES (?, ?, ?, ?, ?)", -1, &st, NULL) != SQLITE_OK)
			return db_err(db, path, e, "front");
		for (int f = 0; f < 2 && rc == 0; f++) {
			const struct plan_point *p = f ? r->front_ttft : r->front_tpot;
			int64_t n = f ? r->n_front_ttft : r->n_front_tpot;
			for (int64_t i = 0; i < n && rc == 0; i++) {
				sqlite3_bind_text(st, 1, f ? "ttft" : "tpot", -1, SQLITE_STATIC);
				sqlite3_bind_int64(st, 2, p[i].pd);
				sqlite3_bind_int64(st, 3, p[i].ref);
				sqlite3_bind_double(st, 4, p[i].x_s);
				sqlite3_bind_double(st, 5, p[i].y);
				if (sqlite3_step(st) != SQLITE_DONE)
					rc = db_err(db, path, e, "front");
				sqlite3_reset(st);
			}
		}
		sqlite3_finalize(st);
		if (rc < 0)
			return rc;
		sqlite3_stmt *rs = NULL, *ls = NULL;
		if (sqlite3_prepare_v2(db, "INSERT INTO recommendations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &rs,
				       NULL) != SQLITE_OK ||
		    sqlite3_prepare_v2(db, "INSERT INTO losers VALUES (?, ?, ?, ?, ?, ?, ?)", -1, &ls, NULL) != SQLITE_OK) {
			rc = db_err(db, path, e, "recommendations");
			goto recs_out;
		}
		for (int i = 0; i < r->n_recs && rc == 0; i++) {
			const struct plan_rec *x = &r->recs[i];
			char what[192] = "";
			if (x->found)
				plan_describe(sp, r, x->pd, x->ref, what, sizeof what);
			sqlite3_bind_int64(rs, 1, x->budget_gpus);
			sqlite3_bind_int64(rs, 2, x->found);
			sqlite3_bind_int64(rs, 3, x->pd);
			sqlite3_bind_int64(rs, 4, x->found ? x->ref : -1);
			sqlite3_bind_text(rs, 5, what, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(rs, 6, x->replicas);
			sqlite3_bind_int64(rs, 7, x->gpus_used);
			sqlite3_bind_double(rs, 8, x->goodput_tokens_per_s_per_gpu);
			sqlite3_bind_double(rs, 9, x->goodput_tokens_per_s);
			sqlite3_bind_int64(rs, 10, x->served);
			sqlite3_bind_text(rs, 11, x->why, -1, SQLITE_STATIC);
			if (sqlite3_step(rs) != SQLITE_DONE)
				rc = db_err(db, path, e, "recommendations");
			sqlite3_reset(rs);
			for (int k = 0; k < x->n_losers && rc == 0; k++) {
				const struct plan_loser *l = &x->losers[k];
				sqlite3_bind_int64(ls, 1, x->budget_gpus);
				sqlite3_bind_int64(ls, 2, k + 1);
				sqlite3_bind_int64(ls, 3, l->pd);
				sqlite3_bind_int64(ls, 4, l->ref);
				sqlite3_bind_text(ls, 5, l->what, -1, SQLITE_STATIC);
				sqlite3_bind_double(ls, 6, l->goodput_tokens_per_s_per_gpu);
				sqlite3_bind_text(ls, 7, l->why, -1, SQLITE_STATIC);
				if (sqlite3_step(ls) != SQLITE_DONE)
					rc = db_err(db, path, e, "losers");
				sqlite3_reset(ls);
			}
		}
	recs_out:
		sqlite3_finalize(ls);
		sqlite3_finalize(rs);
		if (rc < 0)
			return rc;
	}
	return exec(db, path, "COMMIT", e);
}

static int write_db(const char *path, const struct plan_spec *sp, const struct plandb_meta *m,
		    const struct plan_result *r, int64_t shard_index, bool whole, const struct outfile_opts *oo,
		    struct err *e)
{
	struct outfile of = {0};
	struct outfile_opts o = oo ? *oo : (struct outfile_opts){0};
	o.sqlite = true;
	int rc = outfile_open(&of, path, &o, e);
	if (rc < 0)
		return rc;
	sqlite3 *db = NULL;
	char shards[32];
	if (shard_index >= 0)
		snprintf(shards, sizeof shards, "%lld", (long long)shard_index + 1);
	else
		snprintf(shards, sizeof shards, "all");
	if (sqlite3_open_v2(outfile_tmp_path(&of), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		rc = db_err(db, path, e, "open");
		goto out;
	}
	rc = write_all(db, path, sp, m, r, shards, whole, e);
out:
	if (db)
		sqlite3_close(db);
	if (rc < 0) {
		outfile_abort(&of);
		return rc;
	}
	return outfile_commit(&of, e);
}

static int get_meta(sqlite3 *db, const char *path, const char *key, char *out, size_t cap, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) != SQLITE_OK) {
		err_set(e, path, 0, 0, "not a k3sim plan database (no meta table)");
		return -EINVAL;
	}
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int rc = 0;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
	else {
		err_set(e, path, 0, 0, "not a k3sim plan database (no '%s' in meta)", key);
		rc = -EINVAL;
	}
	sqlite3_finalize(st);
	return rc;
}

int plandb_is_plan(const char *path)
{
	sqlite3 *db = NULL;
	char fmt[64];
	struct err e;
	int yes = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
		yes = get_meta(db, path, "format", fmt, sizeof fmt, &e) == 0 && strcmp(fmt, FORMAT) == 0;
	sqlite3_close(db);
	return yes;
}

/* Appends the candidates of one database to r (capped). */
static int read_cands(sqlite3 *db, const char *path, struct plan_result *r, int64_t *cap, struct err *e)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(db, "SELECT * FROM candidates ORDER BY id", -1, &st, NULL) != SQLITE_OK)
		return db_err(db, path, e, "candidates");
	if (sqlite3_column_count(st) != NCOLS(cand_cols)) {
		sqlite3_finalize(st);
		err_set(e, path, 0, 0, "candidates has %d columns, this k3sim writes %d", sqlite3_column_count(st),
			NCOLS(cand_cols));
		return -EINVAL;
	}
	int rc = 0, s;
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (r->n_cands >= PLAN_MAX_ROWS) {
			err_set(e, path, 0, 0, "more than %d candidates", PLAN_MAX_ROWS);
			rc = -E2BIG;
			break;
		}
		if (r->n_cands == *cap) {
			int64_t nc = *cap ? *cap * 2 : 4096;
			struct plan_cand *p = realloc(r->cands, (size_t)nc * sizeof *p);
			if (!p) {
				err_set(e, path, 0, 0, "out of memory");
				rc = -ENOMEM;
				break;
			}
			r->cands = p;
			*cap = nc;
		}
		struct plan_cand *c = &r->cands[r->n_cands++];
		memset(c, 0, sizeof *c);
		for (int i = 0; i < NCOLS(cand_cols); i++) {
			void *p = (char *)c + cand_cols[i].off;
			if (cand_cols[i].type == COL_INT)
				*(int64_t *)p = sqlite3_column_int64(st, i);
			else if (cand_cols[i].type == COL_REAL)
				*(double *)p = sqlite3_column_double(st, i);
			else {
				const unsigned char *t = sqlite3_column_text(st, i);
				snprintf(p, cand_cols[i].cap, "%s", t ? (const char *)t : "");
			}
		}
	}
	if (rc == 0 && s != SQLITE_DONE)
		rc = db_err(db, path, e, "candidates");
	sqlite3_finalize(st);
	return rc;
}

static int cmp_id(const void *a, const void *b)
{
	const struct plan_cand *p = a, *q = b;
	return (p->id > q->id) - (p->id < q->id);
}

int plandb_read(const char *const *paths, int n, const struct plan_spec *sp, struct plan_result *r,
		struct plandb_meta *meta, struct err *e)
{
	memset(r, 0, sizeof *r);
	int64_t cap = 0, shard_count = 0;
	bool seen[PLANDB_MAX_SHARDS] = {false};
	char hash[64], want[64] = "";
	if (sp)
		snprintf(want, sizeof want, "%016" PRIx64, sp->hash);
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		sqlite3 *db = NULL;
		char fmt[64], sc[32], shards[32];
		if (sqlite3_open_v2(paths[i], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
			rc = db_err(db, paths[i], e, "open");
			sqlite3_close(db);
			break;
		}
		if ((rc = get_meta(db, paths[i], "format", fmt, sizeof fmt, e)) < 0 ||
		    (rc = get_meta(db, paths[i], "spec_hash", hash, sizeof hash, e)) < 0 ||
		    (rc = get_meta(db, paths[i], "shard_count", sc, sizeof sc, e)) < 0 ||
		    (rc = get_meta(db, paths[i], "shards", shards, sizeof shards, e)) < 0)
			goto next;
		if (strcmp(fmt, FORMAT) != 0) {
			err_set(e, paths[i], 0, 0, "format '%s' is not '%s'", fmt, FORMAT);
			rc = -EINVAL;
			goto next;
		}
		if (!want[0]) {
			snprintf(want, sizeof want, "%s", hash);
			char units[32];
			if ((rc = get_meta(db, paths[i], "spec", meta->spec, sizeof meta->spec, e)) < 0 ||
			    (rc = get_meta(db, paths[i], "units_total", units, sizeof units, e)) < 0)
				goto next;
			meta->hash = strtoull(hash, NULL, 16);
			meta->units_total = strtoll(units, NULL, 10);
		}
		if (strcmp(hash, want) != 0) {
			err_set(e, paths[i], 0, 0,
				"a plan of other inputs (spec hash %s, these flags give %s): run it with the same flags",
				hash, want);
			rc = -EINVAL;
			goto next;
		}
		int64_t count = strtoll(sc, NULL, 10);
		if (count < 1 || count > PLANDB_MAX_SHARDS || (shard_count && count != shard_count)) {
			err_set(e, paths[i], 0, 0, "shard count %s differs from the other databases' (%lld)", sc,
				(long long)shard_count);
			rc = -EINVAL;
			goto next;
		}
		shard_count = count;
		if (strcmp(shards, "all") == 0) {
			if (n > 1) {
				err_set(e, paths[i], 0, 0, "a whole plan cannot be merged with shards");
				rc = -EINVAL;
				goto next;
			}
			for (int64_t k = 0; k < count; k++)
				seen[k] = true;
		} else {
			int64_t k = strtoll(shards, NULL, 10);
			if (k < 1 || k > count) {
				err_set(e, paths[i], 0, 0, "shard '%s' is not in 1..%lld", shards, (long long)count);
				rc = -EINVAL;
				goto next;
			}
			if (seen[k - 1]) {
				err_set(e, paths[i], 0, 0, "shard %lld/%lld is given twice", (long long)k, (long long)count);
				rc = -EINVAL;
				goto next;
			}
			seen[k - 1] = true;
		}
		rc = read_cands(db, paths[i], r, &cap, e);
	next:
		sqlite3_close(db);
	}
	if (rc == 0 && shard_count > 1) {
		char missing[256] = "";
		size_t len = 0;
		for (int64_t k = 0; k < shard_count; k++)
			if (!seen[k] && len < sizeof missing - 16)
				len += (size_t)snprintf(missing + len, sizeof missing - len, "%s%lld", len ? ", " : "",
							(long long)k + 1);
		if (len) {
			err_set(e, NULL, 0, 0, "shards missing: %s of %lld", missing, (long long)shard_count);
			rc = -EINVAL;
		}
	}
	if (rc < 0) {
		plan_result_release(r);
		return rc;
	}
	if (meta)
		meta->shard_count = shard_count;
	qsort(r->cands, (size_t)r->n_cands, sizeof *r->cands, cmp_id);
	for (int64_t i = 1; i < r->n_cands; i++)
		if (r->cands[i].id == r->cands[i - 1].id) {
			err_set(e, NULL, 0, 0, "candidate %lld is in two databases", (long long)r->cands[i].id);
			plan_result_release(r);
			return -EINVAL;
		}
	return 0;
}

int plandb_write(const char *path, const struct plan_spec *sp, const struct plan_result *r, int64_t shard_index,
		 int64_t shard_count, bool whole, const struct outfile_opts *oo, struct err *e)
{
	struct plandb_meta *m = malloc(sizeof *m);
	if (!m) {
		err_set(e, path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	snprintf(m->spec, sizeof m->spec, "%s", sp->description);
	m->hash = sp->hash;
	m->units_total = sp->units;
	m->shard_count = shard_count;
	int rc = write_db(path, sp, m, r, shard_count > 1 ? shard_index : -1, whole, oo, e);
	free(m);
	return rc;
}

int plandb_merge(const char *out, const char *const *inputs, int n, const struct outfile_opts *oo,
		 int64_t *n_cands, struct err *e)
{
	struct plandb_meta *m = calloc(1, sizeof *m);
	struct plan_result r;
	if (!m) {
		err_set(e, out, 0, 0, "out of memory");
		return -ENOMEM;
	}
	struct outfile_opts o = oo ? *oo : (struct outfile_opts){0};
	o.inputs = inputs;
	o.n_inputs = (size_t)n;
	int rc = plandb_read(inputs, n, NULL, &r, m, e);
	if (rc == 0) {
		*n_cands = r.n_cands;
		rc = write_db(out, NULL, m, &r, -1, false, &o, e);
		plan_result_release(&r);
	}
	free(m);
	return rc;
}
