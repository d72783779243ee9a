/* The float32 direct convolution kernel of stride-1 convolutions
 * (k_conv.c's CONV_SHIFTED bands), for x86-64 CPUs with AVX2 and FMA or
 * with AVX-512.
 *
 * On a band's padded input grid ([Cg][rows_in][Wp], see k_conv.c) the tap t
 * of grid position p (flattened over the band's rows, Wp wide) reads
 * grid[c * plane + p + off[t]]. The kernel computes, for every output
 * channel o of the group and every position p < pn,
 *
 *   bias[o] + sum over c < Cg, t < taps of w[o][c][t] * grid[c * plane + p + off[t]]
 *
 * (bias NULL: 0) in registers, a block of output channels by a block of
 * positions at a time (AVX-512: 8 channels by 48 positions in 24 zmm
 * registers; AVX2: 4 by 24 in 12 ymm), each accumulator starting from the
 * bias and adding its products in (c, t) order with fused multiply-adds,
 * and writes each sum straight into the output: position p is output
 * column p % Wp of output row p / Wp, kept where that column is below Wo,
 * at y[o * ldy + (p / Wp) * Wo + p % Wp]; the other columns are the grid's
 * padding, computed and dropped. The input channels go a chunk at a time
 * (FBX_CONV_CCH), the partial sums stored into y and taken up again for
 * the next chunk, so that the weights of a channel block stay in the L1
 * cache while its position blocks pass over the grid.
 *
 * Positions are computed in whole vectors: the grid must be readable
 * fbx_conv_direct_slack() floats past the last position that a tap reads
 * for p < pn (the caller's slack); what lies there only reaches dropped
 * sums. Where fbx_conv_direct_ok() is false the caller keeps its GEMMs.
 */
#ifndef FBX_OPS_CONV_DIRECT_H
#define FBX_OPS_CONV_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

/* Where the sums go: see the header comment. */
typedef struct fbx_conv_direct_out {
  float *y;       /* output channel 0 of the group, the band's first row, column 0 */
  int64_t ldy;    /* floats from one output channel to the next */
  int64_t Wp, Wo; /* grid row width; output row width (Wo <= Wp) */
} fbx_conv_direct_out;

/* Whether this build and CPU run fbx_conv_direct_f32. */
bool fbx_conv_direct_ok(void);

/* Floats of the packed weight of one group of Og output channels. */
int64_t fbx_conv_direct_wsize(int64_t Og, int64_t Cg, int64_t taps);

/* Packs one group's weight w [Og][Cg][taps] (contiguous) into wd, in the
 * order the kernel reads it (blocks of output channels, padded with
 * zeros). */
void fbx_conv_direct_pack(const float *w, int64_t Og, int64_t Cg, int64_t taps, float *wd);

/* Output channels per block: the kernel may be given the output channels
 * [o0, o0 + n) of a packed weight, o0 a multiple of this, as the weight
 * wd + o0 * Cg * taps of n channels. */
int64_t fbx_conv_direct_ob(void);

/* Floats past the last position read that the kernel may read too. */
int64_t fbx_conv_direct_slack(void);

/* The sums above for p < pn into out (see the header comment); wd from
 * fbx_conv_direct_pack. Only where fbx_conv_direct_ok() (it aborts
 * elsewhere). */
void fbx_conv_direct_f32(const float *grid, int64_t plane, const int64_t *off, int64_t taps, int64_t Cg,
                         const float *wd, int64_t Og, const float *bias, int64_t pn, const fbx_conv_direct_out *out);

/* For tests: false runs the AVX2 kernel on a CPU with AVX-512 too. Set
 * it before packing a weight (the two kernels pack differently). */
extern bool fbx_conv_direct_avx512;

#endif
