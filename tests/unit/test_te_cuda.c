/* tensorexpr's CUDA backend (FUSEBOX_TE_BACKEND=cuda, codegen_cuda.c).
 *
 *   - the whole corpus (tests/corpus/cases) through the executor with
 *     --fuser tensorexpr and the cuda backend: every kernel tensorexpr
 *     compiles shows its CUDA C, NVRTC compiled it (the kernel's text
 *     names the PTX entries NVRTC produced, which must equal the
 *     __global__ functions of the CUDA C), no compile fails, and the
 *     outputs still equal PyTorch's (without a GPU they run as the C backend's kernels;
 *     with one, on the GPU). The kernels are counted and printed;
 *     there must be some. The cases with PyTorch's input gradients also run
 *     forward + backward: no compile fails (the gradient plans' groups go
 *     through NVRTC too), the gradients equal PyTorch's, and some backward
 *     kernels run fused. Skipped, with a message, without libnvrtc.
 *     With a CUDA driver and device the kernels run on the GPU (kit_cuda.h)
 *     and the same comparisons hold; FBX_TE_EXPECT_GPU=1 (bench/te_gpu.sh)
 *     also requires every kernel's text to say it ran there.
 *   - `fusebox explain --fuser tensorexpr --source` under the cuda backend
 *     shows the CUDA C: a row softmax [64, 1000] is one kernel with one
 *     thread block per row (a block reduction per statistic), ratio-IoU one
 *     grid-stride kernel.
 *
 * The backend is read when the plugin is loaded: each test runs in its own
 * process (Check's fork mode) and sets FUSEBOX_TE_BACKEND first. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "corpus_case.h"
#include "exec/execimpl.h"
#include "exec/executor.h"
#include "host/host.h"
#include "host/hostimpl.h"
#include "host/services.h"
#include "ir/text.h"
#include "testutil.h"

#define MAX_ARGS 32
#define MAX_OUTS 64

static int count(const char *s, const char *what) {
  int n = 0;
  for (const char *p = s ? strstr(s, what) : NULL; p; p = strstr(p + 1, what)) n++;
  return n;
}

static int nvrtc_present(void) {
  char *ptx = NULL, *log = NULL;
  fbxp_status *st = fbx_svc_nvrtc_compile("extern \"C\" __global__ void k(void) {}\n", "probe.cu", NULL, &ptx, &log);
  int ok = !st;
  if (st) {
    printf("test_te_cuda: skipped: %s\n", st->msg);
    fbx_host_drop_status(st);
  }
  fbx_free(ptx);
  fbx_free(log);
  return ok;
}

/* The CUDA kernels in one compiled kernel's text: the __global__ functions
 * of its CUDA C section; -1 (and *why) when the text has no CUDA C or the
 * PTX entries NVRTC reported differ. */
static int cuda_kernels_of(const char *src, fbx_strbuf *why) {
  const char *cu = src ? strstr(src, "/* ==== CUDA C (backend cuda: ") : NULL;
  const char *c = cu ? strstr(cu, "/* ==== C (backend cuda") : NULL;
  if (!cu || !c) {
    fbx_strbuf_puts(why, "a kernel's source has no CUDA C section");
    return -1;
  }
  int nk = 0, entries = -1;
  for (const char *p = strstr(cu, "extern \"C\" __global__ void "); p && p < c;
       p = strstr(p + 1, "extern \"C\" __global__ void "))
    nk++;
  const char *n = strstr(cu, "NVRTC: ");
  if (!n || n > c || sscanf(n, "NVRTC: %d PTX entr", &entries) != 1) {
    fbx_strbuf_printf(why, "a kernel's CUDA C was not compiled by NVRTC: %.120s", cu);
    return -1;
  }
  if (entries != nk || nk == 0) {
    fbx_strbuf_printf(why, "%d __global__ functions in the CUDA C, %d PTX entries", nk, entries);
    return -1;
  }
  /* bench/te_gpu.sh on a GPU machine: every kernel must have run there */
  const char *gpu = getenv("FBX_TE_EXPECT_GPU");
  if (gpu && *gpu == '1' && (!strstr(cu, ", run on ") || strstr(cu, ", run on ") > c)) {
    fbx_strbuf_printf(why, "FBX_TE_EXPECT_GPU=1 but a kernel did not run on the GPU: %.160s", cu);
    return -1;
  }
  return nk;
}

/* One case, forward: NULL or why (caller frees); adds its CUDA kernels. */
static char *cuda_case(const char *name, int *kernels, int *compiled) {
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue in[MAX_ARGS] = {0}, out[MAX_OUTS] = {0};
  fbx_strbuf why = {0};
  int nin = cc_load_inputs(name, in, MAX_ARGS, &why), nout = 0;
  fbx_status *st = nin < 0 ? fbx_status_new(FBX_ERR_INVALID_ARG, "cannot read the inputs")
                           : fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "tensorexpr", .profiling_runs = 1};
  if (!st) st = fbx_executor_create(&ex, g, &o);
  if (!st) nout = fbx_graph_noutputs(g);
  if (nout > MAX_OUTS) st = fbx_status_new(FBX_ERR_INVALID_ARG, "too many outputs");
  for (int r = 0; r < 2 && !st; r++) {
    for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
    st = fbx_executor_run_values(ex, in, nin, out, nout, 1);
  }
  bool ok = !st && cc_compare_outputs(name, out, nout, &why);
  fbx_executor_stats s = {.struct_size = sizeof s};
  if (ex) fbx_executor_stats_get(ex, &s);
  if (ok && s.compile_failures > 0) {
    fbx_strbuf_printf(&why, "%lld compile failures (see the log)", (long long)s.compile_failures);
    ok = false;
  }
  for (fbx_xfn *fn = ex ? ex->fns : NULL; fn && ok; fn = fn->next)
    for (fbx_xgroup *gr = fn->groups; gr && ok; gr = gr->next)
      for (int k = 0; k < FBX_GROUP_KERNEL_SLOTS && ok; k++) {
        fbx_kentry *e = atomic_load(&gr->kernels[k]);
        if (!e || !e->kernel) continue;
        int n = cuda_kernels_of(fbx_fkernel_source(e->kernel), &why);
        if (n < 0) ok = false;
        else {
          *kernels += n;
          ++*compiled;
        }
      }
  if (st) fbx_strbuf_printf(&why, "%s", fbx_status_message(st));
  fbx_status_free(st);
  for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
  for (int i = 0; i < MAX_ARGS; i++) fbx_iv_release(&in[i]);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
  if (ok) {
    fbx_strbuf_free(&why);
    return NULL;
  }
  if (!why.data) fbx_strbuf_puts(&why, "failed");
  return why.data;
}

/* One case, forward + backward through the gradient API (cases with
 * PyTorch's input gradients): NULL or why; adds the backward's fused kernel
 * runs. The gradient plans' groups compile under the cuda backend too: an
 * NVRTC failure would be a compile failure. */
static char *cuda_backward_case(const char *name, int64_t *bw_kernel_runs) {
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_strbuf why = {0};
  fbx_ivalue in[MAX_ARGS] = {{0}}, out[MAX_OUTS] = {{0}}, gout[MAX_OUTS] = {{0}}, gin[MAX_ARGS] = {{0}};
  int nin = 0, nout = 0, nflat = 0;
  fbx_status *st = fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
  if (!st) {
    fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "tensorexpr", .profiling_runs = 1};
    st = fbx_executor_create(&ex, g, &o);
  }
  if (st) goto done;
  if ((nin = cc_load_inputs(name, in, MAX_ARGS, &why)) < 0) goto done;
  nout = fbx_graph_noutputs(g);
  nflat = fbx_executor_num_outputs(ex);
  if (nflat > MAX_OUTS || nout > MAX_OUTS) {
    fbx_strbuf_puts(&why, "too many outputs");
    goto done;
  }
  bool defined[MAX_OUTS];
  if (cc_load_grad_outputs(name, gout, defined, nflat, &why) < 0) goto done;
  bool rg[MAX_ARGS] = {0};
  for (int i = 0; i < nin; i++)
    rg[i] = in[i].kind == FBX_IV_TENSOR && (in[i].u.t->dtype == FBX_DTYPE_FLOAT32 || in[i].u.t->dtype == FBX_DTYPE_FLOAT64);
  for (int it = 0; it < 3; it++) {
    fbx_grad_handle *h = NULL;
    for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
    for (int i = 0; i < nin; i++) fbx_iv_release(&gin[i]);
    if ((st = fbx_executor_forward_values(ex, in, nin, rg, out, nout, 0, &h))) goto done;
    st = fbx_executor_backward_values(h, gout, nflat, gin, nin);
    fbx_grad_free(h);
    if (st) goto done;
  }
  for (int i = 0; i < nin; i++) {
    bool compared;
    fbx_strbuf w = {0};
    if (!cc_check_input_grad(name, fbx_graph_input(g, i)->name, &gin[i], &compared, &w))
      fbx_strbuf_printf(&why, "%s", w.data ? w.data : "gradient differs");
    fbx_strbuf_free(&w);
  }
  fbx_executor_stats s = {.struct_size = sizeof s};
  fbx_executor_stats_get(ex, &s);
  *bw_kernel_runs += s.backward_kernel_runs;
  if (s.compile_failures > 0 || s.fallbacks_run > 0)
    fbx_strbuf_printf(&why, "%lld compile failures, %lld failed runs", (long long)s.compile_failures,
                      (long long)s.fallbacks_run);
done:
  if (st) {
    fbx_strbuf_puts(&why, fbx_status_message(st));
    fbx_status_free(st);
  }
  for (int i = 0; i < MAX_ARGS; i++) {
    fbx_iv_release(&in[i]);
    fbx_iv_release(&gin[i]);
  }
  for (int i = 0; i < MAX_OUTS; i++) {
    fbx_iv_release(&out[i]);
    fbx_iv_release(&gout[i]);
  }
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
  if (!why.len) {
    fbx_strbuf_free(&why);
    return NULL;
  }
  return fbx_strbuf_take(&why);
}

START_TEST(corpus_cuda_kernels_compile_with_nvrtc) {
  ck_assert(!setenv("FUSEBOX_TE_BACKEND", "cuda", 1));
  unsetenv("FUSEBOX_PROFILING_RUNS");
  if (!nvrtc_present()) return;
  char **names = NULL;
  int n = cc_list(&names), failed = 0, kernels = 0, compiled = 0, cases = 0, bw_cases = 0;
  int64_t bw_runs = 0;
  fbx_strbuf report = {0};
  for (int i = 0; i < n; i++) {
    int before = kernels;
    char *why = cuda_case(names[i], &kernels, &compiled);
    if (why) {
      failed++;
      fbx_strbuf_printf(&report, "  %s: %.600s\n", names[i], why);
      free(why);
    }
    cases += kernels > before;
    if (cc_has_input_grads(names[i])) {
      bw_cases++;
      why = cuda_backward_case(names[i], &bw_runs);
      if (why) {
        failed++;
        fbx_strbuf_printf(&report, "  %s (forward + backward): %.600s\n", names[i], why);
        free(why);
      }
    }
  }
  printf("tensorexpr cuda: %d CUDA kernels in %d compiled groups of %d of %d corpus cases, each compiled to PTX by "
         "NVRTC; forward + backward of %d cases: %lld fused backward kernel runs; %d failed\n", kernels, compiled, cases,
         n, bw_cases, (long long)bw_runs, failed);
  ck_assert_msg(failed == 0, "%d of %d cases failed under FUSEBOX_TE_BACKEND=cuda:\n%s", failed, n,
                report.data ? report.data : "");
  ck_assert_msg(kernels > 0, "the corpus produced no CUDA kernel");
  ck_assert_msg(bw_runs > 0, "no backward graph ran a fused kernel under the cuda backend");
  fbx_strbuf_free(&report);
  cc_free_names(names, n);
}
END_TEST

static void ratio_inputs(char *in, size_t cap) {
  size_t o = 0;
  for (int i = 0; i < 8 && o < cap; i++)
    o += (size_t)snprintf(in + o, cap - o, " --input %s/ratio_iou/in%d.npy", tu_src_path("tests/corpus/cases"), i);
}

static char *explain(const char *graph, const char *opts) {
  char cmd[8192], *out = NULL;
  snprintf(cmd, sizeof cmd, "FUSEBOX_TE_BACKEND=cuda %s explain %s --fuser tensorexpr --source %s 2>&1", FBX_CLI,
           graph, opts);
  int rc = tu_run(cmd, &out);
  ck_assert_msg(rc == 0, "explain failed (%d):\n%s", rc, out ? out : "");
  return out;
}

START_TEST(explain_shows_cuda_c) {
  if (!nvrtc_present()) return;
  /* a row softmax: rowblock makes it one row loop, so one CUDA kernel,
   * a block per row, two block reductions (max and sum) */
  char path[] = "/tmp/test_te_cuda_XXXXXX";
  int fd = mkstemp(path);
  ck_assert_int_ge(fd, 0);
  FILE *f = fdopen(fd, "w");
  ck_assert_ptr_nonnull(f);
  fputs("graph(%x.1 : Float(64, 1000, strides=[1000, 1], requires_grad=0, device=cpu)):\n"
        "  %1 : int = prim::Constant[value=-1]()\n  %2 : NoneType = prim::Constant()\n"
        "  %3 : Tensor = aten::softmax(%x.1, %1, %2)\n  return (%3)\n", f);
  ck_assert_int_eq(fclose(f), 0);
  char *out = explain(path, "--random");
  unlink(path);
  ck_assert_msg(strstr(out, "/* ==== CUDA C (backend cuda: 1 kernel, NVRTC: 1 PTX entry") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "te_kernel_0: one block per row; launch <<<64, 256>>>") != NULL, "%s", out);
  ck_assert_int_eq(count(out, "extern \"C\" __global__ void te_kernel_"), 1);
  ck_assert_int_eq(count(out, "__shfl_down_sync("), 4); /* two reductions, two warp rounds each */
  ck_assert_msg(strstr(out, "/* ==== C (backend cuda: no GPU runtime, what runs on the CPU) ==== */") ||
                    strstr(out, "/* ==== C (backend cuda: not compiled, the kernels run on the GPU) ==== */"),
                "%s", out);
  free(out);
  /* ratio-IoU: pointwise, one grid-stride kernel */
  char in[8192];
  ratio_inputs(in, sizeof in);
  out = explain(tu_src_path("examples/ratio_iou.ir"), in);
  ck_assert_msg(strstr(out, "te_kernel_0: grid-stride") != NULL, "%s", out);
  ck_assert_int_eq(count(out, "extern \"C\" __global__ void te_kernel_"), 1);
  ck_assert_int_eq(count(out, "__syncthreads"), 0);
  free(out);
}
END_TEST

START_TEST(bad_backend_is_named) {
  char cmd[12288], in[8192], *out = NULL;
  ratio_inputs(in, sizeof in);
  snprintf(cmd, sizeof cmd, "FUSEBOX_TE_BACKEND=gpu %s explain %s --fuser tensorexpr %s 2>&1", FBX_CLI,
           tu_src_path("examples/ratio_iou.ir"), in);
  ck_assert_int_eq(tu_run(cmd, &out), 0);
  ck_assert_msg(strstr(out, "FUSEBOX_TE_BACKEND='gpu' is neither 'c' nor 'eval' nor 'cuda'; using c") != NULL, "%s",
                out);
  free(out);
}
END_TEST

int main(void) {
  Suite *s = suite_create("te_cuda");
  TCase *tc = tcase_create("cuda");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, corpus_cuda_kernels_compile_with_nvrtc);
  tcase_add_test(tc, explain_shows_cuda_c);
  tcase_add_test(tc, bad_backend_is_named);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int nf = srunner_ntests_failed(sr);
  srunner_free(sr);
  return nf ? EXIT_FAILURE : EXIT_SUCCESS;
}
