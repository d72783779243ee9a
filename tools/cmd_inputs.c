/* Shared helpers of the `fusebox` subcommands (see inputs.h): command-line
 * inputs, random inputs, fuser loading, timing, output comparison. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "inputs.h"
#include "ir/text.h"
#include "passes/passes.h"

/* ---- input values ----------------------------------------------------------------------------- */

static bool has_suffix(const char *s, const char *suf) {
  size_t n = strlen(s), m = strlen(suf);
  return n >= m && !strcmp(s + n - m, suf);
}

/* A scalar literal: 3, -2, 0.5, 1e-5, inf, nan, true, false, True, False, None. */
static bool parse_scalar(const char *s, fbx_ivalue *out) {
  if (!strcmp(s, "None")) {
    *out = fbx_iv_none();
    return true;
  }
  if (!strcmp(s, "true") || !strcmp(s, "True")) {
    *out = fbx_iv_bool(true);
    return true;
  }
  if (!strcmp(s, "false") || !strcmp(s, "False")) {
    *out = fbx_iv_bool(false);
    return true;
  }
  if (!*s) return false;
  char *end;
  errno = 0;
  long long i = strtoll(s, &end, 10);
  if (!*end && !errno) {
    *out = fbx_iv_int(i);
    return true;
  }
  double d = strtod(s, &end);
  if (!*end && end != s) {
    *out = fbx_iv_float(d);
    return true;
  }
  return false;
}

/* A quoted string literal: 'tanh' or "tanh" (no escapes). */
static fbx_status *parse_quoted(const char *s, fbx_ivalue *out, bool *ok) {
  size_t n = strlen(s);
  *ok = n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0];
  return *ok ? fbx_iv_str_new(out, s + 1, n - 2) : NULL;
}

/* A list literal of scalars: [1, 2, 3] or [], of .npy files (a Tensor[]
 * input: [a.npy, b.npy]) or of quoted strings. */
static fbx_status *parse_list(const char *s, fbx_ivalue *out, bool *ok) {
  *ok = false;
  size_t n = strlen(s);
  if (n < 2 || s[0] != '[' || s[n - 1] != ']') return NULL;
  fbx_ivalue l;
  FBX_TRY(fbx_iv_list_new(&l, 4));
  char *body = fbx_strndup(s + 1, n - 2);
  if (!body) {
    fbx_iv_release(&l);
    return fbx_status_nomem();
  }
  char *save = NULL;
  bool good = true;
  for (char *tok = strtok_r(body, ",", &save); tok && good; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') tok++;
    char *e = tok + strlen(tok);
    while (e > tok && e[-1] == ' ') *--e = '\0';
    fbx_ivalue v;
    if (!*tok && !save[0]) break; /* "[]" or "[ ]" */
    bool quoted = false;
    fbx_status *st = NULL;
    if (has_suffix(tok, ".npy")) {
      fbx_tensor *t = NULL;
      if ((st = fbx_npy_read_file(&t, tok))) {
        fbx_free(body);
        fbx_iv_release(&l);
        return st;
      }
      v = fbx_iv_tensor(t);
    } else if ((st = parse_quoted(tok, &v, &quoted))) {
      fbx_free(body);
      fbx_iv_release(&l);
      return st;
    } else if (!quoted && (!parse_scalar(tok, &v) || v.kind == FBX_IV_NONE)) {
      good = false;
      break;
    }
    st = fbx_iv_list_push(&l, v);
    if (st) {
      fbx_free(body);
      fbx_iv_release(&l);
      return st;
    }
  }
  fbx_free(body);
  if (!good) {
    fbx_iv_release(&l);
    return NULL;
  }
  *out = l;
  *ok = true;
  return NULL;
}

fbx_status *fbx_cli_load_value(const char *text, fbx_ivalue *out) {
  if (has_suffix(text, ".npy")) {
    fbx_tensor *t = NULL;
    FBX_TRY(fbx_npy_read_file(&t, text));
    *out = fbx_iv_tensor(t);
    return NULL;
  }
  if (parse_scalar(text, out)) return NULL;
  bool ok;
  FBX_TRY(parse_quoted(text, out, &ok));
  if (ok) return NULL;
  FBX_TRY(parse_list(text, out, &ok));
  if (ok) return NULL;
  return fbx_status_new(FBX_ERR_INVALID_ARG,
                        "'%s' is neither a .npy file nor a value (3, 0.5, true, false, None, 'text', [1, 2], "
                        "[a.npy, b.npy])", text);
}

/* ---- input names ------------------------------------------------------------------------------ */

/* "x.1" -> base "x" (the part before the last '.' followed only by digits). */
static size_t base_len(const char *name) {
  const char *dot = strrchr(name, '.');
  if (!dot || !dot[1]) return strlen(name);
  for (const char *p = dot + 1; *p; p++)
    if (*p < '0' || *p > '9') return strlen(name);
  return (size_t)(dot - name);
}

static void list_inputs(fbx_strbuf *b, const fbx_graph *g) {
  for (int i = 0; i < fbx_graph_ninputs(g); i++) {
    const fbx_value *v = fbx_graph_input(g, i);
    fbx_strbuf_printf(b, "%s%s : ", i ? ", " : "", v->name);
    fbx_type_print(b, v->type);
  }
}

/* Which graph input `name` means: its full name, or its base when only one
 * input has that base. Returns the index, or -1 with *st set. */
static int find_input(const fbx_graph *g, const char *name, size_t len, fbx_status **st) {
  int n = fbx_graph_ninputs(g);
  for (int i = 0; i < n; i++) {
    const char *in = fbx_graph_input(g, i)->name;
    if (strlen(in) == len && !strncmp(in, name, len)) return i;
  }
  int found = -1, count = 0;
  for (int i = 0; i < n; i++) {
    const char *in = fbx_graph_input(g, i)->name;
    if (base_len(in) == len && !strncmp(in, name, len)) {
      found = i;
      count++;
    }
  }
  if (count == 1) return found;
  fbx_strbuf b = {0};
  if (count == 0) {
    fbx_strbuf_printf(&b, "the graph has no input named '%.*s' (inputs: ", (int)len, name);
    list_inputs(&b, g);
    fbx_strbuf_putc(&b, ')');
  } else {
    fbx_strbuf_printf(&b, "input name '%.*s' is ambiguous: it could be", (int)len, name);
    for (int i = 0, k = 0; i < n; i++) {
      const char *in = fbx_graph_input(g, i)->name;
      if (base_len(in) == len && !strncmp(in, name, len))
        fbx_strbuf_printf(&b, "%s %s", k++ ? (k == count ? " or" : ",") : "", in);
    }
    fbx_strbuf_puts(&b, "; use the full name");
  }
  *st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_INVALID_ARG, "%s", b.data);
  fbx_strbuf_free(&b);
  return -1;
}

/* NAME=VALUE when NAME looks like a value name (letters, digits, '_', '.'). */
static const char *split_name(const char *arg, size_t *name_len) {
  const char *eq = strchr(arg, '=');
  if (!eq || eq == arg) return NULL;
  for (const char *p = arg; p < eq; p++)
    if (!(*p == '_' || *p == '.' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
      return NULL;
  *name_len = (size_t)(eq - arg);
  return eq + 1;
}

static fbx_status *gather(const fbx_graph *g, char **args, int nargs, fbx_ivalue *vals, bool *set, bool partial);

fbx_status *fbx_cli_gather_inputs(const fbx_graph *g, char **args, int nargs, fbx_ivalue *vals) {
  int n = fbx_graph_ninputs(g);
  bool *set = fbx_calloc((size_t)(n > 0 ? n : 1), sizeof *set);
  if (!set) return fbx_status_nomem();
  fbx_status *st = gather(g, args, nargs, vals, set, false);
  fbx_free(set);
  return st;
}

/* --input values into vals, marking set[]; partial: named ones only, and
 * inputs may stay unset (the caller makes them up). */
static fbx_status *gather(const fbx_graph *g, char **args, int nargs, fbx_ivalue *vals, bool *set, bool partial) {
  int n = fbx_graph_ninputs(g);
  fbx_status *st = NULL;
  /* named first, then positional ones fill the rest in order */
  for (int pass = 0; pass < 2 && !st; pass++)
    for (int a = 0; a < nargs && !st; a++) {
      size_t len;
      const char *value = split_name(args[a], &len);
      int idx;
      if (pass == 0) {
        if (!value) continue;
        if ((idx = find_input(g, args[a], len, &st)) < 0) break;
        if (set[idx]) {
          st = fbx_status_new(FBX_ERR_INVALID_ARG, "input %s is given twice", fbx_graph_input(g, idx)->name);
          break;
        }
      } else {
        if (value) continue;
        if (partial) {
          st = fbx_status_new(FBX_ERR_INVALID_ARG,
                              "--input %s: with --random, name the input (--input NAME=VALUE); the others are made up",
                              args[a]);
          break;
        }
        value = args[a];
        for (idx = 0; idx < n && set[idx]; idx++) {
        }
        if (idx == n) break; /* counted below */
      }
      const fbx_type *ty = fbx_graph_input(g, idx)->type;
      bool bare_str = ty && ty->kind == FBX_TYPE_STR && !(value[0] == '\'' || value[0] == '"');
      if (bare_str ? (st = fbx_iv_str_new(&vals[idx], value, strlen(value))) != NULL
                   : (st = fbx_cli_load_value(value, &vals[idx])) != NULL) {
        if (fbx_status_code(st) != FBX_ERR_NOMEM && !has_suffix(value, ".npy"))
          st = fbx_status_wrap(st, "input %s", fbx_graph_input(g, idx)->name);
        break;
      }
      set[idx] = true;
    }
  if (!st && !partial) {
    int given = 0;
    for (int i = 0; i < n; i++) given += set[i];
    if (given < n || given < nargs) {
      fbx_strbuf b = {0};
      fbx_strbuf_printf(&b, "the graph takes %d input%s (", n, n == 1 ? "" : "s");
      list_inputs(&b, g);
      fbx_strbuf_printf(&b, "), %d given", nargs);
      if (given < n && given == nargs) {
        fbx_strbuf_puts(&b, "; missing:");
        for (int i = 0; i < n; i++)
          if (!set[i]) fbx_strbuf_printf(&b, " %s", fbx_graph_input(g, i)->name);
      }
      st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_INVALID_ARG, "%s", b.data);
      fbx_strbuf_free(&b);
    }
  }
  return st;
}

/* ---- random inputs ------------------------------------------------------------------------------ */

static uint64_t next_rand(uint64_t *s) { /* splitmix64 */
  uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool fbx_cli_parse_shape(const char *text, fbx_cli_shape *out) {
  memset(out, 0, sizeof *out);
  size_t len;
  const char *dims = split_name(text, &len);
  if (dims) {
    out->name = text;
    out->name_len = len;
  } else {
    dims = text;
  }
  const char *p = dims;
  int64_t numel = 1;
  for (;;) {
    if (*p < '0' || *p > '9' || out->rank == FBX_MAX_DIMS) return false;
    char *end;
    errno = 0;
    long long d = strtoll(p, &end, 10);
    if (errno || d > (1LL << 40)) return false;
    out->sizes[out->rank++] = d;
    /* the product only grows while no size is 0; 2^40 keeps it far from overflow */
    if (d > 0 && numel > (1LL << 40) / d) return false;
    numel *= d > 0 ? d : 1;
    p = end;
    if (!*p) return true;
    if (*p++ != ',') return false;
  }
}

/* The shape for input i: a named one, else the default where the IR type
 * lacks sizes; NULL when the IR type decides. */
static fbx_status *shape_for(const fbx_graph *g, int i, const fbx_cli_shape *shapes, int nshapes,
                             const fbx_cli_shape **out) {
  *out = NULL;
  const fbx_cli_shape *dflt = NULL;
  for (int k = 0; k < nshapes; k++) {
    if (!shapes[k].name) {
      dflt = &shapes[k];
      continue;
    }
    fbx_status *st = NULL;
    int idx = find_input(g, shapes[k].name, shapes[k].name_len, &st);
    if (idx < 0) return fbx_status_wrap(st, "--shape %.*s", (int)shapes[k].name_len, shapes[k].name);
    if (idx != i) continue;
    if (*out)
      return fbx_status_new(FBX_ERR_INVALID_ARG, "--shape: input %s is given two shapes", fbx_graph_input(g, i)->name);
    *out = &shapes[k];
  }
  if (*out) return NULL;
  const fbx_type *t = fbx_graph_input(g, i)->type;
  bool complete = t && t->kind == FBX_TYPE_TENSOR && t->rank >= 0;
  for (int d = 0; complete && d < t->rank; d++) complete = t->sizes[d] >= 0;
  if (!complete) *out = dflt;
  return NULL;
}

static fbx_status *random_inputs(const fbx_graph *g, uint64_t seed, const fbx_cli_shape *shapes, int nshapes,
                                 fbx_ivalue *vals, const bool *given);

fbx_status *fbx_cli_random_inputs_shaped(const fbx_graph *g, uint64_t seed, const fbx_cli_shape *shapes, int nshapes,
                                         fbx_ivalue *vals) {
  return random_inputs(g, seed, shapes, nshapes, vals, NULL);
}

fbx_status *fbx_cli_mixed_inputs(const fbx_graph *g, char **args, int nargs, uint64_t seed,
                                 const fbx_cli_shape *shapes, int nshapes, fbx_ivalue *vals) {
  int n = fbx_graph_ninputs(g);
  bool *set = fbx_calloc((size_t)(n > 0 ? n : 1), sizeof *set);
  if (!set) return fbx_status_nomem();
  fbx_status *st = gather(g, args, nargs, vals, set, true);
  if (!st) st = random_inputs(g, seed, shapes, nshapes, vals, set);
  fbx_free(set);
  return st;
}

static fbx_status *random_inputs(const fbx_graph *g, uint64_t seed, const fbx_cli_shape *shapes, int nshapes,
                                 fbx_ivalue *vals, const bool *given) {
  uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1;
  for (int i = 0; i < fbx_graph_ninputs(g); i++) {
    if (given && given[i]) continue;
    const fbx_value *v = fbx_graph_input(g, i);
    const fbx_type *t = v->type;
    const fbx_cli_shape *sh;
    FBX_TRY(shape_for(g, i, shapes, nshapes, &sh));
    bool complete = t && t->kind == FBX_TYPE_TENSOR && (sh || t->rank >= 0);
    for (int d = 0; complete && !sh && d < t->rank; d++) complete = t->sizes[d] >= 0;
    if (!complete) {
      fbx_strbuf b = {0};
      fbx_type_print(&b, t);
      fbx_status *st = fbx_status_new(FBX_ERR_INVALID_ARG,
                                      "--random: input %%%s : %s is not a tensor with known sizes; "
                                      "give its sizes with --shape [NAME=]D0,D1,... or the input with "
                                      "--input [NAME=]FILE.npy|VALUE",
                                      v->name, b.data ? b.data : "?");
      fbx_strbuf_free(&b);
      return st;
    }
    fbx_dtype dt = t->dtype != FBX_DTYPE_UNDEFINED ? t->dtype : FBX_DTYPE_FLOAT32;
    fbx_tensor *x = NULL;
    FBX_TRY(fbx_tensor_empty(&x, dt, sh ? sh->rank : t->rank, sh ? sh->sizes : t->sizes));
    if (dt == FBX_DTYPE_FLOAT32) {
      /* the common case of large benchmark inputs, without a call per element */
      float *p = x->data;
      for (int64_t k = 0; k < x->numel; k++) p[k] = (float)((double)(next_rand(&s) >> 11) * (2.0 / 9007199254740992.0) - 1.0);
    } else {
      bool fl = fbx_dtype_is_floating(dt);
      for (int64_t k = 0; k < x->numel; k++) {
        uint64_t r = next_rand(&s);
        if (fl) fbx_tensor_set_f64(x, k, (double)(r >> 11) * (2.0 / 9007199254740992.0) - 1.0);
        else if (dt == FBX_DTYPE_BOOL) fbx_tensor_set_i64(x, k, (int64_t)(r & 1));
        else fbx_tensor_set_i64(x, k, (int64_t)(r % 10));
      }
    }
    vals[i] = fbx_iv_tensor(x);
  }
  return NULL;
}

fbx_status *fbx_cli_random_inputs(const fbx_graph *g, uint64_t seed, fbx_ivalue *vals) {
  return fbx_cli_random_inputs_shaped(g, seed, NULL, 0, vals);
}

/* ---- fusers, time ------------------------------------------------------------------------------- */

fbx_status *fbx_cli_load_fuser(const char *name, fbx_fuser **out) {
  *out = NULL;
  if (!name || !*name || !strcmp(name, "none")) return NULL;
  return fbx_fuser_load(out, name);
}

double fbx_cli_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

double fbx_cli_median(double *v, int n) {
  if (n <= 0) return 0;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- comparing ------------------------------------------------------------------------------------ */

static void flatten_one(const fbx_ivalue *v, fbx_ivalue *out, int *n, int cap) {
  if (v->kind == FBX_IV_TUPLE || v->kind == FBX_IV_LIST) {
    for (int i = 0; i < v->u.l->n; i++) flatten_one(&v->u.l->items[i], out, n, cap);
    return;
  }
  if (*n < cap) out[*n] = *v;
  (*n)++;
}

int fbx_cli_flatten(const fbx_ivalue *v, int n, fbx_ivalue *out, int cap) {
  int k = 0;
  for (int i = 0; i < n; i++) flatten_one(&v[i], out, &k, cap);
  return k;
}

/* A flattened value as a tensor, PyTorch's way (int -> int64, float ->
 * float64, bool -> bool, 0-d); NULL for anything else. */
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

static void shape_str(fbx_strbuf *b, const fbx_tensor *t) {
  fbx_strbuf_printf(b, "%s[", fbx_dtype_name(t->dtype));
  for (int i = 0; i < t->ndim; i++) fbx_strbuf_printf(b, "%s%lld", i ? ", " : "", (long long)t->sizes[i]);
  fbx_strbuf_putc(b, ']');
}

#define FLAT_CAP 256

/* Pairs of flattened tensors, or false with why. */
typedef bool (*pair_fn)(void *ctx, int k, const fbx_tensor *got, const fbx_tensor *want, fbx_strbuf *why);

static bool each_pair(const fbx_ivalue *got, int ngot, const fbx_ivalue *want, int nwant, pair_fn fn, void *ctx,
                      fbx_strbuf *why) {
  fbx_ivalue fg[FLAT_CAP], fw[FLAT_CAP];
  int ng = fbx_cli_flatten(got, ngot, fg, FLAT_CAP), nw = fbx_cli_flatten(want, nwant, fw, FLAT_CAP);
  if (ng != nw || ng > FLAT_CAP) {
    fbx_strbuf_printf(why, "%d values after flattening, the reference gives %d", ng, nw);
    return false;
  }
  for (int k = 0; k < ng; k++) {
    if (fg[k].kind == FBX_IV_NONE && fw[k].kind == FBX_IV_NONE) continue;
    fbx_tensor *a = as_tensor(&fg[k]), *b = as_tensor(&fw[k]);
    bool ok;
    if (!a || !b) {
      ok = fg[k].kind == fw[k].kind;
      if (!ok)
        fbx_strbuf_printf(why, "output %d: a %s, the reference gives a %s", k, fbx_iv_kind_name(fg[k].kind),
                          fbx_iv_kind_name(fw[k].kind));
    } else if (a->dtype != b->dtype || !fbx_tensor_same_shape(a, b)) {
      fbx_strbuf_printf(why, "output %d: got ", k);
      shape_str(why, a);
      fbx_strbuf_puts(why, ", the reference gives ");
      shape_str(why, b);
      ok = false;
    } else {
      ok = fn(ctx, k, a, b, why);
    }
    fbx_tensor_release(a);
    fbx_tensor_release(b);
    if (!ok) return false;
  }
  return true;
}

typedef struct err_ctx {
  double abs, rel;
} err_ctx;

static bool err_pair(void *vctx, int k, const fbx_tensor *a, const fbx_tensor *b, fbx_strbuf *why) {
  err_ctx *c = vctx;
  bool floating = fbx_dtype_is_floating(b->dtype);
  for (int64_t i = 0; i < b->numel; i++) {
    double x, y;
    if (floating) {
      x = fbx_tensor_get_f64(a, i);
      y = fbx_tensor_get_f64(b, i);
    } else {
      x = (double)fbx_tensor_get_i64(a, i);
      y = (double)fbx_tensor_get_i64(b, i);
    }
    if (isnan(x) || isnan(y) || isinf(x) || isinf(y)) {
      if ((isnan(x) && isnan(y)) || x == y) continue;
      fbx_strbuf_printf(why, "output %d, flat index %lld: got %g, the reference gives %g", k, (long long)i, x, y);
      return false;
    }
    double d = fabs(x - y), r = d / (fabs(y) > 1e-30 ? fabs(y) : 1e-30);
    if (d == 0) r = 0;
    if (d > c->abs) c->abs = d;
    if (r > c->rel) c->rel = r;
  }
  return true;
}

bool fbx_cli_max_error(const fbx_ivalue *got, int ngot, const fbx_ivalue *want, int nwant, double *max_abs,
                       double *max_rel, fbx_strbuf *why) {
  err_ctx c = {0, 0};
  bool ok = each_pair(got, ngot, want, nwant, err_pair, &c, why);
  *max_abs = c.abs;
  *max_rel = c.rel;
  return ok;
}

typedef struct tol_ctx {
  double rtol, atol;
} tol_ctx;

static bool tol_pair(void *vctx, int k, const fbx_tensor *got, const fbx_tensor *want, fbx_strbuf *why) {
  tol_ctx *c = vctx;
  bool floating = fbx_dtype_is_floating(want->dtype);
  double rtol = c->rtol, atol = c->atol;
  if (rtol < 0 || atol < 0) {
    switch (want->dtype) {
      case FBX_DTYPE_FLOAT64: rtol = atol = 1e-12; break;
      case FBX_DTYPE_FLOAT16: rtol = atol = 1e-3; break;
      case FBX_DTYPE_BFLOAT16: rtol = atol = 1e-2; break;
      default: rtol = 1e-5, atol = 1e-6; break;
    }
  }
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < want->numel; i++) {
    bool ok;
    if (floating) {
      double a = fbx_tensor_get_f64(got, i), e = fbx_tensor_get_f64(want, i);
      if (isnan(e) || isnan(a)) ok = isnan(e) && isnan(a);
      else if (isinf(e) || isinf(a)) ok = a == e;
      else ok = fabs(a - e) <= atol + rtol * fabs(e);
    } else {
      ok = fbx_tensor_get_i64(got, i) == fbx_tensor_get_i64(want, i);
    }
    if (!ok && bad++ == 0) first = i;
  }
  if (!bad) return true;
  fbx_strbuf_printf(why, "output %d: %lld of %lld values differ; first at flat index %lld: got ", k, (long long)bad,
                    (long long)want->numel, (long long)first);
  if (floating)
    fbx_strbuf_printf(why, "%.9g, expected %.9g (rtol %g atol %g)", fbx_tensor_get_f64(got, first),
                      fbx_tensor_get_f64(want, first), rtol, atol);
  else
    fbx_strbuf_printf(why, "%lld, expected %lld", (long long)fbx_tensor_get_i64(got, first),
                      (long long)fbx_tensor_get_i64(want, first));
  return false;
}

bool fbx_cli_allclose(const fbx_ivalue *got, int ngot, const fbx_ivalue *want, int nwant, double rtol, double atol,
                      fbx_strbuf *why) {
  tol_ctx c = {rtol, atol};
  return each_pair(got, ngot, want, nwant, tol_pair, &c, why);
}

bool fbx_cli_parse_int(const char *s, long long lo, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < lo) return false;
  *out = v;
  return true;
}

/* ---- inputs a graph writes ------------------------------------------------------------ */

int fbx_cli_written_inputs(const fbx_graph *g, bool *mask) {
  unsigned m = fbx_graph_mutation_mask(g);
  int n = 0;
  for (int i = 0; i < fbx_graph_ninputs(g); i++) {
    mask[i] = m && fbx_type_may_be_written(fbx_graph_input(g, i)->type, m);
    n += mask[i];
  }
  return n;
}

static fbx_status *deep_copy(const fbx_ivalue *v, fbx_ivalue *out) {
  *out = fbx_iv_none();
  if (v->kind == FBX_IV_TENSOR) {
    const fbx_tensor *t = v->u.t;
    fbx_tensor *c = NULL;
    FBX_TRY(fbx_tensor_empty_strided(&c, t->dtype, t->ndim, t->sizes, t->strides));
    fbx_status *st = fbx_tensor_copy_(c, t);
    if (st) {
      fbx_tensor_release(c);
      return st;
    }
    *out = fbx_iv_tensor(c);
    return NULL;
  }
  if (v->kind == FBX_IV_LIST || v->kind == FBX_IV_TUPLE) {
    int n = v->u.l->n;
    fbx_ivalue c;
    if (v->kind == FBX_IV_TUPLE) FBX_TRY(fbx_iv_tuple_new(&c, n));
    else FBX_TRY(fbx_iv_list_new(&c, n));
    for (int i = 0; i < n; i++) {
      fbx_ivalue item;
      fbx_status *st = deep_copy(&v->u.l->items[i], &item);
      if (!st) {
        if (v->kind == FBX_IV_TUPLE) c.u.l->items[i] = item;
        else st = fbx_iv_list_push(&c, item);
      }
      if (st) {
        fbx_iv_release(&c);
        return st;
      }
    }
    *out = c;
    return NULL;
  }
  *out = *v;
  fbx_iv_retain(out);
  return NULL;
}

fbx_status *fbx_cli_fresh_inputs(const fbx_ivalue *vals, const bool *mask, int n, fbx_ivalue *out) {
  for (int i = 0; i < n; i++) out[i] = fbx_iv_none();
  for (int i = 0; i < n; i++) {
    fbx_status *st = NULL;
    if (mask && mask[i]) {
      st = deep_copy(&vals[i], &out[i]);
    } else {
      out[i] = vals[i];
      fbx_iv_retain(&out[i]);
    }
    if (st) {
      for (int k = 0; k < i; k++) fbx_iv_release(&out[k]);
      return st;
    }
  }
  return NULL;
}
