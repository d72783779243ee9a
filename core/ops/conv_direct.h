/* The float32 direct convolution kernel of stride-1 convolutions
 * (k_conv.c's CONV_SHIFTED bands), for x86-64 CPUs with AVX2 and FMA.
 *
 * On a band's padded input grid ([Cg][rows_in][Wp], see k_conv.c) the tap t
 * of output position p (flattened over the band's rows, Wp wide) reads
 * grid[c * plane + p + off[t]]. The kernel computes, for every output
 * channel o of the group and every position p < pn,
 *
 *   acc[o * ldacc + p] = bias[o] + sum over c < Cg, t < taps of w[o][c][t] * grid[c * plane + p + off[t]]
 *
 * (bias NULL: 0) in registers: FBX_CONV_OB output channels by FBX_CONV_PT
 * positions at a time, each accumulator starting from the bias and adding
 * its products in (c, t) order with fused multiply-adds. The input
 * channels go FBX_CONV_CCH at a time (the sums are stored in acc and taken
 * up again for the next chunk), so that the grid rows a block reads stay
 * in the L1 cache while every output channel block passes over them.
 * Positions are taken in whole blocks of FBX_CONV_PT: acc rows must hold
 * pn rounded up to FBX_CONV_PT, and the grid must be readable that far
 * past each position read (the caller's slack); the extra positions are
 * garbage to discard. Where fbx_conv_direct_ok() is false the caller keeps
 * its GEMMs.
 */
#ifndef FBX_OPS_CONV_DIRECT_H
#define FBX_OPS_CONV_DIRECT_H

#include <stdbool.h>
#include <stdint.h>

#define FBX_CONV_OB 4  /* output channels per register block */
#define FBX_CONV_PT 24 /* positions per register block (3 vectors of 8) */
/* Input channels per pass over the band: for a 3x3 kernel a block's grid
 * rows are then 32 x 3 x 26 floats (10 KiB). On the EPYC here, 3x3 over
 * [8, 64, 56, 56] on 2 threads took 11.4 ms with chunks of 32, 11.8 with
 * 16, 12.2 with 8 and 12.7 with all 64 channels at once. */
#define FBX_CONV_CCH 32

/* Whether this build and CPU run fbx_conv_direct_f32. */
bool fbx_conv_direct_ok(void);

/* Floats of the packed weight of one group of Og output channels. */
int64_t fbx_conv_direct_wsize(int64_t Og, int64_t Cg, int64_t taps);

/* Packs one group's weight w [Og][Cg][taps] (contiguous) into wd
 * [ceil(Og / OB)][Cg][taps][OB], output channels past Og zero. */
void fbx_conv_direct_pack(const float *w, int64_t Og, int64_t Cg, int64_t taps, float *wd);

/* The sum above for p < pn rounded up to FBX_CONV_PT (see the header
 * comment); wd from fbx_conv_direct_pack. */
void fbx_conv_direct_f32(const float *grid, int64_t plane, const int64_t *off, int64_t taps, int64_t Cg,
                         const float *wd, int64_t Og, const float *bias, float *acc, int64_t ldacc, int64_t pn);

#endif
