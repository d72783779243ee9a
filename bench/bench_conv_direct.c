/* The direct convolution kernel alone (core/ops/conv_direct.h), on one
 * thread: one band of a 3x3 stride-1 convolution with padding 1, the grid
 * and weights in cache, the output band written to a fresh part of a
 * buffer larger than the last-level cache on every call (as the
 * convolution's bands do). Prints per kernel (AVX-512 where the CPU has
 * it, AVX2) the best time per band over 20 runs of 20 calls and GFLOP/s of
 * output (2 * O * C * 9 per output element; the grid's padding column
 * is computed too and not counted).
 *
 *   bench_conv_direct [C O W ROWS]     # default 64 64 56 14: a band of
 *                                      # bench_ops.py's conv2d row
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ops/conv_direct.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  int64_t C = 64, O = 64, W = 56, rows = 14;
  if (argc == 5) C = atoll(argv[1]), O = atoll(argv[2]), W = atoll(argv[3]), rows = atoll(argv[4]);
  else if (argc != 1) {
    fprintf(stderr, "usage: bench_conv_direct [C O W ROWS]\n");
    return 2;
  }
  if (C < 1 || O < 1 || W < 1 || rows < 1 || C > 4096 || O > 4096 || W > 4096 || rows > 4096) {
    fprintf(stderr, "bench_conv_direct: C, O, W and ROWS must be in [1, 4096]\n");
    return 2;
  }
  if (!fbx_conv_direct_ok()) {
    printf("the direct kernel does not run on this CPU (no AVX2+FMA)\n");
    return 0;
  }
  int64_t taps = 9, Wp = W + 1, rows_in = rows + 2, plane = rows_in * Wp, pn = rows * Wp;
  int64_t band = O * rows * W, nbands = (64 << 20) / (4 * band) + 1; /* > 64 MiB of output */
  float *grid = malloc(sizeof(float) * (size_t)(C * plane + 64)), *w = malloc(sizeof(float) * (size_t)(O * C * taps));
  /* blocks of 8 channels (AVX-512, taken first) pad the weight at least as far as blocks of 4 */
  float *wd = malloc(sizeof(float) * (size_t)(fbx_conv_direct_wsize(O, C, taps)));
  float *y = calloc((size_t)(band * nbands), sizeof(float)), *bias = calloc((size_t)O, sizeof(float));
  if (!grid || !w || !wd || !y || !bias) {
    fprintf(stderr, "bench_conv_direct: out of memory\n");
    return 1;
  }
  for (int64_t i = 0; i < C * plane + 64; i++) grid[i] = (float)(i % 7) * 0.25f;
  for (int64_t i = 0; i < O * C * taps; i++) w[i] = (float)(i % 5) * 0.125f;
  int64_t off[9];
  for (int t = 0; t < 9; t++) off[t] = (t / 3) * Wp + t % 3;
  for (int wide = 1; wide >= 0; wide--) {
    fbx_conv_direct_avx512 = wide;
    if (wide && fbx_conv_direct_ob() != 8) continue; /* no AVX-512 here */
    fbx_conv_direct_pack(w, O, C, taps, wd);
    double best = 1e30;
    int64_t k = 0;
    for (int r = 0; r < 20; r++) {
      double t0 = now();
      for (int i = 0; i < 20; i++, k++) {
        fbx_conv_direct_out out = {.y = y + (k % nbands) * band, .ldy = rows * W, .Wp = Wp, .Wo = W};
        fbx_conv_direct_f32(grid, plane, off, taps, C, wd, O, bias, pn, &out);
      }
      double t = (now() - t0) / 20;
      if (t < best) best = t;
    }
    printf("%-7s C %lld O %lld W %lld rows %lld: %.1f us per band, %.1f GFLOP/s\n", wide ? "avx512" : "avx2",
           (long long)C, (long long)O, (long long)W, (long long)rows, best * 1e6,
           2.0 * (double)(O * C * taps * rows * W) / best * 1e-9);
  }
  fbx_conv_direct_avx512 = true;
  free(grid), free(w), free(wd), free(y), free(bias);
  return 0;
}
