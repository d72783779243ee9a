/* Kernels for the distance, ranking and embedding losses of
 * ops/list_extra.h (kl_div, pairwise_distance, triplet_margin_loss,
 * margin_ranking_loss, soft_margin_loss, hinge_embedding_loss,
 * cosine_embedding_loss, poisson_nll_loss, multi_margin_loss,
 * multilabel_margin_loss) and fusebox::norm_backward and the two margin
 * losses' backward rows (ops/list_backward.h).
 *
 * The first ones are compositions of other rows (ops/kcompose.h) in the
 * order ATen 1.13 composes them, so rounding, promotion and NaN
 * propagation are those rows'. multi_margin_loss and multilabel_margin_loss
 * are loops of their own (as in ATen), in double, with backward ops of
 * their own. Reductions: 0 none, 1 mean, 2 sum. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kcompose.h"

/* aten::kl_div(self, target, reduction=1, *, log_target=False), self holding
 * log-probabilities:
 *   log_target: exp(target) * (target - self)
 *   else:       xlogy(target, target) - target * self, xlogy(t, t) being
 *               t * log(t) with 0 where t == 0 (NaN stays NaN). */
fbx_status *fbx_k_kl_div(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *t, *a[5] = {NULL}, *l = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &t));
  fbx_status *st;
  if (fbx_iv_to_int(&args[3])) {
    st = ROW(&a[0], exp, TV(t));
    if (!st) st = ROW(&a[1], sub_Tensor, TV(t), TV(x));
    if (!st) st = ROW(&l, mul_Tensor, TV(a[0]), TV(a[1]));
  } else {
    st = ROW(&a[0], log, TV(t));
    if (!st) st = ROW(&a[1], mul_Tensor, TV(t), TV(a[0]));
    if (!st) st = ROW(&a[2], eq_Scalar, TV(t), IV(0));
    if (!st) st = ROW(&a[3], masked_fill_Scalar, TV(a[1]), TV(a[2]), IV(0));
    if (!st) st = ROW(&a[4], mul_Tensor, TV(t), TV(x));
    if (!st) st = ROW(&l, sub_Tensor, TV(a[3]), TV(a[4]));
  }
  if (!st) st = fbx_loss_reduce(ctx, &out, l, fbx_iv_to_int(&args[2]));
  release_all(a, 5);
  fbx_tensor_release(l);
  return finish(st, outs, &out);
}

/* ||x1 - x2 + eps||_p over the last dim of the broadcast (ATen's order). */
static fbx_status *pdist(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *x1, fbx_tensor *x2, double p, double eps,
                         bool keepdim) {
  fbx_tensor *d = NULL, *de = NULL;
  fbx_status *st = ROW(&d, sub_Tensor, TV(x1), TV(x2));
  if (!st) st = ROW(&de, add_Scalar, TV(d), FV(eps), IV(1));
  if (!st) st = ROW(out, norm_ScalarOpt_dim, TV(de), FV(p), IV(-1), BV(keepdim));
  fbx_tensor_release(d);
  fbx_tensor_release(de);
  return st;
}

/* aten::pairwise_distance(x1, x2, p=2, eps=1e-6, keepdim=False) */
fbx_status *fbx_k_pairwise_distance(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x1, *x2, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x1));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x2));
  double p = fbx_iv_to_double(&args[2]), eps = fbx_iv_to_double(&args[3]);
  return finish(pdist(ctx, &out, x1, x2, p, eps, fbx_iv_to_int(&args[4]) != 0), outs, &out);
}

/* aten::triplet_margin_loss(anchor, positive, negative, margin=1, p=2, eps=1e-6, swap=False, reduction=1):
 * max(margin + d(a, p) - d(a, n), 0), d the pairwise distance; swap takes
 * min(d(a, n), d(p, n)) for the negative distance. */
fbx_status *fbx_k_triplet_margin_loss(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *p, *n, *t[6] = {NULL}, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &p));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &n));
  if (a->ndim != p->ndim || p->ndim != n->ndim)
    return fbx_kernel_error(ctx, "All inputs should have same dimension but got %dD, %dD and %dD inputs.", a->ndim,
                            p->ndim, n->ndim);
  double margin = fbx_iv_to_double(&args[3]), pn = fbx_iv_to_double(&args[4]), eps = fbx_iv_to_double(&args[5]);
  fbx_status *st = pdist(ctx, &t[0], a, p, pn, eps, false);
  if (!st) st = pdist(ctx, &t[1], a, n, pn, eps, false);
  fbx_tensor *dneg = t[1];
  if (!st && fbx_iv_to_int(&args[6])) {
    st = pdist(ctx, &t[2], p, n, pn, eps, false);
    if (!st) st = ROW(&t[3], min_other, TV(t[1]), TV(t[2]));
    dneg = t[3];
  }
  if (!st) st = ROW(&t[4], add_Scalar, TV(t[0]), FV(margin), IV(1));
  if (!st) st = ROW(&t[5], sub_Tensor, TV(t[4]), TV(dneg));
  if (!st) {
    fbx_tensor *l = NULL;
    st = ROW(&l, clamp_min, TV(t[5]), IV(0));
    if (!st) st = fbx_loss_reduce(ctx, &out, l, fbx_iv_to_int(&args[7]));
    fbx_tensor_release(l);
  }
  release_all(t, 6);
  return finish(st, outs, &out);
}

/* aten::margin_ranking_loss(input1, input2, target, margin=0, reduction=1):
 *   max(-target * (input1 - input2) + margin, 0)
 * aten::soft_margin_loss(self, target, reduction=1):
 *   log1p(exp(-self * target)), in self's dtype (ATen writes it into an
 *   output of self's options)
 * aten::hinge_embedding_loss(self, target, margin=1, reduction=1):
 *   (target != 1 ? max(margin - self, 0) : 0) + (target != -1 ? self : 0) */
fbx_status *fbx_k_margin_loss(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y, *t[6] = {NULL}, *l = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &y));
  fbx_op_id id = (fbx_op_id)ctx->op->id;
  fbx_status *st = NULL;
  int red_arg;
  if (id == FBX_OP_margin_ranking_loss) {
    fbx_tensor *target;
    red_arg = 4;
    st = fbx_arg_tensor(ctx, args, 2, &target);
    if (!st) st = ROW(&t[0], neg, TV(target));
    if (!st) st = ROW(&t[1], sub_Tensor, TV(x), TV(y));
    if (!st) st = ROW(&t[2], mul_Tensor, TV(t[0]), TV(t[1]));
    if (!st) st = ROW(&t[3], add_Scalar, TV(t[2]), args[3], IV(1));
    if (!st) st = ROW(&l, clamp_min, TV(t[3]), IV(0));
  } else if (id == FBX_OP_soft_margin_loss) {
    red_arg = 2;
    fbx_tensor *ty = y;
    if (y->dtype != x->dtype) {
      st = fbx_tensor_clone_as(&t[0], y, x->dtype);
      ty = t[0];
    }
    if (!st) st = ROW(&t[1], neg, TV(x));
    if (!st) st = ROW(&t[2], mul_Tensor, TV(t[1]), TV(ty));
    if (!st) st = ROW(&t[3], exp, TV(t[2]));
    if (!st) st = ROW(&l, log1p, TV(t[3]));
  } else { /* hinge_embedding_loss */
    red_arg = 3;
    st = ROW(&t[0], rsub_Scalar, TV(x), args[2], IV(1));
    if (!st) st = ROW(&t[1], clamp_min, TV(t[0]), IV(0));
    if (!st) st = ROW(&t[2], ne_Scalar, TV(y), IV(1));
    if (!st) st = ROW(&t[3], where_ScalarOther, TV(t[2]), TV(t[1]), IV(0));
    if (!st) st = ROW(&t[4], ne_Scalar, TV(y), IV(-1));
    if (!st) st = ROW(&t[5], where_ScalarOther, TV(t[4]), TV(x), IV(0));
    if (!st) st = ROW(&l, add_Tensor, TV(t[3]), TV(t[5]));
  }
  if (!st) st = fbx_loss_reduce(ctx, &out, l, fbx_iv_to_int(&args[red_arg]));
  release_all(t, 6);
  fbx_tensor_release(l);
  return finish(st, outs, &out);
}

/* ATen's EPSILON for cosine_embedding_loss: the float 1e-12f, added as a double. */
#define COS_EMB_EPS ((double)1e-12f)

/* aten::cosine_embedding_loss(input1, input2, target, margin=0, reduction=1):
 * cos = sum(x1 x2) / sqrt((sum(x1^2) + e) (sum(x2^2) + e)) over dim
 * target.dim() (target 0-D with 1-D inputs, or 1-D with 2-D inputs);
 * loss = 1 - cos where target == 1, max(cos - margin, 0) where target == -1,
 * else 0. */
fbx_status *fbx_k_cosine_embedding_loss(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x1, *x2, *y, *t[16] = {NULL}, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x1));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x2));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &y));
  int td = y->ndim;
  if (td > 1) return fbx_kernel_error(ctx, "0D or 1D target tensor expected, multi-target not supported");
  if (x1->ndim != td + 1)
    return fbx_kernel_error(ctx, "%dD target tensor expects %dD input tensors, but found inputs with %d and %d dims.",
                            td, td + 1, x1->ndim, x2->ndim);
  fbx_ivalue dim = IV(td);
  fbx_status *st = ROW(&t[0], mul_Tensor, TV(x1), TV(x2));
  if (!st) st = ROW(&t[1], sum_dim_IntList, TV(t[0]), dim, BV(false), NV);
  if (!st) st = ROW(&t[2], mul_Tensor, TV(x1), TV(x1));
  if (!st) st = ROW(&t[3], sum_dim_IntList, TV(t[2]), dim, BV(false), NV);
  if (!st) st = ROW(&t[4], add_Scalar, TV(t[3]), FV(COS_EMB_EPS), IV(1));
  if (!st) st = ROW(&t[5], mul_Tensor, TV(x2), TV(x2));
  if (!st) st = ROW(&t[6], sum_dim_IntList, TV(t[5]), dim, BV(false), NV);
  if (!st) st = ROW(&t[7], add_Scalar, TV(t[6]), FV(COS_EMB_EPS), IV(1));
  if (!st) st = ROW(&t[8], mul_Tensor, TV(t[4]), TV(t[7]));
  if (!st) st = ROW(&t[9], sqrt, TV(t[8]));
  if (!st) st = ROW(&t[10], div_Tensor, TV(t[1]), TV(t[9])); /* cos */
  if (!st) st = ROW(&t[11], rsub_Scalar, TV(t[10]), IV(1), IV(1));
  if (!st) st = ROW(&t[12], sub_Scalar, TV(t[10]), args[3], IV(1));
  if (!st) st = ROW(&t[13], clamp_min, TV(t[12]), IV(0));
  if (!st) {
    fbx_tensor *c1 = NULL, *c2 = NULL, *o1 = NULL, *o2 = NULL, *l = NULL;
    st = ROW(&c1, eq_Scalar, TV(y), IV(1));
    if (!st) st = ROW(&o1, where_ScalarOther, TV(c1), TV(t[11]), IV(0));
    if (!st) st = ROW(&c2, eq_Scalar, TV(y), IV(-1));
    if (!st) st = ROW(&o2, where_ScalarOther, TV(c2), TV(t[13]), IV(0));
    if (!st) st = ROW(&l, add_Tensor, TV(o1), TV(o2));
    if (!st) st = fbx_loss_reduce(ctx, &out, l, fbx_iv_to_int(&args[4]));
    fbx_tensor *tmp[] = {c1, c2, o1, o2, l};
    release_all(tmp, 5);
  }
  release_all(t, 16);
  return finish(st, outs, &out);
}

/* aten::poisson_nll_loss(input, target, log_input, full, eps, reduction):
 *   log_input: exp(input) - target * input, else input - target * log(input + eps);
 *   full adds Stirling's term target * log(target) - target + 0.5 * log(2 pi target)
 *   where target > 1. */
fbx_status *fbx_k_poisson_nll_loss(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y, *t[12] = {NULL}, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &y));
  fbx_status *st;
  if (fbx_iv_to_int(&args[2])) {
    st = ROW(&t[0], exp, TV(x));
    if (!st) st = ROW(&t[1], mul_Tensor, TV(y), TV(x));
    if (!st) st = ROW(&t[2], sub_Tensor, TV(t[0]), TV(t[1]));
  } else {
    st = ROW(&t[0], add_Scalar, TV(x), args[4], IV(1));
    if (!st) st = ROW(&t[3], log, TV(t[0]));
    if (!st) st = ROW(&t[1], mul_Tensor, TV(y), TV(t[3]));
    if (!st) st = ROW(&t[2], sub_Tensor, TV(x), TV(t[1]));
  }
  fbx_tensor *l = t[2];
  if (!st && fbx_iv_to_int(&args[3])) {
    st = ROW(&t[4], log, TV(y));
    if (!st) st = ROW(&t[5], mul_Tensor, TV(y), TV(t[4]));
    if (!st) st = ROW(&t[6], sub_Tensor, TV(t[5]), TV(y));
    if (!st) st = ROW(&t[7], mul_Scalar, TV(y), FV(2 * 3.14159265358979323846));
    if (!st) st = ROW(&t[8], log, TV(t[7]));
    if (!st) st = ROW(&t[9], mul_Scalar, TV(t[8]), FV(0.5));
    if (!st) st = ROW(&t[10], add_Tensor, TV(t[6]), TV(t[9]));
    if (!st) {
      fbx_tensor *le = NULL, *m = NULL;
      st = ROW(&le, le_Scalar, TV(y), IV(1));
      if (!st) st = ROW(&m, masked_fill_Scalar, TV(t[10]), TV(le), IV(0));
      if (!st) st = ROW(&t[11], add_Tensor, TV(t[2]), TV(m));
      fbx_tensor_release(le);
      fbx_tensor_release(m);
      l = t[11];
    }
  }
  if (!st) st = fbx_loss_reduce(ctx, &out, l, fbx_iv_to_int(&args[5]));
  release_all(t, 12);
  return finish(st, outs, &out);
}

/* fusebox::norm_backward(grad, self, result, p, dim?, keepdim): see ops/list_backward.h.
 * The same cases as the gradient builder of the norm rows, with p known at
 * run time. */
fbx_status *fbx_k_fbx_norm_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad, *self, *res, *t[8] = {NULL}, *g = NULL, *r = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &self));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &res));
  double p = fbx_iv_to_double(&args[3]);
  fbx_ivalue sizes;
  FBX_TRY(fbx_int_list_iv(&sizes, self->ndim, self->sizes));
  fbx_status *st = NULL;
  if (p == 0) {
    st = ROW(&out, zeros_like, TV(self), IV(grad->dtype));
    fbx_iv_release(&sizes);
    return finish(st, outs, &out);
  }
  st = ROW(&g, fbx_sum_backward, TV(grad), sizes, args[4], args[5]);
  if (!st && p != 1) st = ROW(&r, fbx_sum_backward, TV(res), sizes, args[4], args[5]);
  fbx_iv_release(&sizes);
  if (st) {
  } else if (p == 1) {
    st = ROW(&t[0], sign, TV(self));
    if (!st) st = ROW(&out, mul_Tensor, TV(t[0]), TV(g));
  } else if (isinf(p)) {
    st = ROW(&t[0], abs, TV(self));
    if (!st) st = ROW(&t[1], eq_Tensor, TV(t[0]), TV(r));
    if (!st) st = ROW(&t[2], sum_dim_IntList, TV(t[1]), args[4], BV(true), NV);
    if (!st) st = ROW(&t[3], sign, TV(self));
    if (!st) st = ROW(&t[4], mul_Tensor, TV(t[3]), TV(t[1]));
    if (!st) st = ROW(&t[5], div_Tensor, TV(g), TV(t[2]));
    if (!st) st = ROW(&out, mul_Tensor, TV(t[4]), TV(t[5]));
  } else {
    fbx_tensor *num = self, *den = r;
    if (p != 2) {
      st = ROW(&t[0], abs, TV(self));
      if (!st) st = ROW(&t[1], pow_Tensor_Scalar, TV(t[0]), FV(p - 1));
      if (!st) st = ROW(&t[2], sign, TV(self));
      if (!st) st = ROW(&t[3], mul_Tensor, TV(t[2]), TV(t[1]));
      if (!st) st = ROW(&t[4], pow_Tensor_Scalar, TV(r), FV(p - 1));
      num = t[3], den = t[4];
    }
    if (!st) st = ROW(&t[5], mul_Tensor, TV(num), TV(g));
    if (!st) st = ROW(&t[6], div_Tensor, TV(t[5]), TV(den));
    if (!st) st = ROW(&t[7], eq_Scalar, TV(r), IV(0));
    if (!st) st = ROW(&out, masked_fill_Scalar, TV(t[6]), TV(t[7]), IV(0));
  }
  release_all(t, 8);
  fbx_tensor_release(g);
  fbx_tensor_release(r);
  return finish(st, outs, &out);
}

/* ---- multi_margin_loss, multilabel_margin_loss: loops of their own -------------------------------- */

/* The [N, C] view of a margin loss's input ([C] is one sample) and its
 * target as a contiguous int64 copy; checks shared by the forwards and the
 * backwards. */
typedef struct margin_in {
  fbx_tensor *x, *t; /* float64 [N * C], int64 */
  int64_t N, C;
} margin_in;

static void margin_in_release(margin_in *m) {
  fbx_tensor_release(m->x);
  fbx_tensor_release(m->t);
}

static fbx_status *margin_in_make(const fbx_kctx *ctx, margin_in *m, fbx_tensor *x, fbx_tensor *t, const char *kname,
                                  bool multilabel) {
  memset(m, 0, sizeof *m);
  if (x->dtype != FBX_DTYPE_FLOAT32 && x->dtype != FBX_DTYPE_FLOAT64)
    return fbx_kernel_error(ctx, "\"%s\" not implemented for '%s'", kname, fbx_dtype_torch_name(x->dtype));
  if (!((x->ndim == 1 && x->sizes[0] > 0) || (x->ndim == 2 && x->sizes[1] > 0)))
    return fbx_kernel_error(ctx, "Expected non-empty vector or matrix with optional 0-dim batch size, but got a %d-D "
                                 "input", x->ndim);
  if (t->dtype != FBX_DTYPE_INT64)
    return fbx_kernel_error(ctx, "expected scalar type Long but found %s", fbx_dtype_torch_name(t->dtype));
  m->N = x->ndim == 2 ? x->sizes[0] : 1, m->C = x->sizes[x->ndim - 1];
  if (multilabel ? !fbx_tensor_same_shape(x, t) : !(t->ndim <= 1 && t->numel == m->N))
    return fbx_kernel_error(ctx, multilabel ? "inconsistent size for argument #2 'target' (the input's shape expected)"
                                            : "inconsistent target size: %" PRId64 " entries for %" PRId64 " samples",
                            t->numel, m->N);
  fbx_status *st = fbx_tensor_clone_as(&m->x, x, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_clone_as(&m->t, t, FBX_DTYPE_INT64);
  const int64_t *tv = m->t ? m->t->data : NULL;
  for (int64_t i = 0; !st && i < m->t->numel; i++)
    if (tv[i] < (multilabel ? -1 : 0) || tv[i] >= m->C)
      st = fbx_kernel_error(ctx, multilabel ? "argument #2 'target' is out of range" : "target out of range");
  if (st) margin_in_release(m);
  return st;
}

/* The loss tensor: [N] per-sample values for reduction none (when `keep`),
 * else their mean or sum as a 0-d tensor; dtype dt. */
static fbx_status *margin_out(const fbx_kctx *ctx, fbx_tensor **out, const double *per, int64_t N, int64_t red,
                              bool keep, fbx_dtype dt) {
  fbx_tensor *r = NULL;
  if (red < 0 || red > 2) return fbx_kernel_error(ctx, "%" PRId64 " is not a valid value for reduction", red);
  if (red == 0 && keep) {
    FBX_TRY(fbx_tensor_empty(&r, FBX_DTYPE_FLOAT64, 1, &N));
    memcpy(r->data, per, sizeof(double) * (size_t)N);
  } else {
    double s = 0;
    for (int64_t i = 0; i < N; i++) s += per[i];
    FBX_TRY(fbx_tensor_empty(&r, FBX_DTYPE_FLOAT64, 0, NULL));
    *(double *)r->data = red == 1 ? s / (double)N : s;
  }
  fbx_status *st = fbx_tensor_clone_as(out, r, dt);
  fbx_tensor_release(r);
  return st;
}

/* multi_margin_loss's p (an int, 1 or 2; a float is truncated as ATen's
 * Scalar.toInt does) and weight (None or C entries, as float64). */
static fbx_status *multi_margin_params(const fbx_kctx *ctx, const fbx_ivalue *p, const fbx_ivalue *w, int64_t C,
                                       int *pp, fbx_tensor **wc) {
  *wc = NULL;
  if (!fbx_iv_is_scalar(p)) return fbx_kernel_error(ctx, "p must be a number");
  double pd = fbx_iv_to_double(p);
  *pp = pd >= 1 && pd < 3 ? (int)pd : 0;
  if (*pp != 1 && *pp != 2) return fbx_kernel_error(ctx, "only p == 1 and p == 2 supported");
  if (w->kind != FBX_IV_TENSOR) return NULL;
  if (w->u.t->numel != C)
    return fbx_kernel_error(ctx, "weight must have one entry per class (%" PRId64 "), got %" PRId64, C, w->u.t->numel);
  return fbx_tensor_clone_as(wc, w->u.t, FBX_DTYPE_FLOAT64);
}

/* aten::multi_margin_loss(self, target, p=1, margin=1, weight=None, reduction=1):
 * per sample, sum over classes d != y of w[y] max(0, margin - x[y] + x[d])^p, over C. */
fbx_status *fbx_k_multi_margin_loss(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *t, *wc = NULL, *out = NULL;
  margin_in m;
  int p;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &t));
  FBX_TRY(margin_in_make(ctx, &m, x, t, "multi_margin_loss_cpu_kernel", false));
  double margin = fbx_iv_to_double(&args[3]), *per = NULL;
  fbx_status *st = multi_margin_params(ctx, &args[2], &args[4], m.C, &p, &wc);
  if (!st && !(per = fbx_malloc(sizeof *per * (size_t)(m.N ? m.N : 1)))) st = fbx_status_nomem();
  if (!st) {
    const double *xv = m.x->data, *wv = wc ? wc->data : NULL;
    const int64_t *tv = m.t->data;
    for (int64_t i = 0; i < m.N; i++) {
      const double *xi = xv + i * m.C;
      int64_t y = tv[i];
      double s = 0;
      for (int64_t d = 0; d < m.C; d++) {
        double z = margin - xi[y] + xi[d];
        if (d == y || !(z > 0)) continue;
        double h = p == 1 ? z : z * z;
        s += wv ? h * wv[y] : h;
      }
      per[i] = s / (double)m.C;
    }
    st = margin_out(ctx, &out, per, m.N, fbx_iv_to_int(&args[5]), t->ndim > 0, x->dtype);
  }
  fbx_free(per);
  fbx_tensor_release(wc);
  margin_in_release(&m);
  return finish(st, outs, &out);
}

/* aten::multi_margin_loss_backward(grad_output, self, target, p, margin, weight=None, reduction=1) */
fbx_status *fbx_k_multi_margin_loss_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *go, *x, *t, *wc = NULL, *gc = NULL, *gi = NULL, *out = NULL;
  margin_in m;
  int p;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &go));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &t));
  FBX_TRY(margin_in_make(ctx, &m, x, t, "multi_margin_loss_backward_cpu_kernel", false));
  double margin = fbx_iv_to_double(&args[4]);
  int64_t red = fbx_iv_to_int(&args[6]);
  bool per_sample = red == 0 && t->ndim > 0;
  fbx_status *st = multi_margin_params(ctx, &args[3], &args[5], m.C, &p, &wc);
  if (!st && go->numel != (per_sample ? m.N : 1))
    st = fbx_kernel_error(ctx, "grad_output has %" PRId64 " elements, expected %" PRId64, go->numel,
                          per_sample ? m.N : 1);
  if (!st) st = fbx_tensor_clone_as(&gc, go, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_zeros(&gi, FBX_DTYPE_FLOAT64, x->ndim, x->sizes);
  if (!st) {
    const double *xv = m.x->data, *wv = wc ? wc->data : NULL, *gv = gc->data;
    const int64_t *tv = m.t->data;
    double *r = gi->data, scale = red == 1 ? 1.0 / ((double)m.N * (double)m.C) : 1.0 / (double)m.C;
    for (int64_t i = 0; i < m.N; i++) {
      const double *xi = xv + i * m.C;
      double *ri = r + i * m.C, g = scale * gv[per_sample ? i : 0];
      int64_t y = tv[i];
      for (int64_t d = 0; d < m.C; d++) {
        double z = margin - xi[y] + xi[d];
        if (d == y || !(z > 0)) continue;
        double h = (p == 1 ? g : 2 * g * z) * (wv ? wv[y] : 1);
        ri[d] += h, ri[y] -= h;
      }
    }
  }
  if (!st) st = fbx_tensor_clone_as(&out, gi, x->dtype);
  fbx_tensor *tmp[] = {wc, gc, gi};
  release_all(tmp, 3);
  margin_in_release(&m);
  return finish(st, outs, &out);
}

/* multilabel targets: each row lists class indices up to the first -1;
 * is[i * C + c] = 1 where c is listed in row i. */
static void multilabel_targets(const margin_in *m, double *is) {
  const int64_t *tv = m->t->data;
  memset(is, 0, sizeof(double) * (size_t)(m->N * m->C));
  for (int64_t i = 0; i < m->N; i++)
    for (int64_t k = 0; k < m->C && tv[i * m->C + k] >= 0; k++) is[i * m->C + tv[i * m->C + k]] = 1;
}

/* aten::multilabel_margin_loss(self, target, reduction=1) and
 * aten::multilabel_margin_loss_forward(self, target, reduction) -> (output, is_target):
 * per sample, sum over listed labels j and unlisted classes c of
 * max(0, 1 - x[j] + x[c]), over C (a label listed twice counts twice). */
fbx_status *fbx_k_multilabel_margin_loss(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *t, *is = NULL, *out = NULL, *iso = NULL;
  margin_in m;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &t));
  FBX_TRY(margin_in_make(ctx, &m, x, t, "multilabel_margin_loss_forward_out_frame", true));
  double *per = NULL;
  fbx_status *st = fbx_tensor_empty(&is, FBX_DTYPE_FLOAT64, x->ndim, x->sizes);
  if (!st && !(per = fbx_malloc(sizeof *per * (size_t)(m.N ? m.N : 1)))) st = fbx_status_nomem();
  if (!st) {
    const double *xv = m.x->data;
    const int64_t *tv = m.t->data;
    double *isv = is->data;
    multilabel_targets(&m, isv);
    for (int64_t i = 0; i < m.N; i++) {
      const double *xi = xv + i * m.C, *ii = isv + i * m.C;
      double s = 0;
      for (int64_t k = 0; k < m.C && tv[i * m.C + k] >= 0; k++) {
        double xj = xi[tv[i * m.C + k]];
        for (int64_t c = 0; c < m.C; c++) {
          double z = 1 - xj + xi[c];
          if (!ii[c] && z > 0) s += z;
        }
      }
      per[i] = s / (double)m.C;
    }
    st = margin_out(ctx, &out, per, m.N, fbx_iv_to_int(&args[2]), t->ndim > 1, x->dtype);
  }
  if (!st && ctx->op->schema.nrets == 2) st = fbx_tensor_clone_as(&iso, is, x->dtype);
  fbx_free(per);
  fbx_tensor_release(is);
  margin_in_release(&m);
  return finish2(st, outs, &out, &iso);
}

/* aten::multilabel_margin_loss_backward(grad_output, self, target, reduction, is_target) */
fbx_status *fbx_k_multilabel_margin_loss_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *go, *x, *t, *ist, *gc = NULL, *isc = NULL, *gi = NULL, *out = NULL;
  margin_in m;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &go));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &t));
  FBX_TRY(fbx_arg_tensor(ctx, args, 4, &ist));
  FBX_TRY(margin_in_make(ctx, &m, x, t, "multilabel_margin_loss_backward_out_frame", true));
  int64_t red = fbx_iv_to_int(&args[3]);
  bool per_sample = red == 0 && t->ndim > 1;
  fbx_status *st = NULL;
  if (!fbx_tensor_same_shape(ist, x)) st = fbx_kernel_error(ctx, "is_target must have the input's shape");
  if (!st && go->numel != (per_sample ? m.N : 1))
    st = fbx_kernel_error(ctx, "grad_output has %" PRId64 " elements, expected %" PRId64, go->numel,
                          per_sample ? m.N : 1);
  if (!st) st = fbx_tensor_clone_as(&gc, go, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_clone_as(&isc, ist, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_zeros(&gi, FBX_DTYPE_FLOAT64, x->ndim, x->sizes);
  if (!st) {
    const double *xv = m.x->data, *gv = gc->data, *isv = isc->data;
    const int64_t *tv = m.t->data;
    double *r = gi->data, scale = red == 1 ? 1.0 / ((double)m.N * (double)m.C) : 1.0 / (double)m.C;
    for (int64_t i = 0; i < m.N; i++) {
      const double *xi = xv + i * m.C, *ii = isv + i * m.C;
      double *ri = r + i * m.C, g = scale * gv[per_sample ? i : 0];
      for (int64_t k = 0; k < m.C && tv[i * m.C + k] >= 0; k++) {
        int64_t j = tv[i * m.C + k];
        for (int64_t c = 0; c < m.C; c++)
          if (!ii[c] && 1 - xi[j] + xi[c] > 0) ri[j] -= g, ri[c] += g;
      }
    }
  }
  if (!st) st = fbx_tensor_clone_as(&out, gi, x->dtype);
  fbx_tensor *tmp[] = {gc, isc, gi};
  release_all(tmp, 3);
  margin_in_release(&m);
  return finish(st, outs, &out);
}

/* ---- ctc_loss -------------------------------------------------------------------------------- */

/* The inputs of a CTC loss: log_probs [T, N, C] as float64 (an unbatched
 * [T, C] is N = 1), the targets as int64 (padded [N, S] or concatenated),
 * where sample b's targets start, and the lengths. */
typedef struct ctc_in {
  fbx_tensor *lp, *tg; /* float64 [T, N, C], int64 contiguous */
  int64_t T, N, C, maxL;
  int64_t *il, *tl, *toff; /* [N] each, one allocation */
} ctc_in;

static void ctc_in_release(ctc_in *c) {
  fbx_tensor_release(c->lp);
  fbx_tensor_release(c->tg);
  fbx_free(c->il);
}

/* input_lengths / target_lengths: an int[] or an integral tensor, N entries. */
static fbx_status *ctc_lengths(const fbx_kctx *ctx, const fbx_ivalue *v, int argi, int64_t N, int64_t *out,
                               const char *what) {
  if (v->kind == FBX_IV_TENSOR) {
    fbx_tensor *t = v->u.t, *c = NULL;
    if (!fbx_dtype_is_integral(t->dtype)) return fbx_kernel_error(ctx, "%s must be integral", what);
    if (t->numel != N) return fbx_kernel_error(ctx, "%s must be of size batch_size", what);
    FBX_TRY(fbx_tensor_clone_as(&c, t, FBX_DTYPE_INT64));
    memcpy(out, c->data, sizeof(int64_t) * (size_t)N);
    fbx_tensor_release(c);
    return NULL;
  }
  fbx_status *st = NULL;
  int64_t *tmp = fbx_malloc(sizeof(int64_t) * (size_t)(N + 1));
  if (!tmp) return fbx_status_nomem();
  int n = fbx_arg_int_list(ctx->op, argi, v, tmp, (int)(N + 1), &st);
  if (n >= 0 && n != N) st = fbx_kernel_error(ctx, "%s must be of size batch_size", what);
  if (n == N) memcpy(out, tmp, sizeof(int64_t) * (size_t)N);
  fbx_free(tmp);
  return st;
}

static fbx_status *ctc_in_make(const fbx_kctx *ctx, ctc_in *c, fbx_tensor *lp, fbx_tensor *tg, const fbx_ivalue *il,
                               const fbx_ivalue *tl, int argi, int64_t blank, const char *kname) {
  memset(c, 0, sizeof *c);
  if (lp->dtype != FBX_DTYPE_FLOAT32 && lp->dtype != FBX_DTYPE_FLOAT64)
    return fbx_kernel_error(ctx, "\"%s\" not implemented for '%s'", kname, fbx_dtype_torch_name(lp->dtype));
  if (lp->ndim != 2 && lp->ndim != 3) return fbx_kernel_error(ctx, "log_probs must be 2-D or 3-D, got %d dims", lp->ndim);
  c->T = lp->sizes[0], c->N = lp->ndim == 3 ? lp->sizes[1] : 1, c->C = lp->sizes[lp->ndim - 1];
  if (blank < 0 || blank >= c->C) return fbx_kernel_error(ctx, "blank must be in label range");
  if (!(c->il = fbx_malloc(sizeof(int64_t) * (size_t)(3 * c->N + 1)))) return fbx_status_nomem();
  c->tl = c->il + c->N, c->toff = c->tl + c->N;
  fbx_status *st = ctc_lengths(ctx, il, argi, c->N, c->il, "input_lengths");
  if (!st) st = ctc_lengths(ctx, tl, argi + 1, c->N, c->tl, "target_lengths");
  int64_t total = 0;
  for (int64_t b = 0; !st && b < c->N; b++) {
    if (c->il[b] < 0 || c->il[b] > c->T)
      st = fbx_kernel_error(ctx, "Expected input_lengths to have value at most %" PRId64 ", but got value %" PRId64, c->T,
                            c->il[b]);
    else if (c->tl[b] < 0) st = fbx_kernel_error(ctx, "target_lengths must be non-negative");
    else if (c->tl[b] > c->maxL) c->maxL = c->tl[b];
    if (!st) c->toff[b] = tg->ndim == 1 ? total : b * (tg->ndim == 2 ? tg->sizes[1] : 0);
    total += st ? 0 : c->tl[b];
  }
  if (!st && tg->ndim == 1 && tg->sizes[0] != total)
    st = fbx_kernel_error(ctx, "Expected tensor to have size %" PRId64 " at dimension 0, but got size %" PRId64
                               " for argument #2 'targets'", total, tg->sizes[0]);
  if (!st && tg->ndim == 2 && (tg->sizes[0] != c->N || tg->sizes[1] < c->maxL))
    st = fbx_kernel_error(ctx, "Expected targets of size [%" PRId64 ", at least %" PRId64 "], got [%" PRId64 ", %" PRId64 "]",
                          c->N, c->maxL, tg->sizes[0], tg->sizes[1]);
  if (!st && tg->ndim != 1 && tg->ndim != 2) st = fbx_kernel_error(ctx, "targets must be 1-D or 2-D");
  if (!st) st = fbx_tensor_clone_as(&c->lp, lp, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_clone_as(&c->tg, tg, FBX_DTYPE_INT64);
  for (int64_t b = 0; !st && b < c->N; b++)
    for (int64_t k = 0; k < c->tl[b]; k++) {
      int64_t v = ((const int64_t *)c->tg->data)[c->toff[b] + k];
      if (v < 0 || v >= c->C) {
        st = fbx_kernel_error(ctx, "target %" PRId64 " is out of the label range [0, %" PRId64 ")", v, c->C);
        break;
      }
    }
  if (st) ctc_in_release(c);
  return st;
}

/* l'(s): the extended target of sample b, blanks around and between the labels. */
static inline int64_t ctc_label(const ctc_in *c, int64_t b, int64_t s, int64_t blank) {
  return s % 2 == 0 ? blank : ((const int64_t *)c->tg->data)[c->toff[b] + s / 2];
}

/* log(exp(a) + exp(b) + exp(d)) as ATen takes it (max 0 where all are -inf). */
static inline double ctc_lse3(double a, double b, double d) {
  double m = a > b ? a : b;
  m = d > m ? d : m;
  if (m == -INFINITY) m = 0;
  return log(exp(a - m) + exp(b - m) + exp(d - m)) + m;
}

/* The forward variables log_alpha [N, T, 2 maxL + 1] (-inf where no path
 * reaches) and the negative log likelihoods nll [N], in double: Graves et
 * al.'s recursion in log space, in ATen's order of operations. */
static void ctc_alpha(const ctc_in *c, int64_t blank, double *la, double *nll) {
  const double *lp = c->lp->data;
  int64_t S = 2 * c->maxL + 1;
  for (int64_t i = 0; i < c->N * c->T * S; i++) la[i] = -INFINITY;
  for (int64_t b = 0; b < c->N; b++) {
    int64_t T = c->il[b], L = c->tl[b];
    double *a = la + b * c->T * S;
#define LP(t, k) lp[((t) * c->N + b) * c->C + (k)]
    if (T == 0) {
      nll[b] = L == 0 ? 0 : INFINITY;
      continue;
    }
    a[0] = LP(0, blank);
    if (L > 0) a[1] = LP(0, ctc_label(c, b, 1, blank));
    for (int64_t t = 1; t < T; t++)
      for (int64_t s = 0; s < 2 * L + 1; s++) {
        int64_t k = ctc_label(c, b, s, blank);
        double a1 = a[(t - 1) * S + s], a2 = s > 0 ? a[(t - 1) * S + s - 1] : -INFINITY;
        double a3 = s > 1 && ctc_label(c, b, s - 2, blank) != k ? a[(t - 1) * S + s - 2] : -INFINITY;
        a[t * S + s] = ctc_lse3(a1, a2, a3) + LP(t, k);
      }
    if (L == 0) {
      nll[b] = -a[(T - 1) * S];
    } else {
      double l1 = a[(T - 1) * S + 2 * L], l2 = a[(T - 1) * S + 2 * L - 1], m = l1 > l2 ? l1 : l2;
      if (m == -INFINITY) m = 0;
      nll[b] = -(log(exp(l1 - m) + exp(l2 - m)) + m);
    }
#undef LP
  }
}

/* aten::_ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False)
 *   -> (neg_log_likelihood [N], log_alpha [N, T, 2 max(target_lengths) + 1]), int[] or Tensor lengths
 * aten::ctc_loss.IntList / .Tensor(..., blank=0, reduction=1, zero_infinity=False):
 *   the negative log likelihoods (0 for an infinite one under zero_infinity);
 *   reduction mean: each over its target length (at least 1), then the mean;
 *   an unbatched [T, C] input with reduction none gives a 0-d loss. */
fbx_status *fbx_k_ctc_loss(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *lp, *tg, *nt = NULL, *at = NULL, *out = NULL, *alpha = NULL;
  ctc_in c;
  bool internal = ctx->op->schema.nrets == 2;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &lp));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &tg));
  int64_t blank = fbx_iv_to_int(&args[4]);
  FBX_TRY(ctc_in_make(ctx, &c, lp, tg, &args[2], &args[3], 2, blank, "ctc_loss_cpu"));
  int64_t asz[3] = {c.N, c.T, 2 * c.maxL + 1};
  fbx_status *st = fbx_tensor_empty(&at, FBX_DTYPE_FLOAT64, 3, asz);
  if (!st) st = fbx_tensor_empty(&nt, FBX_DTYPE_FLOAT64, 1, &c.N);
  if (!st) ctc_alpha(&c, blank, at->data, nt->data);
  if (!st && internal) {
    st = fbx_tensor_clone_as(&out, nt, lp->dtype);
    if (!st) st = fbx_tensor_clone_as(&alpha, at, lp->dtype);
  } else if (!st) {
    double *v = nt->data;
    int64_t red = fbx_iv_to_int(&args[5]);
    bool zinf = fbx_iv_to_int(&args[6]) != 0;
    for (int64_t b = 0; b < c.N; b++) {
      if (zinf && v[b] == INFINITY) v[b] = 0;
      if (red == 1) v[b] /= (double)(c.tl[b] > 1 ? c.tl[b] : 1);
    }
    fbx_tensor *l = nt;
    if (!st && red == 0 && lp->ndim == 2) st = fbx_tensor_view(&l, nt, 0, NULL, NULL, nt->offset);
    else fbx_tensor_retain(l);
    if (!st) {
      fbx_tensor *r = NULL;
      st = fbx_loss_reduce(ctx, &r, l, red);
      if (!st) st = fbx_tensor_clone_as(&out, r, lp->dtype);
      fbx_tensor_release(r);
      fbx_tensor_release(l);
    }
  }
  fbx_tensor_release(at);
  fbx_tensor_release(nt);
  ctc_in_release(&c);
  return finish2(st, outs, &out, &alpha);
}

/* aten::_ctc_loss_backward(grad, log_probs, targets, input_lengths, target_lengths,
 *   neg_log_likelihood, log_alpha, blank, zero_infinity=False) -> [T, N, C] (log_probs' shape):
 * the backward variables beta, then for each sample exp(lp) - exp(log(sum of
 * alpha beta over the positions labelled k) + nll - lp), times grad[b];
 * 0 past the input length, and for an infinite nll under zero_infinity. */
fbx_status *fbx_k_ctc_loss_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *grad, *lp, *tg, *nllt, *lat, *gc = NULL, *nc = NULL, *ac = NULL, *res = NULL, *out = NULL;
  double *lb = NULL;
  ctc_in c;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &grad));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &lp));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &tg));
  FBX_TRY(fbx_arg_tensor(ctx, args, 5, &nllt));
  FBX_TRY(fbx_arg_tensor(ctx, args, 6, &lat));
  int64_t blank = fbx_iv_to_int(&args[7]);
  bool zinf = fbx_iv_to_int(&args[8]) != 0;
  FBX_TRY(ctc_in_make(ctx, &c, lp, tg, &args[3], &args[4], 3, blank, "ctc_loss_backward_cpu"));
  int64_t S = 2 * c.maxL + 1;
  fbx_status *st = NULL;
  if (grad->numel != c.N || nllt->numel != c.N || lat->numel != c.N * c.T * S)
    st = fbx_kernel_error(ctx, "grad and neg_log_likelihood need %" PRId64 " entries, log_alpha [%" PRId64 ", %" PRId64
                               ", %" PRId64 "]", c.N, c.N, c.T, S);
  if (!st) st = fbx_tensor_clone_as(&gc, grad, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_clone_as(&nc, nllt, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_clone_as(&ac, lat, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_zeros(&res, FBX_DTYPE_FLOAT64, lp->ndim, lp->sizes);
  if (!st && !(lb = fbx_malloc(sizeof(double) * (size_t)(c.T > 0 ? c.T * S : 1)))) st = fbx_status_nomem();
  for (int64_t b = 0; !st && b < c.N; b++) {
    const double *lpv = c.lp->data, *a = (const double *)ac->data + b * c.T * S;
    double *r = res->data, nll = ((const double *)nc->data)[b], gr = ((const double *)gc->data)[b];
    int64_t T = c.il[b], L = c.tl[b];
    if (zinf && nll == INFINITY) continue;
#define LP(t, k) lpv[((t) * c.N + b) * c.C + (k)]
#define G(t, k) r[((t) * c.N + b) * c.C + (k)]
    for (int64_t t = 0; t < T; t++)
      for (int64_t k = 0; k < c.C; k++) G(t, k) = -INFINITY; /* log of an empty sum */
    for (int64_t i = 0; i < c.T * S; i++) lb[i] = -INFINITY;
    if (T > 0) {
      lb[(T - 1) * S + 2 * L] = LP(T - 1, blank);
      G(T - 1, blank) = a[(T - 1) * S + 2 * L] + lb[(T - 1) * S + 2 * L];
      if (L > 0) {
        int64_t k = ctc_label(&c, b, 2 * L - 1, blank);
        lb[(T - 1) * S + 2 * L - 1] = LP(T - 1, k);
        G(T - 1, k) = a[(T - 1) * S + 2 * L - 1] + lb[(T - 1) * S + 2 * L - 1];
      }
    }
    for (int64_t t = T - 2; t >= 0; t--)
      for (int64_t s = 2 * L; s >= 0; s--) {
        int64_t k = ctc_label(&c, b, s, blank);
        double b1 = lb[(t + 1) * S + s], b2 = s < 2 * L ? lb[(t + 1) * S + s + 1] : -INFINITY;
        double b3 = s < 2 * L - 1 && ctc_label(&c, b, s + 2, blank) != k ? lb[(t + 1) * S + s + 2] : -INFINITY;
        lb[t * S + s] = ctc_lse3(b1, b2, b3) + LP(t, k);
        double ab = a[t * S + s] + lb[t * S + s], *g = &G(t, k);
        if (*g == -INFINITY) {
          *g = ab;
        } else {
          double m = *g > ab ? *g : ab;
          *g = log(exp(*g - m) + exp(ab - m)) + m;
        }
      }
    for (int64_t t = 0; t < T; t++)
      for (int64_t k = 0; k < c.C; k++) G(t, k) = (exp(LP(t, k)) - exp(G(t, k) + nll - LP(t, k))) * gr;
#undef LP
#undef G
  }
  if (!st) st = fbx_tensor_clone_as(&out, res, lp->dtype);
  fbx_free(lb);
  fbx_tensor *tmp[] = {gc, nc, ac, res};
  release_all(tmp, 4);
  ctc_in_release(&c);
  return finish(st, outs, &out);
}
