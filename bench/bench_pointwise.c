/* Bandwidth of the pointwise kernels, through the op table as the
 * interpreter calls them, against memcpy of the same size in the same run.
 *
 *   bench_pointwise                 # 2^20 and 2^24 float32 elements
 *   bench_pointwise 22              # 2^22 only
 *   FUSEBOX_NUM_THREADS=1 bench_pointwise
 *
 * For each unary and binary float32 op: median time of several runs, bytes
 * moved ((inputs + 1) * n * 4: each input read once, the output written
 * once) over that time, and the ratio to memcpy's bandwidth (n * 4 read +
 * n * 4 written, warm destination) on as many threads as the kernels use
 * (the 1-thread figure is printed too; the larger of the two is the
 * reference). At 2^24 the data (64 MB per tensor) is out of cache and the
 * ratio says how close a kernel comes to the memory's speed; at 2^20 the
 * data sits in cache and memcpy is several times faster, so the
 * transcendental ops are compute-bound there. The output tensor is
 * allocated by the kernel each call, as in the interpreter; the allocator is
 * told to keep freed memory (mallopt) so that this measures the kernel and
 * not the OS zeroing fresh pages. */
#define _DEFAULT_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/parallel.h"
#include "ir/symbol.h"
#include "ops/optable.h"
#include <fusebox/tensor.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void check(fbx_status *st) {
  if (st) {
    fprintf(stderr, "bench_pointwise: %s\n", fbx_status_message(st));
    exit(1);
  }
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define RUNS 9

static double median(double *t, int n) {
  qsort(t, (size_t)n, sizeof *t, cmp_d);
  return t[n / 2];
}

typedef struct {
  char *dst;
  const char *src;
} copy_ctx;

static void copy_range(void *ctx, int64_t begin, int64_t end) {
  copy_ctx *c = ctx;
  memcpy(c->dst + begin, c->src + begin, (size_t)(end - begin));
}

/* memcpy's bandwidth (bytes read + written per second) on `threads`
 * threads: 1 is a plain memcpy; more split the copy over the kernels' own
 * pool (fbx_parallel_for), as the kernels split their loops. */
static double memcpy_gbs(size_t bytes, int threads) {
  char *src = malloc(bytes), *dst = malloc(bytes);
  memset(src, 1, bytes);
  memset(dst, 0, bytes);
  copy_ctx c = {dst, src};
  double t[RUNS];
  for (int r = 0; r < RUNS; r++) {
    double t0 = now();
    if (threads > 1)
      fbx_parallel_for((int64_t)bytes, (int64_t)(bytes / (size_t)threads), copy_range, &c);
    else
      memcpy(dst, src, bytes);
    t[r] = now() - t0;
    src[r] = dst[bytes - 1 - (size_t)r]; /* keep the copies alive */
  }
  free(src);
  free(dst);
  return 2.0 * (double)bytes / median(t, RUNS) / 1e9;
}

static const char *UNARY[] = {"abs", "neg", "reciprocal", "sqrt", "rsqrt", "square", "exp", "exp2", "expm1",
                              "log", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan",
                              "sinh", "cosh", "tanh", "erf", "erfc", "lgamma", "sigmoid", "logit", "relu",
                              "relu6", "leaky_relu", "elu", "gelu", "silu", "mish", "softplus", "hardtanh",
                              "hardsigmoid", "hardswish", "floor", "ceil", "round", "trunc", "frac", "sign",
                              "logical_not", "isnan", "isinf", "nan_to_num", "clamp_min", "pow"};
static const char *BINARY[] = {"add", "sub", "rsub", "mul", "div", "floor_divide", "remainder", "fmod", "pow",
                               "atan2", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
                               "logical_and", "logical_or", "logical_xor"};

static double run_op(const char *name, fbx_ivalue *args, int nargs, int64_t n, int nin) {
  char full[64];
  snprintf(full, sizeof full, "aten::%s", name);
  fbx_sym sym;
  if (fbx_sym_intern(&sym, full, strlen(full))) exit(1);
  const fbx_op *op;
  check(fbx_op_resolve(&op, sym, args, nargs));
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS], out = fbx_iv_none();
  check(fbx_op_normalize_args(op, args, nargs, norm));
  fbx_kctx ctx = {.op = op};
  double t[RUNS];
  check(op->kernel(&ctx, norm, &out)); /* warm up */
  fbx_iv_release(&out);
  for (int r = 0; r < RUNS; r++) {
    double t0 = now();
    check(op->kernel(&ctx, norm, &out));
    t[r] = now() - t0;
    fbx_iv_release(&out);
  }
  size_t osize = 4;
  check(op->kernel(&ctx, norm, &out));
  osize = fbx_tensor_elem_size(out.u.t);
  fbx_iv_release(&out);
  double bytes = (double)n * (4.0 * nin + (double)osize);
  return bytes / median(t, RUNS) / 1e9;
}

static void bench(int log2n) {
  int64_t n = (int64_t)1 << log2n;
  int threads = fbx_parallel_threads();
  double mc1 = memcpy_gbs((size_t)n * 4, 1);
  double mc = memcpy_gbs((size_t)n * 4, threads);
  /* the kernels run on `threads` threads: compare them with a memcpy on as
   * many (and never with a slower one) */
  mc = mc > mc1 ? mc : mc1;
  printf("\n2^%d float32 elements, %d threads: memcpy %.2f GB/s on %d threads, %.2f GB/s on 1 (read + written)\n",
         log2n, threads, mc, threads, mc1);
  printf("%-16s %10s %8s\n", "op", "GB/s", "/memcpy");
  fbx_tensor *a = NULL, *b = NULL;
  check(fbx_tensor_empty(&a, FBX_DTYPE_FLOAT32, 1, &n));
  check(fbx_tensor_empty(&b, FBX_DTYPE_FLOAT32, 1, &n));
  float *pa = a->data, *pb = b->data;
  for (int64_t i = 0; i < n; i++) {
    pa[i] = (float)((i % 1000) - 500) * 0.00173f + 0.001f; /* within (-1, 1): asin/acos/logit stay finite */
    pb[i] = (float)((i % 777) + 1) * 0.0011f;
  }
  int below = 0, total = 0;
  double worst = 1e9;
  const char *worst_name = "";
  for (size_t k = 0; k < sizeof UNARY / sizeof UNARY[0]; k++) {
    fbx_ivalue args[2] = {fbx_iv_tensor(a), fbx_iv_float(0.5)};
    int nargs = !strcmp(UNARY[k], "clamp_min") || !strcmp(UNARY[k], "pow") ? 2 : 1;
    double g = run_op(UNARY[k], args, nargs, n, 1);
    printf("%-16s %10.2f %8.2f%s\n", UNARY[k], g, g / mc, g / mc < 0.5 ? "  < 50%" : "");
    below += g / mc < 0.5;
    total++;
    if (g / mc < worst) worst = g / mc, worst_name = UNARY[k];
  }
  for (size_t k = 0; k < sizeof BINARY / sizeof BINARY[0]; k++) {
    fbx_ivalue args[2] = {fbx_iv_tensor(a), fbx_iv_tensor(b)};
    double g = run_op(BINARY[k], args, 2, n, 2);
    printf("%-16s %10.2f %8.2f%s\n", BINARY[k], g, g / mc, g / mc < 0.5 ? "  < 50%" : "");
    below += g / mc < 0.5;
    total++;
    if (g / mc < worst) worst = g / mc, worst_name = BINARY[k];
  }
  {
    fbx_ivalue args[2] = {fbx_iv_tensor(a), fbx_iv_float(2.5)};
    double g = run_op("mul", args, 2, n, 1);
    printf("%-16s %10.2f %8.2f%s\n", "mul(x, 2.5)", g, g / mc, g / mc < 0.5 ? "  < 50%" : "");
  }
  {
    /* lgamma picks its loop by each block's range (vmath.h): the table's
     * inputs, all in (-1, 1), take the loops without Stirling's series;
     * this one puts every range into every block (x in (-2, 40)) */
    for (int64_t i = 0; i < n; i++) pb[i] = (float)((i * 7919) % 4200) * 0.01f - 1.995f;
    fbx_ivalue args[1] = {fbx_iv_tensor(b)};
    double g = run_op("lgamma", args, 1, n, 1);
    printf("%-16s %10.2f %8.2f%s\n", "lgamma(mixed)", g, g / mc, g / mc < 0.5 ? "  < 50%" : "");
  }
  printf("summary 2^%d: %d of %d ops at >= 50%% of memcpy; slowest %s at %.2f\n", log2n, total - below, total,
         worst_name, worst);
  fbx_tensor_release(a);
  fbx_tensor_release(b);
}

int main(int argc, char **argv) {
  /* keep freed blocks in the heap: the kernel's output allocation then
   * reuses warm pages, as a caching allocator would */
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  check(fbx_op_table_init());
  if (argc > 1) {
    bench(atoi(argv[1]));
  } else {
    bench(20);
    bench(24);
  }
  return 0;
}
