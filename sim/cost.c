#include "sim/cost.h"
#include "sim/power.h"

#include <math.h>
#include <string.h>

const char *bound_name(enum bound b)
{
	static const char *const names[] = {"compute", "memory", "latency", "comm"};
	return (unsigned)b < 4 ? names[b] : "?";
}

static double ceil_div(double a, double b)
{
	return ceil(a / b);
}

/* Math runs in the wider of the two operand types (an MXFP4 x MXFP8 product runs at the FP8 or
 * MXFP8 rate, never at the FP4 rate). */
static enum dtype math_dtype(enum dtype w, enum dtype a)
{
	return dtype_bytes_per_element(w) >= dtype_bytes_per_element(a) ? w : a;
}

/* FP32 math on the SIMT units runs at half their FMA peak: operands come through shared memory
 * and the register file, whose loads take issue slots from the FMAs, and sustained FMA load runs
 * below the boost clock. The convention of every SIMT cost here (elementwise math, KDA decode's
 * state update, GEMMs whose math has no tensor path: KCP's FP32 scan and fix-up); the measured
 * fix-up kernel of kernels/kda/bench/kcp-x2.cu ran 5-7 % slower than this on the H200. */
#define SIMT_FMA_EFF 0.5

/* Rates at the SM clock of a regime: tensor and vector rates (and L2) scale with the clock. */
struct rates {
	double clock_hz;
	double scale; /* clock / boost clock */
};

static double tensor_rate(const struct hw *hw, const struct rates *r, enum dtype t)
{
	return hw_tensor_rate(hw, t) * r->scale;
}

double sim_expected_chunks(double mean_rows, double cv, double chunk_rows)
{
	double mu = fmax(mean_rows, 1.0), c = fmax(chunk_rows, 1.0);
	double sd = (cv > 0 ? cv : 1.0 / sqrt(mu)) * mu;
	if (!(sd > 1e-9 * c))
		return ceil(mu / c);
	/* P(r > x | r >= 1) for r ~ normal(mu, sd) */
	const double below = 0.5 * erfc((1.0 - mu) / (sd * M_SQRT2));
	const double z = 9.0; /* beyond 9 standard deviations a term is 1 or 0 to double precision */
	double j_lo = fmax(1.0, floor((mu - z * sd) / c)), j_hi = ceil((mu + z * sd) / c);
	if (j_hi - j_lo > 1e5) {
		/* the spread covers many chunks: a row count's place in its chunk is uniform, so half
		 * a chunk over the (truncated) mean */
		double a = (1.0 - mu) / sd;
		double mean = mu + sd * exp(-0.5 * a * a) / sqrt(2 * M_PI) / below;
		return fmax(1.0, mean / c + 0.5);
	}
	double e = j_lo; /* j = 0 .. j_lo - 1: a row count past j c for certain */
	for (double j = j_lo; j <= j_hi; j++)
		e += fmin(1.0, 0.5 * erfc((j * c - mu) / (sd * M_SQRT2)) / below);
	return e;
}

bool sim_fp4_gemv(const struct hw *hw, const struct op *op)
{
	return op->kind == OP_GROUPED_GEMM && op->w_dtype == DT_MXFP4 && op->groups_touched >= 1 &&
	       (op->a_dtype == DT_BF16 || op->a_dtype == DT_FP16) &&
	       (double)op->m <= (double)hw->grouped_fp4_gemv_rows * (double)op->groups_touched;
}

double sim_fp4_chunks(const struct hw *hw, const struct op *op)
{
	if (op->kind != OP_GROUPED_GEMM || op->w_dtype != DT_MXFP4 || hw->grouped_fp4_chunk_rows < 1 ||
	    op->groups_touched < 1 || op->m < 1)
		return 0;
	double g = op->groups_touched, mean = (double)op->m / g;
	if (sim_fp4_gemv(hw, op))
		return 0;
	const double small = (double)hw->grouped_fp4_small_chunk_rows;
	if (mean <= small || small < 1)
		return g * sim_expected_chunks(mean, op->expert_cv, small >= 1 ? small : (double)hw->grouped_fp4_chunk_rows);
	/* past the small chunks' threshold the kernel takes longer chunks, fewer of them: never fewer
	 * an expert than at the threshold (more rows are never faster: the class below's last count,
	 * as class_boundary_below does for the tables) */
	return g * fmax(sim_expected_chunks(mean, op->expert_cv, (double)hw->grouped_fp4_chunk_rows),
			sim_expected_chunks(small, op->expert_cv, small));
}

/* Each chunk's MMAs pad its rows to 16: half of that a chunk on average. */
#define FP4_CHUNK_PAD_ROWS 8.0

/* The MXFP4 grouped kernel's weight expansions: each chunk expands the expert's whole n x k
 * weight matrix at the fitted rate; 0 where the preset has no rate. */
static double fp4_expansion_s(const struct hw *hw, const struct op *op, double clock_hz)
{
	if (!(hw->grouped_fp4_welems_per_sm_cycle > 0))
		return 0;
	return sim_fp4_chunks(hw, op) * (double)op->n * (double)op->k /
	       (hw->grouped_fp4_welems_per_sm_cycle * (double)hw->sms * clock_hz);
}

/* Tile and wave quantization: the GEMM runs as ceil(m/tm) x ceil(n/tn) output tiles over the SMs.
 * Few tiles are split along k by the library to fill the machine, so partial waves only cost
 * their fraction; many tiles run in whole waves. The padded FLOPs run at the curve's rate, plus
 * its fixed cost (hw_curve_time_s: the curve's half is charged once, not scaled by padding).
 * Returns seconds. */
/* Whether the preset has the fitted GEMM kernel costs (hw.h) rather than the curve's form. */
static bool gemm_kernel_model(const struct hw *hw)
{
	return hw->gemm_fixed_cycles > 0 || hw->gemm_wave_cycles > 0 || hw->gemm_kstep_cycles > 0;
}

static double gemm_compute_s(const struct hw *hw, const struct op *op, double rate, double clock_hz, bool simt,
			     double *waves)
{
	double tm = (double)hw->gemm_tile_m;
	if ((double)op->m < tm) {
		tm = 16;
		while (tm < (double)op->m)
			tm *= 2;
	}
	double tn = (double)hw->gemm_tile_n;
	double tiles = ceil_div((double)op->m, tm) * ceil_div((double)op->n, tn);
	if (op->kind == OP_GROUPED_GEMM && op->groups_touched >= 1) {
		/* Each expert's rows are padded to whole tiles on their own. Routed rows per expert
		 * vary around the mean, so an expert of r rows pads on average half a tile (r + tm/2)
		 * once r fills a tile, and below that one smaller tile of at least 16 rows (1.5 r):
		 * continuous at r = tm, and the padded total never falls as rows or experts grow. */
		double g = op->groups_touched, rows = (double)op->m / g;
		tm = (double)hw->gemm_tile_m;
		double padded = rows >= tm ? rows + tm / 2 : fmax(16.0, 1.5 * rows);
		/* the MXFP4 kernel's equal chunks pad only to their MMAs' 16 rows */
		double chunks = sim_fp4_chunks(hw, op);
		if (chunks > 0)
			padded = rows + chunks / g * FP4_CHUNK_PAD_ROWS;
		tiles = g * padded / tm * ceil_div((double)op->n, tn);
	}
	double sms = (double)hw->sms;
	double w = tiles < sms ? tiles / sms : hw_gemm_waves(hw, tiles);
	*waves = w;
	double padded_flops = w * sms * 2.0 * tm * tn * (double)op->k;
	if (simt) /* no tensor path: the FMAs at the SIMT rate; the fitted GEMM costs are tensor cores' */
		return padded_flops / (rate * SIMT_FMA_EFF);
	if (gemm_kernel_model(hw)) {
		enum dtype math = hw_math_dtype(hw, math_dtype(op->w_dtype, op->a_dtype));
		double eff = hw->gemm_eff[math] > 0 ? hw->gemm_eff[math] : hw->eff_gemm.max;
		return padded_flops / (rate * eff) + ceil(w) * hw->gemm_wave_cycles / clock_hz;
	}
	return hw_curve_time_s(&hw->eff_gemm, padded_flops, rate);
}

/* Activations that fit in half of L2 were just produced by the previous op and stay there; not a
 * quantizer's: its input was just written too, but it ran at 55 % of copy bandwidth, never near
 * L2's (E4M3 rows of 3584 on an H200: 20.3 us at 4096 rows, 79 us at 16384;
 * bench/results/k3-kernels-h200-2026-12-06h/), so its bytes are HBM's. */
static bool act_in_l2(const struct hw *hw, const struct op *op, int64_t bytes)
{
	return !op->cold && op->kind != OP_QUANT && (double)bytes <= 0.5 * (double)hw->l2_bytes;
}

static void memory_split(const struct hw *hw, const struct op *op, double *hbm, double *l2)
{
	*hbm = (double)(op->bytes_weight + op->bytes_kv_read + op->bytes_kv_write + op->bytes_state_read +
			op->bytes_state_write);
	*l2 = 0;
	*(act_in_l2(hw, op, op->bytes_act_in) ? l2 : hbm) += (double)op->bytes_act_in;
	*(act_in_l2(hw, op, op->bytes_act_out) ? l2 : hbm) += (double)op->bytes_act_out;
}

/* HBM bytes at the memory curve (a fixed cost once there is HBM traffic, then the achieved
 * bandwidth), L2 bytes at the L2 bandwidth, which runs at the SM clock. */
static double memory_s(const struct hw *hw, const struct rates *r, double hbm, double l2)
{
	return hw_curve_time_s(&hw->eff_memory, hbm, hw->hbm_bw_bytes_per_s) + l2 / (hw->l2_bw_bytes_per_s * r->scale);
}

enum hw_coll sim_op_coll(enum op_kind k)
{
	switch (k) {
	case OP_ALLREDUCE:
		return HW_COLL_ALLREDUCE;
	case OP_ALLGATHER:
		return HW_COLL_ALLGATHER;
	case OP_REDUCESCATTER:
		return HW_COLL_REDUCESCATTER;
	default:
		return HW_COLL_ALLTOALL;
	}
}

enum hw_class sim_op_class(enum op_kind k)
{
	switch (k) {
	case OP_ATTNRES:
		return HW_CLASS_ATTNRES;
	case OP_ROUTE:
		return HW_CLASS_ROUTE;
	case OP_COMBINE:
		return HW_CLASS_COMBINE;
	case OP_SHORT_CONV:
		return HW_CLASS_SHORT_CONV;
	case OP_QUANT:
		return HW_CLASS_QUANT;
	default:
		return HW_CLASS_MEMORY;
	}
}

/* Bytes each rank moves per byte of its buffer, and the number of latency steps. */
static void coll_shape(const struct op *op, double *factor, double *steps)
{
	double n = (double)op->ranks;
	switch (op->kind) {
	case OP_ALLREDUCE:
		*factor = 2.0 * (n - 1) / n;
		*steps = 2.0 * log2(n);
		break;
	case OP_ALLTOALL:
		*factor = (n - 1) / n;
		*steps = 1.0 + log2(n) / 2;
		break;
	default: /* all-gather, reduce-scatter */
		*factor = (n - 1) / n;
		*steps = log2(n);
		break;
	}
}

/* Share of a collective's traffic that leaves one NVLink domain and crosses the NIC. */
static double nic_share(const struct hw *hw, const struct op *op)
{
	double n = (double)op->ranks;
	return op->ranks > hw->domain_gpus ? (n - (double)hw->domain_gpus) / n : 0;
}

/* Alpha-beta: steps x step latency + bytes x factor / (link rate x efficiency(bytes)), with the
 * step latency and efficiency curve of the collective's kind and rank count where the preset has
 * them (hw_coll_model), else the interconnect's. */
static void comm_cost(const struct hw *hw, const struct op *op, struct op_cost *c)
{
	if (op->ranks <= 1 || op->comm_bytes <= 0)
		return;
	double factor, steps;
	coll_shape(op, &factor, &steps);
	const struct hw_coll_model *cm = hw_coll_model(hw, sim_op_coll(op->kind), op->ranks);
	const struct hw_curve *curve = cm ? &cm->eff : &hw->eff_comm;
	double eff = hw_curve_eval(curve, (double)op->comm_bytes);
	double bw = hw->nvlink_bw_bytes_per_s, lat = cm ? cm->step_latency_s : hw->nvlink_latency_s;
	double bytes = (double)op->comm_bytes * factor;
	double outside = nic_share(hw, op);
	if (outside > 0) {
		/* hierarchical: every byte still crosses NVLink inside its domain, the share bound
		 * outside crosses the NIC as well, at the same time */
		double t_nic = bytes * outside / (hw->nic_bw_bytes_per_s * eff);
		double t_nvl = bytes / (bw * eff);
		c->comm_s = fmax(t_nic, t_nvl) + steps * hw->nic_latency_s;
		return;
	}
	c->comm_s = bytes / (bw * eff) + steps * lat;
}

/* Kernel launches the cost of an op counts (launch latency each). */
static double launches(enum op_kind k)
{
	switch (k) {
	case OP_KDA_CHUNK:
	case OP_SHORT_CONV: /* the convolution, then the last taps into the state */
		return 2;
	case OP_ROUTE: /* top-k, per-expert counts, their scan, the scatter into groups */
		return 4;
	case OP_DSA_PREFILL:
	case OP_DSA_DECODE:
		return 3;
	case OP_ALLREDUCE:
	case OP_ALLGATHER:
	case OP_REDUCESCATTER:
	case OP_ALLTOALL:
		return 0;
	default:
		return 1;
	}
}

/* The physical floor of an op's time: its launch gaps, then the larger of its FLOPs at the peak
 * tensor (or vector) rate of its math at the clock and its bytes at the peak bandwidth of where
 * they live (HBM, L2; collectives: NVLink and the NIC). */
static double floor_s(const struct hw *hw, const struct op *op, const struct rates *r, double gaps)
{
	if (op_is_comm(op->kind)) {
		if (op->ranks <= 1 || op->comm_bytes <= 0)
			return gaps;
		double factor, steps;
		coll_shape(op, &factor, &steps);
		double bytes = (double)op->comm_bytes * factor, outside = nic_share(hw, op);
		return gaps + fmax(bytes * outside / hw->nic_bw_bytes_per_s, bytes / hw->nvlink_bw_bytes_per_s);
	}
	double hbm, l2;
	memory_split(hw, op, &hbm, &l2);
	double mem = hbm / hw->hbm_bw_bytes_per_s + l2 / (hw->l2_bw_bytes_per_s * r->scale);
	double comp;
	switch (op->kind) {
	case OP_GEMM:
	case OP_GROUPED_GEMM:
		comp = op->flops / tensor_rate(hw, r, math_dtype(op->w_dtype, op->a_dtype));
		break;
	case OP_ELEMENTWISE:
	case OP_ATTNRES:
	case OP_ROUTE:
	case OP_COMBINE:
	case OP_SHORT_CONV:
	case OP_QUANT:
		comp = op->flops / (hw->vector_flops_per_s * r->scale);
		break;
	case OP_KDA_DECODE:
		comp = op->flops / tensor_rate(hw, r, DT_FP32);
		break;
	default: /* KDA prefill, attention: tensor cores, the indexer's part at FP8 */
		comp = (op->flops - op->flops_lowp) / tensor_rate(hw, r, op->a_dtype) +
		       op->flops_lowp / tensor_rate(hw, r, DT_FP8);
		break;
	}
	return gaps + fmax(comp, mem);
}

/* Tokens one CTA (or warp group) of a row-reduction op works on: a token's reduction (over its
 * dim, its experts or its gathered rows) runs inside one CTA or one cluster, so a step of fewer
 * tokens than the SMs' worth leaves SMs idle and takes one CTA's time: its tokens' bytes and
 * math at one SM's share of the machine (the combine: a CTA a token; AttnRes: a cluster of up
 * to 8 CTAs a token, its sums added through distributed shared memory,
 * kernels/attnres/attnres.cu; routing: a warp a token, 8 to a CTA). 0: the op's elements spread
 * over every SM whatever its tokens. */
static double tokens_per_cta(enum op_kind k)
{
	switch (k) {
	case OP_ATTNRES:
		return 1.0 / 8;
	case OP_COMBINE:
		return 1;
	case OP_ROUTE:
		return 8;
	case OP_QUANT: /* a row's amax by one CTA (below 2048 rows) or one warp */
		return 1;
	default:
		return 0;
	}
}

/* One token's bytes in and out and its FLOPs (the per-token part of op_fill's counts, without
 * what does not grow with the tokens: routing's per-expert offsets). */
static void token_work(const struct op *op, double *in_b, double *out_b, double *flops)
{
	double n = (double)op->n, k = (double)op->top_k, ab = dtype_bytes_per_element(op->a_dtype),
	       ob = dtype_bytes_per_element(op->o_dtype);
	*in_b = *out_b = *flops = 0;
	switch (op->kind) {
	case OP_ATTNRES:
		*in_b = (op->sources + op->in_tensors) * n * ab;
		*out_b = op->out_tensors * n * ob;
		*flops = n * (6.0 * op->sources + 6.0) + op->sources * 8.0;
		break;
	case OP_ROUTE:
		*in_b = n * ab;
		*out_b = 20.0 * k;
		*flops = n * (6.0 + k) + 4.0 * k;
		break;
	case OP_COMBINE:
		*in_b = k * n * ab + 8.0 * k;
		*out_b = n * ob;
		*flops = n * (2.0 * k + 4.0);
		break;
	case OP_QUANT:
		*in_b = n * ab;
		*out_b = n + (double)op_quant_scale_bytes(op);
		*flops = 4.0 * n;
		break;
	default:
		break;
	}
}

/* Ops of their own kind: bytes and math over the whole machine, the bytes a kernel reads again
 * from L2 (AttnRes' second pass over its sources, the convolution's earlier taps), a launch gap
 * per kernel; and for a row reduction never less than one CTA's share of it at one SM's share of
 * the bandwidth and math (below the SMs' worth of CTAs the step is that CTA's time). Each term
 * never falls as a size grows. */
static void row_op_cost(const struct hw *hw, const struct op *op, const struct rates *r, double launch,
			double hbm, double l2, struct op_cost *c)
{
	double ab = dtype_bytes_per_element(op->a_dtype);
	if (op->kind == OP_ATTNRES)
		l2 += op->sources * (double)op->m * (double)op->n * ab;
	else if (op->kind == OP_SHORT_CONV && op->k > 1)
		l2 += (double)(op->k - 1) * (double)op->m * (double)op->n * ab;
	double vec = hw->vector_flops_per_s * r->scale * SIMT_FMA_EFF;
	c->memory_s = memory_s(hw, r, hbm, l2);
	c->compute_s = op->flops / vec;
	double per = tokens_per_cta(op->kind), sms = (double)hw->sms;
	if (per > 0 && sms > 0 && op->m > 0) {
		double rows = fmin(per, (double)op->m), in_b, out_b, tf;
		token_work(op, &in_b, &out_b, &tf);
		double l2_sm = hw->l2_bw_bytes_per_s * r->scale / sms;
		double hbm_sm = hw->hbm_bw_bytes_per_s * hw->eff_memory.max / sms;
		double cta = rows * (in_b / (act_in_l2(hw, op, op->bytes_act_in) ? l2_sm : hbm_sm) +
				     out_b / (act_in_l2(hw, op, op->bytes_act_out) ? l2_sm : hbm_sm));
		if (op->kind == OP_ATTNRES)
			cta += rows * op->sources * (double)op->n * ab / l2_sm;
		c->memory_s = fmax(c->memory_s, cta);
		c->compute_s = fmax(c->compute_s, rows * tf / (vec / sms));
	}
	c->latency_s = launch * launches(op->kind);
}

/* KDA prefill's overlapped pair (hw.h: kda_overlap_*), seconds without launches, from the intra
 * kernel's time alone k1_s, the recurrent kernel's rec_s, its CTAs (one an SM) and its dependent
 * steps (one a chunk). The recurrent CTAs hold their SMs from the start, so the intra kernel gets
 * f = 1 - share x (share of SMs they hold) of its throughput alone and takes k1 / f. Chunks are
 * published in order: step j starts no earlier than chunk j's intra work, (j + 1) / n of it, nor
 * than step j - 1 ends; with steps of rec / n the pair ends at the later of the last chunk's intra
 * work then its step, and the first chunk's then the whole chain. Never below the longer kernel
 * alone, never above the two one after the other. (Measured on the H200, 2026-12-02l: T = 16K,
 * H = 96, serial 1.16 + 1.12 ms, overlapped 1.85-1.91 ms, the intra kernel ending at 1.81-1.87
 * ms with the recurrence 18-31 us after it.) */
static double kda_overlapped_s(const struct hw *hw, double k1_s, double rec_s, double rec_ctas, double steps)
{
	double sms = (double)hw->sms;
	double held = sms > 0 ? fmin(rec_ctas, sms) / sms : 1;
	double f = fmax(1 - hw->kda_overlap_rec_share * held, 1e-3);
	double n = fmax(steps, 1), k1s = k1_s / f;
	double t = fmax(k1s + rec_s / n, k1s / n + rec_s);
	return fmin(fmax(t, fmax(k1_s, rec_s)), k1_s + rec_s);
}

/* The physical model at the clock of r: components and time (launches included). */
static void physical(const struct hw *hw, const struct op *op, const struct rates *r, double launch,
		     struct op_cost *out)
{
	struct op_cost c = {0};
	double hbm, l2;
	bool kda_chain_bound = false;
	memory_split(hw, op, &hbm, &l2);

	switch (op->kind) {
	case OP_GEMM:
	case OP_GROUPED_GEMM: {
		enum dtype math = hw_math_dtype(hw, math_dtype(op->w_dtype, op->a_dtype));
		bool simt = !(hw->tensor_flops_per_s[math] > 0);
		double rate = tensor_rate(hw, r, math);
		c.compute_s = op->m > 0 ? gemm_compute_s(hw, op, rate, r->clock_hz, simt, &c.waves) : 0;
		c.compute_s += fp4_expansion_s(hw, op, r->clock_hz);
		c.latency_s = launch;
		if (gemm_kernel_model(hw)) {
			/* the bytes at the achieved bandwidth (the kernel's fixed cost is its own);
			 * a fixed cost and the k loop's latency beside the larger of the two */
			double store_s = 0;
			if (hw->gemm_store_bytes_per_sm_cycle > 0) {
				/* the output at the epilogue's store rate (SM cycles), to HBM even when
				 * it fits in L2 (hw.h), beside the reads */
				double out_b = (double)op->bytes_act_out;
				*(act_in_l2(hw, op, op->bytes_act_out) ? &l2 : &hbm) -= out_b;
				double store_bw = fmin(hw->gemm_store_bytes_per_sm_cycle * (double)hw->sms * r->clock_hz,
						       hw->hbm_bw_bytes_per_s * hw->eff_memory.max);
				store_s = out_b / store_bw;
			}
			c.memory_s = hbm / (hw->hbm_bw_bytes_per_s * hw->eff_memory.max) +
				     l2 / (hw->l2_bw_bytes_per_s * r->scale) + store_s;
			/* a k step holds 128 bytes of k per row (64 BF16, 128 FP8 elements) */
			double kstep = 128.0 / dtype_bytes_per_element(math_dtype(op->w_dtype, op->a_dtype));
			c.latency_s += (hw->gemm_fixed_cycles + ceil((double)op->k / kstep) * hw->gemm_kstep_cycles) / r->clock_hz;
		} else {
			c.memory_s = memory_s(hw, r, hbm, l2);
		}
		break;
	}
	case OP_ELEMENTWISE:
		c.compute_s = op->flops / (hw->vector_flops_per_s * r->scale * SIMT_FMA_EFF);
		c.memory_s = memory_s(hw, r, hbm, l2);
		c.latency_s = launch;
		break;
	case OP_ATTNRES:
	case OP_ROUTE:
	case OP_COMBINE:
	case OP_SHORT_CONV:
	case OP_QUANT:
		row_op_cost(hw, op, r, launch, hbm, l2, &c);
		break;
	case OP_KDA_CHUNK: {
		/* Two kernels: token-parallel intra-chunk work, then the head-parallel recurrence:
		 * t/chunk dependent steps per (sequence, head). When sequences x heads leave SMs idle,
		 * a head's value rows split over up to kda_max_v_split CTAs; a step then costs the
		 * larger of its latency floor and the CTA's rows. Cycles run at the regime's clock. */
		double tokens = (double)op->b * (double)op->t * (double)op->h;
		double rec_flops = tokens * 8.0 * (double)op->dk * (double)op->dv;
		double rate = tensor_rate(hw, r, op->a_dtype);
		double pairs = (double)op->b * (double)op->h, sms = (double)hw->sms;
		double split = 1;
		if (hw->kda_step_row_cycles > 0)
			while (split * 2 <= (double)hw->kda_max_v_split && pairs * split * 2 <= sms &&
			       split * 2 <= (double)op->dv)
				split *= 2;
		c.waves = ceil(pairs * split / sms);
		double step_cycles = fmax(hw->kda_chunk_step_cycles, (double)op->dv / split * hw->kda_step_row_cycles);
		double chain_s = (double)op->serial_steps * step_cycles / r->clock_hz * c.waves;
		if (hw_kda_pair(hw, op->b, op->h, op->t)) /* the pair kernel: two chunks a step */
			chain_s *= hw->kda_pair_chain_ratio;
		double k1 = fmax(hw_curve_time_s(&hw->eff_gemm, op->flops - rec_flops, rate),
				 memory_s(hw, r, (double)(op->bytes_act_in + op->bytes_act_out), 0));
		if (hw->kda_intra_cycles_per_token_head > 0)
			k1 = fmax(k1, tokens * hw->kda_intra_cycles_per_token_head / (sms * r->clock_hz));
		double k2 = fmax(hw_curve_time_s(&hw->eff_gemm, rec_flops, rate),
				 memory_s(hw, r, (double)(op->bytes_state_read + op->bytes_state_write), 0));
		double rec_s = fmax(chain_s, k2), pair_s = k1 + rec_s;
		if (hw_kda_overlaps(hw, op->b, op->h, op->t))
			pair_s = kda_overlapped_s(hw, k1, rec_s, pairs * split, (double)op->serial_steps);
		pair_s += hw->kda_fixed_cycles / r->clock_hz;
		c.compute_s = hw_curve_time_s(&hw->eff_gemm, op->flops, rate);
		c.memory_s = memory_s(hw, r, hbm + l2, 0);
		c.latency_s = 2 * launch + chain_s + hw->kda_fixed_cycles / r->clock_hz;
		c.time_s = pair_s + 2 * launch;
		kda_chain_bound = chain_s > k2 && chain_s + 2 * launch > k1;
		break;
	}
	case OP_KDA_DECODE:
		c.compute_s = op->flops / (tensor_rate(hw, r, DT_FP32) * SIMT_FMA_EFF);
		if (op->t > 1 && hw->kda_verify_lin_cycles + hw->kda_verify_quad_cycles > 0) {
			/* verify + replay: (request, head) items of t x (lin + quad t) cycles each over
			 * the SMs, never less than one item's chain */
			double t = (double)op->t, items = (double)op->b * (double)op->h;
			double item = t * (hw->kda_verify_lin_cycles + hw->kda_verify_quad_cycles * t) / r->clock_hz;
			c.compute_s = fmax(c.compute_s, item * fmax(1.0, items / (double)hw->sms));
		}
		c.memory_s = memory_s(hw, r, hbm, l2);
		c.latency_s = launch;
		break;
	case OP_MLA_PREFILL:
	case OP_MLA_DECODE:
	case OP_DSA_PREFILL:
	case OP_DSA_DECODE: {
		c.compute_s = hw_curve_time_s(&hw->eff_gemm, op->flops - op->flops_lowp, tensor_rate(hw, r, op->a_dtype)) +
			      hw_curve_time_s(&hw->eff_gemm, op->flops_lowp, tensor_rate(hw, r, DT_FP8));
		c.memory_s = memory_s(hw, r, hbm, l2);
		c.latency_s = launch * (op->kind == OP_DSA_DECODE || op->kind == OP_DSA_PREFILL ? 3 : 1);
		break;
	}
	case OP_ALLREDUCE:
	case OP_ALLGATHER:
	case OP_REDUCESCATTER:
	case OP_ALLTOALL:
		comm_cost(hw, op, &c);
		break;
	case OP_KIND_COUNT:
		break;
	}

	if (op->kind != OP_KDA_CHUNK)
		c.time_s = fmax(c.compute_s, c.memory_s) + c.latency_s + c.comm_s;
	if (c.comm_s > 0)
		c.bound = BOUND_COMM;
	else if (kda_chain_bound)
		c.bound = BOUND_LATENCY;
	else if (c.latency_s >= c.compute_s && c.latency_s >= c.memory_s)
		c.bound = BOUND_LATENCY;
	else
		c.bound = c.compute_s >= c.memory_s ? BOUND_COMPUTE : BOUND_MEMORY;
	c.clock_hz = r->clock_hz;
	*out = c;
}

bool sim_attn_prefill_regime(const struct op *op)
{
	switch (op->kind) {
	case OP_MLA_PREFILL:
	case OP_DSA_PREFILL:
		return true;
	case OP_MLA_DECODE:
	case OP_DSA_DECODE:
		return op->t >= SIM_ATTN_PREFILL_T;
	default:
		return false;
	}
}

enum dtype sim_gemm_table_dtype(const struct hw *hw, const struct op *op)
{
	enum dtype math = hw_math_dtype(hw, math_dtype(op->w_dtype, op->a_dtype));
	if (op->kind == OP_GROUPED_GEMM && op->w_dtype == DT_MXFP4 && (math == DT_BF16 || math == DT_FP16))
		return DT_MXFP4;
	return math;
}

/* The calibrated class table of an op (NULL: none), for its math, state or element dtype. */
static const struct hw_table *op_table(const struct hw *hw, const struct op *op)
{
	switch (op->kind) {
	case OP_GEMM:
		return hw_table_find(hw, HW_CLASS_GEMM, hw_math_dtype(hw, math_dtype(op->w_dtype, op->a_dtype)));
	case OP_GROUPED_GEMM: {
		enum dtype t = sim_gemm_table_dtype(hw, op);
		if (t == DT_MXFP4) { /* its own table, else the 16-bit one (sim_gemm_table_dtype) */
			const struct hw_table *tb = hw_table_find(hw, HW_CLASS_GROUPED_GEMM, DT_MXFP4);
			if (tb && !tb->any_dtype)
				return tb;
		}
		return hw_table_find(hw, HW_CLASS_GROUPED_GEMM,
				     hw_math_dtype(hw, math_dtype(op->w_dtype, op->a_dtype)));
	}
	case OP_ELEMENTWISE:
		return hw_table_find(hw, HW_CLASS_MEMORY, op->a_dtype);
	case OP_ATTNRES:
	case OP_ROUTE:
	case OP_COMBINE:
	case OP_SHORT_CONV: {
		const struct hw_table *tb = hw_table_find(hw, sim_op_class(op->kind), op->a_dtype);
		return tb ? tb : hw_table_find(hw, HW_CLASS_MEMORY, op->a_dtype);
	}
	case OP_QUANT: { /* keyed by what it writes (fp8, mxfp8) */
		const struct hw_table *tb = hw_table_find(hw, HW_CLASS_QUANT, op->o_dtype);
		return tb ? tb : hw_table_find(hw, HW_CLASS_MEMORY, op->a_dtype);
	}
	case OP_KDA_CHUNK:
		return hw_table_find(hw, HW_CLASS_KDA_CHUNK, op->s_dtype);
	case OP_KDA_DECODE:
		/* several tokens per request: speculative verify + replay, its own kernel regime */
		return hw_table_find(hw, op->t > 1 ? HW_CLASS_KDA_VERIFY : HW_CLASS_KDA_DECODE, op->s_dtype);
	case OP_MLA_PREFILL:
	case OP_DSA_PREFILL:
	case OP_MLA_DECODE:
	case OP_DSA_DECODE: {
		const struct hw_table *tb =
			sim_attn_prefill_regime(op) ? hw_table_find(hw, HW_CLASS_ATTENTION_PREFILL, op->a_dtype) : NULL;
		return tb ? tb : hw_table_find(hw, HW_CLASS_ATTENTION, op->a_dtype);
	}
	case OP_ALLREDUCE:
	case OP_ALLGATHER:
	case OP_REDUCESCATTER:
	case OP_ALLTOALL:
		return hw_comm_table_find(hw, sim_op_coll(op->kind), op->ranks);
	case OP_KIND_COUNT:
		break;
	}
	return NULL;
}

/* A measured GEMM shape at m between two measured m: interpolated with the physical model as the
 * abscissa (log time linear in log modeled time), so the tile and wave steps of the model shape
 * the curve between the points and it never falls (the points never do). */
static double gemm_shape_s(const struct hw *hw, const struct hw_gemm_points *g, const struct op *op,
			   double model_s)
{
	int hi = 1;
	while (hi < g->points - 1 && g->m[hi] < (double)op->m)
		hi++;
	int lo = hi - 1;
	struct rates boost = {.clock_hz = hw->sm_clock_hz, .scale = 1};
	struct op a = *op, b = *op;
	a.m = (int64_t)g->m[lo];
	b.m = (int64_t)g->m[hi];
	op_fill(&a);
	op_fill(&b);
	struct op_cost ca, cb;
	physical(hw, &a, &boost, 0, &ca);
	physical(hw, &b, &boost, 0, &cb);
	double ta = g->time_s[lo], tb = g->time_s[hi];
	/* where the model barely moves between the points (memory-bound: flat), its position is
	 * ill-conditioned: blend towards log m (both never fall as m grows) */
	double u_m = log((double)op->m / g->m[lo]) / log(g->m[hi] / g->m[lo]);
	double span = log(fmax(cb.time_s / ca.time_s, 1.0)), w = fmin(1, span / log(1.1));
	double u_model = span > 0 ? log(fmax(model_s / ca.time_s, 1.0)) / span : 0;
	double u = fmin(1, fmax(0, w * fmin(1, u_model) + (1 - w) * u_m));
	return ta * exp(u * log(tb / ta));
}

/* A calibrated preset's device time (launch gaps excluded) of an op the physical model gives
 * model_s at the boost clock: the class table; for a dense GEMM of a measured shape inside its
 * measured m the shape's own points; then for every dense GEMM the bounds of the measured ones. */
/* A class's smallest measured kernel is its fixed cost only when it is small: a table whose
 * smallest point is a large kernel (a fit that saw one 2 GiB copy) says nothing about small ones. */
#define KERNEL_FIXED_MAX_S 10e-6

static double calibrated_s(const struct hw *hw, const struct op *op, double model_s, bool *calibrated,
			   bool *extrapolated, double *kernel_floor_s)
{
	*kernel_floor_s = 0;
	*calibrated = false;
	*extrapolated = false;
	double t = model_s;
	const struct hw_table *tb = op_table(hw, op);
	if (tb) {
		bool inside;
		double bytes = op_is_comm(op->kind) ? (double)op->comm_bytes : (double)op_bytes(op);
		double eff = hw_table_eff_at(tb, op->flops, bytes, model_s, &inside);
		if (eff > 0)
			t = model_s / eff;
		/* below the smallest kernel of its class that was measured: a kernel's fixed cost
		 * (launching its CTAs, the first bytes' latency, draining) does not shrink with the op,
		 * so the time holds at that kernel's measured time (an elementwise op on a few KB took
		 * 1.1-4.8 us on the H200, docs/perf/profile-h200-2026-12-01.md, where bytes over
		 * bandwidth give nanoseconds) */
		if (op->kind != OP_GEMM && op->kind != OP_GROUPED_GEMM && !op_is_comm(op->kind) && /* own models */
		    tb->key == HW_KEY_MODEL_S && tb->n > 0 && model_s < tb->x[0] && tb->eff[0] > 0 &&
		    tb->x[0] / tb->eff[0] <= KERNEL_FIXED_MAX_S)
			*kernel_floor_s = tb->x[0] / tb->eff[0];
		*calibrated = true;
		*extrapolated = !inside;
	}
	if (op->kind == OP_GEMM && hw->n_gemm_points > 0) {
		enum dtype math = hw_math_dtype(hw, math_dtype(op->w_dtype, op->a_dtype));
		const struct hw_gemm_points *g = hw_gemm_points_find(hw, math, op->n, op->k);
		double m = (double)op->m;
		if (g && g->points >= 2 && m >= g->m[0] && m <= g->m[g->points - 1])
			t = gemm_shape_s(hw, g, op, model_s);
		double lo, hi;
		hw_gemm_bounds(hw, math, op->m, op->n, op->k, &lo, &hi);
		if (lo > 0 || isfinite(hi)) {
			t = fmax(lo, fmin(t, hi));
			*calibrated = true;
		}
		/* inside the measured GEMMs only when they bracket it from both sides */
		*extrapolated = !(lo > 0 && isfinite(hi));
	}
	return t;
}

/* Where the tokens per request move an op into another class (another table), the op is never
 * faster than at the last count of the class below: that count, or 0. A KDA verify of t > 1
 * tokens against the decode of one; an MLA / DSA decode in the prefill regime against 63 tokens. */
static int64_t class_boundary_below(const struct op *op)
{
	if (op->kind == OP_KDA_DECODE && op->t > 1)
		return 1;
	if ((op->kind == OP_MLA_DECODE || op->kind == OP_DSA_DECODE) && op->t >= SIM_ATTN_PREFILL_T)
		return SIM_ATTN_PREFILL_T - 1;
	return 0;
}

double sim_clock_scaled_s(const struct hw *hw, double boost_s, double model_boost_s, double model_s, double scale)
{
	if (!(model_boost_s > 0) || !(scale > 0))
		return boost_s;
	if (hw->clock_scaled_excess && boost_s > model_boost_s)
		return model_s + (boost_s - model_boost_s) / scale;
	return boost_s * (model_s / model_boost_s);
}

/* sim_boost_time_s without the SM-clocked share's law. */
static double boost_time_roofline_s(const struct hw *hw, enum hw_power_class klass, double measured_s,
				    double model_boost_s, double model_s, double scale)
{
	const double b = sim_clock_bound(hw, klass);
	/* the law, t(x) = max(x, b S(x)) with S = sim_clock_scaled_s, rises with the boost time x:
	 * x = measured where b S(measured) <= measured, else the x < measured of b S(x) = measured */
	if (b * sim_clock_scaled_s(hw, measured_s, model_boost_s, model_s, scale) <= measured_s)
		return measured_s;
	const double m = measured_s / b;
	if (hw->clock_scaled_excess) {
		double x = model_boost_s + (m - model_s) * scale; /* S's excess branch (x > model_boost_s) */
		if (x > model_boost_s)
			return x;
	}
	return m * (model_boost_s / model_s);
}

double sim_boost_time_s(const struct hw *hw, enum hw_power_class klass, double measured_s, double model_boost_s,
			double model_s, double scale)
{
	if (!(scale < 1) || !(model_boost_s > 0) || !(measured_s > 0))
		return measured_s;
	double x = boost_time_roofline_s(hw, klass, measured_s, model_boost_s, model_s, scale);
	/* t(x) = max(roofline(x), x (1 - s + s / scale)), both rising in x: the smaller inverse */
	const double sh = sim_clock_sm_share(hw, klass);
	return sh > 0 ? fmin(x, measured_s / (1 - sh + sh / scale)) : x;
}

static void op_cost(const struct hw *hw, const struct op *op, const struct cost_opts *opts,
                    struct op_cost *out)
{
	double launch = opts && opts->cuda_graph ? hw->graph_launch_latency_s : hw->launch_latency_s;
	double gaps = op_is_comm(op->kind) ? 0 : launch * launches(op->kind);
	struct rates boost = {.clock_hz = hw->sm_clock_hz, .scale = 1};
	struct rates reg = boost;
	if (opts) {
		reg.clock_hz = hw_clock_sel_hz(hw, &opts->clock);
		reg.scale = reg.clock_hz / hw->sm_clock_hz;
	}
	struct op_cost c, cb;
	physical(hw, op, &reg, launch, &c);
	if (reg.scale != 1)
		physical(hw, op, &boost, launch, &cb);
	else
		cb = c;

	double dev_b = cb.time_s - gaps, dev = c.time_s - gaps;
	/* below boost: the share of the boost time bound by the SM clock (1: the ratio whole) */
	/* (a GEMM without a tensor path for its math runs its FMAs on the SIMT units: all SM work, the
	 * roofline measured on tensor-core GEMMs not its) */
	const bool simt_gemm = (op->kind == OP_GEMM || op->kind == OP_GROUPED_GEMM) &&
			       !(hw->tensor_flops_per_s[math_dtype(op->w_dtype, op->a_dtype)] > 0);
	const double bound = reg.scale < 1 && !(opts && opts->full_clock_scaling) && !op_is_comm(op->kind) && !simt_gemm
				     ? sim_clock_bound(hw, sim_power_class(hw, op))
				     : 1;
	/* below boost: the share of the boost time that runs on the SM clock whatever the physical
	 * model says (clock_sm_share): at least boost time x (1 - share + share / scale) */
	const double sm_share = reg.scale < 1 && !op_is_comm(op->kind) ? sim_clock_sm_share(hw, sim_power_class(hw, op)) : 0;
	const double sm_stretch = 1 - sm_share + sm_share / reg.scale;
	if ((hw->n_tables > 0 || hw->n_gemm_points > 0) && dev_b > 0) {
		/* calibrated from kernel durations at the boost clock; another clock scales it as the
		 * physical model does (a roofline in the clock: clock_bound); launch gaps stay */
		double kfloor;
		double tb = calibrated_s(hw, op, dev_b, &c.calibrated, &c.extrapolated, &kfloor);
		double t = sim_clock_scaled_s(hw, tb, dev_b, dev, reg.scale);
		if (bound < 1)
			t = fmax(tb, bound * t);
		t = fmax(t, tb * sm_stretch);
		t = fmax(t, kfloor); /* as measured at boost: a lower bound at a lower clock too */
		double f = t / dev;
		c.time_s = t + gaps;
		c.latency_s = (c.latency_s - gaps) * f + gaps;
		c.compute_s *= f;
		c.memory_s *= f;
		c.comm_s *= f;
	} else if ((bound < 1 || sm_share > 0) && dev_b > 0 && dev > 0) {
		double t = fmax(bound < 1 ? fmax(dev_b, bound * dev) : dev, dev_b * sm_stretch), f = t / dev;
		c.time_s = t + gaps;
		c.latency_s = (c.latency_s - gaps) * f + gaps;
		c.compute_s *= f;
		c.memory_s *= f;
		c.comm_s *= f;
	}
	int64_t below = class_boundary_below(op);
	if (below > 0) {
		struct op last = *op;
		struct op_cost cl;
		last.t = below;
		op_fill(&last);
		sim_op_cost(hw, &last, opts, &cl);
		if (cl.time_s > c.time_s) {
			double f = (cl.time_s - gaps) / (c.time_s - gaps);
			c.compute_s *= f;
			c.memory_s *= f;
			c.time_s = cl.time_s;
		}
	}
	c.floor_s = floor_s(hw, op, &reg, gaps);
	if (c.time_s < c.floor_s)
		c.time_s = c.floor_s;
	c.cycles = c.time_s * reg.clock_hz;
	*out = c;
}

/* The rank counts a collective kind was calibrated at (a model or a table of its own), ascending. */
static int measured_ranks(const struct hw *hw, enum hw_coll k, int64_t *r, int cap)
{
	int n = 0;
	for (int i = 0; i < hw->n_coll + hw->n_tables; i++) {
		int64_t x;
		if (i < hw->n_coll) {
			if (hw->coll[i].coll != k)
				continue;
			x = hw->coll[i].ranks;
		} else {
			const struct hw_table *tb = &hw->tables[i - hw->n_coll];
			if (tb->cls != HW_CLASS_COMM || tb->any_coll || tb->coll != k)
				continue;
			x = tb->ranks;
		}
		int j = 0;
		while (j < n && r[j] < x)
			j++;
		if (x < 2 || (j < n && r[j] == x) || n == cap)
			continue;
		memmove(r + j + 1, r + j, (size_t)(n - j) * sizeof *r);
		r[j] = x;
		n++;
	}
	return n;
}

void sim_op_cost(const struct hw *hw, const struct op *op, const struct cost_opts *opts,
		 struct op_cost *out)
{
	op_cost(hw, op, opts, out);
	if (!op_is_comm(op->kind) || op->ranks < 2 || op->comm_bytes <= 0)
		return;
	/* A rank count not calibrated takes the model of the largest one below it, which knows
	 * nothing of the next one up: the 2-GPU model stretched to 3 GPUs can take longer than 4
	 * GPUs measured (public H100 tables: all-gather of 8 KiB, 13.8 us at 3 ranks, 8.5 at 4).
	 * Measured rank counts bound it: never faster than the envelope of those at or below it,
	 * never slower than the one above it (the envelope: more GPUs never faster than fewer
	 * were measured, for the same bytes per rank). */
	int64_t r[HW_COLL_MODELS_MAX];
	int n = measured_ranks(hw, sim_op_coll(op->kind), r, HW_COLL_MODELS_MAX);
	if (n < 2)
		return;
	double lo = 0, hi = INFINITY, env = 0;
	for (int i = 0; i < n; i++) {
		struct op at = *op;
		struct op_cost ca;
		at.ranks = r[i];
		op_cost(hw, &at, opts, &ca);
		env = fmax(env, ca.time_s);
		if (r[i] <= op->ranks)
			lo = env;
		else
			hi = fmin(hi, env);
	}
	double t = fmax(lo, fmin(out->time_s, hi));
	if (t != out->time_s && out->time_s > 0) {
		double f = t / out->time_s;
		out->comm_s *= f;
		out->latency_s *= f;
		out->time_s = t;
		out->cycles = t * out->clock_hz;
	}
}
