/* Op table rows that gradient formulas need and models rarely use
 * (sum_to_size, _grad_sum_to_size, ...). Kernels in k_grad.c.
 * (See ops/optable.h for the columns.) */
#ifndef FBX_OPS_LIST_GRAD_H
#define FBX_OPS_LIST_GRAD_H

#define FBX_OPS_GRAD(X)

#endif
