#ifndef K3_SERVE_VISION_H
#define K3_SERVE_VISION_H

/* MoonViT-V2, K3's vision encoder (the seed study, section 7): 27 layers, ~401M parameters, 12
 * heads, 14-pixel patches, spatial attention within a frame and temporal attention across the
 * frames of a video (factorized, shared weights for images and video), a 2 x 2 pixel shuffle
 * before a two-layer MLP projector into the LLM's hidden size (4x fewer visual tokens). The
 * widths are SigLIP-so400m's, which MoonViT descends from (hidden 1152, MLP 4304: 27 layers of
 * 15.2M = 411M parameters, the published ~401M within the embedding and norms); 12 heads of 96.
 * Costed as ops of the existing kinds (GEMMs, elementwise, bidirectional attention as a prefill
 * attention op whose pairs are the frame's tokens squared) by sim_op_cost on one GPU. */

#include <stdint.h>

#include "hw/hw.h"

enum {
	VIT_LAYERS = 27,
	VIT_HIDDEN = 1152,
	VIT_HEADS = 12,
	VIT_HEAD_DIM = 96,
	VIT_MLP = 4304,
	VIT_PATCH_PX = 14,
	VIT_SHUFFLE = 2,
};

/* Parameters of the encoder (the published ~401M), and of the projector into llm_hidden when it is
 * > 0 (for documentation and tests). */
int64_t serve_vision_params(int64_t llm_hidden);

/* Seconds to encode `frames` frames of px x px pixels (an image: frames = 1) on one GPU, the
 * projector into llm_hidden included. */
double serve_vision_time(const struct hw *hw, const struct hw_clock_sel *clock, int64_t frames, int64_t px,
			 int64_t llm_hidden);

#endif
