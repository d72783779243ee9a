/* The legacy fuser on the whole conformance corpus.
 *
 * Every case under tests/corpus/cases/ runs through the profiling executor
 * with the legacy fuser (plugins/legacy_fuser, loaded by name like a user
 * would) three times: one profiling run, then two optimized runs that
 * compile and run the fusion groups. The last outputs must equal PyTorch's
 * within the case's tolerance. A case whose optimized graph has groups must
 * have run kernels (a fuser that fuses nothing does not pass), and no
 * compile may fail.
 *
 * The CUDA C of every kernel: the plugin's kernel_source carries both
 * dialects (the C that ran, then the CUDA C after a marker line); each CUDA
 * part is compiled to PTX with NVRTC through the host's service. Without
 * NVRTC that part reports itself skipped, with the reason.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "corpus_case.h"
#include "exec/execimpl.h"
#include "exec/executor.h"
#include "host/hostimpl.h"
#include "host/services.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

#define MAX_ARGS 32
#define CUDA_MARK "/* ==== CUDA C for NVRTC"

static char **case_names;
static int ncases;

static void list_cases(void) {
  if (!case_names) ncases = cc_list(&case_names);
}

/* ---- CUDA sources ---------------------------------------------------------------------------- */

static char *cuda_srcs[4096];
static char *cuda_from[4096];
static int ncuda;

static void collect_cuda(fbx_executor *ex, const char *name) {
  for (fbx_xfn *fn = ex->fns; fn; fn = fn->next)
    for (fbx_xgroup *g = fn->groups; g; g = g->next)
      for (int s = 0; s < FBX_GROUP_KERNEL_SLOTS; s++) {
        fbx_kentry *e = atomic_load(&g->kernels[s]);
        const char *src = e && e->kernel ? fbx_fkernel_source(e->kernel) : NULL;
        const char *cu = src ? strstr(src, CUDA_MARK) : NULL;
        if (cu && ncuda < 4096) {
          cuda_from[ncuda] = strdup(name);
          cuda_srcs[ncuda++] = strdup(cu);
        }
      }
}

/* ---- the corpus -------------------------------------------------------------------------------- */

START_TEST(corpus_under_legacy) {
  ck_assert(!fbx_op_table_init());
  list_cases();
  if (!cc_list_filtered()) ck_assert_int_ge(ncases, 50);
  int failed = 0, fused_cases = 0, groups_total = 0;
  for (int c = 0; c < ncases; c++) {
    const char *name = case_names[c];
    fbx_graph *g = NULL;
    fbx_executor *ex = NULL;
    fbx_ivalue in[MAX_ARGS] = {0}, out[64] = {0};
    fbx_strbuf why = {0};
    int nin = cc_load_inputs(name, in, MAX_ARGS, &why), nout = 0;
    fbx_status *st = nin < 0 ? fbx_status_new(FBX_ERR_INVALID_ARG, "cannot read the inputs: %s", why.data)
                             : fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
    fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "legacy", .profiling_runs = 1};
    if (!st) st = fbx_executor_create(&ex, g, &o);
    if (!st) nout = fbx_graph_noutputs(g);
    for (int r = 0; r < 3 && !st; r++) {
      for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
      st = fbx_executor_run_values(ex, in, nin, out, nout, 1);
    }
    bool ok = !st && cc_compare_outputs(name, out, nout, &why);
    fbx_executor_stats s = {.struct_size = sizeof s};
    if (ex) fbx_executor_stats_get(ex, &s);
    /* a group reached runs a kernel (a group in a loop body that never
     * runs is not reached: nothing compiled, nothing fell back) */
    if (ok && s.groups > 0 && s.kernel_runs == 0 && (s.fallbacks > 0 || s.kernels_compiled > 0)) {
      fbx_strbuf_printf(&why, "%lld groups but no kernel ran", (long long)s.groups);
      ok = false;
    }
    if (ok && s.compile_failures > 0) {
      fbx_strbuf_printf(&why, "%lld compile failures", (long long)s.compile_failures);
      ok = false;
    }
    if (ok && s.fallbacks_run > 0) {
      fbx_strbuf_printf(&why, "%lld failed runs", (long long)s.fallbacks_run);
      ok = false;
    }
    printf("  %-28s %s groups %lld kernel runs %lld declines %lld%s%s\n", name, ok ? "ok  " : "FAIL",
           (long long)s.groups, (long long)s.kernel_runs, (long long)s.fallbacks_declined, ok ? "" : ": ",
           ok ? "" : st ? fbx_status_message(st) : (why.data ? why.data : ""));
    failed += !ok;
    fused_cases += s.kernel_runs > 0;
    groups_total += (int)s.groups;
    if (ex) collect_cuda(ex, name);
    fbx_strbuf_free(&why);
    fbx_status_free(st);
    for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
    for (int i = 0; i < nin; i++) fbx_iv_release(&in[i]);
    fbx_executor_destroy(ex);
    fbx_graph_destroy(g);
  }
  printf("legacy corpus: %d of %d cases pass; %d cases ran fused kernels (%d groups)\n", ncases - failed, ncases,
         fused_cases, groups_total);
  ck_assert_int_eq(failed, 0);
  /* a fuser that fuses little is broken: a fifth of the cases have groups of two or more pointwise ops */
  if (!cc_list_filtered()) ck_assert_int_ge(fused_cases, ncases / 5);
}
END_TEST

START_TEST(cuda_kernels_compile_with_nvrtc) {
  ck_assert_msg(ncuda > 0, "no CUDA kernel sources collected (the corpus test runs first)");
  int bad = 0, skipped = 0;
  for (int i = 0; i < ncuda; i++) {
    char *ptx = NULL, *log = NULL;
    fbxp_status *ps = fbx_svc_nvrtc_compile(cuda_srcs[i], "legacy.cu", NULL, &ptx, &log);
    if (ps && ps->code == FBXP_ERR_UNSUPPORTED) {
      printf("SKIPPED: NVRTC not available: %s\n", ps->msg);
      fbx_host_drop_status(ps);
      skipped = 1;
      fbx_free(ptx);
      fbx_free(log);
      break;
    }
    if (ps || !ptx || !strstr(ptx, ".entry lf_kernel")) {
      printf("  %s: CUDA kernel does not compile: %s\n%s\n", cuda_from[i], ps ? ps->msg : "no PTX entry",
             log ? log : "");
      bad++;
    }
    fbx_host_drop_status(ps);
    fbx_free(ptx);
    fbx_free(log);
  }
  if (!skipped) printf("NVRTC: %d of %d CUDA kernels compiled to PTX\n", ncuda - bad, ncuda);
  ck_assert_int_eq(bad, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("legacy_corpus");
  TCase *tc = tcase_create("corpus");
  tcase_set_timeout(tc, 1200);
  tcase_add_test(tc, corpus_under_legacy);
  tcase_add_test(tc, cuda_kernels_compile_with_nvrtc);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK); /* the second test reads what the first collected */
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  cc_free_names(case_names, ncases);
  for (int i = 0; i < ncuda; i++) {
    free(cuda_srcs[i]);
    free(cuda_from[i]);
  }
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
