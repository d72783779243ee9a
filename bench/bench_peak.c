/* The machine's single-precision peak, measured: every thread of the
 * kernels' pool (FUSEBOX_NUM_THREADS) runs a loop of independent fused
 * multiply-adds on the widest vectors the CPU has (AVX-512, else AVX2+FMA,
 * else SSE multiply + add), 12 accumulators deep so that FMA latency never
 * stalls the issue; GFLOP/s = 2 * lanes * 12 * iterations * threads / time,
 * best of 30 short runs (so that a moment without other load is caught). bench/bench_ops.py prints GEMM figures against it.
 *
 *   bench_peak          # prints "peak_gflops <value> <isa> <threads>"
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/parallel.h"

#define ACC 12
#define ITERS 4000000L

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile float sink;

#if defined(__GNUC__) && defined(__x86_64__)
typedef float v16f __attribute__((vector_size(64)));
typedef float v8f __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));

/* Twelve named accumulators (an array would live in memory). */
#define FMA_LOOP(VT, LANES)                                                                 \
  VT b, c, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11;                                \
  for (int k = 0; k < LANES; k++) {                                                         \
    b[k] = 0.999999f, c[k] = 1e-7f;                                                         \
    a0[k] = 0.f + k, a1[k] = 1.f + k, a2[k] = 2.f + k, a3[k] = 3.f + k, a4[k] = 4.f + k;     \
    a5[k] = 5.f + k, a6[k] = 6.f + k, a7[k] = 7.f + k, a8[k] = 8.f + k, a9[k] = 9.f + k;     \
    a10[k] = 10.f + k, a11[k] = 11.f + k;                                                   \
  }                                                                                         \
  for (long i = 0; i < ITERS; i++) {                                                        \
    a0 = a0 * b + c, a1 = a1 * b + c, a2 = a2 * b + c, a3 = a3 * b + c;                     \
    a4 = a4 * b + c, a5 = a5 * b + c, a6 = a6 * b + c, a7 = a7 * b + c;                     \
    a8 = a8 * b + c, a9 = a9 * b + c, a10 = a10 * b + c, a11 = a11 * b + c;                 \
  }                                                                                         \
  VT t = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;                       \
  float s = 0;                                                                              \
  for (int k = 0; k < LANES; k++) s += t[k];                                                \
  sink = s;

__attribute__((target("avx512f"), optimize("fp-contract=fast"))) static void fma512(void) { FMA_LOOP(v16f, 16) }
__attribute__((target("avx2,fma"), optimize("fp-contract=fast"))) static void fma256(void) { FMA_LOOP(v8f, 8) }
static void mul128(void) { FMA_LOOP(v4f, 4) }

static int lanes;
static void body(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  for (int64_t t = begin; t < end; t++) {
    if (lanes == 16) fma512();
    else if (lanes == 8) fma256();
    else mul128();
  }
}

int main(void) {
  __builtin_cpu_init();
  const char *isa = "sse";
  lanes = 4;
  if (__builtin_cpu_supports("avx512f")) lanes = 16, isa = "avx512f";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) lanes = 8, isa = "avx2+fma";
  int threads = fbx_parallel_threads();
  double best = 1e30;
  for (int r = 0; r < 30; r++) {
    double t0 = now();
    fbx_parallel_for(threads, 1, body, NULL);
    double t = now() - t0;
    if (t < best) best = t;
  }
  double flops = 2.0 * lanes * ACC * (double)ITERS * threads;
  printf("peak_gflops %.1f %s %d\n", flops / best * 1e-9, isa, threads);
  return 0;
}
#else
int main(void) {
  printf("peak_gflops 0 unknown 0\n");
  return 0;
}
#endif
