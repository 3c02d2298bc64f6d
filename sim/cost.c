#include "sim/cost.h"

#include <math.h>

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

/* Tile and wave quantization: the GEMM runs as ceil(m/tm) x ceil(n/tn) output tiles over the SMs.
 * Few tiles are split along k by the library to fill the machine, so partial waves only cost
 * their fraction; many tiles run in whole waves. Returns seconds at the achieved rate. */
static double gemm_compute_s(const struct hw *hw, const struct op *op, double rate, double *waves)
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
		/* Each expert's rows are padded to whole tiles on their own. */
		double rows = (double)op->m / op->groups_touched;
		tm = (double)hw->gemm_tile_m;
		if (rows < tm) {
			tm = 16;
			while (tm < rows)
				tm *= 2;
		}
		tiles = op->groups_touched * ceil_div(rows, tm) * ceil_div((double)op->n, tn);
	}
	double sms = (double)hw->sms;
	double w = tiles < sms ? tiles / sms : hw_gemm_waves(hw, tiles);
	*waves = w;
	double padded_flops = w * sms * 2.0 * tm * tn * (double)op->k;
	double eff = hw_curve_eval(&hw->eff_gemm, op->flops);
	return padded_flops / (rate * eff);
}

/* Activations that fit in half of L2 were just produced by the previous op and stay there. */
static void memory_split(const struct hw *hw, const struct op *op, double *hbm, double *l2)
{
	double half_l2 = op->cold ? -1.0 : 0.5 * (double)hw->l2_bytes;
	*hbm = (double)(op->bytes_weight + op->bytes_kv_read + op->bytes_kv_write + op->bytes_state_read +
			op->bytes_state_write);
	*l2 = 0;
	if ((double)op->bytes_act_in <= half_l2)
		*l2 += (double)op->bytes_act_in;
	else
		*hbm += (double)op->bytes_act_in;
	if ((double)op->bytes_act_out <= half_l2)
		*l2 += (double)op->bytes_act_out;
	else
		*hbm += (double)op->bytes_act_out;
}

static double memory_s(const struct hw *hw, double hbm, double l2)
{
	double eff = hw_curve_eval(&hw->eff_memory, hbm + l2);
	return hbm / (hw->hbm_bw_bytes_per_s * eff) + l2 / hw->l2_bw_bytes_per_s;
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

/* Alpha-beta: steps x step latency + bytes x factor / (link rate x efficiency(bytes)), with the
 * step latency and efficiency curve of the collective's kind and rank count where the preset has
 * them (hw_coll_model), else the interconnect's. */
static void comm_cost(const struct hw *hw, const struct op *op, struct op_cost *c)
{
	double n = (double)op->ranks;
	if (n <= 1 || op->comm_bytes <= 0)
		return;
	double factor, steps;
	switch (op->kind) {
	case OP_ALLREDUCE:
		factor = 2.0 * (n - 1) / n;
		steps = 2.0 * log2(n);
		break;
	case OP_ALLTOALL:
		factor = (n - 1) / n;
		steps = 1.0 + log2(n) / 2;
		break;
	default: /* all-gather, reduce-scatter */
		factor = (n - 1) / n;
		steps = log2(n);
		break;
	}
	const struct hw_coll_model *cm = hw_coll_model(hw, sim_op_coll(op->kind), op->ranks);
	const struct hw_curve *curve = cm ? &cm->eff : &hw->eff_comm;
	double eff = hw_curve_eval(curve, (double)op->comm_bytes);
	double bw = hw->nvlink_bw_bytes_per_s, lat = cm ? cm->step_latency_s : hw->nvlink_latency_s;
	double bytes = (double)op->comm_bytes * factor;
	if (op->ranks > hw->domain_gpus) {
		/* Beyond one NVLink domain the share of traffic that leaves it crosses the NIC. */
		double outside = (n - (double)hw->domain_gpus) / n;
		double t_nic = bytes * outside / (hw->nic_bw_bytes_per_s * eff);
		double t_nvl = bytes * (1 - outside) / (bw * eff);
		c->comm_s = (t_nic > t_nvl ? t_nic : t_nvl) + steps * hw->nic_latency_s;
		return;
	}
	c->comm_s = bytes / (bw * eff) + steps * lat;
}

/* Kernel launches the cost of an op counts (launch latency each). */
static double launches(enum op_kind k)
{
	switch (k) {
	case OP_KDA_CHUNK:
		return 2;
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

/* A calibrated preset's modeled-over-measured efficiency of this op's device time (model_s:
 * hw_gemm_shape_eff, hw_table_eff); 1 otherwise. */
static double calibrated_eff(const struct hw *hw, const struct op *op, double model_s)
{
	if (hw->n_tables == 0 && hw->n_gemm_shapes == 0)
		return 1;
	enum dtype math = hw_math_dtype(hw, math_dtype(op->w_dtype, op->a_dtype));
	double bytes = (double)op_bytes(op);
	bool found;
	double eff;
	switch (op->kind) {
	case OP_GEMM:
		eff = hw_gemm_shape_eff(hw, math, op->m, op->n, op->k, &found);
		return found ? eff : hw_table_eff(hw, HW_CLASS_GEMM, math, op->flops, bytes, model_s);
	case OP_GROUPED_GEMM:
		return hw_table_eff(hw, HW_CLASS_GROUPED_GEMM, math, op->flops, bytes, model_s);
	case OP_ELEMENTWISE:
		return hw_table_eff(hw, HW_CLASS_MEMORY, op->a_dtype, op->flops, bytes, model_s);
	case OP_KDA_CHUNK:
		return hw_table_eff(hw, HW_CLASS_KDA_CHUNK, op->s_dtype, op->flops, bytes, model_s);
	case OP_KDA_DECODE:
		/* several tokens per request: speculative verify + replay, its own kernel regime */
		return hw_table_eff(hw, op->t > 1 ? HW_CLASS_KDA_VERIFY : HW_CLASS_KDA_DECODE, op->s_dtype,
				    op->flops, bytes, model_s);
	case OP_MLA_PREFILL:
	case OP_MLA_DECODE:
	case OP_DSA_PREFILL:
	case OP_DSA_DECODE:
		return hw_table_eff(hw, HW_CLASS_ATTENTION, op->a_dtype, op->flops, bytes, model_s);
	case OP_ALLREDUCE:
	case OP_ALLGATHER:
	case OP_REDUCESCATTER:
	case OP_ALLTOALL:
		return hw_comm_table_eff(hw, sim_op_coll(op->kind), op->ranks, (double)op->comm_bytes, model_s);
	case OP_KIND_COUNT:
		break;
	}
	return 1;
}

void sim_op_cost(const struct hw *hw, const struct op *op, const struct cost_opts *opts,
		 struct op_cost *out)
{
	struct op_cost c = {0};
	double launch = opts && opts->cuda_graph ? hw->graph_launch_latency_s : hw->launch_latency_s;
	double hbm, l2;
	bool kda_chain_bound = false;
	memory_split(hw, op, &hbm, &l2);

	switch (op->kind) {
	case OP_GEMM:
	case OP_GROUPED_GEMM: {
		double rate = hw_tensor_rate(hw, math_dtype(op->w_dtype, op->a_dtype));
		c.compute_s = op->m > 0 ? gemm_compute_s(hw, op, rate, &c.waves) : 0;
		c.memory_s = memory_s(hw, hbm, l2);
		c.latency_s = launch;
		break;
	}
	case OP_ELEMENTWISE:
		c.compute_s = op->flops / (hw->vector_flops_per_s * 0.5);
		c.memory_s = memory_s(hw, hbm, l2);
		c.latency_s = launch;
		break;
	case OP_KDA_CHUNK: {
		/* Two kernels: token-parallel intra-chunk work, then the head-parallel recurrence:
		 * t/chunk dependent steps per (sequence, head). When sequences x heads leave SMs idle,
		 * a head's value rows split over up to kda_max_v_split CTAs; a step then costs the
		 * larger of its latency floor and the CTA's rows. */
		double tokens = (double)op->b * (double)op->t * (double)op->h;
		double rec_flops = tokens * 8.0 * (double)op->dk * (double)op->dv;
		double rate = hw_tensor_rate(hw, op->a_dtype);
		double eff = hw_curve_eval(&hw->eff_gemm, op->flops);
		double pairs = (double)op->b * (double)op->h, sms = (double)hw->sms;
		double split = 1;
		if (hw->kda_step_row_cycles > 0)
			while (split * 2 <= (double)hw->kda_max_v_split && pairs * split * 2 <= sms &&
			       split * 2 <= (double)op->dv)
				split *= 2;
		c.waves = ceil(pairs * split / sms);
		double step_cycles = fmax(hw->kda_chunk_step_cycles, (double)op->dv / split * hw->kda_step_row_cycles);
		double chain_s = (double)op->serial_steps * step_cycles / hw->sm_clock_hz * c.waves;
		double k1 = fmax((op->flops - rec_flops) / (rate * eff),
				 memory_s(hw, (double)(op->bytes_act_in + op->bytes_act_out), 0));
		if (hw->kda_intra_cycles_per_token_head > 0)
			k1 = fmax(k1, tokens * hw->kda_intra_cycles_per_token_head / (sms * hw->sm_clock_hz));
		double k2 = fmax(rec_flops / (rate * eff),
				 memory_s(hw, (double)(op->bytes_state_read + op->bytes_state_write), 0));
		c.compute_s = op->flops / (rate * eff);
		c.memory_s = memory_s(hw, hbm + l2, 0);
		c.latency_s = 2 * launch + chain_s;
		c.time_s = k1 + fmax(chain_s, k2) + 2 * launch;
		kda_chain_bound = chain_s > k2 && chain_s + 2 * launch > k1;
		break;
	}
	case OP_KDA_DECODE:
		c.compute_s = op->flops / (hw_tensor_rate(hw, DT_FP32) * 0.5);
		c.memory_s = memory_s(hw, hbm, l2);
		c.latency_s = launch;
		break;
	case OP_MLA_PREFILL:
	case OP_MLA_DECODE:
	case OP_DSA_PREFILL:
	case OP_DSA_DECODE: {
		double rate = hw_tensor_rate(hw, op->a_dtype);
		double eff = hw_curve_eval(&hw->eff_gemm, op->flops);
		double lowp = op->flops_lowp / (hw_tensor_rate(hw, DT_FP8) * eff);
		c.compute_s = (op->flops - op->flops_lowp) / (rate * eff) + lowp;
		c.memory_s = memory_s(hw, hbm, l2);
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
	double gaps = launch * launches(op->kind);
	double eff = calibrated_eff(hw, op, c.time_s - gaps);
	if (eff != 1 && eff > 0) {
		/* calibrated from kernel durations: the device time scales, launch gaps stay */
		c.time_s = (c.time_s - gaps) / eff + gaps;
		c.latency_s = (c.latency_s - gaps) / eff + gaps;
		c.compute_s /= eff;
		c.memory_s /= eff;
		c.comm_s /= eff;
	}
	c.cycles = c.time_s * hw->sm_clock_hz;
	*out = c;
}
