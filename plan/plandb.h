#ifndef K3_PLAN_PLANDB_H
#define K3_PLAN_PLANDB_H

/* A plan in SQLite. Tables:
 *   meta(key, value)   format "k3sim-plan 1"; spec (plan_spec.description) and spec_hash (its
 *                      FNV-1a, hex); units_total; shard_count (N of --shard K/N, 1 without);
 *                      shards: "K" (1-based) for a shard, "all" for a whole or merged plan.
 *   candidates         every candidate, the fields of struct plan_cand (plan/plan.h), id the key.
 * A whole plan (plandb_write with whole) adds
 *   pd                 the P/D deployments (struct plan_pd);
 *   served             the short list and what serving it showed (struct plan_served);
 *   front              (front 'tpot' or 'ttft', pd, ref, x_s, tokens_per_s_per_gpu), ascending x;
 *   recommendations    one per GPU budget; losers: why each runner-up lost, ranked.
 * No clock time is stored: the same plan gives the same bytes.
 * Files are written through util/outfile.h (atomic; an existing file only with force, never an
 * input). Library code: nothing here prints. */

#include <stdbool.h>
#include <stdint.h>

#include "plan/plan.h"
#include "util/err.h"
#include "util/outfile.h"

enum { PLANDB_MAX_SHARDS = 65536 };

struct plandb_meta {
	char spec[8192];
	uint64_t hash;
	int64_t units_total, shard_count;
};

/* r's candidates (and with whole, the rest of the plan). shard_count 1: a whole plan's database;
 * else shard shard_index (0-based) of shard_count, candidates only. */
int plandb_write(const char *path, const struct plan_spec *sp, const struct plan_result *r, int64_t shard_index,
		 int64_t shard_count, bool whole, const struct outfile_opts *oo, struct err *e);

/* The candidates of n databases of one plan into r (zeroed here; in id order): a whole or merged
 * plan alone, or shards of one plan, each once, none missing. With sp, the databases' spec hash
 * must be sp's (the same flags); meta (may be NULL with sp) receives the plan's meta. */
int plandb_read(const char *const *paths, int n, const struct plan_spec *sp, struct plan_result *r,
		struct plandb_meta *meta, struct err *e);

/* `k3sim merge` of plan shards: their candidates into out (shards "all"), *n_cands set. */
int plandb_merge(const char *out, const char *const *inputs, int n, const struct outfile_opts *oo,
		 int64_t *n_cands, struct err *e);

/* 1 when path is an SQLite database of a plan (its meta format), else 0. */
int plandb_is_plan(const char *path);

#endif
