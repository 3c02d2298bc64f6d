#ifndef K3_SIM_OPSPEC_H
#define K3_SIM_OPSPEC_H

/* One op spelled as `KIND key=value ...` — the syntax of `k3sim op` and of the NVTX ranges the
 * project's bench drivers put around each measured launch ("k3sim op=gemm m=64 n=7168 k=7168
 * dtype=bf16"), so a measured kernel maps to the op the model predicts for it. */

#include "model/ops.h"
#include "util/err.h"

struct opspec_key {
	const char *name;
	const char *def;  /* NULL: required; "": optional without a default */
	const char *help;
};

struct opspec_kind {
	const char *name;
	enum op_kind kind;
	const char *summary;
	struct opspec_key keys[12];
};

/* The kinds, in help order; *n receives their count. */
const struct opspec_kind *opspec_kinds(int *n);

/* kind + key=value arguments -> an op with dims, dtypes and derived bytes (op_fill).
 * Unknown kinds and keys get a suggestion; errors leave *out untouched. */
int opspec_parse(const char *kind, int nargs, const char *const *args, struct op *out, struct err *e);

/* A whole line: "gemm m=64 n=..." or "k3sim op=gemm m=64 ..."; at most 32 fields. */
int opspec_parse_line(const char *line, struct op *out, struct err *e);

#endif
