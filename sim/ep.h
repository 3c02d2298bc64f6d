#ifndef K3_SIM_EP_H
#define K3_SIM_EP_H

/* Expert-parallel dispatch and combine, by how they travel (docs/MODEL.md, section 3):
 *
 * - normal (DeepEP's normal kernels, DeepSeek's prefill): a token crosses the NIC once per remote
 *   node that holds one of its experts (per-node deduplication, to the GPU of the same local
 *   index there), then NVLink forwards it to the GPUs of that node that hold its experts; with
 *   node-limited routing a token reaches at most `node_limit` nodes (DeepSeek-V3: 4). The combine
 *   reduces inside each node first and travels the same way back. The kernels keep `sms` SMs.
 * - low_latency (DeepEP's low-latency kernels, decode): one row per selected expert, straight to
 *   the expert's GPU (RDMA across nodes, NVLink inside one), no deduplication; no SM is held
 *   while the transfer flies.
 * - alltoall (NCCL all-to-all): the even all-to-all whose send buffer is one row per EP rank a
 *   token reaches (sim_ep_comm_bytes), costed as the collective (sim/cost.c).
 *
 * Counts assume uniform routing; a GPU's time is the larger of what it sends and what the busiest
 * rank receives (`recv_tokens` x `rows_ratio` tokens' worth: when fewer GPUs send than receive,
 * one prompt's prefill on one DP group, the senders' links bind); row
 * bytes are the payload's (FP8 rows carry a 4-byte scale per 128 values; combine rows are BF16).
 * Times: the larger of the NIC and NVLink transfers at the interconnect's efficiency for their
 * size, plus the step latencies of the links crossed. */

#include <stdint.h>

#include "hw/hw.h"
#include "model/ops.h"
#include "sim/cost.h"

const char *sim_ep_mode_name(enum op_ep_mode m);
int sim_ep_mode_parse(const char *s, enum op_ep_mode *out);

struct sim_ep_traffic {
	double nodes;        /* nodes a token reaches (the node limit applied) */
	double ranks;        /* EP ranks a token reaches */
	double nic_bytes;    /* per GPU over the NIC, the busiest rank's */
	double nvlink_bytes; /* per GPU over NVLink */
};

/* The traffic of one dispatch or combine described by op->ep on hw (domain_gpus GPUs share
 * NVLink). */
void sim_ep_traffic(const struct hw *hw, const struct op *op, struct sim_ep_traffic *out);

/* The cost of an op: EP dispatches and combines in normal or low-latency mode by their model,
 * everything else (and alltoall mode) by sim_op_cost. */
void sim_op_cost_ep(const struct hw *hw, const struct op *op, const struct cost_opts *opts, struct op_cost *out);

/* SMs a communication kernel keeps while it runs: an EP kernel by its mode (normal: op->ep.sms;
 * low latency: 0), any other collective (and the alltoall mode) NCCL's channels, one SM each (the
 * all-to-all's as measured on two H200s, by its buffer size; 16 for the others). 0 for compute. */
double sim_ep_sms(const struct op *op);

#endif
