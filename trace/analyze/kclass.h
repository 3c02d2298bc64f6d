#ifndef K3_TRACE_KCLASS_H
#define K3_TRACE_KCLASS_H

/* Kernel classes: which kernels are communication (NCCL, DeepEP normal and low-latency
 * dispatch/combine, NVSHMEM, custom all-reduce, the MoE all-to-all kernels of SGLang, vLLM and
 * TensorRT-LLM), the collective each performs and the library it comes from. One rule set for all
 * of k3sim: trace summary's communication and overlap, and calibration (calib/, which may name a
 * collective instead of a kernel glob). The default table is trace/rules/default.yaml, compiled
 * into the binary; a file of the same shape can replace it.
 *
 *   rules:
 *     - name: DeepEP low-latency dispatch          # a label (default: the pattern)
 *       kernel: "*deep_ep::internode_ll::dispatch*" # glob over the demangled name, any case
 *       class: comm                                 # comm or compute
 *       collective: dispatch                        # comm: allreduce allgather reducescatter
 *                                                   #   alltoall sendrecv broadcast reduce dispatch
 *                                                   #   combine other
 *       library: deepep-ll                          # comm: a free label
 *
 * The first rule that matches decides; a kernel no rule matches is compute. Tables are bounded
 * (TRACE_KCLASS_MAX_RULES). Errors say file:line:col. */

#include <stdbool.h>
#include <stddef.h>

#include "util/arena.h"
#include "util/err.h"

enum { TRACE_KCLASS_MAX_RULES = 512 };

enum trace_kclass {
	TRACE_KCLASS_COMPUTE,
	TRACE_KCLASS_COMM,
};

struct trace_kclass_rule {
	const char *name, *pattern;
	enum trace_kclass cls;
	const char *collective;  /* comm: one of the names above; NULL for compute */
	const char *library;     /* comm; NULL for compute */
	int line;
};

struct trace_kclass_rules {
	char file[256];
	struct trace_kclass_rule *rule;
	int n;
	struct arena arena;      /* owns the rules and their strings */
};

/* "default" (the embedded table) or a path. On failure r holds nothing to release. */
int trace_kclass_load(struct trace_kclass_rules *r, const char *name_or_path, struct err *e);
int trace_kclass_load_string(struct trace_kclass_rules *r, const char *file, const char *text,
			     size_t len_bytes, struct err *e);
void trace_kclass_release(struct trace_kclass_rules *r);

/* The first rule that matches kernel, or -1 (compute). */
int trace_kclass_find(const struct trace_kclass_rules *r, const char *kernel);
/* Whether kernel is communication. */
bool trace_kclass_is_comm(const struct trace_kclass_rules *r, const char *kernel);
/* Whether s names a collective of the table's vocabulary. */
bool trace_kclass_collective_known(const char *s);

/* Glob match: * any run, ? one byte, [set] with ranges and a leading ! or ^ for negation; ASCII
 * case ignored when fold_case. */
bool trace_glob(const char *pattern, const char *s, bool fold_case);

#endif
