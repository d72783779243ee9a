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
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "exec/execimpl.h"
#include "exec/executor.h"
#include "host/hostimpl.h"
#include "host/services.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

#define MAX_CASES 1024
#define MAX_ARGS 32
#define CUDA_MARK "/* ==== CUDA C for NVRTC"

static char *case_names[MAX_CASES];
static int ncases;

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list_cases(void) {
  if (ncases) return;
  DIR *d = opendir(tu_src_path("tests/corpus/cases"));
  ck_assert_msg(d, "no tests/corpus/cases directory");
  struct dirent *e;
  while ((e = readdir(d)) && ncases < MAX_CASES) {
    if (e->d_name[0] == '.') continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s/graph.ir", tu_src_path("tests/corpus/cases"), e->d_name);
    if (access(p, R_OK) == 0) case_names[ncases++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(case_names, (size_t)ncases, sizeof *case_names, cmp_str);
}

static const char *case_file(const char *name, const char *file) {
  static char buf[4][4096];
  static int next;
  char *p = buf[next++ & 3];
  snprintf(p, 4096, "%s/%s/%s", tu_src_path("tests/corpus/cases"), name, file);
  return p;
}

/* ---- comparing (as tests/unit/test_conformance.c) ------------------------------------------ */

typedef struct tol {
  double rtol, atol;
  bool from_file;
} tol;

static tol default_tol(fbx_dtype d, tol file) {
  if (file.from_file) return file;
  switch (d) {
    case FBX_DTYPE_FLOAT32: return (tol){1e-5, 1e-6, false};
    case FBX_DTYPE_FLOAT64: return (tol){1e-12, 1e-12, false};
    case FBX_DTYPE_FLOAT16: return (tol){1e-3, 1e-3, false};
    case FBX_DTYPE_BFLOAT16: return (tol){1e-2, 1e-2, false};
    default: return (tol){0, 0, false};
  }
}

static bool compare_tensor(const fbx_tensor *got, const fbx_tensor *want, tol file_tol, fbx_strbuf *why) {
  if (got->dtype != want->dtype || !fbx_tensor_same_shape(got, want)) {
    fbx_strbuf_printf(why, "got %s of rank %d, PyTorch gives %s of rank %d", fbx_dtype_name(got->dtype), got->ndim,
                      fbx_dtype_name(want->dtype), want->ndim);
    return false;
  }
  bool floating = fbx_dtype_is_floating(want->dtype);
  tol t = default_tol(want->dtype, file_tol);
  for (int64_t i = 0; i < want->numel; i++) {
    bool ok;
    double a = fbx_tensor_get_f64(got, i), e = fbx_tensor_get_f64(want, i);
    if (floating) {
      if (isnan(e) || isnan(a)) ok = isnan(e) && isnan(a);
      else if (isinf(e) || isinf(a)) ok = a == e;
      else ok = fabs(a - e) <= t.atol + t.rtol * fabs(e);
    } else {
      ok = fbx_tensor_get_i64(got, i) == fbx_tensor_get_i64(want, i);
    }
    if (!ok) {
      fbx_strbuf_printf(why, "flat index %lld: got %.9g, PyTorch %.9g", (long long)i, a, e);
      return false;
    }
  }
  return true;
}

static fbx_tensor *as_tensor(const fbx_ivalue *v) {
  fbx_tensor *t = NULL;
  fbx_status *st = NULL;
  switch (v->kind) {
    case FBX_IV_TENSOR: return fbx_tensor_retain(v->u.t);
    case FBX_IV_INT: st = fbx_tensor_from_data(&t, FBX_DTYPE_INT64, 0, NULL, &v->u.i); break;
    case FBX_IV_FLOAT: st = fbx_tensor_from_data(&t, FBX_DTYPE_FLOAT64, 0, NULL, &v->u.f); break;
    case FBX_IV_BOOL: {
      uint8_t b = v->u.b;
      st = fbx_tensor_from_data(&t, FBX_DTYPE_BOOL, 0, NULL, &b);
      break;
    }
    default: return NULL;
  }
  fbx_status_free(st);
  return t;
}

static void flatten(const fbx_ivalue *v, fbx_ivalue *out, int *n, int cap) {
  if (v->kind == FBX_IV_TUPLE || v->kind == FBX_IV_LIST) {
    for (int i = 0; i < v->u.l->n; i++) flatten(&v->u.l->items[i], out, n, cap);
  } else if (*n < cap) {
    out[(*n)++] = *v;
  } else {
    (*n)++;
  }
}

static bool compare_outputs(const char *name, const fbx_ivalue *outs, int nouts, fbx_strbuf *why) {
  fbx_ivalue flat[256];
  int n = 0;
  for (int i = 0; i < nouts; i++) flatten(&outs[i], flat, &n, 256);
  tol ft = {0, 0, false};
  char *text = tu_read_file(case_file(name, "tol"), NULL);
  if (text) {
    if (sscanf(text, "%lf %lf", &ft.rtol, &ft.atol) == 2) ft.from_file = true;
    free(text);
  }
  for (int k = 0;; k++) {
    char f[32];
    snprintf(f, sizeof f, "out%d.npy", k);
    if (access(case_file(name, f), R_OK)) {
      if (k != n) fbx_strbuf_printf(why, "%d outputs, PyTorch gives %d", n, k);
      return k == n;
    }
    if (k >= n) {
      fbx_strbuf_printf(why, "%d outputs, PyTorch gives more", n);
      return false;
    }
    fbx_tensor *exp = NULL, *got = as_tensor(&flat[k]);
    fbx_status *st = fbx_npy_read_file(&exp, case_file(name, f));
    bool ok = !st && got;
    if (ok) {
      fbx_strbuf_printf(why, "out%d: ", k);
      ok = compare_tensor(got, exp, ft, why);
    } else {
      fbx_strbuf_printf(why, "out%d unreadable", k);
    }
    fbx_status_free(st);
    fbx_tensor_release(got);
    fbx_tensor_release(exp);
    if (!ok) return false;
    why->len = 0;
    if (why->data) why->data[0] = 0;
  }
}

static bool parse_scalar(const char *s, fbx_ivalue *out) {
  if (!strcmp(s, "None")) *out = fbx_iv_none();
  else if (!strcmp(s, "true")) *out = fbx_iv_bool(true);
  else if (!strcmp(s, "false")) *out = fbx_iv_bool(false);
  else {
    char *end;
    long long i = strtoll(s, &end, 10);
    if (*s && !*end) {
      *out = fbx_iv_int(i);
      return true;
    }
    double d = strtod(s, &end);
    if (end == s || *end) return false;
    *out = fbx_iv_float(d);
  }
  return true;
}

static int read_inputs(const char *name, fbx_ivalue *in) {
  char *text = tu_read_file(case_file(name, "args"), NULL);
  int n = 0;
  if (!text) return -1;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l && n < MAX_ARGS; l = strtok_r(NULL, "\n", &save)) {
    while (*l == ' ') l++;
    size_t len = strlen(l);
    while (len && (l[len - 1] == ' ' || l[len - 1] == '\r')) l[--len] = 0;
    if (!len) continue;
    if (len > 4 && !strcmp(l + len - 4, ".npy")) {
      fbx_tensor *t = NULL;
      fbx_status *st = fbx_npy_read_file(&t, case_file(name, l));
      if (st) {
        fbx_status_free(st);
        n = -1;
        break;
      }
      in[n++] = fbx_iv_tensor(t);
    } else if (!parse_scalar(l, &in[n++])) {
      n = -1;
      break;
    }
  }
  free(text);
  return n;
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
  ck_assert_int_ge(ncases, 50);
  int failed = 0, fused_cases = 0, groups_total = 0;
  for (int c = 0; c < ncases; c++) {
    const char *name = case_names[c];
    fbx_graph *g = NULL;
    fbx_executor *ex = NULL;
    fbx_ivalue in[MAX_ARGS] = {0}, out[64] = {0};
    fbx_strbuf why = {0};
    int nin = read_inputs(name, in), nout = 0;
    fbx_status *st = nin < 0 ? fbx_status_new(FBX_ERR_INVALID_ARG, "cannot read the inputs")
                             : fbx_graph_parse_file(&g, case_file(name, "graph.ir"));
    fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "legacy", .profiling_runs = 1};
    if (!st) st = fbx_executor_create(&ex, g, &o);
    if (!st) nout = fbx_graph_noutputs(g);
    for (int r = 0; r < 3 && !st; r++) {
      for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
      st = fbx_executor_run_values(ex, in, nin, out, nout, 1);
    }
    bool ok = !st && compare_outputs(name, out, nout, &why);
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
  ck_assert_int_ge(fused_cases, ncases / 5);
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
  for (int i = 0; i < ncases; i++) free(case_names[i]);
  for (int i = 0; i < ncuda; i++) {
    free(cuda_srcs[i]);
    free(cuda_from[i]);
  }
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
