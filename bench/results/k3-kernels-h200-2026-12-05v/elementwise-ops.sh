#!/bin/sh
# Round 05v: the slice's elementwise ops one by one (call 10, run a) against the shipped h200
# preset's per-op prediction (`k3sim trace validate`), the numbers behind README section 2's
# "where the elementwise class's -22 % comes from" -> elementwise-ops.txt.
# From the root:  sh bench/results/k3-kernels-h200-2026-12-05v/elementwise-ops.sh K3SIM
set -eu
K3=${1:?usage: elementwise-ops.sh K3SIM}
V=bench/results/k3-kernels-h200-2026-12-05v
db=$(mktemp)
trap 'rm -f "$db"' EXIT
xz -dc $V/call10/a/k3-slice.db.xz > "$db"
"$K3" trace validate "$db" --hw h200 --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = [p for p in d["per_point"] if p["class"] == "elementwise"]
print("%-60s %12s %12s %5s" % ("op", "measured_us", "predicted_us", "n"))
for p in sorted(rows, key=lambda p: p.get("op", "")):
    print("%-60s %12.1f %12.1f %5s" % (p.get("op", "?")[:60], p["measured_s"] * 1e6, p["predicted_s"] * 1e6, p.get("samples")))
' > $V/elementwise-ops.txt
