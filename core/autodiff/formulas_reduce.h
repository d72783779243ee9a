/* Gradient formulas as data: reduce ops. Format and rules: formula.c.
 *
 * Semantics are PyTorch 1.13's derivatives.yaml. A reduced gradient is put
 * back to the input's shape with fusebox::sum_backward (ops/list_backward.h),
 * a view, so the pointwise work that follows fuses. Reductions with an
 * optional dtype argument cast the gradient back to the input's dtype, as
 * PyTorch's autograd does on the way out of a node. var/std, the norms and
 * the normalizations are C builders (grad_builders.c): their formulas depend
 * on constant arguments (correction, p, optional weights).
 */
#ifndef FBX_AUTODIFF_FORMULAS_REDUCE_H
#define FBX_AUTODIFF_FORMULAS_REDUCE_H

/* Lines the templates share. */
#define FBX_GFR_CONSTS_                          \
  "  %none : NoneType = prim::Constant()\n"      \
  "  %false : bool = prim::Constant[value=0]()\n" \
  "  %true : bool = prim::Constant[value=1]()\n"
/* %gi = %g in %self's dtype */
#define FBX_GFR_CAST_(g)                                                  \
  "  %sdt : int = prim::dtype(%self)\n"                                   \
  "  %gi : Tensor = aten::to(" g ", %sdt, %false, %false, %none)\n"

/* amax/amin and max/min: the gradient is shared equally by the elements
 * equal to the result (PyTorch's scale_grad_by_count). */
#define FBX_GFR_SELECT_ALL_(DIM, KEEP)                                              \
  FBX_GFR_CONSTS_                                                                   \
  "  %sizes : int[] = aten::size(%self)\n"                                          \
  "  %r : Tensor = fusebox::sum_backward(%result, %sizes, " DIM ", " KEEP ")\n"     \
  "  %m : Tensor = aten::eq(%self, %r)\n"                                           \
  "  %cnt : Tensor = aten::sum(%m, " DIM ", %true, %none)\n"                        \
  "  %g : Tensor = fusebox::sum_backward(%grad, %sizes, " DIM ", " KEEP ")\n"       \
  "  %gd : Tensor = aten::div(%g, %cnt)\n"                                          \
  "  %gi : Tensor = aten::mul(%gd, %m)\n"

/* prod along the last dim of %x (n = its length): the product of the
 * elements before (exclusive cumprod) times the product of those after, so
 * zeros in the input give exact gradients (no division by the input). */
#define FBX_GFR_PROD_LAST_                                                   \
  "  %m1 : int = prim::Constant[value=-1]()\n"                               \
  "  %zero : int = prim::Constant[value=0]()\n"                              \
  "  %one : int = prim::Constant[value=1]()\n"                               \
  "  %padl : int[] = prim::ListConstruct(%one, %zero)\n"                     \
  "  %last : int[] = prim::ListConstruct(%m1)\n"                             \
  "  %xl : Tensor = aten::constant_pad_nd(%x, %padl, %one)\n"                \
  "  %xl2 : Tensor = aten::narrow(%xl, %m1, %zero, %n)\n"                    \
  "  %before : Tensor = aten::cumprod(%xl2, %m1, %none)\n"                   \
  "  %xf : Tensor = aten::flip(%x, %last)\n"                                 \
  "  %xr : Tensor = aten::constant_pad_nd(%xf, %padl, %one)\n"               \
  "  %xr2 : Tensor = aten::narrow(%xr, %m1, %zero, %n)\n"                    \
  "  %afterf : Tensor = aten::cumprod(%xr2, %m1, %none)\n"                   \
  "  %after : Tensor = aten::flip(%afterf, %last)\n"                         \
  "  %others : Tensor = aten::mul(%before, %after)\n"

/* G(op_id, ir_text): op_id names the op-table row (FBX_OP_<op_id>). */
/* a value-selecting reduction (self, dim, keepdim) -> (values, indices) */
#define FBX_GFR_SELECT_DIM_                                                                                   \
  "graph(%self : Tensor, %dim : int, %keepdim : bool, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, " \
  "%grad1 : Tensor):\n"                                                                                       \
  "  %none : NoneType = prim::Constant()\n"                                                                   \
  "  %sizes : int[] = aten::size(%self)\n"                                                                    \
  "  %gi : Tensor = aten::value_selecting_reduction_backward(%grad0, %dim, %result1, %sizes, %keepdim)\n"     \
  "  return (%gi, %none, %none)\n"
/* PyTorch's evenly_distribute_backward: grad / count over the elements equal to the result */
#define FBX_GFR_EVENLY_                                                                                       \
  "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n"                                                \
  "  %none : NoneType = prim::Constant()\n"                                                                   \
  "  %m : Tensor = aten::eq(%self, %result)\n"                                                                \
  "  %c : Tensor = aten::sum(%m, %none)\n"                                                                    \
  "  %g : Tensor = aten::div(%grad, %c)\n"                                                                    \
  "  %z : Tensor = aten::zeros_like(%self, %none, %none, %none, %none, %none)\n"                             \
  "  %gi : Tensor = aten::where(%m, %g, %z)\n"                                                                \
  "  return (%gi)\n"

#define FBX_GFR_TRAPZ_X_                                                                                      \
  "graph(%y : Tensor, %x : Tensor, %dim : int, %result : Tensor, %grad : Tensor):\n"                          \
  "  %none : NoneType = prim::Constant()\n"                                                                   \
  "  %one : float = prim::Constant[value=1.]()\n"                                                             \
  "  %gy : Tensor, %gx : Tensor = fusebox::trapz_backward(%grad, %y, %x, %one, %dim)\n"                       \
  "  return (%gy, %gx, %none)\n"
#define FBX_GFR_TRAPZ_DX_                                                                                     \
  "graph(%y : Tensor, %dx : Scalar, %dim : int, %result : Tensor, %grad : Tensor):\n"                         \
  "  %none : NoneType = prim::Constant()\n"                                                                   \
  "  %gy : Tensor, %gx : Tensor = fusebox::trapz_backward(%grad, %y, %none, %dx, %dim)\n"                     \
  "  return (%gy, %none, %none)\n"
#define FBX_GFR_QUANTILE_(QTYPE, IGNORE)                                                                      \
  "graph(%self : Tensor, %q : " QTYPE ", %dim : int?, %keepdim : bool, %interpolation : str, "                \
  "%result : Tensor, %grad : Tensor):\n"                                                                      \
  "  %none : NoneType = prim::Constant()\n"                                                                   \
  "  %false : bool = prim::Constant[value=0]()\n"                                                             \
  "  %true : bool = prim::Constant[value=1]()\n"                                                              \
  "  %gi : Tensor = fusebox::quantile_backward(%grad, %self, %q, %dim, %keepdim, %interpolation, " IGNORE ")\n" \
  "  return (%gi, %none, %none, %none, %none)\n"

#define FBX_GRAD_FORMULAS_REDUCE(G)                                                                           \
  G(sum,                                                                                                      \
    "graph(%self : Tensor, %dtype : int?, %result : Tensor, %grad : Tensor):\n" FBX_GFR_CONSTS_                \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %g : Tensor = fusebox::sum_backward(%grad, %sizes, %none, %false)\n" FBX_GFR_CAST_("%g")               \
    "  return (%gi, %none)\n")                                                                                \
  G(sum_dim_IntList,                                                                                          \
    "graph(%self : Tensor, %dim : int[]?, %keepdim : bool, %dtype : int?, %result : Tensor, %grad : Tensor):\n" \
    FBX_GFR_CONSTS_                                                                                           \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %g : Tensor = fusebox::sum_backward(%grad, %sizes, %dim, %keepdim)\n" FBX_GFR_CAST_("%g")              \
    "  return (%gi, %none, %none, %none)\n")                                                                  \
  G(mean,                                                                                                     \
    "graph(%self : Tensor, %dtype : int?, %result : Tensor, %grad : Tensor):\n" FBX_GFR_CONSTS_                \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %g : Tensor = fusebox::sum_backward(%grad, %sizes, %none, %false)\n"                                   \
    "  %n : int = aten::numel(%self)\n"                                                                       \
    "  %gm : Tensor = aten::div(%g, %n)\n" FBX_GFR_CAST_("%gm")                                               \
    "  return (%gi, %none)\n")                                                                                \
  G(mean_dim,                                                                                                 \
    "graph(%self : Tensor, %dim : int[]?, %keepdim : bool, %dtype : int?, %result : Tensor, %grad : Tensor):\n" \
    FBX_GFR_CONSTS_                                                                                           \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %g : Tensor = fusebox::sum_backward(%grad, %sizes, %dim, %keepdim)\n"                                  \
    "  %nin : int = aten::numel(%self)\n"                                                                     \
    "  %nout : int = aten::numel(%grad)\n"                                                                    \
    "  %n : float = aten::div(%nin, %nout)\n"                                                                 \
    "  %gm : Tensor = aten::div(%g, %n)\n" FBX_GFR_CAST_("%gm")                                               \
    "  return (%gi, %none, %none, %none)\n")                                                                  \
  G(prod,                                                                                                     \
    "graph(%self : Tensor, %dtype : int?, %result : Tensor, %grad : Tensor):\n" FBX_GFR_CONSTS_                \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %n : int = aten::numel(%self)\n"                                                                       \
    "  %flat : int[] = prim::ListConstruct(%n)\n"                                                             \
    "  %x : Tensor = aten::reshape(%self, %flat)\n" FBX_GFR_PROD_LAST_                                        \
    "  %o : Tensor = aten::reshape(%others, %sizes)\n"                                                        \
    "  %g : Tensor = aten::mul(%o, %grad)\n" FBX_GFR_CAST_("%g")                                              \
    "  return (%gi, %none)\n")                                                                                \
  G(prod_dim_int,                                                                                             \
    "graph(%self : Tensor, %dim : int, %keepdim : bool, %dtype : int?, %result : Tensor, %grad : Tensor):\n"    \
    FBX_GFR_CONSTS_                                                                                           \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %n : int = aten::size(%self, %dim)\n"                                                                  \
    "  %mone : int = prim::Constant[value=-1]()\n"                                                            \
    "  %x : Tensor = aten::transpose(%self, %dim, %mone)\n" FBX_GFR_PROD_LAST_                                \
    "  %o : Tensor = aten::transpose(%others, %dim, %mone)\n"                                                 \
    "  %dl : int[] = prim::ListConstruct(%dim)\n"                                                             \
    "  %ge : Tensor = fusebox::sum_backward(%grad, %sizes, %dl, %keepdim)\n"                                  \
    "  %g : Tensor = aten::mul(%o, %ge)\n" FBX_GFR_CAST_("%g")                                                \
    "  return (%gi, %none, %none, %none)\n")                                                                  \
  G(amax,                                                                                                     \
    "graph(%self : Tensor, %dim : int[], %keepdim : bool, %result : Tensor, %grad : Tensor):\n"               \
    FBX_GFR_SELECT_ALL_("%dim", "%keepdim") "  return (%gi, %none, %none)\n")                                 \
  G(amin,                                                                                                     \
    "graph(%self : Tensor, %dim : int[], %keepdim : bool, %result : Tensor, %grad : Tensor):\n"               \
    FBX_GFR_SELECT_ALL_("%dim", "%keepdim") "  return (%gi, %none, %none)\n")                                 \
  G(max, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFR_SELECT_ALL_("%none", "%false")   \
    "  return (%gi)\n")                                                                                       \
  G(min, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFR_SELECT_ALL_("%none", "%false")   \
    "  return (%gi)\n")                                                                                       \
  G(max_dim,                                                                                                  \
    "graph(%self : Tensor, %dim : int, %keepdim : bool, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, " \
    "%grad1 : Tensor):\n"                                                                                     \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %gi : Tensor = aten::value_selecting_reduction_backward(%grad0, %dim, %result1, %sizes, %keepdim)\n"   \
    "  return (%gi, %none, %none)\n")                                                                         \
  G(min_dim,                                                                                                  \
    "graph(%self : Tensor, %dim : int, %keepdim : bool, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, " \
    "%grad1 : Tensor):\n"                                                                                     \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %gi : Tensor = aten::value_selecting_reduction_backward(%grad0, %dim, %result1, %sizes, %keepdim)\n"   \
    "  return (%gi, %none, %none)\n")                                                                         \
  /* kthvalue, median.dim, nanmedian.dim: the gradient at the selected index, as max.dim's */              \
  G(kthvalue,                                                                                                 \
    "graph(%self : Tensor, %k : int, %dim : int, %keepdim : bool, %result0 : Tensor, %result1 : Tensor, "     \
    "%grad0 : Tensor, %grad1 : Tensor):\n"                                                                    \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %gi : Tensor = aten::value_selecting_reduction_backward(%grad0, %dim, %result1, %sizes, %keepdim)\n"   \
    "  return (%gi, %none, %none, %none)\n")                                                                  \
  G(median_dim, FBX_GFR_SELECT_DIM_)                                                                          \
  G(nanmedian_dim, FBX_GFR_SELECT_DIM_)                                                                       \
  /* median / nanmedian of every element: the gradient split evenly among the elements equal to the result */ \
  G(median, FBX_GFR_EVENLY_)                                                                                  \
  G(nanmedian, FBX_GFR_EVENLY_)                                                                               \
  G(logsumexp,                                                                                                \
    "graph(%self : Tensor, %dim : int[], %keepdim : bool, %result : Tensor, %grad : Tensor):\n"               \
    FBX_GFR_CONSTS_                                                                                           \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %r : Tensor = fusebox::sum_backward(%result, %sizes, %dim, %keepdim)\n"                                \
    "  %g : Tensor = fusebox::sum_backward(%grad, %sizes, %dim, %keepdim)\n"                                  \
    "  %one : int = prim::Constant[value=1]()\n"                                                              \
    "  %d : Tensor = aten::sub(%self, %r, %one)\n"                                                            \
    "  %e : Tensor = aten::exp(%d)\n"                                                                         \
    "  %gi : Tensor = aten::mul(%g, %e)\n"                                                                    \
    "  return (%gi, %none, %none)\n")                                                                         \
  G(cumsum,                                                                                                   \
    "graph(%self : Tensor, %dim : int, %dtype : int?, %result : Tensor, %grad : Tensor):\n" FBX_GFR_CONSTS_    \
    "  %dl : int[] = prim::ListConstruct(%dim)\n"                                                             \
    "  %f : Tensor = aten::flip(%grad, %dl)\n"                                                                \
    "  %c : Tensor = aten::cumsum(%f, %dim, %none)\n"                                                         \
    "  %g : Tensor = aten::flip(%c, %dl)\n" FBX_GFR_CAST_("%g")                                               \
    "  return (%gi, %none, %none)\n")                                                                         \
  G(cumprod,                                                                                                  \
    "graph(%self : Tensor, %dim : int, %dtype : int?, %result : Tensor, %grad : Tensor):\n" FBX_GFR_CONSTS_    \
    "  %gi0 : Tensor = fusebox::cumprod_backward(%grad, %self, %dim)\n" FBX_GFR_CAST_("%gi0")                    \
    "  return (%gi, %none, %none)\n")                                                                         \
  G(softmax_int,                                                                                              \
    "graph(%self : Tensor, %dim : int, %dtype : int?, %result : Tensor, %grad : Tensor):\n" FBX_GFR_CONSTS_    \
    "  %gy : Tensor = aten::mul(%grad, %result)\n"                                                            \
    "  %dl : int[] = prim::ListConstruct(%dim)\n"                                                             \
    "  %s : Tensor = aten::sum(%gy, %dl, %true, %none)\n"                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                              \
    "  %d : Tensor = aten::sub(%grad, %s, %one)\n"                                                            \
    "  %g : Tensor = aten::mul(%result, %d)\n" FBX_GFR_CAST_("%g")                                            \
    "  return (%gi, %none, %none)\n")                                                                         \
  /* layer_norm: one row kernel for all three gradients (ops/k_norm.c) */                                     \
  G(layer_norm,                                                                                               \
    "graph(%input : Tensor, %normalized_shape : int[], %weight : Tensor?, %bias : Tensor?, %eps : float, "    \
    "%cudnn_enable : bool, %result : Tensor, %grad : Tensor):\n"                                               \
    "  %none : NoneType = prim::Constant()\n"                                                                  \
    "  %gi : Tensor, %gw : Tensor, %gb : Tensor = fusebox::layer_norm_backward(%grad, %input, "               \
    "%normalized_shape, %weight, %bias, %eps)\n"                                                               \
    "  return (%gi, %none, %gw, %gb, %none, %none)\n")                                                        \
  G(log_softmax_int,                                                                                          \
    "graph(%self : Tensor, %dim : int, %dtype : int?, %result : Tensor, %grad : Tensor):\n" FBX_GFR_CONSTS_    \
    "  %dl : int[] = prim::ListConstruct(%dim)\n"                                                             \
    "  %s : Tensor = aten::sum(%grad, %dl, %true, %none)\n"                                                   \
    "  %p : Tensor = aten::exp(%result)\n"                                                                    \
    "  %ps : Tensor = aten::mul(%p, %s)\n"                                                                    \
    "  %one : int = prim::Constant[value=1]()\n"                                                              \
    "  %g : Tensor = aten::sub(%grad, %ps, %one)\n" FBX_GFR_CAST_("%g")                                       \
    "  return (%gi, %none, %none)\n")                                                                         \
  /* nansum / nanmean: sum's / mean's gradient, 0 at the NaNs (mean over the count of the others) */          \
  G(nansum,                                                                                                   \
    "graph(%self : Tensor, %dim : int[]?, %keepdim : bool, %dtype : int?, %result : Tensor, %grad : Tensor):\n" \
    FBX_GFR_CONSTS_                                                                                           \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %g : Tensor = fusebox::sum_backward(%grad, %sizes, %dim, %keepdim)\n"                                  \
    "  %nan : Tensor = aten::isnan(%self)\n"                                                                  \
    "  %zero : int = prim::Constant[value=0]()\n"                                                             \
    "  %gz : Tensor = aten::masked_fill(%g, %nan, %zero)\n" FBX_GFR_CAST_("%gz")                              \
    "  return (%gi, %none, %none, %none)\n")                                                                  \
  G(nanmean,                                                                                                  \
    "graph(%self : Tensor, %dim : int[]?, %keepdim : bool, %dtype : int?, %result : Tensor, %grad : Tensor):\n" \
    FBX_GFR_CONSTS_                                                                                           \
    "  %sizes : int[] = aten::size(%self)\n"                                                                  \
    "  %g : Tensor = fusebox::sum_backward(%grad, %sizes, %dim, %keepdim)\n"                                  \
    "  %nan : Tensor = aten::isnan(%self)\n"                                                                  \
    "  %ok : Tensor = aten::logical_not(%nan)\n"                                                              \
    "  %cnt : Tensor = aten::sum(%ok, %dim, %true, %none)\n"                                                  \
    "  %gd : Tensor = aten::div(%g, %cnt)\n"                                                                  \
    "  %zero : int = prim::Constant[value=0]()\n"                                                             \
    "  %gz : Tensor = aten::masked_fill(%gd, %nan, %zero)\n" FBX_GFR_CAST_("%gz")                             \
    "  return (%gi, %none, %none, %none)\n")                                                                  \
  /* aminmax: amin's and amax's gradients (shared among ties), added */                                      \
  G(aminmax,                                                                                                  \
    "graph(%self : Tensor, %dim : int?, %keepdim : bool, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, " \
    "%grad1 : Tensor):\n"                                                                                     \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %gi : Tensor = fusebox::aminmax_backward(%grad0, %grad1, %self, %result0, %result1, %dim, %keepdim)\n" \
    "  return (%gi, %none, %none)\n")                                                                         \
  /* trapz / trapezoid (fusebox::trapz_backward, ops/k_search.c) */                                          \
  G(trapz_x, FBX_GFR_TRAPZ_X_)                                                                                \
  G(trapezoid_x, FBX_GFR_TRAPZ_X_)                                                                            \
  G(trapz_dx, FBX_GFR_TRAPZ_DX_)                                                                              \
  G(trapezoid_dx, FBX_GFR_TRAPZ_DX_)                                                                          \
  /* quantile / nanquantile: to the sorted elements each result interpolates (ops/k_search.c) */             \
  G(quantile, FBX_GFR_QUANTILE_("Tensor", "%false"))                                                          \
  G(quantile_scalar, FBX_GFR_QUANTILE_("float", "%false"))                                                    \
  G(nanquantile, FBX_GFR_QUANTILE_("Tensor", "%true"))                                                        \
  G(nanquantile_scalar, FBX_GFR_QUANTILE_("float", "%true"))                                                  \
  G(renorm,                                                                                                   \
    "graph(%self : Tensor, %p : Scalar, %dim : int, %maxnorm : Scalar, %result : Tensor, %grad : Tensor):\n"  \
    "  %none : NoneType = prim::Constant()\n"                                                                 \
    "  %gi : Tensor = fusebox::renorm_backward(%grad, %self, %p, %dim, %maxnorm)\n"                           \
    "  return (%gi, %none, %none, %none)\n")                                                                  \
  /* msort: the gradient scattered back to where sort took each value from */                                \
  G(msort,                                                                                                    \
    "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFR_CONSTS_                              \
    "  %zero : int = prim::Constant[value=0]()\n"                                                             \
    "  %v : Tensor, %i : Tensor = aten::sort(%self, %zero, %false)\n"                                         \
    "  %z : Tensor = aten::zeros_like(%self, %none, %none, %none, %none, %none)\n"                            \
    "  %gi : Tensor = aten::scatter(%z, %zero, %i, %grad)\n"                                                  \
    "  return (%gi)\n")

#endif
