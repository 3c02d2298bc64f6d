#ifndef K3_SIM_COST_H
#define K3_SIM_COST_H

/* Cycle-aware cost of one op on one GPU: roofline terms with size-dependent efficiency, tile and
 * wave quantization for GEMMs, KDA's serial chunk recurrence, launch latency and L2 residency of
 * small activations; collectives by an alpha-beta model over NVLink or the NIC, per collective kind
 * and rank count where the preset calibrated them (hw_coll_model, hw_comm_table_eff). */

#include <stdbool.h>

#include "hw/hw.h"
#include "model/ops.h"

enum bound { BOUND_COMPUTE, BOUND_MEMORY, BOUND_LATENCY, BOUND_COMM };

struct op_cost {
	double time_s;     /* the op once (one layer's instance) */
	double cycles;     /* time_s at the SM clock */
	double compute_s;  /* tensor/vector work at the achieved rate, after quantization */
	double memory_s;   /* HBM (and L2) traffic at the achieved bandwidth */
	double latency_s;  /* launch, and serial dependency chains (KDA recurrence) */
	double comm_s;     /* collectives */
	double waves;      /* GEMM / KDA recurrence waves over the SMs (0 when not applicable) */
	enum bound bound;
};

struct cost_opts {
	bool cuda_graph;   /* launch latency of a captured graph instead of eager launches */
};

const char *bound_name(enum bound b);

/* Cost of `op` on one GPU of `hw`; `op` already has per-GPU dims and derived bytes (op_fill). */
/* The collective model of a collective op kind (all-to-all for anything else). */
enum hw_coll sim_op_coll(enum op_kind k);

void sim_op_cost(const struct hw *hw, const struct op *op, const struct cost_opts *opts,
		 struct op_cost *out);

#endif
