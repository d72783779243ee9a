/* The matmul family and the convolutions on the kernels' pool (k_linalg.c,
 * k_conv.c): products big enough to be split over threads (whole batches,
 * bands of rows, bands of columns, with the split's remainder blocks) and
 * convolutions big enough to be cut into several bands of output rows,
 * checked exactly against naive double loops on small-integer inputs (every
 * partial sum is an integer below 2^24, so float32 is exact in any order).
 * The pool runs 3 threads here (FUSEBOX_NUM_THREADS, set before its first
 * use), so that splits are uneven on any machine. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/conv_direct.h"
#include "ops/gemm_small.h"
#include "ops/kutil.h"
#include "ops/optable.h"
#include "oprun.h"
#include "testutil.h"
#include <fusebox/tensor.h>

#define OK(expr)                                                                 \
  do {                                                                           \
    fbx_status *st_ = (expr);                                                    \
    ck_assert_msg(st_ == NULL, "%s failed: %s", #expr, fbx_status_message(st_)); \
  } while (0)

static void release_all(fbx_ivalue *v, int n) {
  for (int i = 0; i < n; i++) fbx_iv_release(&v[i]);
}

static uint64_t rng = 12345;
/* A tensor of integers in [-lim, lim] (contiguous). */
static fbx_tensor *rand_int_tensor(fbx_dtype dt, int nd, const int64_t *sizes, int lim) {
  fbx_tensor *t = NULL;
  OK(fbx_tensor_empty(&t, dt, nd, sizes));
  for (int64_t i = 0; i < t->numel; i++) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    fbx_tensor_set_f64(t, i, (double)((int64_t)((rng >> 33) % (uint64_t)(2 * lim + 1)) - lim));
  }
  return t;
}

static fbx_ivalue int_list(int n, const int64_t *v) {
  fbx_ivalue l;
  OK(fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) OK(fbx_iv_list_push(&l, fbx_iv_int(v[i])));
  return l;
}

/* Element (i0, i1, ...) of t (any strides). */
static double at(const fbx_tensor *t, const int64_t *idx) {
  int64_t flat = 0;
  for (int d = 0; d < t->ndim; d++) flat = flat * t->sizes[d] + idx[d];
  return fbx_tensor_get_f64(t, flat);
}

/* ---- products ------------------------------------------------------------------------------ */

/* A [nb, M, K] operand, transposed in memory when t (a [nb, K, M] buffer
 * viewed as [nb, M, K]); nb 0 means 2-D. */
static fbx_tensor *operand(fbx_dtype dt, int64_t nb, int64_t M, int64_t K, bool t, fbx_tensor **base) {
  int64_t s3[3] = {nb, t ? K : M, t ? M : K};
  int nd = nb ? 3 : 2;
  *base = rand_int_tensor(dt, nd, nb ? s3 : s3 + 1, 8);
  if (!t) return fbx_tensor_retain(*base);
  int64_t vs[3] = {nb, M, K}, vst[3] = {M * K, 1, M};
  fbx_tensor *v = NULL;
  OK(fbx_tensor_view(&v, *base, nd, nb ? vs : vs + 1, nb ? vst : vst + 1, 0));
  return v;
}

/* kind(a, b) for a [nb, M, K] (or [M, K]) and b likewise, against the
 * naive product; with `bias` ([N]), addmm(bias, a, b, beta 1, alpha 2). */
static void check_product(const char *kind, fbx_dtype dt, int64_t nb, int64_t M, int64_t K, int64_t N, bool ta, bool tb,
                          bool bias) {
  fbx_tensor *ab, *bb, *a = operand(dt, nb, M, K, ta, &ab), *b = operand(dt, nb, K, N, tb, &bb), *s = NULL;
  if (bias) s = rand_int_tensor(dt, 1, &N, 8);
  fbx_ivalue args[5], outs[1];
  int nargs = 0;
  if (bias) args[nargs++] = fbx_iv_tensor(s);
  args[nargs++] = fbx_iv_tensor(a);
  args[nargs++] = fbx_iv_tensor(b);
  if (bias) args[nargs++] = fbx_iv_int(1), args[nargs++] = fbx_iv_int(2);
  OK(oprun(kind, args, nargs, outs, NULL, NULL));
  fbx_tensor *c = outs[0].u.t;
  ck_assert_int_eq(c->numel, (nb ? nb : 1) * M * N);
  for (int64_t bi = 0; bi < (nb ? nb : 1); bi++)
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        double want = 0;
        for (int64_t k = 0; k < K; k++) {
          int64_t ia[3] = {bi, i, k}, ib[3] = {bi, k, j};
          want += at(a, nb ? ia : ia + 1) * at(b, nb ? ib : ib + 1);
        }
        if (bias) want = 2 * want + at(s, &j);
        int64_t ic[3] = {bi, i, j};
        double got = at(c, nb ? ic : ic + 1);
        if (got != want)
          ck_abort_msg("%s %s [%lld]x%lldx%lldx%lld t%d%d at [%lld,%lld,%lld]: %g, want %g", kind,
                      fbx_dtype_name(dt), (long long)nb, (long long)M, (long long)K, (long long)N, ta, tb,
                      (long long)bi, (long long)i, (long long)j, got, want);
      }
  release_all(outs, 1);
  fbx_tensor_release(a), fbx_tensor_release(b), fbx_tensor_release(ab), fbx_tensor_release(bb);
  fbx_tensor_release(s);
}

/* Batches spread whole (64 of them), batches fewer than threads and split
 * in rows (M >= N) or columns (N > M) with remainder blocks, both dtypes,
 * every transpose combination. */
START_TEST(test_split_products) {
  OK(fbx_op_table_init());
  ck_assert_int_eq(fbx_parallel_threads(), 3);
  static const int64_t shapes[][4] = {
      {64, 40, 24, 40}, /* nb >= threads: whole batches */
      {2, 101, 60, 50}, /* 2 batches on 3 threads: 3 row blocks each (48, 48, 5) */
      {1, 12, 100, 997}, /* 3 column blocks (multiples of 16), the last short */
      {4, 50, 100, 77},  /* 4 batches on 3 threads: 3 column blocks each */
  };
  for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
    for (int t = 0; t < 4; t++) {
      check_product("aten::bmm", FBX_DTYPE_FLOAT32, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], t & 1,
                    t & 2, false);
      check_product("aten::bmm", FBX_DTYPE_FLOAT64, shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], t & 1,
                    t & 2, false);
    }
  check_product("aten::mm", FBX_DTYPE_FLOAT32, 0, 1000, 40, 30, false, true, false);
  check_product("aten::mm", FBX_DTYPE_FLOAT32, 0, 30, 40, 2000, true, false, false);
  /* addmm: the bias rides in the GEMM's C, each block adds it to its own part */
  check_product("aten::addmm", FBX_DTYPE_FLOAT32, 0, 700, 50, 45, false, false, true);
  check_product("aten::addmm", FBX_DTYPE_FLOAT64, 0, 20, 50, 1500, true, true, true);
}
END_TEST

/* gemm_small.h's kernel on its own: every edge of its register blocks (M
 * past a multiple of 6, N past a multiple of 16, K from 1 to its limit),
 * leading dimensions wider than the rows, exact on small integers, and no
 * element of C outside the M x N product written (the padding columns
 * and the row after the last keep their sentinel). */
START_TEST(test_gemm_small_kernel) {
  if (!fbx_gemm_small_ok()) {
    printf("test_gemm_small_kernel: no AVX2+FMA here; skipped\n");
    return;
  }
  static const int64_t Ms[] = {1, 5, 6, 7, 13}, Ns[] = {1, 8, 15, 16, 17, 40}, Ks[] = {1, 3, 64, FBX_GS_KMAX};
  _Alignas(32) static float pack[FBX_GS_KMAX * FBX_GS_NR];
  for (size_t mi = 0; mi < 5; mi++)
    for (size_t ni = 0; ni < 6; ni++)
      for (size_t ki = 0; ki < 4; ki++) {
        int64_t M = Ms[mi], N = Ns[ni], K = Ks[ki], lda = K + 3, ldb = N + 5, ldc = N + 2;
        float *A = malloc(sizeof(float) * (size_t)(M * lda)), *B = malloc(sizeof(float) * (size_t)(K * ldb));
        float *C = malloc(sizeof(float) * (size_t)((M + 1) * ldc));
        ck_assert(A && B && C);
        for (int64_t i = 0; i < M * lda; i++) A[i] = (float)((i * 7 + 3) % 9) - 4;
        for (int64_t i = 0; i < K * ldb; i++) B[i] = (float)((i * 5 + 1) % 7) - 3;
        for (int64_t i = 0; i < (M + 1) * ldc; i++) C[i] = -12345.0f;
        fbx_gemm_small_f32(M, N, K, A, lda, B, ldb, C, ldc, pack);
        for (int64_t i = 0; i <= M; i++)
          for (int64_t j = 0; j < ldc; j++) {
            double want = -12345.0;
            if (i < M && j < N) {
              want = 0;
              for (int64_t k = 0; k < K; k++) want += (double)A[i * lda + k] * B[k * ldb + j];
            }
            if (C[i * ldc + j] != want)
              ck_abort_msg("M %lld N %lld K %lld: C[%lld][%lld] = %g, want %g", (long long)M, (long long)N,
                           (long long)K, (long long)i, (long long)j, C[i * ldc + j], want);
          }
        free(A), free(B), free(C);
      }
}
END_TEST

/* The packed form (a recurrent layer's step): B packed once, either as Wᵀ
 * from W [N, K] or as B itself, then products over panel ranges [p0, p1)
 * that together cover C; exact on small integers, C outside the product
 * untouched, K past FBX_GS_KMAX too (the packed panels have no limit). */
START_TEST(test_gemm_packed_kernel) {
  if (!fbx_gemm_small_ok()) {
    printf("test_gemm_packed_kernel: no AVX2+FMA here; skipped\n");
    return;
  }
  static const int64_t Ms[] = {1, 6, 7, 32}, Ns[] = {1, 15, 16, 33, 2048}, Ks[] = {1, 5, 512, 1000};
  for (size_t mi = 0; mi < 4; mi++)
    for (size_t ni = 0; ni < 5; ni++)
      for (size_t ki = 0; ki < 4; ki++)
        for (int bt = 0; bt < 2; bt++) {
          int64_t M = Ms[mi], N = Ns[ni], K = Ks[ki], lda = K + 3, ldw = bt ? K + 2 : N + 2, ldc = N + 1;
          if (N * K > 600000) continue;
          float *A = malloc(sizeof(float) * (size_t)(M * lda)), *W = malloc(sizeof(float) * (size_t)((bt ? N : K) * ldw));
          float *C = malloc(sizeof(float) * (size_t)((M + 1) * ldc));
          void *pm = malloc(sizeof(float) * (size_t)fbx_gemm_packed_size(N, K) + 32);
          ck_assert(A && W && C && pm);
          float *pk = (float *)(((uintptr_t)pm + 31) & ~(uintptr_t)31);
          for (int64_t i = 0; i < M * lda; i++) A[i] = (float)((i * 7 + 3) % 9) - 4;
          for (int64_t i = 0; i < (bt ? N : K) * ldw; i++) W[i] = (float)((i * 5 + 1) % 7) - 3;
          for (int64_t i = 0; i < (M + 1) * ldc; i++) C[i] = -12345.0f;
          if (bt) fbx_gemm_pack_bt_f32(N, K, W, ldw, pk);
          else fbx_gemm_pack_b_f32(N, K, W, ldw, pk);
          int64_t panels = (N + FBX_GS_NR - 1) / FBX_GS_NR, mid = panels / 2;
          fbx_gemm_packed_f32(M, N, K, A, lda, pk, 0, mid, C, ldc);
          fbx_gemm_packed_f32(M, N, K, A, lda, pk, mid, panels, C, ldc);
          for (int64_t i = 0; i <= M; i++)
            for (int64_t j = 0; j < ldc; j++) {
              double want = -12345.0;
              if (i < M && j < N) {
                want = 0;
                for (int64_t k = 0; k < K; k++) want += (double)A[i * lda + k] * (bt ? W[j * ldw + k] : W[k * ldw + j]);
              }
              if (C[i * ldc + j] != want)
                ck_abort_msg("%s M %lld N %lld K %lld: C[%lld][%lld] = %g, want %g", bt ? "Wt" : "B", (long long)M,
                             (long long)N, (long long)K, (long long)i, (long long)j, C[i * ldc + j], want);
            }
          free(A), free(W), free(C), free(pm);
        }
}
END_TEST

/* matmul with broadcast batch dims ([2, 1, M, K] @ [3, K, N]: the left
 * operand's batch stride is 0 along the 3) on the pool. */
START_TEST(test_split_broadcast_matmul) {
  OK(fbx_op_table_init());
  int64_t as[4] = {2, 1, 90, 30}, bs[3] = {3, 30, 70};
  fbx_tensor *a = rand_int_tensor(FBX_DTYPE_FLOAT32, 4, as, 8), *b = rand_int_tensor(FBX_DTYPE_FLOAT32, 3, bs, 8);
  fbx_ivalue args[2] = {fbx_iv_tensor(a), fbx_iv_tensor(b)}, outs[1];
  OK(oprun("aten::matmul", args, 2, outs, NULL, NULL));
  fbx_tensor *c = outs[0].u.t;
  ck_assert_int_eq(c->ndim, 4);
  ck_assert_int_eq(c->sizes[0], 2);
  ck_assert_int_eq(c->sizes[1], 3);
  for (int64_t p = 0; p < 2; p++)
    for (int64_t q = 0; q < 3; q++)
      for (int64_t i = 0; i < 90; i++)
        for (int64_t j = 0; j < 70; j++) {
          double want = 0;
          for (int64_t k = 0; k < 30; k++) {
            int64_t ia[4] = {p, 0, i, k}, ib[3] = {q, k, j};
            want += at(a, ia) * at(b, ib);
          }
          int64_t ic[4] = {p, q, i, j};
          if (at(c, ic) != want) ck_abort_msg("[%lld,%lld,%lld,%lld]: %g, want %g", (long long)p, (long long)q,
                                              (long long)i, (long long)j, at(c, ic), want);
        }
  release_all(outs, 1);
  release_all(args, 2);
}
END_TEST

/* t's elements as doubles (row-major); free() it. */
static double *to_doubles(const fbx_tensor *t) {
  double *d = malloc(sizeof(double) * (size_t)(t->numel ? t->numel : 1));
  ck_assert_ptr_nonnull(d);
  for (int64_t i = 0; i < t->numel; i++) d[i] = fbx_tensor_get_f64(t, i);
  return d;
}

/* ---- convolutions ---------------------------------------------------------------------------- */

/* A convolution of nsp spatial dims (1 to 3), or with `transposed` the
 * transposed convolution whose input has the sizes `in` (the convolution
 * it is the adjoint of then has the output `in`). */
typedef struct convnd_case {
  int nsp;
  bool transposed, bias;
  int64_t N, C, O, G; /* input and output channels of the op (transposed: weight [C, O / G, k...]) */
  int64_t in[3], k[3], s[3], p[3], d[3], op[3];
} convnd_case;

/* The old cases' form: conv2d (conv1d when H == 0), one stride, padding
 * and dilation for both dims (pw > 0: the padding along W). */
typedef struct conv_case {
  int64_t N, C, H, W, O, kH, kW, s, p, d, G;
  bool bias;
  int64_t pw; /* the padding along W when > 0 (p otherwise) */
} conv_case;

static int64_t out_len(int64_t n, int64_t k, int64_t s, int64_t p, int64_t d) { return (n + 2 * p - d * (k - 1) - 1) / s + 1; }

/* The op against naive sums, forward, then its three gradients
 * (fusebox::conv_backward, or fusebox::convolution_backward for a
 * transposed one) against naive sums. Both kinds enumerate the taps of
 * one convolution: for each image n, output channel o, output position q,
 * input channel c of o's group and tap t, the input position p it reads
 * (if inside): y[n, o, q] += x[n, c, p] w[o, c', t]; a transposed op runs
 * the same pairs the other way: y_t[n, c, p] += x_t[n, o, q] w[o, c', t]. */
static void check_convnd(fbx_dtype dt, convnd_case cc) {
  int nsp = cc.nsp;
  bool tr = cc.transposed;
  /* the convolution: input [N, Cc, ci...], output [N, Oc, co...], weight [Oc, Cc / G, k...] */
  int64_t Cc = tr ? cc.O : cc.C, Oc = tr ? cc.C : cc.O, ci[3], co[3], Pi = 1, Po = 1, taps = 1;
  for (int i = 0; i < nsp; i++) {
    if (tr) co[i] = cc.in[i], ci[i] = (cc.in[i] - 1) * cc.s[i] - 2 * cc.p[i] + cc.d[i] * (cc.k[i] - 1) + cc.op[i] + 1;
    else ci[i] = cc.in[i], co[i] = out_len(cc.in[i], cc.k[i], cc.s[i], cc.p[i], cc.d[i]);
    Pi *= ci[i], Po *= co[i], taps *= cc.k[i];
  }
  int64_t Cg = Cc / cc.G, Og = Oc / cc.G;
  int64_t xs[5] = {cc.N, cc.C}, ws[5] = {tr ? cc.C : cc.O, tr ? cc.O / cc.G : cc.C / cc.G}, ys[5] = {cc.N, cc.O};
  for (int i = 0; i < nsp; i++) xs[2 + i] = cc.in[i], ws[2 + i] = cc.k[i], ys[2 + i] = tr ? ci[i] : co[i];
  fbx_tensor *x = rand_int_tensor(dt, nsp + 2, xs, 4), *w = rand_int_tensor(dt, nsp + 2, ws, 4);
  int64_t nb = cc.O;
  fbx_tensor *b = cc.bias ? rand_int_tensor(dt, 1, &nb, 50) : NULL;
  fbx_ivalue args[8] = {fbx_iv_tensor(x), fbx_iv_tensor(w), b ? fbx_iv_tensor(b) : fbx_iv_none(),
                        int_list(nsp, cc.s), int_list(nsp, cc.p)},
             outs[3];
  static const char *const conv_ops[3] = {"aten::conv1d", "aten::conv2d", "aten::conv3d"};
  static const char *const convt_ops[3] = {"aten::conv_transpose1d", "aten::conv_transpose2d",
                                           "aten::conv_transpose3d"};
  if (tr) {
    args[5] = int_list(nsp, cc.op), args[6] = fbx_iv_int(cc.G), args[7] = int_list(nsp, cc.d);
    OK(oprun(convt_ops[nsp - 1], args, 8, outs, NULL, NULL));
  } else {
    args[5] = int_list(nsp, cc.d), args[6] = fbx_iv_int(cc.G), args[7] = fbx_iv_none();
    OK(oprun(conv_ops[nsp - 1], args, 7, outs, NULL, NULL));
  }
  fbx_tensor *y = outs[0].u.t;
  ck_assert_int_eq(y->ndim, nsp + 2);
  for (int i = 0; i < nsp + 2; i++) ck_assert_int_eq(y->sizes[i], ys[i]);
  fbx_tensor *gy = rand_int_tensor(dt, y->ndim, y->sizes, 3);
  double *xd = to_doubles(x), *wd = to_doubles(w), *yd = to_doubles(y), *gyd = to_doubles(gy);
  double *wy = calloc((size_t)y->numel, sizeof(double)), *wgx = calloc((size_t)x->numel, sizeof(double));
  double *wgw = calloc((size_t)w->numel, sizeof(double));
  ck_assert(wy && wgx && wgw);
  for (int64_t n = 0; n < cc.N; n++)
    for (int64_t o = 0; o < Oc; o++)
      for (int64_t q = 0; q < Po; q++)
        for (int64_t c = 0; c < Cg; c++)
          for (int64_t t = 0; t < taps; t++) {
            int64_t p = 0, qr = q, tr_ = t, qi[3], ti[3];
            for (int i = nsp - 1; i >= 0; i--) qi[i] = qr % co[i], qr /= co[i], ti[i] = tr_ % cc.k[i], tr_ /= cc.k[i];
            bool inside = true;
            for (int i = 0; i < nsp && inside; i++) {
              int64_t pi = qi[i] * cc.s[i] - cc.p[i] + ti[i] * cc.d[i];
              inside = pi >= 0 && pi < ci[i];
              p = p * ci[i] + pi;
            }
            if (!inside) continue;
            int64_t ic = (o / Og) * Cg + c, iq = (n * Oc + o) * Po + q, ip = (n * Cc + ic) * Pi + p;
            int64_t iw = (o * Cg + c) * taps + t;
            if (tr) { /* x [N, Oc, co...], y [N, Cc, ci...] */
              wy[ip] += xd[iq] * wd[iw];
              wgx[iq] += gyd[ip] * wd[iw];
              wgw[iw] += xd[iq] * gyd[ip];
            } else {
              wy[iq] += xd[ip] * wd[iw];
              wgx[ip] += gyd[iq] * wd[iw];
              wgw[iw] += gyd[iq] * xd[ip];
            }
          }
  for (int64_t i = 0; i < y->numel; i++) {
    double want = wy[i] + (b ? fbx_tensor_get_f64(b, (i / (tr ? Pi : Po)) % cc.O) : 0);
    if (yd[i] != want)
      ck_abort_msg("%s %dD %s: y[%lld] = %g, want %g", tr ? "conv_transpose" : "conv", nsp, fbx_dtype_name(dt),
                   (long long)i, yd[i], want);
  }
  /* backward with grad = a random integer tensor of the output's shape */
  fbx_ivalue bargs[10] = {fbx_iv_tensor(gy), fbx_iv_tensor(fbx_tensor_retain(x)), fbx_iv_tensor(fbx_tensor_retain(w)),
                          b ? fbx_iv_tensor(fbx_tensor_retain(b)) : fbx_iv_none(), int_list(nsp, cc.s),
                          int_list(nsp, cc.p), int_list(nsp, cc.d)};
  fbx_ivalue gouts[3];
  if (tr) {
    bargs[7] = fbx_iv_bool(true), bargs[8] = int_list(nsp, cc.op), bargs[9] = fbx_iv_int(cc.G);
    OK(oprun("fusebox::convolution_backward", bargs, 10, gouts, NULL, NULL));
  } else {
    bargs[7] = fbx_iv_int(cc.G), bargs[8] = fbx_iv_none(), bargs[9] = fbx_iv_none();
    OK(oprun("fusebox::conv_backward", bargs, 8, gouts, NULL, NULL));
  }
  fbx_tensor *gx = gouts[0].u.t, *gw = gouts[1].u.t;
  for (int64_t i = 0; i < x->numel; i++)
    if (fbx_tensor_get_f64(gx, i) != wgx[i])
      ck_abort_msg("grad_input[%lld]: %g, want %g", (long long)i, fbx_tensor_get_f64(gx, i), wgx[i]);
  for (int64_t i = 0; i < w->numel; i++)
    if (fbx_tensor_get_f64(gw, i) != wgw[i])
      ck_abort_msg("grad_weight[%lld]: %g, want %g", (long long)i, fbx_tensor_get_f64(gw, i), wgw[i]);
  if (b) { /* grad_bias: grad summed per channel */
    for (int64_t o = 0; o < cc.O; o++) {
      double want = 0;
      for (int64_t i = 0; i < gy->numel; i++)
        if ((i / (tr ? Pi : Po)) % cc.O == o) want += gyd[i];
      ck_assert_double_eq(fbx_tensor_get_f64(gouts[2].u.t, o), want);
    }
  }
  free(wy), free(wgx), free(wgw), free(xd), free(wd), free(yd), free(gyd);
  release_all(gouts, 3);
  release_all(bargs, 10);
  release_all(outs, 1);
  release_all(args, 8);
}

/* conv2d (or conv1d when H == 0) and its gradients. */
static void check_conv(fbx_dtype dt, conv_case cc) {
  bool c1 = cc.H == 0;
  convnd_case n = {.nsp = c1 ? 1 : 2, .bias = cc.bias, .N = cc.N, .C = cc.C, .O = cc.O, .G = cc.G};
  int64_t in[2] = {cc.H, cc.W}, k[2] = {cc.kH, cc.kW}, p[2] = {cc.p, cc.pw > 0 ? cc.pw : cc.p};
  for (int i = 0; i < n.nsp; i++) {
    int j = i + (c1 ? 1 : 0);
    n.in[i] = in[j], n.k[i] = k[j], n.p[i] = p[j], n.s[i] = cc.s, n.d[i] = cc.d;
  }
  check_convnd(dt, n);
}

/* Convolutions cut into several bands of output rows (mostly the last one
 * short), over images and groups, with stride, padding and dilation, on
 * each of the forward's three ways (the shifted sums: float64's GEMMs and
 * float32's direct kernel, AVX-512's and AVX2's where the CPU has them,
 * 1 to 3 output channel blocks, 1 to 3 input channel chunks, bands ending
 * in a block of 1, 2 or 3 vectors, grid rows sharing their padding or
 * not; im2col; a 1x1 kernel read straight from the input); conv1d. */
START_TEST(test_conv_bands) {
  OK(fbx_op_table_init());
  /* N, C, H, W, O, kH, kW, stride, padding, dilation, groups, bias(, padding along W) */
  static const conv_case cases[] = {
      {1, 64, 61, 60, 8, 3, 3, 1, 1, 1, 1, true, 0},   /* shifted: 61 rows in 3 bands, 21 + 21 + 19 */
      {2, 32, 20, 25, 8, 3, 3, 1, 2, 2, 2, true, 0},   /* shifted, groups of 16 channels, dilation 2 */
      {1, 48, 40, 37, 10, 5, 3, 1, 2, 1, 1, false, 1}, /* shifted, 5x3 with padding (2, 1) */
      {2, 32, 12, 13, 9, 3, 3, 1, 3, 1, 1, true, 0},   /* shifted, padding 3 > 2: rows padded on both sides */
      {1, 16, 9, 30, 5, 1, 1, 1, 1, 1, 1, true, 0},    /* shifted 1x1 with padding: both sides too */
      {2, 24, 15, 31, 7, 3, 3, 1, 0, 1, 1, false, 0},  /* shifted without padding: rows W wide */
      {1, 80, 11, 19, 19, 3, 3, 1, 1, 1, 1, true, 0},  /* shifted, 80 channels: 2 chunks (AVX-512), 3 (AVX2) */
      {2, 16, 7, 4, 6, 3, 3, 1, 1, 1, 1, true, 0},     /* shifted, rows 5 wide: a vector spans up to 5 rows */
      {1, 64, 100, 100, 4, 3, 3, 2, 1, 1, 1, true, 0}, /* im2col (stride 2): 50 rows, 12 bands of 4 + 2 */
      {1, 8, 40, 200, 6, 3, 3, 1, 1, 1, 1, true, 0},   /* im2col (8 channels): 5 bands of 8 rows */
      {3, 64, 23, 41, 12, 3, 3, 2, 2, 2, 2, true, 0},  /* im2col, groups, stride 2, dilation 2 */
      {2, 40, 91, 200, 8, 1, 1, 1, 0, 1, 1, true, 0},  /* 1x1: the input itself, 5 bands of 16 rows + 11 */
      {4, 3, 5, 6, 4, 3, 3, 1, 1, 1, 1, false, 0},     /* one small band */
      {2, 64, 0, 3000, 6, 0, 5, 1, 2, 1, 2, true, 0},  /* conv1d, shifted */
      {2, 8, 0, 3000, 6, 0, 5, 2, 2, 1, 1, false, 0},  /* conv1d, im2col */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    check_conv(FBX_DTYPE_FLOAT32, cases[i]);
    fbx_conv_direct_avx512 = false; /* the AVX2 kernel where the CPU has AVX-512 */
    check_conv(FBX_DTYPE_FLOAT32, cases[i]);
    fbx_conv_direct_avx512 = true;
    if (i % 2 == 0) check_conv(FBX_DTYPE_FLOAT64, cases[i]);
  }
}
END_TEST

/* conv3d and the transposed convolutions, forward and backward, on the
 * same kernels: a transposed forward is col2im(weightᵀ · x) over images
 * and groups (channels spread over the pool), or with stride 1 and no
 * output_padding a forward convolution (its bands: the direct kernel with
 * enough channels); its grad_input is a forward convolution whose output
 * can be shorter than the usual size (output_padding >= stride, below the
 * dilation); conv3d's bands are rows of (depth, height). */
START_TEST(test_conv3d_and_transposed) {
  OK(fbx_op_table_init());
  static const convnd_case cases[] = {
      /* conv3d: im2col in 24 bands of 5 (depth, height) rows */
      {3, false, true, 1, 32, 8, 1, {6, 20, 30}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0}},
      /* conv3d: strides, padding, dilation, groups */
      {3, false, true, 2, 8, 6, 2, {6, 7, 9}, {3, 2, 3}, {1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {0}},
      /* conv3d 1x1x1: the input itself */
      {3, false, false, 2, 40, 8, 1, {5, 30, 31}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0}},
      /* transposed, stride 2 (DCGAN): col2im */
      {2, true, true, 2, 32, 16, 1, {20, 18}, {4, 4}, {2, 2}, {1, 1}, {1, 1}, {0, 0}},
      /* transposed, stride 1: a forward convolution of 64 channels (the direct kernel for float32) */
      {2, true, true, 2, 64, 8, 1, {40, 37}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}},
      /* transposed, output_padding 1 >= stride 1 (dilation 2): grad_input shorter than the usual size,
       * by the shifted sums over 32 channels */
      {2, true, false, 2, 8, 32, 1, {30, 20}, {3, 3}, {1, 1}, {2, 1}, {2, 2}, {1, 1}},
      /* transposed, groups, output_padding, mixed strides */
      {2, true, true, 3, 16, 12, 2, {11, 13}, {3, 2}, {2, 1}, {1, 0}, {1, 2}, {1, 1}},
      /* transposed 1-D, groups */
      {1, true, true, 2, 32, 24, 4, {300}, {5}, {3}, {2}, {2}, {2}},
      /* transposed 3-D */
      {3, true, true, 2, 6, 4, 2, {3, 4, 5}, {2, 3, 2}, {2, 1, 2}, {0, 1, 1}, {1, 1, 1}, {1, 0, 1}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    check_convnd(FBX_DTYPE_FLOAT32, cases[i]);
    if (i % 2 == 1) check_convnd(FBX_DTYPE_FLOAT64, cases[i]);
  }
}
END_TEST

/* A failed im2col buffer (allocated by each thread's share of the tasks)
 * is an out-of-memory status, no crash, no output. */
START_TEST(test_conv_alloc_failures) {
  OK(fbx_op_table_init());
  int64_t xs[4] = {2, 32, 30, 30}, ws[4] = {16, 32, 3, 3}, one[2] = {1, 1};
  fbx_tensor *x = rand_int_tensor(FBX_DTYPE_FLOAT32, 4, xs, 4), *w = rand_int_tensor(FBX_DTYPE_FLOAT32, 4, ws, 4);
  fbx_ivalue args[7] = {fbx_iv_tensor(x), fbx_iv_tensor(w), fbx_iv_none(), int_list(2, one), int_list(2, one),
                        int_list(2, one), fbx_iv_int(1)};
  int n;
  for (n = 0; n < 100; n++) {
    fbx_ivalue outs[1];
    fbx_alloc_fail_after(n);
    fbx_status *st = oprun("aten::conv2d", args, 7, outs, NULL, NULL);
    fbx_alloc_fail_after(-1);
    if (!st) {
      release_all(outs, 1);
      break;
    }
    ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM, "%d allocations: %s", n, fbx_status_message(st));
    ck_assert_int_eq(outs[0].kind, FBX_IV_NONE);
    fbx_status_free(st);
  }
  ck_assert_int_lt(n, 100);
  ck_assert_int_gt(n, 0);
  release_all(args, 7);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("ops_linalg_par");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_split_products);
  tcase_add_test(tc, test_gemm_small_kernel);
  tcase_add_test(tc, test_gemm_packed_kernel);
  tcase_add_test(tc, test_split_broadcast_matmul);
  tcase_add_test(tc, test_conv_bands);
  tcase_add_test(tc, test_conv3d_and_transposed);
  tcase_add_test(tc, test_conv_alloc_failures);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  setenv("FUSEBOX_NUM_THREADS", "3", 1); /* before the pool's first use */
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
