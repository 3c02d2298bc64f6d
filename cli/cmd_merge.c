/* k3sim merge A.db B.db ... -o ALL.db [--csv ALL.csv] [--allow-partial] [--force] [--json]: joins
 * the shard databases of one sweep. Outputs are atomic (util/outfile.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "plan/plandb.h"
#include "sweep/sweepdb.h"
#include "util/outfile.h"

static void usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: k3sim merge SHARD.db... -o OUT.db [--csv OUT.csv] [--allow-partial] [--force] "
	    "[--json]\n\n"
	    "Joins the databases of 'k3sim sweep --shard K/N' runs of one sweep into one, in point order\n"
	    "(or those of 'k3sim plan --shard K/N': their candidates, finished by 'k3sim plan --from').\n"
	    "Refuses databases of different sweeps, shards present twice (overlap), shards whose rows are\n"
	    "not all there, and missing shards (named in the message).\n\n"
	    "  -o, --output F    the merged database (required)\n"
	    "  --csv F           also a CSV of the merged points ('-' for stdout)\n"
	    "  --allow-partial   write the union even when shards are missing\n"
	    "  -f, --force       replace existing output files (never a shard: compared by inode)\n"
	    "  --json            a JSON summary\n");
}

int cmd_merge(int argc, char **argv)
{
	const char *out = NULL, *csv = NULL;
	bool partial = false, json = false, force = false;
	struct outfile csv_out = {0};
	const char **inputs = calloc((size_t)argc, sizeof *inputs);
	int n = 0, status = 1;
	if (!inputs) {
		fprintf(stderr, "k3sim merge: out of memory\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (cli_is_help(a)) {
			usage(stdout);
			status = 0;
			goto out;
		} else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--csv") == 0) {
			if (!v) {
				fprintf(stderr, "k3sim merge: %s needs a file name\n", a);
				status = 2;
				goto out;
			}
			*(strcmp(a, "--csv") == 0 ? &csv : &out) = v;
			i++;
		} else if (strcmp(a, "--allow-partial") == 0) {
			partial = true;
		} else if (strcmp(a, "--force") == 0 || strcmp(a, "-f") == 0) {
			force = true;
		} else if (strcmp(a, "--json") == 0) {
			json = true;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "k3sim merge: unknown option '%s'\n", a);
			usage(stderr);
			status = 2;
			goto out;
		} else {
			inputs[n++] = a;
		}
	}
	if (!out || n == 0) {
		fprintf(stderr, "k3sim merge: %s (see 'k3sim merge --help')\n",
		        !out ? "-o OUT.db is required" : "no shard databases given");
		status = 2;
		goto out;
	}
	struct err e;
	if (plandb_is_plan(inputs[0])) {
		/* shards of `k3sim plan --shard K/N`: their candidates; `k3sim plan --from` finishes */
		int64_t n_cands = 0;
		struct outfile_opts oo = {.force = force};
		if (csv || partial) {
			fprintf(stderr, "k3sim merge: --csv and --allow-partial are for sweeps, not plans\n");
			status = 2;
			goto out;
		}
		if (plandb_merge(out, inputs, n, &oo, &n_cands, &e) < 0) {
			cli_error("merge", &e);
			goto out;
		}
		if (json)
			printf("{\"plan\": true, \"candidates\": %lld, \"shards\": %d, \"output\": \"%s\"}\n",
			       (long long)n_cands, n, out);
		else
			printf("k3sim merge: %d plan shards, %lld candidates -> %s (finish with 'k3sim plan ... --from %s')\n",
			       n, (long long)n_cands, out, out);
		status = 0;
		goto out;
	}
	struct sweepdb_merge_stats st;
	bool csv_stdout = csv && strcmp(csv, "-") == 0;
	FILE *f = stdout;
	/* The CSV's target is checked (and locked) before the merge: a refused CSV costs nothing. */
	struct outfile_opts oo = {.force = force, .inputs = inputs, .n_inputs = (size_t)n};
	if (csv && !csv_stdout &&
	    (outfile_open(&csv_out, csv, &oo, &e) < 0 || !(f = outfile_stream(&csv_out, &e)))) {
		cli_error("merge", &e);
		goto out;
	}
	if (sweepdb_merge(out, inputs, n, partial, force, &st, &e) < 0) {
		cli_error("merge", &e);
		goto out;
	}
	if (csv) {
		int rc = sweepdb_export_csv(out, f, &e);
		if (rc == 0 && !csv_stdout)
			rc = outfile_commit(&csv_out, &e);
		if (rc < 0) {
			cli_error("merge", &e);
			goto out;
		}
		if (csv_stdout) {
			status = 0;
			goto out;
		}
	}
	status = 0;
	if (json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_begin_object(&w, NULL);
		jw_str(&w, "db", out);
		jw_i64(&w, "inputs", n);
		jw_i64(&w, "points", st.points);
		jw_i64(&w, "points_total", st.points_total);
		jw_i64(&w, "shard_count", st.shard_count);
		jw_i64(&w, "missing_shards", st.missing_shards);
		jw_end_object(&w);
		jw_finish(&w);
	} else {
		printf("k3sim merge: %d database%s, %lld of %lld points (%lld/%lld shards) -> %s%s%s\n", n,
		       n == 1 ? "" : "s", (long long)st.points, (long long)st.points_total,
		       (long long)(st.shard_count - st.missing_shards), (long long)st.shard_count, out,
		       csv ? ", " : "", csv ? csv : "");
	}
out:
	outfile_abort(&csv_out);
	free(inputs);
	return status;
}
