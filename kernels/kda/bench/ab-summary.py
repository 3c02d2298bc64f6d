#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Medians of kda-bench --prefill-ab rows per (sequences, T, H, state, set), with the intra
kernel's end, the recurrent kernel's tail after it (2026-12-04k) and the recurrent kernel the
rows took (their recur= field, 2026-12-05i on; '-' where a row has none).

  ab-summary.py LOG...   (kda-bench's printed rows, e.g. a call's log.txt)"""
import collections
import re
import statistics
import sys

ROW = re.compile(r'prefill@(\S+)\s+(\S+) N=(\d+)\s+T=(\d+)\s+H=(\d+)\s+([\d.]+) us\s+'
                 r'\(intra\s+([\d.]+), recurrent\s+([\d.]+)\)(?:.*?warps=(\S+) recur=(\S+))?')


def main(paths):
    rows = collections.defaultdict(list)
    for path in paths:
        try:
            with open(path) as f:
                for line in f:
                    m = ROW.match(line)
                    if m:
                        lab, dt, n, t, h, tot, intra, rec, warps, recur = m.groups()
                        took = "%s/%s" % (recur, warps) if recur else "-"
                        rows[(int(n), int(t), int(h), dt, lab)].append(
                            (float(tot), float(intra), float(rec), took))
        except OSError as e:
            sys.exit("ab-summary.py: %s: %s" % (path, e.strerror))
    if not rows:
        sys.exit("ab-summary.py: no prefill@ rows in %s" % " ".join(paths))
    print("| N | T | H | state | set | n | median us | min | max | intra ends (median) | tail (median) | kernel/warps |")
    print("| ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for k in sorted(rows):
        v = rows[k]
        tot = [x[0] for x in v]
        print("| %d | %d | %d | %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f | %s |" %
              (k[0], k[1], k[2], k[3], k[4], len(v), statistics.median(tot), min(tot), max(tot),
               statistics.median([x[1] for x in v]), statistics.median([x[2] for x in v]),
               ",".join(sorted(set(x[3] for x in v)))))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
