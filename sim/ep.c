#include "sim/ep.h"

#include <math.h>
#include <string.h>

/* NCCL runs one CTA (one SM) per channel. Its all-to-all (grouped send/recv) was captured on two
 * H200s (NCCL 2.28.9, NVLink; bench/results/x2-overlap-kcp-h200x2-2026-12-01/x2-dbs.tar.xz, grid of
 * ncclDevKernel_SendRecv): 20 CTAs at a 0.47 MB send buffer per rank, 30 at 1.9 MB, 32 at 30 and
 * 121 MB; between the points log-linear, outside them the nearest. Other collectives: 16
 * channels (a library default for a step's message sizes on an NVLink node, not measured). */
enum { NCCL_SMS = 16 };

static const struct {
	double bytes, ctas;
} nccl_alltoall_ctas[] = {{473088, 20}, {1892352, 30}, {30277632, 32}};

static double nccl_sms(const struct op *op)
{
	if (op->kind != OP_ALLTOALL)
		return NCCL_SMS;
	const int n = (int)(sizeof nccl_alltoall_ctas / sizeof nccl_alltoall_ctas[0]);
	double b = (double)op->comm_bytes;
	if (!(b > nccl_alltoall_ctas[0].bytes))
		return nccl_alltoall_ctas[0].ctas;
	for (int i = 1; i < n; i++)
		if (b <= nccl_alltoall_ctas[i].bytes) {
			double u = log(b / nccl_alltoall_ctas[i - 1].bytes) /
				   log(nccl_alltoall_ctas[i].bytes / nccl_alltoall_ctas[i - 1].bytes);
			return nccl_alltoall_ctas[i - 1].ctas + u * (nccl_alltoall_ctas[i].ctas - nccl_alltoall_ctas[i - 1].ctas);
		}
	return nccl_alltoall_ctas[n - 1].ctas;
}

static const char *const mode_names[EP_MODE_COUNT] = {"auto", "normal", "low_latency", "alltoall"};

const char *sim_ep_mode_name(enum op_ep_mode m)
{
	return (unsigned)m < EP_MODE_COUNT ? mode_names[m] : "?";
}

int sim_ep_mode_parse(const char *s, enum op_ep_mode *out)
{
	for (int i = 0; i < EP_MODE_COUNT; i++)
		if (strcmp(s, mode_names[i]) == 0) {
			*out = (enum op_ep_mode)i;
			return 0;
		}
	return -1;
}

/* P(a token with top_k distinct experts of `experts` has at least one among `held` of them):
 * 1 - C(experts - held, top_k) / C(experts, top_k), as a product. */
static double p_reach(double experts, double top_k, double held)
{
	if (held >= experts)
		return 1;
	double miss = 1;
	for (int i = 0; i < (int)top_k && miss > 0; i++) {
		double f = (experts - held - i) / (experts - i);
		miss *= f > 0 ? f : 0;
	}
	return 1 - miss;
}

void sim_ep_traffic(const struct hw *hw, const struct op *op, struct sim_ep_traffic *out)
{
	const struct op_ep *x = &op->ep;
	memset(out, 0, sizeof *out);
	double R = (double)op->ranks, E = (double)x->experts, k = (double)x->top_k;
	if (R <= 1 || E <= 0 || k <= 0)
		return;
	double G = fmin(R, (double)(hw->domain_gpus > 0 ? hw->domain_gpus : 1)); /* GPUs per node */
	double N = ceil(R / G);                                               /* nodes */
	/* the busier side of a GPU: what it sends, or what the busiest rank receives */
	double ratio = x->rows_ratio >= 1 ? x->rows_ratio : 1;
	double T = fmax(x->tokens, x->recv_tokens * ratio), row = (double)x->row_bytes;
	ratio = 1;
	double nodes = N * p_reach(E, k, E / N);
	double ranks = R * p_reach(E, k, E / R);
	if (x->node_limit > 0 && nodes > (double)x->node_limit) {
		/* node-limited routing: the top_k experts among node_limit nodes, k / node_limit each,
		 * over the node's G GPUs */
		nodes = (double)x->node_limit;
		ranks = fmin(ranks, nodes * G * p_reach(E / N, fmin(k / nodes, E / N), E / R));
	}
	out->nodes = nodes;
	out->ranks = ranks;
	double remote = N > 1 ? nodes * (N - 1) / N : 0; /* other nodes reached */
	switch (x->mode) {
	case EP_MODE_NORMAL:
		/* once per remote node over the NIC, to the GPU of the same local index; in every node
		 * reached (its own too) that GPU forwards the token over NVLink to the other GPUs there
		 * that hold its experts: ranks x (G - 1) / G copies per token */
		out->nic_bytes = T * remote * row * ratio;
		out->nvlink_bytes = T * ranks * (G - 1) / G * row * ratio;
		break;
	case EP_MODE_LOW_LATENCY:
		/* one row per selected expert: those on other nodes over the NIC, the local node's
		 * over NVLink (not to itself) */
		out->nic_bytes = T * k * (N - 1) / N * row * ratio;
		out->nvlink_bytes = T * k / N * (G - 1) / G * row * ratio;
		break;
	default:
		break;
	}
}

void sim_op_cost_ep(const struct hw *hw, const struct op *op, const struct cost_opts *opts, struct op_cost *out)
{
	if (op->ep.mode != EP_MODE_NORMAL && op->ep.mode != EP_MODE_LOW_LATENCY) {
		sim_op_cost(hw, op, opts, out);
		return;
	}
	struct sim_ep_traffic t;
	sim_ep_traffic(hw, op, &t);
	struct op_cost c;
	memset(&c, 0, sizeof c);
	c.bound = BOUND_COMM;
	if (op->ranks > 1 && (t.nic_bytes > 0 || t.nvlink_bytes > 0)) {
		double eff_nic = hw_curve_eval(&hw->eff_comm, t.nic_bytes);
		double eff_nvl = hw_curve_eval(&hw->eff_comm, t.nvlink_bytes);
		double nic = t.nic_bytes > 0 ? t.nic_bytes / (hw->nic_bw_bytes_per_s * eff_nic) : 0;
		double nvl = t.nvlink_bytes > 0 ? t.nvlink_bytes / (hw->nvlink_bw_bytes_per_s * eff_nvl) : 0;
		/* normal: a notify round then the transfer (two steps per link crossed); low latency:
		 * one RDMA write per expert's batch, the receiver polling (one step) */
		double steps = op->ep.mode == EP_MODE_NORMAL ? 2 : 1;
		double lat = (t.nic_bytes > 0 ? hw->nic_latency_s : 0) + (t.nvlink_bytes > 0 ? hw->nvlink_latency_s : 0);
		c.comm_s = fmax(nic, nvl) + steps * lat;
		c.floor_s = fmax(t.nic_bytes / hw->nic_bw_bytes_per_s, t.nvlink_bytes / hw->nvlink_bw_bytes_per_s);
	}
	c.time_s = c.comm_s;
	c.clock_hz = hw_clock_sel_hz(hw, opts ? &opts->clock : NULL);
	c.cycles = c.time_s * c.clock_hz;
	c.extrapolated = hw->calibrated; /* no table of DeepEP's kernels: the physical model */
	*out = c;
}

double sim_ep_sms(const struct op *op)
{
	switch (op->ep.mode) {
	case EP_MODE_NORMAL:
		return op->ep.sms;
	case EP_MODE_LOW_LATENCY:
		return 0;
	default:
		return op_is_comm(op->kind) ? nccl_sms(op) : 0;
	}
}
