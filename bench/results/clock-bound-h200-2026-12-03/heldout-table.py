#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The held-out comparison of heldout-run.sh's configurations (from kernels/slice/heldout_summary.py's
tables of each OUT/<round>-<config>/): per round and configuration, for the k3-kernels and
k3-kernels-clk presets under --clock power and k3-kernels at the measured clock, the steps over
10 % of the two pairings' 36 and the op classes over 15 %; then the totals over the rounds.
The configurations are CONFIGS's (default "base laws held", this folder's heldout-run.sh; the
delayed limiter's bench/results/power-limiter-2026-12-03/heldout-run.sh has its own); rounds without a
folder in OUT are left out.
usage: [CONFIGS="cfg ..."] heldout-table.py OUT"""
import os
import subprocess
import sys

out = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
summary = os.path.join(here, "..", "..", "..", "kernels", "slice", "heldout_summary.py")
ROUNDS = [("03r", "23"), ("03v", "24"), ("03z", "25"), ("03za", "26"), ("03zb", "27"), ("04", "28")]
CFGS = (os.environ.get("CONFIGS") or "base laws held").split()
COLS = [("power", "k3-kernels"), ("power", "k3-kernels-clk"), ("measured", "k3-kernels @clock")]


def rows(d):
    txt = subprocess.run([sys.executable, summary, d, "x"], capture_output=True, text=True, check=True).stdout
    clock, got = None, {}
    for line in txt.splitlines():
        if line.startswith("## --clock "):
            clock = line.split()[-1]
            continue
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if clock and len(c) == 6 and "/" in c[2]:
            bad, n = (int(x) for x in c[2].split("/"))
            cls = [] if c[5] == "-" else [x.strip() for x in c[5].split(",")]
            g = got.setdefault((clock, c[1]), [0, 0, []])
            g[0] += bad
            g[1] += n
            g[2] += cls
    return got


print("| round | config | power, k3-kernels: steps > 10 % | classes > 15 % | power, k3-kernels-clk: steps | classes | "
      "measured clock, k3-kernels: steps | classes |")
print("| --- | --- | ---: | --- | ---: | --- | ---: | --- |")
tot = {}
for rd, name in ROUNDS:
    for cfg in CFGS:
        d = os.path.join(out, "%s-%s" % (rd, cfg))
        if not os.path.isdir(d):
            continue
        got = rows(d)
        cells = []
        for key in COLS:
            g = got.get(key)
            if not g:
                cells += ["-", ""]
                continue
            t = tot.setdefault((cfg,) + key, [0, 0, 0])
            t[0] += g[0]
            t[1] += g[1]
            t[2] += len(g[2])
            cells += ["%d / %d" % (g[0], g[1]), ", ".join(g[2]) or "-"]
        print("| %s | %s | %s |" % (name, cfg, " | ".join(cells)))
print()
print("| config | power, k3-kernels: steps > 10 %; class misses | power, k3-kernels-clk | measured clock, k3-kernels |")
print("| --- | --- | --- | --- |")
for cfg in CFGS:
    cells = []
    for key in COLS:
        t = tot.get((cfg,) + key)
        cells.append("%d / %d; %d" % (t[0], t[1], t[2]) if t else "-")
    print("| %s | %s |" % (cfg, " | ".join(cells)))
