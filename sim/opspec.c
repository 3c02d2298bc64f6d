#include "sim/opspec.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/ep.h"
#include "sim/sim.h"
#include "util/doc.h"

static const struct opspec_kind kinds[] = {
	{"gemm", OP_GEMM, "dense matmul y[m,n] = x[m,k] W[k,n]",
	 {{"m", NULL, "rows (tokens)"}, {"n", NULL, "output columns"}, {"k", NULL, "reduction"},
	  {"dtype", "bf16", "operands"}, {"w_dtype", "", "weights, if not dtype"}}},
	{"grouped_gemm", OP_GROUPED_GEMM, "routed experts: m rows over `groups` experts",
	 {{"m", NULL, "rows over all groups"}, {"n", NULL, "columns"}, {"k", NULL, "reduction"},
	  {"groups", NULL, "experts held"}, {"touched", "", "experts that get rows (default all)"},
	  {"dtype", "bf16", "activations"}, {"w_dtype", "", "weights, if not dtype (e.g. mxfp4)"},
	  {"cv", "", "rows per touched expert: std / mean (default: a uniform router's)"}}},
	{"kda_chunk", OP_KDA_CHUNK, "chunked KDA prefill",
	 {{"b", NULL, "sequences"}, {"t", NULL, "tokens per sequence"}, {"h", NULL, "heads"},
	  {"k", "128", "key head dim"}, {"v", "128", "value head dim"}, {"state", "fp32", "state dtype"},
	  {"chunk", "16", "chunk tokens"}, {"ctx", "0", "prefix tokens (reads the initial state)"}}},
	{"kda_decode", OP_KDA_DECODE, "fused KDA decode (state read-modify-write); t > 1: verify + replay",
	 {{"b", NULL, "requests"}, {"h", NULL, "heads"}, {"k", "128", "key head dim"},
	  {"v", "128", "value head dim"}, {"state", "fp32", "state dtype"},
	  {"t", "1", "tokens per request (verify: accepted + drafts)"},
	  {"conv", "4", "ShortConv taps (0 = none)"}}},
	{"mla_prefill", OP_MLA_PREFILL, "MLA attention of t new tokens over ctx + t",
	 {{"b", NULL, "sequences"}, {"t", NULL, "new tokens"}, {"ctx", "0", "prefix tokens"},
	  {"heads", NULL, "heads"}, {"dqk", "192", "query/key head dim"}, {"dv", "128", "value head dim"},
	  {"kv", "bf16", "cache dtype"}}},
	{"mla_decode", OP_MLA_DECODE, "absorbed MLA decode over the latent cache",
	 {{"b", NULL, "requests"}, {"heads", NULL, "heads"}, {"ctx", NULL, "cached tokens"},
	  {"kv", "bf16", "cache dtype: bf16 or fp8 (FlashMLA layout)"}, {"latent", "512", "latent width"},
	  {"rope", "64", "decoupled rope width"}, {"t", "1", "query tokens per request"}}},
	{"dsa_decode", OP_DSA_DECODE, "DSA decode: indexer over ctx + sparse MLA over top-k",
	 {{"b", NULL, "requests"}, {"heads", NULL, "heads"}, {"ctx", NULL, "cached tokens"},
	  {"kv", "bf16", "cache dtype"}, {"topk", "2048", "selected tokens"},
	  {"index_heads", "64", "indexer heads"}, {"index_dim", "128", "indexer head dim"},
	  {"latent", "512", "latent width"}, {"rope", "64", "rope width"}}},
	{"allreduce", OP_ALLREDUCE, "all-reduce (bytes per rank, as nccl-tests)",
	 {{"bytes", NULL, "buffer per rank"}, {"ranks", NULL, "GPUs"}}},
	{"allgather", OP_ALLGATHER, "all-gather (bytes = output buffer, as nccl-tests)",
	 {{"bytes", NULL, "output buffer"}, {"ranks", NULL, "GPUs"}}},
	{"reducescatter", OP_REDUCESCATTER, "reduce-scatter (bytes = input buffer)",
	 {{"bytes", NULL, "input buffer"}, {"ranks", NULL, "GPUs"}}},
	{"alltoall", OP_ALLTOALL, "all-to-all (bytes = send buffer per rank)",
	 {{"bytes", NULL, "send buffer per rank"}, {"ranks", NULL, "GPUs"}}},
	{"ep_dispatch", OP_ALLTOALL, "EP dispatch: each token once to each EP rank holding one of its experts",
	 {{"tokens", NULL, "tokens per rank"}, {"ranks", NULL, "EP ranks"}, {"experts", "896", "routed experts"},
	  {"top_k", "16", "experts per token"}, {"width", "3584", "elements per row (K3: the latent)"},
	  {"dtype", "fp8", "row dtype (fp8 rows carry one FP32 scale per 128)"},
	  {"imbalance", "1", "busiest rank's rows over the mean"},
	  {"mode", "alltoall", "normal | low_latency | alltoall (sim/ep.h)"},
	  {"node_limit", "0", "nodes a token may reach (0: no limit)"}, {"sms", "20", "SMs of normal kernels"}}},
	{"ep_combine", OP_ALLTOALL, "EP combine: the expert outputs back, one row per rank reached",
	 {{"tokens", NULL, "tokens per rank"}, {"ranks", NULL, "EP ranks"}, {"experts", "896", "routed experts"},
	  {"top_k", "16", "experts per token"}, {"width", "3584", "elements per row"},
	  {"dtype", "bf16", "row dtype"}, {"imbalance", "1", "busiest rank's rows over the mean"},
	  {"mode", "alltoall", "normal | low_latency | alltoall (sim/ep.h)"},
	  {"node_limit", "0", "nodes a token may reach (0: no limit)"}, {"sms", "20", "SMs of normal kernels"}}},
	{"copy", OP_ELEMENTWISE, "device-to-device copy: bytes read and written",
	 {{"bytes", NULL, "bytes copied"}}},
	{"memory", OP_ELEMENTWISE, "memory-bound op by its bytes (a framework call: trace profile)",
	 {{"read", NULL, "bytes read"}, {"write", "0", "bytes written"}}},
	{"attnres", OP_ATTNRES, "Block AttnRes + pre-norm: scores, softmax over sources, weighted sum",
	 {{"tokens", NULL, "tokens"}, {"dim", NULL, "hidden width"},
	  {"sources", NULL, "tensors mixed (completed blocks, embedding, partial sum)"},
	  {"delta", "0", "1: the partial sum takes a sublayer's output first (read, written back)"},
	  {"dtype", "bf16", "element type"}}},
	{"route", OP_ROUTE, "MoE routing: sigmoid + bias scores, top-k, rows grouped per expert",
	 {{"tokens", NULL, "tokens"}, {"experts", NULL, "routed experts"},
	  {"top_k", NULL, "experts per token"}, {"dtype", "fp32", "router logits"}}},
	{"combine", OP_COMBINE, "MoE combine: weighted sum of each token's top-k expert rows + RMSNorm",
	 {{"tokens", NULL, "tokens"}, {"width", NULL, "elements per row (K3: the latent)"},
	  {"top_k", NULL, "rows per token"}, {"dtype", "bf16", "row type"}}},
	{"short_conv", OP_SHORT_CONV, "causal depthwise ShortConv + SiLU over tokens x channels",
	 {{"tokens", NULL, "tokens"}, {"channels", NULL, "channels (KDA: q|k|v)"},
	  {"taps", "4", "kernel taps"}, {"dtype", "bf16", "element type"}}},
	{"quant", OP_QUANT, "activation quantizer: BF16 rows to FP8 with per-row or per-group scales",
	 {{"tokens", NULL, "rows"}, {"width", NULL, "elements per row"},
	  {"dtype", "fp8", "output: fp8 (E4M3, FP32 scales) or mxfp8 (E8M0 scales)"},
	  {"group", "", "elements per scale: 0 = one a row (fp8 default), 128 = DeepSeek 1x128, 32 (mxfp8)"}}},
	{"elementwise", OP_ELEMENTWISE, "memory-bound elementwise op over m x n",
	 {{"m", NULL, "rows"}, {"n", NULL, "columns"}, {"in", "1", "input tensors"},
	  {"out", "1", "output tensors"}, {"dtype", "bf16", "element type"}}},
};
enum { N_KINDS = sizeof kinds / sizeof kinds[0] };

const struct opspec_kind *opspec_kinds(int *n)
{
	*n = N_KINDS;
	return kinds;
}

struct values {
	const struct opspec_kind *spec;
	const char *val[12];
	struct err *e;
};

static const char *value(const struct values *a, const char *name)
{
	for (int i = 0; a->spec->keys[i].name; i++)
		if (strcmp(a->spec->keys[i].name, name) == 0)
			return a->val[i] ? a->val[i] : a->spec->keys[i].def;
	return NULL;
}

/* 0 and *out set; 1 when absent without a default (*out untouched); <0 on a bad value. */
static int get_i64(const struct values *a, const char *name, int64_t *out)
{
	const char *v = value(a, name);
	if (!v || !*v)
		return 1;
	int64_t x;
	if (doc_parse_i64(v, &x) < 0 || x < 0) {
		err_set(a->e, NULL, 0, 0, "%s %s=%s: expected a non-negative integer", a->spec->name, name, v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int get_dtype(const struct values *a, const char *name, enum dtype *out)
{
	const char *v = value(a, name);
	if (!v || !*v)
		return 1;
	if (dtype_parse(v, out) < 0) {
		err_set(a->e, NULL, 0, 0, "%s %s=%s: unknown dtype (expected one of %s)", a->spec->name, name, v,
			dtype_spellings());
		return -EINVAL;
	}
	return 0;
}

/* 0 and *out set; 1 when absent; <0 on a bad value. */
static int get_double(const struct values *a, const char *name, double *out)
{
	const char *v = value(a, name);
	if (!v || !*v)
		return 1;
	double x;
	if (doc_parse_double(v, &x) < 0 || !(x >= 0)) {
		err_set(a->e, NULL, 0, 0, "%s %s=%s: expected a non-negative number", a->spec->name, name, v);
		return -EINVAL;
	}
	*out = x;
	return 0;
}

static int64_t mla_cache_bytes(enum dtype kv, int64_t latent, int64_t rope)
{
	if (kv == DT_FP8)
		return latent + 4 * ((latent + 127) / 128) + 2 * rope;
	return dtype_bytes(kv, latent + rope);
}

#define I64(name, dst)                                 \
	do {                                           \
		if ((rc = get_i64(&a, name, &(dst))) < 0) \
			return rc;                     \
	} while (0)
#define DT(name, dst)                                    \
	do {                                             \
		if ((rc = get_dtype(&a, name, &(dst))) < 0) \
			return rc;                       \
	} while (0)

/* Derived bytes, and sizes too large to count in 64 bits refused (never wrapped). */
static int finish(struct op *op, const char *kind, struct op *out, struct err *e)
{
	op_fill(op);
	if (op->too_large) {
		err_set(e, NULL, 0, 0,
			"%s: sizes too large: a product of them passes %lld elements (bytes), beyond what k3sim "
			"counts in 64-bit integers",
			kind, (long long)OP_ELEMENTS_MAX);
		return -ERANGE;
	}
	*out = *op;
	return 0;
}

int opspec_parse(const char *kind, int nargs, const char *const *args, struct op *out, struct err *e)
{
	struct values a = {.e = e};
	for (int k = 0; k < N_KINDS; k++)
		if (strcmp(kinds[k].name, kind) == 0)
			a.spec = &kinds[k];
	if (!a.spec) {
		const char *names[N_KINDS + 1];
		for (int k = 0; k < N_KINDS; k++)
			names[k] = kinds[k].name;
		names[N_KINDS] = NULL;
		const char *hint = err_suggest(kind, names);
		err_set(e, NULL, 0, 0, "unknown op kind '%s'%s%s%s", kind, hint ? " (did you mean '" : "",
			hint ? hint : "", hint ? "'?)" : "");
		return -EINVAL;
	}
	for (int i = 0; i < nargs; i++) {
		const char *s = args[i];
		const char *eq = strchr(s, '=');
		if (!eq || eq == s) {
			err_set(e, NULL, 0, 0, "%s: expected key=value, got '%s'", kind, s);
			return -EINVAL;
		}
		int found = -1;
		const char *names[13];
		int n = 0;
		for (int k = 0; a.spec->keys[k].name; k++) {
			names[n++] = a.spec->keys[k].name;
			if (strlen(a.spec->keys[k].name) == (size_t)(eq - s) &&
			    strncmp(a.spec->keys[k].name, s, (size_t)(eq - s)) == 0)
				found = k;
		}
		names[n] = NULL;
		if (found < 0) {
			char key[64];
			snprintf(key, sizeof key, "%.*s", (int)(eq - s < 60 ? eq - s : 60), s);
			const char *hint = err_suggest(key, names);
			err_set(e, NULL, 0, 0, "%s: unknown key '%s'%s%s%s", kind, key, hint ? " (did you mean '" : "",
				hint ? hint : "", hint ? "'?)" : "");
			return -EINVAL;
		}
		a.val[found] = eq + 1;
	}
	for (int k = 0; a.spec->keys[k].name; k++)
		if (!a.spec->keys[k].def && !a.val[k]) {
			err_set(e, NULL, 0, 0, "%s: missing %s=... (%s)", kind, a.spec->keys[k].name, a.spec->keys[k].help);
			return -EINVAL;
		}

	struct op op;
	memset(&op, 0, sizeof op);
	op.kind = a.spec->kind;
	op.name = a.spec->name;
	op.layers = 1;
	op.w_dtype = op.a_dtype = op.o_dtype = DT_BF16;
	op.s_dtype = DT_FP32;
	int64_t conv = 0, latent = 0, rope = 0;
	enum dtype kv = DT_BF16;
	int rc;
	if (strcmp(a.spec->name, "copy") == 0) {
		int64_t bytes = 0;
		I64("bytes", bytes);
		op.m = 1;
		op.n = bytes;
		op.in_tensors = op.out_tensors = 1;
		op.a_dtype = op.o_dtype = DT_FP8; /* one byte per element */
		op.cold = true;                   /* a D2D copy streams through HBM */
		return finish(&op, kind, out, e);
	}
	if (strcmp(a.spec->name, "memory") == 0) {
		int64_t rd = 0, wr = 0;
		I64("read", rd);
		I64("write", wr);
		if (rd < 0 || wr < 0 || (rd == 0 && wr == 0)) {
			err_set(e, NULL, 0, 0, "memory: read and write are bytes, not both 0");
			return -EINVAL;
		}
		op.m = 1;
		op.n = rd > wr ? rd : wr;
		op.in_tensors = (double)rd / (double)op.n;
		op.out_tensors = (double)wr / (double)op.n;
		op.a_dtype = op.o_dtype = DT_FP8; /* one byte per element */
		op.flops_per_element = 1;
		return finish(&op, kind, out, e);
	}
	if (strncmp(a.spec->name, "ep_", 3) == 0) {
		/* an EP dispatch or combine as the equivalent even all-to-all (sim_ep_comm_bytes) */
		int64_t tokens = 0, width = 0;
		double imbalance = 1;
		struct model_moe moe = {0};
		enum dtype dt = DT_BF16;
		I64("tokens", tokens);
		I64("ranks", op.ranks);
		I64("experts", moe.experts);
		I64("top_k", moe.top_k);
		I64("width", width);
		DT("dtype", dt);
		if ((rc = get_double(&a, "imbalance", &imbalance)) < 0)
			return rc;
		if (imbalance < 1) {
			err_set(e, NULL, 0, 0, "%s: imbalance must be at least 1 (busiest rank over the mean)", kind);
			return -EINVAL;
		}
		if (moe.top_k < 1 || moe.top_k > moe.experts) {
			err_set(e, NULL, 0, 0, "%s: top_k must be in 1..experts", kind);
			return -EINVAL;
		}
		int64_t row = dt == DT_FP8 ? width + 4 * ((width + 127) / 128) : dtype_bytes(dt, width);
		op.comm_bytes = sim_ep_comm_bytes(&moe, tokens, row, op.ranks, imbalance);
		const char *mode = value(&a, "mode");
		op.ep.mode = EP_MODE_ALLTOALL;
		if (mode && *mode && sim_ep_mode_parse(mode, &op.ep.mode) < 0) {
			err_set(e, NULL, 0, 0, "%s mode=%s: expected normal, low_latency or alltoall", kind, mode);
			return -EINVAL;
		}
		if (op.ep.mode == EP_MODE_NONE)
			op.ep.mode = EP_MODE_ALLTOALL;
		int64_t sms = 20;
		I64("node_limit", op.ep.node_limit);
		I64("sms", sms);
		op.ep.tokens = op.ep.recv_tokens = (double)tokens;
		op.ep.experts = moe.experts;
		op.ep.top_k = moe.top_k;
		op.ep.row_bytes = row;
		op.ep.rows_ratio = imbalance;
		op.ep.sms = (int)sms;
		return finish(&op, kind, out, e);
	}
	switch (op.kind) {
	case OP_GEMM:
	case OP_GROUPED_GEMM:
		I64("m", op.m);
		I64("n", op.n);
		I64("k", op.k);
		DT("dtype", op.a_dtype);
		op.w_dtype = op.o_dtype = op.a_dtype;
		if (op.a_dtype == DT_MXFP4 || op.a_dtype == DT_MXFP8 || op.a_dtype == DT_FP8)
			op.o_dtype = DT_BF16;
		DT("w_dtype", op.w_dtype);
		if (op.kind == OP_GROUPED_GEMM) {
			I64("groups", op.groups);
			int64_t touched = op.groups;
			I64("touched", touched);
			op.groups_touched = (double)(touched < op.groups ? touched : op.groups);
			if ((rc = get_double(&a, "cv", &op.expert_cv)) < 0)
				return rc;
			if (op.expert_cv > OP_EXPERT_CV_MAX) {
				err_set(e, NULL, 0, 0, "%s: cv=%g is past %g (rows per expert: std over mean)", kind,
					op.expert_cv, OP_EXPERT_CV_MAX);
				return -EINVAL;
			}
		}
		break;
	case OP_KDA_CHUNK:
	case OP_KDA_DECODE:
		I64("b", op.b);
		I64("h", op.h);
		I64("k", op.dk);
		I64("v", op.dv);
		DT("state", op.s_dtype);
		I64("t", op.t);
		if (op.kind == OP_KDA_CHUNK) {
			I64("chunk", op.chunk);
			I64("ctx", op.ctx);
			if (op.chunk < 1) {
				err_set(e, NULL, 0, 0, "kda_chunk: chunk must be at least 1");
				return -EINVAL;
			}
		} else {
			I64("conv", conv);
			op.extra_state_bytes = conv > 1 ? 2 * dtype_bytes(op.s_dtype, op.b * 3 * op.h * op.dk * (conv - 1)) : 0;
		}
		break;
	case OP_MLA_PREFILL:
		I64("b", op.b);
		I64("t", op.t);
		I64("ctx", op.ctx);
		I64("heads", op.h);
		I64("dqk", op.dk);
		I64("dv", op.dv);
		DT("kv", kv);
		op.cache_bytes_per_token = mla_cache_bytes(kv, 512, 64);
		break;
	case OP_MLA_DECODE:
	case OP_DSA_DECODE:
		I64("b", op.b);
		I64("heads", op.h);
		I64("ctx", op.ctx);
		DT("kv", kv);
		I64("latent", latent);
		I64("rope", rope);
		op.t = 1;
		if (op.kind == OP_MLA_DECODE)
			I64("t", op.t);
		op.dk = latent + rope;
		op.dv = latent;
		op.cache_bytes_per_token = mla_cache_bytes(kv, latent, rope);
		if (op.kind == OP_DSA_DECODE) {
			I64("topk", op.top_k);
			I64("index_heads", op.index_heads);
			I64("index_dim", op.index_dim);
			op.index_bytes_per_token = op.index_dim + 4;
		}
		break;
	case OP_ALLREDUCE:
	case OP_ALLGATHER:
	case OP_REDUCESCATTER:
	case OP_ALLTOALL:
		I64("bytes", op.comm_bytes);
		I64("ranks", op.ranks);
		break;
	case OP_ELEMENTWISE: {
		int64_t in = 1, outs = 1;
		I64("m", op.m);
		I64("n", op.n);
		I64("in", in);
		I64("out", outs);
		DT("dtype", op.a_dtype);
		op.o_dtype = op.a_dtype;
		op.in_tensors = (double)in;
		op.out_tensors = (double)outs;
		op.flops_per_element = 2;
		break;
	}
	case OP_ATTNRES: {
		int64_t sources = 0, delta = 0;
		I64("tokens", op.m);
		I64("dim", op.n);
		I64("sources", sources);
		I64("delta", delta);
		DT("dtype", op.a_dtype);
		if (sources < 1 || delta > 1) {
			err_set(e, NULL, 0, 0, "attnres: sources must be at least 1 and delta 0 or 1");
			return -EINVAL;
		}
		op.o_dtype = op.a_dtype;
		op.sources = (double)sources;
		op.in_tensors = (double)delta;
		op.out_tensors = 1.0 + (double)delta;
		break;
	}
	case OP_ROUTE:
	case OP_COMBINE:
		I64("tokens", op.m);
		I64(op.kind == OP_ROUTE ? "experts" : "width", op.n);
		I64("top_k", op.top_k);
		DT("dtype", op.a_dtype);
		op.o_dtype = op.a_dtype;
		if (op.kind == OP_ROUTE && (op.top_k < 1 || op.top_k > op.n)) {
			err_set(e, NULL, 0, 0, "route: top_k must be in 1..experts");
			return -EINVAL;
		}
		break;
	case OP_SHORT_CONV:
		I64("tokens", op.m);
		I64("channels", op.n);
		I64("taps", op.k);
		DT("dtype", op.a_dtype);
		op.o_dtype = op.a_dtype;
		break;
	case OP_QUANT: {
		I64("tokens", op.m);
		I64("width", op.n);
		DT("dtype", op.o_dtype);
		if (op.o_dtype != DT_FP8 && op.o_dtype != DT_MXFP8) {
			err_set(e, NULL, 0, 0, "quant dtype=%s: expected fp8 or mxfp8 (the output type)",
				dtype_name(op.o_dtype));
			return -EINVAL;
		}
		op.k = op.o_dtype == DT_MXFP8 ? 32 : 0;
		I64("group", op.k);
		if (op.o_dtype == DT_MXFP8 && op.k != 32) {
			err_set(e, NULL, 0, 0, "quant dtype=mxfp8: group must be 32 (one E8M0 scale per 32 elements), "
				"got %lld", (long long)op.k);
			return -EINVAL;
		}
		if (op.n < 1 || op.k > op.n) {
			err_set(e, NULL, 0, 0, "quant: width must be at least 1 and group in 0..width (0: one scale a row)");
			return -EINVAL;
		}
		op.a_dtype = DT_BF16;
		break;
	}
	default:
		break;
	}
	return finish(&op, kind, out, e);
}

int opspec_parse_line(const char *line, struct op *out, struct err *e)
{
	char buf[512];
	if (strlen(line) >= sizeof buf) {
		err_set(e, NULL, 0, 0, "op spec too long");
		return -EINVAL;
	}
	snprintf(buf, sizeof buf, "%s", line);
	const char *fields[33];
	int n = 0;
	for (char *tok = strtok(buf, " \t"); tok; tok = strtok(NULL, " \t")) {
		if (n == 33) {
			err_set(e, NULL, 0, 0, "op spec has too many fields");
			return -EINVAL;
		}
		fields[n++] = tok;
	}
	int first = 0;
	if (n > 0 && strcmp(fields[0], "k3sim") == 0)
		first = 1;
	if (first >= n) {
		err_set(e, NULL, 0, 0, "empty op spec");
		return -EINVAL;
	}
	const char *kind = fields[first];
	if (strncmp(kind, "op=", 3) == 0)
		kind += 3;
	return opspec_parse(kind, n - first - 1, fields + first + 1, out, e);
}
