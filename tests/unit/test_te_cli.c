/* The tensorexpr fuser through the `fusebox` command, as a user runs it:
 * `fusebox plugin-check tensorexpr` passes; `fusebox explain --fuser
 * tensorexpr` shows ratio-IoU as one group, a softmax as one group per
 * softmax, the hand-written layer norm (its shared list of dims included)
 * as one group; --source shows the loop IR before and after the schedule
 * and the generated C; a bad FUSEBOX_TE_* value is reported by name;
 * without a working C compiler the kernels run on the IR interpreter. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s ? strstr(s, what) : NULL; p; p = strstr(p + 1, what)) n++;
  return n;
}

static char *explain(const char *env, const char *graph, const char *inputs, const char *opts) {
  char cmd[16384], *out = NULL;
  int k = snprintf(cmd, sizeof cmd, "%s %s explain %s --fuser tensorexpr %s %s 2>&1", env, FBX_CLI, tu_src_path(graph),
                   inputs, opts);
  ck_assert_msg(k > 0 && (size_t)k < sizeof cmd, "command line too long");
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "explain failed (%d):\n%s", rc, out ? out : "");
  return out;
}

static char *case_inputs(const char *name, int n) {
  size_t cap = 64 + (size_t)n * 4096, o = 0;
  char *out = malloc(cap);
  out[0] = 0;
  for (int i = 0; i < n; i++)
    o += (size_t)snprintf(out + o, cap - o, " --input %s/%s/in%d.npy", tu_src_path("tests/corpus/cases"), name, i);
  return out;
}

START_TEST(plugin_check_passes) {
  char *out = NULL, cmd[4096];
  snprintf(cmd, sizeof cmd, "%s plugin-check tensorexpr --corpus %s 2>&1", FBX_CLI, tu_src_path("tests/corpus/cases"));
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "plugin-check tensorexpr failed (%d):\n%s", rc, out ? out : "");
  ck_assert_ptr_nonnull(strstr(out, " passed, 0 failed"));
  free(out);
}
END_TEST

START_TEST(ratio_iou_is_one_group) {
  char *in = case_inputs("ratio_iou", 8);
  char *out = explain("", "examples/ratio_iou.ir", in, "");
  ck_assert_msg(strstr(out, "optimized, 1 group\n") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "1 launch per run") != NULL, "%s", out);
  ck_assert_ptr_nonnull(strstr(out, "nodes outside fusion groups in function 1 (the graph)\n#   (none)"));
  free(out);
  free(in);
}
END_TEST

START_TEST(softmax_is_one_group_each) {
  char *in = case_inputs("softmax", 1);
  char *out = explain("", "tests/corpus/cases/softmax/graph.ir", in, "--source");
  /* softmax(-1), log_softmax(1), softmax(0) of the same x: one group each */
  ck_assert_msg(strstr(out, "optimized, 3 groups\n") != NULL, "%s", out);
  ck_assert_int_eq(count(out, "(aten::softmax) (function 1) for (float32[4, 5]): 1 launch per run"), 2);
  ck_assert_int_eq(count(out, "(aten::log_softmax) (function 1) for (float32[4, 5]): 1 launch per run"), 1);
  /* --source: the IR before and after the schedule, then the C */
  ck_assert_int_eq(count(out, "/* ==== tensorexpr: loop IR as lowered ==== */"), 3);
  ck_assert_int_eq(count(out, "/* ==== loop IR after the schedule (inline,rowblock,flatten,parallel,vectorize,registers) ==== */"), 3);
  ck_assert_int_eq(count(out, "/* ==== C (backend c) ==== */"), 3);
  ck_assert_ptr_nonnull(strstr(out, "reduce l0 float32 = -inf MAX_OTHER over"));
  ck_assert_ptr_nonnull(strstr(out, "void te_kernel(char *const *bufs"));
  /* exp(x - max): the kit's exp for operands <= 0 (FBXK_FACT_NONPOS), never the general one */
  ck_assert_int_ge(count(out, "fbxk_vexpf_np(("), 3);
  ck_assert_int_eq(count(out, "fbxk_vexpf(("), 0);
  free(out);
  free(in);
}
END_TEST

START_TEST(layer_norm_by_hand_is_one_group) {
  char *in = case_inputs("layer_norm_manual", 3);
  char *out = explain("", "tests/corpus/cases/layer_norm_manual/graph.ir", in, "--input eps.1=1e-05");
  ck_assert_msg(strstr(out, "optimized, 1 group\n") != NULL, "%s", out);
  ck_assert_msg(count(out, "aten::mean") >= 2, "%s", out);
  free(out);
  free(in);
}
END_TEST

/* A copy of the graph at `rel` (inputs typed plain Tensor) with every
 * "%NAME : Tensor" of names[] typed `type` (rows x 1024 or 1024), in a
 * temporary file; returns its path (caller frees and removes it). */
static char *typed_graph(const char *rel, const char *const *names, const char *const *types, int n) {
  size_t len = 0;
  char *text = tu_read_file(tu_src_path(rel), &len);
  ck_assert_msg(text != NULL, "cannot read %s", rel);
  size_t cap = len + 4096, o = 0;
  char *out = malloc(cap);
  for (const char *p = text; *p;) {
    int hit = 0;
    for (int i = 0; i < n && !hit; i++) {
      char pat[128];
      snprintf(pat, sizeof pat, "%%%s : Tensor", names[i]);
      size_t pl = strlen(pat);
      if (!strncmp(p, pat, pl) && (p[pl] == ',' || p[pl] == ')')) {
        o += (size_t)snprintf(out + o, cap - o, "%%%s : %s", names[i], types[i]);
        p += pl;
        hit = 1;
      }
    }
    if (!hit) out[o++] = *p++;
    ck_assert(o + 256 < cap);
  }
  out[o] = 0;
  char *path = malloc(256);
  static int seq;
  snprintf(path, 256, "/tmp/test_te_cli_%d_%d.ir", (int)getpid(), seq++);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(out, f);
  fclose(f);
  free(out);
  free(text);
  return path;
}

#define ROWS "Float(64, 1024, strides=[1024, 1], requires_grad=0, device=cpu)"
#define VEC "Float(1024, strides=[1], requires_grad=0, device=cpu)"

/* issue 14: softmax, the hand-written softmax, aten::layer_norm, the
 * hand-written layer norm, RMS norm and ratio-IoU: one group, one kernel */
START_TEST(norms_are_one_group) {
  static const char *const x[] = {"x.1", "weight.1", "bias.1"};
  static const char *const t[] = {ROWS, VEC, VEC};
  static const char *const iou[] = {"x1.1", "y1.1", "w1.1", "h1.1", "x2.1", "y2.1", "w2.1", "h2.1"};
  static const char *const it[] = {VEC, VEC, VEC, VEC, VEC, VEC, VEC, VEC};
  static const struct {
    const char *graph;
    int n;
    const char *const *names, *const *types;
  } cases[] = {
      {"bench/graphs/softmax.ir", 1, x, t},        {"bench/graphs/softmax_manual.ir", 1, x, t},
      {"bench/graphs/layer_norm.ir", 3, x, t},     {"bench/graphs/layer_norm_manual.ir", 3, x, t},
      {"bench/graphs/rms_norm.ir", 2, x, t},       {"examples/ratio_iou.ir", 8, iou, it},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *path = typed_graph(cases[i].graph, cases[i].names, cases[i].types, cases[i].n);
    char cmd[4096], *out = NULL;
    snprintf(cmd, sizeof cmd, "%s explain %s --fuser tensorexpr --random --source 2>&1", FBX_CLI, path);
    int rc = tu_run(cmd, &out);
    ck_assert_msg(rc == 0, "%s: explain failed (%d):\n%.3000s", cases[i].graph, rc, out ? out : "");
    ck_assert_msg(strstr(out, "optimized, 1 group\n") != NULL, "%s:\n%.3000s", cases[i].graph, out);
    ck_assert_msg(count(out, ": 1 launch per run") == 1, "%s:\n%.3000s", cases[i].graph, out);
    ck_assert_msg(strstr(out, "nodes outside fusion groups in function 1 (the graph)\n#   (none)") != NULL ||
                      strstr(out, "nodes outside fusion groups in function 1 (the graph)\n#   and ") != NULL,
                  "%s: nodes left outside:\n%.3000s", cases[i].graph, out);
    /* the schedule: one loop nest over the rows (rowblock: a norm's passes
     * read their row from cache), or one flat loop for ratio-IoU */
    const char *a = strstr(out, "loop IR after the schedule"), *e = a ? strstr(a, "==== C (backend") : NULL;
    ck_assert_msg(a && e, "%s: no scheduled IR:\n%.3000s", cases[i].graph, out);
    int outer = 0;
    for (const char *p = a; p && p < e; p = strchr(p + 1, '\n'))
      if (!strncmp(p, "\nfor v", 6)) outer++;
    ck_assert_msg(outer == 1, "%s: %d outer loops after the schedule:\n%.3000s", cases[i].graph, outer, out);
    free(out);
    remove(path);
    free(path);
  }
}
END_TEST

/* issue 14 item 6: the backward of RMS norm undoes its broadcasts with
 * aten::_grad_sum_to_size (over the rows for the weight, over the last
 * dim for the statistic): both are fused into groups */
START_TEST(backward_fuses_grad_sum_to_size) {
  char *in = case_inputs("te_rms_norm", 2);
  char *out = explain("", "tests/corpus/cases/te_rms_norm/graph.ir", in, "--backward");
  int fused = 0;
  for (const char *p = strstr(out, "# guard of group "); p; p = strstr(p + 1, "# guard of group ")) {
    const char *eol = strchr(p, '\n');
    const char *g = strstr(p, "aten::_grad_sum_to_size");
    if (g && (!eol || g < eol)) fused++;
  }
  ck_assert_msg(fused >= 2, "%d groups with _grad_sum_to_size:\n%.3000s", fused, out);
  free(out);
  free(in);
}
END_TEST

START_TEST(bad_env_is_named) {
  char *in = case_inputs("softmax", 1);
  char *out = explain("FUSEBOX_TE_BACKEND=gpu FUSEBOX_TE_DISABLE=inline,fuse FUSEBOX_TE_PARALLEL_MIN=x",
                      "tests/corpus/cases/softmax/graph.ir", in, "--source");
  ck_assert_msg(strstr(out, "FUSEBOX_TE_BACKEND='gpu' is neither 'c' nor 'eval'") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "FUSEBOX_TE_DISABLE='inline,fuse' names an unknown transformation") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "FUSEBOX_TE_PARALLEL_MIN='x' is not a non-negative integer") != NULL, "%s", out);
  /* the valid part still applies */
  ck_assert_ptr_nonnull(strstr(out, "loop IR after the schedule (rowblock,flatten,parallel,vectorize,registers)"));
  free(out);
  out = explain("FUSEBOX_TE_BACKEND=eval", "tests/corpus/cases/softmax/graph.ir", in, "--source");
  ck_assert_ptr_nonnull(strstr(out, "/* ==== C (backend eval: not compiled) ==== */"));
  free(out);
  free(in);
}
END_TEST

/* no working C compiler: the kernels run on the loop-IR interpreter */
START_TEST(no_compiler_runs_the_interpreter) {
  char cmd[4096], *out = NULL;
  snprintf(cmd, sizeof cmd,
           "FUSEBOX_CC=/nonexistent/cc FUSEBOX_CC_CACHE=0 %s run %s --fuser tensorexpr --input %s/softmax/in0.npy "
           "--iters 3 --stats 2>&1",
           FBX_CLI, tu_src_path("bench/graphs/softmax.ir"), tu_src_path("tests/corpus/cases"));
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "run failed (%d):\n%s", rc, out ? out : "");
  ck_assert_msg(strstr(out, "C compilation failed; kernels run on the loop-IR interpreter") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "kernels compiled    1 (0 failed") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "kernel launches     2 (") != NULL, "%s", out); /* 3 runs, 1 profiling */
  free(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("te_cli");
  TCase *tc = tcase_create("cli");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, plugin_check_passes);
  tcase_add_test(tc, ratio_iou_is_one_group);
  tcase_add_test(tc, softmax_is_one_group_each);
  tcase_add_test(tc, layer_norm_by_hand_is_one_group);
  tcase_add_test(tc, norms_are_one_group);
  tcase_add_test(tc, backward_fuses_grad_sum_to_size);
  tcase_add_test(tc, bad_env_is_named);
  tcase_add_test(tc, no_compiler_runs_the_interpreter);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
