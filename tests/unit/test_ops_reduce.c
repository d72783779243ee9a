/* Reductions and composite ops (ops/list_reduce.h) against PyTorch 1.13.
 *
 * The golden cases (tests/data/reduce/cases.txt, written by
 * tests/unit/gen_reduce_golden.py) name an op, its positional arguments
 * (tensors from .npy files, optionally viewed transposed/expanded or
 * converted) and PyTorch's results, or that PyTorch raised and which words
 * our message must contain. Each case is resolved through the op table
 * exactly as the interpreter would (fbx_op_resolve with the positional
 * values TorchScript passes), so the overload order of the rows is tested
 * too. Every row of the family must be exercised by at least one case
 * (checked by iterating the X-macro list). Literal tests cover what the
 * table can't: accuracy of a 2^22-element float32 sum, dropout's random
 * mask, allocation failures.
 *
 * test_ops_linalg.c reuses this file for ops/list_linalg.h: it includes it
 * with FBX_REDUCE_TEST_LINALG defined. */
#include <check.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ir/symbol.h"
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

#define RT_ID_(id, schema, cat, dt, sh, flags, kernel) FBX_OP_##id,
#ifdef FBX_REDUCE_TEST_LINALG
static const int family_ids[] = {FBX_OPS_LINALG(RT_ID_)};
#define FAMILY "linalg"
#else
static const int family_ids[] = {FBX_OPS_REDUCE(RT_ID_)};
#define FAMILY "reduce"
#endif
#undef RT_ID_
#define NFAMILY ((int)(sizeof family_ids / sizeof family_ids[0]))

static bool in_family(int id) {
  for (int i = 0; i < NFAMILY; i++)
    if (family_ids[i] == id) return true;
  return false;
}

static void release_all(fbx_ivalue *v, int n) {
  for (int i = 0; i < n; i++) fbx_iv_release(&v[i]);
}

/* ---- the golden cases --------------------------------------------------------------------- */

static fbx_tensor *load_tensor_tok(const char *tok) {
  /* T:<file>[:t][:e<AxB>][:c<code>] */
  char buf[256], path[512];
  snprintf(buf, sizeof buf, "%s", tok + 2);
  char *save = NULL, *part = strtok_r(buf, ":", &save);
  snprintf(path, sizeof path, "%s", tu_src_path("tests/data/reduce"));
  size_t len = strlen(path);
  snprintf(path + len, sizeof path - len, "/%s", part);
  fbx_tensor *t = NULL, *v = NULL;
  OK(fbx_npy_read_file(&t, path));
  while ((part = strtok_r(NULL, ":", &save))) {
    if (part[0] == 't') {
      int64_t sz[FBX_MAX_DIMS], sd[FBX_MAX_DIMS];
      int n = t->ndim;
      ck_assert_int_ge(n, 2);
      memcpy(sz, t->sizes, sizeof sz), memcpy(sd, t->strides, sizeof sd);
      sz[n - 2] = t->sizes[n - 1], sz[n - 1] = t->sizes[n - 2];
      sd[n - 2] = t->strides[n - 1], sd[n - 1] = t->strides[n - 2];
      OK(fbx_tensor_view(&v, t, n, sz, sd, t->offset));
    } else if (part[0] == 'e') {
      int64_t sz[FBX_MAX_DIMS];
      int n = 0;
      for (char *p = part + 1; *p; p++) {
        sz[n++] = strtoll(p, &p, 10);
        if (!*p) break;
      }
      OK(fbx_expand_view(&v, t, n, sz));
    } else if (part[0] == 'c') {
      OK(fbx_tensor_clone_as(&v, t, (fbx_dtype)atoi(part + 1)));
    } else {
      ck_abort_msg("bad tensor modifier %s", part);
    }
    fbx_tensor_release(t);
    t = v;
  }
  return t;
}

static fbx_ivalue parse_arg(const char *tok) {
  fbx_ivalue v = fbx_iv_none();
  switch (tok[0]) {
    case 'T': return fbx_iv_tensor(load_tensor_tok(tok));
    case 'i': return fbx_iv_int(strtoll(tok + 2, NULL, 10));
    case 'f': return fbx_iv_float(strtod(tok + 2, NULL));
    case 'b': return fbx_iv_bool(tok[2] == '1');
    case 'N': return v;
    case 's': OK(fbx_iv_str_new(&v, tok + 2, strlen(tok + 2))); return v;
    case 'L': {
      OK(fbx_iv_list_new(&v, 4));
      for (const char *p = tok + 2; *p;) {
        char *end;
        long long x = strtoll(p, &end, 10);
        OK(fbx_iv_list_push(&v, fbx_iv_int(x)));
        p = *end == ',' ? end + 1 : end;
      }
      return v;
    }
    case 'B': {
      OK(fbx_iv_list_new(&v, 4));
      for (const char *p = tok + 2; *p; p++)
        if (*p == '0' || *p == '1') OK(fbx_iv_list_push(&v, fbx_iv_bool(*p == '1')));
      return v;
    }
    default: ck_abort_msg("bad argument token %s", tok);
  }
  return v;
}

/* got vs want (dtype code `code`; bfloat16 expectations are float32 data). */
static void compare(const char *name, int k, const fbx_tensor *got, const fbx_tensor *want, int code, double rtol,
                    double atol) {
  ck_assert_msg(got->dtype == (fbx_dtype)code, "%s out%d: dtype %s, want %s", name, k, fbx_dtype_name(got->dtype),
                fbx_dtype_name((fbx_dtype)code));
  ck_assert_msg(got->ndim == want->ndim, "%s out%d: %d dims, want %d", name, k, got->ndim, want->ndim);
  for (int i = 0; i < got->ndim; i++)
    ck_assert_msg(got->sizes[i] == want->sizes[i], "%s out%d: size[%d] %lld, want %lld", name, k, i,
                  (long long)got->sizes[i], (long long)want->sizes[i]);
  bool floating = fbx_dtype_is_floating(got->dtype);
  for (int64_t i = 0; i < got->numel; i++) {
    if (floating) {
      double g = fbx_tensor_get_f64(got, i), w = fbx_tensor_get_f64(want, i);
      bool ok = (isnan(g) && isnan(w)) || g == w || fabs(g - w) <= atol + rtol * fabs(w);
      ck_assert_msg(ok, "%s out%d[%lld]: got %.9g, want %.9g", name, k, (long long)i, g, w);
    } else {
      int64_t g = fbx_tensor_get_i64(got, i), w = fbx_tensor_get_i64(want, i);
      ck_assert_msg(g == w, "%s out%d[%lld]: got %lld, want %lld", name, k, (long long)i, (long long)g,
                    (long long)w);
    }
  }
}

static bool seen[FBX_OP_COUNT];

/* Run every case of this family; returns the number run. */
static int run_cases(void) {
  size_t len;
  char *text = tu_read_file(tu_src_path("tests/data/reduce/cases.txt"), &len);
  ck_assert_msg(text, "cannot read tests/data/reduce/cases.txt");
  int ran = 0;
  char *save_line = NULL;
  for (char *line = strtok_r(text, "\n", &save_line); line; line = strtok_r(NULL, "\n", &save_line)) {
    if (line[0] == '#' || !line[0]) continue;
    char *err = strstr(line, " -> E:");
    if (err) *err = 0, err += 6;
    char *save = NULL;
    const char *name = strtok_r(line, " ", &save);
    const char *kind = strtok_r(NULL, " ", &save);
    fbx_ivalue args[FBX_SCHEMA_MAX_ARGS];
    int nargs = 0;
    char *tok;
    const char *toks[64];
    int ntoks = 0;
    while ((tok = strtok_r(NULL, " ", &save))) toks[ntoks++] = tok;
    int arrow = err ? ntoks : -1;
    for (int i = 0; i < ntoks && arrow < 0; i++)
      if (!strcmp(toks[i], "->")) arrow = i;
    ck_assert_msg(arrow >= 0, "%s: no ->", name);
    /* skip cases of the other family (the kind's rows tell) before loading data */
    fbx_sym sym;
    ck_assert_int_eq(fbx_sym_intern(&sym, kind, strlen(kind)), 0);
    const fbx_op *const *rows;
    int nrows = fbx_op_overloads(sym, &rows);
    ck_assert_msg(nrows > 0, "%s: op %s is not in the table", name, kind);
    bool mine = false;
    for (int i = 0; i < nrows; i++) mine = mine || in_family(rows[i]->id);
    if (!mine) continue;
    for (int i = 0; i < arrow; i++) args[nargs++] = parse_arg(toks[i]);
    fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
    const fbx_op *op = NULL;
    uint64_t rng = 42;
    fbx_status *st = oprun(kind, args, nargs, outs, &op, &rng);
    if (op) seen[op->id] = true;
    if (err) {
      ck_assert_msg(st, "%s: expected an error containing '%s'", name, err);
      ck_assert_msg(fbx_status_code(st) == FBX_ERR_RUNTIME, "%s: code %s (%s)", name,
                    fbx_code_name(fbx_status_code(st)), fbx_status_message(st));
      ck_assert_msg(strstr(fbx_status_message(st), err), "%s: message '%s' lacks '%s'", name,
                    fbx_status_message(st), err);
      fbx_status_free(st);
    } else {
      ck_assert_msg(!st, "%s: %s", name, fbx_status_message(st));
      double rtol = 0, atol = 0;
      int k = 0;
      for (int i = arrow + 1; i < ntoks; i++) {
        if (!strncmp(toks[i], "tol:", 4)) {
          sscanf(toks[i] + 4, "%lf,%lf", &rtol, &atol);
          continue;
        }
      }
      for (int i = arrow + 1; i < ntoks; i++) {
        if (strncmp(toks[i], "O:", 2)) continue;
        if (!strcmp(toks[i], "O:N")) { /* an undefined result */
          ck_assert_msg(k < op->schema.nrets && outs[k].kind == FBX_IV_NONE, "%s: output %d is not None", name, k);
          k++;
          continue;
        }
        char file[128];
        int code;
        const char *c2 = strchr(toks[i] + 2, ':');
        snprintf(file, sizeof file, "T:%.*s", (int)(c2 - toks[i] - 2), toks[i] + 2);
        code = atoi(c2 + 1);
        fbx_tensor *want = load_tensor_tok(file);
        ck_assert_msg(k < op->schema.nrets && outs[k].kind == FBX_IV_TENSOR, "%s: output %d missing", name, k);
        compare(name, k, outs[k].u.t, want, code, rtol, atol);
        fbx_tensor_release(want);
        k++;
      }
      ck_assert_int_eq(k, op->schema.nrets);
      release_all(outs, op->schema.nrets);
    }
    release_all(args, nargs);
    ran++;
  }
  free(text);
  return ran;
}

START_TEST(test_golden_cases) {
  OK(fbx_op_table_init());
  int ran = run_cases();
  ck_assert_int_gt(ran, 10);
  for (int i = 0; i < NFAMILY; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)family_ids[i]);
    ck_assert_msg(seen[family_ids[i]], "row %s (%s) has no golden case", op->id_name, op->schema_text);
  }
}
END_TEST

START_TEST(test_rows_well_formed) {
  OK(fbx_op_table_init());
  for (int i = 0; i < NFAMILY; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)family_ids[i]);
    ck_assert_ptr_nonnull(op->kernel);
#ifdef FBX_REDUCE_TEST_LINALG
    ck_assert_int_eq(op->category, FBX_OPCAT_LINALG);
#else
    ck_assert(op->category == FBX_OPCAT_REDUCTION || op->category == FBX_OPCAT_COMPOSITE);
#endif
    ck_assert_msg(!(op->flags & FBX_OPF_SIDE_EFFECT), "%s", op->id_name);
  }
}
END_TEST

/* ---- helpers for literal tests -------------------------------------------------------- */

static fbx_tensor *make_f32(int ndim, const int64_t *sizes, const float *data) {
  fbx_tensor *t = NULL;
  OK(fbx_tensor_from_data(&t, FBX_DTYPE_FLOAT32, ndim, sizes, data));
  return t;
}

static inline fbx_ivalue int_list(int n, const int64_t *v) {
  fbx_ivalue l;
  OK(fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) OK(fbx_iv_list_push(&l, fbx_iv_int(v[i])));
  return l;
}

/* Run op with fault injection after n = 0, 1, ... allocations until it
 * succeeds; every failure must be FBX_ERR_NOMEM (leaks are ASan's job). */
static void fail_allocations(const char *kind, fbx_ivalue *args, int nargs) {
  int n;
  for (n = 0; n < 200; n++) {
    fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
    const fbx_op *op = NULL;
    fbx_alloc_fail_after(n);
    fbx_status *st = oprun(kind, args, nargs, outs, &op, NULL);
    fbx_alloc_fail_after(-1);
    if (!st) {
      release_all(outs, op->schema.nrets);
      break;
    }
    ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM, "%s with %d allocations: %s", kind, n,
                  fbx_status_message(st));
    for (int i = 0; op && i < op->schema.nrets; i++) ck_assert_int_eq(outs[i].kind, FBX_IV_NONE);
    fbx_status_free(st);
  }
  ck_assert_int_lt(n, 200);
  ck_assert_int_gt(n, 0);
}

#ifndef FBX_REDUCE_TEST_LINALG

/* ---- literal tests: reductions ------------------------------------------------------------- */

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 11;
}

/* A float32 sum of 2^22 values must be within 1e-5 (relative) of the
 * float64 sum; also with a sum over rows and through the dim overload. */
START_TEST(test_sum_accuracy) {
  OK(fbx_op_table_init());
  int64_t n = (int64_t)1 << 22;
  float *d = malloc(sizeof(float) * (size_t)n);
  uint64_t s = 7;
  double ref = 0;
  for (int64_t i = 0; i < n; i++) {
    /* positive-biased, so cancellation does not hide accumulated error */
    d[i] = (float)((double)lcg(&s) / 9007199254740992.0 * 2.0 - 0.25) * 1000.0f;
    ref += d[i];
  }
  fbx_tensor *x = make_f32(1, &n, d);
  free(d);
  fbx_ivalue args[4] = {fbx_iv_tensor(x), fbx_iv_none()}, outs[1];
  OK(oprun("aten::sum", args, 2, outs, NULL, NULL));
  double got = fbx_tensor_get_f64(outs[0].u.t, 0);
  ck_assert_msg(fabs(got - ref) <= 1e-5 * fabs(ref), "sum %.9g vs float64 %.9g", got, ref);
  release_all(outs, 1);
  /* mean through mean.dim with a single dim list */
  int64_t d0 = 0;
  fbx_ivalue margs[4] = {args[0], int_list(1, &d0), fbx_iv_bool(true), fbx_iv_none()};
  OK(oprun("aten::mean", margs, 4, outs, NULL, NULL));
  ck_assert_int_eq(outs[0].u.t->ndim, 1);
  got = fbx_tensor_get_f64(outs[0].u.t, 0);
  ck_assert_msg(fabs(got - ref / (double)n) <= 1e-5 * fabs(ref / (double)n), "mean %.9g", got);
  release_all(outs, 1);
  fbx_iv_release(&margs[1]);
  fbx_iv_release(&args[0]);
}
END_TEST

/* A long row split across threads gives the same index as a serial scan. */
START_TEST(test_long_row_argmax) {
  OK(fbx_op_table_init());
  int64_t n = 300000;
  float *d = calloc((size_t)n, sizeof(float));
  d[250001] = 5, d[250002] = 5, d[70000] = 4;
  fbx_tensor *x = make_f32(1, &n, d);
  free(d);
  fbx_ivalue args[3] = {fbx_iv_tensor(x), fbx_iv_none(), fbx_iv_bool(false)}, outs[2];
  OK(oprun("aten::argmax", args, 3, outs, NULL, NULL));
  ck_assert_int_eq(fbx_tensor_get_i64(outs[0].u.t, 0), 250001);
  release_all(outs, 1);
  fbx_tensor_set_f64(x, 100, NAN);
  fbx_tensor_set_f64(x, 200000, NAN);
  fbx_ivalue dargs[3] = {args[0], fbx_iv_int(0), fbx_iv_bool(false)};
  OK(oprun("aten::max", dargs, 3, outs, NULL, NULL));
  ck_assert(isnan(fbx_tensor_get_f64(outs[0].u.t, 0)));
  ck_assert_int_eq(fbx_tensor_get_i64(outs[1].u.t, 0), 100);
  release_all(outs, 2);
  /* var of a long row, two passes in segments */
  fbx_tensor_set_f64(x, 100, 0);
  fbx_tensor_set_f64(x, 200000, 0);
  fbx_ivalue vargs[2] = {args[0], fbx_iv_bool(false)};
  OK(oprun("aten::var", vargs, 2, outs, NULL, NULL));
  double mean = (5.0 + 5 + 4) / (double)n, want = (25.0 + 25 + 16) / (double)n - mean * mean;
  ck_assert_msg(fabs(fbx_tensor_get_f64(outs[0].u.t, 0) - want) < 1e-6 * want, "var %g want %g",
                fbx_tensor_get_f64(outs[0].u.t, 0), want);
  release_all(outs, 1);
  fbx_iv_release(&args[0]);
}
END_TEST

/* Overloads resolve from what TorchScript passes positionally. */
START_TEST(test_overload_resolution) {
  OK(fbx_op_table_init());
  float d[6] = {1, 2, 3, 4, 5, 6};
  int64_t sz[2] = {2, 3}, one = 1;
  fbx_tensor *x = make_f32(2, sz, d);
  fbx_ivalue outs[2];
  const fbx_op *op;
  fbx_ivalue a1[2] = {fbx_iv_tensor(x), fbx_iv_int(FBX_DTYPE_FLOAT64)};
  OK(oprun("aten::sum", a1, 2, outs, &op, NULL));
  ck_assert_int_eq(op->id, FBX_OP_sum);
  ck_assert_int_eq(outs[0].u.t->dtype, FBX_DTYPE_FLOAT64);
  release_all(outs, 1);
  fbx_ivalue a2[4] = {a1[0], int_list(1, &one), fbx_iv_bool(true), fbx_iv_bool(false)};
  OK(oprun("aten::var", a2, 4, outs, &op, NULL));
  ck_assert_int_eq(op->id, FBX_OP_var_dim);
  release_all(outs, 1);
  fbx_ivalue a3[4] = {a1[0], a2[1], fbx_iv_int(0), fbx_iv_bool(false)};
  OK(oprun("aten::std", a3, 4, outs, &op, NULL));
  ck_assert_int_eq(op->id, FBX_OP_std_correction);
  ck_assert_double_eq_tol(fbx_tensor_get_f64(outs[0].u.t, 0), sqrt(2.0 / 3.0), 1e-6);
  release_all(outs, 1);
  fbx_ivalue a4[4] = {a1[0], fbx_iv_none(), fbx_iv_none(), fbx_iv_bool(false)};
  OK(oprun("aten::var", a4, 4, outs, &op, NULL));
  ck_assert_int_eq(op->id, FBX_OP_var_correction);
  release_all(outs, 1);
  fbx_ivalue a5[1] = {a1[0]};
  OK(oprun("aten::max", a5, 1, outs, &op, NULL));
  ck_assert_int_eq(op->id, FBX_OP_max);
  release_all(outs, 1);
  fbx_iv_release(&a2[1]);
  fbx_iv_release(&a1[0]);
}
END_TEST

START_TEST(test_dropout_train) {
  OK(fbx_op_table_init());
  int64_t n = 20000;
  fbx_tensor *x = NULL;
  OK(fbx_tensor_empty(&x, FBX_DTYPE_FLOAT32, 1, &n));
  for (int64_t i = 0; i < n; i++) ((float *)x->data)[i] = 1.0f;
  fbx_ivalue args[3] = {fbx_iv_tensor(x), fbx_iv_float(0.25), fbx_iv_bool(true)}, outs[1];
  uint64_t rng = 1;
  OK(oprun("aten::dropout", args, 3, outs, NULL, &rng));
  int64_t kept = 0;
  for (int64_t i = 0; i < n; i++) {
    double v = fbx_tensor_get_f64(outs[0].u.t, i);
    ck_assert(v == 0 || fabs(v - 1 / 0.75) < 1e-6);
    kept += v != 0;
  }
  ck_assert_msg(labs((long)kept - 15000) < 400, "kept %lld of 20000 at p=0.25", (long long)kept);
  ck_assert(rng != 1); /* the generator advanced */
  release_all(outs, 1);
  /* p = 1 drops everything; no generator is an error; eval returns the input itself */
  args[1] = fbx_iv_float(1.0);
  OK(oprun("aten::dropout", args, 3, outs, NULL, &rng));
  ck_assert_double_eq(fbx_tensor_get_f64(outs[0].u.t, 7), 0);
  release_all(outs, 1);
  fbx_status *st = oprun("aten::dropout", args, 3, outs, NULL, NULL);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_RUNTIME);
  ck_assert_ptr_nonnull(strstr(fbx_status_message(st), "random generator"));
  fbx_status_free(st);
  args[2] = fbx_iv_bool(false);
  OK(oprun("aten::dropout", args, 3, outs, NULL, NULL));
  ck_assert_ptr_eq(outs[0].u.t, x);
  release_all(outs, 1);
  fbx_iv_release(&args[0]);
}
END_TEST

/* batch_norm in training mode leaves the running statistics alone. */
START_TEST(test_batch_norm_training_keeps_stats) {
  OK(fbx_op_table_init());
  float d[8] = {1, 2, 3, 4, 5, 6, 7, 8}, m[2] = {0.5f, 0.25f}, v[2] = {2, 3};
  int64_t sz[2] = {4, 2}, c = 2;
  fbx_ivalue args[9] = {fbx_iv_tensor(make_f32(2, sz, d)), fbx_iv_none(), fbx_iv_none(),
                        fbx_iv_tensor(make_f32(1, &c, m)), fbx_iv_tensor(make_f32(1, &c, v)), fbx_iv_bool(true),
                        fbx_iv_float(0.1), fbx_iv_float(1e-5), fbx_iv_bool(false)};
  fbx_ivalue outs[1];
  OK(oprun("aten::batch_norm", args, 9, outs, NULL, NULL));
  ck_assert_double_eq(fbx_tensor_get_f64(args[3].u.t, 0), 0.5);
  ck_assert_double_eq(fbx_tensor_get_f64(args[4].u.t, 1), 3);
  /* channel 0 holds 1 3 5 7: mean 4, biased var 5 */
  ck_assert_double_eq_tol(fbx_tensor_get_f64(outs[0].u.t, 0), -3 / sqrt(5 + 1e-5), 1e-6);
  release_all(outs, 1);
  release_all(args, 9);
}
END_TEST

/* layer_norm of rows equal to -0.0: every result is +0, as PyTorch 2.x gives
 * it (its kernel adds a zero bias when none is given), with and without a
 * weight, on the float32 row kernel (n = 1, 2, 40) */
START_TEST(test_layer_norm_zero_sign) {
  OK(fbx_op_table_init());
  static const int64_t ns[] = {1, 2, 40};
  for (int with_w = 0; with_w < 2; with_w++)
    for (int k = 0; k < 3; k++) {
      int64_t n = ns[k], sz[2] = {2, n};
      float d[80], wd[40];
      for (int i = 0; i < 2 * n; i++) d[i] = -0.0f;
      for (int i = 0; i < n; i++) wd[i] = i % 2 ? -2.0f : 3.0f;
      fbx_ivalue args[6] = {fbx_iv_tensor(make_f32(2, sz, d)), int_list(1, &n),
                            with_w ? fbx_iv_tensor(make_f32(1, &n, wd)) : fbx_iv_none(), fbx_iv_none(),
                            fbx_iv_float(1e-5), fbx_iv_bool(true)};
      fbx_ivalue outs[1];
      OK(oprun("aten::layer_norm", args, 6, outs, NULL, NULL));
      for (int64_t i = 0; i < 2 * n; i++) {
        double v = fbx_tensor_get_f64(outs[0].u.t, i);
        ck_assert_msg(v == 0 && !signbit(v), "n %lld, weight %d, element %lld: %g", (long long)n, with_w, (long long)i, v);
      }
      release_all(outs, 1);
      release_all(args, 6);
    }
}
END_TEST

/* group_norm's zero results carry PyTorch's signs: its CPU kernel computes
 * x * scale + (bias - scale * mean), a missing bias being +0, but
 * x * scale - scale * mean when weight and bias are both missing. The
 * expected signs are PyTorch's (1.13 and 2.x agree): a [2, 4, 3] input of
 * all -0 or all +0, 2 groups, weight None, ones or -2, bias None, +0 or -0. */
START_TEST(test_group_norm_zero_sign) {
  OK(fbx_op_table_init());
  /* negative[x][w][b]: x -0, +0; w None, 1, -2; b None, +0, -0 */
  static const bool negative[2][3][3] = {{{true, false, true}, {false, false, true}, {false, false, false}},
                                         {{false, false, false}, {false, false, false}, {false, false, false}}};
  static const float wv[3] = {0, 1, -2}, bv[3] = {0, 0.0f, -0.0f};
  int64_t sz[3] = {2, 4, 3}, c4 = 4;
  for (int xi = 0; xi < 2; xi++)
    for (int wi = 0; wi < 3; wi++)
      for (int bi = 0; bi < 3; bi++) {
        float d[24], wd[4], bd[4];
        for (int i = 0; i < 24; i++) d[i] = xi ? 0.0f : -0.0f;
        for (int i = 0; i < 4; i++) wd[i] = wv[wi], bd[i] = bv[bi];
        fbx_ivalue args[6] = {fbx_iv_tensor(make_f32(3, sz, d)), fbx_iv_int(2),
                              wi ? fbx_iv_tensor(make_f32(1, &c4, wd)) : fbx_iv_none(),
                              bi ? fbx_iv_tensor(make_f32(1, &c4, bd)) : fbx_iv_none(), fbx_iv_float(1e-5),
                              fbx_iv_bool(false)};
        fbx_ivalue outs[1];
        OK(oprun("aten::group_norm", args, 6, outs, NULL, NULL));
        int wrong = 0;
        for (int64_t i = 0; i < 24; i++) {
          double v = fbx_tensor_get_f64(outs[0].u.t, i);
          wrong += v != 0 || (bool)signbit(v) != negative[xi][wi][bi];
        }
        ck_assert_msg(!wrong, "x %s0, weight %s, bias %s: %d elements not %s0", xi ? "+" : "-",
                      wi == 0 ? "None" : wi == 1 ? "1" : "-2", bi == 0 ? "None" : bi == 1 ? "+0" : "-0", wrong,
                      negative[xi][wi][bi] ? "-" : "+");
        release_all(outs, 1);
        release_all(args, 6);
      }
}
END_TEST

START_TEST(test_alloc_failures_reduce) {
  OK(fbx_op_table_init());
  float d[24];
  for (int i = 0; i < 24; i++) d[i] = (float)i;
  int64_t sz[3] = {2, 3, 4}, dims[2] = {0, 2};
  fbx_tensor *x = make_f32(3, sz, d), *xt = NULL;
  int64_t tsz[3] = {4, 3, 2}, tst[3] = {1, 4, 12};
  OK(fbx_tensor_view(&xt, x, 3, tsz, tst, x->offset));
  fbx_ivalue l = int_list(2, dims);
  fbx_ivalue a1[4] = {fbx_iv_tensor(x), l, fbx_iv_bool(true), fbx_iv_none()};
  fail_allocations("aten::sum", a1, 4); /* non-adjacent dims: permuted copy */
  fbx_ivalue a2[4] = {fbx_iv_tensor(xt), l, fbx_iv_bool(true), fbx_iv_int(FBX_DTYPE_FLOAT64)};
  fail_allocations("aten::sum", a2, 4);
  fbx_ivalue a3[3] = {a1[0], fbx_iv_int(1), fbx_iv_bool(true)};
  fail_allocations("aten::max", a3, 3);
  fbx_ivalue a4[4] = {a2[0], l, fbx_iv_bool(true), fbx_iv_bool(true)};
  fail_allocations("aten::var", a4, 4);
  fbx_ivalue a5[3] = {a2[0], fbx_iv_int(1), fbx_iv_int(FBX_DTYPE_FLOAT16)};
  fail_allocations("aten::softmax", a5, 3);
  fbx_ivalue a6[3] = {a1[0], fbx_iv_none(), fbx_iv_bool(true)};
  fail_allocations("aten::argmax", a6, 3);
  fbx_ivalue a7[3] = {a2[0], fbx_iv_int(2), fbx_iv_none()};
  fail_allocations("aten::cumsum", a7, 3);
  int64_t ns = 2;
  fbx_ivalue nsl = int_list(1, &ns), w = fbx_iv_tensor(make_f32(1, &ns, d));
  fbx_ivalue a8[6] = {a2[0], nsl, w, w, fbx_iv_float(1e-5), fbx_iv_bool(true)};
  fail_allocations("aten::layer_norm", a8, 6);
  fbx_ivalue a8b[6] = {a2[0], a2[0], nsl, w, w, fbx_iv_float(1e-5)}; /* strided grad and input: copies */
  fail_allocations("fusebox::layer_norm_backward", a8b, 6);
  int64_t c3 = 3;
  fbx_ivalue p3 = fbx_iv_tensor(make_f32(1, &c3, d + 1));
  fbx_ivalue a9[9] = {a1[0], p3, p3, p3, p3, fbx_iv_bool(false), fbx_iv_float(0.1), fbx_iv_float(1e-5),
                      fbx_iv_bool(false)};
  fail_allocations("aten::batch_norm", a9, 9);
  fbx_ivalue a10[6] = {a2[0], fbx_iv_int(3), p3, p3, fbx_iv_float(1e-5), fbx_iv_bool(false)}; /* strided: a copy */
  fail_allocations("aten::group_norm", a10, 6);
  /* rows composed of other rows (k_search.c): every error path releases what it made */
  fbx_ivalue b1[4] = {a2[0], l, fbx_iv_bool(true), fbx_iv_none()};
  fail_allocations("aten::nansum", b1, 4);
  fail_allocations("aten::nanmean", b1, 4);
  fbx_ivalue b2[3] = {a2[0], fbx_iv_int(1), fbx_iv_bool(false)};
  fail_allocations("aten::aminmax", b2, 3);
  fbx_ivalue lin;
  OK(fbx_iv_str_new(&lin, "linear", 6));
  fbx_ivalue b3[5] = {a2[0], fbx_iv_float(0.3), fbx_iv_int(1), fbx_iv_bool(false), lin};
  fail_allocations("aten::quantile", b3, 5);
  fbx_ivalue b4[4] = {a2[0], fbx_iv_float(2), fbx_iv_int(0), fbx_iv_float(10)};
  fail_allocations("aten::renorm", b4, 4);
  fbx_ivalue b5[3] = {a2[0], a2[0], fbx_iv_int(1)};
  fail_allocations("aten::trapz", b5, 3);
  int64_t gs[2] = {4, 2};
  fbx_ivalue gt = fbx_iv_tensor(make_f32(2, gs, d));
  fbx_ivalue b6[5] = {gt, a2[0], a2[0], fbx_iv_float(1), fbx_iv_int(1)};
  fail_allocations("fusebox::trapz_backward", b6, 5);
  fbx_iv_release(&gt);
  fbx_iv_release(&lin);
  fbx_iv_release(&p3);
  fbx_iv_release(&w);
  fbx_iv_release(&nsl);
  fbx_iv_release(&l);
  fbx_iv_release(&a2[0]);
  fbx_iv_release(&a1[0]);
}
END_TEST

/* Long rows split into segments: sum over 2^20 rows of a tall thin
 * tensor along dim 0 (permuted path) and a wide one (tiles). */
START_TEST(test_layouts_agree) {
  OK(fbx_op_table_init());
  int64_t sz[2] = {1000, 40};
  fbx_tensor *x = NULL;
  OK(fbx_tensor_empty(&x, FBX_DTYPE_INT32, 2, sz));
  for (int64_t i = 0; i < 40000; i++) ((int32_t *)x->data)[i] = (int32_t)(i % 97) - 40;
  for (int d = 0; d < 2; d++) {
    fbx_ivalue l = fbx_iv_int(d);
    fbx_ivalue args[4] = {fbx_iv_tensor(x), l, fbx_iv_bool(false), fbx_iv_none()}, outs[1];
    /* int[1] given one int */
    OK(oprun("aten::sum", args, 4, outs, NULL, NULL));
    fbx_tensor *r = outs[0].u.t;
    ck_assert_int_eq(r->dtype, FBX_DTYPE_INT64);
    for (int64_t o = 0; o < sz[1 - d]; o++) {
      int64_t want = 0;
      for (int64_t k = 0; k < sz[d]; k++) {
        int64_t idx = d == 0 ? k * 40 + o : o * 40 + k;
        want += (idx % 97) - 40;
      }
      ck_assert_int_eq(fbx_tensor_get_i64(r, o), want);
    }
    release_all(outs, 1);
  }
  fbx_tensor_release(x);
}
END_TEST

#else /* FBX_REDUCE_TEST_LINALG */

/* ---- literal tests: linear algebra ----------------------------------------------------------- */

/* Larger products against a naive double loop: every tile/edge shape of the
 * blocked kernel, strided (transposed) operands, float32 and float64. */
static void check_mm(fbx_dtype dt, int64_t M, int64_t K, int64_t N, bool ta, bool tb) {
  fbx_tensor *a = NULL, *b = NULL, *av = NULL, *bv = NULL;
  int64_t as[2] = {ta ? K : M, ta ? M : K}, bs[2] = {tb ? N : K, tb ? K : N};
  OK(fbx_tensor_empty(&a, dt, 2, as));
  OK(fbx_tensor_empty(&b, dt, 2, bs));
  uint64_t s = 99;
  for (int64_t i = 0; i < a->numel; i++) fbx_tensor_set_f64(a, i, (double)(int)((s = s * 2862933555777941757ull + 3037000493ull) >> 60) - 8);
  for (int64_t i = 0; i < b->numel; i++) fbx_tensor_set_f64(b, i, (double)(int)((s = s * 2862933555777941757ull + 3037000493ull) >> 60) - 8);
  int64_t vs[2], vst[2];
  vs[0] = M, vs[1] = K, vst[0] = ta ? 1 : K, vst[1] = ta ? M : 1;
  OK(fbx_tensor_view(&av, a, 2, vs, vst, 0));
  vs[0] = K, vs[1] = N, vst[0] = tb ? 1 : N, vst[1] = tb ? K : 1;
  OK(fbx_tensor_view(&bv, b, 2, vs, vst, 0));
  fbx_ivalue args[2] = {fbx_iv_tensor(av), fbx_iv_tensor(bv)}, outs[1];
  OK(oprun("aten::mm", args, 2, outs, NULL, NULL));
  fbx_tensor *c = outs[0].u.t;
  ck_assert_int_eq(c->sizes[0], M);
  ck_assert_int_eq(c->sizes[1], N);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double want = 0;
      for (int64_t k = 0; k < K; k++)
        want += fbx_tensor_get_f64(av, i * K + k) * fbx_tensor_get_f64(bv, k * N + j);
      ck_assert_msg(fbx_tensor_get_f64(c, i * N + j) == want, "%s %lldx%lldx%lld [%lld,%lld]: %g want %g",
                    fbx_dtype_name(dt), (long long)M, (long long)K, (long long)N, (long long)i, (long long)j,
                    fbx_tensor_get_f64(c, i * N + j), want);
    }
  release_all(outs, 1);
  release_all(args, 2);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}

/* k_linalg.c's switch: the float products on the packed loops, not the BLAS. */
extern bool fbx_linalg_no_blas;

/* Both float paths: the BLAS (operands passed as transposes and leading
 * dims) and the packed loops (forced with fbx_linalg_no_blas). */
START_TEST(test_mm_shapes) {
  OK(fbx_op_table_init());
  static const int64_t shapes[][3] = {{1, 1, 1}, {3, 5, 7}, {4, 8, 8}, {5, 257, 9}, {65, 3, 17}, {130, 300, 33}, {2, 513, 1}};
  for (int packed = 0; packed < 2; packed++) {
    fbx_linalg_no_blas = packed;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
      for (int t = 0; t < 4; t++) {
        check_mm(FBX_DTYPE_FLOAT32, shapes[i][0], shapes[i][1], shapes[i][2], t & 1, t & 2);
        check_mm(FBX_DTYPE_FLOAT64, shapes[i][0], shapes[i][1], shapes[i][2], t & 1, t & 2);
      }
  }
  fbx_linalg_no_blas = false;
  check_mm(FBX_DTYPE_INT64, 9, 20, 11, true, false);
  check_mm(FBX_DTYPE_INT16, 9, 20, 11, false, true);
}
END_TEST

/* Operands that are neither row- nor column-contiguous (every other column
 * of a wider matrix, a stride-0 expanded column) cannot go to the BLAS as
 * they are; the packed loops take them and the result is still exact. */
START_TEST(test_mm_odd_strides) {
  OK(fbx_op_table_init());
  fbx_tensor *a = NULL, *b = NULL, *av = NULL, *bv = NULL;
  int64_t as[2] = {6, 10}, bs[2] = {5, 1};
  OK(fbx_tensor_empty(&a, FBX_DTYPE_FLOAT32, 2, as));
  OK(fbx_tensor_empty(&b, FBX_DTYPE_FLOAT32, 2, bs));
  for (int64_t i = 0; i < a->numel; i++) fbx_tensor_set_f64(a, i, (double)(i % 7) - 3);
  for (int64_t i = 0; i < b->numel; i++) fbx_tensor_set_f64(b, i, (double)i + 1);
  int64_t avs[2] = {6, 5}, avst[2] = {10, 2}, bvs[2] = {5, 4}, bvst[2] = {1, 0};
  OK(fbx_tensor_view(&av, a, 2, avs, avst, 0));
  OK(fbx_tensor_view(&bv, b, 2, bvs, bvst, 0));
  fbx_ivalue args[2] = {fbx_iv_tensor(av), fbx_iv_tensor(bv)}, outs[1];
  OK(oprun("aten::mm", args, 2, outs, NULL, NULL));
  fbx_tensor *c = outs[0].u.t;
  for (int64_t i = 0; i < 6; i++)
    for (int64_t j = 0; j < 4; j++) {
      double want = 0;
      for (int64_t k = 0; k < 5; k++) want += (double)((i * 10 + 2 * k) % 7 - 3) * (double)(k + 1);
      ck_assert_double_eq(fbx_tensor_get_f64(c, i * 4 + j), want);
    }
  release_all(outs, 1);
  release_all(args, 2);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}
END_TEST

START_TEST(test_alloc_failures_linalg) {
  OK(fbx_op_table_init());
  float d[64];
  for (int i = 0; i < 64; i++) d[i] = (float)(i % 7);
  int64_t as[2] = {4, 6}, bs[2] = {6, 5}, bbs[3] = {2, 2, 3}, b3[3] = {2, 3, 4}, n5 = 5;
  fbx_ivalue a = fbx_iv_tensor(make_f32(2, as, d)), b = fbx_iv_tensor(make_f32(2, bs, d + 3));
  fbx_ivalue args[2] = {a, b};
  fail_allocations("aten::mm", args, 2);
  fail_allocations("aten::matmul", args, 2);
  fbx_ivalue x3 = fbx_iv_tensor(make_f32(3, bbs, d)), y3 = fbx_iv_tensor(make_f32(3, b3, d + 1));
  fbx_ivalue bargs[2] = {x3, y3};
  fail_allocations("aten::bmm", bargs, 2);
  fbx_ivalue bias = fbx_iv_tensor(make_f32(1, &n5, d));
  fbx_ivalue aargs[5] = {bias, a, b, fbx_iv_float(0.5), fbx_iv_int(2)};
  fail_allocations("aten::addmm", aargs, 5);
  fbx_tensor *h = NULL;
  OK(fbx_tensor_clone_as(&h, a.u.t, FBX_DTYPE_FLOAT16));
  int64_t ws[2] = {3, 6};
  fbx_tensor *wf = make_f32(2, ws, d), *wh = NULL;
  OK(fbx_tensor_clone_as(&wh, wf, FBX_DTYPE_FLOAT16));
  fbx_tensor_release(wf);
  fbx_ivalue largs[3] = {fbx_iv_tensor(h), fbx_iv_tensor(wh), fbx_iv_none()};
  fail_allocations("aten::linear", largs, 3);
  release_all(largs, 3);
  /* products composed of other rows (k_search.c) */
  int64_t one = 1, zero = 0, m4 = 4;
  fbx_ivalue d1 = int_list(1, &one), d0 = int_list(1, &zero);
  fbx_ivalue targs[4] = {a, b, d1, d0};
  fail_allocations("aten::tensordot", targs, 4);
  fbx_ivalue iargs[2] = {a, a};
  fail_allocations("aten::inner", iargs, 2);
  fbx_ivalue s4 = fbx_iv_tensor(make_f32(1, &m4, d));
  fbx_ivalue abargs[5] = {s4, x3, y3, fbx_iv_float(0.5), fbx_iv_int(2)};
  fail_allocations("aten::addbmm", abargs, 5);
  fbx_ivalue cargs[3] = {x3, x3, fbx_iv_int(-1)};
  fail_allocations("aten::linalg_cross", cargs, 3);
  fbx_iv_release(&s4);
  fbx_iv_release(&d1);
  fbx_iv_release(&d0);
  fbx_iv_release(&bias);
  fbx_iv_release(&x3);
  fbx_iv_release(&y3);
  fbx_iv_release(&a);
  fbx_iv_release(&b);
}
END_TEST

#endif

static Suite *suite(void) {
  Suite *s = suite_create("ops_" FAMILY);
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_golden_cases);
  tcase_add_test(tc, test_rows_well_formed);
#ifndef FBX_REDUCE_TEST_LINALG
  tcase_add_test(tc, test_sum_accuracy);
  tcase_add_test(tc, test_long_row_argmax);
  tcase_add_test(tc, test_overload_resolution);
  tcase_add_test(tc, test_dropout_train);
  tcase_add_test(tc, test_batch_norm_training_keeps_stats);
  tcase_add_test(tc, test_layer_norm_zero_sign);
  tcase_add_test(tc, test_group_norm_zero_sign);
  tcase_add_test(tc, test_alloc_failures_reduce);
  tcase_add_test(tc, test_layouts_agree);
#else
  tcase_add_test(tc, test_mm_shapes);
  tcase_add_test(tc, test_mm_odd_strides);
  tcase_add_test(tc, test_alloc_failures_linalg);
#endif
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
