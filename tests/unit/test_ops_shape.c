/* Shape and view ops (ops/list_shape.h) against PyTorch 1.13.
 *
 * The golden cases (tests/data/shape/cases.txt, written by
 * tests/unit/gen_shape_golden.py) give each op's inputs as as_strided views
 * of small base tensors (base_*.npy) and PyTorch's result: dtype, sizes,
 * strides, storage offset, which input's storage it shares, and the values;
 * or that PyTorch raised. Every row of the list must be exercised by at
 * least one case (checked by iterating the list). Literal tests cover what
 * the table can't say: writes through views, message contents, allocation
 * failures.
 *
 * test_ops_create.c reuses the runner: it includes this file with
 * FBX_GOLDEN_RUNNER_ONLY defined. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "ir/symbol.h"
#include "ops/kutil.h"
#include "ops/optable.h"
#include "testutil.h"
#include <fusebox/tensor.h>

#define OK(expr)                                                                   \
  do {                                                                             \
    fbx_status *st_ = (expr);                                                      \
    ck_assert_msg(st_ == NULL, "%s failed: %s", #expr, fbx_status_message(st_));   \
  } while (0)

/* ---- the golden runner ----------------------------------------------------------------- */

typedef struct gr_family {
  const char *name;
  const int *ids; /* the rows this test owns */
  int nids;
  bool seen[FBX_OP_COUNT];
  int ran, errors;
} gr_family;

typedef struct gr_base {
  char name[32];
  fbx_tensor *t;
} gr_base;

typedef struct gr_case {
  const char *name;
  gr_base bases[16];
  int nbases;
  fbx_ivalue args[FBX_SCHEMA_MAX_ARGS];
  int nargs;
} gr_case;

static bool gr_owned(const gr_family *f, int id) {
  for (int i = 0; i < f->nids; i++)
    if (f->ids[i] == id) return true;
  return false;
}

static fbx_tensor *gr_base_get(gr_case *c, const char *name) {
  for (int i = 0; i < c->nbases; i++)
    if (!strcmp(c->bases[i].name, name)) return c->bases[i].t;
  ck_assert_int_lt(c->nbases, 16);
  char rel[128];
  snprintf(rel, sizeof rel, "tests/data/shape/base_%s.npy", name);
  gr_base *b = &c->bases[c->nbases++];
  snprintf(b->name, sizeof b->name, "%s", name);
  b->t = NULL;
  OK(fbx_npy_read_file(&b->t, tu_src_path(rel)));
  return b->t;
}

static int gr_ints(const char *s, int64_t *out, int cap) {
  if (!strcmp(s, "-")) return 0;
  int n = 0;
  while (*s) {
    char *end;
    ck_assert_int_lt(n, cap);
    out[n++] = strtoll(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
    if (end == s && *s) ck_abort_msg("bad int list");
  }
  return n;
}

/* "T base sizes strides offset" (tokens after "arg"/"out" T) */
static fbx_ivalue gr_tensor_arg(gr_case *c, char **tok) {
  fbx_tensor *base = gr_base_get(c, tok[0]), *v = NULL;
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int n = gr_ints(tok[1], sizes, FBX_MAX_DIMS);
  ck_assert_int_eq(gr_ints(tok[2], strides, FBX_MAX_DIMS), n);
  OK(fbx_tensor_view(&v, base, n, sizes, strides, strtoll(tok[3], NULL, 10)));
  return fbx_iv_tensor(v);
}

static int gr_split(char *line, char **tok, int cap) {
  int n = 0;
  for (char *save = NULL, *p = strtok_r(line, " ", &save); p && n < cap; p = strtok_r(NULL, " ", &save)) tok[n++] = p;
  return n;
}

static bool gr_shares(const fbx_tensor *t, const fbx_ivalue *a) {
  if (a->kind == FBX_IV_TENSOR) return a->u.t->storage == t->storage;
  if (a->kind == FBX_IV_LIST)
    for (int i = 0; i < fbx_iv_list_len(a); i++)
      if (gr_shares(t, fbx_iv_list_at(a, i))) return true;
  return false;
}

/* Compare tensor `t` with an "out T ..." line (tokenized). */
static void gr_check_tensor(gr_case *c, const fbx_tensor *t, char **tok, int ntok) {
  const char *nm = c->name;
  ck_assert_msg(!strcmp(fbx_dtype_name(t->dtype), tok[0]), "%s: dtype %s, PyTorch %s", nm, fbx_dtype_name(t->dtype), tok[0]);
  int64_t sizes[FBX_MAX_DIMS], strides[FBX_MAX_DIMS];
  int n = gr_ints(tok[1], sizes, FBX_MAX_DIMS);
  ck_assert_msg(t->ndim == n, "%s: ndim %d, PyTorch %d", nm, t->ndim, n);
  gr_ints(tok[2], strides, FBX_MAX_DIMS);
  for (int i = 0; i < n; i++) {
    ck_assert_msg(t->sizes[i] == sizes[i], "%s: size[%d] %" PRId64 ", PyTorch %" PRId64, nm, i, t->sizes[i], sizes[i]);
    ck_assert_msg(t->strides[i] == strides[i], "%s: stride[%d] %" PRId64 ", PyTorch %" PRId64, nm, i, t->strides[i], strides[i]);
  }
  int alias = atoi(tok[4]);
  if (alias >= 0) {
    ck_assert_msg(gr_shares(t, &c->args[alias]), "%s: result should share storage with argument %d", nm, alias);
    ck_assert_msg(t->offset == strtoll(tok[3], NULL, 10), "%s: storage offset %" PRId64 ", PyTorch %s", nm, t->offset, tok[3]);
  } else {
    for (int i = 0; i < c->nargs; i++) ck_assert_msg(!gr_shares(t, &c->args[i]), "%s: result must not alias argument %d", nm, i);
  }
  if (!strcmp(tok[5], "*")) return;
  int64_t nv = strtoll(tok[5], NULL, 10);
  ck_assert_msg(nv == t->numel && ntok == 6 + nv, "%s: %" PRId64 " values, PyTorch %" PRId64, nm, t->numel, nv);
  for (int64_t i = 0; i < nv; i++) {
    double want = strtod(tok[6 + i], NULL), got = fbx_tensor_get_f64(t, i);
    ck_assert_msg(got == want || (isnan(got) && isnan(want)), "%s: value[%" PRId64 "] %.17g, PyTorch %.17g", nm, i, got, want);
  }
}

/* Resolve, normalize and run; marks the row seen. Returns the kernel's status. */
static fbx_status *gr_run_op(gr_family *f, const fbx_op **opp, const char *kind, fbx_ivalue *args, int nargs,
                             fbx_ivalue *outs, uint64_t *rng) {
  fbx_sym sym;
  ck_assert_int_eq(fbx_sym_intern(&sym, kind, strlen(kind)), 0);
  const fbx_op *op = NULL;
  OK(fbx_op_resolve(&op, sym, args, nargs));
  *opp = op;
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS];
  OK(fbx_op_normalize_args(op, args, nargs, norm));
  for (int i = 0; i < FBX_SCHEMA_MAX_RETS; i++) outs[i] = fbx_iv_none();
  if (f && gr_owned(f, op->id)) f->seen[op->id] = true;
  fbx_kctx ctx = {.op = op, .rng_state = rng};
  return op->kernel(&ctx, norm, outs);
}

static char *gr_next_line(char **p) {
  char *s = *p;
  if (!s || !*s) return NULL;
  char *nl = strchr(s, '\n');
  if (nl) {
    *nl = 0;
    *p = nl + 1;
  } else {
    *p = s + strlen(s);
  }
  return s;
}

/* Run every case of cases.txt whose op is one of f's rows. */
static void gr_run_all(gr_family *f) {
  OK(fbx_op_table_init());
  size_t len;
  char *text = tu_read_file(tu_src_path("tests/data/shape/cases.txt"), &len);
  ck_assert_msg(text != NULL, "tests/data/shape/cases.txt missing: run tests/unit/gen_shape_golden.py");
  char *p = text, *line;
  enum { MAXTOK = 4096 };
  char **tok = malloc(sizeof *tok * MAXTOK);
  while ((line = gr_next_line(&p))) {
    if (line[0] == '#' || !line[0]) continue;
    int nt = gr_split(line, tok, MAXTOK);
    ck_assert_msg(nt == 4 && !strcmp(tok[0], "case"), "bad case header");
    gr_case c = {.name = tok[1]};
    const char *kind = tok[2], *overload = !strcmp(tok[3], "-") ? "" : tok[3];
    /* arguments */
    char *l;
    char **outlines = malloc(sizeof(char *) * 64);
    int nout = 0;
    while ((l = gr_next_line(&p)) && strcmp(l, "end")) {
      if (!strncmp(l, "arg ", 4)) {
        char *t[8];
        int n = gr_split(l + 4, t, 8);
        ck_assert_int_lt(c.nargs, FBX_SCHEMA_MAX_ARGS);
        fbx_ivalue *a = &c.args[c.nargs++];
        if (!strcmp(t[0], "T")) {
          *a = gr_tensor_arg(&c, t + 1);
        } else if (!strcmp(t[0], "i")) {
          *a = fbx_iv_int(strtoll(t[1], NULL, 10));
        } else if (!strcmp(t[0], "f")) {
          *a = fbx_iv_float(strtod(t[1], NULL));
        } else if (!strcmp(t[0], "b")) {
          *a = fbx_iv_bool(atoi(t[1]) != 0);
        } else if (!strcmp(t[0], "n")) {
          *a = fbx_iv_none();
        } else if (!strcmp(t[0], "S")) {
          OK(fbx_iv_str_new(a, t[1], strlen(t[1])));
        } else if (!strcmp(t[0], "D")) {
          OK(fbx_iv_device_new(a, t[1]));
        } else if (!strcmp(t[0], "L")) {
          int64_t v[64];
          int k = gr_ints(t[1], v, 64);
          OK(fbx_iv_list_new(a, k));
          for (int i = 0; i < k; i++) OK(fbx_iv_list_push(a, fbx_iv_int(v[i])));
        } else if (!strcmp(t[0], "TL")) {
          int k = atoi(t[1]);
          OK(fbx_iv_list_new(a, k));
          for (int i = 0; i < k; i++) {
            char *el = gr_next_line(&p), *et[8];
            ck_assert(el && gr_split(el + 4, et, 8) == 5);
            OK(fbx_iv_list_push(a, gr_tensor_arg(&c, et + 1)));
          }
        } else {
          ck_abort_msg("%s: bad arg kind %s", c.name, t[0]);
        }
        (void)n;
      } else {
        ck_assert_int_lt(nout, 64);
        outlines[nout++] = l;
      }
    }
    fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
    const fbx_op *op;
    fbx_sym sym;
    ck_assert_int_eq(fbx_sym_intern(&sym, kind, strlen(kind)), 0);
    OK(fbx_op_resolve(&op, sym, c.args, c.nargs));
    if (gr_owned(f, op->id)) {
      ck_assert_msg(!strcmp(op->schema.overload, overload), "%s: resolved to %s, PyTorch ran overload '%s'", c.name,
                    op->schema_text, overload);
      uint64_t rng = 1;
      fbx_status *st = gr_run_op(f, &op, kind, c.args, c.nargs, outs, &rng);
      f->ran++;
      if (!strncmp(outlines[0], "err ", 4)) {
        f->errors++;
        ck_assert_msg(st != NULL, "%s: expected an error like PyTorch's (%s)", c.name, outlines[0] + 4);
        ck_assert_msg(fbx_status_code(st) == FBX_ERR_RUNTIME, "%s: code %s (%s)", c.name,
                      fbx_code_name(fbx_status_code(st)), fbx_status_message(st));
        ck_assert_msg(strstr(fbx_status_message(st), fbx_sym_str(op->schema.name)) == fbx_status_message(st),
                      "%s: message should start with the op name: %s", c.name, fbx_status_message(st));
        for (int i = 0; i < op->schema.nrets; i++) ck_assert(outs[i].kind == FBX_IV_NONE);
        fbx_status_free(st);
      } else {
        ck_assert_msg(st == NULL, "%s: %s", c.name, fbx_status_message(st));
        char **t2 = malloc(sizeof *t2 * MAXTOK);
        int n = gr_split(outlines[0], t2, MAXTOK);
        if (!strcmp(t2[1], "T")) {
          ck_assert_msg(outs[0].kind == FBX_IV_TENSOR, "%s: expected a tensor", c.name);
          gr_check_tensor(&c, outs[0].u.t, t2 + 2, n - 2);
        } else if (!strcmp(t2[1], "i")) {
          ck_assert_msg(outs[0].kind == FBX_IV_INT && outs[0].u.i == strtoll(t2[2], NULL, 10), "%s: int result", c.name);
        } else if (!strcmp(t2[1], "L")) {
          int64_t v[64];
          int k = gr_ints(t2[2], v, 64);
          ck_assert_msg(outs[0].kind == FBX_IV_LIST && fbx_iv_list_len(&outs[0]) == k, "%s: list result", c.name);
          for (int i = 0; i < k; i++) ck_assert_int_eq(fbx_iv_list_at(&outs[0], i)->u.i, v[i]);
        } else if (!strcmp(t2[1], "TL")) {
          int k = atoi(t2[2]);
          ck_assert_msg(outs[0].kind == FBX_IV_LIST && fbx_iv_list_len(&outs[0]) == k, "%s: %d tensors expected, got %d",
                        c.name, k, outs[0].kind == FBX_IV_LIST ? fbx_iv_list_len(&outs[0]) : -1);
          for (int i = 0; i < k; i++) {
            int m = gr_split(outlines[1 + i], t2, MAXTOK);
            const fbx_ivalue *e = fbx_iv_list_at(&outs[0], i);
            ck_assert(e->kind == FBX_IV_TENSOR);
            gr_check_tensor(&c, e->u.t, t2 + 2, m - 2);
          }
        } else {
          ck_abort_msg("%s: bad out line", c.name);
        }
        free(t2);
      }
      for (int i = 0; i < FBX_SCHEMA_MAX_RETS; i++) fbx_iv_release(&outs[i]);
    }
    for (int i = 0; i < c.nargs; i++) fbx_iv_release(&c.args[i]);
    for (int i = 0; i < c.nbases; i++) fbx_tensor_release(c.bases[i].t);
    free(outlines);
  }
  free(tok);
  free(text);
}

static void gr_check_all_seen(const gr_family *f) {
  for (int i = 0; i < f->nids; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)f->ids[i]);
    ck_assert_msg(f->seen[f->ids[i]], "%s row %s (%s) has no test case", f->name, op->id_name, op->schema_text);
  }
}

static fbx_status *run(const fbx_op **op, const char *kind, fbx_ivalue *args, int nargs, fbx_ivalue *outs) {
  return gr_run_op(NULL, op, kind, args, nargs, outs, NULL);
}

/* Fail the n-th allocation: NOMEM, outputs left None, nothing leaked (ASan). */
static void fail_sweep(const char *kind, fbx_ivalue *args, int nargs) {
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  bool done = false;
  for (long n = 0; n < 64 && !done; n++) {
    fbx_alloc_fail_after(n);
    fbx_status *st = run(&op, kind, args, nargs, outs);
    fbx_alloc_fail_after(-1);
    if (st) {
      ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM, "%s n=%ld: %s", kind, n, fbx_status_message(st));
      ck_assert(outs[0].kind == FBX_IV_NONE);
      fbx_status_free(st);
    } else {
      done = true;
      ck_assert_msg(n > 0, "%s allocated nothing?", kind);
      fbx_iv_release(&outs[0]);
    }
  }
  ck_assert_msg(done, "%s never succeeded", kind);
}

#define GR_ID_(id, schema, cat, dt, sh, flags, kernel) FBX_OP_##id,

#ifndef FBX_GOLDEN_RUNNER_ONLY

static const int shape_ids[] = {FBX_OPS_SHAPE(GR_ID_)};
#define NSHAPE ((int)(sizeof shape_ids / sizeof shape_ids[0]))

START_TEST(test_golden) {
  static gr_family f;
  f.name = "list_shape.h";
  f.ids = shape_ids;
  f.nids = NSHAPE;
  gr_run_all(&f);
  ck_assert_int_gt(f.ran, 150);
  ck_assert_int_gt(f.errors, 30);
  gr_check_all_seen(&f);
}
END_TEST

/* Every row is a view (ALIAS + VIEW) or a shape op, with the table's columns consistent. */
START_TEST(test_rows) {
  OK(fbx_op_table_init());
  for (int i = 0; i < NSHAPE; i++) {
    const fbx_op *op = fbx_op_get((fbx_op_id)shape_ids[i]);
    ck_assert(op && op->kernel);
    if (op->category == FBX_OPCAT_VIEW) ck_assert_msg(op->flags & FBX_OPF_ALIAS, "%s", op->id_name);
    else ck_assert_msg(op->category == FBX_OPCAT_SHAPE && !(op->flags & FBX_OPF_ALIAS), "%s", op->id_name);
    if (op->schema.ret_list) ck_assert_msg(op->flags & FBX_OPF_MUTABLE_OUT, "%s", op->id_name);
    ck_assert(!(op->flags & (FBX_OPF_NONDET | FBX_OPF_SIDE_EFFECT | FBX_OPF_INPLACE)));
  }
}
END_TEST

/* ---- literal tests ---------------------------------------------------------------------- */

static fbx_tensor *arange_f32(int n, int ndim, const int64_t *sizes) {
  fbx_tensor *t = NULL;
  OK(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, ndim, sizes));
  for (int i = 0; i < n; i++) fbx_tensor_set_f64(t, i, i);
  return t;
}

static fbx_ivalue int_list(int n, const int64_t *v) {
  fbx_ivalue l;
  OK(fbx_iv_list_new(&l, n));
  for (int i = 0; i < n; i++) OK(fbx_iv_list_push(&l, fbx_iv_int(v[i])));
  return l;
}

static void expect_err(fbx_status *st, const char *sub1, const char *sub2) {
  ck_assert_msg(st != NULL, "expected an error with '%s'", sub1);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_RUNTIME);
  ck_assert_msg(strstr(fbx_status_message(st), sub1), "'%s' lacks '%s'", fbx_status_message(st), sub1);
  if (sub2) ck_assert_msg(strstr(fbx_status_message(st), sub2), "'%s' lacks '%s'", fbx_status_message(st), sub2);
  fbx_status_free(st);
}

/* Writes through views land in the base: x = arange(24).view(2,3,4);
 * x.transpose(0, 2)[3, 1, 0] = 100 sets x[0, 1, 3] (offset 7); x[:, 1:3].select(1, 1)[1] is x[1, 2]. */
START_TEST(test_write_through_views) {
  OK(fbx_op_table_init());
  int64_t s[3] = {2, 3, 4};
  fbx_tensor *x = arange_f32(24, 3, s);
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  fbx_ivalue a[5] = {fbx_iv_tensor(x), fbx_iv_int(0), fbx_iv_int(2)};
  OK(run(&op, "aten::transpose", a, 3, outs));
  fbx_tensor *tr = outs[0].u.t;
  ck_assert_ptr_eq(tr->storage, x->storage);
  fbx_tensor_set_f64(tr, 3 * 6 + 1 * 2 + 0, 100.0); /* tr[3,1,0], tr sizes [4,3,2] */
  ck_assert(fbx_tensor_get_f64(x, 7) == 100.0);
  fbx_iv_release(&outs[0]);

  fbx_ivalue b[5] = {fbx_iv_tensor(x), fbx_iv_int(1), fbx_iv_int(1), fbx_iv_int(3), fbx_iv_int(1)};
  OK(run(&op, "aten::slice", b, 5, outs));
  fbx_ivalue c[3] = {outs[0], fbx_iv_int(1), fbx_iv_int(1)};
  fbx_ivalue outs2[FBX_SCHEMA_MAX_RETS];
  OK(run(&op, "aten::select", c, 3, outs2));
  fbx_tensor *sel = outs2[0].u.t; /* x[:, 2, :], sizes [2, 4] */
  ck_assert_int_eq(sel->ndim, 2);
  fbx_tensor_set_f64(sel, 4 + 1, -5.0); /* x[1, 2, 1] = offset 21 */
  ck_assert(fbx_tensor_get_f64(x, 21) == -5.0);
  fbx_iv_release(&outs2[0]);
  fbx_iv_release(&outs[0]);

  /* split gives views too: x.split(1, 0)[1][0, 0, 0] is x[12] */
  fbx_ivalue d[3] = {fbx_iv_tensor(x), fbx_iv_int(1), fbx_iv_int(0)};
  OK(run(&op, "aten::split", d, 3, outs));
  fbx_tensor_set_f64(fbx_iv_list_at(&outs[0], 1)->u.t, 0, 42.0);
  ck_assert(fbx_tensor_get_f64(x, 12) == 42.0);
  fbx_iv_release(&outs[0]);

  /* reshape of a non-viewable tensor copies: writes don't reach x */
  fbx_ivalue e[3] = {fbx_iv_tensor(x), fbx_iv_int(0), fbx_iv_int(2)};
  OK(run(&op, "aten::transpose", e, 3, outs));
  int64_t m1 = -1;
  fbx_ivalue f[2] = {outs[0], int_list(1, &m1)};
  OK(run(&op, "aten::reshape", f, 2, outs2));
  ck_assert_ptr_ne(outs2[0].u.t->storage, x->storage);
  fbx_iv_release(&f[1]);
  fbx_iv_release(&outs2[0]);
  fbx_iv_release(&outs[0]);
  fbx_tensor_release(x);
}
END_TEST

/* Messages name the op and the sizes involved. */
START_TEST(test_error_messages) {
  OK(fbx_op_table_init());
  int64_t s[3] = {2, 3, 4};
  fbx_tensor *x = arange_f32(24, 3, s);
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS], o2[FBX_SCHEMA_MAX_RETS];
  fbx_ivalue tr[3] = {fbx_iv_tensor(x), fbx_iv_int(0), fbx_iv_int(2)};
  OK(run(&op, "aten::transpose", tr, 3, outs));
  int64_t n24 = 24;
  fbx_ivalue v[2] = {outs[0], int_list(1, &n24)};
  /* torch: x.transpose(0, 2).view(24) -> "view size is not compatible with input tensor's size and stride ..." */
  expect_err(run(&op, "aten::view", v, 2, o2), "aten::view: view size is not compatible", "[4, 3, 2]");
  fbx_iv_release(&v[1]);
  fbx_iv_release(&outs[0]);

  int64_t s5[2] = {5, -1};
  fbx_ivalue v2[2] = {fbx_iv_tensor(x), int_list(2, s5)};
  expect_err(run(&op, "aten::view", v2, 2, o2), "shape '[5, -1]' is invalid for input of size 24", NULL);
  fbx_iv_release(&v2[1]);

  fbx_ivalue sel[3] = {fbx_iv_tensor(x), fbx_iv_int(0), fbx_iv_int(2)};
  expect_err(run(&op, "aten::select", sel, 3, o2), "aten::select: select(): index 2 out of range", "[2, 3, 4]");
  fbx_ivalue sq[2] = {fbx_iv_tensor(x), fbx_iv_int(3)};
  expect_err(run(&op, "aten::squeeze", sq, 2, o2), "aten::squeeze: dim 3 out of range", NULL);

  int64_t s23[2] = {2, 3}, s24[2] = {2, 4};
  fbx_tensor *a = NULL, *b = NULL;
  OK(fbx_tensor_zeros(&a, FBX_DTYPE_FLOAT32, 2, s23));
  OK(fbx_tensor_zeros(&b, FBX_DTYPE_FLOAT32, 2, s24));
  fbx_ivalue l;
  OK(fbx_iv_list_new(&l, 2));
  OK(fbx_iv_list_push(&l, fbx_iv_tensor(a)));
  OK(fbx_iv_list_push(&l, fbx_iv_tensor(b)));
  fbx_ivalue cat[2] = {l, fbx_iv_int(0)};
  expect_err(run(&op, "aten::cat", cat, 2, o2), "aten::cat: Sizes of tensors must match except in dimension 0",
             "Expected size 3 but got size 4");
  fbx_iv_release(&l);

  fbx_tensor *idx = NULL;
  int64_t three = 3, iv[3] = {0, 5, 1};
  OK(fbx_tensor_from_data(&idx, FBX_DTYPE_INT64, 1, &three, iv));
  fbx_ivalue is[3] = {fbx_iv_tensor(x), fbx_iv_int(1), fbx_iv_tensor(idx)};
  expect_err(run(&op, "aten::index_select", is, 3, o2), "aten::index_select: index 5 is out of range", "size 3");
  fbx_tensor_release(idx);
  fbx_tensor_release(x);
}
END_TEST

/* A few PyTorch facts stated literally (checked in torch 1.13):
 *   torch.ones(3).expand(1, 3).stride() == (3, 1)     (leading size-1 dim is not stride 0)
 *   torch.ones(2,3).t().contiguous() is a copy, torch.ones(2,3).contiguous() is self
 *   len(torch.ones(0, 3).chunk(3)) == 3 */
START_TEST(test_literal_facts) {
  OK(fbx_op_table_init());
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  int64_t three = 3, s13[2] = {1, 3}, s23[2] = {2, 3}, s03[2] = {0, 3};
  fbx_tensor *o = NULL, *m = NULL, *e = NULL;
  OK(fbx_tensor_zeros(&o, FBX_DTYPE_FLOAT32, 1, &three));
  fbx_ivalue ex[3] = {fbx_iv_tensor(o), int_list(2, s13), fbx_iv_bool(false)};
  OK(run(&op, "aten::expand", ex, 3, outs));
  ck_assert_int_eq(outs[0].u.t->strides[0], 3);
  ck_assert_int_eq(outs[0].u.t->strides[1], 1);
  fbx_iv_release(&outs[0]);
  fbx_iv_release(&ex[1]);

  OK(fbx_tensor_zeros(&m, FBX_DTYPE_FLOAT32, 2, s23));
  fbx_ivalue c[2] = {fbx_iv_tensor(m), fbx_iv_int(0)};
  OK(run(&op, "aten::contiguous", c, 2, outs));
  ck_assert_ptr_eq(outs[0].u.t, m);
  fbx_iv_release(&outs[0]);

  OK(fbx_tensor_zeros(&e, FBX_DTYPE_FLOAT32, 2, s03));
  fbx_ivalue ch[3] = {fbx_iv_tensor(e), fbx_iv_int(3), fbx_iv_int(0)};
  OK(run(&op, "aten::chunk", ch, 3, outs));
  ck_assert_int_eq(fbx_iv_list_len(&outs[0]), 3);
  fbx_iv_release(&outs[0]);
  fbx_tensor_release(o);
  fbx_tensor_release(m);
  fbx_tensor_release(e);
}
END_TEST

/* Large and non-contiguous inputs take the parallel and strided paths of
 * cat/stack/index_select: compare with element loops. */
START_TEST(test_large_paths) {
  OK(fbx_op_table_init());
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  int64_t s[2] = {300, 257};
  fbx_tensor *a = arange_f32(300 * 257, 2, s), *b = NULL;
  OK(fbx_tensor_empty(&b, FBX_DTYPE_FLOAT64, 2, s));
  for (int64_t i = 0; i < b->numel; i++) fbx_tensor_set_f64(b, i, -(double)i);
  fbx_ivalue l;
  OK(fbx_iv_list_new(&l, 2));
  OK(fbx_iv_list_push(&l, fbx_iv_tensor(fbx_tensor_retain(a))));
  OK(fbx_iv_list_push(&l, fbx_iv_tensor(fbx_tensor_retain(a))));
  fbx_ivalue args[2] = {l, fbx_iv_int(1)};
  OK(run(&op, "aten::cat", args, 2, outs));
  fbx_tensor *r = outs[0].u.t;
  ck_assert_int_eq(r->sizes[1], 514);
  for (int64_t i = 0; i < 300; i++)
    for (int64_t j = 0; j < 514; j++)
      ck_assert(fbx_tensor_get_f64(r, i * 514 + j) == (double)(i * 257 + j % 257));
  fbx_iv_release(&outs[0]);
  /* mixed dtypes: strided path with promotion to float64 */
  fbx_iv_release(fbx_iv_list_at(&l, 1));
  *fbx_iv_list_at(&l, 1) = fbx_iv_tensor(fbx_tensor_retain(b));
  args[1] = fbx_iv_int(0);
  OK(run(&op, "aten::stack", args, 2, outs));
  r = outs[0].u.t;
  ck_assert_int_eq(r->dtype, FBX_DTYPE_FLOAT64);
  for (int64_t i = 0; i < a->numel; i++) {
    ck_assert(fbx_tensor_get_f64(r, i) == (double)i);
    ck_assert(fbx_tensor_get_f64(r, a->numel + i) == -(double)i);
  }
  fbx_iv_release(&outs[0]);
  fbx_iv_release(&l);
  /* index_select on a transposed input */
  fbx_ivalue t[3] = {fbx_iv_tensor(a), fbx_iv_int(0), fbx_iv_int(1)};
  OK(run(&op, "aten::transpose", t, 3, outs));
  fbx_tensor *tr = outs[0].u.t, *idx = NULL;
  int64_t n = 1000;
  OK(fbx_tensor_empty(&idx, FBX_DTYPE_INT32, 1, &n));
  for (int64_t i = 0; i < n; i++) fbx_tensor_set_i64(idx, i, (i * 7) % 257);
  fbx_ivalue is[3] = {fbx_iv_tensor(tr), fbx_iv_int(0), fbx_iv_tensor(idx)};
  fbx_ivalue o2[FBX_SCHEMA_MAX_RETS];
  OK(run(&op, "aten::index_select", is, 3, o2));
  r = o2[0].u.t;
  ck_assert_int_eq(r->sizes[0], 1000);
  ck_assert_int_eq(r->sizes[1], 300);
  for (int64_t i = 0; i < 1000; i++)
    for (int64_t j = 0; j < 300; j++)
      ck_assert(fbx_tensor_get_f64(r, i * 300 + j) == (double)(j * 257 + (i * 7) % 257));
  fbx_iv_release(&o2[0]);
  fbx_iv_release(&outs[0]);
  fbx_tensor_release(idx);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}
END_TEST

START_TEST(test_alloc_failures) {
  OK(fbx_op_table_init());
  int64_t s[2] = {4, 6}, m1 = -1;
  fbx_tensor *x = arange_f32(24, 2, s), *y = NULL;
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  fbx_ivalue t[3] = {fbx_iv_tensor(x), fbx_iv_int(0), fbx_iv_int(1)};
  OK(run(&op, "aten::transpose", t, 3, outs));
  y = outs[0].u.t;
  /* reshape with copy */
  fbx_ivalue r[2] = {fbx_iv_tensor(y), int_list(1, &m1)};
  fail_sweep("aten::reshape", r, 2);
  fbx_iv_release(&r[1]);
  /* cat: contiguous fast path, strided path with promotion, many inputs */
  fbx_ivalue l;
  fbx_tensor *z = NULL;
  OK(fbx_tensor_clone_as(&z, y, y->dtype));
  OK(fbx_iv_list_new(&l, 20));
  for (int i = 0; i < 20; i++) OK(fbx_iv_list_push(&l, fbx_iv_tensor(fbx_tensor_retain(i % 2 ? z : y))));
  fbx_ivalue c[2] = {l, fbx_iv_int(0)};
  fail_sweep("aten::cat", c, 2);
  fail_sweep("aten::stack", c, 2);
  fbx_iv_release(&l);
  OK(fbx_iv_list_new(&l, 20));
  for (int i = 0; i < 20; i++) OK(fbx_iv_list_push(&l, fbx_iv_tensor(fbx_tensor_retain(z))));
  c[0] = l;
  fail_sweep("aten::cat", c, 2);
  fbx_iv_release(&l);
  fbx_tensor_release(z);
  fbx_tensor *d = NULL;
  OK(fbx_tensor_zeros(&d, FBX_DTYPE_FLOAT64, 2, s));
  OK(fbx_iv_list_new(&l, 2));
  OK(fbx_iv_list_push(&l, fbx_iv_tensor(fbx_tensor_retain(x))));
  OK(fbx_iv_list_push(&l, fbx_iv_tensor(d)));
  c[0] = l;
  fail_sweep("aten::cat", c, 2);
  fbx_iv_release(&l);
  /* list-returning views */
  fbx_ivalue ch[3] = {fbx_iv_tensor(x), fbx_iv_int(3), fbx_iv_int(1)};
  fail_sweep("aten::chunk", ch, 3);
  fbx_ivalue ub[2] = {fbx_iv_tensor(x), fbx_iv_int(0)};
  fail_sweep("aten::unbind", ub, 2);
  fbx_ivalue sz[1] = {fbx_iv_tensor(x)};
  fail_sweep("aten::size", sz, 1);
  fbx_iv_release(&outs[0]);
  fbx_tensor_release(x);
}
END_TEST

/* The shape family's second batch: unfold and tensor_split are views (writes
 * reach the base), diff refuses a negative order (torch 1.13 returned self
 * unchanged; later versions refuse it too), and the composite kernels
 * release everything when an allocation fails. */
START_TEST(test_batch2_literal) {
  OK(fbx_op_table_init());
  int64_t s[2] = {3, 5};
  fbx_tensor *x = arange_f32(15, 2, s);
  const fbx_op *op;
  fbx_ivalue outs[FBX_SCHEMA_MAX_RETS];
  /* x.unfold(1, 2, 1)[2, 3, 1] is x[2, 4] (offset 14) */
  fbx_ivalue u[4] = {fbx_iv_tensor(x), fbx_iv_int(1), fbx_iv_int(2), fbx_iv_int(1)};
  OK(run(&op, "aten::unfold", u, 4, outs));
  ck_assert_ptr_eq(outs[0].u.t->storage, x->storage);
  fbx_tensor_set_f64(outs[0].u.t, 2 * 8 + 3 * 2 + 1, 77.0);
  ck_assert(fbx_tensor_get_f64(x, 14) == 77.0);
  fbx_iv_release(&outs[0]);
  /* x.tensor_split(2, 1)[1][0, 0] is x[0, 3] */
  fbx_ivalue ts[3] = {fbx_iv_tensor(x), fbx_iv_int(2), fbx_iv_int(1)};
  OK(run(&op, "aten::tensor_split", ts, 3, outs));
  fbx_tensor_set_f64(fbx_iv_list_at(&outs[0], 1)->u.t, 0, -3.0);
  ck_assert(fbx_tensor_get_f64(x, 3) == -3.0);
  fbx_iv_release(&outs[0]);
  /* diff with n = -1 */
  fbx_ivalue df[5] = {fbx_iv_tensor(x), fbx_iv_int(-1), fbx_iv_int(-1), fbx_iv_none(), fbx_iv_none()};
  expect_err(run(&op, "aten::diff", df, 5, outs), "aten::diff: order must be non-negative but got -1", NULL);

  /* allocation failures */
  fbx_tensor *t = NULL;
  fbx_ivalue tr[3] = {fbx_iv_tensor(x), fbx_iv_int(0), fbx_iv_int(1)};
  OK(run(&op, "aten::transpose", tr, 3, outs));
  t = outs[0].u.t; /* [5, 3], non-contiguous */
  fbx_ivalue l;
  OK(fbx_iv_list_new(&l, 2));
  OK(fbx_iv_list_push(&l, fbx_iv_tensor(fbx_tensor_retain(t))));
  OK(fbx_iv_list_push(&l, fbx_iv_tensor(fbx_tensor_retain(t))));
  fail_sweep("aten::hstack", (fbx_ivalue[]){l}, 1);
  fail_sweep("aten::vstack", (fbx_ivalue[]){l}, 1);
  fail_sweep("aten::dstack", (fbx_ivalue[]){l}, 1);
  fail_sweep("aten::column_stack", (fbx_ivalue[]){l}, 1);
  fail_sweep("aten::atleast_3d", (fbx_ivalue[]){l}, 1);
  fbx_iv_release(&l);
  fail_sweep("aten::diff", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_int(2), fbx_iv_int(1), fbx_iv_tensor(t), fbx_iv_none()}, 5);
  fail_sweep("aten::kron", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_tensor(x)}, 2);
  fbx_ivalue dims = int_list(2, (int64_t[]){1, 0});
  fail_sweep("aten::rot90", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_int(1), dims}, 3);
  fbx_iv_release(&dims);
  fail_sweep("aten::fliplr", (fbx_ivalue[]){fbx_iv_tensor(t)}, 1);
  fail_sweep("aten::tensor_split", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_int(7), fbx_iv_int(0)}, 3);
  fail_sweep("aten::hsplit", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_int(3)}, 2);
  fail_sweep("aten::count_nonzero", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_int(0)}, 2);
  fail_sweep("aten::argwhere", (fbx_ivalue[]){fbx_iv_tensor(t)}, 1);
  fbx_tensor *idx = NULL, *mask = NULL;
  int64_t n4[2] = {5, 2}, iv[10] = {0, 2, 1, 1, -1, 0, 2, 2, 0, 1};
  OK(fbx_tensor_from_data(&idx, FBX_DTYPE_INT64, 2, n4, iv));
  fail_sweep("aten::take", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_tensor(idx)}, 2);
  fbx_tensor_set_i64(idx, 4, 1);
  fail_sweep("aten::take_along_dim", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_tensor(idx), fbx_iv_int(1)}, 3);
  fail_sweep("aten::take_along_dim", (fbx_ivalue[]){fbx_iv_tensor(x), fbx_iv_tensor(idx), fbx_iv_none()}, 3);
  fbx_tensor *idx1 = NULL;
  int64_t three = 3, iv1[3] = {0, -1, 2};
  OK(fbx_tensor_from_data(&idx1, FBX_DTYPE_INT64, 1, &three, iv1));
  fail_sweep("aten::index_fill", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_int(0), fbx_iv_tensor(idx1), fbx_iv_float(2.0)}, 4);
  fbx_tensor_release(idx1);
  OK(fbx_tensor_zeros(&mask, FBX_DTYPE_BOOL, 2, (int64_t[]){5, 3}));
  fbx_tensor_set_i64(mask, 4, 1);
  fbx_tensor_set_i64(mask, 7, 1);
  fail_sweep("aten::masked_scatter", (fbx_ivalue[]){fbx_iv_tensor(t), fbx_iv_tensor(mask), fbx_iv_tensor(x)}, 3);
  fbx_ivalue szs = int_list(2, s);
  fbx_tensor *g = NULL;
  OK(fbx_tensor_zeros(&g, FBX_DTYPE_FLOAT32, 3, (int64_t[]){1, 5, 3}));
  fail_sweep("aten::unfold_backward", (fbx_ivalue[]){fbx_iv_tensor(g), szs, fbx_iv_int(0), fbx_iv_int(3), fbx_iv_int(1)}, 5);
  fbx_iv_release(&szs);
  fbx_tensor_release(g);
  fbx_tensor_release(mask);
  fbx_tensor_release(idx);
  fbx_iv_release(&outs[0]);
  fbx_tensor_release(x);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ops_shape");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_golden);
  tcase_add_test(tc, test_rows);
  tcase_add_test(tc, test_write_through_views);
  tcase_add_test(tc, test_error_messages);
  tcase_add_test(tc, test_literal_facts);
  tcase_add_test(tc, test_large_paths);
  tcase_add_test(tc, test_alloc_failures);
  tcase_add_test(tc, test_batch2_literal);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif /* FBX_GOLDEN_RUNNER_ONLY */
