/* ops/rowops.h: the float32 row primitives against independent
 * double-precision computations, on rows chosen to stress their
 * accumulation: cancellation, 10^6-value rows, values near float16's max
 * (65504) and near float32's (where a float lane overflows and the row is
 * taken again in double), non-finite values, and row lengths that leave
 * every kind of tail. The error bounds asserted are the ones rowops.h
 * states; each test prints the worst error it saw as a fraction of the
 * bound. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fusebox/tensor.h>
#include "ops/rowops.h"
#include "testutil.h"

#define U 0x1p-24 /* float32 unit roundoff */

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 11;
}
/* uniform in [0, 1) */
static double unif(uint64_t *s) { return (double)lcg(s) / 9007199254740992.0; }

/* The exact sum of floats, to double precision: Neumaier's compensated sum
 * (the error of a double sum of 10^6 floats would be ~1e-10 of sum |x|,
 * far below the bounds tested, but this removes the doubt). */
static double ref_sum(const float *x, int64_t n, double *abs_sum) {
  double s = 0, c = 0, a = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = x[i], t = s + v;
    c += fabs(s) >= fabs(v) ? (s - t) + v : (v - t) + s;
    s = t;
    a += fabs(v);
  }
  *abs_sum = a;
  return s + c;
}

static double ref_sqdev(const float *x, int64_t n, double c) {
  double s = 0, k = 0;
  for (int64_t i = 0; i < n; i++) {
    double d = (double)x[i] - c, v = d * d, t = s + v;
    k += s >= v ? (s - t) + v : (v - t) + s;
    s = t;
  }
  return s + k;
}

typedef enum { ROW_RANDOM, ROW_CANCEL, ROW_HALFMAX, ROW_NEARMAX } row_kind;

static void fill(float *x, int64_t n, row_kind kind, uint64_t *s) {
  for (int64_t i = 0; i < n; i++) {
    double r = unif(s);
    switch (kind) {
    case ROW_RANDOM: x[i] = (float)r; break;
    /* pairs +a, -a' of nearly equal magnitude: the sum is tiny next to sum |x| */
    case ROW_CANCEL: x[i] = (float)((i % 2 ? -1e4 : 1e4) * (1.0 + 1e-3 * r)); break;
    case ROW_HALFMAX: x[i] = (float)((r < 0.5 ? -1 : 1) * (65504.0 - 64.0 * r)); break;
    /* one float lane of 16 such values overflows; the double total does not */
    case ROW_NEARMAX: x[i] = (float)((i % 2 ? -1 : 1) * 3.0e38 * (1.0 - 1e-3 * r)); break;
    }
  }
}

/* |sum - exact| <= 16 u sum |x| (rowops.h), on rows of every kind and on
 * lengths around the 32-lane body and the 512-value blocks. */
START_TEST(test_sum_bound) {
  static const int64_t lens[] = {1, 5, 31, 32, 33, 511, 512, 513, 1000, 4096, 4099, 1000000, 1000003};
  int64_t nmax = 1000003;
  float *x = malloc(sizeof(float) * (size_t)nmax);
  ck_assert_ptr_nonnull(x);
  uint64_t s = 11;
  double worst = 0;
  for (int kind = ROW_RANDOM; kind <= ROW_NEARMAX; kind++)
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
      int64_t n = lens[li];
      fill(x, n, (row_kind)kind, &s);
      double abs_sum, ref = ref_sum(x, n, &abs_sum), got = fbx_row_sum_f32(x, n);
      double bound = 16 * U * abs_sum;
      ck_assert_msg(isfinite(got), "kind %d n %lld: sum %g is not finite (exact %.17g)", kind, (long long)n, got, ref);
      ck_assert_msg(fabs(got - ref) <= bound, "kind %d n %lld: sum %.17g, exact %.17g, error %g > bound %g", kind,
                    (long long)n, got, ref, fabs(got - ref), bound);
      if (bound > 0 && fabs(got - ref) / bound > worst) worst = fabs(got - ref) / bound;
    }
  printf("test_rowops: worst row-sum error = %.3g of the bound 16u sum|x|\n", worst);
  free(x);
}
END_TEST

/* max and min of rows of every tail length: random values, then each
 * position in turn (body lanes and tail) holding NaN (the result is NaN),
 * +inf or -inf (the result as the plain comparison gives), and rows of
 * -inf / +inf alone; the expected value by a plain loop in double. */
static double ref_extreme(const float *x, int64_t n, bool is_max) {
  double r = is_max ? -INFINITY : INFINITY;
  for (int64_t i = 0; i < n; i++) {
    if (isnan(x[i])) return NAN;
    if (is_max ? x[i] > r : x[i] < r) r = x[i];
  }
  return r;
}
START_TEST(test_max_min_rows) {
  static const int64_t lens[] = {1, 7, 8, 15, 16, 17, 31, 33, 100, 1024, 1031};
  float x[1031];
  uint64_t s = 11;
  const float special[] = {NAN, INFINITY, -INFINITY};
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    int64_t n = lens[li];
    for (int64_t at = -1; at < n; at++)
      for (int sp = 0; sp < 3; sp++) {
        if (at < 0 && sp > 0) continue;
        for (int64_t i = 0; i < n; i++) x[i] = (float)(unif(&s) * 200.0 - 100.0);
        if (at >= 0) x[at] = special[sp];
        for (int is_max = 0; is_max < 2; is_max++) {
          double want = ref_extreme(x, n, is_max), got = is_max ? fbx_row_max_f32(x, n) : fbx_row_min_f32(x, n);
          ck_assert_msg(isnan(want) ? isnan(got) : got == want, "n %lld, special %d at %lld, %s: %g, want %g",
                        (long long)n, sp, (long long)at, is_max ? "max" : "min", got, want);
        }
      }
    for (int sign = -1; sign <= 1; sign += 2) {
      for (int64_t i = 0; i < n; i++) x[i] = sign * INFINITY;
      ck_assert(fbx_row_max_f32(x, n) == sign * INFINITY && fbx_row_min_f32(x, n) == sign * INFINITY);
    }
  }
}
END_TEST

/* Non-finite values give PyTorch's results: inf, NaN for inf - inf, NaN. */
START_TEST(test_sum_nonfinite) {
  float x[100];
  for (int i = 0; i < 100; i++) x[i] = 1.0f;
  x[40] = INFINITY;
  ck_assert(isinf(fbx_row_sum_f32(x, 100)) && fbx_row_sum_f32(x, 100) > 0);
  x[70] = -INFINITY;
  ck_assert(isnan(fbx_row_sum_f32(x, 100)));
  x[40] = 1, x[70] = NAN;
  ck_assert(isnan(fbx_row_sum_f32(x, 100)));
  /* a finite row whose float lanes overflow, with its tail: the exact sum */
  for (int i = 0; i < 100; i++) x[i] = 3e38f;
  x[99] = -3e38f;
  double e = 98.0 * (double)3e38f;
  ck_assert_msg(fabs(fbx_row_sum_f32(x, 100) - e) <= 1e-12 * e, "%.17g vs %.17g", fbx_row_sum_f32(x, 100), e);
}
END_TEST

/* sum (x - c)^2 within 24 u of the exact value (all terms are >= 0, so
 * the bound is relative), c the row's double mean: rows with a mean far
 * from zero and a small spread (where a deviation taken against a float
 * mean would lose its bits), rows of every kind, and the row holding -1e30
 * whose squares overflow float32 (taken again in double). */
START_TEST(test_sqdev_bound) {
  static const int64_t lens[] = {1, 7, 32, 33, 513, 1024, 4099, 1000000};
  int64_t nmax = 1000000;
  float *x = malloc(sizeof(float) * (size_t)nmax);
  ck_assert_ptr_nonnull(x);
  uint64_t s = 5;
  double worst = 0;
  for (int kind = -1; kind <= ROW_NEARMAX; kind++)
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
      int64_t n = lens[li];
      if (kind < 0)
        for (int64_t i = 0; i < n; i++) x[i] = (float)(12345.678 + 0.01 * unif(&s));
      else fill(x, n, (row_kind)kind, &s);
      double abs_sum, c = ref_sum(x, n, &abs_sum) / (double)n;
      double ref = ref_sqdev(x, n, c), got = fbx_row_sqdev_f32(x, n, c);
      double bound = 24 * U * ref;
      if (!isfinite(ref)) continue; /* near FLT_MAX: (3e38)^2 overflows double too */
      ck_assert_msg(fabs(got - ref) <= bound + 1e-300, "kind %d n %lld: %.17g vs exact %.17g", kind, (long long)n,
                    got, ref);
      if (bound > 0 && fabs(got - ref) / bound > worst) worst = fabs(got - ref) / bound;
    }
  printf("test_rowops: worst squared-deviation error = %.3g of the bound 24u\n", worst);
  free(x);
  /* -1e30 among zeros: float32 squares overflow; mean and rstd stay finite */
  float y[300] = {0};
  y[17] = -1e30f;
  double c = (double)y[17] / 300.0, ref = ref_sqdev(y, 300, c), got = fbx_row_sqdev_f32(y, 300, c);
  ck_assert_msg(isfinite(got) && fabs(got - ref) <= 1e-12 * ref, "%.17g vs %.17g", got, ref);
  float mean, rstd;
  fbx_row_moments_f32(y, 300, 1e-5f, &mean, &rstd);
  ck_assert(isfinite(mean) && isfinite(rstd) && rstd > 0);
}
END_TEST

/* softmax and log_softmax of rows of many lengths against double
 * precision: exp has 2 ulp but its float argument x - m carries an error
 * of u |x - m|, which exp turns into a relative one; the sum of
 * exponentials 16 float lanes of n / 16 terms each: the relative error is
 * within (n / 16 + 8 + 2 max |x - m|) u. Both paths: _i 0 the one this
 * CPU runs, 1 the portable one (the same on a CPU without AVX-512). */
/* _i: 0 the dispatching row, 1 the portable one, 2 the streamed one
 * (non-temporal stores; its bits are the dispatching row's:
 * test_softmax_stream_bits) */
static void (*const softmax_fns[3])(const float *, float *, int64_t, bool) = {
    fbx_row_softmax_f32, fbx_row_softmax_portable_f32, fbx_row_softmax_stream_f32};

START_TEST(test_softmax_rows) {
  void (*softmax)(const float *, float *, int64_t, bool) = softmax_fns[_i];
  static const int64_t lens[] = {1, 2, 15, 16, 17, 255, 256, 257, 1024, 4099};
  float x[4099], y[4099];
  uint64_t s = 3;
  for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
    int64_t n = lens[li];
    for (int64_t i = 0; i < n; i++) x[i] = (float)(40 * unif(&s) - 20);
    double m = -INFINITY, z = 0;
    for (int64_t i = 0; i < n; i++) m = fmax(m, x[i]);
    for (int64_t i = 0; i < n; i++) z += exp((double)x[i] - m);
    double spread = 0;
    for (int64_t i = 0; i < n; i++) spread = fmax(spread, m - x[i]);
    double tol = ((double)n / 16 + 8 + 2 * spread) * U;
    softmax(x, y, n, false);
    for (int64_t i = 0; i < n; i++) {
      double r = exp((double)x[i] - m) / z;
      ck_assert_msg(fabs(y[i] - r) <= tol * r + 1e-45, "softmax n %lld [%lld]: %.9g vs %.17g", (long long)n,
                    (long long)i, y[i], r);
    }
    softmax(x, y, n, true);
    for (int64_t i = 0; i < n; i++) {
      double r = ((double)x[i] - m) - log(z);
      ck_assert_msg(fabs(y[i] - r) <= tol * (fabs(r) + log(z) + fabs(m)) + 1e-6,
                    "log_softmax n %lld [%lld]: %.9g vs %.17g",
                    (long long)n, (long long)i, y[i], r);
    }
  }
}
END_TEST

/* The streamed softmax and log_softmax rows equal the ordinary ones bit
 * for bit, at every 4-byte offset from a 64-byte boundary, for rows kept on
 * the stack (n <= 4096) and longer ones; nothing past the row is written. */
START_TEST(test_softmax_stream_bits) {
  enum { MAXN = 4200 };
  static float x[MAXN], ya[MAXN + 32] __attribute__((aligned(64))), yb[MAXN + 32] __attribute__((aligned(64)));
  const int64_t ns[] = {1, 7, 16, 33, 1024, 4096, 4100};
  uint64_t st = 11;
  for (int i = 0; i < MAXN; i++) x[i] = (float)(30 * unif(&st) - 15);
  for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
    for (int off = 0; off < 16; off += 3)
      for (int log = 0; log < 2; log++) {
        int64_t n = ns[ni];
        for (int i = 0; i < MAXN + 32; i++) ya[i] = yb[i] = -7.0f;
        fbx_row_softmax_f32(x, ya + off, n, log);
        fbx_row_softmax_stream_f32(x, yb + off, n, log);
        fbx_row_stream_fence();
        ck_assert_msg(memcmp(ya, yb, sizeof ya) == 0, "n %lld, offset %d, log %d: the streamed row differs",
                      (long long)n, off, log);
        ck_assert(ya[off + n] == -7.0f && (off == 0 || ya[off - 1] == -7.0f));
      }
}
END_TEST

/* Rows with infinities and NaN: PyTorch's results (both paths). */
START_TEST(test_softmax_nonfinite) {
  void (*softmax)(const float *, float *, int64_t, bool) = softmax_fns[_i];
  float y[40];
  float a[40];
  for (int i = 0; i < 40; i++) a[i] = -INFINITY;
  a[21] = 0;
  softmax(a, y, 40, false); /* one finite value: 1 there, 0 elsewhere */
  for (int i = 0; i < 40; i++) ck_assert_msg(y[i] == (i == 21 ? 1.0f : 0.0f), "[%d] = %g", i, y[i]);
  softmax(a, y, 40, true);
  for (int i = 0; i < 40; i++) ck_assert_msg(i == 21 ? y[i] == 0 : isinf(y[i]) && y[i] < 0, "[%d] = %g", i, y[i]);
  a[21] = -INFINITY; /* all -inf: NaN, as PyTorch */
  for (int log = 0; log < 2; log++) {
    softmax(a, y, 40, log);
    for (int i = 0; i < 40; i++) ck_assert_msg(isnan(y[i]), "all -inf, log %d: [%d] = %g", log, i, y[i]);
  }
  for (int i = 0; i < 40; i++) a[i] = (float)i;
  a[3] = INFINITY; /* inf - inf reaches the sum */
  softmax(a, y, 40, false);
  for (int i = 0; i < 40; i++) ck_assert_msg(isnan(y[i]), "+inf: [%d] = %g", i, y[i]);
  /* a NaN anywhere (a full vector of the max's four chains, or the tail)
   * makes the whole row NaN, softmax and log_softmax */
  float b[200];
  float yb[200];
  const int ns[2] = {40, 200}, pos[6] = {0, 3, 17, 63, 64, 199};
  for (int ni = 0; ni < 2; ni++)
    for (int pi = 0; pi < 6; pi++)
      for (int log = 0; log < 2; log++) {
        int n = ns[ni], at = pos[pi] < n ? pos[pi] : n - 1;
        for (int i = 0; i < n; i++) b[i] = (float)(i % 13) - 6.0f;
        b[at] = NAN;
        softmax(b, yb, n, log);
        for (int i = 0; i < n; i++)
          ck_assert_msg(isnan(yb[i]), "NaN at %d of %d, log %d: [%d] = %g", at, n, log, i, yb[i]);
      }
  /* a very negative spread: exponentials that underflow to subnormals and zero */
  for (int i = 0; i < 40; i++) a[i] = -3.0f * (float)i;
  softmax(a, y, 40, false);
  double z = 0;
  for (int i = 0; i < 40; i++) z += exp(-3.0 * i);
  for (int i = 0; i < 40; i++) {
    double r = exp(-3.0 * i) / z;
    ck_assert_msg(fabs(y[i] - r) <= 4 * U * r + 1.5e-45, "[%d] %g vs %g", i, y[i], r);
  }
}
END_TEST

/* layer_norm's row statistics against double precision, on the rows of
 * test_sqdev_bound's kinds: mean within 16 u sum|x| / n, rstd within 32 u. */
START_TEST(test_moments) {
  int64_t n = 4099;
  float *x = malloc(sizeof(float) * (size_t)n);
  ck_assert_ptr_nonnull(x);
  uint64_t s = 9;
  for (int kind = -1; kind <= ROW_HALFMAX; kind++) {
    if (kind < 0)
      for (int64_t i = 0; i < n; i++) x[i] = (float)(-4321.5 + 0.125 * unif(&s));
    else fill(x, n, (row_kind)kind, &s);
    double abs_sum, md = ref_sum(x, n, &abs_sum) / (double)n;
    double rs = 1.0 / sqrt(ref_sqdev(x, n, md) / (double)n + (double)1e-5f);
    float mean, rstd;
    fbx_row_moments_f32(x, n, 1e-5f, &mean, &rstd);
    ck_assert_msg(fabs(mean - md) <= 16 * U * abs_sum / (double)n + U * fabs(md), "kind %d: mean %.9g vs %.17g", kind,
                  mean, md);
    ck_assert_msg(fabs(rstd - rs) <= 32 * U * rs, "kind %d: rstd %.9g vs %.17g", kind, rstd, rs);
  }
  free(x);
}
END_TEST

/* layer_norm's row with non-temporal stores (stream) gives the values of
 * the ordinary stores (the same operations; whether the ordinary loop's
 * last multiply-add is one FMA is the compiler's choice, so within one
 * rounding of the product (x - mean) rstd w), for rows of every length class, outputs at every 4-byte
 * offset from a 64-byte boundary, with and without weight and bias; both
 * within 8 u of a double evaluation; nothing past the row is written. */
START_TEST(test_layer_norm_stream) {
  enum { MAXN = 1100 };
  static float x[MAXN], w[MAXN], b[MAXN];
  static float ya[MAXN + 32] __attribute__((aligned(64))), yb[MAXN + 32] __attribute__((aligned(64)));
  const int64_t ns[] = {1, 5, 15, 16, 17, 31, 100, 1024, 1037};
  for (int i = 0; i < MAXN; i++) x[i] = (float)((i * 37) % 101) * 0.173f - 7.5f, w[i] = 0.5f + 0.01f * (float)(i % 50),
                                   b[i] = 0.02f * (float)(i % 31) - 0.3f;
  for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
    for (int off = 0; off < 16; off++)
      for (int wb = 0; wb < 4; wb++) {
        int64_t n = ns[ni];
        const float *wp = wb & 1 ? w : NULL, *bp = wb & 2 ? b : NULL;
        for (int i = 0; i < MAXN + 32; i++) ya[i] = yb[i] = -1234.5f;
        float m1, r1, m2, r2;
        fbx_row_layer_norm_f32(x, ya + off, n, wp, bp, 1e-5f, &m1, &r1, false);
        fbx_row_layer_norm_f32(x, yb + off, n, wp, bp, 1e-5f, &m2, &r2, true);
        ck_assert(m1 == m2 && r1 == r2);
        double s = 0, ss = 0;
        for (int64_t i = 0; i < n; i++) s += x[i];
        s /= (double)n;
        for (int64_t i = 0; i < n; i++) ss += (x[i] - s) * (x[i] - s);
        double rs = 1 / sqrt(ss / (double)n + 1e-5);
        for (int i = 0; i < MAXN + 32; i++) {
          int64_t k = i - off;
          if (k < 0 || k >= n) {
            ck_assert_msg(ya[i] == -1234.5f && yb[i] == -1234.5f, "n %lld off %d: [%d] written", (long long)n, off, i);
            continue;
          }
          double tw = fabs((x[k] - s) * rs * (wp ? wp[k] : 1)), bk = bp ? fabs(bp[k]) : 0;
          ck_assert_msg(fabs((double)ya[i] - yb[i]) <= 2 * U * (tw + bk) + 1e-38,
                        "n %lld off %d wb %d [%lld]: %a streamed, %a", (long long)n, off, wb, (long long)k, yb[i], ya[i]);
          double want = (x[k] - s) * rs * (wp ? wp[k] : 1) + (bp ? bp[k] : 0);
          ck_assert_msg(fabs(yb[i] - want) <= 8 * U * (fabs(want) + 1), "n %lld [%lld]: %g vs %g", (long long)n,
                        (long long)k, yb[i], want);
        }
      }
}
END_TEST

/* fusebox::layer_norm_backward's row (statistics taken again from x in
 * the pass that takes the gradient sums) against the two-step form
 * (fbx_row_moments_f32, then the backward with those statistics): the
 * statistics must be the forward's to the bit, which dw shows (with dx not
 * asked for, both run the same dw loop on the same mean and rstd); dx
 * within float rounding of the sums' lane order. */
START_TEST(test_layer_norm_bwd_stats) {
  static const int64_t lens[] = {1, 9, 32, 100, 1024, 1031, 4099};
  enum { NMAX = 4099 };
  static float g[NMAX], x[NMAX], w[NMAX], dx1[NMAX], dx2[NMAX], dw1[NMAX], dw2[NMAX], db1[NMAX], db2[NMAX];
  uint64_t s = 21;
  for (int kind = -1; kind <= ROW_NEARMAX; kind++)
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
      for (int wi = 0; wi < 2; wi++) {
        int64_t n = lens[li];
        if (kind < 0)
          for (int64_t i = 0; i < n; i++) x[i] = (float)(-4321.5 + 0.125 * unif(&s));
        else fill(x, n, (row_kind)kind, &s);
        if (kind == ROW_HALFMAX && n > 20) x[17] = -1e30f; /* float squares overflow: the double retake */
        for (int64_t i = 0; i < n; i++) g[i] = (float)(unif(&s) - 0.5), w[i] = (float)(0.5 + unif(&s));
        const float *wp = wi ? w : NULL;
        float mean, rstd;
        fbx_row_moments_f32(x, n, 1e-5f, &mean, &rstd);
        for (int64_t i = 0; i < n; i++) dw1[i] = dw2[i] = 0.25f, db1[i] = db2[i] = -0.5f;
        fbx_row_layer_norm_bwd_f32(g, x, NULL, n, wp, mean, rstd, dw1, db1);
        fbx_row_layer_norm_bwd_x_f32(g, x, NULL, n, wp, 1e-5f, dw2, db2);
        ck_assert(isfinite(mean) && isfinite(rstd));
        for (int64_t i = 0; i < n; i++) /* equal, or NaN in both (3e38 rows overflow the formula) */
          ck_assert_msg((dw1[i] == dw2[i] || (isnan(dw1[i]) && isnan(dw2[i]))) && db1[i] == db2[i],
                        "kind %d n %lld w %d [%lld]: dw %.9g vs %.9g", kind, (long long)n, wi, (long long)i, dw1[i],
                        dw2[i]);
        fbx_row_layer_norm_bwd_f32(g, x, dx1, n, wp, mean, rstd, dw1, db1);
        fbx_row_layer_norm_bwd_x_f32(g, x, dx2, n, wp, 1e-5f, dw2, db2);
        double scale = 0; /* NaN (3e38 - mean overflows in the formula) must be NaN in both */
        for (int64_t i = 0; i < n; i++) scale = fmax(scale, fabs(dx1[i]));
        for (int64_t i = 0; i < n; i++)
          ck_assert_msg((isnan(dx1[i]) && isnan(dx2[i])) || fabs(dx1[i] - dx2[i]) <= 64 * U * scale + 1e-30,
                        "kind %d n %lld w %d [%lld]: dx %.9g vs %.9g", kind, (long long)n, wi, (long long)i, dx1[i],
                        dx2[i]);
      }
}
END_TEST

/* layer_norm forward + backward through the CLI with 1, 2 and 3 threads:
 * every gradient (the weight and bias ones are float32 sums over rows,
 * taken in fixed blocks of rows) and the output are the same bits. */
START_TEST(test_layer_norm_grads_thread_independent) {
  char dir[] = "/tmp/fbx_rowops_XXXXXX";
  ck_assert(mkdtemp(dir));
  int64_t xs[2] = {301, 1024}, ps[1] = {1024};
  fbx_tensor *x = NULL, *w = NULL, *b = NULL;
  ck_assert(!fbx_tensor_empty(&x, FBX_DTYPE_FLOAT32, 2, xs));
  ck_assert(!fbx_tensor_empty(&w, FBX_DTYPE_FLOAT32, 1, ps));
  ck_assert(!fbx_tensor_empty(&b, FBX_DTYPE_FLOAT32, 1, ps));
  uint64_t s = 77;
  for (int64_t i = 0; i < x->numel; i++) ((float *)x->data)[i] = (float)(8 * unif(&s) - 3);
  for (int64_t i = 0; i < 1024; i++) ((float *)w->data)[i] = (float)unif(&s), ((float *)b->data)[i] = (float)unif(&s);
  char path[512], cmd[2048];
  const char *names[3] = {"x", "w", "b"};
  fbx_tensor *ts[3] = {x, w, b};
  for (int k = 0; k < 3; k++) {
    snprintf(path, sizeof path, "%s/%s.npy", dir, names[k]);
    ck_assert(!fbx_npy_write_file(path, ts[k]));
    fbx_tensor_release(ts[k]);
  }
  static const char *outs[] = {"out0.npy", "grad_x.1.npy", "grad_weight.1.npy", "grad_bias.1.npy"};
  char *first[4] = {0};
  size_t first_len[4] = {0};
  for (int t = 1; t <= 3; t++) {
    snprintf(cmd, sizeof cmd,
             "FUSEBOX_NUM_THREADS=%d %s run %s --input x.1=%s/x.npy --input weight.1=%s/w.npy "
             "--input bias.1=%s/b.npy --backward --out %s/t%d",
             t, FBX_CLI, tu_src_path("bench/graphs/layer_norm.ir"), dir, dir, dir, dir, t);
    char *out = NULL;
    int rc = tu_run(cmd, &out);
    ck_assert_msg(rc == 0, "%s\n%s", cmd, out ? out : "");
    free(out);
    for (int k = 0; k < 4; k++) {
      snprintf(path, sizeof path, "%s/t%d/%s", dir, t, outs[k]);
      size_t len = 0;
      char *data = tu_read_file(path, &len);
      ck_assert_msg(data, "%s missing", path);
      if (t == 1) {
        first[k] = data, first_len[k] = len;
        continue;
      }
      ck_assert_msg(len == first_len[k] && !memcmp(data, first[k], len), "%s: %d threads differ from 1", outs[k], t);
      free(data);
      unlink(path);
    }
    snprintf(path, sizeof path, "%s/t%d", dir, t);
    if (t > 1) rmdir(path);
  }
  for (int k = 0; k < 4; k++) {
    snprintf(path, sizeof path, "%s/t1/%s", dir, outs[k]);
    unlink(path);
    free(first[k]);
  }
  snprintf(path, sizeof path, "%s/t1", dir);
  rmdir(path);
  for (int k = 0; k < 3; k++) {
    snprintf(path, sizeof path, "%s/%s.npy", dir, names[k]);
    unlink(path);
  }
  rmdir(dir);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("rowops");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_sum_bound);
  tcase_add_test(tc, test_sum_nonfinite);
  tcase_add_test(tc, test_max_min_rows);
  tcase_add_test(tc, test_sqdev_bound);
  tcase_add_loop_test(tc, test_softmax_rows, 0, 3);
  tcase_add_loop_test(tc, test_softmax_nonfinite, 0, 3);
  tcase_add_test(tc, test_softmax_stream_bits);
  tcase_add_test(tc, test_layer_norm_stream);
  tcase_add_test(tc, test_moments);
  tcase_add_test(tc, test_layer_norm_bwd_stats);
  tcase_add_test(tc, test_layer_norm_grads_thread_independent);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *r = srunner_create(suite());
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
