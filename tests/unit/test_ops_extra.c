/* The rows of ops/list_extra.h (indexing, sorting, norms, losses, in-place
 * variants, ...) against PyTorch's own results.
 *
 * tests/data/extra/cases.txt is written by tests/unit/gen_extra_golden.py
 * (format documented there): each case calls one ATen overload on small
 * tensors, some of them non-contiguous, and records the outputs (and self,
 * for in-place ops) or that PyTorch raised. Each case here is resolved by
 * name from its positional arguments, as the interpreter does, run, and
 * compared; every row of list_extra.h must be exercised. Every successful
 * case is then rerun with each allocation in turn made to fail: the kernel
 * must report NOMEM, leave its outputs None and leak nothing (ASan). */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ops/optable.h"
#include "testutil.h"

#define OK(expr)                                                              \
  do {                                                                        \
    fbx_status *st_ = (expr);                                                 \
    ck_assert_msg(st_ == NULL, "%s", st_ ? fbx_status_message(st_) : "");     \
  } while (0)

#define MAX_TOK 4096
#define MAX_ARGS 16

#define EX_ID_(id, schema, cat, dt, sh, flags, kernel) FBX_OP_##id,
static const int extra_ids[] = {FBX_OPS_EXTRA(EX_ID_)};
#define NEXTRA ((int)(sizeof extra_ids / sizeof extra_ids[0]))

static bool seen[FBX_OP_COUNT];

static const struct {
  const char *name;
  fbx_dtype dt;
} dtypes[] = {{"f32", FBX_DTYPE_FLOAT32}, {"f64", FBX_DTYPE_FLOAT64}, {"f16", FBX_DTYPE_FLOAT16},
              {"i64", FBX_DTYPE_INT64},   {"i32", FBX_DTYPE_INT32},   {"i16", FBX_DTYPE_INT16},
              {"i8", FBX_DTYPE_INT8},     {"u8", FBX_DTYPE_UINT8},    {"b1", FBX_DTYPE_BOOL}};

static fbx_dtype dtype_of(const char *s) {
  for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
    if (!strcmp(dtypes[i].name, s)) return dtypes[i].dt;
  ck_abort_msg("unknown dtype %s", s);
  return FBX_DTYPE_UNDEFINED;
}

static int parse_ints(const char *s, int64_t *out, int cap) {
  if (!strcmp(s, "-")) return 0;
  int n = 0;
  for (const char *p = s; *p && n < cap;) {
    char *end;
    out[n++] = strtoll(p, &end, 10);
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p) break;
  }
  return n;
}

/* tok: dtype sizes values... -> a contiguous tensor; reversed: the same
 * logical tensor stored with reversed dims (non-contiguous). */
static fbx_tensor *make_tensor(char **tok, int ntok, bool reversed) {
  ck_assert_int_ge(ntok, 2);
  fbx_dtype dt = dtype_of(tok[0]);
  int64_t sizes[FBX_MAX_DIMS];
  int nd = parse_ints(tok[1], sizes, FBX_MAX_DIMS);
  fbx_tensor *t = NULL;
  OK(fbx_tensor_empty(&t, dt, nd, sizes));
  ck_assert_int_eq(ntok - 2, t->numel);
  for (int64_t i = 0; i < t->numel; i++) {
    if (fbx_dtype_is_floating(dt)) fbx_tensor_set_f64(t, i, strtod(tok[2 + i], NULL));
    else fbx_tensor_set_i64(t, i, strtoll(tok[2 + i], NULL, 10));
  }
  if (!reversed || nd < 2) return t;
  int64_t rs[FBX_MAX_DIMS], rst[FBX_MAX_DIMS], vst[FBX_MAX_DIMS];
  for (int k = 0; k < nd; k++) rs[k] = sizes[nd - 1 - k];
  fbx_tensor *base = NULL, *v = NULL;
  OK(fbx_tensor_empty(&base, dt, nd, rs));
  fbx_contiguous_strides(nd, rs, rst);
  for (int k = 0; k < nd; k++) vst[k] = rst[nd - 1 - k];
  OK(fbx_tensor_view(&v, base, nd, sizes, vst, 0));
  OK(fbx_tensor_copy_(v, t));
  ck_assert(!fbx_tensor_is_contiguous(v));
  fbx_tensor_release(base);
  fbx_tensor_release(t);
  return v;
}

/* ---- the manifest ---------------------------------------------------------------------------- */

typedef struct line {
  char *tok[MAX_TOK];
  int ntok;
} line;

static int split(char *s, char **tok, int cap) {
  int n = 0;
  for (char *save = NULL, *t = strtok_r(s, " ", &save); t && n < cap; t = strtok_r(NULL, " ", &save)) tok[n++] = t;
  return n;
}

typedef struct gcase {
  char name[128], kind[128];
  fbx_ivalue args[MAX_ARGS];
  int nargs;
  char *expect[64]; /* "out ..." / "self ..." / "err ..." lines (borrowed from the file text) */
  int nexpect;
} gcase;

static fbx_ivalue parse_arg(char **lines, int *li, int nlines) {
  static line l; /* big: keep it off the stack */
  char *copy = strdup(lines[(*li)++]);
  l.ntok = split(copy, l.tok, MAX_TOK);
  ck_assert_int_ge(l.ntok, 2);
  const char *k = l.tok[1];
  fbx_ivalue v = fbx_iv_none();
  if (!strcmp(k, "T") || !strcmp(k, "R")) v = fbx_iv_tensor(make_tensor(l.tok + 2, l.ntok - 2, k[0] == 'R'));
  else if (!strcmp(k, "i")) v = fbx_iv_int(strtoll(l.tok[2], NULL, 10));
  else if (!strcmp(k, "f")) v = fbx_iv_float(strtod(l.tok[2], NULL));
  else if (!strcmp(k, "b")) v = fbx_iv_bool(atoi(l.tok[2]) != 0);
  else if (!strcmp(k, "n")) v = fbx_iv_none();
  else if (!strcmp(k, "s")) OK(fbx_iv_str_new(&v, l.tok[2], strlen(l.tok[2])));
  else if (!strcmp(k, "L")) {
    int64_t vals[64];
    int n = parse_ints(l.tok[2], vals, 64);
    OK(fbx_iv_list_new(&v, n));
    for (int i = 0; i < n; i++) OK(fbx_iv_list_push(&v, fbx_iv_int(vals[i])));
  } else if (!strcmp(k, "TL")) {
    int n = atoi(l.tok[2]);
    free(copy);
    copy = NULL;
    OK(fbx_iv_list_new(&v, n));
    for (int i = 0; i < n; i++) {
      ck_assert_int_lt(*li, nlines);
      OK(fbx_iv_list_push(&v, parse_arg(lines, li, nlines)));
    }
  } else {
    ck_abort_msg("bad arg line kind %s", k);
  }
  free(copy);
  return v;
}

/* ---- comparing ------------------------------------------------------------------------------ */

static void tol_of(fbx_dtype d, double *rtol, double *atol) {
  switch (d) {
    case FBX_DTYPE_FLOAT32: *rtol = 1e-5, *atol = 1e-5; break;
    case FBX_DTYPE_FLOAT64: *rtol = 1e-10, *atol = 1e-10; break;
    case FBX_DTYPE_FLOAT16: *rtol = 1e-3, *atol = 1e-3; break;
    default: *rtol = 0, *atol = 0; break;
  }
}

static void check_tensor(const char *cname, const char *what, const fbx_tensor *got, char *spec) {
  static line l;
  l.ntok = split(spec, l.tok, MAX_TOK);
  ck_assert_msg(got != NULL, "%s: %s: no tensor", cname, what);
  fbx_tensor *want = make_tensor(l.tok, l.ntok, false);
  ck_assert_msg(got->dtype == want->dtype, "%s: %s dtype %s, PyTorch %s", cname, what, fbx_dtype_name(got->dtype),
                fbx_dtype_name(want->dtype));
  ck_assert_msg(fbx_tensor_same_shape(got, want), "%s: %s shape differs (ndim %d vs %d)", cname, what, got->ndim,
                want->ndim);
  double rt, at;
  tol_of(want->dtype, &rt, &at);
  for (int64_t i = 0; i < want->numel; i++) {
    if (fbx_dtype_is_floating(want->dtype)) {
      double a = fbx_tensor_get_f64(got, i), e = fbx_tensor_get_f64(want, i);
      bool ok = isnan(e) || isnan(a) ? isnan(a) && isnan(e)
                : isinf(e) || isinf(a) ? a == e
                                       : fabs(a - e) <= at + rt * fabs(e);
      ck_assert_msg(ok, "%s: %s[%" PRId64 "] = %.9g, PyTorch %.9g", cname, what, i, a, e);
    } else {
      ck_assert_msg(fbx_tensor_get_i64(got, i) == fbx_tensor_get_i64(want, i), "%s: %s[%" PRId64 "] = %" PRId64 ", PyTorch %" PRId64,
                    cname, what, i, fbx_tensor_get_i64(got, i), fbx_tensor_get_i64(want, i));
    }
  }
  fbx_tensor_release(want);
}

/* The flattened results (tensors, tensors of lists, int lists) in order. */
static void flatten(const fbx_ivalue *v, const fbx_ivalue **out, int *n) {
  if (v->kind == FBX_IV_TUPLE) {
    for (int i = 0; i < v->u.l->n; i++) flatten(&v->u.l->items[i], out, n);
  } else {
    out[(*n)++] = v;
  }
}

static fbx_status *run_case(gcase *c, const fbx_op **opp, fbx_ivalue *outs) {
  fbx_sym sym;
  ck_assert_int_eq(fbx_sym_intern(&sym, c->kind, strlen(c->kind)), 0);
  const fbx_op *op = NULL;
  fbx_status *st = fbx_op_resolve(&op, sym, c->args, c->nargs);
  ck_assert_msg(st == NULL, "%s: resolve: %s", c->name, st ? fbx_status_message(st) : "");
  *opp = op;
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS];
  OK(fbx_op_normalize_args(op, c->args, c->nargs, norm));
  for (int i = 0; i < FBX_SCHEMA_MAX_RETS; i++) outs[i] = fbx_iv_none();
  uint64_t rng = 1;
  fbx_kctx ctx = {.op = op, .rng_state = &rng, .nargs = op->schema.nargs};
  return op->kernel(&ctx, norm, outs);
}

static void check_case(gcase *c, int *nerr) {
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  fbx_status *st = run_case(c, &op, outs);
  seen[op->id] = true;
  if (c->nexpect == 1 && !strncmp(c->expect[0], "err ", 4)) {
    ck_assert_msg(st != NULL, "%s: PyTorch raises (%s) but %s succeeded", c->name, c->expect[0] + 4, op->id_name);
    ck_assert_msg(fbx_status_code(st) == FBX_ERR_RUNTIME, "%s: %s", c->name, fbx_status_message(st));
    for (int i = 0; i < op->schema.nrets; i++) ck_assert(outs[i].kind == FBX_IV_NONE);
    fbx_status_free(st);
    (*nerr)++;
    return;
  }
  ck_assert_msg(st == NULL, "%s: %s", c->name, st ? fbx_status_message(st) : "");
  const fbx_ivalue *flat[64];
  int n = 0;
  for (int i = 0; i < op->schema.nrets; i++) flatten(&outs[i], flat, &n);
  int k = 0;
  for (int e = 0; e < c->nexpect; e++) {
    char *spec = strdup(c->expect[e]);
    if (!strncmp(spec, "out T ", 6)) {
      ck_assert_msg(k < n && flat[k]->kind == FBX_IV_TENSOR, "%s: output %d is not a tensor", c->name, k);
      check_tensor(c->name, "out", flat[k++]->u.t, spec + 6);
    } else if (!strncmp(spec, "out TL ", 7)) {
      ck_assert_msg(k < n && flat[k]->kind == FBX_IV_LIST, "%s: output %d is not a list", c->name, k);
      const fbx_ivalue *l = flat[k++];
      int cnt = atoi(spec + 7);
      ck_assert_int_eq(fbx_iv_list_len(l), cnt);
      for (int j = 0; j < cnt; j++) {
        char *sub = strdup(c->expect[++e]);
        ck_assert(!strncmp(sub, "out T ", 6));
        check_tensor(c->name, "list item", fbx_iv_list_at(l, j)->u.t, sub + 6);
        free(sub);
      }
    } else if (!strncmp(spec, "out L ", 6)) {
      ck_assert_msg(k < n && flat[k]->kind == FBX_IV_LIST, "%s: output %d is not a list", c->name, k);
      int64_t want[64];
      int cnt = parse_ints(spec + 6, want, 64);
      const fbx_ivalue *l = flat[k++];
      ck_assert_int_eq(fbx_iv_list_len(l), cnt);
      for (int j = 0; j < cnt; j++) ck_assert_int_eq(fbx_iv_list_at(l, j)->u.i, want[j]);
    } else if (!strncmp(spec, "self T ", 7)) {
      check_tensor(c->name, "self after the call", c->args[0].u.t, spec + 7);
      ck_assert_msg(flat[0]->u.t == c->args[0].u.t || flat[0]->u.t->storage == c->args[0].u.t->storage,
                    "%s: an in-place op must return self", c->name);
    } else {
      ck_abort_msg("%s: bad expectation line %s", c->name, spec);
    }
    free(spec);
  }
  ck_assert_msg(k == n, "%s: %d outputs, PyTorch %d", c->name, n, k);
  for (int i = 0; i < op->schema.nrets; i++) fbx_iv_release(&outs[i]);

  /* fail each allocation in turn */
  bool done = false;
  for (long f = 0; f < 400 && !done; f++) {
    fbx_alloc_fail_after(f);
    st = run_case(c, &op, outs);
    fbx_alloc_fail_after(-1);
    if (st) {
      ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM, "%s, allocation %ld failed: %s", c->name, f,
                    fbx_status_message(st));
      for (int i = 0; i < op->schema.nrets; i++) ck_assert(outs[i].kind == FBX_IV_NONE);
      fbx_status_free(st);
    } else {
      done = true;
      for (int i = 0; i < op->schema.nrets; i++) fbx_iv_release(&outs[i]);
    }
  }
  ck_assert_msg(done, "%s never succeeded under allocation failures", c->name);
}

START_TEST(test_golden) {
  OK(fbx_op_table_init());
  char *text = tu_read_file(tu_src_path("tests/data/extra/cases.txt"), NULL);
  ck_assert_msg(text, "no tests/data/extra/cases.txt: run tests/unit/gen_extra_golden.py");
  int cap = 1 << 14, nlines = 0;
  char **lines = malloc(sizeof *lines * (size_t)cap);
  for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    if (l[0] == '#') continue;
    if (nlines == cap) lines = realloc(lines, sizeof *lines * (size_t)(cap *= 2));
    lines[nlines++] = l;
  }
  int ncases = 0, nerr = 0;
  static gcase c;
  for (int li = 0; li < nlines;) {
    ck_assert_msg(!strncmp(lines[li], "case ", 5), "expected 'case' at line %d: %s", li, lines[li]);
    memset(&c, 0, sizeof c);
    ck_assert_int_eq(sscanf(lines[li++], "case %127s %127s", c.name, c.kind), 2);
    while (li < nlines && !strncmp(lines[li], "arg ", 4)) {
      ck_assert_int_lt(c.nargs, MAX_ARGS);
      c.args[c.nargs++] = parse_arg(lines, &li, nlines);
    }
    while (li < nlines && strcmp(lines[li], "end")) {
      ck_assert_int_lt(c.nexpect, 64);
      c.expect[c.nexpect++] = lines[li++];
    }
    ck_assert_msg(li < nlines, "%s: no 'end'", c.name);
    li++;
    check_case(&c, &nerr);
    for (int i = 0; i < c.nargs; i++) fbx_iv_release(&c.args[i]);
    ncases++;
  }
  printf("ops_extra: %d golden cases (%d expected errors)\n", ncases, nerr);
  ck_assert_int_gt(ncases, 150);
  ck_assert_int_gt(nerr, 15);
  for (int i = 0; i < NEXTRA; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)extra_ids[i]);
    ck_assert_msg(seen[extra_ids[i]], "list_extra.h row %s (%s) has no test case", op->id_name, op->schema_text);
  }
  free(lines);
  free(text);
}
END_TEST

/* Columns consistent with the rows' nature. */
START_TEST(test_rows) {
  OK(fbx_op_table_init());
  for (int i = 0; i < NEXTRA; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)extra_ids[i]);
    ck_assert(op && op->kernel);
    const char *name = fbx_sym_str(op->schema.name);
    bool inplace = name[strlen(name) - 1] == '_';
    if (inplace) ck_assert_msg((op->flags & FBX_OPF_INPLACE) && (op->flags & FBX_OPF_ALIAS), "%s", op->id_name);
    else ck_assert_msg(!(op->flags & FBX_OPF_INPLACE), "%s", op->id_name);
    if (op->schema.ret_list) ck_assert_msg(op->flags & FBX_OPF_MUTABLE_OUT, "%s", op->id_name);
    ck_assert(!(op->flags & FBX_OPF_SIDE_EFFECT));
    /* only dropout draws random numbers */
    ck_assert_msg(!(op->flags & FBX_OPF_NONDET) == !strstr(name, "dropout"), "%s", op->id_name);
  }
}
END_TEST

/* Writes of an in-place op on a view land in its base. */
START_TEST(test_inplace_view) {
  OK(fbx_op_table_init());
  int64_t s[2] = {3, 4};
  fbx_tensor *x = NULL, *col = NULL;
  OK(fbx_tensor_zeros(&x, FBX_DTYPE_FLOAT32, 2, s));
  int64_t cs[1] = {3}, cst[1] = {4};
  OK(fbx_tensor_view(&col, x, 1, cs, cst, 1)); /* x[:, 1] */
  gcase c = {.name = "add_ on a column view", .kind = "aten::add_", .nargs = 3};
  c.args[0] = fbx_iv_tensor(col);
  c.args[1] = fbx_iv_float(2.5);
  c.args[2] = fbx_iv_int(2);
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  OK(run_case(&c, &op, outs));
  ck_assert_int_eq(op->id, FBX_OP_add__Scalar);
  for (int64_t i = 0; i < 12; i++) ck_assert(fbx_tensor_get_f64(x, i) == (i % 4 == 1 ? 5.0 : 0.0));
  fbx_iv_release(&outs[0]);
  fbx_tensor_release(col);
  fbx_tensor_release(x);
}
END_TEST

/* unique where PyTorch 1.13 gives no defined answer (k_unique.c): sorted=False
 * sorts as sorted=True does, and every NaN is a value of its own, counted
 * once, after all numbers; -0.0 and 0.0 are one value (the first seen). The
 * expected values are written here from those rules. */
START_TEST(test_unique_choices) {
  OK(fbx_op_table_init());
  const double nan = NAN;
  const double in[] = {3.0, nan, -0.0, 1.0, 3.0, nan, 0.0, -5.0};
  int64_t n = 8;
  fbx_tensor *x = NULL;
  OK(fbx_tensor_empty(&x, FBX_DTYPE_FLOAT32, 1, &n));
  for (int64_t i = 0; i < n; i++) fbx_tensor_set_f64(x, i, in[i]);
  for (int sorted = 0; sorted < 2; sorted++) {
    gcase c = {.name = "_unique2 with NaN", .kind = "aten::_unique2", .nargs = 4};
    c.args[0] = fbx_iv_tensor(x);
    c.args[1] = fbx_iv_bool(sorted);
    c.args[2] = fbx_iv_bool(true);
    c.args[3] = fbx_iv_bool(true);
    const fbx_op *op;
    fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
    OK(run_case(&c, &op, outs));
    const fbx_tensor *v = outs[0].u.t, *inv = outs[1].u.t, *cnt = outs[2].u.t;
    /* values -5, -0 (first seen of -0/0), 1, 3, NaN, NaN */
    ck_assert_int_eq(v->numel, 6);
    const double want[] = {-5.0, -0.0, 1.0, 3.0};
    for (int i = 0; i < 4; i++) ck_assert(fbx_tensor_get_f64(v, i) == want[i]);
    ck_assert(signbit(fbx_tensor_get_f64(v, 1)));
    ck_assert(isnan(fbx_tensor_get_f64(v, 4)) && isnan(fbx_tensor_get_f64(v, 5)));
    const int64_t winv[] = {3, 4, 1, 2, 3, 5, 1, 0}, wcnt[] = {1, 2, 1, 2, 1, 1};
    for (int i = 0; i < 8; i++) ck_assert_int_eq(fbx_tensor_get_i64(inv, i), winv[i]);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(fbx_tensor_get_i64(cnt, i), wcnt[i]);
    for (int i = 0; i < 3; i++) fbx_iv_release(&outs[i]);
  }
  fbx_tensor_release(x);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_extra");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_golden);
  tcase_add_test(tc, test_rows);
  tcase_add_test(tc, test_inplace_view);
  tcase_add_test(tc, test_unique_choices);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
