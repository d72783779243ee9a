"""Time models scripted with and without libfusebox_torch.so (prints figures, asserts nothing).

    /usr/bin/python3 bridges/torch/inside/bench_inside.py --lib build/bridges/torch/libfusebox_torch.so \\
        [--fusers legacy,tensorexpr,nvfuser_like] [--iters 50] [--n 1000000]

Each row: median milliseconds per call after warm-up (PyTorch's profiling and optimization,
fusebox's profiling run and compile), in inference (torch.no_grad), on the CPU.
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tests"))
import test_inside as T  # noqa: E402  (the models and fresh())


def median_ms(fn, args, iters):
    for _ in range(5):
        fn(*args)
    ts = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn(*args)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--fusers", default="none,legacy,tensorexpr,nvfuser_like")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--n", type=int, default=1000000, help="boxes for ratio-IoU")
    args = ap.parse_args()
    torch.ops.load_library(args.lib)
    boxes = [torch.rand(args.n) * 4 for _ in range(8)]
    cases = [("ratio_iou", T.RatioIoU(), boxes)] + [(n, m, x) for n, m, x, _ in T.models() if n != "ratio_iou"]
    print(f"threads {torch.get_num_threads()}; ratio_iou on {args.n} boxes; median ms of {args.iters} calls")
    print(f"{'model':18s} {'eager':>9s} {'script':>9s} " + " ".join(f"{f:>13s}" for f in args.fusers.split(",")))
    with torch.no_grad():
        for name, model, inputs in cases:
            model.eval()
            row = [median_ms(model, inputs, args.iters)]
            torch.ops.fusebox.set_enabled(False)
            row.append(median_ms(torch.jit.script(T.fresh(model)), inputs, args.iters))
            torch.ops.fusebox.set_enabled(True)
            s = torch.jit.script(T.fresh(model))
            for f in args.fusers.split(","):
                torch.ops.fusebox.set_fuser(f)
                row.append(median_ms(s, inputs, args.iters))
            print(f"{name:18s} " + " ".join(f"{v:9.3f}" if i < 2 else f"{v:13.3f}" for i, v in enumerate(row)))
    print(dict(torch.ops.fusebox.stats()))


if __name__ == "__main__":
    main()
