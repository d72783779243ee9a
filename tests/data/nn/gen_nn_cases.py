#!/usr/bin/python3
"""Golden cases for the nn ops of core/ops/list_nn.h and their gradients.

    /usr/bin/python3 tests/data/nn/gen_nn_cases.py

Run with Debian's python3-torch (1.13). Writes tests/data/nn/cases/NAME/ in
the conformance corpus's case format (tests/corpus/README.md: graph.ir,
args, inK.npy, outK.npy, grad_outK.npy, grad_<input>.npy) using the corpus
generator's own case writer; the functions are in nn_fns.py. PyTorch's
outputs and gradients, deterministic (seeded per case). Read by
tests/unit/test_ops_nn.c.
"""
import os
import shutil
import sys

sys.dont_write_bytecode = True

import numpy as np  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "tests", "corpus"))
sys.path.insert(0, HERE)
import gen_corpus as G  # noqa: E402
import nn_fns as N  # noqa: E402


def specs():
    out = []

    def case(name, fn, args, tol=None, grad=True, grad_skip=(), notes=None):
        out.append(dict(name=name, fn=fn, args=args, tol=tol, grad=grad, grad_skip=grad_skip, notes=notes))

    R = G.Rng
    r = R("max_pool2d")
    case("max_pool2d", N.max_pool2d, [r.f(2, 3, 7, 6)])
    r = R("max_pool2d_ceil_dilated")
    case("max_pool2d_ceil_dilated", N.max_pool2d_ceil_dilated, [r.f64(2, 2, 7, 9)])
    r = R("max_pool2d_indices")
    x = r.f(1, 2, 5, 6)
    x[0, 0, 0, 0] = float("nan")
    case("max_pool2d_indices", N.max_pool2d_indices, [x], grad=False, notes="a NaN wins its window")
    r = R("max_pool2d_indices_grad")
    case("max_pool2d_indices_grad", N.max_pool2d_indices, [r.f(2, 2, 6, 4)])
    r = R("max_pool2d_3d")
    case("max_pool2d_3d", N.max_pool2d_3d, [G.Fortran(r.f(3, 5, 6))], notes="in0 is non-contiguous")
    r = R("avg_pool2d")
    case("avg_pool2d", N.avg_pool2d, [r.f(2, 3, 7, 6)])
    r = R("avg_pool2d_ceil_nopad")
    case("avg_pool2d_ceil_nopad", N.avg_pool2d_ceil_nopad, [r.f64(1, 2, 6, 7)])
    r = R("avg_pool2d_divisor")
    case("avg_pool2d_divisor", N.avg_pool2d_divisor, [r.f(2, 4, 4)])
    r = R("avg_pool2d_int")
    case("avg_pool2d_int", N.avg_pool2d, [r.i(1, 2, 5, 6, lo=-20, hi=20)], notes="integer averages truncate")
    r = R("max_pool1d")
    case("max_pool1d", N.max_pool1d, [r.f(2, 3, 9)])
    r = R("avg_pool1d")
    case("avg_pool1d", N.avg_pool1d, [r.f64(3, 8)])
    r = R("adaptive_avg_pool2d")
    case("adaptive_avg_pool2d", N.adaptive_avg_pool2d, [r.f(2, 3, 7, 5)])
    r = R("instance_norm")
    case("instance_norm", N.instance_norm, [r.f(2, 3, 4, 5), r.f(3), r.f(3)], tol="1e-5 1e-5")
    r = R("instance_norm_plain")
    case("instance_norm_plain", N.instance_norm_plain, [r.f64(3, 2, 6)])
    r = R("instance_norm_running")
    case("instance_norm_running", N.instance_norm_running,
         [r.f(2, 3, 4, 4), r.f(3), r.f(3, lo=0.5, hi=2.0), r.f(3), r.f(3)], grad_skip=("rm", "rv"))
    B, I, H = 3, 5, 4
    r = R("gru_cell")
    case("gru_cell", N.gru_cell, [r.f(B, I), r.f(B, H), r.f(3 * H, I, lo=-0.5, hi=0.5), r.f(3 * H, H, lo=-0.5, hi=0.5),
                                  r.f(3 * H), r.f(3 * H)], tol="1e-5 1e-5")
    r = R("gru_cell_nobias")
    case("gru_cell_nobias", N.gru_cell_nobias, [r.f64(B, I), r.f64(B, H), r.f64(3 * H, I), r.f64(3 * H, H)])
    r = R("lstm_cell")
    case("lstm_cell", N.lstm_cell, [r.f(B, I), r.f(B, H), r.f(B, H), r.f(4 * H, I, lo=-0.5, hi=0.5),
                                    r.f(4 * H, H, lo=-0.5, hi=0.5), r.f(4 * H), r.f(4 * H)], tol="1e-5 1e-5")
    r = R("lstm_cell_h_only")
    case("lstm_cell_h_only", N.lstm_cell_h_only, [r.f64(B, I), r.f64(B, H), r.f64(B, H), r.f64(4 * H, I),
                                                  r.f64(4 * H, H), r.f64(4 * H), r.f64(4 * H)])
    r = R("rnn_tanh_cell")
    case("rnn_tanh_cell", N.rnn_tanh_cell, [r.f(B, I), r.f(B, H), r.f(H, I), r.f(H, H), r.f(H), r.f(H)],
         tol="1e-5 1e-5")
    r = R("rnn_relu_cell")
    case("rnn_relu_cell", N.rnn_relu_cell, [r.f64(B, I), r.f64(B, H), r.f64(H, I), r.f64(H, H), r.f64(H), r.f64(H)])
    r = R("native_batch_norm_backward")
    x = r.f(4, 3, 5)
    mean = x.mean(axis=(0, 2)).astype(np.float32)
    invstd = (1 / np.sqrt(x.var(axis=(0, 2)) + 1e-5)).astype(np.float32)
    case("native_batch_norm_backward", N.native_batch_norm_backward,
         [r.f(4, 3, 5), x, r.f(3), r.f(3), r.f(3, lo=0.5, hi=2.0), mean, invstd, True], grad=False, tol="1e-5 1e-5")
    r = R("native_batch_norm_backward_eval")
    case("native_batch_norm_backward_eval", N.native_batch_norm_backward,
         [r.f64(2, 3, 2, 2), r.f64(2, 3, 2, 2), r.f64(3), r.f64(3), r.f64(3, lo=0.5, hi=2.0), None, None, False],
         grad=False)
    r = R("native_dropout_eval")
    case("native_dropout_eval", N.native_dropout_eval, [r.f(3, 4), r.f(4)])
    r = R("native_dropout_p0")
    case("native_dropout_p0", N.native_dropout_p0, [r.f(3, 4), r.f(4)])
    r = R("native_dropout_p1")
    case("native_dropout_p1", N.native_dropout_p1, [r.f(3, 4), r.f(4)])
    r = R("native_dropout_backward")
    case("native_dropout_backward", N.native_dropout_backward, [r.f(3, 5), r.b(3, 5)], grad=False)
    r = R("dropout_flag_eval")
    case("dropout_flag_eval", N.dropout_flag, [r.f(3, 4), r.f(4), False],
         notes="training is a graph input: the gradient is chosen at run time")
    r = R("dropout_flag_train_p0")
    case("dropout_flag_train_p0", N.dropout_flag_p0, [r.f(3, 4), r.f(4), True],
         notes="training is a graph input: the gradient is chosen at run time")
    r = R("batch_norm_flag_train")
    case("batch_norm_flag_train", N.batch_norm_flag,
         [r.f(4, 3, 5), r.f(3), r.f(3, lo=0.5, hi=2.0), r.f(3), r.f(3), True], grad_skip=("rm", "rv"),
         tol="1e-5 1e-5", notes="training is a graph input: the gradient is chosen at run time")
    r = R("batch_norm_flag_eval")
    case("batch_norm_flag_eval", N.batch_norm_flag,
         [r.f64(4, 3, 5), r.f64(3), r.f64(3, lo=0.5, hi=2.0), r.f64(3), r.f64(3), False], grad_skip=("rm", "rv"),
         notes="training is a graph input: the gradient is chosen at run time")
    r = R("mixed_dtype")
    case("mixed_dtype", N.mixed_dtype, [r.f(3, 4), r.f64(3, 4)],
         notes="float32 * float64: x's gradient is float32 (PyTorch casts it back to x's dtype)")
    r = R("prelu_channels")
    x = r.f(2, 3, 4, 5)
    x[0, 1, 2, :2] = 0.0
    case("prelu_channels", N.prelu_channels, [x, r.f(3, lo=0.05, hi=0.5)],
         notes="per-channel weights; some x are 0 (their gradient is weight * grad, PyTorch's rule)")
    r = R("prelu_single")
    case("prelu_single", N.prelu_single, [r.f64(3, 4, 5), r.f64(1)], notes="one weight for every element")
    r = R("prelu_1d")
    case("prelu_1d", N.prelu_1d, [r.f(7), r.f(1)], notes="a 1-D input has one channel")
    r = R("prelu_2d")
    case("prelu_2d", N.prelu_channels, [r.f(5, 4), r.f(4)])
    r = R("conv_transpose2d_dcgan")
    case("conv_transpose2d_dcgan", N.conv_transpose2d_dcgan, [r.f(2, 4, 3, 4), r.f(4, 3, 4, 4), r.f(6)],
         tol="1e-5 1e-5", notes="stride 2, padding 1, output_padding 1, groups 2")
    r = R("conv_transpose2d_dilated")
    case("conv_transpose2d_dilated", N.conv_transpose2d_dilated, [r.f(2, 3, 5, 4), r.f(3, 2, 3, 3), r.f(2)],
         tol="1e-5 1e-5", notes="output_padding 1 >= stride 1, allowed below dilation 2")
    r = R("conv_transpose1d_groups")
    case("conv_transpose1d_groups", N.conv_transpose1d_groups, [r.f64(2, 4, 6), r.f64(4, 3, 3), r.f64(6)])
    r = R("conv_transpose3d")
    case("conv_transpose3d", N.conv_transpose3d, [r.f(1, 2, 3, 3, 2), r.f(2, 3, 2, 3, 2), r.f(3)], tol="1e-5 1e-5")
    r = R("conv_transpose2d_unbatched")
    case("conv_transpose2d_unbatched", N.conv_transpose2d_unbatched, [r.f(3, 4, 5), r.f(3, 2, 3, 2)],
         tol="1e-5 1e-5")
    r = R("conv3d")
    case("conv3d", N.conv3d, [r.f(2, 4, 4, 5, 5), r.f(6, 2, 3, 2, 3), r.f(6)], tol="1e-5 1e-5")
    r = R("convolution_transposed")
    case("convolution_transposed", N.convolution_transposed, [r.f(2, 3, 4, 3), r.f(3, 2, 3, 3), r.f(2)],
         tol="1e-5 1e-5")
    r = R("convolution_conv")
    case("convolution_conv", N.convolution_conv, [r.f64(1, 2, 6, 5), r.f64(3, 2, 3, 3)])
    r = R("underscore_convolution")
    case("underscore_convolution", N.underscore_convolution, [r.f(2, 4, 5), r.f(4, 2, 3), r.f(4)], tol="1e-5 1e-5")
    return out


def main():
    cases = os.path.join(HERE, "cases")
    if os.path.isdir(cases):
        shutil.rmtree(cases)
    os.makedirs(cases)
    G.CASES = cases
    G.TOLS = {}
    torch.manual_seed(0)
    for s in specs():
        G.gen_case(s)
    print("wrote %d cases to %s" % (len(os.listdir(cases)), cases))


if __name__ == "__main__":
    main()
