#!/usr/bin/python3
"""Golden cases for the nn ops of core/ops/list_nn.h and their gradients.

    /usr/bin/python3 tests/data/nn/gen_nn_cases.py [NAME...]

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
    # ---- upsampling (F.interpolate's scripted graphs and the plain overloads), pixel shuffle, adaptive max
    r = R("interp_nearest_scale")
    case("interp_nearest_scale", N.interp_nearest_scale, [r.f(2, 3, 4, 5)])
    r = R("interp_nearest_frac")
    case("interp_nearest_frac", N.interp_nearest_frac, [r.f(1, 3, 7, 5)],
         notes="scale factors 1.7 and 2.3: source indices floor(float(o / scale))")
    r = R("interp_nearest_size")
    case("interp_nearest_size", N.interp_nearest_size, [r.f64(2, 2, 3, 4)])
    r = R("interp_nearest_recompute")
    case("interp_nearest_recompute", N.interp_nearest_recompute, [r.f(1, 2, 9, 6)],
         notes="recompute_scale_factor=True: the op gets an output size and no scales (in / out is used)")
    r = R("interp_nearest_1d")
    case("interp_nearest_1d", N.interp_nearest_1d, [r.f(2, 3, 5)])
    r = R("interp_nearest_3d")
    case("interp_nearest_3d", N.interp_nearest_3d, [r.f64(1, 2, 2, 3, 3)])
    r = R("interp_nearest_same_size")
    case("interp_nearest_same_size", N.interp_nearest_same_size, [r.f64(1, 2, 5, 5)],
         notes="scale 1.1 keeps 5 as 5: the forward reads rows floor(o / 1.1) = 0, 0, 1, 2, 3 but PyTorch's "
               "backward kernel copies (out == in), so the gradient is not the forward's transpose; "
               "fusebox's backward op does what PyTorch's does")
    r = R("interp_linear_1d")
    case("interp_linear_1d", N.interp_linear_1d, [r.f(2, 3, 5)])
    r = R("interp_linear_1d_align")
    case("interp_linear_1d_align", N.interp_linear_1d_align, [r.f64(2, 2, 4)])
    r = R("interp_bilinear_scale")
    case("interp_bilinear_scale", N.interp_bilinear_scale, [r.f(2, 3, 4, 5)])
    r = R("interp_bilinear_size_align")
    case("interp_bilinear_size_align", N.interp_bilinear_size_align, [r.f(1, 2, 4, 5)])
    r = R("interp_bilinear_down")
    case("interp_bilinear_down", N.interp_bilinear_down, [r.f64(2, 2, 7, 5)])
    r = R("interp_bilinear_noncontig")
    case("interp_bilinear_noncontig", N.interp_bilinear_scale, [G.Fortran(r.f(2, 3, 4, 5))],
         notes="in0 is non-contiguous")
    r = R("interp_trilinear")
    case("interp_trilinear", N.interp_trilinear, [r.f(1, 2, 3, 4, 5)])
    r = R("interp_trilinear_align")
    case("interp_trilinear_align", N.interp_trilinear_align, [r.f64(2, 1, 2, 3, 4)])
    r = R("interp_bicubic_scale")
    case("interp_bicubic_scale", N.interp_bicubic_scale, [r.f(2, 2, 4, 5)], tol="1e-5 1e-5",
         notes="cubic weights in float32: PyTorch's own float32 result is within 1e-6 of float64's")
    r = R("interp_bicubic_size_align")
    case("interp_bicubic_size_align", N.interp_bicubic_size_align, [r.f64(1, 2, 4, 5)])
    r = R("interp_bicubic_down")
    case("interp_bicubic_down", N.interp_bicubic_down, [r.f(1, 3, 7, 5)], tol="1e-5 1e-5")
    bf16_note = ("computes in bfloat16 (converted from and back to float32: numpy has no bfloat16); "
                 "tol 1e-2 is about one bfloat16 rounding step")
    r = R("interp_bilinear_bf16")
    case("interp_bilinear_bf16", N.interp_bilinear_bf16, [r.f(1, 2, 4, 5)], tol="1e-2 1e-2", notes=bf16_note)
    r = R("interp_nearest_bf16")
    case("interp_nearest_bf16", N.interp_nearest_bf16, [r.f(1, 2, 7, 5)], tol="1e-2 1e-2",
         notes=bf16_note + "; the nearest indices use the scale rounded to bfloat16, as PyTorch's CPU kernel")
    r = R("interp_bicubic_bf16")
    case("interp_bicubic_bf16", N.interp_bicubic_bf16, [r.f(1, 2, 4, 5)], tol="1e-2 1e-2", notes=bf16_note)
    r = R("upsample_nearest2d_scales")
    case("upsample_nearest2d_scales", N.upsample_nearest2d_scales, [r.f(1, 2, 4, 5)],
         notes="output size [5, 7] with scales_h 1.3: the rows use 1 / 1.3, the columns in / out")
    r = R("upsample_bilinear2d_scales")
    case("upsample_bilinear2d_scales", N.upsample_bilinear2d_scales, [r.f64(1, 2, 4, 4)])
    r = R("upsample_linear1d_plain")
    case("upsample_linear1d_plain", N.upsample_linear1d_plain, [r.f(2, 2, 4)])
    r = R("upsample_trilinear3d_plain")
    case("upsample_trilinear3d_plain", N.upsample_trilinear3d_plain, [r.f64(1, 2, 2, 2, 4)])
    r = R("upsample_bicubic2d_plain")
    case("upsample_bicubic2d_plain", N.upsample_bicubic2d_plain, [r.f64(1, 2, 4, 4)])
    r = R("upsample_nearest1d_plain")
    case("upsample_nearest1d_plain", N.upsample_nearest1d_plain, [r.f(1, 3, 4)])
    r = R("upsample_nearest3d_plain")
    case("upsample_nearest3d_plain", N.upsample_nearest3d_plain, [r.f(1, 1, 3, 2, 3)])
    r = R("upsample_nearest_uint8")
    case("upsample_nearest_uint8", N.upsample_nearest_uint8, [r.i(2, 2, 3, 4, lo=0, hi=255, dtype=np.uint8)],
         notes="nearest copies uint8 too, as PyTorch's CPU kernel")
    r = R("upsample_nearest2d_backward_vec")
    case("upsample_nearest2d_backward_vec", N.upsample_nearest2d_backward_vec, [r.f(2, 3, 6, 7)], grad=False)
    r = R("upsample_bilinear2d_backward_plain")
    case("upsample_bilinear2d_backward_plain", N.upsample_bilinear2d_backward_plain, [r.f64(2, 2, 7, 5)], grad=False)
    r = R("upsample_bicubic2d_backward_vec")
    case("upsample_bicubic2d_backward_vec", N.upsample_bicubic2d_backward_vec, [r.f64(1, 2, 6, 6)], grad=False)
    # nearest-exact (PyTorch's _upsample_nearest_exact rows)
    r = R("interp_nearest_exact_frac")
    case("interp_nearest_exact_frac", N.interp_nearest_exact_frac, [r.f(1, 3, 7, 5)],
         notes="scale factors 1.7 and 2.3: source indices floor(float((o + 0.5) / scale))")
    r = R("interp_nearest_exact_size")
    case("interp_nearest_exact_size", N.interp_nearest_exact_size, [r.f64(2, 2, 7, 5)])
    r = R("interp_nearest_exact_1d")
    case("interp_nearest_exact_1d", N.interp_nearest_exact_1d, [r.f(2, 3, 5)])
    r = R("interp_nearest_exact_3d")
    case("interp_nearest_exact_3d", N.interp_nearest_exact_3d, [r.f64(1, 2, 2, 3, 3)])
    r = R("interp_nearest_exact_uint8")
    case("interp_nearest_exact_uint8", N.interp_nearest_exact_uint8,
         [r.i(2, 2, 3, 4, lo=0, hi=255, dtype=np.uint8)])
    r = R("upsample_nearest_exact2d_plain")
    case("upsample_nearest_exact2d_plain", N.upsample_nearest_exact2d_plain, [r.f(1, 2, 4, 4)])
    r = R("upsample_nearest_exact1d_backward_plain")
    case("upsample_nearest_exact1d_backward_plain", N.upsample_nearest_exact1d_backward_plain, [r.f(2, 3, 9)],
         grad=False)
    r = R("upsample_nearest_exact3d_backward_vec")
    case("upsample_nearest_exact3d_backward_vec", N.upsample_nearest_exact3d_backward_vec, [r.f64(1, 2, 3, 5, 3)],
         grad=False)
    r = R("pixel_shuffle")
    case("pixel_shuffle", N.pixel_shuffle, [r.f(2, 8, 3, 2)])
    r = R("pixel_unshuffle")
    case("pixel_unshuffle", N.pixel_unshuffle, [r.f64(2, 1, 2, 6, 3)], notes="two batch dims")
    r = R("pixel_shuffle_roundtrip")
    case("pixel_shuffle_roundtrip", N.pixel_shuffle_roundtrip, [G.Fortran(r.f(18, 2, 3))],
         notes="a 3-D input, non-contiguous; unshuffle(shuffle(x)) - x is all zeros")
    r = R("pixel_shuffle_int")
    case("pixel_shuffle_int", N.pixel_shuffle, [r.i(1, 4, 2, 3)])
    r = R("adaptive_max_pool2d")
    x = r.f(2, 3, 7, 5)
    x[0, 0, 0, 0] = float("nan")
    case("adaptive_max_pool2d", N.adaptive_max_pool2d, [x], grad=False, notes="a NaN wins its window")
    r = R("adaptive_max_pool2d_grad")
    case("adaptive_max_pool2d_grad", N.adaptive_max_pool2d, [r.f(2, 3, 7, 5)])
    r = R("adaptive_max_pool2d_up")
    case("adaptive_max_pool2d_up", N.adaptive_max_pool2d_up, [r.f64(3, 3, 3)],
         notes="a 3-D input and windows that overlap (output larger than the input)")
    r = R("adaptive_max_pool1d")
    case("adaptive_max_pool1d", N.adaptive_max_pool1d, [r.f(2, 3, 8)])
    r = R("adaptive_max_pool2d_backward")
    case("adaptive_max_pool2d_backward", N.adaptive_max_pool2d_backward, [r.f(2, 3, 2, 2), r.f(2, 3, 5, 4)],
         grad=False)
    r = R("max_pool3d")
    case("max_pool3d", N.max_pool3d, [r.f(2, 3, 5, 7, 6)])
    r = R("max_pool3d_ceil_dilated")
    case("max_pool3d_ceil_dilated", N.max_pool3d_ceil_dilated, [r.f64(1, 2, 6, 7, 5)])
    r = R("max_pool3d_indices")
    x = r.f(2, 2, 4, 5, 4)
    x[0, 1, 2, 3, 1] = float("nan")
    case("max_pool3d_indices", N.max_pool3d_indices, [x], grad=False, notes="a NaN wins its window")
    r = R("max_pool3d_indices_grad")
    case("max_pool3d_indices_grad", N.max_pool3d_indices, [r.f(2, 2, 4, 6, 4)])
    r = R("max_pool3d_unbatched")
    case("max_pool3d_unbatched", N.max_pool3d_unbatched, [G.Fortran(r.f(3, 5, 6, 4))],
         notes="a 4-D (unbatched) input, non-contiguous")
    r = R("avg_pool3d")
    case("avg_pool3d", N.avg_pool3d, [r.f(2, 3, 5, 7, 6)])
    r = R("avg_pool3d_ceil_nopad")
    case("avg_pool3d_ceil_nopad", N.avg_pool3d_ceil_nopad, [r.f64(1, 2, 6, 5, 7)])
    r = R("avg_pool3d_divisor")
    case("avg_pool3d_divisor", N.avg_pool3d_divisor, [r.f(2, 3, 4, 4)])
    r = R("avg_pool3d_int")
    case("avg_pool3d_int", N.avg_pool3d, [r.i(1, 2, 5, 4, 6, lo=-20, hi=20)], notes="integer averages truncate")
    r = R("avg_pool3d_backward")
    case("avg_pool3d_backward", N.avg_pool3d_backward, [r.f(1, 2, 6, 3, 3), r.f(1, 2, 5, 4, 5)], grad=False)
    r = R("adaptive_avg_pool3d")
    case("adaptive_avg_pool3d", N.adaptive_avg_pool3d, [r.f(2, 3, 7, 5, 6)],
         notes="windows overlap along the last dim (output larger than the input's 6 / 4)")
    r = R("adaptive_avg_pool3d_unbatched")
    case("adaptive_avg_pool3d_unbatched", N.adaptive_avg_pool3d_unbatched, [r.f64(3, 4, 7, 5)],
         notes="an unbatched input, one int for the three sizes")
    r = R("underscore_adaptive_avg_pool")
    case("underscore_adaptive_avg_pool", N.underscore_adaptive_avg_pool, [r.f(2, 3, 7, 5), r.f(2, 2, 4, 3, 5)])
    r = R("adaptive_max_pool3d")
    x = r.f(2, 2, 5, 4, 4)
    x[1, 0, 1, 1, 2] = float("nan")
    case("adaptive_max_pool3d", N.adaptive_max_pool3d, [x], grad=False, notes="a NaN wins its window")
    r = R("adaptive_max_pool3d_grad")
    case("adaptive_max_pool3d_grad", N.adaptive_max_pool3d, [r.f(2, 2, 5, 4, 4)])
    r = R("adaptive_max_pool3d_up")
    case("adaptive_max_pool3d_up", N.adaptive_max_pool3d_up, [r.f64(2, 3, 3, 2)],
         notes="an unbatched input; windows overlap (output larger than the input)")
    r = R("adaptive_max_pool3d_backward")
    case("adaptive_max_pool3d_backward", N.adaptive_max_pool3d_backward, [r.f(2, 3, 2, 2, 1), r.f(2, 3, 5, 4, 3)],
         grad=False)
    r = R("grid_sample_bilinear")
    case("grid_sample_bilinear", N.grid_sample_bilinear, [r.f(2, 3, 5, 6), r.f(2, 4, 7, 2, lo=-1.3, hi=1.3)],
         notes="some grid points outside [-1, 1]: zeros padding")
    r = R("grid_sample_bilinear_border_align")
    case("grid_sample_bilinear_border_align", N.grid_sample_bilinear_border_align,
         [r.f(1, 2, 4, 5), r.f(1, 3, 6, 2, lo=-1.5, hi=1.5)])
    r = R("grid_sample_bilinear_reflection")
    case("grid_sample_bilinear_reflection", N.grid_sample_bilinear_reflection,
         [r.f64(2, 2, 4, 3), r.f64(2, 5, 3, 2, lo=-4.0, hi=4.0)], notes="grid values up to 4: several reflections")
    r = R("grid_sample_bilinear_reflection_align")
    case("grid_sample_bilinear_reflection_align", N.grid_sample_bilinear_reflection_align,
         [r.f(1, 3, 5, 4), r.f(1, 4, 4, 2, lo=-3.0, hi=3.0)])
    r = R("grid_sample_nearest")
    case("grid_sample_nearest", N.grid_sample_nearest, [r.f(2, 2, 5, 6), r.f(2, 3, 4, 2, lo=-1.4, hi=1.4)],
         notes="zeros and reflection padding; the grid's gradient is 0")
    r = R("grid_sample_bicubic")
    case("grid_sample_bicubic", N.grid_sample_bicubic, [r.f(1, 2, 6, 5), r.f(1, 4, 3, 2, lo=-1.3, hi=1.3)])
    r = R("grid_sample_bicubic_border_align")
    case("grid_sample_bicubic_border_align", N.grid_sample_bicubic_border_align,
         [r.f64(2, 2, 4, 6), r.f64(2, 3, 3, 2, lo=-1.5, hi=1.5)])
    r = R("grid_sample_bicubic_reflection")
    case("grid_sample_bicubic_reflection", N.grid_sample_bicubic_reflection,
         [r.f(1, 3, 5, 5), r.f(1, 4, 4, 2, lo=-2.5, hi=2.5)])
    r = R("grid_sample_3d")
    case("grid_sample_3d", N.grid_sample_3d, [r.f(2, 2, 4, 5, 3), r.f(2, 3, 2, 4, 3, lo=-1.3, hi=1.3)])
    r = R("grid_sample_3d_border_align")
    case("grid_sample_3d_border_align", N.grid_sample_3d_border_align,
         [r.f64(1, 2, 3, 4, 5), r.f64(1, 2, 3, 3, 3, lo=-1.4, hi=1.4)], notes="trilinear and nearest")
    r = R("grid_sample_3d_reflection")
    case("grid_sample_3d_reflection", N.grid_sample_3d_reflection,
         [r.f(1, 3, 4, 3, 5), r.f(1, 2, 4, 3, 3, lo=-3.0, hi=3.0)])
    r = R("affine_grid_2d")
    case("affine_grid_2d", N.affine_grid_2d, [r.f(2, 2, 3)])
    r = R("affine_grid_3d_align")
    case("affine_grid_3d_align", N.affine_grid_3d_align, [r.f64(2, 3, 4)])
    r = R("spatial_transformer")
    case("spatial_transformer", N.spatial_transformer, [r.f(2, 3, 7, 8), r.f(2, 2, 3, lo=-1.0, hi=1.0)],
         notes="F.affine_grid then F.grid_sample: the gradient reaches theta through the grid")
    r = R("grid_sampler_2d_backward")
    case("grid_sampler_2d_backward", N.grid_sampler_2d_backward,
         [r.f(1, 2, 3, 4), r.f(1, 2, 5, 6), r.f(1, 3, 4, 2, lo=-2.0, hi=2.0)], grad=False)
    return out


def main():
    """With NAME arguments: (re)writes those cases only, the others kept."""
    cases = os.path.join(HERE, "cases")
    only = set(sys.argv[1:])
    if only:
        unknown = only - {s["name"] for s in specs()}
        if unknown:
            sys.exit("gen_nn_cases.py: no case named %s" % ", ".join(sorted(unknown)))
    elif os.path.isdir(cases):
        shutil.rmtree(cases)
    os.makedirs(cases, exist_ok=True)
    G.CASES = cases
    G.TOLS = {}
    torch.manual_seed(0)
    for s in specs():
        if only and s["name"] not in only:
            continue
        if os.path.isdir(os.path.join(cases, s["name"])):
            shutil.rmtree(os.path.join(cases, s["name"]))
        G.gen_case(s)
    print("wrote %d cases to %s" % (len(only) if only else len(os.listdir(cases)), cases))


if __name__ == "__main__":
    main()
