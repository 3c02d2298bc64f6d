#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The steps' errors of heldout-run.sh's reports (bench/results/power-limiter-2026-12-03/): per
configuration and clock (power: the `<preset> preset` columns; measured: `<preset> @clock`), for the
k3-kernels and k3-kernels-clk presets, the steps, their mean |error| and mean error (%).
usage: heldout-errors.py OUT CONFIG..."""
import glob
import os
import re
import statistics
import sys

if len(sys.argv) < 3:
    sys.exit(__doc__)
out = sys.argv[1]
print("| config | clock | preset | steps | mean abs error | mean error |")
print("| --- | --- | --- | ---: | ---: | ---: |")
for cfg in sys.argv[2:]:
    for clock in ("power", "measured"):
        errs = {"k3-kernels": [], "k3-kernels-clk": []}
        for f in sorted(glob.glob(os.path.join(out, "*-%s" % cfg, "%s-*.md" % clock))):
            hdr = None
            for line in open(f).read().split("\n"):
                if line.startswith("| step |"):
                    hdr = [x.strip() for x in line.strip().strip("|").split("|")]
                    continue
                if hdr and re.match(r"^\| (prefill|decode) ", line):
                    c = [x.strip() for x in line.strip().strip("|").split("|")]
                    if len(c) != len(hdr):
                        continue
                    for name, v in errs.items():
                        key = name + (" @clock" if clock == "measured" else " preset")
                        if key in hdr and hdr.index(key) + 1 < len(c):
                            try:
                                v.append(float(c[hdr.index(key) + 1].replace("%", "")))
                            except ValueError:
                                pass
                elif hdr and not line.startswith("|"):
                    hdr = None
        for name, v in errs.items():
            if v:
                print("| %s | %s | %s | %d | %.2f %% | %+.2f %% |" % (cfg, clock, name, len(v),
                                                                 statistics.mean(abs(x) for x in v), statistics.mean(v)))
