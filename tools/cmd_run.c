/* fusebox run GRAPH [--fuser NAME] [--input [NAME=]FILE.npy|VALUE]... [--out DIR] [--iters N] [--seed S]
 *
 * Runs a graph on inputs from .npy files and scalar literals, and writes or
 * summarizes its outputs. Everything about the inputs (count, names, kinds,
 * dtypes, ranks) is checked before anything runs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "cli.h"
#include "exec/interp.h"
#include "ir/text.h"

static const char *const USAGE =
    "fusebox run GRAPH [--fuser NAME] [--input [NAME=]FILE.npy|VALUE]... [--out DIR] [--iters N] [--seed S]";

static void help(void) {
  printf("usage: %s\n\n"
         "Runs GRAPH (TorchScript IR text) on the given inputs with the reference interpreter.\n\n"
         "  --input [NAME=]X  one graph input: a .npy file, or a scalar literal 3, 0.5, true,\n"
         "                    false, None, or a list of them [1, 2]. NAME is the input's name\n"
         "                    in the graph (x.1) or its base (x) when that is unambiguous;\n"
         "                    inputs without a name fill the remaining ones in graph order.\n"
         "  --out DIR         write output i to DIR/out<i>.npy (created if missing); tuple and\n"
         "                    list outputs are flattened depth-first; int, float and bool\n"
         "                    outputs become 0-d int64, float64 and bool arrays, as PyTorch's.\n"
         "                    Without --out, one summary line per output and the run time.\n"
         "  --iters N         run N times (default 1); the time printed is the median per run.\n"
         "  --seed S          seed of the random generator (rand, dropout in training).\n"
         "  --fuser NAME      which fuser optimizes the graph: `none` (the default; also read\n"
         "                    from FUSEBOX_FUSER) runs the interpreter alone.\n\n"
         "Exit status: 0 success, 1 the graph, an input or the run failed, 2 usage error.\n",
         USAGE);
}

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

/* A list literal of scalars: [1, 2, 3] or [] */
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
    if (!parse_scalar(tok, &v) || v.kind == FBX_IV_NONE) {
      good = false;
      break;
    }
    fbx_status *st = fbx_iv_list_push(&l, v);
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

/* Read one --input value (a file or a literal). */
static fbx_status *load_value(const char *text, fbx_ivalue *out) {
  if (has_suffix(text, ".npy")) {
    fbx_tensor *t = NULL;
    FBX_TRY(fbx_npy_read_file(&t, text));
    *out = fbx_iv_tensor(t);
    return NULL;
  }
  if (parse_scalar(text, out)) return NULL;
  bool ok;
  FBX_TRY(parse_list(text, out, &ok));
  if (ok) return NULL;
  return fbx_status_new(FBX_ERR_INVALID_ARG,
                        "'%s' is neither a .npy file nor a value (3, 0.5, true, false, None, [1, 2])", text);
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

/* Fill vals[0..ninputs) from the --input arguments. */
static fbx_status *gather_inputs(const fbx_graph *g, char **args, int nargs, fbx_ivalue *vals) {
  int n = fbx_graph_ninputs(g);
  bool *set = fbx_calloc((size_t)(n > 0 ? n : 1), sizeof *set);
  if (!set) return fbx_status_nomem();
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
        value = args[a];
        for (idx = 0; idx < n && set[idx]; idx++) {
        }
        if (idx == n) break; /* counted below */
      }
      if ((st = load_value(value, &vals[idx]))) {
        if (fbx_status_code(st) != FBX_ERR_NOMEM && !has_suffix(value, ".npy"))
          st = fbx_status_wrap(st, "input %s", fbx_graph_input(g, idx)->name);
        break;
      }
      set[idx] = true;
    }
  if (!st) {
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
  fbx_free(set);
  return st;
}

/* ---- outputs ---------------------------------------------------------------------------------- */

typedef struct out_ctx {
  const char *dir;
  int next;
  fbx_strbuf *summary;
} out_ctx;

static fbx_status *emit(out_ctx *o, const fbx_ivalue *v) {
  if (v->kind == FBX_IV_TUPLE || v->kind == FBX_IV_LIST) {
    for (int i = 0; i < v->u.l->n; i++) FBX_TRY(emit(o, &v->u.l->items[i]));
    return NULL;
  }
  int k = o->next++;
  if (!o->dir) {
    fbx_strbuf_printf(o->summary, "out%d: ", k);
    fbx_iv_describe(o->summary, v);
    fbx_strbuf_putc(o->summary, '\n');
    return NULL;
  }
  fbx_tensor *t = NULL;
  switch (v->kind) {
    case FBX_IV_TENSOR: t = fbx_tensor_retain(v->u.t); break;
    case FBX_IV_INT: FBX_TRY(fbx_tensor_from_data(&t, FBX_DTYPE_INT64, 0, NULL, &v->u.i)); break;
    case FBX_IV_FLOAT: FBX_TRY(fbx_tensor_from_data(&t, FBX_DTYPE_FLOAT64, 0, NULL, &v->u.f)); break;
    case FBX_IV_BOOL: {
      uint8_t b = v->u.b;
      FBX_TRY(fbx_tensor_from_data(&t, FBX_DTYPE_BOOL, 0, NULL, &b));
      break;
    }
    default: {
      fbx_strbuf d = {0};
      fbx_iv_describe(&d, v);
      fprintf(stderr, "fusebox run: output %d is %s, which has no .npy form: not written\n", k,
              d.data ? d.data : "?");
      fbx_strbuf_free(&d);
      return NULL;
    }
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/out%d.npy", o->dir, k);
  fbx_status *st = fbx_npy_write_file(path, t);
  fbx_tensor_release(t);
  return st;
}

static fbx_status *make_dirs(const char *dir) {
  char buf[4096];
  if (strlen(dir) >= sizeof buf) return fbx_status_new(FBX_ERR_INVALID_ARG, "output directory name too long");
  strcpy(buf, dir);
  for (char *p = buf + 1;; p++) {
    if (*p == '/' || !*p) {
      char c = *p;
      *p = '\0';
      if (mkdir(buf, 0777) && errno != EEXIST)
        return fbx_status_new(FBX_ERR_IO, "cannot create directory %s: %s", buf, strerror(errno));
      *p = c;
      if (!c) break;
    }
  }
  struct stat sb;
  if (stat(dir, &sb) || !S_ISDIR(sb.st_mode)) return fbx_status_new(FBX_ERR_IO, "%s is not a directory", dir);
  return NULL;
}

/* ---- the fuser ------------------------------------------------------------------------------- */

/* Where the plugin host will plug in: select the fuser by name; `none`
 * (or nothing) runs the interpreter alone. */
static int select_fuser(const char *name, const char *from) {
  if (!name || !*name || !strcmp(name, "none")) return 0;
  fprintf(stderr,
          "fusebox run: fuser '%s' (from %s) cannot be used: fusers are not available yet in this build "
          "(only `none`)\n",
          name, from);
  return 2;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* ---- the command ----------------------------------------------------------------------------- */

static bool parse_long(const char *s, long long lo, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (!*s || *end || errno || v < lo) return false;
  *out = v;
  return true;
}

int fbx_cmd_run(int argc, char **argv) {
  const char *path = NULL, *out_dir = NULL, *fuser = NULL;
  long long iters = 1, seed = 0;
  char **inputs = fbx_calloc((size_t)(argc > 0 ? argc : 1), sizeof *inputs);
  if (!inputs) return fbx_cli_fail("run", fbx_status_nomem());
  int ninputs = 0, rc = 0;
  for (int i = 0; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      help();
      fbx_free(inputs);
      return 0;
    } else if (!strcmp(a, "--input") || !strcmp(a, "-i")) {
      if (!has_value) rc = fbx_cli_usage("run", USAGE, "%s needs a value", a);
      else inputs[ninputs++] = argv[++i];
    } else if (!strcmp(a, "--out")) {
      if (!has_value) rc = fbx_cli_usage("run", USAGE, "--out needs a directory");
      else out_dir = argv[++i];
    } else if (!strcmp(a, "--fuser")) {
      if (!has_value) rc = fbx_cli_usage("run", USAGE, "--fuser needs a name");
      else fuser = argv[++i];
    } else if (!strcmp(a, "--iters")) {
      if (!has_value || !parse_long(argv[++i], 1, &iters))
        rc = fbx_cli_usage("run", USAGE, "--iters needs a count >= 1");
    } else if (!strcmp(a, "--seed")) {
      if (!has_value || !parse_long(argv[++i], 0, &seed))
        rc = fbx_cli_usage("run", USAGE, "--seed needs a non-negative integer");
    } else if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9') && a[1] != '.') {
      rc = fbx_cli_usage("run", USAGE, "unknown option '%s'", a);
    } else if (!path) {
      path = a;
    } else {
      rc = fbx_cli_usage("run", USAGE, "more than one graph given ('%s'); inputs go after --input", a);
    }
  }
  if (!rc && !path) rc = fbx_cli_usage("run", USAGE, "no graph given");
  if (!rc) rc = fuser ? select_fuser(fuser, "--fuser") : select_fuser(getenv("FUSEBOX_FUSER"), "FUSEBOX_FUSER");
  if (rc) {
    fbx_free(inputs);
    return rc;
  }

  fbx_graph *g = NULL;
  fbx_interp *it = NULL;
  fbx_ivalue *vals = NULL, *outs = NULL;
  double *times = NULL;
  int nin = 0, nout = 0;
  fbx_strbuf summary = {0};
  fbx_status *st = fbx_graph_parse_file(&g, path);
  if (st) goto done;
  if ((st = fbx_interp_create(&it, g))) goto done;
  nin = fbx_graph_ninputs(g);
  nout = fbx_graph_noutputs(g);
  vals = fbx_calloc((size_t)nin + 1, sizeof *vals);
  outs = fbx_calloc((size_t)nout + 1, sizeof *outs);
  times = fbx_calloc((size_t)iters, sizeof *times);
  if (!vals || !outs || !times) {
    st = fbx_status_nomem();
    goto done;
  }
  if ((st = gather_inputs(g, inputs, ninputs, vals))) goto done;
  if ((st = fbx_interp_check_inputs(it, vals, nin))) goto done;
  if (out_dir && (st = make_dirs(out_dir))) goto done;

  fbx_run_opts opts = {.seed = (uint64_t)seed};
  for (long long k = 0; k < iters; k++) {
    for (int i = 0; i < nout; i++) fbx_iv_release(&outs[i]);
    double t0 = now_ms();
    if ((st = fbx_interp_run(it, vals, nin, outs, &opts))) goto done;
    times[k] = now_ms() - t0;
  }
  out_ctx oc = {.dir = out_dir, .summary = &summary};
  for (int i = 0; i < nout && !st; i++) st = emit(&oc, &outs[i]);
  if (st) goto done;
  if (out_dir) {
    printf("wrote %d output%s to %s\n", oc.next, oc.next == 1 ? "" : "s", out_dir);
  } else {
    qsort(times, (size_t)iters, sizeof *times, cmp_double);
    double med = iters % 2 ? times[iters / 2] : (times[iters / 2 - 1] + times[iters / 2]) / 2;
    if (summary.data) fputs(summary.data, stdout);
    printf("time: %.3f ms per run (median of %lld, fuser none)\n", med, iters);
  }
done:
  if (st) rc = fbx_cli_fail("run", st);
  for (int i = 0; vals && i < nin; i++) fbx_iv_release(&vals[i]);
  for (int i = 0; outs && i < nout; i++) fbx_iv_release(&outs[i]);
  fbx_free(vals);
  fbx_free(outs);
  fbx_free(times);
  fbx_free(inputs);
  fbx_strbuf_free(&summary);
  fbx_interp_destroy(it);
  fbx_graph_destroy(g);
  return rc;
}
