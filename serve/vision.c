/* MoonViT-V2 as ops (serve/vision.h). */
#include "serve/vision.h"

#include <string.h>

#include "model/ops.h"
#include "sim/cost.h"

int64_t serve_vision_params(int64_t llm_hidden)
{
	int64_t d = VIT_HIDDEN, f = VIT_MLP;
	int64_t layer = 4 * d * d + 4 * d + 2 * d * f + d + f + 4 * d; /* attention, MLP, two norms */
	int64_t patch = (int64_t)VIT_PATCH_PX * VIT_PATCH_PX * 3 * d + d;
	int64_t shuffled = d * VIT_SHUFFLE * VIT_SHUFFLE;
	int64_t projector = llm_hidden > 0 ? shuffled * shuffled + shuffled + shuffled * llm_hidden + llm_hidden : 0;
	return VIT_LAYERS * layer + patch + projector;
}

static double cost(const struct hw *hw, const struct cost_opts *o, struct op *op)
{
	op->w_dtype = op->a_dtype = op->o_dtype = DT_BF16;
	op->s_dtype = DT_BF16;
	op->layers = 1;
	op_fill(op);
	struct op_cost c;
	sim_op_cost(hw, op, o, &c);
	return c.time_s;
}

static double gemm(const struct hw *hw, const struct cost_opts *o, int64_t m, int64_t n, int64_t k)
{
	struct op op;
	memset(&op, 0, sizeof op);
	op.kind = OP_GEMM;
	op.name = "vit.gemm";
	op.m = m;
	op.n = n;
	op.k = k;
	return cost(hw, o, &op);
}

static double eltwise(const struct hw *hw, const struct cost_opts *o, int64_t m, int64_t n, double flops)
{
	struct op op;
	memset(&op, 0, sizeof op);
	op.kind = OP_ELEMENTWISE;
	op.name = "vit.eltwise";
	op.m = m;
	op.n = n;
	op.in_tensors = 1;
	op.out_tensors = 1;
	op.flops_per_element = flops;
	return cost(hw, o, &op);
}

/* Bidirectional attention of b groups of t tokens among themselves: a prefill attention op over
 * a prefix of t/2 (t (t/2 + t/2) = t^2 pairs). */
static double attention(const struct hw *hw, const struct cost_opts *o, int64_t b, int64_t t)
{
	struct op op;
	memset(&op, 0, sizeof op);
	op.kind = OP_MLA_PREFILL;
	op.name = "vit.attn";
	op.b = b;
	op.t = t;
	op.ctx = t / 2;
	op.h = VIT_HEADS;
	op.dk = op.dv = VIT_HEAD_DIM;
	return cost(hw, o, &op);
}

double serve_vision_time(const struct hw *hw, const struct hw_clock_sel *clock, int64_t frames, int64_t px,
			 int64_t llm_hidden)
{
	if (frames <= 0 || px <= 0)
		return 0;
	struct cost_opts o = {.cuda_graph = false, .clock = *clock};
	int64_t g = (px + VIT_PATCH_PX - 1) / VIT_PATCH_PX;
	g = (g + VIT_SHUFFLE - 1) / VIT_SHUFFLE * VIT_SHUFFLE;
	int64_t per_frame = g * g, n = frames * per_frame, d = VIT_HIDDEN;
	double t = gemm(hw, &o, n, d, (int64_t)VIT_PATCH_PX * VIT_PATCH_PX * 3);
	double layer = 2 * eltwise(hw, &o, n, d, 5) + gemm(hw, &o, n, 3 * d, d) + attention(hw, &o, frames, per_frame) +
		       gemm(hw, &o, n, d, d) + gemm(hw, &o, n, VIT_MLP, d) + eltwise(hw, &o, n, VIT_MLP, 8) +
		       gemm(hw, &o, n, d, VIT_MLP) + eltwise(hw, &o, n, d, 1);
	if (frames > 1)
		layer += attention(hw, &o, per_frame, frames); /* temporal: across frames per position */
	t += VIT_LAYERS * layer;
	/* 2 x 2 pixel shuffle, then the projector: LayerNorm, 4d -> 4d, GELU, 4d -> LLM hidden */
	int64_t v = n / (VIT_SHUFFLE * VIT_SHUFFLE), w = d * VIT_SHUFFLE * VIT_SHUFFLE;
	t += eltwise(hw, &o, n, d, 0) + eltwise(hw, &o, v, w, 5) + gemm(hw, &o, v, w, w) + eltwise(hw, &o, v, w, 8) +
	     gemm(hw, &o, v, llm_hidden, w);
	return t;
}
