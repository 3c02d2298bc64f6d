#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A round's held-out reports (its run.sh: <clock>-<slice><bench>.md, from kernels/slice/validate-slice.py):
per clock, pairing and preset, the steps over 10 % with the largest |error|, the mean |error| of the
steps, and the op classes over 15 %
(their predicted/measured total).
usage: python3 kernels/slice/heldout_summary.py RESULTS_DIR "Round N" > RESULTS_DIR/summary.md"""
import os
import re
import sys

PAIRS = ["ab", "ac", "ba", "bc", "ca", "cb"]  # the default rounds' (three runs); others found by name


def pairs(here):
    """The pairings of the reports in `here` (<clock>-<slice><bench>.md), PAIRS' first, then others."""
    found = set()
    for n in os.listdir(here):
        m = re.fullmatch(r"(?:boost|power|measured)-([a-z]{2})\.md", n)
        if m:
            found.add(m.group(1))
    return [p for p in PAIRS if p in found] + sorted(found - set(PAIRS))
PRESETS = ["h200", "k3-kernels", "k3-kernels-clk"]  # --clock measured: "<preset> @clock" (at the clock read)


def tables(path):
    out, cur = [], None
    for line in open(path):
        if not line.startswith("|"):
            cur = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cur is None:
            cur = (cells, [])
            out.append(cur)
        elif not set("".join(cells)) <= set("-: "):
            cur[1].append(cells)
    return out


def pct(cell):
    m = re.search(r"([+-]?[0-9.]+) %", cell)
    return float(m.group(1)) if m else None


class ReportError(Exception):
    """A report that is not validate-slice.py's (the message names the file)."""


def main(here, title):
    print(f"# {title} held out by run: summary of run.sh's reports\n")
    print("Steps: 18 a pairing (prefill 4K, 16K eager; decode B = 1, 16, 64, 256 x C = 8K, 64K, eager and graph).")
    print("Classes: `trace validate`'s class total (predicted vs measured kernel time), over 15 % listed.\n")
    for clock in ["boost", "power", "measured"]:
        print(f"## --clock {clock}\n")
        print("| pairing | preset | steps > 10 % | worst step | mean abs error | prefill 4K / 16K | classes > 15 % (total) |")
        print("| --- | --- | ---: | --- | ---: | --- | --- |")
        for p in pairs(here):
            f = os.path.join(here, f"{clock}-{p}.md")
            if not os.path.exists(f):
                continue
            ts = tables(f)
            steps = next((t for t in ts if t[0][0] == "step" and "launch" in t[0]), None)
            classes = next((t for t in ts if len(t[0]) > 1 and t[0][0] == "class" and t[0][1] == "ops"), None)
            if steps is None or classes is None:
                raise ReportError(f"{f}: no {'steps' if steps is None else 'op classes'} table (not a validate-slice.py report)")
            for pr in PRESETS + [p + " @clock" for p in PRESETS]:
                col = pr if pr.endswith("@clock") else f"{pr} preset"
                if col not in steps[0]:
                    continue
                ci = steps[0].index(col) + 1
                if f"{pr}: predicted" not in classes[0]:
                    raise ReportError(f"{f}: the op classes table has no column for {pr}")
                errs = [(pct(r[ci]) if ci < len(r) else None, r[0] + " " + (r[1] if len(r) > 1 else "")) for r in steps[1]]
                bad = [e[1] for e in errs if e[0] is None]
                if bad or not errs:
                    raise ReportError(f"{f}: {pr}: no error (+x.y %) in the steps table for {bad[0] if bad else 'any step'}")
                over = [e for e in errs if abs(e[0]) > 10]
                worst = max(errs, key=lambda e: abs(e[0]))
                pre = " / ".join(f"{e[0]:+.1f}" for e in errs if e[1].startswith("prefill"))
                cj = classes[0].index(f"{pr}: predicted")
                cv = [(r[0], pct(r[cj]) if cj < len(r) else None) for r in classes[1]]
                if any(v is None for _, v in cv):
                    raise ReportError(f"{f}: {pr}: a class row without its predicted/measured error")
                cl = [f"{n} {v:+.0f}" for n, v in cv if abs(v) > 15]
                mean = sum(abs(e[0]) for e in errs) / len(errs)
                print(f"| {p} | {pr} | {len(over)} / {len(errs)} | {worst[1]} {worst[0]:+.1f} % | {mean:.1f} % | {pre} | "
                      f"{', '.join(cl) or '-'} |")
        print()
    steady_summary(here)


def steady_summary(here):
    """The steady state's table of the --clock power reports (validate-slice.py's, where the slice
    ran with --sustain-ms): per pairing and preset the steps over 10 %, the worst, the mean |error|."""
    rows = []
    for p in pairs(here):
        f = os.path.join(here, f"power-{p}.md")
        if not os.path.exists(f):
            continue
        t = next((t for t in tables(f) if len(t[0]) > 6 and t[0][2] == "measured steady"), None)
        if t is None:
            continue
        by = {}
        for r in t[1]:
            e = pct(r[6]) if len(r) > 6 else None
            if e is None:
                raise ReportError(f"{f}: a steady-state row without its error")
            by.setdefault(r[4].replace("-h200.yaml", ""), []).append((e, r[0]))
        for pr, errs in by.items():
            worst = max(errs, key=lambda x: abs(x[0]))
            rows.append(f"| {p} | {pr} | {sum(abs(e) > 10 for e, _ in errs)} / {len(errs)} | {worst[1]} {worst[0]:+.1f} % | "
                        f"{sum(abs(e) for e, _ in errs) / len(errs):.1f} % |")
    if rows:
        print("## --clock power, the steady state (each step back to back, k3-slice --sustain-ms)\n")
        print("| pairing | preset | steps > 10 % | worst step | mean abs error |")
        print("| --- | --- | ---: | --- | ---: |")
        print("\n".join(rows))
        print()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: heldout_summary.py RESULTS_DIR TITLE")
    if not os.path.isdir(sys.argv[1]):
        sys.exit(f"heldout_summary.py: {sys.argv[1]}: not a folder")
    try:
        main(sys.argv[1], sys.argv[2])
    except (ReportError, OSError, UnicodeDecodeError) as e:
        sys.exit(f"heldout_summary.py: {e}")
