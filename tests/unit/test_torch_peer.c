/* PyTorch as a peer of the fusers (issue 19): `fusebox bench --fusers
 * none,legacy,torch` runs the graph through libtorch's executor
 * (libfusebox_torch_peer.so, dlopened) in the same rounds, and prints one
 * table with a row per entry and the torch_abs/torch_rel columns (every
 * row's error against PyTorch's outputs). Built only with the bridge
 * (tests/CMakeLists.txt).
 *
 * On corpus graphs with PyTorch's inputs (ratio-IoU, softmax, layer norm,
 * the LSTM cell): exit 0 (every row, torch's included, matches the
 * reference interpreter), three rows, and torch's own torch_abs is 0; the
 * JSON file has the vs-torch errors; with --backward, PyTorch's input
 * gradients match the eager tape's. A module's graph with statements
 * that have no outputs runs through the peer too. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* " --input FILE" per args line of a corpus case (tests/corpus/cases, or
 * tests/corpus/modules for a mod_ case). */
static void case_inputs(const char *name, char *buf, size_t cap) {
  char p[4096];
  const char *dir = strncmp(name, "mod_", 4) ? "cases" : "modules";
  snprintf(p, sizeof p, "tests/corpus/%s/%s/args", dir, name);
  char *args = tu_read_file(tu_src_path(p), NULL);
  ck_assert_msg(args != NULL, "no %s", p);
  size_t o = 0;
  buf[0] = '\0';
  for (char *line = strtok(args, "\n"); line; line = strtok(NULL, "\n")) {
    if (strstr(line, ".npy")) {
      snprintf(p, sizeof p, "tests/corpus/%s/%s/%s", dir, name, line);
      o += (size_t)snprintf(buf + o, cap - o, " --input %s", tu_src_path(p));
    } else {
      o += (size_t)snprintf(buf + o, cap - o, " --input '%s'", line);
    }
    ck_assert(o < cap);
  }
  free(args);
}

/* The row of `fuser` in a bench table, or NULL. */
static const char *row(const char *out, const char *fuser) {
  char key[64];
  snprintf(key, sizeof key, "\n%s ", fuser);
  const char *p = strstr(out, key);
  return p ? p + 1 : NULL;
}

static const char *const CASES[] = {"ratio_iou", "softmax", "layer_norm", "lstm_cell"};

START_TEST(three_rows_one_table) {
  const char *name = CASES[_i];
  char inputs[16384], cmd[20000], *out = NULL, graph[4096];
  case_inputs(name, inputs, sizeof inputs);
  snprintf(graph, sizeof graph, "tests/corpus/cases/%s/graph.ir", name);
  snprintf(cmd, sizeof cmd, "%s bench %s %s --fusers none,legacy,torch --iters 3", FBX_CLI, tu_src_path(graph),
           inputs);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "%s: bench failed (%d):\n%s", name, rc, out);
  ck_assert_msg(strstr(out, "torch_abs") && strstr(out, "torch_rel"), "%s: no vs-torch columns:\n%s", name, out);
  const char *none = row(out, "none"), *legacy = row(out, "legacy"), *torch = row(out, "torch");
  ck_assert_msg(none && legacy && torch && none < legacy && legacy < torch, "%s: rows missing:\n%s", name, out);
  /* torch against its own first run: the last column is 0 */
  const char *eol = strchr(torch, '\n');
  size_t len = eol ? (size_t)(eol - torch) : strlen(torch);
  ck_assert_msg(len > 4 && !strncmp(torch + len - 2, " 0", 2), "%s: torch's own torch_rel is not 0:\n%s", name, out);
  ck_assert_ptr_null(strstr(out, "MISMATCH"));
  free(out);
}
END_TEST

START_TEST(json_has_the_second_oracle) {
  char inputs[16384], cmd[20000], *out = NULL;
  case_inputs("softmax", inputs, sizeof inputs);
  const char *json = "test_torch_peer.json";
  snprintf(cmd, sizeof cmd, "%s bench %s %s --fusers none,torch --iters 2 --json %s", FBX_CLI,
           tu_src_path("tests/corpus/cases/softmax/graph.ir"), inputs, json);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "bench failed (%d):\n%s", rc, out);
  free(out);
  char *text = tu_read_file(json, NULL);
  ck_assert_ptr_nonnull(text);
  ck_assert_ptr_nonnull(strstr(text, "\"name\": \"torch\""));
  ck_assert_ptr_nonnull(strstr(text, "\"max_abs_error_vs_torch\": "));
  free(text);
  remove(json);
}
END_TEST

/* --backward: PyTorch's autograd on the same output gradients; its input
 * gradients must match the eager tape's (bench exits 1 otherwise). */
START_TEST(backward_through_torch) {
  const char *name = CASES[_i];
  char inputs[16384], cmd[20000], *out = NULL, graph[4096];
  case_inputs(name, inputs, sizeof inputs);
  snprintf(graph, sizeof graph, "tests/corpus/cases/%s/graph.ir", name);
  snprintf(cmd, sizeof cmd, "%s bench %s %s --fusers none,torch --iters 2 --backward", FBX_CLI, tu_src_path(graph),
           inputs);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "%s: bench --backward failed (%d):\n%s", name, rc, out);
  ck_assert_msg(row(out, "torch") && !strstr(out, "MISMATCH"), "%s:\n%s", name, out);
  free(out);
}
END_TEST

/* A scripted module's graph holds statements without outputs (`= prim::If`
 * around a raise), printed as PyTorch prints them, which PyTorch's own IR
 * parser reads only without the `= `: the peer runs it, forward and
 * backward (nn.LSTM over a sequence, batch_first, two layers, both
 * directions). */
START_TEST(statements_without_outputs) {
  char inputs[16384], cmd[24000], *out = NULL, graph[4096];
  snprintf(graph, sizeof graph, "%s", tu_src_path("tests/corpus/modules/mod_lstm_seq/graph.ir")); /* a static buffer */
  char *text = tu_read_file(graph, NULL);
  ck_assert_ptr_nonnull(text);
  ck_assert_ptr_nonnull(strstr(text, "\n   = prim::If("));
  free(text);
  case_inputs("mod_lstm_seq", inputs, sizeof inputs);
  for (int bwd = 0; bwd < 2; bwd++) {
    snprintf(cmd, sizeof cmd, "%s bench %s %s --fusers none,torch --iters 2%s", FBX_CLI, graph, inputs,
             bwd ? " --backward" : "");
    int rc = tu_run(cmd, &out);
    ck_assert_msg(rc == 0, "bench%s failed (%d):\n%s", bwd ? " --backward" : "", rc, out);
    ck_assert_msg(row(out, "torch") && !strstr(out, "MISMATCH"), "%s", out);
    free(out);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("torch_peer");
  TCase *tc = tcase_create("bench");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, three_rows_one_table, 0, (int)(sizeof CASES / sizeof CASES[0]));
  tcase_add_test(tc, json_has_the_second_oracle);
  tcase_add_loop_test(tc, backward_through_torch, 0, (int)(sizeof CASES / sizeof CASES[0]));
  tcase_add_test(tc, statements_without_outputs);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
