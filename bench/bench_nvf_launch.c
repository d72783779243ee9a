/* Launch overhead of the nvfuser_like device runtime (nvf_rt.h) on OpenCL
 * (PoCL's CPU device here) and, where a GPU and its driver are present, CUDA.
 *
 *   bench_nvf_launch [ITERS]     # default 2000 runs per line
 *
 * Prints microseconds per nvf_rt_run of one launch of a 1-element kernel
 * (buffer wrapped without a copy; buffer copied in and out), and per launch
 * within one run of 16 launches (the marginal cost of one more kernel in a
 * fusion's sequence). Median of 5 rounds after a warm-up. On CUDA also the
 * device's copy bandwidth (cuMemcpyDtoD, timed by events): the reference of
 * a copy-bound kernel's bandwidth (FUSEBOX_CUDA_KERNEL_TIMING=1 gives the
 * kernels' device time; see bench/nvf_gpu.sh).
 *
 *   bench_nvf_launch --stream BYTES [--reps N]
 *
 * The floor of a row-wise kernel on the OpenCL device instead: a kernel
 * that only reads float32 rows of 1024 (BYTES in all) and writes x * 1.5
 * with the stores the persistent scheduler's streamed outputs use
 * (FBXK_VSTORE_NT, the next row prefetched, 64 rows a work-group: the
 * layer-norm schedule without its arithmetic), buffers wrapped, each run
 * preceded by the eviction `fusebox bench` makes (the pool copies a BYTES
 * buffer into another). N runs (default 100) after a warm-up; prints
 *   stream BYTES opencl MEDIAN_MS P10_MS
 * A softmax or layer norm kernel of the same size cannot beat it on that
 * device; bench/bench_nvf.py prints it under its table. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/parallel.h"
#include "bench_mem.h"
#include "host/hostimpl.h"
#include <fusebox/kit/kit_math.h>

#include "../plugins/nvfuser_like/nvf_rt.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static const fbxp_host_api *H;

static void check(fbxp_status *st, const char *what) {
  if (st) {
    fprintf(stderr, "bench_nvf_launch: %s: %s\n", what, H->status_message(st));
    exit(1);
  }
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median over 5 rounds of the seconds per call of `iters` runs. */
static double per_run(nvf_rt *rt, nvf_buffer *buf, const nvf_launch *l, int nl, int iters) {
  check(nvf_rt_run(rt, buf, 1, l, nl), "warm-up");
  double t[5];
  for (int r = 0; r < 5; r++) {
    double t0 = now();
    for (int i = 0; i < iters; i++) check(nvf_rt_run(rt, buf, 1, l, nl), "run");
    t[r] = (now() - t0) / iters;
  }
  qsort(t, 5, sizeof t[0], cmp);
  return t[2];
}

static void bench(nvf_target target, const char *src, int iters) {
  nvf_rt *rt = NULL;
  fbxp_status *st = nvf_rt_open(H, target, &rt);
  if (st) {
    printf("%-6s  unavailable: %s\n", target == NVF_TARGET_OPENCL ? "OpenCL" : "CUDA", H->status_message(st));
    H->status_free(st);
    return;
  }
  printf("%s\n", nvf_rt_device(rt));
  nvf_program *p = NULL;
  check(nvf_rt_compile(rt, src, "tick", &p), "compile");
  /* 4096-aligned: meets any device's base-address alignment, so a host-unified device wraps it */
  char *block = aligned_alloc(4096, 8192);
  if (!block) exit(1);
  memset(block, 0, 8192);
  nvf_arg arg = {.kind = NVF_ARG_BUFFER, .buffer = 0};
  nvf_launch l[16];
  for (int i = 0; i < 16; i++)
    l[i] = (nvf_launch){.program = p, .args = &arg, .nargs = 1, .dims = 1, .global = {1}, .local = {1}};
  nvf_buffer aligned = {block, sizeof(float), NVF_BUF_IN | NVF_BUF_OUT};
  nvf_buffer odd = {block + 4, sizeof(float), NVF_BUF_IN | NVF_BUF_OUT};
  double one = per_run(rt, &aligned, l, 1, iters);
  nvf_rt_stats s;
  nvf_rt_get_stats(rt, &s);
  double one_copied = per_run(rt, &odd, l, 1, iters);
  double sixteen = per_run(rt, &aligned, l, 16, iters / 4 + 1);
  printf("  1 launch per run, buffer %-9s %8.1f us/run\n", s.zero_copy_buffers ? "wrapped:" : "copied:", one * 1e6);
  printf("  1 launch per run, buffer copied:   %8.1f us/run\n", one_copied * 1e6);
  printf("  16 launches per run:               %8.1f us/run, %6.1f us/launch (marginal %.1f)\n", sixteen * 1e6,
         sixteen * 1e6 / 16, (sixteen - one) * 1e6 / 15);
  double gbps = 0;
  fbxp_status *bw = nvf_rt_copy_bandwidth(rt, (size_t)256 << 20, 20, &gbps);
  if (!bw) printf("  copy bandwidth (256 MiB device to device, read + written): %.0f GB/s\n", gbps);
  else H->status_free(bw);
  free(block);
  nvf_rt_close(rt);
}

static const char STREAM_KERNEL[] =
    "__kernel void nvf_stream(__global const float *restrict x, __global float *restrict y, const long rows) {\n"
    "  const long row = (long)get_global_id(0);\n"
    "  if (row < rows) {\n"
    "    for (long j = 0; j < 1024; j += 16) {\n"
    "      FBXK_PREFETCH(x, row * 1024 + j + 1024);\n"
    "      FBXK_VSTORE_NT(16, vload16(0, x + row * 1024 + j) * 1.5f, y + row * 1024 + j);\n"
    "    }\n"
    "  }\n"
    "  if (get_local_id(0) == get_local_size(0) - 1) FBXK_STREAM_FENCE();\n"
    "}\n";

/* --stream BYTES: see the top of the file; the exit status. */
static int stream_floor(long bytes, int reps) {
  nvf_rt *rt = NULL;
  fbxp_status *st = nvf_rt_open(H, NVF_TARGET_OPENCL, &rt);
  if (st) {
    printf("stream %ld unavailable: %s\n", bytes, H->status_message(st));
    H->status_free(st);
    return 0;
  }
  const char *prelude = fbxk_prelude(FBXK_OPENCL);
  size_t n = strlen(prelude) + sizeof STREAM_KERNEL + 2;
  char *src = malloc(n);
  if (!src) exit(1);
  snprintf(src, n, "%s\n%s", prelude, STREAM_KERNEL);
  nvf_program *p = NULL;
  check(nvf_rt_compile(rt, src, "nvf_stream", &p), "compile");
  free(src);
  int64_t rows = bytes / 4096;
  size_t nb = (size_t)rows * 4096;
  char *x = bench_big_block(nb), *y = bench_big_block(nb), *esrc = bench_big_block(nb), *edst = bench_big_block(nb);
  double *ts = malloc(sizeof(double) * (size_t)reps);
  if (!x || !y || !esrc || !edst || !ts) {
    fprintf(stderr, "bench_nvf_launch: out of memory for --stream %ld\n", bytes);
    return 1;
  }
  for (size_t i = 0; i < nb / 4; i++) ((float *)x)[i] = (float)(i % 1000) * 0.001f;
  memset(y, 0, nb), memset(esrc, 1, nb), memset(edst, 2, nb);
  nvf_buffer buf[2] = {{x, nb, NVF_BUF_IN}, {y, nb, NVF_BUF_OUT}};
  nvf_arg args[3] = {{.kind = NVF_ARG_BUFFER, .buffer = 0}, {.kind = NVF_ARG_BUFFER, .buffer = 1},
                     {.kind = NVF_ARG_I64, .i = rows}};
  nvf_launch l = {.program = p, .args = args, .nargs = 3, .dims = 1, .global = {(size_t)(rows + 63) / 64 * 64},
                  .local = {64}};
  bench_evict ev = {edst, esrc};
  for (int r = -2; r < reps; r++) {
    bench_evict_run(&ev, nb);
    double t0 = now();
    check(nvf_rt_run(rt, buf, 2, &l, 1), "stream run");
    if (r >= 0) ts[r] = now() - t0;
  }
  qsort(ts, (size_t)reps, sizeof *ts, cmp);
  printf("stream %lld opencl %.3f %.3f\n", (long long)nb, ts[reps / 2] * 1e3, ts[reps / 10] * 1e3);
  free(x), free(y), free(esrc), free(edst), free(ts);
  nvf_rt_close(rt);
  return 0;
}

int main(int argc, char **argv) {
  H = fbx_host_api_table();
  if (argc > 1 && !strcmp(argv[1], "--stream")) {
    long bytes = argc > 2 ? atol(argv[2]) : 0;
    int reps = argc == 5 ? atoi(argv[4]) : 100;
    if (bytes < 4096 || bytes > (1L << 32) || reps < 1 || (argc != 3 && argc != 5) ||
        (argc == 5 && strcmp(argv[3], "--reps"))) {
      fprintf(stderr, "usage: bench_nvf_launch --stream BYTES [--reps N]  (4096 <= BYTES <= 2^32, N >= 1)\n");
      return 2;
    }
    return stream_floor(bytes, reps);
  }
  int iters = argc > 1 ? atoi(argv[1]) : 2000;
  if (iters < 1 || argc > 2) {
    fprintf(stderr, "usage: bench_nvf_launch [ITERS >= 1] | --stream BYTES [--reps N]\n");
    return 2;
  }
  bench(NVF_TARGET_OPENCL, "__kernel void tick(__global float *x) { x[0] += 1.0f; }\n", iters);
  bench(NVF_TARGET_CUDA, "extern \"C\" __global__ void tick(float *x) { x[0] += 1.0f; }\n", iters);
  return 0;
}
