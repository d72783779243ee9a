/* fusebox bench GRAPH [--input [NAME=]X]... [--random [--shape [NAME=]DIMS]...]  --fusers A,B,...
 *                [--iters N] [--seed S] [--bytes N] [--json FILE] [--backward]
 *
 * Compares fusers on one graph and one set of inputs. Each fuser gets its
 * own executor, warmed past profiling (FUSEBOX_PROFILING_RUNS + 2 runs: the
 * profiling runs, the run that compiles, one warm run); then the timed runs
 * go round-robin over the fusers, so that drifts of the machine (frequency,
 * other load) hit every fuser alike. Per fuser: compile time (the
 * executor's stats: total, kernels compiled, how many came from the disk
 * cache, time per kernel), median and minimum time per run, fusion groups,
 * kernel launches per run, the speedup of its median over `none`'s, the
 * largest absolute and relative error of its outputs against the reference
 * interpreter, and the effective bandwidth. Inputs the graph writes in place
 * (aten::relu_ on an input) are fresh copies for every run, the reference's
 * and the warm-up runs included, made before the clock starts: otherwise
 * each run would see the last one's writes and `none` would not match its
 * own reference.
 *
 * Effective bandwidth = bytes moved / median time. Bytes moved are the
 * graph's logical traffic: every tensor input read once plus every tensor
 * output written once (numel * element size each, the reference's outputs),
 * or --bytes N where that is wrong for the graph (a matmul reads its operands
 * more than once; an intermediate the fuser cannot keep in registers costs
 * more). It is compared with memcpy bandwidth measured in the same rounds:
 * each round also copies a buffer the size of the graph's largest tensor
 * once with one thread and once split over the kernel thread pool
 * (fbx_parallel_for, FUSEBOX_NUM_THREADS); memcpy moves 2x its size (read +
 * written) and the faster of the two medians is the reference, so the ratio
 * is against the best copy this machine did, not a handicapped one. The
 * pool's copy is also made, untimed, before every fuser's timed run, so
 * that each starts with its inputs out of the last-level cache: without it
 * the first fuser of a round read them from memory and the next ones found
 * them where it left them (a lone row sum timed 0.94 ms under `none` and
 * 0.55 ms under nvfuser_like, which ran the same interpreter kernel).
 *
 * --backward times forward + backward per run through the gradient API
 * (fbx_executor_forward_values / backward_values; every floating tensor
 * input requires grad, every floating tensor output gets a gradient of
 * ones), warmed past the plan's and its forward and backward executors'
 * profiling (2 x FUSEBOX_PROFILING_RUNS + 2 runs), and reports the
 * backward's kernel launches and interpreted ops per run besides the
 * forward's. The gradients are checked against those of the eager tape (a
 * `none` executor's first, profiling, forward+backward: every node
 * differentiated on its own, no DifferentiableGraph, no fuser); bytes moved
 * then also count the output gradients read and the input gradients written.
 *
 * Compile time cold vs from the disk cache takes two processes: run bench
 * twice with the same fresh FUSEBOX_CACHE_DIR (bench/fuser_figures.sh does);
 * the second run's kernels are disk-cache hits. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "base/strbuf.h"
#include "benchrun.h"
#include "cli.h"
#include "exec/executor.h"
#include "exec/interp.h"
#include "host/host.h"
#include "inputs.h"
#include "ir/text.h"
#include "passes/passes.h"
#include "model.h"
#include "torchpeer.h"

static const char *const USAGE = "fusebox bench GRAPH [--input [NAME=]X]... [--random [--shape [NAME=]DIMS]...] "
                                 "--fusers A,B,... [--iters N] [--seed S] [--bytes N] [--json FILE] [--backward]";

#define MAX_FUSERS 16
#define PEER_CAP 256
#define MAX_SHAPES 64

static void help(void) {
  printf("usage: %s\n\n"
         "Runs GRAPH with each fuser (its own profiling executor per fuser), warms each past\n"
         "profiling, then times --iters runs per fuser, interleaved round-robin with a memcpy.\n"
         "Prints one row per fuser:\n"
         "  compile_ms      time inside the fuser's compiles (executor stats)\n"
         "  median_ms/min_ms  time per run\n"
         "  groups          fusion groups the fuser made (all specializations)\n"
         "  launches/run    kernels launched per timed run\n"
         "  speedup         none's median / this fuser's median (when none is benchmarked)\n"
         "  max_abs/max_rel largest error of the outputs against the reference interpreter\n"
         "  fallbacks       group runs that went to the interpreter during the timed runs\n"
         "  kernels         kernels the fuser compiled (memory-cache hits not counted)\n"
         "  disk_hits       of those, answered by the disk cache (FUSEBOX_CACHE_DIR)\n"
         "  ms/kernel       compile_ms / kernels\n"
         "  GB/s            bytes moved / median time (effective bandwidth)\n"
         "  /memcpy         GB/s over the memcpy bandwidth measured in the same rounds\n\n"
         "Bytes moved: every tensor input read once and every tensor output written once\n"
         "(numel x element size), unless --bytes gives it. memcpy: a buffer the size of the\n"
         "largest tensor, copied each round with 1 thread and with the kernel thread pool;\n"
         "read + written bytes over the faster median. The pool's copy is also made, untimed,\n"
         "before each timed run, so every fuser starts with its inputs out of the cache.\n\n"
         "  --fusers LIST    comma list of fuser names or plugin paths; `none` is the\n"
         "                   interpreter alone (the baseline of the speedup); `torch` is\n"
         "                   PyTorch's TorchScript executor on the same graph text, in the same\n"
         "                   rounds (needs the PyTorch bridge; with --backward, PyTorch's\n"
         "                   autograd on the same output gradients; its compile,\n"
         "                   groups, launches and kernels columns are 0: not measured). With\n"
         "                   torch, torch_abs/torch_rel give every row's largest error\n"
         "                   against PyTorch's outputs (of its first run), a second oracle\n"
         "                   next to max_abs/max_rel (the reference interpreter's)\n"
         FBX_CLI_INPUT_HELP
         "  --random         make every input up that no --input NAME=X gives: random values,\n"
         "                   contiguous; sizes from the IR type (Float(4, 8)) or --shape;\n"
         "                   dtype from the IR type, else float32. Scalars must be given.\n"
         "  --shape [NAME=]D0,D1,...  sizes of a --random input: unnamed, of every input whose\n"
         "                   type lacks sizes (`Tensor`); named, of that input (repeatable)\n"
         "  --iters N        timed runs per fuser (default 20)\n"
         "  --seed S         seed for --random and the graph's random ops (default 0)\n"
         "  --bytes N        bytes moved per run, for the bandwidth columns\n"
         "  --json FILE      also write the results as JSON\n"
         "  --backward       time forward + backward through the gradient API (floating\n"
         "                   inputs require grad, gradients of ones for floating outputs);\n"
         "                   adds interp/run (forward ops the interpreter ran), and\n"
         "                   bwd_launches/run and bwd_interp/run (the backward's kernel\n"
         "                   launches and interpreted ops); errors include the gradients,\n"
         "                   against the eager tape's (fuser none, no DifferentiableGraph)\n\n"
         "Compile time cold and from the disk cache: run twice with the same new\n"
         "FUSEBOX_CACHE_DIR; the second run's kernels are disk hits.\n\n"
         "Exit status: 0 success, 1 the graph, an input or a run failed (or a fuser's outputs\n"
         "do not match the reference's structure), 2 usage error or unknown fuser.\n",
         USAGE);
}

typedef struct bench_row {
  const char *name;   /* as given */
  fbx_fuser *fuser;   /* NULL for none and torch */
  bool torch;         /* PyTorch's executor through the bridge (tools/torchpeer.h), not an executor of ours */
  fbx_torch_peer *peer;
  fbx_executor *ex;   /* NULL for torch */
  double *times;
  double compile_ms, median_ms, min_ms;
  int64_t groups;
  double launches_per_run;
  double interp_per_run, bwd_launches_per_run, bwd_interp_per_run; /* interp: always; bwd: --backward */
  int64_t diff_graphs;
  int64_t fallbacks;
  int64_t kernels, disk_hits;
  double max_abs, max_rel;
  bool outputs_ok;
  char *mismatch;
  double vt_abs, vt_rel; /* against PyTorch's outputs, when torch is benchmarked */
  bool vt_ok;
} bench_row;

static const char *row_name(const bench_row *r) {
  return r->torch ? "torch" : r->fuser ? fbx_fuser_name(r->fuser) : "none";
}

/* What the table and the JSON file report besides the rows. */
typedef struct bench_info {
  const char *graph;
  long long iters;
  int warmup;
  double bytes;      /* moved per run; 0: unknown */
  bool bytes_given;  /* --bytes rather than the graph's tensors */
  double base;       /* none's median, 0 if none was not run */
  bool backward;     /* forward + backward per run */
  bool torch;        /* torch was benchmarked: the vs_torch columns */
  const fbx_br_memcpy *mc;
} bench_info;

static double bench_gbs(const bench_info *in, const bench_row *r) {
  return in->bytes > 0 && r->median_ms > 0 ? in->bytes / (r->median_ms * 1e-3) / 1e9 : NAN;
}

static fbx_status *write_json(const char *path, const bench_info *in, bench_row *rows, int n) {
  FILE *f = fopen(path, "w");
  if (!f) return fbx_status_new(FBX_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  fputs("{\n  \"graph\": ", f);
  fbx_br_json_str(f, in->graph);
  fprintf(f, ",\n  \"iters\": %lld,\n  \"warmup_runs\": %d,\n  \"backward\": %s,\n  \"bytes_moved\": ", in->iters,
          in->warmup, in->backward ? "true" : "false");
  fbx_br_json_num(f, in->bytes > 0 ? in->bytes : NAN);
  fputs(",\n  \"bytes_moved_from\": ", f);
  fbx_br_json_str(f, in->bytes_given ? "option" : "graph");
  fputs(",\n  \"cache_dir\": ", f);
  const char *cache = getenv("FUSEBOX_CACHE_DIR");
  if (cache && *cache) fbx_br_json_str(f, cache);
  else fputs("null", f);
  fprintf(f, ",\n  \"memcpy\": {\"bytes\": %zu, \"threads\": %d, \"gbs_1_thread\": ", in->mc->bytes, in->mc->threads);
  fbx_br_json_num(f, in->mc->gbs1);
  fputs(", \"gbs_threads\": ", f);
  fbx_br_json_num(f, in->mc->gbsn);
  fputs(", \"gbs\": ", f);
  fbx_br_json_num(f, in->mc->gbs);
  fputs("},\n  \"fusers\": [", f);
  for (int i = 0; i < n; i++) {
    bench_row *r = &rows[i];
    fputs(i ? ",\n    {" : "\n    {", f);
    fputs("\"name\": ", f);
    fbx_br_json_str(f, row_name(r));
    fputs(", \"selected_as\": ", f);
    fbx_br_json_str(f, r->name);
    fputs(", \"path\": ", f);
    if (r->fuser) fbx_br_json_str(f, fbx_fuser_path(r->fuser));
    else fputs("null", f);
    fputs(", \"compile_ms\": ", f);
    fbx_br_json_num(f, r->compile_ms);
    fprintf(f, ", \"kernels_compiled\": %lld, \"disk_cache_hits\": %lld, \"compile_ms_per_kernel\": ",
            (long long)r->kernels, (long long)r->disk_hits);
    fbx_br_json_num(f, r->kernels > 0 ? r->compile_ms / (double)r->kernels : NAN);
    fputs(", \"median_ms\": ", f);
    fbx_br_json_num(f, r->median_ms);
    fputs(", \"min_ms\": ", f);
    fbx_br_json_num(f, r->min_ms);
    fprintf(f, ", \"groups\": %lld, \"kernel_launches_per_run\": ", (long long)r->groups);
    fbx_br_json_num(f, r->launches_per_run);
    fputs(", \"interpreted_ops_per_run\": ", f);
    fbx_br_json_num(f, r->interp_per_run);
    if (in->backward) {
      fprintf(f, ", \"differentiable_graphs\": %lld, \"backward_kernel_launches_per_run\": ", (long long)r->diff_graphs);
      fbx_br_json_num(f, r->bwd_launches_per_run);
      fputs(", \"backward_interpreted_ops_per_run\": ", f);
      fbx_br_json_num(f, r->bwd_interp_per_run);
    }
    fputs(", \"speedup\": ", f);
    fbx_br_json_num(f, in->base > 0 ? in->base / r->median_ms : NAN);
    double gbs = bench_gbs(in, r);
    fputs(", \"gbs\": ", f);
    fbx_br_json_num(f, gbs);
    fputs(", \"bandwidth_vs_memcpy\": ", f);
    fbx_br_json_num(f, in->mc->gbs > 0 ? gbs / in->mc->gbs : NAN);
    fputs(", \"max_abs_error\": ", f);
    fbx_br_json_num(f, r->outputs_ok ? r->max_abs : NAN);
    fputs(", \"max_rel_error\": ", f);
    fbx_br_json_num(f, r->outputs_ok ? r->max_rel : NAN);
    fprintf(f, ", \"fallbacks\": %lld, \"outputs_match\": %s", (long long)r->fallbacks, r->outputs_ok ? "true" : "false");
    if (in->torch) {
      fputs(", \"max_abs_error_vs_torch\": ", f);
      fbx_br_json_num(f, r->vt_ok ? r->vt_abs : NAN);
      fputs(", \"max_rel_error_vs_torch\": ", f);
      fbx_br_json_num(f, r->vt_ok ? r->vt_rel : NAN);
    }
    if (r->mismatch) {
      fputs(", \"mismatch\": ", f);
      fbx_br_json_str(f, r->mismatch);
    }
    fputc('}', f);
  }
  fputs("\n  ]\n}\n", f);
  bool werr = ferror(f) != 0;
  if (fclose(f) || werr) return fbx_status_new(FBX_ERR_IO, "cannot write %s", path);
  return NULL;
}

static void print_table(const bench_info *in, bench_row *rows, int n) {
  const fbx_br_memcpy *mc = in->mc;
  printf("# fusebox bench %s: %lld timed %sruns per fuser (interleaved), after %d warm-up runs\n", in->graph,
         in->iters, in->backward ? "forward+backward " : "", in->warmup);
  if (in->backward)
    printf("# gradients of ones for the floating outputs; errors cover outputs and input gradients (reference: the "
           "eager tape)\n");
  if (in->bytes > 0)
    printf("# bytes moved per run: %.0f (%s)\n", in->bytes,
           in->bytes_given ? "--bytes" : "tensor inputs read once + tensor outputs written once");
  if (mc->bytes)
    printf("# memcpy %zu bytes: %.2f GB/s with 1 thread, %.2f GB/s with %d threads (read + written, medians)\n",
           mc->bytes, mc->gbs1, mc->gbsn, mc->threads);
  printf("%-14s %11s %11s %11s %7s %13s %12s", "fuser", "compile_ms", "median_ms", "min_ms", "groups", "launches/run",
         "interp/run");
  if (in->backward) printf(" %6s %17s %15s", "dgs", "bwd_launches/run", "bwd_interp/run");
  printf(" %8s %11s %11s %9s %7s %9s %9s %8s %7s", "speedup", "max_abs", "max_rel", "fallbacks", "kernels",
         "disk_hits", "ms/kernel", "GB/s", "/memcpy");
  if (in->torch) printf(" %12s %12s", "torch_abs", "torch_rel");
  putchar('\n');
  for (int i = 0; i < n; i++) {
    bench_row *r = &rows[i];
    char speed[32], eabs[32], erel[32], perk[32], gbs[32], ratio[32];
    if (in->base > 0 && r->median_ms > 0) snprintf(speed, sizeof speed, "%.2fx", in->base / r->median_ms);
    else snprintf(speed, sizeof speed, "-");
    if (r->outputs_ok) {
      snprintf(eabs, sizeof eabs, "%.3g", r->max_abs);
      snprintf(erel, sizeof erel, "%.3g", r->max_rel);
    } else {
      snprintf(eabs, sizeof eabs, "MISMATCH");
      snprintf(erel, sizeof erel, "-");
    }
    if (r->kernels > 0) snprintf(perk, sizeof perk, "%.3f", r->compile_ms / (double)r->kernels);
    else snprintf(perk, sizeof perk, "-");
    double g = bench_gbs(in, r);
    if (isfinite(g)) snprintf(gbs, sizeof gbs, "%.2f", g);
    else snprintf(gbs, sizeof gbs, "-");
    if (isfinite(g) && mc->gbs > 0) snprintf(ratio, sizeof ratio, "%.2f", g / mc->gbs);
    else snprintf(ratio, sizeof ratio, "-");
    printf("%-14s %11.3f %11.4f %11.4f %7lld %13.2f %12.2f", row_name(r),
           r->compile_ms, r->median_ms, r->min_ms, (long long)r->groups, r->launches_per_run, r->interp_per_run);
    if (in->backward)
      printf(" %6lld %17.2f %15.2f", (long long)r->diff_graphs, r->bwd_launches_per_run, r->bwd_interp_per_run);
    printf(" %8s %11s %11s %9lld %7lld %9lld %9s %8s %7s", speed, eabs, erel, (long long)r->fallbacks,
           (long long)r->kernels, (long long)r->disk_hits, perk, gbs, ratio);
    if (in->torch && r->vt_ok) printf(" %12.3g %12.3g", r->vt_abs, r->vt_rel);
    else if (in->torch) printf(" %12s %12s", "MISMATCH", "-");
    putchar('\n');
  }
}

/* The gradients' largest errors against the eager tape's, folded into the row's. */
static void grad_errors(bench_row *r, const fbx_br_grad *bg) {
  fbx_br_grad_errors(bg, &r->outputs_ok, &r->max_abs, &r->max_rel, &r->mismatch);
}

/* One timed unit of a row: fbx_br_step for our executors; for torch, one
 * run through PyTorch into pouts[0..*npouts) (the last run's released first). */
static fbx_status *row_step(bench_row *r, fbx_br_inputs *bi, fbx_ivalue *outs, int nout, fbx_ivalue *pouts, int *npouts,
                            uint64_t seed, fbx_br_grad *bg, fbx_ivalue *gin) {
  if (!r->torch) return fbx_br_step(r->ex, bi, outs, nout, seed, bg, gin);
  for (int i = 0; i < *npouts; i++) fbx_iv_release(&pouts[i]);
  *npouts = 0;
  if (!bg) return fbx_torch_peer_run(r->peer, bi->run, bi->nin, pouts, PEER_CAP, npouts);
  for (int i = 0; i < bi->nin; i++) fbx_iv_release(&gin[i]);
  return fbx_torch_peer_run_grad(r->peer, bi->run, bi->nin, bg->gout, bg->nflat, pouts, PEER_CAP, npouts, gin);
}

/* The text PyTorch gets: the graph as fusebox printed it after dead code
 * elimination. PyTorch prints constants its own parser does not take back
 * (`%8 : Function = prim::Constant[name="ratio_iou"]()`, unused). */
static fbx_status *torch_text(const fbx_graph *g, char **out) {
  fbx_graph *c = fbx_graph_clone(g);
  if (!c) return fbx_status_nomem();
  bool changed = false;
  fbx_status *st = fbx_pass_dce(c, &changed);
  if (!st && !(*out = fbx_graph_print(c))) st = fbx_status_nomem();
  fbx_graph_destroy(c);
  return st;
}

int fbx_cmd_bench(int argc, char **argv) {
  const char *path = NULL, *fusers = NULL, *json = NULL;
  long long iters = 20, seed = 0, bytes_opt = 0;
  bool random = false, backward = false;
  char **inputs = fbx_calloc((size_t)(argc > 0 ? argc : 1), sizeof *inputs);
  fbx_cli_shape *shapes = fbx_calloc(MAX_SHAPES, sizeof *shapes);
  if (!inputs || !shapes) {
    fbx_free(inputs);
    fbx_free(shapes);
    return fbx_cli_fail("bench", fbx_status_nomem());
  }
  int ninputs = 0, nshapes = 0, rc = 0;
  bool default_shape = false;
  for (int i = 0; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      help();
      fbx_free(inputs);
      fbx_free(shapes);
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
    } else if (!strcmp(a, "--bytes")) {
      if (!has_value || !fbx_cli_parse_int(argv[++i], 1, &bytes_opt))
        rc = fbx_cli_usage("bench", USAGE, "--bytes needs a byte count >= 1");
    } else if (!strcmp(a, "--shape")) {
      if (!has_value) {
        rc = fbx_cli_usage("bench", USAGE, "--shape needs [NAME=]D0,D1,...");
      } else if (nshapes == MAX_SHAPES) {
        rc = fbx_cli_usage("bench", USAGE, "at most %d --shape options", MAX_SHAPES);
      } else if (!fbx_cli_parse_shape(argv[++i], &shapes[nshapes])) {
        rc = fbx_cli_usage("bench", USAGE,
                           "--shape '%s': expected [NAME=]D0,D1,... (1 to %d sizes >= 0, at most 2^40 elements)",
                           argv[i], FBX_MAX_DIMS);
      } else if (!shapes[nshapes].name && default_shape) {
        rc = fbx_cli_usage("bench", USAGE, "--shape without a name given twice");
      } else {
        default_shape |= !shapes[nshapes++].name;
      }
    } else if (!strcmp(a, "--random")) {
      random = true;
    } else if (!strcmp(a, "--backward")) {
      backward = true;
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
  if (!rc && nshapes && !random) rc = fbx_cli_usage("bench", USAGE, "--shape sizes --random inputs; add --random");
  if (!rc && iters > 1000000) rc = fbx_cli_usage("bench", USAGE, "--iters: at most 1000000");

  bench_row rows[MAX_FUSERS];
  memset(rows, 0, sizeof rows);
  fbx_br_memcpy mc = {0};
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
    if (!strcmp(tok, "torch")) {
      /* PyTorch's own executor on the same graph text (bridges/torch/peer.h). */
      fbx_status *st = fbx_torch_peer_check();
      if (st) {
        fprintf(stderr, "fusebox bench: fuser 'torch' cannot be used: %s\n", fbx_status_message(st));
        fbx_status_free(st);
        rc = 2;
        break;
      }
      rows[nrows++].torch = true;
      continue;
    }
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
  fbx_br_inputs bi = {0};
  bool *written = NULL;
  int nin = 0, nout = 0, warmup = 0;
  fbx_br_grad bgs = {0}, *bg = NULL;
  fbx_executor *eager = NULL;
  /* torch: its outputs (flattened) of the latest run, and of its first run, the second oracle */
  fbx_ivalue pouts[PEER_CAP], tref[PEER_CAP];
  int npouts = 0, ntref = 0;
  bool has_torch = false;
  char *text = NULL;
  fbx_status *st = NULL;
  fbx_cli_model model = {0};
  if (rc) goto done;
  /* GRAPH may be an imported model's directory or a .pt archive (tools/model.h). */
  if ((st = fbx_cli_model_open(&model, path, inputs, ninputs))) goto done;
  if ((st = fbx_graph_parse_file(&g, model.graph))) goto done;
  nin = fbx_graph_ninputs(g);
  nout = fbx_graph_noutputs(g);
  vals = fbx_calloc((size_t)nin + 1, sizeof *vals);
  want = fbx_calloc((size_t)nout + 1, sizeof *want);
  outs = fbx_calloc((size_t)nout + 1, sizeof *outs);
  bi.run = fbx_calloc((size_t)nin + 1, sizeof *bi.run);
  written = fbx_calloc((size_t)nin + 1, sizeof *written);
  if (!vals || !want || !outs || !bi.run || !written) {
    st = fbx_status_nomem();
    goto done;
  }
  if (random) st = fbx_cli_mixed_inputs(g, model.args, model.nargs, (uint64_t)seed, shapes, nshapes, vals);
  else st = fbx_cli_gather_inputs(g, model.args, model.nargs, vals);
  if (st) goto done;
  bi.vals = vals;
  bi.nin = nin;
  bi.written = fbx_cli_written_inputs(g, written) ? written : NULL;

  /* The reference: the interpreter on the graph as given. */
  if ((st = fbx_interp_create(&ref, g))) goto done;
  fbx_run_opts ro = {.seed = (uint64_t)seed};
  if ((st = fbx_br_fresh(&bi))) goto done;
  if ((st = fbx_interp_run(ref, bi.run, nin, want, &ro))) {
    st = fbx_status_wrap(st, "the reference interpreter failed");
    goto done;
  }
  double bytes = 0;
  if ((st = fbx_br_tensor_bytes(vals, nin, &bytes, &mc.bytes)) || (st = fbx_br_tensor_bytes(want, nout, &bytes, &mc.bytes))) goto done;
  if (backward) {
    /* The reference gradients: a plan's first run profiles on the eager tape. */
    bg = &bgs;
    if ((st = fbx_br_grad_init(bg, want, nout, nin))) goto done;
    fbx_executor_opts eo = {.struct_size = sizeof eo, .fuser = "none", .profiling_runs = 1};
    if ((st = fbx_executor_create(&eager, g, &eo))) goto done;
    if ((st = fbx_br_fresh(&bi))) goto done;
    if ((st = fbx_br_step(eager, &bi, outs, nout, (uint64_t)seed, bg, bg->ref))) {
      st = fbx_status_wrap(st, "the eager tape's forward+backward failed");
      goto done;
    }
    if ((st = fbx_br_tensor_bytes(bg->gout, bg->nflat, &bytes, &mc.bytes)) || (st = fbx_br_tensor_bytes(bg->ref, nin, &bytes, &mc.bytes)))
      goto done;
  }
  if (bytes_opt) bytes = (double)bytes_opt;
  for (int i = 0; i < nrows; i++) has_torch |= rows[i].torch;
  if (has_torch) {
    /* PyTorch parses the same graph (after dead code elimination); its first run is the second oracle. */
    if ((st = torch_text(g, &text))) goto done;
    for (int i = 0; i < nrows; i++)
      if (rows[i].torch && (st = fbx_torch_peer_open(&rows[i].peer, text))) goto done;
    for (int i = 0; i < nrows && !ntref; i++)
      if (rows[i].torch) {
        if ((st = fbx_br_fresh(&bi))) goto done;
        if ((st = fbx_torch_peer_run(rows[i].peer, bi.run, nin, tref, PEER_CAP, &ntref))) goto done;
      }
  }
  if ((st = fbx_br_memcpy_alloc(&mc, iters))) goto done;

  for (int i = 0; i < nrows; i++) {
    bench_row *r = &rows[i];
    fbx_executor_opts xo = {.struct_size = sizeof xo, .fuser = "none", .fuser_handle = r->fuser};
    if (!r->torch && (st = fbx_executor_create(&r->ex, g, &xo))) goto done;
    if (!(r->times = fbx_calloc((size_t)iters, sizeof *r->times))) {
      st = fbx_status_nomem();
      goto done;
    }
  }
  warmup = fbx_br_warmup_runs(backward);
  for (int w = 0; w < warmup; w++)
    for (int i = 0; i < nrows; i++) {
      if ((st = fbx_br_fresh(&bi))) goto done;
      if ((st = row_step(&rows[i], &bi, outs, nout, pouts, &npouts, (uint64_t)seed, bg, bgs.gin))) {
        st = fbx_status_wrap(st, "fuser %s", rows[i].name);
        goto done;
      }
    }
  fbx_executor_stats before[MAX_FUSERS];
  for (int i = 0; i < nrows; i++) {
    before[i] = (fbx_executor_stats){.struct_size = sizeof before[i]};
    if (rows[i].ex) fbx_executor_stats_get(rows[i].ex, &before[i]);
  }
  for (long long k = 0; k < iters; k++) {
    for (int i = 0; i < nrows; i++) {
      if ((st = fbx_br_fresh(&bi))) goto done;
      fbx_br_evict(&mc);
      double t0 = fbx_cli_now_ms();
      st = row_step(&rows[i], &bi, outs, nout, pouts, &npouts, (uint64_t)seed, bg, bgs.gin);
      rows[i].times[k] = fbx_cli_now_ms() - t0;
      if (st) {
        st = fbx_status_wrap(st, "fuser %s", rows[i].name);
        goto done;
      }
      if (k == iters - 1) {
        fbx_strbuf why = {0};
        const fbx_ivalue *got = rows[i].torch ? pouts : outs;
        int ngot = rows[i].torch ? npouts : nout;
        rows[i].outputs_ok = fbx_cli_max_error(got, ngot, want, nout, &rows[i].max_abs, &rows[i].max_rel, &why);
        if (!rows[i].outputs_ok) rows[i].mismatch = fbx_strbuf_take(&why);
        fbx_strbuf_free(&why);
        if (has_torch) {
          fbx_strbuf vt = {0};
          rows[i].vt_ok = fbx_cli_max_error(got, ngot, tref, ntref, &rows[i].vt_abs, &rows[i].vt_rel, &vt);
          fbx_strbuf_free(&vt);
        }
        if (bg) grad_errors(&rows[i], bg);
      }
    }
    if (mc.bytes) fbx_br_memcpy_round(&mc, k);
  }
  fbx_br_memcpy_finish(&mc, iters);
  double base = 0;
  for (int i = 0; i < nrows; i++) {
    bench_row *r = &rows[i];
    fbx_executor_stats s = {.struct_size = sizeof s};
    if (r->ex) fbx_executor_stats_get(r->ex, &s); /* torch: no stats of ours, zeros */
    r->compile_ms = s.compile_seconds * 1e3;
    r->kernels = s.kernels_compiled;
    r->disk_hits = s.disk_cache_hits;
    r->groups = s.groups;
    r->launches_per_run = (double)(s.kernel_launches - before[i].kernel_launches) / (double)iters;
    r->interp_per_run = (double)(s.interpreted_ops - before[i].interpreted_ops) / (double)iters;
    r->bwd_launches_per_run =
        (double)(s.backward_kernel_launches - before[i].backward_kernel_launches) / (double)iters;
    r->bwd_interp_per_run =
        (double)(s.backward_interpreted_ops - before[i].backward_interpreted_ops) / (double)iters;
    r->diff_graphs = s.differentiable_graphs;
    r->fallbacks = s.fallbacks - before[i].fallbacks;
    r->median_ms = fbx_cli_median(r->times, (int)iters); /* sorts */
    r->min_ms = r->times[0];
    if (!r->fuser && !r->torch && base == 0) base = r->median_ms;
  }

  bench_info info = {.graph = path, .iters = iters, .warmup = warmup, .bytes = bytes, .bytes_given = bytes_opt > 0,
                     .base = base, .backward = backward, .torch = has_torch, .mc = &mc};
  print_table(&info, rows, nrows);
  for (int i = 0; i < nrows; i++)
    if (!rows[i].outputs_ok) {
      fprintf(stderr, "fusebox bench: fuser %s: outputs do not match the reference: %s\n", rows[i].name,
              rows[i].mismatch ? rows[i].mismatch : "?");
      rc = 1;
    }
  if (json && (st = write_json(json, &info, rows, nrows))) goto done;
  if (json) printf("# wrote %s\n", json);

done:
  if (st) rc = fbx_cli_fail("bench", st);
  for (int i = 0; vals && i < nin; i++) fbx_iv_release(&vals[i]);
  for (int i = 0; bi.run && i < nin; i++) fbx_iv_release(&bi.run[i]);
  fbx_free(bi.run);
  fbx_free(written);
  for (int i = 0; want && i < nout; i++) fbx_iv_release(&want[i]);
  for (int i = 0; outs && i < nout; i++) fbx_iv_release(&outs[i]);
  fbx_free(vals);
  fbx_free(want);
  fbx_free(outs);
  fbx_br_grad_free(&bgs);
  fbx_executor_destroy(eager);
  for (int i = 0; i < npouts; i++) fbx_iv_release(&pouts[i]);
  for (int i = 0; i < ntref; i++) fbx_iv_release(&tref[i]);
  fbx_free(text);
  for (int i = 0; i < nrows; i++) {
    fbx_torch_peer_close(rows[i].peer);
    fbx_executor_destroy(rows[i].ex);
    fbx_fuser_release(rows[i].fuser);
    fbx_free(rows[i].times);
    fbx_free(rows[i].mismatch);
  }
  fbx_br_memcpy_free(&mc);
  fbx_interp_destroy(ref);
  fbx_graph_destroy(g);
  fbx_cli_model_close(&model);
  fbx_free(list);
  fbx_free(inputs);
  fbx_free(shapes);
  return rc;
}
