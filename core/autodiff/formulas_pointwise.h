/* Gradient formulas as data: pointwise ops. Format and rules: formula.c.
 *
 * Semantics are PyTorch 1.13's derivatives (tools/autograd/derivatives.yaml
 * there), kinks included: relu'(0) = 0, abs uses sgn, clamp passes the
 * gradient where min <= x <= max, maximum/minimum split ties in halves.
 * Ops whose gradient is zero in PyTorch (comparisons, logical and integer
 * ops, floor/ceil/round/trunc/sign) return None for every argument. */
#ifndef FBX_AUTODIFF_FORMULAS_POINTWISE_H
#define FBX_AUTODIFF_FORMULAS_POINTWISE_H

/* ---- shared pieces ------------------------------------------------------------------
 * Every template starts with these constants (DCE drops the unused ones). */
#define FBX_GF_CONSTS_                                \
  "  %none : NoneType = prim::Constant()\n"           \
  "  %i0 : int = prim::Constant[value=0]()\n"         \
  "  %i1 : int = prim::Constant[value=1]()\n"         \
  "  %f0 : float = prim::Constant[value=0.]()\n"      \
  "  %f1 : float = prim::Constant[value=1.]()\n"      \
  "  %f2 : float = prim::Constant[value=2.]()\n"      \
  "  %fh : float = prim::Constant[value=0.5]()\n"     \
  "  %false : bool = prim::Constant[value=0]()\n"
#define FBX_GF_(params, body, rets) "graph(" params "):\n" FBX_GF_CONSTS_ body "  return (" rets ")\n"
/* The common signatures. */
#define FBX_GF_P1_ "%self : Tensor, %result : Tensor, %grad : Tensor"
#define FBX_GF_P2_(b, extra) "%self : Tensor, %" b " : Tensor" extra ", %result : Tensor, %grad : Tensor"
#define FBX_GF_P2S_(b, extra) "%self : Tensor, %" b " : Scalar" extra ", %result : Tensor, %grad : Tensor"
/* One-input op: body defines %g. */
#define FBX_GF_UNARY_(body) FBX_GF_(FBX_GF_P1_, body, "%g")
/* %g_<p>: gradient g summed back to the size of argument p. */
#define FBX_GF_SUM_(g, p)                                 \
  "  %" p "_sz : int[] = aten::size(%" p ")\n"           \
  "  %g_" p " : Tensor = aten::_grad_sum_to_size(%" g ", %" p "_sz)\n"

#define FBX_GRAD_FORMULAS_POINTWISE(G)                                                                  \
  G(neg, FBX_GF_UNARY_("  %g : Tensor = aten::neg(%grad)\n"))                                           \
  G(exp, FBX_GF_UNARY_("  %g : Tensor = aten::mul(%grad, %result)\n"))                                  \
  G(tanh, FBX_GF_UNARY_("  %y2 : Tensor = aten::mul(%result, %result)\n"                                \
                        "  %d : Tensor = aten::rsub(%y2, %f1, %i1)\n"                                   \
                        "  %g : Tensor = aten::mul(%grad, %d)\n"))                                      \
  G(sigmoid, FBX_GF_UNARY_("  %d1 : Tensor = aten::rsub(%result, %f1, %i1)\n"                           \
                           "  %d : Tensor = aten::mul(%result, %d1)\n"                                  \
                           "  %g : Tensor = aten::mul(%grad, %d)\n"))                                   \
  G(relu, FBX_GF_UNARY_("  %m : Tensor = aten::gt(%result, %i0)\n"                                      \
                        "  %g : Tensor = aten::where(%m, %grad, %f0)\n"))                               \
  /* ---- arithmetic ---- */                                                                            \
  G(add_Tensor, FBX_GF_(FBX_GF_P2_("other", ", %alpha : Scalar"),                                        \
                        "  %ga : Tensor = aten::mul(%grad, %alpha)\n" FBX_GF_SUM_("grad", "self")       \
                            FBX_GF_SUM_("ga", "other"),                                                 \
                        "%g_self, %g_other, %none"))                                                    \
  G(add_Scalar, FBX_GF_(FBX_GF_P2S_("other", ", %alpha : Scalar"), "", "%grad, %none, %none"))           \
  G(sub_Tensor, FBX_GF_(FBX_GF_P2_("other", ", %alpha : Scalar"),                                        \
                        "  %ga : Tensor = aten::mul(%grad, %alpha)\n"                                   \
                        "  %gn : Tensor = aten::neg(%ga)\n" FBX_GF_SUM_("grad", "self")                 \
                            FBX_GF_SUM_("gn", "other"),                                                 \
                        "%g_self, %g_other, %none"))                                                    \
  G(sub_Scalar, FBX_GF_(FBX_GF_P2S_("other", ", %alpha : Scalar"), "", "%grad, %none, %none"))           \
  G(mul_Tensor, FBX_GF_(FBX_GF_P2_("other", ""),                                                            \
                        "  %gs : Tensor = aten::mul(%grad, %other)\n"                                   \
                        "  %go : Tensor = aten::mul(%grad, %self)\n" FBX_GF_SUM_("gs", "self")          \
                            FBX_GF_SUM_("go", "other"),                                                 \
                        "%g_self, %g_other"))                                                           \
  G(mul_Scalar, FBX_GF_(FBX_GF_P2S_("other", ""), "  %g : Tensor = aten::mul(%grad, %other)\n", "%g, %none")) \
  G(div_Tensor, FBX_GF_(FBX_GF_P2_("other", ""),                                                            \
                        "  %gs : Tensor = aten::div(%grad, %other)\n"                                   \
                        "  %o2 : Tensor = aten::mul(%other, %other)\n"                                  \
                        "  %q : Tensor = aten::div(%self, %o2)\n"                                       \
                        "  %gq : Tensor = aten::mul(%grad, %q)\n"                                       \
                        "  %go : Tensor = aten::neg(%gq)\n" FBX_GF_SUM_("gs", "self")                   \
                            FBX_GF_SUM_("go", "other"),                                                 \
                        "%g_self, %g_other"))                                                           \
  G(div_Scalar, FBX_GF_(FBX_GF_P2S_("other", ""), "  %g : Tensor = aten::div(%grad, %other)\n", "%g, %none")) \
  /* pow: no gradient to self where the exponent is 0 (not 0 * inf at 0); none \
   * to the exponent where self == 0 and exponent >= 0. */                     \
  G(pow_Tensor_Tensor, FBX_GF_(FBX_GF_P2_("exponent", ""),                                                  \
                               "  %em1 : Tensor = aten::sub(%exponent, %i1, %i1)\n"                     \
                               "  %p : Tensor = aten::pow(%self, %em1)\n"                               \
                               "  %ep : Tensor = aten::mul(%exponent, %p)\n"                            \
                               "  %gep : Tensor = aten::mul(%grad, %ep)\n"                              \
                               "  %e0 : Tensor = aten::eq(%exponent, %i0)\n"                            \
                               "  %gs : Tensor = aten::where(%e0, %f0, %gep)\n"                         \
                               "  %lg : Tensor = aten::log(%self)\n"                                    \
                               "  %rl : Tensor = aten::mul(%result, %lg)\n"                             \
                               "  %grl : Tensor = aten::mul(%grad, %rl)\n"                              \
                               "  %s0 : Tensor = aten::eq(%self, %i0)\n"                                \
                               "  %epos : Tensor = aten::ge(%exponent, %i0)\n"                          \
                               "  %c : Tensor = aten::logical_and(%s0, %epos)\n"                        \
                               "  %ge : Tensor = aten::where(%c, %f0, %grl)\n" FBX_GF_SUM_("gs", "self") \
                                   FBX_GF_SUM_("ge", "exponent"),                                       \
                               "%g_self, %g_exponent"))                                                 \
  G(pow_Tensor_Scalar, FBX_GF_(FBX_GF_P2S_("exponent", ""),                                                 \
                               "  %z : bool = aten::eq(%exponent, %i0)\n"                               \
                               "  %g : Tensor = prim::If(%z)\n"                                         \
                               "    block0():\n"                                                        \
                               "      %zero : Tensor = aten::zeros_like(%self)\n"                       \
                               "      -> (%zero)\n"                                                     \
                               "    block1():\n"                                                        \
                               "      %em1 : Scalar = aten::sub(%exponent, %i1)\n"                      \
                               "      %p : Tensor = aten::pow(%self, %em1)\n"                           \
                               "      %ep : Tensor = aten::mul(%p, %exponent)\n"                        \
                               "      %gep : Tensor = aten::mul(%grad, %ep)\n"                          \
                               "      -> (%gep)\n",                                                     \
                               "%g, %none"))

#endif
