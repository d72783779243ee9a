/* `fusebox plugin-check`: the test plugins through the conformance checker.
 * `good` passes everything; `crash` under --isolate fails the tests that run
 * its kernels ("crashed: SIGSEGV") without taking the checker down;
 * `run_fails` and `compile_fails` are reported; a plugin that does not load
 * fails `load` and nothing else runs. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define PLUGIN(name) FBX_TEST_PLUGIN_DIR "/libfbxtest_" name ".so"
#define CORPUS FBX_SOURCE_DIR "/tests/corpus/cases"

static int check(const char *args, char **out) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "%s plugin-check %s --corpus %s 2>/dev/null", FBX_CLI, args, CORPUS);
  return tu_run(cmd, out);
}

/* The closing line: the last line of the output, exactly "N passed, M failed". */
static void closing(const char *out, int *passed, int *failed) {
  size_t len = strlen(out);
  ck_assert_msg(len > 1 && out[len - 1] == '\n', "output does not end with a line:\n%s", out);
  const char *last = out + len - 1;
  while (last > out && last[-1] != '\n') last--;
  char tail[64];
  ck_assert_msg(sscanf(last, "%d passed, %d failed", passed, failed) == 2, "bad closing line '%s'", last);
  snprintf(tail, sizeof tail, "%d passed, %d failed\n", *passed, *failed);
  ck_assert_str_eq(last, tail);
}

static int lines_starting(const char *out, const char *prefix) {
  int n = 0;
  size_t k = strlen(prefix);
  for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
    if (!strncmp(l, prefix, k)) n++;
  return n;
}

START_TEST(good_passes) {
  char *out = NULL;
  int rc = check(PLUGIN("good"), &out);
  int p, f;
  closing(out, &p, &f);
  ck_assert_msg(rc == 0 && f == 0, "exit %d:\n%.3000s", rc, out);
  ck_assert_int_eq(p, lines_starting(out, "PASS "));
  ck_assert_msg(strstr(out, "PASS load\n") && strstr(out, "PASS metadata\n") && strstr(out, "PASS thread-safety\n") &&
                    strstr(out, "PASS fault/wrong-shape\n") && strstr(out, "PASS fault/unsupported-dtype\n") &&
                    strstr(out, "PASS lifecycle/ratio_iou\n") && strstr(out, "PASS numeric/ratio_iou\n") &&
                    strstr(out, "PASS unload\n") && strstr(out, "PASS coverage\n"),
                "%.3000s", out);
  ck_assert_msg(strstr(out, "# coverage: ") && strstr(out, " groups proposed, "), "%.3000s", out);
  ck_assert_msg(p > 100, "only %d tests:\n%.3000s", p, out);
  free(out);
}
END_TEST

START_TEST(good_isolated) {
  char *out = NULL;
  int rc = check(PLUGIN("good") " --isolate --case ratio_iou --case lstm_cell", &out);
  int p, f;
  closing(out, &p, &f);
  ck_assert_msg(rc == 0 && f == 0 && p >= 8, "exit %d:\n%.3000s", rc, out);
  ck_assert_msg(strstr(out, "each test in its own process"), "%.3000s", out);
  free(out);
}
END_TEST

START_TEST(crash_isolated) {
  char *out = NULL;
  int rc = check(PLUGIN("crash") " --isolate", &out);
  int p, f;
  closing(out, &p, &f);
  ck_assert_msg(rc == 1 && f > 0 && p > 0, "exit %d:\n%.3000s", rc, out);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
  /* under -fno-sanitize-recover the plugin's null store ends in UBSan's exit, not a signal */
  const char *crash = "crashed: ";
#else
  const char *crash = "crashed: SIGSEGV\n";
#endif
  char want[128];
  snprintf(want, sizeof want, "FAIL lifecycle/ratio_iou: %s", crash);
  ck_assert_msg(strstr(out, want), "no '%s' in:\n%.3000s", want, out);
  snprintf(want, sizeof want, "FAIL numeric/ratio_iou: %s", crash);
  ck_assert_msg(strstr(out, want), "no '%s' in:\n%.3000s", want, out);
  ck_assert_msg(strstr(out, "PASS load\n") && strstr(out, "PASS metadata\n"), "%.3000s", out);
  ck_assert_int_eq(f, lines_starting(out, "FAIL "));
  /* tests after the crashes still ran */
  ck_assert_msg(strstr(out, "unload\n"), "%.3000s", out);
  free(out);
}
END_TEST

START_TEST(run_and_compile_failures) {
  char *out = NULL;
  int rc = check(PLUGIN("run_fails") " --case ratio_iou", &out);
  int p, f;
  closing(out, &p, &f);
  ck_assert_msg(rc == 1 && f >= 2, "exit %d:\n%.3000s", rc, out);
  ck_assert_msg(strstr(out, "FAIL lifecycle/ratio_iou: group") && strstr(out, "run failed"), "%.3000s", out);
  ck_assert_msg(strstr(out, "FAIL numeric/ratio_iou: kernels failed at run time"), "%.3000s", out);
  free(out);
  rc = check(PLUGIN("compile_fails") " --case ratio_iou", &out);
  closing(out, &p, &f);
  ck_assert_msg(rc == 1 && strstr(out, "FAIL lifecycle/ratio_iou: group") && strstr(out, "compile failed"), "%.3000s", out);
  free(out);
  rc = check(PLUGIN("bad_proposals") " --case ratio_iou", &out);
  ck_assert_msg(rc == 1 && strstr(out, "rejected by the host's validation"), "%.3000s", out);
  free(out);
}
END_TEST

START_TEST(load_failure_and_usage) {
  char *out = NULL;
  int rc = check(PLUGIN("wrong_major"), &out);
  ck_assert_msg(rc == 1 && strstr(out, "FAIL load: cannot load") && strstr(out, "\n0 passed, 1 failed\n"), "%.3000s", out);
  free(out);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s plugin-check 2>&1", FBX_CLI);
  ck_assert_int_eq(tu_run(cmd, &out), 2);
  ck_assert_msg(strstr(out, "no plugin given"), "%.3000s", out);
  free(out);
  rc = check(PLUGIN("good") " --case no_such_case", &out);
  ck_assert_int_eq(rc, 2);
  free(out);
}
END_TEST

/* Issue 17.11: plugins that fuse nothing fail coverage (the reference legacy
 * fuser runs kernels on the same corpus); every other test still passes. */
START_TEST(useless_plugins_fail_coverage) {
  const char *names[2] = {PLUGIN("declines"), PLUGIN("compiles_nothing")};
  for (int i = 0; i < 2; i++) {
    char args[600], *out = NULL;
    snprintf(args, sizeof args, "%s --case ratio_iou --case lstm_cell", names[i]);
    int rc = check(args, &out);
    int p, f;
    closing(out, &p, &f);
    ck_assert_msg(rc == 1 && f == 1, "%s: exit %d:\n%.3000s", names[i], rc, out);
    ck_assert_msg(strstr(out, "FAIL coverage: the plugin fuses nothing: "), "%.3000s", out);
    ck_assert_msg(strstr(out, "0 kernel runs"), "%.3000s", out);
    ck_assert_msg(strstr(out, "where the reference fuser legacy ran "), "%.3000s", out);
    ck_assert_msg(strstr(out, "PASS lifecycle/ratio_iou\n"), "%.3000s", out);
    free(out);
  }
}
END_TEST

/* Without --isolate a crash ends the checker, but names the test, the
 * plugin, the stage and the group first. */
START_TEST(crash_not_isolated_names_the_test) {
  char cmd[4096], *out = NULL;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
  /* the sanitizers catch the plugin's null store before it faults: abort instead */
  const char *how = "FBXTEST_CRASH_HOW=abort", *sig = "SIGABRT";
  int want_rc = 134;
#else
  const char *how = "", *sig = "SIGSEGV";
  int want_rc = 139;
#endif
  snprintf(cmd, sizeof cmd, "ulimit -c 0; %s %s plugin-check %s --corpus %s --case ratio_iou 2>&1", how, FBX_CLI,
           PLUGIN("crash"), CORPUS);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == want_rc, "exit %d:\n%.3000s", rc, out);
  char want[1024];
  snprintf(want, sizeof want, "fusebox: crashed with %s during plugin-check test lifecycle/ratio_iou of %s", sig,
           PLUGIN("crash"));
  ck_assert_msg(strstr(out, want), "no '%s' in:\n%.3000s", want, out);
  snprintf(want, sizeof want, "fusebox: fuser plugin 'crash' (%s) crashed with %s in run of group %%", PLUGIN("crash"),
           sig);
  ck_assert_msg(strstr(out, want), "no '%s' in:\n%.3000s", want, out);
  free(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("plugin_check");
  TCase *tc = tcase_create("plugin_check");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, good_passes);
  tcase_add_test(tc, good_isolated);
  tcase_add_test(tc, crash_isolated);
  tcase_add_test(tc, run_and_compile_failures);
  tcase_add_test(tc, load_failure_and_usage);
  tcase_add_test(tc, useless_plugins_fail_coverage);
  tcase_add_test(tc, crash_not_isolated_names_the_test);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
