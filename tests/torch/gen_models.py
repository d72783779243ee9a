#!/usr/bin/python3
"""Writes tests/torch/models/NAME/ for test_torch_import (issue 19): a small
module of each kind, scripted and saved with torch.jit.save (model.pt), its
inputs (in<K>.npy, or in<K>.txt holding the literal of an input that is not a
tensor), PyTorch's outputs in eval mode (out<K>.npy, tuples
flattened) and, where the model is differentiable in its inputs, the
gradients of the floating inputs with a gradient of ones for every floating
output (grad_<input>.npy). <input> is the graph input's name after
freezing (x.1), as `fusebox import` writes it. meta.txt lists them:
    inputs x.1 h.1        graph inputs, in order
    outputs 2             how many out<K>.npy
    grads x.1 h.1         inputs with a grad_<input>.npy ("grads" alone: none)
    tol 1e-4 1e-5         rtol atol for the outputs (gradients: 10x)

Run with Debian's python3-torch (1.13, the libtorch-dev version):
    /usr/bin/python3 tests/torch/gen_models.py [NAME...]   (NAME...: only those cases)
Deterministic (seeded); the files are a few KB each."""
import math
import os
import shutil
import sys
from typing import Dict, Optional

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return torch.tanh(self.fc2(torch.relu(self.fc1(x))))


class ConvBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class LSTMCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(5, 6)

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


class GRUCell(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(5, 6)

    def forward(self, x, h):
        return self.cell(x, h)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class EmbeddingLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.fc = nn.Linear(6, 3)

    def forward(self, idx):
        return self.fc(self.emb(idx))


class LayerNormMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.ln = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 8)

    def forward(self, x):
        return x + self.fc2(F.gelu(self.ln(self.fc1(x))))


class BatchNormEval(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(6)

    def forward(self, x):
        return torch.sigmoid(self.bn(x))


class Pooling(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, 2) + F.avg_pool2d(x, 2)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.v = nn.Linear(8, 8)

    def forward(self, x):
        q, k, v = self.q(x), self.k(x), self.v(x)
        w = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(8.0), dim=-1)
        return torch.matmul(w, v)


class ResidualSiLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 8))

    def forward(self, x):
        return x + F.silu(self.fc(x)) * self.scale


class InstanceNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.InstanceNorm2d(3, affine=True)

    def forward(self, x):
        return self.norm(x)


class LSTMModule(nn.Module):
    # nn.LSTM's scripted forward passes its flat weights as one Tensor[] attribute, which
    # the import lifts to one input per parameter
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 6, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x):
        return self.lstm(x)


class GRUModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(5, 6)

    def forward(self, x, h):
        return self.gru(x, h)


class Deconv(nn.Module):
    """DCGAN-style upsampling: ConvTranspose2d(stride 2, padding 1) + BatchNorm2d + ReLU, then a
    dilated ConvTranspose2d with output_padding 1 (below its dilation) and a per-channel PReLU."""

    def __init__(self):
        super().__init__()
        self.up = nn.ConvTranspose2d(4, 3, 4, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(3)
        self.dil = nn.ConvTranspose2d(3, 4, 3, padding=2, output_padding=1, groups=1, dilation=2)
        self.act = nn.PReLU(4)

    def forward(self, x):
        return self.act(self.dil(torch.relu(self.bn(self.up(x)))))


class Conv3dPReLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(2, 4, 3, padding=1, groups=2)
        self.act = nn.PReLU()
        self.up = nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1, groups=2)

    def forward(self, x):
        h = self.act(self.conv(x))
        return self.up(h.flatten(2))


class NoGradScale(nn.Module):
    """`with torch.no_grad():` in forward (a scale that gets no gradient) and nn.GaussianNLLLoss, which clamps
    its variance under torch.no_grad()."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 4)
        self.nll = nn.GaussianNLLLoss()

    def forward(self, x, t):
        h = self.lin(x)
        with torch.no_grad():
            scale = h.abs().mean(dim=1, keepdim=True) + 1.0
        var = torch.sigmoid(h) + 0.1
        return self.nll(h / scale, t, var), scale


class ScalarInputs(nn.Module):
    """forward takes an int, a float, an Optional[Tensor] and a bool next to its tensor."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(6, 6)

    def forward(self, x, n: int, scale: float, mask: Optional[torch.Tensor], use_relu: bool):
        h = self.lin(x) * scale
        if mask is not None:
            h = h.masked_fill(mask, 0.0)
        if use_relu:
            h = torch.relu(h)
        return h[:, :n] + torch.arange(n).to(h.dtype)


class SharedParams(nn.Module):
    """Parameters that freezing would fold or pool if they were constants: nn.MultiheadAttention's
    packed projection (chunked), two equal-valued ones, a weight tied into two uses, a parameter
    chunked by forward, and parameters in an einsum's operand list. Each parameter's gradient must
    reach the input named after it (meta "pgrads")."""

    def __init__(self):
        super().__init__()
        self.mha = nn.MultiheadAttention(8, 2, batch_first=True)
        self.a = nn.Parameter(torch.ones(8))
        self.b = nn.Parameter(torch.ones(8))
        self.proj = nn.Linear(8, 8, bias=False)
        self.w = nn.Parameter(torch.randn(8, 8) * 0.3)

    def forward(self, x):
        h, _ = self.mha(x, x, x)
        h = h * self.a + self.b
        h = self.proj(h) + F.linear(h, self.proj.weight.t())
        wq, wk = self.w.chunk(2, dim=0)
        h = h + torch.einsum("bsi,ji->bsj", h, torch.cat([wk, wq], 0))
        return torch.einsum("bsi,ij,jk->bsk", h, self.w, self.proj.weight)


class TwoMethods(nn.Module):
    """A second exported method (`fusebox import --method encode`; freezing keeps forward alone
    unless told): encode_out0.npy is encode(in0)."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(6, 4)
        self.dec = nn.Linear(4, 6)

    @torch.jit.export
    def encode(self, x):
        return torch.tanh(self.enc(x))

    def forward(self, x):
        return self.dec(self.encode(x))


class DictOutput(nn.Module):
    """Returns a Dict[str, Tensor] (fusebox import: the tuple of its values, keys in the manifest)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x) -> Dict[str, torch.Tensor]:
        y = self.fc(x)
        return {"logits": y, "probs": torch.softmax(y, -1)}


def randn(*s):
    return torch.randn(*s)


# name, module, inputs, differentiable in its floating inputs, tol (, flags: "trace": torch.jit.trace, not
# script; "params": also the gradients of the parameters, named as fusebox import names their inputs)
CASES = [
    ("mlp", MLP, lambda: [randn(3, 6)], True, (1e-4, 1e-5)),
    ("conv_block", ConvBlock, lambda: [randn(1, 2, 5, 5)], True, (1e-4, 1e-5)),
    ("lstm_cell", LSTMCell, lambda: [randn(2, 5), randn(2, 6), randn(2, 6)], True, (1e-4, 1e-5)),
    ("gru_cell", GRUCell, lambda: [randn(2, 5), randn(2, 6)], True, (1e-4, 1e-5)),
    ("transformer_encoder", Encoder, lambda: [randn(2, 3, 8)], True, (1e-4, 1e-5)),
    ("embedding_linear", EmbeddingLinear, lambda: [torch.tensor([[1, 4, 9], [0, 2, 2]])], False, (1e-4, 1e-5)),
    ("layernorm_mlp", LayerNormMLP, lambda: [randn(3, 8)], True, (1e-4, 1e-5)),
    ("batchnorm_eval", BatchNormEval, lambda: [randn(4, 6)], True, (1e-4, 1e-5)),
    ("pooling", Pooling, lambda: [randn(1, 2, 4, 4)], True, (1e-4, 1e-5)),
    ("attention", Attention, lambda: [randn(2, 4, 8)], True, (1e-4, 1e-5)),
    ("residual_silu", ResidualSiLU, lambda: [randn(3, 8)], True, (1e-4, 1e-5)),
    ("instance_norm", InstanceNorm, lambda: [randn(2, 3, 4, 4)], True, (1e-4, 1e-5)),
    ("lstm_module", LSTMModule, lambda: [randn(2, 4, 5)], True, (1e-4, 1e-5)),
    ("gru_module", GRUModule, lambda: [randn(4, 2, 5), randn(1, 2, 6)], True, (1e-4, 1e-5)),
    ("deconv", Deconv, lambda: [randn(2, 4, 3, 3)], True, (1e-4, 1e-5)),
    ("conv3d_prelu", Conv3dPReLU, lambda: [randn(2, 2, 3, 2, 3)], True, (1e-4, 1e-5)),
    # traced: the convolutions are aten::_convolution
    ("deconv_traced", Deconv, lambda: [randn(2, 4, 3, 3)], True, (1e-4, 1e-5), "trace"),
    ("no_grad_scale", NoGradScale, lambda: [randn(3, 6), randn(3, 4)], True, (1e-4, 1e-5)),
    # inputs that are not tensors (in<K>.txt: the literal fusebox run takes)
    ("scalar_inputs", ScalarInputs, lambda: [randn(3, 6), 4, 0.5, None, True], True, (1e-4, 1e-5)),
    # "params": the parameters' gradients are checked too (pgrad_<input name>.npy)
    ("shared_params", SharedParams, lambda: [randn(2, 3, 8)], True, (1e-4, 1e-5), "params"),
    # "encode": also the exported method encode's output (encode_out0.npy)
    ("two_methods", TwoMethods, lambda: [randn(3, 6)], True, (1e-4, 1e-5), "encode"),
    ("dict_output", DictOutput, lambda: [randn(3, 6)], True, (1e-4, 1e-5), "params"),
]


def literal(v):
    """fusebox run's --input literal of a non-tensor input."""
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def flatten(v):
    if isinstance(v, dict):
        return [t for e in v.values() for t in flatten(e)]
    if isinstance(v, (tuple, list)):
        return [t for e in v for t in flatten(e)]
    return [v]


def main():
    """Every case, OUT rebuilt; or the cases named on the command line alone (their directories rebuilt)."""
    only = sys.argv[1:]
    unknown = [n for n in only if n not in [c[0] for c in CASES]]
    if unknown:
        sys.exit("gen_models.py: no case named %s" % ", ".join(unknown))
    torch.manual_seed(0)
    if not only and os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT, exist_ok=True)
    for name, cls, make_inputs, diff, tol, *how in CASES:
        if only and name not in only:
            continue
        if os.path.isdir(os.path.join(OUT, name)):
            shutil.rmtree(os.path.join(OUT, name))
        torch.manual_seed(len(name))
        mod = cls()
        # Non-trivial running statistics for the norms in eval mode.
        for b in mod.modules():
            if isinstance(b, (nn.BatchNorm1d, nn.BatchNorm2d)):
                b.running_mean.uniform_(-0.5, 0.5)
                b.running_var.uniform_(0.5, 1.5)
                b.weight.data.uniform_(0.5, 1.5)
                b.bias.data.uniform_(-0.5, 0.5)
        mod.eval()
        inputs = make_inputs()
        scripted = torch.jit.trace(mod, inputs) if "trace" in how else torch.jit.script(mod)
        d = os.path.join(OUT, name)
        os.makedirs(d)
        torch.jit.save(scripted, os.path.join(d, "model.pt"))
        names = [str(i) for i in range(len(inputs))]
        grads, pgrads = [], []
        is_t = [isinstance(t, torch.Tensor) for t in inputs]
        if diff:
            inputs = [t.clone().requires_grad_(t.is_floating_point()) if k else t for t, k in zip(inputs, is_t)]
        outs = flatten(scripted(*inputs))
        if diff:
            fl = [o for o in outs if o.is_floating_point() and o.requires_grad]  # (a no_grad output: none)
            req = [t for t, k in zip(inputs, is_t) if k and t.requires_grad]
            params = list(scripted.named_parameters()) if "params" in how else []
            gs = torch.autograd.grad(fl, req + [p for _, p in params], [torch.ones_like(o) for o in fl])
            it = iter(gs)
            grads = [(n, next(it)) for n, t, k in zip(names, inputs, is_t) if k and t.requires_grad]
            pgrads = [("self." + n, next(it)) for n, _ in params]
        for n, t, k in zip(names, inputs, is_t):
            if k:
                np.save(os.path.join(d, "in%s.npy" % n), t.detach().numpy())
            else:
                with open(os.path.join(d, "in%s.txt" % n), "w") as f:
                    f.write(literal(t) + "\n")
        for k, o in enumerate(outs):
            np.save(os.path.join(d, "out%d.npy" % k), o.detach().numpy())
        if "encode" in how:
            np.save(os.path.join(d, "encode_out0.npy"), scripted.encode(inputs[0]).detach().numpy())
        for n, g in grads:
            np.save(os.path.join(d, "grad%s.npy" % n), g.numpy())
        for n, g in pgrads:
            np.save(os.path.join(d, "pgrad_%s.npy" % n), g.numpy())
        with open(os.path.join(d, "meta.txt"), "w") as f:
            f.write("inputs %d\n" % len(names))
            f.write("outputs %d\n" % len(outs))
            f.write(("grads %s" % " ".join(n for n, _ in grads)).rstrip() + "\n")
            if pgrads:
                f.write("pgrads %s\n" % " ".join(n for n, _ in pgrads))
            f.write("tol %g %g\n" % tol)
        print("%-20s %d inputs, %d outputs, %d gradients" % (name, len(names), len(outs), len(grads)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
