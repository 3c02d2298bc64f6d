#!/usr/bin/env python3
"""Decode rows of a kda-bench CSV: % of the run's copy ceiling on the state bytes (the bench's
pct_copy_bw; also from loop_us, back-to-back launches) and on all bytes moved (state + ShortConv state + inputs + outputs: total_bytes), and
the extra bytes over the state.  usage: decode_bytes.py kda-bench.csv [H]"""
import csv
import sys

path, heads = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 96
rows = list(csv.DictReader(line for line in open(path) if not line.startswith("#")))
copy = next(float(r["copy_gbps"]) for r in rows if r["op"] == "copy_memcpy")
print(f"{path}: copy ceiling {copy:.0f} GB/s")
print("state    B   state %copy   all bytes %copy   extra bytes   state %copy back to back")
for r in rows:
    if r["op"] == "decode" and int(r["heads"]) == heads:
        st, tot, us = float(r["state_bytes"]), float(r["total_bytes"]), float(r["time_us"])
        print(f"{r['state']:5s} {int(r['batch']):4d} {100 * st / us / 1e3 / copy:12.1f} "
              f"{100 * tot / us / 1e3 / copy:17.1f} {100 * (tot / st - 1):12.1f} %"
              f" {100 * st / float(r['loop_us']) / 1e3 / copy:26.1f}")
