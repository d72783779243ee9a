/* fbx_executor_forward borrows its tensor inputs for the call and copies
 * only what the tape saves of them for the backward (core/exec/api.c,
 * fbx_grad_unborrow): gradients stay right when the caller overwrites its
 * buffers between forward and backward, an input nothing saves is not
 * copied, and a graph that writes in place never writes into the caller's
 * tensors. Expected gradients are computed here from the formulas. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "exec/executor.h"
#include "ir/text.h"
#include "testutil.h"

/* c = tanh(x * y) + x, a = x * y. With only x requiring grad, the
 * gradient of x * y saves y (dx = g * y) and not x; tanh saves its output. */
static const char *G_TWO =
    "graph(%x.1 : Tensor, %y.1 : Tensor):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %a : Tensor = aten::mul(%x.1, %y.1)\n"
    "  %b : Tensor = aten::tanh(%a)\n"
    "  %c : Tensor = aten::add(%b, %x.1, %one)\n"
    "  return (%c, %a)\n";

/* y is doubled in place before c = x * y (y does not require grad). */
static const char *G_INPLACE =
    "graph(%x.1 : Tensor, %y.1 : Tensor):\n"
    "  %two : float = prim::Constant[value=2.]()\n"
    "  %y2 : Tensor = aten::mul_(%y.1, %two)\n"
    "  %c : Tensor = aten::mul(%x.1, %y2)\n"
    "  return (%c)\n";

static fbx_executor *make_ex(const char *text, const char *fuser) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "parse: %s", fbx_status_message(st));
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = fuser, .profiling_runs = 1};
  fbx_executor *ex = NULL;
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "create: %s", fbx_status_message(st));
  fbx_graph_destroy(g);
  return ex;
}

static int64_t shape[2] = {2, 3};

static DLManagedTensor *wrap(float *data) {
  DLManagedTensor *m = calloc(1, sizeof *m);
  ck_assert(m);
  m->dl_tensor.data = data;
  m->dl_tensor.device.device_type = kDLCPU;
  m->dl_tensor.ndim = 2;
  m->dl_tensor.dtype.code = kDLFloat;
  m->dl_tensor.dtype.bits = 32;
  m->dl_tensor.dtype.lanes = 1;
  m->dl_tensor.shape = shape;
  return m;
}

static void release_all(DLManagedTensor **t, int n) {
  for (int i = 0; i < n; i++)
    if (t[i]) t[i]->deleter(t[i]);
}

/* Steps of forward, overwrite the inputs with NaN, backward, on G_TWO with
 * x requiring grad: dx = gc ((1 - tanh(xy)^2) y + 1) + ga y. */
static void overwrite_between(const char *fuser) {
  fbx_executor *ex = make_ex(G_TWO, fuser);
  for (int step = 0; step < 4; step++) { /* profiling, then the DifferentiableGraph plan */
    float x[6], y[6], x0[6], y0[6], gc[6], ga[6];
    for (int i = 0; i < 6; i++) {
      x0[i] = x[i] = 0.2f * (float)i - 0.5f + 0.01f * (float)step;
      y0[i] = y[i] = 0.7f - 0.1f * (float)i;
      gc[i] = 1.0f + (float)i;
      ga[i] = 0.5f - 0.25f * (float)i;
    }
    DLManagedTensor *in[2] = {wrap(x), wrap(y)}, *out[2] = {NULL, NULL}, *gin[2] = {NULL, NULL};
    DLManagedTensor *gm[2] = {wrap(gc), wrap(ga)};
    int rg[2] = {1, 0};
    fbx_grad_handle *h = NULL;
    fbx_status *st = fbx_executor_forward(ex, in, 2, rg, out, 2, &h);
    ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
    for (int i = 0; i < 6; i++) x[i] = y[i] = NAN; /* the caller reuses its buffers */
    free(in[0]);
    free(in[1]);
    st = fbx_executor_backward(h, gm, 2, gin, 2);
    ck_assert_msg(!st, "backward: %s", fbx_status_message(st));
    ck_assert_ptr_nonnull(gin[0]);
    ck_assert_ptr_null(gin[1]);
    const float *g = gin[0]->dl_tensor.data;
    for (int i = 0; i < 6; i++) {
      double t = tanh((double)x0[i] * y0[i]), want = gc[i] * ((1 - t * t) * y0[i] + 1) + ga[i] * y0[i];
      ck_assert_msg(fabs(g[i] - want) < 1e-5 * (1 + fabs(want)), "%s step %d: grad x[%d] %g vs %g", fuser, step, i,
                    g[i], want);
    }
    fbx_grad_free(h);
    release_all(gin, 2);
    release_all(out, 2);
    free(gm[0]);
    free(gm[1]);
  }
  fbx_executor_destroy(ex);
}

START_TEST(saved_input_copied_none) { overwrite_between("none"); }
END_TEST

START_TEST(saved_input_copied_tensorexpr) { overwrite_between("tensorexpr"); }
END_TEST

/* The handle holds the caller's tensors themselves (nothing is copied up
 * front) and, once forward returns, no saved value of it lies in the
 * caller's memory (what was saved there was copied). Which inputs are
 * saved, and so copied, depends on the run: the profiling run's eager tape
 * saves both operands of x * y; the DifferentiableGraph plan, with only x
 * requiring grad, saves y and not x, which the last part checks on the
 * borrowed tensors themselves. */
START_TEST(unsaved_input_not_copied) {
  fbx_executor *ex = make_ex(G_TWO, "none");
  for (int step = 0; step < 3; step++) {
    float x[6], y[6];
    for (int i = 0; i < 6; i++) {
      x[i] = 0.1f * (float)i;
      y[i] = 1.0f - 0.2f * (float)i;
    }
    DLManagedTensor *in[2] = {wrap(x), wrap(y)}, *out[2] = {NULL, NULL};
    int rg[2] = {1, 0};
    fbx_grad_handle *h = NULL;
    fbx_status *st = fbx_executor_forward(ex, in, 2, rg, out, 2, &h);
    ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
    const fbx_tensor *hx = fbx_grad_input_tensor(h, 0), *hy = fbx_grad_input_tensor(h, 1);
    ck_assert_msg(hx && hx->data == (void *)x, "step %d: the handle holds a copy of x", step);
    ck_assert_msg(hy && hy->data == (void *)y, "step %d: y was copied whole at the call", step);
    /* nothing saved of either is left in the caller's memory */
    bool kept = true;
    ck_assert(!fbx_grad_unborrow(h, hx, &kept));
    ck_assert_msg(!kept, "step %d: the tape still reads x's memory", step);
    ck_assert(!fbx_grad_unborrow(h, hy, &kept));
    ck_assert_msg(!kept, "step %d: the tape still reads y's memory", step);
    fbx_grad_free(h);
    release_all(out, 2);
    free(in[0]);
    free(in[1]);
  }
  /* With the plan ready: run forward_values on borrowed tensors and ask
   * what the tape saved of each (what fbx_executor_forward would copy). */
  float x[6], y[6];
  for (int i = 0; i < 6; i++) x[i] = y[i] = 0.5f;
  DLTensor dx = {.data = x, .device = {kDLCPU, 0}, .ndim = 2, .dtype = {kDLFloat, 32, 1}, .shape = shape};
  DLTensor dy = dx;
  dy.data = y;
  fbx_tensor *tx = NULL, *ty = NULL;
  ck_assert(!fbx_tensor_wrap_dltensor(&tx, &dx));
  ck_assert(!fbx_tensor_wrap_dltensor(&ty, &dy));
  fbx_ivalue vin[2] = {fbx_iv_tensor(tx), fbx_iv_tensor(ty)}, vout[2];
  bool rg[2] = {true, false};
  fbx_grad_handle *h = NULL;
  fbx_status *st = fbx_executor_forward_values(ex, vin, 2, rg, vout, 2, 0, &h);
  ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
  bool kx = true, ky = false;
  ck_assert(!fbx_grad_unborrow(h, tx, &kx));
  ck_assert(!fbx_grad_unborrow(h, ty, &ky));
  ck_assert_msg(!kx, "x is saved for the backward");
  ck_assert_msg(ky, "y is not saved for the backward");
  fbx_grad_free(h);
  fbx_iv_release(&vout[0]);
  fbx_iv_release(&vout[1]);
  fbx_iv_release(&vin[0]);
  fbx_iv_release(&vin[1]);
  fbx_executor_destroy(ex);
}
END_TEST

/* A graph that writes into its input in place works on a copy: the caller's
 * y is left as it was, and dx = g * 2y. */
START_TEST(inplace_graph_does_not_write_caller_inputs) {
  fbx_executor *ex = make_ex(G_INPLACE, "none");
  for (int step = 0; step < 3; step++) {
    float x[6], y[6], g1[6];
    for (int i = 0; i < 6; i++) {
      x[i] = 0.3f * (float)i;
      y[i] = 1.5f - 0.25f * (float)i;
      g1[i] = 1.0f;
    }
    DLManagedTensor *in[2] = {wrap(x), wrap(y)}, *out[1] = {NULL}, *gin[2] = {NULL, NULL}, *gm[1] = {wrap(g1)};
    int rg[2] = {1, 0};
    fbx_grad_handle *h = NULL;
    fbx_status *st = fbx_executor_forward(ex, in, 2, rg, out, 1, &h);
    ck_assert_msg(!st, "forward: %s", fbx_status_message(st));
    for (int i = 0; i < 6; i++) ck_assert_msg(y[i] == 1.5f - 0.25f * (float)i, "y[%d] written: %g", i, y[i]);
    const float *c = out[0]->dl_tensor.data;
    for (int i = 0; i < 6; i++) ck_assert_msg(fabsf(c[i] - x[i] * 2 * y[i]) < 1e-5f, "c[%d] %g", i, c[i]);
    st = fbx_executor_backward(h, gm, 1, gin, 2);
    ck_assert_msg(!st, "backward: %s", fbx_status_message(st));
    const float *g = gin[0]->dl_tensor.data;
    for (int i = 0; i < 6; i++) ck_assert_msg(fabsf(g[i] - 2 * y[i]) < 1e-5f, "grad x[%d] %g", i, g[i]);
    fbx_grad_free(h);
    release_all(gin, 2);
    release_all(out, 1);
    free(in[0]);
    free(in[1]);
    free(gm[0]);
  }
  fbx_executor_destroy(ex);
}
END_TEST

int main(void) {
  Suite *s = suite_create("api_forward_borrow");
  TCase *tc = tcase_create("borrow");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, saved_input_copied_none);
  tcase_add_test(tc, saved_input_copied_tensorexpr);
  tcase_add_test(tc, unsaved_input_not_copied);
  tcase_add_test(tc, inplace_graph_does_not_write_caller_inputs);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
