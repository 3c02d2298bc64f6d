#!/usr/bin/env python3
"""Score a k3sim hardware preset on public measurements (the CSVs tools/aic/convert.mjs writes),
compare those measurements with our own captures of the same ops, and (--score-ours PRESET) score a
preset fitted on the public tables on our captures. Prints Markdown tables.

usage: tools/aic/crosscheck.py [--k3sim build/cli/k3sim] [--hw h200] [--public bench/public/aic/h200_sxm]
                               [--ours PATH[,PATH...]]... [--only FILE,...] [--score-ours PRESET]

Per public file and regime: points, median and p90 absolute error of the preset's prediction
((predicted - measured) / measured, as `k3sim trace validate` computes it), and the median signed
error (negative: the model predicts too short). Then, for every op measured both in a public table
and in one of our captures (op specs compared after dropping default keys): the median and spread
of public / ours. With --score-ours, the other direction per class and regime of our captures.
An --ours group of several paths is validated as several runs (the median over runs, as
`k3sim calibrate` takes them). Standard library only; the numbers come from
`k3sim trace validate --json`."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# the captures hw/presets/h200.yaml was fitted on (kernel durations from CUPTI), as committed:
# (label, paths); the paths of a group are runs of one grid
R = "bench/results/calib-runs-h200-2026-12-01"
DEFAULT_OURS = [
    ("calib-runs 2026-12-01 (3 H200s)", [f"{R}/run{i}-{r}.db.xz" for r in ("burst", "sustained") for i in (1, 2, 3)]),
    ("nccl-h200x2 2026-11-29", ["bench/results/nccl-h200x2-2026-11-29/nccl-dbs.tar.xz"]),
    ("kda 2026-11-29", ["bench/results/calib-h200-2026-11-29-kda-capture.db.xz",
                        "bench/results/calib-h200-2026-11-29-kda-verify-d.db.xz"]),
]

# keys whose value is the op's default (sim/opspec.c): dropped before specs are compared
DEFAULTS = {
    "gemm": {"dtype": "bf16"},
    "kda_decode": {"k": "128", "v": "128", "state": "fp32", "t": "1", "conv": "4"},
    "kda_chunk": {"k": "128", "v": "128", "state": "fp32", "chunk": "16", "ctx": "0"},
    "mla_decode": {"kv": "bf16", "latent": "512", "rope": "64", "t": "1"},
}


def canon(spec):
    f = spec.split()
    kind = f[0]
    kv = dict(x.split("=", 1) for x in f[1:])
    d = DEFAULTS.get(kind, {})
    if kind == "kda_chunk" and kv.get("ctx") == "1":
        # our bench marks "reads an initial state" with ctx=1; the public rows start from zero
        # state: one state read apart (6 MiB at h=96, about 1.5 us of ops of 60 us and more)
        kv["ctx"] = "0"
    return kind + " " + " ".join(f"{k}={v}" for k, v in sorted(kv.items()) if d.get(k) != v)


def keys(spec):
    f = spec.split()
    return f[0], dict(x.split("=", 1) for x in f[1:])


def pct(v, q):
    """linear-interpolated percentile of a sorted list"""
    if not v:
        return float("nan")
    x = q / 100 * (len(v) - 1)
    i = int(x)
    return v[i] if i + 1 >= len(v) else v[i] + (v[i + 1] - v[i]) * (x - i)


def stats(errs):
    a = sorted(abs(e) for e in errs)
    s = sorted(errs)
    return len(errs), pct(a, 50), pct(a, 90), pct(s, 50)


def regime(name, spec):
    """the sub-group a point is reported in"""
    kind, k = keys(spec)
    if kind == "gemm":
        m = int(k["m"])
        return "m 1-16" if m <= 16 else "m 32-256" if m <= 256 else "m 512-4096" if m <= 4096 else "m 8192-32768"
    if kind in ("allreduce", "allgather", "reducescatter", "alltoall"):
        b = int(k["bytes"])
        size = "< 1 MiB" if b < 1 << 20 else "1-32 MiB" if b < 32 << 20 else ">= 32 MiB"
        return f"{kind} x{k['ranks']} {size}"
    if kind == "kda_chunk":
        return f"kda_chunk h={k['h']}"
    if kind == "kda_decode":
        if k.get("t", "1") != "1":
            return "verify (t > 1)"
        return "decode fused conv" if k.get("conv", "4") != "0" else "decode recurrence only"
    if kind == "mla_decode" or kind == "mla_prefill":
        return f"kv={k.get('kv', 'bf16')}"
    if kind == "grouped_gemm":
        return f"tp-split n={k['n']} {k.get('dtype', 'bf16')}/{k.get('w_dtype', k.get('dtype', 'bf16'))}"
    if kind.startswith("ep_"):
        return f"width={k['width']}"
    return kind


def prepare(k3sim, path, tmp):
    """a path k3sim reads: X.db.xz decompressed; a .tar.xz of per-rank databases extracted and merged"""
    base = os.path.join(tmp, os.path.basename(path))
    if path.endswith(".db.xz"):
        with open(base[:-3], "wb") as out:
            subprocess.run(["xz", "-dc", path], check=True, stdout=out)
        return base[:-3]
    if path.endswith(".tar.xz"):
        d = base[:-7]
        os.mkdir(d)
        subprocess.run(["tar", "xJf", path, "-C", d], check=True)
        dbs = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".db"))
        subprocess.run([k3sim, "trace", "merge", *dbs, "-o", d + "-merged.db", "-f"], check=True,
                       stdout=subprocess.DEVNULL)
        return d + "-merged.db"
    return path


def validate(k3sim, hw, paths):
    paths = [paths] if isinstance(paths, str) else paths
    out = subprocess.run([k3sim, "trace", "validate", *paths, "--hw", hw, "--json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["per_point"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k3sim", default="build/cli/k3sim")
    ap.add_argument("--hw", default="h200")
    ap.add_argument("--public", default="bench/public/aic/h200_sxm")
    ap.add_argument("--ours", action="append", help="our measurements: CSV, trace DB, X.db.xz, or a "
                    ".tar.xz of per-rank DBs (merged); comma-separated: runs of one grid; default: "
                    "the h200 preset's captures; none: no comparison")
    ap.add_argument("--only", help="comma-separated public file names (default: all)")
    ap.add_argument("--score-ours", metavar="PRESET", help="also score PRESET (e.g. one fitted on the "
                    "public tables) on our captures")
    a = ap.parse_args()
    ours = [(o, o.split(",")) for o in a.ours if o != "none"] if a.ours else DEFAULT_OURS
    names = sorted(f for f in os.listdir(a.public) if f.endswith(".csv"))
    if a.only:
        names = [n for n in names if n[:-4] in a.only.split(",")]
    print(f"### `--hw {a.hw}` on the public tables ({a.public})\n")
    print("| file | regime | points | med abs % | p90 abs % | bias % |")
    print("|---|---|---:|---:|---:|---:|")
    public = {}
    for name in names:
        pts = validate(a.k3sim, a.hw, os.path.join(a.public, name))
        groups = {}
        for p in pts:
            groups.setdefault(regime(name, p["op"]), []).append(p["error_pct"])
            public.setdefault(canon(p["op"]), []).append((name[:-4], p["measured_s"]))
        n, med, p90, bias = stats([p["error_pct"] for p in pts])
        print(f"| **{name[:-4]}** | all | {n} | {med:.1f} | {p90:.1f} | {bias:+.1f} |")
        for g in sorted(groups):
            n, med, p90, bias = stats(groups[g])
            print(f"| | {g} | {n} | {med:.1f} | {p90:.1f} | {bias:+.1f} |")
    print("\n### The same ops measured by both sources: public / ours\n")
    print("| public file | our capture | regime | common ops | median ratio | p10 | p90 |")
    print("|---|---|---|---:|---:|---:|---:|")
    tmp = tempfile.TemporaryDirectory()
    prepared = []
    for label, paths in ours:
        missing = [x for x in paths if not os.path.exists(x)]
        if missing:
            print(f"{', '.join(missing)}: missing", file=sys.stderr)
            continue
        prepared.append((label, [prepare(a.k3sim, x, tmp.name) for x in paths]))
    for label, paths in prepared:
        pairs = {}
        for p in validate(a.k3sim, a.hw, paths):
            if "@" in p["class"]:
                continue  # the sustained regime: the public tables ran at their own clocks
            for name, t in public.get(canon(p["op"]), []):
                pairs.setdefault((name, regime(name, p["op"])), []).append(t / p["measured_s"])
        for (name, g), r in sorted(pairs.items()):
            r.sort()
            print(f"| {name} | {label} | {g} | {len(r)} | {pct(r, 50):.3f} | "
                  f"{pct(r, 10):.3f} | {pct(r, 90):.3f} |")
    if not a.score_ours:
        return
    print(f"\n### `--hw {a.score_ours}` on our captures\n")
    print("| our capture | class | regime | points | med abs % | p90 abs % | bias % |")
    print("|---|---|---|---:|---:|---:|---:|")
    for label, paths in prepared:
        groups = {}
        for p in validate(a.k3sim, a.score_ours, paths):
            groups.setdefault(p["class"], {}).setdefault(regime("", p["op"]), []).append(p["error_pct"])
        for c in sorted(groups):
            every = [x for g in groups[c].values() for x in g]
            n, med, p90, bias = stats(every)
            print(f"| {label} | **{c}** | all | {n} | {med:.1f} | {p90:.1f} | {bias:+.1f} |")
            if len(groups[c]) > 1:
                for g in sorted(groups[c]):
                    n, med, p90, bias = stats(groups[c][g])
                    print(f"| | | {g} | {n} | {med:.1f} | {p90:.1f} | {bias:+.1f} |")


if __name__ == "__main__":
    main()
