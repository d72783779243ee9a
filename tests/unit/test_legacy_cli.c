/* The legacy fuser through the `fusebox` command, as a user runs it:
 * `fusebox plugin-check legacy` passes, and `fusebox explain` shows the
 * groups PyTorch's fuser would make: ratio-IoU as one group of all its 20
 * pointwise ops, the LSTM cell's gate math as one group with the chunk, and
 * two groups around a reduction. --source shows the C (its target line,
 * ranged loop, restrict) and the CUDA C (grid-stride loop, float4 path) of a
 * kernel; the disk cache keeps kernels per target CPU. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/hostimpl.h"
#include "testutil.h"

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s ? strstr(s, what) : NULL; p; p = strstr(p + 1, what)) n++;
  return n;
}

/* The text of the `with fusebox::FusionGroup_<k> = graph(...)` section. */
static char *group_section(const char *out, int k) {
  char head[64];
  snprintf(head, sizeof head, "with fusebox::FusionGroup_%d = ", k);
  const char *p = strstr(out, head);
  if (!p) return NULL;
  const char *end = strstr(p, "\n\n");
  const char *next = strstr(p + 1, "\nwith fusebox::FusionGroup_");
  if (next && (!end || next < end)) end = next;
  size_t n = end ? (size_t)(end - p) : strlen(p);
  char *s = malloc(n + 1);
  memcpy(s, p, n);
  s[n] = 0;
  return s;
}

static char *explain(const char *env, const char *graph, const char *inputs) {
  char cmd[8192], *out = NULL;
  int k = snprintf(cmd, sizeof cmd, "%s %s explain %s --fuser legacy %s 2>&1", env, FBX_CLI, tu_src_path(graph), inputs);
  ck_assert_msg(k > 0 && (size_t)k < sizeof cmd, "command line too long");
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "explain failed (%d):\n%s", rc, out ? out : "");
  return out;
}

/* " --input <case dir>/in0.npy ..." for a corpus case's n inputs */
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
  snprintf(cmd, sizeof cmd, "%s plugin-check legacy --corpus %s 2>&1", FBX_CLI, tu_src_path("tests/corpus/cases"));
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "plugin-check legacy failed (%d):\n%s", rc, out ? out : "");
  ck_assert_msg(strstr(out, " 0 failed"), "%s", out);
  ck_assert_int_eq(count(out, "FAIL"), 0);
  free(out);
}
END_TEST

START_TEST(ratio_iou_is_one_group) {
  char *in = case_inputs("ratio_iou", 8);
  /* without CSE the graph keeps its 20 pointwise ops (CSE merges the two
   * wi * hi products into one) */
  char *out = explain("FUSEBOX_DISABLE_PASSES=cse", "examples/ratio_iou.ir", in);
  ck_assert_msg(strstr(out, "optimized, 1 group\n"), "%s", out);
  char *g = group_section(out, 0);
  ck_assert_msg(g, "%s", out);
  ck_assert_int_eq(count(g, " = aten::"), 20);
  ck_assert_msg(!group_section(out, 1), "a second group:\n%s", out);
  ck_assert_msg(strstr(out, "# nodes outside fusion groups in function 1 (the graph)\n#   (none)"), "%s", out);
  free(g);
  free(out);
  /* with the default passes: still every op in the one group */
  out = explain("", "examples/ratio_iou.ir", in);
  g = group_section(out, 0);
  ck_assert_msg(g && count(g, " = aten::") == 19, "%s", out);
  ck_assert_msg(strstr(out, "#   (none)"), "%s", out);
  free(g);
  free(out);
  free(in);
}
END_TEST

START_TEST(lstm_gates_are_one_group_with_the_chunk) {
  char *in = case_inputs("lstm_cell", 7);
  char *out = explain("", "tests/corpus/cases/lstm_cell/graph.ir", in);
  ck_assert_msg(strstr(out, "optimized, 1 group\n"), "%s", out);
  char *g = group_section(out, 0);
  ck_assert_msg(g, "%s", out);
  ck_assert_int_eq(count(g, "= aten::chunk("), 1);
  ck_assert_int_eq(count(g, "= prim::ListUnpack("), 1);
  ck_assert_int_eq(count(g, "= aten::sigmoid("), 3);
  ck_assert_int_eq(count(g, "= aten::tanh("), 2);
  ck_assert_int_eq(count(g, "= aten::mul("), 3);
  /* the bias adds feeding the chunk were pulled in too; only the matmuls,
   * transposes and the tuple stay outside */
  ck_assert_int_eq(count(g, "= aten::add("), 4);
  const char *outside = strstr(out, "# nodes outside fusion groups");
  ck_assert(outside);
  ck_assert_int_eq(count(outside, "\n#   %"), 5);
  ck_assert_int_eq(count(outside, "aten::matmul"), 2);
  free(g);
  free(out);
  free(in);
}
END_TEST

static const char *reduction_ir =
    "graph(%x : Float(4, 8), %y : Float(4, 8)):\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %true : bool = prim::Constant[value=1]()\n"
    "  %none : NoneType = prim::Constant()\n"
    "  %a : Tensor = aten::mul(%x, %y)\n"
    "  %b : Tensor = aten::relu(%a)\n"
    "  %dims : int[] = prim::ListConstruct(%one)\n"
    "  %s : Tensor = aten::sum(%b, %dims, %true, %none)\n"
    "  %e : Tensor = aten::sub(%x, %s, %one)\n"
    "  %f : Tensor = aten::exp(%e)\n"
    "  return (%f)\n";

/* `explain` of an IR text (written to a temporary file) with --random inputs. */
static char *explain_ir(const char *env, const char *ir, const char *opts) {
  char path[] = "/tmp/fbx_legacy_ir_XXXXXX";
  int fd = mkstemp(path);
  ck_assert(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fputs(ir, f);
  fclose(f);
  char cmd[4096], *out = NULL;
  snprintf(cmd, sizeof cmd, "%s %s explain %s --fuser legacy --random %s 2>&1", env, FBX_CLI, path, opts);
  int rc = tu_run(cmd, &out);
  remove(path);
  ck_assert_msg(rc == 0, "explain failed (%d):\n%s", rc, out ? out : "");
  return out;
}

START_TEST(reduction_splits_two_groups) {
  char *out = explain_ir("", reduction_ir, "");
  ck_assert_msg(strstr(out, "optimized, 2 groups\n"), "%s", out);
  char *g0 = group_section(out, 0), *g1 = group_section(out, 1);
  ck_assert_msg(g0 && g1, "%s", out);
  ck_assert_int_eq(count(g0, "aten::sum") + count(g1, "aten::sum"), 0);
  ck_assert_int_eq(count(g0, " = aten::") + count(g1, " = aten::"), 4);
  /* mul+relu before the reduction, sub+exp after it */
  ck_assert_int_eq(count(g0, "aten::mul") + count(g1, "aten::mul"), 1);
  ck_assert_int_eq(count(g0, "aten::exp") + count(g1, "aten::exp"), 1);
  ck_assert_msg((strstr(g0, "aten::mul") && strstr(g0, "aten::relu")) || (strstr(g1, "aten::mul") && strstr(g1, "aten::relu")),
                "%s", out);
  ck_assert_msg(strstr(out, "aten::sum(%") && strstr(out, "-- not proposed by legacy"), "%s", out);
  free(g0);
  free(g1);
  free(out);
}
END_TEST

/* %m = y * 2 is also an output (as a forward graph saves it for backward),
 * but smaller than the where's iteration space: the kernel could not write
 * it, so legacy must not propose it with the where (it used to, and its
 * compile failed: "an output's rank differs from the kernel's"). A size-1
 * dim of the same rank is smaller too (the run would decline every time). */
static const char *smaller_output_ir =
    "graph(%x : Float(3, 5), %y : Float(%YSHAPE%)):\n"
    "  %zero : float = prim::Constant[value=0.]()\n"
    "  %two : float = prim::Constant[value=2.]()\n"
    "  %c : Tensor = aten::gt(%x, %zero)\n"
    "  %m : Tensor = aten::mul(%y, %two)\n"
    "  %w : Tensor = aten::where(%c, %x, %m)\n"
    "  %e : Tensor = aten::exp(%w)\n"
    "  %t : (Tensor, Tensor) = prim::TupleConstruct(%e, %m)\n"
    "  return (%t)\n";

START_TEST(smaller_output_is_not_proposed) {
  const char *yshapes[] = {"5", "1, 5", "3, 5"};
  for (int k = 0; k < 3; k++) {
    char ir[1024];
    const char *at = strstr(smaller_output_ir, "%YSHAPE%");
    snprintf(ir, sizeof ir, "%.*s%s%s", (int)(at - smaller_output_ir), smaller_output_ir, yshapes[k], at + 8);
    char *out = explain_ir("FUSEBOX_LOG=fusion,exec", ir, "");
    char *g0 = group_section(out, 0);
    ck_assert_msg(g0 && strstr(out, "optimized, 1 group\n"), "%s", out);
    ck_assert_msg(strstr(g0, "aten::gt") && strstr(g0, "aten::where") && strstr(g0, "aten::exp"), "%s", out);
    /* y of the full shape: the mul joins; smaller: it stays outside */
    ck_assert_int_eq(count(g0, "aten::mul"), k == 2);
    ck_assert_msg(!strstr(out, "failed to compile") && !strstr(out, "declined") && !strstr(out, "warning"), "%s", out);
    free(g0);
    free(out);
  }
}
END_TEST

START_TEST(source_shows_both_dialects) {
  char *in = case_inputs("ratio_iou", 8);
  char opts[9000];
  snprintf(opts, sizeof opts, "%s --source", in);
  char *out = explain("", "examples/ratio_iou.ir", opts);
  ck_assert_msg(strstr(out, "/* target: -march=native, "), "no target line:\n%s", out);
  /* the CPU named by the host's 1.1 query, not by the plugin's own cpuid */
  char target[600];
  snprintf(target, sizeof target, "/* target: -march=native, %s; parallel: ", fbx_host_cpu_features());
  ck_assert_msg(strstr(out, target), "expected '%s' in:\n%s", target, out);
  ck_assert_msg(strstr(out, "for (int64_t i = begin; i < end; i++)"), "no ranged flat loop:\n%s", out);
  ck_assert_msg(strstr(out, "*restrict a0"), "%s", out);
  ck_assert_msg(strstr(out, "extern \"C\" __global__ void lf_kernel"), "%s", out);
  ck_assert_msg(strstr(out, "q += step"), "no grid-stride loop:\n%s", out);
  ck_assert_msg(strstr(out, "float4"), "no float4 path:\n%s", out);
  free(out);
  free(in);
}
END_TEST

/* `explain --source` of ratio-IoU (one kernel) run with env. */
static char *c_source(const char *env);

/* Nothing from the environment reaches the generated C unescaped: a
 * FUSEBOX_LEGACY_CPU_ID or FUSEBOX_LEGACY_MARCH that would close the target
 * comment is refused with a warning naming it, and the kernel still runs. */
START_TEST(environment_cannot_inject_code) {
  const char *envs[] = {"FUSEBOX_LEGACY_CPU_ID='*/ int fbx_injected; /*'",
                        "FUSEBOX_LEGACY_MARCH='native*/ int fbx_injected; /*'"};
  for (int i = 0; i < 2; i++) {
    char *out = c_source(envs[i]);
    const char *t = strstr(out, "/* target:");
    ck_assert_msg(!strstr(out, "fbx_injected"), "%s reached the source: %.*s", envs[i],
                  t ? (int)strcspn(t, "\n") : 0, t ? t : "");
    ck_assert_msg(strstr(out, "/* target: -march=native, x86") || strstr(out, "/* target: -march=native, unknown"),
                  "%s: no default target line:\n%s", envs[i], out);
    char var[40];
    snprintf(var, sizeof var, "ignoring %.*s", (int)strcspn(envs[i], "="), envs[i]);
    ck_assert_msg(strstr(out, "warning: ") && strstr(out, var), "%s: no warning:\n%s", envs[i], out);
    free(out);
  }
}
END_TEST

static char *c_source(const char *env) {
  char *in = case_inputs("ratio_iou", 8);
  char opts[9000];
  snprintf(opts, sizeof opts, "%s --source", in);
  char *out = explain(env, "examples/ratio_iou.ir", opts);
  free(in);
  ck_assert_msg(strstr(out, "==== CUDA C for NVRTC"), "no CUDA part:\n%s", out);
  return out;
}

/* FUSEBOX_LEGACY_PARALLEL: omp (the default) puts an OpenMP `parallel for` on
 * the flat and the strided loops of the C, pool none; both modes mark the flat
 * and the strided inner loop `omp simd` (the CUDA C never has a pragma); any
 * other value warns and keeps omp. */
START_TEST(parallel_mode_in_source) {
  const char *envs[] = {"", "FUSEBOX_LEGACY_PARALLEL=omp", "FUSEBOX_LEGACY_PARALLEL=pool",
                        "FUSEBOX_LEGACY_PARALLEL=threads"};
  for (int i = 0; i < 4; i++) {
    char *out = c_source(envs[i]);
    int pool = i == 2, bad = i == 3;
    ck_assert_int_eq(count(out, "#pragma omp parallel for simd if (end - begin >= par_min) num_threads(nt)"), !pool);
    ck_assert_int_eq(count(out, "#pragma omp parallel for if ((end - begin) * inner >= par_min) num_threads(nt)"),
                     !pool);
    ck_assert_int_eq(count(out, "#pragma omp parallel"), pool ? 0 : 2);
    ck_assert_int_eq(count(out, "#pragma omp simd\n"), pool ? 2 : 1);
    ck_assert_msg(strstr(out, pool ? "; parallel: pool */" : "; parallel: omp */"), "%s: mode not in the target line:\n%s",
                  envs[i], out);
    const char *warn = strstr(out, "FUSEBOX_LEGACY_PARALLEL='threads' is neither 'omp' nor 'pool'; using omp");
    ck_assert_msg(bad ? warn != NULL : warn == NULL, "%s:\n%s", envs[i], out);
    free(out);
  }
}
END_TEST

/* disk_cache_hits of `fusebox bench` (ratio-IoU, 4096 elements) run with
 * env and the cache directory dir */
static int disk_hits(const char *env, const char *dir) {
  char cmd[4096], json[1024], *out = NULL;
  snprintf(json, sizeof json, "%s/bench.json", dir);
  int k = snprintf(cmd, sizeof cmd,
                   "%s FUSEBOX_CACHE_DIR=%s %s bench %s --random --shape 4096 --fusers legacy --iters 1 --json %s 2>&1",
                   env, dir, FBX_CLI, tu_src_path("examples/ratio_iou.ir"), json);
  ck_assert_msg(k > 0 && (size_t)k < sizeof cmd, "command line too long");
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "%s\n%s", cmd, out);
  free(out);
  char *j = tu_read_file(json, NULL);
  ck_assert_msg(j, "no %s", json);
  const char *p = strstr(j, "\"disk_cache_hits\": ");
  ck_assert_msg(p && strstr(j, "\"kernels_compiled\": 1,"), "%s", j);
  int hits = atoi(p + strlen("\"disk_cache_hits\": "));
  free(j);
  return hits;
}

/* Kernels are compiled with -march=native; the CPU is named in the source
 * the disk cache hashes, so another CPU (or another -march, or the other
 * parallel mode) never loads a
 * kernel from the same FUSEBOX_CACHE_DIR, while the same one does. */
START_TEST(disk_cache_is_per_target) {
  char dir[] = "/tmp/fbx_legacy_target.XXXXXX";
  ck_assert(mkdtemp(dir));
  ck_assert_int_eq(disk_hits("", dir), 0);
  ck_assert_int_eq(disk_hits("", dir), 1);
  ck_assert_int_eq(disk_hits("FUSEBOX_LEGACY_CPU_ID=another-cpu", dir), 0);
  ck_assert_int_eq(disk_hits("FUSEBOX_LEGACY_CPU_ID=another-cpu", dir), 1);
  ck_assert_int_eq(disk_hits("FUSEBOX_LEGACY_MARCH=none", dir), 0);
  /* the parallel mode is in the source too */
  ck_assert_int_eq(disk_hits("FUSEBOX_LEGACY_PARALLEL=pool", dir), 0);
  ck_assert_int_eq(disk_hits("FUSEBOX_LEGACY_PARALLEL=pool", dir), 1);
  ck_assert_int_eq(disk_hits("", dir), 1);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  ck_assert_int_eq(system(cmd), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("legacy_cli");
  TCase *tc = tcase_create("cli");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, plugin_check_passes);
  tcase_add_test(tc, ratio_iou_is_one_group);
  tcase_add_test(tc, lstm_gates_are_one_group_with_the_chunk);
  tcase_add_test(tc, reduction_splits_two_groups);
  tcase_add_test(tc, smaller_output_is_not_proposed);
  tcase_add_test(tc, source_shows_both_dialects);
  tcase_add_test(tc, parallel_mode_in_source);
  tcase_add_test(tc, disk_cache_is_per_target);
  tcase_add_test(tc, environment_cannot_inject_code);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
