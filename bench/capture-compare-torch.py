# Per-kernel durations: a k3sim capture (SQLite) against torch.profiler's trace (Kineto JSON) of
# the same program in a separate run. Kernels are matched by demangled name; for each name with
# at least MIN instances in both, compare the mean and the median duration.
# usage: capture-compare-torch.py K3SIM.db KINETO.json [MIN] > report.txt
import json
import sqlite3
import statistics
import sys

db, js = sys.argv[1], sys.argv[2]
min_n = int(sys.argv[3]) if len(sys.argv) > 3 else 20

con = sqlite3.connect(db)
k3 = {}
for name, dur in con.execute(
    "SELECT s.value, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
    "JOIN StringIds s ON s.id = k.demangledName"
):
    k3.setdefault(name, []).append(dur / 1000.0)  # us

with open(js) as f:
    trace = json.load(f)
kt = {}
for ev in trace.get("traceEvents", []):
    if ev.get("cat") == "kernel" and "dur" in ev:
        kt.setdefault(ev["name"], []).append(float(ev["dur"]))

rows = []
for name in sorted(set(k3) & set(kt)):
    a, b = k3[name], kt[name]
    if len(a) < min_n or len(b) < min_n:
        continue
    ma, mb = statistics.mean(a), statistics.mean(b)
    da, db_ = statistics.median(a), statistics.median(b)
    rows.append((name, len(a), len(b), ma, mb, ma / mb - 1, da, db_, da / db_ - 1))

total_k3 = sum(sum(v) for v in k3.values())
print(f"k3sim kernels: {sum(len(v) for v in k3.values())} in {len(k3)} names; "
      f"torch.profiler kernels: {sum(len(v) for v in kt.values())} in {len(kt)} names; "
      f"compared names (>= {min_n} instances in both): {len(rows)}")
only_k3 = sorted(set(k3) - set(kt))
only_kt = sorted(set(kt) - set(k3))
print(f"names only in k3sim: {len(only_k3)}; only in torch.profiler: {len(only_kt)}")
for n in only_k3[:5]:
    print("  only k3sim:", n[:120], len(k3[n]))
for n in only_kt[:5]:
    print("  only torch:", n[:120], len(kt[n]))
print()
print(f"{'k3 n':>6} {'kt n':>6} {'k3 mean us':>11} {'kt mean us':>11} {'diff':>8} "
      f"{'k3 med us':>10} {'kt med us':>10} {'diff':>8}  kernel")
within = 0
for r in sorted(rows, key=lambda r: -r[3] * r[1]):
    print(f"{r[1]:6d} {r[2]:6d} {r[3]:11.3f} {r[4]:11.3f} {100 * r[5]:+7.2f}% "
          f"{r[6]:10.3f} {r[7]:10.3f} {100 * r[8]:+7.2f}%  {r[0][:90]}")
    within += abs(r[5]) <= 0.02
if rows:
    worst = max(abs(r[5]) for r in rows)
    weighted = sum(r[3] * r[1] * abs(r[5]) for r in rows) / sum(r[3] * r[1] for r in rows)
    print()
    print(f"mean durations within 2 %: {within}/{len(rows)} kernels; worst {100 * worst:.2f} %; "
          f"time-weighted mean |diff| {100 * weighted:.2f} %")
    print("RESULT", "PASS" if within == len(rows) else "FAIL")
