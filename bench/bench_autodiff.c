/* Forward + backward through the gradient API (fbx_executor_forward_values,
 * fbx_executor_backward_values), fused against unfused: the figures of
 * issue #6's closing note.
 *
 *   bench_autodiff                    # every workload, fusers none and legacy
 *   bench_autodiff ratio_iou_20 gelu  # some of them (names as printed)
 *   bench_autodiff --runs 5 --fusers none,legacy,tensorexpr
 *   FUSEBOX_NUM_THREADS=1 bench_autodiff
 *
 * Workloads (the graphs are the corpus's, as TorchScript printed them):
 *   ratio_iou_20, ratio_iou_24   examples/ratio_iou.ir, 8 inputs of 2^20 / 2^24 float32
 *   layer_norm                   tests/corpus/cases/layer_norm_manual: x [4096, 1024],
 *                                weight and bias [1024] (mean/var over the last dim)
 *   gelu                         tests/corpus/cases/gelu_tanh, 2^22 float32
 * Every floating tensor input requires grad; the output gradient is ones.
 *
 * For each workload and fuser: a few warm-up iterations (profiling, the
 * DifferentiableGraph plan, compiles), then --runs timed iterations (default
 * 7) of forward + backward + freeing the handle; the median is printed with
 * the per-iteration counters of the timed iterations (from
 * fbx_executor_stats): fused kernel launches and interpreted op-table
 * kernels, forward and backward. Without fusion every op of the backward is
 * one interpreted kernel; with it the fused groups' launches plus what the
 * fuser left out. */
#define _DEFAULT_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/executor.h"
#include "ir/text.h"
#include <fusebox/tensor.h>

static const char *RATIO_IOU =
    "graph(%x1.1 : Tensor, %y1.1 : Tensor, %w1.1 : Tensor, %h1.1 : Tensor,\n"
    "      %x2.1 : Tensor, %y2.1 : Tensor, %w2.1 : Tensor, %h2.1 : Tensor):\n"
    "  %27 : NoneType = prim::Constant()\n"
    "  %16 : int = prim::Constant[value=1]()\n"
    "  %26 : float = prim::Constant[value=0.]()\n"
    "  %61 : float = prim::Constant[value=1.0000000000000001e-05]()\n"
    "  %xi.1 : Tensor = aten::max(%x1.1, %x2.1)\n"
    "  %yi.1 : Tensor = aten::max(%y1.1, %y2.1)\n"
    "  %17 : Tensor = aten::add(%x1.1, %w1.1, %16)\n"
    "  %21 : Tensor = aten::add(%x2.1, %w2.1, %16)\n"
    "  %22 : Tensor = aten::min(%17, %21)\n"
    "  %25 : Tensor = aten::sub(%22, %xi.1, %16)\n"
    "  %wi.1 : Tensor = aten::clamp(%25, %26, %27)\n"
    "  %32 : Tensor = aten::add(%y1.1, %h1.1, %16)\n"
    "  %36 : Tensor = aten::add(%y2.1, %h2.1, %16)\n"
    "  %37 : Tensor = aten::min(%32, %36)\n"
    "  %40 : Tensor = aten::sub(%37, %yi.1, %16)\n"
    "  %hi.1 : Tensor = aten::clamp(%40, %26, %27)\n"
    "  %area_i.1 : Tensor = aten::mul(%wi.1, %hi.1)\n"
    "  %48 : Tensor = aten::mul(%w1.1, %h1.1)\n"
    "  %51 : Tensor = aten::mul(%w2.1, %h2.1)\n"
    "  %53 : Tensor = aten::add(%48, %51, %16)\n"
    "  %56 : Tensor = aten::mul(%wi.1, %hi.1)\n"
    "  %area_u.1 : Tensor = aten::sub(%53, %56, %16)\n"
    "  %63 : Tensor = aten::clamp(%area_u.1, %61, %27)\n"
    "  %64 : Tensor = aten::div(%area_i.1, %63)\n"
    "  return (%64)\n";

static const char *GELU =
    "graph(%x.1 : Tensor):\n"
    "  %3 : float = prim::Constant[value=0.044714999999999998]()\n"
    "  %4 : float = prim::Constant[value=0.79788456080286541]()\n"
    "  %5 : float = prim::Constant[value=1.]()\n"
    "  %6 : float = prim::Constant[value=0.5]()\n"
    "  %7 : int = prim::Constant[value=1]()\n"
    "  %8 : Tensor = aten::mul(%x.1, %6)\n"
    "  %9 : Tensor = aten::mul(%x.1, %3)\n"
    "  %10 : Tensor = aten::mul(%9, %x.1)\n"
    "  %11 : Tensor = aten::mul(%10, %x.1)\n"
    "  %12 : Tensor = aten::add(%x.1, %11, %7)\n"
    "  %13 : Tensor = aten::mul(%12, %4)\n"
    "  %14 : Tensor = aten::tanh(%13)\n"
    "  %15 : Tensor = aten::add(%14, %5, %7)\n"
    "  %16 : Tensor = aten::mul(%8, %15)\n"
    "  return (%16)\n";

static const char *LAYER_NORM =
    "graph(%x.1 : Tensor, %weight.1 : Tensor, %bias.1 : Tensor, %eps.1 : float):\n"
    "  %6 : int = prim::Constant[value=-1]()\n"
    "  %7 : bool = prim::Constant[value=1]()\n"
    "  %8 : NoneType = prim::Constant()\n"
    "  %9 : int = prim::Constant[value=1]()\n"
    "  %10 : int[] = prim::ListConstruct(%6)\n"
    "  %mean.1 : Tensor = aten::mean(%x.1, %10, %7, %8)\n"
    "  %12 : Tensor = aten::sub(%x.1, %mean.1, %9)\n"
    "  %13 : Tensor = aten::sub(%x.1, %mean.1, %9)\n"
    "  %14 : Tensor = aten::mul(%12, %13)\n"
    "  %15 : int[] = prim::ListConstruct(%6)\n"
    "  %var.1 : Tensor = aten::mean(%14, %15, %7, %8)\n"
    "  %17 : Tensor = aten::sub(%x.1, %mean.1, %9)\n"
    "  %18 : Tensor = aten::add(%var.1, %eps.1, %9)\n"
    "  %19 : Tensor = aten::sqrt(%18)\n"
    "  %20 : Tensor = aten::div(%17, %19)\n"
    "  %21 : Tensor = aten::mul(%20, %weight.1)\n"
    "  %22 : Tensor = aten::add(%21, %bias.1, %9)\n"
    "  return (%22)\n";

typedef struct workload {
  const char *name;
  int ntensors;                     /* tensor inputs first, then `eps` when has_eps */
  int ndim[8];
  int64_t sizes[8][2];
  bool has_eps;
} workload;

static const workload WORKLOADS[] = {
    {"ratio_iou_20", 8, {1, 1, 1, 1, 1, 1, 1, 1}, {{1 << 20}, {1 << 20}, {1 << 20}, {1 << 20}, {1 << 20}, {1 << 20}, {1 << 20}, {1 << 20}}, false},
    {"ratio_iou_24", 8, {1, 1, 1, 1, 1, 1, 1, 1}, {{1 << 24}, {1 << 24}, {1 << 24}, {1 << 24}, {1 << 24}, {1 << 24}, {1 << 24}, {1 << 24}}, false},
    {"layer_norm", 3, {2, 1, 1}, {{4096, 1024}, {1024}, {1024}}, true},
    {"gelu", 1, {1}, {{1 << 22}}, false},
};

static const char *graph_of(const char *name) {
  if (!strncmp(name, "ratio_iou", 9)) return RATIO_IOU;
  if (!strcmp(name, "gelu")) return GELU;
  return LAYER_NORM;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(fbx_status *st, const char *what) {
  if (st) {
    fprintf(stderr, "bench_autodiff: %s: %s\n", what, fbx_status_message(st));
    exit(1);
  }
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Deterministic values in [lo, lo + span): boxes need positive widths. */
static fbx_ivalue make_tensor(int ndim, const int64_t *sizes, uint64_t seed, float lo, float span) {
  fbx_tensor *t = NULL;
  check(fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, ndim, sizes), "allocating an input");
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) n *= sizes[d];
  float *p = t->data;
  uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    p[i] = lo + span * (float)((s >> 40) & 0xffffff) / (float)0x1000000;
  }
  return fbx_iv_tensor(t);
}

typedef struct result {
  double ms;
  double fwd_launches, fwd_ops, bwd_launches, bwd_ops;
} result;

static result run_one(const workload *w, const char *fuser, int runs) {
  const char *text = graph_of(w->name);
  fbx_graph *g = NULL;
  check(fbx_graph_parse(&g, text, strlen(text), w->name), "parse");
  fbx_executor_opts o = {.struct_size = sizeof o, .fuser = fuser};
  fbx_executor *ex = NULL;
  check(fbx_executor_create(&ex, g, &o), fuser);
  fbx_graph_destroy(g);
  int nin = w->ntensors + (w->has_eps ? 1 : 0);
  fbx_ivalue in[9], gout;
  for (int i = 0; i < w->ntensors; i++) in[i] = make_tensor(w->ndim[i], w->sizes[i], (uint64_t)i + 1, 0.1f, 1.0f);
  if (w->has_eps) in[w->ntensors] = fbx_iv_float(1e-5);
  /* The output has the first input's shape in every workload. */
  fbx_tensor *ones = NULL;
  check(fbx_tensor_empty(&ones, FBX_DTYPE_FLOAT32, w->ndim[0], w->sizes[0]), "allocating the output gradient");
  int64_t n = 1;
  for (int d = 0; d < w->ndim[0]; d++) n *= w->sizes[0][d];
  for (int64_t i = 0; i < n; i++) ((float *)ones->data)[i] = 1.0f;
  gout = fbx_iv_tensor(ones);
  fbx_executor_stats s0 = {.struct_size = sizeof s0}, s1 = {.struct_size = sizeof s1};
  double *times = calloc((size_t)runs, sizeof *times);
  enum { WARMUP = 3 };
  for (int r = 0; r < WARMUP + runs; r++) {
    if (r == WARMUP) fbx_executor_stats_get(ex, &s0);
    double t0 = now();
    fbx_ivalue out, gin[9];
    fbx_grad_handle *h = NULL;
    check(fbx_executor_forward_values(ex, in, nin, NULL, &out, 1, 0, &h), "forward");
    check(fbx_executor_backward_values(h, &gout, 1, gin, nin), "backward");
    fbx_grad_free(h);
    fbx_iv_release(&out);
    for (int i = 0; i < nin; i++) fbx_iv_release(&gin[i]);
    if (r >= WARMUP) times[r - WARMUP] = now() - t0;
  }
  fbx_executor_stats_get(ex, &s1);
  qsort(times, (size_t)runs, sizeof *times, cmp_d);
  result res = {.ms = times[runs / 2] * 1e3};
  res.fwd_launches = (double)(s1.kernel_launches - s0.kernel_launches) / runs;
  res.fwd_ops = (double)(s1.interpreted_ops - s0.interpreted_ops) / runs;
  res.bwd_launches = (double)(s1.backward_kernel_launches - s0.backward_kernel_launches) / runs;
  res.bwd_ops = (double)(s1.backward_interpreted_ops - s0.backward_interpreted_ops) / runs;
  if (s1.guard_failures != s0.guard_failures || s1.fallbacks != s0.fallbacks)
    fprintf(stderr, "bench_autodiff: %s/%s: %lld guard failures and %lld fallbacks while timing\n", w->name, fuser,
            (long long)(s1.guard_failures - s0.guard_failures), (long long)(s1.fallbacks - s0.fallbacks));
  free(times);
  for (int i = 0; i < nin; i++) fbx_iv_release(&in[i]);
  fbx_iv_release(&gout);
  fbx_executor_destroy(ex);
  return res;
}

static void usage(void) {
  fprintf(stderr, "usage: bench_autodiff [--runs N] [--fusers A,B,...] [WORKLOAD]...\n  workloads:");
  for (size_t i = 0; i < sizeof WORKLOADS / sizeof *WORKLOADS; i++) fprintf(stderr, " %s", WORKLOADS[i].name);
  fprintf(stderr, "\n");
  exit(2);
}

int main(int argc, char **argv) {
  int runs = 7;
  char fusers_buf[256] = "none,legacy";
  const char *only[16];
  int nonly = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--fusers") && i + 1 < argc) snprintf(fusers_buf, sizeof fusers_buf, "%s", argv[++i]);
    else if (argv[i][0] == '-' || nonly == 16) usage();
    else only[nonly++] = argv[i];
  }
  if (runs < 1) usage();
  for (int k = 0; k < nonly; k++) {
    bool known = false;
    for (size_t i = 0; i < sizeof WORKLOADS / sizeof *WORKLOADS; i++) known |= !strcmp(only[k], WORKLOADS[i].name);
    if (!known) usage();
  }
  /* Freed blocks stay with the allocator: measure the kernels, not page faults. */
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, -1);
  printf("%-14s %-8s %12s %9s %9s %9s %9s\n", "workload", "fuser", "fwd+bwd ms", "fwd kern", "fwd ops", "bwd kern",
         "bwd ops");
  for (size_t i = 0; i < sizeof WORKLOADS / sizeof *WORKLOADS; i++) {
    const workload *w = &WORKLOADS[i];
    bool want = !nonly;
    for (int k = 0; k < nonly; k++) want |= !strcmp(only[k], w->name);
    if (!want) continue;
    char list[256];
    snprintf(list, sizeof list, "%s", fusers_buf);
    for (char *save = NULL, *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
      result r = run_one(w, f, runs);
      printf("%-14s %-8s %12.2f %9.1f %9.1f %9.1f %9.1f\n", w->name, f, r.ms, r.fwd_launches, r.fwd_ops,
             r.bwd_launches, r.bwd_ops);
      fflush(stdout);
    }
  }
  return 0;
}
