#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One line per report and preset (k3-kernels, k3-kernels-clk) of validate-slice --clock power:
steps over 10 % of 18, the worst, the prefill steps (error @ the model's clock) and the classes
over 15 % (class totals). usage: summary.py REPORT.md... > summary.txt"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from summary import pct, tables  # noqa: E402 (the round's report parser)

for f in sorted(sys.argv[1:]):
    ts = tables(f)
    steps = next(t for t in ts if t[0][0] == "step" and "launch" in t[0])
    classes = next(t for t in ts if t[0][0] == "class" and t[0][1] == "ops")
    for pr in ["k3-kernels", "k3-kernels-clk"]:
        ci = steps[0].index(f"{pr} preset") + 1
        errs = [(pct(r[ci]), r[0] + " " + r[1], r[ci+1] if ci+1 < len(r) else "") for r in steps[1]]
        over = [e for e in errs if abs(e[0]) > 10]
        worst = max(errs, key=lambda e: abs(e[0]))
        pre = " / ".join(f"{e[0]:+.1f}@{e[2]}" for e in errs if e[1].startswith("prefill"))
        cj = classes[0].index(f"{pr}: predicted")
        cl = [f"{r[0]} {pct(r[cj]):+.0f}" for r in classes[1] if abs(pct(r[cj])) > 15]
        print(f"{os.path.basename(f)[:-3]:40s} {pr:15s} {len(over):2d}/18 worst {worst[0]:+5.1f} {worst[1][:22]:22s} pre {pre} | {', '.join(cl)}")
