/* Op table rows: reductions (k_reduce.c) and composite/normalization ops
 * (k_norm.c). (See ops/optable.h for the columns.)
 *
 * Schemas are PyTorch 1.13's. Overloads of one name are listed so that the
 * positional argument lists TorchScript emits pick the right one: sum(x,
 * dtype) before sum.dim_IntList(x, dim, keepdim, dtype); var(x, unbiased)
 * before var.dim(x, dim, unbiased, keepdim) before var.correction(x, dim,
 * correction, keepdim) (an int or None third argument is a correction);
 * var_mean and std_mean likewise, their results the var (std) row's and
 * mean.dim's over the same dims.
 *
 * dtype rules marked FBX_DT_CUSTOM:
 *   sum, prod, cumsum  the dtype argument, else int64 for integral and bool
 *                      inputs, else the input's dtype
 *   logsumexp          the input's floating dtype, float32 for integral
 *   all, any           bool, but uint8 for uint8 inputs
 * FBX_DT_ARG (mean, softmax, log_softmax): the dtype argument, else the
 * input's (which must then be floating).
 *
 * Empty dim lists reduce every dim (PyTorch 1.13). max/min/amax/amin/argmax/
 * argmin of an empty extent are errors; sum gives 0, prod 1, mean and var
 * NaN, logsumexp -inf.
 *
 * native_layer_norm_backward / fusebox::layer_norm_backward (the gradient
 * formula of layer_norm uses the latter, which takes the row statistics
 * again from the input): d input in the input's dtype, d weight and d bias
 * in theirs, None where masked off or where the parameter is None.
 *
 * batch_norm with training=True normalizes with the batch's statistics and
 * does not update running_mean/running_var (the interpreter does not mutate
 * inputs). dropout with train=True draws from the run's generator
 * (FBX_OPF_NONDET); with train=False it returns its input (FBX_OPF_ALIAS).
 *
 * k_search.c: nansum/nanmean are sum/mean with NaNs left out (nanmean
 * counts the others; floating inputs only; nansum's dtype rule is sum's).
 * aminmax(dim=None) reduces every dim (keepdim keeps them all as 1); its
 * gradient fusebox::aminmax_backward shares each result's gradient among
 * the elements equal to it, as amin's and amax's do.
 * quantile/nanquantile: floating input, q (float, or a 0-d or 1-D tensor of
 * the input's dtype, a 1-D q adding a leading dim of its length) in [0, 1];
 * the rank q (n - 1) in the sorted row is interpolated linearly (lower,
 * higher, nearest (ties to even), midpoint); quantile gives NaN for a row
 * holding NaN, nanquantile skips them (NaN when all are). trapz/trapezoid:
 * the trapezoidal rule along dim, spacing dx or the differences of x (1-D,
 * along dim, or broadcasting with y); integral y gives the default float
 * dtype, except that no intervals (dim of length 0) give zeros in y's dtype. bincount: int64 counts, or sums of weights (float32 for float32
 * weights, else float64). histc: floating only; min == max takes the data's
 * range (+-1 when that is one value). renorm_ (FBX_OPF_INPLACE): renorm's
 * result copied into self. Gradients: fusebox::trapz_backward (x None for
 * the dx forms), quantile_backward (to the one or two sorted elements a
 * result interpolates; for quantile, a row with NaN gives it all to its
 * last, the NaN, as PyTorch's sort-based gradient does) and renorm_backward.
 */
#ifndef FBX_OPS_LIST_REDUCE_H
#define FBX_OPS_LIST_REDUCE_H

#define FBX_LR_RED_ FBX_OPCAT_REDUCTION
#define FBX_LR_CMP_ FBX_OPCAT_COMPOSITE

#define FBX_OPS_REDUCE(X)                                                                                      \
  X(sum, "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor", FBX_LR_RED_, FBX_DT_CUSTOM, FBX_SH_REDUCE, \
    0, fbx_k_sum)                                                                                              \
  X(sum_dim_IntList,                                                                                           \
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", \
    FBX_LR_RED_, FBX_DT_CUSTOM, FBX_SH_REDUCE, 0, fbx_k_sum_dim)                                                  \
  X(mean, "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor", FBX_LR_RED_, FBX_DT_ARG, FBX_SH_REDUCE,  \
    0, fbx_k_mean)                                                                                             \
  X(mean_dim, "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", \
    FBX_LR_RED_, FBX_DT_ARG, FBX_SH_REDUCE, 0, fbx_k_mean_dim)                                                    \
  X(prod, "aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", FBX_LR_RED_, FBX_DT_CUSTOM,             \
    FBX_SH_REDUCE, 0, fbx_k_prod)                                                                              \
  X(prod_dim_int, "aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", \
    FBX_LR_RED_, FBX_DT_CUSTOM, FBX_SH_REDUCE, 0, fbx_k_prod_dim)                                                 \
  X(amax, "aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", FBX_LR_RED_, FBX_DT_SAME,       \
    FBX_SH_REDUCE, 0, fbx_k_amax)                                                                              \
  X(amin, "aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", FBX_LR_RED_, FBX_DT_SAME,       \
    FBX_SH_REDUCE, 0, fbx_k_amin)                                                                              \
  X(max, "aten::max(Tensor self) -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_max)               \
  X(max_dim, "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",     \
    FBX_LR_RED_, FBX_DT_CUSTOM, FBX_SH_REDUCE, 0, fbx_k_max_dim)                                                  \
  X(min, "aten::min(Tensor self) -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_min)               \
  X(min_dim, "aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",     \
    FBX_LR_RED_, FBX_DT_CUSTOM, FBX_SH_REDUCE, 0, fbx_k_min_dim)                                                  \
  X(argmax, "aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", FBX_LR_RED_, FBX_DT_LONG,   \
    FBX_SH_REDUCE, 0, fbx_k_argmax)                                                                            \
  X(argmin, "aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", FBX_LR_RED_, FBX_DT_LONG,   \
    FBX_SH_REDUCE, 0, fbx_k_argmin)                                                                            \
  X(var_mean, "aten::var_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)", FBX_LR_CMP_, FBX_DT_SAME,   \
    FBX_SH_CUSTOM, 0, fbx_k_var_mean)                                                                          \
  X(var_mean_dim,                                                                                              \
    "aten::var_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)", \
    FBX_LR_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_var_mean)                                                  \
  X(var_mean_correction,                                                                                       \
    "aten::var_mean.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> "          \
    "(Tensor, Tensor)", FBX_LR_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_var_mean)                             \
  X(std_mean, "aten::std_mean(Tensor self, bool unbiased=True) -> (Tensor, Tensor)", FBX_LR_CMP_, FBX_DT_SAME,   \
    FBX_SH_CUSTOM, 0, fbx_k_var_mean)                                                                          \
  X(std_mean_dim,                                                                                              \
    "aten::std_mean.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> (Tensor, Tensor)", \
    FBX_LR_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_var_mean)                                                  \
  X(std_mean_correction,                                                                                       \
    "aten::std_mean.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> "          \
    "(Tensor, Tensor)", FBX_LR_CMP_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_var_mean)                             \
  X(var, "aten::var(Tensor self, bool unbiased=True) -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0,      \
    fbx_k_var)                                                                                                 \
  X(var_dim, "aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",      \
    FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_var_dim)                                                    \
  X(var_correction,                                                                                            \
    "aten::var.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> Tensor",        \
    FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_var_corr)                                                   \
  X(std, "aten::std(Tensor self, bool unbiased=True) -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0,      \
    fbx_k_std)                                                                                                 \
  X(std_dim, "aten::std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",      \
    FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_std_dim)                                                    \
  X(std_correction,                                                                                            \
    "aten::std.correction(Tensor self, int[1]? dim, *, int? correction, bool keepdim=False) -> Tensor",        \
    FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_std_corr)                                                   \
  X(logsumexp, "aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", FBX_LR_RED_,            \
    FBX_DT_CUSTOM, FBX_SH_REDUCE, 0, fbx_k_logsumexp)                                                          \
  X(all, "aten::all(Tensor self) -> Tensor", FBX_LR_RED_, FBX_DT_CUSTOM, FBX_SH_REDUCE, 0, fbx_k_all)             \
  X(all_dim, "aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", FBX_LR_RED_, FBX_DT_CUSTOM,     \
    FBX_SH_REDUCE, 0, fbx_k_all_dim)                                                                           \
  X(any, "aten::any(Tensor self) -> Tensor", FBX_LR_RED_, FBX_DT_CUSTOM, FBX_SH_REDUCE, 0, fbx_k_any)             \
  X(any_dim, "aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor", FBX_LR_RED_, FBX_DT_CUSTOM,     \
    FBX_SH_REDUCE, 0, fbx_k_any_dim)                                                                           \
  X(cumsum, "aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", FBX_LR_RED_,              \
    FBX_DT_CUSTOM, FBX_SH_SAME, 0, fbx_k_cumsum)                                                               \
  X(softmax_int, "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor", FBX_LR_CMP_,        \
    FBX_DT_ARG, FBX_SH_SAME, 0, fbx_k_softmax)                                                                 \
  X(log_softmax_int, "aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",          \
    FBX_LR_CMP_, FBX_DT_ARG, FBX_SH_SAME, 0, fbx_k_log_softmax)                                                   \
  X(layer_norm,                                                                                                \
    "aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "          \
    "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor",                                     \
    FBX_LR_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_layer_norm)                                                   \
  X(native_layer_norm_backward,                                                                               \
    "aten::native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, "   \
    "Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",              \
    FBX_LR_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_native_layer_norm_backward)                              \
  X(fbx_layer_norm_backward,                                                                                   \
    "fusebox::layer_norm_backward(Tensor grad, Tensor input, int[] normalized_shape, Tensor? weight, "          \
    "Tensor? bias, float eps) -> (Tensor grad_input, Tensor grad_weight, Tensor grad_bias)",                   \
    FBX_LR_CMP_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_layer_norm_backward)                                 \
  X(batch_norm,                                                                                                \
    "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "                      \
    "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",            \
    FBX_LR_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_batch_norm)                                                   \
  X(dropout, "aten::dropout(Tensor input, float p, bool train) -> Tensor", FBX_LR_CMP_, FBX_DT_SAME,              \
    FBX_SH_SAME, FBX_OPF_NONDET | FBX_OPF_ALIAS, fbx_k_dropout)                                            \
  /* ---- NaN-aware, order-statistic and counting reductions (k_search.c) ---- */                              \
  X(nansum, "aten::nansum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", \
    FBX_LR_RED_, FBX_DT_CUSTOM, FBX_SH_REDUCE, 0, fbx_k_nansum)                                                   \
  X(nanmean, "aten::nanmean(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", \
    FBX_LR_RED_, FBX_DT_ARG, FBX_SH_REDUCE, 0, fbx_k_nanmean)                                                     \
  X(aminmax, "aten::aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",       \
    FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_aminmax)                                                    \
  X(fbx_aminmax_backward,                                                                                      \
    "fusebox::aminmax_backward(Tensor grad_min, Tensor grad_max, Tensor self, Tensor min, Tensor max, int? dim, " \
    "bool keepdim) -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_fbx_aminmax_backward)             \
  X(quantile, "aten::quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, "                    \
    "str interpolation=\"linear\") -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_quantile)      \
  X(quantile_scalar, "aten::quantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, "       \
    "str interpolation=\"linear\") -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_quantile)      \
  X(nanquantile, "aten::nanquantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, "              \
    "str interpolation=\"linear\") -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_quantile)      \
  X(nanquantile_scalar, "aten::nanquantile.scalar(Tensor self, float q, int? dim=None, bool keepdim=False, *, " \
    "str interpolation=\"linear\") -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_REDUCE, 0, fbx_k_quantile)      \
  X(trapz_x, "aten::trapz.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", FBX_LR_RED_, FBX_DT_PROMOTE_FLOAT,    \
    FBX_SH_CUSTOM, 0, fbx_k_trapz)                                                                             \
  X(trapz_dx, "aten::trapz.dx(Tensor y, *, float dx=1., int dim=-1) -> Tensor", FBX_LR_RED_, FBX_DT_PROMOTE_FLOAT, \
    FBX_SH_CUSTOM, 0, fbx_k_trapz)                                                                             \
  X(trapezoid_x, "aten::trapezoid.x(Tensor y, Tensor x, *, int dim=-1) -> Tensor", FBX_LR_RED_,                  \
    FBX_DT_PROMOTE_FLOAT, FBX_SH_CUSTOM, 0, fbx_k_trapz)                                                       \
  X(trapezoid_dx, "aten::trapezoid.dx(Tensor y, *, Scalar dx=1, int dim=-1) -> Tensor", FBX_LR_RED_,             \
    FBX_DT_PROMOTE_FLOAT, FBX_SH_CUSTOM, 0, fbx_k_trapz)                                                       \
  X(fbx_trapz_backward,                                                                                         \
    "fusebox::trapz_backward(Tensor grad, Tensor y, Tensor? x, float dx, int dim) -> (Tensor grad_y, "         \
    "Tensor grad_x)", FBX_LR_RED_, FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_fbx_trapz_backward)                    \
  X(fbx_quantile_backward,                                                                                      \
    "fusebox::quantile_backward(Tensor grad, Tensor self, Any q, int? dim, bool keepdim, str interpolation, "   \
    "bool ignore_nan) -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_fbx_quantile_backward)       \
  X(bincount, "aten::bincount(Tensor self, Tensor? weights=None, int minlength=0) -> Tensor", FBX_LR_RED_,       \
    FBX_DT_CUSTOM, FBX_SH_CUSTOM, 0, fbx_k_bincount)                                                           \
  X(histc, "aten::histc(Tensor self, int bins=100, Scalar min=0, Scalar max=0) -> Tensor", FBX_LR_RED_,          \
    FBX_DT_SAME, FBX_SH_CUSTOM, 0, fbx_k_histc)                                                                \
  X(msort, "aten::msort(Tensor self) -> Tensor", FBX_LR_RED_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_msort)          \
  X(renorm, "aten::renorm(Tensor self, Scalar p, int dim, Scalar maxnorm) -> Tensor", FBX_LR_CMP_, FBX_DT_SAME,  \
    FBX_SH_SAME, 0, fbx_k_renorm)                                                                              \
  X(fbx_renorm_backward, "fusebox::renorm_backward(Tensor grad, Tensor self, Scalar p, int dim, Scalar maxnorm) -> " \
    "Tensor", FBX_LR_CMP_, FBX_DT_SAME, FBX_SH_SAME, 0, fbx_k_fbx_renorm_backward)                               \
  X(renorm_, "aten::renorm_(Tensor(a!) self, Scalar p, int dim, Scalar maxnorm) -> Tensor(a!)", FBX_LR_CMP_,     \
    FBX_DT_SAME, FBX_SH_SAME, FBX_OPF_INPLACE | FBX_OPF_ALIAS, fbx_k_red_inplace)

#endif
