#!/usr/bin/python3
"""Golden data for tests/unit/test_ops_extra.c (the rows of core/ops/list_extra.h).

Run with Debian's python3-torch (1.13):   /usr/bin/python3 tests/unit/gen_extra_golden.py

Every case calls the exact ATen overload (torch.ops.aten.<name>.<overload>)
and records what PyTorch returned, or that it raised. Deterministic (fixed
seeds). Output: tests/data/extra/cases.txt, one block per case:

    case <name> <aten::op>
    arg T <dtype> <sizes> <values...>     a tensor; sizes "2,3" or "-" (0-d); values in row-major order
    arg R <dtype> <sizes> <values...>     the same tensor built with reversed dims and permuted back
                                          (non-contiguous; sizes and values are the logical ones)
    arg i <int> | arg f <float> | arg b <0|1> | arg n | arg s <str> | arg L <ints or ->
    arg TL <count>                        followed by <count> "arg T"/"arg n" lines (Tensor[] / Tensor?[])
    out T <dtype> <sizes> <values...>     compared with the per-dtype tolerance of the conformance test
    out TL <count>                        followed by <count> "out T" lines
    out L <ints or ->
    self T ...                            in-place ops: self after the call
    err <first line of PyTorch's message>
    end

dtype: f32 f64 f16 i64 i32 i16 i8 u8 b1.
"""
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "extra")

DT = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16", torch.int64: "i64", torch.int32: "i32",
      torch.int16: "i16", torch.int8: "i8", torch.uint8: "u8", torch.bool: "b1"}

lines = []


class R:
    """a tensor argument to pass non-contiguous (reversed dims, permuted back)."""

    def __init__(self, t):
        self.t = t


def fmt_val(v, dt):
    if dt in ("f32", "f64", "f16"):
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if dt == "b1":
        return "1" if bool(v) else "0"
    return str(int(v))


def tensor_text(t):
    dt = DT[t.dtype]
    sizes = ",".join(str(s) for s in t.shape) if t.dim() else "-"
    flat = t.detach().reshape(-1)
    if t.dtype == torch.float16:
        flat = flat.float()
    vals = " ".join(fmt_val(v, dt) for v in flat.tolist())
    return "%s %s %s" % (dt, sizes, vals) if vals else "%s %s" % (dt, sizes)


def arg_lines(a):
    if isinstance(a, R):
        return ["arg R " + tensor_text(a.t)]
    if isinstance(a, torch.Tensor):
        return ["arg T " + tensor_text(a)]
    if a is None:
        return ["arg n"]
    if isinstance(a, bool):
        return ["arg b %d" % a]
    if isinstance(a, int):
        return ["arg i %d" % a]
    if isinstance(a, float):
        return ["arg f %r" % a]
    if isinstance(a, str):
        return ["arg s " + a]
    if isinstance(a, torch.dtype):
        return ["arg i %d" % {torch.float32: 6, torch.float64: 7, torch.float16: 5, torch.int64: 4, torch.int32: 3}[a]]
    if isinstance(a, (list, tuple)):
        if all(isinstance(x, int) and not isinstance(x, bool) for x in a):
            return ["arg L " + (",".join(str(x) for x in a) if a else "-")]
        out = ["arg TL %d" % len(a)]
        for x in a:
            out += arg_lines(x)
        return out
    raise TypeError(a)


def to_torch(a):
    if isinstance(a, R):
        t = a.t
        nd = t.dim()
        rev = list(range(nd))[::-1]
        return t.permute(rev).contiguous().permute(rev)  # same values, reversed strides
    if isinstance(a, (list, tuple)) and a and not all(isinstance(x, int) for x in a):
        return [to_torch(x) for x in a]
    if isinstance(a, torch.Tensor):
        return a.clone()
    return a


def out_lines(r):
    if isinstance(r, torch.Tensor):
        return ["out T " + tensor_text(r)]
    if isinstance(r, (list, tuple)) and all(isinstance(x, torch.Tensor) for x in r) and not isinstance(r, tuple):
        out = ["out TL %d" % len(r)]
        for x in r:
            out.append("out T " + tensor_text(x))
        return out
    if isinstance(r, tuple):
        out = []
        for x in r:
            out += out_lines(x)
        return out
    if isinstance(r, list) and all(isinstance(x, int) for x in r):
        return ["out L " + (",".join(str(x) for x in r) if r else "-")]
    raise TypeError(r)


def case(name, op, args, kw=None):
    """op: 'name.overload' (overload 'default' for none). kw: keyword-only args, written positionally
    after args in schema order."""
    kw = kw or {}
    opname, ov = op.split(".") if "." in op else (op, "default")
    fn = getattr(getattr(torch.ops.aten, opname), ov)
    schema = fn._schema
    kwnames = [a.name for a in schema.arguments if a.kwarg_only]
    pos = list(args)
    for n in kwnames:
        if n in kw:
            pos.append(kw[n])
        elif any(k in kw for k in kwnames[kwnames.index(n) + 1:]):
            pos.append(schema.arguments[[a.name for a in schema.arguments].index(n)].default_value)
    targs = [to_torch(a) for a in args]
    lines.append("case %s aten::%s" % (name, opname))
    for a in pos:
        lines.extend(arg_lines(a))
    try:
        r = fn(*targs, **{k: to_torch(v) for k, v in kw.items()})
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        lines.append("err " + msg)
        lines.append("end")
        return
    lines.extend(out_lines(r))
    if opname.endswith("_") and isinstance(targs[0], torch.Tensor):
        lines.append("self T " + tensor_text(targs[0]))
    lines.append("end")


def main():
    g = torch.Generator().manual_seed(1234)

    def f(*s, lo=-2.0, hi=2.0, dt=torch.float32):
        return (torch.rand(*s, generator=g, dtype=torch.float64) * (hi - lo) + lo).to(dt)

    def i(*s, lo=0, hi=5):
        return torch.randint(lo, hi, s, generator=g)

    nan = float("nan")
    # ---- indexing
    x = f(3, 4)
    case("gather_dim1", "gather", [x, 1, torch.tensor([[0, 0], [3, 1], [2, 2]])])
    case("gather_dim0_neg", "gather", [R(f(3, 4)), -2, torch.tensor([[2, 0, 1, 1]])])
    case("gather_3d", "gather", [f(2, 3, 4, dt=torch.float64), 2, i(2, 2, 3, hi=4)])
    case("gather_int", "gather", [i(3, 4, lo=-9, hi=9), 1, i(3, 5, hi=4)])
    case("gather_oob", "gather", [x, 1, torch.tensor([[4]])])
    case("gather_int32_index", "gather", [x, 1, torch.tensor([[1]], dtype=torch.int32)])
    case("scatter_src", "scatter.src", [f(3, 5), 1, torch.tensor([[0, 4], [1, 1], [3, 2]]), f(3, 2)])
    case("scatter_src_bigger", "scatter.src", [f(3, 5), 0, torch.tensor([[0, 1, 2, 0, 1]]), f(2, 5)])
    case("scatter_value", "scatter.value", [f(3, 5), 1, torch.tensor([[0], [4], [2]]), -7.5])
    case("scatter_value_int", "scatter.value", [i(2, 3), 0, torch.tensor([[1, 0, 1]]), 9])
    case("scatter_add_dup", "scatter_add", [f(2, 4), 1, torch.tensor([[0, 0, 3], [1, 1, 1]]), f(2, 3)])
    case("scatter_add_int", "scatter_add", [i(2, 4), 0, torch.tensor([[1, 0, 1, 1]]), i(1, 4)])
    case("scatter_add_f16", "scatter_add", [f(2, 3, dt=torch.float16), 1, torch.tensor([[0, 0]]), f(1, 2, dt=torch.float16)])
    case("scatter_dtype_mismatch", "scatter.src", [f(2, 3), 1, torch.tensor([[0]]), f(1, 1, dt=torch.float64)])
    y = f(4, 5)
    case("index_rows", "index.Tensor", [y, [torch.tensor([3, 0, 0, -1])]])
    case("index_cols", "index.Tensor", [y, [None, torch.tensor([[4, 0], [1, 1]])]])
    case("index_two", "index.Tensor", [y, [torch.tensor([0, 2, 3]), torch.tensor([1, 1, 4])]])
    case("index_bcast", "index.Tensor", [f(3, 4, 2), [torch.tensor([[0], [2]]), torch.tensor([1, 3, 0])]])
    case("index_nonadjacent", "index.Tensor", [f(2, 3, 4), [torch.tensor([1, 0]), None, torch.tensor([3, 2])]])
    case("index_mask", "index.Tensor", [y, [torch.tensor([True, False, True, True])]])
    case("index_mask2d", "index.Tensor", [R(f(3, 4)), [f(3, 4) > 0]])
    case("index_mask_after_none", "index.Tensor", [f(2, 3), [None, torch.tensor([True, False, True])]])
    case("index_int32", "index.Tensor", [y, [torch.tensor([1, -2], dtype=torch.int32)]])
    case("index_bool_tensor_values", "index.Tensor", [f(4) > 0, [torch.tensor([3, 1])]])
    case("index_oob", "index.Tensor", [y, [torch.tensor([4])]])
    case("index_float_index", "index.Tensor", [y, [torch.tensor([1.0])]])
    case("index_put_rows", "index_put", [f(4, 3), [torch.tensor([2, 0])], f(2, 3)])
    case("index_put_bcast_value", "index_put", [f(4, 3), [torch.tensor([1, 3])], torch.tensor(5.0)])
    case("index_put_mask", "index_put", [f(3, 4), [f(3, 4) > 0.5], torch.tensor(0.0)])
    case("index_put_acc", "index_put", [f(5), [torch.tensor([1, 1, 4])], f(3), True])
    case("index_put_acc_int", "index_put", [i(2, 3), [None, torch.tensor([0, 0])], i(2, 2), True])
    case("index_put__", "index_put_", [f(4, 3), [torch.tensor([3]), torch.tensor([1])], torch.tensor(9.0)])
    case("index_put__noncontig", "index_put_", [R(f(3, 4)), [torch.tensor([0, 2])], f(4)])
    case("masked_select", "masked_select", [f(3, 4), f(4) > 0])
    case("masked_select_int", "masked_select", [i(2, 3), torch.tensor([[True], [False]])])
    case("embedding", "embedding", [f(6, 3), torch.tensor([[0, 5], [2, 2]])])
    case("embedding_pad", "embedding", [f(6, 3, dt=torch.float64), torch.tensor([1, 0, 3]), 0])
    case("embedding_oob", "embedding", [f(6, 3), torch.tensor([6])])
    case("one_hot", "one_hot", [torch.tensor([0, 3, 1]), 5])
    case("one_hot_infer", "one_hot", [torch.tensor([[2, 0], [1, 2]])])
    case("one_hot_neg", "one_hot", [torch.tensor([-1, 0]), 3])
    case("one_hot_too_big", "one_hot", [torch.tensor([4]), 3])
    # ---- data movement
    case("repeat", "repeat", [f(2, 3), [2, 1, 3]])
    case("repeat_noncontig", "repeat", [R(f(2, 3)), [1, 2]])
    case("repeat_0d", "repeat", [torch.tensor(1.5), [3]])
    case("repeat_too_few", "repeat", [f(2, 3), [2]])
    case("repeat_interleave", "repeat_interleave.self_int", [f(2, 3), 2, 1])
    case("repeat_interleave_flat", "repeat_interleave.self_int", [i(2, 2), 3])
    case("flip", "flip", [f(2, 3, 4), [0, -1]])
    case("flip_int", "flip", [R(i(3, 4)), [1]])
    case("flip_dup", "flip", [f(2, 3), [1, -1]])
    case("roll", "roll", [f(3, 4), [1], [1]])
    case("roll_multi", "roll", [f(3, 4), [-1, 5], [0, 1]])
    case("roll_flat", "roll", [i(2, 3), [2]])
    case("tril", "tril", [f(3, 4)])
    case("tril_neg", "tril", [f(2, 3, 4), -1])
    case("triu", "triu", [f(4, 3), 1])
    case("triu_bool", "triu", [f(3, 3) > 0, -1])
    case("tril_1d", "tril", [f(3)])
    case("constant_pad", "constant_pad_nd", [f(2, 3), [1, 2]])
    case("constant_pad_crop", "constant_pad_nd", [f(2, 3, 4), [-1, 1, 2, 0], 1.5])
    case("constant_pad_int", "constant_pad_nd", [i(2, 2), [0, 0, 1, 1], 7])
    case("pad_constant", "pad", [f(2, 3), [1, 1], "constant", 2.5])
    case("pad_constant_none", "pad", [f(2, 3), [0, 2, 1, 0], "constant", None])
    case("pad_reflect", "pad", [f(1, 2, 4), [2, 1], "reflect"])
    case("pad_replicate", "pad", [f(1, 2, 3, 3), [1, 2, 0, 1], "replicate"])
    case("pad_circular", "pad", [f(1, 1, 4), [1, 3], "circular"])
    case("pad_odd", "pad", [f(2, 3), [1], "constant"])
    case("broadcast_tensors", "broadcast_tensors", [[f(3, 1), f(4), torch.tensor(2.0)]])
    case("broadcast_tensors_bad", "broadcast_tensors", [[f(3), f(4)]])
    case("infer_size", "_infer_size", [[3, 1, 5], [4, 1]])
    case("infer_size_bad", "_infer_size", [[3], [4]])
    # ---- sorting
    s = f(3, 6)
    s[0, 2] = nan
    s[1, 1] = s[1, 4] = 0.5
    case("sort", "sort", [s, 1])
    case("sort_desc", "sort", [s, -1, True])
    case("sort_dim0", "sort", [R(f(4, 3)), 0])
    case("sort_int", "sort", [i(2, 5, lo=-3, hi=3), 1, True])
    case("sort_stable", "sort.stable", [s], {"stable": True, "dim": 1, "descending": True})
    case("argsort", "argsort", [s, 1])
    case("argsort_desc", "argsort", [i(3, 4, lo=-2, hi=2), 0, True])
    case("topk", "topk", [s, 2])
    case("topk_smallest", "topk", [f(3, 5), 3, 1, False])
    case("topk_dim0", "topk", [f(4, 3, dt=torch.float64), 1, 0])
    case("topk_k_too_big", "topk", [f(2, 3), 4])
    # ---- norms, scans
    nx = f(3, 4)
    case("norm_scalar", "norm.Scalar", [nx])
    case("norm_scalar_p1", "norm.Scalar", [nx, 1])
    case("norm_scalar_int_input", "norm.Scalar", [i(3, 4)])
    case("norm_dim", "norm.ScalarOpt_dim", [nx, 2.0, [1], True])
    case("norm_dim_p3", "norm.ScalarOpt_dim", [R(nx), 3.0, [0]])
    case("norm_dim_inf", "norm.ScalarOpt_dim", [nx, float("inf"), [-1]])
    case("norm_dim_none", "norm.ScalarOpt_dim", [nx, None, [0, 1]])
    case("frobenius_norm", "frobenius_norm.dim", [f(2, 3, 4), [1, 2], False])
    case("vector_norm", "linalg_vector_norm", [nx])
    case("vector_norm_0", "linalg_vector_norm", [nx, 0, [1]])
    case("vector_norm_neginf", "linalg_vector_norm", [nx, float("-inf"), [0], True])
    case("vector_norm_dtype", "linalg_vector_norm", [nx, 2, [1], False], {"dtype": torch.float64})
    case("cumprod", "cumprod", [f(3, 4, lo=0.5, hi=1.5), 1])
    case("cumprod_dim0", "cumprod", [R(f(3, 4)), 0])
    case("cumprod_int", "cumprod", [i(2, 4, lo=-2, hi=3), 1])
    case("cumprod_dtype", "cumprod", [f(5), 0], {"dtype": torch.float64})
    # ---- linear algebra
    case("dot", "dot", [f(4), f(4)])
    case("dot_2d", "dot", [f(2, 2), f(2, 2)])
    case("mv", "mv", [R(f(3, 4)), f(4)])
    case("outer", "outer", [f(3), f(4, dt=torch.float64)])
    case("outer_int", "outer", [i(2), i(3)])
    case("baddbmm", "baddbmm", [f(2, 3, 5), f(2, 3, 4), f(2, 4, 5)])
    case("baddbmm_scaled", "baddbmm", [f(1, 5), f(2, 3, 4), f(2, 4, 5)], {"beta": 0.5, "alpha": -2.0})
    nb = f(2, 3, 5)
    nb[0, 0, 0] = nan
    case("baddbmm_beta0", "baddbmm", [nb, f(2, 3, 4), f(2, 4, 5)], {"beta": 0.0})
    case("einsum_bmm", "einsum", ["bij,bjk->bik", [f(2, 3, 4), f(2, 4, 5)]])
    case("einsum_attn", "einsum", ["bhqd,bhkd->bhqk", [f(1, 2, 3, 4), f(1, 2, 5, 4)]])
    case("einsum_implicit", "einsum", ["ij,jk", [f(2, 3), f(3, 2)]])
    case("einsum_outer_sum", "einsum", ["i,j->", [f(3), f(4)]])
    case("einsum_transpose", "einsum", ["ij->ji", [R(f(2, 3, dt=torch.float64))]])
    case("einsum_three", "einsum", ["ab,bc,cd->ad", [f(2, 3), f(3, 4), f(4, 2)]])
    case("einsum_bad_dims", "einsum", ["ij,jk->ik", [f(2, 3), f(2, 3, 4)]])
    case("cdist", "cdist", [f(4, 3), f(5, 3)])
    case("cdist_batched_p1", "cdist", [f(2, 3, 2), f(2, 4, 2), 1.0])
    case("cdist_pinf", "cdist", [f(3, 2), f(2, 2), float("inf")])
    # ---- composites
    case("glu", "glu", [f(3, 6)])
    case("glu_dim0", "glu", [f(4, 3, dt=torch.float64), 0])
    case("glu_odd", "glu", [f(3, 5)])
    case("group_norm", "group_norm", [f(2, 4, 3), 2, f(4), f(4)])
    case("group_norm_4d_noaffine", "group_norm", [f(2, 6, 2, 2), 3])
    case("group_norm_bad", "group_norm", [f(2, 5, 3), 2])
    case("cosine_similarity", "cosine_similarity", [f(3, 4), f(3, 4)])
    case("cosine_similarity_bcast", "cosine_similarity", [f(2, 3, 4), f(3, 4), -1])
    case("cosine_similarity_zero", "cosine_similarity", [torch.zeros(2, 3), f(2, 3)])
    ls = f(3, 5, lo=-30, hi=30)
    case("log_sigmoid", "log_sigmoid", [ls])
    case("log_sigmoid_f64", "log_sigmoid", [f(2, 3, dt=torch.float64, lo=-5, hi=5)])
    case("selu", "selu", [f(3, 5, lo=-3, hi=3)])
    case("celu", "celu", [f(3, 5, lo=-3, hi=3), 0.7])
    case("celu_default", "celu", [f(3, 5, lo=-3, hi=3)])
    case("sgn", "sgn", [torch.tensor([-2.0, 0.0, -0.0, 3.0, nan])])
    case("sgn_int", "sgn", [i(4, lo=-3, hi=3)])
    # ---- losses
    a, b = f(3, 4), f(3, 4)
    for red in (0, 1, 2):
        case("mse_%d" % red, "mse_loss", [a, b, red])
        case("l1_%d" % red, "l1_loss", [a, b, red])
    case("smooth_l1", "smooth_l1_loss", [a, b, 1, 0.5])
    case("smooth_l1_none", "smooth_l1_loss", [a, b, 0])
    case("smooth_l1_beta0", "smooth_l1_loss", [a, b, 2, 0.0])
    case("huber", "huber_loss", [a, b, 1, 0.7])
    case("huber_none", "huber_loss", [R(a), b, 0, 1.5])
    case("mse_bcast", "mse_loss", [f(3, 1), f(4), 1])
    p = f(3, 4, lo=0.0, hi=1.0)
    p[0, 0], p[0, 1] = 0.0, 1.0
    t = (f(3, 4) > 0).float()
    case("bce", "binary_cross_entropy", [p, t])
    case("bce_weight_none", "binary_cross_entropy", [p, t, f(4, lo=0, hi=2), 0])
    case("bce_sum", "binary_cross_entropy", [p, f(3, 4, lo=0, hi=1), None, 2])
    case("bce_out_of_range", "binary_cross_entropy", [p + 1.5, t])
    lg = f(3, 4, lo=-20, hi=20)
    case("bce_logits", "binary_cross_entropy_with_logits", [lg, t])
    case("bce_logits_weights", "binary_cross_entropy_with_logits", [lg, t, f(4, lo=0, hi=2), f(4, lo=0.5, hi=3), 0])
    case("bce_logits_sum_f64", "binary_cross_entropy_with_logits", [f(5, dt=torch.float64), torch.rand(5, dtype=torch.float64, generator=g), None, None, 2])
    lo = f(4, 5)
    tg = torch.tensor([1, 0, 4, 2])
    case("nll", "nll_loss", [lo, tg])
    case("nll_weight_ignore", "nll_loss", [lo, tg, f(5, lo=0.1, hi=2), 1, 0])
    case("nll_none", "nll_loss", [lo, tg, None, 0])
    case("nll_1d", "nll_loss", [f(5), torch.tensor(3)])
    case("nll_oob", "nll_loss", [lo, torch.tensor([1, 0, 5, 2])])
    case("nll_nd", "nll_loss_nd", [f(2, 3, 4), i(2, 4, hi=3)])
    case("nll_nd_sum", "nll_loss_nd", [f(2, 3, 2, 2), i(2, 2, 2, hi=3), None, 2])
    case("ce", "cross_entropy_loss", [lo, tg])
    case("ce_ls", "cross_entropy_loss", [lo, tg, None, 1, -100, 0.2])
    case("ce_ls_weight_ignore", "cross_entropy_loss", [lo, tg, f(5, lo=0.1, hi=2), 1, 2, 0.1])
    case("ce_ls_none", "cross_entropy_loss", [lo, tg, None, 0, -100, 0.3])
    case("ce_ls_sum", "cross_entropy_loss", [lo, tg, None, 2, -100, 0.3])
    case("ce_nd", "cross_entropy_loss", [f(2, 3, 4), i(2, 4, hi=3)])
    case("ce_1d", "cross_entropy_loss", [f(5), torch.tensor(2)])
    case("ce_probs", "cross_entropy_loss", [lo, torch.softmax(f(4, 5), 1)])
    case("ce_probs_ls_weight", "cross_entropy_loss", [lo, torch.softmax(f(4, 5), 1), f(5, lo=0.5, hi=1.5), 1, -100, 0.1])
    case("ce_f64", "cross_entropy_loss", [f(3, 4, dt=torch.float64), torch.tensor([3, 0, 1])])
    # ---- in-place
    z = f(3, 4)
    case("add__Tensor", "add_.Tensor", [z, f(4)], {"alpha": 2})
    case("add__Scalar", "add_.Scalar", [z, 1.5, 2])
    case("add__int_float", "add_.Scalar", [i(2, 3), 0.5])
    case("add__bcast_self", "add_.Tensor", [f(4), f(3, 4)])
    case("sub__Tensor", "sub_.Tensor", [R(z), f(3, 4)])
    case("sub__Scalar", "sub_.Scalar", [i(2, 3), 2])
    case("mul__Tensor", "mul_.Tensor", [z, f(3, 1)])
    case("mul__Scalar", "mul_.Scalar", [z, -3])
    case("mul__int_bool", "mul_.Tensor", [i(2, 3), torch.tensor([True, False, True])])
    case("div__Tensor", "div_.Tensor", [z, f(4, lo=0.5, hi=2)])
    case("div__Scalar", "div_.Scalar", [z, 4])
    case("div__int", "div_.Scalar", [i(2, 2), 2])
    case("clamp_", "clamp_", [z, -0.5, 0.5])
    case("clamp__none", "clamp_", [z, None, 0.25])
    case("clamp__Tensor", "clamp_.Tensor", [z, f(4, lo=-1, hi=0), f(3, 4, lo=0, hi=1)])
    case("clamp_min_", "clamp_min_", [z, 0.0])
    case("clamp_max_", "clamp_max_", [i(2, 3), 2])
    for n in ("relu_", "sigmoid_", "tanh_", "silu_", "neg_", "exp_"):
        case(n, n, [f(2, 3)])
    case("sqrt_", "sqrt_", [f(2, 3, lo=0, hi=4)])
    case("sqrt__int", "sqrt_", [i(2, 3)])
    case("pow__Scalar", "pow_.Scalar", [f(2, 3, lo=0.1, hi=2), 2.5])
    case("masked_fill__Tensor", "masked_fill_.Tensor", [z, f(3, 4) > 0, torch.tensor(-1.0)])
    case("masked_fill__Scalar", "masked_fill_.Scalar", [R(z), f(3, 4) > 0, 7])
    case("addcmul_", "addcmul_", [z, f(3, 4), f(4)], {"value": 0.5})
    case("addcdiv_", "addcdiv_", [z, f(3, 4), f(3, 4, lo=1, hi=2)], {"value": -2})
    case("leaky_relu_", "leaky_relu_", [f(2, 3), 0.2])
    case("hardtanh_", "hardtanh_", [f(2, 3), -0.5, 0.5])
    case("elu_", "elu_", [f(2, 3), 0.8])
    case("gelu_", "gelu_", [f(2, 3)], {"approximate": "tanh"})
    case("fill__Scalar", "fill_.Scalar", [R(i(2, 3)), 4])
    case("fill__float_into_int", "fill_.Scalar", [i(2, 3), 2.7])
    case("zero_", "zero_", [f(2, 3)])
    case("copy_", "copy_", [f(2, 3), i(3)])
    case("copy__bad", "copy_", [f(2, 3), f(4)])

    # ---- ATen's internal and legacy overloads (k_compat.c); last, so the cases above keep their values
    case("_softmax", "_softmax", [f(3, 5), 1, False])
    case("_softmax_dim0", "_softmax", [R(f(3, 4, dt=torch.float64)), 0, False])
    case("_softmax_half_to_float", "_softmax", [f(2, 3), 1, True])
    case("_log_softmax", "_log_softmax", [f(3, 5), -1, False])
    case("_unsafe_view", "_unsafe_view", [f(2, 6), [3, 4]])
    case("_unsafe_view_infer", "_unsafe_view", [R(f(2, 3)), [-1]])
    case("_to_copy_dtype", "_to_copy", [f(2, 3)], {"dtype": torch.float64})
    case("_to_copy_same", "_to_copy", [i(2, 3)])
    for n in ("Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double"):
        case("_cast_" + n, "_cast_" + n, [f(2, 3, lo=0, hi=9)])
    case("_cast_Float_int", "_cast_Float", [i(2, 2)])
    case("native_layer_norm", "native_layer_norm", [f(2, 3, 4), [4], f(4), f(4), 1e-5])
    case("native_layer_norm_2d_noaffine", "native_layer_norm", [R(f(2, 3, 4)), [3, 4], None, None, 1e-3])
    case("native_layer_norm_f64", "native_layer_norm", [f(3, 5, dt=torch.float64), [5], f(5, dt=torch.float64), None, 1e-5])
    case("native_layer_norm_bad", "native_layer_norm", [f(2, 3), [4], None, None, 1e-5])
    case("native_dropout_eval", "native_dropout", [f(2, 3), 0.5, False])
    case("native_dropout_p0", "native_dropout", [f(2, 3), 0.0, True])
    case("native_dropout_p1", "native_dropout", [f(2, 3), 1.0, True])
    case("native_dropout_p0_none", "native_dropout", [f(2, 3), 0.0, None])
    case("nonzero", "nonzero", [torch.tensor([[0.0, 1.5, 0.0], [nan, 0.0, -2.0]])])
    case("nonzero_int_3d", "nonzero", [i(2, 2, 3, hi=2)])
    case("nonzero_empty", "nonzero", [torch.zeros(2, 3)])
    case("nonzero_0d", "nonzero", [torch.tensor(3.0)])
    case("adaptive_avg_pool2d", "adaptive_avg_pool2d", [f(2, 3, 7, 5), [3, 2]])
    case("adaptive_avg_pool2d_3d", "adaptive_avg_pool2d", [R(f(3, 4, 4)), [1, 1]])
    case("adaptive_avg_pool2d_up", "adaptive_avg_pool2d", [f(1, 2, 3, 3, dt=torch.float64), [5, 4]])
    case("adaptive_avg_pool2d_bad_rank", "adaptive_avg_pool2d", [f(4, 4), [2, 2]])
    case("bitwise_left_shift_Tensor", "bitwise_left_shift.Tensor", [i(2, 3, lo=-8, hi=8), i(3, hi=5)])
    case("bitwise_left_shift_Scalar", "bitwise_left_shift.Tensor_Scalar", [i(2, 3, lo=-8, hi=8), 3])
    case("bitwise_right_shift_Tensor", "bitwise_right_shift.Tensor", [i(2, 3, lo=-64, hi=64), i(2, 3, hi=7)])
    case("bitwise_right_shift_Scalar", "bitwise_right_shift.Tensor_Scalar", [i(2, 3, lo=-64, hi=64).to(torch.int32), 2])

    # ---- tile, shrinks, scans, embedding_bag, im2col/col2im, distance and ranking losses
    # (appended last, so the cases above keep their values)
    case("tile", "tile", [f(2, 3), [2, 2]])
    case("tile_short", "tile", [R(f(2, 3)), [3]])
    case("tile_long", "tile", [i(2, 2), [2, 1, 2]])
    case("tile_empty_dims", "tile", [f(2, 3), []])
    case("tile_neg", "tile", [f(2, 3), [-1, 2]])
    sh = f(3, 5)
    sh[0, 0], sh[0, 1], sh[0, 2], sh[0, 3] = nan, 0.5, -0.5, float("inf")
    case("hardshrink", "hardshrink", [sh])
    case("hardshrink_lambd", "hardshrink", [R(sh), 1.25])
    case("hardshrink_f64_neg_lambd", "hardshrink", [f(2, 3, dt=torch.float64), -1])
    case("hardshrink_f16", "hardshrink", [f(2, 3, dt=torch.float16), 0.75])
    case("hardshrink_int", "hardshrink", [i(2, 3)])
    case("softshrink", "softshrink", [sh])
    case("softshrink_lambd", "softshrink", [R(sh), 1.25])
    case("softshrink_f64", "softshrink", [f(2, 3, dt=torch.float64), 0])
    case("softshrink_f16", "softshrink", [f(2, 3, dt=torch.float16), 0.75])
    case("softshrink_neg_lambd", "softshrink", [f(2, 3), -1.0])
    cm = f(3, 6)
    cm[0, 2] = cm[1, 4] = nan
    cm[2, 1] = cm[2, 3] = cm[2, 4] = 1.0
    for n in ("cummax", "cummin"):
        case(n, n, [cm, 1])
        case(n + "_dim0", n, [R(cm), 0])
        case(n + "_neg_dim_3d", n, [f(2, 3, 4, dt=torch.float64), -2])
        case(n + "_int_ties", n, [i(3, 6, lo=-2, hi=2), 1])
        case(n + "_bool", n, [f(2, 5) > 0, 1])
        case(n + "_0d", n, [torch.tensor(2.5), 0])
        case(n + "_empty", n, [torch.zeros(0, 3), 0])
        case(n + "_bad_dim", n, [cm, 2])
    lc = f(3, 6, lo=-5, hi=5)
    lc[0, 1], lc[1, 0], lc[1, 1], lc[2, 2] = nan, float("-inf"), float("-inf"), float("inf")
    case("logcumsumexp", "logcumsumexp", [lc, 1])
    case("logcumsumexp_dim0", "logcumsumexp", [R(lc), 0])
    case("logcumsumexp_f64_3d", "logcumsumexp", [f(2, 3, 4, lo=-30, hi=30, dt=torch.float64), -1])
    case("logcumsumexp_f16", "logcumsumexp", [f(2, 5, dt=torch.float16), 1])
    case("logcumsumexp_0d", "logcumsumexp", [torch.tensor(-1.5), 0])
    case("logcumsumexp_int", "logcumsumexp", [i(2, 3), 1])
    # embedding_bag: the weight does not require grad (bag_size of mode sum is then zeros)
    ew = f(7, 3)
    ew[2, 0] = nan
    eidx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 0, 6, 6])
    eoff = torch.tensor([0, 2, 2, 5])
    EB = "embedding_bag.padding_idx"
    for mode in (0, 1, 2):
        case("embedding_bag_mode%d" % mode, EB, [ew, eidx, eoff, False, mode, False, None, False, None])
        case("embedding_bag_mode%d_pad" % mode, EB, [ew, eidx, eoff, False, mode, False, None, False, 2])
        case("embedding_bag_mode%d_last_offset" % mode, EB, [ew, eidx, torch.tensor([0, 2, 2, 5, 10]), False, mode, False, None, True, None])
    case("embedding_bag_pad_negative", EB, [ew, eidx, eoff, False, 1, False, None, False, -1])
    case("embedding_bag_psw", EB, [ew, eidx, eoff, False, 0, False, f(10), False, None])
    case("embedding_bag_psw_pad", EB, [ew, eidx, eoff, False, 0, False, f(10), False, 4])
    case("embedding_bag_f64_sum", EB, [f(7, 3, dt=torch.float64), eidx, eoff, False, 0, False, None, False, None])
    case("embedding_bag_noncontig_sum", EB, [R(f(7, 3)), eidx, eoff, False, 0, False, None, False, None])
    case("embedding_bag_f16_mean", EB, [f(7, 3, dt=torch.float16), eidx, eoff, False, 1, False, None, False, None])
    case("embedding_bag_int32", EB, [ew, eidx.int(), eoff.int(), False, 2, False, None, False, None])
    case("embedding_bag_int32_mixed", EB, [ew, eidx.int(), eoff, False, 1, False, None, False, None])
    case("embedding_bag_all_padding", EB, [ew, torch.tensor([2, 2, 2]), torch.tensor([0, 1]), False, 2, False, None, False, 2])
    case("embedding_bag_empty_indices", EB, [ew, torch.tensor([], dtype=torch.long), torch.tensor([0, 0]), False, 1, False, None, False, None])
    case("embedding_bag_default", "embedding_bag", [ew, eidx, eoff])
    case("embedding_bag_default_max", "embedding_bag", [ew, eidx, eoff, True, 2, False, None, False])
    case("embedding_bag_oob", EB, [ew, torch.tensor([7]), torch.tensor([0]), False, 0, False, None, False, None])
    case("embedding_bag_offset0", EB, [ew, eidx, torch.tensor([1, 3]), False, 0, False, None, False, None])
    case("embedding_bag_offset_past_end", EB, [ew, eidx, torch.tensor([0, 11]), False, 0, False, None, False, None])
    case("embedding_bag_psw_mean", EB, [ew, eidx, eoff, False, 1, False, f(10), False, None])
    case("embedding_bag_psw_size", EB, [ew, eidx, eoff, False, 0, False, f(9), False, None])
    case("embedding_bag_pad_range", EB, [ew, eidx, eoff, False, 1, False, None, False, 7])
    case("embedding_bag_int_weight", EB, [i(7, 3), eidx, eoff, False, 0, False, None, False, None])
    case("embedding_bag_float_indices", EB, [ew, eidx.float(), eoff, False, 0, False, None, False, None])
    # im2col / col2im
    ux = f(2, 3, 5, 6)
    case("im2col", "im2col", [ux, [2, 2], [1, 1], [0, 0], [1, 1]])
    case("im2col_strided_padded", "im2col", [R(ux), [2, 3], [2, 1], [1, 0], [2, 2]])
    case("im2col_3d_f64", "im2col", [f(2, 4, 4, dt=torch.float64), [3, 3], [1, 1], [1, 1], [1, 1]])
    case("im2col_f16", "im2col", [f(1, 2, 3, 3, dt=torch.float16), [2, 2], [1, 1], [0, 0], [1, 1]])
    case("im2col_batch0", "im2col", [torch.zeros(0, 3, 4, 4), [2, 2], [1, 1], [0, 0], [1, 1]])
    case("im2col_too_big", "im2col", [ux, [6, 2], [1, 1], [0, 0], [1, 1]])
    case("im2col_bad_stride", "im2col", [ux, [2, 2], [1, 1], [0, 0], [0, 1]])
    case("im2col_int", "im2col", [i(1, 1, 3, 3), [2, 2], [1, 1], [0, 0], [1, 1]])
    case("im2col_2d", "im2col", [f(4, 4), [2, 2], [1, 1], [0, 0], [1, 1]])
    case("col2im", "col2im", [f(2, 12, 20), [5, 6], [2, 2], [1, 1], [0, 0], [1, 1]])
    case("col2im_strided_padded", "col2im", [R(f(2, 18, 6)), [5, 6], [2, 3], [2, 1], [1, 0], [2, 2]])
    case("col2im_2d_f64", "col2im", [f(36, 16, dt=torch.float64), [4, 4], [3, 3], [1, 1], [1, 1], [1, 1]])
    case("col2im_not_divisible", "col2im", [f(2, 11, 20), [5, 6], [2, 2], [1, 1], [0, 0], [1, 1]])
    case("col2im_wrong_blocks", "col2im", [f(2, 12, 19), [5, 6], [2, 2], [1, 1], [0, 0], [1, 1]])
    # distances and losses
    la, lb, lc2 = f(4, 5), f(4, 5), f(4, 5)
    lsm = torch.log_softmax(f(4, 5), 1)
    tp = torch.softmax(f(4, 5), 1)
    tp[0, 0] = 0.0
    for red in (0, 1, 2):
        case("kl_div_%d" % red, "kl_div", [lsm, tp, red])
        case("kl_div_log_target_%d" % red, "kl_div", [lsm, torch.log(tp), red], {"log_target": True})
    case("kl_div_negative_target", "kl_div", [lsm[0], torch.tensor([0.5, -0.25, 0.0, nan, 2.0]), 0])
    case("kl_div_bcast_f64", "kl_div", [f(3, 4, dt=torch.float64), torch.rand(4, dtype=torch.float64, generator=g), 2])
    case("pairwise_distance", "pairwise_distance", [la, lb])
    case("pairwise_distance_p1_keepdim", "pairwise_distance", [R(la), lb, 1.0, 1e-6, True])
    case("pairwise_distance_p3_bcast", "pairwise_distance", [la, f(5), 3.0, 0.1])
    case("pairwise_distance_pinf", "pairwise_distance", [la, lb, float("inf")])
    case("pairwise_distance_p0", "pairwise_distance", [la, torch.round(la), 0.0, 0.0])
    case("pairwise_distance_1d_f64", "pairwise_distance", [f(5, dt=torch.float64), f(5, dt=torch.float64)])
    case("triplet", "triplet_margin_loss", [la, lb, lc2])
    case("triplet_swap_p1_sum", "triplet_margin_loss", [la, lb, lc2, 0.5, 1.0, 1e-6, True, 2])
    case("triplet_none_f64", "triplet_margin_loss", [f(3, 4, dt=torch.float64), f(3, 4, dt=torch.float64), f(3, 4, dt=torch.float64), 2.0, 3.0, 1e-3, False, 0])
    case("triplet_dims", "triplet_margin_loss", [la, lb, f(5)])
    mt = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
    case("margin_ranking", "margin_ranking_loss", [f(6), f(6), mt])
    case("margin_ranking_none_margin", "margin_ranking_loss", [f(6), f(6), mt, 0.5, 0])
    case("margin_ranking_nan_sum", "margin_ranking_loss", [torch.tensor([1.0, nan, 0.0]), torch.tensor([0.0, 0.0, nan]), mt[:3], 0.2, 2])
    case("soft_margin", "soft_margin_loss", [f(3, 4, lo=-60, hi=60), (f(3, 4) > 0).float() * 2 - 1])
    case("soft_margin_none_f64", "soft_margin_loss", [f(5, dt=torch.float64), torch.tensor([1, -1, 1, 1, -1]), 0])
    case("soft_margin_sum", "soft_margin_loss", [R(f(3, 4)), torch.ones(4), 2])
    ht = torch.tensor([1.0, -1.0, -1.0, 1.0, 0.0, -1.0])
    case("hinge_embedding", "hinge_embedding_loss", [f(6), ht])
    case("hinge_embedding_margin_none", "hinge_embedding_loss", [f(6), ht, 0.5, 0])
    case("hinge_embedding_bcast_sum", "hinge_embedding_loss", [f(2, 6), ht, 1.0, 2])
    ct = torch.tensor([1.0, -1.0, -1.0, 1.0])
    case("cosine_embedding", "cosine_embedding_loss", [la, lb, ct])
    case("cosine_embedding_margin_none", "cosine_embedding_loss", [R(la), lb, ct, 0.3, 0])
    case("cosine_embedding_0d_target", "cosine_embedding_loss", [f(5, dt=torch.float64), f(5, dt=torch.float64), torch.tensor(-1.0, dtype=torch.float64), -0.5, 2])
    case("cosine_embedding_zeros", "cosine_embedding_loss", [torch.zeros(2, 3), f(2, 3), torch.tensor([1.0, -1.0])])
    case("cosine_embedding_bad_target", "cosine_embedding_loss", [la, lb, torch.ones(4, 1)])
    case("cosine_embedding_bad_input", "cosine_embedding_loss", [f(2, 4, 5), f(2, 4, 5), ct])
    pr = f(3, 4, lo=0, hi=4)
    case("poisson_nll", "poisson_nll_loss", [f(3, 4), pr, True, False, 1e-8, 1])
    case("poisson_nll_rate_full_none", "poisson_nll_loss", [f(3, 4, lo=0, hi=3), pr, False, True, 1e-8, 0])
    case("poisson_nll_full_sum_f64", "poisson_nll_loss", [f(6, dt=torch.float64), f(6, lo=0, hi=5, dt=torch.float64), True, True, 1e-8, 2])
    case("poisson_nll_zero_rate", "poisson_nll_loss", [torch.tensor([0.0, 1.0]), torch.tensor([2.0, 0.0]), False, False, 0.5, 0])
    mx = f(3, 4)
    mtg = torch.tensor([3, 0, 2])
    case("multi_margin", "multi_margin_loss", [mx, mtg])
    case("multi_margin_p2_weight_none", "multi_margin_loss", [R(mx), mtg, 2, 0.5, f(4, lo=0.5, hi=2), 0])
    case("multi_margin_sum_f64", "multi_margin_loss", [f(2, 5, dt=torch.float64), torch.tensor([4, 1]), 1, 1.5, None, 2])
    case("multi_margin_1d_none", "multi_margin_loss", [f(4), torch.tensor([2]), 1, 1, None, 0])
    case("multi_margin_1d_0d_target", "multi_margin_loss", [f(4), torch.tensor(1), 1, 1, None, 0])
    case("multi_margin_p3", "multi_margin_loss", [mx, mtg, 3])
    case("multi_margin_oob", "multi_margin_loss", [mx, torch.tensor([4, 0, 1])])
    case("multi_margin_target_size", "multi_margin_loss", [mx, torch.tensor([1])])
    case("multi_margin_float_target", "multi_margin_loss", [mx, mtg.float()])
    mlt = torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]])
    case("multilabel_margin", "multilabel_margin_loss", [mx, mlt])
    case("multilabel_margin_none", "multilabel_margin_loss", [R(mx), mlt, 0])
    case("multilabel_margin_sum_repeats_f64", "multilabel_margin_loss", [f(2, 4, dt=torch.float64), torch.tensor([[1, 1, 1, 1], [0, 3, -1, 2]]), 2])
    case("multilabel_margin_1d_none", "multilabel_margin_loss", [f(4), torch.tensor([2, 0, -1, 3]), 0])
    case("multilabel_margin_oob", "multilabel_margin_loss", [mx, torch.tensor([[4, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0]])])
    case("multilabel_margin_shape", "multilabel_margin_loss", [mx, mlt[:, :3]])
    case("multilabel_margin_forward", "multilabel_margin_loss_forward", [mx, mlt, 1])
    case("multilabel_margin_forward_none", "multilabel_margin_loss_forward", [mx, mlt, 0])
    clp = torch.log_softmax(f(6, 3, 5, lo=-3, hi=3), 2)
    ctg = torch.tensor([[1, 2, 2], [3, 1, 4], [4, 0, 0]])
    case("ctc_loss_mean", "ctc_loss.IntList", [clp, ctg, [6, 5, 2], [3, 2, 1]])
    case("ctc_loss_none_zero_infinity", "ctc_loss.IntList", [clp, ctg, [6, 1, 2], [3, 2, 1], 0, 0, True])
    case("ctc_loss_none_inf", "ctc_loss.IntList", [clp, ctg, [6, 1, 2], [3, 2, 1], 0, 0, False])
    case("ctc_loss_tensor_sum_concat", "ctc_loss.Tensor", [R(clp), torch.tensor([1, 3, 3, 4, 1, 4]), torch.tensor([6, 5, 2]), torch.tensor([3, 2, 1]), 2, 2])
    case("ctc_loss_tensor_f64_empty_target", "ctc_loss.Tensor", [clp.double(), ctg, torch.tensor([6, 4, 3], dtype=torch.int32), torch.tensor([3, 0, 1]), 0, 1])
    case("ctc_loss_unbatched", "ctc_loss.IntList", [clp[:, 0], torch.tensor([1, 2]), [6], [2], 0, 0])
    case("ctc_loss_float_targets", "ctc_loss.IntList", [clp, ctg.float(), [6, 5, 2], [3, 2, 1]])
    case("ctc_loss_input_too_long", "ctc_loss.IntList", [clp, ctg, [7, 5, 2], [3, 2, 1]])
    case("ctc_loss_target_too_long", "ctc_loss.IntList", [clp, ctg, [6, 5, 2], [4, 2, 1]])
    case("ctc_loss_lengths_size", "ctc_loss.IntList", [clp, ctg, [6, 5], [3, 2, 1]])
    case("ctc_loss_blank_range", "ctc_loss.IntList", [clp, ctg, [6, 5, 2], [3, 2, 1], 5])
    case("ctc_loss_float_lengths", "ctc_loss.Tensor", [clp, ctg, torch.tensor([6.0, 5.0, 2.0]), torch.tensor([3, 2, 1])])
    case("ctc_loss_f16", "ctc_loss.IntList", [clp.half(), ctg, [6, 5, 2], [3, 2, 1]])
    # full lengths: every entry of log_alpha is defined (ATen leaves the unreached ones uninitialized)
    case("_ctc_loss", "_ctc_loss", [clp, ctg, [6, 6, 6], [3, 3, 3]])
    case("_ctc_loss_tensor", "_ctc_loss.Tensor", [clp.double(), ctg, torch.tensor([6, 6, 6]), torch.tensor([3, 3, 3]), 4, True])

    # scatter_ in place (pad_packed_sequence's invert_permutation writes an arange this way); after the
    # cases above so that they keep their values
    case("scatter__src", "scatter_.src", [f(3, 5), 1, torch.tensor([[0, 4], [1, 1], [3, 2]]), f(3, 2)])
    case("scatter__value_int", "scatter_.value", [i(2, 3), 0, torch.tensor([[1, 0, 1]]), 9])
    # ---- einsum with a diagonal, trace, diag, diag_embed, diagflat (drawn last: earlier cases keep their data)
    case("einsum_trace", "einsum", ["ii", [f(3, 3)]])
    case("einsum_diag", "einsum", ["ii->i", [R(f(4, 4, dt=torch.float64))]])
    case("einsum_batch_diag", "einsum", ["bii,bij->bj", [f(2, 3, 3), f(2, 3, 4)]])
    case("einsum_diag_3", "einsum", ["iji->j", [f(3, 2, 3)]])
    case("einsum_diag_sizes", "einsum", ["ii->i", [f(3, 4)]])
    case("trace", "trace", [f(3, 4)])
    case("trace_int", "trace", [i(3, 3, lo=-5, hi=5)])
    case("trace_vector", "trace", [f(3)])
    case("trace_backward", "trace_backward", [torch.tensor(2.5), [3, 2]])
    case("diag_vector", "diag", [f(3), 1])
    case("diag_vector_neg", "diag", [R(f(2, dt=torch.float64)), -2])
    case("diag_matrix", "diag", [R(f(3, 4)), -1])
    case("diag_matrix_offset2", "diag", [f(2, 3), 2])
    case("diag_3d", "diag", [f(2, 2, 2)])
    case("diag_backward_vector", "diag_backward", [f(4, 4), [3], 1])
    case("diag_backward_matrix", "diag_backward", [f(2), [3, 4], -1])
    case("diag_embed", "diag_embed", [f(2, 3)])
    case("diag_embed_offset", "diag_embed", [R(f(2, 3, dt=torch.float64)), -1, 0, 2])
    case("diag_embed_same_dims", "diag_embed", [f(2, 3), 0, 1, 1])
    case("diagflat", "diagflat", [f(2, 2), 1])
    # ---- searchsorted, bucketize
    nanv = torch.tensor([[0.0, 2.0, 2.5], [3.0, 4.0, nan]])
    seq = torch.tensor([1.0, 2.0, 2.0, 3.0])
    case("searchsorted", "searchsorted.Tensor", [seq, nanv])
    case("searchsorted_right", "searchsorted.Tensor", [seq, nanv], kw={"right": True})
    case("searchsorted_side_int32", "searchsorted.Tensor", [seq, nanv], kw={"out_int32": True, "side": "right"})
    case("searchsorted_rows", "searchsorted.Tensor", [torch.tensor([[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]),
                                                      torch.tensor([[3.0, 3.0], [3.0, 7.0]])])
    case("searchsorted_sorter", "searchsorted.Tensor", [torch.tensor([3.0, 1.0, 2.0]), torch.tensor([2.5, 0.0, 1.0])],
         kw={"sorter": torch.tensor([1, 2, 0])})
    case("searchsorted_mixed", "searchsorted.Tensor", [seq.double(), torch.tensor([2, 3])])
    case("searchsorted_int", "searchsorted.Tensor", [torch.tensor([-5, 0, 0, 9]), torch.tensor([[0, 10], [-6, 1]])],
         kw={"right": True})
    case("searchsorted_scalar", "searchsorted.Scalar", [seq, 2.0])
    case("searchsorted_bad_rows", "searchsorted.Tensor", [torch.tensor([[1.0, 3.0], [2.0, 4.0]]), torch.tensor([3.0])])
    case("searchsorted_opposite", "searchsorted.Tensor", [seq, nanv], kw={"right": True, "side": "left"})
    case("bucketize", "bucketize.Tensor", [f(3, 4), torch.tensor([-1.0, 0.0, 0.5, 1.5])])
    case("bucketize_right_int32", "bucketize.Tensor", [torch.tensor([1, 5, 3]), torch.tensor([1.5, 3.0])],
         kw={"out_int32": True, "right": True})
    case("bucketize_scalar", "bucketize.Scalar", [2.5, seq])
    case("bucketize_2d_boundaries", "bucketize.Tensor", [f(3), torch.tensor([[1.0, 2.0]])])
    # ---- decompositions
    sing = torch.tensor([[1.0, 2.0], [2.0, 4.0]])
    spd = torch.tensor([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    case("linalg_inv", "linalg_inv", [f(2, 3, 3)])
    case("inverse_f64", "inverse", [R(f(4, 4, dt=torch.float64))])
    case("linalg_inv_singular", "linalg_inv", [sing])
    case("linalg_inv_ex", "linalg_inv_ex", [f(2, 2, 2)])
    case("linalg_inv_int", "linalg_inv", [i(2, 2)])
    case("linalg_inv_not_square", "linalg_inv", [f(2, 3)])
    case("det", "det", [f(2, 3, 3)])
    case("linalg_det_singular", "linalg_det", [sing])
    case("linalg_det_0x0", "linalg_det", [f(2, 0, 0)])
    case("slogdet", "slogdet", [torch.stack([f(3, 3), -torch.eye(3), sing.new_zeros(3, 3)])])
    case("linalg_slogdet", "linalg_slogdet", [R(f(3, 3, dt=torch.float64))])
    case("logdet", "logdet", [torch.stack([spd, -torch.eye(3), torch.zeros(3, 3)])])
    case("linalg_solve", "linalg_solve", [f(2, 3, 3), f(3, 2)])
    case("linalg_solve_vector", "linalg_solve", [f(2, 3, 3), f(2, 3)])
    case("linalg_solve_1d", "linalg_solve", [R(f(3, 3, dt=torch.float64)), f(3, dt=torch.float64)])
    case("linalg_solve_singular", "linalg_solve", [sing, f(2, 1)])
    case("linalg_solve_bad_rows", "linalg_solve", [f(3, 3), f(2, 4)])
    case("linalg_cholesky", "linalg_cholesky", [torch.stack([spd, torch.eye(3) * 2])])
    case("linalg_cholesky_upper", "linalg_cholesky", [spd.double()], kw={"upper": True})
    case("cholesky_upper", "cholesky", [spd, True])
    case("linalg_cholesky_not_pd", "linalg_cholesky", [sing])
    # ---- linalg.norm, linalg.matrix_norm
    m34 = f(2, 3, 4)
    case("linalg_norm", "linalg_norm", [m34])
    case("linalg_norm_dim", "linalg_norm", [m34, None, [-1], True])
    case("linalg_norm_ord1_dim", "linalg_norm", [m34, 1, [1]])
    case("linalg_norm_inf_vector", "linalg_norm", [f(5), float("inf")])
    case("linalg_norm_matrix_ord", "linalg_norm", [f(3, 4), -1])
    case("linalg_norm_matrix_dims", "linalg_norm", [m34, float("-inf"), [0, 2], True])
    case("linalg_norm_fro", "linalg_norm.ord_str", [R(f(3, 4, dt=torch.float64)), "fro"])
    case("linalg_norm_fro_dims", "linalg_norm.ord_str", [m34, "fro", [2, 0]])
    case("linalg_norm_dtype", "linalg_norm", [m34, 3.0, [2], False], kw={"dtype": torch.float64})
    case("linalg_norm_3d_ord", "linalg_norm", [m34, 2])
    case("linalg_matrix_norm", "linalg_matrix_norm", [m34, 1])
    case("linalg_matrix_norm_inf", "linalg_matrix_norm", [m34, float("inf"), [-1, -2]])
    case("linalg_matrix_norm_fro", "linalg_matrix_norm.str_ord", [m34])
    case("linalg_matrix_norm_same_dims", "linalg_matrix_norm", [m34, 1, [1, 1]])
    # ---- index_add, in-place scatter_add_ / index_add_, rrelu in eval, glu of an empty batch
    case("index_add", "index_add", [f(4, 3), 0, torch.tensor([0, 2, 0]), f(3, 3)])
    case("index_add_alpha_dim1", "index_add", [R(f(2, 4, dt=torch.float64)), -1, torch.tensor([3, 1], dtype=torch.int32),
                                               f(2, 2, dt=torch.float64)], kw={"alpha": 2.5})
    case("index_add_int", "index_add", [i(3, 2), 0, torch.tensor([1, 1]), i(2, 2)])
    case("index_add_oob", "index_add", [f(3, 2), 0, torch.tensor([3]), f(1, 2)])
    case("index_add_bad_source", "index_add", [f(3, 2), 0, torch.tensor([0, 1]), f(3, 2)])
    case("index_add_2d_index", "index_add", [f(3, 2), 0, torch.tensor([[0]]), f(1, 2)])
    case("scatter_add_", "scatter_add_", [f(3, 4), 1, torch.tensor([[0, 0], [3, 1], [2, 2]]), f(3, 2)])
    case("index_add_", "index_add_", [f(4, 3), 1, torch.tensor([2, 2]), f(4, 2)])
    case("rrelu_eval", "rrelu", [f(3, 4)])
    case("rrelu_eval_bounds", "rrelu", [R(f(2, 3, dt=torch.float64)), 0.2, 0.6, False])
    case("glu_empty_batch", "glu", [f(0, 16, 10), 1])
    case("bilinear", "bilinear", [f(4, 3), f(4, 2), f(5, 3, 2), f(5)])
    case("bilinear_3d_nobias", "bilinear", [R(f(2, 3, 3, dt=torch.float64)), f(2, 3, 4, dt=torch.float64),
                                            f(2, 3, 4, dt=torch.float64), None])
    case("bilinear_bad_weight", "bilinear", [f(4, 3), f(4, 2), f(5, 2, 3), None])
    inf = float("inf")
    case("logaddexp", "logaddexp", [torch.tensor([[0.0, inf, -inf, 1.0], [inf, -inf, nan, -3.0]]),
                                    torch.tensor([2.0, inf, -inf, -50.0])])
    case("logaddexp_broadcast", "logaddexp", [f(3, 4, lo=-30, hi=30), f(4)])
    case("logaddexp2", "logaddexp2", [R(f(2, 3, dt=torch.float64)), torch.tensor([[1.0], [-inf]], dtype=torch.float64)])
    case("logaddexp_int", "logaddexp", [i(2), i(2)])
    # ---- order statistics (no ties: PyTorch leaves which tied index wins unspecified)
    onan = torch.tensor([[1.0, nan, 3.0, -2.0], [5.0, 0.5, -1.0, 2.0], [nan, 4.0, nan, 0.0]])
    case("kthvalue", "kthvalue", [f(3, 5), 2, 1])
    case("kthvalue_keepdim_dim0", "kthvalue", [R(f(4, 3, dt=torch.float64)), 4, 0, True])
    case("kthvalue_k_out_of_range", "kthvalue", [f(3, 5), 6])
    case("median_dim", "median.dim", [onan, 1])
    case("median_dim_keepdim", "median.dim", [f(2, 4, 3), 1, True])
    case("nanmedian_dim", "nanmedian.dim", [onan, -1])
    case("median_all", "median", [f(3, 5)])
    case("median_all_int", "median", [torch.tensor([[7, -3, 2], [9, 0, 5]])])
    case("median_all_nan", "median", [onan])
    case("nanmedian_all", "nanmedian", [onan])
    case("median_dim_empty", "median.dim", [f(2, 0), 1])
    # ---- unique (k_unique.c). sorted=True only, and no NaN in the sorting forms: PyTorch 1.13's CPU
    # order is a hash set's for sorted=False and undefined with NaN (test_ops_extra.c checks fusebox's
    # choices there by literal values)
    uv = torch.tensor([[3, -1, 3, 7], [0, 7, -1, 3], [2, 2, 9, 0]])
    case("unique2_all", "_unique2", [uv, True, True, True])
    case("unique2_values_only", "_unique2", [R(uv), True, False, False])
    case("unique2_counts", "_unique2", [f(5, 4, lo=-2, hi=2).round(), True, False, True])
    case("unique2_f64_zeros", "_unique2", [torch.tensor([1.0, -0.0, 0.0, -0.0, float("inf"), -float("inf"), 1.0],
                                                        dtype=torch.float64), True, True, True])
    case("unique2_int64_big", "_unique2", [torch.tensor([2**60 + 1, 2**60, 2**60 + 1, -2**62]), True, True, True])
    case("unique2_i32", "_unique2", [i(4, 3, lo=-2, hi=2).int(), True, True, True])
    case("unique2_u8", "_unique2", [torch.tensor([3, 1, 3, 250], dtype=torch.uint8), True, False, True])
    case("unique2_bool", "_unique2", [torch.tensor([[True, False], [True, True]]), True, True, True])
    case("unique2_0d", "_unique2", [torch.tensor(2.5), True, True, True])
    case("unique2_empty", "_unique2", [f(2, 0, 3), True, True, True])
    case("unique2_half", "_unique2", [f(3, dt=torch.float16), True, True, True])
    case("unique_inverse", "_unique", [R(i(3, 4, lo=0, hi=3)), True, True])
    case("unique_no_inverse", "_unique", [i(6, lo=0, hi=3), True, False])
    case("unique_consecutive", "unique_consecutive", [torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]), True, True])
    case("unique_consecutive_flags_off", "unique_consecutive", [torch.tensor([1, 1, 2, 2, 3, 1, 1, 2])])
    case("unique_consecutive_2d_nan", "unique_consecutive",
         [torch.tensor([[nan, nan, 1.0], [1.0, -0.0, 0.0]]), True, True])
    case("unique_consecutive_0d", "unique_consecutive", [torch.tensor(3.0), True, True])
    case("unique_consecutive_dim", "unique_consecutive", [torch.tensor([[1, 1], [1, 1], [2, 2], [1, 1]]), True, True, 0])
    case("unique_consecutive_dim1", "unique_consecutive",
         [R(torch.tensor([[1.0, 1.0, 2.0], [3.0, 3.0, 2.0]])), False, False, 1])
    case("unique_consecutive_dim_0d", "unique_consecutive", [torch.tensor(3.0), True, True, 0])
    case("unique_consecutive_half", "unique_consecutive", [f(3, dt=torch.float16), True, True])
    um = torch.tensor([[1, 2], [3, 4], [1, 2], [0, 9]])
    case("unique_dim0", "unique_dim", [um, 0, True, True, True])
    case("unique_dim1", "unique_dim", [R(um), 1, True, True, True])
    case("unique_dim_neg", "unique_dim", [torch.tensor([[2, 1], [1, 5], [2, 1]]), -1, True, False, False])
    case("unique_dim_3d", "unique_dim", [torch.arange(24).reshape(2, 3, 4) % 3, 2, True, True, True])
    case("unique_dim_f32", "unique_dim", [torch.tensor([[2.0, 1.0], [1.0, 1.0], [-0.0, 2.0], [0.0, 2.0]]), 0])
    case("unique_dim_nan_rows", "unique_dim", [torch.tensor([[1.0, nan], [1.0, nan]]), 0, True, True, True])
    case("unique_dim_bool", "unique_dim", [torch.tensor([[True, False], [True, False], [False, False]]), 0])
    case("unique_dim_empty_dim", "unique_dim", [f(0, 3), 0, True, True, True])
    case("unique_dim_empty_other", "unique_dim", [f(3, 0), 0, True, True, True])
    case("unique_dim_0d", "unique_dim", [torch.tensor(3.0), 0])
    case("unique_dim_out_of_range", "unique_dim", [um, 2])
    case("unique_dim_half", "unique_dim", [f(3, 1, dt=torch.float16), 0])
    case("unique_dim_consecutive", "unique_dim_consecutive", [torch.tensor([[2, 1], [2, 1], [1, 5], [2, 1]]), 0])
    case("unique_dim_consecutive_dim1", "unique_dim_consecutive", [R(um), 1, True, True])
    case("unique_dim_consecutive_empty", "unique_dim_consecutive", [f(0, 3), 0, True, True])

    # ---- pdist and chained products (k_chain.c)
    case("pdist_p2", "pdist", [f(4, 3), 2.0])
    case("pdist_p1_f64_noncontig", "pdist", [R(f(4, 3, dt=torch.float64)), 1.0])
    case("pdist_p0_ties", "pdist", [torch.tensor([[1.0, 2.0, 3.0], [1.0, 0.0, 3.0], [1.0, 2.0, 3.0]]), 0.0])
    case("pdist_inf", "pdist", [f(5, 2), float("inf")])
    case("pdist_p_half", "pdist", [f(4, 3, dt=torch.float64), 0.5])
    case("pdist_p3", "pdist", [f(3, 4), 3.0])
    case("pdist_p1_5", "pdist", [f(3, 2, dt=torch.float64), 1.5])
    case("pdist_default_p", "pdist", [f(3, 2)])
    case("pdist_one_row", "pdist", [f(1, 3), 2.0])
    case("pdist_no_rows", "pdist", [f(0, 3), 2.0])
    case("pdist_no_cols", "pdist", [f(3, 0), 2.0])
    case("pdist_1d", "pdist", [f(4), 2.0])
    case("pdist_3d", "pdist", [f(2, 2, 2), 2.0])
    case("pdist_int", "pdist", [i(3, 2), 2.0])
    case("pdist_half", "pdist", [f(3, 2, dt=torch.float16), 2.0])
    case("pdist_negative_p", "pdist", [f(3, 2), -1.0])
    case("pdist_forward", "_pdist_forward", [f(4, 3), 2.0])
    case("pdist_forward_noncontig", "_pdist_forward", [R(f(4, 3)), 2.0])
    for k, p in enumerate([2.0, 1.0, 0.5, 3.0, float("inf"), 0.0, 1.5]):
        x = torch.tensor([[0.5, -1.0, 2.0], [0.5, 1.0, -0.25], [1.5, -1.0, 2.0], [0.5, -1.0, 2.0]], dtype=torch.float64)
        case("pdist_backward_%d" % k, "_pdist_backward", [f(6, dt=torch.float64), x, p, torch.pdist(x, p)])
    x = f(3, 2)
    case("pdist_backward_f32", "_pdist_backward", [f(3), x, 2.0, torch.pdist(x)])
    case("pdist_backward_noncontig", "_pdist_backward", [f(3), R(x), 2.0, torch.pdist(x)])
    case("multi_dot_2", "linalg_multi_dot", [[f(2, 3), f(3, 4)]])
    case("multi_dot_vec_ends", "linalg_multi_dot", [[f(3), f(3, 4), f(4, 2), f(2)]])
    case("multi_dot_noncontig", "linalg_multi_dot", [[R(f(2, 3)), R(f(3, 4)), f(4)]])
    case("multi_dot_dot", "linalg_multi_dot", [[f(3, dt=torch.float64), f(3, dt=torch.float64)]])
    case("multi_dot_f64_4", "linalg_multi_dot", [[f(2, 5, dt=torch.float64), f(5, 1, dt=torch.float64),
                                                   f(1, 3, dt=torch.float64), f(3, 2, dt=torch.float64)]])
    case("multi_dot_int", "linalg_multi_dot", [[i(2, 3, lo=-3, hi=4), i(3, 3, lo=-3, hi=4), i(3, 2, lo=-3, hi=4)]])
    case("multi_dot_empty_inner", "linalg_multi_dot", [[f(2, 0), f(0, 3)]])
    case("multi_dot_empty_outer", "linalg_multi_dot", [[f(0, 2), f(2, 3), f(3)]])
    case("multi_dot_one", "linalg_multi_dot", [[f(2, 2)]])
    case("multi_dot_3d_last", "linalg_multi_dot", [[f(2, 2), f(2, 2, 1)]])
    case("multi_dot_3d_first", "linalg_multi_dot", [[f(1, 2, 2), f(2, 2)]])
    case("multi_dot_0d_last", "linalg_multi_dot", [[f(2, 2), torch.tensor(1.0)]])
    case("multi_dot_1d_middle", "linalg_multi_dot", [[f(2, 3), f(3), f(1, 2)]])
    case("multi_dot_dtypes", "linalg_multi_dot", [[f(2, 2), f(2, 2, dt=torch.float64)]])
    case("multi_dot_dtypes_int", "linalg_multi_dot", [[f(2, 2), f(2, 2), i(2, 2)]])
    case("multi_dot_shapes", "linalg_multi_dot", [[f(2, 3), f(2, 2)]])
    case("multi_dot_shapes_vec", "linalg_multi_dot", [[f(4), f(3, 2)]])
    case("chain_matmul_3", "chain_matmul", [[f(2, 3), f(3, 4), f(4, 2)]])
    case("chain_matmul_noncontig", "chain_matmul", [[R(f(3, 3, dt=torch.float64)), f(3, 2, dt=torch.float64)]])
    case("chain_matmul_one", "chain_matmul", [[R(f(2, 3))]])
    case("chain_matmul_int", "chain_matmul", [[i(2, 2, lo=-3, hi=4), i(2, 3, lo=-3, hi=4)]])
    case("chain_matmul_1d", "chain_matmul", [[f(3), f(3, 2)]])
    case("chain_matmul_one_1d", "chain_matmul", [[f(3)]])
    case("chain_matmul_shapes", "chain_matmul", [[f(2, 3), f(2, 2)]])
    case("chain_matmul_dtypes", "chain_matmul", [[f(2, 2), f(2, 2, dt=torch.float64)]])

    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "cases.txt"), "w", encoding="utf-8", newline="\n") as fh:
        fh.write("# generated by tests/unit/gen_extra_golden.py (torch %s); do not edit\n" % torch.__version__)
        fh.write("\n".join(lines) + "\n")
    print("cases: %d" % sum(1 for x in lines if x.startswith("case ")), file=sys.stderr)


if __name__ == "__main__":
    main()
