#!/bin/sh
# nvfuser_like's CUDA path on a GPU machine (issue 15), with nothing but the
# built tree (the goldens are in tests/corpus):
#
#   bench/nvf_gpu.sh BUILD_DIR
#
#   1. the runtime on the GPU: test_nvf_rt (hand-written kernels through
#      nvf_rt), launch overhead and the device's copy bandwidth
#      (bench_nvf_launch: cuMemcpyDtoD of 256 MiB timed by CUDA events);
#   2. the corpus on CUDA, forward and backward, against PyTorch's outputs
#      and gradients (test_nvf_corpus with FUSEBOX_NVF_TEST_TARGET=cuda);
#   3. the kernels' bandwidth: ratio-IoU and GELU (tanh form) over 2^LOG2N
#      float32 elements, GELU also with FUSEBOX_NVF_DISABLE=vload (4 strided
#      scalar accesses per thread instead of one 16-byte access), and the
#      persistent kernels of softmax and layer norm on [2^LOG2N / 1024, 1024],
#      under `fusebox bench`, with the kernels timed on the device by CUDA
#      events (FUSEBOX_CUDA_KERNEL_TIMING=1: the plugin logs their
#      milliseconds per run when it unloads); GB/s counts each input read
#      once and each output written once, against the copy bandwidth of
#      step 1 (the issue's goal for pointwise kernels: >= 0.8 of it);
#   4. PyTorch on the same device and size, when python3 has torch with
#      CUDA (bench/gpu_peer.py): a copy of the same bytes, PyTorch's GELU
#      kernel, the written-out GELU eager and under torch.compile, softmax
#      and layer norm.
#
# LOG2N (default 26: 256 MiB per tensor, the bytes of step 1's copy) sets the
# element count of steps 3 and 4; STEPS (default "1 2 3 4") picks the steps
# (step 3 without step 1 prints no copy fraction); ROWS (default all) names
# step 3's rows to run (ratio_iou gelu gelu_no_vload softmax layer_norm).
#
# Exit status: non-zero when a test fails.
set -eu
if [ $# -ne 1 ]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD=$(cd "$1" && pwd)
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLI=$BUILD/fusebox
export FUSEBOX_NVF_TARGET=cuda
export FUSEBOX_CACHE_DIR=${FUSEBOX_CACHE_DIR:-$(mktemp -d /tmp/nvf_gpu.XXXXXX)}
STEPS=" ${STEPS:-1 2 3 4} "
log2n=${LOG2N:-26}
want() { case "$STEPS" in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

copy=
if want 1; then
echo "== 1. runtime, launch overhead, copy bandwidth"
(cd "$BUILD/tests" && "$BUILD/tests/test_nvf_rt" 2>&1 | grep -E "cuda_open_or_run|Checks|:[FE]:")
launch=$("$BUILD/bench/bench_nvf_launch" 2000 2>&1)
echo "$launch"
copy=$(echo "$launch" | sed -n 's/.*copy bandwidth.*: \([0-9.]*\) GB\/s.*/\1/p')
fi

if want 2; then
echo "== 2. the corpus on CUDA (test_nvf_corpus)"
(cd "$BUILD/tests" && FUSEBOX_NVF_TEST_TARGET=cuda CK_RUN_CASE=corpus CK_DEFAULT_TIMEOUT=600 "$BUILD/tests/test_nvf_corpus" 2>&1 |
  grep -E "corpus|Checks|fail" | head -20)
fi

if want 3; then
echo "== 3. kernels' bandwidth (device time by CUDA events; copy bandwidth ${copy:-?} GB/s)"
n=$((1 << log2n))
rows=$(cat <<ROWS
ratio_iou examples/ratio_iou.ir 9 $n -
gelu bench/graphs/gelu_tanh.ir 2 $n -
gelu_no_vload bench/graphs/gelu_tanh.ir 2 $n vload
softmax bench/graphs/softmax.ir 2 x.1=$((n / 1024)),1024 -
layer_norm bench/graphs/layer_norm.ir 2 x.1=$((n / 1024)),1024;weight.1=1024;bias.1=1024 -
ROWS
)
echo "$rows" | while read -r name graph tensors shape off; do
  case " ${ROWS:-$name} " in *" $name "*) ;; *) continue ;; esac
  [ "$off" = - ] && off=
  set --
  for s in $(echo "$shape" | tr ';' ' '); do set -- "$@" --shape "$s"; done
  out=$(FUSEBOX_NVF_DISABLE=$off FUSEBOX_CUDA_KERNEL_TIMING=1 FUSEBOX_LOG=fusion "$CLI" bench "$ROOT/$graph" \
    --fusers none,nvfuser_like --random "$@" --iters 20 2>&1) || { echo "$out" | tail -5; exit 1; }
  echo "$out" | grep -E "^(fuser|none|nvfuser_like) "
  ms=$(echo "$out" | sed -n 's/.*timed on the device: \([0-9.]*\) ms of kernels per run.*/\1/p' | tail -1)
  echo "$name: $tensors tensors x $n float32 per run, kernels ${ms:-?} ms per run" |
    awk -v ms="${ms:-0}" -v copy="${copy:-0}" -v b="$((tensors * n * 4))" '{ printf "%s", $0 }
      END { if (ms > 0) { g = b / (ms / 1e3) / 1e9; printf " = %.0f GB/s", g; if (copy > 0) printf " = %.2f of copy", g / copy }
            print "" }'
done
fi

if want 4; then
echo "== 4. PyTorch on this device, 2^$log2n float32 (bench/gpu_peer.py)"
if command -v python3 >/dev/null 2>&1; then
  timeout 150 python3 "$ROOT/bench/gpu_peer.py" "$log2n" 2>&1 | tail -8 || echo "gpu_peer.py failed or timed out"
else
  echo "no python3 here; skipped"
fi
fi
