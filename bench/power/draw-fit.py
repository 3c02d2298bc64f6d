#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The power classes' FLOP energies and the HBM byte's from a k3sim capture's board-power readings,
fitted over the whole timeline (2026-12-03, lead). The captures read NVML's instantaneous power
(NVML_FI_DEV_POWER_INSTANT) every 20 ms; it holds each value ~100 ms and follows the load within
one value (bench/results/clock-probe-h200-2026-12-03/: 405 W the moment an FFMA kernel starts, 919 W
at a GEMM's start, 711 W 100 ms later once capped), so a reading is the draw of the ~100 ms before
it, every kernel of it: the op's, the bench's L2 flushes and fills between timed launches (streams
at the copy rate), cuBLAS's reference GEMMs. calibrate's draw fit (calib/fit.c) gives each op the
readings inside its own launches instead, which for ops shorter than the window show their
neighbours: the byte's energy came out at 213-229 pJ there, 65.3 pJ on a stream.

Model (sim/power.h): reading = P_idle + sum over the kernels in the window before it of
(e_class x FLOPs x (f / f_boost)^g + e_byte x bytes) x (the share of the kernel inside the window)
/ window. Kernels: in a `k3sim op=` range its op's FLOPs, bytes and power class (`k3sim op ...
--clock power --json`), shared over the range's kernels by their time; in a `k3-bench cublaslt gemm
m= n= k=` range a BF16 GEMM (class gemm); outside ranges, fill / copy / flush kernels stream at
STREAM_BPS bytes/s; anything else nothing. Non-negative least squares (coordinate descent) in W
over the readings (consecutive equal readings taken once), for each window and lag of a grid: the
least residual. Kernels outside every range take the work of the last ranged launch of the same
kernel name (back-to-back rows, graph replays).
State (2026-12-03): a first try, used by no preset: on round 26 run a's bench capture the fit's rms
is 136 W and the byte comes out at 165 pJ (65.3 measured): the bench's unranged work is not yet
attributed well enough. usage: draw-fit.py K3SIM DB[.xz]... [--gamma G] [--idle W] [--byte-pj B (held)]"""
import bisect
import json
import math
import re
import subprocess
import sys

from capdb import open_capture, take_float

args = sys.argv[1:]
GAMMA = take_float(args, "--gamma", 2.0)
IDLE = take_float(args, "--idle", 121.5)
BYTE_HELD = take_float(args, "--byte-pj", -1.0)
if len(args) < 2:
    sys.exit(__doc__)
K3SIM, dbs = args[0], args[1:]
FB = 1980.0
STREAM_BPS = 3.6e12
CLASSES = ["gemm", "grouped_gemm", "grouped_gemv", "mla_decode", "mla_prefill", "kda", "vector"]
_cache = {}


def op_info(spec):
    if spec not in _cache:
        r = subprocess.run([K3SIM, "op"] + spec.split() + ["--clock", "power", "--json"], capture_output=True, text=True)
        if r.returncode != 0:
            _cache[spec] = None
        else:
            j = json.loads(r.stdout)
            p = j.get("power") or {}
            _cache[spec] = (p.get("class", "vector"), float(j.get("flops", 0)), float(j.get("bytes", 0)))
    return _cache[spec]


def load(path):
    with open_capture(path) as c:
        rng = c.execute("SELECT start, end, text FROM NVTX_EVENTS WHERE text LIKE 'k3sim op=%' OR "
                        "text LIKE 'k3-bench cublaslt%' ORDER BY start").fetchall()
        rt = dict(c.execute("SELECT correlationId, start FROM CUPTI_ACTIVITY_KIND_RUNTIME").fetchall())
        ks = c.execute("SELECT k.start, k.end, k.correlationId, s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                       "JOIN StringIds s ON s.id = k.shortName ORDER BY k.start").fetchall()
        rd = c.execute("SELECT timestamp, powerW, smClockMHz FROM K3SIM_GPU_METRICS WHERE powerW > 0 "
                       "ORDER BY timestamp").fetchall()
    starts = [r[0] for r in rng]
    by_range = {}
    kern = []  # [start, end, class, flops, bytes] (flops, bytes filled per range below)
    for s, e, corr, name in ks:
        t0 = rt.get(corr)
        j = bisect.bisect_right(starts, t0) - 1 if t0 is not None else -1
        while j >= 0 and rng[j][1] < t0:
            j -= 1  # ranges do not nest here: the last one starting before the launch, if it holds it
        if j >= 0 and rng[j][0] <= t0 <= rng[j][1]:
            by_range.setdefault(j, []).append(len(kern))
            kern.append([s, e, None, 0.0, 0.0])
        elif re.search(r"fill|copy|flush", name):
            kern.append([s, e, "vector", 0.0, (e - s) * 1e-9 * STREAM_BPS])
    for j, idx in by_range.items():
        text = rng[j][2]
        if text.startswith("k3sim op="):
            info = op_info(text[len("k3sim op="):])
            if not info:
                continue
            cls, fl, by = info
        else:
            m = re.search(r"m=(\d+) n=(\d+) k=(\d+)", text)
            if not m:
                continue
            mm, nn, kk = (int(x) for x in m.groups())
            cls, fl, by = "gemm", 2.0 * mm * nn * kk, 2.0 * (mm * kk + nn * kk + mm * nn)
        tot = sum(kern[i][1] - kern[i][0] for i in idx) or 1
        for i in idx:
            sh = (kern[i][1] - kern[i][0]) / tot
            kern[i][2], kern[i][3], kern[i][4] = cls, fl * sh, by * sh
    # kernels outside every range (back-to-back rows, graph replays, which k3-bench times without
    # ranges right after the same op's ranged launches): the work of the last ranged launch of the
    # same kernel name before them
    last = {}
    by_start = {}
    for i, k in enumerate(kern):
        by_start[(k[0], k[1])] = i
    out = []
    for s, e, corr, name in ks:
        i = by_start.get((s, e))
        if i is not None and kern[i][2]:
            k = kern[i]
            if not re.search(r"fill|copy|flush", name) or k[3] > 0:
                last[name] = (k[2], k[3], k[4])
            out.append(k)
        elif name in last:
            cls, fl, by = last[name]
            out.append([s, e, cls, fl, by])
    kern = out
    # readings: the first of each run of equal values (NVML holds a value ~100 ms)
    reads = []
    for t, p, f in rd:
        if reads and p == reads[-1][1]:
            continue
        reads.append((t, p, f))
    return kern, reads


def design(kern, reads, win_ns, lag_ns):
    ks = [k[0] for k in kern]
    rows = []
    for t, p, f in reads:
        hi, lo = t - lag_ns, t - lag_ns - win_ns
        v = (min(f, FB) / FB) ** GAMMA if f > 0 else 1.0
        a = [0.0] * len(CLASSES)
        b = 0.0
        j = bisect.bisect_left(ks, lo - 2e9)
        busy = 0
        while j < len(kern) and kern[j][0] < hi:
            s, e, cls, fl, by = kern[j]
            j += 1
            ov = min(e, hi) - max(s, lo)
            if ov <= 0:
                continue
            sh = ov / (e - s)
            a[CLASSES.index(cls)] += sh * fl * v / (win_ns * 1e-9)
            b += sh * by / (win_ns * 1e-9)
            busy += ov
        if busy > 0:
            rows.append((a, b, p))
    return rows


def nnls(rows, byte_held):
    n = len(CLASSES) + 1
    # normal equations G x = h, x >= 0, by coordinate descent
    G = [[0.0] * n for _ in range(n)]
    h = [0.0] * n
    for a, b, p in rows:
        x = a + [b]
        y = p - IDLE
        if byte_held >= 0:
            y -= byte_held * 1e-12 * b
            x = a + [0.0]
        for i in range(n):
            if x[i] == 0:
                continue
            h[i] += x[i] * y
            for k in range(n):
                G[i][k] += x[i] * x[k]
    sol = [0.0] * n
    for _ in range(3000):
        for i in range(n):
            if G[i][i] <= 0:
                continue
            r = h[i] - sum(G[i][k] * sol[k] for k in range(n) if k != i)
            sol[i] = max(0.0, r / G[i][i])
    if byte_held >= 0:
        sol[-1] = byte_held * 1e-12
    res = []
    for a, b, p in rows:
        pred = IDLE + sum(e * x for e, x in zip(sol[:-1], a)) + sol[-1] * b
        res.append(pred - p)
    rms = math.sqrt(sum(r * r for r in res) / len(res)) if res else float("nan")
    return sol, rms, G


kern, reads = [], []
for d in dbs:
    k, r = load(d)
    kern += k
    reads += r
kern.sort()
reads.sort()
best = None
print("| window ms | lag ms | readings | rms W | " + " | ".join(CLASSES) + " | byte pJ |")
print("| ---: | ---: | ---: | ---: | " + " | ".join("---:" for _ in CLASSES) + " | ---: |")
for w in (20, 50, 100, 150):
    for lag in (0, 20, 50):
        rows = design(kern, reads, w * 1e6, lag * 1e6)
        sol, rms, G = nnls(rows, BYTE_HELD)
        pts = [G[i][i] > 0 for i in range(len(CLASSES))]
        print("| %d | %d | %d | %.1f | " % (w, lag, len(rows), rms) +
              " | ".join(("%.3f" % (e * 1e12)) if ok else "-" for e, ok in zip(sol[:-1], pts)) +
              " | %.1f |" % (sol[-1] * 1e12))
        if best is None or rms < best[0]:
            best = (rms, w, lag, sol, pts)
rms, w, lag, sol, pts = best
print()
print("best: window %d ms, lag %d ms, rms %.1f W (gamma %.2f, idle %.1f W)" % (w, lag, rms, GAMMA, IDLE))
print("preset lines:")
for c, e, ok in zip(CLASSES, sol[:-1], pts):
    if ok and e > 0:
        print("  power_flop_pj_%s: %.4g" % (c, e * 1e12))
print("  power_byte_pj: %.4g" % (sol[-1] * 1e12))
