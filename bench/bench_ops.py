#!/usr/bin/env python3
"""Issue #16's table: the interpreter's heavy kernels (`--fuser none`) next
to PyTorch eager on the same inputs, float32, interleaved rounds.

    python3 bench/bench_ops.py BUILD [--peer PYTHON] [--rounds R] [--threads T]
                               [--malloc tuned|default|both] [--only ROW,...]

BUILD is a build directory with `fusebox` (the CLI) and `bench/bench_peak`.
Every row is one graph run by `BUILD/fusebox bench GRAPH --fusers none`
(its median over the iterations); PyTorch runs the same computation in a
worker process of PYTHON (a Python with torch 2.x, e.g. a virtual
environment made with `pip install torch`), which also writes the inputs as
.npy files so that both sides see the same values. Without --peer, or when
PYTHON cannot import torch, only fusebox's column is printed (inputs then
come from `fusebox bench --random`). Rounds alternate fusebox and torch
row by row; each cell is the median over rounds of the per-round medians.
Both sides use T threads (default 2): FUSEBOX_NUM_THREADS and
torch.set_num_threads.

--torch-cache: `fusebox bench` copies a buffer the size of the largest
tensor (once on one thread, once on the pool) between its timed runs, and
with the pool again before each, which evicts the inputs from the
last-level cache (32 MiB here; a [4096, 1024] float32 input is 16 MiB).
`flushed` (the default) makes the torch worker do the same before each
timed call, so both columns read their inputs from memory; `hot` times torch's calls back to back, inputs left in cache (what
the first tables of issue #16 measured for torch).

--malloc: torch's worker with glibc malloc tuned to keep freed blocks
(MALLOC_MMAP_THRESHOLD_, MALLOC_TOP_PAD_, MALLOC_TRIM_THRESHOLD_; fusebox's
own block cache does the same) or with glibc's defaults, or both columns
(the default). ratio = torch / fusebox: above 1 means fusebox is faster.

After the table: GEMM GFLOP/s of the matmul rows against the machine's
single-precision peak, measured by `bench_peak` (an FMA loop on every
thread; see bench/bench_peak.c). Nothing here asserts a time.
"""
import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SOFTMAX_IR = """graph(%%x : Tensor):
  %%d : int = prim::Constant[value=-1]()
  %%none : NoneType = prim::Constant()
  %%y : Tensor = aten::%s(%%x, %%d, %%none)
  return (%%y)
"""
ROWRED_IR = """graph(%%x : Tensor):
  %%d : int = prim::Constant[value=-1]()
  %%false : bool = prim::Constant[value=0]()
  %%none : NoneType = prim::Constant()
  %%dl : int[] = prim::ListConstruct(%%d)
  %%y : Tensor = %s
  return (%%y)
"""
RMS_IR = """graph(%x : Tensor, %w : Tensor):
  %d : int = prim::Constant[value=-1]()
  %true : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %eps : float = prim::Constant[value=9.9999999999999995e-07]()
  %one : int = prim::Constant[value=1]()
  %dl : int[] = prim::ListConstruct(%d)
  %sq : Tensor = aten::mul(%x, %x)
  %ms : Tensor = aten::mean(%sq, %dl, %true, %none)
  %e : Tensor = aten::add(%ms, %eps, %one)
  %r : Tensor = aten::rsqrt(%e)
  %n : Tensor = aten::mul(%x, %r)
  %y : Tensor = aten::mul(%n, %w)
  return (%y)
"""
LINEAR_IR = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %y : Tensor = aten::linear(%x, %w, %b)
  return (%y)
"""
MM_IR = """graph(%%a : Tensor, %%b : Tensor):
  %%y : Tensor = aten::%s(%%a, %%b)
  return (%%y)
"""
CONV_IR = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %s : int[] = prim::ListConstruct(%one, %one)
  %p : int[] = prim::ListConstruct(%one, %one)
  %dl : int[] = prim::ListConstruct(%one, %one)
  %y : Tensor = aten::conv2d(%x, %w, %b, %s, %p, %dl, %one)
  return (%y)
"""

N4 = 1 << 22
# name, label, graph (text or a path under ROOT), inputs [(name, shape)], iters, backward, gemm flops
ROWS = [
    ("softmax", "softmax [4096, 1024], last dim", SOFTMAX_IR % "softmax", [("x", (4096, 1024))], 20, False, 0),
    ("log_softmax", "log_softmax [4096, 1024], last dim", SOFTMAX_IR % "log_softmax", [("x", (4096, 1024))], 20,
     False, 0),
    ("layer_norm", "layer_norm [4096, 1024]", "bench/graphs/layer_norm.ir",
     [("x.1", (4096, 1024)), ("weight.1", (1024,)), ("bias.1", (1024,))], 20, False, 0),
    ("layer_norm_bwd", "layer_norm [4096, 1024] forward + backward", "bench/graphs/layer_norm.ir",
     [("x.1", (4096, 1024)), ("weight.1", (1024,)), ("bias.1", (1024,))], 10, True, 0),
    ("rms_norm", "RMS norm [4096, 1024] (x * rsqrt(mean(x*x) + eps) * w)", RMS_IR,
     [("x", (4096, 1024)), ("w", (1024,))], 20, False, 0),
    ("row_sum", "sum [4096, 1024] over the last dim", ROWRED_IR % "aten::sum(%x, %dl, %false, %none)",
     [("x", (4096, 1024))], 20, False, 0),
    ("row_amax", "amax [4096, 1024] over the last dim", ROWRED_IR % "aten::amax(%x, %dl, %false)",
     [("x", (4096, 1024))], 20, False, 0),
    ("lstm_cell", "LSTM cell, batch 64, hidden 1024", "bench/graphs/lstm_cell.ir",
     [("input.1", (64, 1024)), ("hx.1", (64, 1024)), ("cx.1", (64, 1024)), ("w_ih.1", (4096, 1024)),
      ("w_hh.1", (4096, 1024)), ("b_ih.1", (4096,)), ("b_hh.1", (4096,))], 20, False, 2 * 2 * 64 * 4096 * 1024),
    ("linear", "linear [4096, 1024] x [1024, 1024] + bias", LINEAR_IR,
     [("x", (4096, 1024)), ("w", (1024, 1024)), ("b", (1024,))], 10, False, 2 * 4096 * 1024 * 1024),
    ("bmm", "bmm [64, 128, 64] x [64, 64, 128]", MM_IR % "bmm", [("a", (64, 128, 64)), ("b", (64, 64, 128))], 20,
     False, 2 * 64 * 128 * 64 * 128),
    ("mm_1024", "mm 1024 x 1024 x 1024", MM_IR % "mm", [("a", (1024, 1024)), ("b", (1024, 1024))], 10, False,
     2 * 1024 ** 3),
    ("mm_4096", "mm 4096 x 1024 x 1024", MM_IR % "mm", [("a", (4096, 1024)), ("b", (1024, 1024))], 5, False,
     2 * 4096 * 1024 * 1024),
    ("conv2d", "conv2d 3x3, pad 1, [8, 64, 56, 56] -> 64 channels", CONV_IR,
     [("x", (8, 64, 56, 56)), ("w", (64, 64, 3, 3)), ("b", (64,))], 10, False, 2 * 8 * 64 * 56 * 56 * 64 * 9),
    ("ratio_iou", "ratio-IoU 2^22 (pointwise only)", "tests/corpus/cases/ratio_iou/graph.ir",
     [(n, (N4,)) for n in ("x1.1", "y1.1", "w1.1", "h1.1", "x2.1", "y2.1", "w2.1", "h2.1")], 10, False, 0),
    ("tiny", "3 pointwise ops on 1-element tensors", "bench/graphs/tiny_chain.ir", [("x.1", (1,)), ("y.1", (1,))],
     2000, False, 0),
]

TUNED_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TOP_PAD_": str(512 << 20),
                "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}

# The torch side: a worker that reads one command per line from stdin.
WORKER = r'''
import sys, time, statistics, os
import numpy as np
import torch
NT = int(sys.argv[1])
torch.set_num_threads(NT)
torch.manual_seed(0)
F = torch.nn.functional
T = {}
FLUSH = sys.argv[2] == "flushed"
def nbytes(v):
    if isinstance(v, torch.Tensor): return v.numel() * v.element_size()
    if isinstance(v, (tuple, list)): return max([nbytes(u) for u in v] + [0])
    return 0
def med(fn, iters, inputs):
    for _ in range(2):
        fn()
    # as `fusebox bench` does before each timed run: a memcpy the size of
    # the largest input or output, once on one thread and twice on the pool
    size = max(nbytes(list(inputs.values())), nbytes(fn()))
    src = torch.ones(size, dtype=torch.uint8) if FLUSH else None
    dst = torch.empty_like(src) if FLUSH else None
    ts = []
    for _ in range(iters):
        if FLUSH:
            torch.set_num_threads(1); dst.copy_(src); torch.set_num_threads(NT); dst.copy_(src); dst.copy_(src)
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3
def fwd(name, I):
    if name in ("softmax",): return lambda: torch.softmax(I["x"], -1)
    if name == "log_softmax": return lambda: torch.log_softmax(I["x"], -1)
    if name == "layer_norm": return lambda: F.layer_norm(I["x.1"], (1024,), I["weight.1"], I["bias.1"], 1e-5)
    if name == "layer_norm_bwd":
        x, w, b = (I[k].clone().requires_grad_() for k in ("x.1", "weight.1", "bias.1"))
        def f():
            y = F.layer_norm(x, (1024,), w, b, 1e-5)
            y.backward(torch.ones_like(y))
            x.grad = w.grad = b.grad = None
            return y
        return f
    if name == "rms_norm": return lambda: I["x"] * torch.rsqrt((I["x"] * I["x"]).mean(-1, keepdim=True) + 1e-6) * I["w"]
    if name == "row_sum": return lambda: I["x"].sum(-1)
    if name == "row_amax": return lambda: I["x"].amax(-1)
    if name == "lstm_cell":
        def f():
            gates = I["input.1"].mm(I["w_ih.1"].t()) + I["hx.1"].mm(I["w_hh.1"].t()) + I["b_ih.1"] + I["b_hh.1"]
            i, fg, c, o = gates.chunk(4, 1)
            cy = torch.sigmoid(fg) * I["cx.1"] + torch.sigmoid(i) * torch.tanh(c)
            return torch.sigmoid(o) * torch.tanh(cy), cy
        return f
    if name == "linear": return lambda: F.linear(I["x"], I["w"], I["b"])
    if name == "bmm": return lambda: torch.bmm(I["a"], I["b"])
    if name.startswith("mm_"): return lambda: torch.mm(I["a"], I["b"])
    if name == "conv2d": return lambda: F.conv2d(I["x"], I["w"], I["b"], 1, 1, 1, 1)
    if name == "ratio_iou":
        def f():
            x1, y1, w1, h1, x2, y2, w2, h2 = (I[k + ".1"] for k in ("x1", "y1", "w1", "h1", "x2", "y2", "w2", "h2"))
            xi = torch.max(x1, x2); yi = torch.max(y1, y2)
            wi = torch.clamp(torch.min(x1 + w1, x2 + w2) - xi, min=0.0)
            hi = torch.clamp(torch.min(y1 + h1, y2 + h2) - yi, min=0.0)
            ai = wi * hi
            au = w1 * h1 + w2 * h2 - wi * hi
            return ai / torch.clamp(au, min=1e-5)
        return f
    if name == "tiny": return lambda: torch.relu(I["x.1"] * I["y.1"] + I["x.1"])
    raise SystemExit("unknown row " + name)
print("ready", flush=True)
for line in sys.stdin:
    cmd = line.split()
    if not cmd: continue
    if cmd[0] == "make":  # make NAME DIR name=shape...
        I = {}
        for spec in cmd[3:]:
            k, s = spec.split("=")
            shape = tuple(int(v) for v in s.split(",")) if s else ()
            t = torch.rand(shape) * 2 if cmd[1] in ("ratio_iou",) else torch.randn(shape)
            I[k] = t
            np.save(os.path.join(cmd[2], cmd[1] + "__" + k + ".npy"), t.numpy())
        T[cmd[1]] = I
        print("ok", flush=True)
    elif cmd[0] == "time":  # time NAME ITERS
        with torch.no_grad() if not cmd[1].endswith("_bwd") else torch.enable_grad():
            print("%.6f" % med(fwd(cmd[1], T[cmd[1]]), int(cmd[2]), T[cmd[1]]), flush=True)
'''


def make_workdir(prefix, keep):
    """A fresh temporary directory for inputs, IR and results; removed when the script exits
    unless `keep` (the inputs of one run take hundreds of MB)."""
    d = tempfile.mkdtemp(prefix=prefix)
    if not keep:
        atexit.register(shutil.rmtree, d, True)
    return d


def start_worker(peer, threads, env_extra, workdir, script=WORKER, name="torch_worker.py", cache="flushed"):
    """A worker process of `peer` running `script` (a line protocol on stdin/stdout; argv: threads, cache
    mode); None unless it says ready."""
    env = dict(os.environ)
    env.update(env_extra)
    path = os.path.join(workdir, name)
    with open(path, "w") as f:
        f.write(script)
    p = subprocess.Popen([peer, path, str(threads), cache], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=env)
    if p.stdout.readline().strip() != "ready":
        return None
    return p


def ask(p, line):
    p.stdin.write(line + "\n")
    p.stdin.flush()
    return p.stdout.readline().strip()


def fusebox_row(build, row, workdir, threads, use_npy):
    t, err = fusebox_bench(build, row, workdir, threads, use_npy, ["none"])
    return (t["none"]["median_ms"] if t else None), err


def fusebox_bench(build, row, workdir, threads, use_npy, fusers, env_extra=None):
    """`fusebox bench` of one row with the given fusers (interleaved by fusebox itself): ({fuser: its JSON entry:
    median_ms, compile_ms, groups, max_rel_error, ...}, None) or (None, the error's last line). Inputs: the worker's .npy files (use_npy), else --random."""
    name, _, graph, inputs, iters, backward, _ = row
    if "\n" in graph:
        path = os.path.join(workdir, name + ".ir")
        with open(path, "w") as f:
            f.write(graph)
    else:
        path = os.path.join(ROOT, graph)
    cmd = [os.path.join(build, "fusebox"), "bench", path, "--fusers", ",".join(fusers), "--iters", str(iters),
           "--json", os.path.join(workdir, name + ".json")]
    if use_npy:
        for k, _ in inputs:
            cmd += ["--input", "%s=%s" % (k, os.path.join(workdir, name + "__" + k + ".npy"))]
    else:
        cmd += ["--random"]
        for k, s in inputs:
            cmd += ["--shape", "%s=%s" % (k, ",".join(str(v) for v in s))]
    if backward:
        cmd += ["--backward"]
    env = dict(os.environ, FUSEBOX_NUM_THREADS=str(threads))
    env.update(env_extra or {})
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        msg = (r.stderr.strip().splitlines() or ["failed"])[-1]
        return None, msg
    with open(os.path.join(workdir, name + ".json")) as f:
        return {f_["name"]: f_ for f_ in json.load(f)["fusers"]}, None


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def fmt_ms(v):
    if v is None:
        return "-"
    return "%.4f ms" % v if v < 0.1 else "%.2f ms" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--peer", help="a Python with torch")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--malloc", choices=("tuned", "default", "both"), default="both")
    ap.add_argument("--only", help="comma list of row names")
    ap.add_argument("--torch-cache", choices=("flushed", "hot"), default="flushed")
    ap.add_argument("--keep", action="store_true", help="keep the inputs and IR (a temporary directory)")
    a = ap.parse_args()
    rows = [r for r in ROWS if not a.only or r[0] in a.only.split(",")]
    workdir = make_workdir("bench_ops.", a.keep)
    workers = []
    if a.peer:
        modes = ["tuned", "default"] if a.malloc == "both" else [a.malloc]
        for m in modes:
            w = start_worker(a.peer, a.threads, TUNED_MALLOC if m == "tuned" else {}, workdir, cache=a.torch_cache)
            if w is None:
                print("# %s cannot run torch: torch columns left out" % a.peer)
                workers = []
                break
            workers.append((m, w))
    use_npy = bool(workers)
    if use_npy:
        for r in rows:
            spec = ["%s=%s" % (k, ",".join(str(v) for v in s)) for k, s in r[3]]
            for _, w in workers:  # every worker holds its own copy; the last one's files are used
                ask(w, "make %s %s %s" % (r[0], workdir, " ".join(spec)))
    fb = {r[0]: [] for r in rows}
    th = {(m, r[0]): [] for m, _ in workers for r in rows}
    errors = {}
    for _ in range(a.rounds):
        for r in rows:
            t, err = fusebox_row(a.build, r, workdir, a.threads, use_npy)
            if t is None:
                errors[r[0]] = err
            else:
                fb[r[0]].append(t)
            for m, w in workers:
                th[(m, r[0])].append(float(ask(w, "time %s %d" % (r[0], r[4]))))
    for _, w in workers:
        w.stdin.close()
        w.wait()

    head = "| op, as run by `--fuser none` | fusebox |"
    sep = "| --- | --- |"
    for m, _ in workers:
        head += " torch eager (%s malloc) | ratio |" % m
        sep += " --- | --- |"
    print("threads: %d, rounds: %d, float32, torch's caches %s; ratio = torch / fusebox (> 1: fusebox faster)" %
          (a.threads, a.rounds, a.torch_cache))
    print(head)
    print(sep)
    for r in rows:
        f = median(fb[r[0]]) if fb[r[0]] else None
        line = "| %s | %s |" % (r[1], fmt_ms(f) if f is not None else "error: " + errors.get(r[0], "?"))
        for m, _ in workers:
            t = median(th[(m, r[0])])
            line += " %s | %s |" % (fmt_ms(t), "%.2fx" % (t / f) if f else "-")
        print(line)

    peak = None
    pk = os.path.join(a.build, "bench", "bench_peak")
    if os.path.exists(pk):
        out = subprocess.run([pk], stdout=subprocess.PIPE, text=True,
                             env=dict(os.environ, FUSEBOX_NUM_THREADS=str(a.threads))).stdout.split()
        if len(out) >= 3:
            peak = float(out[1])
            print("\nsingle-precision peak: %.1f GFLOP/s (%s FMA loop on %s threads, bench_peak)" %
                  (peak, out[2], out[3]))
    print("\n| GEMM row | fusebox GFLOP/s | of peak |" + "".join(" torch (%s) GFLOP/s |" % m for m, _ in workers))
    print("| --- | --- | --- |" + " --- |" * len(workers))
    for r in rows:
        if not r[6] or not fb[r[0]]:
            continue
        g = r[6] / (median(fb[r[0]]) * 1e-3) * 1e-9
        line = "| %s | %.1f | %s |" % (r[1], g, "%.0f%%" % (100 * g / peak) if peak else "-")
        for m, _ in workers:
            line += " %.1f |" % (r[6] / (median(th[(m, r[0])]) * 1e-3) * 1e-9)
        print(line)
    print("\n(the LSTM row counts only its two mm%s)" % ("; inputs and IR in " + workdir if a.keep else ""))


if __name__ == "__main__":
    main()
