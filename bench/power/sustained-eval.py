#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The K3 slice's steady state under the power limiter against `k3sim run --clock power` (each step
repeated back to back, the power model's regime). Input: a results folder of `k3-slice --sustain-ms`
(k3-slice-sustained.csv: each back-to-back step's time; k3-slice.db.xz: the capture, whose NVML
readings over the second half of each sustained range give the clock and power it settled at) and a
folder kept by `validate-slice.py --keep` (its k3-kernels preset(s) and prefill scenarios). Per shape:
the measured steady step (median of the second half), NVML's mean SM clock / power / temperature over
that half, and per preset the prediction under --clock power, its error, the clock it implies, and
the prediction at boost.
usage: sustained-eval.py K3SIM RESULTS KEEP [PRESET.yaml...] [--scenario S] [--md]"""
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__))))
from capdb import open_capture  # noqa: E402

args = sys.argv[1:]
scenario = "scenarios/k3-slice.yaml"
if "--scenario" in args:
    i = args.index("--scenario")
    scenario = args[i + 1]
    del args[i:i + 2]
if len(args) < 3:
    sys.exit(__doc__)
k3sim, results, keep = args[0], args[1], args[2]
presets = args[3:] or [os.path.join(keep, "k3-kernels-h200.yaml")]
for p in [os.path.join(results, "k3-slice-sustained.csv"), os.path.join(results, "k3-slice.db.xz")] + presets:
    if not os.path.isfile(p):
        sys.exit("sustained-eval: %s: no such file" % p)

steps = {}
with open(os.path.join(results, "k3-slice-sustained.csv")) as f:
    head = f.readline().strip().split(",")
    for n, line in enumerate(f, 2):
        r = dict(zip(head, line.strip().split(",")))
        try:
            key = (r["phase"], r["kind"], int(r["batch"]), int(r["tokens"]), int(r["ctx"]))
            steps.setdefault(key, []).append(float(r["time_us"]))
        except (KeyError, ValueError):
            sys.exit("sustained-eval: %s:%d: not a sustained row" % (f.name, n))

with open_capture(os.path.join(results, "k3-slice.db.xz")) as c:
    ranges = c.execute("SELECT start, end, text FROM NVTX_EVENTS WHERE text LIKE 'k3-slice sustained %'").fetchall()
    rd = c.execute("SELECT timestamp, smClockMHz, powerW, temperatureC FROM K3SIM_GPU_METRICS WHERE powerW > 0 "
                   "ORDER BY timestamp").fetchall()


def range_key(text):
    w = text.split()
    kv = dict(x.split("=", 1) for x in w[4:] if "=" in x)
    return (w[2], w[3], int(kv["b"]), int(kv["t"]), int(kv["ctx"]))


nvml = {}
for s, e, t in ranges:
    r = [x for x in rd if s + (e - s) / 2 <= x[0] <= e]
    if r:
        nvml[range_key(t)] = tuple(statistics.mean(x[i] for x in r) for i in (1, 2, 3))


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("sustained-eval: %s: %s" % (" ".join(cmd), p.stderr.strip()))
    return json.loads(p.stdout)


def equivalent_mhz(preset, key, t_us):
    """The one SM clock at which the step takes t_us (bisection over --clock MHz): the clock the
    power model's prediction amounts to, beside NVML's."""
    lo, hi = 1000.0, 1980.0
    if predict(preset, key, "%.1f" % hi) >= t_us * (1 - 1e-6):
        return hi
    if predict(preset, key, "%.1f" % lo) <= t_us:
        return lo
    for _ in range(14):
        mid = 0.5 * (lo + hi)
        if predict(preset, key, "%.1f" % mid) > t_us:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def predict(preset, key, clock):
    phase, _, b, t, ctx = key
    if phase == "prefill":
        scen = os.path.join(keep, "scenario-prompt-%d-cv.yaml" % t)
        if not os.path.isfile(scen):
            scen = os.path.join(keep, "scenario-prompt-%d.yaml" % t)
        d = run([k3sim, "run", scen, "--hw", preset, "--batch", "1", "--prompt", str(t), "--output", "1", "--clock",
                 clock, "--json"])
        return d["ttft_s"] * 1e6
    d = run([k3sim, "run", scenario, "--hw", preset, "--batch", str(b), "--prompt", str(ctx), "--output", "1",
             "--clock", clock, "--json"])
    return d["tpot_s"] * 1e6


print("| step | steps | measured steady | NVML MHz / W / C | preset | --clock power | error | its clock | at boost | error |")
print("| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |")
errs = {}
for key in sorted(steps, key=lambda k: (k[0] != "prefill", k[4], k[2], k[3])):
    v = steps[key]
    meas = statistics.median(v[len(v) // 2:])
    n = nvml.get(key)
    name = "%s %s B=%d T=%d C=%d" % (key[0], key[1], key[2], key[3], key[4])
    for preset in presets:
        pw = predict(preset, key, "power")
        bo = predict(preset, key, "boost")
        e = 100 * (pw / meas - 1)
        errs.setdefault(preset, []).append(e)
        print("| %s | %d | %.0f us | %s | %s | %.0f us | %+.1f %% | %.0f MHz | %.0f us | %+.1f %% |" % (
            name, len(v), meas, "%.0f / %.0f / %.0f" % n if n else "-", os.path.basename(preset), pw, e,
            equivalent_mhz(preset, key, pw), bo, 100 * (bo / meas - 1)))
for preset, es in errs.items():
    print("\n%s: --clock power, %d steps: mean |error| %.1f %%, over 10 %%: %d" % (
        os.path.basename(preset), len(es), sum(abs(x) for x in es) / len(es), sum(abs(x) > 10 for x in es)))
