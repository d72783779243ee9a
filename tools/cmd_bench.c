/* fusebox bench GRAPH [--input [NAME=]X]... | --random  --fusers A,B,... [--iters N] [--seed S] [--json FILE]
 *
 * Compares fusers on one graph and one set of inputs. Each fuser gets its
 * own executor, warmed past profiling (FUSEBOX_PROFILING_RUNS + 2 runs: the
 * profiling runs, the run that compiles, one warm run); then the timed runs
 * go round-robin over the fusers, so that drifts of the machine (frequency,
 * other load) hit every fuser alike. Per fuser: compile time (the
 * executor's stats), median and minimum time per run, fusion groups,
 * kernel launches per run, the speedup of its median over `none`'s, and the
 * largest absolute and relative error of its outputs against the reference
 * interpreter. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/strbuf.h"
#include "cli.h"
#include "exec/executor.h"
#include "exec/interp.h"
#include "host/host.h"
#include "inputs.h"
#include "ir/text.h"

static const char *const USAGE = "fusebox bench GRAPH [--input [NAME=]X]... | --random  --fusers A,B,... "
                                 "[--iters N] [--seed S] [--json FILE]";

#define MAX_FUSERS 16

static void help(void) {
  printf("usage: %s\n\n"
         "Runs GRAPH with each fuser (its own profiling executor per fuser), warms each past\n"
         "profiling, then times --iters runs per fuser, interleaved round-robin. Prints one row\n"
         "per fuser:\n"
         "  compile_ms      time inside the fuser's compiles (executor stats)\n"
         "  median_ms/min_ms  time per run\n"
         "  groups          fusion groups the fuser made (all specializations)\n"
         "  launches/run    kernels launched per timed run\n"
         "  speedup         none's median / this fuser's median (when none is benchmarked)\n"
         "  max_abs/max_rel largest error of the outputs against the reference interpreter\n"
         "  fallbacks       group runs that went to the interpreter during the timed runs\n\n"
         "  --fusers LIST    comma list of fuser names or plugin paths; `none` is the\n"
         "                   interpreter alone (the baseline of the speedup)\n"
         FBX_CLI_INPUT_HELP
         "  --random         make every input up: tensors whose IR type gives dtype and sizes\n"
         "                   (Float(4, 8)) get random values.\n"
         "  --iters N        timed runs per fuser (default 20)\n"
         "  --seed S         seed for --random and the graph's random ops (default 0)\n"
         "  --json FILE      also write the results as JSON\n\n"
         "Exit status: 0 success, 1 the graph, an input or a run failed (or a fuser's outputs\n"
         "do not match the reference's structure), 2 usage error or unknown fuser.\n",
         USAGE);
}

typedef struct bench_row {
  const char *name;   /* as given */
  fbx_fuser *fuser;   /* NULL for none */
  fbx_executor *ex;
  double *times;
  double compile_ms, median_ms, min_ms;
  int64_t groups;
  double launches_per_run;
  int64_t fallbacks;
  double max_abs, max_rel;
  bool outputs_ok;
  char *mismatch;
} bench_row;

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static void json_num(FILE *f, double v) {
  if (isfinite(v)) fprintf(f, "%.9g", v);
  else fputs("null", f);
}

static fbx_status *write_json(const char *path, const char *graph, long long iters, int warmup, bench_row *rows,
                              int n, double base) {
  FILE *f = fopen(path, "w");
  if (!f) return fbx_status_new(FBX_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  fputs("{\n  \"graph\": ", f);
  json_str(f, graph);
  fprintf(f, ",\n  \"iters\": %lld,\n  \"warmup_runs\": %d,\n  \"fusers\": [", iters, warmup);
  for (int i = 0; i < n; i++) {
    bench_row *r = &rows[i];
    fputs(i ? ",\n    {" : "\n    {", f);
    fputs("\"name\": ", f);
    json_str(f, r->fuser ? fbx_fuser_name(r->fuser) : "none");
    fputs(", \"selected_as\": ", f);
    json_str(f, r->name);
    fputs(", \"path\": ", f);
    if (r->fuser) json_str(f, fbx_fuser_path(r->fuser));
    else fputs("null", f);
    fputs(", \"compile_ms\": ", f);
    json_num(f, r->compile_ms);
    fputs(", \"median_ms\": ", f);
    json_num(f, r->median_ms);
    fputs(", \"min_ms\": ", f);
    json_num(f, r->min_ms);
    fprintf(f, ", \"groups\": %lld, \"kernel_launches_per_run\": ", (long long)r->groups);
    json_num(f, r->launches_per_run);
    fputs(", \"speedup\": ", f);
    if (base > 0) json_num(f, base / r->median_ms);
    else fputs("null", f);
    fputs(", \"max_abs_error\": ", f);
    json_num(f, r->outputs_ok ? r->max_abs : NAN);
    fputs(", \"max_rel_error\": ", f);
    json_num(f, r->outputs_ok ? r->max_rel : NAN);
    fprintf(f, ", \"fallbacks\": %lld, \"outputs_match\": %s", (long long)r->fallbacks, r->outputs_ok ? "true" : "false");
    if (r->mismatch) {
      fputs(", \"mismatch\": ", f);
      json_str(f, r->mismatch);
    }
    fputc('}', f);
  }
  fputs("\n  ]\n}\n", f);
  bool werr = ferror(f) != 0;
  if (fclose(f) || werr) return fbx_status_new(FBX_ERR_IO, "cannot write %s", path);
  return NULL;
}

int fbx_cmd_bench(int argc, char **argv) {
  const char *path = NULL, *fusers = NULL, *json = NULL;
  long long iters = 20, seed = 0;
  bool random = false;
  char **inputs = fbx_calloc((size_t)(argc > 0 ? argc : 1), sizeof *inputs);
  if (!inputs) return fbx_cli_fail("bench", fbx_status_nomem());
  int ninputs = 0, rc = 0;
  for (int i = 0; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      help();
      fbx_free(inputs);
      return 0;
    } else if (!strcmp(a, "--input") || !strcmp(a, "-i")) {
      if (!has_value) rc = fbx_cli_usage("bench", USAGE, "%s needs a value", a);
      else inputs[ninputs++] = argv[++i];
    } else if (!strcmp(a, "--fusers")) {
      if (!has_value) rc = fbx_cli_usage("bench", USAGE, "--fusers needs a comma list");
      else fusers = argv[++i];
    } else if (!strcmp(a, "--json")) {
      if (!has_value) rc = fbx_cli_usage("bench", USAGE, "--json needs a file name");
      else json = argv[++i];
    } else if (!strcmp(a, "--iters")) {
      if (!has_value || !fbx_cli_parse_int(argv[++i], 1, &iters)) rc = fbx_cli_usage("bench", USAGE, "--iters needs a count >= 1");
    } else if (!strcmp(a, "--seed")) {
      if (!has_value || !fbx_cli_parse_int(argv[++i], 0, &seed))
        rc = fbx_cli_usage("bench", USAGE, "--seed needs a non-negative integer");
    } else if (!strcmp(a, "--random")) {
      random = true;
    } else if (a[0] == '-' && a[1]) {
      rc = fbx_cli_usage("bench", USAGE, "unknown option '%s'", a);
    } else if (!path) {
      path = a;
    } else {
      rc = fbx_cli_usage("bench", USAGE, "more than one graph given ('%s'); inputs go after --input", a);
    }
  }
  if (!rc && !path) rc = fbx_cli_usage("bench", USAGE, "no graph given");
  if (!rc && !fusers) rc = fbx_cli_usage("bench", USAGE, "no --fusers given (e.g. --fusers none,legacy)");
  if (!rc && random && ninputs) rc = fbx_cli_usage("bench", USAGE, "--random and --input exclude each other");
  if (!rc && iters > 1000000) rc = fbx_cli_usage("bench", USAGE, "--iters: at most 1000000");

  bench_row rows[MAX_FUSERS];
  memset(rows, 0, sizeof rows);
  int nrows = 0;
  char *list = !rc ? fbx_strdup(fusers) : NULL;
  if (!rc && !list) rc = fbx_cli_fail("bench", fbx_status_nomem());
  char *save = NULL;
  for (char *tok = list ? strtok_r(list, ",", &save) : NULL; tok && !rc; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') tok++;
    if (!*tok) continue;
    if (nrows == MAX_FUSERS) {
      rc = fbx_cli_usage("bench", USAGE, "at most %d fusers", MAX_FUSERS);
      break;
    }
    rows[nrows].name = tok;
    fbx_status *st = fbx_cli_load_fuser(tok, &rows[nrows].fuser);
    if (st) {
      fprintf(stderr, "fusebox bench: fuser '%s' cannot be used: %s\n", tok, fbx_status_message(st));
      fbx_status_free(st);
      rc = 2;
      break;
    }
    nrows++;
  }
  if (!rc && !nrows) rc = fbx_cli_usage("bench", USAGE, "--fusers names no fuser");

  fbx_graph *g = NULL;
  fbx_interp *ref = NULL;
  fbx_ivalue *vals = NULL, *want = NULL, *outs = NULL;
  int nin = 0, nout = 0, warmup = 0;
  fbx_status *st = NULL;
  if (rc) goto done;
  if ((st = fbx_graph_parse_file(&g, path))) goto done;
  nin = fbx_graph_ninputs(g);
  nout = fbx_graph_noutputs(g);
  vals = fbx_calloc((size_t)nin + 1, sizeof *vals);
  want = fbx_calloc((size_t)nout + 1, sizeof *want);
  outs = fbx_calloc((size_t)nout + 1, sizeof *outs);
  if (!vals || !want || !outs) {
    st = fbx_status_nomem();
    goto done;
  }
  if (random) st = fbx_cli_random_inputs(g, (uint64_t)seed, vals);
  else st = fbx_cli_gather_inputs(g, inputs, ninputs, vals);
  if (st) goto done;

  /* The reference: the interpreter on the graph as given. */
  if ((st = fbx_interp_create(&ref, g))) goto done;
  fbx_run_opts ro = {.seed = (uint64_t)seed};
  if ((st = fbx_interp_run(ref, vals, nin, want, &ro))) {
    st = fbx_status_wrap(st, "the reference interpreter failed");
    goto done;
  }

  for (int i = 0; i < nrows; i++) {
    bench_row *r = &rows[i];
    fbx_executor_opts xo = {.struct_size = sizeof xo, .fuser = "none", .fuser_handle = r->fuser};
    if ((st = fbx_executor_create(&r->ex, g, &xo))) goto done;
    if (!(r->times = fbx_calloc((size_t)iters, sizeof *r->times))) {
      st = fbx_status_nomem();
      goto done;
    }
  }
  {
    const char *env = getenv("FUSEBOX_PROFILING_RUNS");
    int prof = env && *env ? atoi(env) : 1;
    warmup = (prof > 0 ? prof : 0) + 2;
  }
  for (int w = 0; w < warmup; w++)
    for (int i = 0; i < nrows; i++) {
      for (int o = 0; o < nout; o++) fbx_iv_release(&outs[o]);
      if ((st = fbx_executor_run_values(rows[i].ex, vals, nin, outs, nout, (uint64_t)seed))) {
        st = fbx_status_wrap(st, "fuser %s", rows[i].name);
        goto done;
      }
    }
  fbx_executor_stats before[MAX_FUSERS];
  for (int i = 0; i < nrows; i++) {
    before[i] = (fbx_executor_stats){.struct_size = sizeof before[i]};
    fbx_executor_stats_get(rows[i].ex, &before[i]);
  }
  for (long long k = 0; k < iters; k++)
    for (int i = 0; i < nrows; i++) {
      for (int o = 0; o < nout; o++) fbx_iv_release(&outs[o]);
      double t0 = fbx_cli_now_ms();
      st = fbx_executor_run_values(rows[i].ex, vals, nin, outs, nout, (uint64_t)seed);
      rows[i].times[k] = fbx_cli_now_ms() - t0;
      if (st) {
        st = fbx_status_wrap(st, "fuser %s", rows[i].name);
        goto done;
      }
      if (k == iters - 1) {
        fbx_strbuf why = {0};
        rows[i].outputs_ok = fbx_cli_max_error(outs, nout, want, nout, &rows[i].max_abs, &rows[i].max_rel, &why);
        if (!rows[i].outputs_ok) rows[i].mismatch = fbx_strbuf_take(&why);
        fbx_strbuf_free(&why);
      }
    }
  double base = 0;
  for (int i = 0; i < nrows; i++) {
    bench_row *r = &rows[i];
    fbx_executor_stats s = {.struct_size = sizeof s};
    fbx_executor_stats_get(r->ex, &s);
    r->compile_ms = s.compile_seconds * 1e3;
    r->groups = s.groups;
    r->launches_per_run = (double)(s.kernel_launches - before[i].kernel_launches) / (double)iters;
    r->fallbacks = s.fallbacks - before[i].fallbacks;
    r->median_ms = fbx_cli_median(r->times, (int)iters); /* sorts */
    r->min_ms = r->times[0];
    if (!r->fuser && base == 0) base = r->median_ms;
  }

  printf("# fusebox bench %s: %lld timed runs per fuser (interleaved), after %d warm-up runs\n", path, iters, warmup);
  printf("%-14s %11s %11s %11s %7s %13s %8s %11s %11s %9s\n", "fuser", "compile_ms", "median_ms", "min_ms", "groups",
         "launches/run", "speedup", "max_abs", "max_rel", "fallbacks");
  for (int i = 0; i < nrows; i++) {
    bench_row *r = &rows[i];
    char speed[32], eabs[32], erel[32];
    if (base > 0 && r->median_ms > 0) snprintf(speed, sizeof speed, "%.2fx", base / r->median_ms);
    else snprintf(speed, sizeof speed, "-");
    if (r->outputs_ok) {
      snprintf(eabs, sizeof eabs, "%.3g", r->max_abs);
      snprintf(erel, sizeof erel, "%.3g", r->max_rel);
    } else {
      snprintf(eabs, sizeof eabs, "MISMATCH");
      snprintf(erel, sizeof erel, "-");
    }
    printf("%-14s %11.3f %11.4f %11.4f %7lld %13.2f %8s %11s %11s %9lld\n", r->fuser ? fbx_fuser_name(r->fuser) : "none",
           r->compile_ms, r->median_ms, r->min_ms, (long long)r->groups, r->launches_per_run, speed, eabs, erel,
           (long long)r->fallbacks);
  }
  for (int i = 0; i < nrows; i++)
    if (!rows[i].outputs_ok) {
      fprintf(stderr, "fusebox bench: fuser %s: outputs do not match the reference: %s\n", rows[i].name,
              rows[i].mismatch ? rows[i].mismatch : "?");
      rc = 1;
    }
  if (json && (st = write_json(json, path, iters, warmup, rows, nrows, base))) goto done;
  if (json) printf("# wrote %s\n", json);

done:
  if (st) rc = fbx_cli_fail("bench", st);
  for (int i = 0; vals && i < nin; i++) fbx_iv_release(&vals[i]);
  for (int i = 0; want && i < nout; i++) fbx_iv_release(&want[i]);
  for (int i = 0; outs && i < nout; i++) fbx_iv_release(&outs[i]);
  fbx_free(vals);
  fbx_free(want);
  fbx_free(outs);
  for (int i = 0; i < nrows; i++) {
    fbx_executor_destroy(rows[i].ex);
    fbx_fuser_release(rows[i].fuser);
    fbx_free(rows[i].times);
    fbx_free(rows[i].mismatch);
  }
  fbx_interp_destroy(ref);
  fbx_graph_destroy(g);
  fbx_free(list);
  fbx_free(inputs);
  return rc;
}
