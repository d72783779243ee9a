/* Strided copy with dtype conversion. The dispatch happens once per row
 * (innermost dimension after collapsing), never per element. */
#include "tensor/copy.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

#include <fusebox/tensor.h>
#include "tensor/half.h"

typedef void (*row_fn)(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss, int64_t n);

/* Storage C type of each dtype. */
#define CT_UINT8 uint8_t
#define CT_INT8 int8_t
#define CT_INT16 int16_t
#define CT_INT32 int32_t
#define CT_INT64 int64_t
#define CT_FLOAT16 uint16_t
#define CT_FLOAT32 float
#define CT_FLOAT64 double
#define CT_BOOL uint8_t
#define CT_BFLOAT16 uint16_t

/* Stored value -> arithmetic value. */
#define LD_UINT8(x) (x)
#define LD_INT8(x) (x)
#define LD_INT16(x) (x)
#define LD_INT32(x) (x)
#define LD_INT64(x) (x)
#define LD_FLOAT16(x) fbx_half_to_float(x)
#define LD_FLOAT32(x) (x)
#define LD_FLOAT64(x) (x)
#define LD_BOOL(x) ((x) != 0)
#define LD_BFLOAT16(x) fbx_bf16_to_float(x)

static inline int64_t id_i64_(int64_t v) { return v; }
#define TO_I64(v) _Generic((v), float: fbx_f32_to_i64, double: fbx_f64_to_i64, default: id_i64_)(v)

/* Arithmetic value -> stored value. */
#define ST_UINT8(v) ((uint8_t)TO_I64(v))
#define ST_INT8(v) ((int8_t)TO_I64(v))
#define ST_INT16(v) ((int16_t)TO_I64(v))
#define ST_INT32(v) ((int32_t)TO_I64(v))
#define ST_INT64(v) (TO_I64(v))
#define ST_FLOAT16(v) fbx_float_to_half((float)(v))
#define ST_FLOAT32(v) ((float)(v))
#define ST_FLOAT64(v) ((double)(v))
#define ST_BOOL(v) ((uint8_t)((v) != 0))
#define ST_BFLOAT16(v) fbx_float_to_bf16((float)(v))

#define SRC_LIST(X) X(UINT8) X(INT8) X(INT16) X(INT32) X(INT64) \
  X(FLOAT16) X(FLOAT32) X(FLOAT64) X(BOOL) X(BFLOAT16)
#define DST_LIST(X, S) X(S, UINT8) X(S, INT8) X(S, INT16) X(S, INT32) X(S, INT64) \
  X(S, FLOAT16) X(S, FLOAT32) X(S, FLOAT64) X(S, BOOL) X(S, BFLOAT16)

/* The contiguous loop is separate so the compiler can vectorize it. */
#define DEF_CVT(S, D)                                                              \
  static void cvt_##S##_##D(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss,   \
                            int64_t n) {                                           \
    if (ds == (ptrdiff_t)sizeof(CT_##D) && ss == (ptrdiff_t)sizeof(CT_##S)) {      \
      for (int64_t i = 0; i < n; i++) {                                            \
        CT_##S x;                                                                  \
        memcpy(&x, s + i * (ptrdiff_t)sizeof x, sizeof x);                         \
        CT_##D y = ST_##D(LD_##S(x));                                              \
        memcpy(d + i * (ptrdiff_t)sizeof y, &y, sizeof y);                         \
      }                                                                            \
      return;                                                                      \
    }                                                                              \
    for (int64_t i = 0; i < n; i++, d += ds, s += ss) {                            \
      CT_##S x;                                                                    \
      memcpy(&x, s, sizeof x);                                                     \
      CT_##D y = ST_##D(LD_##S(x));                                                \
      memcpy(d, &y, sizeof y);                                                     \
    }                                                                              \
  }
#define DEF_CVT_ROW(S) DST_LIST(DEF_CVT, S)
SRC_LIST(DEF_CVT_ROW)

#define CVT_ENTRY(S, D) [FBX_DTYPE_##D] = cvt_##S##_##D,
#define CVT_ROW(S) [FBX_DTYPE_##S] = {DST_LIST(CVT_ENTRY, S)},
static const row_fn cvt_table[FBX_DTYPE_MAX_CODE][FBX_DTYPE_MAX_CODE] = {SRC_LIST(CVT_ROW)};

/* Same dtype: move bytes. */
#define DEF_SAME(N, T)                                                             \
  static void same_##N(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss,        \
                       int64_t n) {                                                \
    if (ds == N && ss == N) {                                                      \
      memcpy(d, s, (size_t)n * N);                                                 \
    } else if (ss == 0) {                                                          \
      T v;                                                                         \
      memcpy(&v, s, N);                                                            \
      for (int64_t i = 0; i < n; i++, d += ds) memcpy(d, &v, N);                  \
    } else {                                                                       \
      for (int64_t i = 0; i < n; i++, d += ds, s += ss) memcpy(d, s, N);          \
    }                                                                              \
  }
DEF_SAME(1, uint8_t)
DEF_SAME(2, uint16_t)
DEF_SAME(4, uint32_t)
DEF_SAME(8, uint64_t)

static row_fn same_fn(size_t es) {
  switch (es) {
    case 1: return same_1;
    case 2: return same_2;
    case 4: return same_4;
    default: return same_8;
  }
}

/* Tile edge for transposing copies. */
#define TILE 16

typedef struct {
  int64_t size;
  ptrdiff_t ds, ss; /* bytes */
} dim_;

static ptrdiff_t absd_(ptrdiff_t v) { return v < 0 ? -v : v; }

void fbx_strided_copy(void *dst, fbx_dtype dst_dtype, const int64_t *dst_strides,
                      const void *src, fbx_dtype src_dtype, const int64_t *src_strides,
                      int ndim, const int64_t *sizes) {
  ptrdiff_t des = (ptrdiff_t)fbx_dtype_size(dst_dtype);
  ptrdiff_t ses = (ptrdiff_t)fbx_dtype_size(src_dtype);
  dim_ dims[FBX_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < ndim; i++) {
    if (sizes[i] == 0) return;
    if (sizes[i] == 1) continue;
    dims[nd].size = sizes[i];
    dims[nd].ds = (ptrdiff_t)dst_strides[i] * des;
    dims[nd].ss = (ptrdiff_t)src_strides[i] * ses;
    nd++;
  }
  /* Outermost first by |dst stride| (then |src stride|), so the innermost
   * loop runs along dst memory; insertion sort keeps equal dims in order. */
  for (int i = 1; i < nd; i++) {
    dim_ x = dims[i];
    int j = i - 1;
    while (j >= 0 && (absd_(dims[j].ds) < absd_(x.ds) ||
                      (absd_(dims[j].ds) == absd_(x.ds) && absd_(dims[j].ss) < absd_(x.ss)))) {
      dims[j + 1] = dims[j];
      j--;
    }
    dims[j + 1] = x;
  }
  /* Merge an outer dim into the inner one when both sides step through it
   * as one longer run. */
  int m = 0;
  for (int i = 1; i < nd; i++) {
    dim_ *o = &dims[m];
    if (o->ds == dims[i].ds * dims[i].size && o->ss == dims[i].ss * dims[i].size) {
      o->size *= dims[i].size;
      o->ds = dims[i].ds;
      o->ss = dims[i].ss;
    } else {
      dims[++m] = dims[i];
    }
  }
  if (nd > 0) nd = m + 1;

  row_fn fn = dst_dtype == src_dtype ? same_fn((size_t)des)
                                     : cvt_table[src_dtype][dst_dtype];
  assert(fn && "fbx_strided_copy: invalid dtype");
  if (nd == 0) {
    fn(dst, des, src, ses, 1);
    return;
  }
  const dim_ in = dims[nd - 1];
  /* If the source is contiguous along some outer dim k but not along the
   * inner one (a transpose), walk 2-d tiles of (k, inner) so both sides stay
   * in cache. */
  int k = -1;
  if (nd >= 2 && absd_(in.ss) > ses && in.size >= TILE) {
    for (int j = 0; j < nd - 1; j++)
      if (absd_(dims[j].ss) < absd_(in.ss) && dims[j].size >= TILE &&
          (k < 0 || absd_(dims[j].ss) < absd_(dims[k].ss)))
        k = j;
  }
  dim_ kd = {1, 0, 0};
  if (k >= 0) {
    kd = dims[k];
    for (int j = k; j < nd - 1; j++) dims[j] = dims[j + 1];
    nd--;
  }
  int64_t outer = 1;
  for (int j = 0; j < nd - 1; j++) outer *= dims[j].size;
  int64_t idx[FBX_MAX_DIMS] = {0};
  char *dp = dst;
  const char *sp = src;
  for (int64_t r = 0; r < outer; r++) {
    if (k < 0) {
      fn(dp, in.ds, sp, in.ss, in.size);
    } else {
      for (int64_t i0 = 0; i0 < kd.size; i0 += TILE) {
        int64_t ie = i0 + TILE < kd.size ? i0 + TILE : kd.size;
        for (int64_t j0 = 0; j0 < in.size; j0 += TILE) {
          int64_t nj = j0 + TILE < in.size ? TILE : in.size - j0;
          for (int64_t i = i0; i < ie; i++)
            fn(dp + i * kd.ds + j0 * in.ds, in.ds, sp + i * kd.ss + j0 * in.ss, in.ss, nj);
        }
      }
    }
    for (int j = nd - 2; j >= 0; j--) {
      if (++idx[j] < dims[j].size) {
        dp += dims[j].ds;
        sp += dims[j].ss;
        break;
      }
      idx[j] = 0;
      dp -= dims[j].ds * (ptrdiff_t)(dims[j].size - 1);
      sp -= dims[j].ss * (ptrdiff_t)(dims[j].size - 1);
    }
  }
}

double fbx_load_f64(const void *p, fbx_dtype d) {
  double v = 0;
  cvt_table[d][FBX_DTYPE_FLOAT64]((char *)&v, 8, p, 0, 1);
  return v;
}

int64_t fbx_load_i64(const void *p, fbx_dtype d) {
  int64_t v = 0;
  cvt_table[d][FBX_DTYPE_INT64]((char *)&v, 8, p, 0, 1);
  return v;
}

void fbx_store_f64(void *p, fbx_dtype d, double v) {
  cvt_table[FBX_DTYPE_FLOAT64][d](p, 0, (const char *)&v, 0, 1);
}

void fbx_store_i64(void *p, fbx_dtype d, int64_t v) {
  cvt_table[FBX_DTYPE_INT64][d](p, 0, (const char *)&v, 0, 1);
}
