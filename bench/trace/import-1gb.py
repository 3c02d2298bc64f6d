#!/usr/bin/env python3
# usage: python3 bench/trace/import-1gb.py (beside a k3sim and a kineto-gen binary: copy build/cli/k3sim and build/bench/kineto-gen next to it)
# 1 GB Kineto import throughput on an idle machine: wall, CPU and peak RSS of each import (file, pipe,
# gzip file, gzip pipe), counts checked against the generator's.
import json, os, resource, subprocess, sys, time
d = os.path.dirname(os.path.abspath(__file__))
k3, gen, tmp = d + "/k3sim", d + "/kineto-gen", "/tmp/k3imp"
os.makedirs(tmp, exist_ok=True)
t = time.time()
want = subprocess.run([gen, str(10**9), tmp + "/t.json"], capture_output=True, text=True, check=True).stderr.strip()
gen_s = time.time() - t
subprocess.run("gzip -1 -c %s/t.json > %s/t.json.gz" % (tmp, tmp), shell=True, check=True)
size = os.path.getsize(tmp + "/t.json")
print("# input: %d bytes (kineto-gen %.1f s), gzip -1: %d bytes; %d cores; %s" % (size, gen_s, os.path.getsize(tmp + "/t.json.gz"), os.cpu_count(), open("/proc/loadavg").read().strip()))
cases = [("file", "%s trace import %s/t.json -o %s/o.db --json" % (k3, tmp, tmp)),
         ("pipe", "cat %s/t.json | %s trace import - -o %s/o.db --json" % (tmp, k3, tmp)),
         ("gzip file", "%s trace import %s/t.json.gz -o %s/o.db --json" % (k3, tmp, tmp)),
         ("gzip pipe", "gzip -dc %s/t.json.gz | %s trace import - -o %s/o.db --json" % (tmp, k3, tmp))]
for rep in (1, 2):
    for name, cmd in cases:
        try: os.unlink(tmp + "/o.db")
        except FileNotFoundError: pass
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.time()
        p = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        wall = time.time() - t
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        try:
            j = json.loads(p.stdout)
            counts = "kernels %d api_calls %d memcpys %d memsets %d nvtx %d" % (j["kernels"], j["api_calls"], j["memcpys"], j["memsets"], j["nvtx"])
        except Exception:
            counts = "FAILED: " + p.stderr[:300]
        ok = "counts ok" if want.startswith(counts) else "COUNTS DIFFER (%s)" % want
        print("run %d %-10s: %.1f MB/s wall (%.2f s), %.1f MB/s of CPU time (%.2f s, all processes of the pipeline), peak RSS of the largest child %d MiB; %s; %s"
              % (rep, name, size / 1e6 / wall, wall, size / 1e6 / cpu, cpu, r1.ru_maxrss // 1024, counts, ok))
