#!/bin/sh
# tensorexpr's cuda backend on a GPU machine (issue 14.4), with nothing but
# the built tree (no Python, no PyTorch: the goldens are in tests/corpus):
#
#   bench/te_gpu.sh BUILD_DIR
#
#   1. the GPU runtime opens: `fusebox explain --source` of a softmax under
#      FUSEBOX_TE_BACKEND=cuda must say its kernel ran on a CUDA device
#      (it prints which);
#   2. the whole corpus under the cuda backend, forward and forward +
#      backward, against PyTorch's outputs and gradients: test_te_cuda with
#      FBX_TE_EXPECT_GPU=1 (every compiled kernel must have run on the GPU);
#   3. timings with `fusebox bench` (interleaved rounds, medians; see
#      `fusebox bench --help`): a pointwise kernel (GELU, tanh form, 2^22
#      float32) and a row softmax ([4096, 1024] float32), each under the
#      cuda backend and the C backend (one process each: the backend is read
#      when the plugin loads), against `none`. The cuda figures include the
#      host <-> device copies of every run (the runtime copies inputs in and
#      outputs back per run).
#
# Exit status: non-zero when the runtime does not open or the corpus fails.
# ITERS (default 20) sets the timed runs.
set -eu
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLI=$BUILD/fusebox
TE=$BUILD/plugins/libfbx_tensorexpr.so
TEST=$BUILD/tests/test_te_cuda
ITERS=${ITERS:-20}
for f in "$CLI" "$TE" "$TEST"; do
  [ -e "$f" ] || { echo "$0: no $f (build fusebox_cli, fbx_tensorexpr and test_te_cuda)" >&2; exit 1; }
done

echo "== 1. the GPU runtime"
G=$(mktemp /tmp/te_gpu_softmax.XXXXXX)
trap 'rm -f "$G"' EXIT INT TERM
cat > "$G" <<'IR'
graph(%x.1 : Float(64, 1000, strides=[1000, 1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=-1]()
  %2 : NoneType = prim::Constant()
  %3 : Tensor = aten::softmax(%x.1, %1, %2)
  return (%3)
IR
out=$(FUSEBOX_TE_BACKEND=cuda "$CLI" explain "$G" --fuser "$TE" --source --random 2>&1) || { echo "$out"; exit 1; }
if ! echo "$out" | grep -q ", run on "; then
  echo "$out" | grep -i "cuda\|warning" | head -20
  echo "$0: the kernels did not run on a GPU (see the warning above)" >&2
  exit 1
fi
echo "$out" | grep -o "run on [^=]*" | head -1

echo "== 2. the corpus under FUSEBOX_TE_BACKEND=cuda, forward and backward (test_te_cuda)"
(cd "$BUILD/tests" && FBX_TE_EXPECT_GPU=1 CK_DEFAULT_TIMEOUT=600 "$TEST")

echo "== 3. timings (median over $ITERS interleaved runs; cuda includes the copies)"
for backend in cuda c; do
  echo "-- FUSEBOX_TE_BACKEND=$backend: GELU (tanh) 2^22"
  FUSEBOX_TE_BACKEND=$backend "$CLI" bench "$ROOT/bench/graphs/gelu_tanh.ir" --random --shape 4194304 \
    --fusers "none,$TE" --iters "$ITERS"
  echo "-- FUSEBOX_TE_BACKEND=$backend: softmax [4096, 1024]"
  FUSEBOX_TE_BACKEND=$backend "$CLI" bench "$ROOT/bench/graphs/softmax.ir" --random --shape 4096,1024 \
    --fusers "none,$TE" --iters "$ITERS"
done
