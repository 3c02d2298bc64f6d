# Run one of bench/profile/models.py's models (prefill + greedy decode), profiled one of two ways:
#   profile-run.py MODEL nvtx                 emit_nvtx(record_shapes=True): run it under
#                                             `k3sim trace capture -- python3 profile-run.py ...`
#   profile-run.py MODEL kineto OUT.json      torch.profiler (CPU + CUDA, record_shapes=True),
#                                             Kineto JSON written to OUT.json
# MODEL: dsv3 | hybrid. Environment: B (batch, 4), T (prompt tokens, 256), STEPS (decode steps, 8).
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("nvtx", "kineto", "none"):
        raise SystemExit("usage: profile-run.py dsv3|hybrid nvtx|kineto [OUT.json]")
    name, mode = sys.argv[1], sys.argv[2]
    B, T, steps = int(os.environ.get("B", 4)), int(os.environ.get("T", 256)), int(os.environ.get("STEPS", 8))
    if name == "dsv3":
        model, vocab = models.build_dsv3()
        step = models.HFStep(model)
    else:
        model, vocab = models.build_hybrid()
        step = models.HybridStep(model)
    g = torch.Generator(device="cuda").manual_seed(1)
    prompt = torch.randint(0, vocab, (B, T), device="cuda", generator=g)
    torch.cuda.synchronize()

    def generate(n, tag=""):
        step.reset()
        with torch.autograd.profiler.record_function(tag + "prefill"):
            nxt = step(prompt).argmax(-1, keepdim=True)
        toks = [nxt]
        for _ in range(n):
            with torch.autograd.profiler.record_function(tag + "decode"):
                nxt = step(nxt).argmax(-1, keepdim=True)
            toks.append(nxt)
        return torch.cat(toks, 1)

    def run():
        with torch.autograd.profiler.record_function("warmup"):
            generate(2, "warmup_")
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = generate(steps)
        torch.cuda.synchronize()
        return out, time.perf_counter() - t0

    with torch.no_grad():
        if mode == "nvtx":
            with torch.autograd.profiler.emit_nvtx(record_shapes=True):
                out, dt = run()
        elif mode == "kineto":
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True) as prof:
                out, dt = run()
            prof.export_chrome_trace(sys.argv[3])
        else:
            out, dt = run()
    print("%s %s: B=%d T=%d steps=%d tokens %s, prefill+decode %.1f ms, torch %s, grouped_mm %s"
          % (name, mode, B, T, steps, out[0, :6].tolist(), dt * 1e3, torch.__version__, models.HAVE_GROUPED_MM))


if __name__ == "__main__":
    main()
