/* The machine's single-precision peak, measured: every thread of the
 * kernels' pool (FUSEBOX_NUM_THREADS) runs a loop of independent fused
 * multiply-adds on the widest vectors the CPU has (AVX-512, else AVX2+FMA,
 * else SSE multiply + add), 12 accumulators deep so that FMA latency never
 * stalls the issue; GFLOP/s = 2 * lanes * 12 * iterations * threads / time,
 * best of 30 short runs (so that a moment without other load is caught). bench/bench_ops.py prints GEMM figures against it.
 *
 *   bench_peak          # prints "peak_gflops <value> <isa> <threads>"
 *   bench_peak --sgemm 1024x1024x1024 --sgemm 4096x1024x1024t [--reps 20]
 *
 * --sgemm MxNxK[t] also times the row-major float32 GEMM the kernels call
 * (C[M,N] = A[M,K] @ B, B [K,N], or with t B given as its transpose [N,K],
 * as linear's weight is): fbx_linalg_gemm, single-threaded OpenBLAS calls
 * spread over the pool (FUSEBOX_NUM_THREADS), and prints per shape
 *   sgemm M N K t best_gflops median_gflops best_share median_share
 * (shares of the peak above), plus the thread count OpenBLAS reports: the
 * GEMM's own efficiency, apart from anything the interpreter adds.
 *
 *   bench_peak --stream BYTES [--reps 100]
 *
 * --stream BYTES instead measures the memory floor of a kernel that reads
 * one float32 tensor of BYTES and writes another of BYTES (a row-wise
 * softmax or layer norm reads its input once and writes its output once),
 * in 2 MiB-aligned huge-page blocks as large tensors get: the pool's
 * threads claim slices of 256 KiB as they come free (static halves ran
 * 1.74-2.0 ms against 1.23-1.34 for 16 MiB here: one thread slowed by
 * another process left the other idle), three loops alternated run by run,
 * each run preceded by the eviction `fusebox bench` makes before its timed
 * runs (the pool copies a BYTES buffer into another: the same cache state
 * as the rows of bench_nvf.py and bench_ops.py start from), and prints
 *   stream BYTES rw_nt MED P10 rw MED P10 read MED P10
 * in ms (median and 10th percentile): rw_nt reads x and writes y = 1.5 x
 * with non-temporal stores (no read of y's lines first: the least traffic a
 * read-once write-once kernel can make), rw the same with ordinary stores,
 * read only sums x. No kernel that must move those bytes beats rw_nt's
 * figure on this machine; bench/bench_nvf.py prints it under its table. */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/parallel.h"
#include "bench_mem.h"
#include "ops/reduce.h" /* fbx_linalg_blas_init, fbx_linalg_gemm */

#define ACC 12
#define ITERS 4000000L

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile float sink;

#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
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

/* --stream: slices of 64 Ki floats (256 KiB) claimed by whichever thread
 * is free, as PoCL hands out a row-wise kernel's work-groups (64 rows of
 * 1024) */
#define STREAM_TASK 65536
/* --stream: x, y of n floats, 64-byte aligned; the mode of the run */
static float *sx, *sy;
static int64_t sn;
static int smode; /* 0 rw_nt, 1 rw, 2 read */
static volatile float ssink;
__attribute__((target("avx2"))) static void stream_slice(int64_t b, int64_t e) {
  const __m256 k = _mm256_set1_ps(1.5f);
  if (smode == 0) {
    for (int64_t i = b; i < e; i += 8) _mm256_stream_ps(sy + i, _mm256_mul_ps(_mm256_load_ps(sx + i), k));
    _mm_sfence();
  } else if (smode == 1) {
    for (int64_t i = b; i < e; i += 8) _mm256_store_ps(sy + i, _mm256_mul_ps(_mm256_load_ps(sx + i), k));
  } else {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0;
    for (int64_t i = b; i < e; i += 16)
      a0 = _mm256_add_ps(a0, _mm256_load_ps(sx + i)), a1 = _mm256_add_ps(a1, _mm256_load_ps(sx + i + 8));
    float t[8];
    _mm256_storeu_ps(t, _mm256_add_ps(a0, a1));
    ssink = t[0];
  }
}
static void stream_body(void *ctx, int64_t begin, int64_t end) {
  (void)ctx;
  stream_slice(begin, end);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* An --sgemm shape; false (with a message) when malformed. */
static bool parse_shape(const char *spec, long *m, long *n, long *k, char *t) {
  char extra = 0;
  *t = 0;
  int got = sscanf(spec, "%ldx%ldx%ld%c%c", m, n, k, t, &extra);
  if (got < 3 || got > 4 || *m <= 0 || *n <= 0 || *k <= 0 || (*t && *t != 't') || *m > 65536 || *n > 65536 ||
      *k > 65536) {
    fprintf(stderr, "bench_peak: --sgemm wants MxNxK or MxNxKt (each 1..65536), got '%s'\n", spec);
    return false;
  }
  return true;
}

/* Times `reps` calls of one (parsed) sgemm shape; 0 on success. */
static int time_sgemm(const char *spec, int reps, double peak) {
  long m, n, k;
  char t;
  parse_shape(spec, &m, &n, &k, &t);
  float *a = fbx_malloc(sizeof(float) * (size_t)(m * k)), *b = fbx_malloc(sizeof(float) * (size_t)(k * n));
  float *c = fbx_malloc(sizeof(float) * (size_t)(m * n));
  double *ts = fbx_malloc(sizeof(double) * (size_t)reps);
  if (!a || !b || !c || !ts) {
    fprintf(stderr, "bench_peak: out of memory for %s\n", spec);
    fbx_free(a), fbx_free(b), fbx_free(c), fbx_free(ts);
    return 1;
  }
  for (long i = 0; i < m * k; i++) a[i] = (float)((i * 7) % 13) * 0.1f - 0.6f;
  for (long i = 0; i < k * n; i++) b[i] = (float)((i * 5) % 11) * 0.1f - 0.5f;
  for (int r = -2; r < reps; r++) { /* two untimed warm-up calls */
    double t0 = now();
    fbx_linalg_gemm(false, false, t != 0, m, n, k, 1.0, a, k, b, t ? k : n, 0.0, c, n);
    if (r >= 0) ts[r] = now() - t0;
  }
  qsort(ts, (size_t)reps, sizeof *ts, cmp_d);
  double fl = 2.0 * (double)m * (double)n * (double)k;
  double best = fl / ts[0] * 1e-9, med = fl / ts[reps / 2] * 1e-9;
  printf("sgemm %ld %ld %ld %s %.1f %.1f %.0f%% %.0f%%\n", m, n, k, t ? "t" : "n", best, med, 100 * best / peak,
         100 * med / peak);
  fbx_free(a), fbx_free(b), fbx_free(c), fbx_free(ts);
  return 0;
}

/* --stream BYTES: see the top of the file; 0 on success. */
static int time_stream(long bytes, int reps) {
  if (!__builtin_cpu_supports("avx2")) {
    printf("stream %ld unavailable (needs AVX2)\n", bytes);
    return 0;
  }
  sn = bytes / 64 * 16; /* whole 64-byte steps */
  size_t nb = (size_t)sn * 4;
  sx = bench_big_block(nb), sy = bench_big_block(nb);
  char *esrc = bench_big_block(nb), *edst = bench_big_block(nb);
  double *ts = malloc(sizeof(double) * 3 * (size_t)reps);
  if (!sx || !sy || !esrc || !edst || !ts) {
    fprintf(stderr, "bench_peak: out of memory for --stream %ld\n", bytes);
    free(sx), free(sy), free(esrc), free(edst), free(ts);
    return 1;
  }
  memset(esrc, 1, nb);
  memset(edst, 2, nb);
  bench_evict ev = {edst, esrc};
  for (int64_t i = 0; i < sn; i++) sx[i] = (float)(i % 1000) * 0.001f, sy[i] = 0;
  for (int r = -1; r < reps; r++) /* one untimed round first */
    for (smode = 0; smode < 3; smode++) {
      bench_evict_run(&ev, nb);
      double t0 = now();
      fbx_parallel_for_tasks(sn, STREAM_TASK, stream_body, NULL);
      if (r >= 0) ts[smode * reps + r] = now() - t0;
    }
  printf("stream %ld", (long)(sn * 4));
  static const char *names[3] = {"rw_nt", "rw", "read"};
  for (int m = 0; m < 3; m++) {
    qsort(ts + m * reps, (size_t)reps, sizeof *ts, cmp_d);
    printf(" %s %.3f %.3f", names[m], ts[m * reps + reps / 2] * 1e3, ts[m * reps + reps / 10] * 1e3);
  }
  printf("\n");
  free(sx), free(sy), free(esrc), free(edst), free(ts);
  return 0;
}

int main(int argc, char **argv) {
  const char *shapes[16];
  int nshapes = 0, reps = 20, reps_given = 0;
  long stream_bytes = 0;
  for (int i = 1; i < argc; i++) {
    long m, n, k;
    char t;
    if (!strcmp(argv[i], "--sgemm") && i + 1 < argc && nshapes < 16) {
      if (!parse_shape(argv[i + 1], &m, &n, &k, &t)) return 2;
      shapes[nshapes++] = argv[++i];
    } else if (!strcmp(argv[i], "--reps") && i + 1 < argc && (reps = atoi(argv[++i])) > 0) {
      reps_given = 1;
    } else if (!strcmp(argv[i], "--stream") && i + 1 < argc && (stream_bytes = atol(argv[++i])) >= 64 &&
               stream_bytes <= (1L << 32)) {
      continue;
    } else {
      fprintf(stderr, "usage: bench_peak [--sgemm MxNxK[t]]... [--stream BYTES] [--reps N]  (at most 16 shapes, "
                      "64 <= BYTES <= 2^32, N >= 1)\n");
      return 2;
    }
  }
  __builtin_cpu_init();
  const char *isa = "sse";
  lanes = 4;
  if (__builtin_cpu_supports("avx512f")) lanes = 16, isa = "avx512f";
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) lanes = 8, isa = "avx2+fma";
  int threads = fbx_parallel_threads();
  if (stream_bytes) return time_stream(stream_bytes, reps_given ? reps : 100);
  double best = 1e30;
  for (int r = 0; r < 30; r++) {
    double t0 = now();
    fbx_parallel_for(threads, 1, body, NULL);
    double t = now() - t0;
    if (t < best) best = t;
  }
  double flops = 2.0 * lanes * ACC * (double)ITERS * threads;
  double peak = flops / best * 1e-9;
  printf("peak_gflops %.1f %s %d\n", peak, isa, threads);
  if (nshapes) {
    fbx_linalg_blas_init();
    printf("openblas_threads %d (FUSEBOX_NUM_THREADS pool: %d)\n", openblas_get_num_threads(), threads);
  }
  for (int i = 0; i < nshapes; i++)
    if (time_sgemm(shapes[i], reps, peak)) return 1;
  return 0;
}
#else
int main(void) {
  /* no FMA loop for this compiler or CPU: no peak, and no share to give */
  printf("peak_gflops 0 unknown 0\n");
  return 0;
}
#endif
