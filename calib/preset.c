#include "calib/preset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void qstr(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void list(FILE *f, const double *v, int n, double scale)
{
	fputc('[', f);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%.6g", i ? ", " : "", v[i] * scale);
	fputc(']', f);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The distinct held-out main sizes of class `label`, as a YAML flow list. */
static void held_sizes(FILE *f, const struct calib_points *pts, const char *label)
{
	double *v = malloc((pts->n ? pts->n : 1) * sizeof *v);
	int n = 0;
	if (!v) {
		fprintf(f, "[]");
		return;
	}
	for (size_t i = 0; i < pts->n; i++)
		if (pts->p[i].held_out && strcmp(pts->p[i].label, label) == 0)
			v[n++] = pts->p[i].main_size;
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	fputc('[', f);
	for (int i = 0, out = 0; i < n; i++)
		if (i == 0 || v[i] != v[i - 1])
			fprintf(f, "%s%.0f", out++ ? ", " : "", v[i]);
	fputc(']', f);
	free(v);
}

static void stage(FILE *f, const char *name, const struct calib_fit_stage *s)
{
	fprintf(f, "    %s: {fitted: %s, points: %d", name, s->fitted ? "true" : "false", s->points);
	if (s->points)
		fprintf(f, ", mean_abs_log_before: %.4f, mean_abs_log_after: %.4f", s->before, s->after);
	fprintf(f, "}\n");
}

static const char *main_size_name(const char *label)
{
	if (strncmp(label, "gemm", 4) == 0 || strncmp(label, "grouped_gemm", 12) == 0)
		return "m";
	if (strncmp(label, "copy", 4) == 0 || strncmp(label, "elementwise", 11) == 0)
		return "elements (bytes for copies)";
	if (strncmp(label, "kda_decode", 10) == 0)
		return "b";
	if (strncmp(label, "kda_verify", 10) == 0)
		return "t (tokens per request)";
	if (strncmp(label, "kda_chunk", 9) == 0)
		return "t x h";
	if (strstr(label, "mla") || strstr(label, "dsa"))
		return "ctx";
	return "bytes";
}

int calib_preset_write(FILE *f, const struct hw *hw, const struct calib_preset_meta *meta, struct err *e)
{
	const struct calib_points *pts = meta->pts;
	fprintf(f,
	        "# %s: written by `k3sim calibrate` from measured kernels (see the calibration: section).\n"
	        "# Efficiency tables hold modeled/measured device time per class over modeled time (measured\n"
	        "# times never falling as modeled time grows), gemm_points the measured device times of dense\n"
	        "# GEMM shapes over m, interpolated in log space (hw/hw.h); curves, latencies and rates not\n"
	        "# listed under calibration.fit keep the values of the base preset '%s' (launch latencies\n"
	        "# are gaps between kernels, which kernel durations do not measure).\n",
	        hw->name, meta->base ? meta->base : "?");
	fprintf(f, "name: ");
	qstr(f, hw->name);
	fprintf(f, "\ndescription: ");
	qstr(f, hw->description);
	fprintf(f, "\nsource: ");
	qstr(f, hw->source);
	fprintf(f, "\ncalibrated: %s\n", hw->calibrated ? "true" : "false");
	fprintf(f, "device:\n");
	hw_write_section(f, hw, "device");
	fprintf(f, "interconnect:\n");
	hw_write_section(f, hw, "interconnect");
	fprintf(f,
	        "efficiency:\n  gemm: {max: %.9g, half_gflop: %.9g}\n  memory: {max: %.9g, half_mib: %.9g}\n"
	        "  comm: {max: %.9g, half_mib: %.9g}\n",
	        hw->eff_gemm.max, hw->eff_gemm.half / 1e9, hw->eff_memory.max,
	        hw->eff_memory.half / 1048576.0, hw->eff_comm.max, hw->eff_comm.half / 1048576.0);
	if (hw->n_coll) {
		fprintf(f, "  collectives:            # kind[.ranks]: latency per step, bandwidth efficiency\n");
		for (int i = 0; i < hw->n_coll; i++) {
			const struct hw_coll_model *m = &hw->coll[i];
			fprintf(f, "    %s", hw_coll_name(m->coll));
			if (m->ranks)
				fprintf(f, ".%lld", (long long)m->ranks);
			fprintf(f, ": {step_latency_us: %.6g, max: %.6g, half_mib: %.6g}\n", m->step_latency_s * 1e6,
			        m->eff.max, m->eff.half / 1048576.0);
		}
	}
	if (hw->n_tables) {
		fprintf(
		    f,
		    "  tables:                 # class[.dtype] (comm[.kind[.ranks]]): modeled/measured device "
		    "time over a key\n");
		for (int i = 0; i < hw->n_tables; i++) {
			const struct hw_table *t = &hw->tables[i];
			static const char *const key[] = {"model_us", "gflop", "mib"};
			static const double scale[] = {1e6, 1e-9, 1.0 / 1048576.0};
			char qual[48] = "";
			if (t->cls == HW_CLASS_COMM && !t->any_coll && t->ranks)
				snprintf(qual, sizeof qual, ".%s.%lld", hw_coll_name(t->coll), (long long)t->ranks);
			else if (t->cls == HW_CLASS_COMM && !t->any_coll)
				snprintf(qual, sizeof qual, ".%s", hw_coll_name(t->coll));
			else if (t->cls != HW_CLASS_COMM && !t->any_dtype)
				snprintf(qual, sizeof qual, ".%s", dtype_name(t->dtype));
			fprintf(f, "    %s%s:\n      %s: ", hw_class_name(t->cls), qual, key[t->key]);
			list(f, t->x, t->n, scale[t->key]);
			fprintf(f, "\n      eff: ");
			list(f, t->eff, t->n, 1.0);
			fputc('\n', f);
		}
	}
	if (hw->n_gemm_points) {
		fprintf(f, "  gemm_points:            # measured dense GEMMs: device time (us) over m, boost "
		           "clock\n");
		for (int i = 0; i < hw->n_gemm_points; i++) {
			const struct hw_gemm_points *g = &hw->gemm_points[i];
			fprintf(f, "    - {dtype: %s, n: %lld, k: %lld, m: ", dtype_name(g->dtype),
			        (long long)g->n, (long long)g->k);
			list(f, g->m, g->points, 1.0);
			fprintf(f, ", us: ");
			list(f, g->time_s, g->points, 1e6);
			fprintf(f, "}\n");
		}
	}
	fprintf(f, "kernels:\n");
	hw_write_section(f, hw, "kernels");
	fprintf(f, "calibration:\n  date: %s\n  base: ", meta->date ? meta->date : "?");
	qstr(f, meta->base);
	if (meta->command) {
		fprintf(f, "\n  command: ");
		qstr(f, meta->command);
	}
	if (pts && pts->have_info) {
		const struct calib_trace_info *in = &pts->info;
		fprintf(f, "\n  device: ");
		qstr(f, in->device);
		fprintf(f, "\n  sms: %lld\n  sm_clock_mhz: %.6g\n  memory_mib: %.9g", (long long)in->sms,
		        (double)in->sm_clock_hz / 1e6, (double)in->memory_bytes / 1048576.0);
		if (in->driver[0] >= '0' && in->driver[0] <= '9') {
			fprintf(f, "\n  nvidia_driver: ");
			qstr(f, in->driver);
		}
		if (in->cuda_driver[0]) {
			fprintf(f, "\n  cuda_driver_version: ");
			qstr(f, in->cuda_driver);
		}
		if (in->cuda_runtime[0]) {
			fprintf(f, "\n  cuda_runtime_version: ");
			qstr(f, in->cuda_runtime);
		}
		if (in->start_utc_ns > 0) {
			time_t t = (time_t)(in->start_utc_ns / 1000000000);
			struct tm tm;
			char buf[32];
			gmtime_r(&t, &tm);
			strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
			fprintf(f, "\n  captured_utc: %s", buf);
		}
		if (in->host[0]) {
			fprintf(f, "\n  host: ");
			qstr(f, in->host);
		}
		if (in->command[0]) {
			fprintf(f, "\n  captured_command: ");
			qstr(f, in->command);
		}
	}
	fprintf(f, "\n  traces:\n");
	for (int i = 0; pts && i < pts->n_sources; i++) {
		fprintf(f, "    - ");
		qstr(f, pts->sources[i]);
		fputc('\n', f);
	}
	if (pts && pts->n_runs) {
		fprintf(f, "  runs:                   # measurement sessions; a point is the median over runs\n");
		for (int r = 0; r < pts->n_runs; r++) {
			const struct calib_run *run = &pts->runs[r];
			fprintf(f, "    - {name: ");
			qstr(f, run->name);
			fprintf(f, ", traces: [");
			for (int i = 0, k = 0; i < pts->n_sources; i++)
				if (pts->source_run[i] == r) {
					fprintf(f, "%s", k++ ? ", " : "");
					qstr(f, pts->sources[i]);
				}
			fputc(']', f);
			if (run->have_info) {
				fprintf(f, ", device: ");
				qstr(f, run->info.device);
				if (run->info.uuid[0]) {
					fprintf(f, ", uuid: ");
					qstr(f, run->info.uuid);
				}
				if (run->info.driver[0]) {
					fprintf(f, ", nvidia_driver: ");
					qstr(f, run->info.driver);
				}
				if (run->info.sm_clock_hz > 0)
					fprintf(f, ", sm_clock_mhz: %.6g", (double)run->info.sm_clock_hz / 1e6);
			}
			fprintf(f, "}\n");
		}
	}
	fprintf(f, "  protocol: \"fit on training points only; errors reported on held-out points only. "
	           "Training: GEMM m and KDA decode b powers of 4; KDA verify t odd or a power of 4; copies sizes powers of 2; KDA prefill t*h "
	           "4^k or 3*4^k; attention ctx+t powers of 4; AttnRes, routing, combine and ShortConv tokens powers of 4; collectives bytes powers of 2, a series measured at powers of 2 only "
	           "powers of 4 (one time per instance: its shortest rank). "
	           "Everything else is held out. A point is one op: the median over runs of each run's median.\"\n");
	if (meta->fit) {
		fprintf(f, "  fit:\n    train_points: %d\n    held_out_points: %d\n", meta->fit->train_points,
		        meta->fit->held_out_points);
		stage(f, "memory", &meta->fit->memory);
		stage(f, "gemm", &meta->fit->gemm);
		if (meta->fit->grouped_fp4.points)
			stage(f, "grouped_fp4", &meta->fit->grouped_fp4);
		stage(f, "kda_chunk", &meta->fit->kda_chunk);
		stage(f, "kda_verify", &meta->fit->kda_verify);
		stage(f, "sustained_clock", &meta->fit->sustained);
		stage(f, "power_clock", &meta->fit->power);
		if (meta->fit->power_byte.points)
			stage(f, "power_draw.byte", &meta->fit->power_byte);
		for (int c = 0; c < HW_POWER_CLASS_COUNT; c++)
			if (meta->fit->power_class[c].points) {
				char name[48];
				snprintf(name, sizeof name, "power_draw.%s", hw_power_class_name((enum hw_power_class)c));
				stage(f, name, &meta->fit->power_class[c]);
			}
		stage(f, "comm", &meta->fit->comm);
		for (int i = 0; i < meta->fit->n_coll; i++) {
			const struct calib_fit_coll *c = &meta->fit->coll[i];
			char name[48];
			snprintf(name, sizeof name, "comm.%s.%lld", hw_coll_name(c->coll), (long long)c->ranks);
			stage(f, name, &c->stage);
		}
		fprintf(f, "    tables: %d\n    gemm_shapes: %d\n", meta->fit->tables,
		        meta->fit->gemm_shapes);
	}
	if (meta->n_classes) {
		fprintf(
		    f,
		    "  held_out:               # absolute %% error of this preset on the held-out points; "
		    "by_run, by_gemm_shape: of refits without that run or shape (k3sim calibrate --help)\n");
		for (int i = 0; i < meta->n_classes; i++) {
			const struct calib_class_summary *c = &meta->classes[i];
			fprintf(f, "    %s: {train: %d, held_out: %d", c->label, c->train, c->held_out);
			if (c->held_med_pct >= 0)
				fprintf(f, ", median_pct: %.2f, p90_pct: %.2f", c->held_med_pct,
				        c->held_p90_pct);
			if (c->run_med_pct >= 0)
				fprintf(f, ", by_run: {median_pct: %.2f, p90_pct: %.2f}", c->run_med_pct,
				        c->run_p90_pct);
			if (c->shape_med_pct >= 0)
				fprintf(f, ", by_gemm_shape: {median_pct: %.2f, p90_pct: %.2f}", c->shape_med_pct,
				        c->shape_p90_pct);
			if (c->noise_points)
				fprintf(f, ", run_spread: {points: %d, median_pct: %.2f, p90_pct: %.2f}",
				        c->noise_points, c->noise_med_pct, c->noise_p90_pct);
			if (pts && c->held_out) {
				fprintf(f, ", held_out_%s: ",
				        strcmp(main_size_name(c->label), "m") == 0 ? "m" : "sizes");
				held_sizes(f, pts, c->label);
			}
			fprintf(f, "}\n");
		}
	}
	if (ferror(f)) {
		err_set(e, NULL, 0, 0, "write failed");
		return -EIO;
	}
	return 0;
}
