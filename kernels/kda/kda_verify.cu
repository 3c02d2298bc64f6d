/* SPDX-License-Identifier: MIT */
/* KDA speculative verify with replay: see kda_verify.h; the kernel is
 * kda_step.cuh's, with the replayed tokens committed and the drafts not. */
#include "kda_verify.h"

#include <cerrno>

#include "kda_step.cuh"

static bool window_ok(const struct kda_window *w, bool need_gate)
{
	return !w->x || (w->g_raw && w->beta_raw && w->n_tokens && (!need_gate || w->gate_raw));
}

static step_window to_step(const struct kda_window *w, uint16_t *out)
{
	step_window s = {};
	s.x = w->x;
	s.g_raw = w->g_raw;
	s.beta_raw = w->beta_raw;
	s.gate_raw = w->gate_raw;
	s.n_tokens = w->n_tokens;
	s.out = out;
	return s;
}

extern "C" int kda_verify_replay(const struct kda_verify_args *a, cudaStream_t stream)
{
	if (!a || a->batch < 1 || a->heads < 1 || a->heads > 65535)
		return -EINVAL;
	if (a->window < 1 || a->window > KDA_MAX_WINDOW)
		return -EINVAL;
	if (a->state_dtype != KDA_F32 && a->state_dtype != KDA_BF16)
		return -EINVAL;
	if (!a->conv_w || !a->norm_w || !a->slot || !a->state || !a->conv_state)
		return -EINVAL;
	if (!window_ok(&a->replay, false) || !window_ok(&a->draft, true) || (a->draft.x && !a->out))
		return -EINVAL;
	step_params p = {};
	p.heads = a->heads;
	p.window = a->window;
	p.scale = a->scale;
	p.norm_eps = a->norm_eps;
	p.conv_w = a->conv_w;
	p.norm_w = a->norm_w;
	p.slot = a->slot;
	p.state = a->state;
	p.conv_state = a->conv_state;
	p.commit = to_step(&a->replay, nullptr);
	p.spec = to_step(&a->draft, a->out);
	return step_launch(p, a->batch, a->state_dtype, stream);
}
