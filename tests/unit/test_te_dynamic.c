/* tensorexpr's dynamic shapes (issue 14.5, dynamic.c): under a dynamic
 * level of the fusion strategy the host passes symbolic sizes and one
 * compiled kernel serves every size of the pattern, its sizes passed as
 * kernel arguments.
 *
 *   - C backend and eval backend, each: a pointwise chain, a row softmax, a
 *     mean over the last dim (the count is a size), a broadcast add of
 *     [s0, s1] and [1, s1] (the size-1 dim stays concrete), each run on
 *     three shapes after one profiling run: exactly one compile (the fuser's
 *     stats), three kernel runs, results equal to the reference interpreter;
 *   - the cuda backend without a driver: the same (its CUDA C takes the
 *     sizes as arguments and is checked by NVRTC; the C kernel runs);
 *   - a group whose kernel cannot serve every size (cat: its pieces'
 *     offsets are sums of sizes) is refused with the reason and runs in the
 *     interpreter, right;
 *   - FUSEBOX_TE_DYNAMIC=0: the plugin takes concrete sizes only (one
 *     compile per shape).
 * The backend is read when the plugin is loaded: each test runs in its own
 * process (Check's fork mode) and sets its environment first. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "exec/executor.h"
#include "exec/interp.h"
#include "host/host.h"
#include "ir/text.h"
#include "testutil.h"

static const char *CHAIN = "graph(%x : Tensor, %y : Tensor):\n"
                           "  %one : int = prim::Constant[value=1]()\n"
                           "  %two : float = prim::Constant[value=2.]()\n"
                           "  %a : Tensor = aten::relu(%x)\n"
                           "  %b : Tensor = aten::mul(%a, %two)\n"
                           "  %c : Tensor = aten::add(%b, %y, %one)\n"
                           "  return (%c)\n";
static const char *SOFTMAX = "graph(%x : Tensor, %y : Tensor):\n"
                             "  %d : int = prim::Constant[value=-1]()\n"
                             "  %n : NoneType = prim::Constant()\n"
                             "  %s : Tensor = aten::softmax(%x, %d, %n)\n"
                             "  %one : int = prim::Constant[value=1]()\n"
                             "  %r : Tensor = aten::add(%s, %y, %one)\n"
                             "  return (%r)\n";
static const char *MEAN = "graph(%x : Tensor, %y : Tensor):\n"
                          "  %d : int = prim::Constant[value=-1]()\n"
                          "  %dims : int[] = prim::ListConstruct(%d)\n"
                          "  %k : bool = prim::Constant[value=1]()\n"
                          "  %n : NoneType = prim::Constant()\n"
                          "  %e : Tensor = aten::exp(%x)\n"
                          "  %m : Tensor = aten::mean(%e, %dims, %k, %n)\n"
                          "  %one : int = prim::Constant[value=1]()\n"
                          "  %r : Tensor = aten::sub(%x, %m, %one)\n"
                          "  %t : Tensor = aten::mul(%r, %y)\n"
                          "  return (%t)\n";
/* y is [1, s1]: broadcast over rows */
static const char *BCAST = "graph(%x : Tensor, %y : Tensor):\n"
                           "  %one : int = prim::Constant[value=1]()\n"
                           "  %a : Tensor = aten::tanh(%x)\n"
                           "  %b : Tensor = aten::add(%a, %y, %one)\n"
                           "  %c : Tensor = aten::mul(%b, %x)\n"
                           "  return (%c)\n";
static const char *CAT = "graph(%x : Tensor, %y : Tensor):\n"
                         "  %a : Tensor = aten::sigmoid(%x)\n"
                         "  %b : Tensor = aten::tanh(%y)\n"
                         "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n"
                         "  %z : int = prim::Constant[value=0]()\n"
                         "  %c : Tensor = aten::cat(%l, %z)\n"
                         "  %e : Tensor = aten::exp(%c)\n"
                         "  return (%e)\n";

static fbx_tensor *tensor(int64_t r, int64_t c, int seed) {
  int64_t sizes[2] = {r, c};
  fbx_tensor *t = NULL;
  ck_assert(!fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 2, sizes));
  for (int64_t i = 0; i < t->numel; i++) ((float *)t->data)[i] = (float)((i * 7 + seed * 5) % 19) * 0.25f - 2.0f;
  return t;
}

typedef struct {
  int64_t compiles, kernel_runs, unsupported;
} result;

/* Runs text on x [r_i, c_i] and y ([1, c_i] when y_row, else [r_i, c_i])
 * for the shapes (the first twice: it is profiled), each against the
 * interpreter, under strategy `dynamic:1`. */
static result run_shapes(const char *text, const int64_t (*shapes)[2], int nshapes, int y_row) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "parse: %s", fbx_status_message(st));
  fbx_fuser *f = NULL;
  st = fbx_fuser_load(&f, "tensorexpr");
  ck_assert_msg(!st, "load: %s", fbx_status_message(st));
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser_handle = f, .strategy = "dynamic:1", .profiling_runs = 1};
  fbx_executor *ex = NULL;
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "create: %s", fbx_status_message(st));
  fbx_interp *it = NULL;
  ck_assert(!fbx_interp_create(&it, g));
  for (int r = -1; r < nshapes; r++) {
    const int64_t *sh = shapes[r < 0 ? 0 : r];
    fbx_ivalue in[2] = {fbx_iv_tensor(tensor(sh[0], sh[1], r + 2)), fbx_iv_tensor(tensor(y_row ? 1 : sh[0], sh[1], r + 7))};
    fbx_ivalue want[1], got[1];
    st = fbx_interp_run(it, in, 2, want, NULL);
    ck_assert_msg(!st, "interp: %s", fbx_status_message(st));
    st = fbx_executor_run_values(ex, in, 2, got, 1, 0);
    ck_assert_msg(!st, "run: %s", fbx_status_message(st));
    ck_assert(fbx_tensor_same_shape(want[0].u.t, got[0].u.t));
    for (int64_t i = 0; i < want[0].u.t->numel; i++) {
      double a = fbx_tensor_get_f64(want[0].u.t, i), b = fbx_tensor_get_f64(got[0].u.t, i);
      ck_assert_msg(fabs(a - b) <= 1e-6 + 1e-5 * fabs(a), "shape [%lld, %lld], element %lld: %g, interpreter %g",
                    (long long)sh[0], (long long)sh[1], (long long)i, b, a);
    }
    for (int i = 0; i < 2; i++) fbx_iv_release(&in[i]);
    fbx_iv_release(&want[0]);
    fbx_iv_release(&got[0]);
  }
  fbx_fuser_stats fs;
  fbx_fuser_get_stats(f, &fs);
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  result res = {fs.compiles, s.kernel_runs, s.compile_unsupported};
  fbx_interp_destroy(it);
  fbx_executor_destroy(ex);
  fbx_fuser_release(f);
  fbx_graph_destroy(g);
  return res;
}

static const int64_t SHAPES[3][2] = {{3, 5}, {17, 130}, {64, 33}};

static void one_kernel_for_all_sizes(const char *backend) {
  setenv("FUSEBOX_TE_BACKEND", backend, 1);
  unsetenv("FUSEBOX_TE_DYNAMIC");
  const char *graphs[] = {CHAIN, SOFTMAX, MEAN, BCAST};
  const char *names[] = {"chain", "softmax", "mean", "broadcast"};
  for (int i = 0; i < 4; i++) {
    result r = run_shapes(graphs[i], SHAPES, 3, i == 3);
    printf("%s, %s: %lld compiles, %lld kernel runs\n", backend, names[i], (long long)r.compiles,
           (long long)r.kernel_runs);
    ck_assert_msg(r.compiles == 1 && r.kernel_runs == 3, "%s, %s: %lld compiles, %lld kernel runs", backend,
                  names[i], (long long)r.compiles, (long long)r.kernel_runs);
  }
}

START_TEST(c_backend_one_kernel_for_three_sizes) { one_kernel_for_all_sizes("c"); }
END_TEST

START_TEST(eval_backend_one_kernel_for_three_sizes) { one_kernel_for_all_sizes("eval"); }
END_TEST

/* cuda without a driver: the CUDA C (sizes as arguments) is checked by
 * NVRTC and the generic C kernel runs on the CPU */
START_TEST(cuda_backend_without_driver_one_kernel_for_three_sizes) {
  setenv("FUSEBOX_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  one_kernel_for_all_sizes("cuda");
}
END_TEST

START_TEST(cat_is_refused_and_runs_right) {
  setenv("FUSEBOX_TE_BACKEND", "c", 1);
  unsetenv("FUSEBOX_TE_DYNAMIC");
  result r = run_shapes(CAT, SHAPES, 3, 0);
  ck_assert_int_eq(r.kernel_runs, 0);
  ck_assert_int_ge(r.unsupported, 1);
}
END_TEST

START_TEST(dynamic_off_compiles_per_size) {
  setenv("FUSEBOX_TE_BACKEND", "c", 1);
  setenv("FUSEBOX_TE_DYNAMIC", "0", 1);
  result r = run_shapes(CHAIN, SHAPES, 3, 0);
  ck_assert_int_eq(r.compiles, 3);
  ck_assert_int_eq(r.kernel_runs, 3);
}
END_TEST

int main(void) {
  Suite *s = suite_create("te_dynamic");
  TCase *tc = tcase_create("dynamic");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, c_backend_one_kernel_for_three_sizes);
  tcase_add_test(tc, eval_backend_one_kernel_for_three_sizes);
  tcase_add_test(tc, cuda_backend_without_driver_one_kernel_for_three_sizes);
  tcase_add_test(tc, cat_is_refused_and_runs_right);
  tcase_add_test(tc, dynamic_off_compiles_per_size);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
