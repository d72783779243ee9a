#!/usr/bin/python3
"""Golden data for tests/unit/test_ops_shape.c and test_ops_create.c.

Run with Debian's python3-torch (1.13):   /usr/bin/python3 tests/unit/gen_shape_golden.py

Every case calls the exact ATen overload (torch.ops.aten.<name>.<overload>)
on inputs that are as_strided views of a few 1-D base tensors, and records
what PyTorch returned: dtype, sizes, strides, storage offset, which input's
storage the result shares (views), and the values in logical order; or that
PyTorch raised. The C tests rebuild the same views over the same bases
(base_*.npy) and run fusebox's kernels on them.

Output: tests/data/shape/base_<name>.npy and tests/data/shape/cases.txt:

    case <name> <aten::op> <overload or ->
    arg T <base> <sizes> <strides> <offset>      sizes/strides "1,2,3"; "-" for none (0-d)
    arg i <int> | arg f <float> | arg b <0|1> | arg n | arg D <device> | arg S <string>
    arg L <ints or ->                            int list
    arg TL <count>                               followed by <count> "arg T" lines
    out T <dtype> <sizes> <strides> <offset> <alias> <nvals|*> <values...>
          alias: position of the argument whose storage the result shares, -1 none
          "*": values not compared (empty, empty_like)
    out i <int> | out L <ints or ->
    out TL <count>                               followed by <count> "out T" lines
    err <PyTorch's exception type and message>
    end
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "shape")

BASES = {
    "f32": (torch.arange(96, dtype=torch.float32) * 0.5 - 11.0),
    "f64": (torch.arange(96, dtype=torch.float64) * 0.25 + 0.125),
    "i64": (torch.arange(96, dtype=torch.int64) - 40),
    "i32": (torch.arange(96, dtype=torch.int32) * 3 - 7),
    "u8": (torch.arange(96, dtype=torch.int64) % 200).to(torch.uint8),
    "b1": (torch.arange(96) % 3 == 0),
    "f16": (torch.arange(96, dtype=torch.float32) * 0.5 - 3).to(torch.float16),
    "idx": torch.tensor([2, 0, 1, 1, 3, 0, 2, 5, -1, 7], dtype=torch.int64),
    "idx32": torch.tensor([1, 0, 2, 2, 9], dtype=torch.int32),
}

lines = []


class A:
    """An argument: its torch value and its manifest lines."""

    def __init__(self, value, text):
        self.value, self.text = value, text


def ints(v):
    return ",".join(str(int(x)) for x in v) if len(v) else "-"


def T(base, sizes, strides=None, offset=0):
    b = BASES[base]
    sizes = list(sizes)
    if strides is None:
        strides = []
        s = 1
        for d in reversed(sizes):
            strides.insert(0, s)
            s *= max(d, 1)
    t = torch.as_strided(b, sizes, strides, offset)
    return A(t, ["arg T %s %s %s %d" % (base, ints(sizes), ints(strides), offset)])


def I(v):
    return A(int(v), ["arg i %d" % v])


def F(v):
    return A(float(v), ["arg f %r" % float(v)])


def B(v):
    return A(bool(v), ["arg b %d" % int(v)])


N = A(None, ["arg n"])


def S(v):
    return A(str(v), ["arg S %s" % v])


def L(v):
    return A([int(x) for x in v], ["arg L %s" % ints(v)])


def TL(*ts):
    text = ["arg TL %d" % len(ts)]
    for t in ts:
        text += t.text
    return A([t.value for t in ts], text)


def D(name):
    return A(torch.device(name), ["arg D %s" % name])


def fmt_val(x, dtype):
    if dtype == torch.bool:
        return "1" if x else "0"
    if dtype.is_floating_point:
        return repr(float(x))
    return str(int(x))


def out_tensor(r, args, skip_values):
    alias = -1
    for k, a in enumerate(args):
        ts = [a.value] if isinstance(a.value, torch.Tensor) else []
        if isinstance(a.value, list):
            ts = [x for x in a.value if isinstance(x, torch.Tensor)]
        if any(x.storage().data_ptr() == r.storage().data_ptr() for x in ts):
            alias = k
            break
    dt = str(r.dtype).replace("torch.", "")
    head = "out T %s %s %s %d %d" % (dt, ints(r.shape), ints(r.stride()), r.storage_offset(), alias)
    if skip_values:
        return [head + " *"]
    vals = r.contiguous().reshape(-1).tolist()
    return [head + " %d %s" % (len(vals), " ".join(fmt_val(v, r.dtype) for v in vals))]


DTYPES = {0: torch.uint8, 1: torch.int8, 2: torch.int16, 3: torch.int32, 4: torch.int64, 5: torch.float16,
          6: torch.float32, 7: torch.float64, 11: torch.bool, 15: torch.bfloat16}
MEMFMT = {0: torch.contiguous_format, 1: torch.preserve_format, 2: torch.channels_last, 3: torch.channels_last_3d}


def to_torch(v, typ):
    """IR passes ScalarType/Layout/MemoryFormat as ints; Python wants the enums."""
    if isinstance(v, int) and not isinstance(v, bool):
        if typ.startswith("ScalarType"):
            return DTYPES[v]
        if typ.startswith("Layout"):
            return torch.strided
        if typ.startswith("MemoryFormat"):
            return MEMFMT[v]
    return v


def case(name, op, overload, args, skip_values=False):
    packet = getattr(getattr(torch.ops.aten, op), overload or "default")
    schema = packet._schema
    pos, kw = [], {}
    for a, sa in zip(args, schema.arguments):
        v = to_torch(a.value, sa.type.str())
        if sa.kwarg_only:
            kw[sa.name] = v
        else:
            pos.append(v)
    text = ["case %s aten::%s %s" % (name, op, overload or "-")]
    for a in args:
        text += a.text
    try:
        if op == "tensor" and overload is None:
            # torch.ops cannot bind the type variable of aten::tensor(t[] data);
            # torch.tensor is the same op as TorchScript calls it.
            if kw.get("dtype") is not None:
                kw["dtype"] = DTYPES[kw["dtype"]]
            r = torch.tensor(*pos, **kw)
        else:
            r = packet(*pos, **kw)
    except Exception as e:  # noqa: BLE001 - any PyTorch error is an expected error case
        msg = (type(e).__name__ + ": " + str(e)).splitlines()[0]
        text.append("err " + msg)
    else:
        if isinstance(r, torch.Tensor):
            text += out_tensor(r, args, skip_values)
        elif isinstance(r, (list, tuple)) and all(isinstance(x, torch.Tensor) for x in r) and (
            len(r) or schema.returns[0].type.str().startswith("Tensor")
        ):
            text.append("out TL %d" % len(r))
            for x in r:
                text += out_tensor(x, args, skip_values)
        elif isinstance(r, (list, tuple)):
            text.append("out L %s" % ints(r))
        elif isinstance(r, int):
            text.append("out i %d" % r)
        else:
            raise TypeError("%s: unexpected result %r" % (name, r))
    text.append("end")
    lines.extend(text)


# ---------------------------------------------------------------------------
# shape and view ops

def shape_cases():
    x = lambda: T("f32", [2, 3, 4])            # noqa: E731 contiguous
    xt = lambda: T("f32", [4, 3, 2], [1, 4, 12])  # noqa: E731 permuted (transposed) view
    xe = lambda: T("f32", [3, 4], [0, 1], 5)   # noqa: E731 expanded rows, offset
    xs = lambda: T("f32", [3, 4], [16, 2], 3)  # noqa: E731 strided slice
    z0 = lambda: T("f32", [], [], 7)           # noqa: E731 0-d
    e0 = lambda: T("f32", [2, 0, 3])           # noqa: E731 empty

    # view
    case("view_basic", "view", None, [x(), L([6, 4])])
    case("view_infer", "view", None, [x(), L([-1, 6])])
    case("view_flat", "view", None, [x(), L([-1])])
    case("view_split_dim", "view", None, [x(), L([2, 3, 2, 2])])
    case("view_0d", "view", None, [z0(), L([1, 1])])
    case("view_to_0d", "view", None, [T("f32", [1, 1], [1, 1], 4), L([])])
    case("view_empty", "view", None, [e0(), L([0, 6])])
    case("view_empty_same", "view", None, [T("f32", [2, 0, 3], [1, 5, 7]), L([2, 0, 3])])
    case("view_transposed_ok", "view", None, [xt(), L([4, 3, 2, 1])])
    case("view_strided_ok", "view", None, [T("f32", [3, 2, 2], [16, 2, 1], 1), L([3, 4])])
    case("view_expanded", "view", None, [xe(), L([3, 2, 2])])
    case("err_view_impossible", "view", None, [xt(), L([24])])
    case("err_view_bad_numel", "view", None, [x(), L([5, -1])])
    case("err_view_two_infer", "view", None, [x(), L([-1, -1])])
    case("err_view_ambiguous", "view", None, [e0(), L([0, -1])])
    case("view_dtype_same_size", "view", "dtype", [T("f32", [2, 3], [6, 2], 1), I(3)])
    case("view_dtype_bool_u8", "view", "dtype", [T("b1", [2, 3], [3, 1], 2), I(0)])
    case("view_dtype_wider", "view", "dtype", [T("f16", [2, 4], [8, 1], 2), I(6)])
    case("view_dtype_narrower", "view", "dtype", [T("f64", [2, 3], [4, 1], 3), I(6)])
    case("err_view_dtype_stride", "view", "dtype", [T("f32", [3], [2]), I(5)])
    case("err_view_dtype_0d", "view", "dtype", [z0(), I(7)])
    case("view_as", "view_as", None, [x(), T("i64", [4, 6])])
    case("err_view_as", "view_as", None, [xt(), T("i64", [24])])
    # reshape
    case("reshape_view", "reshape", None, [x(), L([4, -1])])
    case("reshape_copy", "reshape", None, [xt(), L([-1])])
    case("reshape_copy_expanded", "reshape", None, [xe(), L([12])])
    case("reshape_strided_copy", "reshape", None, [xs(), L([2, 6])])
    case("reshape_0d", "reshape", None, [z0(), L([-1])])
    case("reshape_empty", "reshape", None, [e0(), L([3, 0, 5])])
    case("err_reshape", "reshape", None, [x(), L([7, 3])])
    case("reshape_as", "reshape_as", None, [xt(), T("f64", [6, 4])])
    # flatten
    case("flatten_all", "flatten", "using_ints", [x(), I(0), I(-1)])
    case("flatten_mid", "flatten", "using_ints", [T("f32", [2, 3, 2, 2]), I(1), I(2)])
    case("flatten_same", "flatten", "using_ints", [xt(), I(1), I(1)])
    case("flatten_copy", "flatten", "using_ints", [xt(), I(0), I(1)])
    case("flatten_0d", "flatten", "using_ints", [z0(), I(0), I(-1)])
    case("err_flatten_order", "flatten", "using_ints", [x(), I(2), I(0)])
    case("err_flatten_dim", "flatten", "using_ints", [x(), I(0), I(3)])
    # squeeze / unsqueeze
    sq = lambda: T("f32", [1, 3, 1, 2], [6, 2, 2, 1], 1)  # noqa: E731
    case("squeeze_all", "squeeze", None, [sq()])
    case("squeeze_none", "squeeze", None, [xt()])
    case("squeeze_0d", "squeeze", None, [z0()])
    case("squeeze_dim", "squeeze", "dim", [sq(), I(2)])
    case("squeeze_dim_neg", "squeeze", "dim", [sq(), I(-4)])
    case("squeeze_dim_noop", "squeeze", "dim", [sq(), I(1)])
    case("squeeze_dim_0d", "squeeze", "dim", [z0(), I(-1)])
    case("err_squeeze_dim", "squeeze", "dim", [sq(), I(4)])
    case("unsqueeze_front", "unsqueeze", None, [xt(), I(0)])
    case("unsqueeze_mid", "unsqueeze", None, [xs(), I(1)])
    case("unsqueeze_end", "unsqueeze", None, [xs(), I(-1)])
    case("unsqueeze_0d", "unsqueeze", None, [z0(), I(0)])
    case("err_unsqueeze", "unsqueeze", None, [xs(), I(3)])
    # transpose / permute / t
    case("transpose", "transpose", "int", [x(), I(0), I(2)])
    case("transpose_neg", "transpose", "int", [xs(), I(-1), I(-2)])
    case("transpose_0d", "transpose", "int", [z0(), I(0), I(-1)])
    case("err_transpose", "transpose", "int", [x(), I(0), I(-4)])
    case("permute", "permute", None, [x(), L([2, 0, 1])])
    case("permute_neg", "permute", None, [xt(), L([-1, 0, 1])])
    case("permute_0d", "permute", None, [z0(), L([])])
    case("err_permute_repeat", "permute", None, [x(), L([0, 0, 1])])
    case("err_permute_len", "permute", None, [x(), L([0, 1])])
    # swapaxes / swapdims / movedim / moveaxis / unflatten / diagonal
    case("swapaxes", "swapaxes", None, [xt(), I(0), I(-1)])
    case("swapdims", "swapdims", None, [x(), I(1), I(2)])
    case("err_swapaxes", "swapaxes", None, [x(), I(3), I(0)])
    case("movedim_int", "movedim", "int", [x(), I(0), I(-1)])
    case("movedim_int_back", "movedim", "int", [xt(), I(2), I(0)])
    case("movedim_intlist", "movedim", "intlist", [T("f32", [2, 3, 2, 2]), L([0, 3]), L([2, 0])])
    case("movedim_intlist_empty", "movedim", "intlist", [x(), L([]), L([])])
    case("movedim_0d", "movedim", "int", [z0(), I(0), I(-1)])
    case("err_movedim_len", "movedim", "intlist", [x(), L([0, 1]), L([1])])
    case("err_movedim_repeat_src", "movedim", "intlist", [x(), L([0, 0]), L([1, 2])])
    case("err_movedim_repeat_dst", "movedim", "intlist", [x(), L([0, 1]), L([2, -1])])
    case("err_movedim_range", "movedim", "int", [x(), I(3), I(0)])
    case("moveaxis_int", "moveaxis", "int", [xs(), I(-1), I(0)])
    case("moveaxis_intlist", "moveaxis", "intlist", [x(), L([1, 2]), L([0, 1])])
    case("unflatten", "unflatten", "int", [x(), I(2), L([2, 2])])
    case("unflatten_infer", "unflatten", "int", [x(), I(-2), L([-1, 1])])
    case("unflatten_strided", "unflatten", "int", [xs(), I(1), L([2, 2])])
    case("unflatten_transposed", "unflatten", "int", [xt(), I(0), L([2, 2])])
    case("err_unflatten_size", "unflatten", "int", [x(), I(2), L([3, 2])])
    case("err_unflatten_0d", "unflatten", "int", [z0(), I(0), L([1])])
    case("unflatten_colmajor", "unflatten", "int", [T("f32", [2, 6], [1, 2]), I(1), L([2, 3])])
    case("diagonal", "diagonal", None, [x(), I(0), I(1), I(2)])
    case("diagonal_default", "diagonal", None, [T("f32", [4, 5])])
    case("diagonal_offset", "diagonal", None, [x(), I(1), I(-1), I(0)])
    case("diagonal_negative", "diagonal", None, [xs(), I(-1), I(0), I(1)])
    case("diagonal_off_end", "diagonal", None, [xs(), I(7), I(0), I(1)])
    case("diagonal_transposed", "diagonal", None, [xt(), I(-2), I(2), I(0)])
    case("err_diagonal_same", "diagonal", None, [x(), I(0), I(1), I(-2)])
    case("diagonal_backward", "diagonal_backward", None, [T("f32", [2, 3]), L([2, 3, 4]), I(1), I(1), I(2)])
    case("diagonal_backward_neg", "diagonal_backward", None, [T("f64", [3]), L([4, 3]), I(-1), I(0), I(1)])
    # meshgrid
    v3 = lambda: T("f32", [3], [2], 1)  # noqa: E731 strided 1-D
    v2 = lambda: T("f32", [2])          # noqa: E731
    case("meshgrid", "meshgrid", None, [TL(v3(), v2())])
    case("meshgrid_ij", "meshgrid", "indexing", [TL(v3(), v2(), T("f32", [4], [1], 5)), S("ij")])
    case("meshgrid_xy", "meshgrid", "indexing", [TL(v3(), v2(), T("f32", [4], [1], 5)), S("xy")])
    case("meshgrid_0d", "meshgrid", "indexing", [TL(z0(), v2()), S("xy")])
    case("meshgrid_one", "meshgrid", "indexing", [TL(v3()), S("xy")])
    case("err_meshgrid_2d", "meshgrid", "indexing", [TL(xs(), v2()), S("ij")])
    case("err_meshgrid_dtype", "meshgrid", "indexing", [TL(v3(), T("i64", [2])), S("ij")])
    case("err_meshgrid_indexing", "meshgrid", "indexing", [TL(v3(), v2()), S("ji")])
    case("t_2d", "t", None, [xs()])
    case("t_1d", "t", None, [T("f32", [5], [2], 1)])
    case("t_0d", "t", None, [z0()])
    case("err_t_3d", "t", None, [x()])
    # expand
    case("expand_lead", "expand", None, [T("f32", [3], [2], 1), L([2, 4, 3]), B(False)])
    case("expand_minus1", "expand", None, [T("f32", [3, 1], [1, 1]), L([-1, 5]), B(False)])
    case("expand_lead1", "expand", None, [T("f32", [3], [2], 1), L([1, 3]), B(False)])
    case("expand_same", "expand", None, [xs(), L([3, 4]), B(False)])
    case("expand_0d", "expand", None, [z0(), L([2, 2]), B(False)])
    case("expand_to_empty", "expand", None, [T("f32", [1, 3]), L([0, 3]), B(False)])
    case("err_expand_mismatch", "expand", None, [T("f32", [3]), L([2, 4]), B(False)])
    case("err_expand_lead_minus1", "expand", None, [T("f32", [3]), L([-1, 3]), B(False)])
    case("err_expand_fewer", "expand", None, [x(), L([3, 4]), B(False)])
    case("expand_as", "expand_as", None, [T("f32", [1, 4], [4, 1], 2), T("i64", [3, 4])])
    case("err_expand_as", "expand_as", None, [T("f32", [2, 4]), T("i64", [3, 4])])
    # contiguous / detach / clone
    case("contiguous_self", "contiguous", None, [x(), I(0)])
    case("contiguous_copy", "contiguous", None, [xt(), I(0)])
    case("contiguous_expanded", "contiguous", None, [xe(), I(0)])
    case("contiguous_channels_last", "contiguous", None, [T("f32", [2, 3, 2, 2]), I(2)])
    case("contiguous_channels_last_self", "contiguous", None, [T("f32", [2, 3, 2, 2], [12, 1, 6, 3]), I(2)])
    case("detach", "detach", None, [xs()])
    case("clone_contig", "clone", None, [x(), N])
    case("clone_preserve_transposed", "clone", None, [xt(), N])
    case("clone_preserve_expanded", "clone", None, [xe(), N])
    case("clone_preserve_sliced", "clone", None, [xs(), N])
    case("clone_preserve_perm_gap", "clone", None, [T("f32", [2, 3, 4], [1, 24, 4]), N])
    case("clone_contiguous_fmt", "clone", None, [xt(), I(0)])
    case("clone_channels_last", "clone", None, [T("f32", [2, 3, 2, 2]), I(2)])
    case("clone_0d", "clone", None, [z0(), N])
    case("clone_bool", "clone", None, [T("b1", [2, 3], [1, 2]), N])
    # size / dim / numel
    case("size", "size", None, [xt()])
    case("size_0d", "size", None, [z0()])
    case("size_int", "size", "int", [xt(), I(1)])
    case("size_int_neg", "size", "int", [xt(), I(-3)])
    case("err_size_int", "size", "int", [xt(), I(3)])
    case("dim", "dim", None, [xt()])
    case("dim_0d", "dim", None, [z0()])
    case("numel", "numel", None, [xe()])
    case("numel_empty", "numel", None, [e0()])
    # chunk / split / unbind
    case("chunk_even", "chunk", None, [x(), I(3), I(2)])
    case("chunk_uneven", "chunk", None, [T("f32", [7, 2]), I(3), I(0)])
    case("chunk_more_than_size", "chunk", None, [T("f32", [2, 2]), I(5), I(0)])
    case("chunk_transposed", "chunk", None, [xt(), I(2), I(-1)])
    case("chunk_empty_dim", "chunk", None, [T("f32", [0, 3]), I(3), I(0)])
    case("err_chunk_zero", "chunk", None, [x(), I(0), I(0)])
    case("err_chunk_0d", "chunk", None, [z0(), I(1), I(0)])
    case("split_int", "split", "Tensor", [T("f32", [5, 3]), I(2), I(0)])
    case("split_int_big", "split", "Tensor", [T("f32", [5, 3]), I(9), I(0)])
    case("split_int_neg_dim", "split", "Tensor", [xs(), I(3), I(-1)])
    case("err_split_neg", "split", "Tensor", [xs(), I(-1), I(0)])
    case("split_sizes", "split", "sizes", [T("f32", [6, 2]), L([1, 3, 2]), I(0)])
    case("split_list", "split", "sizes", [xt(), L([1, 2]), I(1)])
    case("split_with_sizes", "split_with_sizes", None, [xs(), L([2, 0, 2]), I(1)])
    case("err_split_with_sizes_negative", "split_with_sizes", None, [xs(), L([5, -1]), I(1)])
    case("err_split_with_sizes_sum", "split_with_sizes", None, [xs(), L([2, 1]), I(1)])
    case("unbind", "unbind", "int", [xt(), I(1)])
    case("unbind_neg", "unbind", "int", [xs(), I(-1)])
    case("unbind_empty", "unbind", "int", [T("f32", [0, 3]), I(0)])
    case("err_unbind_0d", "unbind", "int", [z0(), I(0)])
    # cat / stack
    case("cat_dim0", "cat", None, [TL(T("f32", [2, 3]), T("f32", [1, 3], [3, 1], 10)), I(0)])
    case("cat_dim1_noncontig", "cat", None, [TL(xs(), T("f32", [3, 2], [1, 3], 2)), I(1)])
    case("cat_neg_dim", "cat", None, [TL(xt(), xt()), I(-1)])
    case("cat_promote_int_float", "cat", None, [TL(T("i64", [2, 2]), T("f32", [1, 2])), I(0)])
    case("cat_promote_bool_u8", "cat", None, [TL(T("b1", [2]), T("u8", [3])), I(0)])
    case("cat_promote_i32_f16", "cat", None, [TL(T("i32", [2]), T("f16", [2], [3], 1)), I(0)])
    case("cat_skip_legacy_empty", "cat", None, [TL(T("f32", [0]), T("f32", [2, 2]), T("f64", [0])), I(1)])
    case("cat_all_empty_1d", "cat", None, [TL(T("f32", [0]), T("i64", [0])), I(0)])
    case("cat_empty_2d", "cat", None, [TL(T("f32", [0, 3]), T("f32", [2, 3])), I(0)])
    case("cat_expanded", "cat", None, [TL(xe(), xe()), I(0)])
    case("cat_single", "cat", None, [TL(xs()), I(1)])
    case("err_cat_shapes", "cat", None, [TL(T("f32", [2, 3]), T("f32", [2, 4])), I(0)])
    case("err_cat_ndim", "cat", None, [TL(T("f32", [2, 3]), T("f32", [2, 3, 1])), I(0)])
    case("err_cat_0d", "cat", None, [TL(z0(), z0()), I(0)])
    case("err_cat_dim", "cat", None, [TL(T("f32", [2, 3])), I(2)])
    case("stack_dim0", "stack", None, [TL(xs(), T("f32", [3, 4])), I(0)])
    case("stack_dim_last", "stack", None, [TL(xt(), xt(), xt()), I(-1)])
    case("stack_mid_promote", "stack", None, [TL(T("i32", [2, 2]), T("f64", [2, 2], [1, 2])), I(1)])
    case("stack_0d", "stack", None, [TL(z0(), T("f32", [], [], 3)), I(0)])
    case("err_stack_shapes", "stack", None, [TL(T("f32", [2]), T("f32", [3])), I(0)])
    case("err_stack_dim", "stack", None, [TL(T("f32", [2])), I(3)])
    # slice / select / narrow
    case("slice_basic", "slice", "Tensor", [x(), I(1), I(1), I(3), I(1)])
    case("slice_none", "slice", "Tensor", [xt(), I(0), N, N, I(1)])
    case("slice_step", "slice", "Tensor", [T("f32", [10, 2]), I(0), I(1), I(9), I(3)])
    case("slice_negative", "slice", "Tensor", [T("f32", [10]), I(0), I(-4), I(-1), I(2)])
    case("slice_clamp", "slice", "Tensor", [xs(), I(-1), I(-100), I(100), I(1)])
    case("slice_empty_range", "slice", "Tensor", [xs(), I(0), I(2), I(1), I(1)])
    case("slice_start_past_end", "slice", "Tensor", [xs(), I(0), I(7), N, I(1)])
    case("slice_expanded", "slice", "Tensor", [xe(), I(0), I(1), N, I(1)])
    case("err_slice_step0", "slice", "Tensor", [xs(), I(0), N, N, I(0)])
    case("err_slice_0d", "slice", "Tensor", [z0(), I(0), N, N, I(1)])
    case("select", "select", "int", [x(), I(1), I(2)])
    case("select_neg", "select", "int", [xt(), I(-1), I(-1)])
    case("select_1d", "select", "int", [T("f32", [5], [3], 2), I(0), I(4)])
    case("err_select_range", "select", "int", [x(), I(0), I(2)])
    case("err_select_neg_range", "select", "int", [x(), I(2), I(-5)])
    case("err_select_0d", "select", "int", [z0(), I(0), I(0)])
    case("narrow", "narrow", None, [x(), I(2), I(1), I(2)])
    case("narrow_neg_start", "narrow", None, [xt(), I(0), I(-3), I(2)])
    case("narrow_at_end", "narrow", None, [xs(), I(1), I(4), I(0)])
    case("err_narrow_len", "narrow", None, [xs(), I(1), I(2), I(3)])
    # index_select
    case("index_select", "index_select", None, [x(), I(1), T("idx", [3], [1], 0)])
    case("index_select_noncontig", "index_select", None, [xt(), I(0), T("idx", [4], [1], 0)])
    case("index_select_i32", "index_select", None, [xs(), I(-1), T("idx32", [4])])
    case("index_select_0d_index", "index_select", None, [xs(), I(0), T("idx", [], [], 1)])
    case("index_select_0d_self", "index_select", None, [z0(), I(0), T("idx", [1], [1], 1)])
    case("index_select_empty_index", "index_select", None, [xs(), I(1), T("idx", [0])])
    case("index_select_bool_self", "index_select", None, [T("b1", [3, 3]), I(0), T("idx", [3], [1], 1)])
    case("err_index_select_range", "index_select", None, [xs(), I(0), T("idx", [2], [1], 6)])
    case("err_index_select_negative", "index_select", None, [xs(), I(0), T("idx", [1], [1], 8)])
    case("err_index_select_dtype", "index_select", None, [xs(), I(0), T("f32", [2])])
    case("err_index_select_2d", "index_select", None, [xs(), I(0), T("idx", [2, 2])])


# ---------------------------------------------------------------------------
# creation ops (random ones are tested statistically in C)

def create_cases():
    x = lambda: T("f32", [2, 3])                 # noqa: E731
    xt = lambda: T("i32", [3, 2], [1, 3])        # noqa: E731
    xe = lambda: T("f64", [2, 3], [0, 1])        # noqa: E731
    nn = [N, N, N, N]
    case("zeros", "zeros", None, [L([2, 3])] + nn)
    case("zeros_f64_code", "zeros", None, [L([3]), I(7), N, N, N])
    case("zeros_0d", "zeros", None, [L([])] + nn)
    case("zeros_empty", "zeros", None, [L([2, 0])] + nn)
    case("zeros_layout_device", "zeros", None, [L([2]), I(4), I(0), D("cpu"), B(False)])
    case("err_zeros_negative", "zeros", None, [L([2, -1])] + nn)
    case("ones", "ones", None, [L([2, 2])] + nn)
    case("eye", "eye", None, [I(3)] + nn)
    case("eye_m_f64", "eye", "m", [I(2), I(4), I(7), N, N, N])
    case("eye_m_tall_int", "eye", "m", [I(4), I(2), I(4), N, N, N])
    case("eye_0", "eye", None, [I(0)] + nn)
    case("err_eye_negative", "eye", None, [I(-1)] + nn)
    case("err_eye_m_negative", "eye", "m", [I(2), I(-3)] + nn)
    case("ones_bool", "ones", None, [L([3]), I(11), N, N, N])
    case("ones_f16", "ones", None, [L([3]), I(5), N, N, N])
    case("full_int", "full", None, [L([2]), I(3)] + nn)
    case("full_float", "full", None, [L([2, 2]), F(1.5)] + nn)
    # full with a bool fill: eager torch.full((2,), True) is bool, but torch.ops turns the bool
    # into an int Scalar (int64) and TorchScript rejects it; test_ops_create.c checks bool literally.
    case("full_dtype", "full", None, [L([3]), F(2.75), I(4), N, N, N])
    case("full_int_to_f64", "full", None, [L([2]), I(-3), I(7), N, N, N])
    case("empty", "empty", "memory_format", [L([2, 3])] + nn + [N], skip_values=True)
    case("empty_dtype", "empty", "memory_format", [L([4]), I(3), N, N, N, N], skip_values=True)
    case("empty_channels_last", "empty", "memory_format", [L([2, 3, 2, 2])] + nn + [I(2)], skip_values=True)
    case("zeros_like", "zeros_like", None, [x()] + nn + [N])
    case("zeros_like_transposed", "zeros_like", None, [xt()] + nn + [N])
    case("zeros_like_dtype", "zeros_like", None, [xt(), I(7), N, N, N, N])
    case("zeros_like_contig_fmt", "zeros_like", None, [xt()] + nn + [I(0)])
    case("ones_like", "ones_like", None, [xe()] + nn + [N])
    case("ones_like_dtype", "ones_like", None, [x(), I(11), N, N, N, N])
    case("full_like", "full_like", None, [xt(), F(2.9)] + nn + [N])
    case("full_like_dtype", "full_like", None, [xt(), F(2.5), I(6), N, N, N, N])
    case("full_like_0d", "full_like", None, [T("f32", [], [], 2), I(4)] + nn + [N])
    case("empty_like", "empty_like", None, [xt()] + nn + [N], skip_values=True)
    case("empty_like_expanded", "empty_like", None, [T("f32", [3, 2, 4], [0, 4, 1])] + nn + [N], skip_values=True)
    case("empty_like_perm_expanded", "empty_like", None, [T("f32", [2, 3, 4], [1, 0, 2])] + nn + [N], skip_values=True)
    case("empty_like_sliced", "empty_like", None, [T("f32", [3, 4], [1, 6])] + nn + [N], skip_values=True)
    case("empty_like_channels_last", "empty_like", None, [T("f32", [2, 3, 2, 2])] + nn + [I(2)], skip_values=True)
    case("new_zeros", "new_zeros", None, [xt(), L([2, 2])] + nn)
    case("new_ones", "new_ones", None, [x(), L([3]), I(4), N, N, N])
    case("new_full", "new_full", None, [xt(), L([2]), F(7.5)] + nn)
    case("new_empty", "new_empty", None, [xe(), L([1, 2])] + nn, skip_values=True)
    # arange
    case("arange_int", "arange", None, [I(5)] + nn)
    case("arange_float_end", "arange", None, [F(3.5)] + nn)
    case("arange_zero", "arange", None, [I(0)] + nn)
    case("arange_dtype", "arange", None, [I(4), I(7), N, N, N])
    case("arange_start", "arange", "start", [I(-2), I(3)] + nn)
    case("arange_start_float", "arange", "start", [F(0.5), I(3)] + nn)
    case("arange_start_f16", "arange", "start", [I(0), I(5), I(5), N, N, N])
    case("arange_step", "arange", "start_step", [I(1), I(10), I(3)] + nn)
    case("arange_step_neg", "arange", "start_step", [I(10), I(1), I(-3)] + nn)
    case("arange_step_float", "arange", "start_step", [I(0), I(1), F(0.1)] + nn)
    case("arange_step_f32_long", "arange", "start_step", [F(-3.3), F(7.9), F(0.37)] + nn)
    case("arange_step_f32_vec", "arange", "start_step", [F(0.1), F(5.3), F(0.013)] + nn)
    case("arange_step_f64_vec", "arange", "start_step", [F(-3.3), F(7.9), F(0.037), I(7), N, N, N])
    case("arange_step_f64_neg", "arange", "start_step", [F(1000.0), F(-17.0), F(-7.7), I(7), N, N, N])
    case("arange_step_f16", "arange", "start_step", [F(0.0), F(30.0), F(0.3), I(5), N, N, N])
    case("arange_step_bf16", "arange", "start_step", [F(0.0), F(30.0), F(0.3), I(15), N, N, N])
    case("arange_step_int32", "arange", "start_step", [I(-5), I(20), I(4), I(3), N, N, N])
    case("arange_int_ceil", "arange", "start_step", [I(0), I(10), I(4)] + nn)
    case("err_arange_step0", "arange", "start_step", [I(0), I(10), I(0)] + nn)
    case("err_arange_sign", "arange", "start_step", [I(0), I(10), I(-1)] + nn)
    case("err_arange_bool", "arange", None, [I(3), I(11), N, N, N])
    # torch.tensor
    case("tensor_float", "tensor", "float", [F(0.25), N, N, B(False)])
    case("tensor_float_f64", "tensor", "float", [F(-1.5), I(7), N, B(False)])
    case("tensor_int", "tensor", "int", [I(-7), N, N, B(False)])
    case("tensor_bool", "tensor", "bool", [B(True), N, N, B(False)])
    case("tensor_list", "tensor", None, [L([3, 1, 2]), N, N, B(False)])
    case("tensor_list_dtype", "tensor", None, [L([3, 1, 2]), I(6), N, B(False)])
    case("tensor_list_empty", "tensor", None, [L([]), N, N, B(False)])


# ---------------------------------------------------------------------------
# added later: unfold, broadcast_to, atleast_*, tensor_split, h/v/dsplit, h/v/dstack,
# column_stack, flipud/fliplr, rot90, diff, kron, count_nonzero, argwhere, take,
# take_along_dim, index_fill, masked_scatter (appended so the older cases keep their lines)

def shape_cases_2():
    x = lambda: T("f32", [2, 3, 4])            # noqa: E731
    xt = lambda: T("f32", [4, 3, 2], [1, 4, 12])  # noqa: E731
    xs = lambda: T("f32", [3, 4], [16, 2], 3)  # noqa: E731
    z0 = lambda: T("f32", [], [], 7)           # noqa: E731
    e0 = lambda: T("f32", [2, 0, 3])           # noqa: E731
    v5 = lambda: T("f32", [5], [2], 1)         # noqa: E731
    # unfold
    case("unfold_last", "unfold", None, [x(), I(2), I(2), I(1)])
    case("unfold_step2", "unfold", None, [x(), I(-1), I(2), I(2)])
    case("unfold_dim0", "unfold", None, [x(), I(0), I(2), I(1)])
    case("unfold_step_big", "unfold", None, [T("f32", [7, 2]), I(0), I(3), I(5)])
    case("unfold_transposed", "unfold", None, [xt(), I(1), I(2), I(1)])
    case("unfold_strided", "unfold", None, [xs(), I(1), I(3), I(1)])
    case("unfold_size0", "unfold", None, [xs(), I(0), I(0), I(1)])
    case("unfold_0d", "unfold", None, [z0(), I(0), I(1), I(1)])
    case("unfold_empty", "unfold", None, [e0(), I(2), I(2), I(1)])
    case("unfold_int", "unfold", None, [T("i64", [6]), I(0), I(3), I(2)])
    case("err_unfold_size", "unfold", None, [xs(), I(1), I(5), I(1)])
    case("err_unfold_step", "unfold", None, [xs(), I(1), I(2), I(0)])
    case("err_unfold_dim", "unfold", None, [xs(), I(2), I(2), I(1)])
    case("err_unfold_neg_size", "unfold", None, [xs(), I(1), I(-1), I(1)])
    case("unfold_backward", "unfold_backward", None, [T("f32", [2, 3, 3]), L([2, 5]), I(1), I(3), I(1)])
    case("unfold_backward_gap", "unfold_backward", None, [T("f64", [2, 2, 2], [1, 2, 4]), L([7, 2]), I(0), I(2), I(3)])
    case("unfold_backward_neg_dim", "unfold_backward", None, [T("f32", [2, 2, 2]), L([2, 4]), I(-1), I(2), I(2)])
    case("unfold_backward_0d", "unfold_backward", None, [T("f32", [1], [1], 5), L([]), I(0), I(1), I(1)])
    # broadcast_to
    case("broadcast_to_lead", "broadcast_to", None, [T("f32", [3], [2], 1), L([2, 4, 3])])
    case("broadcast_to_minus1", "broadcast_to", None, [T("f32", [3, 1], [1, 1]), L([-1, 5])])
    case("broadcast_to_same", "broadcast_to", None, [xs(), L([3, 4])])
    case("broadcast_to_0d", "broadcast_to", None, [z0(), L([2, 2])])
    case("broadcast_to_empty", "broadcast_to", None, [T("i64", [1, 3]), L([0, 3])])
    case("err_broadcast_to", "broadcast_to", None, [T("f32", [3]), L([2, 4])])
    case("err_broadcast_to_fewer", "broadcast_to", None, [x(), L([3, 4])])
    # atleast_*
    for k in (1, 2, 3):
        op = "atleast_%dd" % k
        case(op + "_0d", op, None, [z0()])
        case(op + "_1d", op, None, [v5()])
        case(op + "_2d", op, None, [xs()])
        case(op + "_3d", op, None, [xt()])
        case(op + "_empty1d", op, None, [T("i64", [0])])
        case(op + "_seq", op, "Sequence", [TL(z0(), v5(), xs(), T("b1", [2, 2, 2]))])
        case(op + "_seq_empty", op, "Sequence", [TL()])
    # tensor_split
    case("tensor_split_sections", "tensor_split", "sections", [T("f32", [7, 2]), I(3), I(0)])
    case("tensor_split_sections_many", "tensor_split", "sections", [T("f32", [2, 3]), I(4), I(-1)])
    case("tensor_split_sections_t", "tensor_split", "sections", [xt(), I(2), I(1)])
    case("tensor_split_sections_empty", "tensor_split", "sections", [T("f32", [0, 3]), I(2), I(0)])
    case("err_tensor_split_sections0", "tensor_split", "sections", [xs(), I(0), I(0)])
    case("err_tensor_split_0d", "tensor_split", "sections", [z0(), I(2), I(0)])
    case("err_tensor_split_dim", "tensor_split", "sections", [xs(), I(2), I(2)])
    case("tensor_split_indices", "tensor_split", "indices", [T("f32", [7, 2]), L([1, 4]), I(0)])
    case("tensor_split_indices_unordered", "tensor_split", "indices", [T("f32", [7, 2]), L([5, 2, 9]), I(0)])
    case("tensor_split_indices_neg", "tensor_split", "indices", [xs(), L([-1, -3]), I(1)])
    case("tensor_split_indices_none", "tensor_split", "indices", [xs(), L([]), I(1)])
    case("tensor_split_tensor_1d", "tensor_split", "tensor_indices_or_sections", [T("f32", [7, 2]), T("idx", [2], [3], 1), I(0)])
    case("tensor_split_tensor_0d", "tensor_split", "tensor_indices_or_sections", [xt(), T("idx", [], [], 4), I(0)])
    case("err_tensor_split_tensor_dtype", "tensor_split", "tensor_indices_or_sections", [xs(), T("idx32", [2]), I(0)])
    case("err_tensor_split_tensor_2d", "tensor_split", "tensor_indices_or_sections", [xs(), T("idx", [1, 2]), I(0)])
    # hsplit / vsplit / dsplit
    case("hsplit_int", "hsplit", "int", [T("f32", [2, 4, 3]), I(2)])
    case("hsplit_1d", "hsplit", "int", [T("f32", [6]), I(3)])
    case("hsplit_array", "hsplit", "array", [xs(), L([1, 3])])
    case("err_hsplit_divisible", "hsplit", "int", [xs(), I(3)])
    case("err_hsplit_0d", "hsplit", "int", [z0(), I(1)])
    case("vsplit_int", "vsplit", "int", [T("f32", [4, 3]), I(2)])
    case("vsplit_array", "vsplit", "array", [xt(), L([1])])
    case("err_vsplit_1d", "vsplit", "int", [v5(), I(1)])
    case("dsplit_int", "dsplit", "int", [x(), I(2)])
    case("dsplit_array", "dsplit", "array", [xt(), L([1, 5])])
    case("err_dsplit_2d", "dsplit", "array", [xs(), L([1])])
    # hstack / vstack / dstack / column_stack
    for op in ("hstack", "vstack", "dstack", "column_stack"):
        case(op + "_1d", op, None, [TL(v5(), T("f32", [5]))])
        case(op + "_0d", op, None, [TL(z0(), T("f32", [], [], 3))])
        case(op + "_2d", op, None, [TL(xs(), T("f32", [3, 4], [1, 3]))])
        case(op + "_promote", op, None, [TL(T("i32", [2, 2]), T("f64", [2, 2], [1, 2]), T("b1", [2, 2]))])
        case("err_" + op + "_empty", op, None, [TL()])
    case("hstack_3d", "hstack", None, [TL(x(), T("f32", [2, 1, 4], [4, 4, 1], 3))])
    case("vstack_1d_2d", "vstack", None, [TL(T("f32", [4]), xs())])
    case("dstack_3d", "dstack", None, [TL(x(), T("f32", [2, 3, 1]))])
    case("column_stack_mixed", "column_stack", None, [TL(T("f32", [3]), xs(), T("i64", [3, 2]))])
    case("err_hstack_shapes", "hstack", None, [TL(T("f32", [2, 3]), T("f32", [3, 3]))])
    case("err_vstack_shapes", "vstack", None, [TL(T("f32", [2, 3]), T("f32", [2]))])
    # flipud / fliplr
    case("flipud", "flipud", None, [xs()])
    case("flipud_1d", "flipud", None, [T("i64", [5], [2], 1)])
    case("flipud_3d", "flipud", None, [xt()])
    case("flipud_empty", "flipud", None, [e0()])
    case("err_flipud_0d", "flipud", None, [z0()])
    case("fliplr", "fliplr", None, [xs()])
    case("fliplr_3d_bool", "fliplr", None, [T("b1", [2, 3, 2])])
    case("err_fliplr_1d", "fliplr", None, [v5()])
    # rot90
    for k in (1, 2, 3, 0, -1, 6):
        case("rot90_k%d" % k, "rot90", None, [T("f32", [3, 4]), I(k), L([0, 1])])
    case("rot90_default", "rot90", None, [T("i64", [2, 3])])
    case("rot90_3d_dims", "rot90", None, [x(), I(1), L([2, 0])])
    case("rot90_3d_neg", "rot90", None, [x(), I(3), L([-1, -2])])
    case("rot90_noncontig", "rot90", None, [xs(), I(1), L([0, 1])])
    case("err_rot90_dims_len", "rot90", None, [x(), I(1), L([0])])
    case("err_rot90_same", "rot90", None, [x(), I(1), L([1, 1])])
    case("err_rot90_wrap_same", "rot90", None, [x(), I(1), L([0, -3])])
    case("err_rot90_range", "rot90", None, [x(), I(1), L([0, 3])])
    case("err_rot90_1d", "rot90", None, [v5(), I(1), L([0, 1])])
    # diff
    case("diff_default", "diff", None, [xs(), I(1), I(-1), N, N])
    case("diff_n2_dim0", "diff", None, [x(), I(2), I(0), N, N])
    case("diff_n_big", "diff", None, [xs(), I(7), I(1), N, N])
    case("diff_n0", "diff", None, [xs(), I(0), I(1), N, N])
    case("diff_prepend_append", "diff", None, [xs(), I(1), I(1), T("f32", [3, 1]), T("f32", [3, 2], [2, 1], 9)])
    case("diff_prepend_f64", "diff", None, [T("f32", [4]), I(2), I(0), T("f64", [2]), N])
    case("diff_n0_prepend", "diff", None, [xs(), I(0), I(1), T("f32", [3, 1]), N])
    case("diff_bool", "diff", None, [T("b1", [2, 5]), I(1), I(1), N, N])
    case("diff_u8", "diff", None, [T("u8", [6], [3], 1), I(1), I(0), N, N])
    case("diff_i32_n3", "diff", None, [T("i32", [3, 5]), I(3), I(-1), N, N])
    case("diff_transposed", "diff", None, [xt(), I(1), I(0), N, N])
    case("err_diff_0d", "diff", None, [z0(), I(1), I(-1), N, N])
    # n < 0: torch 1.13 returns self itself (later versions refuse it, as fusebox does; test_ops_shape.c)
    case("err_diff_prepend_dims", "diff", None, [xs(), I(1), I(-1), T("f32", [3]), N])
    case("err_diff_dim", "diff", None, [xs(), I(1), I(2), N, N])
    case("err_diff_prepend_shape", "diff", None, [xs(), I(1), I(1), T("f32", [2, 1]), N])
    # kron
    # a transposed operand makes torch 1.13 fail ("view size is not compatible"), a bug of its own
    case("kron_2d", "kron", None, [T("f32", [2, 3]), T("f32", [2, 2], [2, 1], 5)])
    case("kron_1d_2d", "kron", None, [T("f32", [3]), T("f32", [2, 2])])
    case("kron_promote", "kron", None, [T("i64", [2, 2]), T("f64", [3])])
    case("kron_0d", "kron", None, [z0(), xs()])
    case("kron_3d", "kron", None, [T("i32", [1, 2, 2]), T("i32", [2, 1, 2])])
    case("kron_empty", "kron", None, [T("f32", [0, 2]), T("f32", [2, 2])])
    # count_nonzero
    cz = lambda: T("i64", [3, 4], [8, 3], 38)  # noqa: E731 holds zeros
    case("count_nonzero_all", "count_nonzero", None, [cz(), N])
    case("count_nonzero_dim", "count_nonzero", None, [cz(), I(1)])
    case("count_nonzero_dim_neg", "count_nonzero", None, [T("b1", [2, 3, 2]), I(-2)])
    case("count_nonzero_list", "count_nonzero", "dim_IntList", [T("f32", [4, 6], [1, 4], 16), L([0, 1])])
    case("count_nonzero_list_one", "count_nonzero", "dim_IntList", [T("i32", [2, 3, 4]), L([2])])
    case("count_nonzero_list_empty", "count_nonzero", "dim_IntList", [cz(), L([])])
    case("count_nonzero_0d", "count_nonzero", None, [z0(), N])
    case("err_count_nonzero_dim", "count_nonzero", None, [cz(), I(2)])
    case("err_count_nonzero_dup", "count_nonzero", "dim_IntList", [cz(), L([0, -2])])
    # argwhere
    case("argwhere", "argwhere", None, [cz()])
    case("argwhere_bool", "argwhere", None, [T("b1", [2, 3, 2])])
    case("argwhere_0d", "argwhere", None, [T("i64", [], [], 40)])
    case("argwhere_empty", "argwhere", None, [e0()])
    # take
    case("take", "take", None, [xs(), T("idx", [2, 3])])
    case("take_neg", "take", None, [T("i32", [2, 4]), T("idx", [3], [1], 6)])
    case("take_0d_index", "take", None, [xt(), T("idx", [], [], 7)])
    case("take_empty", "take", None, [xs(), T("idx", [0])])
    case("take_0d_self", "take", None, [z0(), T("idx", [2], [4], 1)])
    case("err_take_range", "take", None, [xs(), T("f32", [1], [1], 96 - 96) if False else T("idx", [1], [1], 9)] if False else [T("f32", [2, 2]), T("idx", [1], [1], 9)])
    case("err_take_dtype", "take", None, [xs(), T("idx32", [2])])
    case("err_take_empty_self", "take", None, [e0(), T("idx", [1])])
    # take_along_dim
    ia = lambda: T("idx", [3, 2], [1, 0], 0)  # noqa: E731 values 2, 0, 1 in rows, expanded columns
    case("take_along_dim_0", "take_along_dim", None, [T("f32", [4, 2]), T("idx", [3, 2], [2, 1], 1), I(0)])
    case("take_along_dim_1", "take_along_dim", None, [xs(), ia(), I(1)])
    case("take_along_dim_bcast", "take_along_dim", None, [T("f32", [3, 1, 4]), T("idx", [1, 5, 2], [2, 0, 1], 1), I(2)])
    case("take_along_dim_none", "take_along_dim", None, [x(), T("idx", [2, 2]), N])
    case("take_along_dim_neg", "take_along_dim", None, [xt(), T("idx", [4, 3, 1], [0, 1, 1], 1), I(-1)])
    case("err_take_along_dim_none_view", "take_along_dim", None, [xt(), T("idx", [2]), N])
    case("err_take_along_dim_ndim", "take_along_dim", None, [xs(), T("idx", [2]), I(0)])
    case("err_take_along_dim_dtype", "take_along_dim", None, [xs(), T("idx32", [1, 2]), I(0)])
    case("err_take_along_dim_range", "take_along_dim", None, [xs(), T("idx", [1, 2], [1, 1], 6), I(1)])
    # index_fill
    case("index_fill_scalar", "index_fill", "int_Scalar", [x(), I(1), T("idx", [2], [1], 1), F(-2.5)])
    case("index_fill_neg", "index_fill", "int_Scalar", [xs(), I(-1), T("idx", [2], [1], 8), I(7)])
    case("index_fill_preserve", "index_fill", "int_Scalar", [xt(), I(0), T("idx", [], [], 4), F(1.0)])
    case("index_fill_tensor", "index_fill", "int_Tensor", [T("i64", [3, 3]), I(0), T("idx", [2]), T("f64", [], [], 5)])
    case("index_fill_bool", "index_fill", "int_Scalar", [T("b1", [2, 3]), I(1), T("idx", [1], [1], 2), B(True)])
    case("index_fill_0d", "index_fill", "int_Scalar", [z0(), I(0), T("idx", [1], [1], 1), F(3.0)])
    case("index_fill_empty_index", "index_fill", "int_Scalar", [xs(), I(0), T("idx", [0]), F(3.0)])
    case("err_index_fill_range", "index_fill", "int_Scalar", [xs(), I(0), T("idx", [1], [1], 7), F(0.0)])
    case("err_index_fill_dtype", "index_fill", "int_Scalar", [xs(), I(0), T("idx32", [1]), F(0.0)])
    case("err_index_fill_value_dims", "index_fill", "int_Tensor", [xs(), I(0), T("idx", [1]), T("f32", [1])])
    case("err_index_fill_dim", "index_fill", "int_Scalar", [xs(), I(2), T("idx", [1]), F(0.0)])
    # masked_scatter
    src = lambda: T("f32", [12], [1], 40)  # noqa: E731
    case("masked_scatter", "masked_scatter", None, [xs(), T("b1", [3, 4]), src()])
    case("masked_scatter_bcast_mask", "masked_scatter", None, [xs(), T("b1", [4], [1], 1), src()])
    case("masked_scatter_bcast_self", "masked_scatter", None, [T("f32", [4], [2], 1), T("b1", [3, 4], [4, 1], 2), src()])
    case("masked_scatter_src_2d", "masked_scatter", None, [T("i64", [2, 3]), T("b1", [2, 3]), T("i64", [2, 2], [1, 2], 50)])
    case("err_masked_scatter_u8_mask", "masked_scatter", None, [T("f32", [2, 3]), T("u8", [2, 3]), src()])
    case("masked_scatter_u8_mask", "masked_scatter", None, [T("f32", [2, 3]), T("u8", [2], [1], 0), src()])
    case("err_masked_scatter_short", "masked_scatter", None, [xs(), T("b1", [3, 4]), T("f32", [2])])
    case("err_masked_scatter_dtype", "masked_scatter", None, [xs(), T("b1", [3, 4]), T("f64", [12])])
    case("err_masked_scatter_mask_dtype", "masked_scatter", None, [xs(), T("i64", [3, 4]), src()])


def grad_case(name, kind, args, r):
    """A fusebox:: gradient helper's case: r is PyTorch's own gradient (autograd)."""
    text = ["case %s %s -" % (name, kind)]
    for a in args:
        text += a.text
    if isinstance(r, list):
        text.append("out TL %d" % len(r))
        for x in r:
            text += out_tensor(x.clone(memory_format=torch.contiguous_format), [], False)
    else:
        text += out_tensor(r.clone(memory_format=torch.contiguous_format), [], False)
    text.append("end")
    lines.extend(text)


def autograd(f, *ts):
    ts = [t.detach().clone().requires_grad_() for t in ts]
    out = f(*ts)
    g = torch.arange(out.numel(), dtype=out.dtype).reshape(out.shape) * 0.25 - 1.0
    out.backward(g)
    return g, [t.grad for t in ts]


def helper_cases():
    """fusebox::diff_backward, kron_backward, take_along_dim_backward: the gradients
    torch.autograd gives diff, kron and take_along_dim (grad = 0.25 * arange - 1)."""
    pool = {"hg": [], "hidx": []}  # the cases' own tensors, laid end to end in bases hg and hidx

    def own(base, t):
        off = sum(x.numel() for x in pool[base])
        pool[base].append(t.detach().contiguous().reshape(-1))
        st = [int(x) for x in torch.empty(t.shape).stride()]
        return A(t, ["arg T %s %s %s %d" % (base, ints(list(t.shape)), ints(st), off)])

    G = lambda t: own("hg", t)  # noqa: E731
    x = T("f64", [3, 5])
    pre, app = T("f64", [3, 1], [1, 1], 40), T("f64", [3, 2], [2, 1], 50)
    for n, dim, p, a in ((1, -1, None, None), (2, 1, pre, app), (3, 0, None, T("f64", [2, 5], None, 50)), (9, 1, pre, None), (0, 1, pre, app)):
        ts = [x.value] + [t.value for t in (p, a) if t is not None]
        def f(*v, n=n, dim=dim, p=p, a=a):
            k = 1
            pv = v[k] if p is not None else None
            k += p is not None
            av = v[k] if a is not None else None
            return torch.diff(v[0], n, dim, pv, av)
        g, grads = autograd(f, *ts)
        for part, want in enumerate([0, 1, 2]):
            tgt = [x, p, a][part]
            if tgt is None:
                continue
            idx = 0 if part == 0 else (1 if part == 1 else 1 + (p is not None))
            r = grads[idx] if grads[idx] is not None else torch.zeros_like(tgt.value)
            grad_case("diff_backward_n%d_d%d_p%d" % (n, dim, part), "fusebox::diff_backward",
                      [G(g), x, I(n), I(dim), p or N, a or N, I(part)], r)
    for k, (sa, sb) in enumerate((([2, 3], [3, 2]), ([3], [2, 1, 2]), ([], [2, 2]), ([2, 2], [0, 3]))):
        ka, kb = T("f64", sa), T("f64", sb, None, 20)
        g, (ga, gb) = autograd(torch.kron, ka.value, kb.value)
        grad_case("kron_backward_%d_self" % k, "fusebox::kron_backward", [G(g), ka, kb, I(0)], ga)
        grad_case("kron_backward_%d_other" % k, "fusebox::kron_backward", [G(g), ka, kb, I(1)], gb)
    for nm, sx, si, st, off, dim in (("dim1_bcast", [1, 4], [3, 5], [2, 1], 0, 1), ("dim0", [4, 2], [3, 2], [2, 1], 1, 0),
                                     ("flat", [3, 4], [2, 5], [5, 1], 0, None)):
        X = T("f64", sx)
        Ix = T("idx", si, st, off)
        iv = Ix.value.clamp(0, (sx[dim] if dim is not None else X.value.numel()) - 1)
        Ix = own("hidx", iv.contiguous())
        g, (gx,) = autograd(lambda t: torch.take_along_dim(t, iv, dim), X.value)
        grad_case("take_along_dim_backward_" + nm, "fusebox::take_along_dim_backward", [G(g), X, Ix, I(dim) if dim is not None else N], gx)
    stacks = (("hstack", [[3], [], [2]]), ("hstack", [[2, 1], [2, 3]]), ("vstack", [[4], [2, 4], []]),
              ("dstack", [[2, 3], [2, 3, 2]]), ("dstack", [[1], []]), ("column_stack", [[3], [3, 2]]),
              ("vstack", [[2, 3, 2], [1, 3, 2]]), ("column_stack", [[], []]))
    for k, (op, shapes) in enumerate(stacks):
        if op == "vstack" and k == 2:
            shapes = [[4], [2, 4], [4]]
        xs = [T("f64", sh, None, 3 * i) for i, sh in enumerate(shapes)]
        fn = getattr(torch, op)
        g, grads = autograd(lambda *v: fn(list(v)), *[x.value for x in xs])
        grad_case("stack_like_backward_%d_%s" % (k, op), "fusebox::stack_like_backward",
                  [G(g), TL(*xs), S(op)], list(grads))
    for k in (1, 2, 3):
        xs = [T("f64", [], [], 2), T("f64", [3]), T("f64", [2, 2], None, 5), T("f64", [1, 2, 2], None, 9)]
        fn = getattr(torch, "atleast_%dd" % k)
        vals = [x.value.detach().clone().requires_grad_() for x in xs]
        outs = fn(vals)
        gl = [torch.arange(o.numel(), dtype=o.dtype).reshape(o.shape) * 0.5 - 1.0 for o in outs]
        torch.autograd.backward(list(outs), gl)
        grad_case("reshape_each_backward_%dd" % k, "fusebox::reshape_each_backward",
                  [TL(*[G(g) for g in gl]), TL(*xs)], [v.grad for v in vals])
    BASES["hg"] = torch.cat(pool["hg"])
    BASES["hidx"] = torch.cat(pool["hidx"])


def create_cases_2():
    nn = [N, N, N, N]
    case("linspace", "linspace", None, [F(-1.0), F(2.0), I(7)] + nn)
    case("linspace_ints", "linspace", None, [I(0), I(10), I(5)] + nn)
    case("linspace_long", "linspace", None, [F(-3.3), F(7.9), I(50)] + nn)
    case("linspace_f64_long", "linspace", None, [F(-3.3), F(7.9), I(37), I(7), N, N, N])
    case("linspace_desc", "linspace", None, [F(5.0), F(-5.0), I(11)] + nn)
    case("linspace_one", "linspace", None, [F(2.5), F(9.0), I(1)] + nn)
    case("linspace_zero", "linspace", None, [F(2.5), F(9.0), I(0)] + nn)
    case("linspace_int64", "linspace", None, [I(-7), I(20), I(6), I(4), N, N, N])
    case("linspace_int64_long", "linspace", None, [I(-7), I(20), I(19), I(4), N, N, N])
    case("linspace_int32", "linspace", None, [F(0.5), F(10.5), I(4), I(3), N, N, N])
    case("linspace_f16", "linspace", None, [F(0.0), F(1.0), I(5), I(5), N, N, N])
    # long enough for the vectorized fill of torch's AVX2 kernel, halfway inside a vector
    case("linspace_f32_1000", "linspace", None, [F(-3.3), F(7.9), I(1000)] + nn)
    case("linspace_f64_1001", "linspace", None, [F(-1.0), F(1.0), I(1001), I(7), N, N, N])
    case("linspace_i64_1000", "linspace", None, [I(-7), I(1000), I(1000), I(4), N, N, N])
    case("linspace_f16_1000", "linspace", None, [F(-3.3), F(7.9), I(1000), I(5), N, N, N])
    case("linspace_bf16_1000", "linspace", None, [F(-3.3), F(7.9), I(1000), I(15), N, N, N])
    case("err_linspace_negative", "linspace", None, [F(0.0), F(1.0), I(-1)] + nn)
    case("logspace", "logspace", None, [F(-1.0), F(2.0), I(7), F(10.0)] + nn)
    case("logspace_base2", "logspace", None, [I(0), I(10), I(11), F(2.0)] + nn)
    case("logspace_f64", "logspace", None, [F(-2.0), F(3.0), I(9), F(10.0), I(7), N, N, N])
    case("logspace_int", "logspace", None, [I(0), I(3), I(4), F(10.0), I(4), N, N, N])
    case("logspace_one", "logspace", None, [F(1.5), F(3.0), I(1), F(10.0)] + nn)
    case("err_logspace_negative", "logspace", None, [F(0.0), F(1.0), I(-2), F(10.0)] + nn)
    for op in ("tril_indices", "triu_indices"):
        case(op, op, None, [I(3), I(4), I(0), N, N, N, N])
        case(op + "_offset", op, None, [I(4), I(3), I(1), N, N, N, N])
        case(op + "_neg_offset", op, None, [I(4), I(5), I(-2), I(3), N, N, N])
        case(op + "_far_offset", op, None, [I(3), I(3), I(9), N, N, N, N])
        case(op + "_far_neg", op, None, [I(3), I(3), I(-9), N, N, N, N])
        case(op + "_empty", op, None, [I(0), I(3), I(0), N, N, N, N])
        case("err_" + op + "_row", op, None, [I(-1), I(3), I(0), N, N, N, N])
        case("err_" + op + "_col", op, None, [I(2), I(-3), I(0), N, N, N, N])


def shape_cases_3():
    """block_diag, cartesian_prod, combinations, channel_shuffle."""
    case("block_diag", "block_diag", None, [TL(T("f32", [2, 3]), T("f32", [4], [1], 7), T("f32", []))])
    case("block_diag_promote", "block_diag", None, [TL(T("i64", [2, 2]), T("f64", [3], [2], 1), T("b1", [1, 2]))])
    case("block_diag_bool", "block_diag", None, [TL(T("b1", [2, 2]), T("b1", [1], [1], 3))])
    case("block_diag_int_bool", "block_diag", None, [TL(T("b1", [1]), T("i32", [2, 2]))])
    case("block_diag_noncontig", "block_diag", None, [TL(T("f32", [3, 2], [1, 3]), T("f32", [2, 2], [0, 1], 5))])
    case("block_diag_empty_list", "block_diag", None, [TL()])
    case("block_diag_empty_blocks", "block_diag", None,
         [TL(T("f32", [0, 3]), T("f32", [2, 0]), T("f32", [0]), T("f32", [1, 1], [1, 1], 9))])
    case("block_diag_single", "block_diag", None, [TL(T("i64", [2, 3], [1, 2]))])
    case("err_block_diag_3d", "block_diag", None, [TL(T("f32", [2, 2]), T("f32", [1, 2, 2]))])
    case("cartesian_prod", "cartesian_prod", None, [TL(T("f32", [3]), T("f32", [2], [2], 5))])
    case("cartesian_prod_three", "cartesian_prod", None, [TL(T("i64", [2]), T("i64", [3], [3], 1), T("i64", [2], [7]))])
    case("cartesian_prod_one", "cartesian_prod", None, [TL(T("f32", [4], [2], 1))])
    case("cartesian_prod_bool", "cartesian_prod", None, [TL(T("b1", [2]), T("b1", [3], [1], 1))])
    case("cartesian_prod_empty", "cartesian_prod", None, [TL(T("f32", [2]), T("f32", [0]))])
    case("cartesian_prod_expanded", "cartesian_prod", None, [TL(T("f64", [3], [0], 4), T("f64", [2]))])
    case("err_cartesian_prod_2d", "cartesian_prod", None, [TL(T("f32", [2, 2]))])
    case("err_cartesian_prod_0d", "cartesian_prod", None, [TL(T("f32", [2]), T("f32", []))])
    case("err_cartesian_prod_dtypes", "cartesian_prod", None, [TL(T("f32", [2]), T("i64", [2]))])
    case("err_cartesian_prod_empty_list", "cartesian_prod", None, [TL()])
    case("combinations", "combinations", None, [T("f32", [4]), I(2), B(False)])
    case("combinations_default", "combinations", None, [T("f32", [5], [3], 2)])
    case("combinations_r3_rep", "combinations", None, [T("i64", [3], [2]), I(3), B(True)])
    case("combinations_r3", "combinations", None, [T("f64", [5], [1], 3), I(3), B(False)])
    case("combinations_r2_rep", "combinations", None, [T("f32", [4], [0], 6), I(2), B(True)])
    case("combinations_r1", "combinations", None, [T("i32", [3]), I(1), B(False)])
    case("combinations_r0", "combinations", None, [T("f32", [3]), I(0), B(False)])
    case("combinations_r_gt_n", "combinations", None, [T("f32", [3]), I(4), B(False)])
    case("combinations_r_gt_n_rep", "combinations", None, [T("i64", [2]), I(3), B(True)])
    case("combinations_bool", "combinations", None, [T("b1", [3]), I(2), B(True)])
    case("combinations_empty", "combinations", None, [T("f32", [0]), I(2), B(False)])
    case("combinations_empty_rep", "combinations", None, [T("f32", [0]), I(2), B(True)])
    case("combinations_empty_r0", "combinations", None, [T("f32", [0]), I(0), B(True)])
    case("err_combinations_r_negative", "combinations", None, [T("f32", [3]), I(-1), B(False)])
    case("err_combinations_2d", "combinations", None, [T("f32", [2, 3]), I(2), B(False)])
    case("err_combinations_0d", "combinations", None, [T("f32", []), I(2), B(False)])
    case("channel_shuffle", "channel_shuffle", None, [T("f32", [2, 6, 2]), I(3)])
    case("channel_shuffle_4d", "channel_shuffle", None, [T("i64", [1, 4, 2, 3]), I(2)])
    case("channel_shuffle_noncontig", "channel_shuffle", None, [T("f32", [2, 4, 3], [1, 6, 2]), I(2)])
    case("channel_shuffle_channels_last", "channel_shuffle", None, [T("f32", [2, 4, 2, 3], [24, 1, 12, 4]), I(2)])
    case("channel_shuffle_channels_last_3d", "channel_shuffle", None,
         [T("f64", [1, 4, 2, 2, 2], [32, 1, 16, 8, 4]), I(4)])
    case("channel_shuffle_expanded", "channel_shuffle", None, [T("f32", [2, 4, 3], [0, 3, 1]), I(2)])
    case("channel_shuffle_bool", "channel_shuffle", None, [T("b1", [1, 6, 2]), I(2)])
    case("channel_shuffle_g1", "channel_shuffle", None, [T("f32", [1, 4, 2]), I(1)])
    case("channel_shuffle_gC", "channel_shuffle", None, [T("f32", [1, 4, 2]), I(4)])
    case("channel_shuffle_empty", "channel_shuffle", None, [T("f32", [0, 4, 2]), I(2)])
    case("channel_shuffle_no_channels", "channel_shuffle", None, [T("f32", [2, 0, 2]), I(3)])
    case("err_channel_shuffle_2d", "channel_shuffle", None, [T("f32", [2, 4]), I(2)])
    case("err_channel_shuffle_groups_0", "channel_shuffle", None, [T("f32", [1, 4, 2]), I(0)])
    case("err_channel_shuffle_groups_negative", "channel_shuffle", None, [T("f32", [1, 4, 2]), I(-2)])
    case("err_channel_shuffle_indivisible", "channel_shuffle", None, [T("f32", [1, 3, 2]), I(2)])


def main():
    os.makedirs(OUT, exist_ok=True)
    shape_cases()
    create_cases()
    shape_cases_2()
    create_cases_2()
    helper_cases()  # adds bases of its own
    shape_cases_3()
    for name, t in BASES.items():
        np.save(os.path.join(OUT, "base_%s.npy" % name), t.numpy())
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("# generated by tests/unit/gen_shape_golden.py with torch %s; do not edit\n" % torch.__version__)
        f.write("\n".join(lines) + "\n")
    print("wrote %d lines" % len(lines), file=sys.stderr)


if __name__ == "__main__":
    main()
