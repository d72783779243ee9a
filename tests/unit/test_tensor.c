/* Tensors: creation, views and refcounts, the strided copy kernel against an
 * element loop for every dtype pair, float16/bfloat16 conversions against
 * numpy/PyTorch, overlap detection, summaries, DLPack, allocation failure. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "tensor/half.h"
#include "tensor/hugepages.h"
#include "testutil.h"
#include <fusebox/tensor.h>

#define OK(expr)                                                          \
  do {                                                                    \
    fbx_status *st_ = (expr);                                             \
    ck_assert_msg(st_ == NULL, "%s failed: %s", #expr, fbx_status_message(st_)); \
  } while (0)

/* Expect failure with `code` and a message containing `sub`. */
static void expect_err(fbx_status *st, fbx_code code, const char *sub) {
  ck_assert_msg(st != NULL, "expected an error containing '%s'", sub);
  ck_assert_msg(fbx_status_code(st) == code, "code %s, want %s (%s)",
                fbx_code_name(fbx_status_code(st)), fbx_code_name(code), fbx_status_message(st));
  ck_assert_msg(strstr(fbx_status_message(st), sub), "message '%s' lacks '%s'",
                fbx_status_message(st), sub);
  fbx_status_free(st);
}

static const fbx_dtype ALL[] = {FBX_DTYPE_UINT8,   FBX_DTYPE_INT8,    FBX_DTYPE_INT16,
                                FBX_DTYPE_INT32,   FBX_DTYPE_INT64,   FBX_DTYPE_FLOAT16,
                                FBX_DTYPE_FLOAT32, FBX_DTYPE_FLOAT64, FBX_DTYPE_BOOL,
                                FBX_DTYPE_BFLOAT16};
#define NALL ((int)(sizeof ALL / sizeof ALL[0]))

/* ---- independent element codec for the reference loop ------------------- */

static double ref_read(const void *p, fbx_dtype d) {
  switch (d) {
    case FBX_DTYPE_UINT8: return *(const uint8_t *)p;
    case FBX_DTYPE_INT8: return *(const int8_t *)p;
    case FBX_DTYPE_INT16: return *(const int16_t *)p;
    case FBX_DTYPE_INT32: return *(const int32_t *)p;
    case FBX_DTYPE_INT64: return (double)*(const int64_t *)p;
    case FBX_DTYPE_FLOAT16: return fbx_half_to_float(*(const uint16_t *)p);
    case FBX_DTYPE_FLOAT32: return *(const float *)p;
    case FBX_DTYPE_FLOAT64: return *(const double *)p;
    case FBX_DTYPE_BOOL: return *(const uint8_t *)p;
    case FBX_DTYPE_BFLOAT16: return fbx_bf16_to_float(*(const uint16_t *)p);
    default: ck_abort(); return 0;
  }
}

static void ref_write(void *p, fbx_dtype d, double v) {
  switch (d) {
    case FBX_DTYPE_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case FBX_DTYPE_INT8: *(int8_t *)p = (int8_t)v; break;
    case FBX_DTYPE_INT16: *(int16_t *)p = (int16_t)v; break;
    case FBX_DTYPE_INT32: *(int32_t *)p = (int32_t)v; break;
    case FBX_DTYPE_INT64: *(int64_t *)p = (int64_t)v; break;
    case FBX_DTYPE_FLOAT16: *(uint16_t *)p = fbx_float_to_half((float)v); break;
    case FBX_DTYPE_FLOAT32: *(float *)p = (float)v; break;
    case FBX_DTYPE_FLOAT64: *(double *)p = v; break;
    case FBX_DTYPE_BOOL: *(uint8_t *)p = v != 0; break;
    case FBX_DTYPE_BFLOAT16: *(uint16_t *)p = fbx_float_to_bf16((float)v); break;
    default: ck_abort();
  }
}

/* What converting v (exactly representable in src) to d must give, by the
 * documented rules: bool is v != 0, integers truncate then wrap. */
static double ref_convert(double v, fbx_dtype d) {
  if (d == FBX_DTYPE_BOOL) return v != 0;
  if (fbx_dtype_is_floating(d)) return v;
  int64_t i = (int64_t)trunc(v);
  switch (d) {
    case FBX_DTYPE_UINT8: return (uint8_t)i;
    case FBX_DTYPE_INT8: return (int8_t)i;
    case FBX_DTYPE_INT16: return (int16_t)i;
    case FBX_DTYPE_INT32: return (int32_t)i;
    default: return (double)i;
  }
}

static char *elem(const fbx_tensor *t, const int64_t *idx) {
  int64_t off = 0;
  for (int i = 0; i < t->ndim; i++) off += idx[i] * t->strides[i];
  return (char *)t->data + off * (int64_t)fbx_tensor_elem_size(t);
}

static int next_index(int ndim, const int64_t *sizes, int64_t *idx) {
  for (int i = ndim - 1; i >= 0; i--) {
    if (++idx[i] < sizes[i]) return 1;
    idx[i] = 0;
  }
  return 0;
}

/* Values exactly representable in every dtype's range after wrapping rules:
 * small integers, and halves/quarters for floating sources. */
static double test_value(int64_t k, fbx_dtype src) {
  static const double ints[] = {0, 1, -2, 3, 100, -100, 7, 42, -1, 5, 127, -128, 9, 0, 2};
  static const double flts[] = {0, 1.5, -2.25, 3, 100.5, -100.5, 7, 0.25, -1, 5.5, 127, -0.75};
  if (src == FBX_DTYPE_BOOL) return (k % 3) != 0;
  if (src == FBX_DTYPE_UINT8) return (double)((k * 37) % 256);
  if (fbx_dtype_is_floating(src)) return flts[k % 12];
  return ints[k % 15];
}

/* Fill t in logical order with test values through the reference codec. */
static void fill(fbx_tensor *t) {
  int64_t idx[FBX_MAX_DIMS] = {0}, k = 0;
  if (t->numel == 0) return;
  do ref_write(elem(t, idx), t->dtype, test_value(k++, t->dtype));
  while (next_index(t->ndim, t->sizes, idx));
}

/* dst must equal src converted, with src broadcast to dst's shape. */
static void check_copy(const fbx_tensor *dst, const fbx_tensor *src) {
  int64_t idx[FBX_MAX_DIMS] = {0}, sidx[FBX_MAX_DIMS];
  if (dst->numel == 0) return;
  int lead = dst->ndim - src->ndim;
  do {
    for (int i = 0; i < src->ndim; i++) sidx[i] = src->sizes[i] == 1 ? 0 : idx[i + lead];
    double want = ref_convert(ref_read(elem(src, sidx), src->dtype), dst->dtype);
    double got = ref_read(elem(dst, idx), dst->dtype);
    ck_assert_msg(got == want, "%s -> %s: got %g want %g", fbx_dtype_name(src->dtype),
                  fbx_dtype_name(dst->dtype), got, want);
  } while (next_index(dst->ndim, dst->sizes, idx));
}

/* ---- creation, views, refcounts ---------------------------------------- */

START_TEST(test_create) {
  int64_t sizes[3] = {2, 3, 4};
  fbx_tensor *t;
  OK(fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, 3, sizes));
  ck_assert_int_eq(t->ndim, 3);
  ck_assert_int_eq(t->numel, 24);
  ck_assert_int_eq(t->strides[0], 12);
  ck_assert_int_eq(t->strides[1], 4);
  ck_assert_int_eq(t->strides[2], 1);
  ck_assert_int_eq(t->offset, 0);
  ck_assert_int_eq((uintptr_t)t->data % FBX_STORAGE_ALIGN, 0);
  ck_assert(fbx_tensor_is_contiguous(t));
  for (int i = 0; i < 24; i++) ck_assert(((float *)t->data)[i] == 0.0f);
  fbx_tensor_release(t);

  for (int d = 0; d < NALL; d++) {
    OK(fbx_tensor_empty(&t, ALL[d], 0, NULL));
    ck_assert_int_eq(t->numel, 1);
    fbx_tensor_set_f64(t, 0, 1);
    double v;
    OK(fbx_tensor_item_f64(&v, t));
    ck_assert(v == 1.0);
    fbx_tensor_release(t);
  }

  int64_t esz[2] = {0, 5};
  OK(fbx_tensor_empty(&t, FBX_DTYPE_INT64, 2, esz));
  ck_assert_int_eq(t->numel, 0);
  ck_assert(fbx_tensor_is_contiguous(t));
  fbx_tensor_release(t);

  int32_t vals[6] = {1, 2, 3, 4, 5, 6};
  int64_t s2[2] = {2, 3};
  OK(fbx_tensor_from_data(&t, FBX_DTYPE_INT32, 2, s2, vals));
  ck_assert_int_eq(fbx_tensor_get_i64(t, 4), 5);
  int64_t it;
  expect_err(fbx_tensor_item_i64(&it, t), FBX_ERR_INVALID_ARG, "6 elements");
  fbx_tensor_release(t);

  uint8_t bools[3] = {0, 7, 255};
  int64_t s3 = 3;
  OK(fbx_tensor_from_data(&t, FBX_DTYPE_BOOL, 1, &s3, bools));
  ck_assert_int_eq(((uint8_t *)t->data)[1], 1);
  ck_assert_int_eq(((uint8_t *)t->data)[2], 1);
  fbx_tensor_release(t);
}
END_TEST

START_TEST(test_create_errors) {
  fbx_tensor *t = NULL;
  int64_t neg[2] = {2, -1};
  expect_err(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 2, neg), FBX_ERR_INVALID_ARG, "negative size");
  int64_t big[3] = {INT64_MAX / 4, 4, 2};
  expect_err(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 3, big), FBX_ERR_INVALID_ARG, "too large");
  int64_t s[17] = {1};
  expect_err(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 17, s), FBX_ERR_INVALID_ARG, "dimensions");
  expect_err(fbx_tensor_empty(&t, (fbx_dtype)9, 0, NULL), FBX_ERR_INVALID_ARG, "dtype");
  int64_t sz[2] = {2, 2}, st[2] = {-1, 1};
  expect_err(fbx_tensor_empty_strided(&t, FBX_DTYPE_FLOAT32, 2, sz, st), FBX_ERR_INVALID_ARG,
             "negative stride");
  ck_assert_ptr_null(t);
}
END_TEST

START_TEST(test_views_share_storage) {
  int64_t sizes[2] = {3, 4};
  fbx_tensor *a, *v, *row;
  OK(fbx_tensor_empty(&a, FBX_DTYPE_INT64, 2, sizes));
  for (int i = 0; i < 12; i++) fbx_tensor_set_i64(a, i, i);
  ck_assert_int_eq(fbx_storage_refcount(a->storage), 1);

  /* transpose */
  int64_t ts[2] = {4, 3}, tst[2] = {1, 4};
  OK(fbx_tensor_view(&v, a, 2, ts, tst, 0));
  ck_assert_ptr_eq(v->storage, a->storage);
  ck_assert_int_eq(fbx_storage_refcount(a->storage), 2);
  ck_assert(!fbx_tensor_is_contiguous(v));
  ck_assert_int_eq(fbx_tensor_get_i64(v, 1), 4); /* v[0][1] = a[1][0] */
  ck_assert_int_eq(fbx_tensor_get_i64(v, 5), 9); /* v[1][2] = a[2][1] */

  /* row 2 as a 1-d view with an offset */
  int64_t rs = 4;
  OK(fbx_tensor_view(&row, a, 1, &rs, NULL, 8));
  ck_assert_int_eq(row->offset, 8);
  ck_assert_ptr_eq(row->data, (int64_t *)a->data + 8);
  ck_assert_int_eq(fbx_tensor_get_i64(row, 3), 11);
  ck_assert_int_eq(fbx_storage_refcount(a->storage), 3);

  /* writes through a view are seen by the base */
  fbx_tensor_set_i64(row, 0, -5);
  ck_assert_int_eq(fbx_tensor_get_i64(a, 8), -5);

  /* tensor refcount independent of storage refcount */
  fbx_tensor_retain(v);
  fbx_tensor_release(v);
  ck_assert_int_eq(fbx_storage_refcount(a->storage), 3);

  /* base dies first; the views keep the storage */
  fbx_tensor_release(a);
  ck_assert_int_eq(fbx_storage_refcount(v->storage), 2);
  ck_assert_int_eq(fbx_tensor_get_i64(v, 2), -5); /* v[0][2] = a[2][0] */
  fbx_tensor_release(v);
  ck_assert_int_eq(fbx_tensor_get_i64(row, 0), -5);
  fbx_tensor_release(row);

  /* view of a view with explicit base offset */
  OK(fbx_tensor_empty(&a, FBX_DTYPE_FLOAT32, 2, sizes));
  int64_t cs = 3, cst = 4;
  OK(fbx_tensor_view(&v, a, 1, &cs, &cst, a->offset + 1)); /* column 1 */
  OK(fbx_tensor_view(&row, v, 0, NULL, NULL, v->offset + 4)); /* a[1][1] as 0-d */
  fbx_tensor_set_f64(row, 0, 2.5);
  ck_assert(fbx_tensor_get_f64(a, 5) == 2.5);
  ck_assert(fbx_tensor_get_f64(v, 1) == 2.5);
  fbx_tensor_release(row);
  fbx_tensor_release(v);
  fbx_tensor_release(a);
}
END_TEST

START_TEST(test_view_bounds) {
  int64_t sizes[2] = {3, 4};
  fbx_tensor *a, *v = NULL;
  OK(fbx_tensor_empty(&a, FBX_DTYPE_FLOAT64, 2, sizes));
  int64_t s[2] = {3, 5};
  expect_err(fbx_tensor_view(&v, a, 2, s, NULL, 0), FBX_ERR_INVALID_ARG, "out of bounds");
  int64_t s1 = 4;
  expect_err(fbx_tensor_view(&v, a, 1, &s1, NULL, 9), FBX_ERR_INVALID_ARG, "out of bounds");
  expect_err(fbx_tensor_view(&v, a, 1, &s1, NULL, -1), FBX_ERR_INVALID_ARG, "out of bounds");
  int64_t st = -1;
  expect_err(fbx_tensor_view(&v, a, 1, &s1, &st, 4), FBX_ERR_INVALID_ARG, "negative stride");
  int64_t big = INT64_MAX / 2, bst = 3;
  int64_t s2[2] = {2, 2}, hst[2] = {INT64_MAX / 4, 1};
  expect_err(fbx_tensor_view(&v, a, 1, &big, &bst, 0), FBX_ERR_INVALID_ARG, "");
  expect_err(fbx_tensor_view(&v, a, 2, s2, hst, 0), FBX_ERR_INVALID_ARG, "");
  ck_assert_ptr_null(v);
  /* exactly at the end is fine; empty views may sit at the end */
  OK(fbx_tensor_view(&v, a, 1, &s1, NULL, 8));
  fbx_tensor_release(v);
  int64_t z = 0;
  OK(fbx_tensor_view(&v, a, 1, &z, NULL, 12));
  fbx_tensor_release(v);
  /* stride-0 broadcast view */
  int64_t bs[2] = {5, 4}, bz[2] = {0, 1};
  OK(fbx_tensor_view(&v, a, 2, bs, bz, 0));
  ck_assert(!fbx_tensor_is_contiguous(v));
  fbx_tensor_release(v);
  fbx_tensor_release(a);
}
END_TEST

START_TEST(test_contiguity) {
  int64_t sizes[3] = {2, 1, 3};
  fbx_tensor *a, *v, *c;
  OK(fbx_tensor_empty(&a, FBX_DTYPE_INT16, 3, sizes));
  int64_t odd[3] = {3, 99, 1}; /* size-1 dim with any stride is still contiguous */
  OK(fbx_tensor_view(&v, a, 3, sizes, odd, 0));
  ck_assert(fbx_tensor_is_contiguous(v));
  OK(fbx_tensor_contiguous(&c, v));
  ck_assert_ptr_eq(c, v);
  fbx_tensor_release(c);
  fbx_tensor_release(v);

  for (int i = 0; i < 6; i++) fbx_tensor_set_i64(a, i, i * 10);
  int64_t ts[2] = {3, 2}, tst[2] = {1, 3};
  OK(fbx_tensor_view(&v, a, 2, ts, tst, 0));
  OK(fbx_tensor_contiguous(&c, v));
  ck_assert_ptr_ne(c, v);
  ck_assert(fbx_tensor_is_contiguous(c));
  ck_assert_ptr_ne(c->storage, a->storage);
  int16_t want[6] = {0, 30, 10, 40, 20, 50};
  ck_assert_int_eq(memcmp(c->data, want, sizeof want), 0);
  fbx_tensor_release(c);
  fbx_tensor_release(v);
  fbx_tensor_release(a);
}
END_TEST

/* ---- the copy kernel --------------------------------------------------- */

START_TEST(test_copy_all_pairs) {
  for (int si = 0; si < NALL; si++) {
    for (int di = 0; di < NALL; di++) {
      fbx_dtype S = ALL[si], D = ALL[di];
      int64_t sizes[2] = {3, 5};
      fbx_tensor *src, *dst, *base, *view;

      /* contiguous -> contiguous */
      OK(fbx_tensor_empty(&src, S, 2, sizes));
      fill(src);
      OK(fbx_tensor_empty(&dst, D, 2, sizes));
      OK(fbx_tensor_copy_(dst, src));
      check_copy(dst, src);

      /* transposed source -> contiguous */
      int64_t ts[2] = {5, 3}, tst[2] = {1, 5};
      OK(fbx_tensor_view(&view, src, 2, ts, tst, 0));
      fbx_tensor *dst2;
      OK(fbx_tensor_empty(&dst2, D, 2, ts));
      OK(fbx_tensor_copy_(dst2, view));
      check_copy(dst2, view);
      fbx_tensor_release(dst2);
      fbx_tensor_release(view);

      /* contiguous -> every other column of a wider dst, at an offset */
      int64_t bsz[2] = {4, 11};
      OK(fbx_tensor_zeros(&base, D, 2, bsz));
      int64_t vst[2] = {11, 2};
      OK(fbx_tensor_view(&view, base, 2, sizes, vst, 12));
      OK(fbx_tensor_copy_(view, src));
      check_copy(view, src);
      ck_assert(fbx_tensor_get_f64(base, 13) == 0); /* untouched gap */
      fbx_tensor_release(view);
      fbx_tensor_release(base);

      /* broadcast a row and a 0-d source */
      int64_t rs[2] = {1, 5};
      fbx_tensor *row, *s0;
      OK(fbx_tensor_view(&row, src, 2, rs, NULL, 5));
      OK(fbx_tensor_copy_(dst, row));
      check_copy(dst, row);
      OK(fbx_tensor_view(&s0, src, 0, NULL, NULL, 4));
      OK(fbx_tensor_copy_(dst, s0));
      check_copy(dst, s0);
      fbx_tensor_release(s0);
      fbx_tensor_release(row);
      fbx_tensor_release(dst);
      fbx_tensor_release(src);
    }
  }
}
END_TEST

/* Higher-rank permuted, sliced layouts, same and different dtypes. */
START_TEST(test_copy_strided_layouts) {
  int64_t bs[4] = {3, 4, 5, 6};
  fbx_tensor *base;
  OK(fbx_tensor_empty(&base, FBX_DTYPE_FLOAT32, 4, bs));
  fill(base);
  static const int perms[][4] = {{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 0, 3, 2}, {2, 3, 0, 1}, {0, 2, 1, 3}};
  fbx_dtype dts[3] = {FBX_DTYPE_FLOAT32, FBX_DTYPE_FLOAT64, FBX_DTYPE_BFLOAT16};
  for (size_t p = 0; p < sizeof perms / sizeof perms[0]; p++) {
    for (int slice = 0; slice < 2; slice++) {
      int64_t sz[4], st[4], off = slice ? 1 : 0;
      for (int i = 0; i < 4; i++) {
        int d = perms[p][i];
        sz[i] = bs[d] - (slice && d == 3 ? 3 : 0);
        st[i] = base->strides[d] * (slice && d == 3 ? 2 : 1);
      }
      if (slice) sz[0] = sz[0] > 1 ? sz[0] - 1 : sz[0];
      fbx_tensor *v;
      OK(fbx_tensor_view(&v, base, 4, sz, st, off));
      for (int k = 0; k < 3; k++) {
        fbx_tensor *c, *pd;
        OK(fbx_tensor_empty(&c, dts[k], 4, sz));
        OK(fbx_tensor_copy_(c, v));
        check_copy(c, v);
        /* and into a permuted (non-contiguous) destination */
        int64_t psz[4] = {sz[3], sz[2], sz[1], sz[0]};
        fbx_tensor *pbase;
        OK(fbx_tensor_empty(&pbase, dts[k], 4, psz));
        int64_t pst[4] = {pbase->strides[3], pbase->strides[2], pbase->strides[1], pbase->strides[0]};
        OK(fbx_tensor_view(&pd, pbase, 4, sz, pst, 0));
        OK(fbx_tensor_copy_(pd, v));
        check_copy(pd, v);
        fbx_tensor_release(pd);
        fbx_tensor_release(pbase);
        fbx_tensor_release(c);
      }
      fbx_tensor_release(v);
    }
  }
  fbx_tensor_release(base);
}
END_TEST

/* Transposes big enough for the kernel's cache tiling, with partial tiles. */
START_TEST(test_copy_tiled) {
  int64_t bs[3] = {3, 40, 37};
  fbx_tensor *base;
  OK(fbx_tensor_empty(&base, FBX_DTYPE_INT32, 3, bs));
  fill(base);
  static const int perms[][3] = {{0, 2, 1}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}};
  fbx_dtype dts[3] = {FBX_DTYPE_INT32, FBX_DTYPE_FLOAT64, FBX_DTYPE_INT8};
  for (size_t p = 0; p < sizeof perms / sizeof perms[0]; p++) {
    for (int step = 1; step <= 2; step++) {
      int64_t sz[3], st[3];
      for (int i = 0; i < 3; i++) {
        int d = perms[p][i];
        sz[i] = d == 1 ? bs[d] / step : bs[d];
        st[i] = base->strides[d] * (d == 1 ? step : 1);
      }
      fbx_tensor *v;
      OK(fbx_tensor_view(&v, base, 3, sz, st, 0));
      for (int k = 0; k < 3; k++) {
        fbx_tensor *c;
        OK(fbx_tensor_empty(&c, dts[k], 3, sz));
        OK(fbx_tensor_copy_(c, v));
        check_copy(c, v);
        fbx_tensor_release(c);
      }
      fbx_tensor_release(v);
    }
  }
  fbx_tensor_release(base);
}
END_TEST

START_TEST(test_copy_conversion_rules) {
  int64_t n = 8;
  double vals[8] = {300.0, -1.0, 1e30, NAN, -0.0, 2.9, -2.9, 0.5};
  fbx_tensor *src, *u8, *i64, *b, *h;
  OK(fbx_tensor_from_data(&src, FBX_DTYPE_FLOAT64, 1, &n, vals));
  OK(fbx_tensor_empty(&u8, FBX_DTYPE_UINT8, 1, &n));
  OK(fbx_tensor_empty(&i64, FBX_DTYPE_INT64, 1, &n));
  OK(fbx_tensor_empty(&b, FBX_DTYPE_BOOL, 1, &n));
  OK(fbx_tensor_empty(&h, FBX_DTYPE_FLOAT16, 1, &n));
  OK(fbx_tensor_copy_(u8, src));
  OK(fbx_tensor_copy_(i64, src));
  OK(fbx_tensor_copy_(b, src));
  OK(fbx_tensor_copy_(h, src));
  const uint8_t *pu = u8->data, *pb = b->data;
  const int64_t *pi = i64->data;
  ck_assert_int_eq(pu[0], 44);  /* 300 wraps, as torch.tensor(300.).to(torch.uint8) */
  ck_assert_int_eq(pu[1], 255);
  ck_assert(pi[2] == INT64_MIN && pi[3] == INT64_MIN);
  ck_assert(pi[5] == 2 && pi[6] == -2);
  ck_assert_int_eq(pb[3], 1); /* NaN is true */
  ck_assert_int_eq(pb[4], 0);
  ck_assert_int_eq(pb[7], 1);
  ck_assert(isinf(fbx_tensor_get_f64(h, 2)));
  ck_assert(isnan(fbx_tensor_get_f64(h, 3)));
  ck_assert(signbit(fbx_tensor_get_f64(h, 4)));
  fbx_tensor_release(src);
  fbx_tensor_release(u8);
  fbx_tensor_release(i64);
  fbx_tensor_release(b);
  fbx_tensor_release(h);
}
END_TEST

START_TEST(test_copy_shape_errors) {
  int64_t a[2] = {2, 3}, b[2] = {2, 4}, c[3] = {1, 2, 3};
  fbx_tensor *x, *y, *z;
  OK(fbx_tensor_zeros(&x, FBX_DTYPE_FLOAT32, 2, a));
  OK(fbx_tensor_zeros(&y, FBX_DTYPE_FLOAT32, 2, b));
  OK(fbx_tensor_zeros(&z, FBX_DTYPE_FLOAT32, 3, c));
  expect_err(fbx_tensor_copy_(x, y), FBX_ERR_INVALID_ARG, "[2, 4] does not broadcast to [2, 3]");
  expect_err(fbx_tensor_copy_(x, z), FBX_ERR_INVALID_ARG, "does not broadcast");
  OK(fbx_tensor_copy_(z, x));
  fbx_tensor_release(x);
  fbx_tensor_release(y);
  fbx_tensor_release(z);
}
END_TEST

START_TEST(test_copy_overlapping) {
  int64_t n = 10;
  fbx_tensor *a, *lo, *hi;
  OK(fbx_tensor_empty(&a, FBX_DTYPE_INT32, 1, &n));
  for (int i = 0; i < 10; i++) fbx_tensor_set_i64(a, i, i);
  int64_t m = 9;
  OK(fbx_tensor_view(&lo, a, 1, &m, NULL, 0));
  OK(fbx_tensor_view(&hi, a, 1, &m, NULL, 1));
  ck_assert(fbx_tensor_may_overlap(lo, hi));
  OK(fbx_tensor_copy_(hi, lo)); /* a[1:] = a[:-1] must act as if src were read first */
  for (int i = 1; i < 10; i++) ck_assert_int_eq(fbx_tensor_get_i64(a, i), i - 1);
  OK(fbx_tensor_copy_(hi, hi)); /* identical view: no-op */
  /* reversed-stride aliasing: a 2x5 and its transpose */
  int64_t s2[2] = {2, 5}, t2[2] = {5, 2}, tst[2] = {1, 5};
  fbx_tensor *m2, *mt, *c;
  OK(fbx_tensor_view(&m2, a, 2, s2, NULL, 0));
  OK(fbx_tensor_view(&mt, a, 2, t2, tst, 0));
  OK(fbx_tensor_clone_as(&c, mt, FBX_DTYPE_INT32));
  int64_t s10 = 10;
  fbx_tensor *flat;
  OK(fbx_tensor_view(&flat, c, 1, &s10, NULL, 0));
  int64_t sq[2] = {5, 2};
  fbx_tensor *dstv;
  OK(fbx_tensor_view(&dstv, a, 2, sq, NULL, 0));
  OK(fbx_tensor_copy_(dstv, mt)); /* a.view(5,2).copy_(a.view(2,5).t()) */
  for (int i = 0; i < 10; i++)
    ck_assert_int_eq(fbx_tensor_get_i64(a, i), fbx_tensor_get_i64(flat, i));
  fbx_tensor_release(dstv);
  fbx_tensor_release(flat);
  fbx_tensor_release(c);
  fbx_tensor_release(mt);
  fbx_tensor_release(m2);
  fbx_tensor_release(lo);
  fbx_tensor_release(hi);
  fbx_tensor_release(a);
}
END_TEST

START_TEST(test_may_overlap) {
  int64_t sizes[2] = {4, 4};
  fbx_tensor *a, *b, *top, *bottom, *col0, *col1, *empty, *other;
  OK(fbx_tensor_empty(&a, FBX_DTYPE_FLOAT32, 2, sizes));
  OK(fbx_tensor_empty(&other, FBX_DTYPE_FLOAT32, 2, sizes));
  int64_t hs[2] = {2, 4};
  OK(fbx_tensor_view(&top, a, 2, hs, NULL, 0));
  OK(fbx_tensor_view(&bottom, a, 2, hs, NULL, 8));
  ck_assert(!fbx_tensor_may_overlap(top, bottom));
  ck_assert(fbx_tensor_may_overlap(top, a));
  ck_assert(fbx_tensor_may_overlap(a, a));
  ck_assert(!fbx_tensor_may_overlap(a, other));
  int64_t cs = 4, cst = 4;
  OK(fbx_tensor_view(&col0, a, 1, &cs, &cst, 0));
  OK(fbx_tensor_view(&col1, a, 1, &cs, &cst, 1));
  ck_assert(fbx_tensor_may_overlap(col0, col1)); /* conservative: interleaved */
  int64_t z = 0;
  OK(fbx_tensor_view(&empty, a, 1, &z, NULL, 3));
  ck_assert(!fbx_tensor_may_overlap(empty, a));
  int64_t one = 1;
  OK(fbx_tensor_view(&b, a, 1, &one, NULL, 7));
  ck_assert(fbx_tensor_may_overlap(b, top));
  ck_assert(!fbx_tensor_may_overlap(b, bottom));
  fbx_tensor *t[] = {a, b, top, bottom, col0, col1, empty, other};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) fbx_tensor_release(t[i]);
}
END_TEST

/* ---- float16 / bfloat16 ------------------------------------------------ */

static fbx_tensor *load(const char *rel) {
  fbx_tensor *t;
  OK(fbx_npy_read_file(&t, tu_src_path(rel)));
  return t;
}

START_TEST(test_half_vs_numpy) {
  /* numpy produced half_out_f2.npy as half_in_f4.astype(float16) */
  fbx_tensor *in = load("tests/data/npy/half_in_f4.npy");
  fbx_tensor *out = load("tests/data/npy/half_out_f2.npy");
  ck_assert_int_eq(in->numel, out->numel);
  ck_assert_int_ge(in->numel, 3000);
  const float *x = in->data;
  const uint16_t *h = out->data;
  for (int64_t i = 0; i < in->numel; i++)
    ck_assert_msg(fbx_float_to_half(x[i]) == h[i], "float_to_half(%a) = %#x, numpy %#x", x[i],
                  fbx_float_to_half(x[i]), h[i]);
  fbx_tensor_release(in);
  fbx_tensor_release(out);

  /* numpy produced half_bits_as_f4.npy as half_bits_f2.astype(float32) */
  fbx_tensor *hb = load("tests/data/npy/half_bits_f2.npy");
  fbx_tensor *hf = load("tests/data/npy/half_bits_as_f4.npy");
  for (int64_t i = 0; i < hb->numel; i++) {
    float got = fbx_half_to_float(((uint16_t *)hb->data)[i]), want = ((float *)hf->data)[i];
    ck_assert_msg(memcmp(&got, &want, 4) == 0, "half_to_float(%#x)",
                  ((uint16_t *)hb->data)[i]);
  }
  fbx_tensor_release(hb);
  fbx_tensor_release(hf);

  /* every half survives half -> float -> half; NaNs stay NaN */
  for (uint32_t b = 0; b < 65536; b++) {
    float f = fbx_half_to_float((uint16_t)b);
    uint16_t back = fbx_float_to_half(f);
    if ((b & 0x7c00) == 0x7c00 && (b & 0x3ff)) {
      ck_assert(isnan(f));
      ck_assert((back & 0x7c00) == 0x7c00 && (back & 0x3ff));
      ck_assert((back & 0x8000) == (b & 0x8000));
    } else {
      ck_assert_msg(back == b, "%#x -> %a -> %#x", b, f, back);
    }
  }
  ck_assert(isnan(fbx_half_to_float(fbx_float_to_half(NAN))));
}
END_TEST

START_TEST(test_bf16_vs_torch) {
  /* PyTorch produced bf16_out_i2.npy: torch.from_numpy(in).to(torch.bfloat16) bits */
  fbx_tensor *in = load("tests/data/npy/bf16_in_f4.npy");
  fbx_tensor *out = load("tests/data/npy/bf16_out_i2.npy");
  ck_assert_int_eq(in->numel, out->numel);
  for (int64_t i = 0; i < in->numel; i++) {
    float x = ((float *)in->data)[i];
    uint16_t want = (uint16_t)((int16_t *)out->data)[i];
    ck_assert_msg(fbx_float_to_bf16(x) == want, "float_to_bf16(%a) = %#x, torch %#x", x,
                  fbx_float_to_bf16(x), want);
  }
  fbx_tensor_release(in);
  fbx_tensor_release(out);
  for (uint32_t b = 0; b < 65536; b++) {
    float f = fbx_bf16_to_float((uint16_t)b);
    if (isnan(f)) {
      ck_assert(isnan(fbx_bf16_to_float(fbx_float_to_bf16(f))));
    } else {
      ck_assert_int_eq(fbx_float_to_bf16(f), b);
    }
  }
  /* a NaN whose payload is only in the low bits must not become infinity */
  uint32_t nanbits = 0x7f800001u;
  float n;
  memcpy(&n, &nanbits, 4);
  ck_assert(isnan(fbx_bf16_to_float(fbx_float_to_bf16(n))));
  ck_assert(isnan(fbx_bf16_to_float(fbx_float_to_bf16(-n))));
}
END_TEST

/* ---- summary ----------------------------------------------------------- */

START_TEST(test_summary) {
  char buf[256];
  float v[6] = {-1, 4.5f, 0, 2, 1, 1};
  int64_t s[2] = {2, 3};
  fbx_tensor *t, *tt;
  OK(fbx_tensor_from_data(&t, FBX_DTYPE_FLOAT32, 2, s, v));
  fbx_tensor_summary(buf, sizeof buf, t);
  ck_assert_str_eq(buf, "float32[2, 3] min=-1 max=4.5 mean=1.25");
  int64_t ts[2] = {3, 2}, tst[2] = {1, 3};
  OK(fbx_tensor_view(&tt, t, 2, ts, tst, 0));
  fbx_tensor_summary(buf, sizeof buf, tt);
  ck_assert_str_eq(buf, "float32[3, 2] strides=[1, 3] min=-1 max=4.5 mean=1.25");
  fbx_tensor_release(tt);
  ((float *)t->data)[1] = NAN;
  fbx_tensor_summary(buf, sizeof buf, t);
  ck_assert_str_eq(buf, "float32[2, 3] min=-1 max=2 mean=0.6 nan=1");
  for (int i = 0; i < 6; i++) ((float *)t->data)[i] = NAN;
  fbx_tensor_summary(buf, sizeof buf, t);
  ck_assert_str_eq(buf, "float32[2, 3] nan=6");
  int n = fbx_tensor_summary(buf, 8, t);
  ck_assert_int_eq(n, (int)strlen("float32[2, 3] nan=6"));
  ck_assert_str_eq(buf, "float32");
  fbx_tensor_release(t);

  int64_t x = 7;
  OK(fbx_tensor_from_data(&t, FBX_DTYPE_INT64, 0, NULL, &x));
  fbx_tensor_summary(buf, sizeof buf, t);
  ck_assert_str_eq(buf, "int64[] min=7 max=7 mean=7");
  fbx_tensor_release(t);
  int64_t es[2] = {0, 3};
  OK(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT16, 2, es));
  fbx_tensor_summary(buf, sizeof buf, t);
  ck_assert_str_eq(buf, "float16[0, 3] empty");
  fbx_tensor_release(t);
  uint8_t bv[3] = {1, 0, 1};
  int64_t b3 = 3;
  OK(fbx_tensor_from_data(&t, FBX_DTYPE_BOOL, 1, &b3, bv));
  fbx_tensor_summary(buf, sizeof buf, t);
  ck_assert_str_eq(buf, "bool[3] min=0 max=1 mean=0.666667");
  fbx_tensor_release(t);
}
END_TEST

/* ---- DLPack ------------------------------------------------------------ */

static int foreign_deleted;
static void foreign_deleter(DLManagedTensor *self) {
  foreign_deleted++;
  free(self->dl_tensor.data);
  free(self);
}

START_TEST(test_dlpack_export) {
  int64_t sizes[2] = {2, 3};
  fbx_tensor *t, *v;
  OK(fbx_tensor_empty(&t, FBX_DTYPE_BOOL, 2, sizes));
  int64_t ts[2] = {3, 2}, tst[2] = {1, 3};
  OK(fbx_tensor_view(&v, t, 2, ts, tst, 0));
  DLManagedTensor *m;
  OK(fbx_tensor_to_dlpack(&m, v));
  fbx_tensor_release(v);
  fbx_tensor_release(t);
  /* the export keeps the view (and storage) alive */
  ck_assert_int_eq(m->dl_tensor.device.device_type, kDLCPU);
  ck_assert_int_eq(m->dl_tensor.ndim, 2);
  ck_assert_int_eq(m->dl_tensor.dtype.code, FBX_DLPACK_BOOL_CODE);
  ck_assert_int_eq(m->dl_tensor.dtype.bits, 8);
  ck_assert_int_eq(m->dl_tensor.dtype.lanes, 1);
  ck_assert_int_eq(m->dl_tensor.shape[0], 3);
  ck_assert_int_eq(m->dl_tensor.strides[0], 1);
  ck_assert_int_eq(m->dl_tensor.strides[1], 3);
  ck_assert_int_eq(m->dl_tensor.byte_offset, 0);
  memset(m->dl_tensor.data, 1, 6); /* still writable memory */

  /* round trip: import the export */
  fbx_tensor *back;
  OK(fbx_tensor_from_dlpack(&back, m));
  ck_assert_int_eq(back->dtype, FBX_DTYPE_BOOL);
  ck_assert_int_eq(back->strides[1], 3);
  ck_assert_int_eq(fbx_tensor_get_i64(back, 5), 1);
  fbx_tensor_release(back); /* runs the export deleter, which frees everything */

  DLDataType dt;
  for (int i = 0; i < NALL; i++) {
    fbx_dtype d;
    ck_assert_int_eq(fbx_dtype_to_dlpack(ALL[i], &dt), 0);
    ck_assert_int_eq(fbx_dtype_from_dlpack(dt, &d), 0);
    ck_assert_int_eq(d, ALL[i]);
  }
  dt.code = kDLUInt;
  dt.bits = 8;
  dt.lanes = 1;
  fbx_dtype d;
  ck_assert_int_eq(fbx_dtype_from_dlpack(dt, &d), 0);
  ck_assert_int_eq(d, FBX_DTYPE_UINT8);
  dt.lanes = 4;
  ck_assert_int_eq(fbx_dtype_from_dlpack(dt, &d), -1);
  dt.lanes = 1;
  dt.code = kDLComplex;
  dt.bits = 64;
  ck_assert_int_eq(fbx_dtype_from_dlpack(dt, &d), -1);
}
END_TEST

static DLManagedTensor *foreign(int device, DLDataType dt, int64_t *strides) {
  DLManagedTensor *m = calloc(1, sizeof *m);
  static int64_t shape[2] = {2, 3};
  m->dl_tensor.data = calloc(1, 64);
  m->dl_tensor.device.device_type = (DLDeviceType)device;
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype = dt;
  m->dl_tensor.shape = shape;
  m->dl_tensor.strides = strides;
  m->deleter = foreign_deleter;
  return m;
}

START_TEST(test_dlpack_import) {
  DLDataType f32 = {kDLFloat, 32, 1};
  foreign_deleted = 0;
  DLManagedTensor *m = foreign(kDLCPU, f32, NULL);
  ((float *)m->dl_tensor.data)[4] = 7.0f;
  fbx_tensor *t, *v;
  OK(fbx_tensor_from_dlpack(&t, m));
  ck_assert(fbx_tensor_is_contiguous(t));
  ck_assert(fbx_tensor_get_f64(t, 4) == 7.0);
  int64_t two = 2, st = 3;
  OK(fbx_tensor_view(&v, t, 1, &two, &st, 1)); /* column 1 */
  fbx_tensor_release(t);
  ck_assert_int_eq(foreign_deleted, 0);
  ck_assert(fbx_tensor_get_f64(v, 1) == 7.0);
  fbx_tensor_release(v);
  ck_assert_int_eq(foreign_deleted, 1);

  /* failures leave ownership with the caller */
  m = foreign(kDLCUDA, f32, NULL);
  t = NULL;
  expect_err(fbx_tensor_from_dlpack(&t, m), FBX_ERR_UNSUPPORTED, "only CPU");
  DLDataType c64 = {kDLComplex, 64, 1};
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.dtype = c64;
  expect_err(fbx_tensor_from_dlpack(&t, m), FBX_ERR_UNSUPPORTED, "no fusebox dtype");
  int64_t neg[2] = {-3, 1};
  m->dl_tensor.dtype = f32;
  m->dl_tensor.strides = neg;
  expect_err(fbx_tensor_from_dlpack(&t, m), FBX_ERR_UNSUPPORTED, "negative stride");
  m->dl_tensor.strides = NULL;
  m->dl_tensor.byte_offset = 2;
  expect_err(fbx_tensor_from_dlpack(&t, m), FBX_ERR_UNSUPPORTED, "aligned");
  ck_assert_ptr_null(t);
  ck_assert_int_eq(foreign_deleted, 1);
  m->dl_tensor.byte_offset = 4; /* skip one element: legal */
  OK(fbx_tensor_from_dlpack(&t, m));
  ((float *)m->dl_tensor.data)[1] = 9.0f;
  ck_assert(fbx_tensor_get_f64(t, 0) == 9.0);
  fbx_tensor_release(t);
  ck_assert_int_eq(foreign_deleted, 2);

  /* strides given explicitly (column-major) and the borrowed DLTensor view */
  int64_t colmajor[2] = {1, 2};
  m = foreign(kDLCPU, f32, colmajor);
  for (int i = 0; i < 6; i++) ((float *)m->dl_tensor.data)[i] = (float)i;
  OK(fbx_tensor_wrap_dltensor(&t, &m->dl_tensor));
  ck_assert(fbx_tensor_get_f64(t, 1) == 2.0); /* [0][1] at 0*1 + 1*2 */
  DLTensor dl;
  OK(fbx_tensor_to_dltensor(&dl, t));
  ck_assert_ptr_eq(dl.data, m->dl_tensor.data);
  ck_assert_ptr_eq(dl.shape, t->sizes);
  ck_assert_int_eq(dl.strides[1], 2);
  fbx_tensor_release(t);
  ck_assert_int_eq(foreign_deleted, 2); /* wrap does not own */
  m->deleter(m);
  ck_assert_int_eq(foreign_deleted, 3);
}
END_TEST

/* ---- allocation failure ------------------------------------------------ */

/* A workload touching every allocating path; returns the first failure. */
static fbx_status *workload(void) {
  fbx_status *st = NULL;
  fbx_tensor *a = NULL, *v = NULL, *c = NULL, *back = NULL;
  DLManagedTensor *m = NULL;
  int64_t sizes[2] = {3, 4}, ts[2] = {4, 3}, tst[2] = {1, 4};
  if ((st = fbx_tensor_zeros(&a, FBX_DTYPE_FLOAT32, 2, sizes))) goto done;
  if ((st = fbx_tensor_view(&v, a, 2, ts, tst, 0))) goto done;
  if ((st = fbx_tensor_contiguous(&c, v))) goto done;
  if ((st = fbx_tensor_copy_(v, v))) goto done; /* identical: no temp */
  {
    int64_t n = 11;
    fbx_tensor *lo = NULL, *hi = NULL, *flat = NULL;
    if ((st = fbx_tensor_view(&flat, a, 1, &n, NULL, 0))) goto done;
    if ((st = fbx_tensor_view(&lo, a, 1, &n, NULL, 0)) ||
        (st = fbx_tensor_view(&hi, a, 1, &n, NULL, 1)) ||
        (st = fbx_tensor_copy_(hi, lo))) { /* overlap: temp allocation */
      fbx_tensor_release(lo);
      fbx_tensor_release(hi);
      fbx_tensor_release(flat);
      goto done;
    }
    fbx_tensor_release(lo);
    fbx_tensor_release(hi);
    fbx_tensor_release(flat);
  }
  if ((st = fbx_tensor_to_dlpack(&m, c))) goto done;
  if ((st = fbx_tensor_from_dlpack(&back, m))) {
    m->deleter(m);
    goto done;
  }
done:
  fbx_tensor_release(back);
  fbx_tensor_release(c);
  fbx_tensor_release(v);
  fbx_tensor_release(a);
  return st;
}

START_TEST(test_alloc_failure) {
  int succeeded = 0;
  for (long n = 0; n < 40 && !succeeded; n++) {
    fbx_alloc_fail_after(n);
    fbx_status *st = workload();
    long failures = fbx_alloc_failures();
    fbx_alloc_fail_after(-1);
    if (st) {
      ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM, "n=%ld: %s", n,
                    fbx_status_message(st));
      ck_assert_int_gt(failures, 0);
      fbx_status_free(st);
    } else {
      ck_assert_int_gt(n, 5); /* it does allocate several things */
      succeeded = 1;
    }
  }
  ck_assert(succeeded);
  /* leaks, if any, are reported by the ASan build's leak checker */
}
END_TEST


/* ---- transparent huge pages --------------------------------------------- */

/* The system's THP mode: 0 never (or no THP, or THP turned off for this
 * process by prctl, as a container runtime may do), 1 madvise, 2 always. */
static int thp_mode(void) {
#ifdef PR_GET_THP_DISABLE
  if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1) return 0;
#endif
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  if (!f) return 0;
  char line[200] = "";
  if (!fgets(line, sizeof line, f)) line[0] = 0;
  fclose(f);
  return strstr(line, "[always]") ? 2 : strstr(line, "[madvise]") ? 1 : 0;
}

/* THPeligible of the mapping holding p in /proc/self/smaps: 0 or 1, or -1
 * when the kernel does not report it. */
static int thp_eligible(const void *p) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int in = 0, r = -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    char dash;
    if (sscanf(line, "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-') {
      in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
      continue;
    }
    int v;
    if (in && sscanf(line, "THPeligible: %d", &v) == 1) {
      r = v;
      break;
    }
  }
  fclose(f);
  return r;
}

/* In a child (the advice's switch is read once per process): a tensor of
 * `bytes` with FUSEBOX_HUGE_PAGES set to `env` (NULL: unset); the exit
 * status is THPeligible of its middle + 1 (0: not reported). */
static int eligible_in_child(const char *env, int64_t bytes) {
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    if (env) setenv("FUSEBOX_HUGE_PAGES", env, 1);
    else unsetenv("FUSEBOX_HUGE_PAGES");
    int64_t n = bytes / 4;
    fbx_tensor *t = NULL;
    if (fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 1, &n)) _exit(100);
    int e = thp_eligible((const char *)t->data + bytes / 2);
    _exit(e + 1);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status));
  ck_assert_int_ne(WEXITSTATUS(status), 100);
  return WEXITSTATUS(status) - 1;
}

/* Large blocks are advised MADV_HUGEPAGE when allocated; small ones, and
 * every block with FUSEBOX_HUGE_PAGES=0, are not. Observable as the
 * mapping's THPeligible where the system's mode is madvise (under always
 * everything is eligible; under never nothing is, and then only the
 * advice's own answer is checked). */
START_TEST(test_huge_pages_advised) {
  int mode = thp_mode();
  int big = eligible_in_child(NULL, (int64_t)16 << 20);
  if (big < 0 || mode == 0) {
    fprintf(stderr, "test_huge_pages_advised: THP mode %d, THPeligible %s: only the advice's span checked\n", mode,
            big < 0 ? "not reported" : "reported");
  } else {
    ck_assert_int_eq(big, 1);
    if (mode == 1) {
      ck_assert_int_eq(eligible_in_child("0", (int64_t)16 << 20), 0);
      ck_assert_int_eq(eligible_in_child(NULL, (int64_t)1 << 20), 0);
    }
  }
  /* the span: the whole 2 MiB pages inside the block, none below the minimum */
  size_t n = (size_t)9 << 20;
  char *p = malloc(n);
  ck_assert_ptr_nonnull(p);
  size_t got = fbx_hugepages_advise(p, n);
  if (mode != 0) ck_assert(got == ((size_t)8 << 20) || got == ((size_t)6 << 20) || got == ((size_t)4 << 20));
  ck_assert_uint_eq(got % ((size_t)2 << 20), 0);
  ck_assert_uint_eq(fbx_hugepages_advise(p, FBX_HUGEPAGES_MIN - 1), 0);
  free(p);
}
END_TEST

static Suite *tensor_suite(void) {
  Suite *s = suite_create("tensor");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, test_create);
  tcase_add_test(tc, test_create_errors);
  tcase_add_test(tc, test_views_share_storage);
  tcase_add_test(tc, test_view_bounds);
  tcase_add_test(tc, test_contiguity);
  tcase_add_test(tc, test_copy_all_pairs);
  tcase_add_test(tc, test_copy_strided_layouts);
  tcase_add_test(tc, test_copy_tiled);
  tcase_add_test(tc, test_copy_conversion_rules);
  tcase_add_test(tc, test_copy_shape_errors);
  tcase_add_test(tc, test_copy_overlapping);
  tcase_add_test(tc, test_may_overlap);
  tcase_add_test(tc, test_half_vs_numpy);
  tcase_add_test(tc, test_bf16_vs_torch);
  tcase_add_test(tc, test_summary);
  tcase_add_test(tc, test_dlpack_export);
  tcase_add_test(tc, test_dlpack_import);
  tcase_add_test(tc, test_alloc_failure);
  tcase_add_test(tc, test_huge_pages_advised);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(tensor_suite());
  /* no fork: the ASan leak checker then sees every test's allocations */
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
