#!/bin/sh
# The slow clock recovery tried on round 21 (training; 2026-12-03, lead): each rise (MHz a ms; 0: at
# once) written into hw/presets/h200.yaml (the base validate-slice fits the k3-kernels presets from),
# then validate-slice --clock power for each pairing into /tmp/rise/g2/r<rise>-<round>-<pair>.md;
# the preset restored at the end. Needs power-rise.patch applied and built (build-cpu).
# usage, from the repository root: cp hw/presets/h200.yaml /tmp/rise/h200.orig.yaml;
#   sh grid.sh bench/results/k3-kernels-h200-2026-12-02x "ab ac ba bc ca cb" "0 1 2 3 5 10"
# then: python3 summary.py /tmp/rise/g2/r*.md > summary.txt
X=$1
for r in $3; do
  cp /tmp/rise/h200.orig.yaml hw/presets/h200.yaml
  [ "$r" = 0 ] || sed -i "s/^  power_min_sm_clock_mhz: 1395/  power_min_sm_clock_mhz: 1395\n  power_rise_mhz_per_ms: $r/" hw/presets/h200.yaml
  for p in $2; do
    s=$(echo $p | cut -c1); b=$(echo $p | cut -c2)
    sd=$X/$s; [ $s = c ] && sd=$X/call2/c; bd=$X/$b; kd=$X/k$b; [ $b = c ] && bd=$X/call2/c && kd=$X/call2/kc
    python3 kernels/slice/validate-slice.py --clock power --results $sd --bench-results $bd --kda-bench $kd/kda-grid.csv --k3sim build-cpu/cli/k3sim -o /tmp/rise/g2/r$r-$(basename $X)-$p.md > /dev/null 2>&1 || echo "fail $r $p"
  done
done
cp /tmp/rise/h200.orig.yaml hw/presets/h200.yaml
