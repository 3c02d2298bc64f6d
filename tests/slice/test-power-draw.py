#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""kernels/slice/power-draw.py against k3sim: the draw it prints is P_idle + (e_flop x FLOPs + e_byte x
bytes) / t with the op's class energy where the preset sets one and the global one elsewhere; a preset
without the power model and a bad op exit 1 with a message, never a traceback.
usage: test-power-draw.py SOURCE_ROOT K3SIM"""
import json
import os
import re
import subprocess
import sys
import tempfile

root, k3sim = sys.argv[1], sys.argv[2]
script = os.path.join(root, "kernels", "slice", "power-draw.py")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tap import Tap  # noqa: E402

tap = Tap()
check = tap.check


def draw(preset, op):
    p = subprocess.run([sys.executable, script, k3sim, preset] + op, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def expected(preset, op, flop_pj):
    keys = {}
    with open(preset) as f:
        for line in f:
            m = re.match(r"\s*(power_(?:idle_w|flop_pj|byte_pj))\s*:\s*([0-9.eE+-]+)", line)
            if m:
                keys[m.group(1)] = float(m.group(2))
    d = json.loads(subprocess.run([k3sim, "op"] + op + ["--hw", preset, "--json"], capture_output=True,
                                  text=True, check=True).stdout)
    e = keys["power_flop_pj"] if flop_pj is None else flop_pj
    return keys["power_idle_w"] + (e * 1e-12 * d["flops"] + keys["power_byte_pj"] * 1e-12 * d["bytes"]) / d["time_s"]


def watts(out):
    m = re.search(r": ([0-9.]+) W at boost", out)
    return float(m.group(1)) if m else None


mla = ["mla_decode", "b=64", "heads=96", "ctx=65535", "kv=bf16", "t=1"]
gemm = ["gemm", "m=4096", "n=7168", "k=7168", "dtype=bf16"]
with tempfile.TemporaryDirectory() as tmp:
    src = os.path.join(root, "hw", "presets", "h200.yaml")
    with open(src) as f:
        text = f.read()
    check("the h200 preset has the power model", "power_min_sm_clock_mhz:" in text)
    # the h200 preset: the global energy for every class
    rc, out, err = draw(src, mla)
    want = expected(src, mla, None)
    check("global energy: exit 0", rc == 0, err)
    check("global energy: the draw", watts(out) is not None and abs(watts(out) - want) <= 0.6,
          "%s (want %.1f W)" % (out, want))
    check("global energy: the class named", "class mla_decode" in out, out)
    # a class energy for MLA decode: its ops draw with it, the GEMM's with the global one
    hot = os.path.join(tmp, "hot.yaml")
    with open(hot, "w") as f:
        f.write(re.sub(r"(\n  power_min_sm_clock_mhz: [0-9.]+\n)", r"\1  power_flop_pj_mla_decode: 3.5\n", text, count=1))
    rc, out, err = draw(hot, mla)
    want = expected(hot, mla, 3.5)
    check("class energy: exit 0", rc == 0, err)
    check("class energy: the draw", watts(out) is not None and abs(watts(out) - want) <= 0.6,
          "%s (want %.1f W)" % (out, want))
    check("class energy: above the global one's", watts(out) is not None and watts(out) > expected(src, mla, None) + 50)
    rc, out, err = draw(hot, gemm)
    want = expected(hot, gemm, None)
    check("another class: the global energy", rc == 0 and watts(out) is not None and abs(watts(out) - want) <= 0.6,
          "%s%s (want %.1f W)" % (out, err, want))
    # refusals: a preset without the model, an op k3sim refuses, a missing k3sim
    for name, args in (("no power model", [k3sim, os.path.join(root, "hw", "presets", "h200-datasheet.yaml")] + mla),
                       ("bad op", [k3sim, src, "mla_decode", "b=x"]),
                       ("no k3sim", [os.path.join(tmp, "nope"), src] + mla),
                       ("no op", [k3sim, src])):
        p = subprocess.run([sys.executable, script] + args, capture_output=True, text=True)
        check(name + ": exit 1", p.returncode == 1, "rc %d: %s" % (p.returncode, p.stderr))
        check(name + ": no traceback", "Traceback" not in p.stderr and p.stderr.strip() != "", p.stderr)
tap.done()
