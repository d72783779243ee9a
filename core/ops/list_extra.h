/* Op table rows: ops that real scripted models use beyond the core families.
 * (See ops/optable.h for the columns.) Schemas are PyTorch 1.13's.
 *
 * Indexing (k_index.c): gather, scatter, scatter_add, index_add, index (advanced
 * indexing x[idx], x[mask], x[:, idx] with Tensor?[] indices), index_put and
 * index_put_, masked_select, embedding, one_hot, embedding_bag (both
 * overloads; the four outputs PyTorch 1.13's CPU kernel returns, see the
 * kernel). Index tensors are int64 (embedding and embedding_bag also take
 * int32; index/index_put take bool/uint8 masks); negative indices wrap for
 * index and index_put only; out-of-range indices are errors.
 *
 * Misc (k_misc.c): order statistics (kthvalue, median, nanmedian: the sort
 * row's order), data movement (repeat, tile, repeat_interleave, flip,
 * roll, tril/triu, constant_pad_nd/pad, broadcast_tensors; im2col and col2im,
 * F.unfold and F.fold, in k_conv.c), sorting (topk, sort, argsort: stable,
 * NaN sorts as the largest value, as in PyTorch), unique values and slices
 * (k_unique.c: _unique2, _unique, unique_consecutive, unique_dim,
 * unique_dim_consecutive; sorted=False sorts too, each NaN is a value of its
 * own), norms (norm,
 * frobenius_norm, linalg_vector_norm; linalg_norm and linalg_matrix_norm
 * in k_lnorm.c: no singular-value orders), scans (cumprod, cummax, cummin,
 * logcumsumexp: cumsum's scan in k_reduce.c; a NaN stays in cummax/cummin
 * once seen), small linear algebra (dot, mv, outer, baddbmm, einsum with
 * diagonals, cdist; trace, diag, diag_embed, diagflat and the backward ops
 * trace_backward and diag_backward in k_diag.c), binary search
 * (searchsorted, bucketize: k_search.c; int64 or int32 indices),
 * decompositions (k_decomp.c; float32/float64 square matrices in the last
 * two dims, any batch dims: linalg_inv / inverse / linalg_inv_ex, det /
 * linalg_det, slogdet / linalg_slogdet, logdet, linalg_solve (left=True),
 * cholesky / linalg_cholesky, with gradients through
 * fusebox::linalg_solve_backward and fusebox::cholesky_backward),
 * group_norm (k_norm.c), composites built from other rows (glu, rrelu in eval,
 * logaddexp, logaddexp2,
 * bilinear (its gradient fusebox::bilinear_backward),
 * cosine_similarity, log_sigmoid, selu, celu, sgn, hardshrink, softshrink),
 * losses (reduction: 0 none, 1 mean, 2 sum; kl_div, pairwise_distance and
 * the distance, ranking, margin and CTC losses in k_loss.c), pdist and
 * _pdist_forward/_pdist_backward (float and double only, as ATen's kernel)
 * and the chained products linalg_multi_dot and chain_matmul (k_chain.c, on
 * mm's row, their gradient fusebox::multi_dot_backward), and in-place
 * variants (add_, mul_, clamp_, ...: computed out of place by the row they
 * mirror, then copied into self, whose dtype and shape they keep, as
 * PyTorch requires).
 *
 * ATen's internal and legacy overloads (k_compat.c): _softmax, _log_softmax,
 * _unsafe_view, _to_copy, the _cast_* family, native_layer_norm (with mean and
 * rstd), native_dropout (with its mask), nonzero, and
 * bitwise_left/right_shift (the __lshift__/__rshift__ kernels).
 *
 * dtype rules marked FBX_DT_CUSTOM are documented with each kernel. */
#ifndef FBX_OPS_LIST_EXTRA_H
#define FBX_OPS_LIST_EXTRA_H

#define FBX_EX_IDX_ FBX_OPCAT_SHAPE
#define FBX_EX_CMP_ FBX_OPCAT_COMPOSITE
#define FBX_EX_LIN_ FBX_OPCAT_LINALG
#define FBX_EX_INPL_ (FBX_OPF_INPLACE | FBX_OPF_ALIAS)

/* An in-place row: same columns for all of them. */
#define FBX_EX_IP_(X, id, schema) X(id, schema, FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, FBX_EX_INPL_, fbx_k_inplace)

#define FBX_OPS_EXTRA(X)                                                                                         \
  /* ---- indexing (k_index.c) ------------------------------------------------------------------ */          \
  X(gather, "aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", FBX_EX_IDX_, \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_gather)                                                                  \
  X(scatter_src, "aten::scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", FBX_EX_IDX_,     \
    FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_scatter)                                                                   \
  X(scatter_value, "aten::scatter.value(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",            \
    FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_scatter)                                                      \
  X(scatter_add, "aten::scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor", FBX_EX_IDX_,     \
    FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_scatter)                                                                   \
  X(index_add,                                                                                                   \
    "aten::index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",           \
    FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_index_add)                                                   \
  X(index_Tensor, "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME,      \
    FBX_SH_CUSTOM, 0, fbx_k_index)                                                                                \
  X(index_put, "aten::index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor", \
    FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_index_put)                                                    \
  X(index_put_, "aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)", \
    FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_SAME, FBX_EX_INPL_, fbx_k_index_put)                                         \
  X(masked_select, "aten::masked_select(Tensor self, Tensor mask) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME,          \
    FBX_SH_CUSTOM, 0, fbx_k_masked_select)                                                                        \
  X(embedding,                                                                                                    \
    "aten::embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, "         \
    "bool sparse=False) -> Tensor",                                                                               \
    FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_embedding)                                                  \
  X(one_hot, "aten::one_hot(Tensor self, int num_classes=-1) -> Tensor", FBX_EX_IDX_, FBX_DT_LONG, FBX_SH_CUSTOM, \
    0, fbx_k_one_hot)                                                                                             \
  X(embedding_bag,                                                                                               \
    "aten::embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, "         \
    "int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) -> "        \
    "(Tensor, Tensor, Tensor, Tensor)",                                                                          \
    FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_embedding_bag)                                           \
  X(embedding_bag_padding_idx,                                                                                   \
    "aten::embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, "   \
    "int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> "         \
    "(Tensor, Tensor, Tensor, Tensor)",                                                                          \
    FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_embedding_bag)                                           \
  /* ---- data movement (k_misc.c) ------------------------------------------------------------- */           \
  X(repeat, "aten::repeat(Tensor self, SymInt[] repeats) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, \
    fbx_k_repeat)                                                                                                 \
  X(tile, "aten::tile(Tensor self, int[] dims) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_tile) \
  X(repeat_interleave_self_int,                                                                                   \
    "aten::repeat_interleave.self_int(Tensor self, int repeats, int? dim=None, *, int? output_size=None) -> Tensor", \
    FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_repeat_interleave)                                         \
  X(flip, "aten::flip(Tensor self, int[] dims) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_flip)  \
  X(roll, "aten::roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME,          \
    FBX_SH_SAME, 0, fbx_k_roll)                                                                                   \
  X(tril, "aten::tril(Tensor self, int diagonal=0) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_SAME, 0,         \
    fbx_k_tril)                                                                                                   \
  X(triu, "aten::triu(Tensor self, int diagonal=0) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_SAME, 0,         \
    fbx_k_tril)                                                                                                   \
  X(constant_pad_nd, "aten::constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor", FBX_EX_IDX_,     \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_constant_pad_nd)                                                         \
  X(pad, "aten::pad(Tensor self, int[] pad, str mode=\"constant\", float? value=None) -> Tensor", FBX_EX_IDX_,   \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_pad)                                                                     \
  X(broadcast_tensors, "aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]", FBX_OPCAT_VIEW, FBX_DT_SAME,     \
    FBX_SH_CUSTOM, FBX_OPF_ALIAS | FBX_OPF_MUTABLE_OUT, fbx_k_broadcast_tensors)                                 \
  X(infer_size, "aten::_infer_size(int[] a, int[] b) -> int[]", FBX_OPCAT_SCALAR, FBX_DT_NONE, FBX_SH_NONE,      \
    FBX_OPF_MUTABLE_OUT, fbx_k_infer_size)                                                                        \
  X(im2col, "aten::im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor", \
    FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_im2col)                                                    \
  X(col2im,                                                                                                      \
    "aten::col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, int[2] padding, "     \
    "int[2] stride) -> Tensor",                                                                                  \
    FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_col2im)                                                    \
  /* ---- sorting -------------------------------------------------------------------------------- */          \
  X(topk, "aten::topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)", \
    FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_sort)                                                     \
  X(sort, "aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)",       \
    FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_sort)                                                       \
  X(kthvalue,                                                                                                    \
    "aten::kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",     \
    FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_kthvalue)                                                \
  X(median, "aten::median(Tensor self) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_kthvalue)   \
  X(median_dim,                                                                                                  \
    "aten::median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",             \
    FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_kthvalue)                                                \
  X(nanmedian, "aten::nanmedian(Tensor self) -> Tensor", FBX_EX_IDX_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_kthvalue) \
  X(nanmedian_dim,                                                                                               \
    "aten::nanmedian.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",          \
    FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_kthvalue)                                                \
  X(sort_stable,                                                                                                  \
    "aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)", \
    FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_sort)                                                       \
  X(argsort, "aten::argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor", FBX_EX_IDX_, FBX_DT_LONG, \
    FBX_SH_SAME, 0, fbx_k_sort)                                                                                   \
  /* ---- unique values and slices (k_unique.c) -------------------------------------------------- */          \
  X(_unique2,                                                                                                     \
    "aten::_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> "     \
    "(Tensor, Tensor, Tensor)", FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_unique)                        \
  X(_unique, "aten::_unique(Tensor self, bool sorted=True, bool return_inverse=False) -> (Tensor, Tensor)",       \
    FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_unique)                                                    \
  X(unique_consecutive,                                                                                           \
    "aten::unique_consecutive(Tensor self, bool return_inverse=False, bool return_counts=False, int? dim=None) "  \
    "-> (Tensor, Tensor, Tensor)", FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_unique)                     \
  X(unique_dim,                                                                                                   \
    "aten::unique_dim(Tensor self, int dim, bool sorted=True, bool return_inverse=False, bool return_counts=False) " \
    "-> (Tensor, Tensor, Tensor)", FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_unique)                     \
  X(unique_dim_consecutive,                                                                                       \
    "aten::unique_dim_consecutive(Tensor self, int dim, bool return_inverse=False, bool return_counts=False) "   \
    "-> (Tensor, Tensor, Tensor)", FBX_EX_IDX_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_unique)                     \
  /* ---- norms and scans ----------------------------------------------------------------------- */          \
  X(norm_Scalar, "aten::norm.Scalar(Tensor self, Scalar p=2) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_REDUCE, \
    0, fbx_k_norm)                                                                                                \
  X(norm_ScalarOpt_dim, "aten::norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor", \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_norm)                                                       \
  X(frobenius_norm_dim, "aten::frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor",       \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_norm)                                                       \
  X(linalg_vector_norm,                                                                                           \
    "aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "              \
    "ScalarType? dtype=None) -> Tensor",                                                                          \
    FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_REDUCE, 0, fbx_k_norm)                                                     \
  X(linalg_norm,                                                                                                 \
    "aten::linalg_norm(Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, *, "                 \
    "ScalarType? dtype=None) -> Tensor", FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_linalg_norm)        \
  X(linalg_norm_ord_str,                                                                                         \
    "aten::linalg_norm.ord_str(Tensor self, str ord, int[1]? dim=None, bool keepdim=False, *, "                  \
    "ScalarType? dtype=None) -> Tensor", FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_linalg_norm)        \
  X(linalg_matrix_norm,                                                                                          \
    "aten::linalg_matrix_norm(Tensor self, Scalar ord, int[] dim=[-2, -1], bool keepdim=False, *, "              \
    "ScalarType? dtype=None) -> Tensor", FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_linalg_matrix_norm) \
  X(linalg_matrix_norm_str_ord,                                                                                  \
    "aten::linalg_matrix_norm.str_ord(Tensor self, str ord=\"fro\", int[] dim=[-2, -1], bool keepdim=False, *, " \
    "ScalarType? dtype=None) -> Tensor", FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_linalg_matrix_norm) \
  X(cumprod, "aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", FBX_OPCAT_REDUCTION,    \
    FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_cumprod)                                                                 \
  X(cummax, "aten::cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)", FBX_OPCAT_REDUCTION,        \
    FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_cummaxmin)                                                              \
  X(cummin, "aten::cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)", FBX_OPCAT_REDUCTION,        \
    FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_cummaxmin)                                                              \
  X(logcumsumexp, "aten::logcumsumexp(Tensor self, int dim) -> Tensor", FBX_OPCAT_REDUCTION, FBX_DT_SAME,        \
    FBX_SH_SAME, 0, fbx_k_logcumsumexp)                                                                          \
  /* ---- small linear algebra ------------------------------------------------------------------ */          \
  X(dot, "aten::dot(Tensor self, Tensor tensor) -> Tensor", FBX_EX_LIN_, FBX_DT_SAME, FBX_SH_CUSTOM, 0,          \
    fbx_k_dot)                                                                                                    \
  X(mv, "aten::mv(Tensor self, Tensor vec) -> Tensor", FBX_EX_LIN_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_mv)     \
  X(outer, "aten::outer(Tensor self, Tensor vec2) -> Tensor", FBX_EX_LIN_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0,     \
    fbx_k_outer)                                                                                                  \
  X(baddbmm,                                                                                                      \
    "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",     \
    FBX_EX_LIN_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_baddbmm)                                                    \
  X(einsum, "aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor", FBX_EX_LIN_,          \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_einsum)                                                                  \
  X(cdist, "aten::cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor", FBX_EX_LIN_,       \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_cdist)                                                                   \
  /* ---- diagonal matrices and traces (k_diag.c) ------------------------------------------------ */            \
  X(trace, "aten::trace(Tensor self) -> Tensor", FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_trace)      \
  X(trace_backward, "aten::trace_backward(Tensor grad, int[] sizes) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME,        \
    FBX_SH_CUSTOM, 0, fbx_k_trace_backward)                                                                      \
  X(diag, "aten::diag(Tensor self, int diagonal=0) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0,       \
    fbx_k_diag)                                                                                                  \
  X(diag_backward, "aten::diag_backward(Tensor grad, SymInt[] input_sizes, int diagonal) -> Tensor", FBX_EX_CMP_, \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_diag_backward)                                                          \
  X(diag_embed, "aten::diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", FBX_EX_CMP_,  \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_diag_embed)                                                             \
  X(diagflat, "aten::diagflat(Tensor self, int offset=0) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, \
    fbx_k_diagflat)                                                                                              \
  /* ---- binary search (k_search.c) ------------------------------------------------------------- */            \
  X(searchsorted_Tensor,                                                                                         \
    "aten::searchsorted.Tensor(Tensor sorted_sequence, Tensor self, *, bool out_int32=False, bool right=False, " \
    "str? side=None, Tensor? sorter=None) -> Tensor", FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0,              \
    fbx_k_searchsorted)                                                                                          \
  X(searchsorted_Scalar,                                                                                         \
    "aten::searchsorted.Scalar(Tensor sorted_sequence, Scalar self, *, bool out_int32=False, bool right=False, " \
    "str? side=None, Tensor? sorter=None) -> Tensor", FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0,              \
    fbx_k_searchsorted)                                                                                          \
  X(bucketize_Tensor,                                                                                            \
    "aten::bucketize.Tensor(Tensor self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor", \
    FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_bucketize)                                               \
  X(bucketize_Scalar,                                                                                            \
    "aten::bucketize.Scalar(Scalar self, Tensor boundaries, *, bool out_int32=False, bool right=False) -> Tensor", \
    FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_bucketize)                                               \
  /* ---- decompositions and what they give (k_decomp.c) ------------------------------------- */                \
  X(linalg_inv, "aten::linalg_inv(Tensor A) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0,                \
    fbx_k_linalg_inv)                                                                                            \
  X(inverse, "aten::inverse(Tensor self) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0,                   \
    fbx_k_linalg_inv)                                                                                            \
  X(linalg_inv_ex, "aten::linalg_inv_ex(Tensor A, *, bool check_errors=False) -> (Tensor inverse, Tensor info)", \
    FBX_EX_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_linalg_inv)                                              \
  X(linalg_det, "aten::linalg_det(Tensor A) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0,              \
    fbx_k_linalg_det)                                                                                            \
  X(det, "aten::det(Tensor self) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_linalg_det)       \
  X(linalg_slogdet, "aten::linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet)", FBX_EX_CMP_,            \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_linalg_det)                                                             \
  X(slogdet, "aten::slogdet(Tensor self) -> (Tensor sign, Tensor logabsdet)", FBX_EX_CMP_, FBX_DT_SAME,          \
    FBX_SH_CUSTOM, 0, fbx_k_linalg_det)                                                                          \
  X(logdet, "aten::logdet(Tensor self) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0,                   \
    fbx_k_linalg_det)                                                                                            \
  X(linalg_solve, "aten::linalg_solve(Tensor A, Tensor B, *, bool left=True) -> Tensor", FBX_EX_CMP_,            \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_linalg_solve)                                                           \
  X(linalg_cholesky, "aten::linalg_cholesky(Tensor self, *, bool upper=False) -> Tensor", FBX_EX_CMP_,           \
    FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_linalg_cholesky)                                                          \
  X(cholesky, "aten::cholesky(Tensor self, bool upper=False) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME,               \
    FBX_SH_SAME, 0, fbx_k_linalg_cholesky)                                                                       \
  /* ---- composites ------------------------------------------------------------------------------ */        \
  X(glu, "aten::glu(Tensor self, int dim=-1) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_glu)  \
  X(bilinear, "aten::bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor",        \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_bilinear)                                                  \
  X(logaddexp, "aten::logaddexp(Tensor self, Tensor other) -> Tensor", FBX_EX_CMP_, FBX_DT_PROMOTE,              \
    FBX_SH_BROADCAST, 0, fbx_k_logaddexp)                                                                        \
  X(logaddexp2, "aten::logaddexp2(Tensor self, Tensor other) -> Tensor", FBX_EX_CMP_, FBX_DT_PROMOTE,            \
    FBX_SH_BROADCAST, 0, fbx_k_logaddexp)                                                                        \
  X(rrelu,                                                                                                       \
    "aten::rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, "        \
    "Generator? generator=None) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_rrelu)               \
  X(group_norm,                                                                                                   \
    "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "                    \
    "float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor",                                     \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_group_norm)                                                   \
  X(cosine_similarity, "aten::cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor",    \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_cosine_similarity)                                       \
  X(log_sigmoid, "aten::log_sigmoid(Tensor self) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0,           \
    fbx_k_act_extra)                                                                                              \
  X(selu, "aten::selu(Tensor self) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_act_extra)        \
  X(celu, "aten::celu(Tensor self, Scalar alpha=1.) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0,        \
    fbx_k_act_extra)                                                                                              \
  X(sgn, "aten::sgn(Tensor self) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_act_extra)          \
  X(hardshrink, "aten::hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, \
    0, fbx_k_shrink)                                                                                             \
  X(softshrink, "aten::softshrink(Tensor self, Scalar lambd=0.5) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_SAME, \
    0, fbx_k_shrink)                                                                                             \
  /* ---- losses (reduction: 0 none, 1 mean, 2 sum) --------------------------------------------- */           \
  X(mse_loss, "aten::mse_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", FBX_EX_CMP_,              \
    FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_loss)                                                                 \
  X(l1_loss, "aten::l1_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", FBX_EX_CMP_,                \
    FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_loss)                                                                 \
  X(smooth_l1_loss, "aten::smooth_l1_loss(Tensor self, Tensor target, int reduction=1, float beta=1.) -> Tensor", \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_loss)                                                    \
  X(huber_loss, "aten::huber_loss(Tensor self, Tensor target, int reduction=1, float delta=1.) -> Tensor",       \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_loss)                                                    \
  X(binary_cross_entropy,                                                                                         \
    "aten::binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=1) -> Tensor",    \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_bce)                                                        \
  X(binary_cross_entropy_with_logits,                                                                             \
    "aten::binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "                   \
    "Tensor? pos_weight=None, int reduction=1) -> Tensor",                                                        \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_bce)                                                        \
  X(nll_loss,                                                                                                     \
    "aten::nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor", \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_nll_loss)                                                   \
  X(nll_loss_nd,                                                                                                  \
    "aten::nll_loss_nd(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, int ignore_index=-100) -> Tensor", \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_nll_loss)                                                   \
  X(cross_entropy_loss,                                                                                           \
    "aten::cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "                \
    "int ignore_index=-100, float label_smoothing=0.) -> Tensor",                                                 \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_cross_entropy)                                              \
  /* ---- distances, ranking and embedding losses (k_loss.c) --------------------------------- */                \
  X(kl_div, "aten::kl_div(Tensor self, Tensor target, int reduction=1, *, bool log_target=False) -> Tensor",     \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_kl_div)                                                 \
  X(pairwise_distance,                                                                                           \
    "aten::pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, "               \
    "bool keepdim=False) -> Tensor",                                                                             \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_pairwise_distance)                                      \
  X(triplet_margin_loss,                                                                                         \
    "aten::triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1., float p=2., "   \
    "float eps=9.9999999999999995e-07, bool swap=False, int reduction=1) -> Tensor",                             \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_triplet_margin_loss)                                    \
  X(margin_ranking_loss,                                                                                         \
    "aten::margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) "  \
    "-> Tensor",                                                                                                 \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_margin_loss)                                            \
  X(soft_margin_loss, "aten::soft_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor",           \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_margin_loss)                                            \
  X(hinge_embedding_loss,                                                                                        \
    "aten::hinge_embedding_loss(Tensor self, Tensor target, float margin=1., int reduction=1) -> Tensor",        \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_margin_loss)                                            \
  X(cosine_embedding_loss,                                                                                       \
    "aten::cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0., int reduction=1) " \
    "-> Tensor",                                                                                                 \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_cosine_embedding_loss)                                  \
  X(poisson_nll_loss,                                                                                            \
    "aten::poisson_nll_loss(Tensor input, Tensor target, bool log_input, bool full, float eps, int reduction) "  \
    "-> Tensor",                                                                                                 \
    FBX_EX_CMP_, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_poisson_nll_loss)                                       \
  X(multi_margin_loss,                                                                                           \
    "aten::multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, "     \
    "int reduction=1) -> Tensor",                                                                                \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_multi_margin_loss)                                         \
  X(multilabel_margin_loss, "aten::multilabel_margin_loss(Tensor self, Tensor target, int reduction=1) -> Tensor", \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_multilabel_margin_loss)                                    \
  X(multilabel_margin_loss_forward,                                                                              \
    "aten::multilabel_margin_loss_forward(Tensor self, Tensor target, int reduction) -> (Tensor output, "        \
    "Tensor is_target)",                                                                                         \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_multilabel_margin_loss)                                    \
  X(ctc_loss_IntList,                                                                                            \
    "aten::ctc_loss.IntList(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, "       \
    "int blank=0, int reduction=1, bool zero_infinity=False) -> Tensor",                                         \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_ctc_loss)                                                  \
  X(ctc_loss_Tensor,                                                                                             \
    "aten::ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "      \
    "int blank=0, int reduction=1, bool zero_infinity=False) -> Tensor",                                         \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_ctc_loss)                                                  \
  X(_ctc_loss,                                                                                                   \
    "aten::_ctc_loss(Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank=0, " \
    "bool zero_infinity=False) -> (Tensor, Tensor)",                                                             \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_ctc_loss)                                                  \
  X(_ctc_loss_Tensor,                                                                                            \
    "aten::_ctc_loss.Tensor(Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, "     \
    "int blank=0, bool zero_infinity=False) -> (Tensor, Tensor)",                                                \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_ctc_loss)                                                  \
  /* ---- pdist and chained products (k_chain.c) ---------------------------------------------- */            \
  X(pdist, "aten::pdist(Tensor self, float p=2.) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0,         \
    fbx_k_pdist)                                                                                                 \
  X(_pdist_forward, "aten::_pdist_forward(Tensor self, float p=2.) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME,         \
    FBX_SH_CUSTOM, 0, fbx_k_pdist)                                                                               \
  X(_pdist_backward, "aten::_pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor",         \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_pdist_backward)                                            \
  X(linalg_multi_dot, "aten::linalg_multi_dot(Tensor[] tensors) -> Tensor", FBX_EX_LIN_, FBX_DT_SAME,            \
    FBX_SH_CUSTOM, 0, fbx_k_multi_dot)                                                                           \
  X(chain_matmul, "aten::chain_matmul(Tensor[] matrices) -> Tensor", FBX_EX_LIN_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, \
    fbx_k_multi_dot)                                                                                             \
  /* ---- ATen's internal and legacy overloads (k_compat.c) ------------------------------------- */     \
  X(_softmax, "aten::_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", FBX_EX_CMP_, FBX_DT_SAME,    \
    FBX_SH_SAME, 0, fbx_k__softmax)                                                                              \
  X(_log_softmax, "aten::_log_softmax(Tensor self, int dim, bool half_to_float) -> Tensor", FBX_EX_CMP_,         \
    FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k__log_softmax)                                                             \
  X(_unsafe_view, "aten::_unsafe_view(Tensor self, SymInt[] size) -> Tensor", FBX_OPCAT_VIEW, FBX_DT_SAME,       \
    FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k__unsafe_view)                                                        \
  X(_to_copy,                                                                                                    \
    "aten::_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "          \
    "bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",               \
    FBX_OPCAT_CONVERSION, FBX_DT_ARG, FBX_SH_SAME, 0, fbx_k__to_copy)                                            \
  X(_cast_Byte, "aten::_cast_Byte(Tensor self, bool non_blocking=False) -> Tensor", FBX_OPCAT_CONVERSION,        \
    FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k__cast)                                                      \
  X(_cast_Char, "aten::_cast_Char(Tensor self, bool non_blocking=False) -> Tensor", FBX_OPCAT_CONVERSION,        \
    FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k__cast)                                                      \
  X(_cast_Short, "aten::_cast_Short(Tensor self, bool non_blocking=False) -> Tensor", FBX_OPCAT_CONVERSION,      \
    FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k__cast)                                                      \
  X(_cast_Int, "aten::_cast_Int(Tensor self, bool non_blocking=False) -> Tensor", FBX_OPCAT_CONVERSION,          \
    FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k__cast)                                                      \
  X(_cast_Long, "aten::_cast_Long(Tensor self, bool non_blocking=False) -> Tensor", FBX_OPCAT_CONVERSION,        \
    FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k__cast)                                                      \
  X(_cast_Half, "aten::_cast_Half(Tensor self, bool non_blocking=False) -> Tensor", FBX_OPCAT_CONVERSION,        \
    FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k__cast)                                                      \
  X(_cast_Float, "aten::_cast_Float(Tensor self, bool non_blocking=False) -> Tensor", FBX_OPCAT_CONVERSION,      \
    FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k__cast)                                                      \
  X(_cast_Double, "aten::_cast_Double(Tensor self, bool non_blocking=False) -> Tensor", FBX_OPCAT_CONVERSION,    \
    FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_ALIAS, fbx_k__cast)                                                      \
  X(native_layer_norm,                                                                                           \
    "aten::native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, "            \
    "float eps) -> (Tensor, Tensor, Tensor)",                                                                    \
    FBX_EX_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_native_layer_norm)                                         \
  X(native_dropout, "aten::native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor)", FBX_EX_CMP_, \
    FBX_DT_CUSTOM, FBX_SH_SAME, FBX_OPF_NONDET, fbx_k_native_dropout)                                            \
  X(nonzero, "aten::nonzero(Tensor self) -> Tensor", FBX_EX_IDX_, FBX_DT_LONG, FBX_SH_CUSTOM, 0, fbx_k_nonzero)  \
  X(bitwise_left_shift_Tensor, "aten::bitwise_left_shift.Tensor(Tensor self, Tensor other) -> Tensor",           \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_lshift_Tensor)                               \
  X(bitwise_left_shift_Tensor_Scalar,                                                                            \
    "aten::bitwise_left_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor", FBX_OPCAT_BINARY,             \
    FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_lshift_Scalar)                                                 \
  X(bitwise_right_shift_Tensor, "aten::bitwise_right_shift.Tensor(Tensor self, Tensor other) -> Tensor",         \
    FBX_OPCAT_BINARY, FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_rshift_Tensor)                               \
  X(bitwise_right_shift_Tensor_Scalar,                                                                           \
    "aten::bitwise_right_shift.Tensor_Scalar(Tensor self, Scalar other) -> Tensor", FBX_OPCAT_BINARY,            \
    FBX_DT_PROMOTE, FBX_SH_BROADCAST, 0, fbx_k_pw_rshift_Scalar)                                                 \
  /* ---- in-place variants (k_misc.c: fbx_k_inplace) -------------------------------------------- */         \
  FBX_EX_IP_(X, add__Tensor, "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)") \
  FBX_EX_IP_(X, add__Scalar, "aten::add_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)")   \
  FBX_EX_IP_(X, sub__Tensor, "aten::sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)") \
  FBX_EX_IP_(X, sub__Scalar, "aten::sub_.Scalar(Tensor(a!) self, Scalar other, Scalar alpha=1) -> Tensor(a!)")   \
  FBX_EX_IP_(X, mul__Tensor, "aten::mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")                   \
  FBX_EX_IP_(X, mul__Scalar, "aten::mul_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")                   \
  FBX_EX_IP_(X, div__Tensor, "aten::div_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)")                   \
  FBX_EX_IP_(X, div__Scalar, "aten::div_.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)")                   \
  FBX_EX_IP_(X, clamp_, "aten::clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)")       \
  FBX_EX_IP_(X, clamp__Tensor, "aten::clamp_.Tensor(Tensor(a!) self, Tensor? min=None, Tensor? max=None) -> Tensor(a!)") \
  FBX_EX_IP_(X, clamp_min_, "aten::clamp_min_(Tensor(a!) self, Scalar min) -> Tensor(a!)")                       \
  FBX_EX_IP_(X, clamp_max_, "aten::clamp_max_(Tensor(a!) self, Scalar max) -> Tensor(a!)")                       \
  FBX_EX_IP_(X, relu_, "aten::relu_(Tensor(a!) self) -> Tensor(a!)")                                             \
  FBX_EX_IP_(X, sigmoid_, "aten::sigmoid_(Tensor(a!) self) -> Tensor(a!)")                                       \
  FBX_EX_IP_(X, tanh_, "aten::tanh_(Tensor(a!) self) -> Tensor(a!)")                                             \
  FBX_EX_IP_(X, silu_, "aten::silu_(Tensor(a!) self) -> Tensor(a!)")                                             \
  FBX_EX_IP_(X, neg_, "aten::neg_(Tensor(a!) self) -> Tensor(a!)")                                               \
  FBX_EX_IP_(X, exp_, "aten::exp_(Tensor(a!) self) -> Tensor(a!)")                                               \
  FBX_EX_IP_(X, sqrt_, "aten::sqrt_(Tensor(a!) self) -> Tensor(a!)")                                             \
  FBX_EX_IP_(X, pow__Scalar, "aten::pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)")                \
  FBX_EX_IP_(X, scatter__src, "aten::scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)") \
  FBX_EX_IP_(X, scatter__value, "aten::scatter_.value(Tensor(a!) self, int dim, Tensor index, Scalar value) -> Tensor(a!)") \
  FBX_EX_IP_(X, scatter_add_, "aten::scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)") \
  FBX_EX_IP_(X, index_add_,                                                                                      \
             "aten::index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor(a!)") \
  FBX_EX_IP_(X, masked_fill__Tensor, "aten::masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)") \
  FBX_EX_IP_(X, masked_fill__Scalar, "aten::masked_fill_.Scalar(Tensor(a!) self, Tensor mask, Scalar value) -> Tensor(a!)") \
  FBX_EX_IP_(X, addcmul_, "aten::addcmul_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)") \
  FBX_EX_IP_(X, addcdiv_, "aten::addcdiv_(Tensor(a!) self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor(a!)") \
  FBX_EX_IP_(X, leaky_relu_, "aten::leaky_relu_(Tensor(a!) self, Scalar negative_slope=0.01) -> Tensor(a!)")     \
  FBX_EX_IP_(X, hardtanh_, "aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)") \
  FBX_EX_IP_(X, elu_, "aten::elu_(Tensor(a!) self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor(a!)") \
  FBX_EX_IP_(X, gelu_, "aten::gelu_(Tensor(a!) self, *, str approximate=\"none\") -> Tensor(a!)")               \
  FBX_EX_IP_(X, fill__Scalar, "aten::fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)")                 \
  FBX_EX_IP_(X, zero_, "aten::zero_(Tensor(a!) self) -> Tensor(a!)")                                             \
  FBX_EX_IP_(X, copy_, "aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)")

#endif
