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
  "  %false : bool = prim::Constant[value=0]()\n"        \
  "  %fnan : float = prim::Constant[value=nan]()\n"
#define FBX_GF_(params, body, rets) "graph(" params "):\n" FBX_GF_CONSTS_ body "  return (" rets ")\n"
/* The common signatures. */
#define FBX_GF_P1_ "%self : Tensor, %result : Tensor, %grad : Tensor"
#define FBX_GF_P2_(b, extra) "%self : Tensor, %" b " : Tensor" extra ", %result : Tensor, %grad : Tensor"
#define FBX_GF_P2S_(b, extra) "%self : Tensor, %" b " : Scalar" extra ", %result : Tensor, %grad : Tensor"
/* One-input op: body defines %g. */
#define FBX_GF_UNARY_(body) FBX_GF_(FBX_GF_P1_, body, "%g")
/* An op without gradients: every return None. */
#define FBX_GF_NONE1_ FBX_GF_(FBX_GF_P1_, "", "%none")
#define FBX_GF_NONE2_ FBX_GF_(FBX_GF_P2_("other", ""), "", "%none, %none")
#define FBX_GF_NONE2S_ FBX_GF_(FBX_GF_P2S_("other", ""), "", "%none, %none")
#define FBX_GF_NONESELF_ \
  FBX_GF_("%self : Scalar, %other : Tensor, %result : Tensor, %grad : Tensor", "", "%none, %none")
/* %g = grad * <expr %d> for one-input ops: body defines %d. */
#define FBX_GF_CHAIN_(body) FBX_GF_UNARY_(body "  %g : Tensor = aten::mul(%grad, %d)\n")
/* %g = grad where mask %m holds, else 0: body defines %m. */
#define FBX_GF_MASK_(params, body, rets) FBX_GF_(params, body "  %g : Tensor = aten::where(%m, %grad, %f0)\n", rets)
/* maximum/minimum: the gradient goes to the winner, halved on ties; self
 * gets none where aten::<lose>(self, other), other none where
 * aten::<win>(self, other) (so a NaN passes it to both, as in PyTorch). */
#define FBX_GF_MAXMIN_(win, lose)                                                 \
  FBX_GF_(FBX_GF_P2_("other", ""),                                                \
          "  %tie : Tensor = aten::eq(%self, %other)\n"                           \
          "  %half : Tensor = aten::mul(%grad, %fh)\n"                            \
          "  %h : Tensor = aten::where(%tie, %half, %grad)\n"                     \
          "  %sl : Tensor = aten::" lose "(%self, %other)\n"                      \
          "  %gs : Tensor = aten::where(%sl, %f0, %h)\n"                          \
          "  %ol : Tensor = aten::" win "(%self, %other)\n"                       \
          "  %go : Tensor = aten::where(%ol, %f0, %h)\n" FBX_GF_SUM_("gs", "self") \
              FBX_GF_SUM_("go", "other"),                                         \
          "%g_self, %g_other")
/* Conversions: %g = grad converted to self's dtype (a constant when the IR
 * type knows it, see formula.c). */
#define FBX_GF_TOSELF_                                               \
  "  %dt : int = prim::dtype(%self)\n"                               \
  "  %g : Tensor = aten::to(%grad, %dt, %false, %false, %none)\n"
/* %g_<p>: gradient g summed back to the size of argument p. */
#define FBX_GF_SUM_(g, p)                                 \
  "  %" p "_sz : int[] = aten::size(%" p ")\n"           \
  "  %g_" p " : Tensor = aten::_grad_sum_to_size(%" g ", %" p "_sz)\n"

/* clamp (and its alias clip): the gradient passes where min <= x <= max */
#define FBX_GF_CLAMP_ \
  FBX_GF_("%self : Tensor, %min : Scalar?, %max : Scalar?, %result : Tensor, %grad : Tensor",                     \
                   "  %nomin : bool = aten::__is__(%min, %none)\n"                                                         \
                   "  %nomax : bool = aten::__is__(%max, %none)\n"                                                         \
                   "  %g : Tensor = prim::If(%nomin)\n"                                                                    \
                   "    block0():\n"                                                                                       \
                   "      %ga : Tensor = prim::If(%nomax)\n"                                                               \
                   "        block0():\n"                                                                                   \
                   "          -> (%grad)\n"                                                                                \
                   "        block1():\n"                                                                                   \
                   "          %mx : Scalar = prim::unchecked_cast(%max)\n"                                                 \
                   "          %m : Tensor = aten::le(%self, %mx)\n"                                                        \
                   "          %w : Tensor = aten::where(%m, %grad, %f0)\n"                                                 \
                   "          -> (%w)\n"                                                                                   \
                   "      -> (%ga)\n"                                                                                      \
                   "    block1():\n"                                                                                       \
                   "      %mn : Scalar = prim::unchecked_cast(%min)\n"                                                     \
                   "      %m1 : Tensor = aten::ge(%self, %mn)\n"                                                           \
                   "      %gb : Tensor = prim::If(%nomax)\n"                                                               \
                   "        block0():\n"                                                                                   \
                   "          %w1 : Tensor = aten::where(%m1, %grad, %f0)\n"                                               \
                   "          -> (%w1)\n"                                                                                  \
                   "        block1():\n"                                                                                   \
                   "          %mx2 : Scalar = prim::unchecked_cast(%max)\n"                                                \
                   "          %m2 : Tensor = aten::le(%self, %mx2)\n"                                                      \
                   "          %m12 : Tensor = aten::logical_and(%m1, %m2)\n"                                               \
                   "          %w2 : Tensor = aten::where(%m12, %grad, %f0)\n"                                              \
                   "          -> (%w2)\n"                                                                                  \
                   "      -> (%gb)\n",                                                                                     \
                   "%g, %none, %none")
/* clamp.Tensor (and clip.Tensor), see the row */
#define FBX_GF_CLAMP_TENSOR_ \
  FBX_GF_("%self : Tensor, %min : Tensor?, %max : Tensor?, %result : Tensor, %grad : Tensor",              \
                          "  %nomin : bool = aten::__is__(%min, %none)\n"                                                  \
                          "  %nomax : bool = aten::__is__(%max, %none)\n"                                                  \
                          "  %gs : Tensor, %gmin : Tensor, %gmax : Tensor = prim::If(%nomin)\n"                            \
                          "    block0():\n"                                                                                \
                          "      %mx : Tensor = prim::unchecked_cast(%max)\n"                                              \
                          "      %m : Tensor = aten::le(%self, %mx)\n"                                                     \
                          "      %ws : Tensor = aten::where(%m, %grad, %f0)\n"                                             \
                          "      %wx : Tensor = aten::where(%m, %f0, %grad)\n"                                             \
                          "      -> (%ws, %grad, %wx)\n"                                                                   \
                          "    block1():\n"                                                                                \
                          "      %mn : Tensor = prim::unchecked_cast(%min)\n"                                              \
                          "      %m1 : Tensor = aten::ge(%self, %mn)\n"                                                    \
                          "      %gs2 : Tensor, %gmin2 : Tensor, %gmax2 : Tensor = prim::If(%nomax)\n"                     \
                          "        block0():\n"                                                                            \
                          "          %ws1 : Tensor = aten::where(%m1, %grad, %f0)\n"                                       \
                          "          %wn1 : Tensor = aten::where(%m1, %f0, %grad)\n"                                       \
                          "          -> (%ws1, %wn1, %grad)\n"                                                             \
                          "        block1():\n"                                                                            \
                          "          %mx2 : Tensor = prim::unchecked_cast(%max)\n"                                         \
                          "          %m2 : Tensor = aten::le(%self, %mx2)\n"                                               \
                          "          %m12 : Tensor = aten::logical_and(%m1, %m2)\n"                                        \
                          "          %ws2 : Tensor = aten::where(%m12, %grad, %f0)\n"                                      \
                          "          %lt : Tensor = aten::lt(%self, %mn)\n"                                                \
                          "          %ok : Tensor = aten::lt(%mn, %mx2)\n"                                                 \
                          "          %pn : Tensor = aten::logical_and(%lt, %ok)\n"                                         \
                          "          %wn2 : Tensor = aten::where(%pn, %grad, %f0)\n"                                       \
                          "          %gt : Tensor = aten::gt(%self, %mx2)\n"                                               \
                          "          %inv : Tensor = aten::lt(%mx2, %mn)\n"                                                \
                          "          %px : Tensor = aten::logical_or(%gt, %inv)\n"                                         \
                          "          %wx2 : Tensor = aten::where(%px, %grad, %f0)\n"                                       \
                          "          -> (%ws2, %wn2, %wx2)\n"                                                              \
                          "      -> (%gs2, %gmin2, %gmax2)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("gmin", "min")         \
                              FBX_GF_SUM_("gmax", "max"),                                                                  \
                          "%g_self, %g_min, %g_max")

#define FBX_GRAD_FORMULAS_POINTWISE(G) \
  /* ---- unary ---- */                                                                                                    \
  G(abs, FBX_GF_CHAIN_("  %d : Tensor = aten::sgn(%self)\n"))                                                              \
  G(neg, FBX_GF_UNARY_("  %g : Tensor = aten::neg(%grad)\n"))                                                              \
  G(reciprocal, FBX_GF_UNARY_("  %y2 : Tensor = aten::mul(%result, %result)\n"                                             \
                              "  %gy : Tensor = aten::mul(%grad, %y2)\n"                                                   \
                              "  %g : Tensor = aten::neg(%gy)\n"))                                                         \
  G(sqrt, FBX_GF_UNARY_("  %y2 : Tensor = aten::mul(%result, %f2)\n"                                                       \
                        "  %g : Tensor = aten::div(%grad, %y2)\n"))                                                        \
  G(rsqrt, FBX_GF_UNARY_("  %k : float = prim::Constant[value=-0.5]()\n"                                                   \
                         "  %y2 : Tensor = aten::mul(%result, %result)\n"                                                  \
                         "  %y3 : Tensor = aten::mul(%y2, %result)\n"                                                      \
                         "  %d : Tensor = aten::mul(%y3, %k)\n"                                                            \
                         "  %g : Tensor = aten::mul(%grad, %d)\n"))                                                        \
  G(square, FBX_GF_CHAIN_("  %d : Tensor = aten::mul(%self, %f2)\n"))                                                      \
  G(exp, FBX_GF_UNARY_("  %g : Tensor = aten::mul(%grad, %result)\n"))                                                     \
  G(exp2, FBX_GF_CHAIN_("  %ln2 : float = prim::Constant[value=0.69314718055994529]()\n"                                   \
                        "  %d : Tensor = aten::mul(%result, %ln2)\n"))                                                     \
  G(expm1, FBX_GF_CHAIN_("  %d : Tensor = aten::add(%result, %i1, %i1)\n"))                                                \
  G(log, FBX_GF_UNARY_("  %g : Tensor = aten::div(%grad, %self)\n"))                                                       \
  G(log2, FBX_GF_UNARY_("  %ln2 : float = prim::Constant[value=0.69314718055994529]()\n"                                   \
                        "  %d : Tensor = aten::mul(%self, %ln2)\n"                                                         \
                        "  %g : Tensor = aten::div(%grad, %d)\n"))                                                         \
  G(log10, FBX_GF_UNARY_("  %ln10 : float = prim::Constant[value=2.3025850929940459]()\n"                                  \
                         "  %d : Tensor = aten::mul(%self, %ln10)\n"                                                       \
                         "  %g : Tensor = aten::div(%grad, %d)\n"))                                                        \
  G(log1p, FBX_GF_UNARY_("  %d : Tensor = aten::add(%self, %i1, %i1)\n"                                                    \
                         "  %g : Tensor = aten::div(%grad, %d)\n"))                                                        \
  G(sin, FBX_GF_CHAIN_("  %d : Tensor = aten::cos(%self)\n"))                                                              \
  G(cos, FBX_GF_CHAIN_("  %s : Tensor = aten::sin(%self)\n"                                                                \
                       "  %d : Tensor = aten::neg(%s)\n"))                                                                 \
  G(tan, FBX_GF_CHAIN_("  %y2 : Tensor = aten::mul(%result, %result)\n"                                                    \
                       "  %d : Tensor = aten::add(%y2, %i1, %i1)\n"))                                                      \
  G(asin, FBX_GF_CHAIN_("  %x2 : Tensor = aten::mul(%self, %self)\n"                                                       \
                        "  %c : Tensor = aten::rsub(%x2, %i1, %i1)\n"                                                      \
                        "  %d : Tensor = aten::rsqrt(%c)\n"))                                                              \
  G(acos, FBX_GF_CHAIN_("  %x2 : Tensor = aten::mul(%self, %self)\n"                                                       \
                        "  %c : Tensor = aten::rsub(%x2, %i1, %i1)\n"                                                      \
                        "  %r : Tensor = aten::rsqrt(%c)\n"                                                                \
                        "  %d : Tensor = aten::neg(%r)\n"))                                                                \
  G(atan, FBX_GF_UNARY_("  %x2 : Tensor = aten::mul(%self, %self)\n"                                                       \
                        "  %c : Tensor = aten::add(%x2, %i1, %i1)\n"                                                       \
                        "  %g : Tensor = aten::div(%grad, %c)\n"))                                                         \
  G(sinh, FBX_GF_CHAIN_("  %d : Tensor = aten::cosh(%self)\n"))                                                            \
  G(cosh, FBX_GF_CHAIN_("  %d : Tensor = aten::sinh(%self)\n"))                                                            \
  G(tanh, FBX_GF_CHAIN_("  %y2 : Tensor = aten::mul(%result, %result)\n"                                                   \
                        "  %d : Tensor = aten::rsub(%y2, %f1, %i1)\n"))                                                    \
  /* erf' = 2/sqrt(pi) exp(-x^2) */                                                                                        \
  G(erf, FBX_GF_CHAIN_("  %k : float = prim::Constant[value=1.1283791670955126]()\n"                                       \
                       "  %x2 : Tensor = aten::mul(%self, %self)\n"                                                        \
                       "  %n : Tensor = aten::neg(%x2)\n"                                                                  \
                       "  %e : Tensor = aten::exp(%n)\n"                                                                   \
                       "  %d : Tensor = aten::mul(%e, %k)\n"))                                                             \
  G(erfc, FBX_GF_CHAIN_("  %k : float = prim::Constant[value=-1.1283791670955126]()\n"                                     \
                        "  %x2 : Tensor = aten::mul(%self, %self)\n"                                                       \
                        "  %n : Tensor = aten::neg(%x2)\n"                                                                 \
                        "  %e : Tensor = aten::exp(%n)\n"                                                                  \
                        "  %d : Tensor = aten::mul(%e, %k)\n"))                                                            \
  G(lgamma, FBX_GF_CHAIN_("  %d : Tensor = aten::digamma(%self)\n"))                                                       \
  G(sigmoid, FBX_GF_CHAIN_("  %d1 : Tensor = aten::rsub(%result, %f1, %i1)\n"                                              \
                           "  %d : Tensor = aten::mul(%result, %d1)\n"))                                                   \
  /* logit: NaN outside [0, 1] without eps; 0 outside [eps, 1 - eps] with it */                                            \
  G(logit, FBX_GF_("%self : Tensor, %eps : float?, %result : Tensor, %grad : Tensor",                                      \
                   "  %c : Tensor = aten::rsub(%self, %i1, %i1)\n"                                                         \
                   "  %xc : Tensor = aten::mul(%self, %c)\n"                                                               \
                   "  %q : Tensor = aten::div(%grad, %xc)\n"                                                               \
                   "  %noeps : bool = aten::__is__(%eps, %none)\n"                                                         \
                   "  %g : Tensor = prim::If(%noeps)\n"                                                                    \
                   "    block0():\n"                                                                                       \
                   "      %lo : Tensor = aten::lt(%self, %i0)\n"                                                           \
                   "      %hi : Tensor = aten::gt(%self, %i1)\n"                                                           \
                   "      %out : Tensor = aten::logical_or(%lo, %hi)\n"                                                    \
                   "      %g1 : Tensor = aten::where(%out, %fnan, %q)\n"                                                    \
                   "      -> (%g1)\n"                                                                                      \
                   "    block1():\n"                                                                                       \
                   "      %e : float = prim::unchecked_cast(%eps)\n"                                                       \
                   "      %e1 : float = aten::sub(%i1, %e)\n"                                                              \
                   "      %lo2 : Tensor = aten::lt(%self, %e)\n"                                                           \
                   "      %hi2 : Tensor = aten::gt(%self, %e1)\n"                                                          \
                   "      %out2 : Tensor = aten::logical_or(%lo2, %hi2)\n"                                                 \
                   "      %g2 : Tensor = aten::where(%out2, %f0, %q)\n"                                                    \
                   "      -> (%g2)\n",                                                                                     \
                   "%g, %none"))                                                                                           \
  /* ---- activations ---- */                                                                                              \
  G(relu, FBX_GF_MASK_(FBX_GF_P1_, "  %m : Tensor = aten::gt(%result, %i0)\n", "%g"))                                      \
  G(relu6, FBX_GF_MASK_(FBX_GF_P1_,                                                                                        \
                        "  %six : int = prim::Constant[value=6]()\n"                                                       \
                        "  %m1 : Tensor = aten::gt(%self, %i0)\n"                                                          \
                        "  %m2 : Tensor = aten::lt(%self, %six)\n"                                                         \
                        "  %m : Tensor = aten::logical_and(%m1, %m2)\n",                                                   \
                        "%g"))                                                                                             \
  G(leaky_relu, FBX_GF_("%self : Tensor, %negative_slope : Scalar, %result : Tensor, %grad : Tensor",                      \
                        "  %m : Tensor = aten::gt(%self, %i0)\n"                                                           \
                        "  %gs : Tensor = aten::mul(%grad, %negative_slope)\n"                                             \
                        "  %g : Tensor = aten::where(%m, %grad, %gs)\n",                                                   \
                        "%g, %none"))                                                                                      \
  /* elu: x <= 0: grad * input_scale * alpha * scale * exp(x * input_scale); else grad * scale */                          \
  G(elu, FBX_GF_("%self : Tensor, %alpha : Scalar, %scale : Scalar, %input_scale : Scalar, %result : Tensor, "             \
                 "%grad : Tensor",                                                                                         \
                 "  %m : Tensor = aten::gt(%self, %i0)\n"                                                                  \
                 "  %gp : Tensor = aten::mul(%grad, %scale)\n"                                                             \
                 "  %xs : Tensor = aten::mul(%self, %input_scale)\n"                                                       \
                 "  %e : Tensor = aten::exp(%xs)\n"                                                                        \
                 "  %e1 : Tensor = aten::mul(%e, %input_scale)\n"                                                          \
                 "  %e2 : Tensor = aten::mul(%e1, %alpha)\n"                                                               \
                 "  %e3 : Tensor = aten::mul(%e2, %scale)\n"                                                               \
                 "  %gn : Tensor = aten::mul(%grad, %e3)\n"                                                                \
                 "  %g : Tensor = aten::where(%m, %gp, %gn)\n",                                                            \
                 "%g, %none, %none, %none"))                                                                               \
  G(selu, FBX_GF_CHAIN_("  %scale : float = prim::Constant[value=1.0507009873554805]()\n"                                  \
                        "  %sa : float = prim::Constant[value=1.7580993408473766]()\n"                                     \
                        "  %m : Tensor = aten::gt(%self, %i0)\n"                                                           \
                        "  %e : Tensor = aten::exp(%self)\n"                                                               \
                        "  %en : Tensor = aten::mul(%e, %sa)\n"                                                            \
                        "  %d : Tensor = aten::where(%m, %scale, %en)\n"))                                                 \
  G(celu, FBX_GF_("%self : Tensor, %alpha : Scalar, %result : Tensor, %grad : Tensor",                                     \
                  "  %m : Tensor = aten::gt(%self, %i0)\n"                                                                 \
                  "  %xa : Tensor = aten::div(%self, %alpha)\n"                                                            \
                  "  %e : Tensor = aten::exp(%xa)\n"                                                                       \
                  "  %gn : Tensor = aten::mul(%grad, %e)\n"                                                                \
                  "  %g : Tensor = aten::where(%m, %grad, %gn)\n",                                                         \
                  "%g, %none"))                                                                                            \
  /* gelu: exact, or the tanh approximation's own derivative */                                                            \
  G(gelu, FBX_GF_("%self : Tensor, %approximate : str, %result : Tensor, %grad : Tensor",                                  \
                  "  %tanh_s : str = prim::Constant[value=\"tanh\"]()\n"                                                   \
                  "  %is_tanh : bool = aten::eq(%approximate, %tanh_s)\n"                                                  \
                  "  %g : Tensor = prim::If(%is_tanh)\n"                                                                   \
                  "    block0():\n"                                                                                        \
                  "      %beta : float = prim::Constant[value=0.79788456080286541]()\n"                                    \
                  "      %kappa : float = prim::Constant[value=0.044715]()\n"                                              \
                  "      %kappa3 : float = prim::Constant[value=0.134145]()\n"                                             \
                  "      %x2 : Tensor = aten::mul(%self, %self)\n"                                                         \
                  "      %x3 : Tensor = aten::mul(%x2, %self)\n"                                                           \
                  "      %kx3 : Tensor = aten::mul(%x3, %kappa)\n"                                                         \
                  "      %s : Tensor = aten::add(%self, %kx3, %i1)\n"                                                      \
                  "      %inner : Tensor = aten::mul(%s, %beta)\n"                                                         \
                  "      %t : Tensor = aten::tanh(%inner)\n"                                                               \
                  "      %right : Tensor = aten::add(%t, %i1, %i1)\n"                                                      \
                  "      %dleft : Tensor = aten::mul(%right, %fh)\n"                                                       \
                  "      %left : Tensor = aten::mul(%self, %fh)\n"                                                         \
                  "      %t2 : Tensor = aten::mul(%t, %t)\n"                                                               \
                  "      %sech2 : Tensor = aten::rsub(%t2, %i1, %i1)\n"                                                    \
                  "      %k3x2 : Tensor = aten::mul(%x2, %kappa3)\n"                                                       \
                  "      %dinner0 : Tensor = aten::add(%k3x2, %i1, %i1)\n"                                                 \
                  "      %dinner : Tensor = aten::mul(%dinner0, %beta)\n"                                                  \
                  "      %dr0 : Tensor = aten::mul(%left, %sech2)\n"                                                       \
                  "      %dright : Tensor = aten::mul(%dr0, %dinner)\n"                                                    \
                  "      %d1 : Tensor = aten::add(%dleft, %dright, %i1)\n"                                                 \
                  "      %g1 : Tensor = aten::mul(%grad, %d1)\n"                                                           \
                  "      -> (%g1)\n"                                                                                       \
                  "    block1():\n"                                                                                        \
                  "      %rs2 : float = prim::Constant[value=0.70710678118654757]()\n"                                     \
                  "      %rs2pi : float = prim::Constant[value=0.3989422804014327]()\n"                                    \
                  "      %xr : Tensor = aten::mul(%self, %rs2)\n"                                                          \
                  "      %erf : Tensor = aten::erf(%xr)\n"                                                                 \
                  "      %cdf0 : Tensor = aten::add(%erf, %i1, %i1)\n"                                                     \
                  "      %cdf : Tensor = aten::mul(%cdf0, %fh)\n"                                                          \
                  "      %x2b : Tensor = aten::mul(%self, %self)\n"                                                        \
                  "      %h : Tensor = aten::mul(%x2b, %fh)\n"                                                             \
                  "      %nh : Tensor = aten::neg(%h)\n"                                                                   \
                  "      %e : Tensor = aten::exp(%nh)\n"                                                                   \
                  "      %pdf : Tensor = aten::mul(%e, %rs2pi)\n"                                                          \
                  "      %xpdf : Tensor = aten::mul(%self, %pdf)\n"                                                        \
                  "      %d2 : Tensor = aten::add(%cdf, %xpdf, %i1)\n"                                                     \
                  "      %g2 : Tensor = aten::mul(%grad, %d2)\n"                                                           \
                  "      -> (%g2)\n",                                                                                      \
                  "%g, %none"))                                                                                            \
  G(silu, FBX_GF_CHAIN_("  %s : Tensor = aten::sigmoid(%self)\n"                                                           \
                        "  %c : Tensor = aten::rsub(%s, %i1, %i1)\n"                                                       \
                        "  %xc : Tensor = aten::mul(%self, %c)\n"                                                          \
                        "  %xc1 : Tensor = aten::add(%xc, %i1, %i1)\n"                                                     \
                        "  %d : Tensor = aten::mul(%s, %xc1)\n"))                                                          \
  G(mish, FBX_GF_CHAIN_("  %twenty : int = prim::Constant[value=20]()\n"                                                   \
                        "  %sp : Tensor = aten::softplus(%self, %i1, %twenty)\n"                                           \
                        "  %t : Tensor = aten::tanh(%sp)\n"                                                                \
                        "  %s : Tensor = aten::sigmoid(%self)\n"                                                           \
                        "  %t2 : Tensor = aten::mul(%t, %t)\n"                                                             \
                        "  %c : Tensor = aten::rsub(%t2, %i1, %i1)\n"                                                      \
                        "  %xs : Tensor = aten::mul(%self, %s)\n"                                                          \
                        "  %xsc : Tensor = aten::mul(%xs, %c)\n"                                                           \
                        "  %d : Tensor = aten::add(%t, %xsc, %i1)\n"))                                                     \
  /* softplus: z = exp(beta x); grad where beta x > threshold, else grad z / (z + 1) */                                    \
  G(softplus, FBX_GF_("%self : Tensor, %beta : Scalar, %threshold : Scalar, %result : Tensor, %grad : Tensor",             \
                      "  %bx : Tensor = aten::mul(%self, %beta)\n"                                                         \
                      "  %m : Tensor = aten::gt(%bx, %threshold)\n"                                                        \
                      "  %z : Tensor = aten::exp(%bx)\n"                                                                   \
                      "  %z1 : Tensor = aten::add(%z, %i1, %i1)\n"                                                         \
                      "  %q : Tensor = aten::div(%z, %z1)\n"                                                               \
                      "  %gq : Tensor = aten::mul(%grad, %q)\n"                                                            \
                      "  %g : Tensor = aten::where(%m, %grad, %gq)\n",                                                     \
                      "%g, %none, %none"))                                                                                 \
  G(log_sigmoid, FBX_GF_CHAIN_("  %n : Tensor = aten::neg(%self)\n"                                                        \
                               "  %d : Tensor = aten::sigmoid(%n)\n"))                                                     \
  G(hardtanh, FBX_GF_MASK_("%self : Tensor, %min_val : Scalar, %max_val : Scalar, %result : Tensor, %grad : Tensor",       \
                           "  %m1 : Tensor = aten::gt(%self, %min_val)\n"                                                  \
                           "  %m2 : Tensor = aten::lt(%self, %max_val)\n"                                                  \
                           "  %m : Tensor = aten::logical_and(%m1, %m2)\n",                                                \
                           "%g, %none, %none"))                                                                            \
  G(hardsigmoid, FBX_GF_UNARY_("  %three : int = prim::Constant[value=3]()\n"                                              \
                               "  %mthree : int = prim::Constant[value=-3]()\n"                                            \
                               "  %sixth : float = prim::Constant[value=0.16666666666666666]()\n"                          \
                               "  %m1 : Tensor = aten::gt(%self, %mthree)\n"                                               \
                               "  %m2 : Tensor = aten::lt(%self, %three)\n"                                                \
                               "  %m : Tensor = aten::logical_and(%m1, %m2)\n"                                             \
                               "  %gs : Tensor = aten::mul(%grad, %sixth)\n"                                               \
                               "  %g : Tensor = aten::where(%m, %gs, %f0)\n"))                                             \
  /* hardswish: 0 below -3, grad (x/3 + 1/2) on [-3, 3], grad above */                                                     \
  G(hardswish, FBX_GF_UNARY_("  %three : int = prim::Constant[value=3]()\n"                                                \
                             "  %mthree : int = prim::Constant[value=-3]()\n"                                              \
                             "  %x3 : Tensor = aten::div(%self, %three)\n"                                                 \
                             "  %d : Tensor = aten::add(%x3, %fh, %i1)\n"                                                  \
                             "  %gd : Tensor = aten::mul(%grad, %d)\n"                                                     \
                             "  %hi : Tensor = aten::gt(%self, %three)\n"                                                  \
                             "  %g1 : Tensor = aten::where(%hi, %grad, %gd)\n"                                             \
                             "  %lo : Tensor = aten::lt(%self, %mthree)\n"                                                 \
                             "  %g : Tensor = aten::where(%lo, %f0, %g1)\n"))                                              \
  G(threshold, FBX_GF_MASK_("%self : Tensor, %threshold : Scalar, %value : Scalar, %result : Tensor, %grad : Tensor",      \
                            "  %m : Tensor = aten::gt(%self, %threshold)\n", "%g, %none, %none"))                          \
  G(nan_to_num, FBX_GF_("%self : Tensor, %nan : float?, %posinf : float?, %neginf : float?, %result : Tensor, "            \
                        "%grad : Tensor",                                                                                  \
                        "  %m : Tensor = aten::isfinite(%self)\n"                                                          \
                        "  %g : Tensor = aten::mul(%grad, %m)\n",                                                          \
                        "%g, %none, %none, %none"))                                                                        \
  G(frac, FBX_GF_(FBX_GF_P1_, "", "%grad"))                                                                                \
  /* ---- zero gradients ---- */                                                                                           \
  G(floor, FBX_GF_NONE1_)                                                                                                  \
  G(ceil, FBX_GF_NONE1_)                                                                                                   \
  G(round, FBX_GF_NONE1_)                                                                                                  \
  G(round_decimals, FBX_GF_("%self : Tensor, %decimals : int, %result : Tensor, %grad : Tensor", "", "%none, %none"))      \
  G(trunc, FBX_GF_NONE1_)                                                                                                  \
  G(sign, FBX_GF_NONE1_)                                                                                                   \
  G(sgn, FBX_GF_NONE1_)                                                                                                    \
  G(bitwise_not, FBX_GF_NONE1_)                                                                                            \
  G(logical_not, FBX_GF_NONE1_)                                                                                            \
  G(isnan, FBX_GF_NONE1_)                                                                                                  \
  G(isinf, FBX_GF_NONE1_)                                                                                                  \
  G(isfinite, FBX_GF_NONE1_)                                                                                               \
  G(eq_Tensor, FBX_GF_NONE2_)                                                                                              \
  G(eq_Scalar, FBX_GF_NONE2S_)                                                                                             \
  G(ne_Tensor, FBX_GF_NONE2_)                                                                                              \
  G(ne_Scalar, FBX_GF_NONE2S_)                                                                                             \
  G(lt_Tensor, FBX_GF_NONE2_)                                                                                              \
  G(lt_Scalar, FBX_GF_NONE2S_)                                                                                             \
  G(le_Tensor, FBX_GF_NONE2_)                                                                                              \
  G(le_Scalar, FBX_GF_NONE2S_)                                                                                             \
  G(gt_Tensor, FBX_GF_NONE2_)                                                                                              \
  G(gt_Scalar, FBX_GF_NONE2S_)                                                                                             \
  G(ge_Tensor, FBX_GF_NONE2_)                                                                                              \
  G(ge_Scalar, FBX_GF_NONE2S_)                                                                                             \
  G(logical_and, FBX_GF_NONE2_)                                                                                            \
  G(logical_or, FBX_GF_NONE2_)                                                                                             \
  G(logical_xor, FBX_GF_NONE2_)                                                                                            \
  G(bitwise_and_Tensor, FBX_GF_NONE2_)                                                                                     \
  G(bitwise_and_Scalar, FBX_GF_NONE2S_)                                                                                    \
  G(bitwise_and_Scalar_Tensor, FBX_GF_NONESELF_)                                                                           \
  G(bitwise_or_Tensor, FBX_GF_NONE2_)                                                                                      \
  G(bitwise_or_Scalar, FBX_GF_NONE2S_)                                                                                     \
  G(bitwise_or_Scalar_Tensor, FBX_GF_NONESELF_)                                                                            \
  G(bitwise_xor_Tensor, FBX_GF_NONE2_)                                                                                     \
  G(bitwise_xor_Scalar, FBX_GF_NONE2S_)                                                                                    \
  G(bitwise_xor_Scalar_Tensor, FBX_GF_NONESELF_)                                                                           \
  G(and_Tensor, FBX_GF_NONE2_)                                                                                             \
  G(and_Scalar, FBX_GF_NONE2S_)                                                                                            \
  G(or_Tensor, FBX_GF_NONE2_)                                                                                              \
  G(or_Scalar, FBX_GF_NONE2S_)                                                                                             \
  G(xor_Tensor, FBX_GF_NONE2_)                                                                                             \
  G(xor_Scalar, FBX_GF_NONE2S_)                                                                                            \
  G(lshift_Tensor, FBX_GF_NONE2_)                                                                                          \
  G(lshift_Scalar, FBX_GF_NONE2S_)                                                                                         \
  G(rshift_Tensor, FBX_GF_NONE2_)                                                                                          \
  G(rshift_Scalar, FBX_GF_NONE2S_)                                                                                         \
  /* PyTorch 1.13 has no derivative for these; fusebox treats them as zero */                                              \
  G(floor_divide, FBX_GF_NONE2_)                                                                                           \
  G(floor_divide_Scalar, FBX_GF_NONE2S_)                                                                                   \
  G(remainder_Scalar_Tensor, FBX_GF_NONESELF_)                                                                             \
  G(where_Scalar, FBX_GF_("%condition : Tensor, %self : Scalar, %other : Scalar, %result : Tensor, %grad : Tensor",        \
                          "", "%none, %none, %none"))                                                                      \
  /* ---- clamp: the gradient passes where min <= x <= max (both ends inclusive) ---- */                                   \
  G(clamp, FBX_GF_CLAMP_) \
  /* clamp.Tensor: min gets the gradient where x < min < max, max where                                                    \
   * x > max or max < min (PyTorch's clamp_backward_min_max); a bound that                                                 \
   * is None gets none. */                                                                                                 \
  G(clamp_Tensor, FBX_GF_CLAMP_TENSOR_) \
  G(clamp_min, FBX_GF_MASK_(FBX_GF_P2S_("min", ""), "  %m : Tensor = aten::ge(%self, %min)\n", "%g, %none"))               \
  G(clamp_max, FBX_GF_MASK_(FBX_GF_P2S_("max", ""), "  %m : Tensor = aten::le(%self, %max)\n", "%g, %none"))               \
  G(clamp_min_Tensor, FBX_GF_(FBX_GF_P2_("min", ""),                                                                       \
                              "  %m : Tensor = aten::ge(%self, %min)\n"                                                    \
                              "  %gs : Tensor = aten::where(%m, %grad, %f0)\n"                                             \
                              "  %gm : Tensor = aten::where(%m, %f0, %grad)\n" FBX_GF_SUM_("gs", "self")                   \
                                  FBX_GF_SUM_("gm", "min"),                                                                \
                              "%g_self, %g_min"))                                                                          \
  G(clamp_max_Tensor, FBX_GF_(FBX_GF_P2_("max", ""),                                                                       \
                              "  %m : Tensor = aten::le(%self, %max)\n"                                                    \
                              "  %gs : Tensor = aten::where(%m, %grad, %f0)\n"                                             \
                              "  %gm : Tensor = aten::where(%m, %f0, %grad)\n" FBX_GF_SUM_("gs", "self")                   \
                                  FBX_GF_SUM_("gm", "max"),                                                                \
                              "%g_self, %g_max"))                                                                          \
  /* ---- arithmetic ---- */                                                                                               \
  G(add_Tensor, FBX_GF_(FBX_GF_P2_("other", ", %alpha : Scalar"),                                                          \
                        "  %ga : Tensor = aten::mul(%grad, %alpha)\n" FBX_GF_SUM_("grad", "self")                          \
                            FBX_GF_SUM_("ga", "other"),                                                                    \
                        "%g_self, %g_other, %none"))                                                                       \
  G(add_Scalar, FBX_GF_(FBX_GF_P2S_("other", ", %alpha : Scalar"), "", "%grad, %none, %none"))                             \
  G(sub_Tensor, FBX_GF_(FBX_GF_P2_("other", ", %alpha : Scalar"),                                                          \
                        "  %ga : Tensor = aten::mul(%grad, %alpha)\n"                                                      \
                        "  %gn : Tensor = aten::neg(%ga)\n" FBX_GF_SUM_("grad", "self") FBX_GF_SUM_("gn", "other"),        \
                        "%g_self, %g_other, %none"))                                                                       \
  G(sub_Scalar, FBX_GF_(FBX_GF_P2S_("other", ", %alpha : Scalar"), "", "%grad, %none, %none"))                             \
  /* rsub(self, other, alpha) = other - alpha * self */                                                                    \
  G(rsub_Tensor, FBX_GF_(FBX_GF_P2_("other", ", %alpha : Scalar"),                                                         \
                         "  %ga : Tensor = aten::mul(%grad, %alpha)\n"                                                     \
                         "  %gn : Tensor = aten::neg(%ga)\n" FBX_GF_SUM_("gn", "self") FBX_GF_SUM_("grad", "other"),       \
                         "%g_self, %g_other, %none"))                                                                      \
  G(rsub_Scalar, FBX_GF_(FBX_GF_P2S_("other", ", %alpha : Scalar"),                                                        \
                         "  %ga : Tensor = aten::mul(%grad, %alpha)\n"                                                     \
                         "  %g : Tensor = aten::neg(%ga)\n",                                                               \
                         "%g, %none, %none"))                                                                              \
  G(mul_Tensor, FBX_GF_(FBX_GF_P2_("other", ""),                                                                           \
                        "  %gs : Tensor = aten::mul(%grad, %other)\n"                                                      \
                        "  %go : Tensor = aten::mul(%grad, %self)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("go", "other"), \
                        "%g_self, %g_other"))                                                                              \
  G(mul_Scalar, FBX_GF_(FBX_GF_P2S_("other", ""), "  %g : Tensor = aten::mul(%grad, %other)\n", "%g, %none"))              \
  G(div_Tensor, FBX_GF_(FBX_GF_P2_("other", ""),                                                                           \
                        "  %gs : Tensor = aten::div(%grad, %other)\n"                                                      \
                        "  %o2 : Tensor = aten::mul(%other, %other)\n"                                                     \
                        "  %q : Tensor = aten::div(%self, %o2)\n"                                                          \
                        "  %gq : Tensor = aten::mul(%grad, %q)\n"                                                          \
                        "  %go : Tensor = aten::neg(%gq)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("go", "other"),          \
                        "%g_self, %g_other"))                                                                              \
  G(div_Scalar, FBX_GF_(FBX_GF_P2S_("other", ""), "  %g : Tensor = aten::div(%grad, %other)\n", "%g, %none"))              \
  /* div with a rounding mode: zero gradients; without one (None), true division's */                                      \
  G(div_Tensor_mode, FBX_GF_(FBX_GF_P2_("other", ", %rounding_mode : str?"),                                               \
                             "  %true_div : bool = aten::__is__(%rounding_mode, %none)\n"                                  \
                             "  %gs : Tensor, %go : Tensor = prim::If(%true_div)\n"                                        \
                             "    block0():\n"                                                                             \
                             "      %gs1 : Tensor = aten::div(%grad, %other)\n"                                            \
                             "      %o2 : Tensor = aten::mul(%other, %other)\n"                                            \
                             "      %q : Tensor = aten::div(%self, %o2)\n"                                                 \
                             "      %gq : Tensor = aten::mul(%grad, %q)\n"                                                 \
                             "      %go1 : Tensor = aten::neg(%gq)\n"                                                      \
                             "      -> (%gs1, %go1)\n"                                                                     \
                             "    block1():\n"                                                                             \
                             "      %z : Tensor = aten::zeros_like(%grad)\n"                                               \
                             "      -> (%z, %z)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("go", "other"),                   \
                             "%g_self, %g_other, %none"))                                                                  \
  G(div_Scalar_mode, FBX_GF_(FBX_GF_P2S_("other", ", %rounding_mode : str?"),                                              \
                             "  %true_div : bool = aten::__is__(%rounding_mode, %none)\n"                                  \
                             "  %g : Tensor = prim::If(%true_div)\n"                                                       \
                             "    block0():\n"                                                                             \
                             "      %g1 : Tensor = aten::div(%grad, %other)\n"                                             \
                             "      -> (%g1)\n"                                                                            \
                             "    block1():\n"                                                                             \
                             "      %z : Tensor = aten::zeros_like(%grad)\n"                                               \
                             "      -> (%z)\n",                                                                            \
                             "%g, %none, %none"))                                                                          \
  /* remainder: other gets -grad * floor(self / other); fmod: -grad * trunc(self / other) */                               \
  G(remainder_Tensor, FBX_GF_(FBX_GF_P2_("other", ""),                                                                     \
                              "  %mode : str = prim::Constant[value=\"floor\"]()\n"                                        \
                              "  %q : Tensor = aten::div(%self, %other, %mode)\n"                                          \
                              "  %gq : Tensor = aten::mul(%grad, %q)\n"                                                    \
                              "  %go : Tensor = aten::neg(%gq)\n" FBX_GF_SUM_("grad", "self") FBX_GF_SUM_("go", "other"),  \
                              "%g_self, %g_other"))                                                                        \
  G(remainder_Scalar, FBX_GF_(FBX_GF_P2S_("other", ""), "", "%grad, %none"))                                               \
  G(fmod_Tensor, FBX_GF_(FBX_GF_P2_("other", ""),                                                                          \
                         "  %mode : str = prim::Constant[value=\"trunc\"]()\n"                                             \
                         "  %q : Tensor = aten::div(%self, %other, %mode)\n"                                               \
                         "  %gq : Tensor = aten::mul(%grad, %q)\n"                                                         \
                         "  %go : Tensor = aten::neg(%gq)\n" FBX_GF_SUM_("grad", "self") FBX_GF_SUM_("go", "other"),       \
                         "%g_self, %g_other"))                                                                             \
  G(fmod_Scalar, FBX_GF_(FBX_GF_P2S_("other", ""), "", "%grad, %none"))                                                    \
  /* pow: no gradient to self where the exponent is 0 (not 0 * inf at 0); none                                             \
   * to the exponent where self == 0 and exponent >= 0. */                                                                 \
  G(pow_Tensor_Tensor, FBX_GF_(FBX_GF_P2_("exponent", ""),                                                                 \
                               "  %em1 : Tensor = aten::sub(%exponent, %i1, %i1)\n"                                        \
                               "  %p : Tensor = aten::pow(%self, %em1)\n"                                                  \
                               "  %ep : Tensor = aten::mul(%exponent, %p)\n"                                               \
                               "  %gep : Tensor = aten::mul(%grad, %ep)\n"                                                 \
                               "  %e0 : Tensor = aten::eq(%exponent, %i0)\n"                                               \
                               "  %gs : Tensor = aten::where(%e0, %f0, %gep)\n"                                            \
                               "  %lg : Tensor = aten::log(%self)\n"                                                       \
                               "  %rl : Tensor = aten::mul(%result, %lg)\n"                                                \
                               "  %grl : Tensor = aten::mul(%grad, %rl)\n"                                                 \
                               "  %s0 : Tensor = aten::eq(%self, %i0)\n"                                                   \
                               "  %epos : Tensor = aten::ge(%exponent, %i0)\n"                                             \
                               "  %c : Tensor = aten::logical_and(%s0, %epos)\n"                                           \
                               "  %ge : Tensor = aten::where(%c, %f0, %grl)\n" FBX_GF_SUM_("gs", "self")                   \
                                   FBX_GF_SUM_("ge", "exponent"),                                                          \
                               "%g_self, %g_exponent"))                                                                    \
  G(pow_Tensor_Scalar, FBX_GF_(FBX_GF_P2S_("exponent", ""),                                                                \
                               "  %z : bool = aten::eq(%exponent, %i0)\n"                                                  \
                               "  %g : Tensor = prim::If(%z)\n"                                                            \
                               "    block0():\n"                                                                           \
                               "      %zero : Tensor = aten::zeros_like(%self)\n"                                          \
                               "      -> (%zero)\n"                                                                        \
                               "    block1():\n"                                                                           \
                               "      %em1 : Scalar = aten::sub(%exponent, %i1)\n"                                         \
                               "      %p : Tensor = aten::pow(%self, %em1)\n"                                              \
                               "      %ep : Tensor = aten::mul(%p, %exponent)\n"                                           \
                               "      %gep : Tensor = aten::mul(%grad, %ep)\n"                                             \
                               "      -> (%gep)\n",                                                                        \
                               "%g, %none"))                                                                               \
  /* pow(Scalar self, Tensor exponent): log(self) on a 0-d tensor (the scalar                                              \
   * math.log would raise at 0) */                                                                                         \
  G(pow_Scalar, FBX_GF_("%self : Scalar, %exponent : Tensor, %result : Tensor, %grad : Tensor",                            \
                        "  %b : Tensor = prim::NumToTensor(%self)\n"                                                       \
                        "  %lb : Tensor = aten::log(%b)\n"                                                                 \
                        "  %rl : Tensor = aten::mul(%result, %lb)\n"                                                       \
                        "  %grl : Tensor = aten::mul(%grad, %rl)\n"                                                        \
                        "  %b0 : Tensor = aten::eq(%b, %i0)\n"                                                             \
                        "  %epos : Tensor = aten::ge(%exponent, %i0)\n"                                                    \
                        "  %c : Tensor = aten::logical_and(%b0, %epos)\n"                                                  \
                        "  %g : Tensor = aten::where(%c, %f0, %grl)\n",                                                    \
                        "%none, %g"))                                                                                      \
  G(atan2, FBX_GF_(FBX_GF_P2_("other", ""),                                                                                \
                   "  %s2 : Tensor = aten::mul(%self, %self)\n"                                                            \
                   "  %o2 : Tensor = aten::mul(%other, %other)\n"                                                          \
                   "  %d : Tensor = aten::add(%s2, %o2, %i1)\n"                                                            \
                   "  %gd : Tensor = aten::div(%grad, %d)\n"                                                               \
                   "  %gs : Tensor = aten::mul(%gd, %other)\n"                                                             \
                   "  %gsn : Tensor = aten::mul(%gd, %self)\n"                                                             \
                   "  %go : Tensor = aten::neg(%gsn)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("go", "other"),              \
                   "%g_self, %g_other"))                                                                                   \
  G(hypot, FBX_GF_(FBX_GF_P2_("other", ""),                                                                                \
                   "  %gr : Tensor = aten::div(%grad, %result)\n"                                                          \
                   "  %gs : Tensor = aten::mul(%gr, %self)\n"                                                              \
                   "  %go : Tensor = aten::mul(%gr, %other)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("go", "other"),       \
                   "%g_self, %g_other"))                                                                                   \
  /* maximum/minimum: ties split the gradient in halves */                                                                 \
  G(maximum, FBX_GF_MAXMIN_("gt", "lt"))                                                                                   \
  G(max_other, FBX_GF_MAXMIN_("gt", "lt"))                                                                                 \
  G(minimum, FBX_GF_MAXMIN_("lt", "gt"))                                                                                   \
  G(min_other, FBX_GF_MAXMIN_("lt", "gt"))                                                                                 \
  /* ---- aliases: the formulas of clamp, div, abs, trunc and sigmoid ---- */                                            \
  G(clip, FBX_GF_CLAMP_)                                                                                                 \
  G(clip_Tensor, FBX_GF_CLAMP_TENSOR_)                                                                                   \
  G(true_divide_Tensor, FBX_GF_(FBX_GF_P2_("other", ""),                                                                 \
                                "  %gs : Tensor = aten::div(%grad, %other)\n"                                            \
                                "  %o2 : Tensor = aten::mul(%other, %other)\n"                                           \
                                "  %q : Tensor = aten::div(%self, %o2)\n"                                                \
                                "  %gq : Tensor = aten::mul(%grad, %q)\n"                                                \
                                "  %go : Tensor = aten::neg(%gq)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("go", "other"), \
                                "%g_self, %g_other"))                                                                    \
  G(true_divide_Scalar, FBX_GF_(FBX_GF_P2S_("other", ""), "  %g : Tensor = aten::div(%grad, %other)\n", "%g, %none"))    \
  G(absolute, FBX_GF_CHAIN_("  %d : Tensor = aten::sgn(%self)\n"))                                                       \
  G(fix, FBX_GF_NONE1_)                                                                                                  \
  G(special_expit, FBX_GF_CHAIN_("  %d1 : Tensor = aten::rsub(%result, %f1, %i1)\n"                                      \
                                 "  %d : Tensor = aten::mul(%result, %d1)\n"))                                           \
  /* ---- inverse hyperbolic functions: 1/sqrt(x^2 + 1), 1/sqrt(x^2 - 1), 1/(1 - x^2) ---- */                            \
  G(asinh, FBX_GF_CHAIN_("  %x2 : Tensor = aten::mul(%self, %self)\n"                                                    \
                         "  %c : Tensor = aten::add(%x2, %i1, %i1)\n"                                                    \
                         "  %d : Tensor = aten::rsqrt(%c)\n"))                                                           \
  G(acosh, FBX_GF_CHAIN_("  %x2 : Tensor = aten::mul(%self, %self)\n"                                                    \
                         "  %c : Tensor = aten::sub(%x2, %i1, %i1)\n"                                                    \
                         "  %d : Tensor = aten::rsqrt(%c)\n"))                                                           \
  G(atanh, FBX_GF_UNARY_("  %x2 : Tensor = aten::mul(%self, %self)\n"                                                    \
                         "  %c : Tensor = aten::rsub(%x2, %i1, %i1)\n"                                                   \
                         "  %g : Tensor = aten::div(%grad, %c)\n"))                                                      \
  G(deg2rad, FBX_GF_UNARY_("  %k : float = prim::Constant[value=0.017453292519943295]()\n"                               \
                           "  %g : Tensor = aten::mul(%grad, %k)\n"))                                                    \
  G(rad2deg, FBX_GF_UNARY_("  %k : float = prim::Constant[value=57.295779513082323]()\n"                                 \
                           "  %g : Tensor = aten::mul(%grad, %k)\n"))                                                    \
  /* sinc' = (cos(pi x) pi x - sin(pi x)) / (pi x^2), 0 at x = 0 (PyTorch's masked_fill) */                              \
  G(sinc, FBX_GF_UNARY_("  %pi : float = prim::Constant[value=3.1415926535897931]()\n"                                   \
                        "  %px : Tensor = aten::mul(%self, %pi)\n"                                                       \
                        "  %c : Tensor = aten::cos(%px)\n"                                                               \
                        "  %cpx : Tensor = aten::mul(%c, %px)\n"                                                         \
                        "  %s : Tensor = aten::sin(%px)\n"                                                               \
                        "  %n : Tensor = aten::sub(%cpx, %s, %i1)\n"                                                     \
                        "  %den : Tensor = aten::mul(%px, %self)\n"                                                      \
                        "  %q : Tensor = aten::div(%n, %den)\n"                                                          \
                        "  %gq : Tensor = aten::mul(%grad, %q)\n"                                                        \
                        "  %z : Tensor = aten::eq(%self, %i0)\n"                                                         \
                        "  %g : Tensor = aten::where(%z, %f0, %gq)\n"))                                                  \
  /* erfinv' = sqrt(pi)/2 exp(erfinv(x)^2) */                                                                            \
  G(erfinv, FBX_GF_CHAIN_("  %k : float = prim::Constant[value=0.88622692545275801]()\n"                                 \
                          "  %y2 : Tensor = aten::mul(%result, %result)\n"                                               \
                          "  %e : Tensor = aten::exp(%y2)\n"                                                             \
                          "  %d : Tensor = aten::mul(%e, %k)\n"))                                                        \
  /* copysign: self gets grad * result / self (0 where self == 0); other none (PyTorch: zeros) */                        \
  G(copysign_Tensor, FBX_GF_(FBX_GF_P2_("other", ""),                                                                    \
                             "  %r : Tensor = aten::div(%result, %self)\n"                                               \
                             "  %z : Tensor = aten::eq(%self, %i0)\n"                                                    \
                             "  %rz : Tensor = aten::where(%z, %f0, %r)\n"                                               \
                             "  %gs : Tensor = aten::mul(%grad, %rz)\n" FBX_GF_SUM_("gs", "self"),                       \
                             "%g_self, %none"))                                                                          \
  G(copysign_Scalar, FBX_GF_(FBX_GF_P2S_("other", ""),                                                                   \
                             "  %r : Tensor = aten::div(%result, %self)\n"                                               \
                             "  %z : Tensor = aten::eq(%self, %i0)\n"                                                    \
                             "  %rz : Tensor = aten::where(%z, %f0, %r)\n"                                               \
                             "  %g : Tensor = aten::mul(%grad, %rz)\n",                                                  \
                             "%g, %none"))                                                                               \
  /* fmax/fmin: self gets the gradient where self >= other (<= for fmin) or other is NaN, other                          \
   * elsewhere; no halving on ties (PyTorch's formula) */                                                                \
  G(fmax, FBX_GF_(FBX_GF_P2_("other", ""),                                                                               \
                  "  %ge : Tensor = aten::ge(%self, %other)\n"                                                           \
                  "  %on : Tensor = aten::isnan(%other)\n"                                                               \
                  "  %m : Tensor = aten::logical_or(%ge, %on)\n"                                                         \
                  "  %gs : Tensor = aten::where(%m, %grad, %f0)\n"                                                       \
                  "  %go : Tensor = aten::where(%m, %f0, %grad)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("go", "other"), \
                  "%g_self, %g_other"))                                                                                  \
  G(fmin, FBX_GF_(FBX_GF_P2_("other", ""),                                                                               \
                  "  %le : Tensor = aten::le(%self, %other)\n"                                                           \
                  "  %on : Tensor = aten::isnan(%other)\n"                                                               \
                  "  %m : Tensor = aten::logical_or(%le, %on)\n"                                                         \
                  "  %gs : Tensor = aten::where(%m, %grad, %f0)\n"                                                       \
                  "  %go : Tensor = aten::where(%m, %f0, %grad)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("go", "other"), \
                  "%g_self, %g_other"))                                                                                  \
  /* xlogy: self gets xlogy(grad, other), 0 where self == 0 and other <= 0; other grad * self / other */                 \
  G(xlogy_Tensor, FBX_GF_(FBX_GF_P2_("other", ""),                                                                       \
                          "  %xg : Tensor = aten::xlogy(%grad, %other)\n"                                                \
                          "  %s0 : Tensor = aten::eq(%self, %i0)\n"                                                      \
                          "  %ole : Tensor = aten::le(%other, %i0)\n"                                                    \
                          "  %m : Tensor = aten::logical_and(%s0, %ole)\n"                                               \
                          "  %gs : Tensor = aten::where(%m, %f0, %xg)\n"                                                 \
                          "  %q : Tensor = aten::div(%self, %other)\n"                                                   \
                          "  %go : Tensor = aten::mul(%grad, %q)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("go", "other"), \
                          "%g_self, %g_other"))                                                                          \
  G(xlogy_Scalar_Other, FBX_GF_(FBX_GF_P2S_("other", ""),                                                                \
                                "  %xg : Tensor = aten::xlogy(%grad, %other)\n"                                          \
                                "  %ot : Tensor = prim::NumToTensor(%other)\n"                                           \
                                "  %s0 : Tensor = aten::eq(%self, %i0)\n"                                                \
                                "  %ole : Tensor = aten::le(%ot, %i0)\n"                                                 \
                                "  %m : Tensor = aten::logical_and(%s0, %ole)\n"                                         \
                                "  %g : Tensor = aten::where(%m, %f0, %xg)\n",                                           \
                                "%g, %none"))                                                                            \
  G(xlogy_Scalar_Self, FBX_GF_("%self : Scalar, %other : Tensor, %result : Tensor, %grad : Tensor",                      \
                               "  %gs : Tensor = aten::mul(%grad, %self)\n"                                              \
                               "  %g : Tensor = aten::div(%gs, %other)\n",                                               \
                               "%none, %g"))                                                                             \
  /* float_power: pow's formulas with the powers taken in float64; the result is float64 whatever the                    \
   * inputs are, so each gradient is converted back to its input's dtype */                                              \
  G(float_power_Tensor_Tensor, FBX_GF_(FBX_GF_P2_("exponent", ""),                                                       \
                                       "  %em1 : Tensor = aten::sub(%exponent, %i1, %i1)\n"                              \
                                       "  %p : Tensor = aten::float_power(%self, %em1)\n"                                \
                                       "  %ep : Tensor = aten::mul(%exponent, %p)\n"                                     \
                                       "  %gep : Tensor = aten::mul(%grad, %ep)\n"                                       \
                                       "  %e0 : Tensor = aten::eq(%exponent, %i0)\n"                                     \
                                       "  %gs64 : Tensor = aten::where(%e0, %f0, %gep)\n"                                \
                                       "  %sdt : int = prim::dtype(%self)\n"                                             \
                                       "  %gs : Tensor = aten::to(%gs64, %sdt, %false, %false, %none)\n"                 \
                                       "  %lg : Tensor = aten::log(%self)\n"                                             \
                                       "  %rl : Tensor = aten::mul(%result, %lg)\n"                                      \
                                       "  %grl : Tensor = aten::mul(%grad, %rl)\n"                                       \
                                       "  %s0 : Tensor = aten::eq(%self, %i0)\n"                                         \
                                       "  %epos : Tensor = aten::ge(%exponent, %i0)\n"                                   \
                                       "  %c : Tensor = aten::logical_and(%s0, %epos)\n"                                 \
                                       "  %ge64 : Tensor = aten::where(%c, %f0, %grl)\n"                                 \
                                       "  %edt : int = prim::dtype(%exponent)\n"                                         \
                                       "  %ge : Tensor = aten::to(%ge64, %edt, %false, %false, %none)\n"                 \
                                           FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("ge", "exponent"),                      \
                                       "%g_self, %g_exponent"))                                                          \
  G(float_power_Tensor_Scalar, FBX_GF_(FBX_GF_P2S_("exponent", ""),                                                      \
                                       "  %z : bool = aten::eq(%exponent, %i0)\n"                                        \
                                       "  %g64 : Tensor = prim::If(%z)\n"                                                \
                                       "    block0():\n"                                                                 \
                                       "      %zero : Tensor = aten::zeros_like(%result)\n"                              \
                                       "      -> (%zero)\n"                                                              \
                                       "    block1():\n"                                                                 \
                                       "      %em1 : Scalar = aten::sub(%exponent, %i1)\n"                               \
                                       "      %p : Tensor = aten::float_power(%self, %em1)\n"                            \
                                       "      %ep : Tensor = aten::mul(%p, %exponent)\n"                                 \
                                       "      %gep : Tensor = aten::mul(%grad, %ep)\n"                                   \
                                       "      -> (%gep)\n"                                                               \
                                       "  %sdt : int = prim::dtype(%self)\n"                                             \
                                       "  %g : Tensor = aten::to(%g64, %sdt, %false, %false, %none)\n",                  \
                                       "%g, %none"))                                                                     \
  G(float_power_Scalar, FBX_GF_("%self : Scalar, %exponent : Tensor, %result : Tensor, %grad : Tensor",                  \
                                "  %b : Tensor = prim::NumToTensor(%self)\n"                                             \
                                "  %lb : Tensor = aten::log(%b)\n"                                                       \
                                "  %rl : Tensor = aten::mul(%result, %lb)\n"                                             \
                                "  %grl : Tensor = aten::mul(%grad, %rl)\n"                                              \
                                "  %b0 : Tensor = aten::eq(%b, %i0)\n"                                                   \
                                "  %epos : Tensor = aten::ge(%exponent, %i0)\n"                                          \
                                "  %c : Tensor = aten::logical_and(%b0, %epos)\n"                                        \
                                "  %g64 : Tensor = aten::where(%c, %f0, %grl)\n"                                         \
                                "  %edt : int = prim::dtype(%exponent)\n"                                                \
                                "  %g : Tensor = aten::to(%g64, %edt, %false, %false, %none)\n",                         \
                                "%none, %g"))                                                                            \
  /* no gradients: bool results, integer-only ops; PyTorch 1.13 has no derivative for heaviside and \
   * nextafter (it raises): fusebox treats them as zero */                  \
  G(signbit, FBX_GF_NONE1_)                                                                                              \
  G(isposinf, FBX_GF_NONE1_)                                                                                             \
  G(isneginf, FBX_GF_NONE1_)                                                                                             \
  G(heaviside, FBX_GF_(FBX_GF_P2_("values", ""), "", "%none, %none"))                                                    \
  G(nextafter, FBX_GF_NONE2_)                                                                                            \
  G(gcd, FBX_GF_NONE2_)                                                                                                  \
  G(lcm, FBX_GF_NONE2_)                                                                                                  \
  /* ---- ternary ---- */                                                                                                  \
  G(where_self, FBX_GF_("%condition : Tensor, %self : Tensor, %other : Tensor, %result : Tensor, %grad : Tensor",          \
                        "  %gs : Tensor = aten::where(%condition, %grad, %f0)\n"                                           \
                        "  %go : Tensor = aten::where(%condition, %f0, %grad)\n" FBX_GF_SUM_("gs", "self")                 \
                            FBX_GF_SUM_("go", "other"),                                                                    \
                        "%none, %g_self, %g_other"))                                                                       \
  G(where_ScalarSelf, FBX_GF_("%condition : Tensor, %self : Scalar, %other : Tensor, %result : Tensor, %grad : Tensor",    \
                              "  %go : Tensor = aten::where(%condition, %f0, %grad)\n" FBX_GF_SUM_("go", "other"),         \
                              "%none, %none, %g_other"))                                                                   \
  G(where_ScalarOther, FBX_GF_("%condition : Tensor, %self : Tensor, %other : Scalar, %result : Tensor, %grad : Tensor",   \
                               "  %gs : Tensor = aten::where(%condition, %grad, %f0)\n" FBX_GF_SUM_("gs", "self"),         \
                               "%none, %g_self, %none"))                                                                   \
  G(lerp_Tensor, FBX_GF_("%self : Tensor, %end : Tensor, %weight : Tensor, %result : Tensor, %grad : Tensor",              \
                         "  %ge : Tensor = aten::mul(%grad, %weight)\n"                                                    \
                         "  %gs : Tensor = aten::sub(%grad, %ge, %i1)\n"                                                   \
                         "  %d : Tensor = aten::sub(%end, %self, %i1)\n"                                                   \
                         "  %gw : Tensor = aten::mul(%grad, %d)\n" FBX_GF_SUM_("gs", "self") FBX_GF_SUM_("ge", "end")      \
                             FBX_GF_SUM_("gw", "weight"),                                                                  \
                         "%g_self, %g_end, %g_weight"))                                                                    \
  G(lerp_Scalar, FBX_GF_("%self : Tensor, %end : Tensor, %weight : Scalar, %result : Tensor, %grad : Tensor",              \
                         "  %ge : Tensor = aten::mul(%grad, %weight)\n"                                                    \
                         "  %gs : Tensor = aten::sub(%grad, %ge, %i1)\n" FBX_GF_SUM_("gs", "self")                         \
                             FBX_GF_SUM_("ge", "end"),                                                                     \
                         "%g_self, %g_end, %none"))                                                                        \
  G(addcmul, FBX_GF_("%self : Tensor, %tensor1 : Tensor, %tensor2 : Tensor, %value : Scalar, %result : Tensor, "           \
                     "%grad : Tensor",                                                                                     \
                     "  %gv : Tensor = aten::mul(%grad, %value)\n"                                                         \
                     "  %g1 : Tensor = aten::mul(%gv, %tensor2)\n"                                                         \
                     "  %g2 : Tensor = aten::mul(%gv, %tensor1)\n" FBX_GF_SUM_("grad", "self")                             \
                         FBX_GF_SUM_("g1", "tensor1") FBX_GF_SUM_("g2", "tensor2"),                                        \
                     "%g_self, %g_tensor1, %g_tensor2, %none"))                                                            \
  G(addcdiv, FBX_GF_("%self : Tensor, %tensor1 : Tensor, %tensor2 : Tensor, %value : Scalar, %result : Tensor, "           \
                     "%grad : Tensor",                                                                                     \
                     "  %gv : Tensor = aten::mul(%grad, %value)\n"                                                         \
                     "  %g1 : Tensor = aten::div(%gv, %tensor2)\n"                                                         \
                     "  %t22 : Tensor = aten::mul(%tensor2, %tensor2)\n"                                                   \
                     "  %q : Tensor = aten::div(%tensor1, %t22)\n"                                                         \
                     "  %gq : Tensor = aten::mul(%gv, %q)\n"                                                               \
                     "  %g2 : Tensor = aten::neg(%gq)\n" FBX_GF_SUM_("grad", "self") FBX_GF_SUM_("g1", "tensor1")          \
                         FBX_GF_SUM_("g2", "tensor2"),                                                                     \
                     "%g_self, %g_tensor1, %g_tensor2, %none"))                                                            \
  G(masked_fill_Tensor, FBX_GF_("%self : Tensor, %mask : Tensor, %value : Tensor, %result : Tensor, %grad : Tensor",       \
                                "  %gs : Tensor = aten::where(%mask, %f0, %grad)\n"                                        \
                                "  %gv : Tensor = aten::where(%mask, %grad, %f0)\n" FBX_GF_SUM_("gs", "self")              \
                                    FBX_GF_SUM_("gv", "value"),                                                            \
                                "%g_self, %none, %g_value"))                                                               \
  G(masked_fill_Scalar, FBX_GF_("%self : Tensor, %mask : Tensor, %value : Scalar, %result : Tensor, %grad : Tensor",       \
                                "  %gs : Tensor = aten::where(%mask, %f0, %grad)\n" FBX_GF_SUM_("gs", "self"),             \
                                "%g_self, %none, %none"))                                                                  \
  /* ---- conversions: the gradient goes back to self's dtype ---- */                                                      \
  G(to_dtype, FBX_GF_("%self : Tensor, %dtype : int, %non_blocking : bool, %copy : bool, %memory_format : int?, "          \
                      "%result : Tensor, %grad : Tensor",                                                                  \
                      FBX_GF_TOSELF_, "%g, %none, %none, %none, %none"))                                                   \
  G(to_device, FBX_GF_("%self : Tensor, %device : Device, %dtype : int, %non_blocking : bool, %copy : bool, "              \
                       "%memory_format : int?, %result : Tensor, %grad : Tensor",                                          \
                       FBX_GF_TOSELF_, "%g, %none, %none, %none, %none, %none"))                                           \
  G(to_other, FBX_GF_("%self : Tensor, %other : Tensor, %non_blocking : bool, %copy : bool, %memory_format : int?, "       \
                      "%result : Tensor, %grad : Tensor",                                                                  \
                      FBX_GF_TOSELF_, "%g, %none, %none, %none, %none"))                                                   \
  G(to_dtype_layout, FBX_GF_("%self : Tensor, %dtype : int?, %layout : int?, %device : Device?, %pin_memory : bool?, "     \
                             "%non_blocking : bool, %copy : bool, %memory_format : int?, %result : Tensor, "               \
                             "%grad : Tensor",                                                                             \
                             FBX_GF_TOSELF_, "%g, %none, %none, %none, %none, %none, %none, %none"))                       \
  G(cpu, FBX_GF_("%self : Tensor, %result : Tensor, %grad : Tensor", "", "%grad"))                              \
  G(as_tensor, FBX_GF_("%data : Tensor, %dtype : int?, %device : Device?, %result : Tensor, %grad : Tensor",     \
                       "  %dt : int = prim::dtype(%data)\n"                                                     \
                       "  %g : Tensor = aten::to(%grad, %dt, %false, %false, %none)\n", "%g, %none, %none"))      \
  G(to_prim_Device, FBX_GF_("%self : Tensor, %device : Device?, %dtype : int?, %non_blocking : bool, %copy : bool, "       \
                            "%result : Tensor, %grad : Tensor",                                                            \
                            FBX_GF_TOSELF_, "%g, %none, %none, %none, %none"))                                             \
  G(to_prim_dtype, FBX_GF_("%self : Tensor, %dtype : int?, %non_blocking : bool, %copy : bool, %result : Tensor, "         \
                           "%grad : Tensor",                                                                               \
                           FBX_GF_TOSELF_, "%g, %none, %none, %none"))                                                     \
  G(to_prim_other, FBX_GF_("%self : Tensor, %non_blocking : bool, %copy : bool, %result : Tensor, %grad : Tensor",         \
                           FBX_GF_TOSELF_, "%g, %none, %none"))                                                            \
  G(type_as, FBX_GF_(FBX_GF_P2_("other", ""), FBX_GF_TOSELF_, "%g, %none"))                                                \

#endif
