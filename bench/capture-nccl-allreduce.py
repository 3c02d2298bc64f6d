# Two-process NCCL all-reduce (one process per GPU, started by torchrun): the program that
# bench/capture-nccl2.sh captures with `k3sim trace capture`, one database per rank.
import os

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank = dist.get_rank()
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
x = torch.full((64 << 20,), float(rank + 1), device="cuda")  # 256 MiB of fp32
for i in range(20):
    torch.cuda.nvtx.range_push(f"allreduce {i}")
    dist.all_reduce(x)
    torch.cuda.nvtx.range_pop()
    x.div_(dist.get_world_size())
torch.cuda.synchronize()
ws = dist.get_world_size()
expect = sum(range(1, ws + 1)) / ws
assert abs(float(x[0]) - expect) < 1e-3, (float(x[0]), expect)
print(f"rank {rank}: all-reduce ok")
dist.destroy_process_group()
