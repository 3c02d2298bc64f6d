/* Synthetic workloads: arrivals, lengths, conversations, images and video (docs/SERVING.md,
 * section 1). */
#include "serve/serve.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/rng.h"
#include "serve/vision.h"

/* MoonViT-V2 (serve/vision.h): 14-pixel patches, then a 2 x 2 pixel shuffle before the projector
 * (4x fewer tokens). A side is padded up to whole patches, and the patch grid up to an even size. */
static int64_t patch_grid(int64_t px)
{
	int64_t g = (px + VIT_PATCH_PX - 1) / VIT_PATCH_PX;
	return (g + VIT_SHUFFLE - 1) / VIT_SHUFFLE * VIT_SHUFFLE;
}

int64_t serve_vision_tokens(int64_t images, int64_t image_px, int64_t video_frames, int64_t video_px)
{
	int64_t t = 0;
	if (images > 0 && image_px > 0) {
		int64_t g = patch_grid(image_px);
		t += images * (g * g) / (VIT_SHUFFLE * VIT_SHUFFLE);
	}
	if (video_frames > 0 && video_px > 0) {
		int64_t g = patch_grid(video_px);
		t += video_frames * (g * g) / (VIT_SHUFFLE * VIT_SHUFFLE);
	}
	return t;
}

static int64_t draw_length(struct serve_rng *r, const struct serve_length *l)
{
	double x = l->mean;
	switch (l->dist) {
	case SERVE_DIST_FIXED:
		break;
	case SERVE_DIST_UNIFORM:
		x = (double)l->min + serve_rng_u01(r) * (double)(l->max - l->min + 1);
		break;
	case SERVE_DIST_EXPONENTIAL:
		x = serve_rng_exp(r, l->mean);
		break;
	case SERVE_DIST_LOGNORMAL: {
		double s2 = log(1 + l->cv * l->cv);
		x = exp(log(l->mean) - 0.5 * s2 + sqrt(s2) * serve_rng_normal(r));
		break;
	}
	case SERVE_DIST_COUNT:
		break;
	}
	int64_t v = (int64_t)llround(x);
	return v < l->min ? l->min : v > l->max ? l->max : v;
}

/* The gap before the next arrival. */
static double draw_gap(struct serve_rng *r, const struct serve_config *c)
{
	switch (c->arrival) {
	case SERVE_ARRIVAL_POISSON:
		return serve_rng_exp(r, 1.0 / c->rate_per_s);
	case SERVE_ARRIVAL_GAMMA: {
		/* shape k = 1 / cv^2, mean 1 / rate */
		double k = 1.0 / (c->cv * c->cv);
		return serve_rng_gamma(r, k) / (k * c->rate_per_s);
	}
	default:
		return 0;
	}
}

void serve_workload_release(struct serve_workload *w)
{
	free(w->req);
	free(w->ids);
	memset(w, 0, sizeof *w);
}

static int grow(struct serve_workload *w, int64_t *cap, struct err *e)
{
	if (w->n < *cap)
		return 0;
	if (*cap >= SERVE_MAX_REQUESTS) {
		err_set(e, NULL, 0, 0, "more than %d requests", SERVE_MAX_REQUESTS);
		return -E2BIG;
	}
	int64_t nc = *cap ? *cap * 2 : 1024;
	if (nc > SERVE_MAX_REQUESTS)
		nc = SERVE_MAX_REQUESTS;
	struct serve_request *p = realloc(w->req, (size_t)nc * sizeof *p);
	if (!p) {
		err_set(e, NULL, 0, 0, "out of memory");
		return -ENOMEM;
	}
	w->req = p;
	*cap = nc;
	return 0;
}

/* Synthetic: conversations arrive by the process, each of `turns` requests; requests count one
 * each toward max_requests. */
static int generate(struct serve_workload *w, const struct serve_config *c, struct err *e)
{
	struct serve_rng r;
	serve_rng_seed(&r, c->seed);
	int64_t cap = 0;
	double t = 0;
	int64_t conv = 0;
	const int64_t cap_requests = c->max_requests > 0 ? c->max_requests : SERVE_MAX_REQUESTS;
	for (;;) {
		if (c->arrival != SERVE_ARRIVAL_BURST) {
			if (conv > 0)
				t += draw_gap(&r, c);
			if (!(t < c->duration_s))
				break;
		} else if (c->max_requests == 0 && (double)conv >= c->rate_per_s * c->duration_s) {
			/* a burst: rate x duration requests at t = 0 unless max_requests says */
			break;
		}
		if (w->n >= cap_requests)
			break;
		uint64_t sys = c->system_tokens > 0
				       ? serve_mix(UINT64_C(0x5157), (uint64_t)(serve_rng_next(&r) % (uint64_t)c->system_prompts))
				       : 0;
		uint64_t conv_id = serve_mix(c->seed ^ UINT64_C(0xc0417), (uint64_t)conv);
		int64_t context = 0;
		int32_t prev = -1;
		for (int64_t k = 0; k < c->turns && w->n < cap_requests; k++) {
			int rc = grow(w, &cap, e);
			if (rc < 0)
				return rc;
			struct serve_request *q = &w->req[w->n];
			memset(q, 0, sizeof *q);
			q->arrival_s = k == 0 ? (c->arrival == SERVE_ARRIVAL_BURST ? 0 : t) : 0;
			int64_t fresh = k == 0 ? c->system_tokens + draw_length(&r, &c->prompt) : draw_length(&r, &c->turn_tokens);
			q->prompt_tokens = context + fresh;
			q->output_tokens = draw_length(&r, &c->output);
			if (c->image_fraction > 0 && serve_rng_u01(&r) < c->image_fraction) {
				q->images = (int32_t)c->images;
				q->image_px = (int32_t)c->image_px;
			}
			if (c->video_fraction > 0 && serve_rng_u01(&r) < c->video_fraction) {
				q->video_frames = (int32_t)c->video_frames;
				q->video_px = (int32_t)c->video_px;
			}
			q->vision_tokens = serve_vision_tokens(q->images, q->image_px, q->video_frames, q->video_px);
			q->conversation = c->turns > 1 ? conv : -1;
			q->turn = (int32_t)k;
			q->after = prev;
			q->think_s = k > 0 && c->think_s > 0 ? serve_rng_exp(&r, c->think_s) : 0;
			q->seg_id[0] = sys;
			q->seg_tokens = c->system_tokens;
			q->seg_id[1] = conv_id;
			context = q->prompt_tokens + q->vision_tokens + q->output_tokens;
			prev = (int32_t)w->n;
			w->n++;
		}
		conv++;
		if (c->arrival == SERVE_ARRIVAL_BURST && c->max_requests == 0 &&
		    (double)conv >= c->rate_per_s * c->duration_s)
			break;
	}
	snprintf(w->source, sizeof w->source, "%s arrivals%s, %lld requests in %lld conversation%s", serve_arrival_name(c->arrival),
		 c->arrival == SERVE_ARRIVAL_BURST ? " (all at t = 0)" : "", (long long)w->n, (long long)conv,
		 conv == 1 ? "" : "s");
	return 0;
}

int serve_workload_make(struct serve_workload *w, const struct serve_config *c, const struct model *m,
			struct err *e)
{
	(void)m;
	memset(w, 0, sizeof *w);
	int rc;
	if (c->arrival == SERVE_ARRIVAL_TRACE) {
		rc = serve_trace_load(w, c->trace, c->trace_format, c->time_scale, e);
		if (rc == 0 && c->max_requests > 0 && w->n > c->max_requests)
			w->n = c->max_requests;
	} else {
		rc = generate(w, c, e);
	}
	if (rc < 0) {
		serve_workload_release(w);
		return rc;
	}
	if (w->n == 0) {
		err_set(e, c->arrival == SERVE_ARRIVAL_TRACE ? c->trace : NULL, 0, 0,
			"the workload has no request (arrivals within duration_s %g s)", c->duration_s);
		serve_workload_release(w);
		return -EINVAL;
	}
	return 0;
}
