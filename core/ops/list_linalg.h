/* Op table rows: linear algebra (k_linalg.c) and convolutions (k_conv.c).
 * (See ops/optable.h for the columns.) All operands must share one dtype
 * (PyTorch raises otherwise); the result has it. Shapes (FBX_SH_CUSTOM)
 * follow matmul's rules: 1-D operands act as a row (left) or column (right)
 * vector whose dim is dropped, batch dims broadcast; mm is 2-D only, bmm 3-D
 * with equal batch. conv2d/conv1d: input [N, C, H, W] / [N, C, L] (or
 * without N), weight [O, C / groups, kH, kW] / [O, C / groups, kW], bias
 * [O] or None; output [N, O, Ho, Wo] with Ho = (H + 2 padding - dilation
 * (kH - 1) - 1) / stride + 1 (floor); floating dtypes only. PyTorch's
 * conv2d.padding overloads (padding="same"/"valid") are not rows. */
#ifndef FBX_OPS_LIST_LINALG_H
#define FBX_OPS_LIST_LINALG_H

#define FBX_OPS_LINALG(X)                                                                          \
  X(mm, "aten::mm(Tensor self, Tensor mat2) -> Tensor", FBX_OPCAT_LINALG, FBX_DT_SAME,            \
    FBX_SH_CUSTOM, 0, fbx_k_mm)                                                                    \
  X(bmm, "aten::bmm(Tensor self, Tensor mat2) -> Tensor", FBX_OPCAT_LINALG, FBX_DT_SAME,          \
    FBX_SH_CUSTOM, 0, fbx_k_bmm)                                                                   \
  X(matmul, "aten::matmul(Tensor self, Tensor other) -> Tensor", FBX_OPCAT_LINALG, FBX_DT_SAME,   \
    FBX_SH_CUSTOM, 0, fbx_k_matmul)                                                                \
  X(addmm, "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_addmm)                                  \
  X(linear, "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",             \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_linear)                                 \
  X(conv2d,                                                                                        \
    "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, " \
    "int[2] dilation=1, int groups=1) -> Tensor",                                                  \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_conv2d)                                 \
  X(conv1d,                                                                                        \
    "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, int[1] padding=0, " \
    "int[1] dilation=1, int groups=1) -> Tensor",                                                  \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_conv1d)                                 \
  X(fbx_conv_backward,                                                                             \
    "fusebox::conv_backward(Tensor grad, Tensor input, Tensor weight, Tensor? bias, int[] stride, "  \
    "int[] padding, int[] dilation, int groups) -> (Tensor grad_input, Tensor grad_weight, "        \
    "Tensor grad_bias)",                                                                           \
    FBX_OPCAT_LINALG, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_conv_backward)

#endif
