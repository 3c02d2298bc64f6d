#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The board power of an HBM stream (copy) or of BF16 GEMMs (gemm) at several rates (2026-12-03,
lead): the energies of the power model (sim/power.h) measured directly, where the bench's rows with
power readings are too short for NVML (its power follows the load over ~1 s). copy: a 1 GiB
device-to-device copy (torch); gemm: an 8192 x 8192 x 8192 BF16 matmul (cuBLAS). Each back to back,
then duty-cycled with torch.cuda._sleep between calls (the GPU idles between them) at target shares
of the full rate, each segment SECS seconds, idle between; nvidia-smi samples power, SM clock and
temperature every 20 ms beside it. Writes OUT/segments.csv (segment, start/end unix s, bytes moved,
GB/s, FLOPs, TFLOP/s) and OUT/smi.csv.
usage: stream-draw.py OUT [SECS] [copy|gemm]"""
import csv
import os
import subprocess
import sys
import time

import torch

out = sys.argv[1]
secs = float(sys.argv[2]) if len(sys.argv) > 2 else 1.5
mode = sys.argv[3] if len(sys.argv) > 3 else "copy"
if mode not in ("copy", "gemm"):
    sys.exit("stream-draw.py: mode is copy or gemm, not '%s'" % mode)
os.makedirs(out, exist_ok=True)
smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,power.draw,clocks.sm,clocks.mem,temperature.gpu,"
                        "clocks_event_reasons.active", "--format=csv,noheader,nounits", "-lms", "20"],
                       stdout=open(os.path.join(out, "smi.csv"), "w"))
if mode == "copy":
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    a.fill_(1)
    call_bytes, call_flops = 2 * n, 0

    def call():
        b.copy_(a)
else:
    d = 8192
    a = torch.randn(d, d, dtype=torch.bfloat16, device="cuda")
    w = torch.randn(d, d, dtype=torch.bfloat16, device="cuda")
    c = torch.empty(d, d, dtype=torch.bfloat16, device="cuda")
    call_bytes, call_flops = 3 * d * d * 2, 2 * d ** 3

    def call():
        torch.matmul(a, w, out=c)
for _ in range(20):
    call()
torch.cuda.synchronize()
# one copy's time, and the sleep cycles per ms (for the duty cycles)
e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
e0.record()
for _ in range(20):
    call()
e1.record()
torch.cuda.synchronize()
copy_ms = e0.elapsed_time(e1) / 20
e0.record()
torch.cuda._sleep(10_000_000)
e1.record()
torch.cuda.synchronize()
cycles_per_ms = 10_000_000 / e0.elapsed_time(e1)
rows = []


def segment(name, share):
    sleep_cycles = int(max(0.0, copy_ms * (1 / share - 1)) * cycles_per_ms) if share < 1 else 0
    torch.cuda.synchronize()
    t0 = time.time()
    copies = 0
    while time.time() - t0 < secs:
        for _ in range(8):
            call()
            if sleep_cycles:
                torch.cuda._sleep(sleep_cycles)
        copies += 8
        torch.cuda.synchronize()
    t1 = time.time()
    moved, flops = copies * call_bytes, copies * call_flops
    rows.append([name, "%.6f" % t0, "%.6f" % t1, moved, "%.1f" % (moved / (t1 - t0) / 1e9), flops,
                 "%.1f" % (flops / (t1 - t0) / 1e12)])


def idle(s):
    torch.cuda.synchronize()
    t0 = time.time()
    time.sleep(s)
    rows.append(["idle", "%.6f" % t0, "%.6f" % time.time(), 0, "0", 0, "0"])


idle(1.0)
for rep in range(2):
    for share in ((1.0, 0.75, 0.5, 0.25) if mode == "copy" else (1.0, 0.6, 0.45, 0.3)):
        segment("%s%.2f-r%d" % (mode, share, rep), share)
        idle(0.6)
smi.terminate()
smi.wait()
with open(os.path.join(out, "segments.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["segment", "start_s", "end_s", "bytes", "gb_per_s", "flops", "tflop_per_s"])
    w.writerows(rows)
print("%s %.3f ms a call (%.0f GB/s, %.1f TFLOP/s), sleep %.0f cycles/ms" % (
    mode, copy_ms, call_bytes / copy_ms / 1e6, call_flops / copy_ms / 1e9, cycles_per_ms))
for r in rows:
    print(",".join(str(x) for x in r))
