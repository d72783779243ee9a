/* fusebox run GRAPH [--fuser NAME] [--stats] [--input [NAME=]FILE.npy|VALUE]... [--out DIR] [--iters N] [--seed S]
 *
 * Runs a graph on inputs from .npy files and scalar literals through the
 * profiling executor (with the chosen fuser, or none), and writes or
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
#include "exec/executor.h"
#include "host/host.h"
#include "inputs.h"
#include "ir/text.h"

static const char *const USAGE =
    "fusebox run GRAPH [--fuser NAME] [--stats] [--input [NAME=]FILE.npy|VALUE]... [--out DIR] [--iters N] [--seed S]";

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
         "                    launches per run.\n\n"
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

/* ---- the command ----------------------------------------------------------------------------- */

int fbx_cmd_run(int argc, char **argv) {
  const char *path = NULL, *out_dir = NULL, *fuser = NULL;
  long long iters = 1, seed = 0;
  bool stats = false, ran = false;
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
    } else if (!strcmp(a, "--iters")) {
      if (!has_value || !fbx_cli_parse_int(argv[++i], 1, &iters))
        rc = fbx_cli_usage("run", USAGE, "--iters needs a count >= 1");
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
  if (!rc)
    rc = fuser ? select_fuser(fuser, "--fuser", &fz) : select_fuser(getenv("FUSEBOX_FUSER"), "FUSEBOX_FUSER", &fz);
  if (rc) {
    fbx_free(inputs);
    return rc;
  }

  fbx_graph *g = NULL;
  fbx_executor *ex = NULL;
  fbx_ivalue *vals = NULL, *outs = NULL;
  double *times = NULL;
  int nin = 0, nout = 0;
  fbx_strbuf summary = {0};
  fbx_status *st = fbx_graph_parse_file(&g, path);
  if (st) goto done;
  fbx_executor_opts xo = {.struct_size = sizeof xo, .fuser = "none", .fuser_handle = fz};
  if ((st = fbx_executor_create(&ex, g, &xo))) goto done;
  nin = fbx_graph_ninputs(g);
  nout = fbx_graph_noutputs(g);
  vals = fbx_calloc((size_t)nin + 1, sizeof *vals);
  outs = fbx_calloc((size_t)nout + 1, sizeof *outs);
  times = fbx_calloc((size_t)iters, sizeof *times);
  if (!vals || !outs || !times) {
    st = fbx_status_nomem();
    goto done;
  }
  if ((st = fbx_cli_gather_inputs(g, inputs, ninputs, vals))) goto done;
  if ((st = fbx_executor_check_inputs(ex, vals, nin))) goto done;
  if (out_dir && (st = make_dirs(out_dir))) goto done;

  for (long long k = 0; k < iters; k++) {
    for (int i = 0; i < nout; i++) fbx_iv_release(&outs[i]);
    double t0 = now_ms();
    ran = true;
    if ((st = fbx_executor_run_values(ex, vals, nin, outs, nout, (uint64_t)seed))) goto done;
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
    printf("time: %.3f ms per run (median of %lld, fuser %s)\n", med, iters, fbx_executor_fuser_name(ex));
  }
done:;
  bool show_stats = stats && ex && (!st || ran); /* nothing to say when nothing ran */
  if (st) rc = fbx_cli_fail("run", st);
  if (show_stats) {
    fbx_strbuf sb = {0};
    fbx_executor_stats_print(ex, &sb);
    if (sb.data) fputs(sb.data, stderr);
    fbx_strbuf_free(&sb);
  }
  for (int i = 0; vals && i < nin; i++) fbx_iv_release(&vals[i]);
  for (int i = 0; outs && i < nout; i++) fbx_iv_release(&outs[i]);
  fbx_free(vals);
  fbx_free(outs);
  fbx_free(times);
  fbx_free(inputs);
  fbx_strbuf_free(&summary);
  fbx_executor_destroy(ex);
  fbx_fuser_release(fz);
  fbx_graph_destroy(g);
  return rc;
}
