/* prelu and prelu_backward (rows in ops/list_nn.h), PyTorch 1.13's CPU
 * semantics:
 *
 *   prelu(x, w) = x > 0 ? x : w[c] * x
 *
 * with c the element's index along dim 1 where w has C = x.size(1)
 * elements (x of rank >= 2), or one weight for every element where w has
 * one (any rank, 0-d included). w is 0-d or 1-D; a 1-D x has one channel,
 * so only a one-element w fits it. x and w share one dtype: float32,
 * float64 or bfloat16 (computed in float32, rounded back); float16 and
 * integers are errors, as on PyTorch's CPU.
 *
 *   prelu_backward(g, x, w) = (x > 0 ? g : w[c] * g,
 *                              the sum of (x > 0 ? 0 : x * g) per channel)
 *
 * the weight's gradient in w's shape. Elements go to the pool in runs of
 * one channel; the weight gradient's sums are taken in double over a fixed
 * split of the elements into blocks whose partial sums are added in block
 * order, so it does not depend on the thread count. */
#include <inttypes.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/kutil.h"
#include "ops/reduce.h"

#define PRELU_BLOCK 4096 /* elements per block of the weight gradient's sums */

typedef struct prelu_job {
  bool f64;
  const void *x, *g, *w; /* g NULL: the forward */
  void *y;               /* forward: the output; backward: the input's gradient */
  double *part;          /* backward: [nblk][wn] partial weight gradients */
  int64_t numel, inner, C, wn, nblk;
} prelu_job;

/* Elements [i0, i1): runs of one channel (element i is in channel (i /
 * inner) % C); with `part`, each run's sum of x * g over x <= 0 added to
 * part[c]. */
#define PRELU_RUNS(T)                                                                            \
  for (int64_t i = i0; i < i1;) {                                                                \
    int64_t row = i / j->inner, end = (row + 1) * j->inner < i1 ? (row + 1) * j->inner : i1;     \
    int64_t c = j->wn == 1 ? 0 : row % j->C;                                                    \
    const T *x = (const T *)j->x;                                                                \
    T *y = (T *)j->y, w = ((const T *)j->w)[c];                                                  \
    if (!j->g) {                                                                                 \
      for (; i < end; i++) y[i] = x[i] > 0 ? x[i] : w * x[i];                                    \
      continue;                                                                                  \
    }                                                                                            \
    const T *g = (const T *)j->g;                                                                \
    double acc = 0;                                                                              \
    for (; i < end; i++) {                                                                       \
      bool pos = x[i] > 0;                                                                       \
      y[i] = pos ? g[i] : w * g[i];                                                              \
      acc += pos ? 0.0 : (double)x[i] * (double)g[i];                                            \
    }                                                                                            \
    part[c] += acc;                                                                              \
  }

static void prelu_range(const prelu_job *j, int64_t i0, int64_t i1, double *part) {
  if (j->f64) {
    PRELU_RUNS(double)
  } else {
    PRELU_RUNS(float)
  }
}

static void fwd_body(void *jv, int64_t begin, int64_t end) {
  const prelu_job *j = jv;
  prelu_range(j, begin, end, NULL);
}

/* Blocks [begin, end) of the fixed split. */
static void bwd_body(void *jv, int64_t begin, int64_t end) {
  const prelu_job *j = jv;
  for (int64_t b = begin; b < end; b++)
    prelu_range(j, j->numel * b / j->nblk, j->numel * (b + 1) / j->nblk, j->part + b * j->wn);
}

/* Checks x and w as PyTorch does; fills the job's shape fields. */
static fbx_status *prelu_check(const fbx_kctx *ctx, const fbx_tensor *x, const fbx_tensor *w, prelu_job *j) {
  if (w->ndim > 1)
    return fbx_kernel_error(ctx, "expected the weight to be a scalar or a 1-D tensor, got %d dims", w->ndim);
  if (x->dtype != w->dtype)
    return fbx_kernel_error(ctx, "expected the input and the weight of one dtype, got %s and %s",
                            fbx_dtype_name(x->dtype), fbx_dtype_name(w->dtype));
  if (x->dtype != FBX_DTYPE_FLOAT32 && x->dtype != FBX_DTYPE_FLOAT64 && x->dtype != FBX_DTYPE_BFLOAT16)
    return fbx_kernel_error(ctx, "not implemented for %s (as on PyTorch's CPU)", fbx_dtype_name(x->dtype));
  j->wn = w->numel;
  j->C = x->ndim > 1 ? x->sizes[1] : 1;
  if (j->wn != 1) {
    if (x->ndim == 0) return fbx_kernel_error(ctx, "a 0-d input takes a single weight, got %" PRId64, j->wn);
    if (j->wn != j->C)
      return fbx_kernel_error(ctx,
                              "%" PRId64 " weights for an input of %" PRId64 " channels (dim 1; 1 for a 1-D input)",
                              j->wn, j->C);
  }
  j->numel = x->numel;
  j->inner = 1;
  for (int i = 2; i < x->ndim; i++) j->inner *= x->sizes[i];
  if (j->wn == 1) j->C = 1, j->inner = x->numel > 0 ? x->numel : 1;
  j->f64 = x->dtype == FBX_DTYPE_FLOAT64;
  return NULL;
}

/* prelu(Tensor self, Tensor weight) -> Tensor */
fbx_status *fbx_k_prelu(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *w, *xc = NULL, *wc = NULL, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &w));
  prelu_job j = {0};
  FBX_TRY(prelu_check(ctx, x, w, &j));
  fbx_dtype work = j.f64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_FLOAT32;
  fbx_status *st = fbx_contiguous_as(&xc, x, work);
  if (!st) st = fbx_contiguous_as(&wc, w, work);
  if (!st) st = fbx_tensor_empty(&y, work, x->ndim, x->sizes);
  if (!st) {
    j.x = xc->data, j.w = wc->data, j.y = y->data;
    fbx_parallel_for(j.numel, 32768, fwd_body, &j);
    if (work != x->dtype) {
      fbx_tensor *r = NULL;
      st = fbx_tensor_clone_as(&r, y, x->dtype);
      fbx_tensor_release(y);
      y = r;
    }
  }
  if (!st) fbx_set_out_tensor(outs, 0, y), y = NULL;
  fbx_tensor_release(xc);
  fbx_tensor_release(wc);
  fbx_tensor_release(y);
  return st;
}

/* prelu_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor) */
fbx_status *fbx_k_prelu_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x, *w, *gc = NULL, *xc = NULL, *wc = NULL, *gx = NULL, *gw = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &w));
  prelu_job j = {0};
  FBX_TRY(prelu_check(ctx, x, w, &j));
  if (!fbx_tensor_same_shape(g, x) || g->dtype != x->dtype) {
    char gs[256], xs[256];
    fbx_red_shape_str(gs, sizeof gs, g->ndim, g->sizes);
    fbx_red_shape_str(xs, sizeof xs, x->ndim, x->sizes);
    return fbx_kernel_error(ctx, "grad_output %s (%s) does not match self %s (%s)", gs, fbx_dtype_name(g->dtype), xs,
                            fbx_dtype_name(x->dtype));
  }
  fbx_dtype work = j.f64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_FLOAT32;
  j.nblk = (j.numel + PRELU_BLOCK - 1) / PRELU_BLOCK;
  if (j.nblk > 64) j.nblk = 64;
  if (j.nblk < 1) j.nblk = 1;
  j.part = fbx_calloc((size_t)(j.nblk * (j.wn > 0 ? j.wn : 1)), sizeof(double));
  fbx_status *st = j.part ? NULL : fbx_status_nomem();
  if (!st) st = fbx_contiguous_as(&gc, g, work);
  if (!st) st = fbx_contiguous_as(&xc, x, work);
  if (!st) st = fbx_contiguous_as(&wc, w, work);
  if (!st) st = fbx_tensor_empty(&gx, work, x->ndim, x->sizes);
  if (!st) st = fbx_tensor_empty(&gw, work, w->ndim, w->sizes);
  if (st) goto done;
  j.x = xc->data, j.g = gc->data, j.w = wc->data, j.y = gx->data;
  fbx_parallel_for(j.nblk, j.numel >= 4 * PRELU_BLOCK ? 1 : j.nblk, bwd_body, &j);
  for (int64_t c = 0; c < j.wn; c++) {
    double acc = 0;
    for (int64_t b = 0; b < j.nblk; b++) acc += j.part[b * j.wn + c];
    if (j.f64) ((double *)gw->data)[c] = acc;
    else ((float *)gw->data)[c] = (float)acc;
  }
  fbx_tensor **res[2] = {&gx, &gw};
  for (int k = 0; k < 2 && !st; k++)
    if ((*res[k])->dtype != x->dtype) {
      fbx_tensor *r = NULL;
      st = fbx_tensor_clone_as(&r, *res[k], x->dtype);
      fbx_tensor_release(*res[k]);
      *res[k] = r;
    }
  if (!st) {
    fbx_set_out_tensor(outs, 0, gx), fbx_set_out_tensor(outs, 1, gw);
    gx = gw = NULL;
  }
done:
  fbx_free(j.part);
  fbx_tensor_release(gc);
  fbx_tensor_release(xc);
  fbx_tensor_release(wc);
  fbx_tensor_release(gx);
  fbx_tensor_release(gw);
  return st;
}
