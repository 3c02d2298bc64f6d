#ifndef K3_CALIB_RULES_H
#define K3_CALIB_RULES_H

/* Kernel-name rules: how a kernel of another program (an SGLang or vLLM run imported from nsys)
 * maps to a model op, when no "k3sim op=..." NVTX range names it. A YAML file:
 *
 *   rules:
 *     - name: fla chunk_kda             # optional label (default: the pattern)
 *       kernel: "*chunk_kda*"           # glob over the demangled kernel name: * ? [abc] [a-z]
 *       collective: allreduce           # instead of (or with) kernel: the kernels the kernel
 *                                       #   classes (trace/analyze/kclass.h) call this collective
 *                                       #   (NCCL, DeepEP, custom all-reduce, MoE all-to-all)
 *       op: kda_chunk                   # a `k3sim op` kind, or `skip` (known, not a model op)
 *       group: kda_chunk                # optional: kernels of one group under one NVTX range
 *                                       #   instance add up to one sample (multi-kernel ops)
 *       keys:                           # the op's keys (see `k3sim op --help`)
 *         b: nvtx                       # the same key from the enclosing NVTX ranges' key=value
 *         t: "nvtx:seq_len"             # another key of the ranges
 *         h: "nvtx|grid.y/4"            # alternatives: the first one known wins
 *         state: fp32                   # a literal
 *
 * A value is a literal, or terms `nvtx`, `nvtx:NAME`, `grid.x|y|z`, `block.x|y|z` or `bytes` (of
 * a memcpy/memset), each with an optional `*N` or `/N` (N a positive integer), separated by '|'.
 * Memcpys are named like nsys does: "[CUDA memcpy Device-to-Device]", "[CUDA memset]".
 * The first rule that matches a name decides. Rule files are bounded (CALIB_RULES_MAX rules). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/ops.h"
#include "trace/analyze/kclass.h"
#include "util/arena.h"
#include "util/err.h"

enum {
	CALIB_RULES_MAX = 256,
	CALIB_RULE_KEYS_MAX = 12,
	CALIB_VALUE_ALTS_MAX = 4,
	CALIB_NVTX_DEPTH_MAX = 16, /* enclosing ranges searched for keys */
};

enum calib_term_kind {
	CALIB_TERM_LITERAL,
	CALIB_TERM_NVTX, /* name: the range key */
	CALIB_TERM_GRID_X,
	CALIB_TERM_GRID_Y,
	CALIB_TERM_GRID_Z,
	CALIB_TERM_BLOCK_X,
	CALIB_TERM_BLOCK_Y,
	CALIB_TERM_BLOCK_Z,
	CALIB_TERM_BYTES,
};

struct calib_term {
	enum calib_term_kind kind;
	const char *text; /* literal, or the NVTX key */
	int64_t mul, div; /* value * mul / div (integers) */
};

struct calib_value {
	int n;
	struct calib_term alt[CALIB_VALUE_ALTS_MAX];
};

struct calib_rule {
	const char *name;
	const char *pattern;      /* NULL: any kernel of `collective` */
	const char *collective;   /* NULL: any kernel the pattern matches */
	const char *op;    /* opspec kind; NULL for `skip` */
	const char *group; /* NULL: each kernel is its own sample */
	int n_keys;
	const char *key[CALIB_RULE_KEYS_MAX];
	struct calib_value value[CALIB_RULE_KEYS_MAX];
	int line; /* where the rule starts in its file */
};

struct calib_rules {
	char file[256];
	struct calib_rule *rule;
	int n;
	struct arena arena; /* owns the rules and their strings */
	struct trace_kclass_rules classes; /* the kernel classes (the embedded default) */
};

/* What a rule's values are read from. */
struct calib_rule_ctx {
	int32_t grid[3], block[3];
	int64_t bytes;
	const char *const *nvtx; /* texts of the enclosing ranges, innermost first */
	int n_nvtx;
};

/* "default" (the embedded rules for SGLang/vLLM-style kernels) or a path. On failure r holds
 * nothing and e says file:line:col and why. */
int calib_rules_load(struct calib_rules *r, const char *name_or_path, struct err *e);
int calib_rules_load_string(struct calib_rules *r, const char *file, const char *text, size_t len_bytes,
                            struct err *e);
void calib_rules_release(struct calib_rules *r);

/* The first rule whose pattern (and collective) matches `kernel`, or -1. */
int calib_rules_find(const struct calib_rules *r, const char *kernel);

/* Whether `kernel` is communication, by the kernel classes (trace/analyze/kclass.h): one rule set for
 * trace summary and calibration. */
bool calib_rules_is_comm(const struct calib_rules *r, const char *kernel);

/* The op rule `idx` makes of ctx: its spec ("gemm m=64 n=... dtype=bf16") into spec[0..n) and
 * the parsed op into *op. -ENOENT when a key's value is unknown here (e says which), -EINVAL when
 * the values do not make a valid op. */
int calib_rule_build(const struct calib_rules *r, int idx, const struct calib_rule_ctx *ctx, struct op *op,
                     char *spec, size_t n, struct err *e);

/* Glob match: * any run, ? one byte, [set] with ranges and a leading ! or ^ for negation
 * (trace_glob, case kept). */
bool calib_glob(const char *pattern, const char *s);

/* The value of key `key` in an NVTX text of key=value tokens ("k3sim op=gemm m=64 ..."; spaces
 * or commas between tokens) into buf; false when absent. */
bool calib_nvtx_value(const char *text, const char *key, char *buf, size_t n);

#endif
