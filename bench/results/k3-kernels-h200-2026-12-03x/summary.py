#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Round 22's held-out reports (run.sh: <clock>-<slice><bench>.md): kernels/slice/heldout_summary.py on this
folder (its parser, pct and tables, also read by power-rise/summary.py).
usage: python3 bench/results/k3-kernels-h200-2026-12-03x/summary.py > .../summary.md"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "kernels", "slice"))
from heldout_summary import main, pct, tables  # noqa: E402,F401 (pct, tables: power-rise/summary.py)

if __name__ == "__main__":
    main(HERE, "Round 22")
