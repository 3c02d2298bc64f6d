#include "sim/timeline.h"

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

/* Communication never takes more than this share of the SMs from compute (a guard: shares come
 * from presets and scenarios). */
#define TL_COMM_SM_MAX 0.95

int64_t tl_storage_bytes(int32_t cap_events, int32_t cap_deps)
{
	if (cap_events < 1 || cap_deps < 1)
		return 0;
	return (int64_t)cap_events * (int64_t)sizeof(struct tl_event) +
	       (int64_t)cap_deps * 2 * (int64_t)sizeof(int32_t) +
	       ((int64_t)cap_events * 4 + 1) * (int64_t)sizeof(int32_t);
}

void tl_init(struct timeline *tl, void *mem, int32_t cap_events, int32_t cap_deps)
{
	memset(tl, 0, sizeof *tl);
	unsigned char *p = mem;
	tl->ev = (struct tl_event *)(void *)p;
	p += (size_t)cap_events * sizeof(struct tl_event);
	tl->deps = (int32_t *)(void *)p;
	p += (size_t)cap_deps * sizeof(int32_t);
	tl->succ = (int32_t *)(void *)p;
	p += (size_t)cap_deps * sizeof(int32_t);
	tl->succ_first = (int32_t *)(void *)p;
	p += ((size_t)cap_events + 1) * sizeof(int32_t);
	tl->group_first = (int32_t *)(void *)p;
	p += (size_t)cap_events * sizeof(int32_t);
	tl->group_size = (int32_t *)(void *)p;
	p += (size_t)cap_events * sizeof(int32_t);
	tl->group_ready = (int32_t *)(void *)p;
	tl->cap_events = cap_events;
	tl->cap_deps = cap_deps;
	for (int g = 0; g < TL_MAX_GPUS; g++)
		tl->cluster_sms[g] = 1;
}

void tl_reset(struct timeline *tl)
{
	tl->n_streams = 0;
	tl->n_gpus = 0;
	tl->n_events = 0;
	tl->n_deps = 0;
	tl->n_groups = 0;
	for (int g = 0; g < TL_MAX_GPUS; g++) {
		tl->reserved_sm[g] = 0;
		tl->cluster_sms[g] = 1;
	}
	memset(&tl->result, 0, sizeof tl->result);
}

int tl_partition(struct timeline *tl, int gpu, double reserved_sm, double cluster_sms)
{
	if (gpu < 0 || gpu >= TL_MAX_GPUS || !(reserved_sm >= 0 && reserved_sm <= TL_COMM_SM_MAX) ||
	    !(cluster_sms >= 1 && cluster_sms <= 16))
		return -EINVAL;
	tl->reserved_sm[gpu] = reserved_sm;
	tl->cluster_sms[gpu] = cluster_sms;
	return 0;
}

int tl_stream(struct timeline *tl, int gpu, enum tl_stream_kind kind, const char *name)
{
	if (gpu < 0 || gpu >= TL_MAX_GPUS)
		return -EINVAL;
	if (tl->n_streams == TL_MAX_STREAMS)
		return -E2BIG;
	struct tl_stream *s = &tl->streams[tl->n_streams];
	memset(s, 0, sizeof *s);
	s->name = name;
	s->gpu = gpu;
	s->kind = kind;
	s->first = s->last = -1;
	if (gpu + 1 > tl->n_gpus)
		tl->n_gpus = gpu + 1;
	return tl->n_streams++;
}

int32_t tl_group(struct timeline *tl)
{
	if (tl->n_groups == tl->cap_events)
		return -E2BIG;
	tl->group_first[tl->n_groups] = -1;
	tl->group_size[tl->n_groups] = 0;
	return tl->n_groups++;
}

static double clamp01(double x)
{
	return x > 1 ? 1 : x > 0 ? x : 0; /* NaN -> 0 */
}

int32_t tl_add_in_group(struct timeline *tl, int stream, int32_t group, const char *name, double work_s,
			double sm, double hbm, const int32_t *deps, int n_deps)
{
	if (stream < 0 || stream >= tl->n_streams || !(work_s >= 0) || n_deps < 0 || n_deps > INT16_MAX ||
	    group >= tl->n_groups)
		return -EINVAL;
	int valid = 0;
	for (int i = 0; i < n_deps; i++) {
		if (deps[i] >= tl->n_events)
			return -EINVAL;
		valid += deps[i] >= 0;
	}
	if (tl->n_events == tl->cap_events || tl->n_deps + valid > tl->cap_deps)
		return -E2BIG;
	int32_t id = tl->n_events++;
	struct tl_event *e = &tl->ev[id];
	e->name = name;
	e->tag = 0;
	e->mb = 0;
	e->critical = false;
	e->work_s = work_s;
	e->sm = (float)clamp01(sm);
	e->hbm = (float)clamp01(hbm);
	e->stream = (int16_t)stream;
	e->group = group;
	e->group_next = -1;
	e->layer = -1;
	e->tail = 0;
	e->dep_first = tl->n_deps;
	for (int i = 0; i < n_deps; i++)
		if (deps[i] >= 0)
			tl->deps[tl->n_deps++] = deps[i];
	e->n_deps = (int16_t)valid;
	struct tl_stream *s = &tl->streams[stream];
	e->kind = (int8_t)s->kind;
	e->prev = s->last;
	e->next = -1;
	if (s->last >= 0)
		tl->ev[s->last].next = id;
	else
		s->first = id;
	s->last = id;
	s->n_events++;
	if (group >= 0) {
		e->group_next = tl->group_first[group];
		tl->group_first[group] = id;
		tl->group_size[group]++;
	}
	return id;
}

int32_t tl_add(struct timeline *tl, int stream, const char *name, double work_s, double sm, double hbm,
	       const int32_t *deps, int n_deps)
{
	return tl_add_in_group(tl, stream, -1, name, work_s, sm, hbm, deps, n_deps);
}

/* ---- running ---- */

enum { PH_WAIT, PH_QUEUED, PH_RESIDENT, PH_WORKING, PH_DONE };

struct run {
	struct timeline *tl;
	int32_t running[TL_MAX_STREAMS]; /* resident and working events (one per stream at most) */
	int n_running;
	int32_t queued[TL_MAX_STREAMS];  /* communication waiting for SMs, in the order it got ready */
	int n_queued;
	int32_t freed_by[TL_MAX_GPUS];   /* the last event that ended on each GPU at this instant */
	double now;
};

static int gpu_of(const struct timeline *tl, int32_t id)
{
	return tl->streams[tl->ev[id].stream].gpu;
}

static void work(struct run *r, int32_t id)
{
	struct tl_event *e = &r->tl->ev[id];
	e->start_s = r->now;
	e->remaining_s = e->work_s;
	e->phase = PH_WORKING;
}

/* The kernel takes its SMs; a collective's work starts once every member has. */
static void admit(struct run *r, int32_t id)
{
	struct timeline *tl = r->tl;
	struct tl_event *e = &tl->ev[id];
	e->admit_s = r->now;
	e->phase = PH_RESIDENT;
	r->running[r->n_running++] = id;
	if (e->group < 0) {
		work(r, id);
		return;
	}
	if (++tl->group_ready[e->group] < tl->group_size[e->group])
		return;
	/* the last member is resident: all work from now, released by what released it */
	for (int32_t m = tl->group_first[e->group]; m >= 0; m = tl->ev[m].group_next) {
		tl->ev[m].released_by = e->released_by;
		work(r, m);
	}
}

static void ready(struct run *r, int32_t id, int32_t by)
{
	struct tl_event *e = &r->tl->ev[id];
	e->released_by = by;
	e->admit_s = r->now; /* when it got ready, until admitted */
	if (e->kind == TL_COMM && e->sm > 0) {
		e->phase = PH_QUEUED;
		r->queued[r->n_queued++] = id;
		return;
	}
	admit(r, id);
}

static void release(struct run *r, int32_t id, int32_t by)
{
	struct tl_event *e = &r->tl->ev[id];
	if (--e->pending == 0)
		ready(r, id, by);
}

/* In the share of its work where its CTAs retire (a GEMM's last wave of tiles). */
static bool in_tail(const struct tl_event *e)
{
	return e->remaining_s <= (double)e->tail * e->work_s * (1 + 1e-12);
}

/* SMs held on GPU g: communication resident or working, and the compute that was running
 * before this instant (started earlier), unless in its tail. */
static void held(const struct run *r, int g, double *comm_sm, double *old_compute_sm)
{
	const struct timeline *tl = r->tl;
	*comm_sm = *old_compute_sm = 0;
	for (int k = 0; k < r->n_running; k++) {
		const struct tl_event *e = &tl->ev[r->running[k]];
		if (gpu_of(tl, r->running[k]) != g)
			continue;
		if (e->kind == TL_COMM)
			*comm_sm += e->sm;
		else if (e->phase == PH_WORKING && e->start_s < r->now && !in_tail(e))
			*old_compute_sm += e->sm;
	}
}

/* Compute capacity of GPU g with comm_sm of communication resident. */
static double capacity(const struct timeline *tl, int g, double comm_sm)
{
	double reserved = tl->reserved_sm[g];
	double outside = comm_sm > reserved ? comm_sm - reserved : 0;
	double cap = 1 - reserved - tl->cluster_sms[g] * outside;
	return cap > 1 - TL_COMM_SM_MAX ? cap : 1 - TL_COMM_SM_MAX;
}

/* Admits the queued communication whose SMs are free, in the order it got ready. */
static void admit_queued(struct run *r)
{
	struct timeline *tl = r->tl;
	int kept = 0;
	for (int k = 0; k < r->n_queued; k++) {
		int32_t id = r->queued[k];
		struct tl_event *e = &tl->ev[id];
		int g = gpu_of(tl, id);
		double comm_sm, compute_sm;
		held(r, g, &comm_sm, &compute_sm);
		bool fits = comm_sm + e->sm <= tl->reserved_sm[g] + 1e-6 || /* shares are floats */
			    compute_sm <= capacity(tl, g, comm_sm + e->sm) + 1e-6;
		if (!fits) {
			r->queued[kept++] = id;
			continue;
		}
		if (r->now > e->admit_s && r->freed_by[g] >= 0)
			e->released_by = r->freed_by[g]; /* held back by what just freed its SMs */
		admit(r, id);
	}
	r->n_queued = kept;
}

static void critical_path(struct timeline *tl)
{
	struct tl_result *res = &tl->result;
	int32_t last = -1;
	for (int32_t i = 0; i < tl->n_events; i++)
		if (last < 0 || tl->ev[i].end_s > tl->ev[last].end_s)
			last = i;
	res->last_event = last;
	res->makespan_s = last >= 0 ? tl->ev[last].end_s : 0;
	for (int32_t i = last; i >= 0; i = tl->ev[i].released_by) {
		struct tl_event *e = &tl->ev[i];
		e->critical = true;
		res->critical_events++;
		double d = e->end_s - e->start_s;
		if (e->kind == TL_COMM)
			res->critical_comm_s += d;
		else
			res->critical_compute_s += d;
	}
}

int tl_run(struct timeline *tl)
{
	struct run r = {.tl = tl};
	memset(&tl->result, 0, sizeof tl->result);
	tl->result.last_event = -1;
	for (int i = 0; i < tl->n_streams; i++)
		tl->streams[i].busy_s = 0;
	for (int g = 0; g < TL_MAX_GPUS; g++)
		r.freed_by[g] = -1;

	/* dependents of each event, in a compressed list after the dependencies */
	int32_t *first = tl->succ_first;
	memset(first, 0, ((size_t)tl->n_events + 1) * sizeof *first);
	for (int32_t i = 0; i < tl->n_deps; i++)
		first[tl->deps[i] + 1]++;
	for (int32_t i = 0; i < tl->n_events; i++)
		first[i + 1] += first[i];
	for (int32_t i = 0; i < tl->n_events; i++) {
		struct tl_event *e = &tl->ev[i];
		for (int32_t k = 0; k < e->n_deps; k++) {
			int32_t d = tl->deps[e->dep_first + k];
			tl->succ[first[d]++] = i;
		}
	}
	for (int32_t i = tl->n_events; i > 0; i--)
		first[i] = first[i - 1];
	first[0] = 0;

	for (int32_t g = 0; g < tl->n_groups; g++)
		tl->group_ready[g] = 0;
	for (int32_t i = 0; i < tl->n_events; i++) {
		struct tl_event *e = &tl->ev[i];
		e->pending = e->n_deps + (e->prev >= 0);
		e->released_by = -1;
		e->critical = false;
		e->phase = PH_WAIT;
		e->start_s = e->end_s = e->admit_s = e->exposed_at_end_s = 0;
	}
	for (int32_t i = 0; i < tl->n_events; i++)
		if (tl->ev[i].pending == 0)
			ready(&r, i, -1);
	admit_queued(&r);

	double rate[TL_MAX_STREAMS];
	int32_t done[TL_MAX_STREAMS];
	int32_t finished = 0;
	const int n_gpus = tl->n_gpus > 0 ? tl->n_gpus : 1;
	while (r.n_running > 0) {
		double comm_sm[TL_MAX_GPUS], comp_sm[TL_MAX_GPUS], hbm[TL_MAX_GPUS];
		int n_comm[TL_MAX_GPUS], n_comp[TL_MAX_GPUS];
		for (int g = 0; g < n_gpus; g++) {
			comm_sm[g] = comp_sm[g] = hbm[g] = 0;
			n_comm[g] = n_comp[g] = 0;
		}
		for (int k = 0; k < r.n_running; k++) {
			const struct tl_event *e = &tl->ev[r.running[k]];
			int g = gpu_of(tl, r.running[k]);
			if (e->kind == TL_COMM)
				comm_sm[g] += e->sm; /* resident or working, it holds its SMs */
			if (e->phase != PH_WORKING)
				continue;
			hbm[g] += e->hbm;
			if (e->kind == TL_COMM) {
				n_comm[g]++;
			} else {
				comp_sm[g] += e->sm;
				n_comp[g]++;
			}
		}
		bool waits[TL_MAX_GPUS] = {false}; /* communication queued for SMs */
		for (int k = 0; k < r.n_queued; k++)
			waits[gpu_of(tl, r.queued[k])] = true;
		double dt = INFINITY;
		for (int k = 0; k < r.n_running; k++) {
			const struct tl_event *e = &tl->ev[r.running[k]];
			rate[k] = 0;
			if (e->phase != PH_WORKING)
				continue;
			int g = gpu_of(tl, r.running[k]);
			double f = 1;
			if (hbm[g] > 1 && e->hbm > 0)
				f = 1 / hbm[g];
			if (e->kind != TL_COMM && e->sm > 0) {
				double cap = capacity(tl, g, comm_sm[g]);
				if (comp_sm[g] > cap && cap / comp_sm[g] < f)
					f = cap / comp_sm[g];
			}
			rate[k] = f;
			double t = e->remaining_s / f;
			if (waits[g] && e->kind != TL_COMM && !in_tail(e)) /* its tail frees SMs: a boundary */
				t = (e->remaining_s - (double)e->tail * e->work_s) / f;
			if (t < dt)
				dt = t;
		}
		if (dt == INFINITY)
			break; /* only members waiting for peers that never come */
		for (int g = 0; g < n_gpus; g++) {
			if (n_comm[g])
				tl->result.comm_busy_s[g] += dt;
			if (n_comp[g])
				tl->result.compute_busy_s[g] += dt;
			if (n_comm[g] && !n_comp[g])
				tl->result.exposed_comm_s[g] += dt;
		}
		r.now += dt;
		for (int g = 0; g < n_gpus; g++)
			r.freed_by[g] = -1;
		int n_done = 0, kept = 0;
		for (int k = 0; k < r.n_running; k++) {
			int32_t id = r.running[k];
			struct tl_event *e = &tl->ev[id];
			if (e->phase == PH_WORKING) {
				e->remaining_s -= rate[k] * dt;
				if (e->remaining_s <= 1e-12 * e->work_s + 1e-18) {
					e->remaining_s = 0;
					e->end_s = r.now;
					e->phase = PH_DONE;
					e->exposed_at_end_s = tl->result.exposed_comm_s[gpu_of(tl, id)];
					done[n_done++] = id;
					continue;
				}
			}
			r.running[kept++] = id;
		}
		r.n_running = kept;
		finished += n_done;
		/* release in event order: deterministic whatever the running order */
		for (int a = 1; a < n_done; a++)
			for (int b = a; b > 0 && done[b] < done[b - 1]; b--) {
				int32_t t = done[b];
				done[b] = done[b - 1];
				done[b - 1] = t;
			}
		for (int k = 0; k < n_done; k++)
			r.freed_by[gpu_of(tl, done[k])] = done[k];
		for (int k = 0; k < n_done; k++) {
			int32_t id = done[k];
			const struct tl_event *e = &tl->ev[id];
			if (e->next >= 0)
				release(&r, e->next, id);
			for (int32_t j = first[id]; j < first[id + 1]; j++)
				release(&r, tl->succ[j], id);
		}
		admit_queued(&r);
	}
	for (int32_t i = 0; i < tl->n_events; i++) {
		const struct tl_event *e = &tl->ev[i];
		tl->streams[e->stream].busy_s += e->end_s - e->start_s;
	}
	if (finished < tl->n_events) {
		for (int32_t i = 0; i < tl->n_events; i++) {
			struct tl_event *e = &tl->ev[i];
			if (e->phase != PH_DONE)
				e->start_s = e->end_s = e->admit_s = 0;
		}
		return -EDEADLK;
	}
	critical_path(tl);
	return 0;
}
