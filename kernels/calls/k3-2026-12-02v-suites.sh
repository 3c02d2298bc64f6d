# Round 20's GPU suites (sourced by kernels/calls/k3-2026-12-02v.sh: suite NAME CAP [VAR=filter]);
# test-moe-gpu by filters (its whole run, ~160 s, is mostly the gemv cases, unchanged this session)
suite moe 40 MOE_TEST_FILTER='*wgmma*'
suite moe 45 MOE_TEST_FILTER='*layer*'
suite moe 30 MOE_TEST_FILTER='*route*'
suite moe 20 MOE_TEST_FILTER='*combine*'
suite mla 60
suite kda 40 KDA_TEST_FILTER='*prefill*'
suite layer 20
suite attnres 15
suite dsa 20
suite mla-prefill 25
