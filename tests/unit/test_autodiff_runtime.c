/* The autodiff runtime: handle lifecycle, undefined output gradients, loops
 * on the eager tape, the DifferentiableGraph path against the eager path,
 * a failing guard, threads, the DLPack API. Expected gradients are worked
 * out by hand from the functions (tanh' = 1 - tanh^2, d(x w^n)/dw = n x w^(n-1)),
 * never taken from the code under test. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "exec/executor.h"
#include "ir/text.h"
#include "testutil.h"

#ifndef FBX_TEST_PLUGIN_DIR
#define FBX_TEST_PLUGIN_DIR FBX_BINARY_DIR "/tests/plugins"
#endif

/* c = tanh(x * y) + x, a = x * y */
static const char *G_TWO =
    "graph(%x.1 : Tensor, %y.1 : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %a : Tensor = aten::mul(%x.1, %y.1)\n"
    "  %b : Tensor = aten::tanh(%a)\n"
    "  %c : Tensor = aten::add(%b, %x.1, %one)\n"
    "  return (%c, %a)\n";

/* y = x * w^n through a loop-carried value */
static const char *G_LOOP =
    "graph(%x.1 : Tensor, %w.1 : Tensor, %n.1 : int):\n"
    "  %true : bool = prim::Constant[value=1]()\n"
    "  %y : Tensor = prim::Loop(%n.1, %true, %x.1)\n"
    "    block0(%i : int, %acc.1 : Tensor):\n"
    "      %acc.2 : Tensor = aten::mul(%acc.1, %w.1)\n"
    "      -> (%true, %acc.2)\n"
    "  return (%y)\n";

static fbx_executor *make_ex(const char *text, int profiling_runs) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "parse: %s", fbx_status_message(st));
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none", .profiling_runs = profiling_runs};
  fbx_executor *ex = NULL;
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "create: %s", fbx_status_message(st));
  fbx_graph_destroy(g);
  return ex;
}

static fbx_ivalue tensor(fbx_dtype dt, int n, double base) {
  fbx_tensor *t = NULL;
  int64_t sizes[2] = {2, n / 2};
  ck_assert(!fbx_tensor_empty(&t, FBX_DTYPE_FLOAT64, 2, sizes));
  for (int i = 0; i < n; i++) ((double *)t->data)[i] = base + 0.25 * i - 0.6;
  fbx_tensor *c = NULL;
  ck_assert(!fbx_tensor_clone_as(&c, t, dt));
  fbx_tensor_release(t);
  return fbx_iv_tensor(c);
}

static double at(const fbx_ivalue *v, int i) { return fbx_tensor_get_f64(v->u.t, i); }

static void expect_near(const fbx_ivalue *got, int i, double want, const char *what) {
  ck_assert_msg(got->kind == FBX_IV_TENSOR, "%s: no gradient", what);
  double a = at(got, i);
  ck_assert_msg(fabs(a - want) <= 1e-5 + 1e-5 * fabs(want), "%s[%d]: %.9g, expected %.9g", what, i, a, want);
}

/* Forward + backward of G_TWO with gradients ga (for %c) and gb (for %a), either NULL. */
static void two_grads(fbx_executor *ex, const fbx_ivalue *in, const fbx_ivalue *gc, const fbx_ivalue *ga,
                      fbx_ivalue *gin) {
  fbx_ivalue out[2];
  fbx_grad_handle *h = NULL;
  fbx_status *st = fbx_executor_forward_values(ex, in, 2, NULL, out, 2, 0, &h);
  ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
  fbx_ivalue gout[2] = {gc ? *gc : fbx_iv_none(), ga ? *ga : fbx_iv_none()};
  st = fbx_executor_backward_values(h, gout, 2, gin, 2);
  ck_assert_msg(!st, "backward: %s", fbx_status_message(st));
  fbx_grad_free(h);
  fbx_iv_release(&out[0]);
  fbx_iv_release(&out[1]);
}

static void check_two(const fbx_ivalue *in, const fbx_ivalue *gc, const fbx_ivalue *ga, const fbx_ivalue *gin) {
  for (int i = 0; i < 6; i++) {
    double x = at(&in[0], i), y = at(&in[1], i), t = tanh(x * y);
    double c = gc ? at(gc, i) : 0, a = ga ? at(ga, i) : 0;
    expect_near(&gin[0], i, c * ((1 - t * t) * y + 1) + a * y, "grad x");
    expect_near(&gin[1], i, c * (1 - t * t) * x + a * x, "grad y");
  }
}

START_TEST(undefined_output_grads) {
  fbx_executor *ex = make_ex(G_TWO, 1);
  fbx_ivalue in[2] = {tensor(FBX_DTYPE_FLOAT32, 6, 0.1), tensor(FBX_DTYPE_FLOAT32, 6, -0.3)};
  fbx_ivalue gc = tensor(FBX_DTYPE_FLOAT32, 6, 1.0), ga = tensor(FBX_DTYPE_FLOAT32, 6, 0.5);
  for (int run = 0; run < 3; run++) { /* eager, then the DifferentiableGraph path */
    fbx_ivalue gin[2];
    two_grads(ex, in, &gc, NULL, gin);
    check_two(in, &gc, NULL, gin);
    fbx_iv_release(&gin[0]);
    fbx_iv_release(&gin[1]);
    two_grads(ex, in, NULL, &ga, gin);
    check_two(in, NULL, &ga, gin);
    fbx_iv_release(&gin[0]);
    fbx_iv_release(&gin[1]);
    two_grads(ex, in, &gc, &ga, gin);
    check_two(in, &gc, &ga, gin);
    fbx_iv_release(&gin[0]);
    fbx_iv_release(&gin[1]);
    two_grads(ex, in, NULL, NULL, gin);
    ck_assert_int_eq(gin[0].kind, FBX_IV_NONE);
    ck_assert_int_eq(gin[1].kind, FBX_IV_NONE);
  }
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.forward_runs, 12);
  ck_assert_int_eq(s.backward_runs, 12);
  ck_assert_int_ge(s.differentiable_graphs, 1);
  for (int i = 0; i < 2; i++) fbx_iv_release(&in[i]);
  fbx_iv_release(&gc);
  fbx_iv_release(&ga);
  fbx_executor_destroy(ex);
}
END_TEST

START_TEST(handle_lifecycle) {
  fbx_executor *ex = make_ex(G_TWO, 1);
  fbx_ivalue in[2] = {tensor(FBX_DTYPE_FLOAT32, 6, 0.1), tensor(FBX_DTYPE_FLOAT32, 6, -0.3)};
  fbx_ivalue out[2], gin[2];
  fbx_grad_handle *h = NULL;
  ck_assert(!fbx_executor_forward_values(ex, in, 2, NULL, out, 2, 0, &h));
  fbx_ivalue gout[2] = {out[0], fbx_iv_none()};
  ck_assert(!fbx_executor_backward_values(h, gout, 2, gin, 2));
  fbx_iv_release(&gin[0]);
  fbx_iv_release(&gin[1]);
  fbx_status *st = fbx_executor_backward_values(h, gout, 2, gin, 2);
  ck_assert_ptr_nonnull(st);
  ck_assert_int_eq(fbx_status_code(st), FBX_ERR_INVALID_ARG);
  ck_assert_msg(strstr(fbx_status_message(st), "backward already ran on this handle"), "%s", fbx_status_message(st));
  fbx_status_free(st);
  ck_assert_int_eq(gin[0].kind, FBX_IV_NONE);
  fbx_grad_free(h);
  fbx_iv_release(&out[0]);
  fbx_iv_release(&out[1]);
  /* Freed without backward: the sanitizer build checks nothing leaks. */
  for (int r = 0; r < 3; r++) {
    ck_assert(!fbx_executor_forward_values(ex, in, 2, NULL, out, 2, 0, &h));
    fbx_grad_free(h);
    fbx_iv_release(&out[0]);
    fbx_iv_release(&out[1]);
  }
  /* A bad grad_output shape is an argument error. */
  ck_assert(!fbx_executor_forward_values(ex, in, 2, NULL, out, 2, 0, &h));
  fbx_ivalue wrong = tensor(FBX_DTYPE_FLOAT32, 4, 0);
  fbx_ivalue g2[2] = {wrong, fbx_iv_none()};
  st = fbx_executor_backward_values(h, g2, 2, gin, 2);
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(strstr(fbx_status_message(st), "grad_outputs[0]: shape [2, 2] where output 0 has shape [2, 3]"), "%s",
                fbx_status_message(st));
  fbx_status_free(st);
  fbx_iv_release(&wrong);
  fbx_grad_free(h);
  fbx_iv_release(&out[0]);
  fbx_iv_release(&out[1]);
  /* Only floating-point tensors require grad. */
  bool rg[3] = {true, true, true};
  fbx_executor *lx = make_ex(G_LOOP, 1);
  fbx_ivalue lin[3] = {in[0], in[1], fbx_iv_int(2)};
  fbx_ivalue lout[1];
  st = fbx_executor_forward_values(lx, lin, 3, rg, lout, 1, 0, &h);
  ck_assert_ptr_nonnull(st);
  ck_assert_msg(strstr(fbx_status_message(st), "input 2 (%n.1): only floating-point tensors can require grad"), "%s",
                fbx_status_message(st));
  ck_assert_ptr_null(h);
  fbx_status_free(st);
  fbx_executor_destroy(lx);
  for (int i = 0; i < 2; i++) fbx_iv_release(&in[i]);
  fbx_executor_destroy(ex);
}
END_TEST

START_TEST(loop_carried) {
  fbx_executor *ex = make_ex(G_LOOP, 1);
  fbx_ivalue x = tensor(FBX_DTYPE_FLOAT32, 6, 0.3), w = tensor(FBX_DTYPE_FLOAT32, 6, 0.9);
  fbx_ivalue g = tensor(FBX_DTYPE_FLOAT32, 6, 1.1);
  for (int n = 0; n <= 3; n++)
    for (int run = 0; run < 2; run++) {
      fbx_ivalue in[3] = {x, w, fbx_iv_int(n)}, out[1], gin[3];
      fbx_grad_handle *h = NULL;
      fbx_status *st = fbx_executor_forward_values(ex, in, 3, NULL, out, 1, 0, &h);
      ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
      st = fbx_executor_backward_values(h, &g, 1, gin, 3);
      ck_assert_msg(!st, "backward: %s", fbx_status_message(st));
      fbx_grad_free(h);
      ck_assert_int_eq(gin[2].kind, FBX_IV_NONE);
      if (n == 0) { /* y is x itself: dy/dx = 1, w unused */
        ck_assert_int_eq(gin[1].kind, FBX_IV_NONE);
      }
      for (int i = 0; i < 6; i++) {
        double xv = at(&x, i), wv = at(&w, i), gv = at(&g, i);
        expect_near(&gin[0], i, gv * pow(wv, n), "grad x");
        if (n > 0) expect_near(&gin[1], i, gv * n * xv * pow(wv, n - 1), "grad w");
      }
      for (int i = 0; i < 3; i++) fbx_iv_release(&gin[i]);
      fbx_iv_release(&out[0]);
    }
  fbx_iv_release(&x);
  fbx_iv_release(&w);
  fbx_iv_release(&g);
  fbx_executor_destroy(ex);
}
END_TEST

START_TEST(diffgraph_matches_eager_and_guard_falls_back) {
  fbx_executor *ex = make_ex(G_TWO, 1);
  fbx_ivalue in[2] = {tensor(FBX_DTYPE_FLOAT32, 6, 0.1), tensor(FBX_DTYPE_FLOAT32, 6, -0.3)};
  fbx_ivalue gc = tensor(FBX_DTYPE_FLOAT32, 6, 1.0), ga = tensor(FBX_DTYPE_FLOAT32, 6, 0.5);
  fbx_ivalue eager[2], dg[2];
  two_grads(ex, in, &gc, &ga, eager); /* profiling: the eager tape */
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_ge(s.differentiable_graphs, 1);
  for (int r = 0; r < 3; r++) {
    two_grads(ex, in, &gc, &ga, dg);
    for (int k = 0; k < 2; k++) {
      for (int i = 0; i < 6; i++) expect_near(&dg[k], i, at(&eager[k], i), "DifferentiableGraph vs eager");
      fbx_iv_release(&dg[k]);
    }
  }
  char *text = fbx_executor_explain_text(ex);
  ck_assert_msg(strstr(text, "prim::DifferentiableGraph") && strstr(text, "## backward"), "%s", text);
  fbx_free(text);
  fbx_executor_stats_get(ex, &s);
  int64_t failures = s.guard_failures;
  /* float64 inputs: the guard (float32 seen while profiling) fails, the tape runs the nodes. */
  fbx_ivalue in64[2] = {tensor(FBX_DTYPE_FLOAT64, 6, 0.1), tensor(FBX_DTYPE_FLOAT64, 6, -0.3)};
  fbx_ivalue gc64 = tensor(FBX_DTYPE_FLOAT64, 6, 1.0), ga64 = tensor(FBX_DTYPE_FLOAT64, 6, 0.5);
  two_grads(ex, in64, &gc64, &ga64, dg);
  check_two(in64, &gc64, &ga64, dg);
  ck_assert_int_eq(dg[0].u.t->dtype, FBX_DTYPE_FLOAT64);
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_gt(s.guard_failures, failures);
  for (int k = 0; k < 2; k++) {
    fbx_iv_release(&dg[k]);
    fbx_iv_release(&eager[k]);
    fbx_iv_release(&in[k]);
    fbx_iv_release(&in64[k]);
  }
  fbx_iv_release(&gc);
  fbx_iv_release(&ga);
  fbx_iv_release(&gc64);
  fbx_iv_release(&ga64);
  fbx_executor_destroy(ex);
}
END_TEST

/* b = x * y + x with y broadcast along x's rows: dL/dx = g (y + 1),
 * dL/dy = sum over rows of g x. */
static const char *G_BCAST =
    "graph(%x.1 : Tensor, %y.1 : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %a : Tensor = aten::mul(%x.1, %y.1)\n"
    "  %b : Tensor = aten::add(%a, %x.1, %one)\n"
    "  return (%b)\n";

static fbx_executor *make_ex_with(const char *text, const char *fuser, const char *strategy) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "parse: %s", fbx_status_message(st));
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = fuser, .strategy = strategy, .profiling_runs = 1};
  fbx_executor *ex = NULL;
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "create: %s", fbx_status_message(st));
  fbx_graph_destroy(g);
  return ex;
}

static fbx_ivalue filled(int ndim, const int64_t *sizes, double base) {
  fbx_tensor *t = NULL;
  ck_assert(!fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, ndim, sizes));
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= sizes[d];
  for (int64_t i = 0; i < n; i++) ((float *)t->data)[i] = (float)(base + 0.125 * (double)(i % 11) - 0.5);
  return fbx_iv_tensor(t);
}

/* One forward + backward of G_BCAST with x [rows, 3], checked by hand. */
static void bcast_step(fbx_executor *ex, int64_t rows) {
  int64_t xs[2] = {rows, 3}, ys[1] = {3};
  fbx_ivalue in[2] = {filled(2, xs, 0.2), filled(1, ys, -0.4)}, g = filled(2, xs, 1.0), out, gin[2];
  fbx_grad_handle *h = NULL;
  fbx_status *st = fbx_executor_forward_values(ex, in, 2, NULL, &out, 1, 0, &h);
  ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
  st = fbx_executor_backward_values(h, &g, 1, gin, 2);
  ck_assert_msg(!st, "backward: %s", fbx_status_message(st));
  ck_assert_int_eq(gin[0].u.t->ndim, 2);
  ck_assert_int_eq(gin[0].u.t->sizes[0], rows);
  ck_assert_int_eq(gin[1].u.t->ndim, 1);
  for (int64_t r = 0; r < rows; r++)
    for (int c = 0; c < 3; c++)
      expect_near(&gin[0], (int)(r * 3 + c), at(&g, (int)(r * 3 + c)) * (at(&in[1], c) + 1), "grad x");
  for (int c = 0; c < 3; c++) {
    double want = 0;
    for (int64_t r = 0; r < rows; r++) want += at(&g, (int)(r * 3 + c)) * at(&in[0], (int)(r * 3 + c));
    expect_near(&gin[1], c, want, "grad y");
  }
  fbx_grad_free(h);
  fbx_iv_release(&out);
  fbx_iv_release(&g);
  for (int k = 0; k < 2; k++) {
    fbx_iv_release(&in[k]);
    fbx_iv_release(&gin[k]);
  }
}

static int count_of(const char *text, const char *what) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
  return n;
}

/* Static levels: exact sizes, so the backward keeps only the reduction that
 * really undoes broadcasting (y's); new shapes build a new version until the
 * strategy's budget is spent, then run on the eager tape. */
START_TEST(static_diffgraph_respecializes) {
  fbx_executor *ex = make_ex_with(G_BCAST, "none", "static:2");
  bcast_step(ex, 2); /* profiling */
  bcast_step(ex, 2); /* level 0 */
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.static_specializations, 1);
  ck_assert_int_eq(s.guard_failures, 0);
  char *text = fbx_executor_explain_text(ex);
  ck_assert_msg(strstr(text, "level 0 (static), guard: float32[2, 3] contiguous, float32[3] contiguous"), "%s", text);
  int static_sums = count_of(text, "aten::_grad_sum_to_size");
  fbx_free(text);

  bcast_step(ex, 4); /* guard fails: eager, profiling level 1 */
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.guard_failures, 1);
  ck_assert_int_eq(s.static_specializations, 2);
  bcast_step(ex, 4); /* level 1 */
  bcast_step(ex, 2); /* level 0 still */
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.guard_failures, 1);
  text = fbx_executor_explain_text(ex);
  ck_assert_msg(strstr(text, "level 1 (static), guard: float32[4, 3] contiguous, float32[3] contiguous"), "%s", text);
  fbx_free(text);

  bcast_step(ex, 5); /* past the budget */
  bcast_step(ex, 5);
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.static_specializations, 2);
  ck_assert_int_eq(s.guard_failures, 3);
  text = fbx_executor_report(ex);
  ck_assert_msg(strstr(text, "respecializing prim::DifferentiableGraph") && strstr(text, "budget spent"), "%s", text);
  fbx_free(text);
  fbx_executor_destroy(ex);

  /* A dynamic level keeps the reductions and serves every row count. */
  ex = make_ex_with(G_BCAST, "none", "dynamic:1");
  bcast_step(ex, 2);
  bcast_step(ex, 2);
  bcast_step(ex, 4);
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.guard_failures, 0);
  ck_assert_int_eq(s.dynamic_specializations, 1);
  text = fbx_executor_explain_text(ex);
  ck_assert_msg(strstr(text, "level 0 (dynamic)"), "%s", text);
  ck_assert_msg(count_of(text, "aten::_grad_sum_to_size") > static_sums, "static %d vs dynamic:\n%s", static_sums,
                text);
  fbx_free(text);
  fbx_executor_destroy(ex);
}
END_TEST

/* ratio-IoU's backward under the legacy fuser: with exact sizes nothing
 * separates its pointwise nodes, so one kernel launch per backward. */
START_TEST(ratio_iou_backward_fuses) {
  char *text = tu_read_file(tu_src_path("examples/ratio_iou.ir"), NULL);
  ck_assert(text);
  fbx_executor *ex = make_ex_with(text, "legacy", "static:2,dynamic:10");
  free(text);
  int64_t sizes[1] = {64};
  fbx_ivalue in[8], g = filled(1, sizes, 1.0);
  for (int i = 0; i < 8; i++) in[i] = filled(1, sizes, 0.5 + 0.3 * i);
  int64_t before = 0;
  for (int r = 0; r < 4; r++) {
    fbx_ivalue out, gin[8];
    fbx_grad_handle *h = NULL;
    fbx_status *st = fbx_executor_forward_values(ex, in, 8, NULL, &out, 1, 0, &h);
    ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
    st = fbx_executor_backward_values(h, &g, 1, gin, 8);
    ck_assert_msg(!st, "backward: %s", fbx_status_message(st));
    fbx_executor_stats s = {.struct_size = sizeof s};
    fbx_executor_stats_get(ex, &s);
    if (r == 3) ck_assert_int_eq(s.backward_kernel_launches - before, 1);
    before = s.backward_kernel_launches;
    fbx_grad_free(h);
    fbx_iv_release(&out);
    for (int i = 0; i < 8; i++) fbx_iv_release(&gin[i]);
  }
  for (int i = 0; i < 8; i++) fbx_iv_release(&in[i]);
  fbx_iv_release(&g);
  fbx_executor_destroy(ex);
}
END_TEST

/* Creation ops and in-place writes whose formulas give no gradient: their
 * results do not require grad (PyTorch), so backward runs through the rest.
 * y = zeros_like(x) + n * x (in a loop: always on the eager tape);
 * t = x * x; t.zero_(); o = t + x: do/dx = 1. */
static const char *G_NO_GRAD_OPS =
    "graph(%x.1 : Tensor, %n.1 : int):\n"
    "  %true : bool = prim::Constant[value=1]()\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %z : Tensor = aten::zeros_like(%x.1, %none, %none, %none, %none, %none)\n"
    "  %y : Tensor = prim::Loop(%n.1, %true, %z)\n"
    "    block0(%i : int, %acc.1 : Tensor):\n"
    "      %acc.2 : Tensor = aten::add(%acc.1, %x.1, %one)\n"
    "      -> (%true, %acc.2)\n"
    "  %t : Tensor = aten::mul(%x.1, %x.1)\n"
    "  %u : Tensor = aten::zero_(%t)\n"
    "  %o : Tensor = aten::add(%u, %x.1, %one)\n"
    "  return (%y, %o)\n";

START_TEST(no_gradient_ops_do_not_require_grad) {
  fbx_executor *ex = make_ex(G_NO_GRAD_OPS, 1);
  fbx_ivalue x = tensor(FBX_DTYPE_FLOAT32, 6, 0.3), gy = tensor(FBX_DTYPE_FLOAT32, 6, 1.1),
             go = tensor(FBX_DTYPE_FLOAT32, 6, -0.7);
  for (int run = 0; run < 3; run++) { /* profiling, then the plan */
    fbx_ivalue in[2] = {x, fbx_iv_int(3)}, out[2], gin[2];
    fbx_grad_handle *h = NULL;
    fbx_status *st = fbx_executor_forward_values(ex, in, 2, NULL, out, 2, 0, &h);
    ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
    fbx_ivalue gout[2] = {gy, go};
    st = fbx_executor_backward_values(h, gout, 2, gin, 2);
    ck_assert_msg(!st, "run %d: backward: %s", run, fbx_status_message(st));
    fbx_grad_free(h);
    for (int i = 0; i < 6; i++) expect_near(&gin[0], i, 3 * at(&gy, i) + at(&go, i), "grad x");
    for (int k = 0; k < 2; k++) {
      fbx_iv_release(&gin[k]);
      fbx_iv_release(&out[k]);
    }
  }
  fbx_iv_release(&x);
  fbx_iv_release(&gy);
  fbx_iv_release(&go);
  fbx_executor_destroy(ex);
}
END_TEST

/* permute's dims are an empty list literal filled by aten::append at run
 * time: the eager unit must take the list as it is then, not the literal. */
static const char *G_APPENDED_DIMS =
    "graph(%x.1 : Tensor):\n"
    "  %c0 : int = prim::Constant[value=0]()\n"
    "  %c1 : int = prim::Constant[value=1]()\n"
    "  %dims : int[] = prim::ListConstruct()\n"
    "  %a : int[] = aten::append(%dims, %c1)\n"
    "  %b : int[] = aten::append(%dims, %c0)\n"
    "  %y : Tensor = aten::permute(%x.1, %dims)\n"
    "  %z : Tensor = aten::mul(%y, %y)\n"
    "  return (%z)\n";

START_TEST(appended_list_is_not_a_constant) {
  fbx_executor *ex = make_ex(G_APPENDED_DIMS, 1);
  fbx_ivalue x = tensor(FBX_DTYPE_FLOAT32, 6, 0.3); /* [2, 3] */
  int64_t gs[2] = {3, 2};
  fbx_ivalue g = filled(2, gs, 0.9);
  for (int run = 0; run < 3; run++) {
    fbx_ivalue out, gin;
    fbx_grad_handle *h = NULL;
    fbx_status *st = fbx_executor_forward_values(ex, &x, 1, NULL, &out, 1, 0, &h);
    ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
    st = fbx_executor_backward_values(h, &g, 1, &gin, 1);
    ck_assert_msg(!st, "run %d: backward: %s", run, fbx_status_message(st));
    ck_assert_int_eq(gin.u.t->ndim, 2);
    ck_assert_int_eq(gin.u.t->sizes[0], 2);
    ck_assert_int_eq(gin.u.t->sizes[1], 3);
    for (int r = 0; r < 2; r++)
      for (int c = 0; c < 3; c++) /* z[c][r] = x[r][c]^2 */
        expect_near(&gin, r * 3 + c, 2 * at(&x, r * 3 + c) * at(&g, c * 2 + r), "grad x");
    fbx_grad_free(h);
    fbx_iv_release(&out);
    fbx_iv_release(&gin);
  }
  fbx_iv_release(&x);
  fbx_iv_release(&g);
  fbx_executor_destroy(ex);
}
END_TEST

/* w = x * x; w[0] *= v (an in-place write into a view of w): w's gradient
 * G gives x G[0] v 2x[0] in row 0 and G[1] 2x[1] in row 1, and v G[0] x[0]^2. */
static const char *G_VIEW_WRITE =
    "graph(%x.1 : Tensor, %v.1 : Tensor):\n"
    "  %zero : int = prim::Constant[value=0]()\n"
    "  %w : Tensor = aten::mul(%x.1, %x.1)\n"
    "  %r : Tensor = aten::select(%w, %zero, %zero)\n"
    "  %q : Tensor = aten::mul_(%r, %v.1)\n"
    "  return (%w)\n";

/* s and r view the same row; r.zero_() leaves s naming the old values. */
static const char *G_STALE_VIEW =
    "graph(%x.1 : Tensor):\n"
    "  %zero : int = prim::Constant[value=0]()\n"
    "  %w : Tensor = aten::mul(%x.1, %x.1)\n"
    "  %s : Tensor = aten::select(%w, %zero, %zero)\n"
    "  %r : Tensor = aten::select(%w, %zero, %zero)\n"
    "  %z : Tensor = aten::zero_(%r)\n"
    "  %o : Tensor = aten::mul(%s, %s)\n"
    "  return (%w, %o)\n";

START_TEST(inplace_write_into_view) {
  fbx_executor *ex = make_ex(G_VIEW_WRITE, 1);
  int64_t vs[1] = {3};
  fbx_ivalue x = tensor(FBX_DTYPE_FLOAT32, 6, 0.3), v = filled(1, vs, 0.7), g = tensor(FBX_DTYPE_FLOAT32, 6, 1.1);
  for (int run = 0; run < 3; run++) {
    fbx_ivalue in[2] = {x, v}, out, gin[2];
    fbx_grad_handle *h = NULL;
    fbx_status *st = fbx_executor_forward_values(ex, in, 2, NULL, &out, 1, 0, &h);
    ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
    for (int c = 0; c < 3; c++) /* the forward wrote through the view */
      ck_assert(fabs(at(&out, c) - at(&x, c) * at(&x, c) * at(&v, c)) < 1e-5);
    st = fbx_executor_backward_values(h, &g, 1, gin, 2);
    ck_assert_msg(!st, "run %d: backward: %s", run, fbx_status_message(st));
    for (int c = 0; c < 3; c++) {
      double x0 = at(&x, c), x1 = at(&x, 3 + c), vc = at(&v, c), g0 = at(&g, c), g1 = at(&g, 3 + c);
      expect_near(&gin[0], c, g0 * vc * 2 * x0, "grad x row 0");
      expect_near(&gin[0], 3 + c, g1 * 2 * x1, "grad x row 1");
      expect_near(&gin[1], c, g0 * x0 * x0, "grad v");
    }
    fbx_grad_free(h);
    fbx_iv_release(&out);
    fbx_iv_release(&gin[0]);
    fbx_iv_release(&gin[1]);
  }
  fbx_iv_release(&x);
  fbx_iv_release(&v);
  fbx_iv_release(&g);
  fbx_executor_destroy(ex);

  /* A view the write did not go through is not rebased: a gradient through
   * it is an error, not a wrong answer. */
  ex = make_ex(G_STALE_VIEW, 1);
  x = tensor(FBX_DTYPE_FLOAT32, 6, 0.3);
  fbx_ivalue out[2], gw = tensor(FBX_DTYPE_FLOAT32, 6, 1.1), go = filled(1, vs, 0.5), gin;
  fbx_grad_handle *h = NULL;
  fbx_status *st = fbx_executor_forward_values(ex, &x, 1, NULL, out, 2, 0, &h);
  ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
  fbx_ivalue gout[2] = {gw, go};
  st = fbx_executor_backward_values(h, gout, 2, &gin, 1);
  ck_assert_msg(st && strstr(fbx_status_message(st), "a view of a tensor written in place through another view"),
                "%s", st ? fbx_status_message(st) : "no error");
  fbx_status_free(st);
  fbx_grad_free(h);
  fbx_iv_release(&out[0]);
  fbx_iv_release(&out[1]);
  /* without a gradient for %o only w's matters: row 0 was zeroed */
  st = fbx_executor_forward_values(ex, &x, 1, NULL, out, 2, 0, &h);
  ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
  fbx_ivalue gout2[2] = {gw, fbx_iv_none()};
  st = fbx_executor_backward_values(h, gout2, 2, &gin, 1);
  ck_assert_msg(!st, "backward: %s", fbx_status_message(st));
  for (int c = 0; c < 3; c++) {
    expect_near(&gin, c, 0, "grad x row 0");
    expect_near(&gin, 3 + c, at(&gw, 3 + c) * 2 * at(&x, 3 + c), "grad x row 1");
  }
  fbx_grad_free(h);
  fbx_iv_release(&gin);
  fbx_iv_release(&out[0]);
  fbx_iv_release(&out[1]);
  fbx_iv_release(&x);
  fbx_iv_release(&gw);
  fbx_iv_release(&go);
  fbx_executor_destroy(ex);
}
END_TEST

/* Compile failures of the forward and backward graphs' sub-executors reach
 * the executor's counters with the fallbacks they cause, summed alike. */
START_TEST(sub_executor_stats_summed) {
  fbx_executor *ex = make_ex_with(G_TWO, FBX_TEST_PLUGIN_DIR "/libfbxtest_compile_fails.so", "static:2");
  fbx_ivalue in[2] = {tensor(FBX_DTYPE_FLOAT32, 6, 0.3), tensor(FBX_DTYPE_FLOAT32, 6, 0.9)};
  fbx_ivalue gc = tensor(FBX_DTYPE_FLOAT32, 6, 1.1), ga = tensor(FBX_DTYPE_FLOAT32, 6, -0.2);
  for (int run = 0; run < 4; run++) {
    fbx_ivalue gin[2];
    two_grads(ex, in, &gc, &ga, gin);
    check_two(in, &gc, &ga, gin);
    fbx_iv_release(&gin[0]);
    fbx_iv_release(&gin[1]);
  }
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.differentiable_graphs, 1);
  ck_assert_int_eq(s.kernels_compiled, 0);
  ck_assert_int_gt(s.compile_failures, 0);
  ck_assert_int_ge(s.fallbacks_compile, s.compile_failures);
  ck_assert_int_eq(s.fallbacks, s.fallbacks_unfused + s.fallbacks_compile + s.fallbacks_run + s.fallbacks_declined);
  ck_assert_int_gt(s.groups, 0);
  ck_assert_int_eq(s.specializations, s.static_specializations + s.dynamic_specializations);
  /* the plan's level 0 and at least the forward and backward executors' own */
  ck_assert_int_ge(s.static_specializations, 3);
  ck_assert_int_eq(s.kernel_launches + s.backward_kernel_launches, 0);
  ck_assert_int_gt(s.backward_interpreted_ops, 0);
  char *text = fbx_executor_report(ex);
  char want[96];
  snprintf(want, sizeof want, "compile failed: %lld;", (long long)s.fallbacks_compile);
  ck_assert_msg(strstr(text, want), "%s", text);
  /* the sub-executors' events say why */
  ck_assert_msg(strstr(text, "events of the forward and backward executors:") &&
                    strstr(text, ", backward: group ") &&
                    strstr(text, "compile_fails: this plugin never compiles"),
                "%s", text);
  fbx_free(text);
  for (int k = 0; k < 2; k++) fbx_iv_release(&in[k]);
  fbx_iv_release(&gc);
  fbx_iv_release(&ga);
  fbx_executor_destroy(ex);
}
END_TEST

typedef struct worker {
  fbx_executor *ex;
  fbx_ivalue in[2], gc;
  int bad;
} worker;

static void *work(void *arg) {
  worker *w = arg;
  for (int r = 0; r < 20; r++) {
    fbx_ivalue out[2], gin[2];
    fbx_grad_handle *h = NULL;
    if (fbx_executor_forward_values(w->ex, w->in, 2, NULL, out, 2, 0, &h)) {
      w->bad++;
      continue;
    }
    fbx_ivalue gout[2] = {w->gc, fbx_iv_none()};
    if (fbx_executor_backward_values(h, gout, 2, gin, 2)) w->bad++;
    else
      for (int i = 0; i < 6; i++) {
        double x = at(&w->in[0], i), y = at(&w->in[1], i), t = tanh(x * y), c = at(&w->gc, i);
        if (fabs(at(&gin[0], i) - c * ((1 - t * t) * y + 1)) > 1e-5) w->bad++;
      }
    fbx_grad_free(h);
    for (int k = 0; k < 2; k++) {
      fbx_iv_release(&out[k]);
      fbx_iv_release(&gin[k]);
    }
  }
  return NULL;
}

START_TEST(threads) {
  fbx_executor *ex = make_ex(G_TWO, 2);
  worker w[4];
  pthread_t th[4];
  for (int k = 0; k < 4; k++) {
    w[k].ex = ex;
    w[k].in[0] = tensor(FBX_DTYPE_FLOAT32, 6, 0.1 * k);
    w[k].in[1] = tensor(FBX_DTYPE_FLOAT32, 6, -0.3);
    w[k].gc = tensor(FBX_DTYPE_FLOAT32, 6, 1.0);
    w[k].bad = 0;
    ck_assert_int_eq(pthread_create(&th[k], NULL, work, &w[k]), 0);
  }
  for (int k = 0; k < 4; k++) {
    pthread_join(th[k], NULL);
    ck_assert_int_eq(w[k].bad, 0);
    fbx_iv_release(&w[k].in[0]);
    fbx_iv_release(&w[k].in[1]);
    fbx_iv_release(&w[k].gc);
  }
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  ck_assert_int_eq(s.forward_runs, 80);
  ck_assert_int_eq(s.backward_runs, 80);
  fbx_executor_destroy(ex);
}
END_TEST

static void dl_delete(DLManagedTensor *m) { free(m); }

START_TEST(dlpack_api) {
  fbx_executor *ex = make_ex(G_TWO, 1);
  float x[6], y[6], gc[6];
  int64_t shape[2] = {2, 3};
  for (int i = 0; i < 6; i++) {
    x[i] = 0.2f * (float)i - 0.5f;
    y[i] = 0.7f - 0.1f * (float)i;
    gc[i] = 1.0f + (float)i;
  }
  DLManagedTensor *m[3];
  float *data[3] = {x, y, gc};
  for (int k = 0; k < 3; k++) {
    m[k] = calloc(1, sizeof **m);
    m[k]->dl_tensor.data = data[k];
    m[k]->dl_tensor.device.device_type = kDLCPU;
    m[k]->dl_tensor.ndim = 2;
    m[k]->dl_tensor.dtype.code = kDLFloat;
    m[k]->dl_tensor.dtype.bits = 32;
    m[k]->dl_tensor.dtype.lanes = 1;
    m[k]->dl_tensor.shape = shape;
    m[k]->deleter = dl_delete;
  }
  int rg[2] = {1, 0};
  DLManagedTensor *out[2] = {NULL, NULL}, *gin[2] = {NULL, NULL};
  fbx_grad_handle *h = NULL;
  fbx_status *st = fbx_executor_forward(ex, m, 2, rg, out, 2, &h);
  ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
  DLManagedTensor *gout[2] = {m[2], NULL};
  st = fbx_executor_backward(h, gout, 2, gin, 2);
  ck_assert_msg(!st, "backward: %s", fbx_status_message(st));
  ck_assert_ptr_nonnull(gin[0]);
  ck_assert_ptr_null(gin[1]); /* y does not require grad */
  const float *g = gin[0]->dl_tensor.data;
  for (int i = 0; i < 6; i++) {
    double t = tanh((double)x[i] * y[i]), want = gc[i] * ((1 - t * t) * y[i] + 1);
    ck_assert_msg(fabs(g[i] - want) < 1e-5, "grad x[%d]: %g vs %g", i, g[i], want);
  }
  st = fbx_executor_backward(h, gout, 2, gin + 1, 1);
  ck_assert_ptr_nonnull(st);
  fbx_status_free(st);
  fbx_grad_free(h);
  gin[0]->deleter(gin[0]);
  for (int k = 0; k < 2; k++) out[k]->deleter(out[k]);
  for (int k = 0; k < 3; k++) free(m[k]);
  fbx_executor_destroy(ex);
}
END_TEST

/* Nodes on the eager tape share a unit only when their one-node subgraphs
 * are alike: x * 2.0 and a * 3.0 differ by a constant, b * b and c * x by
 * which operands are the same value. d = (6x)^2 * x, d' = 108 x^2, on the
 * eager tape (profiling run) and through the DifferentiableGraph. */
START_TEST(eager_units_shared_only_when_alike) {
  static const char *G =
      "graph(%x.1 : Tensor):\n"
      "  %c2 : float = prim::Constant[value=2.]()\n"
      "  %c3 : float = prim::Constant[value=3.]()\n"
      "  %a : Tensor = aten::mul(%x.1, %c2)\n"
      "  %b : Tensor = aten::mul(%a, %c3)\n"
      "  %c : Tensor = aten::mul(%b, %b)\n"
      "  %d : Tensor = aten::mul(%c, %x.1)\n"
      "  return (%d)\n";
  fbx_executor *ex = make_ex(G, 1);
  fbx_ivalue in[1] = {tensor(FBX_DTYPE_FLOAT32, 6, 0.1)};
  for (int run = 0; run < 2; run++) {
    fbx_ivalue out, gin[1];
    fbx_grad_handle *h = NULL;
    fbx_status *st = fbx_executor_forward_values(ex, in, 1, NULL, &out, 1, 0, &h);
    ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
    fbx_ivalue gout = tensor(FBX_DTYPE_FLOAT32, 6, 0);
    for (int i = 0; i < 6; i++) fbx_tensor_set_f64(gout.u.t, i, 1.0);
    st = fbx_executor_backward_values(h, &gout, 1, gin, 1);
    ck_assert_msg(!st, "backward: %s", fbx_status_message(st));
    for (int i = 0; i < 6; i++) {
      double x = at(&in[0], i);
      expect_near(&out, i, 36 * x * x * x, "d");
      expect_near(&gin[0], i, 108 * x * x, "grad x");
    }
    fbx_iv_release(&gout);
    fbx_iv_release(&gin[0]);
    fbx_iv_release(&out);
    fbx_grad_free(h);
  }
  fbx_iv_release(&in[0]);
  fbx_executor_destroy(ex);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("autodiff_runtime");
  TCase *tc = tcase_create("runtime");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, undefined_output_grads);
  tcase_add_test(tc, handle_lifecycle);
  tcase_add_test(tc, loop_carried);
  tcase_add_test(tc, eager_units_shared_only_when_alike);
  tcase_add_test(tc, diffgraph_matches_eager_and_guard_falls_back);
  tcase_add_test(tc, static_diffgraph_respecializes);
  tcase_add_test(tc, ratio_iou_backward_fuses);
  tcase_add_test(tc, no_gradient_ops_do_not_require_grad);
  tcase_add_test(tc, appended_list_is_not_a_constant);
  tcase_add_test(tc, sub_executor_stats_summed);
  tcase_add_test(tc, inplace_write_into_view);
  tcase_add_test(tc, threads);
  tcase_add_test(tc, dlpack_api);
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
