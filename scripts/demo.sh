#!/usr/bin/env bash
# Builds fusebox and runs the demo: the ratio-IoU graph from PyTorch's JIT blog.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DFUSEBOX_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" --target fusebox_cli
echo "== the graph as PyTorch printed it, after fusebox's default passes =="
build/fusebox print examples/ratio_iou.ir --passes default --verify
