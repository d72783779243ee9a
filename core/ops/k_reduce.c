/* Reduction kernels (ops/list_reduce.h): sum mean prod amax amin max min
 * argmax argmin var std logsumexp all any cumsum (and the other scans,
 * rows of list_extra.h: cumprod, cummax, cummin, logcumsumexp).
 *
 * Every reduction is planned onto a contiguous [A, R, B] block (reduce.h)
 * and run by one driver with per-op fold functions that see chunks of up to
 * FBX_RED_CHUNK values already converted to double (floating inputs) or
 * int64 (integral and bool inputs):
 *   - B == 1 ("rows"): each output folds a contiguous row of R values; rows
 *     are spread over threads, and when there are few long rows each row is
 *     cut into fixed segments of SEG values whose states merge in order, so
 *     results do not depend on the thread count;
 *   - B > 1 ("tiles"): TILE neighbouring outputs fold column-wise, reading
 *     each input row of the tile contiguously.
 * Floating sums, means, variances and logsumexp accumulate in double (more
 * accurate than PyTorch's float cascade sum, never less), integral ones in
 * int64 with wraparound. Contiguous float32 rows skip the double chunks:
 * sums, max/min (without indices), var/std's second pass and logsumexp run
 * on the vectorized primitives of ops/rowops.h (fast32 in red_ops).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "ops/reduce.h"
#include "ops/rowops.h"
#include "tensor/half.h"

#define CH FBX_RED_CHUNK
#define TILE 256
#define SEG ((int64_t)1 << 16)
#define MIN_TILE_B 32

static inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- shared helpers (reduce.h) ------------------------------------------------------ */

void fbx_red_shape_str(char *buf, size_t n, int ndim, const int64_t *sizes) {
  size_t len = (size_t)snprintf(buf, n, "[");
  for (int i = 0; i < ndim && len < n; i++)
    len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? ", " : "", (long long)sizes[i]);
  if (len < n) snprintf(buf + len, n - len, "]");
}

fbx_status *fbx_red_wrap_dim(const fbx_kctx *ctx, int64_t *out, int64_t dim, const fbx_tensor *t) {
  int64_t n = t->ndim > 0 ? t->ndim : 1;
  if (dim < -n || dim >= n) {
    char s[256];
    fbx_red_shape_str(s, sizeof s, t->ndim, t->sizes);
    return fbx_kernel_error(ctx, "dim %lld out of range for a tensor of shape %s (expected %lld..%lld)",
                            (long long)dim, s, (long long)-n, (long long)(n - 1));
  }
  *out = dim < 0 ? dim + n : dim;
  return NULL;
}

fbx_status *fbx_red_dim_mask(const fbx_kctx *ctx, bool *mask, const fbx_tensor *t, int argi,
                             const fbx_ivalue *arg, bool empty_is_all) {
  for (int i = 0; i < FBX_MAX_DIMS; i++) mask[i] = false;
  if (arg->kind == FBX_IV_NONE) {
    for (int i = 0; i < t->ndim; i++) mask[i] = true;
    return NULL;
  }
  int64_t dims[FBX_MAX_DIMS];
  fbx_status *st = NULL;
  int n = fbx_arg_int_list(ctx->op, argi, arg, dims, FBX_MAX_DIMS, &st);
  if (n < 0) return st;
  if (n == 0 && empty_is_all) {
    for (int i = 0; i < t->ndim; i++) mask[i] = true;
    return NULL;
  }
  bool seen[FBX_MAX_DIMS] = {false};
  for (int i = 0; i < n; i++) {
    int64_t d;
    FBX_TRY(fbx_red_wrap_dim(ctx, &d, dims[i], t));
    if (seen[d]) {
      char s[256];
      fbx_red_shape_str(s, sizeof s, t->ndim, t->sizes);
      return fbx_kernel_error(ctx, "dim %lld appears multiple times in the list of dims (tensor of shape %s)",
                              (long long)d, s);
    }
    seen[d] = true;
    if (t->ndim > 0) mask[d] = true;
  }
  return NULL;
}

fbx_status *fbx_red_dtype_arg(const fbx_kctx *ctx, const fbx_ivalue *v, fbx_dtype *out) {
  if (v->kind == FBX_IV_NONE) {
    *out = FBX_DTYPE_UNDEFINED;
    return NULL;
  }
  if (v->kind != FBX_IV_INT || !fbx_dtype_valid((int)v->u.i))
    return fbx_kernel_error(ctx, "dtype argument must be a ScalarType, got %s",
                            v->kind == FBX_IV_INT ? "an unknown dtype code" : fbx_iv_kind_name(v->kind));
  *out = (fbx_dtype)v->u.i;
  return NULL;
}

#define LOAD_LOOP(T, EXPR)                                  \
  do {                                                      \
    const T *s_ = (const T *)base + idx;                    \
    for (int64_t j = 0; j < n; j++) dst[j] = (EXPR);        \
  } while (0)

void fbx_red_load_f64(double *dst, const void *base, fbx_dtype dt, int64_t idx, int64_t n) {
  switch (dt) {
    case FBX_DTYPE_UINT8: LOAD_LOOP(uint8_t, s_[j]); break;
    case FBX_DTYPE_INT8: LOAD_LOOP(int8_t, s_[j]); break;
    case FBX_DTYPE_INT16: LOAD_LOOP(int16_t, s_[j]); break;
    case FBX_DTYPE_INT32: LOAD_LOOP(int32_t, s_[j]); break;
    case FBX_DTYPE_INT64: LOAD_LOOP(int64_t, (double)s_[j]); break;
    case FBX_DTYPE_FLOAT16: LOAD_LOOP(uint16_t, fbx_half_to_float(s_[j])); break;
    case FBX_DTYPE_FLOAT32: LOAD_LOOP(float, s_[j]); break;
    case FBX_DTYPE_FLOAT64: LOAD_LOOP(double, s_[j]); break;
    case FBX_DTYPE_BOOL: LOAD_LOOP(uint8_t, s_[j] != 0); break;
    case FBX_DTYPE_BFLOAT16: LOAD_LOOP(uint16_t, fbx_bf16_to_float(s_[j])); break;
    default: break;
  }
}

static inline int64_t f64_to_i64(double v) {
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) return INT64_MIN;
  return (int64_t)v;
}

void fbx_red_load_i64(int64_t *dst, const void *base, fbx_dtype dt, int64_t idx, int64_t n) {
  switch (dt) {
    case FBX_DTYPE_UINT8: LOAD_LOOP(uint8_t, s_[j]); break;
    case FBX_DTYPE_INT8: LOAD_LOOP(int8_t, s_[j]); break;
    case FBX_DTYPE_INT16: LOAD_LOOP(int16_t, s_[j]); break;
    case FBX_DTYPE_INT32: LOAD_LOOP(int32_t, s_[j]); break;
    case FBX_DTYPE_INT64: LOAD_LOOP(int64_t, s_[j]); break;
    case FBX_DTYPE_FLOAT16: LOAD_LOOP(uint16_t, f64_to_i64(fbx_half_to_float(s_[j]))); break;
    case FBX_DTYPE_FLOAT32: LOAD_LOOP(float, f64_to_i64(s_[j])); break;
    case FBX_DTYPE_FLOAT64: LOAD_LOOP(double, f64_to_i64(s_[j])); break;
    case FBX_DTYPE_BOOL: LOAD_LOOP(uint8_t, s_[j] != 0); break;
    case FBX_DTYPE_BFLOAT16: LOAD_LOOP(uint16_t, f64_to_i64(fbx_bf16_to_float(s_[j]))); break;
    default: break;
  }
}

#define STORE_LOOP(T, EXPR)                                 \
  do {                                                      \
    T *d_ = (T *)base + idx;                                \
    for (int64_t j = 0; j < n; j++) d_[j] = (EXPR);         \
  } while (0)

void fbx_red_store_f64(void *base, fbx_dtype dt, int64_t idx, const double *src, int64_t n) {
  switch (dt) {
    case FBX_DTYPE_UINT8: STORE_LOOP(uint8_t, (uint8_t)f64_to_i64(src[j])); break;
    case FBX_DTYPE_INT8: STORE_LOOP(int8_t, (int8_t)f64_to_i64(src[j])); break;
    case FBX_DTYPE_INT16: STORE_LOOP(int16_t, (int16_t)f64_to_i64(src[j])); break;
    case FBX_DTYPE_INT32: STORE_LOOP(int32_t, (int32_t)f64_to_i64(src[j])); break;
    case FBX_DTYPE_INT64: STORE_LOOP(int64_t, f64_to_i64(src[j])); break;
    case FBX_DTYPE_FLOAT16: STORE_LOOP(uint16_t, fbx_float_to_half((float)src[j])); break;
    case FBX_DTYPE_FLOAT32: STORE_LOOP(float, (float)src[j]); break;
    case FBX_DTYPE_FLOAT64: STORE_LOOP(double, src[j]); break;
    case FBX_DTYPE_BOOL: STORE_LOOP(uint8_t, src[j] != 0); break;
    case FBX_DTYPE_BFLOAT16: STORE_LOOP(uint16_t, fbx_float_to_bf16((float)src[j])); break;
    default: break;
  }
}

void fbx_red_store_i64(void *base, fbx_dtype dt, int64_t idx, const int64_t *src, int64_t n) {
  switch (dt) {
    case FBX_DTYPE_UINT8: STORE_LOOP(uint8_t, (uint8_t)src[j]); break;
    case FBX_DTYPE_INT8: STORE_LOOP(int8_t, (int8_t)src[j]); break;
    case FBX_DTYPE_INT16: STORE_LOOP(int16_t, (int16_t)src[j]); break;
    case FBX_DTYPE_INT32: STORE_LOOP(int32_t, (int32_t)src[j]); break;
    case FBX_DTYPE_INT64: STORE_LOOP(int64_t, src[j]); break;
    case FBX_DTYPE_FLOAT16: STORE_LOOP(uint16_t, fbx_float_to_half((float)src[j])); break;
    case FBX_DTYPE_FLOAT32: STORE_LOOP(float, (float)src[j]); break;
    case FBX_DTYPE_FLOAT64: STORE_LOOP(double, (double)src[j]); break;
    case FBX_DTYPE_BOOL: STORE_LOOP(uint8_t, src[j] != 0); break;
    case FBX_DTYPE_BFLOAT16: STORE_LOOP(uint16_t, fbx_float_to_bf16((float)src[j])); break;
    default: break;
  }
}

fbx_status *fbx_red_load_all_f64(double **out, fbx_tensor *t) {
  fbx_tensor *c = NULL;
  *out = fbx_malloc(sizeof(double) * (size_t)(t->numel ? t->numel : 1));
  if (!*out) return fbx_status_nomem();
  fbx_status *st = fbx_tensor_contiguous(&c, t);
  if (!st)
    for (int64_t i = 0; i < t->numel; i += FBX_RED_CHUNK)
      fbx_red_load_f64(*out + i, c->data, c->dtype, i, t->numel - i < FBX_RED_CHUNK ? t->numel - i : FBX_RED_CHUNK);
  fbx_tensor_release(c);
  if (st) {
    fbx_free(*out);
    *out = NULL;
  }
  return st;
}

fbx_status *fbx_red_store_all_f64(fbx_tensor **out, fbx_dtype dt, int ndim, const int64_t *sizes, const double *v) {
  FBX_TRY(fbx_tensor_empty(out, dt, ndim, sizes));
  int64_t n = (*out)->numel;
  for (int64_t i = 0; i < n; i += FBX_RED_CHUNK)
    fbx_red_store_f64((*out)->data, dt, i, v + i, n - i < FBX_RED_CHUNK ? n - i : FBX_RED_CHUNK);
  return NULL;
}

fbx_status *fbx_red_plan_make(const fbx_kctx *ctx, fbx_red_plan *p, fbx_tensor *t, const bool *mask,
                              bool keepdim, fbx_dtype cast_to, int64_t min_b) {
  memset(p, 0, sizeof *p);
  for (int i = 0; i < t->ndim; i++) {
    if (!mask[i]) p->out_sizes[p->out_ndim++] = t->sizes[i];
    else if (keepdim) p->out_sizes[p->out_ndim++] = 1;
  }
  /* the reduced dims that matter (size != 1) must form one block */
  int first = -1, last = -1;
  for (int i = 0; i < t->ndim; i++)
    if (mask[i] && t->sizes[i] != 1) {
      if (first < 0) first = i;
      last = i;
    }
  bool block = true;
  for (int i = first; first >= 0 && i <= last; i++)
    if (!mask[i] && t->sizes[i] != 1) block = false;
  int64_t B = 1;
  for (int i = last + 1; first >= 0 && i < t->ndim; i++) B *= t->sizes[i];
  if (first >= 0 && B > 1 && B < min_b) block = false;
  fbx_tensor *src = t, *perm = NULL;
  if (!block) {
    int64_t sz[FBX_MAX_DIMS], sd[FBX_MAX_DIMS];
    int k = 0;
    for (int pass = 0; pass < 2; pass++)
      for (int i = 0; i < t->ndim; i++)
        if (mask[i] == (pass == 1)) {
          sz[k] = t->sizes[i];
          sd[k++] = t->strides[i];
        }
    FBX_TRY(fbx_tensor_view(&perm, t, t->ndim, sz, sd, t->offset));
    src = perm;
  }
  fbx_status *st;
  if (cast_to != FBX_DTYPE_UNDEFINED && cast_to != src->dtype)
    st = fbx_tensor_clone_as(&p->x, src, cast_to);
  else
    st = fbx_tensor_contiguous(&p->x, src);
  fbx_tensor_release(perm);
  if (st) return st;
  p->A = p->R = p->B = 1;
  for (int i = 0; i < t->ndim; i++) {
    bool red = mask[i];
    int pos; /* 0: A, 1: R, 2: B */
    if (!block) pos = red ? 1 : 0;
    else if (first < 0) pos = 0;
    else pos = i < first ? 0 : i <= last ? (red ? 1 : 1) : 2;
    /* a kept size-1 dim inside the block is harmless in R */
    int64_t s = t->sizes[i];
    if (pos == 0) p->A *= s;
    else if (pos == 1) p->R *= s;
    else p->B *= s;
  }
  return NULL;
}

void fbx_red_plan_free(fbx_red_plan *p) {
  fbx_tensor_release(p->x);
  p->x = NULL;
}

/* ---- the driver ------------------------------------------------------------------------ */

/* f: float accumulator (sum, product, extreme value, mean); g: second float
 * accumulator (squared deviations, sum of exps); i: integer accumulator; k:
 * index of the extreme value (-1 before the first value). */
typedef struct racc {
  double f, g;
  int64_t i, k;
} racc;

typedef struct red_ops red_ops;
typedef struct red_job red_job;

struct red_ops {
  bool plain_sum; /* the first pass only adds the values into f (fast paths for float32/float64) */
  bool ints;     /* inputs arrive as int64 (else double) */
  bool out_int;  /* the value result is fin's oi (else of) */
  int passes;    /* 1, or 2 with mid between */
  void (*init)(racc *a);
  void (*row)(const red_job *j, racc *a, const void *buf, int64_t n, int64_t r0, int pass);
  void (*col)(const red_job *j, racc *a, const void *buf, int64_t n, int64_t r, int pass);
  void (*merge)(racc *a, const racc *b, int pass); /* b follows a in reduction order */
  void (*mid)(const red_job *j, racc *a);
  void (*fin)(const red_job *j, const racc *a, double *of, int64_t *oi, int64_t *ok);
  int fast32; /* FAST_*: which float32 row primitive (ops/rowops.h) folds contiguous rows */
};

/* Float32 rows folded by the vectorized primitives of ops/rowops.h instead
 * of double chunks: max/min without an index output, var/std's squared
 * deviations, logsumexp's max and sum of exponentials. */
enum { FAST_NONE, FAST_MAX, FAST_MIN, FAST_VAR, FAST_LSE };

struct red_job {
  const red_ops *ops;
  const void *x;
  fbx_dtype dt;
  int64_t A, R, B;
  double param; /* var/std: correction */
  racc *st;     /* split rows: A * S states */
  int64_t S;
  int pass;
  fbx_tensor *ov, *oi; /* value and index outputs (either may be NULL), [A * B] */
};

typedef union rbuf {
  double f[CH];
  int64_t i[CH];
} rbuf;

static void load_chunk(const red_job *j, rbuf *b, int64_t idx, int64_t n) {
  if (j->ops->ints) fbx_red_load_i64(b->i, j->x, j->dt, idx, n);
  else fbx_red_load_f64(b->f, j->x, j->dt, idx, n);
}

/* Store results of n consecutive outputs starting at output index o. */
static void store_out(const red_job *j, int64_t o, int64_t n, const double *of, const int64_t *oi,
                      const int64_t *ok) {
  if (j->ov) {
    if (j->ops->out_int) fbx_red_store_i64(j->ov->data, j->ov->dtype, o, oi, n);
    else fbx_red_store_f64(j->ov->data, j->ov->dtype, o, of, n);
  }
  if (j->oi) fbx_red_store_i64(j->oi->data, FBX_DTYPE_INT64, o, ok, n);
}

/* Sums of contiguous float32/float64 in double, eight independent
 * accumulators (the compiler vectorizes the unrolled body). */
#define DIRECT_SUM(NAME, T)                                                    \
  static double NAME(const T *x, int64_t n) {                                  \
    double s[8] = {0, 0, 0, 0, 0, 0, 0, 0}, t = 0;                             \
    int64_t k = 0;                                                             \
    for (; k + 8 <= n; k += 8)                                                 \
      for (int u = 0; u < 8; u++) s[u] += (double)x[k + u];                    \
    for (; k < n; k++) t += (double)x[k];                                      \
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + t; \
  }
DIRECT_SUM(direct_sum_f64, double)

static void max_f1(racc *a, double v, int64_t r);
static void min_f1(racc *a, double v, int64_t r);

static void fold_row(const red_job *j, racc *a, int64_t row, int64_t r0, int64_t r1, int pass) {
  if (pass == 0 && j->ops->plain_sum && (j->dt == FBX_DTYPE_FLOAT32 || j->dt == FBX_DTYPE_FLOAT64)) {
    /* blocks of 4096 keep the error growth of each partial small */
    for (int64_t r = r0; r < r1; r += 4096) {
      int64_t n = min64(4096, r1 - r), at = row * j->R + r;
      a->f += j->dt == FBX_DTYPE_FLOAT32 ? fbx_row_sum_f32((const float *)j->x + at, n)
                                         : direct_sum_f64((const double *)j->x + at, n);
    }
    return;
  }
  int fast = j->ops->fast32;
  if (fast && j->dt == FBX_DTYPE_FLOAT32 && !j->oi && r1 > r0) {
    const float *x = (const float *)j->x + row * j->R + r0;
    int64_t n = r1 - r0;
    if (pass == 0 && (fast == FAST_MAX || fast == FAST_LSE)) {
      max_f1(a, fbx_row_max_f32(x, n), r0);
      return;
    }
    if (pass == 0 && fast == FAST_MIN) {
      min_f1(a, fbx_row_min_f32(x, n), r0);
      return;
    }
    if (pass == 1 && fast == FAST_VAR) {
      a->g += fbx_row_sqdev_f32(x, n, a->f);
      return;
    }
    if (pass == 1 && fast == FAST_LSE) {
      a->g += fbx_row_sumexp_f32(x, n, (float)a->f);
      return;
    }
  }
  rbuf b;
  for (int64_t r = r0; r < r1; r += CH) {
    int64_t n = min64(CH, r1 - r);
    load_chunk(j, &b, row * j->R + r, n);
    j->ops->row(j, a, &b, n, r, pass);
  }
}

/* Whole rows [begin, end), each reduced completely. */
static void rows_body(void *c, int64_t begin, int64_t end) {
  const red_job *j = c;
  const red_ops *ops = j->ops;
  double of[CH];
  int64_t oi[CH], ok[CH];
  for (int64_t a0 = begin; a0 < end; a0 += CH) {
    int64_t n = min64(CH, end - a0);
    for (int64_t t = 0; t < n; t++) {
      racc acc;
      ops->init(&acc);
      fold_row(j, &acc, a0 + t, 0, j->R, 0);
      if (ops->passes == 2) {
        ops->mid(j, &acc);
        fold_row(j, &acc, a0 + t, 0, j->R, 1);
      }
      ops->fin(j, &acc, &of[t], &oi[t], &ok[t]);
    }
    store_out(j, a0, n, of, oi, ok);
  }
}

/* Segments (a, s) of long rows, into j->st. */
static void segs_body(void *c, int64_t begin, int64_t end) {
  const red_job *j = c;
  for (int64_t t = begin; t < end; t++) {
    int64_t a = t / j->S, s = t % j->S;
    fold_row(j, &j->st[t], a, s * SEG, min64((s + 1) * SEG, j->R), j->pass);
  }
}

/* Tiles (a, b0 .. b0 + TILE) of outputs folding column-wise. */
static void tiles_body(void *c, int64_t begin, int64_t end) {
  const red_job *j = c;
  const red_ops *ops = j->ops;
  int64_t ntiles = (j->B + TILE - 1) / TILE;
  racc acc[TILE];
  double of[TILE];
  int64_t oi[TILE], ok[TILE];
  rbuf b;
  for (int64_t t = begin; t < end; t++) {
    int64_t a = t / ntiles, b0 = (t % ntiles) * TILE, n = min64(TILE, j->B - b0);
    for (int64_t k = 0; k < n; k++) ops->init(&acc[k]);
    for (int pass = 0; pass < ops->passes; pass++) {
      if (pass == 1)
        for (int64_t k = 0; k < n; k++) ops->mid(j, &acc[k]);
      for (int64_t r = 0; r < j->R; r++) {
        load_chunk(j, &b, (a * j->R + r) * j->B + b0, n);
        ops->col(j, acc, &b, n, r, pass);
      }
    }
    for (int64_t k = 0; k < n; k++) ops->fin(j, &acc[k], &of[k], &oi[k], &ok[k]);
    store_out(j, a * j->B + b0, n, of, oi, ok);
  }
}

/* Column sums of float32/float64 (plain-sum ops, B > 1): each task owns
 * a wide strip of columns and streams whole row pieces of it into a dense
 * double accumulator, so memory is read in long runs. */
#define STRIP 4096
typedef struct colsum_job {
  const red_job *j;
  int64_t width, nstrips;
} colsum_job;

static void colsum_body(void *c, int64_t begin, int64_t end) {
  const colsum_job *cj = c;
  const red_job *j = cj->j;
  double s[STRIP];
  racc acc[FBX_RED_CHUNK];
  double of[FBX_RED_CHUNK];
  int64_t oi[FBX_RED_CHUNK], ok[FBX_RED_CHUNK];
  for (int64_t t = begin; t < end; t++) {
    int64_t a = t / cj->nstrips, b0 = (t % cj->nstrips) * cj->width, n = min64(cj->width, j->B - b0);
    for (int64_t k = 0; k < n; k++) s[k] = 0;
    for (int64_t r = 0; r < j->R; r++) {
      int64_t at = (a * j->R + r) * j->B + b0;
      if (j->dt == FBX_DTYPE_FLOAT32) {
        const float *x = (const float *)j->x + at;
        for (int64_t k = 0; k < n; k++) s[k] += (double)x[k];
      } else {
        const double *x = (const double *)j->x + at;
        for (int64_t k = 0; k < n; k++) s[k] += x[k];
      }
    }
    for (int64_t k0 = 0; k0 < n; k0 += FBX_RED_CHUNK) {
      int64_t m = min64(FBX_RED_CHUNK, n - k0);
      for (int64_t k = 0; k < m; k++) {
        j->ops->init(&acc[k]);
        acc[k].f = s[k0 + k];
        j->ops->fin(j, &acc[k], &of[k], &oi[k], &ok[k]);
      }
      store_out(j, a * j->B + b0 + k0, m, of, oi, ok);
    }
  }
}

static fbx_status *red_run(red_job *j) {
  int64_t nthreads = fbx_parallel_threads();
  if (j->A * j->B == 0) return NULL;
  if (j->B > 1 && j->ops->plain_sum && j->ops->passes == 1 &&
      (j->dt == FBX_DTYPE_FLOAT32 || j->dt == FBX_DTYPE_FLOAT64)) {
    colsum_job cj = {.j = j, .width = min64(STRIP, (j->B + nthreads - 1) / nthreads)};
    if (cj.width < TILE) cj.width = min64(TILE, j->B);
    cj.nstrips = (j->B + cj.width - 1) / cj.width;
    int64_t per = j->R * cj.width;
    fbx_parallel_for(j->A * cj.nstrips, per >= 32768 ? 1 : 32768 / (per + 1) + 1, colsum_body, &cj);
    return NULL;
  }
  if (j->B > 1) {
    int64_t ntiles = (j->B + TILE - 1) / TILE;
    int64_t per = j->R * min64(j->B, TILE);
    fbx_parallel_for(j->A * ntiles, per >= 32768 ? 1 : 32768 / (per + 1) + 1, tiles_body, j);
    return NULL;
  }
  if (j->R < 2 * SEG || j->A >= 4 * nthreads) {
    int64_t grain = j->R >= 32768 ? 1 : 32768 / (j->R + 1) + 1;
    fbx_parallel_for(j->A, grain, rows_body, j);
    return NULL;
  }
  /* few long rows: fixed segments, merged in order */
  j->S = (j->R + SEG - 1) / SEG;
  j->st = fbx_malloc(sizeof *j->st * (size_t)(j->A * j->S));
  if (!j->st) return fbx_status_nomem();
  const red_ops *ops = j->ops;
  for (int64_t a = 0; a < j->A; a++) {
    racc acc;
    ops->init(&acc);
    for (int64_t s = 0; s < j->S; s++) j->st[a * j->S + s] = acc;
  }
  for (j->pass = 0; j->pass < ops->passes; j->pass++) {
    fbx_parallel_for(j->A * j->S, 1, segs_body, j);
    for (int64_t a = 0; a < j->A; a++) {
      racc *row = &j->st[a * j->S];
      racc acc = row[0];
      for (int64_t s = 1; s < j->S; s++) ops->merge(&acc, &row[s], j->pass);
      if (j->pass + 1 < ops->passes) {
        ops->mid(j, &acc);
        for (int64_t s = 0; s < j->S; s++) row[s] = acc;
        /* the first segment carries the merged state; the others restart from it
         * with empty second-pass accumulators, which mid already cleared */
      } else {
        double of;
        int64_t oi, ok;
        ops->fin(j, &acc, &of, &oi, &ok);
        store_out(j, a, 1, &of, &oi, &ok);
      }
    }
  }
  fbx_free(j->st);
  j->st = NULL;
  return NULL;
}

/* ---- fold functions ------------------------------------------------------------------ */

static void init_zero(racc *a) { memset(a, 0, sizeof *a), a->k = -1; }
static void init_one(racc *a) { init_zero(a), a->f = 1, a->i = 1; }

static double sum8(const double *x, int64_t n) {
  double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int u = 0; u < 8; u++) s[u] += x[j + u];
  double t = 0;
  for (; j < n; j++) t += x[j];
  return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + t;
}

/* sum, mean */
static void sum_row_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  a->f += sum8(((const rbuf *)b)->f, n);
}
static void sum_col_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const double *x = ((const rbuf *)b)->f;
  for (int64_t k = 0; k < n; k++) a[k].f += x[k];
}
static void sum_row_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  const int64_t *x = ((const rbuf *)b)->i;
  uint64_t s = (uint64_t)a->i;
  for (int64_t k = 0; k < n; k++) s += (uint64_t)x[k];
  a->i = (int64_t)s;
}
static void sum_col_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const int64_t *x = ((const rbuf *)b)->i;
  for (int64_t k = 0; k < n; k++) a[k].i = (int64_t)((uint64_t)a[k].i + (uint64_t)x[k]);
}
static void sum_merge(racc *a, const racc *b, int p) {
  a->f += b->f;
  a->i = (int64_t)((uint64_t)a->i + (uint64_t)b->i);
}
static void sum_fin(const red_job *j, const racc *a, double *of, int64_t *oi, int64_t *ok) {
  *of = a->f;
  *oi = a->i;
}
/* A float32 (or half) mean overflows when its sum does, as PyTorch's,
 * which sums in float32: mean([3e38, 3e38]) is inf there, not 3e38 (fuzz
 * seed 1200904: tensorexpr gave PyTorch's inf). */
static void mean_fin(const red_job *j, const racc *a, double *of, int64_t *oi, int64_t *ok) {
  float s32 = (float)a->f;
  *of = j->dt != FBX_DTYPE_FLOAT64 && isinf(s32) && !isinf(a->f) ? (double)s32 : a->f / (double)j->R;
}

static const red_ops sum_f = {true, false, false, 1, init_zero, sum_row_f, sum_col_f, sum_merge, NULL, sum_fin, FAST_NONE};
static const red_ops sum_i = {false, true, true, 1, init_zero, sum_row_i, sum_col_i, sum_merge, NULL, sum_fin, FAST_NONE};
static const red_ops mean_f = {true, false, false, 1, init_zero, sum_row_f, sum_col_f, sum_merge, NULL, mean_fin, FAST_NONE};

/* prod */
static void prod_row_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  const double *x = ((const rbuf *)b)->f;
  for (int64_t k = 0; k < n; k++) a->f *= x[k];
}
static void prod_col_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const double *x = ((const rbuf *)b)->f;
  for (int64_t k = 0; k < n; k++) a[k].f *= x[k];
}
static void prod_row_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  const int64_t *x = ((const rbuf *)b)->i;
  uint64_t s = (uint64_t)a->i;
  for (int64_t k = 0; k < n; k++) s *= (uint64_t)x[k];
  a->i = (int64_t)s;
}
static void prod_col_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const int64_t *x = ((const rbuf *)b)->i;
  for (int64_t k = 0; k < n; k++) a[k].i = (int64_t)((uint64_t)a[k].i * (uint64_t)x[k]);
}
static void prod_merge(racc *a, const racc *b, int p) {
  a->f *= b->f;
  a->i = (int64_t)((uint64_t)a->i * (uint64_t)b->i);
}
static const red_ops prod_f = {false, false, false, 1, init_one, prod_row_f, prod_col_f, prod_merge, NULL, sum_fin, FAST_NONE};
static const red_ops prod_i = {false, true, true, 1, init_one, prod_row_i, prod_col_i, prod_merge, NULL, sum_fin, FAST_NONE};

/* max / min with the index of the first extreme value; NaN wins (first NaN). */
#define EXT_FUNCS(NAME, CMP, FAST)                                                             \
  static void NAME##_f1(racc *a, double v, int64_t r) {                                        \
    if (a->k < 0 || (a->f == a->f && (v != v || v CMP a->f))) a->f = v, a->k = r;             \
  }                                                                                            \
  static inline void NAME##_i1(racc *a, int64_t v, int64_t r) {                                \
    if (a->k < 0 || v CMP a->i) a->i = v, a->k = r;                                            \
  }                                                                                            \
  static void NAME##_row_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) { \
    const double *x = ((const rbuf *)b)->f;                                                    \
    for (int64_t k = 0; k < n; k++) NAME##_f1(a, x[k], r0 + k);                                \
  }                                                                                            \
  static void NAME##_col_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) { \
    const double *x = ((const rbuf *)b)->f;                                                    \
    for (int64_t k = 0; k < n; k++) NAME##_f1(&a[k], x[k], r);                                 \
  }                                                                                            \
  static void NAME##_row_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) { \
    const int64_t *x = ((const rbuf *)b)->i;                                                   \
    for (int64_t k = 0; k < n; k++) NAME##_i1(a, x[k], r0 + k);                                \
  }                                                                                            \
  static void NAME##_col_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) { \
    const int64_t *x = ((const rbuf *)b)->i;                                                   \
    for (int64_t k = 0; k < n; k++) NAME##_i1(&a[k], x[k], r);                                 \
  }                                                                                            \
  static void NAME##_merge_f(racc *a, const racc *b, int p) {                                  \
    if (b->k >= 0) NAME##_f1(a, b->f, b->k);                                                   \
  }                                                                                            \
  static void NAME##_merge_i(racc *a, const racc *b, int p) {                                  \
    if (b->k >= 0) NAME##_i1(a, b->i, b->k);                                                   \
  }                                                                                            \
  static const red_ops NAME##_f = {false, false, false, 1, init_zero, NAME##_row_f, NAME##_col_f,     \
                                   NAME##_merge_f, NULL, ext_fin, FAST};                       \
  static const red_ops NAME##_i = {false, true, true, 1, init_zero, NAME##_row_i, NAME##_col_i,       \
                                   NAME##_merge_i, NULL, ext_fin, FAST_NONE};

static void ext_fin(const red_job *j, const racc *a, double *of, int64_t *oi, int64_t *ok) {
  *of = a->f;
  *oi = a->i;
  *ok = a->k;
}
EXT_FUNCS(max, >, FAST_MAX)
EXT_FUNCS(min, <, FAST_MIN)

/* all / any (result in i) */
static void all_row_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  const double *x = ((const rbuf *)b)->f;
  for (int64_t k = 0; k < n; k++) a->i &= x[k] != 0;
}
static void all_col_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const double *x = ((const rbuf *)b)->f;
  for (int64_t k = 0; k < n; k++) a[k].i &= x[k] != 0;
}
static void all_row_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  const int64_t *x = ((const rbuf *)b)->i;
  for (int64_t k = 0; k < n; k++) a->i &= x[k] != 0;
}
static void all_col_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const int64_t *x = ((const rbuf *)b)->i;
  for (int64_t k = 0; k < n; k++) a[k].i &= x[k] != 0;
}
static void all_merge(racc *a, const racc *b, int p) { a->i &= b->i; }
static void any_row_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  const double *x = ((const rbuf *)b)->f;
  for (int64_t k = 0; k < n; k++) a->i |= x[k] != 0;
}
static void any_col_f(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const double *x = ((const rbuf *)b)->f;
  for (int64_t k = 0; k < n; k++) a[k].i |= x[k] != 0;
}
static void any_row_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  const int64_t *x = ((const rbuf *)b)->i;
  for (int64_t k = 0; k < n; k++) a->i |= x[k] != 0;
}
static void any_col_i(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const int64_t *x = ((const rbuf *)b)->i;
  for (int64_t k = 0; k < n; k++) a[k].i |= x[k] != 0;
}
static void any_merge(racc *a, const racc *b, int p) { a->i |= b->i; }
static const red_ops all_f = {false, false, true, 1, init_one, all_row_f, all_col_f, all_merge, NULL, sum_fin, FAST_NONE};
static const red_ops all_i = {false, true, true, 1, init_one, all_row_i, all_col_i, all_merge, NULL, sum_fin, FAST_NONE};
static const red_ops any_f = {false, false, true, 1, init_zero, any_row_f, any_col_f, any_merge, NULL, sum_fin, FAST_NONE};
static const red_ops any_i = {false, true, true, 1, init_zero, any_row_i, any_col_i, any_merge, NULL, sum_fin, FAST_NONE};

/* var / std: two passes, mean then squared deviations (in g) */
static void var_row(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  const double *x = ((const rbuf *)b)->f;
  if (p == 0) {
    a->f += sum8(x, n);
  } else {
    double m = a->f, s = 0;
    for (int64_t k = 0; k < n; k++) s += (x[k] - m) * (x[k] - m);
    a->g += s;
  }
}
static void var_col(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const double *x = ((const rbuf *)b)->f;
  if (p == 0)
    for (int64_t k = 0; k < n; k++) a[k].f += x[k];
  else
    for (int64_t k = 0; k < n; k++) a[k].g += (x[k] - a[k].f) * (x[k] - a[k].f);
}
static void var_merge(racc *a, const racc *b, int p) {
  if (p == 0) a->f += b->f;
  else a->g += b->g;
}
static void var_mid(const red_job *j, racc *a) {
  a->f /= (double)j->R;
  a->g = 0;
}
static void var_fin(const red_job *j, const racc *a, double *of, int64_t *oi, int64_t *ok) {
  double d = (double)j->R - j->param;
  *of = a->g / (d > 0 ? d : 0);
}
static void std_fin(const red_job *j, const racc *a, double *of, int64_t *oi, int64_t *ok) {
  var_fin(j, a, of, oi, ok);
  *of = sqrt(*of);
}
static const red_ops var_ops = {true, false, false, 2, init_zero, var_row, var_col, var_merge, var_mid, var_fin, FAST_VAR};
static const red_ops std_ops = {true, false, false, 2, init_zero, var_row, var_col, var_merge, var_mid, std_fin, FAST_VAR};

/* logsumexp: max first (PyTorch sets an infinite max to 0), then sum of exp(x - max) */
static void lse_row(const red_job *j, racc *a, const void *b, int64_t n, int64_t r0, int p) {
  const double *x = ((const rbuf *)b)->f;
  if (p == 0) {
    for (int64_t k = 0; k < n; k++) max_f1(a, x[k], r0 + k);
  } else {
    double m = a->f, s = 0;
    for (int64_t k = 0; k < n; k++) s += exp(x[k] - m);
    a->g += s;
  }
}
static void lse_col(const red_job *j, racc *a, const void *b, int64_t n, int64_t r, int p) {
  const double *x = ((const rbuf *)b)->f;
  if (p == 0)
    for (int64_t k = 0; k < n; k++) max_f1(&a[k], x[k], r);
  else
    for (int64_t k = 0; k < n; k++) a[k].g += exp(x[k] - a[k].f);
}
static void lse_merge(racc *a, const racc *b, int p) {
  if (p == 0) max_merge_f(a, b, p);
  else a->g += b->g;
}
static void lse_mid(const red_job *j, racc *a) {
  if (a->k < 0 || isinf(a->f)) a->f = 0;
  a->g = 0;
}
static void lse_fin(const red_job *j, const racc *a, double *of, int64_t *oi, int64_t *ok) {
  *of = log(a->g) + a->f;
}
static const red_ops lse_ops = {false, false, false, 2, init_zero, lse_row, lse_col, lse_merge, lse_mid, lse_fin, FAST_LSE};

/* ---- kernels ----------------------------------------------------------------------------- */

static bool is_intlike(fbx_dtype d) { return d == FBX_DTYPE_BOOL || fbx_dtype_is_integral(d); }

/* Run ops over the masked dims of x into fresh outputs: the value output in
 * vdt (UNDEFINED: none), the index output when want_idx. cast_to converts x
 * first. */
static fbx_status *reduce(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *x, const bool *mask, bool keepdim,
                          fbx_dtype cast_to, const red_ops *ops, fbx_dtype vdt, bool want_idx, double param) {
  fbx_red_plan p;
  FBX_TRY(fbx_red_plan_make(ctx, &p, x, mask, keepdim, cast_to, MIN_TILE_B));
  fbx_tensor *ov = NULL, *oi = NULL;
  fbx_status *st = NULL;
  if (vdt != FBX_DTYPE_UNDEFINED) st = fbx_tensor_empty(&ov, vdt, p.out_ndim, p.out_sizes);
  if (!st && want_idx) st = fbx_tensor_empty(&oi, FBX_DTYPE_INT64, p.out_ndim, p.out_sizes);
  if (!st) {
    red_job j = {.ops = ops, .x = p.x->data, .dt = p.x->dtype, .A = p.A, .R = p.R, .B = p.B,
                 .param = param, .ov = ov, .oi = oi};
    st = red_run(&j);
  }
  fbx_red_plan_free(&p);
  if (st) {
    fbx_tensor_release(ov);
    fbx_tensor_release(oi);
    return st;
  }
  int k = 0;
  if (ov) fbx_set_out_tensor(outs, k++, ov);
  if (oi) fbx_set_out_tensor(outs, k, oi);
  return NULL;
}

static fbx_status *arg_bool(const fbx_kctx *ctx, const fbx_ivalue *args, int i, bool *out) {
  if (args[i].kind != FBX_IV_BOOL && args[i].kind != FBX_IV_INT)
    return fbx_kernel_error(ctx, "argument '%s' must be a bool, got %s", ctx->op->schema.args[i].name,
                            fbx_iv_kind_name(args[i].kind));
  *out = fbx_iv_to_int(&args[i]) != 0;
  return NULL;
}

/* The mask for a single int dim argument. */
static fbx_status *one_dim_mask(const fbx_kctx *ctx, bool *mask, const fbx_tensor *x, const fbx_ivalue *v) {
  for (int i = 0; i < FBX_MAX_DIMS; i++) mask[i] = false;
  if (v->kind != FBX_IV_INT) return fbx_kernel_error(ctx, "dim must be an int, got %s", fbx_iv_kind_name(v->kind));
  int64_t d;
  FBX_TRY(fbx_red_wrap_dim(ctx, &d, v->u.i, x));
  if (x->ndim > 0) mask[d] = true;
  return NULL;
}

static void all_mask(bool *mask, const fbx_tensor *x) {
  for (int i = 0; i < FBX_MAX_DIMS; i++) mask[i] = i < x->ndim;
}

/* sum(self, *, dtype) and sum.dim_IntList(self, dim, keepdim, *, dtype):
 * the input is converted to dtype first; without one, integral and bool
 * inputs sum to int64. */
static fbx_status *sum_common(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *x, const bool *mask, bool keepdim,
                              const fbx_ivalue *dtv) {
  fbx_dtype dt = FBX_DTYPE_UNDEFINED;
  FBX_TRY(fbx_red_dtype_arg(ctx, dtv, &dt));
  fbx_dtype work = dt != FBX_DTYPE_UNDEFINED ? dt : x->dtype;
  fbx_dtype out = dt != FBX_DTYPE_UNDEFINED ? dt : is_intlike(x->dtype) ? FBX_DTYPE_INT64 : x->dtype;
  return reduce(ctx, outs, x, mask, keepdim, work, is_intlike(work) ? &sum_i : &sum_f, out, false, 0);
}

fbx_status *fbx_k_sum(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  all_mask(mask, x);
  return sum_common(ctx, outs, x, mask, false, &args[1]);
}

fbx_status *fbx_k_sum_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], keepdim = false;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_red_dim_mask(ctx, mask, x, 1, &args[1], true));
  FBX_TRY(arg_bool(ctx, args, 2, &keepdim));
  return sum_common(ctx, outs, x, mask, keepdim, &args[3]);
}

/* mean: the (input or dtype argument) dtype must be floating, as in PyTorch. */
static fbx_status *mean_common(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *x, const bool *mask, bool keepdim,
                               const fbx_ivalue *dtv) {
  fbx_dtype dt = FBX_DTYPE_UNDEFINED;
  FBX_TRY(fbx_red_dtype_arg(ctx, dtv, &dt));
  if (dt == FBX_DTYPE_UNDEFINED && !fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "could not infer output dtype: input dtype must be floating point, got %s "
                            "(pass dtype=...)", fbx_dtype_name(x->dtype));
  if (dt != FBX_DTYPE_UNDEFINED && !fbx_dtype_is_floating(dt))
    return fbx_kernel_error(ctx, "could not infer output dtype: dtype argument must be floating point, got %s",
                            fbx_dtype_name(dt));
  fbx_dtype work = dt != FBX_DTYPE_UNDEFINED ? dt : x->dtype;
  return reduce(ctx, outs, x, mask, keepdim, work, &mean_f, work, false, 0);
}

fbx_status *fbx_k_mean(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  all_mask(mask, x);
  return mean_common(ctx, outs, x, mask, false, &args[1]);
}

fbx_status *fbx_k_mean_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], keepdim = false;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_red_dim_mask(ctx, mask, x, 1, &args[1], true));
  FBX_TRY(arg_bool(ctx, args, 2, &keepdim));
  return mean_common(ctx, outs, x, mask, keepdim, &args[3]);
}

static fbx_status *prod_common(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *x, const bool *mask, bool keepdim,
                               const fbx_ivalue *dtv) {
  fbx_dtype dt = FBX_DTYPE_UNDEFINED;
  FBX_TRY(fbx_red_dtype_arg(ctx, dtv, &dt));
  fbx_dtype work = dt != FBX_DTYPE_UNDEFINED ? dt : x->dtype;
  fbx_dtype out = dt != FBX_DTYPE_UNDEFINED ? dt : is_intlike(x->dtype) ? FBX_DTYPE_INT64 : x->dtype;
  return reduce(ctx, outs, x, mask, keepdim, work, is_intlike(work) ? &prod_i : &prod_f, out, false, 0);
}

fbx_status *fbx_k_prod(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  all_mask(mask, x);
  return prod_common(ctx, outs, x, mask, false, &args[1]);
}

fbx_status *fbx_k_prod_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], keepdim = false;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(one_dim_mask(ctx, mask, x, &args[1]));
  FBX_TRY(arg_bool(ctx, args, 2, &keepdim));
  return prod_common(ctx, outs, x, mask, keepdim, &args[3]);
}

/* Extremes have no identity: reducing an empty extent is an error. */
static fbx_status *check_nonempty(const fbx_kctx *ctx, const fbx_tensor *x, const bool *mask, bool full) {
  char s[256];
  if (full && x->numel == 0) {
    fbx_red_shape_str(s, sizeof s, x->ndim, x->sizes);
    return fbx_kernel_error(ctx, "cannot reduce all dims of an empty tensor of shape %s: there is no identity "
                            "(specify the reduction dim)", s);
  }
  for (int i = 0; i < x->ndim; i++)
    if (mask[i] && x->sizes[i] == 0) {
      fbx_red_shape_str(s, sizeof s, x->ndim, x->sizes);
      return fbx_kernel_error(ctx, "expected reduction dim %d to have non-zero size (tensor of shape %s)", i, s);
    }
  return NULL;
}

static fbx_status *amax_common(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool is_max) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], keepdim = false;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_red_dim_mask(ctx, mask, x, 1, &args[1], true));
  FBX_TRY(arg_bool(ctx, args, 2, &keepdim));
  bool full = true;
  for (int i = 0; i < x->ndim; i++) full = full && mask[i];
  FBX_TRY(check_nonempty(ctx, x, mask, full));
  bool in = is_intlike(x->dtype);
  const red_ops *ops = is_max ? (in ? &max_i : &max_f) : (in ? &min_i : &min_f);
  return reduce(ctx, outs, x, mask, keepdim, FBX_DTYPE_UNDEFINED, ops, x->dtype, false, 0);
}

fbx_status *fbx_k_amax(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return amax_common(ctx, args, outs, true); }
fbx_status *fbx_k_amin(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return amax_common(ctx, args, outs, false); }

/* max(self) / min(self): the value only. */
static fbx_status *ext_full(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool is_max) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS];
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  all_mask(mask, x);
  FBX_TRY(check_nonempty(ctx, x, mask, true));
  bool in = is_intlike(x->dtype);
  const red_ops *ops = is_max ? (in ? &max_i : &max_f) : (in ? &min_i : &min_f);
  return reduce(ctx, outs, x, mask, false, FBX_DTYPE_UNDEFINED, ops, x->dtype, false, 0);
}
fbx_status *fbx_k_max(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return ext_full(ctx, args, outs, true); }
fbx_status *fbx_k_min(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return ext_full(ctx, args, outs, false); }

/* max.dim / min.dim: (values, indices). */
static fbx_status *ext_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool is_max) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], keepdim = false;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(one_dim_mask(ctx, mask, x, &args[1]));
  FBX_TRY(arg_bool(ctx, args, 2, &keepdim));
  FBX_TRY(check_nonempty(ctx, x, mask, false));
  bool in = is_intlike(x->dtype);
  const red_ops *ops = is_max ? (in ? &max_i : &max_f) : (in ? &min_i : &min_f);
  return reduce(ctx, outs, x, mask, keepdim, FBX_DTYPE_UNDEFINED, ops, x->dtype, true, 0);
}
fbx_status *fbx_k_max_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return ext_dim(ctx, args, outs, true); }
fbx_status *fbx_k_min_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return ext_dim(ctx, args, outs, false); }

/* argmax/argmin(self, dim=None, keepdim): None flattens (keepdim keeps every dim as 1). */
static fbx_status *arg_ext(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool is_max) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], keepdim = false, full = args[1].kind == FBX_IV_NONE;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (x->dtype == FBX_DTYPE_BOOL)
    return fbx_kernel_error(ctx, "not implemented for bool inputs (as in PyTorch)");
  if (full) all_mask(mask, x);
  else FBX_TRY(one_dim_mask(ctx, mask, x, &args[1]));
  FBX_TRY(arg_bool(ctx, args, 2, &keepdim));
  FBX_TRY(check_nonempty(ctx, x, mask, full));
  bool in = is_intlike(x->dtype);
  const red_ops *ops = is_max ? (in ? &max_i : &max_f) : (in ? &min_i : &min_f);
  if (!full) return reduce(ctx, outs, x, mask, keepdim, FBX_DTYPE_UNDEFINED, ops, FBX_DTYPE_UNDEFINED, true, 0);
  /* the flat index: reduce a contiguous flattened view */
  fbx_tensor *c = NULL, *flat = NULL;
  FBX_TRY(fbx_tensor_contiguous(&c, x));
  int64_t n = x->numel;
  fbx_status *st = fbx_tensor_view(&flat, c, 1, &n, NULL, c->offset);
  fbx_tensor_release(c);
  if (st) return st;
  bool m1[FBX_MAX_DIMS] = {true};
  st = reduce(ctx, outs, flat, m1, false, FBX_DTYPE_UNDEFINED, ops, FBX_DTYPE_UNDEFINED, true, 0);
  fbx_tensor_release(flat);
  if (st || !keepdim) return st;
  /* keepdim with dim=None: shape [1] * ndim */
  int64_t ones[FBX_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) ones[i] = 1;
  fbx_tensor *r = outs[0].u.t, *v = NULL;
  st = fbx_tensor_view(&v, r, x->ndim, ones, NULL, r->offset);
  fbx_iv_release(&outs[0]);
  if (st) return st;
  fbx_set_out_tensor(outs, 0, v);
  return NULL;
}
fbx_status *fbx_k_argmax(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return arg_ext(ctx, args, outs, true); }
fbx_status *fbx_k_argmin(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return arg_ext(ctx, args, outs, false); }

/* var/std with a correction (unbiased = correction 1); floating inputs only. */
static fbx_status *var_common(fbx_kctx *ctx, fbx_ivalue *outs, fbx_tensor *x, const bool *mask, bool keepdim,
                              double correction, bool is_std) {
  if (!fbx_dtype_is_floating(x->dtype))
    return fbx_kernel_error(ctx, "std and var only support floating point dtypes, got %s", fbx_dtype_name(x->dtype));
  return reduce(ctx, outs, x, mask, keepdim, FBX_DTYPE_UNDEFINED, is_std ? &std_ops : &var_ops, x->dtype, false,
                correction);
}

/* var(self, unbiased=True) */
static fbx_status *var_full(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool is_std) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], unbiased = true;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(arg_bool(ctx, args, 1, &unbiased));
  all_mask(mask, x);
  return var_common(ctx, outs, x, mask, false, unbiased ? 1 : 0, is_std);
}
/* var.dim(self, dim, unbiased=True, keepdim=False) */
static fbx_status *var_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool is_std) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], unbiased = true, keepdim = false;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_red_dim_mask(ctx, mask, x, 1, &args[1], true));
  FBX_TRY(arg_bool(ctx, args, 2, &unbiased));
  FBX_TRY(arg_bool(ctx, args, 3, &keepdim));
  return var_common(ctx, outs, x, mask, keepdim, unbiased ? 1 : 0, is_std);
}
/* var.correction(self, dim, *, correction, keepdim=False): None correction is 1 */
static fbx_status *var_corr(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool is_std) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], keepdim = false;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_red_dim_mask(ctx, mask, x, 1, &args[1], true));
  double corr = 1;
  if (args[2].kind == FBX_IV_INT || args[2].kind == FBX_IV_BOOL) corr = (double)fbx_iv_to_int(&args[2]);
  else if (args[2].kind != FBX_IV_NONE)
    return fbx_kernel_error(ctx, "correction must be an int or None, got %s", fbx_iv_kind_name(args[2].kind));
  FBX_TRY(arg_bool(ctx, args, 3, &keepdim));
  return var_common(ctx, outs, x, mask, keepdim, corr, is_std);
}
fbx_status *fbx_k_var(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return var_full(ctx, args, outs, false); }
fbx_status *fbx_k_var_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return var_dim(ctx, args, outs, false); }
fbx_status *fbx_k_var_corr(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return var_corr(ctx, args, outs, false); }
fbx_status *fbx_k_std(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return var_full(ctx, args, outs, true); }
fbx_status *fbx_k_std_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return var_dim(ctx, args, outs, true); }
fbx_status *fbx_k_std_corr(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return var_corr(ctx, args, outs, true); }

/* logsumexp(self, dim, keepdim): integral inputs give float32. An empty dim
 * list reduces every dim (PyTorch 1.13 fails on it with a shape error). */
fbx_status *fbx_k_logsumexp(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], keepdim = false;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  FBX_TRY(fbx_red_dim_mask(ctx, mask, x, 1, &args[1], true));
  FBX_TRY(arg_bool(ctx, args, 2, &keepdim));
  fbx_dtype out = fbx_dtype_is_floating(x->dtype) ? x->dtype : FBX_DTYPE_FLOAT32;
  return reduce(ctx, outs, x, mask, keepdim, FBX_DTYPE_UNDEFINED, &lse_ops, out, false, 0);
}

/* all/any: bool results, except that uint8 inputs give uint8 (as in PyTorch). */
static fbx_status *allany(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool is_all, bool with_dim) {
  fbx_tensor *x;
  bool mask[FBX_MAX_DIMS], keepdim = false;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (with_dim) {
    FBX_TRY(one_dim_mask(ctx, mask, x, &args[1]));
    FBX_TRY(arg_bool(ctx, args, 2, &keepdim));
  } else {
    all_mask(mask, x);
  }
  bool in = is_intlike(x->dtype);
  const red_ops *ops = is_all ? (in ? &all_i : &all_f) : (in ? &any_i : &any_f);
  fbx_dtype out = x->dtype == FBX_DTYPE_UINT8 ? FBX_DTYPE_UINT8 : FBX_DTYPE_BOOL;
  return reduce(ctx, outs, x, mask, keepdim, FBX_DTYPE_UNDEFINED, ops, out, false, 0);
}
fbx_status *fbx_k_all(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return allany(ctx, args, outs, true, false); }
fbx_status *fbx_k_all_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return allany(ctx, args, outs, true, true); }
fbx_status *fbx_k_any(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return allany(ctx, args, outs, false, false); }
fbx_status *fbx_k_any_dim(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return allany(ctx, args, outs, false, true); }

/* ---- scans: cumsum, cumprod, cummax, cummin, logcumsumexp ---------------------------------------- */

typedef enum scan_op { SCAN_SUM, SCAN_PROD, SCAN_MAX, SCAN_MIN, SCAN_LSE } scan_op;

typedef struct scan_job {
  const void *x;
  fbx_dtype dt;
  void *y;
  fbx_dtype ydt;
  int64_t *idx; /* cummax/cummin: the index along the dim of each value kept */
  int64_t A, R, B;
  bool ints;
  scan_op op;
} scan_job;

/* v rounded to dtype dt (logcumsumexp's running value is held in the
 * output's dtype between steps, as in ATen). */
static inline double round_to(fbx_dtype dt, double v) {
  switch (dt) {
    case FBX_DTYPE_FLOAT32: return (float)v;
    case FBX_DTYPE_FLOAT16: return fbx_half_to_float(fbx_float_to_half((float)v));
    case FBX_DTYPE_BFLOAT16: return fbx_bf16_to_float(fbx_float_to_bf16((float)v));
    default: return v;
  }
}

/* log(exp(x) + exp(acc)) as ATen's logcumsumexp step: NaN propagates, and
 * two equal infinities give x (-inf + -inf stays -inf without a NaN). */
static inline double log_add_exp(double x, double acc) {
  double lo = isnan(acc) ? acc : (acc < x ? acc : x), hi = isnan(acc) ? acc : (x < acc ? acc : x);
  if (lo != hi || isfinite(lo)) return log1p(exp(lo - hi)) + hi;
  return x;
}

/* One step of a floating scan: v at position r folds into *acc (and *at). */
static inline void scan_step_f(const scan_job *j, double v, int64_t r, double *acc, int64_t *at) {
  switch (j->op) {
    case SCAN_SUM: *acc += v; break;
    case SCAN_PROD: *acc *= v; break;
    case SCAN_MAX: /* a NaN stays once seen; later NaNs move the index, ties take the later one */
      if (r == 0 || isnan(v) || (!isnan(*acc) && v >= *acc)) *acc = v, *at = r;
      break;
    case SCAN_MIN:
      if (r == 0 || isnan(v) || (!isnan(*acc) && v <= *acc)) *acc = v, *at = r;
      break;
    case SCAN_LSE: *acc = round_to(j->ydt, log_add_exp(v, *acc)); break;
  }
}

static inline void scan_step_i(const scan_job *j, int64_t v, int64_t r, int64_t *acc, int64_t *at) {
  switch (j->op) {
    case SCAN_SUM: *acc = (int64_t)((uint64_t)*acc + (uint64_t)v); break;
    case SCAN_PROD: *acc = (int64_t)((uint64_t)*acc * (uint64_t)v); break;
    case SCAN_MAX:
      if (r == 0 || v >= *acc) *acc = v, *at = r;
      break;
    case SCAN_MIN:
      if (r == 0 || v <= *acc) *acc = v, *at = r;
      break;
    case SCAN_LSE: break; /* floating only */
  }
}

static void scan_body(void *c, int64_t begin, int64_t end) {
  const scan_job *j = c;
  int64_t ntiles = (j->B + CH - 1) / CH;
  rbuf b;
  double af[CH];
  int64_t ai[CH], at[CH];
  double f0 = j->op == SCAN_PROD ? 1 : j->op == SCAN_LSE ? -INFINITY : 0;
  int64_t i0 = j->op == SCAN_PROD ? 1 : 0;
  for (int64_t t = begin; t < end; t++) {
    int64_t a = t / ntiles, b0 = (t % ntiles) * CH, n = min64(CH, j->B - b0);
    if (j->B == 1) {
      /* one row: scan it in chunks */
      double sf = f0;
      int64_t si = i0, sat = 0;
      for (int64_t r = 0; r < j->R; r += CH) {
        int64_t m = min64(CH, j->R - r), base = a * j->R + r;
        if (j->ints) {
          fbx_red_load_i64(b.i, j->x, j->dt, base, m);
          if (j->op == SCAN_SUM)
            for (int64_t k = 0; k < m; k++) b.i[k] = si = (int64_t)((uint64_t)si + (uint64_t)b.i[k]);
          else
            for (int64_t k = 0; k < m; k++) {
              scan_step_i(j, b.i[k], r + k, &si, &sat);
              b.i[k] = si;
              if (j->idx) j->idx[base + k] = sat;
            }
          fbx_red_store_i64(j->y, j->ydt, base, b.i, m);
        } else {
          fbx_red_load_f64(b.f, j->x, j->dt, base, m);
          if (j->op == SCAN_SUM)
            for (int64_t k = 0; k < m; k++) b.f[k] = sf += b.f[k];
          else
            for (int64_t k = 0; k < m; k++) {
              scan_step_f(j, b.f[k], r + k, &sf, &sat);
              b.f[k] = sf;
              if (j->idx) j->idx[base + k] = sat;
            }
          fbx_red_store_f64(j->y, j->ydt, base, b.f, m);
        }
      }
      continue;
    }
    for (int64_t k = 0; k < n; k++) af[k] = f0, ai[k] = i0, at[k] = 0;
    for (int64_t r = 0; r < j->R; r++) {
      int64_t base = (a * j->R + r) * j->B + b0;
      if (j->ints) {
        fbx_red_load_i64(b.i, j->x, j->dt, base, n);
        if (j->op == SCAN_SUM)
          for (int64_t k = 0; k < n; k++) b.i[k] = ai[k] = (int64_t)((uint64_t)ai[k] + (uint64_t)b.i[k]);
        else
          for (int64_t k = 0; k < n; k++) {
            scan_step_i(j, b.i[k], r, &ai[k], &at[k]);
            b.i[k] = ai[k];
          }
        fbx_red_store_i64(j->y, j->ydt, base, b.i, n);
      } else {
        fbx_red_load_f64(b.f, j->x, j->dt, base, n);
        if (j->op == SCAN_SUM)
          for (int64_t k = 0; k < n; k++) b.f[k] = af[k] += b.f[k];
        else
          for (int64_t k = 0; k < n; k++) {
            scan_step_f(j, b.f[k], r, &af[k], &at[k]);
            b.f[k] = af[k];
          }
        fbx_red_store_f64(j->y, j->ydt, base, b.f, n);
      }
      if (j->idx) memcpy(j->idx + base, at, sizeof(int64_t) * (size_t)n);
    }
  }
}

/* Run scan `op` of x along dim d into y (x's sizes, dtype ydt), in dtype
 * `work`; idx (cummax/cummin) receives the positions. */
static fbx_status *run_scan(fbx_tensor *x, int64_t d, fbx_dtype work, scan_op op, fbx_tensor *y, fbx_tensor *idx) {
  fbx_tensor *c = NULL;
  if (work != x->dtype) FBX_TRY(fbx_tensor_clone_as(&c, x, work));
  else FBX_TRY(fbx_tensor_contiguous(&c, x));
  scan_job j = {.x = c->data, .dt = c->dtype, .y = y->data, .ydt = y->dtype, .idx = idx ? idx->data : NULL,
                .A = 1, .R = 1, .B = 1, .ints = is_intlike(work), .op = op};
  for (int i = 0; i < x->ndim; i++) {
    if (i < d) j.A *= x->sizes[i];
    else if (i == d) j.R = x->sizes[i];
    else j.B *= x->sizes[i];
  }
  if (x->numel > 0) {
    int64_t ntiles = (j.B + CH - 1) / CH;
    int64_t per = j.R * min64(j.B, CH);
    fbx_parallel_for(j.A * ntiles, per >= 32768 ? 1 : 32768 / per + 1, scan_body, &j);
  }
  fbx_tensor_release(c);
  return NULL;
}

/* cumsum/cumprod(self, dim, *, dtype=None): integral/bool inputs give int64;
 * float accumulates in double (PyTorch's CPU accumulate type for float). */
static fbx_status *scan(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs, bool prod) {
  fbx_tensor *x, *y = NULL;
  int64_t d;
  fbx_dtype dt = FBX_DTYPE_UNDEFINED;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (args[1].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "dim must be an int");
  FBX_TRY(fbx_red_wrap_dim(ctx, &d, args[1].u.i, x));
  FBX_TRY(fbx_red_dtype_arg(ctx, &args[2], &dt));
  fbx_dtype work = dt != FBX_DTYPE_UNDEFINED ? dt : x->dtype;
  fbx_dtype out = dt != FBX_DTYPE_UNDEFINED ? dt : is_intlike(x->dtype) ? FBX_DTYPE_INT64 : x->dtype;
  FBX_TRY(fbx_tensor_empty(&y, out, x->ndim, x->sizes));
  fbx_status *st = run_scan(x, d, work, prod ? SCAN_PROD : SCAN_SUM, y, NULL);
  if (st) {
    fbx_tensor_release(y);
    return st;
  }
  fbx_set_out_tensor(outs, 0, y);
  return NULL;
}

fbx_status *fbx_k_cumsum(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return scan(ctx, args, outs, false); }

/* aten::cumprod: a row of list_extra.h, sharing cumsum's scan. */
fbx_status *fbx_k_cumprod(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) { return scan(ctx, args, outs, true); }

/* aten::cummax / cummin(Tensor self, int dim) -> (values, indices), rows of
 * list_extra.h: values in self's dtype (every dtype but float16, as in
 * PyTorch 1.13's CPU kernel), int64 indices. A NaN,
 * once seen, is kept (and each later NaN takes its index); ties take the
 * later index: ATen's rule. */
fbx_status *fbx_k_cummaxmin(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *v = NULL, *ix = NULL;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (args[1].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "dim must be an int");
  FBX_TRY(fbx_red_wrap_dim(ctx, &d, args[1].u.i, x));
  bool max = ctx->op->id == FBX_OP_cummax;
  if (x->dtype == FBX_DTYPE_FLOAT16)
    return fbx_kernel_error(ctx, "\"%s_cpu\" not implemented for 'Half'", max ? "cummax" : "cummin");
  fbx_status *st = fbx_tensor_empty(&v, x->dtype, x->ndim, x->sizes);
  if (!st) st = fbx_tensor_empty(&ix, FBX_DTYPE_INT64, x->ndim, x->sizes);
  if (!st) st = run_scan(x, d, x->dtype, max ? SCAN_MAX : SCAN_MIN, v, ix);
  if (st) {
    fbx_tensor_release(v);
    fbx_tensor_release(ix);
    return st;
  }
  fbx_set_out_tensor(outs, 0, v);
  fbx_set_out_tensor(outs, 1, ix);
  return NULL;
}

/* aten::logcumsumexp(Tensor self, int dim) -> Tensor, a row of list_extra.h:
 * floating inputs but float16, each step log(exp(x) + exp(running)) computed in
 * double and rounded to self's dtype. */
fbx_status *fbx_k_logcumsumexp(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_tensor *x, *y = NULL;
  int64_t d;
  FBX_TRY(fbx_arg_tensor(ctx, args, 0, &x));
  if (args[1].kind != FBX_IV_INT) return fbx_kernel_error(ctx, "dim must be an int");
  FBX_TRY(fbx_red_wrap_dim(ctx, &d, args[1].u.i, x));
  if (!fbx_dtype_is_floating(x->dtype) || x->dtype == FBX_DTYPE_FLOAT16)
    return fbx_kernel_error(ctx, "\"logcumsumexp_out_cpu\" not implemented for '%s'", fbx_dtype_torch_name(x->dtype));
  FBX_TRY(fbx_tensor_empty(&y, x->dtype, x->ndim, x->sizes));
  fbx_status *st = run_scan(x, d, x->dtype, SCAN_LSE, y, NULL);
  if (st) {
    fbx_tensor_release(y);
    return st;
  }
  fbx_set_out_tensor(outs, 0, y);
  return NULL;
}

/* aten::var_mean / std_mean (plain, .dim, .correction): (the var or std
 * row of the same overload, mean over the same dims), each computed by its
 * own row, so both equal what var/std and mean return. */
fbx_status *fbx_k_var_mean(fbx_kctx *ctx, fbx_ivalue *args, fbx_ivalue *outs) {
  fbx_op_id id = ctx->op->id;
  bool is_std = id == FBX_OP_std_mean || id == FBX_OP_std_mean_dim || id == FBX_OP_std_mean_correction;
  fbx_ivalue none = fbx_iv_none();
  fbx_tensor *v = NULL, *m = NULL;
  fbx_status *st;
  if (id == FBX_OP_var_mean || id == FBX_OP_std_mean) {
    st = fbx_row_tensor(ctx, &v, is_std ? FBX_OP_std : FBX_OP_var, args, 2);
    fbx_ivalue ma[2] = {args[0], none};
    if (!st) st = fbx_row_tensor(ctx, &m, FBX_OP_mean, ma, 2);
  } else {
    bool corr = id == FBX_OP_var_mean_correction || id == FBX_OP_std_mean_correction;
    fbx_op_id vid = corr ? (is_std ? FBX_OP_std_correction : FBX_OP_var_correction)
                         : (is_std ? FBX_OP_std_dim : FBX_OP_var_dim);
    st = fbx_row_tensor(ctx, &v, vid, args, 4);
    fbx_ivalue ma[4] = {args[0], args[1], args[3], none};
    if (!st) st = fbx_row_tensor(ctx, &m, FBX_OP_mean_dim, ma, 4);
  }
  if (st) {
    fbx_tensor_release(v);
    fbx_tensor_release(m);
    return st;
  }
  fbx_set_out_tensor(outs, 0, v);
  fbx_set_out_tensor(outs, 1, m);
  return NULL;
}
