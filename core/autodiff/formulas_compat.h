/* Gradient formulas as data: ATen's internal and legacy overloads
 * (ops/k_compat.c). Format and rules: formula.c. Each is the formula of the
 * row it rearranges (softmax, view, to); the shifts are integer ops with no
 * gradient (PyTorch's are "not differentiable" too). Uses the pointwise
 * file's helper macros (FBX_GF_*). */
#ifndef FBX_AUTODIFF_FORMULAS_COMPAT_H
#define FBX_AUTODIFF_FORMULAS_COMPAT_H

#define FBX_GFC_CAST_(G, id) \
  G(id, FBX_GF_("%self : Tensor, %non_blocking : bool, %result : Tensor, %grad : Tensor", FBX_GF_TOSELF_, "%g, %none"))

/* G(op_id, ir_text): op_id names the op-table row (FBX_OP_<op_id>). */
#define FBX_GRAD_FORMULAS_COMPAT(G)                                                                                \
  G(_softmax, FBX_GF_("%self : Tensor, %dim : int, %half_to_float : bool, %result : Tensor, %grad : Tensor",        \
                      "  %true : bool = prim::Constant[value=1]()\n"                                             \
                      "  %gy : Tensor = aten::mul(%grad, %result)\n"                                              \
                      "  %dl : int[] = prim::ListConstruct(%dim)\n"                                               \
                      "  %s : Tensor = aten::sum(%gy, %dl, %true, %none)\n"                                       \
                      "  %d : Tensor = aten::sub(%grad, %s, %i1)\n"                                              \
                      "  %g : Tensor = aten::mul(%result, %d)\n",                                                 \
                      "%g, %none, %none"))                                                                        \
  G(_log_softmax, FBX_GF_("%self : Tensor, %dim : int, %half_to_float : bool, %result : Tensor, %grad : Tensor",    \
                          "  %true : bool = prim::Constant[value=1]()\n"                                         \
                          "  %dl : int[] = prim::ListConstruct(%dim)\n"                                           \
                          "  %s : Tensor = aten::sum(%grad, %dl, %true, %none)\n"                                 \
                          "  %p : Tensor = aten::exp(%result)\n"                                                  \
                          "  %ps : Tensor = aten::mul(%p, %s)\n"                                                  \
                          "  %g : Tensor = aten::sub(%grad, %ps, %i1)\n",                                        \
                          "%g, %none, %none"))                                                                    \
  G(_unsafe_view, FBX_GF_("%self : Tensor, %size : int[], %result : Tensor, %grad : Tensor",                        \
                          "  %sizes : int[] = aten::size(%self)\n"                                                \
                          "  %g : Tensor = aten::reshape(%grad, %sizes)\n",                                       \
                          "%g, %none"))                                                                           \
  G(_to_copy, FBX_GF_("%self : Tensor, %dtype : int?, %layout : int?, %device : Device?, %pin_memory : bool?, "     \
                      "%non_blocking : bool, %memory_format : int?, %result : Tensor, %grad : Tensor",            \
                      FBX_GF_TOSELF_, "%g, %none, %none, %none, %none, %none, %none"))                            \
  /* native_layer_norm: the gradient of y only (mean and rstd are saved statistics) */                             \
  G(native_layer_norm,                                                                                           \
    "graph(%input : Tensor, %normalized_shape : int[], %weight : Tensor?, %bias : Tensor?, %eps : float, "       \
    "%result0 : Tensor, %result1 : Tensor, %result2 : Tensor, %grad0 : Tensor, %grad1 : Tensor, "               \
    "%grad2 : Tensor):\n"                                                                                        \
    "  %none : NoneType = prim::Constant()\n"                                                                    \
    "  %gi : Tensor, %gw : Tensor, %gb : Tensor = fusebox::layer_norm_backward(%grad0, %input, "                 \
    "%normalized_shape, %weight, %bias, %eps)\n"                                                                 \
    "  return (%gi, %none, %gw, %gb, %none)\n")                                                                  \
  FBX_GFC_CAST_(G, _cast_Half)                                                                                        \
  FBX_GFC_CAST_(G, _cast_Float)                                                                                       \
  FBX_GFC_CAST_(G, _cast_Double)                                                                                      \
  G(bitwise_left_shift_Tensor, FBX_GF_NONE2_)                                                                      \
  G(bitwise_left_shift_Tensor_Scalar, FBX_GF_NONE2S_)                                                              \
  G(bitwise_right_shift_Tensor, FBX_GF_NONE2_)                                                                     \
  G(bitwise_right_shift_Tensor_Scalar, FBX_GF_NONE2S_)

#endif
