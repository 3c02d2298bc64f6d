#!/usr/bin/env bash
# Issue 17, 2026-12-04p call 3, one nvidia-h200: call 2's script (kernels/calls/k3-2026-12-04p2.sh:
# test-k3-formats, test-moe-gpu *wgf8* with memcheck and *mxfp8_quantize*, then the bench rows in ONE
# process alternating three times, then ncu of one diag-rqp-fp8b GLU launch) on call 3's build:
# "diag-rqp-fp8b" / "-fp8b-nomma" as meant (XV_F8B: the row floor folded into the table's constants,
# the 7-instruction decode with byte permutes by raw PTX, k3_prmt_raw(): call 2's form kept
# __byte_perm(), which masks its selectors again) beside call 1's diag-rqp-fp8 and the default
# wide2rqp; test_wgf8_operands with row 9's groups fixed (call 2's run failed on its own data: row
# 9's other groups could lift the floor past its smallest).
# From the repository root:  PACK=.gpu/p3 LIMIT=330 OUT=$OUT bash kernels/calls/k3-2026-12-04p3.sh
export PACK=${PACK:-.gpu/p3}
R="wide2rqp,diag-rqp-fp8,diag-rqp-fp8b,diag-rqp-fp8b-nomma"
export KERNELS=${KERNELS:-$R,$R,$R}
exec bash "$(dirname "$0")/k3-2026-12-04p2.sh"
