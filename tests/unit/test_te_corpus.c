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

static void run_corpus(const char *backend) {
  ck_assert(!setenv("FUSEBOX_TE_BACKEND", backend, 1));
  ck_assert(!fbx_op_table_init());
  char **names = NULL;
  int n = cc_list(&names);
  if (!cc_list_filtered()) ck_assert_int_ge(n, 50);
  int failed = 0, fused = 0, fused0 = 0, bw_cases = 0;
  int64_t groups = 0, bw_runs = 0;
  for (int c = 0; c < n; c++) {
    for (int prof = 1; prof >= 0; prof--) {
      int64_t runs = 0;
      char *why = cc_fused_forward(names[c], "tensorexpr", prof, &runs, &groups);
      if (why) printf("  [%s] %-28s profiling_runs=%d FAIL: %s\n", backend, names[c], prof, why);
      failed += why != NULL;
      fused += prof == 1 && runs > 0;
      fused0 += prof == 0 && runs > 0;
      fbx_free(why);
    }
    if (cc_has_input_grads(names[c])) {
      bw_cases++;
      char *why = cc_fused_backward(names[c], "tensorexpr", &bw_runs);
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
  if (!cc_list_filtered()) ck_assert_int_ge(fused, n / 5);
  if (!cc_list_filtered()) ck_assert_int_ge(fused0, n / 5);
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
