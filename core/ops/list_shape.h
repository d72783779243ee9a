/* Op table rows: shape ops. (See ops/optable.h for the columns.)
 *
 * Views (FBX_OPCAT_VIEW + FBX_OPF_ALIAS) share their input's storage with
 * PyTorch's strides and storage offsets; reshape, flatten and contiguous
 * alias when they can and copy otherwise, as in PyTorch. chunk/split/unbind
 * and meshgrid return a fresh list (FBX_OPF_MUTABLE_OUT) of views. Schemas are torch
 * 1.13's: split.Tensor takes an int, split.sizes and split_with_sizes an
 * int[] (TorchScript emits split.sizes for x.split([..]); 1.13's
 * overload-less aten::split has the same signature and is left out, since
 * resolution could never pick it). Kernels: k_view.c,
 * k_shape.c (size, dim, numel, cat, stack, index_select), k_create.c
 * (clone, which shares the *_like layout rule).
 *
 * Also: unfold (a view, as PyTorch's), broadcast_to, atleast_{1,2,3}d
 * (self itself when it has the dims, else a view; .Sequence a list),
 * tensor_split and h/v/dsplit (lists of views, cut with slice's clamping)
 * in k_view.c; h/v/dstack, column_stack, flipud, fliplr, rot90 (flips keep
 * the input's layout, as PyTorch's; rot90 k = 1, 3 is a transposed view of
 * the flipped copy), diff, kron, block_diag, cartesian_prod (a single
 * tensor comes back itself, as PyTorch's), combinations, channel_shuffle (an
 * empty input comes back as a view of itself, as PyTorch's: both are
 * rows that may alias),
 * unfold_backward and the gradient helpers
 * fusebox::{diff,kron,stack_like,reshape_each}_backward in k_shape.c; count_nonzero,
 * argwhere (column-major [N, ndim], as PyTorch's CPU nonzero), take,
 * take_along_dim, index_fill, masked_scatter and
 * fusebox::take_along_dim_backward in k_index.c. Their .out and in-place
 * overloads are not rows. */
#ifndef FBX_OPS_LIST_SHAPE_H
#define FBX_OPS_LIST_SHAPE_H

#define FBX_SHAPE_VIEW_ (FBX_OPF_ALIAS)
#define FBX_SHAPE_LIST_ (FBX_OPF_ALIAS | FBX_OPF_MUTABLE_OUT)

#define FBX_OPS_SHAPE(X)                                                                                       \
  X(view, "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME,             \
    FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_view)                                                                \
  X(view_dtype, "aten::view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)", FBX_OPCAT_VIEW,           \
    FBX_DT_ARG, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_view_dtype)                                              \
  X(view_as, "aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME,        \
    FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_view_as)                                                             \
  X(reshape, "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME,      \
    FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_reshape)                                                             \
  X(reshape_as, "aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME,  \
    FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_view_as)                                                             \
  X(flatten_using_ints, "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)", \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_flatten)                                \
  X(squeeze, "aten::squeeze(Tensor(a) self) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM,       \
    FBX_SHAPE_VIEW_, fbx_k_squeeze)                                                                            \
  X(squeeze_dim, "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME,     \
    FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_squeeze_dim)                                                         \
  X(unsqueeze, "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME,         \
    FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_unsqueeze)                                                           \
  X(transpose_int, "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", FBX_OPCAT_VIEW,   \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_transpose)                                              \
  X(permute, "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME,          \
    FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_permute)                                                             \
  X(swapaxes, "aten::swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)", FBX_OPCAT_VIEW,          \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_transpose)                                              \
  X(swapdims, "aten::swapdims(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", FBX_OPCAT_VIEW,             \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_transpose)                                              \
  X(movedim_int, "aten::movedim.int(Tensor(a) self, int source, int destination) -> Tensor(a)",              \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_movedim)                                \
  X(movedim_intlist, "aten::movedim.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)",  \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_movedim)                                \
  X(moveaxis_int, "aten::moveaxis.int(Tensor(a) self, int source, int destination) -> Tensor(a)",            \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_movedim)                                \
  X(moveaxis_intlist, "aten::moveaxis.intlist(Tensor(a) self, int[] source, int[] destination) -> Tensor(a)", \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_movedim)                                \
  X(unflatten_int, "aten::unflatten.int(Tensor(a) self, int dim, int[] sizes) -> Tensor(a)", FBX_OPCAT_VIEW, \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_unflatten)                                              \
  X(diagonal, "aten::diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1) -> Tensor(a)",           \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_diagonal)                               \
  X(t, "aten::t(Tensor(a) self) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_,  \
    fbx_k_t)                                                                                                   \
  X(expand, "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)",              \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_expand)                                 \
  X(expand_as, "aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME,    \
    FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_expand_as)                                                           \
  X(contiguous, "aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)",            \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_SAME, FBX_SHAPE_VIEW_, fbx_k_contiguous)                               \
  X(detach, "aten::detach(Tensor(a) self) -> Tensor(a)", FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_SAME,           \
    FBX_SHAPE_VIEW_, fbx_k_detach)                                                                             \
  X(slice_Tensor,                                                                                              \
    "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)", \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_slice)                                  \
  X(select_int, "aten::select.int(Tensor(a) self, int dim, int index) -> Tensor(a)", FBX_OPCAT_VIEW,         \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_select)                                                 \
  X(narrow, "aten::narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)", FBX_OPCAT_VIEW,     \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_narrow)                                                 \
  X(chunk, "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", FBX_OPCAT_VIEW,         \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_chunk)                                                  \
  X(split_Tensor, "aten::split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]",       \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_split)                                  \
  X(split_sizes, "aten::split.sizes(Tensor(a -> *) self, int[] split_size, int dim=0) -> Tensor(a)[]",       \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_split_sizes)                            \
  X(split_with_sizes,                                                                                          \
    "aten::split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]",               \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_split_sizes)                            \
  X(unbind_int, "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", FBX_OPCAT_VIEW,           \
    FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_unbind)                                                 \
  X(meshgrid, "aten::meshgrid(Tensor[] tensors) -> Tensor[]", FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM,      \
    FBX_SHAPE_LIST_, fbx_k_meshgrid)                                                                           \
  X(meshgrid_indexing, "aten::meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]",             \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_meshgrid)                               \
  X(clone, "aten::clone(Tensor self, *, MemoryFormat? memory_format=None) -> Tensor", FBX_OPCAT_SHAPE,       \
    FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_clone)                                                                  \
  X(size, "aten::size(Tensor self) -> int[]", FBX_OPCAT_SHAPE, FBX_DT_NONE, FBX_SH_NONE,                     \
    FBX_OPF_MUTABLE_OUT, fbx_k_size)                                                                           \
  X(size_int, "aten::size.int(Tensor self, int dim) -> int", FBX_OPCAT_SHAPE, FBX_DT_NONE, FBX_SH_NONE, 0,   \
    fbx_k_size_int)                                                                                            \
  X(dim, "aten::dim(Tensor self) -> int", FBX_OPCAT_SHAPE, FBX_DT_NONE, FBX_SH_NONE, 0, fbx_k_dim)           \
  X(numel, "aten::numel(Tensor self) -> int", FBX_OPCAT_SHAPE, FBX_DT_NONE, FBX_SH_NONE, 0, fbx_k_numel)     \
  X(cat, "aten::cat(Tensor[] tensors, int dim=0) -> Tensor", FBX_OPCAT_SHAPE, FBX_DT_PROMOTE, FBX_SH_CUSTOM, \
    0, fbx_k_cat)                                                                                              \
  X(stack, "aten::stack(Tensor[] tensors, int dim=0) -> Tensor", FBX_OPCAT_SHAPE, FBX_DT_PROMOTE,            \
    FBX_SH_CUSTOM, 0, fbx_k_stack)                                                                             \
  X(index_select, "aten::index_select(Tensor self, int dim, Tensor index) -> Tensor",                          \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_index_select)                                        \
  X(unfold, "aten::unfold(Tensor(a) self, int dimension, int size, int step) -> Tensor(a)",                    \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_unfold)                                 \
  X(broadcast_to, "aten::broadcast_to(Tensor(a) self, int[] size) -> Tensor(a)",                               \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_broadcast_to)                           \
  X(atleast_1d, "aten::atleast_1d(Tensor self) -> Tensor",                                                     \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_atleast)                                \
  X(atleast_1d_Sequence, "aten::atleast_1d.Sequence(Tensor[] tensors) -> Tensor[]",                            \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_atleast_seq)                            \
  X(atleast_2d, "aten::atleast_2d(Tensor self) -> Tensor",                                                     \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_atleast)                                \
  X(atleast_2d_Sequence, "aten::atleast_2d.Sequence(Tensor[] tensors) -> Tensor[]",                            \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_atleast_seq)                            \
  X(atleast_3d, "aten::atleast_3d(Tensor self) -> Tensor",                                                     \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_atleast)                                \
  X(atleast_3d_Sequence, "aten::atleast_3d.Sequence(Tensor[] tensors) -> Tensor[]",                            \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_atleast_seq)                            \
  X(tensor_split_sections, "aten::tensor_split.sections(Tensor(a -> *) self, int sections, int dim=0) -> Tensor(a)[]",\
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_tensor_split)                           \
  X(tensor_split_indices, "aten::tensor_split.indices(Tensor(a -> *) self, int[] indices, int dim=0) -> Tensor(a)[]",\
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_tensor_split)                           \
  X(tensor_split_tensor_indices_or_sections, "aten::tensor_split.tensor_indices_or_sections(Tensor(a -> *) self, Tensor tensor_indices_or_sections, int dim=0) -> Tensor(a)[]",\
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_tensor_split)                           \
  X(hsplit_int, "aten::hsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]",                          \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_hvdsplit)                               \
  X(hsplit_array, "aten::hsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]",                     \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_hvdsplit)                               \
  X(vsplit_int, "aten::vsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]",                          \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_hvdsplit)                               \
  X(vsplit_array, "aten::vsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]",                     \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_hvdsplit)                               \
  X(dsplit_int, "aten::dsplit.int(Tensor(a -> *) self, int sections) -> Tensor(a)[]",                          \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_hvdsplit)                               \
  X(dsplit_array, "aten::dsplit.array(Tensor(a -> *) self, int[] indices) -> Tensor(a)[]",                     \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_LIST_, fbx_k_hvdsplit)                               \
  X(hstack, "aten::hstack(Tensor[] tensors) -> Tensor",                                                        \
    FBX_OPCAT_SHAPE, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_hvdstack)                                         \
  X(vstack, "aten::vstack(Tensor[] tensors) -> Tensor",                                                        \
    FBX_OPCAT_SHAPE, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_hvdstack)                                         \
  X(dstack, "aten::dstack(Tensor[] tensors) -> Tensor",                                                        \
    FBX_OPCAT_SHAPE, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_hvdstack)                                         \
  X(column_stack, "aten::column_stack(Tensor[] tensors) -> Tensor",                                            \
    FBX_OPCAT_SHAPE, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_hvdstack)                                         \
  X(flipud, "aten::flipud(Tensor self) -> Tensor",                                                             \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_flipud_lr)                                             \
  X(fliplr, "aten::fliplr(Tensor self) -> Tensor",                                                             \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_flipud_lr)                                             \
  X(rot90, "aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor",                                   \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_rot90)                                               \
  X(diff, "aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor", \
    FBX_OPCAT_SHAPE, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_diff)                                             \
  X(kron, "aten::kron(Tensor self, Tensor other) -> Tensor",                                                   \
    FBX_OPCAT_SHAPE, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_kron)                                             \
  X(block_diag, "aten::block_diag(Tensor[] tensors) -> Tensor",                                                \
    FBX_OPCAT_SHAPE, FBX_DT_PROMOTE, FBX_SH_CUSTOM, 0, fbx_k_block_diag)                                       \
  X(cartesian_prod, "aten::cartesian_prod(Tensor[] tensors) -> Tensor",                                        \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_SHAPE_VIEW_, fbx_k_cartesian_prod)                         \
  X(combinations, "aten::combinations(Tensor self, int r=2, bool with_replacement=False) -> Tensor",            \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_combinations)                                        \
  X(channel_shuffle, "aten::channel_shuffle(Tensor self, int groups) -> Tensor",                               \
    FBX_OPCAT_VIEW, FBX_DT_SAME, FBX_SH_SAME, FBX_SHAPE_VIEW_, fbx_k_channel_shuffle)                          \
  X(count_nonzero_dim_IntList, "aten::count_nonzero.dim_IntList(Tensor self, int[] dim) -> Tensor",            \
    FBX_OPCAT_SHAPE, FBX_DT_LONG, FBX_SH_CUSTOM, 0, fbx_k_count_nonzero)                                       \
  X(count_nonzero, "aten::count_nonzero(Tensor self, int? dim=None) -> Tensor",                                \
    FBX_OPCAT_SHAPE, FBX_DT_LONG, FBX_SH_CUSTOM, 0, fbx_k_count_nonzero)                                       \
  X(argwhere, "aten::argwhere(Tensor self) -> Tensor",                                                         \
    FBX_OPCAT_SHAPE, FBX_DT_LONG, FBX_SH_CUSTOM, 0, fbx_k_argwhere)                                            \
  X(take, "aten::take(Tensor self, Tensor index) -> Tensor",                                                   \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_take)                                                \
  X(take_along_dim, "aten::take_along_dim(Tensor self, Tensor indices, int? dim=None) -> Tensor",              \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_take_along_dim)                                      \
  X(index_fill_int_Tensor, "aten::index_fill.int_Tensor(Tensor self, int dim, Tensor index, Tensor value) -> Tensor",\
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_index_fill)                                            \
  X(index_fill_int_Scalar, "aten::index_fill.int_Scalar(Tensor self, int dim, Tensor index, Scalar value) -> Tensor",\
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_index_fill)                                            \
  X(masked_scatter, "aten::masked_scatter(Tensor self, Tensor mask, Tensor source) -> Tensor",                 \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_masked_scatter)                                      \
  X(unfold_backward, "aten::unfold_backward(Tensor grad_in, int[] input_sizes, int dim, int size, int step) -> Tensor", \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_unfold_backward)                                     \
  X(diff_backward,                                                                                             \
    "fusebox::diff_backward(Tensor grad, Tensor self, int n, int dim, Tensor? prepend, Tensor? append, int part) -> Tensor", \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_diff_backward)                                       \
  X(kron_backward, "fusebox::kron_backward(Tensor grad, Tensor self, Tensor other, int which) -> Tensor",      \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_kron_backward)                                       \
  X(take_along_dim_backward,                                                                                   \
    "fusebox::take_along_dim_backward(Tensor grad, Tensor self, Tensor indices, int? dim) -> Tensor",          \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_take_along_dim_backward)                             \
  X(stack_like_backward, "fusebox::stack_like_backward(Tensor grad, Tensor[] tensors, str op) -> Tensor[]",   \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_MUTABLE_OUT, fbx_k_stack_like_backward)                \
  X(reshape_each_backward, "fusebox::reshape_each_backward(Tensor[] grads, Tensor[] tensors) -> Tensor[]",   \
    FBX_OPCAT_SHAPE, FBX_DT_SAME, FBX_SH_CUSTOM, FBX_OPF_MUTABLE_OUT, fbx_k_reshape_each_backward)

#endif
