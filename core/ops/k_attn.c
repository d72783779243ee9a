/* aten::scaled_dot_product_attention (ops/list_linalg.h), what PyTorch 2.x's
 * F.scaled_dot_product_attention and nn.MultiheadAttention call, and its
 * gradient fusebox::sdpa_backward: PyTorch's reference definition composed
 * of the table's own rows (matmul, softmax, masked_fill, ...), so dtype,
 * broadcasting and NaN rules are theirs:
 *
 *   s = q @ kᵀ · scale            scale = 1 / sqrt(E) unless given
 *   s = s masked to -inf above the diagonal         (is_causal; [L, S], top left)
 *   s = s masked to -inf where attn_mask is false   (a bool mask), or
 *   s = s + attn_mask                               (a floating mask; both broadcast)
 *   p = softmax(s, -1)
 *   y = p @ v
 *
 * enable_gqa repeats each of k's and v's heads (dim -3) for its group of q's
 * heads (repeat_interleave). A row masked everywhere is NaN, as in the
 * reference. dropout_p > 0 (random dropout of p) is an error: fusebox runs
 * the inference form (modules pass 0 in eval mode).
 *
 * The backward recomputes p, then dv = pᵀ g, dp = g vᵀ, ds = p (dp - rowsum(dp p)) ·
 * scale, dq = ds k, dk = dsᵀ q (k's and v's gradients summed over each
 * group under enable_gqa); a floating attn_mask gets no gradient. */
#include <math.h>
#include <string.h>

#include "ops/kcompose.h"

/* the args both ops share, from args[0] = query on */
typedef struct sdpa_args {
  fbx_tensor *q, *k, *v, *mask; /* mask NULL: None */
  bool causal, gqa;
  double scale;
} sdpa_args;

static fbx_status *read_args(const fbx_kctx *ctx, const fbx_ivalue *a, sdpa_args *s) {
  FBX_TRY(fbx_arg_tensor(ctx, a, 0, &s->q));
  FBX_TRY(fbx_arg_tensor(ctx, a, 1, &s->k));
  FBX_TRY(fbx_arg_tensor(ctx, a, 2, &s->v));
  s->mask = a[3].kind == FBX_IV_TENSOR ? a[3].u.t : NULL;
  if (!s->mask && a[3].kind != FBX_IV_NONE) return fbx_kernel_error(ctx, "attn_mask must be a Tensor or None");
  double p = a[4].kind == FBX_IV_FLOAT ? a[4].u.f : a[4].kind == FBX_IV_INT ? (double)a[4].u.i : NAN;
  if (!(p >= 0 && p <= 1)) return fbx_kernel_error(ctx, "dropout_p must be a number in [0, 1]");
  if (p > 0)
    return fbx_kernel_error(ctx, "dropout_p = %g: random dropout of the attention weights is not implemented "
                                 "(fusebox runs the inference form; modules pass 0 in eval mode)", p);
  if (a[5].kind != FBX_IV_BOOL || a[7].kind != FBX_IV_BOOL)
    return fbx_kernel_error(ctx, "is_causal and enable_gqa must be bools");
  s->causal = a[5].u.b;
  s->gqa = a[7].u.b;
  const fbx_tensor *q = s->q, *k = s->k, *v = s->v;
  if (q->ndim < 2 || k->ndim < 2 || v->ndim < 2)
    return fbx_kernel_error(ctx, "query, key and value need at least 2 dims, got %dD, %dD and %dD", q->ndim, k->ndim,
                            v->ndim);
  if (!fbx_dtype_is_floating(q->dtype) || k->dtype != q->dtype || v->dtype != q->dtype)
    return fbx_kernel_error(ctx, "expected query, key and value of one floating dtype, got %s, %s and %s",
                            fbx_dtype_name(q->dtype), fbx_dtype_name(k->dtype), fbx_dtype_name(v->dtype));
  int64_t E = q->sizes[q->ndim - 1];
  if (k->sizes[k->ndim - 1] != E)
    return fbx_kernel_error(ctx, "query and key have embedding sizes %lld and %lld", (long long)E,
                            (long long)k->sizes[k->ndim - 1]);
  if (k->sizes[k->ndim - 2] != v->sizes[v->ndim - 2])
    return fbx_kernel_error(ctx, "key and value have sequence lengths %lld and %lld",
                            (long long)k->sizes[k->ndim - 2], (long long)v->sizes[v->ndim - 2]);
  if (s->causal && s->mask)
    return fbx_kernel_error(ctx, "an explicit attn_mask should not be set when is_causal=True");
  if (s->mask && s->mask->dtype != FBX_DTYPE_BOOL && s->mask->dtype != q->dtype)
    return fbx_kernel_error(ctx, "attn_mask must be bool or of the query's dtype (%s), got %s",
                            fbx_dtype_name(q->dtype), fbx_dtype_name(s->mask->dtype));
  if (a[6].kind == FBX_IV_NONE) {
    s->scale = E > 0 ? 1.0 / sqrt((double)E) : 1.0;
  } else if (a[6].kind == FBX_IV_FLOAT || a[6].kind == FBX_IV_INT) {
    s->scale = a[6].kind == FBX_IV_FLOAT ? a[6].u.f : (double)a[6].u.i;
  } else {
    return fbx_kernel_error(ctx, "scale must be a float or None");
  }
  if (s->gqa) {
    if (q->ndim < 3 || k->ndim < 3 || v->ndim < 3)
      return fbx_kernel_error(ctx, "enable_gqa needs a heads dim (-3) in query, key and value");
    int64_t hq = q->sizes[q->ndim - 3], hk = k->sizes[k->ndim - 3], hv = v->sizes[v->ndim - 3];
    if (hk < 1 || hv < 1 || hq % hk || hq % hv)
      return fbx_kernel_error(ctx, "enable_gqa: query's %lld heads are not a multiple of key's %lld and value's %lld",
                              (long long)hq, (long long)hk, (long long)hv);
  }
  return NULL;
}

/* t with each head (dim -3) repeated to q's head count (enable_gqa), or t itself; a new reference */
static fbx_status *heads_like_q(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *t, const sdpa_args *s) {
  int64_t r = s->gqa ? s->q->sizes[s->q->ndim - 3] / t->sizes[t->ndim - 3] : 1;
  if (r == 1) {
    fbx_tensor_retain(t);
    *out = t;
    return NULL;
  }
  return ROW(out, repeat_interleave_self_int, TV(t), IV(r), IV(-3), NV);
}

/* the attention weights p (and k with q's heads, for the backward) */
static fbx_status *probs(const fbx_kctx *ctx, const sdpa_args *s, fbx_tensor **p, fbx_tensor **kr) {
  fbx_tensor *kt = NULL, *sc = NULL, *sm = NULL, *m = NULL, *nm = NULL;
  *p = NULL;
  fbx_status *st = heads_like_q(ctx, kr, s->k, s);
  if (!st) st = ROW(&kt, transpose_int, TV(*kr), IV(-2), IV(-1));
  if (!st) st = ROW(&sc, matmul, TV(s->q), TV(kt));
  if (!st) st = ROW(&sm, mul_Scalar, TV(sc), FV(s->scale));
  fbx_tensor_release(sc);
  sc = sm, sm = NULL;
  if (!st && s->causal) { /* -inf above the diagonal of [L, S] */
    int64_t L = s->q->sizes[s->q->ndim - 2], S = s->k->sizes[s->k->ndim - 2], sz[2] = {L, S};
    st = fbx_tensor_empty(&m, FBX_DTYPE_BOOL, 2, sz);
    if (!st) {
      bool *d = m->data;
      for (int64_t i = 0; i < L; i++)
        for (int64_t j = 0; j < S; j++) d[i * S + j] = j > i;
      st = ROW(&sm, masked_fill_Scalar, TV(sc), TV(m), FV(-INFINITY));
    }
  } else if (!st && s->mask && s->mask->dtype == FBX_DTYPE_BOOL) {
    st = ROW(&nm, logical_not, TV(s->mask));
    if (!st) st = ROW(&sm, masked_fill_Scalar, TV(sc), TV(nm), FV(-INFINITY));
  } else if (!st && s->mask) {
    st = ROW(&sm, add_Tensor, TV(sc), TV(s->mask), IV(1));
  }
  if (sm) {
    fbx_tensor_release(sc);
    sc = sm;
  }
  if (!st) st = ROW(p, softmax_int, TV(sc), IV(-1), NV);
  fbx_tensor *tmp[] = {kt, sc, m, nm};
  release_all(tmp, 4);
  if (st) {
    fbx_tensor_release(*kr);
    *kr = NULL;
  }
  return st;
}

/* aten::scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.,
 * is_causal=False, *, scale=None, enable_gqa=False) */
fbx_status *fbx_k_sdpa(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  sdpa_args s;
  FBX_TRY(read_args(ctx, args, &s));
  fbx_tensor *p = NULL, *kr = NULL, *vr = NULL, *y = NULL;
  fbx_status *st = probs(ctx, &s, &p, &kr);
  if (!st) st = heads_like_q(ctx, &vr, s.v, &s);
  if (!st) st = ROW(&y, matmul, TV(p), TV(vr));
  fbx_tensor *tmp[] = {p, kr, vr};
  release_all(tmp, 3);
  return finish(st, outs, &y);
}

/* g summed over each group of q's heads back to t's head count (enable_gqa), or g itself */
static fbx_status *heads_like(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *g, const fbx_tensor *t,
                              const sdpa_args *s) {
  /* (without enable_gqa the tensors may have fewer than 3 dims) */
  int64_t hk = s->gqa ? t->sizes[t->ndim - 3] : 1, r = s->gqa ? s->q->sizes[s->q->ndim - 3] / hk : 1;
  if (r == 1) {
    fbx_tensor_retain(g);
    *out = g;
    return NULL;
  }
  /* [..., hk * r, S, E] -> [..., hk, r, S, E], summed over r */
  fbx_ivalue shape, dims = fbx_iv_none();
  FBX_TRY(fbx_iv_list_new(&shape, g->ndim + 1));
  fbx_status *st = NULL;
  for (int i = 0; i < g->ndim && !st; i++) {
    if (i == g->ndim - 3) {
      st = fbx_iv_list_push(&shape, fbx_iv_int(hk));
      if (!st) st = fbx_iv_list_push(&shape, fbx_iv_int(r));
    } else {
      st = fbx_iv_list_push(&shape, fbx_iv_int(g->sizes[i]));
    }
  }
  fbx_tensor *gv = NULL;
  if (!st) st = ROW(&gv, reshape, TV(g), shape);
  fbx_iv_release(&shape);
  if (!st) st = fbx_iv_list_new(&dims, 1);
  if (!st) st = fbx_iv_list_push(&dims, fbx_iv_int(-3));
  if (!st) st = ROW(out, sum_dim_IntList, TV(gv), dims, BV(false), NV);
  fbx_iv_release(&dims);
  fbx_tensor_release(gv);
  return st;
}

/* fusebox::sdpa_backward(grad, query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
 * -> (grad_query, grad_key, grad_value) */
fbx_status *fbx_k_fbx_sdpa_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g;
  sdpa_args s;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(read_args(ctx, args + 1, &s));
  fbx_tensor *p = NULL, *kr = NULL, *vr = NULL, *pt = NULL, *gvr = NULL, *vt = NULL, *dp = NULL, *pdp = NULL;
  fbx_tensor *rs = NULL, *dd = NULL, *ds0 = NULL, *ds = NULL, *gq = NULL, *dst = NULL, *gkr = NULL, *gk = NULL;
  fbx_tensor *gv = NULL;
  fbx_ivalue last = fbx_iv_none();
  fbx_status *st = probs(ctx, &s, &p, &kr);
  if (!st) st = heads_like_q(ctx, &vr, s.v, &s);
  if (!st) st = ROW(&pt, transpose_int, TV(p), IV(-2), IV(-1));
  if (!st) st = ROW(&gvr, matmul, TV(pt), TV(g));
  if (!st) st = ROW(&vt, transpose_int, TV(vr), IV(-2), IV(-1));
  if (!st) st = ROW(&dp, matmul, TV(g), TV(vt));
  if (!st) st = ROW(&pdp, mul_Tensor, TV(p), TV(dp));
  if (!st) st = fbx_iv_list_new(&last, 1);
  if (!st) st = fbx_iv_list_push(&last, fbx_iv_int(-1));
  if (!st) st = ROW(&rs, sum_dim_IntList, TV(pdp), last, BV(true), NV);
  if (!st) st = ROW(&dd, sub_Tensor, TV(dp), TV(rs), IV(1));
  if (!st) st = ROW(&ds0, mul_Tensor, TV(p), TV(dd));
  if (!st) st = ROW(&ds, mul_Scalar, TV(ds0), FV(s.scale));
  if (!st) st = ROW(&gq, matmul, TV(ds), TV(kr));
  if (!st) st = ROW(&dst, transpose_int, TV(ds), IV(-2), IV(-1));
  if (!st) st = ROW(&gkr, matmul, TV(dst), TV(s.q));
  if (!st) st = heads_like(ctx, &gk, gkr, s.k, &s);
  if (!st) st = heads_like(ctx, &gv, gvr, s.v, &s);
  fbx_iv_release(&last);
  fbx_tensor *tmp[] = {p, kr, vr, pt, gvr, vt, dp, pdp, rs, dd, ds0, ds, dst, gkr};
  release_all(tmp, (int)(sizeof tmp / sizeof tmp[0]));
  if (st) {
    fbx_tensor *res[] = {gq, gk, gv};
    release_all(res, 3);
    return st;
  }
  fbx_set_out_tensor(outs, 0, gq);
  fbx_set_out_tensor(outs, 1, gk);
  fbx_set_out_tensor(outs, 2, gv);
  return NULL;
}
