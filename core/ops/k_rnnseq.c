/* Whole-sequence recurrent layers (rows in ops/list_nn.h): aten::rnn_tanh,
 * aten::rnn_relu, aten::gru and aten::lstm (the .input overloads, which
 * scripted nn.RNN, nn.GRU and nn.LSTM call), and their gradient
 * fusebox::rnn_seq_backward.
 *
 * Layout, as PyTorch's: input [T, B, I] ([B, T, I] when batch_first); the
 * initial states [L * D, B, H] (D = 2 when bidirectional); params, per
 * layer and direction, w_ih [G * H, I_l], w_hh [G * H, H] and, with
 * has_biases, b_ih and b_hh [G * H] (G = 1, 3, 4 gates; layer l > 0 reads
 * the previous layer's output, I_l = D * H). Outputs: the last layer's
 * hidden states [T, B, D * H] (both directions side by side), the final
 * states [L * D, B, H] (and the cell states for lstm). Each step is the
 * cell of k_rnn.c: gi = x w_ihᵀ + b_ih (+ b_hh, but for gru's n gate) for
 * all steps at once (one GEMM), gh = h w_hhᵀ per step (a GEMM), then the
 * gate arithmetic: float32 in vmath.h's vectorized float math (as
 * PyTorch's float32 cells compute in float), float64 in double; float16 and
 * bfloat16 are converted to float32 and the results rounded back. The
 * reverse direction walks the steps from T - 1 down. The backward's gate
 * derivatives are computed in double per element in either dtype.
 * float32 on AVX2+FMA: the per-step products by w_hh (h w_hhᵀ forward,
 * dG_h w_hh backward, but gru's, which accumulates) take w_hh packed once per layer and
 * direction (gemm_small.h) instead of the BLAS, which packs its operand
 * again at every step; their 16-column panels are split among the threads.
 *
 * The backward op recomputes the forward, keeping every layer's output and
 * each step's gate activations, and runs back through time: per step the
 * gates' gradients dG (the chain rule through the nonlinearities), the
 * hidden state's gradient dG_h w_hh; per layer the weights' gradients as
 * two GEMMs over all steps (dGᵀ x and dG_hᵀ h_prev), the biases' as column
 * sums, and the layer input's as dG w_ih.
 *
 * The .data overloads take a packed sequence (k_packed.c): its data [N, I]
 * and batch_sizes; step t runs the first batch_sizes[t] rows of the batch,
 * so the GEMMs and gate loops run on a prefix of the state, the forward
 * direction leaves a sequence's last state in place after it ends and the
 * reverse one starts a sequence from its initial state when it begins.
 *
 * Not supported (an error naming it): projections (lstm proj_size), the
 * random dropout between layers in training mode. */
#include "ops/kopt.h" /* first: the step loops' compiler settings */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/gemm_small.h"
#include "ops/kutil.h"
#include "ops/pointwise.h" /* FBX_PW_CLONES */
#include "ops/reduce.h"
#include "ops/vmath.h"

enum { SEQ_TANH, SEQ_RELU, SEQ_GRU, SEQ_LSTM };

/* One call's geometry and its operands in the working dtype. */
typedef struct {
  int mode, G;
  int64_t T, B, I, H, L, D;
  int64_t N;          /* rows of the input: T * B, or a packed sequence's total */
  int64_t *bs, *off;  /* per step: rows that take part (a prefix of the batch) and the first one's row */
  bool f64, batch_first, biases, packed;
  fbx_dtype wd, out_dt;
  fbx_tensor *x;      /* [N, I] contiguous: time-major [T, B, I], or the packed data */
  fbx_tensor *h0, *c0; /* [L * D, B, H] contiguous (c0: lstm only) */
  fbx_tensor **w;     /* 4 per layer and direction: w_ih, w_hh, b_ih, b_hh (NULL without biases) */
} seq;

static inline double ld(bool f64, const void *p, int64_t i) {
  return f64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static inline void st(bool f64, void *p, int64_t i, double v) {
  if (f64) ((double *)p)[i] = v;
  else ((float *)p)[i] = (float)v;
}
static inline void *at(const seq *s, const void *p, int64_t i) {
  return (char *)p + (size_t)i * (s->f64 ? sizeof(double) : sizeof(float));
}
static double sigm(double v) { return 1 / (1 + exp(-v)); }

/* C = A B (op: transposes), skipped when the product is empty; C zeroed
 * when K is 0 and beta is 0. */
static void gemm(const seq *s, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void *a, int64_t lda,
                 const void *b, int64_t ldb, double beta, void *c, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  if (K <= 0) {
    if (beta == 0)
      for (int64_t i = 0; i < M; i++) memset(at(s, c, i * ldc), 0, (size_t)N * (s->f64 ? 8 : 4));
    return;
  }
  fbx_linalg_gemm(s->f64, ta, tb, M, N, K, 1.0, a, lda, b, ldb, beta, c, ldc);
}

static void *wbuf(const seq *s, int64_t n) { return fbx_malloc((size_t)(n > 0 ? n : 1) * (s->f64 ? 8 : 4)); }

/* float32 on AVX2+FMA: the step's h @ w_hhᵀ from w_hh packed once per
 * layer and direction (gemm_small.h), not packed again by the BLAS at each
 * of the T steps; its 16-column panels split among the threads. */
typedef struct step_gemm {
  int64_t M, N, K;
  const float *A, *packed;
  float *C;
} step_gemm;

static void step_gemm_body(void *ctx, int64_t begin, int64_t end) {
  const step_gemm *g = ctx;
  fbx_gemm_packed_f32(g->M, g->N, g->K, g->A, g->K, g->packed, begin, end, g->C, g->N);
}

/* C [M, N] = A [M, K] (row-major, lda K) @ the packed B */
static void step_gemm_run(int64_t M, int64_t N, int64_t K, const float *A, const float *packed, float *C) {
  if (M <= 0 || N <= 0) return;
  step_gemm g = {M, N, K, A, packed, C};
  int64_t panels = (N + FBX_GS_NR - 1) / FBX_GS_NR, per = M * K * FBX_GS_NR * 2;
  fbx_parallel_for(panels, per >= (1 << 20) ? 1 : (1 << 20) / per + 1, step_gemm_body, &g);
}

static void seq_free(seq *s) {
  fbx_tensor_release(s->x);
  fbx_tensor_release(s->h0);
  fbx_tensor_release(s->c0);
  if (s->w)
    for (int64_t k = 0; k < 4 * s->L * s->D; k++) fbx_tensor_release(s->w[k]);
  fbx_free(s->w);
  fbx_free(s->bs);
  fbx_free(s->off);
  memset(s, 0, sizeof *s);
}

static int seq_mode(const char *name) {
  return !strcmp(name, "lstm") ? SEQ_LSTM : !strcmp(name, "gru") ? SEQ_GRU : !strcmp(name, "rnn_relu") ? SEQ_RELU : SEQ_TANH;
}
static const char *mode_name(int mode) {
  return mode == SEQ_LSTM ? "lstm" : mode == SEQ_GRU ? "gru" : mode == SEQ_RELU ? "rnn_relu" : "rnn_tanh";
}

/* A working-dtype contiguous copy of t (or t itself, retained). */
static fbx_status *work_copy(fbx_tensor **out, fbx_tensor *t, fbx_dtype wd) {
  return t->dtype == wd ? fbx_tensor_contiguous(out, t) : fbx_tensor_clone_as(out, t, wd);
}

static fbx_status *state_arg(const fbx_kctx *ctx, const seq *s, fbx_tensor *h, const char *what) {
  if (h->ndim != 3 || h->sizes[0] != s->L * s->D || h->sizes[1] != s->B || h->sizes[2] != s->H) {
    char got[256];
    fbx_red_shape_str(got, sizeof got, h->ndim, h->sizes);
    return fbx_kernel_error(ctx, "%s: Expected %s size (%lld, %lld, %lld), got %s", mode_name(s->mode), what,
                            (long long)(s->L * s->D), (long long)s->B, (long long)s->H, got);
  }
  if (h->dtype != s->out_dt)
    return fbx_kernel_error(ctx, "%s: %s is %s but the input is %s", mode_name(s->mode), what,
                            fbx_dtype_name(h->dtype), fbx_dtype_name(s->out_dt));
  return NULL;
}

static fbx_status *seq_fail(seq *s, fbx_status *st) {
  seq_free(s);
  return st;
}

/* A packed sequence's batch_sizes: int64, 1-D, positive, non-increasing,
 * summing to the data's rows. Fills T, B, N, bs and off. */
static fbx_status *packed_steps(fbx_kctx *ctx, seq *s, const char *nm, const fbx_tensor *x, const fbx_tensor *b) {
  if (b->dtype != FBX_DTYPE_INT64 || b->ndim != 1 || b->sizes[0] < 1)
    return fbx_kernel_error(ctx, "%s: batch_sizes must be a non-empty 1-D int64 tensor", nm);
  s->T = b->sizes[0];
  if (!(s->bs = fbx_malloc(sizeof(int64_t) * (size_t)s->T)) || !(s->off = fbx_malloc(sizeof(int64_t) * (size_t)s->T)))
    return fbx_status_nomem();
  int64_t n = 0;
  for (int64_t t = 0; t < s->T; t++) {
    int64_t v = (int64_t)fbx_tensor_get_f64(b, t);
    if (v < 1 || (t && v > s->bs[t - 1]))
      return fbx_kernel_error(ctx, "%s: batch_sizes must be positive and non-increasing (step %lld: %lld)", nm,
                              (long long)t, (long long)v);
    s->bs[t] = v, s->off[t] = n, n += v;
  }
  if (n != x->sizes[0])
    return fbx_kernel_error(ctx, "%s: batch_sizes sum to %lld but the packed data has %lld rows", nm, (long long)n,
                            (long long)x->sizes[0]);
  s->B = s->bs[0], s->N = n;
  return NULL;
}

/* Reads and checks the arguments shared by the ops, from args[base]:
 * input, then (packed) batch_sizes, then hx, params, has_biases,
 * num_layers, dropout, train, bidirectional and (not packed) batch_first. */
static fbx_status *seq_setup(fbx_kctx *ctx, fbx_ivalue *args, int base, int mode, bool packed, seq *s) {
  memset(s, 0, sizeof *s);
  s->mode = mode;
  s->packed = packed;
  s->G = mode == SEQ_LSTM ? 4 : mode == SEQ_GRU ? 3 : 1;
  const char *nm = mode_name(mode);
  fbx_tensor *x, *bsz = NULL;
  FBX_TRY(fbx_arg_tensor(ctx, args, base, &x));
  if (packed) FBX_TRY(fbx_arg_tensor(ctx, args, ++base, &bsz));
  const fbx_ivalue *hx = &args[base + 1], *pl = &args[base + 2];
  if (pl->kind != FBX_IV_LIST) return fbx_kernel_error(ctx, "%s: params must be a list of tensors", nm);
  s->biases = args[base + 3].u.b;
  s->L = fbx_iv_to_int(&args[base + 4]);
  double dropout = args[base + 5].kind == FBX_IV_FLOAT ? args[base + 5].u.f : (double)fbx_iv_to_int(&args[base + 5]);
  bool train = args[base + 6].u.b;
  s->D = args[base + 7].u.b ? 2 : 1;
  s->batch_first = !packed && args[base + 8].u.b;
  if (x->ndim != (packed ? 2 : 3))
    return fbx_kernel_error(ctx, "%s: %s must have %d dimensions, got %d", nm, packed ? "packed data" : "input",
                            packed ? 2 : 3, x->ndim);
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "%s: expected a floating point input, got %s", nm, fbx_dtype_name(x->dtype));
  if (s->L < 1) return fbx_kernel_error(ctx, "%s: num_layers must be at least 1, got %lld", nm, (long long)s->L);
  if (train && dropout > 0 && s->L > 1)
    return fbx_kernel_error(ctx, "%s: dropout between layers in training mode is not supported", nm);
  if (packed) {
    fbx_status *e = packed_steps(ctx, s, nm, x, bsz);
    if (e) {
      seq_free(s);
      return e;
    }
    s->I = x->sizes[1];
  } else {
    s->T = x->sizes[s->batch_first ? 1 : 0];
    s->B = x->sizes[s->batch_first ? 0 : 1];
    s->I = x->sizes[2];
    s->N = s->T * s->B;
    if (s->T == 0) return fbx_kernel_error(ctx, "%s: Expected sequence length to be larger than 0 in RNN", nm);
    if (!(s->bs = fbx_malloc(sizeof(int64_t) * (size_t)s->T)) ||
        !(s->off = fbx_malloc(sizeof(int64_t) * (size_t)s->T))) {
      seq_free(s);
      return fbx_status_nomem();
    }
    for (int64_t t = 0; t < s->T; t++) s->bs[t] = s->B, s->off[t] = t * s->B;
  }
  fbx_status *bad = NULL;
  s->out_dt = x->dtype;
  s->f64 = x->dtype == FBX_DTYPE_FLOAT64;
  s->wd = s->f64 ? FBX_DTYPE_FLOAT64 : FBX_DTYPE_FLOAT32;
  int per = s->biases ? 4 : 2;
  int64_t np = fbx_iv_list_len(pl);
  if (np != per * s->L * s->D) {
    if (mode == SEQ_LSTM && np == (per + 1) * s->L * s->D)
      return seq_fail(s, fbx_kernel_error(ctx, "lstm: projections (proj_size > 0) are not supported"));
    return seq_fail(s, fbx_kernel_error(ctx, "%s: expected %lld parameter tensors for %lld layer(s), got %lld", nm,
                            (long long)(per * s->L * s->D), (long long)s->L, (long long)np));
  }
  for (int64_t k = 0; k < np; k++)
    if (fbx_iv_list_at(pl, (int)k)->kind != FBX_IV_TENSOR)
      return seq_fail(s, fbx_kernel_error(ctx, "%s: params[%lld] is not a tensor", nm, (long long)k));
  fbx_tensor *whh0 = fbx_iv_list_at(pl, 1)->u.t;
  if (whh0->ndim != 2) return seq_fail(s, fbx_kernel_error(ctx, "%s: w_hh must be 2-D", nm));
  s->H = whh0->sizes[1];
  int64_t GH = s->G * s->H;
  /* the initial states */
  fbx_tensor *h = NULL, *c = NULL;
  if (mode == SEQ_LSTM) {
    if (hx->kind != FBX_IV_LIST || fbx_iv_list_len(hx) != 2 || fbx_iv_list_at(hx, 0)->kind != FBX_IV_TENSOR ||
        fbx_iv_list_at(hx, 1)->kind != FBX_IV_TENSOR)
      return seq_fail(s, fbx_kernel_error(ctx, "lstm: Expected hx to be a list of two tensors [h, c]"));
    h = fbx_iv_list_at(hx, 0)->u.t, c = fbx_iv_list_at(hx, 1)->u.t;
  } else {
    if (hx->kind != FBX_IV_TENSOR) return seq_fail(s, fbx_kernel_error(ctx, "%s: hx must be a tensor", nm));
    h = hx->u.t;
  }
  if ((bad = state_arg(ctx, s, h, mode == SEQ_LSTM ? "hidden[0]" : "hidden"))) return seq_fail(s, bad);
  if (c && (bad = state_arg(ctx, s, c, "hidden[1]"))) return seq_fail(s, bad);
  for (int64_t l = 0; l < s->L; l++)
    for (int64_t d = 0; d < s->D; d++) {
      int64_t In = l ? s->D * s->H : s->I, k0 = (l * s->D + d) * per;
      for (int k = 0; k < per; k++) {
        const fbx_tensor *p = fbx_iv_list_at(pl, (int)(k0 + k))->u.t;
        bool ok = p->dtype == s->out_dt &&
                  (k == 0   ? p->ndim == 2 && p->sizes[0] == GH && p->sizes[1] == In
                   : k == 1 ? p->ndim == 2 && p->sizes[0] == GH && p->sizes[1] == s->H
                            : p->ndim == 1 && p->sizes[0] == GH);
        if (!ok) {
          static const char *const names[4] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
          return seq_fail(s, fbx_kernel_error(ctx, "%s: %s of layer %lld%s must be %s [%lld%s%lld] of %s", nm, names[k],
                                  (long long)l, d ? " (reverse)" : "", k < 2 ? "a 2-D" : "a 1-D", (long long)GH,
                                  k < 2 ? ", " : "", k == 0 ? (long long)In : k == 1 ? (long long)s->H : 0LL,
                                  fbx_dtype_name(s->out_dt)));
        }
      }
    }
  /* the working copies */
  fbx_status *stt = NULL;
  fbx_tensor *xv = NULL;
  if (packed) {
    stt = work_copy(&s->x, x, s->wd);
  } else if (s->batch_first) {
    int64_t sz[3] = {s->T, s->B, s->I}, sd[3] = {x->strides[1], x->strides[0], x->strides[2]};
    stt = fbx_tensor_view(&xv, x, 3, sz, sd, x->offset);
  } else {
    xv = fbx_tensor_retain(x);
  }
  if (!stt && !packed) stt = fbx_tensor_clone_as(&s->x, xv, s->wd);
  fbx_tensor_release(xv);
  if (!stt) stt = work_copy(&s->h0, h, s->wd);
  if (!stt && c) stt = work_copy(&s->c0, c, s->wd);
  if (!stt && !(s->w = fbx_calloc((size_t)(4 * s->L * s->D), sizeof *s->w))) stt = fbx_status_nomem();
  for (int64_t q = 0; !stt && q < s->L * s->D; q++)
    for (int k = 0; !stt && k < per; k++)
      stt = work_copy(&s->w[4 * q + k], fbx_iv_list_at(pl, (int)(q * per + k))->u.t, s->wd);
  if (stt) seq_free(s);
  return stt;
}

/* Per step saved for the backward (per element of [T, B, H]): lstm i, f,
 * g, o and c; gru r, z, n and the hidden side's n product; none for the
 * plain cells (their output is the saved value). */
static inline int64_t saved_f32(int mode) { return mode == SEQ_LSTM ? 5 : mode == SEQ_GRU ? 4 : 0; }
static int64_t saved_per(const seq *s) { return saved_f32(s->mode); }

/* Saved value j of element (t, b, k): planar per step, [T][SP][B][H], so
 * that each gate's values of a step are one contiguous run. */
static inline int64_t sv_at(int64_t t, int64_t j, int64_t b, int64_t k, int64_t B, int64_t H, int64_t SP) {
  return ((t * SP + j) * B + b) * H + k;
}

/* Float32 steps of B rows: gi the input side with both biases folded in
 * (gru: not b_hh's n part), row stride GH; gh the hidden side [B, GH]; hp
 * the previous state (row stride ldh); h the new state (row stride ldy);
 * sv (or NULL) this step's saved values [SP][Bs][H] (Bs: the whole batch,
 * B: the rows that take part in this step). vmath.h's vectorized
 * math, in float as PyTorch's float32 cells compute. */
FBX_PW_CLONES static void lstm_step_f32(int64_t B, int64_t H, const float *restrict gi, const float *restrict gh,
                                        float *restrict c, float *restrict h, int64_t ldy, float *restrict sv,
                                        int64_t Bs) {
  const int64_t GH = 4 * H, BH = Bs * H;
  for (int64_t b = 0; b < B; b++) {
    const float *a = gi + b * GH, *e = gh + b * GH;
    float *y = h + b * ldy, *cb = c + b * H;
    if (sv) {
      float *s0 = sv + b * H;
      for (int64_t k = 0; k < H; k++) {
        float ig = fbx_vm_sigmoidf(a[k] + e[k]), fg = fbx_vm_sigmoidf(a[H + k] + e[H + k]);
        float gg = fbx_vm_tanhf(a[2 * H + k] + e[2 * H + k]), og = fbx_vm_sigmoidf(a[3 * H + k] + e[3 * H + k]);
        float cy = fg * cb[k] + ig * gg;
        cb[k] = cy;
        y[k] = og * fbx_vm_tanhf(cy);
        s0[k] = ig, s0[BH + k] = fg, s0[2 * BH + k] = gg, s0[3 * BH + k] = og, s0[4 * BH + k] = cy;
      }
    } else {
      for (int64_t k = 0; k < H; k++) {
        float ig = fbx_vm_sigmoidf(a[k] + e[k]), fg = fbx_vm_sigmoidf(a[H + k] + e[H + k]);
        float gg = fbx_vm_tanhf(a[2 * H + k] + e[2 * H + k]), og = fbx_vm_sigmoidf(a[3 * H + k] + e[3 * H + k]);
        float cy = fg * cb[k] + ig * gg;
        cb[k] = cy;
        y[k] = og * fbx_vm_tanhf(cy);
      }
    }
  }
}

/* bhn: b_hh's n part (zeros without biases) */
FBX_PW_CLONES static void gru_step_f32(int64_t B, int64_t H, const float *restrict gi, const float *restrict gh,
                                       const float *restrict bhn, const float *restrict hp, int64_t ldh,
                                       float *restrict h, int64_t ldy, float *restrict sv, int64_t Bs) {
  const int64_t GH = 3 * H, BH = Bs * H;
  for (int64_t b = 0; b < B; b++) {
    const float *a = gi + b * GH, *e = gh + b * GH, *hb = hp + b * ldh;
    float *y = h + b * ldy, *s0 = sv ? sv + b * H : NULL;
    for (int64_t k = 0; k < H; k++) {
      float r = fbx_vm_sigmoidf(a[k] + e[k]), z = fbx_vm_sigmoidf(a[H + k] + e[H + k]);
      float hn = e[2 * H + k] + bhn[k], n = fbx_vm_tanhf(a[2 * H + k] + r * hn);
      y[k] = n + z * (hb[k] - n);
      if (s0) s0[k] = r, s0[BH + k] = z, s0[2 * BH + k] = n, s0[3 * BH + k] = hn;
    }
  }
}

FBX_PW_CLONES static void plain_step_f32(bool relu, int64_t B, int64_t H, const float *restrict gi,
                                         const float *restrict gh, float *restrict h, int64_t ldy) {
  for (int64_t b = 0; b < B; b++) {
    const float *a = gi + b * H, *e = gh + b * H;
    float *y = h + b * ldy;
    if (relu)
      for (int64_t k = 0; k < H; k++) {
        float v = a[k] + e[k];
        y[k] = v > 0 || v != v ? v : 0.0f;
      }
    else
      for (int64_t k = 0; k < H; k++) y[k] = fbx_vm_tanhf(a[k] + e[k]);
  }
}

/* The forward. Y[l] [N, D * H] gets layer l's output (Y[l] for l < L - 1
 * may alias one buffer when acts is NULL: the caller passes what it keeps);
 * acts[l * D + d] (or NULL) the saved values; hn and cn [L * D, B, H] the
 * final states. Step t updates rows [0, bs[t]) of the state (a packed
 * sequence's shorter rows drop out at the end of the batch: the forward
 * direction leaves their final state in place, the reverse one starts them
 * from the initial state when they first take part). */
static fbx_status *seq_forward(const seq *s, void **Y, void **acts, void *hn, void *cn) {
  const bool f = s->f64;
  const int64_t T = s->T, B = s->B, H = s->H, D = s->D, GH = s->G * s->H, DH = D * H, SP = saved_per(s);
  const size_t es = f ? 8 : 4;
  void *Xg = wbuf(s, s->N * GH), *Hg = wbuf(s, B * GH), *cs = wbuf(s, B * H), *hs = wbuf(s, B * H);
  void *bhn = wbuf(s, H);
  /* packed w_hh (float32, AVX2+FMA, H > 0), 32-byte aligned inside pk_mem */
  bool packed = !f && H > 0 && fbx_gemm_small_ok();
  void *pk_mem = packed ? fbx_malloc((size_t)fbx_gemm_packed_size(GH, H) * 4 + 32) : NULL;
  float *pk = pk_mem ? (float *)(((uintptr_t)pk_mem + 31) & ~(uintptr_t)31) : NULL;
  fbx_status *stt = Xg && Hg && cs && hs && bhn && (!packed || pk_mem) ? NULL : fbx_status_nomem();
  for (int64_t l = 0; !stt && l < s->L; l++) {
    const void *xin = l ? Y[l - 1] : s->x->data;
    int64_t In = l ? DH : s->I;
    for (int64_t d = 0; d < D; d++) {
      int64_t q = l * D + d;
      fbx_tensor *const *w = &s->w[4 * q];
      const void *bih = w[2] ? w[2]->data : NULL, *bhh = w[3] ? w[3]->data : NULL;
      void *sv = acts ? acts[q] : NULL;
      gemm(s, false, true, s->N, GH, In, xin, In, w[0]->data, In, 0, Xg, GH);
      /* both biases into the input side, but b_hh's n part of gru, which r scales */
      if (bih)
        for (int64_t r = 0; r < s->N; r++)
          for (int64_t j = 0; j < GH; j++)
            st(f, Xg, r * GH + j,
               ld(f, Xg, r * GH + j) + ld(f, bih, j) + (s->mode != SEQ_GRU || j < 2 * H ? ld(f, bhh, j) : 0));
      if (bhh && s->mode == SEQ_GRU)
        for (int64_t k = 0; k < H; k++) st(f, bhn, k, ld(f, bhh, 2 * H + k));
      else memset(bhn, 0, (size_t)H * es);
      if (pk) fbx_gemm_pack_bt_f32(GH, H, w[1]->data, H, pk);
      memcpy(hs, at(s, s->h0->data, q * B * H), (size_t)(B * H) * es);
      if (s->c0) memcpy(cs, at(s, s->c0->data, q * B * H), (size_t)(B * H) * es);
      for (int64_t step = 0; step < T; step++) {
        const int64_t t = d ? T - 1 - step : step, Bt = s->bs[t], o = s->off[t];
        if (pk) step_gemm_run(Bt, GH, H, hs, pk, Hg);
        else gemm(s, false, true, Bt, GH, H, hs, H, w[1]->data, H, 0, Hg, GH);
        void *hy = at(s, Y[l], o * DH + d * H);
        if (!f) {
          const float *gi = (const float *)Xg + o * GH;
          float *svt = sv ? (float *)sv + t * SP * B * H : NULL;
          if (s->mode == SEQ_LSTM) lstm_step_f32(Bt, H, gi, Hg, cs, hy, DH, svt, B);
          else if (s->mode == SEQ_GRU) gru_step_f32(Bt, H, gi, Hg, bhn, hs, H, hy, DH, svt, B);
          else plain_step_f32(s->mode == SEQ_RELU, Bt, H, gi, Hg, hy, DH);
        } else {
          for (int64_t b = 0; b < Bt; b++) {
            int64_t xo = (o + b) * GH, ho = b * GH;
            for (int64_t k = 0; k < H; k++) {
              double gi[4], gh[4];
              for (int gte = 0; gte < s->G; gte++) {
                int64_t j = gte * H + k;
                gi[gte] = ld(f, Xg, xo + j);
                gh[gte] = ld(f, Hg, ho + j);
              }
              if (s->mode == SEQ_GRU) gh[2] += ld(f, bhn, k);
#define SV(j) sv_at(t, j, b, k, B, H, SP)
              double hv;
              switch (s->mode) {
              case SEQ_TANH: hv = tanh(gi[0] + gh[0]); break;
              case SEQ_RELU: {
                double v = gi[0] + gh[0];
                hv = v > 0 || isnan(v) ? v : 0;
                break;
              }
              case SEQ_GRU: {
                double r = sigm(gi[0] + gh[0]), z = sigm(gi[1] + gh[1]), n = tanh(gi[2] + r * gh[2]);
                double hprev = ld(f, hs, b * H + k);
                hv = n + z * (hprev - n);
                if (sv) st(f, sv, SV(0), r), st(f, sv, SV(1), z), st(f, sv, SV(2), n), st(f, sv, SV(3), gh[2]);
                break;
              }
              default: {
                double ig = sigm(gi[0] + gh[0]), fg = sigm(gi[1] + gh[1]);
                double gg = tanh(gi[2] + gh[2]), og = sigm(gi[3] + gh[3]);
                double cy = fg * ld(f, cs, b * H + k) + ig * gg;
                st(f, cs, b * H + k, cy);
                hv = og * tanh(cy);
                if (sv)
                  st(f, sv, SV(0), ig), st(f, sv, SV(1), fg), st(f, sv, SV(2), gg), st(f, sv, SV(3), og),
                      st(f, sv, SV(4), cy);
              }
              }
#undef SV
              st(f, hy, b * DH + k, hv);
            }
          }
        }
        for (int64_t b = 0; b < Bt; b++) memcpy(at(s, hs, b * H), at(s, hy, b * DH), (size_t)H * es);
      }
      memcpy(at(s, hn, q * B * H), hs, (size_t)(B * H) * es);
      if (cn) memcpy(at(s, cn, q * B * H), cs, (size_t)(B * H) * es);
    }
  }
  fbx_free(Xg);
  fbx_free(Hg);
  fbx_free(cs);
  fbx_free(hs);
  fbx_free(bhn);
  fbx_free(pk_mem);
  return stt;
}

/* A new tensor of the output dtype from the working buffer v: [A, B, C]
 * time-major, or [B, A, C] when swap01 (batch_first outputs). */
static fbx_status *out_tensor(const seq *s, fbx_tensor **out, const void *v, int64_t A, int64_t B, int64_t C,
                              bool swap01) {
  int64_t sz[3] = {A, B, C};
  fbx_tensor *w = NULL, *view = NULL;
  fbx_status *stt = fbx_tensor_empty(&w, s->wd, 3, sz);
  if (stt) return stt;
  memcpy(w->data, v, (size_t)(A * B * C) * (s->f64 ? 8 : 4));
  if (!swap01 && s->out_dt == s->wd) {
    *out = w;
    return NULL;
  }
  int64_t vs[3] = {swap01 ? B : A, swap01 ? A : B, C};
  int64_t vd[3] = {swap01 ? C : B * C, swap01 ? B * C : C, 1};
  stt = fbx_tensor_view(&view, w, 3, vs, vd, w->offset);
  if (!stt) stt = fbx_tensor_clone_as(out, view, s->out_dt);
  fbx_tensor_release(view);
  fbx_tensor_release(w);
  return stt;
}

/* The per-row result v [N, C] as a new tensor of the output dtype: [N, C]
 * for a packed sequence, else [T, B, C] ([B, T, C] when batch_first). */
static fbx_status *out_rows(const seq *s, fbx_tensor **out, const void *v, int64_t C) {
  if (!s->packed) return out_tensor(s, out, v, s->T, s->B, C, s->batch_first);
  fbx_tensor *t = NULL;
  fbx_status *stt = out_tensor(s, &t, v, 1, s->N, C, false);
  int64_t sz[2] = {s->N, C};
  if (!stt) stt = fbx_tensor_view(out, t, 2, sz, NULL, t->offset);
  fbx_tensor_release(t);
  return stt;
}

static bool is_packed(const fbx_kctx *ctx) { return ctx->op->schema.overload && !strcmp(ctx->op->schema.overload, "data"); }

/* aten::rnn_tanh / rnn_relu / gru / lstm (.input, and .data for a packed sequence) */
fbx_status *fbx_k_rnn_seq(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  seq s;
  FBX_TRY(seq_setup(ctx, args, 0, seq_mode(fbx_sym_unqual(ctx->op->schema.name)), is_packed(ctx), &s));
  const int64_t B = s.B, H = s.H, LD = s.L * s.D, DH = s.D * H;
  void *Y[2] = {wbuf(&s, s.N * DH), s.L > 1 ? wbuf(&s, s.N * DH) : NULL};
  void *hn = wbuf(&s, LD * B * H), *cn = s.mode == SEQ_LSTM ? wbuf(&s, LD * B * H) : NULL;
  void **Yl = fbx_malloc(sizeof(void *) * (size_t)s.L);
  fbx_tensor *o[3] = {0};
  fbx_status *stt = Y[0] && (s.L < 2 || Y[1]) && hn && (s.mode != SEQ_LSTM || cn) && Yl ? NULL : fbx_status_nomem();
  if (!stt) {
    for (int64_t l = 0; l < s.L; l++) Yl[l] = Y[(s.L - 1 - l) % 2]; /* the last layer writes Y[0] */
    stt = seq_forward(&s, Yl, NULL, hn, cn);
  }
  if (!stt) stt = out_rows(&s, &o[0], Y[0], DH);
  if (!stt) stt = out_tensor(&s, &o[1], hn, LD, B, H, false);
  if (!stt && cn) stt = out_tensor(&s, &o[2], cn, LD, B, H, false);
  if (!stt) {
    for (int k = 0; k < (cn ? 3 : 2); k++) fbx_set_out_tensor(outs, k, o[k]), o[k] = NULL;
  }
  for (int k = 0; k < 3; k++) fbx_tensor_release(o[k]);
  fbx_free(Y[0]);
  fbx_free(Y[1]);
  fbx_free(hn);
  fbx_free(cn);
  fbx_free(Yl);
  seq_free(&s);
  return stt;
}

/* The gradient of output k as a working-dtype time-major contiguous
 * tensor, or NULL for None (a zero gradient); A < 0: the rows [B, C] of a
 * packed sequence. */
static fbx_status *grad_in(fbx_kctx *ctx, const seq *s, const fbx_ivalue *g, const char *what, bool swap01,
                           int64_t A, int64_t B, int64_t C, fbx_tensor **out) {
  *out = NULL;
  if (g->kind == FBX_IV_NONE) return NULL;
  if (g->kind != FBX_IV_TENSOR) return fbx_kernel_error(ctx, "rnn_seq_backward: gradients must be tensors");
  fbx_tensor *t = g->u.t, *v = NULL;
  if (A < 0) { /* a packed sequence's rows: [B, C] as it is */
    if (t->ndim != 2 || t->sizes[0] != B || t->sizes[1] != C)
      return fbx_kernel_error(ctx, "rnn_seq_backward: the gradient of %s is not [%lld, %lld]", what, (long long)B,
                              (long long)C);
    return fbx_tensor_clone_as(out, t, s->wd);
  }
  int64_t want[3] = {swap01 ? B : A, swap01 ? A : B, C};
  if (t->ndim != 3 || t->sizes[0] != want[0] || t->sizes[1] != want[1] || t->sizes[2] != want[2])
    return fbx_kernel_error(ctx, "rnn_seq_backward: the gradient of %s is not [%lld, %lld, %lld]", what,
                            (long long)want[0], (long long)want[1], (long long)want[2]);
  int64_t sz[3] = {A, B, C}, sd[3] = {t->strides[swap01 ? 1 : 0], t->strides[swap01 ? 0 : 1], t->strides[2]};
  FBX_TRY(fbx_tensor_view(&v, t, 3, sz, sd, t->offset));
  fbx_status *stt = fbx_tensor_clone_as(out, v, s->wd);
  fbx_tensor_release(v);
  return stt;
}

/* Back through time for layer l, direction d (see the file comment):
 * accumulates the layer input's gradient into dX [N, In] and writes the
 * weights' gradients into gw[0..3] (working buffers) and the initial
 * states' into gh0, gc0 (rows of [L * D, B, H]). dh/dc carry the final
 * states' gradients in; rows that do not take part in a step keep theirs. */
typedef struct {
  void *dGx, *dGh, *dh, *dc, *hd, *Hp;
  double *bsum; /* [2][G * H]: the biases' gradients while they are summed */
  float *pk;    /* NULL, or room for w_hh packed as B of dG_h @ w_hh (float32, not gru) */
} bwd_bufs;

static void seq_backward_dir(const seq *s, int64_t l, int64_t d, void *const *Y, void *const *acts, const void *dY,
                             void *dX, void *const *gw, bwd_bufs *u, void *gh0, void *gc0) {
  const bool f = s->f64;
  const int64_t T = s->T, B = s->B, H = s->H, D = s->D, GH = s->G * H, DH = D * H, SP = saved_per(s);
  const int64_t q = l * D + d, In = l ? DH : s->I;
  const void *xin = l ? Y[l - 1] : s->x->data, *sv = acts[q];
  fbx_tensor *const *w = &s->w[4 * q];
  const size_t es = f ? 8 : 4;
  const bool gru = s->mode == SEQ_GRU;
  void *dGh = gru ? u->dGh : u->dGx;
  /* the state each row of each step started from (forward order: the
   * previous step's output where the row took part in it, else h0), as
   * rows of Hp [N, H] */
  for (int64_t t = 0; t < T; t++) {
    int64_t tp = d ? t + 1 : t - 1;
    for (int64_t b = 0; b < s->bs[t]; b++) {
      const void *src = tp < 0 || tp >= T || b >= s->bs[tp] ? at(s, s->h0->data, (q * B + b) * H)
                                                             : at(s, Y[l], (s->off[tp] + b) * DH + d * H);
      memcpy(at(s, u->Hp, (s->off[t] + b) * H), src, (size_t)H * es);
    }
  }
  if (u->pk && !gru) fbx_gemm_pack_b_f32(H, GH, w[1]->data, H, u->pk);
  for (int64_t step = 0; step < T; step++) {
    const int64_t t = d ? step : T - 1 - step, tp = d ? t + 1 : t - 1, Bt = s->bs[t], o = s->off[t];
    for (int64_t b = 0; b < Bt; b++)
      for (int64_t k = 0; k < H; k++) {
        int64_t e = b * H + k, go = (o + b) * GH + k;
#define SV(j) sv_at(t, j, b, k, B, H, SP)
        double dht = ld(f, u->dh, e) + (dY ? ld(f, dY, (o + b) * DH + d * H + k) : 0);
        switch (s->mode) {
        case SEQ_TANH:
        case SEQ_RELU: {
          double hv = ld(f, Y[l], (o + b) * DH + d * H + k);
          st(f, u->dGx, go, s->mode == SEQ_TANH ? dht * (1 - hv * hv) : hv > 0 ? dht : 0);
          break;
        }
        case SEQ_GRU: {
          double r = ld(f, sv, SV(0)), z = ld(f, sv, SV(1)), n = ld(f, sv, SV(2)), ghn = ld(f, sv, SV(3));
          double hp = ld(f, u->Hp, (o + b) * H + k);
          double dn = dht * (1 - z), dz = dht * (hp - n), dpn = dn * (1 - n * n), dr = dpn * ghn;
          double dpr = dr * r * (1 - r), dpz = dz * z * (1 - z);
          st(f, u->dGx, go, dpr), st(f, u->dGx, go + H, dpz), st(f, u->dGx, go + 2 * H, dpn);
          st(f, u->dGh, go, dpr), st(f, u->dGh, go + H, dpz), st(f, u->dGh, go + 2 * H, dpn * r);
          st(f, u->hd, e, dht * z);
          break;
        }
        default: {
          double ig = ld(f, sv, SV(0)), fg = ld(f, sv, SV(1)), gg = ld(f, sv, SV(2)), og = ld(f, sv, SV(3));
          double cy = ld(f, sv, SV(4));
          double cp = tp < 0 || tp >= T || b >= s->bs[tp] ? ld(f, s->c0->data, (q * B + b) * H + k)
                                                          : ld(f, sv, sv_at(tp, 4, b, k, B, H, SP));
          double tc = tanh(cy), dct = ld(f, u->dc, e) + dht * og * (1 - tc * tc);
          st(f, u->dGx, go, dct * gg * ig * (1 - ig));
          st(f, u->dGx, go + H, dct * cp * fg * (1 - fg));
          st(f, u->dGx, go + 2 * H, dct * ig * (1 - gg * gg));
          st(f, u->dGx, go + 3 * H, dht * tc * og * (1 - og));
          st(f, u->dc, e, dct * fg);
        }
        }
#undef SV
      }
    /* dh of the rows that took part = (gru: dh z) + dG_h[t] w_hh */
    if (gru) memcpy(u->dh, u->hd, (size_t)(Bt * H) * es);
    if (u->pk && !gru) step_gemm_run(Bt, H, GH, at(s, dGh, o * GH), u->pk, u->dh);
    else gemm(s, false, false, Bt, H, GH, at(s, dGh, o * GH), GH, w[1]->data, H, gru ? 1.0 : 0.0, u->dh, H);
  }
  memcpy(at(s, gh0, q * B * H), u->dh, (size_t)(B * H) * es);
  if (gc0) memcpy(at(s, gc0, q * B * H), u->dc, (size_t)(B * H) * es);
  const int64_t NR = s->N;
  gemm(s, true, false, GH, In, NR, u->dGx, GH, xin, In, 0, gw[0], In);
  gemm(s, true, false, GH, H, NR, dGh, GH, u->Hp, H, 0, gw[1], H);
  if (gw[2]) { /* column sums in double, walking the rows in memory order */
    double *a = u->bsum, *c = u->bsum + GH;
    memset(u->bsum, 0, sizeof(double) * (size_t)(2 * GH));
    for (int64_t r = 0; r < NR; r++)
      for (int64_t j = 0; j < GH; j++) a[j] += ld(f, u->dGx, r * GH + j), c[j] += ld(f, dGh, r * GH + j);
    for (int64_t j = 0; j < GH; j++) st(f, gw[2], j, a[j]), st(f, gw[3], j, c[j]);
  }
  gemm(s, false, false, NR, In, GH, u->dGx, GH, w[0]->data, In, 1.0, dX, In);
}

/* fusebox::rnn_seq_backward(grad_output, grad_state, input, batch_sizes,
 * hx, params, mode, has_biases, num_layers, dropout, train, bidirectional,
 * batch_first) -> (d input, d hx, d params): batch_sizes is a packed
 * sequence's (input its data), or None; grad_state holds the final states'
 * gradients and hx the initial states, each [h] or, for lstm, [h, c] (a
 * None gradient counts as zeros); mode 0 rnn_tanh, 1 rnn_relu, 2 gru, 3
 * lstm. d hx is [d h] or [d h, d c]; d params follows params. */
fbx_status *fbx_k_fbx_rnn_seq_backward(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  int64_t mode = fbx_iv_to_int(&args[6]);
  if (mode < SEQ_TANH || mode > SEQ_LSTM) return fbx_kernel_error(ctx, "rnn_seq_backward: unknown mode %lld", (long long)mode);
  const fbx_ivalue *gs = &args[1], *hx = &args[4];
  const bool packed = args[3].kind == FBX_IV_TENSOR;
  int nst = mode == SEQ_LSTM ? 2 : 1;
  if (gs->kind != FBX_IV_LIST || fbx_iv_list_len(gs) != nst || hx->kind != FBX_IV_LIST || fbx_iv_list_len(hx) != nst)
    return fbx_kernel_error(ctx, "rnn_seq_backward: grad_state and hx must be lists of %d tensor(s)", nst);
  /* seq_setup's argument order (the forward ops'); the plain cells' and gru's hx is one tensor */
  fbx_ivalue h = nst == 1 ? *fbx_iv_list_at(hx, 0) : *hx;
  fbx_ivalue a[10] = {args[2], h, args[5], args[7], args[8], args[9], args[10], args[11], args[12]};
  if (packed) {
    fbx_ivalue pa[10] = {args[2], args[3], h, args[5], args[7], args[8], args[9], args[10], args[11]};
    memcpy(a, pa, sizeof a);
  }
  seq s;
  FBX_TRY(seq_setup(ctx, a, 0, (int)mode, packed, &s));
  const int64_t T = s.T, B = s.B, H = s.H, L = s.L, D = s.D, LD = L * D, DH = D * H, GH = s.G * H;
  const int per = s.biases ? 4 : 2;
  fbx_tensor *gY = NULL, *ghn = NULL, *gcn = NULL, *o0 = NULL, *gstate[2] = {0};
  void **Y = fbx_calloc((size_t)L, sizeof(void *)), **acts = fbx_calloc((size_t)LD, sizeof(void *));
  void **gw = fbx_calloc((size_t)(4 * LD), sizeof(void *));
  void *hn = wbuf(&s, LD * B * H), *cn = mode == SEQ_LSTM ? wbuf(&s, LD * B * H) : NULL;
  void *gh0 = wbuf(&s, LD * B * H), *gc0 = mode == SEQ_LSTM ? wbuf(&s, LD * B * H) : NULL;
  void *dA = NULL, *dB = NULL;
  bwd_bufs u = {0};
  void *pk_mem = NULL;
  fbx_ivalue lh = fbx_iv_none(), lp = fbx_iv_none();
  fbx_status *stt = Y && acts && gw && hn && gh0 && (!cn || (cn && gc0)) ? NULL : fbx_status_nomem();
  if (!stt) stt = grad_in(ctx, &s, &args[0], "the output", s.batch_first, packed ? -1 : T, packed ? s.N : B, DH, &gY);
  if (!stt) stt = grad_in(ctx, &s, fbx_iv_list_at(gs, 0), "h_n", false, LD, B, H, &ghn);
  if (!stt && nst == 2) stt = grad_in(ctx, &s, fbx_iv_list_at(gs, 1), "c_n", false, LD, B, H, &gcn);
  for (int64_t l = 0; !stt && l < L; l++)
    if (!(Y[l] = wbuf(&s, s.N * DH))) stt = fbx_status_nomem();
  for (int64_t q = 0; !stt && q < LD; q++)
    if (saved_per(&s) && !(acts[q] = wbuf(&s, T * B * H * saved_per(&s)))) stt = fbx_status_nomem();
  for (int64_t q = 0; !stt && q < LD; q++)
    for (int k = 0; !stt && k < per; k++) {
      int64_t rows = GH, cols = k == 0 ? (q / D ? DH : s.I) : k == 1 ? H : 1;
      if (!(gw[4 * q + k] = wbuf(&s, rows * cols))) stt = fbx_status_nomem();
    }
  if (!stt) {
    int64_t maxIn = s.I > DH ? s.I : DH;
    u.dGx = wbuf(&s, s.N * GH), u.dGh = wbuf(&s, s.N * GH), u.dh = wbuf(&s, B * H), u.dc = wbuf(&s, B * H);
    u.hd = wbuf(&s, B * H), u.Hp = wbuf(&s, s.N * H), u.bsum = fbx_malloc(sizeof(double) * (size_t)(2 * GH + 1));
    dA = wbuf(&s, s.N * maxIn), dB = wbuf(&s, s.N * maxIn);
    if (!s.f64 && s.mode != SEQ_GRU && H > 0 && fbx_gemm_small_ok()) {
      pk_mem = fbx_malloc((size_t)fbx_gemm_packed_size(H, GH) * 4 + 32);
      u.pk = pk_mem ? (float *)(((uintptr_t)pk_mem + 31) & ~(uintptr_t)31) : NULL;
      if (!pk_mem) stt = fbx_status_nomem();
    }
    if (!u.dGx || !u.dGh || !u.dh || !u.dc || !u.hd || !u.Hp || !u.bsum || !dA || !dB) stt = fbx_status_nomem();
  }
  if (!stt) stt = seq_forward(&s, Y, acts, hn, cn);
  if (stt) goto done;
  {
    const size_t es = s.f64 ? 8 : 4;
    /* dY of the top layer: the output's gradient (zeros for None) */
    void *dY = gY ? gY->data : NULL, *dX = dA;
    for (int64_t l = L - 1; l >= 0; l--) {
      int64_t In = l ? DH : s.I;
      memset(dX, 0, (size_t)(s.N * In) * es);
      for (int64_t d = 0; d < D; d++) {
        int64_t q = l * D + d;
        if (ghn) memcpy(u.dh, at(&s, ghn->data, q * B * H), (size_t)(B * H) * es);
        else memset(u.dh, 0, (size_t)(B * H) * es);
        if (mode == SEQ_LSTM) {
          if (gcn) memcpy(u.dc, at(&s, gcn->data, q * B * H), (size_t)(B * H) * es);
          else memset(u.dc, 0, (size_t)(B * H) * es);
        }
        seq_backward_dir(&s, l, d, Y, acts, dY, dX, &gw[4 * q], &u, gh0, gc0);
      }
      dY = dX;
      dX = dX == dA ? dB : dA;
    }
    /* the input's gradient is the last dY (layer 0's dX) */
    stt = out_rows(&s, &o0, dY, s.I);
  }
  if (!stt) stt = out_tensor(&s, &gstate[0], gh0, LD, B, H, false);
  if (!stt && gc0) stt = out_tensor(&s, &gstate[1], gc0, LD, B, H, false);
  if (!stt) stt = fbx_iv_list_new(&lh, nst);
  for (int k = 0; !stt && k < nst; k++) {
    stt = fbx_iv_list_push(&lh, fbx_iv_tensor(gstate[k])); /* takes the reference, also on failure */
    gstate[k] = NULL;
  }
  if (!stt) stt = fbx_iv_list_new(&lp, per * (int)LD);
  for (int64_t q = 0; !stt && q < LD; q++)
    for (int k = 0; !stt && k < per; k++) {
      fbx_tensor *p = NULL, *pw = s.w[4 * q + k];
      int64_t sz[2] = {pw->sizes[0], pw->ndim == 2 ? pw->sizes[1] : 1};
      stt = out_tensor(&s, &p, gw[4 * q + k], 1, sz[0], sz[1], false);
      fbx_tensor *v = NULL;
      if (!stt) stt = fbx_tensor_view(&v, p, pw->ndim, pw->sizes, NULL, p->offset);
      fbx_tensor_release(p);
      if (!stt) stt = fbx_iv_list_push(&lp, fbx_iv_tensor(v));
      else fbx_tensor_release(v);
    }
  if (!stt) {
    fbx_set_out_tensor(outs, 0, o0);
    o0 = NULL;
    outs[1] = lh, outs[2] = lp;
    lh = fbx_iv_none(), lp = fbx_iv_none();
  }
done:
  fbx_iv_release(&lh);
  fbx_iv_release(&lp);
  fbx_tensor_release(o0);
  fbx_tensor_release(gstate[0]);
  fbx_tensor_release(gstate[1]);
  fbx_tensor_release(gY);
  fbx_tensor_release(ghn);
  fbx_tensor_release(gcn);
  if (Y)
    for (int64_t l = 0; l < L; l++) fbx_free(Y[l]);
  if (acts)
    for (int64_t q = 0; q < LD; q++) fbx_free(acts[q]);
  if (gw)
    for (int64_t k = 0; k < 4 * LD; k++) fbx_free(gw[k]);
  fbx_free(Y);
  fbx_free(acts);
  fbx_free(gw);
  fbx_free(hn);
  fbx_free(cn);
  fbx_free(gh0);
  fbx_free(gc0);
  fbx_free(dA);
  fbx_free(dB);
  fbx_free(u.dGx);
  fbx_free(u.dGh);
  fbx_free(u.dh);
  fbx_free(u.dc);
  fbx_free(u.hd);
  fbx_free(u.Hp);
  fbx_free(u.bsum);
  fbx_free(pk_mem);
  seq_free(&s);
  return stt;
}
