/* Op table rows: create ops. (See ops/optable.h for the columns.)
 *
 * dtype arguments are ScalarType codes (== fbx_dtype). FBX_DT_ARG: the
 * dtype argument, else float32. FBX_DT_CUSTOM: full infers bool / int64 /
 * float32 from the fill value; arange int64 unless start/end/step has a
 * float (then float32); *_like and new_* default to self's dtype. rand*
 * draw from the run's seeded generator (ctx->rng_state): deterministic per
 * seed and node order, not PyTorch's numbers. eye and eye.m: ones on the
 * main diagonal. linspace/logspace: float32 unless dtype, PyTorch's CPU
 * arithmetic reproduced (see linspace_fill); tril/triu_indices: int64 unless
 * dtype. Kernels: k_create.c. */
#ifndef FBX_OPS_LIST_CREATE_H
#define FBX_OPS_LIST_CREATE_H

#define FBX_CREATE_OPTS_ "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"

#define FBX_OPS_CREATE(X)                                                                                        \
  X(zeros, "aten::zeros(SymInt[] size, *, " FBX_CREATE_OPTS_ ") -> Tensor", FBX_OPCAT_CREATION, FBX_DT_ARG,     \
    FBX_SH_CUSTOM, 0, fbx_k_zeros)                                                                               \
  X(eye, "aten::eye(int n, *, " FBX_CREATE_OPTS_ ") -> Tensor", FBX_OPCAT_CREATION, FBX_DT_ARG,                 \
    FBX_SH_CUSTOM, 0, fbx_k_eye)                                                                                \
  X(eye_m, "aten::eye.m(int n, int m, *, " FBX_CREATE_OPTS_ ") -> Tensor", FBX_OPCAT_CREATION, FBX_DT_ARG,      \
    FBX_SH_CUSTOM, 0, fbx_k_eye)                                                                                \
  X(ones, "aten::ones(SymInt[] size, *, " FBX_CREATE_OPTS_ ") -> Tensor", FBX_OPCAT_CREATION, FBX_DT_ARG,       \
    FBX_SH_CUSTOM, 0, fbx_k_ones)                                                                                \
  X(full, "aten::full(SymInt[] size, Scalar fill_value, *, " FBX_CREATE_OPTS_ ") -> Tensor", FBX_OPCAT_CREATION, \
    FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_full)                                                                 \
  X(empty_memory_format,                                                                                         \
    "aten::empty.memory_format(SymInt[] size, *, " FBX_CREATE_OPTS_ ", MemoryFormat? memory_format=None) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_ARG, FBX_SH_CUSTOM, 0, fbx_k_empty)                                               \
  X(zeros_like, "aten::zeros_like(Tensor self, *, " FBX_CREATE_OPTS_ ", MemoryFormat? memory_format=None) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_zeros_like)                                         \
  X(ones_like, "aten::ones_like(Tensor self, *, " FBX_CREATE_OPTS_ ", MemoryFormat? memory_format=None) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_ones_like)                                          \
  X(full_like,                                                                                                   \
    "aten::full_like(Tensor self, Scalar fill_value, *, " FBX_CREATE_OPTS_ ", MemoryFormat? memory_format=None) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_full_like)                                          \
  X(empty_like, "aten::empty_like(Tensor self, *, " FBX_CREATE_OPTS_ ", MemoryFormat? memory_format=None) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_empty_like)                                         \
  X(new_zeros, "aten::new_zeros(Tensor self, SymInt[] size, *, " FBX_CREATE_OPTS_ ") -> Tensor",                \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_new_zeros)                                        \
  X(new_ones, "aten::new_ones(Tensor self, SymInt[] size, *, " FBX_CREATE_OPTS_ ") -> Tensor",                  \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_new_ones)                                         \
  X(new_full, "aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, " FBX_CREATE_OPTS_ ") -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_new_full)                                         \
  X(new_empty, "aten::new_empty(Tensor self, SymInt[] size, *, " FBX_CREATE_OPTS_ ") -> Tensor",                \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_new_empty)                                        \
  X(arange, "aten::arange(Scalar end, *, " FBX_CREATE_OPTS_ ") -> Tensor", FBX_OPCAT_CREATION, FBX_DT_CUSTOM,   \
    FBX_SH_CUSTOM, 0, fbx_k_arange)                                                                              \
  X(arange_start, "aten::arange.start(Scalar start, Scalar end, *, " FBX_CREATE_OPTS_ ") -> Tensor",            \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_arange_start)                                     \
  X(arange_start_step,                                                                                           \
    "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, " FBX_CREATE_OPTS_ ") -> Tensor",      \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_arange_start_step)                                \
  X(rand, "aten::rand(int[] size, *, " FBX_CREATE_OPTS_ ") -> Tensor", FBX_OPCAT_CREATION, FBX_DT_ARG,          \
    FBX_SH_CUSTOM, FBX_OPF_NONDET, fbx_k_rand)                                                                   \
  X(randn, "aten::randn(int[] size, *, " FBX_CREATE_OPTS_ ") -> Tensor", FBX_OPCAT_CREATION, FBX_DT_ARG,        \
    FBX_SH_CUSTOM, FBX_OPF_NONDET, fbx_k_randn)                                                                  \
  X(rand_like, "aten::rand_like(Tensor self, *, " FBX_CREATE_OPTS_ ", MemoryFormat? memory_format=None) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_NONDET, fbx_k_rand_like)                             \
  X(randn_like, "aten::randn_like(Tensor self, *, " FBX_CREATE_OPTS_ ", MemoryFormat? memory_format=None) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_NONDET, fbx_k_randn_like)                            \
  X(tensor_float, "aten::tensor.float(float t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_tensor)                                           \
  X(tensor_int, "aten::tensor.int(int t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_tensor)                                           \
  X(tensor_bool, "aten::tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_tensor)                                           \
  X(tensor, "aten::tensor(t[] data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_tensor)                                           \
  X(linspace, "aten::linspace(Scalar start, Scalar end, int steps, *, " FBX_CREATE_OPTS_ ") -> Tensor",          \
    FBX_OPCAT_CREATION, FBX_DT_ARG, FBX_SH_CUSTOM, 0, fbx_k_linspace)                                            \
  X(logspace, "aten::logspace(Scalar start, Scalar end, int steps, float base=10., *, " FBX_CREATE_OPTS_ ") -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_ARG, FBX_SH_CUSTOM, 0, fbx_k_logspace)                                            \
  X(tril_indices, "aten::tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_ARG, FBX_SH_CUSTOM, 0, fbx_k_tri_indices)                                         \
  X(triu_indices, "aten::triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor", \
    FBX_OPCAT_CREATION, FBX_DT_ARG, FBX_SH_CUSTOM, 0, fbx_k_tri_indices)

#endif
