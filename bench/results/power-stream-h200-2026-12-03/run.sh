#!/bin/sh
# The slice's held-out pairings of rounds 22-25 under --clock power with the measured byte energy
# held (the base preset's power_byte_pj 65.3, power_byte_held 1; validate-slice.py --device-key),
# the window limiter as shipped (100 ms). From the repository root:
#   sh bench/results/power-stream-h200-2026-12-03/run.sh K3SIM
# Writes held-byte/<round>/power-<pairing>.md and summary.md here (rounds x = 22, r = 23, v = 24, z = 25).
set -eu
K3=${1:?usage: run.sh K3SIM}
D=bench/results/power-stream-h200-2026-12-03/held-byte
X=bench/results/k3-kernels-h200-2026-12-03x R=bench/results/k3-kernels-h200-2026-12-03r
V=bench/results/k3-kernels-h200-2026-12-03v Z=bench/results/k3-kernels-h200-2026-12-03z
export CLOCKS=power VALIDATE_ARGS="--device-key power_byte_pj=65.3 --device-key power_byte_held=1"
mkdir -p $D/x $D/r $D/v $D/z
sh kernels/slice/validate-pairs.sh "$K3" $D/x "ab ac ba bc ca cb" a=$X/a:$X/ka/kda-grid.csv b=$X/b:$X/kb/kda-grid.csv c=$X/call2/c:$X/call2/kc/kda-grid.csv
sh kernels/slice/validate-pairs.sh "$K3" $D/r "ab ac ba bc ca cb" a=$R/a:$R/ka/kda-grid.csv b=$R/b:$R/kb/kda-grid.csv c=$R/call2/c:$R/call2/kc/kda-grid.csv
sh kernels/slice/validate-pairs.sh "$K3" $D/v "ab ba ap aq ar bp bq br" a=$V/a:$V/ka/kda-grid.csv b=$V/b:$V/kb/kda-grid.csv p=$R/a:$R/ka/kda-grid.csv q=$R/b:$R/kb/kda-grid.csv r=$R/call2/c:$R/call2/kc/kda-grid.csv
sh kernels/slice/validate-pairs.sh "$K3" $D/z "ab ba ap aq bp bq" a=$Z/a:$Z/ka/kda-grid.csv b=$Z/b:$Z/kb/kda-grid.csv p=$V/a:$V/ka/kda-grid.csv q=$V/b:$V/kb/kda-grid.csv
for r in x r v z; do python3 kernels/slice/heldout_summary.py $D/$r "Round $r, byte held at 65.3 pJ" > $D/$r/summary.md; done
