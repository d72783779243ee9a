/* Gradient formulas as data: shape ops. Format and rules: formula.c.
 *
 * Views and reshapes send the gradient back with aten::reshape to the
 * input's sizes; selections scatter it into zeros with PyTorch's *_backward
 * ops (ops/list_backward.h). Ops whose formula depends on constant int
 * lists (permute, repeat, roll, pads) and the Tensor[] ops (cat, stack,
 * chunk, split, unbind, broadcast_tensors) are C builders (grad_builders.c). */
#ifndef FBX_AUTODIFF_FORMULAS_SHAPE_H
#define FBX_AUTODIFF_FORMULAS_SHAPE_H

/* %gi = %grad reshaped to %self's sizes */
#define FBX_GFS_RESHAPE_                                \
  "  %none : NoneType = prim::Constant()\n"             \
  "  %sizes : int[] = aten::size(%self)\n"              \
  "  %gi : Tensor = aten::reshape(%grad, %sizes)\n"
#define FBX_GFS_NONE_ "  %none : NoneType = prim::Constant()\n"
/* (values, indices) ops whose values are picked from self along %dim */
#define FBX_GFS_PICKED_                                                                                 \
  "  %none : NoneType = prim::Constant()\n"                                                             \
  "  %true : bool = prim::Constant[value=1]()\n"                                                        \
  "  %sizes : int[] = aten::size(%self)\n"                                                              \
  "  %gi : Tensor = aten::value_selecting_reduction_backward(%grad0, %dim, %result1, %sizes, %true)\n"

/* G(op_id, ir_text): op_id names the op-table row (FBX_OP_<op_id>). */
#define FBX_GRAD_FORMULAS_SHAPE(G)                                                                                  \
  G(view, "graph(%self : Tensor, %size : int[], %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_              \
          "  return (%gi, %none)\n")                                                                                \
  G(view_as, "graph(%self : Tensor, %other : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_         \
             "  return (%gi, %none)\n")                                                                             \
  G(reshape, "graph(%self : Tensor, %shape : int[], %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_          \
             "  return (%gi, %none)\n")                                                                             \
  G(reshape_as, "graph(%self : Tensor, %other : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_      \
                "  return (%gi, %none)\n")                                                                          \
  G(flatten_using_ints,                                                                                             \
    "graph(%self : Tensor, %start_dim : int, %end_dim : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_ \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(squeeze, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_ "  return (%gi)\n")     \
  G(squeeze_dim, "graph(%self : Tensor, %dim : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_          \
                 "  return (%gi, %none)\n")                                                                         \
  G(unsqueeze, "graph(%self : Tensor, %dim : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_            \
               "  return (%gi, %none)\n")                                                                           \
  G(swapaxes,                                                                                                       \
    "graph(%self : Tensor, %axis0 : int, %axis1 : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_          \
    "  %gi : Tensor = aten::transpose(%grad, %axis0, %axis1)\n"                                                     \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(swapdims,                                                                                                       \
    "graph(%self : Tensor, %dim0 : int, %dim1 : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_            \
    "  %gi : Tensor = aten::transpose(%grad, %dim0, %dim1)\n"                                                       \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(movedim_int,                                                                                                    \
    "graph(%self : Tensor, %source : int, %destination : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_   \
    "  %gi : Tensor = aten::movedim(%grad, %destination, %source)\n"                                                \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(movedim_intlist,                                                                                                \
    "graph(%self : Tensor, %source : int[], %destination : int[], %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_ \
    "  %gi : Tensor = aten::movedim(%grad, %destination, %source)\n"                                                \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(moveaxis_int,                                                                                                   \
    "graph(%self : Tensor, %source : int, %destination : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_   \
    "  %gi : Tensor = aten::movedim(%grad, %destination, %source)\n"                                                \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(moveaxis_intlist,                                                                                               \
    "graph(%self : Tensor, %source : int[], %destination : int[], %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_ \
    "  %gi : Tensor = aten::movedim(%grad, %destination, %source)\n"                                                \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(unflatten_int,                                                                                                  \
    "graph(%self : Tensor, %dim : int, %sizes : int[], %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_          \
    "  %in : int[] = aten::size(%self)\n"                                                                           \
    "  %gi : Tensor = aten::reshape(%grad, %in)\n"                                                                  \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(diagonal,                                                                                                       \
    "graph(%self : Tensor, %offset : int, %dim1 : int, %dim2 : int, %result : Tensor, %grad : Tensor):\n"           \
    "  %none : NoneType = prim::Constant()\n"                                                                       \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %gi : Tensor = aten::diagonal_backward(%grad, %sizes, %offset, %dim1, %dim2)\n"                              \
    "  return (%gi, %none, %none, %none)\n")                                                                        \
  /* trace, diag, diag_embed, diagflat (ops/k_diag.c): their backward ops, or the diagonal of grad */               \
  G(trace, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n"                                             \
             "  %sizes : int[] = aten::size(%self)\n"                                                               \
             "  %gi : Tensor = aten::trace_backward(%grad, %sizes)\n"                                               \
             "  return (%gi)\n")                                                                                    \
  G(diag, "graph(%self : Tensor, %diagonal : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_               \
            "  %sizes : int[] = aten::size(%self)\n"                                                                \
            "  %gi : Tensor = aten::diag_backward(%grad, %sizes, %diagonal)\n"                                      \
            "  return (%gi, %none)\n")                                                                              \
  G(diag_embed,                                                                                                     \
    "graph(%self : Tensor, %offset : int, %dim1 : int, %dim2 : int, %result : Tensor, %grad : Tensor):\n"           \
    FBX_GFS_NONE_ "  %gi : Tensor = aten::diagonal(%grad, %offset, %dim1, %dim2)\n"                                 \
    "  return (%gi, %none, %none, %none)\n")                                                                        \
  G(diagflat, "graph(%self : Tensor, %offset : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_             \
                "  %i0 : int = prim::Constant[value=0]()\n"                                                         \
                "  %i1 : int = prim::Constant[value=1]()\n"                                                         \
                "  %d : Tensor = aten::diagonal(%grad, %offset, %i0, %i1)\n"                                        \
                "  %sizes : int[] = aten::size(%self)\n"                                                            \
                "  %gi : Tensor = aten::reshape(%d, %sizes)\n"                                                      \
                "  return (%gi, %none)\n")                                                                          \
  G(transpose_int,                                                                                                  \
    "graph(%self : Tensor, %dim0 : int, %dim1 : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_            \
    "  %gi : Tensor = aten::transpose(%grad, %dim0, %dim1)\n"                                                       \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(t, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n"                                                 \
       "  %gi : Tensor = aten::t(%grad)\n"                                                                          \
       "  return (%gi)\n")                                                                                          \
  G(expand,                                                                                                         \
    "graph(%self : Tensor, %size : int[], %implicit : bool, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_     \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %gi : Tensor = aten::_grad_sum_to_size(%grad, %sizes)\n"                                                     \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(expand_as, "graph(%self : Tensor, %other : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_          \
               "  %sizes : int[] = aten::size(%self)\n"                                                             \
               "  %gi : Tensor = aten::_grad_sum_to_size(%grad, %sizes)\n"                                          \
               "  return (%gi, %none)\n")                                                                           \
  G(contiguous, "graph(%self : Tensor, %memory_format : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_    \
                "  return (%grad, %none)\n")                                                                        \
  G(clone, "graph(%self : Tensor, %memory_format : int?, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_        \
           "  return (%grad, %none)\n")                                                                             \
  G(detach, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_ "  return (%none)\n")        \
  G(select_int,                                                                                                     \
    "graph(%self : Tensor, %dim : int, %index : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_            \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %gi : Tensor = aten::select_backward(%grad, %sizes, %dim, %index)\n"                                         \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(slice_Tensor,                                                                                                   \
    "graph(%self : Tensor, %dim : int, %start : int?, %end : int?, %step : int, %result : Tensor, "                 \
    "%grad : Tensor):\n" FBX_GFS_NONE_                                                                              \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %gi : Tensor = aten::slice_backward(%grad, %sizes, %dim, %start, %end, %step)\n"                             \
    "  return (%gi, %none, %none, %none, %none)\n")                                                                 \
  G(narrow,                                                                                                         \
    "graph(%self : Tensor, %dim : int, %start : int, %length : int, %result : Tensor, %grad : Tensor):\n"           \
    FBX_GFS_NONE_                                                                                                   \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %n : int = aten::size(%self, %dim)\n"                                                                        \
    "  %sp : int = aten::add(%start, %n)\n"                                                                         \
    "  %s0 : int = aten::remainder(%sp, %n)\n"                                                                      \
    "  %e : int = aten::add(%s0, %length)\n"                                                                        \
    "  %one : int = prim::Constant[value=1]()\n"                                                                    \
    "  %gi : Tensor = aten::slice_backward(%grad, %sizes, %dim, %s0, %e, %one)\n"                                   \
    "  return (%gi, %none, %none, %none)\n")                                                                        \
  G(flip, "graph(%self : Tensor, %dims : int[], %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_                 \
          "  %gi : Tensor = aten::flip(%grad, %dims)\n"                                                             \
          "  return (%gi, %none)\n")                                                                                \
  G(tril, "graph(%self : Tensor, %diagonal : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_               \
          "  %gi : Tensor = aten::tril(%grad, %diagonal)\n"                                                         \
          "  return (%gi, %none)\n")                                                                                \
  G(triu, "graph(%self : Tensor, %diagonal : int, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_               \
          "  %gi : Tensor = aten::triu(%grad, %diagonal)\n"                                                         \
          "  return (%gi, %none)\n")                                                                                \
  G(index_select,                                                                                                   \
    "graph(%self : Tensor, %dim : int, %index : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_         \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %gi : Tensor = aten::index_select_backward(%grad, %sizes, %dim, %index)\n"                                   \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(gather,                                                                                                         \
    "graph(%self : Tensor, %dim : int, %index : Tensor, %sparse_grad : bool, %result : Tensor, %grad : Tensor):\n"  \
    FBX_GFS_NONE_                                                                                                   \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %z : Tensor = aten::new_zeros(%grad, %sizes)\n"                                                              \
    "  %gi : Tensor = aten::scatter_add(%z, %dim, %index, %grad)\n"                                                 \
    "  return (%gi, %none, %none, %none)\n")                                                                        \
  G(index_Tensor,                                                                                                   \
    "graph(%self : Tensor, %indices : Tensor?[], %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_                \
    "  %true : bool = prim::Constant[value=1]()\n"                                                                  \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %z : Tensor = aten::new_zeros(%grad, %sizes)\n"                                                              \
    "  %gi : Tensor = aten::index_put(%z, %indices, %grad, %true)\n"                                                \
    "  return (%gi, %none)\n")                                                                                      \
  G(embedding,                                                                                                      \
    "graph(%weight : Tensor, %indices : Tensor, %padding_idx : int, %scale_grad_by_freq : bool, %sparse : bool, "   \
    "%result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_                                                            \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                   \
    "  %nw : int = aten::size(%weight, %zero)\n"                                                                    \
    "  %gi : Tensor = aten::embedding_dense_backward(%grad, %indices, %nw, %padding_idx, %scale_grad_by_freq)\n"    \
    "  return (%gi, %none, %none, %none, %none)\n")                                                                 \
  G(topk,                                                                                                           \
    "graph(%self : Tensor, %k : int, %dim : int, %largest : bool, %sorted : bool, %result0 : Tensor, "              \
    "%result1 : Tensor, %grad0 : Tensor, %grad1 : Tensor):\n" FBX_GFS_PICKED_                                       \
    "  return (%gi, %none, %none, %none, %none)\n")                                                                 \
  G(sort,                                                                                                           \
    "graph(%self : Tensor, %dim : int, %descending : bool, %result0 : Tensor, %result1 : Tensor, %grad0 : Tensor, " \
    "%grad1 : Tensor):\n" FBX_GFS_PICKED_                                                                           \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(sort_stable,                                                                                                    \
    "graph(%self : Tensor, %stable : bool?, %dim : int, %descending : bool, %result0 : Tensor, %result1 : Tensor, " \
    "%grad0 : Tensor, %grad1 : Tensor):\n" FBX_GFS_PICKED_                                                          \
    "  return (%gi, %none, %none, %none)\n")                                                                  \
  /* ops added with the shape family's second batch (ops/list_shape.h) */                                           \
  G(unfold,                                                                                                         \
    "graph(%self : Tensor, %dimension : int, %size : int, %step : int, %result : Tensor, %grad : Tensor):\n"        \
    FBX_GFS_NONE_                                                                                                   \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %gi : Tensor = aten::unfold_backward(%grad, %sizes, %dimension, %size, %step)\n"                             \
    "  return (%gi, %none, %none, %none)\n")                                                                        \
  G(broadcast_to, "graph(%self : Tensor, %size : int[], %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_         \
                  "  %sizes : int[] = aten::size(%self)\n"                                                          \
                  "  %gi : Tensor = aten::_grad_sum_to_size(%grad, %sizes)\n"                                       \
                  "  return (%gi, %none)\n")                                                                        \
  G(atleast_1d, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_ "  return (%gi)\n")  \
  G(atleast_2d, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_ "  return (%gi)\n")  \
  G(atleast_3d, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_RESHAPE_ "  return (%gi)\n")  \
  G(flipud, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n"                                            \
            "  %gi : Tensor = aten::flipud(%grad)\n"                                                                \
            "  return (%gi)\n")                                                                                     \
  G(fliplr, "graph(%self : Tensor, %result : Tensor, %grad : Tensor):\n"                                            \
            "  %gi : Tensor = aten::fliplr(%grad)\n"                                                                \
            "  return (%gi)\n")                                                                                     \
  /* rotated back: -k turns */                                                                                      \
  G(rot90, "graph(%self : Tensor, %k : int, %dims : int[], %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_      \
           "  %nk : int = aten::neg(%k)\n"                                                                          \
           "  %gi : Tensor = aten::rot90(%grad, %nk, %dims)\n"                                                      \
           "  return (%gi, %none, %none)\n")                                                                        \
  /* the filled slices get no gradient; a value tensor gets the sum of the gradient over them (each slice once,   \
     however often index repeats it: the mask of filled positions is itself an index_fill) */                     \
  G(index_fill_int_Scalar,                                                                                          \
    "graph(%self : Tensor, %dim : int, %index : Tensor, %value : Scalar, %result : Tensor, %grad : Tensor):\n"      \
    FBX_GFS_NONE_                                                                                                   \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                   \
    "  %gi : Tensor = aten::index_fill(%grad, %dim, %index, %zero)\n"                                               \
    "  return (%gi, %none, %none, %none)\n")                                                                        \
  G(index_fill_int_Tensor,                                                                                          \
    "graph(%self : Tensor, %dim : int, %index : Tensor, %value : Tensor, %result : Tensor, %grad : Tensor):\n"      \
    FBX_GFS_NONE_                                                                                                   \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                   \
    "  %one : int = prim::Constant[value=1]()\n"                                                                    \
    "  %gi : Tensor = aten::index_fill(%grad, %dim, %index, %zero)\n"                                               \
    "  %z : Tensor = aten::zeros_like(%grad)\n"                                                                     \
    "  %m : Tensor = aten::index_fill(%z, %dim, %index, %one)\n"                                                    \
    "  %gm : Tensor = aten::mul(%grad, %m)\n"                                                                       \
    "  %gv : Tensor = aten::sum(%gm)\n"                                                                             \
    "  return (%gi, %none, %none, %gv)\n")                                                                          \
  /* self: the gradient where mask is false (summed back over broadcast dims); source: the gradient at the        \
     true positions in order, zero-padded to source's size */                                                     \
  G(masked_scatter,                                                                                                 \
    "graph(%self : Tensor, %mask : Tensor, %source : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_    \
    "  %zero : int = prim::Constant[value=0]()\n"                                                                   \
    "  %gm : Tensor = aten::masked_fill(%grad, %mask, %zero)\n"                                                     \
    "  %sizes : int[] = aten::size(%self)\n"                                                                        \
    "  %gi : Tensor = aten::sum_to_size(%gm, %sizes)\n"                                                             \
    "  %sel : Tensor = aten::masked_select(%grad, %mask)\n"                                                         \
    "  %ns : int = aten::numel(%source)\n"                                                                          \
    "  %nk : int = aten::numel(%sel)\n"                                                                             \
    "  %np : int = aten::sub(%ns, %nk)\n"                                                                           \
    "  %pad : int[] = prim::ListConstruct(%zero, %np)\n"                                                            \
    "  %padded : Tensor = aten::constant_pad_nd(%sel, %pad, %zero)\n"                                               \
    "  %ss : int[] = aten::size(%source)\n"                                                                         \
    "  %gs : Tensor = aten::reshape(%padded, %ss)\n"                                                                \
    "  return (%gi, %none, %gs)\n")                                                                                 \
  /* each index's gradient accumulated at its (wrapped) position of the flattened self */                         \
  G(take, "graph(%self : Tensor, %index : Tensor, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_               \
          "  %zero : int = prim::Constant[value=0]()\n"                                                             \
          "  %m1 : int = prim::Constant[value=-1]()\n"                                                              \
          "  %flat : int[] = prim::ListConstruct(%m1)\n"                                                            \
          "  %n : int = aten::numel(%self)\n"                                                                       \
          "  %i1 : Tensor = aten::reshape(%index, %flat)\n"                                                         \
          "  %iw : Tensor = aten::remainder(%i1, %n)\n"                                                             \
          "  %g1 : Tensor = aten::reshape(%grad, %flat)\n"                                                          \
          "  %nl : int[] = prim::ListConstruct(%n)\n"                                                               \
          "  %z : Tensor = aten::new_zeros(%grad, %nl)\n"                                                           \
          "  %acc : Tensor = aten::index_add(%z, %zero, %iw, %g1)\n"                                                \
          "  %sizes : int[] = aten::size(%self)\n"                                                                  \
          "  %gi : Tensor = aten::reshape(%acc, %sizes)\n"                                                          \
          "  return (%gi, %none)\n")                                                                                \
  G(take_along_dim,                                                                                                 \
    "graph(%self : Tensor, %indices : Tensor, %dim : int?, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_      \
    "  %gi : Tensor = fusebox::take_along_dim_backward(%grad, %self, %indices, %dim)\n"                             \
    "  return (%gi, %none, %none)\n")                                                                               \
  G(kron, "graph(%self : Tensor, %other : Tensor, %result : Tensor, %grad : Tensor):\n"                             \
          "  %zero : int = prim::Constant[value=0]()\n"                                                             \
          "  %one : int = prim::Constant[value=1]()\n"                                                              \
          "  %ga : Tensor = fusebox::kron_backward(%grad, %self, %other, %zero)\n"                                  \
          "  %gb : Tensor = fusebox::kron_backward(%grad, %self, %other, %one)\n"                                   \
          "  return (%ga, %gb)\n")                                                                                  \
  /* one helper call per tensor: only those whose gradient is wanted are built (prepend/append may be None) */     \
  G(diff,                                                                                                           \
    "graph(%self : Tensor, %n : int, %dim : int, %prepend : Tensor?, %append : Tensor?, %result : Tensor, "         \
    "%grad : Tensor):\n" FBX_GFS_NONE_                                                                              \
    "  %p0 : int = prim::Constant[value=0]()\n"                                                                     \
    "  %p1 : int = prim::Constant[value=1]()\n"                                                                     \
    "  %p2 : int = prim::Constant[value=2]()\n"                                                                     \
    "  %gi : Tensor = fusebox::diff_backward(%grad, %self, %n, %dim, %prepend, %append, %p0)\n"                     \
    "  %gp : Tensor = fusebox::diff_backward(%grad, %self, %n, %dim, %prepend, %append, %p1)\n"                     \
    "  %ga : Tensor = fusebox::diff_backward(%grad, %self, %n, %dim, %prepend, %append, %p2)\n"                     \
    "  return (%gi, %none, %none, %gp, %ga)\n")                                                                     \
  /* hstack, vstack, dstack, column_stack: each tensor's slice of the gradient, in its own shape */               \
  G(hstack, "graph(%tensors : Tensor[], %result : Tensor, %grad : Tensor):\n"                                       \
            "  %op : str = prim::Constant[value=\"hstack\"]()\n"                                                    \
            "  %gi : Tensor[] = fusebox::stack_like_backward(%grad, %tensors, %op)\n"                               \
            "  return (%gi)\n")                                                                                     \
  G(vstack, "graph(%tensors : Tensor[], %result : Tensor, %grad : Tensor):\n"                                       \
            "  %op : str = prim::Constant[value=\"vstack\"]()\n"                                                    \
            "  %gi : Tensor[] = fusebox::stack_like_backward(%grad, %tensors, %op)\n"                               \
            "  return (%gi)\n")                                                                                     \
  G(dstack, "graph(%tensors : Tensor[], %result : Tensor, %grad : Tensor):\n"                                       \
            "  %op : str = prim::Constant[value=\"dstack\"]()\n"                                                    \
            "  %gi : Tensor[] = fusebox::stack_like_backward(%grad, %tensors, %op)\n"                               \
            "  return (%gi)\n")                                                                                     \
  G(column_stack, "graph(%tensors : Tensor[], %result : Tensor, %grad : Tensor):\n"                                 \
                  "  %op : str = prim::Constant[value=\"column_stack\"]()\n"                                        \
                  "  %gi : Tensor[] = fusebox::stack_like_backward(%grad, %tensors, %op)\n"                         \
                  "  return (%gi)\n")                                                                               \
  /* block_diag: each tensor's block; cartesian_prod: each tensor's column summed over the others' positions */    \
  G(block_diag, "graph(%tensors : Tensor[], %result : Tensor, %grad : Tensor):\n"                                  \
                "  %gi : Tensor[] = fusebox::block_diag_backward(%grad, %tensors)\n"                               \
                "  return (%gi)\n")                                                                                \
  G(cartesian_prod, "graph(%tensors : Tensor[], %result : Tensor, %grad : Tensor):\n"                              \
                    "  %gi : Tensor[] = fusebox::cartesian_prod_backward(%grad, %tensors)\n"                       \
                    "  return (%gi)\n")                                                                            \
  G(combinations,                                                                                                   \
    "graph(%self : Tensor, %r : int, %with_replacement : bool, %result : Tensor, %grad : Tensor):\n" FBX_GFS_NONE_  \
    "  %gi : Tensor = fusebox::combinations_backward(%grad, %self, %r, %with_replacement)\n"                        \
    "  return (%gi, %none, %none)\n")                                                                              \
  /* atleast_*d.Sequence: each gradient reshaped to its tensor's sizes */                                            \
  G(atleast_1d_Sequence, "graph(%tensors : Tensor[], %result : Tensor[], %grad : Tensor[]):\n"                      \
                         "  %gi : Tensor[] = fusebox::reshape_each_backward(%grad, %tensors)\n"                     \
                         "  return (%gi)\n")                                                                        \
  G(atleast_2d_Sequence, "graph(%tensors : Tensor[], %result : Tensor[], %grad : Tensor[]):\n"                      \
                         "  %gi : Tensor[] = fusebox::reshape_each_backward(%grad, %tensors)\n"                     \
                         "  return (%gi)\n")                                                                        \
  G(atleast_3d_Sequence, "graph(%tensors : Tensor[], %result : Tensor[], %grad : Tensor[]):\n"                      \
                         "  %gi : Tensor[] = fusebox::reshape_each_backward(%grad, %tensors)\n"                     \
                         "  return (%gi)\n")                                                                        \
  /* hsplit, vsplit, dsplit: the pieces' gradients concatenated along the split dim (hsplit: 1, or 0 for 1-d) */   \
  G(hsplit_int, "graph(%self : Tensor, %sections : int, %result : Tensor[], %grad : Tensor[]):\n" FBX_GFS_NONE_     \
                "  %one : int = prim::Constant[value=1]()\n"                                                        \
                "  %nd : int = aten::dim(%self)\n"                                                                  \
                "  %nd1 : int = aten::sub(%nd, %one)\n"                                                             \
                "  %d : int = prim::min(%nd1, %one)\n"                                                              \
                "  %gi : Tensor = aten::cat(%grad, %d)\n"                                                           \
                "  return (%gi, %none)\n")                                                                          \
  G(hsplit_array, "graph(%self : Tensor, %indices : int[], %result : Tensor[], %grad : Tensor[]):\n" FBX_GFS_NONE_  \
                  "  %one : int = prim::Constant[value=1]()\n"                                                      \
                  "  %nd : int = aten::dim(%self)\n"                                                                \
                  "  %nd1 : int = aten::sub(%nd, %one)\n"                                                           \
                  "  %d : int = prim::min(%nd1, %one)\n"                                                            \
                  "  %gi : Tensor = aten::cat(%grad, %d)\n"                                                         \
                  "  return (%gi, %none)\n")                                                                        \
  G(vsplit_int, "graph(%self : Tensor, %sections : int, %result : Tensor[], %grad : Tensor[]):\n" FBX_GFS_NONE_     \
                "  %d : int = prim::Constant[value=0]()\n"                                                          \
                "  %gi : Tensor = aten::cat(%grad, %d)\n"                                                           \
                "  return (%gi, %none)\n")                                                                          \
  G(vsplit_array, "graph(%self : Tensor, %indices : int[], %result : Tensor[], %grad : Tensor[]):\n" FBX_GFS_NONE_  \
                  "  %d : int = prim::Constant[value=0]()\n"                                                        \
                  "  %gi : Tensor = aten::cat(%grad, %d)\n"                                                         \
                  "  return (%gi, %none)\n")                                                                        \
  G(dsplit_int, "graph(%self : Tensor, %sections : int, %result : Tensor[], %grad : Tensor[]):\n" FBX_GFS_NONE_     \
                "  %d : int = prim::Constant[value=2]()\n"                                                          \
                "  %gi : Tensor = aten::cat(%grad, %d)\n"                                                           \
                "  return (%gi, %none)\n")                                                                          \
  G(dsplit_array, "graph(%self : Tensor, %indices : int[], %result : Tensor[], %grad : Tensor[]):\n" FBX_GFS_NONE_  \
                  "  %d : int = prim::Constant[value=2]()\n"                                                        \
                  "  %gi : Tensor = aten::cat(%grad, %d)\n"                                                         \
                  "  return (%gi, %none)\n")

#endif
