#!/usr/bin/python3
"""Regenerate the benchmark graphs in bench/graphs/ from PyTorch.

    /usr/bin/python3 bench/graphs/gen_graphs.py

Writes gelu_tanh.ir, bias_gelu.ir and lstm_cell.ir: what PyTorch prints for
torch.jit.script(fn).graph, source paths cut to the file name.  Script graphs
type their inputs as plain `Tensor`; `fusebox bench --random --shape ...`
gives the sizes (bench/fuser_figures.sh has the ones the figures use).

The GELU is written out in its tanh form, as BERT/GPT-2 code did before
aten::gelu had approximate='tanh': the eight pointwise ops are what a fuser
can merge (aten::gelu itself would be one op, nothing to fuse).  bias_gelu is
Megatron-LM's fused bias + GELU.  lstm_cell is the cell of PyTorch's own
LSTM fuser benchmarks (benchmarks/fastrnns): two matmuls, then the gate math
on the chunked gates.
"""
import os
import re
import sys

sys.dont_write_bytecode = True

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
_SRC_RE = re.compile(r"# (?:[^\s#]*/)([^/\s]+\.py:\d+:\d+)")


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def bias_gelu(y, bias):
    x = bias + y
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def lstm_cell(input, hx, cx, w_ih, w_hh, b_ih, b_hh):
    gates = torch.mm(input, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy


def main():
    for fn in (gelu_tanh, bias_gelu, lstm_cell):
        text = _SRC_RE.sub(r"# \1", str(torch.jit.script(fn).graph))
        assert HERE not in text and "dist-packages" not in text, text
        if not text.endswith("\n"):
            text += "\n"
        with open(os.path.join(HERE, fn.__name__ + ".ir"), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)


if __name__ == "__main__":
    main()
