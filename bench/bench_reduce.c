/* Timing of the reference reduction and GEMM kernels, through the op table
 * as the interpreter calls them.
 *
 *   bench_reduce            # all benchmarks, best of 5 runs each
 *   FUSEBOX_NUM_THREADS=1 bench_reduce
 *
 * Prints: float32 sum over 2^24 elements (GB/s read) next to memcpy of the
 * same bytes, a row-wise and a column-wise sum, softmax, and float32/float64
 * mm GFLOP/s at 512x512 (plus a transposed-weight linear). */
#define _POSIX_C_SOURCE 200809L
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
    fprintf(stderr, "bench_reduce: %s\n", fbx_status_message(st));
    exit(1);
  }
}

/* Best time of `reps` calls of kind(args). */
static double time_op(const char *kind, fbx_ivalue *args, int nargs, int reps) {
  fbx_sym sym;
  fbx_sym_intern(&sym, kind, strlen(kind));
  const fbx_op *op;
  check(fbx_op_resolve(&op, sym, args, nargs));
  fbx_ivalue norm[FBX_SCHEMA_MAX_ARGS], outs[FBX_SCHEMA_MAX_RETS];
  check(fbx_op_normalize_args(op, args, nargs, norm));
  fbx_kctx ctx = {.op = op};
  double best = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    check(op->kernel(&ctx, norm, outs));
    double t = now() - t0;
    if (t < best) best = t;
    for (int i = 0; i < op->schema.nrets; i++) fbx_iv_release(&outs[i]);
  }
  return best;
}

static fbx_tensor *randt(fbx_dtype dt, int nd, const int64_t *sizes) {
  fbx_tensor *t = NULL;
  check(fbx_tensor_empty(&t, dt, nd, sizes));
  uint64_t s = 1;
  for (int64_t i = 0; i < t->numel; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    fbx_tensor_set_f64(t, i, (double)(s >> 40) / 16777216.0 - 0.5);
  }
  return t;
}

int main(void) {
  check(fbx_op_table_init());
  printf("threads: %d\n", fbx_parallel_threads());
  int64_t n = (int64_t)1 << 24;
  fbx_tensor *x = randt(FBX_DTYPE_FLOAT32, 1, &n);
  double bytes = (double)n * 4;

  /* through a volatile pointer, so the copy is not optimized away */
  void *(*volatile copy)(void *, const void *, size_t) = memcpy;
  char *dst = malloc((size_t)bytes);
  copy(dst, x->data, (size_t)bytes);
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    copy(dst, x->data, (size_t)bytes);
    double t = now() - t0;
    if (t < best) best = t;
  }
  free(dst);
  printf("memcpy 64 MiB:                      %8.2f ms  %6.1f GB/s (read+write %6.1f)\n", best * 1e3,
         bytes / best * 1e-9, 2 * bytes / best * 1e-9);

  fbx_ivalue a[4] = {fbx_iv_tensor(x), fbx_iv_none()};
  double t = time_op("aten::sum", a, 2, 5);
  printf("sum float32 [2^24]:                 %8.2f ms  %6.1f GB/s\n", t * 1e3, bytes / t * 1e-9);

  int64_t rs[2] = {4096, 4096};
  fbx_tensor *m = randt(FBX_DTYPE_FLOAT32, 2, rs);
  for (int d = 1; d >= 0; d--) {
    fbx_ivalue l = fbx_iv_int(d);
    fbx_ivalue b[4] = {fbx_iv_tensor(m), l, fbx_iv_bool(false), fbx_iv_none()};
    t = time_op("aten::sum", b, 4, 5);
    printf("sum float32 [4096, 4096] dim %d:     %8.2f ms  %6.1f GB/s\n", d, t * 1e3, bytes / t * 1e-9);
  }
  fbx_ivalue sm[3] = {fbx_iv_tensor(m), fbx_iv_int(-1), fbx_iv_none()};
  t = time_op("aten::softmax", sm, 3, 5);
  printf("softmax float32 [4096, 4096] dim -1:%8.2f ms  %6.1f GB/s (read+write)\n", t * 1e3, 2 * bytes / t * 1e-9);
  fbx_tensor_release(m);

  fbx_dtype dts[2] = {FBX_DTYPE_FLOAT32, FBX_DTYPE_FLOAT64};
  for (int k = 0; k < 2; k++) {
    int64_t s[2] = {512, 512};
    fbx_tensor *p = randt(dts[k], 2, s), *q = randt(dts[k], 2, s);
    fbx_ivalue mm[2] = {fbx_iv_tensor(p), fbx_iv_tensor(q)};
    t = time_op("aten::mm", mm, 2, 5);
    printf("mm %s 512x512x512:             %8.2f ms  %6.1f GFLOP/s\n", fbx_dtype_name(dts[k]), t * 1e3,
           2.0 * 512 * 512 * 512 / t * 1e-9);
    fbx_ivalue lin[3] = {fbx_iv_tensor(p), fbx_iv_tensor(q), fbx_iv_none()};
    t = time_op("aten::linear", lin, 3, 5);
    printf("linear %s 512x512 (W^T view):  %8.2f ms  %6.1f GFLOP/s\n", fbx_dtype_name(dts[k]), t * 1e3,
           2.0 * 512 * 512 * 512 / t * 1e-9);
    fbx_tensor_release(p);
    fbx_tensor_release(q);
  }
  int64_t big[2] = {1024, 1024};
  fbx_tensor *p = randt(FBX_DTYPE_FLOAT32, 2, big), *q = randt(FBX_DTYPE_FLOAT32, 2, big);
  fbx_ivalue mm[2] = {fbx_iv_tensor(p), fbx_iv_tensor(q)};
  t = time_op("aten::mm", mm, 2, 3);
  printf("mm float32 1024x1024x1024:          %8.2f ms  %6.1f GFLOP/s\n", t * 1e3, 2.0 * 1024 * 1024 * 1024 / t * 1e-9);
  fbx_tensor_release(p);
  fbx_tensor_release(q);
  fbx_tensor_release(x);
  return 0;
}
