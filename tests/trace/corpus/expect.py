#!/usr/bin/env python3
"""What `k3sim trace import` + `trace summary` must report for the traces gen.py writes,
computed here from the files alone (Python's json and sqlite3; no k3sim code): counts, exact
nanoseconds (Kineto's microsecond text read as decimals, plus baseTimeNanoseconds; nsys times
plus the session start), busy time per GPU as the union of its intervals, communication time and
its overlap with compute (communication named here by its own list: NCCL, DeepEP, custom
all-reduce), launches matched by (process, correlation id), GPUs after a merge.

usage: expect.py DIR   (writes the expectations as JSON on stdout)"""
import gzip, json, sqlite3, sys
from decimal import Decimal

d = sys.argv[1]
COMM = ("nccl", "deep_ep::", "cross_device_reduce")


def is_comm(name):
    return any(w in name.lower() for w in COMM)


def ns(x):
    return int(Decimal(str(x)) * 1000)


def union(ivs):
    out = []
    for s, e in sorted(ivs):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(u):
    return sum(e - s for s, e in u)


def intersect(a, b):
    i = j = t = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        t += max(0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return t


def kineto(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8-sig") as f:
        doc = json.load(f, parse_float=Decimal)
    base = int(doc.get("baseTimeNanoseconds", 0))
    ev = doc["traceEvents"]
    rank = doc.get("distributedInfo", {}).get("rank")
    cpu_pids = [e["pid"] for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver",
                "user_annotation", "cpu_op", "python_function") and isinstance(e.get("pid"), int)]
    pid = cpu_pids[0] if cpu_pids else 0
    rows = {"kernel": [], "gpu_memcpy": [], "gpu_memset": []}
    api, nvtx = [], []
    for e in ev:
        cat = str(e.get("cat", "")).lower()
        if e.get("ph") != "X":
            continue
        start = ns(e["ts"]) + base
        end = start + ns(e["dur"])
        a = e.get("args", {})
        if cat in rows:
            rows[cat].append((start, end, a.get("device", e["pid"]), a.get("correlation", 0),
                              e["name"]))
        elif cat in ("cuda_runtime", "cuda_driver"):
            api.append((e["pid"], a.get("correlation", 0)))
        elif cat == "user_annotation":
            nvtx.append(e["name"])
    procs = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
             and not str(e["args"]["name"]).startswith("GPU")}
    matched = sum(1 for k in rows["kernel"] if k[3] and (pid, k[3]) in set(api))
    return dict(rank=rank, pid=pid, kernels=rows["kernel"], memcpys=rows["gpu_memcpy"],
                memsets=rows["gpu_memset"], api_calls=len(api), nvtx=len(nvtx),
                processes=len(procs), matched=matched)


def nsys(path):
    c = sqlite3.connect(path)
    base = c.execute("SELECT utcEpochNs FROM TARGET_INFO_SESSION_START_TIME").fetchone()[0]
    names = dict(c.execute("SELECT id, value FROM StringIds"))
    kernels = [(s + base, e + base, dev, corr, names[n]) for s, e, dev, corr, n in
               c.execute("SELECT start, end, deviceId, correlationId, demangledName FROM"
                         " CUPTI_ACTIVITY_KIND_KERNEL")]
    memcpys = [(s + base, e + base, dev, corr, "") for s, e, dev, corr in
               c.execute("SELECT start, end, deviceId, correlationId FROM CUPTI_ACTIVITY_KIND_MEMCPY")]
    api = c.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE eventClass IN (0, 1)"
                    ).fetchone()[0]
    calls = set(c.execute("SELECT correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE"
                          " eventClass IN (0, 1)").fetchall())
    nvtx = c.execute("SELECT count(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT"
                     " NULL").fetchone()[0]
    procs = c.execute("SELECT count(*) FROM PROCESSES").fetchone()[0]
    matched = sum(1 for k in kernels if (k[3],) in calls)
    return dict(rank=None, pid=1230493, kernels=kernels, memcpys=memcpys, memsets=[],
                api_calls=api, nvtx=nvtx, processes=procs, matched=matched)


def summary(parts):
    """parts: one file, or the inputs of a merge (each its own devices: ranks kept apart)."""
    devs = {}
    for i, p in enumerate(parts):
        key = (lambda dev: (i, dev)) if len(parts) > 1 else (lambda dev: dev)
        for s, e, dev, _, name in p["kernels"]:
            dv = devs.setdefault(key(dev), {"all": [], "comm": [], "comp": [], "kernels": 0})
            dv["all"].append((s, e))
            dv["comm" if is_comm(name) else "comp"].append((s, e))
            dv["kernels"] += 1
        for s, e, dev, _, _ in p["memcpys"] + p["memsets"]:
            devs.setdefault(key(dev), {"all": [], "comm": [], "comp": [], "kernels": 0})["all"].append((s, e))
    out_devs = []
    for k in sorted(devs, key=str):
        dv = devs[k]
        uc, up = union(dv["comm"]), union(dv["comp"])
        out_devs.append({"kernels": dv["kernels"], "busy_ns": length(union(dv["all"])),
                         "comm_ns": length(uc), "compute_ns": length(up),
                         "overlap_ns": intersect(uc, up)})
    times = [(s, e) for p in parts for s, e, *_ in p["kernels"] + p["memcpys"] + p["memsets"]]
    first = min(s for s, _ in times)
    last = max(e for _, e in times)
    return {
        "kernels": sum(len(p["kernels"]) for p in parts),
        "memcpys": sum(len(p["memcpys"]) for p in parts),
        "memsets": sum(len(p["memsets"]) for p in parts),
        "api_calls": sum(p["api_calls"] for p in parts),
        "nvtx_ranges": sum(p["nvtx"] for p in parts),
        "kernel_ns": sum(e - s for p in parts for s, e, *_ in p["kernels"]),
        "first_ns": first, "last_ns": last, "span_ns": last - first,
        "launch_matched": sum(p["matched"] for p in parts),
        "gpus": len(devs), "processes": sum(p["processes"] for p in parts),
        # per GPU, in the order of their busy time (merged ids are renumbered)
        "devices": sorted(out_devs, key=lambda x: (x["busy_ns"], x["kernels"])),
    }


def main():
    f = lambda n: d + "/" + n
    cases = {
        "pytorch-rank0": [kineto(f("pytorch-rank0.json"))],
        "hta-style": [kineto(f("hta-style.json.gz"))],
        "vllm-decode": [kineto(f("vllm-decode.json"))],
        "sglang-ep-rank0": [kineto(f("sglang-ep-rank0.json"))],
        "nsys-export": [nsys(f("nsys-export.sqlite"))],
        "merge:pytorch-rank0+pytorch-rank1": [kineto(f("pytorch-rank0.json")),
                                              kineto(f("pytorch-rank1.json"))],
        "merge:sglang-ep-rank0+sglang-ep-rank1": [kineto(f("sglang-ep-rank0.json")),
                                                  kineto(f("sglang-ep-rank1.json"))],
    }
    json.dump({k: summary(v) for k, v in cases.items()}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


main()
