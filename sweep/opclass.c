#include "sweep/opclass.h"

#include <string.h>

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

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

enum opclass opclass_of(const struct op *op)
{
	const char *n = op->name ? op->name : "";
	if (starts(n, "kda.") || starts(n, "kcp."))
		return OPC_ATTN_KDA;
	if (starts(n, "dsa.index"))
		return OPC_DSA_INDEXER;
	if (starts(n, "mla.") || starts(n, "cp.") || starts(n, "dsa."))
		return OPC_ATTN_MLA;
	if (strcmp(n, "moe.dispatch") == 0 || strcmp(n, "moe.combine") == 0)
		return OPC_MOE_COMM;
	if (starts(n, "moe."))
		return OPC_MOE_EXPERTS;
	if (starts(n, "tp."))
		return OPC_TP_COMM;
	if (starts(n, "ffn.") || strcmp(n, "lm_head") == 0)
		return OPC_DENSE_GEMM;
	return OPC_OTHER;
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
