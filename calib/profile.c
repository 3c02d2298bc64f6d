/* Profile a trace against the model (calib/profile.h). */
#include "calib/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cost.h"

const char *const calib_profile_default_steps[] = {"prefill", "decode", "*_prefill", "*_decode",
                                                   "*step", "ProfilerStep#*"};
const int calib_profile_n_default_steps = 6;

static const char *const pclass_names[CALIB_PC_COUNT] = {"gemm",       "grouped_gemm", "attention", "memory",
                                                         "collective", "other",        "unmapped"};

const char *calib_pclass_name(enum calib_pclass c)
{
	return (unsigned)c < CALIB_PC_COUNT ? pclass_names[c] : "?";
}

enum calib_pclass calib_pclass_of(enum op_kind k, bool comm)
{
	if (comm || op_is_comm(k))
		return CALIB_PC_COLLECTIVE;
	switch (k) {
	case OP_GEMM: return CALIB_PC_GEMM;
	case OP_GROUPED_GEMM: return CALIB_PC_GROUPED_GEMM;
	case OP_MLA_PREFILL:
	case OP_MLA_DECODE:
	case OP_DSA_PREFILL:
	case OP_DSA_DECODE: return CALIB_PC_ATTENTION;
	case OP_ELEMENTWISE: return CALIB_PC_MEMORY;
	default: return CALIB_PC_OTHER;
	}
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t dur(const struct calib_activity *a)
{
	int64_t d;
	return a->end_ns > a->start_ns && !__builtin_sub_overflow(a->end_ns, a->start_ns, &d) ? d : 0;
}

static int cmp_launch(const void *x, const void *y)
{
	const struct calib_activity *a = *(const struct calib_activity *const *)x;
	const struct calib_activity *b = *(const struct calib_activity *const *)y;
	if (a->launch_ns != b->launch_ns)
		return (a->launch_ns > b->launch_ns) - (a->launch_ns < b->launch_ns);
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static int cmp_start(const void *x, const void *y)
{
	const struct calib_activity *a = *(const struct calib_activity *const *)x;
	const struct calib_activity *b = *(const struct calib_activity *const *)y;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

static int cmp_op(const void *x, const void *y)
{
	const struct calib_pspec *a = x, *b = y;
	return (a->measured_ns < b->measured_ns) - (a->measured_ns > b->measured_ns);
}

/* Busy time and idle gaps of one step's kernels (sorted by start). A gap before a kernel is
 * host-bound when its launch call had not returned when the GPU went idle (the latest end so
 * far): the GPU waited for the host to submit it. Otherwise the kernel was submitted in time
 * and waited for something else (a dependency, a synchronization). */
static void step_times(struct calib_pstep *s, struct calib_activity **k, size_t n)
{
	int64_t busy = 0, cur_s = 0, cur_e = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		const struct calib_activity *a = k[i];
		if (cur_e == INT64_MIN) {
			cur_s = a->start_ns;
			cur_e = a->end_ns;
			continue;
		}
		if (a->start_ns > cur_e) {
			busy = sat_add(busy, cur_e - cur_s);
			int64_t gap = a->start_ns - cur_e;
			if (a->launch_end_ns != INT64_MIN && a->launch_end_ns >= cur_e)
				s->host_idle_ns = sat_add(s->host_idle_ns, gap);
			else
				s->other_idle_ns = sat_add(s->other_idle_ns, gap);
			cur_s = a->start_ns;
			cur_e = a->end_ns;
		} else if (a->end_ns > cur_e) {
			cur_e = a->end_ns;
		}
	}
	if (cur_e != INT64_MIN)
		busy = sat_add(busy, cur_e - cur_s);
	s->busy_ns = busy;
	int64_t span = s->gpu_last_ns > s->gpu_first_ns ? s->gpu_last_ns - s->gpu_first_ns : 0;
	s->cpu_bound = span > 0 && s->host_idle_ns >= span / 2;
}

/* A kernel counts as measured time; the first activity of a sample (of any kind: an op may
 * begin with a memset) counts its op's prediction. */
/* pred[i]: op i's device time; pred[nspec + i]: with its launch latency */
static void add_act(struct calib_pclass_sum *cls, const struct calib_activity *a, enum calib_pclass c,
                    const double *pred, size_t nspec)
{
	if (a->kind == 0)
		cls[c].kernels++;
	if (a->kind == 0 || c != CALIB_PC_UNMAPPED)
		cls[c].measured_ns = sat_add(cls[c].measured_ns, dur(a));
	if (a->first && a->spec >= 0) {
		cls[c].ops++;
		cls[c].predicted_s += pred[a->spec];
		cls[c].predicted_launch_s += pred[a->spec + nspec];
	}
}

int calib_profile_run(struct calib_profile *p, const char *path, const struct calib_profile_opts *o,
                      struct err *e)
{
	memset(p, 0, sizeof *p);
	const char *const *marks = o->steps ? o->steps : calib_profile_default_steps;
	int n_marks = o->steps ? o->n_steps : calib_profile_n_default_steps;
	struct calib_match_opts mo = {
		.rules = o->rules,
		.max_rows = o->max_rows,
		.derive = o->derive,
		.derive_opts = o->derive_opts,
		.keep_activities = true,
		.marks = marks,
		.n_marks = n_marks,
	};
	int rc = calib_match_db(&p->m, path, &mo, e);
	if (rc < 0)
		return rc;
	struct calib_match *m = &p->m;
	double *pred = calloc(m->n_specs ? 2 * m->n_specs : 1, sizeof *pred);
	enum calib_pclass *cls = calloc(m->n_specs ? m->n_specs : 1, sizeof *cls);
	struct calib_activity **kern = calloc(m->n_acts ? m->n_acts : 1, sizeof *kern);
	p->ops = calloc(m->n_specs ? m->n_specs : 1, sizeof *p->ops);
	p->steps = calloc(m->n_marks ? m->n_marks : 1, sizeof *p->steps);
	if (!pred || !cls || !kern || !p->ops || !p->steps) {
		rc = -ENOMEM;
		err_set(e, path, 0, 0, "out of memory");
		goto out;
	}
	/* device time of each op: the cost model without launch gaps */
	struct hw dev = *o->hw;
	dev.launch_latency_s = dev.graph_launch_latency_s = 0;
	snprintf(p->hw_name, sizeof p->hw_name, "%s", o->hw->name);
	for (size_t i = 0; i < m->n_specs; i++) {
		struct op_cost c;
		sim_op_cost(&dev, &m->specs[i].op, NULL, &c);
		pred[i] = c.time_s;
		sim_op_cost(o->hw, &m->specs[i].op, NULL, &c);
		pred[m->n_specs + i] = c.time_s;
		cls[i] = calib_pclass_of(m->specs[i].op.kind, false);
		p->ops[i].spec = (int32_t)i;
		p->ops[i].cls = cls[i];
		p->ops[i].predicted_s = pred[i];
	}
	p->n_ops = m->n_specs;
	/* totals over the kernels */
	size_t nk = 0;
	for (size_t i = 0; i < m->n_acts; i++) {
		struct calib_activity *a = &m->acts[i];
		enum calib_pclass c = a->spec >= 0 ? cls[a->spec] : CALIB_PC_UNMAPPED;
		kern[nk++] = a;
		if (a->kind != 0) {
			add_act(p->total, a, c, pred, m->n_specs);
			if (a->spec >= 0)
				p->ops[a->spec].ops += a->first;
			continue;
		}
		int64_t d = dur(a);
		p->kernels++;
		p->kernel_ns = sat_add(p->kernel_ns, d);
		add_act(p->total, a, c, pred, m->n_specs);
		if (a->spec >= 0) {
			p->mapped_kernels++;
			p->mapped_kernel_ns = sat_add(p->mapped_kernel_ns, d);
			if (a->dtype_assumed)
				p->assumed_dtype_ns = sat_add(p->assumed_dtype_ns, d);
			struct calib_pspec *ps = &p->ops[a->spec];
			ps->kernels++;
			ps->ops += a->first;
			ps->measured_ns = sat_add(ps->measured_ns, d);
			ps->dtype_assumed |= a->dtype_assumed;
		}
	}
	/* steps: the activities launched inside each marker range on its thread */
	qsort(kern, nk, sizeof *kern, cmp_launch);
	for (size_t i = 0; i < m->n_marks; i++) {
		struct calib_pstep *s = &p->steps[p->n_steps];
		const struct calib_mark *k = &m->marks[i];
		size_t n = strcspn(k->text, ",");
		char *label = arena_strndup(&m->arena, k->text, n);
		if (!label) {
			rc = -ENOMEM;
			err_set(e, path, 0, 0, "out of memory");
			goto out;
		}
		s->label = label;
		s->cpu_start_ns = k->start_ns;
		s->cpu_end_ns = k->end_ns;
		if (o->step_start)
			s->cpu_end_ns = i + 1 < m->n_marks ? m->marks[i + 1].start_ns : INT64_MAX;
		s->tid = k->tid;
		s->gpu_first_ns = INT64_MAX;
		s->gpu_last_ns = INT64_MIN;
		p->n_steps++;
	}
	/* a kernel belongs to the innermost (latest-starting) step holding its launch */
	struct calib_activity **in = calloc(nk ? nk : 1, sizeof *in);
	if (!in) {
		rc = -ENOMEM;
		err_set(e, path, 0, 0, "out of memory");
		goto out;
	}
	for (size_t si = 0; si < p->n_steps; si++) {
		struct calib_pstep *s = &p->steps[si];
		size_t lo = 0, hi = nk;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (kern[mid]->launch_ns < s->cpu_start_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t n_in = 0;
		for (size_t j = lo; j < nk && kern[j]->launch_ns <= s->cpu_end_ns; j++) {
			struct calib_activity *a = kern[j];
			if (s->tid && a->tid != s->tid)
				continue;
			/* an inner step that also holds it takes it */
			bool inner = false;
			for (size_t t = si + 1; t < p->n_steps && p->steps[t].cpu_start_ns <= a->launch_ns; t++)
				if (p->steps[t].cpu_end_ns >= a->launch_ns && (!p->steps[t].tid || p->steps[t].tid == a->tid))
					inner = true;
			if (inner)
				continue;
			enum calib_pclass c = a->spec >= 0 ? cls[a->spec] : CALIB_PC_UNMAPPED;
			add_act(s->cls, a, c, pred, m->n_specs);
			if (a->kind != 0)
				continue;
			in[n_in++] = a;
			s->kernels++;
			if (a->start_ns < s->gpu_first_ns)
				s->gpu_first_ns = a->start_ns;
			if (a->end_ns > s->gpu_last_ns)
				s->gpu_last_ns = a->end_ns;
			p->in_steps_kernel_ns = sat_add(p->in_steps_kernel_ns, dur(a));
			if (a->spec >= 0)
				p->in_steps_mapped_ns = sat_add(p->in_steps_mapped_ns, dur(a));
		}
		qsort(in, n_in, sizeof *in, cmp_start);
		step_times(s, in, n_in);
	}
	free(in);
	qsort(p->ops, p->n_ops, sizeof *p->ops, cmp_op);
	while (p->n_ops > 0 && p->ops[p->n_ops - 1].kernels == 0)
		p->n_ops--;
out:
	free(pred);
	free(cls);
	free(kern);
	if (rc < 0)
		calib_profile_release(p);
	return rc;
}

void calib_profile_release(struct calib_profile *p)
{
	calib_match_release(&p->m);
	free(p->steps);
	free(p->ops);
	memset(p, 0, sizeof *p);
}
