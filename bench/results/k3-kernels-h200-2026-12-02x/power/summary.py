#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Summary of the power-regime reports of run.sh (power-<slice><bench>-<tag>.md of rounds 21 and 20):
per pairing and preset, prefill 4K / 16K, the steps over 10 %, the worst step with its measured and
modeled clocks, and the classes over 15 %, for each tag. usage: summary.py TAG... > summary.md"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = [("21 (02x)", HERE, ["ab", "ac", "ba", "bc", "ca", "cb"]),
          ("20 (02v)", os.path.join(HERE, "..", "..", "k3-kernels-h200-2026-12-02v", "power"), ["ab", "ba"])]
PRESETS = ["k3-kernels", "k3-kernels-clk"]
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "kernels", "slice"))
from heldout_summary import tables  # noqa: E402 (the reports' markdown tables, one parser)


def pctof(cell):
    m = re.search(r"([+-][0-9.]+) %", cell)
    return float(m.group(1)) if m else None


def summarize(path):
    ts = tables(path)
    steps = next(t for t in ts if t[0][0] == "step" and "launch" in t[0])
    classes = next(t for t in ts if t[0][0] == "class" and t[0][1] == "ops")
    h = steps[0]
    res = {}
    for pn in PRESETS:
        i = h.index("%s preset" % pn)
        has_clock = i + 2 < len(h) and h[i + 2] == "clock"
        clk_meas = h.index("SM clock (readings)") if "SM clock (readings)" in h else None
        rows = []
        for r in steps[1]:
            e = pctof(r[i + 1])
            rows.append(("%s %s" % (r[0], r[1]), e, r[clk_meas] if clk_meas is not None else "-",
                         r[i + 2] if has_clock else "-"))
        pre = [e for n, e, _, _ in rows if n.startswith("prefill")]
        worst = max(rows, key=lambda x: abs(x[1]))
        over = [x for x in rows if abs(x[1]) > 10]
        # reports before 2026-12-03 named only two presets in this header: the third's cells follow
        ci = (classes[0].index("%s: predicted" % pn) if "%s: predicted" % pn in classes[0]
              else classes[0].index("k3-kernels: predicted") + 3)
        cl = [(r[0], pctof(r[ci])) for r in classes[1]]
        res[pn] = {"prefill": pre, "worst": worst, "over": over, "classes_over": [c for c in cl if abs(c[1]) > 15],
                   "classes": cl}
    return res


tags = sys.argv[1:] or ["before", "after"]
print("<!-- written by bench/results/k3-kernels-h200-2026-12-02x/power/summary.py %s -->" % " ".join(tags))
for rnd, d, pairs in ROUNDS:
    print("\n## Round %s: steps (k3sim run --clock power) and classes (trace validate --clock power)\n" % rnd)
    print("| slice / bench | preset | tag | prefill 4K / 16K | steps over 10 % | worst step (measured clock / model's) "
          "| classes over 15 % |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for p in pairs:
        for pn in PRESETS:
            for tag in tags:
                f = os.path.join(d, "power-%s-%s.md" % (p, tag))
                if not os.path.exists(f):
                    continue
                s = summarize(f)[pn]
                w = s["worst"]
                print("| %s / %s | %s | %s | %+.1f / %+.1f %% | %d%s | %s %+.1f %% (%s / %s) | %s |" % (
                    p[0], p[1], pn, tag, s["prefill"][0], s["prefill"][1], len(s["over"]),
                    (": " + ", ".join("%s %+.1f" % (n, e) for n, e, _, _ in s["over"])) if s["over"] else "",
                    w[0], w[1], w[2], w[3],
                    ", ".join("%s %+.0f" % c for c in s["classes_over"]) or "none"))
