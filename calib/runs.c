#include "calib/runs.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/rules.h"

enum { INPUTS_ARENA_BYTES = 16 * 1024 * 1024, RUN_NAME_MAX = 63 };

void calib_inputs_init(struct calib_inputs *in)
{
	memset(in, 0, sizeof *in);
	arena_init(&in->arena, INPUTS_ARENA_BYTES);
}

void calib_inputs_release(struct calib_inputs *in)
{
	arena_release(&in->arena);
	memset(in, 0, sizeof *in);
}

static int add(struct calib_inputs *in, const char *path, const char *run, const char *arg, struct err *e)
{
	for (int i = 0; i < in->n; i++)
		if (strcmp(in->in[i].path, path) == 0) {
			err_set(e, NULL, 0, 0, "'%s' given twice (it would count twice)", path);
			return -EINVAL;
		}
	if (in->n == CALIB_SOURCES_MAX) {
		err_set(e, NULL, 0, 0, "%s: more than %d inputs", arg, CALIB_SOURCES_MAX);
		return -E2BIG;
	}
	in->in[in->n].path = path;
	in->in[in->n].run = run;
	in->n++;
	return 0;
}

int calib_inputs_add_path(struct calib_inputs *in, const char *path, struct err *e)
{
	if (!*path) {
		err_set(e, NULL, 0, 0, "an empty input path");
		return -EINVAL;
	}
	return add(in, path, NULL, path, e);
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
	       c == '_' || c == ':' || c == '+' || c == '-';
}

int calib_inputs_add_run(struct calib_inputs *in, const char *arg, struct err *e)
{
	const char *eq = strchr(arg, '=');
	if (!eq) {
		err_set(e, NULL, 0, 0, "--run '%s': expected NAME=FILE[,FILE...]", arg);
		return -EINVAL;
	}
	size_t nl = (size_t)(eq - arg);
	if (nl == 0 || nl > RUN_NAME_MAX) {
		err_set(e, NULL, 0, 0, "--run '%s': the run's name must be 1..%d characters", arg,
		        RUN_NAME_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < nl; i++)
		if (!name_char(arg[i])) {
			err_set(e, NULL, 0, 0,
			        "--run '%s': '%c' in the run's name (letters, digits and ._:+- only)", arg,
			        arg[i]);
			return -EINVAL;
		}
	const char *name = arena_strndup(&in->arena, arg, nl);
	char *files = arena_strndup(&in->arena, eq + 1, strlen(eq + 1));
	if (!name || !files) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	/* the same name again: one run (the earlier spelling's string, so runs compare by name) */
	for (int i = 0; i < in->n; i++)
		if (in->in[i].run && strcmp(in->in[i].run, name) == 0)
			name = in->in[i].run;
	if (!*files) {
		err_set(e, NULL, 0, 0, "--run '%s': no files", arg);
		return -EINVAL;
	}
	const int n0 = in->n;
	for (char *p = files, *next; p; p = next) {
		next = strchr(p, ',');
		if (next)
			*next++ = '\0';
		int rc = -EINVAL;
		if (!*p)
			err_set(e, NULL, 0, 0, "--run '%s': an empty file name", arg);
		else
			rc = add(in, p, name, arg, e);
		if (rc < 0) {
			in->n = n0; /* all of it or none */
			return rc;
		}
	}
	return 0;
}

int calib_points_add_inputs(struct calib_points *pts, const struct calib_inputs *in, const char *rules_name,
                            struct calib_match *first, char *inputs, size_t cap, struct err *e)
{
	struct calib_rules rules = {0};
	const bool have_rules = rules_name && strcmp(rules_name, "none") != 0;
	if (have_rules && calib_rules_load(&rules, rules_name, e) < 0)
		return -EINVAL;
	if (cap)
		inputs[0] = '\0';
	int rc = 0;
	for (int i = 0; i < in->n && rc == 0; i++) {
		const struct calib_input *x = &in->in[i];
		if (x->run) {
			if ((rc = calib_points_begin_run(pts, x->run, e)) < 0)
				break;
		} else {
			calib_points_end_run(pts);
		}
		struct calib_match m;
		if ((rc = calib_points_add_file(pts, x->path, have_rules ? &rules : NULL, &m, e)) < 0)
			break;
		bool have = first->n_samples || first->kernels || first->memcpys;
		if (!have && (m.n_samples || m.kernels || m.memcpys))
			*first = m;
		else
			calib_match_release(&m);
		size_t used = strlen(inputs);
		if (used < cap)
			snprintf(inputs + used, cap - used, "%s%s", i ? ", " : "", x->path);
	}
	calib_points_end_run(pts);
	if (rc == 0)
		rc = calib_points_protocol(pts, e);
	if (have_rules)
		calib_rules_release(&rules);
	return rc < 0 ? rc : 0;
}

/* ---- one point per op ---- */

#define CMP(x, y)                                                                                            \
	do {                                                                                                 \
		if ((x) != (y))                                                                              \
			return (x) < (y) ? -1 : 1;                                                           \
	} while (0)

int calib_point_cmp(const struct calib_point *a, const struct calib_point *b)
{
	CMP((int)a->clock, (int)b->clock);
	return calib_op_cmp(&a->op, &b->op);
}

int calib_op_cmp(const struct op *a, const struct op *b)
{
	CMP((int)a->kind, (int)b->kind);
	int nc = strcmp(a->name ? a->name : "", b->name ? b->name : "");
	if (nc)
		return nc;
	CMP(a->m, b->m);
	CMP(a->n, b->n);
	CMP(a->k, b->k);
	CMP(a->groups, b->groups);
	CMP(a->groups_touched, b->groups_touched);
	CMP(a->expert_cv, b->expert_cv);
	CMP(a->b, b->b);
	CMP(a->t, b->t);
	CMP(a->h, b->h);
	CMP(a->ctx, b->ctx);
	CMP(a->dk, b->dk);
	CMP(a->dv, b->dv);
	CMP(a->top_k, b->top_k);
	CMP(a->index_heads, b->index_heads);
	CMP(a->index_dim, b->index_dim);
	CMP(a->chunk, b->chunk);
	CMP(a->ranks, b->ranks);
	CMP(a->comm_bytes, b->comm_bytes);
	CMP(a->in_tensors, b->in_tensors);
	CMP(a->out_tensors, b->out_tensors);
	CMP(a->flops_per_element, b->flops_per_element);
	CMP(a->sources, b->sources);
	CMP(a->extra_state_bytes, b->extra_state_bytes);
	CMP((int)a->cold, (int)b->cold);
	CMP((int)a->w_dtype, (int)b->w_dtype);
	CMP((int)a->a_dtype, (int)b->a_dtype);
	CMP((int)a->o_dtype, (int)b->o_dtype);
	CMP((int)a->s_dtype, (int)b->s_dtype);
	CMP(a->cache_bytes_per_token, b->cache_bytes_per_token);
	CMP(a->index_bytes_per_token, b->index_bytes_per_token);
	/* derived: what a field added to struct op later changes shows here */
	CMP(a->flops, b->flops);
	CMP(a->flops_lowp, b->flops_lowp);
	CMP(op_bytes(a), op_bytes(b));
	CMP(a->serial_steps, b->serial_steps);
	return 0;
}

static int run_of(const struct calib_point *p, int n_runs)
{
	return p->run >= 0 && p->run < n_runs ? p->run : 0;
}

struct ref {
	const struct calib_point *p;
	size_t i; /* index in the input */
	int run;
};

/* op, then run, then first appearance */
static int cmp_ref(const void *x, const void *y)
{
	const struct ref *a = x, *b = y;
	int c = calib_point_cmp(a->p, b->p);
	if (c)
		return c;
	CMP(a->run, b->run);
	CMP(a->i, b->i);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* the median of v[0..n), n >= 1 (sorts v) */
static double median(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One run's points of one op, r[0..n): their medians of median, p10 and p90. */
static void run_median(const struct ref *r, size_t n, double *tmp, double out[3])
{
	for (int q = 0; q < 3; q++) {
		for (size_t i = 0; i < n; i++) {
			const struct calib_point *x = r[i].p;
			tmp[i] = q == 0 ? x->measured_s : q == 1 ? x->p10_s : x->p90_s;
		}
		out[q] = median(tmp, n);
	}
}

/* The points of one op, r[0..n) sorted by run: one point over its runs, into *q. */
static void merge_op(const struct ref *r, size_t n, double *tmp, double *per_run, int n_runs,
                     struct calib_point *q)
{
	double *med = per_run, *p10 = per_run + n_runs, *p90 = per_run + 2 * n_runs;
	int runs = 0;
	int64_t samples = 0;
	for (size_t a = 0; a < n;) {
		size_t b = a;
		while (b < n && r[b].run == r[a].run)
			samples += r[b++].p->samples;
		double v[3];
		run_median(r + a, b - a, tmp, v);
		med[runs] = v[0];
		p10[runs] = v[1];
		p90[runs] = v[2];
		runs++;
		a = b;
	}
	double lo = med[0], hi = med[0];
	for (int k = 1; k < runs; k++) {
		lo = fmin(lo, med[k]);
		hi = fmax(hi, med[k]);
	}
	/* the earliest of the group stands for it (its spec, class, protocol flag) */
	const struct ref *f = &r[0];
	for (size_t a = 1; a < n; a++)
		if (r[a].i < f->i)
			f = &r[a];
	*q = *f->p;
	/* two code paths under one op: a point whose kernels differ from the first's */
	q->kernel_other = NULL;
	q->kernel_other_run = -1;
	for (size_t a = 0; a < n; a++) {
		const struct calib_point *x = r[a].p;
		if (x->kernels_sig && q->kernels_sig && x->kernels_sig != q->kernels_sig) {
			q->kernel_other = x->kernel ? x->kernel : "(unnamed)";
			q->kernel_other_run = r[a].run;
			break;
		}
	}
	/* the clock: the median of the points that know theirs (tmp is free again) */
	size_t k = 0;
	for (size_t a = 0; a < n; a++)
		if (r[a].p->sm_clock_hz > 0)
			tmp[k++] = r[a].p->sm_clock_hz;
	q->sm_clock_hz = k ? median(tmp, k) : 0;
	q->measured_s = median(med, (size_t)runs);
	q->p10_s = median(p10, (size_t)runs);
	q->p90_s = median(p90, (size_t)runs);
	q->samples = samples;
	q->runs = runs;
	q->run = runs == 1 ? r[0].run : -1;
	q->run_min_s = lo;
	q->run_max_s = hi;
	q->spread = q->measured_s > 0 ? (hi - lo) / q->measured_s : 0;
}

int calib_points_by_op(struct calib_points *out, const struct calib_points *in, const bool *use_run,
                       struct err *e)
{
	const int n_runs = in->n_runs > 0 ? in->n_runs : 1;
	const size_t cap = in->n ? in->n : 1;
	struct ref *ref = malloc(cap * sizeof *ref);
	size_t *slot = malloc(cap * sizeof *slot); /* input index -> its merged point, or SIZE_MAX */
	double *tmp = malloc(cap * sizeof *tmp), *per_run = malloc(3 * (size_t)n_runs * sizeof *per_run);
	struct calib_point *merged = malloc(cap * sizeof *merged);
	int rc = 0;
	calib_points_init(out);
	if (!ref || !slot || !tmp || !per_run || !merged)
		goto oom;
	out->n_sources = in->n_sources;
	out->n_runs = in->n_runs;
	out->have_info = in->have_info;
	out->info = in->info;
	out->csv_rows_skipped = in->csv_rows_skipped;
	memcpy(out->source_run, in->source_run, sizeof out->source_run);
	memcpy(out->source_clock_readings, in->source_clock_readings, sizeof out->source_clock_readings);
	for (int s = 0; s < in->n_sources; s++)
		if (!(out->sources[s] = arena_strndup(&out->arena, in->sources[s], strlen(in->sources[s]))))
			goto oom;
	for (int r = 0; r < in->n_runs; r++) {
		out->runs[r] = in->runs[r];
		if (!(out->runs[r].name =
		          arena_strndup(&out->arena, in->runs[r].name, strlen(in->runs[r].name))))
			goto oom;
	}
	size_t m = 0;
	for (size_t i = 0; i < in->n; i++) {
		slot[i] = SIZE_MAX;
		int r = run_of(&in->p[i], n_runs);
		if (!use_run || use_run[r])
			ref[m++] = (struct ref){.p = &in->p[i], .i = i, .run = r};
	}
	qsort(ref, m, sizeof *ref, cmp_ref);
	size_t n_out = 0;
	for (size_t g = 0; g < m;) {
		size_t h = g + 1;
		while (h < m && calib_point_cmp(ref[h].p, ref[g].p) == 0)
			h++;
		merge_op(ref + g, h - g, tmp, per_run, n_runs, &merged[n_out]);
		size_t f = ref[g].i;
		for (size_t a = g + 1; a < h; a++)
			if (ref[a].i < f)
				f = ref[a].i;
		slot[f] = n_out++;
		g = h;
	}
	/* the instances of the runs taken, as they are */
	for (size_t i = 0; i < in->n_inst; i++) {
		const struct calib_instance *x = &in->inst[i];
		int r = x->source >= 0 && x->source < in->n_sources ? in->source_run[x->source] : 0;
		if ((!use_run || (r >= 0 && r < n_runs && use_run[r])) && calib_points_add_instance(out, x) < 0)
			goto oom;
	}
	/* in order of first appearance */
	if (!(out->p = malloc((n_out ? n_out : 1) * sizeof *out->p)))
		goto oom;
	out->cap = n_out ? n_out : 1;
	for (size_t i = 0; i < in->n; i++) {
		if (slot[i] == SIZE_MAX)
			continue;
		struct calib_point *q = &out->p[out->n];
		*q = merged[slot[i]];
		if (!(q->spec = arena_strndup(&out->arena, q->spec, strlen(q->spec))) ||
		    (q->kernel && !(q->kernel = arena_strndup(&out->arena, q->kernel, strlen(q->kernel)))) ||
		    (q->kernel_other &&
		     !(q->kernel_other = arena_strndup(&out->arena, q->kernel_other, strlen(q->kernel_other)))))
			goto oom;
		out->n++;
	}
	goto out;
oom:
	err_set(e, NULL, 0, 0, "out of memory");
	rc = -ENOMEM;
out:
	free(ref);
	free(slot);
	free(tmp);
	free(per_run);
	free(merged);
	return rc;
}

size_t calib_points_mixed(const struct calib_points *pts, const struct calib_point **first)
{
	size_t n = 0;
	*first = NULL;
	for (size_t i = 0; i < pts->n; i++) {
		if (!pts->p[i].kernel_other)
			continue;
		if (!n++)
			*first = &pts->p[i];
	}
	return n;
}
