#!/usr/bin/python3
"""Real PyTorch functions for the fusebox test corpus.

gen_corpus.py scripts/traces these and writes their TorchScript IR, plus
PyTorch's own outputs and gradients as golden data.  Line numbers in this file
end up in the `# corpus.py:LINE:COL` source comments of the graphs, so editing
it changes the graphs: regenerate after any change.

Functions named g_* are used for graphs only, c_* are conformance cases (their
graph is also written), t_* are traced.
"""
import math
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


# ---------------------------------------------------------------------------
# Building blocks shared by graphs and cases
# ---------------------------------------------------------------------------

def lstm_cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh) -> Tuple[Tensor, Tensor]:
    gates = x @ w_ih.t() + b_ih + hx @ w_hh.t() + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))


def bias_gelu(x, bias):
    y = x + bias
    return y * 0.5 * (1.0 + torch.tanh(0.79788456 * y * (1 + 0.044715 * y * y)))


def layer_norm_manual(x, weight, bias, eps: float = 1e-5):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) * (x - mean)).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def layer_norm_f(x, weight, bias):
    return F.layer_norm(x, [x.size(-1)], weight, bias, 1e-5)


def softmax_manual(x, dim: int):
    m = x.amax(dim, keepdim=True)
    e = torch.exp(x - m)
    return e / e.sum(dim, keepdim=True)


def mlp(x, w1, b1, w2, b2):
    h = F.linear(x, w1, b1)
    h = torch.relu(h)
    return torch.addmm(b2, h, w2.t())


def attention(q, k, v, mask):
    d = q.size(-1)
    s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(d)
    s = s.masked_fill(mask, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return torch.matmul(p, v)


def ratio_iou(x1, y1, w1, h1, x2, y2, w2, h2):
    xi = torch.max(x1, x2)                                  # Intersection left
    yi = torch.max(y1, y2)                                  # Intersection top
    wi = torch.clamp(torch.min(x1 + w1, x2 + w2) - xi, min=0.)  # Intersection width
    hi = torch.clamp(torch.min(y1 + h1, y2 + h2) - yi, min=0.)  # Intersection height
    area_i = wi * hi                                        # Area Intersection
    area_u = w1 * h1 + w2 * h2 - wi * hi                    # Area Union
    return area_i / torch.clamp(area_u, min=1e-5)           # Intersection over Union


# ---------------------------------------------------------------------------
# Graph-only functions (control flow, lists, tuples, constants, ...)
# ---------------------------------------------------------------------------

def g_if_else(x, flag: bool):
    if flag:
        y = x * 2.0
    else:
        y = x - 1.0
    return y.relu()


def g_if_tensor_cond(x):
    if bool(x.sum() > 0):
        y = torch.tanh(x)
        z = y * y
    else:
        y = torch.sigmoid(x)
        z = y + 1
    return y, z


def g_loop_carried(x, n: int):
    acc = torch.zeros_like(x)
    for i in range(n):
        acc = acc + x * i
        x = x * 0.5
    return acc, x


def g_nested_if_in_loop(x, n: int):
    y = x
    for i in range(n):
        if i % 2 == 0:
            y = y + 1.0
        else:
            if i > 2:
                y = y * 0.5
            else:
                y = y - x
    return y


def g_while_loop(x, limit: float):
    i = 0
    while bool(x.abs().sum() < limit) and i < 100:
        x = x * 2.0
        i += 1
    return x, i


def g_break_continue(x, n: int):
    total = 0
    for i in range(n):
        if i == 1:
            continue
        if i > 5:
            break
        total += i
        x = x + total
    return x


def g_early_exit(x):
    if x.dim() == 1:
        return x.unsqueeze(0)
    if x.size(0) == 0:
        return x
    return x * 2


def g_raise_check(x):
    if x.dim() != 2:
        raise ValueError("expected a 2-D input")
    if x.size(1) < 1:
        raise RuntimeError("empty \"rows\"\n\ttab")
    return x.sum(1)


def g_tuple_ops(x, y) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
    t = (x, y)
    a, b = t
    s = a + b
    return s, (a - b, a * b)


def g_tuple_arg(pair: Tuple[Tensor, Tensor], k: int):
    a, b = pair
    return a * k + b


def g_list_cat(x, y, z):
    parts = [x, y, z]
    out = torch.cat(parts, dim=1)
    return torch.stack([x, y], 0), out


def g_list_input(xs: List[Tensor]):
    total = xs[0]
    for t in xs[1:]:
        total = total + t
    return total, len(xs)


def g_list_int_shapes(x):
    sizes = x.size()
    n = sizes[0]
    rest = 1
    for s in sizes[1:]:
        rest = rest * s
    y = x.view([n, rest])
    z = x.reshape(n, -1).permute(1, 0)
    dims: List[int] = []
    for d in range(x.dim()):
        dims.append(x.dim() - 1 - d)
    w = x.permute(dims)
    return y, z, w, len(sizes)


def g_scalar_math(a: int, b: float):
    c = a * 3 + 1
    d = b / 2.0 - a
    e = a // 2
    f = a % 3
    g = float(a) ** 2
    h = int(b)
    big = c > 10 and d <= 0.5
    m = max(a, h)
    return c, d, e, f, g, h, big, m, -b, a == 4, b != 1.5


def g_strings_and_modes(x, y):
    a = torch.div(x, y, rounding_mode="floor")
    b = torch.div(x, y, rounding_mode="trunc")
    c = F.gelu(x, approximate="tanh")
    d = F.gelu(y, approximate="none")
    return a, b, c, d


def g_optional_bias(x, weight, bias: Optional[Tensor]):
    y = x @ weight
    if bias is not None:
        y = y + bias
    return y


def g_optional_int(x, dim: Optional[int]):
    if dim is None:
        return x.sum()
    return x.sum(dim)


def g_dtype_device(x):
    a = x.to(torch.float64)
    b = torch.zeros([2, 3], dtype=torch.float32, device=torch.device("cpu"))
    c = torch.ones(3, dtype=torch.int64, device=x.device)
    d = x.to(dtype=torch.int32)
    e = torch.full([2], 1.5, dtype=x.dtype)
    f = x.half().float()
    return a, b, c, d, e, f


def g_float_consts(x):
    a = x.clamp(min=-math.inf, max=math.inf)
    b = x.masked_fill(x < 0, float("-inf"))
    c = torch.where(x > 0, x, torch.full_like(x, float("nan")))
    d = x + 1e-5
    e = x * 3.4028234663852886e38 - 1e-300
    f = x - 0.1
    return a, b, c, d, e, f


def g_pointwise_zoo(x, y):
    a = torch.exp(x) + torch.log1p(torch.abs(y)) - torch.sin(x) * torch.cos(y)
    b = torch.rsqrt(torch.abs(x) + 1.0) * torch.erf(y)
    c = torch.sigmoid(a) * torch.tanh(b) + F.silu(x) - F.softplus(y)
    d = torch.floor(x) + torch.ceil(y) + torch.round(x) + torch.trunc(y)
    e = torch.pow(torch.abs(x), 2.5) + torch.atan2(x, y) + torch.remainder(x, 1.5)
    return c, d, e


def g_reductions(x):
    a = x.sum([0, 2], keepdim=True)
    b = x.mean(-1)
    c = x.amax(1)
    d, i = torch.max(x, dim=2, keepdim=False)
    e = x.var(1, unbiased=False)
    f = torch.logsumexp(x, [1])
    g = x.cumsum(2)
    h = x.prod(0)
    return a, b, c, d, i, e, f, g, h, x.std(), (x > 0).all(), (x > 0).any(1)


def g_softmax_family(x):
    return torch.softmax(x, -1), torch.log_softmax(x, 1), F.softmax(x, dim=0)


def g_linear_algebra(a, b, v, bias):
    return torch.mm(a, b), torch.matmul(a, v), torch.addmm(bias, a, b, beta=0.5, alpha=2.0), F.linear(a, b.t(), bias)


def g_view_ops(x):
    a, b = x.chunk(2, 1)
    c = x.split([1, 3], 1)
    d = x.narrow(0, 1, 2)
    e = x.select(1, 0)
    f = x[1:, ::2]
    g = torch.index_select(x, 0, torch.tensor([0, 2]))
    h = x.transpose(0, 1).contiguous().view(-1)
    return a, b, c[1], d, e, f, g, h


def g_where_clamp_mask(x, y, mask):
    a = torch.where(mask, x, y)
    b = torch.clamp(x, -0.5, 0.5)
    c = x.masked_fill(mask, 0.0)
    d = (x >= y) | (x != x)
    e = torch.maximum(x, y) - torch.minimum(x, y)
    return a, b, c, d, e


def g_conversions_creation(x, n: int):
    a = x.long()
    b = x.float() + x.double().float()
    c = torch.arange(n)
    d = torch.arange(0.0, 1.0, 0.25)
    e = torch.zeros(n, 2)
    f = torch.ones_like(x, dtype=torch.bool)
    g = torch.full([n], 7)
    h = x.type_as(c)
    return a, b, c, d, e, f, g, h


def g_lstm_cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
    return lstm_cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh)


def g_lstm_seq(xs, hx, cx, w_ih, w_hh, b_ih, b_hh):
    outs: List[Tensor] = []
    for t in range(xs.size(0)):
        hx, cx = lstm_cell(xs[t], hx, cx, w_ih, w_hh, b_ih, b_hh)
        outs.append(hx)
    return torch.stack(outs), hx, cx


def g_batchnorm_dropout(x, rm, rv, w, b, training: bool):
    y = F.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-5)
    return F.dropout(y, p=0.5, training=training)


def g_tensor_literal(x):
    c = torch.tensor([1.0, 2.0, 3.0])
    return x * c + torch.tensor(2)


def g_inplace_ops(x):
    y = x.clone()
    y.add_(1.0)
    y.mul_(2)
    y[0] = 0.0
    y.relu_()
    return y


def g_int_list_math(x, pad: List[int]):
    s = x.size()
    new: List[int] = [s[0] + pad[0], s[1] + pad[1]]
    out = torch.zeros(new, dtype=x.dtype)
    out[: s[0], : s[1]] = x
    return out, new


# ---------------------------------------------------------------------------
# Conformance cases (script)
# ---------------------------------------------------------------------------

def c_unary_math(x):
    return (torch.abs(x), torch.neg(x), torch.exp(x), torch.expm1(x), torch.sin(x),
            torch.cos(x), torch.tanh(x), torch.erf(x), torch.sigmoid(x))


def c_unary_positive(x):
    return torch.sqrt(x), torch.rsqrt(x), torch.log(x), torch.log1p(x), torch.reciprocal(x), x.log2(), x.log10()


def c_unary_edge(x):
    return (torch.abs(x), -x, torch.sign(x), torch.floor(x), torch.ceil(x), torch.relu(x),
            torch.sigmoid(x), torch.tanh(x), torch.exp(x), torch.sqrt(x), torch.log(x), torch.reciprocal(x))


def c_rounding(x):
    return torch.floor(x), torch.ceil(x), torch.round(x), torch.trunc(x), torch.sign(x), torch.frac(x)


def c_activations(x):
    return (torch.relu(x), F.leaky_relu(x, 0.1), F.elu(x), F.gelu(x), F.gelu(x, approximate="tanh"),
            F.silu(x), F.softplus(x), F.hardtanh(x, -0.5, 0.5), F.hardsigmoid(x), F.hardswish(x),
            F.relu6(x * 4.0), F.mish(x))


def c_pow_clamp(x, e: float):
    return (torch.pow(x, 2), torch.pow(x.abs(), e), x ** 3, x.abs() ** 0.5, torch.clamp(x, -1.0, 0.5),
            torch.clamp_min(x, 0.25), torch.clamp(x, max=-0.5), torch.pow(2.0, x))


def c_clamp_nan(x, lo, hi):
    return torch.clamp(x, min=-1.0, max=1.0), torch.clamp(x, lo, hi), x.clamp(min=0.0), torch.relu(x)


def c_unary_f64(x):
    return torch.exp(x), torch.log1p(x.abs()), torch.tanh(x), torch.erf(x), torch.sigmoid(x), F.gelu(x)


def c_half_ops(x, y):
    # torch 1.13's CPU kernels lack most float16 math (exp, tanh, relu, ...): compute those in float32
    return (torch.abs(x), -x, x + y, x * y, x * 0.5, x / y, x.sum(1), x.amax(1), torch.exp(x.float()).half(),
            x > y, torch.where(x > y, x, y), x.float() + y.float())


def c_add_sub_alpha(x, y):
    return torch.add(x, y, alpha=2), torch.sub(x, y, alpha=0.5), x + 3, 2.5 - x, torch.rsub(x, y), x - y


def c_broadcast_binary(x, y):
    return x + y, x * y, x / y, x - y, y - x


def c_div_modes_float(x, y):
    return (x / y, torch.div(x, y, rounding_mode="floor"), torch.div(x, y, rounding_mode="trunc"),
            torch.floor_divide(x, y), torch.remainder(x, y), torch.fmod(x, y), x % 1.5)


def c_div_modes_int(a, b):
    return (a / b, torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
            torch.floor_divide(a, b), torch.remainder(a, b), torch.fmod(a, b), a % 3, a // 2)


def c_int32_arith(a, b):
    return a + 2, a * b, a - b, a * 1.5, a + b.long(), torch.neg(a), torch.abs(a), a.sum()


def c_binary_math(x, y):
    return torch.atan2(x, y), torch.maximum(x, y), torch.minimum(x, y), torch.pow(x.abs() + 0.5, y), torch.hypot(x, y)


def c_max_min_nan(x, y):
    return torch.maximum(x, y), torch.minimum(x, y), torch.max(x, y), torch.min(x, y)


def c_compare(x, y):
    return x == y, x != y, x < y, x <= y, x > y, x >= 0.0, x.eq(1.0), torch.isnan(x), torch.isinf(x), torch.isfinite(x)


def c_logical_bool(a, b):
    return (torch.logical_and(a, b), torch.logical_or(a, b), torch.logical_xor(a, b), torch.logical_not(a),
            a & b, a | b, a ^ b, ~a)


def c_bitwise_int(a, b):
    return a & b, a | b, a ^ b, ~a, a << 2, b >> 1, torch.bitwise_and(a, 6), a > b


def c_type_promotion(x, d, i, b, h):
    return x + d, x * i, i + 1.5, i * 2, b + i, b + b, h + x, i + d, x + 2.5, i / 2


def c_scalar_args(x, a: int, b: float, flag: bool):
    y = x * a + b
    if flag:
        y = y.relu()
    return y, y.sum() * b


def c_where(c, x, y):
    return torch.where(c, x, y), torch.where(c, x, 0.0), torch.where(x > 0.0, x, y * 2.0)


def c_ternary(x, y, w, t1, t2):
    return (torch.lerp(x, y, 0.3), torch.lerp(x, y, w), torch.addcmul(x, t1, t2, value=0.5),
            torch.addcdiv(x, t1, t2, value=-2.0))


def c_masked_fill(x, mask):
    return x.masked_fill(mask, float("-inf")), x.masked_fill(mask, 2.5), x.masked_fill(~mask, torch.tensor(0.0))


def c_conversions(x):
    return x.to(torch.float64), x.long(), x.int(), x.half(), x.to(torch.bool), x.to(torch.int32), x.double().float()


def c_int_to_float(i, x):
    return i.float(), i.double(), i.to(torch.bool), i.type_as(x), x.type_as(i), i.half()


def c_sum_mean(x):
    return (x.sum(), x.sum(1), x.sum([0, 2], keepdim=True), x.mean(-1), x.mean([0, 1]),
            x.sum(dtype=torch.float64), x.mean(1, True), torch.sum(x, -2))


def c_prod_amax(x):
    return x.prod(1), x.amax(dim=[0, 2]), x.amin(1, keepdim=True), x.amax(-1), x.prod()


def c_max_min_dim(x):
    v, i = torch.max(x, 1)
    v2, i2 = torch.min(x, 0, keepdim=True)
    return v, i, v2, i2, torch.argmax(x), torch.argmax(x, 1), torch.argmin(x, 0, keepdim=True), x.max(), x.min()


def c_var_std(x):
    return (x.var(1), x.var(1, unbiased=False), x.std([0, 1]), torch.var(x, dim=[1], correction=0),
            torch.std(x, dim=[0], correction=2, keepdim=True), x.var(), x.std(-1, keepdim=True))


def c_logsumexp_cumsum(x):
    return torch.logsumexp(x, [1]), torch.logsumexp(x, 0, keepdim=True), x.cumsum(1), torch.cumsum(x, 0, dtype=torch.float64)


def c_bool_reductions(b):
    return b.all(), b.any(), b.all(1), b.any(0), b.sum(), b.sum(1), b.long().cumsum(1)


def c_int_reductions(i, j):
    return i.sum(), i.sum(0), j.sum(1), i.max(), i.amax(1), i.prod(1), torch.argmax(j, 1), i.min(1)[0], j.cumsum(0)


def c_reductions_nan(x):
    return x.sum(1), x.amax(1), x.amin(0), torch.max(x, 1)[0], torch.argmax(x, 1), x.mean(0)


def c_softmax(x):
    return torch.softmax(x, -1), torch.log_softmax(x, 1), torch.softmax(x, 0)


def c_softmax_masked_f64(x, mask):
    s = x.masked_fill(mask, float("-inf"))
    return torch.softmax(s, -1), torch.log_softmax(s, -1)


def c_softmax_dtype(x):
    return torch.softmax(x, 1, dtype=torch.float64), F.log_softmax(x, dim=0)


def c_layer_norm(x, w, b):
    return F.layer_norm(x, [5], w, b, 1e-5), F.layer_norm(x, [4, 5], None, None, 1e-3)


def c_batch_norm_eval(x, running_mean, running_var, w, b):
    return F.batch_norm(x, running_mean, running_var, w, b, False, 0.1, 1e-5)


def c_dropout_eval(x):
    return F.dropout(x, 0.5, False), torch.dropout(x, 0.2, False) * 2.0


def c_mm_bmm(a, b, p, q):
    return torch.mm(a, b), torch.bmm(p, q), a @ b


def c_matmul_cases(v3, v3b, m35, m53, b235, b4135, b153):
    return (torch.matmul(v3, v3b), torch.matmul(m53, v3), torch.matmul(v3, m35),
            torch.matmul(b235, m53), torch.matmul(b4135, b153), torch.matmul(v3, b235.transpose(1, 2).transpose(1, 2)),
            torch.matmul(b235, torch.matmul(m53, v3b)))


def c_addmm_linear(bias, a, b, x, w, lb):
    return (torch.addmm(bias, a, b), torch.addmm(bias, a, b, beta=0.5, alpha=2.0),
            F.linear(x, w, lb), F.linear(x, w))


def c_matmul_f64(a, b):
    return a @ b, torch.mm(a, b.t().contiguous().t())


def c_view_reshape(x):
    return (x.view(-1), x.reshape(3, -1), x.flatten(), x.flatten(1), x.unsqueeze(0), x.view(3, 1, 4, 5).squeeze(),
            x.view(3, 1, 20).squeeze(1), x.unsqueeze(-1), x[None])


def c_transpose_permute(x, m):
    return x.transpose(0, 2), x.permute(2, 0, 1), m.t(), x.transpose(1, 2).contiguous(), x.clone(), m.t() * 2.0


def c_expand(x, y):
    a = x.expand(4, 3, 5)
    b = y.expand_as(a)
    c = x.expand(-1, -1, 5)
    return a * b, c + 1.0, (a + b).sum(0)


def c_chunk_split(x):
    a, b, c = x.chunk(3, 1)
    d, e, f = x.split(2, 1)
    g, h, k = x.split([1, 2, 3], dim=1)
    u, v, w = x.unbind(0)
    return a, b, c, d, e, f, g, h, k, u, v, w


def c_cat_stack(x, y, z):
    return torch.cat([x, y], 0), torch.cat([x, z], -1), torch.stack([x, y], 1), torch.stack([x, y, x]), torch.cat([x])


def c_slicing(x, idx):
    return (x[1:3], x[:, ::2], x[..., -1], x[:, 1], x.select(0, -1), x.narrow(1, 1, 2), torch.index_select(x, 1, idx),
            x[-2:, 1:-1], x[::2, ::3] * 2.0)


def c_size_numel_dim(x):
    s = x.size()
    return x.size(0) * x.dim() + x.numel(), len(s), s[-1], x.size(-2), x.shape[1] + 1


def c_noncontig_input(x, y):
    return x * 2.0 + y, x.sum(0), x.t() @ y, torch.exp(x), x.contiguous()


def c_self_views(x, y):
    a = x.t() + y
    b = x[:, ::2].exp()
    c = x[0].expand(3, 5) * y.t()
    d = x.t().contiguous().view(-1)
    return a, b, c, d, (x.t() * y).sum(1)


def c_creation(x, n: int):
    return (torch.zeros([2, 3]), torch.ones(3, dtype=torch.int64), torch.full([2, 2], 1.5), torch.zeros_like(x),
            torch.ones_like(x, dtype=torch.float64), torch.full_like(x, 7), torch.arange(5), torch.arange(1, 4, 0.5),
            torch.arange(0, n), torch.full([n], 1, dtype=torch.bool), torch.arange(n, dtype=torch.float32) + x[0, 0])


def c_scalar_int_float(a: int, b: float):
    return a // 2, a % 3, a * b, float(a) / 3, int(b), a > 2, b ** 2, max(a, 3), -a, a / 2, min(b, 0.5), a - 7 // 2


def c_scalar_negative_int(a: int, b: int):
    return a // b, a % b, a * b - 1, a < b, a ** 2, abs(a)


def c_if_else(x, flag: bool):
    if flag:
        y = x * 2.0
    else:
        y = x - 1.0
    return y.relu()


def c_if_tensor_cond(x):
    if bool(x.sum() > 0):
        y = torch.tanh(x)
    else:
        y = torch.sigmoid(x)
    return y, x.sum() > 0


def c_loop_carried(x, n: int):
    acc = torch.zeros_like(x)
    for i in range(n):
        acc = acc + x * i
        x = x * 0.5
    return acc, x


def c_nested_if_in_loop(x, n: int):
    y = x
    k = 0
    for i in range(n):
        if i % 2 == 0:
            y = y + 1.0
        else:
            if i > 2:
                y = y * 0.5
            else:
                y = y - x
        k += i
    return y, k


def c_while_loop(x, limit: float):
    i = 0
    while bool(x.abs().sum() < limit) and i < 100:
        x = x * 2.0
        i += 1
    return x, i


def c_list_tuple(x, y):
    t = (x, y)
    a, b = t
    shape = [a.size(0), -1]
    flat = a.reshape(shape)
    parts = [flat, b.reshape(shape)]
    c = torch.cat(parts, 1)
    return c, (a - b, (a * b, len(parts)))


def c_list_int_shapes(x):
    sizes = x.size()
    n = sizes[0]
    rest = 1
    for s in sizes[1:]:
        rest = rest * s
    dims: List[int] = []
    for d in range(x.dim()):
        dims.append(x.dim() - 1 - d)
    return x.view([n, rest]), x.permute(dims), rest


def c_optional_none(x, bias: Optional[Tensor]):
    if bias is None:
        return x * 2.0
    return x + bias


def c_optional_tensor(x, bias: Optional[Tensor]):
    if bias is None:
        return x * 2.0
    return x + bias


def c_raise_check(x):
    if x.dim() != 2:
        raise ValueError("expected a 2-D input")
    return x.sum(1) * 2.0


def c_lstm_cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
    return lstm_cell(x, hx, cx, w_ih, w_hh, b_ih, b_hh)


def c_gelu_tanh(x):
    return gelu_tanh(x)


def c_bias_gelu(x, bias):
    return bias_gelu(x, bias)


def c_layer_norm_manual(x, weight, bias, eps: float):
    return layer_norm_manual(x, weight, bias, eps)


def c_softmax_manual(x, dim: int):
    return softmax_manual(x, dim)


def c_mlp(x, w1, b1, w2, b2):
    return mlp(x, w1, b1, w2, b2)


def c_attention(q, k, v, mask):
    return attention(q, k, v, mask)


def c_ratio_iou(x1, y1, w1, h1, x2, y2, w2, h2):
    return ratio_iou(x1, y1, w1, h1, x2, y2, w2, h2)


# ---------------------------------------------------------------------------
# Traced functions (trace sees through Python; example inputs in gen_corpus.py)
# ---------------------------------------------------------------------------

def t_pointwise(x, y):
    return torch.tanh(x * y + 1.0).sigmoid() * x


def t_reductions(x):
    return x.sum(1), x.mean((0, 2), keepdim=True), x.amax(-1), torch.max(x, 1)[1]


def t_view_ops(x):
    a, b = x.chunk(2, 1)
    n = x.size(0)
    return a.reshape(n, -1), b.permute(2, 0, 1), x[:, 1:, ::2], x.transpose(0, 1)


def t_tensor_const(x):
    return x * torch.tensor([1.0, 2.0, 3.0]) + torch.tensor(0.5)


def t_int_ops(i, j):
    return (i * j + 3) // 2, i % 4, (i > j).int(), i.sum()


def t_noncontig(x):
    return torch.relu(x) + x.t().t()


def t_half(x):
    return torch.abs(x) * x + 1


def t_bool_mask(x, m):
    return x.masked_fill(m, 0.0), torch.where(m, x, -x)


def t_creation(x):
    return torch.zeros_like(x) + torch.arange(x.size(1)), torch.ones(2, 3, dtype=torch.float64)


# ---------------------------------------------------------------------------
# Hold-out finds: small model pieces whose ops were missing from the op table
# when they were first run (gather, advanced indexing, index_put, in-place
# ops, norms, losses, sorting, padding, scalar math.*). Conformance cases.
# ---------------------------------------------------------------------------

def c_ce_gather(logits, target):
    logp = F.log_softmax(logits, dim=-1)
    nll = -logp.gather(1, target.unsqueeze(1)).squeeze(1)
    return nll.mean()


def c_cross_entropy_ls(logits, target, weight):
    return F.cross_entropy(logits, target, label_smoothing=0.1), F.cross_entropy(logits, target, weight, ignore_index=2)


def c_focal_loss(logits, targets, alpha: float = 0.25, gamma: float = 2.0):
    p = torch.sigmoid(logits)
    ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce * ((1 - p_t) ** gamma)
    a_t = alpha * targets + (1 - alpha) * (1 - targets)
    return (a_t * loss).mean()


def c_advanced_index(x, idx, mask):
    return x[idx], x[:, idx], x[idx, idx], x[mask], x[None, idx, 1:]


def c_diou_elementwise(b1, b2, eps: float = 1e-7):
    x1, y1, x2, y2 = b1.unbind(-1)
    x1g, y1g, x2g, y2g = b2.unbind(-1)
    xk1 = torch.max(x1, x1g)
    yk1 = torch.max(y1, y1g)
    xk2 = torch.min(x2, x2g)
    yk2 = torch.min(y2, y2g)
    inter = torch.zeros_like(x1)
    m = (yk2 > yk1) & (xk2 > xk1)
    inter[m] = ((xk2 - xk1) * (yk2 - yk1))[m]
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - inter + eps
    iou = inter / union
    diag = (torch.max(x2, x2g) - torch.min(x1, x1g)) ** 2 + (torch.max(y2, y2g) - torch.min(y1, y1g)) ** 2 + eps
    cent = (((x1 + x2) - (x1g + x2g)) ** 2 + ((y1 + y2) - (y1g + y2g)) ** 2) / 4
    return 1 - iou + cent / diag


def c_index_put(x, idx, v):
    y = x.clone()
    y[idx] = v
    z = x.clone()
    z[idx, 0] += 1.0
    return y, z


def c_attention_triu(q, k, v):
    t = q.size(-2)
    mask = torch.ones(t, t).triu(1).to(torch.bool)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.size(-1))
    s = s.masked_fill(mask, -1e9)
    return F.softmax(s, -1) @ v, torch.tril(s, -1)


def c_clamp_inplace(x):
    y = x * 2
    y.clamp_(-1.0, 1.0)
    y.mul_(3.0).add_(1.0)
    w = x.clone()
    w[:, 0].zero_()
    return y, w


def c_adam_step(p, g, m, v, step: int, lr: float):
    beta1 = 0.9
    beta2 = 0.999
    m = m.mul(beta1).add(g, alpha=1 - beta1)
    v = v.mul(beta2).addcmul(g, g, value=1 - beta2)
    bc1 = 1 - beta1 ** step
    bc2 = 1 - beta2 ** step
    denom = (v.sqrt() / math.sqrt(bc2)).add_(1e-8)
    p = p.addcdiv(m, denom, value=-lr / bc1)
    return p, m, v


def c_l2_normalize(x):
    return F.normalize(x, p=2.0, dim=-1), F.normalize(x, p=1.0, dim=0)


def c_norms(x):
    a = x.norm(2.0, -1)
    b = torch.norm(x, 1.0, 1, True)
    c = torch.linalg.vector_norm(x, 2.0, [-1])
    d = x.norm()
    e = torch.norm(x, dim=1)
    return a, b, c, d, e


def c_group_norm(x, w, b):
    return F.group_norm(x, 2, w, b, 1e-5)


def c_losses(x, y):
    return F.mse_loss(x, y), F.smooth_l1_loss(x, y, beta=0.5), F.huber_loss(x, y, delta=0.7), F.l1_loss(x, y)


def c_topk_sort(x):
    v, i = x.topk(3, dim=-1)
    s, si = torch.sort(x, dim=1, descending=True)
    a = torch.argsort(x, dim=-1)
    return v, i, s, si, a


def c_repeat_flip_roll(x):
    return x.repeat(2, 3), x.flip(-1), torch.roll(x, 1, 1), x.repeat_interleave(2, dim=0), x.cumprod(1)


def c_pad(x):
    return F.pad(x, (1, 2)), F.pad(x, (1, 1, 2, 0), value=-1.0), F.pad(x, (2, 1), mode="reflect")


def c_scalar_math(x, a: int, b: float):
    c = a * 2 + 1
    d = b / c
    e = math.sqrt(float(c)) + math.exp(-d)
    f = max(a, 3) + min(b, 0.5)
    g = a // 3 + a % 3
    return x * e + f + g, int(e), round(d * 1000.0) / 1000.0, round(2.5), math.log(b, 2.0)


def c_label_smoothing_onehot(logits, target, eps: float):
    n = logits.size(-1)
    logp = torch.log_softmax(logits, dim=-1)
    onehot = F.one_hot(target, n).float()
    soft = onehot * (1.0 - eps) + eps / n
    return -(soft * logp).sum(-1).mean()


def c_embedding_einsum(idx, table, q, k):
    e = F.embedding(idx, table)
    return e, torch.einsum("bhqd,bhkd->bhqk", q, k), torch.baddbmm(e[:, :, :3], e, e.transpose(1, 2), beta=0.5)


def c_moved_views(x, y):
    # movedim/moveaxis/swapaxes/unflatten/diagonal views between pointwise work (fusers fuse around them)
    a = torch.movedim(x * 2.0, 0, -1).sigmoid()
    b = torch.moveaxis(x, [1, 2], [0, 1]) + 1.0
    c = (y.swapaxes(0, 1) - 0.5).unflatten(1, (2, -1)) * 3.0
    d = torch.diagonal(y.unflatten(1, (2, 3)), 1, 0, 2).exp() + y.swapdims(0, 1)[:2, :1]
    return a, b, c, d


def c_meshgrid_grids(a, b, c):
    # grids of computed ranges, both indexings, with gradients flowing back to a, b and c
    gx, gy = torch.meshgrid(a * 2.0, b + 1.0, indexing="xy")
    u, v, w = torch.meshgrid([a, b.sin(), c], indexing="ij")
    return gx * gy + gx.sin(), u + v * w


# tensorexpr (issue 14): the reductions, norms and shape-only ops NNC fuses, each next to pointwise work

def c_te_reductions(x):
    a = (x * 2.0).prod(1) + 1.0
    v = torch.max(x.abs() + 1.0, 1)[0] * 2.0
    m = torch.min(x * x, 0, keepdim=True)[0] - 1.0
    s = x.var(1, unbiased=False) + 1.0
    d = torch.std(x, dim=[0], correction=2, keepdim=True) * x
    return a, v, m, s, d


def c_te_rms_norm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def c_te_shape_ops(x, y, z):
    a = torch.tanh(x.t() * 2.0 + y)
    b = x.permute(1, 0).unsqueeze(0) * 3.0 - 1.0
    c = (z.unsqueeze(1).expand(4, 3) + y).unsqueeze(2).squeeze(2) * 2.0
    d = x.transpose(0, 1).exp() * z.unsqueeze(-1)
    return a, b, c, d


def c_te_cat_chunk(x, y):
    a, b, c = (x * 2.0).chunk(3, 1)
    d = torch.cat([a.sigmoid(), b * c, y], 1) + 1.0
    e, f = torch.chunk(y + 1.0, 2, 0)
    return d, torch.cat([e.exp(), f], 0) * 2.0, torch.cat([x.t(), y.t()], 0).tanh()


def c_te_views(x, y, z):
    a = (x * 2.0).view(3, 2, 4).sum(1) + 1.0
    b = (x.reshape(-1) + 1.0).exp()
    c = (x.t().reshape(24) * 3.0).sin()
    d = torch.flatten(x.unsqueeze(0) * y, 1) - 1.0
    return a, b, c, d, (z.reshape(-1) * 2.0).cos()


def c_te_max_dim_nan(x):
    v, i = torch.max(x * 2.0, 1)
    w, j = torch.min(x, 0, keepdim=True)
    return v, i, w + 1.0, j


def c_te_type_as(x, i):
    return (x * 3.0).type_as(i) + i, ((i + 1).type_as(x) * x).exp()


def c_fuzz_narrow_rounding(x, i):
    # fusebox fuzz, seed 500043 on nvfuser_like (issue 21), minimized to log -> cos -> mul_ on bfloat16:
    # every op rounds its result to the op's dtype (bfloat16, float16) or wraps it (int32)
    b = torch.cos(torch.log(x.to(torch.bfloat16)))
    b.mul_(100.0)
    h = (x.half() + 1000.0) - 1000.0
    g = (x.to(torch.bfloat16) + 100.0) - 100.0
    j = (i + 2147483647) > 0
    return b.float(), h.float(), g.float(), j


def c_rows(x, w, b):
    # rows of 32 (divisible by 8: nvfuser_like's lanes on a CPU device)
    return (torch.softmax(x, -1), torch.log_softmax(x, -1), F.layer_norm(x, [32], w, b, 1e-5), x.sum(-1),
            x.amax(-1), torch.softmax(x, 0))


def c_chunks(x, b):
    # 3000 elements (a CPU device's pointwise kernels take 1024-element chunks, the last one shorter),
    # and a broadcast bias over rows of 1000 (a row per work-item)
    return torch.tanh(x) * 2.0 + torch.sigmoid(x), F.gelu(x + b, approximate="tanh")
