# Run a Python program unchanged under torch.profiler (CUDA activities) and write the Kineto
# (Chrome) trace: the reference that a k3sim capture of the same program is compared with.
# usage: capture-torch-profile.py OUT.json PROGRAM.py [ARGS...]
import runpy
import sys

from torch.profiler import ProfilerActivity, profile

out, prog = sys.argv[1], sys.argv[2]
sys.argv = sys.argv[2:]
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    runpy.run_path(prog, run_name="__main__")
prof.export_chrome_trace(out)
print("torch.profiler trace ->", out)
