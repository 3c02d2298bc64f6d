#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""run.sh's summaries as one table: per round and window, the steps over 10 % and the op classes
over 15 % (pairings x classes) of the two k3-kernels presets under --clock power.
usage: python3 table.py DIR > DIR/table.md"""
import os
import re
import sys

ROUNDS = {"x": "22 (03x, fit)", "r": "23 (03r, held out)", "v": "24 (03v, held out)"}


def rows(path):
    text = open(path).read().split("## --clock power")[1].split("## --clock")[0]
    agg = {}
    for line in text.splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) < 6 or c[1] not in ("k3-kernels", "k3-kernels-clk"):
            continue
        steps, of = (int(x) for x in c[2].split("/"))
        cls = [] if c[5] == "-" else c[5].split(", ")
        a = agg.setdefault(c[1], [0, 0, []])
        a[0] += steps
        a[1] += of
        a[2] += cls
    return agg


def main():
    here = sys.argv[1]
    found = []
    for n in os.listdir(here):
        m = re.fullmatch(r"([xrv])-w([0-9.]+)", n)
        if m and os.path.isfile(os.path.join(here, n, "summary.md")):
            found.append((" xrv".index(m.group(1)), float(m.group(2)), m.group(1), m.group(2), n))
    print("# The window limiter: steps over 10 % and classes over 15 % under --clock power\n")
    print("| round | power_window_ms | preset | steps > 10 % | class misses (pairing x class) | classes |")
    print("| --- | ---: | --- | ---: | ---: | --- |")
    for _, _, r, w, n in sorted(found):
        for preset, (s, of, cls) in sorted(rows(os.path.join(here, n, "summary.md")).items()):
            names = sorted({c.split()[0] for c in cls})
            print("| %s | %s | %s | %d / %d | %d | %s |" % (ROUNDS[r], w, preset, s, of, len(cls),
                                                       ", ".join(names) or "-"))


main()
