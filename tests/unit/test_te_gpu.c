/* tensorexpr's cuda backend on its GPU runtime (the kit's CUDA driver
 * module, kit_cuda.h), against the stand-in driver tests/unit/nvf_fake_cuda.c
 * (FUSEBOX_LIBCUDA), so the whole path runs on a machine without a GPU:
 *
 *   - a pointwise chain [37, 300] compiles to one grid-stride kernel: the
 *     module is loaded, te_kernel_0 is launched with ceil(n / 256) blocks of
 *     256 threads, the input pointer and the output pointer as the CUDA C
 *     declares them; the fake carries the kernel out in C (this file's
 *     callback, the chain's math written here) and the copied-back output
 *     equals the reference interpreter's; device memory is freed after every
 *     run and contexts are pushed and popped in pairs;
 *   - a row softmax [5, 70] is one kernel of one block per row (5 blocks);
 *   - dynamic shapes: under strategy dynamic:1 one module serves three
 *     shapes, each launch's grid computed from that run's sizes;
 *   - a fault reported by the driver (FAKE_CUDA_MODE=sync_fail) fails the run
 *     with the driver's error: the host counts a failed run and the group
 *     runs in the interpreter, with the right result;
 *   - no driver (FUSEBOX_LIBCUDA names no file): the backend falls back to
 *     C kernels on the CPU (explain's text says "no GPU runtime") and the
 *     results are right.
 * The open probes NVRTC: without libnvrtc the GPU cases are skipped (with a
 * message). The backend and driver are read when the plugin is loaded and
 * first compiles: each test runs in its own process (Check's fork mode). */
#include <check.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "exec/execimpl.h"
#include "exec/executor.h"
#include "exec/interp.h"
#include "host/host.h"
#include "host/hostimpl.h"
#include "host/services.h"
#include "ir/text.h"
#include "testutil.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;
typedef struct {
  long live_allocs, ctx_depth, ctx_retained, modules, launches, last_shared, max_dyn_shared_set, total_allocs;
} fake_counters;
typedef CUresult (*fake_kernel_fn)(const char *name, unsigned gx, unsigned bx, unsigned shared, void **params);

/* what the callback saw and does */
static enum { K_CHAIN, K_SOFTMAX } kind;
static int64_t rows, cols;
static unsigned seen_grid, seen_block;
static long seen_launches;

#define PTR(i, T) ((T *)(uintptr_t)(*(CUdeviceptr *)params[i]))

/* The kernels' math, written here; the threads of the grid are walked as
 * the CUDA C's loops would (grid-stride over elements, block-stride over
 * rows), so a grid that does not cover the work leaves outputs unwritten. */
static CUresult run_kernel(const char *name, unsigned gx, unsigned bx, unsigned shared, void **params) {
  (void)shared;
  seen_grid = gx;
  seen_block = bx;
  seen_launches++;
  if (strcmp(name, "te_kernel_0")) return 1;
  const float *x = PTR(0, const float);
  float *y = PTR(1, float);
  if (kind == K_CHAIN) {
    int64_t n = rows * cols;
    for (int64_t t = 0; t < (int64_t)gx * bx; t++)
      for (int64_t i = t; i < n; i += (int64_t)gx * bx) y[i] = (x[i] > 0 ? x[i] : 0) * 2.0f + x[i];
    return 0;
  }
  for (int64_t b = 0; b < gx; b++)
    for (int64_t r = b; r < rows; r += gx) {
      double m = -INFINITY, s = 0;
      for (int64_t c = 0; c < cols; c++) m = fmax(m, x[r * cols + c]);
      for (int64_t c = 0; c < cols; c++) s += exp((double)x[r * cols + c] - m);
      for (int64_t c = 0; c < cols; c++) y[r * cols + c] = (float)(exp((double)x[r * cols + c] - m) / s);
    }
  return 0;
}

static void *fake_lib(void) {
  void *lib = dlopen(FBX_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL); /* the handle the plugin's kit has */
  ck_assert_ptr_nonnull(lib);
  return lib;
}

static fake_counters *fake(void) {
  void *lib = fake_lib();
  fake_counters *(*get)(void);
  *(void **)&get = dlsym(lib, "fake_cuda_counters");
  ck_assert_ptr_nonnull(get);
  return get();
}

static void setup_fake(const char *mode) {
  setenv("FUSEBOX_TE_BACKEND", "cuda", 1);
  setenv("FUSEBOX_LIBCUDA", FBX_FAKE_LIBCUDA, 1);
  if (mode) setenv("FAKE_CUDA_MODE", mode, 1);
  else unsetenv("FAKE_CUDA_MODE");
  void *lib = fake_lib();
  void (*set)(fake_kernel_fn);
  *(void **)&set = dlsym(lib, "fake_cuda_set_kernel");
  ck_assert_ptr_nonnull(set);
  set(run_kernel);
}

static int nvrtc_present(const char *test) {
  char *ptx = NULL, *log = NULL;
  fbxp_status *st = fbx_svc_nvrtc_compile("extern \"C\" __global__ void k(void) {}\n", "probe.cu", NULL, &ptx, &log);
  int ok = !st;
  if (st) {
    printf("%s: skipped: %s\n", test, st->msg);
    fbx_host_drop_status(st);
  }
  fbx_free(ptx);
  fbx_free(log);
  return ok;
}

static const char *CHAIN = "graph(%x : Tensor):\n"
                           "  %one : int = prim::Constant[value=1]()\n"
                           "  %two : float = prim::Constant[value=2.]()\n"
                           "  %a : Tensor = aten::relu(%x)\n"
                           "  %b : Tensor = aten::mul(%a, %two)\n"
                           "  %c : Tensor = aten::add(%b, %x, %one)\n"
                           "  return (%c)\n";
static const char *SOFTMAX = "graph(%x : Tensor):\n"
                             "  %d : int = prim::Constant[value=-1]()\n"
                             "  %n : NoneType = prim::Constant()\n"
                             "  %y : Tensor = aten::softmax(%x, %d, %n)\n"
                             "  return (%y)\n";

/* Runs g three times on x [r, c] under tensorexpr (profiling 1: the second
 * run compiles), each against the interpreter; returns the executor (the
 * caller reads its stats and kernels, then destroys it). */
static fbx_executor *run3(const char *text, int64_t r, int64_t c, fbx_graph **gout) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, text, strlen(text), "test.ir");
  ck_assert_msg(!st, "parse: %s", fbx_status_message(st));
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "tensorexpr", .profiling_runs = 1};
  fbx_executor *ex = NULL;
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "create: %s", fbx_status_message(st));
  fbx_interp *it = NULL;
  ck_assert(!fbx_interp_create(&it, g));
  int64_t sizes[2] = {r, c};
  for (int run = 0; run < 3; run++) {
    fbx_tensor *t = NULL;
    ck_assert(!fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 2, sizes));
    for (int64_t i = 0; i < t->numel; i++) ((float *)t->data)[i] = (float)((i * 7 + run) % 23) * 0.25f - 2.5f;
    fbx_ivalue in[1] = {fbx_iv_tensor(t)}, want[1], got[1];
    st = fbx_interp_run(it, in, 1, want, NULL);
    ck_assert_msg(!st, "interp: %s", fbx_status_message(st));
    st = fbx_executor_run_values(ex, in, 1, got, 1, 0);
    ck_assert_msg(!st, "run: %s", fbx_status_message(st));
    ck_assert(fbx_tensor_same_shape(want[0].u.t, got[0].u.t));
    for (int64_t i = 0; i < t->numel; i++) {
      double a = fbx_tensor_get_f64(want[0].u.t, i), b = fbx_tensor_get_f64(got[0].u.t, i);
      ck_assert_msg(fabs(a - b) <= 1e-6 + 1e-5 * fabs(a), "run %d, element %lld: %g, interpreter %g", run,
                    (long long)i, b, a);
    }
    fbx_iv_release(&want[0]);
    fbx_iv_release(&got[0]);
    fbx_iv_release(&in[0]);
  }
  fbx_interp_destroy(it);
  *gout = g;
  return ex;
}

/* The one compiled kernel's text (explain --source). */
static const char *kernel_text(fbx_executor *ex) {
  const char *text = NULL;
  int n = 0;
  for (fbx_xfn *fn = ex->fns; fn; fn = fn->next)
    for (fbx_xgroup *gr = fn->groups; gr; gr = gr->next)
      for (int k = 0; k < FBX_GROUP_KERNEL_SLOTS; k++) {
        fbx_kentry *e = atomic_load(&gr->kernels[k]);
        if (!e || !e->kernel) continue;
        text = fbx_fkernel_source(e->kernel);
        n++;
      }
  ck_assert_int_eq(n, 1);
  ck_assert_ptr_nonnull(text);
  return text;
}

static fbx_executor_stats stats_of(const fbx_executor *ex) {
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  return s;
}

START_TEST(pointwise_runs_on_the_fake_gpu) {
  if (!nvrtc_present("pointwise_runs_on_the_fake_gpu")) return;
  setup_fake(NULL);
  kind = K_CHAIN;
  rows = 37;
  cols = 300;
  fbx_graph *g = NULL;
  fbx_executor *ex = run3(CHAIN, rows, cols, &g);
  fbx_executor_stats s = stats_of(ex);
  ck_assert_int_eq(s.kernel_runs, 2);
  ck_assert_int_eq(s.fallbacks, 0);
  ck_assert_int_eq(seen_launches, 2);
  ck_assert_uint_eq(seen_grid, (37 * 300 + 255) / 256);
  ck_assert_uint_eq(seen_block, 256);
  const char *text = kernel_text(ex);
  ck_assert_msg(strstr(text, "run on Fake GPU (sm_80), 2 SMs") && strstr(text, "cuda: not compiled, the kernels run on the GPU"),
                "%s", text);
  fake_counters *k = fake();
  ck_assert_int_eq(k->modules, 1);
  /* the second kernel run reused the first one's device blocks (input and
   * output), which stay kept for later runs */
  ck_assert_int_eq(k->total_allocs, 2);
  ck_assert_int_eq(k->live_allocs, 2);
  ck_assert_int_eq(k->ctx_depth, 0);
  ck_assert_int_eq(k->ctx_retained, 1);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
}
END_TEST

/* Dynamic shapes (strategy dynamic:1): one module serves three shapes; each
 * launch's grid is computed from the run's sizes, passed as arguments. */
START_TEST(dynamic_sizes_launch_per_shape) {
  if (!nvrtc_present("dynamic_sizes_launch_per_shape")) return;
  setup_fake(NULL);
  kind = K_CHAIN;
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse(&g, CHAIN, strlen(CHAIN), "test.ir");
  ck_assert(!st);
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "tensorexpr", .strategy = "dynamic:1", .profiling_runs = 1};
  fbx_executor *ex = NULL;
  st = fbx_executor_create(&ex, g, &o);
  ck_assert_msg(!st, "create: %s", fbx_status_message(st));
  fbx_interp *it = NULL;
  ck_assert(!fbx_interp_create(&it, g));
  const int64_t shapes[4][2] = {{37, 300}, {37, 300}, {5, 7}, {300, 1000}};
  for (int r = 0; r < 4; r++) {
    rows = shapes[r][0];
    cols = shapes[r][1];
    fbx_tensor *t = NULL;
    ck_assert(!fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 2, shapes[r]));
    for (int64_t i = 0; i < t->numel; i++) ((float *)t->data)[i] = (float)((i * 7 + r) % 23) * 0.25f - 2.5f;
    fbx_ivalue in[1] = {fbx_iv_tensor(t)}, want[1], got[1];
    ck_assert(!fbx_interp_run(it, in, 1, want, NULL));
    long before = seen_launches;
    st = fbx_executor_run_values(ex, in, 1, got, 1, 0);
    ck_assert_msg(!st, "run: %s", fbx_status_message(st));
    if (r > 0) {
      ck_assert_int_eq(seen_launches, before + 1);
      int64_t blocks = (rows * cols + 255) / 256;
      ck_assert_uint_eq(seen_grid, (unsigned)(blocks > 65535 ? 65535 : blocks));
    }
    for (int64_t i = 0; i < t->numel; i++)
      ck_assert(fbx_tensor_get_f64(want[0].u.t, i) == fbx_tensor_get_f64(got[0].u.t, i));
    fbx_iv_release(&want[0]);
    fbx_iv_release(&got[0]);
    fbx_iv_release(&in[0]);
  }
  fbx_executor_stats s = stats_of(ex);
  ck_assert_int_eq(s.kernel_runs, 3);
  ck_assert_int_eq(s.kernels_compiled, 1);
  ck_assert_int_eq(fake()->modules, 1);
  /* kept blocks: 37x300's pair, then 5x7 (too small to take a block over
   * twice its size) and 300x1000 (larger) each allocate their own pair */
  ck_assert_int_eq(fake()->total_allocs, 6);
  ck_assert_int_eq(fake()->live_allocs, 6);
  fbx_interp_destroy(it);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(row_softmax_is_one_block_per_row) {
  if (!nvrtc_present("row_softmax_is_one_block_per_row")) return;
  setup_fake(NULL);
  kind = K_SOFTMAX;
  rows = 5;
  cols = 70;
  fbx_graph *g = NULL;
  fbx_executor *ex = run3(SOFTMAX, rows, cols, &g);
  fbx_executor_stats s = stats_of(ex);
  ck_assert_int_eq(s.kernel_runs, 2);
  ck_assert_int_eq(s.fallbacks, 0);
  ck_assert_int_eq(seen_launches, 2);
  ck_assert_uint_eq(seen_grid, 5);
  ck_assert_uint_eq(seen_block, 256);
  ck_assert_msg(strstr(kernel_text(ex), "one block per row; launch <<<5, 256>>>"), "%s", kernel_text(ex));
  ck_assert_int_eq(fake()->total_allocs, 2); /* the second run reused the first one's blocks */
  ck_assert_int_eq(fake()->live_allocs, 2);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(a_driver_fault_fails_the_run) {
  if (!nvrtc_present("a_driver_fault_fails_the_run")) return;
  setup_fake("sync_fail");
  kind = K_CHAIN;
  rows = 4;
  cols = 50;
  fbx_graph *g = NULL;
  fbx_executor *ex = run3(CHAIN, rows, cols, &g); /* results right: the interpreter ran the group */
  fbx_executor_stats s = stats_of(ex);
  ck_assert_int_ge(s.fallbacks_run, 1);
  ck_assert_int_eq(s.kernel_runs, 0);
  ck_assert_int_eq(fake()->live_allocs, 0);
  ck_assert_int_eq(fake()->ctx_depth, 0);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
}
END_TEST

START_TEST(no_driver_falls_back_to_the_cpu) {
  setenv("FUSEBOX_TE_BACKEND", "cuda", 1);
  setenv("FUSEBOX_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  fbx_graph *g = NULL;
  fbx_executor *ex = run3(CHAIN, 6, 33, &g);
  fbx_executor_stats s = stats_of(ex);
  ck_assert_int_eq(s.kernel_runs, 2);
  ck_assert_int_eq(s.compile_failures, 0);
  const char *text = kernel_text(ex);
  ck_assert_msg(strstr(text, "cuda: no GPU runtime, what runs on the CPU"), "%s", text);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
}
END_TEST

int main(void) {
  Suite *s = suite_create("te_gpu");
  TCase *tc = tcase_create("te_gpu");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, pointwise_runs_on_the_fake_gpu);
  tcase_add_test(tc, row_softmax_is_one_block_per_row);
  tcase_add_test(tc, dynamic_sizes_launch_per_shape);
  tcase_add_test(tc, a_driver_fault_fails_the_run);
  tcase_add_test(tc, no_driver_falls_back_to_the_cpu);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
