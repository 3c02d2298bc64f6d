#!/usr/bin/env bash
# Issue 17, KDA prefill, round 05q (lead, 2026-12-05, session 18:07-21:07 UTC): the intra kernel's
# inputs prefetched into L2 for the CTA N places later in launch order (K3_KDA_INTRA_PF=N, opt-in;
# intra_prefetch() in kda_prefill.cu). The question: is the intra kernel (1.09-1.17 ms alone at
# T = 16K, H = 96 on the H200, 1.38 on the H100; IPC ~2.5 of 4, so latency- rather than
# issue-bound) faster when its CTAs' first loads hit L2, alone (serial path: its "intra" column)
# and beside the recurrent kernel (the overlapped default)? Sets, one process, 3 rounds, FP32
# state, T = 4K and 16K at H = 96 (and 4 x 4K): def (overlapped at one sequence), ovpf672 /
# ovpf1344 (7 / 14 chunks of 96 heads ahead), ser (serial, chunk kernel), serpf1056 / 2112 /
# 4224, serpr (serial + pairr) and serprpf (serial + pairr + PF 2112). Then test-kda-gpu
# *intra_pf* (bit for bit against no prefetch, float64) and *default_path* (the knob's checks).
# Pack: .gpu/kda (kda-bench, test-kda-gpu of build-gpu at this commit).
# From the repository root:  PACK=.gpu/kda OUT=$OUT bash kernels/calls/k3-2026-12-05q.sh
S=K3_KDA_PREFILL=serial P=K3_KDA_INTRA_PF
export AB="def:;ovpf672:$P=672;ovpf1344:$P=1344;ser:$S;serpf1056:$S,$P=1056;serpf2112:$S,$P=2112;serpf4224:$S,$P=4224;serpr:$S,K3_KDA_RECUR=pairr;serprpf:$S,K3_KDA_RECUR=pairr,$P=2112"
export GRID="--prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32"
export ROUNDS=${ROUNDS:-3} BENCH_CAP=${BENCH_CAP:-200} TEST_FILTER=${TEST_FILTER:-'*intra_pf* *default_path*'} TEST_CAP=${TEST_CAP:-90}
exec bash "$(dirname "$0")/kda-ab-call.sh"
