/* Op table rows: linear algebra (k_linalg.c). (See ops/optable.h for the
 * columns.) All operands must share one dtype (PyTorch raises otherwise);
 * the result has it. Shapes (FBX_SH_CUSTOM) follow matmul's rules: 1-D
 * operands act as a row (left) or column (right) vector whose dim is
 * dropped, batch dims broadcast; mm is 2-D only, bmm 3-D with equal batch. */
#ifndef FBX_OPS_LIST_LINALG_H
#define FBX_OPS_LIST_LINALG_H

#define FBX_OPS_LINALG(X)                                                                          \
  X(mm, "aten::mm(Tensor self, Tensor mat2) -> Tensor", FBX_OPCAT_LINALG, FBX_DT_SAME,            \
    FBX_SH_CUSTOM, 0, fbx_k_mm)                                                                    \
  X(bmm, "aten::bmm(Tensor self, Tensor mat2) -> Tensor", FBX_OPCAT_LINALG, FBX_DT_SAME,          \
    FBX_SH_CUSTOM, 0, fbx_k_bmm)                                                                   \
  X(matmul, "aten::matmul(Tensor self, Tensor other) -> Tensor", FBX_OPCAT_LINALG, FBX_DT_SAME,   \
    FBX_SH_CUSTOM, 0, fbx_k_matmul)                                                                \
  X(addmm, "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor", \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_addmm)                                  \
  X(linear, "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor",             \
    FBX_OPCAT_LINALG, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_linear)

#endif
