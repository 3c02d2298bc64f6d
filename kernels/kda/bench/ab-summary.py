#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Medians of kda-bench --prefill-ab rows (one sequence) per (T, H, state, set), with the intra
kernel's end and the recurrent kernel's tail after it (2026-12-04k).

  ab-summary.py LOG...   (kda-bench's printed rows, e.g. a call's log.txt)"""
import collections
import re
import statistics
import sys

ROW = re.compile(r'prefill@(\S+)\s+(\S+) N=1\s+T=(\d+)\s+H=(\d+)\s+([\d.]+) us\s+'
                 r'\(intra\s+([\d.]+), recurrent\s+([\d.]+)\)')
if len(sys.argv) < 2:
    sys.exit(__doc__)
rows = collections.defaultdict(list)
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                lab, dt, t, h, tot, intra, rec = m.groups()
                rows[(int(t), int(h), dt, lab)].append((float(tot), float(intra), float(rec)))
print("| T | H | state | set | n | median us | min | max | intra ends (median) | tail (median) |")
print("| ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for k in sorted(rows):
    v = rows[k]
    tot = [x[0] for x in v]
    print("| %d | %d | %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f |" %
          (k[0], k[1], k[2], k[3], len(v), statistics.median(tot), min(tot), max(tot),
           statistics.median([x[1] for x in v]), statistics.median([x[2] for x in v])))
