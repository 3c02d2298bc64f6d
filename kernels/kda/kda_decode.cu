/* SPDX-License-Identifier: MIT */
/* Fused KDA decode: see kda_decode.h; the kernel is kda_step.cuh's. */
#include "kda_decode.h"

#include <cerrno>

#include "kda_step.cuh"

extern "C" int kda_decode(const struct kda_decode_args *a, cudaStream_t stream)
{
	if (!a || a->batch < 1 || a->heads < 1 || a->batch > 65535 * 1024 || a->heads > 65535)
		return -EINVAL;
	if (a->state_dtype != KDA_F32 && a->state_dtype != KDA_BF16)
		return -EINVAL;
	if (!a->x || !a->g_raw || !a->beta_raw || !a->gate_raw || !a->conv_w || !a->norm_w ||
	    !a->slot || !a->state || !a->conv_state || !a->out)
		return -EINVAL;
	step_params p = {};
	p.heads = a->heads;
	p.window = 1;
	p.scale = a->scale;
	p.norm_eps = a->norm_eps;
	p.conv_w = a->conv_w;
	p.norm_w = a->norm_w;
	p.slot = a->slot;
	p.state = a->state;
	p.conv_state = a->conv_state;
	p.commit.x = a->x;
	p.commit.g_raw = a->g_raw;
	p.commit.beta_raw = a->beta_raw;
	p.commit.gate_raw = a->gate_raw;
	p.commit.n_tokens = nullptr;
	p.commit.n_fixed = 1;
	p.commit.out = a->out;
	return step_launch(p, a->batch, a->state_dtype, stream);
}
