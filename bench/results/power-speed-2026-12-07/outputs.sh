#!/bin/sh
# outputs of k3sim under --clock power on windowed / delayed presets, into $1
K=$2; D=$1; mkdir -p $D
i=0
for hw in /tmp/keep1/k3-kernels-clk-h200.yaml /tmp/keep1/k3-kernels-h200.yaml h200 h100; do
 for p in 1024 4096 32768 131072; do for b in 1 16 256; do
  i=$((i+1)); $K run --hw $hw --clock power --prompt $p --batch $b --json > $D/run-$i.json 2>&1
 done; done
done
$K run /tmp/keep1/scenario-prompt-4096-cv.yaml --hw /tmp/keep1/k3-kernels-clk-h200.yaml --clock power --json > $D/s1.json 2>&1
$K run /tmp/keep1/scenario-prompt-16384-cv.yaml --hw /tmp/keep1/k3-kernels-clk-h200.yaml --clock power --json > $D/s2.json 2>&1
$K run /tmp/keep1/scenario-eager.yaml --hw /tmp/keep1/k3-kernels-clk-h200.yaml --clock power --json > $D/s3.json 2>&1
