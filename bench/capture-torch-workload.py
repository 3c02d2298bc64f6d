# An ordinary PyTorch program (nothing k3sim-specific in it): the workload that
# bench/capture-h200.sh captures under `k3sim trace capture` and, in a separate run, under
# torch.profiler, to compare per-kernel durations. Sizes give kernels of ~10 us to ~1 ms.
import sys

import torch

iters = int(sys.argv[1]) if len(sys.argv) > 1 else 200
torch.manual_seed(0)
dev = "cuda"
x = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
w1 = torch.randn(4096, 8192, device=dev, dtype=torch.bfloat16) / 64
w2 = torch.randn(8192, 4096, device=dev, dtype=torch.bfloat16) / 90
ln = torch.nn.LayerNorm(4096, device=dev, dtype=torch.bfloat16)
small = torch.randn(256, 1024, device=dev)
for _ in range(iters):
    h = torch.nn.functional.gelu(x @ w1)
    y = ln(h @ w2 + x)
    p = torch.softmax(y.float(), dim=-1)
    s = small.exp().sum(dim=1)
    x = (y * 0.5 + p.to(torch.bfloat16)).contiguous()
torch.cuda.synchronize()
print("workload done", float(s.sum()))
