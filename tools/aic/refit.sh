#!/bin/sh
# Fit k3sim presets for GPUs we cannot run from the public measurements in bench/public/aic
# (AIConfigurator's tables, converted by tools/aic/convert.mjs), with `k3sim calibrate` exactly as
# from our own captures. Writes OUTDIR/GPU.yaml and, with --report, OUTDIR/GPU/calibration.md; it
# never writes hw/presets (review a fit, then copy it there).
#
# usage: tools/aic/refit.sh [-o OUTDIR] [--report] [--k3sim PATH] [GPU...]
#   GPU: h100 b200 b300 gb200 (default: all four); h200 also works, for the cross-source check only
#   (issue 13: the public H200 tables stay out of the shipped h200 preset).
#
# Base preset: hw/presets/GPU-datasheet.yaml when it exists, else hw/presets/GPU.yaml if it is still a
# datasheet one (calibrated: false); B300 has neither yet, so it needs hw/presets/b300-datasheet.yaml.
#
# Inputs per GPU (one file per op class, so no op is measured twice with two kernels):
#   gemm-bf16, gemm-fp8 (per-tensor FP8; the block-scaled table is a second kernel for the same op
#   spec), gemm-nvfp4 on Blackwell (approximate: NVFP4 counted as MXFP4), nccl (collectives at
#   2/4/8 GPUs; custom all-reduce is a different kernel for the same spec), mla-decode, mla-prefill,
#   kda-vllm (FlashKDA prefill and fused decode, the kernels closest to ours) and the DeepEP
#   low-latency dispatch/combine. Left out: the MoE files (a fused MoE layer is not one
#   grouped GEMM; use them to check, not to fit) and DeepEP normal (its ranks and dispatch dtype
#   are inferred). Override with FILES="gemm-bf16 nccl ...".
set -eu
cd "$(dirname "$0")/../.."
out=/tmp/k3sim-refit
report=
k3sim=build/cli/k3sim
gpus=
while [ $# -gt 0 ]; do
	case $1 in
	-o) out=$2; shift 2 ;;
	--report) report=1; shift ;;
	--k3sim) k3sim=$2; shift 2 ;;
	-h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "refit.sh: unknown option '$1'; see --help" >&2; exit 2 ;;
	*) gpus="$gpus $1"; shift ;;
	esac
done
[ -n "$gpus" ] || gpus="h100 b200 b300 gb200"
[ -x "$k3sim" ] || { echo "refit.sh: no $k3sim (build first: meson setup build && ninja -C build)" >&2; exit 1; }
mkdir -p "$out"

status=0
for gpu in $gpus; do
	case $gpu in
	h100|h200|b200|b300) dir=bench/public/aic/${gpu}_sxm ;;
	gb200) dir=bench/public/aic/gb200 ;;
	*) echo "refit.sh: unknown GPU '$gpu' (h100 h200 b200 b300 gb200)" >&2; exit 2 ;;
	esac
	if [ -f "hw/presets/$gpu-datasheet.yaml" ]; then
		base=hw/presets/$gpu-datasheet.yaml
	elif [ -f "hw/presets/$gpu.yaml" ] && grep -q '^calibrated: false' "hw/presets/$gpu.yaml"; then
		base=hw/presets/$gpu.yaml
	else
		echo "refit.sh: $gpu: no datasheet preset to start from (write hw/presets/$gpu-datasheet.yaml)" >&2
		status=1
		continue
	fi
	files=
	for f in ${FILES:-gemm-bf16 gemm-fp8 gemm-nvfp4 nccl mla-decode mla-prefill kda-vllm deepep-ll-dispatch deepep-ll-combine}; do
		[ -f "$dir/$f.csv" ] && files="$files $dir/$f.csv"
	done
	echo "== $gpu: base $base"
	# shellcheck disable=SC2086
	"$k3sim" calibrate $files --hw "$base" --name "$gpu" -o "$out/$gpu.yaml" -f \
		${report:+--report "$out/$gpu"} || status=1
done
exit $status
