#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The power model's draw of one op at boost (sim/power.h: P = P_idle + (e_flop x FLOPs + e_byte x
HBM bytes) / t, t the preset's time for the op): usage: power-draw.py K3SIM PRESET.yaml KIND key=value...
Prints the time, FLOPs, bytes and the draw in W; exits 1 with a message on a preset without the power
model or an op k3sim refuses."""
import json
import re
import subprocess
import sys

if len(sys.argv) < 4:
    sys.exit("usage: power-draw.py K3SIM PRESET.yaml KIND key=value...")
k3sim, preset, op = sys.argv[1], sys.argv[2], sys.argv[3:]
keys = {}
try:
    with open(preset) as f:
        for line in f:
            m = re.match(r"\s*(power_(?:idle_w|flop_pj|byte_pj))\s*:\s*([0-9.eE+-]+)", line)
            if m:
                keys[m.group(1)] = float(m.group(2))
except OSError as e:
    sys.exit("power-draw: %s: %s" % (preset, e.strerror))
if len(keys) != 3:
    sys.exit("power-draw: %s: no power_idle_w, power_flop_pj and power_byte_pj (the power model)" % preset)
p = subprocess.run([k3sim, "op"] + op + ["--hw", preset, "--json"], capture_output=True, text=True)
if p.returncode != 0:
    sys.exit("power-draw: k3sim op: %s" % p.stderr.strip())
d = json.loads(p.stdout)
t, fl, by = d["time_s"], d["flops"], d["bytes"]
w = keys["power_idle_w"] + (keys["power_flop_pj"] * 1e-12 * fl + keys["power_byte_pj"] * 1e-12 * by) / t
print("%s on %s: %.3f ms, %.3e FLOPs, %.3e bytes: %.0f W at boost" % (" ".join(op), preset, t * 1e3, fl, by, w))
