/* .npy reading (files numpy wrote: every dtype, byte orders, Fortran order,
 * 0-d, empty, header versions), writing (round trips, atomicity) and
 * malformed files (each must fail with the file name and the reason). */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/alloc.h"
#include "testutil.h"
#include <fusebox/tensor.h>

#define OK(expr)                                                               \
  do {                                                                         \
    fbx_status *st_ = (expr);                                                  \
    ck_assert_msg(st_ == NULL, "%s failed: %s", #expr, fbx_status_message(st_)); \
  } while (0)

static char tmpdir[256];

static void setup(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/fbx_test_npy_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void teardown(void) {
  DIR *d = opendir(tmpdir);
  if (d) {
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
      if (e->d_name[0] == '.') continue;
      snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
      unlink(p);
    }
    closedir(d);
  }
  rmdir(tmpdir);
}

static const char *tmp_path(const char *name) {
  static char slots[4][512];
  static int next;
  char *p = slots[next++ & 3];
  snprintf(p, 512, "%s/%s", tmpdir, name);
  return p;
}

static int count_files(void) {
  DIR *d = opendir(tmpdir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') n++;
  closedir(d);
  return n;
}

static fbx_tensor *load(const char *name) {
  char rel[256];
  snprintf(rel, sizeof rel, "tests/data/npy/%s", name);
  fbx_tensor *t = NULL;
  OK(fbx_npy_read_file(&t, tu_src_path(rel)));
  return t;
}

static int same_f64(double a, double b) {
  return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

/* ---- every dtype, as written by gen.py (values repeated from there) ---- */

typedef struct {
  const char *suffix;
  fbx_dtype dtype;
  double v[6];
} dtype_case;

static const dtype_case DTYPE_CASES[] = {
    {"b1", FBX_DTYPE_BOOL, {1, 0, 1, 1, 0, 0}},
    {"u1", FBX_DTYPE_UINT8, {0, 1, 2, 127, 128, 255}},
    {"i1", FBX_DTYPE_INT8, {0, -1, 2, 127, -128, 5}},
    {"i2", FBX_DTYPE_INT16, {0, -1, 300, 32767, -32768, 5}},
    {"i4", FBX_DTYPE_INT32, {0, -1, 70000, 2147483647.0, -2147483648.0, 5}},
    {"i8", FBX_DTYPE_INT64, {0, -1, 5000000000.0, 0 /* checked as int */, 0, 5}},
    {"f2", FBX_DTYPE_FLOAT16, {0, -1.5, 0.0999755859375, 65504, INFINITY, -0x1p-24}},
    {"f4", FBX_DTYPE_FLOAT32, {0, -1.5, (double)0.1f, (double)3.4028235e38f, NAN, (double)1e-45f}},
    {"f8", FBX_DTYPE_FLOAT64, {0, -1.5, 0.1, 1e308, -INFINITY, 5e-324}},
};
#define NCASES ((int)(sizeof DTYPE_CASES / sizeof DTYPE_CASES[0]))

static void check_case(const fbx_tensor *t, const dtype_case *c, const char *file) {
  ck_assert_msg(t->dtype == c->dtype, "%s: dtype %s", file, fbx_dtype_name(t->dtype));
  ck_assert_int_eq(t->ndim, 2);
  ck_assert_int_eq(t->sizes[0], 2);
  ck_assert_int_eq(t->sizes[1], 3);
  ck_assert(fbx_tensor_is_contiguous(t));
  for (int i = 0; i < 6; i++) {
    if (c->dtype == FBX_DTYPE_INT64) {
      static const int64_t want[6] = {0, -1, 5000000000LL, INT64_MAX, INT64_MIN, 5};
      ck_assert_msg(fbx_tensor_get_i64(t, i) == want[i], "%s[%d]", file, i);
    } else {
      double got = fbx_tensor_get_f64(t, i);
      ck_assert_msg(same_f64(got, c->v[i]), "%s[%d] = %a, want %a", file, i, got, c->v[i]);
    }
  }
}

START_TEST(test_read_every_dtype) {
  char name[64];
  for (int i = 0; i < NCASES; i++) {
    snprintf(name, sizeof name, "dt_%s.npy", DTYPE_CASES[i].suffix);
    fbx_tensor *t = load(name);
    check_case(t, &DTYPE_CASES[i], name);
    fbx_tensor_release(t);
  }
}
END_TEST

START_TEST(test_read_big_endian_and_spellings) {
  char name[64];
  for (int i = 0; i < NCASES; i++) {
    const dtype_case *c = &DTYPE_CASES[i];
    if (fbx_dtype_size(c->dtype) == 1) continue;
    snprintf(name, sizeof name, "be_%s.npy", c->suffix);
    fbx_tensor *t = load(name);
    check_case(t, c, name);
    fbx_tensor_release(t);
  }
  static const struct { const char *file; int idx; } spell[] = {
      {"native_f4.npy", 7}, {"lt_u1.npy", 1}, {"pipe_i8.npy", 5}};
  for (int i = 0; i < 3; i++) {
    fbx_tensor *t = load(spell[i].file);
    check_case(t, &DTYPE_CASES[spell[i].idx], spell[i].file);
    fbx_tensor_release(t);
  }
}
END_TEST

START_TEST(test_read_fortran) {
  fbx_tensor *t = load("fortran_f4.npy");
  ck_assert_int_eq(t->dtype, FBX_DTYPE_FLOAT32);
  ck_assert_int_eq(t->ndim, 3);
  ck_assert_int_eq(t->strides[0], 1);
  ck_assert_int_eq(t->strides[1], 2);
  ck_assert_int_eq(t->strides[2], 6);
  ck_assert(!fbx_tensor_is_contiguous(t));
  for (int i = 0; i < 24; i++) ck_assert(fbx_tensor_get_f64(t, i) == i);
  /* write back: C order, same logical values */
  const char *p = tmp_path("f.npy");
  OK(fbx_npy_write_file(p, t));
  fbx_tensor *c;
  OK(fbx_npy_read_file(&c, p));
  ck_assert(fbx_tensor_is_contiguous(c));
  for (int i = 0; i < 24; i++) ck_assert(((float *)c->data)[i] == i);
  fbx_tensor_release(c);
  fbx_tensor_release(t);

  t = load("fortran_i8.npy");
  ck_assert_int_eq(t->strides[0], 1);
  ck_assert_int_eq(t->strides[1], 2);
  for (int i = 0; i < 6; i++) ck_assert_int_eq(fbx_tensor_get_i64(t, i), i);
  fbx_tensor_release(t);
}
END_TEST

START_TEST(test_read_scalar_and_empty) {
  fbx_tensor *t = load("scalar_f8.npy");
  ck_assert_int_eq(t->ndim, 0);
  ck_assert_int_eq(t->numel, 1);
  double v;
  OK(fbx_tensor_item_f64(&v, t));
  ck_assert(v == 3.25);
  fbx_tensor_release(t);
  t = load("scalar_b1.npy");
  ck_assert_int_eq(t->ndim, 0);
  ck_assert_int_eq(t->dtype, FBX_DTYPE_BOOL);
  ck_assert_int_eq(fbx_tensor_get_i64(t, 0), 1);
  fbx_tensor_release(t);

  t = load("empty_f4.npy");
  ck_assert_int_eq(t->ndim, 2);
  ck_assert_int_eq(t->sizes[0], 0);
  ck_assert_int_eq(t->sizes[1], 3);
  ck_assert_int_eq(t->numel, 0);
  fbx_tensor_release(t);
  t = load("empty_i4.npy");
  ck_assert_int_eq(t->ndim, 3);
  ck_assert_int_eq(t->sizes[1], 0);
  ck_assert_int_eq(t->sizes[2], 4);
  ck_assert_int_eq(t->dtype, FBX_DTYPE_INT32);
  fbx_tensor_release(t);
  t = load("empty_1d_f8.npy");
  ck_assert_int_eq(t->ndim, 1);
  ck_assert_int_eq(t->numel, 0);
  fbx_tensor_release(t);
}
END_TEST

START_TEST(test_read_versions) {
  fbx_tensor *t = load("v2_i2.npy");
  ck_assert_int_eq(t->dtype, FBX_DTYPE_INT16);
  ck_assert_int_eq(t->sizes[0], 3);
  ck_assert_int_eq(t->sizes[1], 2);
  for (int i = 0; i < 6; i++) ck_assert_int_eq(fbx_tensor_get_i64(t, i), i - 3);
  fbx_tensor_release(t);
  t = load("v3_f4.npy");
  ck_assert_int_eq(t->ndim, 1);
  for (int i = 0; i < 4; i++) ck_assert(fbx_tensor_get_f64(t, i) == i / 4.0);
  fbx_tensor_release(t);
}
END_TEST

START_TEST(test_read_mem_matches_file) {
  size_t len;
  char *buf = tu_read_file(tu_src_path("tests/data/npy/fortran_f4.npy"), &len);
  ck_assert_ptr_nonnull(buf);
  fbx_tensor *a, *b = load("fortran_f4.npy");
  OK(fbx_npy_read_mem(&a, buf, len, "mem.npy"));
  ck_assert_int_eq(a->numel, b->numel);
  for (int i = 0; i < 3; i++) ck_assert_int_eq(a->strides[i], b->strides[i]);
  for (int i = 0; i < 24; i++) ck_assert(fbx_tensor_get_f64(a, i) == fbx_tensor_get_f64(b, i));
  fbx_tensor_release(a);
  fbx_tensor_release(b);
  free(buf);
}
END_TEST

/* ---- writing ----------------------------------------------------------- */

START_TEST(test_round_trip_all_dtypes) {
  static const fbx_dtype dts[] = {FBX_DTYPE_UINT8, FBX_DTYPE_INT8,    FBX_DTYPE_INT16,
                                  FBX_DTYPE_INT32, FBX_DTYPE_INT64,   FBX_DTYPE_FLOAT16,
                                  FBX_DTYPE_FLOAT32, FBX_DTYPE_FLOAT64, FBX_DTYPE_BOOL};
  for (size_t k = 0; k < sizeof dts / sizeof dts[0]; k++) {
    int64_t sizes[3] = {2, 3, 4};
    fbx_tensor *t, *v, *r;
    OK(fbx_tensor_empty(&t, dts[k], 3, sizes));
    for (int i = 0; i < 24; i++) fbx_tensor_set_f64(t, i, (i * 5) % 7 - (dts[k] == FBX_DTYPE_UINT8 ? 0 : 3));
    /* contiguous */
    const char *p = tmp_path("rt.npy");
    OK(fbx_npy_write_file(p, t));
    OK(fbx_npy_read_file(&r, p));
    ck_assert_int_eq(r->dtype, dts[k]);
    ck_assert(fbx_tensor_same_shape(r, t));
    ck_assert_int_eq(memcmp(r->data, t->data, 24 * fbx_dtype_size(dts[k])), 0);
    fbx_tensor_release(r);
    /* a non-contiguous view (permuted) is written in C order */
    int64_t ps[3] = {4, 2, 3}, pst[3] = {1, 12, 4};
    OK(fbx_tensor_view(&v, t, 3, ps, pst, 0));
    OK(fbx_npy_write_file(p, v));
    OK(fbx_npy_read_file(&r, p));
    ck_assert(fbx_tensor_is_contiguous(r));
    ck_assert(fbx_tensor_same_shape(r, v));
    for (int i = 0; i < 24; i++) ck_assert(fbx_tensor_get_f64(r, i) == fbx_tensor_get_f64(v, i));
    fbx_tensor_release(r);
    fbx_tensor_release(v);
    fbx_tensor_release(t);
  }
  ck_assert_int_eq(count_files(), 1); /* no temporaries left behind */

  /* 0-d and empty */
  fbx_tensor *s, *r;
  int64_t x = -42;
  OK(fbx_tensor_from_data(&s, FBX_DTYPE_INT64, 0, NULL, &x));
  OK(fbx_npy_write_file(tmp_path("s.npy"), s));
  OK(fbx_npy_read_file(&r, tmp_path("s.npy")));
  ck_assert_int_eq(r->ndim, 0);
  ck_assert_int_eq(fbx_tensor_get_i64(r, 0), -42);
  fbx_tensor_release(r);
  fbx_tensor_release(s);
  int64_t es[2] = {3, 0};
  OK(fbx_tensor_empty(&s, FBX_DTYPE_FLOAT16, 2, es));
  OK(fbx_npy_write_file(tmp_path("e.npy"), s));
  OK(fbx_npy_read_file(&r, tmp_path("e.npy")));
  ck_assert(fbx_tensor_same_shape(r, s));
  ck_assert_int_eq(r->numel, 0);
  fbx_tensor_release(r);
  fbx_tensor_release(s);
}
END_TEST

START_TEST(test_written_header_layout) {
  int64_t n = 5;
  fbx_tensor *t;
  OK(fbx_tensor_zeros(&t, FBX_DTYPE_FLOAT32, 1, &n));
  OK(fbx_npy_write_file(tmp_path("h.npy"), t));
  fbx_tensor_release(t);
  size_t len;
  char *b = tu_read_file(tmp_path("h.npy"), &len);
  ck_assert_int_eq(len, 128 + 20); /* the 58-byte dict pads to 128 */
  ck_assert_int_eq(memcmp(b, "\x93NUMPY\x01\x00", 8), 0);
  ck_assert_int_eq((unsigned char)b[8] | (unsigned char)b[9] << 8, 118);
  ck_assert(strstr(b + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }"));
  ck_assert_int_eq(b[127], '\n');
  free(b);
}
END_TEST

/* numpy itself must accept what we write (skipped without python3+numpy). */
START_TEST(test_numpy_reads_ours) {
  char *out = NULL;
  if (tu_run("/usr/bin/python3 -c 'import numpy'", &out) != 0) {
    free(out);
    return;
  }
  free(out);
  int64_t sizes[2] = {2, 3};
  fbx_tensor *t, *v;
  OK(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT16, 2, sizes));
  for (int i = 0; i < 6; i++) fbx_tensor_set_f64(t, i, i * 0.5);
  int64_t ts[2] = {3, 2}, tst[2] = {1, 3};
  OK(fbx_tensor_view(&v, t, 2, ts, tst, 0));
  OK(fbx_npy_write_file(tmp_path("np.npy"), v));
  fbx_tensor_release(t);
  OK(fbx_tensor_from_data(&t, FBX_DTYPE_BOOL, 2, sizes, "\1\0\1\1\0\1"));
  fbx_tensor_release(v);
  OK(fbx_npy_write_file(tmp_path("npb.npy"), t));
  fbx_tensor_release(t);
  char cmd[2048];
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 -c \"import numpy as np; a = np.load('%s'); "
           "assert a.dtype == np.float16 and a.shape == (3, 2), a; "
           "assert (a == (np.arange(6) * 0.5).reshape(2, 3).T).all(), a; "
           "b = np.load('%s'); assert b.dtype == np.bool_ and b.tolist() == "
           "[[True, False, True], [True, False, True]], b; print('ok')\"",
           tmp_path("np.npy"), tmp_path("npb.npy"));
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "numpy rejected our file: %s", out);
  free(out);
}
END_TEST

START_TEST(test_write_errors_are_atomic) {
  int64_t n = 4;
  fbx_tensor *t, *bf, *r;
  OK(fbx_tensor_zeros(&t, FBX_DTYPE_INT32, 1, &n));
  fbx_tensor_set_i64(t, 0, 11);
  const char *p = tmp_path("keep.npy");
  OK(fbx_npy_write_file(p, t));

  /* bfloat16 has no numpy dtype: nothing is written */
  OK(fbx_tensor_zeros(&bf, FBX_DTYPE_BFLOAT16, 1, &n));
  fbx_status *st = fbx_npy_write_file(p, bf);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "bfloat16"));
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "keep.npy"));
  fbx_status_free(st);
  fbx_tensor_release(bf);

  /* a directory that does not exist */
  st = fbx_npy_write_file(tmp_path("nodir/x.npy"), t);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_IO);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "nodir/x.npy"));
  fbx_status_free(st);

  /* a non-contiguous write whose copy cannot be allocated leaves the old file */
  int64_t two = 2, st2 = 2;
  fbx_tensor *v;
  OK(fbx_tensor_view(&v, t, 1, &two, &st2, 0));
  fbx_tensor_set_i64(t, 0, 99);
  for (long k = 0; k < 3; k++) {
    fbx_alloc_fail_after(k);
    st = fbx_npy_write_file(p, v);
    fbx_alloc_fail_after(-1);
    if (!st) break;
    ck_assert_int_eq(fbx_status_code(st), FBX_ERR_NOMEM);
    fbx_status_free(st);
    OK(fbx_npy_read_file(&r, p));
    ck_assert_int_eq(r->numel, 4);
    ck_assert_int_eq(fbx_tensor_get_i64(r, 0), 11);
    fbx_tensor_release(r);
  }
  fbx_tensor_release(v);
  ck_assert_int_eq(count_files(), 1);

  /* an existing file is replaced */
  OK(fbx_npy_write_file(p, t));
  OK(fbx_npy_read_file(&r, p));
  ck_assert_int_eq(fbx_tensor_get_i64(r, 0), 99);
  fbx_tensor_release(r);
  fbx_tensor_release(t);
  ck_assert_int_eq(count_files(), 1);
}
END_TEST

START_TEST(test_read_alloc_failure) {
  const char *p = tu_src_path("tests/data/npy/fortran_f4.npy");
  int ok = 0;
  for (long k = 0; k < 20 && !ok; k++) {
    fbx_tensor *t = NULL;
    fbx_alloc_fail_after(k);
    fbx_status *st = fbx_npy_read_file(&t, p);
    fbx_alloc_fail_after(-1);
    if (st) {
      ck_assert_int_eq(fbx_status_code(st), FBX_ERR_NOMEM);
      ck_assert_ptr_null(t);
      fbx_status_free(st);
    } else {
      fbx_tensor_release(t);
      ok = 1;
    }
  }
  ck_assert(ok);
}
END_TEST

/* ---- malformed files --------------------------------------------------- */

/* Build a .npy image: preamble for `version`, header dict padded to 64,
 * then `data`. */
static size_t build(unsigned char *out, int version, const char *dict, const void *data,
                    size_t dlen) {
  size_t pre = version == 1 ? 10 : 12, hn = strlen(dict);
  size_t hlen = (pre + hn + 1 + 63) / 64 * 64 - pre;
  memcpy(out, "\x93NUMPY", 6);
  out[6] = (unsigned char)version;
  out[7] = 0;
  out[8] = (unsigned char)(hlen & 0xff);
  out[9] = (unsigned char)(hlen >> 8);
  if (version != 1) out[10] = out[11] = 0;
  memcpy(out + pre, dict, hn);
  memset(out + pre + hn, ' ', hlen - hn - 1);
  out[pre + hlen - 1] = '\n';
  if (dlen) memcpy(out + pre + hlen, data, dlen);
  return pre + hlen + dlen;
}

#define D(descr, fortran, shape) \
  "{'descr': '" descr "', 'fortran_order': " fortran ", 'shape': " shape ", }"

typedef struct {
  const char *file;   /* name used for the on-disk copy */
  const char *reason; /* substring the message must contain */
  fbx_code code;
} bad_case;

static size_t make_bad(int i, unsigned char *b, bad_case *c) {
  static const unsigned char zeros[256];
  size_t n;
  switch (i) {
    case 0:
      *c = (bad_case){"magic.npy", "bad magic", FBX_ERR_PARSE};
      n = build(b, 1, D("<f4", "False", "(2,)"), zeros, 8);
      b[1] = 'X';
      return n;
    case 1:
      *c = (bad_case){"short.npy", "truncated .npy preamble", FBX_ERR_PARSE};
      memcpy(b, "\x93NUMPY\x01", 7);
      return 7;
    case 2:
      *c = (bad_case){"version.npy", "unsupported .npy format version 4.0", FBX_ERR_UNSUPPORTED};
      n = build(b, 1, D("<f4", "False", "(2,)"), zeros, 8);
      b[6] = 4;
      return n;
    case 3:
      *c = (bad_case){"trunchdr.npy", "truncated header: 118 bytes announced, 40 present",
                      FBX_ERR_PARSE};
      build(b, 1, D("<f4", "False", "(2,)"), zeros, 8);
      b[8] = 118;
      return 50;
    case 4:
      *c = (bad_case){"notdict.npy", "header is not a dict (starts with \"[1, 2]", FBX_ERR_PARSE};
      return build(b, 1, "[1, 2]", zeros, 0);
    case 5:
      *c = (bad_case){"complex.npy", "unsupported dtype '<c8' (complex numbers)",
                      FBX_ERR_UNSUPPORTED};
      return build(b, 1, D("<c8", "False", "(2,)"), zeros, 16);
    case 6:
      *c = (bad_case){"object.npy", "unsupported dtype '|O' (Python objects", FBX_ERR_UNSUPPORTED};
      return build(b, 1, D("|O", "False", "(2,)"), zeros, 16);
    case 7:
      *c = (bad_case){"uint16.npy", "unsupported dtype '<u2'", FBX_ERR_UNSUPPORTED};
      return build(b, 1, D("<u2", "False", "(2,)"), zeros, 4);
    case 8:
      *c = (bad_case){"negative.npy", "shape has a negative dimension", FBX_ERR_PARSE};
      return build(b, 1, D("<f4", "False", "(2, -5)"), zeros, 0);
    case 9:
      *c = (bad_case){"x.npy", "data is 24 bytes, shape (2, 5) of <f4 needs 40", FBX_ERR_PARSE};
      return build(b, 1, D("<f4", "False", "(2, 5)"), zeros, 24);
    case 10:
      *c = (bad_case){"trailing.npy", "data is 48 bytes, shape (2, 5) of <f4 needs 40 (trailing",
                      FBX_ERR_PARSE};
      return build(b, 1, D("<f4", "False", "(2, 5)"), zeros, 48);
    case 11:
      *c = (bad_case){"huge.npy", "shape (1099511627776, 1099511627776, 1099511627776) of <f8 is too large",
                      FBX_ERR_PARSE};
      return build(b, 1, D("<f8", "False", "(1099511627776, 1099511627776, 1099511627776)"), zeros, 8);
    case 12:
      *c = (bad_case){"bigshape.npy", "data is 8 bytes, shape (1099511627776,) of <f8 needs 8796093022208",
                      FBX_ERR_PARSE};
      return build(b, 2, D("<f8", "False", "(1099511627776,)"), zeros, 8);
    case 13:
      *c = (bad_case){"nokey.npy", "header lacks the key 'shape'", FBX_ERR_PARSE};
      return build(b, 1, "{'descr': '<f4', 'fortran_order': False}", zeros, 0);
    case 14:
      *c = (bad_case){"extrakey.npy", "unexpected or repeated key 'extra'", FBX_ERR_PARSE};
      return build(b, 1, "{'descr': '<f4', 'extra': 1, 'fortran_order': False, 'shape': ()}",
                   zeros, 4);
    case 15:
      *c = (bad_case){"fortran.npy", "fortran_order must be True or False", FBX_ERR_PARSE};
      return build(b, 1, D("<f4", "maybe", "(2,)"), zeros, 8);
    case 16:
      *c = (bad_case){"unterminated.npy", "malformed header: expected ',' or '}' at end of header",
                      FBX_ERR_PARSE};
      return build(b, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", zeros, 8);
    case 17:
      *c = (bad_case){"structured.npy", "structured dtypes are not supported", FBX_ERR_UNSUPPORTED};
      return build(b, 1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                   zeros, 8);
    case 18:
      *c = (bad_case){"empty.npy", "bad magic", FBX_ERR_PARSE};
      return 0;
    case 19:
      *c = (bad_case){"dims.npy", "more than 16 dimensions", FBX_ERR_UNSUPPORTED};
      return build(b, 1, D("<f4", "False", "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)"), zeros, 4);
    case 20:
      *c = (bad_case){"float_dim.npy", "expected ',' or ')' in shape", FBX_ERR_PARSE};
      return build(b, 1, D("<f4", "False", "(2.5,)"), zeros, 8);
    case 21:
      *c = (bad_case){"junk.npy", "junk after the header dict", FBX_ERR_PARSE};
      return build(b, 1, D("<f4", "False", "(2,)") " xyz", zeros, 8);
    case 22:
      *c = (bad_case){"overflow_dim.npy", "does not fit in 64 bits", FBX_ERR_PARSE};
      return build(b, 1, D("<f4", "False", "(99999999999999999999,)"), zeros, 8);
    case 23:
      *c = (bad_case){"v2trunc.npy", "truncated .npy preamble", FBX_ERR_PARSE};
      memcpy(b, "\x93NUMPY\x02\x00\x10\x00", 10);
      return 10;
    default:
      return (size_t)-1;
  }
}

START_TEST(test_malformed) {
  unsigned char *buf = malloc(4096);
  int ncases = 0;
  for (int i = 0;; i++) {
    bad_case c;
    size_t n = make_bad(i, buf, &c);
    if (n == (size_t)-1) break;
    ncases++;
    const char *p = tmp_path(c.file);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    if (n) ck_assert_int_eq(fwrite(buf, 1, n, f), n);
    fclose(f);
    for (int mode = 0; mode < 2; mode++) {
      fbx_tensor *t = NULL;
      fbx_status *st = mode ? fbx_npy_read_mem(&t, buf, n, c.file) : fbx_npy_read_file(&t, p);
      ck_assert_msg(st != NULL, "%s: no error", c.file);
      const char *msg = fbx_status_message(st);
      ck_assert_msg(strstr(msg, mode ? c.file : p) == msg, "%s: message lacks the file: %s",
                    c.file, msg);
      ck_assert_msg(strstr(msg, c.reason) != NULL, "%s: message '%s' lacks '%s'", c.file, msg,
                    c.reason);
      ck_assert_msg(fbx_status_code(st) == c.code, "%s: code %s", c.file,
                    fbx_code_name(fbx_status_code(st)));
      ck_assert_ptr_null(t);
      fbx_status_free(st);
    }
    unlink(p);
  }
  ck_assert_int_ge(ncases, 12);
  free(buf);

  fbx_tensor *t = NULL;
  fbx_status *st = fbx_npy_read_file(&t, tmp_path("missing.npy"));
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_IO);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "missing.npy: cannot open"));
  fbx_status_free(st);
}
END_TEST

/* Every truncation of a valid file fails cleanly (never crashes). */
START_TEST(test_every_truncation) {
  size_t len;
  char *buf = tu_read_file(tu_src_path("tests/data/npy/dt_f8.npy"), &len);
  for (size_t n = 0; n < len; n++) {
    fbx_tensor *t = NULL;
    fbx_status *st = fbx_npy_read_mem(&t, buf, n, "cut.npy");
    ck_assert_msg(st != NULL, "prefix of %zu bytes accepted", n);
    ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "cut.npy: "));
    fbx_status_free(st);
  }
  free(buf);
}
END_TEST

static Suite *npy_suite(void) {
  Suite *s = suite_create("npy");
  TCase *tc = tcase_create("npy");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, test_read_every_dtype);
  tcase_add_test(tc, test_read_big_endian_and_spellings);
  tcase_add_test(tc, test_read_fortran);
  tcase_add_test(tc, test_read_scalar_and_empty);
  tcase_add_test(tc, test_read_versions);
  tcase_add_test(tc, test_read_mem_matches_file);
  tcase_add_test(tc, test_round_trip_all_dtypes);
  tcase_add_test(tc, test_written_header_layout);
  tcase_add_test(tc, test_numpy_reads_ours);
  tcase_add_test(tc, test_write_errors_are_atomic);
  tcase_add_test(tc, test_read_alloc_failure);
  tcase_add_test(tc, test_malformed);
  tcase_add_test(tc, test_every_truncation);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(npy_suite());
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
