/* Op table rows that gradient formulas need and models rarely use
 * (sum_to_size, _grad_sum_to_size, ...). Kernels in k_grad.c.
 * (See ops/optable.h for the columns.)
 *
 * aten::_grad_sum_to_size(self, size) undoes broadcasting in a backward
 * graph: None, or a size equal to self's, returns self itself (hence the
 * alias annotation); otherwise self summed to `size` like sum_to_size. The
 * gradient instantiator drops it when the IR types prove it a no-op
 * (autodiff/formula.c). aten::sum_to_size always returns a fresh tensor:
 * PyTorch may return self when nothing is summed, which only an in-place
 * write could tell apart, and this row promises no alias. When they do sum,
 * integral and bool inputs sum to int64, as PyTorch's sum does; an equal
 * size keeps the dtype. */
#ifndef FBX_OPS_LIST_GRAD_H
#define FBX_OPS_LIST_GRAD_H

#define FBX_OPS_GRAD(X)                                                                                        \
  X(grad_sum_to_size, "aten::_grad_sum_to_size(Tensor(a) self, int[]? size) -> Tensor(a)", FBX_OPCAT_REDUCTION, \
    FBX_DT_CUSTOM, FBX_SH_CUSTOM, FBX_OPF_ALIAS, fbx_k_grad_sum_to_size)                                        \
  X(sum_to_size, "aten::sum_to_size(Tensor self, int[] size) -> Tensor", FBX_OPCAT_REDUCTION, FBX_DT_CUSTOM,   \
    FBX_SH_CUSTOM, 0, fbx_k_sum_to_size)

#endif
