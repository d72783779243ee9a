/* PyTorch's gradients for the conformance corpus, through the executor's
 * gradient mode: every case with grad_<name>.npy files runs forward and
 * backward (fbx_executor_forward_values / backward_values) several times —
 * the first run profiles on the eager tape, the later ones go through the
 * DifferentiableGraph plan and its forward/backward executors — under fuser
 * `none` and under the legacy fuser (or, until that plugin is built, the
 * test plugin `good`). Every float32/float64 tensor input requires grad (as
 * the corpus script did); output k's gradient is grad_outK.npy or undefined.
 *
 * Tolerance for gradients: 10x the case's `tol` (or the dtype default), but
 * at least rtol 1e-4 / atol 1e-5 for float32 and 1e-9 / 1e-10 for float64:
 * backward graphs sum in other orders than PyTorch's kernels.
 *
 * One line per case and fuser; every case must match (in-place writes into
 * views of tensors requiring grad, clamp_inplace and index_put, go through
 * the tape's CopySlices-style rebase, autodiff/tape.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "corpus_case.h"
#include "exec/executor.h"
#include "host/host.h"
#include "ir/text.h"
#include "testutil.h"

#ifndef FBX_TEST_PLUGIN_DIR
#define FBX_TEST_PLUGIN_DIR FBX_BINARY_DIR "/tests/plugins"
#endif

#define MAX_ARGS 32
#define MAX_OUTS 64
#define ITERS 3

/* Run one case: NULL on success, else the reason (caller frees). */
static char *run_case(const char *name, fbx_fuser *fuser) {
  fbx_strbuf why = {0};
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue in[MAX_ARGS] = {{0}}, out[MAX_OUTS] = {{0}}, gout[MAX_OUTS] = {{0}}, gin[MAX_ARGS] = {{0}};
  int nin = 0, nout = 0, nflat = 0;
  fbx_status *st = fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
  if (!st) {
    fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none", .fuser_handle = fuser, .profiling_runs = 1};
    st = fbx_executor_create(&ex, g, &o);
  }
  if (st) goto done;
  if ((nin = cc_load_inputs(name, in, MAX_ARGS, &why)) < 0) goto done;
  nout = fbx_graph_noutputs(g);
  nflat = fbx_executor_num_outputs(ex);
  if (nflat > MAX_OUTS || nout > MAX_OUTS) {
    fbx_strbuf_puts(&why, "too many outputs");
    goto done;
  }
  bool defined[MAX_OUTS];
  if (cc_load_grad_outputs(name, gout, defined, nflat, &why) < 0) goto done;
  bool rg[MAX_ARGS] = {0};
  for (int i = 0; i < nin; i++)
    rg[i] = in[i].kind == FBX_IV_TENSOR &&
            (in[i].u.t->dtype == FBX_DTYPE_FLOAT32 || in[i].u.t->dtype == FBX_DTYPE_FLOAT64);
  for (int it = 0; it < ITERS; it++) {
    fbx_grad_handle *h = NULL;
    for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
    if ((st = fbx_executor_forward_values(ex, in, nin, rg, out, nout, 0, &h))) goto done;
    st = fbx_executor_backward_values(h, gout, nflat, gin, nin);
    fbx_grad_free(h);
    if (st) goto done;
    for (int i = 0; i < nin; i++) {
      bool compared;
      fbx_strbuf w = {0};
      bool ok = cc_check_input_grad(name, fbx_graph_input(g, i)->name, &gin[i], &compared, &w);
      if (!ok) fbx_strbuf_printf(&why, "run %d: %s", it + 1, w.data);
      fbx_strbuf_free(&w);
      if (!ok) goto done;
    }
    for (int i = 0; i < nin; i++) fbx_iv_release(&gin[i]);
  }
done:
  if (st) {
    fbx_strbuf_puts(&why, fbx_status_message(st));
    fbx_status_free(st);
  }
  for (int i = 0; i < MAX_ARGS; i++) {
    fbx_iv_release(&in[i]);
    fbx_iv_release(&gin[i]);
  }
  for (int i = 0; i < MAX_OUTS; i++) {
    fbx_iv_release(&out[i]);
    fbx_iv_release(&gout[i]);
  }
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
  if (!why.len) {
    fbx_strbuf_free(&why);
    return NULL;
  }
  return fbx_strbuf_take(&why);
}

static void run_all(fbx_fuser *fuser, const char *label) {
  char **all = NULL, *names[512];
  int nall = cc_list(&all), n = 0;
  for (int i = 0; i < nall && n < 512; i++)
    if (cc_has_input_grads(all[i])) names[n++] = all[i];
  int pass = 0, bad = 0;
  for (int i = 0; i < n; i++) {
    char *why = run_case(names[i], fuser);
    if (!why) {
      pass++;
      printf("[%s] %-28s ok\n", label, names[i]);
    } else {
      bad++;
      printf("[%s] %-28s FAIL: %s\n", label, names[i], why);
    }
    fbx_free(why);
  }
  cc_free_names(all, nall);
  printf("[%s] %d cases with gradients: %d match PyTorch, %d failed\n", label, n, pass, bad);
  fflush(stdout);
  if (!cc_list_filtered()) ck_assert_int_gt(n, 40);
  ck_assert_int_eq(bad, 0);
}

START_TEST(corpus_none) { run_all(NULL, "none"); }
END_TEST

START_TEST(corpus_legacy) {
  const char *legacy = FBX_BINARY_DIR "/plugins/libfbx_legacy.so";
  char path[1024];
  const char *label = "legacy";
  if (access(legacy, R_OK)) {
    printf("legacy fuser not built (%s missing): the fused run uses the test plugin `good` instead\n", legacy);
    snprintf(path, sizeof path, "%s/libfbxtest_good.so", FBX_TEST_PLUGIN_DIR);
    label = "good";
  } else {
    snprintf(path, sizeof path, "%s", legacy);
  }
  fbx_fuser *f = NULL;
  fbx_status *st = fbx_fuser_load(&f, path);
  ck_assert_msg(!st, "load %s: %s", path, fbx_status_message(st));
  run_all(f, label);
  fbx_fuser_release(f);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("autodiff_corpus");
  TCase *tc = tcase_create("corpus");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, corpus_none);
  tcase_add_test(tc, corpus_legacy);
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
