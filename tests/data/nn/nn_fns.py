"""Functions for the nn-op golden cases (gen_nn_cases.py scripts each one).

Each is what a scripted torch.nn module (or its functional form) runs:
pooling, recurrent cells, instance norm, dropout and batch_norm with a
training flag given at run time, and ATen's native backward ops.
"""
from typing import List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor


def max_pool2d(x):
    return F.max_pool2d(x, 3, 2, 1)


def max_pool2d_ceil_dilated(x):
    return torch.max_pool2d(x, [2, 3], [2, 2], [1, 1], [1, 2], True)


def max_pool2d_indices(x):
    return F.max_pool2d_with_indices(x, 2)


def max_pool2d_3d(x):
    return F.max_pool2d(x * 2.0, [3, 2], [1, 2])


def avg_pool2d(x):
    return F.avg_pool2d(x, 3, 2, 1)


def avg_pool2d_ceil_nopad(x):
    return F.avg_pool2d(x, [3, 2], [2, 2], [1, 1], True, False)


def avg_pool2d_divisor(x):
    return F.avg_pool2d(x, 2, 1, 0, False, True, 5)


def adaptive_avg_pool2d(x):
    return F.adaptive_avg_pool2d(x, [3, 2])


def instance_norm(x, w, b):
    return F.instance_norm(x, weight=w, bias=b)


def instance_norm_plain(x):
    return F.instance_norm(x * 1.5)


def instance_norm_running(x, rm, rv, w, b):
    return F.instance_norm(x, rm, rv, w, b, use_input_stats=False)


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    return torch.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh)


def gru_cell_nobias(x, h, w_ih, w_hh):
    return torch.gru_cell(x, h, w_ih, w_hh)


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    return torch.lstm_cell(x, [h, c], w_ih, w_hh, b_ih, b_hh)


def lstm_cell_h_only(x, h, c, w_ih, w_hh, b_ih, b_hh):
    hy, cy = torch.lstm_cell(x, [h, c], w_ih, w_hh, b_ih, b_hh)
    return hy * 2.0


def rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    return torch.rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh)


def rnn_relu_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    return torch.rnn_relu_cell(x, h, w_ih, w_hh, b_ih, b_hh)


def native_batch_norm_backward(g, x, w, rm, rv, sm: Optional[Tensor], si: Optional[Tensor], train: bool):
    return torch.ops.aten.native_batch_norm_backward(g, x, w, rm, rv, sm, si, train, 1e-5, [True, True, True])


def native_dropout_eval(x, w):
    y, m = torch.native_dropout(x * w, 0.5, False)
    return y, m


def native_dropout_p0(x, w):
    y, m = torch.native_dropout(x * w, 0.0, True)
    return y * 3.0


def native_dropout_p1(x, w):
    y, m = torch.native_dropout(x * w, 1.0, True)
    return y + w


def native_dropout_backward(g, m):
    return torch.ops.aten.native_dropout_backward(g, m, 2.0)


def dropout_flag(x, w, training: bool):
    return F.dropout(x * w, 0.5, training)


def dropout_flag_p0(x, w, training: bool):
    return F.dropout(x * w, 0.0, training)


def batch_norm_flag(x, rm, rv, w, b, training: bool):
    return F.batch_norm(x, rm, rv, w, b, training)


def mixed_dtype(x, y):
    return torch.sigmoid(x * y) + x


def max_pool1d(x):
    return F.max_pool1d(x, 3, 2, 1)


def avg_pool1d(x):
    return F.avg_pool1d(x, 3, 2, 1, True, False)


def prelu_channels(x, w):
    return F.prelu(x, w)


def prelu_single(x, w):
    return F.prelu(x * 2.0, w)


def prelu_1d(x, w):
    return F.prelu(x, w) + x


def conv_transpose2d_dcgan(x, w, b):
    return F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)


def conv_transpose2d_dilated(x, w, b):
    return F.conv_transpose2d(x, w, b, stride=1, padding=2, output_padding=1, dilation=2)


def conv_transpose1d_groups(x, w, b):
    return F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)


def conv_transpose3d(x, w, b):
    return F.conv_transpose3d(x, w, b, stride=[2, 1, 2], padding=[0, 1, 1], output_padding=[1, 0, 0])


def conv_transpose2d_unbatched(x, w):
    return F.conv_transpose2d(x, w, None, stride=[1, 2], padding=[1, 0])


def conv3d(x, w, b):
    return F.conv3d(x, w, b, stride=[1, 2, 1], padding=[1, 0, 1], dilation=[1, 1, 2], groups=2)


def convolution_transposed(x, w, b):
    return torch.convolution(x, w, b, [2, 2], [1, 0], [1, 1], True, [1, 1], 1)


def convolution_conv(x, w):
    return torch.convolution(x, w, None, [1, 1], [1, 1], [2, 1], False, [0, 0], 1)


def underscore_convolution(x, w, b):
    return torch._convolution(x, w, b, [2], [1], [1], True, [1], 2, False, False, True, True)
# ---- upsampling, pixel shuffle, adaptive max pooling ---------------------------------------------------

def interp_nearest_scale(x):
    return F.interpolate(x, scale_factor=2.0, mode="nearest")


def interp_nearest_frac(x):
    return F.interpolate(x, scale_factor=[1.7, 2.3], mode="nearest")


def interp_nearest_size(x):
    return F.interpolate(x, size=[7, 5], mode="nearest")


def interp_nearest_recompute(x):
    return F.interpolate(x, scale_factor=1.7, mode="nearest", recompute_scale_factor=True)


def interp_nearest_1d(x):
    return F.interpolate(x, scale_factor=2.5, mode="nearest")


def interp_nearest_3d(x):
    return F.interpolate(x, size=[3, 5, 4], mode="nearest")


def interp_nearest_same_size(x):
    # scale 1.1 on a width of 5 keeps the size: the forward reads floor(o / 1.1), PyTorch's backward copies
    return F.interpolate(x, scale_factor=1.1, mode="nearest")


def interp_linear_1d(x):
    return F.interpolate(x, scale_factor=2.5, mode="linear", align_corners=False)


def interp_linear_1d_align(x):
    return F.interpolate(x, size=9, mode="linear", align_corners=True)


def interp_bilinear_scale(x):
    return F.interpolate(x, scale_factor=1.5, mode="bilinear", align_corners=False)


def interp_bilinear_size_align(x):
    return F.interpolate(x, size=[7, 9], mode="bilinear", align_corners=True)


def interp_bilinear_down(x):
    return F.interpolate(x, size=[3, 2], mode="bilinear", align_corners=False)


def interp_trilinear(x):
    return F.interpolate(x, scale_factor=[2.0, 1.5, 1.0], mode="trilinear", align_corners=False)


def interp_trilinear_align(x):
    return F.interpolate(x, size=[3, 4, 5], mode="trilinear", align_corners=True)


def interp_bicubic_scale(x):
    return F.interpolate(x, scale_factor=2.0, mode="bicubic", align_corners=False)


def interp_bicubic_size_align(x):
    return F.interpolate(x, size=[6, 9], mode="bicubic", align_corners=True)


def interp_bicubic_down(x):
    return F.interpolate(x, size=[3, 2], mode="bicubic", align_corners=False)


def interp_bilinear_bf16(x):
    return F.interpolate(x.to(torch.bfloat16), scale_factor=1.5, mode="bilinear", align_corners=False).float()


def interp_nearest_bf16(x):
    return F.interpolate(x.to(torch.bfloat16), scale_factor=[1.7, 2.3], mode="nearest").float()


def interp_bicubic_bf16(x):
    return F.interpolate(x.to(torch.bfloat16), size=[5, 7], mode="bicubic", align_corners=True).float()


def upsample_nearest2d_scales(x):
    # the plain overload: an output size with scales of its own (used for the indices)
    return torch._C._nn.upsample_nearest2d(x, [5, 7], 1.3, None)


def upsample_bilinear2d_scales(x):
    return torch._C._nn.upsample_bilinear2d(x, [5, 7], False, 1.3, 2.0)


def upsample_linear1d_plain(x):
    return torch._C._nn.upsample_linear1d(x, [7], True, None)


def upsample_trilinear3d_plain(x):
    return torch._C._nn.upsample_trilinear3d(x, [3, 3, 5], False, None, 1.5, None)


def upsample_bicubic2d_plain(x):
    return torch._C._nn.upsample_bicubic2d(x, [7, 4], False, 2.0, None)


def upsample_nearest1d_plain(x):
    return torch._C._nn.upsample_nearest1d(x, [8], 2.5)


def upsample_nearest3d_plain(x):
    return torch._C._nn.upsample_nearest3d(x, [4, 4, 6], None, 2.0, 2.0)


def upsample_nearest_uint8(x):
    return F.interpolate(x, scale_factor=[1.5, 2.0], mode="nearest")


def interp_nearest_exact_frac(x):
    return F.interpolate(x, scale_factor=[1.7, 2.3], mode="nearest-exact")


def interp_nearest_exact_size(x):
    # downsampling rows (7 -> 3), upsampling columns (5 -> 8)
    return F.interpolate(x, size=[3, 8], mode="nearest-exact")


def interp_nearest_exact_1d(x):
    return F.interpolate(x, scale_factor=2.5, mode="nearest-exact")


def interp_nearest_exact_3d(x):
    return F.interpolate(x, size=[3, 5, 4], mode="nearest-exact")


def interp_nearest_exact_uint8(x):
    return F.interpolate(x, scale_factor=[1.5, 2.3], mode="nearest-exact")


def upsample_nearest_exact2d_plain(x):
    # the plain overload: an output size with a scale of its own for the rows
    return torch._C._nn._upsample_nearest_exact2d(x, [5, 7], 1.3, None)


def upsample_nearest_exact1d_backward_plain(g):
    return torch.ops.aten._upsample_nearest_exact1d_backward(g, [9], [2, 3, 4], 2.3)


def upsample_nearest_exact3d_backward_vec(g):
    return torch.ops.aten._upsample_nearest_exact3d_backward(g, None, [1, 2, 2, 3, 4], [1.5, 1.7, 0.8])


def upsample_nearest2d_backward_vec(g):
    return torch.ops.aten.upsample_nearest2d_backward(g, None, [2, 3, 4, 3], [1.7, 2.5])


def upsample_bilinear2d_backward_plain(g):
    return torch.ops.aten.upsample_bilinear2d_backward(g, [7, 5], [2, 2, 4, 3], True, None, None)


def upsample_bicubic2d_backward_vec(g):
    return torch.ops.aten.upsample_bicubic2d_backward(g, None, [1, 2, 3, 4], False, [2.0, 1.5])


def pixel_shuffle(x):
    return F.pixel_shuffle(x, 2)


def pixel_unshuffle(x):
    return F.pixel_unshuffle(x * 2.0, 3)


def pixel_shuffle_roundtrip(x):
    return F.pixel_unshuffle(F.pixel_shuffle(x, 3), 3) - x, F.pixel_shuffle(x, 3)


def adaptive_max_pool2d(x):
    return F.adaptive_max_pool2d(x, [3, 2], return_indices=True)


def adaptive_max_pool2d_up(x):
    return F.adaptive_max_pool2d(x, [5, 4])


def adaptive_max_pool1d(x):
    return F.adaptive_max_pool1d(x, 3, return_indices=True)


def adaptive_max_pool2d_backward(g, x):
    y, i = torch.ops.aten.adaptive_max_pool2d(x, [2, 2])
    return torch.ops.aten.adaptive_max_pool2d_backward(g, x, i)


# ---- 3-D pooling and the adaptive average pools -------------------------------------------------------


def max_pool3d(x):
    return F.max_pool3d(x, 3, 2, 1)


def max_pool3d_ceil_dilated(x):
    return torch.max_pool3d(x, [2, 3, 2], [2, 2, 1], [1, 1, 0], [1, 2, 1], True)


def max_pool3d_indices(x):
    return F.max_pool3d(x, 2, return_indices=True)


def max_pool3d_unbatched(x):
    return F.max_pool3d(x * 2.0, [3, 2, 2], [1, 2, 1])


def avg_pool3d(x):
    return F.avg_pool3d(x, 3, 2, 1)


def avg_pool3d_ceil_nopad(x):
    return F.avg_pool3d(x, [3, 2, 2], [2, 2, 1], [1, 1, 0], True, False)


def avg_pool3d_divisor(x):
    return F.avg_pool3d(x, 2, 1, 0, False, True, 5)


def adaptive_avg_pool3d(x):
    return F.adaptive_avg_pool3d(x, [3, 2, 4])


def adaptive_avg_pool3d_unbatched(x):
    return F.adaptive_avg_pool3d(x, 3)


def underscore_adaptive_avg_pool(x, v):
    return torch.ops.aten._adaptive_avg_pool2d(x, [3, 2]), torch.ops.aten._adaptive_avg_pool3d(v, [2, 1, 3])


def adaptive_max_pool3d(x):
    return F.adaptive_max_pool3d(x, [3, 2, 2], return_indices=True)


def adaptive_max_pool3d_up(x):
    return F.adaptive_max_pool3d(x, [4, 5, 3])


def adaptive_max_pool3d_backward(g, x):
    y, i = torch.ops.aten.adaptive_max_pool3d(x, [2, 2, 1])
    return torch.ops.aten.adaptive_max_pool3d_backward(g, x, i)


def avg_pool3d_backward(g, x):
    return torch.ops.aten.avg_pool3d_backward(g, x, [2, 3, 2], [1, 2, 2], [1, 1, 0], True, False, None)


# ---- grid sampling and affine grids -------------------------------------------------------------------


def grid_sample_bilinear(x, g):
    return F.grid_sample(x, g, "bilinear", "zeros", False)


def grid_sample_bilinear_border_align(x, g):
    return F.grid_sample(x, g, "bilinear", "border", True)


def grid_sample_bilinear_reflection(x, g):
    return F.grid_sample(x, g, "bilinear", "reflection", False)


def grid_sample_bilinear_reflection_align(x, g):
    return F.grid_sample(x, g, "bilinear", "reflection", True)


def grid_sample_nearest(x, g):
    return F.grid_sample(x, g, "nearest", "zeros", False), F.grid_sample(x, g, "nearest", "reflection", True)


def grid_sample_bicubic(x, g):
    return F.grid_sample(x, g, "bicubic", "zeros", False)


def grid_sample_bicubic_border_align(x, g):
    return F.grid_sample(x, g, "bicubic", "border", True)


def grid_sample_bicubic_reflection(x, g):
    return F.grid_sample(x, g, "bicubic", "reflection", False)


def grid_sample_3d(x, g):
    return F.grid_sample(x, g, "bilinear", "zeros", False)


def grid_sample_3d_border_align(x, g):
    return F.grid_sample(x, g, "bilinear", "border", True), F.grid_sample(x, g, "nearest", "border", True)


def grid_sample_3d_reflection(x, g):
    return F.grid_sample(x, g, "bilinear", "reflection", False)


def affine_grid_2d(theta):
    return F.affine_grid(theta, [2, 3, 5, 4], False)


def affine_grid_3d_align(theta):
    return F.affine_grid(theta, [2, 1, 3, 2, 4], True)


def spatial_transformer(x, theta):
    grid = F.affine_grid(theta, [2, 3, 6, 5], False)
    return F.grid_sample(x, grid, "bilinear", "zeros", False)


def grid_sampler_2d_backward(go, x, g):
    return torch.ops.aten.grid_sampler_2d_backward(go, x, g, 0, 2, False, [True, True])
