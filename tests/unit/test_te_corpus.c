/* The tensorexpr fuser (plugins/tensorexpr) on the whole conformance
 * corpus, forward and backward, with each backend.
 *
 * Every case under tests/corpus/cases/ runs through the profiling executor
 * with --fuser tensorexpr loaded by name: after profiling (1 profiling run,
 * then two optimized runs) and with FUSEBOX_PROFILING_RUNS=0 (profiling_runs
 * 0: optimized from the first run). The last outputs must equal PyTorch's
 * within the case's tolerance; a case whose optimized graph has groups must
 * have run kernels; no compile and no run may fail. Cases with PyTorch
 * gradients also run forward + backward (fbx_executor_forward_values /
 * backward_values) and the input gradients must equal PyTorch's.
 *
 * The backend is read by the plugin when it is loaded, so each test runs in
 * its own process (Check's fork mode) and sets FUSEBOX_TE_BACKEND first:
 * c (generated C through the host's compiler) and eval (the loop-IR
 * interpreter). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strbuf.h"
#include "corpus_case.h"
#include "exec/executor.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

#define MAX_ARGS 32
#define MAX_OUTS 64

/* Forward: NULL on success, else why (caller frees). Adds to *fused_runs
 * the kernel runs and to *groups the groups. */
static char *forward_case(const char *name, int profiling_runs, int64_t *kernel_runs, int64_t *groups) {
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue in[MAX_ARGS] = {0}, out[MAX_OUTS] = {0};
  fbx_strbuf why = {0};
  int nin = cc_load_inputs(name, in, MAX_ARGS, &why), nout = 0;
  fbx_status *st = nin < 0 ? fbx_status_new(FBX_ERR_INVALID_ARG, "cannot read the inputs")
                           : fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
  /* opts.profiling_runs 0 means "FUSEBOX_PROFILING_RUNS, else 1": the
   * variable says 0 */
  if (profiling_runs == 0) ck_assert(!setenv("FUSEBOX_PROFILING_RUNS", "0", 1));
  else ck_assert(!unsetenv("FUSEBOX_PROFILING_RUNS"));
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "tensorexpr", .profiling_runs = profiling_runs};
  if (!st) st = fbx_executor_create(&ex, g, &o);
  if (!st) nout = fbx_graph_noutputs(g);
  if (nout > MAX_OUTS) st = fbx_status_new(FBX_ERR_INVALID_ARG, "too many outputs");
  for (int r = 0; r < 3 && !st; r++) {
    for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
    st = fbx_executor_run_values(ex, in, nin, out, nout, 1);
  }
  bool ok = !st && cc_compare_outputs(name, out, nout, &why);
  fbx_executor_stats s = {.struct_size = sizeof s};
  if (ex) fbx_executor_stats_get(ex, &s);
  if (ok && s.groups > 0 && s.kernel_runs == 0 && (s.fallbacks > 0 || s.kernels_compiled > 0)) {
    fbx_strbuf_printf(&why, "%lld groups but no kernel ran", (long long)s.groups);
    ok = false;
  }
  if (ok && s.compile_failures > 0) {
    fbx_strbuf_printf(&why, "%lld compile failures", (long long)s.compile_failures);
    ok = false;
  }
  if (ok && s.fallbacks_run > 0) {
    fbx_strbuf_printf(&why, "%lld failed runs", (long long)s.fallbacks_run);
    ok = false;
  }
  if (st) fbx_strbuf_printf(&why, "%s", fbx_status_message(st));
  *kernel_runs += s.kernel_runs;
  *groups += s.groups;
  if (ok && profiling_runs == 0 && s.profiling_runs != 0) {
    fbx_strbuf_printf(&why, "%lld profiling runs with FUSEBOX_PROFILING_RUNS=0", (long long)s.profiling_runs);
    ok = false;
  }
  fbx_status_free(st);
  for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
  for (int i = 0; i < MAX_ARGS; i++) fbx_iv_release(&in[i]);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
  unsetenv("FUSEBOX_PROFILING_RUNS");
  if (ok) {
    fbx_strbuf_free(&why);
    return NULL;
  }
  if (!why.len) fbx_strbuf_puts(&why, "failed");
  return fbx_strbuf_take(&why);
}

/* Forward + backward against PyTorch's input gradients. */
static char *backward_case(const char *name, int64_t *bw_kernel_runs) {
  fbx_strbuf why = {0};
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue in[MAX_ARGS] = {{0}}, out[MAX_OUTS] = {{0}}, gout[MAX_OUTS] = {{0}}, gin[MAX_ARGS] = {{0}};
  int nin = 0, nout = 0, nflat = 0;
  fbx_status *st = fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
  if (!st) {
    fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "tensorexpr", .profiling_runs = 1};
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
    rg[i] = in[i].kind == FBX_IV_TENSOR && (in[i].u.t->dtype == FBX_DTYPE_FLOAT32 || in[i].u.t->dtype == FBX_DTYPE_FLOAT64);
  for (int it = 0; it < 3; it++) {
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
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  *bw_kernel_runs += s.backward_kernel_runs;
  if (s.compile_failures > 0 || s.fallbacks_run > 0)
    fbx_strbuf_printf(&why, "%lld compile failures, %lld failed runs", (long long)s.compile_failures,
                      (long long)s.fallbacks_run);
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

static void run_corpus(const char *backend) {
  ck_assert(!setenv("FUSEBOX_TE_BACKEND", backend, 1));
  ck_assert(!fbx_op_table_init());
  char **names = NULL;
  int n = cc_list(&names);
  ck_assert_int_ge(n, 50);
  int failed = 0, fused = 0, fused0 = 0, bw_cases = 0;
  int64_t groups = 0, bw_runs = 0;
  for (int c = 0; c < n; c++) {
    for (int prof = 1; prof >= 0; prof--) {
      int64_t runs = 0;
      char *why = forward_case(names[c], prof, &runs, &groups);
      if (why) printf("  [%s] %-28s profiling_runs=%d FAIL: %s\n", backend, names[c], prof, why);
      failed += why != NULL;
      fused += prof == 1 && runs > 0;
      fused0 += prof == 0 && runs > 0;
      fbx_free(why);
    }
    if (cc_has_input_grads(names[c])) {
      bw_cases++;
      char *why = backward_case(names[c], &bw_runs);
      if (why) printf("  [%s] %-28s backward FAIL: %s\n", backend, names[c], why);
      failed += why != NULL;
      fbx_free(why);
    }
  }
  printf("[%s] tensorexpr corpus: %d cases x 2 profiling settings + %d backward: %d failures; %d cases ran fused "
         "kernels after profiling, %d with FUSEBOX_PROFILING_RUNS=0 (%lld groups), %lld backward kernel runs\n",
         backend, n, bw_cases, failed, fused, fused0, (long long)groups, (long long)bw_runs);
  fflush(stdout);
  cc_free_names(names, n);
  ck_assert_int_eq(failed, 0);
  /* a fuser that fuses little is broken */
  ck_assert_int_ge(fused, n / 5);
  ck_assert_int_ge(fused0, n / 5);
  ck_assert_int_gt(bw_runs, 0);
}

START_TEST(corpus_c) { run_corpus("c"); }
END_TEST

START_TEST(corpus_eval) { run_corpus("eval"); }
END_TEST

int main(void) {
  Suite *s = suite_create("te_corpus");
  TCase *tc = tcase_create("corpus");
  tcase_set_timeout(tc, 1200);
  tcase_add_test(tc, corpus_c);
  tcase_add_test(tc, corpus_eval);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_FORK); /* each backend in a fresh process: the plugin reads it when loaded */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
