/* Op table rows for PyTorch's *_backward ops that gradient formulas of
 * shape, indexing and normalization ops use (select_backward,
 * slice_backward, index_select_backward, embedding_backward, ...). Kernels
 * in k_backward.c. (See ops/optable.h for the columns.) */
#ifndef FBX_OPS_LIST_BACKWARD_H
#define FBX_OPS_LIST_BACKWARD_H

#define FBX_OPS_BACKWARD(X)

#endif
