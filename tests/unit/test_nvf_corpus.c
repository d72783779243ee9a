/* The nvfuser_like fuser (plugins/nvfuser_like) on the whole conformance
 * corpus, on its OpenCL target (PoCL's CPU device here).
 *
 *   corpus: every case under tests/corpus/cases/ through the profiling
 *     executor with --fuser nvfuser_like, after profiling (1 profiling run,
 *     then two optimized runs) and with FUSEBOX_PROFILING_RUNS=0; the last
 *     outputs must equal PyTorch's, groups must have run kernels, no compile
 *     and no run may fail (cc_fused_forward); cases with PyTorch gradients
 *     also forward + backward (cc_fused_backward). At least a fifth of the
 *     cases must run fused kernels and the backward graphs must too.
 *   nvrtc: the same forward runs with FUSEBOX_NVF_NVRTC_CHECK: every kernel
 *     the corpus produces is also printed as CUDA C and compiled with NVRTC;
 *     more than zero, none failing. Without libnvrtc the test says so and
 *     checks nothing else.
 * The plugin reads its environment when it is loaded: each test runs in its
 * own process (Check's fork mode) and sets FUSEBOX_NVF_TARGET first: opencl,
 * or FUSEBOX_NVF_TEST_TARGET's value for the corpus (cuda where a GPU is). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "base/alloc.h"
#include "corpus_case.h"
#include "ops/optable.h"
#include "testutil.h"

#define FUSER "nvfuser_like"

/* PoCL, LLVM and NVRTC keep process-lifetime allocations (and the plugin's
 * runtime lives as long as the process) that LeakSanitizer would report at
 * exit; they are not ours. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
  return "leak:libpocl\nleak:libOpenCL\nleak:libLLVM\nleak:libclang\nleak:libnvrtc\nleak:libhwloc\n";
}

/* the target under test: FUSEBOX_NVF_TEST_TARGET (cuda on a machine with a
 * GPU), else opencl */
static const char *test_target(void) {
  const char *t = getenv("FUSEBOX_NVF_TEST_TARGET");
  return t && *t ? t : "opencl";
}

START_TEST(corpus) {
  ck_assert(!setenv("FUSEBOX_NVF_TARGET", test_target(), 1));
  ck_assert(!fbx_op_table_init());
  char **names = NULL;
  int n = cc_list(&names);
  if (!cc_list_filtered()) ck_assert_int_ge(n, 50);
  int failed = 0, fused = 0, fused0 = 0, bw_cases = 0;
  int64_t groups = 0, bw_runs = 0, runs_all = 0;
  for (int c = 0; c < n; c++) {
    for (int prof = 1; prof >= 0; prof--) {
      int64_t runs = 0;
      char *why = cc_fused_forward(names[c], FUSER, prof, &runs, &groups);
      if (why) printf("  %-28s profiling_runs=%d FAIL: %s\n", names[c], prof, why);
      failed += why != NULL;
      fused += prof == 1 && runs > 0;
      fused0 += prof == 0 && runs > 0;
      runs_all += runs;
      fbx_free(why);
    }
    if (cc_has_input_grads(names[c])) {
      bw_cases++;
      char *why = cc_fused_backward(names[c], FUSER, &bw_runs);
      if (why) printf("  %-28s backward FAIL: %s\n", names[c], why);
      failed += why != NULL;
      fbx_free(why);
    }
  }
  printf("nvfuser_like corpus (%s): %d cases x 2 profiling settings + %d backward: %d failures; %d cases ran fused "
         "kernels after profiling, %d with FUSEBOX_PROFILING_RUNS=0 (%lld groups, %lld kernel runs), %lld backward "
         "kernel runs\n",
         test_target(), n, bw_cases, failed, fused, fused0, (long long)groups, (long long)runs_all, (long long)bw_runs);
  fflush(stdout);
  cc_free_names(names, n);
  ck_assert_int_eq(failed, 0);
  if (!cc_list_filtered()) ck_assert_int_ge(fused, n / 5);
  if (!cc_list_filtered()) ck_assert_int_ge(fused0, n / 5);
  ck_assert_int_gt(bw_runs, 0);
}
END_TEST

START_TEST(nvrtc) {
  char path[256];
  snprintf(path, sizeof path, "%s/nvf_nvrtc_check_%d.txt", FBX_BINARY_DIR, (int)getpid());
  unlink(path);
  ck_assert(!setenv("FUSEBOX_NVF_TARGET", "opencl", 1));
  ck_assert(!setenv("FUSEBOX_NVF_NVRTC_CHECK", path, 1));
  ck_assert(!fbx_op_table_init());
  char **names = NULL;
  int n = cc_list(&names);
  int64_t groups = 0, runs = 0;
  for (int c = 0; c < n; c++) fbx_free(cc_fused_forward(names[c], FUSER, 1, &runs, &groups));
  cc_free_names(names, n);
  FILE *fp = fopen(path, "r");
  ck_assert_msg(fp, "no kernel was checked with NVRTC");
  char line[4096];
  int ok = 0, bad = 0, unsupported = 0;
  while (fgets(line, sizeof line, fp)) {
    if (!strncmp(line, "ok ", 3)) ok++;
    else if (strstr(line, "NVRTC") && strstr(line, "not")) unsupported++;
    else {
      bad++;
      if (bad < 4) printf("  %s", line);
    }
  }
  fclose(fp);
  unlink(path);
  if (unsupported && !ok) {
    printf("nvfuser_like: NVRTC is not installed here; CUDA C not checked\n");
    return;
  }
  printf("nvfuser_like: %d CUDA kernels of the corpus compiled with NVRTC, %d failed\n", ok, bad);
  ck_assert_int_gt(ok, 0);
  ck_assert_int_eq(bad, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("nvf_corpus");
  TCase *tc = tcase_create("corpus");
  tcase_set_timeout(tc, 1200);
  tcase_add_test(tc, corpus);
  suite_add_tcase(s, tc);
  TCase *tn = tcase_create("nvrtc");
  tcase_set_timeout(tn, 1200);
  tcase_add_test(tn, nvrtc);
  suite_add_tcase(s, tn);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_FORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
