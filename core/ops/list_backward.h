/* Op table rows for PyTorch's *_backward ops that gradient formulas of
 * shape, indexing and reduction ops use. Kernels in k_backward.c (the
 * embedding_bag ones next to the forward in k_index.c; norm_backward and
 * the margin and CTC losses' in k_loss.c).
 * (See ops/optable.h for the columns.)
 *
 * The aten:: rows are PyTorch 1.13's native ops with their exact schemas
 * (torch._C._jit_get_schemas_for_operator), so a backward graph that uses
 * them reads like what PyTorch's autograd runs. The fusebox:: rows are
 * helpers PyTorch keeps in C++ (FunctionsManual.cpp) rather than in its op
 * registry; formulas need them to stay straight-line graphs. One deliberate
 * difference: slice_backward's start and end are optional (None as in
 * slice.Tensor), so slice's formula passes its own arguments through.
 *
 * The fusebox:: helpers:
 *
 *   fusebox::sum_backward(grad, sizes, dim, keepdim)
 *       grad of a reduction over `dim` (None or [] = every dim) restored to
 *       `sizes`: the reduced dims put back as size 1 when !keepdim, then
 *       expanded (a view, stride 0 in the reduced dims). PyTorch's
 *       sum_backward.
 *   fusebox::pad_backward(grad, sizes, pad, mode), repeat_backward(grad,
 *   sizes, repeats), roll_backward(grad, shifts, dims),
 *   repeat_interleave_backward(grad, sizes, repeats, dim)
 *       the gradient of an op whose output elements each read one input
 *       element, summed back into an input of `sizes` (all pad modes,
 *       negative constant pads included; repeats shorter than sizes get
 *       leading 1s, as tile pads them). Run-time argument values are
 *       fine: nothing needs constants.
 *   fusebox::norm_backward(grad, self, result, p, dim, keepdim)
 *       the gradient of result = the p-norm of self over `dim` (None = every
 *       dim), with p known at run time only: PyTorch's norm_backward (p 0:
 *       zeros; 1: sign; 2: self * grad / result; inf: split among the
 *       entries whose |self| is the maximum; else sign(self) |self|^(p-1)
 *       grad / result^(p-1)), 0 where result is 0. pairwise_distance's and
 *       triplet_margin_loss's formulas use it (their p is a run-time float).
 *   fusebox::permute_backward(grad, dims)
 *       grad permuted by the inverse of `dims` (a view), dims known at run
 *       time only.
 *   fusebox::cat_backward(grad, tensors, dim)
 *       grad split along dim by the sizes of `tensors` (views; converted to
 *       each tensor's floating dtype where cat promoted), for Tensor[]
 *       inputs that no prim::ListConstruct of the graph builds.
 *   fusebox::loss_reduction_backward(grad, sizes, reduction)
 *       a loss's output gradient put back to the elementwise shape `sizes`:
 *       reduction 0 (none) a copy, 1 (mean) grad / numel broadcast, 2 (sum)
 *       grad broadcast. A new tensor.
 *   fusebox::broadcast_tensors_backward(grads, tensors)
 *       each gradient summed back to its tensor's sizes, for lists that no
 *       prim::ListConstruct of the graph builds.
 *   fusebox::einsum_diag_backward(grad, labels, sizes)
 *       the gradient of an einsum operand whose subscripts `labels` repeat
 *       a letter ("ii", "bii"): zeros of `sizes` with grad (one dim per
 *       distinct letter, size 1 where the forward summed it away) on the
 *       diagonal.
 *   fusebox::linalg_solve_backward(grad, A, B, X) -> (d A, d B)
 *   fusebox::cholesky_backward(grad, L, upper) -> d A
 *       the gradients of linalg_solve and cholesky (k_decomp.c).
 *   fusebox::bilinear_backward(grad, input1, input2, weight, has_bias)
 *       -> (d input1, d input2, d weight, d bias or None): aten::bilinear's.
 *   fusebox::meshgrid_backward(grads, tensors, xy)
 *       grid k's gradient summed over every dim but tensor k's own (k, or
 *       with xy the first two swapped), in tensor k's shape (zeros for a
 *       None gradient), for lists that no prim::ListConstruct builds.
 *   fusebox::block_diag_backward(grad, tensors), cartesian_prod_backward(grad, tensors)
 *       each tensor's block of grad (block_diag), or its column of grad summed
 *       over the other tensors' positions (cartesian_prod), in its shape.
 *   fusebox::combinations_backward(grad, self, r, with_replacement)
 *       each output element's gradient added to the self element it copied.
 *   fusebox::multi_dot_backward(grad, tensors)
 *       (A_1 .. A_i-1)^T grad (A_i+1 .. A_n)^T for each A_i of
 *       linalg_multi_dot/chain_matmul (1-d ends as a row and a column).
 */
#ifndef FBX_OPS_LIST_BACKWARD_H
#define FBX_OPS_LIST_BACKWARD_H

#define FBX_OPS_BACKWARD(X)                                                                                          \
  X(select_backward, "aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, int index) -> Tensor",  \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_select_backward)                                            \
  X(diagonal_backward,                                                                                               \
    "aten::diagonal_backward(Tensor grad_output, SymInt[] input_sizes, int offset, int dim1, int dim2) -> Tensor",    \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_diagonal_backward)                                          \
  X(slice_backward,                                                                                                  \
    "aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt? start, SymInt? end, SymInt step) "\
    "-> Tensor",                                                                                                     \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_slice_backward)                                             \
  X(index_select_backward,                                                                                           \
    "aten::index_select_backward(Tensor grad, int[] self_sizes, int dim, Tensor index) -> Tensor", FBX_OPCAT_SHAPE,   \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_index_select_backward)                                                       \
  X(embedding_dense_backward,                                                                                        \
    "aten::embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, int padding_idx, "        \
    "bool scale_grad_by_freq) -> Tensor",                                                                            \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_embedding_dense_backward)                                   \
  X(_embedding_bag_backward,                                                                                         \
    "aten::_embedding_bag_backward(Tensor grad, Tensor indices, Tensor offsets, Tensor offset2bag, Tensor bag_size, " \
    "Tensor maximum_indices, int num_weights, bool scale_grad_by_freq, int mode, bool sparse, "                      \
    "Tensor? per_sample_weights, int padding_idx=-1) -> Tensor",                                                     \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_embedding_bag_backward)                                    \
  X(_embedding_bag_per_sample_weights_backward,                                                                      \
    "aten::_embedding_bag_per_sample_weights_backward(Tensor grad, Tensor weight, Tensor indices, Tensor offsets, "  \
    "Tensor offset2bag, int mode, int padding_idx=-1) -> Tensor",                                                    \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_embedding_bag_backward)                                    \
  X(value_selecting_reduction_backward,                                                                              \
    "aten::value_selecting_reduction_backward(Tensor grad, int dim, Tensor indices, int[] sizes, bool keepdim) "     \
    "-> Tensor",                                                                                                     \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_value_selecting_reduction_backward)                         \
  X(fbx_sum_backward, "fusebox::sum_backward(Tensor(a) grad, int[] sizes, int[]? dim, bool keepdim) -> Tensor(a)",   \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_ALIAS, fbx_k_fbx_sum_backward)  \
  X(fbx_cumprod_backward, "fusebox::cumprod_backward(Tensor grad, Tensor self, int dim) -> Tensor", FBX_OPCAT_SHAPE, \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_cumprod_backward)                                                       \
  X(fbx_norm_backward,                                                                                               \
    "fusebox::norm_backward(Tensor grad, Tensor self, Tensor result, float p, int[]? dim, bool keepdim) -> Tensor",  \
    FBX_OPCAT_COMPOSITE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_norm_backward)                                     \
  X(multi_margin_loss_backward,                                                                                      \
    "aten::multi_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, Scalar p, Scalar margin, "     \
    "Tensor? weight=None, int reduction=1) -> Tensor",                                                               \
    FBX_OPCAT_COMPOSITE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_multi_margin_loss_backward)                            \
  X(multilabel_margin_loss_backward,                                                                                 \
    "aten::multilabel_margin_loss_backward(Tensor grad_output, Tensor self, Tensor target, int reduction, "          \
    "Tensor is_target) -> Tensor",                                                                                   \
    FBX_OPCAT_COMPOSITE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_multilabel_margin_loss_backward)                       \
  X(_ctc_loss_backward,                                                                                              \
    "aten::_ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, "                  \
    "int[] target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) "       \
    "-> Tensor",                                                                                                     \
    FBX_OPCAT_COMPOSITE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_ctc_loss_backward)                                     \
  X(_ctc_loss_backward_Tensor,                                                                                       \
    "aten::_ctc_loss_backward.Tensor(Tensor grad, Tensor log_probs, Tensor targets, Tensor input_lengths, "          \
    "Tensor target_lengths, Tensor neg_log_likelihood, Tensor log_alpha, int blank, bool zero_infinity=False) "      \
    "-> Tensor",                                                                                                     \
    FBX_OPCAT_COMPOSITE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_ctc_loss_backward)                                     \
  X(fbx_matmul_backward,                                                                                             \
    "fusebox::matmul_backward(Tensor grad, Tensor self, Tensor other) -> (Tensor grad_self, Tensor grad_other)",     \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_matmul_backward)                                      \
  X(fbx_pad_backward, "fusebox::pad_backward(Tensor grad, int[] sizes, int[] pad, str mode) -> Tensor",              \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_pad_backward)                                           \
  X(fbx_repeat_backward, "fusebox::repeat_backward(Tensor grad, int[] sizes, int[] repeats) -> Tensor",              \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_repeat_backward)                                        \
  X(fbx_roll_backward, "fusebox::roll_backward(Tensor grad, int[] shifts, int[] dims) -> Tensor", FBX_OPCAT_SHAPE,   \
    FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_fbx_roll_backward)                                                             \
  X(fbx_repeat_interleave_backward,                                                                                  \
    "fusebox::repeat_interleave_backward(Tensor grad, int[] sizes, int repeats, int? dim) -> Tensor",                \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_repeat_interleave_backward)                             \
  X(fbx_permute_backward, "fusebox::permute_backward(Tensor(a) grad, int[] dims) -> Tensor(a)", FBX_OPCAT_VIEW,      \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_ALIAS, fbx_k_fbx_permute_backward)                                            \
  X(fbx_cat_backward, "fusebox::cat_backward(Tensor(a -> *) grad, Tensor[] tensors, int dim) -> Tensor(a)[]",        \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_ALIAS | FBX_OPF_MUTABLE_OUT, fbx_k_fbx_cat_backward)        \
  X(fbx_loss_reduction_backward,                                                                                     \
    "fusebox::loss_reduction_backward(Tensor grad, int[] sizes, int reduction) -> Tensor", FBX_OPCAT_SHAPE,          \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_loss_reduction_backward)                                                 \
  X(fbx_broadcast_tensors_backward,                                                                                  \
    "fusebox::broadcast_tensors_backward(Tensor?[] grads, Tensor[] tensors) -> Tensor[]", FBX_OPCAT_SHAPE,           \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_MUTABLE_OUT, fbx_k_fbx_broadcast_tensors_backward)                                         \
  X(fbx_einsum_diag_backward,                                                                                        \
    "fusebox::einsum_diag_backward(Tensor grad, str labels, int[] sizes) -> Tensor", FBX_OPCAT_SHAPE,                \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_einsum_diag_backward)                                                   \
  X(fbx_linalg_solve_backward,                                                                                       \
    "fusebox::linalg_solve_backward(Tensor grad, Tensor A, Tensor B, Tensor X) -> (Tensor, Tensor)",                 \
    FBX_OPCAT_COMPOSITE, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_linalg_solve_backward)                           \
  X(fbx_cholesky_backward, "fusebox::cholesky_backward(Tensor grad, Tensor L, bool upper) -> Tensor",                \
    FBX_OPCAT_COMPOSITE, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_fbx_cholesky_backward)                                   \
  X(fbx_bilinear_backward,                                                                                           \
    "fusebox::bilinear_backward(Tensor grad, Tensor input1, Tensor input2, Tensor weight, bool has_bias) -> "        \
    "(Tensor, Tensor, Tensor, Tensor?)", FBX_OPCAT_COMPOSITE, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0,                       \
    fbx_k_fbx_bilinear_backward)                                                                                     \
  X(fbx_meshgrid_backward,                                                                                           \
    "fusebox::meshgrid_backward(Tensor?[] grads, Tensor[] tensors, bool xy) -> Tensor[]", FBX_OPCAT_SHAPE,           \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_MUTABLE_OUT, fbx_k_fbx_meshgrid_backward)                                   \
  X(fbx_block_diag_backward, "fusebox::block_diag_backward(Tensor grad, Tensor[] tensors) -> Tensor[]",               \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_MUTABLE_OUT, fbx_k_fbx_block_diag_backward)                 \
  X(fbx_cartesian_prod_backward, "fusebox::cartesian_prod_backward(Tensor grad, Tensor[] tensors) -> Tensor[]",       \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_MUTABLE_OUT, fbx_k_fbx_cartesian_prod_backward)             \
  X(fbx_combinations_backward,                                                                                       \
    "fusebox::combinations_backward(Tensor grad, Tensor self, int r, bool with_replacement) -> Tensor",              \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_combinations_backward)                                 \
  X(fbx_multi_dot_backward, "fusebox::multi_dot_backward(Tensor grad, Tensor[] tensors) -> Tensor[]",                 \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_MUTABLE_OUT, fbx_k_fbx_multi_dot_backward)

#endif
