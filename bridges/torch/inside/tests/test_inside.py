"""libfusebox_torch.so inside PyTorch: four models scripted with torch.jit.script run with the
library under every fuser and must match PyTorch without it (outputs; outputs and gradients
in training); the optimized graph must hold fusebox::FusionGroup nodes that fusebox ran.

    /usr/bin/python3 test_inside.py --lib build/bridges/torch/libfusebox_torch.so [--fusers a,b]

The references are PyTorch's own numbers: eager mode, and the same scripted model with the
library's pass switched off (torch.ops.fusebox.set_enabled(False)). Exit status 0 when every
check passes; each failure is printed with the model, fuser and mode.
"""
import argparse
import copy
import math
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)
    return cond


def close(a, b, what, rtol=1e-4, atol=1e-5):
    if isinstance(a, (tuple, list)):
        return all([close(x, y, f"{what}[{i}]", rtol, atol) for i, (x, y) in enumerate(zip(a, b))])
    ok = a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, rtol=rtol, atol=atol)
    err = (a.double() - b.double()).abs().max().item() if a.shape == b.shape else float("nan")
    return check(ok, f"{what}: max abs error {err:.3g} (shape {tuple(a.shape)} vs {tuple(b.shape)})")


# ---- the models ---------------------------------------------------------------------------


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(64, 128)
        self.l2 = nn.Linear(128, 32)

    def forward(self, x):
        h = F.gelu(self.l1(x)) * 0.5 + 0.25
        return torch.tanh(self.l2(h)) + x[:, :32]


class LSTMCell(nn.Module):
    """The LSTM cell of PyTorch's fuser benchmarks (the legacy fuser's chunk case)."""

    def __init__(self, n_in=32, n_hid=48):
        super().__init__()
        self.w_ih = nn.Parameter(torch.randn(4 * n_hid, n_in) * 0.1)
        self.w_hh = nn.Parameter(torch.randn(4 * n_hid, n_hid) * 0.1)
        self.b_ih = nn.Parameter(torch.randn(4 * n_hid) * 0.1)
        self.b_hh = nn.Parameter(torch.randn(4 * n_hid) * 0.1)

    def forward(self, x, hx, cx):
        gates = torch.mm(x, self.w_ih.t()) + torch.mm(hx, self.w_hh.t()) + self.b_ih + self.b_hh
        i, f, g, o = gates.chunk(4, 1)
        i = torch.sigmoid(i)
        f = torch.sigmoid(f)
        g = torch.tanh(g)
        o = torch.sigmoid(o)
        cy = f * cx + i * g
        hy = o * torch.tanh(cy)
        return hy, cy


class RatioIoU(nn.Module):
    """Ratio-IoU from PyTorch's JIT fuser blog (examples/ratio_iou.ir is its graph)."""

    def forward(self, x1, y1, w1, h1, x2, y2, w2, h2):
        xi = torch.max(x1, x2)
        yi = torch.max(y1, y2)
        wi = torch.clamp(torch.min(x1 + w1, x2 + w2) - xi, min=0.)
        hi = torch.clamp(torch.min(y1 + h1, y2 + h2) - yi, min=0.)
        area_i = wi * hi
        area_u = w1 * h1 + w2 * h2 - wi * hi
        return area_i / torch.clamp(area_u, min=1e-5)


class TransformerBlock(nn.Module):
    """Pre-norm attention + MLP with residuals (what nn.TransformerEncoderLayer computes,
    written out so that the graph is the same in training and eval)."""

    def __init__(self, d=32, heads=4, ff=64):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ff1 = nn.Linear(d, ff)
        self.ff2 = nn.Linear(ff, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=2)
        hd = d // self.heads
        q = q.reshape(b, t, self.heads, hd).transpose(1, 2)
        k = k.reshape(b, t, self.heads, hd).transpose(1, 2)
        v = v.reshape(b, t, self.heads, hd).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(2, 3)) / math.sqrt(hd), dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


def models():
    g = torch.Generator().manual_seed(0)

    def rnd(*s):
        return torch.randn(*s, generator=g)

    def boxes(n):
        return [rnd(n).abs() * 4 for _ in range(8)]

    # (name, module, inputs, other inputs: a second set with other shapes for the guard)
    return [
        ("mlp", MLP(), [rnd(8, 64)], [rnd(5, 64)]),
        ("lstm_cell", LSTMCell(), [rnd(6, 32), rnd(6, 48), rnd(6, 48)], [rnd(3, 32), rnd(3, 48), rnd(3, 48)]),
        ("ratio_iou", RatioIoU(), boxes(1000), boxes(300)),
        ("transformer_block", TransformerBlock(), [rnd(2, 10, 32)], [rnd(3, 7, 32)]),
    ]


# ---- the checks ---------------------------------------------------------------------------

ITERS = 5  # PyTorch profiles, then optimizes; fusebox profiles the group once, then compiles


_FRESH = [0]


def fresh(model):
    """A copy of model under a new class: TorchScript compiles methods per class, so every
    instance of one class shares one graph executor (and its optimized plan)."""
    _FRESH[0] += 1
    cls = type(model)
    m = copy.deepcopy(model)
    m.__class__ = type(f"{cls.__name__}_{_FRESH[0]}", (cls,), {})
    return m


def stats():
    return dict(torch.ops.fusebox.stats())


def run_inference(name, model, inputs, other, fuser):
    model = copy.deepcopy(model).eval()
    tag = f"{name}/{fuser}/inference"
    with torch.no_grad():
        want = model(*inputs)
        torch.ops.fusebox.set_enabled(False)
        plain = torch.jit.script(fresh(model))
        for _ in range(ITERS):
            without = plain(*inputs)
        torch.ops.fusebox.set_enabled(True)
        torch.ops.fusebox.set_fuser(fuser)
        s = torch.jit.script(fresh(model))
        before = stats()
        for _ in range(ITERS):
            got = s(*inputs)
        graph = str(torch.jit.last_executed_optimized_graph())
        after = stats()
        close(got, want, f"{tag} vs eager")
        close(got, without, f"{tag} vs TorchScript without the library")
        check("fusebox::FusionGroup" in graph, f"{tag}: no fusebox::FusionGroup in the optimized graph:\n{graph}")
        ran = after["fusebox_runs"] - before["fusebox_runs"]
        check(ran > 0, f"{tag}: fusebox ran no group")
        check(after["error_fallbacks"] == before["error_fallbacks"], f"{tag}: fusebox failed on a group")
        # The guard: other shapes than profiled run through PyTorch's own execution.
        g0 = stats()["guard_fallbacks"]
        close(s(*other), model(*other), f"{tag}: inputs of other shapes")
        check(stats()["guard_fallbacks"] > g0, f"{tag}: other shapes did not fail the guard")
    # Gradients through a plan optimized without them: the groups' guard sees inputs that
    # require grad and lets PyTorch run the subgraph, so autograd records it.
    xs = [x.clone().requires_grad_() for x in inputs]
    ys = [x.clone().requires_grad_() for x in inputs]
    got, want = s(*xs), model(*ys)
    got, want = (got if isinstance(got, tuple) else (got,)), (want if isinstance(want, tuple) else (want,))
    sum([o.sum() for o in got]).backward()
    sum([o.sum() for o in want]).backward()
    close([x.grad for x in xs], [y.grad for y in ys], f"{tag}: gradients through a no-grad plan")
    return after["kernel_runs"] - before["kernel_runs"]


def run_training(name, model, inputs, fuser):
    tag = f"{name}/{fuser}/training"
    ref = copy.deepcopy(model).train()
    mod = copy.deepcopy(model).train()
    torch.ops.fusebox.set_enabled(True)
    torch.ops.fusebox.set_fuser(fuser)
    s = torch.jit.script(fresh(mod))

    def step(m, params):
        xs = [x.clone().requires_grad_() for x in inputs]
        out = m(*xs)
        graph = str(torch.jit.last_executed_optimized_graph())
        outs = out if isinstance(out, tuple) else (out,)
        loss = sum([(o * torch.linspace(-1, 1, o.numel()).reshape(o.shape)).sum() for o in outs])
        for p in params:
            p.grad = None
        loss.backward()
        # after forward: the outer graph (its DifferentiableGraphs' forward graphs have their
        # own executors); after backward: the backward graph. Groups may be in either.
        graph += str(torch.jit.last_executed_optimized_graph())
        return outs, [x.grad for x in xs] + [p.grad for p in params], graph

    before = stats()
    for _ in range(ITERS):
        got, got_grads, graph = step(s, list(s.parameters()))
    after = stats()
    want, want_grads, _ = step(ref, list(ref.parameters()))
    close(got, want, f"{tag}: outputs")
    for i, (a, b) in enumerate(zip(got_grads, want_grads)):
        if check((a is None) == (b is None), f"{tag}: gradient {i} defined in one run only") and a is not None:
            close(a, b, f"{tag}: gradient {i}", rtol=1e-4, atol=1e-4)
    # In training the groups sit in the forward graphs of prim::DifferentiableGraph nodes,
    # which run on executors of their own, and in the backward graphs:
    # last_executed_optimized_graph() shows the outer graph after forward and the backward
    # graph after backward. That fusebox ran groups at all is what the counters show.
    shown = "fusebox::FusionGroup" in graph
    check(after["fusebox_runs"] > before["fusebox_runs"], f"{tag}: fusebox ran no group")
    check(after["error_fallbacks"] == before["error_fallbacks"], f"{tag}: fusebox failed on a group")
    return shown


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--fusers", default="none,legacy,tensorexpr,nvfuser_like")
    ap.add_argument("--models", default="")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.ops.load_library(args.lib)

    try:
        torch.ops.fusebox.set_fuser("no_such_fuser")
        check(False, "set_fuser accepted an unknown fuser")
    except RuntimeError as e:
        check("no_such_fuser" in str(e), f"set_fuser's error does not name the fuser: {e}")

    for fuser in args.fusers.split(","):
        kernels = 0
        for name, model, inputs, other in models():
            if args.models and name not in args.models.split(","):
                continue
            kernels += run_inference(name, model, inputs, other, fuser)
            shown = run_training(name, model, inputs, fuser)
            print(f"{fuser:13s} {name:18s} done (training: groups {'in' if shown else 'not in'} "
                  "the graphs last_executed_optimized_graph shows)", flush=True)
        if fuser != "none":
            check(kernels > 0, f"{fuser}: no fused kernel ran in any model")
        print(f"{fuser}: {kernels} fused kernel runs in inference", flush=True)
    print(stats())
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
