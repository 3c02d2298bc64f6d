#ifndef K3_SWEEP_SWEEPDB_H
#define K3_SWEEP_SWEEPDB_H

/* Sweep results in SQLite: table `points` (one row per point, the columns of sweep_columns(),
 * `point` the primary key; outputs NULL where ok = 0) and table `meta` (key, value):
 *   format         "k3sim-sweep 1"
 *   scenario       the scenario's name;  scenario_file: where it was loaded from
 *   spec           the canonical description of scenario and axes; spec_hash: its FNV-1a (hex)
 *   points_total   points of the whole sweep
 *   shard_count    N of --shard K/N (1 without sharding)
 *   shards         the 1-based shards this file holds, comma-separated ("2" or "1,2,3,4")
 *   created_utc    when it was written
 * A database is written through util/outfile.h: to a temporary beside PATH, renamed into place on
 * commit, so a file at PATH is always complete; an existing PATH is replaced only with force and
 * never when it is one of the inputs; an interrupted writer leaves no temporary behind. */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sweep/sweep.h"
#include "util/err.h"
#include "util/outfile.h"

struct sqlite3;
struct sqlite3_stmt;

struct sweepdb_meta {
	char scenario[64];
	char scenario_file[256];
	const char *spec; /* borrowed */
	uint64_t spec_hash;
	int64_t points_total;
	int64_t shard_count;
	int64_t shard_index; /* 0-based; -1: every shard (a whole or merged sweep) */
};

/* Fills meta from a spec and a shard (shard_count 1: the whole sweep). */
void sweepdb_meta_init(struct sweepdb_meta *meta, const struct sweep_spec *sp, int64_t shard_index,
                       int64_t shard_count);

struct sweepdb {
	struct sqlite3 *db;
	struct sqlite3_stmt *insert;
	struct outfile out; /* the temporary the database is written to */
	char path[512];     /* the target, for messages */
	const char *table;
};

/* Creates a new database for path (in its temporary file) with an empty `points` table. oo: the
 * output's rules (force, inputs; NULL: no force, no inputs); its `sqlite` is set here. Errors of
 * outfile_open (-EEXIST, -EINVAL, -EBUSY, ...) come back as they are. */
int sweepdb_create(struct sweepdb *w, const char *path, const struct sweepdb_meta *meta,
                   const struct outfile_opts *oo, struct err *e);
/* Adds rows to table `table` (created with the same columns when it is not `points`). */
int sweepdb_use_table(struct sweepdb *w, const char *table, struct err *e);
int sweepdb_add(struct sweepdb *w, const struct sweep_row *rows, int64_t n, struct err *e);
/* A sweep_sink_fn writing to a struct sweepdb. */
int sweepdb_sink(void *w, const struct sweep_row *rows, int64_t n, struct err *e);
/* Adds a (key, value) to meta, replacing. */
int sweepdb_set_meta(struct sweepdb *w, const char *key, const char *value, struct err *e);
/* Executes SQL on the open database (extra tables of a report). */
int sweepdb_exec(struct sweepdb *w, const char *sql, struct err *e);
/* Commits, closes and renames into place (outfile_commit); on failure the temporary file is
 * removed and the target is as it was. */
int sweepdb_commit(struct sweepdb *w, struct err *e);
/* Closes and removes the temporary file (after a failure). Safe on a closed writer. */
void sweepdb_abort(struct sweepdb *w);

/* Reads rows of `table` in point order (at most cap_rows; -E2BIG beyond). *rows is malloc'd,
 * the caller frees it. */
int sweepdb_read(const char *path, const char *table, struct sweep_row **rows, int64_t *n, int64_t cap_rows,
                 struct err *e);

/* Writes the CSV of a database's points (sweep_csv_header + rows), streaming. */
int sweepdb_export_csv(const char *path, FILE *out, struct err *e);

struct sweepdb_merge_stats {
	int64_t points;       /* rows written */
	int64_t points_total; /* of the sweep */
	int64_t shard_count;
	int64_t missing_shards;
};

/* Joins shard databases of one sweep into `out`. Errors: inputs of different sweeps (spec hash,
 * point count or shard count differ), a shard present twice (overlap), a shard whose rows are not
 * all there, and, unless allow_partial, shards missing from the union (listed in the message);
 * `out` being one of the inputs (by inode: "./s1.db", links) or existing without force. */
int sweepdb_merge(const char *out, const char *const *inputs, int n_inputs, bool allow_partial,
                  bool force, struct sweepdb_merge_stats *st, struct err *e);

#endif
