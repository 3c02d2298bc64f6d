#!/usr/bin/env python3
"""SM clock and power over each calibration run (nvidia-smi sampling beside the captures), as
gnuplot data and an SVG: docs/perf/calibration-h200-2026-12-01/clocks.{dat,gp,svg}.
usage: bench/calib/plot-clocks.py RESULTS_DIR OUT_DIR"""
import os, subprocess, sys
from datetime import datetime

res, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
dat = os.path.join(out, "clocks.dat")
stats = []
with open(dat, "w") as f:
    f.write("# t_s sm_mhz power_w (one block per run; nvidia-smi every 100 ms)\n")
    for run in (1, 2, 3):
        rows = []
        for line in open(os.path.join(res, f"run{run}-smi.csv")):
            if line.startswith("timestamp"):
                continue
            c = [x.strip() for x in line.split(",")]
            try:
                t = datetime.strptime(c[0], "%Y/%m/%d %H:%M:%S.%f")
                rows.append((t, float(c[1]), float(c[4] if c[4] not in ("[N/A]", "") else c[3])))
            except (ValueError, IndexError):
                continue
        t0 = rows[0][0]
        f.write(f"# run {run}\n")
        for t, mhz, w in rows:
            f.write(f"{(t - t0).total_seconds():.3f} {mhz:.0f} {w:.1f}\n")
        f.write("\n\n")
        busy = [r for r in rows if r[2] > 200]
        stats.append((run, len(rows), min(r[1] for r in busy), sorted(r[1] for r in busy)[len(busy) // 2],
                      max(r[2] for r in busy)))
gp = os.path.join(out, "clocks.gp")
with open(gp, "w") as f:
    f.write(f"""set terminal pngcairo size 900,520 font 'sans,10'
set output '{os.path.join(out, "clocks.png")}'
set multiplot layout 2,1 title 'H200 calibration runs 2026-12-01: burst grid (0-13 s), then 10 s preheat + sustained grid'
set ylabel 'SM clock (MHz)'; set yrange [0:2100]; set key bottom right
plot for [i=0:2] '{dat}' index i using 1:2 with lines title sprintf('run %d', i+1)
set ylabel 'power (W)'; set xlabel 'seconds since the call started'; set yrange [0:900]
plot for [i=0:2] '{dat}' index i using 1:3 with lines title sprintf('run %d', i+1), 700 with lines dt 2 lc rgb 'black' title 'power limit'
unset multiplot
""")
subprocess.run(["gnuplot", gp], check=True)
for s in stats:
    print("run %d: %d samples; busy (> 200 W): SM min %.0f / median %.0f MHz, power max %.0f W" % s)
