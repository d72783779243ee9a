#!/usr/bin/env python3
"""Issue #14's table: fusebox's fusers against PyTorch eager, torch.compile
(Inductor) and JAX (XLA) on the same inputs, float32, interleaved rounds.

    python3 bench/bench_peers.py BUILD [--peer /tmp/peer/bin/python] [--rounds R] [--threads T]
                                 [--only ROW,...] [--fusers none,legacy,tensorexpr]

BUILD is a build directory with `fusebox` and the plugins. Each row is one
graph run by `BUILD/fusebox bench GRAPH --fusers none,legacy,tensorexpr`
(plus nvfuser_like when BUILD/plugins has it; fusebox interleaves its fusers
itself; each gives its median over the iterations). The peers run in one
worker process of PYTHON (a Python with torch 2.x and jax, e.g. the venv
/tmp/peer), which also writes the inputs as .npy files so that every column
sees the same values: torch eager, torch.compile (default mode, Inductor's
C++/OpenMP code on the CPU) and jax.jit. Without --peer, or when PYTHON
cannot import torch (or jax), those columns are left out with a note.
A round times every row once on every side, fusebox then the peers; each
cell is the median over rounds of the per-round medians. Every timed call
on either side starts with its inputs out of the cache: `fusebox bench`
copies a buffer the size of the largest tensor before each run, and the
worker makes the same copies before each of its calls.

Threads: FUSEBOX_NUM_THREADS=T and torch.set_num_threads(T) (Inductor's
OpenMP too); XLA's CPU client takes the machine's cores (this script pins
nothing, so on a machine with more than T cores JAX may use more).

ratio = best peer / fusebox's best fuser: above 1 means fusebox is faster.
Compile times: the first call of each torch.compile / jax.jit function (cold,
in the worker, so Inductor's start-up lands on the first row) and fusebox's
compile_ms per kernel with the cache directory FUSEBOX_CACHE_DIR (the first
round cold when it is new, later rounds from the disk cache). Nothing here
asserts a time. bench/bench_ops.py (shared code) has the interpreter's rows.
"""
import argparse
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_ops  # noqa: E402  (the worker protocol, fusebox bench runner, medians)

SOFTMAX_MANUAL_IR = """graph(%x : Tensor):
  %d : int = prim::Constant[value=-1]()
  %true : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %dl : int[] = prim::ListConstruct(%d)
  %m : Tensor = aten::amax(%x, %dl, %true)
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::sub(%x, %m, %one)
  %e : Tensor = aten::exp(%s)
  %z : Tensor = aten::sum(%e, %dl, %true, %none)
  %y : Tensor = aten::div(%e, %z)
  return (%y)
"""
BIAS_GELU_ERF_IR = """graph(%y : Tensor, %bias : Tensor):
  %one : int = prim::Constant[value=1]()
  %approx : str = prim::Constant[value="none"]()
  %x : Tensor = aten::add(%y, %bias, %one)
  %g : Tensor = aten::gelu(%x, %approx)
  return (%g)
"""
RATIO = "tests/corpus/cases/ratio_iou/graph.ir"
RATIO_IN = ("x1.1", "y1.1", "w1.1", "h1.1", "x2.1", "y2.1", "w2.1", "h2.1")
X = (4096, 1024)
LN_IN = [("x.1", X), ("weight.1", (1024,)), ("bias.1", (1024,))]
# the row format of bench_ops: name, label, graph (text or a path under the root), inputs, iters, backward, flops
ROWS = [
    ("softmax", "softmax [4096, 1024] last dim, `torch.softmax`", bench_ops.SOFTMAX_IR % "softmax", [("x", X)], 20,
     False, 0),
    ("softmax_manual", "softmax by hand (amax, sub, exp, sum, div)", SOFTMAX_MANUAL_IR, [("x", X)], 20, False, 0),
    ("layer_norm_manual", "layer norm by hand (mean, var, sqrt) [4096, 1024]", "bench/graphs/layer_norm_manual.ir",
     LN_IN, 20, False, 0),
    ("layer_norm", "`aten::layer_norm` [4096, 1024]", "bench/graphs/layer_norm.ir", LN_IN, 20, False, 0),
    ("rms_norm", "RMS norm [4096, 1024]", bench_ops.RMS_IR, [("x", X), ("w", (1024,))], 20, False, 0),
    ("ratio_iou_20", "ratio-IoU 2^20", RATIO, [(n, (1 << 20,)) for n in RATIO_IN], 20, False, 0),
    ("ratio_iou_22", "ratio-IoU 2^22", RATIO, [(n, (1 << 22,)) for n in RATIO_IN], 10, False, 0),
    ("ratio_iou_24", "ratio-IoU 2^24", RATIO, [(n, (1 << 24,)) for n in RATIO_IN], 5, False, 0),
    ("gelu_tanh", "GELU (tanh form) 2^22", "bench/graphs/gelu_tanh.ir", [("x.1", (1 << 22,))], 10, False, 0),
    ("bias_gelu_erf", "bias + GELU (erf) [4096, 1024]", BIAS_GELU_ERF_IR, [("y", X), ("bias", (1024,))], 10, False,
     0),
    ("ratio_iou_bwd", "forward + backward ratio-IoU 2^22", RATIO, [(n, (1 << 22,)) for n in RATIO_IN], 5, True, 0),
]

# The peers' side: the bench_ops protocol (make NAME DIR name=shape...; time NAME MODE ITERS) with three modes.
WORKER = r'''
import sys, time, statistics, os
import numpy as np
import torch
torch.set_num_threads(int(sys.argv[1]))
torch.manual_seed(0)
F = torch.nn.functional
try:
    import jax, jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    HAVE_JAX = True
except Exception as e:
    HAVE_JAX = False
    JAX_WHY = str(e).splitlines()[0] if str(e) else type(e).__name__
T, J, FN = {}, {}, {}
RATIO = ("x1.1", "y1.1", "w1.1", "h1.1", "x2.1", "y2.1", "w2.1", "h2.1")

def ratio_iou(m, x1, y1, w1, h1, x2, y2, w2, h2):
    mx, mn = (torch.maximum, torch.minimum) if m is torch else (jnp.maximum, jnp.minimum)
    clamp0 = (lambda v: torch.clamp(v, min=0.0)) if m is torch else (lambda v: jnp.maximum(v, 0.0))
    xi = mx(x1, x2); yi = mx(y1, y2)
    wi = clamp0(mn(x1 + w1, x2 + w2) - xi)
    hi = clamp0(mn(y1 + h1, y2 + h2) - yi)
    ai = wi * hi
    au = w1 * h1 + w2 * h2 - wi * hi
    lo = (lambda v: torch.clamp(v, min=1e-5)) if m is torch else (lambda v: jnp.maximum(v, 1e-5))
    return ai / lo(au)

def body(name, m):
    """The row's computation written with module m (torch or jnp), over its inputs in order."""
    t = m is torch
    amax = (lambda v: v.amax(-1, keepdim=True)) if t else (lambda v: jnp.max(v, -1, keepdims=True))
    mean = (lambda v: v.mean(-1, keepdim=True)) if t else (lambda v: jnp.mean(v, -1, keepdims=True))
    if name == "softmax": return (lambda x: torch.softmax(x, -1)) if t else (lambda x: jax.nn.softmax(x, -1))
    if name == "softmax_manual":
        def f(x):
            e = m.exp(x - amax(x))
            return e / (e.sum(-1, keepdims=True) if not t else e.sum(-1, keepdim=True))
        return f
    if name == "layer_norm_manual":
        def f(x, w, b):
            mu = mean(x)
            var = mean((x - mu) * (x - mu))
            return (x - mu) / m.sqrt(var + 1e-5) * w + b
        return f
    if name == "layer_norm":
        if t: return lambda x, w, b: F.layer_norm(x, (1024,), w, b, 1e-5)
        def f(x, w, b):  # what a JAX user writes (flax's LayerNorm is this)
            mu = mean(x)
            var = mean(jnp.square(x - mu))
            return (x - mu) * jax.lax.rsqrt(var + 1e-5) * w + b
        return f
    if name == "rms_norm":
        rs = torch.rsqrt if t else jax.lax.rsqrt
        return lambda x, w: x * rs(mean(x * x) + 1e-6) * w
    if name.startswith("ratio_iou"): return lambda *a: ratio_iou(m, *a)
    if name == "gelu_tanh":
        return lambda x: 0.5 * x * (1.0 + m.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    if name == "bias_gelu_erf":
        if t: return lambda y, b: F.gelu(y + b)
        return lambda y, b: jax.nn.gelu(y + b, approximate=False)
    raise SystemExit("unknown row " + name)

def nbytes(v):
    if isinstance(v, torch.Tensor): return v.numel() * v.element_size()
    if isinstance(v, (tuple, list)): return max([nbytes(u) for u in v] + [0])
    return int(getattr(v, "nbytes", 0))  # a jax array

NT = int(sys.argv[1])
def med(fn, iters, inputs):
    t0 = time.perf_counter()
    out = fn()  # the first call compiles (torch.compile, jax.jit)
    first = (time.perf_counter() - t0) * 1e3
    for _ in range(2):
        fn()
    # before each timed call, what `fusebox bench` does before each of its
    # runs: a copy the size of the largest input or output, on one thread
    # and then twice on the pool, which evicts the inputs from the cache
    size = max(nbytes(list(inputs)), nbytes(out))
    src = torch.ones(size, dtype=torch.uint8)
    dst = torch.empty_like(src)
    ts = []
    for _ in range(iters):
        torch.set_num_threads(1); dst.copy_(src); torch.set_num_threads(NT); dst.copy_(src); dst.copy_(src)
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e3, first

def make_fn(name, mode):
    bwd = name.endswith("_bwd")
    xs = T[name]
    if mode in ("eager", "compile"):
        f = body(name, torch)
        if mode == "compile":
            f = torch.compile(f)
        if not bwd:
            return lambda: f(*xs)
        leaves = [x.clone().requires_grad_() for x in xs]
        def fb():
            y = f(*leaves)
            y.backward(torch.ones_like(y))
            for l in leaves:
                l.grad = None
        return fb
    f = body(name, jnp)
    js = J[name]
    if not bwd:
        g = jax.jit(f)
        return lambda: g(*js).block_until_ready()  # the array, for med's size
    def vjp_ones(*a):
        y, pull = jax.vjp(f, *a)
        return pull(jnp.ones_like(y))
    g = jax.jit(vjp_ones)
    return lambda: jax.block_until_ready(g(*js))

print("ready", flush=True)
for line in sys.stdin:
    cmd = line.split()
    if not cmd: continue
    if cmd[0] == "has_jax":
        print("yes" if HAVE_JAX else "no " + JAX_WHY.replace("\n", " "), flush=True)
    elif cmd[0] == "make":  # make NAME DIR name=shape...
        xs = []
        for spec in cmd[3:]:
            k, s = spec.split("=")
            shape = tuple(int(v) for v in s.split(",")) if s else ()
            t = torch.rand(shape) * 2 if cmd[1].startswith("ratio_iou") else torch.randn(shape)
            xs.append(t)
            np.save(os.path.join(cmd[2], cmd[1] + "__" + k + ".npy"), t.numpy())
        T[cmd[1]] = xs
        if HAVE_JAX:
            J[cmd[1]] = [jnp.asarray(t.numpy()) for t in xs]
        print("ok", flush=True)
    elif cmd[0] == "time":  # time NAME MODE ITERS -> "median_ms first_call_ms" or "error ..."
        name, mode, iters = cmd[1], cmd[2], int(cmd[3])
        try:
            if (name, mode) not in FN:
                FN[(name, mode)] = make_fn(name, mode)
            ctx = torch.enable_grad() if name.endswith("_bwd") else torch.no_grad()
            with ctx:
                m, first = med(FN[(name, mode)], iters, T[name])
            print("%.6f %.3f" % (m, first), flush=True)
        except Exception as e:
            print("error " + (str(e).splitlines() or [type(e).__name__])[0][:200], flush=True)
'''

PEER_MODES = [("eager", "torch eager"), ("compile", "torch.compile"), ("jax", "JAX jit")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--peer", help="a Python with torch 2.x and jax (e.g. /tmp/peer/bin/python)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", help="comma list of row names")
    ap.add_argument("--fusers", help="comma list (default: none,legacy,tensorexpr and nvfuser_like when built)")
    ap.add_argument("--keep", action="store_true", help="keep the inputs and IR (a temporary directory)")
    a = ap.parse_args()
    rows = [r for r in ROWS if not a.only or r[0] in a.only.split(",")]
    load0 = os.getloadavg()[0]
    if a.fusers:
        fusers = a.fusers.split(",")
    else:
        fusers = ["none", "legacy", "tensorexpr"]
        if os.path.exists(os.path.join(a.build, "plugins", "libfbx_nvfuser_like.so")):
            fusers.append("nvfuser_like")
    workdir = bench_ops.make_workdir("bench_peers.", a.keep)
    notes = []
    worker, modes = None, []
    if a.peer:
        worker = bench_ops.start_worker(a.peer, a.threads, {}, workdir, WORKER, "peer_worker.py")
        if worker is None:
            notes.append("%s cannot run torch: the peer columns are left out" % a.peer)
        else:
            modes = list(PEER_MODES)
            j = bench_ops.ask(worker, "has_jax")
            if j != "yes":
                modes = modes[:2]
                notes.append("%s cannot import jax (%s): the JAX column is left out" % (a.peer, j[3:]))
    else:
        notes.append("no --peer: torch eager, torch.compile and JAX are left out")
    use_npy = worker is not None
    if use_npy:
        for r in rows:
            spec = ["%s=%s" % (k, ",".join(str(v) for v in s)) for k, s in r[3]]
            bench_ops.ask(worker, "make %s %s %s" % (r[0], workdir, " ".join(spec)))
    fb = {(f, r[0]): [] for f in fusers for r in rows}
    fb_compile = {(f, r[0]): [] for f in fusers for r in rows}
    fb_err = {}
    peer = {(m, r[0]): [] for m, _ in modes for r in rows}
    peer_first = {}
    peer_err = {}
    for rnd in range(a.rounds):
        for r in rows:
            res, err = bench_ops.fusebox_bench(a.build, r, workdir, a.threads, use_npy, fusers)
            for f in fusers:
                if res and f in res and res[f].get("median_ms") is not None:
                    fb[(f, r[0])].append(res[f]["median_ms"])
                    fb_compile[(f, r[0])].append((res[f].get("compile_ms_per_kernel"), res[f].get("kernels_compiled"),
                                                  res[f].get("disk_cache_hits")))
                    if res[f].get("outputs_match") is False or res[f].get("fallbacks"):
                        fb_err[(f, r[0])] = "outputs differ" if res[f].get("outputs_match") is False else "fallbacks"
                elif err:
                    fb_err[(f, r[0])] = err
            for m, _ in modes:
                out = bench_ops.ask(worker, "time %s %s %d" % (r[0], m, r[4]))
                if out.startswith("error") or not out:
                    peer_err[(m, r[0])] = out[6:] if out else "worker died"
                    continue
                ms, first = (float(v) for v in out.split())
                peer[(m, r[0])].append(ms)
                peer_first.setdefault((m, r[0]), first)
    if worker:
        worker.stdin.close()
        worker.wait()

    def cell(v):
        return bench_ops.fmt_ms(bench_ops.median(v)) if v else "-"

    print("threads: %d, rounds: %d, float32, median of per-round medians; ratio = best peer / best fusebox fuser "
          "(> 1: fusebox faster); load average at start %.1f, at end %.1f on %d CPUs" %
          (a.threads, a.rounds, load0, os.getloadavg()[0], os.cpu_count()))
    for n in notes:
        print("# " + n)
    head = "| workload |" + "".join(" fusebox %s |" % f for f in fusers) + "".join(" %s |" % l for _, l in modes)
    head += " best fusebox / best peer | ratio |"
    print(head)
    print("| --- |" + " --- |" * (len(fusers) + len(modes) + 2))
    for r in rows:
        line = "| %s |" % r[1]
        best_f = None
        for f in fusers:
            v = fb[(f, r[0])]
            if v:
                m = bench_ops.median(v)
                line += " %s%s |" % (bench_ops.fmt_ms(m), " (%s)" % fb_err[(f, r[0])] if (f, r[0]) in fb_err else "")
                if (f, r[0]) not in fb_err and (best_f is None or m < best_f[1]):
                    best_f = (f, m)
            else:
                line += " error: %s |" % fb_err.get((f, r[0]), "?")
        best_p = None
        for m_, _ in modes:
            v = peer[(m_, r[0])]
            if v:
                m = bench_ops.median(v)
                line += " %s |" % bench_ops.fmt_ms(m)
                if best_p is None or m < best_p[1]:
                    best_p = (m_, m)
            else:
                line += " error: %s |" % peer_err.get((m_, r[0]), "?")
        if best_f and best_p:
            line += " %s / %s | %.2fx |" % (best_f[0], dict(PEER_MODES)[best_p[0]], best_p[1] / best_f[1])
        else:
            line += " %s | - |" % (best_f[0] if best_f else "-")
        print(line)

    print("\ncompile time: fusebox ms per kernel (kernels compiled, of them disk-cache hits) in round 1 and the last "
          "round; peers: the first call (compiles)")
    print("| workload |" + "".join(" %s |" % f for f in fusers if f != "none") + "".join(
        " %s first call |" % l for m, l in modes if m != "eager"))
    print("| --- |" + " --- |" * (len([f for f in fusers if f != "none"]) + len([m for m, _ in modes if m != "eager"])))

    def cc(t):
        ms, k, h = t
        return "%s (%s, %s)" % ("%.1f ms" % ms if ms is not None else "-", k, h)

    for r in rows:
        line = "| %s |" % r[1]
        for f in fusers:
            if f == "none":
                continue
            c = fb_compile[(f, r[0])]
            line += " %s |" % ("%s → %s" % (cc(c[0]), cc(c[-1])) if c else "-")
        for m, _ in modes:
            if m == "eager":
                continue
            v = peer_first.get((m, r[0]))
            line += " %s |" % ("%.0f ms" % v if v is not None else "-")
        print(line)
    print("\n(%sFUSEBOX_CACHE_DIR=%s)" % ("inputs and IR in %s; " % workdir if a.keep else "",
                                          os.environ.get("FUSEBOX_CACHE_DIR", "default")))


if __name__ == "__main__":
    main()
