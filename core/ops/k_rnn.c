/* Recurrent cells (rows in ops/list_nn.h): rnn_tanh_cell, rnn_relu_cell,
 * gru_cell, lstm_cell, as PyTorch's RNN.cpp computes them:
 *
 *   gi = linear(input, w_ih, b_ih)   [B, G * H]      (linear's kernel: BLAS)
 *   gh = linear(hx, w_hh, b_hh)      [B, G * H]
 *   rnn:  h' = tanh(gi + gh) or relu(gi + gh)
 *   gru:  r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z),
 *         n = tanh(gi_n + r * gh_n), h' = n + z * (hx - n)     (gates in r, z, n order)
 *   lstm: hx = [h, c]; i, f, g, o = chunks of gi + gh;
 *         c' = sigmoid(f) * c + sigmoid(i) * tanh(g), h' = sigmoid(o) * tanh(c')
 *
 * The gate arithmetic runs in double per element and is stored in the
 * input's dtype. Shapes are checked as PyTorch's check_rnn_cell_forward_*:
 * input [B, I] with I = w_ih.size(1), states [B, H] with H = w_hh.size(1),
 * w_ih [G * H, I]. */
#include <math.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/kutil.h"
#include "ops/reduce.h"

enum { CELL_TANH, CELL_RELU, CELL_GRU, CELL_LSTM };

static double sigm(double v) { return 1 / (1 + exp(-v)); }

/* linear(a, w, b) through linear's kernel: a new tensor in *out. */
static fbx_status *lin(fbx_kctx *ctx, fbx_tensor *a, fbx_tensor *w, const fbx_ivalue *b, fbx_tensor **out) {
  fbx_ivalue la[3] = {fbx_iv_tensor(a), fbx_iv_tensor(w), *b}, lo[1] = {fbx_iv_none()};
  FBX_TRY(fbx_k_linear(ctx, la, lo));
  *out = lo[0].u.t;
  return NULL;
}

static fbx_status *check_state(const fbx_kctx *ctx, const fbx_tensor *x, const fbx_tensor *h, int64_t H,
                               const char *label) {
  if (h->ndim != 2)
    return fbx_kernel_error(ctx, "hidden%s must be 2-D [batch, hidden_size], got %dD", label, h->ndim);
  if (h->sizes[0] != x->sizes[0])
    return fbx_kernel_error(ctx, "Input batch size %lld doesn't match hidden%s batch size %lld",
                            (long long)x->sizes[0], label, (long long)h->sizes[0]);
  if (h->sizes[1] != H)
    return fbx_kernel_error(ctx, "hidden%s has inconsistent hidden_size: got %lld, expected %lld", label,
                            (long long)h->sizes[1], (long long)H);
  return NULL;
}

fbx_status *fbx_k_rnn_cell(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  const char *name = fbx_sym_unqual(ctx->op->schema.name);
  int kind = !strcmp(name, "gru_cell")        ? CELL_GRU
             : !strcmp(name, "lstm_cell")     ? CELL_LSTM
             : !strcmp(name, "rnn_relu_cell") ? CELL_RELU
                                              : CELL_TANH;
  int G = kind == CELL_GRU ? 3 : kind == CELL_LSTM ? 4 : 1;
  fbx_tensor *x, *h, *c = NULL, *wih, *whh;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (kind == CELL_LSTM) {
    if (args[1].kind != FBX_IV_LIST || fbx_iv_list_len(&args[1]) != 2)
      return fbx_kernel_error(ctx, "lstm_cell: Expected hx to be a list of two tensors [h, c]");
    const fbx_ivalue *h0 = fbx_iv_list_at(&args[1], 0), *c0 = fbx_iv_list_at(&args[1], 1);
    if (h0->kind != FBX_IV_TENSOR || c0->kind != FBX_IV_TENSOR)
      return fbx_kernel_error(ctx, "lstm_cell: hx must hold two tensors");
    h = h0->u.t, c = c0->u.t;
  } else {
    FBX_TRY(fbx_arg_tensor(ctx, args, 1, &h));
  }
  FBX_TRY(fbx_arg_tensor(ctx, args, 2, &wih));
  FBX_TRY(fbx_arg_tensor(ctx, args, 3, &whh));
  if (x->ndim != 2) return fbx_kernel_error(ctx, "expected a 2-D input [batch, input_size], got %dD", x->ndim);
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "expected a floating point input, got %s", fbx_dtype_name(x->dtype));
  if (wih->ndim != 2 || whh->ndim != 2) return fbx_kernel_error(ctx, "w_ih and w_hh must be 2-D");
  int64_t B = x->sizes[0], H = whh->sizes[1];
  if (x->sizes[1] != wih->sizes[1])
    return fbx_kernel_error(ctx, "input has inconsistent input_size: got %lld expected %lld", (long long)x->sizes[1],
                            (long long)wih->sizes[1]);
  if (wih->sizes[0] != G * H || whh->sizes[0] != G * H)
    return fbx_kernel_error(ctx, "w_ih and w_hh must have %d * hidden_size = %lld rows, got %lld and %lld", G,
                            (long long)(G * H), (long long)wih->sizes[0], (long long)whh->sizes[0]);
  FBX_TRY(check_state(ctx, x, h, H, kind == CELL_LSTM ? "[0]" : ""));
  if (c) FBX_TRY(check_state(ctx, x, c, H, "[1]"));
  fbx_tensor *ti = NULL, *th = NULL, *y0 = NULL, *y1 = NULL;
  double *gi = NULL, *gh = NULL, *hv = NULL, *cv = NULL, *o0 = NULL, *o1 = NULL;
  fbx_status *st = lin(ctx, x, wih, &args[4], &ti);
  if (!st) st = lin(ctx, h, whh, &args[5], &th);
  if (!st) st = fbx_red_load_all_f64(&gi, ti);
  if (!st) st = fbx_red_load_all_f64(&gh, th);
  if (!st) st = fbx_red_load_all_f64(&hv, h);
  if (!st && c) st = fbx_red_load_all_f64(&cv, c);
  if (!st) {
    size_t n = (size_t)(B * H > 0 ? B * H : 1);
    o0 = fbx_malloc(sizeof(double) * n);
    o1 = fbx_malloc(sizeof(double) * n);
    if (!o0 || !o1) st = fbx_status_nomem();
  }
  if (st) goto done;
  for (int64_t b = 0; b < B; b++) {
    const double *a = gi + b * G * H, *e = gh + b * G * H;
    for (int64_t k = 0; k < H; k++) {
      int64_t o = b * H + k;
      switch (kind) {
      case CELL_TANH: o0[o] = tanh(a[k] + e[k]); break;
      case CELL_RELU: {
        double v = a[k] + e[k];
        o0[o] = v > 0 || isnan(v) ? v : 0;
        break;
      }
      case CELL_GRU: {
        double r = sigm(a[k] + e[k]), z = sigm(a[H + k] + e[H + k]);
        double n = tanh(a[2 * H + k] + r * e[2 * H + k]);
        o0[o] = n + z * (hv[o] - n);
        break;
      }
      default: {
        double ig = sigm(a[k] + e[k]), fg = sigm(a[H + k] + e[H + k]);
        double gg = tanh(a[2 * H + k] + e[2 * H + k]), og = sigm(a[3 * H + k] + e[3 * H + k]);
        double cy = fg * cv[o] + ig * gg;
        o1[o] = cy;
        o0[o] = og * tanh(cy);
      }
      }
    }
  }
  int64_t bh[2] = {B, H};
  if ((st = fbx_red_store_all_f64(&y0, x->dtype, 2, bh, o0))) goto done;
  if (kind == CELL_LSTM && (st = fbx_red_store_all_f64(&y1, x->dtype, 2, bh, o1))) goto done;
  fbx_set_out_tensor(outs, 0, y0);
  if (kind == CELL_LSTM) fbx_set_out_tensor(outs, 1, y1);
  y0 = y1 = NULL;
done:
  fbx_tensor_release(y0);
  fbx_tensor_release(y1);
  fbx_tensor_release(ti);
  fbx_tensor_release(th);
  fbx_free(gi);
  fbx_free(gh);
  fbx_free(hv);
  fbx_free(cv);
  fbx_free(o0);
  fbx_free(o1);
  return st;
}
