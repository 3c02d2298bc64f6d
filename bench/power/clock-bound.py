#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Each op's time at boost and at a capped clock, and the share of its boost time bound by the SM
clock (hw clock_bound_<class>, sim/power.h), from kernels/calls/clock-bound-2026-12-03.sh's two
captures of the same k3-bench families: cool (each timed launch after 100 ms idle: boost) and hog
(after 100 ms of GEMMs at the power limit). Per `k3sim op=` range text: the median kernel time of
its launches (the union of its kernels' intervals) and the median NVML SM clock nearest them, in
each capture; the physical model's ratio of the two clocks' times, rho = t(f_hog) / t(f_cool)
(`k3sim op ... --hw h200-datasheet --clock MHZ`, launch gaps taken out); the measured ratio r =
t_hog / t_cool. The roofline t(f) = t_boost max(1, b rho) gives b = r / rho where r > 1 + NOISE
(else b <= 1 / rho: an upper bound). Per power class: b as the time-weighted median of its ops with
rho >= RHO_MIN (where the clock moves the model's time at all).
--excess: rho with the measured time beyond the physical model's scaling with the SM clock (the
preset key clock_scaled_excess: t(f) = t_phys(f) + (t_boost - t_phys(boost)) f_boost / f), so b is
the roofline's share on top of that law.
Ops whose inputs are hot in L2 in the bench (route, combine: timed without the L2 flush) are left
out: the hog's GEMMs evict what the cool run finds in L2.
--share: instead, per op the share of its boost time that runs on the SM clock whatever the model
says (hw clock_sm_share_<class>: t(f) = t_boost (1 - s + s f_boost / f)), s = (r - 1) / (f_cool /
f_hog - 1), its class the h200 preset's power class (`k3sim op --clock power --json`; the MXFP4
routed experts at most 16 rows a touched expert grouped_gemv, as the k3-kernels presets have it); per class
the time-weighted median, and the law's error against r at s = 0 and at that median.
--hw NAME: the card's presets (default h200: h200-datasheet for the physical model, h200 for the
power class; h100: h100-datasheet and h100, 2026-12-06).
usage: clock-bound.py [--excess | --share] [--hw NAME] COOL_DIR HOG_DIR K3SIM [> table.md]   (each DIR: <family>.db.xz)"""
import bisect
import math
import glob
import json
import os
import subprocess
import sys

from capdb import open_capture, take_str, union_ns

EXCESS = "--excess" in sys.argv
SHARE = "--share" in sys.argv
argv = [x for x in sys.argv[1:] if x not in ("--excess", "--share")]
HW = take_str(argv, "--hw", "h200", "a preset name (h200, h100)")
if len(argv) != 3:
    sys.exit(__doc__)
cool_dir, hog_dir, k3sim = argv
NOISE, RHO_MIN = 0.02, 1.10
LAUNCH_S = 2.5e-6  # h200-datasheet launch_latency_us
CLASS = {"gemm": "gemm", "grouped_gemm": "grouped_gemm", "mla_prefill": "mla_prefill", "mla_decode": "mla_decode",
         "kda_chunk": "kda", "kda_decode": "kda"}


def load(db_xz):
    with open_capture(db_xz) as c:
        ks = c.execute("""SELECT n.text, n.start, n.end, k.start, k.end FROM NVTX_EVENTS n
                          JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.start BETWEEN n.start AND n.end
                          JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.correlationId = r.correlationId
                          WHERE n.text LIKE 'k3sim op=%' ORDER BY n.start""").fetchall()
        g = c.execute("SELECT timestamp, smClockMHz FROM K3SIM_GPU_METRICS WHERE smClockMHz > 0 "
                      "ORDER BY timestamp").fetchall()
    gt = [x[0] for x in g]
    ranges = {}
    for text, ns, ne, ks_, ke in ks:
        ranges.setdefault((text, ns), []).append((ks_, ke))
    per = {}
    for (text, ns), iv in ranges.items():
        iv.sort()
        busy = union_ns(iv)
        mid = (iv[0][0] + iv[-1][1]) // 2
        j = bisect.bisect_left(gt, mid)
        near = [g[k] for k in (j - 1, j) if 0 <= k < len(g)]
        f = min(near, key=lambda x: abs(x[0] - mid))[1] if near else float("nan")
        per.setdefault(text[len("k3sim op="):], []).append((busy * 1e-9, f))
    return per


def med(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def gather(d):
    out = {}
    for f in sorted(glob.glob(os.path.join(d, "*.db.xz"))):
        for spec, v in load(f).items():
            out.setdefault(spec, []).extend(v)
    return out


def model_s(spec, mhz):
    args = spec.split()
    r = subprocess.run([k3sim, "op"] + args + ["--hw", HW + "-datasheet", "--clock", "%.0f" % mhz, "--json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None
    j = json.loads(r.stdout)
    return j["time_s"] - LAUNCH_S  # the datasheet preset's eager launch gap


cool, hog = gather(cool_dir), gather(hog_dir)
rows = []
for spec in sorted(set(cool) & set(hog)):
    if spec.split()[0] in ("route", "combine"):
        continue
    tc, fc = med(x[0] for x in cool[spec]), med(x[1] for x in cool[spec])
    th, fh = med(x[0] for x in hog[spec]), med(x[1] for x in hog[spec])
    if not (tc > 0 and th > 0 and fc > 0 and fh > 0):
        continue
    mc, mh = model_s(spec, min(fc, 1980)), model_s(spec, min(fh, 1980))
    rho = mh / mc if mc and mh and mc > 0 else float("nan")
    r = th / tc
    kind = spec.split()[0]
    cls = CLASS.get(kind, "vector")
    if EXCESS and mc and mh:
        # the measured time beyond the physical model's scales with the SM clock (clock_scaled_excess)
        x = max(0.0, tc - mc)
        rho = (mh + x * fc / fh) / tc if x > 0 else rho
    b = r / rho if rho == rho and r > 1 + NOISE else float("nan")
    rows.append((cls, spec, tc, fc, th, fh, rho, r, b, len(cool[spec]), len(hog[spec])))

def power_class(spec):
    # the MXFP4 routed experts as gemvs (at most 16 rows a touched expert: the grouped_fp4_gemv_rows
    # of the k3-kernels presets; h200 has no such rule, so its class would be grouped_gemm)
    kv = dict(x.split("=", 1) for x in spec.split()[1:] if "=" in x)
    if spec.startswith("grouped_gemm") and kv.get("w_dtype") == "mxfp4" and \
            float(kv.get("m", 0)) <= 16 * float(kv.get("touched", 0)):
        return "grouped_gemv"
    r = subprocess.run([k3sim, "op"] + spec.split() + ["--hw", HW, "--clock", "power", "--json"],
                       capture_output=True, text=True)
    return json.loads(r.stdout)["power"]["class"] if r.returncode == 0 else "?"


def wmedian(vw):
    vw = sorted(vw)
    tot, acc = sum(w for _, w in vw), 0
    for v, w in vw:
        acc += w
        if acc >= tot / 2:
            return v
    return vw[-1][0]


if SHARE:
    print("| power class | op | cool: us @ MHz | hog: us @ MHz | clock ratio | measured r | share s |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    got = []
    for cls, spec, tc, fc, th, fh, rho, r, b, nc, nh in rows:
        q = fc / fh
        if q < 1.05:  # the hog left the clock near the cool one: no lever
            continue
        sh = (r - 1) / (q - 1)
        got.append((power_class(spec), spec, tc, fc, th, fh, q, r, sh))
        print("| %s | %s | %.1f @ %.0f | %.1f @ %.0f | %.3f | %.3f | %.2f |" % (got[-1][0], spec[:90], tc * 1e6, fc,
                                                                         th * 1e6, fh, q, r, sh))
    print()
    print("| power class | ops | share: time-weighted median | range | error at s = 0 | error at the median |")
    print("| --- | ---: | ---: | --- | ---: | ---: |")
    for cls in sorted({x[0] for x in got}):
        sel = [x for x in got if x[0] == cls]
        m = min(1.0, max(0.0, wmedian([(x[8], x[2]) for x in sel])))
        w = sum(x[2] for x in sel)

        def err(sh):
            return sum(x[2] * abs(math.log((1 - sh + sh * x[6]) / x[7])) for x in sel) / w

        print("| %s | %d | %.2f | %.2f .. %.2f | %.2f %% | %.2f %% |" % (cls, len(sel), m, min(x[8] for x in sel),
                                                                     max(x[8] for x in sel), 100 * err(0), 100 * err(m)))
    sys.exit(0)

print("| class | op | cool: us @ MHz | hog: us @ MHz | model rho | measured r | b = r / rho |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for cls, spec, tc, fc, th, fh, rho, r, b, nc, nh in rows:
    print("| %s | %s | %.1f @ %.0f | %.1f @ %.0f | %.3f | %.3f | %s |" % (
        cls, spec[:90], tc * 1e6, fc, th * 1e6, fh, rho, r,
        "%.3f" % b if b == b else ("<= %.3f" % (1 / rho) if rho == rho and rho > 0 else "-")))
print()
print("| class | ops (rho >= %.2f) | b: time-weighted median | b range | ops with r <= 1 + %.2f |" % (RHO_MIN, NOISE))
print("| --- | ---: | ---: | --- | ---: |")
for cls in sorted({x[0] for x in rows}):
    sel = [x for x in rows if x[0] == cls and x[6] == x[6] and x[6] >= RHO_MIN]
    bs = []
    flat = 0
    for x in sel:
        if x[8] == x[8]:
            bs.append((min(x[8], 1.0), x[2]))
        else:
            bs.append((min(1.0, 1 / x[6]), x[2]))  # flat: at most 1 / rho
            flat += 1
    if not bs:
        print("| %s | 0 | - | - | - |" % cls)
        continue
    bs.sort()
    tot, acc, wm = sum(w for _, w in bs), 0, bs[-1][0]
    for v, w in bs:
        acc += w
        if acc >= tot / 2:
            wm = v
            break
    print("| %s | %d | %.3f | %.3f-%.3f | %d |" % (cls, len(sel), wm, bs[0][0], bs[-1][0], flat))

# Each law's error over every op of a class (not only rho >= RHO_MIN): the predicted ratio
# max(1, b rho) against the measured r, mean |log| weighted by the cool time, at the b of least error
# (a grid of 0.80 .. 1.00); b = 1 is the model without the roofline.
print()
print("| class | ops | error at b = 1 | best b | error at best b |")
print("| --- | ---: | ---: | ---: | ---: |")
for cls in sorted({x[0] for x in rows}):
    sel = [x for x in rows if x[0] == cls and x[6] == x[6]]

    def err(b):
        w = sum(x[2] for x in sel)
        return sum(x[2] * abs(math.log(max(1.0, b * x[6]) / x[7])) for x in sel) / w

    grid = [0.80 + 0.005 * i for i in range(41)]
    best = min(grid, key=err)
    print("| %s | %d | %.2f %% | %.3f | %.2f %% |" % (cls, len(sel), 100 * err(1.0), best, 100 * err(best)))
