#!/usr/bin/env python3
"""Every fusable float32 pointwise op, fused against unfused: one small graph
per op (the op on a scaled input, then neg, so that a group has two nodes),
one `fusebox bench --fusers none,FUSER,...` per graph, and each fuser's time
over the interpreter's (`none`) in the same run. Finds the ops a fuser makes
slower than the interpreter: a kernel that calls a scalar libm function per
element where the interpreter has a vectorized one, say (what found the
fused atan2, sinh, erfc and pow that ran 3-40x the interpreter's time).

    python3 bench/bench_op_survey.py BUILD [--fusers legacy,tensorexpr,nvfuser_like]
                                     [--shape 1024,1024] [--iters N] [--threads T] [--only OP,...]

BUILD is a build directory with `fusebox` and its plugins. nvfuser_like runs
its OpenCL target (PoCL here), T threads everywhere (default 2). Prints one
line per op: none's median ms, each fuser's median over none's (above 1: the
fuser is slower), its groups and largest relative error against none, and at
the end the ops where some fuser is above --flag (default 1.5). Nothing here
asserts a time: the figures move between runs on a shared machine.
"""
import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

UNARY = ("abs neg reciprocal sqrt rsqrt exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan "
         "sinh cosh tanh sigmoid erf erfc relu silu mish floor ceil round trunc frac sign gelu hardswish "
         "softplus").split()
POSITIVE = set("sqrt rsqrt log log2 log10 log1p reciprocal".split())  # their input is |x| * 0.3
BINARY = "add mul div pow remainder fmod atan2 hypot maximum minimum floor_divide".split()


def graph(op):
    """(IR text, input names) of op's survey graph"""
    head = ("graph(%x.1 : Tensor{y}):\n  %s : float = prim::Constant[value={s}]()\n"
            "  %one : int = prim::Constant[value=1]()\n  %twenty : int = prim::Constant[value=20]()\n")
    if op in BINARY:
        pre = "  %a : Tensor = aten::abs(%x.1)\n" if op == "pow" else "  %a : Tensor = aten::mul(%x.1, %s)\n"
        body = "  %r : Tensor = aten::" + op + "(%a, %y.1)\n"
        return head.replace("{y}", ", %y.1 : Tensor").replace("{s}", "3.0") + pre + body + \
            "  %z : Tensor = aten::neg(%r)\n  return (%z)\n", ["x.1", "y.1"]
    if op in POSITIVE:
        pre = "  %a : Tensor = aten::abs(%x.1)\n  %b : Tensor = aten::mul(%a, %s)\n"
    else:
        pre = "  %b : Tensor = aten::mul(%x.1, %s)\n"
    args = "%b, %one, %twenty" if op == "softplus" else "%b"
    return head.replace("{y}", "").replace("{s}", "0.3") + pre + "  %r : Tensor = aten::" + op + "(" + args + \
        ")\n  %z : Tensor = aten::neg(%r)\n  return (%z)\n", ["x.1"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--fusers", default="legacy,tensorexpr,nvfuser_like")
    ap.add_argument("--shape", default="1024,1024")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", help="comma-separated ops")
    ap.add_argument("--flag", type=float, default=1.5)
    ap.add_argument("--keep", action="store_true", help="keep the graphs and results (a temporary directory)")
    a = ap.parse_args()
    exe = os.path.join(a.build, "fusebox")
    if not os.access(exe, os.X_OK):
        sys.exit("bench_op_survey: %s is not an executable fusebox" % exe)
    fusers = []
    for f in a.fusers.split(","):
        so = os.path.join(a.build, "plugins", "libfbx_%s.so" % f)
        if "/" in f or os.path.exists(so):
            fusers.append(f)
        else:
            print("# %s: not built (%s), left out" % (f, so))
    ops = UNARY + BINARY
    if a.only:
        want = a.only.split(",")
        bad = [o for o in want if o not in ops]
        if bad:
            sys.exit("bench_op_survey: unknown op(s) %s; known: %s" % (", ".join(bad), " ".join(ops)))
        ops = want
    env = dict(os.environ, FUSEBOX_NUM_THREADS=str(a.threads), POCL_MAX_PTHREAD_COUNT=str(a.threads),
               FUSEBOX_NVF_TARGET="opencl")
    work = tempfile.mkdtemp(prefix="op_survey.")
    if not a.keep:
        atexit.register(shutil.rmtree, work, True)
    print("# %s float32 [%s], %d threads, %d timed runs; cells: fuser ms / none ms (groups, max rel error)" %
          (a.build, a.shape, a.threads, a.iters))
    print("%-14s %9s  %s" % ("op", "none ms", "  ".join("%-26s" % f for f in fusers)))
    flagged = []
    for op in ops:
        text, inputs = graph(op)
        path = os.path.join(work, op + ".ir")
        with open(path, "w") as f:
            f.write(text)
        out = os.path.join(work, op + ".json")
        cmd = [exe, "bench", path, "--random", "--fusers", ",".join(["none"] + fusers), "--iters", str(a.iters),
               "--json", out]
        for k in inputs:
            cmd += ["--shape", "%s=%s" % (k, a.shape)]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        if r.returncode != 0:
            print("%-14s failed: %s" % (op, (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]))
            continue
        with open(out) as f:
            rows = json.load(f)["fusers"]
        none = rows[0]["median_ms"]
        cells, worst = [], 0.0
        for e in rows[1:]:
            ratio = e["median_ms"] / none if none > 0 else float("nan")
            worst = max(worst, ratio)
            cells.append("%-26s" % ("%5.2fx (%d, %.1e)" % (ratio, e["groups"], e["max_rel_error"])))
        print("%-14s %9.4f  %s" % (op, none, "  ".join(cells)))
        if worst > a.flag:
            flagged.append("%s %.1fx" % (op, worst))
    print("# above %.1fx none in some fuser: %s" % (a.flag, ", ".join(flagged) if flagged else "none"))
    if a.keep:
        print("# graphs and results in %s" % work)


if __name__ == "__main__":
    main()
