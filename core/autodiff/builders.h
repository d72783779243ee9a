/* Gradient formulas written in C, for what reads badly as IR text
 * (variadic Tensor[] inputs and outputs: cat, stack, chunk, split, einsum;
 * formulas chosen by constant arguments; normalizations and losses).
 * Each has fbx_grad_build's contract for one node. Defined in
 * grad_builders.c. */
#ifndef FBX_AUTODIFF_BUILDERS_H
#define FBX_AUTODIFF_BUILDERS_H
#include "autodiff/autodiff.h"

typedef fbx_status *(*fbx_grad_builder_fn)(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                           fbx_value **grad_inputs);

/* B(op_id, fn): op_id names the op-table row (FBX_OP_<op_id>). */
#define FBX_GRAD_BUILDERS(B)                                                                              \
  B(cat, fbx_grad_cat)                                                                                    \
  B(stack, fbx_grad_stack)                                                                                \
  B(chunk, fbx_grad_split_like)                                                                           \
  B(split_Tensor, fbx_grad_split_like)                                                                    \
  B(split_sizes, fbx_grad_split_like)                                                                     \
  B(split_with_sizes, fbx_grad_split_like)                                                                \
  B(tensor_split_sections, fbx_grad_split_like)                                                           \
  B(tensor_split_indices, fbx_grad_split_like)                                                            \
  B(tensor_split_tensor_indices_or_sections, fbx_grad_split_like)                                         \
  B(unbind_int, fbx_grad_unbind)                                                                          \
  B(broadcast_tensors, fbx_grad_broadcast_tensors)                                                        \
  B(meshgrid, fbx_grad_meshgrid)                                                                          \
  B(meshgrid_indexing, fbx_grad_meshgrid)                                                                 \
  B(var, fbx_grad_var_std)                                                                                \
  B(var_dim, fbx_grad_var_std)                                                                            \
  B(var_correction, fbx_grad_var_std)                                                                     \
  B(std, fbx_grad_var_std)                                                                                \
  B(std_dim, fbx_grad_var_std)                                                                            \
  B(std_correction, fbx_grad_var_std)                                                                     \
  B(var_mean, fbx_grad_var_std)                                                                           \
  B(var_mean_dim, fbx_grad_var_std)                                                                       \
  B(var_mean_correction, fbx_grad_var_std)                                                                \
  B(std_mean, fbx_grad_var_std)                                                                           \
  B(std_mean_dim, fbx_grad_var_std)                                                                       \
  B(std_mean_correction, fbx_grad_var_std)                                                                \
  B(norm_Scalar, fbx_grad_norm)                                                                           \
  B(norm_ScalarOpt_dim, fbx_grad_norm)                                                                    \
  B(frobenius_norm_dim, fbx_grad_norm)                                                                    \
  B(linalg_vector_norm, fbx_grad_norm)                                                                    \
  B(linalg_norm, fbx_grad_linalg_norm)                                                                    \
  B(linalg_norm_ord_str, fbx_grad_linalg_norm)                                                            \
  B(linalg_matrix_norm, fbx_grad_linalg_norm)                                                             \
  B(linalg_matrix_norm_str_ord, fbx_grad_linalg_norm)                                                     \
  B(linear, fbx_grad_linear)                                                                              \
  B(permute, fbx_grad_permute)                                                                            \
  B(binary_cross_entropy_with_logits, fbx_grad_bce_with_logits)                                          \
  B(dropout, fbx_grad_dropout)                                                                            \
  B(batch_norm, fbx_grad_batch_norm)                                                                      \
  B(group_norm, fbx_grad_group_norm)                                                                      \
  B(cdist, fbx_grad_cdist)                                                                                \
  B(cosine_similarity, fbx_grad_cosine_similarity)                                                        \
  B(binary_cross_entropy, fbx_grad_bce)                                                                   \
  B(nll_loss, fbx_grad_nll_loss)                                                                          \
  B(nll_loss_nd, fbx_grad_nll_loss)                                                                       \
  B(cross_entropy_loss, fbx_grad_cross_entropy)                                                           \
  B(einsum, fbx_grad_einsum)

#endif
