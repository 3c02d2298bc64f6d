# Round 23 GPU suites (sourced by kernels/calls/k3-2026-12-03r.sh: suite NAME CAP [VAR=filter]);
# test-moe-gpu by filters (its whole run, ~170 s, is mostly the gemv cases); 02za's wide2rp: the
# wgmma cases (longer now: every MXFP4 matrix gets the tile layout too), K3's expert shapes
suite moe 90 MOE_TEST_FILTER='*wgmma*'
suite moe 90 MOE_TEST_FILTER='*k3_expert_shapes*'
suite moe 70 MOE_TEST_FILTER='*layer*'
suite moe 30 MOE_TEST_FILTER='*route*'
suite moe 20 MOE_TEST_FILTER='*combine*'
suite kda 45 KDA_TEST_FILTER='*prefill*'
suite mla 60
suite layer 20
suite attnres 15
suite dsa 20
suite mla-prefill 25
