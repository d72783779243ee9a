/* fusebox fuzz --fuser NAME|PATH [--seconds N] [--cases N] [--seed S] [--backward] [--out DIR]
 *              [--max-nodes N] [--timeout S] [--min-runs N]
 * fusebox fuzz --seed S --print [--out DIR]
 * fusebox fuzz --fuser NAME|PATH --replay GRAPH --input X... [--backward]
 *
 * Differential fuzzing (issue 21): random valid graphs (tools/fuzz_gen.c),
 * each run under `none` and under the fuser in a child process
 * (tools/fuzz_oracle.c); every failure is minimized (tools/fuzz_min.c) and,
 * with --out, written as a repro. Seeds go S, S+1, ... so a run is
 * reproduced by its first seed and its case count. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "cli.h"
#include "fuzz.h"
#include "inputs.h"
#include "ir/graph.h"
#include "ir/symbol.h"
#include "ir/text.h"

static const char *const USAGE =
    "fusebox fuzz --fuser NAME|PATH [--seconds N] [--cases N] [--seed S] [--backward] [--out DIR] "
    "[--max-findings N] [--max-nodes N] [--timeout S] [--min-runs N] | --seed S --print [--out DIR] | --fuser F --replay GRAPH --input X...";

static void help(void) {
  printf("usage: %s\n\n"
         "Generates random valid graphs (pointwise unary/binary/ternary ops with Tensor and\n"
         "Scalar operands, reductions with keepdim and negative dims, softmax, log_softmax,\n"
         "layer_norm, norm, chunk, cat, reshape, permute, expand, to, where, clamp, in-place\n"
         "ops on intermediates; broadcasting, size-1 and size-0 dims, transposed and expanded\n"
         "inputs; float32/64/16, bfloat16, int64/32, bool; NaN, +-inf, -0.0, denormals and\n"
         "integer extremes among the values) and runs each in a child process under `none`\n"
         "and under the fuser: after a profiling run and with FUSEBOX_PROFILING_RUNS=0,\n"
         "forward, and backward with --backward. Outputs are compared with tolerances scaled\n"
         "by the graph's ops (integers and bools exact, NaN positions equal). A failure is\n"
         "minimized (nodes, then shapes, then input values) and printed; with --out it is\n"
         "written as DIR/seed<S>.ir, its .npy inputs and DIR/seed<S>.sh (the repro command).\n\n"
         "  --fuser F       fuser name or plugin path (`none` compares none with itself)\n"
         "  --seconds N     stop starting cases after N seconds (default 10)\n"
         "  --cases N       stop after N cases (default: no limit)\n"
         "  --max-findings N  stop after N failures (default: no limit)\n"
         "  --seed S        first seed (default 1); case i uses seed S+i\n"
         "  --backward      also compare the gradients of every floating input\n"
         "  --out DIR       write minimized repros there (bfloat16 inputs as float32 .npy\n"
         "                  files that an aten::to at the top of the graph converts back)\n"
         "  --max-nodes N   nodes per graph, 1..16 (default 8)\n"
         "  --timeout S     a case running longer is a finding (default 120; a timeout is\n"
         "                  minimized with at most 8 runs)\n"
         "  --min-runs N    oracle runs the minimizer may spend per failure (default 300)\n"
         "  --print         print the graph seed S makes and exit; with --out, also write it\n"
         "                  there as a repro (graph, .npy inputs, .sh) without running it\n"
         "  --replay GRAPH  run one graph (a repro) through the oracle with --input values\n"
         FBX_CLI_INPUT_HELP
         "\nExit status: 0 no mismatch or crash, 1 a finding (or a failed replay), 2 usage error.\n",
         USAGE);
}

/* The loosest tolerance among the dtypes the graph's aten::to nodes convert
 * to (a repro's bfloat16 inputs come in as float32 and are converted at the
 * top: fz_case_print_repro); 0 when there is none. */
static double conversion_tolerance(const fbx_graph *g) {
  double tol = 0;
  for (const fbx_node *n = g->block->first; n; n = n->next) {
    if (strcmp(fbx_sym_str(n->kind), "aten::to")) continue;
    for (int i = 1; i < n->ninputs; i++) {
      int64_t v = 0;
      if (fbx_value_const_int(n->inputs[i], &v) && (v == FBX_DTYPE_FLOAT16 || v == FBX_DTYPE_BFLOAT16) &&
          fz_dtype_tolerance((fbx_dtype)v) > tol)
        tol = fz_dtype_tolerance((fbx_dtype)v);
    }
  }
  return tol;
}

static int replay(const char *path, char **inputs, int ninputs, const fz_oracle_opts *o) {
  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse_file(&g, path);
  if (st) return fbx_cli_fail("fuzz", st);
  int nin = fbx_graph_ninputs(g);
  fbx_ivalue *vals = fbx_calloc((size_t)nin + 1, sizeof *vals);
  if (!vals) st = fbx_status_nomem();
  if (!st) st = fbx_cli_gather_inputs(g, inputs, ninputs, vals);
  char *text = st ? NULL : fbx_graph_print(g);
  double conv_tol = st ? 0 : conversion_tolerance(g);
  fbx_graph_destroy(g);
  int rc = 0;
  if (st) {
    rc = fbx_cli_fail("fuzz", st);
  } else {
    /* the values in between are not known here: the inputs' dtypes, the
     * float16/bfloat16 that aten::to nodes convert to, and float32 unless
     * every input is float64 and nothing converts */
    double floor_tol = 0;
    bool all64 = !strstr(text, "aten::to(");
    for (int i = 0; i < nin; i++) {
      if (vals[i].kind != FBX_IV_TENSOR) continue;
      fbx_dtype dt = vals[i].u.t->dtype;
      all64 &= dt == FBX_DTYPE_FLOAT64;
      if (fbx_dtype_is_floating(dt) && fz_dtype_tolerance(dt) > floor_tol) floor_tol = fz_dtype_tolerance(dt);
    }
    if (!all64 && floor_tol < fz_dtype_tolerance(FBX_DTYPE_FLOAT32)) floor_tol = fz_dtype_tolerance(FBX_DTYPE_FLOAT32);
    if (conv_tol > floor_tol) floor_tol = conv_tol;
    fz_result r;
    fz_oracle_run_graph(text, vals, nin, floor_tol, o, &r);
    printf("%s: %s%s%s\n", path, fz_kind_name(r.kind), r.why[0] ? ": " : "", r.why);
    rc = r.kind == FZ_OK ? 0 : 1;
  }
  for (int i = 0; vals && i < nin; i++) fbx_iv_release(&vals[i]);
  fbx_free(vals);
  fbx_free(text);
  return rc;
}

/* Load and release the fuser in a child process: 0 when it loads, else 2
 * (the child printed why). */
static int check_fuser_in_child(const char *fuser) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "fusebox fuzz: fork: %s\n", strerror(errno));
    return 2;
  }
  if (pid == 0) {
    fbx_fuser *h = NULL;
    fbx_status *st = fbx_cli_load_fuser(fuser, &h);
    if (st) {
      fprintf(stderr, "fusebox fuzz: fuser '%s' cannot be used: %s\n", fuser, fbx_status_message(st));
      fbx_status_free(st);
      _exit(2);
    }
    fbx_fuser_release(h);
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  if (!WIFEXITED(status)) fprintf(stderr, "fusebox fuzz: loading fuser '%s' crashed the process\n", fuser);
  return 2;
}

int fbx_cmd_fuzz(int argc, char **argv) {
  const char *fuser = NULL, *out = NULL, *replay_path = NULL;
  long long seconds = 10, cases = -1, max_findings = -1, seed = 1, max_nodes = 8, timeout = 120, min_runs = 300;
  bool backward = false, print = false;
  char **inputs = fbx_calloc((size_t)(argc > 0 ? argc : 1), sizeof *inputs);
  if (!inputs) return fbx_cli_fail("fuzz", fbx_status_nomem());
  int ninputs = 0, rc = 0;
  for (int i = 0; i < argc && !rc; i++) {
    const char *a = argv[i];
    bool hv = i + 1 < argc;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      help();
      fbx_free(inputs);
      return 0;
    } else if (!strcmp(a, "--fuser")) {
      if (!hv) rc = fbx_cli_usage("fuzz", USAGE, "--fuser needs a name or path");
      else fuser = argv[++i];
    } else if (!strcmp(a, "--out")) {
      if (!hv) rc = fbx_cli_usage("fuzz", USAGE, "--out needs a directory");
      else out = argv[++i];
    } else if (!strcmp(a, "--replay")) {
      if (!hv) rc = fbx_cli_usage("fuzz", USAGE, "--replay needs a graph file");
      else replay_path = argv[++i];
    } else if (!strcmp(a, "--input")) {
      if (!hv) rc = fbx_cli_usage("fuzz", USAGE, "--input needs a value");
      else inputs[ninputs++] = argv[++i];
    } else if (!strcmp(a, "--seconds")) {
      if (!hv || !fbx_cli_parse_int(argv[++i], 0, &seconds)) rc = fbx_cli_usage("fuzz", USAGE, "--seconds needs N >= 0");
    } else if (!strcmp(a, "--cases")) {
      if (!hv || !fbx_cli_parse_int(argv[++i], 1, &cases)) rc = fbx_cli_usage("fuzz", USAGE, "--cases needs N >= 1");
    } else if (!strcmp(a, "--max-findings")) {
      if (!hv || !fbx_cli_parse_int(argv[++i], 1, &max_findings))
        rc = fbx_cli_usage("fuzz", USAGE, "--max-findings needs N >= 1");
    } else if (!strcmp(a, "--seed")) {
      if (!hv || !fbx_cli_parse_int(argv[++i], 0, &seed)) rc = fbx_cli_usage("fuzz", USAGE, "--seed needs S >= 0");
    } else if (!strcmp(a, "--max-nodes")) {
      if (!hv || !fbx_cli_parse_int(argv[++i], 1, &max_nodes) || max_nodes > FZ_MAX_NODES)
        rc = fbx_cli_usage("fuzz", USAGE, "--max-nodes needs 1..%d", FZ_MAX_NODES);
    } else if (!strcmp(a, "--timeout")) {
      if (!hv || !fbx_cli_parse_int(argv[++i], 1, &timeout) || timeout > 86400)
        rc = fbx_cli_usage("fuzz", USAGE, "--timeout needs seconds 1..86400");
    } else if (!strcmp(a, "--min-runs")) {
      if (!hv || !fbx_cli_parse_int(argv[++i], 0, &min_runs)) rc = fbx_cli_usage("fuzz", USAGE, "--min-runs needs N >= 0");
    } else if (!strcmp(a, "--backward")) {
      backward = true;
    } else if (!strcmp(a, "--print")) {
      print = true;
    } else {
      rc = fbx_cli_usage("fuzz", USAGE, "unknown argument '%s'", a);
    }
  }
  if (!rc && print) {
    fz_case c;
    fz_generate(&c, (uint64_t)seed, (int)max_nodes);
    char *text = fz_case_print(&c);
    if (!text) {
      rc = fbx_cli_fail("fuzz", fbx_status_new(FBX_ERR_INTERNAL, "seed %lld made an invalid case", seed));
    } else {
      printf("%s", text);
      fbx_free(text);
    }
    if (!rc && out) { /* the case as a repro would be written: graph, .npy inputs, .sh */
      fz_oracle_opts po = {.fuser = fuser ? fuser : "none", .backward = backward};
      fz_result pr = {.kind = FZ_OK};
      snprintf(pr.why, sizeof pr.why, "seed %lld as generated (--print)", seed);
      char name[64], *line = NULL;
      snprintf(name, sizeof name, "seed%lld", seed);
      fbx_status *st = fz_write_repro(&c, &po, out, name, &pr, &line);
      if (st) rc = fbx_cli_fail("fuzz", st);
      else printf("repro: %s\n", line);
      fbx_free(line);
    }
    fbx_free(inputs);
    return rc;
  }
  if (!rc && !fuser) rc = fbx_cli_usage("fuzz", USAGE, "no --fuser given (or --print)");
  if (!rc && ninputs && !replay_path) rc = fbx_cli_usage("fuzz", USAGE, "--input goes with --replay");
  fz_oracle_opts o = {.fuser = fuser, .backward = backward, .timeout_s = (int)timeout};
  /* The fuser is loaded in each case's child, never in this process: a
   * plugin may start threads when it loads (nvfuser_like's OpenCL device,
   * PoCL's worker threads), and a child forked after that waits forever
   * for threads it does not have. So it is checked once in a child too. */
  if (!rc && strcmp(fuser, "none")) rc = check_fuser_in_child(fuser);
  if (!rc && replay_path) {
    rc = replay(replay_path, inputs, ninputs, &o);
    fbx_free(inputs);
    fbx_fuser_release(o.handle);
    return rc;
  }
  fbx_free(inputs);
  if (rc) {
    fbx_fuser_release(o.handle);
    return rc;
  }

  printf("# fusebox fuzz: fuser %s, seeds from %lld, %lld s%s%s\n", fuser, seed, seconds,
         backward ? ", forward and backward" : ", forward", out ? "" : " (no --out: repros are printed)");
  fflush(stdout);
  long long counts[FZ_KIND_COUNT] = {0}, n = 0, nfound = 0, unfused = 0, launches = 0;
  double t0 = fbx_cli_now_ms();
  for (uint64_t s = (uint64_t)seed;; s++) {
    if (cases >= 0 && n >= cases) break;
    if (max_findings >= 0 && nfound >= max_findings) break;
    if (cases < 0 && fbx_cli_now_ms() - t0 >= (double)seconds * 1000.0) break;
    if (cases >= 0 && seconds && fbx_cli_now_ms() - t0 >= (double)seconds * 1000.0) break;
    fz_case c;
    fz_generate(&c, s, (int)max_nodes);
    fz_result r;
    fz_oracle_run(&c, &o, &r);
    n++;
    counts[r.kind]++;
    launches += r.launches;
    if (r.kind == FZ_OK && !r.launches) unfused++;
    if (r.kind == FZ_OK || r.kind == FZ_INVALID) continue;
    nfound++;
    int before = c.nnodes;
    /* a timeout costs --timeout seconds per try: few tries */
    int runs = fz_minimize(&c, &o, &r, r.kind == FZ_TIMEOUT && min_runs > 8 ? 8 : (int)min_runs);
    fz_result mr;
    fz_oracle_run(&c, &o, &mr);
    if (mr.kind != r.kind) mr = r; /* flaky: report the original */
    printf("seed %llu: %s: %s\n  minimized from %d to %d node%s in %d runs\n", (unsigned long long)s,
           fz_kind_name(r.kind), mr.why, before, c.nnodes, c.nnodes == 1 ? "" : "s", runs);
    if (out) {
      char name[64], *line = NULL;
      snprintf(name, sizeof name, "seed%llu", (unsigned long long)s);
      fbx_status *st = fz_write_repro(&c, &o, out, name, &mr, &line);
      if (st) {
        printf("  cannot write the repro: %s\n", fbx_status_message(st));
        fbx_status_free(st);
      } else {
        printf("  repro: %s\n", line);
      }
      fbx_free(line);
    } else {
      char *text = fz_case_print(&c);
      printf("%s", text ? text : "  (the minimized case does not print)\n");
      fbx_free(text);
    }
    fflush(stdout);
  }
  double secs = (fbx_cli_now_ms() - t0) / 1000.0;
  printf("%lld cases in %.1f s (%.1f cases/s):", n, secs, secs > 0 ? (double)n / secs : 0.0);
  for (int k = 0; k < FZ_KIND_COUNT; k++) printf(" %s %lld%s", fz_kind_name((fz_kind)k), counts[k], k + 1 < FZ_KIND_COUNT ? "," : "\n");
  printf("kernel launches %lld; cases the fuser ran without a kernel: %lld of %lld ok\n", launches, unfused,
         counts[FZ_OK]);
  if (strcmp(fuser, "none") && counts[FZ_OK] && !launches)
    printf("warning: the fuser launched no kernel in any case: it fuses nothing the generator makes\n");
  long long bad = counts[FZ_MISMATCH] + counts[FZ_GRAD_MISMATCH] + counts[FZ_ERROR] + counts[FZ_CRASH] + counts[FZ_TIMEOUT];
  printf("%s\n", bad ? "FAILED" : "PASSED");
  fbx_fuser_release(o.handle);
  return bad ? 1 : 0;
}
