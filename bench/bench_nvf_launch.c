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
 * kernels' device time; see bench/nvf_gpu.sh). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "host/hostimpl.h"

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

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 2000;
  if (iters < 1) {
    fprintf(stderr, "usage: bench_nvf_launch [ITERS >= 1]\n");
    return 2;
  }
  H = fbx_host_api_table();
  bench(NVF_TARGET_OPENCL, "__kernel void tick(__global float *x) { x[0] += 1.0f; }\n", iters);
  bench(NVF_TARGET_CUDA, "extern \"C\" __global__ void tick(float *x) { x[0] += 1.0f; }\n", iters);
  return 0;
}
