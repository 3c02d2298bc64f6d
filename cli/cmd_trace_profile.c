/* k3sim trace profile TRACE [--hw H] [--json] ...: a program's GPU work against the model, per op
 * class and per step (calib/profile.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/profile.h"
#include "cli/cli.h"
#include "cli/commands.h"
#include "trace/import/import.h"
#include "trace/db/tracedb.h"

enum { STEP_GLOBS_MAX = 16 };

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: k3sim trace profile TRACE [--hw NAME|PATH] [--step GLOB]... [options]\n\n"
	        "A program's GPU kernels against the model: each kernel mapped to a model op with full\n"
	        "shapes, predicted by the cost model (device time, launch gaps left out), and compared\n"
	        "per op class and per step. TRACE is a trace database (k3sim trace capture, import, an\n"
	        "nsys SQLite export) or a Kineto/Chrome JSON file (torch.profiler), which is imported\n"
	        "with its operator records (trace import --cpu-ops) on the way.\n\n"
	        "Shapes come, in this order, from NVTX ranges in `k3sim op` syntax; from the\n"
	        "framework's own records of the call that launched the kernel (PyTorch under\n"
	        "emit_nvtx(record_shapes=True), or torch.profiler with record_shapes=True), turned into\n"
	        "ops by derivation rules (trace/rules/aten.yaml: mm/addmm/bmm/linear/matmul -> gemm,\n"
	        "_grouped_mm -> grouped_gemm, SDPA/flash -> attention, NCCL -> collectives, the rest ->\n"
	        "memory-bound ops by bytes); else from kernel-name rules. What maps to no op is listed\n"
	        "by name with the reason.\n\n"
	        "Steps are the ranges whose name matches a --step glob (default: prefill, decode,\n"
	        "*_prefill, *_decode, *step, ProfilerStep#*): the kernels launched inside one. Without\n"
	        "such ranges, steps are found by repetition: the top-level framework record that\n"
	        "recurs (3 times or more) and splits the kernels evenly starts each step (an HF\n"
	        "model's aten::embedding). Per\n"
	        "step: GPU span, busy time, idle split into host-bound gaps (the GPU waited for a\n"
	        "launch) and other gaps; a step idle on the host for half its span or more is flagged\n"
	        "CPU-bound: its span measures the host, and the whole-step error is not model error.\n\n"
	        "options:\n"
	        "  --hw NAME|PATH      hardware preset or YAML (default h200)\n"
	        "  --step GLOB         a step marker's name (the range text before the first ',');\n"
	        "                      repeatable, replaces the defaults\n"
	        "  --step-start GLOB   a range that starts each step (the next one ends it), e.g.\n"
	        "                      'aten::embedding'; 'auto': by repetition even where step\n"
	        "                      ranges exist\n"
	        "  --derive R          derivation rules: default, none, or a YAML file\n"
	        "  --rules R           kernel-name rules: default, none, or a YAML file\n"
	        "  --dtype D           element type where a record gives none (emit_nvtx): bf16\n"
	        "  --ranks N           ranks of collectives whose records do not say\n"
	        "  --top N             ops and unmapped kernels listed (default 12)\n"
	        "  --steps N           steps listed one by one (default 40; the rest are summed)\n"
	        "  --json              print JSON instead of tables\n"
	        "  -h, --help          this text\n");
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

static double err_pct(double pred_s, int64_t meas_ns)
{
	return meas_ns > 0 ? (pred_s - (double)meas_ns / 1e9) / ((double)meas_ns / 1e9) * 100.0 : NAN;
}

static void print_classes(FILE *f, const struct calib_profile *p, const struct calib_pclass_sum *cls)
{
	fprintf(f, "  %-18s %8s %8s %12s %12s %9s %12s\n", "class", "kernels", "ops", "measured ms", "predicted ms",
	        "error %", "+launch ms");
	for (int c = 0; c < p->n_cls; c++) {
		const struct calib_pclass_sum *s = &cls[c];
		if (!s->kernels && !s->ops)
			continue;
		if (c == p->n_cls - 1)
			fprintf(f, "  %-18s %8" PRId64 " %8s %12.3f %12s %9s\n", p->cls_label[c], s->kernels, "-",
			        ms(s->measured_ns), "-", "-");
		else
			fprintf(f, "  %-18s %8" PRId64 " %8" PRId64 " %12.3f %12.3f %+9.1f %12.3f\n", p->cls_label[c],
			        s->kernels, s->ops, ms(s->measured_ns), s->predicted_s * 1e3,
			        err_pct(s->predicted_s, s->measured_ns), s->predicted_launch_s * 1e3);
	}
}

/* Whole-step prediction: the mapped ops' predictions plus the unmapped kernels as measured. */
static double step_pred_s(const struct calib_profile *p, const struct calib_pstep *s)
{
	double t = (double)s->cls[p->n_cls - 1].measured_ns / 1e9;
	for (int c = 0; c < p->n_cls - 1; c++)
		t += s->cls[c].predicted_s;
	return t;
}

static int64_t span_ns(const struct calib_pstep *s)
{
	return s->kernels ? s->gpu_last_ns - s->gpu_first_ns : 0;
}

static void human(FILE *f, const char *path, const struct calib_profile *p, int top, int max_steps)
{
	const struct calib_match *m = &p->m;
	fprintf(f, "%s: %" PRId64 " kernels, %.3f ms of GPU kernel time; model: %s\n", path, p->kernels,
	        ms(p->kernel_ns), p->hw_name);
	fprintf(f, "mapped to model ops with full shapes: %.3f ms (%.1f %%) of %" PRId64 " kernels\n",
	        ms(p->mapped_kernel_ns), p->kernel_ns ? 100.0 * (double)p->mapped_kernel_ns / (double)p->kernel_ns : 0,
	        p->mapped_kernels);
	fprintf(f, "  by k3sim ranges %" PRId64 ", framework records %" PRId64 " (%" PRId64
	           " records in the trace), kernel-name rules %" PRId64 " activities\n",
	        m->matched_nvtx, m->matched_framework, m->framework_ranges, m->matched_rules);
	if (p->assumed_dtype_ns)
		fprintf(f, "  element types assumed (records without types: emit_nvtx) for %.1f %% of the mapped time\n",
		        100.0 * (double)p->assumed_dtype_ns / (double)(p->mapped_kernel_ns ? p->mapped_kernel_ns : 1));
	if (p->n_steps)
		fprintf(f, "  inside steps: %.3f of %.3f ms mapped (%.1f %%)\n", ms(p->in_steps_mapped_ns),
		        ms(p->in_steps_kernel_ns),
		        p->in_steps_kernel_ns ? 100.0 * (double)p->in_steps_mapped_ns / (double)p->in_steps_kernel_ns : 0);
	fprintf(f, "\nPer op class (whole trace; measured: the GPU time of the class's kernels and copies;\n"
	           "predicted: the model's device time of each op; +launch: with each op's eager launch\n"
	           "latency, what `k3sim op` prints):\n");
	print_classes(f, p, p->total);

	if (!p->n_steps) {
		fprintf(f, "\nNo steps: no range matched the step markers (--step, --step-start), and no\n"
		           "framework record repeats evenly enough to mark them.\n");
	} else {
		if (p->repeated[0])
			fprintf(f, "\nSteps by repetition: each starts at a top-level '%s' call (no step markers).\n",
			        p->repeated);
		fprintf(f, "\nSteps (kernels launched inside each marker range; busy = union of its kernels; "
		           "host idle = the GPU waited for a launch):\n");
		fprintf(f, "  %4s %-16s %7s %9s %9s %9s %9s %7s %7s  %s\n", "#", "step", "kernels", "cpu ms", "span ms",
		        "busy ms", "pred ms", "err %", "host %", "");
		for (size_t i = 0; i < p->n_steps; i++) {
			const struct calib_pstep *s = &p->steps[i];
			if ((int)i >= max_steps) {
				fprintf(f, "  ... %zu more steps (--steps N)\n", p->n_steps - i);
				break;
			}
			int64_t sp = span_ns(s);
			int64_t cpu = s->cpu_end_ns - s->cpu_start_ns;
			fprintf(f, "  %4zu %-16.16s %7" PRId64 " %9.3f %9.3f %9.3f %9.3f %+7.1f %7.1f  %s\n", i, s->label,
			        s->kernels, ms(cpu), ms(sp), ms(s->busy_ns), step_pred_s(p, s) * 1e3,
			        err_pct(step_pred_s(p, s), s->busy_ns), sp ? 100.0 * (double)s->host_idle_ns / (double)sp : 0,
			        s->cpu_bound ? "CPU-bound (launch-bound: span is the host's, not model error)" : "");
		}
		/* per step name: the classes summed */
		fprintf(f, "\nPer step name and op class (summed over its steps):\n");
		for (size_t i = 0; i < p->n_steps; i++) {
			bool seen = false;
			for (size_t j = 0; j < i && !seen; j++)
				seen = strcmp(p->steps[j].label, p->steps[i].label) == 0;
			if (seen)
				continue;
			struct calib_pclass_sum sum[CALIB_PROFILE_CLASSES_MAX];
			memset(sum, 0, sizeof sum);
			int64_t n = 0, busy = 0, sp = 0, host = 0, cpu_bound = 0;
			for (size_t j = i; j < p->n_steps; j++) {
				const struct calib_pstep *s = &p->steps[j];
				if (strcmp(s->label, p->steps[i].label) != 0)
					continue;
				n++;
				busy += s->busy_ns;
				sp += span_ns(s);
				host += s->host_idle_ns;
				cpu_bound += s->cpu_bound;
				for (int c = 0; c < p->n_cls; c++) {
					sum[c].kernels += s->cls[c].kernels;
					sum[c].ops += s->cls[c].ops;
					sum[c].measured_ns += s->cls[c].measured_ns;
					sum[c].predicted_s += s->cls[c].predicted_s;
					sum[c].predicted_launch_s += s->cls[c].predicted_launch_s;
				}
			}
			fprintf(f, " %s: %" PRId64 " steps, GPU span %.3f ms, busy %.3f ms, host-bound idle %.1f %% of the span"
			           "%s\n",
			        p->steps[i].label, n, ms(sp), ms(busy), sp ? 100.0 * (double)host / (double)sp : 0,
			        cpu_bound ? (cpu_bound == n ? " - CPU-bound (every step)" : " - CPU-bound (some steps)") : "");
			print_classes(f, p, sum);
		}
	}
	fprintf(f, "\nOps by measured time (error per op = predicted x ops vs measured):\n");
	fprintf(f, "  %-64s %6s %11s %11s %8s\n", "op", "ops", "measured ms", "pred ms", "error %");
	for (size_t i = 0; i < p->n_ops && (int)i < top; i++) {
		const struct calib_pspec *o = &p->ops[i];
		double pr = o->predicted_s * (double)o->ops;
		fprintf(f, "  %-64.64s %6" PRId64 " %11.3f %11.3f %+8.1f%s\n", m->specs[o->spec].text, o->ops,
		        ms(o->measured_ns), pr * 1e3, err_pct(pr, o->measured_ns), o->dtype_assumed ? " (dtype assumed)" : "");
	}
	fprintf(f, "\nNot mapped (GPU time, by name and reason; copies included):\n");
	int shown = 0;
	for (size_t i = 0; i < m->n_unmatched && shown < top; i++, shown++) {
		const struct calib_unmatched *u = &m->unmatched[i];
		fprintf(f, "  %9.3f ms %6" PRId64 "x  %-.70s\n               %s%s\n", ms(u->gpu_ns), u->count, u->name,
		        u->skipped ? "skipped: " : "", u->reason);
	}
	if (m->n_unmatched > (size_t)shown)
		fprintf(f, "  ... %zu more (--top N)\n", m->n_unmatched - (size_t)shown);
}

static void class_json(struct jw *w, const char *key, const struct calib_profile *p,
                       const struct calib_pclass_sum *cls)
{
	jw_begin_object(w, key);
	for (int c = 0; c < p->n_cls; c++) {
		const struct calib_pclass_sum *s = &cls[c];
		if (!s->kernels && !s->ops)
			continue;
		jw_begin_object(w, p->cls_label[c]);
		jw_i64(w, "kernels", s->kernels);
		jw_i64(w, "ops", s->ops);
		jw_i64(w, "measured_ns", s->measured_ns);
		if (c != p->n_cls - 1) {
			jw_f64(w, "predicted_s", s->predicted_s);
			jw_f64(w, "predicted_with_launch_s", s->predicted_launch_s);
			if (s->measured_ns > 0)
				jw_f64(w, "error_pct", err_pct(s->predicted_s, s->measured_ns));
		}
		jw_end_object(w);
	}
	jw_end_object(w);
}

static void json(FILE *f, const char *path, const struct calib_profile *p, int top)
{
	const struct calib_match *m = &p->m;
	struct jw w;
	jw_init(&w, f);
	jw_begin_object(&w, NULL);
	jw_str(&w, "trace", path);
	jw_str(&w, "hw", p->hw_name);
	jw_i64(&w, "kernels", p->kernels);
	jw_i64(&w, "kernel_ns", p->kernel_ns);
	jw_i64(&w, "mapped_kernels", p->mapped_kernels);
	jw_i64(&w, "mapped_kernel_ns", p->mapped_kernel_ns);
	jw_f64(&w, "mapped_pct", p->kernel_ns ? 100.0 * (double)p->mapped_kernel_ns / (double)p->kernel_ns : 0);
	jw_i64(&w, "assumed_dtype_ns", p->assumed_dtype_ns);
	jw_i64(&w, "matched_nvtx", m->matched_nvtx);
	jw_i64(&w, "matched_framework", m->matched_framework);
	jw_i64(&w, "matched_rules", m->matched_rules);
	jw_i64(&w, "framework_records", m->framework_ranges);
	jw_i64(&w, "in_steps_kernel_ns", p->in_steps_kernel_ns);
	jw_str(&w, "steps_by_repetition", p->repeated);
	jw_i64(&w, "in_steps_mapped_ns", p->in_steps_mapped_ns);
	class_json(&w, "classes", p, p->total);
	jw_begin_array(&w, "steps");
	for (size_t i = 0; i < p->n_steps; i++) {
		const struct calib_pstep *s = &p->steps[i];
		jw_begin_object(&w, NULL);
		jw_str(&w, "name", s->label);
		jw_i64(&w, "cpu_start_ns", s->cpu_start_ns);
		jw_i64(&w, "cpu_end_ns", s->cpu_end_ns);
		jw_i64(&w, "kernels", s->kernels);
		jw_i64(&w, "gpu_span_ns", span_ns(s));
		jw_i64(&w, "busy_ns", s->busy_ns);
		jw_i64(&w, "host_idle_ns", s->host_idle_ns);
		jw_i64(&w, "other_idle_ns", s->other_idle_ns);
		jw_f64(&w, "predicted_s", step_pred_s(p, s));
		jw_bool(&w, "cpu_bound", s->cpu_bound);
		class_json(&w, "classes", p, s->cls);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_begin_array(&w, "ops");
	for (size_t i = 0; i < p->n_ops && (int)i < top; i++) {
		const struct calib_pspec *o = &p->ops[i];
		jw_begin_object(&w, NULL);
		jw_str(&w, "op", m->specs[o->spec].text);
		jw_str(&w, "class", p->cls_label[o->cls]);
		jw_i64(&w, "ops", o->ops);
		jw_i64(&w, "kernels", o->kernels);
		jw_i64(&w, "measured_ns", o->measured_ns);
		jw_f64(&w, "predicted_s_each", o->predicted_s);
		jw_bool(&w, "dtype_assumed", o->dtype_assumed);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_begin_array(&w, "unmapped");
	for (size_t i = 0; i < m->n_unmatched && (int)i < top; i++) {
		const struct calib_unmatched *u = &m->unmatched[i];
		jw_begin_object(&w, NULL);
		jw_str(&w, "name", u->name);
		jw_str(&w, "reason", u->reason);
		jw_bool(&w, "skipped", u->skipped);
		jw_i64(&w, "count", u->count);
		jw_i64(&w, "gpu_ns", u->gpu_ns);
		jw_end_object(&w);
	}
	jw_end_array(&w);
	jw_end_object(&w);
	jw_finish(&w);
}

/* A Kineto JSON input goes through an import (with its operator records) into a temporary
 * database; *tmp gets its path (to remove). */
static int import_json(const char *path, char *tmp, size_t n, struct err *e)
{
	const char *dir = getenv("TMPDIR");
	snprintf(tmp, n, "%s/k3sim-profile-XXXXXX", dir && *dir ? dir : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0) {
		err_set(e, tmp, 0, 0, "cannot make a temporary database: %s", strerror(errno));
		tmp[0] = '\0';
		return -EIO;
	}
	close(fd);
	struct trace_db *db = NULL;
	int rc = trace_db_create(&db, tmp, NULL, e);
	if (rc)
		return rc;
	struct trace_import_opts io = {.format = TRACE_FORMAT_KINETO_JSON, .kineto = {.cpu_ops = true}};
	struct trace_import_stats st;
	rc = trace_import_path(db, path, &io, NULL, &st, e);
	if (rc) {
		trace_db_discard(db);
		return rc;
	}
	return trace_db_close(db, e);
}

int cmd_trace_profile(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"hw", required_argument, NULL, 'w'},     {"step", required_argument, NULL, 's'},
	    {"step-start", required_argument, NULL, 'S'}, {"derive", required_argument, NULL, 'd'},
	    {"rules", required_argument, NULL, 'r'},  {"dtype", required_argument, NULL, 't'},
	    {"ranks", required_argument, NULL, 'R'},  {"top", required_argument, NULL, 'n'},
	    {"steps", required_argument, NULL, 'N'},  {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	const char *hw_name = "h200", *derive_name = "default", *rules_name = "default";
	const char *steps[STEP_GLOBS_MAX];
	int n_steps = 0, top = 12, max_steps = 40;
	bool step_start = false, as_json = false;
	struct calib_derive_opts dopts = {.dtype = DT_BF16};
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		char *end;
		long v;
		switch (ch) {
		case 'w': hw_name = optarg; break;
		case 'S': step_start = true; /* fall through */
		case 's':
			if (n_steps == STEP_GLOBS_MAX) {
				fprintf(stderr, "k3sim trace profile: at most %d step globs\n", STEP_GLOBS_MAX);
				return 2;
			}
			if (!*optarg) {
				fprintf(stderr, "k3sim trace profile: --step wants a glob\n");
				return 2;
			}
			steps[n_steps++] = optarg;
			break;
		case 'd': derive_name = optarg; break;
		case 'r': rules_name = optarg; break;
		case 't':
			if (dtype_parse(optarg, &dopts.dtype) < 0) {
				fprintf(stderr, "k3sim trace profile: --dtype: unknown '%s' (%s)\n", optarg, dtype_spellings());
				return 2;
			}
			break;
		case 'R':
		case 'n':
		case 'N':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < (ch == 'R' ? 2 : 0) || v > 1000000) {
				fprintf(stderr, "k3sim trace profile: %s wants a count, not '%s'\n", argv[optind - 1], optarg);
				return 2;
			}
			if (ch == 'R')
				dopts.ranks = v;
			else if (ch == 'n')
				top = (int)v;
			else
				max_steps = (int)v;
			break;
		case 'j': as_json = true; break;
		case 'h': usage(stdout); return 0;
		case ':': fprintf(stderr, "k3sim trace profile: missing value for %s\n", argv[optind - 1]); return 2;
		default:
			fprintf(stderr, "k3sim trace profile: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "k3sim trace profile: expected one trace (see --help)\n");
		return 2;
	}
	const char *path = argv[optind];
	struct err e = {0};
	struct hw hw;
	struct calib_rules rules;
	struct calib_derive derive;
	bool have_rules = false, have_derive = false;
	char tmp[4096] = "";
	int rc = 1;
	if (hw_load(&hw, hw_name, &e) < 0)
		goto fail;
	if (strcmp(rules_name, "none") != 0) {
		if (calib_rules_load(&rules, rules_name, &e) < 0)
			goto fail;
		have_rules = true;
	}
	if (strcmp(derive_name, "none") != 0) {
		if (calib_derive_load(&derive, derive_name, &e) < 0)
			goto fail;
		have_derive = true;
	}
	enum trace_format fmt = TRACE_FORMAT_UNKNOWN;
	if (trace_detect_format(path, &fmt, &e) < 0)
		goto fail;
	const char *db = path;
	if (fmt == TRACE_FORMAT_KINETO_JSON) {
		if (import_json(path, tmp, sizeof tmp, &e) < 0)
			goto fail;
		db = tmp;
	}
	struct calib_profile_opts po = {
	    .hw = &hw,
	    .rules = have_rules ? &rules : NULL,
	    .derive = have_derive ? &derive : NULL,
	    .derive_opts = dopts,
	    .steps = n_steps ? steps : NULL,
	    .n_steps = n_steps,
	    .step_start = step_start,
	};
	struct calib_profile p;
	if (calib_profile_run(&p, db, &po, &e) < 0)
		goto fail;
	if (as_json)
		json(stdout, path, &p, top);
	else
		human(stdout, path, &p, top, max_steps);
	calib_profile_release(&p);
	rc = 0;
	goto out;
fail:
	cli_error("trace profile", &e);
out:
	if (tmp[0])
		unlink(tmp);
	if (have_rules)
		calib_rules_release(&rules);
	if (have_derive)
		calib_derive_release(&derive);
	return rc;
}
