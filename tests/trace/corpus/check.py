#!/usr/bin/env python3
"""Compare what k3sim reported with expect.py's numbers.
usage: check.py pinned FRESH.json COMMITTED.json   (the generator still writes what is committed)
       check.py case NAME EXPECTED.json IMPORT.json SUMMARY.json"""
import json, sys


def fail(msg):
    print("FAIL " + msg)
    sys.exit(1)


if sys.argv[1] == "pinned":
    fresh, pinned = (json.load(open(p)) for p in sys.argv[2:4])
    if fresh != pinned:
        for k in sorted(set(fresh) | set(pinned)):
            if fresh.get(k) != pinned.get(k):
                print("  %s differs" % k)
        fail("expect.py on gen.py's traces no longer gives tests/trace/corpus/expected.json")
    print("ok   expectations pinned (%d cases)" % len(pinned))
    sys.exit(0)

name = sys.argv[2]
want = json.load(open(sys.argv[3]))[name]
imp, s = (json.load(open(p)) for p in sys.argv[4:6])
t = s["totals"]
got = {
    "kernels": t["kernels"], "memcpys": t["memcpys"], "memsets": t["memsets"],
    "api_calls": t["api_calls"], "nvtx_ranges": t["nvtx_ranges"], "kernel_ns": t["kernel_ns"],
    "first_ns": t["first_ns"], "last_ns": t["last_ns"], "span_ns": t["span_ns"],
    "launch_matched": s["launch"]["matched"], "gpus": imp["gpus"],
    "processes": imp["processes"],
    "devices": sorted(({k: d[k] for k in ("kernels", "busy_ns", "comm_ns", "compute_ns",
                                          "overlap_ns")} for d in s["devices"]),
                      key=lambda x: (x["busy_ns"], x["kernels"])),
}
bad = [k for k in want if want[k] != got.get(k)]
for k in bad:
    print("  %s: %s: k3sim %s, expected %s" % (name, k, got.get(k), want[k]))
if bad:
    fail(name)
print("ok   %s (%d kernels, %d GPUs)" % (name, want["kernels"], want["gpus"]))
