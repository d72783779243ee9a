/* Gradient formulas written in C, for what reads badly as IR text
 * (variadic Tensor[] inputs and outputs: cat, stack, chunk, split, ...).
 * Each has fbx_grad_build's contract for one node. Defined in
 * grad_builders.c. */
#ifndef FBX_AUTODIFF_BUILDERS_H
#define FBX_AUTODIFF_BUILDERS_H
#include "autodiff/autodiff.h"

typedef fbx_status *(*fbx_grad_builder_fn)(const fbx_grad_env *env, const fbx_node *n, fbx_value *const *grad_outputs,
                                           fbx_value **grad_inputs);

/* B(op_id, fn): op_id names the op-table row (FBX_OP_<op_id>). */
#define FBX_GRAD_BUILDERS(B)

#endif
