/* The conformance corpus: every case under tests/corpus/cases/ run through the
 * reference interpreter and compared with PyTorch's own outputs.
 *
 * A case directory holds graph.ir, args (one line per graph input: a .npy
 * file name or a scalar literal 3, 0.5, true, false, None), out0.npy...
 * (the outputs flattened depth-first), and optionally tol ("rtol atol") and
 * notes. Outputs must have PyTorch's dtype and shape, and values within the
 * per-dtype tolerance (NaN exactly where PyTorch has NaN, infinities equal).
 *
 * Every case is run; one line per case is printed, then a count and, when
 * cases fail because the op table lacks an op, which ops those are. A failing
 * case is never skipped: the test passes only when every case does. A sample
 * of the cases also goes through `fusebox run --out` to cover the CLI, and
 * every graph under tests/corpus/graphs/ must at least be plannable. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "exec/interp.h"
#include "ir/text.h"
#include "ops/optable.h"
#include "testutil.h"

/* The corpus generator writes ~80 cases; far fewer means it is missing or broken. */
#define MIN_CASES 50
#define CLI_SAMPLE_EVERY 5
#define MAX_CASES 1024
#define MAX_ARGS 32

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
  static _Thread_local char buf[4][4096];
  static _Thread_local int next;
  char *p = buf[next++ & 3];
  snprintf(p, 4096, "%s/%s/%s", tu_src_path("tests/corpus/cases"), name, file);
  return p;
}

/* ---- comparing ----------------------------------------------------------------------------- */

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

static void shape_str(fbx_strbuf *b, const fbx_tensor *t) {
  fbx_strbuf_printf(b, "%s[", fbx_dtype_name(t->dtype));
  for (int i = 0; i < t->ndim; i++) fbx_strbuf_printf(b, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
  fbx_strbuf_putc(b, ']');
}

/* Compare got with want; on mismatch append why to *why and return false. */
static bool compare_tensor(const fbx_tensor *got, const fbx_tensor *want, tol file_tol, fbx_strbuf *why) {
  if (got->dtype != want->dtype || !fbx_tensor_same_shape(got, want)) {
    fbx_strbuf_puts(why, "got ");
    shape_str(why, got);
    fbx_strbuf_puts(why, ", PyTorch gives ");
    shape_str(why, want);
    return false;
  }
  bool floating = fbx_dtype_is_floating(want->dtype);
  tol t = default_tol(want->dtype, file_tol);
  int64_t bad = 0, first = -1;
  double worst = 0;
  for (int64_t i = 0; i < want->numel; i++) {
    bool ok;
    if (floating) {
      double a = fbx_tensor_get_f64(got, i), e = fbx_tensor_get_f64(want, i);
      if (isnan(e) || isnan(a)) ok = isnan(e) && isnan(a);
      else if (isinf(e) || isinf(a)) ok = a == e;
      else {
        double err = fabs(a - e), lim = t.atol + t.rtol * fabs(e);
        ok = err <= lim;
        if (!ok && err / lim > worst) worst = err / lim;
      }
    } else {
      ok = fbx_tensor_get_i64(got, i) == fbx_tensor_get_i64(want, i);
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (!bad) return true;
  fbx_strbuf_printf(why, "%lld of %lld values differ; first at flat index %lld: got ", (long long)bad,
                    (long long)want->numel, (long long)first);
  if (floating)
    fbx_strbuf_printf(why, "%.9g, PyTorch %.9g (rtol %g atol %g)", fbx_tensor_get_f64(got, first),
                      fbx_tensor_get_f64(want, first), t.rtol, t.atol);
  else
    fbx_strbuf_printf(why, "%lld, PyTorch %lld", (long long)fbx_tensor_get_i64(got, first),
                      (long long)fbx_tensor_get_i64(want, first));
  return false;
}

/* A flattened output as a tensor, PyTorch's way (int -> int64, float -> float64, bool -> bool). */
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

static int count_outputs(const char *name) {
  int k = 0;
  char f[32];
  for (;; k++) {
    snprintf(f, sizeof f, "out%d.npy", k);
    if (access(case_file(name, f), R_OK)) return k;
  }
}

static tol read_tol(const char *name) {
  tol t = {0, 0, false};
  char *text = tu_read_file(case_file(name, "tol"), NULL);
  if (text) {
    if (sscanf(text, "%lf %lf", &t.rtol, &t.atol) == 2) t.from_file = true;
    free(text);
  }
  return t;
}

/* Compare flattened outputs with outK.npy; why gets the first problem. */
static bool compare_outputs(const char *name, const fbx_ivalue *outs, int nouts, fbx_strbuf *why) {
  fbx_ivalue flat[256];
  int n = 0;
  for (int i = 0; i < nouts; i++) flatten(&outs[i], flat, &n, 256);
  int want = count_outputs(name);
  if (n != want) {
    fbx_strbuf_printf(why, "%d outputs after flattening, PyTorch gives %d", n, want);
    return false;
  }
  tol file_tol = read_tol(name);
  for (int k = 0; k < n; k++) {
    char f[32];
    snprintf(f, sizeof f, "out%d.npy", k);
    fbx_tensor *exp = NULL, *got = as_tensor(&flat[k]);
    fbx_status *st = fbx_npy_read_file(&exp, case_file(name, f));
    if (st) {
      fbx_strbuf_printf(why, "cannot read %s: %s", f, fbx_status_message(st));
      fbx_status_free(st);
      fbx_tensor_release(got);
      return false;
    }
    bool ok = got != NULL;
    fbx_strbuf_printf(why, "out%d: ", k);
    if (!got) fbx_strbuf_printf(why, "a %s, which PyTorch has no array for", fbx_iv_kind_name(flat[k].kind));
    else ok = compare_tensor(got, exp, file_tol, why);
    fbx_tensor_release(got);
    fbx_tensor_release(exp);
    if (!ok) return false;
    why->len = 0;
    if (why->data) why->data[0] = '\0';
  }
  return true;
}

/* ---- inputs --------------------------------------------------------------------------------- */

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

/* The case's args lines (trimmed), NULL-terminated; free with free_lines. */
static int read_args(const char *name, char **lines, int cap) {
  char *text = tu_read_file(case_file(name, "args"), NULL);
  int n = 0;
  if (!text) return -1;
  char *save = NULL;
  for (char *l = strtok_r(text, "\n", &save); l && n < cap; l = strtok_r(NULL, "\n", &save)) {
    while (*l == ' ') l++;
    size_t len = strlen(l);
    while (len && (l[len - 1] == ' ' || l[len - 1] == '\r')) l[--len] = '\0';
    if (len) lines[n++] = strdup(l);
  }
  free(text);
  return n;
}

static void free_lines(char **lines, int n) {
  for (int i = 0; i < n; i++) free(lines[i]);
}

/* ---- missing ops ---------------------------------------------------------------------------- */

typedef struct missing {
  char *names[256];
  int counts[256];
  int n;
} missing;

static void note_missing(missing *m, const char *kind) {
  for (int i = 0; i < m->n; i++)
    if (!strcmp(m->names[i], kind)) {
      m->counts[i]++;
      return;
    }
  if (m->n < 256) {
    m->names[m->n] = strdup(kind);
    m->counts[m->n++] = 1;
  }
}

/* Node kinds of block b (recursively) that the op table does not have. */
static void unknown_kinds(const fbx_block *b, fbx_strbuf *out, missing *per_case) {
  for (const fbx_node *n = fbx_block_first(b); n; n = n->next) {
    if (!fbx_op_kind_known(n->kind)) {
      bool seen = false;
      for (int i = 0; i < per_case->n; i++) seen |= !strcmp(per_case->names[i], fbx_sym_str(n->kind));
      if (!seen) {
        note_missing(per_case, fbx_sym_str(n->kind));
        fbx_strbuf_printf(out, "%s%s", out->len ? ", " : "", fbx_sym_str(n->kind));
      }
    }
    for (int k = 0; k < n->nblocks; k++) unknown_kinds(n->blocks[k], out, per_case);
  }
}

/* ---- running a case ---------------------------------------------------------------------------- */

typedef enum verdict { V_PASS, V_FAIL, V_MISSING } verdict;

static verdict run_case(const char *name, fbx_strbuf *why, missing *all_missing) {
  fbx_graph *g = NULL;
  fbx_interp *it = NULL;
  fbx_ivalue in[MAX_ARGS] = {0}, out[64] = {0};
  char *lines[MAX_ARGS];
  int nargs = 0, nout = 0;
  verdict v = V_FAIL;
  fbx_status *st = fbx_graph_parse_file(&g, case_file(name, "graph.ir"));
  if (st) {
    fbx_strbuf_printf(why, "parse: %s", fbx_status_message(st));
    goto done;
  }
  if ((nargs = read_args(name, lines, MAX_ARGS)) < 0) {
    fbx_strbuf_puts(why, "no args file");
    nargs = 0;
    goto done;
  }
  for (int i = 0; i < nargs; i++) {
    size_t len = strlen(lines[i]);
    if (len > 4 && !strcmp(lines[i] + len - 4, ".npy")) {
      fbx_tensor *t = NULL;
      if ((st = fbx_npy_read_file(&t, case_file(name, lines[i])))) {
        fbx_strbuf_printf(why, "input %d: %s", i, fbx_status_message(st));
        goto done;
      }
      in[i] = fbx_iv_tensor(t);
    } else if (!parse_scalar(lines[i], &in[i])) {
      fbx_strbuf_printf(why, "args line %d: cannot read '%s'", i + 1, lines[i]);
      goto done;
    }
  }
  if ((st = fbx_interp_create(&it, g))) {
    fbx_strbuf_printf(why, "%s", fbx_status_message(st));
    goto done;
  }
  nout = fbx_interp_noutputs(it);
  if (nout > 64) {
    fbx_strbuf_puts(why, "too many outputs");
    goto done;
  }
  if ((st = fbx_interp_run(it, in, nargs, out, NULL))) {
    const char *m = fbx_status_message(st), *p = strstr(m, "no overload of ");
    fbx_strbuf_printf(why, "%s", m);
    /* the op the run stopped at is not in the table: name every unknown op of the graph */
    missing here = {0};
    fbx_strbuf kinds = {0};
    unknown_kinds(g->block, &kinds, &here);
    if (strstr(m, " is not in fusebox's op table")) {
      fbx_strbuf_free(why);
      *why = (fbx_strbuf){0};
      fbx_strbuf_printf(why, "missing op%s: %s", here.n == 1 ? "" : "s", kinds.data ? kinds.data : "?");
      for (int i = 0; i < here.n; i++) note_missing(all_missing, here.names[i]);
      v = V_MISSING;
    }
    for (int i = 0; i < here.n; i++) free(here.names[i]);
    fbx_strbuf_free(&kinds);
    if (p && v != V_MISSING) { /* the op is known, but not for these arguments (e.g. its Tensor form is missing) */
      char kind[128];
      if (sscanf(p, "no overload of %127s", kind) == 1) {
        char *paren = strstr(p, " accepts (");
        char key[256];
        size_t n = paren ? strcspn(paren + 9, ")") + 1 : 0;
        snprintf(key, sizeof key, "%s%.*s", kind, (int)n, paren ? paren + 9 : "");
        note_missing(all_missing, key);
        v = V_MISSING;
      }
    }
    goto done;
  }
  v = compare_outputs(name, out, nout, why) ? V_PASS : V_FAIL;
done:
  fbx_status_free(st);
  for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
  for (int i = 0; i < nargs; i++) fbx_iv_release(&in[i]);
  free_lines(lines, nargs);
  fbx_interp_destroy(it);
  fbx_graph_destroy(g);
  return v;
}

/* The first two lines of a message, indented, for the per-case line. */
static void print_reason(const char *why) {
  const char *nl = strchr(why, '\n');
  if (!nl) {
    printf("    %s\n", why);
    return;
  }
  printf("    %.*s\n", (int)(nl - why), why);
  const char *nl2 = strchr(nl + 1, '\n');
  printf("    %.*s\n", nl2 ? (int)(nl2 - nl - 1) : (int)strlen(nl + 1), nl + 1);
}

START_TEST(corpus_cases) {
  ck_assert(!fbx_op_table_init());
  list_cases();
  int pass = 0, fail = 0, miss = 0;
  missing all = {0};
  printf("conformance: %d cases in tests/corpus/cases\n", ncases);
  for (int c = 0; c < ncases; c++) {
    fbx_strbuf why = {0};
    verdict v = run_case(case_names[c], &why, &all);
    if (v == V_PASS) {
      pass++;
      printf("  PASS %s\n", case_names[c]);
    } else {
      v == V_MISSING ? miss++ : fail++;
      printf("  FAIL %s\n", case_names[c]);
      print_reason(why.data ? why.data : "?");
    }
    fbx_strbuf_free(&why);
  }
  printf("conformance: %d/%d cases pass, %d fail, %d of them for missing ops\n", pass, ncases, fail + miss, miss);
  if (all.n) {
    printf("ops missing from the op table (cases needing them):");
    for (int i = 0; i < all.n; i++) {
      printf("%s %s (%d)", i ? "," : "", all.names[i], all.counts[i]);
      free(all.names[i]);
    }
    printf("\n");
  }
  fflush(stdout);
  ck_assert_msg(ncases >= MIN_CASES, "only %d corpus cases (expected at least %d): regenerate the corpus", ncases,
                MIN_CASES);
  ck_assert_msg(fail + miss == 0, "%d of %d corpus cases fail (%d for missing ops); see the lines above",
                fail + miss, ncases, miss);
}
END_TEST

/* A sample of the cases through `fusebox run --out`, compared the same way. */
START_TEST(corpus_through_cli) {
  ck_assert(!fbx_op_table_init());
  list_cases();
  char tmp[] = "/tmp/fbx_conformance_XXXXXX";
  ck_assert(mkdtemp(tmp));
  int tried = 0, passed = 0;
  missing ignore = {0};
  int passing = 0;
  for (int c = 0; c < ncases; c++) {
    const char *name = case_names[c];
    fbx_strbuf why = {0};
    verdict api = run_case(name, &why, &ignore);
    fbx_strbuf_free(&why);
    if (api != V_PASS) continue; /* reported by corpus_cases */
    if (passing++ % CLI_SAMPLE_EVERY) continue; /* every 5th passing case, starting with the first */
    tried++;
    char *lines[MAX_ARGS];
    int nargs = read_args(name, lines, MAX_ARGS);
    fbx_strbuf cmd = {0};
    fbx_strbuf_printf(&cmd, "%s run %s --out %s/%s", FBX_CLI, case_file(name, "graph.ir"), tmp, name);
    for (int i = 0; i < nargs; i++) {
      size_t len = strlen(lines[i]);
      bool npy = len > 4 && !strcmp(lines[i] + len - 4, ".npy");
      fbx_strbuf_printf(&cmd, " --input '%s'", npy ? case_file(name, lines[i]) : lines[i]);
    }
    free_lines(lines, nargs);
    char *out = NULL;
    int rc = tu_run(cmd.data, &out);
    fbx_strbuf_free(&cmd);
    ck_assert_msg(rc == 0, "%s: fusebox run exited %d:\n%s", name, rc, out);
    free(out);
    int nout = count_outputs(name);
    fbx_ivalue got[64];
    int k = 0;
    for (; k < nout && k < 64; k++) {
      char p[4096];
      fbx_tensor *t = NULL;
      snprintf(p, sizeof p, "%s/%s/out%d.npy", tmp, name, k);
      fbx_status *st = fbx_npy_read_file(&t, p);
      ck_assert_msg(!st, "%s: %s", name, fbx_status_message(st));
      got[k] = fbx_iv_tensor(t);
    }
    fbx_strbuf w = {0};
    bool ok = compare_outputs(name, got, k, &w);
    ck_assert_msg(ok, "%s through the CLI: %s", name, w.data);
    fbx_strbuf_free(&w);
    for (int i = 0; i < k; i++) fbx_iv_release(&got[i]);
    passed++;
  }
  for (int i = 0; i < ignore.n; i++) free(ignore.names[i]);
  printf("conformance through `fusebox run`: %d sampled cases pass\n", passed);
  char rm[256];
  snprintf(rm, sizeof rm, "rm -rf %s", tmp);
  ck_assert_int_eq(system(rm), 0);
  ck_assert_msg(tried > 0 || ncases == 0, "no sampled case passes through the C API, so none went through the CLI");
}
END_TEST

/* Every graph of the corpus (script, trace and fused graphs) can be planned:
 * its constants materialize and its structure is understood. Ops the table
 * lacks only fail when a run reaches them, so they do not count here. */
START_TEST(corpus_graphs_plan) {
  ck_assert(!fbx_op_table_init());
  DIR *d = opendir(tu_src_path("tests/corpus/graphs"));
  ck_assert_msg(d, "no tests/corpus/graphs directory");
  struct dirent *e;
  int n = 0, bad = 0;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 4 || strcmp(e->d_name + len - 3, ".ir")) continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", tu_src_path("tests/corpus/graphs"), e->d_name);
    fbx_graph *g = NULL;
    fbx_interp *it = NULL;
    fbx_status *st = fbx_graph_parse_file(&g, p);
    if (!st) st = fbx_interp_create(&it, g);
    if (st) {
      printf("  cannot plan %s: %s\n", e->d_name, fbx_status_message(st));
      bad++;
    }
    n++;
    fbx_status_free(st);
    fbx_interp_destroy(it);
    fbx_graph_destroy(g);
  }
  closedir(d);
  printf("corpus graphs: %d of %d can be planned\n", n - bad, n);
  ck_assert_int_eq(bad, 0);
  ck_assert_int_gt(n, 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("conformance");
  TCase *tc = tcase_create("corpus");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, corpus_cases);
  tcase_add_test(tc, corpus_through_cli);
  tcase_add_test(tc, corpus_graphs_plan);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  for (int i = 0; i < ncases; i++) free(case_names[i]);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
