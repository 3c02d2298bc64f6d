#include "calib/points.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/rules.h"
#include "sim/cost.h"
#include "sim/power.h"
#include "sim/opspec.h"
#include "util/doc.h"

enum { POINTS_ARENA_BYTES = 512 * 1024 * 1024, CSV_LINE_MAX = 4096 };

void calib_points_init(struct calib_points *pts)
{
	memset(pts, 0, sizeof *pts);
	pts->cur_run = -1;
	arena_init(&pts->arena, POINTS_ARENA_BYTES);
}

static int find_run(const struct calib_points *pts, const char *name)
{
	for (int r = 0; r < pts->n_runs; r++)
		if (strcmp(pts->runs[r].name, name) == 0)
			return r;
	return -1;
}

/* The run `name`, made if new: its index, or an error. */
static int make_run(struct calib_points *pts, const char *name, const char *file, struct err *e)
{
	int r = find_run(pts, name);
	if (r >= 0)
		return r;
	if (pts->n_runs == CALIB_SOURCES_MAX) {
		err_set(e, file, 0, 0, "more than %d runs", CALIB_SOURCES_MAX);
		return -E2BIG;
	}
	struct calib_run *run = &pts->runs[pts->n_runs];
	memset(run, 0, sizeof *run);
	if (!(run->name = arena_strndup(&pts->arena, name, strlen(name)))) {
		err_set(e, file, 0, 0, "out of memory");
		return -ENOMEM;
	}
	return pts->n_runs++;
}

int calib_points_begin_run(struct calib_points *pts, const char *name, struct err *e)
{
	int r = make_run(pts, name, NULL, e);
	if (r < 0)
		return r;
	pts->cur_run = r;
	return 0;
}

void calib_points_end_run(struct calib_points *pts)
{
	pts->cur_run = -1;
}

void calib_points_release(struct calib_points *pts)
{
	free(pts->p);
	free(pts->inst);
	arena_release(&pts->arena);
	memset(pts, 0, sizeof *pts);
}

static bool pow_of(double x, double base)
{
	if (x < 1 || x != floor(x))
		return false;
	while (x > 1) {
		if (fmod(x, base) != 0)
			return false;
		x /= base;
	}
	return true;
}

static enum dtype wider(enum dtype a, enum dtype b)
{
	return dtype_bytes_per_element(a) >= dtype_bytes_per_element(b) ? a : b;
}

void calib_op_class(const struct op *op, char *label, size_t n, enum hw_class *cls, double *size)
{
	const char *kind = op->name ? op->name : op_kind_name(op->kind);
	switch (op->kind) {
	case OP_GEMM:
	case OP_GROUPED_GEMM:
		*cls = op->kind == OP_GEMM ? HW_CLASS_GEMM : HW_CLASS_GROUPED_GEMM;
		*size = op->flops;
		{
			/* as sim_gemm_table_dtype keys its table: the MXFP4 experts with 16-bit
			 * activations are a class of their own */
			enum dtype t = wider(op->w_dtype, op->a_dtype);
			if (op->kind == OP_GROUPED_GEMM && op->w_dtype == DT_MXFP4 && (t == DT_BF16 || t == DT_FP16))
				t = DT_MXFP4;
			snprintf(label, n, "%s.%s", kind, dtype_name(t));
		}
		return;
	case OP_ELEMENTWISE:
	case OP_ATTNRES:
	case OP_ROUTE:
	case OP_COMBINE:
	case OP_SHORT_CONV:
	case OP_QUANT:
		*cls = sim_op_class(op->kind);
		*size = (double)op_bytes(op);
		snprintf(label, n, "%s", kind);
		return;
	case OP_KDA_CHUNK:
		*cls = HW_CLASS_KDA_CHUNK;
		*size = op->flops;
		snprintf(label, n, "kda_chunk.%s", dtype_name(op->s_dtype));
		return;
	case OP_KDA_DECODE:
		*cls = op->t > 1 ? HW_CLASS_KDA_VERIFY : HW_CLASS_KDA_DECODE;
		*size = (double)op_bytes(op);
		snprintf(label, n, "%s.%s", op->t > 1 ? "kda_verify" : "kda_decode", dtype_name(op->s_dtype));
		return;
	case OP_MLA_PREFILL:
	case OP_MLA_DECODE:
	case OP_DSA_PREFILL:
	case OP_DSA_DECODE:
		*cls = sim_attn_prefill_regime(op) ? HW_CLASS_ATTENTION_PREFILL : HW_CLASS_ATTENTION;
		*size = op->flops;
		snprintf(label, n, "%s", kind);
		return;
	default:
		*cls = HW_CLASS_COMM;
		*size = (double)op->comm_bytes;
		snprintf(label, n, "%s", kind);
		return;
	}
}

bool calib_op_trains(const struct op *op, double *main_size)
{
	double x;
	switch (op->kind) {
	case OP_GEMM:
	case OP_GROUPED_GEMM:
		*main_size = (double)op->m;
		return pow_of((double)op->m, 4);
	case OP_ELEMENTWISE:
		x = (double)op->m * (double)op->n;
		*main_size = x;
		return pow_of(x, 2);
	case OP_ATTNRES:
	case OP_ROUTE:
	case OP_COMBINE:
	case OP_SHORT_CONV:
	case OP_QUANT:
		/* tokens a power of 4 (1, 4, 16, ... 16K) train; the other powers of 2 and the
		 * rest are held out */
		*main_size = (double)op->m;
		return pow_of((double)op->m, 4);
	case OP_KDA_DECODE:
		if (op->t > 1) {
			/* verify: tokens per request (accepted + drafts); the odd counts and powers of
			 * 4 train (with 8 drafts: 1 and 8 accepted), the others are held out */
			*main_size = (double)op->t;
			return op->t % 2 == 1 || pow_of((double)op->t, 4);
		}
		*main_size = (double)op->b;
		return pow_of((double)op->b, 4);
	case OP_KDA_CHUNK:
		/* Head counts are the few the TP degrees give (96, 48, 24, 12), each its own kernel
		 * regime: every one is trained, and every other sequence length (4^odd tokens:
		 * 1K, 16K) is; the rest (4K, 64K, batches, other lengths) are held out. */
		x = (double)op->t * (double)op->h;
		*main_size = x;
		return pow_of((double)op->t, 4) && ((int)lround(log((double)op->t) / log(4.0))) % 2 == 1;
	case OP_MLA_PREFILL:
	case OP_MLA_DECODE:
	case OP_DSA_PREFILL:
	case OP_DSA_DECODE:
		/* the tokens the last query attends, ctx + t: a decode after 2^k - 1 cached tokens
		 * (the public tables' grid) attends 2^k, a prefill without prefix its t tokens */
		x = (double)op->ctx + (double)op->t;
		*main_size = x;
		return pow_of(x, 4);
	default:
		*main_size = (double)op->comm_bytes;
		return pow_of((double)op->comm_bytes, 2);
	}
}

/* The series a collective belongs to for the protocol: its kind and name, rank count and clock. */
static int cmp_coll_series(const void *a, const void *b)
{
	const struct calib_point *x = *(const struct calib_point *const *)a,
	                         *y = *(const struct calib_point *const *)b;
	if (x->op.kind != y->op.kind)
		return (int)x->op.kind - (int)y->op.kind;
	int c = strcmp(x->op.name ? x->op.name : "", y->op.name ? y->op.name : "");
	if (c)
		return c;
	if (x->op.ranks != y->op.ranks)
		return (x->op.ranks > y->op.ranks) - (x->op.ranks < y->op.ranks);
	return (int)x->clock - (int)y->clock;
}

int calib_points_protocol(struct calib_points *pts, struct err *e)
{
	size_t n = 0;
	for (size_t i = 0; i < pts->n; i++)
		n += pts->p[i].cls == HW_CLASS_COMM;
	if (n == 0)
		return 0;
	struct calib_point **c = malloc(n * sizeof *c);
	if (!c) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < pts->n; i++)
		if (pts->p[i].cls == HW_CLASS_COMM)
			c[n++] = &pts->p[i];
	qsort(c, n, sizeof *c, cmp_coll_series);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		bool doubling = true;
		for (; j < n && cmp_coll_series(&c[i], &c[j]) == 0; j++)
			if (!pow_of((double)c[j]->op.comm_bytes, 2))
				doubling = false;
		for (size_t k = i; k < j; k++)
			c[k]->held_out = doubling ? !pow_of((double)c[k]->op.comm_bytes, 4)
			                          : !pow_of((double)c[k]->op.comm_bytes, 2);
		i = j;
	}
	free(c);
	return 0;
}

int calib_points_at_boost(struct calib_points *pts, const struct hw *hw, int *n_scaled, struct err *e)
{
	/* the physical model alone, without launch gaps: what sim_op_cost scales a calibrated
	 * time by between clocks */
	struct hw *dev = malloc(sizeof *dev);
	int n = 0;
	if (!dev) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	{
		*dev = *hw;
		dev->n_tables = 0;
		dev->n_gemm_points = 0;
		dev->launch_latency_s = dev->graph_launch_latency_s = 0;
		for (size_t i = 0; i < pts->n; i++) {
			struct calib_point *p = &pts->p[i];
			if (p->clock != HW_CLOCK_BOOST || !(p->sm_clock_hz > 0) ||
			    !(p->sm_clock_hz < hw->sm_clock_hz))
				continue;
			struct cost_opts at = {.clock = {.given_hz = p->sm_clock_hz}, .full_clock_scaling = true};
			struct op_cost cb, cc;
			sim_op_cost(dev, &p->op, NULL, &cb);
			sim_op_cost(dev, &p->op, &at, &cc);
			if (!(cb.time_s > 0) || !(cc.time_s >= cb.time_s))
				continue;
			/* the preset's clock laws inverted (sim_boost_time_s): the model's ratio where it
			 * has none */
			double f = sim_boost_time_s(hw, sim_power_class(hw, &p->op), p->measured_s, cb.time_s, cc.time_s,
						    p->sm_clock_hz / hw->sm_clock_hz) /
				   p->measured_s;
			p->measured_s *= f;
			p->p10_s *= f;
			p->p90_s *= f;
			p->run_min_s *= f;
			p->run_max_s *= f;
			n++;
		}
		free(dev);
	}
	if (n_scaled)
		*n_scaled = n;
	return 0;
}

static int add_point(struct calib_points *pts, const char *spec, const struct op *op, enum hw_clock clock,
                     double med, double p10, double p90, int64_t samples, int32_t source, struct err *e)
{
	if (pts->n == pts->cap) {
		size_t cap = pts->cap ? 2 * pts->cap : 256;
		if (cap > CALIB_POINTS_MAX) {
			err_set(e, NULL, 0, 0, "more than %d measured points", CALIB_POINTS_MAX);
			return -E2BIG;
		}
		struct calib_point *p = realloc(pts->p, cap * sizeof *p);
		if (!p) {
			err_set(e, NULL, 0, 0, "out of memory");
			return -ENOMEM;
		}
		pts->p = p;
		pts->cap = cap;
	}
	struct calib_point *p = &pts->p[pts->n];
	memset(p, 0, sizeof *p);
	if (strncmp(spec, "k3sim op=", 9) == 0)
		spec += 9;
	else if (strncmp(spec, "k3sim ", 6) == 0)
		spec += 6;
	p->spec = arena_strndup(&pts->arena, spec, strlen(spec));
	if (!p->spec) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	p->op = *op;
	calib_op_class(op, p->label, sizeof p->label, &p->cls, &p->size);
	p->clock = clock;
	if (clock != HW_CLOCK_BOOST) {
		size_t l = strlen(p->label);
		snprintf(p->label + l, sizeof p->label - l, "@%s", hw_clock_name(clock));
	}
	p->held_out = !calib_op_trains(op, &p->main_size);
	p->measured_s = med;
	p->p10_s = p10;
	p->p90_s = p90;
	p->samples = samples;
	p->source = source;
	p->run = pts->source_run[source];
	p->runs = 1;
	p->run_min_s = p->run_max_s = med;
	pts->n++;
	return 0;
}

static int add_source(struct calib_points *pts, const char *source, struct err *e)
{
	if (pts->n_sources == CALIB_SOURCES_MAX) {
		err_set(e, source, 0, 0, "more than %d inputs", CALIB_SOURCES_MAX);
		return -E2BIG;
	}
	const char *s = arena_strndup(&pts->arena, source, strlen(source));
	if (!s) {
		err_set(e, source, 0, 0, "out of memory");
		return -ENOMEM;
	}
	/* a source of its own run is named by its path; the same path twice is two runs */
	int run = pts->cur_run;
	if (run < 0) {
		char name[4200];
		snprintf(name, sizeof name, "%s", source);
		for (int k = 2; find_run(pts, name) >= 0; k++)
			snprintf(name, sizeof name, "%s#%d", source, k);
		if ((run = make_run(pts, name, source, e)) < 0)
			return run;
	}
	pts->runs[run].n_sources++;
	pts->source_run[pts->n_sources] = run;
	pts->sources[pts->n_sources] = s;
	return pts->n_sources++;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* nearest-rank quantile of sorted v[0..n) */
static double quantile(const int64_t *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)(n - 1) + 0.5);
	return (double)v[i < n ? i : n - 1];
}

enum { RANKS_MAX = 64 };

/* A collective's samples from several ranks (process and device): the k-th instance of every rank
 * is one collective, as long as its last rank to arrive (the others' kernels include waiting for
 * it), so its time is the shortest of them. idx[0..n) are the spec's samples in start order;
 * out[] receives one time per instance. Returns the instance count, or 0 when the ranks did not
 * all run the same number of instances (or there is one rank): then each sample counts. */
static size_t per_instance(const struct calib_match *m, const size_t *idx, size_t n, int64_t *out)
{
	int64_t pid[RANKS_MAX];
	uint32_t dev[RANKS_MAX];
	size_t count[RANKS_MAX], seen[RANKS_MAX];
	int ranks = 0;
	for (size_t i = 0; i < n; i++) {
		const struct calib_sample *x = &m->samples[idx[i]];
		int r = 0;
		while (r < ranks && !(pid[r] == x->pid && dev[r] == x->device_id))
			r++;
		if (r == ranks) {
			if (ranks == RANKS_MAX)
				return 0;
			pid[r] = x->pid;
			dev[r] = x->device_id;
			count[r] = 0;
			ranks++;
		}
		count[r]++;
	}
	if (ranks < 2)
		return 0;
	for (int r = 1; r < ranks; r++)
		if (count[r] != count[0])
			return 0;
	for (int r = 0; r < ranks; r++)
		seen[r] = 0;
	for (size_t k = 0; k < count[0]; k++)
		out[k] = INT64_MAX;
	for (size_t i = 0; i < n; i++) {
		const struct calib_sample *x = &m->samples[idx[i]];
		int r = 0;
		while (!(pid[r] == x->pid && dev[r] == x->device_id))
			r++;
		size_t k = seen[r]++;
		if (x->gpu_ns < out[k])
			out[k] = x->gpu_ns;
	}
	return count[0];
}

int calib_points_add_instance(struct calib_points *pts, const struct calib_instance *x)
{
	if (pts->n_inst == pts->cap_inst) {
		if (pts->cap_inst >= CALIB_POINTS_MAX)
			return -E2BIG;
		size_t cap = pts->cap_inst ? 2 * pts->cap_inst : 1024;
		struct calib_instance *q = realloc(pts->inst, cap * sizeof *q);
		if (!q)
			return -ENOMEM;
		pts->inst = q;
		pts->cap_inst = cap;
	}
	pts->inst[pts->n_inst++] = *x;
	return 0;
}

struct sample_at {
	int64_t start_ns;
	size_t i;
};

static int cmp_sample_at(const void *a, const void *b)
{
	const struct sample_at *x = a, *y = b;
	if (x->start_ns != y->start_ns)
		return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
	return (x->i > y->i) - (x->i < y->i);
}

/* power_sample_clocks under the window limiter: the n samples of order (in start order) as one
 * sequence, each at its op's device time after the idle time since the last one ended. */
static int window_sample_clocks(const struct hw *hw, const struct calib_match *m, const struct sample_at *order,
				size_t n, double *hz)
{
	struct sim_power_op *ops = malloc((n ? n : 1) * sizeof *ops);
	double *gap = malloc((n ? n : 1) * sizeof *gap), *k_hz = malloc((n ? n : 1) * sizeof *k_hz);
	int rc = -ENOMEM;
	if (!ops || !gap || !k_hz)
		goto out;
	int64_t busy_to = n ? m->samples[order[0].i].start_ns : 0;
	for (size_t k = 0; k < n; k++) {
		const struct calib_sample *x = &m->samples[order[k].i];
		gap[k] = x->start_ns > busy_to ? (double)(x->start_ns - busy_to) * 1e-9 : 0;
		sim_power_op_cost(hw, &m->specs[x->spec].op, &ops[k]);
		if (x->end_ns > busy_to)
			busy_to = x->end_ns;
	}
	rc = sim_power_window_clocks(hw, ops, NULL, gap, n, false, k_hz);
	for (size_t k = 0; rc == 0 && k < n; k++)
		hz[order[k].i] = k_hz[k];
out:
	free(k_hz);
	free(gap);
	free(ops);
	return rc;
}

/* The power-limit model's clock of each sample (calib_points.power_hw) into hz: the samples in
 * start order, each run at its op's device time (launch gaps are the trace's, idle), the GPU
 * resting between the end of one and the start of the next. 0, or -ENOMEM. */
static int power_sample_clocks(const struct hw *hw, const struct calib_match *m, double *hz)
{
	struct sample_at *order = malloc((m->n_samples ? m->n_samples : 1) * sizeof *order);
	if (!order)
		return -ENOMEM;
	struct hw dev = *hw;
	dev.launch_latency_s = dev.graph_launch_latency_s = 0;
	size_t n = 0;
	for (size_t i = 0; i < m->n_samples; i++) {
		hz[i] = 0;
		if (m->samples[i].activities > 0)
			order[n++] = (struct sample_at){m->samples[i].start_ns, i};
	}
	qsort(order, n, sizeof *order, cmp_sample_at);
	if (sim_power_windowed(&dev)) {
		int rc = window_sample_clocks(&dev, m, order, n, hz);
		free(order);
		return rc;
	}
	struct sim_power_state st;
	sim_power_idle(&dev, &st);
	int64_t busy_to = n ? order[0].start_ns : 0;
	for (size_t k = 0; k < n; k++) {
		const struct calib_sample *x = &m->samples[order[k].i];
		if (x->start_ns > busy_to)
			sim_power_rest(&dev, &st, (double)(x->start_ns - busy_to) * 1e-9);
		struct sim_power_op po;
		sim_power_op_cost(&dev, &m->specs[x->spec].op, &po);
		sim_power_run(&dev, &st, &po, &hz[order[k].i]);
		if (x->end_ns > busy_to)
			busy_to = x->end_ns;
	}
	free(order);
	return 0;
}

/* The match's samples in start order, the GPU work of each (calib_points.inst). */
static int add_instances(struct calib_points *pts, const struct calib_match *m, int src)
{
	struct sample_at *order = malloc((m->n_samples ? m->n_samples : 1) * sizeof *order);
	if (!order)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < m->n_samples; i++)
		if (m->samples[i].activities > 0 && m->samples[i].sm_clock_hz > 0)
			order[n++] = (struct sample_at){m->samples[i].start_ns, i};
	qsort(order, n, sizeof *order, cmp_sample_at);
	int rc = 0;
	for (size_t k = 0; k < n && rc == 0; k++) {
		const struct calib_sample *x = &m->samples[order[k].i];
		struct calib_instance in = {.op = m->specs[x->spec].op, .source = src, .start_ns = x->start_ns,
					    .end_ns = x->end_ns, .sm_clock_hz = x->sm_clock_hz,
					    .power_w = x->power_w, .power_readings = x->power_readings};
		rc = calib_points_add_instance(pts, &in);
	}
	free(order);
	return rc;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* A point's code (calib_point.kernels_sig, .kernel): the signature most of its n samples idx[]
 * have (the smallest of a tie), and the longest kernel of the first sample with it. tmp: n free
 * slots. 0, or -ENOMEM. */
static int point_kernels(struct calib_points *pts, struct calib_point *p, const struct calib_match *m,
			 const size_t *idx, size_t n, uint64_t *tmp)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = m->samples[idx[i]].kernels_sig;
	qsort(tmp, n, sizeof *tmp, cmp_u64);
	uint64_t best = 0;
	size_t best_n = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && tmp[j] == tmp[i])
			j++;
		if (j - i > best_n) {
			best_n = j - i;
			best = tmp[i];
		}
		i = j;
	}
	p->kernels_sig = best;
	for (size_t i = 0; i < n; i++) {
		const struct calib_sample *x = &m->samples[idx[i]];
		if (x->kernels_sig == best && x->kernel) {
			if (!(p->kernel = arena_strndup(&pts->arena, x->kernel, strlen(x->kernel))))
				return -ENOMEM;
			break;
		}
	}
	return 0;
}

int calib_points_add_match(struct calib_points *pts, const struct calib_match *m, const char *source,
                           struct err *e)
{
	int src = add_source(pts, source, e);
	if (src < 0)
		return src;
	struct calib_run *run = &pts->runs[pts->source_run[src]];
	pts->source_clock_readings[src] = m->clock_readings;
	if (!pts->have_info) {
		pts->info = m->info;
		pts->have_info = true;
	}
	if (!run->have_info && (m->info.device[0] || m->info.uuid[0])) {
		run->info = m->info;
		run->have_info = true;
	}
	/* counting sort of the samples by spec (each spec's in start order) */
	size_t *start = calloc(m->n_specs + 1, sizeof *start);
	size_t *idx = malloc((m->n_samples ? m->n_samples : 1) * sizeof *idx);
	int64_t *ns = malloc((m->n_samples ? m->n_samples : 1) * sizeof *ns);
	size_t *fill = calloc(m->n_specs + 1, sizeof *fill);
	double *power_hz = pts->power_hw ? malloc((m->n_samples ? m->n_samples : 1) * sizeof *power_hz) : NULL;
	uint64_t *sig = malloc((m->n_samples ? m->n_samples : 1) * sizeof *sig);
	int rc = 0;
	if (!start || !idx || !ns || !fill || !sig || (pts->power_hw && !power_hz)) {
		err_set(e, source, 0, 0, "out of memory");
		rc = -ENOMEM;
		goto out;
	}
	if (power_hz && (rc = power_sample_clocks(pts->power_hw, m, power_hz)) < 0) {
		err_set(e, source, 0, 0, "out of memory");
		goto out;
	}
	if (power_hz)
		pts->source_clock_readings[src] = (int64_t)m->n_samples;
	else if (m->clock_readings > 0 && (rc = add_instances(pts, m, src)) < 0) {
		err_set(e, source, 0, 0, rc == -E2BIG ? "more than %d measured instances" : "out of memory",
			(int)CALIB_POINTS_MAX);
		goto out;
	}
	for (size_t i = 0; i < m->n_samples; i++)
		start[m->samples[i].spec + 1]++;
	for (size_t s = 0; s < m->n_specs; s++)
		start[s + 1] += start[s];
	for (size_t i = 0; i < m->n_samples; i++) {
		size_t s = (size_t)m->samples[i].spec;
		idx[start[s] + fill[s]++] = i;
	}
	for (size_t s = 0; s < m->n_specs; s++) {
		size_t n = start[s + 1] - start[s];
		if (n == 0)
			continue;
		int64_t *v = ns + start[s];
		size_t inst = op_is_comm(m->specs[s].op.kind) ? per_instance(m, idx + start[s], n, v) : 0;
		if (inst) {
			n = inst;
		} else {
			for (size_t i = 0; i < n; i++)
				v[i] = m->samples[idx[start[s] + i]].gpu_ns;
		}
		qsort(v, n, sizeof *v, cmp_i64);
		double med = n % 2 ? (double)v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
		if (med <= 0)
			continue;
		enum hw_clock clock = HW_CLOCK_BOOST;
		if (m->info.regime[0] && hw_clock_parse(m->info.regime, &clock) < 0)
			clock = HW_CLOCK_BOOST; /* "burst" and the unknown: measured at the boost clock */
		if ((rc = add_point(pts, m->specs[s].text, &m->specs[s].op, clock, med * 1e-9,
		                    quantile(v, n, 0.1) * 1e-9, quantile(v, n, 0.9) * 1e-9, (int64_t)n, src,
		                    e)) < 0)
			goto out;
		/* the clock around its samples: their median (in ns's place, which is done with) */
		size_t k = 0;
		const size_t all = start[s + 1] - start[s];
		for (size_t i = 0; i < all; i++) {
			size_t j = idx[start[s] + i];
			double hz = power_hz ? power_hz[j] : m->samples[j].sm_clock_hz;
			if (hz > 0)
				v[k++] = (int64_t)llround(hz);
		}
		if (k) {
			qsort(v, k, sizeof *v, cmp_i64);
			pts->p[pts->n - 1].sm_clock_hz =
			    k % 2 ? (double)v[k / 2] : 0.5 * ((double)v[k / 2 - 1] + (double)v[k / 2]);
		}
		if ((rc = point_kernels(pts, &pts->p[pts->n - 1], m, idx + start[s], all, sig)) < 0) {
			err_set(e, source, 0, 0, "out of memory");
			goto out;
		}
	}
out:
	free(sig);
	free(start);
	free(idx);
	free(ns);
	free(fill);
	free(power_hz);
	return rc;
}

/* calib-grid's "# device NAME, N SMs, SM clock C MHz, ..." comment: the run's device, when it has
 * none yet. Other comments say nothing to us. */
static void csv_device(struct calib_run *run, const char *line)
{
	static const char key[] = "# device ";
	if (run->have_info || strncmp(line, key, sizeof key - 1) != 0)
		return;
	const char *name = line + sizeof key - 1, *comma = strchr(name, ',');
	size_t n = comma ? (size_t)(comma - name) : strlen(name);
	if (n == 0)
		return;
	struct calib_trace_info *in = &run->info;
	memset(in, 0, sizeof *in);
	snprintf(in->device, sizeof in->device, "%.*s", (int)(n < sizeof in->device ? n : sizeof in->device - 1),
	         name);
	for (const char *p = comma; p && *p; p = strchr(p + 1, ',')) {
		long long v;
		int end = 0;
		if (sscanf(p, ", %lld SMs%n", &v, &end) == 1 && end > 0 && v > 0 && v < 1000000)
			in->sms = v;
		else if ((end = 0, sscanf(p, ", SM clock %lld MHz%n", &v, &end)) == 1 && end > 0 && v > 0 &&
		         v < 1000000)
			in->sm_clock_hz = v * 1000000;
	}
	run->have_info = true;
}

/* Split a CSV line in place (double quotes group, no escapes inside); returns the field count. */
static int csv_split(char *line, char **f, int max)
{
	int n = 0;
	char *p = line;
	while (n < max) {
		if (*p == '"') {
			f[n++] = ++p;
			while (*p && *p != '"')
				p++;
			if (*p)
				*p++ = '\0';
			while (*p && *p != ',')
				p++;
		} else {
			f[n++] = p;
			while (*p && *p != ',')
				p++;
		}
		if (*p != ',')
			break;
		*p++ = '\0';
	}
	return n;
}

static int col_of(char **h, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (strcmp(h[i], name) == 0)
			return i;
	return -1;
}

static bool num(const char *s, double *out)
{
	return doc_parse_double(s, out) == 0 && *out >= 0;
}

/* Field i of a KDA bench row as a token count in 0..max; else an error at its column. */
static int kda_count(char **f, int i, int max, int *out, const char *path, int lineno, struct err *e)
{
	double x;
	if (!num(f[i], &x) || x != floor(x) || x > max) {
		err_set(e, path, lineno, i + 1, "'%s' is not a token count in 0..%d", f[i], max);
		return -EINVAL;
	}
	*out = (int)x;
	return 0;
}

/* A KDA bench row -> an op spec: 1, or 0 when the row is no model op, or an error. */
static int kda_spec(char **f, const int *col, char *spec, size_t n, const char *path, int lineno,
                    struct err *e)
{
	const char *op = f[col[0]], *state = f[col[1]];
	const char *b = f[col[2]], *t = f[col[3]], *h = f[col[4]];
	if (strcmp(op, "decode") == 0) {
		snprintf(spec, n, "kda_decode b=%s h=%s state=%s", b, h, state);
	} else if (strcmp(op, "verify_replay") == 0 && col[9] >= 0 && col[10] >= 0) {
		/* one launch: the accepted tokens replayed, then the drafts */
		int w, a;
		if (kda_count(f, col[9], 1 << 20, &w, path, lineno, e) < 0 ||
		    kda_count(f, col[10], 1 << 20, &a, path, lineno, e) < 0)
			return -EINVAL;
		snprintf(spec, n, "kda_decode b=%s h=%s t=%d state=%s", b, h, w + a, state);
	} else if (strcmp(op, "prefill") == 0)
		snprintf(spec, n, "kda_chunk b=%s t=%s h=%s state=%s", b, t, h, state);
	else if (strcmp(op, "copy_memcpy") == 0)
		snprintf(spec, n, "copy bytes=%.0f", atof(f[col[8]]) / 2);
	else
		return 0;
	return 1;
}

int calib_points_add_csv(struct calib_points *pts, const char *path, struct err *e)
{
	char *buf = NULL;
	size_t len;
	int rc = doc_read_file(path, &buf, &len, e);
	if (rc < 0)
		return rc;
	rc = calib_points_add_csv_string(pts, path, buf, len, e);
	free(buf);
	return rc;
}

int calib_points_add_csv_string(struct calib_points *pts, const char *path, const char *text,
                                size_t len_bytes, struct err *e)
{
	char *buf = malloc(len_bytes + 1);
	int rc = 0;
	if (!buf) {
		err_set(e, path, 0, 0, "out of memory");
		return -ENOMEM;
	}
	memcpy(buf, text, len_bytes);
	buf[len_bytes] = '\0';
	if (strlen(buf) != len_bytes) {
		err_set(e, path, 0, 0, "not a text file (NUL bytes)");
		free(buf);
		return -EINVAL;
	}
	int src = add_source(pts, path, e);
	if (src < 0) {
		free(buf);
		return src;
	}
	pts->source_clock_readings[src] = -1;
	enum { NONE, GRID, KDA } fmt = NONE;
	int col[12] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
	int lineno = 0, nf_header = 0;
	for (char *line = buf, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		size_t ll = strlen(line);
		if (ll && line[ll - 1] == '\r')
			line[--ll] = '\0';
		if (ll >= CSV_LINE_MAX) {
			err_set(e, path, lineno, 1, "line longer than %d bytes", CSV_LINE_MAX);
			rc = -EINVAL;
			goto out;
		}
		if (ll && line[0] == '#')
			csv_device(&pts->runs[pts->source_run[src]], line);
		if (!ll || line[0] == '#')
			continue;
		char *f[40];
		int nf = csv_split(line, f, 40);
		if (fmt == NONE) {
			nf_header = nf;
			if (col_of(f, nf, "op") == 0 && col_of(f, nf, "median_s") > 0) {
				fmt = GRID;
				col[0] = 0;
				col[1] = col_of(f, nf, "median_s");
				col[2] = col_of(f, nf, "p10_s");
				col[3] = col_of(f, nf, "p90_s");
				col[4] = col_of(f, nf, "reps");
				col[11] = col_of(f, nf, "regime");
			} else if (col_of(f, nf, "op") == 0 && col_of(f, nf, "time_us") > 0 &&
			           col_of(f, nf, "heads") > 0) {
				static const char *const names[] = {"op",      "state",  "batch",
				                                    "seq_len", "heads",  "time_us",
				                                    "p10_us",  "p90_us", "total_bytes"};
				fmt = KDA;
				for (int i = 0; i < 9; i++)
					if ((col[i] = col_of(f, nf, names[i])) < 0) {
						err_set(e, path, lineno, 1,
						        "KDA bench CSV without a '%s' column", names[i]);
						rc = -EINVAL;
						goto out;
					}
				col[9] = col_of(f, nf, "window"); /* optional: verify rows */
				col[10] = col_of(f, nf, "accepted");
			} else {
				err_set(e, path, lineno, 1,
				        "not a trace database (SQLite) nor a known CSV of measurements: "
				        "expected calib-grid's header (op,...,median_s) or the KDA bench's "
				        "(op,state,batch,seq_len,heads,...,time_us)");
				rc = -EINVAL;
				goto out;
			}
			continue;
		}
		if (nf != nf_header) {
			err_set(e, path, lineno, 1, "%d fields, the header has %d", nf, nf_header);
			rc = -EINVAL;
			goto out;
		}
		char spec[256];
		double med, p10, p90, scale = fmt == KDA ? 1e-6 : 1.0;
		int64_t reps = 1;
		if (fmt == GRID) {
			snprintf(spec, sizeof spec, "%s", f[0]);
			/* the samples behind the median: a count, or the row is not what it claims;
			 * empty: not published (a table of one mean per row), one sample */
			if (col[4] >= 0 && f[col[4]][0] &&
			    (doc_parse_i64(f[col[4]], &reps) < 0 || reps < 1 || reps > CALIB_REPS_MAX)) {
				err_set(e, path, lineno, col[4] + 1, "reps '%s' is not a sample count in 1..%lld",
				        f[col[4]], (long long)CALIB_REPS_MAX);
				rc = -EINVAL;
				goto out;
			}
		} else if ((rc = kda_spec(f, col, spec, sizeof spec, path, lineno, e)) <= 0) {
			if (rc < 0)
				goto out;
			pts->csv_rows_skipped++;
			continue;
		}
		int mc = fmt == GRID ? col[1] : col[5], c10 = fmt == GRID ? col[2] : col[6],
		    c90 = fmt == GRID ? col[3] : col[7];
		if (!num(f[mc], &med) || med <= 0) {
			err_set(e, path, lineno, mc + 1, "'%s' is not a positive time", f[mc]);
			rc = -EINVAL;
			goto out;
		}
		/* percentiles are optional (absent or empty: the median), never garbage */
		p10 = p90 = med;
		if (c10 >= 0 && f[c10][0] && (!num(f[c10], &p10) || p10 <= 0)) {
			err_set(e, path, lineno, c10 + 1, "'%s' is not a positive time", f[c10]);
			rc = -EINVAL;
			goto out;
		}
		if (c90 >= 0 && f[c90][0] && (!num(f[c90], &p90) || p90 <= 0)) {
			err_set(e, path, lineno, c90 + 1, "'%s' is not a positive time", f[c90]);
			rc = -EINVAL;
			goto out;
		}
		struct op op;
		struct err pe = {0};
		if (opspec_parse_line(spec, &op, &pe) < 0) {
			err_set(e, path, lineno, 1, "%s", pe.msg);
			rc = -EINVAL;
			goto out;
		}
		enum hw_clock clock = HW_CLOCK_BOOST;
		if (fmt == GRID && col[11] >= 0 && hw_clock_parse(f[col[11]], &clock) < 0)
			clock = HW_CLOCK_BOOST; /* "burst": the boost clock */
		if ((rc = add_point(pts, spec, &op, clock, med * scale, p10 * scale, p90 * scale, reps, src, e)) < 0)
			goto out;
	}
	if (fmt == NONE) {
		err_set(e, path, 0, 0, "empty CSV");
		rc = -EINVAL;
	}
out:
	free(buf);
	return rc;
}

int calib_points_add_file(struct calib_points *pts, const char *path, const struct calib_rules *rules,
                          struct calib_match *m_out, struct err *e)
{
	if (m_out)
		memset(m_out, 0, sizeof *m_out);
	FILE *f = fopen(path, "rb");
	if (!f) {
		err_set(e, path, 0, 0, "cannot open: %s", strerror(errno));
		return -ENOENT;
	}
	char magic[16] = {0};
	size_t got = fread(magic, 1, sizeof magic, f);
	fclose(f);
	if (got < sizeof magic || memcmp(magic, "SQLite format 3", 16) != 0)
		return calib_points_add_csv(pts, path, e);
	struct calib_match m;
	/* framework records (emit_nvtx, Kineto --cpu-ops) through the default derivation rules */
	struct calib_derive derive;
	int rc = calib_derive_load(&derive, "default", e);
	if (rc < 0)
		return rc;
	struct calib_match_opts mo = {.rules = rules, .derive = &derive, .derive_opts = {.dtype = DT_BF16}};
	rc = calib_match_db(&m, path, &mo, e);
	calib_derive_release(&derive);
	if (rc < 0)
		return rc;
	rc = calib_points_add_match(pts, &m, path, e);
	if (rc == 0 && m_out)
		*m_out = m;
	else
		calib_match_release(&m);
	return rc;
}

void calib_points_filter(struct calib_points *pts, const char *glob, bool keep)
{
	size_t k = 0;
	for (size_t i = 0; i < pts->n; i++)
		if (calib_glob(glob, pts->p[i].spec) == keep)
			pts->p[k++] = pts->p[i];
	pts->n = k;
}
