#!/usr/bin/env python3
"""A measured and a simulated overlapped step side by side, in one Perfetto file and one picture.

Measured: the two-H200 captures of bench/x2/run-x2-overlap-kcp.sh (one database per rank): the
last "together" run at the chosen tokens per rank -- both streams released by the spin kernel,
NCCL all-to-alls on the communication stream beside the grouped expert GEMMs on the compute
stream. Simulated: bench/x2/x2-predict overlap --timeline for the same run (the same rows,
all-to-all bytes, counts and release offset as bench/x2/compare.py gives it), twice: every op at
its modeled cost, and every op at its measured time alone (what the sharing model alone adds).

Writes OUT.json (Chrome trace-event JSON: ui.perfetto.dev or chrome://tracing open it; one process
per rank and source, one thread per stream, times from the first release) and, with --png, a
gnuplot picture of the same lanes.

usage: side-by-side.py --dbs R0.db R1.db --csv overlap.csv --tokens N --predict X2PREDICT
                       -o OUT.json [--png OUT.png] [--hw NAME]
"""
import argparse
import csv
import json
import os
import sqlite3
import subprocess
import sys
import tempfile


def die(msg):
    sys.exit(f"side-by-side.py: {msg}")


def csv_rows(path, tokens):
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith("#"))
                if int(r["tokens"]) == tokens]
    by = {int(r["rank"]): r for r in rows}
    if set(by) != {0, 1}:
        die(f"{path}: no rows for ranks 0 and 1 at tokens={tokens}")
    return by


def measured_window(db, rows):
    """The last together-run on this rank: (release_ns, [(start, end, lane, name)])."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    q = ("select k.start, k.end, k.streamId, s.value from CUPTI_ACTIVITY_KIND_KERNEL k "
         "join StringIds s on s.id = k.shortName order by k.start")
    kernels = con.execute(q).fetchall()
    span = con.execute("select min(start), max(end) from NVTX_EVENTS where text like ?",
                       (f"k3sim op=grouped_gemm m={rows} %",)).fetchone()
    con.close()
    if span[0] is None:
        die(f"{db}: no grouped_gemm range with m={rows}")
    spins = [k for k in kernels if k[3] == "spin_kernel"]
    best = None
    for i, sp in enumerate(spins):
        if not (span[0] <= sp[1] <= span[1]):
            continue
        stop = spins[i + 1][0] if i + 1 < len(spins) else float("inf")
        inside = [k for k in kernels if sp[1] <= k[0] < stop and k[3] != "spin_kernel"]
        comm = [k for k in inside if k[3].startswith("ncclDevKernel")]
        gemm = [k for k in inside if "cutlass" in k[3] or "gemm" in k[3].lower()]
        if comm and gemm:
            best = (sp[1], comm, gemm)
    if not best:
        die(f"{db}: no run with all-to-alls beside GEMMs at m={rows}")
    release, comm, gemm = best
    ev = [(k[0], k[1], "comm", "alltoall (" + k[3] + ")") for k in comm]
    names = {0: "gate_up", 1: "down"}
    ev += [(k[0], k[1], "compute", names[i % 2] + " (CUTLASS grouped GEMM)") for i, k in enumerate(gemm)]
    return release, ev


def predict(exe, args, path):
    out = subprocess.run([exe] + args + ["--timeline", path], check=True, capture_output=True, text=True).stdout
    return out


def sim_events(path):
    d = json.load(open(path))
    names, lanes, ev = {}, {}, []
    for e in d["traceEvents"]:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            lanes[(e["pid"], e["tid"])] = e["args"]["name"]
    for e in d["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") != "kernel":
            continue
        lane = lanes.get((e["pid"], e["tid"]), "?")
        if lane == "hold":
            continue
        ev.append((e["args"]["device"], float(e["ts"]) * 1e3, (float(e["ts"]) + float(e["dur"])) * 1e3, lane,
                   e["name"]))
    return ev


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dbs", nargs=2, required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--tokens", type=int, required=True)
    ap.add_argument("--predict", required=True)
    ap.add_argument("--hw", default="h200")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--png")
    a = ap.parse_args()
    rr = csv_rows(a.csv, a.tokens)
    f = {r: {k: float(v) for k, v in rr[r].items() if k != "impl"} for r in rr}
    n_a, n_g = int(f[0]["n_a2a"]), int(f[0]["n_gemm"])
    skew = f[0]["both_a2a_s"] - f[1]["both_a2a_s"]
    base = ["overlap", "--hw", a.hw, "--rows", f"{rr[0]['rows']},{rr[1]['rows']}",
            "--touched", f"{rr[0]['touched']},{rr[1]['touched']}", "--a2a-bytes", rr[0]["a2a_bytes"],
            "--n-a2a", str(n_a), "--n-gemm", str(n_g), "--skew", f"{skew:.9g}"]
    one_a2a = min(f[0]["alone_a2a_s"], f[1]["alone_a2a_s"]) / n_a if n_a else 0
    meas = ["--a2a-s", f"{one_a2a:.9g}", "--gemm-s",
            f"{f[0]['alone_gemm_s'] / n_g:.9g},{f[1]['alone_gemm_s'] / n_g:.9g}"]
    rel0, _ = measured_window(a.dbs[0], int(rr[0]["rows"]))
    rel1, _ = measured_window(a.dbs[1], int(rr[1]["rows"]))
    base[-1] = f"{(rel1 - rel0) / 1e9:.9g}"
    sources = []
    with tempfile.TemporaryDirectory() as tmp:
        for tag, extra in (("simulated, modeled costs", []), ("simulated, measured costs alone", meas)):
            p = os.path.join(tmp, "sim.json")
            predict(a.predict, base + extra, p)
            ev = sim_events(p)
            sources.append((tag, {r: [(s, e, lane, n) for g, s, e, lane, n in ev if g == r] for r in (0, 1)}))
    rel, meas_ev = {}, {}
    for r in (0, 1):
        rel[r], meas_ev[r] = measured_window(a.dbs[r], int(rr[r]["rows"]))
    # The captures' own clock (both processes on one host): each rank's release is the end of its
    # spin kernel. The simulation gets the same offset (--skew: rank 1's release after rank 0's).
    t0 = min(rel.values())
    skew_capture_ms = (rel[1] - rel[0]) / 1e6
    sources.insert(0, ("measured", {r: [(s - t0, e - t0, lane, n) for s, e, lane, n in meas_ev[r]] for r in (0, 1)}))

    # one Perfetto file: a process per (source, rank), a thread per stream
    events, pid = [], 1
    lanes = []  # (label, [(start_ns, end_ns, kind)]) for the picture, top to bottom
    ends = {}
    for tag, per_rank in sources:
        for r in (0, 1):
            events.append({"ph": "M", "name": "process_name", "pid": pid, "args": {"name": f"rank {r} ({tag})"}})
            events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "args": {"sort_index": pid}})
            for tid, lane in ((1, "comm"), (2, "compute")):
                events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": lane}})
                sel = [x for x in per_rank[r] if x[2] == lane]
                for s, e, _, n in sel:
                    events.append({"ph": "X", "cat": "kernel", "name": n, "pid": pid, "tid": tid,
                                   "ts": round(s / 1e3, 3), "dur": round((e - s) / 1e3, 3),
                                   "args": {"source": tag, "rank": r, "stream": lane}})
                lanes.append((f"{tag}: rank {r} {lane}", [(s, e, lane) for s, e, _, _ in sel]))
            ends[(tag, r)] = max(e for s, e, _, _ in per_rank[r]) / 1e6
            pid += 1
    doc = {"displayTimeUnit": "ns",
           "otherData": {"producer": "k3sim bench/x2/side-by-side.py", "tokens per rank": a.tokens,
                         "rank 1 released after rank 0, ms (captures; used)": skew_capture_ms,
                         "the same from the CSV's CUDA events, ms": skew * 1e3},
           "traceEvents": events}
    tmp_out = a.output + ".tmp"
    with open(tmp_out, "w") as out:
        json.dump(doc, out)
    os.replace(tmp_out, a.output)
    for (tag, r), end in sorted(ends.items()):
        print(f"{tag:34s} rank {r}: last kernel ends {end:8.3f} ms after the first release")
    print(f"rank 1 released {skew_capture_ms:+.3f} ms after rank 0 in the captures (used); "
          f"{skew * 1e3:+.3f} ms from the CSV's CUDA events, if the all-to-all streams end together")
    if a.png:
        draw(lanes, a.png, a.tokens)


def draw(lanes, png, tokens):
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "boxes.dat")
        n = len(lanes)
        with open(data, "w") as d:
            for i, (label, boxes) in enumerate(lanes):
                y = n - 1 - i
                for s, e, kind in boxes:
                    d.write(f"{(s + e) / 2e6:.6f} {y} {s / 1e6:.6f} {e / 1e6:.6f} {y - 0.35} {y + 0.35} "
                            f"{0 if kind == 'comm' else 1}\n")
        ytics = ", ".join(f'"{label}" {n - 1 - i}' for i, (label, _) in enumerate(lanes))
        script = f"""
set terminal pngcairo size 1600,{160 + 42 * n} font ",11"
set output "{png}"
set title "EP all-to-all (orange) beside grouped expert GEMMs (blue), {tokens} tokens per rank, 2 x H200: measured vs simulated"
set xlabel "ms after the first rank's release"
set ytics ({ytics})
set yrange [-0.8:{n - 0.2}]
set grid xtics
set style fill solid 0.85 noborder
set palette defined (0 "#e8871e", 1 "#1f77b4")
unset colorbox
set key off
plot "{data}" using 1:2:3:4:5:6:7 with boxxyerrorbars lc palette
"""
        sp = os.path.join(tmp, "plot.gp")
        open(sp, "w").write(script)
        subprocess.run(["gnuplot", sp], check=True)


if __name__ == "__main__":
    main()
