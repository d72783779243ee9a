#!/usr/bin/python3
"""Golden data for tests/unit/test_ops_reduce.c and test_ops_linalg.c.

Runs each case through PyTorch (Debian's python3-torch, 1.13) by exact
overload (torch.ops.aten.<name>.<overload>) and writes
tests/data/reduce/cases.txt plus small .npy files (inputs deduplicated by
content). Run from anywhere:  /usr/bin/python3 tests/unit/gen_reduce_golden.py

cases.txt, one case per line, space-separated:
  <name> <aten::op> <args...> -> <results...>
args:    T:<file>[:t][:e<AxB..>][:c<dtype code>]  tensor (t: transpose the
         last two dims, e: expand to that shape, c: convert to that dtype;
         applied in that order)
         i:<int>  f:<float>  b:0|1  N (None)  L:<i,j,..> (int list, L: empty)
         s:<text> (a string without spaces)
         B:<0|1,..> (bool list)
results: O:<file>:<dtype code>  expected tensor (bfloat16 results are stored
         as float32 and compared after conversion); O:N  expected None
         tol:<rtol>,<atol>
         E:<substring of the expected message> (the rest of the line;
         PyTorch must raise too)
"""
import hashlib
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "reduce")
CODES = {torch.uint8: 0, torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4, torch.float16: 5,
         torch.float32: 6, torch.float64: 7, torch.bool: 11, torch.bfloat16: 15}
BY_CODE = {v: k for k, v in CODES.items()}

lines = []
written = set()
g = torch.Generator().manual_seed(1234)


def save(arr):
    arr = np.array(arr, order="C")  # ascontiguousarray would make 0-d 1-d
    h = hashlib.sha1(arr.dtype.str.encode() + str(arr.shape).encode() + arr.tobytes()).hexdigest()[:12]
    name = h + ".npy"
    if name not in written:
        np.save(os.path.join(OUT, name), arr)
        written.add(name)
    return name


class T:
    """A tensor argument: stored data plus the view/cast the test applies."""

    def __init__(self, data, t=False, e=None, c=None):
        self.data, self.t, self.e, self.c = data, t, e, c

    def torch(self):
        x = self.data
        if self.t:
            x = x.transpose(-1, -2)
        if self.e is not None:
            x = x.expand(*self.e)
        if self.c is not None:
            x = x.to(self.c)
        return x

    def token(self):
        tok = "T:" + save(self.data.numpy())
        if self.t:
            tok += ":t"
        if self.e is not None:
            tok += ":e" + "x".join(str(s) for s in self.e)
        if self.c is not None:
            tok += ":c%d" % CODES[self.c]
        return tok


def arg_token(a):
    if isinstance(a, T):
        return a.token()
    if a is None:
        return "N"
    if isinstance(a, str):
        assert a and " " not in a
        return "s:" + a
    if isinstance(a, bool):
        return "b:%d" % a
    if isinstance(a, int):
        return "i:%d" % a
    if isinstance(a, float):
        return "f:%r" % a
    if isinstance(a, torch.dtype):
        return "i:%d" % CODES[a]
    if isinstance(a, (list, tuple)) and a and all(isinstance(v, bool) for v in a):
        return "B:" + ",".join(str(int(v)) for v in a)
    if isinstance(a, (list, tuple)):
        return "L:" + ",".join(str(v) for v in a)
    raise TypeError(a)


def torch_arg(a):
    return a.torch() if isinstance(a, T) else a


def call(fn, targs):
    """Positional values as TorchScript passes them; keyword-only ones by name."""
    pos, kw = [], {}
    for a, v in zip(fn._schema.arguments, targs):
        if a.kwarg_only:
            kw[a.name] = v
        else:
            pos.append(v)
    return fn(*pos, **kw)


def tol_for(dt):
    return {torch.float16: (2e-3, 2e-3), torch.bfloat16: (2e-2, 2e-2), torch.float32: (1e-5, 1e-6),
            torch.float64: (1e-12, 1e-12)}.get(dt, (0, 0))


def case(name, op, *args, via32=False, tol=None):
    """op: 'sum.dim_IntList'. via32: PyTorch's CPU lacks a float16 kernel, so
    the expected value is computed from float32 copies and rounded back."""
    base, _, ov = op.partition(".")
    fn = getattr(getattr(torch.ops.aten, base), ov or "default")
    targs = [torch_arg(a) for a in args]
    if via32:
        targs = [x.float() if isinstance(x, torch.Tensor) and x.dtype in (torch.float16, torch.bfloat16) else x
                 for x in targs]
    res = call(fn, targs)
    if not isinstance(res, (tuple, list)):
        res = (res,)
    toks = [name, "aten::" + base] + [arg_token(a) for a in args] + ["->"]
    worst = (0, 0)
    for r in res:
        if r is None:  # an undefined result (a masked-off gradient)
            toks.append("O:N")
            continue
        dt = r.dtype
        if via32 and r.dtype == torch.float32:
            src = [a.torch().dtype for a in args if isinstance(a, T)]
            dt = src[0]
            r = r.to(dt)
        store = r.float() if dt == torch.bfloat16 else r
        toks.append("O:%s:%d" % (save(store.contiguous().numpy()), CODES[dt]))
        t = tol_for(dt)
        worst = (max(worst[0], t[0]), max(worst[1], t[1]))
    if tol is not None:
        worst = tol
    toks.append("tol:%g,%g" % worst)
    lines.append(" ".join(toks))


def case_as(name, kind, args, res, tol):
    """A row PyTorch has no op for (fusebox::...): `res`, PyTorch's results
    computed another way, are the expected outputs of `kind` on `args`."""
    toks = [name, kind] + [arg_token(a) for a in args] + ["->"]
    for r in res:
        toks.append("O:N" if r is None else "O:%s:%d" % (save(r.contiguous().numpy()), CODES[r.dtype]))
    toks.append("tol:%g,%g" % tol)
    lines.append(" ".join(toks))


def ln_backward_cases():
    """native_layer_norm_backward with native_layer_norm's mean and rstd,
    and fusebox::layer_norm_backward (statistics from the input) against
    the same PyTorch results. Last in the file: new random draws here do
    not move the earlier cases' data."""
    nlb = torch.ops.aten.native_layer_norm_backward.default
    shapes = [("ln_bwd_last", (3, 4, 7), [7], torch.float32), ("ln_bwd_two", (3, 4, 7), [4, 7], torch.float32),
              ("ln_bwd_wide", (6, 1030), [1030], torch.float32), ("ln_bwd_f64", (5, 9), [9], torch.float64)]
    for name, shape, ns, dt in shapes:
        x, gy = randn(*shape).to(dt) * 3 + 1, randn(*shape).to(dt)
        w, b = randn(*ns).to(dt), randn(*ns).to(dt)
        _, mean, rstd = torch.ops.aten.native_layer_norm(x, ns, w, b, 1e-5)
        tol = tol_for(dt)
        case(name, "native_layer_norm_backward.default", T(gy), T(x), ns, T(mean), T(rstd), T(w), T(b),
             [True, True, True], tol=tol)
        res = nlb(gy, x, ns, mean, rstd, w, b, [True, True, True])
        case_as("fbx_" + name, "fusebox::layer_norm_backward", [T(gy), T(x), ns, T(w), T(b), 1e-5], res, tol)
    # no affine parameters: only the input's gradient
    x, gy = randn(4, 5) * 2, randn(4, 5)
    _, mean, rstd = torch.ops.aten.native_layer_norm(x, [5], None, None, 1e-3)
    case("ln_bwd_noaffine", "native_layer_norm_backward.default", T(gy), T(x), [5], T(mean), T(rstd), None, None,
         [True, False, False])
    dx = nlb(gy, x, [5], mean, rstd, None, None, [True, False, False])[0]
    case_as("fbx_ln_bwd_noaffine", "fusebox::layer_norm_backward", [T(gy), T(x), [5], None, None, 1e-3], [dx, None, None],
            tol_for(torch.float32))


def addend_cases():
    """addmm's self and linear's bias broadcast into the GEMM's C (k_linalg.c)."""
    m1, m2 = T(randn(4, 3)), T(randn(3, 5))
    case("addmm_self_row", "addmm.default", T(randn(5)), m1, m2, 0.5, 2.0)
    case("addmm_self_col", "addmm.default", T(randn(4, 1)), m1, m2, 1, 1)
    case("addmm_self_T", "addmm.default", T(randn(5, 4), t=True), m1, m2, 1.5, 1)
    bn = randn(5)
    bn[2] = float("nan")
    case("linear_bias_nan", "linear.default", T(randn(2, 3, 4)), T(randn(5, 4)), T(bn))
    case("linear_f64_bias", "linear.default", T(randn(3, 4).double()), T(randn(5, 4).double()), T(randn(5).double()))


def conv_backward_cases():
    """fusebox::conv_backward (the gradients of conv1d/conv2d, k_conv.c)
    against PyTorch's aten::convolution_backward. Last in the file."""
    cb = torch.ops.aten.convolution_backward.default
    specs = [  # name, x shape, w shape, bias?, stride, padding, dilation, groups, dtype
        ("cbwd_basic", (2, 3, 7, 6), (4, 3, 3, 3), True, [1, 1], [0, 0], [1, 1], 1, torch.float32),
        ("cbwd_stride_pad", (2, 3, 7, 6), (4, 3, 3, 3), True, [2, 1], [1, 2], [1, 1], 1, torch.float32),
        ("cbwd_dilation_nobias", (1, 3, 9, 8), (4, 3, 3, 3), False, [1, 1], [2, 2], [2, 3], 1, torch.float32),
        ("cbwd_groups", (2, 4, 6, 5), (6, 2, 3, 2), True, [1, 2], [1, 0], [1, 1], 2, torch.float32),
        ("cbwd_depthwise", (1, 3, 5, 5), (3, 1, 3, 3), False, [1, 1], [1, 1], [1, 1], 3, torch.float32),
        ("cbwd_f64", (1, 2, 5, 4), (3, 2, 2, 2), True, [1, 1], [1, 1], [1, 1], 1, torch.float64),
        ("cbwd_1d", (2, 3, 10), (4, 3, 3), True, [2], [1], [1], 1, torch.float32),
        ("cbwd_1d_groups_dilation", (1, 6, 12), (3, 2, 3), False, [1], [2], [2], 3, torch.float32),
    ]
    for name, xs, ws, has_b, st, pad, dil, grp, dt in specs:
        x, w = randn(*xs).to(dt), randn(*ws).to(dt)
        b = randn(ws[0]).to(dt) if has_b else None
        fn = torch.nn.functional.conv2d if len(ws) == 4 else torch.nn.functional.conv1d
        y = fn(x, w, b, st, pad, dil, grp)
        gy = randn(*y.shape).to(dt)
        gi, gw, gb = cb(gy, x, w, [ws[0]] if has_b else None, st, pad, dil, False, [0] * len(st), grp,
                        [True, True, has_b])
        case_as(name, "fusebox::conv_backward", [T(gy), T(x), T(w), T(b) if has_b else None, st, pad, dil, grp],
                [gi, gw, gb if has_b else None], tol_for(dt))
    # unbatched: the gradients of the batched call, the batch dim dropped
    x, w, b = randn(3, 7, 6), randn(4, 3, 3, 3), randn(4)
    gy = randn(4, 7, 6)
    gi, gw, gb = cb(gy[None], x[None], w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])
    case_as("cbwd_unbatched", "fusebox::conv_backward", [T(gy), T(x), T(w), T(b), [1, 1], [1, 1], [1, 1], 1],
            [gi[0], gw, gb], tol_for(torch.float32))


def conv_more_cases():
    """conv3d, the transposed convolutions, aten::convolution/_convolution
    and their gradients (fusebox::conv_backward in 3-D,
    fusebox::convolution_backward of either kind) against PyTorch's
    forward ops and aten::convolution_backward. Last in the file."""
    def fcase(name, op, *args):
        """float32 outputs are sums of a few dozen products that PyTorch's
        own float32 kernels get up to 2e-6 off: atol 1e-5 (float64: the default)."""
        f64 = any(isinstance(a, T) and a.data.dtype == torch.float64 for a in args)
        case(name, op, *args, tol=None if f64 else (1e-5, 1e-5))

    ct1 = "conv_transpose1d.default"
    ct2 = "conv_transpose2d.input"
    ct3 = "conv_transpose3d.input"
    x3, w3, b3 = T(randn(2, 3, 5, 6, 4)), T(randn(4, 3, 3, 2, 2)), T(randn(4))
    fcase("conv3d_basic", "conv3d.default", x3, w3, b3, [1, 1, 1], [0, 0, 0], [1, 1, 1], 1)
    fcase("conv3d_stride_pad_dil", "conv3d.default", x3, w3, None, [2, 1, 2], [1, 2, 0], [1, 2, 1], 1)
    fcase("conv3d_int_args", "conv3d.default", x3, w3, b3, 2, 1, 1, 1)
    fcase("conv3d_groups", "conv3d.default", T(randn(1, 4, 4, 5, 3)), T(randn(6, 2, 2, 3, 1)), T(randn(6)),
         [1, 1, 1], [1, 0, 1], [1, 1, 1], 2)
    fcase("conv3d_1x1x1", "conv3d.default", T(randn(2, 5, 3, 4, 2)), T(randn(3, 5, 1, 1, 1)), T(randn(3)),
         [1, 1, 1], [0, 0, 0], [1, 1, 1], 1)
    fcase("conv3d_unbatched", "conv3d.default", T(randn(3, 4, 5, 4)), w3, b3, [1, 1, 1], [1, 1, 1], [1, 1, 1], 1)
    fcase("conv3d_f64", "conv3d.default", T(randn(1, 2, 4, 3, 5).double()), T(randn(3, 2, 2, 2, 3).double()),
         T(randn(3).double()), [1, 2, 1], [1, 0, 1], [1, 1, 1], 1)
    fcase("conv3d_T_input", "conv3d.default", T(randn(2, 3, 5, 4, 6), t=True), w3, b3, [1, 1, 1], [0, 0, 0],
         [1, 1, 1], 1)
    fcase("conv3d_empty_batch", "conv3d.default", T(torch.zeros(0, 3, 5, 6, 4)), w3, b3, [1, 1, 1], [0, 0, 0],
         [1, 1, 1], 1)
    fcase("conv3d_shifted_size", "conv3d.default", T(randn(1, 16, 3, 6, 5)), T(randn(5, 16, 1, 3, 3)), None,
         [1, 1, 1], [0, 1, 1], [1, 1, 1], 1)
    xt, wt, bt = T(randn(2, 4, 5, 6)), T(randn(4, 3, 3, 3)), T(randn(3))
    fcase("convt2d_basic", ct2, xt, wt, bt, [1, 1], [0, 0], [0, 0], 1, [1, 1])
    fcase("convt2d_dcgan", ct2, xt, T(randn(4, 3, 4, 4)), None, [2, 2], [1, 1], [0, 0], 1, [1, 1])
    fcase("convt2d_stride_outpad", ct2, xt, wt, bt, [2, 3], [1, 0], [1, 2], 1, [1, 1])
    fcase("convt2d_groups", ct2, xt, T(randn(4, 2, 3, 2)), T(randn(4)), [2, 1], [0, 1], [1, 0], 2, [1, 1])
    fcase("convt2d_dilation", ct2, xt, wt, bt, [1, 1], [1, 2], [0, 0], 1, [2, 3])
    fcase("convt2d_outpad_over_stride", ct2, xt, wt, bt, [1, 2], [1, 1], [1, 2], 1, [2, 3])
    fcase("convt2d_int_args", ct2, xt, wt, None, 2, 1, 1, 1, 1)
    fcase("convt2d_unbatched", ct2, T(randn(4, 3, 5)), wt, bt, [2, 2], [0, 1], [1, 0], 1, [1, 1])
    fcase("convt2d_f64", ct2, T(randn(1, 2, 4, 3).double()), T(randn(2, 3, 2, 3).double()), T(randn(3).double()),
         [2, 1], [1, 1], [1, 0], 1, [1, 1])
    fcase("convt2d_T_input", ct2, T(randn(2, 4, 6, 5), t=True), wt, bt, [1, 2], [0, 0], [0, 1], 1, [1, 1])
    fcase("convt2d_by_fwd_big", ct2, T(randn(2, 16, 7, 9)), T(randn(16, 20, 3, 3)), T(randn(20)), [1, 1], [1, 1],
         [0, 0], 1, [1, 1])
    fcase("convt2d_empty_batch", ct2, T(torch.zeros(0, 4, 5, 6)), wt, bt, [1, 1], [0, 0], [0, 0], 1, [1, 1])
    fcase("convt1d_basic", ct1, T(randn(2, 4, 7)), T(randn(4, 3, 3)), T(randn(3)), [1], [0], [0], 1, [1])
    fcase("convt1d_decoder", ct1, T(randn(2, 4, 7)), T(randn(4, 3, 3)), T(randn(6)), [2], [1], [1], 2, [1])
    fcase("convt1d_dilation_int_args", ct1, T(randn(1, 2, 6)), T(randn(2, 5, 2)), None, 3, 2, 1, 1, 2)
    fcase("convt1d_unbatched", ct1, T(randn(2, 6)), T(randn(2, 5, 2)), T(randn(5)), [2], [0], [1], 1, [1])
    fcase("convt3d_basic", ct3, T(randn(1, 2, 3, 4, 3)), T(randn(2, 3, 2, 3, 2)), T(randn(3)), [2, 1, 2],
         [0, 1, 1], [1, 0, 1], 1, [1, 1, 1])
    fcase("convt3d_groups_dilation", ct3, T(randn(2, 4, 3, 3, 2)), T(randn(4, 1, 2, 2, 3)), None, [1, 1, 1],
         [0, 1, 1], [0, 0, 0], 2, [2, 1, 1])
    fcase("convolution_conv2d", "convolution.default", xc4 := T(randn(2, 3, 6, 5)), T(randn(4, 3, 3, 2)),
         T(randn(4)), [2, 1], [1, 0], [1, 1], False, [0, 0], 1)
    fcase("convolution_transposed2d", "convolution.default", xc4, T(randn(3, 2, 3, 3)), T(randn(2)), [2, 2],
         [1, 1], [1, 1], True, [1, 1], 1)
    fcase("convolution_lists_of_one", "convolution.default", xc4, T(randn(4, 3, 2, 2)), None, [1], [0], [1], False,
         [1], 1)
    fcase("convolution_transposed3d", "convolution.default", T(randn(1, 2, 3, 2, 3)), T(randn(2, 2, 2, 2, 2)), None,
         [1, 2, 1], [0, 0, 1], [1, 1, 1], True, [0, 1, 0], 1)
    fcase("_convolution_transposed1d", "_convolution.default", T(randn(2, 4, 5)), T(randn(4, 1, 3)), T(randn(2)),
         [2], [1], [1], True, [1], 2, False, False, True, True)
    fcase("_convolution_conv1d", "_convolution.default", T(randn(2, 4, 5)), T(randn(6, 2, 3)), T(randn(6)),
         [1], [1], [2], False, [0], 2, False, True, False, True)
    error("err_convt2d_outpad", ct2, xt, wt, None, [2, 2], [0, 0], [2, 0], 1, [1, 1],
          expect="output padding must be smaller than either stride or dilation")
    error("err_convt2d_channels", ct2, T(randn(1, 3, 4, 4)), wt, None, [1, 1], [0, 0], [0, 0], 1, [1, 1],
          expect="expects 4 input channels, got 3")
    error("err_convt2d_groups", ct2, xt, wt, None, [1, 1], [0, 0], [0, 0], 3, [1, 1],
          expect="are not divisible by groups=3")
    error("err_convt2d_bias", ct2, xt, wt, T(randn(4)), [1, 1], [0, 0], [0, 0], 1, [1, 1],
          expect="expected a bias of shape [3]")
    error("err_convt2d_too_small", ct2, T(randn(1, 4, 1, 1)), wt, None, [1, 1], [2, 2], [0, 0], 1, [1, 1],
          expect="output size is too small")
    error("err_convt2d_int", ct2, T(randi(0, 3, 1, 4, 3, 3, dtype=torch.int32)), T(randi(0, 3, 4, 3, 2, 2, dtype=torch.int32)), None, [1, 1], [0, 0],
          [0, 0], 1, [1, 1], expect="not implemented for int32")
    error("err_convt1d_dims", ct1, xt, wt, None, 1, 0, 0, 1, 1,
          expect="expected a 2D (unbatched) or 3D (batched) input, got 4D")
    error("err_conv3d_kernel", "conv3d.default", T(randn(1, 3, 2, 6, 4)), w3, None, [1, 1, 1], [0, 0, 0],
          [1, 1, 1], 1, expect="kernel size can't be greater than the (padded) input size")
    error("err_convolution_rank", "convolution.default", T(randn(3, 6, 5)), T(randn(4, 3, 3, 2)), None, [1], [0],
          [1], False, [0], 1, expect="expected a 4D input for a 4D weight, got 3D")

    cb = torch.ops.aten.convolution_backward.default
    specs = [  # name, x shape, w shape, bias?, stride, padding, dilation, transposed, output_padding, groups, dtype
        ("cvbwd_t2d", (2, 4, 5, 6), (4, 3, 3, 3), True, [2, 1], [1, 0], [1, 1], True, [1, 0], 1, torch.float32),
        ("cvbwd_t2d_by_fwd", (2, 4, 5, 6), (4, 3, 3, 3), True, [1, 1], [1, 1], [1, 1], True, [0, 0], 1,
         torch.float32),
        ("cvbwd_t2d_outpad_over_stride", (1, 4, 5, 6), (4, 3, 3, 3), False, [1, 2], [1, 1], [2, 3], True, [1, 2], 1,
         torch.float32),
        ("cvbwd_t2d_groups_dilation", (2, 4, 4, 5), (4, 2, 2, 3), True, [2, 1], [0, 1], [2, 1], True, [1, 0], 2,
         torch.float32),
        ("cvbwd_t2d_f64", (1, 2, 4, 3), (2, 3, 2, 3), True, [2, 1], [1, 1], [1, 1], True, [1, 0], 1, torch.float64),
        ("cvbwd_t1d", (2, 4, 7), (4, 3, 3), True, [2], [1], [1], True, [1], 2, torch.float32),
        ("cvbwd_t3d", (1, 2, 3, 4, 3), (2, 3, 2, 3, 2), True, [2, 1, 2], [0, 1, 1], [1, 1, 1], True, [1, 0, 1], 1,
         torch.float32),
        ("cvbwd_conv3d", (2, 3, 5, 4, 4), (4, 3, 3, 2, 2), True, [2, 1, 1], [1, 0, 1], [1, 1, 2], False,
         [0, 0, 0], 1, torch.float32),
        ("cvbwd_conv2d", (2, 4, 6, 5), (6, 2, 3, 2), False, [1, 2], [1, 0], [1, 1], False, [0, 0], 2,
         torch.float32),
    ]
    for name, xs, ws, has_b, st, pad, dil, tr, opad, grp, dt in specs:
        x, w = randn(*xs).to(dt), randn(*ws).to(dt)
        nb = ws[1] * grp if tr else ws[0]
        b = randn(nb).to(dt) if has_b else None
        y = torch.ops.aten.convolution.default(x, w, b, st, pad, dil, tr, opad, grp)
        gy = randn(*y.shape).to(dt)
        gi, gw, gb = cb(gy, x, w, [nb] if has_b else None, st, pad, dil, tr, opad, grp, [True, True, has_b])
        bt = T(b) if has_b else None
        tol = tol_for(dt) if dt == torch.float64 else (1e-5, 1e-5)
        case_as(name, "fusebox::convolution_backward", [T(gy), T(x), T(w), bt, st, pad, dil, tr, opad, grp],
                [gi, gw, gb if has_b else None], tol)
        if not tr and len(ws) == 5:
            case_as("cbwd_3d", "fusebox::conv_backward", [T(gy), T(x), T(w), bt, st, pad, dil, grp],
                    [gi, gw, gb if has_b else None], tol)
    # unbatched transposed: the gradients of the batched call, the batch dim dropped
    x, w, b = randn(4, 5, 3), randn(4, 3, 2, 3), randn(3)
    y = torch.ops.aten.convolution.default(x[None], w, b, [2, 1], [0, 1], [1, 1], True, [1, 0], 1)
    gy = randn(*y.shape[1:])
    gi, gw, gb = cb(gy[None], x[None], w, [3], [2, 1], [0, 1], [1, 1], True, [1, 0], 1, [True, True, True])
    case_as("cvbwd_t2d_unbatched", "fusebox::convolution_backward",
            [T(gy), T(x), T(w), T(b), [2, 1], [0, 1], [1, 1], True, [1, 0], 1], [gi[0], gw, gb],
            (1e-5, 1e-5))


def conv_padding_cases():
    """conv1d/2d/3d.padding ("same", "valid") and fusebox::conv_padding_backward
    against PyTorch's autograd. Last in the file."""
    F = torch.nn.functional
    fns = {3: F.conv1d, 4: F.conv2d, 5: F.conv3d}
    specs = [  # name, x shape, w shape, bias?, padding, dilation, groups, dtype
        ("convp_2d_same_uneven", (2, 3, 7, 6), (4, 3, 4, 3), True, "same", [1, 1], 1, torch.float32),
        ("convp_2d_valid", (1, 3, 6, 5), (2, 3, 3, 2), True, "valid", [1, 1], 1, torch.float32),
        ("convp_1d_same_dilation_groups", (2, 4, 9), (6, 2, 4), False, "same", [2], 2, torch.float32),
        ("convp_1d_same_even_kernel", (1, 2, 8), (3, 2, 2), True, "same", [1], 1, torch.float64),
        ("convp_3d_same", (1, 2, 4, 5, 6), (3, 2, 2, 3, 4), True, "same", [1, 2, 1], 1, torch.float32),
    ]
    for name, xs, ws, has_b, pad, dil, grp, dt in specs:
        x = randn(*xs).to(dt).requires_grad_()
        w = randn(*ws).to(dt).requires_grad_()
        b = randn(ws[0]).to(dt).requires_grad_() if has_b else None
        nd = len(ws) - 2
        st = [1] * nd
        op = "conv%dd.padding" % nd
        case(name, op, T(x.detach()), T(w.detach()), T(b.detach()) if has_b else None, st, pad, dil, grp,
             tol=tol_for(dt))
        y = fns[len(ws)](x, w, b, st, pad, dil, grp)
        gy = randn(*y.shape).to(dt)
        gs = torch.autograd.grad(y, [x, w] + ([b] if has_b else []), gy)
        case_as(name + "_bwd", "fusebox::conv_padding_backward",
                [T(gy), T(x.detach()), T(w.detach()), T(b.detach()) if has_b else None, st, pad, dil, grp],
                [gs[0], gs[1], gs[2] if has_b else None], tol_for(dt) if dt == torch.float64 else (1e-5, 1e-5))
    x, w = T(randn(1, 2, 5, 4)), T(randn(3, 2, 3, 3))
    error("err_convp_stride", "conv2d.padding", x, w, None, [2, 1], "same", [1, 1], 1,
          expect="padding='same' is not supported for strided convolutions")


def sdpa_reference(q, k, v, mask=None, causal=False, scale=None, gqa=False):
    """PyTorch's documented definition of scaled_dot_product_attention (torch 2.x; Debian's 1.13 has
    no such op, so its goldens are this definition run by 1.13's own ops and autograd)."""
    L, S = q.size(-2), k.size(-2)
    sf = 1 / math.sqrt(q.size(-1)) if scale is None else scale
    bias = torch.zeros(L, S, dtype=q.dtype)
    if causal:
        bias.masked_fill_(torch.ones(L, S, dtype=torch.bool).tril(diagonal=0).logical_not(), float("-inf"))
    if mask is not None:
        if mask.dtype == torch.bool:
            bias = bias.masked_fill(mask.logical_not(), float("-inf"))
        else:
            bias = mask + bias
    if gqa:
        k = k.repeat_interleave(q.size(-3) // k.size(-3), -3)
        v = v.repeat_interleave(q.size(-3) // v.size(-3), -3)
    return torch.softmax(q @ k.transpose(-2, -1) * sf + bias, dim=-1) @ v


def sdpa_cases():
    """aten::scaled_dot_product_attention and fusebox::sdpa_backward against sdpa_reference (forward)
    and its autograd gradients. Last in the file; its own generator (the cases above keep their draws)."""
    gs = torch.Generator().manual_seed(2024)

    def rn(*s, dt=torch.float32):
        return torch.randn(*s, generator=gs).to(dt)

    specs = [  # name, q, k, v, mask, causal, scale, gqa, dtype
        ("sdpa_bool_mask_bcast", (2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7), "bool", False, None, False, torch.float32),
        ("sdpa_float_mask", (2, 5, 4), (2, 6, 4), (2, 6, 3), "float", False, None, False, torch.float32),
        ("sdpa_causal_scale", (1, 2, 4, 8), (1, 2, 6, 8), (1, 2, 6, 8), None, True, 0.3, False, torch.float32),
        ("sdpa_gqa", (2, 4, 3, 5), (2, 2, 7, 5), (2, 2, 7, 6), None, False, None, True, torch.float32),
        ("sdpa_2d_f64", (5, 3), (4, 3), (4, 2), None, False, None, False, torch.float64),
    ]
    for name, qs, ks, vs, mk, causal, scale, gqa, dt in specs:
        q, k, v = rn(*qs, dt=dt), rn(*ks, dt=dt), rn(*vs, dt=dt)
        L, S = qs[-2], ks[-2]
        mask = None
        if mk == "bool":
            mask = torch.rand(L, S, generator=gs) > 0.3
            mask[:, 0] = True  # no row masked everywhere
        elif mk == "float":
            mask = rn(1, L, S, dt=dt)
        qa, ka, va = (t.clone().requires_grad_() for t in (q, k, v))
        y = sdpa_reference(qa, ka, va, mask, causal, scale, gqa)
        tol = tol_for(dt) if dt == torch.float64 else (1e-5, 1e-6)
        args = [T(q), T(k), T(v), T(mask) if mask is not None else None, 0.0, causal, scale, gqa]
        case_as(name, "aten::scaled_dot_product_attention", args, [y.detach()], tol)
        gy = rn(*y.shape, dt=dt)
        gq, gk, gv = torch.autograd.grad(y, [qa, ka, va], gy)
        case_as(name + "_bwd", "fusebox::sdpa_backward", [T(gy)] + args, [gq, gk, gv],
                tol if dt == torch.float64 else (1e-5, 1e-5))


def var_mean_cases():
    """var_mean / std_mean, every overload (their own generator: appended last)."""
    gv = torch.Generator().manual_seed(18)
    x = T(torch.randn(3, 4, 5, generator=gv))
    xd = T(torch.randn(2, 6, generator=gv, dtype=torch.float64))
    case("var_mean_full", "var_mean.default", x, True)
    case("var_mean_full_biased", "var_mean.default", xd, False)
    case("var_mean_dim", "var_mean.dim", x, [1], True, False)
    case("var_mean_dim_keep", "var_mean.dim", x, [0, 2], False, True)
    case("var_mean_dim_none", "var_mean.dim", xd, None, True, True)
    case("var_mean_corr", "var_mean.correction", x, [-1], 2, True)
    case("var_mean_corr_none", "var_mean.correction", xd, [0], None, False)
    case("std_mean_full", "std_mean.default", x, True)
    case("std_mean_dim", "std_mean.dim", xd, [1], False, True)
    case("std_mean_corr", "std_mean.correction", x, [1, 2], 0, False)


def error(name, op, *args, expect):
    base, _, ov = op.partition(".")
    fn = getattr(getattr(torch.ops.aten, base), ov or "default")
    try:
        call(fn, [torch_arg(a) for a in args])
    except Exception:
        pass
    else:
        sys.exit("case %s: PyTorch did not raise" % name)
    lines.append(" ".join([name, "aten::" + base] + [arg_token(a) for a in args] + ["->", "E:" + expect]))


def case_inplace(name, op, *args, tol=None):
    """An in-place row: the tokens (and data) are written before PyTorch
    mutates a copy of self; the expected output is the mutated copy."""
    base, _, ov = op.partition(".")
    fn = getattr(getattr(torch.ops.aten, base), ov or "default")
    toks = [name, "aten::" + base] + [arg_token(a) for a in args] + ["->"]
    targs = [torch_arg(a) for a in args]
    targs[0] = targs[0].clone()
    r = call(fn, targs)
    toks.append("O:%s:%d" % (save(r.contiguous().numpy()), CODES[r.dtype]))
    toks.append("tol:%g,%g" % (tol or tol_for(r.dtype)))
    lines.append(" ".join(toks))


def nan_reduce_cases():
    """nansum, nanmean, aminmax (and fusebox::aminmax_backward against
    PyTorch's autograd), msort, renorm. Last in the file: new random draws
    here do not move the earlier cases' data."""
    nan, inf = float("nan"), float("inf")
    xn = T(torch.tensor([[1.0, nan, 3.0, -2.0], [nan, nan, nan, nan], [inf, 1.0, nan, 2.5]]))
    x = T(randn(3, 4, 5))
    i23 = T(torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int32))
    empty = T(torch.zeros(0, 3))
    case("nansum_full", "nansum.default", xn, None, False, None)
    case("nansum_dim", "nansum.default", xn, [1], False, None)
    case("nansum_dim_neg_keep", "nansum.default", xn, [-2], True, None)
    case("nansum_dims", "nansum.default", x, [0, 2], False, None)
    case("nansum_int", "nansum.default", i23, [0], False, None)
    case("nansum_int_dtype", "nansum.default", i23, None, False, torch.float64)
    case("nansum_dtype", "nansum.default", xn, [1], False, torch.float64)
    case("nansum_empty", "nansum.default", empty, [0], False, None)
    case("nansum_T", "nansum.default", T(randn(4, 3), t=True), [1], True, None)
    case("nansum_half", "nansum.default", T(torch.tensor([[1.5, nan], [2.0, -0.5]]).half()), [1], False, None, via32=True)
    case("nanmean_full", "nanmean.default", xn, None, False, None)
    case("nanmean_dim", "nanmean.default", xn, [1], False, None)
    case("nanmean_dim0_keep", "nanmean.default", xn, [0], True, None)
    case("nanmean_dims_empty", "nanmean.default", x, [], False, None)
    case("nanmean_f64", "nanmean.default", T(randn(4, 6).double()), [-1], False, None)
    case("nanmean_dtype", "nanmean.default", xn, [1], False, torch.float64)
    case("nanmean_empty", "nanmean.default", empty, [0], False, None)
    error("err_nanmean_int", "nanmean.default", i23, None, False, None,
          expect="nanmean(): expected input to have floating point dtype but got Int")
    case("aminmax_full", "aminmax.default", x, None, False)
    case("aminmax_full_keep", "aminmax.default", x, None, True)
    case("aminmax_dim", "aminmax.default", x, 1, False)
    case("aminmax_dim_neg_keep", "aminmax.default", x, -1, True)
    case("aminmax_nan", "aminmax.default", xn, 1, False)
    case("aminmax_int", "aminmax.default", i23, 0, False)
    case("aminmax_0d", "aminmax.default", T(torch.tensor(2.5)), None, False)
    case("aminmax_0d_dim", "aminmax.default", T(torch.tensor(2.5)), 0, False)
    case("aminmax_empty_other", "aminmax.default", empty, 1, False)
    error("err_aminmax_empty", "aminmax.default", empty, None, False, expect="cannot compute aminmax over an empty dimension")
    error("err_aminmax_empty_dim", "aminmax.default", empty, 0, False, expect="cannot compute aminmax over an empty dimension")
    error("err_aminmax_dim", "aminmax.default", x, 3, False, expect="dim 3 out of range")
    # aminmax's gradient with ties
    for name, xv, dim, keep in [("ammbwd_dim", torch.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, -1.0]]), 1, False),
                                ("ammbwd_full_keep", torch.tensor([[1.0, 3.0, 3.0], [1.0, 2.0, -1.0]]), None, True),
                                ("ammbwd_dim0_keep", torch.tensor([[1.0, 3.0], [1.0, 2.0], [0.5, 3.0]]), 0, True)]:
        xr = xv.clone().requires_grad_()
        # 1.13 has no derivative for aminmax itself: amin's and amax's autograd (which later PyTorch uses)
        dl = [] if dim is None else [dim]
        lo, hi = torch.amin(xr, dl, keep), torch.amax(xr, dl, keep)
        g0, g1 = randn(*lo.shape), randn(*hi.shape)
        (gx,) = torch.autograd.grad([lo, hi], [xr], [g0, g1])
        case_as(name, "fusebox::aminmax_backward", [T(g0), T(g1), T(xv), T(lo.detach()), T(hi.detach()), dim, keep],
                [gx], (1e-6, 1e-6))
    case("msort_2d", "msort.default", T(torch.tensor([[3.0, 1.0], [nan, 2.0], [-1.0, inf]])))
    case("msort_3d", "msort.default", x)
    case("msort_int", "msort.default", T(torch.tensor([5, -1, 3, 3], dtype=torch.int64)))
    case("msort_T", "msort.default", T(randn(4, 3), t=True))
    case("msort_0d", "msort.default", T(torch.tensor(1.5)))
    case("renorm_dim0", "renorm.default", x, 2, 0, 1.0)
    case("renorm_dim1_p1", "renorm.default", x, 1, 1, 3.0)
    case("renorm_neg_big", "renorm.default", T(randn(4, 3)), 3.0, -1, 100.0)
    case("renorm_f64", "renorm.default", T(randn(3, 5).double()), 2.5, 0, 0.5)
    case_inplace("renorm_inplace", "renorm_.default", T(randn(3, 4)), 2, 1, 0.5)
    for name, xv, p, dim, mx in [("renormbwd_p2", randn(3, 4), 2.0, 0, 1.0), ("renormbwd_p3", randn(2, 3, 2) * 2, 3.0, -1, 0.8),
                                 ("renormbwd_p1_zero", torch.tensor([[0.0, 0.0], [1.0, -2.0]]), 1.0, 0, 1.0)]:
        xr = xv.clone().requires_grad_()
        out = torch.renorm(xr, p, dim, mx)
        gy = randn(*out.shape, 1).reshape(out.shape)
        (gx,) = torch.autograd.grad(out, [xr], gy)
        case_as(name, "fusebox::renorm_backward", [T(gy), T(xv), p, dim, mx], [gx], (1e-5, 1e-6))
    error("err_renorm_p", "renorm.default", x, 0, 0, 1.0, expect="non-positive-norm not supported")
    error("err_renorm_maxnorm", "renorm.default", x, 2, 0, -1.0, expect="expected maxnorm to be >= 0")
    error("err_renorm_int", "renorm.default", i23, 2, 0, 1.0, expect="renorm")


def quantile_cases():
    """quantile / nanquantile (scalar and tensor q, every interpolation), trapz/trapezoid,
    bincount, histc. Last in the file."""
    nan, inf = float("nan"), float("inf")
    x = T(randn(4, 7))
    x3 = T(randn(3, 5, 4))
    xn = T(torch.tensor([[1.0, nan, 3.0, -2.0, 0.5], [nan, nan, nan, nan, nan], [inf, 1.0, nan, 2.5, -inf]]))
    q3 = T(torch.tensor([0.0, 0.25, 0.9]))
    for mode in ["linear", "lower", "higher", "midpoint", "nearest"]:
        case("quantile_scalar_" + mode, "quantile.scalar", x, 0.3, 1, False, mode)
        case("quantile_tensor_" + mode, "quantile.default", x3, q3, 0, True, mode)
        case("nanquantile_" + mode, "nanquantile.scalar", xn, 0.75, 1, False, mode)
    case("quantile_half_rank", "quantile.scalar", T(torch.tensor([1.0, 2.0, 3.0, 4.0])), 0.5, None, False, "nearest")
    case("quantile_half_rank2", "quantile.scalar", T(torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])), 0.5, None, False, "nearest")
    case("quantile_full", "quantile.scalar", x3, 0.4, None, False, "linear")
    case("quantile_full_keep", "quantile.default", x3, q3, None, True, "linear")
    case("quantile_q0d", "quantile.default", x, T(torch.tensor(0.6)), -1, False, "linear")
    case("quantile_nan", "quantile.scalar", xn, 0.5, 1, True, "linear")
    case("quantile_nan_tensor", "quantile.default", xn, q3, 1, False, "linear")
    case("nanquantile_tensor", "nanquantile.default", xn, q3, None, False, "midpoint")
    case("nanquantile_dim0", "nanquantile.default", xn, q3, 0, True, "linear")
    case("quantile_f64", "quantile.scalar", T(randn(5, 6).double()), 0.33, 0, False, "linear")
    case("quantile_T", "quantile.scalar", T(randn(6, 4), t=True), 0.8, 1, False, "linear")
    case("quantile_0d", "quantile.scalar", T(torch.tensor(1.5)), 0.2, None, False, "linear")
    case("quantile_ends", "quantile.default", x, T(torch.tensor([0.0, 1.0])), 1, False, "linear")
    # fusebox::quantile_backward against PyTorch's autograd (ties and NaN rows included)
    tie = torch.tensor([[1.0, 2.0, 2.0, 0.5, 3.0], [4.0, -1.0, 0.0, 2.0, 1.0], [0.0, nan, 1.0, 2.0, 3.0]])
    for name, xv, q, dim, keep, mode, nanq in [("qbwd_linear", randn(3, 6), 0.3, 1, False, "linear", False),
                                               ("qbwd_tensor_q", randn(4, 5), torch.tensor([0.1, 0.5, 1.0]), 0, True, "linear", False),
                                               ("qbwd_full_mid", randn(2, 4), 0.5, None, False, "midpoint", False),
                                               ("qbwd_nearest", randn(3, 4), 0.5, -1, False, "nearest", False),
                                               ("qbwd_lower_ties", tie[:2], 0.4, 1, False, "lower", False),
                                               ("qbwd_higher", randn(5, 2), 0.7, 0, False, "higher", False),
                                               ("qbwd_nan_row", tie, 0.5, 1, False, "linear", False),
                                               ("qbwd_nanquantile", tie, 0.5, 1, False, "linear", True)]:
        xr = xv.clone().requires_grad_()
        fn = torch.nanquantile if nanq else torch.quantile
        out = fn(xr, q, dim=dim, keepdim=keep, interpolation=mode)
        gy = randn(*out.shape, 1).reshape(out.shape)
        (gx,) = torch.autograd.grad(out, [xr], gy)
        case_as(name, "fusebox::quantile_backward", [T(gy), T(xv), T(q) if isinstance(q, torch.Tensor) else q, dim, keep, mode, nanq],
                [gx], (1e-5, 1e-6))
    error("err_quantile_q", "quantile.scalar", x, 1.5, None, False, "linear", expect="quantile() q must be in the range [0, 1] but got 1.5")
    error("err_quantile_qt", "quantile.default", x, T(torch.tensor([0.5, -0.1])), None, False, "linear", expect="q values must be in the range [0, 1]")
    error("err_quantile_q2d", "quantile.default", x, T(torch.tensor([[0.5]])), None, False, "linear", expect="q must be a scalar or 1D tensor")
    error("err_quantile_qdtype", "quantile.default", x, T(torch.tensor([0.5]).double()), None, False, "linear", expect="q tensor must be same dtype as the input tensor")
    error("err_quantile_int", "quantile.scalar", T(torch.tensor([1, 2])), 0.5, None, False, "linear", expect="input tensor must be either float or double dtype")
    error("err_quantile_empty", "quantile.scalar", T(torch.zeros(0)), 0.5, None, False, "linear", expect="input tensor must be non-empty")
    error("err_quantile_mode", "quantile.scalar", x, 0.5, None, False, "cubic", expect="interpolation must be one of linear, lower, higher, midpoint or nearest. Got cubic")
    error("err_nanquantile_dim", "nanquantile.scalar", x, 0.5, 2, False, "linear", expect="dim 2 out of range")
    # trapz / trapezoid
    y = T(randn(3, 6))
    case("trapz_dx", "trapz.dx", y, 0.5, -1)
    case("trapz_dx_dim0", "trapz.dx", y, 2.0, 0)
    case("trapz_x1d", "trapz.x", y, T(torch.tensor([0.0, 0.5, 1.5, 2.0, 4.0, 4.5])), 1)
    case("trapz_x1d_dim0", "trapz.x", x3, T(torch.tensor([0.0, 1.0, 3.0])), 0)
    case("trapz_x_same", "trapz.x", y, T(randn(3, 6)), -1)
    case("trapz_x_bcast", "trapz.x", x3, T(randn(5, 4)), 1)
    case("trapz_int", "trapz.dx", T(torch.tensor([[1, 2, 4], [0, -3, 5]])), 1.0, 1)
    case("trapz_int_x", "trapz.x", T(torch.tensor([[1, 2, 4], [0, -3, 5]])), T(torch.tensor([0, 2, 3])), 1)
    case("trapz_one", "trapz.dx", T(randn(3, 1)), 1.0, 1)
    case("trapz_empty", "trapz.dx", T(torch.zeros(3, 0)), 1.0, 1)
    case("trapz_empty_int", "trapz.dx", T(torch.zeros(3, 0, dtype=torch.int32)), 1.0, 1)
    case("trapz_empty_x64", "trapz.x", T(torch.zeros(3, 0)), T(torch.zeros(0, dtype=torch.float64)), 1)
    case("trapz_f64_x32", "trapz.x", T(randn(2, 4).double()), T(torch.tensor([0.0, 1.0, 2.0, 2.5])), 1)
    case("trapezoid_dx_int", "trapezoid.dx", y, 3, 1)
    case("trapezoid_dx_float", "trapezoid.dx", y, 0.25, 0)
    case("trapezoid_x", "trapezoid.x", y, T(torch.tensor([1.0, 2.0, 2.5, 3.0, 5.0, 8.0])), -1)
    # fusebox::trapz_backward against PyTorch's autograd
    for name, yv, xv, dx, dim in [("trapzbwd_x1d", randn(4, 3), torch.tensor([0.0, 0.5, 2.0, 2.5]), 1.0, 0),
                                  ("trapzbwd_xbcast", randn(2, 3, 4), randn(3, 4), 1.0, -1),
                                  ("trapzbwd_dx", randn(3, 5), None, 0.25, 1),
                                  ("trapzbwd_dx_one", randn(3, 1), None, 2.0, 1),
                                  ("trapzbwd_x_one", randn(1, 3), randn(1, 3), 1.0, 0)]:
        yr = yv.clone().requires_grad_()
        xr = xv.clone().requires_grad_() if xv is not None else None
        out = torch.trapz(yr, xr, dim=dim) if xv is not None else torch.trapz(yr, dx=dx, dim=dim)
        gy = randn(*out.shape, 1).reshape(out.shape)
        gs = torch.autograd.grad(out, [yr] + ([xr] if xv is not None else []), gy, allow_unused=True)
        gs = [t if t is not None else torch.zeros_like(v) for t, v in zip(gs, [yv, xv])]
        case_as(name, "fusebox::trapz_backward", [T(gy), T(yv), T(xv) if xv is not None else None, dx, dim],
                [gs[0], gs[1] if xv is not None else None], (1e-5, 1e-6))
    error("err_trapz_x_len", "trapezoid.x", y, T(torch.tensor([0.0, 1.0])), -1, expect="There must be one `x` value for each sample point")
    error("err_trapz_dim", "trapz.dx", y, 1.0, 2, expect="dim 2 out of range")
    # bincount
    idx = T(torch.tensor([0, 3, 3, 1, 7, 3], dtype=torch.int64))
    case("bincount_basic", "bincount.default", idx, None, 0)
    case("bincount_minlength", "bincount.default", idx, None, 10)
    case("bincount_w32", "bincount.default", idx, T(torch.tensor([0.5, 1.0, 2.0, -1.0, 3.0, 0.25])), 0)
    case("bincount_w64", "bincount.default", idx, T(torch.tensor([0.5, 1.0, 2.0, -1.0, 3.0, 0.25]).double()), 2)
    case("bincount_wint", "bincount.default", idx, T(torch.tensor([1, 2, 3, 4, 5, 6])), 0)
    case("bincount_u8", "bincount.default", T(torch.tensor([2, 2, 0], dtype=torch.uint8)), None, 0)
    case("bincount_empty", "bincount.default", T(torch.zeros(0, dtype=torch.int64)), None, 0)
    case("bincount_empty_min", "bincount.default", T(torch.zeros(0, dtype=torch.int64)), None, 4)
    error("err_bincount_neg", "bincount.default", T(torch.tensor([1, -1])), None, 0, expect="bincount only supports 1-d non-negative integral inputs.")
    error("err_bincount_2d", "bincount.default", T(torch.tensor([[1, 1]])), None, 0, expect="bincount only supports 1-d non-negative integral inputs.")
    error("err_bincount_float", "bincount.default", T(torch.tensor([1.0])), None, 0, expect="bincount only supports 1-d non-negative integral inputs.")
    error("err_bincount_w", "bincount.default", idx, T(torch.ones(3)), 0, expect="weights should be 1-d and have the same length as input")
    error("err_bincount_minlength", "bincount.default", idx, None, -1, expect="minlength should be >= 0")
    # histc
    hx = T(torch.tensor([1.0, 2.0, 1.0, 2.5, -1.0, 4.0, 3.0, nan]))
    case("histc_range", "histc.default", hx, 4, 0, 3)
    case("histc_auto", "histc.default", T(torch.tensor([1.0, 2.0, 1.0, 2.5, -1.0, 4.0, 3.0])), 5, 0, 0)
    case("histc_same", "histc.default", T(torch.tensor([2.0, 2.0])), 3, 0, 0)
    case("histc_2d", "histc.default", x, 10, -1.5, 1.5)
    case("histc_f64", "histc.default", T(randn(50).double()), 7, -2, 2)
    case("histc_default", "histc.default", T(randn(100)), 100, 0, 0)
    case("histc_empty", "histc.default", T(torch.zeros(0)), 4, 0, 0)
    error("err_histc_int", "histc.default", T(torch.tensor([1, 2])), 4, 0, 3, expect="not implemented for 'Long'")
    error("err_histc_bins", "histc.default", hx, 0, 0, 3, expect="bins must be > 0")
    error("err_histc_minmax", "histc.default", hx, 4, 3, 1, expect="max must be larger than min")
    case("histc_nan_first_bin", "histc.default", T(torch.tensor([nan, 0.5, 5.0])), 3, 0, 3)
    error("err_histc_nan_auto", "histc.default", T(torch.tensor([nan, 1.0])), 4, 0, 0, expect="is not finite")
    error("err_histc_inf", "histc.default", T(torch.tensor([1.0, inf])), 4, 0, 0, expect="range of [1, inf] is not finite")


def product_cases():
    """tensordot, inner (and their backward helpers against PyTorch's autograd),
    addmv, addr, addbmm (and in-place forms), cross, vdot, ger. Last in the file."""
    nan = float("nan")
    a, b = randn(2, 3, 4), randn(4, 3, 5)
    case("tensordot_1", "tensordot.default", T(a), T(b), [2], [0])
    case("tensordot_2", "tensordot.default", T(a), T(b), [1, 2], [1, 0])
    case("tensordot_neg", "tensordot.default", T(a), T(b), [-1, -2], [0, 1])
    case("tensordot_none", "tensordot.default", T(randn(2, 3)), T(randn(4)), [], [])
    case("tensordot_f64", "tensordot.default", T(randn(3, 4).double()), T(randn(4, 3).double()), [0, 1], [1, 0])
    case("tensordot_int", "tensordot.default", T(torch.tensor([[1, 2], [3, 4]])), T(torch.tensor([[5, 6], [7, 8]])), [1], [0])
    case("tensordot_T", "tensordot.default", T(randn(5, 3), t=True), T(randn(5, 2)), [1], [0])
    case("tensordot_empty", "tensordot.default", T(torch.zeros(2, 0)), T(torch.zeros(0, 3)), [1], [0])
    error("err_tensordot_len", "tensordot.default", T(a), T(b), [2], [0, 1], expect="both dimension lists should have same length")
    error("err_tensordot_size", "tensordot.default", T(a), T(b), [1], [0], expect="contracted dimensions need to match, but first has size 3 in dim 1 and second has size 4 in dim 0")
    error("err_tensordot_dtype", "tensordot.default", T(a), T(b.double()), [2], [0], expect="expected scalar type Float but found Double")
    for name, dims_a, dims_b in [("tdbwd_1", [2], [0]), ("tdbwd_2", [1, 2], [1, 0]), ("tdbwd_none", [], [])]:
        ar, br = a.clone().requires_grad_(), b.clone().requires_grad_()
        y = torch.tensordot(ar, br, dims=(dims_a, dims_b))
        gy = randn(*y.shape)
        ga, gb = torch.autograd.grad(y, [ar, br], gy)
        case_as(name, "fusebox::tensordot_backward", [T(gy), T(a), T(b), dims_a, dims_b], [ga, gb], (1e-5, 1e-5))
    case("inner_vv", "inner.default", T(randn(4)), T(randn(4)))
    case("inner_mm", "inner.default", T(randn(2, 3, 4)), T(randn(5, 4)))
    case("inner_0d", "inner.default", T(torch.tensor(2.5)), T(randn(2, 3)))
    case("inner_0d_right", "inner.default", T(randn(3)), T(torch.tensor(-1.5)))
    case("inner_int", "inner.default", T(torch.tensor([[1, 2], [3, 4]])), T(torch.tensor([5, 6])))
    error("err_inner_shape", "inner.default", T(randn(2, 3)), T(randn(4)), expect="inner() the last dimension must match on both input tensors but got shapes [2, 3] and [4]")
    for name, sa, sb in [("innerbwd_mm", (2, 3, 4), (5, 4)), ("innerbwd_0d", (), (2, 3)), ("innerbwd_0d_right", (3,), ())]:
        av, bv = randn(*sa, 1).reshape(sa), randn(*sb, 1).reshape(sb)
        ar, br = av.clone().requires_grad_(), bv.clone().requires_grad_()
        y = torch.inner(ar, br)
        gy = randn(*y.shape)
        ga, gb = torch.autograd.grad(y, [ar, br], gy)
        case_as(name, "fusebox::inner_backward", [T(gy), T(av), T(bv)], [ga, gb], (1e-5, 1e-5))
    m, v = T(randn(3, 4)), T(randn(4))
    case("addmv_basic", "addmv.default", T(randn(3)), m, v, 1, 1)
    case("addmv_beta_alpha", "addmv.default", T(randn(1)), m, v, 0.5, -2.0)
    case("addmv_beta0_nan", "addmv.default", T(torch.full((3,), nan)), m, v, 0, 1)
    case("addmv_0d_self", "addmv.default", T(torch.tensor(1.5)), m, v, 2, 1)
    case("addmv_f64_self", "addmv.default", T(randn(3).double()), m, v, 1, 1)
    case("addmv_T", "addmv.default", T(randn(3)), T(randn(4, 3), t=True), v, 1, 0.5)
    case("addmv_empty", "addmv.default", T(randn(3)), T(torch.zeros(3, 0)), T(torch.zeros(0)), 1, 1)
    case("addmv_int", "addmv.default", T(torch.tensor([1, 2])), T(torch.tensor([[1, 2], [3, 4]])), T(torch.tensor([1, -1])), 2, 3)
    case("addmv_int_fbeta", "addmv.default", T(torch.tensor([1, 2])), T(torch.tensor([[1, 2], [3, 4]])), T(torch.tensor([1, -1])), 0.5, 3)
    case("addmv_int_self_float", "addmv.default", T(torch.tensor([1, 2, 3])), m, v, 1, 1)
    case_inplace("addmv_inplace", "addmv_.default", T(randn(3)), m, v, 0.5, 2.0)
    error("err_addmv_shape", "addmv.default", T(randn(3)), m, T(randn(3)), 1, 1, expect="size mismatch")
    error("err_addmv_self", "addmv.default", T(randn(2)), m, v, 1, 1, expect="shapes do not broadcast")
    error("err_addmv_dtype", "addmv.default", T(randn(3)), m, T(randn(4).double()), 1, 1, expect="expected scalar type Float but found Double")
    v1, v2 = T(randn(3)), T(randn(5))
    case("addr_basic", "addr.default", T(randn(3, 5)), v1, v2, 1, 1)
    case("addr_beta_alpha", "addr.default", T(randn(5)), v1, v2, 0.5, 3.0)
    case("addr_beta0_nan", "addr.default", T(torch.full((3, 5), nan)), v1, v2, 0, 2)
    case("addr_int_self", "addr.default", T(torch.zeros(3, 5, dtype=torch.int32)), v1, v2, 1, 1)
    case("addr_int", "addr.default", T(torch.ones(2, 2, dtype=torch.int64)), T(torch.tensor([1, 2])), T(torch.tensor([3, -1])), 2, 3)
    case_inplace("addr_inplace", "addr_.default", T(randn(3, 5)), v1, v2, 1, -1.0)
    error("err_addr_int_fbeta", "addr.default", T(torch.ones(2, 2, dtype=torch.int64)), T(torch.tensor([1, 2])), T(torch.tensor([3, -1])), 0.5, 1, expect="For integral input tensors, argument beta must not be a floating point number.")
    error("err_addr_2d", "addr.default", T(randn(3, 5)), T(randn(3, 1)), v2, 1, 1, expect="addr: Expected 1-D argument vec1, but got 2-D")
    b1, b2 = T(randn(4, 2, 3)), T(randn(4, 3, 5))
    case("addbmm_basic", "addbmm.default", T(randn(2, 5)), b1, b2, 1, 1)
    case("addbmm_beta_alpha", "addbmm.default", T(randn(5)), b1, b2, 0.5, 2.0)
    case("addbmm_beta0_nan", "addbmm.default", T(torch.full((2, 5), nan)), b1, b2, 0, 1)
    case("addbmm_T", "addbmm.default", T(randn(2, 5)), T(randn(4, 3, 2), t=True), b2, 1, 1)
    case("addbmm_empty_batch", "addbmm.default", T(randn(2, 5)), T(torch.zeros(0, 2, 3)), T(torch.zeros(0, 3, 5)), 1, 1)
    case("addbmm_f64", "addbmm.default", T(randn(2, 2).double()), T(randn(3, 2, 4).double()), T(randn(3, 4, 2).double()), 1, 1)
    case_inplace("addbmm_inplace", "addbmm_.default", T(randn(2, 5)), b1, b2, 2, 1)
    error("err_addbmm_batch", "addbmm.default", T(randn(2, 5)), b1, T(randn(3, 3, 5)), 1, 1, expect="batch1 and batch2 must have same number of batches")
    error("err_addbmm_self_dtype", "addbmm.default", T(randn(2, 5).double()), b1, b2, 0, 1, expect="self and mat2 must have the same dtype")
    error("err_addbmm_2d", "addbmm.default", T(randn(2, 5)), T(randn(2, 3)), b2, 1, 1, expect="batch1 must be a 3D tensor")
    ca, cb = T(randn(4, 3)), T(randn(4, 3))
    case("linalg_cross_basic", "linalg_cross.default", ca, cb, -1)
    case("linalg_cross_dim0", "linalg_cross.default", T(randn(3, 2)), T(randn(3, 2)), 0)
    case("linalg_cross_bcast", "linalg_cross.default", T(randn(1, 3)), cb, -1)
    case("linalg_cross_int", "linalg_cross.default", T(torch.tensor([1, 0, 2])), T(torch.tensor([0, 3, -1])), 0)
    case("cross_default", "cross.default", T(randn(3, 4)), T(randn(3, 4)), None)
    case("cross_dim", "cross.default", T(randn(2, 3, 3)), T(randn(2, 3, 3)), -1)
    case("cross_default_bcast", "cross.default", T(randn(3, 1)), T(randn(3, 3)), None)
    error("err_cross_len", "linalg_cross.default", T(randn(4, 2)), T(randn(4, 2)), -1, expect="linalg.cross: inputs dimension -1 must have length 3. Got 2 and 2")
    error("err_cross_none", "cross.default", T(randn(2, 4)), T(randn(2, 4)), None, expect="no dimension of size 3 in input")
    error("err_cross_ndim", "cross.default", T(randn(3)), T(randn(2, 3)), None, expect="linalg.cross: inputs must have the same number of dimensions.")
    error("err_cross_dtype", "linalg_cross.default", ca, T(randn(4, 3).double()), -1, expect="expected scalar type Float but found Double")
    case("vdot_basic", "vdot.default", T(randn(6)), T(randn(6)))
    case("vdot_int", "vdot.default", T(torch.tensor([1, 2, 3])), T(torch.tensor([4, 5, -6])))
    case("vdot_empty", "vdot.default", T(torch.zeros(0)), T(torch.zeros(0)))
    error("err_vdot_dtype", "vdot.default", T(randn(3)), T(randn(3).double()), expect="expected both vectors to have same dtype, but found Float and Double")
    error("err_vdot_2d", "vdot.default", T(randn(3, 1)), T(randn(3)), expect="1D tensors expected, but got 2D and 1D tensors")
    case("ger_basic", "ger.default", T(randn(3)), T(randn(4)))
    case("ger_promote", "ger.default", T(torch.tensor([1, 2], dtype=torch.int32)), T(randn(3)))


def randn(*s):
    return torch.randn(*s, generator=g)


def randi(lo, hi, *s, dtype=torch.int64):
    return torch.randint(lo, hi, s, generator=g).to(dtype)


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith(".npy") or f == "cases.txt":
            os.remove(os.path.join(OUT, f))

    nan, inf = float("nan"), float("inf")
    x23 = T(randn(2, 3))
    x347 = T(randn(3, 4, 7))
    x1023 = T(randn(1023))
    x5_1023 = T(randn(2, 1023))
    x1023_5 = T(randn(1023, 3))
    x7 = T(randn(7))
    x0d = T(torch.tensor(2.5))
    empty = T(torch.zeros(0, 3))
    special = T(torch.tensor([[1.0, nan, -inf, 2.0], [inf, 3.0, 3.0, -1.0], [-inf, -inf, -inf, -inf]]))
    nanfirst = T(torch.tensor([[nan, 1.0, nan], [2.0, nan, 5.0]]))
    xT = T(randn(4, 3), t=True)               # (3, 4) transposed view
    xE = T(randn(3, 1), e=(3, 5))             # (3, 5) expanded view
    x4d = T(randn(2, 3, 4, 5))
    i34 = T(randi(-5, 6, 3, 4, dtype=torch.int32))
    l34 = T(randi(-1000, 1000, 3, 4))
    u8 = T(randi(0, 3, 3, 4, dtype=torch.uint8))
    i8 = T(randi(-3, 3, 2, 5, dtype=torch.int8))
    bl = T(randi(0, 2, 3, 4, dtype=torch.bool))
    h23 = T(randn(3, 5), c=torch.float16)
    bf23 = T(randn(3, 5), c=torch.bfloat16)
    d35 = T(randn(3, 5).double())

    # ---- sum / mean / prod
    case("sum_full", "sum.default", x347, None)
    case("sum_full_dtype64", "sum.default", x23, torch.float64)
    case("sum_full_int32", "sum.default", i34, None)
    case("sum_full_bool", "sum.default", bl, None)
    case("sum_full_empty", "sum.default", empty, None)
    case("sum_full_0d", "sum.default", x0d, None)
    case("sum_1023", "sum.default", x1023, None)
    case("sum_dim1_keep", "sum.dim_IntList", x347, [1], True, None)
    case("sum_dim1_nokeep", "sum.dim_IntList", x347, [1], False, None)
    case("sum_dim_neg", "sum.dim_IntList", x347, [-1], False, None)
    case("sum_dims_02", "sum.dim_IntList", x347, [0, 2], True, None)
    case("sum_dims_20", "sum.dim_IntList", x347, [2, 0], False, None)
    case("sum_dims_empty_all", "sum.dim_IntList", x347, [], False, None)
    case("sum_dims_none", "sum.dim_IntList", x347, None, True, None)
    case("sum_dim0_0d", "sum.dim_IntList", x0d, [0], False, None)
    case("sum_dimm1_0d_keep", "sum.dim_IntList", x0d, [-1], True, None)
    case("sum_transposed", "sum.dim_IntList", xT, [0], False, None)
    case("sum_transposed1", "sum.dim_IntList", xT, [1], True, None)
    case("sum_expanded", "sum.dim_IntList", xE, [1], False, None)
    case("sum_expanded0", "sum.dim_IntList", xE, [0], False, None)
    case("sum_rows_1023", "sum.dim_IntList", x5_1023, [1], False, None)
    case("sum_cols_1023", "sum.dim_IntList", x1023_5, [0], False, None)
    case("sum_cols_wide", "sum.dim_IntList", x5_1023, [0], True, None)
    case("sum_4d_13", "sum.dim_IntList", x4d, [1, 3], False, None)
    case("sum_4d_12", "sum.dim_IntList", x4d, [1, 2], True, None)
    case("sum_empty_dim0", "sum.dim_IntList", empty, [0], True, None)
    case("sum_empty_dim1", "sum.dim_IntList", empty, [1], False, None)
    case("sum_int_dim_dtype32", "sum.dim_IntList", i34, [1], False, torch.int32)
    case("sum_u8_dim", "sum.dim_IntList", u8, [0], False, None)
    case("sum_bool_dim", "sum.dim_IntList", bl, [1], True, None)
    case("sum_float_to_int", "sum.dim_IntList", T(torch.tensor([[1.5, 2.7], [-1.5, 3.0]])), [1], False, torch.int32)
    case("sum_special", "sum.dim_IntList", special, [1], False, None)
    case("sum_half", "sum.dim_IntList", h23, [1], False, None)
    case("sum_bf16", "sum.dim_IntList", bf23, [0], False, None)
    case("sum_f64", "sum.dim_IntList", d35, [1], False, None)
    case("sum_half_to_f32", "sum.dim_IntList", h23, [0, 1], False, torch.float32)
    case("mean_full", "mean.default", x347, None)
    case("mean_full_empty", "mean.default", empty, None)
    case("mean_int_dtype", "mean.default", i34, torch.float64)
    case("mean_dim", "mean.dim", x347, [1], True, None)
    case("mean_dims_empty", "mean.dim", x23, [], False, None)
    case("mean_dim_neg_odd", "mean.dim", x5_1023, [-1], False, None)
    case("mean_dim_special", "mean.dim", special, [0], False, None)
    case("mean_dim_half", "mean.dim", h23, [1], True, None)
    case("mean_empty_dim1", "mean.dim", empty, [1], False, None)
    case("mean_empty_dim0", "mean.dim", empty, [0], False, None)
    case("mean_dim_int_dtype", "mean.dim", l34, [0], False, torch.float32)
    case("prod_full", "prod.default", x7, None)
    case("prod_full_int", "prod.default", i34, None)
    case("prod_full_bool", "prod.default", bl, None)
    case("prod_full_empty", "prod.default", empty, None)
    case("prod_full_dtype", "prod.default", x7, torch.float64)
    case("prod_dim", "prod.dim_int", x347, 1, True, None)
    case("prod_dim_neg", "prod.dim_int", x347, -1, False, None)
    case("prod_dim_int8", "prod.dim_int", i8, 1, False, None)
    case("prod_dim_special", "prod.dim_int", special, 1, False, None)
    case("prod_dim_0d", "prod.dim_int", x0d, 0, True, None)

    # wide inner extents (B >= 32): the column-strip and tile paths, also with A > 1
    x2_20_40 = T(randn(2, 20, 40))
    x20_40n = randn(20, 40)
    x20_40n[3, 7] = nan
    x20_40n[5, 9] = inf
    x20_40n = T(x20_40n)
    case("sum_strips_a2", "sum.dim_IntList", x2_20_40, [1], False, None)
    case("mean_strips_keep", "mean.dim", x2_20_40, [-2], True, None)
    case("sum_strips_f64", "sum.dim_IntList", T(randn(20, 40).double()), [0], False, None)
    case("sum_tiles_int", "sum.dim_IntList", T(randi(-9, 9, 2, 20, 40, dtype=torch.int16)), [1], False, None)
    case("var_tiles", "var.dim", x2_20_40, [1], True, False)
    case("std_tiles_nan", "std.dim", x20_40n, [0], True, True)
    case("lse_tiles", "logsumexp.default", x20_40n, [0], False)
    case("amax_tiles", "amax.default", x20_40n, [0], True)
    case("min_dim_tiles", "min.dim", x2_20_40, 1, False)
    case("argmax_tiles", "argmax.default", x20_40n, 0, False)
    case("prod_tiles", "prod.dim_int", x2_20_40, 1, False, None)
    case("any_tiles", "any.dim", T(randi(0, 2, 3, 40, dtype=torch.bool)), 0, False)
    case("softmax_tiles_nan", "softmax.int", x20_40n, 0, None)
    case("log_softmax_tiles", "log_softmax.int", x2_20_40, 1, None)
    case("cumsum_tiles_int", "cumsum.default", T(randi(-9, 9, 5, 40, dtype=torch.int32)), 0, None)

    # ---- amax / amin / max / min / argmax / argmin
    case("amax_all", "amax.default", x347, [], False)
    case("amax_dim", "amax.default", x347, [1], True)
    case("amax_dims", "amax.default", x347, [0, -1], False)
    case("amax_special", "amax.default", special, [1], False)
    case("amax_special0", "amax.default", special, [0], True)
    case("amax_int", "amax.default", l34, [1], False)
    case("amax_bool", "amax.default", bl, [0], False)
    case("amax_T", "amax.default", xT, [0], False)
    case("amax_empty_dim1", "amax.default", empty, [1], False)
    case("amax_0d", "amax.default", x0d, [], False)
    case("amin_dim", "amin.default", x347, [2], True)
    case("amin_special", "amin.default", special, [1], False)
    case("amin_u8", "amin.default", u8, [0, 1], False)
    case("amin_half", "amin.default", h23, [1], False)
    case("max_full", "max.default", x347)
    case("max_full_special", "max.default", special)
    case("max_full_int", "max.default", i34)
    case("max_full_0d", "max.default", x0d)
    case("min_full", "min.default", x1023)
    case("min_full_bool", "min.default", bl)
    case("max_dim", "max.dim", x347, 1, False)
    case("max_dim_keep", "max.dim", x347, -1, True)
    case("max_dim_special", "max.dim", special, 1, False)
    case("max_dim_nanfirst", "max.dim", nanfirst, 1, False)
    case("max_dim_nanfirst0", "max.dim", nanfirst, 0, True)
    case("max_dim_ties", "max.dim", T(torch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])), 1, False)
    case("max_dim_int", "max.dim", l34, 0, False)
    case("max_dim_bool", "max.dim", bl, 1, False)
    case("max_dim_0d", "max.dim", x0d, 0, False)
    case("max_dim_empty1", "max.dim", empty, 1, False)
    case("max_dim_cols", "max.dim", x1023_5, 0, False)
    case("max_dim_wide", "max.dim", x5_1023, 0, False)
    case("min_dim", "min.dim", x347, 1, True)
    case("min_dim_special", "min.dim", special, 1, False)
    case("min_dim_nanfirst", "min.dim", nanfirst, 1, False)
    case("min_dim_T", "min.dim", xT, 1, False)
    case("min_dim_half", "min.dim", h23, 1, False)
    case("argmax_full", "argmax.default", x347, None, False)
    case("argmax_full_keep", "argmax.default", x347, None, True)
    case("argmax_dim", "argmax.default", x347, 1, False)
    case("argmax_special", "argmax.default", special, 1, True)
    case("argmax_full_special", "argmax.default", special, None, False)
    case("argmax_int", "argmax.default", i34, 0, False)
    case("argmax_T", "argmax.default", xT, None, False)
    case("argmax_E", "argmax.default", xE, 0, False)
    case("argmax_0d", "argmax.default", x0d, None, False)
    case("argmin_dim", "argmin.default", x347, -1, False)
    case("argmin_nanfirst", "argmin.default", nanfirst, 1, False)
    case("argmin_full", "argmin.default", x1023, None, False)

    # ---- var / std
    case("var_full", "var.default", x347, True)
    case("var_full_biased", "var.default", x347, False)
    case("var_full_0d", "var.default", x0d, True)
    case("var_full_empty", "var.default", empty, True)
    case("var_dim", "var.dim", x347, [1], True, False)
    case("var_dim_keep_biased", "var.dim", x347, [0, 2], False, True)
    case("var_dim_none", "var.dim", x23, None, True, True)
    case("var_dim_empty_list", "var.dim", x23, [], True, True)
    case("var_dim_half", "var.dim", h23, [1], True, False)
    case("var_dim_f64", "var.dim", d35, [0], True, False)
    case("var_dim_special", "var.dim", special, [1], True, False)
    case("var_dim_odd", "var.dim", x5_1023, [1], True, False)
    case("var_dim_cols", "var.dim", x1023_5, [0], True, False)
    case("var_corr0", "var.correction", x347, [1], 0, False)
    case("var_corr2", "var.correction", x347, [2], 2, True)
    case("var_corr_none", "var.correction", x347, None, None, False)
    case("var_corr_big", "var.correction", x23, [1], 3, False)
    case("var_corr_neg", "var.correction", x23, [0, 1], -1, False)
    case("var_T", "var.dim", xT, [1], True, False)
    case("std_full", "std.default", x347, True)
    case("std_dim", "std.dim", x347, [1], True, True)
    case("std_dim_E", "std.dim", xE, [1], False, False)
    case("std_corr", "std.correction", x347, [0, 1], 0, False)
    case("std_empty_dim1", "std.dim", empty, [1], True, False)

    # ---- logsumexp
    case("lse_dim", "logsumexp.default", x347, [1], False)
    case("lse_dims_keep", "logsumexp.default", x347, [0, 2], True)
    case("lse_special", "logsumexp.default", special, [1], False)
    case("lse_special0", "logsumexp.default", special, [0], False)
    case("lse_inf", "logsumexp.default", T(torch.tensor([[inf, 1.0], [inf, -inf], [-inf, -inf]])), [1], False)
    case("lse_int", "logsumexp.default", T(randi(-3, 4, 3, 4)), [1], False)
    case("lse_empty0", "logsumexp.default", empty, [0], False)
    case("lse_odd", "logsumexp.default", x5_1023, [-1], True)
    case("lse_big", "logsumexp.default", T(torch.tensor([[1000.0, 1000.0], [-1000.0, -1001.0]])), [1], False)
    case("lse_f64", "logsumexp.default", d35, [0], False)
    case("lse_half", "logsumexp.default", h23, [1], False, via32=True)

    # ---- all / any
    case("all_full", "all.default", bl)
    case("all_full_float", "all.default", special)
    case("all_full_u8", "all.default", u8)
    case("all_full_empty", "all.default", empty)
    case("all_dim", "all.dim", bl, 1, False)
    case("all_dim_keep_int", "all.dim", i34, 0, True)
    case("all_dim_u8", "all.dim", u8, 1, False)
    case("any_full", "any.default", bl)
    case("any_full_float", "any.default", T(torch.tensor([0.0, -0.0, nan])))
    case("any_full_zero", "any.default", T(torch.zeros(3, 2)))
    case("any_dim", "any.dim", special, 1, True)
    case("any_dim_empty", "any.dim", empty, 0, False)
    case("any_dim_int", "any.dim", i8, 1, False)

    # ---- cumsum
    case("cumsum_0", "cumsum.default", x347, 0, None)
    case("cumsum_last", "cumsum.default", x347, -1, None)
    case("cumsum_mid", "cumsum.default", x347, 1, None)
    case("cumsum_int", "cumsum.default", i34, 1, None)
    case("cumsum_bool", "cumsum.default", bl, 0, None)
    case("cumsum_dtype", "cumsum.default", x23, 1, torch.float64)
    case("cumsum_to_int", "cumsum.default", T(torch.tensor([1.5, 2.5, -0.5])), 0, torch.int32)
    case("cumsum_special", "cumsum.default", special, 1, None)
    case("cumsum_0d", "cumsum.default", x0d, 0, None)
    case("cumsum_empty", "cumsum.default", empty, 0, None)
    case("cumsum_T", "cumsum.default", xT, 1, None)
    case("cumsum_odd", "cumsum.default", x1023, 0, None)
    case("cumsum_half", "cumsum.default", h23, 1, None, via32=True)

    # ---- softmax / log_softmax
    case("softmax_last", "softmax.int", x347, -1, None)
    case("softmax_mid", "softmax.int", x347, 1, None)
    case("softmax_0", "softmax.int", x347, 0, None)
    case("softmax_special", "softmax.int", special, 1, None)
    case("softmax_big", "softmax.int", T(torch.tensor([[1000.0, 999.0, -1000.0]])), 1, None)
    case("softmax_dtype", "softmax.int", x23, 1, torch.float64)
    case("softmax_half_to_f32", "softmax.int", h23, 1, torch.float32)
    case("softmax_half", "softmax.int", h23, 0, None, via32=True)
    case("softmax_0d", "softmax.int", x0d, 0, None)
    case("softmax_T", "softmax.int", xT, 1, None)
    case("softmax_E", "softmax.int", xE, 1, None)
    case("softmax_odd", "softmax.int", x5_1023, 1, None)
    case("softmax_empty", "softmax.int", empty, 1, None)
    case("softmax_int_dtype", "softmax.int", i34, 1, torch.float32)
    case("log_softmax_last", "log_softmax.int", x347, -1, None)
    case("log_softmax_0", "log_softmax.int", x347, 0, None)
    case("log_softmax_special", "log_softmax.int", special, 1, None)
    case("log_softmax_big", "log_softmax.int", T(torch.tensor([[1000.0, 999.0, -1000.0]])), 1, None)
    case("log_softmax_f64", "log_softmax.int", d35, 1, None)
    case("log_softmax_odd", "log_softmax.int", x1023_5, 0, None)

    # ---- layer_norm / batch_norm / dropout
    w7, b7 = T(randn(7)), T(randn(7))
    w47, b47 = T(randn(4, 7)), T(randn(4, 7))
    case("layer_norm_last", "layer_norm.default", x347, [7], w7, b7, 1e-5, True)
    case("layer_norm_two", "layer_norm.default", x347, [4, 7], w47, b47, 1e-5, True)
    case("layer_norm_noaffine", "layer_norm.default", x347, [7], None, None, 1e-5, True)
    case("layer_norm_eps", "layer_norm.default", x5_1023, [1023], None, None, 0.1, True)
    case("layer_norm_T", "layer_norm.default", xT, [4], None, None, 1e-5, True)
    case("layer_norm_f64", "layer_norm.default", d35, [5], None, None, 1e-5, True)
    case("layer_norm_empty", "layer_norm.default", empty, [3], None, None, 1e-5, True)
    # weight and bias on an empty input: nothing to scale (no random draw, so later cases keep their data)
    case("layer_norm_empty_affine", "layer_norm.default", empty, [3], T(torch.tensor([0.5, 1.0, 2.0])),
         T(torch.tensor([1.0, -1.0, 0.0])), 1e-5, True)
    case("layer_norm_const", "layer_norm.default", T(torch.ones(2, 4)), [4], None, None, 1e-5, True)
    c4 = lambda: T(randn(4))
    x_nc = T(randn(3, 4))
    x_ncl = T(randn(2, 4, 5))
    x_nchw = T(randn(2, 4, 3, 3))
    rm, rv = T(randn(4)), T(torch.rand(4, generator=g) + 0.5)
    wc, bc = c4(), c4()
    case("bn_eval_nc", "batch_norm.default", x_nc, wc, bc, rm, rv, False, 0.1, 1e-5, False)
    case("bn_eval_ncl", "batch_norm.default", x_ncl, wc, bc, rm, rv, False, 0.1, 1e-5, False)
    case("bn_eval_nchw", "batch_norm.default", x_nchw, wc, bc, rm, rv, False, 0.1, 1e-3, False)
    case("bn_eval_noaffine", "batch_norm.default", x_nchw, None, None, rm, rv, False, 0.1, 1e-5, False)
    case("bn_train_nchw", "batch_norm.default", x_nchw, wc, bc, None, None, True, 0.1, 1e-5, False)
    case("bn_train_ncl", "batch_norm.default", x_ncl, None, bc, None, None, True, 0.1, 1e-5, False)
    case("dropout_eval", "dropout.default", x347, 0.5, False)
    case("dropout_eval_int", "dropout.default", i34, 0.3, False)
    case("dropout_train_p0", "dropout.default", x23, 0.0, True)

    # ---- errors (our message must contain the given text)
    error("err_sum_bad_dim", "sum.dim_IntList", x23, [2], False, None, expect="dim 2 out of range for a tensor of shape [2, 3]")
    error("err_sum_repeated", "sum.dim_IntList", x23, [0, -2], False, None, expect="dim 0 appears multiple times")
    error("err_mean_int", "mean.default", i34, None, expect="mean: could not infer output dtype")
    error("err_mean_dim_int", "mean.dim", l34, [0], False, None, expect="input dtype must be floating point, got int64")
    error("err_mean_int_dtype", "mean.dim", x23, [0], False, torch.int64, expect="dtype argument must be floating point")
    error("err_amax_empty", "amax.default", empty, [], False, expect="amax: cannot reduce all dims of an empty tensor of shape [0, 3]")
    error("err_amax_empty_dim", "amax.default", empty, [0], False, expect="expected reduction dim 0 to have non-zero size")
    error("err_max_empty", "max.default", empty, expect="max: cannot reduce all dims of an empty tensor")
    error("err_max_dim_empty", "max.dim", empty, 0, False, expect="reduction dim 0 to have non-zero size")
    error("err_argmax_empty", "argmax.default", empty, None, False, expect="argmax: cannot reduce all dims")
    error("err_argmax_bool", "argmax.default", bl, None, False, expect="argmax: not implemented for bool")
    error("err_max_dim_bad", "max.dim", x23, 5, False, expect="max: dim 5 out of range for a tensor of shape [2, 3]")
    error("err_var_int", "var.default", i34, True, expect="var: std and var only support floating point")
    error("err_cumsum_dim", "cumsum.default", x23, 2, None, expect="cumsum: dim 2 out of range")
    error("err_softmax_int", "softmax.int", l34, 0, None, expect="softmax: expected a floating point input")
    error("err_ln_shape", "layer_norm.default", x23, [2], None, None, 1e-5, True, expect="normalized_shape [2] does not match the trailing dims of an input of shape [2, 3]")
    error("err_ln_weight", "layer_norm.default", x23, [3], T(randn(2)), None, 1e-5, True, expect="expected weight of shape [3], got [2]")
    error("err_bn_eval_nostats", "batch_norm.default", x_nc, None, None, None, None, False, 0.1, 1e-5, False, expect="running_mean and running_var must be given")
    error("err_dropout_p", "dropout.default", x23, 1.5, False, expect="dropout probability has to be between 0 and 1")

    # ---- linear algebra (integer-valued data stored as int8, converted to float in the test)
    def mat(*s, dtype=torch.float32, t=False):
        return T(randi(-4, 5, *s, dtype=torch.int8), t=t, c=dtype)

    def matf(*s):
        return T(randn(*s))

    a7_13, b13_9 = matf(7, 13), matf(13, 9)
    case("mm_small", "mm.default", a7_13, b13_9)
    case("mm_f64", "mm.default", T(randn(5, 6).double()), T(randn(6, 3).double()))
    case("mm_bigk", "mm.default", mat(37, 300), mat(300, 11))
    case("mm_f64_bigk", "mm.default", mat(9, 270, dtype=torch.float64), mat(270, 33, dtype=torch.float64))
    case("mm_blocks", "mm.default", mat(70, 65), mat(65, 21))
    case("mm_T_left", "mm.default", T(randn(13, 7), t=True), b13_9)
    case("mm_T_right", "mm.default", a7_13, T(randn(9, 13), t=True))
    case("mm_E", "mm.default", T(randn(7, 1), e=(7, 13)), b13_9)
    case("mm_int64", "mm.default", T(randi(-9, 9, 4, 5)), T(randi(-9, 9, 5, 3)))
    case("mm_int32_wrap", "mm.default", T(torch.full((2, 3), 2**20, dtype=torch.int32)), T(torch.full((3, 2), 2**12, dtype=torch.int32)))
    case("mm_u8", "mm.default", T(randi(0, 20, 3, 4, dtype=torch.uint8)), T(randi(0, 20, 4, 2, dtype=torch.uint8)))
    case("mm_bf16", "mm.default", mat(6, 5, dtype=torch.bfloat16), mat(5, 4, dtype=torch.bfloat16))
    case("mm_half", "mm.default", mat(6, 5, dtype=torch.float16), mat(5, 4, dtype=torch.float16), via32=True)
    case("mm_empty_k", "mm.default", T(torch.zeros(3, 0)), T(torch.zeros(0, 4)))
    case("mm_empty_m", "mm.default", T(torch.zeros(0, 3)), T(randn(3, 4)))
    case("mm_special", "mm.default", T(torch.tensor([[1.0, nan], [inf, 1.0]])), T(torch.tensor([[1.0, 0.0], [0.0, 1.0]])))
    case("bmm_small", "bmm.default", matf(3, 4, 5), matf(3, 5, 2))
    case("bmm_T", "bmm.default", T(randn(3, 5, 4), t=True), matf(3, 5, 6))
    case("bmm_E", "bmm.default", T(randn(1, 4, 5), e=(3, 4, 5)), matf(3, 5, 2))
    case("matmul_dot", "matmul.default", x7, T(randn(7)))
    case("matmul_dot_int", "matmul.default", T(randi(-5, 5, 6)), T(randi(-5, 5, 6)))
    case("matmul_mv", "matmul.default", a7_13, T(randn(13)))
    case("matmul_vm", "matmul.default", T(randn(7)), T(randn(7, 13)))
    case("matmul_mm", "matmul.default", a7_13, b13_9)
    case("matmul_batched_vec", "matmul.default", T(randn(4, 2, 3)), T(randn(3)))
    case("matmul_vec_batched", "matmul.default", T(randn(3)), T(randn(4, 3, 2)))
    case("matmul_bcast", "matmul.default", T(randn(2, 1, 2, 3)), T(randn(5, 3, 4)))
    case("matmul_mat_batched", "matmul.default", T(randn(2, 3)), T(randn(5, 3, 4)))
    case("matmul_batched_mat", "matmul.default", T(randn(5, 2, 3)), T(randn(3, 4)))
    case("matmul_batched_T", "matmul.default", T(randn(5, 3, 2), t=True), T(randn(5, 4, 3), t=True))
    case("matmul_f64", "matmul.default", T(randn(2, 3, 4).double()), T(randn(4, 2).double()))
    case("addmm_basic", "addmm.default", T(randn(9)), a7_13, b13_9, 1, 1)
    case("addmm_beta_alpha", "addmm.default", T(randn(7, 9)), a7_13, b13_9, 0.5, 2.0)
    case("addmm_beta0_nan", "addmm.default", T(torch.full((7, 1), nan)), a7_13, b13_9, 0, 1)
    case("addmm_int", "addmm.default", T(randi(-3, 3, 3, dtype=torch.int32)), T(randi(-3, 3, 4, 5, dtype=torch.int32)), T(randi(-3, 3, 5, 3, dtype=torch.int32)), 2, 3)
    case("addmm_int_fbeta", "addmm.default", T(randi(-3, 3, 3, dtype=torch.int32)), T(randi(-3, 3, 4, 5, dtype=torch.int32)), T(randi(-3, 3, 5, 3, dtype=torch.int32)), 2.5, 3)
    case("addmm_T", "addmm.default", T(randn(1, 9)), T(randn(13, 7), t=True), T(randn(9, 13), t=True), 1, 1)
    wl, bl9 = T(randn(9, 13)), T(randn(9))
    case("linear_2d", "linear.default", a7_13, wl, bl9)
    case("linear_nobias", "linear.default", a7_13, wl, None)
    case("linear_3d", "linear.default", T(randn(2, 5, 13)), wl, bl9)
    case("linear_1d_input", "linear.default", T(randn(13)), wl, bl9)
    case("linear_1d_weight", "linear.default", a7_13, T(randn(13)), None)
    case("linear_T_input", "linear.default", T(randn(13, 7), t=True), wl, bl9)
    case("linear_f64", "linear.default", T(randn(3, 4).double()), T(randn(2, 4).double()), T(randn(2).double()))
    error("err_mm_shape", "mm.default", x23, x23, expect="mm: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")
    error("err_mm_1d", "mm.default", x7, x23, expect="mm: both arguments must be matrices, got 1D and 2D")
    error("err_mm_dtype", "mm.default", x23, T(randn(3, 2).double()), expect="mm: expected both operands to have the same dtype, got float32 and float64")
    error("err_mm_bool", "mm.default", T(torch.ones(2, 2, dtype=torch.bool)), T(torch.ones(2, 2, dtype=torch.bool)), expect="not implemented for bool")
    error("err_bmm_batch", "bmm.default", T(randn(2, 2, 3)), T(randn(3, 3, 2)), expect="bmm: batch shapes cannot be multiplied (2x2x3 and 3x3x2)")
    error("err_matmul_0d", "matmul.default", x0d, x7, expect="matmul: both arguments need at least 1 dim")
    error("err_matmul_k", "matmul.default", T(randn(2, 3)), T(randn(4, 3)), expect="matmul: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x3)")
    error("err_matmul_bcast", "matmul.default", T(randn(2, 2, 3)), T(randn(3, 3, 2)), expect="matmul: shapes do not broadcast")
    error("err_matmul_dot", "matmul.default", x7, T(randn(6)), expect="matmul: mat1 and mat2 shapes cannot be multiplied (7 and 6)")
    error("err_addmm_self", "addmm.default", T(randn(3)), x23, T(randn(3, 2)), 1, 1, expect="addmm: the added tensor of shape [3] does not broadcast to the product's shape [2, 2]")
    error("err_linear_shape", "linear.default", x23, T(randn(2, 4)), None, expect="linear: mat1 and mat2 shapes cannot be multiplied (2x3 and 4x2)")

    # ---- convolutions (last: the cases above keep their random draws)
    xc, wc, bc = T(randn(2, 3, 7, 6)), T(randn(4, 3, 3, 3)), T(randn(4))
    case("conv2d_basic", "conv2d.default", xc, wc, bc, [1, 1], [0, 0], [1, 1], 1)
    case("conv2d_nobias_int_args", "conv2d.default", xc, wc, None, 2, 1, 1, 1)
    case("conv2d_stride_pad", "conv2d.default", xc, wc, bc, [2, 1], [1, 2], [1, 1], 1)
    case("conv2d_dilation", "conv2d.default", T(randn(1, 3, 9, 8)), wc, bc, [1, 1], [2, 2], [2, 3], 1)
    case("conv2d_groups", "conv2d.default", T(randn(2, 4, 6, 5)), T(randn(6, 2, 3, 2)), T(randn(6)), [1, 2], [1, 0], [1, 1], 2)
    case("conv2d_depthwise", "conv2d.default", T(randn(1, 3, 5, 5)), T(randn(3, 1, 3, 3)), None, [1, 1], [1, 1], [1, 1], 3)
    case("conv2d_1x1", "conv2d.default", T(randn(2, 5, 4, 3)), T(randn(7, 5, 1, 1)), T(randn(7)), [1, 1], [0, 0], [1, 1], 1)
    case("conv2d_f64", "conv2d.default", T(randn(1, 2, 5, 4).double()), T(randn(3, 2, 2, 2).double()), T(randn(3).double()), [1, 1], [1, 1], [1, 1], 1)
    case("conv2d_unbatched", "conv2d.default", T(randn(3, 7, 6)), wc, bc, [1, 1], [1, 1], [1, 1], 1)
    case("conv2d_T_input", "conv2d.default", T(randn(2, 3, 6, 7), t=True), wc, bc, [1, 1], [0, 0], [1, 1], 1)
    case("conv2d_empty_batch", "conv2d.default", T(torch.zeros(0, 3, 5, 5)), wc, bc, [1, 1], [0, 0], [1, 1], 1)
    case("conv2d_big", "conv2d.default", T(randn(2, 16, 12, 12)), T(randn(8, 16, 3, 3)), T(randn(8)), [1, 1], [1, 1], [1, 1], 1, tol=(1e-5, 1e-5))
    case("conv1d_basic", "conv1d.default", T(randn(2, 3, 10)), T(randn(4, 3, 3)), T(randn(4)), [2], [1], [1], 1)
    case("conv1d_groups_dilation", "conv1d.default", T(randn(1, 6, 12)), T(randn(3, 2, 3)), None, [1], [2], [2], 3)
    case("conv1d_unbatched", "conv1d.default", T(randn(3, 8)), T(randn(2, 3, 4)), T(randn(2)), 1, 0, 1, 1)
    error("err_conv2d_channels", "conv2d.default", xc, T(randn(4, 2, 3, 3)), None, [1, 1], [0, 0], [1, 1], 1, expect="with groups=1 expects 2 input channels")
    error("err_conv2d_kernel", "conv2d.default", T(randn(1, 3, 2, 2)), wc, None, [1, 1], [0, 0], [1, 1], 1, expect="kernel size can't be greater than the (padded) input size")
    error("err_conv2d_stride", "conv2d.default", xc, wc, None, [0, 1], [0, 0], [1, 1], 1, expect="stride must be positive")
    error("err_conv1d_dims", "conv1d.default", xc, wc, None, 1, 0, 1, 1, expect="expected a 2D (unbatched) or 3D (batched) input, got 4D")
    ln_backward_cases()
    addend_cases()
    conv_backward_cases()
    conv_more_cases()
    conv_padding_cases()
    sdpa_cases()
    var_mean_cases()
    nan_reduce_cases()
    quantile_cases()
    product_cases()

    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("# generated by tests/unit/gen_reduce_golden.py with torch %s; do not edit\n" % torch.__version__)
        f.write("\n".join(lines) + "\n")
    total = sum(os.path.getsize(os.path.join(OUT, n)) for n in os.listdir(OUT))
    print("%d cases, %d files, %d bytes" % (len(lines), len(written) + 1, total))


if __name__ == "__main__":
    main()
