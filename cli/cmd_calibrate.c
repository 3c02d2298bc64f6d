/* k3sim calibrate INPUT... --hw BASE -o OUT.yaml: fit the hardware model to measured kernels. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "calib/fit.h"
#include "calib/preset.h"
#include "calib/validate.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/outfile.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: k3sim calibrate INPUT... [--hw BASE] -o OUT.yaml [options]\n\n"
	        "Fit the hardware model to measured kernels and write a hardware preset that every\n"
	        "command takes (--hw OUT.yaml). INPUTs are trace databases (k3sim trace capture or\n"
	        "import, nsys SQLite exports; kernels matched to ops as in 'k3sim trace validate') or\n"
	        "CSVs of measurements (calib-grid's, the KDA bench's).\n\n"
	        "Protocol: the fit sees training points only; errors are reported on held-out points\n"
	        "only (GEMM m and KDA decode b not a power of 4, copy sizes not a power of 2, ...). It\n"
	        "fits the per-kernel latency floor, memory and GEMM efficiency curves, L2 bandwidth,\n"
	        "GEMM wave smoothing, KDA chunk-step cycles and collective curves where measured, then\n"
	        "tables of the efficiency that remains per class and dtype (and per GEMM shape).\n\n"
	        "options:\n"
	        "  --hw BASE           the preset to start from (default h200)\n"
	        "  -o, --output PATH   the preset to write (required)\n"
	        "  --name NAME         the preset's name (default: the output's file name)\n"
	        "  --rules R           kernel-name rules: default, none, or a YAML file\n"
	        "  --report DIR        write DIR/calibration.md (held-out validation) with charts (a\n"
	        "                      directory k3sim made is refreshed; elsewhere existing files\n"
	        "                      take --force)\n"
	        "  --no-tables         fit the curves only, no efficiency tables\n"
	        "  --no-shape-tables   no per-GEMM-shape tables (what unseen shapes get)\n"
	        "  --exclude GLOB      leave out the ops whose spec matches (e.g. 'gemm m=* n=96 k=7168 *')\n"
	        "  -f, --force         replace an existing output (never an input; the preset is\n"
	        "                      written beside its target and renamed into place when done)\n"
	        "  --json              print the summary as JSON\n"
	        "  -q, --quiet         print nothing on success\n"
	        "  -h, --help          this text\n");
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* (Re)write the preset into the output's temporary (util/outfile.h): it reaches the target only
 * at outfile_commit, after it was read back and validated. */
static int write_preset(struct outfile *of, const struct hw *hw, const struct calib_preset_meta *meta,
                        struct err *e)
{
	FILE *f = outfile_stream(of, e);
	if (!f)
		return -ENOMEM;
	rewind(f);
	if (ftruncate(fileno(f), 0) < 0) {
		err_set(e, of->path, 0, 0, "write failed: %s", strerror(errno));
		return -EIO;
	}
	int rc = calib_preset_write(f, hw, meta, e);
	if (rc == 0 && (fflush(f) != 0 || ferror(f))) {
		err_set(e, of->path, 0, 0, "write failed: %s", strerror(errno));
		rc = -EIO;
	}
	return rc;
}

/* hw_load of the preset being written, errors naming the output rather than its temporary. */
static int load_preset(struct hw *hw, const struct outfile *of, struct err *e)
{
	int rc = hw_load(hw, outfile_tmp_path(of), e);
	outfile_err_path(of, e);
	return rc;
}

/* The report's files (calibration.md and the charts), checked before anything is written. */
static int check_report(const char *dir, const struct outfile_opts *oo, struct err *e)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/calibration.md", dir);
	int rc = outfile_check(path, oo, e);
	for (int i = 0; rc == 0 && calib_plot_files[i]; i++) {
		snprintf(path, sizeof path, "%s/calibration%s", dir, calib_plot_files[i]);
		rc = outfile_check(path, oo, e);
	}
	return rc;
}

static void summarize(const struct calib_validation *v, struct calib_class_summary *out, int *n)
{
	*n = 0;
	for (int c = 0; c < v->n_cls; c++) {
		struct calib_class_summary *s = &out[(*n)++];
		snprintf(s->label, sizeof s->label, "%s", v->cls[c].label);
		s->train = v->cls[c].train.n;
		s->held_out = v->cls[c].held_out.n;
		s->held_med_pct = v->cls[c].held_out.n ? v->cls[c].held_out.med_abs_pct : -1;
		s->held_p90_pct = v->cls[c].held_out.n ? v->cls[c].held_out.p90_abs_pct : -1;
	}
}

/* The issues' targets: median <= 5 %, p90 <= 15 % (collectives: median <= 10 %, p90 <= 20 %). */
static const char *verdict(const char *label, const struct calib_errors *h)
{
	if (h->n == 0)
		return "no held-out points";
	bool comm = strncmp(label, "all", 3) == 0 && strlen(label) > 3;
	comm |= strcmp(label, "allreduce") == 0 || strcmp(label, "allgather") == 0 ||
	        strcmp(label, "reducescatter") == 0 || strcmp(label, "alltoall") == 0;
	if (comm)
		return h->med_abs_pct <= 10 && h->p90_abs_pct <= 20 ? "meets (median <= 10 %, p90 <= 20 %)"
		                                                     : "misses (median <= 10 %, p90 <= 20 %)";
	return h->med_abs_pct <= 5 && h->p90_abs_pct <= 15 ? "meets" : "misses";
}

int cmd_calibrate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"hw", required_argument, NULL, 'w'},
	    {"output", required_argument, NULL, 'o'},
	    {"name", required_argument, NULL, 'n'},
	    {"rules", required_argument, NULL, 'r'},
	    {"report", required_argument, NULL, 'R'},
	    {"no-tables", no_argument, NULL, 'T'},
	    {"no-shape-tables", no_argument, NULL, 'S'},
	    {"force", no_argument, NULL, 'f'},
	    {"exclude", required_argument, NULL, 'x'},
	    {"json", no_argument, NULL, 'j'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *base_name = "h200", *out = NULL, *name = NULL, *rules_name = "default", *report = NULL;
	const char *exclude = NULL;
	bool force = false, json = false, quiet = false;
	struct calib_fit_opts fo = {0};
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'w':
			base_name = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 'n':
			name = optarg;
			break;
		case 'r':
			rules_name = optarg;
			break;
		case 'R':
			report = optarg;
			break;
		case 'T':
			fo.no_tables = true;
			break;
		case 'S':
			fo.no_shape_tables = true;
			break;
		case 'x':
			exclude = optarg;
			break;
		case 'f':
			force = true;
			break;
		case 'j':
			json = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "k3sim calibrate: missing value for '%s'\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "k3sim calibrate: unknown option '%s'; see --help\n",
			        argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr,
		        "k3sim calibrate: no measurements given (trace databases or CSVs); see --help\n");
		return 2;
	}
	if (!out) {
		fprintf(stderr, "k3sim calibrate: no output: give -o OUT.yaml\n");
		return 2;
	}
	double t0 = now_s();
	struct err e = {0};
	/* The outputs are checked (and the preset locked) before the fit: the measurements, the base
	 * preset and the rules are inputs, never outputs. */
	struct outfile pof = {0};
	const char **in_files = calloc((size_t)(argc - optind) + 2, sizeof *in_files);
	size_t n_in = 0;
	if (!in_files) {
		fprintf(stderr, "k3sim calibrate: out of memory\n");
		return 1;
	}
	for (int i = optind; i < argc; i++)
		in_files[n_in++] = argv[i];
	in_files[n_in++] = base_name;
	in_files[n_in++] = rules_name;
	struct outfile_opts oo = {.force = force, .inputs = in_files, .n_inputs = n_in};
	struct outfile_opts report_oo = oo;
	if (outfile_open(&pof, out, &oo, &e) < 0) {
		cli_error("calibrate", &e);
		free(in_files);
		return 1;
	}
	if (report) {
		bool ours = false;
		int rc = outfile_dir_open(report, &ours, &e);
		report_oo.force = force || ours;
		if (rc < 0 || check_report(report, &report_oo, &e) < 0) {
			cli_error("calibrate", &e);
			outfile_abort(&pof);
			free(in_files);
			return 1;
		}
	}
	struct hw *base = malloc(sizeof *base), *fit = malloc(sizeof *fit), *loaded = malloc(sizeof *loaded);
	struct calib_points pts;
	struct calib_validation v = {0};
	struct calib_fit_report rep;
	struct calib_match first = {0};
	bool have_v = false;
	int status = 1;
	calib_points_init(&pts);
	if (!base || !fit || !loaded) {
		fprintf(stderr, "k3sim calibrate: out of memory\n");
		goto out;
	}
	if (hw_load(base, base_name, &e) < 0)
		goto fail;
	char inputs[2048];
	if (calib_points_add_files(&pts, argc - optind, argv + optind, rules_name, &first,
	                           inputs, sizeof inputs, &e) < 0)
		goto fail;
	if (exclude)
		calib_points_filter(&pts, exclude, false);
	if (pts.n == 0) {
		fprintf(stderr, "k3sim calibrate: %s: no measured op to fit\n", inputs);
		goto out;
	}
	if (calib_fit(&pts, base, &fo, fit, &rep, &e) < 0)
		goto fail;
	double t_fit = now_s();

	/* name, description and source of the new preset */
	char nm[64];
	const char *slash = strrchr(out, '/');
	snprintf(nm, sizeof nm, "%s", name ? name : slash ? slash + 1 : out);
	char *dot = strstr(nm, ".yaml");
	if (!name && dot)
		*dot = '\0';
	char date[16], cmdline[1024] = "k3sim";
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(date, sizeof date, "%Y-%m-%d", &tm);
	for (int i = 0; i < argc; i++)
		snprintf(cmdline + strlen(cmdline), sizeof cmdline - strlen(cmdline), " %s", argv[i]);
	snprintf(fit->name, sizeof fit->name, "%s", nm);
	char desc[128];
	snprintf(desc, sizeof desc, "%s", base->description);
	char *ds = strstr(desc, " (datasheet)");
	if (ds)
		*ds = '\0';
	snprintf(fit->description, sizeof fit->description, "%.60s, calibrated %s", desc, date);
	snprintf(fit->source, sizeof fit->source, "k3sim calibrate %s on %.100s; base preset %.60s (%.250s)",
	         date, pts.have_info && pts.info.device[0] ? pts.info.device : "measured kernels", base->name,
	         base->source);

	/* write, read back, validate what was read, write again with the held-out errors */
	struct calib_preset_meta meta = {
	    .base = base->name, .date = date, .command = cmdline, .pts = &pts, .fit = &rep};
	struct calib_class_summary cls[CALIB_CLASSES_MAX];
	if (write_preset(&pof, fit, &meta, &e) < 0 || load_preset(loaded, &pof, &e) < 0)
		goto fail;
	if (calib_validate(&v, &pts, loaded, &e) < 0)
		goto fail;
	have_v = true;
	summarize(&v, cls, &meta.n_classes);
	meta.classes = cls;
	if (write_preset(&pof, loaded, &meta, &e) < 0 || load_preset(loaded, &pof, &e) < 0 ||
	    outfile_commit(&pof, &e) < 0)
		goto fail;
	double t_done = now_s();

	if (report) {
		char note[1024] = "", path[4200];
		struct calib_report_in in = {.title = "Calibration: held-out validation",
		                             .database = inputs,
		                             .match = first.kernels || first.memcpys ? &first : NULL,
		                             .v = &v,
		                             .top = 5};
		int pr = calib_plots(&v, report, "calibration", getenv("K3SIM_GNUPLOT"), &report_oo, note,
		                     sizeof note, &e);
		if (pr < 0)
			goto fail;
		if (pr == 0) {
			in.scatter_svg = "calibration-scatter.svg";
			in.error_svg = "calibration-error.svg";
		} else {
			in.plot_note = note;
		}
		snprintf(path, sizeof path, "%s/calibration.md", report);
		struct outfile rof;
		if (outfile_open(&rof, path, &report_oo, &e) < 0)
			goto fail;
		FILE *f = outfile_stream(&rof, &e);
		if (!f || calib_report_markdown(f, &in, &e) < 0) {
			outfile_abort(&rof);
			goto fail;
		}
		if (outfile_commit(&rof, &e) < 0 || outfile_dir_mark(report, "k3sim calibrate", &e) < 0)
			goto fail;
	}
	if (json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_begin_object(&w, NULL);
		jw_str(&w, "output", out);
		jw_str(&w, "name", loaded->name);
		jw_str(&w, "base", base->name);
		jw_i64(&w, "points", (int64_t)pts.n);
		jw_i64(&w, "train_points", rep.train_points);
		jw_i64(&w, "held_out_points", rep.held_out_points);
		jw_f64(&w, "fit_s", t_fit - t0);
		jw_f64(&w, "total_s", t_done - t0);
		jw_f64(&w, "launch_latency_us", loaded->launch_latency_s * 1e6);
		jw_f64(&w, "gemm_wave_smoothing", loaded->gemm_wave_smoothing);
		jw_i64(&w, "tables", loaded->n_tables);
		jw_i64(&w, "gemm_shapes", loaded->n_gemm_points);
		jw_begin_array(&w, "classes");
		for (int c = 0; c < v.n_cls; c++) {
			jw_begin_object(&w, NULL);
			jw_str(&w, "class", v.cls[c].label);
			jw_i64(&w, "train", v.cls[c].train.n);
			jw_i64(&w, "held_out", v.cls[c].held_out.n);
			if (v.cls[c].held_out.n) {
				jw_f64(&w, "held_out_median_abs_pct", v.cls[c].held_out.med_abs_pct);
				jw_f64(&w, "held_out_p90_abs_pct", v.cls[c].held_out.p90_abs_pct);
			}
			if (v.cls[c].train.n) {
				jw_f64(&w, "train_median_abs_pct", v.cls[c].train.med_abs_pct);
				jw_f64(&w, "train_p90_abs_pct", v.cls[c].train.p90_abs_pct);
			}
			jw_str(&w, "target", verdict(v.cls[c].label, &v.cls[c].held_out));
			jw_end_object(&w);
		}
		jw_end_array(&w);
		jw_end_object(&w);
		jw_finish(&w);
	} else if (!quiet) {
		printf("%s: %zu measured ops (%d train, %d held out) from %s\n", out, pts.n, rep.train_points,
		       rep.held_out_points, inputs);
		printf("fit: latency floor %.2f us, memory eff %.3f (half %.2f MiB), L2 %.0f GB/s, GEMM eff "
		       "%.3f (half %.3g"
		       " GFLOP), wave smoothing %.2f; %d tables, %d GEMM shapes\n",
		       loaded->launch_latency_s * 1e6, loaded->eff_memory.max,
		       loaded->eff_memory.half / 1048576.0, loaded->l2_bw_bytes_per_s / 1e9,
		       loaded->eff_gemm.max, loaded->eff_gemm.half / 1e9, loaded->gemm_wave_smoothing,
		       loaded->n_tables, loaded->n_gemm_points);
		for (int i = 0; i < loaded->n_coll; i++) {
			const struct hw_coll_model *m = &loaded->coll[i];
			printf("%s%s", i ? ", " : "collectives: ", hw_coll_name(m->coll));
			if (m->ranks)
				printf(" x%lld", (long long)m->ranks);
			printf(" %.2f us/step, %.0f GB/s bus", m->step_latency_s * 1e6,
			       m->eff.max * loaded->nvlink_bw_bytes_per_s / 1e9);
			if (i + 1 == loaded->n_coll)
				printf("\n");
		}
		printf("\n%-18s %6s %8s %12s %12s  %s\n", "class", "train", "held out", "held med %",
		       "held p90 %", "target (median <= 5 %, p90 <= 15 %)");
		for (int c = 0; c < v.n_cls; c++) {
			const struct calib_errors *h = &v.cls[c].held_out;
			printf("%-18s %6d %8d %12.2f %12.2f  %s\n", v.cls[c].label, v.cls[c].train.n, h->n,
			       h->med_abs_pct, h->p90_abs_pct, verdict(v.cls[c].label, h));
		}
		printf("\ncalibrated in %.2f s (fit %.2f s); wrote %s%s%s\n", t_done - t0, t_fit - t0, out,
		       report ? " and " : "", report ? report : "");
	}
	status = 0;
	goto out;
fail:
	cli_error("calibrate", &e);
out:
	outfile_abort(&pof);
	free(in_files);
	if (have_v)
		calib_validation_release(&v);
	calib_match_release(&first);
	calib_points_release(&pts);
	free(base);
	free(fit);
	free(loaded);
	return status;
}
