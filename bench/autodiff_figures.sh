#!/bin/sh
# The autodiff figures of issue #6's closing note, measured in one run of
# this script on this machine:
#
#   bench/autodiff_figures.sh BUILD_DIR [FUSER] [OUT_DIR]
#
# Forward + backward per iteration through the gradient API
# (`fusebox bench --backward`: every floating input requires grad, the
# output gradient is ones), FUSER (default BUILD_DIR/plugins/libfbx_legacy.so)
# against `none`, on:
#
#   ratio_iou          examples/ratio_iou.ir, 8 inputs of 2^24 float32
#   layer_norm         bench/graphs/layer_norm.ir (aten::layer_norm), x [4096, 1024],
#                      weight and bias [1024]
#   layer_norm_manual  bench/graphs/layer_norm_manual.ir (mean/var/sqrt written out),
#                      the same sizes
#   gelu_tanh          bench/graphs/gelu_tanh.ir, 2^22 float32
#
# Backward kernel launches per iteration: without fusion every op of the
# backward graphs is one interpreted kernel (`none`'s bwd_interp/run); with
# fusion, the fused groups' launches plus the ops the fuser left out.
# Builds nothing; needs the `python3` on PATH to read the JSON files, which
# stay in OUT_DIR (default: a new temporary directory).
set -eu

FIGURES=autodiff_figures
. "$(dirname "$0")/figures_args.sh"
ITERS=${ITERS:-10}

run() {
  name=$1 graph=$2
  shift 2
  echo "== $name" >&2
  "$CLI" bench "$ROOT/$graph" --backward --random "$@" --fusers "none,$FUSER" --iters "$ITERS" \
    --json "$OUT/$name.json" >&2
}

run ratio_iou examples/ratio_iou.ir --shape 16777216
run layer_norm bench/graphs/layer_norm.ir --shape x.1=4096,1024 --shape weight.1=1024 --shape bias.1=1024
run layer_norm_manual bench/graphs/layer_norm_manual.ir --shape x.1=4096,1024 --shape weight.1=1024 \
  --shape bias.1=1024
run gelu_tanh bench/graphs/gelu_tanh.ir --shape 4194304

echo
echo "# fusebox autodiff figures: $(uname -n), $(date -u +%Y-%m-%dT%H:%MZ), fuser $FUSER, $ITERS timed forward+backward runs each"
python3 - "$OUT" ratio_iou layer_norm layer_norm_manual gelu_tanh <<'PY'
import json, os, sys

out, names = sys.argv[1], sys.argv[2:]
hdr = ("graph", "none_ms", "fused_ms", "speedup", "dgs", "bwd_k_none", "bwd_k_fused", "bwd_launch", "bwd_interp",
       "fwd_k_none", "fwd_k_fused", "max_rel")
print("%-18s %9s %9s %8s %4s %10s %11s %10s %10s %10s %11s %9s" % hdr)
notes = []
for n in names:
    r = json.load(open(os.path.join(out, n + ".json")))
    none = next(f for f in r["fusers"] if f["name"] == "none")
    fz = next(f for f in r["fusers"] if f["name"] != "none")
    fmt = lambda v, s: "-" if v is None else s % v
    bwd_fused = fz["backward_kernel_launches_per_run"] + fz["backward_interpreted_ops_per_run"]
    fwd_fused = fz["kernel_launches_per_run"] + fz["interpreted_ops_per_run"]
    print("%-18s %9.3f %9.3f %8s %4d %10.1f %11.1f %10.1f %10.1f %10.1f %11.1f %9s" % (
        n, none["median_ms"], fz["median_ms"], fmt(fz["speedup"], "%.2fx"), fz["differentiable_graphs"],
        none["backward_interpreted_ops_per_run"], bwd_fused, fz["backward_kernel_launches_per_run"],
        fz["backward_interpreted_ops_per_run"], none["interpreted_ops_per_run"], fwd_fused,
        fmt(fz["max_rel_error"], "%.2g")))
    if not fz["outputs_match"] or fz["fallbacks"]:
        notes.append("%s: outputs_match %s, %d fallbacks in the timed runs" % (n, fz["outputs_match"], fz["fallbacks"]))
print("bwd_k_*: backward kernels per iteration (fused: launches + interpreted ops); fwd_k_*: the same for the forward")
for s in notes:
    print("note: " + s)
print("JSON files: " + out)
PY
