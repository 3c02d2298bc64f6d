#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A power class's active draw and FLOP energy from ops run back to back (op-sustained-extract.py's
CSVs): P = P_idle + A (f/f_b)^k + e_flop FLOPs (f/f_b)^g / t(f) + e_byte bytes / t(f), per class
(A, e_flop) by least squares on log P over its ops, at NVML's clock over each range's second half
(an op the limiter held has P at the limit and f below boost: the same equation), t(f) the preset's
time for the op at f (`k3sim op --clock MHz`), e_byte and P_idle the preset's. Prints per class A
(W at boost), e_flop (pJ) and the fit's residuals, and the device keys.
Ops whose kernels covered less than BUSY of the range's second half (launch gaps) are left out.
--hold-e CLASS=PJ (repeatable): that class's FLOP energy given and its A alone fitted (a class whose
ops all run at one FLOP rate, which cannot tell A from e: KDA's decode).
--residuals: each op's modelled draw against its measured one, per class, after the table.
--fp8-scale: the GEMMs with FP8 activations left out of their class's fit; then the share of the
class's FLOP energy that makes each of them draw what it measured (the preset key
power_flop_fp8_scale), their median printed.
--hold-welem PJ: that energy given (implies --welem), the class's A and e_flop fitted beside it.
--welem: the grouped_gemm class fitted with a third term, the energy of the MXFP4 weight elements
its tiled kernel expands (`k3sim op --json` power.welems; the preset key power_welem_pj):
P = P_idle + A (f/f_b)^k + (e_flop FLOPs + e_welem welems) (f/f_b)^g / t(f) + e_byte bytes / t(f).
The FLOPs are the energy's (power.energy_flops: FP8 ones at the preset's power_flop_fp8_scale).
usage: active-fit.py K3SIM PRESET.yaml [--k K (1)] [--g G (1)] [--busy BUSY (0.97)] [--hold-e CLASS=PJ] [--welem | --hold-welem PJ]
                     [--residuals] OPS-SUSTAINED.csv..."""
import csv
import itertools
import json
import math
import subprocess
import sys

sys.path.insert(0, __import__("os").path.dirname(__import__("os").path.abspath(__file__)))
from capdb import take_float  # noqa: E402

args = sys.argv[1:]
K = take_float(args, "--k", 1.0)
G = take_float(args, "--g", 1.0)
BUSY = take_float(args, "--busy", 0.97)
RESIDUALS = "--residuals" in args
if RESIDUALS:
    args.remove("--residuals")
FP8 = "--fp8-scale" in args
if FP8:
    args.remove("--fp8-scale")
WELEM = "--welem" in args
if WELEM:
    args.remove("--welem")
HOLD_WELEM = None  # --hold-welem PJ: the weight expansions' energy given (e.g. another card's fit)
if "--hold-welem" in args:
    i = args.index("--hold-welem")
    try:
        HOLD_WELEM = float(args[i + 1]) * 1e-12
    except (IndexError, ValueError):
        sys.exit("--hold-welem: PJ (e.g. 40)")
    del args[i:i + 2]
    WELEM = True
fp8pts = {}
HOLD_E = {}  # --hold-e CLASS=PJ: the class's FLOP energy given, its A alone fitted
while "--hold-e" in args:
    i = args.index("--hold-e")
    try:
        c, v = args[i + 1].split("=")
        HOLD_E[c] = float(v) * 1e-12
    except (IndexError, ValueError):
        sys.exit("--hold-e: CLASS=PJ (e.g. kda=0.562)")
    del args[i:i + 2]
if len(args) < 3:
    sys.exit(__doc__)
k3sim, preset, files = args[0], args[1], args[2:]
for f in [preset] + files:
    if not __import__("os").path.isfile(f):
        sys.exit("active-fit: %s: no such file" % f)


def op(spec, clock):
    p = subprocess.run([k3sim, "op"] + spec.split() + ["--hw", preset, "--clock", clock, "--json"],
                       capture_output=True, text=True)
    return json.loads(p.stdout) if p.returncode == 0 else None


with open(preset) as f:
    text = f.read()


def key(name, default):
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(name + ":"):
            return float(s.split(":", 1)[1].split("#")[0])
    return default


idle, e_byte, fb = key("power_idle_w", 125.0), key("power_byte_pj", 65.3) * 1e-12, key("sm_clock_mhz", 1980.0)
pts = {}
for path in files:
    with open(path) as f:
        for r in csv.DictReader(f):
            if float(r["busy"]) < BUSY:  # launch gaps (a memcpy: 0): not the op's own draw
                continue
            d = op(r["spec"], "power")
            if not d or "power" not in d:
                continue
            mhz = min(float(r["sm_mhz"]), fb)
            t = op(r["spec"], "%.1f" % mhz)["time_s"]
            v = mhz / fb
            w = pts
            if FP8 and r["spec"].split()[0] in ("gemm", "grouped_gemm") and " dtype=fp8" in " " + r["spec"]:
                w = fp8pts
            pw = d["power"]
            fl = d["flops"] if FP8 else pw.get("energy_flops", d["flops"])
            we = pw.get("welems", 0.0) if WELEM and pw["class"] == "grouped_gemm" else 0.0
            if FP8 and fl != pw.get("energy_flops", fl) and pw.get("energy_flops", 0) > 0:
                we *= fl / pw["energy_flops"]  # the raw expansions (the preset's FP8 share undone)
            w.setdefault(pw["class"], []).append(
                (r["spec"], float(r["power_w"]), v, fl / t * v ** G, e_byte * d["bytes"] / t, we / t * v ** G))


def model_w(q, a, e, ew=0.0):
    """An op's modelled draw: q = (spec, P, v, FLOP rate, byte W, welem rate)."""
    return idle + a * q[2] ** K + e * q[3] + q[4] + ew * q[5]


def fit3(ps):
    """(A, e_flop, e_welem) >= 0 minimising sum log^2(P_model / P): a grid, then coordinate
    refinement."""
    def err(a, e, ew):
        return sum(math.log(max(model_w(q, a, e, ew), 1.0) / q[1]) ** 2 for q in ps)
    best = min(((err(a, e, ew), a, e, ew) for a in range(0, 1001, 25) for e in [i * 0.1e-12 for i in range(0, 41)]
                for ew in [i * 5e-12 for i in range(0, 41)]))
    _, a, e, ew = best
    for sa, se, sw in ((10, 0.05e-12, 2e-12), (2, 0.01e-12, 0.5e-12), (0.5, 0.002e-12, 0.1e-12)):
        for _ in range(80):
            cand = min(((err(max(0, a + da * sa), max(0, e + de * se), max(0, ew + dw * sw)), max(0, a + da * sa),
                         max(0, e + de * se), max(0, ew + dw * sw)) for da, de, dw in itertools.product((-1, 0, 1), repeat=3)))
            if cand[1:] == (a, e, ew):
                break
            _, a, e, ew = cand
    return a, e, ew, math.sqrt(err(a, e, ew) / len(ps))


def fit(ps, e_held=None, ew=0.0):
    """(A, e) >= 0 minimising sum log^2(P_model / P): a grid then coordinate refinement (e_held:
    e given, A alone; ew: the weight expansions' energy given)."""
    def err(a, e):
        return sum(math.log(max(model_w(q, a, e, ew), 1.0) / q[1]) ** 2 for q in ps)
    if e_held is not None:
        a = min(range(0, 1001), key=lambda a: err(a, e_held))
        a = min((a + d * 0.01 for d in range(-100, 101)), key=lambda x: err(max(0, x), e_held))
        return max(0, a), e_held, math.sqrt(err(max(0, a), e_held) / len(ps))
    best = min(((err(a, e), a, e) for a in range(0, 1001, 10) for e in [i * 0.05e-12 for i in range(0, 81)]))
    _, a, e = best
    for step_a, step_e in ((5, 0.02e-12), (1, 0.005e-12), (0.2, 0.001e-12)):
        for _ in range(50):
            cand = min(((err(max(0, a + da * step_a), max(0, e + de * step_e)), max(0, a + da * step_a),
                         max(0, e + de * step_e)) for da, de in itertools.product((-1, 0, 1), repeat=2)))
            if cand[1:] == (a, e):
                break
            _, a, e = cand
    return a, e, math.sqrt(err(a, e) / len(ps))


print("k = %.2f, g = %.2f, idle %.0f W, byte %.1f pJ (%s)" % (K, G, idle, e_byte * 1e12, preset))
print("| class | ops | at boost / held | A at boost W | e_flop pJ | rms log error | worst op |")
print("| --- | ---: | --- | ---: | ---: | ---: | --- |")
keys = []
res = []
for c, ps in sorted(pts.items()):
    ew = 0.0
    if WELEM and c == "grouped_gemm" and HOLD_WELEM is not None:
        ew = HOLD_WELEM
        a, e, rms = fit(ps, HOLD_E.get(c), ew)
    elif WELEM and c == "grouped_gemm":
        a, e, ew, rms = fit3(ps)
    else:
        a, e, rms = fit(ps, HOLD_E.get(c))
    res += [(c, q[0], q[2] * fb, q[1], model_w(q, a, e, ew)) for q in ps]
    worst = max(ps, key=lambda q: abs(math.log(model_w(q, a, e, ew) / q[1])))
    we = 100 * (model_w(worst, a, e, ew) / worst[1] - 1)
    nb = sum(1 for q in ps if q[2] >= 0.99)
    print("| %s | %d | %d / %d | %.0f | %.3f | %.3f | %s %+.0f %% |" % (c, len(ps), nb, len(ps) - nb, a, e * 1e12, rms,
                                                                       worst[0][:48], we))
    keys.append("power_active_w_%s=%.0f power_flop_pj_%s=%.3f" % (c, a, c, e * 1e12))
    if ew > 0:
        print("| %s, weight expansions | | | | e_welem %.1f pJ an element | | |" % (c, ew * 1e12))
        keys.append("power_welem_pj=%.1f" % (ew * 1e12))
    if c in fp8pts and e > 0:
        ss = sorted((p - idle - a * v ** K - b) / (e * x + ew * xw) for _, p, v, x, b, xw in fp8pts[c])
        med = ss[len(ss) // 2] if len(ss) % 2 else 0.5 * (ss[len(ss) // 2 - 1] + ss[len(ss) // 2])
        print("| %s, FP8 activations | %d | share of the class's FLOP energy: median %.3f (%s) |" % (
            c, len(ss), med, " ".join("%.3f" % x for x in ss)))
        keys.append("power_flop_fp8_scale=%.3f" % med)
print("\n" + " ".join(keys))
if RESIDUALS:
    print("\n| class | op | MHz | measured W | model W | error |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for c, spec, mhz, p, m in res:
        print("| %s | %s | %.0f | %.0f | %.0f | %+.1f %% |" % (c, spec, mhz, p, m, 100 * (m / p - 1)))
