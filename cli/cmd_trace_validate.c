/* k3sim trace validate DB... [--hw H] [--json] [-o DIR]: predicted vs measured per matched op. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib/validate.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/outfile.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: k3sim trace validate DB [MORE.db|MEASURED.csv...] [--hw NAME|PATH] [options]\n\n"
	        "Predicted (the cost model, sim_op_cost) against measured time for every op measured in\n"
	        "a trace database: per op class the median and p90 absolute %% error (over all points\n"
	        "and over the calibration protocol's held-out points), the bias, the worst offenders\n"
	        "with their shapes, and the GPU work that matched no op.\n\n"
	        "Kernels map to ops by NVTX ranges named in `k3sim op` syntax (\"k3sim op=gemm m=64\n"
	        "n=7168 k=7168 dtype=bf16\"; a range instance is one sample, the sum of its kernels),\n"
	        "else by kernel-name rules (calib/rules/default.yaml). A point is one distinct op:\n"
	        "the median of its samples. CSV inputs: calib-grid's or the KDA bench's.\n\n"
	        "options:\n"
	        "  --hw NAME|PATH      hardware preset or YAML (default h200)\n"
	        "  --rules R           rules for kernels outside k3sim ranges: default, none, or a YAML\n"
	        "  -o, --output DIR    write DIR/validate.md, DIR/validate.json and gnuplot charts\n"
	        "                      (DIR/validate-scatter.svg, DIR/validate-error.svg); each file is\n"
	        "                      written beside its target and renamed into place. A directory\n"
	        "                      k3sim made (it holds .k3sim-report) is refreshed; in any other\n"
	        "                      non-empty directory an existing file takes --force\n"
	        "  -f, --force         replace existing files of the report's names in any directory\n"
	        "  --json              print the JSON report instead of the table\n"
	        "  --top N             worst offenders per class (default 5)\n"
	        "  --only GLOB         only the ops whose spec matches (e.g. 'gemm m=* n=96 *')\n"
	        "  --title TEXT        the report's title\n"
	        "  -h, --help          this text\n\n"
	        "environment: K3SIM_GNUPLOT names the gnuplot program (default gnuplot).\n");
}

static int write_file(const char *path, const struct outfile_opts *oo, const struct calib_report_in *in,
                      bool json, struct err *e)
{
	struct outfile of;
	int rc = outfile_open(&of, path, oo, e);
	if (rc < 0)
		return rc;
	FILE *f = outfile_stream(&of, e);
	if (!f) {
		outfile_abort(&of);
		return -ENOMEM;
	}
	rc = json ? calib_report_json(f, in, e) : calib_report_markdown(f, in, e);
	if (rc < 0) {
		outfile_abort(&of);
		if (!e->file[0])
			snprintf(e->file, sizeof e->file, "%.255s", path);
		return rc;
	}
	return outfile_commit(&of, e);
}

static void table(const struct calib_validation *v, const struct calib_match *m)
{
	printf("%-18s %7s %8s %10s %10s %10s %10s %8s\n", "class", "points", "held out", "med abs %",
	       "p90 abs %", "held med %", "held p90 %", "bias %");
	for (int c = 0; c <= v->n_cls; c++) {
		const char *label = c < v->n_cls ? v->cls[c].label : "all";
		const struct calib_errors *a = c < v->n_cls ? &v->cls[c].all : &v->all;
		const struct calib_errors *h = c < v->n_cls ? &v->cls[c].held_out : &v->held_out;
		printf("%-18s %7d %8d %10.2f %10.2f %10.2f %10.2f %8.2f\n", label, a->n, h->n, a->med_abs_pct,
		       a->p90_abs_pct, h->med_abs_pct, h->p90_abs_pct, a->med_signed_pct);
	}
	if (m && m->unmatched_total)
		printf("%lld activities matched no op (see the report's unmatched list or --json)\n",
		       (long long)m->unmatched_total);
}

int cmd_trace_validate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"hw", required_argument, NULL, 'w'},
	    {"rules", required_argument, NULL, 'r'},
	    {"output", required_argument, NULL, 'o'},
	    {"json", no_argument, NULL, 'j'},
	    {"top", required_argument, NULL, 't'},
	    {"title", required_argument, NULL, 'T'},
	    {"only", required_argument, NULL, 'O'},
	    {"force", no_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *hw_name = "h200", *rules_name = "default", *dir = NULL, *title = NULL, *only = NULL;
	bool json = false, force = false;
	int top = 5, ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fh", opts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			force = true;
			break;
		case 'w':
			hw_name = optarg;
			break;
		case 'r':
			rules_name = optarg;
			break;
		case 'o':
			dir = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'T':
			title = optarg;
			break;
		case 'O':
			only = optarg;
			break;
		case 't':
			top = atoi(optarg);
			if (top < 1 || top > CALIB_WORST_MAX) {
				fprintf(stderr, "k3sim trace validate: --top wants 1..%d, not '%s'\n",
				        CALIB_WORST_MAX, optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "k3sim trace validate: missing value for '%s'\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "k3sim trace validate: unknown option '%s'; see --help\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "k3sim trace validate: no trace database given; see --help\n");
		return 2;
	}
	struct err e = {0};
	struct hw *hw = malloc(sizeof *hw);
	struct calib_points pts;
	struct calib_match first = {0};
	struct calib_validation v = {0};
	bool have_v = false;
	int status = 1;
	calib_points_init(&pts);
	if (!hw) {
		fprintf(stderr, "k3sim trace validate: out of memory\n");
		goto out;
	}
	if (hw_load(hw, hw_name, &e) < 0)
		goto fail;
	char inputs[1024];
	if (calib_points_add_files(&pts, argc - optind, argv + optind, rules_name, &first,
	                           inputs, sizeof inputs, &e) < 0)
		goto fail;
	if (only)
		calib_points_filter(&pts, only, true);
	if (pts.n == 0) {
		fprintf(stderr,
		        "k3sim trace validate: %s: no GPU work matched a model op (%lld kernels, %lld "
		        "memcpys read;"
		        " name ops with 'k3sim op=...' NVTX ranges or give --rules)\n",
		        inputs, (long long)first.kernels, (long long)first.memcpys);
		goto out;
	}
	if (calib_validate(&v, &pts, hw, &e) < 0)
		goto fail;
	have_v = true;
	char note[1024] = "";
	struct calib_report_in in = {
	    .title = title ? title : "Predicted vs measured",
	    .database = inputs,
	    .match = first.kernels || first.memcpys || first.memsets ? &first : NULL,
	    .v = &v,
	    .top = top,
	};
	if (dir) {
		/* A directory k3sim made is refreshed; elsewhere existing files take --force. The
		 * measurements are inputs: never overwritten. */
		bool ours = false;
		if (outfile_dir_open(dir, &ours, &e) < 0)
			goto fail;
		struct outfile_opts oo = {.force = force || ours,
		                          .inputs = (const char *const *)(argv + optind),
		                          .n_inputs = (size_t)(argc - optind)};
		char path[4200];
		/* every file checked before the first is written: a refusal leaves no mixed report */
		const char *const names[] = {".md", ".json", NULL};
		for (int i = 0; names[i]; i++) {
			snprintf(path, sizeof path, "%s/validate%s", dir, names[i]);
			if (outfile_check(path, &oo, &e) < 0)
				goto fail;
		}
		for (int i = 0; calib_plot_files[i]; i++) {
			snprintf(path, sizeof path, "%s/validate%s", dir, calib_plot_files[i]);
			if (outfile_check(path, &oo, &e) < 0)
				goto fail;
		}
		int pr = calib_plots(&v, dir, "validate", getenv("K3SIM_GNUPLOT"), &oo, note, sizeof note,
		                     &e);
		if (pr < 0)
			goto fail;
		if (pr == 0) {
			in.scatter_svg = "validate-scatter.svg";
			in.error_svg = "validate-error.svg";
		} else {
			in.plot_note = note;
			fprintf(stderr, "k3sim trace validate: no plots: %s\n", note);
		}
		snprintf(path, sizeof path, "%s/validate.md", dir);
		if (write_file(path, &oo, &in, false, &e) < 0)
			goto fail;
		snprintf(path, sizeof path, "%s/validate.json", dir);
		if (write_file(path, &oo, &in, true, &e) < 0)
			goto fail;
		if (outfile_dir_mark(dir, "k3sim trace validate", &e) < 0)
			goto fail;
	} else {
		in.plot_note = "not requested (give -o DIR)";
	}
	if (json) {
		if (calib_report_json(stdout, &in, &e) < 0)
			goto fail;
	} else {
		printf("%s on %s%s: %zu ops measured\n", inputs, hw->name,
		       hw->calibrated ? " (calibrated)" : " (datasheet)", pts.n);
		table(&v, in.match);
		if (dir)
			printf("wrote %s/validate.md, %s/validate.json%s\n", dir, dir,
			       in.scatter_svg ? " and the charts" : "");
	}
	status = fflush(stdout) == 0 ? 0 : 1;
	goto out;
fail:
	cli_error("trace validate", &e);
out:
	if (have_v)
		calib_validation_release(&v);
	calib_match_release(&first);
	calib_points_release(&pts);
	free(hw);
	return status;
}
