/* The reference interpreter: control flow, lists/tuples, scalar semantics,
 * last-use freeing, error messages, input checks, threads, allocation failures. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "exec/interp.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------------------------- */

static fbx_graph *parse(const char *text) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "parse: %s", fbx_status_message(st));
  return g;
}

typedef struct fixture {
  fbx_graph *g;
  fbx_interp *it;
} fixture;

static fixture make(const char *text) {
  fixture f = {parse(text), NULL};
  fbx_status *st = fbx_interp_create(&f.it, f.g);
  ck_assert_msg(!st, "create: %s", fbx_status_message(st));
  return f;
}

static void drop(fixture *f) {
  fbx_interp_destroy(f->it);
  fbx_graph_destroy(f->g);
}

/* Run and expect success; outputs are new references. */
static void run_ok(fixture *f, const fbx_ivalue *in, int n, fbx_ivalue *out) {
  fbx_status *st = fbx_interp_run(f->it, in, n, out, NULL);
  ck_assert_msg(!st, "run: %s", fbx_status_message(st));
}

/* Run and expect an error; returns its message (static copy). */
static const char *run_err(fixture *f, const fbx_ivalue *in, int n, fbx_code code) {
  static char msg[4096];
  fbx_ivalue out[8];
  fbx_status *st = fbx_interp_run(f->it, in, n, out, NULL);
  ck_assert_msg(st != NULL, "expected an error");
  snprintf(msg, sizeof msg, "%s", fbx_status_message(st));
  ck_assert_msg(fbx_status_code(st) == code, "code %s, message: %s", fbx_code_name(fbx_status_code(st)), msg);
  fbx_status_free(st);
  for (int i = 0; i < fbx_interp_noutputs(f->it); i++) ck_assert_int_eq(out[i].kind, FBX_IV_NONE);
  return msg;
}

static fbx_tensor *tensor_f32(int ndim, const int64_t *sizes, float fill) {
  fbx_tensor *t = NULL;
  fbx_status *st = fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, ndim, sizes);
  ck_assert(!st);
  for (int64_t i = 0; i < t->numel; i++) ((float *)t->data)[i] = fill + (float)i;
  return t;
}

#define ASSERT_INT(v, x) \
  do { ck_assert_int_eq((v).kind, FBX_IV_INT); ck_assert_int_eq((v).u.i, (x)); } while (0)
#define ASSERT_FLOAT(v, x) \
  do { ck_assert_int_eq((v).kind, FBX_IV_FLOAT); ck_assert_double_eq_tol((v).u.f, (x), 1e-12); } while (0)
#define ASSERT_BOOL(v, x) \
  do { ck_assert_int_eq((v).kind, FBX_IV_BOOL); ck_assert_int_eq((v).u.b, (x)); } while (0)

static void release_all(fbx_ivalue *v, int n) {
  for (int i = 0; i < n; i++) fbx_iv_release(&v[i]);
}

/* ---- scalar semantics ---------------------------------------------------------------------------- */

static const char *SCALAR_INT =
    "graph(%a.1 : int,\n"
    "      %b.1 : int):\n"
    "  %2 : int = prim::Constant[value=2]()\n"
    "  %4 : int = aten::floordiv(%a.1, %b.1)\n"
    "  %8 : int = aten::remainder(%a.1, %b.1)\n"
    "  %11 : int = aten::mul(%a.1, %b.1)\n"
    "  %16 : bool = aten::lt(%a.1, %b.1)\n"
    "  %19 : float = aten::pow(%a.1, %2)\n"
    "  %21 : int = prim::abs(%a.1)\n"
    "  %22 : float = aten::div(%a.1, %b.1)\n"
    "  %23 : int = aten::__and__(%a.1, %b.1)\n"
    "  %24 : int = aten::neg(%a.1)\n"
    "  %25 : (int, int, int, bool, float, int, float, int, int) = prim::TupleConstruct(%4, %8, %11, %16, %19, %21, %22, %23, %24)\n"
    "  return (%25)\n";

START_TEST(scalar_int_python_semantics) {
  fixture f = make(SCALAR_INT);
  static const struct {
    int64_t a, b, fd, md;
  } cases[] = {{7, 2, 3, 1}, {-7, 2, -4, 1}, {7, -2, -4, -1}, {-7, -2, 3, -1}, {-7, 3, -3, 2}, {6, 3, 2, 0}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    fbx_ivalue in[2] = {fbx_iv_int(cases[k].a), fbx_iv_int(cases[k].b)}, out[1];
    run_ok(&f, in, 2, out);
    ck_assert_int_eq(out[0].kind, FBX_IV_TUPLE);
    fbx_ivalue *r = out[0].u.l->items;
    ASSERT_INT(r[0], cases[k].fd);
    ASSERT_INT(r[1], cases[k].md);
    ASSERT_INT(r[2], cases[k].a * cases[k].b);
    ASSERT_BOOL(r[3], cases[k].a < cases[k].b);
    ASSERT_FLOAT(r[4], (double)(cases[k].a * cases[k].a)); /* int ** int is a float in TorchScript */
    ASSERT_INT(r[5], llabs(cases[k].a));
    ASSERT_FLOAT(r[6], (double)cases[k].a / (double)cases[k].b); /* int / int is always a float */
    ASSERT_INT(r[7], cases[k].a & cases[k].b);
    ASSERT_INT(r[8], -cases[k].a);
    fbx_iv_release(&out[0]);
  }
  /* integer division by zero is an error, not a crash */
  fbx_ivalue in[2] = {fbx_iv_int(1), fbx_iv_int(0)};
  const char *msg = run_err(&f, in, 2, FBX_ERR_RUNTIME);
  ck_assert_msg(strstr(msg, "aten::floordiv") && strstr(msg, "by zero"), "%s", msg);
  drop(&f);
}
END_TEST

static const char *SCALAR_FLOAT =
    "graph(%a.1 : float,\n"
    "      %b.1 : float,\n"
    "      %i.1 : int):\n"
    "  %4 : float = aten::floordiv(%a.1, %b.1)\n"
    "  %5 : float = aten::remainder(%a.1, %b.1)\n"
    "  %6 : float = aten::add(%i.1, %a.1)\n"
    "  %7 : float = aten::mul(%a.1, %i.1)\n"
    "  %8 : int = aten::Int(%a.1)\n"
    "  %9 : float = aten::Float(%i.1)\n"
    "  %10 : float = prim::max(%a.1, %b.1)\n"
    "  %11 : float = prim::min(%i.1, %b.1)\n"
    "  %12 : bool = aten::eq(%i.1, %a.1)\n"
    "  %13 : int = aten::floor(%a.1)\n"
    "  %14 : float = aten::sub(%a.1, %i.1)\n"
    "  return (%4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14)\n";

START_TEST(scalar_float_and_mixing) {
  fixture f = make(SCALAR_FLOAT);
  fbx_ivalue in[3] = {fbx_iv_float(-7.5), fbx_iv_float(2.0), fbx_iv_int(3)}, out[11];
  run_ok(&f, in, 3, out);
  ASSERT_FLOAT(out[0], -4.0);
  ASSERT_FLOAT(out[1], 0.5); /* Python: the remainder takes the divisor's sign */
  ASSERT_FLOAT(out[2], -4.5);
  ASSERT_FLOAT(out[3], -22.5);
  ASSERT_INT(out[4], -7); /* int() truncates */
  ASSERT_FLOAT(out[5], 3.0);
  ASSERT_FLOAT(out[6], 2.0);
  ASSERT_FLOAT(out[7], 2.0);
  ASSERT_BOOL(out[8], false);
  ASSERT_INT(out[9], -8);
  ASSERT_FLOAT(out[10], -10.5);
  release_all(out, 11);

  /* TorchScript's float // and % by zero give inf/nan (no exception) */
  fbx_ivalue in2[3] = {fbx_iv_float(1.0), fbx_iv_float(0.0), fbx_iv_int(3)};
  run_ok(&f, in2, 3, out);
  ck_assert(isinf(out[0].u.f));
  ck_assert(isnan(out[1].u.f));
  release_all(out, 11);

  /* an int given for a float input is widened */
  fbx_ivalue in3[3] = {fbx_iv_int(5), fbx_iv_float(2.0), fbx_iv_int(2)};
  run_ok(&f, in3, 3, out);
  ASSERT_FLOAT(out[0], 2.0);
  ASSERT_FLOAT(out[2], 7.0);
  release_all(out, 11);
  drop(&f);
}
END_TEST

/* a < b and b <= c, as TorchScript compiles a chained comparison */
static const char *CHAIN =
    "graph(%a.1 : int,\n"
    "      %b.1 : float,\n"
    "      %c.1 : int):\n"
    "  %f : bool = prim::Constant[value=0]()\n"
    "  %1 : bool = aten::lt(%a.1, %b.1) # t.py:1:7\n"
    "  %2 : bool = prim::If(%1) # t.py:1:7\n"
    "    block0():\n"
    "      %3 : bool = aten::le(%b.1, %c.1) # t.py:1:20\n"
    "      -> (%3)\n"
    "    block1():\n"
    "      -> (%f)\n"
    "  %4 : bool = aten::__not__(%2)\n"
    "  %5 : bool = aten::ne(%a.1, %c.1)\n"
    "  %6 : bool = aten::__or__(%4, %5)\n"
    "  return (%2, %6)\n";

START_TEST(comparison_chain) {
  fixture f = make(CHAIN);
  static const struct {
    int64_t a;
    double b;
    int64_t c;
    bool r;
  } cases[] = {{1, 2.5, 3, true}, {1, 3.0, 3, true}, {3, 2.5, 3, false}, {1, 3.5, 3, false}, {2, 2.0, 3, false}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    fbx_ivalue in[3] = {fbx_iv_int(cases[k].a), fbx_iv_float(cases[k].b), fbx_iv_int(cases[k].c)}, out[2];
    run_ok(&f, in, 3, out);
    ASSERT_BOOL(out[0], cases[k].r);
    ASSERT_BOOL(out[1], !cases[k].r || cases[k].a != cases[k].c);
  }
  drop(&f);
}
END_TEST

/* Scalar-typed inputs: the overload is chosen from the values at run time,
 * and a node that saw ints picks again when it sees floats. */
static const char *DYNAMIC =
    "graph(%a : Scalar,\n"
    "      %b : Scalar):\n"
    "  %c : Scalar = aten::add(%a, %b)\n"
    "  %d : Scalar = aten::floordiv(%a, %b)\n"
    "  %e : bool = aten::gt(%a, %b)\n"
    "  return (%c, %d, %e)\n";

START_TEST(runtime_overload_cache) {
  fixture f = make(DYNAMIC);
  for (int rep = 0; rep < 3; rep++) {
    fbx_ivalue in[2] = {fbx_iv_int(7), fbx_iv_int(2)}, out[3];
    run_ok(&f, in, 2, out);
    ASSERT_INT(out[0], 9);
    ASSERT_INT(out[1], 3);
    ASSERT_BOOL(out[2], true);
    fbx_ivalue in2[2] = {fbx_iv_float(7.5), fbx_iv_int(2)};
    run_ok(&f, in2, 2, out);
    ASSERT_FLOAT(out[0], 9.5);
    ASSERT_FLOAT(out[1], 3.0);
    ASSERT_BOOL(out[2], true);
    fbx_ivalue in3[2] = {fbx_iv_bool(true), fbx_iv_bool(true)};
    run_ok(&f, in3, 2, out);
    ASSERT_INT(out[0], 2); /* True + True == 2 */
    ASSERT_BOOL(out[2], false);
  }
  drop(&f);
}
END_TEST

START_TEST(strings_and_format) {
  fixture f = make(
      "graph(%a.1 : int,\n"
      "      %b.1 : float,\n"
      "      %s.1 : str):\n"
      "  %fmt : str = prim::Constant[value=\"{} and {}: {}\"]()\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %m1 : int = prim::Constant[value=-1]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %l : int[] = prim::ListConstruct(%a.1, %one)\n"
      "  %r : str = aten::format(%fmt, %a.1, %b.1, %l)\n"
      "  %c : str = aten::__getitem__(%s.1, %m1)\n"
      "  %t : str = aten::slice(%s.1, %one, %none, %one)\n"
      "  %n : int = aten::len(%s.1)\n"
      "  %e : bool = aten::eq(%t, %s.1)\n"
      "  %lt : bool = aten::lt(%t, %s.1)\n"
      "  %cat : str = aten::add(%s.1, %t)\n"
      "  %fs : str = aten::str(%b.1)\n"
      "   = prim::Print(%r, %l, %b.1)\n"
      "  return (%r, %c, %t, %n, %e, %lt, %cat, %fs)\n");
  fbx_ivalue s;
  ck_assert(!fbx_iv_str_new(&s, "hello", 5));
  fbx_ivalue in[3] = {fbx_iv_int(3), fbx_iv_float(0.1), s}, out[8];
  run_ok(&f, in, 3, out);
  ck_assert_str_eq(fbx_iv_str_data(&out[0]), "3 and 0.1: [3, 1]");
  ck_assert_str_eq(fbx_iv_str_data(&out[1]), "o");
  ck_assert_str_eq(fbx_iv_str_data(&out[2]), "ello");
  ASSERT_INT(out[3], 5);
  ASSERT_BOOL(out[4], false);
  ASSERT_BOOL(out[5], true); /* "ello" < "hello" */
  ck_assert_str_eq(fbx_iv_str_data(&out[6]), "helloello");
  ck_assert_str_eq(fbx_iv_str_data(&out[7]), "0.1");
  release_all(out, 8);
  in[1] = fbx_iv_float(1e16);
  run_ok(&f, in, 3, out);
  ck_assert_str_eq(fbx_iv_str_data(&out[7]), "1e+16");
  release_all(out, 8);
  in[1] = fbx_iv_float(2.0);
  run_ok(&f, in, 3, out);
  ck_assert_str_eq(fbx_iv_str_data(&out[7]), "2.0");
  release_all(out, 8);
  fbx_iv_release(&s);
  drop(&f);
}
END_TEST

/* ---- control flow -------------------------------------------------------------------------------- */

/* sum of i*k for i in range(n), with an if inside; loop-carried and block params */
static const char *LOOP =
    "graph(%n.1 : int,\n"
    "      %k.1 : int):\n"
    "  %t : bool = prim::Constant[value=1]()\n"
    "  %zero : int = prim::Constant[value=0]()\n"
    "  %two : int = prim::Constant[value=2]()\n"
    "  %acc : int, %odd : int = prim::Loop(%n.1, %t, %zero, %zero) # t.py:3:4\n"
    "    block0(%i.1 : int, %acc.3 : int, %odd.3 : int):\n"
    "      %m : int = aten::mul(%i.1, %k.1)\n"
    "      %acc.5 : int = aten::add(%acc.3, %m)\n"
    "      %r : int = aten::remainder(%i.1, %two)\n"
    "      %c : bool = aten::eq(%r, %zero)\n"
    "      %odd.5 : int = prim::If(%c)\n"
    "        block0():\n"
    "          -> (%odd.3)\n"
    "        block1():\n"
    "          %o : int = aten::add(%odd.3, %k.1)\n"
    "          -> (%o)\n"
    "      -> (%t, %acc.5, %odd.5)\n"
    "  return (%acc, %odd)\n";

START_TEST(loop_carried_and_nested_if) {
  fixture f = make(LOOP);
  for (int64_t n = 0; n < 6; n++) {
    fbx_ivalue in[2] = {fbx_iv_int(n), fbx_iv_int(3)}, out[2];
    run_ok(&f, in, 2, out);
    int64_t acc = 0, odd = 0;
    for (int64_t i = 0; i < n; i++) {
      acc += i * 3;
      if (i % 2) odd += 3;
    }
    ASSERT_INT(out[0], acc);
    ASSERT_INT(out[1], odd);
  }
  drop(&f);
}
END_TEST

/* while i < limit and i < 100: i = i * 2 + 1  (max trip INT64_MAX, condition carried) */
static const char *WHILE =
    "graph(%limit.1 : int):\n"
    "  %max : int = prim::Constant[value=9223372036854775807]()\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %two : int = prim::Constant[value=2]()\n"
    "  %hundred : int = prim::Constant[value=100]()\n"
    "  %c0 : bool = aten::lt(%one, %limit.1)\n"
    "  %i : int, %trips : int = prim::Loop(%max, %c0, %one, %one)\n"
    "    block0(%it : int, %i.3 : int, %trips.3 : int):\n"
    "      %d : int = aten::mul(%i.3, %two)\n"
    "      %i.5 : int = aten::add(%d, %one)\n"
    "      %trips.5 : int = aten::add(%it, %one)\n"
    "      %c1 : bool = aten::lt(%i.5, %limit.1)\n"
    "      %c2 : bool = aten::lt(%i.5, %hundred)\n"
    "      %c : bool = aten::__and__(%c1, %c2)\n"
    "      -> (%c, %i.5, %trips.5)\n"
    "  return (%i, %trips)\n";

START_TEST(while_loop) {
  fixture f = make(WHILE);
  fbx_ivalue in[1] = {fbx_iv_int(20)}, out[2];
  run_ok(&f, in, 1, out);
  ASSERT_INT(out[0], 31); /* 1 -> 3 -> 7 -> 15 -> 31 */
  ASSERT_INT(out[1], 4);
  in[0] = fbx_iv_int(1); /* the condition is false before the first trip */
  run_ok(&f, in, 1, out);
  ASSERT_INT(out[0], 1);
  ASSERT_INT(out[1], 1);
  in[0] = fbx_iv_int(1000000); /* stopped by i < 100 */
  run_ok(&f, in, 1, out);
  ASSERT_INT(out[0], 127);
  drop(&f);
}
END_TEST

/* ---- lists and tuples ------------------------------------------------------------------------------ */

static const char *LISTS_OK =
    "graph(%x.1 : Tensor,\n"
    "      %n.1 : int):\n"
    "  %t : bool = prim::Constant[value=1]()\n"
    "  %m1 : int = prim::Constant[value=-1]()\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %cl : int[] = prim::Constant[value=[4, 5]]()\n"
    "  %dims.1 : int[] = prim::ListConstruct()\n"
    "   = prim::Loop(%n.1, %t)\n"
    "    block0(%i.1 : int):\n"
    "      %sq : int = aten::mul(%i.1, %i.1)\n"
    "      %a : int[] = aten::append(%dims.1, %sq)\n"
    "      -> (%t)\n"
    "  %last : int = aten::__getitem__(%dims.1, %m1)\n"
    "  %len : int = aten::len(%dims.1)\n"
    "  %tail : int[] = aten::slice(%dims.1, %one, %none, %one)\n"
    "  %both : int[] = aten::add(%tail, %cl)\n"
    "  %p : (Tensor, int) = prim::TupleConstruct(%x.1, %len)\n"
    "  %q : Tensor, %r : int = prim::TupleUnpack(%p)\n"
    "  %s : int = prim::TupleIndex(%p, %one)\n"
    "  %l2 : int[] = prim::ListConstruct(%r, %s)\n"
    "  %u : int, %v : int = prim::ListUnpack(%l2)\n"
    "  %has : bool = aten::__contains__(%both, %u)\n"
    "  %in : (Tensor, int[]) = prim::TupleConstruct(%q, %both)\n"
    "  %nested : (int, (Tensor, int[])) = prim::TupleConstruct(%last, %in)\n"
    "  return (%last, %len, %both, %nested, %v, %has)\n";

START_TEST(lists_and_tuples) {
  fixture f = make(LISTS_OK);
  int64_t sz[1] = {3};
  fbx_tensor *x = tensor_f32(1, sz, 0);
  fbx_ivalue in[2] = {fbx_iv_tensor(x), fbx_iv_int(4)}, out[6];
  run_ok(&f, in, 2, out);
  ASSERT_INT(out[0], 9); /* [0, 1, 4, 9][-1] */
  ASSERT_INT(out[1], 4);
  ck_assert_int_eq(out[2].kind, FBX_IV_LIST);
  ck_assert_int_eq(out[2].u.l->n, 5); /* [1, 4, 9] + [4, 5] */
  ASSERT_INT(out[2].u.l->items[0], 1);
  ASSERT_INT(out[2].u.l->items[4], 5);
  ck_assert_int_eq(out[3].kind, FBX_IV_TUPLE);
  ASSERT_INT(out[3].u.l->items[0], 9);
  fbx_ivalue *inner = &out[3].u.l->items[1];
  ck_assert_int_eq(inner->kind, FBX_IV_TUPLE);
  ck_assert_ptr_eq(inner->u.l->items[0].u.t, x);
  ck_assert_ptr_eq(inner->u.l->items[1].u.l, out[2].u.l); /* the same list object */
  ASSERT_INT(out[4], 4);
  ASSERT_BOOL(out[5], true); /* 4 in [1, 4, 9, 4, 5] */
  release_all(out, 6);
  ck_assert_int_eq(atomic_load(&x->refcount), 1); /* everything the run held is released */

  /* n == 0: the list stays empty and [-1] is out of range */
  in[1] = fbx_iv_int(0);
  const char *msg = run_err(&f, in, 2, FBX_ERR_RUNTIME);
  ck_assert_msg(strstr(msg, "aten::__getitem__") && strstr(msg, "out of range"), "%s", msg);
  ck_assert_msg(strstr(msg, "in node: %last : int = aten::__getitem__(%dims.1, %m1)"), "%s", msg);
  fbx_tensor_release(x);
  drop(&f);
}
END_TEST

/* ---- constants --------------------------------------------------------------------------------------- */

START_TEST(constants) {
  fixture f = make(
      "graph():\n"
      "  %a : int = prim::Constant[value=-3]()\n"
      "  %b : float = prim::Constant[value=1.0000000000000001e-05]()\n"
      "  %c : bool = prim::Constant[value=1]()\n"
      "  %d : str = prim::Constant[value=\"tanh\"]()\n"
      "  %e : Device = prim::Constant[value=\"cpu\"]()\n"
      "  %n : NoneType = prim::Constant()\n"
      "  %l : float[] = prim::Constant[value=[1., 2.5]]()\n"
      "  %t : Tensor = prim::Constant[value={2}]()\n"
      "  %f : Function = prim::Constant[name=\"relu\"]()\n"
      "  return (%a, %b, %c, %d, %e, %n, %l, %t)\n");
  fbx_ivalue out[8];
  for (int rep = 0; rep < 2; rep++) {
    run_ok(&f, NULL, 0, out);
    ASSERT_INT(out[0], -3);
    ASSERT_FLOAT(out[1], 1e-5);
    ASSERT_BOOL(out[2], true);
    ck_assert_int_eq(out[3].kind, FBX_IV_STR);
    ck_assert_str_eq(fbx_iv_str_data(&out[3]), "tanh");
    ck_assert_int_eq(out[4].kind, FBX_IV_DEVICE);
    ck_assert_int_eq(out[5].kind, FBX_IV_NONE);
    ck_assert_int_eq(out[6].kind, FBX_IV_LIST);
    ASSERT_FLOAT(out[6].u.l->items[1], 2.5);
    ck_assert_int_eq(out[7].kind, FBX_IV_TENSOR);
    ck_assert_int_eq(out[7].u.t->ndim, 0);
    ck_assert_int_eq(fbx_tensor_get_i64(out[7].u.t, 0), 2);
    release_all(out, 8);
  }
  drop(&f);
}
END_TEST

START_TEST(unsupported_graphs) {
  fbx_graph *g = parse(
      "graph(%x : Tensor):\n"
      "  %c : Tensor = prim::Constant[value=<Tensor>]() # t.py:2:4\n"
      "  %y : Tensor = aten::len(%c)\n"
      "  return (%y)\n");
  fbx_interp *it = NULL;
  fbx_status *st = fbx_interp_create(&it, g);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(fbx_status_message(st), "t.py:2:4") && strstr(fbx_status_message(st), "<Tensor>") &&
                    strstr(fbx_status_message(st), "in node: %c : Tensor = prim::Constant"),
                "%s", fbx_status_message(st));
  fbx_status_free(st);
  fbx_graph_destroy(g);

  /* unknown ops fail when reached, not before: a branch never taken may hold them */
  fixture f = make(
      "graph(%x : Tensor,\n"
      "      %c : bool):\n"
      "  %fn : Function = prim::Constant[name=\"g\"]()\n"
      "  %r : int = prim::If(%c)\n"
      "    block0():\n"
      "      %y : Tensor = aten::no_such_op(%x) # t.py:3:4\n"
      "      %z : Tensor = prim::CallFunction(%fn, %y) # t.py:4:4\n"
      "      %l : int = aten::len(%z)\n"
      "      -> (%l)\n"
      "    block1():\n"
      "      %l2 : int = aten::len(%x)\n"
      "      -> (%l2)\n"
      "  return (%r)\n");
  int64_t sz[1] = {5};
  fbx_tensor *x = tensor_f32(1, sz, 0);
  fbx_ivalue in[2] = {fbx_iv_tensor(x), fbx_iv_bool(false)}, out[1];
  run_ok(&f, in, 2, out);
  ASSERT_INT(out[0], 5);
  in[1] = fbx_iv_bool(true);
  const char *m = run_err(&f, in, 2, FBX_ERR_UNSUPPORTED);
  ck_assert_msg(!strncmp(m, "t.py:3:4: aten::no_such_op is not in fusebox's op table\n  in node: %y : Tensor = "
                            "aten::no_such_op(%x)\n  inside the true branch",
                         110),
                "%s", m);
  fbx_tensor_release(x);
  drop(&f);
  f = make(
      "graph(%x : Tensor):\n"
      "  %fn : Function = prim::Constant[name=\"g\"]()\n"
      "  %z : Tensor = prim::CallFunction(%fn, %x) # t.py:4:4\n"
      "  return (%z)\n");
  x = tensor_f32(1, sz, 0);
  in[0] = fbx_iv_tensor(x);
  m = run_err(&f, in, 1, FBX_ERR_UNSUPPORTED);
  ck_assert_msg(strstr(m, "t.py:4:4: prim::CallFunction") && strstr(m, "inlined graph"), "%s", m);
  fbx_tensor_release(x);
  drop(&f);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------------------ */

static const char *NESTED_ERR =
    "graph(%xs.1 : int[],\n"
    "      %flag.1 : bool):\n"
    "  %t : bool = prim::Constant[value=1]()\n"
    "  %two : int = prim::Constant[value=2]()\n"
    "  %zero : int = prim::Constant[value=0]()\n"
    "  %r : int = prim::If(%flag.1) # m.py:3:4\n"
    "    block0():\n"
    "      %s : int = prim::Loop(%two, %t, %zero) # m.py:4:8\n"
    "        block0(%i : int, %s.3 : int):\n"
    "          %j : int = aten::add(%i, %two)\n"
    "          %e : int = aten::__getitem__(%xs.1, %j) # m.py:5:16\n"
    "          %s.5 : int = aten::add(%s.3, %e)\n"
    "          -> (%t, %s.5)\n"
    "      -> (%s)\n"
    "    block1():\n"
    "      -> (%zero)\n"
    "  return (%r)\n";

START_TEST(error_in_nested_block) {
  fixture f = make(NESTED_ERR);
  fbx_ivalue l;
  ck_assert(!fbx_iv_list_new(&l, 0));
  for (int i = 0; i < 3; i++) ck_assert(!fbx_iv_list_push(&l, fbx_iv_int(10 * i)));
  fbx_ivalue in[2] = {l, fbx_iv_bool(true)};
  const char *msg = run_err(&f, in, 2, FBX_ERR_RUNTIME);
  /* 2 + 1 = 3 is out of range for a list of 3, in the loop's second iteration */
  ck_assert_msg(!strncmp(msg, "m.py:5:16: aten::__getitem__: list index 3 out of range", 53), "%s", msg);
  ck_assert_msg(strstr(msg, "\n  in node: %e : int = aten::__getitem__(%xs.1, %j)"), "%s", msg);
  ck_assert_msg(strstr(msg, "\n  inside iteration 1 of: %s : int = prim::Loop(%two, %t, %zero) # m.py:4:8"), "%s",
                msg);
  ck_assert_msg(strstr(msg, "\n  inside the true branch (block0) of: %r : int = prim::If(%flag.1) # m.py:3:4"), "%s",
                msg);
  in[1] = fbx_iv_bool(false); /* the other branch runs fine */
  fbx_ivalue out[1];
  run_ok(&f, in, 2, out);
  ASSERT_INT(out[0], 0);
  fbx_iv_release(&l);
  drop(&f);
}
END_TEST

START_TEST(raise_exception) {
  fixture f = make(
      "graph(%n.1 : int):\n"
      "  %7 : str = prim::Constant[value=\"builtins.ValueError\"]() # c.py:6:14\n"
      "  %6 : str = prim::Constant[value=\"expected a 2-D input\"]() # c.py:6:25\n"
      "  %3 : int = prim::Constant[value=2]() # c.py:5:18\n"
      "  %4 : bool = aten::ne(%n.1, %3) # c.py:5:7\n"
      "   = prim::If(%4) # c.py:5:4\n"
      "    block0():\n"
      "       = prim::RaiseException(%6, %7) # c.py:6:8\n"
      "      -> ()\n"
      "    block1():\n"
      "      -> ()\n"
      "  %5 : int = aten::mul(%n.1, %3)\n"
      "  return (%5)\n");
  fbx_ivalue in[1] = {fbx_iv_int(3)}, out[1];
  const char *msg = run_err(&f, in, 1, FBX_ERR_RUNTIME);
  ck_assert_msg(!strncmp(msg, "c.py:6:8: the graph raised builtins.ValueError: expected a 2-D input\n  in node:", 74),
                "%s", msg);
  in[0] = fbx_iv_int(2);
  run_ok(&f, in, 1, out);
  ASSERT_INT(out[0], 4);
  drop(&f);
}
END_TEST

START_TEST(input_checks) {
  fixture f = make(
      "graph(%x.1 : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu),\n"
      "      %n.1 : int,\n"
      "      %b.1 : Tensor?):\n"
      "  %l : int = aten::len(%x.1)\n"
      "  %m : int = aten::add(%l, %n.1)\n"
      "  return (%m)\n");
  int64_t s23[2] = {2, 3}, s6[1] = {6};
  fbx_tensor *ok = tensor_f32(2, s23, 0), *flat = tensor_f32(1, s6, 0), *lng = NULL;
  ck_assert(!fbx_tensor_zeros(&lng, FBX_DTYPE_INT64, 2, s23));
  fbx_ivalue out[1];

  fbx_ivalue in[3] = {fbx_iv_tensor(ok), fbx_iv_int(1), fbx_iv_none()};
  run_ok(&f, in, 3, out);
  ASSERT_INT(out[0], 3);
  in[2] = fbx_iv_tensor(flat); /* Tensor? takes a tensor too */
  run_ok(&f, in, 3, out);

  const char *msg = run_err(&f, in, 2, FBX_ERR_INVALID_ARG);
  ck_assert_msg(strstr(msg, "takes 3 inputs") && strstr(msg, "2 given") && strstr(msg, "%n.1 : int"), "%s", msg);

  in[0] = fbx_iv_tensor(lng);
  msg = run_err(&f, in, 3, FBX_ERR_INVALID_ARG);
  ck_assert_msg(strstr(msg, "input 0 (%x.1 : Float(2, 3") && strstr(msg, "dtype int64") && strstr(msg, "float32"),
                "%s", msg);
  in[0] = fbx_iv_tensor(flat);
  msg = run_err(&f, in, 3, FBX_ERR_INVALID_ARG);
  ck_assert_msg(strstr(msg, "input 0") && strstr(msg, "1 dims where the graph says 2"), "%s", msg);
  in[0] = fbx_iv_tensor(ok);
  in[1] = fbx_iv_float(1.5);
  msg = run_err(&f, in, 3, FBX_ERR_INVALID_ARG);
  ck_assert_msg(strstr(msg, "input 1 (%n.1 : int): got float 1.5"), "%s", msg);
  in[1] = fbx_iv_int(1);
  in[2] = fbx_iv_int(1);
  msg = run_err(&f, in, 3, FBX_ERR_INVALID_ARG);
  ck_assert_msg(strstr(msg, "input 2 (%b.1 : Tensor?)"), "%s", msg);
  fbx_tensor_release(ok);
  fbx_tensor_release(flat);
  fbx_tensor_release(lng);
  drop(&f);
}
END_TEST

/* ---- last-use freeing ------------------------------------------------------------------------------------ */

/* x is used by the first node and inside the loop; y (a tensor made from
 * n) is used only at the start. The observer checks refcounts as it goes. */
static const char *LIFETIME =
    "graph(%x.1 : Tensor,\n"
    "      %n.1 : int):\n"
    "  %t : bool = prim::Constant[value=1]()\n"
    "  %zero : int = prim::Constant[value=0]()\n"
    "  %y : Tensor = prim::NumToTensor(%n.1)\n"
    "  %yi : int = aten::Int(%y)\n"
    "  %unused : int = prim::dtype(%x.1)\n"
    "  %s : int = prim::Loop(%n.1, %t, %zero)\n"
    "    block0(%i : int, %s.3 : int):\n"
    "      %l : int = aten::len(%x.1)\n"
    "      %s.5 : int = aten::add(%s.3, %l)\n"
    "      -> (%t, %s.5)\n"
    "  %after : int = aten::add(%s, %yi)\n"
    "  %after2 : int = aten::mul(%after, %yi)\n"
    "  return (%after2)\n";

typedef struct life_obs {
  fbx_tensor *x;
  fbx_tensor *y;
  long x_in_loop, x_after, y_after;
  int seen_after;
} life_obs;

static void observe_life(void *ctx, const fbx_node *n, const fbx_ivalue *outs, int nouts) {
  life_obs *o = ctx;
  const char *name = nouts ? n->outputs[0]->name : "";
  if (!strcmp(name, "y")) {
    o->y = outs[0].u.t;
    fbx_tensor_retain(o->y); /* our own reference, to watch the count */
  } else if (!strcmp(name, "l")) {
    o->x_in_loop = atomic_load(&o->x->refcount);
  } else if (!strcmp(name, "after")) {
    o->x_after = atomic_load(&o->x->refcount);
    o->y_after = atomic_load(&o->y->refcount);
    o->seen_after++;
  }
}

START_TEST(last_use_freeing) {
  fixture f = make(LIFETIME);
  int64_t sz[2] = {4, 2};
  fbx_tensor *x = tensor_f32(2, sz, 1);
  life_obs o = {.x = x};
  fbx_interp_stats stats;
  fbx_run_opts opts = {.observe = observe_life, .observe_ctx = &o, .stats = &stats};
  fbx_ivalue in[2] = {fbx_iv_tensor(x), fbx_iv_int(3)}, out[1];
  fbx_status *st = fbx_interp_run(f.it, in, 2, out, &opts);
  ck_assert_msg(!st, "%s", fbx_status_message(st));
  ASSERT_INT(out[0], (12 + 3) * 3);
  ck_assert_int_eq(o.x_in_loop, 2);  /* ours + the frame's, alive through the loop */
  ck_assert_int_eq(o.x_after, 1);    /* released when the loop ended */
  ck_assert_int_eq(o.y_after, 1);    /* y died right after aten::Int, long before the end */
  ck_assert_int_eq(o.seen_after, 1);
  ck_assert_int_eq(stats.peak_live_tensors, 2);
  ck_assert_int_eq(stats.nodes_run, 6 + 3 * 2);
  fbx_tensor_release(o.y);
  fbx_tensor_release(x);
  drop(&f);
}
END_TEST

/* A chain of 200 tensor-producing nodes keeps at most two alive. */
START_TEST(peak_live_is_bounded) {
  fbx_strbuf b = {0};
  fbx_strbuf_puts(&b, "graph(%n : int):\n  %v0 : int = aten::add(%n, %n)\n");
  for (int i = 0; i < 200; i++) {
    fbx_strbuf_printf(&b, "  %%t%d : Tensor = prim::NumToTensor(%%v%d)\n", i, i);
    fbx_strbuf_printf(&b, "  %%v%d : int = aten::Int(%%t%d)\n", i + 1, i);
  }
  fbx_strbuf_puts(&b, "  return (%v200)\n");
  fixture f = make(b.data);
  fbx_strbuf_free(&b);
  fbx_interp_stats stats;
  fbx_run_opts opts = {.stats = &stats};
  fbx_ivalue in[1] = {fbx_iv_int(21)}, out[1];
  ck_assert(!fbx_interp_run(f.it, in, 1, out, &opts));
  ASSERT_INT(out[0], 42);
  ck_assert_int_eq(stats.peak_live_tensors, 1);
  ck_assert_int_eq(stats.kernels_run, 401);
  drop(&f);
}
END_TEST

/* ---- threads ---------------------------------------------------------------------------------------- */

typedef struct thread_arg {
  fbx_interp *it;
  int id;
  int failures;
} thread_arg;

static void *thread_main(void *p) {
  thread_arg *a = p;
  for (int rep = 0; rep < 300; rep++) {
    int64_t n = (a->id + rep) % 9;
    fbx_ivalue in[2] = {fbx_iv_int(n), fbx_iv_int(a->id + 1)}, out[2];
    fbx_status *st = fbx_interp_run(a->it, in, 2, out, NULL);
    if (st) {
      a->failures++;
      fbx_status_free(st);
      continue;
    }
    int64_t acc = 0, odd = 0;
    for (int64_t i = 0; i < n; i++) {
      acc += i * (a->id + 1);
      if (i % 2) odd += a->id + 1;
    }
    if (out[0].u.i != acc || out[1].u.i != odd) a->failures++;
    /* the Scalar-typed graph: a fresh run-time overload cache per run */
  }
  return NULL;
}

typedef struct dyn_arg {
  fbx_interp *it;
  int id, failures;
} dyn_arg;

static void *dyn_thread(void *p) {
  dyn_arg *a = p;
  for (int rep = 0; rep < 300; rep++) {
    bool flt = (rep + a->id) % 2;
    fbx_ivalue in[2] = {flt ? fbx_iv_float(7.5) : fbx_iv_int(7), fbx_iv_int(2)}, out[3];
    fbx_status *st = fbx_interp_run(a->it, in, 2, out, NULL);
    if (st) {
      a->failures++;
      fbx_status_free(st);
      continue;
    }
    if (flt ? (out[0].kind != FBX_IV_FLOAT || out[0].u.f != 9.5) : (out[0].kind != FBX_IV_INT || out[0].u.i != 9))
      a->failures++;
  }
  return NULL;
}

START_TEST(concurrent_runs) {
  fixture f = make(LOOP), d = make(DYNAMIC);
  pthread_t th[8];
  thread_arg args[4];
  dyn_arg dargs[4];
  for (int i = 0; i < 4; i++) {
    args[i] = (thread_arg){.it = f.it, .id = i};
    dargs[i] = (dyn_arg){.it = d.it, .id = i};
    ck_assert_int_eq(pthread_create(&th[i], NULL, thread_main, &args[i]), 0);
    ck_assert_int_eq(pthread_create(&th[4 + i], NULL, dyn_thread, &dargs[i]), 0);
  }
  for (int i = 0; i < 8; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; i++) {
    ck_assert_int_eq(args[i].failures, 0);
    ck_assert_int_eq(dargs[i].failures, 0);
  }
  drop(&f);
  drop(&d);
}
END_TEST

/* ---- allocation failures ---------------------------------------------------------------------------- */

START_TEST(allocation_failures) {
  ck_assert(!fbx_op_table_init());
  fbx_graph *g = parse(LISTS_OK);
  int64_t sz[1] = {3};
  fbx_tensor *x = tensor_f32(1, sz, 0);
  int runs_ok = 0, creates_ok = 0;
  for (long k = 0; k < 400 && runs_ok < 3; k++) {
    fbx_interp *it = NULL;
    fbx_alloc_fail_after(k);
    fbx_status *st = fbx_interp_create(&it, g);
    if (!st) {
      creates_ok++;
      fbx_ivalue in[2] = {fbx_iv_tensor(x), fbx_iv_int(5)}, out[6];
      st = fbx_interp_run(it, in, 2, out, NULL);
      if (!st) {
        runs_ok++;
        ASSERT_INT(out[0], 16);
        release_all(out, 6);
      }
    }
    fbx_alloc_fail_after(-1);
    if (st) {
      ck_assert_msg(fbx_status_code(st) == FBX_ERR_NOMEM, "k=%ld: %s", k, fbx_status_message(st));
      fbx_status_free(st);
    }
    fbx_interp_destroy(it);
    ck_assert_int_eq(atomic_load(&x->refcount), 1);
  }
  ck_assert_int_gt(creates_ok, 1);
  ck_assert_int_gt(runs_ok, 0);
  fbx_tensor_release(x);
  fbx_graph_destroy(g);
}
END_TEST

Suite *interp_suite(void) {
  Suite *s = suite_create("interp");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, scalar_int_python_semantics);
  tcase_add_test(tc, scalar_float_and_mixing);
  tcase_add_test(tc, comparison_chain);
  tcase_add_test(tc, runtime_overload_cache);
  tcase_add_test(tc, strings_and_format);
  tcase_add_test(tc, loop_carried_and_nested_if);
  tcase_add_test(tc, while_loop);
  tcase_add_test(tc, lists_and_tuples);
  tcase_add_test(tc, constants);
  tcase_add_test(tc, unsupported_graphs);
  tcase_add_test(tc, error_in_nested_block);
  tcase_add_test(tc, raise_exception);
  tcase_add_test(tc, input_checks);
  tcase_add_test(tc, last_use_freeing);
  tcase_add_test(tc, peak_live_is_bounded);
  tcase_add_test(tc, concurrent_runs);
  tcase_add_test(tc, allocation_failures);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(interp_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
