/* The nvfuser_like fuser through the `fusebox` command, as a user runs it
 * (on OpenCL: FUSEBOX_NVF_TARGET=opencl, PoCL here):
 *   - `fusebox plugin-check nvfuser_like` passes;
 *   - `fusebox explain --fuser nvfuser_like --source` shows one persistent
 *     kernel per softmax / log_softmax and per layer norm, and ratio-IoU as
 *     one group of one pointwise kernel; the fusion IR (domains, reductions)
 *     and the scheduler's parameters come before each kernel;
 *   - under autodiff (explain --backward) layer norm's forward is fused;
 *   - `fusebox plugins` says which device nvfuser_like runs on;
 *   - a bad FUSEBOX_NVF_* value is reported by name. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s ? strstr(s, what) : NULL; p; p = strstr(p + 1, what)) n++;
  return n;
}

static char *explain(const char *env, const char *graph, const char *inputs, const char *opts) {
  char cmd[16384], *out = NULL;
  int k = snprintf(cmd, sizeof cmd, "FUSEBOX_NVF_TARGET=opencl %s %s explain %s --fuser nvfuser_like %s %s 2>&1", env,
                   FBX_CLI, tu_src_path(graph), inputs, opts);
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
  snprintf(cmd, sizeof cmd, "FUSEBOX_NVF_TARGET=opencl %s plugin-check nvfuser_like --corpus %s 2>&1", FBX_CLI,
           tu_src_path("tests/corpus/cases"));
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "plugin-check nvfuser_like failed (%d):\n%s", rc, out ? out : "");
  ck_assert_ptr_nonnull(strstr(out, " passed, 0 failed"));
  free(out);
}
END_TEST

/* PoCL's device is a CPU: a row per work-item, no barrier. softmax keeps
 * the row's exp values in its output's row (written in the exp pass, read
 * back and scaled in place), not in a private array; log_softmax keeps
 * nothing (x - max is recomputed from the row in the cache) and is still
 * the persistent schedule. Both take their max without the NaN test (a NaN
 * reaches every result through the sum). FUSEBOX_NVF_DISABLE=rows gives the GPU schedule
 * checked below (a work-group per row, trees in local memory). */
START_TEST(softmax_row_per_work_item_on_a_cpu) {
  char *in = case_inputs("softmax", 1);
  char *out = explain("", "tests/corpus/cases/softmax/graph.ir", in, "--source");
  ck_assert_msg(strstr(out, "optimized, 3 groups\n") != NULL, "%s", out);
  ck_assert_int_eq(count(out, "/* ==== segment 0: persistent(row per work-item, axes=0x2, rows=4, row=5, block=64, groups=1, "
                              "phases=3, private=0 B, kept in output rows=1, maxima without the NaN test=1)"), 1);
  ck_assert_int_eq(count(out, "/* ==== segment 0: persistent(row per work-item, axes=0x2, rows=4, row=5, block=64, groups=1, "
                              "phases=3, private=0 B, maxima without the NaN test=1)"), 1);
  ck_assert_int_eq(count(out, "T8[i0 * 5 + i1] = (float)v4;"), 1); /* exp into the output row */
  ck_assert_int_eq(count(out, "const float v4 = T8[i0 * 5 + i1];"), 1); /* read back in the last pass */
  ck_assert_int_eq(count(out, "/* ==== segment 0: reduction(outer, axes=0x1, rows=5, row=4"), 1);
  ck_assert_int_eq(count(out, "barrier("), 0);
  ck_assert_int_eq(count(out, "__local"), 0);
  free(out);
  free(in);
}
END_TEST

/* rows that divide by 8: the row loop in 8 lanes, each with its accumulator;
 * by 16 (and contiguous, ops with a vector form): the row's values are
 * OpenCL float16/double16 vectors folded into the 8 lanes (issue 15);
 * FUSEBOX_NVF_DISABLE=vectorize: scalar lanes */
/* (the corpus case `rows` checks their results) */
START_TEST(softmax_rows_in_lanes) {
  char *in = case_inputs("rows", 3);
  char *out = explain("", "tests/corpus/cases/rows/graph.ir", in, "--source");
  /* softmax, log_softmax, layer norm over rows of 32 (and softmax over dim 0):
   * a group each; each of the three has two reduction passes in lanes */
  ck_assert_msg(strstr(out, "optimized, 4 groups\n") != NULL, "%s", out);
  ck_assert_int_eq(count(out, "/* ==== segment 0: persistent(row per work-item, axes=0x2, rows=6, row=32, block=64, "
                              "groups=1, phases=3, lanes=8, vector=16, private="), 3);
  ck_assert_int_eq(count(out, "for (long j = 0; j < 32; j += 16) {"), 9);
  ck_assert_int_eq(count(out, "float8 accv"), 2);   /* the sums of exp */
  ck_assert_int_eq(count(out, "float16 accv"), 2);  /* the maxima: a lane per vector lane */
  ck_assert_int_eq(count(out, "double8 accv"), 2);
  ck_assert_int_eq(count(out, ") + (rv"), 8);     /* each sum: the low half, then the high half */
  ck_assert_int_eq(count(out, "_4 = ((accv"), 4); /* and its 8 lanes folded pairwise after the loop */
  ck_assert_int_eq(count(out, " = (((rv"), 2);    /* a max in the loop: no NaN test (softmax's, nan_blind) */
  ck_assert_int_eq(count(out, " = ((((accv"), 2); /* and its 16 lanes folded with the test */
  ck_assert_int_eq(count(out, "_8 = ((((accv"), 2); /* (pairwise too) */
  ck_assert_int_eq(count(out, "for (long l = 0; l < 8; l++) {"), 0);
  free(out);
  out = explain("FUSEBOX_NVF_DISABLE=vectorize", "tests/corpus/cases/rows/graph.ir", in, "--source");
  ck_assert_int_eq(count(out, "/* ==== segment 0: persistent(row per work-item, axes=0x2, rows=6, row=32, block=64, "
                              "groups=1, phases=3, lanes=8, private="), 3);
  ck_assert_int_eq(count(out, "for (long j0 = 0; j0 < 32; j0 += 8) {"), 6);
  ck_assert_int_eq(count(out, "for (long l = 0; l < 8; l++) {"), 6);
  ck_assert_int_eq(count(out, "vload16"), 0);
  free(out);
  free(in);
}
END_TEST

/* pointwise on a CPU device: a dense fusion in 1024-element chunks (the
 * last one shorter), a broadcast one a row of the innermost axis per
 * work-item, each loop with clang's 16-lane vectorization hint (the corpus
 * case `chunks` checks their results) */
START_TEST(pointwise_chunks_and_rows_on_a_cpu) {
  char *in = case_inputs("chunks", 2);
  char *out = explain("", "tests/corpus/cases/chunks/graph.ir", in, "--source");
  ck_assert_msg(strstr(out, "optimized, 2 groups\n") != NULL, "%s", out);
  ck_assert_int_eq(count(out, "pointwise(numel=3000, vec=1, flat index, a chunk per work-item, block=16, groups=1)"), 1);
  ck_assert_int_eq(count(out, "pointwise(numel=3000, vec=1, a row per work-item, block=16, groups=1)"), 1);
  ck_assert_int_eq(count(out, "const int64_t count = 3000 - base < 1024 ? 3000 - base : 1024;"), 1);
  ck_assert_int_eq(count(out, "#pragma clang loop vectorize_width(16)\n"), 2);
  free(out);
  free(in);
}
END_TEST

START_TEST(softmax_one_persistent_kernel_each) {
  char *in = case_inputs("softmax", 1);
  char *out = explain("FUSEBOX_NVF_DISABLE=rows", "tests/corpus/cases/softmax/graph.ir", in, "--source");
  /* softmax(-1), log_softmax(1), softmax(0) of x[4, 5]: one group and one kernel each */
  ck_assert_msg(strstr(out, "optimized, 3 groups\n") != NULL, "%s", out);
  ck_assert_int_eq(count(out, "(aten::softmax) (function 1) for (float32[4, 5]): 1 launch per run"), 2);
  ck_assert_int_eq(count(out, "(aten::log_softmax) (function 1) for (float32[4, 5]): 1 launch per run"), 1);
  ck_assert_int_eq(count(out, "/* ==== nvfuser_like: fusion IR ==== */"), 3);
  /* over the inner dim: persistent, one work-group per row (4 rows of 5);
   * over dim 0: the outer reduction scheduler, a thread per column */
  ck_assert_int_eq(count(out, "/* ==== segment 0: persistent(inner, axes=0x2, rows=4, row=5, block=8, groups=4, phases=3"), 2);
  ck_assert_int_eq(count(out, "/* ==== segment 0: reduction(outer, axes=0x1, rows=5, row=4"), 1);
  ck_assert_int_eq(count(out, "/* ==== segment 1"), 0);
  ck_assert_ptr_nonnull(strstr(out, "reduce_max(T"));
  ck_assert_ptr_nonnull(strstr(out, "__kernel void nvf_k0("));
  ck_assert_ptr_nonnull(strstr(out, "barrier(CLK_LOCAL_MEM_FENCE);"));
  free(out);
  free(in);
}
END_TEST

START_TEST(layer_norm_one_persistent_kernel) {
  char *in = case_inputs("layer_norm", 3);
  char *out = explain("FUSEBOX_NVF_DISABLE=rows", "tests/corpus/cases/layer_norm/graph.ir", in, "--source");
  /* layer_norm over [5] with weight and bias, and over [4, 5] without */
  ck_assert_msg(strstr(out, "optimized, 2 groups\n") != NULL, "%s", out);
  ck_assert_int_eq(count(out, "1 launch per run"), 2);
  ck_assert_int_eq(count(out, "/* ==== segment 0: persistent(inner, axes=0x4, rows=12, row=5, block=8, groups=12, phases=3"), 1);
  ck_assert_int_eq(count(out, "/* ==== segment 0: persistent(inner, axes=0x6, rows=3, row=20, block=32, groups=3, phases=3"), 1);
  ck_assert_int_eq(count(out, "/* ==== segment 1"), 0);
  free(out);
  free(in);
}
END_TEST

/* Under autodiff the normalized-shape list is also saved for backward: the
 * host clones constant lists into groups, so layer_norm is still fused in
 * the forward graph (it was left out while lists had to join their group).
 * A lone layer_norm stays on the eager tape now (its backward is one row
 * kernel), so the graph gives it a pointwise epilogue: one region, whose
 * forward and backward are each one group. */
START_TEST(layer_norm_fused_under_autodiff) {
  char *in = case_inputs("layer_norm", 3);
  char *out = explain("", "tests/data/nvf/layer_norm_epilogue.ir", in, "--backward");
  ck_assert_int_eq(count(out, "optimized, 0 groups"), 0);
  ck_assert_msg(count(out, "## forward (executor with fuser nvfuser_like):\n# function 1 (level 0, static, fuser "
                           "nvfuser_like): the graph: optimized, 1 group\n") == 1, "%s", out);
  ck_assert_msg(count(out, "aten::layer_norm") >= 2, "%s", out); /* in the region and in its forward group */
  free(out);
  free(in);
}
END_TEST

START_TEST(ratio_iou_one_pointwise_kernel) {
  char *in = case_inputs("ratio_iou", 8);
  char *out = explain("", "examples/ratio_iou.ir", in, "--source");
  ck_assert_msg(strstr(out, "optimized, 1 group\n") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "1 launch per run") != NULL, "%s", out);
  ck_assert_int_eq(count(out, "/* ==== segment 0: pointwise(numel=1000, vec=4, flat index"), 1);
  ck_assert_int_eq(count(out, "/* ==== segment 1"), 0);
  ck_assert_ptr_nonnull(strstr(out, "nodes outside fusion groups in function 1 (the graph)\n#   (none)"));
  free(out);
  free(in);
}
END_TEST

START_TEST(plugins_names_the_device) {
  char *out = NULL, cmd[1024];
  snprintf(cmd, sizeof cmd, "FUSEBOX_NVF_TARGET=opencl %s plugins 2>&1", FBX_CLI);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ck_assert_msg(strstr(out, "nvfuser_like") && strstr(out, "target OpenCL: "), "%s", out);
  free(out);
}
END_TEST

START_TEST(bad_env_is_named) {
  char *in = case_inputs("softmax", 1);
  char *out = explain("FUSEBOX_NVF_TARGET=metal FUSEBOX_NVF_DISABLE=persistent,rows,fuse",
                      "tests/corpus/cases/softmax/graph.ir", in, "--source");
  ck_assert_ptr_nonnull(strstr(out, "FUSEBOX_NVF_DISABLE='persistent,rows,fuse' names an unknown switch"));
  ck_assert_ptr_nonnull(strstr(out, "FUSEBOX_NVF_TARGET='metal' is neither 'opencl' nor 'cuda'"));
  /* persistent off: the reduction scheduler recomputes the row instead */
  ck_assert_int_eq(count(out, "persistent(inner"), 0);
  ck_assert_int_eq(count(out, "/* ==== segment 0: reduction(inner, axes=0x2, rows=4, row=5"), 2);
  free(out);
  free(in);
}
END_TEST

int main(void) {
  Suite *s = suite_create("nvf_cli");
  TCase *tc = tcase_create("cli");
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, plugin_check_passes);
  tcase_add_test(tc, softmax_row_per_work_item_on_a_cpu);
  tcase_add_test(tc, softmax_rows_in_lanes);
  tcase_add_test(tc, pointwise_chunks_and_rows_on_a_cpu);
  tcase_add_test(tc, softmax_one_persistent_kernel_each);
  tcase_add_test(tc, layer_norm_one_persistent_kernel);
  tcase_add_test(tc, ratio_iou_one_pointwise_kernel);
  tcase_add_test(tc, layer_norm_fused_under_autodiff);
  tcase_add_test(tc, plugins_names_the_device);
  tcase_add_test(tc, bad_env_is_named);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
