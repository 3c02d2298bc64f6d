#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""kernels/slice/heldout_summary.py on synthetic validate-slice.py reports: the steps over 10 %, the
worst step, the mean |error| of its steps, the prefill errors and the classes over 15 % of a pairing; pairings found by the reports'
names (the default three runs' first); a report without its tables,
a binary file and a missing folder exit 1 with a message naming them, never a traceback.
usage: test-heldout-summary.py SOURCE_ROOT"""
import os
import sys
import tempfile

root = sys.argv[1]
script = os.path.join(root, "kernels", "slice", "heldout_summary.py")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap, run_script  # noqa: E402

tap = Tap()
check = tap.check


REPORT = """## Steps

| step | launch | measured | sum of its op ranges | h200 preset | error | k3-kernels preset | error |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |
| prefill T=4096 | eager | 83.4 ms | 79.2 ms | 61.2 ms | -26.6 % | 76.1 ms | -8.7 % |
| prefill T=16384 | eager | 332.6 ms | 284.2 ms | 236.0 ms | -29.0 % | 294.2 ms | -11.6 % |
| decode B=1 C=8192 | graph | 2.6 ms | - | 1.7 ms | -32.1 % | 2.4 ms | +4.0 % |

## Op classes

| class | ops | measured | h200: predicted | median / p90 | bias | k3-kernels: predicted | median / p90 | bias |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| short_conv | 2 | 12.61 ms | 6.51 ms (-48 %) | 47.9 / 48.5 | -47.9 % | 10.35 ms (-18 %) | 17.0 / 18.2 | -17.0 % |
| gemm.bf16 | 62 | 382.91 ms | 295.53 ms (-23 %) | 26.0 / 54.6 | -26.0 % | 383.95 ms (+0 %) | 3.8 / 9.0 | -3.0 % |
"""


def run(*args):
    return run_script(script, *args)


with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "boost-ab.md"), "w") as f:
        f.write(REPORT)
    rc, out, err = run(d, "Round T")
    check("good report: exit 0", rc == 0, err)
    check("title", out.startswith("# Round T held out by run"), out)
    row = next((l for l in out.splitlines() if l.startswith("| ab | k3-kernels |")), "")
    check("k3-kernels row: 1 of 3 steps over 10 %", "| 1 / 3 |" in row, row)
    check("k3-kernels row: worst step", "prefill T=16384 eager -11.6 %" in row, row)
    check("k3-kernels row: mean abs error", "| 8.1 % |" in row, row)
    check("k3-kernels row: prefill errors", "-8.7 / -11.6" in row, row)
    check("k3-kernels row: classes over 15 %", row.endswith("| short_conv -18 |"), row)
    h200 = next((l for l in out.splitlines() if l.startswith("| ab | h200 |")), "")
    check("h200 row: 3 of 3 over, both classes", "| 3 / 3 |" in h200 and "short_conv -48, gemm.bf16 -23" in h200, h200)

    with open(os.path.join(d, "boost-ap.md"), "w") as f:  # a pairing of its own (round 24's, against round 23)
        f.write(REPORT)
    with open(os.path.join(d, "power-ab.txt"), "w") as f:  # not a report's name: ignored
        f.write("nothing\n")
    rc, out, err = run(d, "Round T")
    rows = [l[:6] for l in out.splitlines() if l.startswith("| a")]
    check("other pairings found, after the default ones", rc == 0 and rows[:2] == ["| ab |"] * 2 and "| ap |" in rows[2:], out)
    os.remove(os.path.join(d, "boost-ap.md"))

    with open(os.path.join(d, "boost-ac.md"), "w") as f:
        f.write("# a report without its tables\n\nnothing here\n")
    rc, out, err = run(d, "Round T")
    check("report without tables: exit 1", rc == 1, err)
    check("... names the file", "boost-ac.md" in err and "no steps table" in err, err)
    check("... no traceback", "Traceback" not in err, err)

    with open(os.path.join(d, "boost-ac.md"), "wb") as f:
        f.write(bytes(range(256)) * 4)
    rc, out, err = run(d, "Round T")
    check("binary report: exit 1, no traceback", rc == 1 and "Traceback" not in err, err)

    with open(os.path.join(d, "boost-ac.md"), "w") as f:
        f.write(REPORT.replace("-11.6 %", "n/a"))
    rc, out, err = run(d, "Round T")
    check("a step without its error: exit 1, named", rc == 1 and "boost-ac.md" in err and "Traceback" not in err, err)

rc, out, err = run(os.path.join(root, "no-such-folder"), "Round T")
check("missing folder: exit 1", rc == 1 and "not a folder" in err, err)
rc, out, err = run()
check("no arguments: usage, exit 1", rc == 1 and "usage" in err, err)

tap.done()
