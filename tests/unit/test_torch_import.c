/* The PyTorch bridge's import (issue 19), through the `fusebox` command as a
 * user runs it. Built only with the bridge (tests/CMakeLists.txt).
 *
 * Every model of tests/torch/models/ (written by tests/torch/gen_models.py
 * with PyTorch 1.13: a module saved with torch.jit.save, its inputs, and
 * PyTorch's outputs and input gradients) is imported once with `fusebox
 * import`, then run from the import directory under none, legacy,
 * tensorexpr and nvfuser_like: the outputs must equal PyTorch's, and where
 * PyTorch has input gradients, `run --backward` must give them (gradient of
 * ones for every floating output, as the generator used).
 *
 * PENDING lists what fusebox cannot run yet (a missing op or gradient
 * formula), each with its reason: such a model (or its backward, "NAME:bwd")
 * is still imported and run, its failure is printed and does not fail the
 * test; one that passes is printed as "pending ... passes now" so that it
 * is taken off the list. Helper ops18 adds gru_cell, lstm_cell,
 * instance_norm and max_pool2d: the lead empties those entries after the
 * merge.
 *
 * Also: `fusebox run MODEL.pt` imports into a temporary directory and
 * removes it; explain and bench take an import directory; import errors
 * (not an archive, a corrupt archive, a missing method, a directory without
 * a manifest) are clear and exit 1. */
#include <check.h>
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fusebox/tensor.h>

#include "base/strbuf.h"
#include "corpus_case.h"
#include "testutil.h"

static const char *const FUSERS[] = {"none", "legacy", "tensorexpr", "nvfuser_like"};

static const char *const PENDING[][2] = {
    {NULL, NULL}, /* none pending now: every saved model runs */
};

#define MAX_MODELS 64
static char *models[MAX_MODELS];
static int nmodels;

static const char *pending_reason(const char *key) {
  for (size_t i = 0; i < sizeof PENDING / sizeof PENDING[0]; i++)
    if (PENDING[i][0] && !strcmp(PENDING[i][0], key)) return PENDING[i][1];
  return NULL;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void list_models(void) {
  DIR *d = opendir(tu_src_path("tests/torch/models"));
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) && nmodels < MAX_MODELS) {
    if (e->d_name[0] == '.') continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s/model.pt", tu_src_path("tests/torch/models"), e->d_name);
    if (access(p, R_OK) == 0) models[nmodels++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(models, (size_t)nmodels, sizeof *models, cmp_str);
}

static const char *model_file(const char *model, const char *file) {
  static char slots[4][4096];
  static int next;
  char *p = slots[next++ & 3];
  snprintf(p, 4096, "%s/tests/torch/models/%s/%s", FBX_SOURCE_DIR, model, file);
  return p;
}

typedef struct meta {
  int ninputs, noutputs, ngrads;
  int grads[16];
  int npgrads;           /* parameters whose gradients are checked too */
  char pgrads[16][128];  /* their input names (self.fc.weight): pgrad_<name>.npy */
  double rtol, atol;
} meta;

static meta read_meta(const char *model) {
  meta m = {.rtol = 1e-4, .atol = 1e-5};
  FILE *f = fopen(model_file(model, "meta.txt"), "r");
  ck_assert_msg(f != NULL, "%s: no meta.txt", model);
  char line[1024];
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "inputs %d", &m.ninputs) == 1 || sscanf(line, "outputs %d", &m.noutputs) == 1 ||
        sscanf(line, "tol %lf %lf", &m.rtol, &m.atol) == 2)
      continue;
    if (!strncmp(line, "pgrads", 6)) {
      char *p = line + 6;
      int used;
      while (m.npgrads < 16 && sscanf(p, "%127s%n", m.pgrads[m.npgrads], &used) == 1) {
        m.npgrads++;
        p += used;
      }
      continue;
    }
    if (!strncmp(line, "grads", 5)) {
      char *p = line + 5;
      int v, used;
      while (m.ngrads < 16 && sscanf(p, "%d%n", &v, &used) == 1) {
        m.grads[m.ngrads++] = v;
        p += used;
      }
    }
  }
  fclose(f);
  ck_assert_msg(m.ninputs > 0 && m.ninputs <= 16 && m.noutputs > 0, "%s: bad meta.txt", model);
  return m;
}

/* The graph input names of the manifest's `input` lines, in order. */
static int manifest_inputs(const char *dir, char names[16][256]) {
  char p[4400], line[4096];
  snprintf(p, sizeof p, "%s/manifest.txt", dir);
  FILE *f = fopen(p, "r");
  ck_assert_msg(f != NULL, "no %s", p);
  int n = 0;
  while (fgets(line, sizeof line, f))
    if (n < 16 && sscanf(line, "input %255s", names[n]) == 1) n++;
  fclose(f);
  return n;
}

static fbx_tensor *load(const char *path, fbx_strbuf *why) {
  fbx_tensor *t = NULL;
  fbx_status *st = fbx_npy_read_file(&t, path);
  if (st) {
    fbx_strbuf_printf(why, "%s; ", fbx_status_message(st));
    fbx_status_free(st);
    return NULL;
  }
  return t;
}

/* got against PyTorch's want; false with why. */
static bool same(const char *got_path, const char *want_path, double rtol, double atol, fbx_strbuf *why) {
  fbx_tensor *got = load(got_path, why), *want = load(want_path, why);
  bool ok = got && want;
  if (ok) {
    cc_tol t = {.rtol = rtol, .atol = atol, .from_file = true};
    size_t before = why->len;
    ok = cc_compare(got, want, t, why);
    if (!ok && why->len > before) fbx_strbuf_printf(why, " (%s); ", got_path);
  }
  fbx_tensor_release(got);
  fbx_tensor_release(want);
  return ok;
}

static char *make_tmp(void) {
  char *d = strdup("/tmp/fbx_torch_test_XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(d));
  return d;
}

static void remove_tmp(char *d) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
  ck_assert_int_eq(system(cmd), 0);
  free(d);
}

/* One run (forward, or forward + backward) of an import directory; NULL
 * when it matches PyTorch, else why (free it). */
static char *run_case(const char *model, const meta *m, const char *imp, char names[16][256], const char *fuser,
                      bool backward, const char *tmp) {
  char cmd[8192], out[4200];
  snprintf(out, sizeof out, "%s/%s%s", tmp, fuser, backward ? "_bwd" : "");
  int k = snprintf(cmd, sizeof cmd, "%s run %s --fuser %s --out %s%s", FBX_CLI, imp, fuser, out,
                   backward ? " --backward" : "");
  for (int i = 0; i < m->ninputs; i++) {
    char f[32], lit[64] = "";
    snprintf(f, sizeof f, "in%d.npy", i);
    if (access(model_file(model, f), R_OK) != 0) { /* an input that is not a tensor: its literal */
      snprintf(f, sizeof f, "in%d.txt", i);
      FILE *fp = fopen(model_file(model, f), "r");
      ck_assert_msg(fp != NULL, "%s: neither in%d.npy nor in%d.txt", model, i, i);
      ck_assert(fgets(lit, sizeof lit, fp) != NULL);
      fclose(fp);
      lit[strcspn(lit, "\n")] = 0;
      k += snprintf(cmd + k, sizeof cmd - (size_t)k, " --input %s", lit);
      continue;
    }
    k += snprintf(cmd + k, sizeof cmd - (size_t)k, " --input %s", model_file(model, f));
  }
  char *text = NULL;
  int rc = tu_run(cmd, &text);
  fbx_strbuf why = {0};
  if (rc != 0) {
    fbx_strbuf_printf(&why, "exit %d: %s", rc, text ? text : "");
  } else {
    for (int o = 0; o < m->noutputs; o++) {
      char g[4300], w[32];
      snprintf(g, sizeof g, "%s/out%d.npy", out, o);
      snprintf(w, sizeof w, "out%d.npy", o);
      same(g, model_file(model, w), m->rtol, m->atol, &why);
    }
    for (int i = 0; backward && i < m->ngrads; i++) {
      char g[4600], w[32];
      snprintf(g, sizeof g, "%s/grad_%s.npy", out, names[m->grads[i]]);
      snprintf(w, sizeof w, "grad%d.npy", m->grads[i]);
      same(g, model_file(model, w), 10 * m->rtol, 10 * m->atol, &why);
    }
    for (int i = 0; backward && i < m->npgrads; i++) {
      char g[4600], w[160];
      snprintf(g, sizeof g, "%s/grad_%s.npy", out, m->pgrads[i]);
      snprintf(w, sizeof w, "pgrad_%s.npy", m->pgrads[i]);
      same(g, model_file(model, w), 10 * m->rtol, 10 * m->atol, &why);
    }
  }
  free(text);
  char *r = why.len ? fbx_strbuf_take(&why) : NULL;
  fbx_strbuf_free(&why);
  return r;
}

START_TEST(model_under_every_fuser) {
  const char *model = models[_i];
  meta m = read_meta(model);
  char *tmp = make_tmp();
  char imp[4200], cmd[8192], *text = NULL;
  snprintf(imp, sizeof imp, "%s/import", tmp);
  snprintf(cmd, sizeof cmd, "%s import %s %s", FBX_CLI, model_file(model, "model.pt"), imp);
  int rc = tu_run(cmd, &text);
  ck_assert_msg(rc == 0, "%s: import failed (%d):\n%s", model, rc, text ? text : "");
  free(text);
  char names[16][256];
  ck_assert_int_eq(manifest_inputs(imp, names), m.ninputs);
  int failures = 0;
  fbx_strbuf report = {0};
  for (size_t f = 0; f < sizeof FUSERS / sizeof FUSERS[0]; f++)
    for (int b = 0; b < (m.ngrads ? 2 : 1); b++) {
      char key[256];
      snprintf(key, sizeof key, "%s%s", model, b ? ":bwd" : "");
      const char *pending = pending_reason(key);
      if (!pending && b) pending = pending_reason(model);
      char *why = run_case(model, &m, imp, names, FUSERS[f], b, tmp);
      if (why && pending) {
        printf("pending %s under %s (%s): %.300s\n", key, FUSERS[f], pending, why);
      } else if (why) {
        fbx_strbuf_printf(&report, "%s under %s: %s\n", key, FUSERS[f], why);
        failures++;
      } else if (pending) {
        printf("pending %s passes now under %s: take it off PENDING in %s\n", key, FUSERS[f], __FILE__);
      }
      free(why);
    }
  remove_tmp(tmp);
  ck_assert_msg(failures == 0, "%d run(s) do not match PyTorch:\n%s", failures, report.data ? report.data : "");
  fbx_strbuf_free(&report);
}
END_TEST

/* `fusebox run MODEL.pt` imports into $TMPDIR/fusebox-import-XXXXXX, runs,
 * and leaves nothing behind. */
START_TEST(run_archive_directly) {
  char *tmp = make_tmp();
  char cmd[8192], *text = NULL;
  snprintf(cmd, sizeof cmd, "TMPDIR=%s %s run %s --fuser legacy --input %s --out %s/out", tmp, FBX_CLI,
           model_file("mlp", "model.pt"), model_file("mlp", "in0.npy"), tmp);
  int rc = tu_run(cmd, &text);
  ck_assert_msg(rc == 0, "run model.pt failed (%d):\n%s", rc, text ? text : "");
  free(text);
  fbx_strbuf why = {0};
  char got[4200];
  snprintf(got, sizeof got, "%s/out/out0.npy", tmp);
  ck_assert_msg(same(got, model_file("mlp", "out0.npy"), 1e-4, 1e-5, &why), "%s", why.data);
  /* only the output directory is left */
  snprintf(cmd, sizeof cmd, "ls %s", tmp);
  tu_run(cmd, &text);
  ck_assert_msg(!strcmp(text, "out\n"), "left behind in TMPDIR: %s", text);
  free(text);
  fbx_strbuf_free(&why);
  remove_tmp(tmp);
}
END_TEST

/* explain and bench take an import directory (weights from the manifest;
 * bench --random makes up only the model's own input). */
START_TEST(explain_and_bench_take_the_directory) {
  char *tmp = make_tmp();
  char cmd[8192], *text = NULL;
  snprintf(cmd, sizeof cmd, "%s import %s %s/imp", FBX_CLI, model_file("residual_silu", "model.pt"), tmp);
  ck_assert_int_eq(tu_run(cmd, &text), 0);
  ck_assert_ptr_nonnull(strstr(text, "1 input, 3 weights"));
  free(text);
  snprintf(cmd, sizeof cmd, "%s explain %s/imp --fuser tensorexpr --input %s", FBX_CLI, tmp,
           model_file("residual_silu", "in0.npy"));
  int rc = tu_run(cmd, &text);
  ck_assert_msg(rc == 0 && strstr(text, "fusebox::FusionGroup_0[fuser=\"tensorexpr\"]"), "explain (%d):\n%s", rc, text);
  free(text);
  snprintf(cmd, sizeof cmd, "%s bench %s/imp --fusers none,legacy --iters 2 --random --shape x.1=3,8", FBX_CLI, tmp);
  rc = tu_run(cmd, &text);
  ck_assert_msg(rc == 0 && strstr(text, "\nlegacy "), "bench (%d):\n%s", rc, text);
  free(text);
  remove_tmp(tmp);
}
END_TEST

static void expect_failure(const char *cmd, int want_rc, const char *want_text) {
  char *text = NULL;
  int rc = tu_run(cmd, &text);
  ck_assert_msg(rc == want_rc && strstr(text, want_text), "%s\nexit %d (want %d), output:\n%s\n(want '%s')", cmd, rc,
                want_rc, text, want_text);
  free(text);
}

/* --method imports another exported method (freezing must be told to keep it). */
START_TEST(import_another_method) {
  char *tmp = make_tmp();
  char cmd[8192], *text = NULL;
  snprintf(cmd, sizeof cmd, "%s import %s %s/m --method encode && %s run %s/m --input %s --out %s/o", FBX_CLI,
           model_file("two_methods", "model.pt"), tmp, FBX_CLI, tmp, model_file("two_methods", "in0.npy"), tmp);
  int rc = tu_run(cmd, &text);
  ck_assert_msg(rc == 0, "%s\nexit %d:\n%s", cmd, rc, text);
  free(text);
  char got[4300];
  snprintf(got, sizeof got, "%s/o/out0.npy", tmp);
  fbx_strbuf why = {0};
  same(got, model_file("two_methods", "encode_out0.npy"), 1e-5, 1e-6, &why);
  ck_assert_msg(why.len == 0, "encode: %s", why.data);
  fbx_strbuf_free(&why);
  remove_tmp(tmp);
}
END_TEST

START_TEST(import_errors_are_clear) {
  char *tmp = make_tmp();
  char cmd[8192];
  snprintf(cmd, sizeof cmd, "%s import %s %s/a", FBX_CLI, model_file("mlp", "meta.txt"), tmp);
  expect_failure(cmd, 1, "is not a TorchScript archive");
  snprintf(cmd, sizeof cmd, "%s import %s/nosuch.pt %s/a", FBX_CLI, tmp, tmp);
  expect_failure(cmd, 1, "cannot open");
  /* a zip header and nothing else */
  char bad[4200];
  snprintf(bad, sizeof bad, "%s/bad.pt", tmp);
  FILE *f = fopen(bad, "wb");
  ck_assert_ptr_nonnull(f);
  fputs("PK\003\004 not really a zip file", f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s import %s %s/b", FBX_CLI, bad, tmp);
  expect_failure(cmd, 1, "cannot load");
  snprintf(cmd, sizeof cmd, "%s run %s --input %s", FBX_CLI, bad, model_file("mlp", "in0.npy"));
  expect_failure(cmd, 1, "cannot load");
  snprintf(cmd, sizeof cmd, "%s import %s %s/c --method nosuch", FBX_CLI, model_file("mlp", "model.pt"), tmp);
  expect_failure(cmd, 1, "module __torch__.MLP, method nosuch: the module has no such method");
  snprintf(cmd, sizeof cmd, "%s run %s --input %s", FBX_CLI, tmp, model_file("mlp", "in0.npy"));
  expect_failure(cmd, 1, "has no readable manifest.txt");
  snprintf(cmd, sizeof cmd, "%s import %s", FBX_CLI, model_file("mlp", "model.pt"));
  expect_failure(cmd, 2, "usage: fusebox import");
  remove_tmp(tmp);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("torch_import");
  TCase *tc = tcase_create("models");
  tcase_set_timeout(tc, 600);
  tcase_add_loop_test(tc, model_under_every_fuser, 0, nmodels);
  tcase_add_test(tc, import_another_method);
  tcase_add_test(tc, run_archive_directly);
  tcase_add_test(tc, explain_and_bench_take_the_directory);
  tcase_add_test(tc, import_errors_are_clear);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  list_models();
  if (nmodels < 10) {
    fprintf(stderr, "test_torch_import: %d models under tests/torch/models (run tests/torch/gen_models.py)\n",
            nmodels);
    return 1;
  }
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  for (int i = 0; i < nmodels; i++) free(models[i]);
  return failed ? 1 : 0;
}
