#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every op run back to back on the H100 (op-sustained-extract.py's CSVs: power-h100-2026-12-06/sustained/ops,
calls kq and kq2's MXFP4 decode experts), its kernels busy >= 97 % of the range's second half: NVML's
clock, board power and temperature there, and the HBM power the model gives it (the preset's bytes over
its time at that clock, 87.9 pJ a byte: power-h100-2026-12-06/stream). Question it answers: does the
limiter hold the board's power or the power without HBM? (Held ops, clock under 1960 MHz, sit at
671-736 W board power whatever their HBM share, 5-280 W: the board's.) From the repository root:
  python3 bench/power/held-ops.py > OUT.txt"""
import csv, json, subprocess, glob
K="build-cpu/cli/k3sim"; P="bench/results/power-h100-2026-12-06/decode-tiled/k3-kernels-clk-h100-06h-r-gemv1.yaml"
files=glob.glob("bench/results/power-h100-2026-12-06/sustained/ops/*-sustained.csv")+["bench/results/kq-h100-2026-12-06/moe_decode-sustained.csv","bench/results/kq2-h100-2026-12-06/moe_decode-sustained.csv"]
rows=[]
for f in files:
    for r in csv.DictReader(open(f)):
        try:
            if float(r.get("busy",1) or 1) < 0.97: continue
            spec=r["spec"].split(); mhz=float(r["sm_mhz"]); w=float(r["power_w"]); float(r["temp_c"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise SystemExit("held-ops.py: %s: not an op-sustained-extract.py CSV (%s)" % (f, e))
        p=subprocess.run([K,"op"]+spec+["--hw",P,"--clock","%.0f"%min(mhz,1980),"--json"],capture_output=True,text=True)
        if p.returncode: continue
        d=json.loads(p.stdout)
        hbm=87.9e-12*d["bytes"]/d["time_s"]
        rows.append((f.split("/")[-1][:14], r["spec"][:60], mhz, w, hbm, float(r["temp_c"])))
for x in sorted(rows,key=lambda x:x[2]):
    print("%-14s %-60s %5.0f MHz %4.0f W hbm %4.0f W  board-hbm %4.0f  %2.0f C"%(x[0],x[1],x[2],x[3],x[4],x[3]-x[4],x[5]))
