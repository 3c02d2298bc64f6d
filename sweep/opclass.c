#include "sweep/opclass.h"

#include "sim/cost.h"

static const char *const keys[OPC_COUNT] = {
    "attn_kda", "attn_mla", "dsa_indexer", "moe_experts", "moe_comm", "tp_comm", "dense_gemm", "other",
};
static const char *const labels[OPC_COUNT] = {
    "attention (KDA)", "attention (MLA)", "DSA indexer", "MoE experts",
    "MoE comm (EP)",   "TP comm",         "dense GEMMs", "other",
};

const char *opclass_key(enum opclass c)
{
	return (unsigned)c < OPC_COUNT ? keys[c] : "?";
}

const char *opclass_label(enum opclass c)
{
	return (unsigned)c < OPC_COUNT ? labels[c] : "?";
}

enum opclass opclass_of(const struct op *op)
{
	switch (op_role_block(op->role)) {
	case OP_BLOCK_KDA:
	case OP_BLOCK_KCP:
		return OPC_ATTN_KDA;
	case OP_BLOCK_DSA:
		return op->role == OP_ROLE_DSA_ATTN ? OPC_ATTN_MLA : OPC_DSA_INDEXER;
	case OP_BLOCK_MLA:
	case OP_BLOCK_CP:
		return OPC_ATTN_MLA;
	case OP_BLOCK_MOE:
		return op->role == OP_ROLE_MOE_DISPATCH || op->role == OP_ROLE_MOE_COMBINE ? OPC_MOE_COMM
											    : OPC_MOE_EXPERTS;
	case OP_BLOCK_TP:
		return OPC_TP_COMM;
	case OP_BLOCK_FFN:
		return OPC_DENSE_GEMM;
	case OP_BLOCK_OTHER:
		break;
	}
	return op->role == OP_ROLE_LM_HEAD ? OPC_DENSE_GEMM : OPC_OTHER;
}

/* Share of a DSA attention op's time that is the indexer scan: the op costed as its indexer alone
 * (no selected tokens) against the op costed as its sparse attention alone (no indexer). */
double opclass_dsa_indexer_share(const struct hw *hw, const struct op *op, bool cuda_graph)
{
	struct cost_opts opts = {.cuda_graph = cuda_graph};
	struct op idx = *op, sparse = *op;
	struct op_cost ci, cs;
	idx.top_k = 0;
	op_fill(&idx);
	sparse.index_heads = 0;
	sparse.index_dim = 0;
	sparse.index_bytes_per_token = 0;
	op_fill(&sparse);
	sim_op_cost(hw, &idx, &opts, &ci);
	sim_op_cost(hw, &sparse, &opts, &cs);
	double sum = ci.time_s + cs.time_s;
	return sum > 0 ? ci.time_s / sum : 0;
}

void opclass_phase_times(const struct hw *hw, const struct sim_phase *ph, bool cuda_graph,
                         double out_s[OPC_COUNT])
{
	for (int c = 0; c < OPC_COUNT; c++)
		out_s[c] = 0;
	for (int i = 0; i < ph->n_rows; i++) {
		const struct sim_op_row *r = &ph->rows[i];
		if (r->op.kind == OP_DSA_DECODE || r->op.kind == OP_DSA_PREFILL) {
			double share = opclass_dsa_indexer_share(hw, &r->op, cuda_graph);
			out_s[OPC_DSA_INDEXER] += r->total_s * share;
			out_s[OPC_ATTN_MLA] += r->total_s * (1.0 - share);
			continue;
		}
		out_s[opclass_of(&r->op)] += r->total_s;
	}
}
