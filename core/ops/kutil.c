#include "ops/kutil.h"

#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kcompose.h"

fbx_status *fbx_wrap_dim(const fbx_kctx *ctx, int64_t *out, int64_t dim, int ndim) {
  int64_t n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n)
    return fbx_kernel_error(ctx, "dim %lld out of range for a tensor of %d dims (expected %lld..%lld)",
                            (long long)dim, ndim, (long long)-n, (long long)(n - 1));
  *out = dim < 0 ? dim + n : dim;
  return NULL;
}

fbx_status *fbx_broadcast_into(const fbx_kctx *ctx, int64_t *out, int *out_ndim, int ndim,
                               const int64_t *sizes) {
  int nd = *out_ndim > ndim ? *out_ndim : ndim;
  int64_t res[FBX_MAX_DIMS];
  for (int i = 0; i < nd; i++) {
    int ia = i - (nd - *out_ndim), ib = i - (nd - ndim);
    int64_t a = ia >= 0 ? out[ia] : 1, b = ib >= 0 ? sizes[ib] : 1;
    if (a != b && a != 1 && b != 1)
      return fbx_kernel_error(ctx, "shapes do not broadcast: size %lld vs %lld at dim %d",
                              (long long)a, (long long)b, i);
    res[i] = a == 1 ? b : a;
  }
  memcpy(out, res, sizeof(int64_t) * (size_t)nd);
  *out_ndim = nd;
  return NULL;
}

fbx_status *fbx_broadcast_shapes(const fbx_kctx *ctx, int64_t *out, int *out_ndim,
                                 const fbx_tensor *a, const fbx_tensor *b) {
  *out_ndim = 0;
  if (a) FBX_TRY(fbx_broadcast_into(ctx, out, out_ndim, a->ndim, a->sizes));
  if (b) FBX_TRY(fbx_broadcast_into(ctx, out, out_ndim, b->ndim, b->sizes));
  return NULL;
}

fbx_status *fbx_expand_view(fbx_tensor **out, fbx_tensor *t, int ndim, const int64_t *sizes) {
  int64_t strides[FBX_MAX_DIMS];
  if (ndim < t->ndim) return fbx_status_new(FBX_ERR_RUNTIME, "cannot expand %d dims to %d", t->ndim, ndim);
  for (int i = 0; i < ndim; i++) {
    int it = i - (ndim - t->ndim);
    if (it < 0) {
      strides[i] = 0;
    } else if (t->sizes[it] == sizes[i]) {
      strides[i] = t->strides[it];
    } else if (t->sizes[it] == 1) {
      strides[i] = 0;
    } else {
      return fbx_status_new(FBX_ERR_RUNTIME, "cannot expand size %lld to %lld at dim %d",
                            (long long)t->sizes[it], (long long)sizes[i], i);
    }
  }
  return fbx_tensor_view(out, t, ndim, sizes, strides, t->offset);
}

fbx_status *fbx_arg_tensor(const fbx_kctx *ctx, const fbx_ivalue *args, int i, fbx_tensor **out) {
  if (args[i].kind != FBX_IV_TENSOR) {
    const char *name = ctx && ctx->op && i < ctx->op->schema.nargs ? ctx->op->schema.args[i].name : NULL;
    return fbx_kernel_error(ctx, "argument %d ('%s') must be a Tensor, got %s", i, name ? name : "?",
                            fbx_iv_kind_name(args[i].kind));
  }
  *out = args[i].u.t;
  return NULL;
}

fbx_status *fbx_arg_tensor_list(const fbx_kctx *ctx, const fbx_ivalue *arg, fbx_tensor ***out, int *n,
                                const char *empty_msg) {
  if (arg->kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected a list of tensors, got %s", fbx_iv_kind_name(arg->kind));
  int k = fbx_iv_list_len(arg);
  if (k == 0 && empty_msg) return fbx_kernel_error(ctx, "%s", empty_msg);
  fbx_tensor **ts = fbx_malloc(sizeof *ts * (size_t)(k ? k : 1));
  if (!ts) return fbx_status_nomem();
  for (int i = 0; i < k; i++) {
    const fbx_ivalue *e = fbx_iv_list_at(arg, i);
    if (e->kind != FBX_IV_TENSOR) {
      fbx_free(ts);
      return fbx_kernel_error(ctx, "expected a Tensor at list position %d, got %s", i, fbx_iv_kind_name(e->kind));
    }
    ts[i] = e->u.t;
  }
  *out = ts;
  *n = k;
  return NULL;
}

fbx_status *fbx_scalar_tensor(fbx_tensor **out, const fbx_ivalue *v, fbx_dtype d) {
  fbx_tensor *t = NULL;
  FBX_TRY(fbx_tensor_empty(&t, d, 0, NULL));
  if (v->kind == FBX_IV_FLOAT)
    fbx_tensor_set_f64(t, 0, v->u.f);
  else
    fbx_tensor_set_i64(t, 0, fbx_iv_to_int(v));
  *out = t;
  return NULL;
}

fbx_status *fbx_size_mul(const fbx_kctx *ctx, int64_t a, int64_t b, int64_t *out, const char *what) {
  if (__builtin_mul_overflow(a, b, out))
    return fbx_kernel_error(ctx, "%s: size overflow (%lld * %lld does not fit in int64)", what, (long long)a,
                            (long long)b);
  return NULL;
}

fbx_status *fbx_size_add(const fbx_kctx *ctx, int64_t a, int64_t b, int64_t *out, const char *what) {
  if (__builtin_add_overflow(a, b, out))
    return fbx_kernel_error(ctx, "%s: size overflow (%lld + %lld does not fit in int64)", what, (long long)a,
                            (long long)b);
  return NULL;
}

fbx_status *fbx_contiguous_as(fbx_tensor **out, fbx_tensor *t, fbx_dtype dt) {
  *out = NULL;
  if (!t) return NULL;
  return t->dtype == dt ? fbx_tensor_contiguous(out, t) : fbx_tensor_clone_as(out, t, dt);
}

fbx_status *fbx_int_list_iv(fbx_ivalue *out, int n, const int64_t *v) {
  FBX_TRY(fbx_iv_list_new(out, n));
  for (int i = 0; i < n; i++) {
    fbx_status *st = fbx_iv_list_push(out, fbx_iv_int(v[i]));
    if (st) {
      fbx_iv_release(out);
      return st;
    }
  }
  return NULL;
}

/* ---- composites (kcompose.h) ------------------------------------------------------------------ */

fbx_status *fbx_row_run(const fbx_kctx *ctx, fbx_op_id id, const fbx_ivalue *args, int n, fbx_ivalue *outs) {
  const fbx_op *op = fbx_op_get(id);
  if (!op) return fbx_status_nomem();
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS];
  FBX_TRY(fbx_op_normalize_args(op, args, n, norm));
  for (int i = 0; i < op->schema.nrets; i++) outs[i] = fbx_iv_none();
  fbx_kctx sub = {.op = op, .node = ctx->node, .rng_state = ctx->rng_state, .nargs = op->schema.nargs};
  return op->kernel(&sub, norm, outs);
}

fbx_status *fbx_row_tensor(const fbx_kctx *ctx, fbx_tensor **out, fbx_op_id id, const fbx_ivalue *args, int n) {
  fbx_ivalue r[FBX_SCHEMA_MAX_RETS];
  *out = NULL;
  FBX_TRY(fbx_row_run(ctx, id, args, n, r));
  if (r[0].kind != FBX_IV_TENSOR) {
    fbx_iv_release(&r[0]);
    return fbx_kernel_error(ctx, "internal: %s returned no tensor", fbx_op_get(id)->id_name);
  }
  *out = r[0].u.t;
  return NULL;
}

fbx_status *fbx_row_own_error(const fbx_kctx *ctx, fbx_status *st) {
  if (!st || fbx_status_code(st) != FBX_ERR_RUNTIME) return st;
  const char *m = fbx_status_message(st), *p = strstr(m, ": ");
  fbx_status *r = fbx_kernel_error(ctx, "%s", p ? p + 2 : m);
  fbx_status_free(st);
  return r;
}

fbx_status *fbx_loss_reduce(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *l, int64_t reduction) {
  switch (reduction) {
    case 0: *out = fbx_tensor_retain(l); return NULL;
    case 1: return ROW(out, mean, TV(l), NV);
    case 2: return ROW(out, sum, TV(l), NV);
    default: return fbx_kernel_error(ctx, "%" PRId64 " is not a valid value for reduction", reduction);
  }
}
