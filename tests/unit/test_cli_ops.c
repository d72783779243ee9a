/* `fusebox ops` and `fusebox --version` (issue 18, item 8): a user can list
 * what fusebox runs and which version it is. Expected schemas are PyTorch's
 * own spellings, written here, not read from the table under test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fusebox/fuser_abi.h>

#include "testutil.h"

static int cli(const char *args, char **out) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "%s %s", FBX_CLI, args);
  return tu_run(cmd, out);
}

static int count_lines(const char *s, const char *with) {
  int n = 0;
  for (const char *l = s; l && *l;) {
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    char line[1024];
    snprintf(line, sizeof line, "%.*s", (int)(len < 1023 ? len : 1023), l);
    if (!with || strstr(line, with)) n++;
    l = e ? e + 1 : NULL;
  }
  return n;
}

START_TEST(lists_matching_schemas) {
  char *out = NULL;
  ck_assert_int_eq(cli("ops layer_norm", &out), 0);
  ck_assert_msg(strstr(out, "aten::layer_norm(Tensor input, int[] normalized_shape"), "%s", out);
  ck_assert_msg(!strstr(out, "aten::relu("), "pattern did not filter:\n%s", out);
  free(out);
  /* case ignored; a gradient marker on an op PyTorch differentiates */
  ck_assert_int_eq(cli("ops 'ATEN::TANH('", &out), 0);
  ck_assert_msg(strstr(out, "grad  aten::tanh(Tensor self) -> Tensor"), "%s", out);
  free(out);
}
END_TEST

START_TEST(grad_filters_partition_the_table) {
  char *all = NULL, *g = NULL, *ng = NULL;
  ck_assert_int_eq(cli("ops 2>/dev/null", &all), 0);
  ck_assert_int_eq(cli("ops --grad 2>/dev/null", &g), 0);
  ck_assert_int_eq(cli("ops --no-grad 2>/dev/null", &ng), 0);
  int na = count_lines(all, "::"), ngr = count_lines(g, "::"), nng = count_lines(ng, "::");
  ck_assert_msg(na > 100, "only %d ops listed", na);
  ck_assert_int_gt(ngr, 0);
  ck_assert_int_gt(nng, 0);
  ck_assert_int_eq(na, ngr + nng);
  ck_assert_int_eq(count_lines(g, "grad  "), ngr);
  free(all), free(g), free(ng);
}
END_TEST

START_TEST(no_match_and_bad_args) {
  char *out = NULL;
  ck_assert_int_eq(cli("ops no_such_op_xyz", &out), 1);
  ck_assert_msg(strstr(out, "0 operators"), "%s", out);
  free(out);
  ck_assert_int_eq(cli("ops --frob", &out), 2);
  ck_assert_msg(strstr(out, "unknown option '--frob'"), "%s", out);
  free(out);
  ck_assert_int_eq(cli("ops a b", &out), 2);
  free(out);
}
END_TEST

START_TEST(version) {
  char *out = NULL;
  ck_assert_int_eq(cli("--version", &out), 0);
  char want[64];
  snprintf(want, sizeof want, "(plugin ABI %d.%d)", FBXP_ABI_MAJOR, FBXP_ABI_MINOR);
  ck_assert_msg(!strncmp(out, "fusebox ", 8) && strstr(out, want), "%s", out);
  free(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("cli_ops");
  TCase *tc = tcase_create("ops");
  tcase_add_test(tc, lists_matching_schemas);
  tcase_add_test(tc, grad_filters_partition_the_table);
  tcase_add_test(tc, no_match_and_bad_args);
  tcase_add_test(tc, version);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
