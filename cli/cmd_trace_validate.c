/* k3sim trace validate DB... [--hw H] [--json] [-o DIR]: predicted vs measured per matched op. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib/runs.h"
#include "calib/validate.h"
#include "reports/calib.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/outfile.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: k3sim trace validate [DB|MEASURED.csv...] [--run NAME=FILE[,FILE...]]...\n"
	        "                            [--hw NAME|PATH] [options]\n\n"
	        "Predicted (the cost model, sim_op_cost) against measured time for every op measured in\n"
	        "a trace database: per op class the median and p90 absolute %% error (over all points\n"
	        "and over the calibration protocol's held-out points), the bias, the worst offenders\n"
	        "with their shapes, and the GPU work that matched no op.\n\n"
	        "Kernels map to ops by NVTX ranges named in `k3sim op` syntax (\"k3sim op=gemm m=64\n"
	        "n=7168 k=7168 dtype=bf16\"; a range instance is one sample, the sum of its kernels),\n"
	        "else by kernel-name rules (calib/rules/default.yaml); kernels in a \"k3sim ref ...\"\n"
	        "range (a reference timed beside an op: cuBLASLt, a kernel variant) are skipped. A\n"
	        "point is one distinct op: the median of its samples. CSV inputs: calib-grid's or\n"
	        "the KDA bench's.\n\n"
	        "Runs: each input is a run of its own (a separate device session); --run groups files\n"
	        "of one session under a name. Measured is then the median over runs of each run's\n"
	        "median, and per class the run-to-run spread ((max - min) / median over runs, over the\n"
	        "points two runs or more measured) is printed beside the errors: the noise floor.\n\n"
	        "options:\n"
	        "  --run NAME=FILES    FILES (comma separated) are one run named NAME; repeatable\n"
	        "  --hw NAME|PATH      hardware preset or YAML (default h200)\n"
	        "  --rules R           rules for kernels outside k3sim ranges: default, none, or a YAML\n"
	        "  --clock boost|measured|power\n"
	        "                      the SM clock of the predictions: boost (default: each point's\n"
	        "                      regime, boost unless measured as sustained), or measured: the\n"
	        "                      clock the capture recorded around each op (K3SIM_GPU_METRICS:\n"
	        "                      the median of the readings inside a range instance's span, else\n"
	        "                      the nearest reading; over instances, the median), at most the\n"
	        "                      preset's boost. The report adds each class's clock (weighted by\n"
	        "                      measured time); inputs without readings are named and predicted\n"
	        "                      at the boost clock. The clock is an input the prediction takes:\n"
	        "                      the model does not predict a power cap. power: each op at the\n"
	        "                      clock the preset's power-limit model (sim/power.h) gives its\n"
	        "                      instances, run over the capture's ops in time order from an\n"
	        "                      idle GPU, idle between them (the report's clocks are those)\n"
	        "  -o, --output DIR    write DIR/validate.md, DIR/validate.json and gnuplot charts\n"
	        "                      (DIR/validate-scatter.png, DIR/validate-error.png); each file is\n"
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

/* The report directory: ours (util/outfile.h) or forced, every file checked before the first is
 * written (a refusal leaves no mixed report); the measurements are inputs, never outputs. */
static int open_report_dir(const char *dir, bool force, const struct calib_inputs *ins,
                           const char **paths, struct outfile_opts *oo, struct err *e)
{
	bool ours = false;
	int rc = outfile_dir_open(dir, &ours, e);
	if (rc < 0)
		return rc;
	for (int i = 0; i < ins->n; i++)
		paths[i] = ins->in[i].path;
	*oo = (struct outfile_opts){.force = force || ours, .inputs = paths, .n_inputs = (size_t)ins->n};
	char path[4200];
	static const char *const names[] = {".md", ".json", NULL};
	for (int i = 0; names[i] && rc == 0; i++) {
		snprintf(path, sizeof path, "%s/validate%s", dir, names[i]);
		rc = outfile_check(path, oo, e);
	}
	for (int i = 0; calib_plot_files[i] && rc == 0; i++) {
		snprintf(path, sizeof path, "%s/validate%s", dir, calib_plot_files[i]);
		rc = outfile_check(path, oo, e);
	}
	return rc;
}

static void table(const struct calib_validation *v, const struct calib_match *m)
{
	const bool runs = v->pts->n_runs > 1, clocks = v->clock_mode == CALIB_CLOCK_MEASURED;
	printf("%-18s %7s %8s %10s %10s %10s %10s %8s", "class", "points", "held out", "med abs %",
	       "p90 abs %", "held med %", "held p90 %", "bias %");
	if (runs)
		printf(" %7s %10s %10s", "runs>1", "spread md%", "spread p90%");
	if (clocks)
		printf(" %9s", "clock MHz");
	printf("\n");
	for (int c = 0; c <= v->n_cls; c++) {
		const char *label = c < v->n_cls ? v->cls[c].label : "all";
		const struct calib_errors *a = c < v->n_cls ? &v->cls[c].all : &v->all;
		const struct calib_errors *h = c < v->n_cls ? &v->cls[c].held_out : &v->held_out;
		const struct calib_noise *n = c < v->n_cls ? &v->cls[c].noise : &v->noise;
		printf("%-18s %7d %8d %10.2f %10.2f %10.2f %10.2f %8.2f", label, a->n, h->n, a->med_abs_pct,
		       a->p90_abs_pct, h->med_abs_pct, h->p90_abs_pct, a->med_signed_pct);
		if (runs)
			printf(" %7d %10.2f %10.2f", n->n, n->med_pct, n->p90_pct);
		if (clocks)
			printf(" %9.0f", (c < v->n_cls ? v->cls[c].clock_hz : v->clock_hz_all) / 1e6);
		printf("\n");
	}
	if (m && m->unmatched_total)
		printf("%lld activities matched no op (see the report's unmatched list or --json)\n",
		       (long long)m->unmatched_total);
}

static int validate(const struct calib_inputs *ins, const char *hw_name, const char *rules_name,
                    const char *dir, bool force, const char *title, const char *only, bool json,
                    int top, enum calib_clock_mode clock, bool power);

int cmd_trace_validate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"hw", required_argument, NULL, 'w'},
	    {"rules", required_argument, NULL, 'r'},
	    {"clock", required_argument, NULL, 'c'},
	    {"output", required_argument, NULL, 'o'},
	    {"json", no_argument, NULL, 'j'},
	    {"top", required_argument, NULL, 't'},
	    {"title", required_argument, NULL, 'T'},
	    {"only", required_argument, NULL, 'O'},
	    {"run", required_argument, NULL, 'U'},
	    {"force", no_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *hw_name = "h200", *rules_name = "default", *dir = NULL, *title = NULL, *only = NULL;
	bool json = false, force = false, power = false;
	int top = 5, ch, status = 1;
	enum calib_clock_mode clock = CALIB_CLOCK_REGIME;
	struct calib_inputs ins;
	struct err e = {0};
	calib_inputs_init(&ins);
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
		case 'c':
			if (strcmp(optarg, "boost") == 0) {
				clock = CALIB_CLOCK_REGIME;
			} else if (strcmp(optarg, "measured") == 0 || strcmp(optarg, "power") == 0) {
				clock = CALIB_CLOCK_MEASURED; /* power: the model's clocks in the readings' place */
				power = optarg[0] == 'p';
			} else {
				fprintf(stderr, "k3sim trace validate: --clock takes boost, measured or power, not '%s'\n",
				        optarg);
				status = 2;
				goto done;
			}
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
		case 'U':
			if (calib_inputs_add_run(&ins, optarg, &e) < 0) {
				fprintf(stderr, "k3sim trace validate: %s\n", e.msg);
				status = 2;
				goto done;
			}
			break;
		case 't':
			top = atoi(optarg);
			if (top < 1 || top > CALIB_WORST_MAX) {
				fprintf(stderr, "k3sim trace validate: --top wants 1..%d, not '%s'\n",
				        CALIB_WORST_MAX, optarg);
				status = 2;
				goto done;
			}
			break;
		case 'h':
			usage(stdout);
			status = 0;
			goto done;
		case ':':
			fprintf(stderr, "k3sim trace validate: missing value for '%s'\n", argv[optind - 1]);
			status = 2;
			goto done;
		default:
			fprintf(stderr, "k3sim trace validate: unknown option '%s'; see --help\n",
			        argv[optind - 1]);
			status = 2;
			goto done;
		}
	}
	for (int i = optind; i < argc; i++)
		if (calib_inputs_add_path(&ins, argv[i], &e) < 0) {
			fprintf(stderr, "k3sim trace validate: %s\n", e.msg);
			status = 2;
			goto done;
		}
	if (ins.n == 0) {
		fprintf(stderr, "k3sim trace validate: no trace database given; see --help\n");
		status = 2;
		goto done;
	}
	status = validate(&ins, hw_name, rules_name, dir, force, title, only, json, top, clock, power);
done:
	calib_inputs_release(&ins);
	return status;
}

static int validate(const struct calib_inputs *ins, const char *hw_name, const char *rules_name,
                    const char *dir, bool force, const char *title, const char *only, bool json,
                    int top, enum calib_clock_mode clock, bool power)
{
	struct err e = {0};
	struct hw *hw = malloc(sizeof *hw);
	struct calib_points raw, pts;
	struct calib_match first = {0};
	struct calib_validation v = {0};
	bool have_v = false, have_pts = false;
	int status = 1;
	calib_points_init(&raw);
	if (!hw) {
		fprintf(stderr, "k3sim trace validate: out of memory\n");
		goto out;
	}
	if (hw_load(hw, hw_name, &e) < 0)
		goto fail;
	if (power) {
		char why[200];
		struct hw_clock_sel sel = {.regime = HW_CLOCK_POWER};
		if (hw_clock_sel_check(hw, &sel, why, sizeof why) < 0) {
			fprintf(stderr, "k3sim trace validate: --clock %s\n", why);
			goto out;
		}
		raw.power_hw = hw;
	}
	char inputs[1024];
	if (calib_points_add_inputs(&raw, ins, rules_name, &first, inputs, sizeof inputs, &e) < 0)
		goto fail;
	if (only)
		calib_points_filter(&raw, only, true);
	int rc = calib_points_by_op(&pts, &raw, NULL, &e);
	have_pts = true;
	if (rc < 0)
		goto fail;
	if (pts.n == 0) {
		fprintf(stderr,
		        "k3sim trace validate: %s: no GPU work matched a model op (%lld kernels, %lld "
		        "memcpys read;"
		        " name ops with 'k3sim op=...' NVTX ranges or give --rules)\n",
		        inputs, (long long)first.kernels, (long long)first.memcpys);
		goto out;
	}
	if (clock == CALIB_CLOCK_MEASURED && !power)
		for (int s = 0; s < raw.n_sources; s++)
			if (raw.source_clock_readings[s] <= 0)
				fprintf(stderr,
				        "k3sim trace validate: %s: %s: its ops are predicted at the boost clock\n",
				        raw.sources[s],
				        raw.source_clock_readings[s] < 0
				            ? "a CSV has no clock readings"
				            : "no SM clock readings (K3SIM_GPU_METRICS; capture with "
				              "--gpu-metrics-ms)");
	if (calib_validate_clock(&v, &pts, hw, clock, &e) < 0)
		goto fail;
	have_v = true;
	char note[1024] = "";
	struct calib_report_in in = {
	    .title = title ? title : "Predicted vs measured",
	    .database = inputs,
	    .match = first.kernels || first.memcpys || first.memsets ? &first : NULL,
	    .v = &v,
	    .top = top,
	    .power_clock = power,
	};
	if (dir) {
		const char *paths[CALIB_SOURCES_MAX];
		struct outfile_opts oo;
		if (open_report_dir(dir, force, ins, paths, &oo, &e) < 0)
			goto fail;
		int pr = calib_plots(&v, dir, "validate", getenv("K3SIM_GNUPLOT"), &oo, note, sizeof note,
		                     &e);
		if (pr < 0)
			goto fail;
		if (pr == 0) {
			in.scatter_img = "validate-scatter.png";
			in.error_img = "validate-error.png";
		} else {
			in.plot_note = note;
			fprintf(stderr, "k3sim trace validate: no plots: %s\n", note);
		}
		char path[4200];
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
		printf("%s on %s%s: %zu ops measured in %d run%s\n", inputs, hw->name,
		       hw->calibrated ? " (calibrated)" : " (datasheet)", pts.n, pts.n_runs,
		       pts.n_runs == 1 ? "" : "s");
		table(&v, in.match);
		if (dir)
			printf("wrote %s/validate.md, %s/validate.json%s\n", dir, dir,
			       in.scatter_img ? " and the charts" : "");
	}
	status = fflush(stdout) == 0 ? 0 : 1;
	goto out;
fail:
	cli_error("trace validate", &e);
out:
	if (have_v)
		calib_validation_release(&v);
	calib_match_release(&first);
	if (have_pts)
		calib_points_release(&pts);
	calib_points_release(&raw);
	free(hw);
	return status;
}
