/* instance_norm, batch-norm-style backward ops and dropout's backward
 * helpers (rows in ops/list_nn.h).
 *
 * instance_norm is PyTorch's composition: the input [N, C, ...] viewed as
 * [1, N * C, ...], weight, bias and running statistics repeated N times,
 * then batch_norm's kernel with training = use_input_stats.
 *
 * The backward ops share one loop over a [N', C', S] view in double:
 * per statistics channel ch, with mean and invstd its statistics, w its
 * weight (1 without one), M = N' * S, sum = sum(g), dotp = sum((x - mean) g):
 *   train:     d x = (g - (x - mean) * dotp * invstd^2 / M - sum / M) * invstd * w
 *   not train: d x = g * invstd * w
 *   d weight[ch % wC] += dotp * invstd,   d bias[ch % wC] += sum
 * (PyTorch's batch_norm_backward_cpu_template). batch_norm: N' = N, C' = C;
 * instance_norm: N' = 1, C' = N * C, weights of period C. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kutil.h"
#include "ops/reduce.h"

/* An optional per-channel parameter (Tensor? of n elements, floating):
 * its values, or NULL for None. */
static fbx_status *param(const fbx_kctx *ctx, const fbx_ivalue *v, const char *what, int64_t n, double **out) {
  *out = NULL;
  if (v->kind == FBX_IV_NONE) return NULL;
  if (v->kind != FBX_IV_TENSOR) return fbx_kernel_error(ctx, "%s must be a Tensor or None", what);
  if (v->u.t->numel != n)
    return fbx_kernel_error(ctx, "%s must have %lld elements, got %lld", what, (long long)n, (long long)v->u.t->numel);
  if (!fbx_dtype_is_floating(v->u.t->dtype))
    return fbx_kernel_error(ctx, "%s must be floating point, got %s", what, fbx_dtype_name(v->u.t->dtype));
  return fbx_red_load_all_f64(out, v->u.t);
}

static fbx_status *norm_input(const fbx_kctx *ctx, fbx_tensor *x) {
  if (x->ndim < 2) return fbx_kernel_error(ctx, "expected an input of at least 2 dims [N, C, ...], got %dD", x->ndim);
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "expected a floating point input, got %s", fbx_dtype_name(x->dtype));
  return NULL;
}

/* A [n] tensor of t's dtype holding t (of `period` elements) repeated. */
static fbx_status *repeated(fbx_ivalue *out, const fbx_ivalue *v, int64_t period, int64_t n) {
  *out = fbx_iv_none();
  if (v->kind != FBX_IV_TENSOR) return NULL;
  fbx_tensor *r = NULL;
  FBX_TRY(fbx_tensor_empty(&r, v->u.t->dtype, 1, &n));
  for (int64_t i = 0; i < n; i++) fbx_tensor_set_f64(r, i, fbx_tensor_get_f64(v->u.t, i % period));
  *out = fbx_iv_tensor(r);
  return NULL;
}

/* instance_norm(input, weight?, bias?, running_mean?, running_var?,
 * use_input_stats, momentum, eps, cudnn_enabled) */
fbx_status *fbx_k_instance_norm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *c = NULL, *v = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(norm_input(ctx, x));
  if (args[5].kind != FBX_IV_BOOL && args[5].kind != FBX_IV_INT)
    return fbx_kernel_error(ctx, "use_input_stats must be a bool");
  bool use_stats = fbx_iv_to_int(&args[5]) != 0;
  if (!use_stats && (args[3].kind == FBX_IV_NONE || args[4].kind == FBX_IV_NONE))
    return fbx_kernel_error(ctx, "Expected running_mean and running_var to be defined when use_input_stats is false");
  int64_t N = x->sizes[0], C = x->sizes[1];
  for (int i = 1; i <= 4; i++) {
    static const char *const names[] = {"", "weight", "bias", "running_mean", "running_var"};
    if (args[i].kind == FBX_IV_TENSOR && args[i].u.t->numel != C)
      return fbx_kernel_error(ctx, "%s must have %lld elements, got %lld", names[i], (long long)C,
                              (long long)args[i].u.t->numel);
  }
  fbx_ivalue a[9] = {{0}};
  for (int i = 5; i < 9; i++) a[i] = args[i];
  int64_t sizes[FBX_MAX_DIMS];
  memcpy(sizes, x->sizes, sizeof sizes);
  sizes[0] = 1;
  sizes[1] = N * C;
  fbx_status *st = fbx_tensor_contiguous(&c, x);
  if (!st) st = fbx_tensor_view(&v, c, x->ndim, sizes, NULL, c->offset);
  for (int i = 1; !st && i <= 4; i++) st = repeated(&a[i], &args[i], C, N * C);
  if (st) goto done;
  a[0] = fbx_iv_tensor(v);
  fbx_ivalue o[1] = {fbx_iv_none()};
  if ((st = fbx_k_batch_norm(ctx, a, o))) goto done;
  fbx_tensor *y = NULL;
  st = fbx_tensor_view(&y, o[0].u.t, x->ndim, x->sizes, NULL, o[0].u.t->offset);
  fbx_tensor_release(o[0].u.t);
  if (!st) fbx_set_out_tensor(outs, 0, y);
done:
  for (int i = 1; i <= 4; i++)
    if (a[i].kind == FBX_IV_TENSOR) fbx_tensor_release(a[i].u.t);
  fbx_tensor_release(v);
  fbx_tensor_release(c);
  return st;
}

/* ---- the backward loop ----------------------------------------------------------------------- */

typedef struct bn_bwd {
  int64_t N, C, S, wC;  /* [N, C, S] view; weights of period wC */
  const double *g, *x;  /* [N, C, S] */
  const double *w;      /* [wC] or NULL */
  const double *mean, *invstd; /* [C] */
  bool train;
  double *gi;           /* [N, C, S] or NULL */
  double *gw, *gb;      /* [wC], zeroed; or NULL */
} bn_bwd;

static void bn_bwd_run(const bn_bwd *b) {
  double M = (double)(b->N * b->S);
  for (int64_t ch = 0; ch < b->C; ch++) {
    double sum = 0, dotp = 0, mu = b->mean[ch], is = b->invstd[ch];
    for (int64_t n = 0; n < b->N; n++) {
      const double *g = b->g + (n * b->C + ch) * b->S, *x = b->x + (n * b->C + ch) * b->S;
      for (int64_t s = 0; s < b->S; s++) sum += g[s], dotp += (x[s] - mu) * g[s];
    }
    double w = b->w ? b->w[ch % b->wC] : 1;
    if (b->gw) b->gw[ch % b->wC] += dotp * is;
    if (b->gb) b->gb[ch % b->wC] += sum;
    if (!b->gi) continue;
    double proj = M > 0 ? dotp * is * is / M : 0, gmean = M > 0 ? sum / M : 0;
    for (int64_t n = 0; n < b->N; n++) {
      const double *g = b->g + (n * b->C + ch) * b->S, *x = b->x + (n * b->C + ch) * b->S;
      double *gi = b->gi + (n * b->C + ch) * b->S;
      for (int64_t s = 0; s < b->S; s++)
        gi[s] = b->train ? (g[s] - (x[s] - mu) * proj - gmean) * is * w : g[s] * is * w;
    }
  }
}

/* The common driver: g and x tensors, the statistics (mean/invstd from
 * the input when `from_input`, else the given arrays or the running
 * statistics plus eps), the gradients wanted; outputs None where not. */
typedef struct bn_call {
  fbx_tensor *g, *x;
  const fbx_ivalue *weight;
  bool instance;        /* [1, N * C, S] view, weights of period C */
  bool train;
  bool from_input;      /* statistics from the input (train) */
  const fbx_ivalue *mean, *var_or_invstd; /* running (var) or saved (invstd) */
  bool saved;           /* mean/var_or_invstd are save_mean/save_invstd */
  double eps;
  bool want[3];
  bool none_without_weight; /* d weight None when weight is None */
} bn_call;

static fbx_status *bn_backward(const fbx_kctx *ctx, const bn_call *c, fbx_ivalue *outs) {
  fbx_tensor *x = c->x, *g = c->g;
  FBX_TRY(norm_input(ctx, x));
  if (!fbx_tensor_same_shape(g, x)) return fbx_kernel_error(ctx, "the gradient and the input differ in shape");
  int64_t N = x->sizes[0], C = x->sizes[1], S = 1;
  for (int i = 2; i < x->ndim; i++) S *= x->sizes[i];
  bn_bwd b = {.N = c->instance ? 1 : N, .C = c->instance ? N * C : C, .S = S, .wC = C, .train = c->train};
  double *gv = NULL, *xv = NULL, *w = NULL, *pm = NULL, *pv = NULL, *mean = NULL, *invstd = NULL;
  double *gi = NULL, *gw = NULL, *gb = NULL;
  fbx_tensor *t0 = NULL, *t1 = NULL, *t2 = NULL;
  fbx_status *st = param(ctx, c->weight, "weight", C, &w);
  if (!st && !c->from_input) {
    if (c->mean->kind == FBX_IV_NONE || c->var_or_invstd->kind == FBX_IV_NONE)
      st = fbx_kernel_error(ctx, c->saved ? "save_mean and save_invstd must be given when train is True"
                                          : "running_mean and running_var must be given when train is False");
    int64_t n = c->saved ? b.C : C;
    if (!st) st = param(ctx, c->mean, c->saved ? "save_mean" : "running_mean", n, &pm);
    if (!st) st = param(ctx, c->var_or_invstd, c->saved ? "save_invstd" : "running_var", n, &pv);
  }
  if (!st) st = fbx_red_load_all_f64(&gv, g);
  if (!st) st = fbx_red_load_all_f64(&xv, x);
  if (!st) {
    mean = fbx_malloc(sizeof(double) * (size_t)(b.C ? b.C : 1));
    invstd = fbx_malloc(sizeof(double) * (size_t)(b.C ? b.C : 1));
    gi = fbx_malloc(sizeof(double) * (size_t)(x->numel ? x->numel : 1));
    gw = fbx_calloc((size_t)(C ? C : 1), sizeof(double));
    gb = fbx_calloc((size_t)(C ? C : 1), sizeof(double));
    if (!mean || !invstd || !gi || !gw || !gb) st = fbx_status_nomem();
  }
  if (st) goto done;
  for (int64_t ch = 0; ch < b.C; ch++) {
    if (c->from_input) {
      double s = 0, q = 0, M = (double)(b.N * S);
      for (int64_t n = 0; n < b.N; n++)
        for (int64_t k = 0; k < S; k++) s += xv[(n * b.C + ch) * S + k];
      double mu = M > 0 ? s / M : 0;
      for (int64_t n = 0; n < b.N; n++)
        for (int64_t k = 0; k < S; k++) {
          double d = xv[(n * b.C + ch) * S + k] - mu;
          q += d * d;
        }
      mean[ch] = mu;
      invstd[ch] = 1 / sqrt((M > 0 ? q / M : 0) + c->eps);
    } else if (c->saved) {
      mean[ch] = pm[ch], invstd[ch] = pv[ch];
    } else {
      mean[ch] = pm[ch % C], invstd[ch] = 1 / sqrt(pv[ch % C] + c->eps);
    }
  }
  b.g = gv, b.x = xv, b.w = w, b.mean = mean, b.invstd = invstd, b.gi = gi, b.gw = gw, b.gb = gb;
  bn_bwd_run(&b);
  fbx_dtype pdt = c->weight->kind == FBX_IV_TENSOR ? c->weight->u.t->dtype : x->dtype;
  if (c->want[0] && (st = fbx_red_store_all_f64(&t0, x->dtype, x->ndim, x->sizes, gi))) goto done;
  bool wgrad = c->want[1] && !(c->none_without_weight && !w);
  if (wgrad && (st = fbx_red_store_all_f64(&t1, pdt, 1, &C, gw))) goto done;
  if (c->want[2] && (st = fbx_red_store_all_f64(&t2, pdt, 1, &C, gb))) goto done;
  outs[0] = t0 ? fbx_iv_tensor(t0) : fbx_iv_none();
  outs[1] = t1 ? fbx_iv_tensor(t1) : fbx_iv_none();
  outs[2] = t2 ? fbx_iv_tensor(t2) : fbx_iv_none();
  t0 = t1 = t2 = NULL;
done:
  fbx_tensor_release(t0);
  fbx_tensor_release(t1);
  fbx_tensor_release(t2);
  fbx_free(gv);
  fbx_free(xv);
  fbx_free(w);
  fbx_free(pm);
  fbx_free(pv);
  fbx_free(mean);
  fbx_free(invstd);
  fbx_free(gi);
  fbx_free(gw);
  fbx_free(gb);
  return st;
}

static fbx_status *flag(const fbx_kctx *ctx, const fbx_ivalue *v, const char *what, bool *out) {
  if (v->kind != FBX_IV_BOOL && v->kind != FBX_IV_INT) return fbx_kernel_error(ctx, "%s must be a bool", what);
  *out = fbx_iv_to_int(v) != 0;
  return NULL;
}

/* native_batch_norm_backward(grad_out, input, weight?, running_mean?,
 * running_var?, save_mean?, save_invstd?, train, eps, output_mask) */
fbx_status *fbx_k_native_batch_norm_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  bn_call c = {.weight = &args[2]};
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &c.g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &c.x));
  FBX_TRY(flag(ctx, &args[7], "train", &c.train));
  if (!fbx_iv_is_scalar(&args[8])) return fbx_kernel_error(ctx, "eps must be a float");
  c.eps = fbx_iv_to_double(&args[8]);
  if (args[9].kind != FBX_IV_LIST || fbx_iv_list_len(&args[9]) != 3)
    return fbx_kernel_error(ctx, "output_mask must be a list of 3 bools");
  for (int k = 0; k < 3; k++) FBX_TRY(flag(ctx, fbx_iv_list_at(&args[9], k), "output_mask", &c.want[k]));
  c.saved = c.train;
  c.mean = c.train ? &args[5] : &args[3];
  c.var_or_invstd = c.train ? &args[6] : &args[4];
  return bn_backward(ctx, &c, outs);
}

/* fusebox::batch_norm_backward / fusebox::instance_norm_backward(grad,
 * input, weight?, running_mean?, running_var?, training, eps) */
fbx_status *fbx_k_fbx_batch_norm_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  bn_call c = {.weight = &args[2], .mean = &args[3], .var_or_invstd = &args[4], .want = {true, true, true},
               .none_without_weight = true};
  c.instance = !strcmp(fbx_sym_unqual(ctx->op->schema.name), "instance_norm_backward");
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &c.g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &c.x));
  FBX_TRY(flag(ctx, &args[5], c.instance ? "use_input_stats" : "training", &c.train));
  if (!fbx_iv_is_scalar(&args[6])) return fbx_kernel_error(ctx, "eps must be a float");
  c.eps = fbx_iv_to_double(&args[6]);
  /* batch statistics when training or when a running statistic is None (as the forward) */
  c.from_input = c.train || args[3].kind == FBX_IV_NONE || args[4].kind == FBX_IV_NONE;
  c.train = c.from_input;
  return bn_backward(ctx, &c, outs);
}

/* ---- dropout ----------------------------------------------------------------------------------- */

static fbx_status *prob(const fbx_kctx *ctx, const fbx_ivalue *v, double *p) {
  if (!fbx_iv_is_scalar(v)) return fbx_kernel_error(ctx, "p must be a float");
  *p = fbx_iv_to_double(v);
  if (!(*p >= 0 && *p <= 1)) return fbx_kernel_error(ctx, "dropout probability has to be between 0 and 1, but got %g", *p);
  return NULL;
}

/* fusebox::dropout_backward(grad, result, p, train) */
fbx_status *fbx_k_fbx_dropout_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *r, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &r));
  double p;
  bool train = false;
  FBX_TRY(prob(ctx, &args[2], &p));
  FBX_TRY(flag(ctx, &args[3], "train", &train));
  if (!train) {
    FBX_TRY(fbx_tensor_clone_as(&y, g, g->dtype));
    fbx_set_out_tensor(outs, 0, y);
    return NULL;
  }
  if (!fbx_tensor_same_shape(g, r)) return fbx_kernel_error(ctx, "grad and result differ in shape");
  double *gv = NULL, *rv = NULL, scale = p < 1 ? 1 / (1 - p) : 0;
  fbx_status *st = fbx_red_load_all_f64(&gv, g);
  if (!st) st = fbx_red_load_all_f64(&rv, r);
  if (!st) {
    for (int64_t i = 0; i < g->numel; i++) gv[i] = rv[i] != 0 ? gv[i] * scale : 0;
    st = fbx_red_store_all_f64(&y, g->dtype, g->ndim, g->sizes, gv);
  }
  if (!st) fbx_set_out_tensor(outs, 0, y);
  fbx_free(gv);
  fbx_free(rv);
  return st;
}

/* fusebox::dropout_scale(p, train?) */
fbx_status *fbx_k_fbx_dropout_scale(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  double p;
  FBX_TRY(prob(ctx, &args[0], &p));
  bool train = false;
  if (args[1].kind != FBX_IV_NONE) FBX_TRY(flag(ctx, &args[1], "train", &train));
  outs[0] = fbx_iv_float(!train ? 1 : p == 1 ? 0 : 1 / (1 - p));
  return NULL;
}

/* native_dropout_backward(grad_output, mask, scale) = grad_output * mask * scale */
fbx_status *fbx_k_native_dropout_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *m, *y = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &m));
  if (!fbx_iv_is_scalar(&args[2])) return fbx_kernel_error(ctx, "scale must be a float");
  double scale = fbx_iv_to_double(&args[2]);
  if (!fbx_tensor_same_shape(g, m)) return fbx_kernel_error(ctx, "grad_output and mask differ in shape");
  if (!fbx_dtype_is_floating(g->dtype))
    return fbx_kernel_error(ctx, "expected a floating point grad_output, got %s", fbx_dtype_name(g->dtype));
  double *gv = NULL, *mv = NULL;
  fbx_status *st = fbx_red_load_all_f64(&gv, g);
  if (!st) st = fbx_red_load_all_f64(&mv, m);
  if (!st) {
    for (int64_t i = 0; i < g->numel; i++) gv[i] = gv[i] * mv[i] * scale;
    st = fbx_red_store_all_f64(&y, g->dtype, g->ndim, g->sizes, gv);
  }
  if (!st) fbx_set_out_tensor(outs, 0, y);
  fbx_free(gv);
  fbx_free(mv);
  return st;
}
