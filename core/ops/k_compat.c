/* ATen's internal and legacy overloads that graphs from real models carry
 * (traced or decomposed graphs, PyTorch's own fuser tests): the underscore
 * forms of softmax, view and to, the _cast_* family, native_layer_norm and
 * native_dropout with their extra outputs, nonzero, bitwise shifts and the int << and >> of script code. Where one is another
 * row with its arguments rearranged, the kernel hands them to that row's
 * kernel, so the semantics stay in one place. (Rows in ops/list_extra.h and,
 * for the int shifts, ops/list_scalar.h.) */
#include <math.h>
#include <string.h>

#include "ops/kutil.h"
#include "ops/optable.h"


/* _softmax / _log_softmax(self, int dim, bool half_to_float): softmax with no
 * dtype; half_to_float is a CUDA-only option, an error on the CPU as in PyTorch. */
static fbx_status *underscore_softmax(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool log) {
  if (args[2].kind != FBX_IV_BOOL && args[2].kind != FBX_IV_INT)
    return fbx_kernel_error(ctx, "half_to_float must be a bool");
  if (fbx_iv_to_int(&args[2]))
    return fbx_kernel_error(ctx, "softmax with half to float conversion is not supported on CPU");
  fbx_ivalue a[3] = {args[0], args[1], fbx_iv_none()};
  return log ? fbx_k_log_softmax(ctx, a, outs) : fbx_k_softmax(ctx, a, outs);
}
fbx_status *fbx_k__softmax(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return underscore_softmax(ctx, args, outs, false);
}
fbx_status *fbx_k__log_softmax(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return underscore_softmax(ctx, args, outs, true);
}

/* _unsafe_view(self, size): view's semantics (an error when the strides do
 * not allow a view). */
fbx_status *fbx_k__unsafe_view(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  return fbx_k_view(ctx, args, outs);
}

/* _to_copy(self, *, dtype?, layout?, device?, pin_memory?, non_blocking, memory_format?):
 * always a new tensor. */
fbx_status *fbx_k__to_copy(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_ivalue a[8] = {args[0], args[1], args[2], args[3], args[4], args[5], fbx_iv_bool(true), args[6]};
  return fbx_k_pw_to_dtype_layout(ctx, a, outs);
}

/* _cast_<Type>(self, non_blocking): self.to(<type>) (self when it already is). */
fbx_status *fbx_k__cast(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  static const struct {
    const char *suffix;
    fbx_dtype dt;
  } casts[] = {{"Byte", FBX_DTYPE_UINT8}, {"Char", FBX_DTYPE_INT8},     {"Short", FBX_DTYPE_INT16},
               {"Int", FBX_DTYPE_INT32},  {"Long", FBX_DTYPE_INT64},    {"Half", FBX_DTYPE_FLOAT16},
               {"Float", FBX_DTYPE_FLOAT32}, {"Double", FBX_DTYPE_FLOAT64}};
  const char *name = fbx_sym_unqual(ctx->op->schema.name); /* "_cast_Float" */
  for (size_t i = 0; i < sizeof casts / sizeof casts[0]; i++) {
    if (strcmp(name + 6, casts[i].suffix)) continue;
    fbx_ivalue a[5] = {args[0], fbx_iv_int(casts[i].dt), args[1], fbx_iv_bool(false), fbx_iv_none()};
    return fbx_k_pw_to_dtype(ctx, a, outs);
  }
  return fbx_kernel_error(ctx, "no dtype for %s", name);
}

/* native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd):
 * out as aten::layer_norm computes it; mean and rstd = 1/sqrt(var + eps)
 * (biased var) of each normalized row, in the input's dtype, shaped like the
 * input with the normalized dims kept as 1. */
fbx_status *fbx_k_native_layer_norm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_ivalue a[6] = {args[0], args[1], args[2], args[3], args[4], fbx_iv_bool(true)};
  FBX_TRY(fbx_k_layer_norm(ctx, a, outs)); /* checks the arguments, too */
  fbx_tensor *x = args[0].u.t, *mean = NULL, *rstd = NULL;
  fbx_status *st = NULL;
  int64_t ns[FBX_MAX_DIMS];
  int nn = fbx_arg_int_list(ctx->op, 1, &args[1], ns, FBX_MAX_DIMS, &st);
  if (st) goto fail;
  int64_t sizes[FBX_MAX_DIMS], N = 1;
  for (int d = 0; d < x->ndim; d++) sizes[d] = d < x->ndim - nn ? x->sizes[d] : 1;
  for (int d = x->ndim - nn; d < x->ndim; d++) N *= x->sizes[d];
  double eps = fbx_iv_to_double(&args[4]);
  if ((st = fbx_tensor_empty(&mean, x->dtype, x->ndim, sizes)) || (st = fbx_tensor_empty(&rstd, x->dtype, x->ndim, sizes)))
    goto fail;
  for (int64_t m = 0; m < mean->numel; m++) {
    double s = 0, ss = 0;
    for (int64_t k = 0; k < N; k++) s += fbx_tensor_get_f64(x, m * N + k);
    double mu = N ? s / (double)N : NAN;
    for (int64_t k = 0; k < N; k++) {
      double dlt = fbx_tensor_get_f64(x, m * N + k) - mu;
      ss += dlt * dlt;
    }
    fbx_tensor_set_f64(mean, m, mu);
    fbx_tensor_set_f64(rstd, m, 1 / sqrt((N ? ss / (double)N : NAN) + eps));
  }
  fbx_set_out_tensor(outs, 1, mean);
  fbx_set_out_tensor(outs, 2, rstd);
  return NULL;
fail:
  fbx_tensor_release(mean);
  fbx_tensor_release(rstd);
  fbx_iv_release(&outs[0]);
  outs[0] = fbx_iv_none();
  return st;
}

static uint64_t next_u64(uint64_t *s) { /* splitmix64, as dropout's */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* native_dropout(input, p, train?) -> (out, bool mask). Training (train None
 * or true): mask true with probability 1-p (drawn from the run's generator),
 * out = input * mask / (1-p) (0 scale when p == 1), as PyTorch's CPU kernel;
 * otherwise out = a copy, mask = all true. */
fbx_status *fbx_k_native_dropout(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y = NULL, *mask = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (!fbx_iv_is_scalar(&args[1])) return fbx_kernel_error(ctx, "p must be a float");
  double p = fbx_iv_to_double(&args[1]);
  if (!(p >= 0 && p <= 1)) return fbx_kernel_error(ctx, "dropout probability has to be between 0 and 1, but got %g", p);
  bool train = args[2].kind == FBX_IV_NONE || fbx_iv_to_int(&args[2]) != 0;
  fbx_status *st;
  if (!train) {
    if ((st = fbx_tensor_clone_as(&y, x, x->dtype)) || (st = fbx_tensor_empty(&mask, FBX_DTYPE_BOOL, x->ndim, x->sizes)))
      goto fail;
    memset(mask->data, 1, (size_t)mask->numel);
  } else {
    if (!fbx_dtype_is_floating(x->dtype))
      return fbx_kernel_error(ctx, "training-mode dropout needs a floating point input, got %s", fbx_dtype_name(x->dtype));
    if (!ctx->rng_state && p > 0 && p < 1)
      return fbx_kernel_error(ctx, "training-mode dropout needs the run's random generator, and none was given");
    if ((st = fbx_tensor_empty(&y, x->dtype, x->ndim, x->sizes)) ||
        (st = fbx_tensor_empty(&mask, FBX_DTYPE_BOOL, x->ndim, x->sizes)))
      goto fail;
    double scale = p < 1 ? 1 / (1 - p) : 0;
    for (int64_t i = 0; i < x->numel; i++) {
      double keep = p <= 0 ? 1 : p >= 1 ? 0 : (double)(next_u64(ctx->rng_state) >> 11) * 0x1.0p-53 < 1 - p;
      ((uint8_t *)mask->data)[i] = keep != 0;
      fbx_tensor_set_f64(y, i, fbx_tensor_get_f64(x, i) * keep * scale);
    }
  }
  fbx_set_out_tensor(outs, 0, y);
  fbx_set_out_tensor(outs, 1, mask);
  return NULL;
fail:
  fbx_tensor_release(y);
  fbx_tensor_release(mask);
  return st;
}

/* nonzero(self) -> int64 [n, ndim]: the indices of the elements that are not
 * zero (NaN is not zero), in row-major order. */
fbx_status *fbx_k_nonzero(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  bool fl = fbx_dtype_is_floating(x->dtype);
  int64_t n = 0;
  for (int64_t i = 0; i < x->numel; i++) n += fl ? fbx_tensor_get_f64(x, i) != 0 : fbx_tensor_get_i64(x, i) != 0;
  int64_t sizes[2] = {n, x->ndim};
  FBX_TRY(fbx_tensor_empty(&y, FBX_DTYPE_INT64, 2, sizes));
  int64_t *o = y->data, k = 0;
  for (int64_t i = 0; i < x->numel; i++) {
    if (!(fl ? fbx_tensor_get_f64(x, i) != 0 : fbx_tensor_get_i64(x, i) != 0)) continue;
    int64_t rem = i;
    for (int d = x->ndim - 1; d >= 0; d--) {
      o[k * x->ndim + d] = x->sizes[d] ? rem % x->sizes[d] : 0;
      rem = x->sizes[d] ? rem / x->sizes[d] : 0;
    }
    k++;
  }
  fbx_set_out_tensor(outs, 0, y);
  return NULL;
}

/* __lshift__.int / __rshift__.int(int a, int b) -> int: int64 shifts;
 * a negative count is Python's ValueError, a count of 64 or more shifts
 * everything out (the sign stays for >>). */
fbx_status *fbx_k_sc_shift(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_INT || args[1].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "expected int operands");
  int64_t a = args[0].u.i, b = args[1].u.i;
  if (b < 0) return fbx_kernel_error(ctx, "negative shift count");
  bool left = !strcmp(fbx_sym_unqual(ctx->op->schema.name), "__lshift__");
  int64_t v;
  if (left) v = b >= 64 ? 0 : (int64_t)((uint64_t)a << b);
  else v = b >= 64 ? (a < 0 ? -1 : 0) : a >> b; /* arithmetic on every compiler we build with */
  outs[0] = fbx_iv_int(v);
  return NULL;
}
