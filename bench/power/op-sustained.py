#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Each op run back to back (k3-bench K3_BENCH_SUSTAIN_MS; the per-range readings of
op-sustained-extract.py) against the power model of a preset: where the op stayed at boost (NVML's
clock >= 1960 MHz over the range's second half) its measured draw beside the model's draw at boost;
where the limiter held it lower, the measured clock beside the model's steady clock
(`k3sim op ... --clock power --json`: power.draw_w, power.steady_clock_hz).
usage: op-sustained.py K3SIM PRESET.yaml OPS-SUSTAINED.csv..."""
import csv
import json
import subprocess
import sys

if len(sys.argv) < 4:
    sys.exit(__doc__)
k3sim, preset, files = sys.argv[1], sys.argv[2], sys.argv[3:]
for f in [preset] + files:
    if not __import__("os").path.isfile(f):
        sys.exit("op-sustained: %s: no such file" % f)
print("| op | busy | NVML MHz | NVML W | model class | model W at boost | model steady MHz | draw error | clock error |")
print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: |")
derr, cerr = [], []
for path in files:
    with open(path) as f:
        for r in csv.DictReader(f):
            if float(r["busy"]) < 0.85:  # a memcpy (no kernel) or launch-bound: not the op's draw
                continue
            p = subprocess.run([k3sim, "op"] + r["spec"].split() + ["--hw", preset, "--clock", "power", "--json"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                continue
            pw = json.loads(p.stdout).get("power")
            if not pw:
                continue
            mhz, w = float(r["sm_mhz"]), float(r["power_w"])
            model_mhz = pw["steady_clock_hz"] / 1e6
            de = ce = ""
            if mhz >= 1960:
                d = 100 * (pw["draw_w"] / w - 1)
                derr.append(d)
                de = "%+.0f %%" % d
            else:
                c = 100 * (model_mhz / mhz - 1)
                cerr.append(c)
                ce = "%+.0f %%" % c
            print("| %s | %.2f | %.0f | %.0f | %s | %.0f | %.0f | %s | %s |" % (
                r["spec"][:70], float(r["busy"]), mhz, w, pw["class"], pw["draw_w"], model_mhz, de, ce))
print()
if derr:
    print("at boost: %d ops, draw error mean %+.1f %%, mean |.| %.1f %%" % (len(derr), sum(derr) / len(derr),
                                                                             sum(abs(x) for x in derr) / len(derr)))
if cerr:
    print("held by the limiter: %d ops, clock error mean %+.1f %%, mean |.| %.1f %%" % (
        len(cerr), sum(cerr) / len(cerr), sum(abs(x) for x in cerr) / len(cerr)))
