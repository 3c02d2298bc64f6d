#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per (shape, kernel) the times and % of the cuBLASLt BF16 row beside each, of a k3-bench
--only moe_prefill A/B (K3_BENCH_WG_KERNELS alternating; kernels/calls/moe-ab-call.sh's
bench.txt), and per round the ratio of each kernel to the round's first (2026-12-04m).

  ab-summary.py BENCH.txt"""
import collections
import re
import statistics
import sys

if len(sys.argv) != 2:
    sys.exit(__doc__)
ROW = re.compile(r'grouped_gemm\s+(mxfp4_w\d+|bf16_w\d+)\s+tokens=(\d+) .*wg_kernel=(\S+)\s+([\d.]+) us')
REF = re.compile(r'\s*(?:gemm|ref).*cublasLt.*?([\d.]+) us')
rows = []
last = None
with open(sys.argv[1]) as f:
    for line in f:
        m = ROW.match(line)
        if m:
            last = [m.group(1), int(m.group(2)), m.group(3), float(m.group(4)) / 1000, None]
            rows.append(last)
            continue
        r = re.search(r'cublasLt\S*\s.*?([\d.]+) us', line)
        if r and last is not None and last[4] is None:
            last[4] = float(r.group(1)) / 1000
by = collections.defaultdict(list)
for r in rows:
    by[(r[0], r[1], r[2])].append(r)
print("| shape | T | kernel | n | ms (each) | median ms | % of the cuBLASLt beside (each) |")
print("| --- | ---: | --- | ---: | --- | ---: | --- |")
for k in sorted(by, key=lambda k: (k[0], -k[1], k[2])):
    v = by[k]
    pct = ["%.1f" % (100 * x[4] / x[3]) if x[4] else "-" for x in v]
    print("| %s | %d | %s | %d | %s | %.2f | %s |" % (k[0], k[1], k[2], len(v), " / ".join("%.2f" % x[3] for x in v),
                                                     statistics.median(x[3] for x in v), " / ".join(pct)))
