/* Gradient formulas as data: linalg ops. Format and rules: formula.c.
 *
 * matmul's rank combinations (1-D operands, broadcast batch dims) live in
 * the kernel of fusebox::matmul_backward (ops/list_backward.h); linear is a
 * C builder (grad_builders.c) because its bias may be None. */
#ifndef FBX_AUTODIFF_FORMULAS_LINALG_H
#define FBX_AUTODIFF_FORMULAS_LINALG_H

#define FBX_GFL_CONV_                                                                                          \
  "graph(%input : Tensor, %weight : Tensor, %bias : Tensor?, %stride : int[], %padding : int[], "              \
  "%dilation : int[], %groups : int, %result : Tensor, %grad : Tensor):\n"                                     \
  "  %none : NoneType = prim::Constant()\n"                                                                    \
  "  %gi : Tensor, %gw : Tensor, %gb : Tensor = fusebox::conv_backward(%grad, %input, %weight, %bias, "        \
  "%stride, %padding, %dilation, %groups)\n"                                                                   \
  "  return (%gi, %gw, %gb, %none, %none, %none, %none)\n"

/* conv1d/2d/3d.padding: padding is "valid" or "same" */
#define FBX_GFL_CONVP_                                                                                         \
  "graph(%input : Tensor, %weight : Tensor, %bias : Tensor?, %stride : int[], %padding : str, "                \
  "%dilation : int[], %groups : int, %result : Tensor, %grad : Tensor):\n"                                     \
  "  %none : NoneType = prim::Constant()\n"                                                                    \
  "  %gi : Tensor, %gw : Tensor, %gb : Tensor = fusebox::conv_padding_backward(%grad, %input, %weight, "       \
  "%bias, %stride, %padding, %dilation, %groups)\n"                                                            \
  "  return (%gi, %gw, %gb, %none, %none, %none, %none)\n"

/* conv_transpose1d/2d/3d (arguments: ..., stride, padding, output_padding, groups, dilation) */
#define FBX_GFL_CONVT_                                                                                         \
  "graph(%input : Tensor, %weight : Tensor, %bias : Tensor?, %stride : int[], %padding : int[], "              \
  "%output_padding : int[], %groups : int, %dilation : int[], %result : Tensor, %grad : Tensor):\n"            \
  "  %none : NoneType = prim::Constant()\n"                                                                    \
  "  %transposed : bool = prim::Constant[value=1]()\n"                                                         \
  "  %gi : Tensor, %gw : Tensor, %gb : Tensor = fusebox::convolution_backward(%grad, %input, %weight, %bias, " \
  "%stride, %padding, %dilation, %transposed, %output_padding, %groups)\n"                                      \
  "  return (%gi, %gw, %gb, %none, %none, %none, %none, %none)\n"

/* aten::convolution and aten::_convolution (its four trailing flags have no gradient) */
#define FBX_GFL_CONVOLUTION_(params, nones)                                                                    \
  "graph(%input : Tensor, %weight : Tensor, %bias : Tensor?, %stride : int[], %padding : int[], "              \
  "%dilation : int[], %transposed : bool, %output_padding : int[], %groups : int, " params                    \
  "%result : Tensor, %grad : Tensor):\n"                                                                       \
  "  %none : NoneType = prim::Constant()\n"                                                                    \
  "  %gi : Tensor, %gw : Tensor, %gb : Tensor = fusebox::convolution_backward(%grad, %input, %weight, %bias, " \
  "%stride, %padding, %dilation, %transposed, %output_padding, %groups)\n"                                      \
  "  return (%gi, %gw, %gb, %none, %none, %none, %none, %none, %none" nones ")\n"

/* G(op_id, ir_text): op_id names the op-table row (FBX_OP_<op_id>). */
#define FBX_GRAD_FORMULAS_LINALG(G)                                                                            \
  G(mm,                                                                                                        \
    "graph(%self : Tensor, %mat2 : Tensor, %result : Tensor, %grad : Tensor):\n"                               \
    "  %m2t : Tensor = aten::t(%mat2)\n"                                                                       \
    "  %g_self : Tensor = aten::mm(%grad, %m2t)\n"                                                             \
    "  %st : Tensor = aten::t(%self)\n"                                                                        \
    "  %g_mat2 : Tensor = aten::mm(%st, %grad)\n"                                                              \
    "  return (%g_self, %g_mat2)\n")                                                                           \
  G(bmm,                                                                                                       \
    "graph(%self : Tensor, %mat2 : Tensor, %result : Tensor, %grad : Tensor):\n"                               \
    "  %one : int = prim::Constant[value=1]()\n"                                                               \
    "  %two : int = prim::Constant[value=2]()\n"                                                               \
    "  %m2t : Tensor = aten::transpose(%mat2, %one, %two)\n"                                                   \
    "  %g_self : Tensor = aten::bmm(%grad, %m2t)\n"                                                            \
    "  %st : Tensor = aten::transpose(%self, %one, %two)\n"                                                    \
    "  %g_mat2 : Tensor = aten::bmm(%st, %grad)\n"                                                             \
    "  return (%g_self, %g_mat2)\n")                                                                           \
  /* convolutions: the three gradients from one kernel (ops/k_conv.c); grad_bias is None without a bias */ \
  G(conv2d, FBX_GFL_CONV_)                                                                                     \
  G(conv1d, FBX_GFL_CONV_)                                                                                     \
  G(conv3d, FBX_GFL_CONV_)                                                                                     \
  G(sdpa,                                                                                                       \
    "graph(%query : Tensor, %key : Tensor, %value : Tensor, %attn_mask : Tensor?, %dropout_p : float, "         \
    "%is_causal : bool, %scale : float?, %enable_gqa : bool, %result : Tensor, %grad : Tensor):\n"              \
    "  %none : NoneType = prim::Constant()\n"                                                                  \
    "  %gq : Tensor, %gk : Tensor, %gv : Tensor = fusebox::sdpa_backward(%grad, %query, %key, %value, "         \
    "%attn_mask, %dropout_p, %is_causal, %scale, %enable_gqa)\n"                                               \
    "  return (%gq, %gk, %gv, %none, %none, %none, %none, %none)\n")                                           \
  G(conv1d_padding, FBX_GFL_CONVP_)                                                                            \
  G(conv2d_padding, FBX_GFL_CONVP_)                                                                            \
  G(conv3d_padding, FBX_GFL_CONVP_)                                                                            \
  G(conv_transpose1d, FBX_GFL_CONVT_)                                                                          \
  G(conv_transpose2d_input, FBX_GFL_CONVT_)                                                                    \
  G(conv_transpose3d_input, FBX_GFL_CONVT_)                                                                    \
  G(convolution, FBX_GFL_CONVOLUTION_("", ""))                                                                 \
  G(_convolution, FBX_GFL_CONVOLUTION_("%benchmark : bool, %deterministic : bool, %cudnn_enabled : bool, "     \
                                       "%allow_tf32 : bool, ",                                                 \
                                       ", %none, %none, %none, %none"))                                        \
  G(matmul,                                                                                                    \
    "graph(%self : Tensor, %other : Tensor, %result : Tensor, %grad : Tensor):\n"                              \
    "  %g_self : Tensor, %g_other : Tensor = fusebox::matmul_backward(%grad, %self, %other)\n"                 \
    "  return (%g_self, %g_other)\n")                                                                          \
  G(addmm,                                                                                                     \
    "graph(%self : Tensor, %mat1 : Tensor, %mat2 : Tensor, %beta : number, %alpha : number, %result : Tensor, " \
    "%grad : Tensor):\n"                                                                                       \
    "  %none : NoneType = prim::Constant()\n"                                                                  \
    "  %gb : Tensor = aten::mul(%grad, %beta)\n"                                                               \
    "  %s : int[] = aten::size(%self)\n"                                                                       \
    "  %g_self : Tensor = aten::_grad_sum_to_size(%gb, %s)\n"                                                  \
    "  %ga : Tensor = aten::mul(%grad, %alpha)\n"                                                              \
    "  %m2t : Tensor = aten::t(%mat2)\n"                                                                       \
    "  %g_mat1 : Tensor = aten::mm(%ga, %m2t)\n"                                                               \
    "  %m1t : Tensor = aten::t(%mat1)\n"                                                                       \
    "  %g_mat2 : Tensor = aten::mm(%m1t, %ga)\n"                                                               \
    "  return (%g_self, %g_mat1, %g_mat2, %none, %none)\n")                                                    \
  G(baddbmm,                                                                                                   \
    "graph(%self : Tensor, %batch1 : Tensor, %batch2 : Tensor, %beta : number, %alpha : number, "              \
    "%result : Tensor, %grad : Tensor):\n"                                                                     \
    "  %none : NoneType = prim::Constant()\n"                                                                  \
    "  %one : int = prim::Constant[value=1]()\n"                                                               \
    "  %two : int = prim::Constant[value=2]()\n"                                                               \
    "  %gb : Tensor = aten::mul(%grad, %beta)\n"                                                               \
    "  %s : int[] = aten::size(%self)\n"                                                                       \
    "  %g_self : Tensor = aten::_grad_sum_to_size(%gb, %s)\n"                                                  \
    "  %ga : Tensor = aten::mul(%grad, %alpha)\n"                                                              \
    "  %b2t : Tensor = aten::transpose(%batch2, %one, %two)\n"                                                 \
    "  %g_batch1 : Tensor = aten::bmm(%ga, %b2t)\n"                                                            \
    "  %b1t : Tensor = aten::transpose(%batch1, %one, %two)\n"                                                 \
    "  %g_batch2 : Tensor = aten::bmm(%b1t, %ga)\n"                                                            \
    "  return (%g_self, %g_batch1, %g_batch2, %none, %none)\n")                                                \
  G(dot,                                                                                                       \
    "graph(%self : Tensor, %tensor : Tensor, %result : Tensor, %grad : Tensor):\n"                             \
    "  %g_self : Tensor = aten::mul(%tensor, %grad)\n"                                                         \
    "  %g_tensor : Tensor = aten::mul(%self, %grad)\n"                                                         \
    "  return (%g_self, %g_tensor)\n")                                                                         \
  G(mv,                                                                                                        \
    "graph(%self : Tensor, %vec : Tensor, %result : Tensor, %grad : Tensor):\n"                                \
    "  %g_self : Tensor = aten::outer(%grad, %vec)\n"                                                          \
    "  %st : Tensor = aten::t(%self)\n"                                                                        \
    "  %g_vec : Tensor = aten::mv(%st, %grad)\n"                                                               \
    "  return (%g_self, %g_vec)\n")                                                                            \
  G(outer,                                                                                                     \
    "graph(%self : Tensor, %vec2 : Tensor, %result : Tensor, %grad : Tensor):\n"                               \
    "  %g_self : Tensor = aten::mv(%grad, %vec2)\n"                                                            \
    "  %gt : Tensor = aten::t(%grad)\n"                                                                        \
    "  %g_vec2 : Tensor = aten::mv(%gt, %self)\n"                                                              \
    "  return (%g_self, %g_vec2)\n")

#endif
