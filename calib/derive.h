#ifndef K3_CALIB_DERIVE_H
#define K3_CALIB_DERIVE_H

/* Model ops derived from framework records (trace/analyze/shapes.h): an operator call recorded with its
 * input sizes ("aten::mm, sizes = [[1024, 2048], [2048, 768]]") becomes a `k3sim op` spec with
 * full dims ("gemm m=1024 n=768 k=2048 dtype=bf16"), by the rules of a YAML file (the embedded
 * default is trace/rules/aten.yaml, which documents the forms). calib_match uses them for the
 * kernels launched inside such a call (the innermost framework record on the launching thread).
 *
 *   rules:
 *     - name: aten::mm                  # label (default: the first call pattern)
 *       call: "aten::mm"                # glob, or a list of globs, over the operator name
 *       form: gemm                      # gemm linear grouped_gemm attention collective gather
 *                                       #   memory skip
 *       a: 0                            # argument positions the form reads (gemm, linear,
 *       b: 1                            #   grouped_gemm, gather)
 *       layout: bhsd                    # attention: bhsd (SDPA) or bshd (flash-style)
 *       collective: allreduce           # collective: which; ranks: N (else opts.ranks)
 *       read: all                       # memory: all, or a list of positions
 *       write: largest                  # memory: largest, first, none, sum, or a list
 *
 * Rule files are bounded (CALIB_DERIVE_RULES_MAX rules). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/ops.h"
#include "trace/analyze/shapes.h"
#include "util/arena.h"
#include "util/dtype.h"
#include "util/err.h"

enum { CALIB_DERIVE_RULES_MAX = 256, CALIB_DERIVE_CALLS_MAX = 24, CALIB_DERIVE_POS_MAX = 8 };

enum calib_derive_form {
	CALIB_FORM_GEMM,
	CALIB_FORM_LINEAR,
	CALIB_FORM_GROUPED_GEMM,
	CALIB_FORM_ATTENTION,
	CALIB_FORM_COLLECTIVE,
	CALIB_FORM_GATHER,
	CALIB_FORM_MEMORY,
	CALIB_FORM_SKIP,
};

enum calib_derive_write { CALIB_WRITE_LARGEST, CALIB_WRITE_FIRST, CALIB_WRITE_NONE, CALIB_WRITE_SUM,
			  CALIB_WRITE_LIST };

struct calib_derive_rule {
	const char *name;
	const char *call[CALIB_DERIVE_CALLS_MAX];
	int n_call;
	enum calib_derive_form form;
	int a, b;                 /* argument positions */
	bool bshd;                /* attention layout [B, S, H, D] */
	const char *collective;   /* allreduce allgather reducescatter alltoall */
	int64_t ranks;            /* 0: opts.ranks */
	bool read_all;
	int n_read, read[CALIB_DERIVE_POS_MAX];
	enum calib_derive_write write;
	int n_write, writes[CALIB_DERIVE_POS_MAX];
	int line;
};

struct calib_derive {
	char file[256];
	struct calib_derive_rule *rule;
	int n;
	struct arena arena;
};

struct calib_derive_opts {
	enum dtype dtype; /* element type where the record gives none (emit_nvtx): default bf16 */
	int64_t ranks;    /* collectives whose rule names no ranks; 0: unknown */
};

/* "default" (the embedded trace/rules/aten.yaml) or a path. On failure d holds nothing and e
 * says file:line:col and why. */
int calib_derive_load(struct calib_derive *d, const char *name_or_path, struct err *e);
int calib_derive_load_string(struct calib_derive *d, const char *file, const char *text, size_t len_bytes,
                             struct err *e);
void calib_derive_release(struct calib_derive *d);

/* The first rule whose call pattern matches name, or -1. */
int calib_derive_find(const struct calib_derive *d, const char *name);

/* What calib_derive_op found. */
struct calib_derived {
	int rule;            /* -1: no rule matches the name */
	bool skipped;        /* a skip rule */
	bool dtype_assumed;  /* the record gave no element types: opts.dtype was taken */
	char spec[256];      /* the `k3sim op` text */
	struct op op;
	char why[256];       /* when it could not be derived: which rule and why */
};

/* 0 with r->spec and r->op; -ENOENT when no rule matches (r->why says so) or a skip rule
 * matched (r->skipped); -EINVAL when the rule's inputs are missing or inconsistent (r->why:
 * "aten::mm: input 1 is not a tensor", ...). */
int calib_derive_op(const struct calib_derive *d, const struct fw_call *c, const struct calib_derive_opts *o,
                    struct calib_derived *r);

#endif
