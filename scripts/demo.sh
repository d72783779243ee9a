#!/usr/bin/env bash
# Builds fusebox and runs the demo: the ratio-IoU function from PyTorch's JIT
# fuser blog, as PyTorch printed its TorchScript graph (examples/ratio_iou.ir).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFUSEBOX_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target fusebox_cli fbx_legacy
echo "== examples/ratio_iou.ir after fusebox's default passes =="
build/fusebox print examples/ratio_iou.ir --passes default --verify
in=tests/corpus/cases/ratio_iou
echo
echo "== run on 1000-box inputs (PyTorch's answer is $in/out0.npy) =="
build/fusebox run examples/ratio_iou.ir \
  --input x1=$in/in0.npy --input y1=$in/in1.npy --input w1=$in/in2.npy --input h1=$in/in3.npy \
  --input x2=$in/in4.npy --input y2=$in/in5.npy --input w2=$in/in6.npy --input h2=$in/in7.npy \
  --iters 20

inputs="--input x1=$in/in0.npy --input y1=$in/in1.npy --input w1=$in/in2.npy --input h1=$in/in3.npy
  --input x2=$in/in4.npy --input y2=$in/in5.npy --input w2=$in/in6.npy --input h2=$in/in7.npy"
echo
echo "== the same with the legacy fuser: one fused kernel for all of its pointwise ops =="
# shellcheck disable=SC2086
build/fusebox run examples/ratio_iou.ir --fuser legacy $inputs --iters 20
echo
echo "== forward + backward under the legacy fuser: one fused kernel each way =="
# shellcheck disable=SC2086
build/fusebox run examples/ratio_iou.ir --fuser legacy $inputs --iters 20 --backward
