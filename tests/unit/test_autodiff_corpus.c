/* PyTorch's gradients for the conformance corpus, through the executor's
 * gradient mode: every case with grad_<name>.npy files runs forward and
 * backward (fbx_executor_forward_values / backward_values) several times —
 * the first run profiles on the eager tape, the later ones go through the
 * DifferentiableGraph plan and its forward/backward executors — under fuser
 * `none` and under the legacy fuser (or, until that plugin is built, the
 * test plugin `good`). Every float32/float64 tensor input requires grad (as
 * the corpus script did); output k's gradient is grad_outK.npy or undefined.
 *
 * Tolerance for gradients: 10x the case's `tol` (or the dtype default), but
 * at least rtol 1e-4 / atol 1e-5 for float32 and 1e-9 / 1e-10 for float64:
 * backward graphs sum in other orders than PyTorch's kernels.
 *
 * One line per case and fuser; every case must match (in-place writes into
 * views of tensors requiring grad, clamp_inplace and index_put, go through
 * the tape's CopySlices-style rebase, autodiff/tape.h). */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "exec/executor.h"
#include "host/host.h"
#include "ir/text.h"
#include "testutil.h"

#ifndef FBX_TEST_PLUGIN_DIR
#define FBX_TEST_PLUGIN_DIR FBX_BINARY_DIR "/tests/plugins"
#endif

#define CASES_DIR FBX_SOURCE_DIR "/tests/corpus/cases"
#define MAX_ARGS 32
#define MAX_OUTS 64
#define ITERS 3

static const char *case_file(const char *name, const char *file) {
  static char buf[4][4096];
  static int next;
  char *b = buf[next++ % 4];
  snprintf(b, 4096, "%s/%s/%s", CASES_DIR, name, file);
  return b;
}

static bool has_grads(const char *name) {
  DIR *d = opendir(case_file(name, ""));
  if (!d) return false;
  bool any = false;
  for (struct dirent *e; (e = readdir(d));) any |= !strncmp(e->d_name, "grad_", 5) && strncmp(e->d_name, "grad_out", 8);
  closedir(d);
  return any;
}

static bool parse_scalar(const char *s, fbx_ivalue *out) {
  if (!strcmp(s, "None")) *out = fbx_iv_none();
  else if (!strcmp(s, "true")) *out = fbx_iv_bool(true);
  else if (!strcmp(s, "false")) *out = fbx_iv_bool(false);
  else if (strpbrk(s, ".einf")) *out = fbx_iv_float(strtod(s, NULL));
  else *out = fbx_iv_int(strtoll(s, NULL, 10));
  return true;
}

static int read_args(const char *name, fbx_ivalue *in, fbx_strbuf *why) {
  FILE *f = fopen(case_file(name, "args"), "r");
  if (!f) return 0;
  char line[1024];
  int n = 0;
  while (n < MAX_ARGS && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\r\n")] = '\0';
    size_t len = strlen(line);
    if (len > 4 && !strcmp(line + len - 4, ".npy")) {
      fbx_tensor *t = NULL;
      fbx_status *st = fbx_npy_read_file(&t, case_file(name, line));
      if (st) {
        fbx_strbuf_printf(why, "input %d: %s", n, fbx_status_message(st));
        fbx_status_free(st);
        fclose(f);
        return -1;
      }
      in[n++] = fbx_iv_tensor(t);
    } else {
      parse_scalar(line, &in[n++]);
    }
  }
  fclose(f);
  return n;
}

static void read_tol(const char *name, double *rtol, double *atol, fbx_dtype dt) {
  *rtol = dt == FBX_DTYPE_FLOAT64 ? 1e-12 : 1e-5;
  *atol = dt == FBX_DTYPE_FLOAT64 ? 1e-12 : 1e-6;
  FILE *f = fopen(case_file(name, "tol"), "r");
  if (f) {
    if (fscanf(f, "%lf %lf", rtol, atol) != 2) {
      *rtol = 1e-5;
      *atol = 1e-6;
    }
    fclose(f);
  }
  *rtol *= 10;
  *atol *= 10;
  double rmin = dt == FBX_DTYPE_FLOAT64 ? 1e-9 : 1e-4, amin = dt == FBX_DTYPE_FLOAT64 ? 1e-10 : 1e-5;
  if (*rtol < rmin) *rtol = rmin;
  if (*atol < amin) *atol = amin;
}

static bool close_enough(const fbx_tensor *got, const fbx_tensor *want, double rtol, double atol, fbx_strbuf *why) {
  if (!fbx_tensor_same_shape(got, want)) {
    fbx_strbuf_printf(why, "shape: %d dims vs %d", got->ndim, want->ndim);
    return false;
  }
  for (int64_t i = 0; i < want->numel; i++) {
    double a = fbx_tensor_get_f64(got, i), b = fbx_tensor_get_f64(want, i);
    if (isnan(a) && isnan(b)) continue;
    if (isinf(b) && a == b) continue;
    if (!(fabs(a - b) <= atol + rtol * fabs(b))) {
      fbx_strbuf_printf(why, "element %lld: %.9g vs PyTorch %.9g (rtol %g, atol %g)", (long long)i, a, b, rtol, atol);
      return false;
    }
  }
  return true;
}

static bool all_zero(const fbx_tensor *t) {
  for (int64_t i = 0; i < t->numel; i++)
    if (fbx_tensor_get_f64(t, i) != 0) return false;
  return true;
}

/* Run one case: NULL on success, else the reason (caller frees). */
static char *run_case(const char *name, fbx_fuser *fuser) {
  fbx_strbuf why = {0};
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue in[MAX_ARGS] = {{0}}, out[MAX_OUTS] = {{0}}, gout[MAX_OUTS] = {{0}}, gin[MAX_ARGS] = {{0}};
  int nin = 0, nout = 0, nflat = 0;
  fbx_status *st = fbx_graph_parse_file(&g, case_file(name, "graph.ir"));
  if (!st) {
    fbx_executor_opts o = {.struct_size = sizeof o, .fuser = "none", .fuser_handle = fuser, .profiling_runs = 1};
    st = fbx_executor_create(&ex, g, &o);
  }
  if (st) goto done;
  if ((nin = read_args(name, in, &why)) < 0) goto done;
  nout = fbx_graph_noutputs(g);
  nflat = fbx_executor_num_outputs(ex);
  if (nflat > MAX_OUTS || nout > MAX_OUTS) {
    fbx_strbuf_puts(&why, "too many outputs");
    goto done;
  }
  for (int k = 0; k < nflat; k++) {
    char f[64];
    snprintf(f, sizeof f, "grad_out%d.npy", k);
    if (access(case_file(name, f), R_OK)) continue;
    fbx_tensor *t = NULL;
    if ((st = fbx_npy_read_file(&t, case_file(name, f)))) goto done;
    gout[k] = fbx_iv_tensor(t);
  }
  bool rg[MAX_ARGS] = {0};
  for (int i = 0; i < nin; i++)
    rg[i] = in[i].kind == FBX_IV_TENSOR &&
            (in[i].u.t->dtype == FBX_DTYPE_FLOAT32 || in[i].u.t->dtype == FBX_DTYPE_FLOAT64);
  for (int it = 0; it < ITERS; it++) {
    fbx_grad_handle *h = NULL;
    for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
    if ((st = fbx_executor_forward_values(ex, in, nin, rg, out, nout, 0, &h))) goto done;
    st = fbx_executor_backward_values(h, gout, nflat, gin, nin);
    fbx_grad_free(h);
    if (st) goto done;
    for (int i = 0; i < nin; i++) {
      const char *iname = fbx_graph_input(g, i)->name;
      char f[600];
      snprintf(f, sizeof f, "grad_%s.npy", iname);
      bool have = !access(case_file(name, f), R_OK);
      if (!have) {
        if (gin[i].kind == FBX_IV_TENSOR && !all_zero(gin[i].u.t)) {
          fbx_strbuf_printf(&why, "run %d: %%%s has a nonzero gradient where PyTorch has none", it + 1, iname);
          goto done;
        }
        continue;
      }
      if (gin[i].kind != FBX_IV_TENSOR) {
        fbx_strbuf_printf(&why, "run %d: no gradient for %%%s", it + 1, iname);
        goto done;
      }
      fbx_tensor *want = NULL;
      if ((st = fbx_npy_read_file(&want, case_file(name, f)))) goto done;
      double rtol, atol;
      read_tol(name, &rtol, &atol, want->dtype);
      fbx_strbuf w = {0};
      bool ok = close_enough(gin[i].u.t, want, rtol, atol, &w);
      fbx_tensor_release(want);
      if (!ok) fbx_strbuf_printf(&why, "run %d: grad_%s: %s", it + 1, iname, w.data ? w.data : "?");
      fbx_strbuf_free(&w);
      if (!ok) goto done;
    }
    for (int i = 0; i < nin; i++) fbx_iv_release(&gin[i]);
  }
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

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void run_all(fbx_fuser *fuser, const char *label) {
  DIR *d = opendir(CASES_DIR);
  ck_assert_ptr_nonnull(d);
  char *names[512];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < 512;)
    if (e->d_name[0] != '.' && has_grads(e->d_name)) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  int pass = 0, bad = 0;
  for (int i = 0; i < n; i++) {
    char *why = run_case(names[i], fuser);
    if (!why) {
      pass++;
      printf("[%s] %-28s ok\n", label, names[i]);
    } else {
      bad++;
      printf("[%s] %-28s FAIL: %s\n", label, names[i], why);
    }
    fbx_free(why);
    free(names[i]);
  }
  printf("[%s] %d cases with gradients: %d match PyTorch, %d failed\n", label, n, pass, bad);
  fflush(stdout);
  ck_assert_int_gt(n, 40);
  ck_assert_int_eq(bad, 0);
}

START_TEST(corpus_none) { run_all(NULL, "none"); }
END_TEST

START_TEST(corpus_legacy) {
  const char *legacy = FBX_BINARY_DIR "/plugins/libfbx_legacy.so";
  char path[1024];
  const char *label = "legacy";
  if (access(legacy, R_OK)) {
    printf("legacy fuser not built (%s missing): the fused run uses the test plugin `good` instead\n", legacy);
    snprintf(path, sizeof path, "%s/libfbxtest_good.so", FBX_TEST_PLUGIN_DIR);
    label = "good";
  } else {
    snprintf(path, sizeof path, "%s", legacy);
  }
  fbx_fuser *f = NULL;
  fbx_status *st = fbx_fuser_load(&f, path);
  ck_assert_msg(!st, "load %s: %s", path, fbx_status_message(st));
  run_all(f, label);
  fbx_fuser_release(f);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("autodiff_corpus");
  TCase *tc = tcase_create("corpus");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, corpus_none);
  tcase_add_test(tc, corpus_legacy);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
