#!/usr/bin/env python3
"""Issue #15's table: nvfuser_like on OpenCL (PoCL's CPU device) next to the
interpreter (`none`), tensorexpr's C kernels and, with --peer, PyTorch eager,
float32, same inputs, ratios from one run.

    python3 bench/bench_nvf.py BUILD [--peer PYTHON] [--rounds R] [--threads T]
                               [--fusers none,tensorexpr,nvfuser_like] [--only ROW,...]

BUILD is a build directory with `fusebox` (the CLI) and the plugins in
BUILD/plugins. Each row is one `BUILD/fusebox bench GRAPH --fusers LIST` run
(the fusers' timed runs interleaved round-robin inside it); PyTorch runs the
same computation in a worker process of PYTHON (a Python with torch 2.x),
which also writes the inputs as .npy files so that every column sees the
same values. Without --peer (or when PYTHON cannot import torch) the torch
column is left out and inputs come from `fusebox bench --random`. Rounds
alternate fusebox and torch row by row; each cell is the median over rounds.
A fuser whose plugin is not built (BUILD/plugins/libfbx_NAME.so) is left out
with a note.

Threads: T (default 2) for fusebox's pool (FUSEBOX_NUM_THREADS), PoCL's
pthread device (POCL_MAX_PTHREAD_COUNT) and torch.set_num_threads.
nvfuser_like runs its OpenCL target (FUSEBOX_NVF_TARGET=opencl).

Columns: each fuser's median ms; nvfuser_like's speedup over `none`, its
time against tensorexpr's (te/nvf: above 1 means nvfuser_like is faster),
torch / nvfuser_like (above 1: nvfuser_like faster), its kernel launches per
run, fallbacks to the interpreter during the timed runs, and its largest
error against the reference interpreter. The issue's goals: every row
>= 1.0x none; softmax and layer norm >= 2x torch eager and te/nvf >= 0.67
(within 1.5x of tensorexpr). Nothing here asserts a time.

Under the table, the memory floor of the [4096, 1024] rows, measured in
the same rounds after the same eviction: T threads read 16 MiB and write
16 MiB with non-temporal stores, as loops on fusebox's pool
(BUILD/bench/bench_peak --stream) and as an OpenCL kernel with the
persistent scheduler's stores (BUILD/bench/bench_nvf_launch --stream). No
kernel that reads its input once and writes its output once (softmax,
layer norm) can take less on this machine, so torch eager / floor (the
smaller floor) bounds the speedup over torch any fuser can reach on those
rows.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_ops  # noqa: E402  (its rows, torch worker and helpers)

ROOT = bench_ops.ROOT
_OPS = {r[0]: r for r in bench_ops.ROWS}

# name, label, graph (text or a path under ROOT), inputs [(name, shape)], iters
ROWS = [
    ("ratio_iou", "ratio-IoU 2^22 (pointwise)", _OPS["ratio_iou"][2], _OPS["ratio_iou"][3], 10),
    ("gelu", "GELU (tanh) [4096, 1024]", "bench/graphs/gelu_tanh.ir", [("x.1", (4096, 1024))], 10),
    ("bias_gelu", "bias + GELU [4096, 1024] + [1024]", "bench/graphs/bias_gelu.ir",
     [("y.1", (4096, 1024)), ("bias.1", (1024,))], 10),
    ("softmax", "softmax [4096, 1024], last dim", _OPS["softmax"][2], _OPS["softmax"][3], 10),
    ("layer_norm", "layer norm [4096, 1024]", _OPS["layer_norm"][2], _OPS["layer_norm"][3], 10),
    ("rms_norm", "RMS norm [4096, 1024]", _OPS["rms_norm"][2], _OPS["rms_norm"][3], 10),
    ("row_sum", "row sum [4096, 1024]", _OPS["row_sum"][2], _OPS["row_sum"][3], 10),
    ("tiny", "3 pointwise ops on 1-element tensors (launch overhead)", _OPS["tiny"][2], _OPS["tiny"][3], 500),
]

# torch for the rows bench_ops' worker does not know
EXTRA_FWD = r'''
    if name == "gelu":
        x = I["x.1"]
        return lambda: 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    if name == "bias_gelu":
        def f():
            x = I["bias.1"] + I["y.1"]
            return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))
        return f
'''
_MARK = '    raise SystemExit("unknown row " + name)\n'
assert _MARK in bench_ops.WORKER, "bench_ops.WORKER changed: update bench_nvf.py"
WORKER = bench_ops.WORKER.replace(_MARK, EXTRA_FWD + _MARK)


def start_worker(peer, threads, workdir):
    env = dict(os.environ)
    env.update(bench_ops.TUNED_MALLOC)
    path = os.path.join(workdir, "torch_worker.py")
    with open(path, "w") as f:
        f.write(WORKER)
    # "flushed": the worker evicts its inputs from the cache before each call, as `fusebox bench` does
    p = subprocess.Popen([peer, path, str(threads), "flushed"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True, env=env)
    if p.stdout.readline().strip() != "ready":
        return None
    return p


def fusebox_row(build, row, fusers, workdir, threads, use_npy):
    """{fuser name: its JSON entry} for one `fusebox bench` run, or (None, message)."""
    name, _, graph, inputs, iters = row
    if "\n" in graph:
        path = os.path.join(workdir, name + ".ir")
        with open(path, "w") as f:
            f.write(graph)
    else:
        path = os.path.join(ROOT, graph)
    out = os.path.join(workdir, name + ".json")
    cmd = [os.path.join(build, "fusebox"), "bench", path, "--fusers", ",".join(fusers), "--iters", str(iters),
           "--json", out]
    if use_npy:
        for k, _ in inputs:
            cmd += ["--input", "%s=%s" % (k, os.path.join(workdir, name + "__" + k + ".npy"))]
    else:
        cmd += ["--random"]
        for k, s in inputs:
            cmd += ["--shape", "%s=%s" % (k, ",".join(str(v) for v in s))]
    env = dict(os.environ, FUSEBOX_NUM_THREADS=str(threads), POCL_MAX_PTHREAD_COUNT=str(threads),
               FUSEBOX_NVF_TARGET="opencl")
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["failed (exit %d)" % r.returncode])[-1]
    with open(out) as f:
        return {e["name"]: e for e in json.load(f)["fusers"]}, None


FLOOR_BYTES = 4096 * 1024 * 4


def floor_ms(build, threads):
    """(rw_nt, rw, read, opencl) medians in ms: one bench_peak --stream run (the pool's loops) and one
    bench_nvf_launch --stream run (the same bytes streamed by an OpenCL kernel); None where either is
    missing or unavailable."""
    env = dict(os.environ, FUSEBOX_NUM_THREADS=str(threads), POCL_MAX_PTHREAD_COUNT=str(threads))
    out = []
    for exe, n in (("bench_peak", 11), ("bench_nvf_launch", 5)):
        path = os.path.join(build, "bench", exe)
        if not os.path.exists(path):
            return None
        r = subprocess.run([path, "--stream", str(FLOOR_BYTES), "--reps", "40"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env)
        f = r.stdout.split()
        if r.returncode != 0 or len(f) != n or f[0] != "stream":
            return None
        out += [float(f[3]), float(f[6]), float(f[9])] if n == 11 else [float(f[3])]
    return tuple(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--peer", help="a Python with torch")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--fusers", default="none,tensorexpr,nvfuser_like")
    ap.add_argument("--only", help="comma list of row names: " + ",".join(r[0] for r in ROWS))
    ap.add_argument("--keep", action="store_true", help="keep the inputs and IR (a temporary directory)")
    a = ap.parse_args()
    rows = [r for r in ROWS if not a.only or r[0] in a.only.split(",")]
    fusers = []
    for f in a.fusers.split(","):
        if f == "none" or os.path.exists(os.path.join(a.build, "plugins", "libfbx_%s.so" % f)):
            fusers.append(f)
        else:
            print("# %s: not built (no %s/plugins/libfbx_%s.so): column left out" % (f, a.build, f))
    workdir = bench_ops.make_workdir("bench_nvf.", a.keep)
    worker = None
    if a.peer:
        worker = start_worker(a.peer, a.threads, workdir)
        if worker is None:
            print("# %s cannot run torch: torch column left out" % a.peer)
    if worker:
        for r in rows:
            spec = ["%s=%s" % (k, ",".join(str(v) for v in s)) for k, s in r[3]]
            bench_ops.ask(worker, "make %s %s %s" % (r[0], workdir, " ".join(spec)))
    res = {(r[0], f): [] for r in rows for f in fusers}
    last = {}
    torch_ms = {r[0]: [] for r in rows}
    errors = {}
    floors = []
    for _ in range(a.rounds):
        fl = floor_ms(a.build, a.threads)
        if fl:
            floors.append(fl)
        for r in rows:
            got, err = fusebox_row(a.build, r, fusers, workdir, a.threads, worker is not None)
            if got is None:
                errors[r[0]] = err
            else:
                for f in fusers:
                    res[(r[0], f)].append(got[f]["median_ms"])
                    last[(r[0], f)] = got[f]
            if worker:
                torch_ms[r[0]].append(float(bench_ops.ask(worker, "time %s %d" % (r[0], r[4]))))
    if worker:
        worker.stdin.close()
        worker.wait()

    med = bench_ops.median
    fmt = bench_ops.fmt_ms
    nvf = "nvfuser_like" if "nvfuser_like" in fusers else None
    print("PoCL (OpenCL CPU device), threads: %d, rounds: %d, float32; cells are medians over rounds" %
          (a.threads, a.rounds))
    head = "| workload |" + "".join(" %s |" % f for f in fusers)
    sep = "| --- |" + " --- |" * len(fusers)
    if worker:
        head += " torch eager |"
        sep += " --- |"
    if nvf:
        head += " nvf / none speedup | te / nvf |" + (" torch / nvf |" if worker else "") + \
            " nvf launches/run | nvf fallbacks | nvf max_abs |"
        sep += " --- | --- |" + (" --- |" if worker else "") + " --- | --- | --- |"
    print(head)
    print(sep)
    for r in rows:
        if r[0] in errors and not res[(r[0], fusers[0])]:
            print("| %s | error: %s |" % (r[1], errors[r[0]]))
            continue
        m = {f: med(res[(r[0], f)]) for f in fusers}
        line = "| %s |" % r[1] + "".join(" %s |" % fmt(m[f]) for f in fusers)
        t = med(torch_ms[r[0]]) if worker else None
        if worker:
            line += " %s |" % fmt(t)
        if nvf:
            e = last[(r[0], nvf)]
            line += " %s |" % ("%.2fx" % (m["none"] / m[nvf]) if "none" in m else "-")
            line += " %s |" % ("%.2f" % (m["tensorexpr"] / m[nvf]) if "tensorexpr" in m else "-")
            if worker:
                line += " %.2fx |" % (t / m[nvf])
            line += " %.2f | %d | %.3g |" % (e["kernel_launches_per_run"], e["fallbacks"], e["max_abs_error"])
        print(line)
    if floors:
        fm = [med([f[k] for f in floors]) for k in range(4)]
        print("\nMemory floor of a [4096, 1024] float32 row-wise kernel (%d threads, medians over rounds, the "
              "eviction fusebox bench makes before each run): read 16 MiB + write 16 MiB non-temporally %s on "
              "fusebox's pool (bench_peak --stream %d; ordinary stores %s, the read alone %s), %s as an OpenCL "
              "kernel on the device (bench_nvf_launch --stream %d)." %
              (a.threads, fmt(fm[0]), FLOOR_BYTES, fmt(fm[1]), fmt(fm[2]), fmt(fm[3]), FLOOR_BYTES))
        fl = min(fm[0], fm[3])
        for r in rows:
            if r[0] in ("softmax", "layer_norm") and nvf and res[(r[0], nvf)]:
                line = "  %s: nvfuser_like / floor %.2f" % (r[0], med(res[(r[0], nvf)]) / fl)
                if worker and torch_ms[r[0]]:
                    line += "; torch eager / floor %.2f (the most any kernel could be faster than torch here)" % (
                        med(torch_ms[r[0]]) / fl)
                print(line)
    if a.keep:
        print("\n(inputs and IR in %s)" % workdir)


if __name__ == "__main__":
    main()
