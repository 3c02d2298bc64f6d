#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Medians of kda-bench --prefill-ab rows per (sequences, T, H, state, set), with the intra
kernel's end, the recurrent kernel's tail after it (2026-12-04k) and the recurrent kernel the
rows took (their recur= field, 2026-12-05i on; '-' where a row has none).

  ab-summary.py LOG...   (kda-bench's printed rows, e.g. a call's log.txt)
  ab-summary.py --ratio NUM/DEN[/BY] LOG...   per point the ratio of set NUM's median to set
      DEN's, then per recurrent kernel set BY (default NUM) took: how many points, their range,
      those above 1 (e.g. --ratio pr3/chk/def: a forced kernel where the default takes another)"""
import collections
import re
import statistics
import sys

ROW = re.compile(r'prefill@(\S+)\s+(\S+) N=(\d+)\s+T=(\d+)\s+H=(\d+)\s+([\d.]+) us\s+'
                 r'\(intra\s+([\d.]+), recurrent\s+([\d.]+)\)(?:.*?warps=(\S+) recur=(\S+))?')


def ratios(rows, num, den, by=None):
    by = by or num
    keys = sorted(set(k[:4] for k in rows if k[4] == num and k[:4] + (den,) in rows and k[:4] + (by,) in rows))
    if not keys:
        sys.exit("ab-summary.py: no point has the sets %s" % ", ".join(sorted({num, den, by})))
    print("| N | T | H | state | %s / %s | %s took |" % (num, den, by))
    print("| ---: | ---: | ---: | --- | ---: | --- |")
    groups = collections.defaultdict(list)
    for k in keys:
        med = lambda lab: statistics.median(x[0] for x in rows[k + (lab,)])
        r = med(num) / med(den)
        took = ",".join(sorted(set(x[3].split("/")[0] for x in rows[k + (by,)])))
        groups[took].append((r, k))
        print("| %d | %d | %d | %s | %.3f | %s |" % (k + (r, took)))
    print()
    print("grouped by what %s took:" % by)
    for took, v in sorted(groups.items()):
        rs = [r for r, _ in v]
        above = ["%d x %d tokens, H = %d, %s: %.3f" % (k[0], k[1] // k[0], k[2], k[3], r) for r, k in sorted(v) if r > 1]
        print("%s: %d points, %.3f-%.3f, above 1: %d%s" % (took, len(v), min(rs), max(rs), len(above),
                                                         (" (" + "; ".join(above) + ")") if above else ""))


def main(paths, ratio=None):
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
    if ratio:
        ratios(rows, *ratio)
        return
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
    args = sys.argv[1:]
    ratio = None
    if args and args[0] == "--ratio":
        if len(args) < 2 or args[1].count("/") not in (1, 2) or "" in args[1].split("/"):
            sys.exit("ab-summary.py: --ratio wants NUM/DEN[/BY] (set labels), e.g. --ratio def/chk")
        ratio, args = args[1].split("/"), args[2:]
    if not args:
        sys.exit(__doc__)
    main(args, ratio)
