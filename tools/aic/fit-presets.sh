#!/bin/sh
# The shipped calibrated presets of GPUs we cannot run, hw/presets/{h100,b200,b300,gb200}.yaml:
# `k3sim calibrate` on NVIDIA's public measurements (AIConfigurator's collected perf database,
# converted by tools/aic/convert.mjs into bench/public/aic/<gpu>/*.csv), with the same protocol as
# our own captures. Regenerates them byte for byte (the date is pinned by SOURCE_DATE_EPOCH), with
# their reports in docs/perf/calibration-<gpu>-public-2026-12-01/.
#
# usage: tools/aic/fit-presets.sh [-o DIR] [--no-report] [--k3sim PATH] [GPU...]
#   GPU: h100 b200 b300 gb200 (default: all four). h200 is fitted only with -o (the cross-source
#   check of docs/perf/public-crosscheck-2026-12-01.md: the public H200 tables stay out of
#   hw/presets/h200.yaml, but for the NCCL tables at 4 and 8 GPUs: bench/calib/fit-h200.sh).
#   -o DIR: write DIR/GPU.yaml (and DIR/GPU/ reports) instead of hw/presets and docs/perf.
#
# Each source table of the public database is a run (--run), so leave-one-run-out scores one
# framework's table against a fit to the others where two measured the same ops (KDA: SGLang's
# fla kernels and vLLM's FlashKDA); held out by shape as for captures (calib/points.h). Fitted:
#   GEMM (gemm_perf: bf16, per-tensor fp8, and nvfp4 as mxfp4 on Blackwell), NCCL (2/4/8 GPUs),
#   MLA decode and prefill with a BF16 cache, KDA (both frameworks; prefill of 256 tokens or more:
#   below 16 chunks both kernels' time is per-call and per-sequence overhead, not the chunk chain
#   k3sim models, and fitting it put b=1 t=1K h=12 on the H200 at 2.8x the measured time).
# Scored, not fitted (another kernel for the same op spec, or no single k3sim op; docs/perf/
# calibration-public-2026-12-01.md says why): fp8-block GEMM (DeepGEMM), SGLang's custom
# all-reduce, DeepEP, MLA with an FP8 cache (SGLang's FA3 FP8 path), the fused MoE layers.
set -eu
cd "$(dirname "$0")/../.."
out=
report=1
k3sim=build/cli/k3sim
gpus=
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	--no-report) report=; shift ;;
	--k3sim) k3sim=$2; shift 2 ;;
	-h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "fit-presets.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
	*) gpus="$gpus $1"; shift ;;
	esac
done
[ -n "$gpus" ] || gpus="h100 b200 b300 gb200"
[ -x "$k3sim" ] || { echo "fit-presets.sh: no $k3sim (build first: meson setup build && ninja -C build)" >&2; exit 1; }
commit=$(sed -n 's/^- commit: `\([0-9a-f]\{40\}\)`.*/\1/p' bench/public/aic/README.md)
[ -n "$commit" ] || { echo "fit-presets.sh: bench/public/aic/README.md names no source commit" >&2; exit 1; }
# 2026-12-01T00:00:00Z: the day these presets were fitted (the date each records)
SOURCE_DATE_EPOCH=1796083200
export SOURCE_DATE_EPOCH

for gpu in $gpus; do
	case $gpu in
	h100|b200|b300) aic=${gpu}_sxm ;;
	gb200) aic=gb200 ;;
	h200)
		aic=h200_sxm
		[ -n "$out" ] || { echo "fit-presets.sh: h200 only with -o (the public H200 tables stay out of hw/presets/h200.yaml)" >&2; exit 2; } ;;
	*) echo "fit-presets.sh: unknown GPU '$gpu' (h100 b200 b300 gb200; h200 with -o)" >&2; exit 2 ;;
	esac
	d=bench/public/aic/$aic
	if [ -n "$out" ]; then
		mkdir -p "$out"
		preset=$out/$gpu.yaml rep=$out/$gpu
	else
		preset=hw/presets/$gpu.yaml rep=docs/perf/calibration-$gpu-public-2026-12-01
	fi
	gemm=$d/gemm-bf16.csv,$d/gemm-fp8.csv
	[ ! -f "$d/gemm-nvfp4.csv" ] || gemm=$gemm,$d/gemm-nvfp4.csv
	echo "== $gpu: $d"
	"$k3sim" calibrate --hw "hw/presets/$gpu-datasheet.yaml" -o "$preset" --name "$gpu" -f \
		${report:+--report "$rep"} \
		--source "NVIDIA AIConfigurator's collected perf database (github.com/ai-dynamo/aiconfigurator @ $commit, Apache-2.0, NVIDIA CORPORATION & AFFILIATES: aic-core/src/aiconfigurator_core/systems/data/$aic), as $d" \
		--exclude '* kv=fp8*' \
		--exclude 'kda_chunk * t=? *' --exclude 'kda_chunk * t=?? *' --exclude 'kda_chunk * t=128 *' \
		--run "sglang-0.5.14:gemm=$gemm" \
		--run "nccl-2.29.2:nccl=$d/nccl.csv" \
		--run "sglang-0.5.14:mla-generation=$d/mla-decode.csv" \
		--run "sglang-0.5.14:mla-context=$d/mla-prefill.csv" \
		--run "sglang-0.5.16:kda=$d/kda-sglang.csv" \
		--run "vllm-0.1.dev19262:kda=$d/kda-vllm.csv"
	"$k3sim" check --hw "$preset" --ops 100000 --scenarios 200
done
