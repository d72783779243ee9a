/* Pointwise ops (ops/list_pointwise.h) against PyTorch 1.13's own results.
 *
 * The golden cases in tests/data/pointwise/cases.txt (and the .npy files
 * beside it) were made by tests/unit/gen_pointwise_golden.py with Debian's
 * python3-torch 1.13; see that script for the format. Each case is resolved
 * by name and positional arguments, as the interpreter does, so overload
 * resolution is checked too; PyTorch errors must be fusebox errors. Every row
 * of FBX_OPS_POINTWISE must be hit by some case (a new row without a golden
 * case fails here). Also: the engine's strided/broadcast/parallel paths
 * against a plain loop, `to` returning self, and allocation failures. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ir/symbol.h"
#include "ops/kutil.h"
#include "ops/optable.h"
#include "ops/pointwise.h"
#include "ops/vmath.h"
#include "testutil.h"
#include <fusebox/tensor.h>

#define OK(expr)                                                                    \
  do {                                                                              \
    fbx_status *st_ = (expr);                                                       \
    ck_assert_msg(st_ == NULL, "%s failed: %s", #expr, fbx_status_message(st_));    \
  } while (0)

static const char *data_path(const char *rel) {
  static char buf[4][1024];
  static int slot;
  char *b = buf[slot++ & 3];
  snprintf(b, 1024, "%s/tests/data/pointwise/%s", FBX_SOURCE_DIR, rel);
  return b;
}

/* ---- inputs ------------------------------------------------------------------------ */

#define MAX_INPUTS 64
static struct {
  char name[32];
  fbx_tensor *t;
} inputs[MAX_INPUTS];
static int ninputs;

static fbx_tensor *input(const char *name) {
  for (int i = 0; i < ninputs; i++)
    if (!strcmp(inputs[i].name, name)) return inputs[i].t;
  ck_assert_int_lt(ninputs, MAX_INPUTS);
  char rel[64];
  snprintf(rel, sizeof rel, "in/%s.npy", name);
  fbx_tensor *t = NULL;
  OK(fbx_npy_read_file(&t, data_path(rel)));
  snprintf(inputs[ninputs].name, sizeof inputs[ninputs].name, "%s", name);
  inputs[ninputs].t = t;
  ninputs++;
  return t;
}

static void free_inputs(void) {
  for (int i = 0; i < ninputs; i++) fbx_tensor_release(inputs[i].t);
  ninputs = 0;
}

/* "f32n:T:E2x3:bf16" -> a new reference */
static fbx_tensor *tensor_arg(char *spec) {
  char *save = NULL, *tok = strtok_r(spec, ":", &save);
  fbx_tensor *t = fbx_tensor_retain(input(tok));
  while ((tok = strtok_r(NULL, ":", &save))) {
    fbx_tensor *n = NULL;
    if (!strcmp(tok, "T")) {
      int64_t sz[FBX_MAX_DIMS], sd[FBX_MAX_DIMS];
      memcpy(sz, t->sizes, sizeof sz);
      memcpy(sd, t->strides, sizeof sd);
      int a = t->ndim - 2, b = t->ndim - 1;
      int64_t x = sz[a];
      sz[a] = sz[b];
      sz[b] = x;
      x = sd[a];
      sd[a] = sd[b];
      sd[b] = x;
      OK(fbx_tensor_view(&n, t, t->ndim, sz, sd, t->offset));
    } else if (tok[0] == 'E') {
      int64_t sz[FBX_MAX_DIMS];
      int nd = 0;
      for (char *p = tok + 1; *p;) {
        sz[nd++] = strtoll(p, &p, 10);
        if (*p == 'x') p++;
      }
      OK(fbx_expand_view(&n, t, nd, sz));
    } else if (!strcmp(tok, "bf16")) {
      OK(fbx_tensor_clone_as(&n, t, FBX_DTYPE_BFLOAT16));
    } else {
      ck_abort_msg("bad tensor transform %s", tok);
    }
    fbx_tensor_release(t);
    t = n;
  }
  return t;
}

static fbx_ivalue parse_arg(char *tok) {
  fbx_ivalue v = fbx_iv_none();
  if (!strncmp(tok, "t:", 2)) return fbx_iv_tensor(tensor_arg(tok + 2));
  if (!strncmp(tok, "i:", 2)) return fbx_iv_int(strtoll(tok + 2, NULL, 10));
  if (!strncmp(tok, "f:", 2)) return fbx_iv_float(strtod(tok + 2, NULL));
  if (!strncmp(tok, "b:", 2)) return fbx_iv_bool(tok[2] == '1');
  if (!strncmp(tok, "s:", 2)) {
    OK(fbx_iv_str_new(&v, tok + 2, strlen(tok + 2)));
    return v;
  }
  if (!strncmp(tok, "dev:", 4)) {
    OK(fbx_iv_device_new(&v, tok + 4));
    return v;
  }
  ck_assert_msg(!strcmp(tok, "n"), "bad argument token %s", tok);
  return v;
}

/* ---- expected values ------------------------------------------------------------------ */

static fbx_tensor *blob_f32, *blob_f64, *blob_i64, *blob_b8;

static void load_blobs(void) {
  OK(fbx_npy_read_file(&blob_f32, data_path("out_f32.npy")));
  OK(fbx_npy_read_file(&blob_f64, data_path("out_f64.npy")));
  OK(fbx_npy_read_file(&blob_i64, data_path("out_i64.npy")));
  OK(fbx_npy_read_file(&blob_b8, data_path("out_b8.npy")));
}

static void free_blobs(void) {
  fbx_tensor_release(blob_f32);
  fbx_tensor_release(blob_f64);
  fbx_tensor_release(blob_i64);
  fbx_tensor_release(blob_b8);
}

static bool close_enough(double got, double want, double rtol, double atol) {
  if (want != want) return got != got;
  if (isinf(want)) return got == want;
  if (rtol == 0 && atol == 0) return got == want && signbit(got) == signbit(want);
  return fabs(got - want) <= atol + rtol * fabs(want);
}

/* ---- one case ----------------------------------------------------------------------------- */

static bool seen[FBX_OP_COUNT];
static int nfail, ncases;

static void case_fail(const char *line, const char *fmt, ...) FBX_PRINTF(2, 3);
static void case_fail(const char *line, const char *fmt, ...) {
  if (nfail++ < 60) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s\n     %s\n", line, msg);
  }
}

static void run_case(char *line) {
  char orig[1024];
  snprintf(orig, sizeof orig, "%s", line);
  char *save = NULL;
  strtok_r(line, " ", &save); /* id */
  char *opname = strtok_r(NULL, " ", &save), *ov = strtok_r(NULL, " ", &save);
  fbx_ivalue args[FBX_SCHEMA_MAX_ARGS];
  int nargs = 0;
  char *tok;
  while ((tok = strtok_r(NULL, " ", &save)) && strcmp(tok, "=>")) args[nargs++] = parse_arg(tok);
  char *want_dt = strtok_r(NULL, " ", &save);
  double rtol = strtod(strtok_r(NULL, " ", &save), NULL), atol = strtod(strtok_r(NULL, " ", &save), NULL);
  char *blob = strtok_r(NULL, " ", &save);
  int64_t off = strtoll(strtok_r(NULL, " ", &save), NULL, 10);
  char *shape = strtok_r(NULL, " ", &save);
  ncases++;

  char full[128];
  snprintf(full, sizeof full, "aten::%s", opname);
  fbx_sym sym;
  ck_assert_int_eq(fbx_sym_intern(&sym, full, strlen(full)), 0);
  const fbx_op *op = NULL;
  fbx_status *st = fbx_op_resolve(&op, sym, args, nargs);
  fbx_ivalue out = fbx_iv_none();
  if (st) {
    case_fail(orig, "no overload: %s", fbx_status_message(st));
    fbx_status_free(st);
    goto done;
  }
  seen[op->id] = true;
  if (strcmp(op->schema.overload, strcmp(ov, "-") ? ov : "")) {
    case_fail(orig, "resolved to %s", op->schema_text);
    goto done;
  }
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS];
  OK(fbx_op_normalize_args(op, args, nargs, norm));
  fbx_kctx ctx = {.op = op};
  st = op->kernel(&ctx, norm, &out);
  if (!strcmp(want_dt, "ERR")) {
    if (!st) case_fail(orig, "PyTorch raises, fusebox returned a result");
    else if (fbx_status_code(st) != FBX_ERR_RUNTIME) case_fail(orig, "error code %s", fbx_code_name(fbx_status_code(st)));
    fbx_status_free(st);
    goto done;
  }
  if (st) {
    case_fail(orig, "error: %s", fbx_status_message(st));
    fbx_status_free(st);
    goto done;
  }
  if (out.kind != FBX_IV_TENSOR) {
    case_fail(orig, "no tensor result");
    goto done;
  }
  fbx_tensor *t = out.u.t;
  if (strcmp(fbx_dtype_name(t->dtype), want_dt)) {
    case_fail(orig, "dtype %s", fbx_dtype_name(t->dtype));
    goto done;
  }
  char got_shape[128] = "-";
  int pos = 0;
  for (int d = 0; d < t->ndim; d++)
    pos += snprintf(got_shape + pos, sizeof got_shape - (size_t)pos, "%s%lld", d ? "x" : "", (long long)t->sizes[d]);
  if (strcmp(got_shape, shape)) {
    case_fail(orig, "shape %s", got_shape);
    goto done;
  }
  const fbx_tensor *b = !strcmp(blob, "f32")   ? blob_f32
                        : !strcmp(blob, "f64") ? blob_f64
                        : !strcmp(blob, "b8")  ? blob_b8
                                               : blob_i64;
  ck_assert_int_le(off + t->numel, b->numel);
  for (int64_t i = 0; i < t->numel; i++) {
    if (b == blob_i64 || b == blob_b8) {
      int64_t g = fbx_tensor_get_i64(t, i), w = fbx_tensor_get_i64(b, off + i);
      if (g != w) {
        case_fail(orig, "element %lld: got %lld, want %lld", (long long)i, (long long)g, (long long)w);
        break;
      }
    } else {
      double g = fbx_tensor_get_f64(t, i), w = fbx_tensor_get_f64(b, off + i);
      if (!close_enough(g, w, rtol, atol)) {
        case_fail(orig, "element %lld: got %.9g, want %.9g", (long long)i, g, w);
        break;
      }
    }
  }
done:
  fbx_iv_release(&out);
  for (int i = 0; i < nargs; i++) fbx_iv_release(&args[i]);
}

START_TEST(golden_cases) {
  OK(fbx_op_table_init());
  load_blobs();
  size_t len;
  char *text = tu_read_file(data_path("cases.txt"), &len);
  ck_assert_msg(text != NULL, "cannot read cases.txt: run tests/unit/gen_pointwise_golden.py");
  char *save = NULL;
  for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
    if (line[0] != '#') run_case(line);
  free(text);
  free_inputs();
  free_blobs();
  fprintf(stderr, "pointwise golden: %d cases, %d failed\n", ncases, nfail);
  ck_assert_int_gt(ncases, 1000);
  ck_assert_msg(nfail == 0, "%d of %d golden cases failed (see stderr)", nfail, ncases);

  /* every pointwise row was exercised */
  static const int rows[] = {
#define ROW_ID_(id, schema, cat, dt, sh, flags, kernel) FBX_OP_##id,
      FBX_OPS_POINTWISE(ROW_ID_)
#undef ROW_ID_
  };
  _Static_assert(sizeof rows / sizeof rows[0] == FBX_OPS_POINTWISE_COUNT, "pointwise row count");
  int missing = 0;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
    if (!seen[rows[i]]) {
      fprintf(stderr, "no golden case for %s\n", fbx_op_get(rows[i])->schema_text);
      missing++;
    }
  ck_assert_msg(missing == 0, "%d pointwise rows have no golden case", missing);
}
END_TEST

/* ---- engine paths against a plain loop ------------------------------------------------------ */

static fbx_status *call(const char *name, fbx_ivalue *args, int nargs, fbx_ivalue *out) {
  fbx_sym sym;
  ck_assert_int_eq(fbx_sym_intern(&sym, name, strlen(name)), 0);
  const fbx_op *op;
  FBX_TRY(fbx_op_resolve(&op, sym, args, nargs));
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS];
  FBX_TRY(fbx_op_normalize_args(op, args, nargs, norm));
  fbx_kctx ctx = {.op = op};
  return op->kernel(&ctx, norm, out);
}

static fbx_tensor *ramp(fbx_dtype d, int ndim, const int64_t *sizes, double scale) {
  fbx_tensor *t = NULL;
  OK(fbx_tensor_empty(&t, d, ndim, sizes));
  for (int64_t i = 0; i < t->numel; i++) fbx_tensor_set_f64(t, i, sin((double)i * scale) * 10);
  return t;
}

/* Large (parallel), transposed, broadcast and mixed-dtype operands: a*b+... vs element loop. */
START_TEST(engine_large_strided) {
  int64_t sa[2] = {701, 409}, sb[2] = {409, 701}, sr[1] = {409};
  fbx_tensor *a = ramp(FBX_DTYPE_FLOAT32, 2, sa, 0.37), *bt = ramp(FBX_DTYPE_FLOAT32, 2, sb, 0.11);
  fbx_tensor *r = ramp(FBX_DTYPE_INT32, 1, sr, 0.5), *b = NULL;
  int64_t tsz[2] = {701, 409}, tst[2] = {1, 701};
  OK(fbx_tensor_view(&b, bt, 2, tsz, tst, 0)); /* b = bt.t() */
  struct {
    const char *op;
    fbx_tensor *x, *y;
  } cases[] = {{"aten::mul", a, b}, {"aten::sub", b, a}, {"aten::add", a, r}, {"aten::maximum", r, b}};
  for (int c = 0; c < 4; c++) {
    fbx_ivalue args[2] = {fbx_iv_tensor(cases[c].x), fbx_iv_tensor(cases[c].y)}, out = fbx_iv_none();
    OK(call(cases[c].op, args, 2, &out));
    fbx_tensor *o = out.u.t;
    ck_assert_int_eq(o->dtype, FBX_DTYPE_FLOAT32);
    ck_assert_int_eq(o->numel, 701 * 409);
    for (int64_t i = 0; i < o->numel; i++) {
      int64_t row = i / 409, col = i % 409;
      double x = cases[c].x == r ? fbx_tensor_get_f64(r, col) : fbx_tensor_get_f64(cases[c].x, i);
      double y = cases[c].y == r ? fbx_tensor_get_f64(r, col) : fbx_tensor_get_f64(cases[c].y, i);
      float want = c == 0 ? (float)x * (float)y : c == 1 ? (float)x - (float)y : c == 2 ? (float)x + (float)y
                                                                        : ((float)x > (float)y ? (float)x : (float)y);
      (void)row;
      ck_assert_msg(fbx_tensor_get_f64(o, i) == (double)want, "%s element %lld", cases[c].op, (long long)i);
    }
    fbx_iv_release(&out);
  }
  fbx_tensor_release(a);
  fbx_tensor_release(b);
  fbx_tensor_release(bt);
  fbx_tensor_release(r);
}
END_TEST

/* PyTorch's float floor division (c10 div_floor_floating), the reference for the
 * vectorized kernel: every pair must match bit for bit, signed zeros included */
static float torch_floordiv(float a, float b) {
  if (b == 0) return a / b;
  float mod = fmodf(a, b);
  float div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1;
  if (div == 0) return copysignf(0.0f, a / b);
  float fd = floorf(div);
  if (div - fd > 0.5f) fd += 1;
  return fd;
}
static uint32_t f2u(float x) { return fbx_vm_f2u(x); }
static float u2f(uint32_t u) { return fbx_vm_u2f(u); }

/* float32 floor_divide on random pairs: quotients from 2^-3 to 2^25 (both
 * sides of the kernel's 2^21 limit), exact multiples, small integers,
 * zeros, subnormals, infinities and NaN */
START_TEST(floor_divide_f32) {
  enum { N = 1 << 18 };
  int64_t n = N;
  fbx_tensor *a = NULL, *b = NULL;
  OK(fbx_tensor_empty(&a, FBX_DTYPE_FLOAT32, 1, &n));
  OK(fbx_tensor_empty(&b, FBX_DTYPE_FLOAT32, 1, &n));
  float *pa = a->data, *pb = b->data;
  static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 1.0f, -1.0f, 0x1p-149f, 3.0f};
  uint32_t seed = 12345;
  for (int i = 0; i < N; i++) {
    float x = u2f(tu_xs32(&seed)), y;
    int k = (int)(tu_xs32(&seed) % 8u);
    if (k < 4) {
      int sh = (int)(tu_xs32(&seed) % 29u) - 3;
      y = ldexpf(x, -sh) * u2f(0x3f800000u + (tu_xs32(&seed) & 0x007fffffu)) * ((tu_xs32(&seed) & 1) ? -1.0f : 1.0f);
    } else {
      y = u2f(tu_xs32(&seed));
    }
    if (k == 4) x = (float)((int32_t)tu_xs32(&seed) % 5000) * y;
    if (k == 5) x = (float)((int32_t)tu_xs32(&seed) % 100), y = (float)((int32_t)tu_xs32(&seed) % 13);
    if (k == 6) x = u2f(tu_xs32(&seed) & 0x807fffffu);
    if (k == 7) x = sp[tu_xs32(&seed) % 9u], y = (tu_xs32(&seed) & 1) ? sp[tu_xs32(&seed) % 9u] : y;
    pa[i] = x, pb[i] = y;
  }
  fbx_ivalue args[2] = {fbx_iv_tensor(a), fbx_iv_tensor(b)}, out = fbx_iv_none();
  OK(call("aten::floor_divide", args, 2, &out));
  const float *po = out.u.t->data;
  for (int i = 0; i < N; i++) {
    float want = torch_floordiv(pa[i], pb[i]);
    ck_assert_msg(f2u(po[i]) == f2u(want) || (want != want && po[i] != po[i]), "floor_divide(%a, %a) = %a, want %a",
                  (double)pa[i], (double)pb[i], (double)po[i], (double)want);
  }
  fbx_iv_release(&out);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}
END_TEST

/* mish around the threshold past which the float kernel returns x: at and
 * beside 20, mish(x) rounds to x (PyTorch 2.x: mish(20.) = 20.); 20 itself
 * once gave 12 (the exp's argument was replaced by 0 there, the result not) */
START_TEST(mish_threshold) {
  static const float xs[] = {0x1.3ffffep+4f, 20.0f, 0x1.400002p+4f, 19.0f, 21.0f, 100.0f};
  int64_t n = (int64_t)(sizeof xs / sizeof xs[0]);
  fbx_tensor *a = NULL;
  OK(fbx_tensor_empty(&a, FBX_DTYPE_FLOAT32, 1, &n));
  memcpy(a->data, xs, sizeof xs);
  fbx_ivalue args[1] = {fbx_iv_tensor(a)}, out = fbx_iv_none();
  OK(call("aten::mish", args, 1, &out));
  const float *po = out.u.t->data;
  for (int64_t i = 0; i < n; i++) ck_assert_msg(po[i] == xs[i], "mish(%a) = %a", (double)xs[i], (double)po[i]);
  fbx_iv_release(&out);
  fbx_tensor_release(a);
}
END_TEST

/* float32 pow through the block loops (both contiguous, b broadcast, a
 * strided, the Scalar overload) gives fbx_vm_powf's bits, and libm's
 * for the rare pairs (zero, subnormal and infinite bases, |b| >= 2^23) */
START_TEST(pow_f32_paths) {
  enum { N = 3000 };
  int64_t n = N, n2 = 2 * N;
  fbx_tensor *a2 = NULL, *b = NULL, *a = NULL, *one = NULL;
  OK(fbx_tensor_empty(&a2, FBX_DTYPE_FLOAT32, 1, &n2));
  OK(fbx_tensor_empty(&b, FBX_DTYPE_FLOAT32, 1, &n));
  float *pa2 = a2->data, *pb = b->data;
  static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-140f, -0x1p-140f, 1.0f, -1.0f};
  uint32_t seed = 777;
  for (int i = 0; i < 2 * N; i++) pa2[i] = (float)((int32_t)tu_xs32(&seed) % 4000) / 512.0f;
  for (int i = 0; i < N; i++) {
    pb[i] = (float)((int32_t)tu_xs32(&seed) % 2000) / 64.0f;
    if (i % 97 == 5) pa2[2 * i] = sp[tu_xs32(&seed) % 9u];
    if (i % 89 == 7) pb[i] = (tu_xs32(&seed) & 1) ? 0x1p24f + 2.0f : sp[tu_xs32(&seed) % 9u];
  }
  int64_t st = 2;
  OK(fbx_tensor_view(&a, a2, 1, &n, &st, 0)); /* every other element */
  for (int c = 0; c < 3; c++) {
    fbx_ivalue args[2] = {fbx_iv_tensor(c == 0 ? a2 : a), c == 2 ? fbx_iv_float(2.75) : fbx_iv_tensor(b)};
    fbx_ivalue out = fbx_iv_none();
    if (c == 0) { /* contiguous a with a broadcast b */
      int64_t one_n = 1;
      OK(fbx_tensor_empty(&one, FBX_DTYPE_FLOAT32, 1, &one_n));
      ((float *)one->data)[0] = -3.0f;
      args[1] = fbx_iv_tensor(one);
    }
    OK(call("aten::pow", args, 2, &out));
    const float *po = out.u.t->data;
    for (int i = 0; i < (c == 0 ? 2 * N : N); i++) {
      float x = c == 0 ? pa2[i] : pa2[2 * i], y = c == 0 ? -3.0f : (c == 2 ? 2.75f : pb[i]);
      float want = fbx_vm_pow_rare(x, y) ? (float)pow((double)x, (double)y) : fbx_vm_powf(x, y);
      ck_assert_msg(f2u(po[i]) == f2u(want) || (want != want && po[i] != po[i]), "case %d: pow(%a, %a) = %a, want %a",
                    c, (double)x, (double)y, (double)po[i], (double)want);
    }
    fbx_iv_release(&out);
  }
  fbx_tensor_release(one);
  fbx_tensor_release(a);
  fbx_tensor_release(a2);
  fbx_tensor_release(b);
}
END_TEST

/* The loops with a libm fallback (FBX_PW_LOOP1X/2X, and FBX_PW_LOOP1B
 * with lgamma's block function) give the vector function's bits, and
 * libm's for the rare elements, both on the direct path (contiguous,
 * output apart from the inputs) and through the block buffer (here the
 * output is the input itself). */
FBX_PW_LOOP1X(sin_x_f32, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_sinf(a), fbx_vm_trig_rare(a),
              (float)sin((double)a))
FBX_PW_LOOP1B(lgamma_b_f32, float, float, FBX_PW_ID, float, FBX_PW_ID, fbx_vm_lgammaf_block, fbx_vm_lgamma_rare(a),
              lgammaf(a))
FBX_PW_LOOP2X(fmod_x_f32, float, float, FBX_PW_ID, float, FBX_PW_ID, , fbx_vm_fmodf(a, b), fbx_vm_fmod_rare(a, b),
              fmodf(a, b))
START_TEST(rare_paths) {
  enum { N = 10000 };
  int64_t n = N;
  uint32_t seed = 99;
  fbx_tensor *x = NULL, *y = NULL, *o = NULL;
  OK(fbx_tensor_empty(&x, FBX_DTYPE_FLOAT32, 1, &n));
  OK(fbx_tensor_empty(&y, FBX_DTYPE_FLOAT32, 1, &n));
  OK(fbx_tensor_empty(&o, FBX_DTYPE_FLOAT32, 1, &n));
  float *px = x->data, *py = y->data, want[N];
  for (int aliased = 0; aliased < 2; aliased++) {
    for (int i = 0; i < N; i++) {
      px[i] = (float)((int32_t)tu_xs32(&seed) % 100000) / 64.0f;
      if (i % 331 == 3) px[i] = (tu_xs32(&seed) & 1) ? 1e30f : -0x1.8p20f; /* beyond the vector reduction */
      want[i] = fbx_vm_trig_rare(px[i]) ? (float)sin((double)px[i]) : fbx_vm_sinf(px[i]);
    }
    fbx_tensor *out = aliased ? x : o;
    OK(fbx_pw_map_into(NULL, out, FBX_DTYPE_FLOAT32, 1, &x, sin_x_f32, NULL));
    for (int i = 0; i < N; i++)
      ck_assert_msg(f2u(((float *)out->data)[i]) == f2u(want[i]), "sin, %s, element %d", aliased ? "in place" : "apart", i);
    for (int i = 0; i < N; i++) {
      px[i] = (float)((int32_t)tu_xs32(&seed) % 100000) / 4096.0f;
      if (i % 293 == 5) px[i] = (tu_xs32(&seed) & 1) ? -7.25f : 0.0f; /* x < -2, the pole at 0 */
      want[i] = fbx_vm_lgamma_rare(px[i]) ? lgammaf(px[i]) : fbx_vm_lgammaf(px[i]);
    }
    OK(fbx_pw_map_into(NULL, out, FBX_DTYPE_FLOAT32, 1, &x, lgamma_b_f32, NULL));
    for (int i = 0; i < N; i++)
      ck_assert_msg(f2u(((float *)out->data)[i]) == f2u(want[i]), "lgamma, %s, element %d", aliased ? "in place" : "apart", i);
    for (int i = 0; i < N; i++) {
      px[i] = (float)((int32_t)tu_xs32(&seed) % 100000) / 8.0f;
      py[i] = (float)((int32_t)tu_xs32(&seed) % 1000 + 1) / 64.0f;
      if (i % 257 == 9) py[i] = (tu_xs32(&seed) & 1) ? 0.0f : 0x1p-30f; /* b = 0, huge quotients */
      want[i] = fbx_vm_fmod_rare(px[i], py[i]) ? fmodf(px[i], py[i]) : fbx_vm_fmodf(px[i], py[i]);
    }
    fbx_tensor *ins[2] = {x, y};
    OK(fbx_pw_map_into(NULL, out, FBX_DTYPE_FLOAT32, 2, ins, fmod_x_f32, NULL));
    for (int i = 0; i < N; i++)
      ck_assert_msg(f2u(((float *)out->data)[i]) == f2u(want[i]) || (want[i] != want[i] && ((float *)out->data)[i] != ((float *)out->data)[i]),
                    "fmod, %s, element %d", aliased ? "in place" : "apart", i);
  }
  fbx_tensor_release(x);
  fbx_tensor_release(y);
  fbx_tensor_release(o);
}
END_TEST

/* nextafter in float16, which PyTorch 1.13 refuses ("not implemented for
 * 'Half'", so no golden case): fusebox steps the binary16 encoding, the
 * IEEE definition (the expected values are binary16 facts: 1 + 2^-10, the
 * subnormal 2^-24, the largest finite 65504, ...) */
START_TEST(nextafter_f16) {
  static const double x[] = {1.0, 1.0, 0.0, -0.0, 65504.0, INFINITY, -0x1p-24, 2.0, NAN, 0.0, -65504.0, 0x1p-14, 1.0};
  static const double y[] = {2.0, 0.0, -1.0, 1.0, INFINITY, 0.0, 0.0, 2.0, 1.0, -0.0, -INFINITY, 0.0, NAN};
  static const double want[] = {1.0 + 0x1p-10, 1.0 - 0x1p-11, -0x1p-24, 0x1p-24, INFINITY, 65504.0, -0.0, 2.0, NAN,
                                -0.0, -INFINITY, 0x1p-14 - 0x1p-24, NAN};
  int64_t n = (int64_t)(sizeof x / sizeof x[0]);
  fbx_tensor *a = NULL, *b = NULL;
  OK(fbx_tensor_empty(&a, FBX_DTYPE_FLOAT16, 1, &n));
  OK(fbx_tensor_empty(&b, FBX_DTYPE_FLOAT16, 1, &n));
  for (int64_t i = 0; i < n; i++) {
    fbx_tensor_set_f64(a, i, x[i]);
    fbx_tensor_set_f64(b, i, y[i]);
  }
  fbx_ivalue args[2] = {fbx_iv_tensor(a), fbx_iv_tensor(b)}, out = fbx_iv_none();
  OK(call("aten::nextafter", args, 2, &out));
  ck_assert_int_eq(out.u.t->dtype, FBX_DTYPE_FLOAT16);
  for (int64_t i = 0; i < n; i++) {
    double g = fbx_tensor_get_f64(out.u.t, i);
    ck_assert_msg(want[i] != want[i] ? g != g : (g == want[i] && signbit(g) == signbit(want[i])),
                  "nextafter(%a, %a) = %a, want %a", x[i], y[i], g, want[i]);
  }
  fbx_iv_release(&out);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}
END_TEST

/* fbx_pw_map_into writes into a strided output. */
FBX_PW_LOOP2(neg_sub_f32, float, float, FBX_PW_ID, float, FBX_PW_ID, , b - a)
START_TEST(engine_map_into) {
  int64_t s[2] = {3, 4}, st[2] = {1, 3};
  fbx_tensor *a = ramp(FBX_DTYPE_FLOAT32, 2, s, 0.3), *b = ramp(FBX_DTYPE_INT64, 2, s, 0.7), *buf = NULL, *o = NULL;
  OK(fbx_tensor_zeros(&buf, FBX_DTYPE_FLOAT32, 2, s));
  OK(fbx_tensor_view(&o, buf, 2, s, st, 0)); /* column-major output */
  fbx_tensor *ins[2] = {a, b};
  OK(fbx_pw_map_into(NULL, o, FBX_DTYPE_FLOAT32, 2, ins, neg_sub_f32, NULL));
  for (int64_t i = 0; i < 12; i++)
    ck_assert(fbx_tensor_get_f64(o, i) == (double)((float)fbx_tensor_get_f64(b, i) - (float)fbx_tensor_get_f64(a, i)));
  int64_t bad[2] = {4, 3};
  fbx_tensor *w = NULL;
  OK(fbx_tensor_empty(&w, FBX_DTYPE_FLOAT32, 2, bad));
  fbx_status *err = fbx_pw_map_into(NULL, w, FBX_DTYPE_FLOAT32, 2, ins, neg_sub_f32, NULL);
  ck_assert_ptr_nonnull(err);
  fbx_status_free(err);
  fbx_tensor_release(w);
  fbx_tensor_release(o);
  fbx_tensor_release(buf);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}
END_TEST

START_TEST(broadcast_error) {
  int64_t s1[1] = {3}, s2[1] = {4};
  fbx_tensor *a = ramp(FBX_DTYPE_FLOAT32, 1, s1, 1), *b = ramp(FBX_DTYPE_FLOAT32, 1, s2, 1);
  fbx_ivalue args[2] = {fbx_iv_tensor(a), fbx_iv_tensor(b)}, out = fbx_iv_none();
  fbx_status *st = call("aten::add", args, 2, &out);
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(strstr(fbx_status_message(st), "broadcast"), "%s", fbx_status_message(st));
  fbx_status_free(st);
  ck_assert_int_eq(out.kind, FBX_IV_NONE);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}
END_TEST

/* to() returns self when nothing changes and copy is False. */
START_TEST(to_returns_self) {
  int64_t s[1] = {5};
  fbx_tensor *a = ramp(FBX_DTYPE_FLOAT32, 1, s, 1);
  fbx_ivalue args[5] = {fbx_iv_tensor(a), fbx_iv_int(FBX_DTYPE_FLOAT32), fbx_iv_bool(false), fbx_iv_bool(false),
                        fbx_iv_none()};
  fbx_ivalue out = fbx_iv_none();
  OK(call("aten::to", args, 5, &out));
  ck_assert_ptr_eq(out.u.t, a);
  fbx_iv_release(&out);
  args[3] = fbx_iv_bool(true);
  OK(call("aten::to", args, 5, &out));
  ck_assert_ptr_ne(out.u.t, a);
  ck_assert_ptr_ne(out.u.t->data, a->data);
  fbx_iv_release(&out);
  fbx_ivalue ta[2] = {fbx_iv_tensor(a), fbx_iv_tensor(a)};
  OK(call("aten::type_as", ta, 2, &out));
  ck_assert_ptr_eq(out.u.t, a);
  fbx_iv_release(&out);
  ck_assert_int_eq(atomic_load(&a->refcount), 1);
  fbx_tensor_release(a);
}
END_TEST

/* Script scalar arithmetic (aten::add(int, int)) never resolves to a pointwise row. */
START_TEST(scalar_args_not_pointwise) {
  OK(fbx_op_table_init());
  const char *names[] = {"aten::add", "aten::mul", "aten::eq", "aten::pow", "aten::remainder", "aten::__and__"};
  for (int i = 0; i < 6; i++) {
    fbx_sym sym;
    ck_assert_int_eq(fbx_sym_intern(&sym, names[i], strlen(names[i])), 0);
    fbx_ivalue args[2] = {fbx_iv_int(2), fbx_iv_int(3)};
    const fbx_op *op = NULL;
    fbx_status *st = fbx_op_resolve(&op, sym, args, 2);
    if (st) {
      fbx_status_free(st);
      continue;
    }
    ck_assert_msg(op->category != FBX_OPCAT_BINARY, "%s(int, int) resolved to %s", names[i], op->schema_text);
  }
}
END_TEST

/* Allocation failure at every step of a broadcast, mixed-dtype add: NOMEM, no leak. */
START_TEST(alloc_failures) {
  OK(fbx_op_table_init());
  int64_t sa[2] = {3, 1}, sb[2] = {1, 5};
  fbx_tensor *a = ramp(FBX_DTYPE_FLOAT32, 2, sa, 1), *b = ramp(FBX_DTYPE_INT32, 2, sb, 1);
  int ok_at = -1;
  for (long n = 0; n < 40 && ok_at < 0; n++) {
    fbx_ivalue args[3] = {fbx_iv_tensor(a), fbx_iv_tensor(b), fbx_iv_int(2)}, out = fbx_iv_none();
    fbx_alloc_fail_after(n);
    fbx_status *st = call("aten::add", args, 3, &out);
    fbx_alloc_fail_after(-1);
    if (st) {
      ck_assert_int_eq(fbx_status_code(st), FBX_ERR_NOMEM);
      ck_assert_int_eq(out.kind, FBX_IV_NONE);
      fbx_status_free(st);
    } else {
      ck_assert_int_eq(out.u.t->numel, 15);
      fbx_iv_release(&out);
      ok_at = (int)n;
    }
  }
  ck_assert_int_gt(ok_at, 0);
  ck_assert_int_eq(atomic_load(&a->refcount), 1);
  ck_assert_int_eq(atomic_load(&b->refcount), 1);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_pointwise");
  TCase *tc = tcase_create("golden");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, golden_cases);
  suite_add_tcase(s, tc);
  tc = tcase_create("engine");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, engine_large_strided);
  tcase_add_test(tc, floor_divide_f32);
  tcase_add_test(tc, mish_threshold);
  tcase_add_test(tc, pow_f32_paths);
  tcase_add_test(tc, rare_paths);
  tcase_add_test(tc, nextafter_f16);
  tcase_add_test(tc, engine_map_into);
  tcase_add_test(tc, broadcast_error);
  tcase_add_test(tc, to_returns_self);
  tcase_add_test(tc, scalar_args_not_pointwise);
  tcase_add_test(tc, alloc_failures);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
