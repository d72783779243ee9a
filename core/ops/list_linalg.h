/* Op table rows: linear algebra (k_linalg.c) and convolutions (k_conv.c).
 * (See ops/optable.h for the columns.) All operands must share one dtype
 * (PyTorch raises otherwise); the result has it. Shapes (FBX_SH_CUSTOM)
 * follow matmul's rules: 1-D operands act as a row (left) or column (right)
 * vector whose dim is dropped, batch dims broadcast; mm is 2-D only, bmm 3-D
 * with equal batch.
 *
 * Convolutions (k_conv.c), floating dtypes only, all operands of one dtype:
 * conv1d/conv2d/conv3d: input [N, C, spatial...] (or without N), weight
 * [O, C / groups, k...], bias [O] or None; output [N, O, out...] with out =
 * (in + 2 padding - dilation (k - 1) - 1) / stride + 1 (floor).
 * conv_transpose1d/2d/3d: weight [C_in, C_out / groups, k...], bias
 * [C_out] or None; output [N, C_out, out...] with out = (in - 1) stride -
 * 2 padding + dilation (k - 1) + output_padding + 1; output_padding must
 * be below the stride or the dilation (PyTorch's rule). aten::convolution
 * and aten::_convolution (what traced modules call) are either kind by
 * `transposed`, the spatial rank by the weight's, the input batched;
 * _convolution's last four flags are ignored; output_padding is read only
 * when transposed. Their gradients: fusebox::conv_backward (conv1d/2d/3d)
 * and fusebox::convolution_backward (either kind; the formulas of the
 * transposed ops, convolution and _convolution call it), each returning
 * (grad_input, grad_weight, grad_bias), grad_bias None when bias is None.
 * conv1d/2d/3d.padding (what nn.ConvNd(padding="same"/"valid") scripts
 * to): "valid" is padding 0; "same" needs stride 1 and pads each dim by
 * dilation (k - 1) in all, half (rounded down) before and the rest after
 * (an odd total: the input copied with one more zero at the end of that
 * dim, as PyTorch does); their gradient fusebox::conv_padding_backward
 * crops grad_input back to the input.
 * scaled_dot_product_attention (PyTorch 2.x; k_attn.c): softmax(q kᵀ scale
 * + mask) v over the last two dims, batch dims broadcast as matmul's; its
 * gradient fusebox::sdpa_backward (query, key and value; none for a float
 * attn_mask).
 *
 * Products on the rows above (k_search.c): tensordot permutes and reshapes
 * both operands into one mm (contracted dims of equal sizes); inner is
 * tensordot over both last dims (mul when either is 0-d); addmv, addr and
 * addbmm are beta * self + alpha * (mv, outer, sum over the batch of bmm),
 * beta == 0 ignoring self (NaNs too), self broadcasting to the product's
 * shape; addmv and addbmm have the product's dtype (self is cast), addr
 * promotes. vdot is dot for real dtypes, ger is outer. linalg_cross/cross:
 * same dtypes, broadcast, the dim must have length 3 (cross's dim None:
 * the first dim of length 3). Their in-place forms (FBX_OPF_INPLACE) copy
 * the result into self. fusebox::tensordot_backward and inner_backward are
 * the gradients of tensordot and inner. */
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
  X(conv3d,                                                                                        \
    "aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, int[3] padding=0, " \
    "int[3] dilation=1, int groups=1) -> Tensor",                                                  \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_conv3d)                                 \
  X(conv2d_padding,                                                                                \
    "aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "       \
    "str padding=\"valid\", int[2] dilation=1, int groups=1) -> Tensor",                            \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_conv2d_padding)                         \
  X(conv1d_padding,                                                                                \
    "aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, "       \
    "str padding=\"valid\", int[1] dilation=1, int groups=1) -> Tensor",                            \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_conv1d_padding)                         \
  X(conv3d_padding,                                                                                \
    "aten::conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, "       \
    "str padding=\"valid\", int[3] dilation=1, int groups=1) -> Tensor",                            \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_conv3d_padding)                         \
  X(sdpa,                                                                                          \
    "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "                  \
    "Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? scale=None, "     \
    "bool enable_gqa=False) -> Tensor",                                                            \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_sdpa)                                   \
  X(fbx_sdpa_backward,                                                                             \
    "fusebox::sdpa_backward(Tensor grad, Tensor query, Tensor key, Tensor value, Tensor? attn_mask, " \
    "float dropout_p, bool is_causal, float? scale, bool enable_gqa) -> (Tensor grad_query, "      \
    "Tensor grad_key, Tensor grad_value)",                                                         \
    FBX_OPCAT_LINALG, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_sdpa_backward)                    \
  X(conv_transpose1d,                                                                              \
    "aten::conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], "    \
    "int[1] padding=[0], int[1] output_padding=[0], int groups=1, int[1] dilation=[1]) -> Tensor",  \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_conv_transpose1d)                       \
  X(conv_transpose2d_input,                                                                        \
    "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, " \
    "int[2] padding=0, int[2] output_padding=0, int groups=1, int[2] dilation=1) -> Tensor",        \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_conv_transpose2d)                       \
  X(conv_transpose3d_input,                                                                        \
    "aten::conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, " \
    "int[3] padding=0, int[3] output_padding=0, int groups=1, int[3] dilation=1) -> Tensor",        \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_conv_transpose3d)                       \
  X(convolution,                                                                                   \
    "aten::convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "    \
    "int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor",                \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_convolution)                            \
  X(_convolution,                                                                                  \
    "aten::_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "   \
    "int[] dilation, bool transposed, int[] output_padding, int groups, bool benchmark, "          \
    "bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor",                          \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_convolution)                            \
  X(fbx_conv_backward,                                                                             \
    "fusebox::conv_backward(Tensor grad, Tensor input, Tensor weight, Tensor? bias, int[] stride, "  \
    "int[] padding, int[] dilation, int groups) -> (Tensor grad_input, Tensor grad_weight, "        \
    "Tensor grad_bias)",                                                                           \
    FBX_OPCAT_LINALG, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_conv_backward)                    \
  X(fbx_conv_padding_backward,                                                                     \
    "fusebox::conv_padding_backward(Tensor grad, Tensor input, Tensor weight, Tensor? bias, "       \
    "int[] stride, str padding, int[] dilation, int groups) -> (Tensor grad_input, "               \
    "Tensor grad_weight, Tensor grad_bias)",                                                       \
    FBX_OPCAT_LINALG, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_conv_padding_backward)            \
  X(fbx_convolution_backward,                                                                      \
    "fusebox::convolution_backward(Tensor grad, Tensor input, Tensor weight, Tensor? bias, "        \
    "int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, "          \
    "int groups) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)",                    \
    FBX_OPCAT_LINALG, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_convolution_backward)            \
  /* ---- products built on mm/mv/outer (k_search.c) ---- */                                     \
  X(tensordot, "aten::tensordot(Tensor self, Tensor other, int[] dims_self, int[] dims_other) -> Tensor", \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_tensordot)                             \
  X(fbx_tensordot_backward,                                                                        \
    "fusebox::tensordot_backward(Tensor grad, Tensor self, Tensor other, int[] dims_self, "        \
    "int[] dims_other) -> (Tensor grad_self, Tensor grad_other)",                                  \
    FBX_OPCAT_LINALG, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_tensordot_backward)               \
  X(inner, "aten::inner(Tensor self, Tensor other) -> Tensor", FBX_OPCAT_LINALG, FBX_DT_SAME,      \
    FBX_SH_CUSTOM, 0, fbx_k_inner)                                                                 \
  X(fbx_inner_backward,                                                                            \
    "fusebox::inner_backward(Tensor grad, Tensor self, Tensor other) -> (Tensor grad_self, "       \
    "Tensor grad_other)", FBX_OPCAT_LINALG, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_inner_backward) \
  X(addmv, "aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_LINALG, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_addmv)                                \
  X(addmv_, "aten::addmv_(Tensor(a!) self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> " \
    "Tensor(a!)", FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_SAME, FBX_OPF_INPLACE | FBX_OPF_ALIAS,     \
    fbx_k_red_inplace)                                                                             \
  X(addr, "aten::addr(Tensor self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_LINALG, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_addr)                                \
  X(addr_, "aten::addr_(Tensor(a!) self, Tensor vec1, Tensor vec2, *, Scalar beta=1, Scalar alpha=1) -> " \
    "Tensor(a!)", FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_SAME, FBX_OPF_INPLACE | FBX_OPF_ALIAS,      \
    fbx_k_red_inplace)                                                                             \
  X(addbmm, "aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> " \
    "Tensor", FBX_OPCAT_LINALG, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_addbmm)                     \
  X(addbmm_, "aten::addbmm_(Tensor(a!) self, Tensor batch1, Tensor batch2, *, Scalar beta=1, "     \
    "Scalar alpha=1) -> Tensor(a!)", FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_SAME,                   \
    FBX_OPF_INPLACE | FBX_OPF_ALIAS, fbx_k_red_inplace)                                            \
  X(linalg_cross, "aten::linalg_cross(Tensor self, Tensor other, *, int dim=-1) -> Tensor",       \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_BROADCAST, 0, fbx_k_cross)                               \
  X(cross, "aten::cross(Tensor self, Tensor other, int? dim=None) -> Tensor", FBX_OPCAT_LINALG,    \
    FBX_DT_SAME, FBX_SH_BROADCAST, 0, fbx_k_cross)                                                 \
  X(vdot, "aten::vdot(Tensor self, Tensor other) -> Tensor", FBX_OPCAT_LINALG, FBX_DT_SAME,        \
    FBX_SH_CUSTOM, 0, fbx_k_vdot)                                                                  \
  X(ger, "aten::ger(Tensor self, Tensor vec2) -> Tensor", FBX_OPCAT_LINALG, FBX_DT_PROMOTE,        \
    FBX_SH_CUSTOM, 0, fbx_k_ger)

#endif
