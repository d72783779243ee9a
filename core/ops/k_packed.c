/* Packed sequences (rows in ops/list_nn.h): what
 * torch.nn.utils.rnn.pack_padded_sequence and pad_packed_sequence call.
 *
 * A packed sequence holds B sequences of lengths len_0 >= len_1 >= ...
 * (the caller sorts them) as data [N, *], N = the lengths' sum, step by
 * step: step t holds the rows of the batch_sizes[t] sequences still
 * running (len_b > t), in batch order, at rows off_t = sum of
 * batch_sizes[t'] over t' < t. batch_sizes is int64 [len_0].
 *
 *   _pack_padded_sequence(input, lengths, batch_first) -> (data, batch_sizes)
 *       input [T, B, *] ([B, T, *] when batch_first); lengths int64 [B],
 *       positive, non-increasing, at most T.
 *   _pad_packed_sequence(data, batch_sizes, batch_first, padding_value,
 *   total_length) -> (padded, lengths)
 *       padded [T', B, *] ([B, T', *]) filled with padding_value where a
 *       sequence has ended, T' = max(total_length, len_0) (a total_length
 *       > 0 below len_0 is an error); lengths int64 [B].
 *   _pack_padded_sequence_backward(grad, input_size, batch_sizes,
 *   batch_first) -> Tensor
 *       the packed rows' gradient put back into zeros of input_size.
 *   fusebox::pad_packed_backward(grad, batch_sizes, batch_first) -> Tensor
 *       _pad_packed_sequence's gradient: the padded gradient's rows that
 *       came from the data, packed again. */
#include <string.h>

#include "base/alloc.h"
#include "ops/kutil.h"

/* The steps of batch_sizes (int64 1-D, positive, non-increasing). */
static fbx_status *read_steps(fbx_kctx *ctx, const fbx_tensor *b, int64_t **bs, int64_t *T, int64_t *N) {
  if (b->dtype != FBX_DTYPE_INT64 || b->ndim != 1 || b->sizes[0] < 1)
    return fbx_kernel_error(ctx, "batch_sizes must be a non-empty 1-D int64 tensor");
  *T = b->sizes[0];
  if (!(*bs = fbx_malloc(sizeof(int64_t) * (size_t)*T))) return fbx_status_nomem();
  *N = 0;
  for (int64_t t = 0; t < *T; t++) {
    int64_t v = (int64_t)fbx_tensor_get_f64(b, t);
    if (v < 1 || (t && v > (*bs)[t - 1])) {
      fbx_free(*bs);
      *bs = NULL;
      return fbx_kernel_error(ctx, "batch_sizes must be positive and non-increasing (step %lld: %lld)", (long long)t,
                              (long long)v);
    }
    (*bs)[t] = v, *N += v;
  }
  return NULL;
}

/* Copies rows between a padded tensor p ([T, B, F] time-major, or [B, T,
 * F]) and packed rows d [N, F] (both contiguous, element size es): to_packed
 * or back. */
static void move_rows(char *p, char *d, const int64_t *bs, int64_t T, int64_t B, int64_t F, size_t es, bool bf,
                      bool to_packed) {
  int64_t r = 0;
  for (int64_t t = 0; t < T; t++)
    for (int64_t b = 0; b < bs[t]; b++, r++) {
      char *pp = p + (size_t)((bf ? b * T + t : t * B + b) * F) * es, *dd = d + (size_t)(r * F) * es;
      if (to_packed) memcpy(dd, pp, (size_t)F * es);
      else memcpy(pp, dd, (size_t)F * es);
    }
}

static int64_t feature_size(const fbx_tensor *t, int from) {
  int64_t f = 1;
  for (int i = from; i < t->ndim; i++) f *= t->sizes[i];
  return f;
}

/* aten::_pack_padded_sequence(input, lengths, batch_first) */
fbx_status *fbx_k__pack_padded_sequence(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *len;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &len));
  bool bf = args[2].u.b;
  if (x->ndim < 2) return fbx_kernel_error(ctx, "pack_padded_sequence: input must have at least 2 dimensions");
  int64_t T = x->sizes[bf ? 1 : 0], B = x->sizes[bf ? 0 : 1];
  if (len->ndim != 1 || len->sizes[0] != B || len->dtype != FBX_DTYPE_INT64)
    return fbx_kernel_error(ctx, "lengths must be an int64 vector of one length per sequence (%lld), got %d-D %s",
                            (long long)B, len->ndim, fbx_dtype_name(len->dtype));
  int64_t prev = 0, N = 0;
  for (int64_t b = 0; b < B; b++) {
    int64_t v = (int64_t)fbx_tensor_get_f64(len, b);
    if (v <= 0)
      return fbx_kernel_error(ctx, "every length must be greater than 0, but lengths[%lld] = %lld", (long long)b,
                              (long long)v);
    if (b && v > prev)
      return fbx_kernel_error(ctx, "lengths must be sorted in decreasing order when enforce_sorted is True "
                                   "(lengths[%lld] = %lld follows %lld); pack_padded_sequence with "
                                   "enforce_sorted=False sorts them", (long long)b, (long long)v, (long long)prev);
    if (v > T)
      return fbx_kernel_error(ctx, "Expected lengths to be at most the sequence length %lld, got %lld", (long long)T,
                              (long long)v);
    prev = v, N += v;
  }
  int64_t steps = B ? (int64_t)fbx_tensor_get_f64(len, 0) : 0, F = feature_size(x, 2);
  fbx_tensor *xc = NULL, *data = NULL, *bsz = NULL;
  int64_t *bs = fbx_malloc(sizeof(int64_t) * (size_t)(steps > 0 ? steps : 1));
  fbx_status *st = bs ? NULL : fbx_status_nomem();
  for (int64_t t = 0; !st && t < steps; t++) {
    bs[t] = 0;
    for (int64_t b = 0; b < B; b++) bs[t] += (int64_t)fbx_tensor_get_f64(len, b) > t;
  }
  int64_t dsz[FBX_MAX_DIMS];
  dsz[0] = N;
  for (int i = 2; i < x->ndim; i++) dsz[i - 1] = x->sizes[i];
  if (!st) st = fbx_tensor_contiguous(&xc, x);
  if (!st) st = fbx_tensor_empty(&data, x->dtype, x->ndim - 1, dsz);
  if (!st) st = fbx_tensor_empty(&bsz, FBX_DTYPE_INT64, 1, &steps);
  if (!st) {
    move_rows(xc->data, data->data, bs, steps, B, F, fbx_dtype_size(x->dtype), bf, true);
    for (int64_t t = 0; t < steps; t++) ((int64_t *)bsz->data)[t] = bs[t];
    fbx_set_out_tensor(outs, 0, data);
    fbx_set_out_tensor(outs, 1, bsz);
    data = bsz = NULL;
  }
  fbx_tensor_release(data);
  fbx_tensor_release(bsz);
  fbx_tensor_release(xc);
  fbx_free(bs);
  return st;
}

/* The padded [T, B, *] / [B, T, *] tensor of dtype dt filled with v, and
 * the packed rows d (contiguous, or NULL) moved into it. */
static fbx_status *padded(fbx_tensor **out, const fbx_tensor *like, fbx_dtype dt, int64_t T, int64_t B, bool bf,
                          double v, const fbx_tensor *d, const int64_t *bs, int64_t steps) {
  int64_t sz[FBX_MAX_DIMS];
  sz[bf ? 1 : 0] = T, sz[bf ? 0 : 1] = B;
  for (int i = 1; i < like->ndim; i++) sz[i + 1] = like->sizes[i];
  FBX_TRY(fbx_tensor_empty(out, dt, like->ndim + 1, sz));
  fbx_tensor *o = *out;
  if (v == 0) memset(o->data, 0, (size_t)o->numel * fbx_dtype_size(dt));
  else
    for (int64_t i = 0; i < o->numel; i++) fbx_tensor_set_f64(o, i, v);
  if (d) move_rows(o->data, d->data, bs, steps, B, feature_size(like, 1), fbx_dtype_size(dt), bf, false);
  return NULL;
}

/* aten::_pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length) */
fbx_status *fbx_k__pad_packed_sequence(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *d, *b;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &d));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  bool bf = args[2].u.b;
  double pv = args[3].kind == FBX_IV_FLOAT ? args[3].u.f : (double)fbx_iv_to_int(&args[3]);
  int64_t total = fbx_iv_to_int(&args[4]), *bs = NULL, steps, N;
  if (d->ndim < 1) return fbx_kernel_error(ctx, "pad_packed_sequence: data must have at least 1 dimension");
  FBX_TRY(read_steps(ctx, b, &bs, &steps, &N));
  fbx_status *st = NULL;
  if (N != d->sizes[0])
    st = fbx_kernel_error(ctx, "batch_sizes sum to %lld but the packed data has %lld rows", (long long)N,
                          (long long)d->sizes[0]);
  else if (total > 0 && total < steps)
    st = fbx_kernel_error(ctx, "total_length %lld is shorter than the longest sequence (%lld steps)",
                          (long long)total, (long long)steps);
  int64_t T = total > steps ? total : steps, B = bs[0];
  fbx_tensor *dc = NULL, *p = NULL, *lens = NULL;
  if (!st) st = fbx_tensor_contiguous(&dc, d);
  if (!st) st = padded(&p, d, d->dtype, T, B, bf, pv, dc, bs, steps);
  if (!st) st = fbx_tensor_empty(&lens, FBX_DTYPE_INT64, 1, &B);
  if (!st) {
    for (int64_t k = 0; k < B; k++) {
      int64_t n = 0;
      for (int64_t t = 0; t < steps; t++) n += bs[t] > k;
      ((int64_t *)lens->data)[k] = n;
    }
    fbx_set_out_tensor(outs, 0, p);
    fbx_set_out_tensor(outs, 1, lens);
    p = lens = NULL;
  }
  fbx_tensor_release(p);
  fbx_tensor_release(lens);
  fbx_tensor_release(dc);
  fbx_free(bs);
  return st;
}

/* The backward ops' result: a new tensor of sizes sz (zeros when
 * `zero`), src's rows moved into it (to_packed: from padded src into
 * packed rows; else packed src into the padded result); frees bs. */
static fbx_status *rows_result(fbx_status *st, fbx_tensor *src, int nd, const int64_t *sz, bool zero, int64_t *bs,
                               int64_t steps, int64_t B, int64_t F, bool bf, bool to_packed, fbx_ivalue *outs) {
  fbx_tensor *sc = NULL, *o = NULL;
  if (!st) st = fbx_tensor_contiguous(&sc, src);
  if (!st) st = zero ? fbx_tensor_zeros(&o, src->dtype, nd, sz) : fbx_tensor_empty(&o, src->dtype, nd, sz);
  if (!st) {
    size_t es = fbx_dtype_size(src->dtype);
    if (to_packed) move_rows(sc->data, o->data, bs, steps, B, F, es, bf, true);
    else move_rows(o->data, sc->data, bs, steps, B, F, es, bf, false);
    fbx_set_out_tensor(outs, 0, o);
    o = NULL;
  }
  fbx_tensor_release(o);
  fbx_tensor_release(sc);
  fbx_free(bs);
  return st;
}

/* aten::_pack_padded_sequence_backward(grad, input_size, batch_sizes, batch_first) */
fbx_status *fbx_k__pack_padded_sequence_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *b;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &b));
  bool bf = args[3].u.b;
  int64_t sz[FBX_MAX_DIMS];
  fbx_status *le = NULL;
  int nd = fbx_arg_int_list(ctx->op, 1, &args[1], sz, FBX_MAX_DIMS, &le);
  if (nd < 0) return le;
  int64_t *bs = NULL, steps, N;
  FBX_TRY(read_steps(ctx, b, &bs, &steps, &N));
  int64_t T = nd >= 2 ? sz[bf ? 1 : 0] : 0, B = nd >= 2 ? sz[bf ? 0 : 1] : 0, F = 1;
  for (int i = 2; i < nd; i++) F *= sz[i];
  fbx_status *st = NULL;
  if (nd < 2 || steps > T || bs[0] > B || g->ndim != nd - 1 || g->sizes[0] != N || feature_size(g, 1) != F)
    st = fbx_kernel_error(ctx, "_pack_padded_sequence_backward: the gradient, input_size and batch_sizes disagree");
  return rows_result(st, g, nd, sz, true, bs, steps, B, F, bf, false, outs);
}

/* fusebox::pad_packed_backward(grad, batch_sizes, batch_first) */
fbx_status *fbx_k_fbx_pad_packed_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *g, *b;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &g));
  FBX_TRY(fbx_arg_tensor(ctx, args, 1, &b));
  bool bf = args[2].u.b;
  int64_t *bs = NULL, steps, N;
  FBX_TRY(read_steps(ctx, b, &bs, &steps, &N));
  fbx_status *st = NULL;
  int64_t T = g->ndim >= 2 ? g->sizes[bf ? 1 : 0] : 0, B = g->ndim >= 2 ? g->sizes[bf ? 0 : 1] : 0;
  if (g->ndim < 2 || steps > T || bs[0] != B)
    st = fbx_kernel_error(ctx, "pad_packed_backward: the gradient and batch_sizes disagree");
  int64_t sz[FBX_MAX_DIMS];
  sz[0] = N;
  for (int i = 2; i < g->ndim; i++) sz[i - 1] = g->sizes[i];
  return rows_result(st, g, g->ndim >= 2 ? g->ndim - 1 : 1, sz, false, bs, steps, B, feature_size(g, 2), bf, true,
                     outs);
}
