/* k3sim trace: import, summary, export, merge (and capture, in cmd_trace_capture.c). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "trace/analyze/analyze.h"
#include "trace/analyze/export.h"
#include "trace/import/import.h"
#include "trace/db/tracedb.h"
#include "util/numfmt.h"
#include "util/outfile.h"
#include "util/jsonw.h"

struct sub {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static void print_err(const char *sub, const struct err *e)
{
	char buf[1024];
	fprintf(stderr, "k3sim trace %s: %s\n", sub, err_format(e, buf, sizeof buf));
}

static int usage_error(const char *sub, const char *msg, const char *arg)
{
	if (arg)
		fprintf(stderr, "k3sim trace %s: %s '%s'\n", sub, msg, arg);
	else
		fprintf(stderr, "k3sim trace %s: %s\n", sub, msg);
	fprintf(stderr, "see 'k3sim trace %s --help'\n", sub);
	return 2;
}

static bool parse_i64(const char *s, int64_t *out)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (end == s || *end || errno)
		return false;
	*out = v;
	return true;
}

/* ---- a small JSON writer for --json output ---- */

/* Full precision: the shortest text that reads back as v (76426648.5, not 7.64266e+07). */
static void jnum(FILE *f, double v)
{
	util_json_double(f, v);
}

/* ---- import ---- */

static void import_usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim trace import FILE -o OUT.db [options]\n\n"
		"Import a trace into a k3sim trace database (nsys-compatible SQLite schema).\n"
		"FILE is an nsys SQLite export (nsys export --type sqlite), a k3sim database, or a\n"
		"Kineto/Chrome JSON trace (torch.profiler export_chrome_trace, k3sim trace export);\n"
		"'-' reads standard input, and pipes or FIFOs work too (<(zcat f.json.gz)). gzip'd\n"
		"input is read directly. The format is sniffed from the content (a UTF-8 BOM is fine);\n"
		"--format names it. Kineto times get baseTimeNanoseconds added (ns since the epoch).\n\n"
		"options:\n"
		"  -o, --output PATH   the database to write (required)\n"
		"  --format FMT        auto (default), nsys|sqlite, or kineto|json|chrome\n"
		"  --pid N             Kineto: process id for GPU rows (default: from CPU events)\n"
		"  --rank N            record the capture's rank (merge tells ranks' GPUs apart by it;\n"
		"                      default: the trace's distributedInfo)\n"
		"  --host NAME         record the host the trace was taken on (for merge)\n"
		"  --cpu-ops           Kineto: keep the operator calls recorded with\n"
		"                      record_shapes=True (cpu_op events with \"Input Dims\") as\n"
		"                      ranges \"aten::mm, sizes = [...], types = [...]\": the shapes\n"
		"                      that trace profile and validate derive model ops from\n"
		"  -f, --force         replace an existing output file (never an input, never\n"
		"                      before the import succeeded: the output is written beside\n"
		"                      the target and renamed into place)\n"
		"  --json              print what was imported as JSON\n"
		"  -q, --quiet         print nothing on success (warnings still go to stderr)\n"
		"  -h, --help          this text\n");
}

static void stats_json(FILE *f, const struct trace_import_stats *st)
{
	fprintf(f,
		"\"kernels\": %" PRId64 ", \"memcpys\": %" PRId64 ", \"memsets\": %" PRId64
		", \"api_calls\": %" PRId64 ", \"nvtx\": %" PRId64 ", \"gpus\": %" PRId64
		", \"processes\": %" PRId64 ", \"skipped\": %" PRId64 ", \"dropped_records\": %" PRId64
		", \"hosts\": %" PRId64,
		st->kernels, st->memcpys, st->memsets, st->api_calls, st->nvtx, st->gpus,
		st->processes, st->skipped, st->dropped_records, st->hosts);
	if (st->first_ns <= st->last_ns)
		fprintf(f, ", \"first_ns\": %" PRId64 ", \"last_ns\": %" PRId64, st->first_ns,
			st->last_ns);
	fprintf(f,
		", \"base_time_ns\": %" PRId64 ", \"gpu_rows_no_process\": %" PRId64
		", \"strings_cut\": %" PRId64 ", \"unknown_events\": %" PRId64
		", \"unknown_categories\": {",
		st->base_time_ns, st->gpu_rows_no_process, st->strings_cut, st->unknown_events);
	for (int i = 0; i < st->n_unknown_cats; i++) {
		fputs(i ? ", " : "", f);
		util_json_str(f, st->unknown_cat[i]);
		fprintf(f, ": %" PRId64, st->unknown_cat_events[i]);
	}
	fputc('}', f);
	if (st->cpu_ops)
		fprintf(f, ", \"cpu_ops\": %" PRId64, st->cpu_ops);
}

static void stats_human(FILE *f, const struct trace_import_stats *st)
{
	fprintf(f,
		"%" PRId64 " kernels, %" PRId64 " memcpys, %" PRId64 " memsets, %" PRId64
		" API calls, %" PRId64 " NVTX events, %" PRId64 " GPUs",
		st->kernels, st->memcpys, st->memsets, st->api_calls, st->nvtx, st->gpus);
	if (st->skipped)
		fprintf(f, "; %" PRId64 " records of other kinds skipped", st->skipped);
	if (st->dropped_records)
		fprintf(f, "; %" PRId64 " records were dropped at capture", st->dropped_records);
}

/* What an import should not pass over in silence (stderr, even with --quiet). */
static void import_warnings(const char *sub, const char *in, const struct trace_import_stats *st)
{
	if (st->kernels + st->memcpys + st->memsets == 0)
		fprintf(stderr,
			"k3sim trace %s: %s: warning: no GPU activity (kernels, memcpys, memsets) in this"
			" trace: a CPU-only trace, or an accelerator whose events k3sim does not know\n",
			sub, in);
	if (st->unknown_events) {
		fprintf(stderr, "k3sim trace %s: %s: warning: %" PRId64 " events of unknown categories"
			" were skipped:", sub, in, st->unknown_events);
		for (int i = 0; i < st->n_unknown_cats; i++)
			fprintf(stderr, "%s '%s' (%" PRId64 ")", i ? "," : "", st->unknown_cat[i],
				st->unknown_cat_events[i]);
		if (st->n_unknown_cats == TRACE_IMPORT_UNKNOWN_CATS)
			fprintf(stderr, ", ...");
		fputc('\n', stderr);
	}
	if (st->gpu_rows_no_process)
		fprintf(stderr,
			"k3sim trace %s: %s: warning: %" PRId64 " GPU rows have no CPU-side event to take"
			" a process id from: they are process 0 (give --pid N)\n",
			sub, in, st->gpu_rows_no_process);
}

static int trace_import_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"format", required_argument, NULL, 'F'},
		{"pid", required_argument, NULL, 'p'},    {"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},         {"quiet", no_argument, NULL, 'q'},
		{"rank", required_argument, NULL, 'r'},   {"host", required_argument, NULL, 'H'},
		{"cpu-ops", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	bool cpu_ops = false;
	const char *out = NULL, *format = "auto", *host = NULL, *rank = NULL;
	int64_t pid = 0, rank_v = 0;
	bool force = false, json = false, quiet = false;
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'F': format = optarg; break;
		case 'p':
			if (!parse_i64(optarg, &pid) || pid < 0 || pid >= 0xffffff)
				return usage_error("import", "--pid wants a process id, not", optarg);
			break;
		case 'r':
			if (!parse_i64(optarg, &rank_v) || rank_v < 0)
				return usage_error("import", "--rank wants a rank (0, 1, ...), not", optarg);
			rank = optarg;
			break;
		case 'H':
			if (!*optarg)
				return usage_error("import", "--host wants a host name", NULL);
			host = optarg;
			break;
		case 'f': force = true; break;
		case 'j': json = true; break;
		case 'q': quiet = true; break;
		case 'C': cpu_ops = true; break;
		case 'h': import_usage(stdout); return 0;
		case ':': return usage_error("import", "missing value for", argv[optind - 1]);
		default: return usage_error("import", "unknown option", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("import", optind >= argc ? "no input file ('-' reads standard input)"
			: "one input file only, got also", optind >= argc ? NULL : argv[optind + 1]);
	if (!out)
		return usage_error("import", "no output: give -o OUT.db", NULL);
	const char *in = argv[optind];
	struct err e = {0};
	struct trace_import_opts io = {.kineto = {.pid = pid, .cpu_ops = cpu_ops}};
	if (trace_format_parse(format, &io.format))
		return usage_error("import", "unknown format (auto, nsys, sqlite, kineto, json):",
				   format);
	const char *const inputs[] = {in};
	struct outfile_opts oo = {.force = force, .sqlite = true, .inputs = inputs, .n_inputs = 1};
	struct outfile of;
	if (outfile_open(&of, out, &oo, &e)) {
		print_err("import", &e);
		return 1;
	}
	struct trace_db *db = NULL;
	if (trace_db_create(&db, outfile_tmp_path(&of), NULL, &e)) {
		outfile_abort(&of);
		outfile_err_path(&of, &e);
		print_err("import", &e);
		return 1;
	}
	struct trace_import_stats st;
	memset(&st, 0, sizeof st);
	enum trace_format fmt = TRACE_FORMAT_UNKNOWN;
	int rc = trace_import_path(db, in, &io, &fmt, &st, &e);
	if (!rc && rank)
		rc = trace_db_set_capture(db, TRACE_CAPTURE_RANK, rank, &e);
	if (!rc && host)
		rc = trace_db_set_capture(db, TRACE_CAPTURE_HOST, host, &e);
	if (rc) {
		trace_db_discard(db);
		outfile_abort(&of);
		outfile_err_path(&of, &e);
		print_err("import", &e);
		return 1;
	}
	rc = trace_db_close(db, &e);
	if (rc)
		outfile_abort(&of);
	else
		rc = outfile_commit(&of, &e);
	if (rc) {
		outfile_err_path(&of, &e);
		print_err("import", &e);
		return 1;
	}
	const char *name = strcmp(in, "-") == 0 ? "<stdin>" : in;
	const char *fname = trace_format_name(fmt);
	if (json) {
		printf("{\"input\": ");
		util_json_str(stdout, name);
		printf(", \"output\": ");
		util_json_str(stdout, out);
		printf(", \"format\": \"%s\", ", fname);
		stats_json(stdout, &st);
		printf("}\n");
	} else if (!quiet) {
		printf("%s (%s): ", name, fname);
		stats_human(stdout, &st);
		printf("\nwrote %s\n", out);
	}
	import_warnings("import", name, &st);
	return 0;
}

/* ---- summary ---- */

static void summary_usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim trace summary DB [options]\n\n"
		"Summarize a trace database (k3sim capture or import, or an nsys SQLite export):\n"
		"per-kernel statistics (the columns of nsys' cuda_gpu_kern_sum), time per NVTX range,\n"
		"device and stream utilization, idle gaps, communication/compute overlap and launch\n"
		"overhead (API call end -> kernel start; negative where a kernel started before its\n"
		"launching call returned). Communication kernels are those of the kernel classes\n"
		"(NCCL, DeepEP normal and low-latency dispatch/combine, NVSHMEM, custom all-reduce,\n"
		"MoE all-to-all of SGLang/vLLM/TensorRT-LLM: trace/rules/default.yaml), the same rules\n"
		"calibration uses.\n\n"
		"options:\n"
		"  --json              machine-readable output\n"
		"  --base              group kernels by short name (no templates, no arguments)\n"
		"  --top N             list only the N kernels with the most time\n"
		"  --gaps N            list the N longest idle gaps (default 10)\n"
		"  -o, --output PATH   write to PATH instead of stdout\n"
		"  -f, --force         replace an existing output file\n"
		"  -h, --help          this text\n");
}

static void summary_json(FILE *f, const char *db, const struct trace_summary *s, size_t top)
{
	fprintf(f, "{\n  \"database\": ");
	util_json_str(f, db);
	fprintf(f,
		",\n  \"totals\": {\"kernels\": %" PRId64 ", \"kernel_ns\": %" PRId64
		", \"memcpys\": %" PRId64 ", \"memcpy_bytes\": %" PRId64 ", \"memcpy_ns\": %" PRId64
		", \"memsets\": %" PRId64 ", \"memset_bytes\": %" PRId64 ", \"memset_ns\": %" PRId64
		", \"api_calls\": %" PRId64 ", \"nvtx_ranges\": %" PRId64 ", \"first_ns\": %" PRId64
		", \"last_ns\": %" PRId64 ", \"span_ns\": %" PRId64 ", \"dropped_records\": %" PRId64
		"},\n",
		s->kernels, s->kernel_ns, s->memcpys, s->memcpy_bytes, s->memcpy_ns, s->memsets,
		s->memset_bytes, s->memset_ns, s->api_calls, s->nvtx_ranges, s->first_ns, s->last_ns,
		s->span_ns, s->dropped_records);
	fprintf(f, "  \"kernels\": [");
	for (size_t i = 0; i < s->n_kern && i < top; i++) {
		const struct trace_kernel_sum *k = &s->kern[i];
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		util_json_str(f, k->name);
		fprintf(f, ", \"time_pct\": ");
		jnum(f, k->time_pct);
		fprintf(f, ", \"total_ns\": %" PRId64 ", \"instances\": %" PRId64 ", \"avg_ns\": ",
			k->total_ns, k->instances);
		jnum(f, k->avg_ns);
		fprintf(f, ", \"med_ns\": ");
		jnum(f, k->med_ns);
		fprintf(f, ", \"min_ns\": %" PRId64 ", \"max_ns\": %" PRId64 ", \"stddev_ns\": ",
			k->min_ns, k->max_ns);
		jnum(f, k->stddev_ns);
		fprintf(f, ", \"comm\": %s", k->comm ? "true" : "false");
		if (k->comm) {
			fprintf(f, ", \"collective\": ");
			util_json_str(f, k->collective);
			fprintf(f, ", \"library\": ");
			util_json_str(f, k->library);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"nvtx\": [");
	for (size_t i = 0; i < s->n_nvtx; i++) {
		const struct trace_nvtx_sum *n = &s->nvtx[i];
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		util_json_str(f, n->name);
		fprintf(f, ", \"instances\": %" PRId64 ", \"total_ns\": %" PRId64 ", \"avg_ns\": ",
			n->instances, n->total_ns);
		jnum(f, n->avg_ns);
		fprintf(f,
			", \"min_ns\": %" PRId64 ", \"max_ns\": %" PRId64 ", \"kernels\": %" PRId64
			", \"gpu_ns\": %" PRId64 "}",
			n->min_ns, n->max_ns, n->kernels, n->gpu_ns);
	}
	fprintf(f, "\n  ],\n  \"devices\": [");
	for (size_t i = 0; i < s->n_dev; i++) {
		const struct trace_device_sum *d = &s->dev[i];
		fprintf(f,
			"%s\n    {\"device\": %u, \"kernels\": %" PRId64 ", \"memcpys\": %" PRId64
			", \"memsets\": %" PRId64 ", \"first_ns\": %" PRId64 ", \"last_ns\": %" PRId64
			", \"busy_ns\": %" PRId64 ", \"util_pct\": ",
			i ? "," : "", d->device_id, d->kernels, d->memcpys, d->memsets, d->first_ns,
			d->last_ns, d->busy_ns);
		jnum(f, d->util_pct);
		fprintf(f,
			", \"gaps\": %" PRId64 ", \"idle_ns\": %" PRId64 ", \"max_gap_ns\": %" PRId64
			", \"comm_ns\": %" PRId64 ", \"compute_ns\": %" PRId64 ", \"overlap_ns\": %" PRId64
			", \"comm_hidden_pct\": ",
			d->gaps, d->idle_ns, d->max_gap_ns, d->comm_ns, d->compute_ns, d->overlap_ns);
		jnum(f, d->comm_hidden_pct);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"streams\": [");
	for (size_t i = 0; i < s->n_stream; i++) {
		const struct trace_stream_sum *t = &s->stream[i];
		fprintf(f,
			"%s\n    {\"device\": %u, \"pid\": %" PRId64 ", \"global_pid\": %" PRId64
			", \"stream\": %u, \"kernels\": %" PRId64 ", \"memcpys\": %" PRId64
			", \"memsets\": %" PRId64 ", \"busy_ns\": %" PRId64 ", \"util_pct\": ",
			i ? "," : "", t->device_id, trace_global_to_pid(t->global_pid), t->global_pid,
			t->stream_id, t->kernels, t->memcpys, t->memsets, t->busy_ns);
		jnum(f, t->util_pct);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"gaps\": [");
	for (size_t i = 0; i < s->n_gaps; i++)
		fprintf(f, "%s\n    {\"device\": %u, \"start_ns\": %" PRId64 ", \"dur_ns\": %" PRId64 "}",
			i ? "," : "", s->gaps[i].device_id, s->gaps[i].start_ns, s->gaps[i].dur_ns);
	const struct trace_launch_sum *l = &s->launch;
	fprintf(f, "\n  ],\n  \"launch\": {\"matched\": %" PRId64 ", \"unmatched\": %" PRId64
		   ", \"avg_ns\": ",
		l->matched, l->unmatched);
	jnum(f, l->avg_ns);
	fprintf(f, ", \"med_ns\": ");
	jnum(f, l->med_ns);
	fprintf(f,
		", \"min_ns\": %" PRId64 ", \"max_ns\": %" PRId64 ", \"p90_ns\": %" PRId64
		", \"p99_ns\": %" PRId64 ", \"api_avg_ns\": ",
		l->min_ns, l->max_ns, l->p90_ns, l->p99_ns);
	jnum(f, l->api_avg_ns);
	fprintf(f,
		", \"before_return\": %" PRId64 ", \"min_from_call_start_ns\": %" PRId64
		", \"inconsistent\": %" PRId64,
		l->before_return, l->min_from_call_start_ns, l->inconsistent);
	fprintf(f, "},\n  \"gpu_metrics\": [");
	for (size_t i = 0; i < s->n_clocks; i++) {
		const struct trace_clock_sum *c = &s->clocks[i];
		char why[256];
		fprintf(f, "%s\n    {\"device\": %u, \"samples\": %" PRId64 ", \"first_ns\": %" PRId64
			   ", \"last_ns\": %" PRId64 ", \"sm_mhz\": {\"min\": ",
			i ? "," : "", c->device_id, c->samples, c->first_ns, c->last_ns);
		jnum(f, c->sm_mhz_min);
		fprintf(f, ", \"med\": ");
		jnum(f, c->sm_mhz_med);
		fprintf(f, ", \"max\": ");
		jnum(f, c->sm_mhz_max);
		fprintf(f, "}, \"power_w\": {\"min\": ");
		jnum(f, c->power_w_min);
		fprintf(f, ", \"med\": ");
		jnum(f, c->power_w_med);
		fprintf(f, ", \"max\": ");
		jnum(f, c->power_w_max);
		fprintf(f, "}, \"mem_mhz_med\": ");
		jnum(f, c->mem_mhz_med);
		fprintf(f, ", \"temp_c_max\": ");
		jnum(f, c->temp_c_max);
		fprintf(f, ", \"power_capped\": %" PRId64 ", \"throttle_reasons\": %" PRIu64
			   ", \"throttle\": ",
			c->power_capped, c->throttle_any);
		util_json_str(f, trace_throttle_names(c->throttle_any, why, sizeof why));
		fputc('}', f);
	}
	fprintf(f, "\n  ]\n}\n");
}

static void launch_human(FILE *f, const struct trace_launch_sum *l)
{
	fprintf(f, "\nLaunch overhead (API call end -> kernel start, by process and correlation"
		   " id):\n\n");
	if (!l->matched) {
		fprintf(f, " no kernel has a launching API call in this trace\n");
		return;
	}
	fprintf(f, " %" PRId64 " kernels matched, %" PRId64 " without a launching call\n", l->matched,
		l->unmatched);
	if (l->matched > l->inconsistent)
		fprintf(f,
			" avg %.1f ns, median %.1f ns, min %" PRId64 " ns, max %" PRId64 " ns, p90 %"
			PRId64 " ns, p99 %" PRId64 " ns; launching calls take %.1f ns on average\n",
			l->avg_ns, l->med_ns, l->min_ns, l->max_ns, l->p90_ns, l->p99_ns, l->api_avg_ns);
	if (l->before_return)
		fprintf(f,
			" %" PRId64 " kernels started before their launching call returned (the negative"
			" values: real, the call was still running); every kernel started at least %"
			PRId64 " ns after its call began\n",
			l->before_return, l->min_from_call_start_ns);
	if (l->inconsistent)
		fprintf(f,
			" %" PRId64 " kernels start before their launching call began: impossible on one"
			" clock (GPU/CPU clock offset, or correlation ids that do not belong together);"
			" left out of the numbers above\n",
			l->inconsistent);
}

static void summary_human(FILE *f, const char *db, const struct trace_summary *s, size_t top)
{
	fprintf(f, "%s: %" PRId64 " kernels, %" PRId64 " memcpys, %" PRId64 " memsets, %" PRId64
		   " API calls, %" PRId64 " NVTX ranges\n",
		db, s->kernels, s->memcpys, s->memsets, s->api_calls, s->nvtx_ranges);
	fprintf(f, "GPU span %.3f ms; kernel time %.3f ms; memcpy %" PRId64 " B in %.3f ms; memset %"
		   PRId64 " B in %.3f ms",
		(double)s->span_ns / 1e6, (double)s->kernel_ns / 1e6, s->memcpy_bytes,
		(double)s->memcpy_ns / 1e6, s->memset_bytes, (double)s->memset_ns / 1e6);
	if (s->dropped_records)
		fprintf(f, "\nwarning: %" PRId64 " records were dropped at capture: totals are low",
			s->dropped_records);
	for (size_t i = 0; i < s->n_clocks; i++) {
		const struct trace_clock_sum *c = &s->clocks[i];
		char why[256];
		fprintf(f,
			"\nGPU %u clocks (%" PRId64 " NVML readings over %.1f s): SM %.0f / %.0f / %.0f MHz,"
			" power %.0f / %.0f / %.0f W (min / median / max), max %.0f C, power-capped in"
			" %.0f %% (throttle seen: %s)",
			c->device_id, c->samples, (double)(c->last_ns - c->first_ns) / 1e9,
			c->sm_mhz_min, c->sm_mhz_med, c->sm_mhz_max, c->power_w_min, c->power_w_med,
			c->power_w_max, c->temp_c_max,
			c->samples ? 100.0 * (double)c->power_capped / (double)c->samples : 0.0,
			trace_throttle_names(c->throttle_any, why, sizeof why));
	}
	fprintf(f, "\n\nCUDA GPU kernel summary (cuda_gpu_kern_sum):\n\n");
	fprintf(f, " %8s  %15s  %9s  %12s  %12s  %10s  %10s  %11s  %s\n", "Time (%)",
		"Total Time (ns)", "Instances", "Avg (ns)", "Med (ns)", "Min (ns)", "Max (ns)",
		"StdDev (ns)", "Name");
	fprintf(f, " %8s  %15s  %9s  %12s  %12s  %10s  %10s  %11s  %s\n", "--------",
		"---------------", "---------", "------------", "------------", "----------",
		"----------", "-----------", "----");
	for (size_t i = 0; i < s->n_kern && i < top; i++) {
		const struct trace_kernel_sum *k = &s->kern[i];
		fprintf(f,
			" %8.1f  %15" PRId64 "  %9" PRId64 "  %12.1f  %12.1f  %10" PRId64 "  %10" PRId64
			"  %11.1f  %s\n",
			k->time_pct, k->total_ns, k->instances, k->avg_ns, k->med_ns, k->min_ns,
			k->max_ns, k->stddev_ns, k->name);
	}
	if (s->n_kern > top)
		fprintf(f, " ... %zu more kernel names (--top)\n", s->n_kern - top);
	if (s->n_nvtx) {
		fprintf(f, "\nNVTX ranges (kernels counted where they were launched):\n\n");
		fprintf(f, " %9s  %15s  %12s  %10s  %10s  %9s  %15s  %s\n", "Instances",
			"Total Time (ns)", "Avg (ns)", "Min (ns)", "Max (ns)", "Kernels",
			"GPU Time (ns)", "Range");
		for (size_t i = 0; i < s->n_nvtx; i++) {
			const struct trace_nvtx_sum *n = &s->nvtx[i];
			fprintf(f,
				" %9" PRId64 "  %15" PRId64 "  %12.1f  %10" PRId64 "  %10" PRId64
				"  %9" PRId64 "  %15" PRId64 "  %s\n",
				n->instances, n->total_ns, n->avg_ns, n->min_ns, n->max_ns, n->kernels,
				n->gpu_ns, n->name);
		}
	}
	if (s->n_dev) {
		fprintf(f, "\nDevices (busy = union of kernels, memcpys, memsets; util over the GPU"
			   " span):\n\n");
		fprintf(f, " %6s  %9s  %13s  %7s  %9s  %13s  %11s  %13s  %13s  %13s  %9s\n", "Device",
			"Kernels", "Busy (ns)", "Util(%)", "Gaps", "Idle (ns)", "MaxGap (ns)",
			"Comm (ns)", "Compute (ns)", "Overlap (ns)", "Hidden(%)");
		for (size_t i = 0; i < s->n_dev; i++) {
			const struct trace_device_sum *d = &s->dev[i];
			fprintf(f,
				" %6u  %9" PRId64 "  %13" PRId64 "  %7.1f  %9" PRId64 "  %13" PRId64
				"  %11" PRId64 "  %13" PRId64 "  %13" PRId64 "  %13" PRId64 "  %9.1f\n",
				d->device_id, d->kernels, d->busy_ns, d->util_pct, d->gaps, d->idle_ns,
				d->max_gap_ns, d->comm_ns, d->compute_ns, d->overlap_ns,
				d->comm_hidden_pct);
		}
		fprintf(f, "\nStreams:\n\n");
		fprintf(f, " %6s  %8s  %8s  %9s  %8s  %8s  %13s  %7s\n", "Device", "PID", "Stream",
			"Kernels", "Memcpys", "Memsets", "Busy (ns)", "Util(%)");
		for (size_t i = 0; i < s->n_stream; i++) {
			const struct trace_stream_sum *t = &s->stream[i];
			fprintf(f,
				" %6u  %8" PRId64 "  %8u  %9" PRId64 "  %8" PRId64 "  %8" PRId64
				"  %13" PRId64 "  %7.1f\n",
				t->device_id, trace_global_to_pid(t->global_pid), t->stream_id, t->kernels,
				t->memcpys, t->memsets, t->busy_ns, t->util_pct);
		}
	}
	if (s->n_gaps) {
		fprintf(f, "\nLongest idle gaps:\n\n %6s  %20s  %15s\n", "Device", "Start (ns)",
			"Duration (ns)");
		for (size_t i = 0; i < s->n_gaps; i++)
			fprintf(f, " %6u  %20" PRId64 "  %15" PRId64 "\n", s->gaps[i].device_id,
				s->gaps[i].start_ns, s->gaps[i].dur_ns);
	}
	launch_human(f, &s->launch);
}

static int trace_summary_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},         {"base", no_argument, NULL, 'b'},
		{"top", required_argument, NULL, 't'},    {"gaps", required_argument, NULL, 'g'},
		{"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	struct trace_summary_opts so = {0};
	bool json = false, force = false;
	int64_t top = -1, gaps;
	const char *out = NULL;
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fh", opts, NULL)) != -1) {
		switch (ch) {
		case 'j': json = true; break;
		case 'f': force = true; break;
		case 'b': so.short_names = true; break;
		case 't':
			if (!parse_i64(optarg, &top) || top < 0)
				return usage_error("summary", "--top wants a count, not", optarg);
			break;
		case 'g':
			if (!parse_i64(optarg, &gaps) || gaps < 0 || gaps > 100000)
				return usage_error("summary", "--gaps wants a count, not", optarg);
			so.top_gaps = gaps ? (int)gaps : -1;
			break;
		case 'o': out = optarg; break;
		case 'h': summary_usage(stdout); return 0;
		case ':': return usage_error("summary", "missing value for", argv[optind - 1]);
		default: return usage_error("summary", "unknown option", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("summary", optind >= argc ? "no database given" : "one database"
			" only, got also", optind >= argc ? NULL : argv[optind + 1]);
	const char *db = argv[optind];
	struct trace_summary s;
	struct err e = {0};
	if (so.top_gaps < 0) /* --gaps 0 */
		so.top_gaps = 0;
	FILE *f = stdout;
	struct outfile of = {0};
	if (out && strcmp(out, "-") != 0) {
		const char *const inputs[] = {db};
		struct outfile_opts oo = {.force = force, .inputs = inputs, .n_inputs = 1};
		if (outfile_open(&of, out, &oo, &e) || !(f = outfile_stream(&of, &e))) {
			outfile_abort(&of);
			print_err("summary", &e);
			return 1;
		}
	}
	if (trace_summary_compute(&s, db, &so, &e)) {
		outfile_abort(&of);
		print_err("summary", &e);
		return 1;
	}
	size_t ntop = top < 0 ? SIZE_MAX : (size_t)top;
	if (json)
		summary_json(f, db, &s, ntop);
	else
		summary_human(f, db, &s, ntop);
	int rc = 0;
	if (f == stdout && (fflush(f) || ferror(f))) {
		fprintf(stderr, "k3sim trace summary: stdout: error: write failed\n");
		rc = 1;
	} else if (f != stdout && outfile_commit(&of, &e)) {
		print_err("summary", &e);
		rc = 1;
	}
	trace_summary_release(&s);
	return rc;
}

/* ---- export ---- */

static void export_usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim trace export DB --perfetto OUT.json [options]\n\n"
		"Write a trace database as Chrome trace-event JSON for Perfetto (ui.perfetto.dev) or\n"
		"chrome://tracing: one track per GPU and stream, NVTX ranges and CUDA API calls on\n"
		"their threads.\n\n"
		"options:\n"
		"  --perfetto PATH, -o, --output PATH   the JSON file to write ('-': stdout)\n"
		"  --from-ns T         keep events that end at or after T (ns, the trace's clock)\n"
		"  --to-ns T           keep events that start at or before T\n"
		"  --no-api            leave CUDA runtime/driver calls out\n"
		"  -f, --force         replace an existing output file\n"
		"  --json              print what was written as JSON\n"
		"  -q, --quiet         print nothing on success\n"
		"  -h, --help          this text\n");
}

static int trace_export_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"perfetto", required_argument, NULL, 'o'}, {"output", required_argument, NULL, 'o'},
		{"from-ns", required_argument, NULL, 'a'},  {"to-ns", required_argument, NULL, 'b'},
		{"no-api", no_argument, NULL, 'n'},         {"json", no_argument, NULL, 'j'},
		{"quiet", no_argument, NULL, 'q'},          {"force", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
	};
	struct trace_export_opts xo = {0};
	const char *out = NULL;
	bool json = false, quiet = false, force = false;
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'f': force = true; break;
		case 'a':
			if (!parse_i64(optarg, &xo.from_ns))
				return usage_error("export", "--from-ns wants nanoseconds, not", optarg);
			xo.has_from = true;
			break;
		case 'b':
			if (!parse_i64(optarg, &xo.to_ns))
				return usage_error("export", "--to-ns wants nanoseconds, not", optarg);
			xo.has_to = true;
			break;
		case 'n': xo.no_api = true; break;
		case 'j': json = true; break;
		case 'q': quiet = true; break;
		case 'h': export_usage(stdout); return 0;
		case ':': return usage_error("export", "missing value for", argv[optind - 1]);
		default: return usage_error("export", "unknown option", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("export", optind >= argc ? "no database given" : "one database"
			" only, got also", optind >= argc ? NULL : argv[optind + 1]);
	if (!out)
		return usage_error("export", "no output: give --perfetto OUT.json", NULL);
	if (xo.has_from && xo.has_to && xo.from_ns > xo.to_ns)
		return usage_error("export", "--from-ns is after --to-ns", NULL);
	const char *db = argv[optind];
	struct err e = {0};
	struct trace_export_stats st;
	bool to_stdout = strcmp(out, "-") == 0;
	FILE *f = stdout;
	struct outfile of = {0};
	if (!to_stdout) {
		/* written beside the target and renamed: a failed export leaves no half file */
		const char *const inputs[] = {db};
		struct outfile_opts oo = {.force = force, .inputs = inputs, .n_inputs = 1};
		if (outfile_open(&of, out, &oo, &e) || !(f = outfile_stream(&of, &e))) {
			outfile_abort(&of);
			print_err("export", &e);
			return 1;
		}
	}
	int rc = trace_export_perfetto(db, f, out, &xo, &st, &e);
	if (!to_stdout) {
		if (rc)
			outfile_abort(&of);
		else
			rc = outfile_commit(&of, &e);
	}
	if (rc) {
		print_err("export", &e);
		return 1;
	}
	if (json) {
		FILE *o = to_stdout ? stderr : stdout;
		fprintf(o, "{\"database\": ");
		util_json_str(o, db);
		fprintf(o, ", \"output\": ");
		util_json_str(o, out);
		fprintf(o,
			", \"kernels\": %" PRId64 ", \"memcpys\": %" PRId64 ", \"memsets\": %" PRId64
			", \"nvtx\": %" PRId64 ", \"api_calls\": %" PRId64 ", \"events\": %" PRId64 "}\n",
			st.kernels, st.memcpys, st.memsets, st.nvtx, st.api_calls, st.events);
	} else if (!quiet && !to_stdout) {
		printf("wrote %s: %" PRId64 " kernels, %" PRId64 " memcpys, %" PRId64 " memsets, %" PRId64
		       " NVTX events, %" PRId64 " API calls\n",
		       out, st.kernels, st.memcpys, st.memsets, st.nvtx, st.api_calls);
	}
	return 0;
}

/* ---- merge ---- */

static void merge_usage(FILE *out)
{
	fprintf(out,
		"usage: k3sim trace merge A.db B.db ... -o OUT.db [options]\n\n"
		"Join per-process trace databases (e.g. one per torchrun rank) into one timeline.\n"
		"Strings are re-interned; a process id found in more than one input is renamed in the\n"
		"later ones, so every process keeps its own globalPid. A GPU is known by (host, rank\n"
		"or process, ordinal) and its UUID where known: rows with the same UUID, or the same PCI\n"
		"bus id on the same host, are one device; without either (Kineto traces) two ranks'\n"
		"GPU 0 stay two devices. deviceIds are rewritten to the merged device (K3SIM_DEVICE_MAP\n"
		"keeps each process' CUDA ordinals, host and rank). Timestamps are kept as they are;\n"
		"a warning says when the inputs cannot be on one clock (a timeline spanning more than\n"
		"a day, epoch and unknown time origins mixed). See docs/TRACES.md.\n\n"
		"options:\n"
		"  -o, --output PATH   the database to write (required)\n"
		"  -f, --force         replace an existing output file (never an input, never\n"
		"                      before the merge succeeded)\n"
		"  --json              print what was merged as JSON\n"
		"  -q, --quiet         print nothing on success\n"
		"  -h, --help          this text\n");
}

/* Clocks that cannot be one clock: said whatever --quiet. */
static void merge_warnings(const struct trace_import_stats *st)
{
	const int64_t day_ns = (int64_t)86400 * 1000000000;
	int64_t first_plus_day;
	if (st->first_ns < st->last_ns &&
	    !__builtin_add_overflow(st->first_ns, day_ns, &first_plus_day) &&
	    st->last_ns > first_plus_day)
		fprintf(stderr,
			"k3sim trace merge: warning: the merged timeline spans more than a day (%" PRId64
			" to %" PRId64 " ns): its inputs are probably not on one clock (a Kineto trace"
			" without baseTimeNanoseconds counts from its own start)\n",
			st->first_ns, st->last_ns);
	if (st->clock_mixed)
		fprintf(stderr,
			"k3sim trace merge: warning: some inputs count time from the Unix epoch, others"
			" from an origin they do not give: their times cannot be compared\n");
}

static int trace_merge_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"output", required_argument, NULL, 'o'}, {"force", no_argument, NULL, 'f'},
		{"json", no_argument, NULL, 'j'},         {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	const char *out = NULL;
	bool force = false, json = false, quiet = false;
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:fqh", opts, NULL)) != -1) {
		switch (ch) {
		case 'o': out = optarg; break;
		case 'f': force = true; break;
		case 'j': json = true; break;
		case 'q': quiet = true; break;
		case 'h': merge_usage(stdout); return 0;
		case ':': return usage_error("merge", "missing value for", argv[optind - 1]);
		default: return usage_error("merge", "unknown option", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("merge", "no input databases", NULL);
	if (!out)
		return usage_error("merge", "no output: give -o OUT.db", NULL);
	struct trace_import_stats st;
	struct err e = {0};
	const char *const *inputs = (const char *const *)(argv + optind);
	size_t n = (size_t)(argc - optind);
	/* an input is refused as the output by inode (./a.db, links), not by its spelling */
	struct outfile_opts oo = {.force = force, .sqlite = true, .inputs = inputs, .n_inputs = n};
	struct outfile of;
	if (outfile_open(&of, out, &oo, &e)) {
		print_err("merge", &e);
		return 1;
	}
	int rc = trace_merge(outfile_tmp_path(&of), inputs, n, NULL, &st, &e);
	if (rc)
		outfile_abort(&of);
	else
		rc = outfile_commit(&of, &e);
	if (rc) {
		outfile_err_path(&of, &e);
		print_err("merge", &e);
		return 1;
	}
	if (json) {
		printf("{\"output\": ");
		util_json_str(stdout, out);
		printf(", \"inputs\": %zu, ", n);
		stats_json(stdout, &st);
		printf("}\n");
	} else if (!quiet) {
		printf("merged %zu databases: ", n);
		stats_human(stdout, &st);
		printf("\nwrote %s\n", out);
	}
	if (st.hosts > 1 && !quiet)
		fprintf(stderr,
			"k3sim trace merge: note: the inputs come from %" PRId64 " hosts; their"
			" timestamps are on different clocks and were not aligned\n",
			st.hosts);
	merge_warnings(&st);
	return 0;
}

/* ---- dispatch ---- */

static const struct sub subs[] = {
	{"import", trace_import_main, "nsys SQLite export or Kineto/Chrome JSON -> trace database"},
	{"summary", trace_summary_main, "kernel table, NVTX ranges, utilization, gaps, overlap"},
	{"export", trace_export_main, "trace database -> Perfetto / Chrome trace JSON"},
	{"merge", trace_merge_main, "join per-process databases into one timeline"},
	/* capture: owned by the CUPTI capture work, implemented in cli/cmd_trace_capture.c */
	{"capture", cmd_trace_capture, "run a program under CUPTI capture into a trace database"},
	{"validate", cmd_trace_validate, "predicted vs measured per op class, with charts (calibration)"},
	{"profile", cmd_trace_profile, "any program's kernels against the model, per op class and step"},
	{NULL, NULL, NULL},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: k3sim trace SUBCOMMAND [ARGS...]\n\n"
		     "Capture, import, summarize, export and merge kernel traces. Trace databases use\n"
		     "the table and column names of nsys' SQLite export.\n\nsubcommands:\n");
	for (const struct sub *s = subs; s->name; s++)
		fprintf(out, "  %-8s %s\n", s->name, s->summary);
	fprintf(out, "\n'k3sim trace SUBCOMMAND --help' describes each one.\n");
}

int cmd_trace(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	for (const struct sub *s = subs; s->name; s++)
		if (strcmp(argv[1], s->name) == 0)
			return s->fn(argc - 1, argv + 1);
	fprintf(stderr, "k3sim trace: unknown subcommand '%s'; see 'k3sim trace --help'\n", argv[1]);
	return 2;
}
