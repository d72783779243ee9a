/* The reference interpreter on a whole graph: time per run and effective
 * bandwidth against memcpy, measured in the same process.
 *
 *   ./build/bench/bench_interp [GRAPH] [--iters N]
 *
 * GRAPH defaults to examples/ratio_iou.ir (run from the repository root).
 * Every graph input must be a Tensor; each gets n float32 elements uniform
 * in [0.5, 1.5) (positive, so widths and heights make sense). For n = 2^20
 * and 2^24 it prints the median and minimum time per run and the effective
 * bandwidth (inputs + outputs bytes / median time) as a ratio to the memcpy
 * bandwidth of a copy of the same number of bytes. This is the "no fusion"
 * baseline every fuser is compared with: the interpreter writes every
 * intermediate to memory, so expect the ratio well below 1.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "exec/interp.h"
#include "ir/text.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int die(fbx_status *st) {
  fprintf(stderr, "bench_interp: %s\n", fbx_status_message(st));
  fbx_status_free(st);
  return 1;
}

/* Median seconds to memcpy `bytes` (buffers touched first). */
static double memcpy_time(size_t bytes, int iters) {
  char *a = malloc(bytes), *b = malloc(bytes);
  if (!a || !b) {
    free(a);
    free(b);
    return 0;
  }
  memset(a, 1, bytes);
  memset(b, 2, bytes);
  double t[64];
  for (int i = 0; i < iters; i++) {
    double t0 = now_s();
    memcpy(b, a, bytes);
    t[i] = now_s() - t0;
  }
  volatile char sink = b[bytes / 2];
  (void)sink;
  free(a);
  free(b);
  return median(t, iters);
}

int main(int argc, char **argv) {
  const char *path = "examples/ratio_iou.ir";
  int iters = 15;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = atoi(argv[++i]);
    else
      path = argv[i];
  }
  if (iters < 1) iters = 1;
  if (iters > 64) iters = 64;

  fbx_graph *g = NULL;
  fbx_status *st = fbx_graph_parse_file(&g, path);
  if (st) return die(st);
  fbx_interp *it = NULL;
  if ((st = fbx_interp_create(&it, g))) {
    fbx_graph_destroy(g);
    return die(st);
  }
  int nin = fbx_interp_ninputs(it), nout = fbx_interp_noutputs(it);
  printf("graph %s: %d inputs, %d outputs, %d nodes\n", path, nin, nout, fbx_graph_count_nodes(g));

  const int64_t sizes[2] = {1 << 20, 1 << 24};
  int rc = 0;
  for (int s = 0; s < 2 && !rc; s++) {
    int64_t n = sizes[s];
    fbx_ivalue *in = calloc((size_t)nin, sizeof *in);
    fbx_ivalue *out = calloc((size_t)nout, sizeof *out);
    uint64_t rng = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < nin && !st; i++) {
      fbx_tensor *t = NULL;
      if ((st = fbx_tensor_empty(&t, FBX_DTYPE_FLOAT32, 1, &n))) break;
      float *d = t->data;
      for (int64_t k = 0; k < n; k++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        d[k] = 0.5f + (float)(rng >> 40) / (float)(1 << 24);
      }
      in[i] = fbx_iv_tensor(t);
    }
    double t[64];
    fbx_interp_stats stats = {0};
    fbx_run_opts opts = {.seed = 1, .stats = &stats};
    for (int r = 0; r <= iters && !st; r++) { /* run 0 warms up */
      double t0 = now_s();
      st = fbx_interp_run(it, in, nin, out, &opts);
      double dt = now_s() - t0;
      if (r) t[r - 1] = dt;
      for (int o = 0; o < nout && !st; o++) fbx_iv_release(&out[o]);
    }
    if (st) {
      rc = die(st);
      st = NULL;
    } else {
      double best = t[0];
      for (int r = 1; r < iters; r++) best = t[r] < best ? t[r] : best;
      double med = median(t, iters);
      size_t bytes = (size_t)(nin + nout) * (size_t)n * sizeof(float);
      double mc = memcpy_time(bytes / 2, iters); /* copy of half: reads + writes == bytes */
      double bw = (double)bytes / med, mbw = (double)bytes / mc;
      printf("n=2^%d: median %.3f ms, min %.3f ms per run, %lld kernels; effective %.2f GB/s, "
             "memcpy %.2f GB/s, ratio %.3f\n",
             s ? 24 : 20, med * 1e3, best * 1e3, (long long)stats.kernels_run, bw * 1e-9, mbw * 1e-9, bw / mbw);
    }
    for (int i = 0; i < nin; i++) fbx_iv_release(&in[i]);
    free(in);
    free(out);
  }
  fbx_interp_destroy(it);
  fbx_graph_destroy(g);
  return rc;
}
