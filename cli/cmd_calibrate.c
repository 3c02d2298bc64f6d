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
#include "calib/runs.h"
#include "calib/validate.h"
#include "reports/calib.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "util/outfile.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: k3sim calibrate [INPUT...] [--run NAME=FILE[,FILE...]]... [--hw BASE] -o OUT.yaml\n"
	        "                       [options]\n\n"
	        "Fit the hardware model to measured kernels and write a hardware preset that every\n"
	        "command takes (--hw OUT.yaml). INPUTs are trace databases (k3sim trace capture or\n"
	        "import, nsys SQLite exports; kernels matched to ops as in 'k3sim trace validate') or\n"
	        "CSVs of measurements (calib-grid's, the KDA bench's).\n\n"
	        "Runs: each INPUT is a run of its own (a separate device session); --run groups files\n"
	        "of one session (a capture and its CSV) under a name. A point is one op: the median\n"
	        "over runs of each run's median, with the run-to-run spread beside it. An op whose\n"
	        "runs ran different kernels (another build, a library picking another kernel) is\n"
	        "warned about on stderr (JSON: mixed_kernel_ops): its median mixes two code paths.\n\n"
	        "Protocol: the fit sees training points only; errors are reported on held-out points\n"
	        "only (GEMM m, KDA decode b and the tokens of attnres, route, combine, short_conv and\n"
	        "quant not a power of 4, copy sizes not a power of 2, ...). It\n"
	        "fits the per-kernel latency floor, memory and GEMM efficiency curves, L2 bandwidth,\n"
	        "GEMM wave smoothing, KDA chunk-step cycles and collective curves where measured, then\n"
	        "tables of the efficiency that remains per class and dtype (and per GEMM shape).\n"
	        "Cross-validation refits with data held out and scores what each fit never saw:\n"
	        "by run (leave-one-run-out, two runs or more; beside it the run floor, the other runs'\n"
	        "median as the prediction) and by GEMM shape (leave-one-(n,k)-out, every m). See\n"
	        "docs/CALIBRATION.md.\n\n"
	        "SOURCE_DATE_EPOCH (seconds since 1970), when set, is the calibration date the preset\n"
	        "records, so a script that regenerates a preset gets the same bytes on any day.\n\n"
	        "options:\n"
	        "  --run NAME=FILES    FILES (comma separated) are one run named NAME; repeatable\n"
	        "  --hw BASE           the preset to start from (default h200)\n"
	        "  -o, --output PATH   the preset to write (required)\n"
	        "  --name NAME         the preset's name (default: the output's file name)\n"
	        "  --rules R           kernel-name rules: default, none, or a YAML file\n"
	        "  --report DIR        write DIR/calibration.md and .json (held-out validation,\n"
	        "                      cross-validation, runs) with charts (a directory k3sim made\n"
	        "                      is refreshed; elsewhere existing files take --force)\n"
	        "  --no-tables         fit the curves only, no efficiency tables\n"
	        "  --no-shape-tables   no per-GEMM-shape tables (what unseen shapes get)\n"
	        "  --no-xval           skip the cross-validation (by run, by GEMM shape)\n"
	        "  --source TEXT       what the measurements are (where from, license), written as\n"
	        "                      the preset's source: (default: the device and the base's)\n"
	        "  --clock boost|measured\n"
	        "                      the clock the measurements are taken at: boost (default), or\n"
	        "                      measured: the SM clock each capture recorded around each op\n"
	        "                      (K3SIM_GPU_METRICS, as trace validate --clock measured reads it);\n"
	        "                      a point below boost is taken to its time at boost through the\n"
	        "                      base preset's clock laws (the physical model's ratio, clock_bound,\n"
	        "                      clock_scaled_excess) before the fit (a power-capped bench then fits\n"
	        "                      the boost-clock efficiencies the preset holds)\n"
	        "  --exclude GLOB      leave out the ops whose spec matches (e.g. 'gemm m=* n=96 k=7168 *');\n"
	        "                      repeatable (at most 16)\n"
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

static int write_report(const char *path, const struct outfile_opts *oo, const struct calib_report_in *in,
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

/* The report's files (calibration.md, .json and the charts), checked before anything is written. */
static int check_report(const char *dir, const struct outfile_opts *oo, struct err *e)
{
	static const char *const names[] = {".md", ".json", NULL};
	char path[4200];
	int rc = 0;
	for (int i = 0; names[i] && rc == 0; i++) {
		snprintf(path, sizeof path, "%s/calibration%s", dir, names[i]);
		rc = outfile_check(path, oo, e);
	}
	for (int i = 0; calib_plot_files[i] && rc == 0; i++) {
		snprintf(path, sizeof path, "%s/calibration%s", dir, calib_plot_files[i]);
		rc = outfile_check(path, oo, e);
	}
	return rc;
}

static void summarize(const struct calib_validation *v, const struct calib_xval *x,
                      struct calib_class_summary *out, int *n)
{
	*n = 0;
	for (int c = 0; c < v->n_cls; c++) {
		struct calib_class_summary *s = &out[(*n)++];
		const struct calib_class_stats *cs = &v->cls[c];
		const struct calib_xval_class *xc = calib_xval_class(x, cs->label);
		snprintf(s->label, sizeof s->label, "%s", cs->label);
		s->train = cs->train.n;
		s->held_out = cs->held_out.n;
		s->held_med_pct = cs->held_out.n ? cs->held_out.med_abs_pct : -1;
		s->held_p90_pct = cs->held_out.n ? cs->held_out.p90_abs_pct : -1;
		s->run_med_pct = xc && xc->by_run.n ? xc->by_run.med_abs_pct : -1;
		s->run_p90_pct = xc && xc->by_run.n ? xc->by_run.p90_abs_pct : -1;
		s->shape_med_pct = xc && xc->by_gemm_shape.n ? xc->by_gemm_shape.med_abs_pct : -1;
		s->shape_p90_pct = xc && xc->by_gemm_shape.n ? xc->by_gemm_shape.p90_abs_pct : -1;
		s->noise_points = cs->noise.n;
		s->noise_med_pct = cs->noise.n ? cs->noise.med_pct : -1;
		s->noise_p90_pct = cs->noise.n ? cs->noise.p90_pct : -1;
	}
}

static bool is_comm(const char *label)
{
	return strcmp(label, "allreduce") == 0 || strcmp(label, "allgather") == 0 ||
	       strcmp(label, "reducescatter") == 0 || strcmp(label, "alltoall") == 0;
}

/* The issues' targets, per protocol: median <= 5 %, p90 <= 15 % (collectives: 10 % and 20 %;
 * unseen GEMM shapes: 6 % and 15 %). "meets", or "misses: " and the protocols that miss. */
static const char *verdict(const char *label, const struct calib_errors *h, const struct calib_xval_class *xc,
                           char *buf, size_t n)
{
	const double med = is_comm(label) ? 10 : 5, p90 = is_comm(label) ? 20 : 15;
	const struct calib_errors *by_run = xc ? &xc->by_run : NULL, *by_shape = xc ? &xc->by_gemm_shape : NULL;
	if (h->n == 0 && (!by_run || !by_run->n) && (!by_shape || !by_shape->n))
		return "no held-out points";
	snprintf(buf, n, "misses:");
	bool miss = false;
	if (h->n && !(h->med_abs_pct <= med && h->p90_abs_pct <= p90)) {
		snprintf(buf + strlen(buf), n - strlen(buf), " shape");
		miss = true;
	}
	if (by_run && by_run->n && !(by_run->med_abs_pct <= med && by_run->p90_abs_pct <= p90)) {
		snprintf(buf + strlen(buf), n - strlen(buf), "%s run", miss ? "," : "");
		miss = true;
	}
	if (by_shape && by_shape->n && !(by_shape->med_abs_pct <= 6 && by_shape->p90_abs_pct <= 15)) {
		snprintf(buf + strlen(buf), n - strlen(buf), "%s GEMM shape", miss ? "," : "");
		miss = true;
	}
	return miss ? buf : "meets";
}

/* "med / p90" of absolute % errors, or "-" */
static const char *cell(double med, double p90, int n, char *buf, size_t size)
{
	if (n <= 0 || isnan(med))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.2f / %.2f", med, p90);
	return buf;
}

enum { EXCLUDE_MAX = 16 };

struct run_opts {
	const char *base_name, *out, *name, *rules_name, *report, *source;
	const char *exclude[EXCLUDE_MAX];
	int n_exclude;
	bool xval, force, json, quiet;
	bool at_boost; /* --clock measured */
};

static int run(const struct calib_inputs *ins, const struct run_opts *ro, const struct calib_fit_opts *fo_in,
               int argc, char **argv);

/* A kernel's name as a warning shows it: a demangled C++ name without its return type, namespaces
 * and template or parameter lists ("void (anonymous namespace)::wg_kernel<...>(...)" -> wg_kernel). */
static const char *kernel_short(const char *name, char *buf, size_t n)
{
	if (!name)
		return "(unnamed)";
	const char *s = name, *end = name + strlen(name);
	if (strncmp(s, "void ", 5) == 0)
		s += 5;
	for (const char *p = s; *p && *p != '<' && *p != '('; p++)
		if (p[0] == ':' && p[1] == ':')
			s = p + 2;
	if (strncmp(s, "(anonymous namespace)::", 23) == 0)
		s += 23;
	const char *e = s;
	while (e < end && *e != '<' && (*e != '(' || e == s))
		e++;
	snprintf(buf, n, "%.*s", (int)(e - s), s);
	return buf[0] ? buf : name;
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
	    {"clock", required_argument, NULL, 'c'},
	    {"run", required_argument, NULL, 'U'},
	    {"no-xval", no_argument, NULL, 'X'},
	    {"source", required_argument, NULL, 's'},
	    {"json", no_argument, NULL, 'j'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *base_name = "h200", *out = NULL, *name = NULL, *rules_name = "default", *report = NULL;
	const char *exclude[EXCLUDE_MAX], *source = NULL;
	int n_exclude = 0;
	bool force = false, json = false, quiet = false, xval = true, at_boost = false;
	struct calib_fit_opts fo = {0};
	struct calib_inputs ins;
	struct err e = {0};
	int ch, status = 1;
	calib_inputs_init(&ins);
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
			if (n_exclude == EXCLUDE_MAX) {
				fprintf(stderr, "k3sim calibrate: more than %d --exclude\n", EXCLUDE_MAX);
				status = 2;
				goto done;
			}
			exclude[n_exclude++] = optarg;
			break;
		case 'U':
			if (calib_inputs_add_run(&ins, optarg, &e) < 0) {
				fprintf(stderr, "k3sim calibrate: %s\n", e.msg);
				status = 2;
				goto done;
			}
			break;
		case 'X':
			xval = false;
			break;
		case 'c':
			if (strcmp(optarg, "boost") == 0 || strcmp(optarg, "measured") == 0) {
				at_boost = optarg[0] == 'm';
			} else {
				fprintf(stderr, "k3sim calibrate: --clock takes boost or measured, not '%s'\n",
				        optarg);
				status = 2;
				goto done;
			}
			break;
		case 's':
			if (strlen(optarg) > 300) {
				fprintf(stderr, "k3sim calibrate: --source: longer than 300 bytes\n");
				status = 2;
				goto done;
			}
			source = optarg;
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
			status = 0;
			goto done;
		case ':':
			fprintf(stderr, "k3sim calibrate: missing value for '%s'\n", argv[optind - 1]);
			status = 2;
			goto done;
		default:
			fprintf(stderr, "k3sim calibrate: unknown option '%s'; see --help\n",
			        argv[optind - 1]);
			status = 2;
			goto done;
		}
	}
	for (int i = optind; i < argc; i++)
		if (calib_inputs_add_path(&ins, argv[i], &e) < 0) {
			fprintf(stderr, "k3sim calibrate: %s\n", e.msg);
			status = 2;
			goto done;
		}
	if (ins.n == 0) {
		fprintf(stderr,
		        "k3sim calibrate: no measurements given (trace databases or CSVs); see --help\n");
		status = 2;
		goto done;
	}
	if (!out) {
		fprintf(stderr, "k3sim calibrate: no output: give -o OUT.yaml\n");
		status = 2;
		goto done;
	}
	struct run_opts ro = {.base_name = base_name, .out = out, .name = name, .rules_name = rules_name,
	                      .report = report, .source = source, .xval = xval, .force = force,
	                      .json = json, .quiet = quiet, .n_exclude = n_exclude, .at_boost = at_boost};
	memcpy(ro.exclude, exclude, (size_t)n_exclude * sizeof *exclude);
	status = run(&ins, &ro, &fo, argc, argv);
done:
	calib_inputs_release(&ins);
	return status;
}

/* The calibration date: SOURCE_DATE_EPOCH when set (reproducible outputs:
 * https://reproducible-builds.org/specs/source-date-epoch/), else now; UTC. 0 or -EINVAL. */
static int calib_date(char *buf, size_t n, struct err *e)
{
	time_t t = time(NULL);
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	if (sde && *sde) {
		char *end;
		errno = 0;
		long long v = strtoll(sde, &end, 10);
		if (errno || *end || v < 0 || v > 253402300799LL) {
			err_set(e, NULL, 0, 0, "SOURCE_DATE_EPOCH '%s' is not a count of seconds since 1970", sde);
			return -EINVAL;
		}
		t = (time_t)v;
	}
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%d", &tm);
	return 0;
}

static int run(const struct calib_inputs *ins, const struct run_opts *ro, const struct calib_fit_opts *fo_in,
               int argc, char **argv)
{
	const char *base_name = ro->base_name, *out = ro->out, *name = ro->name, *rules_name = ro->rules_name,
	           *report = ro->report;
	const bool xval = ro->xval, force = ro->force, json = ro->json, quiet = ro->quiet;
	double t0 = now_s();
	struct err e = {0};
	struct calib_fit_opts fo = *fo_in;
	/* The outputs are checked (and the preset locked) before the fit: the measurements, the base
	 * preset and the rules are inputs, never outputs. */
	struct outfile pof = {0};
	const char *in_files[CALIB_SOURCES_MAX + 2];
	size_t n_in = 0;
	for (int i = 0; i < ins->n; i++)
		in_files[n_in++] = ins->in[i].path;
	in_files[n_in++] = base_name;
	in_files[n_in++] = rules_name;
	struct outfile_opts oo = {.force = force, .inputs = in_files, .n_inputs = n_in};
	struct outfile_opts report_oo = oo;
	if (outfile_open(&pof, out, &oo, &e) < 0) {
		cli_error("calibrate", &e);
		return 1;
	}
	if (report) {
		bool ours = false;
		int drc = outfile_dir_open(report, &ours, &e);
		report_oo.force = force || ours;
		if (drc < 0 || check_report(report, &report_oo, &e) < 0) {
			cli_error("calibrate", &e);
			outfile_abort(&pof);
			return 1;
		}
	}
	struct hw *base = malloc(sizeof *base), *fit = malloc(sizeof *fit), *loaded = malloc(sizeof *loaded);
	struct calib_points raw, pts;
	struct calib_validation v = {0};
	struct calib_xval xv = {0};
	struct calib_fit_report rep;
	struct calib_match first = {0};
	bool have_v = false, have_pts = false;
	int status = 1;
	calib_points_init(&raw);
	if (!base || !fit || !loaded) {
		fprintf(stderr, "k3sim calibrate: out of memory\n");
		goto out;
	}
	if (hw_load(base, base_name, &e) < 0)
		goto fail;
	char inputs[2048];
	if (calib_points_add_inputs(&raw, ins, rules_name, &first, inputs, sizeof inputs, &e) < 0)
		goto fail;
	for (int i = 0; i < ro->n_exclude; i++)
		calib_points_filter(&raw, ro->exclude[i], false);
	if (ro->at_boost) {
		int scaled;
		if (calib_points_at_boost(&raw, base, &scaled, &e) < 0)
			goto fail;
		if (!quiet && !json)
			fprintf(stderr,
			        "k3sim calibrate: %d of %zu measured points scaled to the boost clock (%.0f MHz)"
			        " from the clock their capture recorded\n",
			        scaled, raw.n, base->sm_clock_hz / 1e6);
		for (int s = 0; s < raw.n_sources; s++)
			if (raw.source_clock_readings[s] <= 0)
				fprintf(stderr,
				        "k3sim calibrate: %s: no SM clock readings (K3SIM_GPU_METRICS): taken as "
				        "measured at the boost clock\n",
				        raw.sources[s]);
	}
	int rc = calib_points_by_op(&pts, &raw, NULL, &e);
	have_pts = true;
	if (rc < 0)
		goto fail;
	const struct calib_point *mx;
	size_t n_mixed = calib_points_mixed(&pts, &mx);
	if (n_mixed) {
		char ka[96], kb[96];
		fprintf(stderr,
		        "k3sim calibrate: warning: %zu op%s ran different kernels in different runs, e.g. `%s`: "
		        "%s (%s) against %s (%s); each point is the median over runs, so %s two code paths: "
		        "calibrate on runs of one build (--exclude the op, or leave a run out)\n",
		        n_mixed, n_mixed == 1 ? "" : "s", mx->spec, kernel_short(mx->kernel, ka, sizeof ka),
		        raw.sources[mx->source >= 0 && mx->source < raw.n_sources ? mx->source : 0],
		        kernel_short(mx->kernel_other, kb, sizeof kb),
		        mx->kernel_other_run >= 0 && mx->kernel_other_run < raw.n_runs ? raw.runs[mx->kernel_other_run].name
		                                                                       : "another run",
		        n_mixed == 1 ? "it mixes" : "they mix");
	}
	if (pts.n == 0) {
		fprintf(stderr, "k3sim calibrate: %s: no measured op to fit\n", inputs);
		goto out;
	}
	if (calib_fit(&pts, base, &fo, fit, &rep, &e) < 0)
		goto fail;
	double t_fit = now_s();
	if (xval && calib_xval(&xv, &raw, base, &fo, &e) < 0)
		goto fail;
	double t_xval = now_s();

	/* name, description and source of the new preset */
	char nm[64];
	const char *slash = strrchr(out, '/');
	snprintf(nm, sizeof nm, "%s", name ? name : slash ? slash + 1 : out);
	char *dot = strstr(nm, ".yaml");
	if (!name && dot)
		*dot = '\0';
	char date[16], cmdline[1024] = "k3sim";
	if (calib_date(date, sizeof date, &e) < 0)
		goto fail;
	for (int i = 0; i < argc; i++)
		snprintf(cmdline + strlen(cmdline), sizeof cmdline - strlen(cmdline), " %s", argv[i]);
	snprintf(fit->name, sizeof fit->name, "%s", nm);
	char desc[128];
	snprintf(desc, sizeof desc, "%s", base->description);
	char *ds = strstr(desc, " (datasheet)");
	if (ds)
		*ds = '\0';
	snprintf(fit->description, sizeof fit->description, "%.60s, calibrated %s", desc, date);
	if (ro->source)
		snprintf(fit->source, sizeof fit->source, "%s; k3sim calibrate %s; base preset %.60s", ro->source,
		         date, base->name);
	else
		snprintf(fit->source, sizeof fit->source, "k3sim calibrate %s on %.100s; base preset %.60s (%.250s)",
		         date, pts.have_info && pts.info.device[0] ? pts.info.device : "measured kernels",
		         base->name, base->source);

	/* write, read back, validate what was read, write again with the held-out errors */
	struct calib_preset_meta meta = {
	    .base = base->name, .date = date, .command = cmdline, .pts = &pts, .fit = &rep};
	struct calib_class_summary cls[CALIB_CLASSES_MAX];
	if (write_preset(&pof, fit, &meta, &e) < 0 || load_preset(loaded, &pof, &e) < 0)
		goto fail;
	if (calib_validate(&v, &pts, loaded, &e) < 0)
		goto fail;
	have_v = true;
	summarize(&v, &xv, cls, &meta.n_classes);
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
		                             .xval = xval ? &xv : NULL,
		                             .top = 5};
		int pr = calib_plots(&v, report, "calibration", getenv("K3SIM_GNUPLOT"), &report_oo, note,
		                     sizeof note, &e);
		if (pr < 0)
			goto fail;
		if (pr == 0) {
			in.scatter_img = "calibration-scatter.png";
			in.error_img = "calibration-error.png";
		} else {
			in.plot_note = note;
		}
		snprintf(path, sizeof path, "%s/calibration.md", report);
		if (write_report(path, &report_oo, &in, false, &e) < 0)
			goto fail;
		snprintf(path, sizeof path, "%s/calibration.json", report);
		if (write_report(path, &report_oo, &in, true, &e) < 0 ||
		    outfile_dir_mark(report, "k3sim calibrate", &e) < 0)
			goto fail;
	}
	char vb[128];
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
		jw_i64(&w, "mixed_kernel_ops", (int64_t)n_mixed);
		jw_f64(&w, "fit_s", t_fit - t0);
		jw_f64(&w, "xval_s", t_xval - t_fit);
		jw_f64(&w, "total_s", t_done - t0);
		jw_f64(&w, "launch_latency_us", loaded->launch_latency_s * 1e6);
		jw_f64(&w, "gemm_wave_smoothing", loaded->gemm_wave_smoothing);
		jw_i64(&w, "tables", loaded->n_tables);
		jw_i64(&w, "gemm_shapes", loaded->n_gemm_points);
		jw_begin_array(&w, "runs");
		for (int r = 0; r < pts.n_runs; r++) {
			const struct calib_run *run = &pts.runs[r];
			jw_begin_object(&w, NULL);
			jw_str(&w, "name", run->name);
			jw_i64(&w, "sources", run->n_sources);
			if (run->have_info) {
				jw_str(&w, "device", run->info.device);
				if (run->info.uuid[0])
					jw_str(&w, "uuid", run->info.uuid);
				if (run->info.sm_clock_hz > 0)
					jw_f64(&w, "sm_clock_mhz", (double)run->info.sm_clock_hz / 1e6);
			}
			const struct calib_xval_run *xr = xval && r < xv.n_runs ? &xv.runs[r] : NULL;
			if (xr && xr->fitted && xr->err.n) {
				jw_i64(&w, "held_out_points", xr->err.n);
				jw_f64(&w, "by_run_median_abs_pct", xr->err.med_abs_pct);
				jw_f64(&w, "by_run_p90_abs_pct", xr->err.p90_abs_pct);
				jw_f64(&w, "run_floor_median_abs_pct", xr->floor.med_abs_pct);
				jw_f64(&w, "run_floor_p90_abs_pct", xr->floor.p90_abs_pct);
			}
			jw_end_object(&w);
		}
		jw_end_array(&w);
		jw_begin_array(&w, "classes");
		for (int c = 0; c < v.n_cls; c++) {
			const struct calib_class_stats *cs = &v.cls[c];
			const struct calib_xval_class *xc = calib_xval_class(xval ? &xv : NULL, cs->label);
			jw_begin_object(&w, NULL);
			jw_str(&w, "class", cs->label);
			jw_i64(&w, "train", cs->train.n);
			jw_i64(&w, "held_out", cs->held_out.n);
			if (cs->held_out.n) {
				jw_f64(&w, "held_out_median_abs_pct", cs->held_out.med_abs_pct);
				jw_f64(&w, "held_out_p90_abs_pct", cs->held_out.p90_abs_pct);
			}
			if (cs->train.n) {
				jw_f64(&w, "train_median_abs_pct", cs->train.med_abs_pct);
				jw_f64(&w, "train_p90_abs_pct", cs->train.p90_abs_pct);
			}
			jw_i64(&w, "spread_points", cs->noise.n);
			if (cs->noise.n) {
				jw_f64(&w, "spread_median_pct", cs->noise.med_pct);
				jw_f64(&w, "spread_p90_pct", cs->noise.p90_pct);
			}
			if (xc && xc->by_run.n) {
				jw_i64(&w, "by_run_points", xc->by_run.n);
				jw_f64(&w, "by_run_median_abs_pct", xc->by_run.med_abs_pct);
				jw_f64(&w, "by_run_p90_abs_pct", xc->by_run.p90_abs_pct);
				jw_f64(&w, "run_floor_median_abs_pct", xc->run_floor.med_abs_pct);
				jw_f64(&w, "run_floor_p90_abs_pct", xc->run_floor.p90_abs_pct);
			}
			if (xc && xc->by_gemm_shape.n) {
				jw_i64(&w, "by_gemm_shape_points", xc->by_gemm_shape.n);
				jw_f64(&w, "by_gemm_shape_median_abs_pct", xc->by_gemm_shape.med_abs_pct);
				jw_f64(&w, "by_gemm_shape_p90_abs_pct", xc->by_gemm_shape.p90_abs_pct);
			}
			jw_str(&w, "target", verdict(cs->label, &cs->held_out, xc, vb, sizeof vb));
			jw_end_object(&w);
		}
		jw_end_array(&w);
		jw_end_object(&w);
		jw_finish(&w);
	} else if (!quiet) {
		printf("%s: %zu measured ops (%d train, %d held out) from %d run%s: %s\n", out, pts.n,
		       rep.train_points, rep.held_out_points, pts.n_runs, pts.n_runs == 1 ? "" : "s", inputs);
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
		printf("\nabsolute %% error, median / p90: held out by shape (the protocol), by run (leave one run "
		       "out),\nby GEMM shape (leave one (n, k) out); run spread: (max - min) / median over runs\n");
		printf("%-18s %6s %8s  %-15s  %-15s  %-15s  %-15s  %s\n", "class", "train", "held out",
		       "by shape", "by run", "by GEMM shape", "run spread", "target (median <= 5 %, p90 <= 15 %)");
		for (int c = 0; c < v.n_cls; c++) {
			const struct calib_class_stats *cs = &v.cls[c];
			const struct calib_errors *h = &cs->held_out;
			const struct calib_xval_class *xc = calib_xval_class(xval ? &xv : NULL, cs->label);
			char a[32], b[32], g[32], n[32];
			printf("%-18s %6d %8d  %-15s  %-15s  %-15s  %-15s  %s\n", cs->label, cs->train.n, h->n,
			       cell(h->med_abs_pct, h->p90_abs_pct, h->n, a, sizeof a),
			       cell(xc ? xc->by_run.med_abs_pct : NAN, xc ? xc->by_run.p90_abs_pct : NAN,
			            xc ? xc->by_run.n : 0, b, sizeof b),
			       cell(xc ? xc->by_gemm_shape.med_abs_pct : NAN,
			            xc ? xc->by_gemm_shape.p90_abs_pct : NAN, xc ? xc->by_gemm_shape.n : 0, g,
			            sizeof g),
			       cell(cs->noise.med_pct, cs->noise.p90_pct, cs->noise.n, n, sizeof n),
			       verdict(cs->label, h, xc, vb, sizeof vb));
		}
		if (xval && xv.n_runs) {
			printf("\nheld out by run (the fit to the other runs; floor: their median as the "
			       "prediction)\n%-40s %7s %9s  %-15s  %-15s\n",
			       "run", "points", "unpaired", "model", "floor");
			for (int r = 0; r < xv.n_runs; r++) {
				const struct calib_xval_run *xr = &xv.runs[r];
				char a[32], b[32];
				if (!xr->fitted) {
					printf("%-40.40s not fitted: %s\n", xr->name, xr->note);
					continue;
				}
				printf("%-40.40s %7d %9d  %-15s  %-15s\n", xr->name, xr->err.n, xr->unpaired,
				       cell(xr->err.med_abs_pct, xr->err.p90_abs_pct, xr->err.n, a, sizeof a),
				       cell(xr->floor.med_abs_pct, xr->floor.p90_abs_pct, xr->floor.n, b,
				            sizeof b));
			}
		}
		printf("\ncalibrated in %.2f s (fit %.2f s, cross-validation %.2f s: %d fits); wrote %s%s%s\n",
		       t_done - t0, t_fit - t0, t_xval - t_fit, xv.fits, out, report ? " and " : "",
		       report ? report : "");
	}
	status = 0;
	goto out;
fail:
	cli_error("calibrate", &e);
out:
	outfile_abort(&pof);
	if (have_v)
		calib_validation_release(&v);
	calib_xval_release(&xv);
	calib_match_release(&first);
	if (have_pts)
		calib_points_release(&pts);
	calib_points_release(&raw);
	free(base);
	free(fit);
	free(loaded);
	return status;
}
