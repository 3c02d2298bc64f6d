#ifndef K3_TRACE_SHAPES_H
#define K3_TRACE_SHAPES_H

/* Framework records: the operator calls that a framework logs with their input shapes, as
 * k3sim reads them from a trace's range texts. Two sources write the same text form:
 *
 *  - PyTorch under torch.autograd.profiler.emit_nvtx(record_shapes=True) pushes an NVTX range per
 *    operator call: "aten::mm, seq = 12, op_id = 5, sizes = [[4, 16], [16, 32]],
 *    input_op_ids = [(3,0), (4,0)]" (seq, op_id and input_op_ids optional; [] for a non-tensor
 *    argument; tensor lists flattened);
 *  - a Kineto trace recorded with record_shapes=True: `trace import --cpu-ops` keeps each cpu_op
 *    event that has "Input Dims" as a range "aten::mm, sizes = [[4, 16], [16, 32]], types =
 *    [c10::BFloat16, c10::BFloat16]" ("Input type" as `types`, nested lists flattened).
 *
 * fw_call_parse reads either. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/dtype.h"
#include "util/err.h"

enum { FW_INPUTS_MAX = 32, FW_RANK_MAX = 8, FW_NAME_MAX = 128 };

struct fw_tensor {
	int rank;                 /* -1: not a tensor ([] in sizes); 0: a 0-d tensor (types say) */
	int arg;                  /* the argument it came from (a tensor list's tensors share one) */
	int64_t dim[FW_RANK_MAX];
	char type[32];            /* the framework's type name ("c10::BFloat16"); "" unknown */
};

struct fw_call {
	char name[FW_NAME_MAX];   /* "aten::mm" */
	int n_in;                 /* inputs recorded (beyond FW_INPUTS_MAX: counted, not kept) */
	int n_kept;
	bool has_types;
	bool truncated;           /* a rank beyond FW_RANK_MAX or inputs beyond FW_INPUTS_MAX */
	struct fw_tensor in[FW_INPUTS_MAX];
};

/* 1: text is a framework record (a name, then ", sizes = [...]" among its fields) and c holds
 * it; 0: text is not one (a plain range name, "k3sim ..." ranges, CUB's own ranges);
 * -EINVAL: it looks like one but the sizes do not parse (e says where, col 1-based in text).
 * c is written only when 1 is returned. */
int fw_call_parse(const char *text, struct fw_call *c, struct err *e);

/* Elements of input i (product of its dims); -1 when not a tensor, -ERANGE past 2^62. */
int64_t fw_tensor_elements(const struct fw_tensor *t);

/* Bytes per element of a framework type name: c10::BFloat16 2, float 4, long int 8, ...;
 * 0 when unknown or empty. */
int fw_type_bytes(const char *type);

/* The k3sim dtype of a framework type name (bf16, fp16, fp32, fp8 E4M3); -1 for other types
 * (integers, bool) and unknown names. */
int fw_type_dtype(const char *type, enum dtype *out);

#endif
