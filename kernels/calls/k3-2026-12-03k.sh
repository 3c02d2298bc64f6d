#!/usr/bin/env bash
# 2026-12-03 (lead): KDA prefill at T = 16K / 4K, H = 96: combinations of the opt-in knobs not yet
# measured together (the lean intra kernel v3 with 8-warp recurrent CTAs, with 4 stages), one
# process, alternating, two orders. Staged as .gpu/r22/kda-ab.sh beside round 22's pack:
#   PACK=.gpu/r22 bash .gpu/r22/kda-ab.sh
set -u
PACK=${PACK:-.gpu/r22}; B=$PACK/k3-build; OUT=${OUT:-$PWD/k3-out}; mkdir -p "$OUT"
[ -d "$B" ] || tar xJf "$PACK/pack.tar.xz" -C "$PACK"
export LD_LIBRARY_PATH=$PWD/$PACK:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
. "$PACK/device-env.sh"; device_env "$OUT/env.txt" "$OUT/smi.csv"
K=$B/kernels/kda-bench
AB1='default:;v3w8:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=8;w8:K3_KDA_RECUR_WARPS=8;v3:K3_KDA_INTRA=v3;v3w8s4:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=8,K3_KDA_RECUR_STAGES=4;v3s4:K3_KDA_INTRA=v3,K3_KDA_RECUR_STAGES=4'
AB2='v3s4:K3_KDA_INTRA=v3,K3_KDA_RECUR_STAGES=4;v3w8s4:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=8,K3_KDA_RECUR_STAGES=4;v3:K3_KDA_INTRA=v3;w8:K3_KDA_RECUR_WARPS=8;v3w8:K3_KDA_INTRA=v3,K3_KDA_RECUR_WARPS=8;default:'
timeout 100 "$K" --only prefill --prefill-t 4096,16384 --prefill-h 96 --prefill-state fp32,bf16 --prefill-ab "$AB1" --prefill-rounds 5 -o "$OUT/ab1.csv" > "$OUT/ab1.txt" 2>&1; echo "ab1 exit $?"
timeout 100 "$K" --only prefill --prefill-t 16384 --prefill-h 96 --prefill-state fp32,bf16 --prefill-ab "$AB2" --prefill-rounds 5 -o "$OUT/ab2.csv" > "$OUT/ab2.txt" 2>&1; echo "ab2 exit $?"
B=$B KDA_TEST_FILTER='*prefill*' timeout 40 "$B/tests/kernels/test-kda-gpu" > "$OUT/tests.txt" 2>&1; echo "tests exit $?"; grep -E "OK|FAIL|PASS" "$OUT/tests.txt" | tail -4
kill "$SMI_PID" 2>/dev/null; xz -9 "$OUT/smi.csv"
python3 - "$OUT" <<'PY'
import csv, sys, statistics as st, collections
d = collections.defaultdict(list)
for f in ("ab1.csv", "ab2.csv"):
    try:
        for r in csv.DictReader(open(sys.argv[1] + "/" + f)):
            if r["op"].startswith("prefill") and r["batch"] == "1":
                d[(r["seq_len"], r["state"], r["op"])].append(float(r["time_us"]))
    except OSError:
        pass
for k, v in sorted(d.items()):
    print(*k, len(v), "median %.1f min %.1f max %.1f" % (st.median(v), min(v), max(v)))
PY
