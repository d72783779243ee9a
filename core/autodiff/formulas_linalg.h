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

/* inverse: Y = A^-1, d A = -(Y^T g Y^T) (y: the result, g: its gradient,
 * params: the whole signature, rest: what follows d A in the return). */
#define FBX_GFL_INV_(params, y, g, rest)                                                                       \
  "graph(" params "):\n"                                                                                       \
  "  %none : NoneType = prim::Constant()\n"                                                                    \
  "  %m1 : int = prim::Constant[value=-1]()\n"                                                                 \
  "  %m2 : int = prim::Constant[value=-2]()\n"                                                                 \
  "  %yt : Tensor = aten::transpose(" y ", %m2, %m1)\n"                                                        \
  "  %t1 : Tensor = aten::matmul(%yt, " g ")\n"                                                                \
  "  %t2 : Tensor = aten::matmul(%t1, %yt)\n"                                                                  \
  "  %gi : Tensor = aten::neg(%t2)\n"                                                                          \
  "  return (%gi" rest ")\n"
/* det, logdet, slogdet: d A = gd[..., None, None] A^-T, gd the line `gd_line`
 * (g det for det, g for the log forms). */
#define FBX_GFL_DET_(params, a, gd_line)                                                                       \
  "graph(" params "):\n"                                                                                       \
  "  %f1 : float = prim::Constant[value=1.]()\n"                                                               \
  "  %m1 : int = prim::Constant[value=-1]()\n"                                                                 \
  "  %m2 : int = prim::Constant[value=-2]()\n"                                                                 \
  "  " gd_line "\n"                                                                                            \
  "  %u1 : Tensor = aten::unsqueeze(%gd, %m1)\n"                                                               \
  "  %u2 : Tensor = aten::unsqueeze(%u1, %m1)\n"                                                               \
  "  %inv : Tensor = aten::linalg_inv(" a ")\n"                                                                \
  "  %invt : Tensor = aten::transpose(%inv, %m2, %m1)\n"                                                       \
  "  %gi : Tensor = aten::mul(%u2, %invt)\n"                                                                   \
  "  return (%gi)\n"
#define FBX_GFL_CHOL_                                                                                          \
  "graph(%self : Tensor, %upper : bool, %result : Tensor, %grad : Tensor):\n"                                  \
  "  %none : NoneType = prim::Constant()\n"                                                                    \
  "  %gi : Tensor = fusebox::cholesky_backward(%grad, %result, %upper)\n"                                      \
  "  return (%gi, %none)\n"

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
    "  return (%g_self, %g_vec2)\n")                                                                           \
  /* decompositions (ops/k_decomp.c): d inv = -(Y^T g Y^T); d det = g det A^-T; d logabsdet = g A^-T */       \
  G(linalg_inv, FBX_GFL_INV_("%A : Tensor, %result : Tensor, %grad : Tensor", "%result", "%grad", ""))        \
  G(inverse, FBX_GFL_INV_("%self : Tensor, %result : Tensor, %grad : Tensor", "%result", "%grad", ""))        \
  G(linalg_inv_ex,                                                                                            \
    FBX_GFL_INV_("%A : Tensor, %check_errors : bool, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, " \
                 "%grad1 : Tensor", "%result0", "%grad0", ", %none"))                                         \
  G(linalg_det,                                                                                               \
    FBX_GFL_DET_("%A : Tensor, %result : Tensor, %grad : Tensor", "%A", "%gd : Tensor = aten::mul(%grad, %result)")) \
  G(det, FBX_GFL_DET_("%self : Tensor, %result : Tensor, %grad : Tensor", "%self",                            \
                      "%gd : Tensor = aten::mul(%grad, %result)"))                                            \
  G(logdet,                                                                                                   \
    FBX_GFL_DET_("%self : Tensor, %result : Tensor, %grad : Tensor", "%self", "%gd : Tensor = aten::mul(%grad, %f1)")) \
  G(linalg_slogdet, FBX_GFL_DET_("%A : Tensor, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, "       \
                                 "%grad1 : Tensor", "%A", "%gd : Tensor = aten::mul(%grad1, %f1)"))           \
  G(slogdet, FBX_GFL_DET_("%self : Tensor, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, "           \
                          "%grad1 : Tensor", "%self", "%gd : Tensor = aten::mul(%grad1, %f1)"))               \
  G(linalg_solve,                                                                                             \
    "graph(%A : Tensor, %B : Tensor, %left : bool, %result : Tensor, %grad : Tensor):\n"                      \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %ga : Tensor, %gb : Tensor = fusebox::linalg_solve_backward(%grad, %A, %B, %result)\n"                 \
    "  return (%ga, %gb, %none)\n")                                                                           \
  G(linalg_cholesky, FBX_GFL_CHOL_)                                                                           \
  G(cholesky, FBX_GFL_CHOL_)                                                                                  \
  /* tensordot / inner: both gradients from one kernel (ops/k_search.c) */                                  \
  G(tensordot,                                                                                                \
    "graph(%self : Tensor, %other : Tensor, %dims_self : int[], %dims_other : int[], %result : Tensor, "       \
    "%grad : Tensor):\n"                                                                                      \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %ga : Tensor, %gb : Tensor = fusebox::tensordot_backward(%grad, %self, %other, %dims_self, %dims_other)\n" \
    "  return (%ga, %gb, %none, %none)\n")                                                                    \
  G(inner,                                                                                                    \
    "graph(%self : Tensor, %other : Tensor, %result : Tensor, %grad : Tensor):\n"                             \
    "  %ga : Tensor, %gb : Tensor = fusebox::inner_backward(%grad, %self, %other)\n"                          \
    "  return (%ga, %gb)\n")                                                                                  \
  G(addmv,                                                                                                    \
    "graph(%self : Tensor, %mat : Tensor, %vec : Tensor, %beta : number, %alpha : number, %result : Tensor, "  \
    "%grad : Tensor):\n"                                                                                      \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %gb : Tensor = aten::mul(%grad, %beta)\n"                                                              \
    "  %s : int[] = aten::size(%self)\n"                                                                      \
    "  %g_self : Tensor = aten::_grad_sum_to_size(%gb, %s)\n"                                                 \
    "  %ga : Tensor = aten::mul(%grad, %alpha)\n"                                                             \
    "  %g_mat : Tensor = aten::outer(%ga, %vec)\n"                                                            \
    "  %mt : Tensor = aten::t(%mat)\n"                                                                        \
    "  %g_vec : Tensor = aten::mv(%mt, %ga)\n"                                                                \
    "  return (%g_self, %g_mat, %g_vec, %none, %none)\n")                                                     \
  G(addr,                                                                                                     \
    "graph(%self : Tensor, %vec1 : Tensor, %vec2 : Tensor, %beta : number, %alpha : number, %result : Tensor, " \
    "%grad : Tensor):\n"                                                                                      \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %gb : Tensor = aten::mul(%grad, %beta)\n"                                                              \
    "  %s : int[] = aten::size(%self)\n"                                                                      \
    "  %g_self : Tensor = aten::_grad_sum_to_size(%gb, %s)\n"                                                 \
    "  %ga : Tensor = aten::mul(%grad, %alpha)\n"                                                             \
    "  %g_vec1 : Tensor = aten::mv(%ga, %vec2)\n"                                                             \
    "  %gt : Tensor = aten::t(%ga)\n"                                                                         \
    "  %g_vec2 : Tensor = aten::mv(%gt, %vec1)\n"                                                             \
    "  return (%g_self, %g_vec1, %g_vec2, %none, %none)\n")                                                   \
  /* addbmm: every batch's product gets the same (alpha-scaled) gradient */                                 \
  G(addbmm,                                                                                                   \
    "graph(%self : Tensor, %batch1 : Tensor, %batch2 : Tensor, %beta : number, %alpha : number, "             \
    "%result : Tensor, %grad : Tensor):\n"                                                                    \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %one : int = prim::Constant[value=1]()\n"                                                              \
    "  %two : int = prim::Constant[value=2]()\n"                                                              \
    "  %gb : Tensor = aten::mul(%grad, %beta)\n"                                                              \
    "  %s : int[] = aten::size(%self)\n"                                                                      \
    "  %g_self : Tensor = aten::_grad_sum_to_size(%gb, %s)\n"                                                 \
    "  %ga : Tensor = aten::mul(%grad, %alpha)\n"                                                             \
    "  %b2t : Tensor = aten::transpose(%batch2, %one, %two)\n"                                                \
    "  %g_batch1 : Tensor = aten::matmul(%ga, %b2t)\n"                                                        \
    "  %b1t : Tensor = aten::transpose(%batch1, %one, %two)\n"                                                \
    "  %g_batch2 : Tensor = aten::matmul(%b1t, %ga)\n"                                                        \
    "  return (%g_self, %g_batch1, %g_batch2, %none, %none)\n")                                               \
  /* cross: d self = other x g, d other = g x self, summed back over broadcast dims */                       \
  G(linalg_cross,                                                                                             \
    "graph(%self : Tensor, %other : Tensor, %dim : int, %result : Tensor, %grad : Tensor):\n"                 \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %ca : Tensor = aten::linalg_cross(%other, %grad, %dim)\n"                                              \
    "  %sa : int[] = aten::size(%self)\n"                                                                     \
    "  %ga : Tensor = aten::_grad_sum_to_size(%ca, %sa)\n"                                                    \
    "  %cb : Tensor = aten::linalg_cross(%grad, %self, %dim)\n"                                               \
    "  %sb : int[] = aten::size(%other)\n"                                                                    \
    "  %gb : Tensor = aten::_grad_sum_to_size(%cb, %sb)\n"                                                    \
    "  return (%ga, %gb, %none)\n")                                                                           \
  G(cross,                                                                                                    \
    "graph(%self : Tensor, %other : Tensor, %dim : int?, %result : Tensor, %grad : Tensor):\n"                \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %ca : Tensor = aten::cross(%other, %grad, %dim)\n"                                                     \
    "  %sa : int[] = aten::size(%self)\n"                                                                     \
    "  %ga : Tensor = aten::_grad_sum_to_size(%ca, %sa)\n"                                                    \
    "  %cb : Tensor = aten::cross(%grad, %self, %dim)\n"                                                      \
    "  %sb : int[] = aten::size(%other)\n"                                                                    \
    "  %gb : Tensor = aten::_grad_sum_to_size(%cb, %sb)\n"                                                    \
    "  return (%ga, %gb, %none)\n")                                                                           \
  G(vdot,                                                                                                     \
    "graph(%self : Tensor, %other : Tensor, %result : Tensor, %grad : Tensor):\n"                             \
    "  %g_self : Tensor = aten::mul(%other, %grad)\n"                                                         \
    "  %g_other : Tensor = aten::mul(%self, %grad)\n"                                                         \
    "  return (%g_self, %g_other)\n")                                                                         \
  G(ger,                                                                                                      \
    "graph(%self : Tensor, %vec2 : Tensor, %result : Tensor, %grad : Tensor):\n"                              \
    "  %g_self : Tensor = aten::mv(%grad, %vec2)\n"                                                           \
    "  %gt : Tensor = aten::t(%grad)\n"                                                                       \
    "  %g_vec2 : Tensor = aten::mv(%gt, %self)\n"                                                             \
    "  return (%g_self, %g_vec2)\n")

#endif
