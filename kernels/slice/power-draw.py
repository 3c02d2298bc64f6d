#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The power model's draw of one op at boost (sim/power.h: P = P_idle + (e_flop x FLOPs + e_byte x
HBM bytes) / t, e_flop its power class's, t the preset's time for the op), as `k3sim op --clock power
--json` reports it: usage: power-draw.py K3SIM PRESET.yaml KIND key=value...
Prints the time, FLOPs, bytes, the class and its FLOP energy, the draw in W and the clock the op
settles at run back to back; exits 1 with a message on a preset without the power model or an op
k3sim refuses."""
import json
import subprocess
import sys

if len(sys.argv) < 4:
    sys.exit("usage: power-draw.py K3SIM PRESET.yaml KIND key=value...")
k3sim, preset, op = sys.argv[1], sys.argv[2], sys.argv[3:]
try:
    p = subprocess.run([k3sim, "op"] + op + ["--hw", preset, "--clock", "power", "--json"], capture_output=True,
                       text=True)
except OSError as e:
    sys.exit("power-draw: %s: %s" % (k3sim, e.strerror))
if p.returncode != 0:
    sys.exit("power-draw: k3sim op: %s" % (p.stderr.strip() or "exit %d" % p.returncode))
try:
    d = json.loads(p.stdout)
    pw = d["power"]
    line = "%s on %s: %.3f ms, %.3e FLOPs, %.3e bytes, class %s (%.3g pJ a FLOP): %.0f W at boost, %.0f MHz run back to back" % (
        " ".join(op), preset, pw["boost_s"] * 1e3, d["flops"], d["bytes"], pw["class"], pw["flop_pj"], pw["draw_w"],
        pw["steady_clock_hz"] / 1e6)
except (ValueError, KeyError, TypeError):
    sys.exit("power-draw: k3sim op gave no power view of %s (a collective, or an older k3sim)" % " ".join(op))
print(line)
