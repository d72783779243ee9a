/* Op table rows for PyTorch's *_backward ops that gradient formulas of
 * shape, indexing and reduction ops use. Kernels in k_backward.c.
 * (See ops/optable.h for the columns.)
 *
 * The aten:: rows are PyTorch 1.13's native ops with their exact schemas
 * (torch._C._jit_get_schemas_for_operator), so a backward graph that uses
 * them reads like what PyTorch's autograd runs. The fusebox:: rows are
 * helpers PyTorch keeps in C++ (FunctionsManual.cpp) rather than in its op
 * registry; formulas need them to stay straight-line graphs:
 *
 *   fusebox::sum_backward(grad, sizes, dim, keepdim)
 *       grad of a reduction over `dim` (None or [] = every dim) restored to
 *       `sizes`: the reduced dims put back as size 1 when !keepdim, then
 *       expanded (a view, stride 0 in the reduced dims). PyTorch's
 *       sum_backward.
 */
#ifndef FBX_OPS_LIST_BACKWARD_H
#define FBX_OPS_LIST_BACKWARD_H

#define FBX_OPS_BACKWARD(X)                                                                                          \
  X(select_backward, "aten::select_backward(Tensor grad_output, SymInt[] input_sizes, int dim, int index) -> Tensor",  \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_select_backward)                                            \
  X(slice_backward,                                                                                                  \
    "aten::slice_backward(Tensor grad_output, SymInt[] input_sizes, int dim, SymInt start, SymInt end, SymInt step) "  \
    "-> Tensor",                                                                                                     \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_slice_backward)                                             \
  X(index_select_backward,                                                                                           \
    "aten::index_select_backward(Tensor grad, int[] self_sizes, int dim, Tensor index) -> Tensor", FBX_OPCAT_SHAPE,   \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_index_select_backward)                                                       \
  X(embedding_dense_backward,                                                                                        \
    "aten::embedding_dense_backward(Tensor grad_output, Tensor indices, SymInt num_weights, int padding_idx, "        \
    "bool scale_grad_by_freq) -> Tensor",                                                                            \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_embedding_dense_backward)                                   \
  X(value_selecting_reduction_backward,                                                                              \
    "aten::value_selecting_reduction_backward(Tensor grad, int dim, Tensor indices, int[] sizes, bool keepdim) "     \
    "-> Tensor",                                                                                                     \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_value_selecting_reduction_backward)                         \
  X(fbx_sum_backward, "fusebox::sum_backward(Tensor(a) grad, int[] sizes, int[]? dim, bool keepdim) -> Tensor(a)",   \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_ALIAS, fbx_k_fbx_sum_backward)

#endif
