#!/bin/sh
# The fuser figures of issue #5's closing note, all measured in one run of
# this script on this machine:
#
#   bench/fuser_figures.sh BUILD_DIR [FUSER] [OUT_DIR]
#
# FUSER is a fuser name or plugin path (default: BUILD_DIR/plugins/libfbx_legacy.so,
# the legacy fuser); each graph is benchmarked against `none` with
# `fusebox bench` (interleaved timed runs, memcpy measured in the same
# rounds, see `fusebox bench --help`):
#
#   ratio_iou   examples/ratio_iou.ir, 8 inputs of 2^24 float32 (targets: 4x over
#               none; effective bandwidth 9 x 4 x n bytes / time >= 0.7 of memcpy)
#   gelu_tanh   bench/graphs/gelu_tanh.ir, 4096 x 4096 float32
#   bias_gelu   bench/graphs/bias_gelu.ir, 4096 x 4096 + a bias of 4096
#   lstm_cell   bench/graphs/lstm_cell.ir, batch 64, input and hidden 512
#               (PyTorch's fastrnns sizes)
#
# Compile time per kernel: every graph runs first in a fresh, empty
# FUSEBOX_CACHE_DIR (cold: the system compiler runs) and then once more in a
# second process with the same directory (the kernels come from the disk
# cache). Builds nothing; needs the `python3` on PATH to read the JSON files.
# The JSON files stay in OUT_DIR (default: a new temporary directory).
set -eu

FIGURES=fuser_figures
. "$(dirname "$0")/figures_args.sh"
CACHE=$(mktemp -d /tmp/fuser_figures_cache.XXXXXX)
trap 'rm -rf "$CACHE"' EXIT INT TERM
ITERS=${ITERS:-20}

# name, graph, shape options
run() {
  name=$1 graph=$2
  shift 2
  echo "== $name" >&2
  FUSEBOX_CACHE_DIR=$CACHE "$CLI" bench "$ROOT/$graph" --random "$@" --fusers "none,$FUSER" \
    --iters "$ITERS" --json "$OUT/$name.json" >&2
  # the second process: same cache directory, kernels from disk
  FUSEBOX_CACHE_DIR=$CACHE "$CLI" bench "$ROOT/$graph" --random "$@" --fusers "$FUSER" \
    --iters 1 --json "$OUT/$name.cached.json" >/dev/null
}

run ratio_iou examples/ratio_iou.ir --shape 16777216
run gelu_tanh bench/graphs/gelu_tanh.ir --shape 4096,4096
run bias_gelu bench/graphs/bias_gelu.ir --shape y=4096,4096 --shape bias=4096
run lstm_cell bench/graphs/lstm_cell.ir --shape input=64,512 --shape hx=64,512 --shape cx=64,512 \
  --shape w_ih=2048,512 --shape w_hh=2048,512 --shape b_ih=2048 --shape b_hh=2048

echo
echo "# fusebox fuser figures: $(uname -n), $(date -u +%Y-%m-%dT%H:%MZ), fuser $FUSER, $ITERS timed runs each"
python3 - "$OUT" ratio_iou gelu_tanh bias_gelu lstm_cell <<'PY'
import json, os, sys

out, names = sys.argv[1], sys.argv[2:]
hdr = ("graph", "none_ms", "fused_ms", "speedup", "GB/s", "/memcpy", "memcpy_GB/s", "groups", "kernels",
       "cold_ms/k", "disk_ms/k", "disk_hits", "max_rel")
print("%-10s %9s %9s %8s %7s %8s %12s %7s %8s %10s %10s %10s %9s" % hdr)
notes = []
for n in names:
    r = json.load(open(os.path.join(out, n + ".json")))
    c = json.load(open(os.path.join(out, n + ".cached.json")))
    none = next(f for f in r["fusers"] if f["name"] == "none")
    fz = next(f for f in r["fusers"] if f["name"] != "none")
    fc = c["fusers"][0]
    fmt = lambda v, s: "-" if v is None else s % v
    print("%-10s %9.3f %9.3f %8s %7s %8s %12s %7d %8d %10s %10s %10s %9s" % (
        n, none["median_ms"], fz["median_ms"], fmt(fz["speedup"], "%.2fx"), fmt(fz["gbs"], "%.2f"),
        fmt(fz["bandwidth_vs_memcpy"], "%.2f"), fmt(r["memcpy"]["gbs"], "%.2f"), fz["groups"],
        fz["kernels_compiled"], fmt(fz["compile_ms_per_kernel"], "%.1f"), fmt(fc["compile_ms_per_kernel"], "%.2f"),
        "%d/%d" % (fc["disk_cache_hits"], fc["kernels_compiled"]), fmt(fz["max_rel_error"], "%.2g")))
    if not fz["outputs_match"] or fz["fallbacks"]:
        notes.append("%s: outputs_match %s, %d fallbacks in the timed runs" % (n, fz["outputs_match"], fz["fallbacks"]))
r = json.load(open(os.path.join(out, "ratio_iou.json")))
fz = next(f for f in r["fusers"] if f["name"] != "none")
sp, bw = fz["speedup"] or 0, fz["bandwidth_vs_memcpy"] or 0
print("ratio_iou targets: speedup %.3fx (>= 4x: %s), bandwidth %.3f of memcpy (>= 0.7: %s)" % (
    sp, "met" if sp >= 4 else "NOT met", bw, "met" if bw >= 0.7 else "NOT met"))
m = r["memcpy"]
print("memcpy (ratio_iou run): %d bytes, %.2f GB/s 1 thread, %.2f GB/s %d threads; bytes moved %s per run (%s)" % (
    m["bytes"], m["gbs_1_thread"], m["gbs_threads"], m["threads"], "%.0f" % r["bytes_moved"], r["bytes_moved_from"]))
for s in notes:
    print("note: " + s)
print("JSON files: " + out)
PY
