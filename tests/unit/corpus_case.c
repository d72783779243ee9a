/* The conformance corpus for the unit tests; see corpus_case.h. */
#include "corpus_case.h"

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/strbuf.h"
#include "exec/executor.h"
#include "ir/text.h"
#include "testutil.h"

#define CASES "tests/corpus/cases"
#define MODULES "tests/corpus/modules"
#define MAX_FLAT 256

/* ---- cases and their files ------------------------------------------------------------------ */

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Module cases (tests/corpus/gen_modules.py) live in MODULES, named mod_*;
 * tests/corpus/modules_pending.txt lists those that need an op or a gradient
 * the table does not have yet: "mod_NAME WHAT" leaves the case out,
 * "mod_NAME backward WHAT" runs its forward only. */
typedef enum pending_kind { NOT_PENDING, PENDING_ALL, PENDING_BACKWARD } pending_kind;

static pending_kind pending_of(const char *name) {
  static char *text; /* read once per process; kept until exit */
  static int loaded;
  if (!loaded) {
    text = tu_read_file(tu_src_path("tests/corpus/modules_pending.txt"), NULL);
    loaded = 1;
  }
  size_t n = strlen(name);
  for (const char *p = text; p && *p;) {
    if (*p != '#' && !strncmp(p, name, n) && (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
      return !strncmp(p + n, " backward ", 10) ? PENDING_BACKWARD : PENDING_ALL;
    p = strchr(p, '\n');
    if (p) p++;
  }
  return NOT_PENDING;
}

static void list_dir(const char *dir, char ***v, int *n, int *cap) {
  DIR *d = opendir(tu_src_path(dir));
  ck_assert_msg(d, "no %s directory", dir);
  /* FBX_CORPUS_ONLY=SUBSTRING runs only the cases whose name holds it (e.g. mod_). */
  const char *only = getenv("FBX_CORPUS_ONLY");
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.' || !cc_has_file(e->d_name, "graph.ir") || pending_of(e->d_name) == PENDING_ALL) continue;
    if (only && *only && !strstr(e->d_name, only)) continue;
    if (*n == *cap) {
      *cap = *cap ? 2 * *cap : 128;
      *v = realloc(*v, (size_t)*cap * sizeof **v);
      ck_assert(*v);
    }
    (*v)[(*n)++] = strdup(e->d_name);
  }
  closedir(d);
}

int cc_list(char ***names) {
  int n = 0, cap = 0;
  char **v = NULL;
  list_dir(CASES, &v, &n, &cap);
  list_dir(MODULES, &v, &n, &cap);
  if (n) qsort(v, (size_t)n, sizeof *v, cmp_str);
  *names = v;
  return n;
}

bool cc_list_filtered(void) {
  const char *only = getenv("FBX_CORPUS_ONLY");
  return only && *only;
}

void cc_free_names(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

const char *cc_path(const char *name, const char *file) {
  static _Thread_local char buf[8][4096];
  static _Thread_local unsigned next;
  char *p = buf[next++ & 7];
  snprintf(p, sizeof buf[0], "%s/%s/%s", tu_src_path(strncmp(name, "mod_", 4) ? CASES : MODULES), name, file);
  return p;
}

bool cc_has_file(const char *name, const char *file) { return access(cc_path(name, file), R_OK) == 0; }

bool cc_has_input_grads(const char *name) {
  if (pending_of(name) == PENDING_BACKWARD) return false;
  DIR *d = opendir(cc_path(name, ""));
  if (!d) return false;
  bool found = false;
  for (struct dirent *e; !found && (e = readdir(d));)
    found = !strncmp(e->d_name, "grad_", 5) && strncmp(e->d_name, "grad_out", 8);
  closedir(d);
  return found;
}

/* ---- inputs --------------------------------------------------------------------------------- */

int cc_args_lines(const char *name, char **lines, int cap) {
  char *text = tu_read_file(cc_path(name, "args"), NULL);
  if (!text) return -1;
  int n = 0;
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

void cc_free_lines(char **lines, int n) {
  for (int i = 0; i < n; i++) free(lines[i]);
}

bool cc_arg_is_npy(const char *line) {
  size_t len = strlen(line);
  return len > 4 && !strcmp(line + len - 4, ".npy");
}

bool cc_parse_scalar(const char *s, fbx_ivalue *out) {
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

int cc_load_inputs(const char *name, fbx_ivalue *in, int cap, fbx_strbuf *why) {
  char **lines = calloc((size_t)cap + 1, sizeof *lines);
  ck_assert(lines);
  int n = cc_args_lines(name, lines, cap), i = 0;
  if (n < 0) fbx_strbuf_puts(why, "no args file");
  for (; i < n; i++) {
    if (cc_arg_is_npy(lines[i])) {
      fbx_tensor *t = NULL;
      fbx_status *st = fbx_npy_read_file(&t, cc_path(name, lines[i]));
      if (st) {
        fbx_strbuf_printf(why, "input %d: %s", i, fbx_status_message(st));
        fbx_status_free(st);
        break;
      }
      in[i] = fbx_iv_tensor(t);
    } else if (!cc_parse_scalar(lines[i], &in[i])) {
      fbx_strbuf_printf(why, "args line %d: cannot read '%s'", i + 1, lines[i]);
      break;
    }
  }
  cc_free_lines(lines, n);
  free(lines);
  if (i < n) {
    while (i-- > 0) fbx_iv_release(&in[i]);
    return -1;
  }
  return n;
}

/* ---- tolerances and comparing --------------------------------------------------------------- */

cc_tol cc_read_tol(const char *name) {
  cc_tol t = {0, 0, false};
  char *text = tu_read_file(cc_path(name, "tol"), NULL);
  if (text) {
    if (sscanf(text, "%lf %lf", &t.rtol, &t.atol) == 2) t.from_file = true;
    free(text);
  }
  return t;
}

cc_tol cc_output_tol(cc_tol file, fbx_dtype d) {
  if (file.from_file) return file;
  switch (d) {
    case FBX_DTYPE_FLOAT32: return (cc_tol){1e-5, 1e-6, false};
    case FBX_DTYPE_FLOAT64: return (cc_tol){1e-12, 1e-12, false};
    case FBX_DTYPE_FLOAT16: return (cc_tol){1e-3, 1e-3, false};
    case FBX_DTYPE_BFLOAT16: return (cc_tol){1e-2, 1e-2, false};
    default: return (cc_tol){0, 0, false};
  }
}

cc_tol cc_grad_tol(cc_tol file, fbx_dtype d) {
  cc_tol t = cc_output_tol(file, d);
  double rmin = d == FBX_DTYPE_FLOAT64 ? 1e-9 : 1e-4, amin = d == FBX_DTYPE_FLOAT64 ? 1e-10 : 1e-5;
  t.rtol = fmax(10 * t.rtol, rmin);
  t.atol = fmax(10 * t.atol, amin);
  return t;
}

static void shape_str(fbx_strbuf *b, const fbx_tensor *t) {
  fbx_strbuf_printf(b, "%s[", fbx_dtype_name(t->dtype));
  for (int i = 0; i < t->ndim; i++) fbx_strbuf_printf(b, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
  fbx_strbuf_putc(b, ']');
}

bool cc_compare(const fbx_tensor *got, const fbx_tensor *want, cc_tol t, fbx_strbuf *why) {
  if (got->dtype != want->dtype || !fbx_tensor_same_shape(got, want)) {
    fbx_strbuf_puts(why, "got ");
    shape_str(why, got);
    fbx_strbuf_puts(why, ", PyTorch gives ");
    shape_str(why, want);
    return false;
  }
  bool floating = fbx_dtype_is_floating(want->dtype);
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < want->numel; i++) {
    bool ok;
    if (floating) {
      double a = fbx_tensor_get_f64(got, i), e = fbx_tensor_get_f64(want, i);
      if (isnan(e) || isnan(a)) ok = isnan(e) && isnan(a);
      else if (isinf(e) || isinf(a)) ok = a == e;
      else ok = fabs(a - e) <= t.atol + t.rtol * fabs(e);
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

/* ---- outputs -------------------------------------------------------------------------------- */

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

/* Depth-first leaves of v into out[0..cap); *n counts all of them. */
static void flatten(const fbx_ivalue *v, fbx_ivalue *out, int *n, int cap) {
  if (v->kind == FBX_IV_TUPLE || v->kind == FBX_IV_LIST) {
    for (int i = 0; i < v->u.l->n; i++) flatten(&v->u.l->items[i], out, n, cap);
  } else if (*n < cap) {
    out[(*n)++] = *v;
  } else {
    (*n)++;
  }
}

int cc_count_outputs(const char *name) {
  int k = 0;
  char f[32];
  for (;; k++) {
    snprintf(f, sizeof f, "out%d.npy", k);
    if (!cc_has_file(name, f)) return k;
  }
}

bool cc_compare_outputs(const char *name, const fbx_ivalue *outs, int nouts, fbx_strbuf *why) {
  fbx_ivalue flat[MAX_FLAT];
  int n = 0;
  for (int i = 0; i < nouts; i++) flatten(&outs[i], flat, &n, MAX_FLAT);
  int want = cc_count_outputs(name);
  if (n != want) {
    fbx_strbuf_printf(why, "%d outputs after flattening, PyTorch gives %d", n, want);
    return false;
  }
  cc_tol file_tol = cc_read_tol(name);
  for (int k = 0; k < n; k++) {
    char f[32];
    snprintf(f, sizeof f, "out%d.npy", k);
    fbx_tensor *exp = NULL, *got = as_tensor(&flat[k]);
    fbx_status *st = fbx_npy_read_file(&exp, cc_path(name, f));
    bool ok = !st && got;
    if (st) fbx_strbuf_printf(why, "cannot read %s: %s", f, fbx_status_message(st));
    else if (!got) fbx_strbuf_printf(why, "out%d: a %s, which PyTorch has no array for", k, fbx_iv_kind_name(flat[k].kind));
    else {
      fbx_strbuf w = {0};
      ok = cc_compare(got, exp, cc_output_tol(file_tol, exp->dtype), &w);
      if (!ok) fbx_strbuf_printf(why, "out%d: %s", k, w.data);
      fbx_strbuf_free(&w);
    }
    fbx_status_free(st);
    fbx_tensor_release(got);
    fbx_tensor_release(exp);
    if (!ok) return false;
  }
  return true;
}

/* ---- gradients ------------------------------------------------------------------------------ */

int cc_load_grad_outputs(const char *name, fbx_ivalue *gout, bool *defined, int n, fbx_strbuf *why) {
  int read = 0;
  for (int k = 0; k < n; k++) {
    char f[32];
    snprintf(f, sizeof f, "grad_out%d.npy", k);
    defined[k] = false;
    gout[k] = fbx_iv_none();
    if (!cc_has_file(name, f)) continue;
    fbx_tensor *t = NULL;
    fbx_status *st = fbx_npy_read_file(&t, cc_path(name, f));
    if (st) {
      fbx_strbuf_printf(why, "%s: %s", f, fbx_status_message(st));
      fbx_status_free(st);
      for (int j = 0; j < k; j++) fbx_iv_release(&gout[j]);
      return -1;
    }
    gout[k] = fbx_iv_tensor(t);
    defined[k] = true;
    read++;
  }
  return read;
}

static bool all_zero(const fbx_tensor *t) {
  for (int64_t i = 0; i < t->numel; i++)
    if (fbx_tensor_get_f64(t, i) != 0) return false;
  return true;
}

bool cc_check_input_grad(const char *name, const char *input, const fbx_ivalue *grad, bool *compared,
                         fbx_strbuf *why) {
  char f[600];
  snprintf(f, sizeof f, "grad_%s.npy", input);
  *compared = false;
  if (!cc_has_file(name, f)) {
    if (grad->kind != FBX_IV_TENSOR || all_zero(grad->u.t)) return true;
    fbx_strbuf_printf(why, "%%%s has a nonzero gradient where PyTorch has none", input);
    return false;
  }
  if (grad->kind != FBX_IV_TENSOR) {
    fbx_strbuf_printf(why, "no gradient for %%%s", input);
    return false;
  }
  fbx_tensor *want = NULL;
  fbx_status *st = fbx_npy_read_file(&want, cc_path(name, f));
  if (st) {
    fbx_strbuf_printf(why, "%s: %s", f, fbx_status_message(st));
    fbx_status_free(st);
    return false;
  }
  fbx_strbuf w = {0};
  bool ok = cc_compare(grad->u.t, want, cc_grad_tol(cc_read_tol(name), want->dtype), &w);
  if (!ok) fbx_strbuf_printf(why, "grad_%s: %s", input, w.data);
  fbx_strbuf_free(&w);
  fbx_tensor_release(want);
  *compared = ok;
  return ok;
}

/* ---- a case under a fuser ------------------------------------------------------------------ */

#define MAX_ARGS 32
#define MAX_OUTS 64

char *cc_fused_forward(const char *name, const char *fuser, int profiling_runs, int64_t *kernel_runs, int64_t *groups) {
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue in[MAX_ARGS] = {0}, out[MAX_OUTS] = {0};
  fbx_strbuf why = {0};
  int nin = cc_load_inputs(name, in, MAX_ARGS, &why), nout = 0;
  fbx_status *st = nin < 0 ? fbx_status_new(FBX_ERR_INVALID_ARG, "cannot read the inputs")
                           : fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
  /* opts.profiling_runs 0 means "FUSEBOX_PROFILING_RUNS, else 1": the
   * variable says 0 */
  if (profiling_runs == 0) ck_assert(!setenv("FUSEBOX_PROFILING_RUNS", "0", 1));
  else ck_assert(!unsetenv("FUSEBOX_PROFILING_RUNS"));
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = fuser, .profiling_runs = profiling_runs};
  if (!st) st = fbx_executor_create(&ex, g, &o);
  if (!st) nout = fbx_graph_noutputs(g);
  if (nout > MAX_OUTS) st = fbx_status_new(FBX_ERR_INVALID_ARG, "too many outputs");
  for (int r = 0; r < 3 && !st; r++) {
    for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
    st = fbx_executor_run_values(ex, in, nin, out, nout, 1);
  }
  bool ok = !st && cc_compare_outputs(name, out, nout, &why);
  fbx_executor_stats s = {.struct_size = sizeof s};
  if (ex) fbx_executor_stats_get(ex, &s);
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
  if (st) fbx_strbuf_printf(&why, "%s", fbx_status_message(st));
  *kernel_runs += s.kernel_runs;
  *groups += s.groups;
  if (ok && profiling_runs == 0 && s.profiling_runs != 0) {
    fbx_strbuf_printf(&why, "%lld profiling runs with FUSEBOX_PROFILING_RUNS=0", (long long)s.profiling_runs);
    ok = false;
  }
  fbx_status_free(st);
  for (int i = 0; i < nout; i++) fbx_iv_release(&out[i]);
  for (int i = 0; i < MAX_ARGS; i++) fbx_iv_release(&in[i]);
  fbx_executor_destroy(ex);
  fbx_graph_destroy(g);
  unsetenv("FUSEBOX_PROFILING_RUNS");
  if (ok) {
    fbx_strbuf_free(&why);
    return NULL;
  }
  if (!why.len) fbx_strbuf_puts(&why, "failed");
  return fbx_strbuf_take(&why);
}

char *cc_fused_backward(const char *name, const char *fuser, int64_t *bw_kernel_runs) {
  fbx_strbuf why = {0};
  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue in[MAX_ARGS] = {{0}}, out[MAX_OUTS] = {{0}}, gout[MAX_OUTS] = {{0}}, gin[MAX_ARGS] = {{0}};
  int nin = 0, nout = 0, nflat = 0;
  fbx_status *st = fbx_graph_parse_file(&g, cc_path(name, "graph.ir"));
  if (!st) {
    fbx_executor_opts o = {.struct_size = sizeof o, .fuser = fuser, .profiling_runs = 1};
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
    if ((st = fbx_executor_forward_values(ex, in, nin, rg, out, nout, 0, &h))) goto done;
    st = fbx_executor_backward_values(h, gout, nflat, gin, nin);
    fbx_grad_free(h);
    if (st) goto done;
    for (int i = 0; i < nin; i++) {
      bool compared;
      fbx_strbuf w = {0};
      bool ok = cc_check_input_grad(name, fbx_graph_input(g, i)->name, &gin[i], &compared, &w);
      if (!ok) fbx_strbuf_printf(&why, "run %d: %s", it + 1, w.data);
      fbx_strbuf_free(&w);
      if (!ok) goto done;
    }
    for (int i = 0; i < nin; i++) fbx_iv_release(&gin[i]);
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

