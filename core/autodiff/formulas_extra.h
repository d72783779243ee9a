/* Gradient formulas as data: creation ops with a Tensor argument, in-place
 * rows without a functional twin, indexing writes, the ops that read each
 * output element from one input element (pad, repeat, roll,
 * repeat_interleave, tile), glu, the shrinks, the scans (cummax/cummin,
 * logcumsumexp), embedding_bag, im2col/col2im and losses. Format and
 * rules: formula.c.
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
 * fusebox::loss_reduction_backward (ops/list_backward.h). The losses of
 * k_loss.c are compositions; their formulas differentiate the same
 * compositions, with fusebox::norm_backward for the p-norms of the
 * distances (p is a run-time float) and prim::If where a flag (log_target,
 * swap, log_input, full) picks the forward's branch. */
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

/* hardshrink, softshrink: the gradient where |self| > lambd (or NaN), else 0 */
#define FBX_GFX_SHRINK_(G, id)                                                                                  \
  G(id, "graph(%self : Tensor, %lambd : Scalar, %result : Tensor, %grad : Tensor):\n"                         \
        "  %none : NoneType = prim::Constant()\n"                                                              \
        "  %zero : int = prim::Constant[value=0]()\n"                                                          \
        "  %a : Tensor = aten::abs(%self)\n"                                                                   \
        "  %in : Tensor = aten::le(%a, %lambd)\n"                                                              \
        "  %gi : Tensor = aten::masked_fill(%grad, %in, %zero)\n"                                              \
        "  return (%gi, %none)\n")
/* cummax, cummin: PyTorch's cummaxmin_backward, the values' gradient added at the indices */
#define FBX_GFX_CUMMAXMIN_(G, id)                                                                               \
  G(id, "graph(%self : Tensor, %dim : int, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, "            \
        "%grad1 : Tensor):\n"                                                                                  \
        "  %none : NoneType = prim::Constant()\n"                                                              \
        "  %z : Tensor = aten::zeros_like(%self, %none, %none, %none, %none, %none)\n"                         \
        "  %gi : Tensor = aten::scatter_add(%z, %dim, %result1, %grad0)\n"                                     \
        "  return (%gi, %none)\n")

/* _ctc_loss and ctc_loss, for int[] and Tensor lengths (lt): the first through                                   \
 * _ctc_loss_backward; the second recomputes _ctc_loss on [T, N, C] (an unbatched                                 \
 * input gets N = 1), turns its output gradient into one per sample (mean: over                                   \
 * N and each target length, at least 1; sum: expanded; none: as is) and                                          \
 * squeezes N again for an unbatched input. to_t makes %tlt, the target                                           \
 * lengths as a tensor of dtype %dt. */                                                                           \
#define FBX_GFX_CTC_INTERNAL_(G, id, lt)                                                                          \
  G(id,                                                                                                           \
    "graph(%log_probs : Tensor, %targets : Tensor, %input_lengths : " lt ", %target_lengths : " lt ", "           \
    "%blank : int, %zero_infinity : bool, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, "                \
    "%grad1 : Tensor):\n"                                                                                         \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %gi : Tensor = aten::_ctc_loss_backward(%grad0, %log_probs, %targets, %input_lengths, "                    \
    "%target_lengths, %result0, %result1, %blank, %zero_infinity)\n"                                              \
    "  return (%gi, %none, %none, %none, %none, %none)\n")
#define FBX_GFX_CTC_(G, id, lt, to_t)                                                                             \
  G(id,                                                                                                           \
    "graph(%log_probs : Tensor, %targets : Tensor, %input_lengths : " lt ", %target_lengths : " lt ", "           \
    "%blank : int, %reduction : int, %zero_infinity : bool, %result : Tensor, %grad : Tensor):\n"                 \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %two : int = prim::Constant[value=2]()\n"                                                                  \
    "  %m1 : int = prim::Constant[value=-1]()\n"                                                                  \
    "  %f : bool = prim::Constant[value=0]()\n"                                                                   \
    "  %nd : int = aten::dim(%log_probs)\n"                                                                       \
    "  %unb : bool = aten::eq(%nd, %two)\n"                                                                       \
    "  %lp : Tensor = prim::If(%unb)\n"                                                                           \
    "    block0():\n"                                                                                             \
    "      %u : Tensor = aten::unsqueeze(%log_probs, %one)\n"                                                     \
    "      -> (%u)\n"                                                                                             \
    "    block1():\n"                                                                                             \
    "      -> (%log_probs)\n"                                                                                     \
    "  %nll : Tensor, %alpha : Tensor = aten::_ctc_loss(%lp, %targets, %input_lengths, "                          \
    "%target_lengths, %blank, %zero_infinity)\n"                                                                  \
    "  %n : int = aten::size(%lp, %one)\n"                                                                        \
    "  %mean : bool = aten::eq(%reduction, %one)\n"                                                               \
    "  %gb : Tensor = prim::If(%mean)\n"                                                                          \
    "    block0():\n"                                                                                             \
    "      %dt : int = prim::dtype(%nll)\n"                                                                       \
    to_t                                                                                                          \
    "      %tc : Tensor = aten::clamp_min(%tlt, %one)\n"                                                          \
    "      %q : Tensor = aten::div(%grad, %tc)\n"                                                                 \
    "      %gm : Tensor = aten::div(%q, %n)\n"                                                                    \
    "      -> (%gm)\n"                                                                                            \
    "    block1():\n"                                                                                             \
    "      %sum : bool = aten::eq(%reduction, %two)\n"                                                            \
    "      %gs : Tensor = prim::If(%sum)\n"                                                                       \
    "        block0():\n"                                                                                         \
    "          %ge : Tensor = aten::expand_as(%grad, %nll)\n"                                                     \
    "          -> (%ge)\n"                                                                                        \
    "        block1():\n"                                                                                         \
    "          %fl : int[] = prim::ListConstruct(%m1)\n"                                                          \
    "          %gr : Tensor = aten::reshape(%grad, %fl)\n"                                                        \
    "          -> (%gr)\n"                                                                                        \
    "      -> (%gs)\n"                                                                                            \
    "  %g3 : Tensor = aten::_ctc_loss_backward(%gb, %lp, %targets, %input_lengths, %target_lengths, "             \
    "%nll, %alpha, %blank, %zero_infinity)\n"                                                                     \
    "  %gi : Tensor = prim::If(%unb)\n"                                                                           \
    "    block0():\n"                                                                                             \
    "      %sq : Tensor = aten::squeeze(%g3, %one)\n"                                                             \
    "      -> (%sq)\n"                                                                                            \
    "    block1():\n"                                                                                             \
    "      -> (%g3)\n"                                                                                            \
    "  return (%gi, %none, %none, %none, %none, %none, %none)\n")
#define FBX_GFX_CTC_LIST_ "      %tlt : Tensor = aten::tensor(%target_lengths, %dt, %none, %f)\n"
#define FBX_GFX_CTC_TENSOR_ "      %tlt : Tensor = aten::to(%target_lengths, %dt, %f, %f, %none)\n"

/* G(op_id, ir_text): op_id names the op-table row (FBX_OP_<op_id>). */
#define FBX_GFX_LAE_(e)                                                                                       \
  FBX_GF_(FBX_GF_P2_("other", ""),                                                                              \
          "  %da : Tensor = aten::sub(%self, %result, %i1)\n"                                                   \
          "  %ea : Tensor = aten::" e "(%da)\n"                                                                 \
          "  %ga : Tensor = aten::mul(%grad, %ea)\n"                                                            \
          "  %db : Tensor = aten::sub(%other, %result, %i1)\n"                                                  \
          "  %eb : Tensor = aten::" e "(%db)\n"                                                                 \
          "  %gb : Tensor = aten::mul(%grad, %eb)\n" FBX_GF_SUM_("ga", "self") FBX_GF_SUM_("gb", "other"),      \
          "%g_self, %g_other")

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
  /* index_add: self's gradient is grad; source's the slices index picks, times alpha */                 \
  G(index_add,                                                                                                  \
    "graph(%self : Tensor, %dim : int, %index : Tensor, %source : Tensor, %alpha : Scalar, %result : Tensor, "  \
    "%grad : Tensor):\n"                                                                                         \
    "  %none : NoneType = prim::Constant()\n"                                                                   \
    "  %gs : Tensor = aten::index_select(%grad, %dim, %index)\n"                                                \
    "  %g_src : Tensor = aten::mul(%gs, %alpha)\n"                                                              \
    "  return (%grad, %none, %none, %g_src, %none)\n")                                                          \
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
  /* logaddexp: d/da = e^(a - r), logaddexp2: 2^(a - r) (and the same for b), summed back over broadcast */  \
  G(logaddexp, FBX_GFX_LAE_("exp"))                                                                             \
  G(logaddexp2, FBX_GFX_LAE_("exp2"))                                                                           \
  G(bilinear, "graph(%input1 : Tensor, %input2 : Tensor, %weight : Tensor, %bias : Tensor?, %result : Tensor, " \
              "%grad : Tensor):\n"                                                                              \
              "  %none : NoneType = prim::Constant()\n"                                                         \
              "  %hb : bool = aten::__isnot__(%bias, %none)\n"                                                  \
              "  %g1 : Tensor, %g2 : Tensor, %gw : Tensor, %gb : Tensor? = "                                    \
              "fusebox::bilinear_backward(%grad, %input1, %input2, %weight, %hb)\n"                              \
              "  return (%g1, %g2, %gw, %gb)\n")                                                                \
  /* rrelu in eval: leaky_relu's gradient with the slope (lower + upper) / 2 */                               \
  G(rrelu, "graph(%self : Tensor, %lower : Scalar, %upper : Scalar, %training : bool, %generator : Generator?, " \
           "%result : Tensor, %grad : Tensor):\n"                                                               \
           "  %none : NoneType = prim::Constant()\n"                                                            \
           "  %zero : int = prim::Constant[value=0]()\n"                                                        \
           "  %half : float = prim::Constant[value=0.5]()\n"                                                    \
           "  %m : Tensor = aten::gt(%self, %zero)\n"                                                           \
           "  %s : Scalar = aten::add(%lower, %upper)\n"                                                        \
           "  %gs : Tensor = aten::mul(%grad, %s)\n"                                                            \
           "  %gh : Tensor = aten::mul(%gs, %half)\n"                                                           \
           "  %gi : Tensor = aten::where(%m, %grad, %gh)\n"                                                     \
           "  return (%gi, %none, %none, %none, %none)\n")                                                      \
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
    FBX_GFX_LOSS_TAIL_("%g_self, %g_target, %none, %none"))                                                       \
  /* ---- tile, shrinks, scans ---- */                                                                            \
  G(tile,                                                                                                         \
    "graph(%self : Tensor, %dims : int[], %result : Tensor, %grad : Tensor):\n"                                   \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %sizes : int[] = aten::size(%self)\n"                                                                      \
    "  %gi : Tensor = fusebox::repeat_backward(%grad, %sizes, %dims)\n"                                           \
    "  return (%gi, %none)\n")                                                                                    \
  /* the gradient passes where the input is outside [-lambd, lambd] (NaN too) */                                  \
  FBX_GFX_SHRINK_(G, hardshrink)                                                                                  \
  FBX_GFX_SHRINK_(G, softshrink)                                                                                  \
  /* every output position passes its gradient to the input position it took */                                   \
  FBX_GFX_CUMMAXMIN_(G, cummax)                                                                                   \
  FBX_GFX_CUMMAXMIN_(G, cummin)                                                                                   \
  /* PyTorch's logcumsumexp_backward: the positive and negative parts of the                                      \
   * gradient in log space, each through a reversed logcumsumexp */                                               \
  G(logcumsumexp,                                                                                                 \
    "graph(%self : Tensor, %dim : int, %result : Tensor, %grad : Tensor):\n"                                      \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                 \
    "  %low : float = prim::Constant[value=-3.4028234663852886e+38]()\n"                                          \
    "  %dl : int[] = prim::ListConstruct(%dim)\n"                                                                 \
    "  %ag : Tensor = aten::abs(%grad)\n"                                                                         \
    "  %lag : Tensor = aten::log(%ag)\n"                                                                          \
    "  %cp : Tensor = aten::gt(%grad, %zero)\n"                                                                   \
    "  %lp : Tensor = aten::where(%cp, %lag, %low)\n"                                                             \
    "  %ap : Tensor = aten::sub(%lp, %result, %one)\n"                                                            \
    "  %fp : Tensor = aten::flip(%ap, %dl)\n"                                                                     \
    "  %sp : Tensor = aten::logcumsumexp(%fp, %dim)\n"                                                            \
    "  %rp : Tensor = aten::flip(%sp, %dl)\n"                                                                     \
    "  %xp : Tensor = aten::add(%rp, %self, %one)\n"                                                              \
    "  %op : Tensor = aten::exp(%xp)\n"                                                                           \
    "  %cn : Tensor = aten::lt(%grad, %zero)\n"                                                                   \
    "  %ln : Tensor = aten::where(%cn, %lag, %low)\n"                                                             \
    "  %an : Tensor = aten::sub(%ln, %result, %one)\n"                                                            \
    "  %fn : Tensor = aten::flip(%an, %dl)\n"                                                                     \
    "  %sn : Tensor = aten::logcumsumexp(%fn, %dim)\n"                                                            \
    "  %rn : Tensor = aten::flip(%sn, %dl)\n"                                                                     \
    "  %xn : Tensor = aten::add(%rn, %self, %one)\n"                                                              \
    "  %on : Tensor = aten::exp(%xn)\n"                                                                           \
    "  %gi : Tensor = aten::sub(%op, %on, %one)\n"                                                                \
    "  return (%gi, %none)\n")                                                                                    \
  /* ---- embedding_bag (the padding_idx overload: None is -1, a negative one counts from the end) ---- */        \
  G(embedding_bag,                                                                                                \
    "graph(%weight : Tensor, %indices : Tensor, %offsets : Tensor, %scale_grad_by_freq : bool, "                  \
    "%mode : int, %sparse : bool, %per_sample_weights : Tensor?, %include_last_offset : bool, "                   \
    "%result0 : Tensor, %result1 : Tensor, %result2 : Tensor, %result3 : Tensor, %grad0 : Tensor, "               \
    "%grad1 : Tensor, %grad2 : Tensor, %grad3 : Tensor):\n"                                                       \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                 \
    "  %pad : int = prim::Constant[value=-1]()\n"                                                                 \
    "  %nw : int = aten::size(%weight, %zero)\n"                                                                  \
    "  %gw : Tensor = aten::_embedding_bag_backward(%grad0, %indices, %offsets, %result1, %result2, "             \
    "%result3, %nw, %scale_grad_by_freq, %mode, %sparse, %per_sample_weights, %pad)\n"                            \
    "  %gp : Tensor = aten::_embedding_bag_per_sample_weights_backward(%grad0, %weight, %indices, "               \
    "%offsets, %result1, %mode, %pad)\n"                                                                          \
    "  return (%gw, %none, %none, %none, %none, %none, %gp, %none)\n")                                            \
  G(embedding_bag_padding_idx,                                                                                    \
    "graph(%weight : Tensor, %indices : Tensor, %offsets : Tensor, %scale_grad_by_freq : bool, "                  \
    "%mode : int, %sparse : bool, %per_sample_weights : Tensor?, %include_last_offset : bool, "                   \
    "%padding_idx : int?, %result0 : Tensor, %result1 : Tensor, %result2 : Tensor, "                              \
    "%result3 : Tensor, %grad0 : Tensor, %grad1 : Tensor, %grad2 : Tensor, %grad3 : Tensor):\n"                   \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                 \
    "  %m1 : int = prim::Constant[value=-1]()\n"                                                                  \
    "  %nw : int = aten::size(%weight, %zero)\n"                                                                  \
    "  %isnone : bool = aten::__is__(%padding_idx, %none)\n"                                                      \
    "  %pad : int = prim::If(%isnone)\n"                                                                          \
    "    block0():\n"                                                                                             \
    "      -> (%m1)\n"                                                                                            \
    "    block1():\n"                                                                                             \
    "      %pv : int = prim::unchecked_cast(%padding_idx)\n"                                                      \
    "      %pw : int = aten::add(%pv, %nw)\n"                                                                     \
    "      %pr : int = aten::remainder(%pw, %nw)\n"                                                               \
    "      -> (%pr)\n"                                                                                            \
    "  %gw : Tensor = aten::_embedding_bag_backward(%grad0, %indices, %offsets, %result1, %result2, "             \
    "%result3, %nw, %scale_grad_by_freq, %mode, %sparse, %per_sample_weights, %pad)\n"                            \
    "  %gp : Tensor = aten::_embedding_bag_per_sample_weights_backward(%grad0, %weight, %indices, "               \
    "%offsets, %result1, %mode, %pad)\n"                                                                          \
    "  return (%gw, %none, %none, %none, %none, %none, %gp, %none, %none)\n")                                     \
  /* ---- im2col and col2im: each is the other's adjoint ---- */                                                  \
  G(im2col,                                                                                                       \
    "graph(%self : Tensor, %kernel_size : int[], %dilation : int[], %padding : int[], "                           \
    "%stride : int[], %result : Tensor, %grad : Tensor):\n"                                                       \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %m1 : int = prim::Constant[value=-1]()\n"                                                                  \
    "  %m2 : int = prim::Constant[value=-2]()\n"                                                                  \
    "  %h : int = aten::size(%self, %m2)\n"                                                                       \
    "  %w : int = aten::size(%self, %m1)\n"                                                                       \
    "  %os : int[] = prim::ListConstruct(%h, %w)\n"                                                               \
    "  %gi : Tensor = aten::col2im(%grad, %os, %kernel_size, %dilation, %padding, %stride)\n"                     \
    "  return (%gi, %none, %none, %none, %none)\n")                                                               \
  G(col2im,                                                                                                       \
    "graph(%self : Tensor, %output_size : int[], %kernel_size : int[], %dilation : int[], "                       \
    "%padding : int[], %stride : int[], %result : Tensor, %grad : Tensor):\n"                                     \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %gi : Tensor = aten::im2col(%grad, %kernel_size, %dilation, %padding, %stride)\n"                          \
    "  return (%gi, %none, %none, %none, %none, %none)\n")                                                        \
  /* ---- distances, ranking and embedding losses (the forward's compositions, differentiated) ---- */            \
  G(kl_div,                                                                                                       \
    "graph(%self : Tensor, %target : Tensor, %reduction : int, %log_target : bool, %result : Tensor, "            \
    "%grad : Tensor):\n"                                                                                          \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                 \
    "  %ss : int[] = aten::size(%self)\n"                                                                         \
    "  %ts : int[] = aten::size(%target)\n"                                                                       \
    "  %sizes : int[] = aten::_infer_size(%ss, %ts)\n"                                                            \
    "  %g : Tensor = fusebox::loss_reduction_backward(%grad, %sizes, %reduction)\n"                               \
    "  %gs : Tensor, %gt : Tensor = prim::If(%log_target)\n"                                                      \
    "    block0():\n"                                                                                             \
    "      %et : Tensor = aten::exp(%target)\n"                                                                   \
    "      %eg : Tensor = aten::mul(%et, %g)\n"                                                                   \
    "      %gsl : Tensor = aten::neg(%eg)\n"                                                                      \
    "      %d : Tensor = aten::sub(%target, %self, %one)\n"                                                       \
    "      %d1 : Tensor = aten::add(%d, %one, %one)\n"                                                            \
    "      %gtl : Tensor = aten::mul(%eg, %d1)\n"                                                                 \
    "      -> (%gsl, %gtl)\n"                                                                                     \
    "    block1():\n"                                                                                             \
    "      %tg : Tensor = aten::mul(%target, %g)\n"                                                               \
    "      %gsn : Tensor = aten::neg(%tg)\n"                                                                      \
    "      %lt : Tensor = aten::log(%target)\n"                                                                   \
    "      %z : Tensor = aten::eq(%target, %zero)\n"                                                              \
    "      %lm : Tensor = aten::masked_fill(%lt, %z, %zero)\n"                                                    \
    "      %tt : Tensor = aten::div(%target, %target)\n"                                                          \
    "      %a : Tensor = aten::add(%lm, %tt, %one)\n"                                                             \
    "      %b : Tensor = aten::sub(%a, %self, %one)\n"                                                            \
    "      %gtn : Tensor = aten::mul(%b, %g)\n"                                                                   \
    "      -> (%gsn, %gtn)\n"                                                                                     \
    "  %g_self : Tensor = aten::sum_to_size(%gs, %ss)\n"                                                          \
    "  %g_target : Tensor = aten::sum_to_size(%gt, %ts)\n"                                                        \
    "  return (%g_self, %g_target, %none, %none)\n")                                                              \
  G(pairwise_distance,                                                                                            \
    "graph(%x1 : Tensor, %x2 : Tensor, %p : float, %eps : float, %keepdim : bool, %result : Tensor, "             \
    "%grad : Tensor):\n"                                                                                          \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %m1 : int = prim::Constant[value=-1]()\n"                                                                  \
    "  %d0 : Tensor = aten::sub(%x1, %x2, %one)\n"                                                                \
    "  %d : Tensor = aten::add(%d0, %eps, %one)\n"                                                                \
    "  %dims : int[] = prim::ListConstruct(%m1)\n"                                                                \
    "  %gd : Tensor = fusebox::norm_backward(%grad, %d, %result, %p, %dims, %keepdim)\n"                          \
    "  %s1 : int[] = aten::size(%x1)\n"                                                                           \
    "  %g1 : Tensor = aten::sum_to_size(%gd, %s1)\n"                                                              \
    "  %n : Tensor = aten::neg(%gd)\n"                                                                            \
    "  %s2 : int[] = aten::size(%x2)\n"                                                                           \
    "  %g2 : Tensor = aten::sum_to_size(%n, %s2)\n"                                                               \
    "  return (%g1, %g2, %none, %none, %none)\n")                                                                 \
  /* min(d(a, n), d(p, n)) under swap splits its gradient as aten::min does (half each on a tie) */               \
  G(triplet_margin_loss,                                                                                          \
    "graph(%anchor : Tensor, %positive : Tensor, %negative : Tensor, %margin : float, %p : float, "               \
    "%eps : float, %swap : bool, %reduction : int, %result : Tensor, %grad : Tensor):\n"                          \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                 \
    "  %m1 : int = prim::Constant[value=-1]()\n"                                                                  \
    "  %f : bool = prim::Constant[value=0]()\n"                                                                   \
    "  %two : int = prim::Constant[value=2]()\n"                                                                  \
    "  %dims : int[] = prim::ListConstruct(%m1)\n"                                                                \
    "  %dap0 : Tensor = aten::sub(%anchor, %positive, %one)\n"                                                    \
    "  %dap : Tensor = aten::add(%dap0, %eps, %one)\n"                                                            \
    "  %ndap : Tensor = aten::norm(%dap, %p, %dims, %f)\n"                                                        \
    "  %dan0 : Tensor = aten::sub(%anchor, %negative, %one)\n"                                                    \
    "  %dan : Tensor = aten::add(%dan0, %eps, %one)\n"                                                            \
    "  %ndan : Tensor = aten::norm(%dan, %p, %dims, %f)\n"                                                        \
    "  %pv : Tensor = aten::add(%ndap, %margin, %one)\n"                                                          \
    "  %dneg : Tensor = prim::If(%swap)\n"                                                                        \
    "    block0():\n"                                                                                             \
    "      %dpn0 : Tensor = aten::sub(%positive, %negative, %one)\n"                                              \
    "      %dpn : Tensor = aten::add(%dpn0, %eps, %one)\n"                                                        \
    "      %ndpn : Tensor = aten::norm(%dpn, %p, %dims, %f)\n"                                                    \
    "      %mn : Tensor = aten::min(%ndan, %ndpn)\n"                                                              \
    "      -> (%mn)\n"                                                                                            \
    "    block1():\n"                                                                                             \
    "      -> (%ndan)\n"                                                                                          \
    "  %v : Tensor = aten::sub(%pv, %dneg, %one)\n"                                                               \
    "  %sizes : int[] = aten::size(%v)\n"                                                                         \
    "  %g : Tensor = fusebox::loss_reduction_backward(%grad, %sizes, %reduction)\n"                               \
    "  %act : Tensor = aten::ge(%v, %zero)\n"                                                                     \
    "  %gv : Tensor = aten::where(%act, %g, %zero)\n"                                                             \
    "  %gvn : Tensor = aten::neg(%gv)\n"                                                                          \
    "  %gdap : Tensor = fusebox::norm_backward(%gv, %dap, %ndap, %p, %dims, %f)\n"                                \
    "  %ga : Tensor, %gp : Tensor, %gn : Tensor = prim::If(%swap)\n"                                              \
    "    block0():\n"                                                                                             \
    "      %spn0 : Tensor = aten::sub(%positive, %negative, %one)\n"                                              \
    "      %spn : Tensor = aten::add(%spn0, %eps, %one)\n"                                                        \
    "      %nspn : Tensor = aten::norm(%spn, %p, %dims, %f)\n"                                                    \
    "      %eq : Tensor = aten::eq(%ndan, %nspn)\n"                                                               \
    "      %half : Tensor = aten::div(%gvn, %two)\n"                                                              \
    "      %w : Tensor = aten::where(%eq, %half, %gvn)\n"                                                         \
    "      %gt : Tensor = aten::gt(%ndan, %nspn)\n"                                                               \
    "      %wa : Tensor = aten::masked_fill(%w, %gt, %zero)\n"                                                    \
    "      %lt : Tensor = aten::lt(%ndan, %nspn)\n"                                                               \
    "      %ws : Tensor = aten::masked_fill(%w, %lt, %zero)\n"                                                    \
    "      %gdan : Tensor = fusebox::norm_backward(%wa, %dan, %ndan, %p, %dims, %f)\n"                            \
    "      %gdpn : Tensor = fusebox::norm_backward(%ws, %spn, %nspn, %p, %dims, %f)\n"                            \
    "      %ga1 : Tensor = aten::add(%gdap, %gdan, %one)\n"                                                       \
    "      %gp1 : Tensor = aten::sub(%gdpn, %gdap, %one)\n"                                                       \
    "      %gn0 : Tensor = aten::neg(%gdan)\n"                                                                    \
    "      %gn1 : Tensor = aten::sub(%gn0, %gdpn, %one)\n"                                                        \
    "      -> (%ga1, %gp1, %gn1)\n"                                                                               \
    "    block1():\n"                                                                                             \
    "      %gdan2 : Tensor = fusebox::norm_backward(%gvn, %dan, %ndan, %p, %dims, %f)\n"                          \
    "      %ga2 : Tensor = aten::add(%gdap, %gdan2, %one)\n"                                                      \
    "      %gp2 : Tensor = aten::neg(%gdap)\n"                                                                    \
    "      %gn2 : Tensor = aten::neg(%gdan2)\n"                                                                   \
    "      -> (%ga2, %gp2, %gn2)\n"                                                                               \
    "  %sa : int[] = aten::size(%anchor)\n"                                                                       \
    "  %g_anchor : Tensor = aten::sum_to_size(%ga, %sa)\n"                                                        \
    "  %sp : int[] = aten::size(%positive)\n"                                                                     \
    "  %g_positive : Tensor = aten::sum_to_size(%gp, %sp)\n"                                                      \
    "  %sn : int[] = aten::size(%negative)\n"                                                                     \
    "  %g_negative : Tensor = aten::sum_to_size(%gn, %sn)\n"                                                      \
    "  return (%g_anchor, %g_positive, %g_negative, %none, %none, %none, %none, %none)\n")                        \
  G(margin_ranking_loss,                                                                                          \
    "graph(%input1 : Tensor, %input2 : Tensor, %target : Tensor, %margin : float, %reduction : int, "             \
    "%result : Tensor, %grad : Tensor):\n"                                                                        \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                 \
    "  %nt : Tensor = aten::neg(%target)\n"                                                                       \
    "  %d : Tensor = aten::sub(%input1, %input2, %one)\n"                                                         \
    "  %m : Tensor = aten::mul(%nt, %d)\n"                                                                        \
    "  %v : Tensor = aten::add(%m, %margin, %one)\n"                                                              \
    "  %sizes : int[] = aten::size(%v)\n"                                                                         \
    "  %g : Tensor = fusebox::loss_reduction_backward(%grad, %sizes, %reduction)\n"                               \
    "  %act : Tensor = aten::ge(%v, %zero)\n"                                                                     \
    "  %gv : Tensor = aten::where(%act, %g, %zero)\n"                                                             \
    "  %g1f : Tensor = aten::mul(%gv, %nt)\n"                                                                     \
    "  %s1 : int[] = aten::size(%input1)\n"                                                                       \
    "  %g1 : Tensor = aten::sum_to_size(%g1f, %s1)\n"                                                             \
    "  %g2f : Tensor = aten::neg(%g1f)\n"                                                                         \
    "  %s2 : int[] = aten::size(%input2)\n"                                                                       \
    "  %g2 : Tensor = aten::sum_to_size(%g2f, %s2)\n"                                                             \
    "  %nd : Tensor = aten::neg(%d)\n"                                                                            \
    "  %gtf : Tensor = aten::mul(%gv, %nd)\n"                                                                     \
    "  %st : int[] = aten::size(%target)\n"                                                                       \
    "  %gt : Tensor = aten::sum_to_size(%gtf, %st)\n"                                                             \
    "  return (%g1, %g2, %gt, %none, %none)\n")                                                                   \
  G(soft_margin_loss,                                                                                             \
    "graph(%self : Tensor, %target : Tensor, %reduction : int, %result : Tensor, %grad : Tensor):\n"              \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %nx : Tensor = aten::neg(%self)\n"                                                                         \
    "  %a : Tensor = aten::mul(%nx, %target)\n"                                                                   \
    "  %z : Tensor = aten::exp(%a)\n"                                                                             \
    "  %z1 : Tensor = aten::add(%z, %one, %one)\n"                                                                \
    "  %q : Tensor = aten::div(%z, %z1)\n"                                                                        \
    "  %sizes : int[] = aten::size(%a)\n"                                                                         \
    "  %g : Tensor = fusebox::loss_reduction_backward(%grad, %sizes, %reduction)\n"                               \
    "  %gq : Tensor = aten::mul(%q, %g)\n"                                                                        \
    "  %gs0 : Tensor = aten::mul(%gq, %target)\n"                                                                 \
    "  %gs1 : Tensor = aten::neg(%gs0)\n"                                                                         \
    "  %ss : int[] = aten::size(%self)\n"                                                                         \
    "  %g_self : Tensor = aten::sum_to_size(%gs1, %ss)\n"                                                         \
    "  %gt0 : Tensor = aten::mul(%gq, %self)\n"                                                                   \
    "  %gt1 : Tensor = aten::neg(%gt0)\n"                                                                         \
    "  %ts : int[] = aten::size(%target)\n"                                                                       \
    "  %g_target : Tensor = aten::sum_to_size(%gt1, %ts)\n"                                                       \
    "  return (%g_self, %g_target, %none)\n")                                                                     \
  G(hinge_embedding_loss,                                                                                         \
    "graph(%self : Tensor, %target : Tensor, %margin : float, %reduction : int, %result : Tensor, %grad : Tensor):\n" \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                 \
    "  %m1 : int = prim::Constant[value=-1]()\n"                                                                  \
    "  %ss : int[] = aten::size(%self)\n"                                                                         \
    "  %ts : int[] = aten::size(%target)\n"                                                                       \
    "  %sizes : int[] = aten::_infer_size(%ss, %ts)\n"                                                            \
    "  %g : Tensor = fusebox::loss_reduction_backward(%grad, %sizes, %reduction)\n"                               \
    "  %ms : Tensor = aten::rsub(%self, %margin, %one)\n"                                                         \
    "  %act : Tensor = aten::ge(%ms, %zero)\n"                                                                    \
    "  %n1 : Tensor = aten::ne(%target, %one)\n"                                                                  \
    "  %c : Tensor = aten::logical_and(%n1, %act)\n"                                                              \
    "  %gm : Tensor = aten::where(%c, %g, %zero)\n"                                                               \
    "  %nm1 : Tensor = aten::ne(%target, %m1)\n"                                                                  \
    "  %gx : Tensor = aten::where(%nm1, %g, %zero)\n"                                                             \
    "  %gs : Tensor = aten::sub(%gx, %gm, %one)\n"                                                                \
    "  %g_self : Tensor = aten::sum_to_size(%gs, %ss)\n"                                                          \
    "  return (%g_self, %none, %none, %none)\n")                                                                  \
  /* d cos / d x1 = x2 / den - cos x1 / (|x1|^2 + e), and the same for x2 */                                      \
  G(cosine_embedding_loss,                                                                                        \
    "graph(%input1 : Tensor, %input2 : Tensor, %target : Tensor, %margin : float, %reduction : int, "             \
    "%result : Tensor, %grad : Tensor):\n"                                                                        \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                 \
    "  %m1 : int = prim::Constant[value=-1]()\n"                                                                  \
    "  %f : bool = prim::Constant[value=0]()\n"                                                                   \
    "  %e : float = prim::Constant[value=9.9999999600419720e-13]()\n"                                             \
    "  %td : int = aten::dim(%target)\n"                                                                          \
    "  %dl : int[] = prim::ListConstruct(%td)\n"                                                                  \
    "  %p12 : Tensor = aten::mul(%input1, %input2)\n"                                                             \
    "  %ps : Tensor = aten::sum(%p12, %dl, %f, %none)\n"                                                          \
    "  %q1 : Tensor = aten::mul(%input1, %input1)\n"                                                              \
    "  %s1 : Tensor = aten::sum(%q1, %dl, %f, %none)\n"                                                           \
    "  %ms1 : Tensor = aten::add(%s1, %e, %one)\n"                                                                \
    "  %q2 : Tensor = aten::mul(%input2, %input2)\n"                                                              \
    "  %s2 : Tensor = aten::sum(%q2, %dl, %f, %none)\n"                                                           \
    "  %ms2 : Tensor = aten::add(%s2, %e, %one)\n"                                                                \
    "  %mm : Tensor = aten::mul(%ms1, %ms2)\n"                                                                    \
    "  %den : Tensor = aten::sqrt(%mm)\n"                                                                         \
    "  %cos : Tensor = aten::div(%ps, %den)\n"                                                                    \
    "  %sizes : int[] = aten::size(%cos)\n"                                                                       \
    "  %g : Tensor = fusebox::loss_reduction_backward(%grad, %sizes, %reduction)\n"                               \
    "  %is1 : Tensor = aten::eq(%target, %one)\n"                                                                 \
    "  %gp : Tensor = aten::where(%is1, %g, %zero)\n"                                                             \
    "  %cm : Tensor = aten::sub(%cos, %margin, %one)\n"                                                           \
    "  %act : Tensor = aten::ge(%cm, %zero)\n"                                                                    \
    "  %ism1 : Tensor = aten::eq(%target, %m1)\n"                                                                 \
    "  %c : Tensor = aten::logical_and(%ism1, %act)\n"                                                            \
    "  %gn : Tensor = aten::where(%c, %g, %zero)\n"                                                               \
    "  %gc : Tensor = aten::sub(%gn, %gp, %one)\n"                                                                \
    "  %gcu : Tensor = aten::unsqueeze(%gc, %td)\n"                                                               \
    "  %denu : Tensor = aten::unsqueeze(%den, %td)\n"                                                             \
    "  %cosu : Tensor = aten::unsqueeze(%cos, %td)\n"                                                             \
    "  %msu1 : Tensor = aten::unsqueeze(%ms1, %td)\n"                                                             \
    "  %a1 : Tensor = aten::div(%input2, %denu)\n"                                                                \
    "  %b1 : Tensor = aten::mul(%cosu, %input1)\n"                                                                \
    "  %c1 : Tensor = aten::div(%b1, %msu1)\n"                                                                    \
    "  %d1 : Tensor = aten::sub(%a1, %c1, %one)\n"                                                                \
    "  %gf1 : Tensor = aten::mul(%d1, %gcu)\n"                                                                    \
    "  %z1 : int[] = aten::size(%input1)\n"                                                                       \
    "  %g_input1 : Tensor = aten::sum_to_size(%gf1, %z1)\n"                                                       \
    "  %msu2 : Tensor = aten::unsqueeze(%ms2, %td)\n"                                                             \
    "  %a2 : Tensor = aten::div(%input1, %denu)\n"                                                                \
    "  %b2 : Tensor = aten::mul(%cosu, %input2)\n"                                                                \
    "  %c2 : Tensor = aten::div(%b2, %msu2)\n"                                                                    \
    "  %d2 : Tensor = aten::sub(%a2, %c2, %one)\n"                                                                \
    "  %gf2 : Tensor = aten::mul(%d2, %gcu)\n"                                                                    \
    "  %z2 : int[] = aten::size(%input2)\n"                                                                       \
    "  %g_input2 : Tensor = aten::sum_to_size(%gf2, %z2)\n"                                                       \
    "  return (%g_input1, %g_input2, %none, %none, %none)\n")                                                     \
  /* Stirling's term (full) adds log(target) + 1 / (2 target) to the target's gradient where                      \
   * target > 1 (the gradient is masked, not the derivative: a target of 0 gets NaN, as in PyTorch) */            \
  G(poisson_nll_loss,                                                                                             \
    "graph(%input : Tensor, %target : Tensor, %log_input : bool, %full : bool, %eps : float, "                    \
    "%reduction : int, %result : Tensor, %grad : Tensor):\n"                                                      \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %one : int = prim::Constant[value=1]()\n"                                                                  \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                 \
    "  %ss : int[] = aten::size(%input)\n"                                                                        \
    "  %ts : int[] = aten::size(%target)\n"                                                                       \
    "  %sizes : int[] = aten::_infer_size(%ss, %ts)\n"                                                            \
    "  %g : Tensor = fusebox::loss_reduction_backward(%grad, %sizes, %reduction)\n"                               \
    "  %gi0 : Tensor, %gt0 : Tensor = prim::If(%log_input)\n"                                                     \
    "    block0():\n"                                                                                             \
    "      %ex : Tensor = aten::exp(%input)\n"                                                                    \
    "      %a : Tensor = aten::sub(%ex, %target, %one)\n"                                                         \
    "      %gil : Tensor = aten::mul(%a, %g)\n"                                                                   \
    "      %ni : Tensor = aten::neg(%input)\n"                                                                    \
    "      %gtl : Tensor = aten::mul(%ni, %g)\n"                                                                  \
    "      -> (%gil, %gtl)\n"                                                                                     \
    "    block1():\n"                                                                                             \
    "      %xe : Tensor = aten::add(%input, %eps, %one)\n"                                                        \
    "      %r : Tensor = aten::div(%target, %xe)\n"                                                               \
    "      %a2 : Tensor = aten::rsub(%r, %one, %one)\n"                                                           \
    "      %gin : Tensor = aten::mul(%a2, %g)\n"                                                                  \
    "      %lx : Tensor = aten::log(%xe)\n"                                                                       \
    "      %nl : Tensor = aten::neg(%lx)\n"                                                                       \
    "      %gtn : Tensor = aten::mul(%nl, %g)\n"                                                                  \
    "      -> (%gin, %gtn)\n"                                                                                     \
    "  %gt1 : Tensor = prim::If(%full)\n"                                                                         \
    "    block0():\n"                                                                                             \
    "      %h : float = prim::Constant[value=0.5]()\n"                                                            \
    "      %lt : Tensor = aten::log(%target)\n"                                                                   \
    "      %it : Tensor = aten::reciprocal(%target)\n"                                                            \
    "      %hi : Tensor = aten::mul(%it, %h)\n"                                                                   \
    "      %sd : Tensor = aten::add(%lt, %hi, %one)\n"                                                            \
    "      %le : Tensor = aten::le(%target, %one)\n"                                                              \
    "      %gm : Tensor = aten::masked_fill(%g, %le, %zero)\n"                                                    \
    "      %sg : Tensor = aten::mul(%sd, %gm)\n"                                                                   \
    "      %gtf : Tensor = aten::add(%gt0, %sg, %one)\n"                                                          \
    "      -> (%gtf)\n"                                                                                           \
    "    block1():\n"                                                                                             \
    "      -> (%gt0)\n"                                                                                           \
    "  %g_input : Tensor = aten::sum_to_size(%gi0, %ss)\n"                                                        \
    "  %g_target : Tensor = aten::sum_to_size(%gt1, %ts)\n"                                                       \
    "  return (%g_input, %g_target, %none, %none, %none, %none)\n")                                               \
  G(multi_margin_loss,                                                                                            \
    "graph(%self : Tensor, %target : Tensor, %p : Scalar, %margin : Scalar, %weight : Tensor?, "                  \
    "%reduction : int, %result : Tensor, %grad : Tensor):\n"                                                      \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %gi : Tensor = aten::multi_margin_loss_backward(%grad, %self, %target, %p, %margin, %weight, %reduction)\n" \
    "  return (%gi, %none, %none, %none, %none, %none)\n")                                                        \
  G(multilabel_margin_loss,                                                                                       \
    "graph(%self : Tensor, %target : Tensor, %reduction : int, %result : Tensor, %grad : Tensor):\n"              \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %o : Tensor, %is : Tensor = aten::multilabel_margin_loss_forward(%self, %target, %reduction)\n"            \
    "  %gi : Tensor = aten::multilabel_margin_loss_backward(%grad, %self, %target, %reduction, %is)\n"            \
    "  return (%gi, %none, %none)\n")                                                                             \
  G(multilabel_margin_loss_forward,                                                                               \
    "graph(%self : Tensor, %target : Tensor, %reduction : int, %result0 : Tensor, %result1 : Tensor, "            \
    "%grad0 : Tensor, %grad1 : Tensor):\n"                                                                        \
    "  %none : NoneType = prim::Constant()\n"                                                                     \
    "  %gi : Tensor = aten::multilabel_margin_loss_backward(%grad0, %self, %target, %reduction, %result1)\n"      \
    "  return (%gi, %none, %none)\n")                                                                             \
  FBX_GFX_CTC_INTERNAL_(G, _ctc_loss, "int[]")                                                                    \
  FBX_GFX_CTC_INTERNAL_(G, _ctc_loss_Tensor, "Tensor")                                                            \
  FBX_GFX_CTC_(G, ctc_loss_IntList, "int[]", FBX_GFX_CTC_LIST_)                                                   \
  FBX_GFX_CTC_(G, ctc_loss_Tensor, "Tensor", FBX_GFX_CTC_TENSOR_)                                                  \
  /* pdist: ATen's _pdist_backward, which wants the contiguous self that _pdist_forward saw */                    \
  G(pdist, "graph(%self : Tensor, %p : float, %result : Tensor, %grad : Tensor):\n"                                \
           "  %none : NoneType = prim::Constant()\n"                                                              \
           "  %zero : int = prim::Constant[value=0]()\n"                                                          \
           "  %x : Tensor = aten::contiguous(%self, %zero)\n"                                                     \
           "  %gi : Tensor = aten::_pdist_backward(%grad, %x, %p, %result)\n"                                     \
           "  return (%gi, %none)\n")                                                                             \
  G(_pdist_forward, "graph(%self : Tensor, %p : float, %result : Tensor, %grad : Tensor):\n"                       \
                    "  %none : NoneType = prim::Constant()\n"                                                     \
                    "  %gi : Tensor = aten::_pdist_backward(%grad, %self, %p, %result)\n"                         \
                    "  return (%gi, %none)\n")                                                                    \
  /* the chained products: each factor's gradient from the prefix and suffix products */                         \
  G(linalg_multi_dot, "graph(%tensors : Tensor[], %result : Tensor, %grad : Tensor):\n"                            \
                      "  %gi : Tensor[] = fusebox::multi_dot_backward(%grad, %tensors)\n"                         \
                      "  return (%gi)\n")                                                                         \
  G(chain_matmul, "graph(%matrices : Tensor[], %result : Tensor, %grad : Tensor):\n"                               \
                  "  %gi : Tensor[] = fusebox::multi_dot_backward(%grad, %matrices)\n"                            \
                  "  return (%gi)\n")

#endif
