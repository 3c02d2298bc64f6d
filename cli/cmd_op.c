/* k3sim op KIND key=value... [--hw NAME|PATH] [--json]: predicted time of one op on one device. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/commands.h"
#include "sim/cost.h"
#include "util/doc.h"

/* The keys each kind takes, with defaults; NULL default = required. dtype keys hold names. */
struct key {
	const char *name;
	const char *def;
	const char *help;
};

struct kind_spec {
	const char *name;
	enum op_kind kind;
	const char *summary;
	struct key keys[12];
};

static const struct kind_spec specs[] = {
	{"gemm", OP_GEMM, "dense matmul y[m,n] = x[m,k] W[k,n]",
	 {{"m", NULL, "rows (tokens)"}, {"n", NULL, "output columns"}, {"k", NULL, "reduction"},
	  {"dtype", "bf16", "operands"}, {"w_dtype", "", "weights, if not dtype"}}},
	{"grouped_gemm", OP_GROUPED_GEMM, "routed experts: m rows over `groups` experts",
	 {{"m", NULL, "rows over all groups"}, {"n", NULL, "columns"}, {"k", NULL, "reduction"},
	  {"groups", NULL, "experts held"}, {"touched", "", "experts that get rows (default all)"},
	  {"dtype", "bf16", "activations"}, {"w_dtype", "", "weights, if not dtype (e.g. mxfp4)"}}},
	{"kda_chunk", OP_KDA_CHUNK, "chunked KDA prefill",
	 {{"b", NULL, "sequences"}, {"t", NULL, "tokens per sequence"}, {"h", NULL, "heads"},
	  {"k", "128", "key head dim"}, {"v", "128", "value head dim"}, {"state", "fp32", "state dtype"},
	  {"chunk", "16", "chunk tokens"}, {"ctx", "0", "prefix tokens (reads the initial state)"}}},
	{"kda_decode", OP_KDA_DECODE, "fused KDA decode (state read-modify-write)",
	 {{"b", NULL, "requests"}, {"h", NULL, "heads"}, {"k", "128", "key head dim"},
	  {"v", "128", "value head dim"}, {"state", "fp32", "state dtype"}, {"t", "1", "tokens per request"},
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
	{"elementwise", OP_ELEMENTWISE, "memory-bound elementwise op over m x n",
	 {{"m", NULL, "rows"}, {"n", NULL, "columns"}, {"in", "1", "input tensors"},
	  {"out", "1", "output tensors"}, {"dtype", "bf16", "element type"}}},
};
enum { N_SPECS = sizeof specs / sizeof specs[0] };

static void usage(FILE *out)
{
	fprintf(out, "usage: k3sim op KIND key=value... [--hw NAME|PATH] [--json] [--graph]\n\n"
		     "Predicted time of one op on one GPU: cycles, what bounds it, FLOPs and bytes.\n"
		     "Sizes are plain integers (elements, tokens, bytes); dtypes: %s.\n\n"
		     "  --hw NAME|PATH  hardware preset or YAML (default h200)\n"
		     "  --json          machine-readable: time_s, cycles, bound, flops, bytes, ...\n"
		     "  --graph         launch latency of a CUDA graph instead of an eager launch\n\nkinds:\n",
		dtype_spellings());
	for (int i = 0; i < N_SPECS; i++) {
		fprintf(out, "  %-13s %s\n               ", specs[i].name, specs[i].summary);
		for (const struct key *k = specs[i].keys; k->name; k++)
			fprintf(out, " %s%s%s", k->name, k->def ? "=" : "", k->def ? (k->def[0] ? k->def : "-") : "");
		fprintf(out, "\n");
	}
	fprintf(out, "\nexample: k3sim op kda_decode b=64 h=96 k=128 v=128 state=fp32 --hw h200 --json\n");
}

struct args {
	const struct kind_spec *spec;
	const char *val[12];
};

static const char *arg(const struct args *a, const char *name)
{
	for (int i = 0; a->spec->keys[i].name; i++)
		if (strcmp(a->spec->keys[i].name, name) == 0)
			return a->val[i] ? a->val[i] : a->spec->keys[i].def;
	return NULL;
}

static int get_i64(const struct args *a, const char *name, int64_t *out)
{
	const char *v = arg(a, name);
	if (!v || !*v)
		return -ENOENT;
	if (doc_parse_i64(v, out) < 0 || *out < 0) {
		fprintf(stderr, "k3sim op: %s=%s: expected a non-negative integer\n", name, v);
		return -EINVAL;
	}
	return 0;
}

static int get_dtype(const struct args *a, const char *name, enum dtype *out)
{
	const char *v = arg(a, name);
	if (!v || !*v)
		return -ENOENT;
	if (dtype_parse(v, out) < 0) {
		fprintf(stderr, "k3sim op: %s=%s: unknown dtype (expected one of %s)\n", name, v, dtype_spellings());
		return -EINVAL;
	}
	return 0;
}

#define I64(name, dst)                                   \
	do {                                             \
		if (get_i64(&a, name, &(dst)) == -EINVAL) \
			return 2;                        \
	} while (0)
#define DT(name, dst)                                      \
	do {                                               \
		if (get_dtype(&a, name, &(dst)) == -EINVAL) \
			return 2;                          \
	} while (0)

static int64_t mla_cache_bytes(enum dtype kv, int64_t latent, int64_t rope)
{
	if (kv == DT_FP8)
		return latent + 4 * ((latent + 127) / 128) + 2 * rope;
	return dtype_bytes(kv, latent + rope);
}

int cmd_op(int argc, char **argv)
{
	const char *hw_name = "h200";
	bool json = false, graph = false;
	struct args a = {0};
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (cli_is_help(s)) {
			usage(stdout);
			return 0;
		} else if (strcmp(s, "--json") == 0) {
			json = true;
		} else if (strcmp(s, "--graph") == 0) {
			graph = true;
		} else if (strcmp(s, "--hw") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "k3sim op: --hw needs a value\n");
				return 2;
			}
			hw_name = argv[++i];
		} else if (s[0] == '-') {
			fprintf(stderr, "k3sim op: unknown option '%s'\n", s);
			return 2;
		} else if (!a.spec) {
			for (int k = 0; k < N_SPECS; k++)
				if (strcmp(specs[k].name, s) == 0)
					a.spec = &specs[k];
			if (!a.spec) {
				const char *names[N_SPECS + 1];
				for (int k = 0; k < N_SPECS; k++)
					names[k] = specs[k].name;
				names[N_SPECS] = NULL;
				const char *hint = err_suggest(s, names);
				fprintf(stderr, "k3sim op: unknown kind '%s'%s%s%s; see 'k3sim op --help'\n", s,
					hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
				return 2;
			}
		} else {
			const char *eq = strchr(s, '=');
			if (!eq || eq == s) {
				fprintf(stderr, "k3sim op: expected key=value, got '%s'\n", s);
				return 2;
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
				snprintf(key, sizeof key, "%.*s", (int)(eq - s), s);
				const char *hint = err_suggest(key, names);
				fprintf(stderr, "k3sim op %s: unknown key '%s'%s%s%s\n", a.spec->name, key,
					hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
				return 2;
			}
			a.val[found] = eq + 1;
		}
	}
	if (!a.spec) {
		usage(stderr);
		return 2;
	}
	for (int k = 0; a.spec->keys[k].name; k++)
		if (!a.spec->keys[k].def && !a.val[k]) {
			fprintf(stderr, "k3sim op %s: missing %s=... (%s)\n", a.spec->name, a.spec->keys[k].name,
				a.spec->keys[k].help);
			return 2;
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
		}
		break;
	case OP_KDA_CHUNK:
	case OP_KDA_DECODE:
		I64("b", op.b);
		I64("h", op.h);
		I64("k", op.dk);
		I64("v", op.dv);
		DT("state", op.s_dtype);
		if (op.kind == OP_KDA_CHUNK) {
			I64("t", op.t);
			I64("chunk", op.chunk);
			I64("ctx", op.ctx);
			if (op.chunk < 1) {
				fprintf(stderr, "k3sim op kda_chunk: chunk must be at least 1\n");
				return 2;
			}
		} else {
			I64("t", op.t);
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
		int64_t in = 1, out = 1;
		I64("m", op.m);
		I64("n", op.n);
		I64("in", in);
		I64("out", out);
		DT("dtype", op.a_dtype);
		op.o_dtype = op.a_dtype;
		op.in_tensors = (double)in;
		op.out_tensors = (double)out;
		op.flops_per_element = 2;
		break;
	}
	default:
		break;
	}
	op_fill(&op);

	struct hw hw;
	struct err e;
	if (hw_load(&hw, hw_name, &e) < 0) {
		cli_error("op", &e);
		return 1;
	}
	struct cost_opts opts = {.cuda_graph = graph};
	struct op_cost c;
	sim_op_cost(&hw, &op, &opts, &c);
	int64_t bytes = op_bytes(&op) + (op_is_comm(op.kind) ? op.comm_bytes : 0);
	if (json) {
		struct jw w;
		jw_init(&w, stdout);
		jw_begin_object(&w, NULL);
		jw_str(&w, "kind", op_kind_name(op.kind));
		jw_str(&w, "hw", hw.name);
		jw_bool(&w, "hw_calibrated", hw.calibrated);
		jw_f64(&w, "time_s", c.time_s);
		jw_f64(&w, "cycles", c.cycles);
		jw_str(&w, "bound", bound_name(c.bound));
		jw_f64(&w, "flops", op.flops);
		jw_i64(&w, "bytes", bytes);
		jw_f64(&w, "compute_s", c.compute_s);
		jw_f64(&w, "memory_s", c.memory_s);
		jw_f64(&w, "latency_s", c.latency_s);
		jw_f64(&w, "comm_s", c.comm_s);
		jw_f64(&w, "waves", c.waves);
		jw_begin_object(&w, "bytes_by_kind");
		jw_i64(&w, "weights", op.bytes_weight);
		jw_i64(&w, "activations_in", op.bytes_act_in);
		jw_i64(&w, "activations_out", op.bytes_act_out);
		jw_i64(&w, "kv_read", op.bytes_kv_read);
		jw_i64(&w, "kv_write", op.bytes_kv_write);
		jw_i64(&w, "state_read", op.bytes_state_read);
		jw_i64(&w, "state_write", op.bytes_state_write);
		jw_end_object(&w);
		if (op.serial_steps)
			jw_i64(&w, "serial_steps", op.serial_steps);
		jw_end_object(&w);
		jw_finish(&w);
		return 0;
	}
	char t1[32], t2[32], t3[32], t4[32], b1[32];
	printf("%s on %s%s: %s (%.4g cycles at %.0f MHz), %s-bound\n", a.spec->name, hw.name,
	       hw.calibrated ? "" : " (datasheet)", cli_time(c.time_s, t1, sizeof t1), c.cycles,
	       hw.sm_clock_hz / 1e6, bound_name(c.bound));
	printf("  compute %s, memory %s, latency %s", cli_time(c.compute_s, t2, sizeof t2),
	       cli_time(c.memory_s, t3, sizeof t3), cli_time(c.latency_s, t4, sizeof t4));
	if (c.comm_s > 0)
		printf(", comm %s", cli_time(c.comm_s, t1, sizeof t1));
	printf("\n  %.4g FLOPs, %s moved", op.flops, cli_bytes((double)bytes, b1, sizeof b1));
	if (c.time_s > 0 && !op_is_comm(op.kind))
		printf(" (%.1f TFLOP/s, %.0f GB/s achieved)", op.flops / c.time_s / 1e12, (double)bytes / c.time_s / 1e9);
	if (op.serial_steps)
		printf("\n  %lld dependent chunk steps per (sequence, head) in %.0f wave(s)", (long long)op.serial_steps,
		       c.waves);
	printf("\n");
	return 0;
}
