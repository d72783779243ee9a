/* Vectorized float32 row primitives for the row-wise kernels (softmax,
 * log_softmax, layer_norm, batch_norm, the last-dim reductions); private to
 * core/ops.
 *
 * Each works on one contiguous row (or, for the _cols forms, a tile of
 * neighbouring columns) that the caller has already found contiguous, and
 * is compiled for the baseline, AVX2+FMA and AVX-512 (FBX_PW_CLONES), so a
 * call costs one indirect jump; callers spread rows over threads.
 *
 * Accumulation (u = 2^-24, float32's unit roundoff). Sums of float32
 * values (fbx_row_sum_f32, layer_norm's mean, the squared deviations)
 * run in 32 float lanes over blocks of 512 values, each block's lanes
 * added into a double total: a lane adds at most 16 values, so
 *   |sum - exact| <= 16 u sum |x_i|         (about 9.5e-7 of sum |x_i|)
 * for any row length (PyTorch's float32 cascade sum is within a like
 * bound); squared deviations, all >= 0, within 24 u of the exact value
 * (the deviation is taken against the double centre split into two
 * floats, so a mean far from zero keeps its bits). A float lane can
 * overflow where the double total would not (|x| near FLT_MAX, or a
 * square of |x| > 1.8e19): a total that is not finite is taken again in
 * 8 double lanes, which also gives rows holding inf/NaN their exact
 * result. tests/unit/test_rowops.c measures these bounds against
 * compensated double sums on cancelling rows, 10^6-value rows and values
 * near 65504 and near FLT_MAX. softmax's sum of exponentials runs in 16
 * float lanes combined pairwise (as PyTorch's vectorized kernel does);
 * layer_norm backward's two row sums and logsumexp's in 8 double lanes.
 * exp is fbx_vm_expf (ops/vmath.h, 2 ulp; softmax drops its clamps and
 * NaN selects, which a non-positive x - max never needs). NaN propagates
 * through max/min as in PyTorch.
 *
 * Memory: passes that stream a row from memory prefetch 4 KiB ahead (the
 * hardware prefetchers stop at page boundaries), except fbx_row_sum_f32,
 * which ran faster without (see rowops.c); passes over a row already
 * in cache fetch the next row's matching lines (the bytes after the row:
 * for a contiguous tensor, its next row), so that its fetch overlaps the
 * arithmetic. A prefetch never faults, so the last row's is harmless.
 *
 *   float m = fbx_row_max_f32(x, n);
 *   fbx_row_softmax_f32(x, y, n, false);                  // y = softmax(x)
 *   fbx_row_layer_norm_f32(x, y, n, w, b, 1e-5f, &mean, &rstd, false);
 */
#ifndef FBX_OPS_ROWOPS_H
#define FBX_OPS_ROWOPS_H
#include <stdbool.h>
#include <stdint.h>

/* max / min of n >= 1 values; NaN if any is NaN. */
float fbx_row_max_f32(const float *x, int64_t n);
float fbx_row_min_f32(const float *x, int64_t n);
/* Sum of n >= 0 values (the blocked float sum above). */
double fbx_row_sum_f32(const float *x, int64_t n);
/* Sum of (x - c)^2 (blocked float squares, within 24 u). */
double fbx_row_sqdev_f32(const float *x, int64_t n, double c);
/* Sum of exp(x - m) (fbx_vm_expf, in float) in double lanes. */
double fbx_row_sumexp_f32(const float *x, int64_t n, float m);
/* y = softmax(x) (log: log_softmax) over a row of n >= 1 values (y != x).
 * On a CPU with AVX-512 a path of its own (vector round and scale
 * instructions, the sum taken in the exp pass); elsewhere, and always from
 * fbx_row_softmax_portable_f32 (which tests call to check both), the
 * generic clones. The two differ in the last bits only. */
void fbx_row_softmax_f32(const float *x, float *y, int64_t n, bool log);
void fbx_row_softmax_portable_f32(const float *x, float *y, int64_t n, bool log);
/* fbx_row_softmax_f32 with y written by non-temporal stores in one last
 * pass (the exponentials of a row of up to 4096 kept on the stack until
 * then), for an output that would not stay in cache
 * (fbx_row_stream_wanted); the same values. Without AVX-512:
 * fbx_row_softmax_portable_f32. */
void fbx_row_softmax_stream_f32(const float *x, float *y, int64_t n, bool log);
/* softmax over R rows of a [R][stride] block, for the n <= 256 neighbouring
 * columns starting at x (the softmax dim is the row index). */
void fbx_cols_softmax_f32(const float *x, float *y, int64_t R, int64_t stride, int64_t n, bool log);
/* y = (x - mean) * rstd * w + b over a row of n >= 1 (w, b may be NULL);
 * the row's mean and rstd = 1 / sqrt(biased var + eps) go to *mean, *rstd. */
void fbx_row_layer_norm_f32(const float *x, float *y, int64_t n, const float *w, const float *b, float eps,
                            float *mean, float *rstd, bool stream);
/* stream (for fbx_row_layer_norm_f32): write y with non-temporal stores
 * (on AVX-512; elsewhere ignored). Wanted when the caller's whole pass
 * reads and writes `bytes` >= the last-level cache (fbx_row_stream_bytes:
 * the largest cache cpu0 lists in sysfs, else sysconf's, else 32 MiB; the
 * OpenCL CPU device PoCL reports the same size): its output would not stay
 * in cache for the next operation anyway, and ordinary stores first read
 * each line of y from memory. The same operations either way (the
 * ordinary loop's last multiply-add may or may not be one FMA, as the
 * compiler chooses: within one rounding). */
bool fbx_row_stream_wanted(int64_t bytes);
/* After a thread's last streamed row (not after each: the fence waits for
 * the stores to drain, 15% of a softmax kernel's time when it followed
 * every row): orders the non-temporal stores before what the thread does
 * next (x86 sfence), as the ordinary stores are ordered. */
void fbx_row_stream_fence(void);
int64_t fbx_row_stream_bytes(void);
/* The row statistics fbx_row_layer_norm_f32 uses: mean (the blocked sum
 * of x - x[0], plus n x[0]: within 17 u sum |x_i - x_0|, so a row far from
 * zero with a small spread keeps its mean's bits) and
 * rstd = 1 / sqrt(biased var + eps), the variance from the squared
 * deviations about the double mean. */
void fbx_row_moments_f32(const float *x, int64_t n, float eps, float *mean, float *rstd);
/* layer_norm's backward over one row of n >= 1, PyTorch's formula
 * (native_layer_norm_backward) with g the output gradient, w the weight
 * (NULL: ones), the row's mean and rstd:
 *   dx = rstd * g * w + b * x + c, with ds = sum(g * w * x), db = sum(g * w),
 *   b = (db * mean - ds) * rstd^3 / n, c = -b * mean - db * rstd / n
 * (ds, db in double lanes; dx may be NULL). dw[i] += g[i] * (rstd * x[i] -
 * rstd * mean) and db[i] += g[i] accumulate the row into the caller's
 * float32 partial sums (each may be NULL). */
void fbx_row_layer_norm_bwd_f32(const float *g, const float *x, float *dx, int64_t n, const float *w, float mean,
                                float rstd, float *dw, float *db);
/* fbx_row_layer_norm_bwd_f32 with the row's mean and rstd taken from x
 * as fbx_row_moments_f32 takes them (the same bits), in the pass that
 * also takes the gradient sums, so g and x stream from memory together
 * (fusebox::layer_norm_backward). */
void fbx_row_layer_norm_bwd_x_f32(const float *g, const float *x, float *dx, int64_t n, const float *w, float eps,
                                  float *dw, float *db);
/* y = x * scale + shift over n values. */
void fbx_row_affine_f32(const float *x, float *y, int64_t n, float scale, float shift);

#endif
