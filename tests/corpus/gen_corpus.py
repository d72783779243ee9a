#!/usr/bin/python3
"""Regenerate the fusebox TorchScript-IR test corpus from PyTorch.

    /usr/bin/python3 tests/corpus/gen_corpus.py

Writes tests/corpus/graphs/*.ir, tests/corpus/cases/*/, tests/corpus/forms.txt,
tests/corpus/parse_ir_status.txt and examples/ratio_iou.ir.  Deterministic:
fixed seeds, source paths rewritten to basenames.  See README.md.
"""
import math
import os
import re
import shutil
import subprocess
import sys
import zlib

sys.dont_write_bytecode = True  # keep __pycache__ out of the source tree

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import corpus as C  # noqa: E402

GRAPHS = os.path.join(HERE, "graphs")
CASES = os.path.join(HERE, "cases")
EXAMPLES = os.path.join(ROOT, "examples")

# `# /abs/dir/file.py:12:8` -> `# file.py:12:8`
_SRC_RE = re.compile(r"# (?:[^\s#]*/)([^/\s]+\.py:\d+:\d+)")


def clean(text):
    text = _SRC_RE.sub(r"# \1", text)
    assert HERE not in text and "/usr/lib" not in text and "dist-packages" not in text, text
    if not text.endswith("\n"):
        text += "\n"
    return text


def write_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)


def script_text(fn, inline=False):
    s = torch.jit.script(fn)
    return clean(str(s.inlined_graph if inline else s.graph))


# ---------------------------------------------------------------------------
# Random inputs (numpy, seeded per case so cases are independent of order)
# ---------------------------------------------------------------------------

class Rng:
    def __init__(self, name):
        self.r = np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)

    def f(self, *shape, lo=-2.0, hi=2.0, dtype=np.float32):
        return self.r.uniform(lo, hi, shape).astype(dtype)

    def f64(self, *shape, lo=-2.0, hi=2.0):
        return self.f(*shape, lo=lo, hi=hi, dtype=np.float64)

    def f16(self, *shape, lo=-2.0, hi=2.0):
        return self.f(*shape, lo=lo, hi=hi, dtype=np.float16)

    def i(self, *shape, lo=-10, hi=10, dtype=np.int64, nonzero=False):
        a = self.r.randint(lo, hi + 1, shape).astype(dtype)
        if nonzero:
            a[a == 0] = 1
        return a

    def b(self, *shape, p=0.5):
        return self.r.uniform(0, 1, shape) < p

    def away(self, *shape, lo=0.5, hi=3.0, dtype=np.float32):
        """magnitudes in [lo, hi] with random signs (safe divisors)."""
        m = self.r.uniform(lo, hi, shape)
        s = np.where(self.r.uniform(0, 1, shape) < 0.5, -1.0, 1.0)
        return (m * s).astype(dtype)

    def normal(self, shape, dtype):
        return self.r.standard_normal(shape).astype(dtype)


def with_values(a, values):
    """put the given values at the first flat positions of a (a copy)."""
    a = a.copy()
    flat = a.reshape(-1)
    flat[: len(values)] = np.array(values, dtype=a.dtype)
    return a


EDGE = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0, 1e-30, -1e-30, 88.0, -88.0, 1.0, -1.0]


class Fortran:
    """marks an input that must be passed non-contiguous (transposed strides)."""

    def __init__(self, a):
        self.a = np.asfortranarray(a)


# ---------------------------------------------------------------------------
# Conformance case specifications
# ---------------------------------------------------------------------------

def case_specs():
    specs = []

    def case(name, fn, args, tol=None, grad=True, grad_skip=(), notes=None):
        specs.append(dict(name=name, fn=fn, args=args, tol=tol, grad=grad, grad_skip=grad_skip, notes=notes))

    def R(name):
        return Rng(name)

    r = R("unary_math"); case("unary_math", C.c_unary_math, [r.f(5, 7, lo=-3, hi=3)])
    r = R("unary_positive"); case("unary_positive", C.c_unary_positive, [r.f(5, 7, lo=0.05, hi=5)])
    r = R("unary_edge")
    case("unary_edge", C.c_unary_edge, [with_values(r.f(4, 5, lo=-3, hi=3), EDGE)], grad=False,
         notes="in0 holds NaN, +inf, -inf, -0.0, 0.0, +-1e-30 (float32 denormal-range), +-88 (exp overflow edge).")
    r = R("rounding")
    halves = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -0.0, 0.49999997, -0.49999997, 3.5, 1e8 + 4, -7.0]
    case("rounding", C.c_rounding, [with_values(r.f(4, 5, lo=-4, hi=4), halves)], grad=False,
         notes="round() is round-half-to-even; in0 starts with exact .5 values and -0.0.")
    r = R("activations"); case("activations", C.c_activations, [r.f(5, 7, lo=-4, hi=4)])
    r = R("pow_clamp"); case("pow_clamp", C.c_pow_clamp, [r.f(5, 7), 1.7])
    r = R("clamp_nan")
    case("clamp_nan", C.c_clamp_nan,
         [with_values(r.f(3, 5), [float("nan"), float("inf"), float("-inf"), -0.0]),
          with_values(r.f(5, lo=-1, hi=0), [0.0, 0.0, 0.0, 0.0, float("nan")]),
          with_values(r.f(5, lo=0, hi=1), [0.0, -0.5])], grad=False,
         notes="NaN propagates through clamp (in the input and in a tensor bound); min > max gives max.")
    r = R("unary_f64"); case("unary_f64", C.c_unary_f64, [r.f64(5, 7, lo=-3, hi=3)])
    r = R("half_ops"); case("half_ops", C.c_half_ops, [r.f16(5, 7), r.away(5, 7, dtype=np.float16)], grad=False,
                           notes="float16 inputs and outputs (CPU computes in float32 and rounds to float16).")
    r = R("add_sub_alpha"); case("add_sub_alpha", C.c_add_sub_alpha, [r.f(3, 5), r.f(3, 5)])
    r = R("broadcast_binary"); case("broadcast_binary", C.c_broadcast_binary, [r.f(3, 1, 5), r.away(4, 5)])
    r = R("div_modes_float")
    case("div_modes_float", C.c_div_modes_float,
         [with_values(r.f(5, 7, lo=-5, hi=5), [-0.0, 3.0, -3.0, 4.5]), with_values(r.away(5, 7), [1.5, 1.5, 1.5, -1.5])])
    r = R("div_modes_int")
    case("div_modes_int", C.c_div_modes_int, [r.i(4, 5, lo=-20, hi=20), r.i(4, 5, lo=-5, hi=5, nonzero=True)])
    r = R("int32_arith")
    case("int32_arith", C.c_int32_arith, [r.i(3, 4, dtype=np.int32), r.i(3, 4, dtype=np.int32)])
    r = R("binary_math"); case("binary_math", C.c_binary_math, [r.away(5, 7, lo=0.1, hi=2), r.f(5, 7)])
    r = R("max_min_nan")
    case("max_min_nan", C.c_max_min_nan,
         [with_values(r.f(3, 5), [float("nan"), 1.0, float("inf"), -0.0, float("nan")]),
          with_values(r.f(3, 5), [1.0, float("nan"), float("-inf"), 0.0, float("nan")])], grad=False,
         notes="maximum/minimum propagate NaN from either side.")
    r = R("compare")
    x = with_values(r.f(3, 5), [float("nan"), float("inf"), 1.0, 0.5, -0.0, 1.0])
    y = with_values(r.f(3, 5), [float("nan"), float("inf"), 1.0, 0.25, 0.0, 2.0])
    case("compare", C.c_compare, [x, y], grad=False)
    r = R("logical_bool"); case("logical_bool", C.c_logical_bool, [r.b(3, 5), r.b(3, 5)])
    r = R("bitwise_int"); case("bitwise_int", C.c_bitwise_int, [r.i(3, 5, lo=-8, hi=8), r.i(3, 5, lo=-8, hi=8)])
    r = R("type_promotion")
    case("type_promotion", C.c_type_promotion,
         [r.f(3, 4), np.array(1.25, dtype=np.float64), r.i(4, lo=-3, hi=3), r.b(3, 4), r.f16(3, 4)],
         grad=False, notes="in1 is a 0-d float64 tensor: it does not promote the float32 tensor (x + d is float32), "
         "but it does promote an integer tensor (i + d is float64).")
    r = R("scalar_args"); case("scalar_args", C.c_scalar_args, [r.f(3, 5), 3, -0.5, True])
    r = R("where"); case("where", C.c_where, [r.b(3, 5), r.f(3, 5), r.f(5)])
    r = R("ternary")
    case("ternary", C.c_ternary, [r.f(3, 5), r.f(3, 5), r.f(3, 5, lo=0, hi=1), r.f(3, 5), r.away(3, 5)])
    r = R("masked_fill"); case("masked_fill", C.c_masked_fill, [r.f(4, 5), r.b(4, 5)])
    r = R("conversions")
    case("conversions", C.c_conversions, [with_values(r.f(3, 5, lo=-4, hi=4), [0.0, -0.0, 2.5, -2.5, 0.99, -0.99])],
         notes="float->int conversion truncates toward zero.")
    r = R("int_to_float"); case("int_to_float", C.c_int_to_float, [r.i(3, 5, lo=-3, hi=3), r.f(3, 5, lo=-4, hi=4)])
    r = R("sum_mean"); case("sum_mean", C.c_sum_mean, [r.f(3, 4, 5)])
    r = R("prod_amax"); case("prod_amax", C.c_prod_amax, [r.f(3, 4, 5, lo=0.5, hi=1.5)])
    r = R("max_min_dim"); case("max_min_dim", C.c_max_min_dim, [r.f(4, 5)])
    r = R("var_std"); case("var_std", C.c_var_std, [r.f(4, 5)])
    r = R("logsumexp_cumsum"); case("logsumexp_cumsum", C.c_logsumexp_cumsum, [r.f(4, 5, lo=-5, hi=5)])
    r = R("bool_reductions")
    b = r.b(4, 5, p=0.6)
    b[0, :] = True
    case("bool_reductions", C.c_bool_reductions, [b])
    r = R("int_reductions")
    case("int_reductions", C.c_int_reductions, [r.i(3, 4, lo=-5, hi=5), r.i(3, 4, lo=-5, hi=5, dtype=np.int32)],
         notes="sum/prod/cumsum of int32 produce int64.")
    r = R("reductions_nan")
    x = r.f(4, 5)
    x[1, 2] = float("nan")
    x[2, 0] = float("inf")
    x[3, 4] = float("-inf")
    case("reductions_nan", C.c_reductions_nan, [x], grad=False,
         notes="NaN propagates through sum/amax/amin/max.dim; argmax returns the index of the NaN.")
    r = R("softmax"); case("softmax", C.c_softmax, [r.f(4, 5, lo=-5, hi=5)])
    r = R("rows"); case("rows", C.c_rows, [r.f(6, 32, lo=-5, hi=5), r.f(32), r.f(32)],
                        notes="Rows of 32: a CPU device's row-per-work-item kernels run their loops in lanes.")
    r = R("chunks"); case("chunks", C.c_chunks, [r.f(3, 1000, lo=-4, hi=4), r.f(1000)],
                          notes="3000 elements and a bias over rows of 1000: a CPU device's pointwise chunks and rows.")
    r = R("softmax_masked_f64")
    m = r.b(3, 5, p=0.4)
    m[:, 0] = False
    case("softmax_masked_f64", C.c_softmax_masked_f64, [r.f64(3, 5, lo=-5, hi=5), m])
    r = R("softmax_dtype"); case("softmax_dtype", C.c_softmax_dtype, [r.f(3, 4)])
    r = R("layer_norm"); case("layer_norm", C.c_layer_norm, [r.f(3, 4, 5), r.f(5), r.f(5)])
    r = R("batch_norm_eval")
    case("batch_norm_eval", C.c_batch_norm_eval, [r.f(4, 3, 5), r.f(3), r.f(3, lo=0.5, hi=2), r.f(3), r.f(3)],
         grad_skip=("running_mean", "running_var"),
         notes="eval mode: running stats are inputs; no gradient is saved for running_mean/running_var.")
    r = R("dropout_eval"); case("dropout_eval", C.c_dropout_eval, [r.f(3, 5)])
    r = R("mm_bmm"); case("mm_bmm", C.c_mm_bmm, [r.f(3, 4), r.f(4, 5), r.f(2, 3, 4), r.f(2, 4, 5)])
    r = R("matmul_cases")
    case("matmul_cases", C.c_matmul_cases,
         [r.f(3), r.f(3), r.f(3, 5), r.f(5, 3), r.f(2, 3, 5), r.f(4, 1, 3, 5), r.f(1, 5, 3)],
         notes="1-D@1-D (0-d result), 2-D@1-D, 1-D@2-D, 3-D@2-D, broadcast batch 4-D@3-D, 1-D@3-D, 3-D@1-D.")
    r = R("addmm_linear")
    case("addmm_linear", C.c_addmm_linear, [r.f(5), r.f(3, 4), r.f(4, 5), r.f(2, 3, 4), r.f(5, 4), r.f(5)])
    r = R("matmul_f64"); case("matmul_f64", C.c_matmul_f64, [r.f64(3, 4), r.f64(4, 5)])
    r = R("view_reshape"); case("view_reshape", C.c_view_reshape, [r.f(3, 4, 5)])
    r = R("transpose_permute"); case("transpose_permute", C.c_transpose_permute, [r.f(3, 4, 5), r.f(3, 5)])
    r = R("expand"); case("expand", C.c_expand, [r.f(1, 3, 1), r.f(3, 5)])
    r = R("chunk_split"); case("chunk_split", C.c_chunk_split, [r.f(3, 6)])
    r = R("cat_stack"); case("cat_stack", C.c_cat_stack, [r.f(2, 3), r.f(2, 3), r.f(2, 4)])
    r = R("slicing")
    case("slicing", C.c_slicing, [r.f(4, 6), np.array([4, 0, 0, 2], dtype=np.int64)],
         notes="index_select with a repeated index: its gradient accumulates.")
    r = R("size_numel_dim"); case("size_numel_dim", C.c_size_numel_dim, [r.f(3, 4, 5)])
    r = R("noncontig_input")
    case("noncontig_input", C.c_noncontig_input, [Fortran(r.f(3, 5)), r.f(3, 5)],
         notes="in0.npy is Fortran-ordered: pass it as a non-contiguous 3x5 tensor with strides [1, 3].")
    r = R("self_views"); case("self_views", C.c_self_views, [r.f(3, 5), r.f(5, 3)],
                             notes="the function makes its own non-contiguous views (t, ::2 slice, expand).")
    r = R("creation"); case("creation", C.c_creation, [r.f(2, 3), 4])
    case("scalar_int_float", C.c_scalar_int_float, [7, 2.75])
    case("scalar_negative_int", C.c_scalar_negative_int, [-7, 3],
         notes="int // and % floor toward -inf; int ** int is a float in TorchScript.")
    r = R("if_else_true"); case("if_else_true", C.c_if_else, [r.f(3, 4), True])
    r = R("if_else_false"); case("if_else_false", C.c_if_else, [r.f(3, 4), False])
    r = R("if_tensor_cond_pos"); case("if_tensor_cond_pos", C.c_if_tensor_cond, [r.f(3, 4, lo=-0.5, hi=2)])
    r = R("if_tensor_cond_neg"); case("if_tensor_cond_neg", C.c_if_tensor_cond, [r.f(3, 4, lo=-2, hi=0.5)])
    r = R("loop_carried"); case("loop_carried", C.c_loop_carried, [r.f(3, 4), 4])
    r = R("loop_zero_trips"); case("loop_zero_trips", C.c_loop_carried, [r.f(3, 4), 0],
                                  notes="n == 0: the loop body never runs.")
    r = R("nested_if_in_loop"); case("nested_if_in_loop", C.c_nested_if_in_loop, [r.f(3, 4), 5])
    r = R("while_loop"); case("while_loop", C.c_while_loop, [r.f(3, lo=0.1, hi=1), 50.0])
    r = R("list_tuple"); case("list_tuple", C.c_list_tuple, [r.f(2, 3), r.f(2, 3)],
                             notes="nested tuple output (c, (a - b, (a * b, 2))) flattened depth-first.")
    r = R("list_int_shapes"); case("list_int_shapes", C.c_list_int_shapes, [r.f(2, 3, 4)])
    r = R("optional_none"); case("optional_none", C.c_optional_none, [r.f(3, 5), None])
    r = R("optional_tensor"); case("optional_tensor", C.c_optional_tensor, [r.f(3, 5), r.f(5)])
    r = R("raise_check"); case("raise_check", C.c_raise_check, [r.f(3, 4)],
                              notes="the input is 2-D, so the raise branch is not taken.")
    r = R("lstm_cell")
    case("lstm_cell", C.c_lstm_cell, [r.f(3, 4), r.f(3, 5), r.f(3, 5), r.f(20, 4, lo=-0.5, hi=0.5),
                                      r.f(20, 5, lo=-0.5, hi=0.5), r.f(20, lo=-0.5, hi=0.5), r.f(20, lo=-0.5, hi=0.5)])
    r = R("gelu_tanh"); case("gelu_tanh", C.c_gelu_tanh, [r.f(5, 7, lo=-4, hi=4)])
    r = R("bias_gelu"); case("bias_gelu", C.c_bias_gelu, [r.f(3, 7), r.f(7)])
    r = R("layer_norm_manual")
    case("layer_norm_manual", C.c_layer_norm_manual, [r.f(3, 7), r.f(7), r.f(7), 1e-5])
    r = R("softmax_manual"); case("softmax_manual", C.c_softmax_manual, [r.f(4, 5, lo=-5, hi=5), 1])
    r = R("mlp"); case("mlp", C.c_mlp, [r.f(3, 4), r.f(6, 4), r.f(6), r.f(5, 6), r.f(5)])
    r = R("attention")
    m = r.b(3, 5, p=0.3)
    m[:, 0] = False
    case("attention", C.c_attention, [r.f(2, 3, 4), r.f(2, 5, 4), r.f(2, 5, 4), m])
    r = R("ratio_iou")
    n = 1000
    case("ratio_iou", C.c_ratio_iou,
         [r.f(n, lo=0, hi=10), r.f(n, lo=0, hi=10), r.f(n, lo=0.1, hi=5), r.f(n, lo=0.1, hi=5),
          r.f(n, lo=0, hi=10), r.f(n, lo=0, hi=10), r.f(n, lo=0.1, hi=5), r.f(n, lo=0.1, hi=5)],
         notes="the ratio IoU function from the PyTorch NNC fuser blog post (examples/ratio_iou.py).")
    return specs + holdout_case_specs()


# tolerances where the defaults are too strict: float32 sums (matmul, reductions, normalization) whose result
# depends on accumulation order; near-zero results then need an absolute tolerance above 1e-6.  Measured with
# `gen_corpus.py -v`: PyTorch's float32 outputs stay within 0.25x the default tolerance of a float64 run.
TOLS = {
    name: "1e-5 1e-5" for name in (
        "sum_mean", "var_std", "logsumexp_cumsum", "layer_norm", "layer_norm_manual", "batch_norm_eval", "mm_bmm",
        "matmul_cases", "addmm_linear", "lstm_cell", "mlp", "attention", "self_views", "noncontig_input")
}


# ---------------------------------------------------------------------------
# Case generation
# ---------------------------------------------------------------------------

def to_torch(a):
    if isinstance(a, Fortran):
        return torch.from_numpy(a.a.copy(order="F"))
    if isinstance(a, np.ndarray):
        return torch.from_numpy(a.copy())
    return a


def flatten(v, out):
    if isinstance(v, (tuple, list)):
        for e in v:
            flatten(e, out)
    else:
        out.append(v)
    return out


def to_numpy(v):
    if isinstance(v, torch.Tensor):
        return np.array(v.detach().numpy(), order="C")
    if isinstance(v, bool):
        return np.array(v, dtype=np.bool_)
    if isinstance(v, int):
        return np.array(v, dtype=np.int64)
    if isinstance(v, float):
        return np.array(v, dtype=np.float64)
    raise TypeError("unsupported output %r" % (v,))


def scalar_literal(v):
    if v is None:
        return "None"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        s = repr(v)
        if not any(c in s for c in ".eEn"):
            s += ".0"
        return s
    raise TypeError(v)


def same(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b  # e.g. int ** int is a float in TorchScript but an int in Python
    a = to_numpy(a)
    b = to_numpy(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return np.allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-6, atol=1e-7, equal_nan=True)
    return np.array_equal(a, b)


def is_float_tensor(t):
    return isinstance(t, torch.Tensor) and t.dtype in (torch.float32, torch.float64)


def gen_case(spec):
    name, fn, args = spec["name"], spec["fn"], spec["args"]
    d = os.path.join(CASES, name)
    os.makedirs(d)
    sf = torch.jit.script(fn)
    text = str(sf.graph)
    inlined = "prim::CallFunction" in text
    if inlined:
        text = str(sf.inlined_graph)
    write_text(os.path.join(d, "graph.ir"), clean(text))
    names = [v.debugName() for v in sf.graph.inputs()]
    assert len(names) == len(args), (name, names)

    lines = []
    for k, a in enumerate(args):
        if isinstance(a, (np.ndarray, Fortran)):
            arr = a.a if isinstance(a, Fortran) else a
            np.save(os.path.join(d, "in%d.npy" % k), arr)
            lines.append("in%d.npy" % k)
        else:
            lines.append(scalar_literal(a))
    write_text(os.path.join(d, "args"), "\n".join(lines) + "\n")

    # outputs of the scripted function (profiling executor, no fusers)
    outs = flatten(sf(*[to_torch(a) for a in args]), [])
    eager = flatten(fn(*[to_torch(a) for a in args]), [])
    assert len(outs) == len(eager), name
    for k, (o, e) in enumerate(zip(outs, eager)):
        assert same(o, e), "%s: script and eager differ at output %d" % (name, k)
        np.save(os.path.join(d, "out%d.npy" % k), to_numpy(o))

    notes = []
    if spec["notes"]:
        notes.append(spec["notes"])
    if inlined:
        notes.append("graph.ir is the inlined graph (torch.jit.script(fn).inlined_graph): "
                     "the plain .graph calls other functions through prim::CallFunction.")
    tol = spec["tol"] or TOLS.get(name)
    if tol:
        write_text(os.path.join(d, "tol"), tol + "\n")

    nongrad = []
    if spec["grad"]:
        saved = grad_case(d, name, fn, args, names, spec["grad_skip"])
        if not saved:
            nongrad.append("no gradients: no floating output depends on a floating input.")
    if nongrad:
        notes.extend(nongrad)
    if notes:
        write_text(os.path.join(d, "notes"), "\n".join(notes) + "\n")
    return len(outs)


def grad_case(d, name, fn, args, names, grad_skip):
    tins = [to_torch(a) for a in args]
    wrt = []
    for k, t in enumerate(tins):
        if is_float_tensor(t) and names[k].split(".")[0] not in grad_skip:
            t.requires_grad_(True)
            wrt.append(k)
    if not wrt:
        return False
    outs = flatten(fn(*tins), [])
    r = Rng("grad:" + name)
    sel, gouts = [], []
    for k, o in enumerate(outs):
        if (isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad
                and type(o.grad_fn).__name__ != "NotImplemented"):  # e.g. floor_divide has no derivative
            g = r.normal(tuple(o.shape), o.detach().numpy().dtype)
            sel.append(o)
            gouts.append(torch.from_numpy(g))
            np.save(os.path.join(d, "grad_out%d.npy" % k), g)
    if not sel:
        return False
    grads = torch.autograd.grad(sel, [tins[k] for k in wrt], gouts, allow_unused=True)
    any_saved = False
    for k, g in zip(wrt, grads):
        if g is not None:
            np.save(os.path.join(d, "grad_%s.npy" % names[k]), np.array(g.numpy(), order="C"))
            any_saved = True
    return any_saved


def precision_report(spec):
    """max error of float32 outputs against the same function run in float64 (diagnostic)."""
    args = spec["args"]
    if not any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args):
        return None
    if any(isinstance(a, np.ndarray) and not np.isfinite(a).all() for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f"):
        return None
    a32 = [to_torch(a) for a in args]
    a64 = [t.double() if isinstance(t, torch.Tensor) and t.dtype == torch.float32 else t for t in a32]
    try:
        o32 = flatten(spec["fn"](*a32), [])
        o64 = flatten(spec["fn"](*a64), [])
    except Exception:
        return None
    worst = 0.0
    for x, y in zip(o32, o64):
        if isinstance(x, torch.Tensor) and x.dtype == torch.float32 and y.dtype == torch.float64:
            x = x.detach().double()
            y = y.detach()
            err = ((x - y).abs() / (1e-6 + 1e-5 * y.abs())).max().item() if x.numel() else 0.0
            worst = max(worst, err)
    return worst


# ---------------------------------------------------------------------------
# Graphs
# ---------------------------------------------------------------------------

SCRIPT_GRAPHS = [
    ("lstm_cell", C.lstm_cell), ("gelu_tanh", C.gelu_tanh), ("bias_gelu", C.bias_gelu),
    ("layer_norm_manual", C.layer_norm_manual), ("layer_norm_f", C.layer_norm_f), ("softmax_manual", C.softmax_manual),
    ("mlp", C.mlp), ("attention", C.attention), ("ratio_iou", C.ratio_iou),
]
SCRIPT_GRAPHS += [(n[2:], getattr(C, n)) for n in sorted(dir(C)) if n.startswith("g_")]
# a few case functions with many ops are worth having as standalone graphs too
SCRIPT_GRAPHS += [(n[2:], getattr(C, n)) for n in ("c_activations", "c_type_promotion", "c_matmul_cases",
                                                    "c_scalar_int_float", "c_creation", "c_slicing")]


def trace_specs():
    r = Rng("trace")
    t = lambda *s: torch.from_numpy(r.f(*s))  # noqa: E731
    lstm_args = [t(3, 4), t(3, 5), t(3, 5), t(20, 4), t(20, 5), t(20), t(20)]
    return [
        ("pointwise", C.t_pointwise, (t(3, 5), t(3, 5))),
        ("reductions", C.t_reductions, (t(3, 4, 5),)),
        ("view_ops", C.t_view_ops, (t(2, 4, 6),)),
        ("tensor_const", C.t_tensor_const, (t(2, 3),)),
        ("int_ops", C.t_int_ops, (torch.from_numpy(r.i(3, 4)), torch.from_numpy(r.i(3, 4)))),
        ("noncontig", C.t_noncontig, (torch.from_numpy(np.asfortranarray(r.f(3, 5))),)),
        ("half", C.t_half, (torch.from_numpy(r.f16(3, 5)),)),
        ("bool_mask", C.t_bool_mask, (t(3, 5), torch.from_numpy(r.b(3, 5)))),
        ("creation", C.t_creation, (t(2, 3),)),
        ("mlp", C.mlp, (t(3, 4), t(6, 4), t(6), t(5, 6), t(5))),
        ("lstm_cell", C.lstm_cell, tuple(lstm_args)),
        ("lstm_cell_grad", C.lstm_cell, tuple(a.clone().requires_grad_() for a in lstm_args)),
        ("gelu_tanh", C.gelu_tanh, (t(5, 7),)),
        ("gelu_tanh_f64", C.gelu_tanh, (torch.from_numpy(r.f64(5, 7)),)),
        ("bias_gelu", C.bias_gelu, (t(3, 7), t(7))),
        ("layer_norm_manual", C.layer_norm_manual, (t(3, 7), t(7), t(7))),
        ("layer_norm_f", C.layer_norm_f, (t(3, 7), t(7), t(7))),
        ("softmax_manual", lambda x: C.softmax_manual(x, 1), (t(4, 5),)),
        ("attention", C.attention, (t(2, 3, 4), t(2, 5, 4), t(2, 5, 4), torch.from_numpy(r.b(3, 5)))),
        ("ratio_iou", C.ratio_iou, tuple(t(7, 11) for _ in range(8))),
        ("broadcast_0d", lambda x, s: x * s + s, (t(3, 5), torch.tensor(2.0))),
    ]


def holdout_case_specs():
    """Hold-out finds (the functions at the end of corpus.py): realistic pieces whose ops the table
    lacked when they were first run. Defined here, after trace_specs, so that adding cases does not
    move the source lines that traced lambdas above record."""
    specs = []

    def case(name, fn, args, tol=None, grad=True, grad_skip=(), notes=None):
        specs.append(dict(name=name, fn=fn, args=args, tol=tol, grad=grad, grad_skip=grad_skip, notes=notes))

    def R(name):
        return Rng(name)

    r = R("te_reductions"); case("te_reductions", C.c_te_reductions, [r.f(4, 5, lo=0.5, hi=1.5)], tol="1e-5 1e-5")
    r = R("te_rms_norm"); case("te_rms_norm", C.c_te_rms_norm, [r.f(3, 8), r.f(8)], tol="1e-5 1e-5")
    r = R("te_shape_ops"); case("te_shape_ops", C.c_te_shape_ops, [r.f(3, 4), r.f(4, 3), r.f(4)])
    r = R("te_cat_chunk"); case("te_cat_chunk", C.c_te_cat_chunk, [r.f(4, 6), r.f(4, 3)])
    r = R("te_views"); case("te_views", C.c_te_views, [r.f(6, 4), r.f(2, 6, 4), Fortran(r.f(3, 5))],
                               notes="in2 is passed with transposed strides: its reshape cannot be a view.")
    r = R("te_max_dim_nan")
    xm = r.f(4, 5)
    xm[1, 3] = np.nan
    xm[2, 0] = np.nan
    xm[3, :] = 1.0
    case("te_max_dim_nan", C.c_te_max_dim_nan, [xm], grad=False,
         notes="in0 has NaN at [1, 3] and [2, 0] (max.dim/min.dim return the NaN and its index) and a row of ties.")
    r = R("te_type_as"); case("te_type_as", C.c_te_type_as, [r.f(3, 4), r.i(3, 4)])
    r = R("ce_gather"); case("ce_gather", C.c_ce_gather, [r.f(4, 6), r.i(4, lo=0, hi=5)], tol="1e-5 1e-6")
    r = R("cross_entropy_ls")
    case("cross_entropy_ls", C.c_cross_entropy_ls, [r.f(4, 6), np.array([1, 2, 5, 0]), r.f(6, lo=0.2, hi=2)],
         tol="1e-5 1e-6", grad_skip=("weight",),
         notes="label smoothing; class weights with ignore_index=2 (target 2 is ignored); no gradient for weight.")
    r = R("focal_loss")
    case("focal_loss", C.c_focal_loss, [r.f(4, 5, lo=-3, hi=3), (r.f(4, 5, lo=0, hi=1) > 0.5).astype(np.float32), 0.25, 2.0],
         tol="1e-5 1e-6")
    r = R("advanced_index")
    case("advanced_index", C.c_advanced_index, [r.f(4, 5), np.array([3, 0, -1, 2]), np.array([True, False, True, True])],
         notes="x[idx], x[:, idx], x[idx, idx], x[mask], x[None, idx, 1:] (aten::index with Tensor?[] indices; -1 wraps).")
    r = R("diou_elementwise")

    def boxes(r, n):
        xy = r.f(n, 2, lo=0, hi=5)
        return np.concatenate([xy, xy + r.f(n, 2, lo=0.5, hi=3)], 1).astype(np.float32)
    case("diou_elementwise", C.c_diou_elementwise, [boxes(r, 7), boxes(r, 7), 1e-7], tol="1e-5 1e-6",
         notes="inter[m] = ...[m]: a boolean-mask index_put_ into a tensor made inside the function.")
    r = R("index_put"); case("index_put", C.c_index_put, [r.f(5, 3), np.array([4, 1]), r.f(2, 3)])
    r = R("attention_triu")
    case("attention_triu", C.c_attention_triu, [r.f(2, 5, 4), r.f(2, 5, 4), r.f(2, 5, 4)], tol="1e-5 1e-5")
    r = R("clamp_inplace")
    case("clamp_inplace", C.c_clamp_inplace, [r.f(4, 5)], notes="in-place clamp_/mul_/add_, and zero_ through a view.")
    r = R("adam_step")
    case("adam_step", C.c_adam_step, [r.f(3, 4), r.f(3, 4), r.f(3, 4, lo=-0.1, hi=0.1), r.f(3, 4, lo=0.0, hi=0.1), 3, 1e-3],
         tol="1e-5 1e-6")
    r = R("l2_normalize"); case("l2_normalize", C.c_l2_normalize, [r.f(4, 6)], tol="1e-5 1e-5")
    r = R("norms"); case("norms", C.c_norms, [r.f(3, 5)], tol="1e-5 1e-5")
    r = R("group_norm"); case("group_norm", C.c_group_norm, [r.f(2, 4, 3, 3), r.f(4), r.f(4)], tol="1e-5 1e-5")
    r = R("losses"); case("losses", C.c_losses, [r.f(4, 5), r.f(4, 5)], tol="1e-5 1e-6")
    r = R("topk_sort")
    x = r.f(4, 6)
    x[1, 3] = x[1, 0]
    case("topk_sort", C.c_topk_sort, [x], notes="row 1 has a tie: sort is stable (equal values keep their order).")
    r = R("repeat_flip_roll"); case("repeat_flip_roll", C.c_repeat_flip_roll, [r.f(2, 3)])
    r = R("pad"); case("pad", C.c_pad, [r.f(2, 3, 4)])
    r = R("scalar_math")
    case("scalar_math", C.c_scalar_math, [r.f(2, 3), 7, 2.5], notes="math.sqrt/exp/log on floats; round() is half-to-even.")
    r = R("label_smoothing_onehot")
    case("label_smoothing_onehot", C.c_label_smoothing_onehot, [r.f(4, 5), r.i(4, lo=0, hi=4), 0.1], tol="1e-5 1e-6")
    r = R("embedding_einsum")
    case("embedding_einsum", C.c_embedding_einsum, [r.i(2, 3, lo=0, hi=6), r.f(7, 4), r.f(1, 2, 3, 4), r.f(1, 2, 5, 4)],
         tol="1e-5 1e-5")
    r = R("moved_views")
    case("moved_views", C.c_moved_views, [r.f(2, 3, 4), r.f(4, 6)])
    r = R("meshgrid_grids")
    case("meshgrid_grids", C.c_meshgrid_grids, [r.f(3), r.f(4), r.f(2)])
    r = R("fuzz_narrow_rounding")
    case("fuzz_narrow_rounding", C.c_fuzz_narrow_rounding, [r.f(5, 7, lo=4.0, hi=5.5), r.i(5, 7, dtype=np.int32)],
         tol="1e-2 1e-2", grad=False,
         notes="fusebox fuzz seed 500043 (nvfuser_like, issue 21), minimized: bfloat16 log -> cos -> mul_(100) "
               "(log(x) near pi/2: cos amplifies an unrounded log). Every op's result is rounded to its dtype: "
               "(x + 1000) - 1000 in float16 and (x + 100) - 100 in bfloat16 come back in steps of 0.5; "
               "int32 i + 2147483647 wraps (negative for i > 0). Outputs are converted to float32 "
               "(numpy has no bfloat16); tol 1e-2 is one bfloat16 rounding step.")
    return specs

# fused graphs: (name, function, input shapes, requires_grad, extra setup)
OPT_SPECS = {
    "pointwise": ("t_pointwise", [(3, 5)] * 2, False, None),
    "ratio_iou": ("ratio_iou", [(7, 11)] * 8, False, None),
    "ratio_iou_grad": ("ratio_iou", [(7, 11)] * 8, True, None),
    "lstm_cell": ("lstm_cell", [(3, 4), (3, 5), (3, 5), (20, 4), (20, 5), (20,), (20,)], False, None),
    "lstm_cell_grad": ("lstm_cell", [(3, 4), (3, 5), (3, 5), (20, 4), (20, 5), (20,), (20,)], True, None),
    "bias_gelu_grad": ("bias_gelu", [(3, 7), (7,)], True, None),
    "bias_gelu_grad_backward": ("bias_gelu", [(3, 7), (7,)], True, None),
    "ratio_iou_grad_backward": ("ratio_iou", [(7, 11)] * 8, True, None),
    "gelu_tanh": ("gelu_tanh", [(5, 7)], False, None),
    "layer_norm_manual": ("layer_norm_manual", [(3, 7), (7,), (7,)], False, None),
    "softmax_manual": ("softmax_manual", [(4, 5), 1], False, None),
    "ratio_iou_dynamic": ("ratio_iou", [(7, 11)] * 8, False, "dynamic"),
}


def opt_graph(name):
    """runs in a subprocess: profile a scripted function under NNC on CPU and print the optimized graph."""
    fname, shapes, rg, extra = OPT_SPECS[name]
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_texpr_fuser_enabled(True)
    torch._C._jit_set_te_must_use_llvm_cpu(False)  # Debian's torch has no LLVM: NNC uses its C++ IR evaluator
    if extra == "dynamic":
        torch.jit.set_fusion_strategy([("DYNAMIC", 3)])
    fn = torch.jit.script(getattr(C, fname))
    r = Rng("opt:" + name)

    def inputs(delta=0):
        out = []
        for s in shapes:
            if isinstance(s, int):
                out.append(s)
            else:
                s = tuple(x + delta for x in s) if delta else s
                out.append(torch.from_numpy(r.f(*s, lo=0.1, hi=2)).requires_grad_(rg))
        return out

    backward = name.endswith("_backward")
    with torch.jit.fuser("fuser1"):
        for i in range(4):
            res = fn(*inputs())
            if rg:
                outs = [o for o in flatten(res, []) if isinstance(o, torch.Tensor)]
                torch.autograd.backward(outs, [torch.ones_like(o) for o in outs])
        if rg and not backward:
            fn(*inputs())  # the last executed graph is now the forward one again
        if extra == "dynamic":
            for i in range(4):
                fn(*inputs(delta=1 + i))
        sys.stdout.write(clean(str(torch.jit.last_executed_optimized_graph())))


def gen_graphs():
    files = {}
    for name, fn in SCRIPT_GRAPHS:
        s = torch.jit.script(fn)
        text = str(s.graph)
        files["script_%s.ir" % name] = clean(text)
        if "prim::CallFunction" in text:
            files["script_%s_inlined.ir" % name] = clean(str(s.inlined_graph))
    for name, fn, inputs in trace_specs():
        tr = torch.jit.trace(fn, inputs, check_trace=False)
        files["trace_%s.ir" % name] = clean(str(tr.graph))
    for name in OPT_SPECS:
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--opt", name],
                           capture_output=True, text=True)
        if p.returncode != 0:
            print("opt_%s failed:\n%s" % (name, p.stderr), file=sys.stderr)
            continue
        files["opt_%s.ir" % name] = p.stdout
    for fname, text in files.items():
        write_text(os.path.join(GRAPHS, fname), text)
    return sorted(files)


# ---------------------------------------------------------------------------
# Checks and the forms inventory
# ---------------------------------------------------------------------------

def strip_for_parse(text):
    """drop source comments and `with` subgraph sections (forms parse_ir does not accept)."""
    text = re.sub(r" # [^\n]*", "", text)
    return text.split("\nwith ")[0] + ("\n" if "\nwith " in text else "")


def try_parse(text):
    try:
        torch._C.parse_ir(text)
        return "ok"
    except Exception as e:  # noqa: BLE001
        first = str(e).strip().splitlines()
        msg = first[0] if first else type(e).__name__
        try:
            torch._C.parse_ir(strip_for_parse(text))
            return "ok after stripping comments/with-sections (%s)" % msg
        except Exception as e2:  # noqa: BLE001
            lines = str(e2).strip().splitlines()
            return "FAILS: %s" % (lines[0] if lines else type(e2).__name__)


def scan_type(text, i):
    depth = 0
    j = i
    while j < len(text):
        c = text[j]
        if c in "([":
            depth += 1
        elif c in ")]":
            if depth == 0:
                break
            depth -= 1
        elif depth == 0 and (c in ",\n" or text.startswith(" =", j)):
            break
        j += 1
    return text[i:j]


def scan_attr(text, i):
    """text[i] is '[' after a node kind: return the attribute text up to the matching ']'."""
    depth = 0
    j = i
    inq = False
    while j < len(text):
        c = text[j]
        if inq:
            if c == "\\":
                j += 2
                continue
            if c == '"':
                inq = False
        elif c == '"':
            inq = True
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                return text[i + 1:j]
        j += 1
    return text[i + 1:]


def top_level_names(attr):
    names, depth, start = [], 0, 0
    for j, c in enumerate(attr + ","):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            names.append(attr[start:j].split("=")[0].strip())
            start = j + 1
    return names


def inventory(paths):
    types, consts, attrs, kinds = set(), {}, {}, set()
    for p in paths:
        text = open(p, encoding="utf-8").read()
        for m in re.finditer(r"%[\w.]+ : ", text):
            types.add(scan_type(text, m.end()))
        for m in re.finditer(r"((?:[a-zA-Z_]+::[\w.]+))(\[|\()", text):
            kinds.add(m.group(1))
            if m.group(2) == "[":
                a = scan_attr(text, m.end() - 1)
                if m.group(1) == "prim::Constant":
                    line_start = text.rfind("\n", 0, m.start()) + 1
                    head = text[line_start:m.start()]
                    tm = re.search(r": (.*) = $", head)
                    ty = tm.group(1) if tm else "?"
                    consts.setdefault(ty, set()).add(a)
                else:
                    attrs.setdefault(m.group(1), []).append(a)
        for m in re.finditer(r"prim::Constant\(\)", text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            tm = re.search(r": (.*) = $", text[line_start:m.start()])
            consts.setdefault(tm.group(1) if tm else "?", set()).add("(no attribute)")
    return types, consts, attrs, kinds


def write_forms(paths):
    types, consts, attrs, kinds = inventory(paths)
    out = ["# Every distinct form in the generated .ir files (graphs/ and cases/*/graph.ir).",
           "# Generated by gen_corpus.py; the C parser must accept all of these.", "",
           "## Type spellings (%d)" % len(types)]
    out += sorted(types)
    out += ["", "## prim::Constant attribute forms, by output type"]
    for ty in sorted(consts):
        out.append("### %s (%d)" % (ty, len(consts[ty])))
        out += ["  [%s]" % a if a != "(no attribute)" else "  (no attribute)" for a in sorted(consts[ty])]
    out += ["", "## Other nodes with attributes: attribute names, then the shortest and longest example"]
    for kind in sorted(attrs):
        ex = sorted(set(attrs[kind]), key=lambda a: (len(a), a))
        names = sorted({n for a in ex for n in top_level_names(a)})
        out.append("### %s: %s" % (kind, ", ".join(names)))
        out += ["  [%s]" % a for a in (ex[:1] + ex[-1:] if len(ex) > 1 else ex)]
    out += ["", "## Node kinds (%d)" % len(kinds)]
    out += sorted(kinds)
    write_text(os.path.join(HERE, "forms.txt"), "\n".join(out) + "\n")


def check(graph_files, specs):
    status = []
    all_ir = [os.path.join(GRAPHS, f) for f in graph_files]
    all_ir += [os.path.join(CASES, s["name"], "graph.ir") for s in specs]
    all_ir.append(os.path.join(EXAMPLES, "ratio_iou.ir"))
    for p in all_ir:
        text = open(p, encoding="utf-8").read()
        assert "/" + "work/" not in text and HERE not in text, p
        assert not re.search(r"# /", text), p
        status.append("%s: %s" % (os.path.relpath(p, HERE), try_parse(text)))
    write_text(os.path.join(HERE, "parse_ir_status.txt"), "\n".join(status) + "\n")
    # cases: args count == graph inputs, every npy loads
    for s in specs:
        d = os.path.join(CASES, s["name"])
        text = open(os.path.join(d, "graph.ir")).read()
        n_in = len(re.findall(r"%[\w.]+ : ", text[:text.index("):\n")]))
        try:
            assert n_in == len(list(torch._C.parse_ir(strip_for_parse(text)).inputs()))
        except RuntimeError:
            pass  # parse_ir rejects e.g. `Function` constants; parse_ir_status.txt records it
        args = open(os.path.join(d, "args")).read().splitlines()
        assert len(args) == n_in, (s["name"], len(args), n_in)
        for a in args:
            if a.endswith(".npy"):
                assert os.path.exists(os.path.join(d, a)), (d, a)
        for f in os.listdir(d):
            if f.endswith(".npy"):
                np.load(os.path.join(d, f), allow_pickle=False)
        assert os.path.exists(os.path.join(d, "out0.npy")), d
    write_forms(all_ir)
    return status


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--opt":
        opt_graph(sys.argv[2])
        return
    torch.manual_seed(0)
    for d in (GRAPHS, CASES):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)

    # examples/ratio_iou.ir (+ .py source copy of the function)
    sys.path.insert(0, EXAMPLES)
    import ratio_iou as example
    write_text(os.path.join(EXAMPLES, "ratio_iou.ir"), script_text(example.ratio_iou))

    specs = case_specs()
    names = [s["name"] for s in specs]
    assert len(names) == len(set(names))
    n_out = 0
    for s in specs:
        n_out += gen_case(s)
    graph_files = gen_graphs()
    status = check(graph_files, specs)

    if "-v" in sys.argv:
        for s in specs:
            w = precision_report(s)
            if w is not None and w > 0.5:
                print("precision: %-22s float32 vs float64 error = %.2f x (1e-5 rel + 1e-6 abs)" % (s["name"], w))
    bad = [x for x in status if "FAILS" in x]
    print("graphs: %d, cases: %d (%d outputs), parse_ir failures: %d (see parse_ir_status.txt)"
          % (len(graph_files), len(specs), n_out, len(bad)))


if __name__ == "__main__":
    main()
