/* fusebox run GRAPH [--fuser NAME] [--stats] [--input [NAME=]FILE.npy|VALUE]... [--out DIR] [--iters N] [--seed S]
 *             [--backward [--grad-output [I=]FILE.npy]...]
 *
 * Runs a graph on inputs from .npy files and scalar literals through the
 * profiling executor (with the chosen fuser, or none), and writes or
 * summarizes its outputs. Everything about the inputs (count, names, kinds,
 * dtypes, ranks) is checked before anything runs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "cli.h"
#include "exec/executor.h"
#include "host/host.h"
#include "inputs.h"
#include "ir/text.h"
#include "model.h"

static const char *const USAGE =
    "fusebox run GRAPH [--fuser NAME] [--stats] [--input [NAME=]FILE.npy|VALUE]... [--out DIR] [--iters N] [--seed S]\n"
    "                   [--backward [--grad-output [I=]FILE.npy]...]";

static void help(void) {
  printf("usage: %s\n\n"
         "Runs GRAPH (TorchScript IR text) on the given inputs with the profiling executor: the\n"
         "first run(s) interpret it, then it is optimized and fused by the chosen fuser.\n\n"
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
         "                    from FUSEBOX_FUSER) runs the interpreter alone; otherwise a\n"
         "                    fuser name (legacy, tensorexpr, nvfuser_like) or a plugin path.\n"
         "  --stats           after the runs, print the executor's statistics to stderr:\n"
         "                    profiling runs, specializations, guard failures, fallbacks and\n"
         "                    why, groups, kernels compiled, cache hits, compile time, kernel\n"
         "                    launches per run.\n"
         "  --backward        also compute gradients: every floating-point tensor input requires\n"
         "                    grad; after the forward, backward runs with a gradient of ones for\n"
         "                    each floating-point tensor output (or what --grad-output gives), and\n"
         "                    DIR/grad_<input>.npy is written for every floating-point tensor\n"
         "                    input, <input> being its name in the graph without %%\n"
         "                    (grad_x.1.npy); zeros where no gradient reaches it. Without --out,\n"
         "                    one summary line per gradient. With --iters, each iteration is a\n"
         "                    forward and a backward.\n"
         "  --grad-output [I=]FILE.npy\n"
         "                    the gradient of output I (flat index, as out<I>.npy); without I=,\n"
         "                    the next output not given one. Its dtype and shape must be the\n"
         "                    output's.\n\n"
         "Environment: FUSEBOX_FUSER, FUSEBOX_PROFILING_RUNS, FUSEBOX_FUSION_STRATEGY (see\n"
         "core/include/fusebox/fusebox.h), FUSEBOX_LOG=exec,fusion to trace decisions.\n\n"
         "Exit status: 0 success, 1 the graph, an input or the run failed, 2 usage error.\n",
         USAGE);
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

/* ---- the fuser ------------------------------------------------------------------------------- */

/* Load the fuser named by --fuser or FUSEBOX_FUSER; `none` (or nothing)
 * leaves *out NULL: the interpreter alone. A fuser that cannot be loaded is a
 * usage error (exit 2). */
static int select_fuser(const char *name, const char *from, fbx_fuser **out) {
  *out = NULL;
  if (!name || !*name || !strcmp(name, "none")) return 0;
  fbx_status *st = fbx_fuser_load(out, name);
  if (!st) return 0;
  fprintf(stderr, "fusebox run: fuser '%s' (from %s) cannot be used: %s\n", name, from, fbx_status_message(st));
  fbx_status_free(st);
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

/* ---- backward --------------------------------------------------------------------------------- */

#define MAX_GRAD_OUTPUTS 256
#define MAX_ITERS 1000000

typedef struct grad_arg {
  int index; /* -1: the next free one */
  const char *file;
} grad_arg;

/* Into out[0..cap) (the executor checked the count against the graph's types). */
static void flatten_tuples(const fbx_ivalue *v, fbx_ivalue *out, int *n, int cap) {
  if (v->kind == FBX_IV_TUPLE) {
    for (int i = 0; i < v->u.l->n; i++) flatten_tuples(&v->u.l->items[i], out, n, cap);
    return;
  }
  if (*n < cap) out[*n] = *v; /* borrowed */
  (*n)++;
}

static bool floating_tensor(const fbx_ivalue *v) {
  return v->kind == FBX_IV_TENSOR && v->u.t && fbx_dtype_is_floating(v->u.t->dtype);
}

static void put_shape(fbx_strbuf *b, const fbx_tensor *t) {
  fbx_strbuf_printf(b, "%s[", fbx_dtype_name(t->dtype));
  for (int d = 0; d < t->ndim; d++) fbx_strbuf_printf(b, "%s%lld", d ? ", " : "", (long long)t->sizes[d]);
  fbx_strbuf_putc(b, ']');
}

/* A tensor of ones with o's dtype and sizes. */
static fbx_status *ones_like(const fbx_tensor *o, fbx_ivalue *out) {
  fbx_tensor *t = NULL;
  FBX_TRY(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT64, o->ndim, o->sizes));
  for (int64_t e = 0; e < t->numel; e++) ((double *)t->data)[e] = 1.0;
  fbx_tensor *c = NULL;
  fbx_status *st = fbx_tensor_clone_as(&c, t, o->dtype);
  fbx_tensor_release(t);
  FBX_TRY(st);
  *out = fbx_iv_tensor(c);
  return NULL;
}

/* The gradient of every flat output: the files given, ones for the other
 * floating tensors (and for each floating element of a Tensor[] output),
 * None elsewhere. A bad --grad-output is a usage error
 * (*usage set). */
static fbx_status *grad_outputs(const fbx_ivalue *flat, int nflat, const grad_arg *args, int nargs, fbx_ivalue *gout,
                                bool *usage) {
  *usage = true;
  int next = 0;
  for (int a = 0; a < nargs; a++) {
    int k = args[a].index;
    if (k < 0) {
      while (next < nflat && gout[next].kind != FBX_IV_NONE) next++;
      k = next;
    }
    if (k >= nflat)
      return fbx_status_new(FBX_ERR_INVALID_ARG, "--grad-output %s: the graph has %d output%s (flat indices 0..%d)",
                            args[a].file, nflat, nflat == 1 ? "" : "s", nflat - 1);
    if (gout[k].kind != FBX_IV_NONE)
      return fbx_status_new(FBX_ERR_INVALID_ARG, "--grad-output %s: output %d already has a gradient", args[a].file, k);
    if (!floating_tensor(&flat[k])) {
      fbx_strbuf d = {0};
      fbx_iv_describe(&d, &flat[k]);
      fbx_status *st = fbx_status_new(FBX_ERR_INVALID_ARG,
                                      "--grad-output %s: output %d is %s, not a floating-point tensor", args[a].file,
                                      k, d.data ? d.data : "?");
      fbx_strbuf_free(&d);
      return st;
    }
    fbx_tensor *t = NULL;
    fbx_status *st = fbx_npy_read_file(&t, args[a].file);
    if (st) return fbx_status_wrap(st, "--grad-output %s", args[a].file);
    const fbx_tensor *o = flat[k].u.t;
    if (t->dtype != o->dtype || !fbx_tensor_same_shape(t, o)) {
      fbx_strbuf b = {0};
      fbx_strbuf_printf(&b, "--grad-output %s: ", args[a].file);
      put_shape(&b, t);
      fbx_strbuf_printf(&b, " where output %d is ", k);
      put_shape(&b, o);
      st = b.oom ? fbx_status_nomem() : fbx_status_new(FBX_ERR_INVALID_ARG, "%s", b.data);
      fbx_strbuf_free(&b);
      fbx_tensor_release(t);
      return st;
    }
    gout[k] = fbx_iv_tensor(t);
  }
  *usage = false;
  for (int k = 0; k < nflat; k++) {
    if (gout[k].kind != FBX_IV_NONE) continue;
    if (flat[k].kind == FBX_IV_LIST) { /* a Tensor[] output: ones for each floating element */
      int n = fbx_iv_list_len(&flat[k]);
      FBX_TRY(fbx_iv_list_new(&gout[k], n));
      for (int i = 0; i < n; i++) {
        const fbx_ivalue *e = fbx_iv_list_at(&flat[k], i);
        fbx_ivalue g = fbx_iv_none();
        fbx_status *st = floating_tensor(e) ? ones_like(e->u.t, &g) : NULL;
        if (!st) st = fbx_iv_list_push(&gout[k], g);
        if (st) {
          fbx_iv_release(&g);
          return st;
        }
      }
      continue;
    }
    if (!floating_tensor(&flat[k])) continue;
    FBX_TRY(ones_like(flat[k].u.t, &gout[k]));
  }
  return NULL;
}

/* Write (or summarize) the gradient of every floating tensor input. */
static fbx_status *emit_grads(const fbx_graph *g, const fbx_ivalue *vals, const fbx_ivalue *gin, const char *dir,
                              fbx_strbuf *summary, int *written) {
  *written = 0;
  for (int i = 0; i < fbx_graph_ninputs(g); i++) {
    if (!floating_tensor(&vals[i])) continue;
    const char *name = fbx_graph_input(g, i)->name;
    fbx_tensor *t = NULL;
    if (gin[i].kind == FBX_IV_TENSOR) t = fbx_tensor_retain(gin[i].u.t);
    else FBX_TRY(fbx_tensor_zeros(&t, vals[i].u.t->dtype, vals[i].u.t->ndim, vals[i].u.t->sizes));
    fbx_status *st = NULL;
    if (dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/grad_%s.npy", dir, name);
      st = fbx_npy_write_file(path, t);
    } else {
      fbx_ivalue v = fbx_iv_tensor(t);
      fbx_strbuf_printf(summary, "grad_%s: ", name);
      fbx_iv_describe(summary, &v);
      fbx_strbuf_puts(summary, gin[i].kind == FBX_IV_TENSOR ? "\n" : " (no gradient reaches it: zeros)\n");
    }
    fbx_tensor_release(t);
    FBX_TRY(st);
    (*written)++;
  }
  return NULL;
}

/* ---- the command ----------------------------------------------------------------------------- */

int fbx_cmd_run(int argc, char **argv) {
  const char *path = NULL, *out_dir = NULL, *fuser = NULL;
  long long iters = 1, seed = 0;
  bool stats = false, ran = false, backward = false;
  grad_arg gargs[MAX_GRAD_OUTPUTS];
  int ngargs = 0;
  fbx_fuser *fz = NULL;
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
    } else if (!strcmp(a, "--stats")) {
      stats = true;
    } else if (!strcmp(a, "--backward")) {
      backward = true;
    } else if (!strcmp(a, "--grad-output")) {
      if (!has_value) {
        rc = fbx_cli_usage("run", USAGE, "--grad-output needs [I=]FILE.npy");
      } else if (ngargs == MAX_GRAD_OUTPUTS) {
        rc = fbx_cli_usage("run", USAGE, "more than %d --grad-output options", MAX_GRAD_OUTPUTS);
      } else {
        const char *v = argv[++i];
        size_t nd = strspn(v, "0123456789");
        gargs[ngargs].index = -1;
        gargs[ngargs].file = v;
        if (nd > 0 && v[nd] == '=') {
          long long k = 0;
          char num[32];
          if (nd >= sizeof num) nd = sizeof num - 1;
          memcpy(num, v, nd);
          num[nd] = '\0';
          if (!fbx_cli_parse_int(num, 0, &k) || k > 1000000) rc = fbx_cli_usage("run", USAGE, "--grad-output %s: bad output index", v);
          gargs[ngargs].index = (int)k;
          gargs[ngargs].file = v + strspn(v, "0123456789") + 1;
        }
        ngargs++;
      }
    } else if (!strcmp(a, "--iters")) {
      if (!has_value || !fbx_cli_parse_int(argv[++i], 1, &iters))
        rc = fbx_cli_usage("run", USAGE, "--iters needs a count >= 1");
      else if (iters > MAX_ITERS) /* one timing slot each: refuse rather than fail to allocate */
        rc = fbx_cli_usage("run", USAGE, "--iters %lld: at most %d", iters, MAX_ITERS);
    } else if (!strcmp(a, "--seed")) {
      if (!has_value || !fbx_cli_parse_int(argv[++i], 0, &seed))
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
  if (!rc && ngargs && !backward) rc = fbx_cli_usage("run", USAGE, "--grad-output needs --backward");
  if (!rc)
    rc = fuser ? select_fuser(fuser, "--fuser", &fz) : select_fuser(getenv("FUSEBOX_FUSER"), "FUSEBOX_FUSER", &fz);
  if (rc) {
    fbx_free(inputs);
    return rc;
  }

  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue *vals = NULL, *outs = NULL, *flat = NULL, *gout = NULL, *gin = NULL, *runvals = NULL;
  bool *written = NULL;
  int nwritten = 0;
  double *times = NULL;
  int nin = 0, nout = 0;
  fbx_strbuf summary = {0};
  /* GRAPH may be an imported model's directory or a .pt archive (tools/model.h). */
  fbx_cli_model model = {0};
  fbx_status *st = fbx_cli_model_open(&model, path, inputs, ninputs);
  if (!st) st = fbx_graph_parse_file(&g, model.graph);
  if (st) goto done;
  fbx_executor_opts xo = {.struct_size = sizeof xo, .fuser = "none", .fuser_handle = fz};
  if ((st = fbx_executor_create(&ex, g, &xo))) goto done;
  nin = fbx_graph_ninputs(g);
  nout = fbx_graph_noutputs(g);
  vals = fbx_calloc((size_t)nin + 1, sizeof *vals);
  outs = fbx_calloc((size_t)nout + 1, sizeof *outs);
  times = fbx_calloc((size_t)iters, sizeof *times);
  runvals = fbx_calloc((size_t)nin + 1, sizeof *runvals);
  written = fbx_calloc((size_t)nin + 1, sizeof *written);
  if (!vals || !outs || !times || !runvals || !written) {
    st = fbx_status_nomem();
    goto done;
  }
  if ((st = fbx_cli_gather_inputs(g, model.args, model.nargs, vals))) goto done;
  if ((st = fbx_executor_check_inputs(ex, vals, nin))) goto done;
  /* Inputs the graph writes (aten::relu_ on an input) are fresh copies for
   * every run, made before the clock starts: otherwise run k would see what
   * run k-1 wrote (issue #12). */
  nwritten = fbx_cli_written_inputs(g, written);
  if (out_dir && (st = fbx_cli_make_dirs(out_dir))) goto done;

  int nflat = fbx_executor_num_outputs(ex);
  if (backward) {
    flat = fbx_calloc((size_t)nflat + 1, sizeof *flat);
    gout = fbx_calloc((size_t)nflat + 1, sizeof *gout);
    gin = fbx_calloc((size_t)nin + 1, sizeof *gin);
    if (!flat || !gout || !gin) {
      st = fbx_status_nomem();
      goto done;
    }
    for (int a = 0; a < ngargs; a++)
      if (gargs[a].index >= nflat) {
        rc = fbx_cli_usage("run", USAGE, "--grad-output %d=%s: the graph has %d output%s (flat indices 0..%d)",
                           gargs[a].index, gargs[a].file, nflat, nflat == 1 ? "" : "s", nflat - 1);
        goto done;
      }
  }
  for (long long k = 0; k < iters; k++) {
    for (int i = 0; i < nout; i++) fbx_iv_release(&outs[i]);
    for (int i = 0; i < nin; i++) fbx_iv_release(&runvals[i]);
    if ((st = fbx_cli_fresh_inputs(vals, nwritten ? written : NULL, nin, runvals))) goto done;
    double t0 = now_ms();
    ran = true;
    if (!backward) {
      if ((st = fbx_executor_run_values(ex, runvals, nin, outs, nout, (uint64_t)seed))) goto done;
    } else {
      fbx_grad_handle *h = NULL;
      if ((st = fbx_executor_forward_values(ex, runvals, nin, NULL, outs, nout, (uint64_t)seed, &h))) goto done;
      int n = 0;
      for (int i = 0; i < nout; i++) flatten_tuples(&outs[i], flat, &n, nflat);
      for (int i = 0; i < nflat; i++) fbx_iv_release(&gout[i]);
      for (int i = 0; i < nin; i++) fbx_iv_release(&gin[i]);
      bool usage = false;
      st = grad_outputs(flat, nflat, gargs, ngargs, gout, &usage);
      if (!st) st = fbx_executor_backward_values(h, gout, nflat, gin, nin);
      fbx_grad_free(h);
      if (st && usage) {
        rc = fbx_cli_usage("run", USAGE, "%s", fbx_status_message(st));
        fbx_status_free(st);
        st = NULL;
        goto done;
      }
      if (st) goto done;
    }
    times[k] = now_ms() - t0;
  }
  out_ctx oc = {.dir = out_dir, .summary = &summary};
  for (int i = 0; i < nout && !st; i++) st = emit(&oc, &outs[i]);
  int ngrads = 0;
  if (!st && backward) st = emit_grads(g, vals, gin, out_dir, &summary, &ngrads);
  if (st) goto done;
  if (out_dir) {
    printf("wrote %d output%s to %s\n", oc.next, oc.next == 1 ? "" : "s", out_dir);
    if (backward) printf("wrote %d gradient%s to %s\n", ngrads, ngrads == 1 ? "" : "s", out_dir);
  } else {
    qsort(times, (size_t)iters, sizeof *times, cmp_double);
    double med = iters % 2 ? times[iters / 2] : (times[iters / 2 - 1] + times[iters / 2]) / 2;
    if (summary.data) fputs(summary.data, stdout);
    printf("time: %.3f ms per %s (median of %lld, fuser %s)\n", med, backward ? "forward+backward" : "run", iters,
           fbx_executor_fuser_name(ex));
  }
done:;
  bool show_stats = stats && ex && (!st || ran) && !rc; /* nothing to say when nothing ran */
  if (st) rc = fbx_cli_fail("run", st);
  if (show_stats) {
    fbx_strbuf sb = {0};
    fbx_executor_stats_print(ex, &sb);
    if (sb.data) fputs(sb.data, stderr);
    fbx_strbuf_free(&sb);
  }
  for (int i = 0; vals && i < nin; i++) fbx_iv_release(&vals[i]);
  for (int i = 0; runvals && i < nin; i++) fbx_iv_release(&runvals[i]);
  for (int i = 0; outs && i < nout; i++) fbx_iv_release(&outs[i]);
  for (int i = 0; gout && i < fbx_executor_num_outputs(ex); i++) fbx_iv_release(&gout[i]);
  for (int i = 0; gin && i < nin; i++) fbx_iv_release(&gin[i]);
  fbx_free(vals);
  fbx_free(runvals);
  fbx_free(written);
  fbx_free(outs);
  fbx_free(flat);
  fbx_free(gout);
  fbx_free(gin);
  fbx_free(times);
  fbx_free(inputs);
  fbx_strbuf_free(&summary);
  fbx_executor_destroy(ex);
  fbx_fuser_release(fz);
  fbx_graph_destroy(g);
  fbx_cli_model_close(&model);
  return rc;
}
