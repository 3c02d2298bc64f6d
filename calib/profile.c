/* Profile a trace against the model (calib/profile.h). */
#include "calib/profile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/points.h"
#include "sim/cost.h"
#include "trace/analyze/kclass.h"

const char *const calib_profile_default_steps[] = {"prefill", "decode", "*_prefill", "*_decode",
                                                   "*step", "ProfilerStep#*"};
const int calib_profile_n_default_steps = 6;

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

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return (a > b) - (a < b);
}

static int cmp_sel_start(const void *x, const void *y)
{
	const struct calib_mark *a = *(const struct calib_mark *const *)x, *b = *(const struct calib_mark *const *)y;
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
	int64_t busy = 0, cur_s = 0, cur_e = 0;
	for (size_t i = 0; i < n; i++) {
		const struct calib_activity *a = k[i];
		if (i == 0) {
			cur_s = a->start_ns;
			cur_e = a->end_ns;
			continue;
		}
		if (a->start_ns > cur_e) {
			busy = sat_add(busy, cur_e - cur_s);
			int64_t gap = a->start_ns - cur_e;
			if (a->launched && a->launch_end_ns >= cur_e)
				s->host_idle_ns = sat_add(s->host_idle_ns, gap);
			else
				s->other_idle_ns = sat_add(s->other_idle_ns, gap);
			cur_s = a->start_ns;
			cur_e = a->end_ns;
		} else if (a->end_ns > cur_e) {
			cur_e = a->end_ns;
		}
	}
	if (n)
		busy = sat_add(busy, cur_e - cur_s);
	s->busy_ns = busy;
	int64_t span = s->gpu_last_ns - s->gpu_first_ns;
	s->cpu_bound = span > 0 && s->host_idle_ns >= span / 2;
}

/* What the classes are summed from: op i's device time pred[i], with its launch latency
 * pred[n_specs + i], its class cls[i]. */
struct sums {
	const double *pred;
	const int *cls;
	size_t n_specs;
	int unmapped;
};

/* A kernel counts its time; a mapped op's copies and memsets too; the first activity of a
 * sample (of any kind: an op may begin with a memset) counts its op's prediction. */
static void add_act(struct calib_pclass_sum *cls, const struct calib_activity *a, const struct sums *u)
{
	int c = a->spec >= 0 ? u->cls[a->spec] : u->unmapped;
	if (a->kind == 0)
		cls[c].kernels++;
	if (a->kind == 0 || a->spec >= 0)
		cls[c].measured_ns = sat_add(cls[c].measured_ns, dur(a));
	if (a->first && a->spec >= 0) {
		cls[c].ops++;
		cls[c].predicted_s += u->pred[a->spec];
		cls[c].predicted_launch_s += u->pred[u->n_specs + (size_t)a->spec];
	}
}

/* The class index of label, added when new (the last slots: "other", then "unmapped"). */
static int class_index(struct calib_profile *p, const char *label)
{
	for (int i = 0; i < p->n_cls; i++)
		if (strcmp(p->cls_label[i], label) == 0)
			return i;
	if (p->n_cls == CALIB_PROFILE_CLASSES_MAX - 2)
		label = "other";
	for (int i = 0; i < p->n_cls; i++)
		if (strcmp(p->cls_label[i], label) == 0)
			return i;
	snprintf(p->cls_label[p->n_cls], sizeof p->cls_label[0], "%s", label);
	return p->n_cls++;
}

/* The range's name: its text before the first ',' (framework records: the operator). */
static size_t name_len(const char *text)
{
	return strcspn(text, ",");
}

static bool is_record(const char *text)
{
	return strstr(text, ", sizes = [") != NULL;
}

/* Kernels (of kern, sorted by launch) launched in [t0, t1). */
static int64_t launched_in(struct calib_activity **kern, size_t nk, int64_t t0, int64_t t1)
{
	size_t lo = 0, hi = nk;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (!kern[mid]->launched || kern[mid]->launch_ns < t0)
			lo = mid + 1;
		else
			hi = mid;
	}
	int64_t n = 0;
	for (size_t j = lo; j < nk && kern[j]->launch_ns < t1; j++)
		n += kern[j]->kind == 0;
	return n;
}

static int cmp_mark_ptr(const void *x, const void *y)
{
	const struct calib_mark *a = *(const struct calib_mark *const *)x, *b = *(const struct calib_mark *const *)y;
	if (a->tid != b->tid)
		return (a->tid > b->tid) - (a->tid < b->tid);
	if (a->start_ns != b->start_ns)
		return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
	return (a->end_ns < b->end_ns) - (a->end_ns > b->end_ns); /* outer first */
}

static int cmp_by_name(const void *x, const void *y)
{
	const struct calib_mark *a = *(const struct calib_mark *const *)x, *b = *(const struct calib_mark *const *)y;
	size_t na = name_len(a->text), nb = name_len(b->text);
	int c = memcmp(a->text, b->text, na < nb ? na : nb);
	if (c || na != nb)
		return c ? c : (na > nb) - (na < nb);
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

enum { REPEAT_MAX = 1 << 20 }; /* calls of one record considered as step starts */

/* Steps by repetition (calib/profile.h): into sel[0..*n_sel), the calls of the chosen record. */
static int find_repetition(struct calib_profile *p, struct calib_activity **kern, size_t nk,
                           const struct calib_mark **sel, size_t *n_sel)
{
	struct calib_match *m = &p->m;
	*n_sel = 0;
	/* the thread that launches most kernels */
	int64_t tid = 0, best = 0, run = 0;
	int64_t *tids = malloc((nk ? nk : 1) * sizeof *tids);
	const struct calib_mark **top = malloc((m->n_marks ? m->n_marks : 1) * sizeof *top);
	if (!tids || !top) {
		free(tids);
		free(top);
		return -ENOMEM;
	}
	size_t nt = 0;
	for (size_t i = 0; i < nk; i++)
		if (kern[i]->launched && kern[i]->kind == 0)
			tids[nt++] = kern[i]->tid;
	qsort(tids, nt, sizeof *tids, cmp_i64);
	for (size_t i = 0; i < nt; i++) {
		run = i && tids[i] == tids[i - 1] ? run + 1 : 1;
		if (run > best) {
			best = run;
			tid = tids[i];
		}
	}
	free(tids);
	/* its top-level framework records */
	size_t n = 0;
	for (size_t i = 0; i < m->n_marks; i++)
		if (m->marks[i].tid == tid && is_record(m->marks[i].text))
			top[n++] = &m->marks[i];
	qsort(top, n, sizeof *top, cmp_mark_ptr);
	size_t k = 0;
	int64_t open_end = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		if (top[i]->start_ns <= open_end)
			continue; /* inside the last top-level record */
		top[k++] = top[i];
		open_end = top[i]->end_ns;
	}
	n = k;
	qsort(top, n, sizeof *top, cmp_by_name);
	/* the name whose calls split the kernels evenly */
	int64_t *counts = malloc(2 * REPEAT_MAX * sizeof *counts), *sorted = counts + REPEAT_MAX;
	if (!counts) {
		free(top);
		return -ENOMEM;
	}
	size_t best_at = 0, best_n = 0;
	int64_t best_first = 0;
	int64_t last_launch = 0;
	for (size_t i = 0; i < nk; i++)
		if (kern[i]->launched && kern[i]->launch_ns > last_launch)
			last_launch = kern[i]->launch_ns;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && name_len(top[j]->text) == name_len(top[i]->text) &&
		       memcmp(top[j]->text, top[i]->text, name_len(top[i]->text)) == 0)
			j++;
		size_t c = j - i;
		if (c >= 3 && c <= (size_t)REPEAT_MAX) {
			bool empty = false;
			for (size_t q = i; q < j; q++) {
				int64_t t1 = q + 1 < j ? top[q + 1]->start_ns : last_launch + 1;
				counts[q - i] = launched_in(kern, nk, top[q]->start_ns, t1);
				empty |= counts[q - i] == 0;
			}
			/* even: three quarters of the stretches within 10 % of the median count */
			memcpy(sorted, counts, c * sizeof *counts);
			qsort(sorted, c, sizeof *sorted, cmp_i64);
			int64_t med = sorted[c / 2];
			size_t near = 0;
			for (size_t q = 0; q < c; q++)
				near += counts[q] * 10 >= med * 9 && counts[q] * 10 <= med * 11;
			bool better = !best_n || c < best_n || (c == best_n && top[i]->start_ns < best_first);
			if (!empty && near * 4 >= c * 3 && better) {
				best_at = i;
				best_n = c;
				best_first = top[i]->start_ns;
			}
		}
		i = j;
	}
	for (size_t q = 0; q < best_n; q++)
		sel[q] = top[best_at + q];
	*n_sel = best_n;
	if (best_n)
		snprintf(p->repeated, sizeof p->repeated, "%.*s", (int)name_len(sel[0]->text), sel[0]->text);
	free(counts);
	free(top);
	return 0;
}

/* The kernels launched inside each selected range (sorted by start) on its thread; a kernel
 * held by nested ranges goes to the innermost (latest-starting) one. kern is sorted by launch. */
static int fill_steps(struct calib_profile *p, const struct calib_mark **sel, size_t n_sel, bool step_start,
                      struct calib_activity **kern, size_t nk, const struct sums *u)
{
	struct calib_match *m = &p->m;
	int64_t last_launch = 0;
	for (size_t i = 0; i < nk; i++)
		if (kern[i]->launched && kern[i]->launch_ns > last_launch)
			last_launch = kern[i]->launch_ns;
	struct calib_activity **in = calloc(nk ? nk : 1, sizeof *in);
	struct calib_pclass_sum *cls = calloc((n_sel ? n_sel : 1) * (size_t)p->n_cls, sizeof *cls);
	p->steps = calloc(n_sel ? n_sel : 1, sizeof *p->steps);
	if (!in || !cls || !p->steps) {
		free(in);
		free(cls);
		return -ENOMEM;
	}
	p->step_cls = cls;
	for (size_t i = 0; i < n_sel; i++) {
		struct calib_pstep *s = &p->steps[p->n_steps];
		const struct calib_mark *k = sel[i];
		if (!(s->label = arena_strndup(&m->arena, k->text, name_len(k->text)))) {
			free(in);
			return -ENOMEM;
		}
		s->cpu_start_ns = k->start_ns;
		s->cpu_end_ns = k->end_ns;
		if (step_start)
			s->cpu_end_ns = i + 1 < n_sel ? sel[i + 1]->start_ns : last_launch;
		s->tid = k->tid;
		s->cls = &cls[i * (size_t)p->n_cls];
		p->n_steps++;
	}
	for (size_t si = 0; si < p->n_steps; si++) {
		struct calib_pstep *s = &p->steps[si];
		size_t lo = 0, hi = nk;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (!kern[mid]->launched || kern[mid]->launch_ns < s->cpu_start_ns)
				lo = mid + 1;
			else
				hi = mid;
		}
		size_t n_in = 0;
		for (size_t j = lo; j < nk && kern[j]->launch_ns <= s->cpu_end_ns; j++) {
			struct calib_activity *a = kern[j];
			if (!a->launched || (s->tid && a->tid != s->tid))
				continue;
			bool inner = false;
			for (size_t t = si + 1; t < p->n_steps && p->steps[t].cpu_start_ns <= a->launch_ns && !inner; t++)
				inner = p->steps[t].cpu_end_ns >= a->launch_ns && (!p->steps[t].tid || p->steps[t].tid == a->tid);
			if (inner)
				continue;
			add_act(s->cls, a, u);
			if (a->kind != 0)
				continue;
			if (!s->kernels || a->start_ns < s->gpu_first_ns)
				s->gpu_first_ns = a->start_ns;
			if (!s->kernels || a->end_ns > s->gpu_last_ns)
				s->gpu_last_ns = a->end_ns;
			in[n_in++] = a;
			s->kernels++;
			p->in_steps_kernel_ns = sat_add(p->in_steps_kernel_ns, dur(a));
			if (a->spec >= 0)
				p->in_steps_mapped_ns = sat_add(p->in_steps_mapped_ns, dur(a));
		}
		qsort(in, n_in, sizeof *in, cmp_start);
		step_times(s, in, n_in);
	}
	free(in);
	return 0;
}

int calib_profile_run(struct calib_profile *p, const char *path, const struct calib_profile_opts *o,
                      struct err *e)
{
	memset(p, 0, sizeof *p);
	static const char *const every[] = {"*"};
	struct calib_match_opts mo = {
		.rules = o->rules,
		.max_rows = o->max_rows,
		.derive = o->derive,
		.derive_opts = o->derive_opts,
		.keep_activities = true,
		.marks = every, /* all ranges: the markers are picked here, or steps by repetition */
		.n_marks = 1,
	};
	int rc = calib_match_db(&p->m, path, &mo, e);
	if (rc < 0)
		return rc;
	struct calib_match *m = &p->m;
	size_t ns = m->n_specs ? m->n_specs : 1;
	double *pred = calloc(2 * ns, sizeof *pred);
	int *cls = calloc(ns, sizeof *cls);
	struct calib_activity **kern = calloc(m->n_acts ? m->n_acts : 1, sizeof *kern);
	p->ops = calloc(ns, sizeof *p->ops);
	const struct calib_mark **sel = calloc(m->n_marks ? m->n_marks : 1, sizeof *sel);
	if (!pred || !cls || !kern || !p->ops || !sel) {
		rc = -ENOMEM;
		goto out;
	}
	/* each op: device time (the cost model without launch gaps, as trace validate) and with
	 * its eager launch latency; its class */
	struct hw dev = *o->hw;
	dev.launch_latency_s = dev.graph_launch_latency_s = 0;
	snprintf(p->hw_name, sizeof p->hw_name, "%s", o->hw->name);
	for (size_t i = 0; i < m->n_specs; i++) {
		struct op_cost c;
		sim_op_cost(&dev, &m->specs[i].op, NULL, &c);
		pred[i] = c.time_s;
		sim_op_cost(o->hw, &m->specs[i].op, NULL, &c);
		pred[m->n_specs + i] = c.time_s;
		char label[32];
		enum hw_class hc;
		double size;
		calib_op_class(&m->specs[i].op, label, sizeof label, &hc, &size);
		cls[i] = class_index(p, label);
		p->ops[i].spec = (int32_t)i;
		p->ops[i].cls = cls[i];
		p->ops[i].predicted_s = pred[i];
	}
	p->n_ops = m->n_specs;
	struct sums u = {.pred = pred, .cls = cls, .n_specs = m->n_specs, .unmapped = p->n_cls};
	snprintf(p->cls_label[p->n_cls++], sizeof p->cls_label[0], "unmapped");
	/* the whole trace */
	size_t nk = 0;
	for (size_t i = 0; i < m->n_acts; i++) {
		struct calib_activity *a = &m->acts[i];
		kern[nk++] = a;
		add_act(p->total, a, &u);
		if (a->spec >= 0)
			p->ops[a->spec].ops += a->first;
		if (a->kind != 0)
			continue;
		int64_t d = dur(a);
		p->kernels++;
		p->kernel_ns = sat_add(p->kernel_ns, d);
		if (a->spec < 0)
			continue;
		p->mapped_kernels++;
		p->mapped_kernel_ns = sat_add(p->mapped_kernel_ns, d);
		if (a->dtype_assumed)
			p->assumed_dtype_ns = sat_add(p->assumed_dtype_ns, d);
		struct calib_pspec *ps = &p->ops[a->spec];
		ps->kernels++;
		ps->measured_ns = sat_add(ps->measured_ns, d);
		ps->dtype_assumed |= a->dtype_assumed;
	}
	qsort(kern, nk, sizeof *kern, cmp_launch);
	/* steps: the marker ranges, else by repetition */
	const char *const *globs = o->steps ? o->steps : calib_profile_default_steps;
	int n_globs = o->steps ? o->n_steps : calib_profile_n_default_steps;
	bool auto_only = o->steps && o->n_steps == 1 && strcmp(o->steps[0], "auto") == 0;
	size_t n_sel = 0;
	for (size_t i = 0; i < m->n_marks && !auto_only; i++) {
		char name[FW_NAME_MAX];
		size_t nl = name_len(m->marks[i].text);
		if (nl >= sizeof name)
			continue;
		memcpy(name, m->marks[i].text, nl);
		name[nl] = '\0';
		for (int g = 0; g < n_globs; g++)
			if (trace_glob(globs[g], name, false)) {
				sel[n_sel++] = &m->marks[i];
				break;
			}
	}
	bool step_start = o->step_start;
	if (auto_only || (!n_sel && !o->steps && !o->no_repetition)) {
		if ((rc = find_repetition(p, kern, nk, sel, &n_sel)) < 0)
			goto out;
		step_start = true;
	}
	qsort(sel, n_sel, sizeof *sel, cmp_sel_start);
	if ((rc = fill_steps(p, sel, n_sel, step_start, kern, nk, &u)) < 0)
		goto out;
	qsort(p->ops, p->n_ops, sizeof *p->ops, cmp_op);
	while (p->n_ops > 0 && p->ops[p->n_ops - 1].kernels == 0)
		p->n_ops--;
out:
	if (rc == -ENOMEM)
		err_set(e, path, 0, 0, "out of memory");
	free(sel);
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
	free(p->step_cls);
	free(p->ops);
	memset(p, 0, sizeof *p);
}
