/* Gradient formulas as data: creation ops with a Tensor argument, in-place
 * rows without a functional twin, indexing writes, the ops that read each
 * output element from one input element (pad, repeat, roll,
 * repeat_interleave), glu and losses. Format and rules: formula.c.
 *
 * Creation ops (zeros_like, rand_like, new_full, ...) produce fresh tensors:
 * their formula returns None for every argument, so a tensor that requires
 * grad does not make their result require it (as in PyTorch). fill_ and
 * zero_ overwrite self (no gradient flows back); copy_ passes the gradient
 * to src. The eager tape differentiates other in-place rows as their
 * functional twin (exec/grad.c), which has its own formula.
 *
 * Losses take `reduction` at run time (0 none, 1 mean, 2 sum): the output
 * gradient is first put back to the elementwise shape by
 * fusebox::loss_reduction_backward (ops/list_backward.h). */
#ifndef FBX_AUTODIFF_FORMULAS_EXTRA_H
#define FBX_AUTODIFF_FORMULAS_EXTRA_H

#define FBX_GFX_OPTS_ "%dtype : int?, %layout : int?, %device : Device?, %pin_memory : bool?"
#define FBX_GFX_NONE_(params, rets) \
  "graph(" params ", %result : Tensor, %grad : Tensor):\n  %none : NoneType = prim::Constant()\n  return (" rets ")\n"
#define FBX_GFX_LIKE_(G, id)                                                                                     \
  G(id, FBX_GFX_NONE_("%self : Tensor, " FBX_GFX_OPTS_ ", %memory_format : int?",                          \
                      "%none, %none, %none, %none, %none, %none"))
#define FBX_GFX_NEW_(G, id)                                                                                      \
  G(id, FBX_GFX_NONE_("%self : Tensor, %size : int[], " FBX_GFX_OPTS_, "%none, %none, %none, %none, %none, %none"))

/* Pointwise loss head: %d = self - target, %g = the output gradient put back
 * to self's shape (scaled by 1/N for mean). */
#define FBX_GFX_LOSS_HEAD_                                                    \
  "  %none : NoneType = prim::Constant()\n"                                   \
  "  %one : int = prim::Constant[value=1]()\n"                                \
  "  %sizes : int[] = aten::size(%self)\n"                                    \
  "  %g : Tensor = fusebox::loss_reduction_backward(%grad, %sizes, %reduction)\n" \
  "  %d : Tensor = aten::sub(%self, %target, %one)\n"
/* %gs = the gradient wrt self as broadcast; both operands summed back */
#define FBX_GFX_LOSS_TAIL_(rets)                                              \
  "  %gn : Tensor = aten::neg(%gs)\n"                                         \
  "  %ts : int[] = aten::size(%target)\n"                                     \
  "  %g_target : Tensor = aten::sum_to_size(%gn, %ts)\n"                      \
  "  %g_self : Tensor = aten::sum_to_size(%gs, %sizes)\n"                     \
  "  return (" rets ")\n"

/* G(op_id, ir_text): op_id names the op-table row (FBX_OP_<op_id>). */
#define FBX_GRAD_FORMULAS_EXTRA(G)                                                                              \
  FBX_GFX_LIKE_(G, zeros_like)                                                                                     \
  FBX_GFX_LIKE_(G, ones_like)                                                                                      \
  FBX_GFX_LIKE_(G, empty_like)                                                                                     \
  FBX_GFX_LIKE_(G, rand_like)                                                                                      \
  FBX_GFX_LIKE_(G, randn_like)                                                                                     \
  G(full_like, FBX_GFX_NONE_("%self : Tensor, %fill_value : Scalar, " FBX_GFX_OPTS_ ", %memory_format : int?",   \
                             "%none, %none, %none, %none, %none, %none, %none"))                                 \
  FBX_GFX_NEW_(G, new_zeros)                                                                                       \
  FBX_GFX_NEW_(G, new_ones)                                                                                        \
  FBX_GFX_NEW_(G, new_empty)                                                                                       \
  G(new_full, FBX_GFX_NONE_("%self : Tensor, %size : int[], %fill_value : Scalar, " FBX_GFX_OPTS_,              \
                            "%none, %none, %none, %none, %none, %none, %none"))                                  \
  G(fill__Scalar, FBX_GFX_NONE_("%self : Tensor, %value : Scalar", "%none, %none"))                              \
  G(zero_, FBX_GFX_NONE_("%self : Tensor", "%none"))                                                            \
  G(copy_, "graph(%self : Tensor, %src : Tensor, %non_blocking : bool, %result : Tensor, %grad : Tensor):\n"    \
           "  %none : NoneType = prim::Constant()\n"                                                            \
           "  %s : int[] = aten::size(%src)\n"                                                                  \
           "  %g_src : Tensor = aten::sum_to_size(%grad, %s)\n"                                                 \
           "  return (%none, %g_src, %none)\n")                                                                 \
  G(sum_to_size, "graph(%self : Tensor, %size : int[], %result : Tensor, %grad : Tensor):\n"                    \
                 "  %none : NoneType = prim::Constant()\n"                                                      \
                 "  %gi : Tensor = aten::expand_as(%grad, %self)\n"                                             \
                 "  return (%gi, %none)\n")                                                                     \
  /* x[indices] = values: self keeps the gradient where it was not        \
   * overwritten; values get what was written (summed over broadcasting) */ \
  G(index_put,                                                                                                  \
    "graph(%self : Tensor, %indices : Tensor?[], %values : Tensor, %accumulate : bool, %result : Tensor, "      \
    "%grad : Tensor):\n"                                                                                        \
    "  %none : NoneType = prim::Constant()\n"                                                                   \
    "  %z : Tensor = aten::zeros_like(%values, %none, %none, %none, %none, %none)\n"                            \
    "  %g_self : Tensor = aten::index_put(%grad, %indices, %z, %accumulate)\n"                                  \
    "  %gv : Tensor = aten::index(%grad, %indices)\n"                                                           \
    "  %vs : int[] = aten::size(%values)\n"                                                                     \
    "  %g_values : Tensor = aten::sum_to_size(%gv, %vs)\n"                                                      \
    "  return (%g_self, %none, %g_values, %none)\n")                                                            \
  /* scatter: self keeps the gradient where nothing was written; src gets  \
   * the gradient at the written positions (gather: duplicated indices    \
   * give each src element the gradient of the slot, as PyTorch) */       \
  G(scatter_src,                                                                                                \
    "graph(%self : Tensor, %dim : int, %index : Tensor, %src : Tensor, %result : Tensor, %grad : Tensor):\n"    \
    "  %none : NoneType = prim::Constant()\n"                                                                   \
    "  %zero : int = prim::Constant[value=0]()\n"                                                               \
    "  %f : bool = prim::Constant[value=0]()\n"                                                                 \
    "  %g_self : Tensor = aten::scatter(%grad, %dim, %index, %zero)\n"                                          \
    "  %g_src : Tensor = aten::gather(%grad, %dim, %index, %f)\n"                                               \
    "  return (%g_self, %none, %none, %g_src)\n")                                                               \
  G(scatter_value,                                                                                              \
    "graph(%self : Tensor, %dim : int, %index : Tensor, %value : Scalar, %result : Tensor, %grad : Tensor):\n"  \
    "  %none : NoneType = prim::Constant()\n"                                                                   \
    "  %zero : int = prim::Constant[value=0]()\n"                                                               \
    "  %g_self : Tensor = aten::scatter(%grad, %dim, %index, %zero)\n"                                          \
    "  return (%g_self, %none, %none, %none)\n")                                                                \
  G(scatter_add,                                                                                                \
    "graph(%self : Tensor, %dim : int, %index : Tensor, %src : Tensor, %result : Tensor, %grad : Tensor):\n"    \
    "  %none : NoneType = prim::Constant()\n"                                                                   \
    "  %f : bool = prim::Constant[value=0]()\n"                                                                 \
    "  %g_src : Tensor = aten::gather(%grad, %dim, %index, %f)\n"                                               \
    "  return (%grad, %none, %none, %g_src)\n")                                                                 \
  /* masked_select: the gradient put back where the (broadcast) mask is   \
   * true, summed back to self's size */                                   \
  G(masked_select, "graph(%self : Tensor, %mask : Tensor, %result : Tensor, %grad : Tensor):\n"                 \
                   "  %none : NoneType = prim::Constant()\n"                                                    \
                   "  %f : bool = prim::Constant[value=0]()\n"                                                  \
                   "  %l : Tensor[] = prim::ListConstruct(%self, %mask)\n"                                      \
                   "  %b : Tensor[] = aten::broadcast_tensors(%l)\n"                                            \
                   "  %bs : Tensor, %bm : Tensor = prim::ListUnpack(%b)\n"                                      \
                   "  %z : Tensor = aten::zeros_like(%bs, %none, %none, %none, %none, %none)\n"                 \
                   "  %ix : Tensor?[] = prim::ListConstruct(%bm)\n"                                             \
                   "  %gb : Tensor = aten::index_put(%z, %ix, %grad, %f)\n"                                     \
                   "  %s : int[] = aten::size(%self)\n"                                                         \
                   "  %g_self : Tensor = aten::sum_to_size(%gb, %s)\n"                                          \
                   "  return (%g_self, %none)\n")                                                               \
  /* ---- one input element per output element ---- */                                                         \
  G(constant_pad_nd, "graph(%self : Tensor, %pad : int[], %value : Scalar, %result : Tensor, %grad : Tensor):\n" \
                     "  %none : NoneType = prim::Constant()\n"                                                  \
                     "  %mode : str = prim::Constant[value=\"constant\"]()\n"                                   \
                     "  %sizes : int[] = aten::size(%self)\n"                                                   \
                     "  %gi : Tensor = fusebox::pad_backward(%grad, %sizes, %pad, %mode)\n"                     \
                     "  return (%gi, %none, %none)\n")                                                          \
  G(pad, "graph(%self : Tensor, %pad : int[], %mode : str, %value : float?, %result : Tensor, %grad : Tensor):\n" \
         "  %none : NoneType = prim::Constant()\n"                                                              \
         "  %sizes : int[] = aten::size(%self)\n"                                                               \
         "  %gi : Tensor = fusebox::pad_backward(%grad, %sizes, %pad, %mode)\n"                                 \
         "  return (%gi, %none, %none, %none)\n")                                                               \
  G(repeat, "graph(%self : Tensor, %repeats : int[], %result : Tensor, %grad : Tensor):\n"                      \
            "  %none : NoneType = prim::Constant()\n"                                                           \
            "  %sizes : int[] = aten::size(%self)\n"                                                            \
            "  %gi : Tensor = fusebox::repeat_backward(%grad, %sizes, %repeats)\n"                              \
            "  return (%gi, %none)\n")                                                                          \
  G(roll, "graph(%self : Tensor, %shifts : int[], %dims : int[], %result : Tensor, %grad : Tensor):\n"          \
          "  %none : NoneType = prim::Constant()\n"                                                             \
          "  %gi : Tensor = fusebox::roll_backward(%grad, %shifts, %dims)\n"                                    \
          "  return (%gi, %none, %none)\n")                                                                     \
  G(repeat_interleave_self_int,                                                                                 \
    "graph(%self : Tensor, %repeats : int, %dim : int?, %output_size : int?, %result : Tensor, %grad : Tensor):\n" \
    "  %none : NoneType = prim::Constant()\n"                                                                   \
    "  %sizes : int[] = aten::size(%self)\n"                                                                    \
    "  %gi : Tensor = fusebox::repeat_interleave_backward(%grad, %sizes, %repeats, %dim)\n"                     \
    "  return (%gi, %none, %none, %none)\n")                                                                    \
  /* glu: a * sigmoid(b) with (a, b) = self.chunk(2, dim) */                                                    \
  G(glu, "graph(%self : Tensor, %dim : int, %result : Tensor, %grad : Tensor):\n"                               \
         "  %none : NoneType = prim::Constant()\n"                                                              \
         "  %two : int = prim::Constant[value=2]()\n"                                                           \
         "  %one : int = prim::Constant[value=1]()\n"                                                           \
         "  %ab : Tensor[] = aten::chunk(%self, %two, %dim)\n"                                                  \
         "  %a : Tensor, %b : Tensor = prim::ListUnpack(%ab)\n"                                                 \
         "  %s : Tensor = aten::sigmoid(%b)\n"                                                                  \
         "  %ga : Tensor = aten::mul(%grad, %s)\n"                                                              \
         "  %sc : Tensor = aten::rsub(%s, %one, %one)\n"                                                        \
         "  %t : Tensor = aten::mul(%ga, %a)\n"                                                                 \
         "  %gb : Tensor = aten::mul(%t, %sc)\n"                                                                \
         "  %l : Tensor[] = prim::ListConstruct(%ga, %gb)\n"                                                    \
         "  %gi : Tensor = aten::cat(%l, %dim)\n"                                                               \
         "  return (%gi, %none)\n")                                                                             \
  /* ---- losses ---- */                                                                                        \
  G(mse_loss, "graph(%self : Tensor, %target : Tensor, %reduction : int, %result : Tensor, %grad : Tensor):\n"  \
              FBX_GFX_LOSS_HEAD_                                                                                \
              "  %two : int = prim::Constant[value=2]()\n"                                                      \
              "  %d2 : Tensor = aten::mul(%d, %g)\n"                                                            \
              "  %gs : Tensor = aten::mul(%d2, %two)\n"                                                         \
              FBX_GFX_LOSS_TAIL_("%g_self, %g_target, %none"))                                                  \
  G(l1_loss, "graph(%self : Tensor, %target : Tensor, %reduction : int, %result : Tensor, %grad : Tensor):\n"   \
             FBX_GFX_LOSS_HEAD_                                                                                 \
             "  %sg : Tensor = aten::sign(%d)\n"                                                                \
             "  %gs : Tensor = aten::mul(%sg, %g)\n"                                                            \
             FBX_GFX_LOSS_TAIL_("%g_self, %g_target, %none"))                                                   \
  /* |d| < beta: d / beta, else sign(d) (beta 0: sign, as PyTorch's l1) */                                      \
  G(smooth_l1_loss,                                                                                             \
    "graph(%self : Tensor, %target : Tensor, %reduction : int, %beta : float, %result : Tensor, %grad : Tensor):\n" \
    FBX_GFX_LOSS_HEAD_                                                                                          \
    "  %a : Tensor = aten::abs(%d)\n"                                                                           \
    "  %in : Tensor = aten::lt(%a, %beta)\n"                                                                    \
    "  %q : Tensor = aten::div(%d, %beta)\n"                                                                    \
    "  %sg : Tensor = aten::sign(%d)\n"                                                                         \
    "  %dd : Tensor = aten::where(%in, %q, %sg)\n"                                                              \
    "  %gs : Tensor = aten::mul(%dd, %g)\n"                                                                     \
    FBX_GFX_LOSS_TAIL_("%g_self, %g_target, %none, %none"))                                                     \
  G(huber_loss,                                                                                                 \
    "graph(%self : Tensor, %target : Tensor, %reduction : int, %delta : float, %result : Tensor, %grad : Tensor):\n" \
    FBX_GFX_LOSS_HEAD_                                                                                          \
    "  %nd : float = aten::neg(%delta)\n"                                                                       \
    "  %dd : Tensor = aten::clamp(%d, %nd, %delta)\n"                                                           \
    "  %gs : Tensor = aten::mul(%dd, %g)\n"                                                                     \
    FBX_GFX_LOSS_TAIL_("%g_self, %g_target, %none, %none"))

#endif
