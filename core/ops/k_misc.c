/* Kernels for the non-indexing rows of ops/list_extra.h: data movement
 * (repeat, tile, repeat_interleave, flip, roll, tril/triu, padding,
 * broadcast_tensors), sorting (sort, argsort, topk), norms, small linear
 * algebra (dot, mv, outer, baddbmm, einsum, cdist), composites (glu,
 * cosine_similarity, log_sigmoid, selu, celu, sgn, hardshrink, softshrink),
 * losses (the distance and ranking ones in k_loss.c), and the
 * in-place variants. (group_norm's kernel is batch_norm's neighbour in
 * k_norm.c.)
 *
 * Many of these are compositions of other rows (as in ATen, whose CPU
 * versions are compositions too): they run those rows' kernels through
 * ops/kcompose.h, so dtype promotion, broadcasting and NaN rules stay the ones
 * the other rows define. (cumprod shares cumsum's scan in k_reduce.c.) */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/kcompose.h"
#include "ops/promote.h"

/* ---- repeat / repeat_interleave ---------------------------------------------------------------- */

/* A contiguous copy of the view (sizes, strides over x's storage), then
 * viewed as final shape (fshape). */
static fbx_status *copy_view_as(fbx_tensor **out, fbx_tensor *x, int vnd, const int64_t *vs, const int64_t *vst,
                                int fnd, const int64_t *fshape) {
  fbx_tensor *v = NULL, *c = NULL;
  FBX_TRY(fbx_tensor_view(&v, x, vnd, vs, vst, x->offset));
  fbx_status *st = fbx_tensor_clone_as(&c, v, x->dtype);
  fbx_tensor_release(v);
  if (!st) st = fbx_tensor_view(out, c, fnd, fshape, NULL, c->offset);
  fbx_tensor_release(c);
  return st;
}

/* aten::repeat(Tensor self, SymInt[] repeats) -> Tensor */
fbx_status *fbx_k_repeat(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  int64_t r[FBX_MAX_DIMS], vs[FBX_MAX_DIMS], vst[FBX_MAX_DIMS], fs[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int n = fbx_arg_int_list(ctx->op, 1, &args[1], r, FBX_MAX_DIMS, &st);
  if (n < 0) return st;
  if (n < x->ndim)
    return fbx_kernel_error(ctx, "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  if (2 * n > FBX_MAX_DIMS) return fbx_kernel_error(ctx, "at most %d repeat dims", FBX_MAX_DIMS / 2);
  for (int i = 0; i < n; i++) {
    if (r[i] < 0) return fbx_kernel_error(ctx, "Trying to create tensor with negative dimension %" PRId64, r[i]);
    int k = i - (n - x->ndim);
    int64_t s = k >= 0 ? x->sizes[k] : 1;
    vs[2 * i] = r[i], vst[2 * i] = 0;
    vs[2 * i + 1] = s, vst[2 * i + 1] = k >= 0 ? x->strides[k] : 0;
    FBX_TRY(fbx_size_mul(ctx, r[i], s, &fs[i], "repeat"));
  }
  return finish(copy_view_as(&out, x, 2 * n, vs, vst, n, fs), outs, &out);
}

/* aten::tile(Tensor self, int[] dims) -> Tensor: repeat, with dims padded
 * by leading 1s up to self's rank. */
fbx_status *fbx_k_tile(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  int64_t r[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int n = fbx_arg_int_list(ctx->op, 1, &args[1], r, FBX_MAX_DIMS, &st);
  if (n < 0) return st;
  int pad = x->ndim > n ? x->ndim - n : 0;
  memmove(r + pad, r, sizeof(int64_t) * (size_t)n);
  for (int i = 0; i < pad; i++) r[i] = 1;
  fbx_ivalue reps;
  FBX_TRY(fbx_int_list_iv(&reps, n + pad, r));
  st = ROW(&out, repeat, TV(x), reps);
  fbx_iv_release(&reps);
  return finish(st, outs, &out);
}

/* aten::repeat_interleave.self_int(Tensor self, int repeats, int? dim=None, *, int? output_size=None)
 * dim None: the flattened input, each element repeated. */
fbx_status *fbx_k_repeat_interleave(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *flat = NULL, *out = NULL;
  int64_t rep = fbx_iv_to_int(&args[1]), d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (rep < 0) return fbx_kernel_error(ctx, "repeats can not be negative");
  if (args[2].kind == FBX_IV_NONE) {
    int64_t m1 = -1;
    fbx_ivalue shape;
    FBX_TRY(fbx_int_list_iv(&shape, 1, &m1));
    fbx_status *st = ROW(&flat, reshape, TV(x), shape);
    fbx_iv_release(&shape);
    FBX_TRY(st);
    x = flat;
    d = 0;
  } else {
    FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[2]), x->ndim));
  }
  int64_t vs[FBX_MAX_DIMS], vst[FBX_MAX_DIMS], fs[FBX_MAX_DIMS];
  int nd = x->ndim ? x->ndim : 1, vn = 0;
  fbx_status *st = nd + 1 > FBX_MAX_DIMS ? fbx_kernel_error(ctx, "too many dims") : NULL;
  for (int i = 0; i < nd && !st; i++) {
    int64_t s = x->ndim ? x->sizes[i] : 1, str = x->ndim ? x->strides[i] : 0;
    vs[vn] = s, vst[vn++] = str;
    fs[i] = s;
    if (i == d) {
      vs[vn] = rep, vst[vn++] = 0;
      st = fbx_size_mul(ctx, s, rep, &fs[i], "repeat_interleave");
    }
  }
  if (!st) st = copy_view_as(&out, x, vn, vs, vst, nd, fs);
  fbx_tensor_release(flat);
  return finish(st, outs, &out);
}

/* ---- flip / roll ------------------------------------------------------------------------------ */

/* aten::flip(Tensor self, int[] dims) -> Tensor: index_select with reversed indices, dim by dim. */
fbx_status *fbx_k_flip(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *cur = NULL;
  int64_t dims[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int n = fbx_arg_int_list(ctx->op, 1, &args[1], dims, FBX_MAX_DIMS, &st);
  if (n < 0) return st;
  bool seen[FBX_MAX_DIMS] = {false};
  for (int i = 0; i < n; i++) {
    FBX_TRY(fbx_wrap_dim(ctx, &dims[i], dims[i], x->ndim));
    if (seen[dims[i]]) return fbx_kernel_error(ctx, "dims has duplicates, original flip dims size=%d", n);
    seen[dims[i]] = true;
  }
  FBX_TRY(fbx_tensor_clone_as(&cur, x, x->dtype));
  for (int i = 0; i < n && !st && x->ndim; i++) {
    int64_t len = x->sizes[dims[i]];
    fbx_tensor *idx = NULL, *next = NULL;
    st = fbx_tensor_empty(&idx, FBX_DTYPE_INT64, 1, &len);
    if (st) break;
    for (int64_t k = 0; k < len; k++) ((int64_t *)idx->data)[k] = len - 1 - k;
    st = ROW(&next, index_select, TV(cur), IV(dims[i]), TV(idx));
    fbx_tensor_release(idx);
    if (!st) {
      fbx_tensor_release(cur);
      cur = next;
    }
  }
  return finish(st, outs, &cur);
}

/* out = cat(x.narrow(d, n - s, s), x.narrow(d, 0, n - s)) with s = shift mod n */
static fbx_status *roll_one(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *x, int64_t shift, int64_t d) {
  int64_t n = x->sizes[d];
  if (n == 0) return fbx_tensor_clone_as(out, x, x->dtype);
  int64_t s = ((shift % n) + n) % n;
  if (s == 0) return fbx_tensor_clone_as(out, x, x->dtype);
  fbx_tensor *a = NULL, *b = NULL;
  fbx_ivalue list = fbx_iv_none();
  fbx_status *st = ROW(&a, narrow, TV(x), IV(d), IV(n - s), IV(s));
  if (!st) st = ROW(&b, narrow, TV(x), IV(d), IV(0), IV(n - s));
  if (!st) st = fbx_iv_list_new(&list, 2);
  if (!st) st = fbx_iv_list_push(&list, TV(fbx_tensor_retain(a)));
  if (!st) st = fbx_iv_list_push(&list, TV(fbx_tensor_retain(b)));
  if (!st) st = ROW(out, cat, list, IV(d));
  fbx_iv_release(&list);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
  return st;
}

/* aten::roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor
 * dims empty: roll the flattened tensor and restore the shape. */
fbx_status *fbx_k_roll(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *cur = NULL;
  int64_t shifts[FBX_MAX_DIMS], dims[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  int ns = fbx_arg_int_list(ctx->op, 1, &args[1], shifts, FBX_MAX_DIMS, &st);
  if (ns < 0) return st;
  int nd = fbx_arg_int_list(ctx->op, 2, &args[2], dims, FBX_MAX_DIMS, &st);
  if (nd < 0) return st;
  if (nd == 0) {
    if (ns != 1) return fbx_kernel_error(ctx, "shifts must be a single value when dims is empty (got %d)", ns);
    int64_t m1 = -1;
    fbx_ivalue flat, shape;
    fbx_tensor *f = NULL, *r = NULL, *out = NULL;
    FBX_TRY(fbx_int_list_iv(&flat, 1, &m1));
    st = ROW(&f, reshape, TV(x), flat);
    fbx_iv_release(&flat);
    if (!st) st = roll_one(ctx, &r, f, shifts[0], 0);
    if (!st) st = fbx_int_list_iv(&shape, x->ndim, x->sizes);
    if (!st) {
      st = ROW(&out, reshape, TV(r), shape);
      fbx_iv_release(&shape);
    }
    fbx_tensor_release(f);
    fbx_tensor_release(r);
    return finish(st, outs, &out);
  }
  if (ns != nd) return fbx_kernel_error(ctx, "shifts and dimensions must align. shifts: %d, dims:%d", ns, nd);
  FBX_TRY(fbx_tensor_clone_as(&cur, x, x->dtype));
  for (int i = 0; i < nd && !st; i++) {
    int64_t d;
    fbx_tensor *next = NULL;
    st = fbx_wrap_dim(ctx, &d, dims[i], x->ndim);
    if (!st) st = roll_one(ctx, &next, cur, shifts[i], d);
    if (!st) {
      fbx_tensor_release(cur);
      cur = next;
    }
  }
  return finish(st, outs, &cur);
}

/* ---- tril / triu ------------------------------------------------------------------------------- */

/* aten::tril / aten::triu(Tensor self, int diagonal=0) -> Tensor
 * Zero bytes are zero in every dtype (+0.0, false), so entries are cleared
 * with memset, row by row. */
fbx_status *fbx_k_tril(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  bool lower = ctx->op->id == FBX_OP_tril;
  int64_t k = fbx_iv_to_int(&args[1]);
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (x->ndim < 2)
    return fbx_kernel_error(ctx, "%s: input tensor must have at least 2 dimensions", lower ? "tril" : "triu");
  FBX_TRY(fbx_tensor_clone_as(&out, x, x->dtype));
  int64_t R = x->sizes[x->ndim - 2], M = x->sizes[x->ndim - 1], B = (R > 0 && M > 0) ? out->numel / (R * M) : 0;
  size_t es = fbx_dtype_size(x->dtype);
  for (int64_t b = 0; b < B; b++)
    for (int64_t i = 0; i < R; i++) {
      char *row = (char *)out->data + (size_t)((b * R + i) * M) * es;
      int64_t lo, hi; /* columns to clear: [lo, hi) */
      if (lower) lo = i + k + 1 < 0 ? 0 : i + k + 1, hi = M;
      else lo = 0, hi = i + k < M ? i + k : M;
      if (lo < hi && lo < M && hi > 0) memset(row + (size_t)lo * es, 0, (size_t)(hi - lo) * es);
    }
  fbx_set_out_tensor(outs, 0, out);
  return NULL;
}

/* ---- padding ---------------------------------------------------------------------------------- */

static fbx_status *pad_sizes(const fbx_kctx *ctx, const fbx_tensor *x, const fbx_ivalue *arg, int64_t *pad,
                             int *np, int64_t *osz) {
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, 1, arg, pad, 2 * FBX_MAX_DIMS, &st);
  if (n < 0) return st;
  if (n % 2) return fbx_kernel_error(ctx, "Length of pad must be even but instead it equals %d", n);
  if (n / 2 > x->ndim)
    return fbx_kernel_error(ctx, "Length of pad should be no more than twice the number of dimensions of the input. Pad length is %d while the input has %d dimensions.",
                            n, x->ndim);
  for (int i = 0; i < x->ndim; i++) osz[i] = x->sizes[i];
  for (int p = 0; p < n / 2; p++) {
    int d = x->ndim - 1 - p;
    osz[d] = x->sizes[d] + pad[2 * p] + pad[2 * p + 1];
    if (osz[d] < 0)
      return fbx_kernel_error(ctx, "The input size %" PRId64 ", plus negative padding %" PRId64 " and %" PRId64 " resulted in a negative output size, which is invalid. Check dimension %d of your input.",
                              x->sizes[d], pad[2 * p], pad[2 * p + 1], d);
  }
  *np = n / 2;
  return NULL;
}

static fbx_status *constant_pad(const fbx_kctx *ctx, fbx_tensor *x, const fbx_ivalue *padarg, const fbx_ivalue *value,
                                fbx_tensor **outp) {
  int64_t pad[2 * FBX_MAX_DIMS], osz[FBX_MAX_DIMS];
  int np;
  FBX_TRY(pad_sizes(ctx, x, padarg, pad, &np, osz));
  fbx_tensor *out = NULL, *v = NULL, *dst = NULL, *src = NULL;
  FBX_TRY(fbx_tensor_empty(&out, x->dtype, x->ndim, osz));
  fbx_status *st = fbx_scalar_tensor(&v, value, x->dtype);
  if (!st && out->numel) st = fbx_tensor_copy_(out, v);
  /* the part of x that survives, and where it lands */
  int64_t ssz[FBX_MAX_DIMS], soff = x->offset, doff = out->offset;
  bool empty = false;
  for (int d = 0; d < x->ndim; d++) {
    int p = x->ndim - 1 - d;
    int64_t l = p < np ? pad[2 * p] : 0, r = p < np ? pad[2 * p + 1] : 0;
    int64_t s0 = l < 0 ? -l : 0, d0 = l > 0 ? l : 0, len = x->sizes[d] - s0 - (r < 0 ? -r : 0);
    if (len <= 0) empty = true;
    ssz[d] = len > 0 ? len : 0;
    soff += s0 * x->strides[d];
    doff += d0 * out->strides[d];
  }
  if (!st && !empty && out->numel) {
    st = fbx_tensor_view(&src, x, x->ndim, ssz, x->strides, soff);
    if (!st) st = fbx_tensor_view(&dst, out, x->ndim, ssz, out->strides, doff);
    if (!st) st = fbx_tensor_copy_(dst, src);
  }
  fbx_tensor_release(v);
  fbx_tensor_release(src);
  fbx_tensor_release(dst);
  if (st) {
    fbx_tensor_release(out);
    return st;
  }
  *outp = out;
  return NULL;
}

/* aten::constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor
 * pad pairs (left, right) start at the last dim; negative entries crop. */
fbx_status *fbx_k_constant_pad_nd(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  return finish(constant_pad(ctx, x, &args[1], &args[2], &out), outs, &out);
}

/* aten::pad(Tensor self, int[] pad, str mode="constant", float? value=None) -> Tensor
 * constant (value None is 0), reflect, replicate, circular (non-negative pads). */
fbx_status *fbx_k_pad(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *cur = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (args[2].kind != FBX_IV_STR) return fbx_kernel_error(ctx, "mode must be a string");
  const char *mode = fbx_iv_str_data(&args[2]);
  if (!strcmp(mode, "constant")) {
    fbx_ivalue zero = fbx_iv_int(0);
    return finish(constant_pad(ctx, x, &args[1], args[3].kind == FBX_IV_NONE ? &zero : &args[3], &cur), outs, &cur);
  }
  int kind = !strcmp(mode, "reflect") ? 0 : !strcmp(mode, "replicate") ? 1 : !strcmp(mode, "circular") ? 2 : -1;
  if (kind < 0) return fbx_kernel_error(ctx, "Unrecognised padding mode %s", mode);
  if (args[3].kind != FBX_IV_NONE && fbx_iv_to_double(&args[3]) != 0)
    return fbx_kernel_error(ctx, "Padding mode \"%s\" doesn't take in value argument", mode);
  int64_t pad[2 * FBX_MAX_DIMS], osz[FBX_MAX_DIMS];
  int np;
  FBX_TRY(pad_sizes(ctx, x, &args[1], pad, &np, osz));
  fbx_status *st = fbx_tensor_clone_as(&cur, x, x->dtype);
  for (int p = 0; p < np && !st; p++) {
    int d = x->ndim - 1 - p;
    int64_t l = pad[2 * p], r = pad[2 * p + 1], s = x->sizes[d], n = osz[d];
    if (l < 0 || r < 0) {
      st = fbx_kernel_error(ctx, "negative padding is only supported in constant mode");
      break;
    }
    if (kind == 0 && (l >= s || r >= s)) {
      st = fbx_kernel_error(ctx, "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (%" PRId64 ", %" PRId64 ") at dimension %d of input of size %" PRId64,
                            l, r, d, s);
      break;
    }
    if (kind == 2 && (l > s || r > s)) {
      st = fbx_kernel_error(ctx, "Padding value causes wrapping around more than once.");
      break;
    }
    if (s == 0) {
      st = fbx_kernel_error(ctx, "cannot pad an empty dimension in %s mode", mode);
      break;
    }
    fbx_tensor *idx = NULL, *next = NULL;
    st = fbx_tensor_empty(&idx, FBX_DTYPE_INT64, 1, &n);
    if (st) break;
    for (int64_t j = 0; j < n; j++) {
      int64_t q = j - l;
      if (kind == 0) q = q < 0 ? -q : q >= s ? 2 * (s - 1) - q : q;
      else if (kind == 1) q = q < 0 ? 0 : q >= s ? s - 1 : q;
      else q = ((q % s) + s) % s;
      ((int64_t *)idx->data)[j] = q;
    }
    st = ROW(&next, index_select, TV(cur), IV(d), TV(idx));
    fbx_tensor_release(idx);
    if (!st) {
      fbx_tensor_release(cur);
      cur = next;
    }
  }
  return finish(st, outs, &cur);
}

/* ---- broadcasting -------------------------------------------------------------------------- */

/* aten::broadcast_tensors(Tensor[] tensors) -> Tensor[]: expanded views. */
fbx_status *fbx_k_broadcast_tensors(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected a list of tensors");
  int n = fbx_iv_list_len(&args[0]), nd = 0;
  int64_t shape[FBX_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    const fbx_ivalue *e = fbx_iv_list_at(&args[0], i);
    if (e->kind != FBX_IV_TENSOR) return fbx_kernel_error(ctx, "expected a Tensor at list position %d", i);
    FBX_TRY(fbx_broadcast_into(ctx, shape, &nd, e->u.t->ndim, e->u.t->sizes));
  }
  fbx_ivalue l;
  FBX_TRY(fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) {
    fbx_tensor *v = NULL;
    fbx_status *st = fbx_expand_view(&v, fbx_iv_list_at(&args[0], i)->u.t, nd, shape);
    if (!st) st = fbx_iv_list_push(&l, TV(v));
    if (st) {
      fbx_tensor_release(v);
      fbx_iv_release(&l);
      return st;
    }
  }
  outs[0] = l;
  return NULL;
}

/* aten::_infer_size(int[] a, int[] b) -> int[]: the broadcast shape. */
fbx_status *fbx_k_infer_size(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int64_t a[FBX_MAX_DIMS], b[FBX_MAX_DIMS], r[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  int na = fbx_arg_int_list(ctx->op, 0, &args[0], a, FBX_MAX_DIMS, &st);
  if (na < 0) return st;
  int nb = fbx_arg_int_list(ctx->op, 1, &args[1], b, FBX_MAX_DIMS, &st);
  if (nb < 0) return st;
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int ia = i - (n - na), ib = i - (n - nb);
    int64_t x = ia >= 0 ? a[ia] : 1, y = ib >= 0 ? b[ib] : 1;
    if (x != y && x != 1 && y != 1)
      return fbx_kernel_error(ctx, "The size of tensor a (%" PRId64 ") must match the size of tensor b (%" PRId64 ") at non-singleton dimension %d",
                              x, y, i);
    r[i] = x == 1 ? y : x;
  }
  return fbx_int_list_iv(&outs[0], n, r);
}

/* ---- sorting --------------------------------------------------------------------------------- */

typedef struct skey {
  double f;
  int64_t i; /* int64 keys (exact) */
  int64_t pos;
} skey;

/* Ascending with NaN last, ties by position (stable). */
static int cmp_f_asc(const void *pa, const void *pb) {
  const skey *a = pa, *b = pb;
  bool na = isnan(a->f), nb = isnan(b->f);
  if (na != nb) return na ? 1 : -1;
  if (!na && a->f != b->f) return a->f < b->f ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}
static int cmp_f_desc(const void *pa, const void *pb) {
  const skey *a = pa, *b = pb;
  bool na = isnan(a->f), nb = isnan(b->f);
  if (na != nb) return na ? -1 : 1;
  if (!na && a->f != b->f) return a->f > b->f ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}
static int cmp_i_asc(const void *pa, const void *pb) {
  const skey *a = pa, *b = pb;
  if (a->i != b->i) return a->i < b->i ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}
static int cmp_i_desc(const void *pa, const void *pb) {
  const skey *a = pa, *b = pb;
  if (a->i != b->i) return a->i > b->i ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* aten::sort / sort.stable / argsort / topk. The sort dim is moved last
 * (transpose view), each row is sorted stably (NaN counts as the largest
 * value, as in PyTorch), the first k entries are kept, and the results are
 * transposed back into fresh contiguous tensors: values in self's dtype,
 * indices int64. topk(sorted=False) returns them sorted too. */
fbx_status *fbx_k_sort(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  fbx_op_id id = (fbx_op_id)ctx->op->id;
  int64_t dimarg, k = -1;
  bool desc;
  switch (id) {
    case FBX_OP_topk:
      k = fbx_iv_to_int(&args[1]), dimarg = fbx_iv_to_int(&args[2]), desc = fbx_iv_to_int(&args[3]) != 0;
      break;
    case FBX_OP_sort_stable: dimarg = fbx_iv_to_int(&args[2]), desc = fbx_iv_to_int(&args[3]) != 0; break;
    default: dimarg = fbx_iv_to_int(&args[1]), desc = fbx_iv_to_int(&args[2]) != 0; break;
  }
  int64_t d;
  FBX_TRY(fbx_wrap_dim(ctx, &d, dimarg, x->ndim));
  int nd = x->ndim, last = nd ? nd - 1 : 0;
  int64_t n = nd ? x->sizes[d] : 1;
  if (k < 0) k = n;
  else if (k > n) return fbx_kernel_error(ctx, "selected index k out of range");
  /* x with dim d swapped to the end, as a contiguous copy */
  int64_t ts[FBX_MAX_DIMS], tst[FBX_MAX_DIMS];
  for (int i = 0; i < nd; i++) ts[i] = x->sizes[i], tst[i] = x->strides[i];
  if (nd) {
    ts[d] = x->sizes[last], tst[d] = x->strides[last];
    ts[last] = x->sizes[d], tst[last] = x->strides[d];
  }
  fbx_tensor *tv = NULL, *xc = NULL, *vals = NULL, *idx = NULL, *ov = NULL, *oi = NULL;
  skey *keys = NULL;
  bool ints = x->dtype == FBX_DTYPE_INT64;
  fbx_status *st = fbx_tensor_view(&tv, x, nd, ts, tst, x->offset);
  if (!st) st = fbx_tensor_clone_as(&xc, tv, ints ? FBX_DTYPE_INT64 : FBX_DTYPE_FLOAT64);
  int64_t osz[FBX_MAX_DIMS];
  for (int i = 0; i < nd; i++) osz[i] = ts[i];
  if (nd) osz[last] = k;
  if (!st) st = fbx_tensor_empty(&vals, x->dtype, nd, osz);
  if (!st) st = fbx_tensor_empty(&idx, FBX_DTYPE_INT64, nd, osz);
  if (!st && n > 0 && !(keys = fbx_malloc(sizeof *keys * (size_t)n))) st = fbx_status_nomem();
  if (!st && n > 0 && k > 0) {
    int64_t rows = xc->numel / n;
    int (*cmp)(const void *, const void *) = ints ? (desc ? cmp_i_desc : cmp_i_asc) : (desc ? cmp_f_desc : cmp_f_asc);
    for (int64_t r = 0; r < rows; r++) {
      for (int64_t j = 0; j < n; j++) {
        keys[j].pos = j;
        if (ints) keys[j].i = ((const int64_t *)xc->data)[r * n + j];
        else keys[j].f = ((const double *)xc->data)[r * n + j];
      }
      qsort(keys, (size_t)n, sizeof *keys, cmp);
      for (int64_t j = 0; j < k; j++) ((int64_t *)idx->data)[r * k + j] = keys[j].pos;
    }
    /* values: gather from the moved copy in self's dtype */
    fbx_tensor *xs = NULL;
    st = fbx_tensor_clone_as(&xs, tv, x->dtype);
    if (!st) {
      size_t es = fbx_dtype_size(x->dtype);
      const int64_t *iv = idx->data;
      for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < k; j++)
          memcpy((char *)vals->data + (size_t)(r * k + j) * es, (const char *)xs->data + (size_t)(r * n + iv[r * k + j]) * es, es);
    }
    fbx_tensor_release(xs);
  }
  /* transpose back */
  if (!st && nd) {
    int64_t bs[FBX_MAX_DIMS], bst[FBX_MAX_DIMS];
    fbx_tensor *v1 = NULL, *v2 = NULL;
    for (int i = 0; i < nd; i++) bs[i] = vals->sizes[i], bst[i] = vals->strides[i];
    bs[d] = vals->sizes[last], bst[d] = vals->strides[last];
    bs[last] = vals->sizes[d], bst[last] = vals->strides[d];
    st = fbx_tensor_view(&v1, vals, nd, bs, bst, vals->offset);
    if (!st) st = fbx_tensor_view(&v2, idx, nd, bs, bst, idx->offset);
    if (!st) st = fbx_tensor_clone_as(&ov, v1, vals->dtype);
    if (!st) st = fbx_tensor_clone_as(&oi, v2, FBX_DTYPE_INT64);
    fbx_tensor_release(v1);
    fbx_tensor_release(v2);
  } else if (!st) {
    ov = fbx_tensor_retain(vals);
    oi = fbx_tensor_retain(idx);
  }
  fbx_free(keys);
  fbx_tensor *tmp[] = {tv, xc, vals, idx};
  release_all(tmp, 4);
  if (st) {
    fbx_tensor_release(ov);
    fbx_tensor_release(oi);
    return st;
  }
  if (id == FBX_OP_argsort) {
    fbx_tensor_release(ov);
    fbx_set_out_tensor(outs, 0, oi);
  } else {
    fbx_set_out_tensor(outs, 0, ov);
    fbx_set_out_tensor(outs, 1, oi);
  }
  return NULL;
}

/* ---- norms -------------------------------------------------------------------------------- */

/* The p-norm of x over dims (an int[] / int ivalue, or None: all dims). */
static fbx_status *vector_norm(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *x, double p, fbx_ivalue dims,
                               bool keepdim) {
  fbx_tensor *a = NULL, *b = NULL, *c = NULL;
  fbx_ivalue all = fbx_iv_none();
  fbx_status *st = NULL;
  if (dims.kind == FBX_IV_NONE) {
    FBX_TRY(fbx_iv_list_new(&all, 0));
    dims = all;
  }
  if (isinf(p)) {
    st = ROW(&a, abs, TV(x));
    if (!st) st = p > 0 ? ROW(out, amax, TV(a), dims, BV(keepdim)) : ROW(out, amin, TV(a), dims, BV(keepdim));
  } else if (p == 0) {
    st = ROW(&a, ne_Scalar, TV(x), IV(0));
    if (!st) st = ROW(&b, to_dtype, TV(a), IV(x->dtype));
    if (!st) st = ROW(out, sum_dim_IntList, TV(b), dims, BV(keepdim), NV);
  } else if (p == 1) {
    st = ROW(&a, abs, TV(x));
    if (!st) st = ROW(out, sum_dim_IntList, TV(a), dims, BV(keepdim), NV);
  } else if (p == 2) {
    st = ROW(&a, mul_Tensor, TV(x), TV(x));
    if (!st) st = ROW(&b, sum_dim_IntList, TV(a), dims, BV(keepdim), NV);
    if (!st) st = ROW(out, sqrt, TV(b));
  } else {
    st = ROW(&a, abs, TV(x));
    if (!st) st = ROW(&b, pow_Tensor_Scalar, TV(a), FV(p));
    if (!st) st = ROW(&c, sum_dim_IntList, TV(b), dims, BV(keepdim), NV);
    if (!st) st = ROW(out, pow_Tensor_Scalar, TV(c), FV(1.0 / p));
  }
  fbx_iv_release(&all);
  fbx_tensor *tmp[] = {a, b, c};
  release_all(tmp, 3);
  return st;
}

/* aten::norm.Scalar / norm.ScalarOpt_dim / frobenius_norm.dim / linalg_vector_norm.
 * Floating inputs only (linalg_vector_norm's dtype argument converts first);
 * p None is 2. The result keeps x's dtype. */
fbx_status *fbx_k_norm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *cx = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  double p = 2;
  fbx_ivalue dims = fbx_iv_none();
  bool keep = false;
  switch ((fbx_op_id)ctx->op->id) {
    case FBX_OP_norm_Scalar: p = fbx_iv_to_double(&args[1]); break;
    case FBX_OP_norm_ScalarOpt_dim:
      if (args[1].kind != FBX_IV_NONE) p = fbx_iv_to_double(&args[1]);
      dims = args[2], keep = fbx_iv_to_int(&args[3]) != 0;
      break;
    case FBX_OP_frobenius_norm_dim: dims = args[1], keep = fbx_iv_to_int(&args[2]) != 0; break;
    default: /* linalg_vector_norm */
      p = fbx_iv_to_double(&args[1]), dims = args[2], keep = fbx_iv_to_int(&args[3]) != 0;
      if (args[4].kind != FBX_IV_NONE) {
        fbx_dtype dt = (fbx_dtype)fbx_iv_to_int(&args[4]);
        if (!fbx_dtype_valid(dt)) return fbx_kernel_error(ctx, "invalid dtype %d", (int)dt);
        FBX_TRY(fbx_tensor_clone_as(&cx, x, dt));
        x = cx;
      }
      break;
  }
  fbx_status *st = NULL;
  if (!fbx_dtype_is_floating(x->dtype))
    st = fbx_kernel_error(ctx, "norm(): input dtype should be either floating point or complex. Got %s instead.",
                          fbx_dtype_torch_name(x->dtype));
  if (!st) st = vector_norm(ctx, &out, x, p, dims, keep);
  fbx_tensor_release(cx);
  return finish(st, outs, &out);
}

/* ---- small linear algebra ------------------------------------------------------------------------ */

/* aten::dot(Tensor self, Tensor tensor) -> Tensor: 1-D, same size and dtype. */
fbx_status *fbx_k_dot(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  if (a->ndim != 1 || b->ndim != 1)
    return fbx_kernel_error(ctx, "1D tensors expected, but got %dD and %dD tensors", a->ndim, b->ndim);
  if (a->sizes[0] != b->sizes[0])
    return fbx_kernel_error(ctx, "inconsistent tensor size, expected tensor [%" PRId64 "] and src [%" PRId64 "] to have the same number of elements, but got %" PRId64 " and %" PRId64 " elements respectively",
                            a->sizes[0], b->sizes[0], a->sizes[0], b->sizes[0]);
  return finish(ROW(&out, matmul, TV(a), TV(b)), outs, &out);
}

/* aten::mv(Tensor self, Tensor vec) -> Tensor: 2-D times 1-D. */
fbx_status *fbx_k_mv(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  if (a->ndim != 2 || b->ndim != 1)
    return fbx_kernel_error(ctx, "vector + matrix @ vector expected, got 1, %d, %d", a->ndim, b->ndim);
  return finish(ROW(&out, matmul, TV(a), TV(b)), outs, &out);
}

/* aten::outer(Tensor self, Tensor vec2) -> Tensor: self[:, None] * vec2 (promotes). */
fbx_status *fbx_k_outer(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *col = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  if (a->ndim != 1 || b->ndim != 1)
    return fbx_kernel_error(ctx, "outer: Expected 1-D argument self, but got %d-D", a->ndim != 1 ? a->ndim : b->ndim);
  fbx_status *st = ROW(&col, unsqueeze, TV(a), IV(1));
  if (!st) st = ROW(&out, mul_Tensor, TV(col), TV(b));
  fbx_tensor_release(col);
  return finish(st, outs, &out);
}

/* aten::baddbmm(self, batch1, batch2, *, beta=1, alpha=1) = beta * self + alpha * (batch1 @ batch2);
 * beta == 0 ignores self (NaN in it does not propagate), as in PyTorch. */
fbx_status *fbx_k_baddbmm(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *b1, *b2, *m = NULL, *ma = NULL, *sb = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b1));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b2));
  if (self->dtype != b1->dtype)
    return fbx_kernel_error(ctx, "expected scalar type %s but found %s", fbx_dtype_torch_name(b1->dtype),
                            fbx_dtype_torch_name(self->dtype));
  double beta = fbx_iv_to_double(&args[3]), alpha = fbx_iv_to_double(&args[4]);
  fbx_status *st = ROW(&m, bmm, TV(b1), TV(b2));
  if (!st && alpha != 1) st = ROW(&ma, mul_Scalar, TV(m), args[4]);
  fbx_tensor *prod = ma ? ma : m;
  if (!st) {
    int64_t shape[FBX_MAX_DIMS];
    int nd = 0;
    st = fbx_broadcast_shapes(ctx, shape, &nd, self, prod);
    if (!st && (nd != prod->ndim || memcmp(shape, prod->sizes, sizeof(int64_t) * (size_t)nd)))
      st = fbx_kernel_error(ctx, "self of shape [%" PRId64 ", ...] cannot be broadcast to the product's shape", self->ndim ? self->sizes[0] : 0);
  }
  if (!st && beta == 0) {
    out = fbx_tensor_retain(prod);
  } else if (!st) {
    if (beta != 1) st = ROW(&sb, mul_Scalar, TV(self), args[3]);
    if (!st) st = ROW(&out, add_Tensor, TV(sb ? sb : self), TV(prod));
  }
  fbx_tensor *tmp[] = {m, ma, sb};
  release_all(tmp, 3);
  return finish(st, outs, &out);
}

/* Operand t with subscripts l[0..*n): where a letter repeats, *out gets
 * the diagonal view (one dim per distinct letter, in first-appearance
 * order, its stride the sum of the repeated dims'), and l / *n become its
 * letters; without repeats *out stays NULL. */
static fbx_status *einsum_diagonal(const fbx_kctx *ctx, fbx_tensor *t, int *l, int *n, fbx_tensor **out, int opi) {
  int ul[FBX_MAX_DIMS], nu = 0;
  int64_t sz[FBX_MAX_DIMS], sd[FBX_MAX_DIMS];
  *out = NULL;
  for (int k = 0; k < *n; k++) {
    int j = 0;
    while (j < nu && ul[j] != l[k]) j++;
    if (j == nu) {
      ul[nu] = l[k], sz[nu] = t->sizes[k], sd[nu++] = t->strides[k];
      continue;
    }
    if (sz[j] != t->sizes[k])
      return fbx_kernel_error(ctx, "einsum(): subscript %c is repeated for operand %d but the sizes don't match, %lld != %lld",
                              l[k] < 26 ? 'a' + l[k] : 'A' + l[k] - 26, opi, (long long)sz[j], (long long)t->sizes[k]);
    sd[j] += t->strides[k];
  }
  if (nu == *n) return NULL;
  FBX_TRY(fbx_tensor_view(out, t, nu, sz, sd, t->offset));
  memcpy(l, ul, sizeof(int) * (size_t)nu);
  *n = nu;
  return NULL;
}

/* aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
 * Explicit ("ij,jk->ik") and implicit ("ij,jk": letters seen once, sorted)
 * forms, size-1 broadcasting, no ellipsis. A letter repeated within one
 * operand takes its diagonal ("ii->i", "bii->b"; the sizes must agree): the
 * operand is viewed with those dims merged (their strides summed), as
 * PyTorch's einsum does. Every operand is viewed over the full letter space
 * (stride 0 for its missing letters); products are summed in double over
 * the contracted letters. All operands share one floating dtype. */
fbx_status *fbx_k_einsum(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  if (args[0].kind != FBX_IV_STR) return fbx_kernel_error(ctx, "equation must be a string");
  if (args[1].kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "expected a list of tensors");
  const char *eq = fbx_iv_str_data(&args[0]);
  int nops = fbx_iv_list_len(&args[1]);
  enum { MAXOPS = 8, NL = 52 };
  if (nops < 1 || nops > MAXOPS) return fbx_kernel_error(ctx, "einsum(): between 1 and %d operands supported", MAXOPS);
  fbx_tensor *ops[MAXOPS];
  for (int i = 0; i < nops; i++) {
    const fbx_ivalue *e = fbx_iv_list_at(&args[1], i);
    if (e->kind != FBX_IV_TENSOR) return fbx_kernel_error(ctx, "expected a Tensor at list position %d", i);
    ops[i] = e->u.t;
    if (ops[i]->dtype != ops[0]->dtype)
      return fbx_kernel_error(ctx, "expected scalar type %s but found %s", fbx_dtype_torch_name(ops[0]->dtype),
                              fbx_dtype_torch_name(ops[i]->dtype));
  }
  if (!fbx_dtype_is_floating(ops[0]->dtype)) return fbx_kernel_error(ctx, "einsum(): floating operands only");
  if (strstr(eq, "...")) return fbx_kernel_error(ctx, "einsum(): ellipsis ('...') is not supported");
  int opl[MAXOPS][FBX_MAX_DIMS], nopl[MAXOPS] = {0}, count[NL] = {0}, outl[FBX_MAX_DIMS], nout = 0;
  int64_t lsize[NL];
  for (int i = 0; i < NL; i++) lsize[i] = -1;
  const char *p = eq;
  int cur = 0;
  bool arrow = false;
  for (; *p; p++) {
    char c = *p;
    if (c == ' ') continue;
    if (c == ',') {
      if (++cur >= nops) return fbx_kernel_error(ctx, "einsum(): more operands were provided than specified in the equation");
      continue;
    }
    if (c == '-' && p[1] == '>') {
      arrow = true;
      p += 2;
      break;
    }
    int l = c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + c - 'A' : -1;
    if (l < 0) return fbx_kernel_error(ctx, "einsum(): invalid subscript given at index %d in the equation string", (int)(p - eq));
    if (nopl[cur] >= FBX_MAX_DIMS) return fbx_kernel_error(ctx, "einsum(): too many subscripts");
    opl[cur][nopl[cur]++] = l;
    count[l]++;
  }
  if (cur != nops - 1) return fbx_kernel_error(ctx, "einsum(): fewer operands were provided than specified in the equation");
  if (arrow) {
    for (; *p; p++) {
      char c = *p;
      if (c == ' ') continue;
      int l = c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + c - 'A' : -1;
      if (l < 0 || !count[l]) return fbx_kernel_error(ctx, "einsum(): output subscript %c does not appear in the equation for any input operand", c);
      for (int k = 0; k < nout; k++)
        if (outl[k] == l) return fbx_kernel_error(ctx, "einsum(): output subscript %c appears more than once in the output", c);
      if (nout >= FBX_MAX_DIMS) return fbx_kernel_error(ctx, "einsum(): too many output subscripts");
      outl[nout++] = l;
    }
  } else {
    for (int l = 0; l < NL; l++)
      if (count[l] == 1) outl[nout++] = l;
  }
  fbx_tensor *diag[MAXOPS] = {NULL};
  fbx_status *st = NULL;
  for (int i = 0; i < nops && !st; i++) {
    if (nopl[i] != ops[i]->ndim) {
      st = fbx_kernel_error(ctx, "einsum(): the number of subscripts in the equation (%d) does not match the number of dimensions (%d) for operand %d",
                            nopl[i], ops[i]->ndim, i);
      break;
    }
    st = einsum_diagonal(ctx, ops[i], opl[i], &nopl[i], &diag[i], i);
    if (diag[i]) ops[i] = diag[i];
  }
  for (int i = 0; i < nops && !st; i++) {
    for (int k = 0; k < nopl[i]; k++) {
      int l = opl[i][k];
      int64_t s = ops[i]->sizes[k];
      if (lsize[l] < 0 || lsize[l] == 1) lsize[l] = s;
      else if (s != 1 && s != lsize[l]) {
        st = fbx_kernel_error(ctx, "einsum(): operands do not broadcast with remapped shapes (original->remapped)");
        break;
      }
    }
  }
  if (st) {
    for (int i = 0; i < nops; i++) fbx_tensor_release(diag[i]);
    return st;
  }
  /* letter order: output letters, then contracted ones */
  int all[NL], nall = 0;
  bool in_out[NL] = {false};
  for (int k = 0; k < nout; k++) all[nall++] = outl[k], in_out[outl[k]] = true;
  for (int l = 0; l < NL; l++)
    if (count[l] && !in_out[l]) all[nall++] = l;
  int64_t str[MAXOPS][NL], osz[FBX_MAX_DIMS], onum = 1, cnum = 1;
  for (int i = 0; i < nops; i++)
    for (int a = 0; a < nall; a++) {
      str[i][a] = 0;
      for (int k = 0; k < nopl[i]; k++)
        if (opl[i][k] == all[a] && ops[i]->sizes[k] != 1) str[i][a] = ops[i]->strides[k];
    }
  for (int k = 0; k < nout; k++) osz[k] = lsize[outl[k]], onum *= osz[k];
  for (int a = nout; a < nall; a++) cnum *= lsize[all[a]];
  fbx_tensor *out = NULL, *res = NULL, *cv[MAXOPS] = {NULL};
  for (int i = 0; i < nops && !st; i++) st = fbx_tensor_clone_as(&cv[i], ops[i], FBX_DTYPE_FLOAT64);
  /* cv are contiguous: recompute the strides over them */
  for (int i = 0; i < nops && !st; i++)
    for (int a = 0; a < nall; a++) {
      str[i][a] = 0;
      for (int k = 0; k < nopl[i]; k++)
        if (opl[i][k] == all[a] && ops[i]->sizes[k] != 1) str[i][a] = cv[i]->strides[k];
    }
  if (!st) st = fbx_tensor_empty(&res, FBX_DTYPE_FLOAT64, nout, osz);
  if (!st) {
    double *r = res->data;
    int64_t coord[NL];
    for (int64_t o = 0; o < onum; o++) {
      int64_t rem = o, base[MAXOPS] = {0};
      for (int a = nout - 1; a >= 0; a--) {
        int64_t s = lsize[all[a]];
        coord[a] = rem % s, rem /= s;
        for (int i = 0; i < nops; i++) base[i] += coord[a] * str[i][a];
      }
      double acc = 0;
      for (int64_t c = 0; c < cnum; c++) {
        int64_t cr = c, off[MAXOPS];
        for (int i = 0; i < nops; i++) off[i] = base[i];
        for (int a = nall - 1; a >= nout; a--) {
          int64_t s = lsize[all[a]], q = cr % s;
          cr /= s;
          for (int i = 0; i < nops; i++) off[i] += q * str[i][a];
        }
        double prod = 1;
        for (int i = 0; i < nops; i++) prod *= ((const double *)cv[i]->data)[off[i]];
        acc += prod;
      }
      r[o] = acc;
    }
    st = fbx_tensor_clone_as(&out, res, ops[0]->dtype);
  }
  release_all(cv, nops);
  release_all(diag, nops);
  fbx_tensor_release(res);
  return finish(st, outs, &out);
}

/* fusebox::einsum_diag_backward(Tensor grad, str labels, int[] sizes): the
 * gradient of an einsum operand whose subscripts `labels` repeat a letter
 * (its forward read the diagonal): zeros of `sizes` with grad on that
 * diagonal. grad has one dim per distinct letter, in first-appearance
 * order, each of the letter's size or 1 (broadcast: a letter the forward
 * summed away). */
fbx_status *fbx_k_fbx_einsum_diag_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *out = NULL, *gd = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  if (args[1].kind != FBX_IV_STR) return fbx_kernel_error(ctx, "labels must be a string");
  const char *lab = fbx_iv_str_data(&args[1]);
  int64_t sz[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, 2, &args[2], sz, FBX_MAX_DIMS, &st);
  if (st) return st;
  if ((int)strlen(lab) != n) return fbx_kernel_error(ctx, "%d labels for %d sizes", (int)strlen(lab), n);
  int pos[FBX_MAX_DIMS], nu = 0;
  char ul[FBX_MAX_DIMS];
  int64_t usz[FBX_MAX_DIMS];
  for (int k = 0; k < n; k++) {
    int j = 0;
    while (j < nu && ul[j] != lab[k]) j++;
    if (j == nu) ul[nu] = lab[k], usz[nu++] = sz[k];
    else if (usz[j] != sz[k]) return fbx_kernel_error(ctx, "label %c has sizes %lld and %lld", lab[k], (long long)usz[j], (long long)sz[k]);
    pos[k] = j;
  }
  if (g->ndim != nu) return fbx_kernel_error(ctx, "grad has %d dims for %d distinct labels", g->ndim, nu);
  for (int j = 0; j < nu; j++)
    if (g->sizes[j] != usz[j] && g->sizes[j] != 1)
      return fbx_kernel_error(ctx, "grad's dim %d has size %lld, expected %lld or 1", j, (long long)g->sizes[j], (long long)usz[j]);
  if ((st = fbx_tensor_clone_as(&gd, g, FBX_DTYPE_FLOAT64)) || (st = fbx_tensor_zeros(&out, FBX_DTYPE_FLOAT64, n, sz)))
    goto done;
  int64_t total = 1, ostr[FBX_MAX_DIMS], dstr[FBX_MAX_DIMS] = {0};
  for (int j = 0; j < nu; j++) total *= usz[j];
  for (int k = 0; k < n; k++) dstr[pos[k]] += out->strides[k];
  const double *gv = gd->data;
  double *ov = out->data;
  for (int j = 0; j < nu; j++) ostr[j] = g->sizes[j] == 1 ? 0 : gd->strides[j];
  for (int64_t u = 0; u < total; u++) {
    int64_t rem = u, go = 0, oo = 0;
    for (int j = nu - 1; j >= 0; j--) {
      int64_t c = rem % usz[j];
      rem /= usz[j];
      go += c * ostr[j], oo += c * dstr[j];
    }
    ov[oo] = gv[go];
  }
  {
    fbx_tensor *r = NULL;
    st = fbx_tensor_clone_as(&r, out, g->dtype);
    fbx_tensor_release(out);
    out = r;
  }
done:
  fbx_tensor_release(gd);
  return finish(st, outs, &out);
}

/* aten::cdist(Tensor x1, Tensor x2, float p=2., int? compute_mode=None) -> Tensor
 * [..., P, M] and [..., R, M] -> [..., P, R]: the p-norm of every row
 * difference, computed directly (PyTorch's matrix-product shortcut for
 * p == 2 on more than 25 rows trades accuracy for speed). */
fbx_status *fbx_k_cdist(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x1, *x2, *a = NULL, *b = NULL, *d = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x1));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x2));
  double p = fbx_iv_to_double(&args[2]);
  if (x1->ndim < 2 || x2->ndim < 2)
    return fbx_kernel_error(ctx, "cdist only supports at least 2D tensors, X%d got: %dD", x1->ndim < 2 ? 1 : 2,
                            x1->ndim < 2 ? x1->ndim : x2->ndim);
  if (x1->sizes[x1->ndim - 1] != x2->sizes[x2->ndim - 1])
    return fbx_kernel_error(ctx, "X1 and X2 must have the same number of columns. X1: %" PRId64 " X2: %" PRId64,
                            x1->sizes[x1->ndim - 1], x2->sizes[x2->ndim - 1]);
  if (!fbx_dtype_is_floating(x1->dtype) || x1->dtype != x2->dtype)
    return fbx_kernel_error(ctx, "cdist only supports floating-point dtypes, X1 got: %s", fbx_dtype_torch_name(x1->dtype));
  if (p < 0) return fbx_kernel_error(ctx, "cdist only supports non-negative p values");
  fbx_status *st = ROW(&a, unsqueeze, TV(x1), IV(-2));
  if (!st) st = ROW(&b, unsqueeze, TV(x2), IV(-3));
  if (!st) st = ROW(&d, sub_Tensor, TV(a), TV(b));
  if (!st) st = vector_norm(ctx, &out, d, p, IV(-1), false);
  fbx_tensor *tmp[] = {a, b, d};
  release_all(tmp, 3);
  return finish(st, outs, &out);
}

/* aten::kthvalue(self, k, dim=-1, keepdim), median.dim / nanmedian.dim(self,
 * dim, keepdim) -> (values, indices), and median / nanmedian(self) (every
 * element) -> value: the entry at a position of each slice sorted along dim
 * (the sort row: stable, NaN as the largest value):
 *   kthvalue   position k - 1;
 *   median     the lower median (n - 1) / 2, or, where the slice has a NaN,
 *              the first NaN (PyTorch's median propagates NaN);
 *   nanmedian  the lower median of the non-NaN values, (m - 1) / 2, or the
 *              first element where all are NaN.
 * Indices index the slice; with ties any equal value's index is a valid
 * answer (PyTorch's CPU kernels leave which one unspecified); here it is
 * the first in sort order. */
fbx_status *fbx_k_kthvalue(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *flat = NULL, *sv = NULL, *si = NULL, *pos = NULL, *v = NULL, *ix = NULL, *rv = NULL, *ri = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  const char *name = fbx_sym_unqual(ctx->op->schema.name);
  bool kth = !strcmp(name, "kthvalue"), nan_skip = !strcmp(name, "nanmedian"), all = ctx->op->schema.nrets == 1;
  int64_t d = 0, k = kth ? fbx_iv_to_int(&args[1]) : 0;
  bool keepdim = all ? false : fbx_iv_to_int(&args[kth ? 3 : 2]) != 0;
  fbx_status *st = NULL;
  if (all) { /* every element: the flattened tensor, dim 0 */
    int64_t n = x->numel;
    if (n == 0) return fbx_kernel_error(ctx, "%s() input tensor cannot be empty", name);
    fbx_ivalue sz;
    FBX_TRY(fbx_int_list_iv(&sz, 1, &n));
    st = ROW(&flat, reshape, TV(x), sz);
    fbx_iv_release(&sz);
    if (st) return st;
    x = flat;
  } else {
    FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[kth ? 2 : 1]), x->ndim));
  }
  int64_t n = x->ndim ? x->sizes[d] : 1;
  if (kth && (k < 1 || k > n)) st = fbx_kernel_error(ctx, "kthvalue(): selected number k out of range for dimension %" PRId64, d);
  else if (!kth && !all && n == 0) st = fbx_kernel_error(ctx, "%s(): Expected reduction dim %" PRId64 " to have non-zero size.", name, d);
  if (!st) {
    fbx_ivalue o[2] = {fbx_iv_none(), fbx_iv_none()};
    st = fbx_row_run(ctx, FBX_OP_sort, (fbx_ivalue[]){TV(x), IV(d), BV(false)}, 3, o);
    if (!st) sv = o[0].u.t, si = o[1].u.t;
  }
  /* the position in each sorted slice, [.., 1, ..] along d */
  int64_t psz[FBX_MAX_DIMS], outer = 1, inner = 1;
  for (int i = 0; i < x->ndim; i++) {
    psz[i] = i == d ? 1 : x->sizes[i];
    if (i < d) outer *= x->sizes[i];
    if (i > d) inner *= x->sizes[i];
  }
  if (!st) st = fbx_tensor_empty(&pos, FBX_DTYPE_INT64, x->ndim ? x->ndim : 1, x->ndim ? psz : (int64_t[]){1});
  if (!st) {
    bool fl = fbx_dtype_is_floating(x->dtype);
    int64_t *pv = pos->data;
    for (int64_t o = 0; o < outer; o++)
      for (int64_t in = 0; in < inner; in++) {
        int64_t nans = 0; /* sorted: the NaNs are the slice's tail */
        while (fl && nans < n && isnan(fbx_tensor_get_f64(sv, (o * n + n - 1 - nans) * inner + in))) nans++;
        int64_t m = n - nans, p = kth ? k - 1 : nan_skip ? (m > 0 ? (m - 1) / 2 : 0) : nans ? m : (n - 1) / 2;
        pv[o * inner + in] = p;
      }
  }
  if (!st) st = ROW(&v, gather, TV(sv), IV(d), TV(pos), BV(false));
  if (!st) st = ROW(&ix, gather, TV(si), IV(d), TV(pos), BV(false));
  if (!st && (all || !keepdim)) {
    if (all) {
      fbx_ivalue none_sz;
      st = fbx_int_list_iv(&none_sz, 0, NULL);
      if (!st) st = ROW(&rv, reshape, TV(v), none_sz);
      fbx_iv_release(&none_sz);
    } else {
      st = ROW(&rv, squeeze_dim, TV(v), IV(d));
      if (!st) st = ROW(&ri, squeeze_dim, TV(ix), IV(d));
    }
  } else if (!st) {
    rv = fbx_tensor_retain(v), ri = fbx_tensor_retain(ix);
  }
  fbx_tensor *tmp[] = {flat, sv, si, pos, v, ix};
  release_all(tmp, 6);
  return finish2(st, outs, &rv, &ri);
}

/* ---- composites -------------------------------------------------------------------------------- */

/* aten::glu(Tensor self, int dim=-1) -> Tensor: a * sigmoid(b), a and b the halves along dim. */
fbx_status *fbx_k_glu(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *a = NULL, *b = NULL, *s = NULL, *out = NULL;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (x->ndim == 0) return fbx_kernel_error(ctx, "glu does not support scalars because halving size must be even");
  FBX_TRY(fbx_wrap_dim(ctx, &d, fbx_iv_to_int(&args[1]), x->ndim));
  int64_t n = x->sizes[d];
  if (n % 2) return fbx_kernel_error(ctx, "Halving dimension must be even, but dimension %d is size %" PRId64, (int)d, n);
  fbx_status *st = ROW(&a, narrow, TV(x), IV(d), IV(0), IV(n / 2));
  if (!st) st = ROW(&b, narrow, TV(x), IV(d), IV(n / 2), IV(n / 2));
  if (!st) st = ROW(&s, sigmoid, TV(b));
  if (!st) st = ROW(&out, mul_Tensor, TV(a), TV(s));
  fbx_tensor *tmp[] = {a, b, s};
  release_all(tmp, 3);
  return finish(st, outs, &out);
}

/* aten::logaddexp / logaddexp2(self, other): log(e^a + e^b) (base 2 for
 * logaddexp2) as m + log1p(e^-|a - b|) with m = max(a, b), the log1p
 * divided by ln 2 for base 2; where a == b is infinite the result is a (the
 * difference would be NaN), as PyTorch's CPU kernel. Floating inputs. */
fbx_status *fbx_k_logaddexp(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *a, *b, *t[9] = {NULL}, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &a));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  bool two = ctx->op->id == FBX_OP_logaddexp2;
  if (!fbx_dtype_is_floating(a->dtype) || !fbx_dtype_is_floating(b->dtype))
    return fbx_kernel_error(ctx, "%s: not implemented for %s and %s inputs", two ? "logaddexp2" : "logaddexp",
                            fbx_dtype_torch_name(a->dtype), fbx_dtype_torch_name(b->dtype));
  fbx_status *st = ROW(&t[0], sub_Tensor, TV(a), TV(b), IV(1));
  if (!st) st = ROW(&t[1], abs, TV(t[0]));
  if (!st) st = ROW(&t[2], neg, TV(t[1]));
  if (!st) st = two ? ROW(&t[3], exp2, TV(t[2])) : ROW(&t[3], exp, TV(t[2]));
  if (!st) st = ROW(&t[4], log1p, TV(t[3]));
  if (!st && two) {
    fbx_tensor *d = NULL;
    st = ROW(&d, div_Scalar, TV(t[4]), FV(0.69314718055994530942));
    fbx_tensor_release(t[4]);
    t[4] = d;
  }
  if (!st) st = ROW(&t[5], maximum, TV(a), TV(b));
  if (!st) st = ROW(&t[6], add_Tensor, TV(t[5]), TV(t[4]), IV(1));
  if (!st) st = ROW(&t[7], isinf, TV(a));
  if (!st) st = ROW(&t[8], eq_Tensor, TV(a), TV(b));
  if (!st) {
    fbx_tensor *m = NULL;
    st = ROW(&m, logical_and, TV(t[7]), TV(t[8]));
    if (!st) st = ROW(&out, where_self, TV(m), TV(t[5]), TV(t[6]));
    fbx_tensor_release(m);
  }
  release_all(t, 9);
  return finish(st, outs, &out);
}

/* An int list ivalue of n sizes (for ROW calls), released by the caller. */
static fbx_ivalue sizes_iv(int n, const int64_t *v, fbx_status **st) {
  fbx_ivalue l = fbx_iv_none();
  if (!*st) *st = fbx_int_list_iv(&l, n, v);
  return l;
}

/* nn.Bilinear's operands: x1 [*, I], x2 [*, J] with the same leading dims,
 * weight [O, I, J]; *rows the product of the leading dims. */
static fbx_status *bilinear_shapes(fbx_kctx *ctx, const fbx_tensor *x1, const fbx_tensor *x2, const fbx_tensor *w,
                                   int64_t *rows) {
  if (w->ndim != 3) return fbx_kernel_error(ctx, "bilinear(): weight must be three-dimensional, got %dD", w->ndim);
  if (x1->ndim < 1 || x1->ndim != x2->ndim)
    return fbx_kernel_error(ctx, "bilinear(): input dimensions do not match: got %d and %d", x1->ndim, x2->ndim);
  for (int d = 0; d < x1->ndim - 1; d++)
    if (x1->sizes[d] != x2->sizes[d])
      return fbx_kernel_error(ctx, "bilinear(): input batch dimensions do not match: got %" PRId64 " and %" PRId64,
                              x1->sizes[d], x2->sizes[d]);
  if (x1->sizes[x1->ndim - 1] != w->sizes[1] || x2->sizes[x2->ndim - 1] != w->sizes[2])
    return fbx_kernel_error(ctx, "bilinear(): input sizes %" PRId64 " and %" PRId64 " do not match weight [%" PRId64
                                 ", %" PRId64 ", %" PRId64 "]", x1->sizes[x1->ndim - 1], x2->sizes[x2->ndim - 1],
                            w->sizes[0], w->sizes[1], w->sizes[2]);
  *rows = 1;
  for (int d = 0; d < x1->ndim - 1; d++) *rows *= x1->sizes[d];
  return NULL;
}

/* aten::bilinear(input1 [*, I], input2 [*, J], weight [O, I, J], bias? [O])
 * -> [*, O]: y[n, o] = sum_ij x1[n, i] W[o, i, j] x2[n, j] + b[o], as
 * x1 @ W viewed [I, O J], times x2 broadcast over O, summed over J. */
fbx_status *fbx_k_bilinear(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x1, *x2, *w, *t[8] = {NULL}, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x1));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x2));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &w));
  int64_t n, O = w->ndim == 3 ? w->sizes[0] : 0, I = 0, J = 0;
  FBX_TRY(bilinear_shapes(ctx, x1, x2, w, &n));
  I = w->sizes[1], J = w->sizes[2];
  fbx_status *st = NULL;
  fbx_ivalue s_nI = sizes_iv(2, (int64_t[]){n, I}, &st), s_n1J = sizes_iv(3, (int64_t[]){n, 1, J}, &st),
             s_IOJ = sizes_iv(2, (int64_t[]){I, O * J}, &st), s_nOJ = sizes_iv(3, (int64_t[]){n, O, J}, &st),
             perm = sizes_iv(3, (int64_t[]){1, 0, 2}, &st), last = sizes_iv(1, (int64_t[]){-1}, &st);
  int64_t osz[FBX_MAX_DIMS];
  for (int d = 0; d < x1->ndim - 1; d++) osz[d] = x1->sizes[d];
  osz[x1->ndim - 1] = O;
  fbx_ivalue s_out = sizes_iv(x1->ndim, osz, &st);
  if (!st) st = ROW(&t[0], reshape, TV(x1), s_nI);
  if (!st) st = ROW(&t[1], permute, TV(w), perm);
  if (!st) st = ROW(&t[2], reshape, TV(t[1]), s_IOJ);
  if (!st) st = ROW(&t[3], mm, TV(t[0]), TV(t[2]));
  if (!st) st = ROW(&t[4], reshape, TV(t[3]), s_nOJ);
  if (!st) st = ROW(&t[5], reshape, TV(x2), s_n1J);
  if (!st) st = ROW(&t[6], mul_Tensor, TV(t[4]), TV(t[5]));
  if (!st) st = ROW(&t[7], sum_dim_IntList, TV(t[6]), last, BV(false), NV);
  if (!st && args[3].kind == FBX_IV_TENSOR) {
    fbx_tensor *b = NULL;
    st = ROW(&b, add_Tensor, TV(t[7]), args[3], IV(1));
    fbx_tensor_release(t[7]);
    t[7] = b;
  }
  if (!st) st = ROW(&out, reshape, TV(t[7]), s_out);
  fbx_ivalue ls[] = {s_nI, s_n1J, s_IOJ, s_nOJ, perm, last, s_out};
  for (int i = 0; i < 7; i++) fbx_iv_release(&ls[i]);
  release_all(t, 8);
  return finish(st, outs, &out);
}

/* fusebox::bilinear_backward(grad [*, O], input1, input2, weight, bool has_bias)
 * -> (d input1, d input2, d weight, d bias?), with g = grad as [n, O] and
 * u = g @ W viewed [n, I, J]: d x1 = sum_j u x2, d x2 = sum_i u x1,
 * d W = g^T @ (x1 outer x2) viewed [O, I, J], d b = sum_n g. */
fbx_status *fbx_k_fbx_bilinear_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *x1, *x2, *w, *t[14] = {NULL}, *r[4] = {NULL};
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x1));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &x2));
  FBX_TRY(fbx_arg_tensor(ctx, args, 3, &w));
  int64_t n;
  FBX_TRY(bilinear_shapes(ctx, x1, x2, w, &n));
  int64_t O = w->sizes[0], I = w->sizes[1], J = w->sizes[2];
  if (g->numel != n * O) return fbx_kernel_error(ctx, "bilinear_backward: grad has %" PRId64 " elements, expected %" PRId64,
                                                 g->numel, n * O);
  fbx_status *st = NULL;
  fbx_ivalue s_nO = sizes_iv(2, (int64_t[]){n, O}, &st), s_OIJ2 = sizes_iv(2, (int64_t[]){O, I * J}, &st),
             s_nIJ = sizes_iv(3, (int64_t[]){n, I, J}, &st), s_n1J = sizes_iv(3, (int64_t[]){n, 1, J}, &st),
             s_nI1 = sizes_iv(3, (int64_t[]){n, I, 1}, &st), s_nIJ2 = sizes_iv(2, (int64_t[]){n, I * J}, &st),
             s_OIJ = sizes_iv(3, (int64_t[]){O, I, J}, &st), d2 = sizes_iv(1, (int64_t[]){2}, &st),
             d1 = sizes_iv(1, (int64_t[]){1}, &st), d0 = sizes_iv(1, (int64_t[]){0}, &st),
             s_x1 = sizes_iv(x1->ndim, x1->sizes, &st), s_x2 = sizes_iv(x2->ndim, x2->sizes, &st);
  if (!st) st = ROW(&t[0], reshape, TV(g), s_nO);                      /* g [n, O] */
  if (!st) st = ROW(&t[1], reshape, TV(w), s_OIJ2);                    /* W [O, I J] */
  if (!st) st = ROW(&t[2], mm, TV(t[0]), TV(t[1]));                    /* u [n, I J] */
  if (!st) st = ROW(&t[3], reshape, TV(t[2]), s_nIJ);
  if (!st) st = ROW(&t[4], reshape, TV(x2), s_n1J);
  if (!st) st = ROW(&t[5], reshape, TV(x1), s_nI1);
  if (!st) st = ROW(&t[6], mul_Tensor, TV(t[3]), TV(t[4]));
  if (!st) st = ROW(&t[7], sum_dim_IntList, TV(t[6]), d2, BV(false), NV);
  if (!st) st = ROW(&r[0], reshape, TV(t[7]), s_x1);
  if (!st) st = ROW(&t[8], mul_Tensor, TV(t[3]), TV(t[5]));
  if (!st) st = ROW(&t[9], sum_dim_IntList, TV(t[8]), d1, BV(false), NV);
  if (!st) st = ROW(&r[1], reshape, TV(t[9]), s_x2);
  if (!st) st = ROW(&t[10], mul_Tensor, TV(t[5]), TV(t[4]));          /* x1 outer x2 [n, I, J] */
  if (!st) st = ROW(&t[11], reshape, TV(t[10]), s_nIJ2);
  if (!st) st = ROW(&t[12], t, TV(t[0]));
  if (!st) st = ROW(&t[13], mm, TV(t[12]), TV(t[11]));
  if (!st) st = ROW(&r[2], reshape, TV(t[13]), s_OIJ);
  if (!st && fbx_iv_to_int(&args[4])) st = ROW(&r[3], sum_dim_IntList, TV(t[0]), d0, BV(false), NV);
  fbx_ivalue ls[] = {s_nO, s_OIJ2, s_nIJ, s_n1J, s_nI1, s_nIJ2, s_OIJ, d2, d1, d0, s_x1, s_x2};
  for (int i = 0; i < 12; i++) fbx_iv_release(&ls[i]);
  release_all(t, 14);
  if (st) {
    release_all(r, 4);
    return st;
  }
  for (int i = 0; i < 3; i++) fbx_set_out_tensor(outs, i, r[i]);
  outs[3] = r[3] ? fbx_iv_tensor(r[3]) : fbx_iv_none();
  return NULL;
}

/* aten::rrelu(self, lower=1/8, upper=1/3, training=False, generator=None)
 * in eval: leaky_relu with the slope (lower + upper) / 2, as PyTorch's. Its
 * training form draws a random slope per element, which is refused. */
fbx_status *fbx_k_rrelu(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (fbx_iv_to_int(&args[3]))
    return fbx_kernel_error(ctx, "rrelu with training=True (a random slope per element) is not implemented; "
                                 "eval mode uses the mean slope");
  double lo = fbx_iv_to_double(&args[1]), hi = fbx_iv_to_double(&args[2]);
  if (lo > hi) return fbx_kernel_error(ctx, "Lower bound should be less than or equal to the upper bound");
  fbx_status *st = ROW(&out, leaky_relu, TV(x), FV((lo + hi) / 2));
  return finish(st, outs, &out);
}

/* aten::cosine_similarity(x1, x2, dim=1, eps=1e-8):
 * sum(x1 * x2) / sqrt(clamp_min(sum(x1 * x1) * sum(x2 * x2), eps^2)) over dim. */
fbx_status *fbx_k_cosine_similarity(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x1, *x2, *t[8] = {NULL}, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x1));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &x2));
  double eps = fbx_iv_to_double(&args[3]);
  fbx_ivalue dim = args[2];
  fbx_status *st = ROW(&t[0], mul_Tensor, TV(x1), TV(x2));
  if (!st) st = ROW(&t[1], sum_dim_IntList, TV(t[0]), dim, BV(false), NV);
  if (!st) st = ROW(&t[2], mul_Tensor, TV(x1), TV(x1));
  if (!st) st = ROW(&t[3], sum_dim_IntList, TV(t[2]), dim, BV(false), NV);
  if (!st) st = ROW(&t[4], mul_Tensor, TV(x2), TV(x2));
  if (!st) st = ROW(&t[5], sum_dim_IntList, TV(t[4]), dim, BV(false), NV);
  if (!st) st = ROW(&t[6], mul_Tensor, TV(t[3]), TV(t[5]));
  if (!st) st = ROW(&t[7], clamp_min, TV(t[6]), FV(eps * eps));
  if (!st) {
    fbx_tensor *s = NULL;
    st = ROW(&s, sqrt, TV(t[7]));
    if (!st) st = ROW(&out, div_Tensor, TV(t[1]), TV(s));
    fbx_tensor_release(s);
  }
  release_all(t, 8);
  return finish(st, outs, &out);
}

/* log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)); selu = elu with SELU's
 * alpha and scale; celu(x, a) = elu(x, a, 1, 1/a); sgn of a real tensor is sign. */
fbx_status *fbx_k_act_extra(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *t[4] = {NULL}, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  fbx_status *st = NULL;
  switch ((fbx_op_id)ctx->op->id) {
    case FBX_OP_log_sigmoid:
      st = ROW(&t[0], abs, TV(x));
      if (!st) st = ROW(&t[1], neg, TV(t[0]));
      if (!st) st = ROW(&t[2], exp, TV(t[1]));
      if (!st) st = ROW(&t[3], log1p, TV(t[2]));
      if (!st) {
        fbx_tensor *m = NULL;
        st = ROW(&m, clamp_max, TV(x), IV(0));
        if (!st) st = ROW(&out, sub_Tensor, TV(m), TV(t[3]));
        fbx_tensor_release(m);
      }
      break;
    case FBX_OP_selu:
      st = ROW(&out, elu, TV(x), FV(1.6732632423543772848170429916717), FV(1.0507009873554804934193349852946), IV(1));
      break;
    case FBX_OP_celu: {
      double a = fbx_iv_to_double(&args[1]);
      if (a == 0) {
        st = fbx_kernel_error(ctx, "ZeroDivisionError");
        break;
      }
      st = ROW(&out, elu, TV(x), args[1], IV(1), FV(1.0 / a));
      break;
    }
    default: st = ROW(&out, sign, TV(x)); break;
  }
  release_all(t, 4);
  return finish(st, outs, &out);
}

/* aten::hardshrink(self, lambd=0.5): self where |self| > lambd (NaN kept), else 0;
 * aten::softshrink(self, lambd=0.5): self - clamp(self, -lambd, lambd), which
 * is self -+ lambd outside [-lambd, lambd] and 0 inside, with 0 for NaN (ATen's
 * comparisons send NaN to its zero branch). Floating inputs but float16 (not
 * in PyTorch 1.13's CPU kernels). */
fbx_status *fbx_k_shrink(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *t[3] = {NULL}, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  bool hard = ctx->op->id == FBX_OP_hardshrink;
  if (!fbx_dtype_is_floating(x->dtype) || x->dtype == FBX_DTYPE_FLOAT16)
    return fbx_kernel_error(ctx, "\"%s_cpu\" not implemented for '%s'", hard ? "hardshrink" : "softshrink",
                            fbx_dtype_torch_name(x->dtype));
  if (!fbx_iv_is_scalar(&args[1])) return fbx_kernel_error(ctx, "lambd must be a number");
  double l = fbx_iv_to_double(&args[1]);
  fbx_status *st;
  if (hard) {
    st = ROW(&t[0], abs, TV(x));
    if (!st) st = ROW(&t[1], le_Scalar, TV(t[0]), args[1]);
    if (!st) st = ROW(&out, masked_fill_Scalar, TV(x), TV(t[1]), IV(0));
  } else if (!(l >= 0)) {
    st = fbx_kernel_error(ctx, "lambda must be greater or equal to 0, but found to be %g.", l);
  } else {
    st = ROW(&t[0], clamp, TV(x), FV(-l), args[1]);
    if (!st) st = ROW(&t[1], sub_Tensor, TV(x), TV(t[0]));
    if (!st) st = ROW(&t[2], isnan, TV(x));
    if (!st) st = ROW(&out, masked_fill_Scalar, TV(t[1]), TV(t[2]), IV(0));
  }
  release_all(t, 3);
  return finish(st, outs, &out);
}

/* ---- losses ---------------------------------------------------------------------------------- */

/* mse_loss, l1_loss, smooth_l1_loss(beta), huber_loss(delta) on (self - target). */
fbx_status *fbx_k_loss(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y, *t[6] = {NULL}, *l = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &y));
  int64_t red = fbx_iv_to_int(&args[2]);
  fbx_op_id id = (fbx_op_id)ctx->op->id;
  fbx_status *st = ROW(&t[0], sub_Tensor, TV(x), TV(y));
  if (!st && id == FBX_OP_mse_loss) {
    st = ROW(&l, mul_Tensor, TV(t[0]), TV(t[0]));
  } else if (!st) {
    st = ROW(&t[1], abs, TV(t[0]));
    if (!st && id == FBX_OP_l1_loss) {
      l = fbx_tensor_retain(t[1]);
    } else if (!st) {
      double b = fbx_iv_to_double(&args[3]);
      if (b < 0) st = fbx_kernel_error(ctx, "%s does not support negative values for %s.", id == FBX_OP_huber_loss ? "huber_loss" : "smooth_l1_loss", id == FBX_OP_huber_loss ? "delta" : "beta");
      else if (id == FBX_OP_smooth_l1_loss && b == 0) l = fbx_tensor_retain(t[1]);
      else if (id == FBX_OP_smooth_l1_loss) {
        /* z < beta ? 0.5 * z * z / beta : z - 0.5 * beta */
        st = ROW(&t[2], mul_Scalar, TV(t[1]), FV(0.5));
        if (!st) st = ROW(&t[3], mul_Tensor, TV(t[2]), TV(t[1]));
        if (!st) st = ROW(&t[4], div_Scalar, TV(t[3]), FV(b));
        if (!st) st = ROW(&t[5], sub_Scalar, TV(t[1]), FV(0.5 * b), IV(1));
        if (!st) {
          fbx_tensor *c = NULL;
          st = ROW(&c, lt_Scalar, TV(t[1]), FV(b));
          if (!st) st = ROW(&l, where_self, TV(c), TV(t[4]), TV(t[5]));
          fbx_tensor_release(c);
        }
      } else {
        /* z < delta ? 0.5 * z * z : delta * (z - 0.5 * delta) */
        st = ROW(&t[2], mul_Scalar, TV(t[1]), FV(0.5));
        if (!st) st = ROW(&t[3], mul_Tensor, TV(t[2]), TV(t[1]));
        if (!st) st = ROW(&t[4], sub_Scalar, TV(t[1]), FV(0.5 * b), IV(1));
        if (!st) st = ROW(&t[5], mul_Scalar, TV(t[4]), FV(b));
        if (!st) {
          fbx_tensor *c = NULL;
          st = ROW(&c, lt_Scalar, TV(t[1]), FV(b));
          if (!st) st = ROW(&l, where_self, TV(c), TV(t[3]), TV(t[5]));
          fbx_tensor_release(c);
        }
      }
    }
  }
  if (!st) st = fbx_loss_reduce(ctx, &out, l, red);
  release_all(t, 6);
  fbx_tensor_release(l);
  return finish(st, outs, &out);
}

/* binary_cross_entropy(x, t, weight?, reduction):
 *   (t - 1) * max(log1p(-x), -100) - t * max(log(x), -100), x in [0, 1];
 * binary_cross_entropy_with_logits(x, t, weight?, pos_weight?, reduction):
 *   m = max(-x, 0); (1 - t) * x + [lw *] (log(exp(-m) + exp(-x - m)) + m),
 *   lw = (pos_weight - 1) * t + 1 — ATen's formulas, in its order. */
fbx_status *fbx_k_bce(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y, *t[12] = {NULL}, *l = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &y));
  bool logits = ctx->op->id == FBX_OP_binary_cross_entropy_with_logits;
  const fbx_ivalue *w = &args[2], *pw = logits ? &args[3] : NULL;
  int64_t red = fbx_iv_to_int(&args[logits ? 4 : 3]);
  fbx_status *st = NULL;
  if (!logits) {
    if (!fbx_tensor_same_shape(x, y))
      return fbx_kernel_error(ctx, "Using a target size that is different to the input size is deprecated. Please ensure they have the same size.");
    fbx_tensor *lo = NULL, *hi = NULL;
    st = ROW(&lo, lt_Scalar, TV(x), IV(0));
    if (!st) st = ROW(&hi, gt_Scalar, TV(x), IV(1));
    if (!st) {
      fbx_tensor *bad = NULL, *any = NULL;
      st = ROW(&bad, logical_or, TV(lo), TV(hi));
      if (!st) st = ROW(&any, any, TV(bad));
      if (!st && fbx_tensor_get_i64(any, 0)) st = fbx_kernel_error(ctx, "all elements of input should be between 0 and 1");
      fbx_tensor_release(bad);
      fbx_tensor_release(any);
    }
    fbx_tensor_release(lo);
    fbx_tensor_release(hi);
    if (!st) st = ROW(&t[0], neg, TV(x));
    if (!st) st = ROW(&t[1], log1p, TV(t[0]));
    if (!st) st = ROW(&t[2], clamp_min, TV(t[1]), IV(-100));
    if (!st) st = ROW(&t[3], log, TV(x));
    if (!st) st = ROW(&t[4], clamp_min, TV(t[3]), IV(-100));
    if (!st) st = ROW(&t[5], sub_Scalar, TV(y), IV(1), IV(1));
    if (!st) st = ROW(&t[6], mul_Tensor, TV(t[5]), TV(t[2]));
    if (!st) st = ROW(&t[7], mul_Tensor, TV(y), TV(t[4]));
    if (!st) st = ROW(&l, sub_Tensor, TV(t[6]), TV(t[7]));
  } else {
    st = ROW(&t[0], neg, TV(x));
    if (!st) st = ROW(&t[1], clamp_min, TV(t[0]), IV(0));                 /* m */
    if (!st) st = ROW(&t[2], neg, TV(t[1]));
    if (!st) st = ROW(&t[3], exp, TV(t[2]));                               /* exp(-m) */
    if (!st) st = ROW(&t[4], sub_Tensor, TV(t[0]), TV(t[1]));
    if (!st) st = ROW(&t[5], exp, TV(t[4]));                               /* exp(-x - m) */
    if (!st) st = ROW(&t[6], add_Tensor, TV(t[3]), TV(t[5]));
    if (!st) st = ROW(&t[7], log, TV(t[6]));
    if (!st) st = ROW(&t[8], rsub_Scalar, TV(y), IV(1));                   /* 1 - t */
    if (!st) st = ROW(&t[9], mul_Tensor, TV(t[8]), TV(x));
    if (!st && pw->kind == FBX_IV_TENSOR) {
      fbx_tensor *a = NULL, *b = NULL, *lw = NULL, *c = NULL, *d = NULL;
      st = ROW(&a, sub_Scalar, *pw, IV(1), IV(1));
      if (!st) st = ROW(&b, mul_Tensor, TV(a), TV(y));
      if (!st) st = ROW(&lw, add_Scalar, TV(b), IV(1), IV(1));
      if (!st) st = ROW(&c, add_Tensor, TV(t[7]), TV(t[1]));
      if (!st) st = ROW(&d, mul_Tensor, TV(lw), TV(c));
      if (!st) st = ROW(&l, add_Tensor, TV(t[9]), TV(d));
      fbx_tensor *tmp[] = {a, b, lw, c, d};
      release_all(tmp, 5);
    } else if (!st) {
      st = ROW(&t[10], add_Tensor, TV(t[9]), TV(t[1]));
      if (!st) st = ROW(&l, add_Tensor, TV(t[10]), TV(t[7]));
    }
  }
  if (!st && w->kind == FBX_IV_TENSOR) {
    st = ROW(&t[11], mul_Tensor, TV(l), *w);
    if (!st) {
      fbx_tensor_release(l);
      l = t[11];
      t[11] = NULL;
    }
  }
  if (!st) st = fbx_loss_reduce(ctx, &out, l, red);
  release_all(t, 12);
  fbx_tensor_release(l);
  return finish(st, outs, &out);
}

/* Negative log likelihood (with optional label smoothing) over log
 * probabilities lp [N, C, D] (double, contiguous) and class targets [N, D]:
 *   nll_i = -w[t_i] * lp[n, t_i, d], smooth_i = -sum_c w[c] * lp[n, c, d],
 *   loss_i = (1 - ls) * nll_i + ls / C * smooth_i; ignored targets count 0;
 * mean divides both sums by sum_i w[t_i] (ATen's cross_entropy rule). */
static fbx_status *nll_core(const fbx_kctx *ctx, fbx_tensor **out, fbx_tensor *self, fbx_tensor *target,
                            const fbx_ivalue *weight, int64_t red, int64_t ignore, double ls) {
  fbx_tensor *lp = NULL, *tg = NULL, *wt = NULL, *res = NULL;
  int nd = self->ndim;
  if (nd < 1) return fbx_kernel_error(ctx, "input tensor should be 1D or more");
  int64_t N = nd == 1 ? 1 : self->sizes[0], C = nd == 1 ? self->sizes[0] : self->sizes[1], D = 1;
  for (int k = 2; k < nd; k++) D *= self->sizes[k];
  if (fbx_dtype_is_floating(target->dtype) || target->dtype == FBX_DTYPE_BOOL)
    return fbx_kernel_error(ctx, "expected scalar type Long but found %s", fbx_dtype_torch_name(target->dtype));
  bool shape_ok = nd == 1 ? target->ndim == 0 : target->ndim == nd - 1 && target->sizes[0] == N;
  for (int k = 2; k < nd && shape_ok; k++) shape_ok = target->sizes[k - 1] == self->sizes[k];
  if (!shape_ok)
    return fbx_kernel_error(ctx, nd == 2 ? "Expected input batch_size (%" PRId64 ") to match target batch_size." : "expected target of shape [N, d1, ...] matching input [N, C, d1, ...] (batch %" PRId64 ")", N);
  if (weight->kind == FBX_IV_TENSOR && (weight->u.t->ndim != 1 || weight->u.t->sizes[0] != C))
    return fbx_kernel_error(ctx, "weight tensor should be defined either for all %" PRId64 " classes or no classes", C);
  fbx_status *st = fbx_tensor_clone_as(&lp, self, FBX_DTYPE_FLOAT64);
  if (!st) st = fbx_tensor_clone_as(&tg, target, FBX_DTYPE_INT64);
  if (!st && weight->kind == FBX_IV_TENSOR) st = fbx_tensor_clone_as(&wt, weight->u.t, FBX_DTYPE_FLOAT64);
  int64_t M = N * D;
  if (!st) st = red == 0 ? fbx_tensor_empty(&res, FBX_DTYPE_FLOAT64, target->ndim, target->sizes)
                         : fbx_tensor_empty(&res, FBX_DTYPE_FLOAT64, 0, NULL);
  if (!st && (red < 0 || red > 2)) st = fbx_kernel_error(ctx, "%" PRId64 " is not a valid value for reduction", red);
  if (!st) {
    const double *L = lp->data, *W = wt ? wt->data : NULL;
    const int64_t *T = tg->data;
    double snll = 0, ssm = 0, sw = 0;
    for (int64_t i = 0; i < M && !st; i++) {
      int64_t n = i / D, d = i % D, c = T[i];
      double nll = 0, sm = 0;
      if (c != ignore) {
        if (c < 0 || c >= C) {
          st = fbx_kernel_error(ctx, "Target %" PRId64 " is out of bounds.", c);
          break;
        }
        double w = W ? W[c] : 1;
        nll = -w * L[(n * C + c) * D + d];
        sw += w;
        if (ls > 0)
          for (int64_t k = 0; k < C; k++) sm -= (W ? W[k] : 1) * L[(n * C + k) * D + d];
      }
      if (red == 0) ((double *)res->data)[i] = ls > 0 ? (1 - ls) * nll + ls / (double)C * sm : nll;
      snll += nll, ssm += sm;
    }
    if (!st && red != 0) {
      double v = red == 1 ? snll / sw : snll;
      if (ls > 0) v = (1 - ls) * v + ls / (double)C * (red == 1 ? ssm / sw : ssm);
      *(double *)res->data = v;
    }
  }
  if (!st) st = fbx_tensor_clone_as(out, res, self->dtype);
  fbx_tensor *tmp[] = {lp, tg, wt, res};
  release_all(tmp, 4);
  return st;
}

/* aten::nll_loss / nll_loss_nd(self, target, weight?, reduction, ignore_index) */
fbx_status *fbx_k_nll_loss(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &y));
  if (ctx->op->id == FBX_OP_nll_loss && x->ndim > 2)
    return fbx_kernel_error(ctx, "input tensor should be 1D or 2D");
  if (!fbx_dtype_is_floating(x->dtype)) return fbx_kernel_error(ctx, "nll_loss expects floating input");
  return finish(nll_core(ctx, &out, x, y, &args[2], fbx_iv_to_int(&args[3]), fbx_iv_to_int(&args[4]), 0), outs, &out);
}

/* aten::cross_entropy_loss(self, target, weight?, reduction, ignore_index, label_smoothing)
 * log_softmax over the class dim (1, or 0 for 1-D input), then either class
 * targets (nll with smoothing) or class probabilities (floating target of
 * self's shape: -sum(w * t' * lp) with t' = t * (1 - ls) + ls / C; mean
 * divides by the number of samples). */
fbx_status *fbx_k_cross_entropy(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y, *lp = NULL, *out = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &y));
  int64_t red = fbx_iv_to_int(&args[3]), ignore = fbx_iv_to_int(&args[4]);
  double ls = fbx_iv_to_double(&args[5]);
  if (ls < 0 || ls > 1) return fbx_kernel_error(ctx, "label_smoothing must be between 0.0 and 1.0. Got: %g", ls);
  if (x->ndim < 1) return fbx_kernel_error(ctx, "cross_entropy: input must have at least 1 dim");
  if (!fbx_dtype_is_floating(x->dtype)) return fbx_kernel_error(ctx, "cross_entropy expects floating input");
  int cdim = x->ndim == 1 ? 0 : 1;
  fbx_status *st = ROW(&lp, log_softmax_int, TV(x), IV(cdim), NV);
  if (!st && !fbx_dtype_is_floating(y->dtype)) {
    st = nll_core(ctx, &out, lp, y, &args[2], red, ignore, ls);
  } else if (!st) {
    if (!fbx_tensor_same_shape(x, y)) {
      st = fbx_kernel_error(ctx, "Expected target size to match input size for class probabilities");
    } else {
      fbx_tensor *t[6] = {NULL};
      int64_t C = x->sizes[cdim];
      fbx_tensor *tt = y;
      if (ls > 0) {
        st = ROW(&t[0], mul_Scalar, TV(y), FV(1 - ls));
        if (!st) st = ROW(&t[1], add_Scalar, TV(t[0]), FV(ls / (double)C), IV(1));
        tt = t[1];
      }
      if (!st) st = ROW(&t[2], mul_Tensor, TV(lp), TV(tt));
      fbx_tensor *prod = t[2];
      if (!st && args[2].kind == FBX_IV_TENSOR) {
        int64_t sh[FBX_MAX_DIMS];
        for (int k = 0; k < x->ndim; k++) sh[k] = k == cdim ? C : 1;
        fbx_ivalue shape;
        st = fbx_int_list_iv(&shape, x->ndim, sh);
        if (!st) {
          st = ROW(&t[3], reshape, args[2], shape);
          fbx_iv_release(&shape);
        }
        if (!st) st = ROW(&t[4], mul_Tensor, TV(prod), TV(t[3]));
        prod = t[4];
      }
      if (!st) {
        fbx_tensor *s = NULL, *ns = NULL;
        st = ROW(&s, sum_dim_IntList, TV(prod), IV(cdim), BV(false), NV);
        if (!st) st = ROW(&ns, neg, TV(s));
        if (!st && red == 1) {
          double n = (double)(x->numel / (C ? C : 1));
          fbx_tensor *tot = NULL;
          st = ROW(&tot, sum, TV(ns), NV);
          if (!st) st = ROW(&out, div_Scalar, TV(tot), FV(n));
          fbx_tensor_release(tot);
        } else if (!st) {
          st = fbx_loss_reduce(ctx, &out, ns, red);
        }
        fbx_tensor_release(s);
        fbx_tensor_release(ns);
      }
      release_all(t, 6);
    }
  }
  fbx_tensor_release(lp);
  return finish(st, outs, &out);
}

/* ---- in-place variants ---------------------------------------------------------------------- */

/* The out-of-place row an in-place row mirrors (FBX_OP_COUNT: none). */
static fbx_op_id inplace_base(fbx_op_id id) {
  switch (id) {
    case FBX_OP_add__Tensor: return FBX_OP_add_Tensor;
    case FBX_OP_add__Scalar: return FBX_OP_add_Scalar;
    case FBX_OP_sub__Tensor: return FBX_OP_sub_Tensor;
    case FBX_OP_sub__Scalar: return FBX_OP_sub_Scalar;
    case FBX_OP_mul__Tensor: return FBX_OP_mul_Tensor;
    case FBX_OP_mul__Scalar: return FBX_OP_mul_Scalar;
    case FBX_OP_div__Tensor: return FBX_OP_div_Tensor;
    case FBX_OP_div__Scalar: return FBX_OP_div_Scalar;
    case FBX_OP_scatter_add_: return FBX_OP_scatter_add;
    case FBX_OP_index_add_: return FBX_OP_index_add;
    case FBX_OP_clamp_: return FBX_OP_clamp;
    case FBX_OP_clamp__Tensor: return FBX_OP_clamp_Tensor;
    case FBX_OP_clamp_min_: return FBX_OP_clamp_min;
    case FBX_OP_clamp_max_: return FBX_OP_clamp_max;
    case FBX_OP_relu_: return FBX_OP_relu;
    case FBX_OP_sigmoid_: return FBX_OP_sigmoid;
    case FBX_OP_tanh_: return FBX_OP_tanh;
    case FBX_OP_silu_: return FBX_OP_silu;
    case FBX_OP_neg_: return FBX_OP_neg;
    case FBX_OP_exp_: return FBX_OP_exp;
    case FBX_OP_sqrt_: return FBX_OP_sqrt;
    case FBX_OP_pow__Scalar: return FBX_OP_pow_Tensor_Scalar;
    case FBX_OP_scatter__src: return FBX_OP_scatter_src;
    case FBX_OP_scatter__value: return FBX_OP_scatter_value;
    case FBX_OP_masked_fill__Tensor: return FBX_OP_masked_fill_Tensor;
    case FBX_OP_masked_fill__Scalar: return FBX_OP_masked_fill_Scalar;
    case FBX_OP_addcmul_: return FBX_OP_addcmul;
    case FBX_OP_addcdiv_: return FBX_OP_addcdiv;
    case FBX_OP_leaky_relu_: return FBX_OP_leaky_relu;
    case FBX_OP_hardtanh_: return FBX_OP_hardtanh;
    case FBX_OP_elu_: return FBX_OP_elu;
    case FBX_OP_gelu_: return FBX_OP_gelu;
    default: return FBX_OP_COUNT;
  }
}

/* PyTorch's canCast for results written into an existing tensor: no
 * floating -> integral/bool, no integral -> bool. */
static bool can_cast(fbx_dtype from, fbx_dtype to) {
  if (fbx_dtype_is_floating(from) && !fbx_dtype_is_floating(to)) return false;
  if (from != FBX_DTYPE_BOOL && to == FBX_DTYPE_BOOL) return false;
  return true;
}

/* add_, mul_, clamp_, ... : the out-of-place row's result (same arguments),
 * checked to keep self's shape and castable to self's dtype, copied into
 * self (through any view: the write reaches the base); returns self.
 * fill_, zero_, copy_ write their value directly (copy_ broadcasts src). */
fbx_status *fbx_k_inplace(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *self, *r = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &self));
  fbx_op_id id = (fbx_op_id)ctx->op->id, base = inplace_base(id);
  fbx_status *st = NULL;
  if (base != FBX_OP_COUNT) {
    const fbx_op *bop = fbx_op_get(base);
    if (!bop) return fbx_status_nomem();
    fbx_kctx sub = {.op = bop, .node = ctx->node, .rng_state = ctx->rng_state, .nargs = bop->schema.nargs};
    fbx_ivalue res[FBX_SCHEMA_MAX_RETS] = {0};
    FBX_TRY(bop->kernel(&sub, args, res));
    r = res[0].u.t;
    if (!fbx_tensor_same_shape(r, self)) {
      char a[128] = "", b[128] = "";
      size_t la = 0, lb = 0;
      for (int i = 0; i < self->ndim && la < sizeof a; i++) la += (size_t)snprintf(a + la, sizeof a - la, "%s%" PRId64, i ? ", " : "", self->sizes[i]);
      for (int i = 0; i < r->ndim && lb < sizeof b; i++) lb += (size_t)snprintf(b + lb, sizeof b - lb, "%s%" PRId64, i ? ", " : "", r->sizes[i]);
      st = fbx_kernel_error(ctx, "output with shape [%s] doesn't match the broadcast shape [%s]", a, b);
    } else if (!can_cast(r->dtype, self->dtype)) {
      st = fbx_kernel_error(ctx, "result type %s can't be cast to the desired output type %s",
                            fbx_dtype_torch_name(r->dtype), fbx_dtype_torch_name(self->dtype));
    } else {
      st = fbx_tensor_copy_(self, r);
    }
  } else if (id == FBX_OP_copy_) {
    fbx_tensor *src;
    st = fbx_arg_tensor(ctx, args, 1, &src);
    if (!st) {
      int64_t shape[FBX_MAX_DIMS];
      int nd = 0;
      st = fbx_broadcast_shapes(ctx, shape, &nd, self, src);
      if (!st && (nd != self->ndim || memcmp(shape, self->sizes, sizeof(int64_t) * (size_t)nd)))
        st = fbx_kernel_error(ctx, "the source tensor (%d dims) must be broadcastable to self (%d dims)", src->ndim, self->ndim);
    }
    if (!st) st = fbx_tensor_copy_(self, src);
  } else {
    fbx_ivalue zero = fbx_iv_int(0);
    const fbx_ivalue *v = id == FBX_OP_zero_ ? &zero : &args[1];
    if (!fbx_iv_is_scalar(v)) return fbx_kernel_error(ctx, "fill value must be a number, got %s", fbx_iv_kind_name(v->kind));
    st = fbx_scalar_tensor(&r, v, self->dtype);
    if (!st && self->numel) st = fbx_tensor_copy_(self, r);
  }
  fbx_tensor_release(r);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, fbx_tensor_retain(self));
  return NULL;
}
